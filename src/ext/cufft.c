/* Run-time loading of cuFFT: see cufft.h. */
#include "ext/cufft.h"

#include "core/error.h"
#include "ext/loader.h"

#include <stddef.h>

static const gk_entry_point entry_points[] = {
    {"cufftPlanMany", 1, offsetof(gk_cufft, PlanMany)},
    {"cufftSetStream", 1, offsetof(gk_cufft, SetStream)},
    {"cufftDestroy", 1, offsetof(gk_cufft, Destroy)},
    {"cufftExecC2C", 1, offsetof(gk_cufft, ExecC2C)},
    {"cufftExecZ2Z", 1, offsetof(gk_cufft, ExecZ2Z)},
    {"cufftExecR2C", 1, offsetof(gk_cufft, ExecR2C)},
    {"cufftExecD2Z", 1, offsetof(gk_cufft, ExecD2Z)},
    {"cufftExecC2R", 1, offsetof(gk_cufft, ExecC2R)},
    {"cufftExecZ2D", 1, offsetof(gk_cufft, ExecZ2D)},
};

static const char *const names[] = {"libcufft.so.12", "libcufft.so.11"};

static gk_cufft table;

static gk_library library = {
    "cuFFT", "GPUKIT_CUFFT_LIBRARY", names, sizeof names / sizeof names[0], entry_points,
    sizeof entry_points / sizeof entry_points[0],
    "install the CUDA toolkit's cuFFT (pip install nvidia-cufft-cu12, or the toolkit) for FFTs "
    "on the GPU; without it they run on the host",
    &table, sizeof table, &table.library, table.path, sizeof table.path, NULL, 0, GK_OK, "", NULL};

gk_status gk_cufft_open(const char *op, const gk_cufft **cufft)
{
    gk_status status = gk_library_open(&library, op);
    *cufft = status == GK_OK ? &table : NULL;
    return status;
}

const char *gk_cufft_result_name(cufftResult result)
{
    static const char *const known[] = {
        "CUFFT_SUCCESS",        "CUFFT_INVALID_PLAN",   "CUFFT_ALLOC_FAILED",
        "CUFFT_INVALID_TYPE",   "CUFFT_INVALID_VALUE",  "CUFFT_INTERNAL_ERROR",
        "CUFFT_EXEC_FAILED",    "CUFFT_SETUP_FAILED",   "CUFFT_INVALID_SIZE",
        "CUFFT_UNALIGNED_DATA", "CUFFT_INCOMPLETE_PARAMETER_LIST", "CUFFT_INVALID_DEVICE",
        "CUFFT_PARSE_ERROR",    "CUFFT_NO_WORKSPACE",   "CUFFT_NOT_IMPLEMENTED",
        "CUFFT_LICENSE_ERROR",  "CUFFT_NOT_SUPPORTED",
    };
    if (result >= 0 && (size_t)result < sizeof known / sizeof known[0])
        return known[result];
    return "an unknown cuFFT error";
}
