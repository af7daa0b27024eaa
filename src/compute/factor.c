/* The factorizations of the linalg extension (svd, svdvals, qr, solve,
 * inv, det, slogdet, cholesky, eigh, eigvalsh, eig, eigvals) over stacks
 * of matrices, through LAPACKE on the host (loaded on first use:
 * ext/blas.h).
 *
 * Every call works the same way: the stack (the input's last two axes are
 * the matrices, the axes before them the batch) is copied to host memory
 * once, in C order and in the computing dtype; LAPACK runs on each matrix
 * (factor_each_matrix: small ones shared out among the CPU's threads,
 * large ones one after another, each call threaded by OpenBLAS); the
 * results go back to the input's device in one copy each. On the CPU the
 * copy is the one LAPACK needs anyway (it overwrites its input). On a GPU
 * with a dense solver (cuSOLVER), solve, inv, det, slogdet, cholesky,
 * eigh, qr and svd run there instead (factor_gpu.c); this is the fallback
 * for the rest, and for devices without one.
 *
 * LAPACK works in column-major order, where a matrix in C order reads as
 * its transpose. Rather than transposing (LAPACKE's row-major interface
 * does, twice per call, which costs a tenth of a 1024 x 1024 eigh), each
 * routine runs on the transpose and an identity gives the result: det(a^T)
 * = det(a); inv(a^T) read back in C order is inv(a); a^T = conj(V) S U^T,
 * so svd's vectors come back as vt and u; solve factors a^T and solves
 * with its transpose; cholesky and eigh read the other triangle of a^T,
 * which is the triangle of a asked for, and eigh's vectors come back as a
 * transposed view (PyTorch's layout). Only qr and eig (through LAPACKE's
 * row-major interface: there the transposes are a small part of the
 * time) and solve's right-hand sides are transposed.
 *
 * Dtypes: float32, float64, complex64 and complex128 compute as they are;
 * integers and bool in float64 (as NumPy); float16 and bfloat16 are refused
 * (LAPACK has no 16-bit floats; NumPy refuses them too). Results that are
 * real by nature (singular values, eigenvalues of a Hermitian matrix,
 * log|det|) have the parts' dtype; eig's are always complex.
 *
 * Failures follow NumPy: a singular matrix (solve, inv), one that is not
 * positive definite (cholesky), or an iteration that did not converge is a
 * GK_ERR_LINALG naming the matrix of the stack; det and slogdet of a
 * singular matrix are 0 and (0, -inf). NaN reaches LAPACK as in NumPy
 * (LAPACKE's own NaN check is off) and gives what LAPACK makes of it,
 * except in svd and eig, which refuse NaN and infinity up front as NumPy
 * does (LAPACK would only report an illegal argument). */
#include "compute/factor.h"

#include "compute/backends/cpu/parallel.h"
#include "core/error.h"

#include <complex.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- stacks of matrices in host memory --- */

static int precision_of(gk_dtype dtype)
{
    switch (dtype) {
    case GK_FLOAT32: return GK_LAPACK_S;
    case GK_COMPLEX64: return GK_LAPACK_C;
    case GK_COMPLEX128: return GK_LAPACK_Z;
    default: return GK_LAPACK_D;
    }
}

/* The computing dtype for an input of `dtype` (see the top). */
static gk_dtype factor_dtype(gk_dtype dtype)
{
    return gk_dtype_is_inexact(dtype) ? dtype : GK_FLOAT64;
}

/* The real dtype of the computing dtype's parts. */
gk_dtype factor_real_dtype(const stack *s)
{
    return gk_dtype_component(s->dtype);
}

bool factor_is_complex(const stack *s)
{
    return s->precision >= GK_LAPACK_C;
}

/* Whether the stack's parts are floats (float32, complex64). */
static bool is_single(const stack *s)
{
    return s->precision == GK_LAPACK_S || s->precision == GK_LAPACK_C;
}

/* Real part number j (a real dtype's element, or half of a complex one)
 * of data, in the stack's precision. */
static double part_at(const stack *s, const char *data, int64_t j)
{
    return is_single(s) ? ((const float *)data)[j] : ((const double *)data)[j];
}

static char *matrix_at(const stack *s, int64_t i)
{
    return s->data + (size_t)(i * s->rows * s->cols) * s->size;
}

/* The real parts of one matrix of s (two per element of a complex one). */
static int64_t matrix_parts(const stack *s)
{
    return s->rows * s->cols * (factor_is_complex(s) ? 2 : 1);
}

/* LAPACK's name of a routine of the stack's precision ("dgetrf"), in buf;
 * `complex_base` names it for complex matrices where it differs ("ungqr"
 * for "orgqr"). */
static const char *routine_name(const stack *s, const char *base, const char *complex_base,
                                char *buf, size_t size)
{
    snprintf(buf, size, "%c%s", "sdcz"[s->precision],
             factor_is_complex(s) && complex_base ? complex_base : base);
    return buf;
}

/* " (matrix [1, 0] of the stack)" for matrix i of a stack, "" for a lone
 * matrix: which one of a batch failed. */
const char *factor_which_matrix(const stack *s, int64_t i, char *buf, size_t size)
{
    if (s->batch_ndim == 0) {
        buf[0] = '\0';
        return buf;
    }
    int64_t index[GK_MAX_DIMS];
    for (int d = s->batch_ndim - 1; d >= 0; d--) {
        index[d] = i % s->batch[d];
        i /= s->batch[d];
    }
    size_t used = (size_t)snprintf(buf, size, " (matrix [");
    for (int d = 0; d < s->batch_ndim && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? ", " : "",
                                 (long long)index[d]);
    if (used < size)
        snprintf(buf + used, size - used, "] of the stack)");
    return buf;
}

/* A LAPACK info code as a status: > 0 is the routine's own failure (`why`,
 * a GK_ERR_LINALG; why NULL: not an error), < 0 a rejected argument or
 * LAPACKE's out of memory. The routine's name ("dgetrf") is made only for
 * a failure: a stack of many small matrices checks an info per matrix. */
gk_status factor_lapack_status(const stack *s, int64_t matrix, lapack_int info,
                               const char *base, const char *complex_base, const char *why)
{
    if (info == 0 || (info > 0 && !why))
        return GK_OK;
    char routine[16];
    routine_name(s, base, complex_base, routine, sizeof routine);
    if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "%s: out of host memory in LAPACK %s", s->function,
                       routine);
    if (info < 0)
        return gk_fail(GK_ERR_DRIVER, "%s: LAPACK %s rejected its argument %d", s->function,
                       routine, (int)-info);
    char where[200];
    return gk_fail(GK_ERR_LINALG, "%s: %s%s (LAPACK %s: info %d)", s->function, why,
                   factor_which_matrix(s, matrix, where, sizeof where), routine, (int)info);
}

/* --- the work on each matrix of a stack --- */

/* A routine a factorization runs on each matrix: its name and what its
 * info > 0 means (see factor_lapack_status). */
typedef struct factor_routine {
    const char *name, *complex_name, *why;
} factor_routine;

/* The work on matrix i of s: returns the info of the routine that ended
 * it (0: all done), and sets *which to that routine's index in the
 * factorization's table. `scratch` is the calling thread's own. It runs
 * on any thread, so it must not call gk_fail. */
typedef lapack_int (*matrix_work)(const stack *s, int64_t i, void *context, char *scratch,
                                  int *which);

/* Whether the matrices of s are shared out whole among the CPU's threads,
 * rather than factored one after another with each call threaded by
 * OpenBLAS: when there are enough of them to give every thread one, or
 * when they are `small` (up to SMALL_MATRIX_ELEMENTS, 256 x 256), where
 * OpenBLAS's own threads cost more than they give (on two cores a lone
 * 128 x 128 eigh took 0.41x NumPy's speed threaded, 1.42x on one thread;
 * from about 1024 x 1024 they pay). Whole matrices in parallel share
 * nothing, where OpenBLAS's threads meet after every panel of one matrix.
 * A stack whose whole work (about count * n^3) is below SHARE_OUT_MIN_WORK
 * stays on the calling thread: waking the others would cost more than it
 * saves. */
#define SMALL_MATRIX_ELEMENTS (256 * 256)
#define SHARE_OUT_MIN_WORK (1 << 20)

/* Up to how many elements a lone matrix is factored with OpenBLAS on one
 * thread. For LU and Cholesky that is SMALL_MATRIX_ELEMENTS: on two cores
 * a 384 x 384 inverse is 1.5x faster on both. The reductions to condensed
 * form that svd, eigh and eig start with, and QR's panels, are mostly
 * matrix-vector work, whose threads meet after every column: on two cores
 * one thread was faster up to 768 x 768 (512: svdvals 32 against 50 ms,
 * eigvalsh 10 against 16, qr 20 against 26, eig 300 against 324). */
#define REDUCTION_ONE_THREAD_ELEMENTS (512 * 512)

/* OpenBLAS's own LU and Cholesky (getrf, getrs, potrf; not the reference
 * LAPACK that svd, qr, eigh and eig run) take a buffer under one lock of
 * the whole library at every call. Calls of less work than this (flops)
 * are mostly that lock, and threads calling at once queue on it: on two
 * cores two threads made 40000 solves of 4 x 4 2.6x slower than one, and
 * 10000 of 8 x 8 (235 flops a call) 1.24x slower, cholesky of 8 x 8 (171)
 * 1.19x slower, while inv and det of 8 x 8 (683 and 341) were 1.16x and
 * 1.19x faster, and everything of 16 x 16 1.6-1.9x faster. Such stacks
 * stay on the calling thread. */
#define LOCKED_CALL_MIN_FLOPS 256.0

static bool share_out(const stack *s, bool small, double call_flops)
{
    int64_t n = s->rows > s->cols ? s->rows : s->cols;
    double work = (double)s->count * (double)(s->rows * s->cols) * (double)n;
    /* a complex multiply-add is four real ones */
    double real_flops = factor_is_complex(s) ? 4 * call_flops : call_flops;
    bool lock_bound = call_flops > 0 && real_flops < LOCKED_CALL_MIN_FLOPS;
    return s->count > 1 && work >= (double)SHARE_OUT_MIN_WORK && !lock_bound &&
           (small || s->count >= cpu_threads());
}

/* The flops of an n x n LU (getrf): 2n^3/3; a Cholesky's are half. */
static double lu_flops(int64_t n)
{
    return 2.0 * (double)n * (double)n * (double)n / 3;
}

typedef struct outcome {
    lapack_int info; /* of the routine that ended the matrix's work; 0: done */
    int which;       /* that routine's index in the factorization's table */
} outcome;

typedef struct each_loop {
    const stack *s;
    matrix_work work;
    void *context;
    size_t scratch_bytes;
    outcome *outcomes;
} each_loop;

/* Matrices [first, end) of a loop, with one scratch buffer for them. */
static void each_range(void *data, int64_t first, int64_t end)
{
    each_loop *loop = data;
    char *scratch = loop->scratch_bytes ? malloc(loop->scratch_bytes) : NULL;
    for (int64_t i = first; i < end; i++) {
        outcome *o = &loop->outcomes[i];
        o->which = 0;
        o->info = loop->scratch_bytes && !scratch
                      ? LAPACK_WORK_MEMORY_ERROR
                      : loop->work(loop->s, i, loop->context, scratch, &o->which);
    }
    free(scratch);
}

/* Runs `work` on every matrix of s (see share_out; each range of matrices
 * with a scratch buffer of scratch_bytes), then reports the first matrix
 * whose info is a failure of routines[which]. OpenBLAS runs one thread
 * for matrices of up to one_thread_elements, and for shared-out stacks.
 * call_flops: the work of one call of OpenBLAS's own LU or Cholesky on a
 * matrix of s, in the dtype's operations (see LOCKED_CALL_MIN_FLOPS); 0
 * for the other routines. */
static gk_status factor_each_matrix(const stack *s, matrix_work work, void *context,
                                    size_t scratch_bytes, const factor_routine *routines,
                                    int64_t one_thread_elements, double call_flops)
{
    if (s->count == 0)
        return GK_OK;
    each_loop loop = {s, work, context, scratch_bytes,
                      malloc(sizeof(outcome) * (size_t)s->count)};
    if (!loop.outcomes)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "%s: out of host memory", s->function);
    bool small = s->rows * s->cols <= SMALL_MATRIX_ELEMENTS;
    bool shared_out = share_out(s, small, call_flops);
    /* OpenBLAS's own threads only cost time on a small matrix (39
     * inverses of 8 x 8 took 20x NumPy's time, waking them for each
     * call), and spin when several of gpukit's threads call at once */
    bool one_blas_thread = s->rows * s->cols <= one_thread_elements || shared_out;
    if (one_blas_thread)
        gk_lapacke_pause_threads(s->lapacke);
    cpu_parallel(s->count, shared_out, each_range, &loop);
    if (one_blas_thread)
        gk_lapacke_resume_threads(s->lapacke);
    /* the first matrix that failed, as NumPy (which does them all too) */
    gk_status status = GK_OK;
    for (int64_t i = 0; i < s->count && status == GK_OK; i++) {
        const factor_routine *r = &routines[loop.outcomes[i].which];
        status = factor_lapack_status(s, i, loop.outcomes[i].info, r->name, r->complex_name,
                                      r->why);
    }
    free(loop.outcomes);
    return status;
}

/* Checks that a is a stack of matrices LAPACK can take (square ones when
 * `square`) in a dtype it computes. */
static gk_status check_input(const gk_array *a, const char *function, bool square)
{
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the array is NULL", function);
    char shape[160];
    gk_shape_text(a->ndim, a->shape, shape, sizeof shape);
    if (a->ndim < 2)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s: takes a matrix or a stack of matrices (at least 2 axes), not shape "
                       "%s",
                       function, shape);
    int64_t rows = a->shape[a->ndim - 2], cols = a->shape[a->ndim - 1];
    if (square && rows != cols)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s: takes square matrices, not shape %s (the last two axes differ)",
                       function, shape);
    if (rows > INT_MAX || cols > INT_MAX || (rows && cols > INT_MAX / rows))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the matrices of %s are too large for "
                       "LAPACK (32-bit indices)",
                       function, shape);
    if (gk_dtype_is_half(a->dtype))
        return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                       "%s: %s matrices are not supported (LAPACK has no 16-bit floats); "
                       "convert with astype(float32) first",
                       function, gk_dtype_name(a->dtype));
    return GK_OK;
}

/* What s says of a (checked) in `dtype`, without its data. */
void factor_describe_stack(const gk_array *a, gk_dtype dtype, const char *function, stack *s)
{
    memset(s, 0, sizeof *s);
    s->function = function;
    s->device = gk_array_device(a);
    s->dtype = dtype;
    s->precision = precision_of(dtype);
    s->size = gk_dtype_size(dtype);
    s->batch_ndim = a->ndim - 2;
    s->count = 1;
    for (int i = 0; i < s->batch_ndim; i++) {
        s->batch[i] = a->shape[i];
        s->count *= a->shape[i];
    }
    s->rows = a->shape[a->ndim - 2];
    s->cols = a->shape[a->ndim - 1];
}

/* a (checked) as a stack on the host in `dtype`. */
static gk_status load_stack(const gk_array *a, gk_dtype dtype, const char *function, stack *s)
{
    factor_describe_stack(a, dtype, function, s);
    gk_status status = gk_lapacke_open(function, &s->lapacke);
    if (status != GK_OK)
        return status;
    size_t bytes = (size_t)gk_array_size(a) * s->size;
    status = gk_empty(gk_device_cpu(), dtype, a->ndim, a->shape, &s->host);
    if (status != GK_OK)
        return status;
    s->data = gk_array_data(s->host);
    if (a->dtype == dtype)
        return gk_to_host(a, s->data, bytes);
    gk_array *converted = NULL;
    status = gk_copy_as(a, dtype, &converted);
    if (status == GK_OK)
        status = gk_to_host(converted, s->data, bytes);
    gk_array_free(converted);
    return status;
}

/* A result of `dtype` with a block of `tail` (tail_ndim axes, at most 2)
 * per matrix of s, zeroed. */
gk_status factor_result_init(result *r, const stack *s, gk_dtype dtype, int tail_ndim,
                             int64_t t0, int64_t t1)
{
    memset(r, 0, sizeof *r);
    int64_t shape[GK_MAX_DIMS], tail[2] = {t0, t1};
    memcpy(shape, s->batch, sizeof(int64_t) * (size_t)s->batch_ndim);
    r->per_matrix = 1;
    for (int i = 0; i < tail_ndim; i++) {
        shape[s->batch_ndim + i] = tail[i];
        r->per_matrix *= tail[i];
    }
    r->size = gk_dtype_size(dtype);
    gk_status status = gk_zeros(gk_device_cpu(), dtype, s->batch_ndim + tail_ndim, shape,
                                &r->array);
    if (status == GK_OK)
        r->data = gk_array_data(r->array);
    return status;
}

char *factor_result_at(const result *r, int64_t i)
{
    return r->data + (size_t)(i * r->per_matrix) * r->size;
}

/* *held (a CPU array) on `device` as *out: itself on the CPU, else moved.
 * *held is released either way; out NULL drops it. */
static gk_status deliver(gk_array **held, gk_device device, gk_status status, gk_array **out)
{
    if (status == GK_OK && out && device.kind == GK_DEVICE_CPU) {
        *out = *held;
        *held = NULL;
    } else if (status == GK_OK && out) {
        status = gk_to(*held, device, out);
    }
    gk_array_free(*held);
    *held = NULL;
    return status;
}

/* The result on the stack's device as *out (see deliver). */
gk_status factor_result_upload(result *r, const stack *s, gk_status status, gk_array **out)
{
    r->data = NULL;
    return deliver(&r->array, s->device, status, out);
}

/* The stack itself, as LAPACK left it, on its device as *out (see
 * deliver): the results that overwrite their input. */
static gk_status stack_upload(stack *s, gk_status status, gk_array **out)
{
    s->data = NULL;
    return deliver(&s->host, s->device, status, out);
}

static void stack_free(stack *s)
{
    gk_array_free(s->host);
    s->host = NULL;
    s->data = NULL;
}

/* n x n identity into `data` of the stack's dtype (zeroed already). */
void factor_set_identity(const stack *s, char *data, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        char *one = data + (size_t)(i * n + i) * s->size;
        if (s->dtype == GK_FLOAT32 || s->dtype == GK_COMPLEX64)
            *(float *)one = 1.0f;
        else
            *(double *)one = 1.0;
    }
}

/* re + im i, exactly (re + im * I would turn an infinite part into NaN;
 * C11 lays a complex number out as an array of its two parts). */
static double complex make_complex(double re, double im)
{
    double parts[2] = {re, im};
    double complex z;
    memcpy(&z, parts, sizeof z);
    return z;
}

/* Element (i) of a matrix of the stack's dtype as a double complex. */
static double complex element(const stack *s, const char *data, int64_t i)
{
    return factor_is_complex(s) ? make_complex(part_at(s, data, 2 * i), part_at(s, data, 2 * i + 1))
                                : part_at(s, data, i);
}

/* Fails when an element of the stack is NaN or infinite: `why` says what
 * NumPy says then. */
static gk_status check_finite(const stack *s, const char *why)
{
    size_t parts = (size_t)(s->count * matrix_parts(s));
    for (size_t i = 0; i < parts; i++) {
        if (!isfinite(part_at(s, s->data, (int64_t)i))) {
            char where[200];
            int64_t matrix = (int64_t)i / matrix_parts(s);
            return gk_fail(GK_ERR_LINALG, "%s: %s: the matrix contains NaN or infinity%s",
                           s->function, why, factor_which_matrix(s, matrix, where, sizeof where));
        }
    }
    return GK_OK;
}

static lapack_int at_least_one(int64_t n)
{
    return n > 1 ? (lapack_int)n : 1;
}

/* dst (cols x rows, C order) = the transpose of src (rows x cols, C
 * order), elements of the stack's dtype, conjugated when `conjugate`. In
 * tiles, so that both sides stay in cache; a constant size per dtype, so
 * that each element is one move. */
static void transpose(const stack *s, char *dst, const char *src, int64_t rows, int64_t cols,
                      bool conjugate)
{
    enum { TILE = 32 };
#define TRANSPOSE_TILES(SIZE)                                                                      \
    for (int64_t r0 = 0; r0 < rows; r0 += TILE)                                                    \
        for (int64_t c0 = 0; c0 < cols; c0 += TILE)                                                \
            for (int64_t r = r0; r < r0 + TILE && r < rows; r++)                                   \
                for (int64_t c = c0; c < c0 + TILE && c < cols; c++)                               \
                    memcpy(dst + (size_t)(c * rows + r) * (SIZE),                                  \
                           src + (size_t)(r * cols + c) * (SIZE), (SIZE));
    switch (s->size) {
    case 4: TRANSPOSE_TILES(4) break;
    case 8: TRANSPOSE_TILES(8) break;
    default: TRANSPOSE_TILES(16) break;
    }
#undef TRANSPOSE_TILES
    if (!conjugate || !factor_is_complex(s))
        return;
    for (int64_t i = 0; i < rows * cols; i++) {
        if (s->precision == GK_LAPACK_C)
            ((float *)dst)[2 * i + 1] = -((float *)dst)[2 * i + 1];
        else
            ((double *)dst)[2 * i + 1] = -((double *)dst)[2 * i + 1];
    }
}

/* Frees svd's outputs (u and vt only when asked for) after a failure. */
void factor_drop_svd(gk_array **u, gk_array **sv, gk_array **vt)
{
    gk_array_free(*sv);
    *sv = NULL;
    if (u) {
        gk_array_free(*u);
        gk_array_free(*vt);
        *u = *vt = NULL;
    }
}

/* --- SVD --- */

typedef struct svd_work {
    char job;          /* 'A' (full u, vt), 'S' (reduced) or 'N' (s only) */
    lapack_int u_cols; /* of u: m (full) or k */
    result *u, *sv, *vt;
} svd_work;

static const factor_routine svd_routines[] = {
    {"gesdd", NULL, "the SVD did not converge"},
    {"gesvd", NULL, "the SVD did not converge"},
};

/* gesdd on matrix i (m x n, overwritten), gesvd on a saved copy (in
 * scratch, then gesvd's superb) should it not converge. In column-major
 * order the matrix is a^T (n x m) = conj(V) S U^T: LAPACK's left singular
 * vectors of it, read in C order, are vt (vt_rows x n), its right ones u
 * (m x u_cols). */
static lapack_int svd_matrix(const stack *s, int64_t i, void *context, char *scratch,
                             int *which)
{
    const svd_work *c = context;
    const gk_lapacke *lp = s->lapacke;
    int p = s->precision;
    lapack_int m = (lapack_int)s->rows, n = (lapack_int)s->cols, k = m < n ? m : n;
    if (k == 0) { /* no singular values; the full bases are identities */
        if (c->job == 'A') {
            factor_set_identity(s, factor_result_at(c->u, i), m);
            factor_set_identity(s, factor_result_at(c->vt, i), n);
        }
        return 0;
    }
    lapack_int lda = at_least_one(n);
    lapack_int ldu = c->job == 'N' ? 1 : lda, ldvt = c->job == 'N' ? 1 : at_least_one(c->u_cols);
    /* LAPACK writes nothing of u and vt for job 'N': one element each. */
    char none[2][16];
    char *a = matrix_at(s, i), *sv = factor_result_at(c->sv, i);
    char *u = c->job == 'N' ? none[0] : factor_result_at(c->u, i);
    char *vt = c->job == 'N' ? none[1] : factor_result_at(c->vt, i);
    size_t bytes = (size_t)m * (size_t)n * s->size;
    memcpy(scratch, a, bytes);
    lapack_int info = lp->gesdd[p](LAPACK_COL_MAJOR, c->job, n, m, a, lda, sv, vt, ldu, u, ldvt);
    if (info > 0) {
        *which = 1;
        info = lp->gesvd[p](LAPACK_COL_MAJOR, c->job, c->job, n, m, scratch, lda, sv, vt, ldu,
                            u, ldvt, scratch + bytes);
    }
    return info;
}

gk_status gk_svd(const gk_array *a, bool full_matrices, gk_array **u, gk_array **sv,
                 gk_array **vt)
{
    if (!sv || (!u) != (!vt))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "svd: s must be given, and u and vt both or neither");
    *sv = NULL;
    if (u)
        *u = *vt = NULL;
    gk_status status = check_input(a, "svd", false);
    if (status != GK_OK)
        return status;
    gk_dtype dtype = factor_dtype(a->dtype);
    int64_t rows = a->shape[a->ndim - 2], cols = a->shape[a->ndim - 1];
    if (rows > 0 && cols > 0 && factor_on_device(a, dtype))
        return factor_device_svd(a, dtype, full_matrices, u, sv, vt);
    stack s;
    status = load_stack(a, dtype, u ? "svd" : "svdvals", &s);
    if (status == GK_OK)
        status = check_finite(&s, "the SVD did not converge");
    int64_t m = s.rows, n = s.cols, k = m < n ? m : n;
    int64_t u_cols = full_matrices ? m : k, vt_rows = full_matrices ? n : k;
    char job = !u ? 'N' : full_matrices ? 'A' : 'S';
    result ru = {0}, rs = {0}, rvt = {0};
    if (status == GK_OK)
        status = factor_result_init(&rs, &s, factor_real_dtype(&s), 1, k, 0);
    if (status == GK_OK && u)
        status = factor_result_init(&ru, &s, s.dtype, 2, m, u_cols);
    if (status == GK_OK && u)
        status = factor_result_init(&rvt, &s, s.dtype, 2, vt_rows, n);
    /* scratch: the matrix saved for gesvd, then gesvd's superb (k - 1
     * real values it leaves for the caller) */
    svd_work work = {job, (lapack_int)u_cols, &ru, &rs, &rvt};
    size_t scratch = (size_t)(m * n) * s.size +
                     (size_t)at_least_one(k) * gk_dtype_size(factor_real_dtype(&s));
    if (status == GK_OK)
        status = factor_each_matrix(&s, svd_matrix, &work, scratch, svd_routines,
                                    REDUCTION_ONE_THREAD_ELEMENTS, 0);
    stack_free(&s);
    status = factor_result_upload(&rs, &s, status, sv);
    if (u) {
        status = factor_result_upload(&ru, &s, status, u);
        status = factor_result_upload(&rvt, &s, status, vt);
    }
    if (status != GK_OK)
        factor_drop_svd(u, sv, vt);
    return status;
}

gk_status gk_svdvals(const gk_array *a, gk_array **out)
{
    return gk_svd(a, false, NULL, out, NULL);
}

/* --- QR --- */

typedef struct qr_work {
    lapack_int q_cols; /* complete: q is m x m and r m x n; reduced: m x k and k x n */
    result *q, *r;
} qr_work;

static const factor_routine qr_routines[] = {
    {"geqrf", NULL, "the factorization failed"},
    {"orgqr", "ungqr", "forming q failed"},
};

/* The QR of matrix i; scratch holds tau (k elements). */
static lapack_int qr_matrix(const stack *s, int64_t i, void *context, char *scratch, int *which)
{
    const qr_work *c = context;
    const gk_lapacke *lp = s->lapacke;
    int p = s->precision;
    lapack_int m = (lapack_int)s->rows, n = (lapack_int)s->cols, k = m < n ? m : n;
    char *h = matrix_at(s, i), *hq = factor_result_at(c->q, i), *hr = factor_result_at(c->r, i);
    size_t z = s->size;
    if (k > 0) {
        /* geqrf leaves r in the upper triangle and the reflectors below
         * it. Row-major through LAPACKE, which transposes: its QR of the
         * transpose in column-major order (gelqf) is half as fast in
         * OpenBLAS. */
        lapack_int info = lp->geqrf[p](LAPACK_ROW_MAJOR, m, n, h, at_least_one(n), scratch);
        if (info != 0)
            return info;
        for (lapack_int row = 0; row < k; row++)
            memcpy(hr + ((size_t)row * (size_t)n + (size_t)row) * z,
                   h + ((size_t)row * (size_t)n + (size_t)row) * z, (size_t)(n - row) * z);
        /* orgqr turns the reflectors (the first k columns) into q's
         * columns; those beyond k start as the identity's. */
        for (lapack_int row = 0; row < m; row++)
            memcpy(hq + (size_t)row * (size_t)c->q_cols * z, h + (size_t)row * (size_t)n * z,
                   (size_t)k * z);
    }
    *which = 1;
    if (m == 0 || c->q_cols == 0)
        return 0;
    return lp->orgqr[p](LAPACK_ROW_MAJOR, m, c->q_cols, k, hq, c->q_cols, scratch);
}

gk_status gk_qr(const gk_array *a, bool complete, gk_array **q, gk_array **r)
{
    if (!q || !r)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "qr: q and r must both be given");
    *q = *r = NULL;
    gk_status status = check_input(a, "qr", false);
    if (status != GK_OK)
        return status;
    gk_dtype dtype = factor_dtype(a->dtype);
    int64_t rows = a->shape[a->ndim - 2], cols = a->shape[a->ndim - 1];
    if (rows > 0 && cols > 0 && factor_on_device(a, dtype))
        return factor_device_qr(a, dtype, complete, q, r);
    stack s;
    status = load_stack(a, dtype, "qr", &s);
    lapack_int m = (lapack_int)s.rows, n = (lapack_int)s.cols, k = m < n ? m : n;
    result rq = {0}, rr = {0};
    qr_work work = {complete ? m : k, &rq, &rr};
    lapack_int r_rows = complete ? m : k;
    if (status == GK_OK)
        status = factor_result_init(&rq, &s, s.dtype, 2, m, work.q_cols);
    if (status == GK_OK)
        status = factor_result_init(&rr, &s, s.dtype, 2, r_rows, n);
    if (status == GK_OK)
        status = factor_each_matrix(&s, qr_matrix, &work, (size_t)at_least_one(k) * s.size,
                                    qr_routines, REDUCTION_ONE_THREAD_ELEMENTS, 0);
    stack_free(&s);
    status = factor_result_upload(&rq, &s, status, q);
    status = factor_result_upload(&rr, &s, status, r);
    if (status != GK_OK) {
        gk_array_free(*q);
        gk_array_free(*r);
        *q = *r = NULL;
    }
    return status;
}

/* --- LU: solve, inv, det, slogdet --- */

/* The largest magnitude of a part of matrix i of s; NaN when it holds a
 * NaN. */
static double largest_part(const stack *s, int64_t i)
{
    int64_t parts = matrix_parts(s);
    const char *m = matrix_at(s, i);
    /* one loop per precision, without branches: it runs before every LU
     * of a stack of small matrices, where it is a part of the time */
    bool nan = false;
    double largest = 0;
    if (is_single(s)) {
        const float *p = (const float *)(const void *)m;
        float most = 0;
        for (int64_t j = 0; j < parts; j++) {
            float magnitude = fabsf(p[j]);
            nan |= magnitude != magnitude;
            most = magnitude > most ? magnitude : most;
        }
        largest = most;
    } else {
        const double *p = (const double *)(const void *)m;
        for (int64_t j = 0; j < parts; j++) {
            double magnitude = fabs(p[j]);
            nan |= magnitude != magnitude;
            largest = magnitude > largest ? magnitude : largest;
        }
    }
    return nan ? NAN : largest;
}

/* Multiplies `parts` parts of data, of the stack's precision, by 2^e
 * (exactly, unless the result leaves the dtype's range). */
static void scale_parts(const stack *s, char *data, int64_t parts, int e)
{
    for (int64_t j = 0; j < parts; j++) {
        if (is_single(s))
            ((float *)(void *)data)[j] = ldexpf(((float *)(void *)data)[j], e);
        else
            ((double *)(void *)data)[j] = ldexp(((double *)(void *)data)[j], e);
    }
}

/* The exponent e that brings 2^e * largest into [0.5, 1); 0 for 0, an
 * infinity or NaN, which no power of two brings there. */
static int power_to_one(double largest)
{
    int exponent = 0;
    if (largest > 0 && isfinite(largest))
        frexp(largest, &exponent);
    return -exponent;
}

/* Below this largest part (half the exponent range), a matrix's pivots
 * can be tiny without it being anywhere near singular. */
static double tiny_matrix_limit(const stack *s)
{
    return is_single(s) ? 0x1p-63 : 0x1p-511;
}

/* Multiplies matrix i by the power of two that brings its largest part
 * near 1 when all its parts are tiny (`largest`: largest_part of it);
 * the power's exponent (0: not scaled, the common case). Debian's
 * OpenBLAS (0.3.21) divides by a pivot as a multiplication by its
 * reciprocal, which overflows for a subnormal pivot (1 / 1e-39 in
 * float32), and turned a well-conditioned matrix scaled down to 1e-39
 * into det -inf and a NaN solve. The callers undo it. */
static int scale_if_tiny(const stack *s, int64_t i, double largest)
{
    int exponent = largest < tiny_matrix_limit(s) ? power_to_one(largest) : 0;
    if (exponent != 0)
        scale_parts(s, matrix_at(s, i), matrix_parts(s), exponent);
    return exponent;
}

/* Transposes the n x n matrix m in place (element sizes fixed per case,
 * so that each swap compiles to moves, not calls). */
static void transpose_square(const stack *s, char *m, int64_t n)
{
#define SWAP_ACROSS(SIZE)                                                                          \
    for (int64_t r = 0; r < n; r++)                                                                \
        for (int64_t c = r + 1; c < n; c++) {                                                      \
            char held[SIZE], *x = m + (size_t)(r * n + c) * (SIZE);                                \
            char *y = m + (size_t)(c * n + r) * (SIZE);                                            \
            memcpy(held, x, (SIZE));                                                               \
            memcpy(x, y, (SIZE));                                                                  \
            memcpy(y, held, (SIZE));                                                               \
        }
    switch (s->size) {
    case 4: SWAP_ACROSS(4) break;
    case 8: SWAP_ACROSS(8) break;
    default: SWAP_ACROSS(16) break;
    }
#undef SWAP_ACROSS
}

/* What was done to matrix i before its LU, for the callers to undo. */
typedef struct lu_preparation {
    int exponent; /* multiplied by 2^exponent (scale_if_tiny) */
    bool turned;  /* transposed: column-major order now holds a, not a^T */
} lu_preparation;

/* Matrix i made ready for getrf or gesv (`largest`: its largest_part).
 * Its C-order data is a^T in column-major order, and a^T's LU serves
 * every caller as well as a's, without a copy. But with an infinity the
 * two LUs differ in kind, not in rounding ([[1, inf], [0, 1]]^T has an
 * exactly zero pivot, a a NaN one: det 0 and "singular" against NumPy's
 * NaNs), so a matrix holding one is transposed in place and factored as
 * NumPy factors it. */
static lu_preparation prepare_lu(const stack *s, int64_t i, double largest)
{
    bool turned = isinf(largest);
    if (turned)
        transpose_square(s, matrix_at(s, i), s->rows);
    return (lu_preparation){scale_if_tiny(s, i, largest), turned};
}

/* getrf of matrix i of s in place, made ready by prepare_lu (what it did
 * into *prep); its pivots into `pivots`. */
static lapack_int lu_matrix(const stack *s, int64_t i, lapack_int *pivots, double largest,
                            lu_preparation *prep)
{
    lapack_int n = (lapack_int)s->rows;
    *prep = prepare_lu(s, i, largest);
    return s->lapacke->getrf[s->precision](LAPACK_COL_MAJOR, n, n, matrix_at(s, i),
                                           at_least_one(n), pivots);
}

static const factor_routine solve_routines[] = {
    {"getrf", NULL, "the matrix is singular"},
    {"getrs", NULL, NULL},
};

/* solve's right-hand sides: b's stack, nrhs columns each. */
typedef struct solve_work {
    const stack *b;
    lapack_int nrhs;
} solve_work;

/* Matrix i of the solve. In column-major order it is a^T: factor it, then
 * solve with its transpose ('T', not 'C': the data is not conjugated).
 * scratch: b_i in column-major order (when it has several columns), then
 * the pivots. */
static lapack_int solve_matrix(const stack *s, int64_t i, void *context, char *scratch,
                               int *which)
{
    const solve_work *c = context;
    lapack_int n = (lapack_int)s->rows, nrhs = c->nrhs;
    char *columns = scratch, *b_i = matrix_at(c->b, i);
    lapack_int *pivots = (lapack_int *)(void *)(scratch + (size_t)n * (size_t)nrhs * s->size);
    lu_preparation prep;
    lapack_int info = lu_matrix(s, i, pivots, largest_part(s, i), &prep);
    /* No right-hand sides (b is n x 0): the LU alone says whether a is
     * singular, which raises as it does for any b (NumPy's solve, and the
     * GPU path's, factor a whatever b's width). */
    if (info != 0 || nrhs == 0)
        return info;
    int exponent = prep.exponent;
    /* a scaled a: b scaled into range too (2^eb b), and x = 2^(ea - eb) y
     * from the solution y of 2^ea a y = 2^eb b */
    int b_exponent = exponent != 0 ? power_to_one(largest_part(c->b, i)) : 0;
    if (b_exponent != 0)
        scale_parts(s, b_i, matrix_parts(c->b), b_exponent);
    if (nrhs > 1)
        transpose(s, columns, b_i, n, nrhs, false);
    *which = 1;
    info = s->lapacke->getrs[s->precision](LAPACK_COL_MAJOR, prep.turned ? 'N' : 'T', n, nrhs,
                                           matrix_at(s, i), n, pivots, nrhs > 1 ? columns : b_i,
                                           n);
    if (nrhs > 1)
        transpose(s, b_i, columns, nrhs, n, false);
    if (exponent != 0)
        scale_parts(s, b_i, matrix_parts(c->b), exponent - b_exponent);
    return info;
}

gk_status gk_solve(const gk_array *a, const gk_array *b, gk_array **x)
{
    *x = NULL;
    const gk_array *both[2] = {a, b};
    gk_status status = gk_same_device(2, both, "solve");
    if (status == GK_OK)
        status = check_input(a, "solve", true);
    if (status != GK_OK)
        return status;
    char sa[160], sb[160];
    gk_shape_text(a->ndim, a->shape, sa, sizeof sa);
    gk_shape_text(b->ndim, b->shape, sb, sizeof sb);
    int64_t n = a->shape[a->ndim - 1];
    /* The standard's rule: a 1-d b is one right-hand side (the result is a
     * vector per matrix); otherwise b is a stack of n x k matrices whose
     * batch broadcasts with a's. */
    bool vector = b->ndim == 1;
    if (b->ndim == 0 || b->shape[vector ? 0 : b->ndim - 2] != n)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "solve: a %s and b %s: b must be a vector of length %lld or a stack of "
                       "matrices of %lld rows",
                       sa, sb, (long long)n, (long long)n);
    if (gk_dtype_is_half(b->dtype))
        return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                       "solve: %s right-hand sides are not supported (LAPACK has no 16-bit "
                       "floats); convert with astype(float32) first",
                       gk_dtype_name(b->dtype));
    int64_t nrhs = vector ? 1 : b->shape[b->ndim - 1];
    if (nrhs > INT_MAX)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "solve: b %s has too many columns", sb);
    int a_nb = a->ndim - 2, b_nb = vector ? 0 : b->ndim - 2;
    int nb = a_nb > b_nb ? a_nb : b_nb;
    int64_t batch[GK_MAX_DIMS];
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - a_nb), ib = i - (nb - b_nb);
        int64_t la = ia >= 0 ? a->shape[ia] : 1, lb = ib >= 0 ? b->shape[ib] : 1;
        if (la != lb && la != 1 && lb != 1)
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "solve: a %s and b %s: their stacks' shapes do not broadcast", sa, sb);
        batch[i] = la == 1 ? lb : la;
    }
    /* Both broadcast to the whole batch: b as (*batch, n, nrhs). */
    int64_t a_shape[GK_MAX_DIMS], b_shape[GK_MAX_DIMS];
    memcpy(a_shape, batch, sizeof(int64_t) * (size_t)nb);
    memcpy(b_shape, batch, sizeof(int64_t) * (size_t)nb);
    a_shape[nb] = a_shape[nb + 1] = n;
    b_shape[nb] = n;
    b_shape[nb + 1] = nrhs;
    gk_array *wide_a = NULL, *column = NULL, *wide_b = NULL;
    status = gk_broadcast_to(a, nb + 2, a_shape, &wide_a);
    if (status == GK_OK)
        status = vector ? gk_reshape(b, 2, (int64_t[]){n, 1}, &column) : gk_array_view(b, &column);
    if (status == GK_OK)
        status = gk_broadcast_to(column, nb + 2, b_shape, &wide_b);
    gk_dtype dtype = factor_dtype(gk_promote_types(a->dtype, b->dtype));
    b_shape[nb] = n;
    if (status == GK_OK && factor_on_device(a, dtype)) {
        status = factor_device_solve(wide_a, wide_b, dtype, vector, nb, b_shape, x);
        gk_array_free(wide_a);
        gk_array_free(column);
        gk_array_free(wide_b);
        return status;
    }
    stack sa_host = {0}, sb_host = {0};
    if (status == GK_OK)
        status = load_stack(wide_a, dtype, "solve", &sa_host);
    if (status == GK_OK)
        status = load_stack(wide_b, dtype, "solve", &sb_host);
    gk_array_free(wide_a);
    gk_array_free(column);
    gk_array_free(wide_b);
    /* scratch: one b in column-major order, then the pivots */
    solve_work work = {&sb_host, (lapack_int)nrhs};
    size_t scratch = (size_t)(n * nrhs) * sa_host.size + sizeof(lapack_int) * (size_t)n;
    /* every matrix is factored, even for b with no columns: a singular
     * one raises either way */
    if (status == GK_OK && n > 0)
        status = factor_each_matrix(&sa_host, solve_matrix, &work, scratch, solve_routines,
                                    SMALL_MATRIX_ELEMENTS, (lu_flops(n) + 2.0 * n * n * nrhs) / 2);
    /* x is b's stack; without the column axis for a vector */
    gk_array *solved = NULL;
    status = stack_upload(&sb_host, status, &solved);
    if (status == GK_OK && vector)
        status = gk_reshape(solved, nb + 1, b_shape, x);
    else if (status == GK_OK)
        *x = solved, solved = NULL;
    gk_array_free(solved);
    stack_free(&sa_host);
    stack_free(&sb_host);
    return status;
}

static const factor_routine inv_routines[] = {
    {"gesv", NULL, "the matrix is singular"},
};

/* Matrix i's inverse into the result (context), as NumPy and the GPU
 * path make it: a^T's LU, then op N with the identity (gesv: both in one
 * call, as NumPy's, which for small matrices is half the calls' overhead),
 * which gives inv(a^T) in column-major order: inv(a) in C order; or, for
 * a matrix prepare_lu turned, inv(a) in column-major order, transposed.
 * scratch: the pivots. */
static lapack_int inv_matrix(const stack *s, int64_t i, void *context, char *scratch,
                             int *which)
{
    (void)which;
    lapack_int n = (lapack_int)s->rows, *pivots = (lapack_int *)(void *)scratch;
    char *inverse = factor_result_at(context, i);
    lu_preparation prep = prepare_lu(s, i, largest_part(s, i));
    factor_set_identity(s, inverse, n);
    lapack_int info = s->lapacke->gesv[s->precision](LAPACK_COL_MAJOR, n, n, matrix_at(s, i), n,
                                                     pivots, inverse, n);
    if (prep.turned)
        transpose_square(s, inverse, n);
    /* inv(a) = 2^e inv(2^e a) */
    if (prep.exponent != 0)
        scale_parts(s, inverse, matrix_parts(s), prep.exponent);
    return info;
}

gk_status gk_inv(const gk_array *a, gk_array **out)
{
    *out = NULL;
    gk_status status = check_input(a, "inv", true);
    if (status != GK_OK)
        return status;
    if (factor_on_device(a, factor_dtype(a->dtype)))
        return factor_device_inv(a, factor_dtype(a->dtype), out);
    stack s;
    status = load_stack(a, factor_dtype(a->dtype), "inv", &s);
    lapack_int n = (lapack_int)s.rows;
    result inverses = {0};
    if (status == GK_OK)
        status = factor_result_init(&inverses, &s, s.dtype, 2, n, n);
    if (status == GK_OK && n > 0)
        status = factor_each_matrix(&s, inv_matrix, &inverses, sizeof(lapack_int) * (size_t)n,
                                    inv_routines, SMALL_MATRIX_ELEMENTS,
                                    (lu_flops(n) + 2.0 * n * n * n) / 2);
    stack_free(&s);
    return factor_result_upload(&inverses, &s, status, out);
}

/* Writes sign, log |det| and det of matrix i (each target optional);
 * real dtypes keep the real part (the imaginary one is 0). */
static void store_determinant(const stack *s, int64_t i, const double complex values[3],
                              result *sign, result *logabs, result *det)
{
    bool single = is_single(s);
    result *targets[3] = {sign, logabs, det};
    for (int t = 0; t < 3; t++) {
        if (!targets[t])
            continue;
        char *slot = factor_result_at(targets[t], i);
        bool complex_slot = gk_dtype_is_complex(targets[t]->array->dtype);
        for (int part = 0; part < (complex_slot ? 2 : 1); part++) {
            double v = part ? cimag(values[t]) : creal(values[t]);
            if (single)
                ((float *)slot)[part] = (float)v;
            else
                ((double *)slot)[part] = v;
        }
    }
}

/* What a determinant is made of, from an LU's diagonal and pivots. */
typedef struct lu_determinant {
    double complex unit;    /* the product of d / |d| and the row swaps' signs */
    double complex product; /* the plain product of d, signed by the swaps */
    double log_sum;         /* sum of log |d|: only when asked */
    bool zero;              /* an exactly zero d: a singular matrix */
} lu_determinant;

/* The determinant of U's diagonal d (n elements of s's dtype, `step`
 * elements apart) and the pivots, taking the logarithms only when
 * `logs`: for a stack of small matrices they cost as much as the LU.
 * Real matrices in real arithmetic, where the sign of d is d < 0 (d / |d|
 * would make an infinite d's sign NaN); a NaN d makes it NaN. */
static lu_determinant determinant_from_lu(const stack *s, const char *d_start, int64_t step,
                                          const lapack_int *pivots, bool logs)
{
    bool odd = false, zero = false, real = !factor_is_complex(s);
    double log_sum = 0, real_unit = 1, real_product = 1;
    double complex unit = 1, product = 1;
    for (int64_t j = 0; j < s->rows; j++) {
        odd ^= pivots[j] != j + 1; /* a row swap (pivots count from 1) */
        double magnitude;
        if (real) {
            double d = part_at(s, d_start, j * step);
            magnitude = fabs(d);
            zero = zero || d == 0;
            real_product *= d;
            real_unit *= d < 0 ? -1 : d >= 0 ? 1 : NAN;
        } else {
            double complex d = element(s, d_start, j * step);
            magnitude = cabs(d);
            zero = zero || magnitude == 0;
            product *= d;
            unit *= zero ? 1 : d / magnitude;
        }
        if (logs)
            log_sum += log(magnitude);
    }
    if (real)
        unit = real_unit, product = real_product;
    /* a singular matrix: exactly 0 (never -0), and log 0 = -inf, as
     * NumPy gives whatever else the diagonal holds */
    return (lu_determinant){zero ? 0 : odd ? -unit : unit, zero ? 0 : odd ? -product : product,
                            zero ? -INFINITY : log_sum, zero};
}

/* sign * e^log_sum, multiplied out in real arithmetic as NumPy does, so
 * that an overflowing determinant has NumPy's infinities (C's complex
 * multiply would recover other ones). */
static double complex determinant_from_logs(double complex sign, double log_sum)
{
    double e = exp(log_sum);
    return make_complex(creal(sign) * e - cimag(sign) * 0.0, creal(sign) * 0.0 + cimag(sign) * e);
}

/* lu's log |det| and det divided by 2^shift (a LU of 2^e a has the
 * determinant 2^(n e) det(a)). */
static void unscale_determinant(lu_determinant *lu, int shift)
{
    if (shift == 0)
        return;
    lu->log_sum -= shift * M_LN2;
    lu->product =
        make_complex(ldexp(creal(lu->product), -shift), ldexp(cimag(lu->product), -shift));
}

/* Matrix i's sign (a unit complex number; 0 when singular), log |det| and
 * det into the results given, from its LU factors: U's diagonal d (n
 * elements of s's dtype, `step` elements apart) and the pivots, of the
 * matrix times 2^exponent. det is the product of the diagonal, negated
 * once per row swap (it keeps more precision than sign * exp(log |det|));
 * where that product overflows the dtype, underflows on the way or is
 * NaN, det is NumPy's sign * exp(log |det|). */
static void determinant_of(const stack *s, int64_t i, const char *d_start, int64_t step,
                           const lapack_int *pivots, int exponent, result *sign, result *logabs,
                           result *det)
{
    int shift = (int)s->rows * exponent;
    lu_determinant lu = determinant_from_lu(s, d_start, step, pivots, logabs != NULL);
    unscale_determinant(&lu, shift);
    double complex product = lu.product;
    double largest = is_single(s) ? FLT_MAX : DBL_MAX;
    /* beyond the dtype's range, or 0 from an underflow on the way */
    bool lost = !(fabs(creal(product)) <= largest && fabs(cimag(product)) <= largest) ||
                (product == 0 && !lu.zero);
    if (det && lost) {
        if (!logabs) {
            lu = determinant_from_lu(s, d_start, step, pivots, true);
            unscale_determinant(&lu, shift);
        }
        product = determinant_from_logs(lu.unit, lu.log_sum);
    }
    store_determinant(s, i, (double complex[3]){lu.unit, lu.log_sum, product}, sign, logabs, det);
}

/* NaN for sign, log |det| and det of matrix i: a matrix holding NaN's, on
 * every device. */
static void set_nan(const stack *s, int64_t i, result *sign, result *logabs, result *det)
{
    double complex nan = make_complex(NAN, NAN); /* NAN alone has imaginary part 0 */
    store_determinant(s, i, (double complex[3]){nan, NAN, nan}, sign, logabs, det);
}

/* The results a determinant fills (each optional). */
typedef struct determinant_work {
    result *sign, *logabs, *det;
} determinant_work;

/* info > 0 is an exactly singular U: det 0, not an error */
static const factor_routine determinant_routines[] = {{"getrf", NULL, NULL}};

/* Matrix i's determinant from its LU; scratch: the pivots. A matrix
 * holding NaN has NaN for all three, as on the GPU (LAPACKs differ on
 * whether a NaN pivot is singular: NumPy's says det 0 for some). */
static lapack_int determinant_matrix(const stack *s, int64_t i, void *context, char *scratch,
                                     int *which)
{
    (void)which;
    const determinant_work *c = context;
    lapack_int *pivots = (lapack_int *)(void *)scratch, info = 0;
    double largest = largest_part(s, i);
    if (isnan(largest)) {
        set_nan(s, i, c->sign, c->logabs, c->det);
        return 0;
    }
    lu_preparation prep = {0};
    if (s->rows > 0 && (info = lu_matrix(s, i, pivots, largest, &prep)) < 0)
        return info;
    determinant_of(s, i, matrix_at(s, i), s->rows + 1, pivots, prep.exponent, c->sign, c->logabs,
                   c->det);
    return info;
}

/* sign, log |det| and det (each optional) of every matrix of a: on the
 * device through its solver (factor_gpu.c), else on the host through
 * LAPACK. */
static gk_status determinants(const gk_array *a, const char *function, gk_array **sign,
                              gk_array **logabs, gk_array **det)
{
    gk_status status = check_input(a, function, true);
    if (status != GK_OK)
        return status;
    gk_dtype dtype = factor_dtype(a->dtype);
    if (factor_on_device(a, dtype))
        return factor_device_determinants(a, dtype, function, sign, logabs, det);
    stack s = {0};
    result results[3] = {{0}};
    gk_array **outs[3] = {sign, logabs, det};
    status = load_stack(a, dtype, function, &s);
    for (int i = 0; i < 3 && status == GK_OK; i++)
        if (outs[i])
            status = factor_result_init(&results[i], &s, i == 1 ? factor_real_dtype(&s) : s.dtype,
                                        0, 0, 0);
    determinant_work work = {sign ? &results[0] : NULL, logabs ? &results[1] : NULL,
                             det ? &results[2] : NULL};
    if (status == GK_OK)
        status = factor_each_matrix(&s, determinant_matrix, &work,
                                    sizeof(lapack_int) * (size_t)at_least_one(s.rows),
                                    determinant_routines, SMALL_MATRIX_ELEMENTS, lu_flops(s.rows));
    stack_free(&s);
    for (int i = 0; i < 3; i++)
        if (outs[i])
            status = factor_result_upload(&results[i], &s, status, outs[i]);
        else
            gk_array_free(results[i].array);
    return status;
}

gk_status gk_det(const gk_array *a, gk_array **out)
{
    *out = NULL;
    return determinants(a, "det", NULL, NULL, out);
}

gk_status gk_slogdet(const gk_array *a, gk_array **sign, gk_array **logabsdet)
{
    *sign = *logabsdet = NULL;
    gk_status status = determinants(a, "slogdet", sign, logabsdet, NULL);
    if (status != GK_OK) {
        gk_array_free(*sign);
        gk_array_free(*logabsdet);
        *sign = *logabsdet = NULL;
    }
    return status;
}

/* --- Cholesky --- */

static const factor_routine cholesky_routines[] = {
    {"potrf", NULL, "the matrix is not positive definite"},
};

/* Matrix i's factor in place; context: whether the upper one is asked.
 * In column-major order the matrix is a^T = conj(a) (Hermitian): its
 * upper triangle is a's lower one, and its factor U (conj(a) = U^H U)
 * read in C order is U^T, the l of a = l l^H; and the other way round for
 * upper. */
static lapack_int cholesky_matrix(const stack *s, int64_t i, void *context, char *scratch,
                                  int *which)
{
    (void)scratch, (void)which;
    bool upper = *(const bool *)context;
    lapack_int n = (lapack_int)s->rows;
    char *h = matrix_at(s, i);
    lapack_int info = s->lapacke->potrf[s->precision](LAPACK_COL_MAJOR, upper ? 'L' : 'U', n, h, n);
    /* potrf leaves the other triangle as it was: zero it */
    for (lapack_int row = 0; row < n && info == 0; row++) {
        lapack_int from = upper ? 0 : row + 1, to = upper ? row : n;
        memset(h + ((size_t)row * (size_t)n + (size_t)from) * s->size, 0,
               (size_t)(to - from) * s->size);
    }
    return info;
}

gk_status gk_cholesky(const gk_array *a, bool upper, gk_array **out)
{
    *out = NULL;
    gk_status status = check_input(a, "cholesky", true);
    if (status != GK_OK)
        return status;
    if (factor_on_device(a, factor_dtype(a->dtype)))
        return factor_device_cholesky(a, factor_dtype(a->dtype), upper, out);
    stack s;
    status = load_stack(a, factor_dtype(a->dtype), "cholesky", &s);
    if (status == GK_OK && s.rows > 0)
        status = factor_each_matrix(&s, cholesky_matrix, &upper, 0, cholesky_routines,
                                    SMALL_MATRIX_ELEMENTS, lu_flops(s.rows) / 2);
    return stack_upload(&s, status, out);
}

/* --- eigenvalues --- */

static const factor_routine eigh_routines[] = {
    {"syevd", "heevd", "the eigenvalues did not converge"},
};

typedef struct eigh_work {
    bool vectors;
    result *w;
    /* syevd's or heevd's workspaces, in each matrix's scratch (eigh_sizes):
     * work (elements of the dtype), rwork (real ones; complex only), iwork */
    lapack_int lwork, lrwork, liwork;
} eigh_work;

/* LAPACK's least workspaces for ?syevd and ?heevd of n x n matrices (its
 * documentation), in elements: work, rwork (heevd's), iwork. */
static void eigh_least(int64_t n, bool vectors, bool is_complex, int64_t least[3])
{
    if (n <= 1) {
        least[0] = least[1] = least[2] = 1;
        return;
    }
    least[0] = is_complex ? (vectors ? 2 * n + n * n : n + 1) : (vectors ? 1 + 6 * n + 2 * n * n
                                                                      : 2 * n + 1);
    least[1] = is_complex ? (vectors ? 1 + 5 * n + 2 * n * n : n) : 0;
    least[2] = vectors ? 3 + 5 * n : 1;
}

/* The workspaces for the stack's matrices into c, and the scratch they
 * take: what LAPACK's query asks (the optimal sizes, for its blocked
 * reductions), never below its documented least (the query gives sizes as
 * floats: syevd's 1 + 6n + 2n^2 = 16837401 for n = 2900 came back
 * 16837400, which syevd then refused), and work n elements longer: Debian's LAPACK (3.11, on
 * OpenBLAS 0.3.21) reads up to n past what heevd asks when it computes
 * eigenvalues only, which faulted where the heap ends there (eigvalsh of
 * 512 x 512 complex64 from a Python thread, whose arena is small). */
static gk_status eigh_sizes(const stack *s, eigh_work *c, size_t *scratch)
{
    int64_t n = s->rows, least[3], sizes[3] = {0, 0, 0};
    bool is_complex = factor_is_complex(s);
    eigh_least(n, c->vectors, is_complex, least);
    double work[2] = {0}, rwork = 0; /* room for a complex128 and a double */
    float rwork_single = 0;
    lapack_int iwork = 0, info, lda = at_least_one(n);
    int which = is_single(s) ? 0 : 1;
    char jobz = c->vectors ? 'V' : 'N';
    if (is_complex)
        info = s->lapacke->heevd_work[which](
            LAPACK_COL_MAJOR, jobz, 'U', (lapack_int)n, NULL, lda, NULL, work, -1,
            is_single(s) ? (void *)&rwork_single : (void *)&rwork, -1, &iwork, -1);
    else
        info = s->lapacke->syevd_work[which](LAPACK_COL_MAJOR, jobz, 'U', (lapack_int)n, NULL,
                                             lda, NULL, work, -1, &iwork, -1);
    if (info == 0) {
        sizes[0] = (int64_t)part_at(s, (const char *)work, 0);
        sizes[1] = is_complex ? (int64_t)(is_single(s) ? rwork_single : rwork) : 0;
        sizes[2] = iwork;
    }
    for (int k = 0; k < 3; k++)
        sizes[k] = sizes[k] > least[k] ? sizes[k] : least[k];
    sizes[0] += n;
    for (int k = 0; k < 3; k++)
        if (sizes[k] > INT_MAX)
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "%s: %lld x %lld matrices need more workspace than LAPACK's 32-bit "
                           "sizes can give",
                           s->function, (long long)n, (long long)n);
    c->lwork = (lapack_int)sizes[0], c->lrwork = (lapack_int)sizes[1];
    c->liwork = (lapack_int)sizes[2];
    *scratch = (size_t)sizes[0] * s->size + (size_t)sizes[1] * (s->size / 2) +
               (size_t)(sizes[2] + 1) * sizeof(lapack_int);
    return GK_OK;
}

/* Matrix i's eigenvalues into w, and its vectors in place. In
 * column-major order the matrix is a^T = conj(a): its upper triangle is
 * a's lower one (NumPy's default UPLO='L'), its eigenvalues are a's and
 * its eigenvectors the columns of conj(V), which in C order are the rows
 * of the buffer: conjugated back, the buffer is V's transpose. scratch:
 * work, rwork, then iwork (aligned for lapack_int). */
static lapack_int eigh_matrix(const stack *s, int64_t i, void *context, char *scratch,
                              int *which)
{
    (void)which;
    const eigh_work *c = context;
    lapack_int n = (lapack_int)s->rows, info;
    char *h = matrix_at(s, i), jobz = c->vectors ? 'V' : 'N';
    char *rwork = scratch + (size_t)c->lwork * s->size;
    size_t iwork_at = (size_t)c->lwork * s->size + (size_t)c->lrwork * (s->size / 2);
    iwork_at += (sizeof(lapack_int) - iwork_at % sizeof(lapack_int)) % sizeof(lapack_int);
    lapack_int *iwork = (lapack_int *)(void *)(scratch + iwork_at);
    int precision = is_single(s) ? 0 : 1;
    if (factor_is_complex(s))
        info = s->lapacke->heevd_work[precision](LAPACK_COL_MAJOR, jobz, 'U', n, h, n,
                                                 factor_result_at(c->w, i), scratch, c->lwork,
                                                 rwork, c->lrwork, iwork, c->liwork);
    else
        info = s->lapacke->syevd_work[precision](LAPACK_COL_MAJOR, jobz, 'U', n, h, n,
                                                 factor_result_at(c->w, i), scratch, c->lwork,
                                                 iwork, c->liwork);
    for (int64_t j = 1; info == 0 && c->vectors && factor_is_complex(s) && j < 2 * n * n;
         j += 2) {
        if (s->precision == GK_LAPACK_C)
            ((float *)h)[j] = -((float *)h)[j];
        else
            ((double *)h)[j] = -((double *)h)[j];
    }
    return info;
}

gk_status gk_eigh(const gk_array *a, gk_array **values, gk_array **vectors)
{
    *values = NULL;
    if (vectors)
        *vectors = NULL;
    const char *function = vectors ? "eigh" : "eigvalsh";
    gk_status status = check_input(a, function, true);
    if (status != GK_OK)
        return status;
    if (factor_on_device(a, factor_dtype(a->dtype)))
        return factor_device_eigh(a, factor_dtype(a->dtype), values, vectors);
    stack s;
    status = load_stack(a, factor_dtype(a->dtype), function, &s);
    lapack_int n = (lapack_int)s.rows;
    result w = {0};
    if (status == GK_OK)
        status = factor_result_init(&w, &s, factor_real_dtype(&s), 1, n, 0);
    eigh_work work = {vectors != NULL, &w, 0, 0, 0};
    size_t scratch = 0;
    if (status == GK_OK && n > 0)
        status = eigh_sizes(&s, &work, &scratch);
    if (status == GK_OK && n > 0)
        status = factor_each_matrix(&s, eigh_matrix, &work, scratch, eigh_routines,
                                    REDUCTION_ONE_THREAD_ELEMENTS, 0);
    status = factor_result_upload(&w, &s, status, values);
    if (status == GK_OK && vectors) {
        /* V as the transposed view of the buffer (column-major, as
         * PyTorch's eigh gives it): no transposing copy */
        gk_array *stored = NULL;
        status = stack_upload(&s, status, &stored);
        if (status == GK_OK)
            status = gk_matrix_transpose(stored, vectors);
        gk_array_free(stored);
    }
    stack_free(&s);
    if (status != GK_OK) {
        gk_array_free(*values);
        *values = NULL;
    }
    return status;
}

/* A real geev's eigenvectors as complex columns: where wi[j] > 0, columns j
 * and j + 1 of vr are the real and imaginary parts of the pair's first
 * vector, and the second is its conjugate. */
static void pair_vectors(bool single, lapack_int n, const char *wi, const char *vr, char *out)
{
    for (lapack_int j = 0; j < n; j++) {
        double imag = single ? ((const float *)wi)[j] : ((const double *)wi)[j];
        bool pair = imag > 0 && j + 1 < n;
        for (lapack_int row = 0; row < n; row++) {
            size_t at = (size_t)row * (size_t)n + (size_t)j;
            double re = single ? ((const float *)vr)[at] : ((const double *)vr)[at];
            double im = 0;
            if (pair)
                im = single ? ((const float *)vr)[at + 1] : ((const double *)vr)[at + 1];
            double parts[4] = {re, im, re, -im}; /* column j, then j + 1 */
            for (int c = 0; c < (pair ? 2 : 1); c++) {
                size_t slot = 2 * (at + (size_t)c);
                if (single) {
                    ((float *)out)[slot] = (float)parts[2 * c];
                    ((float *)out)[slot + 1] = (float)parts[2 * c + 1];
                } else {
                    ((double *)out)[slot] = parts[2 * c];
                    ((double *)out)[slot + 1] = parts[2 * c + 1];
                }
            }
        }
        if (pair)
            j++;
    }
}

static const factor_routine eig_routines[] = {
    {"geev", NULL, "the eigenvalues did not converge"},
};

typedef struct eig_work {
    bool vectors;
    result *w, *v; /* complex: the values, the vectors (when asked) */
} eig_work;

/* Matrix i's eigenvalues (and vectors) through geev. scratch, for a real
 * matrix: geev's outputs before they become complex (wr and wi, vr). */
static lapack_int eig_matrix(const stack *s, int64_t i, void *context, char *scratch,
                             int *which)
{
    (void)which;
    const eig_work *c = context;
    lapack_int n = (lapack_int)s->rows;
    bool single = is_single(s);
    int half = single ? 0 : 1; /* geev's tables: [0] single, [1] double */
    char jobvr = c->vectors ? 'V' : 'N', none[16];
    char *w = factor_result_at(c->w, i);
    if (factor_is_complex(s))
        return s->lapacke->geev_complex[half](LAPACK_ROW_MAJOR, 'N', jobvr, n, matrix_at(s, i), n,
                                              w, none, 1,
                                              c->vectors ? factor_result_at(c->v, i) : none, n);
    size_t real_size = single ? sizeof(float) : sizeof(double);
    char *wr = scratch, *wi = wr + (size_t)n * real_size, *vr = wi + (size_t)n * real_size;
    lapack_int info = s->lapacke->geev_real[half](LAPACK_ROW_MAJOR, 'N', jobvr, n,
                                                  matrix_at(s, i), n, wr, wi, none, 1, vr, n);
    for (lapack_int j = 0; j < n && info == 0; j++) {
        if (single) {
            ((float *)w)[2 * j] = ((float *)wr)[j];
            ((float *)w)[2 * j + 1] = ((float *)wi)[j];
        } else {
            ((double *)w)[2 * j] = ((double *)wr)[j];
            ((double *)w)[2 * j + 1] = ((double *)wi)[j];
        }
    }
    if (info == 0 && c->vectors)
        pair_vectors(single, n, wi, vr, factor_result_at(c->v, i));
    return info;
}

/* eig calls LAPACKE's row-major geev, which transposes the matrix in and
 * the vectors out: a few milliseconds of the second a 1024 x 1024 takes. */
gk_status gk_eig(const gk_array *a, gk_array **values, gk_array **vectors)
{
    *values = NULL;
    if (vectors)
        *vectors = NULL;
    const char *function = vectors ? "eig" : "eigvals";
    gk_status status = check_input(a, function, true);
    if (status != GK_OK)
        return status;
    stack s;
    status = load_stack(a, factor_dtype(a->dtype), function, &s);
    if (status == GK_OK)
        status = check_finite(&s, "the eigenvalues cannot be computed");
    lapack_int n = (lapack_int)s.rows;
    bool single = is_single(&s);
    gk_dtype complex_dtype = single ? GK_COMPLEX64 : GK_COMPLEX128;
    result w = {0}, v = {0};
    if (status == GK_OK)
        status = factor_result_init(&w, &s, complex_dtype, 1, n, 0);
    if (status == GK_OK && vectors)
        status = factor_result_init(&v, &s, complex_dtype, 2, n, n);
    eig_work work = {vectors != NULL, &w, &v};
    size_t real_size = single ? sizeof(float) : sizeof(double);
    size_t scratch = factor_is_complex(&s) ? 0 : (size_t)(2 * n + n * n) * real_size;
    if (status == GK_OK && n > 0)
        status = factor_each_matrix(&s, eig_matrix, &work, scratch, eig_routines,
                                    REDUCTION_ONE_THREAD_ELEMENTS, 0);
    stack_free(&s);
    status = factor_result_upload(&w, &s, status, values);
    if (vectors)
        status = factor_result_upload(&v, &s, status, vectors);
    if (status != GK_OK) {
        gk_array_free(*values);
        *values = NULL;
    }
    return status;
}
