/* Copies: within a device (copy, contiguous, assign) and between devices
 * (to, to_host, item). */
#include "compute/array_impl.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>

/* A copy of a converted to dtype: in C order, or (keep_order) with a's
 * axes in memory as a's (gk_empty_like_operands). */
static gk_status converted_copy(const gk_array *a, gk_dtype dtype, bool keep_order,
                                gk_array **out)
{
    gk_device device = gk_array_device(a);
    gk_status status = keep_order
                           ? gk_empty_like_operands(device, dtype, a->ndim, a->shape, 1, &a, out)
                           : gk_empty(device, dtype, a->ndim, a->shape, out);
    if (status != GK_OK || gk_array_size(a) == 0)
        return status;
    gk_loop loop = gk_array_loop(a);
    gk_operand pair[2] = {gk_array_operand(*out), gk_array_operand(a)};
    gk_loop_in_output_order(&loop, pair, 2);
    status = gk_array_backend(a)->convert(device, &loop, &pair[0], &pair[1]);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

gk_status gk_copy_as(const gk_array *a, gk_dtype dtype, gk_array **out)
{
    return converted_copy(a, dtype, false, out);
}

gk_status gk_copy_keeping_order(const gk_array *a, gk_dtype dtype, gk_array **out)
{
    return converted_copy(a, dtype, true, out);
}

gk_status gk_widen_half(const gk_array *a, gk_array **out)
{
    return gk_dtype_is_half(a->dtype) ? gk_copy_as(a, GK_FLOAT32, out) : gk_array_view(a, out);
}

gk_status gk_narrow_to(gk_array **result, gk_dtype dtype)
{
    if (!*result || (*result)->dtype == dtype)
        return GK_OK;
    gk_array *narrow = NULL;
    gk_status status = gk_copy_as(*result, dtype, &narrow);
    gk_array_free(*result);
    *result = narrow;
    return status;
}

gk_status gk_copy(const gk_array *a, gk_array **out)
{
    return gk_copy_as(a, a->dtype, out);
}

gk_status gk_contiguous(const gk_array *a, gk_array **out)
{
    return gk_array_is_contiguous(a) ? gk_array_view(a, out) : gk_copy(a, out);
}

gk_status gk_assign(gk_array *dst, const gk_array *src)
{
    const gk_array *both[2] = {dst, src};
    gk_status status = gk_same_device(2, both, "assign");
    if (status != GK_OK)
        return status;
    gk_array *stretched;
    status = gk_broadcast_to(src, dst->ndim, dst->shape, &stretched);
    if (status != GK_OK)
        return status;
    gk_array_free(stretched);
    status = gk_check_writable(dst, "assign");
    if (status != GK_OK || gk_array_size(dst) == 0)
        return status;
    gk_loop loop = gk_array_loop(dst);
    gk_operand to = gk_array_operand(dst);
    gk_operand from = gk_broadcast_operand(src, dst->ndim, dst->shape);
    /* dst[1:] = dst[:-1]: read everything before writing anything. */
    gk_array *copy = NULL;
    if (gk_operands_conflict(&from, &to, &loop)) {
        status = gk_copy(src, &copy);
        if (status != GK_OK)
            return status;
        from = gk_broadcast_operand(copy, dst->ndim, dst->shape);
    }
    /* in dst's memory order (x.T[...] = y writes along x's rows) */
    gk_operand pair[2] = {to, from};
    gk_loop_in_output_order(&loop, pair, 2);
    status = gk_array_backend(dst)->convert(gk_array_device(dst), &loop, &pair[0], &pair[1]);
    gk_array_free(copy);
    return status;
}

gk_status gk_to_host(const gk_array *a, void *buffer, size_t size)
{
    size_t nbytes = gk_array_nbytes(a);
    if (size < nbytes)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "to_host: the buffer has %zu bytes, the array needs %zu", size, nbytes);
    if (nbytes == 0)
        return GK_OK;
    gk_array *dense;
    gk_status status = gk_contiguous(a, &dense);
    if (status != GK_OK)
        return status;
    status = gk_array_backend(dense)->download(gk_array_device(dense), buffer,
                                               (char *)dense->buffer->data + dense->offset,
                                               nbytes);
    gk_array_free(dense);
    return status;
}

gk_status gk_to(const gk_array *a, gk_device device, gk_array **out)
{
    *out = NULL;
    if (gk_device_equal(device, gk_array_device(a)))
        return gk_copy(a, out);
    gk_array *fresh;
    gk_status status = gk_empty(device, a->dtype, a->ndim, a->shape, &fresh);
    if (status != GK_OK)
        return status;
    size_t nbytes = gk_array_nbytes(a);
    void *staging = NULL;
    if (nbytes > 0 && device.kind == GK_DEVICE_CPU) {
        status = gk_to_host(a, fresh->buffer->data, nbytes); /* straight into the new array */
    } else if (nbytes > 0) {
        gk_array *dense = NULL;
        const void *source;
        if (gk_array_device(a).kind == GK_DEVICE_CPU) {
            status = gk_contiguous(a, &dense); /* host memory already */
            source = dense ? (char *)dense->buffer->data + dense->offset : NULL;
        } else {
            staging = malloc(nbytes);
            status = staging ? gk_to_host(a, staging, nbytes)
                             : gk_fail(GK_ERR_OUT_OF_MEMORY,
                                       "out of host memory to stage %zu bytes", nbytes);
            source = staging;
        }
        if (status == GK_OK)
            status = gk_array_backend(fresh)->upload(device, fresh->buffer->data, source, nbytes);
        gk_array_free(dense);
    }
    free(staging);
    if (status != GK_OK) {
        gk_array_free(fresh);
        return status;
    }
    *out = fresh;
    return GK_OK;
}

/* The bytes of one element (GK_DTYPE_MAX_SIZE at most) into `bytes`. */
static gk_status item_bytes(const gk_array *a, const int64_t *index, unsigned char *bytes)
{
    if (!index && a->ndim > 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "item: no index for an array of %d axes "
                       "(only a 0-d array's one element needs none)", a->ndim);
    int64_t offset = 0;
    for (int i = 0; i < a->ndim; i++) {
        int64_t k = index[i] < 0 ? index[i] + a->shape[i] : index[i];
        if (k < 0 || k >= a->shape[i]) {
            char shape[160];
            return gk_fail(GK_ERR_OUT_OF_RANGE,
                           "item: index %lld is out of range for axis %d of shape %s",
                           (long long)index[i], i, gk_shape_text(a->ndim, a->shape, shape,
                                                                 sizeof shape));
        }
        offset += k * a->strides[i];
    }
    size_t size = gk_dtype_size(a->dtype);
    const char *address = (const char *)a->buffer->data + a->offset + offset * (int64_t)size;
    return gk_array_backend(a)->download(gk_array_device(a), bytes, address, size);
}

gk_status gk_item(const gk_array *a, const int64_t *index, double *value)
{
    unsigned char bytes[GK_DTYPE_MAX_SIZE];
    gk_status status = item_bytes(a, index, bytes);
    if (status == GK_OK)
        *value = gk_dtype_load(a->dtype, bytes);
    return status;
}

gk_status gk_item_complex(const gk_array *a, const int64_t *index, double *re, double *im)
{
    unsigned char bytes[GK_DTYPE_MAX_SIZE];
    gk_status status = item_bytes(a, index, bytes);
    if (status == GK_OK)
        gk_dtype_load_complex(a->dtype, bytes, re, im);
    return status;
}
