/* Leases, and what each GPU process is to gpukit (monitor/processes.h). */
#include "monitor/processes.h"

#include "core/error.h"
#include "select/lease.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

gk_status gk_monitor_read_leases(const char *lease_dir, gk_sample *sample)
{
    gk_lease_dir *dir = NULL;
    gk_status status = gk_lease_dir_open(lease_dir, false, &dir);
    if (status == GK_OK)
        status = gk_lease_list(dir, &sample->leases, &sample->lease_count);
    gk_lease_dir_close(dir);
    if (status == GK_ERR_OUT_OF_MEMORY)
        return status;
    if (status != GK_OK)
        snprintf(sample->lease_problem, sizeof sample->lease_problem, "%s", gk_last_error());
    return GK_OK;
}

/* The next argument of a NUL-separated command line, or NULL at its end. */
static const char *next_argument(const char *cmdline, size_t length, const char *argument)
{
    const char *end = cmdline + length;
    const char *next = argument ? argument + strnlen(argument, (size_t)(end - argument)) + 1
                                : cmdline;
    return next < end ? next : NULL;
}

bool gk_jupyter_kernel_id(const char *cmdline, size_t length, char *id, size_t size)
{
    bool kernel = false;
    const char *file = NULL;
    for (const char *arg = next_argument(cmdline, length, NULL); arg;
         arg = next_argument(cmdline, length, arg)) {
        if (strstr(arg, "ipykernel") || strstr(arg, "kernel_launcher"))
            kernel = true;
        if ((strcmp(arg, "-f") == 0 || strcmp(arg, "--f") == 0))
            file = next_argument(cmdline, length, arg);
        else if (strncmp(arg, "-f=", 3) == 0 || strncmp(arg, "--f=", 4) == 0)
            file = strchr(arg, '=') + 1;
    }
    if (!kernel || !file)
        return false;
    /* Jupyter names connection files kernel-<id>.json. */
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    if (strncmp(base, "kernel-", 7) == 0)
        base += 7;
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".json") == 0)
        n -= 5;
    snprintf(id, size, "%.*s", (int)n, base);
    return true;
}

bool gk_environ_value(const char *block, size_t length, const char *name, char *value,
                      size_t size)
{
    size_t name_length = strlen(name);
    for (const char *entry = next_argument(block, length, NULL); entry;
         entry = next_argument(block, length, entry)) {
        if (strncmp(entry, name, name_length) == 0 && entry[name_length] == '=') {
            snprintf(value, size, "%s", entry + name_length + 1);
            return true;
        }
    }
    return false;
}

/* A process's environment, NUL-terminated; readable for one's own
 * processes (and by root), as ps e shows. Returns its length, 0 if none. */
static size_t read_environ(uint32_t pid, char *buffer, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%" PRIu32 "/environ", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t used = 0;
    ssize_t got;
    while (used < size - 1 && (got = read(fd, buffer + used, size - 1 - used)) > 0)
        used += (size_t)got;
    close(fd);
    buffer[used] = '\0';
    return used;
}

/* What a process's environment says: the Jupyter kernel it is (with its
 * kernelspec's name and notebook), and the Slurm job it runs in. */
static void describe_from_environment(const gk_sample *sample, gk_sample_process *entry)
{
    const gk_process *process = entry->process;
    bool kernel = gk_jupyter_kernel_id(process->cmdline, process->cmdline_len, entry->kernel_id,
                                       sizeof entry->kernel_id);
    bool slurm = false;
    for (size_t l = 0; l < sample->lease_count && entry->lease < 0; l++)
        slurm |= sample->leases[l].slurm;
    if (!kernel && !slurm)
        return;
    static __thread char block[32768];
    size_t length = read_environ(process->pid, block, sizeof block);
    /* GPUKIT_KERNEL: set by the kernelspecs `gpukit kernel install` writes;
     * JPY_SESSION_NAME: set by Jupyter Server 2 to the notebook's path. */
    if (kernel) {
        gk_environ_value(block, length, "GPUKIT_KERNEL", entry->kernel, sizeof entry->kernel);
        gk_environ_value(block, length, "JPY_SESSION_NAME", entry->notebook,
                         sizeof entry->notebook);
    }
    char job[40], name[64];
    if (slurm && gk_environ_value(block, length, "SLURM_JOB_ID", job, sizeof job)) {
        snprintf(name, sizeof name, "slurm-%s", job);
        for (size_t l = 0; l < sample->lease_count; l++)
            if (sample->leases[l].slurm && strcmp(sample->leases[l].name, name) == 0)
                entry->lease = (int)l;
    }
}

/* The holding lease whose job `pid` belongs to, or -1. */
static int lease_of(const gk_sample *sample, uint32_t pid)
{
    uint32_t chain[64];
    size_t n = gk_pid_ancestry(pid, chain, sizeof chain / sizeof chain[0]);
    for (size_t i = 0; i < n; i++)
        for (size_t l = 0; l < sample->lease_count; l++)
            if (!sample->leases[l].waiting && sample->leases[l].pid == chain[i])
                return (int)l;
    return -1;
}

/* CPU use since the previous reading, in tenths of a percent of a core:
 * the growth of the process's CPU time over the growth of its age. The
 * same pid in both readings is the same process only if it grew older. */
static gk_field recent_cpu(const gk_process *now, const gk_sample *previous)
{
    if (!previous || !now->cpu_time.known || !now->running_time.known)
        return (gk_field){0, false};
    for (size_t i = 0; i < previous->process_count; i++) {
        const gk_process *then = previous->processes[i].process;
        if (then->pid != now->pid || !then->cpu_time.known || !then->running_time.known ||
            then->running_time.value >= now->running_time.value ||
            then->cpu_time.value > now->cpu_time.value)
            continue;
        uint64_t busy = now->cpu_time.value - then->cpu_time.value;
        uint64_t alive = now->running_time.value - then->running_time.value;
        return (gk_field){(busy * 1000 + alive / 2) / alive, true};
    }
    return (gk_field){0, false};
}

gk_status gk_monitor_describe_processes(gk_sample *sample, const gk_sample *previous)
{
    const gk_snapshot *snapshot = sample->snapshot;
    size_t total = 0;
    for (size_t g = 0; g < snapshot->gpu_count; g++)
        total += snapshot->gpus[g].process_count;
    if (total == 0)
        return GK_OK;
    sample->processes = calloc(total, sizeof *sample->processes);
    if (!sample->processes)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory describing GPU processes");
    for (size_t g = 0; g < snapshot->gpu_count; g++) {
        const gk_gpu *gpu = &snapshot->gpus[g];
        for (size_t p = 0; p < gpu->process_count; p++) {
            gk_sample_process *entry = &sample->processes[sample->process_count++];
            entry->gpu = g;
            entry->process = &gpu->processes[p];
            entry->lease = lease_of(sample, entry->process->pid);
            entry->cpu_percent = recent_cpu(entry->process, previous);
            describe_from_environment(sample, entry);
        }
    }
    return GK_OK;
}
