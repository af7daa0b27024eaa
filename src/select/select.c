#define _GNU_SOURCE
/* Selection: the devices that fit a request, best first. Pure (see
 * include/gpukit/select.h): everything it knows comes in as arguments. */
#include <gpukit/select.h>

#include "core/error.h"
#include "core/units.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const order_names[] = {
    [GK_ORDER_FREE] = "free",   [GK_ORDER_FREE_RATIO] = "free-ratio",
    [GK_ORDER_POWER] = "power", [GK_ORDER_UTIL] = "util",
    [GK_ORDER_INDEX] = "index", [GK_ORDER_RANDOM] = "random",
};

const char *gk_order_name(gk_order order)
{
    return (unsigned)order < sizeof order_names / sizeof order_names[0] ? order_names[order]
                                                                         : "?";
}

gk_status gk_order_parse(const char *name, gk_order *order)
{
    for (size_t i = 0; i < sizeof order_names / sizeof order_names[0]; i++) {
        if (name && strcmp(name, order_names[i]) == 0) {
            *order = (gk_order)i;
            return GK_OK;
        }
    }
    return gk_fail(GK_ERR_INVALID_ARGUMENT,
                   "unknown order '%s'; use free, free-ratio, power, util, index or random",
                   name ? name : "");
}

void gk_request_init(gk_request *request)
{
    memset(request, 0, sizeof *request);
    request->order = GK_ORDER_FREE;
    request->count = 1;
    request->max_util = -1;
    request->max_procs = -1;
}

static bool parse_whole(const char *text, long low, long high, long *value)
{
    char *end;
    errno = 0;
    long n = text ? strtol(text, &end, 10) : 0;
    if (!text || errno || end == text || *end || n < low || n > high)
        return false;
    *value = n;
    return true;
}

gk_status gk_request_set(gk_request *request, const char *name, const char *value)
{
    long n;
    uint64_t bytes;
    if (!request || !name)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "gk_request_set: NULL argument");
    if (strcmp(name, "share") == 0 || strcmp(name, "exclusive") == 0) {
        bool share = name[0] == 's';
        if (request->mode_given && request->share != share)
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "the reservation is %s already; it is shared or exclusive, not both",
                           request->share ? "shared" : "exclusive");
        request->share = share;
        request->mode_given = true;
        return GK_OK;
    }
    if (!value)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "a value is needed");
    if (strcmp(name, "count") == 0) {
        if (!parse_whole(value, 1, GK_SELECT_MAX_COUNT, &n))
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "give a whole number from 1 to %d",
                           GK_SELECT_MAX_COUNT);
        request->count = (unsigned)n;
    } else if (strcmp(name, "order") == 0) {
        return gk_order_parse(value, &request->order);
    } else if (strcmp(name, "min-free") == 0 || strcmp(name, "min-total") == 0) {
        gk_status status = gk_parse_size(value, &bytes);
        if (status != GK_OK)
            return status;
        *(name[4] == 'f' ? &request->min_free : &request->min_total) = (gk_field){bytes, true};
    } else if (strcmp(name, "min-free-ratio") == 0) {
        return gk_parse_ratio(value, &request->min_free_ratio);
    } else if (strcmp(name, "max-util") == 0) {
        /* "50" or "50%", as --min-free-ratio takes its percentages */
        char whole[32];
        size_t length = strlen(value);
        snprintf(whole, sizeof whole, "%.*s", (int)(length && value[length - 1] == '%'
                                                         ? length - 1 : length), value);
        if (!parse_whole(whole, 0, 100, &n))
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "give a percentage from 0 to 100");
        request->max_util = (int)n;
    } else if (strcmp(name, "max-procs") == 0) {
        if (!parse_whole(value, 0, INT_MAX, &n))
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "give a whole number, 0 or more");
        request->max_procs = (int)n;
    } else if (strcmp(name, "gpus") == 0) {
        /* An empty list would offer no GPU at all: a slip, not a request. */
        if (value[strspn(value, ", \t")] == '\0')
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "name at least one GPU (an index or UUID)");
        request->gpus = value;
    } else if (strcmp(name, "exclude") == 0) {
        request->exclude = value;
    } else if (strcmp(name, "seed") == 0) {
        if (!parse_whole(value, 0, LONG_MAX, &n))
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "give a whole number");
        request->seed = (uint64_t)n;
    } else {
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "unknown selection option '%s'", name);
    }
    return GK_OK;
}

void gk_request_describe(const gk_request *request, char *buf, size_t size)
{
    char a[32];
    FILE *out = fmemopen(buf, size, "w");
    if (!out) {
        snprintf(buf, size, "%u GPU(s)", request->count);
        return;
    }
    fprintf(out, "%u GPU%s", request->count, request->count == 1 ? "" : "s");
    if (request->min_free.known)
        fprintf(out, ", --min-free %s", gk_format_size(a, sizeof a, request->min_free.value));
    if (request->min_free_ratio > 0)
        fprintf(out, ", --min-free-ratio %.0f%%", request->min_free_ratio * 100);
    if (request->max_util >= 0)
        fprintf(out, ", --max-util %d%%", request->max_util);
    if (request->min_total.known)
        fprintf(out, ", --min-total %s", gk_format_size(a, sizeof a, request->min_total.value));
    if (request->max_procs >= 0)
        fprintf(out, ", --max-procs %d", request->max_procs);
    if (request->gpus)
        fprintf(out, ", --gpus %s", request->gpus);
    if (request->exclude)
        fprintf(out, ", --exclude %s", request->exclude);
    if (request->share)
        fprintf(out, ", shared");
    fclose(out);
}

/* --- device lists (--gpus, --exclude) --- */

typedef struct device_ref {
    size_t gpu;
    int mig; /* -1: the whole GPU, MIG devices included */
} device_ref;

typedef struct device_list {
    device_ref *refs;
    size_t count;
    bool given; /* a list was given (even if it names nothing) */
} device_list;

static bool all_digits(const char *text, size_t length)
{
    if (length == 0)
        return false;
    for (size_t i = 0; i < length; i++)
        if (!isdigit((unsigned char)text[i]))
            return false;
    return true;
}

static bool find_gpu_by_index(const gk_snapshot *snapshot, unsigned long index, size_t *gpu)
{
    for (size_t i = 0; i < snapshot->gpu_count; i++) {
        if (snapshot->gpus[i].index == index) {
            *gpu = i;
            return true;
        }
    }
    return false;
}

/* Resolves one entry: "3", "3:1" (MIG device 1 of GPU 3), or a GPU-/MIG-
 * UUID or a prefix of one that names a single device. */
static gk_status resolve_entry(const gk_snapshot *snapshot, const char *option,
                               const char *entry, size_t length, device_ref *ref)
{
    /* "pci:3" is how gpukit prints nvidia-smi's numbering. */
    if (length > 4 && strncasecmp(entry, "pci:", 4) == 0) {
        entry += 4;
        length -= 4;
    }
    const char *colon = memchr(entry, ':', length);
    if (all_digits(entry, colon ? (size_t)(colon - entry) : length)) {
        unsigned long index = strtoul(entry, NULL, 10);
        if (!find_gpu_by_index(snapshot, index, &ref->gpu))
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "%s: there is no GPU %lu here (see 'gpukit ls')", option, index);
        ref->mig = -1;
        if (!colon)
            return GK_OK;
        size_t rest = length - (size_t)(colon - entry) - 1;
        unsigned long mig = strtoul(colon + 1, NULL, 10);
        if (!all_digits(colon + 1, rest) || mig >= snapshot->gpus[ref->gpu].mig_count)
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "%s: GPU %lu has no MIG device '%.*s' (see 'gpukit ls')", option,
                           index, (int)rest, colon + 1);
        ref->mig = (int)mig;
        return GK_OK;
    }
    if (length < 5 || (strncasecmp(entry, "GPU-", 4) != 0 && strncasecmp(entry, "MIG-", 4) != 0))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s: '%.*s' is neither a GPU index (0, 1, ... or pci:0, pci:1, ... in "
                       "nvidia-smi's numbering; 0:1 for a MIG device) nor a GPU-/MIG- UUID",
                       option, (int)length, entry);
    size_t matches = 0;
    for (size_t i = 0; i < snapshot->gpu_count; i++) {
        const gk_gpu *gpu = &snapshot->gpus[i];
        if (strncasecmp(gpu->uuid, entry, length) == 0) {
            *ref = (device_ref){i, -1};
            matches++;
        }
        for (size_t m = 0; m < gpu->mig_count; m++) {
            if (strncasecmp(gpu->mig_devices[m].uuid, entry, length) == 0) {
                *ref = (device_ref){i, (int)m};
                matches++;
            }
        }
    }
    if (matches == 1)
        return GK_OK;
    return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: '%.*s' %s (see 'gpukit ls')", option,
                   (int)length, entry,
                   matches ? "matches more than one device; give more of the UUID"
                           : "is not the UUID of a GPU or MIG device here");
}

static gk_status parse_device_list(const gk_snapshot *snapshot, const char *option,
                                   const char *text, device_list *list)
{
    memset(list, 0, sizeof *list);
    if (!text)
        return GK_OK;
    list->given = true;
    list->refs = calloc(strlen(text) / 2 + 1, sizeof *list->refs);
    if (!list->refs)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
    const char *cursor = text;
    for (;;) {
        const char *end = strchr(cursor, ',');
        size_t length = end ? (size_t)(end - cursor) : strlen(cursor);
        while (length && isspace((unsigned char)*cursor)) {
            cursor++;
            length--;
        }
        while (length && isspace((unsigned char)cursor[length - 1]))
            length--;
        if (length) {
            gk_status status = resolve_entry(snapshot, option, cursor, length,
                                              &list->refs[list->count]);
            if (status != GK_OK) {
                free(list->refs);
                return status;
            }
            list->count++;
        }
        if (!end)
            return GK_OK;
        cursor = end + 1;
    }
}

static bool list_has(const device_list *list, size_t gpu, int mig)
{
    for (size_t i = 0; i < list->count; i++)
        if (list->refs[i].gpu == gpu && (list->refs[i].mig < 0 || list->refs[i].mig == mig))
            return true;
    return false;
}

/* --- candidates --- */

typedef struct ranked {
    gk_candidate candidate;
    bool key_known;
    double key; /* lower is better */
} ranked;

static bool mig_on(const gk_gpu *gpu)
{
    return gpu->mig_mode.known && gpu->mig_mode.value && gpu->mig_count > 0;
}

static const char *device_uuid(const gk_gpu *gpu, int mig)
{
    return mig >= 0 ? gpu->mig_devices[mig].uuid : gpu->uuid;
}

/* Does a reservation of `uuid` touch this device? A whole GPU and its MIG
 * devices overlap. */
static bool claim_touches(const gk_gpu *gpu, int mig, const char *uuid)
{
    if (strcmp(uuid, device_uuid(gpu, mig)) == 0 || strcmp(uuid, gpu->uuid) == 0)
        return true;
    if (mig < 0)
        for (size_t m = 0; m < gpu->mig_count; m++)
            if (strcmp(uuid, gpu->mig_devices[m].uuid) == 0)
                return true;
    return false;
}

static size_t process_count(const gk_gpu *gpu, int mig)
{
    if (mig < 0)
        return gpu->process_count;
    const gk_mig_device *device = &gpu->mig_devices[mig];
    size_t count = 0;
    for (size_t p = 0; p < gpu->process_count; p++) {
        const gk_process *process = &gpu->processes[p];
        if (process->gpu_instance.known && device->gpu_instance.known &&
            process->gpu_instance.value == device->gpu_instance.value &&
            (!process->compute_instance.known || !device->compute_instance.known ||
             process->compute_instance.value == device->compute_instance.value))
            count++;
    }
    return count;
}

/* A well-mixed 64-bit hash (splitmix64), so each seed gives its own shuffle. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t hash_text(const char *text)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *text; text++)
        h = (h ^ (unsigned char)*text) * 1099511628211ull;
    return h;
}

static void set_key(ranked *r, const gk_gpu *gpu, gk_order order, uint64_t seed)
{
    const gk_candidate *c = &r->candidate;
    r->key_known = true;
    switch (order) {
    case GK_ORDER_FREE:
        r->key_known = c->free.known;
        r->key = -(double)c->free.value;
        break;
    case GK_ORDER_FREE_RATIO:
        r->key_known = c->free.known && c->total.known && c->total.value > 0;
        r->key = r->key_known ? -(double)c->free.value / (double)c->total.value : 0;
        break;
    case GK_ORDER_POWER:
        r->key_known = gpu->power_draw.known && gpu->power_limit.known &&
                       gpu->power_limit.value > 0;
        r->key = r->key_known ? (double)gpu->power_draw.value / (double)gpu->power_limit.value
                              : 0;
        break;
    case GK_ORDER_UTIL:
        r->key_known = gpu->utilization_gpu.known;
        r->key = (double)gpu->utilization_gpu.value;
        break;
    case GK_ORDER_INDEX:
        r->key = 0; /* the tie-break below is the index order */
        break;
    case GK_ORDER_RANDOM:
        r->key = (double)(mix(seed ^ hash_text(c->uuid)) >> 11);
        break;
    }
}

/* Fitting devices first, then by key (unknown keys last), then by index so
 * that ties always break the same way. */
static int compare_ranked(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    bool fit_a = !a->candidate.rejected[0], fit_b = !b->candidate.rejected[0];
    if (fit_a != fit_b)
        return fit_a ? -1 : 1;
    if (a->key_known != b->key_known)
        return a->key_known ? -1 : 1;
    if (a->key_known && a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->candidate.index != b->candidate.index)
        return a->candidate.index < b->candidate.index ? -1 : 1;
    return (a->candidate.mig > b->candidate.mig) - (a->candidate.mig < b->candidate.mig);
}

static void reject(gk_candidate *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reject(gk_candidate *c, const char *fmt, ...)
{
    if (c->rejected[0])
        return; /* the first reason is the one reported */
    va_list args;
    va_start(args, fmt);
    vsnprintf(c->rejected, sizeof c->rejected, fmt, args);
    va_end(args);
}

/* Subtracts what shared reservations still need and rejects devices whose
 * reservations exclude this request. */
static void apply_claims(gk_candidate *c, const gk_gpu *gpu, const gk_claim *claims,
                         size_t claim_count, bool share)
{
    uint64_t pending = 0;
    for (size_t i = 0; i < claim_count; i++) {
        const gk_claim *claim = &claims[i];
        if (!claim_touches(gpu, c->mig, claim->uuid))
            continue;
        c->claims++;
        if (!share)
            reject(c, "reserved by %s%s", claim->holder,
                   claim->share ? "; --share would allow sharing it" : "");
        else if (!claim->share)
            reject(c, "reserved for exclusive use by %s", claim->holder);
        else if (claim->reserved > claim->held)
            pending += claim->reserved - claim->held;
    }
    if (c->free.known)
        c->free.value = c->free.value > pending ? c->free.value - pending : 0;
}

static void apply_filters(gk_candidate *c, const gk_gpu *gpu, const gk_request *request,
                          bool shared_memory_counted)
{
    char have[32], want[32];
    if (c->mig >= 0 && request->count > 1)
        reject(c, "a MIG device, and a process can use only one MIG device");
    if (request->min_total.known) {
        if (!c->total.known)
            reject(c, "its memory size is unknown");
        else if (c->total.value < request->min_total.value)
            reject(c, "%s in all, less than --min-total %s",
                   gk_format_size(have, sizeof have, c->total.value),
                   gk_format_size(want, sizeof want, request->min_total.value));
    }
    if (request->min_free.known) {
        if (!c->free.known)
            reject(c, "its free memory is unknown");
        else if (c->free.value < request->min_free.value)
            reject(c, "%s free%s, less than --min-free %s",
                   gk_format_size(have, sizeof have, c->free.value),
                   shared_memory_counted ? " after other jobs' reservations" : "",
                   gk_format_size(want, sizeof want, request->min_free.value));
    }
    if (request->min_free_ratio > 0) {
        if (!c->free.known || !c->total.known || c->total.value == 0)
            reject(c, "its free memory is unknown");
        else if ((double)c->free.value < request->min_free_ratio * (double)c->total.value)
            reject(c, "%.0f%% free, less than --min-free-ratio %.0f%%",
                   100.0 * (double)c->free.value / (double)c->total.value,
                   100.0 * request->min_free_ratio);
    }
    if (request->max_util >= 0) {
        if (!gpu->utilization_gpu.known)
            reject(c, "its utilization is unknown");
        else if (gpu->utilization_gpu.value > (uint64_t)request->max_util)
            reject(c, "%u%% busy, more than --max-util %d%%",
                   (unsigned)gpu->utilization_gpu.value, request->max_util);
    }
    if (request->max_procs >= 0) {
        size_t procs = process_count(gpu, c->mig);
        if (!gpu->processes_known)
            reject(c, "its process list is unknown");
        else if (procs > (size_t)request->max_procs)
            reject(c, "%zu process(es) running, more than --max-procs %d", procs,
                   request->max_procs);
    }
}

/* Could the device ever fit, once every job has ended? Values the driver
 * cannot give now (N/A) are taken to stay unknown. */
static bool could_fit(const gk_candidate *c, const gk_gpu *gpu, const gk_request *request)
{
    if (c->mig >= 0 && request->count > 1)
        return false;
    if ((request->min_total.known || request->min_free.known || request->min_free_ratio > 0) &&
        !c->total.known)
        return false;
    if (request->min_total.known && c->total.value < request->min_total.value)
        return false;
    if (request->min_free.known && c->total.value < request->min_free.value)
        return false;
    if (request->max_util >= 0 && !gpu->utilization_gpu.known)
        return false;
    if (request->max_procs >= 0 && !gpu->processes_known)
        return false;
    return true;
}

/* Why a device this process could use is not a candidate: the limits that
 * apply before any filter of free memory or load, in the order applied. */
typedef enum device_limit {
    LIMIT_NONE = 0,   /* a candidate */
    LIMIT_CUDA_VIEW,  /* CUDA_VISIBLE_DEVICES hides it */
    LIMIT_GPUS,       /* --gpus does not name it */
    LIMIT_EXCLUDE,    /* --exclude names it */
    LIMIT_COUNT
} device_limit;

static device_limit device_limited(const gk_cuda_view *allowed, const device_list *only,
                                   const device_list *exclude, size_t gpu, int mig)
{
    if (allowed && allowed->restricted) {
        bool visible = false;
        for (size_t k = 0; k < allowed->count; k++)
            if (allowed->devices[k].gpu == gpu &&
                (allowed->devices[k].mig == mig || allowed->devices[k].mig < 0))
                visible = true;
        if (!visible)
            return LIMIT_CUDA_VIEW;
    }
    if (only->given && !list_has(only, gpu, mig))
        return LIMIT_GPUS;
    if (list_has(exclude, gpu, mig))
        return LIMIT_EXCLUDE;
    return LIMIT_NONE;
}

/* No candidate at all: names the limit that took the last devices away, so
 * the user knows what to change (waiting never helps here). `limited`
 * counts the working devices each limit removed; `broken` is a GPU that
 * does not work but that the limits left (NULL if none): it, not the
 * limits, is why nothing is left ("--gpus 1" for a lost GPU 1). */
static void describe_no_candidate(char *buf, size_t size, const gk_request *request,
                                  const gk_cuda_view *allowed, const size_t *limited,
                                  const gk_gpu *broken)
{
    if (broken)
        snprintf(buf, size, "GPU %u is %s: %.160s", broken->index,
                 gk_gpu_state_name(broken->state), broken->error);
    else if (limited[LIMIT_EXCLUDE])
        snprintf(buf, size, "--exclude %.64s leaves none of the devices this process may use",
                 request->exclude);
    else if (limited[LIMIT_GPUS])
        snprintf(buf, size, "--gpus %.64s names none of the devices this process may use "
                 "(CUDA_VISIBLE_DEVICES hides %zu)", request->gpus, limited[LIMIT_CUDA_VIEW]);
    else if (limited[LIMIT_CUDA_VIEW])
        snprintf(buf, size, "CUDA_VISIBLE_DEVICES hides every GPU from it%s%.256s%s",
                 allowed->note[0] ? " (" : "", allowed->note, allowed->note[0] ? ")" : "");
    else
        snprintf(buf, size, "no GPU here works (each one is lost or inaccessible)");
}

static void describe_shortfall(gk_selection *selection, const gk_request *request,
                               size_t possible, const gk_cuda_view *allowed,
                               const size_t *limited, const gk_gpu *broken)
{
    int n = snprintf(selection->why, sizeof selection->why, "wanted %u device(s), %zu fit",
                     request->count, selection->fitting);
    if (selection->count == 0) {
        char reason[400];
        describe_no_candidate(reason, sizeof reason, request, allowed, limited, broken);
        snprintf(selection->why + n, sizeof selection->why - (size_t)n,
                 "; no device is usable by this process: %s", reason);
    } else if (possible < request->count) {
        n += snprintf(selection->why + n, sizeof selection->why - (size_t)n,
                      " and only %zu could ever fit", possible);
    }
    size_t shown = 0;
    for (size_t i = selection->fitting;
         i < selection->count && (size_t)n < sizeof selection->why; i++) {
        const gk_candidate *c = &selection->candidates[i];
        if (shown == 4) {
            snprintf(selection->why + n, sizeof selection->why - (size_t)n, "; %zu more",
                     selection->count - i);
            break;
        }
        if (c->mig >= 0)
            n += snprintf(selection->why + n, sizeof selection->why - (size_t)n,
                          "; GPU %u MIG %d: %s", c->index, c->mig, c->rejected);
        else
            n += snprintf(selection->why + n, sizeof selection->why - (size_t)n,
                          "; GPU %u: %s", c->index, c->rejected);
        shown++;
    }
}

gk_status gk_select(const gk_snapshot *snapshot, const gk_cuda_view *allowed,
                    const gk_claim *claims, size_t claim_count, const gk_request *request,
                    gk_selection *selection)
{
    if (!snapshot || !request || !selection || (claim_count && !claims))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "gk_select: NULL argument");
    memset(selection, 0, sizeof *selection);
    if (request->count == 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "--count must be at least 1");
    if (request->min_free_ratio < 0 || request->min_free_ratio > 1)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "--min-free-ratio must be between 0 and 1");

    device_list only, exclude;
    gk_status status = parse_device_list(snapshot, "--gpus", request->gpus, &only);
    if (status != GK_OK)
        return status;
    status = parse_device_list(snapshot, "--exclude", request->exclude, &exclude);
    if (status != GK_OK) {
        free(only.refs);
        return status;
    }

    /* Every device this process may use. */
    size_t capacity = 0;
    for (size_t i = 0; i < snapshot->gpu_count; i++)
        capacity += 1 + snapshot->gpus[i].mig_count;
    ranked *list = calloc(capacity ? capacity : 1, sizeof *list);
    if (!list) {
        free(only.refs);
        free(exclude.refs);
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
    }
    size_t count = 0, limited[LIMIT_COUNT] = {0};
    const gk_gpu *broken = NULL; /* the first failing GPU the limits leave */
    for (size_t i = 0; i < snapshot->gpu_count; i++) {
        const gk_gpu *gpu = &snapshot->gpus[i];
        if (gpu->state != GK_GPU_OK) {
            if (!broken && device_limited(allowed, &only, &exclude, i, -1) == LIMIT_NONE)
                broken = gpu;
            continue;
        }
        /* A GPU in MIG mode offers its MIG devices, otherwise itself (-1). */
        const int first = mig_on(gpu) ? 0 : -1;
        const int last = mig_on(gpu) ? (int)gpu->mig_count - 1 : -1;
        for (int m = first; m <= last; m++) {
            device_limit limit = device_limited(allowed, &only, &exclude, i, m);
            limited[limit]++;
            if (limit != LIMIT_NONE)
                continue;
            gk_candidate *c = &list[count].candidate;
            c->gpu = i;
            c->mig = m;
            c->index = gpu->index;
            c->uuid = device_uuid(gpu, m);
            if (m < 0) {
                c->total = gpu->memory_total;
                c->free = gpu->memory_free;
            } else {
                const gk_mig_device *d = &gpu->mig_devices[m];
                c->total = d->memory_total;
                c->free.known = d->memory_total.known && d->memory_used.known &&
                                d->memory_used.value <= d->memory_total.value;
                c->free.value = c->free.known ? d->memory_total.value - d->memory_used.value : 0;
            }
            apply_claims(c, gpu, claims, claim_count, request->share);
            apply_filters(c, gpu, request, request->share && c->claims > 0);
            set_key(&list[count], gpu, request->order, request->seed);
            count++;
        }
    }
    free(only.refs);
    free(exclude.refs);
    qsort(list, count, sizeof *list, compare_ranked);

    selection->candidates = calloc(count ? count : 1, sizeof *selection->candidates);
    if (!selection->candidates) {
        free(list);
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
    }
    size_t possible = 0;
    for (size_t i = 0; i < count; i++) {
        selection->candidates[i] = list[i].candidate;
        if (!list[i].candidate.rejected[0])
            selection->fitting++;
        if (could_fit(&list[i].candidate, &snapshot->gpus[list[i].candidate.gpu], request))
            possible++;
    }
    free(list);
    selection->count = count;
    selection->fits = selection->fitting >= request->count;
    selection->possible = possible >= request->count;
    if (!selection->fits)
        describe_shortfall(selection, request, possible, allowed, limited,
                           limited[LIMIT_CUDA_VIEW] || limited[LIMIT_GPUS] ||
                                   limited[LIMIT_EXCLUDE]
                               ? broken
                               : NULL);
    return GK_OK;
}

void gk_selection_free(gk_selection *selection)
{
    if (!selection)
        return;
    free(selection->candidates);
    memset(selection, 0, sizeof *selection);
}
