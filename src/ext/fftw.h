/* FFTW 3, the CPU's FFT library, loaded at run time on the first FFT.
 *
 * Double precision from libfftw3_omp.so.3 (FFTW threaded by OpenMP, the
 * runtime the CPU backend uses too), else libfftw3_threads.so.3, else the
 * single-threaded libfftw3.so.3; single precision from the same files with
 * fftw3f. GPUKIT_FFTW_LIBRARY / GPUKIT_FFTWF_LIBRARY name one file
 * instead. Each precision is loaded once per process, on the first FFT that
 * needs it; thread-safe.
 *
 * Why FFTW: it is the speed reference, threaded, handles any length and
 * any strides (the guru interface transforms the axes of a C-order array
 * where they lie), and Debian, Fedora and conda package it. It is GPL-2+,
 * so gpukit (MIT) neither links nor ships it: nothing of FFTW is compiled
 * into gpukit, and a machine without it gets a clear error naming the
 * package. Whoever distributes gpukit together with FFTW distributes that
 * combination under the GPL's terms (or FFTW's commercial licence). The
 * permissive alternatives are not usable here: KissFFT is float-only in
 * Debian, and pocketfft is packaged only inside NumPy and SciPy (C++).
 *
 * The declarations are ours (FFTW's documented C ABI: the guru64
 * interface, fftw_iodim64 of ptrdiff_t, complex numbers as two reals), so
 * building gpukit needs no FFTW headers. */
#ifndef GK_EXT_FFTW_H
#define GK_EXT_FFTW_H

#include <gpukit/status.h>

#include <stddef.h>

/* FFTW's constants. */
enum { GK_FFTW_FORWARD = -1, GK_FFTW_BACKWARD = 1 };
enum { GK_FFTW_ESTIMATE = 1u << 6, GK_FFTW_DESTROY_INPUT = 1u << 0 };

/* One axis of a transform or of its batch: length, input and output
 * strides in elements. */
typedef struct gk_fftw_iodim {
    ptrdiff_t n, is, os;
} gk_fftw_iodim;

/* One precision's functions. A plan is an opaque pointer; the executes
 * apply a plan to other arrays of the same layout and alignment. */
typedef struct gk_fftw {
    void *library;
    char path[512];
    int threaded; /* plan_with_nthreads is there */

    void *(*plan_dft)(int rank, const gk_fftw_iodim *dims, int howmany_rank,
                      const gk_fftw_iodim *howmany_dims, void *in, void *out, int sign,
                      unsigned flags);
    void *(*plan_r2c)(int rank, const gk_fftw_iodim *dims, int howmany_rank,
                      const gk_fftw_iodim *howmany_dims, void *in, void *out, unsigned flags);
    void *(*plan_c2r)(int rank, const gk_fftw_iodim *dims, int howmany_rank,
                      const gk_fftw_iodim *howmany_dims, void *in, void *out, unsigned flags);
    void (*execute_dft)(void *plan, void *in, void *out);
    void (*execute_r2c)(void *plan, void *in, void *out);
    void (*execute_c2r)(void *plan, void *in, void *out);
    void (*destroy_plan)(void *plan);
    int (*alignment_of)(void *p);
    /* Optional: from the _omp or _threads library. */
    int (*init_threads)(void);
    void (*plan_with_nthreads)(int nthreads);
} gk_fftw;

/* FFTW of double (single false) or single precision, loaded on the first
 * call; GK_ERR_NOT_FOUND (the same answer every time, the message starting
 * with `op`) when it is not installed. */
gk_status gk_fftw_open(const char *op, int single, const gk_fftw **fftw);

#endif
