/* Internal: the shared GPU backend. One implementation of every gk_backend
 * op for both GPU APIs, written against gpu/driver.h; this header is what
 * the op families (gpu/elementwise.c, gpu/reduce.c, ...) and user kernels
 * (gpu/kernel.c) use:
 *
 * - per-device state (driver, device facts, memory pool), made on first use;
 * - programs: built-in kernel sources (compute/kernels/<family>.gk,
 *   embedded in the library) built for one dtype, or any source, compiled
 *   once and cached in memory and on disk (gpu/cache.h);
 * - launches: an argument list and a run call.
 *
 * Built-in programs. A family's source is compiled once per dtype with
 * -DGK_DTYPE=<gk_dtype value>; kernels/types.h (put in front, after
 * dialect.h) turns that into GK_T (the element type), GK_T_IS_FLOAT,
 * GK_T_IS_BOOL, GK_T_IS_SIGNED, GK_T_UNSIGNED (the same-width unsigned
 * type, for wrapping integer arithmetic) and GK_T_NAME. Kernel names inside
 * a program need no dtype suffix. Program names are "<family>_<dtype>"
 * ("elementwise_float32"); that is also the name of the PTX built ahead of
 * time for CUDA. */
#ifndef GK_COMPUTE_GPU_GPU_H
#define GK_COMPUTE_GPU_GPU_H

#include "compute/backend.h"
#include "compute/gpu/driver.h"
#include "compute/kernels/dialect.h"

/* The built-in families, each a file compute/kernels/<family>.gk: the
 * name of family i ("elementwise"), or NULL past the last. */
const char *gk_gpu_family(int i);
/* Whether the family has a program for the dtype: every dtype, but the
 * 16-bit floats (float16, bfloat16) only in "elementwise" (conversion,
 * fill, sequence, where and the float ops, computed in float), complex
 * only in "elementwise" and "matmul". The core computes everything else of
 * theirs from those, so the other families refuse them; the build-time PTX
 * (backends/cuda/CMakeLists-ptx.cmake) and the tests follow the same rule. */
bool gk_gpu_family_has_dtype(const char *family, gk_dtype dtype);
/* Whether the dtype's programs need double precision (float64, complex128),
 * which some OpenCL devices lack. */
static inline bool gk_gpu_needs_fp64(gk_dtype dtype)
{
    return dtype == GK_FLOAT64 || dtype == GK_COMPLEX128;
}
/* GK_OK for any dtype but the 16-bit floats, which `what` (an op family
 * the core never sends them to) refuses with a message. */
gk_status gk_gpu_refuse_half(const char *what, gk_dtype dtype);

/* --- devices --- */
typedef struct gk_gpu_device gk_gpu_device;

/* The driver of a CUDA or OpenCL device (never NULL for those kinds). */
const gk_gpu_driver *gk_gpu_driver_of(gk_device device);
/* The device's facts (gk_gpu_info); checks the device on first use. */
gk_status gk_gpu_info_of(gk_device device, const gk_gpu_info **info);
/* The OpenCL device that runs user kernels for the cpu device: the first
 * OpenCL device that is a CPU (PoCL, Intel's CPU runtime), which compiles
 * work-groups into vectorised loops with barriers, on all cores. Kernels
 * there read and write the cpu device's memory in place (driver
 * lend_host). GK_ERR_NOT_FOUND, naming the fix, when there is none. */
gk_status gk_gpu_host_device(gk_device *out);
/* Synchronizes every CUDA and OpenCL device this process has started. */
gk_status gk_gpu_synchronize_used(void);
/* The memory pool's figures (gk_memory_stats); 0s for a device this
 * process never used, which is not started for them. */
gk_status gk_gpu_memory_stats(gk_device device, bool reset_peak, gk_memory_stats *stats);
/* The pool gives its wholly free chunks back to the driver; nothing to
 * do on a device never used. */
gk_status gk_gpu_empty_cache(gk_device device);
/* gk_gpu_empty_cache of every device used. */
gk_status gk_gpu_empty_cache_used(void);

/* --- programs --- */
/* The full source of a built-in program: dialect.h, types.h and the
 * family's file, NUL-terminated (malloc'd); the options are
 * "-DGK_DTYPE=n". Used by the runtime and by tools/tests that compile
 * every kernel. */
gk_status gk_gpu_builtin_source(const char *family, gk_dtype dtype, char **source,
                                char *options, size_t options_size);
/* A kernel of a built-in program, compiled (or loaded) on first use. */
gk_status gk_gpu_builtin_function(gk_device device, const char *family, gk_dtype dtype,
                                  const char *kernel, gk_gpu_function **function);
/* Any source, compiled once per (device, language, source, options): the
 * memory cache, then the disk cache, then the compiler. For
 * GK_GPU_PORTABLE sources dialect.h is put in front here. The module
 * stays loaded for the life of the process. */
gk_status gk_gpu_program(gk_device device, gk_gpu_language language, const char *source,
                         const char *options, gk_gpu_module **module);

/* --- memory --- */
/* From the device's pool (gpu/pool.h); these serve gk_backend.alloc/release. */
gk_status gk_gpu_alloc(gk_device device, size_t bytes, void **data);
void gk_gpu_release(gk_device device, void *data, size_t bytes);

/* --- launches --- */
#define GK_GPU_MAX_ARGS 24

typedef struct gk_gpu_launch {
    gk_device device;
    int count;
    gk_gpu_arg args[GK_GPU_MAX_ARGS];
    /* Copies of by-value arguments (kernel loops included). */
    _Alignas(16) unsigned char storage[4096];
    size_t used;
} gk_gpu_launch;

void gk_gpu_launch_begin(gk_gpu_launch *launch, gk_device device);
/* A by-value argument (copied). */
void gk_gpu_arg_value(gk_gpu_launch *launch, const void *value, size_t size);
void gk_gpu_arg_i64(gk_gpu_launch *launch, int64_t value);
/* An operand as two kernel parameters: `GK_GLOBAL T *name` (its buffer)
 * and `gk_i64 name_offset` (the element offset of `data` in it). */
void gk_gpu_arg_array(gk_gpu_launch *launch, const char *data, gk_dtype dtype);
/* An elementwise loop: `count` buffer parameters (GK_GLOBAL T *, output
 * first) then one `gk_kloop` parameter holding the offsets and strides,
 * with contiguous axes merged. */
void gk_gpu_arg_loop(gk_gpu_launch *launch, const gk_loop *loop, const gk_operand *operands,
                     int count);
/* Runs `kernel` of a built-in program over `items` work-items in 1-D:
 * groups of 256 (or the device's maximum), at most enough groups to fill
 * the device several times over, so kernels use GK_FOR_EACH_INDEX. Does
 * nothing for items == 0. */
gk_status gk_gpu_run_items(gk_gpu_launch *launch, const char *family, gk_dtype dtype,
                           const char *kernel, int64_t items);
/* Runs with an explicit geometry (groups x local in 3-D). */
gk_status gk_gpu_run_groups(gk_gpu_launch *launch, const char *family, gk_dtype dtype,
                            const char *kernel, const size_t groups[3], const size_t local[3]);
/* Runs any function (user kernels), on `stream` (NULL: the device's). */
gk_status gk_gpu_run_function(gk_gpu_launch *launch, gk_gpu_function *function,
                              const size_t groups[3], const size_t local[3],
                              gk_gpu_stream *stream);
/* The 1-D launch gk_gpu_run_items makes for `items` work-items. */
gk_status gk_gpu_items_size(gk_device device, int64_t items, size_t groups[3], size_t local[3]);
/* The 1-D group size gk_gpu_run_items uses on this device. */
size_t gk_gpu_group_size(gk_device device);

/* --- the gk_backend entries each family file implements --- */
/* gpu/elementwise.c */
gk_status gpu_convert(gk_device device, const gk_loop *loop, const gk_operand *out,
                      const gk_operand *in);
gk_status gpu_fill(gk_device device, const gk_loop *loop, const gk_operand *out,
                   const void *value);
gk_status gpu_sequence(gk_device device, const gk_operand *out, int64_t count, double start,
                       double step);
gk_status gpu_elementwise(gk_device device, gk_op op, const gk_loop *loop, const gk_operand *out,
                          const gk_operand *in);
gk_status gpu_where(gk_device device, const gk_loop *loop, const gk_operand *out,
                    const gk_operand *condition, const gk_operand *a, const gk_operand *b);
/* gpu/reduce.c */
gk_status gpu_reduce(gk_device device, gk_reduction op, const gk_loop *outer,
                     const gk_operand *out, const gk_operand *in, int64_t count, int64_t stride,
                     int64_t ddof);
gk_status gpu_scan(gk_device device, gk_reduction op, const gk_loop *outer,
                   const gk_operand *out, const gk_operand *in, int64_t count,
                   int64_t in_stride, int64_t out_stride);
/* gpu/sort.c */
gk_status gpu_sort(gk_device device, const gk_operand *values, const gk_operand *indices,
                   const gk_operand *in, int64_t rows, int64_t length);
/* gpu/index.c */
gk_status gpu_gather(gk_device device, const gk_loop *loop, const gk_operand *out,
                     const gk_operand *in, const gk_operand *index, int64_t axis_length,
                     int64_t axis_stride);
gk_status gpu_scatter(gk_device device, const gk_loop *loop, const gk_operand *out,
                      const gk_operand *in, const gk_operand *index, int64_t axis_length,
                      int64_t axis_stride);
gk_status gpu_flatnonzero(gk_device device, const gk_operand *mask, int64_t n,
                          const gk_operand *out);
gk_status gpu_searchsorted(gk_device device, const gk_loop *loop, const gk_operand *out,
                           const gk_operand *values, const gk_operand *sorted, int64_t n,
                           int64_t sorted_stride, bool right);
/* gpu/random.c */
gk_status gpu_random(gk_device device, const gk_operand *out, int64_t count, uint64_t seed,
                     bool normal, double a, double b);
/* gpu/matmul.c (the driver's BLAS when it loads, else a tiled kernel) */
gk_status gpu_matmul(gk_device device, gk_dtype dtype, int64_t batch, int64_t m, int64_t n,
                     int64_t k, const char *a, int64_t a_batch_stride, const char *b,
                     int64_t b_batch_stride, char *c, unsigned transposed);

extern const gk_backend gk_cuda_backend;
extern const gk_backend gk_opencl_backend;

#endif
