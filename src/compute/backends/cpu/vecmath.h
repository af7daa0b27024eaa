/* The CPU's vector math: the floating-point math functions on AVX-512F or
 * AVX2 vectors, the library itself staying baseline x86-64 (see
 * vecmath.c). */
#ifndef GK_COMPUTE_CPU_VECMATH_H
#define GK_COMPUTE_CPU_VECMATH_H

#include "compute/backends/cpu/cpu.h"
#include "ext/vector_math.h"

/* What a vector loop runs: the vector function, and libm's double function
 * for the lanes it gets wrong (vecmath_loops.h; in double for float32 too,
 * which rounds those lanes correctly, where libm's float functions can be
 * 1.5 ULP off there). */
typedef struct cpu_vector_function {
    gk_vm_entry vector;
    double (*unary)(double);
    double (*binary)(double, double);
    double bound; /* the worst error it keeps, in ULPs of the dtype */
} cpu_vector_function;

/* The vector loop for `op` on `dtype` (float32 or float64), to be run with
 * *function as its context; NULL when there is none: an op without one, a
 * CPU without AVX2 and FMA, neither library having the function
 * (ext/vector_math.h; without them only sqrt is vectorised), or a build for
 * another architecture. The caller then runs its libm loop. The loop takes
 * any strides. For float16 and bfloat16 it is a float32 loop (their values
 * are computed in float32), libmvec's in place of SLEEF's slower 1-ULP
 * functions: within 4 float32 ULPs, which rounding to the 16-bit format's
 * 8 or 11 bits hides (bound: in float32 ULPs). */
cpu_inner_loop cpu_vector_math(gk_op op, gk_dtype dtype, cpu_vector_function *function);

/* The vector ISA the CPU's vector loops use (math functions, the sorting
 * network): the widest the CPU has, lowered by GPUKIT_CPU_VECTOR; -1 for
 * none (no AVX2 and FMA, or GPUKIT_CPU_VECTOR=none). */
int cpu_vector_isa(void);

/* The same for C's fmod (SLEEF's, exact; bound 0), which the CPU loops of
 * floor_divide and remainder build on: glibc's before 2.38 costs about
 * 30 ns an element where its exponents differ much, SLEEF's under 2. */
cpu_inner_loop cpu_vector_fmod(gk_dtype dtype, cpu_vector_function *function);

#endif
