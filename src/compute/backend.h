/* Internal: what a compute backend implements. The core (array.c, ops) has
 * checked shapes, dtypes and devices, broadcast the operands and made the
 * outputs before it calls a backend, so a backend only loops. Pointers
 * named `data` are device addresses: the host may not touch them unless the
 * backend is the CPU's. Work may be queued asynchronously; `download` and
 * `synchronize` wait for it. */
#ifndef GK_COMPUTE_BACKEND_H
#define GK_COMPUTE_BACKEND_H

#include <gpukit/array.h>

/* One array as a loop sees it: the address of the element at the loop's
 * origin, and a stride per loop axis in elements (0 where broadcast). */
typedef struct gk_operand {
    char *data;
    gk_dtype dtype;
    int64_t strides[GK_MAX_DIMS];
} gk_operand;

/* An iteration space: ndim 0 is one element. */
typedef struct gk_loop {
    int ndim;
    int64_t shape[GK_MAX_DIMS];
} gk_loop;

/* What one FFT pass computes (compute/fft.c). */
typedef enum gk_fft_pass {
    GK_FFT_PASS_FORWARD,  /* complex to complex, e^-i */
    GK_FFT_PASS_BACKWARD, /* complex to complex, e^+i */
    GK_FFT_PASS_R2C,      /* real to the n / 2 + 1 non-negative frequencies */
    GK_FFT_PASS_C2R,      /* those back to n reals */
} gk_fft_pass;

/* One dense-solver call (compute/factor.c): `count` n x n column-major
 * matrices `a`, each right after the last, of dtype float32, float64,
 * complex64 or complex128, all pointers device memory. info (int32, one
 * per matrix) gets LAPACK's info of each. */
typedef enum gk_solver_op {
    GK_SOLVER_LU,       /* a = P L U in place, pivots (int32, n per matrix) */
    GK_SOLVER_LU_SOLVE, /* b (n x nrhs per matrix) = op(a)^-1 b from LU's a and pivots;
                         * op is a^T when `flag`; the infos may be left unwritten (they
                         * could only report a bad argument, and are not read) */
    GK_SOLVER_LU_INVERT, /* c (n x n per matrix) = a^-1 from LU's a and pivots, out of
                          * place, for a stack LU factored in one batched call; the
                          * infos as LU_SOLVE's. A call of count 0 fails with
                          * GK_ERR_NOT_FOUND when the device has no such routine for
                          * n x n: solve against identities (LU_SOLVE) */
    GK_SOLVER_CHOLESKY, /* a's triangle (the upper one when `flag`) = its factor */
    GK_SOLVER_EIGH,     /* w (real, n per matrix) = the eigenvalues from a's triangle
                         * (upper when `flag`), and a = the vectors when `vectors` */
    GK_SOLVER_SVD,      /* a is m x n (m >= n; a stride of m * n): w (real, n per matrix)
                         * = the singular values; with `vectors`, b = U (m x m when
                         * `flag`, else m x n) and c = V^H (n x n) */
    GK_SOLVER_SVD_JACOBI, /* a is m x n (a stride of m * n), of any shape the device's
                           * batched Jacobi SVD takes: w (real, min(m, n) per matrix) =
                           * the singular values, descending; b = U (m x m) and c = V
                           * (n x n, not V^H), written with `vectors` but given always.
                           * A call of count 0 fails with GK_ERR_NOT_FOUND when the
                           * device has no such routine for m x n: use GK_SOLVER_SVD */
    GK_SOLVER_QR,       /* a is m x n column-major (lda m), matrices `stride` elements
                         * apart: R above its diagonal, the k = min(m, n) reflectors
                         * below, b = their scalars (tau, k per matrix) */
    GK_SOLVER_QR_Q,     /* a and b as GK_SOLVER_QR left them: a's first n columns =
                         * Q's, from the first k reflectors (n <= the columns a holds) */
} gk_solver_op;

typedef struct gk_solver_call {
    gk_solver_op op;
    gk_dtype dtype;
    int64_t count, n, nrhs;
    int64_t m;         /* SVD's and QR's rows */
    int64_t k, stride; /* QR: the reflectors, and the elements from matrix to matrix */
    bool flag, vectors;
    char *a, *b, *c, *w, *pivots, *info;
} gk_solver_call;

/* matmul's `transposed` bits. */
enum { GK_MATMUL_A_TRANSPOSED = 1, GK_MATMUL_B_TRANSPOSED = 2 };

typedef struct gk_backend {
    gk_device_kind kind;
    const char *name;

    /* --- devices and memory --- */
    int (*count)(void);
    gk_status (*check)(gk_device device);
    gk_status (*describe)(gk_device device, char *buf, size_t size);
    gk_status (*memory)(gk_device device, uint64_t *free_bytes, uint64_t *total_bytes);
    /* Whether arrays of `dtype` can live and compute on the device (float64
     * needs double precision, which some OpenCL devices lack). */
    gk_status (*has_dtype)(gk_device device, gk_dtype dtype, bool *has);
    /* At least 64-byte aligned; bytes may be 0 (a valid, unique pointer). */
    gk_status (*alloc)(gk_device device, size_t bytes, void **data);
    void (*release)(gk_device device, void *data, size_t bytes);
    gk_status (*upload)(gk_device device, void *data, const void *host, size_t bytes);
    gk_status (*download)(gk_device device, void *host, const void *data, size_t bytes);
    gk_status (*synchronize)(gk_device device);
    /* gk_device_memory_stats and gk_device_empty_cache (device.h). */
    gk_status (*memory_stats)(gk_device device, bool reset_peak, gk_memory_stats *stats);
    gk_status (*empty_cache)(gk_device device);

    /* --- elementwise --- */
    /* out = in, converted to out's dtype (the same dtype: a strided copy). */
    gk_status (*convert)(gk_device device, const gk_loop *loop, const gk_operand *out,
                         const gk_operand *in);
    /* Every element of out = *value, one element of out's dtype in host memory. */
    gk_status (*fill)(gk_device device, const gk_loop *loop, const gk_operand *out,
                      const void *value);
    /* out[i] = start + i * step for i < count (out contiguous, of a real
     * dtype), computed in double and converted to out's dtype. */
    gk_status (*sequence)(gk_device device, const gk_operand *out, int64_t count, double start,
                          double step);
    /* out = op(in[0]) or op(in[0], in[1]). Inputs share one dtype; out has it
     * too, or is bool where gk_op_gives_bool(op), or the parts' dtype for
     * abs of complex. The core calls it only for
     * (op, dtype) pairs that have a loop: positive, conj, real, imag and the
     * rounding of integers are copies and fills it does itself. */
    gk_status (*elementwise)(gk_device device, gk_op op, const gk_loop *loop,
                             const gk_operand *out, const gk_operand *in);
    /* out = condition ? a : b; condition bool, a, b and out one dtype. */
    gk_status (*where)(gk_device device, const gk_loop *loop, const gk_operand *out,
                       const gk_operand *condition, const gk_operand *a, const gk_operand *b);

    /* --- reductions and scans --- */
    /* For each position of `outer` (out's loop; in's strides follow it),
     * reduces `count` elements of in, `stride` elements apart. Output dtypes
     * as gk_reduce() documents; var/std use ddof. */
    gk_status (*reduce)(gk_device device, gk_reduction op, const gk_loop *outer,
                        const gk_operand *out, const gk_operand *in, int64_t count,
                        int64_t stride, int64_t ddof);
    /* The cumulative sum (op GK_SUM) or product (GK_PROD) along one axis:
     * like reduce, and out has the same element layout along it
     * (out_stride). Integers and bool accumulate in 64 bits, wrapping, into
     * int64 out (signed, bool) or uint64 out (unsigned); floats in their
     * own type. */
    gk_status (*scan)(gk_device device, gk_reduction op, const gk_loop *outer,
                      const gk_operand *out, const gk_operand *in, int64_t count,
                      int64_t in_stride, int64_t out_stride);
    /* Sorts `rows` contiguous rows of `length` elements: values and/or
     * indices (int64) out, either may be NULL; stable. */
    gk_status (*sort)(gk_device device, const gk_operand *values, const gk_operand *indices,
                      const gk_operand *in, int64_t rows, int64_t length);
    /* Philox4x32-10 numbers for elements [0, count) of a contiguous out:
     * uniform in [a, b) or normal(mean a, stddev b). */
    gk_status (*random)(gk_device device, const gk_operand *out, int64_t count, uint64_t seed,
                        bool normal, double a, double b);

    /* --- indexing (compute/index.c is the core side) --- */
    /* For each position p of `loop` (out's): out[p] = the element of `in` at
     * p's offset (in's strides, 0 along the indexed axis) plus index[p] *
     * axis_stride elements. `index` is int64, broadcast over the loop by its
     * strides; its values are in [-axis_length, axis_length), negative ones
     * counting from the end (the core has checked the range). out and in
     * share a dtype. */
    gk_status (*gather)(gk_device device, const gk_loop *loop, const gk_operand *out,
                        const gk_operand *in, const gk_operand *index, int64_t axis_length,
                        int64_t axis_stride);
    /* The mirror of gather: the element of `out` at p's offset (out's
     * strides, 0 along the indexed axis) plus index[p] * axis_stride
     * elements = in[p]. Where positions name the same element, one wins. */
    gk_status (*scatter)(gk_device device, const gk_loop *loop, const gk_operand *out,
                         const gk_operand *in, const gk_operand *index, int64_t axis_length,
                         int64_t axis_stride);
    /* The positions i < n (ascending) where the contiguous bool `mask` is
     * nonzero, into the contiguous int64 `out`, which holds exactly as many
     * elements as there are such positions (the core counted them). */
    gk_status (*flatnonzero)(gk_device device, const gk_operand *mask, int64_t n,
                             const gk_operand *out);
    /* For each position p of `loop` (out's): how many of the n elements of
     * the ascending 1-d `sorted` (`sorted_stride` elements apart) are <
     * values[p] (right: <= values[p]), into int64 out. NaN is larger than
     * every number (NumPy's sort order). sorted and values share a dtype. */
    gk_status (*searchsorted)(gk_device device, const gk_loop *loop, const gk_operand *out,
                              const gk_operand *values, const gk_operand *sorted, int64_t n,
                              int64_t sorted_stride, bool right);

    /* --- linear algebra: row-major contiguous matrices --- */
    /* c[i] = a[i] @ b[i] for i < batch; a is m x k, b is k x n, c is m x n;
     * batch strides in elements (0 = the same matrix for every i).
     * `transposed` (GK_MATMUL_*_TRANSPOSED) marks an operand whose matrices
     * are stored as their transposes (k x m for a, n x k for b, row-major:
     * a.T of a C-order matrix); the core sets it only where
     * matmul_transposes is true, and copies such operands otherwise. */
    gk_status (*matmul)(gk_device device, gk_dtype dtype, int64_t batch, int64_t m, int64_t n,
                        int64_t k, const char *a, int64_t a_batch_stride, const char *b,
                        int64_t b_batch_stride, char *c, unsigned transposed);
    bool matmul_transposes;

    /* --- FFT (optional: NULL, or GK_ERR_NOT_FOUND when the device has no
     * FFT library; compute/fft.c then computes on the host) --- */
    /* `rows` 1-d transforms of n points, each along one contiguous row:
     * `in` rows of n elements (c2r: n / 2 + 1), `out` rows of n (r2c:
     * n / 2 + 1); complex64/float32 when `single`, else complex128/float64;
     * unnormalized. */
    gk_status (*fft)(gk_device device, gk_fft_pass pass, bool single, int64_t rows, int64_t n,
                     const char *in, char *out);

    /* --- dense solvers (optional: NULL, or GK_ERR_NOT_FOUND when the
     * device has none; compute/factor.c then computes on the host). A call
     * of count 0 only says whether there is one. --- */
    gk_status (*solver)(gk_device device, const gk_solver_call *call);
} gk_backend;

extern const gk_backend gk_cpu_backend;

/* Whether op's result is bool whatever its inputs' dtype: comparisons,
 * logical_*, signbit, isnan, isinf, isfinite (compute/elementwise.c). */
bool gk_op_gives_bool(gk_op op);

/* The backend of a device kind, or NULL when it is not built in. */
const gk_backend *gk_backend_of(gk_device_kind kind);

#endif
