/* Run-time loading of cuBLAS: see cublas.h. */
#include "ext/cublas.h"

#include "core/error.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static gk_cublas cublas_table;
static gk_status load_status;
static char load_message[1024];

static const char *const library_names[] = {
    "libcublas.so.13", "libcublas.so.12", "libcublas.so.11",
};

static const struct {
    const char *name;
    int required;
    size_t offset;
} entry_points[] = {
    {"cublasCreate_v2", 1, offsetof(gk_cublas, Create)},
    {"cublasDestroy_v2", 1, offsetof(gk_cublas, Destroy)},
    {"cublasSetStream_v2", 1, offsetof(gk_cublas, SetStream)},
    {"cublasSgemm_v2", 1, offsetof(gk_cublas, Sgemm)},
    {"cublasDgemm_v2", 1, offsetof(gk_cublas, Dgemm)},
    {"cublasSgemmStridedBatched", 1, offsetof(gk_cublas, SgemmStridedBatched)},
    {"cublasDgemmStridedBatched", 1, offsetof(gk_cublas, DgemmStridedBatched)},
    {"cublasGetStatusName", 0, offsetof(gk_cublas, GetStatusName)},
};

static void load(void)
{
    gk_cublas *c = &cublas_table;
    const char *override = getenv("GPUKIT_CUBLAS_LIBRARY");
    if (override && *override) {
        c->library = dlopen(override, RTLD_NOW | RTLD_LOCAL);
        if (c->library)
            snprintf(c->path, sizeof c->path, "%s", override);
    } else {
        for (size_t i = 0; i < sizeof library_names / sizeof library_names[0] && !c->library; i++) {
            c->library = dlopen(library_names[i], RTLD_NOW | RTLD_LOCAL);
            if (c->library)
                snprintf(c->path, sizeof c->path, "%s", library_names[i]);
        }
    }
    if (!c->library) {
        const char *why = dlerror();
        load_status = GK_ERR_NOT_FOUND;
        snprintf(load_message, sizeof load_message,
                 "cuBLAS not found (%s): install the CUDA toolkit's cuBLAS for faster matrix "
                 "products (gpukit's own kernel is used meanwhile)",
                 override && *override ? (why ? why : override) : "libcublas.so.13, .12 or .11");
        return;
    }
    for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; i++) {
        void *symbol = dlsym(c->library, entry_points[i].name);
        if (!symbol && entry_points[i].required) {
            load_status = GK_ERR_NOT_FOUND;
            snprintf(load_message, sizeof load_message,
                     "%s is not a usable cuBLAS (it has no %s): install CUDA 11 or newer",
                     c->path, entry_points[i].name);
            dlclose(c->library);
            memset(c, 0, sizeof *c);
            return;
        }
        memcpy((char *)c + entry_points[i].offset, &symbol, sizeof symbol);
    }
    load_status = GK_OK;
}

gk_status gk_cublas_open(const gk_cublas **cublas)
{
    pthread_once(&load_once, load);
    if (load_status != GK_OK) {
        *cublas = NULL;
        return gk_fail(load_status, "%s", load_message);
    }
    *cublas = &cublas_table;
    return GK_OK;
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
