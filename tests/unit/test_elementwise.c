/* Elementwise ops on every device: each op for each dtype it accepts against
 * a naive C reference computed here, on contiguous, strided (transposed,
 * sliced with positive and negative steps), broadcast (including 0-d and
 * stride-0) inputs, empty and 0-d arrays, out of place, *_into and in
 * place; the promotion table; where, clip and cast; and every error path.
 * The large arrays (100003 elements) cross the GPUKIT_CPU_PARALLEL_MIN
 * ctest sets, so the CPU's threaded path runs too. */
#include "array_check.h"

#include <stdint.h>

#define BIG 100003

static int cases; /* results compared, printed at the end */

static const gk_op binary_ops[] = {GK_ADD, GK_SUB, GK_MUL, GK_DIV, GK_POW,
                                   GK_MINIMUM, GK_MAXIMUM, GK_EQ, GK_NE, GK_LT,
                                   GK_LE, GK_GT, GK_GE};
static const gk_op unary_ops[] = {
    GK_NEG,  GK_ABS,   GK_EXP,   GK_LOG,   GK_SQRT,  GK_SIN,   GK_COS,    GK_TANH,
    GK_TAN,  GK_ASIN,  GK_ACOS,  GK_ATAN,  GK_SINH,  GK_COSH,  GK_ASINH,  GK_ACOSH,
    GK_ATANH, GK_LOG1P, GK_EXPM1, GK_SIGMOID, GK_RELU};
#define COUNT(array) ((int)(sizeof(array) / sizeof *(array)))

static bool is_unsigned(gk_dtype t)
{
    return t == GK_UINT8 || t == GK_UINT16 || t == GK_UINT32 || t == GK_UINT64;
}

/* The range of an integer dtype as doubles (64-bit tops: the last double
 * below 2^63 and 2^64, as the library clamps). */
static void int_range(gk_dtype t, double *low, double *high)
{
    switch (t) {
    case GK_BOOL: *low = 0, *high = 1; break;
    case GK_INT8: *low = INT8_MIN, *high = INT8_MAX; break;
    case GK_INT16: *low = INT16_MIN, *high = INT16_MAX; break;
    case GK_INT32: *low = INT32_MIN, *high = INT32_MAX; break;
    case GK_UINT8: *low = 0, *high = UINT8_MAX; break;
    case GK_UINT16: *low = 0, *high = UINT16_MAX; break;
    case GK_UINT32: *low = 0, *high = UINT32_MAX; break;
    case GK_UINT64: *low = 0, *high = 18446744073709549568.0; break;
    default: *low = -0x1p63, *high = 9223372036854774784.0; break;
    }
}

/* NumPy's float for integer math: float16 for bool and 8 bits, float32
 * for 16 bits, float64 above. */
static gk_dtype math_float(gk_dtype t)
{
    if (gk_dtype_is_float(t))
        return t;
    if (t == GK_BOOL || t == GK_INT8 || t == GK_UINT8)
        return GK_FLOAT16;
    return t == GK_INT32 || t == GK_INT64 || t == GK_UINT32 || t == GK_UINT64 ? GK_FLOAT64
                                                                               : GK_FLOAT32;
}

static bool is_comparison(gk_op op)
{
    return op >= GK_EQ && op <= GK_GE;
}

/* --- values held exactly: integers (and bools) in i, floating values in f --- */

typedef struct num {
    int64_t i;
    double f;
} num;

/* Integers are held in i, uint64 as its bit pattern. */
static num load_num(gk_dtype t, const unsigned char *raw, int64_t k)
{
    num v = {0, 0};
    size_t size = gk_dtype_size(t);
    const unsigned char *at = raw + (size_t)k * size;
    switch (t) {
    case GK_BOOL:
    case GK_UINT8: v.i = at[0]; break;
    case GK_INT8: v.i = (int8_t)at[0]; break;
#define LOAD(T)                  \
    {                            \
        T x;                     \
        memcpy(&x, at, sizeof x); \
        v.i = (int64_t)x;        \
        break;                   \
    }
    case GK_INT16: LOAD(int16_t)
    case GK_UINT16: LOAD(uint16_t)
    case GK_INT32: LOAD(int32_t)
    case GK_UINT32: LOAD(uint32_t)
    case GK_INT64:
    case GK_UINT64: LOAD(int64_t)
#undef LOAD
    case GK_FLOAT32: {
        float x;
        memcpy(&x, at, 4);
        v.f = x;
        break;
    }
    case GK_FLOAT64: memcpy(&v.f, at, 8); break;
    case GK_FLOAT16:
    case GK_BFLOAT16: v.f = gk_dtype_load(t, at); break;
    case GK_COMPLEX64:
    case GK_COMPLEX128: break; /* not modelled here: tests/package/test_complex.py */
    }
    return v;
}

static void store_num(gk_dtype t, num v, unsigned char *raw, int64_t k)
{
    size_t size = gk_dtype_size(t);
    unsigned char *at = raw + (size_t)k * size;
    if (gk_dtype_is_float(t)) {
        float f = (float)v.f;
        if (gk_dtype_is_half(t))
            gk_dtype_store(t, v.f, at);
        else if (t == GK_FLOAT32)
            memcpy(at, &f, 4);
        else
            memcpy(at, &v.f, 8);
        return;
    }
    /* The low bytes of the integer (little-endian, as every target here). */
    uint64_t bits = (uint64_t)v.i;
    memcpy(at, &bits, size);
}

/* The elements of `a` in C order (malloc'd), read back with gk_to_host. */
static num *read_nums(const gk_array *a)
{
    int64_t n = gk_array_size(a);
    size_t bytes = gk_array_nbytes(a);
    unsigned char *raw = malloc(bytes ? bytes : 1);
    num *values = malloc(sizeof *values * (size_t)(n ? n : 1));
    if (!raw || !values || gk_to_host(a, raw, bytes) != GK_OK) {
        free(raw);
        free(values);
        return NULL;
    }
    for (int64_t k = 0; k < n; k++)
        values[k] = load_num(gk_array_dtype(a), raw, k);
    free(raw);
    return values;
}

static gk_array *make_array(gk_device device, gk_dtype t, int ndim, const int64_t *shape,
                            const num *values)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    unsigned char *raw = malloc((size_t)(n ? n : 1) * 8);
    for (int64_t k = 0; k < n; k++)
        store_num(t, values[k], raw, k);
    gk_array *a = NULL;
    CHECK_OK(gk_from_host(device, t, ndim, shape, raw, &a));
    free(raw);
    return a;
}

/* --- random inputs --- */

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

enum { GENERAL, SMALL }; /* SMALL: exponents for pow */

static num random_num(gk_dtype t, int kind)
{
    uint64_t r = next_random();
    bool special = r % 29 == 0;
    r >>= 8;
    num v = {0, 0};
    switch (t) {
    case GK_BOOL: v.i = (int64_t)(r & 1); break;
    case GK_UINT8: v.i = kind == SMALL ? (int64_t)(r % 9) : (int64_t)(r % 256); break;
    case GK_INT32: {
        static const int64_t extremes[] = {INT32_MIN, INT32_MAX, INT32_MIN + 1, -1, 0, 1};
        v.i = kind == SMALL ? (int64_t)(r % 16) - 3
              : special     ? extremes[r % 6]
                            : (int64_t)(r % 201) - 100;
        break;
    }
    case GK_INT64: {
        static const int64_t extremes[] = {INT64_MIN, INT64_MAX, INT64_MIN + 1, -1, 0, 1};
        v.i = kind == SMALL ? (int64_t)(r % 16) - 3
              : special     ? extremes[r % 6]
                            : (int64_t)(r % 2001) - 1000;
        break;
    }
    case GK_INT8:
        v.i = kind == SMALL ? (int64_t)(r % 8) - 3 : (int64_t)(int8_t)(uint8_t)r;
        break;
    case GK_INT16: {
        static const int64_t extremes[] = {INT16_MIN, INT16_MAX, -1, 0, 1};
        v.i = kind == SMALL ? (int64_t)(r % 12) - 3
              : special     ? extremes[r % 5]
                            : (int64_t)(r % 401) - 200;
        break;
    }
    case GK_UINT16: {
        static const int64_t extremes[] = {0, 1, UINT16_MAX, UINT16_MAX - 1};
        v.i = kind == SMALL ? (int64_t)(r % 12) : special ? extremes[r % 4] : (int64_t)(r % 1000);
        break;
    }
    case GK_UINT32: {
        static const int64_t extremes[] = {0, 1, UINT32_MAX, (int64_t)UINT32_MAX - 1, INT32_MAX};
        v.i = kind == SMALL ? (int64_t)(r % 12) : special ? extremes[r % 5] : (int64_t)(r % 1000);
        break;
    }
    case GK_UINT64: {
        /* bit patterns: UINT64_MAX, 2^63 and 2^63 + 1 are "negative" in i */
        static const uint64_t extremes[] = {0, 1, UINT64_MAX, (uint64_t)1 << 63,
                                            ((uint64_t)1 << 63) + 1, (uint64_t)INT64_MAX};
        v.i = kind == SMALL ? (int64_t)(r % 12)
              : special     ? (int64_t)extremes[r % 6]
                            : (int64_t)(r % 3000);
        break;
    }
    case GK_COMPLEX64:
    case GK_COMPLEX128: break; /* not modelled here: tests/package/test_complex.py */
    case GK_FLOAT16:
    case GK_BFLOAT16:
    case GK_FLOAT32:
    case GK_FLOAT64: {
        static const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e30, -1e-30, 2};
        double unit = (double)(r % 1000001) / 1000000.0; /* [0, 1] */
        v.f = special ? specials[r % 8] : kind == SMALL ? 6 * unit - 3 : 16 * unit - 8;
        if (t != GK_FLOAT64) { /* rounded to the dtype */
            unsigned char bytes[4];
            gk_dtype_store(t, v.f, bytes);
            v.f = gk_dtype_load(t, bytes);
        }
        break;
    }
    }
    return v;
}

static gk_array *random_array(gk_device device, gk_dtype t, int ndim, const int64_t *shape,
                              int kind)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    num *values = malloc(sizeof *values * (size_t)(n ? n : 1));
    for (int64_t k = 0; k < n; k++)
        values[k] = random_num(t, kind);
    gk_array *a = make_array(device, t, ndim, shape, values);
    free(values);
    return a;
}

/* --- the reference: C's conversions as convert.c makes them, then the op --- */

static int64_t wrap(gk_dtype t, uint64_t u);

static num convert_num(num v, gk_dtype from, gk_dtype to)
{
    num r = {0, 0};
    if (gk_dtype_is_float(from)) {
        double x = v.f;
        if (to == GK_BOOL) {
            r.i = x != 0;
        } else if (gk_dtype_is_float(to)) {
            r.f = test_round(to, x);
        } else {
            /* saturating, NaN to 0 (convert.c's rule) */
            double low, high;
            int_range(to, &low, &high);
            r.i = isnan(x)      ? 0
                  : x <= low    ? (to == GK_INT64 ? INT64_MIN : (int64_t)low)
                  : x >= high   ? (to == GK_UINT64 ? (int64_t)(uint64_t)high : (int64_t)high)
                  : to == GK_UINT64 ? (int64_t)(uint64_t)x
                                    : (int64_t)x;
        }
    } else {
        int64_t x = from == GK_BOOL ? v.i != 0 : v.i;
        if (to == GK_BOOL)
            r.i = x != 0;
        else if (to == GK_FLOAT32) /* one rounding, as C's conversion */
            r.f = from == GK_UINT64 ? (float)(uint64_t)x : (float)x;
        else if (to == GK_FLOAT64)
            r.f = from == GK_UINT64 ? (double)(uint64_t)x : (double)x;
        else if (gk_dtype_is_half(to)) /* once from the double */
            r.f = test_round(to, from == GK_UINT64 ? (double)(uint64_t)x : (double)x);
        else
            r.i = wrap(to, (uint64_t)x);
    }
    return r;
}

/* u reduced to the integer dtype t (wrapping). */
static int64_t wrap(gk_dtype t, uint64_t u)
{
    switch (t) {
    case GK_BOOL: return u != 0;
    case GK_UINT8: return (uint8_t)u;
    case GK_INT8: return (int8_t)(uint8_t)u;
    case GK_INT16: return (int16_t)(uint16_t)u;
    case GK_UINT16: return (uint16_t)u;
    case GK_INT32: return (int32_t)(uint32_t)u;
    case GK_UINT32: return (uint32_t)u;
    default: return (int64_t)u; /* int64, and uint64's bit pattern */
    }
}

/* Integer pow by repeated multiplication; negative exponents as PyTorch. */
static int64_t ref_ipow(gk_dtype t, int64_t x, int64_t y)
{
    if (y < 0)
        return x == 1 ? 1 : x == -1 ? (y % 2 ? -1 : 1) : 0;
    uint64_t r = 1;
    for (int64_t k = 0; k < y; k++)
        r = (uint64_t)wrap(t, r * (uint64_t)x);
    return wrap(t, r);
}

#define FLOAT_BINARY(T, POW, a, b)                                                     \
    do {                                                                               \
        T v = 0;                                                                       \
        switch (op) {                                                                  \
        case GK_ADD: v = a + b; break;                                                 \
        case GK_SUB: v = a - b; break;                                                 \
        case GK_MUL: v = a * b; break;                                                 \
        case GK_DIV: v = a / b; break;                                                 \
        case GK_POW: v = POW(a, b); break;                                             \
        case GK_MINIMUM: v = isnan(a) || isnan(b) ? (T)NAN : a < b ? a : b; break;     \
        case GK_MAXIMUM: v = isnan(a) || isnan(b) ? (T)NAN : a > b ? a : b; break;     \
        case GK_EQ: r.i = a == b; return r;                                            \
        case GK_NE: r.i = a != b; return r;                                            \
        case GK_LT: r.i = a < b; return r;                                             \
        case GK_LE: r.i = a <= b; return r;                                            \
        case GK_GT: r.i = a > b; return r;                                             \
        case GK_GE: r.i = a >= b; return r;                                            \
        default: break;                                                                \
        }                                                                              \
        r.f = v;                                                                       \
        return r;                                                                      \
    } while (0)

/* op on x and y, both already of dtype c. */
static num ref_binary(gk_op op, gk_dtype c, num x, num y)
{
    num r = {0, 0};
    if (gk_dtype_is_half(c)) { /* float32's result, rounded once */
        r = ref_binary(op, GK_FLOAT32, x, y);
        r.f = test_round(c, r.f);
        return r;
    }
    if (c == GK_FLOAT32) {
        float a = (float)x.f, b = (float)y.f;
        FLOAT_BINARY(float, powf, a, b);
    }
    if (c == GK_FLOAT64) {
        double a = x.f, b = y.f;
        FLOAT_BINARY(double, pow, a, b);
    }
    int64_t a = x.i, b = y.i;
    if (c == GK_BOOL) {
        a = a != 0;
        b = b != 0;
    }
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    /* uint64 above 2^63 is "negative" in int64: order its bit patterns */
    bool less = c == GK_UINT64 ? ua < ub : a < b;
    switch (op) {
    case GK_ADD: r.i = c == GK_BOOL ? (a | b) : wrap(c, ua + ub); break;
    case GK_SUB: r.i = wrap(c, ua - ub); break;
    case GK_MUL: r.i = c == GK_BOOL ? (a & b) : wrap(c, ua * ub); break;
    case GK_POW: r.i = ref_ipow(c, a, b); break;
    case GK_MINIMUM: r.i = less ? a : b; break;
    case GK_MAXIMUM: r.i = less || a == b ? b : a; break;
    case GK_EQ: r.i = a == b; break;
    case GK_NE: r.i = a != b; break;
    case GK_LT: r.i = less; break;
    case GK_LE: r.i = less || a == b; break;
    case GK_GT: r.i = !less && a != b; break;
    case GK_GE: r.i = !less; break;
    default: break;
    }
    return r;
}

#define FLOAT_UNARY(T, F, a)                                                           \
    do {                                                                               \
        switch (op) {                                                                  \
        case GK_NEG: r.f = -a; break;                                                  \
        case GK_ABS: r.f = F(fabs)(a); break;                                          \
        case GK_EXP: r.f = F(exp)(a); break;                                           \
        case GK_LOG: r.f = F(log)(a); break;                                           \
        case GK_SQRT: r.f = F(sqrt)(a); break;                                         \
        case GK_SIN: r.f = F(sin)(a); break;                                           \
        case GK_COS: r.f = F(cos)(a); break;                                           \
        case GK_TANH: r.f = F(tanh)(a); break;                                         \
        case GK_TAN: r.f = F(tan)(a); break;                                           \
        case GK_ASIN: r.f = F(asin)(a); break;                                         \
        case GK_ACOS: r.f = F(acos)(a); break;                                         \
        case GK_ATAN: r.f = F(atan)(a); break;                                         \
        case GK_SINH: r.f = F(sinh)(a); break;                                         \
        case GK_COSH: r.f = F(cosh)(a); break;                                         \
        case GK_ASINH: r.f = F(asinh)(a); break;                                       \
        case GK_ACOSH: r.f = F(acosh)(a); break;                                       \
        case GK_ATANH: r.f = F(atanh)(a); break;                                       \
        case GK_LOG1P: r.f = F(log1p)(a); break;                                       \
        case GK_EXPM1: r.f = F(expm1)(a); break;                                       \
        case GK_SIGMOID: r.f = (T)(1 / (1 + exp(-(double)a))); break;                  \
        case GK_RELU: r.f = isnan(a) ? a : a > 0 ? a : 0; break;                       \
        default: break;                                                                \
        }                                                                              \
        return r;                                                                      \
    } while (0)
#define F32(name) name##f
#define F64(name) name

static num ref_unary(gk_op op, gk_dtype c, num x)
{
    num r = {0, 0};
    if (gk_dtype_is_half(c)) { /* float32's result, rounded once */
        r = ref_unary(op, GK_FLOAT32, x);
        r.f = test_round(c, r.f);
        return r;
    }
    if (c == GK_FLOAT32) {
        float a = (float)x.f;
        FLOAT_UNARY(float, F32, a);
    }
    if (c == GK_FLOAT64) {
        double a = x.f;
        FLOAT_UNARY(double, F64, a);
    }
    int64_t a = c == GK_BOOL ? x.i != 0 : x.i;
    bool unsigned_type = c == GK_BOOL || is_unsigned(c);
    switch (op) {
    case GK_NEG: r.i = wrap(c, 0 - (uint64_t)a); break;
    case GK_ABS: r.i = !unsigned_type && a < 0 ? wrap(c, 0 - (uint64_t)a) : a; break;
    case GK_RELU: r.i = unsigned_type || a > 0 ? a : 0; break;
    default: break;
    }
    return r;
}

static double tolerance(gk_op op, gk_dtype c)
{
    bool inexact = op == GK_POW || (op >= GK_EXP && op <= GK_SIGMOID);
    if (!gk_dtype_is_float(c) || !inexact)
        return 0; /* integers, IEEE arithmetic, comparisons: exact */
    /* libm here, the device's own functions elsewhere; a float32 result
     * one ulp off can round to the neighbouring 16-bit value */
    return c == GK_FLOAT16 ? 1e-3 : c == GK_BFLOAT16 ? 8e-3 : c == GK_FLOAT32 ? 4e-6 : 1e-13;
}

/* --- comparing --- */

/* Checks that `a` has dtype t and the values `expected` (integers exactly,
 * floating values within tolerance relative to max(1, |expected|); NaN
 * matches NaN). */
static void check_nums_(const char *file, int line, const char *what, const gk_array *a,
                        gk_dtype t, const num *expected, int64_t n, double tol)
{
    cases++;
    if (!a) {
        check_failures++;
        fprintf(stderr, "%s:%d: %s: no array\n", file, line, what);
        return;
    }
    if (gk_array_dtype(a) != t || gk_array_size(a) != n) {
        check_failures++;
        fprintf(stderr, "%s:%d: %s: %s with %lld elements, expected %s with %lld\n", file, line,
                what, gk_dtype_name(gk_array_dtype(a)), (long long)gk_array_size(a),
                gk_dtype_name(t), (long long)n);
        return;
    }
    num *got = read_nums(a);
    if (!got) {
        check_failures++;
        fprintf(stderr, "%s:%d: %s: cannot read back: %s\n", file, line, what, gk_last_error());
        return;
    }
    for (int64_t k = 0; k < n; k++) {
        bool same;
        if (gk_dtype_is_float(t)) {
            double g = got[k].f, e = expected[k].f;
            double scale = fabs(e) > 1 ? fabs(e) : 1;
            same = (isnan(g) && isnan(e)) || g == e || fabs(g - e) <= tol * scale;
        } else {
            same = got[k].i == expected[k].i;
        }
        if (!same) {
            check_failures++;
            if (gk_dtype_is_float(t))
                fprintf(stderr, "%s:%d: %s: element %lld is %.9g, expected %.9g\n", file, line,
                        what, (long long)k, got[k].f, expected[k].f);
            else
                fprintf(stderr, "%s:%d: %s: element %lld is %lld, expected %lld\n", file, line,
                        what, (long long)k, (long long)got[k].i, (long long)expected[k].i);
            break;
        }
    }
    free(got);
}
#define CHECK_NUMS(what, a, t, expected, n, tol) \
    check_nums_(__FILE__, __LINE__, (what), (a), (t), (expected), (n), (tol))

/* Not a broadcast view (which cannot be an output). */
static bool writable(const gk_array *a)
{
    for (int i = 0; i < gk_array_ndim(a); i++)
        if (gk_array_shape(a)[i] > 1 && gk_array_strides(a)[i] == 0)
            return false;
    return true;
}

static bool same_shape(const gk_array *a, int ndim, const int64_t *shape)
{
    if (gk_array_ndim(a) != ndim)
        return false;
    for (int i = 0; i < ndim; i++)
        if (gk_array_shape(a)[i] != shape[i])
            return false;
    return true;
}

/* The broadcast shape of up to three arrays (all compatible here). */
static int64_t broadcast_shape(int count, const gk_array *const *arrays, int *ndim,
                               int64_t *shape)
{
    int n = 0;
    for (int k = 0; k < count; k++)
        n = gk_array_ndim(arrays[k]) > n ? gk_array_ndim(arrays[k]) : n;
    for (int i = 0; i < n; i++)
        shape[i] = 1;
    for (int k = 0; k < count; k++) {
        int d = gk_array_ndim(arrays[k]);
        for (int i = 0; i < d; i++)
            if (gk_array_shape(arrays[k])[i] != 1)
                shape[n - d + i] = gk_array_shape(arrays[k])[i];
    }
    *ndim = n;
    int64_t size = 1;
    for (int i = 0; i < n; i++)
        size *= shape[i];
    return size;
}

/* Element k (C order over shape) of the broadcast result -> index into a's
 * own C-order elements. */
static int64_t source_index(const gk_array *a, int ndim, const int64_t *shape, int64_t k)
{
    int d = gk_array_ndim(a);
    int64_t index = 0, stride = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        int64_t position = k % shape[i];
        k /= shape[i];
        int ai = i - (ndim - d);
        if (ai < 0)
            continue;
        int64_t length = gk_array_shape(a)[ai];
        if (length != 1)
            index += position * stride;
        stride *= length;
    }
    return index;
}

/* --- binary ops --- */

static num *expected_binary(gk_op op, const gk_array *a, const gk_array *b, gk_dtype c,
                            int64_t *n, int *ndim, int64_t *shape)
{
    const gk_array *both[2] = {a, b};
    *n = broadcast_shape(2, both, ndim, shape);
    num *va = read_nums(a), *vb = read_nums(b);
    num *expected = malloc(sizeof *expected * (size_t)(*n ? *n : 1));
    for (int64_t k = 0; va && vb && k < *n; k++) {
        num x = convert_num(va[source_index(a, *ndim, shape, k)], gk_array_dtype(a), c);
        num y = convert_num(vb[source_index(b, *ndim, shape, k)], gk_array_dtype(b), c);
        expected[k] = ref_binary(op, c, x, y);
    }
    CHECK(va && vb, "reading the inputs back: %s", gk_last_error());
    free(va);
    free(vb);
    return expected;
}

/* op(a, b) out of place, into a fresh array, into a transposed view (2-d
 * results), and in place into a and then b where their shape and dtype are
 * the result's. a and b may be changed. */
static void check_binary(gk_device device, gk_op op, gk_array *a, gk_array *b, gk_dtype c,
                         gk_dtype result, const char *layout)
{
    char what[200];
    snprintf(what, sizeof what, "%s %s %s, %s", gk_dtype_name(gk_array_dtype(a)),
             gk_op_name(op), gk_dtype_name(gk_array_dtype(b)), layout);
    int ndim;
    int64_t shape[GK_MAX_DIMS], n;
    num *expected = expected_binary(op, a, b, c, &n, &ndim, shape);
    double tol = tolerance(op, c);

    gk_array *out = NULL;
    CHECK_OK(gk_binary(op, a, b, &out));
    CHECK_NUMS(what, out, result, expected, n, tol);
    CHECK(out && same_shape(out, ndim, shape), "%s: shape", what);
    gk_array_free(out);

    gk_array *into = NULL;
    CHECK_OK(gk_empty(device, result, ndim, shape, &into));
    CHECK_OK(gk_binary_into(op, a, b, into));
    CHECK_NUMS(what, into, result, expected, n, tol);
    gk_array_free(into);

    if (ndim == 2) {
        gk_array *base = NULL, *view = NULL;
        CHECK_OK(gk_empty(device, result, 2, (int64_t[]){shape[1], shape[0]}, &base));
        CHECK_OK(gk_transpose(base, NULL, &view));
        CHECK_OK(gk_binary_into(op, a, b, view));
        CHECK_NUMS(what, view, result, expected, n, tol);
        gk_array_free(view);
        gk_array_free(base);
    }

    if (gk_array_dtype(a) == result && same_shape(a, ndim, shape) && writable(a)) {
        CHECK_OK(gk_binary_into(op, a, b, a));
        CHECK_NUMS(what, a, result, expected, n, tol);
    }
    free(expected);
    if (gk_array_dtype(b) == result && same_shape(b, ndim, shape) && writable(b)) {
        expected = expected_binary(op, a, b, c, &n, &ndim, shape);
        CHECK_OK(gk_binary_into(op, a, b, b));
        CHECK_NUMS(what, b, result, expected, n, tol);
        free(expected);
    }
}

static gk_array *view_transposed(gk_array *base)
{
    gk_array *view = NULL;
    CHECK_OK(gk_transpose(base, NULL, &view));
    gk_array_free(base);
    return view;
}

static gk_array *view_sliced(gk_array *base, int axis, int64_t start, int64_t stop, int64_t step)
{
    gk_array *view = NULL;
    CHECK_OK(gk_slice(base, axis, start, stop, step, &view));
    gk_array_free(base);
    return view;
}

/* Inputs of one layout: a of dtype ta, b of tb (b's values of `kind`). */
enum {
    CONTIGUOUS,
    STRIDED,
    NEGATIVE_STEPS,
    COLUMN_AND_ROW,
    MATRIX_AND_COLUMN,
    ARRAY_AND_0D,
    ZERO_D_AND_ARRAY,
    ZERO_D_AND_0D,
    THREE_D,
    BROADCAST_VIEW,
    EMPTY,
    EMPTY_AXIS,
    LAYOUTS
};
static const char *const layout_names[LAYOUTS] = {
    "contiguous",       "strided (transposed, step 2)", "negative steps",
    "(129, 1) with (257,)", "(33, 257) with (33, 1)", "array with 0-d",
    "0-d with array",   "0-d with 0-d",                 "(4, 1, 6) with (5, 1)",
    "broadcast_to view with (129, 257)",
    "(0, 5) with (5,)", "(3, 0) with (3, 1)",
};

static void make_layout(gk_device device, int layout, gk_dtype ta, gk_dtype tb, int kind,
                        gk_array **a, gk_array **b)
{
    int64_t big[1] = {BIG};
    switch (layout) {
    case CONTIGUOUS:
        *a = random_array(device, ta, 1, big, GENERAL);
        *b = random_array(device, tb, 1, big, kind);
        break;
    case STRIDED: /* 300 x 337 = 101100 elements */
        *a = view_transposed(random_array(device, ta, 2, (int64_t[]){337, 300}, GENERAL));
        *b = view_sliced(random_array(device, tb, 2, (int64_t[]){300, 674}, kind), 1, 1, 674, 2);
        break;
    case NEGATIVE_STEPS:
        *a = view_sliced(random_array(device, ta, 1, (int64_t[]){50}, GENERAL), 0, 49, -100, -3);
        *b = view_sliced(random_array(device, tb, 1, (int64_t[]){34}, kind), 0, -1, -100, -2);
        break;
    case COLUMN_AND_ROW: /* 33153 elements; a stride 0 along rows */
        *a = random_array(device, ta, 2, (int64_t[]){129, 1}, GENERAL);
        *b = random_array(device, tb, 1, (int64_t[]){257}, kind);
        break;
    case MATRIX_AND_COLUMN: /* b is a stride-0 scalar along each row */
        *a = random_array(device, ta, 2, (int64_t[]){33, 257}, GENERAL);
        *b = random_array(device, tb, 2, (int64_t[]){33, 1}, kind);
        break;
    case ARRAY_AND_0D:
        *a = random_array(device, ta, 1, big, GENERAL);
        *b = random_array(device, tb, 0, NULL, kind);
        break;
    case ZERO_D_AND_ARRAY:
        *a = random_array(device, ta, 0, NULL, GENERAL);
        *b = random_array(device, tb, 1, (int64_t[]){1003}, kind);
        break;
    case ZERO_D_AND_0D:
        *a = random_array(device, ta, 0, NULL, GENERAL);
        *b = random_array(device, tb, 0, NULL, kind);
        break;
    case THREE_D:
        *a = random_array(device, ta, 3, (int64_t[]){4, 1, 6}, GENERAL);
        *b = view_transposed(random_array(device, tb, 2, (int64_t[]){1, 5}, kind));
        break;
    case BROADCAST_VIEW: { /* a has stride 0 along its first axis */
        gk_array *row = random_array(device, ta, 1, (int64_t[]){257}, GENERAL);
        *a = NULL;
        if (row)
            CHECK_OK(gk_broadcast_to(row, 2, (int64_t[]){129, 257}, a));
        gk_array_free(row);
        *b = random_array(device, tb, 2, (int64_t[]){129, 257}, kind);
        break;
    }
    case EMPTY:
        *a = random_array(device, ta, 2, (int64_t[]){0, 5}, GENERAL);
        *b = random_array(device, tb, 1, (int64_t[]){5}, kind);
        break;
    case EMPTY_AXIS:
        *a = random_array(device, ta, 2, (int64_t[]){3, 0}, GENERAL);
        *b = random_array(device, tb, 2, (int64_t[]){3, 1}, kind);
        break;
    }
}

/* Every binary op, every dtype, every layout (a and b of one dtype). */
static void test_binary_ops(gk_device device)
{
    for (int o = 0; o < COUNT(binary_ops); o++) {
        gk_op op = binary_ops[o];
        for (int t = 0; t < GK_DTYPE_COUNT; t++) {
            if (gk_dtype_is_complex((gk_dtype)t))
                continue; /* complex: tests/package/test_complex.py */
            gk_dtype dtype = (gk_dtype)t;
            if (dtype == GK_BOOL && (op == GK_SUB || op == GK_POW))
                continue; /* errors, tested below */
            gk_dtype c = op == GK_DIV && !gk_dtype_is_float(dtype) ? GK_FLOAT64 : dtype;
            gk_dtype result = is_comparison(op) ? GK_BOOL : c;
            for (int layout = 0; layout < LAYOUTS; layout++) {
                gk_array *a = NULL, *b = NULL;
                make_layout(device, layout, dtype, dtype, op == GK_POW ? SMALL : GENERAL, &a,
                            &b);
                if (a && b)
                    check_binary(device, op, a, b, c, result, layout_names[layout]);
                gk_array_free(a);
                gk_array_free(b);
            }
        }
    }
}

/* --- promotion --- */

#define B_ GK_BOOL
#define U8 GK_UINT8
#define I32 GK_INT32
#define I64 GK_INT64
#define F32_ GK_FLOAT32
#define F64_ GK_FLOAT64
#define I8 GK_INT8
#define I16 GK_INT16
#define U16 GK_UINT16
#define U32 GK_UINT32
#define U64 GK_UINT64
#define F16 GK_FLOAT16
#define BF16 GK_BFLOAT16

/* Two arrays of any ndim, 0-d included: NumPy 2's np.result_type (in
 * gk_dtype order); bfloat16, which NumPy lacks, holds the 8-bit integers
 * and meets float16 in float32. */
static const gk_dtype promote_arrays[GK_DTYPE_COUNT][GK_DTYPE_COUNT] = {
    /*            B_    U8   I32   I64  F32_  F64_    I8   I16   U16   U32   U64   F16  BF16 */
    /*   B_ */ {B_, U8, I32, I64, F32_, F64_, I8, I16, U16, U32, U64, F16, BF16},
    /*   U8 */ {U8, U8, I32, I64, F32_, F64_, I16, I16, U16, U32, U64, F16, BF16},
    /*  I32 */ {I32, I32, I32, I64, F64_, F64_, I32, I32, I32, I64, F64_, F64_, F64_},
    /*  I64 */ {I64, I64, I64, I64, F64_, F64_, I64, I64, I64, I64, F64_, F64_, F64_},
    /* F32_ */ {F32_, F32_, F64_, F64_, F32_, F64_, F32_, F32_, F32_, F64_, F64_, F32_, F32_},
    /* F64_ */ {F64_, F64_, F64_, F64_, F64_, F64_, F64_, F64_, F64_, F64_, F64_, F64_, F64_},
    /*   I8 */ {I8, I16, I32, I64, F32_, F64_, I8, I16, I32, I64, F64_, F16, BF16},
    /*  I16 */ {I16, I16, I32, I64, F32_, F64_, I16, I16, I32, I64, F64_, F32_, F32_},
    /*  U16 */ {U16, U16, I32, I64, F32_, F64_, I32, I32, U16, U32, U64, F32_, F32_},
    /*  U32 */ {U32, U32, I64, I64, F64_, F64_, I64, I64, U32, U32, U64, F64_, F64_},
    /*  U64 */ {U64, U64, F64_, F64_, F64_, F64_, F64_, F64_, U64, U64, U64, F64_, F64_},
    /*  F16 */ {F16, F16, F64_, F64_, F32_, F64_, F16, F32_, F32_, F64_, F64_, F16, F32_},
    /* BF16 */ {BF16, BF16, F64_, F64_, F32_, F64_, BF16, F32_, F32_, F64_, F64_, F32_, BF16},
};

static void test_promotion(gk_device device)
{
    static const gk_op ops[] = {GK_ADD, GK_SUB, GK_MUL, GK_DIV, GK_POW, GK_MAXIMUM, GK_LT, GK_EQ};
    int64_t shape[2] = {3, 7};
    for (int ta = 0; ta < GK_DTYPE_COUNT; ta++) {
        if (gk_dtype_is_complex((gk_dtype)ta))
            continue; /* complex: tests/package/test_complex.py */
        for (int tb = 0; tb < GK_DTYPE_COUNT; tb++) {
            if (gk_dtype_is_complex((gk_dtype)tb))
                continue; /* complex: tests/package/test_complex.py */
            /* (array, array), (array, 0-d), (0-d, array), (0-d, 0-d) */
            for (int form = 0; form < 4; form++) {
                int ndim_a = form < 2 ? 2 : 0, ndim_b = form % 2 == 0 ? 2 : 0;
                gk_dtype promoted = promote_arrays[ta][tb]; /* ndim plays no part */
                for (int o = 0; o < COUNT(ops); o++) {
                    gk_op op = ops[o];
                    gk_array *a = random_array(device, (gk_dtype)ta, ndim_a, shape, GENERAL);
                    gk_array *b = random_array(device, (gk_dtype)tb, ndim_b, shape,
                                               op == GK_POW ? SMALL : GENERAL);
                    if (promoted == GK_BOOL && (op == GK_SUB || op == GK_POW)) {
                        gk_array *out = (gk_array *)1;
                        CHECK_FAILS(gk_binary(op, a, b, &out), GK_ERR_UNSUPPORTED_DTYPE, "bool");
                        CHECK(out == NULL, "no output on failure");
                    } else if (a && b) {
                        gk_dtype c = op == GK_DIV && !gk_dtype_is_float(promoted) ? GK_FLOAT64 : promoted;
                        char layout[64];
                        snprintf(layout, sizeof layout, "promotion form %d", form);
                        check_binary(device, op, a, b, c, is_comparison(op) ? GK_BOOL : c,
                                     layout);
                    }
                    gk_array_free(a);
                    gk_array_free(b);
                }
            }
        }
    }
}

/* a OP value: the value is weak (it takes the array's dtype unless its kind
 * is higher: then int64 or float64); an integral value is an integer, any
 * other floating. */
static void test_binary_scalar(gk_device device)
{
    static const struct {
        gk_op op;
        gk_dtype dtype;
        int ndim;
        double value;
        gk_dtype compute, result;
    } cases_[] = {
        {GK_ADD, GK_INT32, 1, 2, GK_INT32, GK_INT32},
        {GK_ADD, GK_INT32, 1, 2.5, GK_FLOAT64, GK_FLOAT64},
        {GK_ADD, GK_INT32, 0, 5, GK_INT32, GK_INT32},
        {GK_ADD, GK_INT32, 0, 2.5, GK_FLOAT64, GK_FLOAT64},
        {GK_ADD, GK_INT32, 1, INT32_MIN, GK_INT32, GK_INT32},
        {GK_ADD, GK_BOOL, 1, 1, GK_INT64, GK_INT64},
        {GK_SUB, GK_BOOL, 1, 1, GK_INT64, GK_INT64},
        {GK_MUL, GK_BOOL, 1, 1.5, GK_FLOAT64, GK_FLOAT64},
        {GK_ADD, GK_UINT8, 1, 200, GK_UINT8, GK_UINT8},
        {GK_SUB, GK_UINT8, 1, 1, GK_UINT8, GK_UINT8},
        {GK_LT, GK_UINT8, 1, 255, GK_UINT8, GK_BOOL},
        {GK_ADD, GK_INT8, 1, -128, GK_INT8, GK_INT8},
        {GK_MUL, GK_INT16, 1, 300, GK_INT16, GK_INT16},
        {GK_ADD, GK_UINT16, 1, 65535, GK_UINT16, GK_UINT16},
        {GK_GT, GK_UINT32, 1, 4294967295.0, GK_UINT32, GK_BOOL},
        {GK_ADD, GK_UINT64, 1, 9e18, GK_UINT64, GK_UINT64},
        {GK_ADD, GK_UINT8, 1, 0.5, GK_FLOAT64, GK_FLOAT64},
        {GK_MUL, GK_FLOAT32, 1, 1e300, GK_FLOAT32, GK_FLOAT32},
        {GK_ADD, GK_FLOAT64, 1, 0.1, GK_FLOAT64, GK_FLOAT64},
        {GK_MUL, GK_FLOAT64, 0, -0.0, GK_FLOAT64, GK_FLOAT64},
        {GK_DIV, GK_INT32, 1, 2, GK_FLOAT64, GK_FLOAT64},
        {GK_DIV, GK_INT64, 0, 4, GK_FLOAT64, GK_FLOAT64},
        {GK_DIV, GK_INT8, 1, 3, GK_FLOAT64, GK_FLOAT64},
        {GK_LT, GK_INT64, 1, 2.5, GK_FLOAT64, GK_BOOL},
        {GK_EQ, GK_INT32, 1, 3, GK_INT32, GK_BOOL},
        {GK_GE, GK_BOOL, 1, 0, GK_INT64, GK_BOOL},
        {GK_ADD, GK_INT32, 1, NAN, GK_FLOAT64, GK_FLOAT64},
        {GK_ADD, GK_INT64, 1, 1e19, GK_FLOAT64, GK_FLOAT64},
        {GK_ADD, GK_INT32, 1, -INFINITY, GK_FLOAT64, GK_FLOAT64},
        {GK_ADD, GK_INT64, 1, -4611686018427387904.0, GK_INT64, GK_INT64},
        {GK_POW, GK_INT32, 1, 2, GK_INT32, GK_INT32},
        {GK_POW, GK_FLOAT32, 1, 0.5, GK_FLOAT32, GK_FLOAT32},
        {GK_POW, GK_BOOL, 1, 2, GK_INT64, GK_INT64},
        {GK_MAXIMUM, GK_INT32, 1, 0.5, GK_FLOAT64, GK_FLOAT64},
        {GK_MINIMUM, GK_FLOAT64, 0, 1, GK_FLOAT64, GK_FLOAT64},
    };
    for (int i = 0; i < COUNT(cases_); i++) {
        int64_t shape[1] = {BIG};
        gk_array *a = random_array(device, cases_[i].dtype, cases_[i].ndim, shape, GENERAL);
        gk_array *out = NULL;
        CHECK_OK(gk_binary_scalar(cases_[i].op, a, cases_[i].value, &out));
        double v = cases_[i].value;
        bool integral = v == trunc(v) && fabs(v) < 9.2e18;
        num value = {integral ? (int64_t)v : 0, integral ? 0 : v};
        gk_dtype c = cases_[i].compute;
        /* stored straight in c: a float keeps the sign of a zero */
        num y = integral && !gk_dtype_is_float(c) ? convert_num(value, GK_INT64, c)
                                         : convert_num((num){0, v}, GK_FLOAT64, c);
        int64_t n = gk_array_size(a);
        num *va = read_nums(a), *expected = malloc(sizeof *expected * (size_t)n);
        for (int64_t k = 0; va && k < n; k++)
            expected[k] =
                ref_binary(cases_[i].op, c, convert_num(va[k], cases_[i].dtype, c), y);
        char what[120];
        snprintf(what, sizeof what, "%s %s %g (%d-d)", gk_dtype_name(cases_[i].dtype),
                 gk_op_name(cases_[i].op), v, cases_[i].ndim);
        CHECK_NUMS(what, out, cases_[i].result, expected, n, tolerance(cases_[i].op, c));
        CHECK(out && gk_array_ndim(out) == cases_[i].ndim, "%s: ndim", what);
        if (cases_[i].op == GK_MUL && v == 0 && out && !isnan(expected[0].f)) { /* x * -0.0: the sign of zero */
            num *got = read_nums(out);
            CHECK(got && signbit(expected[0].f) == signbit(got[0].f), "%s: -0.0", what);
            free(got);
        }
        free(va);
        free(expected);
        gk_array_free(out);
        gk_array_free(a);
    }

    /* Integral values outside the integer dtype they would be stored in are
     * errors (NumPy 2's rule), not silently wrapped; comparisons, which
     * answer by value, are test_elementwise_api's. */
    static const struct {
        gk_op op;
        gk_dtype dtype;
        double value;
        const char *text;
    } out_of_range[] = {
        {GK_ADD, GK_UINT8, 300, "300"},   {GK_ADD, GK_UINT8, -1, "-1"},
        {GK_SUB, GK_INT32, 3e9, "3000000000"}, {GK_MAXIMUM, GK_UINT8, 256, "256"},
        {GK_POW, GK_INT32, -2147483649.0, "int32"},
    };
    for (int i = 0; i < COUNT(out_of_range); i++) {
        gk_array *a = random_array(device, out_of_range[i].dtype, 1, (int64_t[]){5}, GENERAL);
        gk_array *out = (gk_array *)1;
        CHECK_FAILS(gk_binary_scalar(out_of_range[i].op, a, out_of_range[i].value, &out),
                    GK_ERR_INVALID_ARGUMENT, out_of_range[i].text);
        CHECK(strstr(gk_last_error(), gk_dtype_name(out_of_range[i].dtype)) &&
                  strstr(gk_last_error(), gk_op_name(out_of_range[i].op)),
              "%s", gk_last_error());
        CHECK(out == NULL, "no output on failure");
        gk_array_free(a);
    }

    /* Empty arrays stay empty. */
    gk_array *e = NULL, *out = NULL;
    CHECK_OK(gk_zeros(device, GK_FLOAT32, 2, (int64_t[]){0, 4}, &e));
    CHECK_OK(gk_binary_scalar(GK_MUL, e, 2, &out));
    CHECK(out && gk_array_size(out) == 0 && gk_array_ndim(out) == 2 && gk_array_shape(out)[1] == 4,
          "empty * 2");
    gk_array_free(out);
    gk_array_free(e);
}

/* --- unary ops --- */

static gk_dtype unary_result(gk_op op, gk_dtype t)
{
    return op == GK_NEG || op == GK_ABS || op == GK_RELU ? t : math_float(t);
}

static void check_unary(gk_device device, gk_op op, gk_array *a, const char *layout)
{
    gk_dtype t = gk_array_dtype(a), result = unary_result(op, t);
    char what[160];
    snprintf(what, sizeof what, "%s %s, %s", gk_op_name(op), gk_dtype_name(t), layout);
    int64_t n = gk_array_size(a);
    num *va = read_nums(a), *expected = malloc(sizeof *expected * (size_t)(n ? n : 1));
    for (int64_t k = 0; va && k < n; k++)
        expected[k] = ref_unary(op, result, convert_num(va[k], t, result));
    free(va);
    double tol = tolerance(op, result);

    gk_array *out = NULL;
    CHECK_OK(gk_unary(op, a, &out));
    CHECK_NUMS(what, out, result, expected, n, tol);
    CHECK(out && same_shape(out, gk_array_ndim(a), gk_array_shape(a)), "%s: shape", what);
    gk_array_free(out);

    gk_array *into = NULL;
    CHECK_OK(gk_empty(device, result, gk_array_ndim(a), gk_array_shape(a), &into));
    CHECK_OK(gk_unary_into(op, a, into));
    CHECK_NUMS(what, into, result, expected, n, tol);
    gk_array_free(into);

    if (result == t) {
        CHECK_OK(gk_unary_into(op, a, a));
        CHECK_NUMS(what, a, result, expected, n, tol);
    }
    free(expected);
}

static void test_unary_ops(gk_device device)
{
    for (int o = 0; o < COUNT(unary_ops); o++) {
        gk_op op = unary_ops[o];
        for (int t = 0; t < GK_DTYPE_COUNT; t++) {
            if (gk_dtype_is_complex((gk_dtype)t))
                continue; /* complex: tests/package/test_complex.py */
            gk_dtype dtype = (gk_dtype)t;
            if (op == GK_NEG && dtype == GK_BOOL)
                continue; /* an error, tested below */
            gk_array *a;
            a = random_array(device, dtype, 1, (int64_t[]){BIG}, GENERAL);
            if (a)
                check_unary(device, op, a, "contiguous");
            gk_array_free(a);
            a = view_transposed(random_array(device, dtype, 2, (int64_t[]){337, 300}, GENERAL));
            if (a)
                check_unary(device, op, a, "transposed");
            gk_array_free(a);
            a = view_sliced(random_array(device, dtype, 2, (int64_t[]){7, 90}, GENERAL), 1, -2,
                            0, -4);
            if (a)
                check_unary(device, op, a, "negative step");
            gk_array_free(a);
            a = random_array(device, dtype, 0, NULL, GENERAL);
            if (a)
                check_unary(device, op, a, "0-d");
            gk_array_free(a);
            a = random_array(device, dtype, 3, (int64_t[]){2, 0, 3}, GENERAL);
            if (a)
                check_unary(device, op, a, "empty");
            gk_array_free(a);
        }
    }
}

/* --- where --- */

static void check_where(gk_device device, gk_array *cond, gk_array *a, gk_array *b,
                        gk_dtype result, const char *layout)
{
    (void)device;
    char what[160];
    snprintf(what, sizeof what, "where %s, %s, %s", gk_dtype_name(gk_array_dtype(a)),
             gk_dtype_name(gk_array_dtype(b)), layout);
    const gk_array *all[3] = {cond, a, b};
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    int64_t n = broadcast_shape(3, all, &ndim, shape);
    num *vc = read_nums(cond), *va = read_nums(a), *vb = read_nums(b);
    num *expected = malloc(sizeof *expected * (size_t)(n ? n : 1));
    for (int64_t k = 0; vc && va && vb && k < n; k++) {
        bool yes = vc[source_index(cond, ndim, shape, k)].i != 0;
        expected[k] = yes ? convert_num(va[source_index(a, ndim, shape, k)], gk_array_dtype(a),
                                        result)
                          : convert_num(vb[source_index(b, ndim, shape, k)], gk_array_dtype(b),
                                        result);
    }
    gk_array *out = NULL;
    CHECK_OK(gk_where(cond, a, b, &out));
    CHECK_NUMS(what, out, result, expected, n, 0);
    CHECK(out && same_shape(out, ndim, shape), "%s: shape", what);
    gk_array_free(out);
    free(vc);
    free(va);
    free(vb);
    free(expected);
}

static void test_where(gk_device device)
{
    int64_t big[1] = {BIG};
    for (int t = 0; t < GK_DTYPE_COUNT; t++) {
        if (gk_dtype_is_complex((gk_dtype)t))
            continue; /* complex: tests/package/test_complex.py */
        gk_dtype dtype = (gk_dtype)t;
        gk_array *c, *a, *b;
        c = random_array(device, GK_BOOL, 1, big, GENERAL);
        a = random_array(device, dtype, 1, big, GENERAL);
        b = random_array(device, dtype, 1, big, GENERAL);
        check_where(device, c, a, b, dtype, "contiguous");
        gk_array_free(b);
        b = random_array(device, dtype, 0, NULL, GENERAL);
        check_where(device, c, a, b, dtype, "b 0-d");
        check_where(device, c, b, a, dtype, "a 0-d");
        gk_array_free(c);
        gk_array_free(a);
        gk_array_free(b);

        c = view_transposed(random_array(device, GK_BOOL, 2, (int64_t[]){337, 300}, GENERAL));
        a = view_sliced(random_array(device, dtype, 2, (int64_t[]){300, 674}, GENERAL), 1, 0,
                        674, 2);
        b = view_transposed(random_array(device, dtype, 2, (int64_t[]){337, 300}, GENERAL));
        check_where(device, c, a, b, dtype, "strided");
        gk_array_free(c);
        gk_array_free(a);
        gk_array_free(b);

        c = random_array(device, GK_BOOL, 2, (int64_t[]){129, 1}, GENERAL);
        a = random_array(device, dtype, 1, (int64_t[]){257}, GENERAL);
        b = random_array(device, dtype, 0, NULL, GENERAL);
        check_where(device, c, a, b, dtype, "(129, 1), (257,), ()");
        gk_array_free(c);
        c = random_array(device, GK_BOOL, 0, NULL, GENERAL);
        check_where(device, c, b, b, dtype, "0-d");
        gk_array_free(c);
        c = random_array(device, GK_BOOL, 2, (int64_t[]){0, 257}, GENERAL);
        check_where(device, c, a, b, dtype, "empty");
        gk_array_free(c);
        gk_array_free(a);
        gk_array_free(b);
    }
    /* Mixed dtypes promote as binary ops do. */
    gk_array *c = random_array(device, GK_BOOL, 1, (int64_t[]){40}, GENERAL);
    gk_array *i32 = random_array(device, GK_INT32, 1, (int64_t[]){40}, GENERAL);
    gk_array *f64 = random_array(device, GK_FLOAT64, 1, (int64_t[]){40}, GENERAL);
    gk_array *f64_0d = random_array(device, GK_FLOAT64, 0, NULL, GENERAL);
    gk_array *u8 = random_array(device, GK_UINT8, 1, (int64_t[]){40}, GENERAL);
    check_where(device, c, i32, f64, GK_FLOAT64, "int32 and float64");
    check_where(device, c, i32, f64_0d, GK_FLOAT64, "int32 and 0-d float64");
    check_where(device, c, u8, i32, GK_INT32, "uint8 and int32");
    check_where(device, c, c, u8, GK_UINT8, "bool and uint8");
    /* Any nonzero byte in a bool condition is true. */
    unsigned char odd[4] = {0, 2, 255, 1};
    gk_array *odd_cond = NULL, *out = NULL;
    CHECK_OK(gk_from_host(device, GK_BOOL, 1, (int64_t[]){4}, odd, &odd_cond));
    gk_array *ones = NULL, *zeros = NULL;
    CHECK_OK(gk_ones(device, GK_INT32, 1, (int64_t[]){4}, &ones));
    CHECK_OK(gk_zeros(device, GK_INT32, 0, NULL, &zeros));
    CHECK_OK(gk_where(odd_cond, ones, zeros, &out));
    if (out)
        CHECK_VALUES(out, ((double[]){0, 1, 1, 1}), 4, 0);
    gk_array_free(out);
    gk_array_free(ones);
    gk_array_free(zeros);
    gk_array_free(odd_cond);

    /* Errors. */
    out = (gk_array *)1;
    CHECK_FAILS(gk_where(i32, i32, f64, &out), GK_ERR_UNSUPPORTED_DTYPE, "condition is int32");
    CHECK(out == NULL, "no output on failure");
    gk_array *wrong = random_array(device, GK_FLOAT32, 1, (int64_t[]){41}, GENERAL);
    CHECK_FAILS(gk_where(c, i32, wrong, &out), GK_ERR_INVALID_ARGUMENT, "(41,)");
    CHECK(strstr(gk_last_error(), "(40,)") && strstr(gk_last_error(), "where"), "%s",
          gk_last_error());
    CHECK_FAILS(gk_where(c, NULL, wrong, &out), GK_ERR_INVALID_ARGUMENT, "NULL");
    gk_array_free(wrong);
    gk_array_free(c);
    gk_array_free(i32);
    gk_array_free(f64);
    gk_array_free(f64_0d);
    gk_array_free(u8);
}

/* --- clip --- */

static void check_clip(gk_array *a, double low, double high, gk_dtype result, const char *layout)
{
    char what[160];
    snprintf(what, sizeof what, "clip %s to [%g, %g], %s", gk_dtype_name(gk_array_dtype(a)), low,
             high, layout);
    int64_t n = gk_array_size(a);
    num *va = read_nums(a), *expected = malloc(sizeof *expected * (size_t)(n ? n : 1));
    if (!gk_dtype_is_float(result)) { /* bounds clamped to the integer dtype's range */
        double min, max;
        int_range(result, &min, &max);
        low = low < min ? min : low > max ? max : low;
        high = high < min ? min : high > max ? max : high;
    }
    bool low_int = low == trunc(low) && fabs(low) < 9.2e18;
    bool high_int = high == trunc(high) && fabs(high) < 9.2e18;
    num lo = convert_num((num){low_int ? (int64_t)low : 0, low}, low_int ? GK_INT64 : GK_FLOAT64,
                         result);
    num hi = convert_num((num){high_int ? (int64_t)high : 0, high},
                         high_int ? GK_INT64 : GK_FLOAT64, result);
    for (int64_t k = 0; va && k < n; k++)
        expected[k] = ref_binary(
            GK_MINIMUM, result,
            ref_binary(GK_MAXIMUM, result, convert_num(va[k], gk_array_dtype(a), result), lo), hi);
    gk_array *out = NULL;
    CHECK_OK(gk_clip(a, low, high, &out));
    CHECK_NUMS(what, out, result, expected, n, 0);
    CHECK(out && same_shape(out, gk_array_ndim(a), gk_array_shape(a)), "%s: shape", what);
    gk_array_free(out);
    free(va);
    free(expected);
}

static void test_clip(gk_device device)
{
    for (int t = 0; t < GK_DTYPE_COUNT; t++) {
        if (gk_dtype_is_complex((gk_dtype)t))
            continue; /* complex: tests/package/test_complex.py */
        gk_dtype dtype = (gk_dtype)t, integral = dtype == GK_BOOL ? GK_INT64 : dtype;
        gk_dtype fractional = gk_dtype_is_float(dtype) ? dtype : GK_FLOAT64;
        gk_array *a = random_array(device, dtype, 1, (int64_t[]){BIG}, GENERAL);
        check_clip(a, -3, 5, integral, "contiguous");
        check_clip(a, 0, 1, integral, "[0, 1]");
        check_clip(a, -2.5, 3.25, fractional, "fractional bounds");
        check_clip(a, 5, -3, integral, "low > high: all high");
        check_clip(a, -300, 300, integral, "bounds beyond uint8");
        check_clip(a, 3e9, -3e9, integral, "bounds beyond int32");
        check_clip(a, -INFINITY, 2, fractional, "infinite bound");
        check_clip(a, NAN, 2, fractional, "NaN bound");
        gk_array_free(a);
        a = view_transposed(random_array(device, dtype, 2, (int64_t[]){337, 300}, GENERAL));
        check_clip(a, -1, 100, integral, "transposed");
        gk_array_free(a);
        a = random_array(device, dtype, 0, NULL, GENERAL);
        check_clip(a, -1, 1, integral, "0-d");
        gk_array_free(a);
        a = random_array(device, dtype, 2, (int64_t[]){4, 0}, GENERAL);
        check_clip(a, -1, 1, integral, "empty");
        gk_array_free(a);
    }
    gk_array *out = (gk_array *)1;
    CHECK_FAILS(gk_clip(NULL, 0, 1, &out), GK_ERR_INVALID_ARGUMENT, "clip");
    CHECK(out == NULL, "no output on failure");
}

/* --- cast --- */

static void check_cast(gk_array *a, gk_dtype to, const char *layout)
{
    char what[160];
    snprintf(what, sizeof what, "cast %s to %s, %s", gk_dtype_name(gk_array_dtype(a)),
             gk_dtype_name(to), layout);
    int64_t n = gk_array_size(a);
    num *va = read_nums(a), *expected = malloc(sizeof *expected * (size_t)(n ? n : 1));
    for (int64_t k = 0; va && k < n; k++)
        expected[k] = convert_num(va[k], gk_array_dtype(a), to);
    gk_array *out = NULL;
    CHECK_OK(gk_cast(a, to, &out));
    CHECK_NUMS(what, out, to, expected, n, 0);
    CHECK(out && same_shape(out, gk_array_ndim(a), gk_array_shape(a)), "%s: shape", what);
    gk_array_free(out);
    free(va);
    free(expected);
}

static void test_cast(gk_device device)
{
    for (int from = 0; from < GK_DTYPE_COUNT; from++) {
        if (gk_dtype_is_complex((gk_dtype)from))
            continue; /* complex: tests/package/test_complex.py */
        gk_array *contiguous = random_array(device, (gk_dtype)from, 1, (int64_t[]){BIG}, GENERAL);
        gk_array *strided = view_sliced(
            view_transposed(random_array(device, (gk_dtype)from, 2, (int64_t[]){61, 50}, GENERAL)),
            0, 49, -100, -2);
        gk_array *zero_d = random_array(device, (gk_dtype)from, 0, NULL, GENERAL);
        gk_array *empty = random_array(device, (gk_dtype)from, 1, (int64_t[]){0}, GENERAL);
        for (int to = 0; to < GK_DTYPE_COUNT; to++) {
            if (gk_dtype_is_complex((gk_dtype)to))
                continue; /* complex: tests/package/test_complex.py */
            check_cast(contiguous, (gk_dtype)to, "contiguous");
            check_cast(strided, (gk_dtype)to, "strided");
            check_cast(zero_d, (gk_dtype)to, "0-d");
            check_cast(empty, (gk_dtype)to, "empty");
        }
        gk_array_free(contiguous);
        gk_array_free(strided);
        gk_array_free(zero_d);
        gk_array_free(empty);
    }
    /* Extremes: saturation from floating types, NaN to 0, wrapping between
     * integers. */
    double values[] = {NAN, INFINITY, -INFINITY, 1e300, -1e300, 3e9, -3e9, 255.9, -0.5, 256};
    gk_array *a = NULL;
    CHECK_OK(gk_from_host(device, GK_FLOAT64, 1, (int64_t[]){10}, values, &a));
    for (int to = 0; to < GK_DTYPE_COUNT; to++)
        if (!gk_dtype_is_complex((gk_dtype)to) && a) /* complex: test_complex.py */
            check_cast(a, (gk_dtype)to, "extremes");
    gk_array *u8 = NULL;
    if (a)
        CHECK_OK(gk_cast(a, GK_UINT8, &u8));
    if (u8)
        CHECK_VALUES(u8, ((double[]){0, 255, 0, 255, 0, 255, 0, 255, 0, 255}), 10, 0);
    gk_array_free(u8);
    int64_t big_ints[] = {INT64_MAX, INT64_MIN, 4294967296 + 7, -1, 256 + 3};
    gk_array *i64 = NULL;
    CHECK_OK(gk_from_host(device, GK_INT64, 1, (int64_t[]){5}, big_ints, &i64));
    for (int to = 0; to < GK_DTYPE_COUNT; to++)
        if (!gk_dtype_is_complex((gk_dtype)to) && i64) /* complex: test_complex.py */
            check_cast(i64, (gk_dtype)to, "int64 extremes");
    gk_array *i32 = NULL;
    if (i64)
        CHECK_OK(gk_cast(i64, GK_INT32, &i32));
    if (i32)
        CHECK_VALUES(i32, ((double[]){-1, 0, 7, -1, 259}), 5, 0);
    gk_array_free(i32);

    /* A cast to the same dtype is a copy: changing it leaves the source. */
    gk_array *same = NULL;
    if (i64)
        CHECK_OK(gk_cast(i64, GK_INT64, &same));
    if (same) {
        CHECK_OK(gk_binary_into(GK_MUL, same, same, same));
        check_cast(i64, GK_INT64, "source unchanged");
        num *v = read_nums(i64);
        CHECK(v && v[0].i == INT64_MAX, "the source changed");
        free(v);
    }
    gk_array_free(same);

    gk_array *out = (gk_array *)1;
    CHECK_FAILS(gk_cast(a, (gk_dtype)42, &out), GK_ERR_INVALID_ARGUMENT, "42");
    CHECK(out == NULL, "no output on failure");
    CHECK_FAILS(gk_cast(a, (gk_dtype)-1, &out), GK_ERR_INVALID_ARGUMENT, "cast");
    CHECK_FAILS(gk_cast(NULL, GK_INT32, &out), GK_ERR_INVALID_ARGUMENT, "cast");
    gk_array_free(a);
    gk_array_free(i64);
}

/* --- in place with overlap, and conversion temporaries --- */

static void test_overlap(gk_device device)
{
    /* out = a[1:], inputs a[:-1] and a[1:]: a shifted overlap must read the
     * old values (NumPy's result, not a running sum). */
    int64_t n = 1000;
    gk_array *a = random_array(device, GK_FLOAT32, 1, &n, GENERAL);
    gk_array *head = NULL, *tail = NULL;
    CHECK_OK(gk_slice(a, 0, 0, n - 1, 1, &head));
    CHECK_OK(gk_slice(a, 0, 1, n, 1, &tail));
    if (head && tail) {
        int ndim;
        int64_t shape[GK_MAX_DIMS], m;
        num *expected = expected_binary(GK_ADD, head, tail, GK_FLOAT32, &m, &ndim, shape);
        CHECK_OK(gk_binary_into(GK_ADD, head, tail, tail));
        CHECK_NUMS("a[1:] = a[:-1] + a[1:]", tail, GK_FLOAT32, expected, m, 0);
        free(expected);
        /* and the other direction */
        expected = expected_binary(GK_MUL, tail, head, GK_FLOAT32, &m, &ndim, shape);
        CHECK_OK(gk_binary_into(GK_MUL, tail, head, head));
        CHECK_NUMS("a[:-1] = a[1:] * a[:-1]", head, GK_FLOAT32, expected, m, 0);
        free(expected);
    }
    gk_array_free(head);
    gk_array_free(tail);

    /* out = a reversed, in = a: same memory, opposite order. */
    gk_array *reversed = NULL;
    CHECK_OK(gk_slice(a, 0, -1, -n - 1, -1, &reversed));
    if (reversed) {
        int ndim;
        int64_t shape[GK_MAX_DIMS], m;
        num *expected = expected_binary(GK_SUB, a, reversed, GK_FLOAT32, &m, &ndim, shape);
        CHECK_OK(gk_binary_into(GK_SUB, a, reversed, reversed));
        CHECK_NUMS("a[::-1] = a - a[::-1]", reversed, GK_FLOAT32, expected, m, 0);
        free(expected);
        num *va = read_nums(a);
        num *neg = malloc(sizeof *neg * (size_t)n);
        for (int64_t k = 0; va && k < n; k++)
            neg[k] = ref_unary(GK_NEG, GK_FLOAT32, va[n - 1 - k]);
        CHECK_OK(gk_unary_into(GK_NEG, reversed, a));
        CHECK_NUMS("a = -a[::-1]", a, GK_FLOAT32, neg, n, 0);
        free(va);
        free(neg);
    }
    gk_array_free(reversed);
    gk_array_free(a);

    /* out = m (3, 4), b = m's first row broadcast: the row is copied first. */
    gk_array *m = random_array(device, GK_INT32, 2, (int64_t[]){3, 4}, GENERAL), *row = NULL;
    CHECK_OK(gk_slice(m, 0, 0, 1, 1, &row));
    if (row) {
        int ndim;
        int64_t shape[GK_MAX_DIMS], count;
        num *expected = expected_binary(GK_SUB, m, row, GK_INT32, &count, &ndim, shape);
        CHECK_OK(gk_binary_into(GK_SUB, m, row, m));
        CHECK_NUMS("m -= m[0:1]", m, GK_INT32, expected, count, 0);
        free(expected);
    }
    gk_array_free(row);

    /* In place where the other input needs a conversion: int32 + float64
     * into the float64 input; int32 exp into a float64 array. */
    gk_array *f = random_array(device, GK_FLOAT64, 2, (int64_t[]){3, 4}, GENERAL);
    if (f && m) {
        int ndim;
        int64_t shape[GK_MAX_DIMS], count;
        num *expected = expected_binary(GK_ADD, m, f, GK_FLOAT64, &count, &ndim, shape);
        CHECK_OK(gk_binary_into(GK_ADD, m, f, f));
        CHECK_NUMS("f = int32 + f", f, GK_FLOAT64, expected, count, 0);
        free(expected);
        expected = expected_binary(GK_DIV, m, m, GK_FLOAT64, &count, &ndim, shape);
        CHECK_OK(gk_binary_into(GK_DIV, m, m, f));
        CHECK_NUMS("f = int32 / int32", f, GK_FLOAT64, expected, count, 0);
        free(expected);
        num *vm = read_nums(m);
        expected = malloc(sizeof *expected * 12);
        for (int k = 0; vm && k < 12; k++)
            expected[k] = ref_unary(GK_EXP, GK_FLOAT64, convert_num(vm[k], GK_INT32, GK_FLOAT64));
        CHECK_OK(gk_unary_into(GK_EXP, m, f));
        CHECK_NUMS("f = exp(int32)", f, GK_FLOAT64, expected, 12, 1e-13);
        free(vm);
        free(expected);
    }
    gk_array_free(f);
    gk_array_free(m);

    /* exp(a[:-1]) into a[1:] (float64): shifted, copied first. */
    gk_array *d = random_array(device, GK_FLOAT64, 1, (int64_t[]){BIG}, GENERAL);
    gk_array *d_head = NULL, *d_tail = NULL;
    CHECK_OK(gk_slice(d, 0, 0, BIG - 1, 1, &d_head));
    CHECK_OK(gk_slice(d, 0, 1, BIG, 1, &d_tail));
    if (d_head && d_tail) {
        num *vh = read_nums(d_head), *expected = malloc(sizeof *expected * (BIG - 1));
        for (int64_t k = 0; vh && k < BIG - 1; k++)
            expected[k] = ref_unary(GK_EXP, GK_FLOAT64, vh[k]);
        CHECK_OK(gk_unary_into(GK_EXP, d_head, d_tail));
        CHECK_NUMS("d[1:] = exp(d[:-1])", d_tail, GK_FLOAT64, expected, BIG - 1, 1e-13);
        free(vh);
        free(expected);
    }
    gk_array_free(d_head);
    gk_array_free(d_tail);
    gk_array_free(d);

    /* Host memory wrapped twice, as int64 and as float64: an output over
     * the same bytes as an input of another dtype. */
    int64_t shared[64];
    for (int k = 0; k < 64; k++)
        shared[k] = k - 20;
    gk_array *as_int = NULL, *as_float = NULL;
    CHECK_OK(gk_wrap_host(GK_INT64, 1, (int64_t[]){64}, shared, &as_int));
    CHECK_OK(gk_wrap_host(GK_FLOAT64, 1, (int64_t[]){64}, shared, &as_float));
    if (device.kind == GK_DEVICE_CPU && as_int && as_float) {
        CHECK_OK(gk_unary_into(GK_SQRT, as_int, as_float));
        double roots[64];
        for (int k = 0; k < 64; k++)
            roots[k] = sqrt((double)(k - 20));
        CHECK_VALUES(as_float, roots, 64, 0);
    }
    gk_array_free(as_int);
    gk_array_free(as_float);
}

/* --- special values, spelled out --- */

static gk_array *from_doubles(gk_device device, gk_dtype t, int64_t n, const double *values)
{
    num *v = malloc(sizeof *v * (size_t)n);
    for (int64_t k = 0; k < n; k++)
        v[k] = gk_dtype_is_float(t) ? (num){0, values[k]} : (num){(int64_t)values[k], 0};
    gk_array *a = make_array(device, t, 1, &n, v);
    free(v);
    return a;
}

/* op(x[, y]) of dtype t gives `expected` (values, and dtype `result`). */
static void expect(gk_device device, gk_op op, gk_dtype t, int64_t n, const double *x,
                   const double *y, gk_dtype result, const double *expected, double tol)
{
    gk_array *a = from_doubles(device, t, n, x), *b = y ? from_doubles(device, t, n, y) : NULL;
    gk_array *out = NULL;
    if (y)
        CHECK_OK(gk_binary(op, a, b, &out));
    else
        CHECK_OK(gk_unary(op, a, &out));
    CHECK(out && gk_array_dtype(out) == result, "%s of %s gives %s", gk_op_name(op),
          gk_dtype_name(t), out ? gk_dtype_name(gk_array_dtype(out)) : "nothing");
    if (out)
        CHECK_VALUES(out, expected, n, tol);
    gk_array_free(out);
    gk_array_free(a);
    gk_array_free(b);
}

static void test_special_values(gk_device device)
{
    const double inf = INFINITY, nan = NAN, pi = 3.14159265358979323846;
    for (int t = GK_FLOAT32; t <= GK_FLOAT64; t++) {
        gk_dtype f = (gk_dtype)t;
        expect(device, GK_RELU, f, 5, (double[]){nan, -1, 0, 2, -inf}, NULL, f,
               (double[]){nan, 0, 0, 2, 0}, 0);
        expect(device, GK_MINIMUM, f, 4, (double[]){nan, 1, 1, -inf}, (double[]){1, nan, 2, 0},
               f, (double[]){nan, nan, 1, -inf}, 0);
        expect(device, GK_MAXIMUM, f, 4, (double[]){nan, 1, 1, -inf}, (double[]){1, nan, 2, 0},
               f, (double[]){nan, nan, 2, 0}, 0);
        expect(device, GK_SIGMOID, f, 7, (double[]){-1000, -100, -20, 0, 20, 1000, nan}, NULL, f,
               (double[]){0, 3.720075976020836e-44, 2.0611536181902037e-09, 0.5,
                          0.99999999793884631, 1, nan},
               f == GK_FLOAT32 ? 1e-6 : 1e-15);
        expect(device, GK_EXP, f, 3, (double[]){1000, -1000, 0}, NULL, f, (double[]){inf, 0, 1},
               0);
        expect(device, GK_LOG, f, 4, (double[]){0, -1, 1, inf}, NULL, f,
               (double[]){-inf, nan, 0, inf}, 0);
        expect(device, GK_SQRT, f, 3, (double[]){-1, 4, inf}, NULL, f, (double[]){nan, 2, inf},
               0);
        expect(device, GK_TANH, f, 3, (double[]){-1000, 1000, nan}, NULL, f,
               (double[]){-1, 1, nan}, 0);
        /* The domain edges of the new functions, as C99 Annex F gives them. */
        expect(device, GK_ASIN, f, 4, (double[]){2, -2, 1, -0.0}, NULL, f,
               (double[]){nan, nan, pi / 2, -0.0}, f == GK_FLOAT32 ? 1e-6 : 1e-15);
        expect(device, GK_ACOS, f, 3, (double[]){2, 1, -1}, NULL, f, (double[]){nan, 0, pi},
               f == GK_FLOAT32 ? 1e-6 : 1e-15);
        expect(device, GK_ATAN, f, 3, (double[]){inf, -inf, nan}, NULL, f,
               (double[]){pi / 2, -pi / 2, nan}, f == GK_FLOAT32 ? 1e-6 : 1e-15);
        expect(device, GK_ACOSH, f, 4, (double[]){0.5, 1, inf, -inf}, NULL, f,
               (double[]){nan, 0, inf, nan}, 0);
        expect(device, GK_ATANH, f, 4, (double[]){1, -1, 2, 0}, NULL, f,
               (double[]){inf, -inf, nan, 0}, 0);
        expect(device, GK_ASINH, f, 3, (double[]){inf, -inf, 0}, NULL, f,
               (double[]){inf, -inf, 0}, 0);
        expect(device, GK_SINH, f, 3, (double[]){1000, -1000, 0}, NULL, f,
               (double[]){inf, -inf, 0}, 0);
        expect(device, GK_COSH, f, 3, (double[]){1000, -1000, 0}, NULL, f,
               (double[]){inf, inf, 1}, 0);
        expect(device, GK_TAN, f, 3, (double[]){inf, 0, nan}, NULL, f, (double[]){nan, 0, nan},
               0);
        expect(device, GK_LOG1P, f, 4, (double[]){-1, -2, inf, 0}, NULL, f,
               (double[]){-inf, nan, inf, 0}, 0);
        expect(device, GK_EXPM1, f, 4, (double[]){1000, -1000, -inf, 0}, NULL, f,
               (double[]){inf, -1, -1, 0}, 0);
        expect(device, GK_DIV, f, 3, (double[]){1, 0, -1}, (double[]){0, 0, 0}, f,
               (double[]){inf, nan, -inf}, 0);
        expect(device, GK_EQ, f, 3, (double[]){nan, 1, -0.0}, (double[]){nan, 1, 0.0}, GK_BOOL,
               (double[]){0, 1, 1}, 0);
        expect(device, GK_NE, f, 2, (double[]){nan, 1}, (double[]){nan, 1}, GK_BOOL,
               (double[]){1, 0}, 0);
        expect(device, GK_POW, f, 4, (double[]){-8, 2, 0, nan}, (double[]){1.0 / 3, -1, 0, 0}, f,
               (double[]){nan, 0.5, 1, 1}, 0);
    }
    /* Integers wrap; true division gives float32. */
    expect(device, GK_ADD, GK_INT32, 2, (double[]){INT32_MAX, INT32_MIN},
           (double[]){1, -1}, GK_INT32, (double[]){INT32_MIN, INT32_MAX}, 0);
    expect(device, GK_ABS, GK_INT32, 3, (double[]){INT32_MIN, -5, 5}, NULL, GK_INT32,
           (double[]){INT32_MIN, 5, 5}, 0);
    expect(device, GK_NEG, GK_INT32, 2, (double[]){INT32_MIN, 7}, NULL, GK_INT32,
           (double[]){INT32_MIN, -7}, 0);
    expect(device, GK_NEG, GK_UINT8, 3, (double[]){5, 0, 255}, NULL, GK_UINT8,
           (double[]){251, 0, 1}, 0);
    expect(device, GK_SUB, GK_UINT8, 2, (double[]){1, 200}, (double[]){2, 100}, GK_UINT8,
           (double[]){255, 100}, 0);
    expect(device, GK_MUL, GK_UINT8, 1, (double[]){16}, (double[]){17}, GK_UINT8,
           (double[]){16}, 0);
    expect(device, GK_DIV, GK_INT32, 4, (double[]){1, 0, -1, 7}, (double[]){0, 0, 0, 2},
           GK_FLOAT64, (double[]){INFINITY, NAN, -INFINITY, 3.5}, 0);
    expect(device, GK_DIV, GK_BOOL, 3, (double[]){1, 0, 1}, (double[]){0, 0, 1}, GK_FLOAT64,
           (double[]){INFINITY, NAN, 1}, 0);
    expect(device, GK_EXP, GK_INT64, 2, (double[]){0, 1}, NULL, GK_FLOAT64,
           (double[]){1, 2.718281828459045}, 1e-13);
    expect(device, GK_EXP, GK_INT16, 2, (double[]){0, 1}, NULL, GK_FLOAT32,
           (double[]){1, 2.718281828459045}, 1e-6);
    expect(device, GK_SQRT, GK_BOOL, 2, (double[]){0, 1}, NULL, GK_FLOAT16, (double[]){0, 1}, 0);
    /* Integer pow: exact, wrapping; negative exponents as PyTorch. */
    expect(device, GK_POW, GK_INT32, 8, (double[]){2, 2, -1, -1, 1, 0, 0, 7},
           (double[]){31, -1, -3, -2, -5, -1, 0, 2}, GK_INT32,
           (double[]){INT32_MIN, 0, -1, 1, 1, 0, 1, 49}, 0);
    expect(device, GK_POW, GK_UINT8, 3, (double[]){2, 3, 0}, (double[]){8, 5, 0}, GK_UINT8,
           (double[]){0, 243, 1}, 0);
    {
        int64_t base[2] = {3, -3}, exponent[2] = {40, 39};
        gk_array *a = NULL, *b = NULL, *out = NULL;
        CHECK_OK(gk_from_host(device, GK_INT64, 1, (int64_t[]){2}, base, &a));
        CHECK_OK(gk_from_host(device, GK_INT64, 1, (int64_t[]){2}, exponent, &b));
        CHECK_OK(gk_binary(GK_POW, a, b, &out));
        uint64_t p40 = 1, p39 = 1;
        for (int k = 0; k < 40; k++)
            p40 *= 3;
        for (int k = 0; k < 39; k++)
            p39 *= (uint64_t)-3;
        num expected[2] = {{(int64_t)p40, 0}, {(int64_t)p39, 0}};
        CHECK_NUMS("3**40, (-3)**39 in int64", out, GK_INT64, expected, 2, 0);
        gk_array_free(out);
        gk_array_free(a);
        gk_array_free(b);
    }
    /* bool: add is or, mul is and, minimum/maximum and/or; any nonzero byte
     * is true. */
    unsigned char x[4] = {0, 0, 2, 255}, y[4] = {0, 7, 0, 1};
    gk_array *a = NULL, *b = NULL, *out = NULL;
    CHECK_OK(gk_from_host(device, GK_BOOL, 1, (int64_t[]){4}, x, &a));
    CHECK_OK(gk_from_host(device, GK_BOOL, 1, (int64_t[]){4}, y, &b));
    static const struct {
        gk_op op;
        double values[4];
    } bools[] = {
        {GK_ADD, {0, 1, 1, 1}}, {GK_MUL, {0, 0, 0, 1}}, {GK_MINIMUM, {0, 0, 0, 1}},
        {GK_MAXIMUM, {0, 1, 1, 1}}, {GK_EQ, {1, 0, 0, 1}}, {GK_NE, {0, 1, 1, 0}},
        {GK_LT, {0, 1, 0, 0}}, {GK_GE, {1, 0, 1, 1}},
    };
    for (int i = 0; i < COUNT(bools); i++) {
        CHECK_OK(gk_binary(bools[i].op, a, b, &out));
        CHECK(out && gk_array_dtype(out) == GK_BOOL, "bool %s", gk_op_name(bools[i].op));
        if (out)
            CHECK_VALUES(out, bools[i].values, 4, 0);
        gk_array_free(out);
    }
    CHECK_OK(gk_unary(GK_ABS, a, &out));
    if (out)
        CHECK_VALUES(out, ((double[]){0, 0, 1, 1}), 4, 0);
    gk_array_free(out);
    gk_array_free(a);
    gk_array_free(b);
}

/* --- errors --- */

static void test_errors(gk_device device)
{
    gk_array *m23 = random_array(device, GK_FLOAT32, 2, (int64_t[]){2, 3}, GENERAL);
    gk_array *v4 = random_array(device, GK_FLOAT32, 1, (int64_t[]){4}, GENERAL);
    gk_array *bools = random_array(device, GK_BOOL, 1, (int64_t[]){4}, GENERAL);
    gk_array *ints = random_array(device, GK_INT32, 2, (int64_t[]){2, 3}, GENERAL);
    gk_array *out = (gk_array *)1;

    /* Shapes that do not broadcast: both shapes and the op named. */
    CHECK_FAILS(gk_binary(GK_ADD, m23, v4, &out), GK_ERR_INVALID_ARGUMENT, "(2, 3)");
    CHECK(strstr(gk_last_error(), "(4,)") && strstr(gk_last_error(), "add"), "%s",
          gk_last_error());
    CHECK(out == NULL, "no output on failure");
    gk_array *into = NULL;
    CHECK_OK(gk_empty(device, GK_FLOAT32, 2, (int64_t[]){2, 3}, &into));
    CHECK_FAILS(gk_binary_into(GK_MUL, m23, v4, into), GK_ERR_INVALID_ARGUMENT, "(4,)");

    /* The output of *_into: shape, dtype. */
    CHECK_FAILS(gk_binary_into(GK_ADD, v4, v4, into), GK_ERR_INVALID_ARGUMENT, "(2, 3)");
    CHECK(strstr(gk_last_error(), "(4,)") && strstr(gk_last_error(), "add"), "%s",
          gk_last_error());
    CHECK_FAILS(gk_binary_into(GK_LT, m23, m23, into), GK_ERR_INVALID_ARGUMENT, "bool");
    CHECK(strstr(gk_last_error(), "float32"), "%s", gk_last_error());
    CHECK_FAILS(gk_binary_into(GK_ADD, ints, ints, into), GK_ERR_INVALID_ARGUMENT, "int32");
    CHECK_FAILS(gk_binary_into(GK_ADD, ints, m23, ints), GK_ERR_INVALID_ARGUMENT, "float64");
    CHECK_FAILS(gk_unary_into(GK_EXP, ints, ints), GK_ERR_INVALID_ARGUMENT, "float64");
    CHECK_FAILS(gk_unary_into(GK_NEG, m23, v4), GK_ERR_INVALID_ARGUMENT, "(2, 3)");
    CHECK_FAILS(gk_binary_into(GK_ADD, m23, m23, NULL), GK_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(gk_unary_into(GK_NEG, m23, NULL), GK_ERR_INVALID_ARGUMENT, "NULL");
    /* A broadcast view cannot be an output. */
    gk_array *row = random_array(device, GK_FLOAT32, 1, (int64_t[]){3}, GENERAL), *stretched = NULL;
    CHECK_OK(gk_broadcast_to(row, 2, (int64_t[]){2, 3}, &stretched));
    CHECK_FAILS(gk_binary_into(GK_ADD, m23, m23, stretched), GK_ERR_INVALID_ARGUMENT,
                "broadcast");
    CHECK_FAILS(gk_unary_into(GK_ABS, m23, stretched), GK_ERR_INVALID_ARGUMENT, "broadcast");
    gk_array_free(stretched);
    gk_array_free(row);
    /* A failed *_into leaves its output alone. */
    num *before = read_nums(into);
    CHECK_FAILS(gk_binary_into(GK_SUB, bools, bools, into), GK_ERR_UNSUPPORTED_DTYPE, "sub");
    num *after = read_nums(into);
    CHECK(before && after && memcmp(before, after, 6 * sizeof *before) == 0, "output changed");
    free(before);
    free(after);

    /* Ops of the wrong kind, and no op at all. */
    CHECK_FAILS(gk_binary(GK_NEG, m23, m23, &out), GK_ERR_INVALID_ARGUMENT, "neg");
    CHECK(strstr(gk_last_error(), "unary"), "%s", gk_last_error());
    CHECK_FAILS(gk_binary_into(GK_SQRT, m23, m23, into), GK_ERR_INVALID_ARGUMENT, "sqrt");
    CHECK_FAILS(gk_binary_scalar(GK_RELU, m23, 1, &out), GK_ERR_INVALID_ARGUMENT, "relu");
    CHECK_FAILS(gk_unary(GK_ADD, m23, &out), GK_ERR_INVALID_ARGUMENT, "add");
    CHECK(strstr(gk_last_error(), "binary"), "%s", gk_last_error());
    CHECK_FAILS(gk_unary_into(GK_GE, m23, into), GK_ERR_INVALID_ARGUMENT, "ge");
    CHECK_FAILS(gk_binary((gk_op)99, m23, m23, &out), GK_ERR_INVALID_ARGUMENT, "99");
    CHECK_FAILS(gk_unary((gk_op)GK_OP_COUNT, m23, &out), GK_ERR_INVALID_ARGUMENT, "not an op");
    CHECK_FAILS(gk_unary((gk_op)-1, m23, &out), GK_ERR_INVALID_ARGUMENT, "not an op");
    CHECK(out == NULL, "no output on failure");

    /* bool operands: sub, pow and neg are not defined. */
    CHECK_FAILS(gk_binary(GK_SUB, bools, bools, &out), GK_ERR_UNSUPPORTED_DTYPE, "bool");
    CHECK(strstr(gk_last_error(), "sub") && strstr(gk_last_error(), "(4,)"), "%s",
          gk_last_error());
    CHECK_FAILS(gk_binary(GK_POW, bools, bools, &out), GK_ERR_UNSUPPORTED_DTYPE, "pow");
    CHECK_FAILS(gk_unary(GK_NEG, bools, &out), GK_ERR_UNSUPPORTED_DTYPE, "bool");
    CHECK(strstr(gk_last_error(), "neg"), "%s", gk_last_error());
    gk_array *bool_0d = random_array(device, GK_BOOL, 0, NULL, GENERAL);
    CHECK_FAILS(gk_binary(GK_SUB, bools, bool_0d, &out), GK_ERR_UNSUPPORTED_DTYPE, "bool");
    gk_array_free(bool_0d);

    /* NULL operands. */
    CHECK_FAILS(gk_binary(GK_ADD, NULL, m23, &out), GK_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(gk_binary(GK_ADD, m23, NULL, &out), GK_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(gk_binary_into(GK_ADD, NULL, m23, into), GK_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(gk_binary_scalar(GK_ADD, NULL, 1, &out), GK_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(gk_unary(GK_EXP, NULL, &out), GK_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(gk_unary_into(GK_EXP, NULL, into), GK_ERR_INVALID_ARGUMENT, "NULL");
    CHECK(out == NULL, "no output on failure");

    gk_array_free(into);
    gk_array_free(m23);
    gk_array_free(v4);
    gk_array_free(bools);
    gk_array_free(ints);
}

/* Operands on two devices (needs a second device, such as a GPU). */
static void test_device_mismatch(void)
{
    gk_device devices[16];
    int count = test_devices(devices, 16);
    if (count < 2)
        return;
    gk_array *a = random_array(devices[0], GK_FLOAT32, 1, (int64_t[]){3}, GENERAL);
    gk_array *b = random_array(devices[1], GK_FLOAT32, 1, (int64_t[]){3}, GENERAL);
    gk_array *c = random_array(devices[1], GK_BOOL, 1, (int64_t[]){3}, GENERAL);
    gk_array *out = (gk_array *)1;
    char name[GK_DEVICE_NAME_MAX];
    gk_device_name(devices[1], name, sizeof name);
    CHECK_FAILS(gk_binary(GK_ADD, a, b, &out), GK_ERR_INVALID_ARGUMENT, name);
    CHECK(strstr(gk_last_error(), "add"), "%s", gk_last_error());
    CHECK(out == NULL, "no output on failure");
    CHECK_FAILS(gk_binary_into(GK_ADD, a, a, b), GK_ERR_INVALID_ARGUMENT, name);
    CHECK_FAILS(gk_unary_into(GK_EXP, a, b), GK_ERR_INVALID_ARGUMENT, name);
    CHECK_FAILS(gk_where(c, a, a, &out), GK_ERR_INVALID_ARGUMENT, name);
    gk_array_free(a);
    gk_array_free(b);
    gk_array_free(c);
}

static void test_op_names(void)
{
    /* The values are stable: new ops come after the old ones. */
    static const char *const names[] = {
        "add", "sub", "mul",  "div", "pow", "minimum", "maximum", "eq",
        "ne",  "lt",  "le",   "gt",  "ge",  "neg",     "abs",     "exp",
        "log", "sqrt", "sin", "cos", "tanh", "tan", "asin", "acos", "atan", "sinh",
        "cosh", "asinh", "acosh", "atanh", "log1p", "expm1", "sigmoid", "relu",
        "atan2", "copysign", "hypot", "logaddexp", "nextafter", "floor_divide", "remainder",
        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
        "bitwise_right_shift", "logical_and", "logical_or", "logical_xor", "ceil", "floor",
        "trunc", "round", "sign", "signbit", "isnan", "isinf", "isfinite", "log2", "log10",
        "square", "positive", "reciprocal", "bitwise_invert", "logical_not", "conj", "real",
        "imag"};
    CHECK(COUNT(names) == GK_OP_COUNT, "%d names for %d ops", COUNT(names), GK_OP_COUNT);
    for (int op = 0; op < GK_OP_COUNT && op < COUNT(names); op++) {
        bool binary = op <= GK_GE || (op >= GK_ATAN2 && op <= GK_LOGICAL_XOR);
        CHECK(strcmp(gk_op_name((gk_op)op), names[op]) == 0, "op %d is %s", op,
              gk_op_name((gk_op)op));
        CHECK(gk_op_is_binary((gk_op)op) == binary, "op %s", names[op]);
    }
    CHECK(GK_RELU == 33 && GK_ATAN2 == 34 && GK_IMAG == GK_OP_COUNT - 1, "op values moved");
    CHECK(strcmp(gk_op_name((gk_op)GK_OP_COUNT), "invalid op") == 0, "%s",
          gk_op_name((gk_op)GK_OP_COUNT));
    CHECK(!gk_op_is_binary((gk_op)-1) && !gk_op_is_binary((gk_op)GK_OP_COUNT), "invalid ops");
}

int main(void)
{
    test_op_names();
    FOR_EACH_DEVICE(test_binary_ops);
    FOR_EACH_DEVICE(test_promotion);
    FOR_EACH_DEVICE(test_binary_scalar);
    FOR_EACH_DEVICE(test_unary_ops);
    FOR_EACH_DEVICE(test_where);
    FOR_EACH_DEVICE(test_clip);
    FOR_EACH_DEVICE(test_cast);
    FOR_EACH_DEVICE(test_overlap);
    FOR_EACH_DEVICE(test_special_values);
    FOR_EACH_DEVICE(test_errors);
    test_device_mismatch();
    printf("elementwise: %d results compared\n", cases);
    CHECK_DONE();
}
