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
    int read_only;  /* arrays: stores would not reach the caller's elements (a read-only or
                       broadcast array, or a copy that cannot be written back), so the
                       translation refuses them, as NumPy refuses writes to read-only arrays */
} jit_arg_type;

/* The dialect source of `function` (a Python function) for these argument
 * types, defining the kernel `gkjitk_<name>` (a prefix no prelude helper
 * or device function has); *kernel_name receives that name (size >= 80). A new str, or NULL with TypeError (types: a variable
 * changing kind, wrong argument count, unknown names) or
 * NotImplementedError (Python outside the subset) set, the message naming
 * the file, the line and the construct. `reads` (a list, or NULL) receives
 * (path, object) for each object the translation resolved: a path is a
 * tuple of steps from the kernel, "g:<name>" (a global, closure value or
 * builtin of the function reached so far), "a:<name>" (an attribute) or
 * "e:<expression>" (a shared array's shape or dtype, evaluated in the
 * globals); None in it means an object of unknown origin was read. */
PyObject *gkpy_jit_translate(PyObject *function, int nargs, const jit_arg_type *args,
                             char *kernel_name, PyObject *reads);
/* @gpukit.vectorize: `function` of nin scalars of dtypes `in`, translated
 * as a device function and wrapped in an elementwise kernel named
 * *kernel_name (size >= 80) taking (out, in0, in1, ...), each a buffer and
 * a gk_view of the output's shape. *out is the result dtype, or
 * GK_DTYPE_COUNT to take the function's own (then set). */
PyObject *gkpy_jit_vectorize(PyObject *function, int nin, const gk_dtype *in, gk_dtype *out,
                             char *kernel_name);
/* The name the translation gives the kernel of `function` (size >= 80). */
void gkpy_jit_kernel_name(PyObject *function, char *kernel_name);

/* Whether the translator takes `object` as a number constant: a Python
 * bool, int or float, or a NumPy scalar of a real dtype (its kind and
 * size into *kind and *size when not NULL: 'b', 'i', 'u' or 'f'). */
bool gkpy_jit_number(PyObject *object, char *kind, int *size);

/* What jit_cache.c resolves as the translator does. */
/* A dict: id(object) -> the name of the intrinsic it is ("grid", "math.sqrt"). */
PyObject *gkpy_jit_intrinsics(void);
/* The intrinsic's name of `object` in that dict (borrowed), or NULL. */
PyObject *gkpy_jit_intrinsic_name(PyObject *intrinsics, PyObject *object);
/* `name` in a function's closure (its code's co_freevars and its closure
 * cells), else its globals, else their builtins: a new reference, or NULL
 * (no error set when there is none). */
PyObject *gkpy_jit_lookup(PyObject *freevars, PyObject *closure, PyObject *globals,
                          PyObject *name);
/* The py_func of a @gpukit.jit(device=True) function (new reference), or
 * NULL: no error set when `object` is not one. */
PyObject *gkpy_jit_device_function(PyObject *object);
/* The name a shared array's dtype object gives (new reference; checked by
 * the caller), or NULL. */
PyObject *gkpy_jit_dtype_name(PyObject *object);

/* jit_cache.c: the dialect source for these argument types as
 * gkpy_jit_translate makes it, from the disk cache when an earlier process
 * translated the same kernel reading the same objects, else translated
 * now (and stored). */
PyObject *gkpy_jit_translate_cached(PyObject *function, int nargs, const jit_arg_type *args,
                                    char *kernel_name);

#endif
