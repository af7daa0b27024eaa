/* A fake cuBLAS (libcublas.so.13) for tests: gpukit loads it through its
 * real dlopen path (GPUKIT_CUBLAS_LIBRARY) next to the fake libcuda, whose
 * device memory is host memory. Each GEMM first waits for its handle's
 * stream through the fake driver (so the copies queued before it are done,
 * as on a GPU), then runs the host's CBLAS in column-major order on that
 * memory; the strided-batched ones loop over the batch.
 *
 * fake_cublas_calls() counts the GEMMs run (a batch counts once), so a
 * test can tell cuBLAS's path from gpukit's own kernel. */
#define _GNU_SOURCE
#include "fake_library.h"

enum { SUCCESS = 0, NOT_INITIALIZED = 1, INTERNAL_ERROR = 14 };
enum { COL_MAJOR = 102, NO_TRANS = 111, TRANS = 112 };

FAKE_CALLS(fake_cublas_calls)

/* CBLAS's function `name` (NULL when there is none). */
static void *cblas(const char *name)
{
    static void *library;
    pthread_mutex_lock(&fake_lock);
    if (!library)
        library = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library)
        library = dlopen("libcblas.so.3", RTLD_NOW | RTLD_LOCAL);
    pthread_mutex_unlock(&fake_lock);
    return library ? dlsym(library, name) : NULL;
}


FAKE_HANDLE_API(cublasCreate_v2, cublasDestroy_v2, cublasSetStream_v2)

/* The real GEMMs take alpha and beta by value, the complex ones by pointer. */
#define REAL_GEMM(P, p, T)                                                                         \
    EXPORT int cublas##P##gemmStridedBatched(fake_handle *h, int ta, int tb, int m, int n, int k,  \
                                             const T *alpha, const T *a, int lda, long long sa,    \
                                             const T *b, int ldb, long long sb, const T *beta,     \
                                             T *c, int ldc, long long sc, int batch)               \
    {                                                                                              \
        void (*f)(int, int, int, int, int, int, T, const T *, int, const T *, int, T, T *, int) =  \
            cblas("cblas_" #p "gemm");                                                             \
        if (!f)                                                                                    \
            return INTERNAL_ERROR;                                                                 \
        fake_begin(h->stream);                                                                     \
        for (int i = 0; i < batch; i++)                                                            \
            f(COL_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, m, n, k, *alpha, a + i * sa, \
              lda, b + i * sb, ldb, *beta, c + i * sc, ldc);                                       \
        return SUCCESS;                                                                            \
    }                                                                                              \
    EXPORT int cublas##P##gemm_v2(fake_handle *h, int ta, int tb, int m, int n, int k, const T *alpha, \
                                  const T *a, int lda, const T *b, int ldb, const T *beta, T *c,   \
                                  int ldc)                                                         \
    {                                                                                              \
        return cublas##P##gemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, 0, b, ldb, 0,      \
                                             beta, c, ldc, 0, 1);                                  \
    }

#define COMPLEX_GEMM(P, p, T)                                                                      \
    EXPORT int cublas##P##gemmStridedBatched(fake_handle *h, int ta, int tb, int m, int n, int k,  \
                                             const void *alpha, const T *a, int lda, long long sa, \
                                             const T *b, int ldb, long long sb, const void *beta,  \
                                             T *c, int ldc, long long sc, int batch)               \
    {                                                                                              \
        void (*f)(int, int, int, int, int, int, const void *, const void *, int, const void *,     \
                  int, const void *, void *, int) = cblas("cblas_" #p "gemm");                     \
        if (!f)                                                                                    \
            return INTERNAL_ERROR;                                                                 \
        fake_begin(h->stream);                                                                     \
        for (int i = 0; i < batch; i++) /* T: one real part; an element is two */                  \
            f(COL_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, m, n, k, alpha,             \
              a + 2 * i * sa, lda, b + 2 * i * sb, ldb, beta, c + 2 * i * sc, ldc);                \
        return SUCCESS;                                                                            \
    }                                                                                              \
    EXPORT int cublas##P##gemm_v2(fake_handle *h, int ta, int tb, int m, int n, int k,             \
                                  const void *alpha, const T *a, int lda, const T *b, int ldb,     \
                                  const void *beta, T *c, int ldc)                                 \
    {                                                                                              \
        return cublas##P##gemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, 0, b, ldb, 0,      \
                                             beta, c, ldc, 0, 1);                                  \
    }

REAL_GEMM(S, s, float)
REAL_GEMM(D, d, double)
COMPLEX_GEMM(C, c, float)
COMPLEX_GEMM(Z, z, double)
