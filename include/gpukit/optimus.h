/* Hybrid-graphics (Optimus) laptops: how the discrete NVIDIA GPU is driven,
 * and whether it is asleep.
 *
 * gk_optimus_detect() reads only sysfs and procfs files and looks for the
 * bumblebee daemon's socket. It never loads NVML or opens /dev/nvidia*: on a
 * laptop whose dGPU is runtime-suspended, NVML initialisation alone powers
 * the GPU up, which costs battery and seconds of wake-up latency. Callers
 * use this to decide whether a full probe (gk_probe_read) is worth waking it.
 *
 * Where it looks (each overridable, so tests can use fake trees):
 *   GPUKIT_SYSFS_ROOT        default /sys   (<root>/bus/pci/devices/...)
 *   GPUKIT_PROC_ROOT         default /proc  (<root>/driver/nvidia/gpus/<bus id>/power,
 *                                            <root>/acpi/bbswitch)
 *   GPUKIT_BUMBLEBEE_SOCKET  default /var/run/bumblebee.socket
 *
 * With bumblebee, the discrete GPU is powered off (bbswitch) until a client
 * asks the daemon for it; gk_bumblebee_connect() is that client and keeps the
 * GPU on for as long as the returned descriptor stays open.
 *
 * Thread safety: both calls only read files and use their own descriptors;
 * they may be called from any thread. */
#ifndef GPUKIT_OPTIMUS_H
#define GPUKIT_OPTIMUS_H

#include <gpukit/probe.h>
#include <gpukit/status.h>

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a program gets onto the discrete GPU. */
typedef enum gk_offload_kind {
    GK_OFFLOAD_NONE = 0,  /* no hybrid setup found (a desktop, or no NVIDIA GPU) */
    GK_OFFLOAD_PRIME,     /* NVIDIA driver with PRIME render offload: the driver
                             wakes the GPU when a program opens it */
    GK_OFFLOAD_BUMBLEBEE, /* the bumblebee daemon powers the GPU on per client */
} gk_offload_kind;

/* The kernel's runtime power state of the discrete GPU. */
typedef enum gk_power_state {
    GK_POWER_UNKNOWN = 0, /* no runtime PM information (or no GPU) */
    GK_POWER_ACTIVE,
    GK_POWER_SUSPENDED,   /* runtime D3: asleep, wakes on first use */
    GK_POWER_SUSPENDING,
    GK_POWER_RESUMING,
    GK_POWER_OFF,         /* switched off by bbswitch (bumblebee) */
} gk_power_state;

typedef struct gk_optimus {
    gk_offload_kind kind;
    bool hybrid;             /* an integrated GPU (Intel/AMD) beside the NVIDIA one */
    char igpu_vendor[16];    /* "Intel", "AMD" or "" */
    char pci_bus_id[32];     /* the NVIDIA display-class PCI device as sysfs names it
                                ("0000:01:00.0"), "" if none found; the first one in
                                bus order when there are several */
    char driver[32];         /* kernel driver bound to it ("nvidia", "nouveau", "" for none) */
    gk_power_state power;    /* power/runtime_status; OFF when bbswitch has it off */
    bool runtime_pm;         /* power/control is "auto": the kernel may suspend the GPU */
    char runtime_d3[64];     /* the NVIDIA driver's "Runtime D3 status", e.g.
                                "Enabled (fine-grained)"; "" when not reported */
    char video_memory[32];   /* the driver's "Video Memory" line: "Active", "Off" or "" */
    char detail[256];        /* one human line summing up the above */
    char bumblebee_socket[256]; /* the daemon's socket when it is running, else "" */
} gk_optimus;

/* Fills `out` from sysfs/procfs. A machine without any NVIDIA GPU is not an
 * error: pci_bus_id is then "" and kind GK_OFFLOAD_NONE. Fails only for a
 * NULL `out`. */
gk_status gk_optimus_detect(gk_optimus *out);

/* Whether the discrete GPU is asleep or off, so that loading NVML would wake
 * it (suspended, suspending, or off under bbswitch). */
bool gk_optimus_sleeping(const gk_optimus *optimus);

/* A snapshot for callers that must not wake the discrete GPU: built from
 * sysfs alone, it holds that one GPU with only its PCI bus id (name and UUID
 * empty, every measured field unknown, source GK_SOURCE_NONE) and the CPU.
 * Fails with GK_ERR_NOT_FOUND when `optimus` found no NVIDIA GPU. Free it
 * with gk_snapshot_destroy(). */
gk_status gk_optimus_snapshot(const gk_optimus *optimus, gk_snapshot **out);

/* "none", "prime", "bumblebee". Never NULL. */
const char *gk_offload_kind_name(gk_offload_kind kind);
/* "unknown", "active", "suspended", "suspending", "resuming", "off". Never NULL. */
const char *gk_power_state_name(gk_power_state state);

/* Asks the bumblebee daemon at `socket_path` (NULL: GPUKIT_BUMBLEBEE_SOCKET or
 * /var/run/bumblebee.socket) to power the discrete GPU on and load its driver,
 * without starting a secondary X server (what `optirun --no-xorg` asks for),
 * and waits up to 10 seconds for its answer.
 *
 * On success *fd_out is a connected descriptor (close-on-exec): the daemon
 * keeps the GPU on while it stays open and may power it off once it is
 * closed; release it with gk_bumblebee_disconnect(). `why` (may be NULL)
 * receives the daemon's answer, e.g. "Yes. X is active." or
 * "No - error: Could not enable discrete graphics card", or "" when none came.
 *
 * Fails with GK_ERR_NOT_FOUND (no daemon), GK_ERR_PERMISSION (the user is not
 * in the bumblebee group), GK_ERR_DRIVER (the daemon refused), GK_ERR_TIMEOUT
 * (no answer in time) or GK_ERR_IO; gk_last_error() names the fix. */
gk_status gk_bumblebee_connect(const char *socket_path, int *fd_out, char *why,
                               size_t why_size);

/* Closes a descriptor from gk_bumblebee_connect(): the daemon sees this client
 * leave and switches the GPU off when no other client needs it. fd < 0 is a
 * no-op. */
void gk_bumblebee_disconnect(int fd);

#ifdef __cplusplus
}
#endif
#endif
