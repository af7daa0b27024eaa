/* The GPU programs' complex functions (src/compute/kernels/complex.h),
 * compiled here as host C, against
 *
 * - the CPU backend's complex loops (compute/backends/cpu/complex.c),
 *   whose values every device must give: glibc's cexp, clog, csqrt, csin,
 *   ..., cacos (C99 Annex G) and the CPU's own multiply, divide,
 *   reciprocal, pow, sign, abs, expm1, log1p, log2 and log10;
 * - for the Annex G functions, also the same function in the next wider
 *   precision (glibc's double functions for complex64, its long double
 *   ones for complex128), as the exact value: complex.h's own accuracy.
 *
 * complex.h is included twice, for complex64 (GK_DTYPE 13) and complex128
 * (14); each function gets a cx64_ or cx128_ prefix (the list below).
 * <tgmath.h> makes the host's exp(float) expf, so the complex64 text
 * computes in float as a GPU does.
 *
 * Inputs: every pair of parts from a set of special values (+-0, +-inf,
 * NaNs of both signs, +-1, +-0.5, +-2, +-3, +-pi, +-pi/2, the smallest
 * subnormal and normal, the largest finite value, ...), and pseudo-random
 * values (fixed seed) with parts from 1e-30 to 1e30, from 1e-3 to 1e3, at
 * the extremes of the range (1e-300 to 1e300, 1e-37 to 1e37 for
 * complex64), and near the unit circle and +-1.
 *
 * Where an input part is zero, infinite or NaN (Annex G's special cases),
 * the result must agree with the CPU's exactly: NaN for NaN (of either
 * sign), the same infinity, a zero of the same sign. Infinities and NaNs
 * must agree everywhere. Finite parts are held to a bound in ulps, the ulp
 * taken at the larger magnitude of the reference's two parts (the error of
 * a complex value relative to its size):
 *
 * - against the wider precision (complex.h's own error): 3 ulps, 4.5 for
 *   tanh and tan, whose real part takes five roundings of about an ulp
 *   each near the top of a binade (this run's worst: 2.7 ulps, 3.9 for
 *   complex64's tan);
 * - against the CPU (glibc): 6 ulps for the Annex G functions, as both are
 *   off the exact value (glibc's ctan by up to 3.9 ulps, its catanf by
 *   4.5, measured against mpmath), 4 for log2 and log10 (clog's error and
 *   one rounding each), and bit for bit (0) where complex.h's formula is
 *   the CPU's operation for operation;
 * - pow's general case, exp(y log x), to 6 ulps times 1 + |y log x|, the
 *   amplification the formula itself has (glibc's cpow as much as this
 *   one); beyond 1 / epsilon only finite or not. */
#include <tgmath.h>

#include "check.h"

#include "compute/backends/cpu/cpu.h"

#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* --- complex.h, once per precision --- */

#define GK_DEVICE_FN static inline
#define GK_DTYPE 13
#include "compute/kernels/dialect.h"
#include "compute/kernels/types.h"

#define CX_PASTE_(prefix, name) prefix##_##name
#define CX_PASTE(prefix, name) CX_PASTE_(prefix, name)
#define cx_make CX_PASTE(CX_PREFIX, make)
#define cx_times CX_PASTE(CX_PREFIX, times)
#define cx_mul CX_PASTE(CX_PREFIX, mul)
#define cx_div CX_PASTE(CX_PREFIX, div)
#define cx_reciprocal CX_PASTE(CX_PREFIX, reciprocal)
#define cx_abs CX_PASTE(CX_PREFIX, abs)
#define cx_sign CX_PASTE(CX_PREFIX, sign)
#define cx_sum_error CX_PASTE(CX_PREFIX, sum_error)
#define cx_square_minus_one CX_PASTE(CX_PREFIX, square_minus_one)
#define cx_log_abs CX_PASTE(CX_PREFIX, log_abs)
#define cx_asin_acos_core CX_PASTE(CX_PREFIX, asin_acos_core)
#define cx_atanh_core CX_PASTE(CX_PREFIX, atanh_core)
#define cx_exp CX_PASTE(CX_PREFIX, exp)
#define cx_log CX_PASTE(CX_PREFIX, log)
#define cx_sqrt CX_PASTE(CX_PREFIX, sqrt)
#define cx_sinh CX_PASTE(CX_PREFIX, sinh)
#define cx_cosh CX_PASTE(CX_PREFIX, cosh)
#define cx_tanh CX_PASTE(CX_PREFIX, tanh)
#define cx_asinh CX_PASTE(CX_PREFIX, asinh)
#define cx_acos CX_PASTE(CX_PREFIX, acos)
#define cx_acosh CX_PASTE(CX_PREFIX, acosh)
#define cx_atanh CX_PASTE(CX_PREFIX, atanh)
#define cx_sin CX_PASTE(CX_PREFIX, sin)
#define cx_cos CX_PASTE(CX_PREFIX, cos)
#define cx_tan CX_PASTE(CX_PREFIX, tan)
#define cx_asin CX_PASTE(CX_PREFIX, asin)
#define cx_atan CX_PASTE(CX_PREFIX, atan)
#define cx_expm1 CX_PASTE(CX_PREFIX, expm1)
#define cx_log1p CX_PASTE(CX_PREFIX, log1p)
#define cx_log2 CX_PASTE(CX_PREFIX, log2)
#define cx_log10 CX_PASTE(CX_PREFIX, log10)
#define cx_mul_annex_g CX_PASTE(CX_PREFIX, mul_annex_g)
#define cx_pow CX_PASTE(CX_PREFIX, pow)

#define CX_PREFIX cx64
#include "compute/kernels/complex.h"

/* types.h defines its GK_DTYPE macros once: complex128's GK_T follows
 * GK_DTYPE by itself, GK_T_REAL is set by hand. */
#undef CX_PREFIX
#define CX_PREFIX cx128
#undef GK_DTYPE
#define GK_DTYPE 14
#undef GK_T_REAL
#define GK_T_REAL double
#include "compute/kernels/complex.h"

/* --- the functions under test --- */

typedef gk_c64 (*unary64)(gk_c64);
typedef gk_c128 (*unary128)(gk_c128);
typedef gk_c64 (*binary64)(gk_c64, gk_c64);
typedef gk_c128 (*binary128)(gk_c128, gk_c128);
typedef double complex (*wide64)(double complex);
typedef long double complex (*wide128)(long double complex);

/* cpu_bound: the largest difference from the CPU's result in ulps (0: bit
 * for bit); wide_bound: from the wider precision's (0: not compared). */
typedef struct unary_function {
    const char *name;
    gk_op op;
    unary64 f64;
    unary128 f128;
    wide64 wide64;
    wide128 wide128;
    double cpu_bound, wide_bound;
} unary_function;

#define ANNEX_G(name, op, glibc, wide_bound)                                              \
    {#name, op, cx64_##name, cx128_##name, glibc, glibc##l, 6, wide_bound}

static const unary_function unary_functions[] = {
    ANNEX_G(exp, GK_EXP, cexp, 3),
    ANNEX_G(log, GK_LOG, clog, 3),
    ANNEX_G(sqrt, GK_SQRT, csqrt, 3),
    ANNEX_G(sinh, GK_SINH, csinh, 3),
    ANNEX_G(cosh, GK_COSH, ccosh, 3),
    ANNEX_G(tanh, GK_TANH, ctanh, 4.5),
    ANNEX_G(asinh, GK_ASINH, casinh, 3),
    ANNEX_G(acosh, GK_ACOSH, cacosh, 3),
    ANNEX_G(atanh, GK_ATANH, catanh, 3),
    ANNEX_G(sin, GK_SIN, csin, 3),
    ANNEX_G(cos, GK_COS, ccos, 3),
    ANNEX_G(tan, GK_TAN, ctan, 4.5),
    ANNEX_G(asin, GK_ASIN, casin, 3),
    ANNEX_G(acos, GK_ACOS, cacos, 3),
    ANNEX_G(atan, GK_ATAN, catan, 3),
    {"expm1", GK_EXPM1, cx64_expm1, cx128_expm1, NULL, NULL, 0, 0},
    {"log1p", GK_LOG1P, cx64_log1p, cx128_log1p, NULL, NULL, 0, 0},
    {"log2", GK_LOG2, cx64_log2, cx128_log2, NULL, NULL, 4, 0},
    {"log10", GK_LOG10, cx64_log10, cx128_log10, NULL, NULL, 4, 0},
    {"sign", GK_SIGN, cx64_sign, cx128_sign, NULL, NULL, 0, 0},
    {"reciprocal", GK_RECIPROCAL, cx64_reciprocal, cx128_reciprocal, NULL, NULL, 0, 0},
};

typedef struct binary_function {
    const char *name;
    gk_op op;
    binary64 f64;
    binary128 f128;
    double cpu_bound;
} binary_function;

static const binary_function binary_functions[] = {
    {"multiply", GK_MUL, cx64_mul, cx128_mul, 0},
    {"divide", GK_DIV, cx64_div, cx128_div, 0},
    {"pow", GK_POW, cx64_pow, cx128_pow, 6},
};

/* --- precisions and inputs --- */

typedef struct precision {
    const char *name; /* the dtype's */
    gk_dtype dtype;
    int digits;       /* significand bits */
    double smallest;  /* the smallest subnormal: the ulp of 0 */
    double min_normal, max;
} precision;

static const precision complex64 = {"complex64", GK_COMPLEX64, 24, FLT_TRUE_MIN, FLT_MIN, FLT_MAX};
static const precision complex128 = {"complex128", GK_COMPLEX128, 53, DBL_TRUE_MIN, DBL_MIN,
                                     DBL_MAX};

/* Inputs are made in double and rounded to the precision. */
static double in_precision(const precision *p, double v)
{
    return p->digits == 24 ? (double)(float)v : v;
}

/* A complex value of either precision, or the wider precision's
 * reference, as parts in long double (exact for all three). */
typedef struct parts {
    long double re, im;
} parts;

#define SPECIAL_VALUES 32

static int special_values(const precision *p, double *out)
{
    const double pi = 3.14159265358979323846;
    double v[] = {0.0, INFINITY, NAN, 1.0, 0.5, 2.0, 3.0, 0.75, pi, pi / 2, 1e-5,
                  p->smallest, p->min_normal, p->max};
    int n = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        out[n++] = in_precision(p, v[i]);
        out[n++] = -in_precision(p, v[i]); /* -0, -inf, a NaN with its sign bit set */
    }
    return n;
}

/* splitmix64: the same sequence on every machine. */
static uint64_t random_state = 0x9E3779B97F4A7C15u;

static uint64_t random_bits(void)
{
    uint64_t z = (random_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static double random_uniform(double low, double high)
{
    return low + (high - low) * ((double)(random_bits() >> 11) * 0x1p-53);
}

/* A random part: 10^[low, high) with a random sign. */
static double random_part(double low, double high)
{
    double v = pow(10.0, random_uniform(low, high));
    return random_bits() & 1 ? -v : v;
}

#define RANDOM_PER_GROUP 4000
#define RANDOM_GROUPS 7
#define MAX_INPUTS (SPECIAL_VALUES * SPECIAL_VALUES + RANDOM_GROUPS * RANDOM_PER_GROUP)

/* The special pairs, then the random groups; returns the count. */
static int make_inputs(const precision *p, parts *in)
{
    double specials[SPECIAL_VALUES];
    int count = special_values(p, specials), n = 0;
    for (int i = 0; i < count; i++)
        for (int j = 0; j < count; j++)
            in[n++] = (parts){specials[i], specials[j]};
    double extreme = p->digits == 24 ? 37 : 300;
    for (int k = 0; k < RANDOM_PER_GROUP; k++) {
        in[n++] = (parts){random_part(-30, 30), random_part(-30, 30)};
        in[n++] = (parts){random_part(-3, 3), random_part(-3, 3)};
        in[n++] = (parts){random_part(-extreme, extreme), random_part(-extreme, extreme)};
        /* one part moderate, the other anything */
        in[n++] = (parts){random_part(-1, 1), random_part(-30, 30)};
        in[n++] = (parts){random_part(-30, 30), random_part(-1, 1)};
        /* |z| = 1 +- 10^[-7 or -14, -1], and near +-1 */
        double radius = 1 + random_part(p->digits == 24 ? -7 : -14, -1);
        double angle = random_uniform(-3.2, 3.2);
        in[n++] = (parts){radius * cos(angle), radius * sin(angle)};
        in[n++] = (parts){(random_bits() & 1 ? 1 : -1) + random_part(-8, -1), random_part(-20, -1)};
    }
    for (int i = 0; i < n; i++)
        in[i] = (parts){in_precision(p, in[i].re), in_precision(p, in[i].im)};
    return n;
}

/* --- comparison --- */

static int is_special(parts x)
{
    return x.re == 0 || x.im == 0 || !isfinite(x.re) || !isfinite(x.im);
}

/* The ulp of a value of magnitude m in the precision (the subnormal
 * spacing below the smallest normal). */
static long double ulp_at(const precision *p, long double m)
{
    if (m < p->min_normal)
        return p->smallest;
    int exponent;
    frexp(m, &exponent); /* m = f 2^exponent, 0.5 <= f < 1 */
    return ldexp(1.0L, exponent - p->digits);
}

/* Whether a result part agrees with the reference's; *error gets the
 * error in ulps (of `unit`) for finite values. */
static int part_agrees(const precision *p, long double got, long double want, long double unit,
                       double bound, int exact_zero, double *error)
{
    *error = 0;
    if (isnan(want))
        return isnan(got);
    /* An allowed error of over 100% (pow's exp(y log x) with |y log x|
     * beyond 1 / epsilon) leaves nothing of the value but its being finite
     * or not: the angle of the result is rounding noise. */
    if (bound * ldexp(1.0, 1 - p->digits) > 1)
        return isinf(want) ? isinf(got) : isfinite(got);
    if (isinf(want))
        return got == want;
    if (!isfinite(got))
        return 0;
    if (want == 0 && exact_zero)
        return got == 0 && signbit(got) == signbit(want);
    *error = (double)(fabs(got - want) / unit);
    if (bound == 0) /* bit for bit, zeros with their sign */
        return got == want && signbit(got) == signbit(want);
    return *error <= bound;
}

typedef struct tally {
    long checked;
    double worst; /* the largest error seen, in ulps (pow: of its scaled bound) */
    int failures;
} tally;

#define FAILURES_SHOWN 8

/* Compares one result with a reference (`against` names it); `input`
 * names the input. The error is held to `allowed` ulps and tallied as a
 * share of `allowed` times `bound` (the same unless pow scaled it). */
static void compare(const precision *p, const char *name, const char *against, const char *input,
                    parts got, parts want, int special, double allowed, double bound, tally *t)
{
    long double scale = 0;
    if (isfinite(want.re))
        scale = fabs(want.re);
    if (isfinite(want.im) && fabs(want.im) > scale)
        scale = fabs(want.im);
    long double unit = ulp_at(p, scale);
    double error_re, error_im;
    int ok = part_agrees(p, got.re, want.re, unit, allowed, special, &error_re);
    ok = part_agrees(p, got.im, want.im, unit, allowed, special, &error_im) && ok;
    double error = error_re > error_im ? error_re : error_im;
    t->checked++;
    if (allowed > bound)
        error *= bound / allowed;
    if (error > t->worst)
        t->worst = error;
    if (ok)
        return;
    t->failures++;
    if (t->failures <= FAILURES_SHOWN) {
        CHECK(ok, "%s %s(%s) = (%.17Lg, %.17Lg), %s (%.21Lg, %.21Lg), %.3g ulp (allowed %.3g)",
              p->name, name, input, got.re, got.im, against, want.re, want.im,
              error_re > error_im ? error_re : error_im, allowed);
    } else {
        check_failures++;
    }
}

static void report(const precision *p, const char *name, const char *against, const tally *t,
                   double bound)
{
    printf("%-10s %-10s %6ld values, against %-15s worst %6.3f ulp (bound %g)%s\n", p->name,
           name, t->checked, against, t->worst, bound, t->failures ? "  FAILED" : "");
}

static void describe(char *out, size_t size, parts x)
{
    snprintf(out, size, "%.17Lg%+.17Lgj", x.re, x.im);
}

/* --- running both sides --- */

/* The CPU's loop for op over n values of the precision (in, out: gk_c64
 * or gk_c128 arrays; abs writes reals). */
static void cpu_loop(const precision *p, gk_op op, int64_t n, void *out, void *x, void *y)
{
    cpu_inner_loop loop = cpu_complex_loop(op, p->dtype);
    CHECK(loop != NULL, "no CPU loop for op %d", (int)op);
    if (!loop)
        return;
    char *data[3] = {out, x, y};
    int64_t strides[3] = {1, 1, 1};
    loop(n, data, strides, NULL);
}

/* in[] as an array of the precision's elements (free() it). */
static void *to_elements(const precision *p, const parts *in, int n)
{
    if (p->dtype == GK_COMPLEX64) {
        gk_c64 *v = calloc((size_t)n, sizeof *v);
        for (int i = 0; v && i < n; i++)
            v[i] = cx64_make((float)in[i].re, (float)in[i].im);
        return v;
    }
    gk_c128 *v = calloc((size_t)n, sizeof *v);
    for (int i = 0; v && i < n; i++)
        v[i] = cx128_make(in[i].re, in[i].im);
    return v;
}

static parts element(const precision *p, const void *elements, int i)
{
    if (p->dtype == GK_COMPLEX64) {
        gk_c64 v = ((const gk_c64 *)elements)[i];
        return (parts){v.re, v.im};
    }
    gk_c128 v = ((const gk_c128 *)elements)[i];
    return (parts){v.re, v.im};
}

static parts apply_unary(const precision *p, const unary_function *f, parts x)
{
    if (p->dtype == GK_COMPLEX64) {
        gk_c64 r = f->f64(cx64_make((float)x.re, (float)x.im));
        return (parts){r.re, r.im};
    }
    gk_c128 r = f->f128(cx128_make(x.re, x.im));
    return (parts){r.re, r.im};
}

/* The wider precision's value: complex.h's distance from it is its
 * distance from the exact value, to a small part of an ulp. A C complex
 * is made from its parts as the array of two C guarantees it is (x + y*I
 * would turn an infinite y into NaN parts; not every C library has C11's
 * CMPLX). */
static parts apply_wide(const precision *p, const unary_function *f, parts x)
{
    if (p->dtype == GK_COMPLEX64) {
        union {
            double complex z;
            double part[2];
        } in = {.part = {(double)x.re, (double)x.im}};
        double complex r = f->wide64(in.z);
        return (parts){creal(r), cimag(r)};
    }
    union {
        long double complex z;
        long double part[2];
    } in = {.part = {x.re, x.im}};
    long double complex r = f->wide128(in.z);
    return (parts){creall(r), cimagl(r)};
}

static void test_unary(const precision *p, const unary_function *f, const parts *in, int n)
{
    void *x = to_elements(p, in, n), *want = to_elements(p, in, n);
    if (!x || !want)
        exit(2);
    cpu_loop(p, f->op, n, want, x, NULL);
    /* long double is no wider than double on some machines */
    int wider = f->wide_bound > 0 && (p->dtype == GK_COMPLEX64 || LDBL_MANT_DIG > DBL_MANT_DIG);
    tally cpu = {0, 0, 0}, wide = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        parts got = apply_unary(p, f, in[i]);
        char input[96];
        describe(input, sizeof input, in[i]);
        compare(p, f->name, "the CPU's", input, got, element(p, want, i), is_special(in[i]),
                f->cpu_bound, f->cpu_bound, &cpu);
        if (wider && !is_special(in[i])) {
            parts exact = apply_wide(p, f, in[i]);
            /* beyond the precision's range only the CPU comparison counts */
            if (fabs(exact.re) <= p->max && fabs(exact.im) <= p->max)
                compare(p, f->name, "the wider precision's", input, got, exact, 0, f->wide_bound,
                        f->wide_bound, &wide);
        }
    }
    report(p, f->name, "the CPU", &cpu, f->cpu_bound);
    if (wider)
        report(p, f->name, "the exact value", &wide, f->wide_bound);
    free(x);
    free(want);
}

/* abs has a real result. */
static void test_abs(const precision *p, const parts *in, int n)
{
    void *x = to_elements(p, in, n);
    double *want = calloc((size_t)n, sizeof *want);
    float *want32 = calloc((size_t)n, sizeof *want32);
    if (!x || !want || !want32)
        exit(2);
    cpu_loop(p, GK_ABS, n, p->dtype == GK_COMPLEX64 ? (void *)want32 : (void *)want, x, NULL);
    tally t = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        double got = p->dtype == GK_COMPLEX64
                         ? cx64_abs(cx64_make((float)in[i].re, (float)in[i].im))
                         : cx128_abs(cx128_make(in[i].re, in[i].im));
        double expected = p->dtype == GK_COMPLEX64 ? want32[i] : want[i];
        char input[96];
        describe(input, sizeof input, in[i]);
        compare(p, "abs", "the CPU's", input, (parts){got, 0}, (parts){expected, 0}, 1, 0, 0, &t);
    }
    report(p, "abs", "the CPU", &t, 0);
    free(x);
    free(want);
    free(want32);
}

/* Whether the CPU's pow takes an exact path for x ** y (0 exponent, 0
 * base, small integer exponent): then bit for bit. */
static int pow_is_exact(parts x, parts y)
{
    return (y.re == 0 && y.im == 0) || (x.re == 0 && x.im == 0) ||
           (y.im == 0 && y.re == trunc(y.re) && fabs(y.re) < 100);
}

static void test_binary(const precision *p, const binary_function *f, const parts *xs,
                        const parts *ys, int n)
{
    void *x = to_elements(p, xs, n), *y = to_elements(p, ys, n), *want = to_elements(p, xs, n);
    if (!x || !y || !want)
        exit(2);
    cpu_loop(p, f->op, n, want, x, y);
    tally t = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        parts got;
        if (p->dtype == GK_COMPLEX64) {
            gk_c64 r = f->f64(((gk_c64 *)x)[i], ((gk_c64 *)y)[i]);
            got = (parts){r.re, r.im};
        } else {
            gk_c128 r = f->f128(((gk_c128 *)x)[i], ((gk_c128 *)y)[i]);
            got = (parts){r.re, r.im};
        }
        double allowed = f->cpu_bound;
        if (f->op == GK_POW) {
            if (pow_is_exact(xs[i], ys[i])) {
                allowed = 0;
            } else { /* exp amplifies the error of y log x by |y log x| */
                double log_abs = log(hypot(xs[i].re, xs[i].im)), arg = atan2(xs[i].im, xs[i].re);
                allowed *= 1 + hypot(ys[i].re, ys[i].im) * hypot(log_abs, arg);
            }
        }
        char input[200], second[96];
        describe(input, sizeof input, xs[i]);
        describe(second, sizeof second, ys[i]);
        strcat(input, ", ");
        strcat(input, second);
        compare(p, f->name, "the CPU's", input, got, element(p, want, i),
                is_special(xs[i]) || is_special(ys[i]), allowed, f->cpu_bound, &t);
    }
    report(p, f->name, "the CPU", &t, f->cpu_bound);
    free(x);
    free(y);
    free(want);
}

static void test_precision(const precision *p)
{
    parts *in = calloc(MAX_INPUTS, sizeof *in);
    if (!in)
        exit(2);
    int n = make_inputs(p, in);
    for (size_t k = 0; k < sizeof unary_functions / sizeof unary_functions[0]; k++)
        test_unary(p, &unary_functions[k], in, n);
    test_abs(p, in, n);

    /* Binary: every special x with every y from a few special parts, then
     * random pairs of the inputs above, moderate bases to moderate powers,
     * and integer and half-integer powers around pow's |n| < 100 limit. */
    double specials[SPECIAL_VALUES];
    int count = special_values(p, specials);
    const double y_parts[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5, -2.0, 3.0};
    int y_count = (int)(sizeof y_parts / sizeof y_parts[0]);
    int pairs = count * count * y_count * y_count + 3 * RANDOM_PER_GROUP, m = 0;
    parts *xs = calloc((size_t)pairs, sizeof *xs), *ys = calloc((size_t)pairs, sizeof *ys);
    if (!xs || !ys)
        exit(2);
    for (int i = 0; i < count; i++)
        for (int j = 0; j < count; j++)
            for (int k = 0; k < y_count; k++)
                for (int l = 0; l < y_count; l++) {
                    xs[m] = (parts){specials[i], specials[j]};
                    ys[m++] = (parts){y_parts[k], y_parts[l]};
                }
    for (int k = 0; k < RANDOM_PER_GROUP; k++) {
        xs[m] = in[random_bits() % (uint64_t)n];
        ys[m++] = in[random_bits() % (uint64_t)n];
        xs[m] = (parts){random_part(-1, 1), random_part(-1, 1)};
        ys[m++] = (parts){random_part(-2, 1), random_part(-2, 1)};
        xs[m] = (parts){random_part(-1, 0.3), random_part(-1, 0.3)};
        ys[m++] = (parts){(double)((int)(random_bits() % 241) - 120) / (random_bits() & 1 ? 1 : 2), 0};
    }
    for (int i = 0; i < m; i++) {
        xs[i] = (parts){in_precision(p, xs[i].re), in_precision(p, xs[i].im)};
        ys[i] = (parts){in_precision(p, ys[i].re), in_precision(p, ys[i].im)};
    }
    for (size_t k = 0; k < sizeof binary_functions / sizeof binary_functions[0]; k++)
        test_binary(p, &binary_functions[k], xs, ys, m);
    free(xs);
    free(ys);
    free(in);
}

int main(void)
{
    test_precision(&complex64);
    test_precision(&complex128);
    CHECK_DONE();
}
