/* What `gpukit info` and gpukit.info() answer: is a GPU usable, with which
 * driver, which physical GPU a CUDA program sees as cuda:0, cuda:1, ..., and
 * which device device-agnostic code should choose.
 *
 * On a hybrid-graphics (Optimus) laptop the discrete GPU is looked at through
 * sysfs first: when it sleeps, NVML is not loaded at all, because its
 * initialisation alone would wake the GPU (battery, and seconds of latency),
 * and the answer comes from sysfs instead.
 *
 * Thread safety: gk_info_read() takes its own probe; an info is plain data. */
#ifndef GPUKIT_INFO_H
#define GPUKIT_INFO_H

#include <gpukit/optimus.h>
#include <gpukit/probe.h>
#include <gpukit/visible.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The command that puts a program on the discrete GPU of a hybrid laptop. */
#define GK_OFFLOAD_COMMAND "gpukit run --offload -- CMD"

typedef struct gk_info {
    gk_optimus optimus;     /* read before anything that could wake the GPU */
    bool show_optimus;      /* a hybrid laptop or a bumblebee machine: reports
                               describe the Optimus setup; elsewhere they do not */
    bool asleep;            /* the discrete GPU sleeps: the snapshot comes from
                               sysfs alone (no name, UUID or driver version) */
    const char *asleep_why; /* when asleep, the rest of "the NVIDIA GPU ..." for
                               people: "is suspended (runtime D3); ..." */
    gk_snapshot *snapshot;
    gk_cuda_view view;      /* from CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER */
} gk_info;

/* Reads everything; free with gk_info_free(). Fails only when no snapshot
 * can be made at all (out of memory), with the message in gk_last_error();
 * a machine without GPUs is an info that says why. */
gk_status gk_info_read(gk_info *info);
void gk_info_free(gk_info *info);

/* The JSON of `gpukit info --json` (indented by two, ASCII only, without
 * the final newline) in a new string to free(). */
gk_status gk_info_json(const gk_info *info, char **json);

#ifdef __cplusplus
}
#endif
#endif
