/* User-written kernels on CUDA and OpenCL devices: raw kernels with an
 * explicit launch size (CuPy's RawKernel, Numba's @cuda.jit) and
 * elementwise kernels from an expression (CuPy's ElementwiseKernel, with
 * Numba's automatic launch size).
 *
 * Sources are written in CUDA C (CUDA devices only) or in gpukit's
 * portable dialect, which compiles for both CUDA and OpenCL devices:
 *
 *   GK_KERNEL void scale(GK_GLOBAL float *x, float factor, gk_i64 n)
 *   {
 *       gk_i64 i = GK_GLOBAL_ID(0);
 *       if (i < n)
 *           x[i] *= factor;
 *   }
 *
 * The dialect (docs/KERNELS.md) adds GK_KERNEL, GK_GLOBAL, GK_LOCAL,
 * GK_DEVICE_FN, GK_BARRIER(), GK_LOCAL_ID(d), GK_GROUP_ID(d),
 * GK_LOCAL_SIZE(d), GK_NUM_GROUPS(d), GK_GLOBAL_ID(d), GK_GLOBAL_SIZE(d),
 * GK_FOR_EACH_INDEX(i, n) and the types gk_i8 ... gk_u64 to the common
 * subset of CUDA C and OpenCL C.
 *
 * Compiled kernels are cached in memory and on disk (GPUKIT_CACHE_DIR,
 * default ~/.cache/gpukit/kernels), so a second run does not compile.
 *
 * Portable kernels run on the cpu device too: through the OpenCL driver
 * for the CPU (PoCL), which runs work-groups as vectorised loops around
 * the barriers on every core, reading and writing the cpu arrays in
 * place. There a launch returns when the kernel is done, like every cpu
 * op; without such a driver compiling fails with GK_ERR_NOT_FOUND, naming
 * the package to install. */
#ifndef GPUKIT_KERNEL_H
#define GPUKIT_KERNEL_H

#include <gpukit/array.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gk_kernel gk_kernel;
typedef struct gk_stream gk_stream;

/* --- streams --- */
/* A queue of its own on `device`: kernels launched on different streams
 * may run at the same time. Work on a stream starts after the array
 * operations queued before the launch, and array operations queued after
 * a launch wait for it, so arrays stay consistent; streams are for
 * overlapping independent kernels. NULL wherever a stream is taken means
 * the device's own stream. */
gk_status gk_stream_create(gk_device device, gk_stream **out);
gk_status gk_stream_synchronize(gk_stream *stream);
void gk_stream_free(gk_stream *stream); /* waits for its work first */

/* --- raw kernels --- */
typedef enum gk_kernel_language {
    GK_KERNEL_PORTABLE = 0, /* the portable dialect: CUDA and OpenCL */
    GK_KERNEL_CUDA_C,       /* CUDA C++ (NVRTC): CUDA devices only */
} gk_kernel_language;

/* Compiles the kernel `name` in `source` for `device`. `options` (may be
 * NULL) go to the compiler, e.g. "-DN=4". A compile error returns
 * GK_ERR_INVALID_ARGUMENT with the compiler's log in gk_last_error(). */
gk_status gk_kernel_compile(gk_device device, gk_kernel_language language, const char *source,
                            const char *name, const char *options, gk_kernel **out);
void gk_kernel_free(gk_kernel *kernel);

/* One kernel argument: an array (the kernel receives a pointer to its first
 * element; strides are the caller's business) or a scalar of an exact type. */
typedef enum gk_arg_kind {
    GK_ARG_ARRAY, GK_ARG_INT32, GK_ARG_INT64, GK_ARG_FLOAT32, GK_ARG_FLOAT64, GK_ARG_VIEW
} gk_arg_kind;

typedef struct gk_arg {
    gk_arg_kind kind;
    union {
        const gk_array *array;
        int32_t int32;
        int64_t int64;
        float float32;
        double float64;
    } value;
} gk_arg;

gk_arg gk_arg_array(const gk_array *array);
/* An array of any layout (views, negative or zero strides, up to 8
 * dimensions) as two kernel parameters: `GK_GLOBAL T *base` and a
 * `gk_view` by value (kernels/dialect.h: offset, ndim, size, shape[8],
 * strides[8], in elements); element [i, j] is
 * base[v.offset + i * v.strides[0] + j * v.strides[1]]. */
gk_arg gk_arg_view(const gk_array *array);
gk_arg gk_arg_int32(int32_t value);
gk_arg gk_arg_int64(int64_t value);
gk_arg gk_arg_float32(float value);
gk_arg gk_arg_float64(double value);

/* Launches grid[d] blocks (work-groups) of block[d] threads (work-items)
 * in each of 3 dimensions (use 1 for unused ones), like CUDA's <<<grid,
 * block>>>. Every array must be on the kernel's device. Asynchronous:
 * reading a result (gk_to_host, gk_item, ...) or gk_stream_synchronize
 * waits. */
gk_status gk_kernel_launch(gk_kernel *kernel, const uint32_t grid[3], const uint32_t block[3],
                           gk_stream *stream, int count, const gk_arg *args);

/* --- elementwise kernels --- */
/* `inputs` and `outputs` declare typed names, "float32 x, float32 y" and
 * "float32 z" (dtypes by gk_dtype_name: bool, int8 ... uint64, float32,
 * float64; bool elements are gk_u8 0/1 in the body). `body` is dialect code run once per
 * element with each name bound to that element (outputs are assignable)
 * and `i` the element's index in C order, e.g. "z = 2 * x + y;". Outputs
 * start at 0 in the body (they are not read from the output arrays). Names
 * may not be `i` or start with gk_/GK_ (the generated code uses those), and
 * OpenCL C reserves a few more (e.g. `half`). */
gk_status gk_elementwise_kernel(gk_device device, const char *inputs, const char *outputs,
                                const char *body, const char *name, gk_kernel **out);
/* Runs it over the inputs broadcast together: `in` holds one array per
 * declared input (0-d arrays act as scalars), dtypes exactly as declared;
 * `out` one per output: an array of the broadcast shape to write into, or
 * a NULL entry that is filled with a new array (a kernel with no inputs
 * takes its shape from the outputs given). The launch size is chosen for
 * the device. */
gk_status gk_elementwise_launch(gk_kernel *kernel, int in_count, const gk_array *const *in,
                                int out_count, gk_array **out, gk_stream *stream);

/* --- text kept beside the compiled kernels --- */
/* Front ends that generate kernel sources (Python's @gpukit.jit) keep
 * what they generated in the same disk cache as compiled kernels, under a
 * key of their own making (any bytes: everything that changes the text),
 * so a later process skips generating it. get: GK_OK with a new
 * NUL-terminated string to free(), or GK_ERR_NOT_FOUND on a miss (never
 * stored, damaged, or the cache is off). put: stores it; failing to is not
 * an error a caller must handle (the cache is an optimisation). */
gk_status gk_kernel_cache_get(const void *key, size_t key_size, char **text);
gk_status gk_kernel_cache_put(const void *key, size_t key_size, const char *text);

#ifdef __cplusplus
}
#endif

#endif
