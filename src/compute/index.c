/* Indexing with arrays: take, take_along_axis and put (integer indices
 * along one axis), flatnonzero, boolean masks (select and assign through
 * flatnonzero's positions), and searchsorted.
 *
 * The core checks shapes, dtypes and the range of the indices, then makes
 * one backend call (backend.h: gather, scatter, flatnonzero,
 * searchsorted). Indices are converted to int64 first. Their range is
 * checked with two reductions (min and max) read back to the host, so an
 * index out of range is a clear GK_ERR_OUT_OF_RANGE on every device (NumPy
 * raises IndexError) rather than a wild read on a GPU; the backends only
 * wrap negative indices. */
#include "compute/array_impl.h"

#include "core/error.h"

#include <string.h>

/* --- helpers --- */

static gk_status unsupported(const gk_array *a, const char *what)
{
    char name[GK_DEVICE_NAME_MAX];
    return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s is not supported on %s yet", what,
                   gk_device_name(gk_array_device(a), name, sizeof name));
}

/* indices as int64 (indices itself, a new handle, when it already is one);
 * bool and floating indices are refused. */
static gk_status as_int64(const gk_array *indices, const char *what, gk_array **out)
{
    *out = NULL;
    if (!gk_dtype_is_integer(indices->dtype))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s: indices must be an integer array, not %s (a bool mask goes to "
                       "gk_mask_select)",
                       what, gk_dtype_name(indices->dtype));
    if (indices->dtype == GK_INT64)
        return gk_array_view(indices, out);
    return gk_copy_as(indices, GK_INT64, out);
}

/* The smallest and largest element of the integer `index` (size > 0), as
 * doubles (exact for any index of an array that fits in memory). */
static gk_status index_extremes(const gk_array *index, double *low, double *high)
{
    gk_array *min = NULL, *max = NULL;
    gk_status status = gk_reduce(GK_MIN, index, GK_ALL_AXES, false, &min);
    if (status == GK_OK)
        status = gk_reduce(GK_MAX, index, GK_ALL_AXES, false, &max);
    if (status == GK_OK)
        status = gk_item(min, NULL, low);
    if (status == GK_OK)
        status = gk_item(max, NULL, high);
    gk_array_free(min);
    gk_array_free(max);
    return status;
}

/* GK_OK when every element of the int64 `index` is in [-n, n). */
static gk_status check_range(const gk_array *index, int64_t n, int axis, const char *what)
{
    if (gk_array_size(index) == 0)
        return GK_OK;
    double low = 0, high = 0;
    gk_status status = index_extremes(index, &low, &high);
    if (status != GK_OK)
        return status;
    double bad = low < (double)-n ? low : high >= (double)n ? high : 0;
    if (low < (double)-n || high >= (double)n)
        return gk_fail(GK_ERR_OUT_OF_RANGE,
                       "%s: index %.0f is out of range for axis %d of length %lld (use %lld "
                       "to %lld)",
                       what, bad, axis, (long long)n, (long long)-n, (long long)n - 1);
    return GK_OK;
}

/* --- take and put along one axis --- */

/* The loop of a[..., index, ...] at axis ax: a's axes before ax, then
 * index's axes, then a's after ax. Operands: `array` (a's strides, 0 on
 * index's axes) and `index` (its strides on its axes, 0 elsewhere). */
static gk_status take_loop(const gk_array *a, const gk_array *index, int ax, gk_loop *loop,
                           gk_operand *array, gk_operand *positions)
{
    int ndim = a->ndim - 1 + index->ndim;
    if (ndim > GK_MAX_DIMS)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "take: the result would have %d axes (at most "
                       "%d)", ndim, GK_MAX_DIMS);
    *loop = (gk_loop){ndim, {0}};
    *array = gk_array_operand(a);
    *positions = gk_array_operand(index);
    memset(array->strides, 0, sizeof array->strides);
    memset(positions->strides, 0, sizeof positions->strides);
    int k = 0;
    for (int i = 0; i < ax; i++, k++) {
        loop->shape[k] = a->shape[i];
        array->strides[k] = a->strides[i];
    }
    for (int i = 0; i < index->ndim; i++, k++) {
        loop->shape[k] = index->shape[i];
        positions->strides[k] = index->strides[i];
    }
    for (int i = ax + 1; i < a->ndim; i++, k++) {
        loop->shape[k] = a->shape[i];
        array->strides[k] = a->strides[i];
    }
    return GK_OK;
}

/* take with the indices already int64 and, when `checked`, in range. */
static gk_status take_int64(const gk_array *a, const gk_array *index, int ax, bool checked,
                            gk_array **out)
{
    const gk_backend *backend = gk_array_backend(a);
    if (!backend->gather)
        return unsupported(a, "take");
    gk_status status = checked ? GK_OK : check_range(index, a->shape[ax], ax, "take");
    gk_loop loop;
    gk_operand in, positions;
    if (status == GK_OK)
        status = take_loop(a, index, ax, &loop, &in, &positions);
    if (status == GK_OK)
        status = gk_empty(gk_array_device(a), a->dtype, loop.ndim, loop.shape, out);
    if (status != GK_OK || gk_array_size(*out) == 0)
        return status;
    gk_operand target = gk_array_operand(*out);
    status = backend->gather(gk_array_device(a), &loop, &target, &in, &positions, a->shape[ax],
                             a->strides[ax]);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

/* The indexed axis and operands every take/put call starts from: a (or a
 * flattened, for GK_ALL_AXES) and the indices as int64. */
static gk_status indexed(const gk_array *a, const gk_array *indices, int axis, const char *what,
                         gk_array **base, gk_array **index, int *ax)
{
    *base = *index = NULL;
    if (!a || !indices)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: an operand is NULL", what);
    const gk_array *both[2] = {a, indices};
    gk_status status = gk_same_device(2, both, what);
    if (status != GK_OK)
        return status;
    if (axis == GK_ALL_AXES) {
        int64_t all = -1;
        status = gk_reshape(a, 1, &all, base);
        axis = 0;
    } else {
        status = gk_array_view(a, base);
    }
    if (status == GK_OK && (status = gk_normalize_axis(*base, axis, ax)) != GK_OK)
        status = gk_fail(status, "%s: %s", what, gk_last_error());
    if (status == GK_OK)
        status = as_int64(indices, what, index);
    if (status != GK_OK) {
        gk_array_free(*base);
        gk_array_free(*index);
        *base = *index = NULL;
    }
    return status;
}

gk_status gk_take(const gk_array *a, const gk_array *indices, int axis, gk_array **out)
{
    *out = NULL;
    gk_array *base, *index;
    int ax = 0;
    gk_status status = indexed(a, indices, axis, "take", &base, &index, &ax);
    if (status != GK_OK)
        return status;
    status = take_int64(base, index, ax, false, out);
    gk_array_free(base);
    gk_array_free(index);
    return status;
}

gk_status gk_take_along_axis(const gk_array *a, const gk_array *indices, int axis,
                             gk_array **out)
{
    *out = NULL;
    gk_array *base, *index;
    int ax = 0;
    gk_status status = indexed(a, indices, axis, "take_along_axis", &base, &index, &ax);
    if (status != GK_OK)
        return status;
    if (index->ndim != base->ndim) {
        char sa[160], si[160];
        status = gk_fail(GK_ERR_INVALID_ARGUMENT,
                         "take_along_axis: indices of shape %s must have as many axes as the "
                         "array's shape %s",
                         gk_shape_text(index->ndim, index->shape, si, sizeof si),
                         gk_shape_text(base->ndim, base->shape, sa, sizeof sa));
    }
    /* a and indices broadcast on every axis but ax, where the result takes
     * the indices' length. */
    int ndim = base->ndim;
    int64_t shape[GK_MAX_DIMS];
    for (int i = 0; status == GK_OK && i < ndim; i++) {
        int64_t la = i == ax ? 1 : base->shape[i], li = index->shape[i];
        if (la != li && la != 1 && li != 1) {
            char sa[160], si[160];
            status = gk_fail(GK_ERR_INVALID_ARGUMENT,
                             "take_along_axis: shapes %s and %s do not broadcast outside "
                             "axis %d",
                             gk_shape_text(base->ndim, base->shape, sa, sizeof sa),
                             gk_shape_text(index->ndim, index->shape, si, sizeof si), ax);
        }
        shape[i] = i == ax ? li : la == 1 ? li : la;
    }
    const gk_backend *backend = gk_array_backend(base);
    if (status == GK_OK && !backend->gather)
        status = unsupported(base, "take_along_axis");
    if (status == GK_OK)
        status = check_range(index, base->shape[ax], ax, "take_along_axis");
    if (status == GK_OK)
        status = gk_empty(gk_array_device(base), base->dtype, ndim, shape, out);
    if (status == GK_OK && gk_array_size(*out) > 0) {
        gk_loop loop = gk_array_loop(*out);
        gk_operand target = gk_array_operand(*out);
        gk_operand in = gk_array_operand(base), positions = gk_array_operand(index);
        for (int i = 0; i < ndim; i++) {
            in.strides[i] = i == ax || base->shape[i] == 1 ? 0 : base->strides[i];
            positions.strides[i] = index->shape[i] == 1 ? 0 : index->strides[i];
        }
        status = backend->gather(gk_array_device(base), &loop, &target, &in, &positions,
                                 base->shape[ax], base->strides[ax]);
    }
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    gk_array_free(base);
    gk_array_free(index);
    return status;
}

/* target[..., index, ...] = values at ax; index int64 and in range. */
static gk_status put_int64(gk_array *target, const gk_array *index, int ax,
                           const gk_array *values, const char *what)
{
    const gk_backend *backend = gk_array_backend(target);
    if (!backend->scatter)
        return unsupported(target, what);
    gk_status status = gk_check_writable(target, what);
    gk_loop loop;
    gk_operand out, positions;
    if (status == GK_OK)
        status = take_loop(target, index, ax, &loop, &out, &positions);
    if (status != GK_OK)
        return status;
    /* values: broadcast to the loop's shape and converted to a's dtype. */
    gk_array *wide = NULL, *converted = NULL;
    status = gk_broadcast_to(values, loop.ndim, loop.shape, &wide);
    if (status != GK_OK)
        return gk_fail(status, "%s: %s", what, gk_last_error());
    status = gk_copy_as(wide, target->dtype, &converted);
    if (status == GK_OK && gk_shape_size(loop.ndim, loop.shape) > 0) {
        gk_operand in = gk_array_operand(converted);
        status = backend->scatter(gk_array_device(target), &loop, &out, &in, &positions,
                                  target->shape[ax], target->strides[ax]);
    }
    gk_array_free(wide);
    gk_array_free(converted);
    return status;
}

gk_status gk_put(gk_array *a, const gk_array *indices, int axis, const gk_array *values)
{
    if (!values)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "put: the values are NULL");
    gk_array *base, *index;
    int ax = 0;
    gk_status status = indexed(a, indices, axis, "put", &base, &index, &ax);
    if (status != GK_OK)
        return status;
    if (base->buffer != a->buffer)
        status = gk_fail(GK_ERR_INVALID_ARGUMENT, "put: a flattened put needs an array whose "
                         "elements a single stride reaches; give an axis or a contiguous array");
    if (status == GK_OK)
        status = check_range(index, base->shape[ax], ax, "put");
    if (status == GK_OK)
        status = put_int64(base, index, ax, values, "put");
    gk_array_free(base);
    gk_array_free(index);
    return status;
}

/* --- nonzero and masks --- */

gk_status gk_flatnonzero(const gk_array *a, gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "flatnonzero: the array is NULL");
    const gk_backend *backend = gk_array_backend(a);
    if (!backend->flatnonzero)
        return unsupported(a, "flatnonzero");
    /* A contiguous bool mask, and the count of its true elements. */
    gk_array *mask = NULL, *sum = NULL;
    gk_status status = a->dtype == GK_BOOL ? gk_contiguous(a, &mask)
                                           : gk_binary_scalar(GK_NE, a, 0, &mask);
    if (status == GK_OK && !gk_array_is_contiguous(mask)) {
        gk_array *dense = NULL;
        status = gk_contiguous(mask, &dense);
        gk_array_free(mask);
        mask = dense;
    }
    double count = 0;
    if (status == GK_OK)
        status = gk_reduce(GK_SUM, mask, GK_ALL_AXES, false, &sum);
    if (status == GK_OK)
        status = gk_item(sum, NULL, &count);
    int64_t n = (int64_t)count;
    if (status == GK_OK)
        status = gk_empty(gk_array_device(a), GK_INT64, 1, &n, out);
    if (status == GK_OK && n > 0) {
        gk_operand positions = gk_array_operand(mask), target = gk_array_operand(*out);
        status = backend->flatnonzero(gk_array_device(a), &positions, gk_array_size(mask),
                                      &target);
    }
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    gk_array_free(mask);
    gk_array_free(sum);
    return status;
}

/* a with its first mask->ndim axes merged into one (a view when the
 * strides allow, else a copy), after checking the mask against them: as
 * in NumPy, a mask's axis of length 0 (selecting nothing) stands for an
 * axis of any length. */
static gk_status masked_base(const gk_array *a, const gk_array *mask, const char *what,
                             gk_array **base)
{
    *base = NULL;
    if (!a || !mask)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: an operand is NULL", what);
    const gk_array *both[2] = {a, mask};
    gk_status status = gk_same_device(2, both, what);
    if (status != GK_OK)
        return status;
    bool fits = mask->dtype == GK_BOOL && mask->ndim <= a->ndim;
    for (int i = 0; fits && i < mask->ndim; i++)
        fits = mask->shape[i] == a->shape[i] || mask->shape[i] == 0;
    if (!fits) {
        char sa[160], sm[160];
        return gk_fail(mask->dtype == GK_BOOL ? GK_ERR_OUT_OF_RANGE : GK_ERR_INVALID_ARGUMENT,
                       "%s: the mask (%s %s) must be bool and as long as the leading axes of "
                       "the array's shape %s (a mask's axis may also be 0 long)",
                       what, gk_dtype_name(mask->dtype),
                       gk_shape_text(mask->ndim, mask->shape, sm, sizeof sm),
                       gk_shape_text(a->ndim, a->shape, sa, sizeof sa));
    }
    int64_t shape[GK_MAX_DIMS];
    int ndim = 0;
    shape[ndim++] = gk_array_size(mask);
    for (int i = mask->ndim; i < a->ndim; i++)
        shape[ndim++] = a->shape[i];
    if (shape[0] > 0 || gk_array_size(a) == 0)
        return gk_reshape(a, ndim, shape, base);
    /* An empty mask over axes that are not: none of a's elements. */
    gk_array *none = NULL;
    status = gk_slice(a, 0, 0, 0, 1, &none);
    if (status == GK_OK)
        status = gk_reshape(none, ndim, shape, base);
    gk_array_free(none);
    return status;
}

gk_status gk_mask_select(const gk_array *a, const gk_array *mask, gk_array **out)
{
    *out = NULL;
    gk_array *base = NULL, *positions = NULL;
    gk_status status = masked_base(a, mask, "mask_select", &base);
    if (status == GK_OK)
        status = gk_flatnonzero(mask, &positions);
    if (status == GK_OK)
        status = take_int64(base, positions, 0, true, out);
    gk_array_free(base);
    gk_array_free(positions);
    return status;
}

gk_status gk_mask_assign(gk_array *a, const gk_array *mask, const gk_array *values)
{
    if (!values)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "mask_assign: the values are NULL");
    gk_array *base = NULL, *positions = NULL;
    gk_status status = masked_base(a, mask, "mask_assign", &base);
    if (status == GK_OK)
        status = gk_flatnonzero(mask, &positions);
    if (status == GK_OK && base->buffer == a->buffer) {
        status = put_int64(base, positions, 0, values, "mask_assign");
    } else if (status == GK_OK) {
        /* The merged axes needed a copy: change the copy, then write it
         * back into a. */
        status = put_int64(base, positions, 0, values, "mask_assign");
        gk_array *back = NULL;
        if (status == GK_OK)
            status = gk_reshape(base, a->ndim, a->shape, &back);
        if (status == GK_OK)
            status = gk_assign(a, back);
        gk_array_free(back);
    }
    gk_array_free(base);
    gk_array_free(positions);
    return status;
}

/* --- searching --- */

gk_status gk_searchsorted(const gk_array *sorted, const gk_array *x, bool right,
                          gk_array **out)
{
    *out = NULL;
    if (!sorted || !x)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "searchsorted: an operand is NULL");
    const gk_array *both[2] = {sorted, x};
    gk_status status = gk_same_device(2, both, "searchsorted");
    if (status != GK_OK)
        return status;
    if (sorted->ndim != 1) {
        char text[160];
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "searchsorted: the sorted array has shape %s; "
                       "it must be 1-d",
                       gk_shape_text(sorted->ndim, sorted->shape, text, sizeof text));
    }
    const gk_backend *backend = gk_array_backend(x);
    if (!backend->searchsorted)
        return unsupported(x, "searchsorted");
    /* Both in their promoted dtype, so the comparisons are exact (float32
     * for the 16-bit floats, which hold them exactly). */
    gk_dtype dtype = gk_promote_types(sorted->dtype, x->dtype);
    if (gk_dtype_is_complex(dtype))
        return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                       "searchsorted: not defined for %s (complex numbers have no order; the "
                       "array API standard searches real dtypes); search real(x) or abs(x)",
                       gk_dtype_name(dtype));
    if (gk_dtype_is_half(dtype))
        dtype = GK_FLOAT32;
    gk_array *s = NULL, *v = NULL;
    status = sorted->dtype == dtype ? gk_array_view(sorted, &s) : gk_copy_as(sorted, dtype, &s);
    if (status == GK_OK)
        status = x->dtype == dtype ? gk_array_view(x, &v) : gk_copy_as(x, dtype, &v);
    if (status == GK_OK)
        status = gk_empty(gk_array_device(x), GK_INT64, x->ndim, x->shape, out);
    if (status == GK_OK && gk_array_size(*out) > 0) {
        gk_loop loop = gk_array_loop(*out);
        gk_operand target = gk_array_operand(*out), values = gk_array_operand(v),
                   table = gk_array_operand(s);
        status = backend->searchsorted(gk_array_device(x), &loop, &target, &values, &table,
                                       s->shape[0], s->strides[0], right);
    }
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    gk_array_free(s);
    gk_array_free(v);
    return status;
}

gk_status gk_searchsorted_sorter(const gk_array *unsorted, const gk_array *sorter,
                                 const gk_array *x, bool right, gk_array **out)
{
    *out = NULL;
    if (!unsorted || !sorter || !x)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "searchsorted: an operand is NULL");
    const gk_array *all[3] = {unsorted, sorter, x};
    gk_status status = gk_same_device(3, all, "searchsorted");
    if (status != GK_OK)
        return status;
    /* The sorter must be a permutation of x1's positions: one of another
     * length would search a different array without a word (x1[sorter] is
     * whatever take makes of it), and a negative index would wrap. Checking
     * that every index is distinct would cost a sort; NumPy does not either. */
    if (!gk_dtype_is_integer(sorter->dtype))
        return gk_fail(GK_ERR_UNSUPPORTED_DTYPE, "searchsorted: the sorter is %s; it must be "
                       "an integer array (the indices that sort x1, as argsort gives)",
                       gk_dtype_name(sorter->dtype));
    if (unsorted->ndim != 1 || sorter->ndim != 1 || sorter->shape[0] != unsorted->shape[0]) {
        char text[160], sorter_text[160];
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "searchsorted: the sorter has shape %s and x1 "
                       "%s; they must be 1-d and of one length (the indices that sort x1)",
                       gk_shape_text(sorter->ndim, sorter->shape, sorter_text,
                                     sizeof sorter_text),
                       gk_shape_text(unsorted->ndim, unsorted->shape, text, sizeof text));
    }
    int64_t n = unsorted->shape[0];
    double low = 0, high = 0;
    status = n > 0 ? index_extremes(sorter, &low, &high) : GK_OK;
    if (status == GK_OK && n > 0 && (low < 0 || high >= (double)n))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "searchsorted: the sorter holds %.0f; its "
                       "indices must be in [0, %lld), x1's positions",
                       low < 0 ? low : high, (long long)n);
    gk_array *sorted = NULL;
    if (status == GK_OK)
        status = gk_take(unsorted, sorter, 0, &sorted);
    if (status == GK_OK)
        status = gk_searchsorted(sorted, x, right, out);
    gk_array_free(sorted);
    return status;
}

gk_status gk_nonzero(const gk_array *a, gk_array **out)
{
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "nonzero: the array is NULL");
    for (int i = 0; i < a->ndim; i++)
        out[i] = NULL;
    gk_array *flat = NULL;
    gk_status status = gk_flatnonzero(a, &flat);
    /* The C-order position p of an element is sum(index[k] * below[k]),
     * below[k] the elements below axis k: index[k] = (p div below[k]) mod
     * shape[k]. The divisions run in float64 and truncate, exact for
     * positions below 2^52. */
    int64_t below = 1;
    for (int k = a->ndim - 1; k >= 0 && status == GK_OK; k--) {
        gk_array *ratio = NULL, *quotient = NULL, *wraps = NULL, *whole = NULL, *back = NULL;
        if (below == 1) { /* the last axis: p div 1 is p (a 1-d a's indices are flat's) */
            status = gk_array_view(flat, &quotient);
        } else {
            status = gk_binary_scalar(GK_DIV, flat, (double)below, &ratio);
            if (status == GK_OK)
                status = gk_cast(ratio, GK_INT64, &quotient);
        }
        if (status == GK_OK && k > 0) {
            gk_array_free(ratio);
            ratio = NULL;
            status = gk_binary_scalar(GK_DIV, quotient, (double)a->shape[k], &ratio);
            if (status == GK_OK)
                status = gk_cast(ratio, GK_INT64, &wraps);
            if (status == GK_OK)
                status = gk_binary_scalar(GK_MUL, wraps, (double)a->shape[k], &whole);
            if (status == GK_OK)
                status = gk_binary(GK_SUB, quotient, whole, &back);
            if (status == GK_OK) {
                out[k] = back;
                back = NULL;
            }
        } else if (status == GK_OK) {
            out[k] = quotient;
            quotient = NULL;
        }
        below *= a->shape[k];
        gk_array_free(ratio);
        gk_array_free(quotient);
        gk_array_free(wraps);
        gk_array_free(whole);
        gk_array_free(back);
    }
    gk_array_free(flat);
    if (status != GK_OK)
        for (int i = 0; i < a->ndim; i++) {
            gk_array_free(out[i]);
            out[i] = NULL;
        }
    return status;
}

/* --- several integer arrays on consecutive axes (NumPy's advanced
 * indexing) --- */

/* NumPy's IndexError for index arrays whose shapes do not broadcast
 * together (the sum below would fail with an arithmetic op's message). */
static gk_status check_indices_broadcast(int count, const gk_array *const *indices,
                                         const char *what)
{
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    if (gk_broadcast_shapes(count, indices, &ndim, shape) == GK_OK)
        return GK_OK;
    return gk_fail(GK_ERR_OUT_OF_RANGE, "%s: shape mismatch: the index arrays' %s", what,
                   gk_last_error());
}

/* The flat positions into a's axes [first, first + count) merged into one,
 * from `count` integer arrays (broadcast together; negative values from
 * the end; each checked against its axis), and a with those axes merged
 * (a view when the strides allow: *merged's buffer is then a's). */
static gk_status merged_positions(const gk_array *a, int first, int count,
                                  const gk_array *const *indices, const char *what,
                                  gk_array **merged, gk_array **flat)
{
    *merged = *flat = NULL;
    if (!a || count < 1 || !indices)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: no array or no indices", what);
    if (first < 0 || first + count > a->ndim)
        return gk_fail(GK_ERR_OUT_OF_RANGE, "%s: %d index arrays from axis %d, but the array "
                       "has %d axes", what, count, first, a->ndim);
    gk_status status = GK_OK;
    int64_t length = 1;
    for (int k = 0; k < count && status == GK_OK; k++) {
        if (!indices[k])
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: index array %d is NULL", what, k);
        const gk_array *pair[2] = {a, indices[k]};
        status = gk_same_device(2, pair, what);
        length *= a->shape[first + k];
    }
    if (status == GK_OK)
        status = check_indices_broadcast(count, indices, what);
    /* flat = sum of index[k] * (the lengths of the later indexed axes) */
    int64_t below = 1;
    for (int k = count - 1; k >= 0 && status == GK_OK; k--) {
        int64_t n = a->shape[first + k];
        gk_array *index = NULL, *negative = NULL, *shifted = NULL, *wrapped = NULL,
                 *scaled = NULL, *sum = NULL;
        status = as_int64(indices[k], what, &index);
        if (status == GK_OK)
            status = check_range(index, n, first + k, what);
        if (status == GK_OK)
            status = gk_binary_scalar(GK_LT, index, 0, &negative);
        if (status == GK_OK)
            status = gk_binary_scalar(GK_ADD, index, (double)n, &shifted);
        if (status == GK_OK)
            status = gk_where(negative, shifted, index, &wrapped);
        if (status == GK_OK)
            status = gk_binary_scalar(GK_MUL, wrapped, (double)below, &scaled);
        if (status == GK_OK && *flat)
            status = gk_binary(GK_ADD, *flat, scaled, &sum);
        if (status == GK_OK) {
            gk_array_free(*flat);
            *flat = sum ? sum : scaled;
            if (!sum)
                scaled = NULL;
            sum = NULL;
        }
        below *= n;
        gk_array_free(index);
        gk_array_free(negative);
        gk_array_free(shifted);
        gk_array_free(wrapped);
        gk_array_free(scaled);
        gk_array_free(sum);
    }
    int64_t shape[GK_MAX_DIMS];
    int ndim = 0;
    for (int i = 0; i < first; i++)
        shape[ndim++] = a->shape[i];
    shape[ndim++] = length;
    for (int i = first + count; i < a->ndim; i++)
        shape[ndim++] = a->shape[i];
    if (status == GK_OK)
        status = gk_reshape(a, ndim, shape, merged);
    if (status != GK_OK) {
        gk_array_free(*flat);
        gk_array_free(*merged);
        *merged = *flat = NULL;
    }
    return status;
}

gk_status gk_take_indices(const gk_array *a, int first, int count,
                          const gk_array *const *indices, gk_array **out)
{
    *out = NULL;
    gk_array *merged = NULL, *flat = NULL;
    gk_status status = merged_positions(a, first, count, indices, "index", &merged, &flat);
    if (status == GK_OK)
        status = take_int64(merged, flat, first, true, out);
    gk_array_free(merged);
    gk_array_free(flat);
    return status;
}

gk_status gk_put_indices(gk_array *a, int first, int count, const gk_array *const *indices,
                         const gk_array *values)
{
    if (!values)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "index assignment: the values are NULL");
    gk_array *merged = NULL, *flat = NULL;
    gk_status status =
        merged_positions(a, first, count, indices, "index assignment", &merged, &flat);
    if (status == GK_OK)
        status = put_int64(merged, flat, first, values, "index assignment");
    if (status == GK_OK && merged->buffer != a->buffer) {
        /* The merged axes needed a copy: write it back into a. */
        gk_array *back = NULL;
        status = gk_reshape(merged, a->ndim, a->shape, &back);
        if (status == GK_OK)
            status = gk_assign(a, back);
        gk_array_free(back);
    }
    gk_array_free(merged);
    gk_array_free(flat);
    return status;
}
