/* User-written kernels from Python: gpukit.RawKernel (CuPy's RawKernel:
 * the whole kernel and an explicit launch size), gpukit.ElementwiseKernel
 * (CuPy's ElementwiseKernel: one element's work, broadcasting and launch
 * size done for you) and gpukit.Stream, over include/gpukit/kernel.h.
 *
 * A RawKernel is compiled for one device when it is made, so source errors
 * show at once. An ElementwiseKernel is compiled lazily, once per device
 * its arrays live on (CuPy's rule): one object serves every device, and
 * the compiled handles are cached in the object. Compiled programs are
 * also cached by libgpukit, in memory and on disk (GPUKIT_CACHE_DIR), so
 * a second process does not compile again. Compiling and launching run
 * without the GIL. */
#include "gkpy.h"

#include <structmember.h>

#include <limits.h>
#include <string.h>

/* Elementwise kernels take at most this many inputs and outputs together
 * (GK_KLOOP_OPERANDS in src/compute/kernels/dialect.h); more is refused
 * when the params are parsed. */
#define MAX_OPERANDS 8
#define PARAM_NAME_SIZE 64

/* ---- shared helpers ------------------------------------------------------ */

/* The device kernels run on when none is named: the default device
 * (gpukit.device blocks, set_default_device) unless that is the CPU; then
 * the accelerator (a CUDA GPU, else an OpenCL device) where there is one,
 * else the CPU (whose kernels run on the OpenCL driver for the CPU). */
static int kernel_device(gkpy_state *state, PyObject *object, gk_device *device)
{
    if (object && object != Py_None)
        return gkpy_device_from_object(state, object, device);
    *device = gkpy_default_device(state);
    if (device->kind == GK_DEVICE_CPU) {
        gk_device accelerator;
        if (gk_device_accelerator(&accelerator) == GK_OK)
            *device = accelerator;
    }
    return 0;
}

static PyObject *device_name(gk_device device)
{
    char name[GK_DEVICE_NAME_MAX];
    return PyUnicode_FromString(gk_device_name(device, name, sizeof name));
}

/* Matches the call's keyword arguments to `names` (NULL-terminated):
 * values[k] becomes the value given for names[k] (borrowed), and stays as
 * it was otherwise. values[0 .. positional-1] were filled positionally. */
static int match_keywords(const char *function, PyObject *const *kwvalues, PyObject *kwnames,
                          const char *const *names, Py_ssize_t positional, PyObject **values)
{
    Py_ssize_t count = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, i);
        int k = 0;
        while (names[k] && !PyUnicode_CompareWithASCIIString(key, names[k]) == 0)
            k++;
        if (!names[k]) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'",
                         function, key);
            return -1;
        }
        if (k < positional) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'",
                         function, names[k]);
            return -1;
        }
        values[k] = kwvalues[i];
    }
    return 0;
}

/* The gk_stream of a stream= argument: NULL for None (the device's own
 * stream). TypeError for anything but a gpukit.Stream. */
typedef struct stream_object {
    PyObject_HEAD
    gk_stream *stream;
    gk_device device;
} stream_object;

int gkpy_stream_argument(gkpy_state *state, PyObject *object, gk_stream **stream)
{
    *stream = NULL;
    if (!object || object == Py_None)
        return 0;
    if (!Py_IS_TYPE(object, state->stream_type)) {
        PyErr_Format(PyExc_TypeError, "stream= takes a gpukit.Stream or None, not %.100s",
                     Py_TYPE(object)->tp_name);
        return -1;
    }
    *stream = ((stream_object *)object)->stream;
    return 0;
}

/* ---- gpukit.Stream ------------------------------------------------------- */

PyDoc_STRVAR(stream_doc,
"Stream(device=None)\n"
"--\n\n"
"A queue of its own on a device, for launching kernels that\n"
"may run at the same time as kernels on other streams (CuPy's Stream).\n\n"
"Pass it as `stream=` to a RawKernel or ElementwiseKernel call. Array\n"
"operations stay consistent with launches whatever the stream: a launch\n"
"starts after the array work queued before it, and array work queued after\n"
"it waits for it. device=None means the default device, or the accelerator\n"
"(gk_device_accelerator: a CUDA GPU, else an OpenCL device) when the default\n"
"is the CPU (with none, the CPU, where launches return when done). The\n"
"stream is released, after its work is done, when the object goes away.");

static PyObject *stream_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"device", NULL};
    PyObject *device_arg = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Stream", keywords, &device_arg))
        return NULL;
    gkpy_state *state = gkpy_state_of_type(type);
    gk_device device;
    if (kernel_device(state, device_arg, &device) < 0)
        return NULL;
    gk_stream *stream = NULL;
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = gk_stream_create(device, &stream);
    Py_END_ALLOW_THREADS
    if (status != GK_OK)
        return gkpy_raise(state, status);
    stream_object *self = PyObject_New(stream_object, type);
    if (!self) {
        gk_stream_free(stream);
        return NULL;
    }
    self->stream = stream;
    self->device = device;
    return (PyObject *)self;
}

static void stream_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    gk_stream *stream = ((stream_object *)self)->stream;
    /* Freeing waits for the stream's work, which may take long. */
    Py_BEGIN_ALLOW_THREADS
    gk_stream_free(stream);
    Py_END_ALLOW_THREADS
    PyObject_Free(self);
    Py_DECREF(type);
}

PyDoc_STRVAR(stream_synchronize_doc,
"synchronize($self, /)\n--\n\n"
"Waits until every kernel launched on this stream has finished.");

static PyObject *stream_synchronize(PyObject *self, PyObject *unused)
{
    (void)unused;
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = gk_stream_synchronize(((stream_object *)self)->stream);
    Py_END_ALLOW_THREADS
    if (status != GK_OK)
        return gkpy_raise(gkpy_state_of_type(Py_TYPE(self)), status);
    Py_RETURN_NONE;
}

static PyObject *stream_get_device(PyObject *self, void *closure)
{
    (void)closure;
    return gkpy_device_object(gkpy_state_of_type(Py_TYPE(self)), ((stream_object *)self)->device);
}

static PyObject *stream_repr(PyObject *self)
{
    PyObject *name = device_name(((stream_object *)self)->device);
    if (!name)
        return NULL;
    PyObject *text = PyUnicode_FromFormat("gpukit.Stream(device='%U')", name);
    Py_DECREF(name);
    return text;
}

static PyMethodDef stream_methods[] = {
    {"synchronize", stream_synchronize, METH_NOARGS, stream_synchronize_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef stream_getset[] = {
    {"device", stream_get_device, NULL, "The device the stream belongs to.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot stream_slots[] = {
    {Py_tp_doc, (void *)stream_doc},
    {Py_tp_new, stream_new},
    {Py_tp_dealloc, stream_dealloc},
    {Py_tp_repr, stream_repr},
    {Py_tp_methods, stream_methods},
    {Py_tp_getset, stream_getset},
    {0, NULL},
};

static PyType_Spec stream_spec = {
    .name = "gpukit.Stream",
    .basicsize = sizeof(stream_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = stream_slots,
};

/* ---- launch sizes and raw arguments -------------------------------------- */

/* grid= or block=: an int, or a tuple of 1 to 3 ints, each at least 1;
 * the missing dimensions are 1. */
int gkpy_launch_size(PyObject *object, const char *what, uint32_t size[3])
{
    size[0] = size[1] = size[2] = 1;
    PyObject *items = NULL;
    Py_ssize_t count = 1;
    if (PyTuple_Check(object)) {
        items = object;
        count = PyTuple_GET_SIZE(object);
        if (count < 1 || count > 3) {
            PyErr_Format(PyExc_ValueError,
                         "%s has %zd sizes; give an int or a tuple of 1 to 3 ints (x, y, z)", what,
                         count);
            return -1;
        }
    } else if (!PyIndex_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int or a tuple of up to 3 ints, not %.100s",
                     what, Py_TYPE(object)->tp_name);
        return -1;
    }
    for (Py_ssize_t d = 0; d < count; d++) {
        PyObject *item = items ? PyTuple_GET_ITEM(items, d) : object;
        if (!PyIndex_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s: sizes must be ints, not %.100s", what,
                         Py_TYPE(item)->tp_name);
            return -1;
        }
        PyObject *index = PyNumber_Index(item);
        if (!index)
            return -1;
        int overflow = 0;
        long long value = PyLong_AsLongLongAndOverflow(index, &overflow);
        Py_DECREF(index);
        if (value == -1 && PyErr_Occurred())
            return -1;
        if (overflow || value < 1 || value > (long long)UINT32_MAX) {
            PyErr_Format(PyExc_ValueError,
                         "%s: every size must be from 1 to %lu (use 1 for the dimensions you do "
                         "not use)",
                         what, (unsigned long)UINT32_MAX);
            return -1;
        }
        size[d] = (uint32_t)value;
    }
    return 0;
}

/* The name of a dtype-carrying object's dtype (NumPy scalars, 0-d NumPy
 * arrays): a new reference to a str, or NULL with nothing raised when the
 * object has no .dtype.name. */
static PyObject *foreign_dtype_name(PyObject *object)
{
    PyObject *dtype = PyObject_GetAttrString(object, "dtype");
    if (!dtype) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *name = PyObject_GetAttrString(dtype, "name");
    Py_DECREF(dtype);
    if (!name || !PyUnicode_Check(name)) {
        PyErr_Clear();
        Py_XDECREF(name);
        return NULL;
    }
    return name;
}

/* A Python integer (anything with __index__) stored exactly as an element
 * of the integer dtype `dtype` at `bytes` (8 bytes of room);
 * OverflowError naming `what` when it does not fit. */
static int exact_integer(PyObject *object, gk_dtype dtype, const char *what, void *bytes)
{
    PyObject *index = PyNumber_Index(object);
    if (!index)
        return -1;
    int result = gkpy_store_scalar(index, dtype, bytes);
    Py_DECREF(index);
    if (result < 0 && PyErr_ExceptionMatches(PyExc_OverflowError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_OverflowError, "%s: %R does not fit in %s", what, object,
                     gk_dtype_name(dtype));
    }
    return result;
}

/* The dtypes a scalar kernel argument can have: gk_arg passes 32- and
 * 64-bit words, so the integers of those widths (uint32 and uint64 as the
 * int of their width with the same bits, which the kernel's unsigned
 * parameter reads as they were) and the two floats. */
static bool kernel_scalar_dtype(gk_dtype dtype)
{
    return gk_dtype_is_float(dtype) || (gk_dtype_is_integer(dtype) && gk_dtype_size(dtype) >= 4);
}

/* One scalar argument's bytes, read as its dtype. */
typedef union scalar_bytes {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
    unsigned char bytes[8];
} scalar_bytes;

/* The gk_arg of a scalar of a kernel_scalar_dtype(). */
static gk_arg scalar_arg(gk_dtype dtype, const scalar_bytes *value)
{
    if (gk_dtype_is_float(dtype))
        return dtype == GK_FLOAT32 ? gk_arg_float32(value->f32) : gk_arg_float64(value->f64);
    return gk_dtype_size(dtype) == 4 ? gk_arg_int32(value->i32) : gk_arg_int64(value->i64);
}

/* A scalar of the named exact kernel type (a NumPy scalar's dtype name):
 * int32, int64, uint32, uint64, float32 or float64. */
static int typed_scalar(PyObject *value, const char *type, const char *what, gk_arg *arg)
{
    gk_dtype dtype;
    if (gk_dtype_parse(type, &dtype) == GK_OK && kernel_scalar_dtype(dtype)) {
        scalar_bytes bytes = {.i64 = 0};
        if (gk_dtype_is_integer(dtype)) {
            if (exact_integer(value, dtype, what, bytes.bytes) < 0)
                return -1;
        } else {
            double real = PyFloat_AsDouble(value);
            if (real == -1.0 && PyErr_Occurred())
                return -1;
            if (dtype == GK_FLOAT32)
                bytes.f32 = (float)real;
            else
                bytes.f64 = real;
        }
        *arg = scalar_arg(dtype, &bytes);
        return 0;
    }
    PyErr_Format(PyExc_TypeError,
                 "%s is a %s scalar, which kernels cannot take; scalar arguments are int32, "
                 "int64, uint32, uint64, float32 or float64 (numpy.int32(3), numpy.float32(0.5), "
                 "...)",
                 what, type);
    return -1;
}

/* The value of a 0-d array as a scalar argument of its dtype (copied to
 * the host: a launch needs it there). */
static int array_scalar(gkpy_state *state, const gk_array *array, const char *what, gk_arg *arg)
{
    gk_dtype dtype = gk_array_dtype(array);
    scalar_bytes value;
    if (!kernel_scalar_dtype(dtype)) {
        PyErr_Format(PyExc_TypeError,
                     "%s is a 0-d %s array, passed as its value, and kernels take int32, int64, "
                     "uint32, uint64, float32 or float64 scalars; reshape it to (1,) to pass it "
                     "as a pointer",
                     what, gk_dtype_name(dtype));
        return -1;
    }
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = gk_to_host(array, value.bytes, gk_dtype_size(dtype));
    Py_END_ALLOW_THREADS
    if (status != GK_OK) {
        gkpy_raise(state, status);
        return -1;
    }
    *arg = scalar_arg(dtype, &value);
    return 0;
}

/* One entry of a RawKernel call's args: an array (a pointer to its first
 * element) or a scalar of an exact type. */
static int raw_argument(gkpy_state *state, PyObject *object, Py_ssize_t index, gk_arg *arg)
{
    char what[48];
    snprintf(what, sizeof what, "kernel argument %zd", index);
    if (gkpy_is_array(state, object)) {
        const gk_array *array = ((gkpy_array *)object)->array;
        if (gk_array_ndim(array) == 0)
            return array_scalar(state, array, what, arg);
        /* The kernel gets a bare pointer and indexes it as if C-ordered:
         * a strided view would be read wrongly without a word. */
        if (!gk_array_is_contiguous(array)) {
            PyErr_Format(PyExc_ValueError,
                         "%s is not contiguous (a transposed or sliced view) and kernels see a "
                         "bare pointer; pass a contiguous copy (x.copy())",
                         what);
            return -1;
        }
        *arg = gk_arg_array(array);
        return 0;
    }
    if (PyBool_Check(object)) {
        PyErr_Format(PyExc_TypeError,
                     "%s is a bool, which has no exact kernel type; pass numpy.int32(%S) or an "
                     "int",
                     what, object);
        return -1;
    }
    /* NumPy scalars (np.float64 is also a float) say their exact type. */
    PyObject *type = foreign_dtype_name(object);
    if (type) {
        PyObject *ndim = PyObject_GetAttrString(object, "ndim");
        long dims = ndim ? PyLong_AsLong(ndim) : -1;
        Py_XDECREF(ndim);
        PyErr_Clear();
        if (dims != 0) {
            Py_DECREF(type);
            PyErr_Format(PyExc_TypeError,
                         "%s is a %.100s on the host; move it to the kernel's device first "
                         "(gpukit.asarray(x, device=...))",
                         what, Py_TYPE(object)->tp_name);
            return -1;
        }
        int result = typed_scalar(object, PyUnicode_AsUTF8(type), what, arg);
        Py_DECREF(type);
        return result;
    }
    if (PyLong_Check(object))
        return typed_scalar(object, "int64", what, arg);
    if (PyFloat_Check(object))
        return typed_scalar(object, "float64", what, arg);
    PyErr_Format(PyExc_TypeError,
                 "%s is a %.100s; kernel arguments are gpukit arrays and scalars (int: int64, "
                 "float: float64, numpy.int32(...), numpy.float32(...))",
                 what, Py_TYPE(object)->tp_name);
    return -1;
}

/* ---- gpukit.RawKernel ---------------------------------------------------- */

typedef struct raw_kernel_object {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    gk_kernel *kernel;
    gk_device device;
    PyObject *source, *name, *options, *language; /* as given (options may be None) */
} raw_kernel_object;

PyDoc_STRVAR(raw_kernel_doc,
"RawKernel(source, name, *, device=None, options=None, language='portable')\n"
"--\n\n"
"A kernel written whole, launched with an explicit grid (CuPy's RawKernel,\n"
"Numba's @cuda.jit).\n\n"
"`source` holds the kernel `name` in gpukit's portable dialect\n"
"(language='portable', docs/KERNELS.md: GK_KERNEL, GK_GLOBAL, GK_GLOBAL_ID,\n"
"...; runs on every device) or in CUDA C (language='cuda', CUDA\n"
"devices only; declare the kernel extern \"C\"). It is compiled now, for\n"
"`device`: None means the default device, or the accelerator (a CUDA GPU,\n"
"else an OpenCL device) when the default is the CPU. `options` go to the\n"
"compiler (\"-DN=4\"). A compile error raises ValueError whose message holds\n"
"the compiler's log. On the CPU device kernels run through the OpenCL\n"
"driver for the CPU (PoCL), on the arrays' memory in place, and a launch\n"
"returns when the kernel is done; without that driver, gpukit.GPUError\n"
"names the package to install.\n"
"Compiled kernels are cached on disk (GPUKIT_CACHE_DIR), so another\n"
"process does not compile the same source again.\n\n"
"Call it as k(grid, block, args, *, stream=None): grid blocks of block\n"
"threads (each an int or a tuple of up to 3 ints), CUDA's <<<grid, block>>>.\n"
"args is a tuple: gpukit arrays on the kernel's device (contiguous; the\n"
"kernel gets a pointer to the first element) and scalars of exact types:\n"
"numpy.int32/int64/uint32/uint64/float32/float64 scalars map to those\n"
"types (an unsigned one as the int of its width with the same bits), a\n"
"Python int to int64, a float to float64, and a 0-d gpukit array to its\n"
"value with its dtype. The launch returns at once; reading a result waits\n"
"for it.\n\n"
"    k = gpukit.RawKernel(src, \"scale\")\n"
"    k(((n + 255) // 256,), (256,), (x, numpy.float32(2.0), n))");

static int compile_raw(gk_device device, PyObject *language, PyObject *source, PyObject *name,
                       PyObject *options, gk_kernel **kernel, gk_status *status)
{
    gk_kernel_language kind;
    if (PyUnicode_CompareWithASCIIString(language, "portable") == 0)
        kind = GK_KERNEL_PORTABLE;
    else if (PyUnicode_CompareWithASCIIString(language, "cuda") == 0)
        kind = GK_KERNEL_CUDA_C;
    else {
        PyErr_Format(PyExc_ValueError,
                     "language must be 'portable' (gpukit's dialect, CUDA and OpenCL) or 'cuda' "
                     "(CUDA C, CUDA devices only), not %R",
                     language);
        return -1;
    }
    const char *source_text = PyUnicode_AsUTF8(source), *name_text = PyUnicode_AsUTF8(name);
    const char *options_text = options == Py_None ? NULL : PyUnicode_AsUTF8(options);
    if (!source_text || !name_text || (options != Py_None && !options_text))
        return -1;
    /* The texts belong to str objects the caller holds. */
    Py_BEGIN_ALLOW_THREADS
    *status = gk_kernel_compile(device, kind, source_text, name_text, options_text, kernel);
    Py_END_ALLOW_THREADS
    return 0;
}

static PyObject *raw_kernel_call(PyObject *callable, PyObject *const *args, size_t nargsf,
                                 PyObject *kwnames);

static PyObject *raw_kernel_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"source", "name", "device", "options", "language", NULL};
    PyObject *source, *name, *device_arg = Py_None, *options = Py_None, *language = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "UU|$OOU:RawKernel", keywords, &source, &name,
                                     &device_arg, &options, &language))
        return NULL;
    if (options != Py_None && !PyUnicode_Check(options)) {
        PyErr_Format(PyExc_TypeError, "options must be a str or None, not %.100s",
                     Py_TYPE(options)->tp_name);
        return NULL;
    }
    gkpy_state *state = gkpy_state_of_type(type);
    gk_device device;
    if (kernel_device(state, device_arg, &device) < 0)
        return NULL;
    PyObject *portable = NULL;
    if (!language) {
        portable = PyUnicode_FromString("portable");
        if (!portable)
            return NULL;
        language = portable;
    }
    gk_kernel *kernel = NULL;
    gk_status status = GK_OK;
    if (compile_raw(device, language, source, name, options, &kernel, &status) < 0) {
        Py_XDECREF(portable);
        return NULL;
    }
    if (status != GK_OK) {
        Py_XDECREF(portable);
        return gkpy_raise(state, status);
    }
    raw_kernel_object *self = PyObject_New(raw_kernel_object, type);
    if (!self) {
        gk_kernel_free(kernel);
        Py_XDECREF(portable);
        return NULL;
    }
    self->vectorcall = raw_kernel_call;
    self->kernel = kernel;
    self->device = device;
    self->source = Py_NewRef(source);
    self->name = Py_NewRef(name);
    self->options = Py_NewRef(options);
    self->language = portable ? portable : Py_NewRef(language);
    return (PyObject *)self;
}

static void raw_kernel_dealloc(PyObject *self)
{
    raw_kernel_object *kernel = (raw_kernel_object *)self;
    PyTypeObject *type = Py_TYPE(self);
    gk_kernel_free(kernel->kernel);
    Py_XDECREF(kernel->source);
    Py_XDECREF(kernel->name);
    Py_XDECREF(kernel->options);
    Py_XDECREF(kernel->language);
    PyObject_Free(self);
    Py_DECREF(type);
}

static PyObject *raw_kernel_call(PyObject *callable, PyObject *const *args, size_t nargsf,
                                 PyObject *kwnames)
{
    raw_kernel_object *self = (raw_kernel_object *)callable;
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(callable));
    static const char *const names[] = {"grid", "block", "args", "stream", NULL};
    PyObject *values[4] = {NULL, NULL, NULL, NULL};
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs > 3) {
        PyErr_Format(PyExc_TypeError,
                     "RawKernel() takes grid, block and args positionally (%zd given); stream "
                     "is keyword-only",
                     nargs);
        return NULL;
    }
    for (Py_ssize_t k = 0; k < nargs; k++)
        values[k] = args[k];
    if (match_keywords("RawKernel", args + nargs, kwnames, names, nargs, values) < 0)
        return NULL;
    if (!values[0] || !values[1] || !values[2]) {
        PyErr_SetString(PyExc_TypeError,
                        "RawKernel() needs grid, block and args: k(grid, block, (x, n, ...))");
        return NULL;
    }
    uint32_t grid[3], block[3];
    gk_stream *stream;
    if (gkpy_launch_size(values[0], "grid", grid) < 0 || gkpy_launch_size(values[1], "block", block) < 0 ||
        gkpy_stream_argument(state, values[3], &stream) < 0)
        return NULL;
    if (!PyTuple_Check(values[2]) && !PyList_Check(values[2])) {
        PyErr_Format(PyExc_TypeError, "args must be a tuple of arrays and scalars, not %.100s",
                     Py_TYPE(values[2])->tp_name);
        return NULL;
    }
    /* A tuple of our own keeps every array alive while the GIL is released,
     * whatever the caller does to a list meanwhile. */
    PyObject *items = PySequence_Tuple(values[2]);
    if (!items)
        return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(items);
    gk_arg *kernel_args = PyMem_Calloc(count > 0 ? (size_t)count : 1, sizeof *kernel_args);
    if (!kernel_args) {
        Py_DECREF(items);
        return PyErr_NoMemory();
    }
    PyObject *result = NULL;
    for (Py_ssize_t k = 0; k < count; k++)
        if (raw_argument(state, PyTuple_GET_ITEM(items, k), k, &kernel_args[k]) < 0)
            goto done;
    if (count > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "too many kernel arguments");
        goto done;
    }
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = gk_kernel_launch(self->kernel, grid, block, stream, (int)count, kernel_args);
    Py_END_ALLOW_THREADS
    if (status != GK_OK)
        gkpy_raise(state, status);
    else
        result = Py_NewRef(Py_None);
done:
    PyMem_Free(kernel_args);
    Py_DECREF(items);
    return result;
}

static PyObject *raw_kernel_get_device(PyObject *self, void *closure)
{
    (void)closure;
    return gkpy_device_object(gkpy_state_of_type(Py_TYPE(self)),
                              ((raw_kernel_object *)self)->device);
}

static PyObject *raw_kernel_repr(PyObject *self)
{
    raw_kernel_object *kernel = (raw_kernel_object *)self;
    PyObject *device = device_name(kernel->device);
    if (!device)
        return NULL;
    PyObject *text =
        PyUnicode_FromFormat("gpukit.RawKernel(name=%R, device='%U')", kernel->name, device);
    Py_DECREF(device);
    return text;
}

static PyMemberDef raw_kernel_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(raw_kernel_object, vectorcall), READONLY, NULL},
    {"source", T_OBJECT, offsetof(raw_kernel_object, source), READONLY, "The kernel's source."},
    {"name", T_OBJECT, offsetof(raw_kernel_object, name), READONLY,
     "The name of the kernel function in the source."},
    {"options", T_OBJECT, offsetof(raw_kernel_object, options), READONLY,
     "The compiler options (None when there are none)."},
    {"language", T_OBJECT, offsetof(raw_kernel_object, language), READONLY,
     "'portable' (gpukit's dialect) or 'cuda' (CUDA C)."},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef raw_kernel_getset[] = {
    {"device", raw_kernel_get_device, NULL, "The device the kernel was compiled for.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot raw_kernel_slots[] = {
    {Py_tp_doc, (void *)raw_kernel_doc},
    {Py_tp_new, raw_kernel_new},
    {Py_tp_dealloc, raw_kernel_dealloc},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_repr, raw_kernel_repr},
    {Py_tp_members, raw_kernel_members},
    {Py_tp_getset, raw_kernel_getset},
    {0, NULL},
};

static PyType_Spec raw_kernel_spec = {
    .name = "gpukit.RawKernel",
    .basicsize = sizeof(raw_kernel_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_VECTORCALL,
    .slots = raw_kernel_slots,
};

/* ---- gpukit.ElementwiseKernel -------------------------------------------- */

typedef struct param {
    char name[PARAM_NAME_SIZE];
    gk_dtype dtype;
} param;

/* One compiled form of the kernel. */
typedef struct compiled_kernel {
    gk_device device;
    gk_kernel *kernel;
} compiled_kernel;

typedef struct elementwise_object {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *in_params, *out_params, *operation, *name; /* str, as given */
    int nin, nout;
    param params[MAX_OPERANDS]; /* inputs, then outputs */
    bool has_device;            /* device= was given */
    gk_device device;
    compiled_kernel *compiled; /* one per device used so far (PyMem) */
    int compiled_count;
} elementwise_object;

PyDoc_STRVAR(elementwise_doc,
"ElementwiseKernel(in_params, out_params, operation, name, *, device=None)\n"
"--\n\n"
"A kernel written for one element; gpukit broadcasts the inputs, makes the\n"
"outputs and picks the launch size (CuPy's ElementwiseKernel).\n\n"
"in_params and out_params declare typed names, \"float32 x, float32 y\" and\n"
"\"float32 z\" (dtypes: bool, int8 ... int64, uint8 ... uint64, float32,\n"
"float64; bool elements are 0/1 integers in the body). `operation` is code in gpukit's\n"
"portable dialect run per element, with each name bound to that element\n"
"(outputs are assigned, and start at 0) and `i` the element's index in C\n"
"order: \"z = 2.0f * x + y;\". Names may not be `i` or start with gk_/GK_.\n\n"
"Call it as k(*inputs, out=None, stream=None): the inputs are gpukit arrays\n"
"of exactly the declared dtypes (else TypeError naming the dtype expected),\n"
"all on one CUDA or OpenCL device, or scalars, which become 0-d arrays of\n"
"the declared dtype. `out` is an array (one output) or a tuple with an\n"
"array or None per output, of the broadcast shape; None entries are made.\n"
"Returns the output array, or a tuple of them for several outputs.\n\n"
"The kernel is compiled the first time it runs on a device (the device of\n"
"its first array input, else of an `out` array, else `device`, else the\n"
"default or the accelerator as for RawKernel) and kept for later calls; a\n"
"compile error raises ValueError with the compiler's log. With device=\n"
"given it is compiled for that device at once, so errors show early.\n\n"
"    saxpy = gpukit.ElementwiseKernel(\"float32 x, float32 y\", \"float32 z\",\n"
"                                     \"z = 2.0f * x + y;\", \"saxpy\")\n"
"    z = saxpy(x, y)");

/* Parses "float32 x, int64 n" into params (appending to *count); `what`
 * is "in_params" or "out_params". libgpukit checks the same text again
 * when compiling; this reading is what lets calls convert scalars and name
 * the dtype a wrong input should have. */
static int parse_params(PyObject *text, const char *what, param *params, int *count)
{
    const char *p = PyUnicode_AsUTF8(text);
    if (!p)
        return -1;
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    if (!*p)
        return 0;
    for (;;) {
        char words[2][PARAM_NAME_SIZE];
        for (int w = 0; w < 2; w++) {
            while (*p == ' ' || *p == '\t' || *p == '\n')
                p++;
            size_t n = 0;
            while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                   (*p >= '0' && *p <= '9') || *p == '_') {
                if (n + 1 >= PARAM_NAME_SIZE) {
                    PyErr_Format(PyExc_ValueError, "%s: a name in %R is longer than %d characters",
                                 what, text, PARAM_NAME_SIZE - 1);
                    return -1;
                }
                words[w][n++] = *p++;
            }
            words[w][n] = 0;
        }
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!words[0][0] || !words[1][0] || (*p && *p != ',')) {
            PyErr_Format(PyExc_ValueError,
                         "%s %R is not a list of dtypes and names; write entries like "
                         "\"float32 x\", separated by commas",
                         what, text);
            return -1;
        }
        gk_dtype dtype;
        if (gk_dtype_parse(words[0], &dtype) != GK_OK) {
            PyErr_Format(PyExc_ValueError, "%s: unknown dtype '%s' in %R; use " GKPY_DTYPE_NAMES,
                         what, words[0], text);
            return -1;
        }
        if (*count == MAX_OPERANDS) {
            PyErr_Format(PyExc_ValueError,
                         "an elementwise kernel takes at most %d inputs and outputs together; "
                         "split the work into several kernels",
                         MAX_OPERANDS);
            return -1;
        }
        memcpy(params[*count].name, words[1], sizeof words[1]);
        params[*count].dtype = dtype;
        (*count)++;
        if (!*p)
            return 0;
        p++; /* the comma */
    }
}

/* The kernel compiled for `device`: from the object's cache, else
 * compiled now (without the GIL) and remembered. NULL with an exception. */
static gk_kernel *elementwise_for(elementwise_object *self, gkpy_state *state, gk_device device)
{
    for (int k = 0; k < self->compiled_count; k++)
        if (gk_device_equal(self->compiled[k].device, device))
            return self->compiled[k].kernel;
    const char *inputs = PyUnicode_AsUTF8(self->in_params);
    const char *outputs = PyUnicode_AsUTF8(self->out_params);
    const char *body = PyUnicode_AsUTF8(self->operation);
    const char *name = PyUnicode_AsUTF8(self->name);
    if (!inputs || !outputs || !body || !name)
        return NULL;
    gk_kernel *kernel = NULL;
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = gk_elementwise_kernel(device, inputs, outputs, body, name, &kernel);
    Py_END_ALLOW_THREADS
    if (status != GK_OK) {
        gkpy_raise(state, status);
        return NULL;
    }
    /* Another thread may have compiled it while the GIL was released. */
    for (int k = 0; k < self->compiled_count; k++) {
        if (gk_device_equal(self->compiled[k].device, device)) {
            gk_kernel_free(kernel);
            return self->compiled[k].kernel;
        }
    }
    compiled_kernel *grown =
        PyMem_Realloc(self->compiled, sizeof *grown * (size_t)(self->compiled_count + 1));
    if (!grown) {
        gk_kernel_free(kernel);
        PyErr_NoMemory();
        return NULL;
    }
    self->compiled = grown;
    self->compiled[self->compiled_count++] = (compiled_kernel){device, kernel};
    return kernel;
}

static PyObject *elementwise_call(PyObject *callable, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames);

static PyObject *elementwise_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"in_params", "out_params", "operation", "name", "device", NULL};
    PyObject *in_params, *out_params, *operation, *name, *device_arg = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "UUUU|$O:ElementwiseKernel", keywords,
                                     &in_params, &out_params, &operation, &name, &device_arg))
        return NULL;
    gkpy_state *state = gkpy_state_of_type(type);
    param params[MAX_OPERANDS];
    int count = 0;
    if (parse_params(in_params, "in_params", params, &count) < 0)
        return NULL;
    int nin = count;
    if (parse_params(out_params, "out_params", params, &count) < 0)
        return NULL;
    gk_device device = gk_device_cpu();
    if (device_arg != Py_None && gkpy_device_from_object(state, device_arg, &device) < 0)
        return NULL;

    elementwise_object *self = PyObject_New(elementwise_object, type);
    if (!self)
        return NULL;
    self->vectorcall = elementwise_call;
    self->in_params = Py_NewRef(in_params);
    self->out_params = Py_NewRef(out_params);
    self->operation = Py_NewRef(operation);
    self->name = Py_NewRef(name);
    self->nin = nin;
    self->nout = count - nin;
    memcpy(self->params, params, sizeof params);
    self->has_device = device_arg != Py_None;
    self->device = device;
    self->compiled = NULL;
    self->compiled_count = 0;
    if (self->has_device && !elementwise_for(self, state, device)) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void elementwise_dealloc(PyObject *self)
{
    elementwise_object *kernel = (elementwise_object *)self;
    PyTypeObject *type = Py_TYPE(self);
    for (int k = 0; k < kernel->compiled_count; k++)
        gk_kernel_free(kernel->compiled[k].kernel);
    PyMem_Free(kernel->compiled);
    Py_XDECREF(kernel->in_params);
    Py_XDECREF(kernel->out_params);
    Py_XDECREF(kernel->operation);
    Py_XDECREF(kernel->name);
    PyObject_Free(self);
    Py_DECREF(type);
}

/* An array argument (input or output `p`) checked against the declaration
 * and the kernel's device, before libgpukit sees it, so that Python users
 * get Python advice: TypeError for the dtype, ValueError for the device. */
static int check_array(const param *p, const char *role, const gk_array *array, gk_device device)
{
    gk_dtype dtype = gk_array_dtype(array);
    if (dtype != p->dtype) {
        PyErr_Format(PyExc_TypeError,
                     "%s '%s' is declared %s but the array is %s; convert it with "
                     "x.astype(gpukit.%s) or declare it %s",
                     role, p->name, gk_dtype_name(p->dtype), gk_dtype_name(dtype),
                     gk_dtype_name(p->dtype), gk_dtype_name(dtype));
        return -1;
    }
    gk_device have = gk_array_device(array);
    if (!gk_device_equal(have, device)) {
        char have_name[GK_DEVICE_NAME_MAX], want_name[GK_DEVICE_NAME_MAX];
        gk_device_name(have, have_name, sizeof have_name);
        gk_device_name(device, want_name, sizeof want_name);
        PyErr_Format(PyExc_ValueError,
                     "%s '%s' is on %s but the kernel runs on %s (where its first array is); "
                     "move it there with x.to('%s')",
                     role, p->name, have_name, want_name, want_name);
        return -1;
    }
    return 0;
}

/* Whether `object` can be a scalar input: a Python int or float, a NumPy
 * scalar or 0-d array, never a longer host array. */
static bool is_scalar_input(PyObject *object)
{
    if (PyLong_Check(object) || PyFloat_Check(object) || PyComplex_Check(object))
        return true;
    bool scalar = false;
    PyObject *type = foreign_dtype_name(object);
    if (type) {
        Py_DECREF(type);
        PyObject *ndim = PyObject_GetAttrString(object, "ndim");
        scalar = ndim && PyLong_Check(ndim) && PyLong_AsLong(ndim) == 0;
        Py_XDECREF(ndim);
        PyErr_Clear();
    }
    return scalar;
}

/* The value of `object` as an element of p's declared dtype, at `value`
 * (`what` names the input in messages). */
static int scalar_element(const param *p, PyObject *object, const char *what, uint64_t *value)
{
    if (p->dtype == GK_BOOL) {
        int truth = PyObject_IsTrue(object);
        if (truth < 0)
            return -1;
        *(uint8_t *)value = (uint8_t)truth;
        return 0;
    }
    if (!gk_dtype_is_integer(p->dtype))
        return gkpy_store_scalar(object, p->dtype, value);
    if (!PyIndex_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s is declared %s, so it takes an int, not %.100s", what,
                     gk_dtype_name(p->dtype), Py_TYPE(object)->tp_name);
        return -1;
    }
    return exact_integer(object, p->dtype, what, value);
}

/* A scalar input as a 0-d array of the declared dtype on `device`. */
static int scalar_input(gkpy_state *state, const param *p, PyObject *object, gk_device device,
                        gk_array **out)
{
    char what[PARAM_NAME_SIZE + 16];
    snprintf(what, sizeof what, "input '%s'", p->name);
    if (!is_scalar_input(object)) {
        PyErr_Format(PyExc_TypeError,
                     "%s is a %.100s; inputs are gpukit arrays on the kernel's device or scalars "
                     "(move host data with gpukit.asarray(x, device=...))",
                     what, Py_TYPE(object)->tp_name);
        return -1;
    }
    /* A NumPy scalar or 0-d array as the Python number it holds: a 0-d
     * float array has an __index__ that raises, which the conversions
     * below would take up ("only integer scalar arrays can be converted"). */
    PyObject *number = PyLong_Check(object) || PyFloat_Check(object) || PyComplex_Check(object)
                           ? Py_NewRef(object)
                           : PyObject_CallMethod(object, "item", NULL);
    if (!number)
        return -1;
    uint64_t value[2] = {0, 0}; /* room for a complex128 */
    int stored = scalar_element(p, number, what, value);
    Py_DECREF(number);
    if (stored < 0)
        return -1;
    gk_status status = gk_from_host(device, p->dtype, 0, NULL, value, out);
    if (status != GK_OK) {
        gkpy_raise(state, status);
        return -1;
    }
    return 0;
}

/* The device an elementwise call runs on: its first array input's, else
 * its first `out` array's, else the kernel's device= or the default rule. */
static int call_device(elementwise_object *self, gkpy_state *state, PyObject *const *inputs,
                       PyObject *const *outputs, gk_device *device)
{
    for (int k = 0; k < self->nin; k++) {
        if (gkpy_is_array(state, inputs[k])) {
            *device = gk_array_device(((gkpy_array *)inputs[k])->array);
            return 0;
        }
    }
    for (int k = 0; k < self->nout; k++) {
        if (outputs[k]) {
            *device = gk_array_device(((gkpy_array *)outputs[k])->array);
            return 0;
        }
    }
    if (self->has_device) {
        *device = self->device;
        return 0;
    }
    return kernel_device(state, NULL, device);
}

/* out=: None, an array (one output), or a tuple of an array or None per
 * output. outputs[k] gets a borrowed Array or NULL. */
static int output_arguments(elementwise_object *self, gkpy_state *state, PyObject *out,
                            PyObject **outputs)
{
    for (int k = 0; k < self->nout; k++)
        outputs[k] = NULL;
    if (!out || out == Py_None)
        return 0;
    if (gkpy_is_array(state, out)) {
        if (self->nout != 1) {
            PyErr_Format(PyExc_TypeError,
                         "the kernel has %d outputs, so out= takes a tuple of %d arrays (or None "
                         "entries)",
                         self->nout, self->nout);
            return -1;
        }
        outputs[0] = out;
        return 0;
    }
    if (PyTuple_Check(out) && PyTuple_GET_SIZE(out) != self->nout) {
        PyErr_Format(PyExc_TypeError,
                     "out= is a tuple of %zd but the kernel has %d output%s; give a tuple of "
                     "%d entries, an array or None for each",
                     PyTuple_GET_SIZE(out), self->nout, self->nout == 1 ? "" : "s", self->nout);
        return -1;
    }
    if (!PyTuple_Check(out)) {
        PyErr_Format(PyExc_TypeError,
                     "out= takes a gpukit.Array or a tuple of %d entries (an array or None per "
                     "output), not %.100s",
                     self->nout, Py_TYPE(out)->tp_name);
        return -1;
    }
    for (int k = 0; k < self->nout; k++) {
        PyObject *item = PyTuple_GET_ITEM(out, k);
        if (item == Py_None)
            continue;
        if (!gkpy_is_array(state, item)) {
            PyErr_Format(PyExc_TypeError, "out[%d] must be a gpukit.Array or None, not %.100s", k,
                         Py_TYPE(item)->tp_name);
            return -1;
        }
        outputs[k] = item;
    }
    return 0;
}

/* The operands of a call on `device`: in[] the input arrays (scalar
 * inputs made into 0-d arrays in scalars[], the caller's to free), out[]
 * the given outputs' arrays (NULL: the launch makes them). */
static int call_operands(elementwise_object *self, gkpy_state *state, PyObject *const *inputs,
                         PyObject *const *outputs, gk_device device, const gk_array **in,
                         gk_array **scalars, gk_array **out)
{
    for (int k = 0; k < self->nin; k++) {
        const param *p = &self->params[k];
        if (gkpy_is_array(state, inputs[k])) {
            in[k] = ((gkpy_array *)inputs[k])->array;
            if (check_array(p, "input", in[k], device) < 0)
                return -1;
        } else {
            if (scalar_input(state, p, inputs[k], device, &scalars[k]) < 0)
                return -1;
            in[k] = scalars[k];
        }
    }
    for (int k = 0; k < self->nout; k++) {
        if (outputs[k]) {
            out[k] = ((gkpy_array *)outputs[k])->array;
            if (check_array(&self->params[self->nin + k], "output", out[k], device) < 0)
                return -1;
        }
    }
    return 0;
}

/* What a call returns after the launch: the caller's out= objects as
 * given and the new arrays wrapped (each new gk_array is handed over once,
 * to a wrapper or to free); one output alone, several as a tuple. */
static PyObject *call_results(elementwise_object *self, gkpy_state *state,
                              PyObject *const *outputs, gk_array **out)
{
    PyObject *result = PyTuple_New(self->nout);
    for (int k = 0; k < self->nout; k++) {
        PyObject *item = NULL;
        if (outputs[k])
            item = Py_NewRef(outputs[k]);
        else if (result)
            item = gkpy_array_wrap(state, out[k]); /* frees it on failure */
        else
            gk_array_free(out[k]);
        if (result && item)
            PyTuple_SET_ITEM(result, k, item);
        else {
            Py_XDECREF(item);
            Py_CLEAR(result);
        }
    }
    if (result && self->nout == 1) {
        PyObject *only = Py_NewRef(PyTuple_GET_ITEM(result, 0));
        Py_SETREF(result, only);
    }
    return result;
}

static PyObject *elementwise_call(PyObject *callable, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames)
{
    elementwise_object *self = (elementwise_object *)callable;
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(callable));
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    static const char *const names[] = {"out", "stream", NULL};
    PyObject *values[2] = {NULL, NULL};
    if (match_keywords(PyUnicode_AsUTF8(self->name), args + nargs, kwnames, names, 0, values) < 0)
        return NULL;
    if (nargs != self->nin) {
        PyErr_Format(PyExc_TypeError, "%U() takes %d inputs (%U), %zd given", self->name,
                     self->nin, self->in_params, nargs);
        return NULL;
    }
    PyObject *outputs[MAX_OPERANDS];
    gk_stream *stream;
    gk_device device;
    if (output_arguments(self, state, values[0], outputs) < 0 ||
        gkpy_stream_argument(state, values[1], &stream) < 0 ||
        call_device(self, state, args, outputs, &device) < 0)
        return NULL;
    const gk_array *in[MAX_OPERANDS] = {NULL};
    gk_array *scalars[MAX_OPERANDS] = {NULL}; /* made here from scalar inputs */
    gk_array *out[MAX_OPERANDS] = {NULL};
    PyObject *result = NULL;
    gk_kernel *kernel = NULL;
    if (call_operands(self, state, args, outputs, device, in, scalars, out) == 0)
        kernel = elementwise_for(self, state, device);
    if (kernel) {
        gk_status status;
        /* The arrays belong to objects the caller holds for the whole call. */
        Py_BEGIN_ALLOW_THREADS
        status = gk_elementwise_launch(kernel, self->nin, in, self->nout, out, stream);
        Py_END_ALLOW_THREADS
        result = status == GK_OK ? call_results(self, state, outputs, out)
                                 : gkpy_raise(state, status);
    }
    for (int k = 0; k < self->nin; k++)
        gk_array_free(scalars[k]);
    return result;
}

static PyObject *elementwise_get_device(PyObject *self, void *closure)
{
    (void)closure;
    elementwise_object *kernel = (elementwise_object *)self;
    if (!kernel->has_device)
        Py_RETURN_NONE;
    return gkpy_device_object(gkpy_state_of_type(Py_TYPE(self)), kernel->device);
}

static PyObject *elementwise_get_nin(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(((elementwise_object *)self)->nin);
}

static PyObject *elementwise_get_nout(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(((elementwise_object *)self)->nout);
}

static PyObject *elementwise_get_devices(PyObject *self, void *closure)
{
    (void)closure;
    elementwise_object *kernel = (elementwise_object *)self;
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(self));
    PyObject *list = PyList_New(kernel->compiled_count);
    for (int k = 0; list && k < kernel->compiled_count; k++) {
        PyObject *device = gkpy_device_object(state, kernel->compiled[k].device);
        if (!device)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, device);
    }
    return list;
}

static PyObject *elementwise_repr(PyObject *self)
{
    elementwise_object *kernel = (elementwise_object *)self;
    return PyUnicode_FromFormat("gpukit.ElementwiseKernel(%R, %R, %R, %R)", kernel->in_params,
                                kernel->out_params, kernel->operation, kernel->name);
}

static PyMemberDef elementwise_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(elementwise_object, vectorcall), READONLY,
     NULL},
    {"in_params", T_OBJECT, offsetof(elementwise_object, in_params), READONLY,
     "The declared inputs, as given (\"float32 x, float32 y\")."},
    {"out_params", T_OBJECT, offsetof(elementwise_object, out_params), READONLY,
     "The declared outputs, as given (\"float32 z\")."},
    {"operation", T_OBJECT, offsetof(elementwise_object, operation), READONLY,
     "The code run for each element."},
    {"name", T_OBJECT, offsetof(elementwise_object, name), READONLY, "The kernel's name."},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef elementwise_getset[] = {
    {"device", elementwise_get_device, NULL,
     "The device given when the kernel was made (None: each call's arrays decide).", NULL},
    {"compiled_devices", elementwise_get_devices, NULL,
     "The devices the kernel has been compiled for so far.", NULL},
    {"nin", elementwise_get_nin, NULL, "How many inputs the kernel takes.", NULL},
    {"nout", elementwise_get_nout, NULL, "How many outputs the kernel gives.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot elementwise_slots[] = {
    {Py_tp_doc, (void *)elementwise_doc},
    {Py_tp_new, elementwise_new},
    {Py_tp_dealloc, elementwise_dealloc},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_repr, elementwise_repr},
    {Py_tp_members, elementwise_members},
    {Py_tp_getset, elementwise_getset},
    {0, NULL},
};

static PyType_Spec elementwise_spec = {
    .name = "gpukit.ElementwiseKernel",
    .basicsize = sizeof(elementwise_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_VECTORCALL,
    .slots = elementwise_slots,
};

/* ---- module -------------------------------------------------------------- */

static int add_type(PyObject *module, PyType_Spec *spec, PyTypeObject **slot)
{
    *slot = (PyTypeObject *)PyType_FromModuleAndSpec(module, spec, NULL);
    return *slot && PyModule_AddType(module, *slot) == 0 ? 0 : -1;
}

int gkpy_kernel_init(PyObject *module, gkpy_state *state)
{
    if (add_type(module, &stream_spec, &state->stream_type) < 0 ||
        add_type(module, &raw_kernel_spec, &state->raw_kernel_type) < 0 ||
        add_type(module, &elementwise_spec, &state->elementwise_kernel_type) < 0)
        return -1;
    return 0;
}
