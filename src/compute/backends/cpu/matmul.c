/* Matrix products through the CBLAS (OpenBLAS, loaded on first use: see
 * ext/blas.h): one row-major GEMM per batch item, a dot or GEMV where an
 * operand is a vector, a SYRK for x.T @ x and x @ x.T; operands stored
 * transposed are read in place through the transpose flags. */
#include "compute/backends/cpu/cpu.h"

#include "core/error.h"
#include "ext/blas.h"

#include <limits.h>
#include <string.h>

/* The lower triangle of an n x n result from its upper one, in tiles
 * that stay in cache: element by element, reading the upper triangle down
 * its columns, the copy took longer than SYRK saved for 4096 x 4096. */
#define MIRROR_UPPER(NAME, T)                                                             \
    static void NAME(T *c, int64_t n)                                                     \
    {                                                                                     \
        enum { TILE = 64 };                                                               \
        for (int64_t ti = 0; ti < n; ti += TILE)                                          \
            for (int64_t tj = 0; tj <= ti; tj += TILE)                                    \
                for (int64_t i = ti; i < n && i < ti + TILE; i++)                         \
                    for (int64_t j = tj; j < i && j < tj + TILE; j++)                     \
                        c[i * n + j] = c[j * n + i];                                      \
    }
MIRROR_UPPER(mirror_upper_float32, float)
MIRROR_UPPER(mirror_upper_float64, double)

gk_status cpu_matmul(gk_device device, gk_dtype dtype, int64_t batch, int64_t m, int64_t n,
                     int64_t k, const char *a, int64_t a_batch_stride, const char *b,
                     int64_t b_batch_stride, char *c, unsigned transposed)
{
    (void)device;
    if (!gk_dtype_is_inexact(dtype) || gk_dtype_is_half(dtype))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "matmul on the CPU: %s is not a floating dtype",
                       gk_dtype_name(dtype));
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "matmul on the CPU: a %lld x %lld by %lld x %lld product exceeds BLAS's "
                       "32-bit dimensions",
                       (long long)m, (long long)k, (long long)k, (long long)n);
    if (batch <= 0 || m == 0 || n == 0)
        return GK_OK;
    const gk_cblas *blas;
    gk_status status = gk_cblas_open("matmul on the CPU", &blas);
    if (status != GK_OK)
        return status;
    size_t size = gk_dtype_size(dtype);
    if (k == 0) {
        /* An empty sum: zeros (BLAS would reject a leading dimension of 0). */
        memset(c, 0, (size_t)(batch * m * n) * size);
        return GK_OK;
    }
    /* The pthreads OpenBLAS threads each GEMM itself; batch items run one
     * after another (OpenBLAS calls from several OpenMP threads at once
     * would oversubscribe the cores). A transposed operand (x.T of a
     * C-order x) is read in place through BLAS's transpose flag, its
     * leading dimension that of the matrix as stored. */
    int im = (int)m, in = (int)n, ik = (int)k;
    bool a_t = transposed & GK_MATMUL_A_TRANSPOSED, b_t = transposed & GK_MATMUL_B_TRANSPOSED;
    int ta = a_t ? CblasTrans : CblasNoTrans, tb = b_t ? CblasTrans : CblasNoTrans;
    int lda = a_t ? im : ik, ldb = b_t ? ik : in;
    if (gk_dtype_is_complex(dtype)) {
        bool single = dtype == GK_COMPLEX64;
        if (!(single ? blas->cgemm : blas->zgemm))
            return gk_fail(GK_ERR_NOT_FOUND, "matmul: %s has no %s for %s", blas->path,
                           single ? "cblas_cgemm" : "cblas_zgemm", gk_dtype_name(dtype));
        const float one32[2] = {1, 0}, zero32[2] = {0, 0};
        const double one64[2] = {1, 0}, zero64[2] = {0, 0};
        for (int64_t i = 0; i < batch; i++) {
            const char *ai = a + (size_t)(i * a_batch_stride) * size;
            const char *bi = b + (size_t)(i * b_batch_stride) * size;
            char *ci = c + (size_t)(i * m * n) * size;
            if (single)
                blas->cgemm(CblasRowMajor, ta, tb, im, in, ik, one32, ai, lda, bi, ldb, zero32,
                            ci, in);
            else
                blas->zgemm(CblasRowMajor, ta, tb, im, in, ik, one64, ai, lda, bi, ldb, zero64,
                            ci, in);
        }
        return GK_OK;
    }
    bool single = dtype == GK_FLOAT32;
    /* vector . vector is a dot, matrix @ vector (n 1) and vector @ matrix
     * (m 1) a GEMV: GEMM packs its operands first, which made 2048 x 2048
     * @ 2048 float64 0.35x NumPy's (GEMV's) speed. The GEMV computes M x,
     * M being a (n 1) or b^T (m 1), from the matrix as stored. */
    bool gemv = (m == 1) != (n == 1) && (single ? blas->sgemv != NULL : blas->dgemv != NULL);
    bool by_column = n == 1;
    int length = by_column ? im : in; /* of the result */
    int trans = (by_column ? a_t : !b_t) ? CblasTrans : CblasNoTrans;
    int rows = trans == CblasTrans ? ik : length, cols = trans == CblasTrans ? length : ik;
    /* x.T @ x and x @ x.T (one memory read both ways): SYRK computes the
     * upper triangle of the symmetric result, half GEMM's work, as NumPy
     * does, and it is mirrored. */
    bool gram = a == b && a_batch_stride == b_batch_stride && a_t != b_t && m == n &&
                (single ? blas->ssyrk != NULL : blas->dsyrk != NULL);
    for (int64_t i = 0; i < batch; i++) {
        const char *ai = a + (size_t)(i * a_batch_stride) * size;
        const char *bi = b + (size_t)(i * b_batch_stride) * size;
        char *ci = c + (size_t)(i * m * n) * size;
        const char *matrix = by_column ? ai : bi, *vector = by_column ? bi : ai;
        if (m == 1 && n == 1) { /* vector . vector: skip GEMM's set-up */
            if (single)
                *(float *)ci = blas->sdot(ik, (const float *)ai, 1, (const float *)bi, 1);
            else
                *(double *)ci = blas->ddot(ik, (const double *)ai, 1, (const double *)bi, 1);
        } else if (gemv && single) {
            blas->sgemv(CblasRowMajor, trans, rows, cols, 1.0f, (const float *)matrix, cols,
                        (const float *)vector, 1, 0.0f, (float *)ci, 1);
        } else if (gemv) {
            blas->dgemv(CblasRowMajor, trans, rows, cols, 1.0, (const double *)matrix, cols,
                        (const double *)vector, 1, 0.0, (double *)ci, 1);
        } else if (gram && single) {
            blas->ssyrk(CblasRowMajor, CblasUpper, ta, in, ik, 1.0f, (const float *)ai, lda,
                        0.0f, (float *)ci, in);
            mirror_upper_float32((float *)ci, n);
        } else if (gram) {
            blas->dsyrk(CblasRowMajor, CblasUpper, ta, in, ik, 1.0, (const double *)ai, lda,
                        0.0, (double *)ci, in);
            mirror_upper_float64((double *)ci, n);
        } else if (single) {
            blas->sgemm(CblasRowMajor, ta, tb, im, in, ik, 1.0f, (const float *)ai, lda,
                        (const float *)bi, ldb, 0.0f, (float *)ci, in);
        } else {
            blas->dgemm(CblasRowMajor, ta, tb, im, in, ik, 1.0, (const double *)ai, lda,
                        (const double *)bi, ldb, 0.0, (double *)ci, in);
        }
    }
    return GK_OK;
}
