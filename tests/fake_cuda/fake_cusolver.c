/* A fake cuSOLVER (libcusolver.so.12) for tests: gpukit loads it through
 * its real dlopen path (GPUKIT_CUSOLVER_LIBRARY) next to the fake libcuda,
 * whose device memory is host memory. Each routine first waits for its
 * handle's stream through the fake driver (so the copies queued before it
 * are done, as on a GPU), then calls the host's LAPACKE in column-major
 * order on that memory, writing LAPACK's info where cuSOLVER would. The
 * workspace sizes it reports are small but real: gpukit must allocate
 * them (the pointers it passes are checked to be non-NULL).
 *
 * FAKE_CUSOLVER_LWORK sets the workspace size every _bufferSize reports
 * (a negative one: an int that overflowed).
 *
 * The batched routines (potrfBatched; syevjBatched and gesvdjBatched, whose
 * parameter objects it makes and ignores) loop over LAPACKE the same way:
 * syevd for the Jacobi eigensolver, gesvd for the Jacobi SVD, whose V
 * (not V^H) it writes as cuSOLVER does.
 *
 * Built with FAKE_CUSOLVER_WITHOUT_ZHEEVD, it lacks cusolverDnZheevd, like
 * a broken install: gpukit must then compute on the host.
 *
 * fake_cusolver_calls() counts the routines run, so a test can tell the
 * GPU path from the host's. */
#define _GNU_SOURCE
#include "fake_library.h"

#include <string.h>

enum { SUCCESS = 0, NOT_INITIALIZED = 1, INVALID_VALUE = 3, INTERNAL_ERROR = 7 };
enum { COL_MAJOR = 102 };

FAKE_CALLS(fake_cusolver_calls)

FAKE_HANDLE_API(cusolverDnCreate, cusolverDnDestroy, cusolverDnSetStream)

static char uplo_of(int fill)
{
    return fill ? 'U' : 'L';
}

/* The workspace size: 16 elements, or FAKE_CUSOLVER_LWORK's number (a
 * negative one is a size that overflowed cuSOLVER's int). */
static int fake_lwork(void)
{
    const char *value = getenv("FAKE_CUSOLVER_LWORK");
    return value ? atoi(value) : 16;
}

#define BUFFER_SIZE(name, ...)                                                                     \
    EXPORT int name(__VA_ARGS__, int *lwork)                                                       \
    {                                                                                              \
        *lwork = fake_lwork();                                                                     \
        return SUCCESS;                                                                            \
    }

/* The routines of a precision: P cuSOLVER's letter, p LAPACKE's. */
#define ROUTINES(P, p)                                                                             \
    BUFFER_SIZE(cusolverDn##P##getrf_bufferSize, fake_handle *h, int m, int n, void *a, int lda)   \
    EXPORT int cusolverDn##P##getrf(fake_handle *h, int m, int n, void *a, int lda, void *work,    \
                                    int *pivots, int *info)                                        \
    {                                                                                              \
        int (*f)(int, int, int, void *, int, int *) = lapacke("LAPACKE_" #p "getrf");              \
        if (!f || !work)                                                                           \
            return f ? INVALID_VALUE : INTERNAL_ERROR;                                             \
        fake_begin(h->stream);                                                                     \
        *info = f(COL_MAJOR, m, n, a, lda, pivots);                                                \
        return SUCCESS;                                                                            \
    }                                                                                              \
    EXPORT int cusolverDn##P##getrs(fake_handle *h, int trans, int n, int nrhs, const void *a, int lda, \
                                    const int *pivots, void *b, int ldb, int *info)                \
    {                                                                                              \
        int (*f)(int, char, int, int, const void *, int, const int *, void *, int) =               \
            lapacke("LAPACKE_" #p "getrs");                                                        \
        if (!f)                                                                                    \
            return INTERNAL_ERROR;                                                                 \
        fake_begin(h->stream);                                                                     \
        *info = f(COL_MAJOR, "NTC"[trans], n, nrhs, a, lda, pivots, b, ldb);                       \
        return SUCCESS;                                                                            \
    }                                                                                              \
    BUFFER_SIZE(cusolverDn##P##potrf_bufferSize, fake_handle *h, int uplo, int n, void *a, int lda) \
    EXPORT int cusolverDn##P##potrf(fake_handle *h, int uplo, int n, void *a, int lda, void *work, \
                                    int lwork, int *info)                                          \
    {                                                                                              \
        int (*f)(int, char, int, void *, int) = lapacke("LAPACKE_" #p "potrf");                    \
        if (!f || !work || lwork < 16)                                                             \
            return f ? INVALID_VALUE : INTERNAL_ERROR;                                             \
        fake_begin(h->stream);                                                                     \
        *info = f(COL_MAJOR, uplo_of(uplo), n, a, lda);                                            \
        return SUCCESS;                                                                            \
    }

/* The SVD of a precision; like cuSOLVER's, only for m >= n. */
#define SVD(P, p)                                                                                  \
    BUFFER_SIZE(cusolverDn##P##gesvd_bufferSize, fake_handle *h, int m, int n)                     \
    EXPORT int cusolverDn##P##gesvd(fake_handle *h, signed char jobu, signed char jobvt, int m, int n, \
                                    void *a, int lda, void *s, void *u, int ldu, void *vt,         \
                                    int ldvt, void *work, int lwork, void *rwork, int *info)       \
    {                                                                                              \
        int (*f)(int, char, char, int, int, void *, int, void *, void *, int, void *, int,         \
                 void *) = lapacke("LAPACKE_" #p "gesvd");                                         \
        if (!f || !work || lwork < 16 || m < n || !rwork)                                          \
            return f ? INVALID_VALUE : INTERNAL_ERROR;                                             \
        fake_begin(h->stream);                                                                     \
        *info = f(COL_MAJOR, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, rwork);               \
        return SUCCESS;                                                                            \
    }

/* The QR of a precision: geqrf, and orgqr (ungqr for complex). */
#define QR(P, p, ORG)                                                                              \
    BUFFER_SIZE(cusolverDn##P##geqrf_bufferSize, fake_handle *h, int m, int n, void *a, int lda)   \
    EXPORT int cusolverDn##P##geqrf(fake_handle *h, int m, int n, void *a, int lda, void *tau,     \
                                    void *work, int lwork, int *info)                              \
    {                                                                                              \
        int (*f)(int, int, int, void *, int, void *) = lapacke("LAPACKE_" #p "geqrf");             \
        if (!f || !work || lwork < 16 || !tau)                                                     \
            return f ? INVALID_VALUE : INTERNAL_ERROR;                                             \
        fake_begin(h->stream);                                                                     \
        *info = f(COL_MAJOR, m, n, a, lda, tau);                                                   \
        return SUCCESS;                                                                            \
    }                                                                                              \
    BUFFER_SIZE(cusolverDn##P##ORG##_bufferSize, fake_handle *h, int m, int n, int k,              \
                const void *a, int lda, const void *tau)                                           \
    EXPORT int cusolverDn##P##ORG(fake_handle *h, int m, int n, int k, void *a, int lda,           \
                                  const void *tau, void *work, int lwork, int *info)               \
    {                                                                                              \
        int (*f)(int, int, int, int, void *, int, const void *) = lapacke("LAPACKE_" #p #ORG);     \
        if (!f || !work || lwork < 16 || !tau || n > m || k > n)                                   \
            return f ? INVALID_VALUE : INTERNAL_ERROR;                                             \
        fake_begin(h->stream);                                                                     \
        *info = f(COL_MAJOR, m, n, k, a, lda, tau);                                                \
        return SUCCESS;                                                                            \
    }

/* The eigen-solver of a precision (syevd, or heevd for complex). */
#define EIGEN(P, p, EIG)                                                                           \
    BUFFER_SIZE(cusolverDn##P##EIG##_bufferSize, fake_handle *h, int jobz, int uplo, int n,        \
                const void *a, int lda, const void *w)                                             \
    EXPORT int cusolverDn##P##EIG(fake_handle *h, int jobz, int uplo, int n, void *a, int lda, void *w, \
                                  void *work, int lwork, int *info)                                \
    {                                                                                              \
        int (*f)(int, char, char, int, void *, int, void *) = lapacke("LAPACKE_" #p #EIG);         \
        if (!f || !work || lwork < 16)                                                             \
            return f ? INVALID_VALUE : INTERNAL_ERROR;                                             \
        fake_begin(h->stream);                                                                     \
        *info = f(COL_MAJOR, jobz ? 'V' : 'N', uplo_of(uplo), n, a, lda, w);                       \
        return SUCCESS;                                                                            \
    }

ROUTINES(S, s)
ROUTINES(D, d)
ROUTINES(C, c)
ROUTINES(Z, z)
QR(S, s, orgqr)
QR(D, d, orgqr)
QR(C, c, ungqr)
QR(Z, z, ungqr)
SVD(S, s)
SVD(D, d)
SVD(C, c)
SVD(Z, z)
EIGEN(S, s, syevd)
EIGEN(D, d, syevd)
EIGEN(C, c, heevd)
#ifndef FAKE_CUSOLVER_WITHOUT_ZHEEVD
EIGEN(Z, z, heevd)
#endif

/* --- the batched routines --- */

/* A parameters object (syevjInfo_t, gesvdjInfo_t): made, sorted, freed. */
typedef struct fake_params {
    int sort;
} fake_params;

#define PARAMS_API(kind, set_sort)                                                                 \
    EXPORT int cusolverDnCreate##kind##Info(fake_params **p)                                      \
    {                                                                                              \
        *p = calloc(1, sizeof **p);                                                                \
        return *p ? SUCCESS : INTERNAL_ERROR;                                                      \
    }                                                                                              \
    EXPORT int cusolverDnDestroy##kind##Info(fake_params *p)                                      \
    {                                                                                              \
        free(p);                                                                                   \
        return SUCCESS;                                                                            \
    }                                                                                              \
    EXPORT int set_sort(fake_params *p, int sort)                                                  \
    {                                                                                              \
        p->sort = sort;                                                                            \
        return SUCCESS;                                                                            \
    }

PARAMS_API(Syevj, cusolverDnXsyevjSetSortEig)
PARAMS_API(Gesvdj, cusolverDnXgesvdjSetSortEig)

/* v (n x n, leading dimension ldv) = vt^H (n x n, leading dimension n):
 * elements of `size` bytes, complex ones (pairs) conjugated. */
static void conjugate_transpose(char *v, int ldv, const char *vt, int n, size_t size,
                                int complex)
{
    for (int row = 0; row < n; row++)
        for (int col = 0; col < n; col++) {
            char *to = v + ((size_t)col * (size_t)ldv + (size_t)row) * size;
            memcpy(to, vt + ((size_t)row * (size_t)n + (size_t)col) * size, size);
            if (complex && size == 8)
                ((float *)to)[1] = -((float *)to)[1];
            else if (complex)
                ((double *)to)[1] = -((double *)to)[1];
        }
}

/* The batched routines of a precision: P cuSOLVER's letter, p LAPACKE's,
 * EIG the eigensolver's name (syevd or heevd), T an element's type (real
 * part's for complex) and C whether complex. */
#define BATCHED(P, p, EIG, J, T, C)                                                                \
    EXPORT int cusolverDn##P##potrfBatched(fake_handle *h, int uplo, int n, void *a[], int lda,    \
                                           int *info, int batch)                                   \
    {                                                                                              \
        int (*f)(int, char, int, void *, int) = lapacke("LAPACKE_" #p "potrf");                    \
        if (!f)                                                                                    \
            return INTERNAL_ERROR;                                                                 \
        fake_begin(h->stream);                                                                     \
        for (int i = 0; i < batch; i++)                                                            \
            info[i] = f(COL_MAJOR, uplo_of(uplo), n, a[i], lda);                                   \
        return SUCCESS;                                                                            \
    }                                                                                              \
    EXPORT int cusolverDn##P##J##Batched_bufferSize(fake_handle *h, int jobz, int uplo, int n,     \
                                                    const void *a, int lda, const void *w,         \
                                                    int *lwork, fake_params *params, int batch)    \
    {                                                                                              \
        *lwork = fake_lwork();                                                                     \
        return SUCCESS;                                                                            \
    }                                                                                              \
    EXPORT int cusolverDn##P##J##Batched(fake_handle *h, int jobz, int uplo, int n, T *a, int lda, \
                                         T *w, void *work, int lwork, int *info,                   \
                                         fake_params *params, int batch)                           \
    {                                                                                              \
        int (*f)(int, char, char, int, void *, int, void *) = lapacke("LAPACKE_" #p #EIG);         \
        if (!f || !work || lwork < 16 || !params)                                                  \
            return f ? INVALID_VALUE : INTERNAL_ERROR;                                             \
        fake_begin(h->stream);                                                                     \
        for (int i = 0; i < batch; i++)                                                            \
            info[i] = f(COL_MAJOR, jobz ? 'V' : 'N', uplo_of(uplo), n,                             \
                        a + (1 + C) * (long)i * lda * n, lda, w + (long)i * n);                    \
        return SUCCESS;                                                                            \
    }                                                                                              \
    EXPORT int cusolverDn##P##gesvdjBatched_bufferSize(                                            \
        fake_handle *h, int jobz, int m, int n, const void *a, int lda, const void *s,             \
        const void *u, int ldu, const void *v, int ldv, int *lwork, fake_params *params,           \
        int batch)                                                                                 \
    {                                                                                              \
        *lwork = fake_lwork();                                                                     \
        return SUCCESS;                                                                            \
    }                                                                                              \
    EXPORT int cusolverDn##P##gesvdjBatched(fake_handle *h, int jobz, int m, int n, T *a, int lda, \
                                            T *s, T *u, int ldu, T *v, int ldv, void *work,        \
                                            int lwork, int *info, fake_params *params, int batch)  \
    {                                                                                              \
        int (*f)(int, char, char, int, int, void *, int, void *, void *, int, void *, int,         \
                 void *) = lapacke("LAPACKE_" #p "gesvd");                                         \
        int k = m < n ? m : n;                                                                     \
        size_t size = (1 + C) * sizeof(T);                                                         \
        T *vt = malloc(size * (size_t)(n * n + 1)), *superb = malloc(sizeof(T) * (size_t)(k + 1)); \
        int ok = f && work && lwork >= 16 && params && m <= 32 && n <= 32 && vt && superb &&      \
                 (!jobz || (u && v && ldu >= m && ldv >= n));                                      \
        if (ok)                                                                                    \
            fake_begin(h->stream);                                                                 \
        for (int i = 0; ok && i < batch; i++) {                                                    \
            char job = jobz ? 'A' : 'N';                                                           \
            info[i] = f(COL_MAJOR, job, job, m, n, a + (1 + C) * (long)i * lda * n, lda,           \
                        s + (long)i * k, jobz ? u + (1 + C) * (long)i * ldu * m : NULL,            \
                        jobz ? ldu : 1, vt, jobz ? n : 1, superb);                                 \
            if (jobz)                                                                              \
                conjugate_transpose((char *)(v + (1 + C) * (long)i * ldv * n), ldv, (char *)vt,   \
                                    n, size, C);                                                   \
        }                                                                                          \
        free(vt);                                                                                  \
        free(superb);                                                                              \
        return ok ? SUCCESS : f ? INVALID_VALUE : INTERNAL_ERROR;                                  \
    }

BATCHED(S, s, syevd, syevj, float, 0)
BATCHED(D, d, syevd, syevj, double, 0)
BATCHED(C, c, heevd, heevj, float, 1)
BATCHED(Z, z, heevd, heevj, double, 1)
