/* gpukit.dtype: the element types (gpukit.bool ... gpukit.float64), equal
 * to their names and to NumPy's dtypes of the same name. */
#include "gkpy.h"

#include <structmember.h>

typedef struct dtype_object {
    PyObject_HEAD
    gk_dtype dtype;
} dtype_object;

/* The name of a NumPy-like dtype or scalar type (np.dtype has .name, a
 * type such as np.float32 or float has __name__); NULL without an error
 * when there is none. A new reference. */
static PyObject *foreign_name(PyObject *object)
{
    if (PyType_Check(object))
        return PyObject_GetAttrString(object, "__name__");
    PyObject *name = PyObject_GetAttrString(object, "name");
    if (!name && PyErr_ExceptionMatches(PyExc_AttributeError))
        PyErr_Clear();
    return name;
}

int gkpy_dtype_from_object(gkpy_state *state, PyObject *object, gk_dtype *dtype)
{
    if (Py_IS_TYPE(object, state->dtype_type)) {
        *dtype = ((dtype_object *)object)->dtype;
        return 0;
    }
    if (object == (PyObject *)&PyBool_Type) {
        *dtype = GK_BOOL;
        return 0;
    }
    if (object == (PyObject *)&PyLong_Type) {
        *dtype = GK_INT64;
        return 0;
    }
    if (object == (PyObject *)&PyFloat_Type) {
        *dtype = GK_FLOAT64;
        return 0;
    }
    PyObject *name = PyUnicode_Check(object) ? Py_NewRef(object) : foreign_name(object);
    if (!name && PyErr_Occurred())
        return -1;
    if (name && PyUnicode_Check(name)) {
        const char *text = PyUnicode_AsUTF8(name);
        gk_status status = text ? gk_dtype_parse(text, dtype) : GK_ERR_INVALID_ARGUMENT;
        if (text && status == GK_OK) {
            Py_DECREF(name);
            return 0;
        }
        if (text)
            PyErr_Format(PyExc_TypeError,
                         "dtype %R is not supported; gpukit has bool, uint8, int32, int64, "
                         "float32 and float64",
                         name);
        Py_DECREF(name);
        return -1;
    }
    Py_XDECREF(name);
    PyErr_Format(PyExc_TypeError,
                 "cannot interpret %R as a dtype; give gpukit.float32, \"float32\", float, "
                 "int, bool or a NumPy dtype",
                 object);
    return -1;
}

int gkpy_optional_dtype(gkpy_state *state, PyObject *object, gk_dtype *dtype)
{
    if (!object || object == Py_None)
        return 0;
    return gkpy_dtype_from_object(state, object, dtype) < 0 ? -1 : 1;
}

PyObject *gkpy_dtype_object(gkpy_state *state, gk_dtype dtype)
{
    if ((unsigned)dtype >= GK_DTYPE_COUNT) {
        PyErr_Format(PyExc_SystemError, "invalid gk_dtype %d", (int)dtype);
        return NULL;
    }
    return Py_NewRef(state->dtypes[dtype]);
}

static PyObject *dtype_repr(PyObject *self)
{
    return PyUnicode_FromFormat("gpukit.%s", gk_dtype_name(((dtype_object *)self)->dtype));
}

static PyObject *dtype_str(PyObject *self)
{
    return PyUnicode_FromString(gk_dtype_name(((dtype_object *)self)->dtype));
}

static Py_hash_t dtype_hash(PyObject *self)
{
    /* Equal to its name, so it hashes like its name. */
    PyObject *name = dtype_str(self);
    if (!name)
        return -1;
    Py_hash_t hash = PyObject_Hash(name);
    Py_DECREF(name);
    return hash;
}

static PyObject *dtype_richcompare(PyObject *self, PyObject *other, int op)
{
    if (op != Py_EQ && op != Py_NE)
        Py_RETURN_NOTIMPLEMENTED;
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(self));
    gk_dtype theirs;
    bool equal = false;
    if (gkpy_dtype_from_object(state, other, &theirs) == 0)
        equal = theirs == ((dtype_object *)self)->dtype;
    else
        PyErr_Clear(); /* not a dtype at all: simply not equal */
    return PyBool_FromLong(equal == (op == Py_EQ));
}

static PyObject *dtype_get_name(PyObject *self, void *closure)
{
    (void)closure;
    return dtype_str(self);
}

static PyObject *dtype_get_itemsize(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromSize_t(gk_dtype_size(((dtype_object *)self)->dtype));
}

static PyObject *dtype_get_kind(PyObject *self, void *closure)
{
    (void)closure;
    static const char kinds[GK_DTYPE_COUNT] = {'b', 'u', 'i', 'i', 'f', 'f'};
    return PyUnicode_FromOrdinal(kinds[((dtype_object *)self)->dtype]);
}

static PyObject *dtype_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    /* Pickles as the module attribute of the same name. */
    return dtype_str(self);
}

static PyGetSetDef dtype_getset[] = {
    {"name", dtype_get_name, NULL, "The dtype's name, e.g. 'float32'.", NULL},
    {"itemsize", dtype_get_itemsize, NULL, "Bytes per element.", NULL},
    {"kind", dtype_get_kind, NULL,
     "NumPy's kind character: 'b' bool, 'u' unsigned, 'i' signed integer, 'f' floating.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS,
     "__reduce__($self, /)\n--\n\nPickling: the dtype as gpukit's attribute of its name."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot dtype_slots[] = {
    {Py_tp_doc, "An element type of gpukit arrays: gpukit.bool, uint8, int32, int64, float32 or "
                "float64.\n\nEqual to its name and to NumPy's dtype of the same name: "
                "gpukit.float32 == 'float32' == numpy.float32."},
    {Py_tp_repr, dtype_repr},
    {Py_tp_str, dtype_str},
    {Py_tp_hash, dtype_hash},
    {Py_tp_richcompare, dtype_richcompare},
    {Py_tp_getset, dtype_getset},
    {Py_tp_methods, dtype_methods},
    {0, NULL},
};

static PyType_Spec dtype_spec = {
    .name = "gpukit.dtype",
    .basicsize = sizeof(dtype_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = dtype_slots,
};

int gkpy_dtype_init(PyObject *module, gkpy_state *state)
{
    state->dtype_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &dtype_spec, NULL);
    if (!state->dtype_type || PyModule_AddType(module, state->dtype_type) < 0)
        return -1;
    for (int i = 0; i < GK_DTYPE_COUNT; i++) {
        dtype_object *dtype = PyObject_New(dtype_object, state->dtype_type);
        if (!dtype)
            return -1;
        dtype->dtype = (gk_dtype)i;
        state->dtypes[i] = (PyObject *)dtype;
        if (PyModule_AddObjectRef(module, gk_dtype_name((gk_dtype)i), state->dtypes[i]) < 0)
            return -1;
    }
    return 0;
}
