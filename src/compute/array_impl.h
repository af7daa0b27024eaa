/* Internal: what an array is made of, and the helpers every op uses. */
#ifndef GK_COMPUTE_ARRAY_IMPL_H
#define GK_COMPUTE_ARRAY_IMPL_H

#include "compute/backend.h"

#include <gpukit/array.h>

#include <stdatomic.h>

/* Device memory shared by an array and its views. */
typedef struct gk_buffer {
    gk_device device;
    const gk_backend *backend;
    void *data;
    size_t bytes;
    atomic_long refs; /* views on other threads may come and go at once */
    bool owned; /* false for gk_wrap() memory */
    /* For gk_wrap() memory: called with `context` when the last view goes
     * (may be NULL). */
    void (*release)(void *context);
    void *context;
    /* Which streams of other libraries may still use the memory when the
     * last view goes (gk_array_share: GK_SHARED_* bits); 0: none. */
    atomic_int sharing;
} gk_buffer;

enum { GK_SHARED_LEGACY_STREAM = 1, GK_SHARED_ANY_STREAM = 2 };

struct gk_array {
    gk_buffer *buffer;
    size_t offset; /* bytes from buffer->data to element [0, 0, ...] */
    gk_dtype dtype;
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    int64_t strides[GK_MAX_DIMS]; /* elements */
    /* A view of a broadcast (gk_broadcast_to stretched an axis), and views
     * of it: one element stands for many, so writes are refused, as NumPy
     * makes broadcast_to's result read-only. */
    bool read_only;
};

/* The op families other than elementwise ops, conversions and indexing
 * compute float16 and bfloat16 in float32 (reductions accumulate there):
 * gk_widen_half gives a as float32 when it has one of those dtypes, else
 * a new handle on a; gk_narrow_to replaces *result by its conversion to
 * `dtype` when that differs (freeing it; *result NULL on failure). */
gk_status gk_widen_half(const gk_array *a, gk_array **out);
gk_status gk_narrow_to(gk_array **result, gk_dtype dtype);

/* Complex arrays in the core (complex.c). gk_complex_by_parts applies
 * fn to the real and imaginary parts of a (views of its component dtype)
 * and joins the two (equal-shaped, float32 or float64) results into a new
 * complex array. gk_complex_prod is the product along `axis`
 * (GK_ALL_AXES: of every element), gk_complex_cumprod the running product
 * (GK_ALL_AXES: of the flattened array) and gk_complex_sort sorts the last
 * axis in NumPy's order (values, or int64 indices; stable). */
typedef gk_status (*gk_part_fn)(const gk_array *part, const void *context, gk_array **out);
gk_status gk_complex_by_parts(const gk_array *a, gk_part_fn fn, const void *context,
                              gk_array **out);
gk_status gk_complex_prod(const gk_array *a, int axis, bool keepdims, gk_array **out);
gk_status gk_complex_cumprod(const gk_array *a, int axis, gk_array **out);
gk_status gk_complex_sort(const gk_array *a, bool want_indices, gk_array **out);

/* A new handle on the same memory, shape and strides (for views to adjust). */
gk_status gk_array_view(const gk_array *a, gk_array **out);

const gk_backend *gk_array_backend(const gk_array *a);

/* The array as a loop over its own shape sees it. */
gk_operand gk_array_operand(const gk_array *a);
gk_loop gk_array_loop(const gk_array *a);

/* a as an operand of a loop over `shape` (ndim >= a's): axes aligned on the
 * right, strides 0 along axes a stretches. The shapes must be compatible. */
gk_operand gk_broadcast_operand(const gk_array *a, int ndim, const int64_t *shape);

/* An empty array for an elementwise result of `shape` from `operands`,
 * its axes in memory in the order of theirs (NumPy's order='K': exp of
 * a transposed array is transposed, and runs as one contiguous loop) where
 * every operand that spans the whole shape (not broadcast) lies in one
 * order; C order otherwise, and when none spans it. */
gk_status gk_empty_like_operands(gk_device device, gk_dtype dtype, int ndim,
                                 const int64_t *shape, int count,
                                 const gk_array *const *operands, gk_array **out);

/* Reorders the loop's axes, and each operand's strides with them, so that
 * operands[0] (the output) is walked in its memory order: the backends
 * then merge what lies contiguous there and run their inner loops along
 * its smallest stride. For loops whose result does not depend on the
 * order of the elements (an input that overlaps the output other than
 * element for element is a copy by then). */
void gk_loop_in_output_order(gk_loop *loop, gk_operand *operands, int count);

/* The range of an integer dtype (or bool) as doubles, both ends included:
 * the 64-bit ones end at the last double below their top (2^63, 2^64), so
 * every value inside converts exactly. */
void gk_integer_range(gk_dtype dtype, double *low, double *high);

/* A contiguous copy of a on its device, converted to `dtype`. */
gk_status gk_copy_as(const gk_array *a, gk_dtype dtype, gk_array **out);
/* The same with a's axes in memory as a's (gk_empty_like_operands), as
 * NumPy's astype: gk_cast. */
gk_status gk_copy_keeping_order(const gk_array *a, gk_dtype dtype, gk_array **out);

/* The broadcast shape of `count` arrays, or GK_ERR_INVALID_ARGUMENT naming
 * their shapes ("shapes (2, 3) and (4,) do not broadcast"). */
gk_status gk_broadcast_shapes(int count, const gk_array *const *arrays, int *ndim,
                              int64_t *shape);

/* GK_OK when all `count` arrays are on one device; else a message naming
 * the devices and `what` ("add"). */
gk_status gk_same_device(int count, const gk_array *const *arrays, const char *what);

/* GK_OK unless `axis` is non-negative and a and b differ in ndim: the
 * axis of vectors of two operands (vecdot, cross) counts in their
 * broadcast shape, from the end as the standard has it; a non-negative
 * one would name another axis than NumPy's (which counts in each
 * operand), so it is refused there with a message naming `what`. */
gk_status gk_check_vector_axis(const gk_array *a, const gk_array *b, int axis, const char *what);

/* axis in [-ndim, ndim) to [0, ndim), or a message naming the shape. */
gk_status gk_normalize_axis(const gk_array *a, int axis, int *normalized);

/* "(2, 3)" into buf. */
const char *gk_shape_text(int ndim, const int64_t *shape, char *buf, size_t size);

/* The element count of a shape, or -1 when it overflows. */
int64_t gk_shape_size(int ndim, const int64_t *shape);

/* Checks that `out` has this shape, dtype and device (for *_into calls). */
gk_status gk_check_out(const gk_array *out, int ndim, const int64_t *shape, gk_dtype dtype,
                       gk_device device, const char *what);

/* GK_ERR_INVALID_ARGUMENT when writing `out` would write some element twice
 * (a broadcast view). */
gk_status gk_check_writable(const gk_array *out, const char *what);

/* Whether `in` must be copied before a kernel writes `out` (both over
 * `loop`, not empty): it overlaps out's memory and is not the very same
 * elements in the same order. */
bool gk_operands_conflict(const gk_operand *in, const gk_operand *out, const gk_loop *loop);

#endif
