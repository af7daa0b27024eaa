/* Who runs a GPU process and what it is, from /proc. NVML only gives pids. */
#include "probe/backend.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads a whole small /proc file; returns the byte count or -1. */
static ssize_t read_small_file(const char *path, char *buffer, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t total = 0;
    while (total < size) {
        ssize_t n = read(fd, buffer + total, size - total);
        if (n <= 0)
            break;
        total += (size_t)n;
    }
    close(fd);
    return (ssize_t)total;
}

/* User name and resident memory, from /proc/PID/status. */
static void describe_status(gk_process *process)
{
    char path[64], status[4096];
    snprintf(path, sizeof path, "/proc/%u/status", process->pid);
    ssize_t n = read_small_file(path, status, sizeof status - 1);
    if (n <= 0)
        return;
    status[n] = '\0';
    const char *rss = strstr(status, "\nVmRSS:");
    if (rss)
        process->host_memory = gk_known(strtoull(rss + 7, NULL, 10) * 1024);
    const char *line = strstr(status, "\nUid:");
    if (!line)
        return;
    uid_t uid = (uid_t)strtoul(line + 5, NULL, 10); /* the real uid comes first */
    struct passwd entry, *found = NULL;
    char buffer[1024];
    if (getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found)
        snprintf(process->user, sizeof process->user, "%s", found->pw_name);
    else
        snprintf(process->user, sizeof process->user, "%lu", (unsigned long)uid);
}

static void describe_command(gk_process *process)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/cmdline", process->pid);
    ssize_t n = read_small_file(path, process->cmdline, sizeof process->cmdline - 1);
    if (n > 0) {
        /* Keep whole arguments only, and end with a NUL either way. */
        size_t length = (size_t)n;
        if (process->cmdline[length - 1] != '\0') {
            process->cmdline[length] = '\0';
            length++;
        }
        process->cmdline_len = length;
        const char *program = process->cmdline;
        const char *slash = strrchr(program, '/');
        snprintf(process->command, sizeof process->command, "%s", slash ? slash + 1 : program);
        return;
    }
    /* Kernel threads and zombies have no command line; comm still names them. */
    snprintf(path, sizeof path, "/proc/%u/comm", process->pid);
    n = read_small_file(path, process->command, sizeof process->command - 1);
    if (n > 0) {
        process->command[n] = '\0';
        process->command[strcspn(process->command, "\n")] = '\0';
    }
}

void gk_process_describe(gk_process *process)
{
    describe_status(process);
    describe_command(process);
}
