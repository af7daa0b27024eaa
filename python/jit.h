/* @gpukit.jit: Python functions translated to the portable kernel dialect.
 * jit_translate.c turns a function's AST into dialect source for one
 * signature (the arguments' kinds, dtypes and ndim); jit.c holds the
 * Python types (the kernel, its configured launches) and caches what was
 * translated and compiled per signature and device. */
#ifndef GKPY_JIT_H
#define GKPY_JIT_H

#include "gkpy.h"

/* One argument of a launch, as the translation is specialised on it. */
typedef enum jit_arg_kind {
    JIT_ARG_ARRAY, /* dtype, ndim: two parameters, the buffer and a gk_view */
    JIT_ARG_INT,   /* a Python int or NumPy integer: gk_i64 (uint64: gk_u64) */
    JIT_ARG_FLOAT, /* a Python float or NumPy float: double (float32: float) */
    JIT_ARG_BOOL,  /* int 0/1 */
} jit_arg_kind;

typedef struct jit_arg_type {
    jit_arg_kind kind;
    gk_dtype dtype; /* arrays; scalars: GK_INT64, GK_UINT64, GK_FLOAT64, GK_FLOAT32, GK_BOOL */
    int ndim;       /* arrays */
    int contiguous; /* arrays: C-contiguous, so the last axis steps by 1 (Numba's 'C' layout) */
} jit_arg_type;

/* The dialect source of `function` (a Python function) for these argument
 * types, defining the kernel `gkjitk_<name>` (a prefix no prelude helper
 * or device function has); *kernel_name receives that name (size >= 80). A new str, or NULL with TypeError (types: a variable
 * changing kind, wrong argument count, unknown names) or
 * NotImplementedError (Python outside the subset) set, the message naming
 * the file, the line and the construct. */
PyObject *gkpy_jit_translate(PyObject *function, int nargs, const jit_arg_type *args,
                             char *kernel_name);
/* @gpukit.vectorize: `function` of nin scalars of dtypes `in`, translated
 * as a device function and wrapped in an elementwise kernel named
 * *kernel_name (size >= 80) taking (out, in0, in1, ...), each a buffer and
 * a gk_view of the output's shape. *out is the result dtype, or
 * GK_DTYPE_COUNT to take the function's own (then set). */
PyObject *gkpy_jit_vectorize(PyObject *function, int nin, const gk_dtype *in, gk_dtype *out,
                             char *kernel_name);
/* The name the translation gives the kernel of `function` (size >= 80). */
void gkpy_jit_kernel_name(PyObject *function, char *kernel_name);

#endif
