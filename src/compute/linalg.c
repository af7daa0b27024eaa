/* Matrix products: matmul and dot on the array's own device.
 *
 * Dtypes: matmul and dot give the promoted dtype (gk_promote_types:
 * float32 @ float64 is float64, int16 @ float32 is float32, int64 @ uint32
 * is int64), as the array API standard and NumPy do. Floating products go
 * to the backend's GEMM; integer and bool ones are the dtype's own
 * arithmetic (integer_matmul).
 *
 * Devices: matmul and dot run where the operands are, on the backend's
 * GEMM. The factorizations are in factor.c. */
#include "compute/array_impl.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>

/* Elements of one block of products in an integer matmul. */
enum { BLOCK = 1 << 22 };

/* a as a contiguous array of `dtype` on its device: a itself (a new handle)
 * when it already is one, else a converted copy. */
static gk_status dense_as(const gk_array *a, gk_dtype dtype, gk_array **out)
{
    return a->dtype == dtype ? gk_contiguous(a, out) : gk_copy_as(a, dtype, out);
}

/* Whether a's matrices are stored as their transposes: the last two axes
 * of a C-order array swapped (x.T of a matrix, a swapaxes(-1, -2) of a
 * stack). A backend that takes such operands (BLAS's transpose flags)
 * reads them in place: x.T @ x had copied x.T first. */
static bool stored_transposed(const gk_array *a)
{
    if (a->ndim < 2)
        return false;
    int r = a->ndim - 2, c = a->ndim - 1;
    int64_t rows = a->shape[r], cols = a->shape[c];
    if (rows < 2 || cols < 2 || a->strides[r] != 1 || a->strides[c] != rows)
        return false; /* a row or a column: contiguous either way */
    int64_t expected = rows * cols;
    for (int i = r - 1; i >= 0; i--) {
        if (a->shape[i] != 1 && a->strides[i] != expected)
            return false;
        expected *= a->shape[i];
    }
    return true;
}

/* An operand as the backend's matmul takes it: itself where it is stored
 * transposed, the backend takes that and the product goes to the backend's
 * matmul (`blas`) (*transposed set), else dense. */
static gk_status matmul_operand(const gk_array *a, gk_dtype dtype, bool blas, bool *transposed,
                                gk_array **out)
{
    *transposed = blas && a->dtype == dtype && gk_array_backend(a)->matmul_transposes &&
                  stored_transposed(a);
    return *transposed ? gk_array_view(a, out) : dense_as(a, dtype, out);
}

/* --- matmul --- */

/* Runs c = a @ b over the batch. a and b are contiguous stacks of m x k and
 * k x n matrices, or of their transposes as `transposed` says, with batch
 * shapes a_batch and b_batch (aligned on the right, length-1 axes
 * broadcast); c is the contiguous result over `batch`.
 * The backend takes one batch stride per operand, so the batch is split:
 * the longest run of trailing batch axes along which each operand is either
 * wholly present (stride m*k) or wholly broadcast (stride 0) goes to one
 * backend call, and the axes before it are looped over here. */
static gk_status run_batches(const gk_array *a, int a_nb, const gk_array *b, int b_nb,
                             gk_array *c, int nb, const int64_t *batch, int64_t m, int64_t n,
                             int64_t k, unsigned transposed)
{
    /* The batch without its length-1 axes; per axis, each operand's stride
     * (0 where it is broadcast). */
    int r = 0;
    int64_t len[GK_MAX_DIMS], a_stride[GK_MAX_DIMS], b_stride[GK_MAX_DIMS];
    int64_t a_step = m * k, b_step = k * n;
    int64_t a_strides_all[GK_MAX_DIMS], b_strides_all[GK_MAX_DIMS];
    for (int i = nb - 1; i >= 0; i--) {
        int ia = i - (nb - a_nb), ib = i - (nb - b_nb);
        int64_t la = ia >= 0 ? a->shape[ia] : 1, lb = ib >= 0 ? b->shape[ib] : 1;
        a_strides_all[i] = la == batch[i] ? a_step : 0;
        b_strides_all[i] = lb == batch[i] ? b_step : 0;
        a_step *= la;
        b_step *= lb;
    }
    for (int i = 0; i < nb; i++) {
        if (batch[i] == 1)
            continue;
        len[r] = batch[i];
        a_stride[r] = a_strides_all[i];
        b_stride[r] = b_strides_all[i];
        r++;
    }
    /* The smallest p such that axes p..r-1 are uniform for both operands. */
    int p = r;
    while (p > 0) {
        int q = p - 1;
        bool a_same = q == r - 1 || (a_stride[q] == 0) == (a_stride[r - 1] == 0);
        bool b_same = q == r - 1 || (b_stride[q] == 0) == (b_stride[r - 1] == 0);
        if (!a_same || !b_same)
            break;
        p = q;
    }
    int64_t inner = 1, outer = 1;
    for (int i = p; i < r; i++)
        inner *= len[i];
    for (int i = 0; i < p; i++)
        outer *= len[i];
    int64_t a_inner = p < r && a_stride[r - 1] ? m * k : 0;
    int64_t b_inner = p < r && b_stride[r - 1] ? k * n : 0;

    const gk_backend *backend = gk_array_backend(c);
    size_t size = gk_dtype_size(c->dtype);
    const char *a_data = (const char *)a->buffer->data + a->offset;
    const char *b_data = (const char *)b->buffer->data + b->offset;
    char *c_data = (char *)c->buffer->data + c->offset;
    for (int64_t o = 0; o < outer; o++) {
        int64_t rest = o, a_off = 0, b_off = 0;
        for (int i = p - 1; i >= 0; i--) {
            int64_t index = rest % len[i];
            rest /= len[i];
            a_off += index * a_stride[i];
            b_off += index * b_stride[i];
        }
        gk_status status = backend->matmul(
            gk_array_device(c), c->dtype, inner, m, n, k, a_data + (size_t)a_off * size, a_inner,
            b_data + (size_t)b_off * size, b_inner, c_data + (size_t)(o * inner * m * n) * size,
            transposed);
        if (status != GK_OK)
            return status;
    }
    return GK_OK;
}

/* c = a @ b for integer and bool dtypes, as NumPy computes them: products
 * in the dtype (wrapping; `and` for bool), summed in 64 bits and converted
 * back (the same modulo 2^bits; nonzero for bool). No BLAS multiplies
 * integers, and a float64 GEMM would round products of wide integers.
 * a is (*a_batch, m, k), b (*b_batch, k, n) and c the contiguous (*batch,
 * m, n). Both operands are broadcast to the whole batch of B matrices; the
 * products a[:, rows, :, None] * b[:, None, :, :] are made a block of rows
 * at a time, so that they stay below BLOCK elements. */
static gk_status integer_matmul(const gk_array *a, const gk_array *b, gk_array *c)
{
    int nb = c->ndim - 2;
    int64_t m = c->shape[nb], n = c->shape[nb + 1], k = a->shape[a->ndim - 1];
    int64_t batch = 1, a_shape[GK_MAX_DIMS], b_shape[GK_MAX_DIMS];
    for (int i = 0; i < nb; i++) {
        batch *= c->shape[i];
        a_shape[i] = b_shape[i] = c->shape[i];
    }
    a_shape[nb] = m, a_shape[nb + 1] = k;
    b_shape[nb] = k, b_shape[nb + 1] = n;
    int64_t per_row = batch * k * n > 0 ? batch * k * n : 1;
    int64_t rows = BLOCK / per_row > 0 ? BLOCK / per_row : 1;
    gk_array *wide_a = NULL, *wide_b = NULL, *lines = NULL, *columns = NULL, *c3 = NULL;
    gk_status status = gk_broadcast_to(a, nb + 2, a_shape, &wide_a);
    if (status == GK_OK)
        status = gk_broadcast_to(b, nb + 2, b_shape, &wide_b);
    if (status == GK_OK)
        status = gk_reshape(wide_a, 4, (int64_t[]){batch, m, k, 1}, &lines);
    if (status == GK_OK)
        status = gk_reshape(wide_b, 4, (int64_t[]){batch, 1, k, n}, &columns);
    if (status == GK_OK)
        status = gk_reshape(c, 3, (int64_t[]){batch, m, n}, &c3);
    for (int64_t r = 0; r < m && status == GK_OK; r += rows) {
        int64_t end = r + rows < m ? r + rows : m;
        gk_array *block = NULL, *products = NULL, *sums = NULL, *target = NULL;
        status = gk_slice(lines, 1, r, end, 1, &block);
        if (status == GK_OK)
            status = gk_binary(GK_MUL, block, columns, &products);
        if (status == GK_OK)
            status = gk_reduce(GK_SUM, products, 2, false, &sums);
        if (status == GK_OK)
            status = gk_slice(c3, 1, r, end, 1, &target);
        if (status == GK_OK)
            status = gk_assign(target, sums); /* converts back to c's dtype */
        gk_array_free(block);
        gk_array_free(products);
        gk_array_free(sums);
        gk_array_free(target);
    }
    gk_array_free(wide_a);
    gk_array_free(wide_b);
    gk_array_free(lines);
    gk_array_free(columns);
    gk_array_free(c3);
    return status;
}

/* The shapes of a call as text, for messages: "(2, 3) @ (4, 5)". */
static const char *pair_text(const gk_array *a, const char *op, const gk_array *b, char *buf,
                             size_t size)
{
    char sa[160], sb[160];
    snprintf(buf, size, "%s %s %s", gk_shape_text(a->ndim, a->shape, sa, sizeof sa), op,
             gk_shape_text(b->ndim, b->shape, sb, sizeof sb));
    return buf;
}

/* out = a @ b of the checked operands, computed in `computed` (the result
 * dtype, or float32 for the 16-bit floats) and given as `dtype`. */
static gk_status product(const gk_array *a, const gk_array *b, int a_nb, int b_nb, int nb,
                         int ndim, const int64_t *shape, int64_t m, int64_t n, int64_t k,
                         gk_dtype dtype, gk_dtype computed, gk_array **out)
{
    gk_status status;
    /* k == 0: sums of nothing, zeros. */
    status = k == 0 ? gk_zeros(gk_array_device(a), dtype, ndim, shape, out)
                    : gk_empty(gk_array_device(a), computed, ndim, shape, out);
    if (status != GK_OK || k == 0 || gk_array_size(*out) == 0)
        return status == GK_OK ? gk_narrow_to(out, dtype) : status;
    gk_array *da = NULL, *db = NULL;
    bool inexact = gk_dtype_is_inexact(dtype), a_transposed = false, b_transposed = false;
    status = matmul_operand(a, computed, inexact, &a_transposed, &da);
    if (status == GK_OK)
        status = matmul_operand(b, computed, inexact, &b_transposed, &db);
    if (status == GK_OK && inexact) {
        unsigned transposed = (a_transposed ? GK_MATMUL_A_TRANSPOSED : 0) |
                              (b_transposed ? GK_MATMUL_B_TRANSPOSED : 0);
        status = run_batches(da, a_nb, db, b_nb, *out, nb, shape, m, n, k, transposed);
    } else if (status == GK_OK) {
        /* With the axes a 1-d operand lacks, as a view of each. */
        gk_array *a2 = NULL, *b2 = NULL, *c2 = NULL;
        int64_t c_shape[GK_MAX_DIMS];
        memcpy(c_shape, shape, sizeof(int64_t) * (size_t)nb);
        c_shape[nb] = m, c_shape[nb + 1] = n;
        status = gk_reshape(da, a->ndim == 1 ? 2 : a->ndim, a->ndim == 1 ? (int64_t[]){1, k}
                                                                          : a->shape, &a2);
        if (status == GK_OK)
            status = gk_reshape(db, b->ndim == 1 ? 2 : b->ndim,
                                b->ndim == 1 ? (int64_t[]){k, 1} : b->shape, &b2);
        if (status == GK_OK)
            status = gk_reshape(*out, nb + 2, c_shape, &c2);
        if (status == GK_OK)
            status = integer_matmul(a2, b2, c2);
        gk_array_free(a2);
        gk_array_free(b2);
        gk_array_free(c2);
    }
    gk_array_free(da);
    gk_array_free(db);
    if (status == GK_OK)
        status = gk_narrow_to(out, dtype);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}


gk_status gk_matmul(const gk_array *a, const gk_array *b, gk_array **out)
{
    *out = NULL;
    const gk_array *both[2] = {a, b};
    gk_status status = gk_same_device(2, both, "matmul");
    if (status != GK_OK)
        return status;
    char shapes[400];
    pair_text(a, "@", b, shapes, sizeof shapes);
    if (a->ndim == 0 || b->ndim == 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "matmul: %s: a 0-d operand has no matrix axes (multiply by a scalar "
                       "with gk_binary_scalar instead)",
                       shapes);
    /* NumPy's rules: a 1-d a is a row (1, k), a 1-d b a column (k, 1), and
     * the added axis is not in the result. */
    int64_t m = a->ndim == 1 ? 1 : a->shape[a->ndim - 2];
    int64_t k = a->shape[a->ndim - 1];
    int64_t kb = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2];
    int64_t n = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
    if (k != kb)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "matmul: %s: inner dimensions %lld and %lld "
                       "differ",
                       shapes, (long long)k, (long long)kb);
    /* The batch: the axes before the matrix axes, broadcast together. */
    int a_nb = a->ndim > 2 ? a->ndim - 2 : 0, b_nb = b->ndim > 2 ? b->ndim - 2 : 0;
    int nb = a_nb > b_nb ? a_nb : b_nb;
    int64_t shape[GK_MAX_DIMS];
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - a_nb), ib = i - (nb - b_nb);
        int64_t la = ia >= 0 ? a->shape[ia] : 1, lb = ib >= 0 ? b->shape[ib] : 1;
        if (la != lb && la != 1 && lb != 1) {
            char ta[160], tb[160];
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "matmul: %s: batch shapes %s and %s do not broadcast", shapes,
                           gk_shape_text(a_nb, a->shape, ta, sizeof ta),
                           gk_shape_text(b_nb, b->shape, tb, sizeof tb));
        }
        shape[i] = la == 1 ? lb : la;
    }
    int ndim = nb;
    if (a->ndim > 1)
        shape[ndim++] = m;
    if (b->ndim > 1)
        shape[ndim++] = n;
    gk_dtype dtype = gk_promote_types(a->dtype, b->dtype);
    /* float16 and bfloat16 products are summed in float32, then rounded. */
    gk_dtype computed = gk_dtype_is_half(dtype) ? GK_FLOAT32 : dtype;
    if (gk_shape_size(ndim, shape) < 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "matmul: %s: the result has too many elements",
                       shapes);
    /* float16 and bfloat16 products are summed in float32, then rounded:
     * by the device's mixed-precision GEMM where it has one (cuBLAS's
     * GemmEx), else in float32 copies of the operands. */
    if (gk_dtype_is_half(dtype) && gk_array_device(a).kind != GK_DEVICE_CPU) {
        status = product(a, b, a_nb, b_nb, nb, ndim, shape, m, n, k, dtype, dtype, out);
        if (status != GK_ERR_NOT_FOUND)
            return status;
    }
    return product(a, b, a_nb, b_nb, nb, ndim, shape, m, n, k, dtype, computed, out);
}

/* NumPy's dot: 1-d . 1-d is the inner product (0-d), 2-d and 1-d operands
 * are matmul; an N-d a (N > 2 or b N-d) sums over a's last axis and b's
 * second-to-last: the result's shape is a.shape[:-1] + b.shape[:-2] +
 * b.shape[-1:]. 0-d operands are refused (NumPy multiplies; use
 * gk_binary_scalar). */
gk_status gk_dot(const gk_array *a, const gk_array *b, gk_array **out)
{
    *out = NULL;
    const gk_array *both[2] = {a, b};
    gk_status status = gk_same_device(2, both, "dot");
    if (status != GK_OK)
        return status;
    char shapes[400];
    pair_text(a, ".", b, shapes, sizeof shapes);
    if (a->ndim == 0 || b->ndim == 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "dot: %s: 0-d operands are not supported (multiply by a scalar with "
                       "gk_binary_scalar instead)",
                       shapes);
    int b_axis = b->ndim == 1 ? 0 : b->ndim - 2;
    int64_t k = a->shape[a->ndim - 1], kb = b->shape[b_axis];
    if (k != kb)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "dot: %s: shapes not aligned: %lld (last axis of a) != %lld (axis %d "
                       "of b)",
                       shapes, (long long)k, (long long)kb, b_axis);
    /* matmul agrees with dot whenever a or b is at most 1-d, or both 2-d. */
    if (a->ndim == 1 || b->ndim == 1 || (a->ndim == 2 && b->ndim == 2))
        return gk_matmul(a, b, out);
    int ndim = a->ndim - 1 + b->ndim - 1;
    if (ndim > GK_MAX_DIMS)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "dot: %s: the result would have %d axes (at "
                       "most %d)",
                       shapes, ndim, GK_MAX_DIMS);
    int64_t shape[GK_MAX_DIMS];
    int64_t rows = 1, columns = 1;
    for (int i = 0; i < a->ndim - 1; i++) {
        shape[i] = a->shape[i];
        rows *= a->shape[i];
    }
    for (int i = 0; i < b->ndim; i++) {
        if (i == b_axis)
            continue;
        shape[a->ndim - 1 + i - (i > b_axis)] = b->shape[i];
        columns *= b->shape[i];
    }
    /* a as (rows, k); b with its summed axis first, as (k, columns). */
    int axes[GK_MAX_DIMS];
    axes[0] = b_axis;
    for (int i = 0, j = 1; i < b->ndim; i++)
        if (i != b_axis)
            axes[j++] = i;
    gk_array *a2 = NULL, *bt = NULL, *b2 = NULL, *product = NULL;
    int64_t a_shape[2] = {rows, k}, b_shape[2] = {k, columns};
    status = gk_reshape(a, 2, a_shape, &a2);
    if (status == GK_OK)
        status = gk_transpose(b, axes, &bt);
    if (status == GK_OK)
        status = gk_reshape(bt, 2, b_shape, &b2);
    if (status == GK_OK)
        status = gk_matmul(a2, b2, &product);
    if (status == GK_OK)
        status = gk_reshape(product, ndim, shape, out);
    gk_array_free(a2);
    gk_array_free(bt);
    gk_array_free(b2);
    gk_array_free(product);
    return status;
}
