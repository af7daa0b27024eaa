/* gpukit.__array_namespace_info__: the array API standard's inspection
 * object (a class, as NumPy's: __array_namespace_info__() makes one).
 * What it says is what the rest of the package does: the dtypes of
 * dtype.c, the devices of device.c, the default dtypes of the creation
 * functions in create.c. */
#include "gkpy.h"

/* The standard's order of its dtypes, which dtypes() keeps. */
static const gk_dtype listed[] = {
    GK_BOOL,  GK_INT8,   GK_INT16,  GK_INT32,   GK_INT64,   GK_UINT8,
    GK_UINT16, GK_UINT32, GK_UINT64, GK_FLOAT32, GK_FLOAT64, GK_COMPLEX64, GK_COMPLEX128,
};

static gkpy_state *state_of(PyObject *self)
{
    return gkpy_state_of_type(Py_TYPE(self));
}

static PyObject *info_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) != 0 || (kwargs && PyDict_GET_SIZE(kwargs) != 0)) {
        PyErr_SetString(PyExc_TypeError, "__array_namespace_info__() takes no arguments");
        return NULL;
    }
    return type->tp_alloc(type, 0);
}

static void info_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    type->tp_free(self);
    Py_DECREF(type); /* instances of heap types hold their type */
}

/* The device= argument of default_dtypes(): checked, since a misspelt
 * name must not pass silently; the defaults are the same everywhere. */
static int check_device(gkpy_state *state, PyObject *object)
{
    gk_device device;
    return gkpy_device_from_object(state, object, &device);
}

PyDoc_STRVAR(capabilities_doc,
"capabilities($self, /)\n"
"--\n\n"
"What gpukit supports of the standard's optional parts: 'boolean\n"
"indexing' (x[mask]: yes), 'data-dependent shapes' (unique_*, nonzero:\n"
"yes) and 'max dimensions'.");

static PyObject *info_capabilities(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return Py_BuildValue("{s:O,s:O,s:i}", "boolean indexing", Py_True,
                         "data-dependent shapes", Py_True, "max dimensions", GK_MAX_DIMS);
}

PyDoc_STRVAR(default_device_doc,
"default_device($self, /)\n"
"--\n\n"
"The device arrays are created on when none is given\n"
"(gpukit.default_device()).");

static PyObject *info_default_device(PyObject *self, PyObject *unused)
{
    (void)unused;
    gkpy_state *state = state_of(self);
    return gkpy_device_object(state, gkpy_default_device(state));
}

PyDoc_STRVAR(devices_doc,
"devices($self, /)\n"
"--\n\n"
"Every device there is, as a tuple (gpukit.devices() is the same as a list).");

static PyObject *info_devices(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *list = gkpy_device_list(state_of(self));
    PyObject *tuple = list ? PyList_AsTuple(list) : NULL;
    Py_XDECREF(list);
    return tuple;
}

PyDoc_STRVAR(default_dtypes_doc,
"default_dtypes($self, /, *, device=None)\n"
"--\n\n"
"The dtypes the creation functions choose when none is given, on\n"
"`device` (None: the default device): {'real floating': float32,\n"
"'integral': int64, 'indexing': int64}. float32 rather than the standard's\n"
"usual float64 is PyTorch's default, which gpukit follows; so 'complex\n"
"floating' is complex64 (on devices that have complex dtypes: the CPU).");

static PyObject *info_default_dtypes(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames)
{
    static const char *const names[] = {"device"};
    PyObject *v[1];
    gkpy_state *state = state_of(self);
    if (gkpy_parse_args("default_dtypes", args, nargs, kwnames, names, 1, 0, 0, 0, v) < 0 ||
        check_device(state, v[0]) < 0)
        return NULL;
    return Py_BuildValue("{s:O,s:O,s:O,s:O}", "real floating", state->dtypes[GK_FLOAT32],
                         "complex floating", state->dtypes[GK_COMPLEX64], "integral",
                         state->dtypes[GK_INT64], "indexing", state->dtypes[GK_INT64]);
}

PyDoc_STRVAR(dtypes_doc,
"dtypes($self, /, *, device=None, kind=None)\n"
"--\n\n"
"The dtypes arrays on `device` (None: the default device) can have, as a\n"
"dict from name to dtype: every dtype, but float64 only where the device\n"
"has double precision (some OpenCL devices lack it). With `kind`, only\n"
"those isdtype(dtype, kind) accepts (a kind name such as 'integral', a\n"
"dtype, or a tuple of those).");

static PyObject *info_dtypes(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    static const char *const names[] = {"device", "kind"};
    PyObject *v[2];
    gkpy_state *state = state_of(self);
    gk_device device;
    if (gkpy_parse_args("dtypes", args, nargs, kwnames, names, 2, 0, 0, 0, v) < 0 ||
        gkpy_device_from_object(state, v[0], &device) < 0)
        return NULL;
    PyObject *kind = v[1] == Py_None ? NULL : v[1];
    PyObject *result = PyDict_New();
    for (size_t i = 0; result && i < sizeof listed / sizeof listed[0]; i++) {
        bool has;
        gk_status status = gk_device_has_dtype(device, listed[i], &has);
        int wanted = status != GK_OK ? -1 : has && kind ? gkpy_isdtype(state, listed[i], kind)
                                                        : has;
        if (status != GK_OK)
            gkpy_raise(state, status);
        if (wanted < 0 || (wanted && PyDict_SetItemString(result, gk_dtype_name(listed[i]),
                                                          state->dtypes[listed[i]]) < 0))
            Py_CLEAR(result);
    }
    return result;
}

#define FASTCALL_KW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

static PyMethodDef info_methods[] = {
    {"capabilities", info_capabilities, METH_NOARGS, capabilities_doc},
    {"default_device", info_default_device, METH_NOARGS, default_device_doc},
    {"default_dtypes", FASTCALL_KW(info_default_dtypes), default_dtypes_doc},
    {"devices", info_devices, METH_NOARGS, devices_doc},
    {"dtypes", FASTCALL_KW(info_dtypes), dtypes_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(info_doc,
"__array_namespace_info__()\n"
"--\n\n"
"The array API standard's inspection object: what this namespace supports\n"
"(capabilities()), its devices (devices(), default_device()) and dtypes\n"
"(dtypes(), default_dtypes()).\n\n"
"    info = gpukit.__array_namespace_info__()\n"
"    info.dtypes(kind='integral')   # {'int8': gpukit.int8, ...}");

static PyType_Slot info_slots[] = {
    {Py_tp_doc, (void *)info_doc},
    {Py_tp_new, info_new},
    {Py_tp_dealloc, info_dealloc},
    {Py_tp_methods, info_methods},
    {0, NULL},
};

static PyType_Spec info_spec = {
    .name = "gpukit.__array_namespace_info__",
    .basicsize = sizeof(PyObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = info_slots,
};

int gkpy_info_init(PyObject *module, gkpy_state *state)
{
    state->info_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &info_spec, NULL);
    if (!state->info_type)
        return -1;
    return PyModule_AddType(module, state->info_type);
}
