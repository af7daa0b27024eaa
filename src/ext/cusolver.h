/* cuSOLVER's dense routines, loaded at run time (libcusolver.so.12 of CUDA
 * 13, .so.11 of CUDA 11 and 12; GPUKIT_CUSOLVER_LIBRARY names one file
 * instead).
 *
 * cuSOLVER comes with the CUDA toolkit, not the driver, so it is optional:
 * without it the factorizations of CUDA arrays run on the host, like those
 * of OpenCL arrays. Like ext/blas.h's LAPACKE table, each routine is a
 * table indexed by precision (GK_CUSOLVER_S, _D, _C, _Z: float32,
 * float64, complex64, complex128), its matrices `void *`; the real
 * outputs (eigenvalues) are float for S and C, double for D and Z. All
 * pointers are device memory (the info outputs too); matrices are
 * column-major. The declarations are ours (cuSOLVER's documented C ABI),
 * so building gpukit needs no CUDA headers. Loaded once; thread-safe. */
#ifndef GK_EXT_CUSOLVER_H
#define GK_EXT_CUSOLVER_H

#include <gpukit/status.h>

typedef int cusolverStatus_t;
typedef struct cusolverDnContext *cusolverDnHandle_t;
typedef struct syevjInfo *syevjInfo_t;
typedef struct gesvdjInfo *gesvdjInfo_t;

enum {
    CUSOLVER_STATUS_SUCCESS = 0,
    CUSOLVER_STATUS_ALLOC_FAILED = 2,
    CUSOLVER_STATUS_INVALID_VALUE = 3,
};
enum { GK_CUSOLVER_S, GK_CUSOLVER_D, GK_CUSOLVER_C, GK_CUSOLVER_Z, GK_CUSOLVER_PRECISIONS };
/* cublasFillMode_t, cublasOperation_t, cusolverEigMode_t */
enum { GK_CUBLAS_FILL_LOWER = 0, GK_CUBLAS_FILL_UPPER = 1 };
enum { GK_CUBLAS_OP_N = 0, GK_CUBLAS_OP_T = 1, GK_CUBLAS_OP_C = 2 };
enum { GK_CUSOLVER_EIG_NOVECTOR = 0, GK_CUSOLVER_EIG_VECTOR = 1 };

#define GK_CUSOLVER_TABLE(name) (*name[GK_CUSOLVER_PRECISIONS])

typedef struct gk_cusolver {
    void *library;
    char path[512];

    cusolverStatus_t (*Create)(cusolverDnHandle_t *handle);
    cusolverStatus_t (*Destroy)(cusolverDnHandle_t handle);
    cusolverStatus_t (*SetStream)(cusolverDnHandle_t handle, void *stream); /* a CUstream */
    /* LU: lwork (elements), factor (pivots and info: device ints), solve. */
    cusolverStatus_t GK_CUSOLVER_TABLE(getrf_bufferSize)(cusolverDnHandle_t h, int m, int n,
                                                         void *a, int lda, int *lwork);
    cusolverStatus_t GK_CUSOLVER_TABLE(getrf)(cusolverDnHandle_t h, int m, int n, void *a,
                                              int lda, void *work, int *pivots, int *info);
    cusolverStatus_t GK_CUSOLVER_TABLE(getrs)(cusolverDnHandle_t h, int trans, int n, int nrhs,
                                              const void *a, int lda, const int *pivots,
                                              void *b, int ldb, int *info);
    /* Cholesky. */
    cusolverStatus_t GK_CUSOLVER_TABLE(potrf_bufferSize)(cusolverDnHandle_t h, int uplo, int n,
                                                         void *a, int lda, int *lwork);
    cusolverStatus_t GK_CUSOLVER_TABLE(potrf)(cusolverDnHandle_t h, int uplo, int n, void *a,
                                              int lda, void *work, int lwork, int *info);
    /* Cholesky of a stack: an array in device memory of pointers to the
     * matrices, infos one per matrix. Optional (NULL: one potrf each). */
    cusolverStatus_t GK_CUSOLVER_TABLE(potrfBatched)(cusolverDnHandle_t h, int uplo, int n,
                                                     void *a[], int lda, int *info, int batch);
    /* The symmetric / Hermitian eigenproblem (syevd; heevd for complex). */
    cusolverStatus_t GK_CUSOLVER_TABLE(syevd_bufferSize)(cusolverDnHandle_t h, int jobz,
                                                         int uplo, int n, const void *a,
                                                         int lda, const void *w, int *lwork);
    cusolverStatus_t GK_CUSOLVER_TABLE(syevd)(cusolverDnHandle_t h, int jobz, int uplo, int n,
                                              void *a, int lda, void *w, void *work, int lwork,
                                              int *info);
    /* QR: geqrf leaves R above the diagonal and the reflectors below it,
     * with their scalars in tau; orgqr (ungqr for complex) makes Q's first
     * n columns from the first k reflectors. */
    cusolverStatus_t GK_CUSOLVER_TABLE(geqrf_bufferSize)(cusolverDnHandle_t h, int m, int n,
                                                         void *a, int lda, int *lwork);
    cusolverStatus_t GK_CUSOLVER_TABLE(geqrf)(cusolverDnHandle_t h, int m, int n, void *a,
                                              int lda, void *tau, void *work, int lwork,
                                              int *info);
    cusolverStatus_t GK_CUSOLVER_TABLE(orgqr_bufferSize)(cusolverDnHandle_t h, int m, int n,
                                                         int k, const void *a, int lda,
                                                         const void *tau, int *lwork);
    cusolverStatus_t GK_CUSOLVER_TABLE(orgqr)(cusolverDnHandle_t h, int m, int n, int k, void *a,
                                              int lda, const void *tau, void *work, int lwork,
                                              int *info);
    /* The Jacobi eigensolver of a stack of small matrices (n <= 32, lda * n
     * elements apart), eigenvalues ascending when SetSortEig says so, with
     * its parameters object. Optional (NULL: one syevd each). */
    cusolverStatus_t (*CreateSyevjInfo)(syevjInfo_t *info);
    cusolverStatus_t (*XsyevjSetSortEig)(syevjInfo_t info, int sort_eig);
    cusolverStatus_t GK_CUSOLVER_TABLE(syevjBatched_bufferSize)(cusolverDnHandle_t h, int jobz,
                                                                int uplo, int n, const void *a,
                                                                int lda, const void *w,
                                                                int *lwork, syevjInfo_t params,
                                                                int batch);
    cusolverStatus_t GK_CUSOLVER_TABLE(syevjBatched)(cusolverDnHandle_t h, int jobz, int uplo,
                                                     int n, void *a, int lda, void *w,
                                                     void *work, int lwork, int *info,
                                                     syevjInfo_t params, int batch);
    /* The Jacobi SVD of a stack of small matrices (m, n <= 32, lda * n
     * elements apart; U m x m and V (not V^H) n x n, always whole),
     * singular values descending unless SetSortEig says not. Optional
     * (NULL: one gesvd each). */
    cusolverStatus_t (*CreateGesvdjInfo)(gesvdjInfo_t *info);
    cusolverStatus_t (*XgesvdjSetSortEig)(gesvdjInfo_t info, int sort_svd);
    cusolverStatus_t GK_CUSOLVER_TABLE(gesvdjBatched_bufferSize)(
        cusolverDnHandle_t h, int jobz, int m, int n, const void *a, int lda, const void *s,
        const void *u, int ldu, const void *v, int ldv, int *lwork, gesvdjInfo_t params,
        int batch);
    cusolverStatus_t GK_CUSOLVER_TABLE(gesvdjBatched)(cusolverDnHandle_t h, int jobz, int m,
                                                      int n, void *a, int lda, void *s, void *u,
                                                      int ldu, void *v, int ldv, void *work,
                                                      int lwork, int *info, gesvdjInfo_t params,
                                                      int batch);
    /* SVD (m >= n): jobu, jobvt 'A', 'S' or 'N'; rwork: min(m, n) - 1 reals. */
    cusolverStatus_t GK_CUSOLVER_TABLE(gesvd_bufferSize)(cusolverDnHandle_t h, int m, int n,
                                                         int *lwork);
    cusolverStatus_t GK_CUSOLVER_TABLE(gesvd)(cusolverDnHandle_t h, signed char jobu,
                                              signed char jobvt, int m, int n, void *a, int lda,
                                              void *s, void *u, int ldu, void *vt, int ldvt,
                                              void *work, int lwork, void *rwork, int *info);
} gk_cusolver;

#undef GK_CUSOLVER_TABLE

/* cuSOLVER, loaded on the first call; GK_ERR_NOT_FOUND (the same answer
 * every time, the message starting with `op`) when it is not there. */
gk_status gk_cusolver_open(const char *op, const gk_cusolver **cusolver);

#endif
