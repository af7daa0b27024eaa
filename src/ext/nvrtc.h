/* NVRTC, the CUDA runtime compiler, loaded at run time.
 *
 * NVRTC ships with the CUDA toolkit (not the driver), so it is optional:
 * without it gpukit's built-in ops still run from the PTX made at build
 * time, and only user kernels need it. The newest library found wins:
 * libnvrtc.so.13, .so.12, .so.11.2, then libnvrtc.so; GPUKIT_NVRTC_LIBRARY
 * names one file instead. Loaded once per process, on first use;
 * thread-safe (each compile has its own nvrtcProgram). */
#ifndef GK_EXT_NVRTC_H
#define GK_EXT_NVRTC_H

#include <gpukit/status.h>

#include <stdbool.h>
#include <stddef.h>

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

enum {
    NVRTC_SUCCESS = 0,
    NVRTC_ERROR_OUT_OF_MEMORY = 1,
    NVRTC_ERROR_PROGRAM_CREATION_FAILURE = 2,
    NVRTC_ERROR_INVALID_INPUT = 3,
    NVRTC_ERROR_INVALID_PROGRAM = 4,
    NVRTC_ERROR_INVALID_OPTION = 5,
    NVRTC_ERROR_COMPILATION = 6,
};

typedef struct gk_nvrtc {
    void *library;
    char path[512];
    int major, minor; /* nvrtcVersion */
    /* The real architectures it compiles for (75, 80, ...), ascending;
     * count 0 when this NVRTC cannot tell (before CUDA 11.2). */
    int archs[64];
    int arch_count;

    const char *(*GetErrorString)(nvrtcResult result);
    nvrtcResult (*Version)(int *major, int *minor);
    nvrtcResult (*GetNumSupportedArchs)(int *count);       /* may be NULL */
    nvrtcResult (*GetSupportedArchs)(int *archs);          /* may be NULL */
    nvrtcResult (*CreateProgram)(nvrtcProgram *program, const char *source, const char *name,
                                 int header_count, const char *const *headers,
                                 const char *const *include_names);
    nvrtcResult (*CompileProgram)(nvrtcProgram program, int option_count,
                                  const char *const *options);
    nvrtcResult (*GetPTXSize)(nvrtcProgram program, size_t *size);
    nvrtcResult (*GetPTX)(nvrtcProgram program, char *ptx);
    nvrtcResult (*GetCUBINSize)(nvrtcProgram program, size_t *size); /* may be NULL */
    nvrtcResult (*GetCUBIN)(nvrtcProgram program, char *cubin);      /* may be NULL */
    nvrtcResult (*GetProgramLogSize)(nvrtcProgram program, size_t *size);
    nvrtcResult (*GetProgramLog)(nvrtcProgram program, char *log);
    nvrtcResult (*DestroyProgram)(nvrtcProgram *program);
} gk_nvrtc;

/* NVRTC, loaded on the first call. GK_ERR_NOT_FOUND when no NVRTC can be
 * loaded, with the fix (install the CUDA toolkit) in gk_last_error(); the
 * same answer every time. */
gk_status gk_nvrtc_open(const gk_nvrtc **nvrtc);

/* Whether this NVRTC makes code for real architecture `sm` (90 for sm_90);
 * true when it cannot tell. */
bool gk_nvrtc_supports(const gk_nvrtc *nvrtc, int sm);

/* The newest architecture this NVRTC supports that is not newer than
 * `sm`, or 0 when every one it supports is newer (or it cannot tell). */
int gk_nvrtc_newest_up_to(const gk_nvrtc *nvrtc, int sm);

/* Logs longer than this are cut (the end of the log says it was). */
#define GK_NVRTC_LOG_MAX (16 * 1024)

/* Compiles NUL-terminated CUDA C++ `source` (named `name` in messages)
 * with `options` (split on spaces; NULL or "" for none) for architecture
 * `arch` ("sm_90"): machine code (a cubin) when `cubin`, else PTX for the
 * matching virtual architecture (compute_90), which the driver compiles
 * when it loads it. On success *binary (malloc'd; PTX is NUL-terminated
 * and *size counts the NUL) holds the result. On a compile error returns
 * GK_ERR_INVALID_ARGUMENT with the compiler log in gk_last_error() (which
 * may shorten it) and, when `log` is not NULL, in *log (malloc'd, at most
 * GK_NVRTC_LOG_MAX bytes; also set on success when there are warnings,
 * else NULL). GK_ERR_NOT_FOUND when NVRTC is not there. */
gk_status gk_nvrtc_compile(const char *source, const char *name, const char *options,
                           const char *arch, bool cubin, void **binary, size_t *size,
                           char **log);

#endif
