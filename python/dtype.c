/* gpukit.dtype: the element types (gpukit.bool, int8 ... uint64, float16,
 * bfloat16, float32, float64), equal to their names and to NumPy's dtypes of the same name;
 * and the array API standard's data type functions: can_cast, finfo,
 * iinfo, isdtype, result_type (astype is in ops.c). The rules themselves
 * (promotion, safe casting) are libgpukit's; this file applies them to
 * Python arguments. */
#include "gkpy.h"

#include <float.h>
#include <stdint.h>

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
    if (object == (PyObject *)&PyComplex_Type) {
        *dtype = GK_COMPLEX128;
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
            PyErr_Format(PyExc_TypeError, "dtype %R is not supported; gpukit has " GKPY_DTYPE_NAMES,
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

char gkpy_dtype_kind(gk_dtype dtype)
{
    if (dtype == GK_BOOL)
        return 'b';
    return gk_dtype_is_float(dtype)      ? 'f'
           : gk_dtype_is_complex(dtype) ? 'c'
           : gk_dtype_is_unsigned(dtype) ? 'u'
                                         : 'i';
}

static PyObject *dtype_get_kind(PyObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromOrdinal(gkpy_dtype_kind(((dtype_object *)self)->dtype));
}

/* NumPy's dtype of the same name: np.dtype(obj) takes any object whose
 * `dtype` attribute is a NumPy dtype, so np.dtype(gpukit.float32) and code
 * that normalises dtypes that way (dask.array) accept gpukit's. NumPy is
 * imported only here, when asked. */
static PyObject *dtype_get_numpy(PyObject *self, void *closure)
{
    (void)closure;
    PyObject *numpy = PyImport_ImportModule("numpy");
    if (!numpy)
        return NULL;
    PyObject *name = dtype_str(self);
    PyObject *result = name ? PyObject_CallMethod(numpy, "dtype", "O", name) : NULL;
    Py_XDECREF(name);
    Py_DECREF(numpy);
    return result;
}

static PyObject *dtype_get_type(PyObject *self, void *closure)
{
    PyObject *numpy_dtype = dtype_get_numpy(self, closure);
    PyObject *type = numpy_dtype ? PyObject_GetAttrString(numpy_dtype, "type") : NULL;
    Py_XDECREF(numpy_dtype);
    return type;
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
    {"dtype", dtype_get_numpy, NULL,
     "NumPy's dtype of the same name (NumPy is imported when asked), so that "
     "numpy.dtype(gpukit.float32) works.",
     NULL},
    {"type", dtype_get_type, NULL, "NumPy's scalar type of the same name (numpy.float32).",
     NULL},
    {"kind", dtype_get_kind, NULL,
     "NumPy's kind character: 'b' bool, 'u' unsigned, 'i' signed integer, 'f' floating, "
     "'c' complex floating.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS,
     "__reduce__($self, /)\n--\n\nPickling: the dtype as gpukit's attribute of its name."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot dtype_slots[] = {
    {Py_tp_doc, "An element type of gpukit arrays: gpukit.bool, int8, int16, int32, int64, uint8, "
                "uint16, uint32, uint64, float32, float64, complex64 or complex128 (the array "
                "API standard's dtypes; complex on the CPU only for now), float16 or bfloat16 "
                "(16-bit floats computed in float32).\n\nEqual to its name and to NumPy's "
                "dtype of the same name: gpukit.float32 == 'float32' == numpy.float32."},
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

/* ------------------------------------------------------------------ */
/* the array API standard's data type functions                        */

/* The dtype of a dtype-like object or of an Array (finfo(x), can_cast(x,
 * ...) take either); TypeError otherwise. */
static int dtype_or_array(gkpy_state *state, PyObject *object, gk_dtype *dtype)
{
    if (gkpy_is_array(state, object)) {
        *dtype = gk_array_dtype(((gkpy_array *)object)->array);
        return 0;
    }
    return gkpy_dtype_from_object(state, object, dtype);
}

/* 0 bool, 1 integer, 2 real floating, 3 complex floating: the order of
 * the standard's kinds (gk_value_kind's values). */
static int kind_rank(gk_dtype dtype)
{
    return dtype == GK_BOOL ? 0 : gk_dtype_is_float(dtype) ? 2 : gk_dtype_is_complex(dtype) ? 3 : 1;
}

static bool is_bool(gk_dtype dtype) { return dtype == GK_BOOL; }
static bool is_signed(gk_dtype dtype)
{
    return gk_dtype_is_integer(dtype) && !gk_dtype_is_unsigned(dtype);
}
static bool is_complex(gk_dtype dtype)
{
    return gk_dtype_is_complex(dtype);
}
static bool is_numeric(gk_dtype dtype) { return dtype != GK_BOOL; }

static const struct {
    const char *name;
    bool (*has)(gk_dtype);
} dtype_kinds[] = {
    {"bool", is_bool},
    {"signed integer", is_signed},
    {"unsigned integer", gk_dtype_is_unsigned},
    {"integral", gk_dtype_is_integer},
    {"real floating", gk_dtype_is_float},
    {"complex floating", is_complex},
    {"numeric", is_numeric},
};

int gkpy_isdtype(gkpy_state *state, gk_dtype dtype, PyObject *kind)
{
    if (PyTuple_Check(kind)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kind); i++) {
            PyObject *item = PyTuple_GET_ITEM(kind, i);
            if (PyTuple_Check(item)) {
                PyErr_SetString(PyExc_TypeError,
                                "isdtype(): kind is a dtype, a kind name or a tuple of those, "
                                "not a tuple of tuples");
                return -1;
            }
            int found = gkpy_isdtype(state, dtype, item);
            if (found != 0)
                return found;
        }
        return 0;
    }
    if (PyUnicode_Check(kind)) {
        for (size_t i = 0; i < sizeof dtype_kinds / sizeof dtype_kinds[0]; i++)
            if (PyUnicode_CompareWithASCIIString(kind, dtype_kinds[i].name) == 0)
                return dtype_kinds[i].has(dtype);
        PyErr_Format(PyExc_ValueError,
                     "isdtype(): unknown kind %R; the kinds are 'bool', 'signed integer', "
                     "'unsigned integer', 'integral', 'real floating', 'complex floating' and "
                     "'numeric'",
                     kind);
        return -1;
    }
    gk_dtype other;
    if (gkpy_dtype_from_object(state, kind, &other) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "isdtype(): kind must be a dtype, a kind name such as 'integral' or a "
                         "tuple of those, not %R",
                         kind);
        }
        return -1;
    }
    return other == dtype;
}

PyDoc_STRVAR(isdtype_doc,
"isdtype(dtype, kind)\n"
"--\n\n"
"Whether `dtype` is of `kind`: a dtype (the same one), a kind name or a\n"
"tuple of those (any of them). The kinds: 'bool', 'signed integer',\n"
"'unsigned integer', 'integral' (both), 'real floating', 'complex\n"
"floating' and 'numeric' (every dtype but bool).\n"
"TypeError for what is not a dtype, ValueError for an unknown kind name.");

static PyObject *py_isdtype(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    static const char *const names[] = {"dtype", "kind"};
    PyObject *v[2];
    if (gkpy_parse_args("isdtype", args, nargs, kwnames, names, 2, 0, 2, 2, v) < 0)
        return NULL;
    gkpy_state *state = gkpy_state_of_module(module);
    gk_dtype dtype;
    if (gkpy_dtype_from_object(state, v[0], &dtype) < 0)
        return NULL;
    int found = gkpy_isdtype(state, dtype, v[1]);
    return found < 0 ? NULL : PyBool_FromLong(found);
}

PyDoc_STRVAR(can_cast_doc,
"can_cast(from_, to, /)\n"
"--\n\n"
"Whether every value of `from_` (a dtype, or an array's dtype) converts to\n"
"the dtype `to` exactly (NumPy's 'safe' casting; integers of 32 bits and\n"
"more are safe only into float64). Python numbers are not dtypes: TypeError.");

static PyObject *py_can_cast(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "can_cast() takes 2 positional arguments (%zd given)",
                     nargs);
        return NULL;
    }
    gkpy_state *state = gkpy_state_of_module(module);
    gk_dtype from, to;
    if (dtype_or_array(state, args[0], &from) < 0 ||
        gkpy_dtype_from_object(state, args[1], &to) < 0)
        return NULL;
    return PyBool_FromLong(gk_can_cast(from, to));
}

PyDoc_STRVAR(result_type_doc,
"result_type(*arrays_and_dtypes)\n"
"--\n\n"
"The dtype that arrays and dtypes promote to together (NumPy 2's rules,\n"
"the standard's table where it has one: int8 with uint8 is int16, int64\n"
"with uint64 is float64; in any order: a dtype that holds all the others\n"
"is the result, so int8, uint16 and float32 give float32, as in NumPy).\n"
"Python bools, ints and floats among them are\n"
"weak: they take the kind of the others' dtype when it is as high (an int\n"
"beside int8 stays int8); an int beside bool gives int64, a float beside\n"
"integers or bool float64. At least one array or dtype is needed\n"
"(TypeError).");

/* The rank a Python scalar argument of result_type() has (kind_rank), or
 * -1 when it is not one. Exact types only: NumPy's scalars (numpy.float64
 * is a float) carry a dtype of their own. */
static int python_scalar_rank(PyObject *object)
{
    if (PyBool_Check(object))
        return 0;
    if (PyLong_CheckExact(object))
        return 1;
    if (PyFloat_CheckExact(object))
        return 2;
    if (PyComplex_CheckExact(object))
        return 3;
    return -1;
}

/* The promotion of the dtypes in `present` (a bit per gk_dtype, not 0),
 * as NumPy promotes a sequence: a dtype that every other one promotes to
 * is the result; otherwise they promote pairwise. Promotion is not
 * associative (int8 + uint16 is int32, and int32 + float32 float64, yet
 * float32 holds int8 and uint16), so the first rule keeps the result from
 * depending on the order. */
static gk_dtype promote_all(unsigned present)
{
    for (int d = 0; d < GK_DTYPE_COUNT; d++) {
        bool holds_all = (present >> d) & 1;
        for (int o = 0; holds_all && o < GK_DTYPE_COUNT; o++)
            holds_all = !((present >> o) & 1) ||
                        (int)gk_promote_types((gk_dtype)d, (gk_dtype)o) == d;
        if (holds_all)
            return (gk_dtype)d;
    }
    int result = -1;
    for (int d = 0; d < GK_DTYPE_COUNT; d++)
        if ((present >> d) & 1)
            result = result < 0 ? d : (int)gk_promote_types((gk_dtype)result, (gk_dtype)d);
    return (gk_dtype)result;
}

static PyObject *py_result_type(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    unsigned present = 0; /* the dtypes seen, a bit each */
    int scalar_rank = -1; /* the highest of the Python scalars */
    for (Py_ssize_t i = 0; i < nargs; i++) {
        int rank = python_scalar_rank(args[i]);
        if (rank >= 0) {
            scalar_rank = rank > scalar_rank ? rank : scalar_rank;
            continue;
        }
        gk_dtype dtype;
        if (dtype_or_array(state, args[i], &dtype) < 0)
            return NULL;
        present |= 1u << dtype;
    }
    if (!present) {
        PyErr_SetString(PyExc_TypeError,
                        "result_type() needs at least one array or dtype (Python numbers alone "
                        "have no dtype)");
        return NULL;
    }
    gk_dtype result = promote_all(present);
    /* A weak scalar of a higher kind gives that kind's default dtype. */
    if (scalar_rank > kind_rank(result))
        result = gk_value_dtype(result, (gk_value_kind)scalar_rank);
    return gkpy_dtype_object(state, result);
}

static PyStructSequence_Field finfo_fields[] = {
    {"bits", "The number of bits the dtype takes."},
    {"eps", "The difference between 1.0 and the next larger value (a Python float)."},
    {"max", "The largest finite value."},
    {"min", "The smallest finite value (-max)."},
    {"smallest_normal", "The smallest positive normal value."},
    {"dtype", "The dtype described."},
    {NULL, NULL},
};

static PyStructSequence_Desc finfo_desc = {
    .name = "gpukit.finfo_object",
    .doc = "finfo_object(bits, eps, max, min, smallest_normal, dtype): what finfo() says of a\n"
           "floating-point dtype (a named tuple).",
    .fields = finfo_fields,
    .n_in_sequence = 6,
};

static PyStructSequence_Field iinfo_fields[] = {
    {"bits", "The number of bits the dtype takes."},
    {"max", "The largest value (a Python int)."},
    {"min", "The smallest value."},
    {"dtype", "The dtype described."},
    {NULL, NULL},
};

static PyStructSequence_Desc iinfo_desc = {
    .name = "gpukit.iinfo_object",
    .doc = "iinfo_object(bits, max, min, dtype): what iinfo() says of an integer dtype (a\n"
           "named tuple).",
    .fields = iinfo_fields,
    .n_in_sequence = 4,
};

/* A new struct sequence of `type` holding items[0..count) (references
 * taken); NULL when any of them, or the sequence, could not be made. */
static PyObject *info_tuple(PyTypeObject *type, PyObject **items, int count)
{
    PyObject *info = PyStructSequence_New(type);
    bool failed = info == NULL;
    for (int i = 0; i < count; i++) {
        failed |= items[i] == NULL;
        if (info)
            PyStructSequence_SetItem(info, i, items[i] ? items[i] : Py_NewRef(Py_None));
        else
            Py_XDECREF(items[i]);
    }
    if (failed)
        Py_CLEAR(info);
    return info;
}

PyDoc_STRVAR(finfo_doc,
"finfo(type, /)\n"
"--\n\n"
"The limits of a floating-point dtype (float16, bfloat16, float32, float64;\n"
"or of an array's dtype): bits, eps, max, min, smallest_normal (Python\n"
"floats) and dtype.\n"
"ValueError for other dtypes (integers have iinfo()).");

static PyObject *py_finfo(PyObject *module, PyObject *type)
{
    gkpy_state *state = gkpy_state_of_module(module);
    gk_dtype dtype;
    if (dtype_or_array(state, type, &dtype) < 0)
        return NULL;
    /* A complex dtype's limits are its component's (NumPy's finfo). */
    dtype = gk_dtype_component(dtype);
    if (!gk_dtype_is_float(dtype)) {
        PyErr_Format(PyExc_ValueError,
                     "finfo() takes a floating-point dtype (float16, bfloat16, float32 or "
                     "float64), not %s%s",
                     gk_dtype_name(dtype), dtype == GK_BOOL ? "" : "; integers have iinfo()");
        return NULL;
    }
    /* eps, max, smallest normal of each: 2^-digits, the largest finite
     * value, 2^(1 - max exponent). */
    double eps = DBL_EPSILON, max = DBL_MAX, tiny = DBL_MIN;
    if (dtype == GK_FLOAT32)
        eps = FLT_EPSILON, max = FLT_MAX, tiny = FLT_MIN;
    else if (dtype == GK_FLOAT16)
        eps = 0x1p-10, max = 65504.0, tiny = 0x1p-14;
    else if (dtype == GK_BFLOAT16)
        eps = 0x1p-7, max = 0x1.fep127, tiny = FLT_MIN;
    PyObject *items[] = {
        PyLong_FromSize_t(8 * gk_dtype_size(dtype)),
        PyFloat_FromDouble(eps),
        PyFloat_FromDouble(max),
        PyFloat_FromDouble(-max),
        PyFloat_FromDouble(tiny),
        gkpy_dtype_object(state, dtype),
    };
    return info_tuple(state->finfo_type, items, (int)(sizeof items / sizeof items[0]));
}

PyDoc_STRVAR(iinfo_doc,
"iinfo(type, /)\n"
"--\n\n"
"The limits of an integer dtype (int8 ... int64, uint8 ... uint64; or of\n"
"an array's dtype): bits, max, min (Python ints, exact) and dtype.\n"
"ValueError for bool and floating-point dtypes (those have finfo()).");

static PyObject *py_iinfo(PyObject *module, PyObject *type)
{
    gkpy_state *state = gkpy_state_of_module(module);
    gk_dtype dtype;
    if (dtype_or_array(state, type, &dtype) < 0)
        return NULL;
    if (!gk_dtype_is_integer(dtype)) {
        PyErr_Format(PyExc_ValueError, "iinfo() takes an integer dtype, not %s%s",
                     gk_dtype_name(dtype),
                     gk_dtype_is_float(dtype) ? "; floating-point dtypes have finfo()" : "");
        return NULL;
    }
    int bits = 8 * (int)gk_dtype_size(dtype);
    PyObject *max, *min;
    if (gk_dtype_is_unsigned(dtype)) {
        max = PyLong_FromUnsignedLongLong(UINT64_MAX >> (64 - bits));
        min = PyLong_FromLong(0);
    } else {
        int64_t top = INT64_MAX >> (64 - bits);
        max = PyLong_FromLongLong(top);
        min = PyLong_FromLongLong(-top - 1);
    }
    PyObject *items[] = {PyLong_FromLong(bits), max, min, gkpy_dtype_object(state, dtype)};
    return info_tuple(state->iinfo_type, items, (int)(sizeof items / sizeof items[0]));
}

#define FASTCALL(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL

static PyMethodDef dtype_functions[] = {
    {"can_cast", FASTCALL(py_can_cast), can_cast_doc},
    {"finfo", py_finfo, METH_O, finfo_doc},
    {"iinfo", py_iinfo, METH_O, iinfo_doc},
    {"isdtype", (PyCFunction)(void (*)(void))py_isdtype, METH_FASTCALL | METH_KEYWORDS,
     isdtype_doc},
    {"result_type", FASTCALL(py_result_type), result_type_doc},
    {NULL, NULL, 0, NULL},
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
    state->finfo_type = PyStructSequence_NewType(&finfo_desc);
    if (!state->finfo_type || PyModule_AddType(module, state->finfo_type) < 0)
        return -1;
    state->iinfo_type = PyStructSequence_NewType(&iinfo_desc);
    if (!state->iinfo_type || PyModule_AddType(module, state->iinfo_type) < 0)
        return -1;
    return PyModule_AddFunctions(module, dtype_functions);
}
