/* The linalg extension's functions that are views and reductions rather
 * than factorizations, built from other ops, so every device computes
 * them and no backend has a kernel of its own:
 *
 * - diagonal: a view (the stride of a step down the diagonal is the sum of
 *   the last two axes' strides); trace sums it.
 * - outer: a[:, None] * b[None, :] (broadcasting); cross: the components
 *   along the axis combined by the textbook formula.
 * - vector_norm: over abs(x) (complex: the modulus), NumPy's formulas: max
 *   and min for +-inf, a count for 0, the sum for 1, sqrt of the sum of
 *   squares for 2, sum(|x|^p)^(1/p) otherwise.
 * - matrix_norm: 'fro' as the 2-norm of the matrix's elements; 1, -1, inf
 *   and -inf from column or row sums of abs(x); 2, -2 and 'nuc' from the
 *   singular values.
 * - built on the factorizations of factor.c, which take stacks:
 *   matrix_rank (singular values above rtol times the largest), pinv
 *   (v diag(1/s) u^H over those), and matrix_power (repeated squaring with
 *   gk_matmul; the inverse first for a negative power). */
#include "compute/array_impl.h"

#include "core/error.h"

#include <math.h>
#include <string.h>

/* GK_OK when a is a stack of matrices (at least 2 axes), else the error
 * naming `function` and a's shape. */
static gk_status check_stack(const gk_array *a, const char *function)
{
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the array is NULL", function);
    if (a->ndim >= 2)
        return GK_OK;
    char shape[160];
    return gk_fail(GK_ERR_INVALID_ARGUMENT,
                   "%s: takes a stack of matrices (at least 2 axes), not shape %s", function,
                   gk_shape_text(a->ndim, a->shape, shape, sizeof shape));
}

/* --- diagonal, trace --- */

gk_status gk_diagonal(const gk_array *a, int64_t offset, gk_array **out)
{
    *out = NULL;
    gk_status status = check_stack(a, "diagonal");
    if (status != GK_OK)
        return status;
    int rows_axis = a->ndim - 2, cols_axis = a->ndim - 1;
    int64_t rows = a->shape[rows_axis], cols = a->shape[cols_axis];
    /* The diagonal starts at (0, offset) above the main one, (-offset, 0)
     * below it, and runs until either edge. */
    int64_t row0 = offset >= 0 ? 0 : offset <= -rows ? rows : -offset; /* no -INT64_MIN */
    int64_t col0 = offset > 0 ? offset : 0;
    int64_t length = 0;
    if (row0 < rows && col0 < cols)
        length = rows - row0 < cols - col0 ? rows - row0 : cols - col0;
    status = gk_array_view(a, out);
    if (status != GK_OK)
        return status;
    gk_array *view = *out;
    if (length > 0)
        view->offset += (size_t)(row0 * a->strides[rows_axis] + col0 * a->strides[cols_axis]) *
                        gk_dtype_size(a->dtype);
    view->ndim = a->ndim - 1;
    view->shape[rows_axis] = length;
    view->strides[rows_axis] = a->strides[rows_axis] + a->strides[cols_axis];
    return GK_OK;
}

gk_status gk_trace(const gk_array *a, int64_t offset, gk_array **out)
{
    *out = NULL;
    gk_array *diagonal = NULL;
    gk_status status = gk_diagonal(a, offset, &diagonal);
    if (status != GK_OK)
        return gk_fail(status, "trace: %s", gk_last_error());
    status = gk_reduce(GK_SUM, diagonal, -1, false, out);
    gk_array_free(diagonal);
    return status;
}

/* --- outer, cross --- */

gk_status gk_outer(const gk_array *a, const gk_array *b, gk_array **out)
{
    *out = NULL;
    if (!a || !b)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "outer: an array is NULL");
    if (a->ndim != 1 || b->ndim != 1)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "outer: takes two vectors (1-d arrays), not %d-d and %d-d; flatten "
                       "them first (reshape(x, (-1,)))",
                       a->ndim, b->ndim);
    gk_array *column = NULL, *row = NULL;
    gk_status status = gk_reshape(a, 2, (int64_t[]){a->shape[0], 1}, &column);
    if (status == GK_OK)
        status = gk_reshape(b, 2, (int64_t[]){1, b->shape[0]}, &row);
    if (status == GK_OK)
        status = gk_binary(GK_MUL, column, row, out);
    gk_array_free(column);
    gk_array_free(row);
    return status;
}

/* x[i] * y[j] - x[j] * y[i] for the components i, j of the vectors. */
static gk_status cross_component(gk_array *const *x, gk_array *const *y, int i, int j,
                                 gk_array **out)
{
    gk_array *first = NULL, *second = NULL;
    gk_status status = gk_binary(GK_MUL, x[i], y[j], &first);
    if (status == GK_OK)
        status = gk_binary(GK_MUL, x[j], y[i], &second);
    if (status == GK_OK)
        status = gk_binary(GK_SUB, first, second, out);
    gk_array_free(first);
    gk_array_free(second);
    return status;
}

gk_status gk_cross(const gk_array *a, const gk_array *b, int axis, gk_array **out)
{
    *out = NULL;
    if (!a || !b)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "cross: an array is NULL");
    const gk_array *both[2] = {a, b};
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    char sa[160], sb[160];
    gk_status status = gk_broadcast_shapes(2, both, &ndim, shape);
    if (status != GK_OK)
        return gk_fail(status, "cross: %s", gk_last_error());
    if (axis < -ndim || axis >= ndim || ndim == 0)
        return gk_fail(GK_ERR_AXIS, "cross: axis %d is out of range for shape %s", axis,
                       gk_shape_text(ndim, shape, sa, sizeof sa));
    if ((status = gk_check_vector_axis(a, b, axis, "cross")) != GK_OK)
        return status;
    int ax = axis < 0 ? axis + ndim : axis;
    /* Counted from the end, the axis is the same in both inputs; it must be
     * there with length 3 (it does not broadcast). */
    int from_end = ndim - ax;
    if (a->ndim < from_end || b->ndim < from_end || a->shape[a->ndim - from_end] != 3 ||
        b->shape[b->ndim - from_end] != 3)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "cross: shapes %s and %s: both need length 3 along axis %d (vectors "
                       "in three dimensions)",
                       gk_shape_text(a->ndim, a->shape, sa, sizeof sa),
                       gk_shape_text(b->ndim, b->shape, sb, sizeof sb), axis);
    gk_array *x[3] = {NULL}, *y[3] = {NULL}, *parts[3] = {NULL};
    for (int i = 0; i < 3 && status == GK_OK; i++) {
        status = gk_index_axis(a, a->ndim - from_end, i, &x[i]);
        if (status == GK_OK)
            status = gk_index_axis(b, b->ndim - from_end, i, &y[i]);
    }
    for (int i = 0; i < 3 && status == GK_OK; i++)
        status = cross_component(x, y, (i + 1) % 3, (i + 2) % 3, &parts[i]);
    if (status == GK_OK)
        status = gk_stack(3, (const gk_array *const *)parts, ax, out);
    for (int i = 0; i < 3; i++) {
        gk_array_free(x[i]);
        gk_array_free(y[i]);
        gk_array_free(parts[i]);
    }
    return status;
}

/* --- norms --- */

/* |x| as a floating array: the modulus of complex, abs of floats, and
 * integers and bool converted to float64 first, as NumPy's norms and the
 * factorizations do (their float dtype, float16 for int8, overflows);
 * float32 on a device without float64. */
static gk_status magnitude(const gk_array *a, gk_array **out)
{
    *out = NULL;
    if (gk_dtype_is_inexact(a->dtype))
        return gk_unary(GK_ABS, a, out);
    bool has_float64 = true;
    if (gk_device_has_dtype(gk_array_device(a), GK_FLOAT64, &has_float64) != GK_OK)
        has_float64 = true; /* the cast then says what is wrong */
    gk_array *converted = NULL;
    gk_status status = gk_cast(a, has_float64 ? GK_FLOAT64 : GK_FLOAT32, &converted);
    if (status == GK_OK)
        status = gk_unary(GK_ABS, converted, out);
    gk_array_free(converted);
    return status;
}

/* The largest of magnitudes m >= 0, as NumPy's norms take it (from 0):
 * an empty m's is 0, which the sum gives in the reduced shape. */
static gk_reduction largest_of(const gk_array *m)
{
    return gk_array_size(m) == 0 ? GK_SUM : GK_MAX;
}

/* sum(m^p)^(1/p) over the axes, m >= 0 (p = 2: sqrt of the sum of
 * squares, p = 1: the sum). */
static gk_status power_sum(const gk_array *m, double p, int naxes, const int *axes,
                           bool keepdims, gk_array **out)
{
    *out = NULL;
    gk_array *powered = NULL, *sum = NULL;
    gk_status status = p == 1   ? gk_array_view(m, &powered)
                       : p == 2 ? gk_binary(GK_MUL, m, m, &powered)
                                : gk_binary_scalar(GK_POW, m, p, &powered);
    if (status == GK_OK)
        status = gk_reduce_axes(GK_SUM, powered, naxes, axes, 0, keepdims, &sum);
    if (status == GK_OK && p == 1) {
        *out = sum;
        sum = NULL;
    } else if (status == GK_OK && p == 2) {
        status = gk_unary(GK_SQRT, sum, out);
    } else if (status == GK_OK) {
        status = gk_binary_scalar(GK_POW, sum, 1 / p, out);
    }
    gk_array_free(powered);
    gk_array_free(sum);
    return status;
}

gk_status gk_vector_norm(const gk_array *a, int naxes, const int *axes, double ord,
                         bool keepdims, gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "vector_norm: the array is NULL");
    if (isnan(ord))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "vector_norm: ord is NaN; give a number, inf or "
                                                "-inf");
    gk_array *m = NULL;
    gk_status status = magnitude(a, &m);
    if (status != GK_OK)
        return gk_fail(status, "vector_norm: %s", gk_last_error());
    if (isinf(ord)) {
        status = gk_reduce_axes(ord > 0 ? largest_of(m) : GK_MIN, m, naxes, axes, 0, keepdims,
                                out);
    } else if (ord == 0) {
        /* how many are nonzero, in the norm's dtype */
        gk_array *count = NULL;
        status = gk_count_nonzero(m, naxes, axes, keepdims, &count);
        if (status == GK_OK)
            status = gk_cast(count, m->dtype, out);
        gk_array_free(count);
    } else {
        status = power_sum(m, ord, naxes, axes, keepdims, out);
    }
    gk_array_free(m);
    if (status != GK_OK)
        return gk_fail(status, "vector_norm: %s", gk_last_error());
    return GK_OK;
}

/* --- built on the factorizations (factor.c), which take stacks --- */

/* Whether gk_svd of a computes in single precision (float32, complex64). */
static bool single_precision(const gk_array *a)
{
    return a->dtype == GK_FLOAT32 || a->dtype == GK_COMPLEX64;
}

/* Which singular values s (..., k) of a's matrices count: those above rtol
 * times their matrix's largest. rtol NULL is the standard's default,
 * max(m, n) * the dtype's eps; else an array whose shape broadcasts with
 * a's batch (0-d for one number). k must be > 0. */
static gk_status singular_mask(const gk_array *a, const gk_array *s, const gk_array *rtol,
                               gk_array **mask)
{
    *mask = NULL;
    gk_array *largest = NULL, *column = NULL, *cutoff = NULL;
    gk_status status = gk_reduce(GK_MAX, s, -1, true, &largest);
    if (status == GK_OK && !rtol) {
        int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
        double eps = single_precision(a) ? 1.1920928955078125e-07 : 2.220446049250313e-16;
        status = gk_binary_scalar(GK_MUL, largest, (double)(m > n ? m : n) * eps, &cutoff);
    } else if (status == GK_OK) {
        /* rtol per matrix: a trailing axis to meet the singular values' */
        status = gk_expand_dims(rtol, 1, (int[]){rtol->ndim}, &column);
        if (status == GK_OK)
            status = gk_binary(GK_MUL, largest, column, &cutoff);
    }
    if (status == GK_OK)
        status = gk_binary(GK_GT, s, cutoff, mask);
    gk_array_free(largest);
    gk_array_free(column);
    gk_array_free(cutoff);
    return status;
}

gk_status gk_matrix_rank(const gk_array *a, const gk_array *rtol, gk_array **out)
{
    *out = NULL;
    gk_array *values = NULL, *above = NULL;
    gk_status status = gk_svdvals(a, &values);
    if (status != GK_OK)
        return gk_fail(status, "matrix_rank: %s", gk_last_error());
    /* how many count (an empty matrix has rank 0) */
    if (values->shape[values->ndim - 1] == 0) {
        status = gk_zeros(gk_array_device(a), GK_INT64, values->ndim - 1, values->shape, out);
    } else {
        status = singular_mask(a, values, rtol, &above);
        if (status == GK_OK)
            status = gk_reduce(GK_SUM, above, -1, false, out);
        if (status != GK_OK)
            status = gk_fail(status, "matrix_rank: %s", gk_last_error());
    }
    gk_array_free(values);
    gk_array_free(above);
    return status;
}

/* The conjugate transpose of each matrix over x's last two axes. */
static gk_status adjoint(const gk_array *x, gk_array **out)
{
    if (!gk_dtype_is_complex(x->dtype))
        return gk_matrix_transpose(x, out);
    gk_array *swapped = NULL;
    gk_status status = gk_matrix_transpose(x, &swapped);
    if (status == GK_OK)
        status = gk_unary(GK_CONJ, swapped, out);
    gk_array_free(swapped);
    return status;
}

/* The pseudo-inverse of each matrix: v diag(1/s) u^H over the singular
 * values above the cut-off (the others' reciprocals taken as 0). */
gk_status gk_pinv(const gk_array *a, const gk_array *rtol, gk_array **out)
{
    *out = NULL;
    gk_status status = check_stack(a, "pinv");
    if (status != GK_OK)
        return status;
    gk_array *u = NULL, *s = NULL, *vt = NULL, *mask = NULL;
    gk_array *inverse = NULL, *zero = NULL, *kept = NULL, *row = NULL, *v = NULL, *ut = NULL;
    gk_array *scaled = NULL;
    status = gk_svd(a, false, &u, &s, &vt);
    if (status != GK_OK)
        return gk_fail(status, "pinv: %s", gk_last_error());
    int64_t k = s->shape[s->ndim - 1];
    if (k == 0) { /* no singular values: the (n, m) zeros */
        int64_t shape[GK_MAX_DIMS];
        memcpy(shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
        shape[a->ndim - 2] = a->shape[a->ndim - 1];
        shape[a->ndim - 1] = a->shape[a->ndim - 2];
        status = gk_zeros(gk_array_device(a), u->dtype, a->ndim, shape, out);
    } else {
        status = singular_mask(a, s, rtol, &mask);
        if (status == GK_OK)
            status = gk_unary(GK_RECIPROCAL, s, &inverse);
        if (status == GK_OK)
            status = gk_scalar(gk_array_device(s), s->dtype, 0, &zero);
        if (status == GK_OK)
            status = gk_where(mask, inverse, zero, &kept);
        /* (v * kept[..., None, :]) @ u^H: kept scales v's columns */
        if (status == GK_OK)
            status = gk_expand_dims(kept, 1, (int[]){kept->ndim - 1}, &row);
        if (status == GK_OK)
            status = adjoint(vt, &v);
        if (status == GK_OK)
            status = adjoint(u, &ut);
        if (status == GK_OK)
            status = gk_binary(GK_MUL, v, row, &scaled);
        if (status == GK_OK)
            status = gk_matmul(scaled, ut, out);
        if (status != GK_OK)
            status = gk_fail(status, "pinv: %s", gk_last_error());
    }
    gk_array *all[] = {u, s, vt, mask, inverse, zero, kept, row, v, ut, scaled};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_array_free(all[i]);
    return status;
}

gk_status gk_matrix_power(const gk_array *a, int64_t n, gk_array **out)
{
    *out = NULL;
    char text[160];
    if (a && a->ndim >= 2 && a->shape[a->ndim - 1] != a->shape[a->ndim - 2])
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "matrix_power: takes a stack of square matrices, not shape %s",
                       gk_shape_text(a->ndim, a->shape, text, sizeof text));
    gk_status status = check_stack(a, "matrix_power");
    if (status != GK_OK)
        return status;
    int64_t side = a->shape[a->ndim - 1];
    if (n == 0) { /* the identity of a's dtype, for each matrix */
        gk_array *identity = NULL;
        status = gk_eye(gk_array_device(a), a->dtype, side, &identity);
        if (status == GK_OK) {
            gk_array *view = NULL;
            status = gk_broadcast_to(identity, a->ndim, a->shape, &view);
            if (status == GK_OK)
                status = gk_copy(view, out);
            gk_array_free(view);
        }
        gk_array_free(identity);
        return status;
    }
    gk_array *base = NULL, *result = NULL;
    status = n > 0 ? gk_array_view(a, &base) : gk_inv(a, &base);
    /* |n| by repeated squaring: result *= base where a bit of |n| is set. */
    uint64_t k = n > 0 ? (uint64_t)n : 0 - (uint64_t)n;
    while (status == GK_OK && k) {
        if (k & 1) {
            gk_array *next = NULL;
            status = result ? gk_matmul(result, base, &next) : gk_copy(base, &next);
            gk_array_free(result);
            result = next;
        }
        k >>= 1;
        if (status == GK_OK && k) {
            gk_array *squared = NULL;
            status = gk_matmul(base, base, &squared);
            gk_array_free(base);
            base = squared;
        }
    }
    gk_array_free(base);
    if (status == GK_OK)
        *out = result;
    else
        gk_array_free(result);
    return status;
}

/* The norm of the singular values: max (2), min (-2) or sum ('nuc'). */
static gk_status singular_norm(const gk_array *a, gk_reduction reduction, bool keepdims,
                               gk_array **out)
{
    gk_array *values = NULL;
    gk_status status = gk_svdvals(a, &values);
    if (status == GK_OK && reduction == GK_MAX)
        reduction = largest_of(values);
    if (status == GK_OK && keepdims) {
        gk_array *reduced = NULL;
        status = gk_reduce(reduction, values, -1, true, &reduced);
        if (status == GK_OK)
            status = gk_expand_dims(reduced, 1, (int[]){-1}, out);
        gk_array_free(reduced);
    } else if (status == GK_OK) {
        status = gk_reduce(reduction, values, -1, false, out);
    }
    gk_array_free(values);
    return status;
}

/* max or min over one of the last two axes of the sums along the other. */
static gk_status line_sum_norm(const gk_array *m, int sum_axis, gk_reduction pick,
                               bool keepdims, gk_array **out)
{
    *out = NULL;
    int other = sum_axis == -2 ? -1 : -2;
    gk_array *sums = NULL;
    gk_status status = gk_reduce(GK_SUM, m, sum_axis, true, &sums);
    if (status == GK_OK && pick == GK_MAX)
        pick = largest_of(sums);
    if (status == GK_OK && keepdims) {
        status = gk_reduce(pick, sums, other, true, out);
    } else if (status == GK_OK) {
        gk_array *picked = NULL;
        status = gk_reduce(pick, sums, other, false, &picked);
        if (status == GK_OK)
            status = gk_squeeze(picked, 1, (int[]){-1}, out);
        gk_array_free(picked);
    }
    gk_array_free(sums);
    return status;
}

gk_status gk_matrix_norm(const gk_array *a, gk_matrix_norm_kind ord, bool keepdims,
                         gk_array **out)
{
    *out = NULL;
    gk_status status = check_stack(a, "matrix_norm");
    if (status != GK_OK)
        return status;
    if ((unsigned)ord >= GK_NORM_COUNT)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "matrix_norm: invalid ord %d", (int)ord);
    gk_array *m = NULL;
    switch (ord) {
    case GK_NORM_LARGEST_SINGULAR: status = singular_norm(a, GK_MAX, keepdims, out); break;
    case GK_NORM_SMALLEST_SINGULAR: status = singular_norm(a, GK_MIN, keepdims, out); break;
    case GK_NORM_NUCLEAR: status = singular_norm(a, GK_SUM, keepdims, out); break;
    default: {
        /* of |x|: its elements ('fro'), column sums (1, -1) or row sums (inf, -inf) */
        bool columns = ord == GK_NORM_MAX_COLUMN_SUM || ord == GK_NORM_MIN_COLUMN_SUM;
        bool largest = ord == GK_NORM_MAX_COLUMN_SUM || ord == GK_NORM_MAX_ROW_SUM;
        status = magnitude(a, &m);
        if (status == GK_OK && ord == GK_NORM_FROBENIUS)
            status = power_sum(m, 2, 2, (const int[]){-2, -1}, keepdims, out);
        else if (status == GK_OK)
            status = line_sum_norm(m, columns ? -2 : -1, largest ? GK_MAX : GK_MIN, keepdims, out);
        break;
    }
    }
    gk_array_free(m);
    if (status != GK_OK)
        return gk_fail(status, "matrix_norm: %s", gk_last_error());
    return GK_OK;
}
