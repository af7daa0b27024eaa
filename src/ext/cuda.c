/* Run-time loading of the CUDA driver API: see cuda.h. */
#include "ext/cuda.h"

#include "core/error.h"

#include <gpukit/device.h>

#include <dlfcn.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every entry point gpukit calls, by the name the driver exports. */
static const struct {
    const char *name;
    /* An older name with the same ABI, for drivers from before the
     * versioned one (cuDevicePrimaryCtxRelease_v2 came with CUDA 11). */
    const char *fallback;
    size_t offset;
} entry_points[] = {
    {"cuInit", NULL, offsetof(gk_cuda, Init)},
    {"cuDriverGetVersion", NULL, offsetof(gk_cuda, DriverGetVersion)},
    {"cuGetErrorName", NULL, offsetof(gk_cuda, GetErrorName)},
    {"cuGetErrorString", NULL, offsetof(gk_cuda, GetErrorString)},
    {"cuDeviceGetCount", NULL, offsetof(gk_cuda, DeviceGetCount)},
    {"cuDeviceGet", NULL, offsetof(gk_cuda, DeviceGet)},
    {"cuDeviceGetName", NULL, offsetof(gk_cuda, DeviceGetName)},
    {"cuDeviceGetAttribute", NULL, offsetof(gk_cuda, DeviceGetAttribute)},
    {"cuDeviceTotalMem_v2", NULL, offsetof(gk_cuda, DeviceTotalMem)},
    {"cuDevicePrimaryCtxRetain", NULL, offsetof(gk_cuda, DevicePrimaryCtxRetain)},
    {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease",
     offsetof(gk_cuda, DevicePrimaryCtxRelease)},
    {"cuCtxPushCurrent_v2", NULL, offsetof(gk_cuda, CtxPushCurrent)},
    {"cuCtxPopCurrent_v2", NULL, offsetof(gk_cuda, CtxPopCurrent)},
    {"cuCtxSynchronize", NULL, offsetof(gk_cuda, CtxSynchronize)},
    {"cuMemGetInfo_v2", NULL, offsetof(gk_cuda, MemGetInfo)},
    {"cuMemAlloc_v2", NULL, offsetof(gk_cuda, MemAlloc)},
    {"cuMemFree_v2", NULL, offsetof(gk_cuda, MemFree)},
    {"cuMemHostAlloc", NULL, offsetof(gk_cuda, MemHostAlloc)},
    {"cuMemFreeHost", NULL, offsetof(gk_cuda, MemFreeHost)},
    {"cuPointerGetAttribute", NULL, offsetof(gk_cuda, PointerGetAttribute)},
    {"cuMemcpyHtoDAsync_v2", NULL, offsetof(gk_cuda, MemcpyHtoDAsync)},
    {"cuMemcpyDtoH_v2", NULL, offsetof(gk_cuda, MemcpyDtoH)},
    {"cuMemcpyDtoHAsync_v2", NULL, offsetof(gk_cuda, MemcpyDtoHAsync)},
    {"cuMemcpyDtoDAsync_v2", NULL, offsetof(gk_cuda, MemcpyDtoDAsync)},
    {"cuStreamCreate", NULL, offsetof(gk_cuda, StreamCreate)},
    {"cuStreamDestroy_v2", NULL, offsetof(gk_cuda, StreamDestroy)},
    {"cuStreamSynchronize", NULL, offsetof(gk_cuda, StreamSynchronize)},
    {"cuStreamWaitEvent", NULL, offsetof(gk_cuda, StreamWaitEvent)},
    {"cuEventCreate", NULL, offsetof(gk_cuda, EventCreate)},
    {"cuEventDestroy_v2", NULL, offsetof(gk_cuda, EventDestroy)},
    {"cuEventRecord", NULL, offsetof(gk_cuda, EventRecord)},
    {"cuEventSynchronize", NULL, offsetof(gk_cuda, EventSynchronize)},
    {"cuModuleLoadDataEx", NULL, offsetof(gk_cuda, ModuleLoadDataEx)},
    {"cuModuleUnload", NULL, offsetof(gk_cuda, ModuleUnload)},
    {"cuModuleGetFunction", NULL, offsetof(gk_cuda, ModuleGetFunction)},
    {"cuLaunchKernel", NULL, offsetof(gk_cuda, LaunchKernel)},
};

/* The outcome of the one load, shared by every thread after it. */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static gk_cuda driver;
static gk_status load_status;
static char load_message[1024];

/* Names for the codes gpukit explains, for when the driver cannot name
 * them itself (it is missing, or failed before cuGetErrorName works). */
static const char *known_name(CUresult error)
{
    switch (error) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY";
    case CUDA_ERROR_INSUFFICIENT_DRIVER: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case CUDA_ERROR_DEVICE_UNAVAILABLE: return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
    case CUDA_ERROR_INVALID_IMAGE: return "CUDA_ERROR_INVALID_IMAGE";
    case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
    case CUDA_ERROR_NO_BINARY_FOR_GPU: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case CUDA_ERROR_INVALID_PTX: return "CUDA_ERROR_INVALID_PTX";
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case CUDA_ERROR_OPERATING_SYSTEM: return "CUDA_ERROR_OPERATING_SYSTEM";
    case CUDA_ERROR_INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
    case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_NOT_READY: return "CUDA_ERROR_NOT_READY";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
        return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    case CUDA_ERROR_UNKNOWN: return "CUDA_ERROR_UNKNOWN";
    }
    return NULL;
}

const char *gk_cuda_error_name(CUresult error, char *buf, size_t size)
{
    const char *name = NULL;
    if (driver.GetErrorName && driver.GetErrorName(error, &name) != CUDA_SUCCESS)
        name = NULL;
    if (!name)
        name = known_name(error);
    if (name)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "CUDA error %d", error);
    return buf;
}

gk_status gk_cuda_fail(CUresult error, const char *what)
{
    char name[64];
    const char *text = NULL;
    if (driver.GetErrorString && driver.GetErrorString(error, &text) != CUDA_SUCCESS)
        text = NULL;
    gk_cuda_error_name(error, name, sizeof name);
    return gk_fail(error == CUDA_ERROR_OUT_OF_MEMORY ? GK_ERR_OUT_OF_MEMORY : GK_ERR_DRIVER,
                   "%s: %s%s%s%s", what, name, text ? " (" : "", text ? text : "",
                   text ? ")" : "");
}

/* What to do about a failing cuInit, by its code. */
static const char *init_fix(CUresult error)
{
    switch (error) {
    case CUDA_ERROR_NO_DEVICE:
        return "the driver sees no GPU: check `nvidia-smi`, and that CUDA_VISIBLE_DEVICES does "
               "not hide every GPU";
    case CUDA_ERROR_INSUFFICIENT_DRIVER:
        return "the NVIDIA driver is older than this CUDA version needs: update the driver";
    case CUDA_ERROR_STUB_LIBRARY:
        return "the libcuda.so.1 found is the CUDA toolkit's link stub, not the driver: remove "
               "the toolkit's stubs directory from LD_LIBRARY_PATH, or install the NVIDIA driver";
    case CUDA_ERROR_UNKNOWN:
        return "the driver is in a bad state, often after a suspend/resume or a driver update "
               "without a reboot: reload the UVM module (sudo rmmod nvidia_uvm && sudo modprobe "
               "nvidia_uvm) or reboot";
    case CUDA_ERROR_NOT_INITIALIZED:
        return "the driver could not start: check that the nvidia kernel module is loaded "
               "(`nvidia-smi` works), and that this process did not fork after using CUDA";
    case CUDA_ERROR_OPERATING_SYSTEM:
        return "an operating-system call failed: check access to /dev/nvidia* (the user may "
               "need the video or render group; a container needs --gpus)";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
        return "libcuda.so.1 and the nvidia kernel module come from different driver "
               "versions: reboot after a driver update, or reinstall the driver";
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
        return "a CUDA forward-compatibility libcuda is in use on a GPU that does not support "
               "it: remove the cuda-compat directory from LD_LIBRARY_PATH";
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
        return "every GPU is busy or in exclusive-process mode: see `nvidia-smi` for the "
               "processes using them";
    }
    return "check that `nvidia-smi` works, and reinstall the NVIDIA driver if it does not";
}

static void fail_load(gk_status status, const char *fmt, const char *a, const char *b)
{
    load_status = status;
    snprintf(load_message, sizeof load_message, fmt, a, b);
}

/* Whether `name` is in the file at `path` (the loader's cache lists every
 * library it knows by name). */
static bool file_mentions(const char *path, const char *name)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return false;
    char buf[65536 + 64];
    size_t keep = 0, length = strlen(name);
    bool found = false;
    for (;;) {
        size_t got = fread(buf + keep, 1, sizeof buf - keep, file);
        if (got == 0)
            break;
        size_t have = keep + got;
        for (size_t i = 0; !found && i + length <= have; i++)
            found = buf[i] == name[0] && memcmp(buf + i, name, length) == 0;
        if (found)
            break;
        /* Keep the tail, in case the name straddles two reads. */
        keep = length < have ? length : have;
        memmove(buf, buf + have - keep, keep);
    }
    fclose(file);
    return found;
}

static bool in_directories(const char *list, const char *name)
{
    char path[4096];
    while (list && *list) {
        size_t length = strcspn(list, ":");
        if (length > 0 && (size_t)snprintf(path, sizeof path, "%.*s/%s", (int)length, list,
                                           name) < sizeof path &&
            access(path, R_OK) == 0)
            return true;
        list += length + (list[length] == ':');
    }
    return false;
}

bool gk_cuda_driver_present(void)
{
    const char *override = getenv("GPUKIT_CUDA_LIBRARY");
    if (override && *override)
        return access(override, R_OK) == 0;
    const char *name = "libcuda.so.1";
    void *loaded = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
    if (loaded) {
        dlclose(loaded);
        return true;
    }
    return in_directories(getenv("LD_LIBRARY_PATH"), name) ||
           file_mentions("/etc/ld.so.cache", "/libcuda.so.1") ||
           in_directories("/lib64:/usr/lib64:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:"
                          "/lib/aarch64-linux-gnu:/usr/lib/aarch64-linux-gnu:/lib:/usr/lib",
                          name);
}

static void load(void)
{
    const char *override = getenv("GPUKIT_CUDA_LIBRARY");
    const char *target = override && *override ? override : "libcuda.so.1";
    driver.library = dlopen(target, RTLD_NOW | RTLD_LOCAL);
    if (!driver.library) {
        const char *why = dlerror();
        if (target == override)
            fail_load(GK_ERR_NOT_FOUND,
                      "libcuda.so.1 not found: install the NVIDIA driver (GPUKIT_CUDA_LIBRARY=%s "
                      "cannot be loaded: %s)",
                      override, why ? why : "unknown reason");
        else
            fail_load(GK_ERR_NOT_FOUND, "libcuda.so.1 not found: install the NVIDIA driver (%s)%s",
                      why ? why : "no CUDA driver library on this machine", "");
        return;
    }
    snprintf(driver.path, sizeof driver.path, "%s", target);

    for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; i++) {
        void *symbol = dlsym(driver.library, entry_points[i].name);
        if (!symbol && entry_points[i].fallback)
            symbol = dlsym(driver.library, entry_points[i].fallback);
        if (!symbol) {
            fail_load(GK_ERR_DRIVER,
                      "the CUDA driver (%s) has no %s: the NVIDIA driver is too old for gpukit, "
                      "update it",
                      target, entry_points[i].name);
            dlclose(driver.library);
            memset(&driver, 0, sizeof driver);
            return;
        }
        /* A function pointer cannot be assigned from void * in ISO C;
         * copying the bytes is the portable way. */
        memcpy((char *)&driver + entry_points[i].offset, &symbol, sizeof symbol);
    }

    CUresult result = driver.Init(0);
    if (result != CUDA_SUCCESS) {
        char name[64];
        gk_cuda_error_name(result, name, sizeof name);
        load_status = result == CUDA_ERROR_NO_DEVICE ? GK_ERR_NOT_FOUND : GK_ERR_DRIVER;
        snprintf(load_message, sizeof load_message,
                 "the CUDA driver failed to start (cuInit: %s): %s", name, init_fix(result));
        /* The library stays loaded so that gk_cuda_error_name keeps
         * working; nothing else is called on it. */
        return;
    }
    if (driver.DriverGetVersion(&driver.driver_version) != CUDA_SUCCESS)
        driver.driver_version = 0;
    load_status = GK_OK;
}

gk_status gk_cuda_open(const gk_cuda **cuda)
{
    pthread_once(&load_once, load);
    if (load_status != GK_OK) {
        *cuda = NULL;
        return gk_fail(load_status, "%s", load_message);
    }
    *cuda = &driver;
    return GK_OK;
}
