/* The CUDA driver API (libcuda.so.1), loaded at run time.
 *
 * Only the types, enum values and entry points gpukit uses are declared
 * here (they are facts of the driver's ABI; the toolkit's cuda.h is never
 * included, so gpukit builds and runs on machines without CUDA). Entry
 * points whose ABI changed are looked up by their versioned names
 * (cuMemAlloc_v2, ...), which every driver since CUDA 4 exports; the plain
 * names of those take 32-bit sizes and must never be called.
 *
 * The library is loaded and cuInit() called once per process, on first
 * use, by whichever thread gets there first; the outcome (the table, or
 * the reason it failed) is kept for the life of the process. Tests point
 * GPUKIT_CUDA_LIBRARY at a fake driver. */
#ifndef GK_EXT_CUDA_H
#define GK_EXT_CUDA_H

#include <gpukit/status.h>

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef int CUdevice_attribute;
typedef int CUjit_option;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_STUB_LIBRARY = 34,
    CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
    CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_INVALID_PTX = 218,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    CUDA_ERROR_OPERATING_SYSTEM = 304,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
    CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
    CUDA_ERROR_UNKNOWN = 999,
};

enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

enum { CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9 };
enum { CU_STREAM_NON_BLOCKING = 0x1 };
enum { CU_EVENT_DISABLE_TIMING = 0x2 };
enum { CU_MEMHOSTALLOC_PORTABLE = 0x1 };

/* cuModuleLoadDataEx options: where the JIT writes its messages. */
enum {
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

typedef struct gk_cuda {
    void *library;
    char path[512];     /* what was loaded */
    int driver_version; /* 12040 for CUDA 12.4 */

    CUresult (*Init)(unsigned int flags);
    CUresult (*DriverGetVersion)(int *version);
    CUresult (*GetErrorName)(CUresult error, const char **name);
    CUresult (*GetErrorString)(CUresult error, const char **text);
    CUresult (*DeviceGetCount)(int *count);
    CUresult (*DeviceGet)(CUdevice *device, int ordinal);
    CUresult (*DeviceGetName)(char *name, int length, CUdevice device);
    CUresult (*DeviceGetAttribute)(int *value, CUdevice_attribute attribute, CUdevice device);
    CUresult (*DeviceTotalMem)(size_t *bytes, CUdevice device);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice device);
    CUresult (*CtxPushCurrent)(CUcontext context);
    CUresult (*CtxPopCurrent)(CUcontext *context);
    CUresult (*CtxSynchronize)(void);
    CUresult (*MemGetInfo)(size_t *free_bytes, size_t *total_bytes);
    CUresult (*MemAlloc)(CUdeviceptr *address, size_t bytes);
    CUresult (*MemFree)(CUdeviceptr address);
    CUresult (*MemHostAlloc)(void **host, size_t bytes, unsigned int flags);
    CUresult (*MemFreeHost)(void *host);
    CUresult (*PointerGetAttribute)(void *value, int attribute, CUdeviceptr pointer);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr to, const void *from, size_t bytes, CUstream stream);
    CUresult (*MemcpyDtoH)(void *to, CUdeviceptr from, size_t bytes);
    CUresult (*MemcpyDtoHAsync)(void *to, CUdeviceptr from, size_t bytes, CUstream stream);
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr to, CUdeviceptr from, size_t bytes, CUstream stream);
    CUresult (*StreamCreate)(CUstream *stream, unsigned int flags);
    CUresult (*StreamDestroy)(CUstream stream);
    CUresult (*StreamSynchronize)(CUstream stream);
    CUresult (*StreamWaitEvent)(CUstream stream, CUevent event, unsigned int flags);
    CUresult (*EventCreate)(CUevent *event, unsigned int flags);
    CUresult (*EventDestroy)(CUevent event);
    CUresult (*EventRecord)(CUevent event, CUstream stream);
    CUresult (*EventSynchronize)(CUevent event);
    CUresult (*ModuleLoadDataEx)(CUmodule *module, const void *image, unsigned int count,
                                 CUjit_option *options, void **values);
    CUresult (*ModuleUnload)(CUmodule module);
    CUresult (*ModuleGetFunction)(CUfunction *function, CUmodule module, const char *name);
    CUresult (*LaunchKernel)(CUfunction function, unsigned int grid_x, unsigned int grid_y,
                             unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                             unsigned int block_z, unsigned int shared_bytes, CUstream stream,
                             void **params, void **extra);
} gk_cuda;

/* The driver, loaded and initialised (cuInit) on the first call. On
 * failure, every call returns the same status and message:
 * GK_ERR_NOT_FOUND when the library is missing or there is no GPU,
 * GK_ERR_DRIVER when an entry point is missing (an old driver) or cuInit
 * fails, each with the fix in gk_last_error(). Thread-safe. */
gk_status gk_cuda_open(const gk_cuda **cuda);

/* "CUDA_ERROR_OUT_OF_MEMORY", or "CUDA error 123" for a code the driver
 * does not name. Needs no loaded driver. */
const char *gk_cuda_error_name(CUresult error, char *buf, size_t size);

/* Records "<what>: CUDA_ERROR_NAME (the driver's description)" and returns
 * GK_ERR_OUT_OF_MEMORY for CUDA_ERROR_OUT_OF_MEMORY, else GK_ERR_DRIVER. */
gk_status gk_cuda_fail(CUresult error, const char *what);

#endif
