/* Indexing on GPUs: gather, scatter, flatnonzero and searchsorted, each a
 * kernel of the "index" family (kernels/index.gk) run over its loop in 1-D,
 * with the CPU backend's semantics (backends/cpu/index.c). */
#include "compute/gpu/gpu.h"

#include "core/error.h"

#include <stdio.h>

static const char *const family = "index";

/* The number of elements of a loop (ndim 0: one). */
static int64_t loop_size(const gk_loop *loop)
{
    int64_t size = 1;
    for (int i = 0; i < loop->ndim; i++)
        size *= loop->shape[i];
    return size;
}

/* Gather and scatter move elements without looking at them: the program of
 * an integer dtype of the same size does it for every dtype, so four
 * programs serve all, and float64 moves on devices without fp64. 16-byte
 * elements move as pairs of int64 (the "_pair" kernels). */
static bool mover_of(gk_dtype dtype, gk_dtype *mover, const char **suffix)
{
    if ((unsigned)dtype >= GK_DTYPE_COUNT)
        return false;
    *suffix = "";
    switch (gk_dtype_size(dtype)) {
    case 1: *mover = GK_UINT8; return true;
    case 2: *mover = GK_INT16; return true;
    case 4: *mover = GK_INT32; return true;
    case 8: *mover = GK_INT64; return true;
    case 16: *mover = GK_INT64; *suffix = "_pair"; return true;
    default: return false;
    }
}

static gk_status move_along(gk_device device, const char *what, const gk_loop *loop,
                            const gk_operand *out, const gk_operand *in,
                            const gk_operand *index, int64_t axis_length, int64_t axis_stride)
{
    gk_dtype mover;
    const char *suffix;
    if (out->dtype != in->dtype || index->dtype != GK_INT64 ||
        !mover_of(out->dtype, &mover, &suffix))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "gpu: no %s kernel for %s into %s with %s "
                       "indices",
                       what, gk_dtype_name(in->dtype), gk_dtype_name(out->dtype),
                       gk_dtype_name(index->dtype));
    char kernel[32];
    snprintf(kernel, sizeof kernel, "%s%s", what, suffix);
    gk_gpu_launch launch;
    gk_gpu_launch_begin(&launch, device);
    gk_operand operands[3] = {*out, *in, *index};
    gk_gpu_arg_loop(&launch, loop, operands, 3);
    gk_gpu_arg_i64(&launch, axis_length);
    gk_gpu_arg_i64(&launch, axis_stride);
    return gk_gpu_run_items(&launch, family, mover, kernel, loop_size(loop));
}

gk_status gpu_gather(gk_device device, const gk_loop *loop, const gk_operand *out,
                     const gk_operand *in, const gk_operand *index, int64_t axis_length,
                     int64_t axis_stride)
{
    return move_along(device, "index_gather", loop, out, in, index, axis_length, axis_stride);
}

gk_status gpu_scatter(gk_device device, const gk_loop *loop, const gk_operand *out,
                      const gk_operand *in, const gk_operand *index, int64_t axis_length,
                      int64_t axis_stride)
{
    return move_along(device, "index_scatter", loop, out, in, index, axis_length, axis_stride);
}

/* The mask's inclusive cumulative sum (the backend's sum scan, into a
 * temporary int64 buffer) says where each true position goes; a second
 * kernel writes them there. */
gk_status gpu_flatnonzero(gk_device device, const gk_operand *mask, int64_t n,
                          const gk_operand *out)
{
    if (mask->dtype != GK_BOOL || out->dtype != GK_INT64)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "gpu: flatnonzero of %s into %s",
                       gk_dtype_name(mask->dtype), gk_dtype_name(out->dtype));
    if (n <= 0)
        return GK_OK;
    void *ends;
    gk_status status = gk_gpu_alloc(device, (size_t)n * sizeof(int64_t), &ends);
    if (status != GK_OK)
        return status;
    const gk_loop one_row = {0, {0}};
    const gk_operand scan = {ends, GK_INT64, {0}};
    status = gpu_scan(device, GK_SUM, &one_row, &scan, mask, n, 1, 1);
    if (status == GK_OK) {
        gk_gpu_launch launch;
        gk_gpu_launch_begin(&launch, device);
        gk_gpu_arg_array(&launch, out->data, GK_INT64);
        gk_gpu_arg_array(&launch, mask->data, GK_BOOL);
        gk_gpu_arg_array(&launch, ends, GK_INT64);
        gk_gpu_arg_i64(&launch, n);
        status = gk_gpu_run_items(&launch, family, GK_BOOL, "index_flatnonzero", n);
    }
    /* Pool blocks are reused in stream order, so the queued kernels still
     * read this buffer before anything else writes it. */
    gk_gpu_release(device, ends, (size_t)n * sizeof(int64_t));
    return status;
}

gk_status gpu_searchsorted(gk_device device, const gk_loop *loop, const gk_operand *out,
                           const gk_operand *values, const gk_operand *sorted, int64_t n,
                           int64_t sorted_stride, bool right)
{
    if ((unsigned)values->dtype >= GK_DTYPE_COUNT || sorted->dtype != values->dtype ||
        out->dtype != GK_INT64)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "gpu: searchsorted of %s values in %s into %s",
                       gk_dtype_name(values->dtype), gk_dtype_name(sorted->dtype),
                       gk_dtype_name(out->dtype));
    gk_status refused = gk_gpu_refuse_half("searchsorted", values->dtype);
    if (refused != GK_OK)
        return refused;
    if (values->dtype == GK_FLOAT64) {
        const gk_gpu_info *info;
        gk_status status = gk_gpu_info_of(device, &info);
        if (status != GK_OK)
            return status;
        if (!info->fp64) {
            char name[GK_DEVICE_NAME_MAX];
            return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                           "searchsorted: %s does not support float64 (no double precision): "
                           "use float32 arrays there, or another device",
                           gk_device_name(device, name, sizeof name));
        }
    }
    gk_gpu_launch launch;
    gk_gpu_launch_begin(&launch, device);
    gk_operand operands[2] = {*out, *values};
    gk_gpu_arg_loop(&launch, loop, operands, 2);
    gk_gpu_arg_array(&launch, sorted->data, sorted->dtype);
    gk_gpu_arg_i64(&launch, n);
    gk_gpu_arg_i64(&launch, sorted_stride);
    gk_gpu_arg_i64(&launch, right);
    return gk_gpu_run_items(&launch, family, values->dtype, "index_searchsorted",
                            loop_size(loop));
}
