/* Compute devices: where arrays live and ops run. "cpu", "cuda:N" and
 * "opencl:P:D" (platform P, device D). A backend that has no device here is
 * simply absent: asking for its count gives 0, never an error. */
#ifndef GPUKIT_DEVICE_H
#define GPUKIT_DEVICE_H

#include <gpukit/status.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gk_device_kind {
    GK_DEVICE_CPU = 0,
    GK_DEVICE_CUDA = 1,
    GK_DEVICE_OPENCL = 2,
} gk_device_kind;

/* A device is a small value: compare with gk_device_equal(). */
typedef struct gk_device {
    gk_device_kind kind;
    int index;    /* cuda:N -> N; opencl:P:D -> D; cpu -> 0 */
    int platform; /* opencl:P:D -> P; 0 otherwise */
} gk_device;

#define GK_DEVICE_NAME_MAX 32

/* The CPU, always there. */
gk_device gk_device_cpu(void);

/* Parses "cpu", "cuda" (= cuda:0), "cuda:N", "opencl" (= opencl:0:0),
 * "opencl:P:D". GK_ERR_INVALID_ARGUMENT for anything else; the device need
 * not exist (gk_device_check says whether it does). */
gk_status gk_device_parse(const char *name, gk_device *device);

/* "cpu", "cuda:1", "opencl:0:0" into buf (at least GK_DEVICE_NAME_MAX). */
const char *gk_device_name(gk_device device, char *buf, size_t size);

int gk_device_equal(gk_device a, gk_device b);

/* How many devices of a kind are usable now (the CPU: 1). */
int gk_device_count(gk_device_kind kind);

/* Every device there is: cpu, then cuda:0..., then opencl:P:D... Writes up
 * to `max` (devices may be NULL when max is 0) and returns the total. */
int gk_device_list(gk_device *devices, int max);

/* GK_OK when the device exists and works; else why not (GK_ERR_NOT_FOUND
 * for "no such device", GK_ERR_DRIVER for a failing one). */
gk_status gk_device_check(gk_device device);

/* Whether the CUDA driver library (libcuda.so.1, or GPUKIT_CUDA_LIBRARY)
 * is there to be loaded, looked up where the dynamic loader looks
 * (LD_LIBRARY_PATH, its cache, the system directories) WITHOUT loading
 * it: asking costs no CUDA context and no GPU memory. */
bool gk_cuda_driver_present(void);

/* The best device available: the first usable CUDA GPU, else the CPU - the
 * C form of `"cuda" if torch.cuda.is_available() else "cpu"`. */
gk_device gk_device_default(void);

/* The device to run user kernels on when none is named: the first usable
 * CUDA GPU, else the first usable OpenCL GPU, else any usable OpenCL
 * device (PoCL runs on the CPU); GK_ERR_NOT_FOUND with the fix when there
 * is none. */
gk_status gk_device_accelerator(gk_device *device);

/* A human description ("AMD EPYC 7B13, 2 threads") into buf. */
gk_status gk_device_describe(gk_device device, char *buf, size_t size);

/* Memory of the device in bytes (the CPU: available and total RAM). */
gk_status gk_device_memory(gk_device device, uint64_t *free_bytes, uint64_t *total_bytes);

/* What gpukit's arrays take of a device's memory. GPU devices keep freed
 * memory in a pool and reuse it (as PyTorch's caching allocator does), so
 * nvidia-smi shows in use + cached; the CPU keeps up to four freed arrays
 * from 32 MiB (1 GiB at most) for the next of their size, and leaves the
 * rest to malloc. Sizes count as allocated: rounded to 512 bytes in a GPU
 * pool, to whole 2 MiB pages from 32 MiB on the CPU. */
typedef struct gk_memory_stats {
    uint64_t in_use_bytes;       /* arrays, and temporaries of queued work */
    uint64_t peak_in_use_bytes;  /* the most in use at once, since the start or a reset */
    uint64_t cached_bytes;       /* freed, kept for reuse: the device's, not in use */
    uint64_t driver_allocations; /* allocations asked of the driver (or malloc) so far */
} gk_memory_stats;

/* The device's figures; a GPU this process never used reads all 0 (it is
 * not started for this). With reset_peak, the peak then restarts from
 * what is in use now (torch.cuda.reset_peak_memory_stats). */
gk_status gk_device_memory_stats(gk_device device, bool reset_peak, gk_memory_stats *stats);

/* Gives the memory the device's pool caches in wholly free chunks back to
 * the driver (which waits for queued work that may still use it), so
 * that other processes and libraries (PyTorch, CuPy) in this one can have
 * it (torch.cuda.empty_cache). Free blocks in chunks that arrays still use
 * stay cached. On the CPU, the kept arrays go back, and malloc returns the
 * free memory it can to the system (glibc's malloc_trim). */
gk_status gk_device_empty_cache(gk_device device);
/* gk_device_empty_cache of the CPU and every device this process has used. */
gk_status gk_device_empty_cache_all(void);

/* Waits until all work queued on the device is done. Ops on arrays may run
 * asynchronously on GPU devices; reading results back to the host
 * synchronises by itself. */
gk_status gk_device_synchronize(gk_device device);
/* gk_device_synchronize of every device this process has used (one it
 * never touched is not started for this); the first failure is returned
 * after all were waited for. */
gk_status gk_device_synchronize_all(void);

#ifdef __cplusplus
}
#endif
#endif
