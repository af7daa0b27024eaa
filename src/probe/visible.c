/* Resolving CUDA_VISIBLE_DEVICES: see include/gpukit/visible.h for the rules. */
#include <gpukit/visible.h>

#include "core/error.h"
#include "core/strings.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* GPUs in CUDA's enumeration order (before CUDA_VISIBLE_DEVICES applies). */
typedef struct ordering {
    size_t gpu[GK_CUDA_VIEW_MAX];
    size_t count;
} ordering;

static int compare_pci(const gk_gpu *a, const gk_gpu *b)
{
    int c = strcasecmp(a->pci_bus_id, b->pci_bus_id);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

static unsigned capability(const gk_gpu *gpu)
{
    return gpu->compute_major.known ? (unsigned)(gpu->compute_major.value * 10 +
                                                 gpu->compute_minor.value)
                                    : 0;
}

/* Negative when `a` comes before `b` in CUDA's enumeration. */
static int compare_cuda_order(const gk_gpu *a, const gk_gpu *b, bool pci_bus_order)
{
    if (!pci_bus_order && capability(a) != capability(b))
        return capability(a) > capability(b) ? -1 : 1;
    return compare_pci(a, b);
}

static void order_gpus(const gk_snapshot *snapshot, gk_cuda_view *view, ordering *order)
{
    order->count = 0;
    for (size_t i = 0; i < snapshot->gpu_count && order->count < GK_CUDA_VIEW_MAX; i++)
        if (snapshot->gpus[i].state == GK_GPU_OK)
            order->gpu[order->count++] = i;
    /* Insertion sort: a machine has a handful of GPUs. */
    for (size_t i = 1; i < order->count; i++) {
        size_t moving = order->gpu[i], j = i;
        for (; j > 0 && compare_cuda_order(&snapshot->gpus[moving],
                                           &snapshot->gpus[order->gpu[j - 1]],
                                           view->pci_bus_order) < 0;
             j--)
            order->gpu[j] = order->gpu[j - 1];
        order->gpu[j] = moving;
    }
    if (!view->pci_bus_order)
        for (size_t i = 1; i < order->count; i++)
            if (strcmp(snapshot->gpus[order->gpu[i]].name, snapshot->gpus[order->gpu[0]].name))
                view->order_guessed = true;
}

static bool mig_enabled(const gk_gpu *gpu)
{
    return gpu->mig_mode.known && gpu->mig_mode.value && gpu->mig_count > 0;
}

/* Appends a device; false (and a note) when it was already listed. */
static bool add_device(gk_cuda_view *view, size_t gpu, int mig)
{
    for (size_t i = 0; i < view->count; i++) {
        if (view->devices[i].gpu == gpu && view->devices[i].mig == mig) {
            view->count = 0;
            return false;
        }
    }
    if (view->count < GK_CUDA_VIEW_MAX)
        view->devices[view->count++] = (gk_cuda_device){gpu, mig};
    return true;
}

static bool has_prefix(const char *text, const char *prefix)
{
    return strncasecmp(text, prefix, strlen(prefix)) == 0;
}

/* Finds the one device whose UUID starts with `entry`. Returns 1 when found,
 * 0 when unknown, -1 when ambiguous. */
static int match_uuid(const gk_snapshot *snapshot, const ordering *order, const char *entry,
                      gk_cuda_device *found)
{
    int matches = 0;
    size_t length = strlen(entry);
    /* MIG-GPU-<uuid>/<gi>/<ci>: the form of drivers before R470. */
    if (has_prefix(entry, "MIG-GPU-")) {
        char prefix[128];
        unsigned gi, ci;
        const char *slash = strchr(entry, '/');
        if (!slash || sscanf(slash, "/%u/%u", &gi, &ci) != 2 ||
            (size_t)(slash - entry) - 4 >= sizeof prefix)
            return 0;
        snprintf(prefix, sizeof prefix, "%.*s", (int)(slash - entry - 4), entry + 4);
        for (size_t k = 0; k < order->count; k++) {
            const gk_gpu *gpu = &snapshot->gpus[order->gpu[k]];
            if (!has_prefix(gpu->uuid, prefix))
                continue;
            for (size_t m = 0; m < gpu->mig_count; m++) {
                const gk_mig_device *mig = &gpu->mig_devices[m];
                if (mig->gpu_instance.known && mig->gpu_instance.value == gi &&
                    mig->compute_instance.known && mig->compute_instance.value == ci) {
                    *found = (gk_cuda_device){order->gpu[k], (int)m};
                    matches++;
                }
            }
        }
        return matches == 1 ? 1 : matches ? -1 : 0;
    }
    for (size_t k = 0; k < order->count; k++) {
        const gk_gpu *gpu = &snapshot->gpus[order->gpu[k]];
        if (gpu->uuid[0] && strncasecmp(gpu->uuid, entry, length) == 0) {
            *found = (gk_cuda_device){order->gpu[k], -1};
            matches++;
        }
        for (size_t m = 0; m < gpu->mig_count; m++) {
            if (gpu->mig_devices[m].uuid[0] &&
                strncasecmp(gpu->mig_devices[m].uuid, entry, length) == 0) {
                *found = (gk_cuda_device){order->gpu[k], (int)m};
                matches++;
            }
        }
    }
    return matches == 1 ? 1 : matches ? -1 : 0;
}

/* Reads an index as CUDA does: optional blanks and sign, then the leading
 * digits; the rest of the entry is ignored. */
static bool parse_index(const char *entry, unsigned long *index)
{
    while (isspace((unsigned char)*entry))
        entry++;
    bool negative = *entry == '-';
    if (*entry == '+' || *entry == '-')
        entry++;
    if (!isdigit((unsigned char)*entry))
        return false;
    unsigned long value = 0;
    while (isdigit((unsigned char)*entry) && value < 1000000)
        value = value * 10 + (unsigned long)(*entry++ - '0');
    if (negative && value != 0)
        return false;
    *index = value;
    return true;
}

static void apply_list(const gk_snapshot *snapshot, const ordering *order, const char *visible,
                       gk_cuda_view *view)
{
    char *copy = strdup(visible);
    if (!copy)
        return;
    char *first = gk_trim(copy);
    bool by_uuid = has_prefix(first, "GPU-") || has_prefix(first, "MIG-");
    char *cursor = copy;
    for (size_t position = 1;; position++) {
        char *comma = strchr(cursor, ',');
        if (comma)
            *comma = '\0';
        char *entry = gk_trim(cursor);
        gk_cuda_device device = {0, -1};
        const char *problem = NULL;
        if (by_uuid) {
            int match = has_prefix(entry, "GPU-") || has_prefix(entry, "MIG-")
                            ? match_uuid(snapshot, order, entry, &device)
                            : 0;
            if (match < 0)
                problem = "matches more than one GPU";
            else if (match == 0)
                problem = "is not the UUID of a visible GPU or MIG device";
        } else {
            unsigned long index;
            if (!parse_index(entry, &index))
                problem = "is not a GPU index";
            else if (index >= order->count)
                problem = "is beyond the last GPU";
            else
                device.gpu = order->gpu[index];
        }
        if (problem) {
            if (*entry || comma || position > 1)
                snprintf(view->note, sizeof view->note,
                         "entry %zu (\"%.64s\") of CUDA_VISIBLE_DEVICES %s; CUDA ignores it and "
                         "everything after it",
                         position, entry, problem);
            break;
        }
        if (!add_device(view, device.gpu, device.mig)) {
            snprintf(view->note, sizeof view->note,
                     "CUDA_VISIBLE_DEVICES names a device twice (entry %zu, \"%.64s\"); CUDA "
                     "then shows no device at all",
                     position, entry);
            break;
        }
        if (!comma)
            break;
        cursor = comma + 1;
    }
    free(copy);
}

gk_status gk_cuda_view_resolve(const gk_snapshot *snapshot, const char *visible,
                               const char *order_name, gk_cuda_view *view)
{
    if (!snapshot || !view)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "gk_cuda_view_resolve: NULL argument");
    memset(view, 0, sizeof *view);
    view->pci_bus_order = order_name && strcmp(order_name, "PCI_BUS_ID") == 0;
    if (order_name && !view->pci_bus_order && strcmp(order_name, "FASTEST_FIRST") != 0)
        snprintf(view->note, sizeof view->note,
                 "CUDA_DEVICE_ORDER=\"%.64s\" is not FASTEST_FIRST or PCI_BUS_ID; using "
                 "FASTEST_FIRST",
                 order_name);
    ordering order;
    order_gpus(snapshot, view, &order);

    if (visible) {
        view->restricted = true;
        apply_list(snapshot, &order, visible, view);
    } else {
        for (size_t k = 0; k < order.count; k++) {
            const gk_gpu *gpu = &snapshot->gpus[order.gpu[k]];
            if (!mig_enabled(gpu)) {
                add_device(view, order.gpu[k], -1);
                continue;
            }
            for (size_t m = 0; m < gpu->mig_count; m++)
                add_device(view, order.gpu[k], (int)m);
        }
    }

    /* CUDA enumerates a single MIG device per process. */
    for (size_t i = 0; i < view->count; i++) {
        if (view->devices[i].mig >= 0) {
            if (view->count > 1)
                snprintf(view->note, sizeof view->note,
                         "a CUDA process sees only one MIG device; the other %zu listed "
                         "device(s) are hidden",
                         view->count - 1);
            view->devices[0] = view->devices[i];
            view->count = 1;
            break;
        }
    }
    return GK_OK;
}

bool gk_index_list_parse(const char *text, unsigned *indices, size_t max, size_t *count)
{
    size_t n = 0;
    const char *at = text;
    while (*at) {
        char *end;
        if (!isdigit((unsigned char)*at))
            return false;
        unsigned long first = strtoul(at, &end, 10), last = first;
        if (*end == '-') {
            if (!isdigit((unsigned char)end[1]))
                return false;
            last = strtoul(end + 1, &end, 10);
        }
        if (last < first || last > 4096 || (*end && *end != ','))
            return false;
        for (unsigned long i = first; i <= last; i++) {
            if (n >= max)
                return false;
            indices[n++] = (unsigned)i;
        }
        at = *end ? end + 1 : end;
        if (*end == ',' && !*at)
            return false;
    }
    *count = n;
    return n > 0;
}

const char *gk_slurm_visible_devices(const char *visible, const char *slurm_gpus, char *out,
                                     size_t size)
{
    unsigned relative[GK_SLURM_MAX_GPUS], node[GK_SLURM_MAX_GPUS];
    size_t n_relative, n_node;
    snprintf(out, size, "%s", visible ? visible : "");
    if (!visible || !slurm_gpus ||
        !gk_index_list_parse(visible, relative, GK_SLURM_MAX_GPUS, &n_relative) ||
        !gk_index_list_parse(slurm_gpus, node, GK_SLURM_MAX_GPUS, &n_node) ||
        n_relative != n_node)
        return out;
    /* Relative numbering: each entry is a position in Slurm's list. */
    size_t used = 0;
    for (size_t i = 0; i < n_relative; i++) {
        if (relative[i] >= n_node) {
            snprintf(out, size, "%s", visible);
            return out;
        }
        used += (size_t)snprintf(out + used, used < size ? size - used : 0, "%s%u", i ? "," : "",
                                 node[relative[i]]);
    }
    return out;
}

gk_status gk_cuda_view_from_env(const gk_snapshot *snapshot, gk_cuda_view *view)
{
    /* In a Slurm job, CUDA_VISIBLE_DEVICES may count from 0 the GPUs that
     * Slurm's cgroups leave visible; the node's indices are Slurm's. */
    const char *step = getenv("SLURM_STEP_GPUS");
    char visible[1024];
    gk_slurm_visible_devices(getenv("CUDA_VISIBLE_DEVICES"),
                             step && *step ? step : getenv("SLURM_JOB_GPUS"), visible,
                             sizeof visible);
    return gk_cuda_view_resolve(snapshot, getenv("CUDA_VISIBLE_DEVICES") ? visible : NULL,
                                getenv("CUDA_DEVICE_ORDER"), view);
}

int gk_cuda_view_index(const gk_cuda_view *view, size_t gpu)
{
    for (size_t i = 0; i < view->count; i++)
        if (view->devices[i].gpu == gpu && view->devices[i].mig < 0)
            return (int)i;
    return -1;
}

const char *gk_cuda_device_uuid(const gk_snapshot *snapshot, const gk_cuda_device *device)
{
    const gk_gpu *gpu = &snapshot->gpus[device->gpu];
    return device->mig >= 0 ? gpu->mig_devices[device->mig].uuid : gpu->uuid;
}

const char *gk_cuda_device_name(const gk_snapshot *snapshot, const gk_cuda_device *device)
{
    const gk_gpu *gpu = &snapshot->gpus[device->gpu];
    return device->mig >= 0 ? gpu->mig_devices[device->mig].name : gpu->name;
}
