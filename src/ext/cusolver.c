/* Run-time loading of cuSOLVER: see cusolver.h. */
#include "ext/cusolver.h"

#include "core/error.h"
#include "ext/loader.h"

#include <stddef.h>

/* The four precisions of a routine, "cusolverDnSgetrf" ... into
 * field[GK_CUSOLVER_S..Z], required or not. */
#define PRECISIONS(s, d, c, z, field, required)                                                    \
    {"cusolverDn" s, required, offsetof(gk_cusolver, field[GK_CUSOLVER_S])},                       \
        {"cusolverDn" d, required, offsetof(gk_cusolver, field[GK_CUSOLVER_D])},                   \
        {"cusolverDn" c, required, offsetof(gk_cusolver, field[GK_CUSOLVER_C])},                   \
        {"cusolverDn" z, required, offsetof(gk_cusolver, field[GK_CUSOLVER_Z])}
#define FOUR(s, d, c, z, field) PRECISIONS(s, d, c, z, field, 1)
/* The batched routines, which older cuSOLVERs lack. */
#define OPTIONAL_FOUR(s, d, c, z, field) PRECISIONS(s, d, c, z, field, 0)

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
    OPTIONAL_FOUR("SpotrfBatched", "DpotrfBatched", "CpotrfBatched", "ZpotrfBatched",
                  potrfBatched),
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
    OPTIONAL_FOUR("SsyevjBatched_bufferSize", "DsyevjBatched_bufferSize",
                  "CheevjBatched_bufferSize", "ZheevjBatched_bufferSize",
                  syevjBatched_bufferSize),
    OPTIONAL_FOUR("SsyevjBatched", "DsyevjBatched", "CheevjBatched", "ZheevjBatched",
                  syevjBatched),
    {"cusolverDnCreateGesvdjInfo", 0, offsetof(gk_cusolver, CreateGesvdjInfo)},
    {"cusolverDnXgesvdjSetSortEig", 0, offsetof(gk_cusolver, XgesvdjSetSortEig)},
    OPTIONAL_FOUR("SgesvdjBatched_bufferSize", "DgesvdjBatched_bufferSize",
                  "CgesvdjBatched_bufferSize", "ZgesvdjBatched_bufferSize",
                  gesvdjBatched_bufferSize),
    OPTIONAL_FOUR("SgesvdjBatched", "DgesvdjBatched", "CgesvdjBatched", "ZgesvdjBatched",
                  gesvdjBatched),
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
    &table, sizeof table, &table.library, table.path, sizeof table.path, NULL, 0, GK_OK, "", NULL};

gk_status gk_cusolver_open(const char *op, const gk_cusolver **cusolver)
{
    gk_status status = gk_library_open(&library, op);
    *cusolver = status == GK_OK ? &table : NULL;
    return status;
}
