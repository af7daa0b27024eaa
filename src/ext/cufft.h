/* cuFFT, loaded at run time (libcufft.so.12 of CUDA 13, .so.11 of CUDA 11
 * and 12; GPUKIT_CUFFT_LIBRARY names one file instead).
 *
 * cuFFT comes with the CUDA toolkit, not the driver, so it is optional:
 * without it the FFTs of CUDA arrays run on the host (FFTW), like those of
 * OpenCL arrays. It runs on the CUDA runtime, which shares the driver's
 * primary context of each device, so its plans work on the streams gpukit
 * makes in that context. Loaded once per process; thread-safe. The
 * declarations are ours (cuFFT's documented C ABI), so building gpukit
 * needs no CUDA headers. */
#ifndef GK_EXT_CUFFT_H
#define GK_EXT_CUFFT_H

#include <gpukit/status.h>

typedef int cufftResult;
typedef int cufftHandle;
typedef int cufftType;

enum { CUFFT_SUCCESS = 0, CUFFT_ALLOC_FAILED = 2 };
/* The transform types: single precision R2C, C2R, C2C; double D2Z, Z2D, Z2Z. */
enum {
    CUFFT_R2C = 0x2a,
    CUFFT_C2R = 0x2c,
    CUFFT_C2C = 0x29,
    CUFFT_D2Z = 0x6a,
    CUFFT_Z2D = 0x6c,
    CUFFT_Z2Z = 0x69,
};
enum { CUFFT_FORWARD = -1, CUFFT_INVERSE = 1 };

typedef struct gk_cufft {
    void *library;
    char path[512];

    /* `batch` transforms of the sizes n[0..rank) in the basic layout
     * (inembed and onembed NULL: each one's elements contiguous, one after
     * another). */
    cufftResult (*PlanMany)(cufftHandle *plan, int rank, int *n, int *inembed, int istride,
                            int idist, int *onembed, int ostride, int odist, cufftType type,
                            int batch);
    cufftResult (*SetStream)(cufftHandle plan, void *stream); /* a CUstream */
    cufftResult (*Destroy)(cufftHandle plan);
    cufftResult (*ExecC2C)(cufftHandle plan, void *in, void *out, int direction);
    cufftResult (*ExecZ2Z)(cufftHandle plan, void *in, void *out, int direction);
    cufftResult (*ExecR2C)(cufftHandle plan, void *in, void *out);
    cufftResult (*ExecD2Z)(cufftHandle plan, void *in, void *out);
    cufftResult (*ExecC2R)(cufftHandle plan, void *in, void *out);
    cufftResult (*ExecZ2D)(cufftHandle plan, void *in, void *out);
} gk_cufft;

/* cuFFT, loaded on the first call; GK_ERR_NOT_FOUND (the same answer every
 * time, the message starting with `op`) when it is not there. */
gk_status gk_cufft_open(const char *op, const gk_cufft **cufft);

/* "CUFFT_ALLOC_FAILED"; works without a loaded library. */
const char *gk_cufft_result_name(cufftResult result);

#endif
