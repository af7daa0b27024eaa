/* float16 and bfloat16 elements to and from float, a block at a time: what
 * the CPU loops of those dtypes run through (their arithmetic is float32's,
 * elementwise.c). float16 uses the F16C instructions where the CPU has them
 * (every x86-64 CPU with AVX2 does), else half.h's conversions; bfloat16 is
 * a shift one way and a rounding add the other, which the compiler
 * vectorises. Both roundings are to nearest, ties to even, as a cast. */
#include "compute/backends/cpu/cpu.h"
#include "compute/half.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define HAVE_F16C_PATH 1
#endif

#ifdef HAVE_F16C_PATH
__attribute__((target("avx2,f16c"))) static int64_t float16_to_float_f16c(const uint16_t *in,
                                                                          float *out, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i))));
    return i;
}

__attribute__((target("avx2,f16c"))) static int64_t float16_from_float_f16c(const float *in,
                                                                            uint16_t *out,
                                                                            int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(out + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
    return i;
}

static bool has_f16c(void)
{
    /* clang 14 cannot ask for "f16c" itself; every AVX2 CPU has it. */
    return __builtin_cpu_supports("avx2");
}
#endif

void cpu_half_to_float(gk_dtype dtype, const uint16_t *in, int64_t stride, float *out, int64_t n)
{
    int64_t i = 0;
    if (dtype == GK_BFLOAT16) {
        if (stride == 1) {
            _Pragma("omp simd") for (int64_t k = 0; k < n; k++) out[k] =
                gk_bfloat16_to_float(in[k]);
        } else {
            for (int64_t k = 0; k < n; k++)
                out[k] = gk_bfloat16_to_float(in[k * stride]);
        }
        return;
    }
#ifdef HAVE_F16C_PATH
    if (stride == 1 && has_f16c())
        i = float16_to_float_f16c(in, out, n);
#endif
    for (; i < n; i++)
        out[i] = gk_float16_to_float(in[i * stride]);
}

void cpu_half_from_float(gk_dtype dtype, const float *in, uint16_t *out, int64_t stride, int64_t n)
{
    int64_t i = 0;
    if (dtype == GK_BFLOAT16) {
        if (stride == 1) {
            _Pragma("omp simd") for (int64_t k = 0; k < n; k++) out[k] =
                gk_bfloat16_from_float(in[k]);
        } else {
            for (int64_t k = 0; k < n; k++)
                out[k * stride] = gk_bfloat16_from_float(in[k]);
        }
        return;
    }
#ifdef HAVE_F16C_PATH
    if (stride == 1 && has_f16c())
        i = float16_from_float_f16c(in, out, n);
#endif
    for (; i < n; i++)
        out[i * stride] = gk_float16_from_double(in[i]);
}
