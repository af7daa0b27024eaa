/* The CUDA and OpenCL backends: one shared implementation (the files of gpu/) over
 * two drivers, so both kinds answer the gk_backend calls the same way. */
#include "compute/gpu/gpu.h"
#include "core/error.h"

static int cuda_count(void)
{
    return gk_cuda_driver.list(NULL, 0);
}

static int opencl_count(void)
{
    return gk_opencl_driver.list(NULL, 0);
}

static gk_status gpu_check(gk_device device)
{
    return gk_gpu_driver_of(device)->check(device);
}

static gk_status gpu_describe(gk_device device, char *buf, size_t size)
{
    return gk_gpu_driver_of(device)->describe(device, buf, size);
}

static gk_status gpu_memory(gk_device device, uint64_t *free_bytes, uint64_t *total_bytes)
{
    return gk_gpu_driver_of(device)->memory(device, free_bytes, total_bytes);
}

static gk_status gpu_has_dtype(gk_device device, gk_dtype dtype, bool *has)
{
    const gk_gpu_info *info;
    gk_status status = gk_gpu_info_of(device, &info);
    if (status == GK_OK)
        *has = !gk_gpu_needs_fp64(dtype) || info->fp64;
    return status;
}

static gk_status gpu_upload(gk_device device, void *data, const void *host, size_t bytes)
{
    return gk_gpu_driver_of(device)->upload(device, data, host, bytes);
}

static gk_status gpu_download(gk_device device, void *host, const void *data, size_t bytes)
{
    return gk_gpu_driver_of(device)->download(device, host, data, bytes);
}

static gk_status gpu_fft(gk_device device, gk_fft_pass pass, bool single, int64_t rows,
                         int64_t n, const char *in, char *out)
{
    const gk_gpu_driver *driver = gk_gpu_driver_of(device);
    if (!driver->fft)
        return gk_fail(GK_ERR_NOT_FOUND, "%s has no FFT library", driver->name);
    return driver->fft(device, pass, single, rows, n, in, out);
}

static gk_status gpu_solver(gk_device device, const gk_solver_call *call)
{
    const gk_gpu_driver *driver = gk_gpu_driver_of(device);
    if (!driver->solver)
        return gk_fail(GK_ERR_NOT_FOUND, "%s has no dense solver library", driver->name);
    return driver->solver(device, call);
}

static gk_status gpu_synchronize(gk_device device)
{
    return gk_gpu_driver_of(device)->synchronize(device);
}

#define GPU_BACKEND(KIND, NAME, COUNT)                                                    \
    {                                                                                    \
        .kind = KIND, .name = NAME, .count = COUNT, .check = gpu_check,                  \
        .describe = gpu_describe, .memory = gpu_memory, .has_dtype = gpu_has_dtype,      \
        .alloc = gk_gpu_alloc, .release = gk_gpu_release, .upload = gpu_upload,         \
        .download = gpu_download, .synchronize = gpu_synchronize,                        \
        .memory_stats = gk_gpu_memory_stats, .empty_cache = gk_gpu_empty_cache,          \
        .convert = gpu_convert,                                                          \
        .fill = gpu_fill, .sequence = gpu_sequence, .elementwise = gpu_elementwise,      \
        .where = gpu_where, .reduce = gpu_reduce, .scan = gpu_scan, .sort = gpu_sort,    \
        .random = gpu_random, .gather = gpu_gather, .scatter = gpu_scatter,              \
        .flatnonzero = gpu_flatnonzero, .searchsorted = gpu_searchsorted,                \
        .matmul = gpu_matmul, .matmul_transposes = true, .fft = gpu_fft,                 \
        .solver = gpu_solver,                                                            \
    }

const gk_backend gk_cuda_backend = GPU_BACKEND(GK_DEVICE_CUDA, "cuda", cuda_count);
const gk_backend gk_opencl_backend = GPU_BACKEND(GK_DEVICE_OPENCL, "opencl", opencl_count);
