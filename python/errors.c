/* gk_status -> Python exceptions, and gpukit's own exception types. */
#include "gkpy.h"

/* gpukit.linalg.LinAlgError, or once NumPy's linalg is imported, its
 * subclass that is numpy.linalg.LinAlgError too: code written for NumPy
 * (scikit-learn's, a notebook's `except np.linalg.LinAlgError`) then
 * catches gpukit's, through NumPy's functions or gpukit's own. Code that
 * names NumPy's class has imported NumPy by the time it could catch one,
 * and gpukit itself never imports NumPy (it would start NumPy's OpenBLAS
 * threads). */
static PyObject *linalg_error_to_raise(gkpy_state *state)
{
    if (state->numpy_linalg_error)
        return state->numpy_linalg_error;
    PyObject *modules = PySys_GetObject("modules"); /* borrowed */
    PyObject *numpy_linalg = modules ? PyDict_GetItemString(modules, "numpy.linalg") : NULL;
    PyObject *theirs = numpy_linalg ? PyObject_GetAttrString(numpy_linalg, "LinAlgError") : NULL;
    PyObject *bases = theirs && PyType_Check(theirs)
                          ? PyTuple_Pack(2, state->linalg_error, theirs)
                          : NULL;
    if (bases)
        state->numpy_linalg_error =
            PyErr_NewExceptionWithDoc("gpukit.linalg.LinAlgError",
                                      "gpukit.linalg.LinAlgError, which is NumPy's too.", bases,
                                      NULL);
    Py_XDECREF(bases);
    Py_XDECREF(theirs);
    PyErr_Clear(); /* without NumPy (or with an odd one): gpukit's own */
    return state->numpy_linalg_error ? state->numpy_linalg_error : state->linalg_error;
}

PyObject *gkpy_raise(gkpy_state *state, gk_status status)
{
    PyObject *type;
    switch (status) {
    case GK_OK: /* a caller bug; still never return NULL without an exception */
    case GK_ERR_INVALID_ARGUMENT:
        type = PyExc_ValueError;
        break;
    case GK_ERR_OUT_OF_MEMORY:
        type = PyExc_MemoryError;
        break;
    case GK_ERR_PERMISSION:
    case GK_ERR_UNSAFE:
        type = PyExc_PermissionError;
        break;
    case GK_ERR_IO:
        type = PyExc_OSError;
        break;
    case GK_ERR_TIMEOUT:
        type = PyExc_TimeoutError;
        break;
    case GK_ERR_BUSY:
        type = state->no_gpu_error;
        break;
    case GK_ERR_EXISTS:
        type = PyExc_FileExistsError;
        break;
    case GK_ERR_OUT_OF_RANGE:
        type = PyExc_IndexError;
        break;
    case GK_ERR_UNSUPPORTED_DTYPE:
        type = PyExc_TypeError;
        break;
    case GK_ERR_LINALG:
        type = linalg_error_to_raise(state);
        break;
    case GK_ERR_AXIS:
        type = state->axis_error;
        break;
    case GK_ERR_NOT_FOUND:
    case GK_ERR_DRIVER:
    default:
        type = state->gpu_error;
        break;
    }
    const char *message = gk_last_error();
    PyErr_SetString(type, message && *message ? message : gk_status_string(status));
    return NULL;
}

PyObject *gkpy_raise_op(gkpy_state *state, gk_status status, gk_op op, gk_dtype dtype)
{
    if (status == GK_ERR_INVALID_ARGUMENT && !gk_op_accepts(op, dtype)) {
        const char *message = gk_last_error();
        PyErr_SetString(PyExc_TypeError, message && *message ? message : gk_op_name(op));
        return NULL;
    }
    return gkpy_raise(state, status);
}

/* A new exception type `name` ("gpukit.GPUError"), put in the module as
 * `attribute`. */
static PyObject *new_exception(PyObject *module, const char *attribute, const char *name,
                               PyObject *base, const char *doc)
{
    PyObject *type = PyErr_NewExceptionWithDoc(name, doc, base, NULL);
    if (type && PyModule_AddObjectRef(module, attribute, type) < 0)
        Py_CLEAR(type);
    return type;
}

int gkpy_errors_init(PyObject *module, gkpy_state *state)
{
    state->gpu_error = new_exception(
        module, "GPUError", "gpukit.GPUError", PyExc_RuntimeError,
        "A GPU, its driver or a vendor library failed (the message says what and how to fix it).");
    if (!state->gpu_error)
        return -1;
    state->no_gpu_error = new_exception(
        module, "NoGPUError", "gpukit.NoGPUError", state->gpu_error,
        "No GPU can satisfy the request: there is none, or not enough fit or are free.");
    if (!state->no_gpu_error)
        return -1;
    /* A ValueError, as NumPy's numpy.linalg.LinAlgError; private here,
     * gpukit.linalg exports it (not gpukit itself, as NumPy). */
    state->linalg_error = new_exception(
        module, "_LinAlgError", "gpukit.linalg.LinAlgError", PyExc_ValueError,
        "A matrix is singular or not positive definite, or a factorization did not converge.");
    if (!state->linalg_error)
        return -1;
    /* NumPy's AxisError is a ValueError and an IndexError, so code catching
     * either, as it would for NumPy, catches it. */
    PyObject *bases = PyTuple_Pack(2, PyExc_ValueError, PyExc_IndexError);
    state->axis_error = bases ? new_exception(module, "AxisError", "gpukit.AxisError", bases,
                                              "An axis beyond the array's (a ValueError and an "
                                              "IndexError, as NumPy's AxisError).")
                              : NULL;
    Py_XDECREF(bases);
    return state->axis_error ? 0 : -1;
}
