/* Reductions: sum, mean, prod, min, max, argmin, argmax, var and std over
 * all elements or one axis. The core picks the result's dtype and shape and
 * describes the loop; the backend reduces (backend.h).
 *
 * - Result dtypes (NumPy's): sum and prod of signed integers and bool are
 *   int64, of unsigned integers uint64, of floats the same float; mean, var and std of integers and bool are float64, of
 *   floats the same float; min and max keep the dtype; argmin and argmax
 *   are int64.
 * - Over all axes, the input is seen as one row of `size` elements (a
 *   contiguous copy when no single stride covers it), so argmin/argmax give
 *   the index into the flattened C-order array.
 * - Over one axis, the outer loop is the shape without the axis; the output
 *   (with or without the kept length-1 axis) and the input follow it, and
 *   the reduced axis is `count` elements `stride` apart.
 * - A 0-d array takes axis 0 and -1 as its one element (NumPy, PyTorch).
 * - Empty reductions: sum 0, prod 1, mean/var/std NaN; min, max, argmin and
 *   argmax fail ("zero-size array ... has no identity"), as NumPy.
 * - var/std divide by max(n - ddof, 0), as NumPy: ddof >= n gives NaN (inf
 *   when the deviations are not all 0) rather than an error. */
#include "compute/array_impl.h"

#include "core/error.h"

#include <string.h>

static const char *const names[GK_REDUCTION_COUNT] = {
    [GK_SUM] = "sum",       [GK_MEAN] = "mean",     [GK_PROD] = "prod",
    [GK_MIN] = "min",       [GK_MAX] = "max",       [GK_ARGMIN] = "argmin",
    [GK_ARGMAX] = "argmax", [GK_VAR] = "var",       [GK_STD] = "std",
};

static gk_dtype result_dtype(gk_reduction op, gk_dtype in)
{
    switch (op) {
    case GK_SUM:
    case GK_PROD: return gk_dtype_is_float(in) ? in : gk_dtype_is_unsigned(in) ? GK_UINT64 : GK_INT64;
    case GK_MEAN:
    case GK_VAR:
    case GK_STD: return gk_dtype_is_float(in) ? in : GK_FLOAT64;
    case GK_ARGMIN:
    case GK_ARGMAX: return GK_INT64;
    default: return in;
    }
}

static bool has_identity(gk_reduction op)
{
    return op != GK_MIN && op != GK_MAX && op != GK_ARGMIN && op != GK_ARGMAX;
}

/* The stride that walks every element of `a` in C order, when one does
 * (axes of length 1 dropped, the rest mergeable): contiguous arrays,
 * reversed or stepped 1-d views, a broadcast scalar. */
static bool flat_stride(const gk_array *a, int64_t *stride)
{
    int64_t step = 1, below = 0; /* below: the element count the last stride covers */
    bool found = false;
    for (int i = a->ndim - 1; i >= 0; i--) {
        if (a->shape[i] == 1)
            continue;
        if (a->shape[i] == 0) {
            *stride = 1;
            return true;
        }
        if (!found) {
            step = a->strides[i];
            below = a->shape[i];
            found = true;
            continue;
        }
        if (a->strides[i] != step * below)
            return false;
        below *= a->shape[i];
    }
    *stride = step;
    return true;
}

static gk_status reduce(gk_reduction op, const gk_array *a, int axis, int64_t ddof,
                        bool keepdims, gk_array **out);

typedef struct part_reduction {
    gk_reduction op;
    int axis;
    bool keepdims;
} part_reduction;

static gk_status reduce_part(const gk_array *part, const void *context, gk_array **out)
{
    const part_reduction *r = context;
    return reduce(r->op, part, r->axis, 0, r->keepdims, out);
}

/* sum and mean of complex arrays part by part (the pairwise float sums of
 * each part, as NumPy's complex sum); prod by complex multiplication; the
 * others take real numbers only (the array API standard's min, max,
 * argmin, argmax, var and std). */
static gk_status reduce_complex(gk_reduction op, const gk_array *a, int axis, bool keepdims,
                                gk_array **out)
{
    if (op == GK_SUM || op == GK_MEAN) {
        part_reduction r = {op, axis, keepdims};
        return gk_complex_by_parts(a, reduce_part, &r, out);
    }
    if (op == GK_PROD)
        return gk_complex_prod(a, axis, keepdims, out);
    return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                   "%s: not defined for %s (complex numbers have no order; the array API "
                   "standard defines it for real dtypes); reduce abs(x), real(x) or imag(x)",
                   names[op], gk_dtype_name(a->dtype));
}

static gk_status reduce(gk_reduction op, const gk_array *a, int axis, int64_t ddof,
                        bool keepdims, gk_array **out)
{
    *out = NULL;
    if ((unsigned)op >= GK_REDUCTION_COUNT)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "reduce: invalid reduction %d", (int)op);
    const char *name = names[op];
    if ((unsigned)a->dtype >= GK_DTYPE_COUNT)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: invalid dtype %d", name, (int)a->dtype);
    if (ddof < 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: ddof is %lld; it must be 0 or more", name,
                       (long long)ddof);
    if (gk_dtype_is_complex(a->dtype))
        return reduce_complex(op, a, axis, keepdims, out);
    if (gk_dtype_is_half(a->dtype)) {
        /* Accumulated in float32, the result rounded once to the dtype. */
        gk_array *wide = NULL;
        gk_status status = gk_widen_half(a, &wide);
        if (status == GK_OK)
            status = reduce(op, wide, axis, ddof, keepdims, out);
        gk_array_free(wide);
        if (status == GK_OK)
            status = gk_narrow_to(out, result_dtype(op, a->dtype));
        return status;
    }
    char shape_text[160];
    bool all = axis == GK_ALL_AXES || (a->ndim == 0 && (axis == 0 || axis == -1));
    int ax = -1;
    if (!all && gk_normalize_axis(a, axis, &ax) != GK_OK)
        return gk_fail(GK_ERR_AXIS, "%s: %s", name, gk_last_error());

    int out_ndim = 0;
    int64_t out_shape[GK_MAX_DIMS];
    gk_loop outer = {0, {0}};
    int64_t count, stride = 1;
    gk_array *source = NULL; /* all axes: the contiguous copy, when one is needed */
    gk_operand in;
    if (all) {
        count = gk_array_size(a);
        out_ndim = keepdims ? a->ndim : 0;
        for (int i = 0; i < out_ndim; i++)
            out_shape[i] = 1;
        in = gk_array_operand(a);
    } else {
        count = a->shape[ax];
        stride = a->strides[ax];
        in = gk_array_operand(a);
        for (int i = 0; i < a->ndim; i++) {
            if (i == ax) {
                if (keepdims)
                    out_shape[out_ndim++] = 1;
                continue;
            }
            out_shape[out_ndim++] = a->shape[i];
            in.strides[outer.ndim] = a->strides[i];
            outer.shape[outer.ndim++] = a->shape[i];
        }
    }
    if (count == 0 && !has_identity(op)) {
        char where[48] = "";
        if (!all)
            snprintf(where, sizeof where, ", axis %d", ax);
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s: zero-size array to reduction operation %s which has no identity "
                       "(shape %s%s)",
                       name, name, gk_shape_text(a->ndim, a->shape, shape_text, sizeof shape_text),
                       where);
    }
    if (all && !flat_stride(a, &stride)) {
        gk_status status = gk_contiguous(a, &source);
        if (status != GK_OK)
            return status;
        in = gk_array_operand(source);
        stride = 1;
    }

    gk_status status = gk_empty(gk_array_device(a), result_dtype(op, a->dtype), out_ndim,
                                out_shape, out);
    if (status == GK_OK && gk_array_size(*out) > 0) {
        gk_operand result = gk_array_operand(*out);
        /* The output's strides along the outer loop: without the kept axis. */
        int k = 0;
        for (int i = 0; i < (*out)->ndim && !all; i++)
            if (!(keepdims && i == ax))
                result.strides[k++] = (*out)->strides[i];
        status = gk_array_backend(a)->reduce(gk_array_device(a), op, &outer, &result, &in,
                                             count, stride, ddof);
    }
    gk_array_free(source);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

gk_status gk_reduce(gk_reduction op, const gk_array *a, int axis, bool keepdims,
                    gk_array **out)
{
    return reduce(op, a, axis, 0, keepdims, out);
}

gk_status gk_var(const gk_array *a, int axis, int64_t ddof, bool keepdims, bool take_sqrt,
                 gk_array **out)
{
    return reduce(take_sqrt ? GK_STD : GK_VAR, a, axis, ddof, keepdims, out);
}

gk_status gk_reduce_axes(gk_reduction op, const gk_array *a, int naxes, const int *axes,
                         int64_t ddof, bool keepdims, gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "reduce: the array is NULL");
    if ((unsigned)op >= GK_REDUCTION_COUNT)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "reduce: %d is not a reduction", (int)op);
    if (!axes)
        return reduce(op, a, GK_ALL_AXES, ddof, keepdims, out);
    bool marked[GK_MAX_DIMS] = {false};
    for (int i = 0; i < naxes; i++) {
        int ax = 0;
        gk_status status = gk_normalize_axis(a, axes[i], &ax);
        if (status != GK_OK)
            return gk_fail(status, "%s: %s", names[op], gk_last_error());
        if (marked[ax])
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: axis %d is listed twice", names[op],
                           axes[i]);
        marked[ax] = true;
    }
    if (naxes == 1)
        return reduce(op, a, axes[0], ddof, keepdims, out);
    if (gk_dtype_is_complex(a->dtype) && op != GK_SUM && op != GK_MEAN && op != GK_PROD)
        return reduce_complex(op, a, GK_ALL_AXES, keepdims, out); /* the refusal */
    if (naxes > 1 && (op == GK_ARGMIN || op == GK_ARGMAX))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: takes one axis or all of them, not %d",
                       names[op], naxes);
    /* The kept axes first, then the reduced ones merged into one last axis
     * (none reduced: a new last axis of length 1), reduced as one axis. */
    int order[GK_MAX_DIMS], kept = 0;
    int64_t merged_shape[GK_MAX_DIMS], kept_shape[GK_MAX_DIMS], length = 1;
    for (int i = 0; i < a->ndim; i++)
        if (!marked[i]) {
            kept_shape[kept] = a->shape[i];
            order[kept++] = i;
        }
    for (int i = 0, k = kept; i < a->ndim; i++)
        if (marked[i]) {
            order[k++] = i;
            length *= a->shape[i];
        }
    if (kept + 1 > GK_MAX_DIMS)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: reducing no axis of a %d-d array is not "
                       "supported", names[op], a->ndim);
    memcpy(merged_shape, kept_shape, sizeof(int64_t) * (size_t)kept);
    merged_shape[kept] = length;
    gk_array *permuted = NULL, *merged = NULL, *reduced = NULL;
    gk_status status = a->ndim > 0 ? gk_transpose(a, order, &permuted) : gk_array_view(a, &permuted);
    if (status == GK_OK)
        status = gk_reshape(permuted, kept + 1, merged_shape, &merged);
    if (status == GK_OK)
        status = reduce(op, merged, kept, ddof, false, &reduced);
    if (status == GK_OK && keepdims) {
        int64_t shape[GK_MAX_DIMS];
        for (int i = 0; i < a->ndim; i++)
            shape[i] = marked[i] ? 1 : a->shape[i];
        status = gk_reshape(reduced, a->ndim, shape, out);
    } else if (status == GK_OK) {
        *out = reduced;
        reduced = NULL;
    }
    gk_array_free(permuted);
    gk_array_free(merged);
    gk_array_free(reduced);
    return status;
}

gk_status gk_count_nonzero(const gk_array *a, int naxes, const int *axes, bool keepdims,
                           gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "count_nonzero: the array is NULL");
    /* A sum of bools counts every nonzero byte as 1 already: no pass to
     * compare them (which cost five times the sum: a new array) */
    if (a->dtype == GK_BOOL)
        return gk_reduce_axes(GK_SUM, a, naxes, axes, 0, keepdims, out);
    gk_array *nonzero = NULL;
    gk_status status = gk_binary_scalar(GK_NE, a, 0, &nonzero);
    if (status == GK_OK)
        status = gk_reduce_axes(GK_SUM, nonzero, naxes, axes, 0, keepdims, out);
    gk_array_free(nonzero);
    return status;
}
