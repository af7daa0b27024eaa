/* Random arrays: the core checks the request and makes the array; the
 * backend fills it with Philox4x32-10 numbers, element i depending only on
 * (seed, i), so every device gives the same array (the exact mapping is in
 * backends/cpu/random.c, the reference every backend reproduces). */
#include "compute/array_impl.h"

#include "core/error.h"

#include <math.h>

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
