/* `gpukit leases`: the GPUs reserved by running jobs, and the jobs waiting in
 * line for GPUs. Stale reservations (their job is gone) are not shown. */
#include "cli/cli.h"

#include "core/strings.h"
#include "core/units.h"
#include "select/json.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpukit leases [--json]\n"
            "\n"
            "List the live GPU reservations made by 'gpukit run' (GPU, pid, user, since\n"
            "when, reserved memory, command) and the jobs waiting in line (--wait).\n"
            "Reservations whose job has ended are skipped, and your own are removed.\n"
            "\n"
            "  --json       machine-readable output\n"
            "  -h, --help   show this help\n"
            "\n"
            "Exit status: 0 listed, 2 bad usage, 6 the lease directory stayed locked by\n"
            "another process for 5 s (the message names it), 7 the lease directory is\n"
            "unsafe or unreadable. Environment: GPUKIT_LEASE_DIR (default\n"
            "/tmp/gpukit-leases).\n");
}

/* A leased device's label: "pci:3", or "pci:0:1" for a MIG device, whose
 * position under its GPU only the driver knows (the lease has its UUID);
 * `snapshot` is NULL when no lease holds a MIG device. */
static const char *device_label(char *buf, size_t size, const gk_snapshot *snapshot,
                                unsigned index, const char *uuid)
{
    int mig = -1;
    for (size_t g = 0; snapshot && g < snapshot->gpu_count; g++)
        for (size_t m = 0; m < snapshot->gpus[g].mig_count; m++)
            if (strcmp(snapshot->gpus[g].mig_devices[m].uuid, uuid) == 0)
                mig = (int)snapshot->gpus[g].mig_devices[m].index;
    if (mig < 0 && strncmp(uuid, "MIG-", 4) == 0) {
        /* the driver no longer lists it: its UUID, which --gpus takes */
        snprintf(buf, size, "%.12s", uuid);
        return buf;
    }
    return cli_device_label(buf, size, index, mig);
}

static void print_table(const gk_lease *leases, size_t count)
{
    char since[64], reserved[32], gpus[256], label[32], command[256], request[256];
    size_t holding = 0;
    bool mig = false;
    for (size_t i = 0; i < count; i++) {
        holding += !leases[i].waiting;
        for (size_t d = 0; !leases[i].waiting && d < leases[i].device_count; d++)
            mig |= strncmp(leases[i].uuids[d], "MIG-", 4) == 0;
    }
    /* Only MIG devices need the driver (most tables are read without it). */
    gk_snapshot *snapshot = mig ? cli_take_snapshot(GK_PROBE_NO_CPU) : NULL;
    if (holding == 0)
        printf("No GPU is reserved.\n");
    else
        printf("%-10s %8s %-12s %-19s %-10s %-6s %s\n", "GPU", "PID", "USER", "SINCE",
               "RESERVED", "MODE", "COMMAND");
    for (size_t i = 0; i < count; i++) {
        const gk_lease *lease = &leases[i];
        if (lease->waiting)
            continue;
        size_t used = 0;
        gpus[0] = '\0';
        for (size_t d = 0; d < lease->device_count && used < sizeof gpus; d++)
            used += (size_t)snprintf(gpus + used, sizeof gpus - used, "%s%s", d ? "," : "",
                                     device_label(label, sizeof label, snapshot,
                                                  lease->indices[d], lease->uuids[d]));
        gk_format_local_time(since, sizeof since, &lease->since);
        printf("%-10s %8u %-12s %-19s %-10s %-6s %s\n", gpus, lease->pid, lease->user, since,
               lease->reserved ? gk_format_size(reserved, sizeof reserved, lease->reserved) : "-",
               lease->slurm ? "slurm" : lease->share ? "shared" : "excl",
               gk_printable(command, sizeof command, lease->command));
    }
    gk_snapshot_destroy(snapshot);
    size_t waiting = count - holding;
    if (waiting) {
        printf("\n%zu job(s) waiting, first come first served:\n", waiting);
        size_t place = 0;
        for (size_t i = 0; i < count; i++) {
            if (!leases[i].waiting)
                continue;
            gk_format_local_time(since, sizeof since, &leases[i].since);
            printf("  %zu. pid %u (%s) since %s: %s  [%s]\n", ++place, leases[i].pid,
                   leases[i].user, since, gk_printable(command, sizeof command, leases[i].command),
                   gk_printable(request, sizeof request, leases[i].request));
        }
    }
}

int cmd_leases(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case 'j':
            json = true;
            break;
        case 'h':
            print_usage(stdout);
            return GK_EXIT_OK;
        default:
            return cli_usage_error("leases");
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpukit leases: unexpected argument '%s'\n", argv[optind]);
        return GK_EXIT_USAGE;
    }
    gk_lease_dir *dir = NULL;
    gk_lease *leases = NULL;
    size_t count = 0;
    gk_status status = gk_lease_dir_open(NULL, false, &dir);
    if (status == GK_OK && (status = gk_lease_dir_lock(dir)) == GK_OK) {
        status = gk_lease_list(dir, &leases, &count);
        gk_lease_dir_unlock(dir);
        cli_print_warnings("leases", gk_lease_dir_warnings(dir));
    }
    gk_lease_dir_close(dir);
    if (status != GK_OK) {
        fprintf(stderr, "gpukit leases: %s\n", gk_last_error());
        return status == GK_ERR_OUT_OF_MEMORY ? GK_EXIT_FAILURE
               : status == GK_ERR_TIMEOUT     ? GK_EXIT_TIMEOUT
                                              : GK_EXIT_LEASES;
    }
    int code = GK_EXIT_OK;
    if (json) {
        json_t *list = json_array();
        for (size_t i = 0; i < count; i++)
            json_array_append_new(list, gk_json_lease(&leases[i]));
        if (!cli_print_json(list))
            code = GK_EXIT_FAILURE;
    } else {
        print_table(leases, count);
    }
    free(leases);
    return fflush(stdout) == 0 ? code : GK_EXIT_FAILURE;
}
