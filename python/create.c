/* Array creation: asarray() from anything array-like (Python scalars and
 * nested lists here; buffer, DLPack and CUDA array interface producers
 * through interop.c), empty/zeros/ones/full, arange/linspace/eye and the
 * *_like forms. Signatures follow the Python array API standard; the
 * default dtypes follow PyTorch (float32 for floating point, int64 for
 * integers), since our users come from PyTorch and CuPy. */
#include "gkpy.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* argument helpers shared with array.c                                */

int gkpy_parse_args(const char *function, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames, const char *const *names, int count, int positional_only,
                    int max_positional, int required, PyObject **values)
{
    for (int i = 0; i < count; i++)
        values[i] = NULL;
    if (nargs > max_positional) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional argument%s (%zd given)",
                     function, max_positional, max_positional == 1 ? "" : "s", nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        values[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        int found = -1;
        for (int i = positional_only; i < count && found < 0; i++)
            if (PyUnicode_CompareWithASCIIString(name, names[i]) == 0)
                found = i;
        if (found < 0) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'",
                         function, name);
            return -1;
        }
        if (values[found]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'",
                         function, names[found]);
            return -1;
        }
        values[found] = args[nargs + k];
    }
    for (int i = 0; i < required; i++) {
        if (!values[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %d)",
                         function, names[i], i + 1);
            return -1;
        }
    }
    return 0;
}

/* One axis length from an int-like object. */
static int parse_length(PyObject *object, int64_t *length)
{
    if (!PyIndex_Check(object) || PyBool_Check(object)) {
        PyErr_Format(PyExc_TypeError, "a shape holds ints, not %.100s", Py_TYPE(object)->tp_name);
        return -1;
    }
    PyObject *index = PyNumber_Index(object);
    if (!index)
        return -1;
    int overflow;
    long long value = PyLong_AsLongLongAndOverflow(index, &overflow);
    Py_DECREF(index);
    if (value == -1 && PyErr_Occurred())
        return -1;
    if (overflow || value < 0) {
        PyErr_Format(PyExc_ValueError, "negative or too large length %R in a shape", object);
        return -1;
    }
    *length = value;
    return 0;
}

int gkpy_parse_shape(PyObject *object, int *ndim, int64_t *shape)
{
    if (PyLong_Check(object) || (PyIndex_Check(object) && !PySequence_Check(object))) {
        *ndim = 1;
        return parse_length(object, &shape[0]);
    }
    if (!PyTuple_Check(object) && !PyList_Check(object)) {
        PyErr_Format(PyExc_TypeError, "a shape is an int or a tuple of ints, not %.100s",
                     Py_TYPE(object)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(object);
    if (n > GK_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "a shape of %zd dimensions; arrays have at most %d", n,
                     GK_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (parse_length(PySequence_Fast_GET_ITEM(object, i), &shape[i]) < 0)
            return -1;
    *ndim = (int)n;
    return 0;
}

/* Stores the Python int `integer` into an element of the integer dtype
 * `dtype`, exactly: OverflowError (naming `value`, what the caller was
 * given) when it is out of the dtype's range. */
static int store_integer(PyObject *value, PyObject *integer, gk_dtype dtype, void *bytes)
{
    int bits = 8 * (int)gk_dtype_size(dtype), overflow;
    bool is_unsigned = gk_dtype_is_unsigned(dtype);
    uint64_t top = (is_unsigned ? UINT64_MAX : (uint64_t)INT64_MAX) >> (64 - bits);
    long long v = PyLong_AsLongLongAndOverflow(integer, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    uint64_t u = (uint64_t)v; /* the two's complement bits, stored below */
    bool fits = overflow == 0 && (v >= 0 ? (uint64_t)v <= top
                                         : !is_unsigned && v >= -(long long)top - 1);
    if (overflow > 0 && dtype == GK_UINT64) {
        /* Above int64: only uint64 holds it, up to 2^64 - 1. */
        u = PyLong_AsUnsignedLongLong(integer);
        fits = !(u == (uint64_t)-1 && PyErr_Occurred());
        if (!fits && !PyErr_ExceptionMatches(PyExc_OverflowError))
            return -1;
        PyErr_Clear();
    }
    if (!fits) {
        PyErr_Format(PyExc_OverflowError, "Python integer %R out of bounds for %s", value,
                     gk_dtype_name(dtype));
        return -1;
    }
    /* The low `bits` bits are the element, signed or not. */
    switch (bits) {
    case 8: *(uint8_t *)bytes = (uint8_t)u; break;
    case 16: *(uint16_t *)bytes = (uint16_t)u; break;
    case 32: *(uint32_t *)bytes = (uint32_t)u; break;
    default: *(uint64_t *)bytes = u; break;
    }
    return 0;
}

int gkpy_store_scalar(PyObject *value, gk_dtype dtype, void *bytes)
{
    if (PyComplex_Check(value)) {
        if (!gk_dtype_is_complex(dtype)) {
            /* NumPy 2 refuses too: dropping the imaginary part silently
             * would lose data. */
            PyErr_Format(PyExc_TypeError,
                         "cannot store the complex number %R in a %s array (take .real or "
                         "abs() first, or use a complex dtype)",
                         value, gk_dtype_name(dtype));
            return -1;
        }
        gk_dtype_store_complex(dtype, PyComplex_RealAsDouble(value),
                               PyComplex_ImagAsDouble(value), bytes);
        return 0;
    }
    if (gk_dtype_is_complex(dtype) && (PyLong_Check(value) || PyFloat_Check(value))) {
        double d = PyFloat_Check(value) ? PyFloat_AS_DOUBLE(value) : PyLong_AsDouble(value);
        if (d == -1.0 && PyErr_Occurred())
            return -1;
        gk_dtype_store_complex(dtype, d, 0, bytes);
        return 0;
    }
    if (PyBool_Check(value) ||
        (dtype == GK_BOOL && (PyLong_Check(value) || PyFloat_Check(value)))) {
        int truth = PyObject_IsTrue(value);
        if (truth < 0)
            return -1;
        if (gk_dtype_is_float(dtype))
            gk_dtype_store(dtype, truth, bytes);
        else if (dtype == GK_BOOL)
            *(uint8_t *)bytes = (uint8_t)truth;
        else
            return store_integer(value, truth ? Py_True : Py_False, dtype, bytes);
        return 0;
    }
    if (PyLong_Check(value)) {
        if (gk_dtype_is_float(dtype)) {
            double d = PyLong_AsDouble(value);
            if (d == -1.0 && PyErr_Occurred())
                return -1;
            gk_dtype_store(dtype, d, bytes);
            return 0;
        }
        return store_integer(value, value, dtype, bytes);
    }
    if (PyFloat_Check(value)) {
        double d = PyFloat_AS_DOUBLE(value);
        if (gk_dtype_is_float(dtype)) {
            gk_dtype_store(dtype, d, bytes);
            return 0;
        }
        /* Truncation toward zero, as NumPy's float-to-int cast; what has no
         * integer value is an error rather than C's undefined conversion. */
        if (isnan(d)) {
            PyErr_Format(PyExc_ValueError, "cannot convert float NaN to %s", gk_dtype_name(dtype));
            return -1;
        }
        if (isinf(d)) {
            PyErr_Format(PyExc_OverflowError, "float %R out of bounds for %s", value,
                         gk_dtype_name(dtype));
            return -1;
        }
        PyObject *integer = PyLong_FromDouble(trunc(d));
        if (!integer)
            return -1;
        int result = store_integer(value, integer, dtype, bytes);
        Py_DECREF(integer);
        return result;
    }
    /* Other numbers (NumPy scalars, Fraction, ...): through int, float or
     * complex. */
    PyObject *number = NULL;
    if (gk_dtype_is_complex(dtype) && !PyIndex_Check(value)) {
        /* __complex__ (NumPy's complex scalars) or __float__ */
        Py_complex c = PyComplex_AsCComplex(value);
        if (c.real == -1.0 && PyErr_Occurred())
            return -1;
        number = PyComplex_FromCComplex(c);
    }
    else if (PyIndex_Check(value))
        number = PyNumber_Index(value);
    else if (Py_TYPE(value)->tp_as_number && Py_TYPE(value)->tp_as_number->nb_float)
        number = PyNumber_Float(value);
    else
        PyErr_Format(PyExc_TypeError, "cannot store a %.100s in a %s array",
                     Py_TYPE(value)->tp_name, gk_dtype_name(dtype));
    if (!number)
        return -1;
    int result = gkpy_store_scalar(number, dtype, bytes);
    Py_DECREF(number);
    return result;
}

/* ------------------------------------------------------------------ */
/* Python scalars and nested sequences                                 */

/* Whether `object` is a number that becomes one element: Python's bool,
 * int and float, and other numbers (Fraction, Decimal) that are neither
 * sequences nor buffers. NumPy scalars export a buffer: they become 0-d
 * arrays keeping their dtype, as NumPy arrays keep theirs. */
static bool is_scalar(PyObject *object)
{
    if (PyBool_Check(object) || PyLong_Check(object) || PyFloat_Check(object) ||
        PyComplex_Check(object))
        return true;
    PyNumberMethods *number = Py_TYPE(object)->tp_as_number;
    PyBufferProcs *buffer = Py_TYPE(object)->tp_as_buffer;
    return number && (number->nb_index || number->nb_float) && !PySequence_Check(object) &&
           !(buffer && buffer->bf_getbuffer);
}

/* A single number, for full(): also NumPy scalars (is_scalar leaves them
 * to the buffer protocol). */
static bool is_number(PyObject *object)
{
    PyNumberMethods *number = Py_TYPE(object)->tp_as_number;
    return PyLong_Check(object) || PyFloat_Check(object) || PyComplex_Check(object) ||
           (number && (number->nb_index || number->nb_float) && !PySequence_Check(object));
}

/* The dtype a scalar gets when nothing else decides: bool, int64 for
 * integers, float32 for floating point (PyTorch's defaults). */
static gk_dtype scalar_dtype(PyObject *object)
{
    if (PyBool_Check(object))
        return GK_BOOL;
    if (PyLong_Check(object) || PyIndex_Check(object))
        return GK_INT64;
    if (PyComplex_Check(object))
        return GK_COMPLEX64; /* the complex of the default float32 (PyTorch's) */
    return GK_FLOAT32;
}

static bool is_nested(PyObject *object)
{
    return PyList_Check(object) || PyTuple_Check(object);
}

/* What the walk over nested lists learns: the shape, the dtype that holds
 * every leaf, and the leaves that are arrays (converted once, in order). */
typedef struct nest {
    gkpy_state *state;
    int ndim;                   /* the whole shape */
    int64_t shape[GK_MAX_DIMS];
    bool have_dtype;            /* false until a leaf is seen */
    gk_dtype dtype;
    PyObject *arrays;           /* list of the array leaves as Arrays, or NULL */
    Py_ssize_t next_array;      /* the fill pass's position in `arrays` */
} nest;

static PyObject *ragged(int depth)
{
    PyErr_Format(PyExc_ValueError,
                 "the nested sequence is ragged: its elements have different lengths or "
                 "nesting at depth %d (an array needs a rectangular shape)",
                 depth);
    return NULL;
}

/* A leaf that is neither a scalar nor a list: something asarray() turns into
 * an array (a NumPy array, an Array). A new reference, or NULL. */
static PyObject *leaf_array(gkpy_state *state, PyObject *object)
{
    if (gkpy_is_array(state, object))
        return Py_NewRef(object);
    gk_device cpu = gk_device_cpu();
    return gkpy_asarray(state, object, NULL, &cpu, -1);
}

/* The first pass: finds the shape from the first element at each depth. */
static int nest_shape(nest *n, PyObject *object)
{
    n->ndim = 0;
    while (is_nested(object)) {
        if (n->ndim == GK_MAX_DIMS) {
            PyErr_Format(PyExc_ValueError, "the sequence is nested more than %d deep; arrays "
                         "have at most %d dimensions", GK_MAX_DIMS, GK_MAX_DIMS);
            return -1;
        }
        Py_ssize_t length = PySequence_Fast_GET_SIZE(object);
        n->shape[n->ndim++] = length;
        if (length == 0)
            break;
        object = PySequence_Fast_GET_ITEM(object, 0);
    }
    if (is_nested(object) || is_scalar(object))
        return 0;
    /* Array leaves add their axes. */
    PyObject *leaf = leaf_array(n->state, object);
    if (!leaf)
        return -1;
    gk_array *a = ((gkpy_array *)leaf)->array;
    int extra = gk_array_ndim(a);
    if (n->ndim + extra > GK_MAX_DIMS) {
        Py_DECREF(leaf);
        PyErr_Format(PyExc_ValueError, "the result would have %d dimensions; arrays have at "
                     "most %d", n->ndim + extra, GK_MAX_DIMS);
        return -1;
    }
    memcpy(n->shape + n->ndim, gk_array_shape(a), sizeof(int64_t) * (size_t)extra);
    n->ndim += extra;
    Py_DECREF(leaf);
    return 0;
}

static void nest_see(nest *n, gk_dtype dtype)
{
    /* PyTorch's rule for a list's elements: a floating-point dtype wins
     * over integers and bool as it is ([1, 2.5] and [int64 array, 2.5] are
     * float32, the float default); within a kind, the dtypes promote
     * (uint8 and int8 arrays give int16). */
    if (!n->have_dtype)
        n->dtype = dtype;
    else if (gk_dtype_is_complex(dtype) || gk_dtype_is_complex(n->dtype))
        /* complex wins likewise; beside a float it takes that float's
         * precision too (float64 and 1j give complex128) */
        n->dtype = gk_promote_types(gk_dtype_is_inexact(dtype) ? dtype : GK_COMPLEX64,
                                    gk_dtype_is_inexact(n->dtype) ? n->dtype : GK_COMPLEX64);
    else if (gk_dtype_is_float(dtype) != gk_dtype_is_float(n->dtype))
        n->dtype = gk_dtype_is_float(dtype) ? dtype : n->dtype;
    else
        n->dtype = gk_promote_types(n->dtype, dtype);
    n->have_dtype = true;
}

/* The second pass: checks that every element agrees with the shape, finds
 * the dtype and converts the array leaves. A list may stand where an array
 * stood before and the other way round ([np.arange(2), [5, 6]]), as in
 * NumPy: only the shapes must agree. */
static int nest_check(nest *n, PyObject *object, int depth)
{
    if (is_nested(object)) {
        if (depth == n->ndim || PySequence_Fast_GET_SIZE(object) != n->shape[depth]) {
            ragged(depth);
            return -1;
        }
        Py_ssize_t length = PySequence_Fast_GET_SIZE(object);
        for (Py_ssize_t i = 0; i < length; i++) {
            if (Py_EnterRecursiveCall(" while converting a nested sequence"))
                return -1;
            int failed = nest_check(n, PySequence_Fast_GET_ITEM(object, i), depth + 1);
            Py_LeaveRecursiveCall();
            if (failed)
                return -1;
        }
        return 0;
    }
    if (is_scalar(object)) {
        if (depth != n->ndim) {
            ragged(depth);
            return -1;
        }
        nest_see(n, scalar_dtype(object));
        return 0;
    }
    PyObject *leaf = leaf_array(n->state, object);
    if (!leaf)
        return -1;
    gk_array *a = ((gkpy_array *)leaf)->array;
    if (gk_array_ndim(a) != n->ndim - depth ||
        memcmp(gk_array_shape(a), n->shape + depth,
               sizeof(int64_t) * (size_t)gk_array_ndim(a)) != 0) {
        Py_DECREF(leaf);
        ragged(depth);
        return -1;
    }
    nest_see(n, gk_array_dtype(a));
    if (!n->arrays && !(n->arrays = PyList_New(0))) {
        Py_DECREF(leaf);
        return -1;
    }
    int failed = PyList_Append(n->arrays, leaf);
    Py_DECREF(leaf);
    return failed;
}

/* The third pass: writes every element, in C order, at *cursor. */
static int nest_fill(nest *n, PyObject *object, int depth, char **cursor)
{
    if (is_nested(object)) {
        Py_ssize_t length = PySequence_Fast_GET_SIZE(object);
        for (Py_ssize_t i = 0; i < length; i++)
            if (nest_fill(n, PySequence_Fast_GET_ITEM(object, i), depth + 1, cursor) < 0)
                return -1;
        return 0;
    }
    size_t itemsize = gk_dtype_size(n->dtype);
    if (is_scalar(object)) {
        if (gkpy_store_scalar(object, n->dtype, *cursor) < 0)
            return -1;
        *cursor += itemsize;
        return 0;
    }
    /* An array leaf: on the CPU, converted straight into the buffer. */
    gk_array *a = ((gkpy_array *)PyList_GET_ITEM(n->arrays, n->next_array++))->array;
    gk_array *host = NULL, *target = NULL;
    gk_status status = GK_OK;
    if (gk_array_device(a).kind != GK_DEVICE_CPU)
        status = gk_to(a, gk_device_cpu(), &host);
    if (status == GK_OK)
        status = gk_wrap_host(n->dtype, n->ndim - depth, n->shape + depth, *cursor, &target);
    if (status == GK_OK)
        status = gk_assign(target, host ? host : a);
    gk_array_free(target);
    gk_array_free(host);
    if (status != GK_OK) {
        gkpy_raise(n->state, status);
        return -1;
    }
    *cursor += itemsize * (size_t)gk_array_size(a);
    return 0;
}

/* An array from a Python scalar or a (nested) list or tuple. */
static PyObject *from_nested(gkpy_state *state, PyObject *object, const gk_dtype *dtype,
                             gk_device device)
{
    nest n = {.state = state};
    PyObject *result = NULL;
    char small[256];
    char *data = small;
    if (nest_shape(&n, object) < 0 || nest_check(&n, object, 0) < 0)
        goto done;
    if (dtype)
        n.dtype = *dtype;
    else if (!n.have_dtype)
        n.dtype = GK_FLOAT32; /* [] and [[], []]: the default floating dtype */
    int64_t size = 1;
    for (int i = 0; i < n.ndim; i++)
        size *= n.shape[i];
    size_t nbytes = (size_t)size * gk_dtype_size(n.dtype);
    if (nbytes > sizeof small && !(data = PyMem_Malloc(nbytes))) {
        PyErr_NoMemory();
        goto done;
    }
    char *cursor = data;
    if (nest_fill(&n, object, 0, &cursor) < 0)
        goto done;
    gk_array *array;
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = gk_from_host(device, n.dtype, n.ndim, n.shape, data, &array);
    Py_END_ALLOW_THREADS
    if (status != GK_OK)
        gkpy_raise(state, status);
    else
        result = gkpy_array_wrap(state, array);
done:
    if (data != small)
        PyMem_Free(data);
    Py_XDECREF(n.arrays);
    return result;
}

static PyObject *from_scalar(gkpy_state *state, PyObject *object, const gk_dtype *dtype,
                             gk_device device)
{
    gk_dtype type = dtype ? *dtype : scalar_dtype(object);
    uint64_t bytes[2] = {0, 0}; /* room for complex128 */
    if (gkpy_store_scalar(object, type, bytes) < 0)
        return NULL;
    gk_array *array;
    gk_status status = gk_from_host(device, type, 0, NULL, bytes, &array);
    return status == GK_OK ? gkpy_array_wrap(state, array) : gkpy_raise(state, status);
}

/* ------------------------------------------------------------------ */
/* asarray                                                             */

/* `source` (an Array) on `device` as `dtype` (NULL: as it is): itself when
 * nothing changes and copy allows, else a new array. */
static PyObject *convert_array(gkpy_state *state, PyObject *source, const gk_dtype *dtype,
                               const gk_device *device, int copy)
{
    gk_array *a = ((gkpy_array *)source)->array;
    gk_dtype to_dtype = dtype ? *dtype : gk_array_dtype(a);
    gk_device to_device = device ? *device : gk_array_device(a);
    bool same_dtype = to_dtype == gk_array_dtype(a);
    bool same_device = gk_device_equal(to_device, gk_array_device(a));
    if (same_dtype && same_device && copy != 1)
        return Py_NewRef(source);
    if (copy == 0) {
        PyErr_SetString(PyExc_ValueError,
                        "asarray(copy=False): a copy is needed to change the dtype or device");
        return NULL;
    }
    gk_array *result = NULL, *step = NULL;
    gk_status status;
    bool release = gkpy_long_work(a) || to_device.kind != GK_DEVICE_CPU;
    PyThreadState *thread = release ? PyEval_SaveThread() : NULL;
    if (same_device) { /* in a's memory order, as NumPy's order='K' */
        status = gk_cast(a, to_dtype, &result);
    } else if (same_dtype) {
        status = gk_to(a, to_device, &result);
    } else if (gk_dtype_size(to_dtype) < gk_dtype_size(gk_array_dtype(a))) {
        /* Narrower first, so that fewer bytes move. */
        status = gk_cast(a, to_dtype, &step);
        if (status == GK_OK)
            status = gk_to(step, to_device, &result);
    } else {
        status = gk_to(a, to_device, &step);
        if (status == GK_OK)
            status = gk_cast(step, to_dtype, &result);
    }
    gk_array_free(step);
    if (thread)
        PyEval_RestoreThread(thread);
    return status == GK_OK ? gkpy_array_wrap(state, result) : gkpy_raise(state, status);
}

PyObject *gkpy_asarray(gkpy_state *state, PyObject *object, const gk_dtype *dtype,
                       const gk_device *device, int copy)
{
    if (gkpy_is_array(state, object))
        return convert_array(state, object, dtype, device, copy);
    gk_device where = device ? *device : gkpy_default_device(state);
    bool scalar = PyBool_Check(object) || PyLong_CheckExact(object) ||
                  PyFloat_CheckExact(object) || PyComplex_CheckExact(object);
    if (scalar || is_nested(object)) {
        if (copy == 0) {
            PyErr_Format(PyExc_ValueError,
                         "asarray(copy=False): a %.100s cannot become an array without a copy",
                         Py_TYPE(object)->tp_name);
            return NULL;
        }
        return scalar ? from_scalar(state, object, dtype, where)
                      : from_nested(state, object, dtype, where);
    }
    /* copy=True is done below (by the dtype or device change when there is
     * one, else by a copy), so the import itself shares when it can; with
     * copy=False it refuses memory that it could only copy (read-only). */
    bool handled = false;
    PyObject *shared = gkpy_from_protocols(state, object, copy == 0 ? 0 : -1, &handled);
    if (handled) {
        if (!shared)
            return NULL;
        /* Host memory goes to the default device when none is named (a
         * NumPy array inside `with gpukit.device("cuda:0")`); device memory
         * stays where it is. */
        gk_device there = gk_array_device(((gkpy_array *)shared)->array);
        const gk_device *target = device;
        if (!target && there.kind == GK_DEVICE_CPU)
            target = &where;
        PyObject *result = convert_array(state, shared, dtype, target, copy);
        Py_DECREF(shared);
        return result;
    }
    if (copy == 0) {
        PyErr_Format(PyExc_ValueError,
                     "asarray(copy=False): a %.100s cannot become an array without a copy",
                     Py_TYPE(object)->tp_name);
        return NULL;
    }
    if (is_scalar(object))
        return from_scalar(state, object, dtype, where);
    if (PySequence_Check(object) && !PyUnicode_Check(object) && !PyBytes_Check(object) &&
        !PyByteArray_Check(object)) {
        PyObject *list = PySequence_List(object);
        if (!list)
            return NULL;
        PyObject *result = from_nested(state, list, dtype, where);
        Py_DECREF(list);
        return result;
    }
    PyErr_Format(PyExc_TypeError,
                 "cannot make an array from an object of type %.100s; give a number, a "
                 "(nested) list, a gpukit Array or an object with the buffer protocol, "
                 "__dlpack__ or __cuda_array_interface__",
                 Py_TYPE(object)->tp_name);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* the module functions                                                */

int gkpy_copy_truth(PyObject *object)
{
    /* A string's truth is not what it says: copy="False" (or NumPy 1's
     * "never") would copy. NumPy 2 refuses them with this error too. */
    if (PyUnicode_Check(object) || PyBytes_Check(object)) {
        PyErr_Format(PyExc_ValueError, "copy must be True, False or None, not the string %R",
                     object);
        return -1;
    }
    return PyObject_IsTrue(object);
}

int gkpy_parse_copy(PyObject *object, int *copy)
{
    if (!object || object == Py_None) {
        *copy = -1;
        return 0;
    }
    int truth = gkpy_copy_truth(object);
    if (truth < 0)
        return -1;
    *copy = truth;
    return 0;
}

PyDoc_STRVAR(asarray_doc,
"asarray(obj, /, *, dtype=None, device=None, copy=None)\n"
"--\n\n"
"An array from `obj`: a gpukit Array, a Python number, a nested list or\n"
"tuple, or anything exporting the buffer protocol (NumPy), __dlpack__\n"
"(PyTorch, CuPy, JAX) or __cuda_array_interface__.\n\n"
"dtype: when None, an Array keeps its dtype; Python bools give bool, ints\n"
"int64 and floats float32 (PyTorch's defaults, not NumPy's float64); in a\n"
"list a floating-point element wins over integers and bools, and otherwise\n"
"the elements promote as result_type() says (uint8 and int8 arrays: int16).\n"
"device: when None, an Array and device memory stay where they are; Python\n"
"data and host memory go to the default device (gpukit.default_device()).\n"
"copy: True always copies; False never does (ValueError when the dtype or\n"
"device must change, or for Python lists); None copies only when needed,\n"
"so the result may share memory with `obj`. A copy of an Array on its own\n"
"device keeps its memory order (NumPy's order='K'); Array.copy() is\n"
"C-contiguous.");

static PyObject *py_asarray(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    static const char *const names[] = {"obj", "dtype", "device", "copy"};
    PyObject *v[4];
    if (gkpy_parse_args("asarray", args, nargs, kwnames, names, 4, 1, 1, 1, v) < 0)
        return NULL;
    gkpy_state *state = gkpy_state_of_module(module);
    gk_dtype dtype;
    gk_device device;
    int copy, has_device = 0, has_dtype = gkpy_optional_dtype(state, v[1], &dtype);
    if (has_dtype < 0 || gkpy_parse_copy(v[3], &copy) < 0 ||
        (has_device = gkpy_optional_device(state, v[2], &device)) < 0)
        return NULL;
    return gkpy_asarray(state, v[0], has_dtype ? &dtype : NULL, has_device ? &device : NULL,
                        copy);
}

/* The dtype (`fallback` when None or absent) and device (the default one
 * when None or absent) of a creation call. */
static int dtype_and_device(gkpy_state *state, PyObject *dtype_object, PyObject *device_object,
                            gk_dtype fallback, gk_dtype *dtype, gk_device *device)
{
    int given = gkpy_optional_dtype(state, dtype_object, dtype);
    if (given < 0)
        return -1;
    if (!given)
        *dtype = fallback;
    return gkpy_device_from_object(state, device_object, device);
}

/* A TypeError unless `object` is an int (not a bool), for `name` of
 * `function`. */
static int require_int(const char *function, const char *name, PyObject *object)
{
    if (PyIndex_Check(object) && !PyBool_Check(object))
        return 0;
    PyErr_Format(PyExc_TypeError, "%s(): %s must be an int, not %.100s", function, name,
                 Py_TYPE(object)->tp_name);
    return -1;
}

enum fill { FILL_EMPTY, FILL_ZEROS, FILL_ONES, FILL_VALUE };

static gk_status filled(enum fill fill, gk_device device, gk_dtype dtype, int ndim,
                        const int64_t *shape, gk_array **out)
{
    switch (fill) {
    case FILL_ZEROS: return gk_zeros(device, dtype, ndim, shape, out);
    case FILL_ONES: return gk_ones(device, dtype, ndim, shape, out);
    default: return gk_empty(device, dtype, ndim, shape, out);
    }
}

/* empty(), zeros() and ones(). */
static PyObject *create_filled(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames, const char *name, enum fill fill)
{
    static const char *const names[] = {"shape", "dtype", "device"};
    PyObject *v[3];
    if (gkpy_parse_args(name, args, nargs, kwnames, names, 3, 0, 1, 1, v) < 0)
        return NULL;
    gkpy_state *state = gkpy_state_of_module(module);
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    gk_dtype dtype;
    gk_device device;
    if (gkpy_parse_shape(v[0], &ndim, shape) < 0 ||
        dtype_and_device(state, v[1], v[2], GK_FLOAT32, &dtype, &device) < 0)
        return NULL;
    gk_array *array = NULL;
    gk_status status = filled(fill, device, dtype, ndim, shape, &array);
    return gkpy_array_result(state, status, array);
}

/* An array of `shape` filled with the Python number `value`, exactly (an
 * int64 beyond 2^53 does not go through a double). */
static PyObject *full_array(gkpy_state *state, int ndim, const int64_t *shape, PyObject *value,
                            gk_dtype dtype, gk_device device)
{
    if (!is_number(value)) {
        PyErr_Format(PyExc_TypeError, "full(): fill_value must be a number, not %.100s",
                     Py_TYPE(value)->tp_name);
        return NULL;
    }
    uint64_t bytes[2] = {0, 0}; /* room for complex128 */
    if (gkpy_store_scalar(value, dtype, bytes) < 0)
        return NULL;
    gk_array *array = NULL, *scalar = NULL;
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = gk_empty(device, dtype, ndim, shape, &array);
    if (status == GK_OK)
        status = gk_from_host(device, dtype, 0, NULL, bytes, &scalar);
    if (status == GK_OK)
        status = gk_assign(array, scalar);
    gk_array_free(scalar);
    Py_END_ALLOW_THREADS
    return gkpy_array_result(state, status, array);
}

PyDoc_STRVAR(full_doc,
"full(shape, fill_value, *, dtype=None, device=None)\n"
"--\n\n"
"An array of `shape` with every element `fill_value`. Without dtype, a\n"
"bool gives bool, an int int64 and a float float32.");

static PyObject *py_full(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    static const char *const names[] = {"shape", "fill_value", "dtype", "device"};
    PyObject *v[4];
    if (gkpy_parse_args("full", args, nargs, kwnames, names, 4, 0, 2, 2, v) < 0)
        return NULL;
    gkpy_state *state = gkpy_state_of_module(module);
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    gk_dtype dtype;
    gk_device device;
    gk_dtype fallback = is_number(v[1]) ? scalar_dtype(v[1]) : GK_FLOAT32;
    if (gkpy_parse_shape(v[0], &ndim, shape) < 0 ||
        dtype_and_device(state, v[2], v[3], fallback, &dtype, &device) < 0)
        return NULL;
    return full_array(state, ndim, shape, v[1], dtype, device);
}

/* A number argument of arange/linspace as a double; *is_float says
 * whether it was a float. */
static int number_arg(const char *function, PyObject *object, double *value, bool *is_float)
{
    if (PyFloat_Check(object)) {
        *value = PyFloat_AS_DOUBLE(object);
        *is_float = true;
        return 0;
    }
    if (PyIndex_Check(object)) {
        PyObject *index = PyNumber_Index(object);
        if (!index)
            return -1;
        *value = PyLong_AsDouble(index);
        Py_DECREF(index);
        *is_float = false;
        return *value == -1.0 && PyErr_Occurred() ? -1 : 0;
    }
    PyObject *number = PyNumber_Float(object);
    if (!number) {
        PyErr_Format(PyExc_TypeError, "%s(): expected a number, not %.100s", function,
                     Py_TYPE(object)->tp_name);
        return -1;
    }
    *value = PyFloat_AS_DOUBLE(number);
    *is_float = true;
    Py_DECREF(number);
    return 0;
}

/* NumPy's arange of an integer dtype: its first two values (start and
 * start + step, where the sequence has them) must fit the dtype, else
 * OverflowError naming the value; the values after them wrap around. */
static int check_first_values(long long start, long long stop, long long step, gk_dtype dtype)
{
    if (step == 0)
        return 0; /* the library's error */
    bool up = step > 0;
    long long second = (long long)((unsigned long long)start + (unsigned long long)step);
    bool past_int64 = up ? second < start : second > start; /* so past stop too */
    long long values[2] = {start, second};
    bool present[2] = {up ? start < stop : start > stop,
                       !past_int64 && (up ? second < stop : second > stop)};
    for (int i = 0; i < 2; i++) {
        if (!present[i])
            continue;
        char element[8];
        PyObject *value = PyLong_FromLongLong(values[i]);
        if (!value)
            return -1;
        int stored = store_integer(value, value, dtype, element);
        Py_DECREF(value);
        if (stored < 0)
            return -1;
    }
    return 0;
}

PyDoc_STRVAR(arange_doc,
"arange(start, /, stop=None, step=1, *, dtype=None, device=None)\n"
"--\n\n"
"start, start + step, ... while below stop (above it for a negative step);\n"
"arange(n) is 0 .. n-1. Without dtype: int64 when start, stop and step are\n"
"all ints, else float32. An integer dtype holds the first two values or\n"
"raises OverflowError; later values wrap around, as NumPy's do.");

static PyObject *py_arange(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    static const char *const names[] = {"start", "stop", "step", "dtype", "device"};
    PyObject *v[5];
    if (gkpy_parse_args("arange", args, nargs, kwnames, names, 5, 1, 3, 1, v) < 0)
        return NULL;
    gkpy_state *state = gkpy_state_of_module(module);
    double start = 0, stop, step = 1;
    bool f_start = false, f_stop = false, f_step = false;
    if (v[1] && v[1] != Py_None) {
        if (number_arg("arange", v[0], &start, &f_start) < 0 ||
            number_arg("arange", v[1], &stop, &f_stop) < 0)
            return NULL;
    } else if (number_arg("arange", v[0], &stop, &f_stop) < 0) {
        return NULL;
    }
    if (v[2] && number_arg("arange", v[2], &step, &f_step) < 0)
        return NULL;
    gk_dtype dtype;
    gk_device device;
    gk_dtype fallback = f_start || f_stop || f_step ? GK_FLOAT32 : GK_INT64;
    if (dtype_and_device(state, v[3], v[4], fallback, &dtype, &device) < 0)
        return NULL;
    gk_array *array = NULL;
    gk_status status;
    if (!f_start && !f_stop && !f_step && gk_dtype_is_integer(dtype)) {
        /* integers: exact beyond 2^53, where the doubles above are not */
        long long bounds[3] = {0, 0, 1};
        PyObject *given[3] = {v[1] && v[1] != Py_None ? v[0] : NULL,
                              v[1] && v[1] != Py_None ? v[1] : v[0], v[2]};
        for (int i = 0; i < 3; i++) {
            PyObject *index = given[i] ? PyNumber_Index(given[i]) : NULL;
            if (given[i] && !index)
                return NULL;
            bounds[i] = index ? PyLong_AsLongLong(index) : bounds[i];
            Py_XDECREF(index);
            if (bounds[i] == -1 && PyErr_Occurred())
                return NULL;
        }
        if (check_first_values(bounds[0], bounds[1], bounds[2], dtype) < 0)
            return NULL;
        status = gk_arange_int64(device, dtype, bounds[0], bounds[1], bounds[2], &array);
    } else {
        status = gk_arange(device, dtype, start, stop, step, &array);
    }
    return gkpy_array_result(state, status, array);
}

PyDoc_STRVAR(linspace_doc,
"linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True)\n"
"--\n\n"
"`num` evenly spaced values from start to stop (stop included unless\n"
"endpoint=False); dtype defaults to float32 (complex64 when start or stop\n"
"is complex: each part spaced evenly).");

static PyObject *py_linspace(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    static const char *const names[] = {"start", "stop", "num", "dtype", "device", "endpoint"};
    PyObject *v[6];
    if (gkpy_parse_args("linspace", args, nargs, kwnames, names, 6, 2, 3, 3, v) < 0)
        return NULL;
    gkpy_state *state = gkpy_state_of_module(module);
    /* complex ends (the standard's): each part's line, in complex64 */
    bool complex = PyComplex_Check(v[0]) || PyComplex_Check(v[1]);
    double ends[2][2] = {{0, 0}, {0, 0}};
    bool f;
    int64_t num;
    for (int i = 0; i < 2; i++) {
        if (complex && PyComplex_Check(v[i])) {
            ends[i][0] = PyComplex_RealAsDouble(v[i]);
            ends[i][1] = PyComplex_ImagAsDouble(v[i]);
        } else if (number_arg("linspace", v[i], &ends[i][0], &f) < 0) {
            return NULL;
        }
    }
    if (require_int("linspace", "num", v[2]) < 0 || parse_length(v[2], &num) < 0)
        return NULL;
    int endpoint = v[5] ? PyObject_IsTrue(v[5]) : 1;
    gk_dtype dtype;
    gk_device device;
    if (endpoint < 0 || dtype_and_device(state, v[3], v[4], complex ? GK_COMPLEX64 : GK_FLOAT32,
                                         &dtype, &device) < 0)
        return NULL;
    gk_array *array = NULL;
    gk_status status =
        complex ? gk_linspace_complex(device, dtype, ends[0], ends[1], num, endpoint, &array)
                : gk_linspace(device, dtype, ends[0][0], ends[1][0], num, endpoint, &array);
    return gkpy_array_result(state, status, array);
}

/* rows x cols zeros with ones on diagonal k. gk_eye makes the square
 * identity; otherwise the ones are assigned to a strided view: in the flat
 * C-order array the diagonal is every (cols + 1)-th element from its
 * first. */
static gk_status eye_core(gk_device device, gk_dtype dtype, int64_t rows, int64_t cols,
                          long long k, gk_array **out)
{
    if (rows == cols && k == 0)
        return gk_eye(device, dtype, rows, out);
    int64_t shape[2] = {rows, cols};
    int64_t count = k >= 0 ? (rows < cols - k ? rows : cols - k)
                           : (rows + k < cols ? rows + k : cols);
    gk_status status = gk_zeros(device, dtype, 2, shape, out);
    if (status != GK_OK || count <= 0)
        return status;
    int64_t flat = rows * cols, first = k >= 0 ? k : -k * cols;
    gk_array *line = NULL, *diagonal = NULL, *one = NULL;
    status = gk_reshape(*out, 1, &flat, &line);
    if (status == GK_OK)
        status = gk_slice(line, 0, first, first + (count - 1) * (cols + 1) + 1, cols + 1,
                          &diagonal);
    if (status == GK_OK)
        status = gk_ones(device, dtype, 0, NULL, &one);
    if (status == GK_OK)
        status = gk_assign(diagonal, one);
    gk_array_free(one);
    gk_array_free(diagonal);
    gk_array_free(line);
    return status;
}

PyDoc_STRVAR(eye_doc,
"eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None)\n"
"--\n\n"
"A 2-D array with ones on diagonal k (0: the main one, > 0 above it,\n"
"< 0 below it) and zeros elsewhere; n_cols defaults to n_rows, dtype to\n"
"float32.");

static PyObject *py_eye(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames)
{
    static const char *const names[] = {"n_rows", "n_cols", "k", "dtype", "device"};
    PyObject *v[5];
    if (gkpy_parse_args("eye", args, nargs, kwnames, names, 5, 2, 2, 1, v) < 0)
        return NULL;
    gkpy_state *state = gkpy_state_of_module(module);
    int64_t rows, cols;
    if (parse_length(v[0], &rows) < 0)
        return NULL;
    cols = rows;
    if (v[1] && v[1] != Py_None && parse_length(v[1], &cols) < 0)
        return NULL;
    long long k = 0;
    if (v[2]) {
        if (require_int("eye", "k", v[2]) < 0)
            return NULL;
        int overflow;
        k = PyLong_AsLongLongAndOverflow(v[2], &overflow);
        if (k == -1 && PyErr_Occurred())
            return NULL;
        /* a diagonal beyond every column or row: all zeros, as any beyond */
        k = overflow > 0 ? INT64_MAX : overflow < 0 ? -INT64_MAX : k;
    }
    gk_dtype dtype;
    gk_device device;
    if (dtype_and_device(state, v[3], v[4], GK_FLOAT32, &dtype, &device) < 0)
        return NULL;
    gk_array *array = NULL;
    gk_status status = eye_core(device, dtype, rows, cols, k, &array);
    return gkpy_array_result(state, status, array);
}

/* empty_like(), zeros_like(), ones_like() and full_like() (FILL_VALUE,
 * whose fill_value comes second). */
static PyObject *create_like(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames, const char *name, enum fill fill)
{
    static const char *const names[] = {"x", "dtype", "device"};
    static const char *const full_names[] = {"x", "fill_value", "dtype", "device"};
    PyObject *v[4];
    bool full = fill == FILL_VALUE;
    if (full ? gkpy_parse_args(name, args, nargs, kwnames, full_names, 4, 1, 2, 2, v)
             : gkpy_parse_args(name, args, nargs, kwnames, names, 3, 1, 1, 1, v))
        return NULL;
    PyObject *dtype_object = full ? v[2] : v[1], *device_object = full ? v[3] : v[2];
    gkpy_state *state = gkpy_state_of_module(module);
    /* The template: any array-like, as an Array. */
    PyObject *template = gkpy_is_array(state, v[0]) ? Py_NewRef(v[0])
                                                     : gkpy_asarray(state, v[0], NULL, NULL, -1);
    if (!template)
        return NULL;
    gk_array *x = ((gkpy_array *)template)->array;
    gk_dtype dtype = gk_array_dtype(x);
    gk_device device = gk_array_device(x);
    int ndim = gk_array_ndim(x);
    int64_t shape[GK_MAX_DIMS];
    memcpy(shape, gk_array_shape(x), sizeof(int64_t) * (size_t)ndim);
    Py_DECREF(template);
    if (gkpy_optional_dtype(state, dtype_object, &dtype) < 0 ||
        gkpy_optional_device(state, device_object, &device) < 0)
        return NULL;
    if (full)
        return full_array(state, ndim, shape, v[1], dtype, device);
    gk_array *array = NULL;
    gk_status status = filled(fill, device, dtype, ndim, shape, &array);
    return gkpy_array_result(state, status, array);
}

/* One C function per creation function (a PyCFunction has no slot for
 * the fill). */
#define FILL_FUNCTION(name, create, fill)                                                         \
    static PyObject *py_##name(PyObject *module, PyObject *const *args, Py_ssize_t nargs,        \
                               PyObject *kwnames)                                                 \
    {                                                                                             \
        return create(module, args, nargs, kwnames, #name, fill);                                 \
    }

PyDoc_STRVAR(empty_doc,
"empty(shape, *, dtype=None, device=None)\n"
"--\n\n"
"An uninitialised array of `shape` (an int or a tuple of ints); dtype\n"
"defaults to float32, device to the default device.");

PyDoc_STRVAR(zeros_doc,
"zeros(shape, *, dtype=None, device=None)\n"
"--\n\n"
"An array of zeros of `shape` (an int or a tuple of ints); dtype defaults\n"
"to float32, device to the default device.");

PyDoc_STRVAR(ones_doc,
"ones(shape, *, dtype=None, device=None)\n"
"--\n\n"
"An array of ones of `shape` (an int or a tuple of ints); dtype defaults\n"
"to float32, device to the default device.");

PyDoc_STRVAR(empty_like_doc,
"empty_like(x, /, *, dtype=None, device=None)\n"
"--\n\n"
"An uninitialised array with the shape of x, and its dtype and device\n"
"unless given.");

PyDoc_STRVAR(zeros_like_doc,
"zeros_like(x, /, *, dtype=None, device=None)\n"
"--\n\n"
"Zeros with the shape of x, and its dtype and device unless given.");

PyDoc_STRVAR(ones_like_doc,
"ones_like(x, /, *, dtype=None, device=None)\n"
"--\n\n"
"Ones with the shape of x, and its dtype and device unless given.");

PyDoc_STRVAR(full_like_doc,
"full_like(x, /, fill_value, *, dtype=None, device=None)\n"
"--\n\n"
"fill_value everywhere, with the shape of x, and its dtype (a float into\n"
"an integer dtype truncates) and device unless given.");

FILL_FUNCTION(empty, create_filled, FILL_EMPTY)
FILL_FUNCTION(zeros, create_filled, FILL_ZEROS)
FILL_FUNCTION(ones, create_filled, FILL_ONES)
FILL_FUNCTION(empty_like, create_like, FILL_EMPTY)
FILL_FUNCTION(zeros_like, create_like, FILL_ZEROS)
FILL_FUNCTION(ones_like, create_like, FILL_ONES)
FILL_FUNCTION(full_like, create_like, FILL_VALUE)

PyDoc_STRVAR(from_bytes_doc,
"_array_from_bytes(data, shape, dtype, device)\n"
"--\n\n"
"Unpickles an Array: its C-order bytes, shape, dtype name and device name.");

static PyObject *py_array_from_bytes(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "_array_from_bytes(data: bytes, shape, dtype, device)");
        return NULL;
    }
    gkpy_state *state = gkpy_state_of_module(module);
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    gk_dtype dtype;
    gk_device device;
    if (gkpy_parse_shape(args[1], &ndim, shape) < 0 ||
        gkpy_dtype_from_object(state, args[2], &dtype) < 0 ||
        gkpy_device_from_object(state, args[3], &device) < 0)
        return NULL;
    /* The elements the shape holds, -1 past int64 (a pickle is outside
     * data, and overflow is undefined in C): then no bytes fit it. */
    int64_t size = 1;
    for (int i = 0; i < ndim && size >= 0; i++)
        size = shape[i] != 0 && size > INT64_MAX / shape[i] ? -1 : size * shape[i];
    if (size < 0 || (uint64_t)size > (uint64_t)PY_SSIZE_T_MAX / gk_dtype_size(dtype) ||
        (uint64_t)PyBytes_GET_SIZE(args[0]) != (uint64_t)size * gk_dtype_size(dtype)) {
        PyErr_SetString(PyExc_ValueError, "_array_from_bytes: the data does not fit the shape");
        return NULL;
    }
    gk_array *array;
    gk_status status =
        gk_from_host(device, dtype, ndim, shape, PyBytes_AS_STRING(args[0]), &array);
    return gkpy_array_result(state, status, array);
}

#define FASTCALL_KW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

static PyMethodDef create_functions[] = {
    {"asarray", FASTCALL_KW(py_asarray), asarray_doc},
    {"empty", FASTCALL_KW(py_empty), empty_doc},
    {"zeros", FASTCALL_KW(py_zeros), zeros_doc},
    {"ones", FASTCALL_KW(py_ones), ones_doc},
    {"full", FASTCALL_KW(py_full), full_doc},
    {"arange", FASTCALL_KW(py_arange), arange_doc},
    {"linspace", FASTCALL_KW(py_linspace), linspace_doc},
    {"eye", FASTCALL_KW(py_eye), eye_doc},
    {"empty_like", FASTCALL_KW(py_empty_like), empty_like_doc},
    {"zeros_like", FASTCALL_KW(py_zeros_like), zeros_like_doc},
    {"ones_like", FASTCALL_KW(py_ones_like), ones_like_doc},
    {"full_like", FASTCALL_KW(py_full_like), full_like_doc},
    {"_array_from_bytes", (PyCFunction)(void (*)(void))py_array_from_bytes, METH_FASTCALL,
     from_bytes_doc},
    {NULL, NULL, 0, NULL},
};

int gkpy_create_init(PyObject *module, gkpy_state *state)
{
    (void)state;
    return PyModule_AddFunctions(module, create_functions);
}

PyObject *gkpy_as_array(gkpy_state *state, PyObject *object, PyObject *near)
{
    if (gkpy_is_array(state, object))
        return Py_NewRef(object);
    gk_device device;
    if (near)
        device = gk_array_device(((gkpy_array *)near)->array);
    return gkpy_asarray(state, object, NULL, near ? &device : NULL, -1);
}

int gkpy_expect_args(const char *function, Py_ssize_t nargs, Py_ssize_t expected)
{
    if (nargs == expected)
        return 0;
    PyErr_Format(PyExc_TypeError, "%s() takes exactly %zd argument%s (%zd given)", function,
                 expected, expected == 1 ? "" : "s", nargs);
    return -1;
}

int gkpy_as_pair(gkpy_state *state, PyObject *x1, PyObject *x2, PyObject *pair[2])
{
    PyObject *near = gkpy_is_array(state, x1) ? x1 : gkpy_is_array(state, x2) ? x2 : NULL;
    pair[0] = gkpy_as_array(state, x1, near);
    pair[1] = pair[0] ? gkpy_as_array(state, x2, near ? near : pair[0]) : NULL;
    if (pair[1])
        return 0;
    Py_XDECREF(pair[0]);
    return -1;
}
