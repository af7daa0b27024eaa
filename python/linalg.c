/* The C halves of gpukit.linalg's factorizations (svd, svdvals, qr, solve,
 * inv, det, slogdet, cholesky, eigh, eigvalsh, eig, eigvals): one call of
 * libgpukit's compute/factor.c each, without the GIL. gpukit.linalg puts
 * the results in the standard's named tuples and parses the keywords;
 * these take their arguments by position. A singular matrix and the like
 * raise gpukit.linalg.LinAlgError (errors.c). */
#include "gkpy.h"

#define FASTCALL(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL

static gk_array *array_of(PyObject *object)
{
    return ((gkpy_array *)object)->array;
}

/* (first, second[, third]) from `count` gk_arrays, all or none; NULL with
 * the exception on failure (every part freed). */
static PyObject *array_tuple(gkpy_state *state, gk_status status, int count, gk_array **parts)
{
    if (status != GK_OK) {
        for (int i = 0; i < count; i++)
            gk_array_free(parts[i]);
        return gkpy_raise(state, status);
    }
    PyObject *tuple = PyTuple_New(count);
    for (int i = 0; i < count; i++) {
        PyObject *item = tuple ? gkpy_array_wrap(state, parts[i]) : NULL;
        if (!item) {
            for (int j = tuple ? i + 1 : i; j < count; j++)
                gk_array_free(parts[j]);
            Py_XDECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, i, item);
    }
    return tuple;
}

/* A factorization of one matrix argument (args[0]) with an int `flag`
 * (args[1] when `flagged`) into `count` results. */
typedef gk_status (*factor_call)(const gk_array *a, int flag, gk_array **parts);

static PyObject *factor(PyObject *module, PyObject *const *args, int flag, int count,
                        factor_call call)
{
    gkpy_state *state = gkpy_state_of_module(module);
    if (flag < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, args[0], NULL);
    if (!x)
        return NULL;
    gk_array *parts[3] = {NULL, NULL, NULL};
    gk_status status;
    GKPY_RUN(true, call(array_of(x), flag, parts));
    Py_DECREF(x);
    if (count == 1)
        return gkpy_array_result(state, status, parts[0]);
    return array_tuple(state, status, count, parts);
}

/* The calls, each as a factor_call. */
static gk_status call_svd(const gk_array *a, int full, gk_array **p)
{
    return gk_svd(a, full, &p[0], &p[1], &p[2]);
}
static gk_status call_svdvals(const gk_array *a, int flag, gk_array **p)
{
    (void)flag;
    return gk_svdvals(a, &p[0]);
}
static gk_status call_qr(const gk_array *a, int complete, gk_array **p)
{
    return gk_qr(a, complete, &p[0], &p[1]);
}
static gk_status call_inv(const gk_array *a, int flag, gk_array **p)
{
    (void)flag;
    return gk_inv(a, &p[0]);
}
static gk_status call_det(const gk_array *a, int flag, gk_array **p)
{
    (void)flag;
    return gk_det(a, &p[0]);
}
static gk_status call_slogdet(const gk_array *a, int flag, gk_array **p)
{
    (void)flag;
    return gk_slogdet(a, &p[0], &p[1]);
}
static gk_status call_cholesky(const gk_array *a, int upper, gk_array **p)
{
    return gk_cholesky(a, upper, &p[0]);
}
static gk_status call_eigh(const gk_array *a, int vectors, gk_array **p)
{
    return gk_eigh(a, &p[0], vectors ? &p[1] : NULL);
}
static gk_status call_eig(const gk_array *a, int vectors, gk_array **p)
{
    return gk_eig(a, &p[0], vectors ? &p[1] : NULL);
}

/* Functions of (x): inv, det, svdvals, slogdet, and the eigen-solvers with
 * and without vectors. */
#define ONE_ARG(name, flag, count, call)                                                           \
    static PyObject *fn_##name(PyObject *module, PyObject *const *args, Py_ssize_t nargs)         \
    {                                                                                              \
        if (gkpy_expect_args("_" #name, nargs, 1) < 0)                                             \
            return NULL;                                                                           \
        return factor(module, args, flag, count, call);                            \
    }
ONE_ARG(linalg_svdvals, 0, 1, call_svdvals)
ONE_ARG(linalg_inv, 0, 1, call_inv)
ONE_ARG(linalg_det, 0, 1, call_det)
ONE_ARG(linalg_slogdet, 0, 2, call_slogdet)
ONE_ARG(linalg_eigh, 1, 2, call_eigh)
ONE_ARG(linalg_eigvalsh, 0, 1, call_eigh)
ONE_ARG(linalg_eig, 1, 2, call_eig)
ONE_ARG(linalg_eigvals, 0, 1, call_eig)

/* Functions of (x, flag) whose flag is a truth value: svd's full_matrices,
 * cholesky's upper. */
#define TRUTH_ARG(name, count, call)                                                               \
    static PyObject *fn_##name(PyObject *module, PyObject *const *args, Py_ssize_t nargs)         \
    {                                                                                              \
        if (gkpy_expect_args("_" #name, nargs, 2) < 0)                                             \
            return NULL;                                                                           \
        return factor(module, args, PyObject_IsTrue(args[1]), count, call);          \
    }
TRUTH_ARG(linalg_svd, 3, call_svd)
TRUTH_ARG(linalg_cholesky, 1, call_cholesky)

/* _linalg_qr(x, mode): mode 'reduced' or 'complete'. */
static PyObject *fn_linalg_qr(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (gkpy_expect_args("_linalg_qr", nargs, 2) < 0)
        return NULL;
    int complete = -1;
    if (PyUnicode_Check(args[1]) && PyUnicode_CompareWithASCIIString(args[1], "complete") == 0)
        complete = 1;
    else if (PyUnicode_Check(args[1]) &&
             PyUnicode_CompareWithASCIIString(args[1], "reduced") == 0)
        complete = 0;
    else
        PyErr_Format(PyExc_ValueError, "qr: mode is %R; it must be 'reduced' or 'complete'",
                     args[1]);
    return factor(module, args, complete, 2, call_qr);
}

/* _linalg_solve(x1, x2): x1 and x2 on one device (the first Array's;
 * without one, the default device). */
static PyObject *fn_linalg_solve(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    if (gkpy_expect_args("_linalg_solve", nargs, 2) < 0)
        return NULL;
    PyObject *pair[2];
    if (gkpy_as_pair(state, args[0], args[1], pair) < 0)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(true, gk_solve(array_of(pair[0]), array_of(pair[1]), &out));
    Py_DECREF(pair[0]);
    Py_DECREF(pair[1]);
    return gkpy_array_result(state, status, out);
}

static PyMethodDef linalg_functions[] = {
    {"_linalg_svd", FASTCALL(fn_linalg_svd),
     "_linalg_svd(x, full_matrices, /)\n--\n\nThe C half of gpukit.linalg.svd: (U, S, Vh)."},
    {"_linalg_svdvals", FASTCALL(fn_linalg_svdvals),
     "_linalg_svdvals(x, /)\n--\n\nThe C half of gpukit.linalg.svdvals."},
    {"_linalg_qr", FASTCALL(fn_linalg_qr),
     "_linalg_qr(x, mode, /)\n--\n\nThe C half of gpukit.linalg.qr: (Q, R)."},
    {"_linalg_solve", FASTCALL(fn_linalg_solve),
     "_linalg_solve(x1, x2, /)\n--\n\nThe C half of gpukit.linalg.solve."},
    {"_linalg_inv", FASTCALL(fn_linalg_inv),
     "_linalg_inv(x, /)\n--\n\nThe C half of gpukit.linalg.inv."},
    {"_linalg_det", FASTCALL(fn_linalg_det),
     "_linalg_det(x, /)\n--\n\nThe C half of gpukit.linalg.det."},
    {"_linalg_slogdet", FASTCALL(fn_linalg_slogdet),
     "_linalg_slogdet(x, /)\n--\n\nThe C half of gpukit.linalg.slogdet: (sign, logabsdet)."},
    {"_linalg_cholesky", FASTCALL(fn_linalg_cholesky),
     "_linalg_cholesky(x, upper, /)\n--\n\nThe C half of gpukit.linalg.cholesky."},
    {"_linalg_eigh", FASTCALL(fn_linalg_eigh),
     "_linalg_eigh(x, /)\n--\n\nThe C half of gpukit.linalg.eigh: (eigenvalues, "
     "eigenvectors)."},
    {"_linalg_eigvalsh", FASTCALL(fn_linalg_eigvalsh),
     "_linalg_eigvalsh(x, /)\n--\n\nThe C half of gpukit.linalg.eigvalsh."},
    {"_linalg_eig", FASTCALL(fn_linalg_eig),
     "_linalg_eig(x, /)\n--\n\nThe C half of gpukit.linalg.eig: (eigenvalues, eigenvectors)."},
    {"_linalg_eigvals", FASTCALL(fn_linalg_eigvals),
     "_linalg_eigvals(x, /)\n--\n\nThe C half of gpukit.linalg.eigvals."},
    {NULL, NULL, 0, NULL},
};

int gkpy_linalg_init(PyObject *module, gkpy_state *state)
{
    (void)state;
    return PyModule_AddFunctions(module, linalg_functions);
}
