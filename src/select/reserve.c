/* Reserving: select and lease under the machine-wide lock, waiting in line
 * when asked to (see include/gpukit/reserve.h). */
#define _GNU_SOURCE
#include <gpukit/reserve.h>

#include "core/error.h"
#include "core/units.h"
#include "select/queue.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

gk_status gk_parse_wait(const char *text, double *seconds)
{
    gk_status status = gk_parse_duration(text, seconds);
    if (status == GK_OK && *seconds <= 0)
        status = gk_fail(GK_ERR_INVALID_ARGUMENT, "the timeout must be more than 0");
    return status;
}

void gk_reservation_free(gk_reservation *reservation)
{
    if (!reservation)
        return;
    gk_snapshot_destroy(reservation->snapshot);
    gk_selection_free(&reservation->selection);
    reservation->snapshot = NULL;
}

/* One look at the leases under the lock: who is waiting ahead of `ticket`
 * (every waiter when not in line), and the claims on the devices. */
typedef struct lease_view {
    gk_lease *leases;
    size_t count;
    gk_claim *claims;
    size_t claim_count;
    size_t waiters_ahead;
    char nearest_ahead[64]; /* the waiter just ahead of us */
} lease_view;

static gk_status read_leases(gk_lease_dir *dir, const gk_snapshot *snapshot,
                             const gk_ticket *ticket, lease_view *view)
{
    memset(view, 0, sizeof *view);
    gk_status status = gk_lease_list(dir, &view->leases, &view->count);
    if (status == GK_OK)
        status = gk_lease_claims(snapshot, view->leases, view->count, &view->claims,
                                 &view->claim_count);
    for (size_t i = 0; status == GK_OK && i < view->count; i++) {
        const gk_lease *lease = &view->leases[i];
        if (!lease->waiting || (ticket->name[0] && strcmp(lease->name, ticket->name) >= 0))
            continue;
        view->waiters_ahead++;
        snprintf(view->nearest_ahead, sizeof view->nearest_ahead, "%s", lease->name);
    }
    return status;
}

static void free_lease_view(lease_view *view)
{
    free(view->leases);
    free(view->claims);
    memset(view, 0, sizeof *view);
}

static gk_status lease_choice(gk_lease_dir *dir, const gk_request *request, const char *wanted,
                              const gk_reserve_options *options, gk_reservation *r)
{
    gk_lease *lease = &r->lease;
    memset(lease, 0, sizeof *lease);
    for (unsigned k = 0; k < request->count && k < GK_LEASE_MAX_DEVICES; k++) {
        const gk_candidate *c = &r->selection.candidates[k];
        snprintf(lease->uuids[k], sizeof lease->uuids[k], "%s", c->uuid);
        lease->indices[k] = c->index;
        lease->device_count++;
    }
    lease->share = request->share;
    lease->reserved = request->min_free.known ? request->min_free.value : 0;
    snprintf(lease->command, sizeof lease->command, "%s", options->command ? options->command : "");
    /* What was asked for, so the job can tell (gpukit.current_reservation). */
    snprintf(lease->request, sizeof lease->request, "%s", wanted);
    return gk_lease_create_fd(dir, lease, options->cloexec, &r->lease_fd);
}

static gk_status no_gpu(const gk_snapshot *snapshot)
{
    bool absent = snapshot->absence == GK_ABSENCE_NO_DRIVER ||
                  snapshot->absence == GK_ABSENCE_NO_DEVICES;
    return gk_fail(absent ? GK_ERR_NOT_FOUND : GK_ERR_DRIVER, "%s", snapshot->diagnosis);
}

/* Said whether or not the caller waits: someone who did not ask to wait
 * should not be sent to --wait when no state of the machine could fit. */
static const char *waiting_cannot_help(const gk_selection *selection)
{
    if (selection->possible)
        return "";
    /* With no candidate the selection already says which limit removed them. */
    return selection->count ? "; waiting cannot help: this machine does not have what is "
                              "asked for"
                            : "; waiting cannot help";
}

static void sleep_until(uint64_t wake_ns)
{
    uint64_t now = gk_now_ns();
    if (wake_ns <= now)
        return;
    struct timespec pause = {(time_t)((wake_ns - now) / 1000000000ull),
                             (long)((wake_ns - now) % 1000000000ull)};
    nanosleep(&pause, NULL);
}

/* Whether the caller asked the wait to stop. */
static bool cancelled(const gk_reserve_options *options)
{
    return options->cancelled && options->cancelled(options->context);
}

static void report(const gk_reserve_options *options, char *last, size_t size, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));
static void report(const gk_reserve_options *options, char *last, size_t size, const char *fmt,
                   ...)
{
    char message[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    if (!options->progress || strcmp(message, last) == 0)
        return;
    snprintf(last, size, "%s", message);
    options->progress(message, options->context);
}

/* Takes the directory's lock by the wait's deadline; without a wait, within
 * GK_LEASE_LOCK_PATIENCE; waiting without limit, when it comes (telling who
 * holds it meanwhile). */
static gk_status lock(gk_lease_dir *dir, const gk_reserve_options *options, uint64_t deadline,
                      const char *wanted)
{
    gk_lock_wait wait = {
        .deadline_ns = options->wait ? deadline
                                     : gk_now_ns() + (uint64_t)(GK_LEASE_LOCK_PATIENCE * 1e9),
        .progress = options->progress,
        .cancelled = options->cancelled,
        .context = options->context,
    };
    gk_status status = gk_lease_dir_lock_until(dir, &wait);
    if (status == GK_ERR_CANCELLED)
        return gk_fail(GK_ERR_CANCELLED, "stopped waiting for %s", wanted);
    if (status == GK_ERR_TIMEOUT && options->wait) {
        char why[2048];
        snprintf(why, sizeof why, "%s", gk_last_error());
        return gk_fail(GK_ERR_TIMEOUT, "waited %g s for %s: %s",
                       options->wait_seconds, wanted, why);
    }
    return status;
}

gk_status gk_reserve(gk_probe *probe, gk_lease_dir *dir, const gk_request *request,
                     const gk_reserve_options *options, gk_reservation *r)
{
    memset(r, 0, sizeof *r);
    r->lease_fd = -1;
    if (!probe || !dir || !request || !options)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "gk_reserve: NULL argument");
    gk_ticket ticket = {"", -1};
    const uint64_t start = gk_now_ns();
    const uint64_t deadline = options->wait && options->wait_seconds > 0
                                  ? start + (uint64_t)(options->wait_seconds * 1e9)
                                  : 0;
    const uint64_t poll = (uint64_t)((options->poll_seconds > 0 ? options->poll_seconds : 0.1) * 1e9);
    /* Selection needs no CPU facts (reading /proc/cpuinfo costs more than
     * the rest of a reservation on a many-core machine). */
    const unsigned flags = GK_PROBE_NO_CPU |
                           (request->share || request->max_procs >= 0 ? GK_PROBE_PROCESSES : 0);
    char wanted[256], last_report[1024] = "";
    gk_request_describe(request, wanted, sizeof wanted);

    for (;;) {
        gk_reservation_free(r);
        gk_status status = gk_probe_read(probe, flags, &r->snapshot);
        if (status == GK_OK && r->snapshot->gpu_count == 0)
            status = no_gpu(r->snapshot);
        if (status != GK_OK) {
            gk_queue_leave(dir, &ticket);
            return status;
        }
        gk_cuda_view allowed;
        gk_cuda_view_from_env(r->snapshot, &allowed);

        lease_view leases;
        if ((status = lock(dir, options, deadline, wanted)) != GK_OK) {
            gk_queue_leave(dir, &ticket);
            return status;
        }
        status = read_leases(dir, r->snapshot, &ticket, &leases);
        snprintf(r->warnings, sizeof r->warnings, "%s", gk_lease_dir_warnings(dir));
        if (status == GK_OK)
            status = gk_select(r->snapshot, &allowed, leases.claims, leases.claim_count, request,
                               &r->selection);
        const bool fits = status == GK_OK && r->selection.fits;
        const bool my_turn = !options->wait || leases.waiters_ahead == 0;
        if (fits && my_turn) {
            if (options->lease)
                status = lease_choice(dir, request, wanted, options, r);
            gk_queue_leave(dir, &ticket);
        } else if (status == GK_OK && !fits && (!options->wait || !r->selection.possible)) {
            status = gk_fail(GK_ERR_BUSY, "%s%s", r->selection.why,
                             waiting_cannot_help(&r->selection));
        } else if (status == GK_OK && options->wait && !ticket.name[0]) {
            gk_lease record = {0};
            snprintf(record.command, sizeof record.command, "%s",
                     options->command ? options->command : "");
            snprintf(record.request, sizeof record.request, "%s", wanted);
            status = gk_queue_join(dir, &record, &ticket);
        }
        gk_lease_dir_unlock(dir);
        gk_lease_dir_lock_times(dir, &r->lock_waited, &r->lock_held);
        char nearest[64];
        snprintf(nearest, sizeof nearest, "%s", leases.nearest_ahead);
        const size_t ahead = leases.waiters_ahead;
        free_lease_view(&leases);
        r->waited = (double)(gk_now_ns() - start) / 1e9;
        if (status != GK_OK || (fits && my_turn)) {
            if (status != GK_OK)
                gk_queue_leave(dir, &ticket);
            return status;
        }

        /* Waiting in line. */
        if (deadline && gk_now_ns() >= deadline) {
            gk_queue_leave(dir, &ticket);
            return gk_fail(GK_ERR_TIMEOUT, "waited %.0f s for %s; still %s", r->waited, wanted,
                           ahead ? "other jobs are ahead in line" : r->selection.why);
        }
        if (ahead) {
            report(options, last_report, sizeof last_report,
                   "waiting for %s: %zu job(s) ahead in line", wanted, ahead);
            gk_queue_wait_for(dir, nearest, deadline, options->cancelled, options->context);
        } else {
            report(options, last_report, sizeof last_report, "waiting for %s: %s", wanted,
                   r->selection.why);
            uint64_t wake = gk_now_ns() + poll;
            sleep_until(deadline && deadline < wake ? deadline : wake);
        }
        /* Before the next attempt, which could lease. */
        if (cancelled(options)) {
            gk_queue_leave(dir, &ticket);
            return gk_fail(GK_ERR_CANCELLED, "stopped waiting for %s", wanted);
        }
    }
}
