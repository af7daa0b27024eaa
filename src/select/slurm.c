/* The GPUs Slurm gave to jobs on this node (select/slurm.h). */
#define _GNU_SOURCE /* O_NOFOLLOW, dirfd */
#include "select/slurm.h"

#include "core/error.h"
#include "core/files.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *gk_slurm_dir(const char *given)
{
    if (given && *given)
        return given;
    const char *variable = getenv("GPUKIT_SLURM_DIR");
    return variable && *variable ? variable : GK_SLURM_DEFAULT_DIR;
}

static bool valid_id(const char *id)
{
    if (!*id || strlen(id) > 32)
        return false;
    for (const char *c = id; *c; c++)
        if (!isdigit((unsigned char)*c))
            return false;
    return true;
}

/* The directory, created (root's, world-readable), and its lock taken. */
static gk_status open_locked(const char *dir, bool create, int *lock_fd)
{
    *lock_fd = -1;
    if (create && gk_mkdir_parents(dir, 0755) != GK_OK)
        return gk_fail(GK_ERR_IO, "cannot create the Slurm directory %s: %s", dir,
                       strerror(errno));
    char path[4096];
    snprintf(path, sizeof path, "%s/.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return gk_fail(errno == EACCES ? GK_ERR_PERMISSION : GK_ERR_IO,
                       "cannot use the Slurm directory %s: %s (gpukit slurm prolog and epilog "
                       "run as root, from slurmd)",
                       dir, strerror(errno));
    if (flock(fd, LOCK_EX) != 0) {
        close(fd);
        return gk_fail(GK_ERR_IO, "cannot lock %s: %s", path, strerror(errno));
    }
    *lock_fd = fd;
    return GK_OK;
}

/* Replaces the file `name` of `dir` with `text` (a new file renamed over
 * it, so readers see the old or the new one); removes it when text is "". */
static gk_status replace_file(const char *dir, const char *name, const char *text)
{
    char path[4096], temporary[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!*text) {
        if (unlink(path) != 0 && errno != ENOENT)
            return gk_fail(GK_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
        return GK_OK;
    }
    snprintf(temporary, sizeof temporary, "%s/.%s.new", dir, name);
    int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return gk_fail(GK_ERR_IO, "cannot write %s: %s", temporary, strerror(errno));
    size_t length = strlen(text);
    bool written = write(fd, text, length) == (ssize_t)length;
    if (close(fd) != 0 || !written || rename(temporary, path) != 0) {
        unlink(temporary);
        return gk_fail(GK_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    }
    return GK_OK;
}

/* A GPU file's job ids, without `id` (and, with `add`, with it at the end). */
static void edit_job_list(const char *dir, unsigned index, const char *id, bool add, char *out,
                          size_t size)
{
    char path[4096];
    static char text[65536];
    text[0] = '\0';
    snprintf(path, sizeof path, "%s/%u", dir, index);
    FILE *in = fopen(path, "re");
    if (in) {
        size_t n = fread(text, 1, sizeof text - 1, in);
        text[n] = '\0';
        /* a list longer than this holds stale ids: the whole lines are kept */
        char *last = strrchr(text, '\n');
        if (n == sizeof text - 1 && last)
            last[1] = '\0';
        fclose(in);
    }
    size_t used = 0;
    out[0] = '\0';
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (strcmp(line, id) != 0 && *line && used + strlen(line) + 2 < size)
            used += (size_t)snprintf(out + used, size - used, "%s\n", line);
    if (add && used + strlen(id) + 2 < size)
        snprintf(out + used, size - used, "%s\n", id);
}

static const char *uuid_of(const gk_snapshot *snapshot, unsigned index)
{
    for (size_t g = 0; snapshot && g < snapshot->gpu_count; g++)
        if (snapshot->gpus[g].index == index)
            return snapshot->gpus[g].uuid;
    return "";
}

gk_status gk_slurm_record(const char *dir, const char *id, uint32_t uid, const char *user,
                          const unsigned *indices, size_t count, const gk_snapshot *snapshot)
{
    if (!valid_id(id))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "'%s' is not a Slurm job id (SLURM_JOB_ID)", id);
    int lock;
    gk_status status = open_locked(dir, true, &lock);
    if (status != GK_OK)
        return status;
    /* The job's record: who, which GPUs (index and UUID), since when. */
    char record[8192], name[64];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    size_t used = (size_t)snprintf(record, sizeof record,
                                   "user=%s\nuid=%" PRIu32 "\nsince=%lld\n", user, uid,
                                   (long long)now.tv_sec);
    for (size_t i = 0; i < count && used < sizeof record; i++)
        used += (size_t)snprintf(record + used, sizeof record - used, "gpu=%u %s\n", indices[i],
                                 uuid_of(snapshot, indices[i]));
    snprintf(name, sizeof name, ".job-%s", id);
    status = replace_file(dir, name, record);
    for (size_t i = 0; i < count && status == GK_OK; i++) {
        static char list[65536];
        char file[16];
        edit_job_list(dir, indices[i], id, true, list, sizeof list);
        snprintf(file, sizeof file, "%u", indices[i]);
        status = replace_file(dir, file, list);
    }
    close(lock);
    return status;
}

gk_status gk_slurm_forget(const char *dir, const char *id)
{
    if (!valid_id(id))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "'%s' is not a Slurm job id (SLURM_JOB_ID)", id);
    struct stat st;
    if (stat(dir, &st) != 0 && errno == ENOENT)
        return GK_OK;
    int lock;
    gk_status status = open_locked(dir, false, &lock);
    if (status != GK_OK)
        return status;
    /* Every GPU file: the record may be gone or wrong, the files are what
     * DCGM-exporter reads. */
    DIR *stream = opendir(dir);
    struct dirent *entry;
    while (status == GK_OK && stream && (entry = readdir(stream))) {
        char *end;
        unsigned long index = strtoul(entry->d_name, &end, 10);
        if (!isdigit((unsigned char)entry->d_name[0]) || *end)
            continue;
        static char list[65536];
        edit_job_list(dir, (unsigned)index, id, false, list, sizeof list);
        status = replace_file(dir, entry->d_name, list);
    }
    if (stream)
        closedir(stream);
    char name[64];
    snprintf(name, sizeof name, ".job-%s", id);
    if (status == GK_OK)
        status = replace_file(dir, name, "");
    close(lock);
    return status;
}

/* Reads one job record into a lease; false when it is not one. */
static bool read_record(const char *dir, const char *name, gk_lease *lease)
{
    char path[4096], text[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return false;
    text[n] = '\0';
    memset(lease, 0, sizeof *lease);
    lease->slurm = true;
    const char *id = name + 5;
    snprintf(lease->name, sizeof lease->name, "slurm-%s", id);
    snprintf(lease->command, sizeof lease->command, "Slurm job %s", id);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned index;
        char uuid[96];
        long long since;
        if (strncmp(line, "user=", 5) == 0)
            snprintf(lease->user, sizeof lease->user, "%s", line + 5);
        else if (sscanf(line, "uid=%" SCNu32, &lease->uid) == 1)
            continue;
        else if (sscanf(line, "since=%lld", &since) == 1)
            lease->since.tv_sec = (time_t)since;
        else if (lease->device_count < GK_LEASE_MAX_DEVICES &&
                 sscanf(line, "gpu=%u %95s", &index, uuid) >= 1) {
            lease->indices[lease->device_count] = index;
            if (sscanf(line, "gpu=%u %95s", &index, uuid) == 2)
                snprintf(lease->uuids[lease->device_count], sizeof lease->uuids[0], "%s", uuid);
            lease->device_count++;
        }
    }
    return lease->device_count > 0;
}

gk_status gk_slurm_append_leases(const char *dir, gk_lease **leases, size_t *count)
{
    DIR *stream = opendir(dir);
    if (!stream)
        return GK_OK; /* no Slurm here, or its directory is not readable */
    struct dirent *entry;
    gk_status status = GK_OK;
    while ((entry = readdir(stream))) {
        if (strncmp(entry->d_name, ".job-", 5) != 0 || !valid_id(entry->d_name + 5))
            continue;
        gk_lease lease;
        if (!read_record(dir, entry->d_name, &lease))
            continue;
        gk_lease *bigger = realloc(*leases, (*count + 1) * sizeof **leases);
        if (!bigger) {
            status = gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
            break;
        }
        *leases = bigger;
        (*leases)[(*count)++] = lease;
    }
    closedir(stream);
    return status;
}
