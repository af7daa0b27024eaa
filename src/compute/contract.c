/* Contractions of the array API's main namespace: tensordot and vecdot,
 * built from views, gk_matmul, elementwise products and sums.
 *
 * - tensordot: the contracted axes of a moved last and of b first, each
 *   side reshaped to a matrix (a copy where the strides do not allow a
 *   view), one product, the result reshaped to a's free axes then b's.
 *   The product is gk_matmul's (the device's GEMM for floats, the dtype's
 *   own arithmetic for integers and bool).
 * - vecdot: the operands broadcast, multiplied and summed along the axis
 *   (the same dtype rules); a complex x1 is conjugated first, as the
 *   standard's vecdot asks (sum over conj(x1) * x2). Long real vectors
 *   along the last axes on the CPU are BLAS dots through gk_matmul. */
#include "compute/array_impl.h"

#include "core/error.h"

#include <string.h>

/* The sum along `axis` of `products` (the promoted dtype), in that dtype:
 * integer sums run in 64 bits and convert back. */
static gk_status sum_as(const gk_array *products, int axis, gk_dtype dtype, gk_array **out)
{
    gk_array *sums = NULL;
    gk_status status = gk_reduce(GK_SUM, products, axis, false, &sums);
    if (status == GK_OK && sums->dtype != dtype) {
        status = gk_cast(sums, dtype, out);
        gk_array_free(sums);
        return status;
    }
    *out = status == GK_OK ? sums : NULL;
    return status;
}

/* The contracted axes of one operand, normalized and checked: marked[] is
 * set for each. */
static gk_status contracted_axes(const gk_array *x, const char *which, int naxes,
                                 const int *axes, int *normalized, bool *marked)
{
    memset(marked, 0, sizeof(bool) * GK_MAX_DIMS);
    for (int i = 0; i < naxes; i++) {
        if (gk_normalize_axis(x, axes[i], &normalized[i]) != GK_OK)
            return gk_fail(GK_ERR_AXIS, "tensordot: %s: %s", which,
                           gk_last_error());
        if (marked[normalized[i]])
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "tensordot: axis %d of %s is listed twice",
                           axes[i], which);
        marked[normalized[i]] = true;
    }
    return GK_OK;
}

gk_status gk_tensordot(const gk_array *a, const gk_array *b, int naxes, const int *a_axes,
                       const int *b_axes, gk_array **out)
{
    *out = NULL;
    if (!a || !b)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "tensordot: an array is NULL");
    const gk_array *both[2] = {a, b};
    gk_status status = gk_same_device(2, both, "tensordot");
    if (status != GK_OK)
        return status;
    if (naxes < 0 || naxes > a->ndim || naxes > b->ndim)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "tensordot: %d axes to contract, but the arrays have %d and %d", naxes,
                       a->ndim, b->ndim);
    int an[GK_MAX_DIMS], bn[GK_MAX_DIMS];
    bool a_marked[GK_MAX_DIMS], b_marked[GK_MAX_DIMS];
    status = contracted_axes(a, "x1", naxes, a_axes, an, a_marked);
    if (status == GK_OK)
        status = contracted_axes(b, "x2", naxes, b_axes, bn, b_marked);
    if (status != GK_OK)
        return status;
    int64_t k = 1;
    for (int i = 0; i < naxes; i++) {
        if (a->shape[an[i]] != b->shape[bn[i]]) {
            char sa[160], sb[160];
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "tensordot: axis %d of x1 %s has length %lld but axis %d of x2 %s "
                           "has %lld; contracted axes must match",
                           a_axes[i], gk_shape_text(a->ndim, a->shape, sa, sizeof sa),
                           (long long)a->shape[an[i]], b_axes[i],
                           gk_shape_text(b->ndim, b->shape, sb, sizeof sb),
                           (long long)b->shape[bn[i]]);
        }
        k *= a->shape[an[i]];
    }
    int free_count = (a->ndim - naxes) + (b->ndim - naxes);
    if (free_count > GK_MAX_DIMS)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "tensordot: the result would have %d axes; arrays have at most %d",
                       free_count, GK_MAX_DIMS);

    /* a's free axes then its contracted ones (in the order listed); b's
     * contracted ones (same order) then its free ones. */
    int a_order[GK_MAX_DIMS], b_order[GK_MAX_DIMS], na = 0, nb = naxes;
    int64_t shape[GK_MAX_DIMS] = {0}, m = 1, n = 1;
    for (int i = 0; i < a->ndim; i++)
        if (!a_marked[i]) {
            a_order[na++] = i;
            shape[na - 1] = a->shape[i];
            m *= a->shape[i];
        }
    memcpy(a_order + na, an, sizeof(int) * (size_t)naxes);
    memcpy(b_order, bn, sizeof(int) * (size_t)naxes);
    int out_ndim = na;
    for (int i = 0; i < b->ndim; i++)
        if (!b_marked[i]) {
            b_order[nb++] = i;
            shape[out_ndim++] = b->shape[i];
            n *= b->shape[i];
        }

    gk_array *at = NULL, *bt = NULL, *a2 = NULL, *b2 = NULL, *c = NULL;
    status = a->ndim > 0 ? gk_transpose(a, a_order, &at) : gk_array_view(a, &at);
    if (status == GK_OK)
        status = b->ndim > 0 ? gk_transpose(b, b_order, &bt) : gk_array_view(b, &bt);
    if (status == GK_OK)
        status = gk_reshape(at, 2, (int64_t[]){m, k}, &a2);
    if (status == GK_OK)
        status = gk_reshape(bt, 2, (int64_t[]){k, n}, &b2);
    if (status == GK_OK)
        status = gk_matmul(a2, b2, &c);
    if (status == GK_OK)
        status = gk_reshape(c, out_ndim, shape, out);
    gk_array_free(at);
    gk_array_free(bt);
    gk_array_free(a2);
    gk_array_free(b2);
    gk_array_free(c);
    return status;
}

/* Long real vectors along both operands' last axes on the CPU are BLAS
 * dots (gk_matmul of a row by a column per pair, which calls the CBLAS
 * dot): a product array then its sum had been 0.2x NumPy's vecdot of 64K
 * float32. Short vectors (the dot's call costs more than it saves) and
 * other devices keep the elementwise product and sum. */
enum { DOT_MIN_LENGTH = 32 };

static bool dots_through_matmul(const gk_array *a, const gk_array *b, int ia, int ib,
                                gk_dtype dtype)
{
    return gk_array_device(a).kind == GK_DEVICE_CPU &&
           (dtype == GK_FLOAT32 || dtype == GK_FLOAT64) && a->dtype == dtype &&
           b->dtype == dtype && ia == a->ndim - 1 && ib == b->ndim - 1 &&
           a->shape[ia] >= DOT_MIN_LENGTH;
}

/* vecdot over the last axis as (..., 1, k) @ (..., k, 1), the batch axes
 * broadcasting as matmul's do; out takes the broadcast shape less that
 * axis. */
static gk_status vecdot_as_matmul(const gk_array *a, const gk_array *b, int ndim,
                                  const int64_t *shape, gk_array **out)
{
    gk_array *row = NULL, *column = NULL, *product = NULL;
    gk_status status = gk_expand_dims(a, 1, (int[]){-2}, &row);
    if (status == GK_OK)
        status = gk_expand_dims(b, 1, (int[]){-1}, &column);
    if (status == GK_OK)
        status = gk_matmul(row, column, &product);
    if (status == GK_OK)
        status = gk_reshape(product, ndim - 1, shape, out);
    gk_array_free(row);
    gk_array_free(column);
    gk_array_free(product);
    return status;
}

gk_status gk_vecdot(const gk_array *a, const gk_array *b, int axis, gk_array **out)
{
    *out = NULL;
    if (!a || !b)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "vecdot: an array is NULL");
    const gk_array *both[2] = {a, b};
    gk_status status = gk_same_device(2, both, "vecdot");
    if (status != GK_OK)
        return status;
    char sa[160], sb[160];
    if (a->ndim == 0 || b->ndim == 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "vecdot: shapes %s and %s: a 0-d array has no vectors",
                       gk_shape_text(a->ndim, a->shape, sa, sizeof sa),
                       gk_shape_text(b->ndim, b->shape, sb, sizeof sb));
    /* The axis counts in the broadcast shape, which has the larger ndim;
     * the contracted axis is checked before the others broadcast, so a
     * mismatch there gets its own message. */
    int ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
    if (axis < -ndim || axis >= ndim)
        return gk_fail(GK_ERR_AXIS,
                       "vecdot: axis %d is out of range for shapes %s and %s (%d axes "
                       "broadcast)",
                       axis, gk_shape_text(a->ndim, a->shape, sa, sizeof sa),
                       gk_shape_text(b->ndim, b->shape, sb, sizeof sb), ndim);
    if ((status = gk_check_vector_axis(a, b, axis, "vecdot")) != GK_OK)
        return status;
    int ax = axis < 0 ? axis + ndim : axis;
    /* The contracted axis must not broadcast: each operand's own length
     * there (1 where the operand has no such axis). */
    int ia = ax - (ndim - a->ndim), ib = ax - (ndim - b->ndim);
    int64_t la = ia >= 0 ? a->shape[ia] : 1, lb = ib >= 0 ? b->shape[ib] : 1;
    if (la != lb || ia < 0 || ib < 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "vecdot: shapes %s and %s: the vectors along axis %d have lengths %lld "
                       "and %lld; they must be equal (the contracted axis does not broadcast)",
                       gk_shape_text(a->ndim, a->shape, sa, sizeof sa),
                       gk_shape_text(b->ndim, b->shape, sb, sizeof sb), axis,
                       (long long)la, (long long)lb);
    int64_t shape[GK_MAX_DIMS];
    status = gk_broadcast_shapes(2, both, &ndim, shape);
    if (status != GK_OK)
        return gk_fail(status, "vecdot: %s", gk_last_error());
    gk_dtype dtype = gk_promote_types(a->dtype, b->dtype);
    gk_array *products = NULL, *conjugated = NULL, *wide[2] = {NULL, NULL};
    if (gk_dtype_is_complex(a->dtype)) {
        status = gk_unary(GK_CONJ, a, &conjugated);
        if (status != GK_OK)
            return status;
        a = conjugated;
    }
    /* 16-bit floats multiply and sum in float32, rounded once at the end
     * (as matmul's): products rounded to 16 bits lose a bit each and
     * overflow (300 * 300 in float16) */
    if (gk_dtype_is_half(dtype)) {
        status = gk_cast(a, GK_FLOAT32, &wide[0]);
        if (status == GK_OK)
            status = gk_cast(b, GK_FLOAT32, &wide[1]);
        a = wide[0], b = wide[1];
    }
    if (status == GK_OK && dots_through_matmul(a, b, ia, ib, dtype))
        status = vecdot_as_matmul(a, b, ndim, shape, out);
    else if (status == GK_OK)
        status = gk_binary(GK_MUL, a, b, &products);
    gk_array_free(conjugated);
    gk_array_free(wide[0]);
    gk_array_free(wide[1]);
    if (status == GK_OK && !*out)
        status = sum_as(products, ax, dtype, out);
    gk_array_free(products);
    return status;
}
