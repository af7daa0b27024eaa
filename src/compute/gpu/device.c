/* Per-device state of the shared GPU backend: the driver, the device's
 * facts and its memory pool, made on first use and kept for the life of
 * the process (drivers keep their contexts that long too). */
#include "compute/gpu/gpu.h"
#include "compute/gpu/pool.h"

#include "core/error.h"

#include <pthread.h>
#include <stdlib.h>

enum { MAX_GPU_DEVICES = 64 };

struct gk_gpu_device {
    gk_device device;
    const gk_gpu_driver *driver;
    gk_gpu_info info;
    gk_pool *pool;
};

static struct gk_gpu_device *devices[MAX_GPU_DEVICES];
static int device_count;
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

const gk_gpu_driver *gk_gpu_driver_of(gk_device device)
{
    return device.kind == GK_DEVICE_CUDA ? &gk_cuda_driver : &gk_opencl_driver;
}

static gk_status pool_allocate(void *context, size_t bytes, char **address)
{
    struct gk_gpu_device *state = context;
    return state->driver->allocate(state->device, bytes, address);
}

static void pool_free(void *context, char *address)
{
    struct gk_gpu_device *state = context;
    state->driver->free(state->device, address);
}

/* The state of a device already made, else NULL; called with the lock. */
static struct gk_gpu_device *find_locked(gk_device device)
{
    for (int i = 0; i < device_count; i++)
        if (gk_device_equal(devices[i]->device, device))
            return devices[i];
    return NULL;
}

/* How many states there are. Entries are never removed, so those below
 * the count read under the lock are fully made. */
static int used_count(void)
{
    pthread_mutex_lock(&devices_lock);
    int count = device_count;
    pthread_mutex_unlock(&devices_lock);
    return count;
}

/* The state of a device, checking it and making it on first use. */
static gk_status device_state(gk_device device, struct gk_gpu_device **out)
{
    /* Reads race only with appends, which publish a fully made entry
     * under the lock; entries are never removed. */
    pthread_mutex_lock(&devices_lock);
    if ((*out = find_locked(device))) {
        pthread_mutex_unlock(&devices_lock);
        return GK_OK;
    }
    const gk_gpu_driver *driver = gk_gpu_driver_of(device);
    gk_status status = driver->check(device);
    struct gk_gpu_device *state = NULL;
    if (status == GK_OK && device_count == MAX_GPU_DEVICES)
        status = gk_fail(GK_ERR_INVALID_ARGUMENT, "more than %d GPU devices in use",
                         MAX_GPU_DEVICES);
    if (status == GK_OK && !(state = calloc(1, sizeof *state)))
        status = gk_fail(GK_ERR_OUT_OF_MEMORY, "out of host memory");
    if (status == GK_OK) {
        state->device = device;
        state->driver = driver;
        status = driver->info(device, &state->info);
    }
    if (status == GK_OK) {
        char name[GK_DEVICE_NAME_MAX];
        state->pool = gk_pool_create(gk_device_name(device, name, sizeof name), pool_allocate,
                                     pool_free, state);
        if (!state->pool)
            status = gk_fail(GK_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    if (status == GK_OK) {
        devices[device_count++] = state;
        *out = state;
    } else {
        free(state);
    }
    pthread_mutex_unlock(&devices_lock);
    return status;
}

gk_status gk_gpu_info_of(gk_device device, const gk_gpu_info **info)
{
    struct gk_gpu_device *state;
    gk_status status = device_state(device, &state);
    if (status == GK_OK)
        *info = &state->info;
    return status;
}

gk_status gk_gpu_alloc(gk_device device, size_t bytes, void **data)
{
    struct gk_gpu_device *state;
    gk_status status = device_state(device, &state);
    if (status != GK_OK)
        return status;
    char *address;
    status = gk_pool_allocate(state->pool, bytes, &address);
    if (status == GK_OK)
        *data = address;
    return status;
}

void gk_gpu_release(gk_device device, void *data, size_t bytes)
{
    (void)bytes;
    struct gk_gpu_device *state;
    if (device_state(device, &state) == GK_OK)
        gk_pool_release(state->pool, data);
}

size_t gk_gpu_group_size(gk_device device)
{
    const gk_gpu_info *info;
    size_t size = 256;
    if (gk_gpu_info_of(device, &info) == GK_OK)
        while (size > 1 && size > (size_t)info->max_group_size)
            size /= 2;
    return size;
}

gk_status gk_gpu_host_device(gk_device *out)
{
    gk_device list[MAX_GPU_DEVICES];
    int count = gk_opencl_driver.list(list, MAX_GPU_DEVICES);
    if (count > MAX_GPU_DEVICES)
        count = MAX_GPU_DEVICES;
    for (int i = 0; i < count; i++) {
        const gk_gpu_info *info;
        if (gk_gpu_info_of(list[i], &info) == GK_OK && !info->gpu) {
            *out = list[i];
            return GK_OK;
        }
    }
    return gk_fail(GK_ERR_NOT_FOUND,
                   "user kernels on the cpu device run through an OpenCL driver for the CPU, "
                   "and none was found (%d OpenCL device%s, none a CPU); install PoCL "
                   "(Debian/Ubuntu: apt-get install pocl-opencl-icd), or run the kernel on a "
                   "cuda or opencl GPU",
                   count, count == 1 ? "" : "s");
}

/* The state of a device this process has used, else NULL (starts nothing). */
static struct gk_gpu_device *used_state(gk_device device)
{
    pthread_mutex_lock(&devices_lock);
    struct gk_gpu_device *found = find_locked(device);
    pthread_mutex_unlock(&devices_lock);
    return found;
}

gk_status gk_gpu_memory_stats(gk_device device, bool reset_peak, gk_memory_stats *stats)
{
    *stats = (gk_memory_stats){0};
    struct gk_gpu_device *state = used_state(device);
    if (!state)
        return GK_OK;
    gk_pool_stats pool;
    gk_pool_stats_of(state->pool, reset_peak, &pool);
    *stats = (gk_memory_stats){pool.in_use_bytes, pool.peak_in_use_bytes, pool.cached_bytes,
                               pool.driver_allocations};
    return GK_OK;
}

/* The driver's free waits for the queued work that may still use the
 * memory (freed blocks are reused at once: pool.h), so nothing is lost. */
gk_status gk_gpu_empty_cache(gk_device device)
{
    struct gk_gpu_device *state = used_state(device);
    if (state)
        gk_pool_trim(state->pool);
    return GK_OK;
}

gk_status gk_gpu_empty_cache_used(void)
{
    int count = used_count();
    for (int i = 0; i < count; i++)
        gk_pool_trim(devices[i]->pool);
    return GK_OK;
}

gk_status gk_gpu_synchronize_used(void)
{
    int count = used_count();
    gk_status first = GK_OK;
    for (int i = 0; i < count; i++) {
        gk_status status = devices[i]->driver->synchronize(devices[i]->device);
        if (first == GK_OK)
            first = status;
    }
    return first;
}
