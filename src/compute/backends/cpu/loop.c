/* The CPU's loop driver: simplify the iteration space, then hand rows (or
 * chunks of one long row) to the kernel's inner loop, on OpenMP threads
 * when the loop is big. */
#include "compute/backends/cpu/cpu.h"

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

/* One piece of the loop: a chunk of at most CHUNK elements of one row. */
static void run_piece(const simple_loop *s, int count, const size_t *sizes,
                      const int64_t *inner_strides, int64_t chunks_per_row, int64_t piece,
                      cpu_inner_loop inner, const void *context)
{
    int last = s->ndim - 1;
    int64_t row_length = s->shape[last];
    int64_t row = piece / chunks_per_row, start = piece % chunks_per_row * CHUNK;
    int64_t n = row_length - start < CHUNK ? row_length - start : CHUNK;
    char *data[4];
    for (int k = 0; k < count; k++)
        data[k] = s->data[k] + start * inner_strides[k] * (int64_t)sizes[k];
    /* Row index -> offsets along the outer axes, last outer axis fastest. */
    int64_t rest = row;
    for (int i = last - 1; i >= 0; i--) {
        int64_t index = rest % s->shape[i];
        rest /= s->shape[i];
        for (int k = 0; k < count; k++)
            data[k] += index * s->strides[k][i] * (int64_t)sizes[k];
    }
    inner(n, data, inner_strides, context);
}

void cpu_for_each(const gk_loop *loop, const gk_operand *operands, int count,
                  cpu_inner_loop inner, const void *context)
{
    simple_loop s;
    simplify(loop, operands, count, &s);
    size_t sizes[4];
    for (int k = 0; k < count; k++)
        sizes[k] = gk_dtype_size(operands[k].dtype);
    if (s.ndim == 0) {
        int64_t ones[4] = {1, 1, 1, 1};
        inner(1, s.data, ones, context);
        return;
    }
    int last = s.ndim - 1;
    int64_t row_length = s.shape[last];
    int64_t rows = 1;
    for (int i = 0; i < last; i++)
        rows *= s.shape[i];
    if (rows == 0 || row_length == 0)
        return;
    int64_t inner_strides[4];
    for (int k = 0; k < count; k++)
        inner_strides[k] = s.strides[k][last];
    int64_t chunks_per_row = (row_length + CHUNK - 1) / CHUNK;
    int64_t pieces = rows * chunks_per_row;
    bool parallel = rows * row_length >= CPU_PARALLEL_MIN && pieces > 1;

    if (!parallel) {
        /* Not even an inactive OpenMP region: entering one costs a futex
         * wake per call, several times the work of a small op. */
        for (int64_t piece = 0; piece < pieces; piece++)
            run_piece(&s, count, sizes, inner_strides, chunks_per_row, piece, inner, context);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t piece = 0; piece < pieces; piece++)
        run_piece(&s, count, sizes, inner_strides, chunks_per_row, piece, inner, context);
}
