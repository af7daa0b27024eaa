/* Reductions, sorting and scans on every device, against naive C references
 * computed here (double accumulation): every reduction for every dtype, on
 * contiguous, transposed, reversed-step and broadcast inputs, over all axes
 * and each axis (negative too), with and without keepdims; 0-d and empty
 * arrays; sums of 10^8 float32 ones; argmin/argmax ties and NaN (in every
 * lane of the CPU's vector kernels); var/std
 * with ddof; stable sort/argsort with NaN last; cumsum along each axis; and
 * every error path. The arrays are big enough (>= 100003 elements) for the
 * threaded and chunked paths of the CPU backend. The dtypes are the first
 * six; test_dtype_reduce.c checks int8, int16, uint16, uint32 and uint64
 * against exact integer references. */
#include "array_check.h"

#include <stdint.h>

enum { DTYPES = 6 };
static const gk_dtype all_dtypes[DTYPES] = {GK_BOOL,  GK_UINT8,   GK_INT32,
                                            GK_INT64, GK_FLOAT32, GK_FLOAT64};
static const char *const op_names[GK_REDUCTION_COUNT] = {
    "sum", "mean", "prod", "min", "max", "argmin", "argmax", "var", "std"};

/* The backend's chunk of one partial result (rows longer than this are
 * reduced in pieces, combined in order). */
enum { BACKEND_CHUNK = 1 << 16 };

/* --- data --- */

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Element i of a test array: small integers, or floats k/8 (|k| <= 80), so
 * that every sum of up to 2^17 of them is exact even in float32 and the
 * references need no tolerance. */
static double sample(gk_dtype t, int64_t i, uint64_t seed)
{
    uint64_t h = mix((uint64_t)i * 0x2545F4914F6CDD1Dull + seed);
    switch (t) {
    case GK_BOOL: return (double)(h % 3 == 0);
    case GK_UINT8: return (double)(h % 256);
    case GK_INT32:
    case GK_INT64: return (double)((int64_t)(h % 2001) - 1000);
    default: return (double)((int64_t)(h % 161) - 80) / 8;
    }
}

static int64_t shape_size(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

/* An array of dtype t holding `values` (C order). */
static gk_array *from_values(gk_device device, gk_dtype t, int ndim, const int64_t *shape,
                             const double *values)
{
    int64_t n = shape_size(ndim, shape);
    unsigned char *raw = malloc((size_t)(n ? n : 1) * 8);
    for (int64_t i = 0; raw && i < n; i++) {
        double v = values[i];
        test_store(t, v, raw, i);
    }
    gk_array *a = NULL;
    CHECK_OK(gk_from_host(device, t, ndim, shape, raw, &a));
    free(raw);
    return a;
}

/* An array of `sample` values. */
static gk_array *sampled(gk_device device, gk_dtype t, int ndim, const int64_t *shape,
                         uint64_t seed)
{
    int64_t n = shape_size(ndim, shape);
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++)
        v[i] = sample(t, i, seed);
    gk_array *a = from_values(device, t, ndim, shape, v);
    free(v);
    return a;
}

static bool same_shape(const gk_array *a, int ndim, const int64_t *shape)
{
    if (!a || gk_array_ndim(a) != ndim)
        return false;
    for (int i = 0; i < ndim; i++)
        if (gk_array_shape(a)[i] != shape[i])
            return false;
    return true;
}

/* --- the reference --- */

static gk_dtype reduce_dtype(gk_reduction op, gk_dtype t)
{
    bool is_float = t == GK_FLOAT32 || t == GK_FLOAT64;
    switch (op) {
    case GK_SUM:
    case GK_PROD: return is_float ? t : gk_dtype_is_unsigned(t) ? GK_UINT64 : GK_INT64;
    case GK_MEAN:
    case GK_VAR:
    case GK_STD: return is_float ? t : GK_FLOAT64;
    case GK_ARGMIN:
    case GK_ARGMAX: return GK_INT64;
    default: return t;
    }
}

/* op over v[0], v[step], ... (n of them), the naive way. */
static double reference_row(gk_reduction op, gk_dtype t, const double *v, int64_t n,
                            int64_t step, int64_t ddof)
{
    switch (op) {
    case GK_SUM:
    case GK_MEAN: {
        double s = 0;
        for (int64_t i = 0; i < n; i++)
            s += v[i * step];
        return op == GK_SUM ? s : n ? s / (double)n : NAN;
    }
    case GK_PROD: {
        if (t == GK_FLOAT32) { /* the backend multiplies in order, in float */
            float p = 1;
            for (int64_t i = 0; i < n; i++)
                p *= (float)v[i * step];
            return p;
        }
        if (t == GK_FLOAT64) {
            double p = 1;
            for (int64_t i = 0; i < n; i++)
                p *= v[i * step];
            return p;
        }
        uint64_t p = 1; /* int64 or uint64, wrapping */
        for (int64_t i = 0; i < n; i++)
            p *= (uint64_t)(int64_t)v[i * step];
        return gk_dtype_is_unsigned(t) ? (double)p : (double)(int64_t)p;
    }
    case GK_MIN:
    case GK_MAX: {
        double m = v[0];
        for (int64_t i = 0; i < n; i++) {
            if (isnan(v[i * step]))
                return NAN;
            if (op == GK_MIN ? v[i * step] < m : v[i * step] > m)
                m = v[i * step];
        }
        return m;
    }
    case GK_ARGMIN:
    case GK_ARGMAX: {
        int64_t at = 0;
        for (int64_t i = 0; i < n; i++) {
            if (isnan(v[i * step]))
                return (double)i;
            if (op == GK_ARGMIN ? v[i * step] < v[at * step] : v[i * step] > v[at * step])
                at = i;
        }
        return (double)at;
    }
    case GK_VAR:
    case GK_STD: {
        if (n == 0)
            return NAN;
        double mean = 0, ss = 0;
        for (int64_t i = 0; i < n; i++)
            mean += v[i * step];
        mean /= (double)n;
        for (int64_t i = 0; i < n; i++)
            ss += (v[i * step] - mean) * (v[i * step] - mean);
        double var = n - ddof > 0 ? ss / (double)(n - ddof) : ss > 0 ? INFINITY : NAN;
        return op == GK_STD ? sqrt(var) : var;
    }
    default: return NAN;
    }
}

/* The expected result of reducing `v` (shape) along `axis` (normalised;
 * -1: all axes): values in C order, and the output shape. */
static int64_t reference(gk_reduction op, gk_dtype t, const double *v, int ndim,
                         const int64_t *shape, int axis, bool keepdims, int64_t ddof,
                         double *expected, int *out_ndim, int64_t *out_shape)
{
    *out_ndim = 0;
    if (axis < 0) {
        if (keepdims)
            for (int i = 0; i < ndim; i++)
                out_shape[(*out_ndim)++] = 1;
        expected[0] = reference_row(op, t, v, shape_size(ndim, shape), 1, ddof);
        return 1;
    }
    int64_t before = 1, inner = 1;
    for (int i = 0; i < ndim; i++) {
        if (i < axis)
            before *= shape[i];
        if (i > axis)
            inner *= shape[i];
        if (i != axis)
            out_shape[(*out_ndim)++] = shape[i];
        else if (keepdims)
            out_shape[(*out_ndim)++] = 1;
    }
    int64_t count = shape[axis];
    for (int64_t b = 0; b < before; b++)
        for (int64_t k = 0; k < inner; k++)
            expected[b * inner + k] =
                reference_row(op, t, v + b * count * inner + k, count, inner, ddof);
    return before * inner;
}

static double tolerance(gk_reduction op, gk_dtype t)
{
    if (op == GK_MEAN)
        return t == GK_FLOAT32 ? 1e-6 : 1e-12;
    if (op == GK_VAR || op == GK_STD)
        return t == GK_FLOAT32 ? 2e-6 : 1e-10;
    return 0; /* the data make sums exact; min/max/arg/prod are exact */
}

/* One reduction of `a` checked: dtype, shape and values. */
static void check_one(gk_reduction op, const gk_array *a, const double *v, int axis,
                      bool keepdims, int64_t ddof, const char *what)
{
    gk_dtype t = gk_array_dtype(a);
    int ndim = gk_array_ndim(a);
    const int64_t *shape = gk_array_shape(a);
    int normalized = axis == GK_ALL_AXES ? -1 : axis < 0 ? axis + ndim : axis;
    int64_t size = shape_size(ndim, shape);
    int64_t count = normalized < 0 ? size : shape[normalized];
    if (op == GK_PROD && (t == GK_FLOAT32 || t == GK_FLOAT64) && count > BACKEND_CHUNK)
        return; /* chunks combine in double: no naive float reference */
    double *expected = malloc(sizeof *expected * (size_t)(size ? size : 1));
    int out_ndim;
    int64_t out_shape[GK_MAX_DIMS];
    int64_t n = reference(op, t, v, ndim, shape, normalized, keepdims, ddof, expected, &out_ndim,
                          out_shape);
    gk_array *r = NULL;
    int before = check_failures;
    if (ddof)
        CHECK_OK(gk_var(a, axis, ddof, keepdims, op == GK_STD, &r));
    else
        CHECK_OK(gk_reduce(op, a, axis, keepdims, &r));
    if (r) {
        CHECK(gk_array_dtype(r) == reduce_dtype(op, t), "dtype %s",
              gk_dtype_name(gk_array_dtype(r)));
        CHECK(same_shape(r, out_ndim, out_shape), "shape");
        CHECK_VALUES(r, expected, n, tolerance(op, t));
    }
    if (check_failures != before)
        fprintf(stderr, "  (%s of %s %s, axis %d, keepdims %d, ddof %lld)\n", op_names[op],
                what, gk_dtype_name(t), axis, keepdims, (long long)ddof);
    gk_array_free(r);
    free(expected);
}

/* Every reduction over every axis of `a`, whose logical values are read
 * back once. */
static void check_all_reductions(const gk_array *a, const char *what)
{
    double *v = test_values(a);
    CHECK(v != NULL, "read back %s", what);
    if (!v)
        return;
    int ndim = gk_array_ndim(a);
    int axes[GK_MAX_DIMS + 3], n_axes = 0;
    axes[n_axes++] = GK_ALL_AXES;
    for (int i = 0; i < ndim; i++)
        axes[n_axes++] = i;
    if (ndim > 0) {
        axes[n_axes++] = -1;
        axes[n_axes++] = -ndim;
    }
    for (int op = 0; op < GK_REDUCTION_COUNT; op++)
        for (int k = 0; k < n_axes; k++)
            for (int keep = 0; keep < 2; keep++)
                check_one((gk_reduction)op, a, v, axes[k], keep, 0, what);
    for (int k = 0; k < n_axes; k++) {
        check_one(GK_VAR, a, v, axes[k], false, 1, what);
        check_one(GK_STD, a, v, axes[k], true, 3, what);
    }
    free(v);
}

/* --- reductions --- */

/* (37, 53, 61): 119621 elements, past the threaded and chunked sizes. */
static const int64_t big3[3] = {37, 53, 61};

static void test_reduce_layouts(gk_device device)
{
    for (int d = 0; d < DTYPES; d++) {
        gk_dtype t = all_dtypes[d];
        /* Contiguous. */
        gk_array *a = sampled(device, t, 3, big3, 1);
        check_all_reductions(a, "contiguous");
        gk_array_free(a);

        /* Transposed: a (61, 53, 37) array seen as (37, 53, 61). */
        int64_t reversed[3] = {61, 53, 37};
        gk_array *base = sampled(device, t, 3, reversed, 2), *view = NULL;
        CHECK_OK(gk_transpose(base, NULL, &view));
        CHECK(view && !gk_array_is_contiguous(view), "transposed view");
        if (view)
            check_all_reductions(view, "transposed");
        gk_array_free(view);
        gk_array_free(base);

        /* A negative step: a[:, ::-2, :] of a (37, 106, 61) array. */
        int64_t tall[3] = {37, 106, 61};
        base = sampled(device, t, 3, tall, 3);
        CHECK_OK(gk_slice(base, 1, 105, -107, -2, &view));
        CHECK(view && gk_array_shape(view)[1] == 53 && gk_array_strides(view)[1] == -122,
              "reversed slice");
        if (view)
            check_all_reductions(view, "reversed-step");
        gk_array_free(view);
        gk_array_free(base);

        /* Broadcast: (37, 1, 61) stretched to (37, 53, 61). */
        int64_t thin[3] = {37, 1, 61};
        base = sampled(device, t, 3, thin, 4);
        CHECK_OK(gk_broadcast_to(base, 3, big3, &view));
        if (view)
            check_all_reductions(view, "broadcast");
        gk_array_free(view);
        gk_array_free(base);

        /* Small: short rows and columns (pairwise sums under 8 and 128). */
        a = sampled(device, t, 3, (int64_t[]){3, 9, 10}, 6);
        check_all_reductions(a, "small");
        gk_array_free(a);

        /* A reversed 1-d view, reduced without a copy. */
        int64_t line = 100003;
        base = sampled(device, t, 1, &line, 5);
        CHECK_OK(gk_slice(base, 0, -1, -line - 1, -1, &view));
        if (view)
            check_all_reductions(view, "reversed 1-d");
        gk_array_free(view);
        gk_array_free(base);
    }
}

/* Rows longer than the backend's chunk: few rows (chunks on threads), a
 * row per column (columns walked together), few columns (strided rows). */
static void test_reduce_long_rows(gk_device device)
{
    /* 3 rows of 90001: a task per chunk of each row (from 2^18 elements,
     * backends/cpu/reduce.c); then many short rows, on threads too; rows
     * of 97 and 201 (argmin/argmax in one pass up to 1 KiB, their best
     * anywhere in the row) */
    const int64_t shapes[][2] = {{3, 90001}, {70001, 9}, {70001, 3}, {400, 97}, {400, 201}};
    for (int d = 0; d < DTYPES; d++) {
        for (int s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++) {
            gk_array *a = sampled(device, all_dtypes[d], 2, shapes[s], 10 + (uint64_t)s);
            double *v = test_values(a);
            for (int op = 0; op < GK_REDUCTION_COUNT && v; op++) {
                check_one((gk_reduction)op, a, v, 0, false, 0, "long rows");
                check_one((gk_reduction)op, a, v, 1, true, 0, "long rows");
            }
            free(v);
            gk_array_free(a);
        }
    }
}

/* A float32 column of a C-order array (reduced with its neighbours, rows
 * streamed) against the same column copied out (one contiguous row, in
 * chunks) and a C-order copy of the transposed array (row by row). The
 * row paths agree bit for bit. var/std take the same pairwise double sums
 * either way: bit-identical too. sum/mean of columns add blocks of 128 rows
 * in float32, the blocks in double: within 2 units (2^-24 times the sum of
 * the magnitudes) of the exact sum, where they are 0.6 at most and a plain
 * float32 running sum (NumPy's) is 5 to 60 units off in 11 of 12 columns. */
static void test_reduce_layout_independent(gk_device device)
{
    int64_t shape[2] = {70001, 12};
    int64_t n = shape[0] * shape[1];
    double *v = malloc(sizeof *v * (size_t)n);
    for (int64_t i = 0; i < n; i++) /* inexact sums, as float32 values */
        v[i] = (float)((double)(mix((uint64_t)i) % 1000003) / 1000003.0 * 3 - 1);
    gk_array *a = from_values(device, GK_FLOAT32, 2, shape, v);
    const gk_reduction ops[] = {GK_SUM, GK_MEAN, GK_VAR, GK_STD};
    for (int o = 0; o < 4; o++) {
        gk_array *by_columns = NULL, *t = NULL, *rows_copy = NULL, *by_rows = NULL;
        CHECK_OK(gk_reduce(ops[o], a, 0, false, &by_columns));
        CHECK_OK(gk_transpose(a, NULL, &t));
        CHECK_OK(gk_copy(t, &rows_copy));
        CHECK_OK(gk_reduce(ops[o], rows_copy, 1, false, &by_rows));
        double *cols = by_columns ? test_values(by_columns) : NULL;
        double *rows = by_rows ? test_values(by_rows) : NULL;
        bool streamed = ops[o] == GK_SUM || ops[o] == GK_MEAN;
        for (int64_t c = 0; c < shape[1] && cols && rows; c++) {
            gk_array *column = NULL, *dense = NULL, *alone = NULL;
            CHECK_OK(gk_slice(t, 0, c, c + 1, 1, &column));
            CHECK_OK(gk_copy(column, &dense));
            CHECK_OK(gk_reduce(ops[o], dense, GK_ALL_AXES, false, &alone));
            double *one = alone ? test_values(alone) : NULL;
            double exact = 0, magnitude = 0;
            for (int64_t r = 0; r < shape[0]; r++) {
                exact += v[r * shape[1] + c];
                magnitude += fabs(v[r * shape[1] + c]);
            }
            double scale = ops[o] == GK_MEAN ? (double)shape[0] : 1;
            bool columns_ok = streamed ? fabs(cols[c] - exact / scale) <=
                                             2 * ldexp(magnitude, -24) / scale
                                       : one && cols[c] == one[0];
            CHECK(one && one[0] == rows[c] && columns_ok,
                  "%s of column %lld: alone %.9g, by columns %.9g, by rows %.9g, exact %.9g",
                  op_names[ops[o]], (long long)c, one ? one[0] : NAN, cols[c], rows[c],
                  exact / scale);
            free(one);
            gk_array_free(alone);
            gk_array_free(dense);
            gk_array_free(column);
        }
        free(cols);
        free(rows);
        gk_array_free(by_columns);
        gk_array_free(by_rows);
        gk_array_free(rows_copy);
        gk_array_free(t);
    }
    gk_array_free(a);
    /* A constant 1000.5 sums exactly in blocks of 128 rows but not in one
     * float32 running sum (the total reaches 7 * 10^7, where float32 steps
     * by 8): the column sums are the float32 rounding of the exact sum. */
    for (int64_t i = 0; i < n; i++)
        v[i] = 1000.5;
    a = from_values(device, GK_FLOAT32, 2, shape, v);
    free(v);
    gk_array *r = NULL;
    CHECK_OK(gk_reduce(GK_SUM, a, 0, false, &r));
    double *got = r ? test_values(r) : NULL;
    for (int64_t c = 0; got && c < shape[1]; c++)
        CHECK(got[c] == (float)(70001 * 1000.5), "column %lld of 1000.5s sums to %.1f",
              (long long)c, got[c]);
    free(got);
    gk_array_free(r);
    gk_array_free(a);
}

static void test_reduce_scalars(gk_device device)
{
    for (int d = 0; d < DTYPES; d++) {
        gk_dtype t = all_dtypes[d];
        gk_array *a = NULL;
        CHECK_OK(gk_scalar(device, t, t == GK_BOOL ? 1 : 3, &a));
        if (!a)
            continue;
        double *v = test_values(a);
        const int axes[3] = {GK_ALL_AXES, 0, -1};
        for (int op = 0; op < GK_REDUCTION_COUNT && v; op++) {
            for (int k = 0; k < 3; k++) {
                gk_array *r = NULL;
                CHECK_OK(gk_reduce((gk_reduction)op, a, axes[k], k == 1, &r));
                double x = t == GK_BOOL ? 1 : 3;
                double want = op == GK_ARGMIN || op == GK_ARGMAX ? 0
                              : op == GK_VAR || op == GK_STD     ? 0
                                                                 : x;
                CHECK(r && gk_array_ndim(r) == 0, "%s of a 0-d array is 0-d", op_names[op]);
                if (r)
                    CHECK_VALUES(r, &want, 1, 0);
                gk_array_free(r);
            }
        }
        /* ddof 1 of one element: 0 / 0. */
        gk_array *r = NULL;
        CHECK_OK(gk_var(a, GK_ALL_AXES, 1, false, false, &r));
        if (r)
            CHECK_VALUES(r, ((double[]){NAN}), 1, 0);
        gk_array_free(r);
        /* A 0-d array has no axis 1. */
        CHECK_FAILS(gk_reduce(GK_SUM, a, 1, false, &r), GK_ERR_AXIS,
                    "axis 1 is out of range for shape ()");
        CHECK(r == NULL, "no output on failure");
        free(v);
        gk_array_free(a);
    }
}

static void test_reduce_empty(gk_device device)
{
    int64_t shape[2] = {0, 5};
    for (int d = 0; d < DTYPES; d++) {
        gk_dtype t = all_dtypes[d];
        gk_array *a = NULL;
        CHECK_OK(gk_zeros(device, t, 2, shape, &a));
        if (!a)
            continue;
        gk_array *r = NULL;
        /* Over all axes: the identities; mean/var/std NaN. */
        const gk_reduction with_identity[] = {GK_SUM, GK_PROD, GK_MEAN, GK_VAR, GK_STD};
        const double identity[] = {0, 1, NAN, NAN, NAN};
        for (int k = 0; k < 5; k++) {
            CHECK_OK(gk_reduce(with_identity[k], a, GK_ALL_AXES, false, &r));
            CHECK(r && gk_array_ndim(r) == 0 &&
                      gk_array_dtype(r) == reduce_dtype(with_identity[k], t),
                  "empty %s", op_names[with_identity[k]]);
            if (r)
                CHECK_VALUES(r, &identity[k], 1, 0);
            gk_array_free(r);
            /* Along the empty axis: 5 of them. */
            CHECK_OK(gk_reduce(with_identity[k], a, 0, true, &r));
            double five[5] = {identity[k], identity[k], identity[k], identity[k], identity[k]};
            CHECK(same_shape(r, 2, (int64_t[]){1, 5}), "empty %s along axis 0",
                  op_names[with_identity[k]]);
            if (r)
                CHECK_VALUES(r, five, 5, 0);
            gk_array_free(r);
        }
        /* Along the other axis: an empty result, for every reduction. */
        for (int op = 0; op < GK_REDUCTION_COUNT; op++) {
            CHECK_OK(gk_reduce((gk_reduction)op, a, 1, false, &r));
            CHECK(same_shape(r, 1, (int64_t[]){0}), "%s along axis 1 of (0, 5)", op_names[op]);
            gk_array_free(r);
        }
        /* No identity: errors. */
        const gk_reduction no_identity[] = {GK_MIN, GK_MAX, GK_ARGMIN, GK_ARGMAX};
        for (int k = 0; k < 4; k++) {
            r = NULL;
            CHECK_FAILS(gk_reduce(no_identity[k], a, GK_ALL_AXES, false, &r),
                        GK_ERR_INVALID_ARGUMENT, "zero-size array");
            CHECK(strstr(gk_last_error(), "has no identity") && strstr(gk_last_error(), "(0, 5)"),
                  "message: %s", gk_last_error());
            CHECK(r == NULL, "no output");
            CHECK_FAILS(gk_reduce(no_identity[k], a, 0, false, &r), GK_ERR_INVALID_ARGUMENT,
                        "zero-size array");
            CHECK(strstr(gk_last_error(), "axis 0"), "message: %s", gk_last_error());
        }
        gk_array_free(a);
    }
    /* (0, 0): min along an axis is still an empty reduction. */
    gk_array *a = NULL, *r = NULL;
    CHECK_OK(gk_zeros(device, GK_FLOAT32, 2, (int64_t[]){0, 0}, &a));
    CHECK_FAILS(gk_reduce(GK_MAX, a, 0, false, &r), GK_ERR_INVALID_ARGUMENT, "zero-size");
    gk_array_free(a);
}

/* 10^8 float32 ones sum to 10^8 exactly (400 MB; the one test this big). */
static void test_reduce_hundred_million_ones(gk_device device)
{
    int64_t n = 100000000;
    gk_array *a = NULL, *r = NULL;
    CHECK_OK(gk_ones(device, GK_FLOAT32, 1, &n, &a));
    if (!a)
        return;
    CHECK_OK(gk_reduce(GK_SUM, a, GK_ALL_AXES, false, &r));
    if (r) {
        float sum = 0;
        CHECK_OK(gk_to_host(r, &sum, sizeof sum));
        CHECK(sum == 1e8f, "sum of 10^8 float32 ones is %.1f", (double)sum);
        CHECK(gk_array_dtype(r) == GK_FLOAT32, "float32 sum");
    }
    gk_array_free(r);
    CHECK_OK(gk_reduce(GK_MEAN, a, GK_ALL_AXES, false, &r));
    if (r)
        CHECK_VALUES(r, ((double[]){1}), 1, 0);
    gk_array_free(r);
    /* As 10^4 rows of 10^4 along each axis: exact too. */
    gk_array *square = NULL;
    CHECK_OK(gk_reshape(a, 2, (int64_t[]){10000, 10000}, &square));
    for (int axis = 0; axis < 2 && square; axis++) {
        CHECK_OK(gk_reduce(GK_SUM, square, axis, false, &r));
        double *got = r ? test_values(r) : NULL;
        bool exact = got != NULL;
        for (int i = 0; got && i < 10000; i++)
            exact = exact && got[i] == 10000;
        CHECK(exact, "rows of 10^4 ones along axis %d", axis);
        free(got);
        gk_array_free(r);
    }
    gk_array_free(square);
    gk_array_free(a);
}

static void test_reduce_ties_and_nan(gk_device device)
{
    gk_array *a = NULL, *r = NULL;
    /* Ties: the first occurrence. */
    for (int d = 0; d < DTYPES; d++) {
        gk_dtype t = all_dtypes[d];
        double v[6] = {3, 1, 1, 5, 5, 2};
        if (t == GK_BOOL) {
            double b[6] = {1, 0, 0, 1, 1, 0};
            memcpy(v, b, sizeof v);
        }
        a = from_values(device, t, 1, (int64_t[]){6}, v);
        CHECK_OK(gk_reduce(GK_ARGMIN, a, GK_ALL_AXES, false, &r));
        if (r)
            CHECK_VALUES(r, ((double[]){1}), 1, 0);
        gk_array_free(r);
        CHECK_OK(gk_reduce(GK_ARGMAX, a, 0, false, &r));
        if (r)
            CHECK_VALUES(r, ((double[]){t == GK_BOOL ? 0 : 3}), 1, 0);
        gk_array_free(r);
        gk_array_free(a);
    }
    /* NaN: min/max propagate it; argmin/argmax give the first NaN; sums
     * are NaN. */
    for (int t = GK_FLOAT32; t <= GK_FLOAT64; t++) {
        double v[5] = {3, NAN, -1, NAN, 7};
        a = from_values(device, (gk_dtype)t, 1, (int64_t[]){5}, v);
        const gk_reduction ops[] = {GK_MIN, GK_MAX, GK_ARGMIN, GK_ARGMAX, GK_SUM, GK_MEAN, GK_VAR};
        const double want[] = {NAN, NAN, 1, 1, NAN, NAN, NAN};
        for (int k = 0; k < 7; k++) {
            CHECK_OK(gk_reduce(ops[k], a, GK_ALL_AXES, false, &r));
            if (r)
                CHECK_VALUES(r, &want[k], 1, 0);
            gk_array_free(r);
        }
        gk_array_free(a);

        /* Long rows: the winner in a later block or chunk; NaN beats it. */
        int64_t n = 150001;
        double *big = malloc(sizeof *big * (size_t)n);
        for (int64_t i = 0; i < n; i++)
            big[i] = (double)(i % 1000);
        big[5000] = -5;  /* the minimum, again at 120000: the first wins */
        big[120000] = -5;
        big[70000] = 2000; /* the maximum, in the second chunk, again in the third */
        big[140000] = 2000;
        a = from_values(device, (gk_dtype)t, 1, &n, big);
        CHECK_OK(gk_reduce(GK_ARGMIN, a, GK_ALL_AXES, false, &r));
        if (r)
            CHECK_VALUES(r, ((double[]){5000}), 1, 0);
        gk_array_free(r);
        CHECK_OK(gk_reduce(GK_ARGMAX, a, 0, false, &r));
        if (r)
            CHECK_VALUES(r, ((double[]){70000}), 1, 0);
        gk_array_free(r);
        CHECK_OK(gk_reduce(GK_MIN, a, 0, false, &r));
        if (r)
            CHECK_VALUES(r, ((double[]){-5}), 1, 0);
        gk_array_free(r);
        gk_array_free(a);
        big[100000] = NAN;
        big[130000] = NAN;
        a = from_values(device, (gk_dtype)t, 1, &n, big);
        for (int op = GK_MIN; op <= GK_ARGMAX; op++) {
            CHECK_OK(gk_reduce((gk_reduction)op, a, GK_ALL_AXES, false, &r));
            double expected = op >= GK_ARGMIN ? 100000 : NAN;
            if (r)
                CHECK_VALUES(r, &expected, 1, 0);
            gk_array_free(r);
        }
        /* Along columns: (150001 / 7 rows of 7)... use a 2-d view: the NaN
         * column and the others. */
        gk_array *m = NULL;
        CHECK_OK(gk_slice(a, 0, 0, 150000, 1, &m));
        gk_array *grid = NULL;
        CHECK_OK(gk_reshape(m, 2, (int64_t[]){15000, 10}, &grid));
        if (grid) {
            double *gv = test_values(grid);
            for (int op = GK_MIN; op <= GK_ARGMAX && gv; op++) {
                check_one((gk_reduction)op, grid, gv, 0, false, 0, "NaN grid");
                check_one((gk_reduction)op, grid, gv, 1, false, 0, "NaN grid");
            }
            free(gv);
        }
        gk_array_free(grid);
        gk_array_free(m);
        gk_array_free(a);
        free(big);
    }
}

/* min, max, argmin and argmax where ties and NaNs fall in every lane of
 * the CPU's vector kernels: values from {0, 1, 2} (so the best value recurs
 * in many lanes, later lanes often holding earlier indices), zeros of both
 * signs, and for floats a NaN in about one row in three, anywhere (the
 * first element, inside the vector part, in the tail past the last full
 * group of lanes). Rows of every length around the lane counts, rows of
 * columns (the column kernels), a transposed view and rows past a chunk.
 * The GPU kernels have no lanes: the CPU only, to keep the suite short. */
static void test_reduce_ties_in_lanes(gk_device device)
{
    if (device.kind != GK_DEVICE_CPU)
        return;
    /* Bool takes values from {0, 1}. */
    const int64_t lengths[] = {1, 7, 16, 17, 31, 33, 63, 65, 129, 1000};
    for (int d = 0; d < DTYPES; d++) {
        gk_dtype t = all_dtypes[d];
        bool is_float = t == GK_FLOAT32 || t == GK_FLOAT64;
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            /* 96 rows of `length`, and the same as columns. */
            int64_t rows = 48, length = lengths[l], n = rows * length;
            double *v = malloc(sizeof *v * (size_t)n);
            for (int64_t i = 0; v && i < n; i++) {
                uint64_t h = mix((uint64_t)i + 1000 * (uint64_t)length);
                v[i] = (double)(h % (t == GK_BOOL ? 2 : 3));
                if (is_float && v[i] == 0 && h % 7 == 0)
                    v[i] = -0.0;
            }
            for (int64_t r = 0; v && is_float && r < rows; r += 3)
                v[r * length + (int64_t)(mix((uint64_t)r) % (uint64_t)length)] = NAN;
            gk_array *a = from_values(device, t, 2, (int64_t[]){rows, length}, v);
            gk_array *columns = NULL;
            CHECK_OK(gk_transpose(a, NULL, &columns));
            double *cv = columns ? test_values(columns) : NULL;
            for (int op = GK_MIN; op <= GK_ARGMAX && v && cv; op++) {
                check_one((gk_reduction)op, a, v, 1, false, 0, "rows of ties");
                check_one((gk_reduction)op, a, v, 0, false, 0, "columns of ties");
                check_one((gk_reduction)op, columns, cv, 0, false, 0, "transposed ties");
                check_one((gk_reduction)op, columns, cv, 1, false, 0, "transposed ties");
            }
            free(cv);
            gk_array_free(columns);
            gk_array_free(a);
            free(v);
        }
        /* One row of chunks (enough for threads), its best value in every
         * chunk and lane. */
        int64_t n = 4 * BACKEND_CHUNK + 77;
        double *v = malloc(sizeof *v * (size_t)n);
        for (int64_t i = 0; v && i < n; i++)
            v[i] = t == GK_BOOL ? 1 : (double)(1 + mix((uint64_t)i) % 2);
        for (int64_t i = BACKEND_CHUNK + 5; v && i < n && t != GK_BOOL; i += 4099)
            v[i] = 3; /* argmax's best */
        for (int64_t i = 2 * BACKEND_CHUNK - 3; v && i < n; i += 3001)
            v[i] = 0; /* argmin's */
        gk_array *a = v ? from_values(device, t, 1, &n, v) : NULL;
        for (int op = GK_MIN; op <= GK_ARGMAX && a; op++)
            check_one((gk_reduction)op, a, v, GK_ALL_AXES, false, 0, "chunks of ties");
        if (a && is_float) {
            gk_array_free(a);
            v[n - 2] = NAN; /* in the last chunk's tail */
            a = from_values(device, t, 1, &n, v);
            for (int op = GK_MIN; op <= GK_ARGMAX && a; op++)
                check_one((gk_reduction)op, a, v, GK_ALL_AXES, false, 0, "a NaN in the tail");
        }
        gk_array_free(a);
        free(v);
    }
}

static void test_reduce_numerics(gk_device device)
{
    gk_array *a = NULL, *r = NULL;
    /* var/std with ddof. */
    a = from_values(device, GK_FLOAT64, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
    CHECK_OK(gk_var(a, 0, 0, false, false, &r));
    if (r)
        CHECK_VALUES(r, ((double[]){1.25}), 1, 1e-15);
    gk_array_free(r);
    CHECK_OK(gk_var(a, 0, 1, false, false, &r));
    if (r)
        CHECK_VALUES(r, ((double[]){5.0 / 3}), 1, 1e-15);
    gk_array_free(r);
    CHECK_OK(gk_var(a, -1, 1, true, true, &r));
    CHECK(same_shape(r, 1, (int64_t[]){1}), "keepdims");
    if (r)
        CHECK_VALUES(r, ((double[]){sqrt(5.0 / 3)}), 1, 1e-15);
    gk_array_free(r);
    CHECK_OK(gk_reduce(GK_STD, a, GK_ALL_AXES, false, &r));
    if (r)
        CHECK_VALUES(r, ((double[]){sqrt(1.25)}), 1, 1e-15);
    gk_array_free(r);
    /* ddof >= n: NumPy's x / 0 (NaN when all equal, inf otherwise). */
    CHECK_OK(gk_var(a, 0, 4, false, false, &r));
    if (r)
        CHECK_VALUES(r, ((double[]){INFINITY}), 1, 0);
    gk_array_free(r);
    CHECK_OK(gk_var(a, 0, 9, false, true, &r));
    if (r)
        CHECK_VALUES(r, ((double[]){INFINITY}), 1, 0);
    gk_array_free(r);
    gk_array_free(a);
    a = from_values(device, GK_INT32, 1, (int64_t[]){2}, (double[]){7, 7});
    CHECK_OK(gk_var(a, 0, 2, false, false, &r));
    CHECK(r && gk_array_dtype(r) == GK_FLOAT64, "var of int32 is float64");
    if (r)
        CHECK_VALUES(r, ((double[]){NAN}), 1, 0);
    gk_array_free(r);
    CHECK_FAILS(gk_var(a, 0, -1, false, false, &r), GK_ERR_INVALID_ARGUMENT, "ddof");
    gk_array_free(a);

    /* A large mean far from 0: two passes keep var exact. */
    int64_t n = 100003;
    double *v = malloc(sizeof *v * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        v[i] = 1e4 + (i % 2 ? 0.5 : -0.5);
    v[n - 1] = 1e4; /* odd count: one at the mean */
    a = from_values(device, GK_FLOAT32, 1, &n, v);
    CHECK_OK(gk_reduce(GK_VAR, a, GK_ALL_AXES, false, &r));
    if (r)
        CHECK_VALUES(r, ((double[]){0.25 * (double)(n - 1) / (double)n}), 1, 1e-6);
    gk_array_free(r);
    gk_array_free(a);
    free(v);

    /* Integer sums and products are int64 and wrap like NumPy's. */
    int64_t big_values[3] = {INT64_MAX, 1, 1};
    CHECK_OK(gk_from_host(device, GK_INT64, 1, (int64_t[]){3}, big_values, &a));
    CHECK_OK(gk_reduce(GK_SUM, a, GK_ALL_AXES, false, &r));
    int64_t wrapped = 0;
    if (r)
        CHECK_OK(gk_to_host(r, &wrapped, sizeof wrapped));
    CHECK(wrapped == INT64_MIN + 1, "int64 sum wraps: %lld", (long long)wrapped);
    gk_array_free(r);
    gk_array_free(a);
    int32_t thirds[4] = {1 << 30, 1 << 30, 1 << 30, 1 << 30};
    CHECK_OK(gk_from_host(device, GK_INT32, 1, (int64_t[]){4}, thirds, &a));
    CHECK_OK(gk_reduce(GK_SUM, a, GK_ALL_AXES, false, &r));
    CHECK(r && gk_array_dtype(r) == GK_INT64, "int32 sums are int64");
    if (r)
        CHECK_VALUES(r, ((double[]){4.0 * (1 << 30)}), 1, 0); /* no int32 overflow */
    gk_array_free(r);
    CHECK_OK(gk_reduce(GK_PROD, a, GK_ALL_AXES, false, &r));
    int64_t product = -1;
    if (r)
        CHECK_OK(gk_to_host(r, &product, sizeof product));
    CHECK(product == 0, "2^120 wraps to 0 in int64: %lld", (long long)product);
    gk_array_free(r);
    gk_array_free(a);

    /* uint8 sums don't wrap at 256; bool sums count. */
    int64_t many = 100003;
    CHECK_OK(gk_full(device, GK_UINT8, 1, &many, 255, &a));
    CHECK_OK(gk_reduce(GK_SUM, a, GK_ALL_AXES, false, &r));
    if (r)
        CHECK_VALUES(r, ((double[]){255.0 * (double)many}), 1, 0);
    gk_array_free(r);
    gk_array_free(a);
    CHECK_OK(gk_full(device, GK_BOOL, 1, &many, 1, &a));
    CHECK_OK(gk_reduce(GK_SUM, a, GK_ALL_AXES, false, &r));
    CHECK(r && gk_array_dtype(r) == GK_INT64, "bool sums are int64");
    if (r)
        CHECK_VALUES(r, ((double[]){(double)many}), 1, 0);
    gk_array_free(r);
    CHECK_OK(gk_reduce(GK_MEAN, a, GK_ALL_AXES, false, &r));
    CHECK(r && gk_array_dtype(r) == GK_FLOAT64, "bool means are float64");
    gk_array_free(r);
    gk_array_free(a);

    /* float products, in order in the float type. */
    double p[6] = {2, -0.5, 3, 4, -1, 0.25};
    a = from_values(device, GK_FLOAT32, 2, (int64_t[]){2, 3}, p);
    CHECK_OK(gk_reduce(GK_PROD, a, GK_ALL_AXES, false, &r));
    if (r)
        CHECK_VALUES(r, ((double[]){3}), 1, 0);
    gk_array_free(r);
    CHECK_OK(gk_reduce(GK_PROD, a, 0, false, &r));
    if (r)
        CHECK_VALUES(r, ((double[]){8, 0.5, 0.75}), 3, 0);
    gk_array_free(r);
    gk_array_free(a);
    /* A long product: +-1 with pairs of 2 and 0.5, past a chunk. */
    for (int t = GK_FLOAT32; t <= GK_FLOAT64; t++) {
        double *ones = malloc(sizeof *ones * (size_t)n);
        for (int64_t i = 0; i < n; i++)
            ones[i] = i % 1001 == 0 ? 2 : i % 1001 == 500 ? 0.5 : i % 3 == 0 ? -1 : 1;
        double expected = 1;
        for (int64_t i = 0; i < n; i++)
            expected *= ones[i];
        a = from_values(device, (gk_dtype)t, 1, &n, ones);
        CHECK_OK(gk_reduce(GK_PROD, a, GK_ALL_AXES, false, &r));
        if (r)
            CHECK_VALUES(r, &expected, 1, 0);
        gk_array_free(r);
        gk_array_free(a);
        free(ones);
    }
}

static void test_reduce_errors(gk_device device)
{
    gk_array *a = NULL, *r = NULL;
    CHECK_OK(gk_zeros(device, GK_FLOAT32, 3, (int64_t[]){2, 3, 4}, &a));
    if (!a)
        return;
    const int bad[] = {3, -4, 100, GK_ALL_AXES + 1};
    for (int k = 0; k < 4; k++) {
        char text[96];
        snprintf(text, sizeof text, "axis %d is out of range for shape (2, 3, 4)", bad[k]);
        r = NULL;
        CHECK_FAILS(gk_reduce(GK_SUM, a, bad[k], false, &r), GK_ERR_AXIS, text);
        CHECK(strstr(gk_last_error(), "sum:") != NULL, "names the op: %s", gk_last_error());
        CHECK(r == NULL, "no output on failure");
        CHECK_FAILS(gk_var(a, bad[k], 1, false, true, &r), GK_ERR_AXIS, text);
        CHECK_FAILS(gk_cumsum(a, bad[k], &r), GK_ERR_AXIS, text);
        CHECK(strstr(gk_last_error(), "cumsum:") != NULL, "names cumsum: %s", gk_last_error());
        CHECK(r == NULL, "no cumsum output on failure");
    }
    CHECK_FAILS(gk_reduce(GK_REDUCTION_COUNT, a, 0, false, &r), GK_ERR_INVALID_ARGUMENT,
                "invalid reduction");
    CHECK_FAILS(gk_reduce((gk_reduction)-1, a, 0, false, &r), GK_ERR_INVALID_ARGUMENT,
                "invalid reduction");
    gk_array_free(a);
}

/* --- sorting --- */

typedef struct keyed {
    double value;
    int64_t index;
} keyed;

/* NaN last, then by value, then by position: a stable order. */
static int compare_keyed(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    bool an = isnan(a->value), bn = isnan(b->value);
    if (an != bn)
        return an ? 1 : -1;
    if (!an && a->value != b->value)
        return a->value < b->value ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* sort and argsort of `a` against qsort of (value, index) per row. */
static void check_sort(const gk_array *a, const char *what)
{
    double *v = test_values(a);
    if (!v)
        return;
    int64_t size = gk_array_size(a);
    int ndim = gk_array_ndim(a);
    int64_t length = ndim ? gk_array_shape(a)[ndim - 1] : 1;
    int64_t rows = length ? size / length : 0;
    double *values = malloc(sizeof *values * (size_t)(size ? size : 1));
    double *indices = malloc(sizeof *indices * (size_t)(size ? size : 1));
    keyed *row = malloc(sizeof *row * (size_t)(length ? length : 1));
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < length; i++)
            row[i] = (keyed){v[r * length + i], i};
        qsort(row, (size_t)length, sizeof *row, compare_keyed);
        for (int64_t i = 0; i < length; i++) {
            values[r * length + i] = row[i].value;
            indices[r * length + i] = (double)row[i].index;
        }
    }
    gk_array *sorted = NULL, *order = NULL;
    int before = check_failures;
    CHECK_OK(gk_sort(a, &sorted));
    CHECK_OK(gk_argsort(a, &order));
    if (sorted) {
        CHECK(gk_array_dtype(sorted) == gk_array_dtype(a), "sort keeps the dtype");
        CHECK(same_shape(sorted, ndim, gk_array_shape(a)), "sort keeps the shape");
        CHECK_VALUES(sorted, values, size, 0);
    }
    if (order) {
        CHECK(gk_array_dtype(order) == GK_INT64, "argsort gives int64");
        CHECK(same_shape(order, ndim, gk_array_shape(a)), "argsort keeps the shape");
        CHECK_VALUES(order, indices, size, 0);
    }
    if (check_failures != before)
        fprintf(stderr, "  (sorting %s %s)\n", what, gk_dtype_name(gk_array_dtype(a)));
    gk_array_free(sorted);
    gk_array_free(order);
    free(row);
    free(indices);
    free(values);
    free(v);
}

static void test_sort(gk_device device)
{
    for (int d = 0; d < DTYPES; d++) {
        gk_dtype t = all_dtypes[d];
        /* Many short rows (threads over rows), many equal keys. */
        gk_array *a = sampled(device, t, 3, big3, 20);
        check_sort(a, "(37, 53, 61)");
        /* Transposed: rows gathered first. */
        gk_array *view = NULL;
        CHECK_OK(gk_transpose(a, NULL, &view));
        if (view)
            check_sort(view, "transposed");
        gk_array_free(view);
        gk_array_free(a);
        /* One long row (threads over runs and merges). */
        int64_t n = 150001;
        a = sampled(device, t, 1, &n, 21);
        check_sort(a, "one long row");
        gk_array_free(a);
        /* Already sorted, reversed, tiny rows. */
        double up[40];
        for (int i = 0; i < 40; i++)
            up[i] = t == GK_BOOL ? i >= 20 : i;
        a = from_values(device, t, 2, (int64_t[]){2, 20}, up);
        check_sort(a, "sorted rows");
        CHECK_OK(gk_slice(a, 1, -1, -21, -1, &view));
        if (view)
            check_sort(view, "reversed rows");
        gk_array_free(view);
        gk_array_free(a);
        a = sampled(device, t, 2, (int64_t[]){50000, 3}, 22);
        check_sort(a, "rows of 3");
        gk_array_free(a);
        a = sampled(device, t, 2, (int64_t[]){400, 300}, 25);
        check_sort(a, "rows of 300");
        gk_array_free(a);
        /* One thread per row, by 11-bit digits (WIDE_DIGITS_MIN). */
        a = sampled(device, t, 2, (int64_t[]){3, 5003}, 26);
        check_sort(a, "rows of 5003");
        gk_array_free(a);
        a = sampled(device, t, 2, (int64_t[]){4, 1}, 23);
        check_sort(a, "rows of 1");
        gk_array_free(a);
    }
    /* NaN last, NaNs in their order (argsort is stable), -inf and inf. */
    for (int t = GK_FLOAT32; t <= GK_FLOAT64; t++) {
        double v[8] = {3, NAN, -INFINITY, 1, NAN, INFINITY, 1, -2};
        gk_array *a = from_values(device, (gk_dtype)t, 1, (int64_t[]){8}, v), *r = NULL;
        CHECK_OK(gk_sort(a, &r));
        if (r)
            CHECK_VALUES(r, ((double[]){-INFINITY, -2, 1, 1, 3, INFINITY, NAN, NAN}), 8, 0);
        gk_array_free(r);
        CHECK_OK(gk_argsort(a, &r));
        if (r)
            CHECK_VALUES(r, ((double[]){2, 7, 3, 6, 0, 5, 1, 4}), 8, 0);
        gk_array_free(r);
        gk_array_free(a);
        /* -0.0 and 0.0 are equal keys: argsort keeps their order, in short
         * rows and long ones. */
        for (int64_t length = 10; length <= 1000; length *= 10) {
            double *zeros = malloc(sizeof *zeros * (size_t)length);
            double *order = malloc(sizeof *order * (size_t)length);
            for (int64_t i = 0; i < length; i++) {
                zeros[i] = i % 3 ? 0.0 : -0.0;
                order[i] = (double)i;
            }
            a = from_values(device, (gk_dtype)t, 1, &length, zeros);
            CHECK_OK(gk_argsort(a, &r));
            if (r)
                CHECK_VALUES(r, order, length, 0);
            gk_array_free(r);
            gk_array_free(a);
            free(order);
            free(zeros);
        }
        /* Many NaNs in long rows. */
        int64_t shape[2] = {3, 70001};
        double *many = malloc(sizeof *many * 3 * 70001);
        for (int64_t i = 0; i < 3 * 70001; i++)
            many[i] = i % 7 == 3 ? NAN : sample(GK_FLOAT64, i, 24);
        a = from_values(device, (gk_dtype)t, 2, shape, many);
        check_sort(a, "NaN rows");
        gk_array_free(a);
        free(many);
    }
    /* 0-d: itself; argsort 0. Empty: empty. */
    gk_array *a = NULL, *r = NULL;
    CHECK_OK(gk_scalar(device, GK_INT32, 7, &a));
    CHECK_OK(gk_sort(a, &r));
    CHECK(r && gk_array_ndim(r) == 0, "sort of 0-d");
    if (r)
        CHECK_VALUES(r, ((double[]){7}), 1, 0);
    gk_array_free(r);
    CHECK_OK(gk_argsort(a, &r));
    if (r)
        CHECK_VALUES(r, ((double[]){0}), 1, 0);
    gk_array_free(r);
    gk_array_free(a);
    const int64_t empties[2][2] = {{3, 0}, {0, 4}};
    for (int k = 0; k < 2; k++) {
        CHECK_OK(gk_zeros(device, GK_FLOAT32, 2, empties[k], &a));
        CHECK_OK(gk_sort(a, &r));
        CHECK(same_shape(r, 2, empties[k]), "sort of empty");
        gk_array_free(r);
        CHECK_OK(gk_argsort(a, &r));
        CHECK(same_shape(r, 2, empties[k]) && gk_array_dtype(r) == GK_INT64, "argsort of empty");
        gk_array_free(r);
        gk_array_free(a);
    }
}

/* Rows of every length from 56 to 264 and around 512 and 1024: the CPU
 * sorts 4-byte rows of 64 to 1024 by a sorting network (sort_network.c),
 * padded with the largest key to a power of two, and longer ones by
 * radix. Each row holds the dtype's extremes (the padding's own value
 * among them), many equal keys and, for floats, both zeros and the
 * infinities; one row of three a NaN (its keys go through the network,
 * the others' values as they are); plain sorts put -0.0 before 0.0 in rows of 64 and
 * more, as the radix sort does. */
static void test_sort_network_lengths(gk_device device)
{
    const gk_dtype types[] = {GK_FLOAT32, GK_INT32, GK_UINT32, GK_INT16, GK_FLOAT64};
    const double extremes[][2] = {
        {-INFINITY, INFINITY}, {-2147483648.0, 2147483647.0}, {0, 4294967295.0},
        {-32768, 32767}, {-INFINITY, INFINITY}};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        gk_dtype t = types[k];
        bool is_float = t == GK_FLOAT32 || t == GK_FLOAT64;
        const int64_t longer[] = {511, 512, 513, 700, 1023, 1024, 1025};
        for (int64_t l = 56; l <= 264 + (int64_t)(sizeof longer / sizeof *longer); l++) {
            int64_t length = l <= 264 ? l : longer[l - 265], rows = 3, n = rows * length;
            double *v = malloc(sizeof *v * (size_t)n);
            for (int64_t i = 0; v && i < n; i++) {
                v[i] = sample(t, i, 40 + (uint64_t)length);
                if (i % 17 == 3)
                    v[i] = extremes[k][i % 2];
                if (is_float && i % 5 == 1)
                    v[i] = i % 10 == 1 ? -0.0 : 0.0;
                if (is_float && i == length + 9)
                    v[i] = NAN; /* in the middle row only: the others sort as they are */
            }
            gk_array *a = v ? from_values(device, t, 2, (int64_t[]){rows, length}, v) : NULL;
            char what[32];
            snprintf(what, sizeof what, "rows of %lld", (long long)length);
            if (a)
                check_sort(a, what);
            gk_array *sorted = NULL;
            double *got = NULL;
            if (a && t == GK_FLOAT32 && length >= 64) {
                CHECK_OK(gk_sort(a, &sorted));
                got = sorted ? test_values(sorted) : NULL;
            }
            for (int64_t r = 0; got && r < rows; r++) {
                bool positive_zero_seen = false;
                for (int64_t i = 0; i < length; i++) {
                    double x = got[r * length + i];
                    if (x == 0 && !signbit(x))
                        positive_zero_seen = true;
                    CHECK(!(x == 0 && signbit(x) && positive_zero_seen),
                          "rows of %lld: -0.0 after 0.0 in row %lld", (long long)length,
                          (long long)r);
                }
            }
            free(got);
            gk_array_free(sorted);
            gk_array_free(a);
            free(v);
        }
    }
}

/* --- cumsum --- */

/* cumsum of `a` along `axis` (GK_ALL_AXES: flattened) against a running
 * sum per row: double for integers (exact here), the float type for floats
 * (the same additions in the same order). */
static void check_cumsum(const gk_array *a, int axis, const char *what)
{
    double *v = test_values(a);
    if (!v)
        return;
    gk_dtype t = gk_array_dtype(a);
    gk_dtype want = t == GK_FLOAT32 || t == GK_FLOAT64 ? t
                    : gk_dtype_is_unsigned(t)          ? GK_UINT64
                                                       : GK_INT64;
    int ndim = gk_array_ndim(a);
    const int64_t *shape = gk_array_shape(a);
    int64_t size = gk_array_size(a);
    bool flat = axis == GK_ALL_AXES || ndim == 0;
    int ax = flat ? 0 : axis < 0 ? axis + ndim : axis;
    int64_t before = 1, count = flat ? size : shape[ax], inner = 1;
    for (int i = 0; i < ndim && !flat; i++) {
        if (i < ax)
            before *= shape[i];
        if (i > ax)
            inner *= shape[i];
    }
    double *expected = malloc(sizeof *expected * (size_t)(size ? size : 1));
    for (int64_t b = 0; b < before; b++) {
        for (int64_t k = 0; k < inner; k++) {
            double acc = 0;
            float acc32 = 0;
            for (int64_t i = 0; i < count; i++) {
                int64_t at = (b * count + i) * inner + k;
                acc += v[at];
                acc32 += (float)v[at];
                expected[at] = t == GK_FLOAT32 ? acc32 : acc;
            }
        }
    }
    gk_array *r = NULL;
    int failures = check_failures;
    CHECK_OK(gk_cumsum(a, axis, &r));
    if (r) {
        CHECK(gk_array_dtype(r) == want, "cumsum dtype %s", gk_dtype_name(gk_array_dtype(r)));
        if (flat)
            CHECK(same_shape(r, 1, &size), "flattened cumsum is 1-d");
        else
            CHECK(same_shape(r, ndim, shape), "cumsum keeps the shape");
        CHECK_VALUES(r, expected, size, 0);
    }
    if (check_failures != failures)
        fprintf(stderr, "  (cumsum of %s %s along axis %d)\n", what, gk_dtype_name(t), axis);
    gk_array_free(r);
    free(expected);
    free(v);
}

static void test_cumsum(gk_device device)
{
    const int axes[6] = {0, 1, 2, -1, -3, GK_ALL_AXES};
    for (int d = 0; d < DTYPES; d++) {
        gk_dtype t = all_dtypes[d];
        gk_array *a = sampled(device, t, 3, big3, 30), *view = NULL;
        for (int k = 0; k < 6; k++)
            check_cumsum(a, axes[k], "contiguous");
        CHECK_OK(gk_transpose(a, (int[]){2, 0, 1}, &view));
        for (int k = 0; k < 6 && view; k++)
            check_cumsum(view, axes[k], "transposed");
        gk_array_free(view);
        CHECK_OK(gk_slice(a, 2, -1, -62, -3, &view));
        for (int k = 0; k < 6 && view; k++)
            check_cumsum(view, axes[k], "reversed-step");
        gk_array_free(view);
        gk_array_free(a);
        int64_t thin[3] = {37, 1, 61};
        a = sampled(device, t, 3, thin, 31);
        CHECK_OK(gk_broadcast_to(a, 3, big3, &view));
        for (int k = 0; k < 6 && view; k++)
            check_cumsum(view, axes[k], "broadcast");
        gk_array_free(view);
        gk_array_free(a);
        /* 0-d: one element, 1-d (NumPy). */
        CHECK_OK(gk_scalar(device, t, 1, &a));
        for (int k = 0; k < 3 && a; k++) {
            int axis = k == 0 ? 0 : k == 1 ? -1 : GK_ALL_AXES;
            gk_array *r = NULL;
            CHECK_OK(gk_cumsum(a, axis, &r));
            CHECK(same_shape(r, 1, (int64_t[]){1}), "cumsum of 0-d is (1,)");
            if (r)
                CHECK_VALUES(r, ((double[]){1}), 1, 0);
            gk_array_free(r);
        }
        gk_array *r = NULL;
        CHECK_FAILS(gk_cumsum(a, 1, &r), GK_ERR_AXIS, "out of range for shape ()");
        gk_array_free(a);
        /* Empty. */
        CHECK_OK(gk_zeros(device, t, 2, (int64_t[]){0, 3}, &a));
        CHECK_OK(gk_cumsum(a, 1, &r));
        CHECK(same_shape(r, 2, (int64_t[]){0, 3}), "empty cumsum");
        gk_array_free(r);
        CHECK_OK(gk_cumsum(a, GK_ALL_AXES, &r));
        CHECK(same_shape(r, 1, (int64_t[]){0}), "empty flattened cumsum");
        gk_array_free(r);
        gk_array_free(a);
    }
    /* Integer cumsums are int64: no int32 overflow; a long row. */
    int64_t n = 100003;
    gk_array *a = NULL, *r = NULL;
    CHECK_OK(gk_full(device, GK_INT32, 1, &n, 1 << 30, &a));
    CHECK_OK(gk_cumsum(a, 0, &r));
    double last = 0;
    if (r)
        CHECK_OK(gk_item(r, (int64_t[]){-1}, &last));
    CHECK(last == (double)n * (1 << 30), "int32 cumsum in int64: %.17g", last);
    gk_array_free(r);
    gk_array_free(a);
}

int main(void)
{
    FOR_EACH_DEVICE(test_reduce_errors);
    FOR_EACH_DEVICE(test_reduce_scalars);
    FOR_EACH_DEVICE(test_reduce_empty);
    FOR_EACH_DEVICE(test_reduce_numerics);
    FOR_EACH_DEVICE(test_reduce_ties_and_nan);
    FOR_EACH_DEVICE(test_reduce_ties_in_lanes);
    FOR_EACH_DEVICE(test_reduce_layouts);
    FOR_EACH_DEVICE(test_reduce_long_rows);
    FOR_EACH_DEVICE(test_reduce_layout_independent);
    FOR_EACH_DEVICE(test_reduce_hundred_million_ones);
    FOR_EACH_DEVICE(test_sort);
    FOR_EACH_DEVICE(test_sort_network_lengths);
    FOR_EACH_DEVICE(test_cumsum);
    CHECK_DONE();
}
