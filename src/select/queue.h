/* Internal: the line of jobs waiting for GPUs (gpukit run --wait). A waiter
 * is a "wait-<wall clock ns>-<pid>" record in the lease directory, locked by
 * its process; names sort in arrival order because they are made under the
 * directory lock. */
#ifndef GK_SELECT_QUEUE_H
#define GK_SELECT_QUEUE_H

#include "select/lease_dir.h"

typedef struct gk_ticket {
    char name[64]; /* "" when not in line */
    int fd;
} gk_ticket;

/* Joins the end of the line; call with the directory lock held. `record`
 * supplies the command and request shown by `gpukit leases`. */
gk_status gk_queue_join(gk_lease_dir *dir, const gk_lease *record, gk_ticket *ticket);

/* Leaves the line (harmless when not in it). */
void gk_queue_leave(gk_lease_dir *dir, gk_ticket *ticket);

/* Waits until the waiter named `ahead` has left the line, until the
 * monotonic deadline (0: none), or until `cancelled` (may be NULL) returns
 * true; false when the deadline or the cancellation came first. */
bool gk_queue_wait_for(gk_lease_dir *dir, const char *ahead, uint64_t deadline_ns,
                       bool (*cancelled)(void *context), void *context);

#endif
