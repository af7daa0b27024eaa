/* Arrays: memory shared by views, shapes and strides, and the views
 * themselves (reshape, transpose, slice, broadcast). No element is touched
 * here except by reshape's fallback copy. */
#include "compute/array_impl.h"

#include "compute/gpu/driver.h"
#include "core/error.h"
#include "ext/cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- properties --- */

int gk_array_ndim(const gk_array *a) { return a->ndim; }
const int64_t *gk_array_shape(const gk_array *a) { return a->shape; }
const int64_t *gk_array_strides(const gk_array *a) { return a->strides; }
gk_dtype gk_array_dtype(const gk_array *a) { return a->dtype; }
gk_device gk_array_device(const gk_array *a) { return a->buffer->device; }
int64_t gk_array_size(const gk_array *a) { return gk_shape_size(a->ndim, a->shape); }

size_t gk_array_nbytes(const gk_array *a)
{
    return (size_t)gk_array_size(a) * gk_dtype_size(a->dtype);
}

bool gk_array_is_contiguous(const gk_array *a)
{
    int64_t expected = 1;
    for (int i = a->ndim - 1; i >= 0; i--) {
        if (a->shape[i] != 1 && a->strides[i] != expected)
            return a->shape[i] == 0 || gk_array_size(a) == 0;
        expected *= a->shape[i];
    }
    return true;
}

const gk_backend *gk_array_backend(const gk_array *a)
{
    return a->buffer->backend;
}

/* --- lifetime --- */

/* Before memory that other libraries saw leaves gpukit, their work and
 * ours on it must be done: a device's streams are ordered against each
 * other only where someone orders them. Both waits are made in a free,
 * so the message of an error the caller is about to report is kept. */
static void wait_for_others(gk_buffer *buffer)
{
    int sharing = atomic_load_explicit(&buffer->sharing, memory_order_acquire);
    bool foreign = !buffer->owned && buffer->release;
    if ((!sharing && !foreign) || buffer->device.kind != GK_DEVICE_CUDA)
        return;
    char *message = strdup(gk_last_error());
    const gk_gpu_driver *cuda = &gk_cuda_driver;
    if (foreign) {
        /* The producer reuses its memory as soon as it has it back, on
         * its own streams, which know nothing of gpukit's. */
        cuda->synchronize(buffer->device);
    } else {
        /* The consumer's work queued on the legacy stream comes before
         * gpukit's next use of the memory (no host wait); work on any
         * other stream is waited for on the host. */
        gk_status status = GK_ERR_INVALID_ARGUMENT;
        if (sharing == GK_SHARED_LEGACY_STREAM)
            status = cuda->stream_order(buffer->device, NULL, (gk_gpu_stream *)(uintptr_t)1);
        if (status != GK_OK)
            cuda->device_synchronize(buffer->device);
    }
    if (message)
        gk_fail(GK_OK, "%s", message);
    free(message);
}

void gk_array_share(const gk_array *a, uintptr_t stream)
{
    if (a && a->buffer->device.kind == GK_DEVICE_CUDA)
        atomic_fetch_or_explicit(&a->buffer->sharing,
                                 stream == 1 ? GK_SHARED_LEGACY_STREAM : GK_SHARED_ANY_STREAM,
                                 memory_order_release);
}

void gk_array_free(gk_array *a)
{
    if (!a)
        return;
    gk_buffer *buffer = a->buffer;
    if (atomic_fetch_sub_explicit(&buffer->refs, 1, memory_order_acq_rel) == 1) {
        wait_for_others(buffer);
        if (buffer->owned)
            buffer->backend->release(buffer->device, buffer->data, buffer->bytes);
        else if (buffer->release)
            buffer->release(buffer->context);
        free(buffer);
    }
    free(a);
}

gk_status gk_array_view(const gk_array *a, gk_array **out)
{
    gk_array *view = malloc(sizeof *view);
    if (!view)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of host memory for an array view");
    *view = *a;
    atomic_fetch_add_explicit(&view->buffer->refs, 1, memory_order_relaxed);
    *out = view;
    return GK_OK;
}

int64_t gk_shape_size(int ndim, const int64_t *shape)
{
    int64_t size = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] != 0 && size > INT64_MAX / shape[i])
            return -1;
        size *= shape[i];
    }
    return size;
}

const char *gk_shape_text(int ndim, const int64_t *shape, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "",
                                 (long long)shape[i]);
    if (used < size)
        snprintf(buf + used, size - used, ndim == 1 ? ",)" : ")");
    return buf;
}

/* memcpy, except that a 0-d shape may be NULL. */
static void copy_shape(int64_t *to, const int64_t *from, int ndim)
{
    if (ndim > 0)
        memcpy(to, from, sizeof *from * (size_t)ndim);
}

static void set_contiguous_strides(gk_array *a)
{
    int64_t stride = 1;
    for (int i = a->ndim - 1; i >= 0; i--) {
        a->strides[i] = stride;
        stride *= a->shape[i] ? a->shape[i] : 1;
    }
}

/* A shape of dtype elements that can exist: 0 to GK_MAX_DIMS axes, no
 * negative length, and a byte size that fits (with room to round up). */
static gk_status check_array(int ndim, const int64_t *shape, gk_dtype dtype, const char *what)
{
    if (gk_dtype_size(dtype) == 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: invalid dtype %d", what, (int)dtype);
    if (ndim < 0 || ndim > GK_MAX_DIMS)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: %d dimensions; arrays have 0 to %d", what,
                       ndim, GK_MAX_DIMS);
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: negative length %lld on axis %d", what,
                           (long long)shape[i], i);
    /* The product of the lengths other than 0 must fit, as in NumPy: an
     * empty array's other lengths are no more than a full one's could be
     * (and so no product of them overflows later). */
    int64_t extent = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] > 0 && extent > INT64_MAX / shape[i])
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the shape has too many elements", what);
        extent *= shape[i] > 0 ? shape[i] : 1;
    }
    if ((uint64_t)extent > (SIZE_MAX / 4) / gk_dtype_size(dtype))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the shape has too many elements", what);
    return GK_OK;
}

/* An array handle of `shape` and its (zeroed) buffer, for the caller to
 * fill in: the one place both are allocated. */
static gk_status new_handles(gk_dtype dtype, int ndim, const int64_t *shape, gk_array **a,
                             gk_buffer **buffer)
{
    gk_array *handle = calloc(1, sizeof *handle);
    gk_buffer *memory = calloc(1, sizeof *memory);
    *a = NULL;
    *buffer = NULL;
    if (!handle || !memory) {
        free(handle);
        free(memory);
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of host memory for an array");
    }
    handle->dtype = dtype;
    handle->ndim = ndim;
    copy_shape(handle->shape, shape, ndim);
    *a = handle;
    *buffer = memory;
    return GK_OK;
}

/* Refuses complex arrays on a device that cannot compute them (complex128
 * without double precision). float64 there is not refused here (such
 * arrays may still be made and moved; their kernels refuse them), which is
 * why only complex dtypes ask the backend. */
static gk_status check_device_dtype(gk_device device, gk_dtype dtype, const char *what)
{
    if (!gk_dtype_is_complex(dtype))
        return GK_OK;
    bool has = true;
    gk_status status = gk_backend_of(device.kind)->has_dtype(device, dtype, &has);
    if (status != GK_OK || has)
        return status;
    char name[GK_DEVICE_NAME_MAX];
    return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                   "%s: %s does not support %s (no double precision); use complex64 there, "
                   "or compute on the CPU: x.to(\"cpu\")",
                   what, gk_device_name(device, name, sizeof name), gk_dtype_name(dtype));
}

/* A contiguous array over fresh memory from the device's backend (owned).
 * Shape and dtype are already checked. */
static gk_status new_array(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                           gk_array **out)
{
    const gk_backend *backend = gk_backend_of(device.kind);
    gk_status status = check_device_dtype(device, dtype, "array");
    if (status != GK_OK)
        return status;
    gk_array *a;
    gk_buffer *buffer;
    if (new_handles(dtype, ndim, shape, &a, &buffer) != GK_OK)
        return GK_ERR_OUT_OF_MEMORY;
    set_contiguous_strides(a);
    size_t bytes = (size_t)gk_shape_size(ndim, shape) * gk_dtype_size(dtype);
    *buffer = (gk_buffer){device, backend, NULL, bytes, 0, true, NULL, NULL, 0};
    atomic_init(&buffer->refs, 1);
    status = backend->alloc(device, bytes, &buffer->data);
    if (status != GK_OK) {
        free(a);
        free(buffer);
        return status;
    }
    a->buffer = buffer;
    *out = a;
    return GK_OK;
}

gk_status gk_empty(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                   gk_array **out)
{
    *out = NULL;
    gk_status status = check_array(ndim, shape, dtype, "empty");
    if (status == GK_OK)
        status = gk_device_check(device);
    return status == GK_OK ? new_array(device, dtype, ndim, shape, out) : status;
}

/* a's axes from outermost to innermost in memory: by |stride|, largest
 * first, ties (and length-1 axes, whose strides mean nothing, which go
 * first) in their order. */
static void axes_in_memory_order(int ndim, const int64_t *shape, const int64_t *strides, int *order)
{
    for (int i = 0; i < ndim; i++) {
        int axis = i, j = i;
        int64_t key = shape[axis] == 1 ? INT64_MAX : llabs(strides[axis]);
        for (; j > 0; j--) {
            int before = order[j - 1];
            int64_t key_before = shape[before] == 1 ? INT64_MAX : llabs(strides[before]);
            if (key_before >= key)
                break;
            order[j] = before;
        }
        order[j] = axis;
    }
}

/* Whether the axes longer than 1 come in the same relative order in both. */
static bool same_order(int ndim, const int64_t *shape, const int *a, const int *b)
{
    for (int i = 0, j = 0;; i++, j++) {
        while (i < ndim && shape[a[i]] == 1)
            i++;
        while (j < ndim && shape[b[j]] == 1)
            j++;
        if (i == ndim || j == ndim)
            return i == ndim && j == ndim;
        if (a[i] != b[j])
            return false;
    }
}

gk_status gk_empty_like_operands(gk_device device, gk_dtype dtype, int ndim,
                                 const int64_t *shape, int count,
                                 const gk_array *const *operands, gk_array **out)
{
    int order[GK_MAX_DIMS] = {0}, c_order[GK_MAX_DIMS] = {0}, theirs[GK_MAX_DIMS] = {0};
    for (int i = 0; i < ndim; i++)
        c_order[i] = i;
    bool found = false, agree = true;
    for (int k = 0; k < count && agree; k++) {
        const gk_array *a = operands[k];
        bool spans = a->ndim == ndim;
        for (int i = 0; spans && i < ndim; i++)
            spans = a->shape[i] == shape[i] && (a->strides[i] != 0 || shape[i] == 1);
        if (!spans)
            continue;
        axes_in_memory_order(ndim, shape, a->strides, found ? theirs : order);
        agree = !found || same_order(ndim, shape, order, theirs);
        found = true;
    }
    if (!found || !agree || same_order(ndim, shape, order, c_order))
        return gk_empty(device, dtype, ndim, shape, out);
    int64_t laid_out[GK_MAX_DIMS] = {0};
    for (int i = 0; i < ndim; i++)
        laid_out[i] = shape[order[i]];
    gk_status status = gk_empty(device, dtype, ndim, laid_out, out);
    if (status != GK_OK)
        return status;
    /* the same memory seen with the axes back in their places */
    gk_array *a = *out;
    int64_t strides[GK_MAX_DIMS];
    for (int i = 0; i < ndim; i++)
        strides[order[i]] = a->strides[i];
    memcpy(a->shape, shape, sizeof(int64_t) * (size_t)ndim);
    memcpy(a->strides, strides, sizeof(int64_t) * (size_t)ndim);
    return GK_OK;
}

void gk_loop_in_output_order(gk_loop *loop, gk_operand *operands, int count)
{
    int order[GK_MAX_DIMS];
    axes_in_memory_order(loop->ndim, loop->shape, operands[0].strides, order);
    gk_loop moved = *loop;
    for (int i = 0; i < loop->ndim; i++)
        moved.shape[i] = loop->shape[order[i]];
    *loop = moved;
    for (int k = 0; k < count; k++) {
        int64_t strides[GK_MAX_DIMS];
        for (int i = 0; i < loop->ndim; i++)
            strides[i] = operands[k].strides[order[i]];
        memcpy(operands[k].strides, strides, sizeof(int64_t) * (size_t)loop->ndim);
    }
}

/* The bytes an array of `shape` and `strides` (elements) reaches below and
 * above its element [0, ...]: *down <= 0 to the lowest element's first
 * byte, *up >= 0 to the highest element's first byte. False when they do
 * not fit in the address space (a stride too large for its axis). */
static bool stride_reach(int ndim, const int64_t *shape, const int64_t *strides, size_t size,
                         int64_t *down, int64_t *up)
{
    /* Each axis may reach at most a GK_MAX_DIMS-th of INT64_MAX, so the
     * sums cannot overflow either. */
    const int64_t limit = INT64_MAX / GK_MAX_DIMS;
    *down = *up = 0;
    for (int i = 0; i < ndim; i++) {
        int64_t steps = shape[i] - 1; /* the shape is not empty: shape[i] >= 1 */
        int64_t stride = strides[i];
        if (steps == 0 || stride == 0)
            continue;
        uint64_t magnitude = stride < 0 ? 0 - (uint64_t)stride : (uint64_t)stride;
        if (magnitude > (uint64_t)limit / size / (uint64_t)steps)
            return false;
        int64_t reach = (int64_t)(magnitude * size) * steps;
        if (stride < 0)
            *down -= reach;
        else
            *up += reach;
    }
    return true;
}

gk_status gk_wrap(gk_device device, gk_dtype dtype, int ndim, const int64_t *shape,
                  const int64_t *strides, void *data, void (*release)(void *context),
                  void *context, gk_array **out)
{
    *out = NULL;
    gk_status status = check_array(ndim, shape, dtype, "wrap");
    if (status != GK_OK)
        return status;
    char name[GK_DEVICE_NAME_MAX];
    if (device.kind != GK_DEVICE_CPU && device.kind != GK_DEVICE_CUDA)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "wrap: memory on %s cannot be wrapped: only CPU and CUDA addresses are "
                       "plain pointers (copy the data instead)",
                       gk_device_name(device, name, sizeof name));
    status = gk_device_check(device);
    if (status == GK_OK)
        status = check_device_dtype(device, dtype, "wrap");
    if (status != GK_OK)
        return status;
    size_t size = gk_dtype_size(dtype);
    int64_t count = gk_shape_size(ndim, shape);
    int64_t down = 0, up = 0;
    if (count > 0) {
        if (!data)
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "wrap: the data pointer is NULL");
        /* Every loop (and the compilers' vectorised ones) takes elements to
         * sit at multiples of their size. */
        if ((uintptr_t)data % size != 0)
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "wrap: the data address %p is not a multiple of the element size "
                           "(%zu bytes); copy the data instead",
                           data, size);
        if (strides && !stride_reach(ndim, shape, strides, size, &down, &up))
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "wrap: the strides reach beyond the address space");
        if (!strides)
            up = (count - 1) * (int64_t)size;
        /* Every byte from data + down to data + up + size must be an
         * address: no wrapping around either end. */
        uintptr_t base = (uintptr_t)data;
        if (base < (uintptr_t)-down || UINTPTR_MAX - base < (uintptr_t)up + size)
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "wrap: the strides reach beyond the address space");
    }
    gk_array *a;
    gk_buffer *buffer;
    if (new_handles(dtype, ndim, shape, &a, &buffer) != GK_OK)
        return GK_ERR_OUT_OF_MEMORY;
    if (strides)
        copy_shape(a->strides, strides, ndim);
    else
        set_contiguous_strides(a);
    /* The buffer starts at the lowest byte an element occupies, so offsets
     * (which views only ever add to) stay non-negative. */
    a->offset = (size_t)-down;
    buffer->device = device;
    buffer->backend = gk_backend_of(device.kind);
    buffer->data = (char *)data + down;
    buffer->bytes = count > 0 ? (size_t)(up - down) + size : 0;
    buffer->owned = false;
    buffer->release = release;
    buffer->context = context;
    atomic_init(&buffer->refs, 1);
    a->buffer = buffer;
    *out = a;
    return GK_OK;
}

gk_status gk_wrap_host(gk_dtype dtype, int ndim, const int64_t *shape, void *data,
                       gk_array **out)
{
    return gk_wrap(gk_device_cpu(), dtype, ndim, shape, NULL, data, NULL, NULL, out);
}

void *gk_array_data(const gk_array *a)
{
    return (char *)a->buffer->data + a->offset;
}

gk_status gk_cuda_pointer_device(const void *data, gk_device *device)
{
    const gk_cuda *cuda;
    gk_status status = gk_cuda_open(&cuda);
    if (status != GK_OK)
        return status;
    int ordinal = -1;
    CUresult r = cuda->PointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                           (CUdeviceptr)(uintptr_t)data);
    if (r != CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "%p is not a CUDA device pointer", data);
        gk_cuda_fail(r, what);
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s", gk_last_error());
    }
    *device = (gk_device){GK_DEVICE_CUDA, ordinal, 0};
    return GK_OK;
}

gk_status gk_cuda_stream_wait(gk_device device, uintptr_t stream)
{
    if (device.kind != GK_DEVICE_CUDA)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "cuda_stream_wait: not a CUDA device");
    if (stream == 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "cuda_stream_wait: stream 0 is ambiguous; use 1 for the legacy default "
                       "stream or 2 for the per-thread default stream");
    /* A foreign CUstream handle is what the driver layer's streams are. */
    return gk_cuda_driver.stream_synchronize(device, (gk_gpu_stream *)stream);
}

/* --- operands --- */

gk_operand gk_array_operand(const gk_array *a)
{
    gk_operand operand = {(char *)a->buffer->data + a->offset, a->dtype, {0}};
    memcpy(operand.strides, a->strides, sizeof a->strides);
    return operand;
}

gk_loop gk_array_loop(const gk_array *a)
{
    gk_loop loop = {a->ndim, {0}};
    memcpy(loop.shape, a->shape, sizeof a->shape);
    return loop;
}

gk_operand gk_broadcast_operand(const gk_array *a, int ndim, const int64_t *shape)
{
    gk_operand operand = {(char *)a->buffer->data + a->offset, a->dtype, {0}};
    int skip = ndim - a->ndim;
    for (int i = 0; i < a->ndim; i++)
        operand.strides[skip + i] = a->shape[i] == shape[skip + i] ? a->strides[i] : 0;
    return operand;
}

gk_status gk_broadcast_shapes(int count, const gk_array *const *arrays, int *ndim,
                              int64_t *shape)
{
    int n = 0;
    for (int k = 0; k < count; k++)
        n = arrays[k]->ndim > n ? arrays[k]->ndim : n;
    for (int i = 0; i < n; i++)
        shape[i] = 1;
    for (int k = 0; k < count; k++) {
        const gk_array *a = arrays[k];
        for (int i = 0; i < a->ndim; i++) {
            int64_t *target = &shape[n - a->ndim + i];
            if (a->shape[i] == *target || a->shape[i] == 1)
                continue;
            if (*target == 1) {
                *target = a->shape[i];
                continue;
            }
            char text[512] = "shapes";
            for (int j = 0; j < count; j++) {
                char one[160];
                gk_shape_text(arrays[j]->ndim, arrays[j]->shape, one, sizeof one);
                snprintf(text + strlen(text), sizeof text - strlen(text), "%s %s",
                         j == 0 ? "" : j == count - 1 ? " and" : ",", one);
            }
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s do not broadcast (axis %d: %lld vs %lld)",
                           text, i - a->ndim, (long long)*target, (long long)a->shape[i]);
        }
    }
    *ndim = n;
    return GK_OK;
}

gk_status gk_same_device(int count, const gk_array *const *arrays, const char *what)
{
    for (int k = 1; k < count; k++) {
        if (!gk_device_equal(arrays[k]->buffer->device, arrays[0]->buffer->device)) {
            char a[GK_DEVICE_NAME_MAX], b[GK_DEVICE_NAME_MAX];
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "%s: operands are on different devices (%s and %s); move one to the "
                           "other's first (x.to(device) in Python, gk_to() in C)",
                           what, gk_device_name(arrays[0]->buffer->device, a, sizeof a),
                           gk_device_name(arrays[k]->buffer->device, b, sizeof b));
        }
    }
    return GK_OK;
}

gk_status gk_check_vector_axis(const gk_array *a, const gk_array *b, int axis, const char *what)
{
    if (axis < 0 || a->ndim == b->ndim)
        return GK_OK;
    char sa[160], sb[160];
    return gk_fail(GK_ERR_INVALID_ARGUMENT,
                   "%s: axis %d of shapes %s and %s is ambiguous: NumPy counts it in each "
                   "operand, the standard only from the end; give a negative axis, which names "
                   "the same axis of both",
                   what, axis, gk_shape_text(a->ndim, a->shape, sa, sizeof sa),
                   gk_shape_text(b->ndim, b->shape, sb, sizeof sb));
}

gk_status gk_normalize_axis(const gk_array *a, int axis, int *normalized)
{
    if (axis < -a->ndim || axis >= a->ndim) {
        char shape[160];
        return gk_fail(GK_ERR_AXIS, "axis %d is out of range for shape %s (%d-d)",
                       axis, gk_shape_text(a->ndim, a->shape, shape, sizeof shape), a->ndim);
    }
    *normalized = axis < 0 ? axis + a->ndim : axis;
    return GK_OK;
}

/* The byte range [*low, *high) the elements of `a` (as `operand` over `loop`)
 * occupy. */
static void extent(const gk_operand *operand, size_t size, const gk_loop *loop, uintptr_t *low,
                   uintptr_t *high)
{
    uintptr_t base = (uintptr_t)operand->data;
    intptr_t down = 0, up = 0;
    for (int i = 0; i < loop->ndim; i++) {
        intptr_t reach = (intptr_t)((loop->shape[i] - 1) * operand->strides[i] * (int64_t)size);
        if (reach < 0)
            down += reach;
        else
            up += reach;
    }
    *low = base + (uintptr_t)down; /* wraps as intended for negative reach */
    *high = base + (uintptr_t)up + size;
}

bool gk_operands_conflict(const gk_operand *in, const gk_operand *out, const gk_loop *loop)
{
    size_t in_size = gk_dtype_size(in->dtype), out_size = gk_dtype_size(out->dtype);
    uintptr_t in_low, in_high, out_low, out_high;
    extent(in, in_size, loop, &in_low, &in_high);
    extent(out, out_size, loop, &out_low, &out_high);
    if (in_high <= out_low || out_high <= in_low)
        return false;
    if (in->data != out->data || in_size != out_size)
        return true;
    for (int i = 0; i < loop->ndim; i++)
        if (loop->shape[i] > 1 && in->strides[i] != out->strides[i])
            return true;
    return false;
}

bool gk_array_is_writable(const gk_array *a)
{
    /* An axis of length > 1 over one element; with no elements at all
     * (NumPy gives empty arrays zero strides) there is none to repeat. */
    bool stretched = false;
    for (int i = 0; i < a->ndim; i++)
        stretched |= a->shape[i] > 1 && a->strides[i] == 0;
    return !a->read_only && (!stretched || gk_array_size(a) == 0);
}

gk_status gk_check_writable(const gk_array *out, const char *what)
{
    if (!gk_array_is_writable(out)) {
        char text[160];
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s: the output (shape %s) is a view of a broadcast array, whose "
                       "elements stand for many, and cannot be written; write into a copy",
                       what, gk_shape_text(out->ndim, out->shape, text, sizeof text));
    }
    return GK_OK;
}

gk_status gk_check_out(const gk_array *out, int ndim, const int64_t *shape, gk_dtype dtype,
                       gk_device device, const char *what)
{
    char want[160], have[160], a[GK_DEVICE_NAME_MAX], b[GK_DEVICE_NAME_MAX];
    if (out->ndim != ndim || memcmp(out->shape, shape, sizeof *shape * (size_t)ndim) != 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the output has shape %s, the result %s",
                       what, gk_shape_text(out->ndim, out->shape, have, sizeof have),
                       gk_shape_text(ndim, shape, want, sizeof want));
    if (out->dtype != dtype)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the output is %s, the result %s", what,
                       gk_dtype_name(out->dtype), gk_dtype_name(dtype));
    if (!gk_device_equal(out->buffer->device, device))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the output is on %s, the operands on %s",
                       what, gk_device_name(out->buffer->device, a, sizeof a),
                       gk_device_name(device, b, sizeof b));
    return GK_OK;
}

/* --- views --- */

gk_status gk_transpose(const gk_array *a, const int *axes, gk_array **out)
{
    *out = NULL;
    int order[GK_MAX_DIMS];
    bool seen[GK_MAX_DIMS] = {false};
    for (int i = 0; i < a->ndim; i++) {
        order[i] = axes ? axes[i] : a->ndim - 1 - i;
        if (order[i] < 0 || order[i] >= a->ndim || seen[order[i]])
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "transpose: the axes are not a permutation of 0..%d", a->ndim - 1);
        seen[order[i]] = true;
    }
    gk_status status = gk_array_view(a, out);
    if (status != GK_OK)
        return status;
    for (int i = 0; i < a->ndim; i++) {
        (*out)->shape[i] = a->shape[order[i]];
        (*out)->strides[i] = a->strides[order[i]];
    }
    return GK_OK;
}

gk_status gk_matrix_transpose(const gk_array *a, gk_array **out)
{
    *out = NULL;
    if (a->ndim < 2) {
        char shape[160];
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "matrix_transpose: takes a stack of matrices (at least 2 axes), not "
                       "shape %s",
                       gk_shape_text(a->ndim, a->shape, shape, sizeof shape));
    }
    int axes[GK_MAX_DIMS];
    for (int i = 0; i < a->ndim; i++)
        axes[i] = i;
    axes[a->ndim - 2] = a->ndim - 1;
    axes[a->ndim - 1] = a->ndim - 2;
    return gk_transpose(a, axes, out);
}

gk_status gk_slice(const gk_array *a, int axis, int64_t start, int64_t stop, int64_t step,
                   gk_array **out)
{
    *out = NULL;
    int ax;
    gk_status status = gk_normalize_axis(a, axis, &ax);
    if (status != GK_OK)
        return status;
    if (step == 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "slice: the step may not be 0");
    /* Python's slice.indices(): negative from the end, then clamped. */
    int64_t n = a->shape[ax];
    /* A step as long as the axis or longer takes at most one element, as
     * any longer one does: bounded so, no sum or product below overflows. */
    int64_t longest = n > 0 ? n : 1;
    step = step > longest ? longest : step < -longest ? -longest : step;
    if (start < 0)
        start += n;
    if (stop < 0)
        stop += n;
    int64_t low = step > 0 ? 0 : -1, high = step > 0 ? n : n - 1;
    start = start < low ? low : start > high ? high : start;
    stop = stop < low ? low : stop > high ? high : stop;
    int64_t length = step > 0 ? (stop > start ? (stop - start + step - 1) / step : 0)
                              : (start > stop ? (start - stop - step - 1) / -step : 0);
    status = gk_array_view(a, out);
    if (status != GK_OK)
        return status;
    if (length > 0)
        (*out)->offset += (size_t)(start * a->strides[ax] * (int64_t)gk_dtype_size(a->dtype));
    (*out)->shape[ax] = length;
    (*out)->strides[ax] = a->strides[ax] * step;
    return GK_OK;
}

gk_status gk_broadcast_to(const gk_array *a, int ndim, const int64_t *shape, gk_array **out)
{
    *out = NULL;
    gk_status status = check_array(ndim, shape, a->dtype, "broadcast_to");
    if (status != GK_OK)
        return status;
    bool fits = ndim >= a->ndim;
    for (int i = 0; fits && i < a->ndim; i++) {
        int64_t target = shape[ndim - a->ndim + i];
        fits = a->shape[i] == target || a->shape[i] == 1;
    }
    if (!fits) {
        char from[160], to[160];
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "cannot broadcast shape %s to %s",
                       gk_shape_text(a->ndim, a->shape, from, sizeof from),
                       gk_shape_text(ndim, shape, to, sizeof to));
    }
    gk_operand operand = gk_broadcast_operand(a, ndim, shape);
    status = gk_array_view(a, out);
    if (status != GK_OK)
        return status;
    (*out)->ndim = ndim;
    copy_shape((*out)->shape, shape, ndim);
    memcpy((*out)->strides, operand.strides, sizeof operand.strides);
    for (int i = 0; i < ndim; i++)
        (*out)->read_only |= shape[i] > 1 && operand.strides[i] == 0;
    return GK_OK;
}

/* The strides of a view of `a` with `shape`, when one exists (NumPy's
 * attempt_nocopy_reshape, restated: match runs of axes with equal element
 * counts, each old run contiguous in itself). */
static bool view_strides(const gk_array *a, int ndim, const int64_t *shape, int64_t *strides)
{
    int old_n = 0;
    int64_t old_shape[GK_MAX_DIMS], old_strides[GK_MAX_DIMS];
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] != 1) {
            old_shape[old_n] = a->shape[i];
            old_strides[old_n++] = a->strides[i];
        }
    }
    int oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < ndim && oi < old_n) {
        int64_t np = shape[ni], op = old_shape[oi];
        while (np != op) {
            if (np < op) {
                if (nj >= ndim)
                    return false;
                np *= shape[nj++];
            } else {
                if (oj >= old_n)
                    return false;
                op *= old_shape[oj++];
            }
        }
        for (int k = oi; k < oj - 1; k++)
            if (old_strides[k] != old_shape[k + 1] * old_strides[k + 1])
                return false;
        strides[nj - 1] = old_strides[oj - 1];
        for (int k = nj - 1; k > ni; k--)
            strides[k - 1] = strides[k] * shape[k];
        ni = nj++;
        oi = oj++;
    }
    for (int k = ni; k < ndim; k++)
        strides[k] = 1; /* trailing axes of length 1 */
    return true;
}

gk_status gk_reshape(const gk_array *a, int ndim, const int64_t *shape, gk_array **out)
{
    *out = NULL;
    if (ndim < 0 || ndim > GK_MAX_DIMS)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "reshape: %d dimensions; arrays have 0 to %d",
                       ndim, GK_MAX_DIMS);
    int64_t target[GK_MAX_DIMS] = {0}; /* zeroed: -O3 cannot tell only ndim are read */
    int inferred = -1;
    for (int i = 0; i < ndim; i++) {
        target[i] = shape[i];
        if (shape[i] == -1 && inferred < 0) {
            inferred = i;
            target[i] = 1; /* for `known` below */
            continue;
        }
        if (shape[i] < 0)
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "reshape: bad length %lld on axis %d",
                           (long long)shape[i], i);
    }
    /* The other axes' product; -1 (past int64) matches no array's size. */
    int64_t known = gk_shape_size(ndim, target);
    int64_t size = gk_array_size(a);
    if (inferred >= 0 && known > 0 && size % known == 0)
        target[inferred] = size / known;
    char from[160], to[160];
    if ((inferred >= 0 && (known <= 0 || size % known != 0)) ||
        gk_shape_size(ndim, target) != size)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "cannot reshape an array of shape %s (%lld "
                       "elements) into %s",
                       gk_shape_text(a->ndim, a->shape, from, sizeof from), (long long)size,
                       gk_shape_text(ndim, shape, to, sizeof to));
    int64_t strides[GK_MAX_DIMS];
    if (size > 0 && !view_strides(a, ndim, target, strides)) {
        /* No view has this shape: a contiguous copy, reshaped. */
        gk_status status = gk_copy(a, out);
        if (status != GK_OK)
            return status;
        (*out)->ndim = ndim;
        copy_shape((*out)->shape, target, ndim);
        set_contiguous_strides(*out);
        return GK_OK;
    }
    gk_status status = gk_array_view(a, out);
    if (status != GK_OK)
        return status;
    (*out)->ndim = ndim;
    copy_shape((*out)->shape, target, ndim);
    if (size == 0)
        set_contiguous_strides(*out);
    else
        memcpy((*out)->strides, strides, sizeof *strides * (size_t)ndim);
    return GK_OK;
}
