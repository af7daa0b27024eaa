/* The CUDA view: which physical GPU a CUDA program will see as cuda:0,
 * cuda:1, ..., given CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER.
 *
 * The rules follow the CUDA runtime's behaviour:
 *  - unset: every GPU; "" (or no valid first entry): none;
 *  - entries are indices (read like strtoul: "1abc" is 1, "+1" is 1, " 1" is
 *    1; a negative number ends the list) or, when the first entry starts with
 *    "GPU-"/"MIG-", UUIDs or unique UUID prefixes, including MIG-<uuid> and the
 *    old MIG-GPU-<uuid>/<gi>/<ci> form; an entry of the other kind ends the list;
 *  - an invalid entry (unknown, ambiguous, out of range) ends the list: only
 *    the devices before it are visible;
 *  - a device named twice makes the whole variable invalid: no device;
 *  - indices count in CUDA_DEVICE_ORDER: PCI_BUS_ID is nvidia-smi's order;
 *    FASTEST_FIRST (the default) is an undocumented heuristic which gpukit
 *    approximates as higher compute capability first, then PCI bus order;
 *    `order_guessed` says when that guess matters (GPUs of different kinds);
 *  - one process sees at most one MIG device (CUDA 11 and 12).
 * GPUs that are lost or not accessible are not part of the view. */
#ifndef GPUKIT_VISIBLE_H
#define GPUKIT_VISIBLE_H

#include <gpukit/probe.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GK_CUDA_VIEW_MAX 128

typedef struct gk_cuda_device {
    size_t gpu; /* position in gk_snapshot.gpus */
    int mig;    /* position in that GPU's mig_devices, or -1 for the whole GPU */
} gk_cuda_device;

typedef struct gk_cuda_view {
    gk_cuda_device devices[GK_CUDA_VIEW_MAX]; /* devices[k] is cuda:k */
    size_t count;
    bool restricted;    /* CUDA_VISIBLE_DEVICES was set */
    bool pci_bus_order; /* CUDA_DEVICE_ORDER=PCI_BUS_ID */
    bool order_guessed; /* FASTEST_FIRST over GPUs of different kinds */
    /* What cut the list short, e.g. "entry 3 (\"7\") is not a visible GPU". */
    char note[256];
} gk_cuda_view;

/* Resolves `visible` (the value of CUDA_VISIBLE_DEVICES, NULL when unset) and
 * `order` (CUDA_DEVICE_ORDER, NULL when unset) against a snapshot. Pure: reads
 * no environment. */
gk_status gk_cuda_view_resolve(const gk_snapshot *snapshot, const char *visible,
                               const char *order, gk_cuda_view *view);

/* The same, with the values from this process's environment. */
gk_status gk_cuda_view_from_env(const gk_snapshot *snapshot, gk_cuda_view *view);

/* A list of indices as Slurm and CUDA write them ("0,1", "0-3,6") into up
 * to `max` entries; false (nothing set) when the text is not one. */
bool gk_index_list_parse(const char *text, unsigned *indices, size_t max, size_t *count);

/* CUDA_VISIBLE_DEVICES of a Slurm job as the node's GPU indices. Slurm
 * names a job's GPUs by node index in SLURM_STEP_GPUS (SLURM_JOB_GPUS) and,
 * when its cgroups hide the other GPUs, numbers them from 0 in
 * CUDA_VISIBLE_DEVICES. When `visible` lists as many indices as
 * `slurm_gpus`, each is read as a position in Slurm's list; otherwise (not
 * indices, other counts, no Slurm) `visible` is copied. gk_cuda_view_from_env
 * applies it, so gpukit offers a Slurm job exactly its GPUs. */
#define GK_SLURM_MAX_GPUS 64
const char *gk_slurm_visible_devices(const char *visible, const char *slurm_gpus, char *out,
                                     size_t size);

/* The cuda:N number of the whole GPU snapshot->gpus[gpu] in the view, or -1
 * when CUDA programs do not see it (MIG devices are not whole GPUs). */
int gk_cuda_view_index(const gk_cuda_view *view, size_t gpu);

/* The UUID and the name of a device of the view: the MIG device's when it is
 * one, else the GPU's. */
const char *gk_cuda_device_uuid(const gk_snapshot *snapshot, const gk_cuda_device *device);
const char *gk_cuda_device_name(const gk_snapshot *snapshot, const gk_cuda_device *device);

#ifdef __cplusplus
}
#endif
#endif
