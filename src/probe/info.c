/* `gpukit info` as data (include/gpukit/info.h): the Optimus look first,
 * then either a full probe or, for a sleeping discrete GPU, sysfs alone. */
#include <gpukit/info.h>

#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Hybrid laptops and bumblebee machines get an Optimus report; desktops and
 * servers keep their output as it always was. */
static bool optimus_shown(const gk_optimus *optimus)
{
    return optimus->hybrid || optimus->kind == GK_OFFLOAD_BUMBLEBEE;
}

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

gk_status gk_info_read(gk_info *info)
{
    memset(info, 0, sizeof *info);
    /* Before NVML: loading it is what would wake a sleeping laptop GPU. */
    gk_optimus_detect(&info->optimus);
    info->show_optimus = optimus_shown(&info->optimus);
    if (must_not_wake(&info->optimus)) {
        gk_status status = gk_optimus_snapshot(&info->optimus, &info->snapshot);
        if (status != GK_OK)
            return status;
        info->asleep = true;
        info->asleep_why = sleep_sentence(&info->optimus);
        sleeping_view(info->snapshot, &info->view);
        return GK_OK;
    }
    gk_probe *probe;
    gk_status status = gk_probe_open(&probe);
    if (status != GK_OK)
        return status;
    status = gk_probe_read(probe, 0, &info->snapshot);
    gk_probe_close(probe);
    if (status != GK_OK)
        return status;
    return gk_cuda_view_from_env(info->snapshot, &info->view);
}

void gk_info_free(gk_info *info)
{
    if (!info)
        return;
    gk_snapshot_destroy(info->snapshot);
    info->snapshot = NULL;
}
