/* The portable kernel dialect: a few macros and types that let one kernel
 * source compile as CUDA C++ (nvcc, NVRTC) and as OpenCL C (1.2 or later).
 * gpukit puts this file in front of every built-in kernel source and of
 * every portable-dialect user kernel, so kernels use only:
 *
 *   GK_KERNEL void name(...)      a kernel (unmangled name in CUDA)
 *   GK_GLOBAL T *p                device memory
 *   GK_LOCAL T buf[N];            memory shared by a work-group / block,
 *                                 declared in the kernel body
 *   GK_DEVICE_FN T helper(...)    a function kernels call
 *   GK_BARRIER()                  work-group barrier over local memory
 *   GK_LOCAL_ID(d) GK_GROUP_ID(d) GK_LOCAL_SIZE(d) GK_NUM_GROUPS(d)
 *   GK_GLOBAL_ID(d) GK_GLOBAL_SIZE(d)   (d = 0, 1, 2; all gk_i64)
 *   gk_i8 gk_u8 gk_i16 gk_u16 gk_i32 gk_u32 gk_i64 gk_u64   exact-width integers
 *   GK_HAS_FP64                   defined when double is usable
 *   gk_f16 gk_bf16                the 16-bit floating formats as bit patterns,
 *                                 with conversions to and from float
 *                                 (gk_f16_to_float, gk_f16_from_float, ...,
 *                                 below)
 *   gk_c64 gk_c128                complex64 and complex128 elements, structs
 *                                 of two parts .re and .im (gk_c128 where
 *                                 GK_HAS_FP64)
 *   math: the overloaded names of OpenCL C and CUDA (exp, log, sqrt, sin,
 *   cos, tan, asin, sinh, asinh, tanh, log1p, expm1, fabs, floor, pow,
 *   isnan, ...), which both provide for float and double.
 *
 * GK_CUDA or GK_OPENCL says which one is compiling. This file is also
 * included by host C code (GK_HOST) for the shared structs below, whose
 * fields are all 64-bit so that host and device lay them out alike. */
#ifndef GK_KERNEL_DIALECT_H
#define GK_KERNEL_DIALECT_H

#if defined(__OPENCL_VERSION__) || defined(__OPENCL_C_VERSION__)
#define GK_OPENCL 1
#elif defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define GK_CUDA 1
#else
#define GK_HOST 1
#endif

#if defined(GK_CUDA)
typedef signed char gk_i8;
typedef unsigned char gk_u8;
typedef short gk_i16;
typedef unsigned short gk_u16;
typedef int gk_i32;
typedef unsigned int gk_u32;
typedef long long gk_i64;
typedef unsigned long long gk_u64;
#define GK_KERNEL extern "C" __global__
#define GK_GLOBAL
#define GK_LOCAL __shared__
#define GK_DEVICE_FN static __device__ __forceinline__
#define GK_BARRIER() __syncthreads()
#define GK_DIM_(v, d) ((d) == 0 ? (v).x : (d) == 1 ? (v).y : (v).z)
#define GK_LOCAL_ID(d) ((gk_i64)GK_DIM_(threadIdx, d))
#define GK_GROUP_ID(d) ((gk_i64)GK_DIM_(blockIdx, d))
#define GK_LOCAL_SIZE(d) ((gk_i64)GK_DIM_(blockDim, d))
#define GK_NUM_GROUPS(d) ((gk_i64)GK_DIM_(gridDim, d))
#define GK_HAS_FP64 1
#elif defined(GK_OPENCL)
typedef char gk_i8;
typedef uchar gk_u8;
typedef short gk_i16;
typedef ushort gk_u16;
typedef int gk_i32;
typedef uint gk_u32;
typedef long gk_i64;
typedef ulong gk_u64;
#define GK_KERNEL __kernel
#define GK_GLOBAL __global
#define GK_LOCAL __local
#define GK_DEVICE_FN static inline
#define GK_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define GK_LOCAL_ID(d) ((gk_i64)get_local_id(d))
#define GK_GROUP_ID(d) ((gk_i64)get_group_id(d))
#define GK_LOCAL_SIZE(d) ((gk_i64)get_local_size(d))
#define GK_NUM_GROUPS(d) ((gk_i64)get_num_groups(d))
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define GK_HAS_FP64 1
#endif
#else
#include <stdint.h>
typedef int64_t gk_i64;
#endif

#ifndef GK_HOST
#define GK_GLOBAL_ID(d) (GK_GROUP_ID(d) * GK_LOCAL_SIZE(d) + GK_LOCAL_ID(d))
#define GK_GLOBAL_SIZE(d) (GK_NUM_GROUPS(d) * GK_LOCAL_SIZE(d))
/* A grid-stride loop over [0, n): every work-item takes i, i + size, ... */
#define GK_FOR_EACH_INDEX(i, n) \
    for (gk_i64 i = GK_GLOBAL_ID(0); i < (n); i += GK_GLOBAL_SIZE(0))

/* The 16-bit floating formats, float16 (IEEE binary16) and bfloat16
 * (float32's upper half), are stored as their bit patterns (gk_f16,
 * gk_bf16: 16-bit integers, so no device needs half-precision support) and
 * computed in float:
 *
 *   float gk_f16_to_float(gk_f16), gk_bf16_to_float(gk_bf16)   exact
 *   gk_f16 gk_f16_from_float(float), gk_bf16 gk_bf16_from_float(float)
 *   gk_f16 gk_f16_from_double(double), gk_bf16 gk_bf16_from_double(double)
 *                                         (where GK_HAS_FP64)
 *
 * The conversions to them round to nearest, ties to even (once: a double
 * is rounded from its own bits, never through float), overflow to
 * infinity and make a NaN the quiet NaN of its sign (0x7E00, 0x7FC0), as
 * the host's compute/half.h does, bit for bit. */
typedef gk_u16 gk_f16;
typedef gk_u16 gk_bf16;

/* The helpers below are in every program, most unused: NVRTC warns of an
 * unused static function (#177) but not of an unused inline one. */
#if defined(GK_CUDA)
#define GK_HELPER_FN_ __device__ __forceinline__
#else
#define GK_HELPER_FN_ static inline
#endif

#if defined(GK_CUDA)
#define GK_FLOAT_BITS(f) __float_as_uint(f)
#define GK_BITS_FLOAT(u) __uint_as_float(u)
#define GK_DOUBLE_BITS(d) ((gk_u64)__double_as_longlong(d))
#else
#define GK_FLOAT_BITS(f) as_uint((float)(f))
#define GK_BITS_FLOAT(u) as_float((gk_u32)(u))
#define GK_DOUBLE_BITS(d) as_ulong((double)(d))
#endif

/* By bits on both APIs (a handful of integer operations): a NaN keeps its
 * payload, as on the host, whatever a hardware conversion does with it. */
GK_HELPER_FN_ float gk_f16_to_float(gk_f16 h)
{
    gk_u32 sign = (gk_u32)(h & 0x8000u) << 16, exponent = ((gk_u32)h >> 10) & 0x1Fu;
    gk_u32 mantissa = (gk_u32)h & 0x3FFu;
    if (exponent == 0) { /* zero or subnormal: mantissa * 2^-24, exact in float */
        float value = (float)mantissa * 5.9604644775390625e-8f;
        return sign ? -value : value;
    }
    return GK_BITS_FLOAT(sign | (exponent == 0x1Fu ? 0x7F800000u : (exponent + 112u) << 23) |
                         mantissa << 13);
}

GK_HELPER_FN_ float gk_bf16_to_float(gk_bf16 b)
{
    return GK_BITS_FLOAT((gk_u32)b << 16);
}

GK_HELPER_FN_ gk_f16 gk_f16_from_float(float f)
{
    gk_u32 bits = GK_FLOAT_BITS(f);
    gk_u32 sign = (bits >> 16) & 0x8000u;
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) /* NaN: the hardware's is another one */
        return (gk_f16)(sign | 0x7E00u);
#if defined(GK_CUDA)
    /* The hardware conversion, correctly rounded (no cuda_fp16.h needed). */
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return (gk_f16)h;
#else
    /* OpenCL C 1.2 converts to half only through memory (vstore_half_rte
     * into a half pointer), and reading that back as a 16-bit integer
     * would be type punning; the rounding by bits is exact and cheap. */
    gk_u32 magnitude = bits & 0x7FFFFFFFu;
    if (magnitude >= 0x477FF000u) /* 65520 and up (infinity too) round to infinity */
        return (gk_f16)(sign | 0x7C00u);
    if (magnitude >= 0x38800000u) { /* 2^-14 and up: normal, rebias by 127 - 15 */
        gk_u32 v = magnitude - 0x38000000u;
        return (gk_f16)(sign | ((v + 0xFFFu + ((v >> 13) & 1u)) >> 13));
    }
    if (magnitude <= 0x33000000u) /* up to 2^-25 (a tie with 0, even) */
        return (gk_f16)sign;
    /* Subnormal: the significand counted in units of 2^-24, rounded. */
    gk_u32 shift = 126u - (magnitude >> 23);
    gk_u32 significand = (magnitude & 0x7FFFFFu) | 0x800000u;
    return (gk_f16)(sign | ((significand + (1u << (shift - 1)) - 1u +
                             ((significand >> shift) & 1u)) >> shift));
#endif
}

/* Add half an ulp of the result (less one, plus the kept lowest bit: ties
 * to even) and cut; carries run into the exponent, up to infinity. */
GK_HELPER_FN_ gk_bf16 gk_bf16_from_float(float f)
{
    gk_u32 bits = GK_FLOAT_BITS(f);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
        return (gk_bf16)(((bits >> 16) & 0x8000u) | 0x7FC0u);
    return (gk_bf16)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

#ifdef GK_HAS_FP64
/* d rounded once to a format with `digits` stored significand bits and
 * exponents 1 - bias ... bias, as its bit pattern (the algorithm of the
 * host's gk_round_to_16). */
GK_HELPER_FN_ gk_u16 gk_round_double_to_16(double d, int digits, int bias)
{
    gk_u64 bits = GK_DOUBLE_BITS(d);
    gk_u32 sign = (gk_u32)(bits >> 48) & 0x8000u;
    gk_u64 magnitude = bits & (((gk_u64)1 << 63) - 1);
    gk_u32 infinity = (gk_u32)(2 * bias + 1) << digits;
    gk_u64 exponent_mask = (gk_u64)0x7FF << 52;
    if (magnitude >= exponent_mask) /* inf, or NaN made quiet */
        return (gk_u16)(sign | infinity |
                        (magnitude > exponent_mask ? (gk_u32)1 << (digits - 1) : 0u));
    int exponent = (int)(magnitude >> 52) - 1023;
    if (exponent > bias)
        return (gk_u16)(sign | infinity);
    if (exponent < 1 - bias - digits - 1) /* below half the smallest subnormal */
        return (gk_u16)sign;
    gk_u64 significand = (magnitude & (((gk_u64)1 << 52) - 1)) | ((gk_u64)1 << 52);
    int drop = 52 - digits + (exponent < 1 - bias ? 1 - bias - exponent : 0);
    gk_u64 kept = significand >> drop, rest = significand & (((gk_u64)1 << drop) - 1);
    gk_u64 halfway = (gk_u64)1 << (drop - 1);
    if (rest > halfway || (rest == halfway && (kept & 1)))
        kept++; /* a carry moves into the exponent, up to infinity */
    /* kept holds the leading 1 at bit `digits` for normal numbers, which
     * adds the 1 the biased exponent needs. */
    gk_u64 pattern =
        exponent < 1 - bias ? kept : ((gk_u64)(exponent + bias - 1) << digits) + kept;
    return (gk_u16)(sign | (gk_u32)pattern);
}

GK_HELPER_FN_ gk_f16 gk_f16_from_double(double d)
{
    return gk_round_double_to_16(d, 10, 15);
}

GK_HELPER_FN_ gk_bf16 gk_bf16_from_double(double d)
{
    return gk_round_double_to_16(d, 7, 127);
}
#endif

/* gk_hypot: hypot, except that on CUDA a finite pair whose hypot comes out
 * infinite is computed again as max * sqrt(1 + (min / max)^2): CUDA's
 * double hypot overflows for DBL_MAX and a small part (seen on an H100),
 * where the true result, DBL_MAX, is finite. */
#if defined(GK_CUDA)
GK_HELPER_FN_ double gk_hypot(double x, double y)
{
    double h = hypot(x, y);
    if (isinf(h) && isfinite(x) && isfinite(y)) {
        double a = fabs(x), b = fabs(y), big = fmax(a, b), ratio = fmin(a, b) / big;
        h = big * sqrt(1.0 + ratio * ratio);
    }
    return h;
}
GK_HELPER_FN_ float gk_hypot(float x, float y)
{
    float h = hypotf(x, y);
    if (isinf(h) && isfinite(x) && isfinite(y)) {
        float a = fabsf(x), b = fabsf(y), big = fmaxf(a, b), ratio = fminf(a, b) / big;
        h = big * sqrtf(1.0f + ratio * ratio);
    }
    return h;
}
#else
#define gk_hypot hypot
#endif
#else
#define gk_hypot hypot
#endif

/* --- shared by host and kernels --- */

/* complex64 and complex128 elements: the real part, then the imaginary
 * one (NumPy's and C99's layout), aligned to their whole size so that a
 * GPU moves each in one load. Kernels compute with the parts; the built-in
 * complex functions are in complex.h. complex128 needs double precision. */
#if defined(GK_CUDA)
#define GK_ALIGNED_(n) __align__(n)
#else
#define GK_ALIGNED_(n) __attribute__((aligned(n)))
#endif
typedef struct GK_ALIGNED_(8) gk_c64 {
    float re;
    float im;
} gk_c64;
#if !defined(GK_OPENCL) || defined(GK_HAS_FP64)
typedef struct GK_ALIGNED_(16) gk_c128 {
    double re;
    double im;
} gk_c128;
#endif

#define GK_KLOOP_DIMS 8
#define GK_KLOOP_OPERANDS 8

/* An elementwise iteration space as built-in kernels receive it (by
 * value): `size` elements in C order over `shape`, and for each operand
 * (output first) the element offset of its origin from its buffer argument
 * and its stride per axis in elements. `contiguous` is 1 when the loop has
 * a single axis after merging (contiguous arrays, broadcast scalars, plain
 * strided vectors): offsets are then offset + i * stride, with no
 * division, which is the fast path GK_KLOOP_OFFSETS takes. */
typedef struct gk_kloop {
    gk_i64 size;
    gk_i64 ndim;
    gk_i64 contiguous;
    gk_i64 shape[GK_KLOOP_DIMS];
    gk_i64 offset[GK_KLOOP_OPERANDS];
    gk_i64 strides[GK_KLOOP_OPERANDS][GK_KLOOP_DIMS];
} gk_kloop;

/* An array as a kernel sees it through gk_arg_view (kernel.h): with its
 * buffer parameter `GK_GLOBAL T *base`, element [i, j, ...] is
 * base[offset + i * strides[0] + j * strides[1] + ...]; strides are in
 * elements and may be negative or 0. Axes past ndim are unused. */
#define GK_VIEW_DIMS 8
typedef struct gk_view {
    gk_i64 offset;
    gk_i64 ndim;
    gk_i64 size;
    gk_i64 shape[GK_VIEW_DIMS];
    gk_i64 strides[GK_VIEW_DIMS];
} gk_view;

#ifndef GK_HOST
/* Sets out[k] to the element offset of linear index i for the first
 * `count` operands of `loop` (a kernel parameter, used by name so that
 * CUDA keeps it in the parameter bank). */
#define GK_KLOOP_OFFSETS(loop, i, count, out)                              \
    do {                                                                  \
        for (int k_ = 0; k_ < (count); k_++)                              \
            (out)[k_] = (loop).offset[k_] + ((loop).contiguous ? (i) * (loop).strides[k_][0] : 0); \
        if (!(loop).contiguous) {                                         \
            gk_i64 rest_ = (i);                                           \
            for (int d_ = (int)(loop).ndim - 1; d_ >= 0; d_--) {          \
                gk_i64 c_ = rest_ % (loop).shape[d_];                     \
                rest_ /= (loop).shape[d_];                                \
                for (int k_ = 0; k_ < (count); k_++)                      \
                    (out)[k_] += c_ * (loop).strides[k_][d_];             \
            }                                                             \
        }                                                                 \
    } while (0)
#endif

#endif
