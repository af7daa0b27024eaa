/* `gpukit info`: the questions people answer with torch.cuda.is_available()
 * and device_count(): is a GPU usable, which physical GPU is cuda:0, and which
 * device should device-agnostic code pick.
 *
 * On a hybrid-graphics (Optimus) laptop the discrete GPU is looked at through
 * sysfs first: when it sleeps, NVML is not loaded at all, because its
 * initialisation alone would wake the GPU (battery, and seconds of latency),
 * and the answer comes from sysfs instead. */
#include "cli/cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpukit info [--json | --quiet]\n"
            "\n"
            "Say whether a GPU is usable, with which driver, what CUDA_VISIBLE_DEVICES and\n"
            "CUDA_DEVICE_ORDER make of the GPUs (cuda:0, cuda:1, ...), and which device\n"
            "device-agnostic code should choose: cuda:N or cpu.\n"
            "\n"
            "  --json       machine-readable output\n"
            "  -q, --quiet  print nothing; only the exit status answers\n"
            "  -h, --help   show this help\n"
            "\n"
            "On a hybrid-graphics (Optimus) laptop it also says how the NVIDIA GPU is driven\n"
            "(PRIME render offload or bumblebee), whether it sleeps, and how to run a program\n"
            "on it (" GK_OFFLOAD_COMMAND "). A sleeping GPU is reported from sysfs without\n"
            "loading NVML, which would wake it; the answer is then \"usable\" without the\n"
            "driver version or the GPU's name. JSON output always has an \"optimus\" key: an\n"
            "object (kind, hybrid, pci_bus_id, driver, power, runtime_pm, detail, ...) on\n"
            "hybrid laptops and where a bumblebee daemon runs, null elsewhere. \"gpu_count\"\n"
            "counts the usable GPUs, \"gpu_total\" every GPU the driver lists, and\n"
            "\"faulty_gpus\" the others (index; state: lost, no_permission or error; error).\n"
            "GPUKIT_SYSFS_ROOT, GPUKIT_PROC_ROOT and GPUKIT_BUMBLEBEE_SOCKET change where\n"
            "that is looked up (default /sys, /proc, /var/run/bumblebee.socket).\n"
            "\n"
            "Exit status: 0 a GPU is usable, 2 bad usage, 3 no GPU usable here (none found,\n"
            "or CUDA_VISIBLE_DEVICES hides them all), 4 driver problem or a faulty GPU.\n");
}

/* The "Optimus:" line, its detail line, what is wrong with the setup if
 * anything, and how to run a program on the discrete GPU. */
static void print_optimus(const gk_info *info)
{
    const gk_optimus *optimus = &info->optimus;
    if (!info->show_optimus)
        return;
    char how[320];
    switch (optimus->kind) {
    case GK_OFFLOAD_PRIME:
        snprintf(how, sizeof how, "PRIME render offload");
        break;
    case GK_OFFLOAD_BUMBLEBEE:
        snprintf(how, sizeof how, "bumblebee (daemon at %s)", optimus->bumblebee_socket);
        break;
    case GK_OFFLOAD_NONE:
        snprintf(how, sizeof how, "no offload");
        break;
    }
    if (!optimus->pci_bus_id[0]) {
        printf("Optimus:       %s; no NVIDIA GPU found in sysfs\n", how);
        return;
    }
    printf("Optimus:       %s; %s%sNVIDIA GPU %s (driver %s), power %s, runtime PM %s\n", how,
           optimus->igpu_vendor, optimus->igpu_vendor[0] ? " iGPU + " : "",
           optimus->pci_bus_id, optimus->driver[0] ? optimus->driver : "none",
           gk_power_state_name(optimus->power), optimus->runtime_pm ? "on" : "off");
    if (optimus->detail[0])
        printf("               %s\n", optimus->detail);
    if (strcmp(optimus->driver, "nouveau") == 0)
        printf("  note: the nouveau driver drives the NVIDIA GPU, and CUDA needs NVIDIA's own "
               "driver: install it and blacklist nouveau\n");
    else if (!optimus->driver[0] && optimus->kind != GK_OFFLOAD_BUMBLEBEE)
        printf("  note: no kernel driver is bound to the NVIDIA GPU: load the NVIDIA driver "
               "(sudo modprobe nvidia)\n");
    else if (optimus->kind == GK_OFFLOAD_PRIME && !optimus->runtime_pm)
        printf("  note: the NVIDIA GPU never sleeps, which costs battery: enable runtime power "
               "management with echo auto | sudo tee /sys/bus/pci/devices/%s/power/control "
               "(NVIDIA README, \"PCI-Express Runtime D3 (RTD3) Power Management\")\n",
               optimus->pci_bus_id);
    if (optimus->kind != GK_OFFLOAD_NONE)
        printf("Offload:       %s runs CMD on the NVIDIA GPU\n", GK_OFFLOAD_COMMAND);
}

static void print_info(const gk_info *info)
{
    const gk_snapshot *snapshot = info->snapshot;
    const gk_cuda_view *view = &info->view;
    char cuda[32], cpu[256];
    size_t usable = gk_snapshot_usable_count(snapshot);
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    cli_describe_cpu(cpu, sizeof cpu, &snapshot->cpu);

    if (snapshot->gpu_count == 0)
        printf("GPU usable:    no - %s\n", snapshot->diagnosis);
    else if (view->count == 0)
        printf("GPU usable:    no - %zu GPU(s) here, but CUDA_VISIBLE_DEVICES=\"%s\" hides "
               "them all\n", usable, visible ? visible : "");
    else
        printf("GPU usable:    yes - %zu of %zu GPU(s) visible to CUDA programs\n", view->count,
               snapshot->gpu_count);
    if (snapshot->source != GK_SOURCE_NONE) {
        printf("Driver:        %s", snapshot->driver_version[0] ? snapshot->driver_version : "N/A");
        if (gk_cuda_version_string(snapshot->cuda_driver_version, cuda, sizeof cuda)[0])
            printf(", supports CUDA %s", cuda);
        if (snapshot->nvml_version[0])
            printf(", NVML %s", snapshot->nvml_version);
        printf(" (read through %s)\n", gk_probe_source_name(snapshot->source));
    }
    for (size_t i = 0; i < snapshot->gpu_count; i++)
        if (snapshot->gpus[i].state != GK_GPU_OK)
            printf("Faulty GPU:    %u %s: %s\n", snapshot->gpus[i].index,
                   gk_gpu_state_name(snapshot->gpus[i].state), snapshot->gpus[i].error);
    if (snapshot->gpu_count > 0) {
        printf("CUDA view:     CUDA_VISIBLE_DEVICES %s%s%s, CUDA_DEVICE_ORDER %s\n",
               visible ? "=\"" : "unset", visible ? visible : "", visible ? "\"" : "",
               view->pci_bus_order ? "PCI_BUS_ID" : "FASTEST_FIRST");
        for (size_t k = 0; k < view->count; k++) {
            const gk_cuda_device *d = &view->devices[k];
            const gk_gpu *gpu = &snapshot->gpus[d->gpu];
            if (d->mig >= 0)
                printf("  cuda:%-3zu = MIG %d of GPU %u  %s  %s\n", k, d->mig, gpu->index,
                       gk_cuda_device_name(snapshot, d), gk_cuda_device_uuid(snapshot, d));
            else
                printf("  cuda:%-3zu = GPU %u  %s  %s  %s\n", k, gpu->index, gpu->name,
                       gpu->uuid, gpu->pci_bus_id);
        }
        if (view->note[0])
            printf("  note: %s\n", view->note);
        if (view->order_guessed)
            printf("  note: these GPUs differ and CUDA's FASTEST_FIRST order is a heuristic; "
                   "set CUDA_DEVICE_ORDER=PCI_BUS_ID to make cuda:N follow nvidia-smi's "
                   "numbering\n");
    }
    print_optimus(info);
    if (view->count > 0)
        printf("Use device:    cuda:0 (%s)\n", gk_cuda_device_name(snapshot, &view->devices[0]));
    else
        printf("Use device:    cpu (%s)\n", cpu);
    if (snapshot->gpu_count > 0 && snapshot->diagnosis[0])
        printf("note: %s\n", snapshot->diagnosis);
}

/* --- the sleeping discrete GPU, reported without NVML --- */

static void print_sleeping(const gk_info *info)
{
    const gk_snapshot *snapshot = info->snapshot;
    const gk_cuda_view *view = &info->view;
    const gk_optimus *optimus = &info->optimus;
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    char cpu[256];
    cli_describe_cpu(cpu, sizeof cpu, &snapshot->cpu);
    if (view->count > 0)
        printf("GPU usable:    yes - NVIDIA GPU %s %s\n", optimus->pci_bus_id,
               info->asleep_why);
    else
        printf("GPU usable:    no - NVIDIA GPU %s sleeps, and CUDA_VISIBLE_DEVICES=\"%s\" "
               "hides it\n",
               optimus->pci_bus_id, visible ? visible : "");
    bool bumblebee = optimus->kind == GK_OFFLOAD_BUMBLEBEE;
    printf("Driver:        not read: %s\n",
           bumblebee ? "bumblebee loads it while a program uses the GPU"
                     : "loading NVML would wake the GPU");
    printf("CUDA view:     CUDA_VISIBLE_DEVICES %s%s%s, CUDA_DEVICE_ORDER %s\n",
           visible ? "=\"" : "unset", visible ? visible : "", visible ? "\"" : "",
           view->pci_bus_order ? "PCI_BUS_ID" : "FASTEST_FIRST");
    if (view->count > 0)
        printf("  cuda:0     = GPU %s  (%s)\n", snapshot->gpus[0].pci_bus_id,
               bumblebee ? "idle until a program is started through bumblebee"
                         : "asleep: gpukit ls wakes it to read its name and memory");
    if (view->note[0])
        printf("  note: %s\n", view->note);
    print_optimus(info);
    if (view->count > 0 && bumblebee)
        printf("Use device:    cuda:0 (the NVIDIA GPU, in programs started with "
               GK_OFFLOAD_COMMAND ")\n");
    else if (view->count > 0)
        printf("Use device:    cuda:0 (the NVIDIA GPU; it wakes on first use)\n");
    else
        printf("Use device:    cpu (%s)\n", cpu);
}

int cmd_info(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false, quiet = false;
    int opt;
    while ((opt = getopt_long(argc, argv, "qh", options, NULL)) != -1) {
        switch (opt) {
        case 'j':
            json = true;
            break;
        case 'q':
            quiet = true;
            break;
        case 'h':
            print_usage(stdout);
            return GK_EXIT_OK;
        default:
            return cli_usage_error("info");
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpukit info: unexpected argument '%s'\n", argv[optind]);
        return GK_EXIT_USAGE;
    }
    if (json && quiet) {
        fprintf(stderr, "gpukit info: --json and --quiet cannot be used together\n");
        return GK_EXIT_USAGE;
    }
    gk_info info;
    if (gk_info_read(&info) != GK_OK) {
        fprintf(stderr, "gpukit: %s\n", gk_last_error());
        gk_info_free(&info);
        return GK_EXIT_FAILURE;
    }
    /* A sleeping GPU is usable (it wakes on first use), so only the view
     * decides; otherwise a faulty driver or GPU says so too. */
    int code = info.asleep ? GK_EXIT_OK : cli_exit_code(info.snapshot);
    if (code == GK_EXIT_OK && info.view.count == 0)
        code = GK_EXIT_NO_GPU;
    if (json) {
        if (!cli_print_json(gk_json_info(&info)))
            code = GK_EXIT_FAILURE;
    } else if (!quiet) {
        if (info.asleep)
            print_sleeping(&info);
        else
            print_info(&info);
    }
    gk_info_free(&info);
    if (fflush(stdout) != 0)
        return GK_EXIT_FAILURE;
    return code;
}
