/* Elementwise ops on complex64 and complex128 (C99's float complex and
 * double complex: real then imaginary part, the layout NumPy uses).
 *
 * Values follow NumPy 2, the reference the tests compare with:
 * - multiply and square are the textbook formulas (NumPy's; C's `*`
 *   would add Annex G's recovery of infinities, which NumPy does not);
 *   divide and reciprocal are Smith's algorithm (NumPy's), which avoids
 *   overflow in |y|^2; x / 0 divides each part by 0.
 * - pow: x ** 0 is 1; 0 ** y is 0 where Re(y) > 0, NaN otherwise; x ** 1
 *   is x, x ** 2 and x ** 3 products, other small integer exponents
 *   (|n| < 100) by repeated squaring, as NumPy does; everything else is
 *   glibc's cpow.
 * - exp, log, sqrt, the trigonometric and hyperbolic functions and their
 *   inverses are glibc's (which implements C99 Annex G, the special cases
 *   the array API standard lists); expm1, log1p, log2 and log10 are built
 *   from real functions as NumPy builds them.
 * - abs is hypot of the parts (a real result); sign is x / |x| (0 for 0);
 *   round rounds each part half to even; isnan/isinf are either part,
 *   isfinite both; equal compares both parts.
 * The loops are plain strided loops: complex arithmetic is dominated by the
 * function calls, not by memory. */
#include "compute/backends/cpu/cpu.h"

#include <complex.h>
#include <math.h>

#define CX_UNARY(NAME, CT, TO, EXPR)                                                       \
    static void NAME(int64_t n, char *const *data, const int64_t *s, const void *context)  \
    {                                                                                      \
        (void)context;                                                                     \
        TO *out = (TO *)data[0];                                                           \
        const CT *in = (const CT *)data[1];                                                \
        for (int64_t i = 0; i < n; i++) {                                                  \
            CT x = in[i * s[1]];                                                           \
            out[i * s[0]] = (EXPR);                                                        \
        }                                                                                  \
    }

#define CX_BINARY(NAME, CT, TO, EXPR)                                                      \
    static void NAME(int64_t n, char *const *data, const int64_t *s, const void *context)  \
    {                                                                                      \
        (void)context;                                                                     \
        TO *out = (TO *)data[0];                                                           \
        const CT *xs = (const CT *)data[1], *ys = (const CT *)data[2];                     \
        for (int64_t i = 0; i < n; i++) {                                                  \
            CT x = xs[i * s[1]], y = ys[i * s[2]];                                         \
            out[i * s[0]] = (EXPR);                                                        \
        }                                                                                  \
    }

/* Everything for one precision: CT the complex type, R its part, F(name)
 * the real libm function of that precision, C(name) the complex one,
 * SUFFIX the dtype's name. */
#define COMPLEX_OPS(CT, R, SUFFIX, F, C, LN2_INV, LN10_INV)                                \
    /* x + y*I would compute y*I, turning inf*I into NaN parts (C11's CMPLX \
     * avoids that, but not every C library has it); an array of two parts is \
     * the layout C guarantees for complex types. */                                       \
    static inline CT make_##SUFFIX(R re, R im)                                             \
    {                                                                                      \
        union {                                                                            \
            CT z;                                                                          \
            R part[2];                                                                     \
        } made = {.part = {re, im}};                                                       \
        return made.z;                                                                     \
    }                                                                                      \
    static inline CT mul_##SUFFIX##_one(CT x, CT y)                                        \
    {                                                                                      \
        R a = F(creal)(x), b = F(cimag)(x), c = F(creal)(y), d = F(cimag)(y);                          \
        return make_##SUFFIX(a * c - b * d, a * d + b * c);                                  \
    }                                                                                      \
    static inline CT div_##SUFFIX##_one(CT x, CT y)                                        \
    {                                                                                      \
        R a = F(creal)(x), b = F(cimag)(x), c = F(creal)(y), d = F(cimag)(y);                          \
        R ac = F(fabs)(c), ad = F(fabs)(d);                                                \
        if (ac >= ad) {                                                                    \
            if (ac == 0 && ad == 0) /* each part over 0: inf or NaN, as NumPy */           \
                return make_##SUFFIX(a / ac, b / ac);                                        \
            R ratio = d / c, scale = (R)1 / (c + d * ratio);                               \
            return make_##SUFFIX((a + b * ratio) * scale, (b - a * ratio) * scale);          \
        }                                                                                  \
        if (ad != ad) /* NaN divisor part (ac >= ad was false) */                          \
            return make_##SUFFIX(NAN, NAN);                                                  \
        R ratio = c / d, scale = (R)1 / (d + c * ratio);                                   \
        return make_##SUFFIX((a * ratio + b) * scale, (b * ratio - a) * scale);              \
    }                                                                                      \
    static inline CT reciprocal_##SUFFIX##_one(CT x)                                       \
    {                                                                                      \
        R a = F(creal)(x), b = F(cimag)(x);                                                      \
        if (F(fabs)(b) <= F(fabs)(a)) {                                                    \
            R ratio = b / a, d = a + b * ratio;                                            \
            return make_##SUFFIX((R)1 / d, -ratio / d);                                      \
        }                                                                                  \
        R ratio = a / b, d = a * ratio + b;                                                \
        return make_##SUFFIX(ratio / d, (R)-1 / d);                                          \
    }                                                                                      \
    static inline CT pow_##SUFFIX##_one(CT x, CT y)                                        \
    {                                                                                      \
        R a = F(creal)(x), b = F(cimag)(x), c = F(creal)(y), d = F(cimag)(y);                          \
        if (c == 0 && d == 0)                                                              \
            return make_##SUFFIX(1, 0);                                                      \
        if (a == 0 && b == 0)                                                              \
            return c > 0 ? make_##SUFFIX(0, 0) : make_##SUFFIX(NAN, NAN);                      \
        /* 1, 2 and 3 unrolled (NumPy's): 1 * x would turn inf + 0j into inf + NaN j */     \
        if (d == 0 && c == 1)                                                              \
            return x;                                                                      \
        if (d == 0 && (c == 2 || c == 3)) {                                                \
            CT square = mul_##SUFFIX##_one(x, x);                                          \
            return c == 2 ? square : mul_##SUFFIX##_one(square, x);                        \
        }                                                                                  \
        if (d == 0 && c == F(trunc)(c) && F(fabs)(c) < 100) {                              \
            /* repeated squaring: exact for small integer powers of Gaussian          \
             * integers, as NumPy's result */                                              \
            long k = (long)F(fabs)(c);                                                     \
            CT result = make_##SUFFIX(1, 0), base = x;                                       \
            for (; k > 0; k >>= 1) {                                                       \
                if (k & 1)                                                                 \
                    result = mul_##SUFFIX##_one(result, base);                             \
                base = mul_##SUFFIX##_one(base, base);                                     \
            }                                                                              \
            return c < 0 ? div_##SUFFIX##_one(make_##SUFFIX(1, 0), result) : result;         \
        }                                                                                  \
        return C(cpow)(x, y);                                                              \
    }                                                                                      \
    static inline CT sign_##SUFFIX##_one(CT x)                                             \
    {                                                                                      \
        R a = F(creal)(x), b = F(cimag)(x);                                                      \
        if (a != a || b != b)                                                              \
            return make_##SUFFIX(NAN, NAN);                                                  \
        if (a == 0 && b == 0)                                                              \
            return make_##SUFFIX(0, 0);                                                      \
        R m = F(hypot)(a, b);                                                              \
        if (m == (R)INFINITY) { /* the direction of an infinite value (NaN if both are) */ \
            if (isinf(a) && isinf(b))                                                      \
                return make_##SUFFIX(NAN, NAN);                                            \
            if (isinf(a))                                                                  \
                return make_##SUFFIX(F(copysign)(1, a), F(copysign)(0, b));                \
            if (isinf(b))                                                                  \
                return make_##SUFFIX(F(copysign)(0, a), F(copysign)(1, b));                \
            /* finite parts whose |x| overflows (x / |x| would be 0): halved, |x| / 2      \
             * fits; the larger part halves exactly, a smaller one loses at most what is \
             * far below the result's ulp */                                               \
            a = a / 2;                                                                     \
            b = b / 2;                                                                     \
            m = F(hypot)(a, b);                                                            \
        }                                                                                  \
        return make_##SUFFIX(a / m, b / m);                                                \
    }                                                                                      \
    static inline CT expm1_##SUFFIX##_one(CT x)                                            \
    {                                                                                      \
        R a = F(creal)(x), b = F(cimag)(x);                                                      \
        if (isinf(a) || b != b || isinf(b)) /* glibc's cexp has the special cases */ \
            return C(cexp)(x) - 1;                                                         \
        if (b == 0) /* the standard's: +0 + 0j for +-0, NaN + 0j for NaN */              \
            return make_##SUFFIX(a == 0 ? (R)0 : F(expm1)(a), b);                          \
        R half = F(sin)(b / 2);                                                            \
        return make_##SUFFIX(F(expm1)(a) * F(cos)(b) - 2 * half * half, F(exp)(a) * F(sin)(b)); \
    }                                                                                      \
    static inline CT log1p_##SUFFIX##_one(CT x)                                            \
    {                                                                                      \
        R a = F(creal)(x) + 1, b = F(cimag)(x);                                                  \
        return make_##SUFFIX(F(log)(F(hypot)(a, b)), F(atan2)(b, a));                        \
    }                                                                                      \
    static inline CT scaled_log_##SUFFIX(CT x, R factor)                                   \
    {                                                                                      \
        CT l = C(clog)(x);                                                                 \
        return make_##SUFFIX(F(creal)(l) * factor, F(cimag)(l) * factor);                          \
    }                                                                                      \
    CX_BINARY(add_##SUFFIX, CT, CT,                                                        \
              make_##SUFFIX(F(creal)(x) + F(creal)(y), F(cimag)(x) + F(cimag)(y)))                       \
    CX_BINARY(sub_##SUFFIX, CT, CT,                                                        \
              make_##SUFFIX(F(creal)(x) - F(creal)(y), F(cimag)(x) - F(cimag)(y)))                       \
    CX_BINARY(mul_##SUFFIX, CT, CT, mul_##SUFFIX##_one(x, y))                              \
    CX_BINARY(div_##SUFFIX, CT, CT, div_##SUFFIX##_one(x, y))                              \
    CX_BINARY(pow_##SUFFIX, CT, CT, pow_##SUFFIX##_one(x, y))                              \
    CX_BINARY(eq_##SUFFIX, CT, uint8_t,                                                    \
              (uint8_t)(F(creal)(x) == F(creal)(y) && F(cimag)(x) == F(cimag)(y)))                     \
    CX_BINARY(ne_##SUFFIX, CT, uint8_t,                                                    \
              (uint8_t)(F(creal)(x) != F(creal)(y) || F(cimag)(x) != F(cimag)(y)))                     \
    CX_UNARY(neg_##SUFFIX, CT, CT, make_##SUFFIX(-F(creal)(x), -F(cimag)(x)))                      \
    CX_UNARY(conj_##SUFFIX, CT, CT, make_##SUFFIX(F(creal)(x), -F(cimag)(x)))                      \
    CX_UNARY(abs_##SUFFIX, CT, R, F(hypot)(F(creal)(x), F(cimag)(x)))                            \
    CX_UNARY(sign_##SUFFIX, CT, CT, sign_##SUFFIX##_one(x))                                \
    CX_UNARY(square_##SUFFIX, CT, CT, mul_##SUFFIX##_one(x, x))                            \
    CX_UNARY(reciprocal_##SUFFIX, CT, CT, reciprocal_##SUFFIX##_one(x))                    \
    CX_UNARY(round_##SUFFIX, CT, CT, make_##SUFFIX(F(nearbyint)(F(creal)(x)), F(nearbyint)(F(cimag)(x)))) \
    CX_UNARY(isnan_##SUFFIX, CT, uint8_t, (uint8_t)(isnan(F(creal)(x)) || isnan(F(cimag)(x)))) \
    CX_UNARY(isinf_##SUFFIX, CT, uint8_t, (uint8_t)(isinf(F(creal)(x)) || isinf(F(cimag)(x)))) \
    CX_UNARY(isfinite_##SUFFIX, CT, uint8_t,                                               \
             (uint8_t)(isfinite(F(creal)(x)) && isfinite(F(cimag)(x))))                    \
    CX_UNARY(sqrt_##SUFFIX, CT, CT, C(csqrt)(x))                                           \
    CX_UNARY(exp_##SUFFIX, CT, CT, C(cexp)(x))                                             \
    CX_UNARY(expm1_##SUFFIX, CT, CT, expm1_##SUFFIX##_one(x))                              \
    CX_UNARY(log_##SUFFIX, CT, CT, C(clog)(x))                                             \
    CX_UNARY(log1p_##SUFFIX, CT, CT, log1p_##SUFFIX##_one(x))                              \
    CX_UNARY(log2_##SUFFIX, CT, CT, scaled_log_##SUFFIX(x, (R)LN2_INV))                    \
    CX_UNARY(log10_##SUFFIX, CT, CT, scaled_log_##SUFFIX(x, (R)LN10_INV))                  \
    CX_UNARY(sin_##SUFFIX, CT, CT, C(csin)(x))                                             \
    CX_UNARY(cos_##SUFFIX, CT, CT, C(ccos)(x))                                             \
    CX_UNARY(tan_##SUFFIX, CT, CT, C(ctan)(x))                                             \
    CX_UNARY(sinh_##SUFFIX, CT, CT, C(csinh)(x))                                           \
    CX_UNARY(cosh_##SUFFIX, CT, CT, C(ccosh)(x))                                           \
    CX_UNARY(tanh_##SUFFIX, CT, CT, C(ctanh)(x))                                           \
    CX_UNARY(asin_##SUFFIX, CT, CT, C(casin)(x))                                           \
    CX_UNARY(acos_##SUFFIX, CT, CT, C(cacos)(x))                                           \
    CX_UNARY(atan_##SUFFIX, CT, CT, C(catan)(x))                                           \
    CX_UNARY(asinh_##SUFFIX, CT, CT, C(casinh)(x))                                         \
    CX_UNARY(acosh_##SUFFIX, CT, CT, C(cacosh)(x))                                         \
    CX_UNARY(atanh_##SUFFIX, CT, CT, C(catanh)(x))

#define F32(name) name##f
#define F64(name) name
/* 1 / ln 2 and 1 / ln 10 (log2(e), log10(e)) */
#define LOG2_E 1.442695040888963407359924681001892137
#define LOG10_E 0.434294481903251827651128918916605082

COMPLEX_OPS(float complex, float, complex64, F32, F32, LOG2_E, LOG10_E)
COMPLEX_OPS(double complex, double, complex128, F64, F64, LOG2_E, LOG10_E)

#define BOTH(OP) {OP##_complex64, OP##_complex128}

/* [op][0: complex64, 1: complex128]; ops without a row refuse complex in
 * the core (positive is a copy and real/imag views, made there). */
static const cpu_inner_loop complex_loops[GK_OP_COUNT][2] = {
    [GK_ADD] = BOTH(add),       [GK_SUB] = BOTH(sub),         [GK_MUL] = BOTH(mul),
    [GK_DIV] = BOTH(div),       [GK_POW] = BOTH(pow),         [GK_EQ] = BOTH(eq),
    [GK_NE] = BOTH(ne),         [GK_NEG] = BOTH(neg),         [GK_CONJ] = BOTH(conj),
    [GK_ABS] = BOTH(abs),       [GK_SIGN] = BOTH(sign),       [GK_SQUARE] = BOTH(square),
    [GK_RECIPROCAL] = BOTH(reciprocal), [GK_ROUND] = BOTH(round), [GK_ISNAN] = BOTH(isnan),
    [GK_ISINF] = BOTH(isinf),   [GK_ISFINITE] = BOTH(isfinite), [GK_SQRT] = BOTH(sqrt),
    [GK_EXP] = BOTH(exp),       [GK_EXPM1] = BOTH(expm1),     [GK_LOG] = BOTH(log),
    [GK_LOG1P] = BOTH(log1p),   [GK_LOG2] = BOTH(log2),       [GK_LOG10] = BOTH(log10),
    [GK_SIN] = BOTH(sin),       [GK_COS] = BOTH(cos),         [GK_TAN] = BOTH(tan),
    [GK_SINH] = BOTH(sinh),     [GK_COSH] = BOTH(cosh),       [GK_TANH] = BOTH(tanh),
    [GK_ASIN] = BOTH(asin),     [GK_ACOS] = BOTH(acos),       [GK_ATAN] = BOTH(atan),
    [GK_ASINH] = BOTH(asinh),   [GK_ACOSH] = BOTH(acosh),     [GK_ATANH] = BOTH(atanh),
};

cpu_inner_loop cpu_complex_loop(gk_op op, gk_dtype dtype)
{
    if ((unsigned)op >= GK_OP_COUNT || !gk_dtype_is_complex(dtype))
        return NULL;
    return complex_loops[op][dtype == GK_COMPLEX128];
}
