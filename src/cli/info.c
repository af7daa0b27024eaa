/* `gpukit info`: the questions people answer with torch.cuda.is_available()
 * and device_count(): is a GPU usable, which physical GPU is cuda:0, and which
 * device should device-agnostic code pick. */
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
            "Exit status: 0 a GPU is usable, 2 bad usage, 3 no GPU usable here (none found,\n"
            "or CUDA_VISIBLE_DEVICES hides them all), 4 driver problem or a faulty GPU.\n");
}

/* Describes cuda:k as "GPU 2 (UUID)" or "MIG 1 of GPU 0 (MIG UUID)". */
static const char *device_uuid(const gk_snapshot *snapshot, const gk_cuda_device *d)
{
    const gk_gpu *gpu = &snapshot->gpus[d->gpu];
    return d->mig >= 0 ? gpu->mig_devices[d->mig].uuid : gpu->uuid;
}

static const char *device_name(const gk_snapshot *snapshot, const gk_cuda_device *d)
{
    const gk_gpu *gpu = &snapshot->gpus[d->gpu];
    return d->mig >= 0 ? gpu->mig_devices[d->mig].name : gpu->name;
}

static json_t *info_json(const gk_snapshot *snapshot, const gk_cuda_view *view)
{
    char cuda[32];
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    json_t *devices = json_array();
    for (size_t k = 0; k < view->count; k++) {
        const gk_cuda_device *d = &view->devices[k];
        json_t *entry = json_pack("{s:I, s:I, s:s, s:s, s:s}",
                                  "cuda_index", (json_int_t)k,
                                  "index", (json_int_t)snapshot->gpus[d->gpu].index,
                                  "uuid", device_uuid(snapshot, d),
                                  "name", device_name(snapshot, d),
                                  "pci.bus_id", snapshot->gpus[d->gpu].pci_bus_id);
        json_object_set_new(entry, "mig_index", d->mig >= 0 ? json_integer(d->mig) : json_null());
        json_array_append_new(devices, entry);
    }
    json_t *o = json_object();
    json_object_set_new(o, "gpu_usable", json_boolean(view->count > 0));
    json_object_set_new(o, "gpu_count", json_integer((json_int_t)gk_snapshot_usable_count(snapshot)));
    json_object_set_new(o, "cuda_device_count", json_integer((json_int_t)view->count));
    json_object_set_new(o, "device", view->count > 0 ? json_string("cuda:0") : json_string("cpu"));
    json_object_set_new(o, "driver_version",
                        snapshot->driver_version[0] ? json_string(snapshot->driver_version)
                                                    : json_null());
    cli_cuda_version(cuda, sizeof cuda, snapshot->cuda_driver_version);
    json_object_set_new(o, "cuda_driver_version", cuda[0] ? json_string(cuda) : json_null());
    json_object_set_new(o, "nvml_version", snapshot->nvml_version[0]
                                               ? json_string(snapshot->nvml_version)
                                               : json_null());
    json_object_set_new(o, "source", json_string(gk_probe_source_name(snapshot->source)));
    json_object_set_new(o, "cuda_visible_devices",
                        visible ? json_string(visible) : json_null());
    json_object_set_new(o, "cuda_device_order",
                        json_string(view->pci_bus_order ? "PCI_BUS_ID" : "FASTEST_FIRST"));
    json_object_set_new(o, "order_guessed", json_boolean(view->order_guessed));
    json_object_set_new(o, "cuda_devices", devices);
    json_object_set_new(o, "note", view->note[0] ? json_string(view->note) : json_null());
    json_object_set_new(o, "diagnosis",
                        snapshot->diagnosis[0] ? json_string(snapshot->diagnosis) : json_null());
    json_object_set_new(o, "cpu", cli_cpu_json(&snapshot->cpu));
    return o;
}

static void print_info(const gk_snapshot *snapshot, const gk_cuda_view *view)
{
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
        if (cli_cuda_version(cuda, sizeof cuda, snapshot->cuda_driver_version)[0])
            printf(", supports CUDA %s", cuda);
        if (snapshot->nvml_version[0])
            printf(", NVML %s", snapshot->nvml_version);
        printf(" (read through %s)\n", gk_probe_source_name(snapshot->source));
    }
    for (size_t i = 0; i < snapshot->gpu_count; i++)
        if (snapshot->gpus[i].state != GK_GPU_OK)
            printf("Faulty GPU:    %u %s: %s\n", snapshot->gpus[i].index,
                   cli_state_name(snapshot->gpus[i].state), snapshot->gpus[i].error);
    if (snapshot->gpu_count > 0) {
        printf("CUDA view:     CUDA_VISIBLE_DEVICES %s%s%s, CUDA_DEVICE_ORDER %s\n",
               visible ? "=\"" : "unset", visible ? visible : "", visible ? "\"" : "",
               view->pci_bus_order ? "PCI_BUS_ID" : "FASTEST_FIRST");
        for (size_t k = 0; k < view->count; k++) {
            const gk_cuda_device *d = &view->devices[k];
            const gk_gpu *gpu = &snapshot->gpus[d->gpu];
            if (d->mig >= 0)
                printf("  cuda:%-3zu = MIG %d of GPU %u  %s  %s\n", k, d->mig, gpu->index,
                       device_name(snapshot, d), device_uuid(snapshot, d));
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
    if (view->count > 0)
        printf("Use device:    cuda:0 (%s)\n", device_name(snapshot, &view->devices[0]));
    else
        printf("Use device:    cpu (%s)\n", cpu);
    if (snapshot->gpu_count > 0 && snapshot->diagnosis[0])
        printf("note: %s\n", snapshot->diagnosis);
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
            print_usage(stderr);
            return GK_EXIT_USAGE;
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
    gk_snapshot *snapshot = cli_take_snapshot(0);
    if (!snapshot)
        return GK_EXIT_FAILURE;
    gk_cuda_view view;
    gk_cuda_view_from_env(snapshot, &view);
    int code = cli_exit_code(snapshot);
    if (code == GK_EXIT_OK && view.count == 0)
        code = GK_EXIT_NO_GPU;
    if (json) {
        if (!cli_print_json(info_json(snapshot, &view)))
            code = GK_EXIT_FAILURE;
    } else if (!quiet) {
        print_info(snapshot, &view);
    }
    gk_snapshot_destroy(snapshot);
    if (fflush(stdout) != 0)
        return GK_EXIT_FAILURE;
    return code;
}
