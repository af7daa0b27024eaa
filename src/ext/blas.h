/* CBLAS and LAPACKE, loaded at run time on first use.
 *
 * CBLAS (matrix products on the CPU) comes from libopenblas.so.0, else
 * libcblas.so.3, else libblas.so.3 (GPUKIT_BLAS_LIBRARY names one file
 * instead); LAPACKE (svd, qr, solve, inv) from liblapacke.so.3, else
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
enum { LAPACK_ROW_MAJOR = 101 };
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
    /* OpenBLAS's own, for the benchmark's report; NULL in other BLASes. */
    char *(*openblas_get_config)(void);
    int (*openblas_get_num_threads)(void);
} gk_cblas;

typedef struct gk_lapacke {
    void *library;
    char path[512];

    lapack_int (*sgesdd)(int layout, char jobz, lapack_int m, lapack_int n, float *a,
                         lapack_int lda, float *s, float *u, lapack_int ldu, float *vt,
                         lapack_int ldvt);
    lapack_int (*dgesdd)(int layout, char jobz, lapack_int m, lapack_int n, double *a,
                         lapack_int lda, double *s, double *u, lapack_int ldu, double *vt,
                         lapack_int ldvt);
    lapack_int (*sgesvd)(int layout, char jobu, char jobvt, lapack_int m, lapack_int n,
                         float *a, lapack_int lda, float *s, float *u, lapack_int ldu,
                         float *vt, lapack_int ldvt, float *superb);
    lapack_int (*dgesvd)(int layout, char jobu, char jobvt, lapack_int m, lapack_int n,
                         double *a, lapack_int lda, double *s, double *u, lapack_int ldu,
                         double *vt, lapack_int ldvt, double *superb);
    lapack_int (*sgeqrf)(int layout, lapack_int m, lapack_int n, float *a, lapack_int lda,
                         float *tau);
    lapack_int (*dgeqrf)(int layout, lapack_int m, lapack_int n, double *a, lapack_int lda,
                         double *tau);
    lapack_int (*sorgqr)(int layout, lapack_int m, lapack_int n, lapack_int k, float *a,
                         lapack_int lda, const float *tau);
    lapack_int (*dorgqr)(int layout, lapack_int m, lapack_int n, lapack_int k, double *a,
                         lapack_int lda, const double *tau);
    lapack_int (*sgesv)(int layout, lapack_int n, lapack_int nrhs, float *a, lapack_int lda,
                        lapack_int *ipiv, float *b, lapack_int ldb);
    lapack_int (*dgesv)(int layout, lapack_int n, lapack_int nrhs, double *a, lapack_int lda,
                        lapack_int *ipiv, double *b, lapack_int ldb);
    lapack_int (*sgetrf)(int layout, lapack_int m, lapack_int n, float *a, lapack_int lda,
                         lapack_int *ipiv);
    lapack_int (*dgetrf)(int layout, lapack_int m, lapack_int n, double *a, lapack_int lda,
                         lapack_int *ipiv);
    lapack_int (*sgetri)(int layout, lapack_int n, float *a, lapack_int lda,
                         const lapack_int *ipiv);
    lapack_int (*dgetri)(int layout, lapack_int n, double *a, lapack_int lda,
                         const lapack_int *ipiv);
} gk_lapacke;

/* The CBLAS, loaded on the first call; GK_ERR_NOT_FOUND (the same answer
 * every time, the message starting with `op`) when there is none. */
gk_status gk_cblas_open(const char *op, const gk_cblas **cblas);

/* LAPACKE, the same way. */
gk_status gk_lapacke_open(const char *op, const gk_lapacke **lapacke);

#endif
