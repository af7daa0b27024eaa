/* cuBLAS, loaded at run time (libcublas.so.13, .so.12 or .so.11;
 * GPUKIT_CUBLAS_LIBRARY names one file instead).
 *
 * cuBLAS comes with the CUDA toolkit, not the driver, so it is optional:
 * without it gpukit multiplies matrices with its own kernel. It runs on
 * the CUDA runtime, which shares the driver's primary context of each
 * device, so the handles made here work on the streams gpukit makes in
 * that context. Loaded once per process; thread-safe. */
#ifndef GK_EXT_CUBLAS_H
#define GK_EXT_CUBLAS_H

#include <gpukit/status.h>

#include <stddef.h>

typedef int cublasStatus_t;
typedef int cublasOperation_t;
typedef struct cublasContext *cublasHandle_t;
typedef struct CUstream_st *cublas_stream; /* a CUstream (the same type) */

enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_ARCH_MISMATCH = 8,
    CUBLAS_STATUS_MAPPING_ERROR = 11,
    CUBLAS_STATUS_EXECUTION_FAILED = 13,
    CUBLAS_STATUS_INTERNAL_ERROR = 14,
    CUBLAS_STATUS_NOT_SUPPORTED = 15,
    CUBLAS_STATUS_LICENSE_ERROR = 16,
};

enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
/* cudaDataType's half types, cublasComputeType_t's float32, the default
 * algorithm. */
enum { CUDA_R_16F = 2, CUDA_R_16BF = 14, CUBLAS_COMPUTE_32F = 68, CUBLAS_GEMM_DEFAULT = -1 };

typedef struct gk_cublas {
    void *library;
    char path[512];

    cublasStatus_t (*Create)(cublasHandle_t *handle);
    cublasStatus_t (*Destroy)(cublasHandle_t handle);
    cublasStatus_t (*SetStream)(cublasHandle_t handle, cublas_stream stream);
    /* Column-major C = alpha op(A) op(B) + beta C. */
    cublasStatus_t (*Sgemm)(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const float *alpha,
                            const float *a, int lda, const float *b, int ldb, const float *beta,
                            float *c, int ldc);
    cublasStatus_t (*Dgemm)(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const double *alpha,
                            const double *a, int lda, const double *b, int ldb,
                            const double *beta, double *c, int ldc);
    cublasStatus_t (*SgemmStridedBatched)(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const float *alpha, const float *a, int lda,
                                          long long stride_a, const float *b, int ldb,
                                          long long stride_b, const float *beta, float *c,
                                          int ldc, long long stride_c, int batch);
    cublasStatus_t (*DgemmStridedBatched)(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const double *alpha, const double *a, int lda,
                                          long long stride_a, const double *b, int ldb,
                                          long long stride_b, const double *beta, double *c,
                                          int ldc, long long stride_c, int batch);
    /* The complex GEMMs: alpha, beta and the matrices as interleaved real,
     * imaginary pairs (cuComplex, cuDoubleComplex). */
    cublasStatus_t (*Cgemm)(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void *alpha,
                            const void *a, int lda, const void *b, int ldb, const void *beta,
                            void *c, int ldc);
    cublasStatus_t (*Zgemm)(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void *alpha,
                            const void *a, int lda, const void *b, int ldb, const void *beta,
                            void *c, int ldc);
    cublasStatus_t (*CgemmStridedBatched)(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void *alpha, const void *a, int lda,
                                          long long stride_a, const void *b, int ldb,
                                          long long stride_b, const void *beta, void *c,
                                          int ldc, long long stride_c, int batch);
    cublasStatus_t (*ZgemmStridedBatched)(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void *alpha, const void *a, int lda,
                                          long long stride_a, const void *b, int ldb,
                                          long long stride_b, const void *beta, void *c,
                                          int ldc, long long stride_c, int batch);
    /* Mixed precision: A, B and C of `type` (CUDA_R_16F, CUDA_R_16BF),
     * summed in float32 (CUBLAS_COMPUTE_32F; alpha and beta float). */
    cublasStatus_t (*GemmEx)(cublasHandle_t handle, cublasOperation_t transa,
                             cublasOperation_t transb, int m, int n, int k, const void *alpha,
                             const void *a, int a_type, int lda, const void *b, int b_type,
                             int ldb, const void *beta, void *c, int c_type, int ldc,
                             int compute_type, int algo);
    cublasStatus_t (*GemmStridedBatchedEx)(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int m, int n, int k,
                                           const void *alpha, const void *a, int a_type, int lda,
                                           long long stride_a, const void *b, int b_type,
                                           int ldb, long long stride_b, const void *beta,
                                           void *c, int c_type, int ldc, long long stride_c,
                                           int batch, int compute_type, int algo);
    const char *(*GetStatusName)(cublasStatus_t status); /* may be NULL (before 11.4) */
    /* The batched LU of small matrices, the solve with it and the inverse
     * from it, by precision (S, D, C, Z: cuSOLVER's order): arrays in
     * device memory of pointers to column-major n x n matrices; getrf's and
     * getri's infos one per matrix, in device memory; getrs's info a host
     * int (a bad argument). getri writes the inverses out of place, into
     * c, from getrfBatched's factors and pivots. Optional: NULL where
     * missing (the factorizations then loop over the matrices, and inv
     * solves against identities). */
    cublasStatus_t (*getrfBatched[4])(cublasHandle_t handle, int n, void *const a[], int lda,
                                      int *pivots, int *info, int batch);
    cublasStatus_t (*getrsBatched[4])(cublasHandle_t handle, cublasOperation_t trans, int n,
                                      int nrhs, const void *const a[], int lda,
                                      const int *pivots, void *const b[], int ldb, int *info,
                                      int batch);
    cublasStatus_t (*getriBatched[4])(cublasHandle_t handle, int n, const void *const a[],
                                      int lda, const int *pivots, void *const c[], int ldc,
                                      int *info, int batch);
} gk_cublas;

/* cuBLAS, loaded on the first call; GK_ERR_NOT_FOUND (the same answer
 * every time) when it is not there. */
gk_status gk_cublas_open(const gk_cublas **cublas);

/* "CUBLAS_STATUS_ALLOC_FAILED"; works without a loaded library. */
const char *gk_cublas_status_name(cublasStatus_t status);

#endif
