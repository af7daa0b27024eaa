/* Sorting rows on a GPU: a stable merge sort (kernels/sort.gk).
 *
 * sort_blocks reads the input once and sorts segments of up to the group
 * size in local memory (short rows whole, several a group); rows longer
 * than that then take one merge_pass per doubling of the sorted run length,
 * ping-ponging between two buffers. The pass count is known up front, so
 * the first buffer is picked to make the last pass land in the output;
 * temporaries come from the device's pool (freed blocks are reused only by
 * later work on the same in-order stream, so they may be released as soon
 * as the launches are queued).
 *
 * argsort carries each element's index in its row (int64) with its key;
 * sort moves the keys alone (the merges are stable by construction). The
 * order is the CPU's (backends/cpu/sort.c), -0.0 included: value sorts of
 * rows the CPU radix sorts (CPU_RADIX_MIN) put -0.0 before 0.0. */
#include "compute/backends/cpu/cpu.h" /* CPU_RADIX_MIN */
#include "compute/gpu/gpu.h"

#include "core/error.h"

/* The most groups one launch asks for; the kernel strides over the rest. */
enum { MAX_GROUPS = 65535 };

/* The largest power of two <= the device's group size (and <= 256, the
 * kernels' local arrays). */
static int64_t block_size(gk_device device)
{
    size_t group = gk_gpu_group_size(device);
    int64_t block = 1;
    while (block * 2 <= (int64_t)group && block * 2 <= 256)
        block *= 2;
    return block;
}

/* A temporary from the device's pool. */
static gk_status scratch(gk_device device, size_t bytes, char **address)
{
    void *data = NULL;
    gk_status status = gk_gpu_alloc(device, bytes, &data);
    *address = data;
    return status;
}

gk_status gpu_sort(gk_device device, const gk_operand *values, const gk_operand *indices,
                   const gk_operand *in, int64_t rows, int64_t length)
{
    gk_dtype dtype = in->dtype;
    if ((unsigned)dtype >= GK_DTYPE_COUNT)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "sort: invalid dtype %d", (int)dtype);
    gk_status refused = gk_gpu_refuse_half("sort", dtype);
    if (refused != GK_OK)
        return refused;
    if (rows <= 0 || length <= 0 || (!values && !indices))
        return GK_OK;
    size_t size = gk_dtype_size(dtype);
    int64_t total = rows * length;
    bool with_index = indices != NULL;
    int64_t signed_zero = !with_index && (dtype == GK_FLOAT32 || dtype == GK_FLOAT64) &&
                          length >= CPU_RADIX_MIN * (size > 4 ? 4 : 1);

    /* Segments sorted in local memory: whole rows when they fit. */
    int64_t block = block_size(device);
    int64_t segment = block;
    while (segment / 2 >= length)
        segment /= 2;
    int64_t passes = 0;
    for (int64_t width = segment; width < length; width *= 2)
        passes++;

    /* Buffers: sort_blocks writes keys[0] (and index[0]); pass p reads
     * [p % 2] and writes the other, so the output is buffer [passes % 2].
     * The second buffer of each is needed only when there are passes. */
    char *keys[2] = {NULL, NULL}, *index[2] = {NULL, NULL};
    size_t key_bytes = (size_t)total * size, index_bytes = (size_t)total * sizeof(int64_t);
    int last = (int)(passes % 2), other = 1 - last;
    gk_status status = GK_OK;
    if (!with_index) {
        keys[last] = values->data;
        if (passes > 0)
            status = scratch(device, key_bytes, &keys[other]);
    } else {
        /* argsort: the keys are scratch. */
        index[last] = indices->data;
        if (passes > 0)
            status = scratch(device, index_bytes, &index[other]);
        for (int s = 0; s < (passes > 0 ? 2 : 1) && status == GK_OK; s++)
            status = scratch(device, key_bytes, &keys[s]);
    }

    if (status == GK_OK) {
        /* Index buffers are not touched without argsort: pass the keys. */
        char *index0 = with_index ? index[0] : keys[0];
        int64_t per_group = block / segment;
        int64_t segments = rows * ((length + segment - 1) / segment);
        int64_t groups = (segments + per_group - 1) / per_group;
        size_t grid[3] = {(size_t)(groups < MAX_GROUPS ? groups : MAX_GROUPS), 1, 1};
        size_t local[3] = {(size_t)block, 1, 1};
        gk_gpu_launch launch;
        gk_gpu_launch_begin(&launch, device);
        gk_gpu_arg_array(&launch, in->data, dtype);
        gk_gpu_arg_array(&launch, keys[0], dtype);
        gk_gpu_arg_array(&launch, index0, GK_INT64);
        gk_gpu_arg_i64(&launch, rows);
        gk_gpu_arg_i64(&launch, length);
        gk_gpu_arg_i64(&launch, segment);
        gk_gpu_arg_i64(&launch, with_index);
        gk_gpu_arg_i64(&launch, signed_zero);
        status = gk_gpu_run_groups(&launch, "sort", dtype, "sort_blocks", grid, local);
    }

    int from = 0;
    for (int64_t width = segment; status == GK_OK && width < length; width *= 2) {
        int to = 1 - from;
        gk_gpu_launch launch;
        gk_gpu_launch_begin(&launch, device);
        gk_gpu_arg_array(&launch, keys[from], dtype);
        gk_gpu_arg_array(&launch, with_index ? index[from] : keys[from], GK_INT64);
        gk_gpu_arg_array(&launch, keys[to], dtype);
        gk_gpu_arg_array(&launch, with_index ? index[to] : keys[to], GK_INT64);
        gk_gpu_arg_i64(&launch, total);
        gk_gpu_arg_i64(&launch, length);
        gk_gpu_arg_i64(&launch, width);
        gk_gpu_arg_i64(&launch, with_index);
        gk_gpu_arg_i64(&launch, signed_zero);
        status = gk_gpu_run_items(&launch, "sort", dtype, "merge_pass", total);
        from = to;
    }

    /* The temporaries: everything but the output. */
    for (int s = 0; s < 2; s++) {
        if (keys[s] && (with_index || s != last))
            gk_gpu_release(device, keys[s], key_bytes);
        if (index[s] && s != last)
            gk_gpu_release(device, index[s], index_bytes);
    }
    return status;
}
