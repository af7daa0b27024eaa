/* The CPU: the device that device-agnostic work falls back to. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "probe/backend.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

void gk_cpu_parse_cpuinfo(FILE *cpuinfo, gk_cpu *cpu)
{
    char line[512];
    while (fgets(line, sizeof line, cpuinfo)) {
        /* x86 says "model name", some ARM kernels only "Hardware". */
        if (strncmp(line, "model name", 10) != 0 && strncmp(line, "Hardware", 8) != 0)
            continue;
        const char *value = strchr(line, ':');
        if (!value)
            continue;
        value++;
        value += strspn(value, " \t");
        snprintf(cpu->model, sizeof cpu->model, "%s", value);
        cpu->model[strcspn(cpu->model, "\n")] = '\0';
        break;
    }
}

static void read_model(gk_cpu *cpu)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (f) {
        gk_cpu_parse_cpuinfo(f, cpu);
        fclose(f);
    }
    if (!cpu->model[0]) {
        struct utsname names;
        if (uname(&names) == 0)
            snprintf(cpu->model, sizeof cpu->model, "%s", names.machine);
    }
}

/* The model never changes while a process runs: read once (the whole of
 * /proc/cpuinfo is the slowest part of a snapshot otherwise). */
static char model_once[sizeof ((gk_cpu *)0)->model];
static pthread_once_t model_read = PTHREAD_ONCE_INIT;

static void read_model_once(void)
{
    gk_cpu cpu = {0};
    read_model(&cpu);
    memcpy(model_once, cpu.model, sizeof model_once);
}

/* "<key> <n> kB" from /proc/meminfo's text, in bytes. */
static gk_field meminfo_value(const char *text, const char *key)
{
    const char *at = strstr(text, key);
    if (!at)
        return (gk_field){0, false};
    char *end;
    unsigned long long kib = strtoull(at + strlen(key), &end, 10);
    return end == at + strlen(key) ? (gk_field){0, false} : gk_known(kib * 1024);
}

void gk_cpu_parse_meminfo(const char *meminfo, gk_cpu *cpu)
{
    cpu->memory_total = meminfo_value(meminfo, "MemTotal:");
    cpu->memory_available = meminfo_value(meminfo, "\nMemAvailable:");
}

/* One read and two searches: the file is read on every snapshot. */
static void read_memory(gk_cpu *cpu)
{
    int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char text[8192];
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return;
    text[n] = '\0';
    gk_cpu_parse_meminfo(text, cpu);
}

void gk_cpu_read(gk_cpu *cpu)
{
    memset(cpu, 0, sizeof *cpu);
    pthread_once(&model_read, read_model_once);
    memcpy(cpu->model, model_once, sizeof cpu->model);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu->logical_cores = online > 0 ? (unsigned)online : 0;
    /* Slurm, containers and taskset restrict the cores a job may use. */
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        cpu->usable_cores = (unsigned)CPU_COUNT(&set);
    else
        cpu->usable_cores = cpu->logical_cores;
    read_memory(cpu);
}
