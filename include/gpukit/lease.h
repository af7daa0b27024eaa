/* Reservations of GPUs ("leases") shared by every user of the machine.
 *
 * A lease is a small file in the lease directory, held by a write lock (an
 * open file description lock) on a descriptor of the job that owns it. The
 * descriptor survives exec, so the job itself holds its lease, and the
 * kernel drops the lock when the last process holding it ends, however it
 * ends (SIGKILL included). Only the file's owner can open it for writing, so
 * nobody else can hold that lock. A lease file without it is stale: it is
 * ignored, and removed by the next gpukit of the same user (the sticky
 * directory lets nobody else remove it). docs/LEASES.md says what users can
 * and cannot do to each other's leases.
 *
 * The directory: the given path, else $GPUKIT_LEASE_DIR, else
 * /tmp/gpukit-leases, created with mode 1777 (like /tmp: everyone may add
 * files, nobody may remove another user's). It is refused (GK_ERR_UNSAFE)
 * when it is a symbolic link, not a directory, owned by a user other than
 * root or the caller (that user could delete everyone's leases), or writable
 * by others without the sticky bit. Inside it, gpukit never follows a link,
 * never writes a file it did not just create, and skips entries that are not
 * gpukit leases (reported by gk_lease_dir_warnings()).
 *
 * Selecting devices and creating the lease must happen under the directory's
 * lock (gk_lease_dir_lock), which every gpukit on the machine takes: that is
 * what makes two jobs started together land on different GPUs. Anyone who
 * can read the directory can take that lock too, so gpukit never waits for
 * it without a limit (GK_LEASE_LOCK_PATIENCE).
 *
 * Thread safety: one gk_lease_dir per thread. */
#ifndef GPUKIT_LEASE_H
#define GPUKIT_LEASE_H

#include <gpukit/select.h>

#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GK_LEASE_MAX_DEVICES GK_SELECT_MAX_COUNT

/* The variable that names the lease a job runs under (set by gpukit run):
 * gpukit.current_reservation() in the job finds its reservation by it, and
 * the job's own gpukit runs share out its devices (gk_lease_claims). */
#define GK_LEASE_ENV "GPUKIT_LEASE"

typedef struct gk_lease {
    char name[64];         /* its file name in the lease directory */
    bool waiting;          /* a job waiting in line (--wait), not yet holding devices */
    bool slurm;            /* a Slurm job's GPUs (gpukit slurm prolog), named slurm-ID */
    uint32_t pid;          /* the job */
    uint32_t uid;
    char user[64];         /* the file owner's name, when read */
    struct timespec since; /* CLOCK_REALTIME */
    bool share;            /* others may share the devices */
    uint64_t reserved;     /* bytes reserved on each device, 0 if none */
    char command[256];     /* the job's command line, for people */
    char request[160];     /* what a waiting job asked for, for people */
    size_t device_count;
    char uuids[GK_LEASE_MAX_DEVICES][96];
    unsigned indices[GK_LEASE_MAX_DEVICES]; /* GPU index when leased */
} gk_lease;

typedef struct gk_lease_dir gk_lease_dir;

/* Opens the lease directory; creates it when `create` is set and it does not
 * exist. Without `create`, a missing directory gives an empty one (no
 * leases). Fails with GK_ERR_UNSAFE, GK_ERR_PERMISSION or GK_ERR_IO and a
 * message naming the fix. */
gk_status gk_lease_dir_open(const char *path, bool create, gk_lease_dir **out);
void gk_lease_dir_close(gk_lease_dir *dir);
const char *gk_lease_dir_path(const gk_lease_dir *dir);

/* How long, in seconds, gpukit tries for the machine-wide lock when the
 * caller set no time limit of its own (gpukit pick, leases, run without
 * --wait). gpukit holds the lock for milliseconds; but anyone who can read
 * the directory can lock it too, and must not be able to stall others.
 * (The help of run, pick and leases, the README, docs/LEASES.md and the
 * Python docstring of reserve() say "5 s".) */
#define GK_LEASE_LOCK_PATIENCE 5.0

/* The machine-wide lock: taken at once when free, else tried for up to
 * GK_LEASE_LOCK_PATIENCE seconds; then GK_ERR_TIMEOUT, with a message that
 * names the processes holding it (pid, user, command) and the fix. */
gk_status gk_lease_dir_lock(gk_lease_dir *dir);
void gk_lease_dir_unlock(gk_lease_dir *dir);
/* How long the last lock waited for, and was held, in seconds. */
void gk_lease_dir_lock_times(const gk_lease_dir *dir, double *waited, double *held);

/* The live leases and waiting jobs, oldest first; call with the lock held
 * (a lease being created is otherwise invisible). With the lock held it
 * removes this user's stale leases; without it (a monitor) it removes
 * nothing. Free the array with free(). */
gk_status gk_lease_list(gk_lease_dir *dir, gk_lease **leases, size_t *count);

/* What the last gk_lease_list skipped and why, one line each; "" if nothing. */
const char *gk_lease_dir_warnings(const gk_lease_dir *dir);

/* Records `lease` (pid, uid, user, since and name are filled in) and locks it
 * through *fd, which is NOT close-on-exec: a program this process execs keeps
 * holding the lease. Call with the directory lock held. */
gk_status gk_lease_create(gk_lease_dir *dir, gk_lease *lease, int *fd);

/* Ends a lease of this process now: removes its file and closes fd. */
void gk_lease_release(gk_lease_dir *dir, const char *name, int fd);

/* The claims of the holding leases on the devices of a snapshot, for
 * gk_select(): each lease's reserved memory per device and what its job's
 * processes (the job and its descendants) already use there. The leases
 * the caller runs under are no claim against it: its own Slurm job's
 * (SLURM_JOB_ID), and the gpukit lease named by GPUKIT_LEASE when this
 * process or one of its ancestors holds it (a job's own gpukit runs share
 * out the job's devices, as Slurm's steps share out the job's). */
gk_status gk_lease_claims(const gk_snapshot *snapshot, const gk_lease *leases, size_t count,
                          gk_claim **claims, size_t *claim_count);

#ifdef __cplusplus
}
#endif
#endif
