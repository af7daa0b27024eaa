/* Run-time loading of cuSOLVER: see cusolver.h. */
#include "ext/cusolver.h"

#include "core/error.h"
#include "ext/loader.h"

#include <stddef.h>

/* The four precisions of a routine, "cusolverDnSgetrf" ... into
 * field[GK_CUSOLVER_S..Z]. */
#define FOUR(s, d, c, z, field)                                                                    \
    {"cusolverDn" s, 1, offsetof(gk_cusolver, field[GK_CUSOLVER_S])},                              \
        {"cusolverDn" d, 1, offsetof(gk_cusolver, field[GK_CUSOLVER_D])},                          \
        {"cusolverDn" c, 1, offsetof(gk_cusolver, field[GK_CUSOLVER_C])},                          \
        {"cusolverDn" z, 1, offsetof(gk_cusolver, field[GK_CUSOLVER_Z])}

static const gk_entry_point entry_points[] = {
    {"cusolverDnCreate", 1, offsetof(gk_cusolver, Create)},
    {"cusolverDnDestroy", 1, offsetof(gk_cusolver, Destroy)},
    {"cusolverDnSetStream", 1, offsetof(gk_cusolver, SetStream)},
    FOUR("Sgetrf_bufferSize", "Dgetrf_bufferSize", "Cgetrf_bufferSize", "Zgetrf_bufferSize",
         getrf_bufferSize),
    FOUR("Sgetrf", "Dgetrf", "Cgetrf", "Zgetrf", getrf),
    FOUR("Sgetrs", "Dgetrs", "Cgetrs", "Zgetrs", getrs),
    FOUR("Spotrf_bufferSize", "Dpotrf_bufferSize", "Cpotrf_bufferSize", "Zpotrf_bufferSize",
         potrf_bufferSize),
    FOUR("Spotrf", "Dpotrf", "Cpotrf", "Zpotrf", potrf),
    {"cusolverDnSpotrfBatched", 0, offsetof(gk_cusolver, potrfBatched[GK_CUSOLVER_S])},
    {"cusolverDnDpotrfBatched", 0, offsetof(gk_cusolver, potrfBatched[GK_CUSOLVER_D])},
    {"cusolverDnCpotrfBatched", 0, offsetof(gk_cusolver, potrfBatched[GK_CUSOLVER_C])},
    {"cusolverDnZpotrfBatched", 0, offsetof(gk_cusolver, potrfBatched[GK_CUSOLVER_Z])},
    FOUR("Ssyevd_bufferSize", "Dsyevd_bufferSize", "Cheevd_bufferSize", "Zheevd_bufferSize",
         syevd_bufferSize),
    FOUR("Ssyevd", "Dsyevd", "Cheevd", "Zheevd", syevd),
    FOUR("Sgeqrf_bufferSize", "Dgeqrf_bufferSize", "Cgeqrf_bufferSize", "Zgeqrf_bufferSize",
         geqrf_bufferSize),
    FOUR("Sgeqrf", "Dgeqrf", "Cgeqrf", "Zgeqrf", geqrf),
    FOUR("Sorgqr_bufferSize", "Dorgqr_bufferSize", "Cungqr_bufferSize", "Zungqr_bufferSize",
         orgqr_bufferSize),
    FOUR("Sorgqr", "Dorgqr", "Cungqr", "Zungqr", orgqr),
    {"cusolverDnCreateSyevjInfo", 0, offsetof(gk_cusolver, CreateSyevjInfo)},
    {"cusolverDnXsyevjSetSortEig", 0, offsetof(gk_cusolver, XsyevjSetSortEig)},
    {"cusolverDnSsyevjBatched_bufferSize", 0,
     offsetof(gk_cusolver, syevjBatched_bufferSize[GK_CUSOLVER_S])},
    {"cusolverDnDsyevjBatched_bufferSize", 0,
     offsetof(gk_cusolver, syevjBatched_bufferSize[GK_CUSOLVER_D])},
    {"cusolverDnCheevjBatched_bufferSize", 0,
     offsetof(gk_cusolver, syevjBatched_bufferSize[GK_CUSOLVER_C])},
    {"cusolverDnZheevjBatched_bufferSize", 0,
     offsetof(gk_cusolver, syevjBatched_bufferSize[GK_CUSOLVER_Z])},
    {"cusolverDnSsyevjBatched", 0, offsetof(gk_cusolver, syevjBatched[GK_CUSOLVER_S])},
    {"cusolverDnDsyevjBatched", 0, offsetof(gk_cusolver, syevjBatched[GK_CUSOLVER_D])},
    {"cusolverDnCheevjBatched", 0, offsetof(gk_cusolver, syevjBatched[GK_CUSOLVER_C])},
    {"cusolverDnZheevjBatched", 0, offsetof(gk_cusolver, syevjBatched[GK_CUSOLVER_Z])},
    FOUR("Sgesvd_bufferSize", "Dgesvd_bufferSize", "Cgesvd_bufferSize", "Zgesvd_bufferSize",
         gesvd_bufferSize),
    FOUR("Sgesvd", "Dgesvd", "Cgesvd", "Zgesvd", gesvd),
};

static const char *const names[] = {"libcusolver.so.12", "libcusolver.so.11"};

static gk_cusolver table;

static gk_library library = {
    "cuSOLVER", "GPUKIT_CUSOLVER_LIBRARY", names, sizeof names / sizeof names[0], entry_points,
    sizeof entry_points / sizeof entry_points[0],
    "install the CUDA toolkit's cuSOLVER (pip install nvidia-cusolver-cu12, or the toolkit) "
    "for factorizations on the GPU; without it they run on the host",
    &table, sizeof table, &table.library, table.path, sizeof table.path, NULL, 0, GK_OK, ""};

gk_status gk_cusolver_open(const char *op, const gk_cusolver **cusolver)
{
    gk_status status = gk_library_open(&library, op);
    *cusolver = status == GK_OK ? &table : NULL;
    return status;
}
