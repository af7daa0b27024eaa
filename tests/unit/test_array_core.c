/* The array core on every device: devices and dtypes, creation, views
 * (reshape, transpose, slice, broadcast), copies between devices and back
 * to the host, and the errors of each. */
#include "array_check.h"

#include <limits.h>
#include <stdint.h>

static void test_device_names(void)
{
    gk_device d;
    char name[GK_DEVICE_NAME_MAX];
    const char *good[] = {"cpu", "cuda", "cuda:3", "opencl", "opencl:1:2"};
    const char *canonical[] = {"cpu", "cuda:0", "cuda:3", "opencl:0:0", "opencl:1:2"};
    for (int i = 0; i < 5; i++) {
        CHECK_OK(gk_device_parse(good[i], &d));
        CHECK(strcmp(gk_device_name(d, name, sizeof name), canonical[i]) == 0, "%s", name);
    }
    const char *bad[] = {"", "gpu", "cuda:", "cuda:-1", "cuda:1x", "opencl:1", "CPU"};
    for (int i = 0; i < 7; i++)
        CHECK_FAILS(gk_device_parse(bad[i], &d), GK_ERR_INVALID_ARGUMENT, "not a device name");
    CHECK(gk_device_count(GK_DEVICE_CPU) == 1, "one CPU");
    /* The default is the CPU unless a CUDA GPU is there; cuda:7 is not. */
    CHECK(gk_device_default().kind == GK_DEVICE_CPU || gk_device_count(GK_DEVICE_CUDA) > 0,
          "default");
    gk_array *a;
    int64_t shape[1] = {3};
    CHECK_FAILS(gk_zeros((gk_device){GK_DEVICE_CUDA, 7, 0}, GK_FLOAT32, 1, shape, &a),
                GK_ERR_NOT_FOUND, "cuda:7");
    char text[128];
    CHECK_OK(gk_device_describe(gk_device_cpu(), text, sizeof text));
    uint64_t free_bytes, total;
    CHECK_OK(gk_device_memory(gk_device_cpu(), &free_bytes, &total));
    CHECK(total > 0 && free_bytes <= total, "memory %llu of %llu", (unsigned long long)free_bytes,
          (unsigned long long)total);
}

static void test_dtypes(void)
{
    const char *names[GK_DTYPE_COUNT] = {"bool",   "uint8",  "int32",   "int64",   "float32",
                                         "float64", "int8",   "int16",   "uint16",  "uint32",
                                         "uint64",  "float16", "bfloat16", "complex64",
                                         "complex128"};
    const size_t sizes[GK_DTYPE_COUNT] = {1, 1, 4, 8, 4, 8, 1, 2, 2, 4, 8, 2, 2, 8, 16};
    for (int i = 0; i < GK_DTYPE_COUNT; i++) {
        gk_dtype t;
        CHECK_OK(gk_dtype_parse(names[i], &t));
        CHECK(t == (gk_dtype)i && gk_dtype_size(t) == sizes[i], "%s", names[i]);
        CHECK(strcmp(gk_dtype_name(t), names[i]) == 0, "%s", names[i]);
        CHECK(gk_dtype_is_unsigned(t) == (names[i][0] == 'u'), "%s unsigned", names[i]);
        CHECK(gk_dtype_is_integer(t) == (strstr(names[i], "int") != NULL), "%s integer",
              names[i]);
        CHECK(gk_dtype_is_half(t) == (sizes[i] == 2 && strstr(names[i], "float") != NULL),
              "%s half", names[i]);
        CHECK(gk_dtype_is_complex(t) == (strstr(names[i], "complex") != NULL), "%s complex",
              names[i]);
    }
    gk_dtype t;
    CHECK_FAILS(gk_dtype_parse("float128", &t), GK_ERR_INVALID_ARGUMENT, "float128");
    /* NumPy 2's np.can_cast(row, column, 'safe'), in gk_dtype order; for
     * bfloat16, which NumPy lacks: it holds bool and the 8-bit integers,
     * and goes to float32 and float64 only */
    static const char *const safe[GK_DTYPE_COUNT] = {
        "111111111111111", "011111011111111", "001101000000001", "000101000000001",
        "000011000000011", "000001000000001", "001111110001111", "001111010000011",
        "001111001110011", "000101000110001", "000001000010001", "000011000001011",
        "000011000000111", "000000000000011", "000000000000001",
    };
    for (int from = 0; from < GK_DTYPE_COUNT; from++)
        for (int to = 0; to < GK_DTYPE_COUNT; to++)
            CHECK(gk_can_cast((gk_dtype)from, (gk_dtype)to) == (safe[from][to] == '1'),
                  "can_cast %s -> %s", names[from], names[to]);
    /* the float integers compute in (NumPy's: float16 for bool and 8 bits) */
    const gk_dtype floats[GK_DTYPE_COUNT] = {
        GK_FLOAT16, GK_FLOAT16, GK_FLOAT64, GK_FLOAT64, GK_FLOAT32, GK_FLOAT64, GK_FLOAT16,
        GK_FLOAT32, GK_FLOAT32, GK_FLOAT64, GK_FLOAT64, GK_FLOAT16, GK_BFLOAT16,
        GK_COMPLEX64, GK_COMPLEX128};
    for (int i = 0; i < GK_DTYPE_COUNT; i++)
        CHECK(gk_float_for((gk_dtype)i) == floats[i], "float for %s", names[i]);
    /* gk_promote_types is checked pair by pair through the ops in
     * test_elementwise.c; here its symmetry and a few of NumPy's rules */
    for (int a = 0; a < GK_DTYPE_COUNT; a++)
        for (int b = 0; b < GK_DTYPE_COUNT; b++)
            CHECK(gk_promote_types((gk_dtype)a, (gk_dtype)b) ==
                      gk_promote_types((gk_dtype)b, (gk_dtype)a),
                  "promote %s %s symmetric", names[a], names[b]);
    CHECK(gk_promote_types(GK_INT8, GK_UINT8) == GK_INT16, "int8 + uint8");
    CHECK(gk_promote_types(GK_INT64, GK_UINT64) == GK_FLOAT64, "int64 + uint64");
    CHECK(gk_promote_types(GK_INT16, GK_FLOAT32) == GK_FLOAT32, "int16 + float32");
    CHECK(gk_promote_types(GK_UINT32, GK_FLOAT32) == GK_FLOAT64, "uint32 + float32");
    CHECK(gk_promote_types(GK_FLOAT16, GK_BFLOAT16) == GK_FLOAT32, "float16 + bfloat16");
    CHECK(gk_promote_types(GK_INT16, GK_FLOAT16) == GK_FLOAT32, "int16 + float16");
    CHECK(gk_promote_types(GK_UINT8, GK_BFLOAT16) == GK_BFLOAT16, "uint8 + bfloat16");
    /* NumPy 2's result_type with complex64, in gk_dtype order (bfloat16:
     * complex64 holds it) */
    static const gk_dtype with_complex64[GK_DTYPE_COUNT] = {
        GK_COMPLEX64,  GK_COMPLEX64,  GK_COMPLEX128, GK_COMPLEX128, GK_COMPLEX64,
        GK_COMPLEX128, GK_COMPLEX64,  GK_COMPLEX64,  GK_COMPLEX64,  GK_COMPLEX128,
        GK_COMPLEX128, GK_COMPLEX64,  GK_COMPLEX64,  GK_COMPLEX64,  GK_COMPLEX128};
    for (int i = 0; i < GK_DTYPE_COUNT; i++)
        CHECK(gk_promote_types((gk_dtype)i, GK_COMPLEX64) == with_complex64[i],
              "%s + complex64", names[i]);
}

static void test_creation(gk_device device)
{
    int64_t shape[2] = {2, 3};
    for (int t = 0; t < GK_DTYPE_COUNT; t++) {
        if (gk_dtype_is_complex((gk_dtype)t))
            continue; /* complex: tests/package/test_complex.py */
        gk_array *a = NULL;
        CHECK_OK(gk_full(device, (gk_dtype)t, 2, shape, 7, &a));
        if (!a)
            continue;
        double sevens[6] = {7, 7, 7, 7, 7, 7}, ones[6] = {1, 1, 1, 1, 1, 1};
        CHECK_VALUES(a, t == GK_BOOL ? ones : sevens, 6, 0);
        CHECK(gk_array_ndim(a) == 2 && gk_array_shape(a)[1] == 3 && gk_array_size(a) == 6,
              "shape");
        CHECK(gk_array_nbytes(a) == 6 * gk_dtype_size((gk_dtype)t), "nbytes");
        CHECK(gk_array_is_contiguous(a), "contiguous");
        gk_array_free(a);
    }
    gk_array *a;
    CHECK_OK(gk_zeros(device, GK_INT64, 2, shape, &a));
    double zeros[6] = {0};
    CHECK_VALUES(a, zeros, 6, 0);
    gk_array_free(a);

    CHECK_OK(gk_arange(device, GK_INT32, 2, 11, 3, &a));
    CHECK_VALUES(a, ((double[]){2, 5, 8}), 3, 0);
    gk_array_free(a);
    CHECK_OK(gk_arange(device, GK_FLOAT64, 1, 0, -0.25, &a));
    CHECK_VALUES(a, ((double[]){1, 0.75, 0.5, 0.25}), 4, 0);
    gk_array_free(a);
    CHECK_OK(gk_arange(device, GK_FLOAT32, 5, 5, 1, &a));
    CHECK(gk_array_size(a) == 0 && gk_array_ndim(a) == 1, "empty arange");
    gk_array_free(a);
    CHECK_FAILS(gk_arange(device, GK_FLOAT32, 0, 1, 0, &a), GK_ERR_INVALID_ARGUMENT, "step");

    CHECK_OK(gk_linspace(device, GK_FLOAT64, 0, 1, 5, true, &a));
    CHECK_VALUES(a, ((double[]){0, 0.25, 0.5, 0.75, 1}), 5, 0);
    gk_array_free(a);
    CHECK_OK(gk_linspace(device, GK_FLOAT32, 0, 0.3, 4, true, &a));
    double last;
    CHECK_OK(gk_item(a, (int64_t[]){-1}, &last));
    CHECK(last == (double)0.3f, "linspace ends at stop exactly: %.9g", last);
    gk_array_free(a);
    /* Without the endpoint: exactly the first num values of num + 1 with it. */
    gk_array *with = NULL;
    CHECK_OK(gk_linspace(device, GK_FLOAT64, -1.0e17, 3.3e16 / 7, 9, false, &a));
    CHECK_OK(gk_linspace(device, GK_FLOAT64, -1.0e17, 3.3e16 / 7, 10, true, &with));
    double without_values[9], with_values[10];
    CHECK_OK(gk_to_host(a, without_values, sizeof without_values));
    CHECK_OK(gk_to_host(with, with_values, sizeof with_values));
    CHECK(memcmp(without_values, with_values, sizeof without_values) == 0,
          "endpoint=false is the head of num + 1 values");
    gk_array_free(a);
    gk_array_free(with);

    CHECK_OK(gk_eye(device, GK_FLOAT32, 3, &a));
    CHECK_VALUES(a, ((double[]){1, 0, 0, 0, 1, 0, 0, 0, 1}), 9, 0);
    gk_array_free(a);

    int32_t host[6] = {1, -2, 3, -4, 5, -6};
    CHECK_OK(gk_from_host(device, GK_INT32, 2, shape, host, &a));
    CHECK_VALUES(a, ((double[]){1, -2, 3, -4, 5, -6}), 6, 0);
    double v;
    CHECK_OK(gk_item(a, (int64_t[]){1, -1}, &v));
    CHECK(v == -6, "item %g", v);
    CHECK_FAILS(gk_item(a, (int64_t[]){2, 0}, &v), GK_ERR_OUT_OF_RANGE, "out of range");
    gk_array_free(a);

    /* 0-d and empty arrays. */
    CHECK_OK(gk_scalar(device, GK_FLOAT64, 2.5, &a));
    CHECK(gk_array_ndim(a) == 0 && gk_array_size(a) == 1, "0-d");
    CHECK_OK(gk_item(a, NULL, &v));
    CHECK(v == 2.5, "scalar %g", v);
    gk_array_free(a);
    int64_t empty[2] = {0, 4};
    CHECK_OK(gk_ones(device, GK_FLOAT32, 2, empty, &a));
    CHECK(gk_array_size(a) == 0 && gk_array_nbytes(a) == 0, "empty");
    CHECK_OK(gk_to_host(a, NULL, 0));
    gk_array_free(a);

    int64_t bad[1] = {-1};
    CHECK_FAILS(gk_zeros(device, GK_FLOAT32, 1, bad, &a), GK_ERR_INVALID_ARGUMENT, "negative");
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHECK_FAILS(gk_zeros(device, GK_FLOAT32, 9, nine, &a), GK_ERR_INVALID_ARGUMENT,
                "dimensions");
    int64_t huge[2] = {INT64_MAX / 2, 4};
    CHECK_FAILS(gk_zeros(device, GK_FLOAT32, 2, huge, &a), GK_ERR_INVALID_ARGUMENT, "too many");
    int64_t wraps[1] = {(int64_t)1 << 61}; /* 2^61 float64 = 2^64 bytes */
    CHECK_FAILS(gk_empty(device, GK_FLOAT64, 1, wraps, &a), GK_ERR_INVALID_ARGUMENT, "too many");
    CHECK_FAILS(gk_full(device, (gk_dtype)17, 1, shape, 0, &a), GK_ERR_INVALID_ARGUMENT,
                "invalid dtype");
    /* Out-of-range values saturate (NaN is 0) instead of being undefined. */
    CHECK_OK(gk_full(device, GK_INT32, 1, shape, 1e10, &a));
    CHECK_VALUES(a, ((double[]){2147483647, 2147483647}), 2, 0);
    gk_array_free(a);
    CHECK_OK(gk_full(device, GK_UINT8, 1, shape, NAN, &a));
    CHECK_VALUES(a, ((double[]){0, 0}), 2, 0);
    gk_array_free(a);
}

/* A 3x4 float64 array holding 0..11. */
static gk_array *twelve(gk_device device)
{
    gk_array *flat = NULL, *a = NULL;
    if (gk_arange(device, GK_FLOAT64, 0, 12, 1, &flat) == GK_OK)
        gk_reshape(flat, 2, (int64_t[]){3, 4}, &a);
    gk_array_free(flat);
    return a;
}

static void test_views(gk_device device)
{
    gk_array *a = twelve(device), *t = NULL, *s = NULL, *r = NULL, *b = NULL;
    CHECK(a != NULL, "%s", gk_last_error());
    if (!a)
        return;
    CHECK_OK(gk_transpose(a, NULL, &t));
    CHECK_VALUES(t, ((double[]){0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}), 12, 0);
    CHECK(!gk_array_is_contiguous(t), "a transpose is not contiguous");
    /* Reshaping a transpose needs a copy; its values follow the view. */
    CHECK_OK(gk_reshape(t, 1, (int64_t[]){-1}, &r));
    CHECK_VALUES(r, ((double[]){0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}), 12, 0);
    gk_array_free(r);

    CHECK_OK(gk_slice(a, 1, 3, -5, -2, &s)); /* a[:, 3::-2] */
    CHECK(gk_array_shape(s)[1] == 2, "sliced length %lld", (long long)gk_array_shape(s)[1]);
    CHECK_VALUES(s, ((double[]){3, 1, 7, 5, 11, 9}), 6, 0);
    gk_array_free(s);
    CHECK_OK(gk_slice(a, 0, 1, 100, 1, &s)); /* clamped */
    CHECK_VALUES(s, ((double[]){4, 5, 6, 7, 8, 9, 10, 11}), 8, 0);
    gk_array_free(s);
    CHECK_OK(gk_slice(a, -1, 2, 1, 1, &s)); /* empty */
    CHECK(gk_array_size(s) == 0, "empty slice");
    gk_array_free(s);
    CHECK_FAILS(gk_slice(a, 2, 0, 1, 1, &s), GK_ERR_AXIS, "axis 2 is out of range");
    CHECK_FAILS(gk_slice(a, 0, 0, 1, 0, &s), GK_ERR_INVALID_ARGUMENT, "step");

    /* A view shares memory: writing through it changes the base. */
    CHECK_OK(gk_slice(a, 0, 2, 3, 1, &s));
    gk_array *minus;
    CHECK_OK(gk_full(device, GK_INT32, 0, NULL, -1, &minus));
    CHECK_OK(gk_assign(s, minus));
    CHECK_VALUES(a, ((double[]){0, 1, 2, 3, 4, 5, 6, 7, -1, -1, -1, -1}), 12, 0);
    gk_array_free(minus);
    gk_array_free(s);

    CHECK_OK(gk_reshape(a, 3, (int64_t[]){2, 1, 6}, &r));
    CHECK(gk_array_is_contiguous(r), "reshape of a contiguous array is a view");
    gk_array_free(r);
    CHECK_FAILS(gk_reshape(a, 2, (int64_t[]){5, -1}, &r), GK_ERR_INVALID_ARGUMENT,
                "cannot reshape an array of shape (3, 4)");

    gk_array *row;
    CHECK_OK(gk_slice(a, 0, 0, 1, 1, &row));
    CHECK_OK(gk_broadcast_to(row, 3, (int64_t[]){2, 3, 4}, &b));
    CHECK(gk_array_strides(b)[0] == 0 && gk_array_strides(b)[1] == 0, "broadcast strides");
    CHECK_VALUES(b, ((double[]){0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3,
                                0, 1, 2, 3}),
                 24, 0);
    gk_array_free(b);
    CHECK_FAILS(gk_broadcast_to(a, 2, (int64_t[]){3, 5}, &b), GK_ERR_INVALID_ARGUMENT,
                "cannot broadcast shape (3, 4) to (3, 5)");
    gk_array_free(row);

    gk_array_free(t);
    int axes[2] = {0, 0};
    CHECK_FAILS(gk_transpose(a, axes, &t), GK_ERR_INVALID_ARGUMENT, "permutation");
    CHECK(t == NULL, "no output on failure");
    gk_array_free(a);
}

static void test_copies(gk_device device)
{
    gk_array *a = twelve(device), *t = NULL, *c = NULL, *moved = NULL, *back = NULL;
    if (!a)
        return;
    CHECK_OK(gk_transpose(a, NULL, &t));
    CHECK_OK(gk_contiguous(t, &c));
    CHECK(gk_array_is_contiguous(c), "contiguous copy");
    CHECK_VALUES(c, ((double[]){0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}), 12, 0);

    /* to(): a copy on the other device; the original is untouched. */
    CHECK_OK(gk_to(t, gk_device_cpu(), &moved));
    CHECK(gk_device_equal(gk_array_device(moved), gk_device_cpu()), "on the CPU");
    CHECK_OK(gk_to(moved, device, &back));
    CHECK_VALUES(back, ((double[]){0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}), 12, 0);

    double buffer[12];
    CHECK_FAILS(gk_to_host(a, buffer, sizeof buffer - 1), GK_ERR_INVALID_ARGUMENT, "buffer");

    /* wrap_host: no copy, writes show through. */
    float memory[4] = {1, 2, 3, 4};
    gk_array *wrapped;
    CHECK_OK(gk_wrap_host(GK_FLOAT32, 1, (int64_t[]){4}, memory, &wrapped));
    memory[2] = 30;
    CHECK_VALUES(wrapped, ((double[]){1, 2, 30, 4}), 4, 0);
    gk_array_free(wrapped);
    CHECK(memory[3] == 4, "the caller's memory outlives the array");

    /* Casting copies through assign: float64 -> int32 truncates; NaN -> 0. */
    gk_array *ints;
    CHECK_OK(gk_zeros(device, GK_INT32, 1, (int64_t[]){3}, &ints));
    double odd[3] = {2.9, -2.9, NAN};
    gk_array *src;
    CHECK_OK(gk_from_host(device, GK_FLOAT64, 1, (int64_t[]){3}, odd, &src));
    CHECK_OK(gk_assign(ints, src));
    CHECK_VALUES(ints, ((double[]){2, -2, 0}), 3, 0);
    gk_array_free(src);
    gk_array_free(ints);

    /* Overlapping assign reads everything first: a[1:] = a[:-1]. */
    gk_array *line, *head, *tail;
    CHECK_OK(gk_arange(device, GK_INT64, 0, 6, 1, &line));
    CHECK_OK(gk_slice(line, 0, 1, 6, 1, &tail));
    CHECK_OK(gk_slice(line, 0, 0, 5, 1, &head));
    CHECK_OK(gk_assign(tail, head));
    CHECK_VALUES(line, ((double[]){0, 0, 1, 2, 3, 4}), 6, 0);
    /* A broadcast view cannot be written. */
    gk_array *stretched;
    CHECK_OK(gk_broadcast_to(head, 2, (int64_t[]){3, 5}, &stretched));
    CHECK_FAILS(gk_assign(stretched, head), GK_ERR_INVALID_ARGUMENT, "view of a broadcast array");
    gk_array_free(stretched);
    gk_array_free(head);
    gk_array_free(tail);
    gk_array_free(line);

    gk_array_free(a);
    gk_array_free(t);
    gk_array_free(c);
    gk_array_free(moved);
    gk_array_free(back);
}

/* gk_wrap's release callback: counts its calls in the int it is given. */
static void count_release(void *context)
{
    (*(int *)context)++;
}

/* gk_wrap: foreign memory with any strides, read in place (and copied to
 * `device` right), released exactly once after the last view. */
static void test_wrap(gk_device device)
{
    double memory[12];
    for (int i = 0; i < 12; i++)
        memory[i] = i;
    int released = 0;
    gk_array *a = NULL, *view = NULL, *moved = NULL;

    /* C order (strides NULL), then a view outliving the array. */
    CHECK_OK(gk_wrap(gk_device_cpu(), GK_FLOAT64, 2, (int64_t[]){3, 4}, NULL, memory,
                     count_release, &released, &a));
    if (!a)
        return;
    CHECK(gk_array_data(a) == memory, "data is element [0, 0]");
    CHECK_OK(gk_slice(a, 1, 1, 4, 2, &view));
    CHECK(gk_array_data(view) == &memory[1], "a view's data is its first element");
    gk_array_free(a);
    CHECK(released == 0, "released while a view is left");
    memory[3] = 33;
    CHECK_VALUES(view, ((double[]){1, 33, 5, 7, 9, 11}), 6, 0);
    gk_array_free(view);
    CHECK(released == 1, "released %d times after the last view", released);
    memory[3] = 3;

    /* Strided: every other column, read through and copied to the device. */
    CHECK_OK(gk_wrap(gk_device_cpu(), GK_FLOAT64, 2, (int64_t[]){3, 2}, (int64_t[]){4, 2},
                     memory, count_release, &released, &a));
    CHECK(!gk_array_is_contiguous(a), "strided");
    CHECK_VALUES(a, ((double[]){0, 2, 4, 6, 8, 10}), 6, 0);
    CHECK_OK(gk_to(a, device, &moved));
    CHECK_VALUES(moved, ((double[]){0, 2, 4, 6, 8, 10}), 6, 0);
    gk_array_free(moved);
    gk_array_free(a);
    CHECK(released == 2, "released %d times", released);

    /* Negative strides: element [0, 0] is the last of the memory; the rows
     * and columns run backwards (NumPy's a[::-1, ::-1]). */
    CHECK_OK(gk_wrap(gk_device_cpu(), GK_FLOAT64, 2, (int64_t[]){3, 4}, (int64_t[]){-4, -1},
                     &memory[11], count_release, &released, &a));
    CHECK(gk_array_data(a) == &memory[11], "data is element [0, 0]");
    double reversed[12];
    for (int i = 0; i < 12; i++)
        reversed[i] = 11 - i;
    CHECK_VALUES(a, reversed, 12, 0);
    CHECK_OK(gk_to(a, device, &moved));
    CHECK_VALUES(moved, reversed, 12, 0);
    gk_array_free(moved);
    /* Views of it keep working: [1:, ::-2] of the reversed array. */
    gk_array *rows = NULL;
    CHECK_OK(gk_slice(a, 0, 1, 3, 1, &rows));
    CHECK_OK(gk_slice(rows, 1, -1, -5, -2, &view));
    CHECK_VALUES(view, ((double[]){4, 6, 0, 2}), 4, 0);
    CHECK(gk_array_data(view) == &memory[4], "data of the view");
    gk_array_free(rows);
    gk_array_free(a);
    CHECK(released == 2, "not yet released");
    gk_array_free(view);
    CHECK(released == 3, "released %d times", released);

    /* Mixed signs and a broadcast (stride 0) axis: [[3, 1], [3, 1]] as int32. */
    int32_t small[4] = {0, 1, 2, 3};
    CHECK_OK(gk_wrap(gk_device_cpu(), GK_INT32, 2, (int64_t[]){2, 2}, (int64_t[]){0, -2},
                     &small[3], NULL, NULL, &a));
    CHECK_VALUES(a, ((double[]){3, 1, 3, 1}), 4, 0);
    /* Writes go to the caller's memory. */
    CHECK_OK(gk_wrap(gk_device_cpu(), GK_INT32, 1, (int64_t[]){4}, (int64_t[]){-1}, &small[3],
                     NULL, NULL, &view));
    gk_array *seven = NULL;
    CHECK_OK(gk_full(gk_device_cpu(), GK_INT32, 1, (int64_t[]){1}, 7, &seven));
    gk_array *first = NULL;
    CHECK_OK(gk_slice(view, 0, 0, 1, 1, &first));
    CHECK_OK(gk_assign(first, seven));
    CHECK(small[3] == 7 && small[0] == 0, "written through: %d %d", small[3], small[0]);
    gk_array_free(first);
    gk_array_free(seven);
    gk_array_free(view);
    gk_array_free(a);

    /* An empty array may have no memory at all. */
    CHECK_OK(gk_wrap(gk_device_cpu(), GK_FLOAT32, 2, (int64_t[]){0, 3}, NULL, NULL,
                     count_release, &released, &a));
    CHECK(a && gk_array_size(a) == 0, "empty");
    gk_array_free(a);
    CHECK(released == 4, "released %d times", released);

    /* Refusals call nothing and produce nothing. */
    CHECK_FAILS(gk_wrap(gk_device_cpu(), GK_FLOAT64, 1, (int64_t[]){3}, NULL, NULL,
                        count_release, &released, &a),
                GK_ERR_INVALID_ARGUMENT, "NULL");
    CHECK(a == NULL, "no output on failure");
    CHECK_FAILS(gk_wrap(gk_device_cpu(), GK_FLOAT64, 2, (int64_t[]){3, 3},
                        (int64_t[]){INT64_MAX / 4, 1}, memory, count_release, &released, &a),
                GK_ERR_INVALID_ARGUMENT, "address space");
    CHECK_FAILS(gk_wrap(gk_device_cpu(), GK_FLOAT64, 1, (int64_t[]){3}, (int64_t[]){-1},
                        (void *)8, count_release, &released, &a),
                GK_ERR_INVALID_ARGUMENT, "address space");
    CHECK_FAILS(gk_wrap(gk_device_cpu(), GK_FLOAT64, 1, (int64_t[]){2}, NULL,
                        (char *)memory + 4, count_release, &released, &a),
                GK_ERR_INVALID_ARGUMENT, "not a multiple of the element size");
    CHECK_FAILS(gk_wrap((gk_device){GK_DEVICE_OPENCL, 0, 0}, GK_FLOAT64, 1, (int64_t[]){3},
                        NULL, memory, count_release, &released, &a),
                GK_ERR_INVALID_ARGUMENT, "only CPU and CUDA");
    CHECK_FAILS(gk_wrap((gk_device){GK_DEVICE_CUDA, 7, 0}, GK_FLOAT64, 1, (int64_t[]){3}, NULL,
                        memory, count_release, &released, &a),
                GK_ERR_NOT_FOUND, "cuda:7");
    CHECK_FAILS(gk_wrap(gk_device_cpu(), GK_FLOAT64, 1, (int64_t[]){-3}, NULL, memory,
                        count_release, &released, &a),
                GK_ERR_INVALID_ARGUMENT, "negative length");
    CHECK(released == 4 && a == NULL, "nothing released on failure (%d)", released);
}

/* Every device here has every dtype (PoCL has double precision; the Python
 * tests try a device without it); a dtype that is none fails. */
static void test_device_dtypes(gk_device device)
{
    for (int d = 0; d < GK_DTYPE_COUNT; d++) {
        if (gk_dtype_is_complex((gk_dtype)d))
            continue; /* complex: tests/package/test_complex.py */
        bool has = false;
        CHECK_OK(gk_device_has_dtype(device, (gk_dtype)d, &has));
        CHECK(has, "%s on this device", gk_dtype_name((gk_dtype)d));
    }
    bool has = true;
    CHECK_FAILS(gk_device_has_dtype(device, (gk_dtype)GK_DTYPE_COUNT, &has),
                GK_ERR_INVALID_ARGUMENT, "is not a dtype");
    CHECK(!has, "false on failure");
}

/* CPU arrays of every size are 64-byte aligned (a cache line, an AVX-512
 * vector); from about 32 MiB they start on a 2 MiB huge page, so that
 * all of their pages can be huge (backends/cpu/cpu.c). */
static void test_cpu_alignment(void)
{
    /* int64 elements: nothing, small, from 4 MiB (malloc, huge pages
     * advised inside), under 32 MiB by more and less than what malloc
     * adds, and at 32 MiB (whole huge pages from the second) */
    const int64_t sizes[] = {
        0, 1, 3, 1000, (4 << 20) / 8 + 1, (32 << 20) / 8 - 1024, (32 << 20) / 8 - 1, (32 << 20) / 8,
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        gk_array *a = NULL;
        CHECK_OK(gk_empty(gk_device_cpu(), GK_INT64, 1, &sizes[i], &a));
        if (!a)
            continue;
        uintptr_t address = (uintptr_t)gk_array_data(a);
        CHECK(address % 64 == 0, "%lld elements at %p: not 64-byte aligned",
              (long long)sizes[i], gk_array_data(a));
        if (gk_array_nbytes(a) >= (32u << 20) - 8)
            CHECK(address % (2u << 20) == 0, "%lld elements at %p: not on a huge page",
                  (long long)sizes[i], gk_array_data(a));
        gk_array_free(a);
    }
}

/* Arguments at the ends of int64 and int, as a C caller can pass them:
 * refused or clamped with the right answer, never an overflow (the
 * sanitizer build aborts on one). */
static void test_extreme_arguments(gk_device device)
{
    gk_array *a = twelve(device), *o = NULL;
    CHECK(a != NULL, "%s", gk_last_error());
    if (!a)
        return;
    CHECK_FAILS(gk_reshape(a, 2, (int64_t[]){INT64_MAX, 2}, &o), GK_ERR_INVALID_ARGUMENT,
                "cannot reshape");
    CHECK_FAILS(gk_reshape(a, 3, (int64_t[]){-1, (int64_t)1 << 62, 4}, &o),
                GK_ERR_INVALID_ARGUMENT, "cannot reshape");
    /* a step past the axis takes its first element, as Python's slices */
    CHECK_OK(gk_slice(a, 0, INT64_MAX, INT64_MIN, INT64_MIN, &o)); /* a[::-huge] */
    CHECK_VALUES(o, ((double[]){8, 9, 10, 11}), 4, 0);
    gk_array_free(o);
    CHECK_OK(gk_slice(a, 1, INT64_MIN, INT64_MAX, INT64_MAX, &o)); /* a[:, ::huge] */
    CHECK_VALUES(o, ((double[]){0, 4, 8}), 3, 0);
    gk_array_free(o);
    CHECK_FAILS(gk_tile(a, 1, (int64_t[]){INT64_MAX}, &o), GK_ERR_INVALID_ARGUMENT,
                "tile: the result would have too many elements");
    CHECK_FAILS(gk_repeat(a, INT64_MAX, 0, &o), GK_ERR_INVALID_ARGUMENT,
                "repeat: the result would have too many elements");
    CHECK_OK(gk_round_decimals(a, INT_MIN, &o));
    gk_array_free(o);
    CHECK_FAILS(gk_fft(a, GK_FFT_FORWARD, 1, (int[]){0}, (int64_t[]){-3}, GK_FFT_NORM_BACKWARD,
                       &o), GK_ERR_INVALID_ARGUMENT, "-3 points along axis 0");
    CHECK_FAILS(gk_fft(a, GK_FFT_FORWARD, 2, (int[]){0, 1}, (int64_t[]){INT64_MAX, INT64_MAX},
                       GK_FFT_NORM_BACKWARD, &o), GK_ERR_INVALID_ARGUMENT, "too many points");
    double value;
    CHECK_FAILS(gk_item(a, NULL, &value), GK_ERR_INVALID_ARGUMENT, "no index");
    CHECK_FAILS(gk_arange_int64(device, GK_INT64, INT64_MIN, INT64_MAX, 1, &o),
                GK_ERR_INVALID_ARGUMENT, "18446744073709551615 elements are too many");
    gk_array_free(a);
}

int main(void)
{
    test_cpu_alignment();
    test_device_names();
    test_dtypes();
    FOR_EACH_DEVICE(test_creation);
    FOR_EACH_DEVICE(test_device_dtypes);
    FOR_EACH_DEVICE(test_views);
    FOR_EACH_DEVICE(test_copies);
    FOR_EACH_DEVICE(test_wrap);
    test_extreme_arguments(gk_device_cpu());
    CHECK_DONE();
}
