/* Creating arrays with values: constants, sequences, the identity, host
 * data. (Random numbers are in random.c.) */
#include "compute/array_impl.h"

#include "core/error.h"

#include <math.h>

gk_status gk_full(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                  double value, gk_array **out)
{
    return gk_full_complex(device, dtype, ndim, shape, value, 0, out);
}

gk_status gk_full_complex(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                          double re, double im, gk_array **out)
{
    gk_status status = gk_empty(device, dtype, ndim, shape, out);
    if (status != GK_OK || gk_array_size(*out) == 0)
        return status;
    unsigned char bytes[GK_DTYPE_MAX_SIZE];
    gk_dtype_store_complex(dtype, re, im, bytes);
    gk_loop loop = gk_array_loop(*out);
    gk_operand operand = gk_array_operand(*out);
    status = gk_array_backend(*out)->fill(device, &loop, &operand, bytes);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

gk_status gk_zeros(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                   gk_array **out)
{
    return gk_full(device, dtype, ndim, shape, 0, out);
}

gk_status gk_ones(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                  gk_array **out)
{
    return gk_full(device, dtype, ndim, shape, 1, out);
}

gk_status gk_scalar(gk_device device, gk_dtype dtype, double value, gk_array **out)
{
    return gk_full(device, dtype, 0, NULL, value, out);
}

static gk_status sequence(gk_device device, gk_dtype dtype, int64_t count, double start,
                          double step, gk_array **out)
{
    if (gk_dtype_is_complex(dtype)) {
        /* The real parts' sequence, converted (imaginary parts 0): the
         * backends make sequences of real dtypes only. */
        gk_array *real = NULL;
        gk_status status = sequence(device, gk_dtype_component(dtype), count, start, step, &real);
        if (status == GK_OK)
            status = gk_cast(real, dtype, out);
        gk_array_free(real);
        return status;
    }
    gk_status status = gk_empty(device, dtype, 1, &count, out);
    if (status != GK_OK || count == 0)
        return status;
    gk_operand operand = gk_array_operand(*out);
    status = gk_array_backend(*out)->sequence(device, &operand, count, start, step);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

gk_status gk_arange(gk_device device, gk_dtype dtype, double start, double stop, double step,
                    gk_array **out)
{
    *out = NULL;
    if (step == 0 || !isfinite(start) || !isfinite(stop) || !isfinite(step))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "arange: start, stop and step must be finite and step not 0");
    double count = ceil((stop - start) / step);
    if (count > 9e15)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "arange: %.0f elements are too many", count);
    return sequence(device, dtype, count > 0 ? (int64_t)count : 0, start, step, out);
}

gk_status gk_arange_int64(gk_device device, gk_dtype dtype, int64_t start, int64_t stop,
                          int64_t step, gk_array **out)
{
    *out = NULL;
    if (step == 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "arange: step must not be 0");
    /* the count in unsigned arithmetic: stop - start can overflow int64 */
    bool up = step > 0;
    uint64_t distance = up ? (stop > start ? (uint64_t)stop - (uint64_t)start : 0)
                           : (start > stop ? (uint64_t)start - (uint64_t)stop : 0);
    uint64_t stride = up ? (uint64_t)step : 0 - (uint64_t)step;
    uint64_t elements = distance ? (distance - 1) / stride + 1 : 0;
    if (elements > (uint64_t)9e15)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "arange: %llu elements are too many",
                       (unsigned long long)elements);
    int64_t count = (int64_t)elements;
    /* Below 2^52 the doubles' sequence is exact (start + i * step stays
     * within 2^53) and takes one pass, where the dtype holds every value
     * (the first and the last, exact as doubles there: the backends
     * saturate). */
    const int64_t exact = (int64_t)1 << 52;
    int64_t last = count ? (int64_t)((uint64_t)start + (uint64_t)(count - 1) * (uint64_t)step)
                         : start;
    double low = -INFINITY, high = INFINITY;
    if (gk_dtype_is_integer(dtype))
        gk_integer_range(dtype, &low, &high);
    if (start > -exact && start < exact && stop > -exact && stop < exact && step > -exact &&
        step < exact && (double)start >= low && (double)start <= high && (double)last >= low &&
        (double)last <= high)
        return gk_arange(device, dtype, (double)start, (double)stop, (double)step, out);
    /* 0 .. count - 1 (exact in doubles), times step, plus start, in int64,
     * wrapping; the cast keeps the dtype's low bits, so values past its
     * range wrap around, as NumPy's do (arange(300, dtype=uint8) ends
     * 255, 0, 1, ...). */
    gk_array *index = NULL, *first = NULL, *by = NULL, *scaled = NULL, *values = NULL;
    gk_status status = sequence(device, GK_INT64, count, 0, 1, &index);
    if (status == GK_OK)
        status = gk_from_host(device, GK_INT64, 0, NULL, &step, &by);
    if (status == GK_OK)
        status = gk_from_host(device, GK_INT64, 0, NULL, &start, &first);
    if (status == GK_OK)
        status = gk_binary(GK_MUL, index, by, &scaled);
    if (status == GK_OK)
        status = gk_binary(GK_ADD, scaled, first, &values);
    if (status == GK_OK && dtype != GK_INT64)
        status = gk_cast(values, dtype, out);
    else if (status == GK_OK)
        *out = values, values = NULL;
    gk_array *all[] = {index, first, by, scaled, values};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_array_free(all[i]);
    return status;
}

gk_status gk_linspace(gk_device device, gk_dtype dtype, double start, double stop, int64_t num,
                      bool endpoint, gk_array **out)
{
    *out = NULL;
    if (num < 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "linspace: num is %lld; it must be 0 or more",
                       (long long)num);
    /* One step for both endpoints, so that without it the values are
     * exactly those of num + 1 with it. */
    int64_t intervals = endpoint ? num - 1 : num;
    double step = intervals > 0 ? (stop - start) / (double)intervals : 0;
    gk_status status = sequence(device, dtype, num, start, step, out);
    /* The last value is stop exactly, as NumPy makes it. */
    if (status == GK_OK && endpoint && num > 1) {
        gk_array *last;
        status = gk_slice(*out, 0, num - 1, num, 1, &last);
        if (status == GK_OK) {
            unsigned char bytes[GK_DTYPE_MAX_SIZE];
            gk_dtype_store(dtype, stop, bytes);
            gk_loop loop = gk_array_loop(last);
            gk_operand operand = gk_array_operand(last);
            status = gk_array_backend(last)->fill(device, &loop, &operand, bytes);
            gk_array_free(last);
        }
        if (status != GK_OK) {
            gk_array_free(*out);
            *out = NULL;
        }
    }
    return status;
}

gk_status gk_linspace_complex(gk_device device, gk_dtype dtype, const double start[2],
                              const double stop[2], int64_t num, bool endpoint,
                              gk_array **out)
{
    *out = NULL;
    if (!gk_dtype_is_complex(dtype))
        return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                       "linspace: complex start or stop in %s; give a complex dtype",
                       gk_dtype_name(dtype));
    gk_dtype part = gk_dtype_component(dtype);
    gk_array *real = NULL, *imag = NULL, *turned = NULL, *wide = NULL;
    gk_status status = gk_linspace(device, part, start[0], stop[0], num,
                                   endpoint, &real);
    if (status == GK_OK)
        status = gk_linspace(device, part, start[1], stop[1], num, endpoint,
                             &imag);
    if (status == GK_OK)
        status = gk_binary_value_complex(GK_MUL, imag, 0, 1, false, &turned);
    if (status == GK_OK)
        status = gk_cast(real, dtype, &wide);
    if (status == GK_OK)
        status = gk_binary(GK_ADD, wide, turned, out);
    gk_array *all[] = {real, imag, turned, wide};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_array_free(all[i]);
    return status;
}

gk_status gk_eye(gk_device device, gk_dtype dtype, int64_t n, gk_array **out)
{
    *out = NULL;
    if (n < 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "eye: n is %lld; it must be 0 or more",
                       (long long)n);
    int64_t shape[2] = {n, n};
    gk_status status = gk_zeros(device, dtype, 2, shape, out);
    if (status != GK_OK || n == 0)
        return status;
    /* The diagonal is a 1-d view with stride n + 1. */
    gk_loop loop = {1, {n}};
    gk_operand diagonal = gk_array_operand(*out);
    diagonal.strides[0] = n + 1;
    unsigned char one[GK_DTYPE_MAX_SIZE];
    gk_dtype_store(dtype, 1, one);
    status = gk_array_backend(*out)->fill(device, &loop, &diagonal, one);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

gk_status gk_from_host(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                       const void *data, gk_array **out)
{
    gk_status status = gk_empty(device, dtype, ndim, shape, out);
    size_t nbytes = status == GK_OK ? gk_array_nbytes(*out) : 0;
    if (status != GK_OK || nbytes == 0)
        return status;
    if (!data) {
        gk_array_free(*out);
        *out = NULL;
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "from_host: the data pointer is NULL");
    }
    status = gk_array_backend(*out)->upload(device, (*out)->buffer->data, data, nbytes);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}
