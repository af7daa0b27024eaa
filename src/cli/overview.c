/* `gpukit` with no command: the compact view, one line per GPU with its
 * processes (as gpustat shows it), optionally redrawn every few seconds. */
#include "cli/cli.h"

#include "core/strings.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct style {
    const char *reset, *index, *name, *hot, *temp, *util, *memory, *user, *fault, *dim;
} style;

static const style plain = {"", "", "", "", "", "", "", "", "", ""};
static const style colored = {"\033[0m",  "\033[36m", "\033[34m", "\033[1;31m", "\033[31m",
                              "\033[32m", "\033[33m", "\033[90m", "\033[1;31m", "\033[2m"};

static volatile sig_atomic_t interrupted;

static void on_interrupt(int signal_number)
{
    (void)signal_number;
    interrupted = 1;
}

static void print_processes(const gk_gpu *gpu, const style *s)
{
    for (size_t i = 0; i < gpu->process_count; i++) {
        const gk_process *p = &gpu->processes[i];
        char memory[32], command[sizeof p->command];
        cli_field(memory, sizeof memory, p->gpu_memory, CLI_MIB);
        gk_printable(command, sizeof command, p->command);
        /* the unit only after a number: "(N/A)", not "(N/AM)" */
        printf(" %s%s%s:%s/%u(%s%s)", s->user, p->user[0] ? p->user : "?", s->reset,
               command[0] ? command : "?", p->pid, memory, p->gpu_memory.known ? "M" : "");
    }
}

static void print_gpu(const gk_gpu *gpu, int name_width, const style *s, bool processes)
{
    printf("%s[%u]%s %s%-*s%s |", s->index, gpu->index, s->reset, s->name, name_width,
           gpu->name[0] ? gpu->name : "(unknown)", s->reset);
    if (gpu->state != GK_GPU_OK) {
        printf(" %s%s%s: %s\n", s->fault,
               gpu->state == GK_GPU_LOST            ? "LOST"
               : gpu->state == GK_GPU_NO_PERMISSION ? "NO PERMISSION"
                                                    : "ERROR",
               s->reset, gpu->error);
        return;
    }
    char temp[16], util[16], used[24], total[24], power[16], limit[16];
    cli_field(temp, sizeof temp, gpu->temperature, 1);
    cli_field(util, sizeof util, gpu->utilization_gpu, 1);
    cli_field(used, sizeof used, gpu->memory_used, CLI_MIB);
    cli_field(total, sizeof total, gpu->memory_total, CLI_MIB);
    cli_field(power, sizeof power, gpu->power_draw, 1000);
    cli_field(limit, sizeof limit, gpu->power_limit, 1000);
    bool hot = gpu->temperature.known && gpu->temperature.value >= 80;
    /* N/A without a unit, as wide as a temperature with one ("°C" takes two
     * columns, ASCII's "C" one) */
    const char *celsius = cli_celsius();
    int temp_width = gpu->temperature.known ? 3 : strcmp(celsius, "C") == 0 ? 4 : 5;
    printf(" %s%*s%s%s, %s%3s %%%s | %s%5s%s / %5s MB | %4s / %3s W |", hot ? s->hot : s->temp,
           temp_width, temp, gpu->temperature.known ? celsius : "", s->reset, s->util, util,
           s->reset, s->memory, used, s->reset, total, power, limit);
    if (processes)
        print_processes(gpu, s);
    printf("\n");
    for (size_t i = 0; i < gpu->mig_count; i++) {
        const gk_mig_device *m = &gpu->mig_devices[i];
        char mig_used[24], mig_total[24];
        printf("    %sMIG %zu%s %s | %5s / %5s MB\n", s->dim, i, s->reset, m->name,
               cli_field(mig_used, sizeof mig_used, m->memory_used, CLI_MIB),
               cli_field(mig_total, sizeof mig_total, m->memory_total, CLI_MIB));
    }
}

static void print_snapshot(const gk_snapshot *snapshot, const style *s, bool processes)
{
    char when[64], cuda[32];
    struct tm local;
    localtime_r(&snapshot->query_time.tv_sec, &local);
    strftime(when, sizeof when, "%a %b %e %H:%M:%S %Y", &local);
    printf("%s%-20s%s %s", s->dim, snapshot->hostname, s->reset, when);
    if (snapshot->driver_version[0])
        printf("  driver %s", snapshot->driver_version);
    if (gk_cuda_version_string(snapshot->cuda_driver_version, cuda, sizeof cuda)[0])
        printf("  CUDA %s", cuda);
    printf("\n");

    int name_width = 0;
    for (size_t i = 0; i < snapshot->gpu_count; i++) {
        int length = (int)strlen(snapshot->gpus[i].name);
        name_width = length > name_width ? length : name_width;
    }
    for (size_t i = 0; i < snapshot->gpu_count; i++)
        print_gpu(&snapshot->gpus[i], name_width, s, processes);

    if (snapshot->gpu_count == 0) {
        char cpu[256];
        cli_describe_cpu(cpu, sizeof cpu, &snapshot->cpu);
        printf("%sNo NVIDIA GPU%s: %s\n", s->fault, s->reset, snapshot->diagnosis);
        printf("Work will run on the CPU: %s\n", cpu);
    } else if (snapshot->diagnosis[0]) {
        printf("%snote: %s%s\n", s->dim, snapshot->diagnosis, s->reset);
    }
}

static bool parse_interval(const char *text, double *seconds)
{
    char *end;
    errno = 0;
    *seconds = strtod(text, &end);
    return end != text && *end == '\0' && errno == 0 && isfinite(*seconds) && *seconds >= 0.1 &&
           *seconds <= 86400;
}

static void sleep_seconds(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL); /* a signal ends the wait early, which is what we want */
}

int cmd_overview(int argc, char **argv)
{
    static const struct option options[] = {
        {"interval", required_argument, NULL, 'i'},
        {"watch", optional_argument, NULL, 'w'},
        {"no-processes", no_argument, NULL, 'P'},
        {"color", required_argument, NULL, 'c'},
        {NULL, 0, NULL, 0},
    };
    double interval = 0;
    bool processes = true;
    int color = -1;
    int opt;
    while ((opt = getopt_long(argc, argv, "i:", options, NULL)) != -1) {
        switch (opt) {
        case 'i':
        case 'w':
            if (opt == 'w' && !optarg) {
                interval = 1;
            } else if (!parse_interval(optarg, &interval)) {
                fprintf(stderr, "gpukit: --interval needs a number of seconds between 0.1 and "
                                "86400, not '%s'\n", optarg);
                return GK_EXIT_USAGE;
            }
            break;
        case 'P':
            processes = false;
            break;
        case 'c':
            if (!cli_parse_color(optarg, &color)) {
                fprintf(stderr, "gpukit: --color must be auto, always or never, not '%s'\n",
                        optarg);
                return GK_EXIT_USAGE;
            }
            break;
        default:
            return cli_usage_error(NULL);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpukit: unexpected argument '%s'; see 'gpukit --help'\n", argv[optind]);
        return GK_EXIT_USAGE;
    }
    const style *s = cli_use_color(color, stdout) ? &colored : &plain;
    unsigned flags = processes ? GK_PROBE_PROCESSES : 0;

    gk_probe *probe;
    if (gk_probe_open(&probe) != GK_OK) {
        fprintf(stderr, "gpukit: %s\n", gk_last_error());
        return GK_EXIT_FAILURE;
    }
    if (interval > 0) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = on_interrupt;
        sigaction(SIGINT, &action, NULL);
        sigaction(SIGTERM, &action, NULL);
    }
    bool redraw = interval > 0 && cli_use_color(-1, stdout);
    int code = GK_EXIT_OK;
    do {
        gk_snapshot *snapshot;
        if (gk_probe_read(probe, flags, &snapshot) != GK_OK) {
            fprintf(stderr, "gpukit: %s\n", gk_last_error());
            code = GK_EXIT_FAILURE;
            break;
        }
        if (redraw)
            printf("\033[H\033[2J"); /* home and clear: a steady screen, as `watch` gives */
        print_snapshot(snapshot, s, processes);
        code = cli_exit_code(snapshot);
        gk_snapshot_destroy(snapshot);
        if (fflush(stdout) != 0) {
            code = GK_EXIT_FAILURE;
            break;
        }
        if (interval > 0 && !interrupted)
            sleep_seconds(interval);
        if (interval > 0 && !redraw && !interrupted)
            printf("\n");
    } while (interval > 0 && !interrupted);
    gk_probe_close(probe);
    return interrupted ? GK_EXIT_OK : code;
}
