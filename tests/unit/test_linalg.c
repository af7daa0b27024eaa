/* Linear algebra, random numbers and printing on every device: matmul and
 * dot against naive loops (dtypes, batches, broadcasting, 1-d operands,
 * strided inputs, empty products), the factorizations checked by what they
 * must satisfy (svd, qr, solve, inv), the Philox generator's numbers
 * (pinned, so every backend must reproduce them) and statistics, and the
 * exact text of printed arrays; with the errors of each. */
#include "array_check.h"

#include "compute/factor.h" /* factor_determinants_from_lu: the GPU's det */

/* A deterministic, irregular fill: small values with a fractional part,
 * exact in float32. */
static double fill_value(int64_t i, int salt)
{
    return (double)((i * 7 + salt * 13) % 17 - 8) / 4.0;
}

/* A new array of `dtype` on `device` holding `values` (converted). */
static gk_array *make(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                      const double *values)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    size_t size = gk_dtype_size(dtype);
    unsigned char *raw = malloc((size_t)(n ? n : 1) * size);
    for (int64_t i = 0; i < n; i++) {
        test_store(dtype, values[i], raw, i);
    }
    gk_array *a = NULL;
    CHECK_OK(gk_from_host(device, dtype, ndim, shape, raw, &a));
    free(raw);
    return a;
}

/* An array filled with fill_value(i, salt). */
static gk_array *filled(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                        int salt, double **values)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++)
        v[i] = fill_value(i, salt);
    gk_array *a = make(device, dtype, ndim, shape, v);
    if (values)
        *values = v;
    else
        free(v);
    return a;
}

/* c (m x n) = a (m x k) @ b (k x n), row-major, the plain triple loop. */
static void naive_matmul(const double *a, const double *b, double *c, int64_t m, int64_t k,
                         int64_t n)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double sum = 0;
            for (int64_t p = 0; p < k; p++)
                sum += a[i * k + p] * b[p * n + j];
            c[i * n + j] = sum;
        }
}

static bool has_shape(const gk_array *a, int ndim, const int64_t *shape)
{
    if (!a || gk_array_ndim(a) != ndim)
        return false;
    for (int i = 0; i < ndim; i++)
        if (gk_array_shape(a)[i] != shape[i])
            return false;
    return true;
}

#define CHECK_SHAPE(a, ndim, ...)                                                        \
    CHECK(has_shape((a), (ndim), (const int64_t[]){__VA_ARGS__}), "shape of %s", #a)

static double tolerance_of(gk_dtype dtype)
{
    return dtype == GK_FLOAT32 ? 1e-5 : 1e-12;
}

/* --- matmul --- */

static void test_matmul_2d(gk_device device)
{
    const gk_dtype dtypes[2] = {GK_FLOAT32, GK_FLOAT64};
    for (int t = 0; t < 2; t++) {
        int64_t m = 5, k = 7, n = 3;
        double *va, *vb;
        gk_array *a = filled(device, dtypes[t], 2, (int64_t[]){m, k}, 1, &va);
        gk_array *b = filled(device, dtypes[t], 2, (int64_t[]){k, n}, 2, &vb);
        double expected[15];
        naive_matmul(va, vb, expected, m, k, n);
        gk_array *c = NULL;
        CHECK_OK(gk_matmul(a, b, &c));
        CHECK_SHAPE(c, 2, 5, 3);
        CHECK(c && gk_array_dtype(c) == dtypes[t], "dtype");
        CHECK(c && gk_device_equal(gk_array_device(c), device), "device");
        if (c)
            CHECK_VALUES(c, expected, 15, tolerance_of(dtypes[t]));
        gk_array_free(c);
        /* dot of two matrices is the same product. */
        CHECK_OK(gk_dot(a, b, &c));
        if (c)
            CHECK_VALUES(c, expected, 15, tolerance_of(dtypes[t]));
        gk_array_free(c);
        gk_array_free(a);
        gk_array_free(b);
        free(va);
        free(vb);
    }
    /* A large square product through the threaded GEMM. */
    int64_t n = 96;
    double *va, *vb, *expected = malloc(sizeof *expected * (size_t)(n * n));
    gk_array *a = filled(device, GK_FLOAT32, 2, (int64_t[]){n, n}, 3, &va);
    gk_array *b = filled(device, GK_FLOAT32, 2, (int64_t[]){n, n}, 4, &vb);
    naive_matmul(va, vb, expected, n, n, n);
    gk_array *c = NULL;
    CHECK_OK(gk_matmul(a, b, &c));
    if (c)
        CHECK_VALUES(c, expected, n * n, 1e-5);
    gk_array_free(a);
    gk_array_free(b);
    gk_array_free(c);
    free(va);
    free(vb);
    free(expected);
}

/* a (batch_a..., m, k) @ b (batch_b..., k, n) against the naive product of
 * each broadcast batch item. */
static void check_batched(gk_device device, gk_dtype dtype, int nda, const int64_t *sa,
                          int ndb, const int64_t *sb)
{
    double *va, *vb;
    gk_array *a = filled(device, dtype, nda, sa, 5, &va);
    gk_array *b = filled(device, dtype, ndb, sb, 6, &vb);
    int64_t m = sa[nda - 2], k = sa[nda - 1], n = sb[ndb - 1];
    int nb = (nda > ndb ? nda : ndb) - 2;
    int64_t batch[GK_MAX_DIMS], total = 1;
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - (nda - 2)), ib = i - (nb - (ndb - 2));
        int64_t la = ia >= 0 ? sa[ia] : 1, lb = ib >= 0 ? sb[ib] : 1;
        batch[i] = la > lb ? la : lb;
        total *= batch[i];
    }
    double *expected = malloc(sizeof *expected * (size_t)(total * m * n));
    for (int64_t item = 0; item < total; item++) {
        /* The item's index along each batch axis, then each operand's own
         * (broadcast) item. */
        int64_t rest = item, ai = 0, bi = 0, a_scale = 1, b_scale = 1;
        for (int i = nb - 1; i >= 0; i--) {
            int64_t index = rest % batch[i];
            rest /= batch[i];
            int ia = i - (nb - (nda - 2)), ib = i - (nb - (ndb - 2));
            if (ia >= 0) {
                ai += (sa[ia] == 1 ? 0 : index) * a_scale;
                a_scale *= sa[ia];
            }
            if (ib >= 0) {
                bi += (sb[ib] == 1 ? 0 : index) * b_scale;
                b_scale *= sb[ib];
            }
        }
        naive_matmul(va + ai * m * k, vb + bi * k * n, expected + item * m * n, m, k, n);
    }
    gk_array *c = NULL;
    CHECK_OK(gk_matmul(a, b, &c));
    int64_t shape[GK_MAX_DIMS];
    for (int i = 0; i < nb; i++)
        shape[i] = batch[i];
    shape[nb] = m;
    shape[nb + 1] = n;
    CHECK(has_shape(c, nb + 2, shape), "batched shape (%d-d)", c ? gk_array_ndim(c) : -1);
    if (c)
        CHECK_VALUES(c, expected, total * m * n, tolerance_of(dtype));
    gk_array_free(a);
    gk_array_free(b);
    gk_array_free(c);
    free(va);
    free(vb);
    free(expected);
}

static void test_matmul_batched(gk_device device)
{
    for (int t = 0; t < 2; t++) {
        gk_dtype dtype = t ? GK_FLOAT64 : GK_FLOAT32;
        /* Same batch; b broadcast (missing axes, length 1); a broadcast. */
        check_batched(device, dtype, 3, (int64_t[]){4, 2, 3}, 3, (int64_t[]){4, 3, 5});
        check_batched(device, dtype, 3, (int64_t[]){4, 2, 3}, 2, (int64_t[]){3, 5});
        check_batched(device, dtype, 3, (int64_t[]){4, 2, 3}, 3, (int64_t[]){1, 3, 5});
        check_batched(device, dtype, 2, (int64_t[]){2, 3}, 3, (int64_t[]){4, 3, 5});
        /* Both broadcast along different axes: an outer loop in the core. */
        check_batched(device, dtype, 4, (int64_t[]){2, 1, 3, 4}, 4, (int64_t[]){1, 5, 4, 2});
        check_batched(device, dtype, 4, (int64_t[]){2, 1, 3, 4}, 3, (int64_t[]){3, 4, 2});
        check_batched(device, dtype, 5, (int64_t[]){2, 3, 1, 2, 2}, 4,
                      (int64_t[]){3, 4, 2, 3});
    }
}

static void test_matmul_vectors(gk_device device)
{
    double *va, *vb, *vm;
    gk_array *v4 = filled(device, GK_FLOAT64, 1, (int64_t[]){4}, 1, &va);
    gk_array *w4 = filled(device, GK_FLOAT64, 1, (int64_t[]){4}, 2, &vb);
    gk_array *m45 = filled(device, GK_FLOAT64, 2, (int64_t[]){4, 5}, 3, &vm);
    gk_array *c = NULL;

    /* (4,) @ (4,) -> 0-d */
    CHECK_OK(gk_matmul(v4, w4, &c));
    double dot = 0;
    for (int i = 0; i < 4; i++)
        dot += va[i] * vb[i];
    CHECK(c && gk_array_ndim(c) == 0, "vector @ vector is 0-d");
    if (c)
        CHECK_VALUES(c, &dot, 1, 1e-12);
    gk_array_free(c);
    CHECK_OK(gk_dot(v4, w4, &c));
    CHECK(c && gk_array_ndim(c) == 0, "dot of vectors is 0-d");
    if (c)
        CHECK_VALUES(c, &dot, 1, 1e-12);
    gk_array_free(c);

    /* (4,) @ (4, 5) -> (5,) */
    double row[5];
    naive_matmul(va, vm, row, 1, 4, 5);
    CHECK_OK(gk_matmul(v4, m45, &c));
    CHECK_SHAPE(c, 1, 5);
    if (c)
        CHECK_VALUES(c, row, 5, 1e-12);
    gk_array_free(c);

    /* (5, 4) @ (4,) -> (5,) with the (5, 4) a transposed view */
    gk_array *m54 = NULL;
    CHECK_OK(gk_transpose(m45, NULL, &m54));
    double column[5];
    for (int i = 0; i < 5; i++) {
        column[i] = 0;
        for (int p = 0; p < 4; p++)
            column[i] += vm[p * 5 + i] * va[p];
    }
    CHECK_OK(gk_matmul(m54, v4, &c));
    CHECK_SHAPE(c, 1, 5);
    if (c)
        CHECK_VALUES(c, column, 5, 1e-12);
    gk_array_free(c);

    /* (4,) @ (2, 4, 3) -> (2, 3) */
    double *vs;
    gk_array *matrices = filled(device, GK_FLOAT64, 3, (int64_t[]){2, 4, 3}, 4, &vs);
    double expected[6];
    naive_matmul(va, vs, expected, 1, 4, 3);
    naive_matmul(va, vs + 12, expected + 3, 1, 4, 3);
    CHECK_OK(gk_matmul(v4, matrices, &c));
    CHECK_SHAPE(c, 2, 2, 3);
    if (c)
        CHECK_VALUES(c, expected, 6, 1e-12);
    gk_array_free(c);

    gk_array_free(v4);
    gk_array_free(w4);
    gk_array_free(m45);
    gk_array_free(m54);
    gk_array_free(matrices);
    free(va);
    free(vb);
    free(vm);
    free(vs);
}

static void test_matmul_strided(gk_device device)
{
    for (int t = 0; t < 2; t++) {
        gk_dtype dtype = t ? GK_FLOAT64 : GK_FLOAT32;
        /* a: the transpose of a (6, 4); b: every other row of a (10, 3),
         * reversed along its columns. */
        double *vat, *vbb;
        gk_array *at = filled(device, dtype, 2, (int64_t[]){6, 4}, 7, &vat);
        gk_array *bb = filled(device, dtype, 2, (int64_t[]){12, 3}, 8, &vbb);
        gk_array *a = NULL, *rows = NULL, *b = NULL, *c = NULL;
        CHECK_OK(gk_transpose(at, NULL, &a));
        CHECK_OK(gk_slice(bb, 0, 0, 12, 2, &rows));
        CHECK_OK(gk_slice(rows, 1, -1, -4, -1, &b));
        CHECK(a && b && !gk_array_is_contiguous(a) && !gk_array_is_contiguous(b),
              "strided operands");
        double va[24], vb[18], expected[12];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 6; j++)
                va[i * 6 + j] = vat[j * 4 + i];
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 3; j++)
                vb[i * 3 + j] = vbb[(2 * i) * 3 + (2 - j)];
        naive_matmul(va, vb, expected, 4, 6, 3);
        CHECK_OK(gk_matmul(a, b, &c));
        CHECK_SHAPE(c, 2, 4, 3);
        if (c)
            CHECK_VALUES(c, expected, 12, tolerance_of(dtype));
        /* The operands are untouched. */
        CHECK_VALUES(at, vat, 24, 0);
        gk_array_free(c);
        /* A broadcast (stride 0) operand. */
        gk_array *row = NULL, *wide = NULL;
        CHECK_OK(gk_slice(at, 0, 0, 1, 1, &row));
        CHECK_OK(gk_broadcast_to(row, 2, (int64_t[]){3, 4}, &wide));
        gk_array *square = filled(device, dtype, 2, (int64_t[]){4, 2}, 9, NULL);
        double vw[12], vsq[8], expected2[6];
        for (int i = 0; i < 12; i++)
            vw[i] = vat[i % 4];
        for (int i = 0; i < 8; i++)
            vsq[i] = fill_value(i, 9);
        naive_matmul(vw, vsq, expected2, 3, 4, 2);
        CHECK_OK(gk_matmul(wide, square, &c));
        if (c)
            CHECK_VALUES(c, expected2, 6, tolerance_of(dtype));
        gk_array_free(c);
        gk_array_free(row);
        gk_array_free(wide);
        gk_array_free(square);
        gk_array_free(at);
        gk_array_free(bb);
        gk_array_free(a);
        gk_array_free(rows);
        gk_array_free(b);
        free(vat);
        free(vbb);
    }
}

static void test_matmul_empty_and_dtypes(gk_device device)
{
    gk_array *a = NULL, *b = NULL, *c = NULL;
    /* k = 0: sums of nothing are zeros. */
    CHECK_OK(gk_empty(device, GK_FLOAT32, 2, (int64_t[]){3, 0}, &a));
    CHECK_OK(gk_empty(device, GK_FLOAT32, 2, (int64_t[]){0, 2}, &b));
    CHECK_OK(gk_matmul(a, b, &c));
    CHECK_SHAPE(c, 2, 3, 2);
    double zeros[6] = {0};
    if (c)
        CHECK_VALUES(c, zeros, 6, 0);
    gk_array_free(a);
    gk_array_free(b);
    gk_array_free(c);
    /* m = 0 and an empty batch: empty results. */
    CHECK_OK(gk_empty(device, GK_FLOAT64, 2, (int64_t[]){0, 4}, &a));
    b = filled(device, GK_FLOAT64, 2, (int64_t[]){4, 2}, 1, NULL);
    CHECK_OK(gk_matmul(a, b, &c));
    CHECK_SHAPE(c, 2, 0, 2);
    gk_array_free(a);
    gk_array_free(c);
    CHECK_OK(gk_empty(device, GK_FLOAT64, 3, (int64_t[]){0, 3, 4}, &a));
    CHECK_OK(gk_matmul(a, b, &c));
    CHECK_SHAPE(c, 3, 0, 3, 2);
    gk_array_free(a);
    gk_array_free(b);
    gk_array_free(c);

    /* Mixed dtypes promote as everywhere (gk_promote_types); integers and
     * bool keep the promoted dtype (its own arithmetic). */
    double va[6] = {1, 2, 3, 4, 5, 6}, vb[6] = {7, 8, 9, 10, 11, 12};
    double expected[4];
    naive_matmul(va, vb, expected, 2, 3, 2);
    const struct {
        gk_dtype a, b, result;
    } cases[] = {
        {GK_FLOAT32, GK_FLOAT64, GK_FLOAT64}, {GK_FLOAT64, GK_FLOAT32, GK_FLOAT64},
        {GK_INT32, GK_INT32, GK_INT32},       {GK_INT64, GK_FLOAT32, GK_FLOAT64},
        {GK_INT16, GK_FLOAT32, GK_FLOAT32},   {GK_UINT8, GK_BOOL, GK_UINT8},
        {GK_INT64, GK_UINT32, GK_INT64},      {GK_INT8, GK_UINT8, GK_INT16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double vbool[6] = {1, 0, 1, 1, 0, 1};
        bool boolean = cases[i].b == GK_BOOL;
        a = make(device, cases[i].a, 2, (int64_t[]){2, 3}, va);
        b = make(device, cases[i].b, 2, (int64_t[]){3, 2}, boolean ? vbool : vb);
        double want[4];
        naive_matmul(va, boolean ? vbool : vb, want, 2, 3, 2);
        CHECK_OK(gk_matmul(a, b, &c));
        CHECK(c && gk_array_dtype(c) == cases[i].result, "case %zu: %s", i,
              c ? gk_dtype_name(gk_array_dtype(c)) : "none");
        if (c)
            CHECK_VALUES(c, want, 4, 0);
        gk_array_free(a);
        gk_array_free(b);
        gk_array_free(c);
    }
}

static void test_matmul_errors(gk_device device)
{
    gk_array *a = filled(device, GK_FLOAT32, 2, (int64_t[]){2, 3}, 1, NULL);
    gk_array *b = filled(device, GK_FLOAT32, 2, (int64_t[]){4, 5}, 2, NULL);
    gk_array *c = (gk_array *)&c;
    CHECK_FAILS(gk_matmul(a, b, &c), GK_ERR_INVALID_ARGUMENT,
                "matmul: (2, 3) @ (4, 5): inner dimensions 3 and 4 differ");
    CHECK(c == NULL, "no output on failure");
    gk_array *v = filled(device, GK_FLOAT32, 1, (int64_t[]){4}, 1, NULL);
    CHECK_FAILS(gk_matmul(a, v, &c), GK_ERR_INVALID_ARGUMENT,
                "(2, 3) @ (4,): inner dimensions 3 and 4 differ");
    gk_array *s = NULL;
    CHECK_OK(gk_scalar(device, GK_FLOAT32, 2, &s));
    CHECK_FAILS(gk_matmul(s, a, &c), GK_ERR_INVALID_ARGUMENT, "0-d");
    CHECK_FAILS(gk_dot(a, s, &c), GK_ERR_INVALID_ARGUMENT, "0-d");
    gk_array *x = filled(device, GK_FLOAT32, 3, (int64_t[]){2, 2, 3}, 1, NULL);
    gk_array *y = filled(device, GK_FLOAT32, 3, (int64_t[]){3, 3, 2}, 1, NULL);
    CHECK_FAILS(gk_matmul(x, y, &c), GK_ERR_INVALID_ARGUMENT,
                "batch shapes (2,) and (3,) do not broadcast");
    CHECK_FAILS(gk_dot(a, b, &c), GK_ERR_INVALID_ARGUMENT, "dot: (2, 3) . (4, 5)");
    /* Operands on two devices. */
    if (device.kind != GK_DEVICE_CPU) {
        gk_array *host = filled(gk_device_cpu(), GK_FLOAT32, 2, (int64_t[]){3, 2}, 1, NULL);
        CHECK_FAILS(gk_matmul(a, host, &c), GK_ERR_INVALID_ARGUMENT, "different devices");
        gk_array_free(host);
    }
    gk_array_free(a);
    gk_array_free(b);
    gk_array_free(v);
    gk_array_free(s);
    gk_array_free(x);
    gk_array_free(y);
}

static void test_dot(gk_device device)
{
    /* N-d: a (2, 3, 4) . b (5, 4, 2) sums over a's last axis and b's
     * second-to-last: (2, 3, 5, 2). */
    double *va, *vb;
    gk_array *a = filled(device, GK_FLOAT64, 3, (int64_t[]){2, 3, 4}, 1, &va);
    gk_array *b = filled(device, GK_FLOAT64, 3, (int64_t[]){5, 4, 2}, 2, &vb);
    double expected[60];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 5; j++)
            for (int l = 0; l < 2; l++) {
                double sum = 0;
                for (int p = 0; p < 4; p++)
                    sum += va[i * 4 + p] * vb[j * 8 + p * 2 + l];
                expected[(i * 5 + j) * 2 + l] = sum;
            }
    gk_array *c = NULL;
    CHECK_OK(gk_dot(a, b, &c));
    CHECK_SHAPE(c, 4, 2, 3, 5, 2);
    if (c)
        CHECK_VALUES(c, expected, 60, 1e-12);
    gk_array_free(c);
    /* N-d . 1-d: over the last axis. */
    gk_array *v = filled(device, GK_FLOAT64, 1, (int64_t[]){4}, 3, NULL);
    double vv[4], expected2[6];
    for (int i = 0; i < 4; i++)
        vv[i] = fill_value(i, 3);
    naive_matmul(va, vv, expected2, 6, 4, 1);
    CHECK_OK(gk_dot(a, v, &c));
    CHECK_SHAPE(c, 2, 2, 3);
    if (c)
        CHECK_VALUES(c, expected2, 6, 1e-12);
    gk_array_free(c);
    CHECK_FAILS(gk_dot(v, a, &c), GK_ERR_INVALID_ARGUMENT, "shapes not aligned");
    gk_array_free(a);
    gk_array_free(b);
    gk_array_free(v);
    free(va);
    free(vb);
}

/* --- factorizations --- */

static double *values_of(const gk_array *a)
{
    double *v = a ? test_values(a) : NULL;
    CHECK(v != NULL, "read back: %s", gk_last_error());
    return v;
}

/* A well-conditioned m x n test matrix (diagonally heavy). */
static double *test_matrix(int64_t m, int64_t n, int salt)
{
    double *v = malloc(sizeof *v * (size_t)(m * n + 1));
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            v[i * n + j] = fill_value(i * n + j, salt) + (i == j ? 4.0 : 0.0);
    return v;
}

static void check_svd(gk_device device, gk_dtype dtype, int64_t m, int64_t n)
{
    double *va = test_matrix(m, n, 3);
    gk_array *a = make(device, dtype, 2, (int64_t[]){m, n}, va);
    gk_array *u = NULL, *s = NULL, *vt = NULL;
    int64_t k = m < n ? m : n;
    CHECK_OK(gk_svd(a, false, &u, &s, &vt));
    CHECK_SHAPE(u, 2, m, k);
    CHECK_SHAPE(s, 1, k);
    CHECK_SHAPE(vt, 2, k, n);
    CHECK(u && gk_array_dtype(u) == dtype && gk_device_equal(gk_array_device(u), device),
          "u's dtype and device");
    if (u && s && vt) {
        double *hu = values_of(u), *hs = values_of(s), *hv = values_of(vt);
        double tolerance = dtype == GK_FLOAT32 ? 1e-4 : 1e-10;
        for (int64_t i = 0; hs && i < k; i++) {
            CHECK(hs[i] >= 0, "s[%lld] = %g", (long long)i, hs[i]);
            CHECK(i == 0 || hs[i] <= hs[i - 1], "s is sorted descending");
        }
        /* u @ diag(s) @ vt == a */
        double *us = malloc(sizeof *us * (size_t)(m * k + 1));
        double *back = malloc(sizeof *back * (size_t)(m * n + 1));
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < k; j++)
                us[i * k + j] = hu[i * k + j] * hs[j];
        naive_matmul(us, hv, back, m, k, n);
        CHECK_VALUES(a, back, m * n, tolerance);
        /* u's columns and vt's rows are orthonormal. */
        for (int64_t p = 0; p < k; p++)
            for (int64_t q = 0; q < k; q++) {
                double du = 0, dv = 0;
                for (int64_t i = 0; i < m; i++)
                    du += hu[i * k + p] * hu[i * k + q];
                for (int64_t j = 0; j < n; j++)
                    dv += hv[p * n + j] * hv[q * n + j];
                CHECK(fabs(du - (p == q)) < tolerance && fabs(dv - (p == q)) < tolerance,
                      "orthonormal %lld %lld: %g %g", (long long)p, (long long)q, du, dv);
            }
        free(us);
        free(back);
        free(hu);
        free(hs);
        free(hv);
    }
    gk_array_free(a);
    gk_array_free(u);
    gk_array_free(s);
    gk_array_free(vt);
    free(va);
}

static void test_svd(gk_device device)
{
    for (int t = 0; t < 2; t++) {
        gk_dtype dtype = t ? GK_FLOAT64 : GK_FLOAT32;
        check_svd(device, dtype, 4, 3);
        check_svd(device, dtype, 3, 5);
        check_svd(device, dtype, 6, 6);
    }
    /* Integers factor in float64; the known singular values of diag. */
    double vd[6] = {0, 3, -2, 0, 0, 0};
    gk_array *a = make(device, GK_INT32, 2, (int64_t[]){3, 2}, vd);
    gk_array *u = NULL, *s = NULL, *vt = NULL;
    CHECK_OK(gk_svd(a, false, &u, &s, &vt));
    CHECK(s && gk_array_dtype(s) == GK_FLOAT64, "svd of integers is float64");
    if (s)
        CHECK_VALUES(s, ((double[]){3, 2}), 2, 1e-12);
    gk_array_free(a);
    gk_array_free(u);
    gk_array_free(s);
    gk_array_free(vt);
    /* Empty: k = 0. */
    CHECK_OK(gk_empty(device, GK_FLOAT64, 2, (int64_t[]){0, 3}, &a));
    CHECK_OK(gk_svd(a, false, &u, &s, &vt));
    CHECK_SHAPE(u, 2, 0, 0);
    CHECK_SHAPE(s, 1, 0);
    CHECK_SHAPE(vt, 2, 0, 3);
    gk_array_free(a);
    gk_array_free(u);
    gk_array_free(s);
    gk_array_free(vt);
    /* Strided input: the transpose of a matrix. */
    double *va = test_matrix(3, 4, 5);
    gk_array *base = make(device, GK_FLOAT64, 2, (int64_t[]){3, 4}, va);
    CHECK_OK(gk_transpose(base, NULL, &a));
    CHECK_OK(gk_svd(a, false, &u, &s, &vt));
    CHECK_SHAPE(u, 2, 4, 3);
    gk_array *s2 = NULL, *u2 = NULL, *vt2 = NULL;
    CHECK_OK(gk_svd(base, false, &u2, &s2, &vt2));
    double *hs2 = s2 ? values_of(s2) : NULL;
    if (s && hs2)
        CHECK_VALUES(s, hs2, 3, 1e-12); /* a and its transpose: the same s */
    free(hs2);
    free(va);
    gk_array_free(base);
    gk_array_free(a);
    gk_array_free(u);
    gk_array_free(s);
    gk_array_free(vt);
    gk_array_free(u2);
    gk_array_free(s2);
    gk_array_free(vt2);
}

static void check_qr(gk_device device, gk_dtype dtype, int64_t m, int64_t n)
{
    double *va = test_matrix(m, n, 4);
    gk_array *a = make(device, dtype, 2, (int64_t[]){m, n}, va);
    gk_array *q = NULL, *r = NULL;
    int64_t k = m < n ? m : n;
    CHECK_OK(gk_qr(a, false, &q, &r));
    CHECK_SHAPE(q, 2, m, k);
    CHECK_SHAPE(r, 2, k, n);
    if (q && r) {
        double tolerance = dtype == GK_FLOAT32 ? 1e-4 : 1e-10;
        double *hq = values_of(q), *hr = values_of(r);
        double *back = malloc(sizeof *back * (size_t)(m * n));
        naive_matmul(hq, hr, back, m, k, n);
        CHECK_VALUES(a, back, m * n, tolerance);
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < i && j < n; j++)
                CHECK(hr[i * n + j] == 0, "r[%lld][%lld] = %g below the diagonal",
                      (long long)i, (long long)j, hr[i * n + j]);
        for (int64_t p = 0; p < k; p++)
            for (int64_t s = 0; s < k; s++) {
                double d = 0;
                for (int64_t i = 0; i < m; i++)
                    d += hq[i * k + p] * hq[i * k + s];
                CHECK(fabs(d - (p == s)) < tolerance, "q orthonormal: %g", d);
            }
        free(hq);
        free(hr);
        free(back);
    }
    gk_array_free(a);
    gk_array_free(q);
    gk_array_free(r);
    free(va);
}

static void test_qr(gk_device device)
{
    for (int t = 0; t < 2; t++) {
        gk_dtype dtype = t ? GK_FLOAT64 : GK_FLOAT32;
        check_qr(device, dtype, 5, 3);
        check_qr(device, dtype, 3, 5);
        check_qr(device, dtype, 4, 4);
    }
    gk_array *a = NULL, *q = NULL, *r = NULL;
    CHECK_OK(gk_empty(device, GK_FLOAT32, 2, (int64_t[]){3, 0}, &a));
    CHECK_OK(gk_qr(a, false, &q, &r));
    CHECK_SHAPE(q, 2, 3, 0);
    CHECK_SHAPE(r, 2, 0, 0);
    gk_array_free(a);
    gk_array_free(q);
    gk_array_free(r);
}

static void test_solve_inv(gk_device device)
{
    for (int t = 0; t < 2; t++) {
        gk_dtype dtype = t ? GK_FLOAT64 : GK_FLOAT32;
        double tolerance = t ? 1e-10 : 1e-4;
        int64_t n = 5;
        double *va = test_matrix(n, n, 6);
        gk_array *a = make(device, dtype, 2, (int64_t[]){n, n}, va);
        /* b a vector, then a matrix of 2 columns. */
        for (int columns = 0; columns <= 2; columns += 2) {
            int nd = columns ? 2 : 1;
            double vb[10];
            for (int i = 0; i < 10; i++)
                vb[i] = fill_value(i, 7);
            gk_array *b = make(device, dtype, nd, (int64_t[]){n, columns}, vb);
            gk_array *x = NULL;
            CHECK_OK(gk_solve(a, b, &x));
            CHECK(x && gk_array_ndim(x) == nd && gk_array_shape(x)[0] == n, "x's shape");
            if (x) {
                double *hx = values_of(x), ax[10];
                naive_matmul(va, hx, ax, n, n, columns ? columns : 1);
                CHECK_VALUES(b, ax, n * (columns ? columns : 1), tolerance);
                free(hx);
            }
            gk_array_free(b);
            gk_array_free(x);
        }
        gk_array *inverse = NULL;
        CHECK_OK(gk_inv(a, &inverse));
        CHECK_SHAPE(inverse, 2, n, n);
        if (inverse) {
            double *hi = values_of(inverse), product[25], identity[25];
            naive_matmul(va, hi, product, n, n, n);
            for (int i = 0; i < 25; i++)
                identity[i] = i % 6 == 0;
            gk_array *p = make(device, GK_FLOAT64, 2, (int64_t[]){n, n}, product);
            CHECK_VALUES(p, identity, 25, tolerance);
            gk_array_free(p);
            free(hi);
        }
        gk_array_free(inverse);
        gk_array_free(a);
        free(va);
    }
    /* Integers: float64 results. */
    gk_array *a = make(device, GK_INT64, 2, (int64_t[]){2, 2}, (double[]){2, 0, 0, 4});
    gk_array *x = NULL, *b = make(device, GK_INT32, 1, (int64_t[]){2}, (double[]){2, 2});
    CHECK_OK(gk_solve(a, b, &x));
    CHECK(x && gk_array_dtype(x) == GK_FLOAT64, "float64");
    if (x)
        CHECK_VALUES(x, ((double[]){1, 0.5}), 2, 1e-15);
    gk_array_free(x);
    CHECK_OK(gk_inv(a, &x));
    if (x)
        CHECK_VALUES(x, ((double[]){0.5, 0, 0, 0.25}), 4, 1e-15);
    gk_array_free(x);
    gk_array_free(a);
    gk_array_free(b);
    /* 0 x 0 */
    CHECK_OK(gk_empty(device, GK_FLOAT64, 2, (int64_t[]){0, 0}, &a));
    CHECK_OK(gk_inv(a, &x));
    CHECK_SHAPE(x, 2, 0, 0);
    gk_array_free(a);
    gk_array_free(x);
}

static void test_factorization_errors(gk_device device)
{
    gk_array *singular = make(device, GK_FLOAT64, 2, (int64_t[]){3, 3},
                              (double[]){1, 2, 4, 2, 4, 8, 1, 0, 1});
    gk_array *b = make(device, GK_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    gk_array *out = NULL, *q = NULL, *r = NULL, *u = NULL, *s = NULL, *vt = NULL;
    CHECK_FAILS(gk_solve(singular, b, &out), GK_ERR_LINALG, "solve: the matrix is singular");
    CHECK(out == NULL, "no output");
    CHECK_FAILS(gk_inv(singular, &out), GK_ERR_LINALG, "inv: the matrix is singular");
    gk_array *zero = NULL;
    CHECK_OK(gk_zeros(device, GK_FLOAT32, 2, (int64_t[]){2, 2}, &zero));
    CHECK_FAILS(gk_inv(zero, &out), GK_ERR_LINALG, "singular");

    gk_array *wide = filled(device, GK_FLOAT64, 2, (int64_t[]){2, 3}, 1, NULL);
    CHECK_FAILS(gk_inv(wide, &out), GK_ERR_INVALID_ARGUMENT,
                "inv: takes square matrices, not shape (2, 3)");
    CHECK_FAILS(gk_solve(wide, b, &out), GK_ERR_INVALID_ARGUMENT, "square");
    gk_array *b4 = filled(device, GK_FLOAT64, 1, (int64_t[]){4}, 1, NULL);
    gk_array *square = make(device, GK_FLOAT64, 2, (int64_t[]){3, 3},
                            (double[]){2, 0, 0, 0, 2, 0, 0, 0, 2});
    CHECK_FAILS(gk_solve(square, b4, &out), GK_ERR_INVALID_ARGUMENT, "a (3, 3) and b (4,)");
    /* A stack whose second matrix is singular: the message names it. */
    gk_array *matrices = NULL;
    const gk_array *pieces[2] = {square, singular};
    CHECK_OK(gk_stack(2, pieces, 0, &matrices));
    CHECK_FAILS(gk_inv(matrices, &out), GK_ERR_LINALG, "singular (matrix [1] of the stack)");
    CHECK_FAILS(gk_svd(b, false, &u, &s, &vt), GK_ERR_INVALID_ARGUMENT,
                "svd: takes a matrix or a stack of matrices (at least 2 axes), not shape (3,)");
    CHECK(u == NULL && s == NULL && vt == NULL, "no outputs");
    CHECK_FAILS(gk_qr(b, false, &q, &r), GK_ERR_INVALID_ARGUMENT, "at least 2 axes");
    gk_array *bad = make(device, GK_FLOAT32, 2, (int64_t[]){2, 2}, (double[]){1, NAN, 0, 1});
    CHECK_FAILS(gk_svd(bad, false, &u, &s, &vt), GK_ERR_LINALG, "NaN or infinity");
    CHECK_FAILS(gk_eig(bad, &out, NULL), GK_ERR_LINALG, "NaN or infinity");
    gk_array *half = filled(device, GK_FLOAT16, 2, (int64_t[]){2, 2}, 1, NULL);
    CHECK_FAILS(gk_det(half, &out), GK_ERR_UNSUPPORTED_DTYPE, "astype(float32)");
    gk_array_free(half);
    gk_array_free(singular);
    gk_array_free(b);
    gk_array_free(zero);
    gk_array_free(wide);
    gk_array_free(b4);
    gk_array_free(square);
    gk_array_free(matrices);
    gk_array_free(bad);
}

/* det and slogdet from LU factors in array ops, as a GPU computes them
 * after its solver's getrf (factor_gpu.c), on every device: only U's
 * diagonal, the pivots and the NaN flags count, so the factors are made
 * up here. Row by row: plain; an odd swap count with a negative pivot;
 * exactly singular; holding NaN; a det beyond the dtype's range; one
 * that underflows on the way but is in range. */
static void check_determinants(gk_device device, gk_dtype dtype)
{
    bool single = dtype == GK_FLOAT32;
    double big = single ? 1e30 : 1e200, tiny = 1 / big;
    enum { COUNT = 7, N = 3 };
    const double diagonals[COUNT][N] = {
        {2, 3, 4},   {2, -3, 4}, {1, 0, 5}, {1, 2, 3}, {big, big, -1}, {tiny, tiny, big},
        {0, INFINITY, 1},
    };
    const int32_t pivots[COUNT][N] = {
        {1, 2, 3}, {2, 2, 3}, {1, 2, 3}, {3, 3, 3}, {3, 2, 3}, {1, 3, 3}, {2, 2, 3},
    };
    const bool nan_flags[COUNT] = {false, false, false, true, false, false, false};
    double factors[COUNT * N * N];
    for (int i = 0; i < COUNT * N * N; i++)
        factors[i] = 0.5; /* off the diagonal: ignored */
    for (int m = 0; m < COUNT; m++)
        for (int j = 0; j < N; j++)
            factors[(m * N + j) * N + j] = diagonals[m][j];
    int64_t lu_shape[3] = {COUNT, N, N}, pivot_shape[2] = {COUNT, N}, flag_shape = COUNT;
    gk_array *lu = make(device, dtype, 3, lu_shape, factors), *rows = NULL, *flags = NULL;
    CHECK_OK(gk_from_host(device, GK_INT32, 2, pivot_shape, pivots, &rows));
    CHECK_OK(gk_from_host(device, GK_BOOL, 1, &flag_shape, nan_flags, &flags));
    gk_array *sign = NULL, *logabs = NULL, *det = NULL;
    CHECK_OK(factor_determinants_from_lu(lu, rows, flags, &sign, &logabs, &det));
    double *s = values_of(sign), *l = values_of(logabs), *d = values_of(det);
    double tolerance = single ? 1e-5 : 1e-12;
    /* the last: singular beside an infinite pivot (as getrf can leave
     * after a zero one), whose log would be -inf + inf, and an odd swap */
    double want_sign[COUNT] = {1, 1, 0, NAN, 1, -1, 0};
    double want_log[COUNT] = {log(24), log(24), -INFINITY, NAN, 2 * log(big),
                              single ? log(1e-30) : log(1e-200), -INFINITY};
    double want_det[COUNT] = {24, 24, 0, NAN, INFINITY, single ? -1e-30 : -1e-200, 0};
    for (int m = 0; m < COUNT; m++) {
        CHECK(isnan(want_sign[m]) ? isnan(s[m])
                                  : s[m] == want_sign[m] && (s[m] != 0 || !signbit(s[m])),
              "matrix %d sign %g", m, s[m]);
        CHECK(isnan(want_log[m]) ? isnan(l[m])
              : isinf(want_log[m])  ? l[m] == want_log[m]
                                    : fabs(l[m] - want_log[m]) <= tolerance * fabs(want_log[m]),
              "matrix %d log|det| %g, not %g", m, l[m], want_log[m]);
        CHECK(isnan(want_det[m]) ? isnan(d[m])
              : isinf(want_det[m]) || want_det[m] == 0
                  ? d[m] == want_det[m]
                  : fabs(d[m] - want_det[m]) <= 1e3 * tolerance * fabs(want_det[m]),
              "matrix %d det %g, not %g", m, d[m], want_det[m]);
    }
    /* only what is asked for; and a stack of 0 x 0 matrices: det 1 */
    gk_array *alone = NULL;
    CHECK_OK(factor_determinants_from_lu(lu, rows, flags, NULL, NULL, &alone));
    CHECK(alone && gk_array_ndim(alone) == 1 && gk_array_shape(alone)[0] == COUNT,
          "det alone has the stack's shape");
    int64_t empty_shape[3] = {2, 0, 0}, empty_pivots[2] = {2, 0}, two = 2;
    bool no_nan[2] = {false, false};
    gk_array *empty = NULL, *no_rows = NULL, *clean = NULL, *ones = NULL;
    CHECK_OK(gk_empty(device, dtype, 3, empty_shape, &empty));
    CHECK_OK(gk_empty(device, GK_INT32, 2, empty_pivots, &no_rows));
    CHECK_OK(gk_from_host(device, GK_BOOL, 1, &two, no_nan, &clean));
    CHECK_OK(factor_determinants_from_lu(empty, no_rows, clean, NULL, NULL, &ones));
    double *one = values_of(ones);
    CHECK(one[0] == 1 && one[1] == 1, "0 x 0 det %g %g", one[0], one[1]);
    free(s), free(l), free(d), free(one);
    gk_array *all[] = {lu, rows, flags, sign, logabs, det, alone, empty, no_rows, clean, ones};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_array_free(all[i]);
}

/* The complex sign is d/|d| multiplied out; NaN flags give NaN+NaNj; an
 * infinite d gives NaN+NaNj too, as NumPy's inf/inf does (the complex sign
 * function would give 1). */
static void check_complex_determinants(gk_device device)
{
    /* one 2 x 2 matrix of U's diagonal {1j, 1+1j}, one swap; a NaN one;
     * one of diagonal {inf, 1} */
    const double factors[3 * 4 * 2] = {0, 1, 9, 9, 9, 9, 1, 1, /* second: */ 1, 0, 0, 0, 0, 0, 1, 0,
                                       /* third: */ INFINITY, 0, 0, 0, 0, 0, 1, 0};
    const int32_t pivots[6] = {2, 2, 1, 2, 1, 2};
    const bool nan_flags[3] = {false, true, false};
    int64_t lu_shape[3] = {3, 2, 2}, pivot_shape[2] = {3, 2}, three = 3;
    gk_array *lu = NULL, *rows = NULL, *flags = NULL, *sign = NULL, *logabs = NULL, *det = NULL;
    CHECK_OK(gk_from_host(device, GK_COMPLEX128, 3, lu_shape, factors, &lu));
    CHECK_OK(gk_from_host(device, GK_INT32, 2, pivot_shape, pivots, &rows));
    CHECK_OK(gk_from_host(device, GK_BOOL, 1, &three, nan_flags, &flags));
    CHECK_OK(factor_determinants_from_lu(lu, rows, flags, &sign, &logabs, &det));
    double s[6], l[3], d[6];
    CHECK_OK(gk_to_host(sign, s, sizeof s));
    CHECK_OK(gk_to_host(logabs, l, sizeof l));
    CHECK_OK(gk_to_host(det, d, sizeof d));
    /* -(1j * (1+1j)/sqrt 2) = (1 - 1j)/sqrt 2; det = -(1j * (1+1j)) = 1 - 1j */
    double r = sqrt(0.5);
    CHECK(fabs(s[0] - r) < 1e-15 && fabs(s[1] + r) < 1e-15, "sign %g%+gj", s[0], s[1]);
    CHECK(fabs(l[0] - log(sqrt(2))) < 1e-15, "log|det| %g", l[0]);
    CHECK(fabs(d[0] - 1) < 1e-14 && fabs(d[1] + 1) < 1e-14, "det %g%+gj", d[0], d[1]);
    CHECK(isnan(s[2]) && isnan(s[3]) && isnan(l[1]) && isnan(d[2]) && isnan(d[3]),
          "a NaN matrix: sign %g%+gj, log %g, det %g%+gj", s[2], s[3], l[1], d[2], d[3]);
    CHECK(isnan(s[4]) && isnan(s[5]) && l[2] == INFINITY && isnan(d[4]) && isnan(d[5]),
          "an infinite pivot: sign %g%+gj, log %g, det %g%+gj", s[4], s[5], l[2], d[4], d[5]);
    gk_array *all[] = {lu, rows, flags, sign, logabs, det};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_array_free(all[i]);
}

static void test_determinants_from_lu(gk_device device)
{
    gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64, GK_COMPLEX128};
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
        bool has = false;
        CHECK_OK(gk_device_has_dtype(device, dtypes[i], &has));
        if (has && dtypes[i] == GK_COMPLEX128)
            check_complex_determinants(device);
        else if (has)
            check_determinants(device, dtypes[i]);
    }
}

/* --- random numbers --- */

/* The raw bytes of a (malloc'd). */
static void *raw_of(const gk_array *a)
{
    size_t n = gk_array_nbytes(a);
    void *raw = malloc(n ? n : 1);
    CHECK_OK(gk_to_host(a, raw, n));
    return raw;
}

static void test_random_pinned(gk_device device)
{
    /* Seed 42's first values: any backend must give these exact bits
     * (backends/cpu/random.c documents the mapping). */
    const float uniform32[6] = {
        0x1.39d5ep-1f, 0x1.dfd524p-2f, 0x1.2bf5p-4f, 0x1.5d0accp-2f, 0x1.f9b642p-1f,
        0x1.4ee9bp-2f};
    const double uniform64[4] = {
        0x1.39d5e09dfd524p-1, 0x1.2bf50aae85678p-4, 0x1.f9b64254ee9b3p-1, 0x1.071eb4dd1381bp-1};
    const float normal32[6] = {
        -0x1.f0bcb8p-1f, 0x1.8d59dp-3f, -0x1.3c51a4p+0f, 0x1.ec8676p+0f, -0x1.2bc06p-4f,
        0x1.1cf41ep-3f};
    const double normal64[4] = {
        0x1.c5e30062517f2p-1, 0x1.c1e68e8d077c8p-2, -0x1.40bc8b2401bd4p-3,
        -0x1.c1889d9e86a0fp-7};
    gk_array *a = NULL;
    CHECK_OK(gk_random_uniform(device, GK_FLOAT32, 1, (int64_t[]){6}, 42, 0, 1, &a));
    float *f = a ? raw_of(a) : NULL;
    for (int i = 0; f && i < 6; i++)
        CHECK(f[i] == uniform32[i], "uniform float32 [%d]: %a, expected %a", i, f[i],
              uniform32[i]);
    free(f);
    gk_array_free(a);
    CHECK_OK(gk_random_uniform(device, GK_FLOAT64, 1, (int64_t[]){4}, 42, 0, 1, &a));
    double *d = a ? raw_of(a) : NULL;
    for (int i = 0; d && i < 4; i++)
        CHECK(d[i] == uniform64[i], "uniform float64 [%d]: %a, expected %a", i, d[i],
              uniform64[i]);
    free(d);
    gk_array_free(a);
    CHECK_OK(gk_random_normal(device, GK_FLOAT32, 1, (int64_t[]){6}, 42, 0, 1, &a));
    f = a ? raw_of(a) : NULL;
    for (int i = 0; f && i < 6; i++)
        CHECK(f[i] == normal32[i], "normal float32 [%d]: %a, expected %a", i, f[i],
              normal32[i]);
    free(f);
    gk_array_free(a);
    CHECK_OK(gk_random_normal(device, GK_FLOAT64, 1, (int64_t[]){4}, 42, 0, 1, &a));
    d = a ? raw_of(a) : NULL;
    for (int i = 0; d && i < 4; i++)
        CHECK(d[i] == normal64[i], "normal float64 [%d]: %a, expected %a", i, d[i],
              normal64[i]);
    free(d);
    gk_array_free(a);
}

static void test_random_reproducible(gk_device device)
{
    const int64_t n = 100003; /* several threads' worth, not a multiple of 4 */
    for (int t = 0; t < 2; t++) {
        gk_dtype dtype = t ? GK_FLOAT64 : GK_FLOAT32;
        for (int normal = 0; normal < 2; normal++) {
            gk_array *x = NULL, *y = NULL, *z = NULL, *head = NULL, *host = NULL;
            gk_status (*make_random)(gk_device, gk_dtype, int, const int64_t *, uint64_t,
                                     double, double, gk_array **) =
                normal ? gk_random_normal : gk_random_uniform;
            CHECK_OK(make_random(device, dtype, 1, &n, 7, 0, 1, &x));
            CHECK_OK(make_random(device, dtype, 2, (int64_t[]){1, n}, 7, 0, 1, &y));
            CHECK_OK(make_random(device, dtype, 1, &n, 8, 0, 1, &z));
            /* Element i depends on (seed, i) only: a short array is the
             * long one's start. */
            CHECK_OK(make_random(device, dtype, 1, (int64_t[]){5}, 7, 0, 1, &head));
            /* The same numbers on the CPU. */
            CHECK_OK(make_random(gk_device_cpu(), dtype, 1, &n, 7, 0, 1, &host));
            if (!x || !y || !z || !head || !host)
                continue;
            size_t bytes = gk_array_nbytes(x);
            char *rx = raw_of(x), *ry = raw_of(y), *rz = raw_of(z), *rh = raw_of(head),
                 *rc = raw_of(host);
            CHECK(memcmp(rx, ry, bytes) == 0, "same seed, same numbers");
            CHECK(memcmp(rx, rc, bytes) == 0, "same numbers as on the CPU");
            CHECK(memcmp(rx, rh, gk_array_nbytes(head)) == 0, "prefix");
            int64_t same = 0;
            size_t size = gk_dtype_size(dtype);
            for (int64_t i = 0; i < n; i++)
                same += memcmp(rx + i * (int64_t)size, rz + i * (int64_t)size, size) == 0;
            CHECK(same < 10, "seeds 7 and 8 share %lld values", (long long)same);
            free(rx);
            free(ry);
            free(rz);
            free(rh);
            free(rc);
            gk_array_free(x);
            gk_array_free(y);
            gk_array_free(z);
            gk_array_free(head);
            gk_array_free(host);
        }
    }
}

static void test_random_statistics(gk_device device)
{
    const int64_t n = 1000000;
    for (int t = 0; t < 2; t++) {
        gk_dtype dtype = t ? GK_FLOAT64 : GK_FLOAT32;
        gk_array *a = NULL;
        CHECK_OK(gk_random_uniform(device, dtype, 1, &n, 1234, -2, 3, &a));
        double *v = a ? values_of(a) : NULL;
        if (v) {
            double sum = 0, low = INFINITY, high = -INFINITY;
            for (int64_t i = 0; i < n; i++) {
                sum += v[i];
                low = fmin(low, v[i]);
                high = fmax(high, v[i]);
            }
            double mean = sum / (double)n;
            /* The mean of n uniforms on [-2, 3): 0.5 +- 5/sqrt(12 n). */
            CHECK(fabs(mean - 0.5) < 5 * 5 / sqrt(12.0 * (double)n), "uniform mean %g", mean);
            CHECK(low >= -2 && high < 3, "range [%g, %g]", low, high);
            CHECK(low < -1.99 && high > 2.99, "range [%g, %g] not covered", low, high);
            free(v);
        }
        gk_array_free(a);
        CHECK_OK(gk_random_normal(device, dtype, 1, &n, 99, 0, 1, &a));
        v = a ? values_of(a) : NULL;
        if (v) {
            double sum = 0, squares = 0, beyond = 0;
            for (int64_t i = 0; i < n; i++) {
                sum += v[i];
                squares += v[i] * v[i];
                beyond += fabs(v[i]) > 1.959964;
            }
            double mean = sum / (double)n, std = sqrt(squares / (double)n - mean * mean);
            CHECK(fabs(mean) < 0.005, "normal mean %g", mean);
            CHECK(fabs(std - 1) < 0.005, "normal std %g", std);
            CHECK(fabs(beyond / (double)n - 0.05) < 0.002, "two-sided 5%% tail: %g",
                  beyond / (double)n);
            free(v);
        }
        gk_array_free(a);
        /* mean and stddev. */
        CHECK_OK(gk_random_normal(device, dtype, 2, (int64_t[]){1000, 100}, 5, 10, 0.5, &a));
        v = a ? values_of(a) : NULL;
        if (v) {
            double sum = 0, squares = 0;
            for (int64_t i = 0; i < 100000; i++) {
                sum += v[i];
                squares += (v[i] - 10) * (v[i] - 10);
            }
            CHECK(fabs(sum / 1e5 - 10) < 0.01 && fabs(sqrt(squares / 1e5) - 0.5) < 0.01,
                  "normal(10, 0.5): mean %g", sum / 1e5);
            free(v);
        }
        gk_array_free(a);
    }
    /* A narrow range still ends below high. */
    gk_array *a = NULL;
    CHECK_OK(gk_random_uniform(device, GK_FLOAT32, 1, (int64_t[]){100000}, 3, 1, 1.0000001,
                               &a));
    double *v = a ? values_of(a) : NULL;
    for (int64_t i = 0; v && i < 100000; i++)
        if (!(v[i] >= 1 && v[i] < 1.0000001)) {
            CHECK(false, "value %.17g out of [1, 1.0000001)", v[i]);
            break;
        }
    free(v);
    gk_array_free(a);
}

static void test_random_errors(gk_device device)
{
    gk_array *a = (gk_array *)&a;
    int64_t shape[1] = {4};
    CHECK_FAILS(gk_random_uniform(device, GK_INT32, 1, shape, 1, 0, 1, &a),
                GK_ERR_INVALID_ARGUMENT, "int32");
    CHECK(a == NULL, "no output");
    CHECK_FAILS(gk_random_normal(device, GK_BOOL, 1, shape, 1, 0, 1, &a),
                GK_ERR_INVALID_ARGUMENT, "not floating");
    CHECK_FAILS(gk_random_uniform(device, GK_FLOAT32, 1, shape, 1, 2, 1, &a),
                GK_ERR_INVALID_ARGUMENT, "low <= high");
    CHECK_FAILS(gk_random_uniform(device, GK_FLOAT32, 1, shape, 1, 0, INFINITY, &a),
                GK_ERR_INVALID_ARGUMENT, "finite");
    CHECK_FAILS(gk_random_normal(device, GK_FLOAT64, 1, shape, 1, 0, -1, &a),
                GK_ERR_INVALID_ARGUMENT, "stddev");
    /* Empty and 0-d arrays. */
    CHECK_OK(gk_random_normal(device, GK_FLOAT64, 2, (int64_t[]){0, 3}, 1, 0, 1, &a));
    CHECK_SHAPE(a, 2, 0, 3);
    gk_array_free(a);
    CHECK_OK(gk_random_uniform(device, GK_FLOAT64, 0, NULL, 42, 0, 1, &a));
    if (a)
        CHECK_VALUES(a, ((double[]){0x1.39d5e09dfd524p-1}), 1, 0);
    gk_array_free(a);
}

/* --- printing --- */

static void check_format(gk_array *a, const char *expected, int line)
{
    char *text = NULL;
    gk_status status = a ? gk_array_format(a, &text) : GK_ERR_INVALID_ARGUMENT;
    if (status != GK_OK || !text || strcmp(text, expected) != 0) {
        check_failures++;
        fprintf(stderr, "%s:%d: printed\n%s\nexpected\n%s\n(%s)\n", __FILE__, line,
                text ? text : "(nothing)", expected, status == GK_OK ? "" : gk_last_error());
    }
    free(text);
    gk_array_free(a);
}

#define CHECK_FORMAT(a, expected) check_format((a), (expected), __LINE__)

/* An array of `dtype` with the values 0, 1, 2, ... */
static gk_array *counting(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    double *v = malloc(sizeof *v * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)i;
    gk_array *a = make(device, dtype, ndim, shape, v);
    free(v);
    return a;
}

/* The expected texts are NumPy 2's repr of the same arrays, with the dtype
 * always and the device added. */
static void test_print(gk_device device)
{
    char name[GK_DEVICE_NAME_MAX];
    gk_device_name(device, name, sizeof name);
    if (device.kind != GK_DEVICE_CPU) {
        /* The device's name replaces "cpu" in the texts below: check one
         * here, the rest on the CPU only (the text is made on the host). */
        char expected[128];
        snprintf(expected, sizeof expected, "array([1, 2, 3], dtype=int64, device=%s)", name);
        CHECK_FORMAT(make(device, GK_INT64, 1, (int64_t[]){3}, (double[]){1, 2, 3}), expected);
        return;
    }
    CHECK_FORMAT(make(device, GK_FLOAT32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4}),
                 "array([[1., 2.],\n       [3., 4.]], dtype=float32, device=cpu)");
    CHECK_FORMAT(make(device, GK_INT64, 1, (int64_t[]){3}, (double[]){1, 2, 3}),
                 "array([1, 2, 3], dtype=int64, device=cpu)");
    CHECK_FORMAT(make(device, GK_BOOL, 1, (int64_t[]){2}, (double[]){1, 0}),
                 "array([ True, False], dtype=bool, device=cpu)");
    CHECK_FORMAT(make(device, GK_FLOAT64, 0, NULL, (double[]){2.5}),
                 "array(2.5, dtype=float64, device=cpu)");
    gk_array *a = NULL;
    CHECK_OK(gk_empty(device, GK_FLOAT32, 2, (int64_t[]){0, 4}, &a));
    CHECK_FORMAT(a, "array([], shape=(0, 4), dtype=float32, device=cpu)");
    CHECK_OK(gk_empty(device, GK_FLOAT32, 1, (int64_t[]){0}, &a));
    CHECK_FORMAT(a, "array([], dtype=float32, device=cpu)");
    CHECK_FORMAT(counting(device, GK_INT64, 1, (int64_t[]){2000}),
                 "array([   0,    1,    2, ..., 1997, 1998, 1999],\n"
                 "      shape=(2000,), dtype=int64, device=cpu)");
    CHECK_FORMAT(counting(device, GK_INT32, 2, (int64_t[]){100, 20}),
                 "array([[   0,    1,    2, ...,   17,   18,   19],\n"
                 "       [  20,   21,   22, ...,   37,   38,   39],\n"
                 "       [  40,   41,   42, ...,   57,   58,   59],\n"
                 "       ...,\n"
                 "       [1940, 1941, 1942, ..., 1957, 1958, 1959],\n"
                 "       [1960, 1961, 1962, ..., 1977, 1978, 1979],\n"
                 "       [1980, 1981, 1982, ..., 1997, 1998, 1999]],\n"
                 "      shape=(100, 20), dtype=int32, device=cpu)");
    CHECK_FORMAT(make(device, GK_FLOAT64, 1, (int64_t[]){3}, (double[]){-1.5, 2, -0.25}),
                 "array([-1.5 ,  2.  , -0.25], dtype=float64, device=cpu)");
    CHECK_FORMAT(make(device, GK_FLOAT32, 1, (int64_t[]){3}, (double[]){NAN, 1, -INFINITY}),
                 "array([ nan,   1., -inf], dtype=float32, device=cpu)");
    CHECK_FORMAT(make(device, GK_FLOAT64, 1, (int64_t[]){2}, (double[]){1e-5, 1}),
                 "array([1.e-05, 1.e+00], dtype=float64, device=cpu)");
    CHECK_FORMAT(make(device, GK_FLOAT64, 1, (int64_t[]){3}, (double[]){1.5e10, -3, 0.125}),
                 "array([ 1.50e+10, -3.00e+00,  1.25e-01], dtype=float64, device=cpu)");
    CHECK_FORMAT(counting(device, GK_FLOAT64, 1, (int64_t[]){30}),
                 "array([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12.,\n"
                 "       13., 14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25.,\n"
                 "       26., 27., 28., 29.], dtype=float64, device=cpu)");
    CHECK_FORMAT(make(device, GK_FLOAT32, 1, (int64_t[]){3}, (double[]){0.1, 0.2, 0.3}),
                 "array([0.1, 0.2, 0.3], dtype=float32, device=cpu)");
    CHECK_FORMAT(make(device, GK_FLOAT64, 1, (int64_t[]){3}, (double[]){0.1, 0.2, 0.1 + 0.2}),
                 "array([0.1, 0.2, 0.3], dtype=float64, device=cpu)");
    CHECK_FORMAT(counting(device, GK_INT32, 3, (int64_t[]){2, 2, 3}),
                 "array([[[ 0,  1,  2],\n        [ 3,  4,  5]],\n\n"
                 "       [[ 6,  7,  8],\n        [ 9, 10, 11]]], dtype=int32, device=cpu)");
    CHECK_FORMAT(make(device, GK_UINT8, 1, (int64_t[]){3}, (double[]){0, 255, 7}),
                 "array([  0, 255,   7], dtype=uint8, device=cpu)");
    CHECK_FORMAT(make(device, GK_BOOL, 0, NULL, (double[]){1}),
                 "array(True, dtype=bool, device=cpu)");
    CHECK_FORMAT(make(device, GK_INT32, 0, NULL, (double[]){-7}),
                 "array(-7, dtype=int32, device=cpu)");
    CHECK_FORMAT(make(device, GK_FLOAT32, 0, NULL, (double[]){NAN}),
                 "array(nan, dtype=float32, device=cpu)");
    CHECK_FORMAT(make(device, GK_FLOAT64, 1, (int64_t[]){3}, (double[]){1.0 / 3, 2.0 / 3, 1e7}),
                 "array([3.33333333e-01, 6.66666667e-01, 1.00000000e+07],\n"
                 "      dtype=float64, device=cpu)");
    CHECK_FORMAT(make(device, GK_FLOAT64, 1, (int64_t[]){2}, (double[]){NAN, INFINITY}),
                 "array([nan, inf], dtype=float64, device=cpu)");
    CHECK_FORMAT(make(device, GK_FLOAT64, 1, (int64_t[]){2}, (double[]){-0.0, 1}),
                 "array([-0.,  1.], dtype=float64, device=cpu)");
    CHECK_FORMAT(make(device, GK_FLOAT64, 1, (int64_t[]){2}, (double[]){1e100, 1e-100}),
                 "array([1.e+100, 1.e-100], dtype=float64, device=cpu)");
    /* A strided view prints its own elements. */
    gk_array *base = counting(device, GK_INT64, 2, (int64_t[]){2, 3}), *t = NULL;
    CHECK_OK(gk_transpose(base, NULL, &t));
    CHECK_FORMAT(t, "array([[0, 3],\n       [1, 4],\n       [2, 5]], dtype=int64, device=cpu)");
    gk_array_free(base);
    /* A summary reads only the corners it shows: this broadcast view stands
     * for 8 * 10^12 elements (64 TB, more than any host has). */
    base = counting(device, GK_INT64, 2, (int64_t[]){8, 1});
    CHECK_OK(gk_broadcast_to(base, 2, (int64_t[]){8, 1000000000000}, &t));
    CHECK_FORMAT(t, "array([[0, 0, 0, ..., 0, 0, 0],\n"
                    "       [1, 1, 1, ..., 1, 1, 1],\n"
                    "       [2, 2, 2, ..., 2, 2, 2],\n"
                    "       ...,\n"
                    "       [5, 5, 5, ..., 5, 5, 5],\n"
                    "       [6, 6, 6, ..., 6, 6, 6],\n"
                    "       [7, 7, 7, ..., 7, 7, 7]],\n"
                    "      shape=(8, 1000000000000), dtype=int64, device=cpu)");
    gk_array_free(base);

    /* gk_array_print writes the same text and a newline. */
    FILE *stream = tmpfile();
    CHECK(stream != NULL, "tmpfile");
    if (stream) {
        a = make(device, GK_INT32, 1, (int64_t[]){2}, (double[]){5, -6});
        CHECK_OK(gk_array_print(stream, a));
        gk_array_free(a);
        char line[128] = "";
        rewind(stream);
        CHECK(fgets(line, sizeof line, stream) != NULL, "read back");
        CHECK(strcmp(line, "array([ 5, -6], dtype=int32, device=cpu)\n") == 0, "%s", line);
        fclose(stream);
    }
}

/* Integer products wrap in their dtype like NumPy's (int8: 100 * 2 + 100 * 1
 * is 300, which is 44 modulo 256), and stay exact beyond float64's 2^53. */
static void test_matmul_integer_arithmetic(gk_device device)
{
    gk_array *a = make(device, GK_INT8, 2, (int64_t[]){1, 2}, (double[]){100, 100});
    gk_array *b = make(device, GK_INT8, 2, (int64_t[]){2, 1}, (double[]){2, 1});
    gk_array *c = NULL;
    CHECK_OK(gk_matmul(a, b, &c));
    if (c)
        CHECK_VALUES(c, ((double[]){44}), 1, 0);
    gk_array_free(a);
    gk_array_free(b);
    gk_array_free(c);
    int64_t big[4] = {(int64_t)1 << 40, 3, 5, 7}, got[4] = {0};
    /* 2^80 + 15 wraps to 15 */
    int64_t want[4] = {15, ((int64_t)3 << 40) + 21, ((int64_t)5 << 40) + 35, 64};
    gk_array *m = NULL, *p = NULL;
    CHECK_OK(gk_from_host(device, GK_INT64, 2, (int64_t[]){2, 2}, big, &m));
    CHECK_OK(gk_matmul(m, m, &p));
    if (p) {
        CHECK_OK(gk_to_host(p, got, sizeof got));
        for (int i = 0; i < 4; i++)
            CHECK(got[i] == want[i], "int64 element %d: %lld, expected %lld", i,
                  (long long)got[i], (long long)want[i]);
    }
    gk_array_free(m);
    gk_array_free(p);
    /* A batch broadcast against a 1-d vector. */
    a = counting(device, GK_INT32, 3, (int64_t[]){2, 2, 3});
    b = make(device, GK_INT32, 1, (int64_t[]){3}, (double[]){1, -1, 2});
    CHECK_OK(gk_matmul(a, b, &c));
    if (c) {
        CHECK(gk_array_ndim(c) == 2 && gk_array_dtype(c) == GK_INT32, "(2, 2) int32");
        CHECK_VALUES(c, ((double[]){3, 9, 15, 21}), 4, 0);
    }
    gk_array_free(a);
    gk_array_free(b);
    gk_array_free(c);
}

int main(void)
{
    FOR_EACH_DEVICE(test_matmul_2d);
    FOR_EACH_DEVICE(test_matmul_batched);
    FOR_EACH_DEVICE(test_matmul_vectors);
    FOR_EACH_DEVICE(test_matmul_strided);
    FOR_EACH_DEVICE(test_matmul_empty_and_dtypes);
    FOR_EACH_DEVICE(test_matmul_integer_arithmetic);
    FOR_EACH_DEVICE(test_matmul_errors);
    FOR_EACH_DEVICE(test_dot);
    FOR_EACH_DEVICE(test_svd);
    FOR_EACH_DEVICE(test_qr);
    FOR_EACH_DEVICE(test_solve_inv);
    FOR_EACH_DEVICE(test_factorization_errors);
    FOR_EACH_DEVICE(test_determinants_from_lu);
    FOR_EACH_DEVICE(test_random_pinned);
    FOR_EACH_DEVICE(test_random_reproducible);
    FOR_EACH_DEVICE(test_random_statistics);
    FOR_EACH_DEVICE(test_random_errors);
    FOR_EACH_DEVICE(test_print);
    CHECK_DONE();
}
