/* Internal to the CPU backend: the loop driver every kernel uses, and the
 * backend entry points, one file per family. */
#ifndef GK_COMPUTE_CPU_H
#define GK_COMPUTE_CPU_H

#include "compute/backend.h"

/* The innermost loop of a kernel: n elements; data[k] points at operand k's
 * first element, strides[k] is its step in elements. Kernels test for the
 * contiguous case (all strides 1, or 0 for a broadcast scalar) and run a
 * plain loop the compiler vectorises there. */
typedef void (*cpu_inner_loop)(int64_t n, char *const *data, const int64_t *strides,
                               const void *context);

/* Runs `inner` over every element of `loop` for `count` operands (the
 * output first). Axes of length 1 are dropped and axes contiguous for every
 * operand are merged, so a contiguous array is one call per chunk; large
 * loops are split into chunks run on threads (parallel.h). */
void cpu_for_each(const gk_loop *loop, const gk_operand *operands, int count,
                  cpu_inner_loop inner, const void *context);

/* A 16-byte element (complex128), moved as a whole by copies, fills,
 * gathers and where. */
typedef struct cpu_bytes16 {
    uint64_t part[2];
} cpu_bytes16;

/* Of five loops for elements of 1, 2, 4, 8 and 16 bytes, the one for
 * `size`: copies, fills and where move bytes, whatever the dtype. */
static inline cpu_inner_loop cpu_loop_by_size(size_t size, cpu_inner_loop one,
                                              cpu_inner_loop two, cpu_inner_loop four,
                                              cpu_inner_loop eight, cpu_inner_loop sixteen)
{
    return size == 1 ? one : size == 2 ? two : size == 4 ? four : size == 8 ? eight : sixteen;
}

/* Marks a kernel that is compiled twice, for AVX2 and for the baseline
 * instruction set, the loader picking one by the CPU it runs on (an ifunc):
 * the library stays portable while a reduction reads memory as fast as
 * NumPy's AVX2 and AVX-512 loops. Helpers it calls are inlined into each
 * copy; a kernel calling another marked one goes through the ifunc.
 * CPU_KERNEL_AVX512 adds a third copy for AVX-512 (x86-64-v4), for the
 * kernels that gain from its conversions and mask registers: AVX2 has no
 * vector conversion between doubles and int64, so float64 to int64 ran at
 * 0.4x NumPy's speed there, 1.3x with it. (Plain arithmetic gains nothing:
 * it waits on memory either way.) */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define CPU_KERNEL __attribute__((target_clones("avx2", "default")))
#define CPU_KERNEL_AVX512 __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
#endif
#ifndef CPU_KERNEL
#define CPU_KERNEL
#define CPU_KERNEL_AVX512
#endif

/* Sort rows at least this long (4 times as long for 8-byte values) are
 * radix sorted (or network sorted, which gives the same), which puts -0.0
 * before 0.0 in plain sorts; shorter rows keep them in input order. The
 * GPU sort (gpu/sort.c) follows the same rule so both give the same
 * bytes. */
#define CPU_RADIX_MIN 64

/* Rows of 1 to CPU_SORT_NETWORK_MAX 4-byte keys of a kind (unsigned or
 * signed integers, or floats without NaN), sorted in place by a sorting
 * network in AVX-512 or AVX2 registers (sort_network.c; cpu_vector_isa()
 * chooses); false, touching nothing, without either or for a longer row.
 * Floats sort -0.0 before 0.0. */
#define CPU_SORT_NETWORK_MAX 1024
typedef enum cpu_key_kind { CPU_KEYS_UNSIGNED, CPU_KEYS_SIGNED, CPU_KEYS_FLOAT } cpu_key_kind;
bool cpu_sort_network(void *row, int64_t n, cpu_key_kind kind);
/* The same row's argsort into indices[0, n) (stable: equal keys, -0.0 and
 * 0.0 among them, in their order), by the network in AVX-512's lanes of
 * 64-bit (key, index) pairs; false, touching nothing, without AVX-512. */
bool cpu_argsort_network(const void *row, int64_t n, cpu_key_kind kind, int64_t *indices);

/* n elements of a float16 or bfloat16 array, `stride` elements apart, as
 * floats (exact), and floats rounded back into one (half.c). */
void cpu_half_to_float(gk_dtype dtype, const uint16_t *in, int64_t stride, float *out, int64_t n);
void cpu_half_from_float(gk_dtype dtype, const float *in, uint16_t *out, int64_t stride,
                         int64_t n);

gk_status cpu_convert(gk_device device, const gk_loop *loop, const gk_operand *out,
                      const gk_operand *in);
gk_status cpu_fill(gk_device device, const gk_loop *loop, const gk_operand *out,
                   const void *value);
gk_status cpu_sequence(gk_device device, const gk_operand *out, int64_t count, double start,
                       double step);
/* complex64/complex128 elementwise ops (complex.c); NULL where the op has
 * no complex loop. */
cpu_inner_loop cpu_complex_loop(gk_op op, gk_dtype dtype);
gk_status cpu_elementwise(gk_device device, gk_op op, const gk_loop *loop, const gk_operand *out,
                          const gk_operand *in);
gk_status cpu_where(gk_device device, const gk_loop *loop, const gk_operand *out,
                    const gk_operand *condition, const gk_operand *a, const gk_operand *b);
gk_status cpu_reduce(gk_device device, gk_reduction op, const gk_loop *outer,
                     const gk_operand *out, const gk_operand *in, int64_t count, int64_t stride,
                     int64_t ddof);
gk_status cpu_scan(gk_device device, gk_reduction op, const gk_loop *outer,
                   const gk_operand *out, const gk_operand *in, int64_t count,
                   int64_t in_stride, int64_t out_stride);
gk_status cpu_sort(gk_device device, const gk_operand *values, const gk_operand *indices,
                   const gk_operand *in, int64_t rows, int64_t length);
gk_status cpu_random(gk_device device, const gk_operand *out, int64_t count, uint64_t seed,
                     bool normal, double a, double b);
gk_status cpu_gather(gk_device device, const gk_loop *loop, const gk_operand *out,
                     const gk_operand *in, const gk_operand *index, int64_t axis_length,
                     int64_t axis_stride);
gk_status cpu_scatter(gk_device device, const gk_loop *loop, const gk_operand *out,
                      const gk_operand *in, const gk_operand *index, int64_t axis_length,
                      int64_t axis_stride);
gk_status cpu_flatnonzero(gk_device device, const gk_operand *mask, int64_t n,
                          const gk_operand *out);
gk_status cpu_searchsorted(gk_device device, const gk_loop *loop, const gk_operand *out,
                           const gk_operand *values, const gk_operand *sorted, int64_t n,
                           int64_t sorted_stride, bool right);
gk_status cpu_matmul(gk_device device, gk_dtype dtype, int64_t batch, int64_t m, int64_t n,
                     int64_t k, const char *a, int64_t a_batch_stride, const char *b,
                     int64_t b_batch_stride, char *c, unsigned transposed);

#endif
