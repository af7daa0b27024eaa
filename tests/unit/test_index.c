/* Indexing with arrays (src/compute/index.c over the backends' gather,
 * scatter, flatnonzero and searchsorted) on every device, through the
 * public API: take, take_along_axis, put, flatnonzero, mask_select,
 * mask_assign and searchsorted against values worked out here from NumPy's
 * definitions, on contiguous, transposed and reversed operands, empty
 * ones, sizes past the CPU's thread threshold (32768), and every error
 * path. Element moves of the dtypes whose arithmetic other backends are
 * still gaining (int16, uint64) are checked on the CPU. */
#include "array_check.h"

#include <stdint.h>

#define COUNT(array) ((int64_t)(sizeof(array) / sizeof *(array)))

/* Larger than the GPUKIT_CPU_PARALLEL_MIN ctest sets (32768) and than a flatnonzero block
 * (65536), and not a multiple of either. */
#define LARGE 100003

/* An array of this dtype and shape holding `values` (C order), converted
 * as C converts. */
static gk_array *array_of(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                          const double *values)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    unsigned char *raw = malloc(n ? (size_t)n * gk_dtype_size(dtype) : 1);
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

/* a[::-1] along axis (a view with a negative stride). */
static gk_array *reversed(const gk_array *a, int axis)
{
    gk_array *r = NULL;
    CHECK_OK(gk_slice(a, axis, -1, -(gk_array_shape(a)[axis] + 1), -1, &r));
    return r;
}

static gk_array *transposed(const gk_array *a)
{
    gk_array *t = NULL;
    CHECK_OK(gk_transpose(a, NULL, &t));
    return t;
}

static void check_shape(const gk_array *a, int ndim, const int64_t *shape, const char *what)
{
    bool same = a && gk_array_ndim(a) == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = gk_array_shape(a)[i] == shape[i];
    CHECK(same, "%s: wrong shape", what);
}

/* take of a counting array of `shape` along `axis` with the m indices
 * `index`: element (o, j, i) is o * (L * inner) + wrap(index[j]) * inner
 * + i, where L is the axis's length and inner the size of the axes after
 * it. */
static double *counting_take(int ndim, const int64_t *shape, int axis, const int64_t *index,
                             int64_t m)
{
    int64_t outer = 1, inner = 1, length = shape[axis];
    for (int i = 0; i < axis; i++)
        outer *= shape[i];
    for (int i = axis + 1; i < ndim; i++)
        inner *= shape[i];
    double *expected = malloc(sizeof(double) * (size_t)(outer * m * inner + 1));
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < m; j++)
            for (int64_t i = 0; i < inner; i++) {
                int64_t k = index[j] < 0 ? index[j] + length : index[j];
                expected[(o * m + j) * inner + i] = (double)((o * length + k) * inner + i);
            }
    return expected;
}

/* --- take --- */

static void test_take_basic(gk_device device)
{
    gk_array *out = NULL;
    /* 1-d, negative indices, int64 and int32 indices */
    gk_array *a = array_of(device, GK_FLOAT32, 1, (int64_t[]){5},
                           (double[]){10, 11, 12, 13, 14});
    gk_array *i64 = array_of(device, GK_INT64, 1, (int64_t[]){5}, (double[]){4, -1, 0, -5, 2});
    gk_array *i32 = array_of(device, GK_INT32, 1, (int64_t[]){5}, (double[]){4, -1, 0, -5, 2});
    CHECK_OK(gk_take(a, i64, 0, &out));
    check_shape(out, 1, (int64_t[]){5}, "take 1-d");
    CHECK(out && gk_array_dtype(out) == GK_FLOAT32, "take keeps the dtype");
    CHECK_VALUES(out, ((double[]){14, 14, 10, 10, 12}), 5, 0);
    gk_array_free(out);
    CHECK_OK(gk_take(a, i32, -1, &out));
    CHECK_VALUES(out, ((double[]){14, 14, 10, 10, 12}), 5, 0);
    gk_array_free(out);
    /* 2-d indices into 1-d: the result has the indices' shape */
    gk_array *square = array_of(device, GK_INT64, 2, (int64_t[]){2, 2}, (double[]){0, 1, -2, 3});
    CHECK_OK(gk_take(a, square, 0, &out));
    check_shape(out, 2, (int64_t[]){2, 2}, "take with 2-d indices");
    CHECK_VALUES(out, ((double[]){10, 11, 13, 13}), 4, 0);
    gk_array_free(out);
    /* a 0-d index drops the axis */
    gk_array *zero_d = NULL;
    CHECK_OK(gk_scalar(device, GK_INT64, -2, &zero_d));
    CHECK_OK(gk_take(a, zero_d, 0, &out));
    check_shape(out, 0, NULL, "take with a 0-d index");
    CHECK_VALUES(out, ((double[]){13}), 1, 0);
    gk_array_free(out);

    /* 2-d (3, 4) = 0..11 along each axis */
    gk_array *b = counting(device, GK_INT32, 2, (int64_t[]){3, 4});
    gk_array *rows = array_of(device, GK_INT64, 1, (int64_t[]){2}, (double[]){2, -3});
    CHECK_OK(gk_take(b, rows, 0, &out));
    check_shape(out, 2, (int64_t[]){2, 4}, "take axis 0");
    CHECK(out && gk_array_dtype(out) == GK_INT32, "take keeps int32");
    CHECK_VALUES(out, ((double[]){8, 9, 10, 11, 0, 1, 2, 3}), 8, 0);
    gk_array_free(out);
    gk_array *cols = array_of(device, GK_INT64, 1, (int64_t[]){2}, (double[]){-1, 1});
    CHECK_OK(gk_take(b, cols, 1, &out));
    check_shape(out, 2, (int64_t[]){3, 2}, "take axis 1");
    CHECK_VALUES(out, ((double[]){3, 1, 7, 5, 11, 9}), 6, 0);
    gk_array_free(out);
    CHECK_OK(gk_take(b, cols, -1, &out));
    CHECK_VALUES(out, ((double[]){3, 1, 7, 5, 11, 9}), 6, 0);
    gk_array_free(out);
    /* axis None: the flattened array */
    gk_array *flat = array_of(device, GK_INT64, 2, (int64_t[]){2, 2}, (double[]){11, 0, -1, 5});
    CHECK_OK(gk_take(b, flat, GK_ALL_AXES, &out));
    check_shape(out, 2, (int64_t[]){2, 2}, "take axis None");
    CHECK_VALUES(out, ((double[]){11, 0, 11, 5}), 4, 0);
    gk_array_free(out);

    /* 3-d (2, 3, 4) float64 along each axis with 2-d indices */
    int64_t shape3[3] = {2, 3, 4};
    gk_array *c = counting(device, GK_FLOAT64, 3, shape3);
    int64_t index3[4] = {0, 2, -1, 1};
    gk_array *idx3 = NULL;
    double index3_values[4] = {0, 2, -1, 1};
    idx3 = array_of(device, GK_INT64, 2, (int64_t[]){2, 2}, index3_values);
    for (int axis = 0; axis < 3; axis++) {
        /* axis 0 has length 2: indices 2 and -1 mean 0 and 1 there */
        int64_t use[4] = {0, axis == 0 ? 1 : 2, -1, 1};
        gk_array *idx = axis == 0 ? array_of(device, GK_INT64, 2, (int64_t[]){2, 2},
                                             (double[]){0, 1, -1, 1})
                                  : NULL;
        CHECK_OK(gk_take(c, idx ? idx : idx3, axis, &out));
        int64_t shape[4], k = 0;
        for (int i = 0; i < 3; i++) {
            if (i == axis) {
                shape[k++] = 2;
                shape[k++] = 2;
            } else {
                shape[k++] = shape3[i];
            }
        }
        check_shape(out, 4, shape, "take of 3-d");
        double *expected = counting_take(3, shape3, axis, idx ? use : index3, 4);
        CHECK_VALUES(out, expected, 24 / shape3[axis] * 4, 0);
        free(expected);
        gk_array_free(out);
        gk_array_free(idx);
    }
    gk_array_free(a);
    gk_array_free(i64);
    gk_array_free(i32);
    gk_array_free(square);
    gk_array_free(zero_d);
    gk_array_free(b);
    gk_array_free(rows);
    gk_array_free(cols);
    gk_array_free(flat);
    gk_array_free(c);
    gk_array_free(idx3);
}

static void test_take_views(gk_device device)
{
    gk_array *out = NULL;
    /* at = (3, 4) 0..11 transposed: at[i][j] = 4 j + i */
    gk_array *b = counting(device, GK_FLOAT32, 2, (int64_t[]){3, 4});
    gk_array *at = transposed(b);
    gk_array *two = array_of(device, GK_INT64, 1, (int64_t[]){2}, (double[]){2, -1});
    CHECK_OK(gk_take(at, two, 0, &out));
    check_shape(out, 2, (int64_t[]){2, 3}, "take of a transposed array, axis 0");
    CHECK_VALUES(out, ((double[]){2, 6, 10, 3, 7, 11}), 6, 0);
    gk_array_free(out);
    gk_array *ends = array_of(device, GK_INT64, 1, (int64_t[]){2}, (double[]){0, 2});
    CHECK_OK(gk_take(at, ends, 1, &out));
    check_shape(out, 2, (int64_t[]){4, 2}, "take of a transposed array, axis 1");
    CHECK_VALUES(out, ((double[]){0, 8, 1, 9, 2, 10, 3, 11}), 8, 0);
    gk_array_free(out);
    /* axis None of a transposed array: its C order, 0 4 8 1 5 9 ... */
    gk_array *some = array_of(device, GK_INT64, 1, (int64_t[]){3}, (double[]){1, 3, -1});
    CHECK_OK(gk_take(at, some, GK_ALL_AXES, &out));
    CHECK_VALUES(out, ((double[]){4, 1, 11}), 3, 0);
    gk_array_free(out);
    /* reversed array and reversed indices (negative strides) */
    gk_array *rb = reversed(b, 1); /* rows 3 2 1 0 / 7 6 5 4 / 11 10 9 8 */
    gk_array *seq = counting(device, GK_INT64, 1, (int64_t[]){4});
    gk_array *rseq = reversed(seq, 0); /* 3 2 1 0 */
    CHECK_OK(gk_take(rb, rseq, 1, &out));
    CHECK_VALUES(out, ((double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), 12, 0);
    gk_array_free(out);
    gk_array *rows = reversed(b, 0); /* 8..11 / 4..7 / 0..3 */
    CHECK_OK(gk_take(rows, ends, 0, &out));
    CHECK_VALUES(out, ((double[]){8, 9, 10, 11, 0, 1, 2, 3}), 8, 0);
    gk_array_free(out);
    /* transposed indices: (2, 3) indices transposed to (3, 2) */
    gk_array *idx = array_of(device, GK_INT32, 2, (int64_t[]){2, 3}, (double[]){0, 1, 2, 3, -1, -2});
    gk_array *idx_t = transposed(idx); /* 0 3 / 1 -1 / 2 -2 */
    CHECK_OK(gk_take(b, idx_t, 1, &out));
    check_shape(out, 3, (int64_t[]){3, 3, 2}, "take with transposed indices");
    CHECK_VALUES(out, ((double[]){0, 3, 1, 3, 2, 2, 4, 7, 5, 7, 6, 6, 8, 11, 9, 11, 10, 10}),
                 18, 0);
    gk_array_free(out);

    /* empty indices */
    gk_array *none = NULL;
    CHECK_OK(gk_zeros(device, GK_INT64, 1, (int64_t[]){0}, &none));
    CHECK_OK(gk_take(b, none, 0, &out));
    check_shape(out, 2, (int64_t[]){0, 4}, "take with no indices");
    gk_array_free(out);
    gk_array *none2 = NULL;
    CHECK_OK(gk_zeros(device, GK_INT32, 2, (int64_t[]){2, 0}, &none2));
    CHECK_OK(gk_take(b, none2, 1, &out));
    check_shape(out, 3, (int64_t[]){3, 2, 0}, "take with (2, 0) indices");
    gk_array_free(out);
    /* an empty array along another axis with indices: empty result */
    gk_array *hollow = NULL;
    CHECK_OK(gk_zeros(device, GK_FLOAT32, 2, (int64_t[]){0, 4}, &hollow));
    CHECK_OK(gk_take(hollow, ends, 1, &out));
    check_shape(out, 2, (int64_t[]){0, 2}, "take from an empty array");
    gk_array_free(out);
    /* but no index is in range of an empty axis */
    CHECK_FAILS(gk_take(hollow, ends, 0, &out), GK_ERR_OUT_OF_RANGE, "index 2");

    /* large: a reversed copy of LARGE elements through reversed indices */
    gk_array *big = counting(device, GK_FLOAT32, 1, (int64_t[]){LARGE});
    gk_array *positions = counting(device, GK_INT64, 1, (int64_t[]){LARGE});
    gk_array *backwards = reversed(positions, 0);
    CHECK_OK(gk_take(big, backwards, 0, &out));
    double *expected = malloc(sizeof(double) * LARGE);
    for (int64_t i = 0; i < LARGE; i++)
        expected[i] = (double)(LARGE - 1 - i);
    CHECK_VALUES(out, expected, LARGE, 0);
    gk_array_free(out);
    /* and the rows of a (R, 7) array picked backwards by negative indices */
    const int64_t R = LARGE / 7;
    gk_array *head = NULL, *wide = NULL, *firsts = NULL;
    CHECK_OK(gk_slice(big, 0, 0, R * 7, 1, &head));
    if (head)
        CHECK_OK(gk_reshape(head, 2, (int64_t[]){R, 7}, &wide));
    CHECK_OK(gk_arange(device, GK_INT64, -1, (double)(-R - 1), -1, &firsts)); /* -1 .. -R */
    CHECK_OK(gk_take(wide, firsts, 0, &out));
    check_shape(out, 2, (int64_t[]){R, 7}, "take of many rows");
    for (int64_t r = 0; r < R; r++)
        for (int64_t k = 0; k < 7; k++)
            expected[r * 7 + k] = (double)((R - 1 - r) * 7 + k);
    CHECK_VALUES(out, expected, R * 7, 0);
    gk_array_free(out);
    free(expected);

    gk_array_free(b);
    gk_array_free(at);
    gk_array_free(two);
    gk_array_free(ends);
    gk_array_free(some);
    gk_array_free(rb);
    gk_array_free(seq);
    gk_array_free(rseq);
    gk_array_free(rows);
    gk_array_free(idx);
    gk_array_free(idx_t);
    gk_array_free(none);
    gk_array_free(none2);
    gk_array_free(hollow);
    gk_array_free(big);
    gk_array_free(positions);
    gk_array_free(backwards);
    gk_array_free(head);
    gk_array_free(wide);
    gk_array_free(firsts);
}

static void test_take_errors(gk_device device)
{
    gk_array *out = NULL;
    gk_array *b = counting(device, GK_FLOAT32, 2, (int64_t[]){3, 4});
    gk_array *three = array_of(device, GK_INT64, 1, (int64_t[]){2}, (double[]){0, 3});
    gk_array *minus = array_of(device, GK_INT32, 1, (int64_t[]){1}, (double[]){-4});
    gk_array *four = array_of(device, GK_INT64, 1, (int64_t[]){1}, (double[]){4});
    gk_array *floats = array_of(device, GK_FLOAT32, 1, (int64_t[]){1}, (double[]){1});
    gk_array *bools = array_of(device, GK_BOOL, 1, (int64_t[]){1}, (double[]){1});
    CHECK_FAILS(gk_take(b, three, 0, &out), GK_ERR_OUT_OF_RANGE,
                "index 3 is out of range for axis 0");
    CHECK(out == NULL, "no result on failure");
    CHECK_FAILS(gk_take(b, minus, 0, &out), GK_ERR_OUT_OF_RANGE,
                "index -4 is out of range for axis 0");
    CHECK_FAILS(gk_take(b, four, 1, &out), GK_ERR_OUT_OF_RANGE,
                "index 4 is out of range for axis 1");
    CHECK_FAILS(gk_take(b, four, -1, &out), GK_ERR_OUT_OF_RANGE, "axis 1");
    CHECK_OK(gk_take(b, three, GK_ALL_AXES, &out)); /* 12 elements: 3 is fine there */
    CHECK_VALUES(out, ((double[]){0, 3}), 2, 0);
    gk_array_free(out);
    CHECK_FAILS(gk_take(b, floats, 0, &out), GK_ERR_INVALID_ARGUMENT,
                "indices must be an integer array, not float32");
    CHECK_FAILS(gk_take(b, bools, 0, &out), GK_ERR_INVALID_ARGUMENT, "not bool");
    CHECK_FAILS(gk_take(b, three, 2, &out), GK_ERR_AXIS, "take: axis 2");
    gk_array_free(b);
    gk_array_free(three);
    gk_array_free(minus);
    gk_array_free(four);
    gk_array_free(floats);
    gk_array_free(bools);
}

/* --- take_along_axis --- */

static void test_take_along_axis(gk_device device)
{
    gk_array *out = NULL;
    gk_array *b = counting(device, GK_FLOAT64, 2, (int64_t[]){3, 4});
    gk_array *idx = array_of(device, GK_INT64, 2, (int64_t[]){3, 2},
                             (double[]){3, 0, 1, -1, 2, 2});
    CHECK_OK(gk_take_along_axis(b, idx, 1, &out));
    check_shape(out, 2, (int64_t[]){3, 2}, "take_along_axis 1");
    CHECK_VALUES(out, ((double[]){3, 0, 5, 7, 10, 10}), 6, 0);
    gk_array_free(out);
    /* indices broadcast over rows */
    gk_array *row = array_of(device, GK_INT32, 2, (int64_t[]){1, 2}, (double[]){0, -1});
    CHECK_OK(gk_take_along_axis(b, row, 1, &out));
    check_shape(out, 2, (int64_t[]){3, 2}, "take_along_axis with broadcast indices");
    CHECK_VALUES(out, ((double[]){0, 3, 4, 7, 8, 11}), 6, 0);
    gk_array_free(out);
    /* axis 0 with indices broadcast over columns */
    gk_array *col = array_of(device, GK_INT64, 2, (int64_t[]){2, 1}, (double[]){2, 0});
    CHECK_OK(gk_take_along_axis(b, col, 0, &out));
    check_shape(out, 2, (int64_t[]){2, 4}, "take_along_axis 0");
    CHECK_VALUES(out, ((double[]){8, 9, 10, 11, 0, 1, 2, 3}), 8, 0);
    gk_array_free(out);
    /* the array broadcast: one row (1, 4) against (3, 2) indices */
    gk_array *first = NULL;
    CHECK_OK(gk_slice(b, 0, 0, 1, 1, &first));
    CHECK_OK(gk_take_along_axis(first, idx, 1, &out));
    check_shape(out, 2, (int64_t[]){3, 2}, "take_along_axis with a broadcast array");
    CHECK_VALUES(out, ((double[]){3, 0, 1, 3, 2, 2}), 6, 0);
    gk_array_free(out);
    /* a transposed array and indices (argsort-like use) */
    gk_array *bt = transposed(b); /* (4, 3): bt[i][j] = 4 j + i */
    gk_array *idx_t = transposed(idx); /* (2, 3): 3 1 2 / 0 -1 2 */
    CHECK_OK(gk_take_along_axis(bt, idx_t, 0, &out));
    check_shape(out, 2, (int64_t[]){2, 3}, "take_along_axis of transposed operands");
    CHECK_VALUES(out, ((double[]){3, 5, 10, 0, 7, 10}), 6, 0);
    gk_array_free(out);
    /* 3-d: (2, 3, 4) along axis 1 with (2, 1, 4) indices */
    gk_array *c = counting(device, GK_INT32, 3, (int64_t[]){2, 3, 4});
    double cv[8] = {0, 1, 2, -1, 2, 0, 1, 1};
    gk_array *ci = array_of(device, GK_INT64, 3, (int64_t[]){2, 1, 4}, cv);
    CHECK_OK(gk_take_along_axis(c, ci, 1, &out));
    check_shape(out, 3, (int64_t[]){2, 1, 4}, "take_along_axis of 3-d");
    double expected[8];
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) {
            int j = (int)cv[i * 4 + k];
            expected[i * 4 + k] = 12 * i + 4 * (j < 0 ? j + 3 : j) + k;
        }
    CHECK_VALUES(out, expected, 8, 0);
    gk_array_free(out);
    /* axis None: 1-d indices into the flattened array */
    gk_array *flat = array_of(device, GK_INT64, 1, (int64_t[]){3}, (double[]){23, 0, -2});
    CHECK_OK(gk_take_along_axis(c, flat, GK_ALL_AXES, &out));
    CHECK_VALUES(out, ((double[]){23, 0, 22}), 3, 0);
    gk_array_free(out);
    /* errors */
    CHECK_FAILS(gk_take_along_axis(c, idx, 1, &out), GK_ERR_INVALID_ARGUMENT,
                "must have as many axes");
    gk_array *wrong = array_of(device, GK_INT64, 2, (int64_t[]){2, 2}, (double[]){0, 0, 0, 0});
    CHECK_FAILS(gk_take_along_axis(b, wrong, 1, &out), GK_ERR_INVALID_ARGUMENT,
                "do not broadcast");
    gk_array *far = array_of(device, GK_INT64, 2, (int64_t[]){1, 1}, (double[]){-5});
    CHECK_FAILS(gk_take_along_axis(b, far, 1, &out), GK_ERR_OUT_OF_RANGE,
                "index -5 is out of range for axis 1");
    gk_array *fl = array_of(device, GK_FLOAT64, 2, (int64_t[]){1, 1}, (double[]){0});
    CHECK_FAILS(gk_take_along_axis(b, fl, 1, &out), GK_ERR_INVALID_ARGUMENT, "integer");
    gk_array_free(b);
    gk_array_free(idx);
    gk_array_free(row);
    gk_array_free(col);
    gk_array_free(first);
    gk_array_free(bt);
    gk_array_free(idx_t);
    gk_array_free(c);
    gk_array_free(ci);
    gk_array_free(flat);
    gk_array_free(wrong);
    gk_array_free(far);
    gk_array_free(fl);
}

/* --- put --- */

static void test_put(gk_device device)
{
    int64_t shape[2] = {3, 4};
    gk_array *a = NULL;
    CHECK_OK(gk_zeros(device, GK_FLOAT32, 2, shape, &a));
    /* rows 2 and 0 (as -3) from a (2, 4) block */
    gk_array *rows = array_of(device, GK_INT64, 1, (int64_t[]){2}, (double[]){2, -3});
    gk_array *block = counting(device, GK_FLOAT32, 2, (int64_t[]){2, 4});
    CHECK_OK(gk_put(a, rows, 0, block));
    CHECK_VALUES(a, ((double[]){4, 5, 6, 7, 0, 0, 0, 0, 0, 1, 2, 3}), 12, 0);
    /* one value broadcast down column 1, converted from int32 */
    gk_array *col = array_of(device, GK_INT32, 1, (int64_t[]){1}, (double[]){1});
    gk_array *seven = NULL;
    CHECK_OK(gk_scalar(device, GK_INT32, 7, &seven));
    CHECK_OK(gk_put(a, col, -1, seven));
    CHECK_VALUES(a, ((double[]){4, 7, 6, 7, 0, 7, 0, 0, 0, 7, 2, 3}), 12, 0);
    /* a row of values broadcast to every index: columns 3 and 0 of each row */
    gk_array *two = array_of(device, GK_INT64, 1, (int64_t[]){2}, (double[]){3, 0});
    gk_array *pair = array_of(device, GK_FLOAT64, 1, (int64_t[]){2}, (double[]){-1, -2});
    CHECK_OK(gk_put(a, two, 1, pair));
    CHECK_VALUES(a, ((double[]){-2, 7, 6, -1, -2, 7, 0, -1, -2, 7, 2, -1}), 12, 0);
    /* axis None on a contiguous array: flat positions */
    gk_array *flat = array_of(device, GK_INT64, 1, (int64_t[]){3}, (double[]){0, 11, -2});
    gk_array *three = array_of(device, GK_FLOAT32, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    CHECK_OK(gk_put(a, flat, GK_ALL_AXES, three));
    CHECK_VALUES(a, ((double[]){1, 7, 6, -1, -2, 7, 0, -1, -2, 7, 3, 2}), 12, 0);
    /* through a transposed view: at[:, 0] is a's row 0 */
    gk_array *at = transposed(a);
    gk_array *zero = array_of(device, GK_INT64, 1, (int64_t[]){1}, (double[]){0});
    gk_array *four = array_of(device, GK_FLOAT32, 2, (int64_t[]){4, 1},
                              (double[]){100, 101, 102, 103});
    CHECK_OK(gk_put(at, zero, 1, four));
    CHECK_VALUES(a, ((double[]){100, 101, 102, 103, -2, 7, 0, -1, -2, 7, 3, 2}), 12, 0);
    /* through a reversed view: r[j] = a[2 - j] along axis 0 */
    gk_array *r = reversed(a, 0);
    gk_array *last = array_of(device, GK_INT64, 1, (int64_t[]){1}, (double[]){-1});
    gk_array *nine = NULL;
    CHECK_OK(gk_scalar(device, GK_FLOAT32, 9, &nine));
    CHECK_OK(gk_put(r, last, 0, nine)); /* r's last row is a's first */
    CHECK_VALUES(a, ((double[]){9, 9, 9, 9, -2, 7, 0, -1, -2, 7, 3, 2}), 12, 0);
    /* repeated indices: one of the values wins */
    gk_array *v = NULL;
    CHECK_OK(gk_zeros(device, GK_INT32, 1, (int64_t[]){5}, &v));
    gk_array *dup = array_of(device, GK_INT64, 1, (int64_t[]){3}, (double[]){1, 1, 3});
    gk_array *dup_values = array_of(device, GK_INT32, 1, (int64_t[]){3}, (double[]){5, 6, 7});
    CHECK_OK(gk_put(v, dup, 0, dup_values));
    double *got = test_values(v);
    CHECK(got && got[0] == 0 && (got[1] == 5 || got[1] == 6) && got[2] == 0 && got[3] == 7 &&
              got[4] == 0,
          "put with a repeated index");
    free(got);
    /* empty indices change nothing */
    gk_array *none = NULL;
    CHECK_OK(gk_zeros(device, GK_INT64, 1, (int64_t[]){0}, &none));
    CHECK_OK(gk_put(v, none, 0, nine));
    /* errors */
    CHECK_FAILS(gk_put(a, two, 0, pair), GK_ERR_OUT_OF_RANGE,
                "index 3 is out of range for axis 0");
    CHECK_FAILS(gk_put(at, flat, GK_ALL_AXES, three), GK_ERR_INVALID_ARGUMENT, "flattened put");
    CHECK_FAILS(gk_put(a, rows, 0, three), GK_ERR_INVALID_ARGUMENT, "put");
    gk_array *floats = array_of(device, GK_FLOAT32, 1, (int64_t[]){1}, (double[]){0});
    CHECK_FAILS(gk_put(a, floats, 0, nine), GK_ERR_INVALID_ARGUMENT, "integer");
    CHECK_VALUES(a, ((double[]){9, 9, 9, 9, -2, 7, 0, -1, -2, 7, 3, 2}), 12, 0);

    /* large: LARGE elements written in reverse order through reversed indices */
    gk_array *big = NULL;
    CHECK_OK(gk_zeros(device, GK_FLOAT64, 1, (int64_t[]){LARGE}, &big));
    gk_array *positions = counting(device, GK_INT64, 1, (int64_t[]){LARGE});
    gk_array *backwards = reversed(positions, 0);
    gk_array *source = counting(device, GK_FLOAT64, 1, (int64_t[]){LARGE});
    CHECK_OK(gk_put(big, backwards, 0, source));
    double *expected = malloc(sizeof(double) * LARGE);
    for (int64_t i = 0; i < LARGE; i++)
        expected[i] = (double)(LARGE - 1 - i);
    CHECK_VALUES(big, expected, LARGE, 0);
    free(expected);

    gk_array_free(a);
    gk_array_free(rows);
    gk_array_free(block);
    gk_array_free(col);
    gk_array_free(seven);
    gk_array_free(two);
    gk_array_free(pair);
    gk_array_free(flat);
    gk_array_free(three);
    gk_array_free(at);
    gk_array_free(zero);
    gk_array_free(four);
    gk_array_free(r);
    gk_array_free(last);
    gk_array_free(nine);
    gk_array_free(v);
    gk_array_free(dup);
    gk_array_free(dup_values);
    gk_array_free(none);
    gk_array_free(floats);
    gk_array_free(big);
    gk_array_free(positions);
    gk_array_free(backwards);
    gk_array_free(source);
}

/* --- flatnonzero --- */

/* flatnonzero of the bool mask m[0, n), checked against its true positions. */
static void check_nonzero(gk_device device, const unsigned char *m, int64_t n, const char *what)
{
    gk_array *mask = NULL, *out = NULL;
    CHECK_OK(gk_from_host(device, GK_BOOL, 1, &n, m, &mask));
    CHECK_OK(gk_flatnonzero(mask, &out));
    double *expected = malloc(sizeof(double) * (size_t)(n + 1));
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++)
        if (m[i])
            expected[count++] = (double)i;
    CHECK(out && gk_array_dtype(out) == GK_INT64 && gk_array_ndim(out) == 1,
          "%s: 1-d int64", what);
    int before = check_failures;
    CHECK_VALUES(out, expected, count, 0);
    if (check_failures != before)
        fprintf(stderr, "  (flatnonzero of %s)\n", what);
    free(expected);
    gk_array_free(mask);
    gk_array_free(out);
}

static void test_flatnonzero(gk_device device)
{
    gk_array *out = NULL;
    unsigned char small[5] = {0, 1, 1, 0, 1};
    check_nonzero(device, small, 5, "a small mask");
    /* numbers: NaN counts as nonzero, -0.0 as zero */
    gk_array *f = array_of(device, GK_FLOAT32, 1, (int64_t[]){6},
                           (double[]){0, NAN, -0.0, 2, 0, -1});
    CHECK_OK(gk_flatnonzero(f, &out));
    CHECK_VALUES(out, ((double[]){1, 3, 5}), 3, 0);
    gk_array_free(out);
    gk_array *d = array_of(device, GK_FLOAT64, 1, (int64_t[]){3}, (double[]){-0.0, 1e-300, 0});
    CHECK_OK(gk_flatnonzero(d, &out));
    CHECK_VALUES(out, ((double[]){1}), 1, 0);
    gk_array_free(out);
    /* 2-d int32, and its transpose (C order of the transposed view) */
    gk_array *m = array_of(device, GK_INT32, 2, (int64_t[]){2, 3}, (double[]){0, 5, 0, 7, 0, 0});
    CHECK_OK(gk_flatnonzero(m, &out));
    CHECK_VALUES(out, ((double[]){1, 3}), 2, 0);
    gk_array_free(out);
    gk_array *mt = transposed(m); /* 0 7 / 5 0 / 0 0 */
    CHECK_OK(gk_flatnonzero(mt, &out));
    CHECK_VALUES(out, ((double[]){1, 2}), 2, 0);
    gk_array_free(out);
    gk_array *u = array_of(device, GK_UINT8, 1, (int64_t[]){4}, (double[]){255, 0, 128, 1});
    gk_array *ur = reversed(u, 0); /* 1 128 0 255 */
    CHECK_OK(gk_flatnonzero(ur, &out));
    CHECK_VALUES(out, ((double[]){0, 1, 3}), 3, 0);
    gk_array_free(out);
    /* a 0-d array and an empty one */
    gk_array *scalar = NULL, *empty = NULL;
    CHECK_OK(gk_scalar(device, GK_INT64, 3, &scalar));
    CHECK_OK(gk_flatnonzero(scalar, &out));
    CHECK_VALUES(out, ((double[]){0}), 1, 0);
    gk_array_free(out);
    CHECK_OK(gk_zeros(device, GK_BOOL, 2, (int64_t[]){0, 3}, &empty));
    CHECK_OK(gk_flatnonzero(empty, &out));
    check_shape(out, 1, (int64_t[]){0}, "flatnonzero of an empty array");
    gk_array_free(out);

    /* masks on both sides of the thread threshold and the block size */
    unsigned char *big = malloc(LARGE);
    int64_t sizes[] = {1000, 32767, 32768, 65536, 65537, LARGE};
    for (int s = 0; s < (int)COUNT(sizes); s++) {
        int64_t n = sizes[s];
        memset(big, 0, (size_t)n);
        check_nonzero(device, big, n, "an all-false mask");
        memset(big, 1, (size_t)n);
        check_nonzero(device, big, n, "an all-true mask");
        for (int64_t i = 0; i < n; i++)
            big[i] = i % 3 == 0 || i % 7 == 1;
        check_nonzero(device, big, n, "a mixed mask");
        /* random-looking, with long false runs at the blocks' ends */
        uint64_t x = 0x9e3779b97f4a7c15u;
        for (int64_t i = 0; i < n; i++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            big[i] = (x >> 33) % 2 && i % 65536 < 60000;
        }
        check_nonzero(device, big, n, "a random mask");
        for (int64_t i = 0; i < n; i++)
            big[i] = i == n - 1 || i == 65535;
        check_nonzero(device, big, n, "a mask true at the ends of blocks");
    }
    free(big);
    gk_array_free(f);
    gk_array_free(d);
    gk_array_free(m);
    gk_array_free(mt);
    gk_array_free(u);
    gk_array_free(ur);
    gk_array_free(scalar);
    gk_array_free(empty);
}

/* --- masks --- */

static void test_mask_select(gk_device device)
{
    gk_array *out = NULL;
    gk_array *b = counting(device, GK_FLOAT32, 2, (int64_t[]){3, 4});
    /* a 1-d mask picks rows */
    gk_array *rows = array_of(device, GK_BOOL, 1, (int64_t[]){3}, (double[]){1, 0, 1});
    CHECK_OK(gk_mask_select(b, rows, &out));
    check_shape(out, 2, (int64_t[]){2, 4}, "mask_select of rows");
    CHECK_VALUES(out, ((double[]){0, 1, 2, 3, 8, 9, 10, 11}), 8, 0);
    gk_array_free(out);
    /* a 2-d mask of the whole array gives 1-d */
    double mv[12] = {0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1};
    gk_array *mask = array_of(device, GK_BOOL, 2, (int64_t[]){3, 4}, mv);
    CHECK_OK(gk_mask_select(b, mask, &out));
    check_shape(out, 1, (int64_t[]){4}, "mask_select with a full mask");
    CHECK_VALUES(out, ((double[]){1, 4, 5, 11}), 4, 0);
    gk_array_free(out);
    /* 3-d (2, 3, 4) with a (2, 3) mask: (count, 4) */
    gk_array *c = counting(device, GK_INT64, 3, (int64_t[]){2, 3, 4});
    gk_array *m2 = array_of(device, GK_BOOL, 2, (int64_t[]){2, 3}, (double[]){0, 0, 1, 1, 0, 0});
    CHECK_OK(gk_mask_select(c, m2, &out));
    check_shape(out, 2, (int64_t[]){2, 4}, "mask_select of 3-d with a 2-d mask");
    CHECK_VALUES(out, ((double[]){8, 9, 10, 11, 12, 13, 14, 15}), 8, 0);
    gk_array_free(out);
    /* 3-d with a 1-d mask */
    gk_array *m1 = array_of(device, GK_BOOL, 1, (int64_t[]){2}, (double[]){0, 1});
    CHECK_OK(gk_mask_select(c, m1, &out));
    check_shape(out, 3, (int64_t[]){1, 3, 4}, "mask_select of 3-d with a 1-d mask");
    CHECK_VALUES(out, ((double[]){12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}), 12, 0);
    gk_array_free(out);
    /* a transposed array (its merged axes need a copy) and a transposed mask */
    gk_array *bt = transposed(b); /* (4, 3): 0 4 8 / 1 5 9 / 2 6 10 / 3 7 11 */
    gk_array *mt = transposed(mask); /* 0 1 0 / 1 1 0 / 0 0 0 / 0 0 1 */
    CHECK_OK(gk_mask_select(bt, mt, &out));
    CHECK_VALUES(out, ((double[]){4, 1, 5, 11}), 4, 0);
    gk_array_free(out);
    gk_array *four = array_of(device, GK_BOOL, 1, (int64_t[]){4}, (double[]){0, 1, 0, 1});
    CHECK_OK(gk_mask_select(bt, four, &out));
    check_shape(out, 2, (int64_t[]){2, 3}, "mask_select of a transposed array's rows");
    CHECK_VALUES(out, ((double[]){1, 5, 9, 3, 7, 11}), 6, 0);
    gk_array_free(out);
    /* an all-false mask */
    gk_array *none = NULL;
    CHECK_OK(gk_zeros(device, GK_BOOL, 1, (int64_t[]){3}, &none));
    CHECK_OK(gk_mask_select(b, none, &out));
    check_shape(out, 2, (int64_t[]){0, 4}, "mask_select with no true element");
    gk_array_free(out);
    /* errors: shapes and dtypes */
    CHECK_FAILS(gk_mask_select(b, four, &out), GK_ERR_OUT_OF_RANGE,
                "must be bool and as long as the leading axes");
    gk_array *ints = array_of(device, GK_INT32, 1, (int64_t[]){3}, (double[]){1, 0, 1});
    CHECK_FAILS(gk_mask_select(b, ints, &out), GK_ERR_INVALID_ARGUMENT, "must be bool");
    CHECK_FAILS(gk_mask_select(m1, mask, &out), GK_ERR_OUT_OF_RANGE, "leading axes");

    /* large: every other element of LARGE */
    gk_array *big = counting(device, GK_FLOAT32, 1, (int64_t[]){LARGE});
    unsigned char *odd = malloc(LARGE);
    for (int64_t i = 0; i < LARGE; i++)
        odd[i] = i % 2;
    gk_array *big_mask = NULL;
    CHECK_OK(gk_from_host(device, GK_BOOL, 1, (int64_t[]){LARGE}, odd, &big_mask));
    CHECK_OK(gk_mask_select(big, big_mask, &out));
    double *expected = malloc(sizeof(double) * LARGE);
    for (int64_t i = 0; i < LARGE / 2; i++)
        expected[i] = (double)(2 * i + 1);
    CHECK_VALUES(out, expected, LARGE / 2, 0);
    gk_array_free(out);
    free(expected);
    free(odd);

    gk_array_free(b);
    gk_array_free(rows);
    gk_array_free(mask);
    gk_array_free(c);
    gk_array_free(m2);
    gk_array_free(m1);
    gk_array_free(bt);
    gk_array_free(mt);
    gk_array_free(four);
    gk_array_free(none);
    gk_array_free(ints);
    gk_array_free(big);
    gk_array_free(big_mask);
}

static void test_mask_assign(gk_device device)
{
    gk_array *a = NULL;
    CHECK_OK(gk_zeros(device, GK_INT32, 2, (int64_t[]){3, 4}, &a));
    /* rows 1 and 2 = 5 */
    gk_array *rows = array_of(device, GK_BOOL, 1, (int64_t[]){3}, (double[]){0, 1, 1});
    gk_array *five = NULL;
    CHECK_OK(gk_scalar(device, GK_INT32, 5, &five));
    CHECK_OK(gk_mask_assign(a, rows, five));
    CHECK_VALUES(a, ((double[]){0, 0, 0, 0, 5, 5, 5, 5, 5, 5, 5, 5}), 12, 0);
    /* a row of values broadcast to the selected rows, converted from float */
    gk_array *row = array_of(device, GK_FLOAT64, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
    gk_array *ends = array_of(device, GK_BOOL, 1, (int64_t[]){3}, (double[]){1, 0, 1});
    CHECK_OK(gk_mask_assign(a, ends, row));
    CHECK_VALUES(a, ((double[]){1, 2, 3, 4, 5, 5, 5, 5, 1, 2, 3, 4}), 12, 0);
    /* a full 2-d mask with one value per true element */
    double mv[12] = {0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1};
    gk_array *mask = array_of(device, GK_BOOL, 2, (int64_t[]){3, 4}, mv);
    gk_array *vals = array_of(device, GK_INT32, 1, (int64_t[]){4}, (double[]){-1, -2, -3, -4});
    CHECK_OK(gk_mask_assign(a, mask, vals));
    CHECK_VALUES(a, ((double[]){1, -1, 3, 4, -2, -3, 5, 5, 1, 2, 3, -4}), 12, 0);
    /* through a transposed view (the copy path, then written back) */
    gk_array *at = transposed(a); /* (4, 3) */
    gk_array *mt = transposed(mask); /* true at at[0][1], [1][0], [1][1], [3][2] */
    gk_array *more = array_of(device, GK_INT32, 1, (int64_t[]){4}, (double[]){10, 20, 30, 40});
    CHECK_OK(gk_mask_assign(at, mt, more));
    /* at's C order visits a[1][0]=10, a[0][1]=20, a[1][1]=30, a[2][3]=40 */
    CHECK_VALUES(a, ((double[]){1, 20, 3, 4, 10, 30, 5, 5, 1, 2, 3, 40}), 12, 0);
    gk_array *four = array_of(device, GK_BOOL, 1, (int64_t[]){4}, (double[]){1, 0, 0, 1});
    gk_array *zero = NULL;
    CHECK_OK(gk_scalar(device, GK_INT32, 0, &zero));
    CHECK_OK(gk_mask_assign(at, four, zero)); /* a's columns 0 and 3 */
    CHECK_VALUES(a, ((double[]){0, 20, 3, 0, 0, 30, 5, 0, 0, 2, 3, 0}), 12, 0);
    /* 3-d (2, 3, 4) float32 with a (2, 3) mask and a row of values */
    gk_array *c = NULL;
    CHECK_OK(gk_zeros(device, GK_FLOAT32, 3, (int64_t[]){2, 3, 4}, &c));
    gk_array *m2 = array_of(device, GK_BOOL, 2, (int64_t[]){2, 3}, (double[]){1, 0, 0, 0, 0, 1});
    CHECK_OK(gk_mask_assign(c, m2, row));
    double expected[24] = {0};
    for (int k = 0; k < 4; k++)
        expected[k] = expected[20 + k] = k + 1;
    CHECK_VALUES(c, expected, 24, 0);
    /* an all-false mask changes nothing */
    gk_array *none = NULL;
    CHECK_OK(gk_zeros(device, GK_BOOL, 2, (int64_t[]){2, 3}, &none));
    CHECK_OK(gk_mask_assign(c, none, five));
    CHECK_VALUES(c, expected, 24, 0);
    /* errors */
    CHECK_FAILS(gk_mask_assign(a, four, five), GK_ERR_OUT_OF_RANGE, "leading axes");
    gk_array *bad = array_of(device, GK_INT32, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    CHECK_FAILS(gk_mask_assign(a, mask, bad), GK_ERR_INVALID_ARGUMENT, "mask_assign");
    gk_array_free(bad);
    CHECK_FAILS(gk_mask_assign(a, mask, NULL), GK_ERR_INVALID_ARGUMENT, "values are NULL");

    /* large: the even positions of LARGE get -1 */
    gk_array *big = counting(device, GK_FLOAT64, 1, (int64_t[]){LARGE});
    unsigned char *even = malloc(LARGE);
    for (int64_t i = 0; i < LARGE; i++)
        even[i] = i % 2 == 0;
    gk_array *big_mask = NULL, *minus = NULL;
    CHECK_OK(gk_from_host(device, GK_BOOL, 1, (int64_t[]){LARGE}, even, &big_mask));
    CHECK_OK(gk_scalar(device, GK_FLOAT64, -1, &minus));
    CHECK_OK(gk_mask_assign(big, big_mask, minus));
    double *want = malloc(sizeof(double) * LARGE);
    for (int64_t i = 0; i < LARGE; i++)
        want[i] = i % 2 == 0 ? -1 : (double)i;
    CHECK_VALUES(big, want, LARGE, 0);
    free(want);
    free(even);

    gk_array_free(a);
    gk_array_free(rows);
    gk_array_free(five);
    gk_array_free(row);
    gk_array_free(ends);
    gk_array_free(mask);
    gk_array_free(vals);
    gk_array_free(at);
    gk_array_free(mt);
    gk_array_free(more);
    gk_array_free(four);
    gk_array_free(zero);
    gk_array_free(c);
    gk_array_free(m2);
    gk_array_free(none);
    gk_array_free(big);
    gk_array_free(big_mask);
    gk_array_free(minus);
}

/* --- searchsorted --- */

/* searchsorted(sorted, values) both sides against the expected positions. */
static void check_search(const gk_array *sorted, const gk_array *values, const double *left,
                         const double *right, int64_t n, const char *what)
{
    gk_array *out = NULL;
    for (int side = 0; side < 2; side++) {
        CHECK_OK(gk_searchsorted(sorted, values, side == 1, &out));
        CHECK(out && gk_array_dtype(out) == GK_INT64, "%s: int64", what);
        int before = check_failures;
        CHECK_VALUES(out, side ? right : left, n, 0);
        if (check_failures != before)
            fprintf(stderr, "  (searchsorted %s, side %s)\n", what, side ? "right" : "left");
        gk_array_free(out);
    }
}

static void test_searchsorted(gk_device device)
{
    /* duplicates, values below and above every element */
    gk_array *s = array_of(device, GK_INT32, 1, (int64_t[]){6}, (double[]){1, 2, 2, 2, 5, 7});
    gk_array *v = array_of(device, GK_INT32, 1, (int64_t[]){7}, (double[]){0, 1, 2, 3, 5, 7, 8});
    check_search(s, v, (double[]){0, 0, 1, 4, 4, 5, 6}, (double[]){0, 1, 4, 4, 5, 6, 6}, 7,
                 "int32");
    /* NaN in both: NaN sorts after every number */
    double fs[6] = {-1.5, 0, 0, 2.5, NAN, NAN};
    double fv[7] = {NAN, -INFINITY, 0, -0.0, 2.5, 3, INFINITY};
    double fl[7] = {4, 0, 1, 1, 3, 4, 4}, fr[7] = {6, 0, 3, 3, 4, 4, 4};
    gk_dtype floats[2] = {GK_FLOAT32, GK_FLOAT64};
    for (int t = 0; t < 2; t++) {
        gk_array *fs_a = array_of(device, floats[t], 1, (int64_t[]){6}, fs);
        gk_array *fv_a = array_of(device, floats[t], 1, (int64_t[]){7}, fv);
        check_search(fs_a, fv_a, fl, fr, 7, gk_dtype_name(floats[t]));
        gk_array_free(fs_a);
        gk_array_free(fv_a);
    }
    /* mixed dtypes promote: int32 table, float32 values (float64 compares) */
    gk_array *s3 = array_of(device, GK_INT32, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    gk_array *v3 = array_of(device, GK_FLOAT32, 1, (int64_t[]){4}, (double[]){1.5, 2, 3.5, NAN});
    check_search(s3, v3, (double[]){1, 1, 3, 3}, (double[]){1, 2, 3, 3}, 4, "int32 in float32");
    /* int64 values beyond int32 into an int32 table */
    gk_array *v64 = array_of(device, GK_INT64, 1, (int64_t[]){3},
                             (double[]){4294967298.0, -4294967296.0, 2});
    check_search(s3, v64, (double[]){3, 0, 1}, (double[]){3, 0, 2}, 3, "int64 in int32");
    /* uint8: values above 127 compare unsigned */
    gk_array *su = array_of(device, GK_UINT8, 1, (int64_t[]){4}, (double[]){1, 100, 200, 250});
    gk_array *vu = array_of(device, GK_UINT8, 1, (int64_t[]){4}, (double[]){0, 150, 200, 255});
    check_search(su, vu, (double[]){0, 2, 2, 4}, (double[]){0, 2, 3, 4}, 4, "uint8");
    /* bool */
    gk_array *sb = array_of(device, GK_BOOL, 1, (int64_t[]){3}, (double[]){0, 0, 1});
    gk_array *vb = array_of(device, GK_BOOL, 1, (int64_t[]){2}, (double[]){0, 1});
    check_search(sb, vb, (double[]){0, 2}, (double[]){2, 3}, 2, "bool");
    /* 2-d and transposed values keep their shape */
    gk_array *v2 = array_of(device, GK_INT32, 2, (int64_t[]){2, 3}, (double[]){0, 2, 8, 5, 6, 1});
    gk_array *out = NULL;
    CHECK_OK(gk_searchsorted(s, v2, false, &out));
    check_shape(out, 2, (int64_t[]){2, 3}, "searchsorted of 2-d values");
    CHECK_VALUES(out, ((double[]){0, 1, 6, 4, 5, 0}), 6, 0);
    gk_array_free(out);
    gk_array *v2t = transposed(v2); /* 0 5 / 2 6 / 8 1 */
    CHECK_OK(gk_searchsorted(s, v2t, true, &out));
    check_shape(out, 2, (int64_t[]){3, 2}, "searchsorted of transposed values");
    CHECK_VALUES(out, ((double[]){0, 5, 4, 5, 6, 1}), 6, 0);
    gk_array_free(out);
    /* a reversed descending table is ascending (stride -1); a strided one */
    gk_array *desc = array_of(device, GK_FLOAT32, 1, (int64_t[]){4}, (double[]){9, 7, 5, 3});
    gk_array *asc = reversed(desc, 0);
    gk_array *v4 = array_of(device, GK_FLOAT32, 1, (int64_t[]){2}, (double[]){4, 9});
    check_search(asc, v4, (double[]){1, 3}, (double[]){1, 4}, 2, "a reversed table");
    gk_array *evens = NULL, *every = counting(device, GK_INT64, 1, (int64_t[]){20});
    CHECK_OK(gk_slice(every, 0, 0, 20, 2, &evens)); /* 0 2 ... 18 */
    gk_array *v5 = array_of(device, GK_INT64, 1, (int64_t[]){4}, (double[]){3, 4, -1, 19});
    check_search(evens, v5, (double[]){2, 2, 0, 10}, (double[]){2, 3, 0, 10}, 4,
                 "a strided table");
    /* an empty table, empty values, 0-d values */
    gk_array *nothing = NULL;
    CHECK_OK(gk_zeros(device, GK_INT32, 1, (int64_t[]){0}, &nothing));
    check_search(nothing, v, (double[]){0, 0, 0, 0, 0, 0, 0}, (double[]){0, 0, 0, 0, 0, 0, 0},
                 7, "an empty table");
    CHECK_OK(gk_searchsorted(s, nothing, false, &out));
    check_shape(out, 1, (int64_t[]){0}, "searchsorted of no values");
    gk_array_free(out);
    gk_array *three = NULL;
    CHECK_OK(gk_scalar(device, GK_INT32, 2, &three));
    CHECK_OK(gk_searchsorted(s, three, true, &out));
    check_shape(out, 0, NULL, "searchsorted of a 0-d value");
    CHECK_VALUES(out, ((double[]){4}), 1, 0);
    gk_array_free(out);
    /* errors */
    CHECK_FAILS(gk_searchsorted(v2, v, false, &out), GK_ERR_INVALID_ARGUMENT, "must be 1-d");
    CHECK_FAILS(gk_searchsorted(NULL, v, false, &out), GK_ERR_INVALID_ARGUMENT, "NULL");

    /* large: LARGE values into a table of 300, against a plain count */
    double *table = malloc(sizeof(double) * 300), *values = malloc(sizeof(double) * LARGE);
    double *left = malloc(sizeof(double) * LARGE), *right = malloc(sizeof(double) * LARGE);
    for (int i = 0; i < 300; i++)
        table[i] = (double)(i / 3 * 2); /* 0 0 0 2 2 2 4 ... */
    for (int64_t i = 0; i < LARGE; i++) {
        values[i] = (double)((i * 7919) % 210) - 5;
        int64_t l = 0, r = 0;
        for (int k = 0; k < 300; k++) {
            l += table[k] < values[i];
            r += table[k] <= values[i];
        }
        left[i] = (double)l;
        right[i] = (double)r;
    }
    gk_array *big_table = array_of(device, GK_INT32, 1, (int64_t[]){300}, table);
    gk_array *big_values = array_of(device, GK_FLOAT32, 1, (int64_t[]){LARGE}, values);
    check_search(big_table, big_values, left, right, LARGE, "many values");
    free(table);
    free(values);
    free(left);
    free(right);

    gk_array_free(s);
    gk_array_free(v);
    gk_array_free(s3);
    gk_array_free(v3);
    gk_array_free(v64);
    gk_array_free(su);
    gk_array_free(vu);
    gk_array_free(sb);
    gk_array_free(vb);
    gk_array_free(v2);
    gk_array_free(v2t);
    gk_array_free(desc);
    gk_array_free(asc);
    gk_array_free(v4);
    gk_array_free(evens);
    gk_array_free(every);
    gk_array_free(v5);
    gk_array_free(nothing);
    gk_array_free(three);
    gk_array_free(big_table);
    gk_array_free(big_values);
}

/* --- element moves of 2- and 8-byte integers, bit for bit (CPU) --- */

static void test_cpu_wide_integers(void)
{
    gk_device cpu = gk_device_cpu();
    gk_array *out = NULL;
    /* uint64 beyond int64 and double precision */
    uint64_t u[4] = {UINT64_MAX, 1, (uint64_t)1 << 63, ((uint64_t)1 << 53) + 1};
    gk_array *a = NULL;
    CHECK_OK(gk_from_host(cpu, GK_UINT64, 1, (int64_t[]){4}, u, &a));
    gk_array *idx = NULL;
    CHECK_OK(gk_from_host(cpu, GK_INT64, 1, (int64_t[]){3}, (int64_t[]){3, -4, 2}, &idx));
    CHECK_OK(gk_take(a, idx, 0, &out));
    uint64_t got[4] = {0};
    CHECK_OK(gk_to_host(out, got, sizeof got));
    CHECK(got[0] == u[3] && got[1] == u[0] && got[2] == u[2], "take of uint64: %llx %llx %llx",
          (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2]);
    gk_array_free(out);
    /* put into a reversed uint64 view */
    gk_array *r = reversed(a, 0); /* u3 u2 u1 u0 */
    gk_array *one = NULL, *value = NULL;
    CHECK_OK(gk_from_host(cpu, GK_INT64, 1, (int64_t[]){1}, (int64_t[]){0}, &one));
    uint64_t big = UINT64_MAX - 2;
    CHECK_OK(gk_from_host(cpu, GK_UINT64, 1, (int64_t[]){1}, &big, &value));
    CHECK_OK(gk_put(r, one, 0, value));
    CHECK_OK(gk_to_host(a, got, sizeof got));
    CHECK(got[3] == UINT64_MAX - 2 && got[0] == UINT64_MAX, "put of uint64");
    /* searchsorted compares uint64 unsigned */
    uint64_t table[3] = {1, (uint64_t)1 << 63, UINT64_MAX};
    uint64_t probe[3] = {((uint64_t)1 << 63) + 1, 0, UINT64_MAX};
    gk_array *t = NULL, *p = NULL;
    CHECK_OK(gk_from_host(cpu, GK_UINT64, 1, (int64_t[]){3}, table, &t));
    CHECK_OK(gk_from_host(cpu, GK_UINT64, 1, (int64_t[]){3}, probe, &p));
    CHECK_OK(gk_searchsorted(t, p, false, &out));
    int64_t where[3] = {0};
    CHECK_OK(gk_to_host(out, where, sizeof where));
    CHECK(where[0] == 2 && where[1] == 0 && where[2] == 2, "searchsorted of uint64: %lld %lld %lld",
          (long long)where[0], (long long)where[1], (long long)where[2]);
    gk_array_free(out);
    /* int16 along each axis of a (2, 3) array */
    int16_t h[6] = {-32768, 7, 32767, -1, 0, 12345};
    gk_array *s = NULL;
    CHECK_OK(gk_from_host(cpu, GK_INT16, 2, (int64_t[]){2, 3}, h, &s));
    gk_array *cols = NULL;
    CHECK_OK(gk_from_host(cpu, GK_INT64, 1, (int64_t[]){2}, (int64_t[]){-1, 0}, &cols));
    CHECK_OK(gk_take(s, cols, 1, &out));
    int16_t small[4] = {0};
    CHECK_OK(gk_to_host(out, small, sizeof small));
    CHECK(small[0] == 32767 && small[1] == -32768 && small[2] == 12345 && small[3] == -1,
          "take of int16 along axis 1");
    gk_array_free(out);
    CHECK_OK(gk_take(s, cols, 0, &out)); /* rows 1 and 0 */
    int16_t rows[6] = {0};
    CHECK_OK(gk_to_host(out, rows, sizeof rows));
    CHECK(rows[0] == -1 && rows[2] == 12345 && rows[3] == -32768 && rows[5] == 32767,
          "take of int16 along axis 0");
    gk_array_free(out);
    gk_array_free(a);
    gk_array_free(idx);
    gk_array_free(r);
    gk_array_free(one);
    gk_array_free(value);
    gk_array_free(t);
    gk_array_free(p);
    gk_array_free(s);
    gk_array_free(cols);
}

int main(void)
{
    FOR_EACH_DEVICE(test_take_basic);
    FOR_EACH_DEVICE(test_take_views);
    FOR_EACH_DEVICE(test_take_errors);
    FOR_EACH_DEVICE(test_take_along_axis);
    FOR_EACH_DEVICE(test_put);
    FOR_EACH_DEVICE(test_flatnonzero);
    FOR_EACH_DEVICE(test_mask_select);
    FOR_EACH_DEVICE(test_mask_assign);
    FOR_EACH_DEVICE(test_searchsorted);
    test_cpu_wide_integers();
    CHECK_DONE();
}
