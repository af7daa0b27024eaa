/* CBLAS and LAPACKE, loaded at run time on first use.
 *
 * CBLAS (matrix products on the CPU) comes from libopenblas.so.0, else
 * libcblas.so.3, else libblas.so.3 (GPUKIT_BLAS_LIBRARY names one file
 * instead); LAPACKE (the factorizations of compute/factor.c) from liblapacke.so.3, else
 * libopenblas.so.0 (GPUKIT_LAPACKE_LIBRARY names one file instead).
 *
 * Loaded, not linked: a process that links libgpukit (the Python module,
 * the gpukit command) but never multiplies a matrix does not map OpenBLAS
 * nor start its thread pool, whose threads spin for a while after start-up
 * and steal a core from the process on a small machine. Each library is
 * loaded once per process, on the first call that needs it; thread-safe.
 * The declarations are ours (the few we call, by their documented C ABI,
 * 32-bit integers), so building gpukit needs neither library. */
#ifndef GK_EXT_BLAS_H
#define GK_EXT_BLAS_H

#include <gpukit/status.h>

/* The values of CBLAS's and LAPACKE's enums and constants. */
enum { CblasRowMajor = 101 };
enum { CblasNoTrans = 111, CblasTrans = 112 };
enum { CblasUpper = 121 };
enum { LAPACK_ROW_MAJOR = 101, LAPACK_COL_MAJOR = 102 };
/* LAPACKE's info when it could not allocate its work or transposed copy. */
enum { LAPACK_WORK_MEMORY_ERROR = -1010, LAPACK_TRANSPOSE_MEMORY_ERROR = -1011 };

typedef int lapack_int;

typedef struct gk_cblas {
    void *library;
    char path[512];

    /* C = alpha op(A) op(B) + beta C, in `order` (CblasRowMajor). */
    void (*sgemm)(int order, int transa, int transb, int m, int n, int k, float alpha,
                  const float *a, int lda, const float *b, int ldb, float beta, float *c,
                  int ldc);
    void (*dgemm)(int order, int transa, int transb, int m, int n, int k, double alpha,
                  const double *a, int lda, const double *b, int ldb, double beta, double *c,
                  int ldc);
    /* The complex GEMMs (alpha, beta and the matrices as pointers to
     * interleaved real, imaginary pairs); optional: NULL in a BLAS without
     * them, and complex matmul then fails naming the routine. */
    void (*cgemm)(int order, int transa, int transb, int m, int n, int k, const void *alpha,
                  const void *a, int lda, const void *b, int ldb, const void *beta, void *c,
                  int ldc);
    void (*zgemm)(int order, int transa, int transb, int m, int n, int k, const void *alpha,
                  const void *a, int lda, const void *b, int ldb, const void *beta, void *c,
                  int ldc);
    float (*sdot)(int n, const float *x, int incx, const float *y, int incy);
    double (*ddot)(int n, const double *x, int incx, const double *y, int incy);
    /* y = alpha op(A) x + beta y; optional (GEMM serves without them). */
    void (*sgemv)(int order, int trans, int m, int n, float alpha, const float *a, int lda,
                  const float *x, int incx, float beta, float *y, int incy);
    void (*dgemv)(int order, int trans, int m, int n, double alpha, const double *a, int lda,
                  const double *x, int incx, double beta, double *y, int incy);
    /* The upper triangle of C = alpha op(A) op(A)^T + beta C (n x n, op(A)
     * n x k); optional (GEMM serves without them). */
    void (*ssyrk)(int order, int uplo, int trans, int n, int k, float alpha, const float *a,
                  int lda, float beta, float *c, int ldc);
    void (*dsyrk)(int order, int uplo, int trans, int n, int k, double alpha, const double *a,
                  int lda, double beta, double *c, int ldc);
    /* OpenBLAS's own, for the benchmark's report; NULL in other BLASes. */
    char *(*openblas_get_config)(void);
    int (*openblas_get_num_threads)(void);
} gk_cblas;

/* LAPACKE's routines by precision: each table below is indexed by
 * GK_LAPACK_S (float32), _D (float64), _C (complex64) and _Z (complex128),
 * the routine's first letter. Matrices are `void *` so that one declaration
 * serves the four (they are float, double or interleaved real, imaginary
 * pairs); the real outputs (singular values, eigenvalues of a Hermitian
 * matrix, gesvd's superb) are float for S and C, double for D and Z. */
enum { GK_LAPACK_S, GK_LAPACK_D, GK_LAPACK_C, GK_LAPACK_Z, GK_LAPACK_PRECISIONS };

typedef struct gk_lapacke {
    void *library;
    char path[512];

    /* SVD: divide and conquer, and the QR iteration when that fails. */
    lapack_int (*gesdd[GK_LAPACK_PRECISIONS])(int layout, char jobz, lapack_int m, lapack_int n,
                                              void *a, lapack_int lda, void *s, void *u,
                                              lapack_int ldu, void *vt, lapack_int ldvt);
    lapack_int (*gesvd[GK_LAPACK_PRECISIONS])(int layout, char jobu, char jobvt, lapack_int m,
                                              lapack_int n, void *a, lapack_int lda, void *s,
                                              void *u, lapack_int ldu, void *vt,
                                              lapack_int ldvt, void *superb);
    /* QR: the reflectors, then q from them (orgqr; ungqr for complex). */
    lapack_int (*geqrf[GK_LAPACK_PRECISIONS])(int layout, lapack_int m, lapack_int n, void *a,
                                              lapack_int lda, void *tau);
    lapack_int (*orgqr[GK_LAPACK_PRECISIONS])(int layout, lapack_int m, lapack_int n,
                                              lapack_int k, void *a, lapack_int lda,
                                              const void *tau);
    /* LU: factor, and solve from the factors (trans 'N', 'T' or 'C'). */
    lapack_int (*getrf[GK_LAPACK_PRECISIONS])(int layout, lapack_int m, lapack_int n, void *a,
                                              lapack_int lda, lapack_int *ipiv);
    lapack_int (*getrs[GK_LAPACK_PRECISIONS])(int layout, char trans, lapack_int n,
                                              lapack_int nrhs, const void *a, lapack_int lda,
                                              const lapack_int *ipiv, void *b, lapack_int ldb);
    /* getrf and getrs ('N') in one call: b overwritten by the solution. */
    lapack_int (*gesv[GK_LAPACK_PRECISIONS])(int layout, lapack_int n, lapack_int nrhs, void *a,
                                             lapack_int lda, lapack_int *ipiv, void *b,
                                             lapack_int ldb);
    /* Cholesky. */
    lapack_int (*potrf[GK_LAPACK_PRECISIONS])(int layout, char uplo, lapack_int n, void *a,
                                              lapack_int lda);
    /* Symmetric / Hermitian eigenproblem, divide and conquer (syevd;
     * heevd for complex), with the caller's workspaces (work: elements of
     * the dtype, rwork: real ones; -1 sizes ask for them): w is real.
     * Index 0: S or C, 1: D or Z. */
    lapack_int (*syevd_work[2])(int layout, char jobz, char uplo, lapack_int n, void *a,
                                lapack_int lda, void *w, void *work, lapack_int lwork,
                                lapack_int *iwork, lapack_int liwork);
    lapack_int (*heevd_work[2])(int layout, char jobz, char uplo, lapack_int n, void *a,
                                lapack_int lda, void *w, void *work, lapack_int lwork,
                                void *rwork, lapack_int lrwork, lapack_int *iwork,
                                lapack_int liwork);
    /* General eigenproblem: real matrices give the eigenvalues' parts (wr,
     * wi) and real vectors that pair up; complex ones give both complex. */
    lapack_int (*geev_real[2])(int layout, char jobvl, char jobvr, lapack_int n, void *a,
                               lapack_int lda, void *wr, void *wi, void *vl, lapack_int ldvl,
                               void *vr, lapack_int ldvr);
    lapack_int (*geev_complex[2])(int layout, char jobvl, char jobvr, lapack_int n, void *a,
                                  lapack_int lda, void *w, void *vl, lapack_int ldvl, void *vr,
                                  lapack_int ldvr);
    /* Optional: turns LAPACKE's own NaN check of the inputs off, so that
     * NaN meets LAPACK as it does in NumPy (which calls LAPACK directly). */
    void (*set_nancheck)(int flag);
    /* Optional: OpenBLAS's thread count, where LAPACKE runs on it, and
     * its threading (0 sequential, 1 its own pthreads, 2 OpenMP). */
    int (*openblas_get_num_threads)(void);
    void (*openblas_set_num_threads)(int threads);
    int (*openblas_get_parallel)(void);
} gk_lapacke;

/* The CBLAS, loaded on the first call; GK_ERR_NOT_FOUND (the same answer
 * every time, the message starting with `op`) when there is none. */
gk_status gk_cblas_open(const char *op, const gk_cblas **cblas);

/* LAPACKE, the same way. */
gk_status gk_lapacke_open(const char *op, const gk_lapacke **lapacke);

/* OpenBLAS to one thread per call, from the first pause to the last
 * resume (pauses nest and may come from several threads; the last resume
 * restores the count the first pause found, unless someone else set
 * another meanwhile): for loops that share out
 * many small LAPACK calls among gpukit's own threads, where OpenBLAS's
 * pool, asked for by several callers at once, only spins. No-ops where
 * LAPACKE does not run on an OpenBLAS with its own thread pool (an OpenMP
 * build already runs one thread per call inside gpukit's parallel loops). */
void gk_lapacke_pause_threads(const gk_lapacke *lapacke);
void gk_lapacke_resume_threads(const gk_lapacke *lapacke);

#endif
