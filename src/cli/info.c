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

/* The command that puts a program on the discrete GPU of a hybrid laptop. */
#define OFFLOAD_COMMAND "gpukit run --offload -- CMD"

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
            "on it (" OFFLOAD_COMMAND "). A sleeping GPU is reported from sysfs without\n"
            "loading NVML, which would wake it; the answer is then \"usable\" without the\n"
            "driver version or the GPU's name. JSON output always has an \"optimus\" key: an\n"
            "object (kind, hybrid, pci_bus_id, driver, power, runtime_pm, detail, ...) on\n"
            "hybrid laptops and where a bumblebee daemon runs, null elsewhere.\n"
            "GPUKIT_SYSFS_ROOT, GPUKIT_PROC_ROOT and GPUKIT_BUMBLEBEE_SOCKET change where\n"
            "that is looked up (default /sys, /proc, /var/run/bumblebee.socket).\n"
            "\n"
            "Exit status: 0 a GPU is usable, 2 bad usage, 3 no GPU usable here (none found,\n"
            "or CUDA_VISIBLE_DEVICES hides them all), 4 driver problem or a faulty GPU.\n");
}

static json_t *text_or_null(const char *text)
{
    return text[0] ? json_string(text) : json_null();
}

/* Hybrid laptops and bumblebee machines get an Optimus report; desktops and
 * servers keep their output as it always was. */
static bool optimus_shown(const gk_optimus *optimus)
{
    return optimus->hybrid || optimus->kind == GK_OFFLOAD_BUMBLEBEE;
}

static json_t *optimus_json(const gk_optimus *optimus)
{
    if (!optimus_shown(optimus))
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string(gk_offload_kind_name(optimus->kind)));
    json_object_set_new(o, "hybrid", json_boolean(optimus->hybrid));
    json_object_set_new(o, "igpu_vendor", text_or_null(optimus->igpu_vendor));
    json_object_set_new(o, "pci_bus_id", text_or_null(optimus->pci_bus_id));
    json_object_set_new(o, "driver", text_or_null(optimus->driver));
    json_object_set_new(o, "power", json_string(gk_power_state_name(optimus->power)));
    json_object_set_new(o, "runtime_pm", json_boolean(optimus->runtime_pm));
    json_object_set_new(o, "runtime_d3", text_or_null(optimus->runtime_d3));
    json_object_set_new(o, "video_memory", text_or_null(optimus->video_memory));
    json_object_set_new(o, "detail", text_or_null(optimus->detail));
    json_object_set_new(o, "bumblebee_socket", text_or_null(optimus->bumblebee_socket));
    json_object_set_new(o, "offload_command", optimus->kind != GK_OFFLOAD_NONE
                                                   ? json_string(OFFLOAD_COMMAND)
                                                   : json_null());
    return o;
}

/* The "Optimus:" line, its detail line, what is wrong with the setup if
 * anything, and how to run a program on the discrete GPU. */
static void print_optimus(const gk_optimus *optimus)
{
    if (!optimus_shown(optimus))
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
        printf("Offload:       %s runs CMD on the NVIDIA GPU\n", OFFLOAD_COMMAND);
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

static json_t *info_json(const gk_snapshot *snapshot, const gk_cuda_view *view,
                         const gk_optimus *optimus)
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
    json_object_set_new(o, "optimus", optimus_json(optimus));
    return o;
}

static void print_info(const gk_snapshot *snapshot, const gk_cuda_view *view,
                       const gk_optimus *optimus)
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
    print_optimus(optimus);
    if (view->count > 0)
        printf("Use device:    cuda:0 (%s)\n", device_name(snapshot, &view->devices[0]));
    else
        printf("Use device:    cpu (%s)\n", cpu);
    if (snapshot->gpu_count > 0 && snapshot->diagnosis[0])
        printf("note: %s\n", snapshot->diagnosis);
}

/* --- the sleeping discrete GPU, reported without NVML --- */

/* Whether the report must come from sysfs. NVML would wake a suspended GPU
 * that the NVIDIA driver drives, and must not touch a card bbswitch cut off.
 * Under bumblebee the driver is only loaded while a client uses the card, so
 * its absence is the idle state, not a fault. A GPU under nouveau or with no
 * driver at all is out of NVML's reach, so the ordinary path is safe there. */
static bool must_not_wake(const gk_optimus *optimus)
{
    if (!optimus_shown(optimus) || !optimus->pci_bus_id[0])
        return false;
    bool nvidia = strcmp(optimus->driver, "nvidia") == 0;
    if (optimus->kind == GK_OFFLOAD_BUMBLEBEE)
        return gk_optimus_sleeping(optimus) || !nvidia;
    return gk_optimus_sleeping(optimus) && nvidia;
}

static const char *sleep_sentence(const gk_optimus *optimus)
{
    if (optimus->power == GK_POWER_OFF)
        return "is switched off (bbswitch); bumblebee switches it on for programs started "
               "through it - gpukit did not wake it";
    if (optimus->kind == GK_OFFLOAD_BUMBLEBEE && strcmp(optimus->driver, "nvidia") != 0)
        return "is idle; bumblebee loads its driver for programs started through it - gpukit "
               "did not wake it";
    return "is suspended (runtime D3); it wakes when a program uses it - gpukit did not wake "
           "it";
}

/* The CUDA view of the one sleeping GPU. UUIDs are only known to the awake
 * GPU, so a CUDA_VISIBLE_DEVICES that names UUIDs is taken on trust. */
static void sleeping_view(const gk_snapshot *snapshot, gk_cuda_view *view)
{
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    const char *order = getenv("CUDA_DEVICE_ORDER");
    const char *first = visible ? visible + strspn(visible, " \t") : "";
    if (strncmp(first, "GPU-", 4) != 0 && strncmp(first, "MIG-", 4) != 0) {
        gk_cuda_view_from_env(snapshot, view);
        return;
    }
    memset(view, 0, sizeof *view);
    view->count = 1;
    view->devices[0].gpu = 0;
    view->devices[0].mig = -1;
    view->restricted = true;
    view->pci_bus_order = order && strcmp(order, "PCI_BUS_ID") == 0;
    snprintf(view->note, sizeof view->note,
             "CUDA_VISIBLE_DEVICES names GPUs by UUID, which gpukit cannot check without "
             "waking the GPU");
}

static json_t *sleeping_json(const gk_snapshot *snapshot, const gk_cuda_view *view,
                             const gk_optimus *optimus)
{
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    const gk_gpu *gpu = &snapshot->gpus[0];
    json_t *devices = json_array();
    if (view->count > 0)
        json_array_append_new(devices, json_pack("{s:I, s:I, s:n, s:n, s:s, s:n}",
                                                 "cuda_index", (json_int_t)0,
                                                 "index", (json_int_t)gpu->index, "uuid",
                                                 "name", "pci.bus_id", gpu->pci_bus_id,
                                                 "mig_index"));
    char note[512];
    snprintf(note, sizeof note, "the NVIDIA GPU %s%s%s", sleep_sentence(optimus),
             view->note[0] ? "; " : "", view->note);
    json_t *o = json_object();
    json_object_set_new(o, "gpu_usable", json_boolean(view->count > 0));
    json_object_set_new(o, "gpu_count", json_integer((json_int_t)snapshot->gpu_count));
    json_object_set_new(o, "cuda_device_count", json_integer((json_int_t)view->count));
    json_object_set_new(o, "device", json_string(view->count > 0 ? "cuda:0" : "cpu"));
    json_object_set_new(o, "driver_version", json_null());
    json_object_set_new(o, "cuda_driver_version", json_null());
    json_object_set_new(o, "nvml_version", json_null());
    json_object_set_new(o, "source", json_string("sysfs"));
    json_object_set_new(o, "cuda_visible_devices", visible ? json_string(visible) : json_null());
    json_object_set_new(o, "cuda_device_order",
                        json_string(view->pci_bus_order ? "PCI_BUS_ID" : "FASTEST_FIRST"));
    json_object_set_new(o, "order_guessed", json_false());
    json_object_set_new(o, "cuda_devices", devices);
    json_object_set_new(o, "note", json_string(note));
    json_object_set_new(o, "diagnosis", json_null());
    json_object_set_new(o, "cpu", cli_cpu_json(&snapshot->cpu));
    json_object_set_new(o, "optimus", optimus_json(optimus));
    return o;
}

static void print_sleeping(const gk_snapshot *snapshot, const gk_cuda_view *view,
                           const gk_optimus *optimus)
{
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    char cpu[256];
    cli_describe_cpu(cpu, sizeof cpu, &snapshot->cpu);
    if (view->count > 0)
        printf("GPU usable:    yes - NVIDIA GPU %s %s\n", optimus->pci_bus_id,
               sleep_sentence(optimus));
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
    print_optimus(optimus);
    if (view->count > 0 && bumblebee)
        printf("Use device:    cuda:0 (the NVIDIA GPU, in programs started with "
               OFFLOAD_COMMAND ")\n");
    else if (view->count > 0)
        printf("Use device:    cuda:0 (the NVIDIA GPU; it wakes on first use)\n");
    else
        printf("Use device:    cpu (%s)\n", cpu);
}

/* `gpukit info` for a sleeping discrete GPU: everything from sysfs. */
static int info_sleeping(const gk_optimus *optimus, bool json, bool quiet)
{
    gk_snapshot *snapshot;
    if (gk_optimus_snapshot(optimus, &snapshot) != GK_OK) {
        fprintf(stderr, "gpukit: %s\n", gk_last_error());
        return GK_EXIT_FAILURE;
    }
    gk_cuda_view view;
    sleeping_view(snapshot, &view);
    int code = view.count > 0 ? GK_EXIT_OK : GK_EXIT_NO_GPU;
    if (json) {
        if (!cli_print_json(sleeping_json(snapshot, &view, optimus)))
            code = GK_EXIT_FAILURE;
    } else if (!quiet) {
        print_sleeping(snapshot, &view, optimus);
    }
    gk_snapshot_destroy(snapshot);
    if (fflush(stdout) != 0)
        return GK_EXIT_FAILURE;
    return code;
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
    /* Before NVML: loading it is what would wake a sleeping laptop GPU. */
    gk_optimus optimus;
    gk_optimus_detect(&optimus);
    if (must_not_wake(&optimus))
        return info_sleeping(&optimus, json, quiet);
    gk_snapshot *snapshot = cli_take_snapshot(0);
    if (!snapshot)
        return GK_EXIT_FAILURE;
    gk_cuda_view view;
    gk_cuda_view_from_env(snapshot, &view);
    int code = cli_exit_code(snapshot);
    if (code == GK_EXIT_OK && view.count == 0)
        code = GK_EXIT_NO_GPU;
    if (json) {
        if (!cli_print_json(info_json(snapshot, &view, &optimus)))
            code = GK_EXIT_FAILURE;
    } else if (!quiet) {
        print_info(snapshot, &view, &optimus);
    }
    gk_snapshot_destroy(snapshot);
    if (fflush(stdout) != 0)
        return GK_EXIT_FAILURE;
    return code;
}
