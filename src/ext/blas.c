/* Run-time loading of CBLAS and LAPACKE: see blas.h. */
#include "ext/blas.h"

#include "core/error.h"
#include "ext/loader.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

static const gk_entry_point cblas_entry_points[] = {
    {"cblas_sgemm", 1, offsetof(gk_cblas, sgemm)},
    {"cblas_dgemm", 1, offsetof(gk_cblas, dgemm)},
    {"cblas_cgemm", 0, offsetof(gk_cblas, cgemm)},
    {"cblas_zgemm", 0, offsetof(gk_cblas, zgemm)},
    {"cblas_sdot", 1, offsetof(gk_cblas, sdot)},
    {"cblas_ddot", 1, offsetof(gk_cblas, ddot)},
    {"cblas_sgemv", 0, offsetof(gk_cblas, sgemv)},
    {"cblas_dgemv", 0, offsetof(gk_cblas, dgemv)},
    {"cblas_ssyrk", 0, offsetof(gk_cblas, ssyrk)},
    {"cblas_dsyrk", 0, offsetof(gk_cblas, dsyrk)},
    {"openblas_get_config", 0, offsetof(gk_cblas, openblas_get_config)},
    {"openblas_get_num_threads", 0, offsetof(gk_cblas, openblas_get_num_threads)},
};

/* The four precisions of a LAPACKE routine, all required: "LAPACKE_sgetrf"
 * and so on into field[GK_LAPACK_S..Z]. */
#define FOUR(s, d, c, z, field)                                                                \
    {"LAPACKE_" s, 1, offsetof(gk_lapacke, field[GK_LAPACK_S])},                               \
        {"LAPACKE_" d, 1, offsetof(gk_lapacke, field[GK_LAPACK_D])},                           \
        {"LAPACKE_" c, 1, offsetof(gk_lapacke, field[GK_LAPACK_C])},                           \
        {"LAPACKE_" z, 1, offsetof(gk_lapacke, field[GK_LAPACK_Z])}

static const gk_entry_point lapacke_entry_points[] = {
    FOUR("sgesdd", "dgesdd", "cgesdd", "zgesdd", gesdd),
    FOUR("sgesvd", "dgesvd", "cgesvd", "zgesvd", gesvd),
    FOUR("sgeqrf", "dgeqrf", "cgeqrf", "zgeqrf", geqrf),
    FOUR("sorgqr", "dorgqr", "cungqr", "zungqr", orgqr),
    FOUR("sgetrf", "dgetrf", "cgetrf", "zgetrf", getrf),
    FOUR("sgetrs", "dgetrs", "cgetrs", "zgetrs", getrs),
    FOUR("sgesv", "dgesv", "cgesv", "zgesv", gesv),
    FOUR("spotrf", "dpotrf", "cpotrf", "zpotrf", potrf),
    {"LAPACKE_ssyevd_work", 1, offsetof(gk_lapacke, syevd_work[0])},
    {"LAPACKE_dsyevd_work", 1, offsetof(gk_lapacke, syevd_work[1])},
    {"LAPACKE_cheevd_work", 1, offsetof(gk_lapacke, heevd_work[0])},
    {"LAPACKE_zheevd_work", 1, offsetof(gk_lapacke, heevd_work[1])},
    {"LAPACKE_sgeev", 1, offsetof(gk_lapacke, geev_real[0])},
    {"LAPACKE_dgeev", 1, offsetof(gk_lapacke, geev_real[1])},
    {"LAPACKE_cgeev", 1, offsetof(gk_lapacke, geev_complex[0])},
    {"LAPACKE_zgeev", 1, offsetof(gk_lapacke, geev_complex[1])},
    {"LAPACKE_set_nancheck", 0, offsetof(gk_lapacke, set_nancheck)},
    /* OpenBLAS's, found through LAPACKE's dependencies where it is one */
    {"openblas_get_num_threads", 0, offsetof(gk_lapacke, openblas_get_num_threads)},
    {"openblas_set_num_threads", 0, offsetof(gk_lapacke, openblas_set_num_threads)},
    {"openblas_get_parallel", 0, offsetof(gk_lapacke, openblas_get_parallel)},
};

/* The reference BLAS of Debian and Fedora carries the CBLAS functions
 * too, so it serves when OpenBLAS is not installed. */
static const char *const cblas_names[] = {"libopenblas.so.0", "libcblas.so.3", "libblas.so.3"};
/* An OpenBLAS built with its own LAPACKE (upstream's default) serves too. */
static const char *const lapacke_names[] = {"liblapacke.so.3", "libopenblas.so.0"};

/* After a call OpenBLAS's threads spin 2^28 cycles (about 0.1 s) before
 * they sleep: a core burnt after every matmul, taken from gpukit's own
 * threads and the other users of a shared machine. Unless the user chose,
 * 2^20 (about 0.4 ms): back-to-back calls still find them awake (a 512 x
 * 512 matmul as fast; 4, the least, made it 1.4x slower). A call after a
 * longer idle gap pays their wake-up: 512 x 512 took 5.4 ms instead of
 * 3.5 after 20 ms idle on a 2-core VM (bench/idle_cpu_vs_numpy.py). */
static const char *const goto_timeout[] = {"GOTO_THREAD_TIMEOUT", NULL};
static const gk_load_default short_openblas_spin = {"OPENBLAS_THREAD_TIMEOUT", "20",
                                                     goto_timeout};

static gk_cblas cblas_table;
static gk_lapacke lapacke_table;

/* LAPACKE's own NaN check off: NaN meets LAPACK as in NumPy. */
static void lapacke_after(gk_library *lib)
{
    (void)lib;
    if (lapacke_table.set_nancheck)
        lapacke_table.set_nancheck(0);
}

static gk_library cblas_library = {
    "CBLAS", "GPUKIT_BLAS_LIBRARY", cblas_names, sizeof cblas_names / sizeof cblas_names[0],
    cblas_entry_points, sizeof cblas_entry_points / sizeof cblas_entry_points[0],
    "install OpenBLAS (Debian, Ubuntu: apt install libopenblas0; Fedora: dnf install "
    "openblas)",
    &cblas_table, sizeof cblas_table, &cblas_table.library, cblas_table.path,
    sizeof cblas_table.path, NULL, 0, GK_OK, "", &short_openblas_spin};

static gk_library lapacke_library = {
    "LAPACKE", "GPUKIT_LAPACKE_LIBRARY", lapacke_names,
    sizeof lapacke_names / sizeof lapacke_names[0], lapacke_entry_points,
    sizeof lapacke_entry_points / sizeof lapacke_entry_points[0],
    "install LAPACKE (Debian, Ubuntu: apt install liblapacke; Fedora: dnf install "
    "lapack)",
    &lapacke_table, sizeof lapacke_table, &lapacke_table.library, lapacke_table.path,
    sizeof lapacke_table.path, lapacke_after, 0, GK_OK, "", &short_openblas_spin};

gk_status gk_cblas_open(const char *op, const gk_cblas **cblas)
{
    gk_status status = gk_library_open(&cblas_library, op);
    *cblas = status == GK_OK ? &cblas_table : NULL;
    return status;
}

gk_status gk_lapacke_open(const char *op, const gk_lapacke **lapacke)
{
    gk_status status = gk_library_open(&lapacke_library, op);
    *lapacke = status == GK_OK ? &lapacke_table : NULL;
    return status;
}

/* The pauses in force, and OpenBLAS's thread count before the first. */
static pthread_mutex_t pause_lock = PTHREAD_MUTEX_INITIALIZER;
static int pauses, threads_before_pause;

/* Whether pausing applies: an OpenBLAS with its own thread pool
 * (openblas_get_parallel 1). An OpenMP build (2) sets the calling
 * thread's OpenMP thread count instead, which is gpukit's own team size,
 * and already runs one thread per call inside a parallel region; a
 * sequential one (0) has nothing to pause. */
static bool pausable(const gk_lapacke *lapacke)
{
    return lapacke->openblas_get_num_threads && lapacke->openblas_set_num_threads &&
           lapacke->openblas_get_parallel && lapacke->openblas_get_parallel() == 1;
}

void gk_lapacke_pause_threads(const gk_lapacke *lapacke)
{
    if (!pausable(lapacke))
        return;
    pthread_mutex_lock(&pause_lock);
    if (pauses++ == 0) {
        threads_before_pause = lapacke->openblas_get_num_threads();
        lapacke->openblas_set_num_threads(1);
    }
    pthread_mutex_unlock(&pause_lock);
}

void gk_lapacke_resume_threads(const gk_lapacke *lapacke)
{
    if (!pausable(lapacke))
        return;
    pthread_mutex_lock(&pause_lock);
    /* a count someone else set meanwhile (openblas_set_num_threads from
     * another thread, threadpoolctl) is theirs to keep */
    if (--pauses == 0 && lapacke->openblas_get_num_threads() == 1)
        lapacke->openblas_set_num_threads(threads_before_pause);
    pthread_mutex_unlock(&pause_lock);
}
