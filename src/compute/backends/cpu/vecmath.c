/* The floating-point math functions on vectors, from two libraries
 * (ext/vector_math.h): SLEEF for exp, log, log2, log10, the trigonometric
 * and hyperbolic functions and their inverses, log1p, expm1, pow, atan2,
 * hypot and sigmoid (from exp);
 * glibc's libmvec for the few where SLEEF is several times slower than
 * NumPy's code and libmvec stays within NumPy's bound (`from_mvec` below);
 * the vector sqrt instruction (correctly rounded) for sqrt.
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
 * 1.0-ULP variant (but tanh, 2), and so is every float32 one whose NumPy
 * bound is below 3.5 ULP, unless libmvec serves it within that bound;
 * float32 log, asin and tan (NumPy: 4) take SLEEF's faster 3.5-ULP variant.
 * Each loop states its bound (cpu_vector_function.bound);
 * docs/ARCHITECTURE.md has the table, tests/unit/test_math_ulp.c checks it
 * over the whole float range. */
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
#define VM_EQ_LANES(a, b) \
    ((unsigned)_mm512_cmp_ps_mask((a), (b), _CMP_EQ_OQ))
#define VM_SELECT_EQ(a, b, p, q) \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((a), (b), _CMP_EQ_OQ), (q), (p))
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
#define VM_EQ_LANES(a, b) \
    ((unsigned)_mm512_cmp_pd_mask((a), (b), _CMP_EQ_OQ))
#define VM_SELECT_EQ(a, b, p, q) \
    _mm512_mask_blend_pd(_mm512_cmp_pd_mask((a), (b), _CMP_EQ_OQ), (q), (p))
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
#define VM_EQ_LANES(a, b) \
    ((unsigned)_mm256_movemask_ps(_mm256_cmp_ps((a), (b), _CMP_EQ_OQ)))
#define VM_SELECT_EQ(a, b, p, q) \
    _mm256_blendv_ps((q), (p), _mm256_cmp_ps((a), (b), _CMP_EQ_OQ))
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
#define VM_EQ_LANES(a, b) \
    ((unsigned)_mm256_movemask_pd(_mm256_cmp_pd((a), (b), _CMP_EQ_OQ)))
#define VM_SELECT_EQ(a, b, p, q) \
    _mm256_blendv_pd((q), (p), _mm256_cmp_pd((a), (b), _CMP_EQ_OQ))
#include "compute/backends/cpu/vecmath_loops.h"

/* The loops and sqrt functions per [isa][dtype is float64]. */
static const cpu_inner_loop unary_loops[GK_VM_ISA_COUNT][2] = {
    [GK_VM_AVX2] = {unary_f32_avx2, unary_f64_avx2},
    [GK_VM_AVX512F] = {unary_f32_avx512, unary_f64_avx512},
};
static const cpu_inner_loop sigmoid_loops[GK_VM_ISA_COUNT][2] = {
    [GK_VM_AVX2] = {sigmoid_f32_avx2, sigmoid_f64_avx2},
    [GK_VM_AVX512F] = {sigmoid_f32_avx512, sigmoid_f64_avx512},
};
static const cpu_inner_loop binary_loops[GK_VM_ISA_COUNT][2] = {
    [GK_VM_AVX2] = {binary_f32_avx2, binary_f64_avx2},
    [GK_VM_AVX512F] = {binary_f32_avx512, binary_f64_avx512},
};
static const cpu_inner_loop power_loops[GK_VM_ISA_COUNT][2] = {
    [GK_VM_AVX2] = {power_f32_avx2, power_f64_avx2},
    [GK_VM_AVX512F] = {power_f32_avx512, power_f64_avx512},
};
static const gk_vm_entry sqrt_functions[GK_VM_ISA_COUNT][2] = {
    [GK_VM_AVX2] = {(gk_vm_entry)sqrt_f32_avx2, (gk_vm_entry)sqrt_f64_avx2},
    [GK_VM_AVX512F] = {(gk_vm_entry)sqrt_f32_avx512, (gk_vm_entry)sqrt_f64_avx512},
};

/* Each op's library function and libm's (for the lanes the library gets
 * wrong): `libm` for one argument, `libm2` for two. */
static const struct {
    gk_op op;
    gk_vm_function function;
    double (*libm)(double);
    double (*libm2)(double, double);
} math_functions[] = {
    {GK_EXP, GK_VM_EXP, exp, NULL},         {GK_LOG, GK_VM_LOG, log, NULL},
    {GK_SIN, GK_VM_SIN, sin, NULL},         {GK_COS, GK_VM_COS, cos, NULL},
    {GK_TAN, GK_VM_TAN, tan, NULL},         {GK_TANH, GK_VM_TANH, tanh, NULL},
    {GK_ASIN, GK_VM_ASIN, asin, NULL},      {GK_ACOS, GK_VM_ACOS, acos, NULL},
    {GK_ATAN, GK_VM_ATAN, atan, NULL},      {GK_SINH, GK_VM_SINH, sinh, NULL},
    {GK_COSH, GK_VM_COSH, cosh, NULL},      {GK_ASINH, GK_VM_ASINH, asinh, NULL},
    {GK_ACOSH, GK_VM_ACOSH, acosh, NULL},   {GK_ATANH, GK_VM_ATANH, atanh, NULL},
    {GK_LOG1P, GK_VM_LOG1P, log1p, NULL},   {GK_EXPM1, GK_VM_EXPM1, expm1, NULL},
    {GK_LOG2, GK_VM_LOG2, log2, NULL},      {GK_LOG10, GK_VM_LOG10, log10, NULL},
    {GK_SQRT, GK_VM_FUNCTION_COUNT, sqrt, NULL}, /* the instruction, not a library */
    {GK_POW, GK_VM_POW, NULL, pow},         {GK_ATAN2, GK_VM_ATAN2, NULL, atan2},
    {GK_HYPOT, GK_VM_HYPOT, NULL, hypot},
    {GK_SIGMOID, GK_VM_EXP, NULL, NULL}, /* from exp, in its own loop */
};

/* The functions libmvec serves instead of SLEEF, and the bound each is held
 * to (NumPy's). SLEEF 3.5's 1.0-ULP hyperbolic functions are 3 to 13 times
 * slower there than glibc's (which are Intel's SVML algorithms, as NumPy's
 * are); glibc's worst errors, measured over every float32 and sampled
 * float64: float32 sinh 1.86, cosh 2.40, tanh 1.37, expm1 2.32, asinh 0.99,
 * acosh 0.86 (AVX-512; AVX2's asinh 2.16 and acosh 2.72 exceed NumPy's 2,
 * so those stay SLEEF's there); float64 tanh 1.18 (AVX2's 2.13 exceeds
 * NumPy's 2); float32 log2 1.94 and log10 3.22 on AVX-512 (NumPy's 3 and
 * 4; twice SLEEF's speed; AVX2 keeps SLEEF's). glibc's float64 sinh, cosh,
 * asinh, acosh, atanh, expm1, log2, log10, atan2 and hypot reach 1.2 to 2.7
 * ULP, beyond NumPy's 1 (atan2 and hypot: NumPy has no bound; libm's and
 * SVML's are within 1): SLEEF keeps them. */
static const struct {
    gk_op op;
    bool wide;
    bool avx512_only;
    double bound;
} from_mvec[] = {
    {GK_SINH, false, false, 2},  {GK_COSH, false, false, 3},  {GK_TANH, false, false, 2},
    {GK_EXPM1, false, false, 3}, {GK_ASINH, false, true, 2},  {GK_ACOSH, false, true, 2},
    {GK_TANH, true, true, 2},    {GK_LOG2, false, true, 3},   {GK_LOG10, false, true, 4},
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
        chosen_isa = GK_VM_AVX512F;
    else if (allow_avx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        chosen_isa = GK_VM_AVX2;
}

/* `library`'s entry point of `function` for dtype (wide: float64), or NULL
 * (no library, or it lacks that function). */
static gk_vm_entry library_entry(const gk_vm_library *library, gk_vm_function function, int wide)
{
    if (!library)
        return NULL;
    return wide ? library->float64[chosen_isa][function] : library->float32[chosen_isa][function];
}

/* libmvec's entry point and bound for op where it serves op (from_mvec),
 * else NULL. Loads libmvec then, never before. */
static gk_vm_entry mvec_entry(gk_op op, gk_vm_function function, int wide, double *bound)
{
    for (size_t i = 0; i < sizeof from_mvec / sizeof from_mvec[0]; i++)
        if (from_mvec[i].op == op && from_mvec[i].wide == (wide != 0) &&
            (chosen_isa == GK_VM_AVX512F || !from_mvec[i].avx512_only)) {
            *bound = from_mvec[i].bound;
            return library_entry(gk_mvec_get(), function, wide);
        }
    return NULL;
}

/* The bound SLEEF's function keeps, in ULPs (ext/vector_math.h). */
static double sleef_bound(gk_op op, int wide)
{
    if (op == GK_SIGMOID)
        return 3.0; /* exp's error, then 1 + e, the division and e * r each round */
    if (op == GK_HYPOT)
        return 0.5; /* SLEEF's u05, documented as 0.5001 */
    return !wide && (op == GK_LOG || op == GK_ASIN || op == GK_TAN) ? 3.5 : 1.0;
}

int cpu_vector_isa(void)
{
    pthread_once(&isa_once, choose_isa);
    return chosen_isa;
}

cpu_inner_loop cpu_vector_math(gk_op op, gk_dtype dtype, cpu_vector_function *function)
{
    size_t i = 0, count = sizeof math_functions / sizeof math_functions[0];
    while (i < count && math_functions[i].op != op)
        i++;
    bool half = gk_dtype_is_half(dtype);
    if (i == count || (dtype != GK_FLOAT32 && dtype != GK_FLOAT64 && !half))
        return NULL; /* not a math function */
    pthread_once(&isa_once, choose_isa);
    if (chosen_isa < 0)
        return NULL;
    int wide = dtype == GK_FLOAT64;
    double bound = 0.5;
    gk_vm_entry vector = NULL;
    if (op == GK_SQRT)
        vector = sqrt_functions[chosen_isa][wide];
    if (!vector && half && sleef_bound(op, 0) == 1.0) {
        /* libmvec's float32 function in place of SLEEF's 1-ULP one (glibc:
         * within 4 ULP, SVML's algorithms, faster); where float32 already
         * takes a faster variant (SLEEF's 3.5-ULP log, asin, tan) it stays */
        vector = library_entry(gk_mvec_get(), math_functions[i].function, 0);
        bound = 4;
    }
    if (!vector)
        vector = mvec_entry(op, math_functions[i].function, wide, &bound);
    if (!vector) {
        /* Loaded here, on the first math function, never before. */
        vector = library_entry(gk_sleef_get(), math_functions[i].function, wide);
        bound = sleef_bound(op, wide);
    }
    if (!vector)
        return NULL;
    *function =
        (cpu_vector_function){vector, math_functions[i].libm, math_functions[i].libm2, bound};
    return op == GK_POW              ? power_loops[chosen_isa][wide]
           : math_functions[i].libm2 ? binary_loops[chosen_isa][wide]
           : op == GK_SIGMOID        ? sigmoid_loops[chosen_isa][wide]
                                     : unary_loops[chosen_isa][wide];
}

cpu_inner_loop cpu_vector_fmod(gk_dtype dtype, cpu_vector_function *function)
{
    if (dtype != GK_FLOAT32 && dtype != GK_FLOAT64)
        return NULL;
    pthread_once(&isa_once, choose_isa);
    if (chosen_isa < 0)
        return NULL;
    int wide = dtype == GK_FLOAT64;
    gk_vm_entry vector = library_entry(gk_sleef_get(), GK_VM_FMOD, wide);
    if (!vector)
        return NULL;
    *function = (cpu_vector_function){vector, NULL, fmod, 0};
    return binary_loops[chosen_isa][wide];
}

#else /* not x86-64: libm's loops */

int cpu_vector_isa(void)
{
    return -1;
}

cpu_inner_loop cpu_vector_math(gk_op op, gk_dtype dtype, cpu_vector_function *function)
{
    (void)op;
    (void)dtype;
    (void)function;
    return NULL;
}

cpu_inner_loop cpu_vector_fmod(gk_dtype dtype, cpu_vector_function *function)
{
    (void)dtype;
    (void)function;
    return NULL;
}

#endif
