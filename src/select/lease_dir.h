/* Internal: the opened lease directory, shared by lease.c, queue.c and
 * reserve.c. */
#ifndef GK_SELECT_LEASE_DIR_H
#define GK_SELECT_LEASE_DIR_H

#include <gpukit/lease.h>

#include <stdint.h>
#include <sys/stat.h>

struct gk_lease_dir {
    char path[4096];
    int fd;           /* O_DIRECTORY; -1 when the directory does not exist */
    bool locked;
    uint64_t lock_wanted_ns, lock_taken_ns, lock_released_ns;
    char warnings[2048];
};

/* How to wait for the directory's lock (gk_lease_dir_lock_until). */
typedef struct gk_lock_wait {
    uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0 waits without limit */
    /* Told once, after a second, who holds the lock; may be NULL. */
    void (*progress)(const char *message, void *context);
    /* Polled between attempts; true gives up (GK_ERR_CANCELLED). May be NULL. */
    bool (*cancelled)(void *context);
    void *context;
} gk_lock_wait;

/* Takes the directory's lock: at once when it is free, else by attempts
 * until the deadline. GK_ERR_TIMEOUT names the processes holding it (from
 * /proc/locks) and what to do about them. */
gk_status gk_lease_dir_lock_until(gk_lease_dir *dir, const gk_lock_wait *wait);

/* Describes, into `out`, the processes that hold a flock(2) lock on the
 * file `st` describes: "pid 123 (user alice, command 'python3')", several
 * separated by commas. Returns how many there are (0: none, or /proc/locks
 * unreadable). */
size_t gk_lock_holders(const struct stat *st, char *out, size_t size);

/* gk_lock_holders() over `locks`, the text of /proc/locks, for the file
 * `dev`/`ino`, with each holder's owner and command read from `proc` (the
 * real "/proc", or a fake one in tests). */
size_t gk_lock_holders_parse(const char *locks, dev_t dev, ino_t ino, const char *proc,
                             char *out, size_t size);

/* Nanoseconds of CLOCK_MONOTONIC / CLOCK_REALTIME. */
uint64_t gk_now_ns(void);
uint64_t gk_wall_ns(void);

/* Adds a line to dir->warnings (once per distinct line). */
void gk_lease_dir_warn(gk_lease_dir *dir, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Writes a lease or waiter record to a new file `name` in the directory
 * (O_EXCL, never following links) and takes its write lock (see
 * gk_record_held; every process that inherits the fd shares it). Returns the
 * fd, close-on-exec when `cloexec`. */
gk_status gk_lease_write(gk_lease_dir *dir, const char *name, const gk_lease *lease,
                         bool cloexec, int *fd);

/* Whether a process holds the write lock (an open file description lock)
 * that keeps the record open on `fd` alive: 1 held, 0 not (its job ended),
 * -1 with errno. Taking that lock needs the file open for writing, which only
 * its owner (and root) can do: another user, who can only open it for
 * reading, cannot keep somebody's ended job's record alive. */
int gk_record_held(int fd);

/* gk_lease_create() with the choice of a close-on-exec descriptor. */
gk_status gk_lease_create_fd(gk_lease_dir *dir, gk_lease *lease, bool cloexec, int *fd);

/* Fills pid, uid and since for a record about to be written. Not the user
 * name: readers take it from the file's owner, and a passwd lookup (NSS,
 * perhaps LDAP) would cost every `gpukit run` its time. */
void gk_lease_stamp(gk_lease *lease);

#endif
