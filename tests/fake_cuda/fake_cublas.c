/* A fake cuBLAS (libcublas.so.13) for tests: gpukit loads it through its
 * real dlopen path (GPUKIT_CUBLAS_LIBRARY) next to the fake libcuda, whose
 * device memory is host memory. Each GEMM first waits for its handle's
 * stream through the fake driver (so the copies queued before it are done,
 * as on a GPU), then runs the host's CBLAS in column-major order on that
 * memory; the strided-batched ones loop over the batch. The batched LU
 * and the solve and inverse from it (getrfBatched, getrsBatched,
 * getriBatched: arrays of pointers to the matrices, in the fake's device
 * memory) loop over the host's LAPACKE.
 *
 * fake_cublas_calls() counts the GEMMs and LU routines run (a batch counts
 * once), so a test can tell cuBLAS's path from gpukit's own kernel. */
#define _GNU_SOURCE
#include "fake_library.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { SUCCESS = 0, NOT_INITIALIZED = 1, INVALID_VALUE = 7, INTERNAL_ERROR = 14 };
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

/* --- GemmEx: 16-bit floats through float32 --- */

enum { R_16F = 2, R_16BF = 14, COMPUTE_32F = 68 };

static float from_half(uint16_t h, int type)
{
    uint32_t bits;
    if (type == R_16BF) {
        bits = (uint32_t)h << 16;
    } else {
        uint32_t sign = (uint32_t)(h & 0x8000) << 16, exponent = (h >> 10) & 0x1f,
                 mantissa = h & 0x3ff;
        if (exponent == 0x1f) {
            bits = sign | 0x7f800000u | (mantissa << 13);
        } else if (exponent) {
            bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
        } else { /* zero or subnormal: mantissa * 2^-24 */
            float value = (float)mantissa * 5.9604644775390625e-08f;
            memcpy(&bits, &value, 4);
            bits |= sign;
        }
    }
    float value;
    memcpy(&value, &bits, 4);
    return value;
}

/* Rounded to nearest, ties to even (finite values in range, as the tests'). */
static uint16_t to_half(float value, int type)
{
    uint32_t bits;
    memcpy(&bits, &value, 4);
    if (type == R_16BF)
        return (uint16_t)((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
    uint32_t sign = (bits >> 16) & 0x8000;
    float magnitude = value < 0 ? -value : value;
    if (magnitude < 6.103515625e-05f) /* subnormal: multiples of 2^-24 */
        return (uint16_t)(sign | (uint32_t)lrintf(magnitude * 16777216.0f));
    uint32_t rest = bits & 0x7fffffff;
    rest += 0xfff + ((rest >> 13) & 1);
    return (uint16_t)(sign | ((rest >> 13) - (112 << 10)));
}

static float *widened(const void *data, int type, long count)
{
    float *out = malloc(sizeof *out * (size_t)(count ? count : 1));
    for (long i = 0; out && i < count; i++)
        out[i] = from_half(((const uint16_t *)data)[i], type);
    return out;
}

EXPORT int cublasGemmStridedBatchedEx(fake_handle *h, int ta, int tb, int m, int n, int k,
                                      const float *alpha, const void *a, int a_type, int lda,
                                      long long sa, const void *b, int b_type, int ldb,
                                      long long sb, const float *beta, void *c, int c_type,
                                      int ldc, long long sc, int batch, int compute, int algo)
{
    void (*f)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
              float *, int) = cblas("cblas_sgemm");
    (void)algo;
    if (!f || compute != COMPUTE_32F || a_type != b_type || a_type != c_type)
        return INTERNAL_ERROR;
    fake_begin(h->stream);
    for (int i = 0; i < batch; i++) {
        /* the column-major operands, whole: lda x k (lda x m transposed),
         * ldb x n (ldb x k), ldc x n */
        const uint16_t *ai = (const uint16_t *)a + i * sa, *bi = (const uint16_t *)b + i * sb;
        uint16_t *ci = (uint16_t *)c + i * sc;
        float *wa = widened(ai, a_type, (long)lda * (ta ? m : k));
        float *wb = widened(bi, b_type, (long)ldb * (tb ? k : n));
        float *wc = calloc((size_t)ldc * (size_t)n + 1, sizeof *wc);
        if (wa && wb && wc) {
            f(COL_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, m, n, k, *alpha, wa, lda,
              wb, ldb, *beta, wc, ldc);
            for (long j = 0; j < (long)ldc * n; j++)
                ci[j] = to_half(wc[j], c_type);
        }
        free(wa);
        free(wb);
        free(wc);
    }
    return SUCCESS;
}

EXPORT int cublasGemmEx(fake_handle *h, int ta, int tb, int m, int n, int k, const float *alpha,
                        const void *a, int a_type, int lda, const void *b, int b_type, int ldb,
                        const float *beta, void *c, int c_type, int ldc, int compute, int algo)
{
    return cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, alpha, a, a_type, lda, 0, b, b_type,
                                      ldb, 0, beta, c, c_type, ldc, 0, 1, compute, algo);
}

REAL_GEMM(S, s, float)
REAL_GEMM(D, d, double)
COMPLEX_GEMM(C, c, float)
COMPLEX_GEMM(Z, z, double)

/* The batched LU of a precision: P cuBLAS's letter, p LAPACKE's, size the
 * bytes of an element. Infos: getrf's and getri's one per matrix in device
 * memory; getrs's one host int. getri copies each factor into its c
 * matrix and inverts it there. */
#define BATCHED_LU(P, p, size)                                                                     \
    EXPORT int cublas##P##getrfBatched(fake_handle *h, int n, void *const a[], int lda,            \
                                       int *pivots, int *info, int batch)                          \
    {                                                                                              \
        int (*f)(int, int, int, void *, int, int *) = lapacke("LAPACKE_" #p "getrf");              \
        if (!f || !pivots)                                                                         \
            return f ? INVALID_VALUE : INTERNAL_ERROR;                                             \
        fake_begin(h->stream);                                                                     \
        for (int i = 0; i < batch; i++)                                                            \
            info[i] = f(COL_MAJOR, n, n, a[i], lda, pivots + (long)i * n);                         \
        return SUCCESS;                                                                            \
    }                                                                                              \
    EXPORT int cublas##P##getrsBatched(fake_handle *h, int trans, int n, int nrhs,                 \
                                       const void *const a[], int lda, const int *pivots,          \
                                       void *const b[], int ldb, int *info, int batch)             \
    {                                                                                              \
        int (*f)(int, char, int, int, const void *, int, const int *, void *, int) =               \
            lapacke("LAPACKE_" #p "getrs");                                                        \
        if (!f)                                                                                    \
            return INTERNAL_ERROR;                                                                 \
        fake_begin(h->stream);                                                                     \
        *info = 0;                                                                                 \
        for (int i = 0; i < batch && *info == 0; i++)                                              \
            *info = f(COL_MAJOR, "NTC"[trans], n, nrhs, a[i], lda, pivots + (long)i * n, b[i],    \
                      ldb);                                                                        \
        return SUCCESS;                                                                            \
    }                                                                                              \
    EXPORT int cublas##P##getriBatched(fake_handle *h, int n, const void *const a[], int lda,      \
                                       const int *pivots, void *const c[], int ldc, int *info,     \
                                       int batch)                                                  \
    {                                                                                              \
        int (*f)(int, int, void *, int, const int *) = lapacke("LAPACKE_" #p "getri");             \
        if (!f || !pivots)                                                                         \
            return f ? INVALID_VALUE : INTERNAL_ERROR;                                             \
        fake_begin(h->stream);                                                                     \
        for (int i = 0; i < batch; i++) {                                                          \
            for (int column = 0; column < n; column++)                                             \
                memcpy((char *)c[i] + (size_t)column * (size_t)ldc * size,                         \
                       (const char *)a[i] + (size_t)column * (size_t)lda * size, (size_t)n * size); \
            info[i] = f(COL_MAJOR, n, c[i], ldc, pivots + (long)i * n);                            \
        }                                                                                          \
        return SUCCESS;                                                                            \
    }

BATCHED_LU(S, s, 4)
BATCHED_LU(D, d, 8)
BATCHED_LU(C, c, 8)
BATCHED_LU(Z, z, 16)
