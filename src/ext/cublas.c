/* Run-time loading of cuBLAS: see cublas.h. */
#include "ext/cublas.h"

#include "core/error.h"
#include "ext/loader.h"

#include <stddef.h>

static const gk_entry_point entry_points[] = {
    {"cublasCreate_v2", 1, offsetof(gk_cublas, Create)},
    {"cublasDestroy_v2", 1, offsetof(gk_cublas, Destroy)},
    {"cublasSetStream_v2", 1, offsetof(gk_cublas, SetStream)},
    {"cublasSgemm_v2", 1, offsetof(gk_cublas, Sgemm)},
    {"cublasDgemm_v2", 1, offsetof(gk_cublas, Dgemm)},
    {"cublasCgemm_v2", 1, offsetof(gk_cublas, Cgemm)},
    {"cublasZgemm_v2", 1, offsetof(gk_cublas, Zgemm)},
    {"cublasSgemmStridedBatched", 1, offsetof(gk_cublas, SgemmStridedBatched)},
    {"cublasDgemmStridedBatched", 1, offsetof(gk_cublas, DgemmStridedBatched)},
    {"cublasCgemmStridedBatched", 1, offsetof(gk_cublas, CgemmStridedBatched)},
    {"cublasZgemmStridedBatched", 1, offsetof(gk_cublas, ZgemmStridedBatched)},
    {"cublasGemmEx", 1, offsetof(gk_cublas, GemmEx)},
    {"cublasGemmStridedBatchedEx", 1, offsetof(gk_cublas, GemmStridedBatchedEx)},
    {"cublasGetStatusName", 0, offsetof(gk_cublas, GetStatusName)},
    {"cublasSgetrfBatched", 0, offsetof(gk_cublas, getrfBatched[0])},
    {"cublasDgetrfBatched", 0, offsetof(gk_cublas, getrfBatched[1])},
    {"cublasCgetrfBatched", 0, offsetof(gk_cublas, getrfBatched[2])},
    {"cublasZgetrfBatched", 0, offsetof(gk_cublas, getrfBatched[3])},
    {"cublasSgetrsBatched", 0, offsetof(gk_cublas, getrsBatched[0])},
    {"cublasDgetrsBatched", 0, offsetof(gk_cublas, getrsBatched[1])},
    {"cublasCgetrsBatched", 0, offsetof(gk_cublas, getrsBatched[2])},
    {"cublasZgetrsBatched", 0, offsetof(gk_cublas, getrsBatched[3])},
    {"cublasSgetriBatched", 0, offsetof(gk_cublas, getriBatched[0])},
    {"cublasDgetriBatched", 0, offsetof(gk_cublas, getriBatched[1])},
    {"cublasCgetriBatched", 0, offsetof(gk_cublas, getriBatched[2])},
    {"cublasZgetriBatched", 0, offsetof(gk_cublas, getriBatched[3])},
};

static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"};

static gk_cublas cublas_table;

static gk_library library = {
    "cuBLAS", "GPUKIT_CUBLAS_LIBRARY", names, sizeof names / sizeof names[0], entry_points,
    sizeof entry_points / sizeof entry_points[0],
    "install the CUDA toolkit's cuBLAS (11 or newer) for faster matrix products (gpukit's own "
    "kernel is used meanwhile)",
    &cublas_table, sizeof cublas_table, &cublas_table.library, cublas_table.path,
    sizeof cublas_table.path, NULL, 0, GK_OK, "", NULL};

gk_status gk_cublas_open(const gk_cublas **cublas)
{
    gk_status status = gk_library_open(&library, "matmul");
    *cublas = status == GK_OK ? &cublas_table : NULL;
    return status;
}

const char *gk_cublas_status_name(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    }
    if (cublas_table.GetStatusName)
        return cublas_table.GetStatusName(status);
    return "CUBLAS_STATUS_UNKNOWN";
}
