/* gk_status -> Python exceptions, and gpukit's own exception types. */
#include "gkpy.h"

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
        type = state->linalg_error;
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
    return state->linalg_error ? 0 : -1;
}
