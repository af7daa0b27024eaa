/* Internal: the opened lease directory, shared by lease.c, queue.c and
 * reserve.c. */
#ifndef GK_SELECT_LEASE_DIR_H
#define GK_SELECT_LEASE_DIR_H

#include <gpukit/lease.h>

#include <stdint.h>

struct gk_lease_dir {
    char path[4096];
    int fd;           /* O_DIRECTORY; -1 when the directory does not exist */
    bool locked;
    uint64_t lock_wanted_ns, lock_taken_ns, lock_released_ns;
    char warnings[2048];
};

/* Nanoseconds of CLOCK_MONOTONIC / CLOCK_REALTIME. */
uint64_t gk_now_ns(void);
uint64_t gk_wall_ns(void);

/* Adds a line to dir->warnings (once per distinct line). */
void gk_lease_dir_warn(gk_lease_dir *dir, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Writes a lease or waiter record to a new file `name` in the directory
 * (O_EXCL, never following links) and locks it (LOCK_SH for leases, whose
 * holders may be many processes; the same for waiters). Returns the fd,
 * close-on-exec when `cloexec`. */
gk_status gk_lease_write(gk_lease_dir *dir, const char *name, const gk_lease *lease,
                         bool cloexec, int *fd);

/* gk_lease_create() with the choice of a close-on-exec descriptor. */
gk_status gk_lease_create_fd(gk_lease_dir *dir, gk_lease *lease, bool cloexec, int *fd);

/* Fills pid, uid and since for a record about to be written. Not the user
 * name: readers take it from the file's owner, and a passwd lookup (NSS,
 * perhaps LDAP) would cost every `gpukit run` its time. */
void gk_lease_stamp(gk_lease *lease);

#endif
