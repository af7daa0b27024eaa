/* Lease records: writing them, reading them back (skipping anything that is
 * not ours), and turning them into claims for selection. The file format is
 * a few "key value" lines:
 *
 *   gpukit-lease 2
 *   state holding            (or "waiting" for a job in line)
 *   pid 1234
 *   uid 1000
 *   since 1763800000.123456789
 *   share 0
 *   reserved 21474836480
 *   device GPU-2bdfff79-... 0   (UUID and index, one line per device)
 *   command python train.py
 *   request 1 device, --min-free 20.0 GiB
 *
 * A record is alive while its job holds a write lock on it (an open file
 * description lock, see gk_record_held). Version 1 records were held by an
 * flock, which any reader could take as well.
 */
#define _GNU_SOURCE
#include "select/lease.h"
#include "select/slurm.h"
#include "select/lease_dir.h"

#include "core/error.h"
#include "core/users.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECORD_MAX 8192

void gk_lease_stamp(gk_lease *lease)
{
    uint64_t now = gk_wall_ns();
    lease->pid = (uint32_t)getpid();
    lease->uid = (uint32_t)geteuid();
    lease->since.tv_sec = (time_t)(now / 1000000000ull);
    lease->since.tv_nsec = (long)(now % 1000000000ull);
}

/* One line of text without newlines, so a command cannot forge records. */
static void put_text(FILE *out, const char *key, const char *text)
{
    fprintf(out, "%s ", key);
    for (; *text; text++)
        fputc(*text == '\n' || *text == '\r' ? ' ' : *text, out);
    fputc('\n', out);
}

static size_t format_record(const gk_lease *lease, char *buf, size_t size)
{
    FILE *out = fmemopen(buf, size, "w");
    if (!out)
        return 0;
    fprintf(out, "gpukit-lease 2\nstate %s\npid %" PRIu32 "\nuid %" PRIu32
                 "\nsince %lld.%09ld\nshare %d\nreserved %" PRIu64 "\n",
            lease->waiting ? "waiting" : "holding", lease->pid, lease->uid,
            (long long)lease->since.tv_sec, lease->since.tv_nsec, lease->share ? 1 : 0,
            lease->reserved);
    for (size_t i = 0; i < lease->device_count; i++)
        fprintf(out, "device %s %u\n", lease->uuids[i], lease->indices[i]);
    put_text(out, "command", lease->command);
    if (lease->request[0])
        put_text(out, "request", lease->request);
    long length = ftell(out);
    bool ok = !ferror(out) && length > 0 && (size_t)length < size;
    fclose(out);
    return ok ? (size_t)length : 0;
}

gk_status gk_lease_write(gk_lease_dir *dir, const char *name, const gk_lease *lease,
                         bool cloexec, int *fd_out)
{
    char record[RECORD_MAX];
    size_t length = format_record(lease, record, sizeof record);
    if (length == 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "the lease record is too long");
    if (dir->fd < 0)
        return gk_fail(GK_ERR_IO, "the lease directory %s does not exist", dir->path);
    /* Created readable by its owner only, so that nobody else can open it
     * before it is locked; made readable by all once it is. */
    int fd = openat(dir->fd, name,
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | (cloexec ? O_CLOEXEC : 0), 0600);
    if (fd < 0) {
        int err = errno;
        gk_status status = gk_fail(err == EACCES || err == EPERM || err == EROFS ? GK_ERR_PERMISSION
                                                                      : GK_ERR_IO,
                       "cannot create a lease in %s: %s; ask an admin to make it writable for "
                       "everyone (chmod 1777 %s) or set GPUKIT_LEASE_DIR to a directory you "
                       "can write", dir->path, strerror(err), dir->path);
        errno = err; /* EEXIST tells gk_lease_create to pick another name */
        return status;
    }
    /* Locked before anything else can see it: readers hold the directory
     * lock, and so do we. */
    gk_status status = GK_OK;
    struct flock whole = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_OFD_SETLK, &whole) != 0)
        status = gk_fail(GK_ERR_IO, "cannot lock the lease %s/%s: %s", dir->path, name,
                         strerror(errno));
    else if (fchmod(fd, 0644) != 0 || write(fd, record, length) != (ssize_t)length)
        status = gk_fail(GK_ERR_IO, "cannot write the lease %s/%s: %s", dir->path, name,
                         strerror(errno));
    if (status != GK_OK) {
        unlinkat(dir->fd, name, 0);
        close(fd);
        return status;
    }
    *fd_out = fd;
    return GK_OK;
}

int gk_record_held(int fd)
{
    /* Asks what would stop a write lock: a write lock is a holder; a read
     * lock is somebody else's, taken with the file open for reading, which
     * keeps nothing alive. */
    struct flock probe = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_OFD_GETLK, &probe) != 0)
        return -1;
    return probe.l_type == F_WRLCK;
}

gk_status gk_lease_create(gk_lease_dir *dir, gk_lease *lease, int *fd)
{
    return gk_lease_create_fd(dir, lease, false, fd);
}

gk_status gk_lease_create_fd(gk_lease_dir *dir, gk_lease *lease, bool cloexec, int *fd)
{
    gk_lease_stamp(lease);
    lease->waiting = false;
    /* A random part makes the name unguessable, so nobody can plant
     * something under it beforehand; O_EXCL refuses whatever is there. */
    for (int attempt = 0; attempt < 8; attempt++) {
        uint32_t nonce = 0;
        if (getrandom(&nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce)
            nonce = (uint32_t)gk_now_ns() ^ (uint32_t)attempt;
        snprintf(lease->name, sizeof lease->name, "lease-%" PRIu32 "-%08" PRIx32, lease->pid,
                 nonce);
        gk_status status = gk_lease_write(dir, lease->name, lease, cloexec, fd);
        if (status == GK_OK || errno != EEXIST)
            return status;
    }
    return gk_fail(GK_ERR_IO, "cannot find a free lease name in %s", dir->path);
}

void gk_lease_release(gk_lease_dir *dir, const char *name, int fd)
{
    if (dir && dir->fd >= 0 && name && name[0])
        unlinkat(dir->fd, name, 0);
    if (fd >= 0)
        close(fd);
}

/* --- reading --- */

bool gk_lease_parse(char *text, gk_lease *lease)
{
    bool header = false, has_pid = false, has_uid = false;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *value = strchr(line, ' ');
        if (!value)
            return false;
        *value++ = '\0';
        if (strcmp(line, "gpukit-lease") == 0) {
            header = strcmp(value, "2") == 0;
        } else if (strcmp(line, "state") == 0) {
            lease->waiting = strcmp(value, "waiting") == 0;
        } else if (strcmp(line, "pid") == 0) {
            lease->pid = (uint32_t)strtoul(value, NULL, 10);
            has_pid = true;
        } else if (strcmp(line, "uid") == 0) {
            lease->uid = (uint32_t)strtoul(value, NULL, 10);
            has_uid = true;
        } else if (strcmp(line, "since") == 0) {
            char *dot;
            lease->since.tv_sec = (time_t)strtoll(value, &dot, 10);
            /* The fraction as nanoseconds: ".5" is 500000000. */
            long nsec = 0;
            int digits = 0;
            if (*dot == '.')
                for (const char *p = dot + 1; *p >= '0' && *p <= '9' && digits < 9; p++, digits++)
                    nsec = nsec * 10 + (*p - '0');
            for (; digits < 9; digits++)
                nsec *= 10;
            lease->since.tv_nsec = nsec;
        } else if (strcmp(line, "share") == 0) {
            lease->share = strcmp(value, "1") == 0;
        } else if (strcmp(line, "reserved") == 0) {
            lease->reserved = strtoull(value, NULL, 10);
        } else if (strcmp(line, "device") == 0) {
            if (lease->device_count == GK_LEASE_MAX_DEVICES)
                return false;
            char *index = strchr(value, ' ');
            if (index)
                *index++ = '\0';
            size_t k = lease->device_count++;
            snprintf(lease->uuids[k], sizeof lease->uuids[k], "%s", value);
            lease->indices[k] = index ? (unsigned)strtoul(index, NULL, 10) : 0;
        } else if (strcmp(line, "command") == 0) {
            snprintf(lease->command, sizeof lease->command, "%s", value);
        } else if (strcmp(line, "request") == 0) {
            snprintf(lease->request, sizeof lease->request, "%s", value);
        }
    }
    return header && has_pid && has_uid;
}

static bool is_record_name(const char *name)
{
    return strncmp(name, "lease-", 6) == 0 || strncmp(name, "wait-", 5) == 0;
}

/* A waiter's place in line is the time in its name, which its writer
 * chose; the kernel stamps the file's change time when it is written, and
 * nobody can set that back. A name much older than its file claims a place
 * its writer never had (the slack allows for a busy machine and for clock
 * adjustments between taking the time and writing the file). */
#define PLACE_SLACK_NS (10 * 1000000000ull)

static bool place_is_genuine(const char *name, const struct stat *st)
{
    const uint64_t place = strtoull(name + strlen("wait-"), NULL, 10);
    const uint64_t made = (uint64_t)st->st_ctim.tv_sec * 1000000000ull +
                          (uint64_t)st->st_ctim.tv_nsec;
    return place + PLACE_SLACK_NS >= made;
}

/* Whether the pid a record names can be its job: a process of the record's
 * owner, or of root (a job may run a setuid program), or one that has ended.
 * Anything else would blame somebody else's process for the lease, and
 * count that process's GPU memory as the lease's. */
static bool pid_is_owners(uint32_t pid, uid_t owner)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%" PRIu32, pid);
    return stat(path, &st) != 0 || st.st_uid == owner || st.st_uid == 0;
}

/* Looks at an entry before it is opened, so that only what could be a
 * record is: a plain file of at most RECORD_MAX bytes, and for a waiter,
 * one with no other name. */
static bool may_be_record(gk_lease_dir *dir, const char *name, const char *where,
                          struct stat *seen)
{
    if (fstatat(dir->fd, name, seen, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT)
            gk_lease_dir_warn(dir, "ignored %s: %s", where, strerror(errno));
        return false;
    }
    if (S_ISLNK(seen->st_mode)) {
        gk_lease_dir_warn(dir, "ignored %s: a symbolic link, not a gpukit lease (remove it)",
                          where);
        return false;
    }
    if (!S_ISREG(seen->st_mode) || seen->st_size >= RECORD_MAX) {
        gk_lease_dir_warn(dir, "ignored %s: not a gpukit lease (%s)", where,
                          S_ISREG(seen->st_mode) ? "too large" : "not a plain file");
        return false;
    }
    if (name[0] == 'w' && seen->st_nlink != 1) {
        /* Another name for somebody's waiter would give it a second place
         * in line, where it would wait for itself. */
        gk_lease_dir_warn(dir, "ignored %s: a waiter with other names (hard links)", where);
        return false;
    }
    return true;
}

/* Reads one entry; returns true and fills *lease for a live record. Stale
 * records of this user are removed; anything odd becomes a warning. */
static bool read_entry(gk_lease_dir *dir, const char *name, gk_lease *lease)
{
    char where[4200];
    snprintf(where, sizeof where, "%s/%s", dir->path, name);
    memset(lease, 0, sizeof *lease);
    struct stat seen;
    if (!may_be_record(dir, name, where, &seen))
        return false;
    const bool waiting = name[0] == 'w';
    /* O_NONBLOCK: should a FIFO be swapped in after the look, opening it
     * must not wait for a writer. */
    int fd = openat(dir->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_dev != seen.st_dev || st.st_ino != seen.st_ino) {
        if (fd >= 0 || errno != ENOENT)
            gk_lease_dir_warn(dir, "ignored %s: it changed while being read", where);
        if (fd >= 0)
            close(fd);
        return false;
    }
    bool live = false;
    char record[RECORD_MAX];
    ssize_t n = pread(fd, record, sizeof record - 1, 0);
    record[n > 0 ? n : 0] = '\0';
    int held;
    /* Only its owner (or root) may remove a file from the sticky directory,
     * and only a reader holding the directory's lock: without it, an empty
     * or unlocked record may be one a gpukit is creating right now (the
     * monitor lists leases without the lock). */
    const bool removable = (st.st_uid == geteuid() || geteuid() == 0) && dir->locked;
    if (n == 0 && removable && gk_record_held(fd) == 0) {
        /* Its gpukit was killed between creating and writing it (readers
         * hold the directory lock, so they never see one being written). */
        unlinkat(dir->fd, name, 0);
    } else if (n > 0 && strncmp(record, "gpukit-lease 1\n", 15) == 0) {
        gk_lease_dir_warn(dir, "ignored %s: written by an older gpukit, whose leases cannot "
                          "be checked (they are locked differently); upgrade gpukit for every "
                          "user of this machine", where);
    } else if (n <= 0 || !gk_lease_parse(record, lease)) {
        /* Only what is certainly a lease may ever be removed. */
        gk_lease_dir_warn(dir, "ignored %s: not a gpukit lease", where);
    } else if (lease->uid != st.st_uid) {
        gk_lease_dir_warn(dir, "ignored %s: it claims uid %" PRIu32 " but belongs to uid %lu "
                          "(planted by another user?)", where, lease->uid,
                          (unsigned long)st.st_uid);
    } else if (lease->waiting != waiting) {
        gk_lease_dir_warn(dir, "ignored %s: its state does not match its name", where);
    } else if ((held = gk_record_held(fd)) < 0) {
        gk_lease_dir_warn(dir, "ignored %s: cannot check its lock: %s", where, strerror(errno));
    } else if (!held) {
        /* Nobody holds it: its job has ended. */
        if (removable)
            unlinkat(dir->fd, name, 0);
    } else if (waiting && !place_is_genuine(name, &st)) {
        gk_lease_dir_warn(dir, "ignored %s: its name claims a place in line from before the "
                          "file was made", where);
    } else {
        if (st.st_nlink != 1) /* counted all the same: ignoring it would free its GPUs */
            gk_lease_dir_warn(dir, "%s has other names (hard links); its owner can remove "
                              "them", where);
        if (!pid_is_owners(lease->pid, st.st_uid)) {
            gk_lease_dir_warn(dir, "%s names pid %" PRIu32 ", a process of another user (its "
                              "job's first process ended, or the record lies): shown as pid 0",
                              where, lease->pid);
            lease->pid = 0;
        }
        snprintf(lease->name, sizeof lease->name, "%s", name);
        gk_user_name(st.st_uid, lease->user, sizeof lease->user);
        live = true;
    }
    close(fd);
    return live;
}

/* Oldest first; waiting jobs by their place in line (their name). */
static int compare_leases(const void *pa, const void *pb)
{
    const gk_lease *a = pa, *b = pb;
    if (a->waiting && b->waiting)
        return strcmp(a->name, b->name);
    if (a->since.tv_sec != b->since.tv_sec)
        return a->since.tv_sec < b->since.tv_sec ? -1 : 1;
    if (a->since.tv_nsec != b->since.tv_nsec)
        return a->since.tv_nsec < b->since.tv_nsec ? -1 : 1;
    return strcmp(a->name, b->name);
}

gk_status gk_lease_list(gk_lease_dir *dir, gk_lease **leases, size_t *count)
{
    *leases = NULL;
    *count = 0;
    dir->warnings[0] = '\0';
    if (dir->fd < 0) /* no lease directory yet: only Slurm's jobs, if any */
        return gk_slurm_append_leases(gk_slurm_dir(NULL), leases, count);
    int fd = dup(dir->fd);
    DIR *stream = fd >= 0 ? fdopendir(fd) : NULL;
    if (!stream) {
        if (fd >= 0)
            close(fd);
        return gk_fail(GK_ERR_IO, "cannot read the lease directory %s: %s", dir->path,
                       strerror(errno));
    }
    rewinddir(stream);
    size_t capacity = 0;
    gk_lease *list = NULL;
    gk_status status = GK_OK;
    struct dirent *entry;
    while ((entry = readdir(stream))) {
        if (!is_record_name(entry->d_name))
            continue; /* not ours (an admin's README, say): left alone */
        if (*count == capacity) {
            capacity = capacity ? capacity * 2 : 16;
            gk_lease *bigger = realloc(list, capacity * sizeof *list);
            if (!bigger) {
                status = gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
                break;
            }
            list = bigger;
        }
        if (read_entry(dir, entry->d_name, &list[*count]))
            (*count)++;
    }
    closedir(stream);
    /* The GPUs Slurm gave to jobs on this node count as leases too. */
    if (status == GK_OK)
        status = gk_slurm_append_leases(gk_slurm_dir(NULL), &list, count);
    if (status != GK_OK) {
        free(list);
        *count = 0;
        return status;
    }
    if (*count)
        qsort(list, *count, sizeof *list, compare_leases);
    *leases = list;
    return GK_OK;
}

/* --- claims --- */

bool gk_lease_stat_parent(const char *stat, uint32_t *parent)
{
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses. */
    const char *end = strrchr(stat, ')');
    unsigned long ppid;
    char state;
    if (!end || sscanf(end + 1, " %c %lu", &state, &ppid) != 2)
        return false;
    *parent = (uint32_t)ppid;
    return true;
}

size_t gk_pid_ancestry(uint32_t pid, uint32_t *chain, size_t max)
{
    size_t n = 0;
    while (n < max && pid > 1) {
        chain[n++] = pid;
        char path[64], stat[512];
        snprintf(path, sizeof path, "/proc/%" PRIu32 "/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            break;
        ssize_t got = read(fd, stat, sizeof stat - 1);
        close(fd);
        if (got <= 0)
            break;
        stat[got] = '\0';
        if (!gk_lease_stat_parent(stat, &pid))
            break;
    }
    return n;
}

/* Is `pid` the job `root` or one of its descendants? */
static bool in_job(uint32_t pid, uint32_t root)
{
    uint32_t chain[64];
    size_t n = gk_pid_ancestry(pid, chain, sizeof chain / sizeof chain[0]);
    for (size_t i = 0; i < n; i++)
        if (chain[i] == root)
            return true;
    return false;
}

/* Memory the job's processes use on the device `uuid`. */
static uint64_t held_by_job(const gk_snapshot *snapshot, const char *uuid, uint32_t job)
{
    uint64_t held = 0;
    for (size_t g = 0; g < snapshot->gpu_count; g++) {
        const gk_gpu *gpu = &snapshot->gpus[g];
        const gk_mig_device *mig = NULL;
        for (size_t m = 0; m < gpu->mig_count; m++)
            if (strcmp(gpu->mig_devices[m].uuid, uuid) == 0)
                mig = &gpu->mig_devices[m];
        if (!mig && strcmp(gpu->uuid, uuid) != 0)
            continue;
        for (size_t p = 0; p < gpu->process_count; p++) {
            const gk_process *process = &gpu->processes[p];
            if (mig && !(process->gpu_instance.known && mig->gpu_instance.known &&
                         process->gpu_instance.value == mig->gpu_instance.value))
                continue;
            if (process->gpu_memory.known && in_job(process->pid, job))
                held += process->gpu_memory.value;
        }
    }
    return held;
}

/* Whether `lease` is one the caller runs under, so no claim against it: its
 * own Slurm job's (`slurm_own` is "slurm-ID" of SLURM_JOB_ID, or ""), or the
 * gpukit lease of GPUKIT_LEASE held by this process or an ancestor (a
 * `gpukit run` inside a `gpukit run` job or a gpukit Jupyter kernel would
 * otherwise wait for itself). The holder is checked so that the variable
 * alone lifts no other job's claim. */
static bool runs_under(const gk_lease *lease, const char *slurm_own)
{
    if (lease->slurm)
        return strcmp(lease->name, slurm_own) == 0;
    const char *own = getenv(GK_LEASE_ENV);
    return own && strcmp(lease->name, own) == 0 && lease->pid > 0 &&
           in_job((uint32_t)getpid(), lease->pid);
}

gk_status gk_lease_claims(const gk_snapshot *snapshot, const gk_lease *leases, size_t count,
                          gk_claim **claims, size_t *claim_count)
{
    size_t total = 0;
    for (size_t i = 0; i < count; i++)
        if (!leases[i].waiting)
            total += leases[i].device_count;
    *claim_count = 0;
    *claims = calloc(total ? total : 1, sizeof **claims);
    if (!*claims)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
    /* A Slurm job's own GPUs are not a claim against its own steps. */
    const char *job = getenv("SLURM_JOB_ID");
    char own[72] = "";
    if (job && *job)
        snprintf(own, sizeof own, "slurm-%s", job);
    for (size_t i = 0; i < count; i++) {
        const gk_lease *lease = &leases[i];
        if (lease->waiting || runs_under(lease, own))
            continue;
        for (size_t d = 0; d < lease->device_count; d++) {
            gk_claim *claim = &(*claims)[(*claim_count)++];
            snprintf(claim->uuid, sizeof claim->uuid, "%s", lease->uuids[d]);
            claim->share = lease->share;
            claim->reserved = lease->reserved;
            claim->held = lease->share && lease->reserved
                              ? held_by_job(snapshot, lease->uuids[d], lease->pid)
                              : 0;
            claim->pid = lease->pid;
            snprintf(claim->user, sizeof claim->user, "%s", lease->user);
            if (lease->slurm)
                snprintf(claim->holder, sizeof claim->holder, "Slurm job %s (%s)",
                         lease->name + 6, lease->user);
            else
                snprintf(claim->holder, sizeof claim->holder, "pid %" PRIu32 " (%s)",
                         lease->pid, lease->user);
        }
    }
    return GK_OK;
}
