/* The two 16-bit floating formats, float16 (IEEE binary16) and bfloat16
 * (float32's upper half), as bit patterns: conversions to float (exact)
 * and from double or float (rounded to nearest, ties to even, as a cast),
 * shared by the core (scalars, printing) and the CPU backend (its loops).
 * The GPU kernels have their own (kernels/types.h). */
#ifndef GK_COMPUTE_HALF_H
#define GK_COMPUTE_HALF_H

#include <stdint.h>
#include <string.h>

/* d rounded to a binary format with `digits` stored significand bits and
 * exponents from 1 - bias to bias (a normal number's), as the format's bit
 * pattern: subnormals below, infinity above, NaN kept quiet with its sign.
 * One rounding from double, so the result is the correctly rounded one
 * (rounding through float first could round twice). */
static inline uint16_t gk_round_to_16(double d, int digits, int bias)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    uint16_t sign = (uint16_t)((bits >> 48) & 0x8000);
    uint64_t magnitude = bits & 0x7FFFFFFFFFFFFFFFull;
    uint16_t infinity = (uint16_t)((2 * bias + 1) << digits);
    if (magnitude >= 0x7FF0000000000000ull) /* inf, or NaN made quiet */
        return sign | infinity |
               (magnitude > 0x7FF0000000000000ull ? (uint16_t)(1u << (digits - 1)) : 0);
    int exponent = (int)(magnitude >> 52) - 1023;
    if (exponent > bias)
        return sign | infinity;
    if (exponent < 1 - bias - digits - 1) /* below half the smallest subnormal */
        return sign;
    /* The significand with its leading 1 (double subnormals are far below
     * any 16-bit format's range and were returned as 0 above). */
    uint64_t significand = (magnitude & 0xFFFFFFFFFFFFFull) | (1ull << 52);
    int drop = 52 - digits + (exponent < 1 - bias ? 1 - bias - exponent : 0);
    uint64_t kept = significand >> drop, rest = significand & ((1ull << drop) - 1);
    uint64_t half = 1ull << (drop - 1);
    if (rest > half || (rest == half && (kept & 1)))
        kept++; /* a carry moves into the exponent, up to infinity */
    /* kept holds the leading 1 at bit `digits` for normal numbers, which
     * adds the 1 that the biased exponent (exponent + bias) needs. */
    uint64_t pattern = exponent < 1 - bias ? kept
                                           : ((uint64_t)(exponent + bias - 1) << digits) + kept;
    return (uint16_t)(sign | pattern);
}

static inline uint16_t gk_float16_from_double(double d)
{
    return gk_round_to_16(d, 10, 15);
}

static inline uint16_t gk_bfloat16_from_double(double d)
{
    return gk_round_to_16(d, 7, 127);
}

static inline float gk_float16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
    if (exponent == 0) { /* zero or subnormal: mantissa * 2^-24, exact in float */
        float value = (float)mantissa * 0x1p-24f;
        return sign ? -value : value;
    }
    uint32_t bits = sign | (exponent == 0x1F ? 0x7F800000u : (exponent + 112) << 23) |
                    mantissa << 13;
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static inline float gk_bfloat16_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* The same result as gk_bfloat16_from_double((double)f), in a form that
 * vectorises: add half an ulp of the result (less one, plus the kept
 * lowest bit: ties to even) and cut; NaN gives the quiet NaN of its sign. */
static inline uint16_t gk_bfloat16_from_float(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1)) >> 16;
    uint32_t quiet = ((bits >> 16) & 0x8000u) | 0x7FC0u;
    return (uint16_t)((bits & 0x7FFFFFFFu) > 0x7F800000u ? quiet : rounded);
}

#endif
