/* The lease directory: finding it, refusing it when another user could
 * tamper with it, and the machine-wide lock (an flock on the directory
 * itself, which nobody can delete or replace while it is in use; anyone who
 * can read the directory can also lock it, so nobody waits for it without a
 * limit they chose). */
#include "select/lease_dir.h"

#include "core/error.h"
#include "core/strings.h"
#include "core/users.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define GK_LEASE_DEFAULT_DIR "/tmp/gpukit-leases"

uint64_t gk_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

uint64_t gk_wall_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

void gk_lease_dir_warn(gk_lease_dir *dir, const char *fmt, ...)
{
    char raw[512], line[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(raw, sizeof raw, fmt, args);
    va_end(args);
    /* the names of files anyone can plant in the directory: printable */
    gk_printable(line, sizeof line, raw);
    if (strstr(dir->warnings, line))
        return;
    size_t used = strlen(dir->warnings);
    snprintf(dir->warnings + used, sizeof dir->warnings - used, "%s\n", line);
}

/* Checks an opened directory; the message says what is wrong and the fix. */
static gk_status check_directory(const char *path, const struct stat *st)
{
    static const char fix[] = "an admin can create a safe one with 'sudo install -d -m 1777 -o "
                              "root -g root %s', or set GPUKIT_LEASE_DIR to a directory of "
                              "your own";
    char message[256], owner[64];
    if (!S_ISDIR(st->st_mode))
        return gk_fail(GK_ERR_UNSAFE, "the lease directory %s is not a directory", path);
    if (st->st_uid != 0 && st->st_uid != geteuid()) {
        gk_user_name(st->st_uid, owner, sizeof owner);
        snprintf(message, sizeof message, fix, path);
        return gk_fail(GK_ERR_UNSAFE,
                       "refusing the lease directory %s: it belongs to %s, who could delete "
                       "other users' reservations; %s", path, owner, message);
    }
    if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX)) {
        return gk_fail(GK_ERR_UNSAFE,
                       "refusing the lease directory %s: others may write to it but it lacks "
                       "the sticky bit, so any user could delete reservations; fix: chmod +t %s",
                       path, path);
    }
    return GK_OK;
}

static gk_status create_directory(const char *path)
{
    /* Created private first, then opened without following links and made
     * shared, so nobody can swap something in between. */
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
        int err = errno;
        return gk_fail(err == EACCES ? GK_ERR_PERMISSION : GK_ERR_IO,
                       "cannot create the lease directory %s: %s; create it with 'install -d "
                       "-m 1777 %s' or set GPUKIT_LEASE_DIR to a directory you can write",
                       path, strerror(err), path);
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return GK_OK; /* the checks on open report what is there */
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 07777) == 0700)
        fchmod(fd, 01777);
    close(fd);
    return GK_OK;
}

gk_status gk_lease_dir_open(const char *path, bool create, gk_lease_dir **out)
{
    if (!path)
        path = getenv("GPUKIT_LEASE_DIR");
    if (!path || !*path)
        path = GK_LEASE_DEFAULT_DIR;
    gk_lease_dir *dir = calloc(1, sizeof *dir);
    if (!dir)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
    dir->fd = -1;
    /* "link/" and "link/." would make lstat and O_NOFOLLOW look through a
     * symbolic link: the last component must name the directory itself. A
     * local copy, since messages use it after dir is freed. */
    char clean[sizeof dir->path];
    snprintf(clean, sizeof clean, "%s", path);
    size_t length = strlen(clean);
    while (length > 1 && clean[length - 1] == '/')
        clean[--length] = '\0';
    const char *last = strrchr(clean, '/');
    last = last ? last + 1 : clean;
    if (strcmp(last, ".") == 0 || strcmp(last, "..") == 0) {
        free(dir);
        return gk_fail(GK_ERR_UNSAFE, "refusing the lease directory %s: give its path without "
                       "a final '.' or '..'", clean);
    }
    path = clean;
    snprintf(dir->path, sizeof dir->path, "%s", clean);

    struct stat before, after;
    if (lstat(path, &before) != 0 && errno == ENOENT) {
        if (!create) {
            *out = dir; /* nothing leased yet */
            return GK_OK;
        }
        gk_status status = create_directory(path);
        if (status != GK_OK) {
            free(dir);
            return status;
        }
    }
    if (lstat(path, &before) != 0) {
        int err = errno;
        free(dir);
        return gk_fail(err == EACCES ? GK_ERR_PERMISSION : GK_ERR_IO,
                       "cannot use the lease directory %s: %s", path, strerror(err));
    }
    if (S_ISLNK(before.st_mode)) {
        free(dir);
        return gk_fail(GK_ERR_UNSAFE,
                       "refusing the lease directory %s: it is a symbolic link, which another "
                       "user could point anywhere; remove it (rm %s) or set GPUKIT_LEASE_DIR "
                       "to a real directory", path, path);
    }
    dir->fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir->fd < 0) {
        int err = errno;
        free(dir);
        if (err == ENOTDIR)
            return gk_fail(GK_ERR_UNSAFE, "the lease directory %s is not a directory; remove "
                           "it or set GPUKIT_LEASE_DIR", path);
        return gk_fail(err == EACCES ? GK_ERR_PERMISSION : GK_ERR_IO,
                       "cannot open the lease directory %s: %s; it must be readable by every "
                       "user (chmod 1777 %s)", path, strerror(err), path);
    }
    gk_status status = GK_OK;
    if (fstat(dir->fd, &after) != 0 || after.st_dev != before.st_dev ||
        after.st_ino != before.st_ino)
        status = gk_fail(GK_ERR_UNSAFE, "the lease directory %s changed while it was opened; "
                         "try again", path);
    else
        status = check_directory(path, &after);
    if (status != GK_OK) {
        gk_lease_dir_close(dir);
        return status;
    }
    *out = dir;
    return GK_OK;
}

void gk_lease_dir_close(gk_lease_dir *dir)
{
    if (!dir)
        return;
    if (dir->fd >= 0)
        close(dir->fd); /* also drops the lock if it is held */
    free(dir);
}

const char *gk_lease_dir_path(const gk_lease_dir *dir)
{
    return dir->path;
}

const char *gk_lease_dir_warnings(const gk_lease_dir *dir)
{
    return dir->warnings;
}

/* Who holds the directory's lock, for people. */
static void describe_holders(const gk_lease_dir *dir, char *holders, size_t size)
{
    struct stat st;
    if (fstat(dir->fd, &st) != 0 || gk_lock_holders(&st, holders, size) == 0)
        snprintf(holders, size, "a process that /proc/locks does not show");
}

/* Why the lock could not be had in time, naming who holds it and the fix. */
static gk_status lock_timeout(const gk_lease_dir *dir)
{
    char holders[1024];
    describe_holders(dir, holders, sizeof holders);
    return gk_fail(GK_ERR_TIMEOUT,
                   "the lease directory %s stayed locked for %.1f s by %s; gpukit holds this "
                   "lock for milliseconds, so that process is stuck or blocks others on "
                   "purpose: kill it or ask its owner to (an admin can kill it, or give users "
                   "another lease directory with GPUKIT_LEASE_DIR); nothing was reserved",
                   dir->path, (double)(gk_now_ns() - dir->lock_wanted_ns) / 1e9, holders);
}

gk_status gk_lease_dir_lock_until(gk_lease_dir *dir, const gk_lock_wait *wait)
{
    dir->lock_wanted_ns = gk_now_ns();
    /* One attempt first: the lock is normally free, and then this costs a
     * single system call. After that, attempts with growing pauses rather
     * than a blocking flock, which nothing but a signal could end: anyone
     * who can read the directory can lock it, so a wait must be able to give
     * up. */
    uint64_t pause_ns = 1000 * 1000;
    bool reported = false;
    while (dir->fd >= 0 && flock(dir->fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR)
            continue;
        if (errno != EWOULDBLOCK)
            return gk_fail(GK_ERR_IO, "cannot lock the lease directory %s: %s", dir->path,
                           strerror(errno));
        const uint64_t now = gk_now_ns();
        if (wait->deadline_ns && now >= wait->deadline_ns)
            return lock_timeout(dir);
        if (wait->cancelled && wait->cancelled(wait->context))
            return gk_fail(GK_ERR_CANCELLED, "stopped waiting for the lease directory's lock");
        if (!reported && wait->progress && now - dir->lock_wanted_ns >= 1000000000ull) {
            /* A wait with a long (or no) limit says who it waits for. */
            char holders[1024], message[1400];
            describe_holders(dir, holders, sizeof holders);
            snprintf(message, sizeof message, "waiting for the lease directory's lock, held "
                     "for over a second by %s (gpukit holds it for milliseconds)", holders);
            wait->progress(message, wait->context);
            reported = true;
        }
        uint64_t sleep_ns = pause_ns;
        if (wait->deadline_ns && wait->deadline_ns - now < sleep_ns)
            sleep_ns = wait->deadline_ns - now;
        const struct timespec pause = {0, (long)sleep_ns};
        nanosleep(&pause, NULL);
        if (pause_ns < 8 * 1000 * 1000)
            pause_ns *= 2;
    }
    dir->locked = true;
    dir->lock_taken_ns = gk_now_ns();
    return GK_OK;
}

gk_status gk_lease_dir_lock(gk_lease_dir *dir)
{
    const gk_lock_wait wait = {
        .deadline_ns = gk_now_ns() + (uint64_t)(GK_LEASE_LOCK_PATIENCE * 1e9)};
    return gk_lease_dir_lock_until(dir, &wait);
}

void gk_lease_dir_unlock(gk_lease_dir *dir)
{
    if (!dir->locked)
        return;
    if (dir->fd >= 0)
        flock(dir->fd, LOCK_UN);
    dir->locked = false;
    dir->lock_released_ns = gk_now_ns();
}

void gk_lease_dir_lock_times(const gk_lease_dir *dir, double *waited, double *held)
{
    *waited = (double)(dir->lock_taken_ns - dir->lock_wanted_ns) / 1e9;
    *held = dir->lock_released_ns >= dir->lock_taken_ns
                ? (double)(dir->lock_released_ns - dir->lock_taken_ns) / 1e9
                : 0;
}
