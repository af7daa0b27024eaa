/* Random numbers: Philox4x32-10, counter-based, so element i of an array
 * depends only on (seed, i) - the same numbers whatever the device or the
 * number of threads. This file is the reference: every backend computes
 * exactly the following (IEEE-754 binary64 arithmetic, round to nearest,
 * no fused multiply-add contraction - CUDA: __dmul_rn/__dadd_rn or
 * -fmad=false; OpenCL: #pragma OPENCL FP_CONTRACT OFF - and only the
 * operations written here, so results are identical bit for bit).
 *
 * Generator. key = {seed & 0xffffffff, seed >> 32}; block b's counter is
 * {b & 0xffffffff, b >> 32, 0, 0}; philox() below (Random123's
 * philox4x32_10: 10 rounds, the key bumped between rounds) turns it into
 * four 32-bit words w[0..3].
 *
 * Elements. Block b feeds elements [b*P, b*P + P):
 *   float32 (P = 4), lane L = i % 4:
 *     uniform: u = (w[L] >> 8) * 2^-24, in [0, 1);
 *     normal:  pair p = L / 2: u1 = (w[2p] + 1) * 2^-32, in (0, 1],
 *              u2 = w[2p+1] * 2^-32, in [0, 1); L even takes r*cos, odd
 *              r*sin (Box-Muller, below).
 *   float64 (P = 2), lane L = i % 2, and with
 *     bits53(x, y) = (x >> 5) * 2^26 + (y >> 6)   (an integer < 2^53):
 *     uniform: u = bits53(w[2L], w[2L+1]) * 2^-53, in [0, 1);
 *     normal:  u1 = (bits53(w[0], w[1]) + 1) * 2^-53, in (0, 1],
 *              u2 = bits53(w[2], w[3]) * 2^-53; lane 0 takes r*cos, lane 1
 *              r*sin.
 * Uniform in [low, high): v = low + (high - low) * u in double, rounded to
 * the dtype; a v that rounding took to high or above (and low < high) is
 * replaced by the largest value of the dtype below high.
 * Normal: r = sqrt(-2 * philox_log(u1)); (s, c) = sincos_2pi(u2) (both
 * below, written with + - * / and sqrt only, so that no device's libm
 * enters); v = mean + stddev * (r * c or r * s) in double, rounded to the
 * dtype. */
#include "compute/backends/cpu/cpu.h"

#include "compute/backends/cpu/parallel.h"

#include <math.h>
#include <stdint.h>

typedef struct philox_words {
    uint32_t w[4];
} philox_words;

static philox_words philox(uint64_t block, uint64_t seed)
{
    uint32_t c0 = (uint32_t)block, c1 = (uint32_t)(block >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    return (philox_words){{c0, c1, c2, c3}};
}

/* ln(x) for x in [2^-53, 1] (fdlibm's e_log.c without its special cases;
 * error below 1 ulp). */
static double philox_log(double x)
{
    int k;
    double m = frexp(x, &k); /* x = m * 2^k, m in [0.5, 1): exact */
    if (m < 0x1.6a09e667f3bcdp-1) { /* sqrt(1/2): m into [sqrt(1/2), sqrt(2)) */
        m = m * 2.0;
        k = k - 1;
    }
    double f = m - 1.0;
    double s = f / (2.0 + f);
    double z = s * s;
    double r = z * (0x1.5555555555593p-1 +
                    z * (0x1.999999997fa04p-2 +
                         z * (0x1.2492494229359p-2 +
                              z * (0x1.c71c51d8e78afp-3 +
                                   z * (0x1.7466496cb03dep-3 +
                                        z * (0x1.39a09d078c69fp-3 +
                                             z * 0x1.2f112df3e5244p-3))))));
    double hfsq = 0.5 * f * f;
    double dk = (double)k;
    /* ln 2 split: hi has trailing zeros, so dk * hi is exact. */
    return dk * 0x1.62e42fee00000p-1 -
           ((hfsq - (s * (hfsq + r) + dk * 0x1.a39ef35793c76p-33)) - f);
}

/* sin(2 pi u) and cos(2 pi u) for u in [0, 1): 8u = o + f exactly, with
 * the octant o an integer and f in [-1/2, 1/2); theta = f * pi/4 (|theta|
 * <= pi/8) through Taylor polynomials to theta^13 and theta^14, then
 * rotated by o * pi/4. */
static void sincos_2pi(double u, double *sine, double *cosine)
{
    double t = 8.0 * u;
    int o = (int)t;
    double f = t - (double)o;
    if (f >= 0.5) {
        o = o + 1;
        f = f - 1.0;
    }
    double theta = f * 0x1.921fb54442d18p-1; /* pi/4 */
    double z = theta * theta;
    double s = theta + theta * z *
                           (-0x1.5555555555555p-3 +
                            z * (0x1.1111111111111p-7 +
                                 z * (-0x1.a01a01a01a01ap-13 +
                                      z * (0x1.71de3a556c734p-19 +
                                           z * (-0x1.ae64567f544e4p-26 +
                                                z * 0x1.6124613a86d09p-33)))));
    double c = 1.0 + z * (-0.5 +
                          z * (0x1.5555555555555p-5 +
                               z * (-0x1.6c16c16c16c17p-10 +
                                    z * (0x1.a01a01a01a01ap-16 +
                                         z * (-0x1.27e4fb7789f5cp-22 +
                                              z * (0x1.1eed8eff8d898p-29 +
                                                   z * -0x1.93974a8c07c9dp-37))))));
    const double h = 0x1.6a09e667f3bcdp-1; /* sqrt(1/2) */
    switch (o & 7) {
    case 0: *sine = s; *cosine = c; break;
    case 1: *sine = h * (c + s); *cosine = h * (c - s); break;
    case 2: *sine = c; *cosine = -s; break;
    case 3: *sine = h * (c - s); *cosine = -(h * (c + s)); break;
    case 4: *sine = -s; *cosine = -c; break;
    case 5: *sine = -(h * (c + s)); *cosine = -(h * (c - s)); break;
    case 6: *sine = -c; *cosine = s; break;
    default: *sine = -(h * (c - s)); *cosine = h * (c + s); break;
    }
}

static double bits53(uint32_t x, uint32_t y)
{
    return (double)(x >> 5) * 67108864.0 + (double)(y >> 6);
}

#define TWO_M24 0x1p-24
#define TWO_M32 0x1p-32
#define TWO_M53 0x1p-53

/* The largest float below high (high itself when float(high) < high). */
static float float_below(double high)
{
    float f = (float)high;
    return (double)f >= high ? nextafterf(f, -INFINITY) : f;
}

/* A random fill, as cpu_random sets it up. */
typedef struct random_job {
    float *out32;
    double *out64;
    int64_t count, per_block;
    uint64_t seed;
    bool normal, single, clamp;
    double a, b, width, limit64;
    float limit32;
} random_job;

/* Blocks [first, end) of 4 32-bit words (a cpu_range_fn). */
static void random_range(void *data, int64_t first_block, int64_t end)
{
    const random_job *j = data;
    float *out32 = j->out32;
    double *out64 = j->out64;
    int64_t count = j->count, per_block = j->per_block;
    uint64_t seed = j->seed;
    bool normal = j->normal, single = j->single, clamp = j->clamp;
    double a = j->a, b = j->b, width = j->width, limit64 = j->limit64;
    float limit32 = j->limit32;
    for (int64_t block = first_block; block < end; block++) {
        philox_words r = philox((uint64_t)block, seed);
        int64_t first = block * per_block;
        int64_t n = count - first < per_block ? count - first : per_block;
        double v[4] = {0, 0, 0, 0};
        if (normal && single) {
            for (int p = 0; p < 2; p++) {
                double u1 = ((double)r.w[2 * p] + 1.0) * TWO_M32;
                double u2 = (double)r.w[2 * p + 1] * TWO_M32;
                double radius = sqrt(-2.0 * philox_log(u1)), s, c;
                sincos_2pi(u2, &s, &c);
                v[2 * p] = a + b * (radius * c);
                v[2 * p + 1] = a + b * (radius * s);
            }
        } else if (normal) {
            double u1 = (bits53(r.w[0], r.w[1]) + 1.0) * TWO_M53;
            double u2 = bits53(r.w[2], r.w[3]) * TWO_M53;
            double radius = sqrt(-2.0 * philox_log(u1)), s, c;
            sincos_2pi(u2, &s, &c);
            v[0] = a + b * (radius * c);
            v[1] = a + b * (radius * s);
        } else if (single) {
            for (int lane = 0; lane < 4; lane++)
                v[lane] = a + width * ((double)(r.w[lane] >> 8) * TWO_M24);
        } else {
            for (int lane = 0; lane < 2; lane++)
                v[lane] = a + width * (bits53(r.w[2 * lane], r.w[2 * lane + 1]) * TWO_M53);
        }
        for (int64_t lane = 0; lane < n; lane++) {
            if (single) {
                float x = (float)v[lane];
                out32[first + lane] = clamp && (double)x >= b ? limit32 : x;
            } else {
                out64[first + lane] = clamp && v[lane] >= b ? limit64 : v[lane];
            }
        }
    }
}

gk_status cpu_random(gk_device device, const gk_operand *out, int64_t count, uint64_t seed,
                     bool normal, double a, double b)
{
    (void)device;
    bool single = out->dtype == GK_FLOAT32;
    random_job job = {
        .out32 = (float *)out->data,
        .out64 = (double *)out->data,
        .count = count,
        .per_block = single ? 4 : 2,
        .seed = seed,
        .normal = normal,
        .single = single,
        .clamp = !normal && a < b,
        .a = a,
        .b = b,
        .width = b - a, /* uniform: high - low */
        .limit64 = nextafter(b, -INFINITY),
        .limit32 = float_below(b),
    };
    int64_t blocks = (count + job.per_block - 1) / job.per_block;
    cpu_parallel(blocks, count >= cpu_parallel_min(), random_range, &job);
    return GK_OK;
}
