/* Internal: the interface every discovery backend implements (NVML, the
 * nvidia-smi program), and the helpers they share. */
#ifndef GK_PROBE_BACKEND_H
#define GK_PROBE_BACKEND_H

#include <gpukit/probe.h>

#include <stdio.h>

typedef struct gk_probe_backend {
    const char *name;
    gk_probe_source source;
    /* Connects to the driver. Returns GK_ERR_NOT_FOUND when this backend is
     * not present on the machine (the next one is tried), another error when
     * it is present but failing (then `snapshot->absence` and `diagnosis` say
     * why and no other backend is tried), GK_OK with *state set otherwise. */
    gk_status (*open)(void **state, gk_snapshot *snapshot);
    /* Fills the driver fields and `gpus` of an otherwise empty snapshot: each
     * GPU's identity and live state. */
    gk_status (*devices)(void *state, gk_snapshot *snapshot);
    /* Attaches the running processes to each GPU of the snapshot. */
    gk_status (*processes)(void *state, gk_snapshot *snapshot);
    void (*close)(void *state);
} gk_probe_backend;

extern const gk_probe_backend gk_probe_nvml_backend;
extern const gk_probe_backend gk_probe_smi_backend;

/* What the NVML backend keeps of each GPU between readings of an open
 * probe: its handle and the facts that do not change (name, UUID, bus id,
 * compute capability, maximum clocks), so that a monitor reading every
 * second asks the driver only for live facts. A GPU that stops answering is
 * `stale`: each reading asks for its handle and identity again (it may come
 * back after a reset), and until it answers, it is shown with the identity
 * kept here, so readers still know which GPU was lost. */
#define GK_NVML_CACHE_GPUS 64
typedef struct gk_nvml_identity {
    bool known;
    bool stale;
    void *handle; /* nvmlDevice_t */
    gk_gpu gpu;   /* only the identity fields are set */
} gk_nvml_identity;

typedef struct gk_nvml_cache {
    unsigned count; /* the GPU count the entries belong to */
    gk_nvml_identity gpus[GK_NVML_CACHE_GPUS];
} gk_nvml_cache;

/* The NVML backend's reading, through the entry points of a loaded (and
 * initialised) NVML: the driver fields and GPUs of an empty snapshot, then
 * each GPU's processes. `cache` may be NULL (read everything). */
struct gk_nvml;
gk_status gk_nvml_read_devices(const struct gk_nvml *lib, gk_nvml_cache *cache,
                               gk_snapshot *snapshot);
gk_status gk_nvml_read_processes(const struct gk_nvml *lib, const gk_nvml_cache *cache,
                                 gk_snapshot *snapshot);

/* nvidia-smi's CSV (--format=csv,noheader,nounits), parsed in place: the
 * rows of `--query-gpu` with all of smi.c's columns, or with only those old
 * drivers know (`basic_columns`), into an empty snapshot; and the rows of
 * `--query-compute-apps=gpu_uuid,pid,process_name,used_memory`, attached to
 * the snapshot's GPUs. `exit_status` is the program's. */
gk_status gk_smi_parse_gpus(char *output, bool basic_columns, int exit_status,
                           gk_snapshot *snapshot);
gk_status gk_smi_parse_processes(char *output, int exit_status, gk_snapshot *snapshot);

/* Fills a process's user, command and command line from /proc; leaves them
 * empty when the process is not visible here (gone, other PID namespace). */
void gk_process_describe(gk_process *process);

/* The parsers of gk_process_describe, over what it read from /proc/PID/:
 * `status` (resident memory, user), `stat` (CPU use, given the seconds
 * since boot and the clock ticks per second) as NUL-terminated text, and
 * `cmdline`, already read into process->cmdline: `length` bytes, 1 to
 * sizeof cmdline - 1. */
void gk_proc_parse_status(const char *status, gk_process *process);
void gk_proc_parse_stat(const char *stat, double uptime, long ticks_per_second,
                        gk_process *process);
void gk_proc_parse_cmdline(gk_process *process, size_t length);

/* Reads the CPU model, core counts and memory of this machine. */
void gk_cpu_read(gk_cpu *cpu);

/* The parsers of gk_cpu_read: the model from /proc/cpuinfo's lines, the
 * memory from /proc/meminfo's NUL-terminated text. */
void gk_cpu_parse_cpuinfo(FILE *cpuinfo, gk_cpu *cpu);
void gk_cpu_parse_meminfo(const char *meminfo, gk_cpu *cpu);

/* Copies a PCI bus id in the 8-digit-domain form NVML's v2+ calls and
 * nvidia-smi print ("00000000:3B:00.0"), also when given the short form of
 * old drivers ("0000:3B:00.0"). Text that is not a bus id is copied as is. */
void gk_format_bus_id(char *dst, size_t size, const char *bus_id);

/* Sets a snapshot's absence and diagnosis in one step. */
void gk_snapshot_set_absence(gk_snapshot *snapshot, gk_absence absence, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline gk_field gk_known(uint64_t value)
{
    gk_field field = {value, true};
    return field;
}

#endif
