/* Complex arrays in the core: families whose complex result is the same
 * computation on each part (sum, mean, cumulative sums) run on the real
 * and imaginary parts as views of the component dtype (gk_unary's real
 * and imag of a complex array cost nothing) and join the two results; the
 * product, which mixes the parts, is a tree of elementwise complex
 * multiplications, the running product a doubling scan of them; sorting is
 * stable sorts of the parts and of where NaNs are. All of it is device-agnostic: any device
 * with complex elementwise kernels has them. */
#include "compute/array_impl.h"

#include "core/error.h"

gk_status gk_complex_by_parts(const gk_array *a, gk_part_fn fn, const void *context,
                              gk_array **out)
{
    *out = NULL;
    gk_array *parts[2] = {NULL, NULL}, *results[2] = {NULL, NULL};
    gk_status status = gk_unary(GK_REAL, a, &parts[0]);
    if (status == GK_OK)
        status = gk_unary(GK_IMAG, a, &parts[1]);
    for (int i = 0; i < 2 && status == GK_OK; i++)
        status = fn(parts[i], context, &results[i]);
    if (status == GK_OK) {
        gk_dtype part = results[0]->dtype;
        gk_dtype joined = part == GK_FLOAT64 ? GK_COMPLEX128 : GK_COMPLEX64;
        status = gk_empty(gk_array_device(a), joined, results[0]->ndim, results[0]->shape, out);
    }
    for (int i = 0; i < 2 && status == GK_OK; i++) {
        gk_array *target = NULL;
        status = gk_unary(i ? GK_IMAG : GK_REAL, *out, &target);
        if (status == GK_OK)
            status = gk_assign(target, results[i]);
        gk_array_free(target);
    }
    for (int i = 0; i < 2; i++) {
        gk_array_free(parts[i]);
        gk_array_free(results[i]);
    }
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

/* A view of a and the axis *ax a product runs along: axis itself
 * (normalized), or axis 0 of a flattened for GK_ALL_AXES (and for a 0-d
 * array, which is one element). */
static gk_status along_axis(const gk_array *a, int axis, const char *what, gk_array **view,
                            int *ax)
{
    *ax = 0;
    if (axis == GK_ALL_AXES || (a->ndim == 0 && (axis == 0 || axis == -1))) {
        int64_t flat = -1;
        return gk_reshape(a, 1, &flat, view);
    }
    gk_status status = gk_normalize_axis(a, axis, ax);
    if (status != GK_OK)
        return gk_fail(status, "%s: %s", what, gk_last_error());
    return gk_array_view(a, view);
}

gk_status gk_complex_prod(const gk_array *a, int axis, bool keepdims, gk_array **out)
{
    *out = NULL;
    gk_array *x = NULL;
    int ax = 0;
    gk_status status = along_axis(a, axis, "prod", &x, &ax);
    /* Halve the axis until one element is left: the first half times the
     * second, an odd last element carried along. */
    while (status == GK_OK && x->shape[ax] > 1) {
        int64_t length = x->shape[ax], half = length / 2;
        gk_array *low = NULL, *high = NULL, *product = NULL, *next = NULL;
        status = gk_slice(x, ax, 0, half, 1, &low);
        if (status == GK_OK)
            status = gk_slice(x, ax, half, 2 * half, 1, &high);
        if (status == GK_OK)
            status = gk_binary(GK_MUL, low, high, &product);
        if (status == GK_OK && length % 2) {
            gk_array *rest = NULL;
            status = gk_slice(x, ax, 2 * half, length, 1, &rest);
            const gk_array *both[2] = {product, rest};
            if (status == GK_OK)
                status = gk_concat(2, both, ax, &next);
            gk_array_free(rest);
        } else if (status == GK_OK) {
            next = product;
            product = NULL;
        }
        gk_array_free(low);
        gk_array_free(high);
        gk_array_free(product);
        if (status == GK_OK) {
            gk_array_free(x);
            x = next;
        }
    }
    gk_array *result = NULL;
    if (status == GK_OK && x->shape[ax] == 0) {
        int64_t shape[GK_MAX_DIMS];
        int ndim = 0;
        for (int i = 0; i < x->ndim; i++)
            if (i != ax)
                shape[ndim++] = x->shape[i];
        status = gk_ones(gk_array_device(a), a->dtype, ndim, shape, &result);
    } else if (status == GK_OK) {
        gk_array *row = NULL;
        status = gk_index_axis(x, ax, 0, &row);
        if (status == GK_OK)
            status = gk_copy(row, &result);
        gk_array_free(row);
    }
    gk_array_free(x);
    if (status == GK_OK && keepdims) {
        /* the reduced axes back with length 1 */
        int64_t shape[GK_MAX_DIMS];
        bool all = axis == GK_ALL_AXES || a->ndim == 0;
        for (int i = 0; i < a->ndim; i++)
            shape[i] = all || i == ax ? 1 : a->shape[i];
        status = gk_reshape(result, a->ndim, shape, out);
        gk_array_free(result);
    } else if (status == GK_OK) {
        *out = result;
    }
    return status;
}

gk_status gk_complex_cumprod(const gk_array *a, int axis, gk_array **out)
{
    *out = NULL;
    gk_array *x = NULL;
    gk_array *view = NULL;
    int ax = 0;
    gk_status status = along_axis(a, axis, "cumprod", &view, &ax);
    if (status == GK_OK)
        status = gk_copy(view, &x); /* scanned in place */
    gk_array_free(view);
    /* Hillis and Steele's scan: after the step of distance d, element i
     * holds the product of elements i - 2d + 1 ... i; log2(n) steps, each
     * one elementwise product into a fresh array (no element is read after
     * it was overwritten). */
    int64_t n = status == GK_OK ? x->shape[ax] : 0;
    for (int64_t d = 1; status == GK_OK && d < n; d *= 2) {
        gk_array *high = NULL, *low = NULL, *product = NULL;
        status = gk_slice(x, ax, d, n, 1, &high);
        if (status == GK_OK)
            status = gk_slice(x, ax, 0, n - d, 1, &low);
        if (status == GK_OK)
            status = gk_binary(GK_MUL, high, low, &product);
        if (status == GK_OK)
            status = gk_assign(high, product);
        gk_array_free(high);
        gk_array_free(low);
        gk_array_free(product);
    }
    if (status == GK_OK)
        *out = x;
    else
        gk_array_free(x);
    return status;
}

/* The stable argsort of `key` along the last axis, applied to `order`
 * (take_along_axis): the permutation that sorts key's rows as `order`
 * arranges them. `order` NULL: the plain argsort. */
static gk_status sort_by(const gk_array *key, const gk_array *order, gk_array **out)
{
    *out = NULL;
    gk_array *arranged = NULL, *indices = NULL;
    gk_status status = GK_OK;
    if (order)
        status = gk_take_along_axis(key, order, -1, &arranged);
    if (status == GK_OK)
        status = gk_argsort(order ? arranged : key, &indices);
    gk_array_free(arranged);
    if (status != GK_OK || !order) {
        *out = indices;
        return status;
    }
    status = gk_take_along_axis(order, indices, -1, out);
    gk_array_free(indices);
    return status;
}

/* Which of NumPy's four ranks of complex values each element of a has,
 * as int8: 0 neither part NaN, 1 only the imaginary part, 2 only the real
 * part, 3 both (2 isnan(re) + isnan(im)). */
static gk_status nan_rank(const gk_array *re, const gk_array *im, gk_array **out)
{
    *out = NULL;
    gk_array *nan_re = NULL, *nan_im = NULL, *rank_re = NULL, *rank_im = NULL, *twice = NULL;
    gk_status status = gk_unary(GK_ISNAN, re, &nan_re);
    if (status == GK_OK)
        status = gk_unary(GK_ISNAN, im, &nan_im);
    if (status == GK_OK)
        status = gk_cast(nan_re, GK_INT8, &rank_re);
    if (status == GK_OK)
        status = gk_cast(nan_im, GK_INT8, &rank_im);
    if (status == GK_OK)
        status = gk_binary_scalar(GK_MUL, rank_re, 2, &twice);
    if (status == GK_OK)
        status = gk_binary(GK_ADD, twice, rank_im, out);
    gk_array_free(nan_re);
    gk_array_free(nan_im);
    gk_array_free(rank_re);
    gk_array_free(rank_im);
    gk_array_free(twice);
    return status;
}

gk_status gk_complex_sort(const gk_array *a, bool want_indices, gk_array **out)
{
    *out = NULL;
    /* NumPy's order: values without NaN by real part, then imaginary part;
     * then R + nanj by real part, nan + Rj by imaginary part, and nan +
     * nanj last. So three stable sorts, the least significant key first:
     * the imaginary part, the real part, the NaN rank. */
    gk_array *re = NULL, *im = NULL, *rank = NULL, *by_imag = NULL, *by_real = NULL;
    gk_array *order = NULL;
    gk_status status = gk_unary(GK_REAL, a, &re);
    if (status == GK_OK)
        status = gk_unary(GK_IMAG, a, &im);
    if (status == GK_OK && a->ndim == 0) { /* its own sorted form */
        status = want_indices ? gk_argsort(re, out) : gk_copy(a, out);
    } else if (status == GK_OK) {
        status = nan_rank(re, im, &rank);
        if (status == GK_OK)
            status = sort_by(im, NULL, &by_imag);
        if (status == GK_OK)
            status = sort_by(re, by_imag, &by_real);
        if (status == GK_OK)
            status = sort_by(rank, by_real, &order);
        if (status == GK_OK && want_indices) {
            *out = order;
            order = NULL;
        } else if (status == GK_OK) {
            status = gk_take_along_axis(a, order, -1, out);
        }
    }
    gk_array_free(re);
    gk_array_free(im);
    gk_array_free(rank);
    gk_array_free(by_imag);
    gk_array_free(by_real);
    gk_array_free(order);
    return status;
}
