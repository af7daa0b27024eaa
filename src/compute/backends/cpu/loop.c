/* The CPU's loop driver: simplify the iteration space, then hand rows (or
 * chunks of one long row) to the kernel's inner loop, on threads when the
 * loop is big. */
#include "compute/backends/cpu/cpu.h"

#include "compute/backends/cpu/parallel.h"

#include <string.h>

/* Chunk length for threads: long enough to amortise the call, short enough
 * to balance 2 to 64 threads. */
enum { CHUNK = 1 << 16 };

typedef struct simple_loop {
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    int64_t strides[4][GK_MAX_DIMS];
    char *data[4];
} simple_loop;

/* Drops length-1 axes and merges axis i into i+1 when, for every operand,
 * stride[i] == stride[i+1] * shape[i+1]. */
static void simplify(const gk_loop *loop, const gk_operand *operands, int count,
                     simple_loop *s)
{
    s->ndim = 0;
    for (int k = 0; k < count; k++)
        s->data[k] = operands[k].data;
    for (int i = 0; i < loop->ndim; i++) {
        if (loop->shape[i] == 1)
            continue;
        int d = s->ndim;
        bool merge = d > 0;
        for (int k = 0; merge && k < count; k++)
            merge = s->strides[k][d - 1] == operands[k].strides[i] * loop->shape[i];
        if (merge) {
            s->shape[d - 1] *= loop->shape[i];
            for (int k = 0; k < count; k++)
                s->strides[k][d - 1] = operands[k].strides[i];
            continue;
        }
        s->shape[d] = loop->shape[i];
        for (int k = 0; k < count; k++)
            s->strides[k][d] = operands[k].strides[i];
        s->ndim++;
    }
}

/* The loop as cut into pieces: chunks of at most CHUNK elements of a row. */
typedef struct pieces {
    simple_loop s;
    int count;
    size_t sizes[4];
    int64_t inner_strides[4];
    int64_t chunks_per_row;
    cpu_inner_loop inner;
    const void *context;
} pieces;

/* Pieces [first, end), in order (a cpu_range_fn). */
static void run_pieces(void *data, int64_t first, int64_t end)
{
    const pieces *p = data;
    const simple_loop *s = &p->s;
    int last = s->ndim - 1;
    int64_t row_length = s->shape[last];
    for (int64_t piece = first; piece < end; piece++) {
        int64_t row = piece / p->chunks_per_row, start = piece % p->chunks_per_row * CHUNK;
        int64_t n = row_length - start < CHUNK ? row_length - start : CHUNK;
        char *at[4];
        for (int k = 0; k < p->count; k++)
            at[k] = s->data[k] + start * p->inner_strides[k] * (int64_t)p->sizes[k];
        /* Row index -> offsets along the outer axes, last outer axis fastest. */
        int64_t rest = row;
        for (int i = last - 1; i >= 0; i--) {
            int64_t index = rest % s->shape[i];
            rest /= s->shape[i];
            for (int k = 0; k < p->count; k++)
                at[k] += index * s->strides[k][i] * (int64_t)p->sizes[k];
        }
        p->inner(n, at, p->inner_strides, p->context);
    }
}

void cpu_for_each(const gk_loop *loop, const gk_operand *operands, int count,
                  cpu_inner_loop inner, const void *context)
{
    pieces p = {.count = count, .inner = inner, .context = context};
    simplify(loop, operands, count, &p.s);
    for (int k = 0; k < count; k++)
        p.sizes[k] = gk_dtype_size(operands[k].dtype);
    if (p.s.ndim == 0) {
        int64_t ones[4] = {1, 1, 1, 1};
        inner(1, p.s.data, ones, context);
        return;
    }
    int last = p.s.ndim - 1;
    int64_t row_length = p.s.shape[last];
    int64_t rows = 1;
    for (int i = 0; i < last; i++)
        rows *= p.s.shape[i];
    if (rows == 0 || row_length == 0)
        return;
    for (int k = 0; k < count; k++)
        p.inner_strides[k] = p.s.strides[k][last];
    p.chunks_per_row = (row_length + CHUNK - 1) / CHUNK;
    /* Smaller loops stay on this thread: waking a team costs more than
     * their work (parallel.h). */
    cpu_parallel(rows * p.chunks_per_row, rows * row_length >= cpu_parallel_min(), run_pieces,
                 &p);
}
