/* The array API standard's manipulation functions: joining (concat, stack),
 * taking apart (index_axis, used by unstack and integer indexing), reordering (flip, roll,
 * moveaxis), reshaping by axes of length 1 (squeeze, expand_dims) and
 * repeating (tile, repeat), plus the broadcast shape of plain shapes.
 *
 * Views where the strides can express the result (index_axis, flip, moveaxis,
 * squeeze, expand_dims); otherwise a new contiguous array filled by
 * gk_assign from views of the inputs, so every device and dtype works
 * without a kernel of its own: concat assigns each input into its slice of
 * the result, roll assigns two slices per axis, tile and repeat assign a
 * broadcast view (an axis of length 1 stretched) and reshape it. */
#include "compute/array_impl.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>

/* --- helpers --- */

/* axis in [-ndim, ndim) to [0, ndim) for a shape of `ndim` axes. */
static gk_status normalize(const char *what, int ndim, int axis, int *out)
{
    if (axis < -ndim || axis >= ndim) {
        if (ndim == 0)
            return gk_fail(GK_ERR_AXIS, "%s: axis %d is out of range for a 0-d array "
                           "(it has no axes)", what, axis);
        return gk_fail(GK_ERR_AXIS, "%s: axis %d is out of range for %d axes "
                       "(use %d to %d)", what, axis, ndim, -ndim, ndim - 1);
    }
    *out = axis < 0 ? axis + ndim : axis;
    return GK_OK;
}

/* axes[0..count) normalized for `ndim` axes into marked[] (true where
 * listed), refusing repeats. */
static gk_status mark_axes(const char *what, int ndim, int count, const int *axes, bool *marked)
{
    memset(marked, 0, sizeof(bool) * GK_MAX_DIMS);
    for (int i = 0; i < count; i++) {
        int ax = 0;
        gk_status status = normalize(what, ndim, axes[i], &ax);
        if (status != GK_OK)
            return status;
        if (marked[ax])
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: axis %d is listed twice", what, axes[i]);
        marked[ax] = true;
    }
    return GK_OK;
}

/* A view of `a` with this shape and these strides (elements). */
static gk_status view_as(const gk_array *a, int ndim, const int64_t *shape,
                         const int64_t *strides, gk_array **out)
{
    gk_status status = gk_array_view(a, out);
    if (status != GK_OK)
        return status;
    (*out)->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        (*out)->shape[i] = shape[i];
        (*out)->strides[i] = strides[i];
    }
    return GK_OK;
}

/* a flattened to one axis (a view when its strides allow). */
static gk_status flatten(const gk_array *a, gk_array **out)
{
    int64_t all = -1;
    return gk_reshape(a, 1, &all, out);
}

/* The slice [start, stop) of `a` along ax (steps of 1, already in range). */
static gk_status part(const gk_array *a, int ax, int64_t start, int64_t stop, gk_array **out)
{
    return gk_slice(a, ax, start, stop, 1, out);
}

/* dst[slice] = src for the slice [start, stop) of dst along ax. */
static gk_status assign_part(gk_array *dst, int ax, int64_t start, int64_t stop,
                             const gk_array *src)
{
    gk_array *target;
    gk_status status = part(dst, ax, start, stop, &target);
    if (status == GK_OK)
        status = gk_assign(target, src);
    gk_array_free(target);
    return status;
}

/* --- joining --- */

gk_status gk_concat(int count, const gk_array *const *arrays, int axis, gk_array **out)
{
    *out = NULL;
    if (count < 1 || !arrays)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "concat: no arrays to join (give at least one)");
    for (int k = 0; k < count; k++)
        if (!arrays[k])
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "concat: array %d is NULL", k);
    gk_status status = gk_same_device(count, arrays, "concat");
    if (status != GK_OK)
        return status;
    if (axis == GK_ALL_AXES) {
        /* axis=None: every array flattened, then joined. */
        gk_array **flat = calloc((size_t)count, sizeof *flat);
        if (!flat)
            return gk_fail(GK_ERR_OUT_OF_MEMORY, "concat: out of memory");
        for (int k = 0; k < count && status == GK_OK; k++)
            status = flatten(arrays[k], &flat[k]);
        if (status == GK_OK)
            status = gk_concat(count, (const gk_array *const *)flat, 0, out);
        for (int k = 0; k < count; k++)
            gk_array_free(flat[k]);
        free(flat);
        return status;
    }
    const gk_array *first = arrays[0];
    int ax = 0;
    status = normalize("concat", first->ndim, axis, &ax);
    if (status != GK_OK)
        return status;
    int64_t shape[GK_MAX_DIMS];
    memcpy(shape, first->shape, sizeof shape);
    shape[ax] = 0;
    gk_dtype dtype = first->dtype;
    for (int k = 0; k < count; k++) {
        const gk_array *a = arrays[k];
        bool fits = a->ndim == first->ndim;
        for (int i = 0; fits && i < a->ndim; i++)
            fits = i == ax || a->shape[i] == first->shape[i];
        if (!fits) {
            char s0[160], sk[160];
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "concat: array %d has shape %s and array 0 %s; they must match "
                           "except along axis %d",
                           k, gk_shape_text(a->ndim, a->shape, sk, sizeof sk),
                           gk_shape_text(first->ndim, first->shape, s0, sizeof s0), axis);
        }
        shape[ax] += a->shape[ax];
        dtype = gk_promote_types(dtype, a->dtype);
    }
    status = gk_empty(gk_array_device(first), dtype, first->ndim, shape, out);
    int64_t at = 0;
    for (int k = 0; k < count && status == GK_OK; k++) {
        int64_t length = arrays[k]->shape[ax];
        if (length > 0)
            status = assign_part(*out, ax, at, at + length, arrays[k]);
        at += length;
    }
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

gk_status gk_stack(int count, const gk_array *const *arrays, int axis, gk_array **out)
{
    *out = NULL;
    if (count < 1 || !arrays)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "stack: no arrays to join (give at least one)");
    for (int k = 0; k < count; k++) {
        if (!arrays[k])
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "stack: array %d is NULL", k);
        const gk_array *a = arrays[k], *first = arrays[0];
        bool same = a->ndim == first->ndim;
        for (int i = 0; same && i < a->ndim; i++)
            same = a->shape[i] == first->shape[i];
        if (!same) {
            char s0[160], sk[160];
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "stack: array %d has shape %s and array 0 %s; they must be equal", k,
                           gk_shape_text(a->ndim, a->shape, sk, sizeof sk),
                           gk_shape_text(first->ndim, first->shape, s0, sizeof s0));
        }
    }
    if (arrays[0]->ndim + 1 > GK_MAX_DIMS)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "stack: the result would have more than %d axes",
                       GK_MAX_DIMS);
    int ax = 0;
    gk_status status = normalize("stack", arrays[0]->ndim + 1, axis, &ax);
    if (status != GK_OK)
        return status;
    /* Each array with a new axis of length 1 at ax, then joined along it. */
    gk_array **expanded = calloc((size_t)count, sizeof *expanded);
    if (!expanded)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "stack: out of memory");
    for (int k = 0; k < count && status == GK_OK; k++)
        status = gk_expand_dims(arrays[k], 1, &ax, &expanded[k]);
    if (status == GK_OK)
        status = gk_concat(count, (const gk_array *const *)expanded, ax, out);
    for (int k = 0; k < count; k++)
        gk_array_free(expanded[k]);
    free(expanded);
    return status;
}

/* --- views --- */

gk_status gk_index_axis(const gk_array *a, int axis, int64_t index, gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "index_axis: the array is NULL");
    int ax = 0;
    gk_status status = normalize("index_axis", a->ndim, axis, &ax);
    if (status != GK_OK)
        return status;
    int64_t n = a->shape[ax];
    if (index < -n || index >= n)
        return gk_fail(GK_ERR_OUT_OF_RANGE, "index %lld is out of range for axis %d of "
                       "length %lld", (long long)index, ax, (long long)n);
    if (index < 0)
        index += n;
    int64_t shape[GK_MAX_DIMS], strides[GK_MAX_DIMS];
    int ndim = 0;
    for (int i = 0; i < a->ndim; i++)
        if (i != ax) {
            shape[ndim] = a->shape[i];
            strides[ndim++] = a->strides[i];
        }
    status = view_as(a, ndim, shape, strides, out);
    if (status == GK_OK)
        (*out)->offset += (size_t)(index * a->strides[ax] * (int64_t)gk_dtype_size(a->dtype));
    return status;
}

gk_status gk_flip(const gk_array *a, int naxes, const int *axes, gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "flip: the array is NULL");
    bool marked[GK_MAX_DIMS];
    gk_status status = GK_OK;
    if (axes)
        status = mark_axes("flip", a->ndim, naxes, axes, marked);
    else
        for (int i = 0; i < GK_MAX_DIMS; i++)
            marked[i] = true;
    if (status == GK_OK)
        status = gk_array_view(a, out);
    if (status != GK_OK)
        return status;
    for (int i = 0; i < a->ndim; i++) {
        if (!marked[i] || a->shape[i] <= 1)
            continue;
        /* Start at the last element and step back. */
        (*out)->offset +=
            (size_t)((a->shape[i] - 1) * a->strides[i] * (int64_t)gk_dtype_size(a->dtype));
        (*out)->strides[i] = -a->strides[i];
    }
    return GK_OK;
}

gk_status gk_moveaxis(const gk_array *a, int count, const int *source, const int *destination,
                      gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "moveaxis: the array is NULL");
    bool from[GK_MAX_DIMS], to[GK_MAX_DIMS];
    gk_status status = mark_axes("moveaxis (source)", a->ndim, count, source, from);
    if (status == GK_OK)
        status = mark_axes("moveaxis (destination)", a->ndim, count, destination, to);
    if (status != GK_OK)
        return status;
    /* Place each moved axis at its destination, then fill the other
     * places with the unmoved axes in their order. */
    int order[GK_MAX_DIMS];
    for (int i = 0; i < count; i++) {
        int s = 0, d = 0;
        normalize("moveaxis", a->ndim, source[i], &s);
        normalize("moveaxis", a->ndim, destination[i], &d);
        order[d] = s;
    }
    int next = 0;
    for (int i = 0; i < a->ndim; i++) {
        if (to[i])
            continue;
        while (from[next])
            next++;
        order[i] = next++;
    }
    return gk_transpose(a, order, out);
}

gk_status gk_squeeze(const gk_array *a, int naxes, const int *axes, gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "squeeze: the array is NULL");
    bool marked[GK_MAX_DIMS];
    gk_status status = mark_axes("squeeze", a->ndim, naxes, axes, marked);
    if (status != GK_OK)
        return status;
    int64_t shape[GK_MAX_DIMS], strides[GK_MAX_DIMS];
    int ndim = 0;
    for (int i = 0; i < a->ndim; i++) {
        if (!marked[i]) {
            shape[ndim] = a->shape[i];
            strides[ndim++] = a->strides[i];
        } else if (a->shape[i] != 1) {
            char text[160];
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "squeeze: axis %d of shape %s has length %lld, not 1", i,
                           gk_shape_text(a->ndim, a->shape, text, sizeof text),
                           (long long)a->shape[i]);
        }
    }
    return view_as(a, ndim, shape, strides, out);
}

gk_status gk_expand_dims(const gk_array *a, int naxes, const int *axes, gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "expand_dims: the array is NULL");
    int ndim = a->ndim + naxes;
    if (naxes < 0 || ndim > GK_MAX_DIMS)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "expand_dims: %d new axes on %d would make more "
                       "than %d", naxes, a->ndim, GK_MAX_DIMS);
    /* An axis beyond the result's is an index out of range (the standard
     * has expand_dims raise IndexError for it). */
    for (int i = 0; i < naxes; i++)
        if (axes[i] < -ndim || axes[i] >= ndim)
            return gk_fail(GK_ERR_AXIS, "expand_dims: axis %d is out of range for a "
                           "result of %d axes (use %d to %d)", axes[i], ndim, -ndim, ndim - 1);
    bool marked[GK_MAX_DIMS];
    gk_status status = mark_axes("expand_dims", ndim, naxes, axes, marked);
    if (status != GK_OK)
        return status;
    int64_t shape[GK_MAX_DIMS], strides[GK_MAX_DIMS];
    for (int i = 0, from = 0; i < ndim; i++) {
        shape[i] = marked[i] ? 1 : a->shape[from];
        strides[i] = marked[i] ? 0 : a->strides[from++];
    }
    return view_as(a, ndim, shape, strides, out);
}

/* --- copies --- */

/* a rolled by `shift` along axis ax, into a new array. */
static gk_status roll_axis(const gk_array *a, int ax, int64_t shift, gk_array **out)
{
    gk_status status = gk_empty(gk_array_device(a), a->dtype, a->ndim, a->shape, out);
    int64_t n = a->shape[ax];
    if (status != GK_OK || n == 0 || gk_array_size(a) == 0)
        return status;
    int64_t s = ((shift % n) + n) % n;
    /* out[s:] = a[:n - s], out[:s] = a[n - s:] */
    gk_array *head = NULL, *tail = NULL;
    status = part(a, ax, 0, n - s, &head);
    if (status == GK_OK)
        status = assign_part(*out, ax, s, n, head);
    if (status == GK_OK && s > 0)
        status = part(a, ax, n - s, n, &tail);
    if (status == GK_OK && s > 0)
        status = assign_part(*out, ax, 0, s, tail);
    gk_array_free(head);
    gk_array_free(tail);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

gk_status gk_roll(const gk_array *a, int naxes, const int64_t *shifts, const int *axes,
                  gk_array **out)
{
    *out = NULL;
    if (!a || !shifts)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "roll: the array or the shifts are NULL");
    if (naxes == 0) {
        /* No axes: over the flattened array, then back to a's shape. */
        gk_array *flat = NULL, *rolled = NULL;
        gk_status status = flatten(a, &flat);
        if (status == GK_OK)
            status = roll_axis(flat, 0, shifts[0], &rolled);
        if (status == GK_OK)
            status = gk_reshape(rolled, a->ndim, a->shape, out);
        gk_array_free(flat);
        gk_array_free(rolled);
        return status;
    }
    /* One axis after another (an axis listed twice rolls by the sum). */
    gk_array *current = NULL;
    gk_status status = gk_array_view(a, &current);
    for (int i = 0; i < naxes && status == GK_OK; i++) {
        int ax = 0;
        status = normalize("roll", a->ndim, axes[i], &ax);
        gk_array *next = NULL;
        if (status == GK_OK)
            status = roll_axis(current, ax, shifts[i], &next);
        gk_array_free(current);
        current = next;
    }
    if (status != GK_OK) {
        gk_array_free(current);
        return status;
    }
    *out = current;
    return GK_OK;
}

/* `a` viewed with a length-1 axis before (before_each) or after each axis,
 * stretched to `counts` there, copied, and merged back to one axis per
 * original axis: tile (the new axis before) and repeat (after). */
static gk_status interleave(const gk_array *a, const int64_t *counts, bool before_each,
                            const char *what, gk_array **out)
{
    if (2 * a->ndim > GK_MAX_DIMS)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: arrays of more than %d axes are not "
                       "supported", what, GK_MAX_DIMS / 2);
    int64_t shape[GK_MAX_DIMS], strides[GK_MAX_DIMS], stretched[GK_MAX_DIMS],
        merged[GK_MAX_DIMS];
    for (int i = 0; i < a->ndim; i++) {
        int old = before_each ? 2 * i + 1 : 2 * i, added = before_each ? 2 * i : 2 * i + 1;
        shape[old] = stretched[old] = a->shape[i];
        strides[old] = a->strides[i];
        shape[added] = 1;
        strides[added] = 0;
        stretched[added] = counts[i];
        if (counts[i] < 0)
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the count %lld for axis %d is "
                           "negative", what, (long long)counts[i], i);
        if (counts[i] > 0 && a->shape[i] > INT64_MAX / counts[i])
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the result would have too many "
                           "elements", what);
        merged[i] = a->shape[i] * counts[i];
    }
    gk_array *spread = NULL, *wide = NULL, *copy = NULL;
    gk_status status = view_as(a, 2 * a->ndim, shape, strides, &spread);
    if (status == GK_OK)
        status = gk_broadcast_to(spread, 2 * a->ndim, stretched, &wide);
    if (status == GK_OK)
        status = gk_copy(wide, &copy);
    if (status == GK_OK)
        status = gk_reshape(copy, a->ndim, merged, out);
    gk_array_free(spread);
    gk_array_free(wide);
    gk_array_free(copy);
    return status;
}

gk_status gk_tile(const gk_array *a, int nreps, const int64_t *reps, gk_array **out)
{
    *out = NULL;
    if (!a || (nreps > 0 && !reps) || nreps < 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "tile: the array or the repetitions are NULL");
    /* NumPy's rule: the shorter of a's shape and reps is padded with 1s on
     * the left. */
    int ndim = a->ndim > nreps ? a->ndim : nreps;
    if (ndim > GK_MAX_DIMS)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "tile: %d repetitions are more than %d axes",
                       nreps, GK_MAX_DIMS);
    int64_t counts[GK_MAX_DIMS], shape[GK_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        int r = i - (ndim - nreps), s = i - (ndim - a->ndim);
        counts[i] = r >= 0 ? reps[r] : 1;
        shape[i] = s >= 0 ? a->shape[s] : 1;
    }
    gk_array *padded = NULL;
    gk_status status = gk_reshape(a, ndim, shape, &padded);
    if (status == GK_OK)
        status = interleave(padded, counts, true, "tile", out);
    gk_array_free(padded);
    return status;
}

gk_status gk_repeat(const gk_array *a, int64_t repeats, int axis, gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "repeat: the array is NULL");
    if (repeats < 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "repeat: repeats is %lld; it must be >= 0",
                       (long long)repeats);
    if (axis == GK_ALL_AXES) {
        gk_array *flat = NULL;
        gk_status status = flatten(a, &flat);
        if (status == GK_OK)
            status = gk_repeat(flat, repeats, 0, out);
        gk_array_free(flat);
        return status;
    }
    int ax = 0;
    gk_status status = normalize("repeat", a->ndim, axis, &ax);
    if (status != GK_OK)
        return status;
    int64_t counts[GK_MAX_DIMS];
    for (int i = 0; i < a->ndim; i++)
        counts[i] = i == ax ? repeats : 1;
    return interleave(a, counts, false, "repeat", out);
}

/* --- shapes --- */

gk_status gk_broadcast_shape(int count, const int *ndims, const int64_t *const *shapes,
                             int *ndim, int64_t *shape)
{
    *ndim = 0;
    for (int k = 0; k < count; k++) {
        if (ndims[k] < 0 || ndims[k] > GK_MAX_DIMS)
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "broadcast_shapes: shape %d has %d axes "
                           "(0 to %d allowed)", k, ndims[k], GK_MAX_DIMS);
        *ndim = ndims[k] > *ndim ? ndims[k] : *ndim;
    }
    for (int i = 0; i < *ndim; i++)
        shape[i] = 1;
    for (int k = 0; k < count; k++) {
        for (int i = 0; i < ndims[k]; i++) {
            int64_t length = shapes[k][i], *target = &shape[*ndim - ndims[k] + i];
            if (length < 0)
                return gk_fail(GK_ERR_INVALID_ARGUMENT, "broadcast_shapes: shape %d has a "
                               "negative length", k);
            if (*target == 1)
                *target = length;
            else if (length != 1 && length != *target) {
                char a[160], b[160];
                return gk_fail(GK_ERR_INVALID_ARGUMENT,
                               "shapes %s and %s do not broadcast (axis %d: %lld against %lld)",
                               gk_shape_text(ndims[k], shapes[k], a, sizeof a),
                               gk_shape_text(*ndim, shape, b, sizeof b), i,
                               (long long)length, (long long)*target);
            }
        }
    }
    return GK_OK;
}

gk_status gk_repeat_counts(const gk_array *a, const gk_array *counts, int axis, gk_array **out)
{
    *out = NULL;
    if (!a || !counts)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "repeat: the array or the counts are NULL");
    if (!gk_dtype_is_integer(counts->dtype) || counts->ndim > 1)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "repeat: the counts must be a 1-d integer array "
                       "(not %s with %d axes)", gk_dtype_name(counts->dtype), counts->ndim);
    gk_array *base = NULL;
    gk_status status = axis == GK_ALL_AXES ? flatten(a, &base) : gk_array_view(a, &base);
    int ax = 0;
    if (status == GK_OK)
        status = normalize("repeat", base->ndim, axis == GK_ALL_AXES ? 0 : axis, &ax);
    int64_t n = status == GK_OK ? base->shape[ax] : 0, k = gk_array_size(counts);
    if (status == GK_OK && k != n && k != 1)
        status = gk_fail(GK_ERR_INVALID_ARGUMENT, "repeat: %lld counts for an axis of length "
                         "%lld; give one count, or one per element", (long long)k, (long long)n);
    /* One count for all: the plain repeat. */
    if (status == GK_OK && k == 1) {
        double count = 0;
        status = gk_item(counts, (int64_t[]){0}, &count);
        if (status == GK_OK)
            status = gk_repeat(base, (int64_t)count, ax, out);
        gk_array_free(base);
        return status;
    }
    /* Element j of the result comes from the i with ends[i - 1] <= j <
     * ends[i], ends the running sums of the counts: searchsorted(ends, j,
     * right) finds that i. */
    gk_array *low = NULL, *ends = NULL, *positions = NULL, *sources = NULL;
    double smallest = 0, total = 0;
    if (status == GK_OK && k > 0)
        status = gk_reduce(GK_MIN, counts, GK_ALL_AXES, false, &low);
    if (status == GK_OK && low)
        status = gk_item(low, NULL, &smallest);
    if (status == GK_OK && smallest < 0)
        status = gk_fail(GK_ERR_INVALID_ARGUMENT, "repeat: a count is %.0f; counts must be >= 0",
                         smallest);
    if (status == GK_OK)
        status = gk_cumsum(counts, 0, &ends);
    if (status == GK_OK && k > 0)
        status = gk_item(ends, (int64_t[]){k - 1}, &total);
    if (status == GK_OK)
        status = gk_arange(gk_array_device(a), GK_INT64, 0, total, 1, &positions);
    if (status == GK_OK)
        status = gk_searchsorted(ends, positions, true, &sources);
    if (status == GK_OK)
        status = gk_take(base, sources, ax, out);
    gk_array_free(base);
    gk_array_free(low);
    gk_array_free(ends);
    gk_array_free(positions);
    gk_array_free(sources);
    return status;
}
