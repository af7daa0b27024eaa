/* SLEEF's vector math functions (libsleef.so.3), loaded at run time on
 * first use.
 *
 * Loaded, not linked, like CBLAS (ext/blas.c): a process that never
 * computes a math function (the gpukit command, `import gpukit`) does not
 * map the library. It is loaded once per process, on the first call;
 * thread-safe. GPUKIT_SLEEF_LIBRARY names the file to load instead of
 * libsleef.so.3.
 *
 * The entry points of each ISA are resolved by their documented names
 * Sleef_<name><f16|d8>_<u10|u35>avx512f (AVX-512F, 16 floats or 8 doubles)
 * and Sleef_<name><f8|d4>_<u10|u35>avx2 (AVX2 with FMA, 8 floats or 4
 * doubles). Each is the 1.0-ULP variant (u10) but float32 log, asin and tan,
 * which take the 3.5-ULP one (u35, two to three times faster): NumPy's own
 * bound for those three is 4 ULP, and for every other function no looser
 * than 3 (cpu/vecmath.c says more). Their C types take and
 * return __m512/__m512d/__m256/__m256d, which baseline x86-64 code cannot
 * pass, so the table holds them as plain function pointers; the caller
 * converts them back in code compiled for that ISA (cpu/vecmath.c). Building
 * gpukit needs no SLEEF header. */
#ifndef GK_EXT_SLEEF_H
#define GK_EXT_SLEEF_H

#include <stdbool.h>

/* The functions taken from SLEEF; pow takes two arguments, the others one. */
typedef enum gk_sleef_function {
    GK_SLEEF_EXP = 0, GK_SLEEF_LOG, GK_SLEEF_SIN, GK_SLEEF_COS, GK_SLEEF_TAN, GK_SLEEF_TANH,
    GK_SLEEF_ASIN, GK_SLEEF_ACOS, GK_SLEEF_ATAN, GK_SLEEF_SINH, GK_SLEEF_COSH, GK_SLEEF_ASINH,
    GK_SLEEF_ACOSH, GK_SLEEF_ATANH, GK_SLEEF_LOG1P, GK_SLEEF_EXPM1, GK_SLEEF_POW,
    GK_SLEEF_FUNCTION_COUNT
} gk_sleef_function;

typedef enum gk_sleef_isa { GK_SLEEF_AVX2 = 0, GK_SLEEF_AVX512F, GK_SLEEF_ISA_COUNT } gk_sleef_isa;

/* A SLEEF entry point whose real type depends on its ISA and dtype. */
typedef void (*gk_sleef_entry)(void);

typedef struct gk_sleef {
    void *library;
    char path[512];
    /* [isa][function]; NULL where the library lacks that entry point */
    gk_sleef_entry float32[GK_SLEEF_ISA_COUNT][GK_SLEEF_FUNCTION_COUNT];
    gk_sleef_entry float64[GK_SLEEF_ISA_COUNT][GK_SLEEF_FUNCTION_COUNT];
} gk_sleef;

/* The loaded library, or NULL when there is none (not installed, or the
 * override names a file that does not load): the caller then computes with
 * libm. The answer is the same for the life of the process. */
const gk_sleef *gk_sleef_get(void);

#endif
