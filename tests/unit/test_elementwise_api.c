/* The elementwise functions added for the array API standard (atan2 ...
 * imag, array.h) on every device, against a C reference computed here:
 * each op over every dtype it accepts, on the special values (NaN of both
 * signs, +-inf, +-0.0, halves for rounding, subnormals, integer extremes,
 * shift counts at and beyond the width and negative ones) crossed with each
 * other, and on large random arrays (past the GPUKIT_CPU_PARALLEL_MIN that
 * ctest sets, so the threaded path and the block loops run) in several
 * layouts: contiguous, transposed, a negative step, a 0-d operand on either
 * side (stride 0), broadcast rows and columns, empty and 0-d, out of place,
 * *_into and in place. Then the promotion of mixed dtypes and plain values,
 * and every refused dtype (gk_op_accepts agrees, the message names op and
 * dtype).
 *
 * Exact wherever the operation is (everything but atan2, hypot,
 * logaddexp, log2 and log10, which are held to a relative tolerance, their
 * NaN, infinite and zero results exactly, sign included). */
#include "array_check.h"

#include <float.h>
#include <stdint.h>

#define BIG 100003
#define COUNT(array) ((int)(sizeof(array) / sizeof *(array)))

static int cases; /* results compared, printed at the end */

static const gk_op binary_ops[] = {
    GK_ATAN2, GK_COPYSIGN, GK_HYPOT, GK_LOGADDEXP, GK_NEXTAFTER, GK_FLOOR_DIVIDE,
    GK_REMAINDER, GK_BITWISE_AND, GK_BITWISE_OR, GK_BITWISE_XOR, GK_BITWISE_LEFT_SHIFT,
    GK_BITWISE_RIGHT_SHIFT, GK_LOGICAL_AND, GK_LOGICAL_OR, GK_LOGICAL_XOR,
};
static const gk_op unary_ops[] = {
    GK_CEIL,     GK_FLOOR,      GK_TRUNC,      GK_ROUND, GK_SIGN,       GK_SIGNBIT,
    GK_ISNAN,    GK_ISINF,      GK_ISFINITE,   GK_LOG2,  GK_LOG10,      GK_SQUARE,
    GK_POSITIVE, GK_RECIPROCAL, GK_BITWISE_INVERT, GK_LOGICAL_NOT, GK_CONJ, GK_REAL,
    GK_IMAG,
};

static bool is_signed(gk_dtype t)
{
    return t == GK_INT8 || t == GK_INT16 || t == GK_INT32 || t == GK_INT64;
}

static int bits_of(gk_dtype t)
{
    return 8 * (int)gk_dtype_size(t);
}

/* --- the rules, restated: which dtypes each op takes, what it gives --- */

static bool takes(gk_op op, gk_dtype t)
{
    switch (op) {
    case GK_FLOOR_DIVIDE:
    case GK_REMAINDER:
    case GK_SIGN:
    case GK_SQUARE:
    case GK_POSITIVE:
    case GK_RECIPROCAL: return t != GK_BOOL;
    case GK_BITWISE_AND:
    case GK_BITWISE_OR:
    case GK_BITWISE_XOR:
    case GK_BITWISE_INVERT: return !gk_dtype_is_float(t);
    case GK_BITWISE_LEFT_SHIFT:
    case GK_BITWISE_RIGHT_SHIFT: return !gk_dtype_is_float(t) && t != GK_BOOL;
    default: return true;
    }
}

static bool floating_op(gk_op op)
{
    return op == GK_ATAN2 || op == GK_COPYSIGN || op == GK_HYPOT || op == GK_LOGADDEXP ||
           op == GK_NEXTAFTER || op == GK_LOG2 || op == GK_LOG10;
}

static bool gives_bool(gk_op op)
{
    return op == GK_LOGICAL_AND || op == GK_LOGICAL_OR || op == GK_LOGICAL_XOR ||
           op == GK_SIGNBIT || op == GK_ISNAN || op == GK_ISINF || op == GK_ISFINITE ||
           op == GK_LOGICAL_NOT;
}

/* NumPy's float for integer math: float16 for bool and 8 bits, float32
 * for 16 bits, float64 above. */
static gk_dtype float_for(gk_dtype t)
{
    if (gk_dtype_is_float(t))
        return t;
    if (t == GK_BOOL || t == GK_INT8 || t == GK_UINT8)
        return GK_FLOAT16;
    return t == GK_INT32 || t == GK_INT64 || t == GK_UINT32 || t == GK_UINT64 ? GK_FLOAT64
                                                                               : GK_FLOAT32;
}

static gk_dtype compute_of(gk_op op, gk_dtype t)
{
    return floating_op(op) ? float_for(t) : t;
}

static gk_dtype result_of(gk_op op, gk_dtype t)
{
    return gives_bool(op) ? GK_BOOL : compute_of(op, t);
}

static bool inexact(gk_op op)
{
    return op == GK_ATAN2 || op == GK_HYPOT || op == GK_LOGADDEXP || op == GK_LOG2 ||
           op == GK_LOG10;
}

/* --- values: integers (uint64 as its bit pattern) in i, floats in f --- */

typedef struct num {
    int64_t i;
    double f;
} num;

static num load(gk_dtype t, const unsigned char *raw, int64_t k)
{
    num v = {0, 0};
    const unsigned char *at = raw + (size_t)k * gk_dtype_size(t);
    switch (t) {
    case GK_BOOL:
    case GK_UINT8: v.i = at[0]; break;
    case GK_INT8: v.i = (int8_t)at[0]; break;
#define LOAD(T)                   \
    {                             \
        T x;                      \
        memcpy(&x, at, sizeof x); \
        v.i = (int64_t)x;         \
        break;                    \
    }
    case GK_INT16: LOAD(int16_t)
    case GK_UINT16: LOAD(uint16_t)
    case GK_INT32: LOAD(int32_t)
    case GK_UINT32: LOAD(uint32_t)
    case GK_INT64:
    case GK_UINT64: LOAD(int64_t)
#undef LOAD
    case GK_COMPLEX64:
    case GK_COMPLEX128: break; /* not modelled here: tests/package/test_complex.py */
    case GK_FLOAT32: {
        float x;
        memcpy(&x, at, 4);
        v.f = x;
        break;
    }
    case GK_FLOAT64: memcpy(&v.f, at, 8); break;
    case GK_FLOAT16:
    case GK_BFLOAT16: v.f = gk_dtype_load(t, at); break;
    }
    return v;
}

static void store(gk_dtype t, num v, unsigned char *raw, int64_t k)
{
    unsigned char *at = raw + (size_t)k * gk_dtype_size(t);
    if (gk_dtype_is_half(t)) {
        gk_dtype_store(t, v.f, at);
    } else if (t == GK_FLOAT32) {
        float f = (float)v.f;
        memcpy(at, &f, 4);
    } else if (t == GK_FLOAT64) {
        memcpy(at, &v.f, 8);
    } else {
        uint64_t bits = (uint64_t)v.i; /* the low bytes (little-endian) */
        memcpy(at, &bits, gk_dtype_size(t));
    }
}

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
        values[k] = load(gk_array_dtype(a), raw, k);
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
        store(t, values[k], raw, k);
    gk_array *a = NULL;
    CHECK_OK(gk_from_host(device, t, ndim, shape, raw, &a));
    free(raw);
    return a;
}

/* u reduced to the integer dtype t (wrapping), as load() would read it. */
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
    default: return (int64_t)u;
    }
}

/* An integer's value as a double (uint64 from its bit pattern), as the
 * conversion to a float dtype makes it (rounded once, to `to`). */
static num to_float(num v, gk_dtype from, gk_dtype to)
{
    num r = {0, 0};
    double exact = gk_dtype_is_float(from) ? v.f : from == GK_UINT64 ? (double)(uint64_t)v.i
                                                                      : (double)v.i;
    r.f = test_round(to, exact);
    return r;
}

/* --- inputs --- */

static const double float_specials[] = {
    NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.5, -2.5,
    3.0, -7.0, 0.1, -0.7, 1e-40, -1e-310, 5e-324, 1e30, -1e30, 3.4028234663852886e38,
    1.7976931348623157e308, 8388607.5, -8388609.0, 16777217.0, 4503599627370495.5,
    -4503599627370497.0, 9007199254740993.0, 123.456, -98765.4321,
};

/* The special values of dtype t (count in *n). */
static num *specials(gk_dtype t, int *n)
{
    num *v = malloc(64 * sizeof *v);
    int k = 0;
    if (gk_dtype_is_float(t)) {
        for (int i = 0; i < COUNT(float_specials); i++) {
            double x = float_specials[i];
            v[k++] = (num){0, test_round(t, x)};
        }
    } else if (t == GK_BOOL) {
        v[k++] = (num){0, 0};
        v[k++] = (num){1, 0};
    } else {
        int w = bits_of(t);
        uint64_t top = is_signed(t) ? ((uint64_t)1 << (w - 1)) - 1
                                     : (w == 64 ? UINT64_MAX : ((uint64_t)1 << w) - 1);
        int64_t low = is_signed(t) ? -(int64_t)(top) - 1 : 0;
        int64_t list[] = {low, low + 1, (int64_t)top, (int64_t)(top - 1), 0, 1, 2, 3, 5, 7,
                          w - 1, w, w + 1, 100, -1, -2, -3, -7, -(int64_t)w};
        for (int i = 0; i < COUNT(list); i++)
            if (is_signed(t) || list[i] >= 0 || i < 4)
                v[k++] = (num){wrap(t, (uint64_t)list[i]), 0};
    }
    *n = k;
    return v;
}

static uint64_t rng = 0x2545f4914f6cdd1du;

static uint64_t next_random(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A random value of t: one in eight a special one, the others spread over
 * a range where every op has work to do (shift counts often in range). */
static num random_num(gk_dtype t, const num *special, int nspecial)
{
    uint64_t r = next_random();
    if (r % 8 == 0)
        return special[(r >> 8) % (uint64_t)nspecial];
    r >>= 8;
    if (gk_dtype_is_float(t)) {
        double unit = (double)(r % 2000001) / 1000000.0 - 1; /* [-1, 1] */
        int scale = (int)((r >> 24) % 5);
        static const double scales[5] = {1, 8, 1000, 1e6, 1e-3};
        double x = unit * scales[scale];
        return (num){0, test_round(t, x)};
    }
    if (t == GK_BOOL)
        return (num){(int64_t)(r & 1), 0};
    if (r % 3 == 0) /* a shift count, or a small divisor */
        return (num){wrap(t, (uint64_t)(r >> 4) % (uint64_t)(bits_of(t) + 2)), 0};
    return (num){wrap(t, r >> 3), 0};
}

static gk_array *random_array(gk_device device, gk_dtype t, int ndim, const int64_t *shape)
{
    int nspecial;
    num *special = specials(t, &nspecial);
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    num *values = malloc(sizeof *values * (size_t)(n ? n : 1));
    for (int64_t k = 0; k < n; k++)
        values[k] = random_num(t, special, nspecial);
    gk_array *a = make_array(device, t, ndim, shape, values);
    free(values);
    free(special);
    return a;
}

/* --- the reference --- */

/* Python's float divmod as NumPy computes it (fmod, moved to y's sign, the
 * quotient snapped to the integer below). */
#define FLOAT_DIVMOD(T, F)                                                                 \
    static T floor_divide_##T(T x, T y)                                                   \
    {                                                                                     \
        if (y == 0)                                                                       \
            return x / y;                                                                 \
        T mod = F(fmod)(x, y), div = (x - mod) / y;                                       \
        if (mod != 0 && (y < 0) != (mod < 0))                                             \
            div -= 1;                                                                     \
        if (div == 0)                                                                     \
            return F(copysign)(0, x / y);                                                 \
        T whole = F(floor)(div);                                                          \
        return div - whole > (T)0.5 ? whole + 1 : whole;                                  \
    }                                                                                     \
    static T remainder_##T(T x, T y)                                                      \
    {                                                                                     \
        T mod = F(fmod)(x, y);                                                            \
        if (y == 0)                                                                       \
            return mod;                                                                   \
        if (mod == 0)                                                                     \
            return F(copysign)(0, y);                                                     \
        return (y < 0) != (mod < 0) ? mod + y : mod;                                      \
    }
#define F32(name) name##f
#define F64(name) name
FLOAT_DIVMOD(float, F32)
FLOAT_DIVMOD(double, F64)

/* op of floats a, b in T (float or double), F naming libm's functions. */
#define FLOAT_REF(T, F)                                                                    \
    do {                                                                                  \
        T x = (T)a.f, y = (T)b.f;                                                         \
        switch (op) {                                                                     \
        case GK_ATAN2: r.f = F(atan2)(x, y); break;                                       \
        case GK_COPYSIGN: r.f = F(copysign)(x, y); break;                                 \
        case GK_HYPOT: r.f = (T)hypot((double)x, (double)y); break;                       \
        case GK_LOGADDEXP:                                                                \
            r.f = x == y ? (T)(x + 0.693147180559945309417232121458176568)                \
                         : (T)(fmax(x, y) + log1p(exp(-fabs((double)x - (double)y))));    \
            if (isnan(x) || isnan(y))                                                     \
                r.f = NAN;                                                                \
            break;                                                                        \
        case GK_NEXTAFTER: r.f = F(nextafter)(x, y); break;                               \
        case GK_FLOOR_DIVIDE: r.f = floor_divide_##T(x, y); break;                        \
        case GK_REMAINDER: r.f = remainder_##T(x, y); break;                              \
        case GK_LOGICAL_AND: r.i = x != 0 && y != 0; break;                               \
        case GK_LOGICAL_OR: r.i = x != 0 || y != 0; break;                                \
        case GK_LOGICAL_XOR: r.i = (x != 0) != (y != 0); break;                           \
        case GK_CEIL: r.f = F(ceil)(x); break;                                            \
        case GK_FLOOR: r.f = F(floor)(x); break;                                          \
        case GK_TRUNC: r.f = F(trunc)(x); break;                                          \
        case GK_ROUND: r.f = F(nearbyint)(x); break;                                      \
        case GK_SIGN: r.f = x > 0 ? 1 : x < 0 ? -1 : x == 0 ? 0 : x; break;               \
        case GK_SIGNBIT: r.i = signbit(x) != 0; break;                                    \
        case GK_ISNAN: r.i = isnan(x); break;                                             \
        case GK_ISINF: r.i = isinf(x) != 0; break;                                        \
        case GK_ISFINITE: r.i = isfinite(x); break;                                       \
        case GK_LOG2: r.f = (T)log2((double)x); break;                                    \
        case GK_LOG10: r.f = (T)log10((double)x); break;                                  \
        case GK_SQUARE: r.f = x * x; break;                                               \
        case GK_RECIPROCAL: r.f = (T)1 / x; break;                                        \
        case GK_LOGICAL_NOT: r.i = x == 0; break;                                         \
        case GK_IMAG: r.f = 0; break;                                                     \
        default: r.f = x; break; /* positive, conj, real */                               \
        }                                                                                 \
    } while (0)

/* op of integers a, b of dtype t (uint64 as bit patterns). */
static num int_ref(gk_op op, gk_dtype t, num a, num b)
{
    num r = {0, 0};
    int64_t x = t == GK_BOOL ? a.i != 0 : a.i, y = t == GK_BOOL ? b.i != 0 : b.i;
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    int w = bits_of(t);
    /* the count as an unsigned value of t's width: negative ones are huge */
    uint64_t count = w == 64 ? uy : uy & (((uint64_t)1 << w) - 1);
    bool sign = is_signed(t);
    switch (op) {
    case GK_FLOOR_DIVIDE:
        if (y == 0)
            r.i = 0;
        else if (!sign)
            r.i = wrap(t, ux / uy);
        else if (y == -1)
            r.i = wrap(t, 0 - ux);
        else
            r.i = x / y - (x % y != 0 && (x < 0) != (y < 0));
        break;
    case GK_REMAINDER:
        if (y == 0 || (sign && y == -1))
            r.i = 0;
        else if (!sign)
            r.i = wrap(t, ux % uy);
        else
            r.i = x % y + (x % y != 0 && (x % y < 0) != (y < 0) ? y : 0);
        break;
    case GK_BITWISE_AND: r.i = wrap(t, ux & uy); break;
    case GK_BITWISE_OR: r.i = wrap(t, ux | uy); break;
    case GK_BITWISE_XOR: r.i = wrap(t, ux ^ uy); break;
    case GK_BITWISE_LEFT_SHIFT: r.i = count >= (uint64_t)w ? 0 : wrap(t, ux << count); break;
    case GK_BITWISE_RIGHT_SHIFT:
        if (count >= (uint64_t)w)
            r.i = sign && x < 0 ? -1 : 0;
        else
            r.i = sign ? x >> count : wrap(t, ux >> count); /* arithmetic, as GCC's */
        break;
    case GK_LOGICAL_AND: r.i = x != 0 && y != 0; break;
    case GK_LOGICAL_OR: r.i = x != 0 || y != 0; break;
    case GK_LOGICAL_XOR: r.i = (x != 0) != (y != 0); break;
    case GK_SIGN: r.i = sign ? (x > 0) - (x < 0) : x != 0; break;
    case GK_SIGNBIT: r.i = sign && x < 0; break;
    case GK_ISNAN:
    case GK_ISINF: r.i = 0; break;
    case GK_ISFINITE: r.i = 1; break;
    case GK_SQUARE: r.i = wrap(t, ux * ux); break;
    case GK_RECIPROCAL: r.i = x == 1 || (sign && x == -1) ? x : 0; break;
    case GK_BITWISE_INVERT: r.i = t == GK_BOOL ? !x : wrap(t, ~ux); break;
    case GK_LOGICAL_NOT: r.i = x == 0; break;
    case GK_IMAG: r.i = 0; break;
    default: r.i = x; break; /* rounding, positive, conj, real */
    }
    return r;
}

/* nextafter in a 16-bit float dtype: its own neighbour of x towards y,
 * found by stepping the bit pattern (its magnitude grows away from 0). */
static double half_nextafter(gk_dtype c, double x, double y)
{
    if (isnan(x) || isnan(y))
        return NAN;
    if (x == y)
        return y;
    uint16_t bits;
    if (x == 0) {
        bits = 1; /* the smallest subnormal, with y's sign */
        return copysign(gk_dtype_load(c, &bits), y);
    }
    gk_dtype_store(c, x, &bits);
    bits = (uint16_t)((x < y) == (x > 0) ? bits + 1 : bits - 1);
    return gk_dtype_load(c, &bits);
}

/* op on a (and b) of dtype t, which compute in c (the promoted dtypes
 * already equal). */
static num ref(gk_op op, gk_dtype t, num a, num b)
{
    gk_dtype c = compute_of(op, t);
    num r = {0, 0};
    if (!gk_dtype_is_float(c))
        return int_ref(op, t, a, b);
    a = to_float(a, t, c);
    b = to_float(b, t, c);
    if (gk_dtype_is_half(c) && op == GK_NEXTAFTER)
        return (num){0, half_nextafter(c, a.f, b.f)};
    if (c == GK_FLOAT64)
        FLOAT_REF(double, F64);
    else /* float32, and the 16-bit floats computed in it */
        FLOAT_REF(float, F32);
    if (c != GK_FLOAT64 && !gives_bool(op))
        r.f = test_round(c, r.f);
    return r;
}

/* --- comparing --- */

/* got against expected for op of x and y (floats: exact, or within a
 * relative tolerance for the inexact functions, measured against the
 * smallest normal for subnormal results and, for logaddexp, against its
 * larger argument: max + log1p(...) cancels to small results whose
 * relative error says nothing). */
static bool same_num(gk_op op, gk_dtype t, num got, num expected, num x, num y)
{
    if (!gk_dtype_is_float(t))
        return got.i == expected.i;
    double g = got.f, e = expected.f;
    if (isnan(e))
        return isnan(g);
    if (isinf(e) || e == 0 || !inexact(op))
        return g == e && signbit(g) == signbit(e);
    /* libm here, the device's own functions elsewhere; a float32 result one
     * ulp off can round to the neighbouring 16-bit value */
    double tolerance = t == GK_FLOAT16    ? 1e-3
                       : t == GK_BFLOAT16 ? 8e-3
                       : t == GK_FLOAT32  ? 4e-6
                                          : 1e-13;
    double scale = fmax(fabs(e), t == GK_FLOAT16 ? 0x1p-14 : t == GK_FLOAT64 ? DBL_MIN : FLT_MIN);
    if (op == GK_LOGADDEXP)
        scale = fmax(scale, fmax(fabs(x.f), fabs(y.f)));
    return fabs(g - e) <= tolerance * scale;
}

static void check_nums_(const char *file, int line, const char *what, gk_op op,
                        const gk_array *a, gk_dtype t, const num *expected, int64_t n,
                        const num *x, const num *y)
{
    cases++;
    if (!a || gk_array_dtype(a) != t || gk_array_size(a) != n) {
        check_failures++;
        fprintf(stderr, "%s:%d: %s: %s with %lld elements, expected %s with %lld\n", file, line,
                what, a ? gk_dtype_name(gk_array_dtype(a)) : "no array",
                a ? (long long)gk_array_size(a) : 0LL, gk_dtype_name(t), (long long)n);
        return;
    }
    num *got = read_nums(a);
    for (int64_t k = 0; got && k < n; k++) {
        num none = {0, 0};
        if (same_num(op, t, got[k], expected[k], x ? x[k] : none, y ? y[k] : none))
            continue;
        check_failures++;
        if (gk_dtype_is_float(t))
            fprintf(stderr, "%s:%d: %s: element %lld of (%.17g, %.17g) [%lld, %lld] is %.17g, "
                            "expected %.17g\n",
                    file, line, what, (long long)k, x ? x[k].f : 0, y ? y[k].f : 0,
                    x ? (long long)x[k].i : 0, y ? (long long)y[k].i : 0, got[k].f,
                    expected[k].f);
        else
            fprintf(stderr, "%s:%d: %s: element %lld of (%lld, %lld) [%.17g, %.17g] is %lld, "
                            "expected %lld\n",
                    file, line, what, (long long)k, x ? (long long)x[k].i : 0,
                    y ? (long long)y[k].i : 0, x ? x[k].f : 0, y ? y[k].f : 0,
                    (long long)got[k].i, (long long)expected[k].i);
        break;
    }
    CHECK(got != NULL, "%s: cannot read back: %s", what, gk_last_error());
    free(got);
}
#define CHECK_NUMS(what, op, a, t, expected, n, x, y) \
    check_nums_(__FILE__, __LINE__, (what), (op), (a), (t), (expected), (n), (x), (y))

/* The element of `a` (broadcast to ndim/shape) at C-order position k. */
static int64_t source_index(const gk_array *a, int ndim, const int64_t *shape, int64_t k)
{
    int d = gk_array_ndim(a);
    int64_t index = 0, stride = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        int64_t coordinate = k % shape[i];
        k /= shape[i];
        int j = i - (ndim - d);
        if (j >= 0) {
            int64_t length = gk_array_shape(a)[j];
            if (length != 1)
                index += coordinate * stride;
            stride *= length;
        }
    }
    return index;
}

static int64_t broadcast(const gk_array *a, const gk_array *b, int *ndim, int64_t *shape)
{
    int n = gk_array_ndim(a) > gk_array_ndim(b) ? gk_array_ndim(a) : gk_array_ndim(b);
    for (int i = 0; i < n; i++)
        shape[i] = 1;
    const gk_array *both[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        int d = gk_array_ndim(both[k]);
        for (int i = 0; i < d; i++)
            if (gk_array_shape(both[k])[i] != 1)
                shape[n - d + i] = gk_array_shape(both[k])[i];
    }
    *ndim = n;
    int64_t size = 1;
    for (int i = 0; i < n; i++)
        size *= shape[i];
    return size;
}

/* op(a, b) out of place, into a fresh output and in place into a (when a
 * has the result's dtype and shape), against the reference. */
static void check_binary(gk_device device, gk_op op, gk_array *a, gk_array *b,
                         const char *layout)
{
    gk_dtype t = gk_array_dtype(a), result = result_of(op, t);
    char what[200];
    snprintf(what, sizeof what, "%s %s, %s", gk_op_name(op), gk_dtype_name(t), layout);
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    int64_t n = broadcast(a, b, &ndim, shape);
    num *va = read_nums(a), *vb = read_nums(b);
    num *x = malloc(sizeof *x * (size_t)(n ? n : 1)), *y = malloc(sizeof *y * (size_t)(n ? n : 1));
    num *expected = malloc(sizeof *expected * (size_t)(n ? n : 1));
    for (int64_t k = 0; va && vb && k < n; k++) {
        x[k] = va[source_index(a, ndim, shape, k)];
        y[k] = vb[source_index(b, ndim, shape, k)];
        expected[k] = ref(op, t, x[k], y[k]);
    }
    gk_array *out = NULL;
    CHECK_OK(gk_binary(op, a, b, &out));
    CHECK_NUMS(what, op, out, result, expected, n, x, y);
    gk_array_free(out);

    gk_array *into = NULL;
    CHECK_OK(gk_empty(device, result, ndim, shape, &into));
    CHECK_OK(gk_binary_into(op, a, b, into));
    CHECK_NUMS(what, op, into, result, expected, n, x, y);
    gk_array_free(into);

    bool writable = true;
    for (int i = 0; i < gk_array_ndim(a); i++)
        writable = writable && (gk_array_strides(a)[i] != 0 || gk_array_shape(a)[i] <= 1);
    if (result == t && writable && gk_array_size(a) == n && gk_array_ndim(a) == ndim) {
        CHECK_OK(gk_binary_into(op, a, b, a)); /* a = op(a, b) */
        CHECK_NUMS(what, op, a, result, expected, n, x, y);
    }
    free(va);
    free(vb);
    free(x);
    free(y);
    free(expected);
}

static void check_unary(gk_device device, gk_op op, gk_array *a, const char *layout)
{
    gk_dtype t = gk_array_dtype(a), result = result_of(op, t);
    char what[200];
    snprintf(what, sizeof what, "%s %s, %s", gk_op_name(op), gk_dtype_name(t), layout);
    int64_t n = gk_array_size(a);
    num *x = read_nums(a), *expected = malloc(sizeof *expected * (size_t)(n ? n : 1));
    for (int64_t k = 0; x && k < n; k++)
        expected[k] = ref(op, t, x[k], x[k]);
    gk_array *out = NULL;
    CHECK_OK(gk_unary(op, a, &out));
    CHECK_NUMS(what, op, out, result, expected, n, x, NULL);
    CHECK(out && gk_array_ndim(out) == gk_array_ndim(a), "%s: ndim", what);
    gk_array_free(out);

    gk_array *into = NULL;
    CHECK_OK(gk_empty(device, result, gk_array_ndim(a), gk_array_shape(a), &into));
    CHECK_OK(gk_unary_into(op, a, into));
    CHECK_NUMS(what, op, into, result, expected, n, x, NULL);
    gk_array_free(into);
    if (result == t) {
        CHECK_OK(gk_unary_into(op, a, a));
        CHECK_NUMS(what, op, a, result, expected, n, x, NULL);
    }
    free(x);
    free(expected);
}

/* --- views for the layouts --- */

static gk_array *transposed(gk_array *a)
{
    gk_array *t = NULL;
    if (a)
        CHECK_OK(gk_transpose(a, NULL, &t));
    gk_array_free(a);
    return t;
}

static gk_array *sliced(gk_array *a, int axis, int64_t start, int64_t stop, int64_t step)
{
    gk_array *s = NULL;
    if (a)
        CHECK_OK(gk_slice(a, axis, start, stop, step, &s));
    gk_array_free(a);
    return s;
}

/* Every pair of special values, as two 1-d arrays. */
static void special_pairs(gk_device device, gk_dtype t, gk_array **a, gk_array **b)
{
    int n;
    num *v = specials(t, &n);
    num *xs = malloc(sizeof *xs * (size_t)(n * n)), *ys = malloc(sizeof *ys * (size_t)(n * n));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            xs[i * n + j] = v[i];
            ys[i * n + j] = v[j];
        }
    int64_t shape[1] = {n * n};
    *a = make_array(device, t, 1, shape, xs);
    *b = make_array(device, t, 1, shape, ys);
    free(v);
    free(xs);
    free(ys);
}

static void test_binary(gk_device device)
{
    for (int o = 0; o < COUNT(binary_ops); o++) {
        gk_op op = binary_ops[o];
        for (int ti = 0; ti < GK_DTYPE_COUNT; ti++) {
            if (gk_dtype_is_complex((gk_dtype)ti))
                continue; /* complex: tests/package/test_complex.py */
            gk_dtype t = (gk_dtype)ti;
            if (!takes(op, t))
                continue;
            gk_array *a, *b;
            special_pairs(device, t, &a, &b);
            check_binary(device, op, a, b, "special values");
            gk_array_free(a);
            gk_array_free(b);

            a = random_array(device, t, 1, (int64_t[]){BIG});
            b = random_array(device, t, 1, (int64_t[]){BIG});
            check_binary(device, op, a, b, "contiguous");
            gk_array_free(b);
            b = random_array(device, t, 0, NULL);
            check_binary(device, op, a, b, "array and 0-d");
            check_binary(device, op, b, a, "0-d and array");
            gk_array_free(a);
            gk_array_free(b);

            a = transposed(random_array(device, t, 2, (int64_t[]){337, 300}));
            b = sliced(random_array(device, t, 2, (int64_t[]){300, 674}), 1, 1, 674, 2);
            check_binary(device, op, a, b, "strided");
            gk_array_free(a);
            gk_array_free(b);

            a = sliced(random_array(device, t, 1, (int64_t[]){50}), 0, 49, -100, -3);
            b = sliced(random_array(device, t, 1, (int64_t[]){34}), 0, -1, -100, -2);
            check_binary(device, op, a, b, "negative steps");
            gk_array_free(a);
            gk_array_free(b);

            a = random_array(device, t, 2, (int64_t[]){129, 1});
            b = random_array(device, t, 1, (int64_t[]){257});
            check_binary(device, op, a, b, "column and row");
            gk_array_free(a);
            gk_array_free(b);

            a = random_array(device, t, 0, NULL);
            b = random_array(device, t, 0, NULL);
            check_binary(device, op, a, b, "0-d");
            gk_array_free(a);
            gk_array_free(b);

            a = random_array(device, t, 2, (int64_t[]){0, 5});
            b = random_array(device, t, 1, (int64_t[]){5});
            check_binary(device, op, a, b, "empty");
            gk_array_free(a);
            gk_array_free(b);
        }
    }
}

static void test_unary(gk_device device)
{
    for (int o = 0; o < COUNT(unary_ops); o++) {
        gk_op op = unary_ops[o];
        for (int ti = 0; ti < GK_DTYPE_COUNT; ti++) {
            if (gk_dtype_is_complex((gk_dtype)ti))
                continue; /* complex: tests/package/test_complex.py */
            gk_dtype t = (gk_dtype)ti;
            if (!takes(op, t))
                continue;
            int n;
            num *v = specials(t, &n);
            gk_array *a = make_array(device, t, 1, (int64_t[]){n}, v);
            free(v);
            check_unary(device, op, a, "special values");
            gk_array_free(a);
            a = random_array(device, t, 1, (int64_t[]){BIG});
            check_unary(device, op, a, "contiguous");
            gk_array_free(a);
            a = transposed(random_array(device, t, 2, (int64_t[]){337, 300}));
            check_unary(device, op, a, "transposed");
            gk_array_free(a);
            a = sliced(random_array(device, t, 2, (int64_t[]){7, 90}), 1, -2, 0, -4);
            check_unary(device, op, a, "negative step");
            gk_array_free(a);
            a = random_array(device, t, 0, NULL);
            check_unary(device, op, a, "0-d");
            gk_array_free(a);
            a = random_array(device, t, 3, (int64_t[]){2, 0, 3});
            check_unary(device, op, a, "empty");
            gk_array_free(a);
        }
    }
}

/* real is a view of its operand, imag one zero broadcast (both free, as
 * NumPy's); their *_into forms copy and fill. */
static void test_real_imag(gk_device device)
{
    gk_array *a = random_array(device, GK_FLOAT32, 2, (int64_t[]){3, 4}), *real = NULL,
             *imag = NULL;
    CHECK_OK(gk_unary(GK_REAL, a, &real));
    CHECK_OK(gk_unary(GK_IMAG, a, &imag));
    if (real && imag && a) {
        CHECK(gk_array_data(real) == gk_array_data(a), "real is not a view of its operand");
        CHECK(gk_array_strides(imag)[0] == 0 && gk_array_strides(imag)[1] == 0 &&
                  gk_array_shape(imag)[0] == 3 && gk_array_shape(imag)[1] == 4,
              "imag is not a broadcast zero");
        /* A broadcast view cannot be an output. */
        CHECK_FAILS(gk_unary_into(GK_NEG, a, imag), GK_ERR_INVALID_ARGUMENT, "broadcast");
    }
    gk_array_free(real);
    gk_array_free(imag);
    gk_array_free(a);
}

/* --- promotion: mixed dtypes and plain values --- */

static void check_types(gk_device device, gk_op op, gk_dtype ta, gk_dtype tb, gk_dtype result)
{
    gk_array *a = random_array(device, ta, 1, (int64_t[]){40});
    gk_array *b = random_array(device, tb, 1, (int64_t[]){40}), *out = NULL;
    CHECK_OK(gk_binary(op, a, b, &out));
    CHECK(out && gk_array_dtype(out) == result, "%s(%s, %s) gives %s, expected %s",
          gk_op_name(op), gk_dtype_name(ta), gk_dtype_name(tb),
          out ? gk_dtype_name(gk_array_dtype(out)) : "nothing", gk_dtype_name(result));
    /* and the values: both converted to the promoted dtype first */
    gk_dtype promoted = gk_promote_types(ta, tb);
    gk_array *ca = NULL, *cb = NULL, *same = NULL;
    CHECK_OK(gk_cast(a, promoted, &ca));
    CHECK_OK(gk_cast(b, promoted, &cb));
    CHECK_OK(gk_binary(op, ca, cb, &same));
    num *got = out ? read_nums(out) : NULL, *want = same ? read_nums(same) : NULL;
    for (int k = 0; got && want && k < 40; k++)
        CHECK(same_num(op, result, got[k], want[k], want[k], want[k]),
              "%s(%s, %s): element %d", gk_op_name(op),
              gk_dtype_name(ta), gk_dtype_name(tb), k);
    free(got);
    free(want);
    gk_array_free(same);
    gk_array_free(ca);
    gk_array_free(cb);
    gk_array_free(out);
    gk_array_free(a);
    gk_array_free(b);
}

static void test_promotion(gk_device device)
{
    check_types(device, GK_FLOOR_DIVIDE, GK_INT8, GK_UINT8, GK_INT16);
    check_types(device, GK_REMAINDER, GK_INT32, GK_FLOAT32, GK_FLOAT64);
    check_types(device, GK_REMAINDER, GK_UINT64, GK_INT64, GK_FLOAT64);
    check_types(device, GK_BITWISE_AND, GK_BOOL, GK_INT8, GK_INT8);
    check_types(device, GK_BITWISE_LEFT_SHIFT, GK_UINT8, GK_INT8, GK_INT16);
    check_types(device, GK_BITWISE_RIGHT_SHIFT, GK_UINT32, GK_INT32, GK_INT64);
    check_types(device, GK_ATAN2, GK_INT8, GK_INT8, GK_FLOAT16); /* NumPy's */
    check_types(device, GK_ATAN2, GK_INT16, GK_UINT8, GK_FLOAT32);
    check_types(device, GK_HYPOT, GK_INT32, GK_INT8, GK_FLOAT64);
    check_types(device, GK_COPYSIGN, GK_BOOL, GK_BOOL, GK_FLOAT16);
    check_types(device, GK_NEXTAFTER, GK_FLOAT32, GK_INT64, GK_FLOAT64);
    check_types(device, GK_LOGADDEXP, GK_UINT16, GK_FLOAT32, GK_FLOAT32);
    check_types(device, GK_LOGICAL_AND, GK_FLOAT64, GK_INT8, GK_BOOL);
    check_types(device, GK_LOGICAL_XOR, GK_BOOL, GK_UINT64, GK_BOOL);

    /* Plain values are weak: int8 << 3 is int8, a float value gives
     * float64 beside an integer array, a bool one keeps the dtype. */
    static const struct {
        gk_op op;
        gk_dtype dtype;
        double value;
        gk_value_kind kind;
        gk_dtype result;
    } values[] = {
        {GK_BITWISE_LEFT_SHIFT, GK_INT8, 3, GK_VALUE_INT, GK_INT8},
        {GK_BITWISE_RIGHT_SHIFT, GK_UINT16, 20, GK_VALUE_INT, GK_UINT16},
        {GK_BITWISE_AND, GK_BOOL, 1, GK_VALUE_BOOL, GK_BOOL},
        {GK_BITWISE_OR, GK_BOOL, 6, GK_VALUE_INT, GK_INT64},
        {GK_FLOOR_DIVIDE, GK_INT16, -7, GK_VALUE_INT, GK_INT16},
        {GK_REMAINDER, GK_UINT8, 2.5, GK_VALUE_FLOAT, GK_FLOAT64},
        {GK_REMAINDER, GK_FLOAT32, -3, GK_VALUE_INT, GK_FLOAT32},
        {GK_ATAN2, GK_INT16, 1, GK_VALUE_INT, GK_FLOAT32},
        {GK_COPYSIGN, GK_FLOAT32, -0.0, GK_VALUE_FLOAT, GK_FLOAT32},
        {GK_LOGICAL_OR, GK_FLOAT32, 0, GK_VALUE_INT, GK_BOOL},
    };
    for (int i = 0; i < COUNT(values); i++) {
        gk_array *a = random_array(device, values[i].dtype, 1, (int64_t[]){BIG}), *out = NULL;
        CHECK_OK(gk_binary_value(values[i].op, a, values[i].value, values[i].kind, false, &out));
        gk_dtype stored = gk_op_value_dtype(values[i].op, values[i].dtype, values[i].kind);
        num value = gk_dtype_is_float(stored) ? (num){0, values[i].value}
                                     : (num){wrap(stored, (uint64_t)(int64_t)values[i].value), 0};
        num *va = read_nums(a), *expected = malloc(sizeof *expected * BIG);
        gk_dtype promoted = gk_promote_types(values[i].dtype, stored);
        for (int64_t k = 0; va && k < BIG; k++) {
            num x = va[k];
            if (promoted != values[i].dtype) /* an integer array beside a float value */
                x = gk_dtype_is_float(promoted) ? to_float(x, values[i].dtype, promoted)
                                       : (num){values[i].dtype == GK_BOOL ? x.i != 0 : x.i, 0};
            expected[k] = ref(values[i].op, promoted, x, value);
        }
        char what[120];
        snprintf(what, sizeof what, "%s %s %g", gk_dtype_name(values[i].dtype),
                 gk_op_name(values[i].op), values[i].value);
        CHECK_NUMS(what, values[i].op, out, values[i].result, expected, BIG, va, NULL);
        free(va);
        free(expected);
        gk_array_free(out);
        gk_array_free(a);
    }
    /* A shift count that does not fit the dtype is an error, as any value. */
    gk_array *a = random_array(device, GK_INT8, 1, (int64_t[]){4}), *out = (gk_array *)1;
    CHECK_FAILS(gk_binary_value(GK_BITWISE_LEFT_SHIFT, a, 200, GK_VALUE_INT, false, &out),
                GK_ERR_INVALID_ARGUMENT, "int8");
    CHECK(out == NULL, "no output on failure");
    gk_array_free(a);
    /* As in NumPy 2, a comparison with a value beyond the dtype's range is
     * answered by value, and a value meets division and the logical ops in
     * the dtype they compute in, where it fits. */
    static const struct {
        gk_op op;
        double value;
        bool value_first;
        uint8_t answer; /* for each element */
    } beyond[] = {
        {GK_EQ, -1, false, 0}, {GK_NE, 300, false, 1}, {GK_LT, 300, false, 1},
        {GK_LE, -1, false, 0}, {GK_GT, -1, false, 1},  {GK_GE, 300, false, 0},
        {GK_LT, -1, true, 1},  {GK_GT, 300, true, 1},  {GK_LOGICAL_OR, -1, false, 1},
    };
    uint8_t elements[4] = {0, 2, 3, 255}, got[4];
    CHECK_OK(gk_from_host(device, GK_UINT8, 1, (int64_t[]){4}, elements, &a));
    for (int i = 0; i < COUNT(beyond); i++) {
        CHECK_OK(gk_binary_value(beyond[i].op, a, beyond[i].value, GK_VALUE_INT,
                                 beyond[i].value_first, &out));
        CHECK(gk_array_dtype(out) == GK_BOOL && gk_to_host(out, got, sizeof got) == GK_OK,
              "%s beside a value beyond uint8: bool", gk_op_name(beyond[i].op));
        for (int k = 0; k < 4; k++)
            CHECK(got[k] == beyond[i].answer, "uint8 %s %g (%s): element %d is %d",
                  gk_op_name(beyond[i].op), beyond[i].value,
                  beyond[i].value_first ? "value first" : "array first", k, got[k]);
        gk_array_free(out);
    }
    CHECK_OK(gk_binary_value(GK_DIV, a, -1000, GK_VALUE_INT, false, &out));
    double quotients[4];
    CHECK(gk_array_dtype(out) == GK_FLOAT64 &&
              gk_to_host(out, quotients, sizeof quotients) == GK_OK && quotients[3] == -0.255,
          "uint8 / -1000 computes in float64");
    gk_array_free(out);
    CHECK_FAILS(gk_binary_value(GK_ADD, a, 300, GK_VALUE_INT, false, &out),
                GK_ERR_INVALID_ARGUMENT, "uint8");
    gk_array_free(a);
}

/* --- refused dtypes --- */

static void test_refused(gk_device device)
{
    for (int ti = 0; ti < GK_DTYPE_COUNT; ti++) {
        if (gk_dtype_is_complex((gk_dtype)ti))
            continue; /* complex: tests/package/test_complex.py */
        gk_dtype t = (gk_dtype)ti;
        gk_array *a = random_array(device, t, 1, (int64_t[]){4}), *out = (gk_array *)1;
        gk_array *into = NULL;
        CHECK_OK(gk_empty(device, t, 1, (int64_t[]){4}, &into));
        for (int o = 0; o < COUNT(binary_ops); o++) {
            gk_op op = binary_ops[o];
            CHECK(gk_op_accepts(op, t) == takes(op, t), "gk_op_accepts(%s, %s)",
                  gk_op_name(op), gk_dtype_name(t));
            if (takes(op, t))
                continue;
            CHECK_FAILS(gk_binary(op, a, a, &out), GK_ERR_UNSUPPORTED_DTYPE, gk_op_name(op));
            CHECK(strstr(gk_last_error(), gk_dtype_name(t)), "%s", gk_last_error());
            CHECK(out == NULL, "no output on failure");
            CHECK_FAILS(gk_binary_into(op, a, a, into), GK_ERR_UNSUPPORTED_DTYPE,
                        gk_op_name(op));
            /* a plain integer beside a bool array promotes it to int64 */
            if (!takes(op, gk_value_dtype(t, GK_VALUE_INT)))
                CHECK_FAILS(gk_binary_scalar(op, a, 1, &out), GK_ERR_UNSUPPORTED_DTYPE,
                            gk_dtype_name(t));
        }
        for (int o = 0; o < COUNT(unary_ops); o++) {
            gk_op op = unary_ops[o];
            CHECK(gk_op_accepts(op, t) == takes(op, t), "gk_op_accepts(%s, %s)",
                  gk_op_name(op), gk_dtype_name(t));
            if (takes(op, t))
                continue;
            CHECK_FAILS(gk_unary(op, a, &out), GK_ERR_UNSUPPORTED_DTYPE, gk_op_name(op));
            CHECK(strstr(gk_last_error(), gk_dtype_name(t)), "%s", gk_last_error());
            CHECK(out == NULL, "no output on failure");
            CHECK_FAILS(gk_unary_into(op, a, into), GK_ERR_UNSUPPORTED_DTYPE, gk_op_name(op));
        }
        gk_array_free(a);
        gk_array_free(into);
    }
    /* A float beside an integer array promotes past what bitwise ops take. */
    gk_array *i = random_array(device, GK_INT32, 1, (int64_t[]){4}), *out = NULL;
    CHECK_FAILS(gk_binary_scalar(GK_BITWISE_OR, i, 1.5, &out), GK_ERR_UNSUPPORTED_DTYPE,
                "float64");
    /* Ops of the wrong arity. */
    CHECK_FAILS(gk_unary(GK_ATAN2, i, &out), GK_ERR_INVALID_ARGUMENT, "binary");
    CHECK_FAILS(gk_binary(GK_CEIL, i, i, &out), GK_ERR_INVALID_ARGUMENT, "unary");
    CHECK(!gk_op_accepts((gk_op)GK_OP_COUNT, GK_INT32) && !gk_op_accepts(GK_ADD, (gk_dtype)99),
          "invalid op or dtype accepted");
    gk_array_free(i);
}

int main(void)
{
    FOR_EACH_DEVICE(test_binary);
    FOR_EACH_DEVICE(test_unary);
    FOR_EACH_DEVICE(test_real_imag);
    FOR_EACH_DEVICE(test_promotion);
    FOR_EACH_DEVICE(test_refused);
    printf("elementwise_api: %d results compared\n", cases);
    CHECK_DONE();
}
