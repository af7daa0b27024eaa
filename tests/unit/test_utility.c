/* The array API's remaining functions on every device: cumulative products
 * and gk_cumulative (src/compute/sort.c over the backends' scans), meshgrid,
 * tril/triu, all/any and diff (src/compute/utility.c), tensordot and vecdot
 * (src/compute/contract.c). Each against values worked out here with plain
 * C loops, in every dtype where the dtype matters, on strided, empty and
 * 0-d inputs, with every error path. */
#include "array_check.h"

#include <stdint.h>

#define COUNT(array) ((int)(sizeof(array) / sizeof *(array)))

static const gk_dtype all_dtypes[] = {GK_BOOL,   GK_INT8,   GK_INT16,  GK_INT32,
                                      GK_INT64,  GK_UINT8,  GK_UINT16, GK_UINT32,
                                      GK_UINT64, GK_FLOAT32, GK_FLOAT64};

/* An array of `dtype` and this shape from doubles (C's conversions). */
static gk_array *from_values(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                             const double *values)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    unsigned char *raw = calloc((size_t)(n ? n : 1), 8);
    for (int64_t i = 0; raw && i < n; i++)
        test_store(dtype, values[i], raw, i);
    gk_array *a = NULL;
    if (raw)
        CHECK_OK(gk_from_host(device, dtype, ndim, shape, raw, &a));
    free(raw);
    return a;
}

/* 0, 1, 2, ... of this shape. */
static gk_array *counting(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    gk_array *flat = NULL, *a = NULL;
    CHECK_OK(gk_arange(device, dtype, 0, (double)n, 1, &flat));
    if (flat)
        CHECK_OK(gk_reshape(flat, ndim, shape, &a));
    gk_array_free(flat);
    return a;
}

static void check_shape(const gk_array *a, int ndim, const int64_t *shape, const char *what)
{
    bool same = a && gk_array_ndim(a) == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = gk_array_shape(a)[i] == shape[i];
    CHECK(same, "%s: wrong shape", what);
}

static void check_dtype(const gk_array *a, gk_dtype dtype, const char *what)
{
    CHECK(a && gk_array_dtype(a) == dtype, "%s: dtype %s, expected %s", what,
          a ? gk_dtype_name(gk_array_dtype(a)) : "(none)", gk_dtype_name(dtype));
}

/* The 64-bit integer elements of `a` (int64 or uint64) exactly, as uint64
 * bits (malloc'd). */
static uint64_t *bits_of(const gk_array *a)
{
    int64_t n = gk_array_size(a);
    uint64_t *bits = malloc(sizeof *bits * (size_t)(n ? n : 1));
    if (bits && gk_to_host(a, bits, sizeof *bits * (size_t)n) != GK_OK) {
        free(bits);
        return NULL;
    }
    return bits;
}

/* --- cumulative products --- */

/* The scan's dtype for an input dtype (sum and prod alike). */
static gk_dtype scan_dtype(gk_dtype t)
{
    return gk_dtype_is_float(t) ? t : gk_dtype_is_unsigned(t) ? GK_UINT64 : GK_INT64;
}

static void test_cumprod_dtypes(gk_device device)
{
    /* (2, 3) = [[1, 2, 3], [0, 1, 2]] along each axis, every dtype; bool
     * gives 0/1 (logical and). */
    const double values[] = {1, 2, 3, 0, 1, 2};
    for (int d = 0; d < COUNT(all_dtypes); d++) {
        gk_dtype t = all_dtypes[d];
        gk_array *a = from_values(device, t, 2, (int64_t[]){2, 3}, values), *out = NULL;
        double b[6];
        for (int i = 0; i < 6; i++)
            b[i] = t == GK_BOOL ? values[i] != 0 : values[i];
        CHECK_OK(gk_cumprod(a, 1, &out));
        check_dtype(out, scan_dtype(t), "cumprod dtype");
        CHECK_VALUES(out, ((double[]){b[0], b[0] * b[1], b[0] * b[1] * b[2], b[3], b[3] * b[4],
                                      b[3] * b[4] * b[5]}),
                     6, 0);
        gk_array_free(out);
        CHECK_OK(gk_cumprod(a, 0, &out));
        CHECK_VALUES(out, ((double[]){b[0], b[1], b[2], b[0] * b[3], b[1] * b[4], b[2] * b[5]}),
                     6, 0);
        gk_array_free(out);
        CHECK_OK(gk_cumprod(a, GK_ALL_AXES, &out));
        check_shape(out, 1, (int64_t[]){6}, "flattened cumprod");
        CHECK_VALUES(out, ((double[]){b[0], b[0] * b[1], b[0] * b[1] * b[2], 0, 0, 0}), 6, 0);
        gk_array_free(out);
        /* the same through gk_cumulative with include_initial: a leading 1 */
        CHECK_OK(gk_cumulative(GK_PROD, a, -1, NULL, true, &out));
        check_shape(out, 2, (int64_t[]){2, 4}, "include_initial lengthens the axis");
        check_dtype(out, scan_dtype(t), "cumulative_prod dtype");
        CHECK_VALUES(out, ((double[]){1, b[0], b[0] * b[1], b[0] * b[1] * b[2], 1, b[3],
                                      b[3] * b[4], b[3] * b[4] * b[5]}),
                     8, 0);
        gk_array_free(out);
        CHECK_OK(gk_cumulative(GK_SUM, a, 0, NULL, true, &out));
        check_shape(out, 2, (int64_t[]){3, 3}, "cumulative_sum include_initial");
        CHECK_VALUES(out, ((double[]){0, 0, 0, b[0], b[1], b[2], b[0] + b[3], b[1] + b[4],
                                      b[2] + b[5]}),
                     9, 0);
        gk_array_free(out);
        gk_array_free(a);
    }
}

static void test_cumprod_wraps(gk_device device)
{
    /* dtype=int8 computes in int8: 100 * 3 wraps to 44, then * 3 = 132 ->
     * -124; without dtype= int64 keeps 300 and 900. */
    gk_array *a = from_values(device, GK_INT8, 1, (int64_t[]){3}, (double[]){100, 3, 3}), *out;
    gk_dtype int8 = GK_INT8;
    CHECK_OK(gk_cumulative(GK_PROD, a, 0, &int8, false, &out));
    check_dtype(out, GK_INT8, "dtype= int8");
    CHECK_VALUES(out, ((double[]){100, 44, -124}), 3, 0);
    gk_array_free(out);
    CHECK_OK(gk_cumulative(GK_PROD, a, GK_ALL_AXES, NULL, false, &out));
    check_dtype(out, GK_INT64, "int8 cumprod is int64");
    CHECK_VALUES(out, ((double[]){100, 300, 900}), 3, 0);
    gk_array_free(out);
    /* dtype=float64: converted first */
    gk_dtype float64 = GK_FLOAT64;
    CHECK_OK(gk_cumulative(GK_PROD, a, 0, &float64, true, &out));
    check_dtype(out, GK_FLOAT64, "dtype= float64");
    CHECK_VALUES(out, ((double[]){1, 100, 300, 900}), 4, 0);
    gk_array_free(out);
    gk_array_free(a);
    /* int64 and uint64 products wrap modulo 2^64: 2^40 * 2^40 = 2^80 -> 0,
     * and 3^41 wraps; checked bit for bit. */
    int64_t signed_in[] = {INT64_C(1) << 40, INT64_C(1) << 40, -3};
    uint64_t unsigned_in[45], expected[45], acc = 1;
    for (int i = 0; i < 45; i++) {
        unsigned_in[i] = 3;
        acc *= 3;
        expected[i] = acc;
    }
    gk_array *s = NULL, *u = NULL;
    CHECK_OK(gk_from_host(device, GK_INT64, 1, (int64_t[]){3}, signed_in, &s));
    CHECK_OK(gk_from_host(device, GK_UINT64, 1, (int64_t[]){45}, unsigned_in, &u));
    CHECK_OK(gk_cumprod(s, 0, &out));
    uint64_t *bits = out ? bits_of(out) : NULL;
    CHECK(bits && bits[0] == UINT64_C(1) << 40 && bits[1] == 0 && bits[2] == 0,
          "int64 products wrap");
    free(bits);
    gk_array_free(out);
    CHECK_OK(gk_cumprod(u, 0, &out));
    bits = out ? bits_of(out) : NULL;
    CHECK(bits && memcmp(bits, expected, sizeof expected) == 0, "uint64 powers of 3 wrap");
    free(bits);
    gk_array_free(out);
    gk_array_free(s);
    gk_array_free(u);
}

/* Long rows (the GPU's block scans, with pieces when few rows): integer
 * products exact against a C loop; float32 products of values near 1
 * within a bound (the GPU scans in blocks, so its rounding differs). */
static void test_cumprod_long(gk_device device)
{
    enum { N = 70000 };
    double *values = malloc(sizeof *values * N * 2), *expected = malloc(sizeof *expected * N * 2);
    /* int32: mostly 1 and -1, a 2 every 4096 elements; two rows */
    for (int r = 0; r < 2; r++) {
        int64_t acc = 1;
        for (int i = 0; i < N; i++) {
            double v = i % 4096 == 7 ? 2 : (i * 7 + r) % 5 == 0 ? -1 : 1;
            values[r * N + i] = v;
            acc *= (int64_t)v;
            expected[r * N + i] = (double)acc;
        }
    }
    gk_array *a = from_values(device, GK_INT32, 2, (int64_t[]){2, N}, values), *out = NULL;
    CHECK_OK(gk_cumprod(a, 1, &out));
    CHECK_VALUES(out, expected, 2 * N, 0);
    gk_array_free(out);
    /* the same rows along axis 0 of the transpose (strided) */
    gk_array *at = NULL, *back = NULL;
    CHECK_OK(gk_transpose(a, NULL, &at));
    CHECK_OK(gk_cumprod(at, 0, &out));
    CHECK_OK(gk_transpose(out, NULL, &back));
    CHECK_VALUES(back, expected, 2 * N, 0);
    gk_array_free(back);
    gk_array_free(out);
    gk_array_free(at);
    gk_array_free(a);
    /* float32 within 1 + 2^-12 of 1: products stay near 1 */
    double acc = 1;
    for (int i = 0; i < N; i++) {
        values[i] = 1 + ((i * 37) % 17 - 8) / 32768.0;
        acc *= (float)values[i];
        expected[i] = acc;
    }
    a = from_values(device, GK_FLOAT32, 1, (int64_t[]){N}, values);
    CHECK_OK(gk_cumprod(a, 0, &out));
    CHECK_VALUES(out, expected, N, 1e-3);
    gk_array_free(out);
    gk_array_free(a);
    free(values);
    free(expected);
}

static void test_cumprod_edges(gk_device device)
{
    gk_array *scalar = NULL, *empty = NULL, *out = NULL;
    CHECK_OK(gk_scalar(device, GK_FLOAT32, 5, &scalar));
    CHECK_OK(gk_cumprod(scalar, GK_ALL_AXES, &out));
    check_shape(out, 1, (int64_t[]){1}, "cumprod of 0-d is (1,)");
    CHECK_VALUES(out, ((double[]){5}), 1, 0);
    gk_array_free(out);
    CHECK_OK(gk_cumulative(GK_PROD, scalar, 0, NULL, true, &out));
    check_shape(out, 1, (int64_t[]){2}, "include_initial of 0-d");
    CHECK_VALUES(out, ((double[]){1, 5}), 2, 0);
    gk_array_free(out);
    CHECK_OK(gk_zeros(device, GK_UINT8, 2, (int64_t[]){0, 3}, &empty));
    CHECK_OK(gk_cumprod(empty, 0, &out));
    check_shape(out, 2, (int64_t[]){0, 3}, "empty cumprod");
    check_dtype(out, GK_UINT64, "uint8 cumprod is uint64");
    gk_array_free(out);
    CHECK_OK(gk_cumulative(GK_PROD, empty, 0, NULL, true, &out));
    check_shape(out, 2, (int64_t[]){1, 3}, "empty with include_initial");
    CHECK_VALUES(out, ((double[]){1, 1, 1}), 3, 0);
    gk_array_free(out);
    /* errors */
    CHECK_FAILS(gk_cumprod(empty, 2, &out), GK_ERR_AXIS, "cumprod:");
    CHECK(out == NULL, "no output on failure");
    CHECK_FAILS(gk_cumulative(GK_PROD, empty, -3, NULL, false, &out), GK_ERR_AXIS,
                "cumulative_prod:");
    CHECK_FAILS(gk_cumulative(GK_MAX, empty, 0, NULL, false, &out), GK_ERR_INVALID_ARGUMENT,
                "neither GK_SUM nor GK_PROD");
    CHECK_FAILS(gk_cumulative(GK_SUM, scalar, 1, NULL, false, &out), GK_ERR_AXIS,
                "out of range for shape ()");
    gk_dtype bad = (gk_dtype)99;
    CHECK_FAILS(gk_cumulative(GK_SUM, scalar, 0, &bad, false, &out), GK_ERR_INVALID_ARGUMENT,
                "invalid dtype");
    gk_array_free(scalar);
    gk_array_free(empty);
}

/* --- meshgrid --- */

static void test_meshgrid(gk_device device)
{
    gk_array *x = counting(device, GK_INT16, 1, (int64_t[]){3});  /* 0 1 2 */
    gk_array *y = from_values(device, GK_FLOAT64, 1, (int64_t[]){2}, (double[]){5, 6});
    gk_array *z = counting(device, GK_UINT8, 2, (int64_t[]){2, 2}); /* flattened: 0..3 */
    gk_array *out[GK_MAX_DIMS] = {NULL};
    CHECK_OK(gk_meshgrid(2, (const gk_array *[]){x, y}, true, false, out));
    check_shape(out[0], 2, (int64_t[]){2, 3}, "xy grid of x");
    check_shape(out[1], 2, (int64_t[]){2, 3}, "xy grid of y");
    check_dtype(out[0], GK_INT16, "each keeps its dtype");
    check_dtype(out[1], GK_FLOAT64, "each keeps its dtype");
    CHECK_VALUES(out[0], ((double[]){0, 1, 2, 0, 1, 2}), 6, 0);
    CHECK_VALUES(out[1], ((double[]){5, 5, 5, 6, 6, 6}), 6, 0);
    /* views of a broadcast, read-only as NumPy's: writing into a whole one
     * or into any view of it (one element) is refused, the input untouched */
    gk_array *one = NULL, *corner = NULL;
    CHECK_OK(gk_scalar(device, GK_INT16, 9, &one));
    CHECK(!gk_array_is_writable(out[0]), "a meshgrid view is read-only");
    CHECK_FAILS(gk_assign(out[0], one), GK_ERR_INVALID_ARGUMENT, "broadcast");
    CHECK_OK(gk_index_axis(out[0], 0, 1, &corner));
    gk_array *element = NULL;
    CHECK_OK(gk_index_axis(corner, 0, 0, &element));
    CHECK_FAILS(gk_assign(element, one), GK_ERR_INVALID_ARGUMENT, "broadcast");
    CHECK_VALUES(x, ((double[]){0, 1, 2}), 3, 0);
    gk_array_free(element);
    gk_array_free(corner);
    for (int i = 0; i < 2; i++)
        gk_array_free(out[i]);
    /* copies (NumPy's default): writable, the input untouched */
    CHECK_OK(gk_meshgrid(2, (const gk_array *[]){x, y}, true, true, out));
    CHECK_OK(gk_assign(out[0], one));
    CHECK_VALUES(out[0], ((double[]){9, 9, 9, 9, 9, 9}), 6, 0);
    CHECK_VALUES(out[1], ((double[]){5, 5, 5, 6, 6, 6}), 6, 0);
    CHECK(out[0] && gk_array_is_contiguous(out[0]), "a copy is contiguous");
    CHECK_OK(gk_assign(x, one));
    CHECK_VALUES(out[1], ((double[]){5, 5, 5, 6, 6, 6}), 6, 0);
    gk_array_free(x);
    x = counting(device, GK_INT16, 1, (int64_t[]){3});
    gk_array_free(one);
    for (int i = 0; i < 2; i++)
        gk_array_free(out[i]);
    CHECK_OK(gk_meshgrid(3, (const gk_array *[]){x, y, z}, false, true, out));
    for (int i = 0; i < 3; i++)
        check_shape(out[i], 3, (int64_t[]){3, 2, 4}, "ij grid");
    double gx[24], gy[24], gz[24];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 4; k++) {
                gx[(i * 2 + j) * 4 + k] = i;
                gy[(i * 2 + j) * 4 + k] = 5 + j;
                gz[(i * 2 + j) * 4 + k] = k;
            }
    CHECK_VALUES(out[0], gx, 24, 0);
    CHECK_VALUES(out[1], gy, 24, 0);
    CHECK_VALUES(out[2], gz, 24, 0);
    for (int i = 0; i < 3; i++)
        gk_array_free(out[i]);
    /* xy with three: (2, 3, 4) */
    CHECK_OK(gk_meshgrid(3, (const gk_array *[]){x, y, z}, true, false, out));
    check_shape(out[2], 3, (int64_t[]){2, 3, 4}, "xy swaps the first two axes only");
    for (int i = 0; i < 3; i++)
        gk_array_free(out[i]);
    /* one array, none, an empty one, a 0-d one */
    CHECK_OK(gk_meshgrid(1, (const gk_array *[]){y}, true, true, out));
    check_shape(out[0], 1, (int64_t[]){2}, "one array: itself");
    gk_array_free(out[0]);
    CHECK_OK(gk_meshgrid(0, NULL, true, true, out));
    gk_array *empty = NULL, *scalar = NULL;
    CHECK_OK(gk_empty(device, GK_FLOAT32, 1, (int64_t[]){0}, &empty));
    CHECK_OK(gk_scalar(device, GK_INT64, 9, &scalar));
    CHECK_OK(gk_meshgrid(3, (const gk_array *[]){x, empty, scalar}, true, true, out));
    check_shape(out[0], 3, (int64_t[]){0, 3, 1}, "empty grid");
    CHECK_VALUES(out[2], ((double[]){0}), 0, 0);
    for (int i = 0; i < 3; i++)
        gk_array_free(out[i]);
    /* errors */
    const gk_array *nine[9] = {x, x, x, x, x, x, x, x, x};
    CHECK_FAILS(gk_meshgrid(9, nine, true, true, out), GK_ERR_INVALID_ARGUMENT,
                "at most 8 axes");
    CHECK_FAILS(gk_meshgrid(2, (const gk_array *[]){x, NULL}, true, true, out),
                GK_ERR_INVALID_ARGUMENT, "array 1 is NULL");
    gk_array_free(empty);
    gk_array_free(scalar);
    gk_array_free(x);
    gk_array_free(y);
    gk_array_free(z);
}

/* --- tril, triu --- */

static void test_triangles(gk_device device)
{
    /* a batch of two 3x4 matrices, 1 ... 24, in every dtype */
    const int64_t shape[] = {2, 3, 4};
    double values[24];
    for (int i = 0; i < 24; i++)
        values[i] = i + 1;
    const int64_t ks[] = {0, 1, -1, 3, -2, 100, -100, INT64_MAX, INT64_MIN};
    for (int d = 0; d < COUNT(all_dtypes); d++) {
        gk_dtype t = all_dtypes[d];
        gk_array *a = from_values(device, t, 3, shape, values);
        for (int q = 0; q < COUNT(ks); q++)
            for (int lower = 0; lower < 2; lower++) {
                int before = check_failures;
                gk_array *out = NULL;
                CHECK_OK(lower ? gk_tril(a, ks[q], &out) : gk_triu(a, ks[q], &out));
                check_dtype(out, t, "tril/triu keep the dtype");
                check_shape(out, 3, shape, "tril/triu keep the shape");
                double expected[24];
                for (int i = 0; i < 24; i++) {
                    int64_t row = (i / 4) % 3, col = i % 4, k = ks[q];
                    /* col - row compared with k, without overflow */
                    bool keep = lower ? (k >= 4 || col - row <= k) : (k <= -3 || col - row >= k);
                    double v = t == GK_BOOL ? 1 : values[i];
                    expected[i] = keep ? v : 0;
                }
                CHECK_VALUES(out, expected, 24, 0);
                if (check_failures != before)
                    fprintf(stderr, "  (%s %s k=%lld)\n", lower ? "tril" : "triu",
                            gk_dtype_name(t), (long long)ks[q]);
                gk_array_free(out);
            }
        gk_array_free(a);
    }
    /* a transposed view, an empty batch, too few axes */
    gk_array *m = counting(device, GK_FLOAT32, 2, (int64_t[]){3, 3}), *mt = NULL, *out = NULL;
    CHECK_OK(gk_transpose(m, NULL, &mt)); /* [[0 3 6] [1 4 7] [2 5 8]] */
    CHECK_OK(gk_tril(mt, 0, &out));
    CHECK_VALUES(out, ((double[]){0, 0, 0, 1, 4, 0, 2, 5, 8}), 9, 0);
    gk_array_free(out);
    gk_array *empty = NULL, *line = NULL;
    CHECK_OK(gk_zeros(device, GK_INT32, 3, (int64_t[]){0, 2, 2}, &empty));
    CHECK_OK(gk_triu(empty, 0, &out));
    check_shape(out, 3, (int64_t[]){0, 2, 2}, "empty batch");
    gk_array_free(out);
    CHECK_OK(gk_zeros(device, GK_INT32, 1, (int64_t[]){3}, &line));
    CHECK_FAILS(gk_tril(line, 0, &out), GK_ERR_INVALID_ARGUMENT, "tril: the array has shape (3,)");
    CHECK(out == NULL, "no output on failure");
    CHECK_FAILS(gk_triu(NULL, 0, &out), GK_ERR_INVALID_ARGUMENT, "NULL");
    gk_array_free(m);
    gk_array_free(mt);
    gk_array_free(empty);
    gk_array_free(line);
}

/* --- all, any --- */

static void test_all_any(gk_device device)
{
    /* (2, 3): [[1, 0, NaN], [2, 3, 4]] */
    gk_array *a = from_values(device, GK_FLOAT64, 2, (int64_t[]){2, 3},
                              (double[]){1, 0, NAN, 2, 3, 4});
    gk_array *out = NULL;
    CHECK_OK(gk_all(a, 0, NULL, false, &out));
    check_shape(out, 0, NULL, "all over everything is 0-d");
    check_dtype(out, GK_BOOL, "all is bool");
    CHECK_VALUES(out, ((double[]){0}), 1, 0);
    gk_array_free(out);
    CHECK_OK(gk_any(a, 0, NULL, false, &out));
    CHECK_VALUES(out, ((double[]){1}), 1, 0);
    gk_array_free(out);
    CHECK_OK(gk_all(a, 1, (int[]){-1}, false, &out));
    CHECK_VALUES(out, ((double[]){0, 1}), 2, 0); /* NaN is true */
    gk_array_free(out);
    CHECK_OK(gk_all(a, 1, (int[]){0}, true, &out));
    check_shape(out, 2, (int64_t[]){1, 3}, "keepdims");
    CHECK_VALUES(out, ((double[]){1, 0, 1}), 3, 0);
    gk_array_free(out);
    CHECK_OK(gk_any(a, 2, (int[]){1, 0}, true, &out));
    check_shape(out, 2, (int64_t[]){1, 1}, "tuple axes with keepdims");
    CHECK_VALUES(out, ((double[]){1}), 1, 0);
    gk_array_free(out);
    CHECK_OK(gk_any(a, 0, (int[]){0}, false, &out)); /* axis=(): each alone */
    check_shape(out, 2, (int64_t[]){2, 3}, "no axes");
    CHECK_VALUES(out, ((double[]){1, 0, 1, 1, 1, 1}), 6, 0);
    gk_array_free(out);
    /* every dtype, a column of zeros */
    for (int d = 0; d < COUNT(all_dtypes); d++) {
        gk_array *b = from_values(device, all_dtypes[d], 2, (int64_t[]){2, 2},
                                  (double[]){0, 1, 0, 1});
        CHECK_OK(gk_all(b, 1, (int[]){0}, false, &out));
        CHECK_VALUES(out, ((double[]){0, 1}), 2, 0);
        gk_array_free(out);
        CHECK_OK(gk_any(b, 1, (int[]){1}, false, &out));
        CHECK_VALUES(out, ((double[]){1, 1}), 2, 0);
        gk_array_free(out);
        gk_array_free(b);
    }
    /* empty: all true, any false */
    gk_array *empty = NULL;
    CHECK_OK(gk_zeros(device, GK_INT32, 2, (int64_t[]){0, 2}, &empty));
    CHECK_OK(gk_all(empty, 0, NULL, false, &out));
    CHECK_VALUES(out, ((double[]){1}), 1, 0);
    gk_array_free(out);
    CHECK_OK(gk_any(empty, 1, (int[]){0}, false, &out));
    CHECK_VALUES(out, ((double[]){0, 0}), 2, 0);
    gk_array_free(out);
    CHECK_FAILS(gk_all(a, 1, (int[]){2}, false, &out), GK_ERR_AXIS,
                "all: axis 2 is out of range");
    CHECK_FAILS(gk_any(a, 2, (int[]){1, -1}, false, &out), GK_ERR_INVALID_ARGUMENT,
                "any: axis -1 is listed twice");
    CHECK(out == NULL, "no output on failure");
    gk_array_free(empty);
    gk_array_free(a);
}

/* --- diff --- */

static void test_diff(gk_device device)
{
    /* (2, 4): [[1, 2, 4, 7], [0, 5, 5, 1]] */
    const double values[] = {1, 2, 4, 7, 0, 5, 5, 1};
    gk_array *a = from_values(device, GK_INT32, 2, (int64_t[]){2, 4}, values), *out = NULL;
    CHECK_OK(gk_diff(a, -1, 1, NULL, NULL, &out));
    check_shape(out, 2, (int64_t[]){2, 3}, "diff shortens the axis");
    check_dtype(out, GK_INT32, "diff keeps the dtype");
    CHECK_VALUES(out, ((double[]){1, 2, 3, 5, 0, -4}), 6, 0);
    gk_array_free(out);
    CHECK_OK(gk_diff(a, 1, 2, NULL, NULL, &out));
    CHECK_VALUES(out, ((double[]){1, 1, -5, -4}), 4, 0);
    gk_array_free(out);
    CHECK_OK(gk_diff(a, 0, 1, NULL, NULL, &out));
    check_shape(out, 2, (int64_t[]){1, 4}, "diff along axis 0");
    CHECK_VALUES(out, ((double[]){-1, 3, 1, -6}), 4, 0);
    gk_array_free(out);
    /* n past the length: empty along the axis */
    CHECK_OK(gk_diff(a, 1, 4, NULL, NULL, &out));
    check_shape(out, 2, (int64_t[]){2, 0}, "n = length");
    gk_array_free(out);
    CHECK_OK(gk_diff(a, 1, INT64_MAX, NULL, NULL, &out));
    check_shape(out, 2, (int64_t[]){2, 0}, "huge n");
    check_dtype(out, GK_INT32, "the emptied diff keeps the dtype");
    gk_array_free(out);
    CHECK_OK(gk_diff(a, 1, 0, NULL, NULL, &out));
    CHECK_VALUES(out, values, 8, 0);
    gk_array_free(out);
    /* prepend a 0-d 10 (broadcast down the rows), append a float column */
    gk_array *ten = NULL, *column = NULL;
    CHECK_OK(gk_scalar(device, GK_INT32, 10, &ten));
    column = from_values(device, GK_FLOAT32, 2, (int64_t[]){2, 1}, (double[]){0.5, -1});
    CHECK_OK(gk_diff(a, 1, 1, ten, column, &out));
    check_shape(out, 2, (int64_t[]){2, 5}, "prepend and append");
    check_dtype(out, GK_FLOAT64, "int32 joined with float32 promotes");
    CHECK_VALUES(out, ((double[]){-9, 1, 2, 3, -6.5, -10, 5, 0, -4, -2}), 10, 0);
    gk_array_free(out);
    /* uint8 wraps; bool is not_equal */
    gk_array *u = from_values(device, GK_UINT8, 1, (int64_t[]){3}, (double[]){1, 5, 2});
    CHECK_OK(gk_diff(u, 0, 1, NULL, NULL, &out));
    CHECK_VALUES(out, ((double[]){4, 253}), 2, 0);
    gk_array_free(out);
    gk_array *b = from_values(device, GK_BOOL, 1, (int64_t[]){4}, (double[]){1, 0, 0, 1});
    CHECK_OK(gk_diff(b, 0, 1, NULL, NULL, &out));
    check_dtype(out, GK_BOOL, "bool diff is bool");
    CHECK_VALUES(out, ((double[]){1, 0, 1}), 3, 0);
    gk_array_free(out);
    CHECK_OK(gk_diff(b, 0, 2, NULL, NULL, &out));
    CHECK_VALUES(out, ((double[]){1, 1}), 2, 0);
    gk_array_free(out);
    /* a reversed view */
    gk_array *r = NULL;
    CHECK_OK(gk_slice(a, 1, -1, INT64_MIN, -1, &r)); /* [[7 4 2 1] [1 5 5 0]] */
    CHECK_OK(gk_diff(r, 1, 1, NULL, NULL, &out));
    CHECK_VALUES(out, ((double[]){-3, -2, -1, 4, 0, -5}), 6, 0);
    gk_array_free(out);
    /* errors */
    gk_array *scalar = NULL, *line = NULL;
    CHECK_OK(gk_scalar(device, GK_FLOAT32, 1, &scalar));
    line = counting(device, GK_INT32, 1, (int64_t[]){4});
    CHECK_FAILS(gk_diff(scalar, -1, 1, NULL, NULL, &out), GK_ERR_INVALID_ARGUMENT,
                "needs at least one axis");
    CHECK_FAILS(gk_diff(a, -1, -1, NULL, NULL, &out), GK_ERR_INVALID_ARGUMENT,
                "n is -1; it must be 0 or more");
    CHECK_FAILS(gk_diff(a, 2, 1, NULL, NULL, &out), GK_ERR_AXIS,
                "diff: axis 2 is out of range");
    CHECK_FAILS(gk_diff(a, 1, 1, line, NULL, &out), GK_ERR_INVALID_ARGUMENT,
                "diff: prepend has shape (4,)");
    CHECK_FAILS(gk_diff(a, 0, 1, NULL, column, &out), GK_ERR_INVALID_ARGUMENT, "diff:");
    CHECK(out == NULL, "no output on failure");
    gk_array_free(scalar);
    gk_array_free(line);
    gk_array_free(r);
    gk_array_free(b);
    gk_array_free(u);
    gk_array_free(ten);
    gk_array_free(column);
    gk_array_free(a);
}

/* --- tensordot, vecdot --- */

/* c = sum over the contracted pairs, for a (2, 3, 4) and b (4, 3, 5)
 * contracted over a's axes (1, 2) with b's (1, 0): c[i, l] = sum_{j,k}
 * a[i, j, k] * b[k, j, l]. */
static void test_tensordot(gk_device device)
{
    double av[24], bv[60];
    for (int i = 0; i < 24; i++)
        av[i] = (i * 5) % 7 - 3;
    for (int i = 0; i < 60; i++)
        bv[i] = (i * 3) % 11 - 5;
    double expected[10];
    for (int i = 0; i < 2; i++)
        for (int l = 0; l < 5; l++) {
            double s = 0;
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < 4; k++)
                    s += av[(i * 3 + j) * 4 + k] * bv[(k * 3 + j) * 5 + l];
            expected[i * 5 + l] = s;
        }
    const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64, GK_INT8, GK_INT16, GK_INT32, GK_INT64};
    for (int d = 0; d < COUNT(dtypes); d++) {
        gk_array *a = from_values(device, dtypes[d], 3, (int64_t[]){2, 3, 4}, av);
        gk_array *b = from_values(device, dtypes[d], 3, (int64_t[]){4, 3, 5}, bv), *out = NULL;
        CHECK_OK(gk_tensordot(a, b, 2, (int[]){1, 2}, (int[]){1, 0}, &out));
        check_shape(out, 2, (int64_t[]){2, 5}, "tensordot shape");
        check_dtype(out, dtypes[d], "tensordot keeps the dtype");
        CHECK_VALUES(out, expected, 10, dtypes[d] == GK_FLOAT32 ? 1e-6 : 0);
        gk_array_free(out);
        /* negative axes name the same pairs */
        CHECK_OK(gk_tensordot(a, b, 2, (int[]){-2, -1}, (int[]){-2, -3}, &out));
        CHECK_VALUES(out, expected, 10, dtypes[d] == GK_FLOAT32 ? 1e-6 : 0);
        gk_array_free(out);
        gk_array_free(a);
        gk_array_free(b);
    }
    /* int8 wraps as int8 arithmetic */
    gk_array *p = from_values(device, GK_INT8, 1, (int64_t[]){2}, (double[]){100, 100});
    gk_array *q = from_values(device, GK_UINT8, 1, (int64_t[]){2}, (double[]){2, 1});
    gk_array *out = NULL;
    CHECK_OK(gk_tensordot(p, p, 1, (int[]){0}, (int[]){0}, &out));
    check_shape(out, 0, NULL, "a full contraction is 0-d");
    CHECK_VALUES(out, ((double[]){32}), 1, 0); /* 100 * 100 * 2 = 20000 = 78 * 256 + 32 */
    gk_array_free(out);
    /* int8 with uint8 promotes to int16: 300 */
    CHECK_OK(gk_tensordot(p, q, 1, (int[]){0}, (int[]){0}, &out));
    check_dtype(out, GK_INT16, "int8 with uint8 is int16");
    CHECK_VALUES(out, ((double[]){300}), 1, 0);
    gk_array_free(out);
    /* bool: any pair both true */
    gk_array *t = from_values(device, GK_BOOL, 2, (int64_t[]){2, 2}, (double[]){1, 0, 0, 0});
    CHECK_OK(gk_tensordot(t, t, 1, (int[]){1}, (int[]){0}, &out));
    check_dtype(out, GK_BOOL, "bool tensordot is bool");
    CHECK_VALUES(out, ((double[]){1, 0, 0, 0}), 4, 0);
    gk_array_free(out);
    /* no axes: the outer product, (2,) x (2, 2) */
    CHECK_OK(gk_tensordot(q, t, 0, NULL, NULL, &out));
    check_shape(out, 3, (int64_t[]){2, 2, 2}, "outer product");
    check_dtype(out, GK_UINT8, "uint8 with bool is uint8");
    CHECK_VALUES(out, ((double[]){2, 0, 0, 0, 1, 0, 0, 0}), 8, 0);
    gk_array_free(out);
    /* mixed int with float: float32 through matmul */
    gk_array *f = from_values(device, GK_FLOAT32, 1, (int64_t[]){2}, (double[]){0.5, 0.25});
    CHECK_OK(gk_tensordot(q, f, 1, (int[]){0}, (int[]){0}, &out));
    check_dtype(out, GK_FLOAT32, "uint8 with float32 is float32");
    CHECK_VALUES(out, ((double[]){1.25}), 1, 0);
    gk_array_free(out);
    /* 0-d operands, an empty contraction */
    gk_array *two = NULL, *e1 = NULL, *e2 = NULL;
    CHECK_OK(gk_scalar(device, GK_INT32, 2, &two));
    CHECK_OK(gk_tensordot(two, two, 0, NULL, NULL, &out));
    check_shape(out, 0, NULL, "0-d outer product");
    CHECK_VALUES(out, ((double[]){4}), 1, 0);
    gk_array_free(out);
    CHECK_OK(gk_zeros(device, GK_FLOAT32, 2, (int64_t[]){3, 0}, &e1));
    CHECK_OK(gk_zeros(device, GK_INT32, 2, (int64_t[]){0, 2}, &e2));
    CHECK_OK(gk_tensordot(e1, e2, 1, (int[]){1}, (int[]){0}, &out));
    check_shape(out, 2, (int64_t[]){3, 2}, "empty contraction");
    CHECK_VALUES(out, ((double[]){0, 0, 0, 0, 0, 0}), 6, 0);
    gk_array_free(out);
    gk_array_free(e1);
    /* errors */
    gk_array *three = counting(device, GK_INT32, 1, (int64_t[]){3});
    CHECK_FAILS(gk_tensordot(three, t, 1, (int[]){0}, (int[]){1}, &out),
                GK_ERR_INVALID_ARGUMENT, "axis 0 of x1 (3,) has length 3 but axis 1 of x2 "
                "(2, 2) has 2; contracted axes must match");
    gk_array_free(three);
    CHECK_FAILS(gk_tensordot(t, t, 2, (int[]){0, 0}, (int[]){0, 1}, &out),
                GK_ERR_INVALID_ARGUMENT, "axis 0 of x1 is listed twice");
    CHECK_FAILS(gk_tensordot(t, t, 1, (int[]){2}, (int[]){0}, &out), GK_ERR_AXIS,
                "tensordot: x1:");
    CHECK_FAILS(gk_tensordot(p, t, 2, (int[]){0, 1}, (int[]){0, 1}, &out),
                GK_ERR_INVALID_ARGUMENT, "2 axes to contract");
    gk_array *big = NULL;
    CHECK_OK(gk_zeros(device, GK_FLOAT32, 5, (int64_t[]){1, 1, 1, 1, 1}, &big));
    CHECK_FAILS(gk_tensordot(big, big, 0, NULL, NULL, &out), GK_ERR_INVALID_ARGUMENT,
                "would have 10 axes");
    CHECK(out == NULL, "no output on failure");
    gk_array_free(big);
    gk_array_free(two);
    gk_array_free(e2);
    gk_array_free(f);
    gk_array_free(t);
    gk_array_free(p);
    gk_array_free(q);
}

/* An integer contraction larger than one block of products (several
 * blocks of rows), exact. */
static void test_tensordot_blocks(gk_device device)
{
    enum { M = 20, K = 256, N = 1024 };
    double *av = malloc(sizeof *av * M * K), *bv = malloc(sizeof *bv * K * N);
    double *expected = malloc(sizeof *expected * M * N);
    for (int i = 0; i < M * K; i++)
        av[i] = i % 13 - 6;
    for (int i = 0; i < K * N; i++)
        bv[i] = i % 9 - 4;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += av[i * K + k] * bv[k * N + j];
            expected[i * N + j] = s;
        }
    gk_array *a = from_values(device, GK_INT32, 2, (int64_t[]){M, K}, av);
    gk_array *b = from_values(device, GK_INT32, 2, (int64_t[]){K, N}, bv), *out = NULL;
    CHECK_OK(gk_tensordot(a, b, 1, (int[]){1}, (int[]){0}, &out));
    CHECK_VALUES(out, expected, M * N, 0);
    gk_array_free(out);
    gk_array_free(a);
    gk_array_free(b);
    free(av);
    free(bv);
    free(expected);
}

static void test_vecdot(gk_device device)
{
    /* a (2, 3) with b (3,) broadcast: rows dotted with b */
    gk_array *a = from_values(device, GK_FLOAT32, 2, (int64_t[]){2, 3},
                              (double[]){1, 2, 3, 4, 5, 6});
    gk_array *b = from_values(device, GK_FLOAT32, 1, (int64_t[]){3}, (double[]){1, 0, -1});
    gk_array *out = NULL;
    CHECK_OK(gk_vecdot(a, b, -1, &out));
    check_shape(out, 1, (int64_t[]){2}, "vecdot drops the axis");
    CHECK_VALUES(out, ((double[]){-2, -2}), 2, 0);
    gk_array_free(out);
    CHECK_OK(gk_vecdot(b, b, 0, &out));
    check_shape(out, 0, NULL, "1-d vecdot is 0-d");
    CHECK_VALUES(out, ((double[]){2}), 1, 0);
    gk_array_free(out);
    /* along axis 0 of (2, 3) with (2, 1): broadcast on the other axis */
    gk_array *c = from_values(device, GK_FLOAT64, 2, (int64_t[]){2, 1}, (double[]){1, 2});
    CHECK_OK(gk_vecdot(a, c, 0, &out));
    check_dtype(out, GK_FLOAT64, "float32 with float64");
    CHECK_VALUES(out, ((double[]){9, 12, 15}), 3, 0);
    gk_array_free(out);
    CHECK_OK(gk_vecdot(a, c, -2, &out));
    CHECK_VALUES(out, ((double[]){9, 12, 15}), 3, 0);
    gk_array_free(out);
    /* every integer dtype and bool: the promoted dtype's arithmetic */
    for (int d = 0; d < COUNT(all_dtypes); d++) {
        gk_dtype t = all_dtypes[d];
        gk_array *x = from_values(device, t, 1, (int64_t[]){3}, (double[]){1, 1, 0});
        gk_array *y = from_values(device, t, 1, (int64_t[]){3}, (double[]){1, 1, 1});
        CHECK_OK(gk_vecdot(x, y, -1, &out));
        check_dtype(out, t, "vecdot keeps the dtype");
        CHECK_VALUES(out, ((double[]){t == GK_BOOL ? 1 : 2}), 1, 0);
        gk_array_free(out);
        gk_array_free(x);
        gk_array_free(y);
    }
    gk_array *w = from_values(device, GK_UINT8, 1, (int64_t[]){2}, (double[]){200, 100});
    CHECK_OK(gk_vecdot(w, w, -1, &out));
    CHECK_VALUES(out, ((double[]){(200 * 200 + 100 * 100) % 256}), 1, 0);
    gk_array_free(out);
    /* empty vectors: 0 */
    gk_array *e = NULL;
    CHECK_OK(gk_zeros(device, GK_INT64, 2, (int64_t[]){2, 0}, &e));
    CHECK_OK(gk_vecdot(e, e, -1, &out));
    CHECK_VALUES(out, ((double[]){0, 0}), 2, 0);
    gk_array_free(out);
    /* errors */
    gk_array *s = NULL;
    CHECK_OK(gk_scalar(device, GK_FLOAT32, 1, &s));
    CHECK_FAILS(gk_vecdot(s, b, -1, &out), GK_ERR_INVALID_ARGUMENT, "0-d array has no vectors");
    CHECK_FAILS(gk_vecdot(a, c, -1, &out), GK_ERR_INVALID_ARGUMENT,
                "lengths 3 and 1; they must be equal");
    CHECK_FAILS(gk_vecdot(a, b, -2, &out), GK_ERR_INVALID_ARGUMENT, "must be equal");
    CHECK_FAILS(gk_vecdot(a, b, 2, &out), GK_ERR_AXIS, "axis 2 is out of range");
    CHECK_FAILS(gk_vecdot(a, e, -1, &out), GK_ERR_INVALID_ARGUMENT, "vecdot:");
    CHECK(out == NULL, "no output on failure");
    gk_array_free(s);
    gk_array_free(e);
    gk_array_free(w);
    gk_array_free(a);
    gk_array_free(b);
    gk_array_free(c);
}

/* Operands on two devices are refused (when there are two). */
static void test_devices_differ(void)
{
    gk_device devices[16];
    int n = test_devices(devices, 16);
    if (n < 2)
        return;
    gk_array *a = NULL, *b = NULL, *out = NULL;
    CHECK_OK(gk_ones(devices[0], GK_FLOAT32, 1, (int64_t[]){3}, &a));
    CHECK_OK(gk_ones(devices[1], GK_FLOAT32, 1, (int64_t[]){3}, &b));
    CHECK_FAILS(gk_vecdot(a, b, -1, &out), GK_ERR_INVALID_ARGUMENT, "vecdot");
    CHECK_FAILS(gk_tensordot(a, b, 1, (int[]){0}, (int[]){0}, &out), GK_ERR_INVALID_ARGUMENT,
                "tensordot");
    gk_array *grids[2];
    CHECK_FAILS(gk_meshgrid(2, (const gk_array *[]){a, b}, true, true, grids),
                GK_ERR_INVALID_ARGUMENT, "meshgrid");
    CHECK_FAILS(gk_diff(a, 0, 1, b, NULL, &out), GK_ERR_INVALID_ARGUMENT, "diff");
    gk_array_free(a);
    gk_array_free(b);
}

int main(void)
{
    FOR_EACH_DEVICE(test_cumprod_dtypes);
    FOR_EACH_DEVICE(test_cumprod_wraps);
    FOR_EACH_DEVICE(test_cumprod_long);
    FOR_EACH_DEVICE(test_cumprod_edges);
    FOR_EACH_DEVICE(test_meshgrid);
    FOR_EACH_DEVICE(test_triangles);
    FOR_EACH_DEVICE(test_all_any);
    FOR_EACH_DEVICE(test_diff);
    FOR_EACH_DEVICE(test_tensordot);
    FOR_EACH_DEVICE(test_tensordot_blocks);
    FOR_EACH_DEVICE(test_vecdot);
    test_devices_differ();
    CHECK_DONE();
}
