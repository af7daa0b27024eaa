/* GPU discovery: what GPUs this machine has and their live state.
 *
 * gk_probe_open() finds a way to talk to the NVIDIA driver (NVML loaded at run
 * time, else the nvidia-smi program), gk_probe_read() takes a snapshot. A
 * machine without any NVIDIA software is not an error: the snapshot then has
 * no GPUs, says why, and describes the CPU that work will run on instead.
 *
 * Every measured value is a gk_field whose `known` flag is false when the
 * driver could not provide it (not supported, not permitted, GPU lost): such
 * values are shown as N/A, never as a made-up 0.
 *
 * Thread safety: a gk_probe may be used by one thread at a time; snapshots are
 * plain data and may be read from any thread. */
#ifndef GPUKIT_PROBE_H
#define GPUKIT_PROBE_H

#include <gpukit/status.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gk_field {
    uint64_t value;
    bool known;
} gk_field;

typedef enum gk_process_type {
    GK_PROCESS_COMPUTE = 1,
    GK_PROCESS_GRAPHICS = 2,
    GK_PROCESS_COMPUTE_GRAPHICS = 3, /* listed by the driver as both */
} gk_process_type;

typedef struct gk_process {
    uint32_t pid;
    gk_process_type type;
    gk_field gpu_memory;        /* bytes */
    gk_field gpu_instance;      /* MIG GPU instance id */
    gk_field compute_instance;  /* MIG compute instance id */
    gk_field host_memory;       /* resident CPU memory, bytes */
    gk_field cpu_percent;       /* tenths of a percent of one core, averaged over
                                   the process's life (1234 is 123.4 %) */
    gk_field cpu_time;          /* CPU time used so far (user + system), ms */
    gk_field running_time;      /* time since the process started, ms */
    gk_field uid;               /* its real user id */
    char user[64];              /* "" when unknown (e.g. another PID namespace) */
    char command[128];          /* program name, "" when unknown */
    /* The full command line as NUL-separated arguments, cmdline_len bytes. */
    char cmdline[1024];
    size_t cmdline_len;
} gk_process;

typedef struct gk_mig_device {
    unsigned index; /* position under its parent GPU */
    char uuid[96];
    char name[96];
    gk_field gpu_instance;
    gk_field compute_instance;
    gk_field memory_total; /* bytes */
    gk_field memory_used;  /* bytes */
} gk_mig_device;

typedef enum gk_gpu_state {
    GK_GPU_OK = 0,
    GK_GPU_LOST,          /* fell off the bus or stopped answering */
    GK_GPU_NO_PERMISSION, /* present, but this user may not open it */
    GK_GPU_ERROR,         /* the driver answered with another error */
} gk_gpu_state;

typedef struct gk_gpu {
    unsigned index;   /* the driver's index: nvidia-smi's numbering, PCI order */
    gk_gpu_state state;
    char error[160];  /* why state is not GK_GPU_OK */
    char name[96];
    char uuid[96];
    char pci_bus_id[32];
    gk_field minor_number; /* N of its device file /dev/nvidiaN */
    gk_field memory_total, memory_used, memory_free, memory_reserved; /* bytes */
    gk_field utilization_gpu, utilization_memory;                     /* percent */
    gk_field utilization_encoder, utilization_decoder;                /* percent */
    gk_field temperature;                                             /* Celsius */
    gk_field fan_speed;                                               /* percent */
    gk_field power_draw, power_limit;                                 /* milliwatts */
    gk_field energy;               /* millijoules used since the driver loaded */
    gk_field clock_sm, clock_memory, clock_max_sm, clock_max_memory;  /* MHz */
    gk_field compute_major, compute_minor;
    gk_field persistence_mode; /* 0 or 1 */
    gk_field mig_mode;         /* 0 or 1, the current mode */
    gk_mig_device *mig_devices;
    size_t mig_count;
    bool processes_known; /* false when not asked for or not readable */
    gk_process *processes;
    size_t process_count;
} gk_gpu;

/* Where the GPU information came from. */
typedef enum gk_probe_source {
    GK_SOURCE_NONE = 0,
    GK_SOURCE_NVML,
    GK_SOURCE_NVIDIA_SMI,
} gk_probe_source;

/* Why a snapshot has no usable GPU. */
typedef enum gk_absence {
    GK_ABSENCE_NONE = 0,          /* there are GPUs */
    GK_ABSENCE_NO_DRIVER,         /* no NVML library and no nvidia-smi */
    GK_ABSENCE_DRIVER_NOT_LOADED, /* user-space driver present, kernel module not */
    GK_ABSENCE_NO_DEVICES,        /* driver works but reports zero GPUs */
    GK_ABSENCE_NO_PERMISSION,     /* the driver refused this user */
    GK_ABSENCE_DRIVER_ERROR,      /* the driver failed in another way */
} gk_absence;

typedef struct gk_cpu {
    char model[128];       /* "" when unknown */
    unsigned logical_cores;
    unsigned usable_cores; /* the cores this process may run on (affinity) */
    gk_field memory_total; /* bytes */
    gk_field memory_available;
} gk_cpu;

typedef struct gk_snapshot {
    gk_probe_source source;
    gk_absence absence;
    /* Why there is no GPU, or what failed, with the fix; "" when all is well. */
    char diagnosis[512];
    char hostname[256];
    struct timespec query_time; /* CLOCK_REALTIME */
    char driver_version[80];    /* "" when unknown */
    char nvml_version[80];
    gk_field cuda_driver_version; /* as the driver reports it: 12040 is 12.4 */
    gk_cpu cpu;
    gk_gpu *gpus;
    size_t gpu_count;
} gk_snapshot;

typedef struct gk_probe gk_probe;

/* Options for gk_probe_read(). */
enum {
    GK_PROBE_PROCESSES = 1u << 0, /* also list the processes on each GPU */
    GK_PROBE_NO_CPU = 1u << 1,    /* leave `cpu` empty: for callers that report
                                     GPUs only (reading it costs more than a GPU) */
};

/* Finds the driver. Fails only for resource problems (out of memory); a
 * machine without NVIDIA software gives a probe whose snapshots say why.
 * GPUKIT_NVML_LIBRARY overrides the NVML library path. */
gk_status gk_probe_open(gk_probe **out);
void gk_probe_close(gk_probe *probe);

/* Takes a snapshot of every GPU now; free it with gk_snapshot_destroy(). */
gk_status gk_probe_read(gk_probe *probe, unsigned flags, gk_snapshot **out);
void gk_snapshot_destroy(gk_snapshot *snapshot);

/* A process's command line as one line, its arguments joined by spaces
 * (its program name when the command line is unknown, "" when that is too),
 * into buf; returns buf. */
const char *gk_process_command_line(const gk_process *process, char *buf, size_t size);

/* The number of GPUs in the snapshot that answered normally. */
size_t gk_snapshot_usable_count(const gk_snapshot *snapshot);

const char *gk_probe_source_name(gk_probe_source source);

/* "ok", "lost", "no_permission", "error": the names reports use. */
const char *gk_gpu_state_name(gk_gpu_state state);

/* The CUDA version a driver supports as people write it ("12.4" from the
 * driver's 12040) into buf; "" when unknown. Returns buf. */
const char *gk_cuda_version_string(gk_field version, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
