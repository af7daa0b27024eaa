/* A fake cuFFT (libcufft.so.12) for tests: gpukit loads it through its
 * real dlopen path (GPUKIT_CUFFT_LIBRARY) next to the fake libcuda, whose
 * device memory is host memory. Plans record their sizes and stream;
 * executing one first waits for its stream through the fake driver (so
 * the copies queued before it are done, as on a GPU), then computes the
 * transforms by the plain O(n^2) sum, in double precision, into `out`.
 * Only the basic layout (inembed NULL) is taken, as gpukit uses it.
 *
 * Built with FAKE_CUFFT_WITHOUT_Z2Z, it lacks cufftExecZ2Z, like a broken
 * install: gpukit must then compute on the host.
 *
 * fake_cufft_execs() counts the transforms executed, so a test can tell
 * the GPU path from the host's. */
#define _GNU_SOURCE
#include "fake_library.h"

#include <math.h>
#include <string.h>

enum { SUCCESS = 0, INVALID_PLAN = 1, ALLOC_FAILED = 2, INVALID_VALUE = 4, NOT_SUPPORTED = 16 };
enum { R2C = 0x2a, C2R = 0x2c, C2C = 0x29, D2Z = 0x6a, Z2D = 0x6c, Z2Z = 0x69 };

typedef struct plan {
    int used, n, idist, odist, type, batch;
    void *stream;
} plan;

static plan plans[64];

FAKE_CALLS(fake_cufft_execs)

EXPORT int cufftPlanMany(int *handle, int rank, int *n, int *inembed, int istride, int idist,
                         int *onembed, int ostride, int odist, int type, int batch)
{
    if (rank != 1 || inembed || onembed || istride != 1 || ostride != 1 || n[0] < 1 || batch < 1)
        return NOT_SUPPORTED;
    pthread_mutex_lock(&fake_lock);
    int found = -1;
    for (int i = 1; i < 64 && found < 0; i++)
        if (!plans[i].used)
            found = i;
    if (found > 0)
        plans[found] = (plan){1, n[0], idist, odist, type, batch, NULL};
    pthread_mutex_unlock(&fake_lock);
    if (found < 0)
        return ALLOC_FAILED;
    *handle = found;
    return SUCCESS;
}

static plan *plan_of(int handle)
{
    return handle > 0 && handle < 64 && plans[handle].used ? &plans[handle] : NULL;
}

EXPORT int cufftSetStream(int handle, void *stream)
{
    plan *p = plan_of(handle);
    if (!p)
        return INVALID_PLAN;
    p->stream = stream;
    return SUCCESS;
}

EXPORT int cufftDestroy(int handle)
{
    plan *p = plan_of(handle);
    if (!p)
        return INVALID_PLAN;
    p->used = 0;
    return SUCCESS;
}

/* Element i of a row as a complex number (real kinds: imaginary 0). */
static void load(const void *data, int single, int complex_kind, long i, double *re, double *im)
{
    if (complex_kind) {
        *re = single ? ((const float *)data)[2 * i] : ((const double *)data)[2 * i];
        *im = single ? ((const float *)data)[2 * i + 1] : ((const double *)data)[2 * i + 1];
    } else {
        *re = single ? ((const float *)data)[i] : ((const double *)data)[i];
        *im = 0;
    }
}

static void store(void *data, int single, int complex_kind, long i, double re, double im)
{
    if (complex_kind && single) {
        ((float *)data)[2 * i] = (float)re;
        ((float *)data)[2 * i + 1] = (float)im;
    } else if (complex_kind) {
        ((double *)data)[2 * i] = re;
        ((double *)data)[2 * i + 1] = im;
    } else if (single) {
        ((float *)data)[i] = (float)re;
    } else {
        ((double *)data)[i] = re;
    }
}

/* out[k] = sum_j in[j] e^(sign 2 pi i jk / n) per row; a c2r input holds
 * the n / 2 + 1 first terms and the rest are their conjugates. */
static int run(int handle, const void *in, void *out, int sign, int in_complex, int out_complex)
{
    plan *p = plan_of(handle);
    if (!p)
        return INVALID_PLAN;
    fake_begin(p->stream);
    int single = p->type == R2C || p->type == C2R || p->type == C2C;
    int half = p->type == C2R || p->type == Z2D;
    int outputs = p->type == R2C || p->type == D2Z ? p->n / 2 + 1 : p->n;
    const double pi = 3.14159265358979323846;
    for (long b = 0; b < p->batch; b++)
        for (int k = 0; k < outputs; k++) {
            double re = 0, im = 0;
            for (int j = 0; j < p->n; j++) {
                double xr, xi;
                int at = half && j > p->n / 2 ? p->n - j : j;
                load(in, single, in_complex, b * p->idist + at, &xr, &xi);
                if (half && j > p->n / 2)
                    xi = -xi;
                double angle = sign * 2 * pi * (double)((long)j * k % p->n) / p->n;
                re += xr * cos(angle) - xi * sin(angle);
                im += xr * sin(angle) + xi * cos(angle);
            }
            store(out, single, out_complex, b * p->odist + k, re, im);
        }
    return SUCCESS;
}

EXPORT int cufftExecC2C(int h, void *in, void *out, int direction)
{
    return run(h, in, out, direction, 1, 1);
}
#ifndef FAKE_CUFFT_WITHOUT_Z2Z
EXPORT int cufftExecZ2Z(int h, void *in, void *out, int direction)
{
    return run(h, in, out, direction, 1, 1);
}
#endif
EXPORT int cufftExecR2C(int h, void *in, void *out)
{
    return run(h, in, out, -1, 0, 1);
}
EXPORT int cufftExecD2Z(int h, void *in, void *out)
{
    return run(h, in, out, -1, 0, 1);
}
EXPORT int cufftExecC2R(int h, void *in, void *out)
{
    return run(h, in, out, 1, 1, 0);
}
EXPORT int cufftExecZ2D(int h, void *in, void *out)
{
    return run(h, in, out, 1, 1, 0);
}
