/* Matrix products through the CBLAS (OpenBLAS, loaded on first use: see
 * ext/blas.h): one row-major GEMM per batch item, or a dot or GEMV where
 * an operand is a vector. */
#include "compute/backends/cpu/cpu.h"

#include "core/error.h"
#include "ext/blas.h"

#include <limits.h>
#include <string.h>

gk_status cpu_matmul(gk_device device, gk_dtype dtype, int64_t batch, int64_t m, int64_t n,
                     int64_t k, const char *a, int64_t a_batch_stride, const char *b,
                     int64_t b_batch_stride, char *c)
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
     * would oversubscribe the cores). */
    int im = (int)m, in = (int)n, ik = (int)k;
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
                blas->cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, im, in, ik, one32, ai,
                            ik, bi, in, zero32, ci, in);
            else
                blas->zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, im, in, ik, one64, ai,
                            ik, bi, in, zero64, ci, in);
        }
        return GK_OK;
    }
    /* vector . vector is a dot, matrix @ vector (n 1) and vector @ matrix
     * (m 1) a GEMV: GEMM packs its operands first, which made 2048 x 2048
     * @ 2048 float64 0.35x NumPy's (GEMV's) speed */
    bool gemv = (m == 1) != (n == 1) &&
                (dtype == GK_FLOAT32 ? blas->sgemv != NULL : blas->dgemv != NULL);
    /* a @ x, or x @ b as b^T x: the matrix's shape as stored */
    bool by_column = n == 1;
    int rows = by_column ? im : ik, cols = by_column ? ik : in;
    int trans = by_column ? CblasNoTrans : CblasTrans;
    for (int64_t i = 0; i < batch; i++) {
        const char *ai = a + (size_t)(i * a_batch_stride) * size;
        const char *bi = b + (size_t)(i * b_batch_stride) * size;
        char *ci = c + (size_t)(i * m * n) * size;
        const char *matrix = by_column ? ai : bi, *vector = by_column ? bi : ai;
        if (dtype == GK_FLOAT32) {
            if (m == 1 && n == 1) /* vector . vector: skip GEMM's set-up */
                *(float *)ci = blas->sdot(ik, (const float *)ai, 1, (const float *)bi, 1);
            else if (gemv)
                blas->sgemv(CblasRowMajor, trans, rows, cols, 1.0f, (const float *)matrix,
                            cols, (const float *)vector, 1, 0.0f, (float *)ci, 1);
            else
                blas->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, im, in, ik, 1.0f,
                            (const float *)ai, ik, (const float *)bi, in, 0.0f, (float *)ci, in);
        } else {
            if (m == 1 && n == 1)
                *(double *)ci = blas->ddot(ik, (const double *)ai, 1, (const double *)bi, 1);
            else if (gemv)
                blas->dgemv(CblasRowMajor, trans, rows, cols, 1.0, (const double *)matrix,
                            cols, (const double *)vector, 1, 0.0, (double *)ci, 1);
            else
                blas->dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, im, in, ik, 1.0,
                            (const double *)ai, ik, (const double *)bi, in, 0.0, (double *)ci,
                            in);
        }
    }
    return GK_OK;
}
