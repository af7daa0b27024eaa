/* The CUDA driver behind the shared GPU backend (gpu/driver.h).
 *
 * Each device is used through its primary context, the one the CUDA
 * runtime (and so cuBLAS, PyTorch, CuPy) uses too, so memory and streams
 * can be shared with them. The context is pushed around every call and
 * popped after, which leaves whatever the calling thread had current
 * untouched. All work of a device goes to one non-blocking stream (it
 * does not wait for the legacy default stream other code in the process
 * may be using), made when the device is first used.
 *
 * Uploads return before the copy is done: the host data is copied into
 * pinned staging buffers, whose copies to the device are queued on the
 * stream, and each buffer is reused only after an event says its last
 * copy finished. Large uploads go in pieces, so copying into one buffer
 * overlaps with the transfer from the one before.
 *
 * Kernels are compiled by NVRTC to machine code for the device's
 * architecture, or, when this NVRTC does not know that architecture yet,
 * to PTX for the newest one it knows, which the driver compiles on load.
 * Built-in programs also come as PTX made at build time by nvcc
 * (CMakeLists-ptx.cmake), so they work without NVRTC.
 *
 * Thread-safe: device state is made once under its lock; the staging
 * buffers and the cuBLAS handle have locks of their own. */
#include "compute/backends/cpu/parallel.h" /* the threads that fill staging memory */
#include "compute/gpu/driver.h"
#include "compute/gpu/gpu.h" /* gk_gpu_alloc: cuSOLVER's workspaces from the pool */

#include "core/embedded.h"
#include "core/error.h"
#include "core/units.h"
#include "ext/cublas.h"
#include "ext/cufft.h"
#include "ext/cusolver.h"
#include "ext/cuda.h"
#include "ext/nvrtc.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The PTX of the built-in programs, "<family>_<dtype>.ptx", generated at
 * build time (empty when nvcc was not found) by CMakeLists-ptx.cmake. */
extern const gk_embedded_file gk_cuda_ptx_files[];
extern const size_t gk_cuda_ptx_files_count;

/* Four 8 MiB pinned buffers per device: enough to keep the copy engine
 * busy while the next piece is copied in, small enough not to matter.
 * Pieces are copied in and out by the CPU backend's threads, STAGING_GRAIN
 * bytes a task: one core's memcpy (about 9 GB/s, less into pages touched
 * for the first time) is far below the copy engine's 50 GB/s and more. */
#define STAGING_SLOTS 4
#define STAGING_BYTES ((size_t)8 << 20)
#define STAGING_GRAIN ((size_t)256 << 10)

/* The most kernel parameters a launch takes (gk_gpu_launch has 24). */
#define MAX_LAUNCH_ARGS 64

/* The JIT's error log kept when a module does not load. */
#define JIT_LOG_BYTES 4096

typedef struct staging_slot {
    void *host;   /* STAGING_BYTES of pinned memory, made on first use */
    CUevent done; /* recorded after the slot's last copy */
    bool pending; /* `done` was recorded and not yet waited for */
} staging_slot;

/* cuFFT plans kept per device, the least recently used replaced: a plan
 * holds a work area of GPU memory, so not many. */
#define FFT_PLANS 4

typedef struct fft_plan {
    cufftHandle handle;
    gk_fft_pass pass;
    bool single;
    int64_t rows, n;
    unsigned long used; /* 0: the slot is empty */
} fft_plan;

typedef struct cuda_device {
    pthread_mutex_t lock; /* making the state below */
    atomic_bool opened;
    CUdevice handle;
    CUcontext context;
    CUstream stream;
    char name[256];
    int sm; /* compute capability as major * 10 + minor */
    uint64_t total_bytes;
    gk_gpu_info info; /* all but `compiler`, which info() fills in */

    pthread_mutex_t staging_lock;
    staging_slot staging[STAGING_SLOTS];
    int staging_next;
    bool staging_unavailable; /* pinned memory could not be had: copy synchronously */

    pthread_mutex_t blas_lock;
    cublasHandle_t blas;
    bool blas_failed;

    pthread_mutex_t solver_lock;
    cusolverDnHandle_t solver;
    bool solver_failed;
    syevjInfo_t syevj;   /* batched eigh's parameters, made on first use */
    gesvdjInfo_t gesvdj; /* batched svd's, the same */

    pthread_mutex_t fft_lock; /* the plans, and running one */
    fft_plan plans[FFT_PLANS];
    unsigned long plan_clock;
} cuda_device;

static pthread_once_t state_once = PTHREAD_ONCE_INIT;
static const gk_cuda *cu; /* set once the driver loaded and started */
static int device_count;
static cuda_device *devices;

static void state_init(void)
{
    const gk_cuda *driver;
    int count = 0;
    if (gk_cuda_open(&driver) != GK_OK)
        return;
    if (driver->DeviceGetCount(&count) != CUDA_SUCCESS || count <= 0)
        return;
    devices = calloc((size_t)count, sizeof *devices);
    if (!devices)
        return;
    for (int i = 0; i < count; i++) {
        pthread_mutex_init(&devices[i].lock, NULL);
        pthread_mutex_init(&devices[i].staging_lock, NULL);
        pthread_mutex_init(&devices[i].blas_lock, NULL);
        pthread_mutex_init(&devices[i].fft_lock, NULL);
        pthread_mutex_init(&devices[i].solver_lock, NULL);
    }
    cu = driver;
    device_count = count;
}

/* Records "cuda:N: <what>: CUDA_ERROR_..." and returns its status. */
static gk_status cu_fail(gk_device device, CUresult result, const char *what)
{
    char message[512];
    snprintf(message, sizeof message, "cuda:%d: %s", device.index, what);
    return gk_cuda_fail(result, message);
}

/* Retains the primary context and makes the stream: the first use. */
static gk_status setup(cuda_device *d, gk_device device)
{
    int major = 0, minor = 0, sms = 0, threads = 0, shared = 0;
    size_t total = 0;
    CUresult r = cu->DeviceGet(&d->handle, device.index);
    if (r != CUDA_SUCCESS)
        return cu_fail(device, r, "cuDeviceGet");
    if ((r = cu->DeviceGetName(d->name, (int)sizeof d->name, d->handle)) != CUDA_SUCCESS ||
        (r = cu->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                    d->handle)) != CUDA_SUCCESS ||
        (r = cu->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                    d->handle)) != CUDA_SUCCESS ||
        (r = cu->DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                    d->handle)) != CUDA_SUCCESS ||
        (r = cu->DeviceGetAttribute(&threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                    d->handle)) != CUDA_SUCCESS ||
        (r = cu->DeviceGetAttribute(&shared, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
                                    d->handle)) != CUDA_SUCCESS ||
        (r = cu->DeviceTotalMem(&total, d->handle)) != CUDA_SUCCESS)
        return cu_fail(device, r, "reading the device's properties");
    d->name[sizeof d->name - 1] = '\0';
    d->sm = major * 10 + minor;
    d->total_bytes = total;

    if ((r = cu->DevicePrimaryCtxRetain(&d->context, d->handle)) != CUDA_SUCCESS)
        return cu_fail(device, r,
                       "cannot make a context (cuDevicePrimaryCtxRetain; a GPU in "
                       "exclusive-process mode may be in use by another process)");
    if ((r = cu->CtxPushCurrent(d->context)) != CUDA_SUCCESS) {
        cu->DevicePrimaryCtxRelease(d->handle);
        return cu_fail(device, r, "cuCtxPushCurrent");
    }
    r = cu->StreamCreate(&d->stream, CU_STREAM_NON_BLOCKING);
    CUcontext popped;
    cu->CtxPopCurrent(&popped);
    if (r != CUDA_SUCCESS) {
        cu->DevicePrimaryCtxRelease(d->handle);
        return cu_fail(device, r, "cuStreamCreate");
    }

    gk_gpu_info *info = &d->info;
    memset(info, 0, sizeof *info);
    snprintf(info->architecture, sizeof info->architecture, "sm_%d", d->sm);
    info->gpu = true;
    info->compute_units = sms;
    info->max_group_size = threads;
    info->max_local_bytes = (uint64_t)shared;
    info->fp64 = true;
    info->max_allocation = total;
    return GK_OK;
}

/* The state of a usable device, made on first use. */
static gk_status open_device(gk_device device, cuda_device **out)
{
    const gk_cuda *driver;
    gk_status status = gk_cuda_open(&driver);
    if (status != GK_OK)
        return gk_fail(status, "cuda:%d: %s", device.index, gk_last_error());
    pthread_once(&state_once, state_init);
    if (device.kind != GK_DEVICE_CUDA || device.index < 0 || device.index >= device_count)
        return gk_fail(GK_ERR_NOT_FOUND,
                       "cuda:%d: no such device: the CUDA driver sees %d GPU(s)%s", device.index,
                       device_count,
                       getenv("CUDA_VISIBLE_DEVICES") ? " (CUDA_VISIBLE_DEVICES is set)" : "");
    cuda_device *d = &devices[device.index];
    if (!atomic_load_explicit(&d->opened, memory_order_acquire)) {
        pthread_mutex_lock(&d->lock);
        if (!atomic_load_explicit(&d->opened, memory_order_relaxed)) {
            status = setup(d, device);
            if (status == GK_OK)
                atomic_store_explicit(&d->opened, true, memory_order_release);
        }
        pthread_mutex_unlock(&d->lock);
        if (status != GK_OK)
            return status;
    }
    *out = d;
    return GK_OK;
}

/* Opens the device and makes its context current on this thread; every
 * successful enter() is paired with leave(). */
static gk_status enter(gk_device device, cuda_device **out)
{
    gk_status status = open_device(device, out);
    if (status != GK_OK)
        return status;
    CUresult r = cu->CtxPushCurrent((*out)->context);
    return r == CUDA_SUCCESS ? GK_OK : cu_fail(device, r, "cuCtxPushCurrent");
}

static void leave(void)
{
    CUcontext popped;
    cu->CtxPopCurrent(&popped);
}

/* --- devices --- */

static int cuda_list(gk_device *list, int max)
{
    const gk_cuda *driver;
    if (gk_cuda_open(&driver) != GK_OK)
        return 0;
    pthread_once(&state_once, state_init);
    for (int i = 0; i < device_count && i < max; i++)
        list[i] = (gk_device){GK_DEVICE_CUDA, i, 0};
    return device_count;
}

static gk_status cuda_check(gk_device device)
{
    cuda_device *d;
    return open_device(device, &d);
}

static gk_status cuda_describe(gk_device device, char *buf, size_t size)
{
    cuda_device *d;
    char total[32];
    gk_status status = open_device(device, &d);
    if (status != GK_OK)
        return status;
    gk_format_size(total, sizeof total, d->total_bytes);
    snprintf(buf, size, "%s, compute capability %d.%d, %d SMs, %s", d->name, d->sm / 10,
             d->sm % 10, d->info.compute_units, total);
    return GK_OK;
}

static gk_status cuda_memory(gk_device device, uint64_t *free_bytes, uint64_t *total_bytes)
{
    cuda_device *d;
    size_t available = 0, total = 0;
    gk_status status = enter(device, &d);
    if (status != GK_OK)
        return status;
    CUresult r = cu->MemGetInfo(&available, &total);
    leave();
    if (r != CUDA_SUCCESS)
        return cu_fail(device, r, "cuMemGetInfo");
    *free_bytes = available;
    *total_bytes = total;
    return GK_OK;
}

static gk_status cuda_info(gk_device device, gk_gpu_info *info)
{
    cuda_device *d;
    const gk_nvrtc *nvrtc;
    gk_status status = open_device(device, &d);
    if (status != GK_OK)
        return status;
    *info = d->info;
    if (gk_nvrtc_open(&nvrtc) == GK_OK)
        snprintf(info->compiler, sizeof info->compiler, "nvrtc %d.%d", nvrtc->major,
                 nvrtc->minor);
    else
        snprintf(info->compiler, sizeof info->compiler, "driver JIT");
    return GK_OK;
}

/* --- memory --- */

static CUdeviceptr device_pointer(const char *address)
{
    return (CUdeviceptr)(uintptr_t)address;
}

static gk_status cuda_allocate(gk_device device, size_t bytes, char **address)
{
    cuda_device *d;
    CUdeviceptr pointer = 0;
    gk_status status = enter(device, &d);
    if (status != GK_OK)
        return status;
    /* cuMemAlloc refuses 0 bytes; the pool may ask for it. */
    CUresult r = cu->MemAlloc(&pointer, bytes ? bytes : 1);
    size_t available = 0, total = 0;
    if (r == CUDA_ERROR_OUT_OF_MEMORY && cu->MemGetInfo(&available, &total) != CUDA_SUCCESS)
        available = total = 0;
    leave();
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        char want[32], have[32], all[32];
        return gk_fail(GK_ERR_OUT_OF_MEMORY,
                       "cuda:%d: out of GPU memory: %s wanted, %s free of %s; free arrays no "
                       "longer needed, use smaller pieces, or pick a GPU with more free memory",
                       device.index, gk_format_size(want, sizeof want, bytes),
                       gk_format_size(have, sizeof have, available),
                       gk_format_size(all, sizeof all, total));
    }
    if (r != CUDA_SUCCESS)
        return cu_fail(device, r, "cuMemAlloc");
    *address = (char *)(uintptr_t)pointer;
    return GK_OK;
}

static void cuda_free(gk_device device, char *address)
{
    cuda_device *d;
    if (!address || enter(device, &d) != GK_OK)
        return;
    /* Queued work may still use the memory; the driver would wait for
     * the whole device otherwise, this waits for our stream only. */
    cu->StreamSynchronize(d->stream);
    cu->MemFree(device_pointer(address));
    leave();
}

static void cuda_resolve(const char *address, char **base, size_t *offset)
{
    /* CUDA addresses are plain device pointers: offsets are already in. */
    *base = (char *)address;
    *offset = 0;
}

typedef struct host_copy {
    char *to;
    const char *from;
    size_t bytes;
} host_copy;

static void host_copy_range(void *context, int64_t first, int64_t end)
{
    const host_copy *c = context;
    size_t begin = (size_t)first * STAGING_GRAIN, stop = (size_t)end * STAGING_GRAIN;
    if (stop > c->bytes)
        stop = c->bytes;
    memcpy(c->to + begin, c->from + begin, stop - begin);
}

/* memcpy between pageable and staging memory on the CPU's threads, from
 * STAGING_PARALLEL_MIN bytes: below that one core copies sooner than the
 * team wakes (the pointer tables and infos of a stack of matrices). */
#define STAGING_PARALLEL_MIN ((size_t)1 << 20)

static void staging_memcpy(void *to, const void *from, size_t bytes)
{
    host_copy c = {to, from, bytes};
    cpu_parallel((int64_t)((bytes + STAGING_GRAIN - 1) / STAGING_GRAIN),
                 bytes >= STAGING_PARALLEL_MIN, host_copy_range, &c);
}

/* A download's destination is faulted in ahead of the copies out of the
 * staging slots, POPULATE_BYTES at a time, one 2 MiB (huge) page a task.
 * Fresh pages cost a fault and the kernel's zeroing each at first write,
 * and one 8 MiB piece spans four huge pages: copied out as it came, at
 * most four threads faulted at once, and a download into a new 256 MiB
 * array ran at 7-9 GB/s on an H100 machine. Faulted in ahead, every
 * thread zeroes pages of its own while the DMA runs: 13-19 GB/s there
 * (then bound by the machine's first-touch rate; the CPU backend keeps
 * large freed blocks, so a loop's next download lands in warm pages). */
#define POPULATE_BYTES ((size_t)32 << 20)
#define POPULATE_GRAIN ((size_t)2 << 20)

typedef struct host_populate {
    uintptr_t base;        /* `first` rounded down to a huge page */
    uintptr_t first, end;  /* the whole pages to fault in */
} host_populate;

static void host_populate_range(void *context, int64_t first, int64_t end)
{
    const host_populate *p = context;
    uintptr_t begin = p->base + (uintptr_t)first * POPULATE_GRAIN;
    uintptr_t stop = p->base + (uintptr_t)end * POPULATE_GRAIN;
    begin = begin < p->first ? p->first : begin;
    stop = stop > p->end ? p->end : stop;
#ifdef MADV_POPULATE_WRITE
    /* Linux 5.14 on; pages already there are left as they are. Refused
     * (an older kernel, a mapping it cannot populate), the copy out
     * faults the pages in as before. */
    if (stop > begin)
        madvise((void *)begin, stop - begin, MADV_POPULATE_WRITE);
#else
    (void)begin, (void)stop;
#endif
}

/* Faults in the whole pages of [to, to + bytes) on the CPU's threads. */
static void populate_host(char *to, size_t bytes)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = ((uintptr_t)to + page - 1) / page * page;
    uintptr_t end = ((uintptr_t)to + bytes) / page * page;
    if (end <= first)
        return;
    host_populate p = {first / POPULATE_GRAIN * POPULATE_GRAIN, first, end};
    cpu_parallel((int64_t)((end - p.base + POPULATE_GRAIN - 1) / POPULATE_GRAIN), true,
                 host_populate_range, &p);
}

/* The next staging buffer, once its previous copy is done; NULL when
 * pinned memory cannot be had (then the caller copies synchronously).
 * Called with the staging lock held. */
static staging_slot *take_staging(cuda_device *d, gk_device device, gk_status *status)
{
    *status = GK_OK;
    if (d->staging_unavailable)
        return NULL;
    staging_slot *slot = &d->staging[d->staging_next];
    if (!slot->host) {
        if (cu->MemHostAlloc(&slot->host, STAGING_BYTES, 0) != CUDA_SUCCESS) {
            slot->host = NULL;
            d->staging_unavailable = true;
            return NULL;
        }
        if (cu->EventCreate(&slot->done, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
            cu->MemFreeHost(slot->host);
            slot->host = NULL;
            d->staging_unavailable = true;
            return NULL;
        }
    }
    if (slot->pending) {
        CUresult r = cu->EventSynchronize(slot->done);
        if (r != CUDA_SUCCESS) {
            *status = cu_fail(device, r, "waiting for an earlier upload");
            return NULL;
        }
        slot->pending = false;
    }
    d->staging_next = (d->staging_next + 1) % STAGING_SLOTS;
    return slot;
}

/* Writes `bytes` bytes of an upload made on the host (not copied from
 * memory), from byte `at` of the whole, at `to`. */
typedef void (*upload_maker)(const void *context, char *to, size_t at, size_t bytes);

/* upload's rest, from byte `done` on, when pinned memory cannot be had:
 * a copy from pageable memory (the caller's, or the made bytes in a
 * buffer of ours) on the device's stream, waited for. On the stream, so
 * that the work queued after it finds it there: cuMemcpyHtoD from
 * pageable memory returns once the bytes are staged, and it runs on the
 * legacy stream, which the device's (non-blocking) stream does not wait
 * for. */
static gk_status upload_unstaged(cuda_device *d, gk_device device, CUdeviceptr to, size_t bytes,
                                 size_t done, const char *host, upload_maker make,
                                 const void *context)
{
    char *made = NULL;
    if (!host && !(made = malloc(bytes - done)))
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "cuda:%d: out of host memory for an upload",
                       device.index);
    if (made)
        make(context, made, done, bytes - done);
    CUresult r = cu->MemcpyHtoDAsync(to + done, host ? host + done : made, bytes - done,
                                     d->stream);
    if (r == CUDA_SUCCESS)
        r = cu->StreamSynchronize(d->stream);
    free(made);
    return r == CUDA_SUCCESS ? GK_OK : cu_fail(device, r, "copying to the GPU");
}

/* Queues an upload of `bytes` bytes to `to` on the device's stream through
 * the pinned staging slots: copied from `host`, or, with host NULL, made
 * by `make` straight into them (nothing in between to allocate or copy).
 * Returns once the last piece is queued. */
static gk_status upload(gk_device device, CUdeviceptr to, size_t bytes, const char *host,
                        upload_maker make, const void *context)
{
    cuda_device *d;
    if (bytes == 0)
        return GK_OK;
    gk_status status = enter(device, &d);
    if (status != GK_OK)
        return status;
    size_t done = 0;
    pthread_mutex_lock(&d->staging_lock);
    while (done < bytes) {
        staging_slot *slot = take_staging(d, device, &status);
        if (status != GK_OK)
            break;
        if (!slot) {
            status = upload_unstaged(d, device, to, bytes, done, host, make, context);
            break;
        }
        size_t piece = bytes - done < STAGING_BYTES ? bytes - done : STAGING_BYTES;
        if (host)
            staging_memcpy(slot->host, host + done, piece);
        else
            make(context, slot->host, done, piece);
        CUresult r = cu->MemcpyHtoDAsync(to + done, slot->host, piece, d->stream);
        if (r == CUDA_SUCCESS)
            r = cu->EventRecord(slot->done, d->stream);
        if (r != CUDA_SUCCESS) {
            status = cu_fail(device, r, "queueing a copy to the GPU");
            /* a copy queued without its event is done before the slot is
             * used again */
            cu->StreamSynchronize(d->stream);
            break;
        }
        slot->pending = true;
        done += piece;
    }
    pthread_mutex_unlock(&d->staging_lock);
    leave();
    return status;
}

static gk_status cuda_upload(gk_device device, char *address, const void *host, size_t bytes)
{
    return upload(device, device_pointer(address), bytes, host, NULL, NULL);
}

/* Device to pageable host memory through the pinned staging slots, so
 * that the copy out of one slot overlaps the DMA into the next: the
 * driver's own pageable copy stages too, but one piece at a time. */
static gk_status cuda_download(gk_device device, void *host, const char *address, size_t bytes)
{
    cuda_device *d;
    if (bytes == 0)
        return GK_OK;
    gk_status status = enter(device, &d);
    if (status != GK_OK)
        return status;
    char *to = host;
    CUdeviceptr from = device_pointer(address);
    /* the slots in flight, oldest first: where each piece goes */
    staging_slot *flight[STAGING_SLOTS];
    size_t flight_at[STAGING_SLOTS], flight_bytes[STAGING_SLOTS];
    int queued = 0;
    size_t done = 0;
    /* the destination's bytes faulted in ahead (all of a small download,
     * which lands in memory malloc has had before more often than not) */
    size_t populated = bytes < POPULATE_BYTES ? bytes : 0;
    pthread_mutex_lock(&d->staging_lock);
    while (status == GK_OK && (done < bytes || queued > 0)) {
        staging_slot *slot = NULL;
        if (done < bytes && queued < STAGING_SLOTS - 1)
            slot = take_staging(d, device, &status);
        if (status != GK_OK)
            break;
        if (slot) {
            size_t piece = bytes - done < STAGING_BYTES ? bytes - done : STAGING_BYTES;
            CUresult r = cu->MemcpyDtoHAsync(slot->host, from + done, piece, d->stream);
            if (r == CUDA_SUCCESS)
                r = cu->EventRecord(slot->done, d->stream);
            if (r != CUDA_SUCCESS) {
                status = cu_fail(device, r, "queueing a copy from the GPU");
                cu->StreamSynchronize(d->stream); /* as upload's */
                break;
            }
            slot->pending = true;
            flight[queued] = slot, flight_at[queued] = done, flight_bytes[queued] = piece;
            queued++;
            done += piece;
            continue;
        }
        if (queued == 0) {
            /* No pinned memory: the driver's synchronous copy, after the
             * work queued before it. */
            CUresult r = cu->StreamSynchronize(d->stream);
            if (r == CUDA_SUCCESS)
                r = cu->MemcpyDtoH(to + done, from + done, bytes - done);
            if (r != CUDA_SUCCESS)
                status = cu_fail(device, r, "copying from the GPU");
            done = bytes;
            break;
        }
        /* while the DMA runs, fault in the destination a step ahead */
        if (populated < bytes && populated < flight_at[0] + POPULATE_BYTES) {
            size_t step = bytes - populated < POPULATE_BYTES ? bytes - populated : POPULATE_BYTES;
            populate_host(to + populated, step);
            populated += step;
        }
        /* the oldest piece: wait for it, then copy it out */
        CUresult r = cu->EventSynchronize(flight[0]->done);
        if (r != CUDA_SUCCESS) {
            status = cu_fail(device, r, "copying from the GPU");
            break;
        }
        flight[0]->pending = false;
        staging_memcpy(to + flight_at[0], flight[0]->host, flight_bytes[0]);
        queued--;
        memmove(flight, flight + 1, sizeof flight[0] * (size_t)queued);
        memmove(flight_at, flight_at + 1, sizeof flight_at[0] * (size_t)queued);
        memmove(flight_bytes, flight_bytes + 1, sizeof flight_bytes[0] * (size_t)queued);
    }
    pthread_mutex_unlock(&d->staging_lock);
    leave();
    return status;
}

static gk_status cuda_copy(gk_device device, char *to, const char *from, size_t bytes)
{
    cuda_device *d;
    if (bytes == 0)
        return GK_OK;
    gk_status status = enter(device, &d);
    if (status != GK_OK)
        return status;
    CUresult r =
        cu->MemcpyDtoDAsync(device_pointer(to), device_pointer(from), bytes, d->stream);
    leave();
    return r == CUDA_SUCCESS ? GK_OK : cu_fail(device, r, "queueing a copy on the GPU");
}

static gk_status cuda_synchronize(gk_device device)
{
    cuda_device *d;
    gk_status status = enter(device, &d);
    if (status != GK_OK)
        return status;
    CUresult r = cu->StreamSynchronize(d->stream);
    leave();
    return r == CUDA_SUCCESS ? GK_OK : cu_fail(device, r, "waiting for the GPU");
}

/* --- kernels --- */

static bool is_elf(const void *image, size_t size)
{
    return size >= 4 && memcmp(image, "\x7f" "ELF", 4) == 0;
}

/* Loads a cubin or PTX text into the device's context. */
static gk_status load_image(gk_device device, const void *image, size_t size, CUmodule *module)
{
    cuda_device *d;
    char *copy = NULL;
    if (!image || size == 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "cuda:%d: no program to load (empty binary)",
                       device.index);
    /* The driver reads PTX up to its NUL; a binary from a file may lack it. */
    if (!is_elf(image, size) && ((const char *)image)[size - 1] != '\0') {
        copy = malloc(size + 1);
        if (!copy)
            return gk_fail(GK_ERR_OUT_OF_MEMORY, "cuda:%d: out of memory loading a program",
                           device.index);
        memcpy(copy, image, size);
        copy[size] = '\0';
        image = copy;
    }
    gk_status status = enter(device, &d);
    if (status != GK_OK) {
        free(copy);
        return status;
    }
    char log[JIT_LOG_BYTES] = "";
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, (void *)(uintptr_t)sizeof log};
    CUresult r = cu->ModuleLoadDataEx(module, image, 2, options, values);
    leave();
    free(copy);
    if (r == CUDA_SUCCESS)
        return GK_OK;

    log[sizeof log - 1] = '\0';
    char name[64];
    gk_cuda_error_name(r, name, sizeof name);
    const char *fix = "";
    if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || r == CUDA_ERROR_NO_BINARY_FOR_GPU ||
        r == CUDA_ERROR_INVALID_IMAGE)
        fix = ": the program was made by a newer CUDA than this driver supports; update the "
              "NVIDIA driver, or use the NVRTC of an older CUDA (GPUKIT_NVRTC_LIBRARY)";
    return gk_fail(GK_ERR_DRIVER,
                   "cuda:%d: cannot load the program into %s (driver CUDA %d.%d): %s%s%s%s",
                   device.index, d->name, cu->driver_version / 1000,
                   cu->driver_version % 1000 / 10, name, fix, *log ? "\n" : "", log);
}

static gk_status cuda_build(gk_device device, gk_gpu_language language, const char *source,
                            const char *options, gk_gpu_module **module, void **binary,
                            size_t *size)
{
    cuda_device *d;
    const gk_nvrtc *nvrtc;
    (void)language; /* portable sources already start with dialect.h */
    gk_status status = open_device(device, &d);
    if (status != GK_OK)
        return status;
    if (gk_nvrtc_open(&nvrtc) != GK_OK)
        return gk_fail(GK_ERR_NOT_FOUND,
                       "cuda:%d: user kernels need the CUDA toolkit's NVRTC (%s); gpukit's "
                       "built-in ops still work from their built-in PTX",
                       device.index, gk_last_error());

    /* Machine code when NVRTC knows this GPU; else PTX for the newest
     * architecture it knows that this GPU can run, compiled on load. */
    bool cubin = gk_nvrtc_supports(nvrtc, d->sm);
    int target = cubin ? d->sm : gk_nvrtc_newest_up_to(nvrtc, d->sm);
    if (target == 0)
        return gk_fail(GK_ERR_NOT_FOUND,
                       "cuda:%d: NVRTC %d.%d cannot compile for %s (sm_%d), which it no longer "
                       "supports (its oldest is sm_%d): point GPUKIT_NVRTC_LIBRARY at the NVRTC "
                       "of an older CUDA toolkit",
                       device.index, nvrtc->major, nvrtc->minor, d->name, d->sm,
                       nvrtc->arch_count ? nvrtc->archs[0] : 0);
    char arch[32];
    snprintf(arch, sizeof arch, "sm_%d", target);

    void *image;
    size_t image_size;
    status = gk_nvrtc_compile(source, "gpukit_kernel.cu", options, arch, cubin, &image,
                              &image_size, NULL);
    if (status != GK_OK)
        return status;
    CUmodule loaded;
    status = load_image(device, image, image_size, &loaded);
    if (status != GK_OK) {
        free(image);
        return status;
    }
    *module = (gk_gpu_module *)(void *)loaded;
    if (binary) {
        *binary = image;
        *size = image_size;
    } else {
        free(image);
    }
    return GK_OK;
}

static gk_status cuda_load(gk_device device, const void *binary, size_t size,
                           gk_gpu_module **module)
{
    CUmodule loaded;
    gk_status status = load_image(device, binary, size, &loaded);
    if (status == GK_OK)
        *module = (gk_gpu_module *)(void *)loaded;
    return status;
}

static void cuda_unload(gk_device device, gk_gpu_module *module)
{
    cuda_device *d;
    if (!module || enter(device, &d) != GK_OK)
        return;
    cu->ModuleUnload((CUmodule)(void *)module);
    leave();
}

static gk_status cuda_function(gk_device device, gk_gpu_module *module, const char *name,
                               gk_gpu_function **function)
{
    cuda_device *d;
    CUfunction found;
    gk_status status = enter(device, &d);
    if (status != GK_OK)
        return status;
    CUresult r = cu->ModuleGetFunction(&found, (CUmodule)(void *)module, name);
    leave();
    if (r == CUDA_ERROR_NOT_FOUND)
        return gk_fail(GK_ERR_NOT_FOUND,
                       "cuda:%d: the program has no kernel named '%s': check the name (kernels "
                       "are declared GK_KERNEL, or extern \"C\" __global__ in CUDA C, so that "
                       "their names are not mangled)",
                       device.index, name);
    if (r != CUDA_SUCCESS)
        return cu_fail(device, r, "cuModuleGetFunction");
    *function = (gk_gpu_function *)(void *)found;
    return GK_OK;
}

static gk_status cuda_launch(gk_device device, gk_gpu_function *function, const size_t groups[3],
                             const size_t local[3], int count, const gk_gpu_arg *args,
                             gk_gpu_stream *stream)
{
    cuda_device *d;
    void *params[MAX_LAUNCH_ARGS];
    CUdeviceptr pointers[MAX_LAUNCH_ARGS];
    unsigned int grid[3], block[3];
    if (count < 0 || count > MAX_LAUNCH_ARGS)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "cuda:%d: %d kernel arguments (at most %d)",
                       device.index, count, MAX_LAUNCH_ARGS);
    for (int i = 0; i < 3; i++) {
        if (groups[i] > UINT_MAX || local[i] > UINT_MAX)
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "cuda:%d: launch of %zu x %zu work-items in dimension %d is too "
                           "large for CUDA",
                           device.index, groups[i], local[i], i);
        grid[i] = (unsigned int)groups[i];
        block[i] = (unsigned int)local[i];
        if (grid[i] == 0 || block[i] == 0)
            return GK_OK; /* no work-items */
    }
    /* cuLaunchKernel reads each parameter's bytes through a pointer; a
     * buffer parameter's bytes are its CUdeviceptr. */
    for (int i = 0; i < count; i++) {
        if (args[i].kind == GK_GPU_ARG_BUFFER) {
            pointers[i] = device_pointer(args[i].address);
            params[i] = &pointers[i];
        } else {
            params[i] = (void *)args[i].value;
        }
    }
    gk_status status = enter(device, &d);
    if (status != GK_OK)
        return status;
    CUstream on = stream ? (CUstream)(void *)stream : d->stream;
    CUresult r = cu->LaunchKernel((CUfunction)(void *)function, grid[0], grid[1], grid[2],
                                  block[0], block[1], block[2], 0, on, count ? params : NULL,
                                  NULL);
    leave();
    return r == CUDA_SUCCESS ? GK_OK : cu_fail(device, r, "cuLaunchKernel");
}

/* --- streams --- */

static gk_status cuda_stream_create(gk_device device, gk_gpu_stream **stream)
{
    cuda_device *d;
    CUstream made;
    gk_status status = enter(device, &d);
    if (status != GK_OK)
        return status;
    CUresult r = cu->StreamCreate(&made, CU_STREAM_NON_BLOCKING);
    leave();
    if (r != CUDA_SUCCESS)
        return cu_fail(device, r, "cuStreamCreate");
    *stream = (gk_gpu_stream *)(void *)made;
    return GK_OK;
}

static gk_status cuda_stream_synchronize(gk_device device, gk_gpu_stream *stream)
{
    cuda_device *d;
    gk_status status = enter(device, &d);
    if (status != GK_OK)
        return status;
    CUresult r = cu->StreamSynchronize(stream ? (CUstream)(void *)stream : d->stream);
    leave();
    return r == CUDA_SUCCESS ? GK_OK : cu_fail(device, r, "waiting for a stream");
}

static void cuda_stream_destroy(gk_device device, gk_gpu_stream *stream)
{
    cuda_device *d;
    if (!stream || enter(device, &d) != GK_OK)
        return;
    cu->StreamDestroy((CUstream)(void *)stream);
    leave();
}

static gk_status cuda_stream_order(gk_device device, gk_gpu_stream *later, gk_gpu_stream *earlier)
{
    cuda_device *d;
    CUevent event;
    gk_status status = enter(device, &d);
    if (status != GK_OK)
        return status;
    CUstream after = later ? (CUstream)(void *)later : d->stream;
    CUstream before = earlier ? (CUstream)(void *)earlier : d->stream;
    CUresult r = CUDA_SUCCESS;
    if (after != before) {
        /* The event may be destroyed at once: the wait keeps what it needs. */
        r = cu->EventCreate(&event, CU_EVENT_DISABLE_TIMING);
        if (r == CUDA_SUCCESS) {
            r = cu->EventRecord(event, before);
            if (r == CUDA_SUCCESS)
                r = cu->StreamWaitEvent(after, event, 0);
            cu->EventDestroy(event);
        }
    }
    leave();
    return r == CUDA_SUCCESS ? GK_OK : cu_fail(device, r, "ordering two streams");
}

static gk_status cuda_device_synchronize(gk_device device)
{
    cuda_device *d;
    gk_status status = enter(device, &d);
    if (status != GK_OK)
        return status;
    CUresult r = cu->CtxSynchronize();
    leave();
    return r == CUDA_SUCCESS ? GK_OK : cu_fail(device, r, "waiting for the device");
}

/* --- cuBLAS --- */

/* The device's cuBLAS handle, made on the first use on the device's
 * stream; NULL when cuBLAS could not start (said once). Called with
 * blas_lock held, inside enter(). */
static cublasHandle_t blas_handle(cuda_device *d, gk_device device, const gk_cublas *blas)
{
    if (!d->blas && !d->blas_failed) {
        cublasStatus_t made = blas->Create(&d->blas);
        if (made == CUBLAS_STATUS_SUCCESS)
            made = blas->SetStream(d->blas, d->stream);
        if (made != CUBLAS_STATUS_SUCCESS) {
            if (d->blas)
                blas->Destroy(d->blas);
            d->blas = NULL;
            d->blas_failed = true;
            fprintf(stderr, "gpukit: cuda:%d: cuBLAS could not start (%s); using gpukit's own "
                    "matrix kernel\n", device.index, gk_cublas_status_name(made));
        }
    }
    return d->blas;
}

static gk_status cuda_blas_matmul(gk_device device, gk_dtype dtype, int64_t batch, int64_t m,
                                  int64_t n, int64_t k, const char *a, int64_t a_batch_stride,
                                  const char *b, int64_t b_batch_stride, char *c,
                                  unsigned transposed)
{
    cuda_device *d;
    const gk_cublas *blas;
    gk_status status = gk_cublas_open(&blas);
    if (status != GK_OK)
        return status;
    if (!gk_dtype_is_inexact(dtype))
        return gk_fail(GK_ERR_NOT_FOUND, "cuBLAS multiplies only floating matrices");
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || batch > INT_MAX)
        return gk_fail(GK_ERR_NOT_FOUND, "matrices too large for cuBLAS's 32-bit sizes");
    if (batch <= 0 || m <= 0 || n <= 0)
        return GK_OK;
    status = enter(device, &d);
    if (status != GK_OK)
        return status;
    pthread_mutex_lock(&d->blas_lock);
    if (!blas_handle(d, device, blas)) {
        pthread_mutex_unlock(&d->blas_lock);
        leave();
        return gk_fail(GK_ERR_NOT_FOUND, "cuda:%d: cuBLAS could not start", device.index);
    }

    /* Row-major C = A B is column-major C^T = B^T A^T, and a row-major
     * matrix read column-major is its transpose: so multiply with the
     * operands swapped and no transposition, n x m = (n x k) (k x m). An
     * operand stored transposed reads column-major as itself: cuBLAS
     * transposes it (op T), its leading dimension the other side. */
    int in = (int)n, im = (int)m, ik = (int)k;
    bool a_t = transposed & GK_MATMUL_A_TRANSPOSED, b_t = transposed & GK_MATMUL_B_TRANSPOSED;
    cublasOperation_t op_a = a_t ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t op_b = b_t ? CUBLAS_OP_T : CUBLAS_OP_N;
    int k_or_1 = ik > 0 ? ik : 1; /* leading dimensions are at least 1 */
    int ldb = b_t ? k_or_1 : in, lda = a_t ? im : k_or_1, ldc = in;
    long long stride_c = (long long)m * n;
    cublasStatus_t result;
    /* one and zero in the dtype: complex ones as (real, imaginary) */
    const float one32[2] = {1, 0}, zero32[2] = {0, 0};
    const double one64[2] = {1, 0}, zero64[2] = {0, 0};
    const void *one = dtype == GK_FLOAT32 || dtype == GK_COMPLEX64 ? (const void *)one32
                                                                   : (const void *)one64;
    const void *zero = dtype == GK_FLOAT32 || dtype == GK_COMPLEX64 ? (const void *)zero32
                                                                    : (const void *)zero64;
    const float one_half = 1, zero_half = 0; /* GemmEx's alpha, beta: float */
    int half_type = dtype == GK_FLOAT16 ? CUDA_R_16F : CUDA_R_16BF;
    if (gk_dtype_is_half(dtype) && batch == 1) {
        result = blas->GemmEx(d->blas, op_b, op_a, in, im, ik, &one_half, b, half_type, ldb, a,
                              half_type, lda, &zero_half, c, half_type, ldc, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT);
    } else if (gk_dtype_is_half(dtype)) {
        result = blas->GemmStridedBatchedEx(d->blas, op_b, op_a, in, im, ik, &one_half, b,
                                            half_type, ldb, b_batch_stride, a, half_type, lda,
                                            a_batch_stride, &zero_half, c, half_type, ldc, stride_c,
                                            (int)batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    } else if (batch == 1) {
        switch (dtype) {
        case GK_FLOAT32:
            result = blas->Sgemm(d->blas, op_b, op_a, in, im, ik, one, (const float *)b, ldb,
                                 (const float *)a, lda, zero, (float *)c, ldc);
            break;
        case GK_FLOAT64:
            result = blas->Dgemm(d->blas, op_b, op_a, in, im, ik, one, (const double *)b, ldb,
                                 (const double *)a, lda, zero, (double *)c, ldc);
            break;
        case GK_COMPLEX64:
            result =
                blas->Cgemm(d->blas, op_b, op_a, in, im, ik, one, b, ldb, a, lda, zero, c, ldc);
            break;
        default:
            result =
                blas->Zgemm(d->blas, op_b, op_a, in, im, ik, one, b, ldb, a, lda, zero, c, ldc);
        }
    } else {
        switch (dtype) {
        case GK_FLOAT32:
            result = blas->SgemmStridedBatched(
                d->blas, op_b, op_a, in, im, ik, one, (const float *)b, ldb, b_batch_stride,
                (const float *)a, lda, a_batch_stride, zero, (float *)c, ldc, stride_c, (int)batch);
            break;
        case GK_FLOAT64:
            result = blas->DgemmStridedBatched(d->blas, op_b, op_a, in, im, ik, one,
                                               (const double *)b, ldb, b_batch_stride,
                                               (const double *)a, lda, a_batch_stride, zero,
                                               (double *)c, ldc, stride_c, (int)batch);
            break;
        case GK_COMPLEX64:
            result = blas->CgemmStridedBatched(d->blas, op_b, op_a, in, im, ik, one, b, ldb,
                                               b_batch_stride, a, lda, a_batch_stride, zero, c, ldc,
                                               stride_c, (int)batch);
            break;
        default:
            result = blas->ZgemmStridedBatched(d->blas, op_b, op_a, in, im, ik, one, b, ldb,
                                               b_batch_stride, a, lda, a_batch_stride, zero, c, ldc,
                                               stride_c, (int)batch);
        }
    }
    pthread_mutex_unlock(&d->blas_lock);
    leave();
    /* a GPU too old for a 16-bit type (bfloat16 before sm_80): the core
     * multiplies float32 copies instead */
    if (gk_dtype_is_half(dtype) &&
        (result == CUBLAS_STATUS_NOT_SUPPORTED || result == CUBLAS_STATUS_ARCH_MISMATCH))
        return gk_fail(GK_ERR_NOT_FOUND, "cuda:%d: cuBLAS has no %s GEMM for this GPU",
                       device.index, gk_dtype_name(dtype));
    if (result != CUBLAS_STATUS_SUCCESS)
        return gk_fail(result == CUBLAS_STATUS_ALLOC_FAILED ? GK_ERR_OUT_OF_MEMORY : GK_ERR_DRIVER,
                       "cuda:%d: cuBLAS %cgemm of %lld x %lld x %lld failed: %s", device.index,
                       "sdczh"[dtype == GK_FLOAT64      ? 1
                               : dtype == GK_COMPLEX64  ? 2
                               : dtype == GK_COMPLEX128 ? 3
                               : gk_dtype_is_half(dtype) ? 4
                                                         : 0],
                       (long long)m, (long long)k, (long long)n,
                       gk_cublas_status_name(result));
    return GK_OK;
}

/* --- cuFFT --- */

/* The device's plan for a pass (made, or found), with the FFT lock held. */
static gk_status fft_plan_for(cuda_device *d, gk_device device, const gk_cufft *fft,
                              gk_fft_pass pass, bool single, int64_t rows, int64_t n,
                              cufftHandle *handle)
{
    fft_plan *slot = NULL;
    for (int i = 0; i < FFT_PLANS; i++) {
        fft_plan *p = &d->plans[i];
        if (p->used && p->pass == pass && p->single == single && p->rows == rows && p->n == n) {
            p->used = ++d->plan_clock;
            *handle = p->handle;
            return GK_OK;
        }
        if (!slot || p->used < slot->used)
            slot = p;
    }
    static const cufftType types[2][4] = {{CUFFT_Z2Z, CUFFT_Z2Z, CUFFT_D2Z, CUFFT_Z2D},
                                          {CUFFT_C2C, CUFFT_C2C, CUFFT_R2C, CUFFT_C2R}};
    int size = (int)n;
    int in_length = pass == GK_FFT_PASS_C2R ? size / 2 + 1 : size;
    int out_length = pass == GK_FFT_PASS_R2C ? size / 2 + 1 : size;
    cufftHandle made;
    /* the basic layout: rows of in_length and out_length elements */
    cufftResult r = fft->PlanMany(&made, 1, &size, NULL, 1, in_length, NULL, 1, out_length,
                                  types[single][pass], (int)rows);
    if (r == CUFFT_SUCCESS && (r = fft->SetStream(made, d->stream)) != CUFFT_SUCCESS)
        fft->Destroy(made);
    if (r != CUFFT_SUCCESS)
        return gk_fail(r == CUFFT_ALLOC_FAILED ? GK_ERR_OUT_OF_MEMORY : GK_ERR_DRIVER,
                       "cuda:%d: cuFFT could not plan %lld transforms of %lld points: %s",
                       device.index, (long long)rows, (long long)n, gk_cufft_result_name(r));
    if (slot->used)
        fft->Destroy(slot->handle);
    *slot = (fft_plan){made, pass, single, rows, n, ++d->plan_clock};
    *handle = made;
    return GK_OK;
}

static gk_status cuda_fft(gk_device device, gk_fft_pass pass, bool single, int64_t rows,
                          int64_t n, const char *in, char *out)
{
    const gk_cufft *fft;
    gk_status status = gk_cufft_open("fft", &fft);
    if (status != GK_OK)
        return status;
    if (n > INT_MAX || rows > INT_MAX)
        return gk_fail(GK_ERR_NOT_FOUND, "transforms too large for cuFFT's 32-bit sizes");
    if (rows <= 0)
        return GK_OK;
    cuda_device *d;
    status = enter(device, &d);
    if (status != GK_OK)
        return status;
    pthread_mutex_lock(&d->fft_lock);
    cufftHandle plan = 0;
    status = fft_plan_for(d, device, fft, pass, single, rows, n, &plan);
    cufftResult r = CUFFT_SUCCESS;
    void *source = (void *)in; /* cuFFT's signatures are not const */
    if (status == GK_OK) {
        int direction = pass == GK_FFT_PASS_BACKWARD ? CUFFT_INVERSE : CUFFT_FORWARD;
        switch (pass) {
        case GK_FFT_PASS_R2C:
            r = single ? fft->ExecR2C(plan, source, out) : fft->ExecD2Z(plan, source, out);
            break;
        case GK_FFT_PASS_C2R:
            r = single ? fft->ExecC2R(plan, source, out) : fft->ExecZ2D(plan, source, out);
            break;
        default:
            r = single ? fft->ExecC2C(plan, source, out, direction)
                       : fft->ExecZ2Z(plan, source, out, direction);
        }
    }
    pthread_mutex_unlock(&d->fft_lock);
    leave();
    if (status == GK_OK && r != CUFFT_SUCCESS)
        status = gk_fail(GK_ERR_DRIVER, "cuda:%d: cuFFT of %lld x %lld points failed: %s",
                         device.index, (long long)rows, (long long)n, gk_cufft_result_name(r));
    return status;
}

/* --- cuSOLVER --- */

static int solver_precision(gk_dtype dtype)
{
    return dtype == GK_FLOAT32     ? GK_CUSOLVER_S
           : dtype == GK_COMPLEX64 ? GK_CUSOLVER_C
           : dtype == GK_COMPLEX128 ? GK_CUSOLVER_Z
                                    : GK_CUSOLVER_D;
}

/* Stacks of matrices up to this order are factored (and solved with) by
 * the batched routines, one call for the stack (cuBLAS's LU, cuSOLVER's
 * Cholesky and Jacobi eigh); larger matrices one cuSOLVER call each, where
 * a matrix has work enough of its own. */
#define BATCHED_MAX 32

/* The addresses first, first + step, ...: an upload_maker. */
typedef struct address_run {
    char *first;
    size_t step;
} address_run;

static void make_addresses(const void *context, char *to, size_t at, size_t bytes)
{
    const address_run *run = context;
    char **table = (char **)(void *)to;
    size_t index = at / sizeof *table, count = bytes / sizeof *table;
    for (size_t i = 0; i < count; i++)
        table[i] = run->first + (index + i) * run->step;
}

/* An array in device memory (from the pool, `*bytes` long) of the count
 * addresses first, first + step, ...: what the batched routines take,
 * written straight into the staging buffers. */
static gk_status upload_addresses(gk_device device, char *first, size_t step, int count,
                                  void ***table, size_t *bytes)
{
    *bytes = sizeof(char *) * (size_t)count;
    void *made = NULL;
    address_run run = {first, step};
    gk_status status = gk_gpu_alloc(device, *bytes, &made);
    if (status == GK_OK)
        status = upload(device, device_pointer(made), *bytes, NULL, make_addresses, &run);
    if (status != GK_OK && made)
        gk_gpu_release(device, made, *bytes);
    *table = status == GK_OK ? made : NULL;
    return status;
}

/* eigh (the Jacobi solver, syevjBatched) or cholesky (potrfBatched) of a
 * stack of small matrices in one call: CUSOLVER_STATUS_INVALID_VALUE, with
 * nothing run, when no batched routine applies (or cuSOLVER refuses the
 * arguments, as some versions do some fill modes of potrfBatched): the
 * caller then loops. `syevj` is the device's parameters slot for eigh
 * (made here once, eigenvalues sorted ascending as syevd gives them). */
static cusolverStatus_t solve_batched(const gk_cusolver *so, cusolverDnHandle_t h,
                                      syevjInfo_t *syevj, gk_device device,
                                      const gk_solver_call *c, gk_status *status)
{
    int p = solver_precision(c->dtype), n = (int)c->n, count = (int)c->count, lwork = 0;
    int jobz = c->vectors ? GK_CUSOLVER_EIG_VECTOR : GK_CUSOLVER_EIG_NOVECTOR;
    int uplo = c->flag ? GK_CUBLAS_FILL_UPPER : GK_CUBLAS_FILL_LOWER;
    size_t size = gk_dtype_size(c->dtype);
    bool eigh = c->op == GK_SOLVER_EIGH && so->syevjBatched[p] &&
                so->syevjBatched_bufferSize[p] && so->CreateSyevjInfo && so->XsyevjSetSortEig;
    bool cholesky = c->op == GK_SOLVER_CHOLESKY && so->potrfBatched[p];
    if ((!eigh && !cholesky) || c->count < 2 || c->count > INT_MAX || n > BATCHED_MAX)
        return CUSOLVER_STATUS_INVALID_VALUE;
    cusolverStatus_t r = CUSOLVER_STATUS_SUCCESS;
    void *work = NULL;
    size_t bytes = 0;
    if (cholesky) {
        void **table = NULL;
        *status = upload_addresses(device, c->a, (size_t)n * (size_t)n * size, count, &table,
                                   &bytes);
        if (*status == GK_OK)
            r = so->potrfBatched[p](h, uplo, n, table, n, (int *)(void *)c->info, count);
        work = table;
    } else {
        if (!*syevj && (r = so->CreateSyevjInfo(syevj)) == CUSOLVER_STATUS_SUCCESS)
            r = so->XsyevjSetSortEig(*syevj, 1);
        if (r == CUSOLVER_STATUS_SUCCESS)
            r = so->syevjBatched_bufferSize[p](h, jobz, uplo, n, c->a, n, c->w, &lwork, *syevj,
                                               count);
        /* an overflowed size: one matrix at a time instead (solve_each) */
        if (r == CUSOLVER_STATUS_SUCCESS && lwork < 0)
            return CUSOLVER_STATUS_INVALID_VALUE;
        bytes = (size_t)(lwork > 0 ? lwork : 1) * size;
        if (r == CUSOLVER_STATUS_SUCCESS &&
            (*status = gk_gpu_alloc(device, bytes, &work)) == GK_OK)
            r = so->syevjBatched[p](h, jobz, uplo, n, c->a, n, c->w, work, lwork,
                                    (int *)(void *)c->info, *syevj, count);
    }
    if (work) /* stream order: free for work queued after this */
        gk_gpu_release(device, work, bytes);
    return r;
}

/* A workspace size cuSOLVER gave as a negative int: it overflowed
 * (syevd's is about 2 n^2, a batched routine's the count times a
 * matrix's). */
static gk_status overflowed_workspace(gk_device device, const gk_solver_call *c)
{
    return gk_fail(GK_ERR_INVALID_ARGUMENT,
                   "cuda:%d: cuSOLVER's 32-bit workspace size overflows for %lld x %lld "
                   "matrices (%lld at once): compute them in smaller stacks, or on the CPU "
                   "(x.to_device(\"cpu\"))",
                   device.index, (long long)(c->m ? c->m : c->n), (long long)c->n,
                   (long long)c->count);
}

/* Whether gesvdjBatched takes the call's m x n matrices in its precision. */
static bool has_jacobi_svd(const gk_cusolver *so, const gk_solver_call *c)
{
    int p = solver_precision(c->dtype);
    return so->gesvdjBatched[p] && so->gesvdjBatched_bufferSize[p] && so->CreateGesvdjInfo &&
           so->XgesvdjSetSortEig && c->m <= BATCHED_MAX && c->n <= BATCHED_MAX &&
           c->count <= INT_MAX;
}

/* GK_SOLVER_SVD_JACOBI (see has_jacobi_svd): the whole stack in one
 * gesvdjBatched call, singular values sorted descending as gesvd gives
 * them; `gesvdj` is the device's parameters slot (made here once). */
static cusolverStatus_t solve_jacobi_svd(const gk_cusolver *so, cusolverDnHandle_t h,
                                         gesvdjInfo_t *gesvdj, gk_device device,
                                         const gk_solver_call *c, gk_status *status)
{
    int p = solver_precision(c->dtype), m = (int)c->m, n = (int)c->n, lwork = 0;
    int jobz = c->vectors ? GK_CUSOLVER_EIG_VECTOR : GK_CUSOLVER_EIG_NOVECTOR;
    cusolverStatus_t r = CUSOLVER_STATUS_SUCCESS;
    if (!*gesvdj && (r = so->CreateGesvdjInfo(gesvdj)) == CUSOLVER_STATUS_SUCCESS)
        r = so->XgesvdjSetSortEig(*gesvdj, 1);
    if (r == CUSOLVER_STATUS_SUCCESS)
        r = so->gesvdjBatched_bufferSize[p](h, jobz, m, n, c->a, m, c->w, c->b, m, c->c, n,
                                            &lwork, *gesvdj, (int)c->count);
    if (r == CUSOLVER_STATUS_SUCCESS && lwork < 0) {
        *status = overflowed_workspace(device, c);
        return r;
    }
    size_t bytes = (size_t)(lwork > 0 ? lwork : 1) * gk_dtype_size(c->dtype);
    void *work = NULL;
    if (r == CUSOLVER_STATUS_SUCCESS && (*status = gk_gpu_alloc(device, bytes, &work)) == GK_OK)
        r = so->gesvdjBatched[p](h, jobz, m, n, c->a, m, c->w, c->b, m, c->c, n, work, lwork,
                                 (int *)(void *)c->info, *gesvdj, (int)c->count);
    if (work) /* stream order: free for work queued after this */
        gk_gpu_release(device, work, bytes);
    return r;
}

/* The call's routine on each matrix, on the device's stream, with one
 * workspace (elements of the dtype, lwork of them) from the pool for all;
 * the infos stay on the device for the caller to read once. */
static cusolverStatus_t solve_each(const gk_cusolver *so, cusolverDnHandle_t h,
                                   gk_device device, const gk_solver_call *c, gk_status *status)
{
    int p = solver_precision(c->dtype), n = (int)c->n, nrhs = (int)c->nrhs, lwork = 0;
    size_t size = gk_dtype_size(c->dtype), real_size = gk_dtype_size(gk_dtype_component(c->dtype));
    int uplo = c->flag ? GK_CUBLAS_FILL_UPPER : GK_CUBLAS_FILL_LOWER;
    int jobz = c->vectors ? GK_CUSOLVER_EIG_VECTOR : GK_CUSOLVER_EIG_NOVECTOR;
    cusolverStatus_t r = CUSOLVER_STATUS_SUCCESS;
    int m = (int)c->m, k = m < n ? m : n;
    if (c->op == GK_SOLVER_LU)
        r = so->getrf_bufferSize[p](h, n, n, c->a, n, &lwork);
    else if (c->op == GK_SOLVER_SVD)
        r = so->gesvd_bufferSize[p](h, m, n, &lwork);
    else if (c->op == GK_SOLVER_CHOLESKY)
        r = so->potrf_bufferSize[p](h, uplo, n, c->a, n, &lwork);
    else if (c->op == GK_SOLVER_EIGH)
        r = so->syevd_bufferSize[p](h, jobz, uplo, n, c->a, n, c->w, &lwork);
    else if (c->op == GK_SOLVER_QR)
        r = so->geqrf_bufferSize[p](h, m, n, c->a, m, &lwork);
    else if (c->op == GK_SOLVER_QR_Q)
        r = so->orgqr_bufferSize[p](h, m, n, (int)c->k, c->a, m, c->b, &lwork);
    if (r == CUSOLVER_STATUS_SUCCESS && lwork < 0) {
        *status = overflowed_workspace(device, c);
        return r;
    }
    void *work = NULL, *rwork = NULL;
    size_t work_bytes = (size_t)(lwork > 0 ? lwork : 1) * size;
    size_t rwork_bytes = (size_t)(k > 0 ? k : 1) * real_size;
    if (r == CUSOLVER_STATUS_SUCCESS && c->op != GK_SOLVER_LU_SOLVE) {
        *status = gk_gpu_alloc(device, work_bytes, &work);
        if (*status == GK_OK && c->op == GK_SOLVER_SVD)
            *status = gk_gpu_alloc(device, rwork_bytes, &rwork);
        if (*status != GK_OK) {
            if (work)
                gk_gpu_release(device, work, work_bytes);
            return r;
        }
    }
    signed char job = !c->vectors ? 'N' : c->flag ? 'A' : 'S';
    int u_cols = c->flag ? m : k;
    for (int64_t i = 0; i < c->count && r == CUSOLVER_STATUS_SUCCESS; i++) {
        bool qr = c->op == GK_SOLVER_QR || c->op == GK_SOLVER_QR_Q;
        int64_t a_elements = c->op == GK_SOLVER_SVD ? c->m * c->n : qr ? c->stride : c->n * c->n;
        char *tau = qr ? c->b + (size_t)(i * c->k) * size : NULL;
        char *a = c->a + (size_t)(i * a_elements) * size;
        int *info = (int *)(void *)(c->info + (size_t)i * sizeof(int));
        int *pivots = c->pivots ? (int *)(void *)(c->pivots + (size_t)(i * c->n) * sizeof(int))
                                : NULL;
        switch (c->op) {
        case GK_SOLVER_LU:
            r = so->getrf[p](h, n, n, a, n, work, pivots, info);
            break;
        case GK_SOLVER_LU_SOLVE:
            r = so->getrs[p](h, c->flag ? GK_CUBLAS_OP_T : GK_CUBLAS_OP_N, n, nrhs, a, n, pivots,
                             c->b + (size_t)(i * c->n * c->nrhs) * size, n, info);
            break;
        case GK_SOLVER_CHOLESKY:
            r = so->potrf[p](h, uplo, n, a, n, work, lwork, info);
            break;
        case GK_SOLVER_EIGH:
            r = so->syevd[p](h, jobz, uplo, n, a, n, c->w + (size_t)(i * c->n) * real_size, work,
                             lwork, info);
            break;
        case GK_SOLVER_SVD:
            r = so->gesvd[p](h, job, job, m, n, a, m > 0 ? m : 1,
                             c->w + (size_t)(i * k) * real_size,
                             c->vectors ? c->b + (size_t)(i * m * u_cols) * size : NULL,
                             m > 0 ? m : 1,
                             c->vectors ? c->c + (size_t)(i * n * n) * size : NULL,
                             n > 0 ? n : 1, work, lwork, rwork, info);
            break;
        case GK_SOLVER_QR:
            r = so->geqrf[p](h, m, n, a, m, tau, work, lwork, info);
            break;
        case GK_SOLVER_QR_Q:
            r = so->orgqr[p](h, m, n, (int)c->k, a, m, tau, work, lwork, info);
            break;
        case GK_SOLVER_SVD_JACOBI: /* solve_jacobi_svd's, the whole stack at once */
        case GK_SOLVER_LU_INVERT:  /* batched_lu's */
            r = CUSOLVER_STATUS_INVALID_VALUE;
            break;
        }
    }
    if (work)
        gk_gpu_release(device, work, work_bytes);
    if (rwork)
        gk_gpu_release(device, rwork, rwork_bytes);
    return r;
}

/* Whether cuBLAS's batched routines take the call (LU, LU_SOLVE or
 * LU_INVERT of a stack of small matrices), setting *blas. LU and LU_SOLVE
 * of one matrix go to cuSOLVER's getrf and getrs, which a matrix keeps
 * busier; LU_INVERT follows the batched LU of a stack. */
static bool has_batched_lu(const gk_solver_call *c, const gk_cublas **blas)
{
    bool invert = c->op == GK_SOLVER_LU_INVERT;
    if ((c->op != GK_SOLVER_LU && c->op != GK_SOLVER_LU_SOLVE && !invert) ||
        (c->count < 2 && !invert) || c->n > BATCHED_MAX || c->count > INT_MAX ||
        gk_cublas_open(blas) != GK_OK)
        return false;
    int p = solver_precision(c->dtype);
    return (*blas)->getrfBatched[p] && (*blas)->getrsBatched[p] &&
           (!invert || (*blas)->getriBatched[p]);
}

/* LU, LU_SOLVE or LU_INVERT of a stack through cuBLAS's batched routines:
 * the matrices' addresses are uploaded as the arrays of pointers they
 * take. GK_ERR_NOT_FOUND when they do not apply (the caller then loops
 * over the matrices, and its status replaces this one; LU_INVERT was
 * checked to apply first). Inside enter(). */
static gk_status batched_lu(cuda_device *d, gk_device device, const gk_solver_call *c)
{
    const gk_cublas *blas;
    if (!has_batched_lu(c, &blas))
        return GK_ERR_NOT_FOUND;
    int p = solver_precision(c->dtype), n = (int)c->n, count = (int)c->count;
    size_t size = gk_dtype_size(c->dtype), a_bytes = 0, b_bytes = 0;
    /* b: the right-hand sides (LU_SOLVE) or the inverses (LU_INVERT) */
    char *b_first = c->op == GK_SOLVER_LU_SOLVE ? c->b : c->c;
    size_t b_step = (size_t)n * (size_t)(c->op == GK_SOLVER_LU_SOLVE ? c->nrhs : n) * size;
    void **a = NULL, **b = NULL;
    gk_status status = upload_addresses(device, c->a, (size_t)n * (size_t)n * size, count, &a,
                                        &a_bytes);
    if (status == GK_OK && c->op != GK_SOLVER_LU)
        status = upload_addresses(device, b_first, b_step, count, &b, &b_bytes);
    /* getrs's info is a single host int (a bad argument); the infos on
     * the device are left as they are: nobody reads a solve's. getri's
     * are written there, and not read either: getrf's said it all */
    cublasStatus_t r = CUBLAS_STATUS_SUCCESS;
    int argument = 0;
    pthread_mutex_lock(&d->blas_lock);
    cublasHandle_t h = status == GK_OK ? blas_handle(d, device, blas) : NULL;
    int *pivots = (int *)(void *)c->pivots, *infos = (int *)(void *)c->info;
    if (h && c->op == GK_SOLVER_LU)
        r = blas->getrfBatched[p](h, n, a, n, pivots, infos, count);
    else if (h && c->op == GK_SOLVER_LU_SOLVE)
        r = blas->getrsBatched[p](h, c->flag ? CUBLAS_OP_T : CUBLAS_OP_N, n, (int)c->nrhs,
                                  (const void *const *)a, n, pivots, b, n, &argument, count);
    else if (h)
        r = blas->getriBatched[p](h, n, (const void *const *)a, n, pivots, b, n, infos, count);
    pthread_mutex_unlock(&d->blas_lock);
    /* stream order: the tables are free for work queued after this */
    if (a)
        gk_gpu_release(device, a, a_bytes);
    if (b)
        gk_gpu_release(device, b, b_bytes);
    if (status == GK_OK && !h) /* LU_INVERT was checked to have one */
        return c->op == GK_SOLVER_LU_INVERT
                   ? gk_fail(GK_ERR_DRIVER, "cuda:%d: cuBLAS stopped", device.index)
                   : GK_ERR_NOT_FOUND;
    static const char *const routines[] = {
        [GK_SOLVER_LU] = "getrf", [GK_SOLVER_LU_SOLVE] = "getrs", [GK_SOLVER_LU_INVERT] = "getri"};
    if (status == GK_OK && (r != CUBLAS_STATUS_SUCCESS || argument != 0))
        status = gk_fail(r == CUBLAS_STATUS_ALLOC_FAILED ? GK_ERR_OUT_OF_MEMORY : GK_ERR_DRIVER,
                         "cuda:%d: cuBLAS's batched %s failed (%s, argument %d) on %d matrices "
                         "of %d x %d", device.index, routines[c->op], gk_cublas_status_name(r),
                         -argument, count, n, n);
    return status;
}

/* GK_OK when the call's LU_INVERT can run on the device: cuBLAS has the
 * batched routines for it, and a handle there. GK_ERR_NOT_FOUND when not:
 * the caller then solves against identities. */
static gk_status check_batched_inverse(gk_device device, const gk_solver_call *c)
{
    const gk_cublas *blas;
    if (!has_batched_lu(c, &blas))
        return gk_fail(GK_ERR_NOT_FOUND, "cuBLAS's batched inverse (getriBatched) does not "
                       "take %lld x %lld matrices here", (long long)c->n, (long long)c->n);
    cuda_device *d;
    gk_status status = enter(device, &d);
    if (status != GK_OK)
        return status;
    pthread_mutex_lock(&d->blas_lock);
    bool started = blas_handle(d, device, blas) != NULL;
    pthread_mutex_unlock(&d->blas_lock);
    leave();
    return started ? GK_OK
                   : gk_fail(GK_ERR_NOT_FOUND, "cuda:%d: cuBLAS could not start", device.index);
}

static gk_status cuda_solver(gk_device device, const gk_solver_call *call)
{
    const gk_cusolver *so;
    gk_status status = gk_cusolver_open("linalg", &so);
    if (status != GK_OK)
        return status;
    if (call->n > INT_MAX || call->nrhs > INT_MAX || call->m > INT_MAX)
        return gk_fail(GK_ERR_NOT_FOUND, "matrices too large for cuSOLVER's 32-bit sizes");
    if (call->op == GK_SOLVER_SVD_JACOBI && !has_jacobi_svd(so, call))
        return gk_fail(GK_ERR_NOT_FOUND, "cuSOLVER has no gesvdjBatched for %lld x %lld",
                       (long long)call->m, (long long)call->n);
    if (call->op == GK_SOLVER_LU_INVERT && (status = check_batched_inverse(device, call)) != GK_OK)
        return status;
    if (call->count <= 0 || call->n <= 0)
        return GK_OK;
    cuda_device *d;
    status = enter(device, &d);
    if (status != GK_OK)
        return status;
    status = batched_lu(d, device, call);
    if (status != GK_ERR_NOT_FOUND) {
        leave();
        return status;
    }
    status = GK_OK;
    pthread_mutex_lock(&d->solver_lock);
    if (!d->solver && !d->solver_failed) {
        cusolverStatus_t made = so->Create(&d->solver);
        if (made == CUSOLVER_STATUS_SUCCESS)
            made = so->SetStream(d->solver, d->stream);
        if (made != CUSOLVER_STATUS_SUCCESS) {
            if (d->solver)
                so->Destroy(d->solver);
            d->solver = NULL;
            d->solver_failed = true;
        }
    }
    cusolverStatus_t r = CUSOLVER_STATUS_SUCCESS;
    if (!d->solver)
        status = gk_fail(GK_ERR_NOT_FOUND, "cuda:%d: cuSOLVER could not start", device.index);
    else if (call->op == GK_SOLVER_SVD_JACOBI)
        r = solve_jacobi_svd(so, d->solver, &d->gesvdj, device, call, &status);
    else if ((r = solve_batched(so, d->solver, &d->syevj, device, call, &status)) ==
             CUSOLVER_STATUS_INVALID_VALUE)
        r = solve_each(so, d->solver, device, call, &status);
    pthread_mutex_unlock(&d->solver_lock);
    leave();
    if (status == GK_OK && r != CUSOLVER_STATUS_SUCCESS)
        status = gk_fail(r == CUSOLVER_STATUS_ALLOC_FAILED ? GK_ERR_OUT_OF_MEMORY : GK_ERR_DRIVER,
                         "cuda:%d: cuSOLVER failed (status %d) on %lld matrices of %lld x %lld",
                         device.index, (int)r, (long long)call->count,
                         (long long)(call->m ? call->m : call->n), (long long)call->n);
    return status;
}

/* --- built-in PTX --- */

static bool cuda_prebuilt(const char *program, const void **binary, size_t *size)
{
    size_t length = strlen(program);
    for (size_t i = 0; i < gk_cuda_ptx_files_count; i++) {
        const char *name = gk_cuda_ptx_files[i].name;
        if (strncmp(name, program, length) == 0 && strcmp(name + length, ".ptx") == 0) {
            *binary = gk_cuda_ptx_files[i].data;
            *size = gk_cuda_ptx_files[i].size;
            return true;
        }
    }
    return false;
}

const gk_gpu_driver gk_cuda_driver = {
    .kind = GK_DEVICE_CUDA,
    .name = "CUDA",
    .list = cuda_list,
    .check = cuda_check,
    .describe = cuda_describe,
    .memory = cuda_memory,
    .info = cuda_info,
    .allocate = cuda_allocate,
    .free = cuda_free,
    .resolve = cuda_resolve,
    .upload = cuda_upload,
    .download = cuda_download,
    .copy = cuda_copy,
    .lend_host = NULL, /* GPUs only: kernels on host memory run on CPU devices */
    .return_host = NULL,
    .synchronize = cuda_synchronize,
    .build = cuda_build,
    .load = cuda_load,
    .unload = cuda_unload,
    .function = cuda_function,
    .launch = cuda_launch,
    .stream_create = cuda_stream_create,
    .stream_synchronize = cuda_stream_synchronize,
    .stream_destroy = cuda_stream_destroy,
    .stream_order = cuda_stream_order,
    .device_synchronize = cuda_device_synchronize,
    .blas_matmul = cuda_blas_matmul,
    .fft = cuda_fft,
    .solver = cuda_solver,
    .prebuilt = cuda_prebuilt,
};
