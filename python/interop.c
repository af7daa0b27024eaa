/* Zero-copy interop: gpukit arrays as other libraries' arrays and back.
 * One file per protocol:
 * - buffer.c: the buffer protocol (CPU arrays: memoryview, NumPy,
 *   array.array) and __array__(dtype=None, copy=None), NumPy 2's rules;
 * - dlpack.c: __dlpack__ / __dlpack_device__ (DLPack 1.x versioned
 *   capsules, or legacy ones for consumers that ask for no version) and
 *   gpukit.from_dlpack;
 * - cuda_interface.c: __cuda_array_interface__ (version 3) both ways.
 * This file holds what they share (interop.h says how lifetimes and
 * read-only memory are handled) and gkpy_from_protocols, asarray's way in
 * through whichever protocol an object speaks. */
#include "interop.h"

#include <string.h>

/* --- shared helpers --- */

/* The identity transpose is exactly a new handle (the public API's way to
 * take a reference). */
gk_status gkpy_new_handle(const gk_array *a, gk_array **out)
{
    int axes[GK_MAX_DIMS];
    for (int i = 0; i < GK_MAX_DIMS; i++)
        axes[i] = i;
    return gk_transpose(a, axes, out);
}

gk_status gkpy_copy_to(const gk_array *a, gk_device device, gk_array **out)
{
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    if (gk_device_equal(gk_array_device(a), device))
        status = gk_copy(a, out);
    else
        status = gk_to(a, device, out);
    Py_END_ALLOW_THREADS
    return status;
}

gk_status gkpy_synchronize(gk_device device)
{
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = gk_device_synchronize(device);
    Py_END_ALLOW_THREADS
    return status;
}

int gkpy_dtype_of_kind(char kind, Py_ssize_t size)
{
    for (int d = 0; kind && d < GK_DTYPE_COUNT; d++)
        if (gkpy_dtype_kind((gk_dtype)d) == kind && (Py_ssize_t)gk_dtype_size((gk_dtype)d) == size)
            return d;
    return -1;
}

int gkpy_unsupported_kind(char kind, Py_ssize_t size, const char *where)
{
    const char *names[] = {"bool", "uint", "int", "float", "complex"};
    const char *kinds = "buifc";
    const char *found = strchr(kinds, kind);
    if (kind && found)
        PyErr_Format(PyExc_TypeError, "dtype %s%zd (%s) is not supported; %s",
                     names[found - kinds], size * 8, where, GKPY_SUPPORTED_DTYPES);
    else
        PyErr_Format(PyExc_TypeError, "the element type (%s) is not supported; %s", where,
                     GKPY_SUPPORTED_DTYPES);
    return -1;
}

gk_status gkpy_settle_import(gk_array **wrapped, bool must_copy, int copy)
{
    if (!must_copy && copy != 1)
        return GK_OK;
    gk_array *copied = NULL;
    gk_status status = gkpy_copy_to(*wrapped, gk_array_device(*wrapped), &copied);
    gk_array_free(*wrapped);
    *wrapped = copied;
    return status;
}

int gkpy_refuse_read_only(const char *what)
{
    PyErr_Format(PyExc_ValueError,
                 "%s is read-only, and gpukit arrays are always writable, so it must be "
                 "copied; copy=False forbids that (pass copy=None)",
                 what);
    return -1;
}

/* --- import: every protocol --- */

/* object.name, or NULL without an error when it has none. */
static PyObject *optional_attribute(PyObject *object, const char *name)
{
    PyObject *value = PyObject_GetAttrString(object, name);
    if (!value && PyErr_ExceptionMatches(PyExc_AttributeError))
        PyErr_Clear();
    return value;
}

/* object.__array__() (`method`, bound). With copy=0 it is called as
 * __array__(copy=False), NumPy 2's way to ask for the object's own memory:
 * an __array__ that would copy raises then, where a plain call could hand
 * back a new array that asarray would share, silently not the object's
 * memory. One without the copy keyword cannot promise that (ValueError,
 * as NumPy raises). */
static PyObject *array_method_result(PyObject *object, PyObject *method, int copy)
{
    if (copy != 0)
        return PyObject_CallNoArgs(method);
    PyObject *kwargs = Py_BuildValue("{s:O}", "copy", Py_False);
    PyObject *empty = PyTuple_New(0);
    PyObject *array = kwargs && empty ? PyObject_Call(method, empty, kwargs) : NULL;
    Py_XDECREF(kwargs);
    Py_XDECREF(empty);
    if (!array && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyErr_Format(PyExc_ValueError,
                     "asarray(copy=False): %.100s.__array__(copy=False) failed (%S), so it "
                     "cannot promise not to copy (NumPy 2's __array__ takes copy=)",
                     Py_TYPE(object)->tp_name, value ? value : Py_None);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
    }
    return array;
}

PyObject *gkpy_from_protocols(gkpy_state *state, PyObject *object, int copy, bool *handled)
{
    *handled = true;
    PyObject *dlpack = optional_attribute(object, "__dlpack__");
    if (!dlpack && PyErr_Occurred())
        return NULL;
    if (dlpack) {
        Py_DECREF(dlpack);
        PyObject *where = optional_attribute(object, "__dlpack_device__");
        if (!where && PyErr_Occurred())
            return NULL;
        if (where) {
            Py_DECREF(where);
            if (gkpy_is_array(state, object))
                return gkpy_import_own(state, object, NULL, copy);
            PyObject *result = gkpy_import_dlpack(state, object, NULL, copy);
            /* BufferError: the producer cannot say this memory in DLPack
             * (NumPy: unaligned data, strides that are not whole elements);
             * the buffer protocol below may still. */
            if (result || !PyErr_ExceptionMatches(PyExc_BufferError) ||
                !PyObject_CheckBuffer(object))
                return result;
            PyErr_Clear();
        }
    }
    PyObject *interface = optional_attribute(object, "__cuda_array_interface__");
    if (!interface && PyErr_Occurred())
        return NULL;
    if (interface) {
        PyObject *result = gkpy_import_cuda_interface(state, object, interface, copy);
        Py_DECREF(interface);
        return result;
    }
    if (PyObject_CheckBuffer(object))
        return gkpy_import_buffer(state, object, copy);
    PyObject *method = optional_attribute(object, "__array__");
    if (!method && PyErr_Occurred())
        return NULL;
    if (method) {
        PyObject *array = array_method_result(object, method, copy);
        Py_DECREF(method);
        if (!array)
            return NULL;
        PyObject *result = NULL;
        if (PyObject_CheckBuffer(array))
            /* The result is new: sharing it is no copy of the original. */
            result = gkpy_import_buffer(state, array, copy);
        else
            PyErr_Format(PyExc_TypeError,
                         "%.100s.__array__() returned %.100s, which has no buffer",
                         Py_TYPE(object)->tp_name, Py_TYPE(array)->tp_name);
        Py_DECREF(array);
        return result;
    }
    *handled = false;
    return NULL;
}
