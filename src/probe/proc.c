/* Who runs a GPU process and what it is, from /proc. NVML only gives pids. */
#include "probe/backend.h"

#include "core/users.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

void gk_proc_parse_status(const char *status, gk_process *process)
{
    const char *rss = strstr(status, "\nVmRSS:");
    if (rss)
        process->host_memory = gk_known(strtoull(rss + 7, NULL, 10) * 1024);
    const char *line = strstr(status, "\nUid:");
    if (!line)
        return;
    uid_t uid = (uid_t)strtoul(line + 5, NULL, 10); /* the real uid comes first */
    process->uid = gk_known(uid);
    gk_user_name(uid, process->user, sizeof process->user);
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
    gk_proc_parse_status(status, process);
}

void gk_proc_parse_cmdline(gk_process *process, size_t length)
{
    /* Keep whole arguments only, and end with a NUL either way. */
    if (process->cmdline[length - 1] != '\0') {
        process->cmdline[length] = '\0';
        length++;
    }
    process->cmdline_len = length;
    const char *program = process->cmdline;
    const char *slash = strrchr(program, '/');
    snprintf(process->command, sizeof process->command, "%s", slash ? slash + 1 : program);
}

static void describe_command(gk_process *process)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/cmdline", process->pid);
    ssize_t n = read_small_file(path, process->cmdline, sizeof process->cmdline - 1);
    if (n > 0) {
        gk_proc_parse_cmdline(process, (size_t)n);
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

void gk_proc_parse_stat(const char *stat, double uptime, long ticks_per_second,
                        gk_process *process)
{
    /* The command name (field 2) is in parentheses and may hold spaces. */
    const char *after_name = strrchr(stat, ')');
    unsigned long long utime, stime, start_ticks;
    if (!after_name || sscanf(after_name + 1,
                              " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d "
                              "%*d %*d %*d %*d %llu",
                              &utime, &stime, &start_ticks) != 3)
        return;
    if (ticks_per_second <= 0)
        return;
    /* Both clocks tick in hundredths: a process started just now can appear
     * to have lived for no time at all. */
    double alive = uptime - (double)start_ticks / (double)ticks_per_second;
    if (alive < 0.01)
        alive = 0.01;
    double busy = (double)(utime + stime) / (double)ticks_per_second;
    double tenths = busy / alive * 1000.0 + 0.5;
    /* (The same bound as below: a forged stat may claim any tick count.) */
    if (busy * 1000.0 < 18446744073709551616.0 && alive * 1000.0 < 18446744073709551616.0) {
        process->cpu_time = gk_known((uint64_t)(busy * 1000.0 + 0.5));
        process->running_time = gk_known((uint64_t)(alive * 1000.0 + 0.5));
    }
    /* A damaged or forged stat can claim more than 2^64 tenths, which no
     * conversion to an integer may be given. */
    if (tenths < 18446744073709551616.0)
        process->cpu_percent = gk_known((uint64_t)tenths);
}

/* CPU use since the process started, from /proc/PID/stat and the time
 * since boot (the clock of /proc/uptime, without reading the file): a
 * single snapshot has no interval to measure over. False when the process
 * cannot be read at all (gone, or in another PID namespace). */
static bool describe_cpu_use(gk_process *process)
{
    char path[64], stat[1024];
    snprintf(path, sizeof path, "/proc/%u/stat", process->pid);
    ssize_t n = read_small_file(path, stat, sizeof stat - 1);
    struct timespec now;
    if (n <= 0)
        return false;
    if (clock_gettime(CLOCK_BOOTTIME, &now) != 0)
        return true;
    stat[n] = '\0';
    gk_proc_parse_stat(stat, (double)now.tv_sec + (double)now.tv_nsec * 1e-9,
                       sysconf(_SC_CLK_TCK), process);
    return true;
}

void gk_process_describe(gk_process *process)
{
    /* A pid that does not exist here (ended, or from another PID namespace)
     * is found in a tenth of the time a failed open takes; one that cannot
     * be read at all costs one open, not four. */
    if (kill((pid_t)process->pid, 0) != 0 && errno == ESRCH)
        return;
    if (!describe_cpu_use(process))
        return;
    describe_status(process);
    describe_command(process);
}

const char *gk_process_command_line(const gk_process *process, char *buf, size_t size)
{
    if (process->cmdline_len == 0) {
        snprintf(buf, size, "%s", process->command);
        return buf;
    }
    size_t used = 0;
    buf[0] = '\0';
    for (size_t at = 0; at < process->cmdline_len && used + 1 < size;
         at += strlen(process->cmdline + at) + 1)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", at ? " " : "",
                                 process->cmdline + at);
    return buf;
}
