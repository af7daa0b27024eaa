/* Complex arrays in the core: families whose complex result is the same
 * computation on each part (sum, mean, cumulative sums) run on the real
 * and imaginary parts as views of the component dtype (gk_unary's real
 * and imag of a complex array cost nothing) and join the two results; the
 * product, which mixes the parts, is a tree of elementwise complex
 * multiplications. All of it is device-agnostic. */
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

gk_status gk_complex_prod(const gk_array *a, int axis, bool keepdims, gk_array **out)
{
    *out = NULL;
    gk_array *x = NULL;
    gk_status status;
    int ax = 0;
    if (axis == GK_ALL_AXES || (a->ndim == 0 && (axis == 0 || axis == -1))) {
        int64_t flat = -1;
        status = gk_reshape(a, 1, &flat, &x);
    } else {
        status = gk_normalize_axis(a, axis, &ax);
        if (status != GK_OK)
            return gk_fail(status, "prod: %s", gk_last_error());
        status = gk_array_view(a, &x);
    }
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
