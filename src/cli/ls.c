/* `gpukit ls`: every GPU with its state, as a table, JSON or CSV. */
#include "cli/cli.h"

#include "core/strings.h"

#include <getopt.h>
#include <string.h>

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpukit ls [--json | --csv] [--no-processes]\n"
            "\n"
            "List every NVIDIA GPU with its live state and processes.\n"
            "\n"
            "  --json          JSON: a superset of `gpustat --json`, in its units (GPU memory in\n"
            "                  MiB, power in W, a process's cpu_memory_usage in bytes;\n"
            "                  unavailable values are null)\n"
            "  --csv           CSV with a header row, one row per GPU (unavailable values empty)\n"
            "  --no-processes  do not list processes (faster)\n"
            "  -h, --help      show this help\n"
            "\n"
            "Exit status: 0 ok, 2 bad usage, 3 no NVIDIA GPU, 4 driver problem or a faulty GPU.\n");
}

/* Writes a CSV cell, quoted when it holds a separator, quote or newline. */
static void csv_cell(const char *text, bool last)
{
    if (strpbrk(text, ",\"\n\r")) {
        putchar('"');
        for (const char *c = text; *c; c++) {
            if (*c == '"')
                putchar('"');
            putchar(*c);
        }
        putchar('"');
    } else {
        fputs(text, stdout);
    }
    putchar(last ? '\n' : ',');
}

static void csv_number(gk_field field, uint64_t divisor, bool last)
{
    char text[32] = "";
    if (field.known)
        cli_field(text, sizeof text, field, divisor);
    csv_cell(text, last);
}

static void print_csv(const gk_snapshot *snapshot, const gk_cuda_view *view, bool processes)
{
    static const char *const header[] = {
        "index", "uuid", "name", "pci.bus_id", "state", "memory.total", "memory.used",
        "memory.free", "utilization.gpu", "utilization.memory", "temperature.gpu", "fan.speed",
        "power.draw", "enforced.power.limit", "clocks.sm", "clocks.mem", "clocks.max.sm",
        "clocks.max.mem", "compute_capability", "persistence_mode", "mig.mode", "cuda_index",
    };
    size_t columns = sizeof header / sizeof header[0];
    for (size_t i = 0; i < columns; i++)
        csv_cell(header[i], i + 1 == columns && !processes);
    if (processes)
        csv_cell("processes", true);
    for (size_t i = 0; i < snapshot->gpu_count; i++) {
        const gk_gpu *g = &snapshot->gpus[i];
        char text[32];
        snprintf(text, sizeof text, "%u", g->index);
        csv_cell(text, false);
        csv_cell(g->uuid, false);
        csv_cell(g->name, false);
        csv_cell(g->pci_bus_id, false);
        csv_cell(gk_gpu_state_name(g->state), false);
        csv_number(g->memory_total, CLI_MIB, false);
        csv_number(g->memory_used, CLI_MIB, false);
        csv_number(g->memory_free, CLI_MIB, false);
        csv_number(g->utilization_gpu, 1, false);
        csv_number(g->utilization_memory, 1, false);
        csv_number(g->temperature, 1, false);
        csv_number(g->fan_speed, 1, false);
        csv_number(g->power_draw, 1000, false);
        csv_number(g->power_limit, 1000, false);
        csv_number(g->clock_sm, 1, false);
        csv_number(g->clock_memory, 1, false);
        csv_number(g->clock_max_sm, 1, false);
        csv_number(g->clock_max_memory, 1, false);
        text[0] = '\0';
        if (g->compute_major.known)
            snprintf(text, sizeof text, "%u.%u", (unsigned)g->compute_major.value,
                     (unsigned)g->compute_minor.value);
        csv_cell(text, false);
        csv_number(g->persistence_mode, 1, false);
        csv_number(g->mig_mode, 1, false);
        int cuda = gk_cuda_view_index(view, i);
        text[0] = '\0';
        if (cuda >= 0)
            snprintf(text, sizeof text, "%d", cuda);
        csv_cell(text, !processes);
        if (processes) {
            gk_field count = {g->process_count, g->processes_known};
            csv_number(count, 1, true);
        }
    }
}

static void print_table(const gk_snapshot *snapshot, const gk_cuda_view *view, bool processes)
{
    if (snapshot->gpu_count == 0) {
        char cpu[256];
        cli_describe_cpu(cpu, sizeof cpu, &snapshot->cpu);
        printf("No NVIDIA GPU: %s\nWork will run on the CPU: %s\n", snapshot->diagnosis, cpu);
        return;
    }
    printf("%-4s %-28s %-17s %-17s %5s %5s %4s %11s %6s %4s %s\n", "GPU", "NAME", "BUS ID",
           "MEMORY MiB", "UTIL%", "TEMP", "FAN%", "POWER W", "SM MHz", "CC", "CUDA");
    for (size_t i = 0; i < snapshot->gpu_count; i++) {
        const gk_gpu *g = &snapshot->gpus[i];
        if (g->state != GK_GPU_OK) {
            printf("%-4u %-28.28s %-17s %s: %s\n", g->index, g->name[0] ? g->name : "(unknown)",
                   g->pci_bus_id, gk_gpu_state_name(g->state), g->error);
            continue;
        }
        char used[24], total[24], memory[48], util[16], temp[16], fan[16], draw[16], limit[16],
            power[40], sm[16], cc[16] = "N/A", cuda[16] = "-";
        snprintf(memory, sizeof memory, "%s/%s", cli_field(used, sizeof used, g->memory_used, CLI_MIB),
                 cli_field(total, sizeof total, g->memory_total, CLI_MIB));
        snprintf(power, sizeof power, "%s/%s", cli_field(draw, sizeof draw, g->power_draw, 1000),
                 cli_field(limit, sizeof limit, g->power_limit, 1000));
        if (g->compute_major.known)
            snprintf(cc, sizeof cc, "%u.%u", (unsigned)g->compute_major.value,
                     (unsigned)g->compute_minor.value);
        int index = gk_cuda_view_index(view, i);
        if (index >= 0)
            snprintf(cuda, sizeof cuda, "cuda:%d", index);
        printf("%-4u %-28.28s %-17s %-17s %5s %5s %4s %11s %6s %4s %s\n", g->index, g->name,
               g->pci_bus_id, memory, cli_field(util, sizeof util, g->utilization_gpu, 1),
               cli_field(temp, sizeof temp, g->temperature, 1),
               cli_field(fan, sizeof fan, g->fan_speed, 1), power,
               cli_field(sm, sizeof sm, g->clock_sm, 1), cc, cuda);
        for (size_t m = 0; m < g->mig_count; m++) {
            const gk_mig_device *mig = &g->mig_devices[m];
            char mig_used[24], mig_total[24];
            printf("     MIG %-24.24s %-17s %s/%s\n", mig->name, mig->uuid,
                   cli_field(mig_used, sizeof mig_used, mig->memory_used, CLI_MIB),
                   cli_field(mig_total, sizeof mig_total, mig->memory_total, CLI_MIB));
        }
        if (!processes)
            continue;
        for (size_t p = 0; p < g->process_count; p++) {
            const gk_process *proc = &g->processes[p];
            char mem[24];
            printf("     pid %-8u %-12s %8s MiB  ", proc->pid, proc->user[0] ? proc->user : "?",
                   cli_field(mem, sizeof mem, proc->gpu_memory, CLI_MIB));
            char command[sizeof proc->cmdline + 8], shown[sizeof command];
            gk_process_command_line(proc, command, sizeof command);
            gk_printable(shown, sizeof shown, command);
            printf("%s\n", shown[0] ? shown : "?");
        }
    }
    if (snapshot->diagnosis[0])
        printf("note: %s\n", snapshot->diagnosis);
}

int cmd_ls(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'c'},
        {"no-processes", no_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char format = 't';
    bool processes = true;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case 'j':
        case 'c':
            if (format != 't' && format != opt) {
                fprintf(stderr, "gpukit ls: --json and --csv cannot be used together\n");
                return GK_EXIT_USAGE;
            }
            format = (char)opt;
            break;
        case 'P':
            processes = false;
            break;
        case 'h':
            print_usage(stdout);
            return GK_EXIT_OK;
        default:
            return cli_usage_error("ls");
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpukit ls: unexpected argument '%s'\n", argv[optind]);
        return GK_EXIT_USAGE;
    }
    gk_snapshot *snapshot = cli_take_snapshot(processes ? GK_PROBE_PROCESSES : 0);
    if (!snapshot)
        return GK_EXIT_FAILURE;
    gk_cuda_view view;
    gk_cuda_view_from_env(snapshot, &view);
    int code = cli_exit_code(snapshot);
    if (format == 'j') {
        if (!cli_print_json(gk_json_snapshot(snapshot, &view, processes)))
            code = GK_EXIT_FAILURE;
    } else if (format == 'c') {
        print_csv(snapshot, &view, processes);
    } else {
        print_table(snapshot, &view, processes);
    }
    if (snapshot->gpu_count == 0 && format != 't')
        fprintf(stderr, "gpukit: no NVIDIA GPU: %s\n", snapshot->diagnosis);
    gk_snapshot_destroy(snapshot);
    return code; /* main() says if the output could not be written */
}
