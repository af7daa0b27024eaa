/* Random numbers on a GPU: Philox4x32-10 with the CPU's exact mapping
 * (kernels/random.gk; backends/cpu/random.c is the reference), so a seed
 * gives the same bits on every device.
 *
 * The mapping computes in double for float32 too. A device without double
 * (some OpenCL GPUs) cannot run it, so there the CPU backend makes the
 * numbers in host memory and they are uploaded: the same bits, slower. */
#include "compute/gpu/gpu.h"

#include "core/error.h"

#include <math.h>
#include <stdlib.h>

/* The largest float below high (high itself when float(high) < high), as
 * the CPU computes it. */
static double float_below(double high)
{
    float f = (float)high;
    return (double)f >= high ? (double)nextafterf(f, -INFINITY) : (double)f;
}

/* Numbers made by the CPU backend, then uploaded. */
static gk_status random_on_host(gk_device device, const gk_operand *out, int64_t count,
                                uint64_t seed, bool normal, double a, double b)
{
    size_t bytes = (size_t)count * gk_dtype_size(out->dtype);
    char *host = malloc(bytes);
    if (!host)
        return gk_fail(GK_ERR_OUT_OF_MEMORY,
                       "random numbers: out of host memory for %zu bytes of staging", bytes);
    gk_operand staged = *out;
    staged.data = host;
    gk_status status = gk_cpu_backend.random(gk_device_cpu(), &staged, count, seed, normal, a, b);
    if (status == GK_OK)
        status = gk_gpu_driver_of(device)->upload(device, out->data, host, bytes);
    free(host);
    return status;
}

gk_status gpu_random(gk_device device, const gk_operand *out, int64_t count, uint64_t seed,
                     bool normal, double a, double b)
{
    gk_status refused = gk_gpu_refuse_half("random numbers", out->dtype);
    if (refused != GK_OK)
        return refused;
    if (out->dtype != GK_FLOAT32 && out->dtype != GK_FLOAT64)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "random numbers: %s is not a floating dtype (use float32 or float64)",
                       gk_dtype_name(out->dtype));
    if (count <= 0)
        return GK_OK;
    const gk_gpu_info *info = NULL;
    gk_status status = gk_gpu_info_of(device, &info);
    if (status != GK_OK)
        return status;
    if (!info->fp64)
        return random_on_host(device, out, count, seed, normal, a, b);

    bool single = out->dtype == GK_FLOAT32;
    int64_t per_block = single ? 4 : 2;
    int64_t blocks = (count + per_block - 1) / per_block;
    /* Uniform: a value that rounding took to b or above becomes the
     * largest value of the dtype below b (the CPU's rule). */
    int64_t clamp = !normal && a < b;
    double limit = single ? float_below(b) : nextafter(b, -INFINITY);
    double width = b - a;
    gk_gpu_launch launch;
    gk_gpu_launch_begin(&launch, device);
    gk_gpu_arg_array(&launch, out->data, out->dtype);
    gk_gpu_arg_i64(&launch, count);
    gk_gpu_arg_value(&launch, &seed, sizeof seed);
    gk_gpu_arg_i64(&launch, normal);
    gk_gpu_arg_value(&launch, &a, sizeof a);
    gk_gpu_arg_value(&launch, &b, sizeof b);
    gk_gpu_arg_value(&launch, &width, sizeof width);
    gk_gpu_arg_i64(&launch, clamp);
    gk_gpu_arg_value(&launch, &limit, sizeof limit);
    return gk_gpu_run_items(&launch, "random", out->dtype, "random_fill", blocks);
}
