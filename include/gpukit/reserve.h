/* Reserving GPUs for a job: pick by policy and lease the choice, atomically
 * across every process and user of the machine, optionally waiting in line
 * until something fits.
 *
 * Each attempt reads the GPUs (outside the lock: NVML can be slow), then,
 * under the lease directory's lock, reads the live leases, selects, and
 * creates the lease. Reading the GPUs first is safe: a job that started since
 * is in the leases, and one that ended since only makes the attempt careful.
 *
 * Waiting jobs form a first-come, first-served line on the machine: each
 * waits for the one ahead of it to leave the line (a file lock, so a killed
 * waiter leaves at once), and only the first in line polls the GPUs. */
#ifndef GPUKIT_RESERVE_H
#define GPUKIT_RESERVE_H

#include <gpukit/lease.h>
#include <gpukit/select.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gk_reserve_options {
    bool lease;          /* create a lease; false only reads (gpukit pick) */
    bool wait;           /* wait in line when nothing fits now */
    double wait_seconds; /* give up after this long; 0 waits without limit */
    double poll_seconds; /* how often the first in line looks again (0: 0.1 s) */
    const char *command; /* the job's command line, recorded in the lease */
    /* Called with a line for people when the wait starts or its reason
     * changes; may be NULL. */
    void (*progress)(const char *message, void *context);
    /* Polled between attempts and every few milliseconds while waiting in
     * line; returning true gives up at once (GK_ERR_CANCELLED), leaving the
     * line and holding nothing. May be NULL. Lets a caller that waits with
     * signals deferred (Python's Ctrl-C) stop the wait. */
    bool (*cancelled)(void *context);
    void *context;       /* passed to progress and cancelled */
    /* Make lease_fd close-on-exec: for a process that holds its lease
     * itself (the Python module), so that programs it starts do not keep
     * the lease alive after it ends. `gpukit run` leaves it inheritable: the
     * job it execs holds the lease. */
    bool cloexec;
} gk_reserve_options;

typedef struct gk_reservation {
    gk_snapshot *snapshot;  /* the GPUs as the choice saw them */
    gk_selection selection; /* the chosen devices are its first `count` candidates */
    gk_lease lease;         /* the lease record, when one was created */
    int lease_fd;           /* holds the lease (not close-on-exec); -1 if none */
    double waited;          /* seconds spent waiting in line */
    double lock_waited;     /* seconds the last attempt waited for the lock */
    double lock_held;       /* seconds it held the lock */
    char warnings[2048];    /* entries of the lease directory that were skipped */
} gk_reservation;

/* Reserves what `request` asks for. Returns GK_OK with the choice (and the
 * lease), or: GK_ERR_NOT_FOUND (no GPU here at all), GK_ERR_DRIVER (the
 * driver fails), GK_ERR_BUSY (not enough devices fit, and either not waiting
 * or waiting cannot help), GK_ERR_TIMEOUT (waited wait_seconds),
 * GK_ERR_CANCELLED (options->cancelled said so),
 * GK_ERR_INVALID_ARGUMENT (a malformed request), or the lease directory's
 * errors (GK_ERR_UNSAFE, GK_ERR_PERMISSION, GK_ERR_IO). On failure the
 * reservation still holds the last snapshot and selection, for reporting.
 * The lease records the request in words (gk_request_describe) as its
 * `request`. Release it with gk_reservation_free() (which keeps the lease: close
 * lease_fd, or gk_lease_release(), to end it). */
/* A wait's time limit as people write it (`--wait=TIMEOUT`,
 * gpukit.reserve(wait=...)): seconds ("90", "1.5s") or with a unit ("30m",
 * "2h"); more than 0. GK_ERR_INVALID_ARGUMENT with what is wrong. */
gk_status gk_parse_wait(const char *text, double *seconds);

gk_status gk_reserve(gk_probe *probe, gk_lease_dir *dir, const gk_request *request,
                     const gk_reserve_options *options, gk_reservation *reservation);
void gk_reservation_free(gk_reservation *reservation);

#ifdef __cplusplus
}
#endif
#endif
