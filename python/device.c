/* gpukit.device: where arrays live ("cpu", "cuda:0", "opencl:0:0"), equal
 * to its name; a context manager that makes it the default device, as
 * `with torch.device("cuda:0"):` does. Also devices(), default_device()
 * and set_default_device(). */
#include "gkpy.h"

typedef struct device_object {
    PyObject_HEAD
    gk_device device;
} device_object;

static gk_device device_of(PyObject *self)
{
    return ((device_object *)self)->device;
}

/* The devices of the `with` blocks open in this context (a new reference to
 * a tuple, innermost last), or NULL with an exception. */
static PyObject *open_blocks(gkpy_state *state)
{
    PyObject *blocks = NULL;
    if (PyContextVar_Get(state->device_context, NULL, &blocks) < 0)
        return NULL;
    return blocks ? blocks : PyTuple_New(0);
}

gk_device gkpy_default_device(gkpy_state *state)
{
    gk_device device = state->default_device;
    PyObject *blocks = NULL;
    if (PyContextVar_Get(state->device_context, NULL, &blocks) < 0) {
        PyErr_Clear(); /* only a broken variable fails; the default stands */
        return device;
    }
    if (blocks && PyTuple_GET_SIZE(blocks) > 0)
        device = device_of(PyTuple_GET_ITEM(blocks, PyTuple_GET_SIZE(blocks) - 1));
    Py_XDECREF(blocks);
    return device;
}

static int parse_name(PyObject *name, gk_device *device)
{
    const char *text = PyUnicode_AsUTF8(name);
    if (!text)
        return -1;
    if (gk_device_parse(text, device) != GK_OK) {
        PyErr_Format(PyExc_ValueError, "%s (gpukit.devices() lists them)", gk_last_error());
        return -1;
    }
    return 0;
}

int gkpy_device_from_object(gkpy_state *state, PyObject *object, gk_device *device)
{
    if (object == NULL || object == Py_None) {
        *device = gkpy_default_device(state);
        return 0;
    }
    if (Py_IS_TYPE(object, state->device_type)) {
        *device = ((device_object *)object)->device;
        return 0;
    }
    if (PyUnicode_Check(object))
        return parse_name(object, device);
    PyErr_Format(PyExc_TypeError,
                 "expected a device such as \"cuda:0\" or gpukit.device(\"cpu\"), not %.100s",
                 Py_TYPE(object)->tp_name);
    return -1;
}

int gkpy_optional_device(gkpy_state *state, PyObject *object, gk_device *device)
{
    if (!object || object == Py_None)
        return 0;
    return gkpy_device_from_object(state, object, device) < 0 ? -1 : 1;
}

PyObject *gkpy_device_object(gkpy_state *state, gk_device device)
{
    device_object *self = PyObject_New(device_object, state->device_type);
    if (self)
        self->device = device;
    return (PyObject *)self;
}

PyDoc_STRVAR(device_doc,
"device(name, index=None)\n"
"--\n\n"
"A compute device: device(\"cpu\"), device(\"cuda:0\"), device(\"cuda\", 1),\n"
"device(\"opencl:0:0\") (OpenCL platform 0, device 0).\n\n"
"Equal to its name (device(\"cuda:0\") == \"cuda:0\"). The device need not\n"
"exist until something runs there; gpukit.devices() lists those that do.\n"
"As a context manager it is the default device inside the block, for the\n"
"thread (or asyncio task) that opened it:\n\n"
"    with gpukit.device(\"cuda:0\"):\n"
"        x = gpukit.zeros((3, 3))   # on cuda:0\n");

static PyObject *device_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"name", "index", NULL};
    PyObject *name, *index = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:device", keywords, &name, &index))
        return NULL;
    gkpy_state *state = gkpy_state_of_type(type);
    if (Py_IS_TYPE(name, state->device_type) && index == Py_None)
        return Py_NewRef(name);
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "device(): the name must be a str, not %.100s",
                     Py_TYPE(name)->tp_name);
        return NULL;
    }
    gk_device device;
    if (index == Py_None) {
        if (parse_name(name, &device) < 0)
            return NULL;
    } else {
        long n = PyLong_AsLong(index);
        if (n == -1 && PyErr_Occurred())
            return NULL;
        PyObject *full = PyUnicode_FromFormat("%U:%ld", name, n);
        if (!full)
            return NULL;
        int failed = parse_name(full, &device);
        Py_DECREF(full);
        if (failed)
            return NULL;
    }
    return gkpy_device_object(state, device);
}

static PyObject *device_str(PyObject *self)
{
    char name[GK_DEVICE_NAME_MAX];
    return PyUnicode_FromString(gk_device_name(device_of(self), name, sizeof name));
}

static PyObject *device_repr(PyObject *self)
{
    char name[GK_DEVICE_NAME_MAX];
    return PyUnicode_FromFormat("device('%s')", gk_device_name(device_of(self), name, sizeof name));
}

static Py_hash_t device_hash(PyObject *self)
{
    PyObject *name = device_str(self);
    if (!name)
        return -1;
    Py_hash_t hash = PyObject_Hash(name);
    Py_DECREF(name);
    return hash;
}

static PyObject *device_richcompare(PyObject *self, PyObject *other, int op)
{
    if (op != Py_EQ && op != Py_NE)
        Py_RETURN_NOTIMPLEMENTED;
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(self));
    gk_device theirs;
    if (Py_IS_TYPE(other, state->device_type))
        theirs = device_of(other);
    else if (!PyUnicode_Check(other) || parse_name(other, &theirs) < 0) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    bool equal = gk_device_equal(device_of(self), theirs);
    return PyBool_FromLong(equal == (op == Py_EQ));
}

static PyObject *device_get_type(PyObject *self, void *closure)
{
    (void)closure;
    static const char *const kinds[] = {"cpu", "cuda", "opencl"};
    return PyUnicode_FromString(kinds[device_of(self).kind]);
}

static PyObject *device_get_index(PyObject *self, void *closure)
{
    (void)closure;
    gk_device device = device_of(self);
    if (device.kind == GK_DEVICE_CPU)
        Py_RETURN_NONE;
    return PyLong_FromLong(device.index);
}

static PyObject *device_get_platform(PyObject *self, void *closure)
{
    (void)closure;
    gk_device device = device_of(self);
    if (device.kind != GK_DEVICE_OPENCL)
        Py_RETURN_NONE;
    return PyLong_FromLong(device.platform);
}

static PyObject *device_describe(PyObject *self, PyObject *unused)
{
    (void)unused;
    char text[256];
    gk_status status = gk_device_describe(device_of(self), text, sizeof text);
    if (status != GK_OK)
        return gkpy_raise(gkpy_state_of_type(Py_TYPE(self)), status);
    return PyUnicode_FromString(text);
}

static PyObject *device_mem_get_info(PyObject *self, PyObject *unused)
{
    (void)unused;
    uint64_t free_bytes = 0, total_bytes = 0;
    gk_status status = gk_device_memory(device_of(self), &free_bytes, &total_bytes);
    if (status != GK_OK)
        return gkpy_raise(gkpy_state_of_type(Py_TYPE(self)), status);
    return Py_BuildValue("(KK)", (unsigned long long)free_bytes, (unsigned long long)total_bytes);
}

/* fn on the device, without the GIL (it may wait for the device). */
static PyObject *on_self(PyObject *self, gk_status (*fn)(gk_device))
{
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = fn(device_of(self));
    Py_END_ALLOW_THREADS
    if (status != GK_OK)
        return gkpy_raise(gkpy_state_of_type(Py_TYPE(self)), status);
    Py_RETURN_NONE;
}

static PyObject *device_synchronize(PyObject *self, PyObject *unused)
{
    (void)unused;
    return on_self(self, gk_device_synchronize);
}

/* memory_stats(reset_peak): the figures as a dict of ints. */
static PyObject *memory_stats_of(PyObject *self, bool reset_peak)
{
    gk_memory_stats stats;
    gk_status status;
    /* without the GIL: the pool's lock may be held across a driver call */
    Py_BEGIN_ALLOW_THREADS
    status = gk_device_memory_stats(device_of(self), reset_peak, &stats);
    Py_END_ALLOW_THREADS
    if (status != GK_OK)
        return gkpy_raise(gkpy_state_of_type(Py_TYPE(self)), status);
    return Py_BuildValue("{sKsKsKsKsK}", "in_use_bytes", (unsigned long long)stats.in_use_bytes,
                         "peak_in_use_bytes", (unsigned long long)stats.peak_in_use_bytes,
                         "cached_bytes", (unsigned long long)stats.cached_bytes,
                         "reserved_bytes",
                         (unsigned long long)(stats.in_use_bytes + stats.cached_bytes),
                         "driver_allocations", (unsigned long long)stats.driver_allocations);
}

static PyObject *device_memory_stats(PyObject *self, PyObject *unused)
{
    (void)unused;
    return memory_stats_of(self, false);
}

static PyObject *device_reset_peak_memory_stats(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *stats = memory_stats_of(self, true);
    if (!stats)
        return NULL;
    Py_DECREF(stats);
    Py_RETURN_NONE;
}

static PyObject *device_empty_cache(PyObject *self, PyObject *unused)
{
    (void)unused;
    return on_self(self, gk_device_empty_cache);
}

static PyObject *device_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    /* Each thread (and asyncio task) has its own blocks, as with torch.device:
     * a `with` in one thread never moves another thread's arrays. */
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(self));
    PyObject *blocks = open_blocks(state);
    if (!blocks)
        return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(blocks);
    PyObject *inner = PyTuple_New(count + 1);
    for (Py_ssize_t i = 0; inner && i < count; i++)
        PyTuple_SET_ITEM(inner, i, Py_NewRef(PyTuple_GET_ITEM(blocks, i)));
    Py_DECREF(blocks);
    if (!inner)
        return NULL;
    PyTuple_SET_ITEM(inner, count, Py_NewRef(self));
    PyObject *token = PyContextVar_Set(state->device_context, inner);
    Py_DECREF(inner);
    if (!token)
        return NULL;
    Py_DECREF(token);
    return Py_NewRef(self);
}

static PyObject *device_exit(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)args;
    (void)nargs;
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(self));
    PyObject *blocks = open_blocks(state);
    if (!blocks)
        return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(blocks);
    PyObject *outer = PyTuple_GetSlice(blocks, 0, count > 0 ? count - 1 : 0);
    Py_DECREF(blocks);
    PyObject *token = outer ? PyContextVar_Set(state->device_context, outer) : NULL;
    Py_XDECREF(outer);
    if (!token)
        return NULL;
    Py_DECREF(token);
    Py_RETURN_FALSE;
}

static PyObject *device_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *name = device_str(self);
    if (!name)
        return NULL;
    return Py_BuildValue("(O(N))", (PyObject *)Py_TYPE(self), name);
}

static PyGetSetDef device_getset[] = {
    {"type", device_get_type, NULL, "The kind of device: 'cpu', 'cuda' or 'opencl'.", NULL},
    {"index", device_get_index, NULL,
     "The device's number within its kind (cuda:N -> N, opencl:P:D -> D); None for the CPU.",
     NULL},
    {"platform", device_get_platform, NULL,
     "The OpenCL platform number (opencl:P:D -> P); None for other devices.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef device_methods[] = {
    {"describe", device_describe, METH_NOARGS,
     "describe($self, /)\n--\n\nA description for people, e.g. 'NVIDIA H100 80GB HBM3' or the CPU's "
     "model and threads. Raises GPUError when the device is not there."},
    {"mem_get_info", device_mem_get_info, METH_NOARGS,
     "mem_get_info($self, /)\n--\n\n(free, total) memory of the device in bytes (the CPU: available "
     "and total RAM)."},
    {"synchronize", device_synchronize, METH_NOARGS,
     "synchronize($self, /)\n--\n\nWaits until all work queued on the device has finished."},
    {"memory_stats", device_memory_stats, METH_NOARGS,
     "memory_stats($self, /)\n--\n\nWhat gpukit's arrays take of the device's memory, in a "
     "dict:\nin_use_bytes (arrays, and temporaries of queued work), peak_in_use_bytes (the "
     "most\nin use at once since the start or reset_peak_memory_stats()), cached_bytes "
     "(freed,\nkept by the device's pool for reuse), reserved_bytes (in use + cached: what "
     "nvidia-smi\nshows gpukit holding) and driver_allocations (memory asked of the driver so "
     "far).\nPyTorch's torch.cuda.memory_allocated/max_memory_allocated/memory_reserved. A GPU "
     "\nthis process never used reads 0s. The CPU keeps freed arrays from 32 MiB (up to "
     "four,\n1 GiB at most) for the next array of their size, whose pages are then already "
     "there."},
    {"reset_peak_memory_stats", device_reset_peak_memory_stats, METH_NOARGS,
     "reset_peak_memory_stats($self, /)\n--\n\nRestarts peak_in_use_bytes from what is in use "
     "now, to measure one step's peak."},
    {"empty_cache", device_empty_cache, METH_NOARGS,
     "empty_cache($self, /)\n--\n\nGives the memory the device's pool keeps in wholly free "
     "chunks back to the\ndriver (which waits for queued work), so other processes and libraries "
     "(PyTorch,\nCuPy) can have it (torch.cuda.empty_cache(), CuPy's free_all_blocks()). Free "
     "blocks\nin chunks that arrays still use stay cached. On the CPU, the kept blocks go "
     "back,\nand malloc gives the free memory it can back to the system."},
    {"__enter__", device_enter, METH_NOARGS,
     "__enter__($self, /)\n--\n\nMakes the device the default one until the `with` block "
     "ends."},
    {"__exit__", (PyCFunction)(void (*)(void))device_exit, METH_FASTCALL,
     "__exit__($self, exc_type, exc_value, traceback, /)\n--\n\nGives the default device "
     "back to the enclosing block (or set_default_device()'s)."},
    {"__reduce__", device_reduce, METH_NOARGS,
     "__reduce__($self, /)\n--\n\nPickling: the device by its name."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot device_slots[] = {
    {Py_tp_doc, (void *)device_doc},
    {Py_tp_new, device_new},
    {Py_tp_repr, device_repr},
    {Py_tp_str, device_str},
    {Py_tp_hash, device_hash},
    {Py_tp_richcompare, device_richcompare},
    {Py_tp_getset, device_getset},
    {Py_tp_methods, device_methods},
    {0, NULL},
};

static PyType_Spec device_spec = {
    .name = "gpukit.device",
    .basicsize = sizeof(device_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = device_slots,
};

PyDoc_STRVAR(devices_doc,
"devices()\n--\n\n"
"Every device there is: the CPU, then each usable CUDA GPU (cuda:0, ...),\n"
"then each OpenCL device (opencl:P:D). A kind whose driver is missing has\n"
"no devices; that is not an error.");

static PyObject *py_devices(PyObject *module, PyObject *unused)
{
    (void)unused;
    return gkpy_device_list(gkpy_state_of_module(module));
}

PyObject *gkpy_device_list(gkpy_state *state)
{
    gk_device found[256];
    int count;
    Py_BEGIN_ALLOW_THREADS
    count = gk_device_list(found, 256);
    Py_END_ALLOW_THREADS
    if (count > 256)
        count = 256;
    PyObject *list = PyList_New(count);
    for (int i = 0; list && i < count; i++) {
        PyObject *device = gkpy_device_object(state, found[i]);
        if (!device) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, device);
    }
    return list;
}

PyDoc_STRVAR(default_device_doc,
"default_device()\n--\n\n"
"The device arrays are created on when no device= is given: the innermost\n"
"`with gpukit.device(...)` block's, else the one set_default_device() set,\n"
"else the one the GPUKIT_DEFAULT_DEVICE environment variable names at import,\n"
"else the CPU (PyTorch's rule: pick a GPU explicitly, e.g.\n"
"`device = \"cuda\" if gpukit.cuda.is_available() else \"cpu\"`).");

static PyObject *py_default_device(PyObject *module, PyObject *unused)
{
    (void)unused;
    gkpy_state *state = gkpy_state_of_module(module);
    return gkpy_device_object(state, gkpy_default_device(state));
}

PyDoc_STRVAR(set_default_device_doc,
"set_default_device(device, /)\n--\n\n"
"Makes `device` (a gpukit.device or a name such as \"cuda:0\"; None for the\n"
"CPU) the default for array creation outside `with gpukit.device(...)` blocks.");

static PyObject *py_set_default_device(PyObject *module, PyObject *arg)
{
    gkpy_state *state = gkpy_state_of_module(module);
    gk_device device = gk_device_cpu();
    if (arg != Py_None && gkpy_device_from_object(state, arg, &device) < 0)
        return NULL;
    state->default_device = device;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(synchronize_doc,
"synchronize(device=None)\n--\n\n"
"Waits until the work queued on `device` is done; with None, on every device\n"
"this process has used (Numba's cuda.synchronize(), torch.cuda.synchronize()).\n"
"Kernel launches and array ops on GPUs return before they finish; reading a\n"
"result waits by itself, so this is for timing and for other libraries.");

/* name(device=None): `one` on the device given, else `all` (every device
 * this process has used), without the GIL. */
static PyObject *on_device_or_all(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames, const char *name,
                                  gk_status (*one)(gk_device), gk_status (*all)(void))
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"device", NULL};
    PyObject *values[1] = {NULL};
    if (gkpy_parse_args(name, args, nargs, kwnames, names, 1, 0, 1, 0, values) < 0)
        return NULL;
    gk_device device;
    int given = gkpy_optional_device(state, values[0], &device);
    if (given < 0)
        return NULL;
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = given ? one(device) : all();
    Py_END_ALLOW_THREADS
    if (status != GK_OK)
        return gkpy_raise(state, status);
    Py_RETURN_NONE;
}

static PyObject *py_synchronize(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    return on_device_or_all(module, args, nargs, kwnames, "synchronize", gk_device_synchronize,
                            gk_device_synchronize_all);
}

PyDoc_STRVAR(empty_cache_doc,
"empty_cache(device=None)\n--\n\n"
"Gives the memory gpukit's pool keeps in wholly free chunks on `device` back\n"
"to its driver; with None, on every device this process has used\n"
"(device.empty_cache()).");

static PyObject *py_empty_cache(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    return on_device_or_all(module, args, nargs, kwnames, "empty_cache", gk_device_empty_cache,
                            gk_device_empty_cache_all);
}

static PyMethodDef device_functions[] = {
    {"empty_cache", (PyCFunction)(void (*)(void))py_empty_cache, METH_FASTCALL | METH_KEYWORDS,
     empty_cache_doc},
    {"synchronize", (PyCFunction)(void (*)(void))py_synchronize, METH_FASTCALL | METH_KEYWORDS,
     synchronize_doc},
    {"devices", py_devices, METH_NOARGS, devices_doc},
    {"default_device", py_default_device, METH_NOARGS, default_device_doc},
    {"set_default_device", py_set_default_device, METH_O, set_default_device_doc},
    {NULL, NULL, 0, NULL},
};

/* GPUKIT_DEFAULT_DEVICE=name: the process's default device from its
 * start, as set_default_device(name) would make it, so that a program or a
 * test suite written for any array library (the array API test suite, a
 * scikit-learn script) runs on a GPU unchanged. A name that does not parse
 * fails the import with a ValueError naming the variable, rather than
 * leaving the arrays on the CPU without a word. */
static int default_device_from_environment(gkpy_state *state)
{
    const char *name = getenv("GPUKIT_DEFAULT_DEVICE");
    if (!name || !*name)
        return 0;
    if (gk_device_parse(name, &state->default_device) != GK_OK) {
        PyErr_Format(PyExc_ValueError,
                     "GPUKIT_DEFAULT_DEVICE=\"%s\": %s (\"opencl\" is the first OpenCL device)",
                     name, gk_last_error());
        return -1;
    }
    return 0;
}

int gkpy_device_init(PyObject *module, gkpy_state *state)
{
    state->device_context = PyContextVar_New("gpukit.device_blocks", NULL);
    if (!state->device_context)
        return -1;
    state->device_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &device_spec, NULL);
    if (!state->device_type || PyModule_AddType(module, state->device_type) < 0)
        return -1;
    if (default_device_from_environment(state) < 0)
        return -1;
    return PyModule_AddFunctions(module, device_functions);
}
