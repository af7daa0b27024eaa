/* Devices: names, and which backend serves each kind: the CPU's, and the
 * shared GPU backend (gpu/) over the CUDA or the OpenCL driver. */
#include "compute/backend.h"
#include "compute/gpu/gpu.h"

#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const gk_backend *gk_backend_of(gk_device_kind kind)
{
    switch (kind) {
    case GK_DEVICE_CPU: return &gk_cpu_backend;
    case GK_DEVICE_CUDA: return &gk_cuda_backend;
    case GK_DEVICE_OPENCL: return &gk_opencl_backend;
    }
    return NULL;
}

gk_device gk_device_cpu(void)
{
    return (gk_device){GK_DEVICE_CPU, 0, 0};
}

int gk_device_equal(gk_device a, gk_device b)
{
    return a.kind == b.kind && a.index == b.index && a.platform == b.platform;
}

/* A whole non-negative decimal number; false for anything else. */
static bool parse_index(const char *text, const char **end, int *value)
{
    char *stop;
    if (*text < '0' || *text > '9')
        return false;
    long n = strtol(text, &stop, 10);
    if (n > 1 << 20)
        return false;
    *value = (int)n;
    *end = stop;
    return true;
}

gk_status gk_device_parse(const char *name, gk_device *device)
{
    const char *rest;
    int first = 0, second = 0;
    if (strcmp(name, "cpu") == 0) {
        *device = gk_device_cpu();
        return GK_OK;
    }
    if (strcmp(name, "cuda") == 0) {
        *device = (gk_device){GK_DEVICE_CUDA, 0, 0};
        return GK_OK;
    }
    if (strncmp(name, "cuda:", 5) == 0 && parse_index(name + 5, &rest, &first) && !*rest) {
        *device = (gk_device){GK_DEVICE_CUDA, first, 0};
        return GK_OK;
    }
    if (strcmp(name, "opencl") == 0) {
        *device = (gk_device){GK_DEVICE_OPENCL, 0, 0};
        return GK_OK;
    }
    if (strncmp(name, "opencl:", 7) == 0 && parse_index(name + 7, &rest, &first) &&
        *rest == ':' && parse_index(rest + 1, &rest, &second) && !*rest) {
        *device = (gk_device){GK_DEVICE_OPENCL, second, first};
        return GK_OK;
    }
    return gk_fail(GK_ERR_INVALID_ARGUMENT,
                   "'%s' is not a device name: use cpu, cuda, cuda:N, opencl or opencl:P:D", name);
}

const char *gk_device_name(gk_device device, char *buf, size_t size)
{
    switch (device.kind) {
    case GK_DEVICE_CPU: snprintf(buf, size, "cpu"); break;
    case GK_DEVICE_CUDA: snprintf(buf, size, "cuda:%d", device.index); break;
    case GK_DEVICE_OPENCL: snprintf(buf, size, "opencl:%d:%d", device.platform, device.index); break;
    }
    return buf;
}

int gk_device_count(gk_device_kind kind)
{
    const gk_backend *backend = gk_backend_of(kind);
    return backend ? backend->count() : 0;
}

int gk_device_list(gk_device *devices, int max)
{
    int total = 0;
    if (total < max)
        devices[total] = gk_device_cpu();
    total++;
    const gk_gpu_driver *drivers[] = {&gk_cuda_driver, &gk_opencl_driver};
    for (int d = 0; d < 2; d++)
        total += drivers[d]->list(total < max ? devices + total : NULL,
                                  total < max ? max - total : 0);
    return total;
}

gk_status gk_device_check(gk_device device)
{
    const gk_backend *backend = gk_backend_of(device.kind);
    if (!backend)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "not a device kind: %d", (int)device.kind);
    return backend->check(device);
}

gk_device gk_device_default(void)
{
    gk_device cuda = {GK_DEVICE_CUDA, 0, 0};
    if (gk_device_count(GK_DEVICE_CUDA) > 0 && gk_device_check(cuda) == GK_OK)
        return cuda;
    return gk_device_cpu();
}

gk_status gk_device_accelerator(gk_device *device)
{
    gk_device found[64];
    int count = gk_device_list(found, 64);
    if (count > 64)
        count = 64;
    /* Three rounds: CUDA GPUs, OpenCL GPUs, other OpenCL devices. */
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < count; i++) {
            const gk_gpu_info *info;
            if (found[i].kind == GK_DEVICE_CPU ||
                (round == 0) != (found[i].kind == GK_DEVICE_CUDA) ||
                gk_gpu_info_of(found[i], &info) != GK_OK)
                continue;
            if (round == 0 || (round == 1) == info->gpu) {
                *device = found[i];
                return GK_OK;
            }
        }
    return gk_fail(GK_ERR_NOT_FOUND,
                   "no CUDA or OpenCL device: install the NVIDIA driver for a GPU, or "
                   "pocl-opencl-icd to run kernels on the CPU through OpenCL");
}

gk_status gk_device_describe(gk_device device, char *buf, size_t size)
{
    gk_status status = gk_device_check(device);
    return status == GK_OK ? gk_backend_of(device.kind)->describe(device, buf, size) : status;
}

gk_status gk_device_memory(gk_device device, uint64_t *free_bytes, uint64_t *total_bytes)
{
    gk_status status = gk_device_check(device);
    return status == GK_OK
               ? gk_backend_of(device.kind)->memory(device, free_bytes, total_bytes)
               : status;
}

gk_status gk_device_has_dtype(gk_device device, gk_dtype dtype, bool *has)
{
    *has = false;
    if ((unsigned)dtype >= GK_DTYPE_COUNT)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "gk_device_has_dtype: %d is not a dtype",
                       (int)dtype);
    gk_status status = gk_device_check(device);
    return status == GK_OK ? gk_backend_of(device.kind)->has_dtype(device, dtype, has) : status;
}

gk_status gk_device_synchronize(gk_device device)
{
    gk_status status = gk_device_check(device);
    return status == GK_OK ? gk_backend_of(device.kind)->synchronize(device) : status;
}

/* The backend of a device that memory_stats and empty_cache may ask
 * without gk_device_check, which would start a GPU (its context takes
 * memory): they answer for a device never used without starting it. */
static gk_status backend_without_starting(gk_device device, const gk_backend **backend)
{
    *backend = gk_backend_of(device.kind);
    if (!*backend)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "not a device kind: %d", (int)device.kind);
    return device.kind == GK_DEVICE_CPU ? gk_device_check(device) : GK_OK;
}

gk_status gk_device_memory_stats(gk_device device, bool reset_peak, gk_memory_stats *stats)
{
    *stats = (gk_memory_stats){0};
    const gk_backend *backend;
    gk_status status = backend_without_starting(device, &backend);
    return status == GK_OK ? backend->memory_stats(device, reset_peak, stats) : status;
}

gk_status gk_device_empty_cache(gk_device device)
{
    const gk_backend *backend;
    gk_status status = backend_without_starting(device, &backend);
    return status == GK_OK ? backend->empty_cache(device) : status;
}

gk_status gk_device_empty_cache_all(void)
{
    gk_status status = gk_device_empty_cache(gk_device_cpu());
    return status == GK_OK ? gk_gpu_empty_cache_used() : status;
}

gk_status gk_device_synchronize_all(void)
{
    /* The cpu's work is done when its ops return; the GPU layer knows
     * which devices it has started. */
    return gk_gpu_synchronize_used();
}
