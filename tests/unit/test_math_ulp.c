/* The accuracy of the CPU's math functions over the whole float range.
 *
 *     test_math_ulp vector|libm
 *
 * Inputs: bit patterns spread evenly over all of float32 and float64 (so
 * every exponent, both signs, subnormals and NaNs come up), plus the
 * special values and domain edges listed below. Each function's result is
 * compared with a higher-precision reference (double libm for float32, long
 * double libm for float64) in ULPs of the result's dtype (below the
 * smallest normal the subnormal spacing). Where the reference is NaN, +-0
 * or +-inf the result must be exactly that, sign included: C99 Annex F's
 * special cases, which glibc's reference follows.
 *
 * "vector" is the run with the vector libraries (SLEEF, glibc's libmvec)
 * and AVX2 or AVX-512 (GPUKIT_CPU_VECTOR picks which; GPUKIT_MVEC_LIBRARY
 * naming no file leaves SLEEF alone): it checks that the vector path is
 * really taken and holds every function to the bound its loop states
 * (cpu_vector_function.bound, the table in docs/ARCHITECTURE.md), and that
 * bound to NumPy's own.
 * pow, atan2 and hypot are swept over pairs of those inputs.
 * "libm" is the run without either library (both variables name no file):
 * glibc's functions, held to 2.5 ULP (glibc's float32 tanh reaches 2.03,
 * its float64 sinh 1.33: the fallback is less accurate than NumPy's bounds
 * for a few functions, as docs/ARCHITECTURE.md says). */
#include "check.h"

#include "compute/backends/cpu/vecmath.h"

#include <gpukit/array.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct function {
    gk_op op;
    double (*ref32)(double);            /* the reference for float32 */
    long double (*ref64)(long double);  /* the reference for float64 */
    /* NumPy's bounds (its umath-validation-set files): float32, float64 */
    double numpy32, numpy64;
} math_function;

/* sigmoid's references, as the higher-precision libm would give them. */
static double sigmoid_ref32(double x)
{
    return 1 / (1 + exp(-x));
}

static long double sigmoid_ref64(long double x)
{
    return 1 / (1 + expl(-x));
}

/* NumPy has no sigmoid (0: no NumPy bound). */
static const math_function functions[] = {
    {GK_EXP, exp, expl, 3, 1},       {GK_LOG, log, logl, 4, 1},
    {GK_SQRT, sqrt, sqrtl, 0.5, 0.5}, {GK_SIN, sin, sinl, 2, 1},
    {GK_COS, cos, cosl, 2, 1},       {GK_TAN, tan, tanl, 4, 1},
    {GK_TANH, tanh, tanhl, 2, 2},    {GK_ASIN, asin, asinl, 4, 1},
    {GK_ACOS, acos, acosl, 3, 1},    {GK_ATAN, atan, atanl, 3, 1},
    {GK_SINH, sinh, sinhl, 2, 1},    {GK_COSH, cosh, coshl, 3, 1},
    {GK_ASINH, asinh, asinhl, 2, 1}, {GK_ACOSH, acosh, acoshl, 2, 1},
    {GK_ATANH, atanh, atanhl, 2, 1}, {GK_LOG1P, log1p, log1pl, 2, 1},
    {GK_EXPM1, expm1, expm1l, 3, 1}, {GK_SIGMOID, sigmoid_ref32, sigmoid_ref64, 0, 0},
    {GK_LOG2, log2, log2l, 3, 1},    {GK_LOG10, log10, log10l, 4, 1},
};

/* The functions of two arguments, swept over pairs as pow; NumPy has no
 * validation file for them (its atan2 is SVML's or libm's, its hypot
 * libm's: within 1 ULP), so 1 ULP is the bound they are held to. */
static const struct {
    gk_op op;
    double (*ref32)(double, double);
    long double (*ref64)(long double, long double);
    double numpy;
} binary_functions[] = {
    {GK_POW, pow, powl, 0},
    {GK_ATAN2, atan2, atan2l, 1},
    {GK_HYPOT, hypot, hypotl, 1},
};
#define FUNCTION_COUNT ((int)(sizeof functions / sizeof functions[0]))

/* glibc's functions, the fallback without SLEEF: see the top. */
#define LIBM_BOUND 2.5
#define SIGMOID_BOUND 3.0

/* The values every sweep includes: zeros, infinities, NaN, the subnormal
 * and normal extremes, and the domain edges (+-1 and their neighbours for
 * asin, acos, atanh, acosh, log1p; pi/2 for tan; overflow thresholds). */
static const double specials[] = {
    0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5,
    1.5707963267948966, -1.5707963267948966, 3.141592653589793, 4.71238898038469,
    88.72283935546875, 89.0, -87.33654022216797, -104.0, 709.782712893384, 710.0, -745.2,
    1e10, -1e10, 1e22, 1e30, -1e30, 1e300, -1e300, 1.8446744073709552e19, 1.34e154,
    1e-30, 1e-300, 5e-324, -5e-324, 1.401298464324817e-45, -1.401298464324817e-45,
    1.1754943508222875e-38, 2.2250738585072014e-308, 3.4028234663852886e38,
    -3.4028234663852886e38, 1.7976931348623157e308, -1.7976931348623157e308,
};
#define SPECIAL_COUNT ((int)(sizeof specials / sizeof specials[0]))

/* The spacing of `dtype`'s values at |r| (r finite): 2^(e - mantissa bits). */
static double ulp_of(double r, bool wide)
{
    int e = r == 0 ? -100000 : ilogb(r);
    int min_exponent = wide ? -1022 : -126, digits = wide ? 52 : 23;
    if (e < min_exponent)
        e = min_exponent;
    return ldexp(1.0, e - digits);
}

/* The error of `got` in ULPs of the reference `ref` (a long double to keep
 * float64's reference digits); -1 for a special value that differs. */
static double ulps(long double ref, double got, bool wide)
{
    double rounded = wide ? (double)ref : (double)(float)ref;
    if (isnan(rounded))
        return isnan(got) ? 0 : -1;
    if (isinf(rounded) || rounded == 0)
        return got == rounded && signbit(got) == signbit(rounded) ? 0 : -1;
    if (!isfinite(got))
        return -1;
    return (double)(fabsl((long double)got - ref) / (long double)ulp_of(rounded, wide));
}

/* n inputs of float32 (wide false) or float64 bit patterns spread evenly
 * over every value, the specials first. */
static int64_t make_inputs(bool wide, int64_t n, double *out)
{
    int64_t k = 0;
    for (int i = 0; i < SPECIAL_COUNT; i++) {
        out[k++] = wide ? specials[i] : (double)(float)specials[i];
        /* each special's neighbours too */
        out[k++] = wide ? nextafter(specials[i], INFINITY)
                        : (double)nextafterf((float)specials[i], INFINITY);
        out[k++] = wide ? nextafter(specials[i], -INFINITY)
                        : (double)nextafterf((float)specials[i], -INFINITY);
    }
    uint64_t step = wide ? UINT64_MAX / (uint64_t)(n - k) : UINT32_MAX / (uint64_t)(n - k);
    for (uint64_t bits = 12345; k < n; bits += step) {
        if (wide) {
            double x;
            memcpy(&x, &bits, sizeof x);
            out[k++] = x;
        } else {
            uint32_t b = (uint32_t)bits;
            float x;
            memcpy(&x, &b, sizeof x);
            out[k++] = x;
        }
    }
    return k;
}

/* Which operand of a binary function is one value (0-d, broadcast):
 * neither, x (xs[0]) or y (ys[0]). */
typedef enum { BOTH_ARRAYS, SINGLE_X, SINGLE_Y } operand_layout;

/* f applied to `values` on the CPU through gk_unary (or gk_binary for pow
 * with ys, laid out as `layout` says); NULL on failure (reported). */
static double *compute_laid_out(gk_op op, bool wide, int64_t n, const double *xs,
                                const double *ys, operand_layout layout)
{
    gk_dtype dtype = wide ? GK_FLOAT64 : GK_FLOAT32;
    size_t size = wide ? 8 : 4;
    char *hx = malloc((size_t)n * size), *hy = malloc((size_t)n * size);
    double *result = malloc((size_t)n * sizeof *result);
    for (int64_t i = 0; i < n; i++) {
        /* a single value is element 0 of its array (the rest unread) */
        int64_t ix = layout == SINGLE_X ? 0 : i, iy = layout == SINGLE_Y ? 0 : i;
        if (wide) {
            memcpy(hx + i * 8, &xs[ix], 8);
            if (ys)
                memcpy(hy + i * 8, &ys[iy], 8);
        } else {
            float x = (float)xs[ix], y = ys ? (float)ys[iy] : 0;
            memcpy(hx + i * 4, &x, 4);
            memcpy(hy + i * 4, &y, 4);
        }
    }
    gk_device cpu;
    gk_array *a = NULL, *b = NULL, *out = NULL;
    int64_t shape[1] = {n};
    bool ok = gk_device_parse("cpu", &cpu) == GK_OK &&
              gk_from_host(cpu, dtype, layout == SINGLE_X ? 0 : 1, shape, hx, &a) == GK_OK &&
              (!ys || gk_from_host(cpu, dtype, layout == SINGLE_Y ? 0 : 1, shape, hy, &b) ==
                          GK_OK) &&
              (ys ? gk_binary(op, a, b, &out) : gk_unary(op, a, &out)) == GK_OK &&
              gk_to_host(out, hx, (size_t)n * size) == GK_OK;
    CHECK(ok, "%s: %s", gk_op_name(op), gk_last_error());
    for (int64_t i = 0; ok && i < n; i++) {
        if (wide) {
            memcpy(&result[i], hx + i * 8, 8);
        } else {
            float r;
            memcpy(&r, hx + i * 4, 4);
            result[i] = r;
        }
    }
    gk_array_free(a);
    gk_array_free(b);
    gk_array_free(out);
    free(hx);
    free(hy);
    if (!ok) {
        free(result);
        return NULL;
    }
    return result;
}

static double *compute(gk_op op, bool wide, int64_t n, const double *xs, const double *ys)
{
    return compute_laid_out(op, wide, n, xs, ys, BOTH_ARRAYS);
}

/* A binary function with one side a single value (x ** 2.5: a loop of its
 * own) gives, bit for bit, what it gives with that value in every element,
 * for a few of the specials and sweep values on either side; n is not a
 * multiple of any vector's lanes, so the tail is in it too. */
static void check_single_value_sides(gk_op op, bool wide, const double *xs, const double *ys)
{
    enum { N = 1003 };
    static double full[N];
    /* x's are specials[i / SPECIAL_COUNT] and y's specials[i % SPECIAL_COUNT]
     * at the start: 1 and SPECIAL_COUNT are -0 (which a broadcast as 0 + v
     * turned into +0), 3 -inf */
    const int64_t picks[] = {0, 1, 3, 5, SPECIAL_COUNT, SPECIAL_COUNT * SPECIAL_COUNT + 7, 40000};
    for (size_t p = 0; p < sizeof picks / sizeof picks[0]; p++)
        for (int side = 0; side < 2; side++) {
            operand_layout layout = side ? SINGLE_Y : SINGLE_X;
            const double *others = side ? xs + 50000 : ys + 50000;
            double value = side ? ys[picks[p]] : xs[picks[p]];
            for (int64_t i = 0; i < N; i++)
                full[i] = value;
            const double *x = side ? others : full, *y = side ? full : others;
            double *want = compute(op, wide, N, x, y);
            double single_x[1] = {value};
            double *got = compute_laid_out(op, wide, N, side ? x : single_x,
                                           side ? single_x : y, layout);
            int64_t i = 0;
            while (want && got && i < N && memcmp(&want[i], &got[i], sizeof got[i]) == 0)
                i++;
            CHECK(want && got && i == N, "%s %s with %s a single %.17g: element %lld is %.17g, "
                  "with the value in every element %.17g", gk_op_name(op),
                  wide ? "float64" : "float32", side ? "y" : "x", value, (long long)i,
                  got && i < N ? got[i] : NAN, want && i < N ? want[i] : NAN);
            free(want);
            free(got);
        }
}

/* The worst error over the inputs; any special value that differs fails
 * on its own, with the input named. */
static double worst_error(const char *name, bool wide, int64_t n, const double *xs,
                          const double *ys, const double *got, const long double *refs,
                          double *worst_x, double *worst_y)
{
    double worst = 0;
    int reported = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = ulps(refs[i], got[i], wide);
        if (e < 0) {
            if (reported++ < 5)
                CHECK(e >= 0, "%s %s(%.17g, %.17g) is %.17g, expected %.17Lg", name,
                      wide ? "float64" : "float32", xs[i], ys ? ys[i] : NAN, got[i], refs[i]);
            else
                check_failures++;
            continue;
        }
        if (e > worst) {
            worst = e;
            *worst_x = xs[i];
            *worst_y = ys ? ys[i] : 0;
        }
    }
    return worst;
}

static void test_unary(const math_function *f, bool wide, int64_t n, const double *xs)
{
    cpu_vector_function function = {0};
    bool vectorised = cpu_vector_math(f->op, wide ? GK_FLOAT64 : GK_FLOAT32, &function) != NULL;
    const char *name = gk_op_name(f->op);
    double *got = compute(f->op, wide, n, xs, NULL);
    long double *refs = malloc((size_t)n * sizeof *refs);
    if (!got) {
        free(refs);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        refs[i] = wide ? f->ref64((long double)xs[i]) : (long double)f->ref32(xs[i]);
    double worst_x = 0, worst_y = 0;
    double worst = worst_error(name, wide, n, xs, NULL, got, refs, &worst_x, &worst_y);
    /* The vector loop's own bound; glibc's otherwise (sqrt's instruction
     * rounds correctly either way). */
    double bound = vectorised             ? function.bound
                   : f->op == GK_SQRT    ? 0.5
                   : f->op == GK_SIGMOID ? SIGMOID_BOUND
                                         : LIBM_BOUND;
    double numpy = wide ? f->numpy64 : f->numpy32;
    if (vectorised && numpy > 0)
        CHECK(bound <= numpy, "%s %s: the vector loop's bound %.1f is looser than NumPy's %.1f",
              name, wide ? "float64" : "float32", bound, numpy);
    CHECK(worst <= bound + 0.01, "%s %s: %.3f ULP at %.17g, bound %.1f", name,
          wide ? "float64" : "float32", worst, worst_x, bound);
    printf("%-7s %s: max %.3f ULP (bound %.1f", name, wide ? "float64" : "float32", worst, bound);
    printf(numpy > 0 ? ", NumPy's %.1f)\n" : ", not in NumPy)\n", numpy);
    free(got);
    free(refs);
}

/* pow, atan2 and hypot over pairs: x over the sweep, y over the sweep
 * reversed and the specials; NumPy computes pow with libm (1 ULP for
 * float64 in glibc). */
static void test_binary(int which, bool wide, int64_t n, const double *xs)
{
    gk_op op = binary_functions[which].op;
    const char *name = gk_op_name(op);
    cpu_vector_function function = {0};
    bool vectorised = cpu_vector_math(op, wide ? GK_FLOAT64 : GK_FLOAT32, &function) != NULL;
    double *ys = malloc((size_t)n * sizeof *ys);
    for (int64_t i = 0; i < n; i++) {
        /* Exponents of moderate size (large ones only overflow) mixed with the
         * specials, so that every special x meets every special y. */
        int exponent;
        double mantissa = frexp(xs[n - 1 - i], &exponent); /* in [0.5, 1), or 0, inf, NaN */
        ys[i] = i < SPECIAL_COUNT * SPECIAL_COUNT ? specials[i % SPECIAL_COUNT]
                                                  : ldexp(mantissa, (int)(i % 9) - 3);
        if (i < SPECIAL_COUNT * SPECIAL_COUNT) {
            double x = specials[i / SPECIAL_COUNT];
            ys[i] = wide ? ys[i] : (double)(float)ys[i];
            ((double *)xs)[i] = wide ? x : (double)(float)x;
        }
        if (!wide)
            ys[i] = (double)(float)ys[i];
        /* pow(x, 0) is 1 even for a NaN x, but glibc gives NaN for a
         * signaling one, which the long double reference has quieted: the
         * sweep's NaNs are made quiet here (the unary sweeps keep them). */
        if (isnan(xs[i]))
            ((double *)xs)[i] = copysign(NAN, xs[i]);
    }
    double *got = compute(op, wide, n, xs, ys);
    long double *refs = malloc((size_t)n * sizeof *refs);
    if (got) {
        for (int64_t i = 0; i < n; i++)
            refs[i] = wide ? binary_functions[which].ref64(xs[i], ys[i])
                           : (long double)binary_functions[which].ref32(xs[i], ys[i]);
        double worst_x = 0, worst_y = 0;
        double worst = worst_error(name, wide, n, xs, ys, got, refs, &worst_x, &worst_y);
        /* glibc's pow: within 1.0; its atan2 and hypot: LIBM_BOUND (float32
         * atan2 reaches 1.29) */
        double bound = vectorised ? function.bound : op == GK_POW ? 1.0 : LIBM_BOUND;
        double numpy = binary_functions[which].numpy;
        if (vectorised && numpy > 0)
            CHECK(bound <= numpy, "%s %s: the vector loop's bound %.1f is looser than %.1f",
                  name, wide ? "float64" : "float32", bound, numpy);
        CHECK(worst <= bound + 0.01, "%s %s: %.3f ULP at (%.17g, %.17g)", name,
              wide ? "float64" : "float32", worst, worst_x, worst_y);
        printf("%-7s %s: max %.3f ULP (bound %.1f)\n", name, wide ? "float64" : "float32",
               worst, bound);
        check_single_value_sides(op, wide, xs, ys);
    }
    free(got);
    free(refs);
    free(ys);
}

int main(int argc, char **argv)
{
    bool vector = argc > 1 && strcmp(argv[1], "vector") == 0;
    if (argc != 2 || (!vector && strcmp(argv[1], "libm") != 0)) {
        fprintf(stderr, "usage: test_math_ulp vector|libm\n");
        return 2;
    }
    /* The run meant for the vector path fails when it is not taken (no SLEEF
     * installed, a CPU without AVX2), rather than passing on libm; the run
     * meant for libm fails when it is not. */
    cpu_vector_function function;
    for (int i = 0; i < (int)(sizeof binary_functions / sizeof binary_functions[0]); i++)
        for (int wide = 0; wide < 2; wide++)
            CHECK((cpu_vector_math(binary_functions[i].op, wide ? GK_FLOAT64 : GK_FLOAT32,
                                   &function) != NULL) == vector,
                  "%s: the vector path is %s", gk_op_name(binary_functions[i].op),
                  vector ? "not taken" : "taken");
    for (int i = 0; i < FUNCTION_COUNT; i++)
        for (int wide = 0; wide < 2; wide++)
            CHECK((cpu_vector_math(functions[i].op, wide ? GK_FLOAT64 : GK_FLOAT32, &function) !=
                   NULL) == (vector || functions[i].op == GK_SQRT), /* sqrt needs no SLEEF */
                  "%s: the vector path is %s", gk_op_name(functions[i].op),
                  vector ? "not taken (is libsleef3 installed?)" : "taken (is GPUKIT_MVEC_LIBRARY set?)");
    const int64_t n = 600000; /* ~1700 values per binade of float32 */
    double *xs = malloc((size_t)n * sizeof *xs);
    for (int wide = 0; wide < 2; wide++) {
        make_inputs(wide, n, xs);
        for (int i = 0; i < FUNCTION_COUNT; i++)
            test_unary(&functions[i], wide, n, xs);
        for (int i = 0; i < (int)(sizeof binary_functions / sizeof binary_functions[0]); i++) {
            make_inputs(wide, n, xs); /* the pairs overwrite part of xs */
            test_binary(i, wide, n, xs);
        }
    }
    free(xs);
    CHECK_DONE();
}
