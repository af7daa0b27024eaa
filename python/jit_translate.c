/* The translation of @gpukit.jit functions to the portable dialect
 * (docs/KERNELS.md), specialised on one signature.
 *
 * The function's source is parsed with Python's own `ast` module and walked
 * here. Names resolve like Python's: arguments and local variables first,
 * then the function's closure and globals, whose objects are identified
 * (the math module's functions, gpukit.grid, gpukit.atomic.add, builtins,
 * other @gpukit.jit(device=True) functions) or, for numbers, inlined as
 * constants, as Numba freezes globals.
 *
 * Types follow Numba's (NumPy's scalar promotion): Python ints are int64,
 * floats float64, float32 stays float32 only with float32 or bool, integer
 * elements read as int64 (uint64 as uint64). A variable's type is that of
 * its assignments: numbers widen (an int variable later given a float
 * becomes float64 throughout, as in Numba), while changing kind (a number
 * becoming an array or a tuple) is an error. Types are found by
 * translating the body again until no variable widens; the last pass's
 * text is the result.
 *
 * Python's semantics where C's differ: // and % round toward negative
 * infinity, / of integers is float64, ** of integers is an integer, a
 * negative index counts from the end of its axis, math.floor/ceil/trunc
 * give int64 (an integer unchanged), `not` gives bool and `and`/`or` the operand that decides.
 * NumPy's where Python's ints are unbounded: int64 wraps (docs/KERNELS.md). */
#include "jit.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_VARS = 256, MAX_TUPLE = 8, MAX_PASSES = 8, MAX_DEVICE_FNS = 32, MAX_HELPERS = 64 };

/* ---- types and values ---------------------------------------------------- */

typedef enum ty_kind {
    TY_NONE,   /* no value (a call of a function returning nothing) */
    TY_BOOL,   /* int 0/1 */
    TY_I64,
    TY_U64,
    TY_F32,
    TY_F64,
    TY_ARRAY,  /* an argument's array (global memory) or a shared array */
    TY_TUPLE,  /* grid(2), a.shape, (x, y): only indexed or unpacked */
    TY_OBJECT, /* a Python object known while translating (a module, a function) */
} ty_kind;

typedef struct ty {
    ty_kind kind;
    gk_dtype dtype;        /* arrays */
    int ndim;              /* arrays */
    bool shared;           /* arrays: GK_LOCAL, C-contiguous of constant shape */
    bool contiguous;       /* argument arrays: C-contiguous (the last axis steps by 1) */
    bool read_only;        /* argument arrays: stores are refused (jit_arg_type) */
    int64_t shape[GK_MAX_DIMS]; /* shared arrays */
} ty;

typedef struct value {
    ty type;
    const char *text;      /* C expression; arrays: the buffer's name */
    PyObject *object;      /* TY_OBJECT (borrowed: kept alive by the function) */
    PyObject *path;        /* TY_OBJECT while recording: where it was read (borrowed from
                              tr->reads, see record_read) */
    int count;             /* TY_TUPLE */
    struct value *items;   /* TY_TUPLE */
    bool constant;         /* an int literal, with its value in `number` */
    bool nonneg;           /* an integer known never to be negative (no index wrap needed) */
    int64_t number;
} value;

typedef struct variable {
    char name[64];
    ty type;
    bool assigned; /* in this pass: reads before any assignment are errors */
    bool nonneg;   /* every value assigned so far is a non-negative integer */
} variable;

/* Text that grows. */
typedef struct strbuf {
    char *data;
    size_t length, capacity;
    bool failed;
} strbuf;

static void text_vadd(strbuf *t, const char *format, va_list args)
{
    va_list copy;
    va_copy(copy, args);
    int n = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    if (n < 0 || t->failed)
        return;
    if (t->length + (size_t)n + 1 > t->capacity) {
        size_t capacity = t->capacity ? t->capacity : 1024;
        while (capacity < t->length + (size_t)n + 1)
            capacity *= 2;
        char *grown = realloc(t->data, capacity);
        if (!grown) {
            t->failed = true;
            return;
        }
        t->data = grown;
        t->capacity = capacity;
    }
    vsnprintf(t->data + t->length, (size_t)n + 1, format, args);
    t->length += (size_t)n;
}

static void text_add(strbuf *t, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    text_vadd(t, format, args);
    va_end(args);
}

/* ---- the translation's state --------------------------------------------- */

/* A device function translated for one signature. */
typedef struct device_fn {
    PyObject *function; /* borrowed from the kernel's globals */
    ty params[16];
    int count;
    char name[96];
    ty result;
    bool translating; /* being translated: a call now is recursion */
} device_fn;

typedef struct translation translation;

/* One function being translated (the kernel or a device function). */
typedef struct scope {
    PyObject *function;
    PyObject *globals, *closure; /* borrowed from the function */
    PyObject *freevars;          /* owned: code.co_freevars is a new tuple per read (3.11+) */
    PyObject *path;              /* owned, while recording: the path of this function's reads */
    const char *filename;
    int first_line;
    char qualname[64];
    bool is_kernel;
    variable vars[MAX_VARS];
    int var_count;
    bool widened;        /* a variable's type grew in this pass */
    /* A device call this pass could not translate (device_call), raised
     * only if the pass is the last: a later pass, with the variables
     * widened, may call it with other types. */
    PyObject *deferred_type, *deferred_value, *deferred_traceback;
    ty result;           /* device functions: the type returned */
    bool has_result;
    strbuf body;
    strbuf shared_decls;   /* GK_LOCAL arrays, at the top of a kernel */
    strbuf hidden_decls;   /* expressions' hidden locals (gkjit_e*), at the top */
    int indent;
    int temp;            /* counter for hidden names */
} scope;

struct translation {
    PyObject *intrinsics; /* dict: id(object) -> name, from gpukit._jit._INTRINSICS */
    PyObject *reads;      /* borrowed list or NULL: what was read where (record_read) */
    strbuf helpers;         /* atomics used, in front of everything */
    char helper_names[MAX_HELPERS][48];
    int helper_count;
    device_fn device_fns[MAX_DEVICE_FNS];
    int device_fn_count;
    strbuf device_text;     /* device functions, after the helpers */
    int depth;            /* device functions being translated (no recursion) */
    /* Everything allocated for values' texts, freed at the end. */
    char **strings;
    size_t string_count, string_capacity;
};

/* Forgets the device call that failed this pass, if any. */
static void drop_deferred(scope *sc)
{
    Py_CLEAR(sc->deferred_type);
    Py_CLEAR(sc->deferred_value);
    Py_CLEAR(sc->deferred_traceback);
}

/* Frees a scope made with calloc and what it holds. */
static void scope_free(scope *sc)
{
    if (!sc)
        return;
    Py_XDECREF(sc->freevars);
    Py_XDECREF(sc->path);
    drop_deferred(sc);
    free(sc->body.data);
    free(sc->shared_decls.data);
    free(sc->hidden_decls.data);
    free(sc);
}

static const char *keep(translation *tr, char *s)
{
    if (!s)
        return "";
    if (tr->string_count == tr->string_capacity) {
        size_t capacity = tr->string_capacity ? tr->string_capacity * 2 : 256;
        char **grown = realloc(tr->strings, capacity * sizeof *grown);
        if (!grown) {
            free(s);
            return "";
        }
        tr->strings = grown;
        tr->string_capacity = capacity;
    }
    tr->strings[tr->string_count++] = s;
    return s;
}

static const char *fmt(translation *tr, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    strbuf t = {0};
    text_vadd(&t, format, args);
    va_end(args);
    return keep(tr, t.data);
}

/* ---- the AST ------------------------------------------------------------- */

/* The class name of an AST node ("BinOp"). */
static const char *kind_of(PyObject *node)
{
    const char *name = Py_TYPE(node)->tp_name;
    const char *dot = strrchr(name, '.');
    return dot ? dot + 1 : name;
}

static bool is(PyObject *node, const char *kind)
{
    return node && strcmp(kind_of(node), kind) == 0;
}

/* A new reference to node.name (NULL with AttributeError). */
static PyObject *field(PyObject *node, const char *name)
{
    return PyObject_GetAttrString(node, name);
}

static int line_of(const scope *sc, PyObject *node)
{
    PyObject *line = PyObject_GetAttrString(node, "lineno");
    long n = line ? PyLong_AsLong(line) : 0;
    Py_XDECREF(line);
    PyErr_Clear();
    return sc->first_line + (int)n - 1;
}

/* Raises `type` naming the file, line and function; returns -1. */
static int fail(const scope *sc, PyObject *node, PyObject *type, const char *format, ...)
{
    if (PyErr_Occurred() && !node)
        return -1;
    char message[512];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    PyErr_Clear();
    PyErr_Format(type, "%s:%d: %s (in @gpukit.jit function '%s')", sc->filename,
                 node ? line_of(sc, node) : sc->first_line, message, sc->qualname);
    return -1;
}

static int unsupported(const scope *sc, PyObject *node, const char *what)
{
    return fail(sc, node, PyExc_NotImplementedError,
                "%s is not supported in gpukit kernels (see docs/KERNELS.md for the subset)",
                what);
}

/* ---- types --------------------------------------------------------------- */

static ty scalar(ty_kind kind)
{
    ty t = {.kind = kind};
    return t;
}

static bool is_number(ty t)
{
    return t.kind >= TY_BOOL && t.kind <= TY_F64;
}

static bool is_integer(ty t)
{
    return t.kind == TY_BOOL || t.kind == TY_I64 || t.kind == TY_U64;
}

static const char *c_type(ty t)
{
    switch (t.kind) {
    case TY_BOOL: return "int";
    case TY_I64: return "gk_i64";
    case TY_U64: return "gk_u64";
    case TY_F32: return "float";
    case TY_F64: return "double";
    default: return "void";
    }
}

static const char *type_name(ty t)
{
    switch (t.kind) {
    case TY_NONE: return "None";
    case TY_BOOL: return "bool";
    case TY_I64: return "int64";
    case TY_U64: return "uint64";
    case TY_F32: return "float32";
    case TY_F64: return "float64";
    case TY_ARRAY: return t.shared ? "a shared array" : "an array";
    case TY_TUPLE: return "a tuple";
    case TY_OBJECT: return "a Python object";
    }
    return "?";
}

/* NumPy's promotion of two scalar types (bool + bool stays bool here; the
 * arithmetic operators make it int64). */
static ty promote(ty a, ty b)
{
    ty_kind x = a.kind, y = b.kind;
    if (x == TY_F64 || y == TY_F64)
        return scalar(TY_F64);
    if (x == TY_F32 || y == TY_F32) {
        ty_kind other = x == TY_F32 ? y : x;
        return scalar(other == TY_F32 || other == TY_BOOL ? TY_F32 : TY_F64);
    }
    if ((x == TY_I64 && y == TY_U64) || (x == TY_U64 && y == TY_I64))
        return scalar(TY_F64);
    if (x == TY_U64 || y == TY_U64)
        return scalar(TY_U64);
    if (x == TY_I64 || y == TY_I64)
        return scalar(TY_I64);
    return scalar(TY_BOOL);
}

/* The element's storage type in a buffer, and how it reads as a value. */
static const char *storage_type(gk_dtype dtype)
{
    switch (dtype) {
    case GK_BOOL: return "gk_u8";
    case GK_INT8: return "gk_i8";
    case GK_INT16: return "gk_i16";
    case GK_INT32: return "gk_i32";
    case GK_INT64: return "gk_i64";
    case GK_UINT8: return "gk_u8";
    case GK_UINT16: return "gk_u16";
    case GK_UINT32: return "gk_u32";
    case GK_UINT64: return "gk_u64";
    case GK_FLOAT16: return "gk_f16";
    case GK_BFLOAT16: return "gk_bf16";
    case GK_FLOAT32: return "float";
    case GK_FLOAT64: return "double";
    default: return NULL;
    }
}

static ty element_type(gk_dtype dtype)
{
    switch (dtype) {
    case GK_BOOL: return scalar(TY_BOOL);
    case GK_UINT64: return scalar(TY_U64);
    case GK_FLOAT16: case GK_BFLOAT16: case GK_FLOAT32: return scalar(TY_F32);
    case GK_FLOAT64: return scalar(TY_F64);
    default: return scalar(TY_I64);
    }
}

static value number(translation *tr, ty_kind kind, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    strbuf t = {0};
    text_vadd(&t, format, args);
    va_end(args);
    value v = {.type = scalar(kind), .text = keep(tr, t.data)};
    return v;
}

/* `v` as C type `to` (a cast, or the value itself). */
static const char *as(translation *tr, value v, ty to)
{
    if (v.type.kind == to.kind)
        return v.text;
    if (to.kind == TY_BOOL)
        return fmt(tr, "((%s) != 0)", v.text);
    return fmt(tr, "((%s)(%s))", c_type(to), v.text);
}

/* Python truth of a number. */
static const char *truth(translation *tr, value v)
{
    return v.type.kind == TY_BOOL ? v.text : fmt(tr, "((%s) != 0)", v.text);
}

/* ---- variables ----------------------------------------------------------- */

static variable *find_var(scope *sc, const char *name)
{
    for (int i = 0; i < sc->var_count; i++)
        if (strcmp(sc->vars[i].name, name) == 0)
            return &sc->vars[i];
    return NULL;
}

/* The variable `name` takes a value of type `t` (`nonneg`: a non-negative
 * integer): made on first sight, widened for numbers (and losing nonneg
 * for good once any value may be negative), an error when it would change
 * kind. */
static variable *assign_var(scope *sc, PyObject *node, const char *name, ty t, bool nonneg)
{
    variable *v = find_var(sc, name);
    if (v && v->nonneg && !nonneg) {
        v->nonneg = false;
        sc->widened = true;
    }
    if (!v) {
        if (sc->var_count == MAX_VARS || strlen(name) >= sizeof v->name) {
            fail(sc, node, PyExc_NotImplementedError, "too many variables, or a name too long");
            return NULL;
        }
        v = &sc->vars[sc->var_count++];
        snprintf(v->name, sizeof v->name, "%s", name);
        v->type = t;
        v->nonneg = nonneg;
        sc->widened = true;
    } else if (is_number(v->type) && is_number(t)) {
        ty wide = promote(v->type, t);
        if (wide.kind != v->type.kind) {
            v->type = wide;
            sc->widened = true;
        }
    } else if (v->type.kind != t.kind) {
        fail(sc, node, PyExc_TypeError, "variable '%s' would change type from %s to %s", name,
             type_name(v->type), type_name(t));
        return NULL;
    } else if (t.kind == TY_ARRAY && v->assigned) {
        fail(sc, node, PyExc_NotImplementedError,
             "assigning array '%s' again is not supported (arrays are not copied or rebound)",
             name);
        return NULL;
    }
    v->assigned = true;
    return v;
}

/* ---- helpers the generated code calls ------------------------------------ */

/* Always in front: Python's integer division, modulo and power, negative
 * indices, and the helpers that evaluate their operands once. Integer
 * division by zero gives 0 (Numba's kernels do not raise either). int64
 * arithmetic that overflows wraps as NumPy's does (through gk_u64: signed
 * overflow is undefined in C, and compilers exploit it). Floating-point
 * operations are not contracted (a * b + c is not fused), so results
 * equal Python's and NumPy's: the OpenCL pragma here, NVRTC's --fmad=false
 * for CUDA (jit.c). */
static const char PRELUDE[] =
    "#ifdef GK_OPENCL\n"
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "#endif\n"
    "GK_DEVICE_FN gk_i64 gkjit_wrap(gk_i64 i, gk_i64 n) { return i < 0 ? i + n : i; }\n"
    "GK_DEVICE_FN gk_i64 gkjit_floordiv_i64(gk_i64 a, gk_i64 b)\n"
    "{\n"
    "    if (b == 0) return 0;\n"
    "    if (b == -1) return (gk_i64)(0 - (gk_u64)a); /* INT64_MIN // -1 wraps */\n"
    "    gk_i64 q = a / b;\n"
    "    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n"
    "}\n"
    "GK_DEVICE_FN gk_i64 gkjit_mod_i64(gk_i64 a, gk_i64 b)\n"
    "{\n"
    "    if (b == 0 || b == -1) return 0; /* INT64_MIN % -1 overflows in C */\n"
    "    gk_i64 r = a % b;\n"
    "    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
    "}\n"
    "GK_DEVICE_FN gk_u64 gkjit_floordiv_u64(gk_u64 a, gk_u64 b) { return b ? a / b : 0; }\n"
    "GK_DEVICE_FN gk_u64 gkjit_mod_u64(gk_u64 a, gk_u64 b) { return b ? a % b : 0; }\n"
    "GK_DEVICE_FN gk_i64 gkjit_pow_i64(gk_i64 base, gk_i64 e)\n"
    "{\n"
    "    if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;\n"
    "    gk_u64 r = 1, b = (gk_u64)base;\n"
    "    while (e) { if (e & 1) r *= b; b *= b; e >>= 1; }\n"
    "    return (gk_i64)r;\n"
    "}\n"
    "GK_DEVICE_FN gk_u64 gkjit_pow_u64(gk_u64 base, gk_u64 e)\n"
    "{\n"
    "    gk_u64 r = 1;\n"
    "    while (e) { if (e & 1) r *= base; base *= base; e >>= 1; }\n"
    "    return r;\n"
    "}\n"
    /* Shift counts outside [0, 64) are undefined in C and masked in OpenCL;
     * NumPy's (and gk_bitwise_left_shift's) results are 0, or -1 for a
     * negative value shifted right. */
    "GK_DEVICE_FN gk_i64 gkjit_shl_i64(gk_i64 a, gk_i64 b)\n"
    "{ return (gk_u64)b < 64 ? (gk_i64)((gk_u64)a << b) : 0; }\n"
    "GK_DEVICE_FN gk_i64 gkjit_shr_i64(gk_i64 a, gk_i64 b)\n"
    "{ return (gk_u64)b < 64 ? a >> b : (a < 0 ? -1 : 0); }\n"
    "GK_DEVICE_FN gk_u64 gkjit_shl_u64(gk_u64 a, gk_u64 b) { return b < 64 ? a << b : 0; }\n"
    "GK_DEVICE_FN gk_u64 gkjit_shr_u64(gk_u64 a, gk_u64 b) { return b < 64 ? a >> b : 0; }\n"
    "GK_DEVICE_FN gk_i64 gkjit_abs_i64(gk_i64 a) { return a < 0 ? (gk_i64)(0 - (gk_u64)a) : a; }\n"
    "GK_DEVICE_FN int gkjit_cmp_i64_u64(gk_i64 a, gk_u64 b)\n"
    "{ return a < 0 || (gk_u64)a < b ? -1 : (gk_u64)a > b; }\n"
    /* min and max as Python's: the first of equal values, NaN wherever it
     * is compared; functions, so each operand is evaluated once. */
    "#define GKJIT_ORDER(T, S) \\\n"
    "GK_DEVICE_FN T gkjit_min_##S(T a, T b) { return b < a ? b : a; } \\\n"
    "GK_DEVICE_FN T gkjit_max_##S(T a, T b) { return b > a ? b : a; }\n"
    /* Python's float // and % (NumPy's npy_divmod): the quotient comes
     * from fmod's exact remainder, so x // y and x % y agree (-5.0 // inf
     * is -1 and -5.0 % inf is inf); division by zero gives a / b. */
    "#define GKJIT_FLOAT_DIVISION(T, S) \\\n"
    "GK_DEVICE_FN T gkjit_mod_##S(T a, T b) \\\n"
    "{ \\\n"
    "    T r = fmod(a, b); \\\n"
    "    if (r != 0 && ((r < 0) != (b < 0))) r += b; \\\n"
    "    return r != 0 ? r : copysign((T)0, b); \\\n"
    "} \\\n"
    "GK_DEVICE_FN T gkjit_floordiv_##S(T a, T b) \\\n"
    "{ \\\n"
    "    if (b == 0) return a / b; \\\n"
    "    T mod = fmod(a, b), div = (a - mod) / b; \\\n"
    "    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1; \\\n"
    "    if (div == 0) return copysign((T)0, a / b); \\\n"
    "    T floored = floor(div); \\\n"
    "    return div - floored > (T)0.5 ? floored + 1 : floored; \\\n"
    "}\n"
    "GKJIT_ORDER(int, bool)\n"
    "GKJIT_ORDER(gk_i64, i64)\n"
    "GKJIT_ORDER(gk_u64, u64)\n"
    "GKJIT_ORDER(float, f32)\n"
    "GKJIT_FLOAT_DIVISION(float, f32)\n"
    "#ifdef GK_HAS_FP64\n"
    "GKJIT_ORDER(double, f64)\n"
    "GKJIT_FLOAT_DIVISION(double, f64)\n"
    "#endif\n"
    "#if defined(GK_OPENCL) && defined(cl_khr_int64_base_atomics)\n"
    "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"
    "#endif\n"
    "#if defined(GK_OPENCL) && defined(cl_khr_int64_extended_atomics)\n"
    "#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n"
    "#endif\n";

static bool have_helper(translation *tr, const char *name)
{
    for (int i = 0; i < tr->helper_count; i++)
        if (strcmp(tr->helper_names[i], name) == 0)
            return true;
    if (tr->helper_count < MAX_HELPERS)
        snprintf(tr->helper_names[tr->helper_count++], sizeof tr->helper_names[0], "%s", name);
    return false;
}

/* The atomic read-modify-write `op` ("add", "max", "min") on an element of
 * `dtype` in global ('g') or shared ('l') memory: a function returning the
 * old value, made once. Integers use the hardware's atomics; floats a
 * compare-and-swap loop where the API has no atomic of their own. */
static const char *atomic_helper(translation *tr, const char *op, gk_dtype dtype, char space)
{
    const char *t = storage_type(dtype);
    const char *name = fmt(tr, "gkjit_atomic_%s_%s_%c", op, gk_dtype_name(dtype), space);
    if (have_helper(tr, name))
        return name;
    const char *qualifier = space == 'g' ? "GK_GLOBAL" : "GK_LOCAL";
    bool is_float = dtype == GK_FLOAT32 || dtype == GK_FLOAT64;
    bool wide = dtype == GK_INT64 || dtype == GK_UINT64 || dtype == GK_FLOAT64;
    strbuf *h = &tr->helpers;
    if (dtype == GK_FLOAT64)
        text_add(h, "#ifdef GK_HAS_FP64\n");
    text_add(h, "GK_DEVICE_FN %s %s(%s %s *p, %s v)\n{\n", t, name, qualifier, t, t);
    /* CUDA: atomicAdd for every type (double from sm_60), atomicMax/Min for
     * the integers; OpenCL: atomic_* for 32-bit integers, atom_* for 64-bit
     * ones (cl_khr_int64_*_atomics). */
    text_add(h, "#if defined(GK_CUDA)\n");
    if (!is_float || strcmp(op, "add") == 0) {
        const char *cuda_type = dtype == GK_INT32     ? "int"
                                : dtype == GK_UINT32  ? "unsigned int"
                                : dtype == GK_FLOAT32 ? "float"
                                : dtype == GK_FLOAT64 ? "double"
                                : dtype == GK_INT64 && strcmp(op, "add") != 0 ? "long long"
                                                                              : "unsigned long long";
        text_add(h, "    return (%s)atomic%c%s((%s *)p, (%s)v);\n", t, op[0] - 32, op + 1,
                 cuda_type, cuda_type);
    } else {
        const char *bits = wide ? "unsigned long long" : "unsigned int";
        const char *to_bits = wide ? "(unsigned long long)__double_as_longlong" : "__float_as_uint";
        const char *from_bits = wide ? "__longlong_as_double((long long)(" : "__uint_as_float((";
        text_add(h,
                 "    %s *q = (%s *)p;\n"
                 "    %s old = *q, seen;\n"
                 "    do {\n"
                 "        seen = old;\n"
                 "        %s now = %sseen));\n"
                 "        if (!(v %s now)) break;\n"
                 "        old = atomicCAS(q, seen, %s(v));\n"
                 "    } while (old != seen);\n"
                 "    return %sold));\n",
                 bits, bits, bits, t, from_bits, op[1] == 'a' ? ">" : "<", to_bits, from_bits);
    }
    text_add(h, "#else\n");
    if (!is_float) {
        text_add(h, "    return %s_%s(p, v);\n", wide ? "atom" : "atomic", op);
    } else {
        const char *bits = wide ? "gk_u64" : "gk_u32";
        const char *cas = wide ? "atom_cmpxchg" : "atomic_cmpxchg";
        const char *to_bits = wide ? "as_ulong" : "as_uint";
        const char *from_bits = wide ? "as_double" : "as_float";
        const char *next = strcmp(op, "add") == 0 ? "now + v"
                           : strcmp(op, "max") == 0 ? "(v > now ? v : now)"
                                                     : "(v < now ? v : now)";
        text_add(h,
                 "    volatile %s %s *q = (volatile %s %s *)p;\n"
                 "    %s old = *q, seen;\n"
                 "    do {\n"
                 "        seen = old;\n"
                 "        %s now = %s(seen);\n"
                 "        old = %s(q, seen, %s((%s)(%s)));\n"
                 "    } while (old != seen);\n"
                 "    return %s(old);\n",
                 qualifier, bits, qualifier, bits, bits, t, from_bits, cas, to_bits, t, next,
                 from_bits);
    }
    text_add(h, "#endif\n}\n");
    if (dtype == GK_FLOAT64)
        text_add(h, "#endif\n");
    return name;
}

/* ---- expressions --------------------------------------------------------- */

static int expr(translation *tr, scope *sc, PyObject *node, value *out);
static int statements(translation *tr, scope *sc, PyObject *list);
static int translate_function(translation *tr, scope *sc, int nargs, const ty *params,
                              const char *c_name);

static void line(scope *sc, const char *format, ...)
{
    text_add(&sc->body, "%*s", 4 * sc->indent, "");
    va_list args;
    va_start(args, format);
    text_vadd(&sc->body, format, args);
    va_end(args);
    text_add(&sc->body, "\n");
}

/* The intrinsic a Python object is ("grid", "math.sqrt", "min", ...), or
 * NULL. */
static const char *intrinsic_of(translation *tr, PyObject *object)
{
    PyObject *name = gkpy_jit_intrinsic_name(tr->intrinsics, object);
    return name ? PyUnicode_AsUTF8(name) : NULL;
}

PyObject *gkpy_jit_intrinsic_name(PyObject *intrinsics, PyObject *object)
{
    PyObject *key = PyLong_FromVoidPtr(object);
    if (!key)
        return NULL;
    PyObject *name = PyDict_GetItemWithError(intrinsics, key);
    Py_DECREF(key);
    return name;
}

PyObject *gkpy_jit_lookup(PyObject *freevars, PyObject *closure, PyObject *globals,
                          PyObject *name)
{
    if (freevars && closure) {
        Py_ssize_t n = PyTuple_GET_SIZE(freevars);
        for (Py_ssize_t i = 0; i < n && i < PyTuple_GET_SIZE(closure); i++) {
            if (PyUnicode_Compare(PyTuple_GET_ITEM(freevars, i), name) == 0) {
                PyObject *contents = PyCell_Get(PyTuple_GET_ITEM(closure, i));
                if (contents)
                    return contents;
                PyErr_Clear();
            }
        }
    }
    PyObject *found = PyDict_GetItemWithError(globals, name);
    if (found)
        return Py_NewRef(found);
    if (PyErr_Occurred())
        return NULL;
    PyObject *builtins = PyDict_GetItemString(globals, "__builtins__");
    if (builtins && PyModule_Check(builtins))
        builtins = PyModule_GetDict(builtins);
    if (builtins && PyDict_Check(builtins)) {
        found = PyDict_GetItemWithError(builtins, name);
        if (found)
            return Py_NewRef(found);
    }
    return NULL;
}

bool gkpy_jit_number(PyObject *object, char *kind, int *size)
{
    if (PyBool_Check(object) || PyLong_Check(object) || PyFloat_Check(object)) {
        if (kind)
            *kind = PyBool_Check(object) ? 'b' : PyLong_Check(object) ? 'i' : 'f';
        if (size)
            *size = 8;
        return true;
    }
    if (!gkpy_is_numpy_scalar(object))
        return false;
    PyObject *dtype = PyObject_GetAttrString(object, "dtype");
    PyObject *letter = dtype ? PyObject_GetAttrString(dtype, "kind") : NULL;
    PyObject *bytes = dtype ? PyObject_GetAttrString(dtype, "itemsize") : NULL;
    const char *text = letter && PyUnicode_Check(letter) ? PyUnicode_AsUTF8(letter) : NULL;
    bool real = text && strlen(text) == 1 && strchr("biuf", text[0]) && bytes;
    if (real && kind)
        *kind = text[0];
    if (real && size)
        *size = (int)PyLong_AsLong(bytes);
    Py_XDECREF(bytes);
    Py_XDECREF(letter);
    Py_XDECREF(dtype);
    PyErr_Clear();
    return real;
}

/* A NumPy scalar's value as a constant: its Python value (item()), except
 * that float32 and uint64 keep their type, as Numba's constants do. */
static int numpy_scalar_value(translation *tr, scope *sc, PyObject *node, PyObject *object,
                              char kind, int size, value *out);

/* A Python object met while translating: numbers become constants, other
 * objects stay objects to be called or looked into. */
static int object_value(translation *tr, scope *sc, PyObject *node, PyObject *object, value *out)
{
    memset(out, 0, sizeof *out);
    if (PyBool_Check(object)) {
        *out = number(tr, TY_BOOL, "%d", object == Py_True);
        out->nonneg = true;
        return 0;
    }
    if (PyLong_Check(object)) {
        int overflow = 0;
        long long n = PyLong_AsLongLongAndOverflow(object, &overflow);
        if (overflow)
            return fail(sc, node, PyExc_OverflowError,
                        "the integer constant does not fit in int64");
        /* No LL suffix: OpenCL C reserves long long (its long is 64-bit). */
        if (n == INT64_MIN)
            *out = number(tr, TY_I64, "((gk_i64)(-9223372036854775807L - 1))");
        else if (n >= INT32_MIN && n <= INT32_MAX)
            *out = number(tr, TY_I64, "((gk_i64)%lld)", n);
        else
            *out = number(tr, TY_I64, "((gk_i64)%lldL)", n);
        out->constant = true;
        out->number = n;
        out->nonneg = n >= 0;
        return 0;
    }
    if (PyFloat_Check(object)) {
        double d = PyFloat_AS_DOUBLE(object);
        if (isnan(d))
            *out = number(tr, TY_F64, "(0.0 / 0.0)");
        else if (isinf(d))
            *out = number(tr, TY_F64, d > 0 ? "(1.0 / 0.0)" : "(-1.0 / 0.0)");
        else
            *out = number(tr, TY_F64, "%.17e", d);
        return 0;
    }
    char kind;
    int size;
    if (gkpy_jit_number(object, &kind, &size))
        return numpy_scalar_value(tr, sc, node, object, kind, size, out);
    out->type = scalar(TY_OBJECT);
    out->object = object;
    return 0;
}

static int numpy_scalar_value(translation *tr, scope *sc, PyObject *node, PyObject *object,
                              char kind, int size, value *out)
{
    PyObject *item = PyObject_CallMethod(object, "item", NULL);
    if (!item)
        return -1;
    int status = 0;
    if (kind == 'u' && size == 8) {
        unsigned long long n = PyLong_AsUnsignedLongLong(item);
        *out = number(tr, TY_U64, "((gk_u64)%lluUL)", n);
        out->nonneg = true;
    } else if (kind == 'f' && size == 4) { /* a float literal: no double on the way */
        double d = PyFloat_AsDouble(item);
        *out = isnan(d)   ? number(tr, TY_F32, "(0.0f / 0.0f)")
               : isinf(d) ? number(tr, TY_F32, d > 0 ? "(1.0f / 0.0f)" : "(-1.0f / 0.0f)")
                          : number(tr, TY_F32, "%.9ef", d);
    } else {
        status = object_value(tr, sc, node, item, out);
    }
    Py_DECREF(item);
    return status;
}

/* While recording (tr->reads, for the disk cache's key: jit_cache.c),
 * notes that `object` was read at `base` + "<kind>:<name>" (a global or
 * closure name "g", an attribute "a", an expression evaluated in the
 * globals "e"), and gives out (if any) that path, so that what is read
 * from it extends it. */
static int record_read(translation *tr, PyObject *base, char kind, PyObject *name,
                       PyObject *object, value *out)
{
    if (!tr->reads)
        return 0;
    /* An object of unknown origin: None marks the reads unusable. */
    if (!base)
        return PyList_Append(tr->reads, Py_None);
    Py_ssize_t n = PyTuple_GET_SIZE(base);
    PyObject *path = PyTuple_New(n + 1);
    PyObject *step = PyUnicode_FromFormat("%c:%U", kind, name);
    if (!path || !step) {
        Py_XDECREF(path);
        Py_XDECREF(step);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(path, i, Py_NewRef(PyTuple_GET_ITEM(base, i)));
    PyTuple_SET_ITEM(path, n, step);
    PyObject *entry = PyTuple_Pack(2, path, object);
    int status = entry ? PyList_Append(tr->reads, entry) : -1;
    Py_XDECREF(entry);
    if (out)
        out->path = path; /* the list keeps it */
    Py_DECREF(path);
    return status;
}

static int name_value(translation *tr, scope *sc, PyObject *node, value *out)
{
    PyObject *id = field(node, "id");
    if (!id)
        return -1;
    const char *name = PyUnicode_AsUTF8(id);
    variable *v = name ? find_var(sc, name) : NULL;
    if (v) {
        Py_DECREF(id);
        if (!v->assigned)
            return fail(sc, node, PyExc_TypeError,
                        "variable '%s' is read before any assignment to it", v->name);
        memset(out, 0, sizeof *out);
        out->type = v->type;
        out->text = fmt(tr, "v_%s", v->name);
        out->nonneg = v->nonneg;
        return 0;
    }
    PyObject *object = gkpy_jit_lookup(sc->freevars, sc->closure, sc->globals, id);
    if (!object) {
        Py_DECREF(id);
        if (PyErr_Occurred())
            return -1;
        return fail(sc, node, PyExc_TypeError, "name '%s' is not defined", name ? name : "?");
    }
    int status = object_value(tr, sc, node, object, out);
    if (status == 0)
        status = record_read(tr, sc->path, 'g', id, object, out);
    Py_DECREF(id);
    /* Objects stay alive through the globals or closure that hold them. */
    Py_DECREF(object);
    return status;
}

/* An integer expression used as an index along `axis` of length `length`
 * (a C expression): negative values count from the end. */
static const char *index_text(translation *tr, scope *sc, PyObject *node, const char *length,
                              bool *ok)
{
    value v;
    *ok = false;
    if (expr(tr, sc, node, &v) < 0)
        return NULL;
    if (!is_integer(v.type)) {
        fail(sc, node, PyExc_TypeError, "an index must be an integer, not %s",
             type_name(v.type));
        return NULL;
    }
    *ok = true;
    if (v.nonneg)
        return v.text;
    return fmt(tr, "gkjit_wrap((gk_i64)(%s), %s)", v.text, length);
}

/* The gk_view of an argument array: v_x's is w_x. Every Python name is
 * v_<name> in C, so no local (x_view, say) can take a companion's name. */
static const char *view_of(translation *tr, const char *array)
{
    return fmt(tr, "w%s", array + 1);
}

/* The C offset of array[index...] in its buffer: `index` is one
 * expression or a Tuple. */
static int element_offset(translation *tr, scope *sc, PyObject *node, value array,
                          PyObject *index, const char **at)
{
    PyObject *items = is(index, "Tuple") ? field(index, "elts") : NULL;
    int count = items ? (int)PyList_GET_SIZE(items) : 1;
    if (count != array.type.ndim) {
        Py_XDECREF(items);
        return fail(sc, node, PyExc_TypeError,
                    "%d indices for an array of %d dimensions (slices are not supported)",
                    count, array.type.ndim);
    }
    strbuf offset = {0};
    if (array.type.shared)
        text_add(&offset, "0");
    else
        text_add(&offset, "%s.offset", view_of(tr, array.text));
    int64_t stride = 1;
    for (int d = count - 1; d >= 0; d--) {
        PyObject *item = items ? PyList_GET_ITEM(items, d) : index;
        if (is(item, "Slice")) {
            free(offset.data);
            Py_XDECREF(items);
            return unsupported(sc, item, "slicing an array inside a kernel");
        }
        const char *length = array.type.shared ? fmt(tr, "%lld", (long long)array.type.shape[d])
                                               : fmt(tr, "%s.shape[%d]", view_of(tr, array.text),
                                                     d);
        bool ok;
        const char *i = index_text(tr, sc, item, length, &ok);
        if (!ok) {
            free(offset.data);
            Py_XDECREF(items);
            return -1;
        }
        if (array.type.shared) {
            text_add(&offset, " + (%s) * %lld", i, (long long)stride);
            stride *= array.type.shape[d];
        } else if (array.type.contiguous && d == count - 1) {
            /* A known unit step lets the compiler vectorise across threads. */
            text_add(&offset, " + (%s)", i);
        } else {
            text_add(&offset, " + (%s) * %s.strides[%d]", i, view_of(tr, array.text), d);
        }
    }
    Py_XDECREF(items);
    *at = fmt(tr, "%s", offset.data ? offset.data : "0");
    free(offset.data);
    return 0;
}

/* The C lvalue of array[index...]. */
static int element(translation *tr, scope *sc, PyObject *node, value array, PyObject *index,
                   const char **lvalue)
{
    const char *at;
    if (element_offset(tr, sc, node, array, index, &at) < 0)
        return -1;
    *lvalue = fmt(tr, "%s[%s]", array.text, at);
    return 0;
}

/* Reads an element as a value of its computing type. */
static value load(translation *tr, gk_dtype dtype, const char *lvalue)
{
    value v = {.type = element_type(dtype), .nonneg = gkpy_dtype_kind(dtype) == 'u' ||
                                                      dtype == GK_BOOL};
    if (dtype == GK_BOOL)
        v.text = fmt(tr, "((int)(%s != 0))", lvalue);
    else if (dtype == GK_FLOAT16)
        v.text = fmt(tr, "gk_f16_to_float(%s)", lvalue);
    else if (dtype == GK_BFLOAT16)
        v.text = fmt(tr, "gk_bf16_to_float(%s)", lvalue);
    else
        v.text = fmt(tr, "((%s)%s)", c_type(v.type), lvalue);
    return v;
}

/* The C statement storing `v` into an element. */
static const char *store(translation *tr, gk_dtype dtype, const char *lvalue, value v)
{
    if (dtype == GK_BOOL)
        return fmt(tr, "%s = (gk_u8)((%s) != 0);", lvalue, v.text);
    if (dtype == GK_FLOAT16 || dtype == GK_BFLOAT16) {
        /* A float64 value rounds once, straight to the 16-bit type (through
         * float it would round twice); float64 values exist only where
         * GK_HAS_FP64 gives the dialect's _from_double. */
        const char *prefix = dtype == GK_FLOAT16 ? "gk_f16" : "gk_bf16";
        if (v.type.kind == TY_F64)
            return fmt(tr, "%s = %s_from_double(%s);", lvalue, prefix, v.text);
        return fmt(tr, "%s = %s_from_float((float)(%s));", lvalue, prefix, v.text);
    }
    bool floating = v.type.kind == TY_F32 || v.type.kind == TY_F64;
    if (floating && dtype == GK_UINT64) /* above int64's range only as unsigned */
        return fmt(tr, "%s = (%s) >= 0x1p63%s ? (gk_u64)(%s) : (gk_u64)(gk_i64)(%s);", lvalue,
                   v.text, v.type.kind == TY_F32 ? "f" : "", v.text, v.text);
    /* A float into a narrower integer goes through int64 and wraps, as
     * NumPy's astype does: C leaves a float out of the target's range
     * undefined (-3.7 into uint32 gave 4294967295 on PoCL, where NumPy
     * gives 4294967293). NaN and infinities stay unspecified. */
    if (floating && dtype != GK_INT64 && !gk_dtype_is_float(dtype))
        return fmt(tr, "%s = (%s)(gk_i64)(%s);", lvalue, storage_type(dtype), v.text);
    return fmt(tr, "%s = (%s)(%s);", lvalue, storage_type(dtype), v.text);
}

/* The suffix of the prelude's helpers for a number type (gkjit_mod_f64). */
static const char *helper_suffix(ty t)
{
    switch (t.kind) {
    case TY_BOOL: return "bool";
    case TY_I64: return "i64";
    case TY_U64: return "u64";
    case TY_F32: return "f32";
    default: return "f64";
    }
}

static int binary(translation *tr, scope *sc, PyObject *node, const char *op, value a, value b,
                  value *out)
{
    if (!is_number(a.type) || !is_number(b.type))
        return fail(sc, node, PyExc_TypeError, "unsupported operand types for %s: %s and %s", op,
                    type_name(a.type), type_name(b.type));
    ty t = promote(a.type, b.type);
    memset(out, 0, sizeof *out);
    bool bitwise = strcmp(op, "BitAnd") == 0 || strcmp(op, "BitOr") == 0 ||
                   strcmp(op, "BitXor") == 0;
    if (t.kind == TY_BOOL && !bitwise)
        t = scalar(TY_I64); /* True + True == 2 */
    const char *x = as(tr, a, t), *y = as(tr, b, t);
    const char *suffix = helper_suffix(t);
    out->type = t;
    const char *arithmetic = strcmp(op, "Add") == 0    ? "+"
                             : strcmp(op, "Sub") == 0  ? "-"
                             : strcmp(op, "Mult") == 0 ? "*"
                                                       : NULL;
    if (arithmetic && t.kind == TY_I64) /* wraps on overflow, as NumPy's int64 */
        out->text = fmt(tr, "((gk_i64)((gk_u64)(%s) %s (gk_u64)(%s)))", x, arithmetic, y);
    else if (arithmetic)
        out->text = fmt(tr, "(%s %s %s)", x, arithmetic, y);
    else if (strcmp(op, "Div") == 0) {
        if (is_integer(t))
            t = scalar(TY_F64);
        out->type = t;
        out->text = fmt(tr, "(%s / %s)", as(tr, a, t), as(tr, b, t));
    } else if (strcmp(op, "FloorDiv") == 0)
        out->text = fmt(tr, "gkjit_floordiv_%s(%s, %s)", suffix, x, y);
    else if (strcmp(op, "Mod") == 0)
        out->text = fmt(tr, "gkjit_mod_%s(%s, %s)", suffix, x, y);
    else if (strcmp(op, "Pow") == 0)
        out->text = is_integer(t) ? fmt(tr, "gkjit_pow_%s(%s, %s)", suffix, x, y)
                                  : fmt(tr, "pow(%s, %s)", x, y);
    else if (bitwise || strcmp(op, "LShift") == 0 || strcmp(op, "RShift") == 0) {
        if (!is_integer(t))
            return fail(sc, node, PyExc_TypeError, "%s needs integers, not %s", op,
                        type_name(t));
        const char *c = strcmp(op, "BitAnd") == 0   ? "&"
                        : strcmp(op, "BitOr") == 0  ? "|"
                        : strcmp(op, "BitXor") == 0 ? "^"
                                                    : NULL;
        /* Shifts through helpers: counts outside [0, 64) give NumPy's results. */
        out->text = c ? fmt(tr, "(%s %s %s)", x, c, y)
                      : fmt(tr, "gkjit_sh%c_%s(%s, %s)", op[0] == 'L' ? 'l' : 'r', suffix, x, y);
    } else
        return unsupported(sc, node, fmt(tr, "the operator %s", op));
    /* What stays a non-negative integer (LShift may overflow into the sign). */
    bool both = a.nonneg && b.nonneg;
    out->nonneg = is_integer(out->type) &&
                  ((both && strcmp(op, "Sub") != 0 && strcmp(op, "LShift") != 0) ||
                   (strcmp(op, "BitAnd") == 0 && (a.nonneg || b.nonneg)));
    return 0;
}

static const char *compare_op(const char *kind)
{
    static const char *const table[][2] = {
        {"Eq", "=="}, {"NotEq", "!="}, {"Lt", "<"}, {"LtE", "<="}, {"Gt", ">"}, {"GtE", ">="},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(kind, table[i][0]) == 0)
            return table[i][1];
    return NULL;
}

/* Python's math functions as the dialect's (float overloads for float32). */
static const char *math_function(const char *name, int *arity, bool *to_int)
{
    static const struct { const char *python, *c; int arity; bool to_int; } table[] = {
        {"sqrt", "sqrt", 1, false}, {"exp", "exp", 1, false}, {"expm1", "expm1", 1, false},
        {"log", "log", 1, false}, {"log2", "log2", 1, false}, {"log10", "log10", 1, false},
        {"log1p", "log1p", 1, false}, {"sin", "sin", 1, false}, {"cos", "cos", 1, false},
        {"tan", "tan", 1, false}, {"asin", "asin", 1, false}, {"acos", "acos", 1, false},
        {"atan", "atan", 1, false}, {"sinh", "sinh", 1, false}, {"cosh", "cosh", 1, false},
        {"tanh", "tanh", 1, false}, {"asinh", "asinh", 1, false}, {"acosh", "acosh", 1, false},
        {"atanh", "atanh", 1, false}, {"fabs", "fabs", 1, false}, {"erf", "erf", 1, false},
        {"erfc", "erfc", 1, false}, {"gamma", "tgamma", 1, false}, {"lgamma", "lgamma", 1, false},
        {"floor", "floor", 1, true}, {"ceil", "ceil", 1, true}, {"trunc", "trunc", 1, true},
        {"atan2", "atan2", 2, false}, {"pow", "pow", 2, false}, {"hypot", "hypot", 2, false},
        {"copysign", "copysign", 2, false}, {"fmod", "fmod", 2, false},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i].python) == 0) {
            *arity = table[i].arity;
            *to_int = table[i].to_int;
            return table[i].c;
        }
    return NULL;
}

/* The arguments of a call, evaluated (keywords refused). */
static int call_args(translation *tr, scope *sc, PyObject *node, value *args, int max,
                     int *count, PyObject **raw)
{
    PyObject *keywords = field(node, "keywords");
    Py_ssize_t nkw = keywords ? PyList_GET_SIZE(keywords) : 0;
    Py_XDECREF(keywords);
    if (nkw)
        return unsupported(sc, node, "a keyword argument in a call");
    PyObject *list = field(node, "args");
    if (!list)
        return -1;
    *count = (int)PyList_GET_SIZE(list);
    if (*count > max) {
        Py_DECREF(list);
        return fail(sc, node, PyExc_TypeError, "too many arguments (%d) in a call", *count);
    }
    for (int i = 0; i < *count; i++) {
        PyObject *arg = PyList_GET_ITEM(list, i);
        if (raw)
            raw[i] = arg;
        if (is(arg, "Starred")) {
            Py_DECREF(list);
            return unsupported(sc, arg, "*args in a call");
        }
        if (expr(tr, sc, arg, &args[i]) < 0) {
            Py_DECREF(list);
            return -1;
        }
    }
    Py_DECREF(list);
    return 0;
}

static int expect_count(scope *sc, PyObject *node, const char *name, int count, int want)
{
    if (count == want)
        return 0;
    return fail(sc, node, PyExc_TypeError, "%s() takes %d argument%s, got %d", name, want,
                want == 1 ? "" : "s", count);
}

/* grid(n) / gridsize(n): one index (n == 1) or a tuple of n. */
static int grid_value(translation *tr, scope *sc, PyObject *node, const char *which, value *args,
                      int count, value *out)
{
    if (expect_count(sc, node, which, count, 1) < 0)
        return -1;
    if (!args[0].constant || args[0].number < 1 || args[0].number > 3)
        return fail(sc, node, PyExc_TypeError, "%s() takes a constant 1, 2 or 3", which);
    int n = (int)args[0].number;
    const char *macro = strcmp(which, "grid") == 0 ? "GK_GLOBAL_ID" : "GK_GLOBAL_SIZE";
    memset(out, 0, sizeof *out);
    if (n == 1) {
        *out = number(tr, TY_I64, "%s(0)", macro);
        out->nonneg = true;
        return 0;
    }
    out->type = scalar(TY_TUPLE);
    out->count = n;
    out->items = calloc((size_t)n, sizeof *out->items);
    keep(tr, (char *)out->items);
    for (int d = 0; d < n; d++) {
        out->items[d] = number(tr, TY_I64, "%s(%d)", macro, d);
        out->items[d].nonneg = true;
    }
    return 0;
}

/* The dtype a shared.array call names (gpukit.float32, numpy.float32,
 * "float32"). */
PyObject *gkpy_jit_dtype_name(PyObject *object)
{
    if (PyUnicode_Check(object))
        return Py_NewRef(object);
    if (PyType_Check(object))
        return PyObject_GetAttrString(object, "__name__");
    if (PyObject_HasAttrString(object, "name"))
        return PyObject_GetAttrString(object, "name");
    return NULL;
}

static int dtype_of_object(scope *sc, PyObject *node, PyObject *object, gk_dtype *dtype)
{
    PyObject *name = gkpy_jit_dtype_name(object);
    const char *text = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    int status = text && gk_dtype_parse(text, dtype) == GK_OK ? 0 : -1;
    Py_XDECREF(name);
    if (status < 0)
        return fail(sc, node, PyExc_TypeError,
                    "the dtype of a shared array must be a gpukit or NumPy dtype or its name");
    return 0;
}

static int shared_array(translation *tr, scope *sc, PyObject *node, PyObject **raw, int count,
                        value *out)
{
    if (!sc->is_kernel)
        return unsupported(sc, node, "shared.array in a device function (make it in the kernel)");
    if (expect_count(sc, node, "shared.array", count, 2) < 0)
        return -1;
    /* Both arguments must be known now: evaluated as Python would, in the
     * function's globals. */
    PyObject *ast_module = PyImport_ImportModule("ast");
    PyObject *results[2] = {NULL, NULL};
    for (int k = 0; k < 2 && ast_module; k++) {
        PyObject *code = PyObject_CallMethod(ast_module, "unparse", "O", raw[k]);
        const char *text = code ? PyUnicode_AsUTF8(code) : NULL;
        results[k] = text ? PyRun_String(text, Py_eval_input, sc->globals, sc->globals) : NULL;
        if (results[k] && record_read(tr, sc->path, 'e', code, results[k], NULL) < 0)
            Py_CLEAR(results[k]);
        Py_XDECREF(code);
        if (!results[k])
            break;
    }
    Py_XDECREF(ast_module);
    if (!results[0] || !results[1]) {
        Py_XDECREF(results[0]);
        return fail(sc, node, PyExc_TypeError,
                    "shared.array needs a shape and a dtype known before the launch "
                    "(constants or globals)");
    }
    memset(out, 0, sizeof *out);
    out->type.kind = TY_ARRAY;
    out->type.shared = true;
    int status = dtype_of_object(sc, node, results[1], &out->type.dtype);
    PyObject *dims = status < 0                    ? NULL
                     : PyLong_Check(results[0]) ? PyTuple_Pack(1, results[0])
                                                 : PySequence_Tuple(results[0]);
    Py_DECREF(results[0]);
    Py_DECREF(results[1]);
    if (!dims) {
        if (status < 0)
            return -1;
        return fail(sc, node, PyExc_TypeError, "the shape must be an int or a tuple of ints");
    }
    out->type.ndim = (int)PyTuple_GET_SIZE(dims);
    int64_t total = 1;
    for (int d = 0; d < out->type.ndim && d < GK_MAX_DIMS; d++) {
        out->type.shape[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(dims, d));
        total *= out->type.shape[d];
    }
    Py_DECREF(dims);
    if (PyErr_Occurred() || out->type.ndim < 1 || out->type.ndim > GK_MAX_DIMS || total < 1 ||
        !storage_type(out->type.dtype))
        return fail(sc, node, PyExc_TypeError,
                    "a shared array needs a positive constant shape of 1 to %d dimensions and a "
                    "real or integer dtype",
                    GK_MAX_DIMS);
    const char *name = fmt(tr, "gkjit_shared_%d", sc->temp++);
    text_add(&sc->shared_decls, "    GK_LOCAL %s %s[%lld];\n", storage_type(out->type.dtype),
             name, (long long)total);
    out->text = name;
    return 0;
}

/* NumPy's refusal of a store into a read-only array, for `array` about to
 * be written at `node`: an argument whose elements the caller could not
 * see change (jit_arg_type's read_only). */
static int check_writable(scope *sc, PyObject *node, value array)
{
    if (!array.type.read_only)
        return 0;
    return fail(sc, node, PyExc_ValueError,
                "assignment destination is read-only: the argument array '%s' is read-only "
                "(a NumPy array with writeable=False, a broadcast view, or an object such as a "
                "list that is only copied in); pass a writable array, e.g. a copy",
                array.text + 2 /* past the "v_" of its C name */);
}

static int atomic_call(translation *tr, scope *sc, PyObject *node, const char *op, value *args,
                       PyObject **raw, int count, value *out)
{
    if (expect_count(sc, node, fmt(tr, "atomic.%s", op), count, 3) < 0)
        return -1;
    value array = args[0];
    if (array.type.kind != TY_ARRAY)
        return fail(sc, node, PyExc_TypeError, "atomic.%s needs an array first", op);
    gk_dtype d = array.type.dtype;
    if (d != GK_INT32 && d != GK_UINT32 && d != GK_INT64 && d != GK_UINT64 && d != GK_FLOAT32 &&
        d != GK_FLOAT64)
        return fail(sc, node, PyExc_TypeError,
                    "atomic.%s works on int32, uint32, int64, uint64, float32 and float64 "
                    "arrays, not %s",
                    op, gk_dtype_name(d));
    if (!is_number(args[2].type))
        return fail(sc, node, PyExc_TypeError, "atomic.%s needs a number to combine", op);
    const char *lvalue;
    if (check_writable(sc, node, array) < 0 || element(tr, sc, node, array, raw[1], &lvalue) < 0)
        return -1;
    const char *helper = atomic_helper(tr, op, d, array.type.shared ? 'l' : 'g');
    memset(out, 0, sizeof *out);
    out->type = element_type(d);
    out->text = fmt(tr, "((%s)%s(&%s, (%s)(%s)))", c_type(out->type), helper, lvalue,
                    storage_type(d), args[2].text);
    return 0;
}

/* `python` (a device function's py_func, reached at `path`) translated
 * for these parameter types into tr, or NULL with the error; a failed
 * translation leaves nothing behind (neither its entry nor the device
 * functions it translated), so a later pass translates afresh. */
static device_fn *new_device_fn(translation *tr, PyObject *python, PyObject *path,
                                const ty *params, int count)
{
    int fn_count = tr->device_fn_count;
    size_t text_length = tr->device_text.length;
    device_fn *fn = &tr->device_fns[tr->device_fn_count++];
    memset(fn, 0, sizeof *fn);
    fn->function = python;
    fn->count = count;
    memcpy(fn->params, params, sizeof *params * (size_t)count);
    snprintf(fn->name, sizeof fn->name, "gkjit_device_%d", tr->device_fn_count);
    scope *inner = calloc(1, sizeof *inner);
    if (!inner) {
        tr->device_fn_count = fn_count;
        PyErr_NoMemory();
        return NULL;
    }
    inner->function = python;
    /* Its names are read below the path it was reached by. */
    inner->path = Py_XNewRef(path);
    tr->depth++;
    fn->translating = true;
    int status = translate_function(tr, inner, count, params, fn->name);
    fn->translating = false;
    tr->depth--;
    fn->result = inner->has_result ? inner->result : scalar(TY_NONE);
    scope_free(inner);
    if (status == 0)
        return fn;
    tr->device_fn_count = fn_count;
    if (tr->device_text.data) {
        tr->device_text.length = text_length;
        tr->device_text.data[text_length] = 0;
    }
    return NULL;
}

/* A device call that failed to translate: its error kept for the end of
 * sc's pass (translate_function), and a bool (which any number type
 * widens) for its value meanwhile. */
static int defer_device_error(scope *sc, value *out)
{
    if (!PyErr_ExceptionMatches(PyExc_TypeError))
        return -1;
    drop_deferred(sc);
    PyErr_Fetch(&sc->deferred_type, &sc->deferred_value, &sc->deferred_traceback);
    memset(out, 0, sizeof *out);
    out->type = scalar(TY_BOOL);
    out->text = "0";
    return 0;
}

/* A call of another @gpukit.jit(device=True) function (`python`, its
 * py_func, reached at `path`): translated for these argument types once,
 * then called. */
static int device_call(translation *tr, scope *sc, PyObject *node, PyObject *python,
                       PyObject *path, value *args, int count, value *out)
{
    ty params[16];
    if (count > 16)
        return fail(sc, node, PyExc_TypeError, "too many arguments to a device function");
    for (int i = 0; i < count; i++) {
        params[i] = args[i].type;
        if (!is_number(args[i].type) && !(args[i].type.kind == TY_ARRAY && !args[i].type.shared)) {
            return fail(sc, node, PyExc_TypeError,
                        "device functions take numbers and argument arrays, not %s",
                        type_name(args[i].type));
        }
    }
    device_fn *fn = NULL;
    for (int k = 0; k < tr->device_fn_count && !fn; k++) {
        device_fn *f = &tr->device_fns[k];
        if (f->function == python && f->count == count &&
            memcmp(f->params, params, sizeof *params * (size_t)count) == 0)
            fn = f;
    }
    if (!fn) {
        if (tr->device_fn_count == MAX_DEVICE_FNS || tr->depth > 8)
            return fail(sc, node, PyExc_NotImplementedError,
                        "device functions nested too deep, or too many");
        fn = new_device_fn(tr, python, path, params, count);
        if (!fn)
            return defer_device_error(sc, out);
    }
    if (fn->translating)
        return unsupported(sc, node, "a recursive device function");
    strbuf call = {0};
    text_add(&call, "%s(", fn->name);
    for (int i = 0; i < count; i++) {
        if (args[i].type.kind == TY_ARRAY)
            text_add(&call, "%s%s, %s", i ? ", " : "", args[i].text, view_of(tr, args[i].text));
        else
            text_add(&call, "%s%s", i ? ", " : "", as(tr, args[i], fn->params[i]));
    }
    text_add(&call, ")");
    memset(out, 0, sizeof *out);
    out->type = fn->result;
    out->text = keep(tr, call.data);
    return 0;
}

PyObject *gkpy_jit_device_function(PyObject *object)
{
    PyObject *flag = PyObject_HasAttrString(object, "py_func")
                         ? PyObject_GetAttrString(object, "is_device_function")
                         : NULL;
    int device = flag ? PyObject_IsTrue(flag) : 0;
    Py_XDECREF(flag);
    PyErr_Clear();
    return device == 1 ? PyObject_GetAttrString(object, "py_func") : NULL;
}

static int call(translation *tr, scope *sc, PyObject *node, value *out)
{
    PyObject *callee_node = field(node, "func");
    if (!callee_node)
        return -1;
    value callee;
    int status = expr(tr, sc, callee_node, &callee);
    Py_DECREF(callee_node);
    if (status < 0)
        return -1;
    if (callee.type.kind != TY_OBJECT)
        return fail(sc, node, PyExc_TypeError, "%s is not callable", type_name(callee.type));
    value args[16];
    PyObject *raw[16];
    int count = 0;
    const char *name = intrinsic_of(tr, callee.object);
    if (name && strcmp(name, "shared.array") == 0) {
        PyObject *list = field(node, "args");
        count = list ? (int)PyList_GET_SIZE(list) : 0;
        for (int i = 0; i < count && i < 16; i++)
            raw[i] = PyList_GET_ITEM(list, i);
        status = shared_array(tr, sc, node, raw, count, out);
        Py_XDECREF(list);
        return status;
    }
    if (call_args(tr, sc, node, args, 16, &count, raw) < 0)
        return -1;
    memset(out, 0, sizeof *out);
    if (!name) {
        PyObject *python = gkpy_jit_device_function(callee.object);
        if (python) {
            status = device_call(tr, sc, node, python, callee.path, args, count, out);
            Py_DECREF(python);
            return status;
        }
        if (PyErr_Occurred())
            return -1;
        if (PyObject_HasAttrString(callee.object, "py_func"))
            return fail(sc, node, PyExc_TypeError,
                        "a kernel cannot call another kernel; declare the callee with "
                        "@gpukit.jit(device=True)");
        PyObject *repr = PyObject_Repr(callee.object);
        const char *text = repr ? PyUnicode_AsUTF8(repr) : "an object";
        fail(sc, node, PyExc_NotImplementedError,
             "calling %s is not supported in gpukit kernels (math functions, min, max, abs, "
             "int, float, bool, range in for loops, gpukit's intrinsics and "
             "@gpukit.jit(device=True) functions are)",
             text ? text : "an object");
        Py_XDECREF(repr);
        return -1;
    }
    if (strcmp(name, "grid") == 0 || strcmp(name, "gridsize") == 0)
        return grid_value(tr, sc, node, name, args, count, out);
    if (strcmp(name, "syncthreads") == 0) {
        if (expect_count(sc, node, "syncthreads", count, 0) < 0)
            return -1;
        out->type = scalar(TY_NONE);
        out->text = "GK_BARRIER()";
        return 0;
    }
    if (strncmp(name, "atomic.", 7) == 0)
        return atomic_call(tr, sc, node, name + 7, args, raw, count, out);
    if (strcmp(name, "range") == 0)
        return unsupported(sc, node, "range() outside a for loop's header");
    for (int i = 0; i < count; i++)
        if (!is_number(args[i].type))
            return fail(sc, node, PyExc_TypeError, "%s() takes numbers, not %s", name,
                        type_name(args[i].type));
    if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0) {
        if (count < 2)
            return fail(sc, node, PyExc_TypeError, "%s() takes 2 or more numbers in a kernel",
                        name);
        *out = args[0];
        for (int i = 1; i < count; i++) {
            /* min of non-negatives, max with one, stays non-negative. */
            bool nonneg = name[1] == 'i' ? out->nonneg && args[i].nonneg
                                         : out->nonneg || args[i].nonneg;
            ty t = promote(out->type, args[i].type);
            const char *a = as(tr, *out, t), *b = as(tr, args[i], t);
            /* The prelude's gkjit_min_* and gkjit_max_*: each operand evaluated once. */
            out->text = fmt(tr, "gkjit_%s_%s(%s, %s)", name, helper_suffix(t), a, b);
            out->type = t;
            out->constant = false;
            out->nonneg = nonneg && is_integer(t);
        }
        return 0;
    }
    if (strcmp(name, "abs") == 0) {
        if (expect_count(sc, node, "abs", count, 1) < 0)
            return -1;
        ty t = args[0].type.kind == TY_BOOL ? scalar(TY_I64) : args[0].type;
        const char *a = as(tr, args[0], t);
        out->type = t;
        /* Functions, so the operand is evaluated once; abs(INT64_MIN) wraps. */
        out->text = t.kind == TY_U64 ? a
                    : is_integer(t) ? fmt(tr, "gkjit_abs_i64(%s)", a)
                                    : fmt(tr, "fabs(%s)", a);
        return 0;
    }
    if (strcmp(name, "int") == 0 || strcmp(name, "float") == 0 || strcmp(name, "bool") == 0) {
        if (expect_count(sc, node, name, count, 1) < 0)
            return -1;
        ty t = scalar(name[0] == 'i' ? TY_I64 : name[0] == 'f' ? TY_F64 : TY_BOOL);
        out->type = t;
        out->text = as(tr, args[0], t);
        return 0;
    }
    if (strncmp(name, "math.is", 7) == 0) {
        if (expect_count(sc, node, name, count, 1) < 0)
            return -1;
        out->type = scalar(TY_BOOL);
        out->text = fmt(tr, "((int)%s(%s))", name + 5,
                        is_integer(args[0].type) ? as(tr, args[0], scalar(TY_F64)) : args[0].text);
        return 0;
    }
    if (strncmp(name, "math.", 5) == 0) {
        int arity;
        bool to_int;
        const char *c = math_function(name + 5, &arity, &to_int);
        if (!c)
            return unsupported(sc, node, fmt(tr, "%s()", name));
        if (expect_count(sc, node, name, count, arity) < 0)
            return -1;
        if (to_int && is_integer(args[0].type)) {
            /* Already whole: through a double, int64 beyond 2^53 would round. */
            ty whole = scalar(args[0].type.kind == TY_U64 ? TY_U64 : TY_I64);
            *out = args[0];
            out->type = whole;
            out->text = as(tr, args[0], whole);
            return 0;
        }
        ty t = scalar(TY_F32);
        for (int i = 0; i < count; i++)
            if (args[i].type.kind != TY_F32)
                t = scalar(TY_F64);
        out->type = to_int ? scalar(TY_I64) : t;
        out->text = count == 1 ? fmt(tr, "%s(%s)", c, as(tr, args[0], t))
                               : fmt(tr, "%s(%s, %s)", c, as(tr, args[0], t), as(tr, args[1], t));
        if (to_int)
            out->text = fmt(tr, "((gk_i64)%s)", out->text);
        return 0;
    }
    return unsupported(sc, node, fmt(tr, "%s()", name));
}

static int attribute(translation *tr, scope *sc, PyObject *node, value *out)
{
    PyObject *base_node = field(node, "value"), *attr = field(node, "attr");
    value base;
    int status = base_node && attr ? expr(tr, sc, base_node, &base) : -1;
    Py_XDECREF(base_node);
    const char *name = attr ? PyUnicode_AsUTF8(attr) : NULL;
    if (status < 0 || !name) {
        Py_XDECREF(attr);
        return -1;
    }
    memset(out, 0, sizeof *out);
    if (base.type.kind == TY_ARRAY) {
        status = 0;
        if (strcmp(name, "shape") == 0) {
            out->type = scalar(TY_TUPLE);
            out->count = base.type.ndim;
            out->items = calloc((size_t)base.type.ndim + 1, sizeof *out->items);
            keep(tr, (char *)out->items);
            for (int d = 0; d < base.type.ndim; d++) {
                out->items[d] = base.type.shared
                                    ? number(tr, TY_I64, "((gk_i64)%lld)",
                                             (long long)base.type.shape[d])
                                    : number(tr, TY_I64, "%s.shape[%d]",
                                             view_of(tr, base.text), d);
                out->items[d].constant = base.type.shared;
                out->items[d].number = base.type.shape[d];
                out->items[d].nonneg = true;
            }
        } else if (strcmp(name, "size") == 0) {
            int64_t total = 1;
            for (int d = 0; d < base.type.ndim; d++)
                total *= base.type.shape[d];
            *out = base.type.shared ? number(tr, TY_I64, "((gk_i64)%lld)", (long long)total)
                                    : number(tr, TY_I64, "%s.size", view_of(tr, base.text));
            out->nonneg = true;
        } else if (strcmp(name, "ndim") == 0) {
            *out = number(tr, TY_I64, "((gk_i64)%d)", base.type.ndim);
            out->constant = true;
            out->number = base.type.ndim;
            out->nonneg = true;
        } else {
            status = unsupported(sc, node, fmt(tr, "the array attribute '%s'", name));
        }
        Py_DECREF(attr);
        return status;
    }
    if (base.type.kind != TY_OBJECT) {
        Py_DECREF(attr);
        return fail(sc, node, PyExc_TypeError, "%s has no attribute '%s' in a kernel",
                    type_name(base.type), name);
    }
    /* threadIdx.x and friends. */
    const char *owner = intrinsic_of(tr, base.object);
    if (owner && (strcmp(name, "x") == 0 || strcmp(name, "y") == 0 || strcmp(name, "z") == 0)) {
        const char *macro = strcmp(owner, "threadIdx") == 0  ? "GK_LOCAL_ID"
                            : strcmp(owner, "blockIdx") == 0 ? "GK_GROUP_ID"
                            : strcmp(owner, "blockDim") == 0 ? "GK_LOCAL_SIZE"
                            : strcmp(owner, "gridDim") == 0  ? "GK_NUM_GROUPS"
                                                             : NULL;
        if (macro) {
            *out = number(tr, TY_I64, "%s(%d)", macro, name[0] - 'x');
            out->nonneg = true;
            Py_DECREF(attr);
            return 0;
        }
    }
    PyObject *object = PyObject_GetAttr(base.object, attr);
    if (!object) {
        PyErr_Clear();
        PyObject *repr = PyObject_Repr(base.object);
        fail(sc, node, PyExc_TypeError, "%s has no attribute '%s'",
             repr ? PyUnicode_AsUTF8(repr) : "the object", name);
        Py_XDECREF(repr);
        Py_DECREF(attr);
        return -1;
    }
    status = object_value(tr, sc, node, object, out);
    if (status == 0)
        status = record_read(tr, base.path, 'a', attr, object, out);
    Py_DECREF(attr);
    /* Attributes of modules and gpukit's namespaces live as long as they do. */
    Py_DECREF(object);
    return status;
}

static int subscript(translation *tr, scope *sc, PyObject *node, value *out)
{
    PyObject *base_node = field(node, "value"), *index = field(node, "slice");
    value base;
    int status = base_node && index ? expr(tr, sc, base_node, &base) : -1;
    Py_XDECREF(base_node);
    if (status < 0) {
        Py_XDECREF(index);
        return -1;
    }
    if (base.type.kind == TY_ARRAY) {
        const char *lvalue;
        status = element(tr, sc, node, base, index, &lvalue);
        Py_DECREF(index);
        if (status == 0)
            *out = load(tr, base.type.dtype, lvalue);
        return status;
    }
    if (base.type.kind == TY_TUPLE) {
        value i;
        status = expr(tr, sc, index, &i);
        Py_DECREF(index);
        if (status < 0)
            return -1;
        int64_t k = i.number < 0 ? i.number + base.count : i.number;
        if (!i.constant || k < 0 || k >= base.count)
            return fail(sc, node, PyExc_TypeError,
                        "a tuple of %d takes a constant index in range", base.count);
        *out = base.items[k];
        return 0;
    }
    Py_DECREF(index);
    return fail(sc, node, PyExc_TypeError, "%s cannot be indexed", type_name(base.type));
}

/* A new hidden local of type `t`, declared at the top of the function, in
 * which an expression keeps an operand it uses twice: (gkjit_e1 = x).
 * (A statement before the expression would run even where the expression
 * does not, and only once in a while loop's condition.) */
static const char *hidden_local(translation *tr, scope *sc, ty t)
{
    const char *name = fmt(tr, "gkjit_e%d", sc->temp++);
    text_add(&sc->hidden_decls, "    %s %s = 0;\n", c_type(t), name);
    return name;
}

/* `a or b` is a when a is true, else b; `a and b` is a when a is false,
 * else b: Python's operand (of the operands' promoted type), not a bool.
 * Each operand is evaluated at most once, left to right, and no further
 * than the answer needs. Of bools it is C's || and &&. */
static int bool_op(translation *tr, scope *sc, PyObject *node, value *out)
{
    PyObject *op = field(node, "op"), *values = field(node, "values");
    int status = op && values ? 0 : -1;
    int n = status == 0 ? (int)PyList_GET_SIZE(values) : 0;
    bool is_and = status == 0 && is(op, "And");
    value *items = calloc((size_t)n + 1, sizeof *items);
    keep(tr, (char *)items);
    if (!items && status == 0)
        status = (PyErr_NoMemory(), -1);
    ty t = scalar(TY_BOOL);
    bool nonneg = true;
    for (int i = 0; status == 0 && i < n; i++) {
        status = expr(tr, sc, PyList_GET_ITEM(values, i), &items[i]);
        if (status == 0 && !is_number(items[i].type))
            status = fail(sc, node, PyExc_TypeError, "and/or take numbers, not %s",
                          type_name(items[i].type));
        if (status == 0) {
            t = i ? promote(t, items[i].type) : items[i].type;
            nonneg = nonneg && items[i].nonneg;
        }
    }
    Py_XDECREF(op);
    Py_XDECREF(values);
    if (status < 0)
        return -1;
    const char *text = as(tr, items[n - 1], t);
    for (int i = n - 2; i >= 0; i--) {
        if (t.kind == TY_BOOL) {
            text = fmt(tr, "(%s %s %s)", items[i].text, is_and ? "&&" : "||", text);
            continue;
        }
        const char *kept = hidden_local(tr, sc, t);
        text = fmt(tr, "((%s = %s) %s 0 ? %s : %s)", kept, as(tr, items[i], t),
                   is_and ? "==" : "!=", kept, text);
    }
    out->type = t;
    out->text = text;
    out->nonneg = nonneg && is_integer(t);
    return 0;
}

/* a < b < c is Python's a < b and b < c, with b evaluated once (kept in a
 * hidden local unless it is a name or a constant) and c only if a < b. */
/* "(a c b)" in the type both promote to; int64 against uint64, which
 * promote to float64 and would round (2**63 - 1 == 2**63), compares
 * exactly by gkjit_cmp_i64_u64 (a negative int64 is below every uint64),
 * as NumPy 2 and Python do. */
static const char *comparison(translation *tr, value a, const char *c, value b)
{
    if (a.type.kind == TY_I64 && b.type.kind == TY_U64)
        return fmt(tr, "(gkjit_cmp_i64_u64(%s, %s) %s 0)", a.text, b.text, c);
    if (a.type.kind == TY_U64 && b.type.kind == TY_I64)
        return fmt(tr, "(0 %s gkjit_cmp_i64_u64(%s, %s))", c, b.text, a.text);
    ty w = promote(a.type, b.type);
    return fmt(tr, "(%s %s %s)", as(tr, a, w), c, as(tr, b, w));
}

static int compare(translation *tr, scope *sc, PyObject *node, value *out)
{
    PyObject *left = field(node, "left"), *ops = field(node, "ops"),
             *rights = field(node, "comparators");
    value a;
    int status = left && ops && rights ? expr(tr, sc, left, &a) : -1;
    Py_ssize_t n = status == 0 ? PyList_GET_SIZE(ops) : 0;
    strbuf t = {0};
    for (Py_ssize_t i = 0; status == 0 && i < n; i++) {
        value b;
        PyObject *right = PyList_GET_ITEM(rights, i);
        const char *c = compare_op(kind_of(PyList_GET_ITEM(ops, i)));
        status = expr(tr, sc, right, &b);
        if (status == 0 && !c)
            status = unsupported(sc, node, fmt(tr, "the comparison %s",
                                              kind_of(PyList_GET_ITEM(ops, i))));
        if (status == 0 && (!is_number(a.type) || !is_number(b.type)))
            status = fail(sc, node, PyExc_TypeError, "cannot compare %s and %s",
                          type_name(a.type), type_name(b.type));
        if (status == 0) {
            value next = b;
            if (i + 1 < n && !is(right, "Name") && !is(right, "Constant")) {
                next.text = hidden_local(tr, sc, b.type);
                b.text = fmt(tr, "(%s = %s)", next.text, b.text);
            }
            text_add(&t, "%s%s", i ? " && " : "(", comparison(tr, a, c, b));
            a = next;
        }
    }
    text_add(&t, ")");
    Py_XDECREF(left);
    Py_XDECREF(ops);
    Py_XDECREF(rights);
    out->type = scalar(TY_BOOL);
    out->text = keep(tr, t.data);
    return status;
}

/* Whether a node is the literal 9223372036854775808 (2**63), which alone
 * does not fit in int64 but is -9223372036854775808 after a minus. */
static bool is_2_to_63(PyObject *node)
{
    PyObject *v = is(node, "Constant") ? field(node, "value") : NULL;
    bool yes = v && PyLong_CheckExact(v) &&
               PyLong_AsUnsignedLongLong(v) == (unsigned long long)1 << 63;
    Py_XDECREF(v);
    PyErr_Clear();
    return yes;
}

static int expr(translation *tr, scope *sc, PyObject *node, value *out)
{
    memset(out, 0, sizeof *out);
    const char *kind = kind_of(node);
    if (strcmp(kind, "Constant") == 0) {
        PyObject *v = field(node, "value");
        if (!v)
            return -1;
        int status = (PyBool_Check(v) || PyLong_Check(v) || PyFloat_Check(v))
                         ? object_value(tr, sc, node, v, out)
                         : unsupported(sc, node, "a constant that is not a bool, int or float");
        Py_DECREF(v);
        return status;
    }
    if (strcmp(kind, "Name") == 0)
        return name_value(tr, sc, node, out);
    if (strcmp(kind, "Attribute") == 0)
        return attribute(tr, sc, node, out);
    if (strcmp(kind, "Subscript") == 0)
        return subscript(tr, sc, node, out);
    if (strcmp(kind, "Call") == 0)
        return call(tr, sc, node, out);
    if (strcmp(kind, "BinOp") == 0) {
        PyObject *l = field(node, "left"), *r = field(node, "right"), *op = field(node, "op");
        value a, b;
        int status = l && r && op && expr(tr, sc, l, &a) == 0 && expr(tr, sc, r, &b) == 0
                         ? binary(tr, sc, node, kind_of(op), a, b, out)
                         : -1;
        Py_XDECREF(l);
        Py_XDECREF(r);
        Py_XDECREF(op);
        return status;
    }
    if (strcmp(kind, "UnaryOp") == 0) {
        PyObject *operand = field(node, "operand"), *op = field(node, "op");
        if (op && is(op, "USub") && is_2_to_63(operand)) {
            Py_DECREF(operand);
            Py_DECREF(op);
            PyObject *smallest = PyLong_FromLongLong(INT64_MIN);
            int status = smallest ? object_value(tr, sc, node, smallest, out) : -1;
            Py_XDECREF(smallest); /* a number's value is copied */
            return status;
        }
        value a;
        int status = operand && op ? expr(tr, sc, operand, &a) : -1;
        const char *o = op ? kind_of(op) : "";
        Py_XDECREF(operand);
        Py_XDECREF(op);
        if (status < 0)
            return -1;
        if (!is_number(a.type))
            return fail(sc, node, PyExc_TypeError, "unsupported operand type for %s: %s", o,
                        type_name(a.type));
        if (strcmp(o, "Not") == 0) {
            *out = number(tr, TY_BOOL, "(!%s)", truth(tr, a));
        } else {
            ty t = a.type.kind == TY_BOOL ? scalar(TY_I64) : a.type;
            if (strcmp(o, "Invert") == 0 && !is_integer(a.type))
                return fail(sc, node, PyExc_TypeError, "~ needs an integer");
            bool minus = strcmp(o, "USub") == 0;
            if (minus && t.kind == TY_I64) /* -INT64_MIN wraps, as NumPy's */
                *out = number(tr, t.kind, "((gk_i64)(0 - (gk_u64)(%s)))", as(tr, a, t));
            else
                *out = number(tr, t.kind, "(%s%s)",
                              minus ? "-" : strcmp(o, "Invert") == 0 ? "~" : "+", as(tr, a, t));
            if (a.constant && minus) {
                out->constant = true;
                out->number = (int64_t)(0 - (uint64_t)a.number);
            }
        }
        return 0;
    }
    if (strcmp(kind, "BoolOp") == 0)
        return bool_op(tr, sc, node, out);
    if (strcmp(kind, "Compare") == 0)
        return compare(tr, sc, node, out);
    if (strcmp(kind, "IfExp") == 0) {
        PyObject *test = field(node, "test"), *body = field(node, "body"),
                 *orelse = field(node, "orelse");
        value c, a, b;
        int status = test && body && orelse && expr(tr, sc, test, &c) == 0 &&
                             expr(tr, sc, body, &a) == 0 && expr(tr, sc, orelse, &b) == 0
                         ? 0
                         : -1;
        Py_XDECREF(test);
        Py_XDECREF(body);
        Py_XDECREF(orelse);
        if (status < 0)
            return -1;
        if (!is_number(a.type) || !is_number(b.type) || !is_number(c.type))
            return fail(sc, node, PyExc_TypeError, "a conditional expression of %s and %s",
                        type_name(a.type), type_name(b.type));
        ty w = promote(a.type, b.type);
        *out = number(tr, w.kind, "(%s ? %s : %s)", truth(tr, c), as(tr, a, w), as(tr, b, w));
        out->nonneg = a.nonneg && b.nonneg && is_integer(w);
        return 0;
    }
    if (strcmp(kind, "Tuple") == 0) {
        PyObject *items = field(node, "elts");
        if (!items)
            return -1;
        int n = (int)PyList_GET_SIZE(items);
        if (n > MAX_TUPLE) {
            Py_DECREF(items);
            return unsupported(sc, node, "a tuple of more than 8 items");
        }
        out->type = scalar(TY_TUPLE);
        out->count = n;
        out->items = calloc((size_t)n + 1, sizeof *out->items);
        keep(tr, (char *)out->items);
        int status = 0;
        for (int i = 0; status == 0 && i < n; i++)
            status = expr(tr, sc, PyList_GET_ITEM(items, i), &out->items[i]);
        Py_DECREF(items);
        return status;
    }
    return unsupported(sc, node, fmt(tr, "the expression %s", kind));
}

/* ---- statements ---------------------------------------------------------- */

/* `v` kept in temporaries (a number, or each number of a tuple), so that
 * assigning it to several targets evaluates it once; constants stay. */
static value evaluated_once(translation *tr, scope *sc, value v)
{
    if (is_number(v.type) && !v.constant) {
        const char *name = fmt(tr, "gkjit_t%d", sc->temp++);
        line(sc, "%s %s = %s;", c_type(v.type), name, v.text);
        v.text = name;
    } else if (v.type.kind == TY_TUPLE) {
        value *items = calloc((size_t)v.count + 1, sizeof *items);
        keep(tr, (char *)items);
        for (int i = 0; items && i < v.count; i++)
            items[i] = evaluated_once(tr, sc, v.items[i]);
        v.items = items ? items : v.items;
    }
    return v;
}

/* The array and the offset of the element a Subscript target names. */
static int target_element(translation *tr, scope *sc, PyObject *target, value *array,
                          const char **at)
{
    PyObject *base_node = field(target, "value"), *index = field(target, "slice");
    int status = base_node && index ? expr(tr, sc, base_node, array) : -1;
    Py_XDECREF(base_node);
    if (status == 0 && array->type.kind != TY_ARRAY)
        status = fail(sc, target, PyExc_TypeError, "only array elements can be assigned, "
                                                   "not items of %s",
                      type_name(array->type));
    if (status == 0)
        status = check_writable(sc, target, *array);
    if (status == 0)
        status = element_offset(tr, sc, target, *array, index, at);
    Py_XDECREF(index);
    return status;
}

/* Assigns `v` to the target node (a name, an element, or a tuple of them). */
static int assign(translation *tr, scope *sc, PyObject *target, value v)
{
    if (is(target, "Name")) {
        PyObject *id = field(target, "id");
        const char *name = id ? PyUnicode_AsUTF8(id) : NULL;
        if (!name) {
            Py_XDECREF(id);
            return -1;
        }
        if (v.type.kind == TY_ARRAY && !v.type.shared) {
            Py_DECREF(id);
            return unsupported(sc, target, "giving an array argument another name");
        }
        if (v.type.kind == TY_TUPLE || v.type.kind == TY_OBJECT || v.type.kind == TY_NONE) {
            Py_DECREF(id);
            return fail(sc, target, PyExc_TypeError,
                        "variable '%s' cannot hold %s (unpack tuples: x, y = grid(2))", name,
                        type_name(v.type));
        }
        variable *var = assign_var(sc, target, name, v.type, v.nonneg);
        Py_DECREF(id);
        if (!var)
            return -1;
        if (v.type.kind == TY_ARRAY) {
            /* A shared array: the variable names its storage. */
            line(sc, "#define v_%s %s", var->name, v.text);
            return 0;
        }
        line(sc, "v_%s = %s;", var->name, as(tr, v, var->type));
        return 0;
    }
    if (is(target, "Subscript")) {
        value base;
        const char *at = NULL;
        int status = target_element(tr, sc, target, &base, &at);
        if (status == 0 && !is_number(v.type))
            status = fail(sc, target, PyExc_TypeError, "an array element cannot hold %s",
                          type_name(v.type));
        if (status == 0)
            line(sc, "%s", store(tr, base.type.dtype, fmt(tr, "%s[%s]", base.text, at), v));
        return status;
    }
    if (is(target, "Tuple") || is(target, "List")) {
        PyObject *items = field(target, "elts");
        if (!items)
            return -1;
        int n = (int)PyList_GET_SIZE(items);
        int status = 0;
        if (v.type.kind != TY_TUPLE || v.count != n)
            status = fail(sc, target, PyExc_TypeError,
                          "cannot unpack %s into %d names", v.type.kind == TY_TUPLE
                              ? fmt(tr, "a tuple of %d", v.count) : type_name(v.type), n);
        for (int i = 0; status == 0 && i < n; i++)
            if (!is_number(v.items[i].type))
                status = fail(sc, target, PyExc_TypeError, "only numbers can be unpacked");
        /* Through temporaries, so `a, b = b, a` swaps. */
        if (status == 0)
            v = evaluated_once(tr, sc, v);
        for (int i = 0; status == 0 && i < n; i++)
            status = assign(tr, sc, PyList_GET_ITEM(items, i), v.items[i]);
        Py_DECREF(items);
        return status;
    }
    return unsupported(sc, target, fmt(tr, "assigning to %s", kind_of(target)));
}

static int block(translation *tr, scope *sc, PyObject *node, const char *name)
{
    PyObject *body = field(node, name);
    if (!body)
        return -1;
    sc->indent++;
    int status = statements(tr, sc, body);
    sc->indent--;
    Py_DECREF(body);
    return status;
}

static bool has_items(PyObject *node, const char *name)
{
    PyObject *list = field(node, name);
    bool any = list && PyList_Check(list) && PyList_GET_SIZE(list) > 0;
    Py_XDECREF(list);
    PyErr_Clear();
    return any;
}

/* for NAME in range(...): a hidden counter, so the variable keeps the
 * last value it took, as in Python. */
static int for_range(translation *tr, scope *sc, PyObject *node)
{
    if (has_items(node, "orelse"))
        return unsupported(sc, node, "for ... else");
    PyObject *target = field(node, "target"), *iter = field(node, "iter");
    int status = target && iter ? 0 : -1;
    value callee;
    PyObject *func = status == 0 && is(iter, "Call") ? field(iter, "func") : NULL;
    if (status == 0 && (!func || expr(tr, sc, func, &callee) < 0 ||
                        callee.type.kind != TY_OBJECT ||
                        !intrinsic_of(tr, callee.object) ||
                        strcmp(intrinsic_of(tr, callee.object), "range") != 0)) {
        PyErr_Clear();
        status = unsupported(sc, iter, "a for loop over anything but range()");
    }
    Py_XDECREF(func);
    value args[3];
    int count = 0;
    if (status == 0)
        status = call_args(tr, sc, iter, args, 3, &count, NULL);
    if (status == 0 && count == 0)
        status = fail(sc, iter, PyExc_TypeError, "range() takes 1 to 3 integers");
    for (int i = 0; status == 0 && i < count; i++)
        if (!is_integer(args[i].type))
            status = fail(sc, iter, PyExc_TypeError, "range() takes integers, not %s",
                          type_name(args[i].type));
    if (status == 0 && !is(target, "Name"))
        status = unsupported(sc, target, "a for loop target that is not a name");
    /* Python raises where the loop starts; here it would never end. */
    if (status == 0 && count == 3 && args[2].constant && args[2].number == 0)
        status = fail(sc, iter, PyExc_ValueError, "range() arg 3 must not be zero");
    if (status == 0) {
        ty t = scalar(TY_I64);
        value start = count >= 2 ? args[0] : number(tr, TY_I64, "0");
        value stop = count >= 2 ? args[1] : args[0];
        value step = count == 3 ? args[2] : number(tr, TY_I64, "1");
        if (count < 3)
            step.constant = true, step.number = 1;

        if (count < 2)
            start.nonneg = true;
        int k = sc->temp++;
        line(sc, "{");
        sc->indent++;
        line(sc, "gk_i64 gkjit_stop%d = %s, gkjit_step%d = %s;", k, as(tr, stop, t), k,
             as(tr, step, t));
        const char *condition =
            step.constant ? fmt(tr, "gkjit_i%d %s gkjit_stop%d", k, step.number > 0 ? "<" : ">", k)
                          : fmt(tr, "(gkjit_step%d > 0 ? gkjit_i%d < gkjit_stop%d : "
                                    "gkjit_step%d < 0 && gkjit_i%d > gkjit_stop%d)",
                                k, k, k, k, k, k);
        line(sc, "for (gk_i64 gkjit_i%d = %s; %s; gkjit_i%d += gkjit_step%d) {", k,
             as(tr, start, t), condition, k, k);
        sc->indent++;
        value counter = number(tr, TY_I64, "gkjit_i%d", k);
        counter.nonneg = start.nonneg && step.constant && step.number > 0;
        status = assign(tr, sc, target, counter);
        sc->indent--;
        if (status == 0)
            status = block(tr, sc, node, "body");
        line(sc, "}");
        sc->indent--;
        line(sc, "}");
    }
    Py_XDECREF(target);
    Py_XDECREF(iter);
    return status;
}

/* target op= value. An element's index is computed once (it may have
 * side effects: out[atomic.add(c, 0, 1)] += 1) and the element read
 * before the value is computed, as Python does. */
static int aug_assign(translation *tr, scope *sc, PyObject *node)
{
    PyObject *target = field(node, "target"), *op = field(node, "op"), *v = field(node, "value");
    value current, change, result, array;
    const char *at, *lvalue = NULL;
    int status = target && op && v ? 0 : -1;
    if (status == 0 && is(target, "Subscript")) {
        status = target_element(tr, sc, target, &array, &at);
        if (status == 0) {
            const char *offset = fmt(tr, "gkjit_t%d", sc->temp++);
            line(sc, "gk_i64 %s = %s;", offset, at);
            lvalue = fmt(tr, "%s[%s]", array.text, offset);
            current = evaluated_once(tr, sc, load(tr, array.type.dtype, lvalue));
        }
    } else if (status == 0) {
        status = expr(tr, sc, target, &current);
    }
    if (status == 0)
        status = expr(tr, sc, v, &change) == 0 &&
                         binary(tr, sc, node, kind_of(op), current, change, &result) == 0
                     ? 0
                     : -1;
    if (status == 0 && lvalue)
        line(sc, "%s", store(tr, array.type.dtype, lvalue, result));
    else if (status == 0)
        status = assign(tr, sc, target, result);
    Py_XDECREF(target);
    Py_XDECREF(op);
    Py_XDECREF(v);
    return status;
}

static int statement(translation *tr, scope *sc, PyObject *node)
{
    const char *kind = kind_of(node);
    if (strcmp(kind, "Assign") == 0) {
        PyObject *targets = field(node, "targets"), *v = field(node, "value");
        value val;
        int status = targets && v ? expr(tr, sc, v, &val) : -1;
        /* x = y = f(): f() runs once, then each target gets its value. */
        if (status == 0 && PyList_GET_SIZE(targets) > 1)
            val = evaluated_once(tr, sc, val);
        for (Py_ssize_t i = 0; status == 0 && i < PyList_GET_SIZE(targets); i++)
            status = assign(tr, sc, PyList_GET_ITEM(targets, i), val);
        Py_XDECREF(targets);
        Py_XDECREF(v);
        return status;
    }
    if (strcmp(kind, "AugAssign") == 0)
        return aug_assign(tr, sc, node);
    if (strcmp(kind, "AnnAssign") == 0) {
        PyObject *target = field(node, "target"), *v = field(node, "value");
        value val;
        int status = target && v && v != Py_None && expr(tr, sc, v, &val) == 0
                         ? assign(tr, sc, target, val)
                         : (v == Py_None ? unsupported(sc, node, "a declaration without a value")
                                         : -1);
        Py_XDECREF(target);
        Py_XDECREF(v);
        return status;
    }
    if (strcmp(kind, "If") == 0) {
        PyObject *test = field(node, "test");
        value c;
        int status = test ? expr(tr, sc, test, &c) : -1;
        Py_XDECREF(test);
        if (status == 0 && !is_number(c.type))
            status = fail(sc, node, PyExc_TypeError, "if needs a number or bool, not %s",
                          type_name(c.type));
        if (status < 0)
            return -1;
        line(sc, "if (%s) {", truth(tr, c));
        status = block(tr, sc, node, "body");
        if (status == 0 && has_items(node, "orelse")) {
            line(sc, "} else {");
            status = block(tr, sc, node, "orelse");
        }
        line(sc, "}");
        return status;
    }
    if (strcmp(kind, "While") == 0) {
        if (has_items(node, "orelse"))
            return unsupported(sc, node, "while ... else");
        PyObject *test = field(node, "test");
        value c;
        int status = test ? expr(tr, sc, test, &c) : -1;
        Py_XDECREF(test);
        if (status == 0 && !is_number(c.type))
            status = fail(sc, node, PyExc_TypeError, "while needs a number or bool");
        if (status < 0)
            return -1;
        line(sc, "while (%s) {", truth(tr, c));
        status = block(tr, sc, node, "body");
        line(sc, "}");
        return status;
    }
    if (strcmp(kind, "For") == 0)
        return for_range(tr, sc, node);
    if (strcmp(kind, "Break") == 0 || strcmp(kind, "Continue") == 0) {
        line(sc, "%s;", kind[0] == 'B' ? "break" : "continue");
        return 0;
    }
    if (strcmp(kind, "Pass") == 0)
        return 0;
    if (strcmp(kind, "Return") == 0) {
        PyObject *v = field(node, "value");
        if (!v)
            return -1;
        int status = 0;
        if (v == Py_None) {
            if (!sc->is_kernel && sc->has_result && sc->result.kind != TY_NONE)
                status = fail(sc, node, PyExc_TypeError, "a bare return beside return VALUE");
            else
                line(sc, "return;");
            sc->has_result = true;
        } else if (sc->is_kernel) {
            status = fail(sc, node, PyExc_TypeError, "a kernel returns nothing; write results "
                                                     "into an array");
        } else {
            value r;
            status = expr(tr, sc, v, &r);
            if (status == 0 && !is_number(r.type))
                status = fail(sc, node, PyExc_TypeError, "a device function returns numbers, "
                                                         "not %s",
                              type_name(r.type));
            if (status == 0) {
                if (!sc->has_result || promote(sc->result, r.type).kind != sc->result.kind) {
                    sc->result = sc->has_result ? promote(sc->result, r.type) : r.type;
                    sc->widened = true;
                }
                sc->has_result = true;
                line(sc, "return %s;", as(tr, r, sc->result));
            }
        }
        Py_DECREF(v);
        return status;
    }
    if (strcmp(kind, "Expr") == 0) {
        PyObject *v = field(node, "value");
        if (!v)
            return -1;
        int status = 0;
        if (is(v, "Constant")) { /* a docstring */
            Py_DECREF(v);
            return 0;
        }
        value val;
        status = expr(tr, sc, v, &val);
        Py_DECREF(v);
        if (status == 0 && val.text && *val.text)
            line(sc, "%s;", val.text);
        return status;
    }
    static const struct { const char *kind, *what; } names[] = {
        {"With", "a with statement"}, {"Try", "try/except"}, {"Raise", "raise"},
        {"Assert", "assert"}, {"Global", "global"}, {"Nonlocal", "nonlocal"},
        {"Delete", "del"}, {"Import", "import"}, {"ImportFrom", "import"},
        {"FunctionDef", "a nested function"}, {"ClassDef", "a class"},
        {"AsyncFunctionDef", "async def"}, {"Match", "match"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(kind, names[i].kind) == 0)
            return unsupported(sc, node, names[i].what);
    return unsupported(sc, node, fmt(tr, "the statement %s", kind));
}

static int statements(translation *tr, scope *sc, PyObject *list)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++)
        if (statement(tr, sc, PyList_GET_ITEM(list, i)) < 0)
            return -1;
    return 0;
}

/* ---- functions ----------------------------------------------------------- */

/* The FunctionDef of a Python function, parsed from its source (new
 * reference), with the scope's file, line and names filled in. */
static PyObject *parse_function(scope *sc)
{
    PyObject *code = PyObject_GetAttrString(sc->function, "__code__");
    PyObject *filename = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
    PyObject *first = code ? PyObject_GetAttrString(code, "co_firstlineno") : NULL;
    PyObject *qualname = PyObject_GetAttrString(sc->function, "__qualname__");
    sc->filename = filename ? PyUnicode_AsUTF8(filename) : "<unknown>";
    sc->first_line = first ? (int)PyLong_AsLong(first) : 1;
    snprintf(sc->qualname, sizeof sc->qualname, "%s",
             qualname ? PyUnicode_AsUTF8(qualname) : "?");
    /* The filename's text lives in the code object, which the function keeps. */
    Py_XDECREF(filename);
    Py_XDECREF(first);
    Py_XDECREF(qualname);
    sc->globals = PyFunction_Check(sc->function) ? PyFunction_GET_GLOBALS(sc->function) : NULL;
    sc->closure = PyFunction_Check(sc->function) ? PyFunction_GET_CLOSURE(sc->function) : NULL;
    /* Kept until the scope is freed: since Python 3.11 nothing else holds
     * this tuple. */
    sc->freevars = code ? PyObject_GetAttrString(code, "co_freevars") : NULL;
    Py_XDECREF(code);
    if (!sc->globals) {
        PyErr_Format(PyExc_TypeError, "@gpukit.jit needs a Python function, not %R", sc->function);
        return NULL;
    }
    PyObject *inspect = PyImport_ImportModule("inspect");
    PyObject *textwrap = PyImport_ImportModule("textwrap");
    PyObject *ast = PyImport_ImportModule("ast");
    PyObject *source = inspect ? PyObject_CallMethod(inspect, "getsource", "O", sc->function) : NULL;
    /* A kernel sent by value to another process (a Dask worker) brings its
     * source along (jit.c's reduce_by_name), where no file holds it. */
    if (!source && PyErr_ExceptionMatches(PyExc_OSError)) {
        PyErr_Clear();
        source = PyObject_GetAttrString(sc->function, "__gpukit_source__");
        if (source && !PyUnicode_Check(source))
            Py_CLEAR(source);
        if (!source)
            PyErr_SetNone(PyExc_OSError);
    }
    if (!source && PyErr_ExceptionMatches(PyExc_OSError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "@gpukit.jit cannot read the source of '%s' (defined in %s): kernels must "
                     "be defined in a file or a notebook cell, not typed at the plain "
                     "interpreter prompt or made by exec()",
                     sc->qualname, sc->filename);
    }
    PyObject *dedented = source && textwrap ? PyObject_CallMethod(textwrap, "dedent", "O", source)
                                            : NULL;
    PyObject *tree = dedented && ast ? PyObject_CallMethod(ast, "parse", "O", dedented) : NULL;
    PyObject *body = tree ? PyObject_GetAttrString(tree, "body") : NULL;
    PyObject *def = body && PyList_GET_SIZE(body) > 0 ? Py_NewRef(PyList_GET_ITEM(body, 0)) : NULL;
    Py_XDECREF(inspect);
    Py_XDECREF(textwrap);
    Py_XDECREF(ast);
    Py_XDECREF(source);
    Py_XDECREF(dedented);
    Py_XDECREF(tree);
    Py_XDECREF(body);
    if (def && !is(def, "FunctionDef")) {
        Py_DECREF(def);
        PyErr_Format(PyExc_NotImplementedError,
                     "%s:%d: only functions defined with def can be gpukit kernels", sc->filename,
                     sc->first_line);
        return NULL;
    }
    return def;
}

/* Whether a statement list (or an If's branches) holds a break outside
 * any inner loop. */
static bool breaks(PyObject *list)
{
    bool found = false;
    for (Py_ssize_t i = 0; list && !found && i < PyList_GET_SIZE(list); i++) {
        PyObject *s = PyList_GET_ITEM(list, i);
        if (is(s, "Break"))
            return true;
        if (is(s, "If")) {
            PyObject *body = field(s, "body"), *orelse = field(s, "orelse");
            found = breaks(body) || breaks(orelse);
            Py_XDECREF(body);
            Py_XDECREF(orelse);
        }
    }
    return found;
}

/* Whether running a statement list always ends in a return: a return, an
 * if whose branches both do, or a `while True:` it cannot break out of. */
static bool always_returns(PyObject *list)
{
    bool returns = false;
    for (Py_ssize_t i = 0; list && !returns && i < PyList_GET_SIZE(list); i++) {
        PyObject *s = PyList_GET_ITEM(list, i);
        PyObject *a = NULL, *b = NULL;
        if (is(s, "Return")) {
            returns = true;
        } else if (is(s, "If")) {
            a = field(s, "body"), b = field(s, "orelse");
            returns = always_returns(a) && always_returns(b);
        } else if (is(s, "While")) {
            a = field(s, "test"), b = field(s, "body");
            PyObject *v = is(a, "Constant") ? field(a, "value") : NULL;
            returns = v && PyObject_IsTrue(v) == 1 && !breaks(b);
            Py_XDECREF(v);
        }
        Py_XDECREF(a);
        Py_XDECREF(b);
    }
    PyErr_Clear();
    return returns;
}

/* Translates one function (kernel or device function) into tr's output. */
static int translate_function(translation *tr, scope *sc, int nargs, const ty *params,
                              const char *c_name)
{
    PyObject *def = parse_function(sc);
    if (!def)
        return -1;
    PyObject *arguments = field(def, "args");
    PyObject *names = arguments ? field(arguments, "args") : NULL;
    int status = names ? 0 : -1;
    if (status == 0 && (has_items(arguments, "posonlyargs") || has_items(arguments, "kwonlyargs") ||
                        has_items(arguments, "defaults"))) {
        status = unsupported(sc, def, "default, keyword-only or positional-only parameters");
    }
    PyObject *vararg = status == 0 ? field(arguments, "vararg") : NULL;
    PyObject *kwarg = status == 0 ? field(arguments, "kwarg") : NULL;
    if (status == 0 && (vararg != Py_None || kwarg != Py_None))
        status = unsupported(sc, def, "*args or **kwargs");
    Py_XDECREF(vararg);
    Py_XDECREF(kwarg);
    if (status == 0 && PyList_GET_SIZE(names) != nargs)
        status = fail(sc, def, PyExc_TypeError, "'%s' takes %d argument%s but %d were given",
                      sc->qualname, (int)PyList_GET_SIZE(names),
                      PyList_GET_SIZE(names) == 1 ? "" : "s", nargs);

    /* Passes until no variable's type widens. */
    strbuf signature = {0};
    for (int pass = 0; status == 0; pass++) {
        for (int v = 0; v < sc->var_count; v++)
            sc->vars[v].assigned = false;
        free(sc->body.data);
        free(sc->shared_decls.data);
        free(sc->hidden_decls.data);
        free(signature.data);
        memset(&sc->body, 0, sizeof sc->body);
        memset(&sc->shared_decls, 0, sizeof sc->shared_decls);
        memset(&sc->hidden_decls, 0, sizeof sc->hidden_decls);
        memset(&signature, 0, sizeof signature);
        sc->widened = false;
        drop_deferred(sc);
        sc->temp = 0;
        sc->indent = 0;
        for (int i = 0; status == 0 && i < nargs; i++) {
            PyObject *arg = PyList_GET_ITEM(names, i);
            PyObject *id = field(arg, "arg");
            const char *name = id ? PyUnicode_AsUTF8(id) : NULL;
            variable *v = name ? assign_var(sc, arg, name, params[i],
                                            params[i].kind == TY_U64) : NULL;
            Py_XDECREF(id);
            if (!v) {
                status = -1;
                break;
            }
            if (params[i].kind == TY_ARRAY)
                text_add(&signature, "%sGK_GLOBAL %s *v_%s, gk_view w_%s", i ? ", " : "",
                         storage_type(params[i].dtype), v->name, v->name);
            else
                text_add(&signature, "%s%s a_%s", i ? ", " : "", c_type(params[i]), v->name);
        }
        bool argument_widened = false;
        for (int i = 0; i < nargs && status == 0; i++)
            argument_widened |= sc->vars[i].type.kind != params[i].kind;
        if (status == 0 && argument_widened)
            status = fail(sc, def, PyExc_TypeError,
                          "an argument changes type in the body; assign to a new variable");
        sc->widened = false;
        if (status == 0)
            status = block(tr, sc, def, "body") < 0 ? -1 : 0;
        /* Scalar arguments arrive as a_* and live in variables that may
         * be assigned; locals are declared once at the top. */
        /* A device call that failed stands unless the pass is redone; it
         * came before any later error, which its stand-in value may cause. */
        if (sc->deferred_type && (status < 0 || !sc->widened)) {
            PyErr_Clear();
            PyErr_Restore(sc->deferred_type, sc->deferred_value, sc->deferred_traceback);
            sc->deferred_type = sc->deferred_value = sc->deferred_traceback = NULL;
            status = -1;
        }
        if (status == 0 && !sc->widened)
            break;
        if (status == 0 && pass == MAX_PASSES)
            status = fail(sc, def, PyExc_TypeError, "the variables' types do not settle");
    }
    /* Python would return None there, which no number type holds; C would
     * return garbage. */
    PyObject *body = status == 0 && sc->has_result && sc->result.kind != TY_NONE
                         ? field(def, "body")
                         : NULL;
    if (body && !always_returns(body))
        status = fail(sc, def, PyExc_TypeError,
                      "a device function that returns a value must return one on every path "
                      "(it can reach its end)");
    Py_XDECREF(body);
    if (status == 0) {
        strbuf *out = &tr->device_text;
        if (sc->is_kernel)
            text_add(out, "GK_KERNEL void %s(%s)\n{\n", c_name,
                     signature.data ? signature.data : "");
        else
            text_add(out, "GK_DEVICE_FN %s %s(%s)\n{\n",
                     sc->has_result ? c_type(sc->result) : "void", c_name,
                     signature.data ? signature.data : "");
        if (sc->shared_decls.data)
            text_add(out, "%s", sc->shared_decls.data);
        if (sc->hidden_decls.data)
            text_add(out, "%s", sc->hidden_decls.data);
        for (int v = 0; v < sc->var_count; v++) {
            ty t = sc->vars[v].type;
            if (t.kind == TY_ARRAY)
                continue;
            if (v < nargs)
                text_add(out, "    %s v_%s = a_%s;\n", c_type(t), sc->vars[v].name,
                         sc->vars[v].name);
            else
                text_add(out, "    %s v_%s = 0;\n", c_type(t), sc->vars[v].name);
        }
        text_add(out, "%s", sc->body.data ? sc->body.data : "");
        /* Shared arrays' names were macros inside this function only. */
        for (int v = nargs; v < sc->var_count; v++)
            if (sc->vars[v].type.kind == TY_ARRAY)
                text_add(out, "#undef v_%s\n", sc->vars[v].name);
        text_add(out, "}\n\n");
        if (out->failed)
            status = (PyErr_NoMemory(), -1);
    }
    free(signature.data);
    Py_XDECREF(names);
    Py_XDECREF(arguments);
    Py_DECREF(def);
    return status;
}

/* The intrinsics table: gpukit.jit's _INTRINSICS maps names to objects;
 * the math module's functions and a few builtins join it by identity. */
PyObject *gkpy_jit_intrinsics(void)
{
    PyObject *table = PyDict_New();
    PyObject *jit = PyImport_ImportModule("gpukit._jit");
    PyObject *named = jit ? PyObject_GetAttrString(jit, "_INTRINSICS") : NULL;
    PyObject *math = PyImport_ImportModule("math");
    PyObject *builtins = PyImport_ImportModule("builtins");
    int status = table && named && PyDict_Check(named) && math && builtins ? 0 : -1;
    PyObject *key, *object;
    Py_ssize_t pos = 0;
    while (status == 0 && PyDict_Next(named, &pos, &key, &object)) {
        PyObject *id = PyLong_FromVoidPtr(object);
        status = id ? PyDict_SetItem(table, id, key) : -1;
        Py_XDECREF(id);
    }
    static const char *const math_names[] = {
        "sqrt", "exp", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
        "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "fabs", "erf",
        "erfc", "gamma", "lgamma", "floor", "ceil", "trunc", "atan2", "pow", "hypot",
        "copysign", "fmod", "isnan", "isinf", "isfinite",
    };
    static const char *const builtin_names[] = {"min", "max", "abs", "int", "float", "bool", "range"};
    for (size_t i = 0; status == 0 && i < sizeof math_names / sizeof *math_names; i++) {
        PyObject *f = PyObject_GetAttrString(math, math_names[i]);
        PyObject *id = f ? PyLong_FromVoidPtr(f) : NULL;
        PyObject *name = PyUnicode_FromFormat("math.%s", math_names[i]);
        status = id && name ? PyDict_SetItem(table, id, name) : -1;
        Py_XDECREF(f);
        Py_XDECREF(id);
        Py_XDECREF(name);
    }
    for (size_t i = 0; status == 0 && i < sizeof builtin_names / sizeof *builtin_names; i++) {
        PyObject *f = PyObject_GetAttrString(builtins, builtin_names[i]);
        PyObject *id = f ? PyLong_FromVoidPtr(f) : NULL;
        PyObject *name = PyUnicode_FromString(builtin_names[i]);
        status = id && name ? PyDict_SetItem(table, id, name) : -1;
        Py_XDECREF(f);
        Py_XDECREF(id);
        Py_XDECREF(name);
    }
    Py_XDECREF(jit);
    Py_XDECREF(named);
    Py_XDECREF(math);
    Py_XDECREF(builtins);
    if (status < 0)
        Py_CLEAR(table);
    return table;
}

/* gkjitk_, not gkjit_: the prelude's helpers and the device functions are
 * gkjit_*, so a kernel named wrap or device_1 would redefine one. */
void gkpy_jit_kernel_name(PyObject *function, char *kernel_name)
{
    PyObject *name = PyObject_GetAttrString(function, "__name__");
    const char *text = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    snprintf(kernel_name, 80, "gkjitk_%.60s", text ? text : "kernel");
    Py_XDECREF(name);
    PyErr_Clear();
}

/* The type of each argument; TypeError for an array of a dtype kernels do
 * not take. */
static int param_types(int nargs, const jit_arg_type *args, ty *params)
{
    if (nargs > 64) {
        PyErr_SetString(PyExc_TypeError, "a gpukit kernel takes at most 64 arguments");
        return -1;
    }
    for (int i = 0; i < nargs; i++) {
        memset(&params[i], 0, sizeof params[i]);
        switch (args[i].kind) {
        case JIT_ARG_ARRAY:
            params[i].kind = TY_ARRAY;
            params[i].dtype = args[i].dtype;
            params[i].ndim = args[i].ndim;
            params[i].contiguous = args[i].contiguous;
            params[i].read_only = args[i].read_only;
            if (!storage_type(args[i].dtype)) {
                PyErr_Format(PyExc_TypeError,
                             "argument %d is a %s array; gpukit kernels take bool, integer and "
                             "real arrays",
                             i, gk_dtype_name(args[i].dtype));
                return -1;
            }
            break;
        case JIT_ARG_INT:
            params[i].kind = args[i].dtype == GK_UINT64 ? TY_U64 : TY_I64;
            break;
        case JIT_ARG_FLOAT:
            params[i].kind = args[i].dtype == GK_FLOAT32 ? TY_F32 : TY_F64;
            break;
        case JIT_ARG_BOOL:
            params[i].kind = TY_BOOL;
            break;
        }
    }
    return 0;
}

/* The elementwise kernel `name` over vectorize's scalar function `fn`:
 * every operand a buffer and a gk_view of the output's shape (the inputs
 * broadcast to it), one element per index of a grid-stride loop. */
static void vectorize_kernel(translation *tr, strbuf *out, const char *name, const char *fn,
                             int nin, const gk_dtype *in, gk_dtype result)
{
    text_add(out, "GK_KERNEL void %s(GK_GLOBAL %s *out, gk_view out_v", name,
             storage_type(result));
    for (int k = 0; k < nin; k++)
        text_add(out, ", GK_GLOBAL %s *in%d, gk_view in%d_v", storage_type(in[k]), k, k);
    text_add(out, ")\n{\n    GK_FOR_EACH_INDEX(i, out_v.size) {\n"
                  "        gk_i64 rest = i, at = out_v.offset");
    for (int k = 0; k < nin; k++)
        text_add(out, ", at%d = in%d_v.offset", k, k);
    text_add(out, ";\n        for (int d = (int)out_v.ndim - 1; d >= 0; d--) {\n"
                  "            gk_i64 c = rest %% out_v.shape[d];\n"
                  "            rest /= out_v.shape[d];\n"
                  "            at += c * out_v.strides[d];\n");
    for (int k = 0; k < nin; k++)
        text_add(out, "            at%d += c * in%d_v.strides[d];\n", k, k);
    text_add(out, "        }\n");
    strbuf call = {0};
    text_add(&call, "%s(", fn);
    for (int k = 0; k < nin; k++)
        text_add(&call, "%s%s", k ? ", " : "", load(tr, in[k], fmt(tr, "in%d[at%d]", k, k)).text);
    text_add(&call, ")");
    value v = {.type = element_type(result), .text = keep(tr, call.data)};
    text_add(out, "        %s\n    }\n}\n", store(tr, result, "out[at]", v));
}

/* The source of everything translated (and `vectorize` appended), or
 * NULL with an exception. `is_kernel`: `function` is the kernel `name`;
 * else a device function `name` whose type goes to *result. */
typedef struct vectorize_spec {
    int nin;
    const gk_dtype *in;
    gk_dtype *out; /* in: the declared result, or GK_DTYPE_COUNT to take the function's */
    const char *kernel_name;
} vectorize_spec;

static PyObject *translate_whole(PyObject *function, int nargs, const ty *params, bool is_kernel,
                                 const char *name, const vectorize_spec *vectorize,
                                 PyObject *reads)
{
    translation *tr = calloc(1, sizeof *tr);
    scope *sc = calloc(1, sizeof *sc);
    if (!tr || !sc) {
        free(tr);
        scope_free(sc);
        return PyErr_NoMemory();
    }
    tr->intrinsics = gkpy_jit_intrinsics();
    tr->reads = reads;
    sc->function = function;
    sc->path = reads ? PyTuple_New(0) : NULL;
    sc->is_kernel = is_kernel;
    PyObject *result = NULL;
    bool ready = tr->intrinsics && (!reads || sc->path);
    int status = ready ? translate_function(tr, sc, nargs, params, name) : -1;
    strbuf extra = {0};
    if (status == 0 && vectorize) {
        ty r = sc->has_result ? sc->result : scalar(TY_NONE);
        static const gk_dtype dtypes[] = {[TY_BOOL] = GK_BOOL, [TY_I64] = GK_INT64,
                                          [TY_U64] = GK_UINT64, [TY_F32] = GK_FLOAT32,
                                          [TY_F64] = GK_FLOAT64};
        if (!is_number(r)) {
            status = fail(sc, NULL, PyExc_TypeError,
                          "a vectorized function must return a number");
        } else {
            if (*vectorize->out == GK_DTYPE_COUNT)
                *vectorize->out = dtypes[r.kind];
            vectorize_kernel(tr, &extra, vectorize->kernel_name, name, vectorize->nin,
                             vectorize->in, *vectorize->out);
        }
    }
    if (status == 0) {
        strbuf all = {0};
        text_add(&all, "/* @gpukit.%s %s, from %s:%d */\n%s%s%s%s",
                 vectorize ? "vectorize" : "jit", sc->qualname, sc->filename, sc->first_line,
                 PRELUDE, tr->helpers.data ? tr->helpers.data : "",
                 tr->device_text.data ? tr->device_text.data : "", extra.data ? extra.data : "");
        result = all.failed ? PyErr_NoMemory() : PyUnicode_FromString(all.data ? all.data : "");
        free(all.data);
    }
    free(extra.data);
    Py_XDECREF(tr->intrinsics);
    for (size_t i = 0; i < tr->string_count; i++)
        free(tr->strings[i]);
    free(tr->strings);
    free(tr->helpers.data);
    free(tr->device_text.data);
    free(tr);
    scope_free(sc);
    return result;
}

PyObject *gkpy_jit_translate(PyObject *function, int nargs, const jit_arg_type *args,
                             char *kernel_name, PyObject *reads)
{
    ty params[64];
    if (param_types(nargs, args, params) < 0)
        return NULL;
    gkpy_jit_kernel_name(function, kernel_name);
    return translate_whole(function, nargs, params, true, kernel_name, NULL, reads);
}

PyObject *gkpy_jit_vectorize(PyObject *function, int nin, const gk_dtype *in, gk_dtype *out,
                             char *kernel_name)
{
    ty params[64];
    if (nin > 64) {
        PyErr_SetString(PyExc_TypeError, "a vectorized function takes at most 64 arguments");
        return NULL;
    }
    for (int k = 0; k < nin; k++) {
        if (!storage_type(in[k])) {
            PyErr_Format(PyExc_TypeError, "input %d is %s; vectorized functions take bool, "
                         "integer and real values", k, gk_dtype_name(in[k]));
            return NULL;
        }
        params[k] = element_type(in[k]);
    }
    if (*out != GK_DTYPE_COUNT && !storage_type(*out)) {
        PyErr_Format(PyExc_TypeError, "a vectorized function cannot return %s",
                     gk_dtype_name(*out));
        return NULL;
    }
    char name[96];
    gkpy_jit_kernel_name(function, kernel_name);
    snprintf(name, sizeof name, "%s_scalar", kernel_name);
    vectorize_spec spec = {nin, in, out, kernel_name};
    return translate_whole(function, nin, params, false, name, &spec, NULL);
}
