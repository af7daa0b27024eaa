/* N-dimensional arrays on any device (gpukit/device.h): created on a device,
 * moved with one call, computed on with the same calls whatever the device.
 *
 * Conventions
 * - Every call returns a gk_status; on failure gk_last_error() names the
 *   shapes, dtypes or devices involved, and no output is produced.
 * - Results come back through `gk_array **out` as new arrays; release each
 *   with gk_array_free(). Views (reshape, transpose, slice, broadcast_to)
 *   share memory with their base; memory goes when the last one is freed.
 * - The *_into variants write into an existing array (which may be an input:
 *   in place); it must have the result's shape, dtype and device.
 * - Operands of one call must be on the same device (no silent copies).
 * - Broadcasting follows NumPy: shapes are aligned on the right, and an axis
 *   of length 1 stretches.
 * - Type promotion follows NumPy 2, which is the Python array API
 *   standard's table where the standard has one (gk_promote_types): a 0-d
 *   array promotes like any array. A plain value (gk_binary_value,
 *   gk_binary_scalar, gk_clip) is "weak": it takes the array's dtype when
 *   its kind (bool < integer < floating) is no higher than the array's
 *   (int8 array + 3 is int8, float32 array * 2.5 is float32), else the
 *   default dtype of its kind (bool array + 3 is int64, int32 array + 2.5
 *   is float64); an integer value that does not fit the integer dtype
 *   computed in is an error (uint8 + 300), never a silent wrap, but a
 *   comparison answers by value (uint8 == -1 is false). Division is true
 *   division (integers compute in float64); the math functions of
 *   integers compute in gk_float_for's dtype (a plain value too:
 *   gk_op_value_dtype). Comparisons give bool. Bools:
 *   add is or, mul is and, minimum/maximum are and/or; sub, pow and neg of
 *   bools are errors. Integer pow is exact, a negative exponent gives 0 (1
 *   or -1 for a base of 1 or -1). Integers wrap on overflow. Bool elements
 *   are 0 or 1.
 * - Arrays are not thread-safe objects; different arrays may be used from
 *   different threads. */
#ifndef GPUKIT_ARRAY_H
#define GPUKIT_ARRAY_H

#include <gpukit/device.h>
#include <gpukit/status.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GK_MAX_DIMS 8

/* The element types: every real dtype of the Python array API standard,
 * and the two 16-bit floats GPUs train in: float16 (IEEE binary16) and
 * bfloat16 (float32's 8-bit exponent with 8 significant bits). Arithmetic
 * on those two runs in float32, each result rounded once to the dtype
 * (NumPy's float16 results); reductions accumulate in float32. The values
 * are stable (new ones are added at the end). complex64 and complex128
 * (the standard's complex floating dtypes) live on the CPU only: GPU
 * devices refuse them (gk_device_has_dtype), creation there failing with
 * GK_ERR_UNSUPPORTED_DTYPE. */
typedef enum gk_dtype {
    GK_BOOL = 0,
    GK_UINT8,
    GK_INT32,
    GK_INT64,
    GK_FLOAT32,
    GK_FLOAT64,
    GK_INT8,
    GK_INT16,
    GK_UINT16,
    GK_UINT32,
    GK_UINT64,
    GK_FLOAT16,
    GK_BFLOAT16,
    GK_COMPLEX64,  /* two float32: real, imaginary (C's float complex) */
    GK_COMPLEX128, /* two float64 (C's double complex) */
} gk_dtype;

#define GK_DTYPE_COUNT 15
/* The largest element size (complex128). */
#define GK_DTYPE_MAX_SIZE 16

size_t gk_dtype_size(gk_dtype dtype);
const char *gk_dtype_name(gk_dtype dtype); /* "float32" */
/* A dtype from its name ("float32") or NumPy's type string ("f4", "<f8", "|b1"). */
gk_status gk_dtype_parse(const char *name, gk_dtype *dtype);
/* Whether arrays of `dtype` can be made and computed on `device`: every
 * dtype on the CPU; every real one on CUDA GPUs; not float64 on OpenCL
 * devices without double precision (such arrays can still be made and
 * moved, not computed on); complex ones nowhere but on the CPU (arrays of
 * them cannot be made elsewhere). Fails (GK_ERR_NOT_FOUND ...) when the device is not
 * there. */
gk_status gk_device_has_dtype(gk_device device, gk_dtype dtype, bool *has);
/* Real floating: float16, bfloat16, float32, float64 (not complex). */
bool gk_dtype_is_float(gk_dtype dtype);
bool gk_dtype_is_complex(gk_dtype dtype); /* complex64, complex128 */
bool gk_dtype_is_inexact(gk_dtype dtype); /* real floating or complex */
/* The dtype of each part of a complex dtype (float32, float64); a real
 * dtype itself. */
gk_dtype gk_dtype_component(gk_dtype dtype);
bool gk_dtype_is_integer(gk_dtype dtype);  /* signed or unsigned, not bool */
bool gk_dtype_is_unsigned(gk_dtype dtype); /* uint8 ... uint64 */
/* float16 and bfloat16: stored in 16 bits, computed in float32. */
bool gk_dtype_is_half(gk_dtype dtype);
/* One element of `dtype` at `bytes` as a double (exact but for int64 and
 * uint64 beyond 2^53). */
double gk_dtype_load(gk_dtype dtype, const void *bytes);
/* value converted to dtype as a cast does (rounded to nearest even, NaN to
 * 0 and saturated for integers), written as one element into `bytes`. */
void gk_dtype_store(gk_dtype dtype, double value, void *bytes);
/* The same for a complex value re + im*i: both parts into a complex dtype
 * (rounded to its component), the real part alone into a real one (as a
 * cast from complex does). gk_dtype_store of a complex dtype stores
 * (value, 0); gk_dtype_load of one gives the real part. */
void gk_dtype_store_complex(gk_dtype dtype, double re, double im, void *bytes);
void gk_dtype_load_complex(gk_dtype dtype, const void *bytes, double *re, double *im);
/* The dtype two arrays promote to (NumPy 2's result_type, which is the
 * array API standard's table where the standard has one): bool < integers
 * < floats; signed and unsigned integers meet in the smallest signed type
 * holding both (int8 + uint8 is int16), and int64 with uint64 is float64;
 * an integer with a float is the smallest float holding the integer
 * (int16 + float32 is float32, int32 + float32 is float64, int8 + float16
 * is float16); float16 with bfloat16 is float32 (neither holds the other:
 * float16 has more digits, bfloat16 a wider range); with a complex dtype,
 * the narrowest complex whose parts hold both (float64 + complex64 and
 * int32 + complex64 are complex128, int16 + complex64 is complex64). */
gk_dtype gk_promote_types(gk_dtype a, gk_dtype b);
/* Whether every value of `from` converts to `to` exactly (NumPy's "safe"
 * casting, the standard's can_cast): complex to real never. */
bool gk_can_cast(gk_dtype from, gk_dtype to);
/* The dtype integer and bool inputs compute in for true division and the
 * math functions (NumPy's choice: the smallest float holding the input,
 * float16 for bool and 8-bit integers, float32 for 16-bit ones, float64
 * for wider ones). */
gk_dtype gk_float_for(gk_dtype dtype);

typedef struct gk_array gk_array;

/* --- what an array is --- */
int gk_array_ndim(const gk_array *a);
const int64_t *gk_array_shape(const gk_array *a);
const int64_t *gk_array_strides(const gk_array *a); /* in elements, may be 0 or negative */
/* Whether writes into a are allowed: not for views of a broadcast
 * (gk_broadcast_to), where one element stands for many. */
bool gk_array_is_writable(const gk_array *a);
gk_dtype gk_array_dtype(const gk_array *a);
gk_device gk_array_device(const gk_array *a);
int64_t gk_array_size(const gk_array *a);  /* number of elements */
size_t gk_array_nbytes(const gk_array *a); /* size * element size */
bool gk_array_is_contiguous(const gk_array *a); /* C order, no gaps */
void gk_array_free(gk_array *a); /* NULL is fine */

/* --- creation --- */
gk_status gk_empty(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                   gk_array **out);
gk_status gk_zeros(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                   gk_array **out);
gk_status gk_ones(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                  gk_array **out);
gk_status gk_full(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                  double value, gk_array **out);
/* gk_full with the complex value re + im*i (a real dtype keeps re). */
gk_status gk_full_complex(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                          double re, double im, gk_array **out);
/* A 0-d array holding `value`. */
gk_status gk_scalar(gk_device device, gk_dtype dtype, double value, gk_array **out);
/* start, start+step, ... while < stop (> stop for a negative step). */
gk_status gk_arange(gk_device device, gk_dtype dtype, double start, double stop, double step,
                    gk_array **out);
/* gk_arange of integers, exact where doubles are not (beyond 2^53): in
 * int64, cast to an integer `dtype`, whose values past its range wrap
 * around (modulo 2^bits, as NumPy's). */
gk_status gk_arange_int64(gk_device device, gk_dtype dtype, int64_t start, int64_t stop,
                          int64_t step, gk_array **out);
/* num evenly spaced values from start to stop: stop included (exactly) when
 * `endpoint`, else the values are the first num of num + 1 with it. */
gk_status gk_linspace(gk_device device, gk_dtype dtype, double start, double stop, int64_t num,
                      bool endpoint, gk_array **out);
/* gk_linspace from and to complex numbers (start and stop: real and
 * imaginary parts), in a complex `dtype`: the real parts' linspace plus i
 * times the imaginary parts'. */
gk_status gk_linspace_complex(gk_device device, gk_dtype dtype, const double start[2],
                              const double stop[2], int64_t num, bool endpoint,
                              gk_array **out);
gk_status gk_eye(gk_device device, gk_dtype dtype, int64_t n, gk_array **out);
/* Copies `data` (C order, size * element size bytes) to a new array. */
gk_status gk_from_host(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                       const void *data, gk_array **out);
/* A CPU array over the caller's memory, no copy: it must outlive the array.
 * The same as gk_wrap(gk_device_cpu(), dtype, ndim, shape, NULL, data,
 * NULL, NULL, out). */
gk_status gk_wrap_host(gk_dtype dtype, int ndim, const int64_t *shape, void *data,
                       gk_array **out);
/* Counter-based random numbers (Philox4x32-10): the same seed gives the
 * same numbers on every device. Floating dtypes only. */
gk_status gk_random_uniform(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                            uint64_t seed, double low, double high, gk_array **out);
gk_status gk_random_normal(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                           uint64_t seed, double mean, double stddev, gk_array **out);

/* --- memory owned by someone else (zero-copy interop) --- */
/* An array over memory another library owns (a NumPy buffer, a DLPack
 * tensor, a CuPy array), no copy. `data` is the device address of element
 * [0, ..., 0]; `strides` are in elements (NULL: C order) and may be 0 or
 * negative, as long as every element's byte address fits in the address
 * space. CPU and CUDA devices only: their addresses are plain pointers
 * (OpenCL addresses are gpukit's own encoding, so foreign OpenCL memory
 * cannot be named by one). `release(context)` (either may be NULL) is
 * called exactly once, when the last array or view over the memory is
 * freed, on whichever thread frees it. On failure nothing is called and
 * the memory stays the caller's. `data` must be aligned to the element
 * size, and may be NULL only for an empty shape. */
gk_status gk_wrap(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                  const int64_t *strides, void *data, void (*release)(void *context),
                  void *context, gk_array **out);
/* The device address of element [0, ..., 0] (what interop exports). For
 * CPU and CUDA arrays a real pointer (a CUdeviceptr for CUDA); for OpenCL
 * arrays gpukit's encoded address, meaningful only to gpukit. Queued work
 * may still be writing there: synchronize the device before another
 * library reads it. */
void *gk_array_data(const gk_array *a);
/* The CUDA device that `data`, a device pointer from another CUDA library,
 * belongs to (cuPointerGetAttribute's device ordinal);
 * GK_ERR_INVALID_ARGUMENT when the driver does not know the pointer. */
gk_status gk_cuda_pointer_device(const void *data, gk_device *device);
/* Another library uses a's memory from now on (an export through DLPack
 * or the CUDA array interface), on `stream`: 1, the legacy default
 * stream; 0 when not known (any stream). When gpukit's last view of the
 * memory goes, its pool takes the memory back only after that library's
 * work queued so far: a stream-ordered wait for stream 1, else a host
 * wait for the whole device. Nothing to do for arrays off CUDA. */
void gk_array_share(const gk_array *a, uintptr_t stream);
/* Waits on the host until the work queued so far on `stream`, a CUstream
 * handle of another library on the CUDA `device`, is done (1: the legacy
 * default stream, 2: the per-thread default stream; 0 is refused as
 * ambiguous). */
gk_status gk_cuda_stream_wait(gk_device device, uintptr_t stream);

/* --- moving data --- */
/* A copy on `device` (the original is untouched), like tensor.to(). */
gk_status gk_to(const gk_array *a, gk_device device, gk_array **out);
/* All elements in C order into `buffer` of `size` bytes (>= nbytes). */
gk_status gk_to_host(const gk_array *a, void *buffer, size_t size);
/* One element, converted to double; `index` has ndim entries (negative
 * counts from the end). */
gk_status gk_item(const gk_array *a, const int64_t *index, double *value);
/* The same as a complex value (im 0 for a real dtype; gk_item gives a
 * complex element's real part). */
gk_status gk_item_complex(const gk_array *a, const int64_t *index, double *re, double *im);

/* --- views and copies --- */
/* One entry of `shape` may be -1 (inferred). A view when the strides allow,
 * else a contiguous copy. */
gk_status gk_reshape(const gk_array *a, int ndim, const int64_t *shape, gk_array **out);
/* axes: a permutation of 0..ndim-1, or NULL to reverse the axes. */
gk_status gk_transpose(const gk_array *a, const int *axes, gk_array **out);
/* The view with the last two axes swapped: each matrix of a stack
 * transposed (the array API's matrix_transpose; at least 2 axes). */
gk_status gk_matrix_transpose(const gk_array *a, gk_array **out);
/* Python's a[start:stop:step] along `axis`, with its clamping and negative
 * indices; step may be negative, never 0. */
gk_status gk_slice(const gk_array *a, int axis, int64_t start, int64_t stop, int64_t step,
                   gk_array **out);
/* A view of a with `shape` (NumPy's rules); read-only (gk_array_is_writable)
 * when it stretches an axis, and so are views of it. */
gk_status gk_broadcast_to(const gk_array *a, int ndim, const int64_t *shape, gk_array **out);
/* The array itself (a new handle) when already contiguous, else a copy. */
gk_status gk_contiguous(const gk_array *a, gk_array **out);
gk_status gk_copy(const gk_array *a, gk_array **out);
/* Copies src into dst (same device; src broadcast to dst's shape; its dtype
 * converted). */
gk_status gk_assign(gk_array *dst, const gk_array *src);

/* --- joining, splitting and rearranging (the array API's manipulation
 * functions; src/compute/manipulate.c) --- */
/* The arrays joined along `axis` (GK_ALL_AXES: each flattened first), their
 * dtypes promoted; shapes equal except along axis; one device. */
gk_status gk_concat(int count, const gk_array *const *arrays, int axis, gk_array **out);
/* The arrays (equal shapes) joined along a new axis at `axis`. */
gk_status gk_stack(int count, const gk_array *const *arrays, int axis, gk_array **out);
/* The view a[..., index, ...] at `axis`, which it drops (negative index:
 * from the end). */
gk_status gk_index_axis(const gk_array *a, int axis, int64_t index, gk_array **out);
/* A view with the `naxes` axes listed reversed (axes NULL: every axis). */
gk_status gk_flip(const gk_array *a, int naxes, const int *axes, gk_array **out);
/* The elements shifted by shifts[i] along axes[i], wrapping around; with
 * naxes 0, over the flattened array by shifts[0]. */
gk_status gk_roll(const gk_array *a, int naxes, const int64_t *shifts, const int *axes,
                  gk_array **out);
/* A view with axis source[i] moved to destination[i] (count pairs), the
 * other axes keeping their order. */
gk_status gk_moveaxis(const gk_array *a, int count, const int *source, const int *destination,
                      gk_array **out);
/* A view without the listed axes, each of which must have length 1. */
gk_status gk_squeeze(const gk_array *a, int naxes, const int *axes, gk_array **out);
/* A view with new axes of length 1 at `axes` (positions in the result). */
gk_status gk_expand_dims(const gk_array *a, int naxes, const int *axes, gk_array **out);
/* a repeated reps[i] times along each axis (NumPy's tile: the shorter of
 * a's shape and reps is padded with 1s on the left). */
gk_status gk_tile(const gk_array *a, int nreps, const int64_t *reps, gk_array **out);
/* Each element repeated `repeats` times along `axis` (GK_ALL_AXES: over the
 * flattened array). */
gk_status gk_repeat(const gk_array *a, int64_t repeats, int axis, gk_array **out);
/* Element i repeated counts[i] times along `axis` (counts: a 1-d integer
 * array of the axis's length, or of length 1; GK_ALL_AXES: over the
 * flattened array). */
gk_status gk_repeat_counts(const gk_array *a, const gk_array *counts, int axis, gk_array **out);
/* The shape `count` shapes broadcast to (NumPy's broadcast_shapes). */
gk_status gk_broadcast_shape(int count, const int *ndims, const int64_t *const *shapes,
                             int *ndim, int64_t *shape);

/* --- indexing (src/compute/index.c) --- */
/* NumPy's take: a[..., indices, ...] at `axis` (GK_ALL_AXES: a flattened),
 * the axis replaced by the axes of `indices` (an integer array; negative
 * values count from the end; one out of range is an error). */
gk_status gk_take(const gk_array *a, const gk_array *indices, int axis, gk_array **out);
/* NumPy's take_along_axis: indices has a's ndim and broadcasts with a on
 * every other axis; out[..., j, ...] = a[..., indices[..., j, ...], ...]. */
gk_status gk_take_along_axis(const gk_array *a, const gk_array *indices, int axis,
                             gk_array **out);
/* a[..., indices, ...] = values at `axis` (values broadcast to the shape
 * gk_take would give); with repeated indices one of the values wins. */
gk_status gk_put(gk_array *a, const gk_array *indices, int axis, const gk_array *values);
/* NumPy's advanced indexing by `count` integer arrays on the consecutive
 * axes [first, first + count) of a: the arrays broadcast together, and the
 * result has a's axes before `first`, then their broadcast shape, then a's
 * axes after the indexed ones. Negative values count from the end; one out
 * of range is GK_ERR_OUT_OF_RANGE. */
gk_status gk_take_indices(const gk_array *a, int first, int count,
                          const gk_array *const *indices, gk_array **out);
/* The assignment a[..., i0, i1, ..., ...] = values with the same indexing;
 * values broadcast to what gk_take_indices would give. */
gk_status gk_put_indices(gk_array *a, int first, int count, const gk_array *const *indices,
                         const gk_array *values);
/* The C-order positions of a's nonzero elements: 1-d int64. */
gk_status gk_flatnonzero(const gk_array *a, gk_array **out);
/* The indices of a's nonzero elements, one int64 array per axis (out[0 ..
 * ndim)), in C order (NumPy's nonzero). */
gk_status gk_nonzero(const gk_array *a, gk_array **out);
/* a[mask]: mask is bool with the shape of a's first mask->ndim axes; the
 * result has one axis for them (the true positions in C order) followed
 * by a's remaining axes. */
gk_status gk_mask_select(const gk_array *a, const gk_array *mask, gk_array **out);
/* a[mask] = values, values broadcast to the shape gk_mask_select gives. */
gk_status gk_mask_assign(gk_array *a, const gk_array *mask, const gk_array *values);
/* Where each element of x would go in the ascending 1-d `sorted` to keep
 * it sorted: the first such place (right: the last), as int64 of x's
 * shape. NaN sorts last (NumPy's order). */
gk_status gk_searchsorted(const gk_array *sorted, const gk_array *x, bool right,
                          gk_array **out);
/* gk_searchsorted in unsorted[sorter]: sorter is the 1-d integer array of
 * indices that sort the 1-d `unsorted` (argsort's), of its length, each in
 * [0, length) (else GK_ERR_INVALID_ARGUMENT; a dtype not integer:
 * GK_ERR_UNSUPPORTED_DTYPE). */
gk_status gk_searchsorted_sorter(const gk_array *unsorted, const gk_array *sorter,
                                 const gk_array *x, bool right, gk_array **out);

/* --- sets (src/compute/sets.c) --- */
/* The distinct elements of a (flattened) in ascending order, each NaN
 * distinct (the array API's unique_all); outputs may be NULL to skip them:
 * values (a's dtype), the flat index of each value's first occurrence,
 * inverse (a's shape: which value each element is) and counts (int64). */
gk_status gk_unique(const gk_array *a, gk_array **values, gk_array **indices,
                    gk_array **inverse, gk_array **counts);
/* Whether each element of x is in `test` (any shape), as bool of x's
 * shape; invert gives the opposite. NaN is in nothing. Complex operands are
 * compared by value too (through gk_unique, as they have no order). */
gk_status gk_isin(const gk_array *x, const gk_array *test, bool invert, gk_array **out);

/* --- elementwise --- */
typedef enum gk_op {
    /* binary */
    GK_ADD = 0, GK_SUB, GK_MUL, GK_DIV, GK_POW, GK_MINIMUM, GK_MAXIMUM,
    GK_EQ, GK_NE, GK_LT, GK_LE, GK_GT, GK_GE,
    /* unary; GK_EXP..GK_SIGMOID are the floating-point math functions */
    GK_NEG, GK_ABS, GK_EXP, GK_LOG, GK_SQRT, GK_SIN, GK_COS, GK_TANH,
    GK_TAN, GK_ASIN, GK_ACOS, GK_ATAN, GK_SINH, GK_COSH, GK_ASINH, GK_ACOSH, GK_ATANH,
    GK_LOG1P, GK_EXPM1, GK_SIGMOID, GK_RELU,
    /* binary: floating-point functions (integers compute in gk_float_for's
     * dtype) */
    GK_ATAN2, GK_COPYSIGN, GK_HYPOT, GK_LOGADDEXP, GK_NEXTAFTER,
    /* binary: Python's // and % (bools refused) */
    GK_FLOOR_DIVIDE, GK_REMAINDER,
    /* binary: integers (and, or, xor also bools; shifts integers only) */
    GK_BITWISE_AND, GK_BITWISE_OR, GK_BITWISE_XOR, GK_BITWISE_LEFT_SHIFT,
    GK_BITWISE_RIGHT_SHIFT,
    /* binary: any dtype, nonzero is true; bool results */
    GK_LOGICAL_AND, GK_LOGICAL_OR, GK_LOGICAL_XOR,
    /* unary: rounding (integers and bools unchanged) */
    GK_CEIL, GK_FLOOR, GK_TRUNC, GK_ROUND,
    /* unary */
    GK_SIGN, GK_SIGNBIT, GK_ISNAN, GK_ISINF, GK_ISFINITE, GK_LOG2, GK_LOG10, GK_SQUARE,
    GK_POSITIVE, GK_RECIPROCAL, GK_BITWISE_INVERT, GK_LOGICAL_NOT, GK_CONJ, GK_REAL, GK_IMAG,
    GK_OP_COUNT
} gk_op;

/* The semantics of the ops added for the array API standard (2025.12), on
 * real dtypes:
 * - atan2, copysign, hypot, logaddexp, nextafter: C99's functions (Annex F
 *   special cases; logaddexp(x, x) is x + log(2), so of two equal
 *   infinities that infinity); integer and bool operands compute in
 *   gk_float_for of their promoted dtype.
 * - floor_divide and remainder: Python's // and %, so the remainder has
 *   the divisor's sign and x == floor_divide(x, y) * y + remainder(x, y).
 *   Integers: division by zero gives 0 for both (NumPy's values, without
 *   its warning); the most negative value // -1 wraps to itself. Floats
 *   follow NumPy (Python's float divmod): x // 0 is +-inf (NaN for 0 // 0),
 *   x % 0 is NaN; with an infinite dividend both are NaN (the standard
 *   asks +-inf for inf // finite; NumPy and Python pair // with % instead).
 * - bitwise_and, _or, _xor: integers and bools (bools: and, or, xor).
 *   bitwise_left_shift, _right_shift: integers only; a shift count at or
 *   beyond the bit width, or negative (which the standard leaves
 *   undefined), gives 0, or -1 for a negative value shifted right
 *   (NumPy's results). Right shifts of signed values are arithmetic.
 * - logical_and, _or, _xor, _not: any dtype, nonzero (NaN included) is
 *   true; bool results.
 * - ceil, floor, trunc, round (half to even): integers and bools are
 *   returned unchanged (a copy, in their dtype); -0.0, +-inf and NaN stay.
 * - sign: -1, 0 or 1 in x's dtype; sign(+-0.0) is 0.0, sign(NaN) NaN;
 *   bools refused. signbit: bool; true for -0.0 and a NaN with its sign bit
 *   set; integers: x < 0.
 * - isnan, isinf, isfinite: bool; integers and bools are finite.
 * - log2, log10: math functions (integers compute in gk_float_for's dtype).
 * - square: x * x in x's dtype (integers wrap); bools refused.
 * - positive: a copy; bools refused. reciprocal (NumPy's name): 1 / x in
 *   x's dtype; for integers (NumPy's result) 1 and -1 give themselves,
 *   every other value 0 (0 included); bools refused.
 * - bitwise_invert: ~x for integers, not for bools; floats refused.
 * - conj: a copy. real: x itself, a view sharing its memory (NumPy's
 *   x.real); imag: zeros of x's dtype, as one zero of its own broadcast to
 *   x's shape (free, like NumPy's read-only zeros; *_into ops refuse it as
 *   an output, being a broadcast view); with
 *   gk_unary_into both are copies into out. Bools are accepted (copies).
 * Refused dtypes fail with GK_ERR_INVALID_ARGUMENT naming the op and dtype;
 * gk_op_accepts tells them apart beforehand. */

const char *gk_op_name(gk_op op); /* "add" */
bool gk_op_is_binary(gk_op op);
/* Whether `op` is defined for operands of `dtype` (for a binary op, the
 * dtype its two operands promote to). Where it is not, gk_unary and
 * gk_binary fail naming the dtype (Python raises TypeError then). */
bool gk_op_accepts(gk_op op, gk_dtype dtype);

gk_status gk_binary(gk_op op, const gk_array *a, const gk_array *b, gk_array **out);
gk_status gk_binary_into(gk_op op, const gk_array *a, const gk_array *b, gk_array *out);
/* The kind of a plain value: a Python bool, int or float. */
typedef enum gk_value_kind {
    GK_VALUE_BOOL = 0, GK_VALUE_INT, GK_VALUE_FLOAT, GK_VALUE_COMPLEX
} gk_value_kind;
/* The dtype an array of `dtype` and a plain value of `kind` promote to
 * (weak, see the top): the array's when the value's kind is no higher,
 * else int64 or float64 (or for a complex value, see
 * gk_binary_value_complex). */
gk_dtype gk_value_dtype(gk_dtype dtype, gk_value_kind kind);
/* The dtype a plain value of `kind` takes beside an array of `dtype` in
 * `op` (any gk_op; GK_OP_COUNT for none): gk_value_dtype's, except, as in
 * NumPy 2, that an integer or bool value beside an integer or bool array
 * takes the float where op computes in one (division, the math
 * functions) and is a bool in the logical ops, so that int8 / 1000 and
 * logical_and(uint8, 300) compute. */
gk_dtype gk_op_value_dtype(gk_op op, gk_dtype dtype, gk_value_kind kind);
/* A comparison op (GK_EQ .. GK_GE) of an integer array with an integer
 * value beyond its dtype's range (`below` its least, else above its
 * most), x OP value or (value_first) value OP x: the answer of every
 * element, as NumPy 2 compares by value (uint8 == -1 is false, uint8 <
 * 300 true). */
bool gk_comparison_beyond_range(gk_op op, bool below, bool value_first);
/* a OP value (value OP a when value_first), the value weak (see the top)
 * and of `kind` (its dtype: gk_op_value_dtype); a bool or integer value
 * must be a whole number, and fit an integer dtype it takes, except in a
 * comparison (gk_comparison_beyond_range). Integer values are exact up to
 * 2^53 (a double holds them). A floating a to the power 2 or -1 is a * a
 * or 1 / a, rounded once (as NumPy's x ** 2 and x ** -1). */
gk_status gk_binary_value(gk_op op, const gk_array *a, double value, gk_value_kind kind,
                          bool value_first, gk_array **out);
/* a OP (re + im*i), the complex value weak: a complex array keeps its
 * dtype, a float one gives the complex of its precision (float32 + 1j is
 * complex64), integers and bools complex128 (NumPy 2's rule). */
gk_status gk_binary_value_complex(gk_op op, const gk_array *a, double re, double im,
                                  bool value_first, gk_array **out);
/* a OP value, the value's kind by its value: integral values (within
 * int64's range) are integers, all others floating. */
gk_status gk_binary_scalar(gk_op op, const gk_array *a, double value, gk_array **out);
gk_status gk_unary(gk_op op, const gk_array *a, gk_array **out);
gk_status gk_unary_into(gk_op op, const gk_array *a, gk_array *out);
/* a rounded half to even to `decimals` decimal places (NumPy's round):
 * a * 10^d rounded, divided by 10^d (for d < 0, a / 10^-d rounded,
 * times 10^-d), in a's dtype (each part of a complex number); integers
 * and bools are themselves for d >= 0 and go through float64 for d < 0,
 * cast back, as in NumPy. decimals 0 is GK_ROUND. */
gk_status gk_round_decimals(const gk_array *a, int decimals, gk_array **out);
/* condition ? a : b, condition bool, all three broadcast together. */
gk_status gk_where(const gk_array *condition, const gk_array *a, const gk_array *b,
                   gk_array **out);
/* minimum(maximum(a, low), high): with low > high every element is high. */
gk_status gk_clip(const gk_array *a, double low, double high, gk_array **out);
/* a converted to dtype, a new array whose axes lie in memory as a's (C
 * order unless a is a transposed or permuted array: NumPy's astype). */
gk_status gk_cast(const gk_array *a, gk_dtype dtype, gk_array **out);

/* --- reductions --- */
typedef enum gk_reduction {
    GK_SUM = 0, GK_MEAN, GK_PROD, GK_MIN, GK_MAX, GK_ARGMIN, GK_ARGMAX, GK_VAR, GK_STD,
    GK_REDUCTION_COUNT
} gk_reduction;

#define GK_ALL_AXES (-1000)

/* Over all elements (axis GK_ALL_AXES) or one axis (negative counts from the
 * end). keepdims keeps the reduced axis with length 1. Results: sum and prod
 * of integers and bool are int64 (float stays its width); mean, var and std
 * of integers are float64; argmin/argmax are int64 (first occurrence; over
 * all axes, the index into the flattened array); var/std divide by n (use
 * gk_var for ddof). float32 sums are pairwise, so sum of 10^8 ones is
 * exact. min/max/argmin/argmax of an empty array are errors. */
gk_status gk_reduce(gk_reduction op, const gk_array *a, int axis, bool keepdims,
                    gk_array **out);
gk_status gk_var(const gk_array *a, int axis, int64_t ddof, bool keepdims, bool take_sqrt,
                 gk_array **out);
/* Over the `naxes` axes listed (axes NULL: all of them; naxes 0: none, each
 * element its own group), as NumPy's tuple axes; ddof serves var and std;
 * argmin/argmax take one axis or all. */
gk_status gk_reduce_axes(gk_reduction op, const gk_array *a, int naxes, const int *axes,
                         int64_t ddof, bool keepdims, gk_array **out);
/* How many elements are nonzero over the axes listed (as gk_reduce_axes),
 * int64. */
gk_status gk_count_nonzero(const gk_array *a, int naxes, const int *axes, bool keepdims,
                           gk_array **out);

/* --- sorting and scans (along the last axis / one axis) --- */
gk_status gk_sort(const gk_array *a, gk_array **out);
gk_status gk_argsort(const gk_array *a, gk_array **out); /* int64, stable */
/* The cumulative sum / product along `axis` (NumPy's cumsum and cumprod),
 * in order: int64 for signed integers and bool, uint64 for unsigned ones
 * (wrapping in 64 bits), the float type itself for floats. GK_ALL_AXES
 * flattens to a 1-d result (a 0-d array gives 1 element). */
gk_status gk_cumsum(const gk_array *a, int axis, gk_array **out);
gk_status gk_cumprod(const gk_array *a, int axis, gk_array **out);
/* The array API's cumulative_sum (op GK_SUM) and cumulative_prod
 * (GK_PROD): gk_cumsum/gk_cumprod computed in *dtype when dtype is not
 * NULL (a converted first, the result converted back: an int8 product with
 * dtype int8 wraps in 8 bits), and with include_initial the identity (0 or
 * 1) first along the axis, which is then one longer. */
gk_status gk_cumulative(gk_reduction op, const gk_array *a, int axis, const gk_dtype *dtype,
                        bool include_initial, gk_array **out);

/* --- the array API's remaining functions (src/compute/utility.c and
 * contract.c), built from the calls above --- */
/* Coordinate grids from `count` arrays (each flattened; lengths n0, n1,
 * ...): out[i] holds arrays[i] along axis i of a grid of shape (n0, n1,
 * ...), or with xy (Cartesian indexing, NumPy's and the standard's
 * default) along axis i of (n1, n0, n2, ...), the first two swapped. Each
 * out[i] keeps its input's dtype. With copy, each is a new contiguous array
 * (NumPy's default); without, a broadcast view of its input (no memory,
 * NumPy's copy=False), which shares the input's memory: a write into the
 * whole view is refused (a broadcast view), but one into a single element
 * changes the input and the grid's whole line. count <= GK_MAX_DIMS; 0
 * gives nothing. */
gk_status gk_meshgrid(int count, const gk_array *const *arrays, bool xy, bool copy,
                      gk_array **out);
/* The lower (tril) or upper (triu) triangle of each matrix over a's last
 * two axes: element (i, j) is kept when j - i <= k (tril) or j - i >= k
 * (triu), else 0; k = 0 is the main diagonal, k > 0 above it. a has at
 * least 2 axes. */
gk_status gk_tril(const gk_array *a, int64_t k, gk_array **out);
gk_status gk_triu(const gk_array *a, int64_t k, gk_array **out);
/* Whether all / any elements are nonzero over the axes listed (as
 * gk_reduce_axes: axes NULL for all of them, naxes 0 for none), as bool.
 * NaN is nonzero; an empty reduction is true (all) or false (any). */
gk_status gk_all(const gk_array *a, int naxes, const int *axes, bool keepdims, gk_array **out);
gk_status gk_any(const gk_array *a, int naxes, const int *axes, bool keepdims, gk_array **out);
/* The n-th discrete difference along `axis` (a has at least one axis):
 * x[i + 1] - x[i] applied n times (bool: x[i + 1] != x[i], as NumPy), the
 * axis shorter by n (empty when n reaches its length). prepend and append
 * (either may be NULL) are joined to a along the axis first (gk_concat:
 * dtypes promote); each has a's number of axes, or none (a 0-d one is one
 * element along the axis, broadcast across the others). n = 0 gives the
 * joined array (a view of a when nothing is joined). */
gk_status gk_diff(const gk_array *a, int axis, int64_t n, const gk_array *prepend,
                  const gk_array *append, gk_array **out);
/* The tensor contraction of a and b over `naxes` pairs of axes: a_axes[i]
 * of a with b_axes[i] of b (of equal lengths; negative counts from the
 * end; no axis twice). The result has a's other axes, then b's (at most
 * GK_MAX_DIMS); naxes 0 is the outer product. Dtypes promote as
 * gk_promote_types; floating results come from gk_matmul, integer and bool
 * ones from the promoted dtype's own arithmetic (wrapping as NumPy's). */
gk_status gk_tensordot(const gk_array *a, const gk_array *b, int naxes, const int *a_axes,
                       const int *b_axes, gk_array **out);
/* The dot products of the vectors along `axis` of a and b broadcast
 * together (the axis counts in the broadcast shape, a non-negative one
 * only for operands of the same ndim; both must have it, with one length:
 * it does not broadcast): the sum of a * b along it, in the promoted
 * dtype (float16 and bfloat16 in float32, rounded once); a complex `a` is
 * conjugated (sum of conj(a) * b, the standard's vecdot). */
gk_status gk_vecdot(const gk_array *a, const gk_array *b, int axis, gk_array **out);

/* --- matrix products (every dtype; floating ones through the backend's
 * GEMM: CBLAS on the CPU, cuBLAS or our kernels on GPUs) --- */
/* NumPy's matmul: 1-d operands are promoted and the added axis removed,
 * leading axes broadcast as a batch. */
gk_status gk_matmul(const gk_array *a, const gk_array *b, gk_array **out);
gk_status gk_dot(const gk_array *a, const gk_array *b, gk_array **out);

/* --- factorizations (src/compute/factor.c): each takes a matrix or a
 * stack of them (the last two axes; the axes before are the batch) on any
 * device and returns its results there. float32, float64, complex64 and
 * complex128 compute as they are, integers and bool in float64; float16
 * and bfloat16 are GK_ERR_UNSUPPORTED_DTYPE. A singular or not positive
 * definite matrix, or a factorization that did not converge, is
 * GK_ERR_LINALG, naming the matrix of the stack. Real-valued results
 * (singular values, eigh's eigenvalues, slogdet's log|det|) have the dtype
 * of the parts. Computed by LAPACK on the host. --- */
/* a = u @ diag(s) @ vt per matrix, s descending. With k = min(m, n):
 * full_matrices gives u (m, m) and vt (n, n), else u (m, k) and vt (k, n).
 * u and vt may both be NULL (the singular values only). A matrix with NaN
 * or infinity is GK_ERR_LINALG (as NumPy: it does not converge). */
gk_status gk_svd(const gk_array *a, bool full_matrices, gk_array **u, gk_array **s,
                 gk_array **vt);
/* The singular values of each matrix, descending: shape (..., k). */
gk_status gk_svdvals(const gk_array *a, gk_array **out);
/* a = q @ r, q with orthonormal columns, r upper triangular: (m, k) and
 * (k, n), or (m, m) and (m, n) when `complete`. */
gk_status gk_qr(const gk_array *a, bool complete, gk_array **q, gk_array **r);
/* x with a @ x = b for square a. A 1-d b of length n is one right-hand
 * side (x has a's batch and length n); otherwise b is a stack of (n, k)
 * matrices whose batch broadcasts with a's. */
gk_status gk_solve(const gk_array *a, const gk_array *b, gk_array **x);
gk_status gk_inv(const gk_array *a, gk_array **out);
/* The determinant of each square matrix (0 for a singular one). On the
 * host it is the product of the LU's diagonal; on a CUDA GPU it is
 * sign * exp(log |det|), as NumPy computes it, so the two may differ in
 * the last bits. */
gk_status gk_det(const gk_array *a, gk_array **out);
/* det = sign * exp(logabsdet) per matrix: sign is +-1 (a unit complex
 * number for complex a) or 0, logabsdet real (-inf when singular). */
gk_status gk_slogdet(const gk_array *a, gk_array **sign, gk_array **logabsdet);
/* l with a = l @ l^H, lower triangular (upper: u with a = u^H @ u). */
gk_status gk_cholesky(const gk_array *a, bool upper, gk_array **out);
/* The eigenvalues (ascending, real) and, when `vectors` is not NULL, the
 * orthonormal eigenvectors (columns) of each Hermitian or real symmetric
 * matrix, from its lower triangle. */
gk_status gk_eigh(const gk_array *a, gk_array **values, gk_array **vectors);
/* The eigenvalues and, when `vectors` is not NULL, the right eigenvectors
 * (columns of unit length) of each general square matrix, both complex
 * (complex64 for float32 and complex64 input, else complex128), in
 * LAPACK's order. A matrix with NaN or infinity is GK_ERR_LINALG. */
gk_status gk_eig(const gk_array *a, gk_array **values, gk_array **vectors);

/* --- the fft extension (src/compute/fft.c): FFTW on the host (loaded at
 * run time), whatever the array's device, results moved back to it --- */
typedef enum gk_fft_kind {
    GK_FFT_FORWARD = 0,        /* fft, fftn: sum x e^(-2 pi i jk/n), complex */
    GK_FFT_BACKWARD,           /* ifft, ifftn: e^(+2 pi i jk/n) */
    GK_FFT_REAL_FORWARD,       /* rfft, rfftn: real input, the n/2 + 1 non-negative
                                * frequencies of the last axis listed */
    GK_FFT_REAL_BACKWARD,      /* irfft, irfftn: those back to n real points */
    GK_FFT_HERMITIAN_FORWARD,  /* hfft: a Hermitian signal's half to its real spectrum */
    GK_FFT_HERMITIAN_BACKWARD, /* ihfft */
} gk_fft_kind;
/* Which direction is scaled: by 1/n the inverse ("backward", the default),
 * the forward transform, or both by 1/sqrt(n) ("ortho"). */
typedef enum gk_fft_norm {
    GK_FFT_NORM_BACKWARD = 0,
    GK_FFT_NORM_ORTHO,
    GK_FFT_NORM_FORWARD,
} gk_fft_norm;
/* "fft", "ifft", "rfft", "irfft", "hfft", "ihfft" (messages name them). */
const char *gk_fft_kind_name(gk_fft_kind kind);
/* The transform of a over the `naxes` axes listed (negative from the end,
 * none twice; naxes < 0: every axis), in that order. lengths (NULL, or one
 * per axis; 0 keeps the default) are the points n transformed along each:
 * the input is cut or zero-padded to them (for the real backward kinds the
 * last axis takes n/2 + 1 points and gives n, by default 2 * (m - 1)).
 * complex64, float32 and the 16-bit floats compute in single precision,
 * the rest in double; the real forward kinds refuse complex input. */
gk_status gk_fft(const gk_array *a, gk_fft_kind kind, int naxes, const int *axes,
                 const int64_t *lengths, gk_fft_norm norm, gk_array **out);
/* The sample frequencies of an n-point transform at spacing d, as `dtype`
 * (real floating) on `device`: 0, 1, ..., then -(n/2) ... -1, over d * n;
 * `real`: only the n/2 + 1 non-negative ones (rfftfreq). */
gk_status gk_fftfreq(gk_device device, gk_dtype dtype, int64_t n, double d, bool real,
                     gk_array **out);
/* a with the zero frequency moved to the middle of each listed axis
 * (naxes < 0: every axis): a roll by half the length; `inverse` undoes it
 * (ifftshift). */
gk_status gk_fftshift(const gk_array *a, int naxes, const int *axes, bool inverse,
                      gk_array **out);

/* --- the linalg extension's views and norms (src/compute/norms.c), built
 * from the calls above, on every device --- */
/* The view of the diagonal of each matrix over a's last two axes (which it
 * replaces by one): offset 0 the main diagonal, k > 0 the k-th above it,
 * k < 0 below; empty where the offset passes the edge. Writable as a is. */
gk_status gk_diagonal(const gk_array *a, int64_t offset, gk_array **out);
/* The sum of that diagonal (gk_reduce's GK_SUM dtypes). */
gk_status gk_trace(const gk_array *a, int64_t offset, gk_array **out);
/* out[i, j] = a[i] * b[j] of two 1-d arrays, dtypes promoted. */
gk_status gk_outer(const gk_array *a, const gk_array *b, gk_array **out);
/* The cross product of the 3-vectors along `axis` of a and b broadcast
 * together (both have length 3 there; the axis counts in the broadcast
 * shape, negative from the end; a non-negative one only for operands of
 * the same ndim, where NumPy's per-operand count agrees). */
gk_status gk_cross(const gk_array *a, const gk_array *b, int axis, gk_array **out);
/* The ord-norm of the vectors over the axes listed (as gk_reduce_axes):
 * max |x| for inf, min |x| for -inf, the count of nonzeros for 0, else
 * sum(|x|^ord)^(1/ord) (NumPy's formulas; ord 2 is sqrt(sum |x|^2)). The
 * result is floating: the parts' dtype for complex, float64 for integers
 * and bool (float32 on a device without float64), as NumPy's. */
gk_status gk_vector_norm(const gk_array *a, int naxes, const int *axes, double ord,
                         bool keepdims, gk_array **out);
/* The rank of each matrix over a's last two axes: how many singular values
 * exceed rtol times the largest, as int64. rtol NULL is the standard's
 * default, max(m, n) * the dtype's eps; else an array (on a's device)
 * whose shape broadcasts with a's batch a.shape[:-2]: 0-d for one number,
 * or one per matrix. */
gk_status gk_matrix_rank(const gk_array *a, const gk_array *rtol, gk_array **out);
/* The pseudo-inverse (n, m) of each (m, n) matrix over a's last two axes,
 * singular values up to rtol times the largest taken as zero (rtol as
 * gk_matrix_rank's). */
gk_status gk_pinv(const gk_array *a, const gk_array *rtol, gk_array **out);
/* Each square matrix over a's last two axes to the n-th power: n = 0 the
 * identity (a's dtype), n < 0 the inverse's -n-th power (in gk_inv's
 * dtype). */
gk_status gk_matrix_power(const gk_array *a, int64_t n, gk_array **out);
/* Matrix norms over the last two axes (keepdims: they stay, length 1). */
typedef enum gk_matrix_norm_kind {
    GK_NORM_FROBENIUS = 0,     /* 'fro': sqrt of the sum of |x|^2 */
    GK_NORM_NUCLEAR,           /* 'nuc': the sum of the singular values */
    GK_NORM_MAX_COLUMN_SUM,    /* 1: the largest sum of |x| down a column */
    GK_NORM_MIN_COLUMN_SUM,    /* -1 */
    GK_NORM_LARGEST_SINGULAR,  /* 2 */
    GK_NORM_SMALLEST_SINGULAR, /* -2 */
    GK_NORM_MAX_ROW_SUM,       /* inf: the largest sum of |x| along a row */
    GK_NORM_MIN_ROW_SUM,       /* -inf */
    GK_NORM_COUNT
} gk_matrix_norm_kind;
gk_status gk_matrix_norm(const gk_array *a, gk_matrix_norm_kind ord, bool keepdims,
                         gk_array **out);

/* --- printing --- */
/* Like NumPy's repr, with the device: array([[1., 2.], [3., 4.]],
 * dtype=float32, device=cpu); long axes are abbreviated with "...". */
gk_status gk_array_print(FILE *stream, const gk_array *a);
/* The same text as a new string (free it). */
gk_status gk_array_format(const gk_array *a, char **text);

#ifdef __cplusplus
}
#endif
#endif
