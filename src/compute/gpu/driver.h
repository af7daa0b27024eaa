/* Internal: what one GPU API (CUDA, OpenCL) provides to the shared GPU
 * backend (src/compute/gpu/). The shared code implements every array op in
 * terms of these few calls, so the CUDA and OpenCL backends differ only
 * here, and everything above them is exercised on PoCL in CI.
 *
 * Addresses. Device memory is named by `char *` addresses that the host
 * never dereferences. For CUDA they are CUdeviceptr values. For OpenCL they
 * encode (allocation slot, byte offset), so the core can add byte offsets
 * to them like pointers; `resolve` splits any address into the address of
 * its allocation's start and the offset from there.
 *
 * Work is queued on one in-order queue (stream) per device, or on a user
 * stream; download and synchronize wait. Every call is thread-safe. */
#ifndef GK_COMPUTE_GPU_DRIVER_H
#define GK_COMPUTE_GPU_DRIVER_H

#include "compute/backend.h" /* gk_fft_pass */

#include <gpukit/array.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gk_gpu_module gk_gpu_module;     /* CUmodule / cl_program */
typedef struct gk_gpu_function gk_gpu_function; /* CUfunction / cl_kernel */
typedef struct gk_gpu_stream gk_gpu_stream;     /* CUstream / cl_command_queue */

/* What the shared code needs to know about a device. */
typedef struct gk_gpu_info {
    /* Part of every compiled-kernel cache key: "sm_90" or the OpenCL
     * device name, driver version and platform. */
    char architecture[256];
    /* The compiler: "nvrtc 13.0" or the OpenCL platform's version text. */
    char compiler[128];
    bool gpu;                  /* a GPU (not an OpenCL CPU device like PoCL) */
    int compute_units;         /* SMs / compute units */
    int max_group_size;        /* work-items per group, at least 64 */
    uint64_t max_local_bytes;  /* local (shared) memory per group */
    bool fp64;                 /* double is supported */
    uint64_t max_allocation;   /* largest single allocation in bytes */
} gk_gpu_info;

typedef enum gk_gpu_arg_kind {
    GK_GPU_ARG_VALUE,  /* `size` bytes at `value`, passed by value */
    GK_GPU_ARG_BUFFER, /* device memory at `address`, as a GK_GLOBAL T * */
} gk_gpu_arg_kind;

typedef struct gk_gpu_arg {
    gk_gpu_arg_kind kind;
    const void *value;
    size_t size;
    char *address;
} gk_gpu_arg;

/* What a kernel parameter is, as far as the API tells (OpenCL's kernel
 * argument info; CUDA tells nothing): enough to refuse an argument of the
 * wrong kind before the driver reads it, where a scalar taken for a
 * buffer handle crashes the process. */
typedef enum gk_gpu_param_kind {
    GK_GPU_PARAM_UNKNOWN, /* not said, or a by-value type of the user's (a struct) */
    GK_GPU_PARAM_BUFFER,  /* a GK_GLOBAL (or __constant) pointer */
    GK_GPU_PARAM_LOCAL,   /* a __local pointer, sized by the launch: never given */
    GK_GPU_PARAM_INTEGER, /* an integer of `size` bytes, by value */
    GK_GPU_PARAM_FLOAT,   /* a floating-point number of `size` bytes, by value */
} gk_gpu_param_kind;

typedef struct gk_gpu_param {
    gk_gpu_param_kind kind;
    size_t size;    /* INTEGER and FLOAT */
    char type[64];  /* the type as the source spells it, for messages ("gk_i64", "float*") */
} gk_gpu_param;

/* The source language handed to `build`. */
typedef enum gk_gpu_language {
    GK_GPU_PORTABLE, /* dialect.h source: CUDA C++ or OpenCL C */
    GK_GPU_CUDA_C,   /* CUDA C++ only */
} gk_gpu_language;

typedef struct gk_gpu_driver {
    gk_device_kind kind;
    const char *name; /* "CUDA", "OpenCL" */

    /* --- devices --- */
    /* The devices of this API: writes up to `max` of them (devices may be
     * NULL when max is 0) and returns how many there are; 0 when the
     * library is missing or fails. */
    int (*list)(gk_device *devices, int max);
    /* GK_OK, or the reason the device cannot be used (library missing,
     * init failed, no such device), with the fix in gk_last_error(). */
    gk_status (*check)(gk_device device);
    gk_status (*describe)(gk_device device, char *buf, size_t size);
    gk_status (*memory)(gk_device device, uint64_t *free_bytes, uint64_t *total_bytes);
    gk_status (*info)(gk_device device, gk_gpu_info *info);

    /* --- memory (raw: the pool in gpu/pool.c sits on top) --- */
    gk_status (*allocate)(gk_device device, size_t bytes, char **address);
    void (*free)(gk_device device, char *address);
    void (*resolve)(const char *address, char **base, size_t *offset);
    /* Queued on the device's stream (the host memory is copied or pinned
     * before return, so the caller may reuse it at once). */
    gk_status (*upload)(gk_device device, char *address, const void *host, size_t bytes);
    /* Waits for queued work, then copies. */
    gk_status (*download)(gk_device device, void *host, const char *address, size_t bytes);
    /* Device to device, queued. */
    gk_status (*copy)(gk_device device, char *to, const char *from, size_t bytes);
    /* CPU devices only (OpenCL; NULL elsewhere): an address for kernels
     * that is `bytes` of host memory at `host` itself, no copy, until
     * `return_host` (which waits for the device's stream) ends the loan. */
    gk_status (*lend_host)(gk_device device, void *host, size_t bytes, char **address);
    gk_status (*return_host)(gk_device device, char *address);
    gk_status (*synchronize)(gk_device device);

    /* --- kernels --- */
    /* Compiles `source` (NUL-terminated; dialect.h already in front for
     * GK_GPU_PORTABLE) with `options` for the device. On success *module is
     * loaded and, when `binary` is not NULL, *binary (malloc'd, *size
     * bytes) is what `load` accepts later for the same device, for the
     * disk cache. On a compile error returns GK_ERR_INVALID_ARGUMENT with
     * the compiler's log in gk_last_error(). */
    gk_status (*build)(gk_device device, gk_gpu_language language, const char *source,
                       const char *options, gk_gpu_module **module, void **binary,
                       size_t *size);
    /* Loads a binary from `build` (or, for CUDA, PTX text). */
    gk_status (*load)(gk_device device, const void *binary, size_t size, gk_gpu_module **module);
    void (*unload)(gk_device device, gk_gpu_module *module);
    gk_status (*function)(gk_device device, gk_gpu_module *module, const char *name,
                          gk_gpu_function **function);
    /* What parameter `index` of the function is (kind GK_GPU_PARAM_UNKNOWN
     * when the API does not say, or past the last one). NULL: never said. */
    void (*parameter)(const gk_gpu_function *function, int index, gk_gpu_param *param);
    /* Launches groups[d] x local[d] work-items; stream NULL = the device's. */
    gk_status (*launch)(gk_device device, gk_gpu_function *function, const size_t groups[3],
                        const size_t local[3], int count, const gk_gpu_arg *args,
                        gk_gpu_stream *stream);

    /* --- streams --- */
    gk_status (*stream_create)(gk_device device, gk_gpu_stream **stream);
    gk_status (*stream_synchronize)(gk_device device, gk_gpu_stream *stream);
    void (*stream_destroy)(gk_device device, gk_gpu_stream *stream);
    /* Work queued on `later` from now on starts after all work queued so
     * far on `earlier` (either NULL = the device's stream); no host wait. */
    gk_status (*stream_order)(gk_device device, gk_gpu_stream *later, gk_gpu_stream *earlier);
    /* Waits on the host for everything queued on the device by anyone
     * (every stream of the context, other libraries' too); NULL where
     * gpukit shares no memory with other libraries (OpenCL). */
    gk_status (*device_synchronize)(gk_device device);

    /* --- optional vendor libraries (NULL, or GK_ERR_NOT_FOUND when the
     * library is not there: the shared code then runs its own kernel) --- */
    /* Row-major c[i] = a[i] @ b[i], float32/float64/complex64/complex128
     * and the 16-bit floats, operands stored transposed as `transposed`
     * says: like gk_backend.matmul. */
    gk_status (*blas_matmul)(gk_device device, gk_dtype dtype, int64_t batch, int64_t m,
                             int64_t n, int64_t k, const char *a, int64_t a_batch_stride,
                             const char *b, int64_t b_batch_stride, char *c,
                             unsigned transposed);
    /* FFT passes, like gk_backend.fft (CUDA: cuFFT). */
    gk_status (*fft)(gk_device device, gk_fft_pass pass, bool single, int64_t rows, int64_t n,
                     const char *in, char *out);
    /* Dense solvers, like gk_backend.solver (CUDA: cuSOLVER). */
    gk_status (*solver)(gk_device device, const gk_solver_call *call);
    /* Built-in kernels compiled ahead of time for this API (CUDA: PTX made
     * at build time), found by program name ("elementwise_float32"); NULL
     * when there are none, then the shared code compiles the source. */
    bool (*prebuilt)(const char *program, const void **binary, size_t *size);
} gk_gpu_driver;

extern const gk_gpu_driver gk_cuda_driver;
extern const gk_gpu_driver gk_opencl_driver;

#endif
