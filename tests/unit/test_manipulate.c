/* The manipulation functions (src/compute/manipulate.c) on every device:
 * each against values worked out here from NumPy's definitions, on
 * contiguous, transposed and reversed inputs, empty and 0-d arrays, mixed
 * dtypes for the joins, and every error path. */
#include "array_check.h"

#include <stdint.h>

#define COUNT(array) ((int)(sizeof(array) / sizeof *(array)))

/* 0, 1, 2, ... as float64 of this shape. */
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

static void test_concat_stack(gk_device device)
{
    /* a (2, 3) = 0..5 and b (2, 2) = 0..3 along axis 1 */
    gk_array *a = counting(device, GK_FLOAT32, 2, (int64_t[]){2, 3});
    gk_array *b = counting(device, GK_INT32, 2, (int64_t[]){2, 2});
    gk_array *out = NULL;
    CHECK_OK(gk_concat(2, (const gk_array *[]){a, b}, 1, &out));
    check_shape(out, 2, (int64_t[]){2, 5}, "concat axis 1");
    CHECK(out && gk_array_dtype(out) == GK_FLOAT64, "float32 with int32 promotes to float64");
    CHECK_VALUES(out, ((double[]){0, 1, 2, 0, 1, 3, 4, 5, 2, 3}), 10, 0);
    gk_array_free(out);
    /* negative axis, a transposed input */
    gk_array *at = NULL;
    CHECK_OK(gk_transpose(a, NULL, &at)); /* (3, 2): 0 3 / 1 4 / 2 5 */
    CHECK_OK(gk_concat(2, (const gk_array *[]){at, b}, -2, &out));
    check_shape(out, 2, (int64_t[]){5, 2}, "concat axis -2");
    CHECK_VALUES(out, ((double[]){0, 3, 1, 4, 2, 5, 0, 1, 2, 3}), 10, 0);
    gk_array_free(out);
    /* axis None flattens each */
    CHECK_OK(gk_concat(2, (const gk_array *[]){at, b}, GK_ALL_AXES, &out));
    check_shape(out, 1, (int64_t[]){10}, "concat axis None");
    CHECK_VALUES(out, ((double[]){0, 3, 1, 4, 2, 5, 0, 1, 2, 3}), 10, 0);
    gk_array_free(out);
    /* empty pieces */
    gk_array *empty = NULL;
    CHECK_OK(gk_zeros(device, GK_FLOAT32, 2, (int64_t[]){2, 0}, &empty));
    CHECK_OK(gk_concat(3, (const gk_array *[]){empty, a, empty}, 1, &out));
    CHECK_VALUES(out, ((double[]){0, 1, 2, 3, 4, 5}), 6, 0);
    gk_array_free(out);
    /* stack: a new axis */
    gk_array *c = counting(device, GK_FLOAT32, 2, (int64_t[]){2, 3});
    CHECK_OK(gk_stack(2, (const gk_array *[]){a, c}, 0, &out));
    check_shape(out, 3, (int64_t[]){2, 2, 3}, "stack axis 0");
    CHECK_VALUES(out, ((double[]){0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}), 12, 0);
    gk_array_free(out);
    CHECK_OK(gk_stack(2, (const gk_array *[]){a, c}, -1, &out));
    check_shape(out, 3, (int64_t[]){2, 3, 2}, "stack axis -1");
    CHECK_VALUES(out, ((double[]){0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}), 12, 0);
    gk_array_free(out);
    /* errors */
    CHECK_FAILS(gk_concat(2, (const gk_array *[]){a, b}, 0, &out), GK_ERR_INVALID_ARGUMENT,
                "must match except along axis 0");
    CHECK_FAILS(gk_concat(0, NULL, 0, &out), GK_ERR_INVALID_ARGUMENT, "at least one");
    CHECK_FAILS(gk_concat(1, (const gk_array *[]){a}, 2, &out), GK_ERR_AXIS,
                "axis 2 is out of range");
    CHECK_FAILS(gk_stack(2, (const gk_array *[]){a, b}, 0, &out), GK_ERR_INVALID_ARGUMENT,
                "must be equal");
    CHECK_FAILS(gk_stack(2, (const gk_array *[]){a, c}, 3, &out), GK_ERR_AXIS,
                "out of range");
    CHECK(out == NULL, "no output on failure");
    gk_array_free(a);
    gk_array_free(b);
    gk_array_free(c);
    gk_array_free(at);
    gk_array_free(empty);
}

static void test_views(gk_device device)
{
    gk_array *a = counting(device, GK_INT32, 3, (int64_t[]){2, 3, 4});
    gk_array *out = NULL;
    /* select: a[1] and a[:, -1] */
    CHECK_OK(gk_index_axis(a, 0, 1, &out));
    check_shape(out, 2, (int64_t[]){3, 4}, "select axis 0");
    CHECK_VALUES(out, ((double[]){12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}), 12, 0);
    gk_array_free(out);
    CHECK_OK(gk_index_axis(a, 1, -1, &out));
    CHECK_VALUES(out, ((double[]){8, 9, 10, 11, 20, 21, 22, 23}), 8, 0);
    gk_array_free(out);
    CHECK_FAILS(gk_index_axis(a, 2, 4, &out), GK_ERR_OUT_OF_RANGE, "index 4 is out of range");
    /* flip: all axes, then one */
    gk_array *m = counting(device, GK_FLOAT64, 2, (int64_t[]){2, 3});
    CHECK_OK(gk_flip(m, 0, NULL, &out));
    CHECK_VALUES(out, ((double[]){5, 4, 3, 2, 1, 0}), 6, 0);
    /* flipping a flipped view reads the original order */
    gk_array *twice = NULL;
    CHECK_OK(gk_flip(out, 1, (int[]){-1}, &twice));
    CHECK_VALUES(twice, ((double[]){3, 4, 5, 0, 1, 2}), 6, 0);
    gk_array_free(twice);
    gk_array_free(out);
    CHECK_FAILS(gk_flip(m, 2, (int[]){0, -2}, &out), GK_ERR_INVALID_ARGUMENT, "listed twice");
    /* moveaxis: (2, 3, 4) with axis 0 to the end is (3, 4, 2) */
    CHECK_OK(gk_moveaxis(a, 1, (int[]){0}, (int[]){-1}, &out));
    check_shape(out, 3, (int64_t[]){3, 4, 2}, "moveaxis");
    double moved[24];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 2; k++)
                moved[(i * 4 + j) * 2 + k] = k * 12 + i * 4 + j;
    CHECK_VALUES(out, moved, 24, 0);
    gk_array_free(out);
    CHECK_OK(gk_moveaxis(a, 2, (int[]){0, 1}, (int[]){2, 0}, &out));
    check_shape(out, 3, (int64_t[]){3, 4, 2}, "moveaxis two");
    gk_array_free(out);
    /* squeeze and expand_dims */
    gk_array *row = counting(device, GK_FLOAT32, 3, (int64_t[]){1, 3, 1});
    CHECK_OK(gk_squeeze(row, 2, (int[]){0, -1}, &out));
    check_shape(out, 1, (int64_t[]){3}, "squeeze");
    CHECK_VALUES(out, ((double[]){0, 1, 2}), 3, 0);
    gk_array *back = NULL;
    CHECK_OK(gk_expand_dims(out, 2, (int[]){0, 2}, &back));
    check_shape(back, 3, (int64_t[]){1, 3, 1}, "expand_dims two axes");
    gk_array_free(back);
    CHECK_OK(gk_expand_dims(out, 1, (int[]){-1}, &back));
    check_shape(back, 2, (int64_t[]){3, 1}, "expand_dims -1");
    gk_array_free(back);
    gk_array_free(out);
    CHECK_FAILS(gk_squeeze(row, 1, (int[]){1}, &out), GK_ERR_INVALID_ARGUMENT, "not 1");
    CHECK_FAILS(gk_expand_dims(row, 1, (int[]){5}, &out), GK_ERR_AXIS,
                "out of range");
    gk_array_free(row);
    gk_array_free(a);
    gk_array_free(m);
}

static void test_copies(gk_device device)
{
    gk_array *m = counting(device, GK_FLOAT32, 2, (int64_t[]){2, 3});
    gk_array *out = NULL;
    /* roll: flattened, along an axis, negative and large shifts, two axes */
    CHECK_OK(gk_roll(m, 0, (int64_t[]){2}, NULL, &out));
    check_shape(out, 2, (int64_t[]){2, 3}, "roll flattened");
    CHECK_VALUES(out, ((double[]){4, 5, 0, 1, 2, 3}), 6, 0);
    gk_array_free(out);
    CHECK_OK(gk_roll(m, 1, (int64_t[]){-1}, (int[]){1}, &out));
    CHECK_VALUES(out, ((double[]){1, 2, 0, 4, 5, 3}), 6, 0);
    gk_array_free(out);
    CHECK_OK(gk_roll(m, 1, (int64_t[]){7}, (int[]){1}, &out)); /* 7 mod 3 = 1 */
    CHECK_VALUES(out, ((double[]){2, 0, 1, 5, 3, 4}), 6, 0);
    gk_array_free(out);
    CHECK_OK(gk_roll(m, 2, (int64_t[]){1, 1}, (int[]){0, 1}, &out));
    CHECK_VALUES(out, ((double[]){5, 3, 4, 2, 0, 1}), 6, 0);
    gk_array_free(out);
    /* a reversed input */
    gk_array *flipped = NULL;
    CHECK_OK(gk_flip(m, 0, NULL, &flipped)); /* 5 4 3 / 2 1 0 */
    CHECK_OK(gk_roll(flipped, 1, (int64_t[]){1}, (int[]){1}, &out));
    CHECK_VALUES(out, ((double[]){3, 5, 4, 0, 2, 1}), 6, 0);
    gk_array_free(out);
    gk_array_free(flipped);
    /* tile: (2, 3) by (2,) and by (2, 1, 1) */
    CHECK_OK(gk_tile(m, 1, (int64_t[]){2}, &out));
    check_shape(out, 2, (int64_t[]){2, 6}, "tile");
    CHECK_VALUES(out, ((double[]){0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}), 12, 0);
    gk_array_free(out);
    CHECK_OK(gk_tile(m, 3, (int64_t[]){2, 1, 1}, &out));
    check_shape(out, 3, (int64_t[]){2, 2, 3}, "tile with more reps than axes");
    CHECK_VALUES(out, ((double[]){0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}), 12, 0);
    gk_array_free(out);
    /* repeat along an axis and flattened */
    CHECK_OK(gk_repeat(m, 2, 1, &out));
    check_shape(out, 2, (int64_t[]){2, 6}, "repeat axis 1");
    CHECK_VALUES(out, ((double[]){0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}), 12, 0);
    gk_array_free(out);
    CHECK_OK(gk_repeat(m, 2, 0, &out));
    CHECK_VALUES(out, ((double[]){0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}), 12, 0);
    gk_array_free(out);
    CHECK_OK(gk_repeat(m, 3, GK_ALL_AXES, &out));
    check_shape(out, 1, (int64_t[]){18}, "repeat flattened");
    gk_array_free(out);
    CHECK_OK(gk_repeat(m, 0, 1, &out));
    check_shape(out, 2, (int64_t[]){2, 0}, "repeat 0 times");
    gk_array_free(out);
    CHECK_FAILS(gk_repeat(m, -1, 0, &out), GK_ERR_INVALID_ARGUMENT, "must be >= 0");
    CHECK_FAILS(gk_tile(m, 1, (int64_t[]){-2}, &out), GK_ERR_INVALID_ARGUMENT, "negative");
    /* a 0-d array */
    gk_array *scalar = NULL;
    CHECK_OK(gk_scalar(device, GK_INT64, 7, &scalar));
    CHECK_OK(gk_tile(scalar, 1, (int64_t[]){3}, &out));
    CHECK_VALUES(out, ((double[]){7, 7, 7}), 3, 0);
    gk_array_free(out);
    CHECK_OK(gk_roll(scalar, 0, (int64_t[]){5}, NULL, &out));
    check_shape(out, 0, NULL, "roll of a 0-d array");
    CHECK_VALUES(out, ((double[]){7}), 1, 0);
    gk_array_free(out);
    gk_array_free(scalar);
    gk_array_free(m);
}

static void test_broadcast_shape(void)
{
    int ndim = 0;
    int64_t shape[GK_MAX_DIMS];
    const int64_t a[] = {8, 1, 6, 1}, b[] = {7, 1, 5};
    CHECK_OK(gk_broadcast_shape(2, (int[]){4, 3}, (const int64_t *[]){a, b}, &ndim, shape));
    CHECK(ndim == 4 && shape[0] == 8 && shape[1] == 7 && shape[2] == 6 && shape[3] == 5,
          "broadcast (8, 1, 6, 1) with (7, 1, 5)");
    CHECK_OK(gk_broadcast_shape(0, NULL, NULL, &ndim, shape));
    CHECK(ndim == 0, "no shapes: ()");
    const int64_t c[] = {2, 3}, d[] = {4};
    CHECK_FAILS(gk_broadcast_shape(2, (int[]){2, 1}, (const int64_t *[]){c, d}, &ndim, shape),
                GK_ERR_INVALID_ARGUMENT, "do not broadcast");
}

int main(void)
{
    FOR_EACH_DEVICE(test_concat_stack);
    FOR_EACH_DEVICE(test_views);
    FOR_EACH_DEVICE(test_copies);
    test_broadcast_shape();
    CHECK_DONE();
}
