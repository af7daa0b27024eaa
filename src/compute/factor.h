/* Internal: what the factorizations share (compute/factor.c, the host's
 * LAPACK and the public calls; compute/factor_gpu.c, a GPU's dense solver):
 * a stack of matrices described (and, on the host, copied), the results
 * made per matrix, and LAPACK's info as a status. */
#ifndef GK_COMPUTE_FACTOR_H
#define GK_COMPUTE_FACTOR_H

#include "compute/array_impl.h"
#include "ext/blas.h"

/* The input of a factorization, copied to the host. */
typedef struct stack {
    const char *function; /* for messages: "inv" */
    gk_device device;     /* where the input lives and the results go */
    gk_dtype dtype;       /* the computing dtype */
    int precision;        /* GK_LAPACK_S .. _Z: the index into gk_lapacke's tables */
    size_t size;          /* bytes of one element */
    int batch_ndim;
    int64_t batch[GK_MAX_DIMS];
    int64_t count;        /* matrices: the product of the batch */
    int64_t rows, cols;
    gk_array *host;       /* the stack, a CPU array of the input's shape */
    char *data;           /* its count * rows * cols elements, C order */
    const gk_lapacke *lapacke;
} stack;

/* A result of a factorization: one block of elements per matrix, put
 * behind the stack's batch. LAPACK writes it straight into a CPU array,
 * which is the result itself on the CPU and is moved to a GPU otherwise. */
typedef struct result {
    gk_array *array;
    size_t size;        /* bytes of an element */
    int64_t per_matrix; /* elements */
    char *data;         /* the array's elements */
} result;

/* --- factor.c --- */
/* s for a (checked) in `dtype`, without its data. */
void factor_describe_stack(const gk_array *a, gk_dtype dtype, const char *function, stack *s);
/* The dtype of the computing dtype's parts; whether it is complex. */
gk_dtype factor_real_dtype(const stack *s);
bool factor_is_complex(const stack *s);
/* " (matrix [1, 0] of the stack)" for matrix i, "" for a lone matrix. */
const char *factor_which_matrix(const stack *s, int64_t i, char *buf, size_t size);
/* A LAPACK info of routine `base` (`complex_base` for complex matrices
 * where it differs; NULL: the same) as a status: > 0 `why` (GK_ERR_LINALG
 * naming the matrix; why NULL: not an error). */
gk_status factor_lapack_status(const stack *s, int64_t matrix, lapack_int info,
                               const char *base, const char *complex_base, const char *why);

/* A zeroed CPU result of `dtype` with a block of `tail` per matrix of s;
 * the block of matrix i; the result moved to s's device as *out. */
gk_status factor_result_init(result *r, const stack *s, gk_dtype dtype, int tail_ndim,
                             int64_t t0, int64_t t1);
char *factor_result_at(const result *r, int64_t i);
gk_status factor_result_upload(result *r, const stack *s, gk_status status, gk_array **out);
/* n x n identity into zeroed `data` of s's dtype. */
void factor_set_identity(const stack *s, char *data, int64_t n);
/* sign, log |det| and det (each optional, of shape `batch`) on the
 * device of `lu`, in array ops, from LU factors: lu (batch, n, n) in the
 * computing dtype, holding U's diagonal d; pivots (batch, n) int32,
 * 1-based row swaps as getrf gives them; has_nan (batch) bool, the
 * matrices that held NaN. NumPy's arithmetic:
 *   sign     = prod(sign(d)) (sign(d) is d/|d| for complex d), negated
 *              for an odd number of row swaps;
 *   log|det| = sum(log|d|);
 *   a zero in d (exactly singular, getrf's info > 0): sign 0,
 *              log|det| -inf;
 *   det      = sign * exp(log|det|), with NumPy's infinities and zeros
 *              where det leaves the dtype's range;
 *   has_nan  : NaN for all three (NaN+NaNj for complex). */
gk_status factor_determinants_from_lu(const gk_array *lu, const gk_array *pivots,
                                      const gk_array *has_nan, gk_array **sign,
                                      gk_array **logabs, gk_array **det);
/* Frees svd's outputs (u and vt only when asked for) after a failure. */
void factor_drop_svd(gk_array **u, gk_array **sv, gk_array **vt);

/* --- factor_gpu.c: on the array's GPU through its dense solver --- */
/* Whether a's device has one (a call of no matrices loads the library). */
bool factor_on_device(const gk_array *a, gk_dtype dtype);
/* gk_solve of a and b broadcast to the whole batch (b as n x nrhs). */
gk_status factor_device_solve(const gk_array *wide_a, const gk_array *wide_b, gk_dtype dtype,
                              bool vector, int nb, const int64_t *b_shape, gk_array **x);
gk_status factor_device_inv(const gk_array *a, gk_dtype dtype, gk_array **out);
gk_status factor_device_cholesky(const gk_array *a, gk_dtype dtype, bool upper,
                                 gk_array **out);
gk_status factor_device_eigh(const gk_array *a, gk_dtype dtype, gk_array **values,
                             gk_array **vectors);
gk_status factor_device_svd(const gk_array *a, gk_dtype dtype, bool full, gk_array **u,
                            gk_array **sv, gk_array **vt);
gk_status factor_device_qr(const gk_array *a, gk_dtype dtype, bool complete, gk_array **q,
                           gk_array **r);
/* gk_slogdet's sign and log |det| and gk_det's det (each optional) for
 * `function` ("det" or "slogdet"), through factor_determinants_from_lu. */
gk_status factor_device_determinants(const gk_array *a, gk_dtype dtype, const char *function,
                                     gk_array **sign, gk_array **logabs, gk_array **det);

#endif
