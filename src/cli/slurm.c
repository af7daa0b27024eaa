/* `gpukit slurm`: for the admins of Slurm nodes. `gres` writes this node's
 * gres.conf from NVML; `prolog` and `epilog`, run by slurmd as the node's
 * Prolog and Epilog, record which job holds which GPU (select/slurm.h), so
 * gpukit's own picking, `gpukit leases`, `top` and `serve` see Slurm jobs
 * beside gpukit's, and DCGM-exporter can label its metrics by job. */
#define _GNU_SOURCE /* open_memstream */
#include "cli/cli.h"

#include "select/slurm.h"

#include <gpukit/visible.h>

#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpukit slurm gres [--node=NAME]\n"
            "       gpukit slurm prolog [--dir=DIR]\n"
            "       gpukit slurm epilog [--dir=DIR]\n"
            "\n"
            "gres    print a gres.conf for this node from NVML: one line per GPU (Type from\n"
            "        its model, as Slurm's AutoDetect=nvml names it; File its /dev/nvidiaN),\n"
            "        one per MIG instance (MultipleFiles with its capability devices), and\n"
            "        the Gres= of slurm.conf's NodeName line in a comment\n"
            "prolog  record the job of SLURM_JOB_ID as holding the GPUs of SLURM_JOB_GPUS\n"
            "        (set slurm.conf's Prolog= to a script that runs it as root)\n"
            "epilog  remove that record (Epilog=)\n"
            "\n"
            "The records go to DIR (default $GPUKIT_SLURM_DIR, else " GK_SLURM_DEFAULT_DIR "):\n"
            "one file per GPU index holding its jobs' ids, one per line (what\n"
            "DCGM-exporter's --hpc-job-mapping-dir reads), and one record per job that\n"
            "gpukit run/pick avoid and gpukit leases, top and serve show.\n"
            "\n"
            "  --node=NAME  the NodeName for gres (default: this host's short name)\n"
            "  --dir=DIR    where prolog and epilog keep the records\n"
            "  -h, --help   show this help\n"
            "\n"
            "Exit status: 0 done (prolog and epilog also when they could not write, after a\n"
            "warning: Slurm drains a node whose prolog fails), 1 failed, 2 bad usage or not\n"
            "run by slurmd (no SLURM_JOB_ID), 3 gres: no NVIDIA GPU.\n");
}

/* Slurm's type for a model: "NVIDIA H100 80GB HBM3" -> "nvidia_h100_80gb_hbm3". */
static void slurm_type(const char *name, char *out, size_t size)
{
    size_t n = 0;
    for (const char *c = name; *c && n + 1 < size; c++)
        out[n++] = *c == ' ' ? '_' : (char)tolower((unsigned char)*c);
    out[n] = '\0';
}

/* The minor number of a MIG instance's capability device, from the
 * driver's /proc file; -1 when it cannot be read. */
static long capability_minor(unsigned gpu_minor, const char *which)
{
    const char *root = getenv("GPUKIT_PROC_ROOT");
    char path[512], line[256];
    snprintf(path, sizeof path, "%s/driver/nvidia/capabilities/gpu%u/mig/%s/access",
             root && *root ? root : "/proc", gpu_minor, which);
    FILE *file = fopen(path, "re");
    long minor = -1;
    while (file && fgets(line, sizeof line, file))
        if (sscanf(line, "DeviceFileMinor: %ld", &minor) == 1)
            break;
    if (file)
        fclose(file);
    return minor;
}

static int print_gres(const char *node)
{
    gk_snapshot *snapshot = cli_take_snapshot(GK_PROBE_NO_CPU);
    if (!snapshot)
        return GK_EXIT_FAILURE;
    if (snapshot->gpu_count == 0) {
        fprintf(stderr, "gpukit slurm gres: no NVIDIA GPU: %s\n", snapshot->diagnosis);
        gk_snapshot_destroy(snapshot);
        return GK_EXIT_NO_GPU;
    }
    char host[256];
    snprintf(host, sizeof host, "%s", node ? node : snapshot->hostname);
    if (!node)
        host[strcspn(host, ".")] = '\0';
    /* Each model (or MIG profile) and how many: the Gres= of slurm.conf. */
    char types[64][96];
    unsigned counts[64] = {0};
    size_t kinds = 0;
    /* The entries, in memory until the Gres= summary above them is known. */
    char *lines = NULL;
    size_t lines_size = 0;
    FILE *out = open_memstream(&lines, &lines_size);
    if (!out) {
        gk_snapshot_destroy(snapshot);
        fprintf(stderr, "gpukit slurm gres: out of memory\n");
        return GK_EXIT_FAILURE;
    }
    for (size_t g = 0; g < snapshot->gpu_count; g++) {
        const gk_gpu *gpu = &snapshot->gpus[g];
        if (gpu->state != GK_GPU_OK) {
            fprintf(out, "# GPU %u left out: %s: %s\n", gpu->index,
                    gk_gpu_state_name(gpu->state), gpu->error);
            continue;
        }
        unsigned minor = gpu->minor_number.known ? (unsigned)gpu->minor_number.value : gpu->index;
        char type[96];
        slurm_type(gpu->name, type, sizeof type);
        size_t entries = gpu->mig_count ? gpu->mig_count : 1;
        for (size_t e = 0; e < entries; e++) {
            char entry_type[96];
            if (gpu->mig_count) {
                const gk_mig_device *mig = &gpu->mig_devices[e];
                const char *profile = strstr(mig->name, "MIG ");
                snprintf(entry_type, sizeof entry_type, "%s", profile ? profile + 4 : mig->name);
                char gi[32], ci[48];
                snprintf(gi, sizeof gi, "gi%u", (unsigned)mig->gpu_instance.value);
                snprintf(ci, sizeof ci, "gi%u/ci%u", (unsigned)mig->gpu_instance.value,
                         (unsigned)mig->compute_instance.value);
                long gi_minor = capability_minor(minor, gi), ci_minor = capability_minor(minor, ci);
                if (gi_minor < 0 || ci_minor < 0)
                    fprintf(out, "# GPU %u MIG %s: its capability devices could not be read; "
                                 "AutoDetect=nvml finds them\n",
                            gpu->index, entry_type);
                else
                    fprintf(out, "Name=gpu Type=%s MultipleFiles=/dev/nvidia%u,"
                                 "/dev/nvidia-caps/nvidia-cap%ld,/dev/nvidia-caps/nvidia-cap%ld\n",
                            entry_type, minor, gi_minor, ci_minor);
                if (gi_minor < 0 || ci_minor < 0)
                    continue;
            } else {
                snprintf(entry_type, sizeof entry_type, "%s", type);
                fprintf(out, "Name=gpu Type=%s File=/dev/nvidia%u\n", type, minor);
            }
            size_t k = 0;
            while (k < kinds && strcmp(types[k], entry_type) != 0)
                k++;
            if (k == kinds && kinds < 64)
                snprintf(types[kinds++], sizeof types[0], "%s", entry_type);
            if (k < 64)
                counts[k]++;
        }
    }
    bool written = !ferror(out);
    if (fclose(out) != 0 || !written) {
        free(lines);
        gk_snapshot_destroy(snapshot);
        fprintf(stderr, "gpukit slurm gres: out of memory\n");
        return GK_EXIT_FAILURE;
    }
    printf("# gres.conf for %s, from NVML (driver %s) by gpukit slurm gres.\n", host,
           snapshot->driver_version[0] ? snapshot->driver_version : "unknown");
    printf("# slurm.conf: NodeName=%s Gres=", host);
    for (size_t k = 0; k < kinds; k++)
        printf("%sgpu:%s:%u", k ? "," : "", types[k], counts[k]);
    printf(" ...\n%s", lines);
    free(lines);
    gk_snapshot_destroy(snapshot);
    return fflush(stdout) == 0 ? GK_EXIT_OK : GK_EXIT_FAILURE;
}

/* The job's GPUs: SLURM_JOB_GPUS (global indices), else what slurmd also
 * sets for the prolog, CUDA_VISIBLE_DEVICES or GPU_DEVICE_ORDINAL. */
static size_t job_gpus(unsigned *indices, size_t max)
{
    static const char *const variables[] = {"SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES",
                                            "GPU_DEVICE_ORDINAL"};
    for (size_t v = 0; v < sizeof variables / sizeof variables[0]; v++) {
        const char *value = getenv(variables[v]);
        size_t count;
        if (value && *value && gk_index_list_parse(value, indices, max, &count))
            return count;
    }
    return 0;
}

static int prolog_or_epilog(bool prolog, const char *dir)
{
    const char *job = getenv("SLURM_JOB_ID");
    if (!job || !*job) {
        fprintf(stderr, "gpukit slurm %s: SLURM_JOB_ID is not set: slurmd runs this as the "
                        "node's %s (slurm.conf)\n",
                prolog ? "prolog" : "epilog", prolog ? "Prolog" : "Epilog");
        return GK_EXIT_USAGE;
    }
    dir = gk_slurm_dir(dir);
    gk_status status;
    if (prolog) {
        unsigned indices[GK_LEASE_MAX_DEVICES];
        size_t count = job_gpus(indices, GK_LEASE_MAX_DEVICES);
        if (count == 0)
            return GK_EXIT_OK; /* a job without GPUs: nothing to record */
        const char *uid_text = getenv("SLURM_JOB_UID");
        const char *user = getenv("SLURM_JOB_USER");
        gk_snapshot *snapshot = cli_take_snapshot(GK_PROBE_NO_CPU);
        status = gk_slurm_record(dir, job, uid_text ? (uint32_t)strtoul(uid_text, NULL, 10) : 0,
                                 user ? user : "", indices, count, snapshot);
        gk_snapshot_destroy(snapshot);
    } else {
        status = gk_slurm_forget(dir, job);
    }
    if (status != GK_OK) {
        /* A failing prolog drains the node: the job goes on, unrecorded. */
        fprintf(stderr, "gpukit slurm %s: warning: %s\n", prolog ? "prolog" : "epilog",
                gk_last_error());
        return status == GK_ERR_INVALID_ARGUMENT ? GK_EXIT_USAGE : GK_EXIT_OK;
    }
    return GK_EXIT_OK;
}

int cmd_slurm(int argc, char **argv)
{
    static const struct option options[] = {
        {"node", required_argument, NULL, 'n'},
        {"dir", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *node = NULL, *dir = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case 'n':
            if (!optarg[0]) {
                fprintf(stderr, "gpukit slurm: --node: give the node's name\n");
                return cli_usage_error("slurm");
            }
            node = optarg;
            break;
        case 'd':
            dir = optarg;
            break;
        case 'h':
            print_usage(stdout);
            return GK_EXIT_OK;
        default:
            return cli_usage_error("slurm");
        }
    }
    const char *action = optind < argc ? argv[optind] : NULL;
    if (!action || optind + 1 < argc) {
        fprintf(stderr, "gpukit slurm: give one of gres, prolog, epilog%s%s\n",
                action ? "; unexpected: " : "", action && optind + 1 < argc ? argv[optind + 1] : "");
        return GK_EXIT_USAGE;
    }
    if (strcmp(action, "gres") == 0)
        return print_gres(node);
    if (strcmp(action, "prolog") == 0 || strcmp(action, "epilog") == 0)
        return prolog_or_epilog(action[0] == 'p', dir);
    fprintf(stderr, "gpukit slurm: unknown action '%s': give gres, prolog or epilog\n", action);
    return GK_EXIT_USAGE;
}
