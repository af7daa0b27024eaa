/* Sorting along the last axis (values, or int64 indices: stable) and the
 * cumulative sums and products along an axis. The core makes the rows
 * contiguous and the outputs; the backend sorts or scans (backend.h).
 *
 * - sort/argsort: NaN sorts last (NumPy); equal keys keep their order. A
 *   0-d array is its own sorted form (argsort: 0), as PyTorch. Complex
 *   sorts in NumPy's order (complex.c).
 * - cumsum, cumprod: int64 for signed integers and bool, uint64 for
 *   unsigned ones, the float type for floats. Axis GK_ALL_AXES flattens
 *   (C order) to a 1-d result, as NumPy's cumsum without an axis; a 0-d
 *   array is one element, so a 1-d result of 1 with axis 0, -1 or
 *   GK_ALL_AXES (NumPy).
 * - cumulative (the array API's cumulative_sum/_prod): the scan between
 *   a cast to dtype= and back, and the identity prepended along the axis
 *   for include_initial, all in the library so C callers get them too. */
#include "compute/array_impl.h"

#include "core/error.h"

#include <string.h>

static gk_status sort(const gk_array *a, bool want_indices, gk_array **out)
{
    const char *name = want_indices ? "argsort" : "sort";
    *out = NULL;
    if ((unsigned)a->dtype >= GK_DTYPE_COUNT)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: invalid dtype %d", name, (int)a->dtype);
    if (gk_dtype_is_complex(a->dtype)) /* NumPy's order (complex.c) */
        return gk_complex_sort(a, want_indices, out);
    if (gk_dtype_is_half(a->dtype)) { /* sorted as float32: exact both ways */
        gk_array *wide = NULL;
        gk_status status = gk_widen_half(a, &wide);
        if (status == GK_OK)
            status = sort(wide, want_indices, out);
        gk_array_free(wide);
        return status == GK_OK && !want_indices ? gk_narrow_to(out, a->dtype) : status;
    }
    gk_status status = gk_empty(gk_array_device(a), want_indices ? GK_INT64 : a->dtype, a->ndim,
                                a->shape, out);
    int64_t size = gk_array_size(a);
    if (status != GK_OK || size == 0)
        return status;
    int64_t length = a->ndim > 0 ? a->shape[a->ndim - 1] : 1;
    gk_array *rows;
    status = gk_contiguous(a, &rows);
    if (status == GK_OK) {
        gk_operand in = gk_array_operand(rows), result = gk_array_operand(*out);
        status = gk_array_backend(a)->sort(gk_array_device(a), want_indices ? NULL : &result,
                                           want_indices ? &result : NULL, &in, size / length,
                                           length);
        gk_array_free(rows);
    }
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

gk_status gk_sort(const gk_array *a, gk_array **out)
{
    return sort(a, false, out);
}

gk_status gk_argsort(const gk_array *a, gk_array **out)
{
    return sort(a, true, out);
}

static gk_status scan(gk_reduction op, const gk_array *a, int axis, gk_array **out);

static gk_status scan_part(const gk_array *part, const void *context, gk_array **out)
{
    return scan(GK_SUM, part, *(const int *)context, out);
}

/* The cumulative sum or product (op) along `axis`, as gk_cumsum documents. */
static gk_status scan(gk_reduction op, const gk_array *a, int axis, gk_array **out)
{
    *out = NULL;
    const char *name = op == GK_SUM ? "cumsum" : "cumprod";
    if ((unsigned)a->dtype >= GK_DTYPE_COUNT)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: invalid dtype %d", name, (int)a->dtype);
    if (gk_dtype_is_complex(a->dtype)) /* running sums part by part */
        return op == GK_SUM ? gk_complex_by_parts(a, scan_part, &axis, out)
                            : gk_complex_cumprod(a, axis, out);
    if (gk_dtype_is_half(a->dtype)) { /* running sums in float32 */
        gk_array *wide = NULL;
        gk_status status = gk_widen_half(a, &wide);
        if (status == GK_OK)
            status = scan(op, wide, axis, out);
        gk_array_free(wide);
        return status == GK_OK ? gk_narrow_to(out, a->dtype) : status;
    }
    gk_dtype dtype = gk_dtype_is_float(a->dtype)      ? a->dtype
                     : gk_dtype_is_unsigned(a->dtype) ? GK_UINT64
                                                      : GK_INT64;
    bool flat = axis == GK_ALL_AXES || (a->ndim == 0 && (axis == 0 || axis == -1));
    int ax = 0;
    if (!flat && gk_normalize_axis(a, axis, &ax) != GK_OK)
        return gk_fail(GK_ERR_AXIS, "%s: %s", name, gk_last_error());

    gk_array *source = NULL; /* flattened: the contiguous input */
    gk_status status;
    if (flat) {
        int64_t size = gk_array_size(a);
        status = gk_contiguous(a, &source);
        if (status == GK_OK)
            status = gk_empty(gk_array_device(a), dtype, 1, &size, out);
    } else {
        status = gk_empty(gk_array_device(a), dtype, a->ndim, a->shape, out);
    }
    if (status == GK_OK && gk_array_size(*out) > 0) {
        gk_loop outer = {0, {0}};
        gk_operand in, result = gk_array_operand(*out);
        int64_t count, in_stride = 1, out_stride = 1;
        if (flat) {
            in = gk_array_operand(source);
            count = gk_array_size(source);
        } else {
            in = gk_array_operand(a);
            count = a->shape[ax];
            in_stride = a->strides[ax];
            out_stride = (*out)->strides[ax];
            for (int i = 0; i < a->ndim; i++) {
                if (i == ax)
                    continue;
                in.strides[outer.ndim] = a->strides[i];
                result.strides[outer.ndim] = (*out)->strides[i];
                outer.shape[outer.ndim++] = a->shape[i];
            }
        }
        status = gk_array_backend(a)->scan(gk_array_device(a), op, &outer, &result, &in, count,
                                           in_stride, out_stride);
    }
    gk_array_free(source);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

gk_status gk_cumsum(const gk_array *a, int axis, gk_array **out)
{
    return scan(GK_SUM, a, axis, out);
}

gk_status gk_cumprod(const gk_array *a, int axis, gk_array **out)
{
    return scan(GK_PROD, a, axis, out);
}

gk_status gk_cumulative(gk_reduction op, const gk_array *a, int axis, const gk_dtype *dtype,
                        bool include_initial, gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "cumulative: the array is NULL");
    if (op != GK_SUM && op != GK_PROD)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "cumulative: %d is neither GK_SUM nor GK_PROD", (int)op);
    const char *name = op == GK_SUM ? "cumulative_sum" : "cumulative_prod";
    if (dtype && (unsigned)*dtype >= GK_DTYPE_COUNT)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: invalid dtype %d", name, (int)*dtype);
    /* Where the result's axis is: 0 when flattened (a 0-d array too). */
    int ax = 0;
    if (axis != GK_ALL_AXES && a->ndim > 0 && gk_normalize_axis(a, axis, &ax) != GK_OK)
        return gk_fail(GK_ERR_AXIS, "%s: %s", name, gk_last_error());
    if (a->ndim == 0 && axis != GK_ALL_AXES && axis != 0 && axis != -1)
        return gk_fail(GK_ERR_AXIS, "%s: axis %d is out of range for shape ()",
                       name, axis);

    gk_array *converted = NULL, *scanned = NULL;
    gk_status status = GK_OK;
    if (dtype && a->dtype != *dtype) {
        /* dtype= is the type computed in: cast first (a product of int8
         * with dtype=float64 multiplies in float64). */
        status = gk_cast(a, *dtype, &converted);
        a = converted;
    }
    if (status == GK_OK)
        status = scan(op, a, axis, &scanned);
    if (status == GK_OK && dtype && scanned->dtype != *dtype) {
        /* Integers run in 64 bits; int32 wants int32, which is the same
         * value modulo 2^32 (wrapping as int32 arithmetic would). */
        gk_array *narrowed = NULL;
        status = gk_cast(scanned, *dtype, &narrowed);
        gk_array_free(scanned);
        scanned = narrowed;
    }
    if (status == GK_OK && include_initial) {
        /* The identity, then the scan, along the axis. */
        int64_t shape[GK_MAX_DIMS];
        memcpy(shape, scanned->shape, sizeof *shape * (size_t)scanned->ndim);
        shape[ax] += 1;
        gk_array *tail = NULL;
        status = gk_full(gk_array_device(scanned), scanned->dtype, scanned->ndim, shape,
                         op == GK_SUM ? 0 : 1, out);
        if (status == GK_OK)
            status = gk_slice(*out, ax, 1, shape[ax], 1, &tail);
        if (status == GK_OK)
            status = gk_assign(tail, scanned);
        gk_array_free(tail);
        gk_array_free(scanned);
        if (status != GK_OK) {
            gk_array_free(*out);
            *out = NULL;
        }
    } else {
        *out = status == GK_OK ? scanned : NULL;
        if (status != GK_OK)
            gk_array_free(scanned);
    }
    gk_array_free(converted);
    return status;
}
