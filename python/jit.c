/* @gpukit.jit's Python types (the decorator itself is gpukit/jit.py):
 *
 * - gpukit.JitKernel wraps a Python function. kernel[blocks, threads]
 *   (Numba's launch syntax) or kernel.forall(n) makes a JitLaunch;
 *   device=True functions are only called from other kernels.
 * - JitLaunch(args...) runs it: the arguments pick the device (every
 *   gpukit array must be on one; NumPy arrays are copied to the default
 *   device and back, or used in place on the cpu), their kinds, dtypes and
 *   ndim pick the translation (jit_translate.c), which is compiled through
 *   gk_kernel_compile and so shares the kernel caches in memory and on
 *   disk. Each (signature, device) is translated and compiled once per
 *   kernel object.
 *
 * Both pickle by their Python function, so `client.submit(kernel[b, t],
 * ...)` sends them to Dask workers. */
#include "jit.h"

#include "compute/array_impl.h"

#include <structmember.h>
#include <string.h>

/* Threads per block of kernel.forall(n). */
#define FORALL_BLOCK 256

typedef struct jit_kernel_object {
    PyObject_HEAD
    PyObject *function;     /* the Python function */
    bool device;            /* @gpukit.jit(device=True): called from kernels only */
    PyObject *compiled;     /* dict: (device name, signature...) -> capsule of gk_kernel */
    PyObject *weakrefs;
} jit_kernel_object;

typedef struct jit_launch_object {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    jit_kernel_object *kernel;
    uint32_t grid[3], block[3];
    PyObject *stream; /* a gpukit.Stream or None */
} jit_launch_object;

/* ---- arguments ----------------------------------------------------------- */

/* One argument made ready for a launch. */
typedef struct launch_arg {
    jit_arg_type type;
    PyObject *array;    /* JIT_ARG_ARRAY: a gpukit Array (owned) */
    PyObject *home;     /* an array copied to the launch's device: a writable view of the
                           caller's memory where the results are written back, or NULL */
    union {
        int64_t i;
        double f;
    } value;
} launch_arg;

/* The kind of a scalar argument: Python's bool, int and float, NumPy's
 * scalars by their dtype. 1 when `object` is a scalar, 0 when it is not. */
static int scalar_kind(gkpy_state *state, PyObject *object, launch_arg *arg)
{
    if (PyBool_Check(object)) {
        arg->type = (jit_arg_type){.kind = JIT_ARG_BOOL, .dtype = GK_BOOL};
        arg->value.i = object == Py_True;
        return 1;
    }
    gk_dtype dtype = GK_INT64;
    if (!PyLong_Check(object) && !PyFloat_Check(object)) {
        /* NumPy scalars: anything with a dtype that is not an array. */
        bool array_like = PyObject_HasAttrString(object, "shape") &&
                          PyObject_HasAttrString(object, "__len__");
        if (!PyObject_HasAttrString(object, "dtype") || array_like)
            return 0;
        PyObject *dt = PyObject_GetAttrString(object, "dtype");
        int ok = dt ? gkpy_dtype_from_object(state, dt, &dtype) : -1;
        Py_XDECREF(dt);
        if (ok < 0) {
            PyErr_Clear();
            return 0;
        }
    } else if (PyFloat_Check(object)) {
        dtype = GK_FLOAT64;
    }
    switch (gkpy_dtype_kind(dtype)) {
    case 'b':
        arg->type = (jit_arg_type){.kind = JIT_ARG_BOOL, .dtype = GK_BOOL};
        arg->value.i = PyObject_IsTrue(object);
        return arg->value.i < 0 ? -1 : 1;
    case 'i':
    case 'u': {
        arg->type = (jit_arg_type){.kind = JIT_ARG_INT, .dtype = dtype == GK_UINT64 ? GK_UINT64 : GK_INT64};
        PyObject *index = PyNumber_Index(object);
        if (!index)
            return -1;
        if (dtype == GK_UINT64) {
            unsigned long long u = PyLong_AsUnsignedLongLong(index);
            arg->value.i = (int64_t)u;
        } else {
            arg->value.i = PyLong_AsLongLong(index);
        }
        Py_DECREF(index);
        if (PyErr_Occurred()) {
            PyErr_Format(PyExc_OverflowError, "the integer argument %R does not fit in int64",
                         object);
            return -1;
        }
        return 1;
    }
    case 'f':
        if (dtype != GK_FLOAT32 && dtype != GK_FLOAT64 && dtype != GK_FLOAT16 &&
            dtype != GK_BFLOAT16)
            return 0;
        arg->type = (jit_arg_type){.kind = JIT_ARG_FLOAT,
                                      .dtype = dtype == GK_FLOAT32 ? GK_FLOAT32 : GK_FLOAT64};
        arg->value.f = PyFloat_AsDouble(object);
        return PyErr_Occurred() ? -1 : 1;
    default:
        return 0;
    }
}

static void release_args(launch_arg *args, int count)
{
    for (int i = 0; i < count; i++) {
        Py_CLEAR(args[i].array);
        Py_CLEAR(args[i].home);
    }
}

/* Where an argument's memory is, if it is device memory: a gpukit array's
 * device, or the CUDA device of a __cuda_array_interface__ object (CuPy,
 * PyTorch, cuDF), which kernels then use in place. 1 with *device set, 0
 * for host data and scalars, -1 with an exception. */
static int argument_device(gkpy_state *state, PyObject *object, gk_device *device)
{
    if (gkpy_is_array(state, object)) {
        *device = gk_array_device(((gkpy_array *)object)->array);
        return 1;
    }
    if (!PyObject_HasAttrString(object, "__cuda_array_interface__"))
        return 0;
    PyObject *view = gkpy_asarray(state, object, NULL, NULL, 0);
    if (!view)
        return -1;
    *device = gk_array_device(((gkpy_array *)view)->array);
    Py_DECREF(view);
    return 1;
}

/* The device of the launch: the one every device-memory argument is on,
 * else the default device. */
static int launch_device(gkpy_state *state, PyObject *const *objects, int count, gk_device *out)
{
    int first = -1;
    for (int i = 0; i < count; i++) {
        gk_device device;
        int on_device = argument_device(state, objects[i], &device);
        if (on_device < 0)
            return -1;
        if (!on_device)
            continue;
        if (first < 0) {
            first = i;
            *out = device;
        } else if (!gk_device_equal(device, *out)) {
            char a[GK_DEVICE_NAME_MAX], b[GK_DEVICE_NAME_MAX];
            PyErr_Format(PyExc_ValueError,
                         "kernel arguments %d and %d are arrays on two devices (%s and %s); "
                         "move them to one with x.to(device)",
                         first, i, gk_device_name(*out, a, sizeof a),
                         gk_device_name(device, b, sizeof b));
            return -1;
        }
    }
    if (first < 0)
        *out = gkpy_default_device(state);
    return 0;
}

/* A writable gpukit view of the memory `object` holds, where it lies (the
 * host, or the CUDA device of a __cuda_array_interface__ object), or NULL
 * when there is none: read-only memory, or an object (a list) that can only
 * be copied. */
static PyObject *writable_home(gkpy_state *state, PyObject *object)
{
    gk_device where = gk_device_cpu();
    int on_device = argument_device(state, object, &where);
    PyObject *home = on_device >= 0 ? gkpy_asarray(state, object, NULL, &where, 0) : NULL;
    if (home && !gk_array_is_writable(((gkpy_array *)home)->array))
        Py_CLEAR(home);
    PyErr_Clear();
    return home;
}

/* Each argument as the launch takes it on `device`. */
static int prepare_args(gkpy_state *state, gk_device device, PyObject *const *objects, int count,
                        launch_arg *args)
{
    for (int i = 0; i < count; i++) {
        memset(&args[i], 0, sizeof args[i]);
        PyObject *object = objects[i];
        bool reaches_caller = true; /* stores into the array change the caller's elements */
        if (!gkpy_is_array(state, object)) {
            int scalar = scalar_kind(state, object, &args[i]);
            if (scalar < 0)
                return -1;
            if (scalar)
                continue;
            /* NumPy arrays, CuPy and PyTorch tensors...: in place where the
             * device can see their memory (the cpu; CUDA through
             * __cuda_array_interface__), else a copy written back after
             * into the caller's memory, when it is writable. */
            PyObject *array = gkpy_asarray(state, object, NULL, &device, 0);
            if (!array) {
                PyErr_Clear();
                array = gkpy_asarray(state, object, NULL, &device, 1);
                args[i].home = array ? writable_home(state, object) : NULL;
                reaches_caller = args[i].home != NULL;
            }
            if (!array) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError,
                             "kernel argument %d is %.100s; pass gpukit or NumPy arrays (or "
                             "anything gpukit.asarray takes), bools, ints and floats",
                             i, Py_TYPE(object)->tp_name);
                return -1;
            }
            args[i].array = array;
        } else {
            args[i].array = Py_NewRef(object);
        }
        const gk_array *a = ((gkpy_array *)args[i].array)->array;
        args[i].type = (jit_arg_type){JIT_ARG_ARRAY, gk_array_dtype(a), gk_array_ndim(a),
                                      gk_array_is_contiguous(a),
                                      !reaches_caller || !gk_array_is_writable(a)};
    }
    return 0;
}

/* Copies results back into the caller's memory of the arrays that were
 * copied in. */
static int write_back(gkpy_state *state, launch_arg *args, int count)
{
    for (int i = 0; i < count; i++) {
        if (!args[i].home)
            continue;
        gk_array *home = ((gkpy_array *)args[i].home)->array, *fetched = NULL;
        gk_status status;
        Py_BEGIN_ALLOW_THREADS
        status = gk_to(((gkpy_array *)args[i].array)->array, gk_array_device(home), &fetched);
        if (status == GK_OK)
            status = gk_assign(home, fetched);
        Py_END_ALLOW_THREADS
        gk_array_free(fetched);
        if (status != GK_OK) {
            gkpy_raise(state, status);
            return -1;
        }
    }
    return 0;
}

/* ---- translating and compiling ------------------------------------------- */

/* The cache key: the device's name and each argument's kind, dtype, ndim,
 * layout and whether it may be written. */
static PyObject *signature_key(gk_device device, const launch_arg *args, int count)
{
    char name[GK_DEVICE_NAME_MAX];
    PyObject *key = PyTuple_New(count + 1);
    if (!key)
        return NULL;
    PyTuple_SET_ITEM(key, 0, PyUnicode_FromString(gk_device_name(device, name, sizeof name)));
    for (int i = 0; i < count; i++)
        PyTuple_SET_ITEM(key, i + 1, Py_BuildValue("(iiiii)", (int)args[i].type.kind,
                                                   (int)args[i].type.dtype, args[i].type.ndim,
                                                   args[i].type.contiguous,
                                                   args[i].type.read_only));
    for (int i = 0; i <= count; i++)
        if (!PyTuple_GET_ITEM(key, i)) {
            Py_DECREF(key);
            return NULL;
        }
    return key;
}

static void free_kernel_capsule(PyObject *capsule)
{
    gk_kernel_free(PyCapsule_GetPointer(capsule, "gpukit.jit.kernel"));
}

/* The dialect source for these arguments: from the disk cache when an
 * earlier process translated the same kernel reading the same objects,
 * else translated now (and stored; jit_cache.c). */
static PyObject *translate(jit_kernel_object *self, const launch_arg *args, int count,
                           char *kernel_name)
{
    jit_arg_type types[64];
    if (count > 64) {
        PyErr_SetString(PyExc_TypeError, "a gpukit kernel takes at most 64 arguments");
        return NULL;
    }
    /* Zeroed, since the key holds the bytes. */
    memset(types, 0, sizeof types);
    for (int i = 0; i < count; i++)
        types[i] = args[i].type;
    return gkpy_jit_translate_cached(self->function, count, types, kernel_name);
}

/* The compiler options of translated kernels. NVRTC fuses a * b + c into
 * one rounding by default; the jit's arithmetic is Python's and NumPy's,
 * so CUDA compiles without fusing (OpenCL: the prelude's FP_CONTRACT
 * pragma, jit_translate.c). */
static const char *compile_options(gk_device device)
{
    return device.kind == GK_DEVICE_CUDA ? "--fmad=false" : NULL;
}

/* The compiled kernel for this signature on `device` (borrowed from the
 * cache). */
static gk_kernel *compiled_kernel(gkpy_state *state, jit_kernel_object *self, gk_device device,
                                  const launch_arg *args, int count)
{
    PyObject *key = signature_key(device, args, count);
    if (!key)
        return NULL;
    PyObject *capsule = PyDict_GetItemWithError(self->compiled, key);
    if (capsule) {
        Py_DECREF(key);
        return PyCapsule_GetPointer(capsule, "gpukit.jit.kernel");
    }
    char name[80];
    PyObject *source = PyErr_Occurred() ? NULL : translate(self, args, count, name);
    const char *text = source ? PyUnicode_AsUTF8(source) : NULL;
    gk_kernel *kernel = NULL;
    if (text) {
        gk_status status;
        Py_BEGIN_ALLOW_THREADS
        status = gk_kernel_compile(device, GK_KERNEL_PORTABLE, text, name,
                                   compile_options(device), &kernel);
        Py_END_ALLOW_THREADS
        if (status != GK_OK)
            gkpy_raise(state, status);
    }
    Py_XDECREF(source);
    capsule = kernel ? PyCapsule_New(kernel, "gpukit.jit.kernel", free_kernel_capsule) : NULL;
    if (kernel && !capsule)
        gk_kernel_free(kernel);
    int stored = capsule ? PyDict_SetItem(self->compiled, key, capsule) : -1;
    Py_XDECREF(capsule); /* the dict keeps it */
    Py_DECREF(key);
    return stored == 0 ? kernel : NULL;
}

/* ---- launching ----------------------------------------------------------- */

static PyObject *launch_call(PyObject *callable, PyObject *const *objects, size_t nargsf,
                             PyObject *kwnames)
{
    jit_launch_object *self = (jit_launch_object *)callable;
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(callable));
    int count = (int)PyVectorcall_NARGS(nargsf);
    if (kwnames && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_SetString(PyExc_TypeError, "gpukit kernels take their arguments positionally");
        return NULL;
    }
    if (count > 64) {
        PyErr_SetString(PyExc_TypeError, "a gpukit kernel takes at most 64 arguments");
        return NULL;
    }
    gk_device device;
    gk_stream *stream = NULL;
    if (launch_device(state, objects, count, &device) < 0 ||
        gkpy_stream_argument(state, self->stream, &stream) < 0)
        return NULL;
    launch_arg args[64];
    if (prepare_args(state, device, objects, count, args) < 0) {
        release_args(args, count);
        return NULL;
    }
    gk_kernel *kernel = compiled_kernel(state, self->kernel, device, args, count);
    gk_arg values[64];
    for (int i = 0; kernel && i < count; i++) {
        const launch_arg *a = &args[i];
        switch (a->type.kind) {
        case JIT_ARG_ARRAY:
            values[i] = gk_arg_view(((gkpy_array *)a->array)->array);
            break;
        case JIT_ARG_INT:
            values[i] = gk_arg_int64(a->value.i);
            break;
        case JIT_ARG_BOOL:
            values[i] = gk_arg_int32((int32_t)a->value.i);
            break;
        case JIT_ARG_FLOAT:
            values[i] = a->type.dtype == GK_FLOAT32 ? gk_arg_float32((float)a->value.f)
                                                    : gk_arg_float64(a->value.f);
            break;
        }
    }
    int result = kernel ? 0 : -1;
    if (kernel) {
        gk_status status;
        Py_BEGIN_ALLOW_THREADS
        status = gk_kernel_launch(kernel, self->grid, self->block, stream, count, values);
        Py_END_ALLOW_THREADS
        if (status != GK_OK) {
            gkpy_raise(state, status);
            result = -1;
        }
    }
    if (result == 0)
        result = write_back(state, args, count);
    release_args(args, count);
    return result == 0 ? Py_NewRef(Py_None) : NULL;
}

static PyObject *make_launch(gkpy_state *state, jit_kernel_object *kernel, const uint32_t grid[3],
                             const uint32_t block[3], PyObject *stream)
{
    if (kernel->device) {
        PyErr_SetString(PyExc_TypeError,
                        "a device function is not launched; call it from a @gpukit.jit kernel");
        return NULL;
    }
    jit_launch_object *self = PyObject_New(jit_launch_object, state->jit_launch_type);
    if (!self)
        return NULL;
    self->vectorcall = launch_call;
    self->kernel = (jit_kernel_object *)Py_NewRef(kernel);
    memcpy(self->grid, grid, sizeof self->grid);
    memcpy(self->block, block, sizeof self->block);
    self->stream = Py_NewRef(stream ? stream : Py_None);
    return (PyObject *)self;
}

static PyObject *launch_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"kernel", "blocks", "threads", "stream", NULL};
    PyObject *kernel, *blocks, *threads, *stream = Py_None;
    gkpy_state *state = gkpy_state_of_type(type);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OO|O:JitLaunch", keywords,
                                     state->jit_kernel_type, &kernel, &blocks, &threads, &stream))
        return NULL;
    uint32_t grid[3], block[3];
    gk_stream *unused;
    if (gkpy_launch_size(blocks, "blocks", grid) < 0 ||
        gkpy_launch_size(threads, "threads", block) < 0 ||
        gkpy_stream_argument(state, stream, &unused) < 0)
        return NULL;
    return make_launch(state, (jit_kernel_object *)kernel, grid, block, stream);
}

static void launch_dealloc(PyObject *self)
{
    jit_launch_object *launch = (jit_launch_object *)self;
    PyTypeObject *type = Py_TYPE(self);
    Py_XDECREF(launch->kernel);
    Py_XDECREF(launch->stream);
    PyObject_Free(self);
    Py_DECREF(type);
}

static PyObject *size_tuple(const uint32_t size[3])
{
    return Py_BuildValue("(III)", size[0], size[1], size[2]);
}

/* A launch pickles as its kernel and sizes (a stream stays behind: it
 * belongs to this process's device). */
static PyObject *launch_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    jit_launch_object *launch = (jit_launch_object *)self;
    return Py_BuildValue("(O(ONN))", Py_TYPE(self), launch->kernel, size_tuple(launch->grid),
                         size_tuple(launch->block));
}

static PyObject *launch_repr(PyObject *self)
{
    jit_launch_object *launch = (jit_launch_object *)self;
    PyObject *name = PyObject_GetAttrString(launch->kernel->function, "__name__");
    PyObject *text = name ? PyUnicode_FromFormat("<gpukit kernel %S[(%u, %u, %u), (%u, %u, %u)]>",
                                                 name, launch->grid[0], launch->grid[1],
                                                 launch->grid[2], launch->block[0],
                                                 launch->block[1], launch->block[2])
                          : NULL;
    Py_XDECREF(name);
    return text;
}

static PyMethodDef launch_methods[] = {
    {"__reduce__", launch_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef launch_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(jit_launch_object, vectorcall), READONLY,
     NULL},
    {"kernel", T_OBJECT_EX, offsetof(jit_launch_object, kernel), READONLY,
     "The gpukit.JitKernel launched."},
    {NULL, 0, 0, 0, NULL},
};

PyDoc_STRVAR(launch_doc,
"JitLaunch(kernel, blocks, threads, stream=None)\n"
"--\n\n"
"A @gpukit.jit kernel with its launch size, as kernel[blocks, threads]\n"
"makes it. Calling it runs the kernel on the device of its gpukit array\n"
"arguments (the default device when there are none); it pickles.");

static PyType_Slot launch_slots[] = {
    {Py_tp_doc, (void *)launch_doc},
    {Py_tp_new, launch_new},
    {Py_tp_dealloc, launch_dealloc},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_repr, launch_repr},
    {Py_tp_methods, launch_methods},
    {Py_tp_members, launch_members},
    {0, NULL},
};

static PyType_Spec launch_spec = {
    .name = "gpukit.JitLaunch",
    .basicsize = sizeof(jit_launch_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_VECTORCALL,
    .slots = launch_slots,
};

/* ---- gpukit.JitKernel ----------------------------------------------------- */

static PyObject *kernel_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"function", "device", NULL};
    PyObject *function;
    int device = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|p:JitKernel", keywords, &function,
                                     &device))
        return NULL;
    if (!PyFunction_Check(function)) {
        PyErr_Format(PyExc_TypeError,
                     "@gpukit.jit decorates a Python function (def ...), not %.100s",
                     Py_TYPE(function)->tp_name);
        return NULL;
    }
    jit_kernel_object *self = PyObject_New(jit_kernel_object, type);
    if (!self)
        return NULL;
    self->function = Py_NewRef(function);
    self->device = device;
    self->weakrefs = NULL;
    self->compiled = PyDict_New();
    if (!self->compiled) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void kernel_dealloc(PyObject *self)
{
    jit_kernel_object *kernel = (jit_kernel_object *)self;
    PyTypeObject *type = Py_TYPE(self);
    if (kernel->weakrefs)
        PyObject_ClearWeakRefs(self);
    Py_XDECREF(kernel->function);
    Py_XDECREF(kernel->compiled);
    PyObject_Free(self);
    Py_DECREF(type);
}

/* kernel[blocks, threads] or kernel[blocks, threads, stream]. */
static PyObject *kernel_getitem(PyObject *self, PyObject *config)
{
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(self));
    Py_ssize_t n = PyTuple_Check(config) ? PyTuple_GET_SIZE(config) : 0;
    if (n < 2 || n > 3) {
        PyErr_SetString(PyExc_TypeError,
                        "launch a kernel as kernel[blocks, threads](args...) (or "
                        "kernel[blocks, threads, stream]); blocks and threads are ints or "
                        "tuples of up to 3 ints");
        return NULL;
    }
    uint32_t grid[3], block[3];
    gk_stream *unused;
    PyObject *stream = n == 3 ? PyTuple_GET_ITEM(config, 2) : Py_None;
    if (gkpy_launch_size(PyTuple_GET_ITEM(config, 0), "blocks", grid) < 0 ||
        gkpy_launch_size(PyTuple_GET_ITEM(config, 1), "threads", block) < 0 ||
        gkpy_stream_argument(state, stream, &unused) < 0)
        return NULL;
    return make_launch(state, (jit_kernel_object *)self, grid, block, stream);
}

static PyObject *kernel_forall(PyObject *self, PyObject *arg)
{
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(self));
    long long n = PyLong_AsLongLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 1) {
        PyErr_Format(PyExc_ValueError, "forall(n) needs n >= 1, not %lld", n);
        return NULL;
    }
    long long blocks = (n + FORALL_BLOCK - 1) / FORALL_BLOCK;
    if (blocks > (long long)UINT32_MAX) {
        PyErr_Format(PyExc_ValueError, "forall(%lld) needs too many blocks", n);
        return NULL;
    }
    uint32_t grid[3] = {(uint32_t)blocks, 1, 1}, block[3] = {FORALL_BLOCK, 1, 1};
    return make_launch(state, (jit_kernel_object *)self, grid, block, NULL);
}

static PyObject *kernel_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)args;
    (void)kwargs;
    jit_kernel_object *kernel = (jit_kernel_object *)self;
    PyErr_SetString(PyExc_TypeError,
                    kernel->device ? "a device function runs only when a @gpukit.jit kernel "
                                     "calls it"
                                   : "the kernel's launch size is missing: launch it as "
                                     "kernel[blocks, threads](args...) or "
                                     "kernel.forall(n)(args...)");
    return NULL;
}

/* kernel.dialect_source(*args): what the kernel translates to for these
 * arguments (the dialect, before compiling), for reading and for tests. */
static PyObject *kernel_dialect_source(PyObject *self, PyObject *const *objects, Py_ssize_t n)
{
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(self));
    jit_kernel_object *kernel = (jit_kernel_object *)self;
    if (n > 64) {
        PyErr_SetString(PyExc_TypeError, "a gpukit kernel takes at most 64 arguments");
        return NULL;
    }
    gk_device device;
    launch_arg args[64];
    if (launch_device(state, objects, (int)n, &device) < 0)
        return NULL;
    if (prepare_args(state, device, objects, (int)n, args) < 0) {
        release_args(args, (int)n);
        return NULL;
    }
    char name[80];
    PyObject *source = translate(kernel, args, (int)n, name);
    release_args(args, (int)n);
    return source;
}

/* Whether `module.qualname` names this very kernel (the decorated
 * function's name in an importable module now holds the kernel). */
static bool importable(PyObject *self, PyObject *module_name, PyObject *qualname)
{
    if (!module_name || !qualname || PyUnicode_CompareWithASCIIString(module_name, "__main__") == 0)
        return false;
    PyObject *module = PyImport_GetModule(module_name);
    PyObject *found = module ? PyObject_GetAttr(module, qualname) : NULL;
    bool same = found == self;
    Py_XDECREF(module);
    Py_XDECREF(found);
    PyErr_Clear();
    return same;
}

/* How a kernel or a vectorized function pickles: by reference when it is
 * importable under its Python function's name (gpukit._jit._find imports
 * it again), else as `by_value` (stolen): the function and the options,
 * which cloudpickle (Dask's) sends by value for __main__ and notebooks. */
static PyObject *reduce_by_name(PyObject *self, PyObject *function, PyObject *by_value)
{
    PyObject *module_name = PyObject_GetAttrString(function, "__module__");
    PyObject *qualname = PyObject_GetAttrString(function, "__qualname__");
    PyErr_Clear();
    PyObject *result = NULL;
    if (importable(self, module_name, qualname)) {
        PyObject *jit = PyImport_ImportModule("gpukit._jit");
        PyObject *find = jit ? PyObject_GetAttrString(jit, "_find") : NULL;
        result = find ? Py_BuildValue("(O(OO))", find, module_name, qualname) : NULL;
        Py_XDECREF(find);
        Py_XDECREF(jit);
        Py_XDECREF(by_value);
    } else {
        /* By value, the function travels (cloudpickle keeps its attributes)
         * but its source file may not: the source goes with it. */
        if (!PyObject_HasAttrString(function, "__gpukit_source__")) {
            PyObject *inspect = PyImport_ImportModule("inspect");
            PyObject *source = inspect ? PyObject_CallMethod(inspect, "getsource", "O", function)
                                       : NULL;
            if (!source || PyObject_SetAttrString(function, "__gpukit_source__", source) < 0)
                PyErr_Clear(); /* then the receiving side says it cannot read it */
            Py_XDECREF(source);
            Py_XDECREF(inspect);
        }
        result = by_value;
    }
    Py_XDECREF(module_name);
    Py_XDECREF(qualname);
    return result;
}

static PyObject *kernel_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    jit_kernel_object *kernel = (jit_kernel_object *)self;
    return reduce_by_name(self, kernel->function,
                          Py_BuildValue("(O(OO))", Py_TYPE(self), kernel->function,
                                        kernel->device ? Py_True : Py_False));
}

static PyObject *kernel_repr(PyObject *self)
{
    jit_kernel_object *kernel = (jit_kernel_object *)self;
    PyObject *name = PyObject_GetAttrString(kernel->function, "__qualname__");
    PyObject *text = name ? PyUnicode_FromFormat("<gpukit.jit %s %S>",
                                                 kernel->device ? "device function" : "kernel",
                                                 name)
                          : NULL;
    Py_XDECREF(name);
    return text;
}

static PyObject *kernel_get_name(PyObject *self, void *unused)
{
    (void)unused;
    return PyObject_GetAttrString(((jit_kernel_object *)self)->function, "__name__");
}

static PyObject *kernel_get_device(PyObject *self, void *unused)
{
    (void)unused;
    return PyBool_FromLong(((jit_kernel_object *)self)->device);
}

static PyObject *kernel_get_signatures(PyObject *self, void *unused)
{
    (void)unused;
    return PyDict_Keys(((jit_kernel_object *)self)->compiled);
}

static PyMethodDef kernel_methods[] = {
    {"forall", kernel_forall, METH_O,
     "forall(n): a launch of n threads in blocks of 256, for kernels that index with "
     "grid(1) and check the bound."},
    {"dialect_source", (PyCFunction)(void (*)(void))kernel_dialect_source, METH_FASTCALL,
     "dialect_source(*args): the portable-dialect source the kernel translates to for these "
     "arguments."},
    {"__reduce__", kernel_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef kernel_getset[] = {
    {"__name__", kernel_get_name, NULL, "The Python function's name.", NULL},
    {"is_device_function", kernel_get_device, NULL,
     "True for @gpukit.jit(device=True): called from kernels, not launched.", NULL},
    {"signatures", kernel_get_signatures, NULL,
     "The (device, argument types...) this kernel object has compiled.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef kernel_members[] = {
    {"py_func", T_OBJECT_EX, offsetof(jit_kernel_object, function), READONLY,
     "The Python function (Numba's name)."},
    {"__wrapped__", T_OBJECT_EX, offsetof(jit_kernel_object, function), READONLY, NULL},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(jit_kernel_object, weakrefs), READONLY,
     NULL},
    {NULL, 0, 0, 0, NULL},
};

PyDoc_STRVAR(kernel_doc,
"JitKernel(function, device=False)\n"
"--\n\n"
"A Python function made a kernel by @gpukit.jit (see gpukit.jit).");

static PyType_Slot kernel_slots[] = {
    {Py_tp_doc, (void *)kernel_doc},
    {Py_tp_new, kernel_new},
    {Py_tp_dealloc, kernel_dealloc},
    {Py_tp_call, kernel_call},
    {Py_tp_repr, kernel_repr},
    {Py_mp_subscript, kernel_getitem},
    {Py_tp_methods, kernel_methods},
    {Py_tp_getset, kernel_getset},
    {Py_tp_members, kernel_members},
    {0, NULL},
};

static PyType_Spec kernel_spec = {
    .name = "gpukit.JitKernel",
    .basicsize = sizeof(jit_kernel_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = kernel_slots,
};

/* ---- gpukit.Vectorize (@gpukit.vectorize) ----------------------------------- */

/* Signatures and inputs of one vectorized function: at most this many. */
#define MAX_SIGNATURES 32
#define MAX_INPUTS 16

typedef struct vectorize_object {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *function;
    int nin;                 /* inputs: the signatures', else the function's parameters */
    int nsignatures;         /* 0: each call's input dtypes, the function's result type */
    gk_dtype signatures[MAX_SIGNATURES][MAX_INPUTS + 1]; /* result, then the inputs */
    PyObject *compiled;      /* dict: (device, dtypes...) -> (capsule of gk_kernel, result) */
} vectorize_object;

/* Parses "float32(float32, float32)" into dtypes[0] (the result) and the
 * inputs after it; returns how many inputs, or -1 with ValueError. */
static int parse_signature(const char *text, gk_dtype *dtypes)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    int count = 0;
    bool ok = open && close && close > open && close[1] == 0 && strlen(text) < sizeof buf;
    if (ok) {
        *open = 0;
        *close = 0;
        char *name = buf;
        while (*name == ' ')
            name++;
        char *end = name + strlen(name);
        while (end > name && end[-1] == ' ')
            *--end = 0;
        ok = gk_dtype_parse(name, &dtypes[0]) == GK_OK;
        for (char *item = open + 1; ok && *item;) {
            char *comma = strchr(item, ',');
            if (comma)
                *comma = 0;
            while (*item == ' ')
                item++;
            end = item + strlen(item);
            while (end > item && end[-1] == ' ')
                *--end = 0;
            ok = count < MAX_INPUTS && gk_dtype_parse(item, &dtypes[1 + count]) == GK_OK;
            count++;
            item = comma ? comma + 1 : item + strlen(item);
        }
    }
    if (!ok) {
        PyErr_Format(PyExc_ValueError,
                     "vectorize signature '%s' is not 'result(input, ...)' with gpukit dtype "
                     "names, like 'float32(float32, float32)' (at most %d inputs)",
                     text, MAX_INPUTS);
        return -1;
    }
    return count;
}

static PyObject *vectorize_call(PyObject *callable, PyObject *const *objects, size_t nargsf,
                                PyObject *kwnames);

static PyObject *vectorize_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"function", "signatures", NULL};
    PyObject *function, *signatures = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:Vectorize", keywords, &function,
                                     &signatures))
        return NULL;
    if (!PyFunction_Check(function)) {
        PyErr_Format(PyExc_TypeError, "@gpukit.vectorize decorates a Python function, not %.100s",
                     Py_TYPE(function)->tp_name);
        return NULL;
    }
    vectorize_object *self = PyObject_New(vectorize_object, type);
    if (!self)
        return NULL;
    self->vectorcall = vectorize_call;
    self->function = Py_NewRef(function);
    self->nsignatures = 0;
    self->compiled = PyDict_New();
    PyObject *code = PyFunction_GET_CODE(function);
    self->nin = (int)((PyCodeObject *)code)->co_argcount;
    PyObject *list = signatures == Py_None ? NULL : PySequence_Fast(signatures,
                                                                    "signatures must be a list of strings");
    int status = self->compiled && (signatures == Py_None || list) ? 0 : -1;
    for (Py_ssize_t i = 0; status == 0 && list && i < PySequence_Fast_GET_SIZE(list); i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(list, i);
        const char *text = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
        int nin = -1;
        if (!text)
            PyErr_SetString(PyExc_TypeError, "each vectorize signature is a string, like "
                                             "'float32(float32, float32)'");
        else if (i == MAX_SIGNATURES)
            PyErr_Format(PyExc_ValueError, "at most %d signatures", MAX_SIGNATURES);
        else
            nin = parse_signature(text, self->signatures[i]);
        if (nin >= 0 && nin != self->nin)
            PyErr_Format(PyExc_TypeError, "signature '%s' has %d inputs but the function takes "
                         "%d", text, nin, self->nin), nin = -1;
        status = nin < 0 ? -1 : 0;
        self->nsignatures += status == 0;
    }
    Py_XDECREF(list);
    if (status < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void vectorize_dealloc(PyObject *self)
{
    vectorize_object *v = (vectorize_object *)self;
    PyTypeObject *type = Py_TYPE(self);
    Py_XDECREF(v->function);
    Py_XDECREF(v->compiled);
    PyObject_Free(self);
    Py_DECREF(type);
}

/* How an input counts in choosing the dtypes: a Python bool, int or float
 * is a "weak" scalar (NumPy 2's rule), whose kind matters but not its size,
 * so 0.1 beside a float64 array is float64 and beside a float32 one
 * float32; anything else has its array's dtype. */
typedef enum weakness { STRONG, WEAK_BOOL, WEAK_INT, WEAK_FLOAT } weakness;

static weakness weakness_of(PyObject *object)
{
    if (PyBool_Check(object))
        return WEAK_BOOL;
    /* Exact types: NumPy's float64 scalar subclasses float but is strong. */
    if (PyLong_CheckExact(object))
        return WEAK_INT;
    return PyFloat_CheckExact(object) ? WEAK_FLOAT : STRONG;
}

/* Whether the Python int `object` is a value of the integer `dtype`. */
static bool int_fits(PyObject *object, gk_dtype dtype)
{
    int overflow;
    long long value = PyLong_AsLongLongAndOverflow(object, &overflow);
    if (overflow != 0) {
        /* Past int64: only uint64 holds it, up to 2^64 - 1. */
        bool fits = overflow > 0 && dtype == GK_UINT64;
        fits = fits && !(PyLong_AsUnsignedLongLong(object) == (unsigned long long)-1 &&
                         PyErr_Occurred());
        PyErr_Clear();
        return fits;
    }
    int bits = 8 * (int)gk_dtype_size(dtype);
    if (gk_dtype_is_unsigned(dtype))
        return value >= 0 && (bits == 64 || value < (1LL << bits));
    return bits == 64 || (value >= -(1LL << (bits - 1)) && value < (1LL << (bits - 1)));
}

/* Whether a weak scalar can be a `dtype` value (NumPy 2): a bool any
 * dtype's, an int any number dtype's that holds it, a float a float's. */
static bool weak_fits(PyObject *object, weakness weak, gk_dtype dtype)
{
    if (weak == WEAK_BOOL || gk_dtype_is_float(dtype) || gk_dtype_is_complex(dtype))
        return true;
    return weak == WEAK_INT && dtype != GK_BOOL && int_fits(object, dtype);
}

/* The dtype of a weak scalar in a call without signatures, beside the
 * strong inputs' promoted dtype `strong` (GK_DTYPE_COUNT: none): that
 * dtype when the scalar fits it (2 beside int32 is int32, 0.1 beside
 * float32 float32), else the scalar's own (int64, float64, bool). */
static gk_dtype weak_dtype(PyObject *object, weakness weak, gk_dtype strong)
{
    gk_dtype own = weak == WEAK_BOOL ? GK_BOOL : weak == WEAK_INT ? GK_INT64 : GK_FLOAT64;
    if (weak == WEAK_BOOL || strong == GK_DTYPE_COUNT || strong == GK_BOOL)
        return own;
    return weak_fits(object, weak, strong) ? strong : own;
}

/* Without signatures: the inputs' own dtypes (weak scalars' by weak_dtype)
 * and GK_DTYPE_COUNT for the result, into dtypes. */
static void own_dtypes(int nin, PyObject *const *objects, const weakness *weak,
                       const gk_dtype *have, gk_dtype *dtypes)
{
    gk_dtype strong = GK_DTYPE_COUNT;
    for (int k = 0; k < nin; k++)
        if (weak[k] == STRONG)
            strong = strong == GK_DTYPE_COUNT ? have[k] : gk_promote_types(strong, have[k]);
    dtypes[0] = GK_DTYPE_COUNT;
    for (int k = 0; k < nin; k++)
        dtypes[k + 1] = weak[k] == STRONG ? have[k] : weak_dtype(objects[k], weak[k], strong);
}

/* The signature the inputs take: the first whose inputs each input can be
 * cast to safely (Numba's rule; a weak scalar by weak_fits), written to
 * dtypes (result first); without signatures, own_dtypes. have: the strong
 * inputs' dtypes. */
static int choose_signature(vectorize_object *self, PyObject *const *objects,
                            const weakness *weak, const gk_dtype *have, gk_dtype *dtypes)
{
    if (self->nsignatures == 0) {
        own_dtypes(self->nin, objects, weak, have, dtypes);
        return 0;
    }
    for (int s = 0; s < self->nsignatures; s++) {
        bool fits = true;
        for (int k = 0; k < self->nin && fits; k++) {
            gk_dtype want = self->signatures[s][1 + k];
            fits = weak[k] == STRONG ? gk_can_cast(have[k], want)
                                     : weak_fits(objects[k], weak[k], want);
        }
        if (fits) {
            memcpy(dtypes, self->signatures[s], sizeof *dtypes * (size_t)(self->nin + 1));
            return 0;
        }
    }
    static const char *const weak_names[] = {"", "bool", "int", "float"};
    char text[256] = "";
    for (int k = 0; k < self->nin; k++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s%s", k ? ", " : "",
                 weak[k] == STRONG ? gk_dtype_name(have[k]) : "Python ",
                 weak[k] == STRONG ? "" : weak_names[weak[k]]);
    PyErr_Format(PyExc_TypeError,
                 "no signature of this vectorized function takes (%s); add one, or cast the "
                 "inputs", text);
    return -1;
}

/* The compiled kernel for (device, dtypes); dtypes[0] may be GK_DTYPE_COUNT
 * (the function's result type), and is set. Borrowed from the cache. */
static gk_kernel *vectorize_kernel_for(gkpy_state *state, vectorize_object *self,
                                       gk_device device, gk_dtype *dtypes)
{
    char name[GK_DEVICE_NAME_MAX];
    PyObject *key = PyTuple_New(self->nin + 2);
    if (!key)
        return NULL;
    PyTuple_SET_ITEM(key, 0, PyUnicode_FromString(gk_device_name(device, name, sizeof name)));
    for (int k = 0; k <= self->nin; k++)
        PyTuple_SET_ITEM(key, k + 1, PyLong_FromLong(dtypes[k]));
    PyObject *entry = PyDict_GetItemWithError(self->compiled, key);
    if (entry) {
        Py_DECREF(key);
        dtypes[0] = (gk_dtype)PyLong_AsLong(PyTuple_GET_ITEM(entry, 1));
        return PyCapsule_GetPointer(PyTuple_GET_ITEM(entry, 0), "gpukit.jit.kernel");
    }
    char kernel_name[80];
    PyObject *source = PyErr_Occurred() ? NULL
                                        : gkpy_jit_vectorize(self->function, self->nin,
                                                             dtypes + 1, &dtypes[0], kernel_name);
    gk_kernel *kernel = NULL;
    if (source) {
        const char *text = PyUnicode_AsUTF8(source);
        gk_status status;
        Py_BEGIN_ALLOW_THREADS
        status = gk_kernel_compile(device, GK_KERNEL_PORTABLE, text, kernel_name,
                                   compile_options(device), &kernel);
        Py_END_ALLOW_THREADS
        if (status != GK_OK)
            gkpy_raise(state, status);
        Py_DECREF(source);
    }
    PyObject *capsule = kernel ? PyCapsule_New(kernel, "gpukit.jit.kernel", free_kernel_capsule)
                               : NULL;
    if (kernel && !capsule)
        gk_kernel_free(kernel);
    entry = capsule ? Py_BuildValue("(Ni)", capsule, (int)dtypes[0]) : NULL;
    int stored = entry ? PyDict_SetItem(self->compiled, key, entry) : -1;
    Py_XDECREF(entry);
    Py_DECREF(key);
    return stored == 0 ? kernel : NULL;
}

/* The shape the inputs broadcast to; with out= given, out's shape, which
 * they must broadcast to (NumPy's rule: out is never stretched, and an
 * out smaller or larger along an axis would be read past or half
 * written). -1 with ValueError when they do not. */
static int run_shape(gkpy_state *state, int nin, gk_array *const *in, const gk_array *out,
                     int *ndim, int64_t *shape)
{
    gk_status status = gk_broadcast_shapes(nin, (const gk_array *const *)in, ndim, shape);
    if (status != GK_OK) {
        gkpy_raise(state, status);
        return -1;
    }
    if (!out)
        return 0;
    int n = gk_array_ndim(out);
    const int64_t *want = gk_array_shape(out);
    bool fits = *ndim <= n;
    for (int i = 0; fits && i < *ndim; i++)
        fits = shape[i] == 1 || shape[i] == want[n - *ndim + i];
    if (!fits) {
        char a[160], b[160];
        PyErr_Format(PyExc_ValueError, "out= has shape %s, which the inputs' broadcast shape "
                     "%s does not broadcast to", gk_shape_text(n, want, a, sizeof a),
                     gk_shape_text(*ndim, shape, b, sizeof b));
        return -1;
    }
    *ndim = n;
    memcpy(shape, want, sizeof *shape * (size_t)n);
    status = gk_check_writable(out, "out=");
    if (status != GK_OK)
        gkpy_raise(state, status);
    return status == GK_OK ? 0 : -1;
}

/* NumPy's same_kind casting, which out= allows: safe, or to a kind no
 * lower in bool < unsigned < signed < float < complex. */
static bool same_kind(gk_dtype from, gk_dtype to)
{
    const char *kinds = "buifc";
    return gk_can_cast(from, to) ||
           strchr(kinds, gkpy_dtype_kind(from)) <= strchr(kinds, gkpy_dtype_kind(to));
}

/* Runs the kernel over `in` broadcast to `shape` into `target`, which has
 * that shape. */
static gk_status vectorize_run(gk_kernel *kernel, int nin, gk_array *const *in, int ndim,
                               const int64_t *shape, gk_array *target)
{
    gk_array *views[MAX_INPUTS] = {NULL};
    gk_status status = GK_OK;
    for (int k = 0; status == GK_OK && k < nin; k++)
        status = gk_broadcast_to(in[k], ndim, shape, &views[k]);
    int64_t items = gk_array_size(target);
    if (status == GK_OK && items > 0) {
        gk_arg args[MAX_INPUTS + 1];
        args[0] = gk_arg_view(target);
        for (int k = 0; k < nin; k++)
            args[k + 1] = gk_arg_view(views[k]);
        /* The kernel strides over the elements, so any grid covers them. */
        int64_t blocks = (items + 255) / 256;
        uint32_t grid[3] = {(uint32_t)(blocks < (1 << 20) ? blocks : (1 << 20)), 1, 1};
        uint32_t block[3] = {256, 1, 1};
        status = gk_kernel_launch(kernel, grid, block, NULL, nin + 1, args);
    }
    for (int k = 0; k < nin; k++)
        gk_array_free(views[k]);
    return status;
}

/* Whether the kernel must write a temporary rather than `out` itself: out
 * has another dtype (cast afterwards), or an input overlaps its memory as
 * other elements (x[::-1] into x), where the kernel's order of reads and
 * writes would show (NumPy computes as if into a temporary). */
static bool needs_temporary(int nin, gk_array *const *in, const gk_array *out, gk_dtype result)
{
    if (gk_array_dtype(out) != result)
        return true;
    gk_operand target = gk_array_operand(out);
    gk_loop loop = gk_array_loop(out);
    bool conflict = false;
    for (int k = 0; k < nin && !conflict && gk_array_size(out) > 0; k++) {
        gk_operand operand = gk_broadcast_operand(in[k], loop.ndim, loop.shape);
        conflict = gk_operands_conflict(&operand, &target, &loop);
    }
    return conflict;
}

/* Runs the kernel over `in` into *out, made when NULL; a given out has the
 * shape run_shape chose. */
static gk_status vectorize_into(gk_kernel *kernel, gk_device device, int nin,
                                gk_array *const *in, int ndim, const int64_t *shape,
                                gk_dtype result, gk_array **out)
{
    bool temporary = *out && needs_temporary(nin, in, *out, result);
    gk_array *target = *out && !temporary ? *out : NULL;
    gk_status status = target ? GK_OK : gk_empty(device, result, ndim, shape, &target);
    if (status == GK_OK)
        status = vectorize_run(kernel, nin, in, ndim, shape, target);
    if (status == GK_OK && temporary)
        status = gk_assign(*out, target);
    if (!*out && status == GK_OK)
        *out = target;
    else if (target != *out)
        gk_array_free(target);
    return status;
}

/* Each input as an array on `device` into inputs (new references): an
 * array's own dtype, or a weak scalar's (weakness_of) once dtypes[1...]
 * are chosen, when `weak_pass`. have: the strong inputs' dtypes. */
static int convert_inputs(gkpy_state *state, int nin, PyObject *const *objects,
                          const weakness *weak, bool weak_pass, const gk_dtype *dtypes,
                          gk_device device, PyObject **inputs, gk_dtype *have)
{
    for (int k = 0; k < nin; k++) {
        if ((weak[k] != STRONG) != weak_pass)
            continue;
        inputs[k] = gkpy_asarray(state, objects[k], weak_pass ? &dtypes[k + 1] : NULL,
                                 &device, -1);
        if (!inputs[k])
            return -1;
        have[k] = gk_array_dtype(((gkpy_array *)inputs[k])->array);
    }
    return 0;
}

/* out= checked: a gpukit array (or None, NULL) into *out. */
static int out_argument(gkpy_state *state, PyObject *object, PyObject **out)
{
    *out = object == Py_None ? NULL : object;
    if (*out && !gkpy_is_array(state, *out)) {
        PyErr_SetString(PyExc_TypeError, "out= takes a gpukit array");
        return -1;
    }
    return 0;
}

/* The inputs cast to dtypes[1...] and run into out (NULL: a new array):
 * the result array, a new reference. */
static PyObject *vectorize_launch(gkpy_state *state, gk_kernel *kernel, gk_device device,
                                  int nin, PyObject *const *inputs, const gk_dtype *dtypes,
                                  PyObject *out_object)
{
    gk_array *out = out_object ? ((gkpy_array *)out_object)->array : NULL;
    if (out && !same_kind(dtypes[0], gk_array_dtype(out))) {
        PyErr_Format(PyExc_TypeError, "out= is %s but the function gives %s, which NumPy's "
                     "same_kind rule does not cast to it", gk_dtype_name(gk_array_dtype(out)),
                     gk_dtype_name(dtypes[0]));
        return NULL;
    }
    gk_array *cast[MAX_INPUTS] = {NULL};
    gk_status run = GK_OK;
    for (int k = 0; run == GK_OK && k < nin; k++) {
        gk_array *a = ((gkpy_array *)inputs[k])->array;
        cast[k] = a;
        if (gk_array_dtype(a) != dtypes[k + 1])
            run = gk_cast(a, dtypes[k + 1], &cast[k]);
    }
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    PyObject *result = NULL;
    if (run != GK_OK) {
        gkpy_raise(state, run);
    } else if (run_shape(state, nin, cast, out, &ndim, shape) == 0) {
        gk_array *made = out;
        Py_BEGIN_ALLOW_THREADS
        run = vectorize_into(kernel, device, nin, cast, ndim, shape, dtypes[0], &made);
        Py_END_ALLOW_THREADS
        if (run != GK_OK)
            gkpy_raise(state, run);
        else
            result = out ? Py_NewRef(out_object) : gkpy_array_wrap(state, made);
    }
    for (int k = 0; k < nin; k++)
        if (cast[k] && cast[k] != ((gkpy_array *)inputs[k])->array)
            gk_array_free(cast[k]);
    return result;
}

static PyObject *vectorize_call(PyObject *callable, PyObject *const *objects, size_t nargsf,
                                PyObject *kwnames)
{
    vectorize_object *self = (vectorize_object *)callable;
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(callable));
    int count = (int)PyVectorcall_NARGS(nargsf);
    PyObject *out_object = NULL;
    for (Py_ssize_t i = 0; kwnames && i < PyTuple_GET_SIZE(kwnames); i++) {
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "out") != 0) {
            PyErr_Format(PyExc_TypeError, "a vectorized function takes only out= by keyword, "
                         "not %U", PyTuple_GET_ITEM(kwnames, i));
            return NULL;
        }
        out_object = objects[count + i];
    }
    if (count != self->nin || count > MAX_INPUTS) {
        PyErr_Format(PyExc_TypeError, "this vectorized function takes %d inputs, got %d",
                     self->nin, count);
        return NULL;
    }
    gk_device device;
    if (out_argument(state, out_object, &out_object) < 0 ||
        launch_device(state, objects, count, &device) < 0)
        return NULL;
    if (out_object)
        device = gk_array_device(((gkpy_array *)out_object)->array);
    PyObject *inputs[MAX_INPUTS] = {NULL};
    gk_dtype have[MAX_INPUTS], dtypes[MAX_INPUTS + 1];
    weakness weak[MAX_INPUTS];
    for (int k = 0; k < count; k++)
        weak[k] = weakness_of(objects[k]);
    int status = convert_inputs(state, count, objects, weak, false, dtypes, device, inputs, have);
    if (status == 0)
        status = choose_signature(self, objects, weak, have, dtypes);
    if (status == 0)
        status = convert_inputs(state, count, objects, weak, true, dtypes, device, inputs, have);
    gk_kernel *kernel = status == 0 ? vectorize_kernel_for(state, self, device, dtypes) : NULL;
    PyObject *result = kernel ? vectorize_launch(state, kernel, device, count, inputs, dtypes,
                                                 out_object)
                              : NULL;
    for (int k = 0; k < count; k++)
        Py_XDECREF(inputs[k]);
    return result;
}

static PyObject *vectorize_get_signatures(PyObject *self, void *unused)
{
    (void)unused;
    vectorize_object *v = (vectorize_object *)self;
    PyObject *list = PyList_New(0);
    for (int s = 0; list && s < v->nsignatures; s++) {
        char text[512];
        snprintf(text, sizeof text, "%s(", gk_dtype_name(v->signatures[s][0]));
        for (int k = 0; k < v->nin; k++)
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", k ? ", " : "",
                     gk_dtype_name(v->signatures[s][1 + k]));
        strncat(text, ")", sizeof text - strlen(text) - 1);
        PyObject *item = PyUnicode_FromString(text);
        if (!item || PyList_Append(list, item) < 0)
            Py_CLEAR(list);
        Py_XDECREF(item);
    }
    return list;
}

static PyObject *vectorize_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    vectorize_object *v = (vectorize_object *)self;
    PyObject *signatures = v->nsignatures ? vectorize_get_signatures(self, NULL) : Py_NewRef(Py_None);
    PyObject *by_value = signatures ? Py_BuildValue("(O(ON))", Py_TYPE(self), v->function,
                                                    signatures)
                                    : NULL;
    return by_value ? reduce_by_name(self, v->function, by_value) : NULL;
}

static PyMethodDef vectorize_methods[] = {
    {"__reduce__", vectorize_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef vectorize_getset[] = {
    {"signatures", vectorize_get_signatures, NULL, "The declared signatures, as text.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef vectorize_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(vectorize_object, vectorcall), READONLY, NULL},
    {"py_func", T_OBJECT_EX, offsetof(vectorize_object, function), READONLY,
     "The Python function."},
    {"nin", T_INT, offsetof(vectorize_object, nin), READONLY, "How many inputs it takes."},
    {NULL, 0, 0, 0, NULL},
};

PyDoc_STRVAR(vectorize_doc,
"Vectorize(function, signatures=None)\n"
"--\n\n"
"A scalar Python function made elementwise by @gpukit.vectorize (see\n"
"gpukit.vectorize): called with arrays (and scalars), it broadcasts them and\n"
"returns a new array on their device, or writes into out=.");

static PyType_Slot vectorize_slots[] = {
    {Py_tp_doc, (void *)vectorize_doc},
    {Py_tp_new, vectorize_new},
    {Py_tp_dealloc, vectorize_dealloc},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_methods, vectorize_methods},
    {Py_tp_getset, vectorize_getset},
    {Py_tp_members, vectorize_members},
    {0, NULL},
};

static PyType_Spec vectorize_spec = {
    .name = "gpukit.Vectorize",
    .basicsize = sizeof(vectorize_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_VECTORCALL,
    .slots = vectorize_slots,
};

int gkpy_jit_init(PyObject *module, gkpy_state *state)
{
    state->jit_kernel_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &kernel_spec, NULL);
    if (!state->jit_kernel_type || PyModule_AddType(module, state->jit_kernel_type) < 0)
        return -1;
    state->jit_launch_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &launch_spec, NULL);
    if (!state->jit_launch_type || PyModule_AddType(module, state->jit_launch_type) < 0)
        return -1;
    state->vectorize_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &vectorize_spec, NULL);
    if (!state->vectorize_type || PyModule_AddType(module, state->vectorize_type) < 0)
        return -1;
    return 0;
}
