/* Indexing on the CPU: gather and scatter along one axis, the positions of
 * a mask's true elements, and binary search (compute/index.c is the core
 * side; backend.h has the contracts).
 *
 * Gather and scatter only move elements, so they have one loop per element
 * size (1, 2, 4, 8 bytes) serving every dtype, run by the loop driver
 * (threads for large loops). Searching compares, so it has one loop per
 * dtype. */
#include "compute/backends/cpu/cpu.h"

#include "compute/backends/cpu/parallel.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

/* --- gather and scatter --- */

/* The indexed axis: its length (negative indices count back from it) and
 * the array's stride along it, in elements. */
typedef struct axis_context {
    int64_t length, stride;
} axis_context;

/* The element offset index k names along the axis. */
static inline int64_t axis_offset(const axis_context *axis, int64_t k)
{
    return (k < 0 ? k + axis->length : k) * axis->stride;
}

/* Operands: out, in, index (int64). out[p] = in[p + index[p] along the
 * axis]. Fast paths: one index for a whole row (take along a leading axis:
 * a strided copy) and one element per index (take from a 1-d array, and
 * mask_select's positions). */
#define GATHER(N, T)                                                                      \
    static void gather_##N(int64_t n, char *const *data, const int64_t *s,               \
                           const void *context)                                           \
    {                                                                                     \
        const axis_context *axis = context;                                               \
        T *out = (T *)data[0];                                                            \
        const T *in = (const T *)data[1];                                                 \
        const int64_t *index = (const int64_t *)data[2];                                  \
        if (s[2] == 0) {                                                                  \
            const T *from = in + axis_offset(axis, index[0]);                             \
            if (s[0] == 1 && s[1] == 1) {                                                 \
                memcpy(out, from, (size_t)n * sizeof(T));                                 \
            } else {                                                                      \
                for (int64_t i = 0; i < n; i++)                                           \
                    out[i * s[0]] = from[i * s[1]];                                       \
            }                                                                             \
        } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {                                 \
            for (int64_t i = 0; i < n; i++)                                               \
                out[i] = in[axis_offset(axis, index[i])];                                 \
        } else {                                                                          \
            for (int64_t i = 0; i < n; i++)                                               \
                out[i * s[0]] = in[i * s[1] + axis_offset(axis, index[i * s[2]])];        \
        }                                                                                 \
    }

/* The mirror: out[p + index[p] along the axis] = in[p]. Where indices
 * repeat, threads may store to one element at once; each store is one
 * aligned element, so one of the values is left there. */
#define SCATTER(N, T)                                                                     \
    static void scatter_##N(int64_t n, char *const *data, const int64_t *s,              \
                            const void *context)                                          \
    {                                                                                     \
        const axis_context *axis = context;                                               \
        T *out = (T *)data[0];                                                            \
        const T *in = (const T *)data[1];                                                 \
        const int64_t *index = (const int64_t *)data[2];                                  \
        if (s[2] == 0) {                                                                  \
            T *to = out + axis_offset(axis, index[0]);                                    \
            for (int64_t i = 0; i < n; i++)                                               \
                to[i * s[0]] = in[i * s[1]];                                              \
        } else {                                                                          \
            for (int64_t i = 0; i < n; i++)                                               \
                out[i * s[0] + axis_offset(axis, index[i * s[2]])] = in[i * s[1]];        \
        }                                                                                 \
    }

GATHER(1, uint8_t)
GATHER(2, uint16_t)
GATHER(4, uint32_t)
GATHER(8, uint64_t)
GATHER(16, cpu_bytes16)
SCATTER(1, uint8_t)
SCATTER(2, uint16_t)
SCATTER(4, uint32_t)
SCATTER(8, uint64_t)
SCATTER(16, cpu_bytes16)

/* The loop for elements of `size` bytes, NULL for other sizes. */
static cpu_inner_loop by_size(size_t size, bool scatter)
{
    switch (size) {
    case 1: return scatter ? scatter_1 : gather_1;
    case 2: return scatter ? scatter_2 : gather_2;
    case 4: return scatter ? scatter_4 : gather_4;
    case 8: return scatter ? scatter_8 : gather_8;
    case 16: return scatter ? scatter_16 : gather_16;
    default: return NULL;
    }
}

static gk_status move_along(const char *what, bool scatter, const gk_loop *loop,
                            const gk_operand *out, const gk_operand *in,
                            const gk_operand *index, int64_t axis_length, int64_t axis_stride)
{
    cpu_inner_loop inner = (unsigned)out->dtype < GK_DTYPE_COUNT && out->dtype == in->dtype &&
                                   index->dtype == GK_INT64
                               ? by_size(gk_dtype_size(out->dtype), scatter)
                               : NULL;
    if (!inner)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: %s into %s with %s indices", what,
                       gk_dtype_name(in->dtype), gk_dtype_name(out->dtype),
                       gk_dtype_name(index->dtype));
    axis_context axis = {axis_length, axis_stride};
    gk_operand operands[3] = {*out, *in, *index};
    cpu_for_each(loop, operands, 3, inner, &axis);
    return GK_OK;
}

gk_status cpu_gather(gk_device device, const gk_loop *loop, const gk_operand *out,
                     const gk_operand *in, const gk_operand *index, int64_t axis_length,
                     int64_t axis_stride)
{
    (void)device;
    return move_along("gather", false, loop, out, in, index, axis_length, axis_stride);
}

gk_status cpu_scatter(gk_device device, const gk_loop *loop, const gk_operand *out,
                      const gk_operand *in, const gk_operand *index, int64_t axis_length,
                      int64_t axis_stride)
{
    (void)device;
    return move_along("scatter", true, loop, out, in, index, axis_length, axis_stride);
}

/* --- flatnonzero --- */

/* Masks are cut into blocks: each block's true elements are counted, then
 * written from the sum of the counts before it, both passes on threads. */
enum { BLOCK = 1 << 16 };

/* The number of nonzero bytes of m[0, n) (a loop the compiler vectorises). */
static int64_t count_true(const uint8_t *m, int64_t n)
{
    int64_t count = 0;
#pragma omp simd reduction(+ : count)
    for (int64_t i = 0; i < n; i++)
        count += m[i] != 0;
    return count;
}

/* Writes first + i for every nonzero m[i], i < n, to out[0, ...). Without
 * branches (a random mask would mispredict half of them): every position
 * is stored at the next free slot, which only a true element then keeps.
 * Stopping at the last true element keeps the stray stores inside out's
 * part of the result. */
static void write_true(const uint8_t *m, int64_t n, int64_t first, int64_t *out)
{
    while (n > 0 && m[n - 1] == 0)
        n--;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        out[k] = first + i;
        k += m[i] != 0;
    }
}

typedef struct nonzero_job {
    const uint8_t *mask;
    int64_t n;
    int64_t *counts; /* per block; then where each block's positions start */
    int64_t *out;
} nonzero_job;

static void count_blocks(void *data, int64_t first, int64_t end)
{
    nonzero_job *job = data;
    for (int64_t b = first; b < end; b++) {
        int64_t start = b * BLOCK, length = job->n - start < BLOCK ? job->n - start : BLOCK;
        job->counts[b] = count_true(job->mask + start, length);
    }
}

static void write_blocks(void *data, int64_t first, int64_t end)
{
    nonzero_job *job = data;
    for (int64_t b = first; b < end; b++) {
        int64_t start = b * BLOCK, length = job->n - start < BLOCK ? job->n - start : BLOCK;
        write_true(job->mask + start, length, start, job->out + job->counts[b]);
    }
}

gk_status cpu_flatnonzero(gk_device device, const gk_operand *mask, int64_t n,
                          const gk_operand *out)
{
    (void)device;
    const uint8_t *m = (const uint8_t *)mask->data;
    int64_t *positions = (int64_t *)out->data;
    if (n < cpu_parallel_min()) {
        write_true(m, n, 0, positions);
        return GK_OK;
    }
    int64_t blocks = (n + BLOCK - 1) / BLOCK;
    nonzero_job job = {m, n, malloc(sizeof(int64_t) * (size_t)blocks), positions};
    if (!job.counts)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "flatnonzero: out of memory");
    cpu_parallel(blocks, true, count_blocks, &job);
    int64_t total = 0;
    for (int64_t b = 0; b < blocks; b++) {
        int64_t count = job.counts[b];
        job.counts[b] = total;
        total += count;
    }
    cpu_parallel(blocks, true, write_blocks, &job);
    free(job.counts);
    return GK_OK;
}

/* --- searchsorted --- */

typedef struct search_context {
    const char *sorted;
    int64_t n, stride;
    bool right;
} search_context;

/* NumPy's sort order: NaN after every number (and equal to NaN). */
#define LESS_PLAIN(a, b) ((a) < (b))
#define LESS_FLOAT(a, b) ((a) < (b) || ((b) != (b) && (a) == (a)))

/* Operands: out (int64), values. The first place where values[p] could go:
 * left, the count of elements less than it; right, of those not greater. */
#define SEARCH(N, T, LESS)                                                                \
    static void search_##N(int64_t count, char *const *data, const int64_t *s,           \
                           const void *context)                                           \
    {                                                                                     \
        const search_context *c = context;                                                \
        int64_t *out = (int64_t *)data[0];                                                \
        const T *values = (const T *)data[1];                                             \
        const T *sorted = (const T *)c->sorted;                                           \
        for (int64_t i = 0; i < count; i++) {                                             \
            T v = values[i * s[1]];                                                       \
            int64_t low = 0, high = c->n;                                                 \
            while (low < high) {                                                          \
                int64_t mid = low + (high - low) / 2;                                     \
                T x = sorted[mid * c->stride];                                            \
                bool before = c->right ? !LESS(v, x) : LESS(x, v);                        \
                if (before)                                                               \
                    low = mid + 1;                                                        \
                else                                                                      \
                    high = mid;                                                           \
            }                                                                             \
            out[i * s[0]] = low;                                                          \
        }                                                                                 \
    }

SEARCH(u8, uint8_t, LESS_PLAIN)
SEARCH(i8, int8_t, LESS_PLAIN)
SEARCH(i16, int16_t, LESS_PLAIN)
SEARCH(u16, uint16_t, LESS_PLAIN)
SEARCH(i32, int32_t, LESS_PLAIN)
SEARCH(u32, uint32_t, LESS_PLAIN)
SEARCH(i64, int64_t, LESS_PLAIN)
SEARCH(u64, uint64_t, LESS_PLAIN)
SEARCH(f32, float, LESS_FLOAT)
SEARCH(f64, double, LESS_FLOAT)

static const cpu_inner_loop searches[GK_DTYPE_COUNT] = {
    [GK_BOOL] = search_u8,     [GK_UINT8] = search_u8,     [GK_INT8] = search_i8,
    [GK_INT16] = search_i16,   [GK_UINT16] = search_u16,   [GK_INT32] = search_i32,
    [GK_UINT32] = search_u32,  [GK_INT64] = search_i64,    [GK_UINT64] = search_u64,
    [GK_FLOAT32] = search_f32, [GK_FLOAT64] = search_f64,
};

gk_status cpu_searchsorted(gk_device device, const gk_loop *loop, const gk_operand *out,
                           const gk_operand *values, const gk_operand *sorted, int64_t n,
                           int64_t sorted_stride, bool right)
{
    (void)device;
    if ((unsigned)values->dtype >= GK_DTYPE_COUNT || sorted->dtype != values->dtype ||
        out->dtype != GK_INT64)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "searchsorted: %s values in %s into %s",
                       gk_dtype_name(values->dtype), gk_dtype_name(sorted->dtype),
                       gk_dtype_name(out->dtype));
    search_context c = {sorted->data, n, sorted_stride, right};
    gk_operand operands[2] = {*out, *values};
    cpu_for_each(loop, operands, 2, searches[values->dtype], &c);
    return GK_OK;
}
