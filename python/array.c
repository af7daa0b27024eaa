/* gpukit.Array: one gk_array (include/gpukit/array.h) as a Python object,
 * with NumPy's and the array API's attributes, operators, basic indexing
 * and conversions. Everything is a call into libgpukit; this file only
 * translates arguments, results and errors.
 *
 * Speed: `a + b` on small CPU arrays is a handful of C calls. The operator
 * slots recognise our own type first, get the module state from the type,
 * allocate with tp_alloc and make no Python-level lookups; the GIL is
 * released only where the work may take long (a large array, another
 * device), since releasing it costs about as much as a small add. */
#include "gkpy.h"

#include <structmember.h>

#include <stdlib.h>
#include <string.h>

static void array_dealloc(PyObject *self);

static inline gk_array *array_of(PyObject *object)
{
    return ((gkpy_array *)object)->array;
}

/* Our type exactly (it is not subclassable): cheaper than finding the
 * module state first. */
static inline bool is_ours(PyObject *object)
{
    return Py_TYPE(object)->tp_dealloc == array_dealloc;
}

static inline gkpy_state *state_of(PyObject *self)
{
    return gkpy_state_of_type(Py_TYPE(self));
}

PyObject *gkpy_array_wrap(gkpy_state *state, gk_array *array)
{
    PyTypeObject *type = state->array_type;
    gkpy_array *self = (gkpy_array *)type->tp_alloc(type, 0);
    if (!self) {
        gk_array_free(array);
        return NULL;
    }
    self->array = array;
    return (PyObject *)self;
}

static void array_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    gkpy_array *a = (gkpy_array *)self;
    if (a->weakrefs)
        PyObject_ClearWeakRefs(self);
    gk_array_free(a->array);
    type->tp_free(self);
    Py_DECREF(type); /* instances of heap types hold their type */
}

PyObject *gkpy_array_result(gkpy_state *state, gk_status status, gk_array *array)
{
    if (status != GK_OK) {
        gk_array_free(array);
        return gkpy_raise(state, status);
    }
    return gkpy_array_wrap(state, array);
}

PyObject *gkpy_op_result(gkpy_state *state, gk_status status, gk_array *array, gk_op op,
                         gk_dtype dtype)
{
    if (status != GK_OK) {
        gk_array_free(array);
        return gkpy_raise_op(state, status, op, dtype);
    }
    return gkpy_array_wrap(state, array);
}

/* Whether a binary op may take long enough to be worth releasing the GIL
 * (gkpy_long_work): its result has the broadcast shape. */
static bool long_work2(const gk_array *a, const gk_array *b)
{
    if (gk_array_device(a).kind != GK_DEVICE_CPU || gk_array_device(b).kind != GK_DEVICE_CPU)
        return true;
    int na = gk_array_ndim(a), nb = gk_array_ndim(b), n = na > nb ? na : nb;
    const int64_t *sa = gk_array_shape(a), *sb = gk_array_shape(b);
    int64_t size = 1;
    for (int i = 0; i < n; i++) {
        int64_t la = i < na ? sa[na - 1 - i] : 1, lb = i < nb ? sb[nb - 1 - i] : 1;
        size *= la > lb ? la : lb;
        if (size >= GKPY_GIL_FREE_SIZE)
            return true;
    }
    return false;
}

/* ------------------------------------------------------------------ */
/* elements as Python objects                                          */

/* One element as a Python bool, int or float: integers exactly, from
 * their bytes (never through a double: uint64 and int64 extremes). */
static PyObject *scalar_object(gk_dtype dtype, const void *bytes)
{
    switch (dtype) {
    case GK_BOOL: return PyBool_FromLong(*(const uint8_t *)bytes != 0);
    case GK_INT8: return PyLong_FromLong(*(const int8_t *)bytes);
    case GK_INT16: return PyLong_FromLong(*(const int16_t *)bytes);
    case GK_INT32: return PyLong_FromLong(*(const int32_t *)bytes);
    case GK_INT64: return PyLong_FromLongLong(*(const int64_t *)bytes);
    case GK_UINT8: return PyLong_FromLong(*(const uint8_t *)bytes);
    case GK_UINT16: return PyLong_FromLong(*(const uint16_t *)bytes);
    case GK_UINT32: return PyLong_FromUnsignedLong(*(const uint32_t *)bytes);
    case GK_UINT64: return PyLong_FromUnsignedLongLong(*(const uint64_t *)bytes);
    case GK_FLOAT32: return PyFloat_FromDouble(*(const float *)bytes);
    case GK_FLOAT64: return PyFloat_FromDouble(*(const double *)bytes);
    case GK_FLOAT16:
    case GK_BFLOAT16: return PyFloat_FromDouble(gk_dtype_load(dtype, bytes));
    case GK_COMPLEX64:
    case GK_COMPLEX128: {
        double re, im;
        gk_dtype_load_complex(dtype, bytes, &re, &im);
        return PyComplex_FromDoubles(re, im);
    }
    }
    PyErr_Format(PyExc_SystemError, "invalid gk_dtype %d", (int)dtype);
    return NULL;
}

/* The single element of a size-1 array as a Python number. */
static PyObject *only_element(gkpy_state *state, const gk_array *a)
{
    uint64_t bytes[2] = {0, 0}; /* room for complex128 */
    gk_status status;
    GKPY_RUN(gkpy_long_work(a), gk_to_host(a, bytes, sizeof bytes));
    if (status != GK_OK)
        return gkpy_raise(state, status);
    return scalar_object(gk_array_dtype(a), bytes);
}

static PyObject *nested_list(const char **cursor, int depth, int ndim, const int64_t *shape,
                             gk_dtype dtype, size_t itemsize)
{
    if (depth == ndim) {
        PyObject *item = scalar_object(dtype, *cursor);
        *cursor += itemsize;
        return item;
    }
    PyObject *list = PyList_New((Py_ssize_t)shape[depth]);
    if (!list)
        return NULL;
    for (int64_t i = 0; i < shape[depth]; i++) {
        PyObject *item = nested_list(cursor, depth + 1, ndim, shape, dtype, itemsize);
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

/* ------------------------------------------------------------------ */
/* attributes                                                          */

static PyObject *shape_tuple(int ndim, const int64_t *shape, int64_t scale)
{
    PyObject *tuple = PyTuple_New(ndim);
    if (!tuple)
        return NULL;
    for (int i = 0; i < ndim; i++) {
        PyObject *n = PyLong_FromLongLong(shape[i] * scale);
        if (!n) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, i, n);
    }
    return tuple;
}

static PyObject *get_shape(PyObject *self, void *closure)
{
    (void)closure;
    gk_array *a = array_of(self);
    return shape_tuple(gk_array_ndim(a), gk_array_shape(a), 1);
}

static PyObject *get_strides(PyObject *self, void *closure)
{
    (void)closure;
    gk_array *a = array_of(self);
    return shape_tuple(gk_array_ndim(a), gk_array_strides(a),
                       (int64_t)gk_dtype_size(gk_array_dtype(a)));
}

static PyObject *get_dtype(PyObject *self, void *closure)
{
    (void)closure;
    return gkpy_dtype_object(state_of(self), gk_array_dtype(array_of(self)));
}

static PyObject *get_device(PyObject *self, void *closure)
{
    (void)closure;
    return gkpy_device_object(state_of(self), gk_array_device(array_of(self)));
}

static PyObject *get_ndim(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(gk_array_ndim(array_of(self)));
}

static PyObject *get_size(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLongLong(gk_array_size(array_of(self)));
}

static PyObject *get_nbytes(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromSize_t(gk_array_nbytes(array_of(self)));
}

static PyObject *get_itemsize(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromSize_t(gk_dtype_size(gk_array_dtype(array_of(self))));
}

static PyObject *get_T(PyObject *self, void *closure)
{
    (void)closure;
    gk_array *result = NULL;
    gk_status status = gk_transpose(array_of(self), NULL, &result);
    return gkpy_array_result(state_of(self), status, result);
}

static PyObject *get_mT(PyObject *self, void *closure)
{
    (void)closure;
    gk_array *a = array_of(self), *result = NULL;
    int ndim = gk_array_ndim(a);
    if (ndim < 2) {
        PyErr_Format(PyExc_ValueError, "mT needs at least 2 dimensions; the array has %d", ndim);
        return NULL;
    }
    gk_status status = gk_matrix_transpose(a, &result);
    return gkpy_array_result(state_of(self), status, result);
}

static PyObject *get_array_priority(PyObject *self, void *closure)
{
    (void)self;
    (void)closure;
    /* Above NumPy's, so that ndarray + Array calls our reflected operator
     * (the result stays a gpukit Array, on the Array's device). */
    return PyFloat_FromDouble(1000.0);
}

static PyGetSetDef array_getset[] = {
    {"shape", get_shape, NULL, "The length of each axis, a tuple of ints.", NULL},
    {"dtype", get_dtype, NULL, "The element type (gpukit.float32, ...).", NULL},
    {"device", get_device, NULL, "The device the array lives on (a gpukit.device).", NULL},
    {"ndim", get_ndim, NULL, "The number of axes.", NULL},
    {"size", get_size, NULL, "The number of elements.", NULL},
    {"nbytes", get_nbytes, NULL, "size * itemsize: the bytes the elements take.", NULL},
    {"itemsize", get_itemsize, NULL, "Bytes per element.", NULL},
    {"strides", get_strides, NULL,
     "Bytes from one element to the next along each axis (NumPy's convention; may be 0 "
     "or negative for views).",
     NULL},
    {"T", get_T, NULL, "The array with its axes reversed (a view); for 2-D the transpose.",
     NULL},
    {"mT", get_mT, NULL, "The last two axes swapped (a view): a stack of transposed matrices.",
     NULL},
    {"__array_priority__", get_array_priority, NULL,
     "Makes NumPy arrays defer their operators to gpukit Arrays.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ------------------------------------------------------------------ */
/* operators                                                           */

/* The other operand of an operator, as an array on the Array's device. */
typedef struct operand {
    const gk_array *array;
    gk_array *temp; /* owned, for Python numbers */
    PyObject *keep; /* owned, for converted array-likes */
} operand;

static void operand_clear(operand *o)
{
    gk_array_free(o->temp);
    Py_XDECREF(o->keep);
}

/* Python's own bool, int, float and complex: weak beside an array. */
static bool is_python_number(PyObject *object)
{
    return PyBool_Check(object) || PyLong_CheckExact(object) || PyFloat_CheckExact(object) ||
           PyComplex_CheckExact(object);
}

static gk_value_kind value_kind(PyObject *value)
{
    return PyBool_Check(value)      ? GK_VALUE_BOOL
           : PyLong_Check(value)    ? GK_VALUE_INT
           : PyComplex_Check(value) ? GK_VALUE_COMPLEX
                                    : GK_VALUE_FLOAT;
}

int gkpy_scalar_array(gkpy_state *state, const gk_array *x, PyObject *value, gk_op op,
                      gk_array **out)
{
    gk_dtype dtype = gk_op_value_dtype(op, gk_array_dtype(x), value_kind(value));
    uint64_t bytes[2] = {0, 0}; /* room for complex128 */
    if (gkpy_store_scalar(value, dtype, bytes) < 0)
        return -1;
    gk_status status = gk_from_host(gk_array_device(x), dtype, 0, NULL, bytes, out);
    if (status != GK_OK) {
        gkpy_raise(state, status);
        return -1;
    }
    return 0;
}

PyObject *gkpy_integer_end(gk_dtype dtype, int side)
{
    int bits = 8 * (int)gk_dtype_size(dtype);
    if (gk_dtype_is_unsigned(dtype))
        return side < 0 ? PyLong_FromLong(0)
                        : PyLong_FromUnsignedLongLong(bits == 64 ? UINT64_MAX
                                                                 : (1ULL << bits) - 1);
    long long most = bits == 64 ? INT64_MAX : (1LL << (bits - 1)) - 1;
    return PyLong_FromLongLong(side < 0 ? -most - 1 : most);
}

int gkpy_against_range(PyObject *value, gk_dtype dtype)
{
    for (int side = -1; side <= 1; side += 2) {
        PyObject *end = gkpy_integer_end(dtype, side);
        int beyond = end ? PyObject_RichCompareBool(value, end, side < 0 ? Py_LT : Py_GT) : -1;
        Py_XDECREF(end);
        if (beyond != 0)
            return beyond < 0 ? -2 : side;
    }
    return 0;
}

PyObject *gkpy_as_values_beside(gkpy_state *state, PyObject *values, PyObject *x)
{
    gk_dtype dtype = gk_array_dtype(array_of(x));
    int side = PyLong_CheckExact(values) && gk_dtype_is_integer(dtype)
                   ? gkpy_against_range(values, dtype)
                   : 1;
    if (side == -2)
        return NULL;
    if (side == 0) {
        gk_array *scalar = NULL;
        if (gkpy_scalar_array(state, array_of(x), values, GK_OP_COUNT, &scalar) < 0)
            return NULL;
        return gkpy_array_wrap(state, scalar);
    }
    return gkpy_as_array(state, values, x);
}

PyObject *gkpy_binary_value(gkpy_state *state, gk_op op, PyObject *array, PyObject *value,
                            bool value_first)
{
    const gk_array *a = array_of(array);
    gk_array *scalar = NULL, *out = NULL;
    gk_status status;
    gk_dtype dtype = gk_op_value_dtype(op, gk_array_dtype(a), value_kind(value));
    bool comparison = op >= GK_EQ && op <= GK_GE;
    int beyond = comparison && value_kind(value) == GK_VALUE_INT && gk_dtype_is_integer(dtype)
                     ? gkpy_against_range(value, dtype)
                     : 0;
    if (beyond == -2)
        return NULL;
    if (beyond) {
        const int64_t *shape = gk_array_shape(a);
        status = gk_full(gk_array_device(a), GK_BOOL, gk_array_ndim(a), shape,
                         gk_comparison_beyond_range(op, beyond < 0, value_first), &out);
        return gkpy_array_result(state, status, out);
    }
    /* A floating or integer array to a plain power (an int that fits its
     * dtype) goes through the library's gk_binary_value, which computes
     * x ** 2 and x ** -1 as one product or quotient (exact, and NumPy's
     * square and reciprocal). The range is asked last: only powers pay. */
    bool power = op == GK_POW && !value_first && dtype == gk_array_dtype(a) &&
                 !PyBool_Check(value) && !PyComplex_Check(value);
    if (power && (gk_dtype_is_float(dtype) ||
                  (gk_dtype_is_integer(dtype) && PyLong_CheckExact(value) &&
                   gkpy_against_range(value, dtype) == 0))) {
        double exponent = PyFloat_AsDouble(value);
        if (exponent == -1 && PyErr_Occurred())
            return NULL;
        GKPY_RUN(gkpy_long_work(a),
                 gk_binary_value(op, a, exponent, value_kind(value), false, &out));
        return gkpy_op_result(state, status, out, op, dtype);
    }
    if (gkpy_scalar_array(state, a, value, op, &scalar) < 0)
        return NULL;
    GKPY_RUN(gkpy_long_work(a), value_first ? gk_binary(op, scalar, a, &out)
                                            : gk_binary(op, a, scalar, &out));
    gk_dtype promoted = gk_promote_types(gk_array_dtype(a), gk_array_dtype(scalar));
    gk_array_free(scalar);
    return gkpy_op_result(state, status, out, op, promoted);
}

/* `object` as an operand beside x in `op` (GK_OP_COUNT: matmul): 1 done,
 * 0 not ours to handle (NotImplemented), -1 error. */
static int to_operand(gkpy_state *state, const gk_array *x, PyObject *object, gk_op op,
                      bool scalars, operand *out)
{
    out->temp = NULL;
    out->keep = NULL;
    if (is_ours(object)) {
        out->array = array_of(object);
        return 1;
    }
    /* Python's own bool, int, float and complex are weak; NumPy scalars
     * (float64 is a float subclass) are arrays of their dtype, as in NumPy 2. */
    if (is_python_number(object)) {
        if (!scalars)
            return 0;
        if (gkpy_scalar_array(state, x, object, op, &out->temp) < 0)
            return -1;
        out->array = out->temp;
        return 1;
    }
    /* Lists, NumPy arrays, DLPack producers: onto x's device. What cannot
     * be an array ("abc", None) is left to Python (== gives False). */
    gk_device device = gk_array_device(x);
    PyObject *converted = gkpy_asarray(state, object, NULL, &device, -1);
    if (!converted) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    out->keep = converted;
    out->array = array_of(converted);
    return 1;
}

static PyObject *binary(PyObject *left, PyObject *right, gk_op op, bool scalars)
{
    bool left_ours = is_ours(left);
    PyObject *self = left_ours ? left : right, *other = left_ours ? right : left;
    gkpy_state *state = state_of(self);
    const gk_array *x = array_of(self);
    if (scalars && op != GK_OP_COUNT && is_python_number(other))
        return gkpy_binary_value(state, op, self, other, !left_ours);
    operand o;
    int found = to_operand(state, x, other, op, scalars, &o);
    if (found <= 0)
        return found < 0 ? NULL : Py_NewRef(Py_NotImplemented);
    const gk_array *a = left_ours ? x : o.array, *b = left_ours ? o.array : x;
    gk_array *result = NULL;
    gk_status status;
    if (op == GK_OP_COUNT) { /* matmul */
        GKPY_RUN(long_work2(a, b), gk_matmul(a, b, &result));
        operand_clear(&o);
        return gkpy_array_result(state, status, result);
    }
    GKPY_RUN(long_work2(a, b), gk_binary(op, a, b, &result));
    gk_dtype promoted = gk_promote_types(gk_array_dtype(a), gk_array_dtype(b));
    operand_clear(&o);
    return gkpy_op_result(state, status, result, op, promoted);
}

/* 0 bool, 1 integers, 2 floating point. */
static int kind_of(gk_dtype dtype)
{
    return dtype == GK_BOOL ? 0 : gk_dtype_is_float(dtype) ? 2 : 1;
}

static PyObject *inplace(PyObject *self, PyObject *other, gk_op op)
{
    if (!is_ours(self))
        Py_RETURN_NOTIMPLEMENTED;
    gkpy_state *state = state_of(self);
    gk_array *x = array_of(self);
    operand o;
    int found = to_operand(state, x, other, op, true, &o);
    if (found <= 0)
        return found < 0 ? NULL : Py_NewRef(Py_NotImplemented);
    gk_status status;
    gk_array *result = NULL;
    bool release = long_work2(x, o.array);
    /* Mostly the result has x's dtype and is written straight into x. When
     * the other operand promotes it to another dtype of the same or a lower
     * kind (int32 array -= a list of Python ints, which is int64; float32
     * += an int64 array, which is float64), the result is computed apart
     * and cast back, as NumPy's same_kind rule allows; a result of a higher
     * kind (int32 += 1.5, int32 /= 2) is an error, as in NumPy. */
    gk_dtype mine = gk_array_dtype(x), theirs = gk_array_dtype(o.array);
    gk_dtype promoted = gk_promote_types(mine, theirs);
    bool division = op == GK_DIV && kind_of(mine) < 2;
    if (gk_promote_types(mine, theirs) == mine && !division) {
        GKPY_RUN(release, gk_binary_into(op, x, o.array, x));
    } else {
        GKPY_RUN(release, gk_binary(op, x, o.array, &result));
        gk_dtype got = result ? gk_array_dtype(result) : mine;
        if (status == GK_OK && kind_of(got) <= kind_of(mine))
            GKPY_RUN(release, gk_assign(x, result));
        gk_array_free(result);
        if (status == GK_OK && kind_of(got) > kind_of(mine)) {
            /* NumPy's UFuncTypeError, a TypeError, for the same case. */
            PyErr_Format(PyExc_TypeError,
                         "%s in place: the %s result cannot be stored in the %s array "
                         "(NumPy's same_kind rule); compute a new array instead of in place",
                         gk_op_name(op), gk_dtype_name(got), gk_dtype_name(mine));
            operand_clear(&o);
            return NULL;
        }
    }
    operand_clear(&o);
    return status == GK_OK ? Py_NewRef(self) : gkpy_raise_op(state, status, op, promoted);
}

static PyObject *nb_add(PyObject *a, PyObject *b) { return binary(a, b, GK_ADD, true); }
static PyObject *nb_sub(PyObject *a, PyObject *b) { return binary(a, b, GK_SUB, true); }
static PyObject *nb_mul(PyObject *a, PyObject *b) { return binary(a, b, GK_MUL, true); }
static PyObject *nb_div(PyObject *a, PyObject *b) { return binary(a, b, GK_DIV, true); }
static PyObject *nb_matmul(PyObject *a, PyObject *b) { return binary(a, b, GK_OP_COUNT, false); }
static PyObject *nb_iadd(PyObject *a, PyObject *b) { return inplace(a, b, GK_ADD); }
static PyObject *nb_isub(PyObject *a, PyObject *b) { return inplace(a, b, GK_SUB); }
static PyObject *nb_imul(PyObject *a, PyObject *b) { return inplace(a, b, GK_MUL); }
static PyObject *nb_idiv(PyObject *a, PyObject *b) { return inplace(a, b, GK_DIV); }
/* The operators of the array API added with its bitwise and integer
 * functions: x OP y, y OP x and x OP= y. */
#define OPERATOR(name, op)                                                                        \
    static PyObject *nb_##name(PyObject *a, PyObject *b) { return binary(a, b, op, true); }     \
    static PyObject *nb_i##name(PyObject *a, PyObject *b) { return inplace(a, b, op); }

OPERATOR(floor_divide, GK_FLOOR_DIVIDE)
OPERATOR(remainder, GK_REMAINDER)
OPERATOR(and, GK_BITWISE_AND)
OPERATOR(or, GK_BITWISE_OR)
OPERATOR(xor, GK_BITWISE_XOR)
OPERATOR(lshift, GK_BITWISE_LEFT_SHIFT)
OPERATOR(rshift, GK_BITWISE_RIGHT_SHIFT)

/* divmod(x, y): (x // y, x % y), as NumPy's arrays give it. */
static PyObject *nb_divmod(PyObject *a, PyObject *b)
{
    PyObject *quotient = binary(a, b, GK_FLOOR_DIVIDE, true);
    if (!quotient || quotient == Py_NotImplemented)
        return quotient;
    PyObject *remainder = binary(a, b, GK_REMAINDER, true);
    PyObject *pair = remainder ? PyTuple_Pack(2, quotient, remainder) : NULL;
    Py_DECREF(quotient);
    Py_XDECREF(remainder);
    return pair;
}

static PyObject *nb_pow(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None)
        Py_RETURN_NOTIMPLEMENTED;
    return binary(a, b, GK_POW, true);
}

static PyObject *nb_ipow(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None)
        Py_RETURN_NOTIMPLEMENTED;
    return inplace(a, b, GK_POW);
}

/* x @= y: in place when x @ y has x's shape and dtype (NumPy's rule). */
static PyObject *nb_imatmul(PyObject *self, PyObject *other)
{
    if (!is_ours(self))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *product = binary(self, other, GK_OP_COUNT, false);
    if (!product || product == Py_NotImplemented)
        return product;
    gkpy_state *state = state_of(self);
    gk_array *x = array_of(self), *r = array_of(product);
    if (gk_array_ndim(r) != gk_array_ndim(x) || gk_array_dtype(r) != gk_array_dtype(x) ||
        memcmp(gk_array_shape(r), gk_array_shape(x),
               sizeof(int64_t) * (size_t)gk_array_ndim(x)) != 0) {
        Py_DECREF(product);
        PyErr_SetString(PyExc_ValueError,
                        "x @= y needs x @ y to have x's shape and dtype; write x = x @ y");
        return NULL;
    }
    gk_status status;
    GKPY_RUN(gkpy_long_work(x), gk_assign(x, r));
    Py_DECREF(product);
    return status == GK_OK ? Py_NewRef(self) : gkpy_raise(state, status);
}

static PyObject *unary(PyObject *self, gk_op op)
{
    gk_array *a = array_of(self), *result = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(a), gk_unary(op, a, &result));
    return gkpy_op_result(state_of(self), status, result, op, gk_array_dtype(a));
}

static PyObject *nb_neg(PyObject *self) { return unary(self, GK_NEG); }
static PyObject *nb_abs(PyObject *self) { return unary(self, GK_ABS); }
/* +x is a copy (NumPy's), refused for bools as there. */
static PyObject *nb_pos(PyObject *self) { return unary(self, GK_POSITIVE); }
static PyObject *nb_invert(PyObject *self) { return unary(self, GK_BITWISE_INVERT); }

static PyObject *array_richcompare(PyObject *self, PyObject *other, int op)
{
    /* Python calls this with our Array first, swapping the comparison for
     * reflected cases (3 < x arrives as x > 3). */
    static const gk_op ops[] = {[Py_LT] = GK_LT, [Py_LE] = GK_LE, [Py_EQ] = GK_EQ,
                                [Py_NE] = GK_NE, [Py_GT] = GK_GT, [Py_GE] = GK_GE};
    return binary(self, other, ops[op], true);
}

/* ------------------------------------------------------------------ */
/* conversions to Python numbers                                       */

static int nb_bool(PyObject *self)
{
    gk_array *a = array_of(self);
    int64_t size = gk_array_size(a);
    if (size != 1) {
        PyErr_Format(PyExc_ValueError,
                     "the truth value of an array with %lld elements is ambiguous; use "
                     "any() or all()",
                     (long long)size);
        return -1;
    }
    PyObject *value = only_element(state_of(self), a);
    if (!value)
        return -1;
    int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}

static PyObject *size_one_element(PyObject *self)
{
    gk_array *a = array_of(self);
    if (gk_array_size(a) != 1) {
        PyErr_Format(PyExc_TypeError,
                     "only arrays of size 1 can be converted to Python scalars (this one has "
                     "%lld elements)",
                     (long long)gk_array_size(a));
        return NULL;
    }
    return only_element(state_of(self), a);
}

static PyObject *nb_int(PyObject *self)
{
    PyObject *value = size_one_element(self);
    PyObject *result = value ? PyNumber_Long(value) : NULL;
    Py_XDECREF(value);
    return result;
}

static PyObject *nb_float(PyObject *self)
{
    PyObject *value = size_one_element(self);
    PyObject *result = value ? PyNumber_Float(value) : NULL;
    Py_XDECREF(value);
    return result;
}

/* complex(x) of a size-1 array (the standard's __complex__). */
static PyObject *array_complex(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *value = size_one_element(self);
    if (!value)
        return NULL;
    Py_complex c = PyComplex_AsCComplex(value);
    Py_DECREF(value);
    if (c.real == -1.0 && PyErr_Occurred())
        return NULL;
    return PyComplex_FromCComplex(c);
}

static PyObject *nb_index(PyObject *self)
{
    gk_array *a = array_of(self);
    gk_dtype dtype = gk_array_dtype(a);
    if (gk_array_ndim(a) != 0 || !gk_dtype_is_integer(dtype)) {
        PyErr_Format(PyExc_TypeError,
                     "only integer 0-d arrays can be used as an index (this one is %d-d %s)",
                     gk_array_ndim(a), gk_dtype_name(dtype));
        return NULL;
    }
    return only_element(state_of(self), a);
}

/* ------------------------------------------------------------------ */
/* indexing                                                            */

enum { INDEX_INT, INDEX_SLICE, INDEX_NEWAXIS, INDEX_ELLIPSIS, INDEX_ARRAY };

typedef struct index_item {
    int kind;
    Py_ssize_t start, stop, step; /* INDEX_INT: start is the index */
    PyObject *array; /* INDEX_ARRAY: an integer or bool Array (a reference) */
    int axes;        /* the axes of x it indexes: 1, or a bool mask's ndim */
    bool new_axis;   /* a 0-d bool (NumPy's rule): a mask of one element over a
                        new axis of length 1, so x[True] is x[None] and
                        x[False] is empty */
} index_item;

#define MAX_INDEX_ITEMS 64

/* An index that is an array (an Array, a list, a NumPy array): as an
 * integer or bool Array on x's device in item->array; -1 with IndexError
 * for other dtypes. */
static int parse_index_array(gkpy_state *state, gk_device device, PyObject *key,
                             index_item *item)
{
    PyObject *array = is_ours(key) ? Py_NewRef(key) : gkpy_asarray(state, key, NULL, &device, -1);
    if (!array)
        return -1;
    gk_array *a = array_of(array);
    gk_dtype dtype = gk_array_dtype(a);
    /* an empty list ([], [[]]) has no elements to say its dtype: it indexes
     * nothing, as NumPy's, rather than being a float array */
    if ((PyList_Check(key) || PyTuple_Check(key)) && gk_array_size(a) == 0 &&
        gk_dtype_is_float(dtype)) {
        gk_dtype indices = GK_INT64;
        Py_SETREF(array, gkpy_asarray(state, key, &indices, &device, -1));
        if (!array)
            return -1;
        a = array_of(array);
        dtype = indices;
    }
    if (dtype != GK_BOOL && !gk_dtype_is_integer(dtype)) {
        PyErr_Format(PyExc_IndexError,
                     "arrays used as indices must be of integer or bool dtype, not %s",
                     gk_dtype_name(dtype));
        Py_DECREF(array);
        return -1;
    }
    item->new_axis = dtype == GK_BOOL && gk_array_ndim(a) == 0;
    if (item->new_axis) {
        gk_array *one = NULL;
        int64_t length = 1;
        gk_status status = gk_reshape(a, 1, &length, &one);
        Py_DECREF(array);
        array = status == GK_OK ? gkpy_array_wrap(state, one) : gkpy_raise(state, status);
        if (!array)
            return -1;
    }
    item->kind = INDEX_ARRAY;
    item->array = array;
    item->axes = dtype == GK_BOOL && !item->new_axis ? gk_array_ndim(a) : 1;
    return 0;
}

static int parse_index_item(gkpy_state *state, gk_device device, PyObject *key,
                            index_item *item)
{
    item->array = NULL;
    item->axes = 1;
    item->new_axis = false;
    if (key == Py_None) {
        item->kind = INDEX_NEWAXIS;
        return 0;
    }
    if (key == Py_Ellipsis) {
        item->kind = INDEX_ELLIPSIS;
        return 0;
    }
    if (PySlice_Check(key)) {
        item->kind = INDEX_SLICE;
        return PySlice_Unpack(key, &item->start, &item->stop, &item->step);
    }
    if (PyBool_Check(key))
        return parse_index_array(state, device, key, item);
    if (is_ours(key) && (gk_array_ndim(array_of(key)) > 0 ||
                         gk_array_dtype(array_of(key)) == GK_BOOL ||
                         gk_dtype_is_float(gk_array_dtype(array_of(key)))))
        return parse_index_array(state, device, key, item);
    if (PyIndex_Check(key)) {
        /* ints, NumPy integer scalars and 0-d arrays; a NumPy array of
         * several integers has __index__ too, and refuses. */
        PyObject *index = PyNumber_Index(key);
        if (!index) {
            if (!PyErr_ExceptionMatches(PyExc_TypeError))
                return -1;
            PyErr_Clear();
            return parse_index_array(state, device, key, item);
        }
        item->kind = INDEX_INT;
        item->start = PyNumber_AsSsize_t(index, PyExc_IndexError);
        Py_DECREF(index);
        return item->start == -1 && PyErr_Occurred() ? -1 : 0;
    }
    if ((PySequence_Check(key) && !PyUnicode_Check(key) && !PyBytes_Check(key)) ||
        (Py_TYPE(key)->tp_as_buffer && !PyBytes_Check(key) &&
                                  Py_TYPE(key)->tp_as_buffer->bf_getbuffer) ||
        PyObject_HasAttrString(key, "__dlpack__"))
        return parse_index_array(state, device, key, item);
    PyErr_Format(PyExc_IndexError,
                 "only integers, slices (:), ellipsis (...), None, integer or bool arrays and "
                 "tuples of them are valid indices, not %.100s",
                 Py_TYPE(key)->tp_name);
    return -1;
}

static void release_items(index_item *items, Py_ssize_t count)
{
    for (Py_ssize_t i = 0; i < count; i++)
        Py_CLEAR(items[i].array);
}

/* The items of `key` (one, or a tuple's), checked against an array x:
 * *consumed is how many of its axes they index. -1 with an IndexError
 * (and nothing held). */
static int parse_index(gkpy_state *state, const gk_array *x, PyObject *key, index_item *items,
                       Py_ssize_t *count, int *consumed)
{
    int ndim = gk_array_ndim(x);
    gk_device device = gk_array_device(x);
    *count = 1;
    if (PyTuple_Check(key)) {
        *count = PyTuple_GET_SIZE(key);
        if (*count > MAX_INDEX_ITEMS) {
            PyErr_Format(PyExc_IndexError, "too many indices (%zd)", *count);
            return -1;
        }
        for (Py_ssize_t i = 0; i < *count; i++)
            if (parse_index_item(state, device, PyTuple_GET_ITEM(key, i), &items[i]) < 0) {
                release_items(items, i);
                return -1;
            }
    } else if (parse_index_item(state, device, key, &items[0]) < 0) {
        return -1;
    }
    bool ellipsis = false;
    *consumed = 0;
    for (Py_ssize_t i = 0; i < *count; i++) {
        if (items[i].kind == INDEX_INT || items[i].kind == INDEX_SLICE ||
            (items[i].kind == INDEX_ARRAY && !items[i].new_axis))
            *consumed += items[i].axes;
        if (items[i].kind == INDEX_ELLIPSIS) {
            if (ellipsis) {
                PyErr_SetString(PyExc_IndexError,
                                "an index can only have a single ellipsis ('...')");
                release_items(items, *count);
                return -1;
            }
            ellipsis = true;
        }
    }
    if (*consumed > ndim) {
        PyErr_Format(PyExc_IndexError,
                     "too many indices for array: array is %d-dimensional, but %d were indexed",
                     ndim, *consumed);
        release_items(items, *count);
        return -1;
    }
    return 0;
}

/* The basic part of x[key]: a view (a new gk_array), or NULL: slices of x
 * for the integers and slices, then one reshape that drops the integers'
 * axes and adds None's. An array item stands for full slices of the axes
 * it indexes; first_axis[i] is where they are in the view (-1 for the
 * other items). */
static gk_array *basic_view(gkpy_state *state, const gk_array *x, index_item *items,
                            Py_ssize_t count, int consumed, int *first_axis)
{
    int ndim = gk_array_ndim(x);
    const int64_t *shape = gk_array_shape(x);
    gk_array *current = NULL; /* NULL: still x itself */
    int axis = 0, out_ndim = 0;
    int64_t out_shape[MAX_INDEX_ITEMS + GK_MAX_DIMS];
    bool reshape = false;
    gk_status status = GK_OK;
    for (Py_ssize_t i = 0; i < count && status == GK_OK; i++) {
        index_item *item = &items[i];
        gk_array *next = NULL;
        first_axis[i] = -1;
        switch (item->kind) {
        case INDEX_INT: {
            int64_t n = shape[axis], k = item->start < 0 ? item->start + n : item->start;
            if (k < 0 || k >= n) {
                gk_array_free(current);
                PyErr_Format(PyExc_IndexError,
                             "index %zd is out of bounds for axis %d with size %lld",
                             item->start, axis, (long long)n);
                return NULL;
            }
            if (n != 1)
                status = gk_slice(current ? current : x, axis, k, k + 1, 1, &next);
            axis++;
            reshape = true;
            break;
        }
        case INDEX_SLICE:
            if (item->start != 0 || item->stop != PY_SSIZE_T_MAX || item->step != 1)
                status = gk_slice(current ? current : x, axis, item->start, item->stop,
                                  item->step, &next);
            out_shape[out_ndim++] = gk_array_shape(next ? next : current ? current : x)[axis];
            axis++;
            break;
        case INDEX_ARRAY:
            first_axis[i] = out_ndim;
            if (item->new_axis) {
                out_shape[out_ndim++] = 1;
                reshape = true;
                break;
            }
            for (int k = 0; k < item->axes; k++, axis++)
                out_shape[out_ndim++] = shape[axis];
            break;
        case INDEX_NEWAXIS:
            out_shape[out_ndim++] = 1;
            reshape = true;
            break;
        default: /* ellipsis: the axes no other item names */
            for (int k = 0; k < ndim - consumed; k++, axis++)
                out_shape[out_ndim++] = shape[axis];
            break;
        }
        if (next) {
            gk_array_free(current);
            current = next;
        }
    }
    for (; axis < ndim; axis++)
        out_shape[out_ndim++] = shape[axis];
    if (status != GK_OK) {
        gk_array_free(current);
        gkpy_raise(state, status);
        return NULL;
    }
    if (out_ndim > GK_MAX_DIMS) {
        gk_array_free(current);
        PyErr_Format(PyExc_IndexError, "the result would have %d dimensions; arrays have at "
                     "most %d", out_ndim, GK_MAX_DIMS);
        return NULL;
    }
    if (!reshape) {
        if (current)
            return current;
        gk_array *same = NULL;
        status = gk_reshape(x, ndim, shape, &same); /* a new handle on x */
        if (status != GK_OK)
            gkpy_raise(state, status);
        return same;
    }
    /* Dropping and adding axes of length 1 is always a view. */
    gk_array *view = NULL;
    status = gk_reshape(current ? current : x, out_ndim, out_shape, &view);
    gk_array_free(current);
    if (status != GK_OK) {
        gkpy_raise(state, status);
        return NULL;
    }
    return view;
}

/* NumPy's IndexError for a bool array item whose lengths are not those of
 * the view's axes it stands for, from `first`; as in NumPy, a mask's axis
 * of length 0 (which selects nothing) stands for an axis of any length. */
static int check_mask_lengths(const gk_array *view, const index_item *item, int first)
{
    const gk_array *mask = array_of(item->array);
    for (int k = 0; gk_array_dtype(mask) == GK_BOOL && k < item->axes; k++) {
        int64_t length = gk_array_shape(mask)[k], covered = gk_array_shape(view)[first + k];
        if (length != covered && length != 0) {
            PyErr_Format(PyExc_IndexError,
                         "a bool index of length %lld stands for axis %d, of length %lld; a "
                         "mask must be as long as the axes it covers",
                         (long long)length, first + k, (long long)covered);
            return -1;
        }
    }
    return 0;
}

/* x[key] (values NULL: a new gk_array, a view for basic indexing) or x[key]
 * = values (returns x's view, which the caller frees; NULL on error).
 * Array items (NumPy's advanced indexing): a bool mask becomes the integer
 * arrays of its nonzero positions; the integer arrays index the view's
 * axes they stand for, their results' axes where they are when they are
 * adjacent, else first (NumPy's rule). A single mask over the leading
 * axes takes the direct path (gk_mask_select / gk_mask_assign). */
static gk_array *index_apply(gkpy_state *state, const gk_array *x, PyObject *key,
                             const gk_array *values)
{
    index_item items[MAX_INDEX_ITEMS];
    Py_ssize_t count;
    int consumed, first_axis[MAX_INDEX_ITEMS];
    if (parse_index(state, x, key, items, &count, &consumed) < 0)
        return NULL;
    /* Beside an array, an integer is an index array too (0-d), so that
     * whether the array items are adjacent follows NumPy's rule. */
    bool any_array = false;
    for (Py_ssize_t i = 0; i < count; i++)
        any_array = any_array || items[i].kind == INDEX_ARRAY;
    for (Py_ssize_t i = 0; any_array && i < count; i++) {
        if (items[i].kind != INDEX_INT)
            continue;
        gk_array *zero_d = NULL;
        gk_status made = gk_scalar(gk_array_device(x), GK_INT64, (double)items[i].start, &zero_d);
        items[i].array = made == GK_OK ? gkpy_array_wrap(state, zero_d) : NULL;
        if (!items[i].array) {
            if (made != GK_OK)
                gkpy_raise(state, made);
            release_items(items, count);
            return NULL;
        }
        items[i].kind = INDEX_ARRAY;
    }
    gk_array *view = basic_view(state, x, items, count, consumed, first_axis);
    int arrays = 0, masks = 0, array_at = -1;
    for (Py_ssize_t i = 0; i < count; i++)
        if (items[i].kind == INDEX_ARRAY) {
            arrays++;
            masks += gk_array_dtype(array_of(items[i].array)) == GK_BOOL;
            if (array_at < 0)
                array_at = (int)i;
        }
    for (Py_ssize_t i = 0; view && i < count; i++)
        if (items[i].kind == INDEX_ARRAY &&
            check_mask_lengths(view, &items[i], first_axis[i]) < 0) {
            release_items(items, count);
            gk_array_free(view);
            return NULL;
        }
    if (!view || arrays == 0) {
        gk_status status = GK_OK;
        if (view && values)
            GKPY_RUN(gkpy_long_work(view), gk_assign(view, values));
        release_items(items, count);
        if (status != GK_OK) {
            gk_array_free(view);
            gkpy_raise(state, status);
            return NULL;
        }
        return view;
    }
    gk_status status = GK_OK;
    gk_array *result = NULL;
    if (arrays == 1 && masks == 1 && first_axis[array_at] == 0) {
        const gk_array *mask = array_of(items[array_at].array);
        if (values)
            GKPY_RUN(gkpy_long_work(view), gk_mask_assign(view, mask, values));
        else
            GKPY_RUN(gkpy_long_work(view), gk_mask_select(view, mask, &result));
    } else {
        /* Every array item as integer arrays, with the view axis each
         * indexes. */
        gk_array *owned[GK_MAX_DIMS] = {NULL};
        const gk_array *indices[GK_MAX_DIMS];
        int axes[GK_MAX_DIMS], n = 0, owned_count = 0;
        for (Py_ssize_t i = 0; i < count && status == GK_OK; i++) {
            if (items[i].kind != INDEX_ARRAY)
                continue;
            const gk_array *a = array_of(items[i].array);
            if (gk_array_dtype(a) == GK_BOOL) {
                gk_array *parts[GK_MAX_DIMS] = {NULL};
                GKPY_RUN(gkpy_long_work(a), gk_nonzero(a, parts));
                for (int k = 0; k < items[i].axes; k++) {
                    owned[owned_count++] = parts[k];
                    indices[n] = parts[k];
                    axes[n++] = first_axis[i] + k;
                }
            } else {
                indices[n] = a;
                axes[n++] = first_axis[i];
            }
        }
        bool adjacent = true;
        for (int k = 1; k < n; k++)
            adjacent = adjacent && axes[k] == axes[k - 1] + 1;
        /* Apart: moved to the front, where NumPy puts the result's axes. */
        gk_array *moved = NULL;
        int zeros[GK_MAX_DIMS];
        for (int k = 0; k < n; k++)
            zeros[k] = k;
        if (status == GK_OK && !adjacent)
            status = gk_moveaxis(view, n, axes, zeros, &moved);
        gk_array *target = moved ? moved : view;
        int first = moved ? 0 : axes[0];
        if (status == GK_OK && values)
            GKPY_RUN(gkpy_long_work(target), gk_put_indices(target, first, n, indices, values));
        else if (status == GK_OK)
            GKPY_RUN(gkpy_long_work(target),
                     gk_take_indices(target, first, n, indices, &result));
        gk_array_free(moved);
        for (int k = 0; k < owned_count; k++)
            gk_array_free(owned[k]);
    }
    release_items(items, count);
    if (status != GK_OK) {
        gk_array_free(view);
        gkpy_raise(state, status);
        return NULL;
    }
    if (values)
        return view;
    gk_array_free(view);
    return result;
}

static PyObject *array_subscript(PyObject *self, PyObject *key)
{
    gkpy_state *state = state_of(self);
    gk_array *result = index_apply(state, array_of(self), key, NULL);
    return result ? gkpy_array_wrap(state, result) : NULL;
}

static Py_ssize_t array_length(PyObject *self)
{
    gk_array *a = array_of(self);
    if (gk_array_ndim(a) == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d array");
        return -1;
    }
    return (Py_ssize_t)gk_array_shape(a)[0];
}

static PyObject *array_item(PyObject *self, Py_ssize_t i)
{
    /* For iteration: x[i] along the first axis. */
    PyObject *key = PyLong_FromSsize_t(i);
    if (!key)
        return NULL;
    PyObject *result = array_subscript(self, key);
    Py_DECREF(key);
    return result;
}

/* `value in x`: whether any element equals it (NumPy's rule). */
static int array_contains(PyObject *self, PyObject *value)
{
    PyObject *equal = binary(self, value, GK_EQ, true);
    if (!equal)
        return -1;
    if (equal == Py_NotImplemented) {
        Py_DECREF(equal);
        return 0; /* "abc" in x: nothing equals it */
    }
    gk_array *e = array_of(equal), *any = NULL;
    gk_status status = GK_OK;
    int found = 0;
    if (gk_array_size(e) > 0) {
        GKPY_RUN(gkpy_long_work(e), gk_reduce(GK_MAX, e, GK_ALL_AXES, false, &any));
        if (status == GK_OK) {
            PyObject *item = only_element(state_of(self), any);
            found = item ? PyObject_IsTrue(item) : -1;
            Py_XDECREF(item);
        }
    }
    gk_array_free(any);
    Py_DECREF(equal);
    if (status != GK_OK) {
        gkpy_raise(state_of(self), status);
        return -1;
    }
    return found;
}

static PyObject *array_iter(PyObject *self)
{
    if (gk_array_ndim(array_of(self)) == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d array");
        return NULL;
    }
    return PySeqIter_New(self);
}

/* Whether `value` (an Array or NumPy's array or scalar) holds complex
 * numbers that x[key] = value would store in a real `dtype`, which raises
 * the TypeError a Python complex gets (gkpy_store_scalar): dropping the
 * imaginary parts silently would lose data (astype() does it on request). */
static bool complex_into_real(PyObject *value, gk_dtype dtype)
{
    if (gk_dtype_is_complex(dtype))
        return false;
    bool complex = false;
    if (is_ours(value)) {
        complex = gk_dtype_is_complex(gk_array_dtype(array_of(value)));
    } else if (gkpy_is_numpy(value)) {
        PyObject *kind = PyObject_GetAttrString(value, "dtype");
        Py_XSETREF(kind, kind ? PyObject_GetAttrString(kind, "kind") : NULL);
        complex = kind && PyUnicode_Check(kind) &&
                  PyUnicode_CompareWithASCIIString(kind, "c") == 0;
        Py_XDECREF(kind);
        PyErr_Clear();
    }
    if (complex)
        PyErr_Format(PyExc_TypeError,
                     "cannot store complex values in a %s array (take .real or abs() first, "
                     "astype() them, or use a complex dtype)",
                     gk_dtype_name(dtype));
    return complex;
}

static int array_ass_subscript(PyObject *self, PyObject *key, PyObject *value)
{
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "array elements cannot be deleted");
        return -1;
    }
    gkpy_state *state = state_of(self);
    const gk_array *x = array_of(self);
    gk_dtype dtype = gk_array_dtype(x);
    gk_device device = gk_array_device(x);
    gk_array *scalar = NULL;
    PyObject *converted = NULL;
    const gk_array *source;
    if (complex_into_real(value, dtype))
        return -1;
    if (is_ours(value)) {
        source = array_of(value);
    } else if (PyLong_Check(value) || PyFloat_Check(value) || PyComplex_Check(value)) {
        uint64_t bytes[2] = {0, 0}; /* room for complex128 */
        if (gkpy_store_scalar(value, dtype, bytes) < 0)
            return -1;
        gk_status status = gk_from_host(device, dtype, 0, NULL, bytes, &scalar);
        if (status != GK_OK) {
            gkpy_raise(state, status);
            return -1;
        }
        source = scalar;
    } else {
        /* Converted straight to the target's dtype: a list of floats into a
         * float64 array keeps its precision. */
        converted = gkpy_asarray(state, value, &dtype, &device, -1);
        if (!converted)
            return -1;
        source = array_of(converted);
    }
    gk_array *view = index_apply(state, x, key, source);
    gk_array_free(scalar);
    Py_XDECREF(converted);
    if (!view)
        return -1;
    gk_array_free(view);
    return 0;
}

/* ------------------------------------------------------------------ */
/* methods                                                             */

PyDoc_STRVAR(item_doc,
"item($self, /)\n"
"--\n\n"
"The single element of a size-1 array as a Python bool, int or float\n"
"(ValueError for any other size).");

static PyObject *array_item_method(PyObject *self, PyObject *unused)
{
    (void)unused;
    gk_array *a = array_of(self);
    if (gk_array_size(a) != 1) {
        PyErr_Format(PyExc_ValueError,
                     "can only convert an array of size 1 to a Python scalar (this one has "
                     "%lld elements)",
                     (long long)gk_array_size(a));
        return NULL;
    }
    return only_element(state_of(self), a);
}

PyDoc_STRVAR(tolist_doc,
"tolist($self, /)\n"
"--\n\n"
"The elements as nested Python lists of bools, ints or floats (one\n"
"transfer from the device); a 0-d array gives a single number.");

static PyObject *array_tolist(PyObject *self, PyObject *unused)
{
    (void)unused;
    gkpy_state *state = state_of(self);
    gk_array *a = array_of(self);
    size_t nbytes = gk_array_nbytes(a);
    char *data = PyMem_Malloc(nbytes ? nbytes : 1);
    if (!data)
        return PyErr_NoMemory();
    gk_status status;
    GKPY_RUN(gkpy_long_work(a), gk_to_host(a, data, nbytes));
    PyObject *result = NULL;
    if (status != GK_OK) {
        gkpy_raise(state, status);
    } else {
        const char *cursor = data;
        result = nested_list(&cursor, 0, gk_array_ndim(a), gk_array_shape(a),
                             gk_array_dtype(a), gk_dtype_size(gk_array_dtype(a)));
    }
    PyMem_Free(data);
    return result;
}

/* Whether `object` names a dtype rather than a device (for x.to(dtype)). */
static bool looks_like_dtype(gkpy_state *state, PyObject *object)
{
    return Py_IS_TYPE(object, state->dtype_type) || object == (PyObject *)&PyFloat_Type ||
           object == (PyObject *)&PyLong_Type || object == (PyObject *)&PyBool_Type;
}

PyDoc_STRVAR(to_doc,
"to($self, /, device=None, dtype=None, *, copy=False)\n"
"--\n\n"
"The array on `device` as `dtype` (None: unchanged), like PyTorch's\n"
"tensor.to(): the array itself when nothing changes (unless copy=True),\n"
"else a copy. x.to(gpukit.float64) changes only the dtype.");

static PyObject *array_to(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    static const char *const names[] = {"device", "dtype", "copy"};
    PyObject *v[3];
    if (gkpy_parse_args("to", args, nargs, kwnames, names, 3, 0, 2, 0, v) < 0)
        return NULL;
    gkpy_state *state = state_of(self);
    PyObject *device_object = v[0], *dtype_object = v[1];
    if (device_object && !dtype_object && looks_like_dtype(state, device_object)) {
        dtype_object = device_object;
        device_object = NULL;
    }
    gk_dtype dtype;
    gk_device device;
    int has_device = 0, has_dtype = gkpy_optional_dtype(state, dtype_object, &dtype);
    if (has_dtype < 0 || (has_device = gkpy_optional_device(state, device_object, &device)) < 0)
        return NULL;
    int copy = v[2] ? gkpy_copy_truth(v[2]) : 0;
    if (copy < 0)
        return NULL;
    return gkpy_asarray(state, self, has_dtype ? &dtype : NULL, has_device ? &device : NULL,
                        copy ? 1 : -1);
}

PyDoc_STRVAR(to_device_doc,
"to_device($self, device, /, *, stream=None)\n"
"--\n\n"
"The array on `device` (the array API standard's name for x.to(device)):\n"
"itself when it is there already, else a copy. gpukit copies between\n"
"devices synchronously, so `stream` must be None.");

static PyObject *array_to_device(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    static const char *const names[] = {"device", "stream"};
    PyObject *v[2];
    if (gkpy_parse_args("to_device", args, nargs, kwnames, names, 2, 1, 1, 1, v) < 0)
        return NULL;
    if (v[1] && v[1] != Py_None) {
        PyErr_SetString(PyExc_ValueError, "to_device(): gpukit copies between devices "
                                          "synchronously; pass stream=None");
        return NULL;
    }
    gkpy_state *state = state_of(self);
    gk_device device;
    if (gkpy_device_from_object(state, v[0], &device) < 0)
        return NULL;
    return gkpy_asarray(state, self, NULL, &device, -1);
}

PyDoc_STRVAR(cpu_doc,
"cpu($self, /)\n"
"--\n\n"
"The array on the CPU: itself when it is there, else a copy.");

static PyObject *array_cpu(PyObject *self, PyObject *unused)
{
    (void)unused;
    gk_device cpu = gk_device_cpu();
    return gkpy_asarray(state_of(self), self, NULL, &cpu, -1);
}

PyDoc_STRVAR(astype_doc,
"astype($self, dtype, /, *, copy=True, device=None)\n"
"--\n\n"
"The elements converted to `dtype` (floats to integers truncate). With\n"
"copy=False the array itself when it already has that dtype.");

static PyObject *array_astype(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    static const char *const names[] = {"dtype", "copy", "device"};
    PyObject *v[3];
    if (gkpy_parse_args("astype", args, nargs, kwnames, names, 3, 1, 1, 1, v) < 0)
        return NULL;
    gkpy_state *state = state_of(self);
    gk_dtype dtype;
    gk_device device;
    int has_device;
    if (gkpy_dtype_from_object(state, v[0], &dtype) < 0 ||
        (has_device = gkpy_optional_device(state, v[2], &device)) < 0)
        return NULL;
    int copy = v[1] ? gkpy_copy_truth(v[1]) : 1;
    if (copy < 0)
        return NULL;
    return gkpy_asarray(state, self, &dtype, has_device ? &device : NULL, copy ? 1 : -1);
}

PyDoc_STRVAR(copy_doc,
"copy($self, /)\n"
"--\n\n"
"A copy on the same device, C-contiguous, sharing nothing with the array.");

static PyObject *array_copy(PyObject *self, PyObject *unused)
{
    (void)unused;
    /* C order, as NumPy's and CuPy's copy() (asarray(copy=True) keeps the
     * memory order) */
    const gk_array *a = ((gkpy_array *)self)->array;
    gk_array *copied = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(a), gk_copy(a, &copied));
    return gkpy_array_result(state_of(self), status, copied);
}

static PyObject *array_deepcopy(PyObject *self, PyObject *memo)
{
    (void)memo;
    return array_copy(self, NULL);
}

/* Axis lengths or axis numbers: from a single tuple/list argument or from
 * the arguments themselves. Negative values are left to the caller. */
static int int_arguments(const char *function, PyObject *const *args, Py_ssize_t nargs,
                         int *count, int64_t *values)
{
    PyObject *const *items = args;
    Py_ssize_t n = nargs;
    if (nargs == 1 && (PyTuple_Check(args[0]) || PyList_Check(args[0]))) {
        items = PySequence_Fast_ITEMS(args[0]);
        n = PySequence_Fast_GET_SIZE(args[0]);
    }
    if (n > GK_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s(): %zd values; arrays have at most %d dimensions",
                     function, n, GK_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyIndex_Check(items[i]) || PyBool_Check(items[i])) {
            PyErr_Format(PyExc_TypeError, "%s(): expected ints, not %.100s", function,
                         Py_TYPE(items[i])->tp_name);
            return -1;
        }
        Py_ssize_t value = PyNumber_AsSsize_t(items[i], PyExc_OverflowError);
        if (value == -1 && PyErr_Occurred())
            return -1;
        values[i] = value;
    }
    *count = (int)n;
    return 0;
}

PyDoc_STRVAR(reshape_doc,
"reshape($self, /, *shape)\n"
"--\n\n"
"The elements in another shape: x.reshape(2, 3) or x.reshape((2, 3)); one\n"
"length may be -1 (inferred). A view when the strides allow, else a copy.");

static PyObject *array_reshape(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    if (int_arguments("reshape", args, nargs, &ndim, shape) < 0)
        return NULL;
    gk_array *a = array_of(self), *result = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(a), gk_reshape(a, ndim, shape, &result));
    return gkpy_array_result(state_of(self), status, result);
}

PyDoc_STRVAR(transpose_doc,
"transpose($self, /, *axes)\n"
"--\n\n"
"A view with the axes permuted: reversed without arguments, else in the\n"
"order given (x.transpose(1, 0, 2) or x.transpose((1, 0, 2)); negative\n"
"axes count from the end).");

static PyObject *array_transpose(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    gk_array *a = array_of(self), *result = NULL;
    gkpy_state *state = state_of(self);
    gk_status status;
    if (nargs == 0 || (nargs == 1 && args[0] == Py_None)) {
        status = gk_transpose(a, NULL, &result);
        return gkpy_array_result(state, status, result);
    }
    int count, ndim = gk_array_ndim(a);
    int64_t values[GK_MAX_DIMS];
    if (int_arguments("transpose", args, nargs, &count, values) < 0)
        return NULL;
    if (count != ndim) {
        PyErr_Format(PyExc_ValueError, "transpose(): %d axes given for a %d-d array", count,
                     ndim);
        return NULL;
    }
    int axes[GK_MAX_DIMS];
    for (int i = 0; i < count; i++) {
        int64_t axis = values[i] < 0 ? values[i] + ndim : values[i];
        if (axis < 0 || axis >= ndim) {
            PyErr_Format(state_of(self)->axis_error,
                         "transpose(): axis %lld is out of range for a %d-d array",
                         (long long)values[i], ndim);
            return NULL;
        }
        axes[i] = (int)axis;
    }
    status = gk_transpose(a, axes, &result);
    return gkpy_array_result(state, status, result);
}

PyDoc_STRVAR(numpy_doc,
"numpy($self, /)\n"
"--\n\n"
"A NumPy array sharing the memory of this CPU array (no copy, through the\n"
"buffer protocol). For arrays on other devices call .cpu() first.");

static PyObject *array_numpy(PyObject *self, PyObject *unused)
{
    (void)unused;
    gk_device device = gk_array_device(array_of(self));
    if (device.kind != GK_DEVICE_CPU) {
        char name[GK_DEVICE_NAME_MAX];
        PyErr_Format(PyExc_TypeError, "can't convert %s array to numpy: call .cpu() first",
                     gk_device_name(device, name, sizeof name));
        return NULL;
    }
    PyObject *numpy = PyImport_ImportModule("numpy");
    if (!numpy)
        return NULL;
    PyObject *result = PyObject_CallMethod(numpy, "asarray", "O", self);
    Py_DECREF(numpy);
    return result;
}

PyDoc_STRVAR(copy_to_host_doc,
"copy_to_host($self, /, ary=None)\n"
"--\n\n"
"A copy of this array's elements in host memory, from any device (Numba's\n"
"DeviceNDArray.copy_to_host()): a new NumPy array, or `ary` filled and\n"
"returned (a writable C-contiguous array of the same shape and dtype, which\n"
"saves allocating and first touching new memory).");

static PyObject *array_copy_to_host(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"ary", NULL};
    PyObject *ary = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:copy_to_host", keywords, &ary))
        return NULL;
    if (ary != Py_None) {
        if (gkpy_array_download_into(self, ary) < 0)
            return NULL;
        return Py_NewRef(ary);
    }
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(self));
    gk_array *copy = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(array_of(self)), gk_to(array_of(self), gk_device_cpu(), &copy));
    PyObject *host = gkpy_array_result(state, status, copy);
    if (!host)
        return NULL;
    PyObject *result = array_numpy(host, NULL);
    Py_DECREF(host); /* the NumPy array keeps the memory through the buffer */
    return result;
}

PyDoc_STRVAR(namespace_doc,
"__array_namespace__($self, /, *, api_version=None)\n"
"--\n\n"
"The gpukit module, the namespace of the array API standard's functions\n"
"for these arrays.");

static PyObject *array_namespace(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = {"api_version"};
    PyObject *v[1];
    if (gkpy_parse_args("__array_namespace__", args, nargs, kwnames, names, 1, 0, 0, 0, v) < 0)
        return NULL;
    if (v[0] && v[0] != Py_None) {
        static const char *const known[] = {"2021.12", "2022.12", "2023.12", "2024.12",
                                            "2025.12"};
        bool found = false;
        for (size_t i = 0; PyUnicode_Check(v[0]) && i < sizeof known / sizeof known[0]; i++)
            found = found || PyUnicode_CompareWithASCIIString(v[0], known[i]) == 0;
        if (!found) {
            PyErr_Format(PyExc_ValueError, "api_version %R is not supported (gpukit follows "
                         "the array API standard 2025.12)", v[0]);
            return NULL;
        }
    }
    return PyImport_ImportModule("gpukit");
}

PyDoc_STRVAR(reduce_doc,
"__reduce__($self, /)\n"
"--\n\n"
"Pickling: the elements as bytes with the shape, dtype and device name.");

static PyObject *array_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    gkpy_state *state = state_of(self);
    gk_array *a = array_of(self);
    PyObject *rebuild = PyObject_GetAttrString(PyType_GetModule(Py_TYPE(self)),
                                               "_array_from_bytes");
    PyObject *data = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)gk_array_nbytes(a));
    PyObject *shape = get_shape(self, NULL);
    PyObject *result = NULL;
    if (rebuild && data && shape) {
        gk_status status;
        GKPY_RUN(gkpy_long_work(a), gk_to_host(a, PyBytes_AS_STRING(data), gk_array_nbytes(a)));
        char device[GK_DEVICE_NAME_MAX];
        if (status != GK_OK)
            gkpy_raise(state, status);
        else
            result = Py_BuildValue("O(OOss)", rebuild, data, shape,
                                   gk_dtype_name(gk_array_dtype(a)),
                                   gk_device_name(gk_array_device(a), device, sizeof device));
    }
    Py_XDECREF(rebuild);
    Py_XDECREF(data);
    Py_XDECREF(shape);
    return result;
}

PyDoc_STRVAR(format_doc,
"__format__($self, format_spec, /)\n"
"--\n\n"
"f\"{x:.3f}\": a 0-d array is formatted as its element (as NumPy's are); other\n"
"arrays take only the empty spec (their str), TypeError otherwise.");

static PyObject *array_format(PyObject *self, PyObject *spec)
{
    if (!PyUnicode_Check(spec)) {
        PyErr_Format(PyExc_TypeError, "__format__: the format spec must be a str, not %.100s",
                     Py_TYPE(spec)->tp_name);
        return NULL;
    }
    gk_array *a = array_of(self);
    if (gk_array_ndim(a) == 0) {
        PyObject *value = only_element(state_of(self), a);
        PyObject *result = value ? PyObject_Format(value, spec) : NULL;
        Py_XDECREF(value);
        return result;
    }
    if (PyUnicode_GET_LENGTH(spec) == 0)
        return PyObject_Str(self);
    PyErr_Format(PyExc_TypeError,
                 "unsupported format string %R passed to gpukit.Array.__format__: only 0-d "
                 "arrays take one (this one is %d-d; format x.tolist() or its elements)",
                 spec, gk_array_ndim(a));
    return NULL;
}

#define FASTCALL_KW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS
#define FASTCALL(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL

static PyMethodDef array_methods[] = {
    {"__complex__", array_complex, METH_NOARGS,
     "__complex__($self, /)\n--\n\nThe one element of a size-1 array as a Python complex."},
    {"item", array_item_method, METH_NOARGS, item_doc},
    {"tolist", array_tolist, METH_NOARGS, tolist_doc},
    {"to", FASTCALL_KW(array_to), to_doc},
    {"to_device", FASTCALL_KW(array_to_device), to_device_doc},
    {"cpu", array_cpu, METH_NOARGS, cpu_doc},
    {"astype", FASTCALL_KW(array_astype), astype_doc},
    {"copy", array_copy, METH_NOARGS, copy_doc},
    {"reshape", FASTCALL(array_reshape), reshape_doc},
    {"transpose", FASTCALL(array_transpose), transpose_doc},
    {"numpy", array_numpy, METH_NOARGS, numpy_doc},
    {"copy_to_host", (PyCFunction)(void (*)(void))array_copy_to_host,
     METH_VARARGS | METH_KEYWORDS, copy_to_host_doc},
    {"__array_namespace__", FASTCALL_KW(array_namespace), namespace_doc},
    {"__array_ufunc__", (PyCFunction)(void (*)(void))gkpy_array_ufunc,
     METH_VARARGS | METH_KEYWORDS,
     "__array_ufunc__($self, ufunc, method, /, *inputs, **kwargs)\n--\n\n"
     "NumPy's ufuncs on gpukit arrays (NEP 13): np.add(x, y), np.add.reduce(x)\n"
     "run gpukit's function on x's device; NotImplemented for what gpukit\n"
     "lacks or for out=."},
    {"squeeze", (PyCFunction)(void (*)(void))gkpy_array_squeeze, METH_VARARGS | METH_KEYWORDS,
     "squeeze($self, /, axis=None)\n--\n\n"
     "NumPy's x.squeeze(): gpukit.squeeze(x, axis), every axis of length 1 by default."},
    {"ravel", gkpy_array_ravel, METH_NOARGS,
     "ravel($self, /)\n--\n\nNumPy's x.ravel(): x.reshape(-1), a view where it can be."},
    {"__array_function__", (PyCFunction)(void (*)(void))gkpy_array_function,
     METH_VARARGS | METH_KEYWORDS,
     "__array_function__($self, /, func, types, args, kwargs)\n--\n\n"
     "NumPy's functions on gpukit arrays (NEP 18): np.mean(x), np.concatenate\n"
     "([x, y]) run gpukit's function of the same meaning on x's device;\n"
     "NotImplemented for what gpukit lacks."},
    {"__copy__", array_copy, METH_NOARGS, "__copy__($self, /)\n--\n\nA copy (as copy())."},
    {"__deepcopy__", array_deepcopy, METH_O,
     "__deepcopy__($self, memo, /)\n--\n\nA copy (as copy())."},
    {"__reduce__", array_reduce, METH_NOARGS, reduce_doc},
    {"__format__", array_format, METH_O, format_doc},
    {NULL, NULL, 0, NULL},
};

/* ------------------------------------------------------------------ */
/* printing                                                            */

static PyObject *array_repr(PyObject *self)
{
    gk_array *a = array_of(self);
    char *text = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(a), gk_array_format(a, &text));
    if (status != GK_OK)
        return gkpy_raise(state_of(self), status);
    PyObject *result = PyUnicode_FromString(text);
    free(text);
    return result;
}

/* ------------------------------------------------------------------ */
/* the type                                                            */

PyDoc_STRVAR(array_doc,
"An n-dimensional array on a device (\"cpu\", \"cuda:N\", \"opencl:P:D\").\n\n"
"Made by gpukit.asarray(), zeros(), arange() and the other creation\n"
"functions, not by calling Array(). Attributes follow NumPy and the array\n"
"API standard (shape, dtype, device, ndim, size, T, mT, ...); operators\n"
"(+ - * / ** @, comparisons, in-place forms) run on the array's device.\n"
"Operands must be on one device (ValueError otherwise); lists and NumPy\n"
"arrays are copied onto the Array's device first.\n\n"
"Type promotion follows NumPy 2 (the array API standard's table): a\n"
"Python number is weak, so it never widens an array of its kind or a\n"
"higher one (an int32 array + 2 is int32, a float32 array * 2.0 float32;\n"
"an int32 array + 2.5 is float64); an int that does not fit the array's\n"
"integer dtype is an OverflowError in arithmetic (uint8 array + 300) and\n"
"compared by value in comparisons; NumPy scalars keep their dtype. / is\n"
"true division (integers give float64). New arrays default to float32\n"
"for floats and int64 for ints.\n\n"
"Indexing follows NumPy: integers, slices (with steps), None, ..., and\n"
"integer arrays and boolean masks (advanced indexing, a copy); basic\n"
"indices alone give a view sharing memory (an integer on every axis\n"
"gives a 0-d array).\n\n"
"Threads: different arrays may be used from different threads at once,\n"
"and one array may be read (used as an operand, printed, copied) from\n"
"several threads at once; writing an array (x[...] = v, x += y) while\n"
"another thread reads or writes it (or a view of it) is not safe. Long\n"
"operations release the GIL.");

static PyMemberDef array_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(gkpy_array, weakrefs), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

/* The type's tables: ours first, then what ops.c, buffer.c, dlpack.c and
 * cuda_interface.c add (see gkpy.h). Built once; the type keeps pointing at them. */
#define MAX_ARRAY_METHODS 192
#define MAX_ARRAY_GETSET 48
static PyMethodDef all_methods[MAX_ARRAY_METHODS];
static PyGetSetDef all_getset[MAX_ARRAY_GETSET];

static int append_methods(int *count, const PyMethodDef *from)
{
    for (; from->ml_name; from++) {
        if (*count >= MAX_ARRAY_METHODS - 1) {
            PyErr_SetString(PyExc_SystemError, "array.c: raise MAX_ARRAY_METHODS");
            return -1;
        }
        all_methods[(*count)++] = *from;
    }
    return 0;
}

static int append_getset(int *count, const PyGetSetDef *from)
{
    for (; from->name; from++) {
        if (*count >= MAX_ARRAY_GETSET - 1) {
            PyErr_SetString(PyExc_SystemError, "array.c: raise MAX_ARRAY_GETSET");
            return -1;
        }
        all_getset[(*count)++] = *from;
    }
    return 0;
}

int gkpy_array_init(PyObject *module, gkpy_state *state)
{
    int methods = 0, getset = 0;
    if (append_methods(&methods, array_methods) < 0 ||
        append_methods(&methods, gkpy_ops_array_methods) < 0 ||
        append_methods(&methods, gkpy_buffer_array_methods) < 0 ||
        append_methods(&methods, gkpy_dlpack_array_methods) < 0 ||
        append_getset(&getset, array_getset) < 0 ||
        append_getset(&getset, gkpy_cuda_interface_array_getset) < 0)
        return -1;
    all_methods[methods] = (PyMethodDef){NULL, NULL, 0, NULL};
    all_getset[getset] = (PyGetSetDef){NULL, NULL, NULL, NULL, NULL};

    PyType_Slot slots[] = {
        {Py_tp_doc, (void *)array_doc},
        {Py_tp_dealloc, array_dealloc},
        {Py_tp_repr, array_repr},
        {Py_tp_str, array_repr},
        {Py_tp_hash, PyObject_HashNotImplemented},
        {Py_tp_richcompare, array_richcompare},
        {Py_tp_iter, array_iter},
        {Py_tp_methods, all_methods},
        {Py_tp_getset, all_getset},
        {Py_tp_members, array_members},
        {Py_nb_add, nb_add},
        {Py_nb_subtract, nb_sub},
        {Py_nb_multiply, nb_mul},
        {Py_nb_true_divide, nb_div},
        {Py_nb_floor_divide, nb_floor_divide},
        {Py_nb_remainder, nb_remainder},
        {Py_nb_divmod, nb_divmod},
        {Py_nb_and, nb_and},
        {Py_nb_or, nb_or},
        {Py_nb_xor, nb_xor},
        {Py_nb_lshift, nb_lshift},
        {Py_nb_rshift, nb_rshift},
        {Py_nb_power, nb_pow},
        {Py_nb_matrix_multiply, nb_matmul},
        {Py_nb_inplace_add, nb_iadd},
        {Py_nb_inplace_subtract, nb_isub},
        {Py_nb_inplace_multiply, nb_imul},
        {Py_nb_inplace_true_divide, nb_idiv},
        {Py_nb_inplace_floor_divide, nb_ifloor_divide},
        {Py_nb_inplace_remainder, nb_iremainder},
        {Py_nb_inplace_and, nb_iand},
        {Py_nb_inplace_or, nb_ior},
        {Py_nb_inplace_xor, nb_ixor},
        {Py_nb_inplace_lshift, nb_ilshift},
        {Py_nb_inplace_rshift, nb_irshift},
        {Py_nb_inplace_power, nb_ipow},
        {Py_nb_inplace_matrix_multiply, nb_imatmul},
        {Py_nb_negative, nb_neg},
        {Py_nb_positive, nb_pos},
        {Py_nb_absolute, nb_abs},
        {Py_nb_invert, nb_invert},
        {Py_nb_bool, nb_bool},
        {Py_nb_int, nb_int},
        {Py_nb_float, nb_float},
        {Py_nb_index, nb_index},
        {Py_mp_length, array_length},
        {Py_mp_subscript, array_subscript},
        {Py_mp_ass_subscript, array_ass_subscript},
        {Py_sq_length, array_length},
        {Py_sq_item, array_item},
        {Py_sq_contains, array_contains},
        {Py_bf_getbuffer, gkpy_array_getbuffer},
        {Py_bf_releasebuffer, gkpy_array_releasebuffer},
        {0, NULL},
    };
    PyType_Spec spec = {
        .name = "gpukit.Array",
        .basicsize = sizeof(gkpy_array),
        /* Not subclassable: gkpy_state_of_type() and is_ours() rely on it. */
        .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION |
                 Py_TPFLAGS_IMMUTABLETYPE,
        .slots = slots,
    };
    state->array_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &spec, NULL);
    if (!state->array_type)
        return -1;
    return PyModule_AddType(module, state->array_type);
}
