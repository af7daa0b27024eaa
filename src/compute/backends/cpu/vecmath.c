/* The floating-point math functions on vectors: SLEEF's functions
 * (ext/sleef.h) for exp, log, the trigonometric and hyperbolic
 * functions and their inverses, log1p, expm1, pow and sigmoid (from exp),
 * and the vector sqrt instruction (correctly rounded) for sqrt.
 *
 * The library is compiled for baseline x86-64; only the loops here are
 * compiled for AVX-512F or AVX2+FMA (__attribute__((target))), and one is
 * used only when the CPU (and the OS, which must save the wider registers)
 * supports its ISA, checked at run time. The widest supported ISA is used;
 * GPUKIT_CPU_VECTOR=avx2 or =none lowers it (read once per process), for
 * tests and for anyone who wants the scalar libm path. On other
 * architectures this file only says "no vector loop".
 *
 * Accuracy: NumPy's own accuracy tests keep float64 within 1 ULP (tanh 2)
 * and float32 within 2 to 4 ULP. So every float64 function is SLEEF's
 * 1.0-ULP variant, and so is every float32 one whose NumPy bound is below
 * 3.5 ULP; float32 log, asin and tan (NumPy: 4) take the faster 3.5-ULP
 * variant. docs/ARCHITECTURE.md has the table; tests/unit/test_math_ulp.c
 * checks it over the whole float range. */
#include "compute/backends/cpu/vecmath.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define VM_SUFFIX f32_avx512
#define VM_TARGET "avx512f"
#define VM_T float
#define VM_V __m512
#define VM_LANES 16
#define VM_LOAD(p) _mm512_loadu_ps(p)
#define VM_STORE(p, v) _mm512_storeu_ps((p), (v))
#define VM_SQRT(v) _mm512_sqrt_ps(v)
#define VM_ANY_INF(v) \
    _mm512_cmp_ps_mask(_mm512_abs_ps(v), _mm512_set1_ps(INFINITY), _CMP_EQ_OQ)
#define VM_ABS(v) _mm512_abs_ps(v)
#define VM_SELECT_GE0(x, a, b) \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((x), _mm512_setzero_ps(), _CMP_GE_OQ), (b), (a))
#include "compute/backends/cpu/vecmath_loops.h"

#define VM_SUFFIX f64_avx512
#define VM_TARGET "avx512f"
#define VM_T double
#define VM_V __m512d
#define VM_LANES 8
#define VM_LOAD(p) _mm512_loadu_pd(p)
#define VM_STORE(p, v) _mm512_storeu_pd((p), (v))
#define VM_SQRT(v) _mm512_sqrt_pd(v)
#define VM_ANY_INF(v) \
    _mm512_cmp_pd_mask(_mm512_abs_pd(v), _mm512_set1_pd(INFINITY), _CMP_EQ_OQ)
#define VM_ABS(v) _mm512_abs_pd(v)
#define VM_SELECT_GE0(x, a, b) \
    _mm512_mask_blend_pd(_mm512_cmp_pd_mask((x), _mm512_setzero_pd(), _CMP_GE_OQ), (b), (a))
#include "compute/backends/cpu/vecmath_loops.h"

#define VM_SUFFIX f32_avx2
#define VM_TARGET "avx2,fma"
#define VM_T float
#define VM_V __m256
#define VM_LANES 8
#define VM_LOAD(p) _mm256_loadu_ps(p)
#define VM_STORE(p, v) _mm256_storeu_ps((p), (v))
#define VM_SQRT(v) _mm256_sqrt_ps(v)
#define VM_ANY_INF(v) \
    _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), v), _mm256_set1_ps(INFINITY), _CMP_EQ_OQ))
#define VM_ABS(v) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v)
#define VM_SELECT_GE0(x, a, b) \
    _mm256_blendv_ps((b), (a), _mm256_cmp_ps((x), _mm256_setzero_ps(), _CMP_GE_OQ))
#include "compute/backends/cpu/vecmath_loops.h"

#define VM_SUFFIX f64_avx2
#define VM_TARGET "avx2,fma"
#define VM_T double
#define VM_V __m256d
#define VM_LANES 4
#define VM_LOAD(p) _mm256_loadu_pd(p)
#define VM_STORE(p, v) _mm256_storeu_pd((p), (v))
#define VM_SQRT(v) _mm256_sqrt_pd(v)
#define VM_ANY_INF(v) \
    _mm256_movemask_pd(_mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), v), _mm256_set1_pd(INFINITY), _CMP_EQ_OQ))
#define VM_ABS(v) _mm256_andnot_pd(_mm256_set1_pd(-0.0), v)
#define VM_SELECT_GE0(x, a, b) \
    _mm256_blendv_pd((b), (a), _mm256_cmp_pd((x), _mm256_setzero_pd(), _CMP_GE_OQ))
#include "compute/backends/cpu/vecmath_loops.h"

/* The loops and sqrt functions per [isa][dtype is float64]. */
static const cpu_inner_loop unary_loops[GK_SLEEF_ISA_COUNT][2] = {
    [GK_SLEEF_AVX2] = {unary_f32_avx2, unary_f64_avx2},
    [GK_SLEEF_AVX512F] = {unary_f32_avx512, unary_f64_avx512},
};
static const cpu_inner_loop sigmoid_loops[GK_SLEEF_ISA_COUNT][2] = {
    [GK_SLEEF_AVX2] = {sigmoid_f32_avx2, sigmoid_f64_avx2},
    [GK_SLEEF_AVX512F] = {sigmoid_f32_avx512, sigmoid_f64_avx512},
};
static const cpu_inner_loop binary_loops[GK_SLEEF_ISA_COUNT][2] = {
    [GK_SLEEF_AVX2] = {binary_f32_avx2, binary_f64_avx2},
    [GK_SLEEF_AVX512F] = {binary_f32_avx512, binary_f64_avx512},
};
static const gk_sleef_entry sqrt_functions[GK_SLEEF_ISA_COUNT][2] = {
    [GK_SLEEF_AVX2] = {(gk_sleef_entry)sqrt_f32_avx2, (gk_sleef_entry)sqrt_f64_avx2},
    [GK_SLEEF_AVX512F] = {(gk_sleef_entry)sqrt_f32_avx512, (gk_sleef_entry)sqrt_f64_avx512},
};

/* Each op's SLEEF function and libm's (for the lanes SLEEF gets wrong;
 * pow's is pow(), set below). */
static const struct {
    gk_op op;
    gk_sleef_function sleef;
    double (*libm)(double);
} math_functions[] = {
    {GK_EXP, GK_SLEEF_EXP, exp},         {GK_LOG, GK_SLEEF_LOG, log},
    {GK_SIN, GK_SLEEF_SIN, sin},         {GK_COS, GK_SLEEF_COS, cos},
    {GK_TAN, GK_SLEEF_TAN, tan},         {GK_TANH, GK_SLEEF_TANH, tanh},
    {GK_ASIN, GK_SLEEF_ASIN, asin},      {GK_ACOS, GK_SLEEF_ACOS, acos},
    {GK_ATAN, GK_SLEEF_ATAN, atan},      {GK_SINH, GK_SLEEF_SINH, sinh},
    {GK_COSH, GK_SLEEF_COSH, cosh},      {GK_ASINH, GK_SLEEF_ASINH, asinh},
    {GK_ACOSH, GK_SLEEF_ACOSH, acosh},   {GK_ATANH, GK_SLEEF_ATANH, atanh},
    {GK_LOG1P, GK_SLEEF_LOG1P, log1p},   {GK_EXPM1, GK_SLEEF_EXPM1, expm1},
    {GK_SQRT, GK_SLEEF_FUNCTION_COUNT, sqrt}, /* the instruction, not SLEEF */
    {GK_POW, GK_SLEEF_POW, NULL},
    {GK_SIGMOID, GK_SLEEF_EXP, NULL}, /* from exp, in its own loop */
};

/* The ISA to use, or -1 for none: the widest the CPU supports, lowered by
 * GPUKIT_CPU_VECTOR (avx512f, avx2; any other value is none). */
static int chosen_isa = -1;
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;

static void choose_isa(void)
{
    const char *limit = getenv("GPUKIT_CPU_VECTOR");
    bool allow_avx512 = !limit || !*limit || strcmp(limit, "avx512f") == 0;
    bool allow_avx2 = allow_avx512 || strcmp(limit, "avx2") == 0;
    __builtin_cpu_init();
    if (allow_avx512 && __builtin_cpu_supports("avx512f"))
        chosen_isa = GK_SLEEF_AVX512F;
    else if (allow_avx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        chosen_isa = GK_SLEEF_AVX2;
}

/* The SLEEF entry point of `function` for dtype (wide: float64), or NULL. */
static gk_sleef_entry sleef_entry(gk_sleef_function function, int wide)
{
    /* Loaded here, on the first math function, never before. */
    const gk_sleef *sleef = gk_sleef_get();
    if (!sleef)
        return NULL;
    return wide ? sleef->float64[chosen_isa][function] : sleef->float32[chosen_isa][function];
}

cpu_inner_loop cpu_vector_math(gk_op op, gk_dtype dtype, cpu_vector_function *function)
{
    size_t i = 0, count = sizeof math_functions / sizeof math_functions[0];
    while (i < count && math_functions[i].op != op)
        i++;
    if (i == count || (dtype != GK_FLOAT32 && dtype != GK_FLOAT64))
        return NULL; /* not a math function */
    pthread_once(&isa_once, choose_isa);
    if (chosen_isa < 0)
        return NULL;
    int wide = dtype == GK_FLOAT64;
    gk_sleef_entry vector = op == GK_SQRT ? sqrt_functions[chosen_isa][wide]
                                          : sleef_entry(math_functions[i].sleef, wide);
    if (!vector)
        return NULL;
    *function = (cpu_vector_function){vector, math_functions[i].libm, pow};
    return op == GK_POW       ? binary_loops[chosen_isa][wide]
           : op == GK_SIGMOID ? sigmoid_loops[chosen_isa][wide]
                              : unary_loops[chosen_isa][wide];
}

#else /* not x86-64: libm's loops */

cpu_inner_loop cpu_vector_math(gk_op op, gk_dtype dtype, cpu_vector_function *function)
{
    (void)op;
    (void)dtype;
    (void)function;
    return NULL;
}

#endif
