/* Devices: names, and which backend serves each kind. Only the CPU backend
 * is built in so far; CUDA and OpenCL slot into gk_backend_of(). */
#include "compute/backend.h"

#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const gk_backend *gk_backend_of(gk_device_kind kind)
{
    switch (kind) {
    case GK_DEVICE_CPU: return &gk_cpu_backend;
    case GK_DEVICE_CUDA:
    case GK_DEVICE_OPENCL: return NULL;
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
                   "'%s' is not a device name: use cpu, cuda, cuda:N or opencl:P:D", name);
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

gk_status gk_device_check(gk_device device)
{
    const gk_backend *backend = gk_backend_of(device.kind);
    char name[GK_DEVICE_NAME_MAX];
    if (!backend)
        return gk_fail(GK_ERR_NOT_FOUND, "%s: this gpukit has no %s backend yet",
                       gk_device_name(device, name, sizeof name),
                       device.kind == GK_DEVICE_CUDA ? "CUDA" : "OpenCL");
    return backend->check(device);
}

gk_device gk_device_default(void)
{
    gk_device cuda = {GK_DEVICE_CUDA, 0, 0};
    if (gk_device_count(GK_DEVICE_CUDA) > 0 && gk_device_check(cuda) == GK_OK)
        return cuda;
    return gk_device_cpu();
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

gk_status gk_device_synchronize(gk_device device)
{
    gk_status status = gk_device_check(device);
    return status == GK_OK ? gk_backend_of(device.kind)->synchronize(device) : status;
}
