/* Random arrays: the core checks the request and makes the array; the
 * backend fills it with Philox4x32-10 numbers, element i depending only on
 * (seed, i), so every device gives the same array (the exact mapping is in
 * backends/cpu/random.c, the reference every backend reproduces). */
#include "compute/array_impl.h"

#include "core/error.h"

#include <math.h>

/* The 16-bit float (float16 or bfloat16: sign and magnitude, like IEEE's)
 * next to `bits` toward +infinity (up) or -infinity. */
static uint16_t half_step(uint16_t bits, bool up)
{
    bool negative = bits & 0x8000;
    if ((bits & 0x7fff) == 0) /* +-0: the least subnormal of the other side's sign */
        return up ? 0x0001 : 0x8001;
    return negative != up ? (uint16_t)(bits + 1) : (uint16_t)(bits - 1);
}

/* The least value of `dtype` (a 16-bit float) >= v (at_least), or the
 * largest < v. */
static double half_bound(gk_dtype dtype, double v, bool at_least)
{
    uint16_t bits;
    gk_dtype_store(dtype, v, &bits);
    double rounded = gk_dtype_load(dtype, &bits);
    if (at_least ? rounded < v : rounded >= v)
        bits = half_step(bits, at_least);
    return gk_dtype_load(dtype, &bits);
}

static gk_status random_array(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                              uint64_t seed, bool normal, double a, double b, gk_array **out)
{
    *out = NULL;
    const char *what = normal ? "random_normal" : "random_uniform";
    if (!gk_dtype_is_float(dtype))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s: dtype %s is not floating; random numbers are floating",
                       what, gk_dtype_name(dtype));
    if (normal && (!isfinite(a) || !isfinite(b) || b < 0))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s: mean %g and stddev %g: both must be finite and stddev >= 0", what, a,
                       b);
    if (!normal && (!isfinite(a) || !isfinite(b) || !(a <= b) || !isfinite(b - a)))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s: low %g and high %g: both must be finite, low <= high", what, a, b);
    if (gk_dtype_is_half(dtype)) { /* float32's numbers, rounded */
        gk_status status = random_array(device, GK_FLOAT32, ndim, shape, seed, normal, a, b, out);
        if (status == GK_OK && !normal && a < b) {
            /* Rounding to 16 bits could reach high, or go below low: held
             * to the dtype's values in [low, high), as the wider dtypes'
             * are (backends/cpu/random.c). */
            double least = half_bound(dtype, a, true), most = half_bound(dtype, b, false);
            if (least > most) {
                gk_array_free(*out);
                *out = NULL;
                return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: no %s value lies in [%.17g, %.17g)",
                               what, gk_dtype_name(dtype), a, b);
            }
            gk_array *held = NULL;
            status = gk_clip(*out, least, most, &held);
            gk_array_free(*out);
            *out = held;
        }
        return status == GK_OK ? gk_narrow_to(out, dtype) : status;
    }
    gk_status status = gk_empty(device, dtype, ndim, shape, out);
    if (status != GK_OK || gk_array_size(*out) == 0)
        return status;
    gk_operand operand = gk_array_operand(*out);
    status = gk_array_backend(*out)->random(device, &operand, gk_array_size(*out), seed, normal,
                                            a, b);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

gk_status gk_random_uniform(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                            uint64_t seed, double low, double high, gk_array **out)
{
    return random_array(device, dtype, ndim, shape, seed, false, low, high, out);
}

gk_status gk_random_normal(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                           uint64_t seed, double mean, double stddev, gk_array **out)
{
    return random_array(device, dtype, ndim, shape, seed, true, mean, stddev, out);
}
