/* The factorizations on a GPU, through its dense solver (the backend's
 * `solver`: cuSOLVER on CUDA): solve, inv, det, slogdet, cholesky, eigh
 * and svd of arrays on a device that has one run there (factor.c asks
 * factor_on_device first). The stack is copied once into a private
 * contiguous array on the device (the solver overwrites it), the same
 * column-major identities as factor.c's LAPACK calls apply, and the infos
 * of all the matrices come back in one copy, read once the work that
 * follows the routine is queued too: the host waits for the device once,
 * at the end, and a failure discards what was made. */
#include "compute/factor.h"

#include "compute/backend.h"
#include "core/error.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Whether a's device has a dense solver (asked with a call of no matrices,
 * which loads the library). */
bool factor_on_device(const gk_array *a, gk_dtype dtype)
{
    const gk_backend *backend = gk_array_backend(a);
    if (gk_array_device(a).kind == GK_DEVICE_CPU || !backend->solver)
        return false;
    gk_solver_call probe = {.op = GK_SOLVER_LU, .dtype = dtype};
    return backend->solver(gk_array_device(a), &probe) == GK_OK;
}

/* Queues `call` on s's device, its infos (one per matrix) into a new
 * device array, *infos: read them with check_infos, or free them (the
 * device is done with them before any reuse). */
static gk_status queue_solver(const stack *s, gk_solver_call *call, gk_array **infos)
{
    *infos = NULL;
    if (call->count == 0 || call->n == 0)
        return GK_OK;
    int64_t count = call->count;
    gk_status status = gk_empty(s->device, GK_INT32, 1, &count, infos);
    if (status == GK_OK) {
        call->info = gk_array_data(*infos);
        status = gk_backend_of(s->device.kind)->solver(s->device, call);
    }
    return status;
}

/* Reads queue_solver's infos back, which waits for the device, and frees
 * them: the first > 0 is `why` (GK_ERR_LINALG naming the matrix; why
 * NULL: not an error). A status that is not GK_OK is returned as it is,
 * with the infos freed unread. */
static gk_status check_infos(const stack *s, gk_status status, gk_array *infos,
                             const char *routine, const char *complex_routine, const char *why)
{
    if (status != GK_OK || !infos) {
        gk_array_free(infos);
        return status;
    }
    int64_t count = gk_array_shape(infos)[0];
    int32_t *host = malloc(sizeof *host * (size_t)count);
    status = host ? gk_to_host(infos, host, sizeof *host * (size_t)count)
                  : gk_fail(GK_ERR_OUT_OF_MEMORY, "%s: out of host memory", s->function);
    for (int64_t i = 0; i < count && status == GK_OK; i++)
        status = factor_lapack_status(s, i, host[i], routine, complex_routine, why);
    free(host);
    gk_array_free(infos);
    return status;
}

/* Queues `call` for a routine whose info can only report a bad argument,
 * which is not read (nothing waits for the device). */
static gk_status queue_unread(const stack *s, gk_solver_call *call)
{
    gk_array *infos = NULL;
    gk_status status = queue_solver(s, call, &infos);
    gk_array_free(infos); /* the device is done with it before any reuse */
    return status;
}

/* One flag per matrix of a's stack, on the device: whether the matrix
 * holds a NaN (`op` GK_ISNAN), or whether it is all finite (GK_ISFINITE).
 * A reduction on the device reads the input once, far less than any
 * factorization, and is needed because cuSOLVER's routines do not carry
 * NaN through as LAPACK does: getrf's pivot search passes over it, and
 * gesvd can return finite values for a matrix holding NaN. */
static gk_status device_matrix_mask(const gk_array *a, gk_op op, gk_array **per_matrix)
{
    int axes[2] = {a->ndim - 2, a->ndim - 1};
    gk_array *mask = NULL;
    gk_status status = gk_unary(op, a, &mask);
    if (status == GK_OK)
        status = op == GK_ISNAN ? gk_any(mask, 2, axes, false, per_matrix)
                                : gk_all(mask, 2, axes, false, per_matrix);
    gk_array_free(mask);
    return status;
}

/* device_matrix_mask's flags read back in one copy, true for a matrix
 * holding NaN (GK_ISNAN) or a value that is not finite (GK_ISFINITE). */
static gk_status device_matrix_flags(const gk_array *a, const stack *s, gk_op op, bool **flags)
{
    *flags = NULL;
    gk_array *per_matrix = NULL;
    gk_status status = device_matrix_mask(a, op, &per_matrix);
    if (status == GK_OK && !(*flags = malloc(sizeof **flags * (size_t)(s->count ? s->count : 1))))
        status = gk_fail(GK_ERR_OUT_OF_MEMORY, "%s: out of host memory", s->function);
    if (status == GK_OK && s->count)
        status = gk_to_host(per_matrix, *flags, sizeof **flags * (size_t)s->count);
    /* all(isfinite) is true for a good matrix: flag the others */
    for (int64_t i = 0; status == GK_OK && op == GK_ISFINITE && i < s->count; i++)
        (*flags)[i] = !(*flags)[i];
    gk_array_free(per_matrix);
    if (status != GK_OK) {
        free(*flags);
        *flags = NULL;
    }
    return status;
}

/* A stack of n x n identities of s's batch shape, made on the device (one,
 * broadcast and copied): no upload. */
static gk_status device_identities(const stack *s, gk_dtype dtype, int64_t n, gk_array **out)
{
    gk_array *eye = NULL, *stretched = NULL;
    gk_status status = gk_eye(s->device, dtype, n, &eye);
    if (status == GK_OK && s->batch_ndim == 0) {
        *out = eye;
        return GK_OK;
    }
    int64_t shape[GK_MAX_DIMS];
    memcpy(shape, s->batch, sizeof(int64_t) * (size_t)s->batch_ndim);
    shape[s->batch_ndim] = shape[s->batch_ndim + 1] = n;
    if (status == GK_OK)
        status = gk_broadcast_to(eye, s->batch_ndim + 2, shape, &stretched);
    if (status == GK_OK)
        status = gk_copy(stretched, out);
    gk_array_free(eye);
    gk_array_free(stretched);
    return status;
}

/* solve on the device: a's LU (of a^T, as stored), then op T with b in
 * column-major order (a vector already is; a stack of matrices is
 * transposed into it and back). A singular matrix is found once both are
 * queued: the host waits for the device once. */
gk_status factor_device_solve(const gk_array *wide_a, const gk_array *wide_b, gk_dtype dtype,
                              bool vector, int nb, const int64_t *b_shape, gk_array **x)
{
    stack s;
    factor_describe_stack(wide_a, dtype, "solve", &s);
    int64_t n = s.rows, nrhs = wide_b->shape[wide_b->ndim - 1];
    gk_array *lu = NULL, *columns = NULL, *b = NULL, *pivots = NULL, *solved = NULL;
    gk_status status = gk_copy_as(wide_a, dtype, &lu);
    if (status == GK_OK)
        status = nrhs == 1 ? gk_array_view(wide_b, &columns) : gk_matrix_transpose(wide_b, &columns);
    if (status == GK_OK)
        status = gk_copy_as(columns, dtype, &b);
    int64_t pivot_count = s.count * n;
    if (status == GK_OK)
        status = gk_empty(s.device, GK_INT32, 1, &pivot_count, &pivots);
    gk_solver_call call = {.op = GK_SOLVER_LU, .dtype = dtype, .count = s.count, .n = n,
                           .a = lu ? gk_array_data(lu) : NULL, .pivots = pivots ? gk_array_data(pivots) : NULL};
    gk_array *lu_infos = NULL;
    if (status == GK_OK)
        status = queue_solver(&s, &call, &lu_infos);
    if (status == GK_OK && nrhs > 0) {
        call.op = GK_SOLVER_LU_SOLVE;
        call.nrhs = nrhs;
        call.flag = true;
        call.b = gk_array_data(b);
        status = queue_unread(&s, &call); /* getrs: only bad arguments */
    }
    /* getrf's infos, read with getrs queued behind it: one wait for both */
    status = check_infos(&s, status, lu_infos, "getrf", NULL, "the matrix is singular");
    if (status == GK_OK && nrhs > 1)
        status = gk_matrix_transpose(b, &solved);
    else if (status == GK_OK)
        status = gk_array_view(b, &solved);
    if (status == GK_OK)
        status = gk_reshape(solved, vector ? nb + 1 : nb + 2, b_shape, x);
    gk_array *all[] = {lu, columns, b, pivots, solved};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_array_free(all[i]);
    return status;
}

/* Whether the inverses of s's matrices come from their LU in one batched
 * call (GK_SOLVER_LU_INVERT): a stack, whose LU is batched too, of no
 * more matrices than the batched routines count (an int). */
static bool has_batched_inverse(const stack *s, int64_t n)
{
    gk_solver_call probe = {.op = GK_SOLVER_LU_INVERT, .dtype = s->dtype, .n = n};
    return s->count > 1 && s->count <= INT_MAX &&
           gk_backend_of(s->device.kind)->solver(s->device, &probe) == GK_OK;
}

/* inv on the device: a's LU (of a^T), then the inverse of that, which is
 * inv(a^T) in column-major order: inv(a) in C order. A stack of small
 * matrices is inverted from its LU in one call (getriBatched); otherwise
 * op N with the identity solves for it. A singular matrix is found once
 * all of it is queued: the host waits for the device once. */
gk_status factor_device_inv(const gk_array *a, gk_dtype dtype, gk_array **out)
{
    stack s;
    factor_describe_stack(a, dtype, "inv", &s);
    *out = NULL;
    int64_t n = s.rows, pivot_count = s.count * n;
    bool batched = has_batched_inverse(&s, n);
    gk_array *lu = NULL, *pivots = NULL;
    gk_status status = gk_copy_as(a, dtype, &lu);
    if (status == GK_OK)
        status = gk_empty(s.device, GK_INT32, 1, &pivot_count, &pivots);
    gk_solver_call call = {.op = GK_SOLVER_LU, .dtype = dtype, .count = s.count, .n = n,
                           .a = lu ? gk_array_data(lu) : NULL, .pivots = pivots ? gk_array_data(pivots) : NULL};
    gk_array *lu_infos = NULL;
    if (status == GK_OK)
        status = queue_solver(&s, &call, &lu_infos);
    /* the inverses' array, or the identities that getrs overwrites with them */
    if (status == GK_OK && batched)
        status = gk_empty(s.device, dtype, gk_array_ndim(lu), gk_array_shape(lu), out);
    else if (status == GK_OK)
        status = device_identities(&s, dtype, n, out);
    if (status == GK_OK && batched) {
        call.op = GK_SOLVER_LU_INVERT;
        call.c = gk_array_data(*out);
    } else if (status == GK_OK) {
        call.op = GK_SOLVER_LU_SOLVE;
        call.nrhs = n;
        call.b = gk_array_data(*out);
    }
    if (status == GK_OK)
        status = queue_unread(&s, &call); /* only bad arguments */
    /* getrf's infos, read with the inverse queued behind it: one wait */
    status = check_infos(&s, status, lu_infos, "getrf", NULL, "the matrix is singular");
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    gk_array_free(lu);
    gk_array_free(pivots);
    return status;
}

/* cholesky on the device: potrf on the other triangle of a^T (see
 * gk_cholesky), then the triangle not asked for zeroed; potrf's infos are
 * read with that queued behind it (here and below, the host waits for
 * the device once, at the end). */
gk_status factor_device_cholesky(const gk_array *a, gk_dtype dtype, bool upper, gk_array **out)
{
    stack s;
    factor_describe_stack(a, dtype, "cholesky", &s);
    gk_array *factor = NULL, *infos = NULL;
    gk_status status = gk_copy_as(a, dtype, &factor);
    gk_solver_call call = {.op = GK_SOLVER_CHOLESKY, .dtype = dtype, .count = s.count,
                           .n = s.rows, .flag = !upper, .a = factor ? gk_array_data(factor) : NULL};
    if (status == GK_OK)
        status = queue_solver(&s, &call, &infos);
    if (status == GK_OK)
        status = upper ? gk_triu(factor, 0, out) : gk_tril(factor, 0, out);
    status = check_infos(&s, status, infos, "potrf", NULL, "the matrix is not positive definite");
    gk_array_free(factor);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

/* eigh on the device: syevd/heevd on the upper triangle of a^T = conj(a);
 * its vectors, conjugated back, are V's transpose (see gk_eigh). */
gk_status factor_device_eigh(const gk_array *a, gk_dtype dtype, gk_array **values,
                             gk_array **vectors)
{
    stack s;
    factor_describe_stack(a, dtype, vectors ? "eigh" : "eigvalsh", &s);
    gk_array *work = NULL, *conjugated = NULL;
    int64_t w_shape[GK_MAX_DIMS];
    memcpy(w_shape, s.batch, sizeof(int64_t) * (size_t)s.batch_ndim);
    w_shape[s.batch_ndim] = s.rows;
    gk_status status = gk_copy_as(a, dtype, &work);
    if (status == GK_OK)
        status = gk_empty(s.device, gk_dtype_component(dtype), s.batch_ndim + 1, w_shape, values);
    gk_solver_call call = {.op = GK_SOLVER_EIGH, .dtype = dtype, .count = s.count, .n = s.rows,
                           .flag = true, .vectors = vectors != NULL,
                           .a = work ? gk_array_data(work) : NULL,
                           .w = *values ? gk_array_data(*values) : NULL};
    gk_array *infos = NULL;
    if (status == GK_OK)
        status = queue_solver(&s, &call, &infos);
    if (status == GK_OK && vectors && factor_is_complex(&s))
        status = gk_unary(GK_CONJ, work, &conjugated);
    if (status == GK_OK && vectors)
        status = gk_matrix_transpose(conjugated ? conjugated : work, vectors);
    status = check_infos(&s, status, infos, "syevd", "heevd", "the eigenvalues did not converge");
    gk_array_free(work);
    gk_array_free(conjugated);
    if (status != GK_OK) {
        gk_array_free(*values);
        *values = NULL;
        if (vectors) {
            gk_array_free(*vectors);
            *vectors = NULL;
        }
    }
    return status;
}


/* Whether s's matrices go to the device's batched Jacobi SVD: a stack of
 * them, of a shape it takes. */
static bool has_jacobi_svd(const stack *s)
{
    gk_solver_call probe = {.op = GK_SOLVER_SVD_JACOBI, .dtype = s->dtype, .m = s->cols,
                            .n = s->rows};
    return s->count > 1 &&
           gk_backend_of(s->device.kind)->solver(s->device, &probe) == GK_OK;
}

/* svd of a stack of small matrices in one call (GK_SOLVER_SVD_JACOBI). The
 * C-order a (m x n) read column-major is a^T (n x m) = conj(V) S conj(U)^H,
 * factored as it lies: its U' = conj(V), read back in C order, is V^H =
 * vt; its V' = conj(U), read in C order, is U^H, whose conjugate transpose
 * is u. The reduced bases are the first k rows of those. */
static gk_status device_svd_jacobi(const gk_array *a, const stack *s, bool full, gk_array **u,
                                   gk_array **sv, gk_array **vt)
{
    int64_t m = s->rows, n = s->cols, k = m < n ? m : n;
    int nb = s->batch_ndim;
    gk_array *work = NULL, *left = NULL, *right = NULL, *rows = NULL, *turned = NULL;
    int64_t shape[GK_MAX_DIMS];
    memcpy(shape, s->batch, sizeof(int64_t) * (size_t)nb);
    shape[nb] = k;
    gk_status status = gk_copy_as(a, s->dtype, &work);
    if (status == GK_OK)
        status = gk_empty(s->device, factor_real_dtype(s), nb + 1, shape, sv);
    /* U' (n x n) and V' (m x m): cuSOLVER wants them even for values only */
    shape[nb] = shape[nb + 1] = n;
    if (status == GK_OK)
        status = gk_empty(s->device, s->dtype, nb + 2, shape, &left);
    shape[nb] = shape[nb + 1] = m;
    if (status == GK_OK)
        status = gk_empty(s->device, s->dtype, nb + 2, shape, &right);
    gk_solver_call call = {.op = GK_SOLVER_SVD_JACOBI, .dtype = s->dtype, .count = s->count,
                           .m = n, .n = m, .vectors = u != NULL,
                           .a = work ? gk_array_data(work) : NULL,
                           .b = left ? gk_array_data(left) : NULL,
                           .c = right ? gk_array_data(right) : NULL,
                           .w = *sv ? gk_array_data(*sv) : NULL};
    gk_array *infos = NULL;
    if (status == GK_OK)
        status = queue_solver(s, &call, &infos);
    if (status == GK_OK && u && full) {
        *vt = left, left = NULL;
    } else if (status == GK_OK && u) {
        status = gk_slice(left, nb, 0, k, 1, &rows);
        if (status == GK_OK)
            status = gk_copy(rows, vt);
        gk_array_free(rows);
        rows = NULL;
    }
    if (status == GK_OK && u)
        status = full ? gk_array_view(right, &rows) : gk_slice(right, nb, 0, k, 1, &rows);
    if (status == GK_OK && u)
        status = gk_matrix_transpose(rows, &turned);
    if (status == GK_OK && u)
        status = factor_is_complex(s) ? gk_unary(GK_CONJ, turned, u) : gk_copy(turned, u);
    status = check_infos(s, status, infos, "gesvdjBatched", NULL, "the SVD did not converge");
    gk_array *all[] = {work, left, right, rows, turned};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_array_free(all[i]);
    if (status != GK_OK)
        factor_drop_svd(u, sv, vt);
    return status;
}

/* svd on the device: a stack of small matrices through the batched Jacobi
 * SVD where the device has one, else one gesvd per matrix. gesvd takes m
 * >= n. In column-major order the C-order a (m x n) is a^T (n x m) =
 * conj(V) S U^T: when n >= m
 * that is gesvd's shape as it lies, and its U read back in C order is vt,
 * its V^H is u (the host's identity). When m > n, a is first copied into
 * column-major order (a transposing copy) and factored as it is; its U and
 * V^H, column-major, are then read as transposed views. A matrix holding
 * NaN or infinity is refused before the solver runs, as on the host. */
gk_status factor_device_svd(const gk_array *a, gk_dtype dtype, bool full, gk_array **u,
                            gk_array **sv, gk_array **vt)
{
    stack s;
    factor_describe_stack(a, dtype, u ? "svd" : "svdvals", &s);
    int64_t m = s.rows, n = s.cols, k = m < n ? m : n;
    bool as_is = n >= m;
    int64_t rows = as_is ? n : m, cols = as_is ? m : n, u_cols = full ? rows : cols;
    gk_array *work = NULL, *moved = NULL, *left = NULL, *right = NULL;
    bool *bad = NULL;
    gk_status status = device_matrix_flags(a, &s, GK_ISFINITE, &bad);
    for (int64_t i = 0; status == GK_OK && i < s.count; i++)
        if (bad[i]) {
            char where[200];
            status = gk_fail(GK_ERR_LINALG,
                             "%s: the SVD did not converge: the matrix contains NaN or "
                             "infinity%s",
                             s.function, factor_which_matrix(&s, i, where, sizeof where));
        }
    free(bad);
    if (status == GK_OK && has_jacobi_svd(&s))
        return device_svd_jacobi(a, &s, full, u, sv, vt);
    if (status == GK_OK)
        status = as_is ? gk_copy_as(a, dtype, &work) : gk_matrix_transpose(a, &moved);
    if (status == GK_OK && !as_is)
        status = gk_copy_as(moved, dtype, &work);
    /* the values, and the solver's U (u_cols x rows in C order) and V^H
     * (cols x cols) */
    int64_t shape[GK_MAX_DIMS];
    memcpy(shape, s.batch, sizeof(int64_t) * (size_t)s.batch_ndim);
    shape[s.batch_ndim] = k;
    if (status == GK_OK)
        status = gk_empty(s.device, factor_real_dtype(&s), s.batch_ndim + 1, shape, sv);
    shape[s.batch_ndim] = u_cols, shape[s.batch_ndim + 1] = rows;
    if (status == GK_OK && u)
        status = gk_empty(s.device, dtype, s.batch_ndim + 2, shape, &left);
    shape[s.batch_ndim] = shape[s.batch_ndim + 1] = cols;
    if (status == GK_OK && u)
        status = gk_empty(s.device, dtype, s.batch_ndim + 2, shape, &right);
    gk_solver_call call = {.op = GK_SOLVER_SVD, .dtype = dtype, .count = s.count, .n = cols,
                           .m = rows, .flag = full, .vectors = u != NULL,
                           .a = work ? gk_array_data(work) : NULL, .b = left ? gk_array_data(left) : NULL,
                           .c = right ? gk_array_data(right) : NULL, .w = *sv ? gk_array_data(*sv) : NULL};
    gk_array *infos = NULL;
    if (status == GK_OK)
        status = queue_solver(&s, &call, &infos);
    if (status == GK_OK && u && as_is) { /* U's buffer is vt, V^H's is u */
        *vt = left, left = NULL;
        *u = right, right = NULL;
    } else if (status == GK_OK && u) {
        status = gk_matrix_transpose(left, u);
        if (status == GK_OK)
            status = gk_matrix_transpose(right, vt);
    }
    status = check_infos(&s, status, infos, "gesvd", NULL, "the SVD did not converge");
    gk_array *all[] = {work, moved, left, right};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_array_free(all[i]);
    if (status != GK_OK)
        factor_drop_svd(u, sv, vt);
    return status;
}

/* sign, log |det| and det (each optional) from LU factors, in array ops on
 * their device, so that nothing runs per matrix on the host: NumPy's
 * arithmetic on U's diagonals d (see factor.h). */
enum {
    DET_ROW_NUMBERS, DET_MOVED, DET_SWAPS, DET_PARITY, DET_ODD, DET_DIAGONAL, DET_UNITS,
    DET_UNIT_PRODUCT, DET_NEGATED, DET_SIGNED, DET_ABS, DET_LOGS, DET_LOG_SUM, DET_ZEROS,
    DET_SINGULAR, DET_ZERO, DET_MINUS_INF, DET_NAN_SIGN, DET_NAN_LOG, DET_FINITE_SIGN,
    DET_FINITE_LOG, DET_SIGN, DET_LOGABS, DET_EXP, DET_DET, DET_ARRAYS
};

gk_status factor_determinants_from_lu(const gk_array *lu, const gk_array *pivots,
                                      const gk_array *has_nan, gk_array **sign,
                                      gk_array **logabs, gk_array **det)
{
    gk_device device = gk_array_device(lu);
    gk_dtype dtype = gk_array_dtype(lu);
    gk_dtype real = gk_dtype_component(dtype);
    int last = gk_array_ndim(pivots) - 1; /* the diagonal's last axis, as the pivots' */
    double n = (double)gk_array_shape(lu)[last];
    gk_array *t[DET_ARRAYS] = {0};
    /* the parity of the row swaps: pivot i (1-based) other than i is one */
    gk_status status = gk_arange(device, GK_INT32, 1, n + 1, 1, &t[DET_ROW_NUMBERS]);
    if (status == GK_OK)
        status = gk_binary(GK_NE, pivots, t[DET_ROW_NUMBERS], &t[DET_MOVED]);
    if (status == GK_OK)
        status = gk_reduce(GK_SUM, t[DET_MOVED], last, false, &t[DET_SWAPS]);
    if (status == GK_OK)
        status = gk_binary_scalar(GK_REMAINDER, t[DET_SWAPS], 2, &t[DET_PARITY]);
    if (status == GK_OK)
        status = gk_binary_scalar(GK_EQ, t[DET_PARITY], 1, &t[DET_ODD]);
    /* the sign and log |det| from U's diagonal */
    if (status == GK_OK)
        status = gk_diagonal(lu, 0, &t[DET_DIAGONAL]);
    if (status == GK_OK)
        status = gk_unary(GK_ABS, t[DET_DIAGONAL], &t[DET_ABS]);
    /* each d's direction: its sign when real (an infinite d's is +-1);
     * d / |d| when complex, as NumPy's, whose NaN for an infinite d the
     * complex sign function would not give */
    if (status == GK_OK)
        status = gk_dtype_is_complex(dtype)
                     ? gk_binary(GK_DIV, t[DET_DIAGONAL], t[DET_ABS], &t[DET_UNITS])
                     : gk_unary(GK_SIGN, t[DET_DIAGONAL], &t[DET_UNITS]);
    if (status == GK_OK)
        status = gk_reduce(GK_PROD, t[DET_UNITS], last, false, &t[DET_UNIT_PRODUCT]);
    if (status == GK_OK)
        status = gk_unary(GK_NEG, t[DET_UNIT_PRODUCT], &t[DET_NEGATED]);
    if (status == GK_OK)
        status = gk_where(t[DET_ODD], t[DET_NEGATED], t[DET_UNIT_PRODUCT], &t[DET_SIGNED]);
    if (status == GK_OK)
        status = gk_unary(GK_LOG, t[DET_ABS], &t[DET_LOGS]);
    if (status == GK_OK)
        status = gk_reduce(GK_SUM, t[DET_LOGS], last, false, &t[DET_LOG_SUM]);
    /* exactly singular (getrf's info > 0), and holding NaN */
    if (status == GK_OK)
        status = gk_binary_scalar(GK_EQ, t[DET_ABS], 0, &t[DET_ZEROS]);
    if (status == GK_OK)
        status = gk_any(t[DET_ZEROS], 1, &last, false, &t[DET_SINGULAR]);
    if (status == GK_OK)
        status = gk_scalar(device, dtype, 0, &t[DET_ZERO]);
    if (status == GK_OK)
        status = gk_scalar(device, real, -INFINITY, &t[DET_MINUS_INF]);
    if (status == GK_OK)
        status = gk_full_complex(device, dtype, 0, NULL, NAN, NAN, &t[DET_NAN_SIGN]);
    if (status == GK_OK)
        status = gk_scalar(device, real, NAN, &t[DET_NAN_LOG]);
    if (status == GK_OK)
        status = gk_where(t[DET_SINGULAR], t[DET_ZERO], t[DET_SIGNED], &t[DET_FINITE_SIGN]);
    if (status == GK_OK)
        status = gk_where(t[DET_SINGULAR], t[DET_MINUS_INF], t[DET_LOG_SUM], &t[DET_FINITE_LOG]);
    if (status == GK_OK)
        status = gk_where(has_nan, t[DET_NAN_SIGN], t[DET_FINITE_SIGN], &t[DET_SIGN]);
    if (status == GK_OK)
        status = gk_where(has_nan, t[DET_NAN_LOG], t[DET_FINITE_LOG], &t[DET_LOGABS]);
    /* NumPy's det: sign * exp(log |det|) */
    if (status == GK_OK && det)
        status = gk_unary(GK_EXP, t[DET_LOGABS], &t[DET_EXP]);
    if (status == GK_OK && det)
        status = gk_binary(GK_MUL, t[DET_SIGN], t[DET_EXP], &t[DET_DET]);
    gk_array **outs[3] = {sign, logabs, det};
    const int kept[3] = {DET_SIGN, DET_LOGABS, DET_DET};
    for (int i = 0; i < 3; i++)
        if (outs[i] && status == GK_OK) {
            *outs[i] = t[kept[i]];
            t[kept[i]] = NULL;
        }
    for (int i = 0; i < DET_ARRAYS; i++)
        gk_array_free(t[i]);
    return status;
}

/* det and slogdet on the device: the LU of every matrix there (getrf; its
 * infos are not read: info > 0 is an exactly singular U, not an error),
 * then factor_determinants_from_lu there. Reading the factors back to
 * multiply them out on the host took 25 ms for 100000 8x8 matrices, 45
 * times CuPy's det. The NaN flags come from a itself: cuSOLVER's pivot
 * search can pass over a NaN that LAPACK's LU keeps. */
gk_status factor_device_determinants(const gk_array *a, gk_dtype dtype, const char *function,
                                     gk_array **sign, gk_array **logabs, gk_array **det)
{
    stack s;
    factor_describe_stack(a, dtype, function, &s);
    int64_t pivot_count = s.count * s.rows, pivot_shape[GK_MAX_DIMS];
    memcpy(pivot_shape, a->shape, sizeof(int64_t) * (size_t)(a->ndim - 1)); /* batch, n */
    gk_array *lu = NULL, *pivots = NULL, *pivot_rows = NULL, *has_nan = NULL;
    gk_status status = gk_copy_as(a, dtype, &lu);
    if (status == GK_OK)
        status = gk_empty(s.device, GK_INT32, 1, &pivot_count, &pivots);
    gk_solver_call call = {.op = GK_SOLVER_LU, .dtype = dtype, .count = s.count, .n = s.rows,
                           .a = lu ? gk_array_data(lu) : NULL,
                           .pivots = pivots ? gk_array_data(pivots) : NULL};
    if (status == GK_OK)
        status = queue_unread(&s, &call);
    if (status == GK_OK)
        status = gk_reshape(pivots, a->ndim - 1, pivot_shape, &pivot_rows);
    if (status == GK_OK)
        status = device_matrix_mask(a, GK_ISNAN, &has_nan);
    if (status == GK_OK)
        status = factor_determinants_from_lu(lu, pivot_rows, has_nan, sign, logabs, det);
    gk_array *all[] = {lu, pivots, pivot_rows, has_nan};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_array_free(all[i]);
    return status;
}

/* qr on the device. a's transpose, copied as it lies, is a in column-major
 * order (lda m), in a buffer of `width` columns per matrix: n, or m when a
 * complete Q is wider than a (the columns past n then the identity's, as
 * orgqr wants them). geqrf leaves R in the upper triangle, which is read
 * out (a transposed view, then triu) before orgqr turns the reflectors
 * into Q's first columns in place. */
gk_status factor_device_qr(const gk_array *a, gk_dtype dtype, bool complete, gk_array **q,
                           gk_array **r)
{
    stack s;
    factor_describe_stack(a, dtype, "qr", &s);
    int64_t m = s.rows, n = s.cols, k = m < n ? m : n;
    int64_t q_cols = complete ? m : k, r_rows = complete ? m : k;
    int64_t width = n > q_cols ? n : q_cols;
    int nb = s.batch_ndim;
    gk_array *turned = NULL, *work = NULL, *head = NULL, *tau = NULL, *view = NULL,
             *rows = NULL, *cols = NULL, *q_rows = NULL;
    gk_status status = gk_matrix_transpose(a, &turned);
    if (status == GK_OK && width == n) {
        status = gk_copy_as(turned, dtype, &work);
    } else if (status == GK_OK) {
        status = device_identities(&s, dtype, m, &work);
        if (status == GK_OK)
            status = gk_slice(work, nb, 0, n, 1, &head);
        if (status == GK_OK)
            status = gk_assign(head, turned);
    }
    int64_t tau_count = s.count * k;
    if (status == GK_OK)
        status = gk_empty(s.device, dtype, 1, &tau_count, &tau);
    gk_solver_call call = {.op = GK_SOLVER_QR, .dtype = dtype, .count = s.count, .m = m, .n = n,
                           .k = k, .stride = width * m, .a = work ? gk_array_data(work) : NULL,
                           .b = tau ? gk_array_data(tau) : NULL};
    /* geqrf's info reports only a bad argument: not read, so that the
     * factorization, R and Q queue without waiting (orgqr's is read) */
    if (status == GK_OK)
        status = queue_unread(&s, &call);
    /* R: the first r_rows rows and n columns of the buffer read as C order
     * (a transposed view), upper triangle */
    if (status == GK_OK)
        status = gk_matrix_transpose(work, &view);
    if (status == GK_OK)
        status = gk_slice(view, nb, 0, r_rows, 1, &rows);
    if (status == GK_OK)
        status = gk_slice(rows, nb + 1, 0, n, 1, &cols);
    if (status == GK_OK)
        status = gk_triu(cols, 0, r);
    call.op = GK_SOLVER_QR_Q;
    call.n = q_cols;
    gk_array *infos = NULL;
    if (status == GK_OK)
        status = queue_solver(&s, &call, &infos);
    /* Q: the first q_cols columns of the buffer, read back into C order */
    if (status == GK_OK)
        status = gk_slice(work, nb, 0, q_cols, 1, &q_rows);
    gk_array *q_view = NULL;
    if (status == GK_OK)
        status = gk_matrix_transpose(q_rows, &q_view);
    if (status == GK_OK)
        status = gk_copy(q_view, q);
    status = check_infos(&s, status, infos, "orgqr", "ungqr", "forming q failed");
    gk_array *all[] = {turned, work, head, tau, view, rows, cols, q_rows, q_view};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_array_free(all[i]);
    if (status != GK_OK) {
        gk_array_free(*q);
        *q = NULL;
        gk_array_free(*r);
        *r = NULL;
    }
    return status;
}
