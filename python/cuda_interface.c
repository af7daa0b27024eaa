/* __cuda_array_interface__ (version 3) both ways: the attribute of CUDA
 * arrays (for CuPy, Numba and PyTorch), and the import of any producer's
 * (versions 0 to 3) for asarray (interop.h: lifetimes and read-only
 * memory). */
#include "interop.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* --- __cuda_array_interface__ (export) --- */

/* NumPy's typestr of a dtype: byte order, kind, size. */
static const char *typestr(gk_dtype dtype)
{
    switch (dtype) {
    case GK_BOOL: return "|b1";
    case GK_INT8: return "|i1";
    case GK_INT16: return "<i2";
    case GK_INT32: return "<i4";
    case GK_INT64: return "<i8";
    case GK_UINT8: return "|u1";
    case GK_UINT16: return "<u2";
    case GK_UINT32: return "<u4";
    case GK_UINT64: return "<u8";
    case GK_FLOAT32: return "<f4";
    case GK_FLOAT64: return "<f8";
    case GK_FLOAT16: return "<f2";
    case GK_BFLOAT16: return NULL; /* NumPy's typestrs have no bfloat16 */
    case GK_COMPLEX64: return "<c8";
    case GK_COMPLEX128: return "<c16";
    }
    return "|u1";
}

static PyObject *tuple_of(int n, const int64_t *values, int64_t scale)
{
    PyObject *tuple = PyTuple_New(n);
    for (int i = 0; tuple && i < n; i++) {
        PyObject *item = PyLong_FromLongLong(values[i] * scale);
        if (!item) {
            Py_CLEAR(tuple);
            break;
        }
        PyTuple_SET_ITEM(tuple, i, item);
    }
    return tuple;
}

static PyObject *array_cuda_array_interface(PyObject *self, void *closure)
{
    (void)closure;
    gkpy_state *state = state_of(self);
    const gk_array *a = array_of(self);
    gk_device device = gk_array_device(a);
    if (device.kind != GK_DEVICE_CUDA) {
        char name[GK_DEVICE_NAME_MAX];
        PyErr_Format(PyExc_AttributeError,
                     "__cuda_array_interface__: only CUDA arrays have it; this one is on %s",
                     device_text(device, name));
        return NULL;
    }
    if (!typestr(gk_array_dtype(a))) {
        PyErr_SetString(PyExc_AttributeError,
                        "__cuda_array_interface__: its typestrs have no bfloat16; share the "
                        "array through DLPack (__dlpack__), which has, or convert it with "
                        "astype(float32)");
        return NULL;
    }
    /* The interface can name a stream the data is ready on; gpukit's own
     * stream is not for others to wait on, so the work is finished first
     * and the stream entry is None (no synchronisation needed). */
    gk_status status = gkpy_synchronize(device);
    if (status != GK_OK)
        return gkpy_raise(state, status);
    /* the consumer's streams are not known: its work is waited for on the
     * host before gpukit takes the memory back */
    gk_array_share(a, 0);
    int ndim = gk_array_ndim(a);
    int64_t itemsize = (int64_t)gk_dtype_size(gk_array_dtype(a));
    uintptr_t pointer = gk_array_size(a) > 0 ? (uintptr_t)gk_array_data(a) : 0;
    PyObject *shape = tuple_of(ndim, gk_array_shape(a), 1);
    PyObject *strides = gk_array_is_contiguous(a)
                            ? Py_NewRef(Py_None)
                            : tuple_of(ndim, gk_array_strides(a), itemsize);
    if (!shape || !strides) {
        Py_XDECREF(shape);
        Py_XDECREF(strides);
        return NULL;
    }
    /* Broadcast views (stride 0) are read-only, as their buffer and DLPack
     * exports say: a consumer writing one element would change a row. */
    PyObject *read_only = gk_array_is_writable(a) ? Py_False : Py_True;
    return Py_BuildValue("{s:N,s:s,s:(NO),s:N,s:i,s:O}", "shape", shape, "typestr",
                         typestr(gk_array_dtype(a)), "data", PyLong_FromUnsignedLongLong(pointer),
                         read_only, "strides", strides, "version", 3, "stream", Py_None);
}

/* --- import: the CUDA array interface --- */

/* The dtype of a NumPy typestr ("<f4"); TypeError naming others. */
static int typestr_dtype(PyObject *text, gk_dtype *dtype)
{
    const char *s = PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : NULL;
    if (!s) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "typestr must be a str, not %R", text);
        return -1;
    }
    char order = s[0], kind = s[0] ? s[1] : 0;
    char *end = NULL;
    long size = kind ? strtol(s + 2, &end, 10) : 0;
    /* The size must be all that follows the kind: "<i8[ns]" or "<f4x" is
     * no typestr of these dtypes (read as int64 or float32 before). */
    if (!end || end == s + 2 || *end != '\0')
        kind = 0;
    int found = gkpy_dtype_of_kind(kind, size);
    if (found < 0 || !order || !strchr("<>|=", order) || (order == '>' && size > 1)) {
        char where[64];
        PyOS_snprintf(where, sizeof where, "typestr '%.20s'", s);
        if (order == '>' && size > 1) {
            PyErr_Format(PyExc_TypeError, "%s: big-endian data is not supported", where);
            return -1;
        }
        return gkpy_unsupported_kind(kind, size, where);
    }
    *dtype = (gk_dtype)found;
    return 0;
}

/* Up to GK_MAX_DIMS ints from a tuple; -1 with an exception otherwise. */
static int int_tuple(PyObject *tuple, const char *what, int64_t *values)
{
    if (!PyTuple_Check(tuple)) {
        PyErr_Format(PyExc_TypeError, "__cuda_array_interface__: %s must be a tuple, not %R",
                     what, tuple);
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    if (n > GK_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%zd dimensions; gpukit arrays have 0 to %d", n,
                     GK_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        values[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(tuple, i));
        if (values[i] == -1 && PyErr_Occurred())
            return -1;
    }
    return (int)n;
}

/* The release callback of gk_wrap() for memory kept alive by a reference
 * to its Python owner. */
static void release_object(void *context)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF((PyObject *)context);
    PyGILState_Release(gil);
}

/* What a producer's __cuda_array_interface__ describes, checked. */
typedef struct cuda_memory {
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    int64_t strides[GK_MAX_DIMS]; /* elements */
    bool strided;                 /* false: C order */
    gk_dtype dtype;
    unsigned long long pointer;
    int read_only;
    PyObject *stream; /* borrowed; NULL or None: the data is ready */
} cuda_memory;

/* The strides entry (bytes) into m->strides (elements). */
static int read_strides(PyObject *object, cuda_memory *m)
{
    int n = int_tuple(object, "strides", m->strides);
    if (n < 0)
        return -1;
    if (n != m->ndim) {
        PyErr_Format(PyExc_ValueError, "__cuda_array_interface__: %d strides for %d dimensions",
                     n, m->ndim);
        return -1;
    }
    int64_t itemsize = (int64_t)gk_dtype_size(m->dtype);
    for (int i = 0; i < m->ndim; i++) {
        if (m->strides[i] % itemsize != 0) {
            PyErr_Format(PyExc_ValueError,
                         "__cuda_array_interface__: stride %lld bytes is not a multiple of the "
                         "element size (%lld)",
                         (long long)m->strides[i], (long long)itemsize);
            return -1;
        }
        m->strides[i] /= itemsize;
    }
    return 0;
}

/* Reads the `interface` dict (versions 0 to 3) into *m. */
static int read_interface(PyObject *interface, cuda_memory *m)
{
    if (!PyDict_Check(interface)) {
        PyErr_Format(PyExc_TypeError, "__cuda_array_interface__ must be a dict, not %.100s",
                     Py_TYPE(interface)->tp_name);
        return -1;
    }
    PyObject *shape_object = PyDict_GetItemString(interface, "shape");
    PyObject *type_object = PyDict_GetItemString(interface, "typestr");
    PyObject *data_object = PyDict_GetItemString(interface, "data");
    PyObject *strides_object = PyDict_GetItemString(interface, "strides");
    PyObject *mask = PyDict_GetItemString(interface, "mask");
    m->stream = PyDict_GetItemString(interface, "stream");
    if (!shape_object || !type_object || !data_object) {
        PyErr_SetString(PyExc_TypeError,
                        "__cuda_array_interface__ lacks shape, typestr or data");
        return -1;
    }
    if (mask && mask != Py_None) {
        PyErr_SetString(PyExc_TypeError,
                        "__cuda_array_interface__: masked arrays are not supported");
        return -1;
    }
    if ((m->ndim = int_tuple(shape_object, "shape", m->shape)) < 0 ||
        typestr_dtype(type_object, &m->dtype) < 0)
        return -1;
    if (!PyTuple_Check(data_object) ||
        !PyArg_ParseTuple(data_object, "Kp", &m->pointer, &m->read_only)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "__cuda_array_interface__: data must be (pointer, read_only), not %R",
                     data_object);
        return -1;
    }
    m->strided = strides_object && strides_object != Py_None;
    return m->strided ? read_strides(strides_object, m) : 0;
}

/* The producer's work may still be queued on the stream the interface
 * names (v3): the host waits for it (None or absent: ready). */
static int wait_for_producer(gkpy_state *state, gk_device device, PyObject *stream_object)
{
    if (!stream_object || stream_object == Py_None)
        return 0;
    long long stream = PyLong_AsLongLong(stream_object);
    if (stream == -1 && PyErr_Occurred())
        return -1;
    if (stream == 0) {
        PyErr_SetString(PyExc_ValueError,
                        "__cuda_array_interface__: stream 0 is not allowed (ambiguous)");
        return -1;
    }
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = gk_cuda_stream_wait(device, (uintptr_t)stream);
    Py_END_ALLOW_THREADS
    if (status != GK_OK) {
        gkpy_raise(state, status);
        return -1;
    }
    return 0;
}

/* A gk_array over the CUDA memory `interface` (the producer's
 * __cuda_array_interface__, versions 0 to 3) describes; `owner` is kept
 * alive until the last view goes. */
PyObject *gkpy_import_cuda_interface(gkpy_state *state, PyObject *owner, PyObject *interface,
                                     int copy)
{
    cuda_memory m;
    if (read_interface(interface, &m) < 0)
        return NULL;
    if (m.read_only && copy == 0) {
        gkpy_refuse_read_only("the CUDA array");
        return NULL;
    }
    /* Which GPU: the driver knows the pointer's device (an empty array
     * may have none: cuda:0). */
    gk_device device = {GK_DEVICE_CUDA, 0, 0};
    gk_status status = GK_OK;
    if (m.pointer)
        status = gk_cuda_pointer_device((void *)(uintptr_t)m.pointer, &device);
    if (status != GK_OK)
        return gkpy_raise(state, status);
    if (wait_for_producer(state, device, m.stream) < 0)
        return NULL;
    gk_array *wrapped;
    status = gk_wrap(device, m.dtype, m.ndim, m.shape, m.strided ? m.strides : NULL,
                     (void *)(uintptr_t)m.pointer, release_object, Py_NewRef(owner), &wrapped);
    if (status != GK_OK) {
        Py_DECREF(owner);
        return gkpy_raise(state, status);
    }
    status = gkpy_settle_import(&wrapped, m.read_only, copy);
    return gkpy_array_result(state, status, wrapped);
}

/* --- tables (array.c takes them in) --- */

PyGetSetDef gkpy_cuda_interface_array_getset[] = {
    {"__cuda_array_interface__", array_cuda_array_interface, NULL,
     "The CUDA array interface (version 3) of a CUDA array, for CuPy, Numba and PyTorch:\n"
     "shape, typestr, data (pointer, read-only: True for broadcast views), strides\n"
     "(None when C-contiguous, else bytes), version, and stream None (the device is\n"
     "synchronised first, so the data is ready).\n"
     "AttributeError on other devices, so hasattr() tells.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
