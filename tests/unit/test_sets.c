/* Reductions over several axes, count_nonzero, unique and isin on every
 * device, against values worked out here (NumPy's results). */
#include "array_check.h"

#include <stdint.h>

static gk_array *from_doubles(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                              const double *values)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    unsigned char *raw = malloc((size_t)(n ? n : 1) * 8);
    for (int64_t i = 0; i < n; i++)
        test_store(dtype, values[i], raw, i);
    gk_array *a = NULL;
    CHECK_OK(gk_from_host(device, dtype, ndim, shape, raw, &a));
    free(raw);
    return a;
}

static void check_shape(const gk_array *a, int ndim, const int64_t *shape, const char *what)
{
    bool same = a && gk_array_ndim(a) == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = gk_array_shape(a)[i] == shape[i];
    CHECK(same, "%s: wrong shape", what);
}

static void test_reduce_axes(gk_device device)
{
    /* (2, 3, 4) = 0..23 */
    double v[24];
    for (int i = 0; i < 24; i++)
        v[i] = i;
    gk_array *a = from_doubles(device, GK_FLOAT64, 3, (int64_t[]){2, 3, 4}, v), *out = NULL;
    /* sum over (0, 2): per middle index j, sum over i, k of 12i + 4j + k */
    CHECK_OK(gk_reduce_axes(GK_SUM, a, 2, (int[]){0, -1}, 0, false, &out));
    check_shape(out, 1, (int64_t[]){3}, "sum over (0, 2)");
    CHECK_VALUES(out, ((double[]){60, 92, 124}), 3, 0);
    gk_array_free(out);
    CHECK_OK(gk_reduce_axes(GK_MAX, a, 2, (int[]){1, 2}, 0, true, &out));
    check_shape(out, 3, (int64_t[]){2, 1, 1}, "max over (1, 2), keepdims");
    CHECK_VALUES(out, ((double[]){11, 23}), 2, 0);
    gk_array_free(out);
    /* var over (0, 1) with ddof 1: per k, the values 4m + k for m = 0..5 */
    CHECK_OK(gk_reduce_axes(GK_VAR, a, 2, (int[]){0, 1}, 1, false, &out));
    CHECK_VALUES(out, ((double[]){56, 56, 56, 56}), 4, 1e-12);
    gk_array_free(out);
    /* no axes: every element its own group (the dtype rule still applies) */
    gk_array *ints = from_doubles(device, GK_INT32, 2, (int64_t[]){2, 2},
                                  (double[]){1, -2, 3, 4});
    CHECK_OK(gk_reduce_axes(GK_SUM, ints, 0, (int[]){0}, 0, false, &out));
    check_shape(out, 2, (int64_t[]){2, 2}, "sum over ()");
    CHECK(out && gk_array_dtype(out) == GK_INT64, "sum of int32 is int64");
    CHECK_VALUES(out, ((double[]){1, -2, 3, 4}), 4, 0);
    gk_array_free(out);
    /* all axes by NULL */
    CHECK_OK(gk_reduce_axes(GK_PROD, ints, 0, NULL, 0, false, &out));
    CHECK_VALUES(out, ((double[]){-24}), 1, 0);
    gk_array_free(out);
    CHECK_FAILS(gk_reduce_axes(GK_SUM, a, 2, (int[]){1, -2}, 0, false, &out),
                GK_ERR_INVALID_ARGUMENT, "listed twice");
    CHECK_FAILS(gk_reduce_axes(GK_ARGMAX, a, 2, (int[]){0, 1}, 0, false, &out),
                GK_ERR_INVALID_ARGUMENT, "one axis");
    CHECK_FAILS(gk_reduce_axes(GK_SUM, a, 1, (int[]){3}, 0, false, &out),
                GK_ERR_AXIS, "out of range");
    /* count_nonzero: NaN counts, -0.0 does not */
    gk_array *f = from_doubles(device, GK_FLOAT32, 2, (int64_t[]){2, 3},
                               (double[]){0, NAN, -0.0, 1, 2, 0});
    CHECK_OK(gk_count_nonzero(f, 0, NULL, false, &out));
    CHECK(out && gk_array_dtype(out) == GK_INT64, "count_nonzero is int64");
    CHECK_VALUES(out, ((double[]){3}), 1, 0);
    gk_array_free(out);
    CHECK_OK(gk_count_nonzero(f, 1, (int[]){0}, true, &out));
    check_shape(out, 2, (int64_t[]){1, 3}, "count_nonzero axis 0 keepdims");
    CHECK_VALUES(out, ((double[]){1, 2, 0}), 3, 0);
    gk_array_free(out);
    gk_array_free(a);
    gk_array_free(ints);
    gk_array_free(f);
}

static void test_unique(gk_device device)
{
    /* x (2, 4) = [[3, 1, 2, 1], [3, 3, 0, 2]]: values 0 1 2 3, first
     * occurrences at flat 6 1 2 0, counts 1 2 2 3 */
    gk_array *x = from_doubles(device, GK_INT32, 2, (int64_t[]){2, 4},
                               (double[]){3, 1, 2, 1, 3, 3, 0, 2});
    gk_array *values = NULL, *indices = NULL, *inverse = NULL, *counts = NULL;
    CHECK_OK(gk_unique(x, &values, &indices, &inverse, &counts));
    CHECK(values && gk_array_dtype(values) == GK_INT32, "values keep the dtype");
    CHECK_VALUES(values, ((double[]){0, 1, 2, 3}), 4, 0);
    CHECK_VALUES(indices, ((double[]){6, 1, 2, 0}), 4, 0);
    check_shape(inverse, 2, (int64_t[]){2, 4}, "inverse has x's shape");
    CHECK_VALUES(inverse, ((double[]){3, 1, 2, 1, 3, 3, 0, 2}), 8, 0);
    CHECK_VALUES(counts, ((double[]){1, 2, 2, 3}), 4, 0);
    gk_array_free(values);
    gk_array_free(indices);
    gk_array_free(inverse);
    gk_array_free(counts);
    /* floats: each NaN distinct and last, -0.0 equal to 0.0 */
    gk_array *f = from_doubles(device, GK_FLOAT64, 1, (int64_t[]){6},
                               (double[]){NAN, 1.5, 0.0, NAN, -0.0, 1.5});
    CHECK_OK(gk_unique(f, &values, NULL, NULL, &counts));
    CHECK(values && gk_array_size(values) == 4, "0, 1.5, NaN, NaN");
    CHECK_VALUES(values, ((double[]){0, 1.5, NAN, NAN}), 4, 0);
    CHECK_VALUES(counts, ((double[]){2, 2, 1, 1}), 4, 0);
    gk_array_free(values);
    gk_array_free(counts);
    /* empty and 0-d */
    gk_array *empty = NULL, *scalar = NULL;
    CHECK_OK(gk_zeros(device, GK_FLOAT32, 2, (int64_t[]){0, 3}, &empty));
    CHECK_OK(gk_unique(empty, &values, &indices, &inverse, &counts));
    CHECK(values && gk_array_size(values) == 0 && gk_array_ndim(values) == 1, "empty values");
    check_shape(inverse, 2, (int64_t[]){0, 3}, "empty inverse");
    gk_array_free(values);
    gk_array_free(indices);
    gk_array_free(inverse);
    gk_array_free(counts);
    CHECK_OK(gk_scalar(device, GK_INT64, 9, &scalar));
    CHECK_OK(gk_unique(scalar, &values, NULL, &inverse, NULL));
    CHECK_VALUES(values, ((double[]){9}), 1, 0);
    check_shape(inverse, 0, NULL, "0-d inverse");
    gk_array_free(values);
    gk_array_free(inverse);
    gk_array_free(x);
    gk_array_free(f);
    gk_array_free(empty);
    gk_array_free(scalar);
}

static void test_isin(gk_device device)
{
    gk_array *x = from_doubles(device, GK_INT64, 2, (int64_t[]){2, 3},
                               (double[]){1, 5, -2, 7, 5, 0});
    gk_array *test = from_doubles(device, GK_FLOAT32, 2, (int64_t[]){2, 2},
                                  (double[]){5, 0, 9, -2});
    gk_array *out = NULL;
    CHECK_OK(gk_isin(x, test, false, &out));
    check_shape(out, 2, (int64_t[]){2, 3}, "isin shape");
    CHECK(out && gk_array_dtype(out) == GK_BOOL, "isin is bool");
    CHECK_VALUES(out, ((double[]){0, 1, 1, 0, 1, 1}), 6, 0);
    gk_array_free(out);
    CHECK_OK(gk_isin(x, test, true, &out));
    CHECK_VALUES(out, ((double[]){1, 0, 0, 1, 0, 0}), 6, 0);
    gk_array_free(out);
    /* NaN is in nothing; beyond every element */
    gk_array *f = from_doubles(device, GK_FLOAT64, 1, (int64_t[]){3}, (double[]){NAN, 10, 9});
    gk_array *g = from_doubles(device, GK_FLOAT64, 1, (int64_t[]){2}, (double[]){NAN, 9});
    CHECK_OK(gk_isin(f, g, false, &out));
    CHECK_VALUES(out, ((double[]){0, 0, 1}), 3, 0);
    gk_array_free(out);
    gk_array *none = NULL;
    CHECK_OK(gk_zeros(device, GK_INT32, 1, (int64_t[]){0}, &none));
    CHECK_OK(gk_isin(x, none, false, &out));
    CHECK_VALUES(out, ((double[]){0, 0, 0, 0, 0, 0}), 6, 0);
    gk_array_free(out);
    gk_array_free(x);
    gk_array_free(test);
    gk_array_free(f);
    gk_array_free(g);
    gk_array_free(none);
}

int main(void)
{
    FOR_EACH_DEVICE(test_reduce_axes);
    FOR_EACH_DEVICE(test_unique);
    FOR_EACH_DEVICE(test_isin);
    CHECK_DONE();
}
