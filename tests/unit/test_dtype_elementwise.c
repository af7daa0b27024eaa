/* The elementwise family for int8, int16, uint16, uint32 and uint64 on every
 * device (tests/unit/array_check.h): every integer op at the limits of each
 * type (wrapping, pow with negative exponents, comparisons of uint64 values
 * from 2^63 up, neg and abs of the most negative value), conversions between
 * all 11 dtypes both ways (saturation and NaN from floating values, uint64
 * to and from float64 above 2^63), fill, arange, where and printing.
 *
 * Arrays are made from exact bytes (gk_from_host) and read back as bytes,
 * so 64-bit values never pass through a double. Integers are held here as
 * uint64 "bits": the value sign-extended (signed dtypes) or zero-extended
 * (unsigned) to 64 bits. Both operands of a binary op have one dtype, so
 * the core's promotion rules play no part. */
#include "array_check.h"

#include <stdint.h>

static const gk_dtype new_dtypes[] = {GK_INT8, GK_INT16, GK_UINT16, GK_UINT32, GK_UINT64};
#define COUNT(array) ((int)(sizeof(array) / sizeof *(array)))
#define TOP ((uint64_t)1 << 63)

static bool is_signed(gk_dtype t)
{
    return gk_dtype_is_integer(t) && !gk_dtype_is_unsigned(t);
}

/* --- integers as bits --- */

/* u reduced to dtype t (an integer or bool dtype): the low bits kept and
 * extended again by the dtype's sign; bool is 0 or 1. */
static uint64_t wrap(gk_dtype t, uint64_t u)
{
    switch (t) {
    case GK_BOOL: return u != 0;
    case GK_INT8: return (uint64_t)(int64_t)(int8_t)(uint8_t)u;
    case GK_INT16: return (uint64_t)(int64_t)(int16_t)(uint16_t)u;
    case GK_INT32: return (uint64_t)(int64_t)(int32_t)(uint32_t)u;
    case GK_UINT8: return (uint8_t)u;
    case GK_UINT16: return (uint16_t)u;
    case GK_UINT32: return (uint32_t)u;
    case GK_INT64:
    case GK_UINT64:
    case GK_FLOAT16:
    case GK_BFLOAT16:
    case GK_FLOAT32:
    case GK_FLOAT64: break;
    case GK_COMPLEX64:
    case GK_COMPLEX128: break; /* not modelled here: tests/package/test_complex.py */
    }
    return u;
}

static bool less(gk_dtype t, uint64_t a, uint64_t b)
{
    return is_signed(t) ? (int64_t)a < (int64_t)b : a < b;
}

/* One element of any dtype: bits for integers and bool, f for floats. */
typedef struct cell {
    uint64_t bits;
    double f;
} cell;

static void store(gk_dtype t, cell v, unsigned char *raw, int64_t k)
{
#define PUT(T, value)                                                                  \
    do {                                                                               \
        T x_ = (T)(value);                                                             \
        memcpy(raw + sizeof x_ * (size_t)k, &x_, sizeof x_);                           \
    } while (0)
    switch (t) {
    case GK_BOOL:
    case GK_UINT8: PUT(uint8_t, v.bits); break;
    case GK_INT8: PUT(int8_t, (int64_t)v.bits); break;
    case GK_INT16: PUT(int16_t, (int64_t)v.bits); break;
    case GK_INT32: PUT(int32_t, (int64_t)v.bits); break;
    case GK_INT64: PUT(int64_t, (int64_t)v.bits); break;
    case GK_UINT16: PUT(uint16_t, v.bits); break;
    case GK_UINT32: PUT(uint32_t, v.bits); break;
    case GK_UINT64: PUT(uint64_t, v.bits); break;
    case GK_FLOAT32: PUT(float, v.f); break;
    case GK_FLOAT64: PUT(double, v.f); break;
    case GK_FLOAT16:
    case GK_BFLOAT16: gk_dtype_store(t, v.f, raw + 2 * (size_t)k); break;
    case GK_COMPLEX64:
    case GK_COMPLEX128: break; /* not modelled here: tests/package/test_complex.py */
    }
#undef PUT
}

static cell load(gk_dtype t, const unsigned char *raw, int64_t k)
{
    cell v = {0, 0};
#define GET(T, field, how)                                                             \
    do {                                                                               \
        T x_;                                                                          \
        memcpy(&x_, raw + sizeof x_ * (size_t)k, sizeof x_);                           \
        v.field = how x_;                                                              \
    } while (0)
    switch (t) {
    case GK_BOOL:
    case GK_UINT8: GET(uint8_t, bits, (uint64_t)); break;
    case GK_INT8: GET(int8_t, bits, (uint64_t)(int64_t)); break;
    case GK_INT16: GET(int16_t, bits, (uint64_t)(int64_t)); break;
    case GK_INT32: GET(int32_t, bits, (uint64_t)(int64_t)); break;
    case GK_INT64: GET(int64_t, bits, (uint64_t)); break;
    case GK_UINT16: GET(uint16_t, bits, (uint64_t)); break;
    case GK_UINT32: GET(uint32_t, bits, (uint64_t)); break;
    case GK_UINT64: GET(uint64_t, bits, (uint64_t)); break;
    case GK_FLOAT32: GET(float, f, (double)); break;
    case GK_FLOAT64: GET(double, f, (double)); break;
    case GK_FLOAT16:
    case GK_BFLOAT16: v.f = gk_dtype_load(t, raw + 2 * (size_t)k); break;
    case GK_COMPLEX64:
    case GK_COMPLEX128: break; /* not modelled here: tests/package/test_complex.py */
    }
#undef GET
    return v;
}

static gk_array *make(gk_device device, gk_dtype t, int ndim, const int64_t *shape,
                      const cell *values)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    unsigned char *raw = calloc((size_t)(n ? n : 1), 8);
    for (int64_t k = 0; k < n; k++)
        store(t, values[k], raw, k);
    gk_array *a = NULL;
    CHECK_OK(gk_from_host(device, t, ndim, shape, raw, &a));
    free(raw);
    return a;
}

/* A 1-d array of integer dtype t holding `bits` (each wrapped to t). */
static gk_array *make_bits(gk_device device, gk_dtype t, int64_t n, const uint64_t *bits)
{
    cell *values = calloc((size_t)(n ? n : 1), sizeof *values);
    for (int64_t k = 0; k < n; k++)
        values[k].bits = wrap(t, bits[k]);
    gk_array *a = make(device, t, 1, &n, values);
    free(values);
    return a;
}

static cell *read_back(const gk_array *a)
{
    int64_t n = gk_array_size(a);
    size_t bytes = gk_array_nbytes(a);
    unsigned char *raw = malloc(bytes ? bytes : 1);
    cell *values = calloc((size_t)(n ? n : 1), sizeof *values);
    if (gk_to_host(a, raw, bytes) != GK_OK) {
        free(raw);
        free(values);
        return NULL;
    }
    for (int64_t k = 0; k < n; k++)
        values[k] = load(gk_array_dtype(a), raw, k);
    free(raw);
    return values;
}

/* Same bits, or for floats the same value (NaN matching NaN, and the sign
 * of zero compared too). */
static bool same(gk_dtype t, cell a, cell b)
{
    if (!gk_dtype_is_float(t))
        return a.bits == b.bits;
    if (isnan(a.f) || isnan(b.f))
        return isnan(a.f) && isnan(b.f);
    return a.f == b.f && signbit(a.f) == signbit(b.f);
}

static void describe(gk_dtype t, cell v, char *buf, size_t size)
{
    if (gk_dtype_is_float(t))
        snprintf(buf, size, "%.17g", v.f);
    else if (is_signed(t))
        snprintf(buf, size, "%lld", (long long)(int64_t)v.bits);
    else
        snprintf(buf, size, "%llu", (unsigned long long)v.bits);
}

/* `a` has dtype t, n elements and the values `expected`; on the first
 * difference, says where with `what`. */
static void check_cells_(const char *file, int line, const char *what, const gk_array *a,
                         gk_dtype t, const cell *expected, int64_t n)
{
    if (!a) {
        check_failures++;
        fprintf(stderr, "%s:%d: %s: no array\n", file, line, what);
        return;
    }
    if (gk_array_dtype(a) != t || gk_array_size(a) != n) {
        check_failures++;
        fprintf(stderr, "%s:%d: %s: %s of %lld elements, expected %s of %lld\n", file, line,
                what, gk_dtype_name(gk_array_dtype(a)), (long long)gk_array_size(a),
                gk_dtype_name(t), (long long)n);
        return;
    }
    cell *got = read_back(a);
    if (!got) {
        check_failures++;
        fprintf(stderr, "%s:%d: %s: cannot read back: %s\n", file, line, what, gk_last_error());
        return;
    }
    for (int64_t k = 0; k < n; k++) {
        if (!same(t, got[k], expected[k])) {
            char g[64], e[64];
            describe(t, got[k], g, sizeof g);
            describe(t, expected[k], e, sizeof e);
            check_failures++;
            fprintf(stderr, "%s:%d: %s: element %lld is %s, expected %s\n", file, line, what,
                    (long long)k, g, e);
            break;
        }
    }
    free(got);
}
#define CHECK_CELLS(what, a, t, expected, n) \
    check_cells_(__FILE__, __LINE__, (what), (a), (t), (expected), (n))

/* Integers spelled out: `expected` as bits of dtype t. */
static void check_bits_(const char *file, int line, const char *what, const gk_array *a,
                        gk_dtype t, const uint64_t *expected, int64_t n)
{
    cell *cells = calloc((size_t)(n ? n : 1), sizeof *cells);
    for (int64_t k = 0; k < n; k++)
        cells[k].bits = wrap(t, expected[k]);
    check_cells_(file, line, what, a, t, cells, n);
    free(cells);
}
#define CHECK_BITS(what, a, t, expected) \
    check_bits_(__FILE__, __LINE__, (what), (a), (t), (expected), COUNT(expected))

/* --- the values every test starts from --- */

/* Each type's limits and their neighbours once wrapped: 0, +-1, the
 * extremes of every width, values from 2^63 up. */
static const uint64_t seeds[] = {
    0,
    1,
    2,
    3,
    7,
    100,
    127,
    128,
    255,
    256,
    32767,
    32768,
    65535,
    65536,
    0x7fffffff,
    0x80000000,
    0xffffffff,
    0x100000000,
    ((uint64_t)1 << 53) + 1,
    TOP - 1,
    TOP,
    TOP + 2049,
    UINT64_MAX - 2047,
    UINT64_MAX - 1,
    UINT64_MAX, /* -1 */
    (uint64_t)-2,
    (uint64_t)-7,
    (uint64_t)-100,
    (uint64_t)-127,
    (uint64_t)-128,
    (uint64_t)-129,
    (uint64_t)-32768,
    (uint64_t)-32769,
    (uint64_t)INT32_MIN,
};
#define SEEDS COUNT(seeds)

/* --- binary ops against a reference on bits --- */

static const gk_op binary_ops[] = {GK_ADD, GK_SUB,     GK_MUL, GK_POW, GK_MINIMUM,
                                   GK_MAXIMUM, GK_EQ, GK_NE,  GK_LT,  GK_LE,
                                   GK_GT,  GK_GE};

/* x^y wrapped to t: repeated squaring modulo 2^64, then the dtype's bits
 * (the low bits of a product depend only on the low bits of its factors);
 * negative exponents: 0, but 1 for base 1 and +-1 for base -1. */
static uint64_t reference_pow(gk_dtype t, uint64_t x, uint64_t y)
{
    if (is_signed(t) && (int64_t)y < 0) {
        int64_t base = (int64_t)x;
        return base == 1 ? 1 : base == -1 ? ((y & 1) ? UINT64_MAX : 1) : 0;
    }
    uint64_t result = 1;
    for (; y; y >>= 1) {
        if (y & 1)
            result *= x;
        x *= x;
    }
    return wrap(t, result);
}

static cell reference_binary(gk_op op, gk_dtype t, uint64_t x, uint64_t y)
{
    uint64_t r = 0;
    switch (op) {
    case GK_ADD: r = wrap(t, x + y); break;
    case GK_SUB: r = wrap(t, x - y); break;
    case GK_MUL: r = wrap(t, x * y); break;
    case GK_POW: r = reference_pow(t, x, y); break;
    case GK_MINIMUM: r = less(t, y, x) ? y : x; break;
    case GK_MAXIMUM: r = less(t, x, y) ? y : x; break;
    case GK_EQ: r = x == y; break;
    case GK_NE: r = x != y; break;
    case GK_LT: r = less(t, x, y); break;
    case GK_LE: r = !less(t, y, x); break;
    case GK_GT: r = less(t, y, x); break;
    case GK_GE: r = !less(t, x, y); break;
    default: break;
    }
    return (cell){r, 0};
}

static bool is_comparison(gk_op op)
{
    return op >= GK_EQ && op <= GK_GE;
}

/* Every op on every pair of seeds, as two (n * n) arrays and broadcast as
 * (n, 1) with (1, n), out of place and into an output. */
static void test_binary_pairs(gk_device device)
{
    const int64_t n = SEEDS;
    for (int d = 0; d < COUNT(new_dtypes); d++) {
        gk_dtype t = new_dtypes[d];
        cell *xs = calloc((size_t)(n * n), sizeof *xs), *ys = calloc((size_t)(n * n), sizeof *ys);
        cell column[SEEDS], row[SEEDS];
        for (int64_t i = 0; i < n; i++) {
            column[i].bits = row[i].bits = wrap(t, seeds[i]);
            for (int64_t j = 0; j < n; j++) {
                xs[i * n + j].bits = wrap(t, seeds[i]);
                ys[i * n + j].bits = wrap(t, seeds[j]);
            }
        }
        gk_array *a = make(device, t, 2, (int64_t[]){n, n}, xs);
        gk_array *b = make(device, t, 2, (int64_t[]){n, n}, ys);
        gk_array *a_column = make(device, t, 2, (int64_t[]){n, 1}, column);
        gk_array *b_row = make(device, t, 2, (int64_t[]){1, n}, row);
        cell *expected = calloc((size_t)(n * n), sizeof *expected);
        for (int o = 0; o < COUNT(binary_ops); o++) {
            gk_op op = binary_ops[o];
            gk_dtype result = is_comparison(op) ? GK_BOOL : t;
            for (int64_t k = 0; k < n * n; k++)
                expected[k] = reference_binary(op, t, xs[k].bits, ys[k].bits);
            char what[96];
            snprintf(what, sizeof what, "%s of %s", gk_op_name(op), gk_dtype_name(t));
            gk_array *out = NULL;
            CHECK_OK(gk_binary(op, a, b, &out));
            CHECK_CELLS(what, out, result, expected, n * n);
            gk_array_free(out);
            out = NULL;
            snprintf(what, sizeof what, "%s of %s, broadcast", gk_op_name(op), gk_dtype_name(t));
            CHECK_OK(gk_binary(op, a_column, b_row, &out));
            CHECK_CELLS(what, out, result, expected, n * n);
            gk_array_free(out);
            gk_array *into = NULL;
            CHECK_OK(gk_empty(device, result, 2, (int64_t[]){n, n}, &into));
            snprintf(what, sizeof what, "%s of %s, into", gk_op_name(op), gk_dtype_name(t));
            CHECK_OK(gk_binary_into(op, a, b_row, into));
            CHECK_CELLS(what, into, result, expected, n * n);
            gk_array_free(into);
        }
        free(expected);
        free(xs);
        free(ys);
        gk_array_free(a);
        gk_array_free(b);
        gk_array_free(a_column);
        gk_array_free(b_row);
    }
}

/* op(x, y) of dtype t gives `expected` (bits of t, or bools). */
static void expect_binary_(const char *file, int line, gk_device device, gk_op op, gk_dtype t,
                           int64_t n, const uint64_t *x, const uint64_t *y,
                           const uint64_t *expected)
{
    gk_array *a = make_bits(device, t, n, x), *b = make_bits(device, t, n, y), *out = NULL;
    CHECK_OK(gk_binary(op, a, b, &out));
    char what[96];
    snprintf(what, sizeof what, "%s of %s", gk_op_name(op), gk_dtype_name(t));
    check_bits_(file, line, what, out, is_comparison(op) ? GK_BOOL : t, expected, n);
    gk_array_free(out);
    gk_array_free(a);
    gk_array_free(b);
}
#define EXPECT_BINARY(device, op, t, x, y, expected) \
    expect_binary_(__FILE__, __LINE__, (device), (op), (t), COUNT(x), (x), (y), (expected))

/* The limits spelled out, as NumPy gives them. */
static void test_binary_spelled_out(gk_device device)
{
    const uint64_t m1 = UINT64_MAX; /* -1 */
    /* int8: 127 + 1 wraps to -128, -128 - 1 to 127, 16 * 16 to 0, -128 * -1
     * to -128. */
    EXPECT_BINARY(device, GK_ADD, GK_INT8, ((uint64_t[]){127, (uint64_t)-128, 100}),
                  ((uint64_t[]){1, m1, 100}), ((uint64_t[]){(uint64_t)-128, 127, (uint64_t)-56}));
    EXPECT_BINARY(device, GK_SUB, GK_INT8, ((uint64_t[]){(uint64_t)-128, 0}),
                  ((uint64_t[]){1, (uint64_t)-128}), ((uint64_t[]){127, (uint64_t)-128}));
    EXPECT_BINARY(device, GK_MUL, GK_INT8, ((uint64_t[]){16, (uint64_t)-128, 127}),
                  ((uint64_t[]){16, m1, 127}), ((uint64_t[]){0, (uint64_t)-128, 1}));
    /* int16 */
    EXPECT_BINARY(device, GK_ADD, GK_INT16, ((uint64_t[]){32767, (uint64_t)-32768}),
                  ((uint64_t[]){1, m1}), ((uint64_t[]){(uint64_t)-32768, 32767}));
    EXPECT_BINARY(device, GK_MUL, GK_INT16, ((uint64_t[]){256, (uint64_t)-32768, 32767}),
                  ((uint64_t[]){256, m1, 32767}), ((uint64_t[]){0, (uint64_t)-32768, 1}));
    /* uint16: 0 - 1 is 65535; 65535 * 65535 wraps to 1 (the product passes
     * int's range on the way). */
    EXPECT_BINARY(device, GK_SUB, GK_UINT16, ((uint64_t[]){0, 5}), ((uint64_t[]){1, 7}),
                  ((uint64_t[]){65535, 65534}));
    EXPECT_BINARY(device, GK_ADD, GK_UINT16, ((uint64_t[]){65535, 40000}),
                  ((uint64_t[]){1, 40000}), ((uint64_t[]){0, 14464}));
    EXPECT_BINARY(device, GK_MUL, GK_UINT16, ((uint64_t[]){65535, 256}),
                  ((uint64_t[]){65535, 256}), ((uint64_t[]){1, 0}));
    /* uint32 */
    EXPECT_BINARY(device, GK_ADD, GK_UINT32, ((uint64_t[]){0xffffffff}), ((uint64_t[]){2}),
                  ((uint64_t[]){1}));
    EXPECT_BINARY(device, GK_SUB, GK_UINT32, ((uint64_t[]){0}), ((uint64_t[]){1}),
                  ((uint64_t[]){0xffffffff}));
    EXPECT_BINARY(device, GK_MUL, GK_UINT32, ((uint64_t[]){0x10000, 0xffffffff}),
                  ((uint64_t[]){0x10000, 0xffffffff}), ((uint64_t[]){0, 1}));
    /* uint64: max * 2 wraps to max - 1, max + 1 to 0, 0 - 1 to max. */
    EXPECT_BINARY(device, GK_MUL, GK_UINT64, ((uint64_t[]){UINT64_MAX, TOP}),
                  ((uint64_t[]){2, 2}), ((uint64_t[]){UINT64_MAX - 1, 0}));
    EXPECT_BINARY(device, GK_ADD, GK_UINT64, ((uint64_t[]){UINT64_MAX, TOP}),
                  ((uint64_t[]){1, TOP - 1}), ((uint64_t[]){0, UINT64_MAX}));
    EXPECT_BINARY(device, GK_SUB, GK_UINT64, ((uint64_t[]){0, TOP}), ((uint64_t[]){1, 1}),
                  ((uint64_t[]){UINT64_MAX, TOP - 1}));

    /* pow: exact and wrapping; negative exponents give 0 but for bases 1
     * and -1. */
    const uint64_t i8_base[] = {2, 2, (uint64_t)-2, 3, 1, m1, m1, 2, (uint64_t)-2, 0, 5, 0};
    const uint64_t i8_exp[] = {6, 7, 7, 5, (uint64_t)-5, (uint64_t)-3, (uint64_t)-4,
                               (uint64_t)-1, (uint64_t)-2, (uint64_t)-1, 0, 0};
    const uint64_t i8_pow[] = {64, (uint64_t)-128, (uint64_t)-128, (uint64_t)-13, 1, m1, 1, 0,
                               0, 0, 1, 1};
    EXPECT_BINARY(device, GK_POW, GK_INT8, i8_base, i8_exp, i8_pow);
    const uint64_t i16_base[] = {2, 3, m1, m1, 7, 1, (uint64_t)-3};
    const uint64_t i16_exp[] = {15, 11, (uint64_t)-32768, (uint64_t)-32767, (uint64_t)-1,
                                (uint64_t)-32768, 3};
    const uint64_t i16_pow[] = {(uint64_t)-32768, (uint64_t)(177147 - 3 * 65536), 1, m1, 0, 1,
                                (uint64_t)-27};
    EXPECT_BINARY(device, GK_POW, GK_INT16, i16_base, i16_exp, i16_pow);
    EXPECT_BINARY(device, GK_POW, GK_UINT16, ((uint64_t[]){2, 255, 3, 0, 65535}),
                  ((uint64_t[]){16, 2, 65535, 0, 65535}),
                  ((uint64_t[]){0, 65025, 43691, 1, 65535}));
    EXPECT_BINARY(device, GK_POW, GK_UINT32, ((uint64_t[]){2, 2, 3, 0xffffffff}),
                  ((uint64_t[]){31, 32, 20, 2}),
                  ((uint64_t[]){0x80000000, 0, 3486784401u, 1}));
    /* 3^41 = 36472996377170786403 wraps to 18026252303461234787. */
    EXPECT_BINARY(device, GK_POW, GK_UINT64, ((uint64_t[]){3, 3, 2, 2, UINT64_MAX}),
                  ((uint64_t[]){40, 41, 63, 64, UINT64_MAX}),
                  ((uint64_t[]){12157665459056928801u, 18026252303461234787u, TOP, 0,
                                UINT64_MAX}));

    /* Comparisons at the extremes: uint64 values from 2^63 up are large,
     * not negative. */
    const uint64_t u64_x[] = {TOP, UINT64_MAX, 1, TOP, 0};
    const uint64_t u64_y[] = {1, TOP, UINT64_MAX, TOP, UINT64_MAX};
    EXPECT_BINARY(device, GK_LT, GK_UINT64, u64_x, u64_y, ((uint64_t[]){0, 0, 1, 0, 1}));
    EXPECT_BINARY(device, GK_LE, GK_UINT64, u64_x, u64_y, ((uint64_t[]){0, 0, 1, 1, 1}));
    EXPECT_BINARY(device, GK_GT, GK_UINT64, u64_x, u64_y, ((uint64_t[]){1, 1, 0, 0, 0}));
    EXPECT_BINARY(device, GK_GE, GK_UINT64, u64_x, u64_y, ((uint64_t[]){1, 1, 0, 1, 0}));
    EXPECT_BINARY(device, GK_EQ, GK_UINT64, u64_x, u64_y, ((uint64_t[]){0, 0, 0, 1, 0}));
    EXPECT_BINARY(device, GK_NE, GK_UINT64, u64_x, u64_y, ((uint64_t[]){1, 1, 1, 0, 1}));
    EXPECT_BINARY(device, GK_MINIMUM, GK_UINT64, u64_x, u64_y,
                  ((uint64_t[]){1, TOP, 1, TOP, 0}));
    EXPECT_BINARY(device, GK_MAXIMUM, GK_UINT64, u64_x, u64_y,
                  ((uint64_t[]){TOP, UINT64_MAX, UINT64_MAX, TOP, UINT64_MAX}));
    EXPECT_BINARY(device, GK_LT, GK_UINT32, ((uint64_t[]){0x80000000, 0}),
                  ((uint64_t[]){1, 0xffffffff}), ((uint64_t[]){0, 1}));
    EXPECT_BINARY(device, GK_MAXIMUM, GK_UINT16, ((uint64_t[]){32768, 0}),
                  ((uint64_t[]){1, 65535}), ((uint64_t[]){32768, 65535}));
    EXPECT_BINARY(device, GK_LT, GK_INT8, ((uint64_t[]){(uint64_t)-128, 127}),
                  ((uint64_t[]){127, (uint64_t)-128}), ((uint64_t[]){1, 0}));
    EXPECT_BINARY(device, GK_MINIMUM, GK_INT16, ((uint64_t[]){(uint64_t)-32768, 32767}),
                  ((uint64_t[]){32767, m1}), ((uint64_t[]){(uint64_t)-32768, m1}));
}

/* --- unary ops --- */

static void expect_unary_(const char *file, int line, gk_device device, gk_op op, gk_dtype t,
                          int64_t n, const uint64_t *x, const uint64_t *expected)
{
    gk_array *a = make_bits(device, t, n, x), *out = NULL;
    CHECK_OK(gk_unary(op, a, &out));
    char what[96];
    snprintf(what, sizeof what, "%s of %s", gk_op_name(op), gk_dtype_name(t));
    check_bits_(file, line, what, out, t, expected, n);
    gk_array_free(out);
    /* In place, through a reversed view. */
    gk_array *reversed = NULL;
    CHECK_OK(gk_slice(a, 0, n - 1, -n - 1, -1, &reversed));
    if (reversed) {
        CHECK_OK(gk_unary_into(op, reversed, reversed));
        snprintf(what, sizeof what, "%s of %s, in place reversed", gk_op_name(op),
                 gk_dtype_name(t));
        check_bits_(file, line, what, a, t, expected, n);
    }
    gk_array_free(reversed);
    gk_array_free(a);
}
#define EXPECT_UNARY(device, op, t, x, expected) \
    expect_unary_(__FILE__, __LINE__, (device), (op), (t), COUNT(x), (x), (expected))

static void test_unary(gk_device device)
{
    const uint64_t m1 = UINT64_MAX;
    /* neg and abs of the most negative value give it back. */
    const uint64_t i8[] = {(uint64_t)-128, 127, m1, 0, 5};
    EXPECT_UNARY(device, GK_NEG, GK_INT8, i8, ((uint64_t[]){(uint64_t)-128, (uint64_t)-127, 1, 0,
                                                             (uint64_t)-5}));
    EXPECT_UNARY(device, GK_ABS, GK_INT8, i8, ((uint64_t[]){(uint64_t)-128, 127, 1, 0, 5}));
    EXPECT_UNARY(device, GK_RELU, GK_INT8, i8, ((uint64_t[]){0, 127, 0, 0, 5}));
    const uint64_t i16[] = {(uint64_t)-32768, 32767, (uint64_t)-300, 0};
    EXPECT_UNARY(device, GK_NEG, GK_INT16, i16,
                 ((uint64_t[]){(uint64_t)-32768, (uint64_t)-32767, 300, 0}));
    EXPECT_UNARY(device, GK_ABS, GK_INT16, i16, ((uint64_t[]){(uint64_t)-32768, 32767, 300, 0}));
    EXPECT_UNARY(device, GK_RELU, GK_INT16, i16, ((uint64_t[]){0, 32767, 0, 0}));
    /* Unsigned: neg wraps (NumPy: -uint8(1) == 255), abs and relu copy. */
    const uint64_t u16[] = {1, 0, 65535, 32768};
    EXPECT_UNARY(device, GK_NEG, GK_UINT16, u16, ((uint64_t[]){65535, 0, 1, 32768}));
    EXPECT_UNARY(device, GK_ABS, GK_UINT16, u16, u16);
    EXPECT_UNARY(device, GK_RELU, GK_UINT16, u16, u16);
    const uint64_t u32[] = {1, 0, 0xffffffff, 0x80000000};
    EXPECT_UNARY(device, GK_NEG, GK_UINT32, u32, ((uint64_t[]){0xffffffff, 0, 1, 0x80000000}));
    EXPECT_UNARY(device, GK_ABS, GK_UINT32, u32, u32);
    EXPECT_UNARY(device, GK_RELU, GK_UINT32, u32, u32);
    const uint64_t u64[] = {1, 0, UINT64_MAX, TOP, TOP + 1};
    EXPECT_UNARY(device, GK_NEG, GK_UINT64, u64, ((uint64_t[]){UINT64_MAX, 0, 1, TOP, TOP - 1}));
    EXPECT_UNARY(device, GK_ABS, GK_UINT64, u64, u64);
    EXPECT_UNARY(device, GK_RELU, GK_UINT64, u64, u64);

    /* The math functions compute in a floating dtype (the core converts
     * first): whichever it is, the roots of squares are exact. */
    for (int d = 0; d < COUNT(new_dtypes); d++) {
        gk_dtype t = new_dtypes[d];
        gk_array *a = make_bits(device, t, 4, (uint64_t[]){0, 4, 9, 100}), *out = NULL;
        CHECK_OK(gk_unary(GK_SQRT, a, &out));
        CHECK(out && gk_dtype_is_float(gk_array_dtype(out)), "sqrt of %s is floating", gk_dtype_name(t));
        if (out)
            CHECK_VALUES(out, ((double[]){0, 2, 3, 10}), 4, 0);
        gk_array_free(out);
        gk_array_free(a);
    }
}

/* --- conversions between every pair of dtypes --- */

/* Floating sources: NaN, infinities, and values at and around every
 * integer dtype's bounds. */
static const double float_seeds[] = {
    NAN, INFINITY, -INFINITY, 1e300, -1e300, 0.0, -0.0, 0.5, -0.5, -0.99, 1.5,
    127.9, -128.9, 128, -129, 255.5, 256, -1, 32767.5, -32768.5, 32768, -32769,
    65535.5, 65536, 2147483647.5, 2147483648.0, -2147483649.0, 4294967295.5,
    4294967296.0, 9007199254740993.0, 9.2233720368547748e18, 9223372036854775808.0,
    -9223372036854775808.0, -9.3e18, 1e19, 18446744073709549568.0, 18446744073709551616.0,
    18446742974197923840.0, /* the float below 2^64 */
    3e38,
};

/* The bounds of the floating-to-integer saturation (convert.c): the
 * type's limits, but the largest doubles below 2^63 and 2^64 for the 64-bit
 * types. */
static void bounds(gk_dtype t, double *low, double *high)
{
    switch (t) {
    case GK_INT8: *low = -128, *high = 127; break;
    case GK_INT16: *low = -32768, *high = 32767; break;
    case GK_INT32: *low = -2147483648.0, *high = 2147483647.0; break;
    case GK_INT64: *low = -9223372036854775808.0, *high = 9223372036854774784.0; break;
    case GK_UINT8: *low = 0, *high = 255; break;
    case GK_UINT16: *low = 0, *high = 65535; break;
    case GK_UINT32: *low = 0, *high = 4294967295.0; break;
    case GK_UINT64: *low = 0, *high = 18446744073709549568.0; break;
    case GK_BOOL:
    case GK_FLOAT16:
    case GK_BFLOAT16:
    case GK_FLOAT32:
    case GK_FLOAT64:
    case GK_COMPLEX64: /* complex is not modelled here: tests/package/test_complex.py */
    case GK_COMPLEX128: *low = *high = 0; break;
    }
}

static cell reference_convert(gk_dtype from, cell v, gk_dtype to)
{
    cell r = {0, 0};
    if (gk_dtype_is_float(from)) {
        double x = v.f;
        if (to == GK_BOOL) {
            r.bits = x != 0; /* NaN too */
        } else if (gk_dtype_is_float(to)) {
            r.f = test_round(to, x);
        } else {
            double low, high;
            bounds(to, &low, &high);
            double clamped = isnan(x) ? 0 : x <= low ? low : x >= high ? high : trunc(x);
            r.bits = clamped >= 9223372036854775808.0 ? (uint64_t)clamped
                                                       : (uint64_t)(int64_t)clamped;
        }
        return r;
    }
    /* Integer and bool sources: C's conversions. */
    if (to == GK_FLOAT32)
        r.f = is_signed(from) ? (double)(float)(int64_t)v.bits : (double)(float)v.bits;
    else if (to == GK_FLOAT64)
        r.f = is_signed(from) ? (double)(int64_t)v.bits : (double)v.bits;
    else if (gk_dtype_is_half(to)) /* rounded once from the (exact) double */
        r.f = test_round(to, is_signed(from) ? (double)(int64_t)v.bits : (double)v.bits);
    else
        r.bits = wrap(to, v.bits);
    return r;
}

/* The source values of dtype `from`. */
static int64_t sources(gk_dtype from, cell *values)
{
    int64_t n = 0;
    if (gk_dtype_is_float(from)) {
        for (int k = 0; k < COUNT(float_seeds); k++)
            values[n++].f = test_round(from, float_seeds[k]);
    } else {
        for (int k = 0; k < SEEDS; k++)
            values[n++].bits = wrap(from, seeds[k]);
    }
    return n;
}

static void check_cast(gk_array *a, gk_dtype from, gk_dtype to, const cell *values, int64_t n,
                       const char *layout)
{
    cell expected[64];
    for (int64_t k = 0; k < n; k++)
        expected[k] = reference_convert(from, values[k], to);
    char what[96];
    snprintf(what, sizeof what, "%s to %s, %s", gk_dtype_name(from), gk_dtype_name(to), layout);
    gk_array *out = NULL;
    CHECK_OK(gk_cast(a, to, &out));
    CHECK_CELLS(what, out, to, expected, n);
    gk_array_free(out);
}

static void test_conversions(gk_device device)
{
    for (int from = 0; from < GK_DTYPE_COUNT; from++) {
        if (gk_dtype_is_complex((gk_dtype)from))
            continue; /* complex: tests/package/test_complex.py */
        cell values[64] = {{0, 0}}, reversed_values[64];
        int64_t n = sources((gk_dtype)from, values);
        for (int64_t k = 0; k < n; k++)
            reversed_values[k] = values[n - 1 - k];
        gk_array *a = make(device, (gk_dtype)from, 1, &n, values), *reversed = NULL;
        if (!a)
            continue;
        CHECK_OK(gk_slice(a, 0, n - 1, -n - 1, -1, &reversed));
        for (int to = 0; to < GK_DTYPE_COUNT; to++) {
            if (gk_dtype_is_complex((gk_dtype)to))
                continue; /* complex: tests/package/test_complex.py */
            check_cast(a, (gk_dtype)from, (gk_dtype)to, values, n, "contiguous");
            if (reversed)
                check_cast(reversed, (gk_dtype)from, (gk_dtype)to, reversed_values, n,
                           "reversed");
        }
        gk_array_free(reversed);
        gk_array_free(a);
    }
}

/* The same rules, spelled out for the new dtypes. */
static void test_conversions_spelled_out(gk_device device)
{
    /* uint64 above 2^63 to float64: large positive values, rounded to
     * nearest. */
    uint64_t u64[] = {TOP, TOP + 1, UINT64_MAX, UINT64_MAX - 2047, TOP + 2049, 12345};
    gk_array *a = NULL, *out = NULL;
    CHECK_OK(gk_from_host(device, GK_UINT64, 1, (int64_t[]){COUNT(u64)}, u64, &a));
    CHECK_OK(gk_cast(a, GK_FLOAT64, &out));
    if (out)
        CHECK_VALUES(out, ((double[]){9223372036854775808.0, 9223372036854775808.0,
                                      18446744073709551616.0, 18446744073709549568.0,
                                      9223372036854777856.0, 12345}),
                     COUNT(u64), 0);
    gk_array_free(out);
    out = NULL;
    CHECK_OK(gk_cast(a, GK_INT8, &out));
    CHECK_BITS("uint64 to int8", out, GK_INT8, ((uint64_t[]){0, 1, UINT64_MAX, 0, 1, 57}));
    gk_array_free(out);
    gk_array_free(a);

    /* float64 to uint64: saturates at the largest double below 2^64, NaN
     * and negative values give 0, values above 2^63 are exact. */
    double f64[] = {INFINITY, NAN, -1, 1e19, 18446744073709549568.0, 9223372036854777856.0,
                    -INFINITY, 0.99};
    CHECK_OK(gk_from_host(device, GK_FLOAT64, 1, (int64_t[]){COUNT(f64)}, f64, &a));
    out = NULL;
    CHECK_OK(gk_cast(a, GK_UINT64, &out));
    CHECK_BITS("float64 to uint64", out, GK_UINT64,
               ((uint64_t[]){18446744073709549568u, 0, 0, 10000000000000000000u,
                             18446744073709549568u, 9223372036854777856u, 0, 0}));
    gk_array_free(out);
    out = NULL;
    CHECK_OK(gk_cast(a, GK_INT8, &out));
    CHECK_BITS("float64 to int8", out, GK_INT8,
               ((uint64_t[]){127, 0, UINT64_MAX, 127, 127, 127, (uint64_t)-128, 0}));
    gk_array_free(out);
    out = NULL;
    CHECK_OK(gk_cast(a, GK_UINT32, &out));
    CHECK_BITS("float64 to uint32", out, GK_UINT32,
               ((uint64_t[]){0xffffffff, 0, 0, 0xffffffff, 0xffffffff, 0xffffffff, 0, 0}));
    gk_array_free(out);
    gk_array_free(a);

    /* float32: 2^64 saturates, the float below it is exact; 2^32 and
     * 4294967040 (the float below) to uint32. */
    float f32[] = {18446744073709551616.0f, 18446742974197923840.0f, 4294967296.0f,
                   4294967040.0f, -32769.0f, NAN};
    CHECK_OK(gk_from_host(device, GK_FLOAT32, 1, (int64_t[]){COUNT(f32)}, f32, &a));
    out = NULL;
    CHECK_OK(gk_cast(a, GK_UINT64, &out));
    CHECK_BITS("float32 to uint64", out, GK_UINT64,
               ((uint64_t[]){18446744073709549568u, 18446742974197923840u, 4294967296u,
                             4294967040u, 0, 0}));
    gk_array_free(out);
    out = NULL;
    CHECK_OK(gk_cast(a, GK_UINT32, &out));
    CHECK_BITS("float32 to uint32", out, GK_UINT32,
               ((uint64_t[]){0xffffffff, 0xffffffff, 0xffffffff, 4294967040u, 0, 0}));
    gk_array_free(out);
    out = NULL;
    CHECK_OK(gk_cast(a, GK_INT16, &out));
    CHECK_BITS("float32 to int16", out, GK_INT16,
               ((uint64_t[]){32767, 32767, 32767, 32767, (uint64_t)-32768, 0}));
    gk_array_free(out);
    gk_array_free(a);

    /* Between integers: C's wrapping. */
    int8_t i8[] = {-1, -128, 127};
    CHECK_OK(gk_from_host(device, GK_INT8, 1, (int64_t[]){3}, i8, &a));
    out = NULL;
    CHECK_OK(gk_cast(a, GK_UINT64, &out));
    CHECK_BITS("int8 to uint64", out, GK_UINT64,
               ((uint64_t[]){UINT64_MAX, UINT64_MAX - 127, 127}));
    gk_array_free(out);
    out = NULL;
    CHECK_OK(gk_cast(a, GK_UINT16, &out));
    CHECK_BITS("int8 to uint16", out, GK_UINT16, ((uint64_t[]){65535, 65408, 127}));
    gk_array_free(out);
    out = NULL;
    CHECK_OK(gk_cast(a, GK_BOOL, &out));
    CHECK_BITS("int8 to bool", out, GK_BOOL, ((uint64_t[]){1, 1, 1}));
    gk_array_free(out);
    gk_array_free(a);
}

/* --- fill, full, arange --- */

static void check_all_(const char *file, int line, const char *what, const gk_array *a,
                       gk_dtype t, uint64_t bits)
{
    int64_t n = gk_array_size(a);
    cell *expected = calloc((size_t)(n ? n : 1), sizeof *expected);
    for (int64_t k = 0; k < n; k++)
        expected[k].bits = bits;
    check_cells_(file, line, what, a, t, expected, n);
    free(expected);
}

static void test_fill(gk_device device)
{
    /* 100003 elements: the CPU fills on threads. Values exact in double. */
    static const struct {
        gk_dtype dtype;
        double value;
        uint64_t bits;
    } cases[] = {
        {GK_INT8, -128, (uint64_t)-128},
        {GK_INT8, 127, 127},
        {GK_INT16, -32768, (uint64_t)-32768},
        {GK_INT16, 12345, 12345},
        {GK_UINT16, 65535, 65535},
        {GK_UINT16, 32768, 32768},
        {GK_UINT32, 4294967295.0, 0xffffffff},
        {GK_UINT64, 9223372036854775808.0, TOP},
        {GK_UINT64, 18446744073709549568.0, 18446744073709549568u},
    };
    for (int c = 0; c < COUNT(cases); c++) {
        gk_dtype t = cases[c].dtype;
        gk_array *a = NULL;
        char what[96];
        snprintf(what, sizeof what, "full %s %.17g", gk_dtype_name(t), cases[c].value);
        CHECK_OK(gk_full(device, t, 2, (int64_t[]){3, 100003 / 3 + 1}, cases[c].value, &a));
        if (a)
            check_all_(__FILE__, __LINE__, what, a, t, cases[c].bits);
        gk_array_free(a);
    }
    for (int d = 0; d < COUNT(new_dtypes); d++) {
        gk_dtype t = new_dtypes[d];
        gk_array *a = NULL;
        CHECK_OK(gk_zeros(device, t, 1, (int64_t[]){1001}, &a));
        if (a)
            check_all_(__FILE__, __LINE__, "zeros", a, t, 0);
        gk_array_free(a);
        a = NULL;
        CHECK_OK(gk_ones(device, t, 0, NULL, &a));
        if (a)
            check_all_(__FILE__, __LINE__, "ones 0-d", a, t, 1);
        gk_array_free(a);
    }
}

static void check_arange(gk_device device, gk_dtype t, int64_t start, int64_t stop,
                         int64_t step)
{
    int64_t n = (stop - start + step + (step > 0 ? -1 : 1)) / step;
    cell *expected = calloc((size_t)(n > 0 ? n : 1), sizeof *expected);
    for (int64_t k = 0; k < n; k++)
        expected[k].bits = wrap(t, (uint64_t)(start + k * step));
    char what[96];
    snprintf(what, sizeof what, "arange(%lld, %lld, %lld) of %s", (long long)start,
             (long long)stop, (long long)step, gk_dtype_name(t));
    gk_array *a = NULL;
    CHECK_OK(gk_arange(device, t, (double)start, (double)stop, (double)step, &a));
    CHECK_CELLS(what, a, t, expected, n > 0 ? n : 0);
    gk_array_free(a);
    free(expected);
}

static void test_arange(gk_device device)
{
    check_arange(device, GK_INT8, -128, 128, 1); /* every int8, past the CPU's blocks of 256 */
    check_arange(device, GK_INT8, 127, -129, -3);
    check_arange(device, GK_INT16, -32768, 32768, 97);
    check_arange(device, GK_INT16, 5, -5, -2);
    check_arange(device, GK_UINT16, 0, 65536, 255);
    check_arange(device, GK_UINT32, 4294967295 - 700, 4294967296, 3);
    check_arange(device, GK_UINT64, 0, 1000, 7);
    check_arange(device, GK_UINT64, 10, 0, -1);
    /* uint64 beyond 2^63 (doubles exact here: multiples of 2048). */
    gk_array *a = NULL;
    CHECK_OK(gk_arange(device, GK_UINT64, 9223372036854775808.0, 9223372036854785808.0, 4096,
                       &a));
    CHECK_BITS("arange of uint64 past 2^63", a, GK_UINT64,
               ((uint64_t[]){TOP, TOP + 4096, TOP + 8192}));
    gk_array_free(a);
}

/* --- where --- */

static void test_where(gk_device device)
{
    const int64_t n = SEEDS;
    cell condition[SEEDS];
    for (int64_t k = 0; k < n; k++)
        condition[k].bits = k % 3 != 0;
    gk_array *c = make(device, GK_BOOL, 1, &n, condition);
    for (int d = 0; d < COUNT(new_dtypes); d++) {
        gk_dtype t = new_dtypes[d];
        cell xs[SEEDS], ys[SEEDS], expected[SEEDS];
        for (int64_t k = 0; k < n; k++) {
            xs[k].bits = wrap(t, seeds[k]);
            ys[k].bits = wrap(t, ~seeds[k]);
            expected[k] = condition[k].bits ? xs[k] : ys[k];
        }
        gk_array *a = make(device, t, 1, &n, xs), *b = make(device, t, 1, &n, ys), *out = NULL;
        char what[96];
        snprintf(what, sizeof what, "where of %s", gk_dtype_name(t));
        CHECK_OK(gk_where(c, a, b, &out));
        CHECK_CELLS(what, out, t, expected, n);
        gk_array_free(out);
        /* b a 0-d array, broadcast. */
        gk_array *top = make(device, t, 0, NULL, &(cell){wrap(t, UINT64_MAX), 0});
        for (int64_t k = 0; k < n; k++)
            expected[k] = condition[k].bits ? xs[k] : (cell){wrap(t, UINT64_MAX), 0};
        snprintf(what, sizeof what, "where of %s, b 0-d", gk_dtype_name(t));
        out = NULL;
        CHECK_OK(gk_where(c, a, top, &out));
        CHECK_CELLS(what, out, t, expected, n);
        gk_array_free(out);
        gk_array_free(top);
        gk_array_free(a);
        gk_array_free(b);
    }
    gk_array_free(c);
}

/* --- printing --- */

/* `a` prints as `text` with ", device=<its device>" before the final ")". */
static void check_print_(const char *file, int line, const gk_array *a, const char *text)
{
    char device[GK_DEVICE_NAME_MAX], expected[512];
    gk_device_name(gk_array_device(a), device, sizeof device);
    size_t length = strlen(text);
    snprintf(expected, sizeof expected, "%.*s, device=%s)", (int)(length - 1), text, device);
    char *got = NULL;
    gk_status status = gk_array_format(a, &got);
    if (status != GK_OK || !got || strcmp(got, expected) != 0) {
        check_failures++;
        fprintf(stderr, "%s:%d: printed\n%s\nexpected\n%s\n", file, line,
                got ? got : gk_last_error(), expected);
    }
    free(got);
}
#define CHECK_PRINT(a, text) check_print_(__FILE__, __LINE__, (a), (text))

static void test_print(gk_device device)
{
    gk_array *a = NULL;
    int8_t i8[] = {-128, 0, 127};
    CHECK_OK(gk_from_host(device, GK_INT8, 1, (int64_t[]){3}, i8, &a));
    if (a)
        CHECK_PRINT(a, "array([-128,    0,  127], dtype=int8)");
    gk_array_free(a);

    /* NumPy's text, but with the device the extras pass the line width
     * (NumPy's fits). */
    uint64_t u64[] = {0, UINT64_MAX};
    CHECK_OK(gk_from_host(device, GK_UINT64, 1, (int64_t[]){2}, u64, &a));
    if (a)
        CHECK_PRINT(a, "array([                   0, 18446744073709551615],\n"
                       "      dtype=uint64)");
    gk_array_free(a);

    /* NumPy's text too (which wraps there without the device). */
    uint64_t u64_top[] = {TOP, 1, 2};
    CHECK_OK(gk_from_host(device, GK_UINT64, 1, (int64_t[]){3}, u64_top, &a));
    if (a)
        CHECK_PRINT(a, "array([9223372036854775808,                   1,                   2],\n"
                       "      dtype=uint64)");
    gk_array_free(a);

    int16_t i16[] = {1, -32768, 300, 7};
    CHECK_OK(gk_from_host(device, GK_INT16, 2, (int64_t[]){2, 2}, i16, &a));
    if (a)
        CHECK_PRINT(a, "array([[     1, -32768],\n"
                       "       [   300,      7]], dtype=int16)");
    gk_array_free(a);

    uint32_t u32 = 4294967295u;
    CHECK_OK(gk_from_host(device, GK_UINT32, 0, NULL, &u32, &a));
    if (a)
        CHECK_PRINT(a, "array(4294967295, dtype=uint32)");
    gk_array_free(a);

    CHECK_OK(gk_empty(device, GK_UINT16, 1, (int64_t[]){0}, &a));
    if (a)
        CHECK_PRINT(a, "array([], dtype=uint16)");
    gk_array_free(a);

    /* Summarised: int8 values of arange(-600, 600) wrapped. */
    int8_t many[1200];
    for (int k = 0; k < 1200; k++)
        many[k] = (int8_t)(uint8_t)(k - 600);
    CHECK_OK(gk_from_host(device, GK_INT8, 1, (int64_t[]){1200}, many, &a));
    if (a)
        CHECK_PRINT(a, "array([-88, -87, -86, ...,  85,  86,  87],\n"
                       "      shape=(1200,), dtype=int8)");
    gk_array_free(a);
}

int main(void)
{
    FOR_EACH_DEVICE(test_binary_pairs);
    FOR_EACH_DEVICE(test_binary_spelled_out);
    FOR_EACH_DEVICE(test_unary);
    FOR_EACH_DEVICE(test_conversions);
    FOR_EACH_DEVICE(test_conversions_spelled_out);
    FOR_EACH_DEVICE(test_fill);
    FOR_EACH_DEVICE(test_arange);
    FOR_EACH_DEVICE(test_where);
    FOR_EACH_DEVICE(test_print);
    CHECK_DONE();
}
