/* The array API's remaining creation and utility functions, each built
 * from other ops (views, elementwise ops, reductions), so no backend has
 * a kernel of its own for them:
 *
 * - meshgrid: broadcast views (stride 0 along the other axes) of each
 *   input flattened, copied unless the caller asks for the views (NumPy's
 *   copy=False): a view shares its input's memory, so writing one element
 *   of it (not refused: a single element is no broadcast) changes the
 *   input and the whole line of the grid.
 * - tril/triu: gk_where over a mask from the column index minus the row
 *   index (an (M, N) int64 and bool pair), which broadcasts over the batch.
 * - all/any: count_nonzero (through gk_reduce_axes, so tuple axes and
 *   empty reductions behave as sum's) compared with 0; NaN is nonzero.
 * - diff: prepend/append joined by gk_concat, then n rounds of the
 *   difference of two slices (not_equal for bool, as NumPy). */
#include "compute/array_impl.h"

#include "core/error.h"

#include <string.h>

/* --- meshgrid --- */

gk_status gk_meshgrid(int count, const gk_array *const *arrays, bool xy, bool copy,
                      gk_array **out)
{
    if (count < 0 || count > GK_MAX_DIMS)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "meshgrid: %d arrays; the grid can have at most %d axes", count,
                       GK_MAX_DIMS);
    for (int i = 0; i < count; i++) {
        out[i] = NULL;
        if (!arrays[i])
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "meshgrid: array %d is NULL", i);
    }
    gk_status status = count > 0 ? gk_same_device(count, arrays, "meshgrid") : GK_OK;
    if (status != GK_OK)
        return status;
    /* Where each input goes: axis i, but with 'xy' the first two swap (x
     * varies along the columns, y along the rows). */
    int where[GK_MAX_DIMS];
    int64_t grid[GK_MAX_DIMS];
    for (int i = 0; i < count; i++)
        where[i] = xy && count >= 2 && i < 2 ? 1 - i : i;
    for (int i = 0; i < count; i++)
        grid[where[i]] = gk_array_size(arrays[i]);
    for (int i = 0; i < count && status == GK_OK; i++) {
        int64_t shape[GK_MAX_DIMS];
        for (int d = 0; d < count; d++)
            shape[d] = d == where[i] ? grid[d] : 1;
        gk_array *line = NULL, *view = NULL;
        /* Flattened (a view where the strides allow) and stood along its
         * axis, then stretched over the others. */
        status = gk_reshape(arrays[i], count, shape, &line);
        if (status == GK_OK)
            status = gk_broadcast_to(line, count, grid, &view);
        if (status == GK_OK && copy) {
            status = gk_copy(view, &out[i]);
        } else if (status == GK_OK) {
            out[i] = view;
            view = NULL;
        }
        gk_array_free(line);
        gk_array_free(view);
    }
    if (status != GK_OK)
        for (int i = 0; i < count; i++) {
            gk_array_free(out[i]);
            out[i] = NULL;
        }
    return status;
}

/* --- tril, triu --- */

static gk_status triangle(const gk_array *a, int64_t k, bool lower, gk_array **out)
{
    *out = NULL;
    const char *name = lower ? "tril" : "triu";
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the array is NULL", name);
    if (a->ndim < 2) {
        char shape[160];
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s: the array has shape %s; it needs at least 2 axes (matrices over "
                       "the last two)",
                       name, gk_shape_text(a->ndim, a->shape, shape, sizeof shape));
    }
    int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
    /* Beyond the matrix, every diagonal keeps all or nothing: clamped, k
     * stays exact as a double. */
    if (k > n)
        k = n;
    if (k < -m)
        k = -m;
    gk_device device = gk_array_device(a);
    gk_array *rows = NULL, *column = NULL, *cols = NULL, *offset = NULL, *keep = NULL,
             *zero = NULL;
    gk_status status = gk_arange(device, GK_INT64, 0, (double)m, 1, &rows);
    if (status == GK_OK)
        status = gk_reshape(rows, 2, (int64_t[]){m, 1}, &column);
    if (status == GK_OK)
        status = gk_arange(device, GK_INT64, 0, (double)n, 1, &cols);
    if (status == GK_OK) /* offset[i, j] = j - i: which diagonal (i, j) is on */
        status = gk_binary(GK_SUB, cols, column, &offset);
    if (status == GK_OK)
        status = gk_binary_value(lower ? GK_LE : GK_GE, offset, (double)k, GK_VALUE_INT, false,
                                 &keep);
    if (status == GK_OK)
        status = gk_scalar(device, a->dtype, 0, &zero);
    if (status == GK_OK)
        status = gk_where(keep, a, zero, out);
    gk_array_free(rows);
    gk_array_free(column);
    gk_array_free(cols);
    gk_array_free(offset);
    gk_array_free(keep);
    gk_array_free(zero);
    return status;
}

gk_status gk_tril(const gk_array *a, int64_t k, gk_array **out)
{
    return triangle(a, k, true, out);
}

gk_status gk_triu(const gk_array *a, int64_t k, gk_array **out)
{
    return triangle(a, k, false, out);
}

/* --- all, any --- */

static gk_status truth(const gk_array *a, bool every, int naxes, const int *axes, bool keepdims,
                       gk_array **out)
{
    *out = NULL;
    const char *name = every ? "all" : "any";
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the array is NULL", name);
    /* any: some element is nonzero; all: every element of a result's
     * group (size(a) / size(count) of them) is. One count either way: the
     * comparison with 0 that all had made first promoted bools to int64
     * (all of 64K bools took 15x NumPy's time). */
    gk_array *count = NULL;
    gk_status status = gk_count_nonzero(a, naxes, axes, keepdims, &count);
    if (status == GK_OK) {
        int64_t results = gk_array_size(count);
        int64_t group = results ? gk_array_size(a) / results : 0;
        status = every ? gk_binary_value(GK_EQ, count, (double)group, GK_VALUE_INT, false, out)
                       : gk_binary_value(GK_GT, count, 0, GK_VALUE_INT, false, out);
    }
    gk_array_free(count);
    if (status == GK_ERR_INVALID_ARGUMENT || status == GK_ERR_AXIS) {
        /* count_nonzero's message names sum; the caller asked for all/any. */
        const char *message = gk_last_error();
        const char *colon = strstr(message, ": ");
        return gk_fail(status, "%s: %s", name, colon ? colon + 2 : message);
    }
    return status;
}

gk_status gk_all(const gk_array *a, int naxes, const int *axes, bool keepdims, gk_array **out)
{
    return truth(a, true, naxes, axes, keepdims, out);
}

gk_status gk_any(const gk_array *a, int naxes, const int *axes, bool keepdims, gk_array **out)
{
    return truth(a, false, naxes, axes, keepdims, out);
}

/* --- diff --- */

/* `part` (prepend or append) ready to join a along axis `ax`: itself, or a
 * 0-d part broadcast to a's shape with length 1 along the axis (NumPy). */
static gk_status edge(const gk_array *a, int ax, const gk_array *part, const char *what,
                      gk_array **out)
{
    *out = NULL;
    if (part->ndim == 0) {
        int64_t shape[GK_MAX_DIMS];
        memcpy(shape, a->shape, sizeof *shape * (size_t)a->ndim);
        shape[ax] = 1;
        return gk_broadcast_to(part, a->ndim, shape, out);
    }
    if (part->ndim != a->ndim) {
        char sa[160], sp[160];
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "diff: %s has shape %s and the array %s; it must have as many axes "
                       "(or none)",
                       what, gk_shape_text(part->ndim, part->shape, sp, sizeof sp),
                       gk_shape_text(a->ndim, a->shape, sa, sizeof sa));
    }
    return gk_array_view(part, out);
}

gk_status gk_diff(const gk_array *a, int axis, int64_t n, const gk_array *prepend,
                  const gk_array *append, gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "diff: the array is NULL");
    if (a->ndim == 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "diff: the array is 0-d; it needs at least one axis");
    if (n < 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "diff: n is %lld; it must be 0 or more",
                       (long long)n);
    int ax;
    gk_status checked = gk_normalize_axis(a, axis, &ax);
    if (checked != GK_OK)
        return gk_fail(checked, "diff: %s", gk_last_error());

    /* The joined array: [prepend, a, append] along the axis. */
    const gk_array *parts[3];
    gk_array *edges[2] = {NULL, NULL};
    int count = 0;
    gk_status status = GK_OK;
    if (prepend) {
        status = edge(a, ax, prepend, "prepend", &edges[0]);
        parts[count++] = edges[0];
    }
    parts[count++] = a;
    if (append && status == GK_OK) {
        status = edge(a, ax, append, "append", &edges[1]);
        parts[count++] = edges[1];
    }
    gk_array *x = NULL;
    if (status == GK_OK)
        status = count > 1 ? gk_concat(count, parts, ax, &x) : gk_array_view(a, &x);
    gk_array_free(edges[0]);
    gk_array_free(edges[1]);
    if (status != GK_OK) {
        if ((status == GK_ERR_INVALID_ARGUMENT || status == GK_ERR_AXIS) &&
            strncmp(gk_last_error(), "diff:", 5) != 0)
            return gk_fail(status, "diff: %s", gk_last_error());
        return status;
    }

    /* n rounds or more than the axis has elements leave it empty: that
     * needs no rounds at all (the dtype stays: each round keeps it). */
    bool emptied = n > 0 && n >= x->shape[ax];
    int64_t rounds = emptied ? 0 : n;
    gk_op op = x->dtype == GK_BOOL ? GK_NE : GK_SUB;
    for (int64_t r = 0; r < rounds && status == GK_OK; r++) {
        int64_t length = x->shape[ax];
        gk_array *later = NULL, *earlier = NULL, *next = NULL;
        status = gk_slice(x, ax, 1, length, 1, &later);
        if (status == GK_OK)
            status = gk_slice(x, ax, 0, length - 1, 1, &earlier);
        if (status == GK_OK)
            status = gk_binary(op, later, earlier, &next);
        gk_array_free(later);
        gk_array_free(earlier);
        gk_array_free(x);
        x = next;
    }
    if (status == GK_OK && emptied) {
        gk_array *empty = NULL;
        int64_t shape[GK_MAX_DIMS];
        memcpy(shape, x->shape, sizeof *shape * (size_t)x->ndim);
        shape[ax] = 0;
        status = gk_empty(gk_array_device(x), x->dtype, x->ndim, shape, &empty);
        gk_array_free(x);
        x = empty;
    }
    if (status != GK_OK) {
        gk_array_free(x);
        return status;
    }
    *out = x;
    return GK_OK;
}
