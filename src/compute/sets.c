/* The array API's set functions: unique (values, first indices, inverse,
 * counts) and isin, built from sorting and indexing (no kernel of their
 * own, so every device and dtype has them):
 *
 *   unique: order = stable argsort of the flattened array; sorted = the
 *   elements in that order (a plain sort when neither the indices nor the
 *   inverse is asked for); a group starts where sorted[i] != sorted[i-1]
 *   (so each NaN is its own group, as the standard says: NaN != NaN);
 *   values = sorted at the starts; first indices = order at the starts
 *   (the sort is stable); counts = the distance to the next start;
 *   inverse[order[i]] = the group of position i (a cumulative sum of the
 *   starts, minus one).
 *
 *   isin: each element's place in the sorted second array
 *   (searchsorted), and whether the element there equals it. Complex
 *   numbers have no order to search, but unique sorts them (by parts):
 *   x and the test elements joined get one group number per distinct
 *   value, and isin of those int64 numbers is the answer. */
#include "compute/array_impl.h"

#include "core/error.h"

/* a flattened, a view when the strides allow. */
static gk_status flat_view(const gk_array *a, gk_array **out)
{
    int64_t all = -1;
    return gk_reshape(a, 1, &all, out);
}

/* The bool array "a group starts here" over the sorted 1-d `sorted` (n > 0
 * elements): true at 0 and wherever an element differs from the one
 * before. */
static gk_status group_starts(const gk_array *sorted, int64_t n, gk_array **out)
{
    gk_array *head = NULL, *tail = NULL, *differs = NULL, *first = NULL;
    gk_status status = gk_slice(sorted, 0, 1, n, 1, &tail);
    if (status == GK_OK)
        status = gk_slice(sorted, 0, 0, n - 1, 1, &head);
    if (status == GK_OK)
        status = gk_binary(GK_NE, tail, head, &differs);
    int64_t one = 1;
    if (status == GK_OK)
        status = gk_full(gk_array_device(sorted), GK_BOOL, 1, &one, 1, &first);
    const gk_array *parts[2] = {first, differs};
    if (status == GK_OK)
        status = gk_concat(2, parts, 0, out);
    gk_array_free(head);
    gk_array_free(tail);
    gk_array_free(differs);
    gk_array_free(first);
    return status;
}

/* counts[g] = starts[g + 1] - starts[g], with n after the last start. */
static gk_status group_counts(const gk_array *starts, int64_t n, gk_array **out)
{
    int64_t k = gk_array_size(starts);
    gk_array *end = NULL, *bounds = NULL, *next = NULL, *here = NULL;
    int64_t one = 1;
    gk_status status = gk_full(gk_array_device(starts), GK_INT64, 1, &one, (double)n, &end);
    const gk_array *parts[2] = {starts, end};
    if (status == GK_OK)
        status = gk_concat(2, parts, 0, &bounds);
    if (status == GK_OK)
        status = gk_slice(bounds, 0, 1, k + 1, 1, &next);
    if (status == GK_OK)
        status = gk_slice(bounds, 0, 0, k, 1, &here);
    if (status == GK_OK)
        status = gk_binary(GK_SUB, next, here, out);
    gk_array_free(end);
    gk_array_free(bounds);
    gk_array_free(next);
    gk_array_free(here);
    return status;
}

/* inverse (a's shape) from the stable order and the group starts. */
static gk_status inverse_of(const gk_array *a, const gk_array *order, const gk_array *starts,
                            gk_array **out)
{
    gk_array *groups = NULL, *zero_based = NULL, *flat = NULL;
    int64_t n = gk_array_size(a);
    gk_status status = gk_cumsum(starts, 0, &groups);
    if (status == GK_OK)
        status = gk_binary_scalar(GK_SUB, groups, 1, &zero_based);
    if (status == GK_OK)
        status = gk_empty(gk_array_device(a), GK_INT64, 1, &n, &flat);
    if (status == GK_OK)
        status = gk_put(flat, order, 0, zero_based);
    if (status == GK_OK)
        status = gk_reshape(flat, a->ndim, a->shape, out);
    gk_array_free(groups);
    gk_array_free(zero_based);
    gk_array_free(flat);
    return status;
}

gk_status gk_unique(const gk_array *a, gk_array **values, gk_array **indices,
                    gk_array **inverse, gk_array **counts)
{
    gk_array **outputs[4] = {values, indices, inverse, counts};
    for (int i = 0; i < 4; i++)
        if (outputs[i])
            *outputs[i] = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "unique: the array is NULL");
    int64_t n = gk_array_size(a);
    gk_array *flat = NULL, *order = NULL, *sorted = NULL, *starts_mask = NULL, *starts = NULL;
    gk_status status = flat_view(a, &flat);
    if (status == GK_OK && n == 0) {
        /* Nothing: every output empty (inverse: a's shape). */
        int64_t zero = 0;
        if (values)
            status = gk_empty(gk_array_device(a), a->dtype, 1, &zero, values);
        if (status == GK_OK && indices)
            status = gk_empty(gk_array_device(a), GK_INT64, 1, &zero, indices);
        if (status == GK_OK && inverse)
            status = gk_empty(gk_array_device(a), GK_INT64, a->ndim, a->shape, inverse);
        if (status == GK_OK && counts)
            status = gk_empty(gk_array_device(a), GK_INT64, 1, &zero, counts);
    } else if (status == GK_OK) {
        /* The order is needed only for the indices and the inverse; values
         * and counts come from a plain sort, which moves half the bytes. */
        if (indices || inverse) {
            status = gk_argsort(flat, &order);
            if (status == GK_OK)
                status = gk_take(flat, order, 0, &sorted);
        } else {
            status = gk_sort(flat, &sorted);
        }
        if (status == GK_OK)
            status = group_starts(sorted, n, &starts_mask);
        if (status == GK_OK)
            status = gk_flatnonzero(starts_mask, &starts);
        if (status == GK_OK && values)
            status = gk_take(sorted, starts, 0, values);
        if (status == GK_OK && indices)
            status = gk_take(order, starts, 0, indices);
        if (status == GK_OK && counts)
            status = group_counts(starts, n, counts);
        if (status == GK_OK && inverse)
            status = inverse_of(a, order, starts_mask, inverse);
    }
    gk_array_free(flat);
    gk_array_free(order);
    gk_array_free(sorted);
    gk_array_free(starts_mask);
    gk_array_free(starts);
    if (status != GK_OK)
        for (int i = 0; i < 4; i++)
            if (outputs[i]) {
                gk_array_free(*outputs[i]);
                *outputs[i] = NULL;
            }
    return status;
}

/* isin of complex operands (see the top): unique's inverse of x and test
 * flattened and joined, then isin of x's group numbers among test's. Each
 * NaN is its own group, so a NaN is in nothing, as for real dtypes. */
static gk_status isin_by_groups(const gk_array *x, const gk_array *test, bool invert,
                                gk_array **out)
{
    int64_t nx = gk_array_size(x), all = nx + gk_array_size(test);
    gk_array *x_flat = NULL, *test_flat = NULL, *joined = NULL, *groups = NULL,
             *x_groups = NULL, *test_groups = NULL, *flat = NULL;
    gk_status status = flat_view(x, &x_flat);
    if (status == GK_OK)
        status = flat_view(test, &test_flat);
    const gk_array *parts[2] = {x_flat, test_flat};
    if (status == GK_OK)
        status = gk_concat(2, parts, 0, &joined); /* promotes: one dtype to compare */
    if (status == GK_OK)
        status = gk_unique(joined, NULL, NULL, &groups, NULL);
    if (status == GK_OK)
        status = gk_slice(groups, 0, 0, nx, 1, &x_groups);
    if (status == GK_OK)
        status = gk_slice(groups, 0, nx, all, 1, &test_groups);
    if (status == GK_OK)
        status = gk_isin(x_groups, test_groups, invert, &flat);
    if (status == GK_OK)
        status = gk_reshape(flat, x->ndim, x->shape, out);
    gk_array_free(x_flat);
    gk_array_free(test_flat);
    gk_array_free(joined);
    gk_array_free(groups);
    gk_array_free(x_groups);
    gk_array_free(test_groups);
    gk_array_free(flat);
    return status;
}

gk_status gk_isin(const gk_array *x, const gk_array *test, bool invert, gk_array **out)
{
    *out = NULL;
    if (!x || !test)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "isin: an operand is NULL");
    const gk_array *both[2] = {x, test};
    gk_status status = gk_same_device(2, both, "isin");
    if (status != GK_OK)
        return status;
    int64_t m = gk_array_size(test);
    if (m == 0) /* nothing to be in */
        return gk_full(gk_array_device(x), GK_BOOL, x->ndim, x->shape, invert ? 1 : 0, out);
    if (gk_dtype_is_complex(gk_promote_types(x->dtype, test->dtype)))
        return isin_by_groups(x, test, invert, out);
    gk_array *flat = NULL, *table = NULL, *place = NULL, *clamped = NULL, *found = NULL,
             *hit = NULL;
    status = flat_view(test, &flat);
    if (status == GK_OK)
        status = gk_sort(flat, &table);
    if (status == GK_OK)
        status = gk_searchsorted(table, x, false, &place);
    /* place is in [0, m]: m (beyond every element) is clamped to look at the
     * last one, which then differs. */
    if (status == GK_OK)
        status = gk_clip(place, 0, (double)(m - 1), &clamped);
    if (status == GK_OK)
        status = gk_take(table, clamped, 0, &found);
    if (status == GK_OK)
        status = gk_binary(GK_EQ, found, x, &hit);
    if (status == GK_OK && invert)
        status = gk_binary_scalar(GK_EQ, hit, 0, out);
    else if (status == GK_OK) {
        *out = hit;
        hit = NULL;
    }
    gk_array_free(flat);
    gk_array_free(table);
    gk_array_free(place);
    gk_array_free(clamped);
    gk_array_free(found);
    gk_array_free(hit);
    return status;
}
