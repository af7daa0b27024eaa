/* Array math as gpukit functions and Array methods: elementwise ops,
 * reductions, sorting and scans, views (reshape, permute_dims,
 * broadcast_to, matrix_transpose), matmul, and the C half of
 * gpukit.random (_random_*). The math is libgpukit's
 * (include/gpukit/array.h); this file maps the array API standard's
 * signatures onto those calls and releases the GIL around work that can
 * take long.
 *
 * Each operation is split in two: a wrapper that parses Python arguments
 * (with the GIL) and a *_core function over gk_arrays that runs without it
 * when the work is large or on a GPU. */
#include "gkpy.h"

#include <math.h>
#include <string.h>

/* gkpy_asarray's copy argument: copy only when the data must move or
 * change dtype (NumPy's copy=None). */
#define COPY_IF_NEEDED (-1)

static gk_array *array_of(PyObject *object)
{
    return ((gkpy_array *)object)->array;
}

/* "(2, 3)", for messages. */
static const char *shape_text(const gk_array *a, char *buffer, size_t size)
{
    size_t used = (size_t)snprintf(buffer, size, "(");
    const int64_t *shape = gk_array_shape(a);
    int ndim = gk_array_ndim(a);
    for (int i = 0; i < ndim && used < size; i++)
        used += (size_t)snprintf(buffer + used, size - used, "%s%lld", i ? ", " : "",
                                 (long long)shape[i]);
    if (used < size)
        snprintf(buffer + used, size - used, ndim == 1 ? ",)" : ")");
    return buffer;
}

/* --- arguments --- */

/* A function's parameters for parse(): names[] ends with NULL; the first
 * `positional` may be passed by position, of which the first
 * `positional_only` only so; the first `required` must be given. */
typedef struct signature {
    const char *function;
    const char *const *names;
    int positional, positional_only, required;
} signature;

#define MAX_PARAMETERS 8

/* The arguments of a METH_FASTCALL | METH_KEYWORDS call by name (create.c's
 * gkpy_parse_args): values[i] is the argument for names[i] (borrowed) or
 * NULL. */
static int parse(const signature *sig, PyObject *const *args, Py_ssize_t nargs,
                 PyObject *kwnames, PyObject **values)
{
    int count = 0;
    while (sig->names[count])
        count++;
    return gkpy_parse_args(sig->function, args, nargs, kwnames, sig->names, count,
                           sig->positional_only, sig->positional, sig->required, values);
}

/* The argument, or NULL when it was not given or is None. */
static PyObject *given(PyObject *value)
{
    return value == Py_None ? NULL : value;
}

/* A flag argument (absent: `otherwise`); -1 with an exception. */
static int flag(PyObject *value, bool otherwise)
{
    return value ? PyObject_IsTrue(value) : otherwise;
}

/* bool, int and float are plain values (weak scalars) that broadcast
 * against an Array without becoming one; their subclasses, such as
 * numpy.float64, carry a dtype of their own and are arrays (NumPy 2's
 * rule). */
static bool is_python_scalar(PyObject *object)
{
    return PyBool_Check(object) || PyLong_CheckExact(object) || PyFloat_CheckExact(object) ||
           PyComplex_CheckExact(object);
}

/* The factorizations take floating-point matrices (the standard's "should
 * have a real-valued floating-point data type"): TypeError otherwise,
 * rather than a silent float64 copy of an integer matrix. Takes `array`'s
 * reference, and returns it or NULL. */
/* An axis argument as an int; -1 with an exception. */
static int axis_value(const char *function, PyObject *object, int *axis)
{
    if (!PyIndex_Check(object) || PyBool_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s(): axis must be an int, not %.100s", function,
                     Py_TYPE(object)->tp_name);
        return -1;
    }
    long value = PyLong_AsLong(object);
    if (value == -1 && PyErr_Occurred())
        return -1;
    /* Far outside any array's axes; the range check names the shape. */
    *axis = value < -1000 ? -1000 : value > 1000 ? 1000 : (int)value;
    if (*axis == GK_ALL_AXES)
        *axis = -999;
    return 0;
}

/* `axis` made non-negative for `a` (a 0-d array takes 0 and -1, as the
 * library does); AxisError naming the shape when out of range. */
static int normalize_axis(gkpy_state *state, const char *function, const gk_array *a, int axis,
                          int *normalized)
{
    int ndim = gk_array_ndim(a), range = ndim > 0 ? ndim : 1;
    if (axis < -range || axis >= range) {
        char shape[200];
        PyErr_Format(state->axis_error, "%s: axis %d is out of range for shape %s (%d-d)",
                     function, axis, shape_text(a, shape, sizeof shape), ndim);
        return -1;
    }
    *normalized = axis < 0 ? axis + range : axis;
    return 0;
}

/* A shape argument (an int or a sequence of ints) into shape[]; -1 with
 * an exception. */
static int shape_value(const char *function, PyObject *object, int *ndim, int64_t *shape)
{
    if (PyIndex_Check(object)) {
        *ndim = 1;
        shape[0] = PyLong_AsLongLong(object);
        return shape[0] == -1 && PyErr_Occurred() ? -1 : 0;
    }
    PyObject *items = PySequence_Fast(object, "");
    if (!items) {
        PyErr_Format(PyExc_TypeError, "%s(): shape must be an int or a tuple of ints, not %.100s",
                     function, Py_TYPE(object)->tp_name);
        return -1;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(items);
    if (count > GK_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s(): shape %R has %zd dimensions; arrays have at most %d",
                     function, object, count, GK_MAX_DIMS);
        Py_DECREF(items);
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(items, i);
        if (!PyIndex_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s(): shape %R holds %.100s; lengths are ints",
                         function, object, Py_TYPE(item)->tp_name);
            Py_DECREF(items);
            return -1;
        }
        shape[i] = PyLong_AsLongLong(item);
        if (shape[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(items);
            return -1;
        }
    }
    *ndim = (int)count;
    Py_DECREF(items);
    return 0;
}

/* --- elementwise --- */

static bool is_integral(double value)
{
    return value == floor(value) && value >= -0x1p63 && value < 0x1p63;
}

/* The range of an integer or bool dtype as doubles: low <= value < limit
 * (limit is one past the largest value, exact as a double for every width:
 * 2^63 for int64, 2^64 for uint64). */
static void integer_range(gk_dtype dtype, double *low, double *limit)
{
    int bits = dtype == GK_BOOL ? 1 : 8 * (int)gk_dtype_size(dtype);
    bool is_signed = gk_dtype_is_integer(dtype) && !gk_dtype_is_unsigned(dtype);
    *low = is_signed ? -ldexp(1, bits - 1) : 0;
    *limit = ldexp(1, is_signed ? bits - 1 : bits);
}

/* x1 OP x2 for any operands: Arrays, plain values, array-likes. */
static PyObject *binary(gkpy_state *state, gk_op op, PyObject *x1, PyObject *x2)
{
    bool array1 = gkpy_is_array(state, x1), array2 = gkpy_is_array(state, x2);
    bool value1 = is_python_scalar(x1), value2 = is_python_scalar(x2);
    if (!array1 && !array2) {
        /* Neither is an Array: the first that is not a plain value (x1
         * when both are) becomes one on the default device; the other
         * then follows it. */
        bool first = !value1 || value2;
        PyObject *converted = gkpy_as_array(state, first ? x1 : x2, NULL);
        if (!converted)
            return NULL;
        PyObject *result = first ? binary(state, op, converted, x2)
                                 : binary(state, op, x1, converted);
        Py_DECREF(converted);
        return result;
    }
    if (array1 && value2)
        return gkpy_binary_value(state, op, x1, x2, false);
    if (array2 && value1)
        return gkpy_binary_value(state, op, x2, x1, true);
    PyObject *pair[2];
    if (gkpy_as_pair(state, x1, x2, pair) < 0)
        return NULL;
    const gk_array *a1 = array_of(pair[0]), *a2 = array_of(pair[1]);
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(a1) || gkpy_long_work(a2), gk_binary(op, a1, a2, &out));
    gk_dtype promoted = gk_promote_types(gk_array_dtype(a1), gk_array_dtype(a2));
    Py_DECREF(pair[0]);
    Py_DECREF(pair[1]);
    return gkpy_op_result(state, status, out, op, promoted);
}

static PyObject *unary(gkpy_state *state, gk_op op, PyObject *x)
{
    PyObject *array = gkpy_as_array(state, x, NULL);
    if (!array)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(array_of(array)), gk_unary(op, array_of(array), &out));
    gk_dtype dtype = gk_array_dtype(array_of(array));
    Py_DECREF(array);
    return gkpy_op_result(state, status, out, op, dtype);
}

/* For functions whose first argument x is required and positional-only. */
static int need_x(const char *function, Py_ssize_t nargs)
{
    if (nargs >= 1)
        return 0;
    PyErr_Format(PyExc_TypeError, "%s() missing required argument 'x'", function);
    return -1;
}

/* gpukit.NAME(x, /, ...) as fn_NAME and x.NAME(...) as method_NAME, over
 * impl(state, "NAME", x, the arguments after x, positional, ...):
 * `positional` is how many of those may come by position, and the
 * macro's last arguments are impl's last ones. */
#define X_FUNCTION(name, impl, positional, ...)                                                   \
    static PyObject *fn_##name(PyObject *module, PyObject *const *args, Py_ssize_t nargs,        \
                               PyObject *kwnames)                                                  \
    {                                                                                              \
        if (need_x(#name, nargs) < 0)                                                              \
            return NULL;                                                                           \
        return impl(gkpy_state_of_module(module), #name, args[0], args + 1, nargs - 1, kwnames,   \
                    positional, __VA_ARGS__);                                                      \
    }
#define X_METHOD(name, impl, positional, ...)                                                     \
    static PyObject *method_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs,      \
                                   PyObject *kwnames)                                              \
    {                                                                                              \
        return impl(gkpy_state_of_type(Py_TYPE(self)), #name, self, args, nargs, kwnames,          \
                    positional, __VA_ARGS__);                                                      \
    }

/* One C function per op (a PyCFunction has no slot for the op). */
#define BINARY_FUNCTION(name, op)                                                                 \
    static PyObject *fn_##name(PyObject *module, PyObject *const *args, Py_ssize_t nargs)        \
    {                                                                                              \
        if (gkpy_expect_args(#name, nargs, 2) < 0)                                                 \
            return NULL;                                                                           \
        return binary(gkpy_state_of_module(module), op, args[0], args[1]);                        \
    }
#define UNARY_FUNCTION(name, op)                                                                  \
    static PyObject *fn_##name(PyObject *module, PyObject *const *args, Py_ssize_t nargs)        \
    {                                                                                              \
        if (gkpy_expect_args(#name, nargs, 1) < 0)                                                 \
            return NULL;                                                                           \
        return unary(gkpy_state_of_module(module), op, args[0]);                                  \
    }

BINARY_FUNCTION(add, GK_ADD)
BINARY_FUNCTION(subtract, GK_SUB)
BINARY_FUNCTION(multiply, GK_MUL)
BINARY_FUNCTION(divide, GK_DIV)
BINARY_FUNCTION(pow, GK_POW)
BINARY_FUNCTION(maximum, GK_MAXIMUM)
BINARY_FUNCTION(minimum, GK_MINIMUM)
BINARY_FUNCTION(equal, GK_EQ)
BINARY_FUNCTION(not_equal, GK_NE)
BINARY_FUNCTION(less, GK_LT)
BINARY_FUNCTION(less_equal, GK_LE)
BINARY_FUNCTION(greater, GK_GT)
BINARY_FUNCTION(greater_equal, GK_GE)
UNARY_FUNCTION(negative, GK_NEG)
UNARY_FUNCTION(abs, GK_ABS)
UNARY_FUNCTION(exp, GK_EXP)
UNARY_FUNCTION(log, GK_LOG)
UNARY_FUNCTION(sqrt, GK_SQRT)
UNARY_FUNCTION(sin, GK_SIN)
UNARY_FUNCTION(cos, GK_COS)
UNARY_FUNCTION(tanh, GK_TANH)
UNARY_FUNCTION(tan, GK_TAN)
UNARY_FUNCTION(asin, GK_ASIN)
UNARY_FUNCTION(acos, GK_ACOS)
UNARY_FUNCTION(atan, GK_ATAN)
UNARY_FUNCTION(sinh, GK_SINH)
UNARY_FUNCTION(cosh, GK_COSH)
UNARY_FUNCTION(asinh, GK_ASINH)
UNARY_FUNCTION(acosh, GK_ACOSH)
UNARY_FUNCTION(atanh, GK_ATANH)
UNARY_FUNCTION(log1p, GK_LOG1P)
UNARY_FUNCTION(expm1, GK_EXPM1)
UNARY_FUNCTION(sigmoid, GK_SIGMOID)
UNARY_FUNCTION(relu, GK_RELU)
BINARY_FUNCTION(atan2, GK_ATAN2)
BINARY_FUNCTION(copysign, GK_COPYSIGN)
BINARY_FUNCTION(hypot, GK_HYPOT)
BINARY_FUNCTION(logaddexp, GK_LOGADDEXP)
BINARY_FUNCTION(nextafter, GK_NEXTAFTER)
BINARY_FUNCTION(floor_divide, GK_FLOOR_DIVIDE)
BINARY_FUNCTION(remainder, GK_REMAINDER)
BINARY_FUNCTION(bitwise_and, GK_BITWISE_AND)
BINARY_FUNCTION(bitwise_or, GK_BITWISE_OR)
BINARY_FUNCTION(bitwise_xor, GK_BITWISE_XOR)
BINARY_FUNCTION(bitwise_left_shift, GK_BITWISE_LEFT_SHIFT)
BINARY_FUNCTION(bitwise_right_shift, GK_BITWISE_RIGHT_SHIFT)
BINARY_FUNCTION(logical_and, GK_LOGICAL_AND)
BINARY_FUNCTION(logical_or, GK_LOGICAL_OR)
BINARY_FUNCTION(logical_xor, GK_LOGICAL_XOR)
UNARY_FUNCTION(ceil, GK_CEIL)
UNARY_FUNCTION(floor, GK_FLOOR)
UNARY_FUNCTION(trunc, GK_TRUNC)
UNARY_FUNCTION(sign, GK_SIGN)
UNARY_FUNCTION(signbit, GK_SIGNBIT)
UNARY_FUNCTION(isnan, GK_ISNAN)
UNARY_FUNCTION(isinf, GK_ISINF)
UNARY_FUNCTION(isfinite, GK_ISFINITE)
UNARY_FUNCTION(log2, GK_LOG2)
UNARY_FUNCTION(log10, GK_LOG10)
UNARY_FUNCTION(square, GK_SQUARE)
UNARY_FUNCTION(positive, GK_POSITIVE)
UNARY_FUNCTION(reciprocal, GK_RECIPROCAL)
UNARY_FUNCTION(bitwise_invert, GK_BITWISE_INVERT)
UNARY_FUNCTION(logical_not, GK_LOGICAL_NOT)
UNARY_FUNCTION(conj, GK_CONJ)
UNARY_FUNCTION(real, GK_REAL)
UNARY_FUNCTION(imag, GK_IMAG)

/* --- where, clip, astype, matmul --- */

static PyObject *fn_where(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    if (gkpy_expect_args("where", nargs, 3) < 0)
        return NULL;
    /* Everything goes where the first Array is. A plain value among x1 and
     * x2 is weak beside the other (an Array): int32 array and 2.5 give
     * float64, float32 array and 1 float32, as NumPy 2. */
    PyObject *near = NULL;
    for (int i = 0; i < 3 && !near; i++)
        if (gkpy_is_array(state, args[i]))
            near = args[i];
    PyObject *arrays[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
        PyObject *other = i == 1 ? args[2] : i == 2 ? args[1] : NULL;
        gk_array *scalar = NULL;
        if (i > 0 && is_python_scalar(args[i]) && other && gkpy_is_array(state, other)) {
            if (gkpy_scalar_array(state, array_of(other), args[i], GK_OP_COUNT, &scalar) == 0)
                arrays[i] = gkpy_array_wrap(state, scalar);
        } else {
            arrays[i] = gkpy_as_array(state, args[i], near);
        }
        if (!arrays[i]) {
            for (int j = 0; j < i; j++)
                Py_DECREF(arrays[j]);
            return NULL;
        }
        if (!near)
            near = arrays[i];
    }
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(array_of(arrays[0])) || gkpy_long_work(array_of(arrays[1])) ||
            gkpy_long_work(array_of(arrays[2])),
        gk_where(array_of(arrays[0]), array_of(arrays[1]), array_of(arrays[2]), &out));
    for (int i = 0; i < 3; i++)
        Py_DECREF(arrays[i]);
    return gkpy_array_result(state, status, out);
}

/* One side of clip(): maximum(a, bound) for min=, minimum(a, bound) for
 * max=. A plain bound that an integer array's values cannot pass clips
 * nothing (clip(uint8, -3) is a copy, as NumPy's). */
static gk_status clip_side(gk_op op, const gk_array *a, PyObject *bound, double value,
                           gk_array **out)
{
    if (bound) /* an Array */
        return gk_binary(op, a, array_of(bound), out);
    gk_dtype dtype = gk_array_dtype(a);
    if (!gk_dtype_is_float(dtype) && is_integral(value)) {
        double low, limit;
        integer_range(dtype, &low, &limit);
        /* limit - 1 rounds to limit for 64-bit dtypes, where every integral
         * double below it is a value of the dtype. */
        if ((op == GK_MAXIMUM && value <= low) || (op == GK_MINIMUM && value >= limit - 1))
            return gk_copy(a, out);
    }
    return gk_binary_scalar(op, a, value, out);
}

/* A Python int bound beside the integer Array x as a 0-d Array of x's
 * dtype holding it exactly, or the end of the dtype's range it lies
 * beyond. */
static PyObject *integer_bound(gkpy_state *state, PyObject *x, PyObject *bound)
{
    gk_dtype dtype = gk_array_dtype(array_of(x));
    int side = gkpy_against_range(bound, dtype);
    if (side == -2)
        return NULL;
    PyObject *value = side ? gkpy_integer_end(dtype, side) : Py_NewRef(bound);
    gk_array *scalar = NULL;
    int made = value ? gkpy_scalar_array(state, array_of(x), value, GK_OP_COUNT, &scalar) : -1;
    Py_XDECREF(value);
    return made < 0 ? NULL : gkpy_array_wrap(state, scalar);
}

/* clip's work: bounds[i] is an Array or NULL with values[i] the plain
 * bound; present[i] says whether there is a bound at all. */
static gk_status clip_core(const gk_array *a, PyObject *const bounds[2], const double values[2],
                           const bool present[2], gk_array **out)
{
    *out = NULL;
    if (!present[0] && !present[1])
        return gk_copy(a, out);
    if (present[0] && present[1] && !bounds[0] && !bounds[1])
        return gk_clip(a, values[0], values[1], out);
    if (!present[1])
        return clip_side(GK_MAXIMUM, a, bounds[0], values[0], out);
    if (!present[0])
        return clip_side(GK_MINIMUM, a, bounds[1], values[1], out);
    gk_array *low;
    gk_status status = clip_side(GK_MAXIMUM, a, bounds[0], values[0], &low);
    if (status == GK_OK) {
        status = clip_side(GK_MINIMUM, low, bounds[1], values[1], out);
        gk_array_free(low);
    }
    return status;
}

static const char *const decimals_names[] = {"decimals", NULL};
static const char *const ndigits_names[] = {"ndigits", NULL};

/* gpukit.round(x, /, *, decimals=0) (NumPy's decimals beside the
 * standard's x), x.round(decimals=0) (NumPy's method) and round(x,
 * ndigits) (Python's __round__): gk_round_decimals. */
static PyObject *rounding(gkpy_state *state, const char *function, PyObject *x,
                          PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                          int positional, const char *const *names)
{
    signature sig = {function, names, positional, 0, 0};
    PyObject *values[MAX_PARAMETERS];
    if (parse(&sig, args, nargs, kwnames, values) < 0)
        return NULL;
    int overflow = 0;
    long decimals = given(values[0]) ? PyLong_AsLongAndOverflow(values[0], &overflow) : 0;
    if (decimals == -1 && PyErr_Occurred())
        return NULL;
    if (overflow || decimals < -400 || decimals > 400) /* 10^400 is inf in every dtype */
        decimals = overflow ? overflow * 400 : decimals < 0 ? -400 : 400;
    PyObject *array = gkpy_as_array(state, x, NULL);
    if (!array)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(array_of(array)),
             gk_round_decimals(array_of(array), (int)decimals, &out));
    gk_dtype dtype = gk_array_dtype(array_of(array));
    Py_DECREF(array);
    return gkpy_op_result(state, status, out, GK_ROUND, dtype);
}
X_FUNCTION(round, rounding, 0, decimals_names)
X_METHOD(round, rounding, 1, decimals_names)
X_METHOD(__round__, rounding, 1, ndigits_names)

static PyObject *fn_clip(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "min", "max", NULL};
    static const signature sig = {"clip", names, 3, 1, 1};
    PyObject *values[MAX_PARAMETERS];
    if (parse(&sig, args, nargs, kwnames, values) < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    PyObject *bounds[2] = {NULL, NULL};
    double numbers[2] = {0, 0};
    bool present[2] = {false, false};
    PyObject *result = NULL;
    for (int i = 0; i < 2; i++) {
        PyObject *bound = given(values[1 + i]);
        if (!bound)
            continue;
        present[i] = true;
        gk_dtype dtype = gk_array_dtype(array_of(x));
        if (PyLong_CheckExact(bound) && gk_dtype_is_integer(dtype)) {
            /* an int beside integers: exact (doubles are not beyond 2^53),
             * clamped to the dtype's range, where it clips nothing more */
            bounds[i] = integer_bound(state, x, bound);
            if (!bounds[i])
                goto done;
        } else if (is_python_scalar(bound)) {
            numbers[i] = PyFloat_AsDouble(bound);
            if (numbers[i] == -1.0 && PyErr_Occurred())
                goto done;
        } else {
            bounds[i] = gkpy_as_array(state, bound, x);
            if (!bounds[i])
                goto done;
        }
    }
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(array_of(x)), clip_core(array_of(x), bounds, numbers, present, &out));
    result = gkpy_array_result(state, status, out);
done:
    Py_DECREF(x);
    Py_XDECREF(bounds[0]);
    Py_XDECREF(bounds[1]);
    return result;
}

static gk_status astype_core(const gk_array *a, gk_dtype dtype, const gk_device *device,
                             gk_array **out)
{
    gk_array *cast;
    gk_status status = gk_cast(a, dtype, &cast);
    if (status != GK_OK || !device) {
        *out = status == GK_OK ? cast : NULL;
        return status;
    }
    status = gk_to(cast, *device, out);
    gk_array_free(cast);
    return status;
}

static PyObject *fn_astype(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "dtype", "copy", "device", NULL};
    static const signature sig = {"astype", names, 2, 2, 2};
    PyObject *values[MAX_PARAMETERS];
    if (parse(&sig, args, nargs, kwnames, values) < 0)
        return NULL;
    gk_dtype dtype;
    gk_device device;
    int copy = flag(values[2], true), move = 0;
    if (copy < 0 || gkpy_dtype_from_object(state, values[1], &dtype) < 0 ||
        (move = gkpy_optional_device(state, values[3], &device)) < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    const gk_array *a = array_of(x);
    if (move && gk_device_equal(gk_array_device(a), device))
        move = 0;
    if (!copy && !move && gk_array_dtype(a) == dtype)
        return x; /* copy=False: the array itself when nothing changes */
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(a) || move, astype_core(a, dtype, move ? &device : NULL, &out));
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

/* matmul(x1, x2), always without the GIL (matrix work). */
static PyObject *fn_matmul(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    PyObject *pair[2];
    if (gkpy_expect_args("matmul", nargs, 2) < 0 || gkpy_as_pair(state, args[0], args[1], pair) < 0)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(true, gk_matmul(array_of(pair[0]), array_of(pair[1]), &out));
    Py_DECREF(pair[0]);
    Py_DECREF(pair[1]);
    return gkpy_array_result(state, status, out);
}

/* --- reductions --- */

/* What a reduction call asks for, parsed. */
typedef struct reduce_request {
    gk_reduction op;
    bool all;                   /* axis=None, or every axis */
    bool reduced[GK_MAX_DIMS];  /* otherwise: the axes reduced (maybe none) */
    bool keepdims;
    double correction;          /* var, std */
    bool cast;                  /* sum, prod with dtype= */
    gk_dtype dtype;
} reduce_request;

/* One reduction over one axis (or all); var and std with a fractional
 * correction scale the plain variance by n / (n - correction), as NumPy's
 * ddof does. */
static gk_status reduce_one(const reduce_request *r, const gk_array *a, int axis, bool keepdims,
                            gk_array **out)
{
    *out = NULL;
    if (r->op != GK_VAR && r->op != GK_STD)
        return gk_reduce(r->op, a, axis, keepdims, out);
    bool std = r->op == GK_STD;
    if (r->correction == floor(r->correction) && r->correction < 0x1p62)
        return gk_var(a, axis, (int64_t)r->correction, keepdims, std, out);
    double n = axis == GK_ALL_AXES || gk_array_ndim(a) == 0
                   ? (double)gk_array_size(a)
                   : (double)gk_array_shape(a)[axis < 0 ? axis + gk_array_ndim(a) : axis];
    double factor = n - r->correction > 0 ? n / (n - r->correction) : INFINITY;
    gk_array *plain, *scaled;
    gk_status status = gk_var(a, axis, 0, keepdims, false, &plain);
    if (status != GK_OK)
        return status;
    status = gk_binary_scalar(GK_MUL, plain, factor, &scaled);
    gk_array_free(plain);
    if (status != GK_OK || !std) {
        *out = status == GK_OK ? scaled : NULL;
        return status;
    }
    status = gk_unary(GK_SQRT, scaled, out);
    gk_array_free(scaled);
    return status;
}

/* Several axes (or none): the kept axes first, the reduced ones merged
 * into one last axis (a copy where the strides do not allow a view), one
 * reduction over it, then the kept length-1 axes put back for keepdims.
 * Exact for every reduction: one pass over all the reduced elements. */
static gk_status reduce_axes(const reduce_request *r, const gk_array *a, gk_array **out)
{
    *out = NULL;
    int ndim = gk_array_ndim(a), order[GK_MAX_DIMS], kept = 0;
    const int64_t *shape = gk_array_shape(a);
    int64_t merged_shape[GK_MAX_DIMS + 1], full_shape[GK_MAX_DIMS], merged = 1;
    for (int i = 0; i < ndim; i++) {
        full_shape[i] = r->reduced[i] ? 1 : shape[i];
        if (!r->reduced[i]) {
            order[kept] = i;
            merged_shape[kept++] = shape[i];
        }
    }
    for (int i = 0, k = kept; i < ndim; i++)
        if (r->reduced[i]) {
            order[k++] = i;
            merged *= shape[i];
        }
    merged_shape[kept] = merged;
    int rows_ndim = kept + 1;
    if (kept == ndim) {
        /* axis=(): every element is reduced alone (sum casts, var gives
         * 0): one row of length 1 per element, whatever the ndim. */
        merged_shape[0] = gk_array_size(a);
        merged_shape[1] = 1;
        rows_ndim = 2;
    }
    gk_array *moved = NULL, *rows = NULL, *result = NULL;
    gk_status status = gk_transpose(a, order, &moved);
    if (status == GK_OK)
        status = gk_reshape(moved, rows_ndim, merged_shape, &rows);
    if (status == GK_OK)
        status = reduce_one(r, rows, -1, false, &result);
    if (status == GK_OK && (r->keepdims || kept == ndim)) {
        status = gk_reshape(result, ndim, full_shape, out);
        gk_array_free(result);
    } else {
        *out = result;
    }
    gk_array_free(moved);
    gk_array_free(rows);
    return status;
}

static gk_status reduce_core(const reduce_request *r, const gk_array *a, gk_array **out)
{
    *out = NULL;
    gk_array *cast = NULL, *result = NULL;
    gk_status status = GK_OK;
    if (r->cast && gk_array_dtype(a) != r->dtype) {
        /* dtype= is the type summed in: cast first (sum(float32, dtype=
         * float64) adds in float64). */
        status = gk_cast(a, r->dtype, &cast);
        a = cast;
    }
    if (status == GK_OK) {
        int count = 0, axis = 0;
        for (int i = 0; i < gk_array_ndim(a); i++)
            if (r->reduced[i]) {
                count++;
                axis = i;
            }
        if (r->all)
            status = reduce_one(r, a, GK_ALL_AXES, r->keepdims, &result);
        else if (count == 1)
            status = reduce_one(r, a, axis, r->keepdims, &result);
        else
            status = reduce_axes(r, a, &result);
    }
    if (status == GK_OK && r->cast && gk_array_dtype(result) != r->dtype) {
        /* The library sums integers in int64; dtype=int32 wants int32. */
        status = gk_cast(result, r->dtype, out);
        gk_array_free(result);
    } else {
        *out = result;
    }
    gk_array_free(cast);
    return status;
}

/* The axis argument into the request: None (all), an int, or (except for
 * argmin/argmax) a tuple of ints. */
static int parse_axes(gkpy_state *state, const char *function, PyObject *object,
                      const gk_array *a, bool allow_tuple, reduce_request *r)
{
    memset(r->reduced, 0, sizeof r->reduced);
    r->all = !object;
    if (!object)
        return 0;
    int ndim = gk_array_ndim(a), axis, normalized;
    if (PyTuple_Check(object) || PyList_Check(object)) {
        if (!allow_tuple) {
            PyErr_Format(PyExc_TypeError, "%s(): axis must be an int or None, not a %.100s",
                         function, Py_TYPE(object)->tp_name);
            return -1;
        }
        Py_ssize_t count = PySequence_Size(object);
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *item = PySequence_GetItem(object, i);
            int failed = !item || axis_value(function, item, &axis) < 0 ||
                         normalize_axis(state, function, a, axis, &normalized) < 0;
            Py_XDECREF(item);
            if (failed)
                return -1;
            if (ndim == 0) { /* a 0-d array's one axis is all of it */
                r->all = true;
                continue;
            }
            if (r->reduced[normalized]) {
                PyErr_Format(PyExc_ValueError, "%s: axis %d appears twice in %R", function,
                             axis, object);
                return -1;
            }
            r->reduced[normalized] = true;
        }
        if (count == ndim && ndim > 0)
            r->all = true; /* every axis: the library's flat reduction */
        return 0;
    }
    if (axis_value(function, object, &axis) < 0 ||
        normalize_axis(state, function, a, axis, &normalized) < 0)
        return -1;
    if (ndim == 0)
        r->all = true;
    else
        r->reduced[normalized] = true;
    return 0;
}

enum reduce_kind { PLAIN, WITH_DTYPE, WITH_CORRECTION, ARG };

static const char *const plain_names[] = {"axis", "keepdims", NULL};
static const char *const dtype_names[] = {"axis", "dtype", "keepdims", NULL};
static const char *const correction_names[] = {"axis", "correction", "keepdims", "ddof", NULL};

/* A reduction of the Array `x`: args are the arguments after x (all by
 * keyword for the module functions, axis also by position for methods). */
static PyObject *reduction(gkpy_state *state, const char *function, PyObject *x,
                           PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                           int positional, gk_reduction op)
{
    enum reduce_kind kind = op == GK_SUM || op == GK_PROD           ? WITH_DTYPE
                            : op == GK_VAR || op == GK_STD           ? WITH_CORRECTION
                            : op == GK_ARGMIN || op == GK_ARGMAX     ? ARG
                                                                     : PLAIN;
    signature sig = {function,
                     kind == WITH_DTYPE        ? dtype_names
                     : kind == WITH_CORRECTION ? correction_names
                                               : plain_names,
                     positional, 0, 0};
    PyObject *values[MAX_PARAMETERS];
    if (parse(&sig, args, nargs, kwnames, values) < 0)
        return NULL;
    reduce_request r = {.op = op, .correction = 0, .cast = false};
    int keepdims = flag(values[kind == PLAIN || kind == ARG ? 1 : 2], false);
    if (keepdims < 0)
        return NULL;
    r.keepdims = keepdims;
    if (kind == WITH_DTYPE && given(values[1])) {
        if (gkpy_dtype_from_object(state, values[1], &r.dtype) < 0)
            return NULL;
        r.cast = true;
    }
    if (kind == WITH_CORRECTION) {
        /* correction (the standard's name) or ddof (NumPy's), not both. */
        PyObject *correction = values[1] ? values[1] : values[3];
        if (values[1] && values[3]) {
            PyErr_Format(PyExc_TypeError, "%s(): give correction or ddof, not both", function);
            return NULL;
        }
        if (correction) {
            r.correction = PyFloat_AsDouble(correction);
            if (r.correction == -1.0 && PyErr_Occurred())
                return NULL;
            if (!(r.correction >= 0)) {
                PyErr_Format(PyExc_ValueError, "%s: correction is %R; it must be 0 or more",
                             function, correction);
                return NULL;
            }
        }
    }
    PyObject *array = gkpy_as_array(state, x, NULL);
    if (!array)
        return NULL;
    const gk_array *a = array_of(array);
    PyObject *result = NULL;
    if (parse_axes(state, function, given(values[0]), a, kind != ARG, &r) == 0) {
        gk_array *out = NULL;
        gk_status status;
        GKPY_RUN(gkpy_long_work(a), reduce_core(&r, a, &out));
        result = gkpy_array_result(state, status, out);
    }
    Py_DECREF(array);
    return result;
}

/* The module functions take axis only by keyword; methods also by position. */
#define REDUCTION(name, op) X_FUNCTION(name, reduction, 0, op) X_METHOD(name, reduction, 1, op)

REDUCTION(sum, GK_SUM)
REDUCTION(prod, GK_PROD)
REDUCTION(mean, GK_MEAN)
REDUCTION(min, GK_MIN)
REDUCTION(max, GK_MAX)
REDUCTION(argmin, GK_ARGMIN)
REDUCTION(argmax, GK_ARGMAX)
REDUCTION(var, GK_VAR)
REDUCTION(std, GK_STD)

/* --- sorting and scans --- */

/* a[..., ::-1] along `axis`: a view. */
static gk_status reversed(const gk_array *a, int axis, gk_array **out)
{
    return gk_slice(a, axis, -1, INT64_MIN, -1, out);
}

/* Sorts (or argsorts) along `axis` (normalized). The library sorts along
 * the last axis, stably: another axis is swapped to the end and back (the
 * result is a view of a sorted copy). Descending: sorting the reversed
 * rows ascending and reversing the result keeps equal elements in their
 * original order (stable), and the indices into the reversed rows map back
 * as n - 1 - i. NaNs, last ascending, come first descending. */
static gk_status sort_core(const gk_array *a, int axis, bool descending, bool indices,
                           gk_array **out)
{
    *out = NULL;
    int ndim = gk_array_ndim(a), last = ndim - 1;
    if (ndim == 0)
        return indices ? gk_argsort(a, out) : gk_sort(a, out);
    int order[GK_MAX_DIMS];
    for (int i = 0; i < ndim; i++)
        order[i] = i;
    order[axis] = last;
    order[last] = axis;
    int64_t n = gk_array_shape(a)[axis];
    gk_array *moved = NULL, *flipped = NULL, *sorted = NULL, *back = NULL, *result = NULL;
    gk_status status = gk_transpose(a, order, &moved);
    if (status == GK_OK && descending)
        status = reversed(moved, last, &flipped);
    if (status == GK_OK) {
        const gk_array *rows = descending ? flipped : moved;
        status = indices ? gk_argsort(rows, &sorted) : gk_sort(rows, &sorted);
    }
    if (status == GK_OK && descending) {
        status = reversed(sorted, last, &back);
        if (status == GK_OK && indices) {
            gk_array *shifted;
            status = gk_binary_scalar(GK_SUB, back, (double)(n - 1), &shifted);
            if (status == GK_OK) {
                status = gk_unary(GK_NEG, shifted, &result);
                gk_array_free(shifted);
            }
        } else if (status == GK_OK) {
            result = back;
            back = NULL;
        }
    } else if (status == GK_OK) {
        result = sorted;
        sorted = NULL;
    }
    if (status == GK_OK) {
        status = gk_transpose(result, order, out);
        gk_array_free(result);
    }
    gk_array_free(moved);
    gk_array_free(flipped);
    gk_array_free(sorted);
    gk_array_free(back);
    return status;
}

static const char *const sort_names[] = {"axis", "descending", "stable", NULL};

/* sort or argsort of `x` (args after x); with `in_place`, x.sort(): the
 * sorted values are written back into x and None is returned, as NumPy's
 * and CuPy's ndarray.sort() do. */
static PyObject *sorting(gkpy_state *state, const char *function, PyObject *x,
                         PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                         int positional, bool indices, bool in_place)
{
    signature sig = {function, sort_names, positional, 0, 0};
    PyObject *values[MAX_PARAMETERS];
    if (parse(&sig, args, nargs, kwnames, values) < 0)
        return NULL;
    int axis = -1, descending = flag(values[1], false), stable = flag(values[2], true);
    if (descending < 0 || stable < 0)
        return NULL; /* every sort is stable, so stable=False asks nothing more */
    if (values[0] && axis_value(function, values[0], &axis) < 0)
        return NULL;
    PyObject *array = gkpy_as_array(state, x, NULL);
    if (!array)
        return NULL;
    const gk_array *a = array_of(array);
    PyObject *result = NULL;
    int normalized;
    if (normalize_axis(state, function, a, axis, &normalized) == 0) {
        gk_array *out = NULL;
        gk_status status;
        GKPY_RUN(gkpy_long_work(a), sort_core(a, normalized, descending, indices, &out));
        if (in_place && status == GK_OK) {
            GKPY_RUN(gkpy_long_work(a), gk_assign(array_of(array), out));
            gk_array_free(out);
            result = status == GK_OK ? Py_NewRef(Py_None) : gkpy_raise(state, status);
        } else {
            result = gkpy_array_result(state, status, out);
        }
    }
    Py_DECREF(array);
    return result;
}

X_FUNCTION(sort, sorting, 0, false, false)
X_FUNCTION(argsort, sorting, 0, true, false)
X_METHOD(sort, sorting, 1, false, true)
X_METHOD(argsort, sorting, 1, true, false)

/* The cumulative sum along `axis` (GK_ALL_AXES: flattened), in `dtype`
 * when `cast`, with a leading 0 along the axis when `initial`. */
static gk_status cumsum_core(const gk_array *a, int axis, bool cast, gk_dtype dtype,
                             bool initial, gk_array **out)
{
    return gk_cumulative(GK_SUM, a, axis, cast ? &dtype : NULL, initial, out);
}

static const char *const cumulative_sum_names[] = {"axis", "dtype", "include_initial", NULL};
static const char *const cumsum_names[] = {"axis", "dtype", NULL};

/* cumulative_sum (standard: axis needed beyond 1-d, include_initial) and
 * cumsum (NumPy: axis=None flattens). */
static PyObject *cumulative(gkpy_state *state, const char *function, PyObject *x,
                            PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                            int positional, bool standard)
{
    signature sig = {function, standard ? cumulative_sum_names : cumsum_names, positional, 0, 0};
    PyObject *values[MAX_PARAMETERS];
    if (parse(&sig, args, nargs, kwnames, values) < 0)
        return NULL;
    int initial = standard ? flag(values[2], false) : 0;
    gk_dtype dtype = GK_FLOAT32;
    bool cast = given(values[1]) != NULL;
    if (initial < 0 || (cast && gkpy_dtype_from_object(state, values[1], &dtype) < 0))
        return NULL;
    int axis = GK_ALL_AXES;
    if (given(values[0]) && axis_value(function, values[0], &axis) < 0)
        return NULL;
    PyObject *array = gkpy_as_array(state, x, NULL);
    if (!array)
        return NULL;
    const gk_array *a = array_of(array);
    PyObject *result = NULL;
    int ndim = gk_array_ndim(a);
    if (standard && axis == GK_ALL_AXES) {
        if (ndim > 1) {
            char shape[200];
            PyErr_Format(PyExc_ValueError,
                         "%s: axis must be given for a %d-d array (shape %s); cumsum() without "
                         "an axis flattens",
                         function, ndim, shape_text(a, shape, sizeof shape));
            goto done;
        }
        axis = 0;
    }
    if (axis != GK_ALL_AXES) {
        int normalized;
        if (normalize_axis(state, function, a, axis, &normalized) < 0)
            goto done;
        axis = ndim == 0 ? GK_ALL_AXES : normalized;
    }
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(a), cumsum_core(a, axis, cast, dtype, initial, &out));
    result = gkpy_array_result(state, status, out);
done:
    Py_DECREF(array);
    return result;
}

X_FUNCTION(cumulative_sum, cumulative, 0, true)
X_FUNCTION(cumsum, cumulative, 1, false)
X_METHOD(cumsum, cumulative, 2, false)

/* --- views --- */

static const char *const reshape_names[] = {"x", "shape", "copy", NULL};

static PyObject *fn_reshape(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const signature sig = {"reshape", reshape_names, 2, 1, 2};
    PyObject *values[MAX_PARAMETERS];
    if (parse(&sig, args, nargs, kwnames, values) < 0)
        return NULL;
    int ndim, copy; /* -1: if needed */
    int64_t shape[GK_MAX_DIMS];
    if (gkpy_parse_copy(values[2], &copy) < 0 ||
        shape_value("reshape", values[1], &ndim, shape) < 0)
        return NULL;
    PyObject *array = gkpy_as_array(state, values[0], NULL);
    if (!array)
        return NULL;
    const gk_array *a = array_of(array);
    gk_array *out = NULL, *copied = NULL;
    gk_status status = GK_OK;
    if (copy == 1) {
        GKPY_RUN(gkpy_long_work(a), gk_copy(a, &copied));
        if (status == GK_OK)
            status = gk_reshape(copied, ndim, shape, &out);
        gk_array_free(copied);
    } else {
        GKPY_RUN(gkpy_long_work(a), gk_reshape(a, ndim, shape, &out));
    }
    /* copy=False: gk_reshape copies only when no view has the shape. A
     * view of a non-contiguous array stays non-contiguous (over the same
     * gaps or repeats), so a contiguous result of one is the copy. */
    if (status == GK_OK && copy == 0 && !gk_array_is_contiguous(a) &&
        gk_array_is_contiguous(out) && gk_array_size(a) > 1) {
        char text[200];
        PyErr_Format(PyExc_ValueError,
                     "reshape: an array of shape %s with these strides has no view of shape %R; "
                     "copy=False forbids the copy",
                     shape_text(a, text, sizeof text), values[1]);
        gk_array_free(out);
        Py_DECREF(array);
        return NULL;
    }
    Py_DECREF(array);
    return gkpy_array_result(state, status, out);
}

static const char *const permute_names[] = {"x", "axes", NULL};

static PyObject *fn_permute_dims(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const signature sig = {"permute_dims", permute_names, 2, 1, 2};
    PyObject *values[MAX_PARAMETERS];
    if (parse(&sig, args, nargs, kwnames, values) < 0)
        return NULL;
    PyObject *array = gkpy_as_array(state, values[0], NULL);
    if (!array)
        return NULL;
    const gk_array *a = array_of(array);
    int ndim = gk_array_ndim(a), axes[GK_MAX_DIMS];
    PyObject *result = NULL;
    PyObject *items = PySequence_Fast(values[1], "permute_dims(): axes must be a tuple of ints");
    if (!items)
        goto done;
    if (PySequence_Fast_GET_SIZE(items) != ndim) {
        char text[200];
        PyErr_Format(PyExc_ValueError,
                     "permute_dims: axes %R do not match the %d axes of shape %s", values[1],
                     ndim, shape_text(a, text, sizeof text));
        goto done;
    }
    for (int i = 0; i < ndim; i++)
        if (axis_value("permute_dims", PySequence_Fast_GET_ITEM(items, i), &axes[i]) < 0 ||
            normalize_axis(state, "permute_dims", a, axes[i], &axes[i]) < 0)
            goto done;
    gk_array *out = NULL;
    gk_status status = gk_transpose(a, axes, &out);
    result = gkpy_array_result(state, status, out);
done:
    Py_XDECREF(items);
    Py_DECREF(array);
    return result;
}

static PyObject *fn_broadcast_to(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "shape", NULL};
    static const signature sig = {"broadcast_to", names, 2, 1, 2};
    PyObject *values[MAX_PARAMETERS];
    if (parse(&sig, args, nargs, kwnames, values) < 0)
        return NULL;
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    if (shape_value("broadcast_to", values[1], &ndim, shape) < 0)
        return NULL;
    PyObject *array = gkpy_as_array(state, values[0], NULL);
    if (!array)
        return NULL;
    gk_array *out = NULL;
    gk_status status = gk_broadcast_to(array_of(array), ndim, shape, &out);
    Py_DECREF(array);
    return gkpy_array_result(state, status, out);
}

static PyObject *fn_matrix_transpose(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    if (gkpy_expect_args("matrix_transpose", nargs, 1) < 0)
        return NULL;
    PyObject *array = gkpy_as_array(state, args[0], NULL);
    if (!array)
        return NULL;
    const gk_array *a = array_of(array);
    int ndim = gk_array_ndim(a);
    if (ndim < 2) {
        char text[200];
        PyErr_Format(PyExc_ValueError,
                     "matrix_transpose: shape %s has %d axes; it needs 2 or more (a stack of "
                     "matrices)",
                     shape_text(a, text, sizeof text), ndim);
        Py_DECREF(array);
        return NULL;
    }
    gk_array *out = NULL;
    gk_status status = gk_matrix_transpose(a, &out);
    Py_DECREF(array);
    return gkpy_array_result(state, status, out);
}

/* --- random (gpukit.random keeps the seed sequence) --- */

/* _random_uniform / _random_normal (shape, a, b, seed, dtype, device). */
static PyObject *random_array(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                              bool normal)
{
    gkpy_state *state = gkpy_state_of_module(module);
    const char *function = normal ? "normal" : "uniform";
    if (gkpy_expect_args(normal ? "_random_normal" : "_random_uniform", nargs, 6) < 0)
        return NULL;
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    gk_dtype dtype = GK_FLOAT32;
    gk_device device;
    if (shape_value(function, args[0], &ndim, shape) < 0 ||
        (args[4] != Py_None && gkpy_dtype_from_object(state, args[4], &dtype) < 0) ||
        gkpy_device_from_object(state, args[5], &device) < 0)
        return NULL;
    double a = PyFloat_AsDouble(args[1]);
    if (a == -1.0 && PyErr_Occurred())
        return NULL;
    double b = PyFloat_AsDouble(args[2]);
    if (b == -1.0 && PyErr_Occurred())
        return NULL;
    unsigned long long seed = PyLong_AsUnsignedLongLong(args[3]);
    if (seed == (unsigned long long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: seed %R is outside 0 .. 2**64 - 1", function,
                         args[3]);
        }
        return NULL;
    }
    int64_t size = 1;
    for (int i = 0; i < ndim; i++)
        size *= shape[i] > 0 ? shape[i] : 0;
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(size >= GKPY_GIL_FREE_SIZE || device.kind != GK_DEVICE_CPU,
        normal ? gk_random_normal(device, dtype, ndim, shape, seed, a, b, &out)
               : gk_random_uniform(device, dtype, ndim, shape, seed, a, b, &out));
    return gkpy_array_result(state, status, out);
}

static PyObject *fn_random_uniform(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return random_array(module, args, nargs, false);
}

static PyObject *fn_random_normal(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return random_array(module, args, nargs, true);
}

/* --- tables --- */

#define FASTCALL(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL
#define KEYWORDS(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

#define BINARY_DOC(name, what)                                                                    \
    name "(x1, x2, /)\n--\n\n" what "\n\nx1 and x2 are Arrays, Python scalars (either side) or "  \
         "array-likes (converted onto the other operand's device); shapes broadcast as in "       \
         "NumPy. Both arrays must be on one device (ValueError otherwise). Promotion follows "    \
         "NumPy 2 (the array API's): a Python scalar is weak (int32 array + 2 is int32, + 2.5 "   \
         "is float64), and an integer that does not fit the array's dtype is an error. A "       \
         "dtype the function is not defined for is a TypeError."
#define UNARY_DOC(name, what)                                                                     \
    name "(x, /)\n--\n\n" what "\n\nx is an Array or an array-like (converted onto the default " \
         "device)."
#define AXIS_DOC                                                                                  \
    "axis: None (all elements), an int (negative counts from the end) or a tuple of ints; "      \
    "ValueError naming the shape when out of range. keepdims keeps the reduced axes with "       \
    "length 1."

static PyMethodDef ops_functions[] = {
    {"add", FASTCALL(fn_add), BINARY_DOC("add", "x1 + x2 elementwise (or of bools).")},
    {"subtract", FASTCALL(fn_subtract), BINARY_DOC("subtract", "x1 - x2 elementwise.")},
    {"multiply", FASTCALL(fn_multiply),
     BINARY_DOC("multiply", "x1 * x2 elementwise (and of bools).")},
    {"divide", FASTCALL(fn_divide),
     BINARY_DOC("divide", "x1 / x2 elementwise: true division (integers give float64).")},
    {"pow", FASTCALL(fn_pow),
     BINARY_DOC("pow", "x1 ** x2 elementwise; integer powers are exact (a negative exponent "
                       "gives 0, or 1 / -1 for a base of 1 / -1).")},
    {"maximum", FASTCALL(fn_maximum),
     BINARY_DOC("maximum", "The larger of x1 and x2 elementwise (NaN wins).")},
    {"minimum", FASTCALL(fn_minimum),
     BINARY_DOC("minimum", "The smaller of x1 and x2 elementwise (NaN wins).")},
    {"equal", FASTCALL(fn_equal), BINARY_DOC("equal", "x1 == x2 elementwise, as bool.")},
    {"not_equal", FASTCALL(fn_not_equal),
     BINARY_DOC("not_equal", "x1 != x2 elementwise, as bool.")},
    {"less", FASTCALL(fn_less), BINARY_DOC("less", "x1 < x2 elementwise, as bool.")},
    {"less_equal", FASTCALL(fn_less_equal),
     BINARY_DOC("less_equal", "x1 <= x2 elementwise, as bool.")},
    {"greater", FASTCALL(fn_greater), BINARY_DOC("greater", "x1 > x2 elementwise, as bool.")},
    {"greater_equal", FASTCALL(fn_greater_equal),
     BINARY_DOC("greater_equal", "x1 >= x2 elementwise, as bool.")},
    {"negative", FASTCALL(fn_negative),
     UNARY_DOC("negative", "-x elementwise (integers wrap; bool is a ValueError).")},
    {"abs", FASTCALL(fn_abs), UNARY_DOC("abs", "|x| elementwise, in x's dtype.")},
    {"exp", FASTCALL(fn_exp),
     UNARY_DOC("exp", "e ** x elementwise (integers give float32 up to 16 bits, else "
                     "float64).")},
    {"log", FASTCALL(fn_log),
     UNARY_DOC("log", "The natural logarithm elementwise (integers give float32 up to 16 "
                     "bits, else float64).")},
    {"sqrt", FASTCALL(fn_sqrt),
     UNARY_DOC("sqrt", "The square root elementwise (integers give float32 up to 16 bits, "
                      "else float64).")},
    {"sin", FASTCALL(fn_sin), UNARY_DOC("sin", "The sine elementwise, in radians.")},
    {"cos", FASTCALL(fn_cos), UNARY_DOC("cos", "The cosine elementwise, in radians.")},
    {"tanh", FASTCALL(fn_tanh), UNARY_DOC("tanh", "The hyperbolic tangent elementwise.")},
    {"tan", FASTCALL(fn_tan), UNARY_DOC("tan", "The tangent elementwise, in radians.")},
    {"asin", FASTCALL(fn_asin),
     UNARY_DOC("asin", "The inverse sine elementwise, in radians (NaN outside [-1, 1]).")},
    {"acos", FASTCALL(fn_acos),
     UNARY_DOC("acos", "The inverse cosine elementwise, in radians (NaN outside [-1, 1]).")},
    {"atan", FASTCALL(fn_atan), UNARY_DOC("atan", "The inverse tangent elementwise, in radians.")},
    {"sinh", FASTCALL(fn_sinh), UNARY_DOC("sinh", "The hyperbolic sine elementwise.")},
    {"cosh", FASTCALL(fn_cosh), UNARY_DOC("cosh", "The hyperbolic cosine elementwise.")},
    {"asinh", FASTCALL(fn_asinh),
     UNARY_DOC("asinh", "The inverse hyperbolic sine elementwise.")},
    {"acosh", FASTCALL(fn_acosh),
     UNARY_DOC("acosh", "The inverse hyperbolic cosine elementwise (NaN below 1).")},
    {"atanh", FASTCALL(fn_atanh),
     UNARY_DOC("atanh", "The inverse hyperbolic tangent elementwise (NaN outside [-1, 1], "
                        "+-inf at +-1).")},
    {"log1p", FASTCALL(fn_log1p),
     UNARY_DOC("log1p", "log(1 + x) elementwise, exact for x near 0.")},
    {"expm1", FASTCALL(fn_expm1),
     UNARY_DOC("expm1", "e ** x - 1 elementwise, exact for x near 0.")},
    {"sigmoid", FASTCALL(fn_sigmoid),
     UNARY_DOC("sigmoid", "1 / (1 + e ** -x) elementwise (as torch.sigmoid; not in the array "
                          "API standard).")},
    {"relu", FASTCALL(fn_relu),
     UNARY_DOC("relu", "max(x, 0) elementwise, in x's dtype (as torch.relu; not in the array "
                       "API standard).")},
    {"atan2", FASTCALL(fn_atan2),
     BINARY_DOC("atan2", "The angle of the point (x2, x1) elementwise, in radians in [-pi, pi] "
                         "(integers give float32 up to 16 bits, else float64).")},
    {"copysign", FASTCALL(fn_copysign),
     BINARY_DOC("copysign", "|x1| with the sign of x2 elementwise (-0.0 and NaN signs count).")},
    {"hypot", FASTCALL(fn_hypot),
     BINARY_DOC("hypot", "sqrt(x1 ** 2 + x2 ** 2) elementwise, without overflow or underflow "
                         "in between; inf when either is infinite, NaN before.")},
    {"logaddexp", FASTCALL(fn_logaddexp),
     BINARY_DOC("logaddexp", "log(exp(x1) + exp(x2)) elementwise, without overflow.")},
    {"nextafter", FASTCALL(fn_nextafter),
     BINARY_DOC("nextafter", "The next value of x1's dtype after x1 toward x2 elementwise (x2 "
                             "itself when equal).")},
    {"floor_divide", FASTCALL(fn_floor_divide),
     BINARY_DOC("floor_divide", "x1 // x2 elementwise: the quotient rounded down (Python's). "
                                "Integer division by zero gives 0; floats as NumPy (1.0 // 0.0 "
                                "is inf). Bools are a TypeError.")},
    {"remainder", FASTCALL(fn_remainder),
     BINARY_DOC("remainder", "x1 % x2 elementwise, with x2's sign (Python's). Integer division "
                             "by zero gives 0, float NaN. Bools are a TypeError.")},
    {"bitwise_and", FASTCALL(fn_bitwise_and),
     BINARY_DOC("bitwise_and", "x1 & x2 elementwise, for integers and bools (TypeError for "
                               "floats).")},
    {"bitwise_or", FASTCALL(fn_bitwise_or),
     BINARY_DOC("bitwise_or", "x1 | x2 elementwise, for integers and bools (TypeError for "
                              "floats).")},
    {"bitwise_xor", FASTCALL(fn_bitwise_xor),
     BINARY_DOC("bitwise_xor", "x1 ^ x2 elementwise, for integers and bools (TypeError for "
                               "floats).")},
    {"bitwise_left_shift", FASTCALL(fn_bitwise_left_shift),
     BINARY_DOC("bitwise_left_shift", "x1 << x2 elementwise, for integers (TypeError for bools "
                                      "and floats). A count at or beyond the bit width, or "
                                      "negative, gives 0 (NumPy's result).")},
    {"bitwise_right_shift", FASTCALL(fn_bitwise_right_shift),
     BINARY_DOC("bitwise_right_shift", "x1 >> x2 elementwise, arithmetic for signed integers "
                                       "(TypeError for bools and floats). A count at or beyond "
                                       "the bit width, or negative, gives 0, or -1 for a "
                                       "negative x1 (NumPy's result).")},
    {"logical_and", FASTCALL(fn_logical_and),
     BINARY_DOC("logical_and", "x1 and x2 elementwise, as bool (nonzero is true, NaN too).")},
    {"logical_or", FASTCALL(fn_logical_or),
     BINARY_DOC("logical_or", "x1 or x2 elementwise, as bool (nonzero is true, NaN too).")},
    {"logical_xor", FASTCALL(fn_logical_xor),
     BINARY_DOC("logical_xor", "Exactly one of x1 and x2 true, elementwise, as bool (nonzero "
                               "is true, NaN too).")},
    {"ceil", FASTCALL(fn_ceil),
     UNARY_DOC("ceil", "The smallest integer >= x elementwise, in x's dtype (integers and "
                       "bools unchanged).")},
    {"floor", FASTCALL(fn_floor),
     UNARY_DOC("floor", "The largest integer <= x elementwise, in x's dtype (integers and "
                        "bools unchanged).")},
    {"trunc", FASTCALL(fn_trunc),
     UNARY_DOC("trunc", "x rounded toward zero elementwise, in x's dtype (integers and bools "
                        "unchanged).")},
    {"round", KEYWORDS(fn_round),
     PyDoc_STR("round(x, /, *, decimals=0)\n--\n\nx rounded elementwise, halves to even, in "
               "x's dtype: to the nearest integer, or with decimals (NumPy's), to that many "
               "decimal places (negative: tens, hundreds ...), as x * 10**decimals rounded "
               "and divided back. Integers and bools are unchanged unless decimals < 0.\n\n"
               "x is an Array or an array-like (converted onto the default device).")},
    {"sign", FASTCALL(fn_sign),
     UNARY_DOC("sign", "-1, 0 or 1 by x's sign elementwise, in x's dtype (sign(-0.0) is 0.0, "
                       "sign(NaN) NaN; bools are a TypeError).")},
    {"signbit", FASTCALL(fn_signbit),
     UNARY_DOC("signbit", "Whether x's sign bit is set elementwise, as bool (True for -0.0 "
                          "and a negative NaN).")},
    {"isnan", FASTCALL(fn_isnan), UNARY_DOC("isnan", "Whether x is NaN elementwise, as bool.")},
    {"isinf", FASTCALL(fn_isinf),
     UNARY_DOC("isinf", "Whether x is +inf or -inf elementwise, as bool.")},
    {"isfinite", FASTCALL(fn_isfinite),
     UNARY_DOC("isfinite", "Whether x is neither infinite nor NaN elementwise, as bool.")},
    {"log2", FASTCALL(fn_log2),
     UNARY_DOC("log2", "The base-2 logarithm elementwise (integers give float32 up to 16 "
                       "bits, else float64).")},
    {"log10", FASTCALL(fn_log10),
     UNARY_DOC("log10", "The base-10 logarithm elementwise (integers give float32 up to 16 "
                        "bits, else float64).")},
    {"square", FASTCALL(fn_square),
     UNARY_DOC("square", "x * x elementwise, in x's dtype (integers wrap; bools are a "
                         "TypeError).")},
    {"positive", FASTCALL(fn_positive),
     UNARY_DOC("positive", "+x: a copy of x (bools are a TypeError).")},
    {"reciprocal", FASTCALL(fn_reciprocal),
     UNARY_DOC("reciprocal", "1 / x elementwise, in x's dtype (NumPy's function; integers: 1 / "
                             "x truncated, so 0 but for 1 and -1; bools are a TypeError).")},
    {"bitwise_invert", FASTCALL(fn_bitwise_invert),
     UNARY_DOC("bitwise_invert", "~x elementwise: every bit flipped for integers, not for "
                                 "bools (TypeError for floats).")},
    {"logical_not", FASTCALL(fn_logical_not),
     UNARY_DOC("logical_not", "not x elementwise, as bool (zero is false, everything else "
                              "true).")},
    {"conj", FASTCALL(fn_conj),
     UNARY_DOC("conj", "The complex conjugate: for real dtypes a copy of x.")},
    {"real", FASTCALL(fn_real), UNARY_DOC("real", "The real part: for real dtypes a copy of x.")},
    {"imag", FASTCALL(fn_imag),
     UNARY_DOC("imag", "The imaginary part: for real dtypes zeros of x's shape and dtype.")},
    {"where", FASTCALL(fn_where),
     "where(condition, x1, x2, /)\n--\n\nx1 where condition is True, else x2, elementwise; "
     "the three broadcast together. condition must be bool (compare first). x1 and x2 may be "
     "Python scalars, which count as 0-d arrays (an int32 array and 2.5 give float64)."},
    {"clip", KEYWORDS(fn_clip),
     "clip(x, /, min=None, max=None)\n--\n\nx with every element below min raised to min and "
     "every element above max lowered to max (minimum(maximum(x, min), max): with min > max "
     "every element is max). min and max are Python scalars, Arrays (broadcast against x) or "
     "None (no bound); a bound an integer dtype cannot reach clips nothing."},
    {"astype", KEYWORDS(fn_astype),
     "astype(x, dtype, /, *, copy=True, device=None)\n--\n\nx converted to dtype (and moved "
     "to device when given). With copy=False, x itself when its dtype and device already "
     "match."},
    {"matmul", FASTCALL(fn_matmul),
     "matmul(x1, x2, /)\n--\n\nThe matrix product x1 @ x2, as NumPy's matmul: 1-d operands "
     "are promoted to a matrix and the added axis removed; leading axes broadcast as a batch. "
     "Runs on the operands' device (cuBLAS on CUDA). Results are floating: integer operands "
     "are multiplied in float64."},
    {"sum", KEYWORDS(fn_sum),
     "sum(x, /, *, axis=None, dtype=None, keepdims=False)\n--\n\nThe sum of the elements "
     "over axis. " AXIS_DOC " Integers and bools sum to int64, floats in their own width "
     "(float32 sums are pairwise). dtype: the type to sum in (x is cast first)."},
    {"prod", KEYWORDS(fn_prod),
     "prod(x, /, *, axis=None, dtype=None, keepdims=False)\n--\n\nThe product of the "
     "elements over axis. " AXIS_DOC " Integers and bools multiply in int64 (wrapping). "
     "dtype: the type to multiply in (x is cast first)."},
    {"mean", KEYWORDS(fn_mean),
     "mean(x, /, *, axis=None, keepdims=False)\n--\n\nThe arithmetic mean over axis (NaN "
     "for no elements). " AXIS_DOC " Integers and bools give float64."},
    {"min", KEYWORDS(fn_min),
     "min(x, /, *, axis=None, keepdims=False)\n--\n\nThe smallest element over axis, in x's "
     "dtype. " AXIS_DOC " An empty reduction is a ValueError."},
    {"max", KEYWORDS(fn_max),
     "max(x, /, *, axis=None, keepdims=False)\n--\n\nThe largest element over axis, in x's "
     "dtype. " AXIS_DOC " An empty reduction is a ValueError."},
    {"argmin", KEYWORDS(fn_argmin),
     "argmin(x, /, *, axis=None, keepdims=False)\n--\n\nThe int64 index of the first "
     "smallest element along axis (an int), or into the flattened array with axis=None. An "
     "empty reduction is a ValueError."},
    {"argmax", KEYWORDS(fn_argmax),
     "argmax(x, /, *, axis=None, keepdims=False)\n--\n\nThe int64 index of the first "
     "largest element along axis (an int), or into the flattened array with axis=None. An "
     "empty reduction is a ValueError."},
    {"var", KEYWORDS(fn_var),
     "var(x, /, *, axis=None, correction=0.0, keepdims=False, ddof=None)\n--\n\nThe "
     "variance over axis: the squared deviations summed and divided by n - correction "
     "(correction=1 for the sample variance; NaN or inf when n - correction <= 0). " AXIS_DOC
     " ddof is NumPy's name for correction. Integers and bools give float64."},
    {"std", KEYWORDS(fn_std),
     "std(x, /, *, axis=None, correction=0.0, keepdims=False, ddof=None)\n--\n\nThe "
     "standard deviation over axis: the square root of var(x, axis=axis, "
     "correction=correction). " AXIS_DOC " ddof is NumPy's name for correction."},
    {"sort", KEYWORDS(fn_sort),
     "sort(x, /, *, axis=-1, descending=False, stable=True)\n--\n\nx sorted along axis, as a "
     "new array. Every sort is stable: equal elements keep their order, descending too. NaNs "
     "sort last ascending and first descending."},
    {"argsort", KEYWORDS(fn_argsort),
     "argsort(x, /, *, axis=-1, descending=False, stable=True)\n--\n\nThe int64 indices that "
     "sort x along axis (take_along_axis(x, argsort(x)) is sort(x)). Stable: equal elements "
     "keep their order, descending too."},
    {"cumulative_sum", KEYWORDS(fn_cumulative_sum),
     "cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False)\n--\n\nThe "
     "running sums along axis (required for arrays of 2 or more axes). Integers and bools "
     "give int64, floats their own dtype; dtype: the type to add in. include_initial puts a "
     "0 before the sums, so the axis grows by one."},
    {"cumsum", KEYWORDS(fn_cumsum),
     "cumsum(x, /, axis=None, *, dtype=None)\n--\n\nNumPy's cumsum: the running sums along "
     "axis, or over the flattened array (C order) when axis is None. See cumulative_sum."},
    {"reshape", KEYWORDS(fn_reshape),
     "reshape(x, /, shape, *, copy=None)\n--\n\nx with a new shape of the same size (one "
     "length may be -1: inferred). A view when the strides allow, else a copy; copy=True "
     "always copies, copy=False raises ValueError rather than copy."},
    {"permute_dims", KEYWORDS(fn_permute_dims),
     "permute_dims(x, /, axes)\n--\n\nA view of x with its axes reordered: axis i of the "
     "result is axis axes[i] of x (axes is a permutation of 0 .. ndim - 1)."},
    {"broadcast_to", KEYWORDS(fn_broadcast_to),
     "broadcast_to(x, /, shape)\n--\n\nA view of x stretched to shape (NumPy's "
     "broadcasting: axes of length 1 repeat, new axes go in front); its repeated elements "
     "share memory, so copy it before writing into it."},
    {"matrix_transpose", FASTCALL(fn_matrix_transpose),
     "matrix_transpose(x, /)\n--\n\nA view of x with its last two axes swapped (each matrix "
     "of a stack transposed). x needs 2 or more axes."},
    {"_random_uniform", FASTCALL(fn_random_uniform),
     "_random_uniform(shape, low, high, seed, dtype, device, /)\n--\n\nThe C half of "
     "gpukit.random.uniform (Philox4x32-10: the same seed gives the same numbers on every "
     "device)."},
    {"_random_normal", FASTCALL(fn_random_normal),
     "_random_normal(shape, mean, std, seed, dtype, device, /)\n--\n\nThe C half of "
     "gpukit.random.normal."},
    {NULL, NULL, 0, NULL},
};

#define METHOD_AXIS_DOC                                                                           \
    "axis: None (all elements), an int or a tuple of ints. keepdims keeps the reduced axes "     \
    "with length 1."

PyMethodDef gkpy_ops_array_methods[] = {
    {"sum", KEYWORDS(method_sum),
     "sum($self, /, axis=None, *, dtype=None, keepdims=False)\n--\n\nThe sum of the elements "
     "over axis (gpukit.sum). " METHOD_AXIS_DOC},
    {"prod", KEYWORDS(method_prod),
     "prod($self, /, axis=None, *, dtype=None, keepdims=False)\n--\n\nThe product of the "
     "elements over axis (gpukit.prod). " METHOD_AXIS_DOC},
    {"mean", KEYWORDS(method_mean),
     "mean($self, /, axis=None, *, keepdims=False)\n--\n\nThe mean over axis (gpukit.mean). "
     METHOD_AXIS_DOC},
    {"min", KEYWORDS(method_min),
     "min($self, /, axis=None, *, keepdims=False)\n--\n\nThe smallest element over axis "
     "(gpukit.min). " METHOD_AXIS_DOC},
    {"max", KEYWORDS(method_max),
     "max($self, /, axis=None, *, keepdims=False)\n--\n\nThe largest element over axis "
     "(gpukit.max). " METHOD_AXIS_DOC},
    {"argmin", KEYWORDS(method_argmin),
     "argmin($self, /, axis=None, *, keepdims=False)\n--\n\nThe index of the first smallest "
     "element along axis (an int or None: flattened; gpukit.argmin)."},
    {"argmax", KEYWORDS(method_argmax),
     "argmax($self, /, axis=None, *, keepdims=False)\n--\n\nThe index of the first largest "
     "element along axis (an int or None: flattened; gpukit.argmax)."},
    {"var", KEYWORDS(method_var),
     "var($self, /, axis=None, *, correction=0.0, keepdims=False, ddof=None)\n--\n\nThe "
     "variance over axis, divided by n - correction (ddof: NumPy's name; gpukit.var). "
     METHOD_AXIS_DOC},
    {"std", KEYWORDS(method_std),
     "std($self, /, axis=None, *, correction=0.0, keepdims=False, ddof=None)\n--\n\nThe "
     "standard deviation over axis (gpukit.std). " METHOD_AXIS_DOC},
    {"sort", KEYWORDS(method_sort),
     "sort($self, /, axis=-1, *, descending=False, stable=True)\n--\n\nSorts the array in "
     "place along axis and returns None, as NumPy's and CuPy's ndarray.sort(); "
     "gpukit.sort(x) returns a sorted copy instead. Stable, descending too."},
    {"argsort", KEYWORDS(method_argsort),
     "argsort($self, /, axis=-1, *, descending=False, stable=True)\n--\n\nThe int64 indices "
     "that sort the array along axis, stably (gpukit.argsort)."},
    {"round", KEYWORDS(method_round),
     "round($self, /, decimals=0)\n--\n\nThe elements rounded half to even to decimals "
     "decimal places (gpukit.round; NumPy's ndarray.round)."},
    {"__round__", KEYWORDS(method___round__),
     "__round__($self, /, ndigits=None)\n--\n\nround(x, ndigits): x.round(ndigits), an "
     "array (NumPy's)."},
    {"cumsum", KEYWORDS(method_cumsum),
     "cumsum($self, /, axis=None, dtype=None)\n--\n\nThe running sums along axis, or over "
     "the flattened array when axis is None (gpukit.cumsum)."},
    {NULL, NULL, 0, NULL},
};

int gkpy_ops_init(PyObject *module, gkpy_state *state)
{
    (void)state;
    return PyModule_AddFunctions(module, ops_functions);
}
