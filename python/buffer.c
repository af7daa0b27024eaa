/* The buffer protocol both ways, and __array__:
 * - export: CPU arrays as buffers (memoryview, NumPy, array.array), shape
 *   and strides as they are; broadcast views read-only;
 * - __array__(dtype=None, copy=None), NumPy 2's rules, over the buffer
 *   protocol (a GPU array is copied to the CPU first);
 * - import (gkpy_import_buffer, for asarray): a CPU array sharing the
 *   buffer's memory, or a copy where gpukit cannot share it (interop.h). */
#include "interop.h"

#include <stdint.h>
#include <string.h>

/* --- the buffer protocol (export) --- */

/* What a buffer export holds until releasebuffer: its own handle on the
 * memory, and the shape and strides in the units the protocol wants. */
typedef struct buffer_export {
    gk_array *array;
    Py_ssize_t shape[GK_MAX_DIMS];
    Py_ssize_t strides[GK_MAX_DIMS]; /* bytes */
} buffer_export;

/* struct-module format characters for native sizes, as NumPy exports
 * them: the 64-bit integers are 'l'/'L' where a long has 8 bytes. */
static const char *buffer_format(gk_dtype dtype)
{
    switch (dtype) {
    case GK_BOOL: return "?";
    case GK_INT8: return "b";
    case GK_INT16: return "h";
    case GK_INT32: return "i";
    case GK_INT64: return sizeof(long) == 8 ? "l" : "q";
    case GK_UINT8: return "B";
    case GK_UINT16: return "H";
    case GK_UINT32: return "I";
    case GK_UINT64: return sizeof(long) == 8 ? "L" : "Q";
    case GK_FLOAT32: return "f";
    case GK_FLOAT64: return "d";
    case GK_FLOAT16: return "e";
    case GK_BFLOAT16: return NULL; /* the struct module has no bfloat16 */
    case GK_COMPLEX64: return "Zf"; /* PEP 3118's complex, as NumPy exports it */
    case GK_COMPLEX128: return "Zd";
    }
    return "B";
}

static bool is_f_contiguous(const gk_array *a)
{
    const int64_t *shape = gk_array_shape(a), *strides = gk_array_strides(a);
    if (gk_array_size(a) == 0)
        return true;
    int64_t expected = 1;
    for (int i = 0; i < gk_array_ndim(a); i++) {
        if (shape[i] != 1 && strides[i] != expected)
            return false;
        expected *= shape[i];
    }
    return true;
}

/* BufferError and -1 when `a` cannot be exported as the buffer `flags`
 * asks for: memory off the CPU, a strided view where the consumer wants
 * contiguous memory, a broadcast view to write. */
static int check_export(const gk_array *a, int flags)
{
    char name[GK_DEVICE_NAME_MAX];
    gk_device device = gk_array_device(a);
    if (device.kind != GK_DEVICE_CPU) {
        PyErr_Format(PyExc_BufferError,
                     "the buffer protocol needs memory on the CPU; this array is on %s: call "
                     ".cpu() first",
                     device_text(device, name));
        return -1;
    }
    bool c_order = gk_array_is_contiguous(a), f_order = is_f_contiguous(a);
    const char *refused = NULL;
    if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c_order)
        refused = "C-contiguous";
    else if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !f_order)
        refused = "Fortran-contiguous";
    else if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c_order && !f_order)
        refused = "contiguous";
    else if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c_order)
        refused = "C-contiguous (no strides were asked for)";
    if (refused) {
        PyErr_Format(PyExc_BufferError,
                     "the array is a strided view, and the consumer asked for a %s buffer; "
                     "make a contiguous copy first",
                     refused);
        return -1;
    }
    if ((flags & PyBUF_WRITABLE) && !gk_array_is_writable(a)) {
        PyErr_SetString(PyExc_BufferError,
                        "the array is a broadcast view (stride 0), which cannot be written; "
                        "a writable buffer was asked for");
        return -1;
    }
    return 0;
}

int gkpy_array_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    if (!view) {
        PyErr_SetString(PyExc_BufferError, "getbuffer: view is NULL");
        return -1;
    }
    view->obj = NULL;
    const gk_array *a = array_of(self);
    if (check_export(a, flags) < 0)
        return -1;
    if ((flags & PyBUF_FORMAT) && !buffer_format(gk_array_dtype(a))) {
        PyErr_SetString(PyExc_BufferError,
                        "the buffer protocol has no format for bfloat16 (nor has NumPy the "
                        "dtype): convert with x.astype(gpukit.float32), or share the array "
                        "through DLPack");
        return -1;
    }
    buffer_export *export = PyMem_Malloc(sizeof *export);
    if (!export) {
        PyErr_NoMemory();
        return -1;
    }
    gk_status status = gkpy_new_handle(a, &export->array);
    if (status != GK_OK) {
        PyMem_Free(export);
        gkpy_raise(state_of(self), status);
        return -1;
    }
    int ndim = gk_array_ndim(a);
    Py_ssize_t itemsize = (Py_ssize_t)gk_dtype_size(gk_array_dtype(a));
    for (int i = 0; i < ndim; i++) {
        export->shape[i] = (Py_ssize_t)gk_array_shape(a)[i];
        export->strides[i] = (Py_ssize_t)gk_array_strides(a)[i] * itemsize;
    }
    view->buf = gk_array_data(a);
    view->obj = Py_NewRef(self);
    view->len = (Py_ssize_t)gk_array_nbytes(a);
    view->readonly = !gk_array_is_writable(a);
    view->itemsize = itemsize;
    view->format = (flags & PyBUF_FORMAT) ? (char *)buffer_format(gk_array_dtype(a)) : NULL;
    if (flags & PyBUF_ND) {
        view->ndim = ndim;
        view->shape = export->shape;
    } else {
        /* A plain run of bytes (the array is C-contiguous, checked above). */
        view->ndim = 1;
        view->shape = NULL;
    }
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? export->strides : NULL;
    view->suboffsets = NULL;
    view->internal = export;
    return 0;
}

void gkpy_array_releasebuffer(PyObject *self, Py_buffer *view)
{
    (void)self;
    buffer_export *export = view->internal;
    if (export) {
        gk_array_free(export->array);
        PyMem_Free(export);
        view->internal = NULL;
    }
}

/* --- __array__ --- */

PyDoc_STRVAR(array_array_doc,
"__array__($self, /, dtype=None, copy=None)\n"
"--\n\n"
"The array as a NumPy array (numpy.asarray(x) calls this for GPU arrays;\n"
"CPU arrays go through the buffer protocol, without a copy).\n\n"
"NumPy 2's rules: copy=None copies only when needed (another dtype, or an\n"
"array not on the CPU), copy=True always copies, copy=False never does and\n"
"raises ValueError when a copy would be needed.");

/* The array's memory on the CPU, for NumPy: the Array itself, or a copy
 * on the CPU when it is elsewhere (*copy then becomes -1: the copy is
 * made, and NumPy may keep it as it is). */
static PyObject *host_source(gkpy_state *state, PyObject *self, int *copy)
{
    gk_device device = gk_array_device(array_of(self));
    if (device.kind == GK_DEVICE_CPU)
        return Py_NewRef(self);
    if (*copy == 0) {
        char name[GK_DEVICE_NAME_MAX];
        PyErr_Format(PyExc_ValueError,
                     "__array__(copy=False): the array is on %s, and NumPy needs it on the "
                     "CPU, which takes a copy (use copy=None, or .cpu())",
                     device_text(device, name));
        return NULL;
    }
    gk_array *host = NULL;
    gk_status status = gkpy_copy_to(array_of(self), gk_device_cpu(), &host);
    *copy = -1;
    return gkpy_array_result(state, status, host);
}

/* For copy=False with a dtype: ValueError and -1 unless NumPy's `np_dtype`
 * is the array's own (a conversion copies). */
static int check_same_dtype(PyObject *numpy, PyObject *np_dtype, const gk_array *a)
{
    PyObject *want = PyObject_CallMethod(numpy, "dtype", "O", np_dtype);
    PyObject *have =
        want ? PyObject_CallMethod(numpy, "dtype", "s", gk_dtype_name(gk_array_dtype(a))) : NULL;
    int same = have ? PyObject_RichCompareBool(want, have, Py_EQ) : -1;
    Py_XDECREF(want);
    Py_XDECREF(have);
    if (same == 0)
        PyErr_Format(PyExc_ValueError,
                     "__array__(copy=False): the array is %s; converting it to %R takes a copy",
                     gk_dtype_name(gk_array_dtype(a)), np_dtype);
    return same > 0 ? 0 : -1;
}

static PyObject *array_array(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy_object = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:__array__", keywords, &dtype,
                                     &copy_object))
        return NULL;
    int copy;
    if (gkpy_parse_copy(copy_object, &copy) < 0)
        return NULL;
    gkpy_state *state = state_of(self);
    PyObject *numpy = PyImport_ImportModule("numpy");
    if (!numpy)
        return NULL;
    PyObject *result = NULL, *source = NULL, *view = NULL, *np_dtype = NULL;
    /* NumPy does not know gpukit's dtype objects; their names it does. */
    if (dtype != Py_None && Py_IS_TYPE(dtype, state->dtype_type))
        np_dtype = PyObject_Str(dtype);
    else
        np_dtype = Py_NewRef(dtype);
    if (np_dtype && (source = host_source(state, self, &copy)))
        view = PyMemoryView_FromObject(source);
    if (!view)
        goto done;
    if (copy == 1)
        result = PyObject_CallMethod(numpy, "array", "OO", view, np_dtype);
    else if (copy == -1 || np_dtype == Py_None ||
             check_same_dtype(numpy, np_dtype, array_of(self)) == 0)
        result = PyObject_CallMethod(numpy, "asarray", "OO", view, np_dtype);
done:
    Py_XDECREF(view);
    Py_XDECREF(source);
    Py_XDECREF(np_dtype);
    Py_DECREF(numpy);
    return result;
}

/* --- import: the buffer protocol --- */

/* The dtype of a buffer's struct-module format ("<f", "l", "?"), given
 * its item size; TypeError naming others. */
static int format_dtype(const char *format, Py_ssize_t itemsize, gk_dtype *dtype)
{
    const char *f = format ? format : "B";
    char order = 0;
    if (*f && strchr("@=<>!", *f))
        order = *f++;
    char kind = 0;
    if (f[0] && !f[1]) {
        if (f[0] == '?')
            kind = 'b';
        else if (strchr("bhilqn", f[0]))
            kind = 'i';
        else if (strchr("BHILQN", f[0]))
            kind = 'u';
        else if (strchr("efd", f[0]))
            kind = 'f';
    } else if (f[0] == 'Z' && f[1] && strchr("fd", f[1]) && !f[2]) {
        kind = 'c'; /* PEP 3118: Zf, Zd */
    }
    char where[64];
    PyOS_snprintf(where, sizeof where, "buffer format '%.20s'", f - (order ? 1 : 0));
    if ((order == '>' || order == '!') && itemsize > 1) {
        PyErr_Format(PyExc_TypeError, "%s: big-endian data is not supported", where);
        return -1;
    }
    int found = gkpy_dtype_of_kind(kind, itemsize);
    if (found < 0)
        return gkpy_unsupported_kind(kind, itemsize, where);
    *dtype = (gk_dtype)found;
    return 0;
}

/* copy_to_host(ary): the array's elements into `target`, a writable
 * C-contiguous buffer of the same shape and dtype, as Numba's
 * copy_to_host(ary) does: no new host memory, so none of the first-touch
 * page faults that make a copy into a fresh array slow. */
int gkpy_array_download_into(PyObject *self, PyObject *target)
{
    const gk_array *a = array_of(self);
    Py_buffer view;
    if (PyObject_GetBuffer(target, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError,
                     "copy_to_host: ary must be a writable, C-contiguous array (a NumPy array, "
                     "say), not %.100s", Py_TYPE(target)->tp_name);
        return -1;
    }
    gk_dtype dtype;
    int ndim = gk_array_ndim(a);
    bool same_shape = view.ndim == ndim;
    for (int i = 0; same_shape && i < ndim; i++)
        same_shape = view.shape[i] == gk_array_shape(a)[i];
    int result = format_dtype(view.format, view.itemsize, &dtype);
    if (result == 0 && (!same_shape || dtype != gk_array_dtype(a))) {
        PyErr_Format(PyExc_ValueError,
                     "copy_to_host: ary must have this array's shape and dtype (%s); give "
                     "one made with numpy.empty(x.shape, x.dtype)", gk_dtype_name(gk_array_dtype(a)));
        result = -1;
    }
    if (result == 0) {
        gk_status status;
        GKPY_RUN(gkpy_long_work(a), gk_to_host(a, view.buf, (size_t)view.len));
        if (status != GK_OK) {
            gkpy_raise(state_of(self), status);
            result = -1;
        }
    }
    PyBuffer_Release(&view);
    return result;
}

/* The release callback of buffer imports: gives the buffer back. */
static void release_buffer(void *context)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    PyBuffer_Release(context);
    PyMem_Free(context);
    PyGILState_Release(gil);
}

/* A CPU array over the buffer `object` exports: shared when it is
 * writable, aligned and its strides are whole elements; else (or with
 * copy=1) a C-order copy. */
PyObject *gkpy_import_buffer(gkpy_state *state, PyObject *object, int copy)
{
    Py_buffer *view = PyMem_Malloc(sizeof *view);
    if (!view)
        return PyErr_NoMemory();
    if (PyObject_GetBuffer(object, view, PyBUF_RECORDS_RO) < 0) {
        PyMem_Free(view);
        return NULL;
    }
    PyObject *result = NULL;
    gk_array *array = NULL;
    gk_dtype dtype = GK_UINT8; /* set by format_dtype; -O3 cannot tell */
    gk_status status;
    int64_t shape[GK_MAX_DIMS], strides[GK_MAX_DIMS];
    if (format_dtype(view->format, view->itemsize, &dtype) < 0)
        goto fail;
    if (view->ndim > GK_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "the buffer has %d dimensions; gpukit has 0 to %d",
                     view->ndim, GK_MAX_DIMS);
        goto fail;
    }
    /* Why the memory cannot be shared, if it cannot. */
    const char *reason = view->readonly ? "the buffer" : NULL;
    if ((uintptr_t)view->buf % (uintptr_t)view->itemsize != 0)
        reason = "the buffer's data is not aligned to its element size, so it";
    /* Exporters may leave out strides (C order) and, for one axis, the
     * shape. */
    for (int i = 0; i < view->ndim; i++)
        shape[i] = view->shape ? view->shape[i] : view->len / view->itemsize;
    for (int i = 0; view->strides && i < view->ndim; i++) {
        strides[i] = view->strides[i] / view->itemsize;
        if (view->strides[i] % view->itemsize != 0)
            reason = "the buffer's strides are not whole elements, so it";
    }
    if (view->readonly && copy == 0) {
        gkpy_refuse_read_only("the buffer");
        goto fail;
    }
    if (reason && copy == 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s must be copied; copy=False forbids that (pass copy=None)", reason);
        goto fail;
    }
    if (reason || copy == 1) {
        status = gk_empty(gk_device_cpu(), dtype, view->ndim, shape, &array);
        if (status != GK_OK) {
            gkpy_raise(state, status);
            goto fail;
        }
        if (PyBuffer_ToContiguous(gk_array_data(array), view, view->len, 'C') < 0) {
            gk_array_free(array);
            goto fail;
        }
        PyBuffer_Release(view);
        PyMem_Free(view);
        return gkpy_array_wrap(state, array);
    }
    status = gk_wrap(gk_device_cpu(), dtype, view->ndim, shape, view->strides ? strides : NULL,
                     view->buf, release_buffer, view, &array);
    if (status != GK_OK) {
        gkpy_raise(state, status);
        goto fail;
    }
    return gkpy_array_wrap(state, array);
fail:
    PyBuffer_Release(view);
    PyMem_Free(view);
    return result;
}

/* --- tables (array.c takes them in) --- */

PyMethodDef gkpy_buffer_array_methods[] = {
    {"__array__", (PyCFunction)(void (*)(void))array_array, METH_VARARGS | METH_KEYWORDS,
     array_array_doc},
    {NULL, NULL, 0, NULL},
};
