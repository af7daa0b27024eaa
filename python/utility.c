/* The rest of the array API's main namespace: meshgrid, tril, triu,
 * tensordot, vecdot, cumulative_prod, all, any, diff, and the constants
 * (e, inf, nan, pi, newaxis, __array_api_version__); and the C halves of
 * the linalg extension's views, norms and stacked functions (diagonal,
 * trace, outer, cross, vector_norm, matrix_norm, matrix_rank,
 * pinv, matrix_power), which gpukit.linalg wraps. Argument parsing over
 * the library's calls (array.h: utility.c, contract.c, sort.c), one C call
 * each, the GIL released for long work. */
#include "gkpy.h"

#include "interop.h"

#include <math.h>

#define FASTCALL(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL
#define KEYWORDS(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

/* The version of the standard this namespace follows. */
#define ARRAY_API_VERSION "2025.12"

/* --- arguments --- */

static int parse(const char *function, PyObject *const *args, Py_ssize_t nargs,
                 PyObject *kwnames, const char *const *names, int positional_only,
                 int positional, int required, PyObject **values)
{
    int count = 0;
    while (names[count])
        count++;
    return gkpy_parse_args(function, args, nargs, kwnames, names, count, positional_only,
                           positional, required, values);
}

/* One int (not a bool) into *out; -1 with TypeError naming `what`. */
static int int_value(const char *function, const char *what, PyObject *object, int64_t *out)
{
    if (!PyIndex_Check(object) || PyBool_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s(): %s must be an int, not %.100s", function, what,
                     Py_TYPE(object)->tp_name);
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
    if (overflow) {
        PyErr_Format(PyExc_OverflowError, "%s(): %s %R does not fit in 64 bits", function, what,
                     object);
        return -1;
    }
    *out = value;
    return 0;
}

/* An axis: an int, clamped far outside any array's axes so the library's
 * range check names the shape. */
static int axis_value(const char *function, PyObject *object, int *axis)
{
    int64_t value;
    if (int_value(function, "axis", object, &value) < 0)
        return -1;
    *axis = value < -100 ? -100 : value > 100 ? 100 : (int)value;
    return 0;
}

/* A sequence of axes (a tuple or list of ints, or one int) into axes[];
 * *count of them. */
static int axes_value(const char *function, const char *what, PyObject *object, int *count,
                      int *axes)
{
    if (PyIndex_Check(object)) {
        *count = 1;
        return axis_value(function, object, &axes[0]);
    }
    if (!PyTuple_Check(object) && !PyList_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s(): %s must be an int or a sequence of ints, not %.100s",
                     function, what, Py_TYPE(object)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Size(object);
    if (n > GK_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s(): %s has %zd axes; arrays have at most %d",
                     function, what, n, GK_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_GetItem(object, i);
        int failed = !item || axis_value(function, item, &axes[i]) < 0;
        Py_XDECREF(item);
        if (failed)
            return -1;
    }
    *count = (int)n;
    return 0;
}

/* A keepdims-like flag (absent: false); -1 with an exception. */
static int flag(PyObject *value)
{
    return value ? PyObject_IsTrue(value) : 0;
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

/* A tuple of `count` new Arrays (all freed if it cannot be made). */
static PyObject *array_tuple(gkpy_state *state, gk_array **parts, Py_ssize_t count)
{
    PyObject *tuple = PyTuple_New(count);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = tuple ? gkpy_array_wrap(state, parts[i]) : NULL;
        if (!tuple)
            gk_array_free(parts[i]);
        else if (!item)
            Py_CLEAR(tuple);
        else
            PyTuple_SET_ITEM(tuple, i, item);
        parts[i] = NULL;
    }
    return tuple;
}

/* --- creation: meshgrid, tril, triu --- */

static PyObject *fn_meshgrid(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    /* The arrays are all positional; indexing and copy only by name. */
    PyObject *indexing = NULL, *copy_argument = NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        if (PyUnicode_CompareWithASCIIString(name, "indexing") == 0) {
            indexing = args[nargs + k];
        } else if (PyUnicode_CompareWithASCIIString(name, "copy") == 0) {
            copy_argument = args[nargs + k];
        } else {
            PyErr_Format(PyExc_TypeError, "meshgrid() got an unexpected keyword argument '%U'",
                         name);
            return NULL;
        }
    }
    int copy = copy_argument ? gkpy_copy_truth(copy_argument) : 1;
    if (copy < 0)
        return NULL;
    bool xy = true;
    if (indexing) {
        if (!PyUnicode_Check(indexing)) {
            PyErr_Format(PyExc_TypeError, "meshgrid(): indexing must be 'xy' or 'ij', not %.100s",
                         Py_TYPE(indexing)->tp_name);
            return NULL;
        }
        xy = PyUnicode_CompareWithASCIIString(indexing, "xy") == 0;
        if (!xy && PyUnicode_CompareWithASCIIString(indexing, "ij") != 0) {
            PyErr_Format(PyExc_ValueError, "meshgrid(): indexing must be 'xy' or 'ij', not %R",
                         indexing);
            return NULL;
        }
    }
    if (nargs > GK_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "meshgrid(): %zd arrays; the grid can have at most %d axes",
                     nargs, GK_MAX_DIMS);
        return NULL;
    }
    PyObject *held[GK_MAX_DIMS], *near = NULL;
    const gk_array *arrays[GK_MAX_DIMS];
    for (Py_ssize_t i = 0; i < nargs && !near; i++)
        if (gkpy_is_array(state, args[i]))
            near = args[i];
    for (Py_ssize_t i = 0; i < nargs; i++) {
        held[i] = gkpy_as_array(state, args[i], near);
        if (!held[i]) {
            for (Py_ssize_t j = 0; j < i; j++)
                Py_DECREF(held[j]);
            return NULL;
        }
        arrays[i] = array_of(held[i]);
    }
    /* Copies are long work on a device, or of a large grid. */
    double cells = 1;
    for (Py_ssize_t i = 0; i < nargs; i++)
        cells *= (double)gk_array_size(arrays[i]);
    bool release = nargs > 0 && copy &&
                   (gk_array_device(arrays[0]).kind != GK_DEVICE_CPU ||
                    cells * (double)nargs >= GKPY_GIL_FREE_SIZE);
    gk_array *grids[GK_MAX_DIMS];
    gk_status status;
    GKPY_RUN(release, gk_meshgrid((int)nargs, arrays, xy, copy, grids));
    for (Py_ssize_t i = 0; i < nargs; i++)
        Py_DECREF(held[i]);
    return status == GK_OK ? array_tuple(state, grids, nargs) : gkpy_raise(state, status);
}

static PyObject *triangle(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames, const char *function, bool lower)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "k", NULL};
    PyObject *values[2];
    int64_t k = 0;
    if (parse(function, args, nargs, kwnames, names, 1, 1, 1, values) < 0 ||
        (values[1] && int_value(function, "k", values[1], &k) < 0))
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    const gk_array *a = array_of(x);
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(a), lower ? gk_tril(a, k, &out) : gk_triu(a, k, &out));
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

static PyObject *fn_tril(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    return triangle(module, args, nargs, kwnames, "tril", true);
}

static PyObject *fn_triu(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    return triangle(module, args, nargs, kwnames, "triu", false);
}

/* --- linear algebra: tensordot, vecdot --- */

/* tensordot's axes: an int N (the last N axes of x1 with the first N of
 * x2) or a pair of sequences (or ints) of axes, into the lists. */
static int tensordot_axes(PyObject *object, const gk_array *a, const gk_array *b, int *count,
                          int *a_axes, int *b_axes)
{
    if (PyIndex_Check(object)) {
        int64_t n;
        if (int_value("tensordot", "axes", object, &n) < 0)
            return -1;
        int ndim_a = gk_array_ndim(a), ndim_b = gk_array_ndim(b);
        if (n < 0 || n > ndim_a || n > ndim_b) {
            char sa[200], sb[200];
            PyErr_Format(PyExc_ValueError,
                         "tensordot(): axes=%lld, but x1 has shape %s and x2 %s; it must be "
                         "0 up to the smaller number of axes",
                         (long long)n, shape_text(a, sa, sizeof sa), shape_text(b, sb, sizeof sb));
            return -1;
        }
        for (int i = 0; i < (int)n; i++) {
            a_axes[i] = ndim_a - (int)n + i;
            b_axes[i] = i;
        }
        *count = (int)n;
        return 0;
    }
    if ((!PyTuple_Check(object) && !PyList_Check(object)) || PySequence_Size(object) != 2) {
        PyErr_Format(PyExc_TypeError,
                     "tensordot(): axes must be an int or a pair of sequences of axes, not "
                     "%.100s",
                     Py_TYPE(object)->tp_name);
        return -1;
    }
    PyObject *first = PySequence_GetItem(object, 0), *second = PySequence_GetItem(object, 1);
    int a_count = 0, b_count = 0;
    int failed = !first || !second ||
                 axes_value("tensordot", "axes[0]", first, &a_count, a_axes) < 0 ||
                 axes_value("tensordot", "axes[1]", second, &b_count, b_axes) < 0;
    Py_XDECREF(first);
    Py_XDECREF(second);
    if (failed)
        return -1;
    if (a_count != b_count) {
        PyErr_Format(PyExc_ValueError,
                     "tensordot(): axes lists %d axes of x1 and %d of x2; they pair up, so "
                     "they must be as many",
                     a_count, b_count);
        return -1;
    }
    *count = a_count;
    return 0;
}

static PyObject *fn_tensordot(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x1", "x2", "axes", NULL};
    PyObject *values[3], *pair[2];
    if (parse("tensordot", args, nargs, kwnames, names, 2, 2, 2, values) < 0 ||
        gkpy_as_pair(state, values[0], values[1], pair) < 0)
        return NULL;
    const gk_array *a = array_of(pair[0]), *b = array_of(pair[1]);
    int count = 2, a_axes[GK_MAX_DIMS], b_axes[GK_MAX_DIMS];
    PyObject *result = NULL;
    PyObject *two = values[2] ? NULL : PyLong_FromLong(2);
    if ((values[2] || two) &&
        tensordot_axes(values[2] ? values[2] : two, a, b, &count, a_axes, b_axes) == 0) {
        gk_array *out = NULL;
        gk_status status;
        GKPY_RUN(true, gk_tensordot(a, b, count, a_axes, b_axes, &out));
        result = gkpy_array_result(state, status, out);
    }
    Py_XDECREF(two);
    Py_DECREF(pair[0]);
    Py_DECREF(pair[1]);
    return result;
}

static PyObject *fn_vecdot(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x1", "x2", "axis", NULL};
    PyObject *values[3], *pair[2];
    int axis = -1;
    if (parse("vecdot", args, nargs, kwnames, names, 2, 2, 2, values) < 0 ||
        (values[2] && axis_value("vecdot", values[2], &axis) < 0) ||
        gkpy_as_pair(state, values[0], values[1], pair) < 0)
        return NULL;
    const gk_array *a = array_of(pair[0]), *b = array_of(pair[1]);
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(a) || gkpy_long_work(b), gk_vecdot(a, b, axis, &out));
    Py_DECREF(pair[0]);
    Py_DECREF(pair[1]);
    return gkpy_array_result(state, status, out);
}

/* --- statistics: cumulative_prod --- */

static PyObject *fn_cumulative_prod(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "axis", "dtype", "include_initial", NULL};
    PyObject *values[4];
    if (parse("cumulative_prod", args, nargs, kwnames, names, 1, 1, 1, values) < 0)
        return NULL;
    int axis = GK_ALL_AXES, initial = flag(values[3]);
    gk_dtype dtype = GK_FLOAT32;
    int cast = gkpy_optional_dtype(state, values[2], &dtype);
    if (initial < 0 || cast < 0 ||
        (values[1] && values[1] != Py_None && axis_value("cumulative_prod", values[1], &axis) < 0))
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    const gk_array *a = array_of(x);
    if (axis == GK_ALL_AXES && gk_array_ndim(a) > 1) {
        /* The standard: the axis is optional only for 1-d (and 0-d) x. */
        char shape[200];
        PyErr_Format(PyExc_ValueError,
                     "cumulative_prod: axis must be given for a %d-d array (shape %s)",
                     gk_array_ndim(a), shape_text(a, shape, sizeof shape));
        Py_DECREF(x);
        return NULL;
    }
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(a),
             gk_cumulative(GK_PROD, a, axis, cast ? &dtype : NULL, initial, &out));
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

/* --- utility: all, any, diff --- */

static PyObject *truth(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames, const char *function, bool every)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "axis", "keepdims", NULL};
    PyObject *values[3];
    if (parse(function, args, nargs, kwnames, names, 1, 1, 1, values) < 0)
        return NULL;
    int keepdims = flag(values[2]), count = 0, axes[GK_MAX_DIMS];
    bool all_axes = !values[1] || values[1] == Py_None;
    if (keepdims < 0 || (!all_axes && axes_value(function, "axis", values[1], &count, axes) < 0))
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    const gk_array *a = array_of(x);
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(a), every ? gk_all(a, count, all_axes ? NULL : axes, keepdims, &out)
                                      : gk_any(a, count, all_axes ? NULL : axes, keepdims, &out));
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

static PyObject *fn_all(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames)
{
    return truth(module, args, nargs, kwnames, "all", true);
}

static PyObject *fn_any(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames)
{
    return truth(module, args, nargs, kwnames, "any", false);
}

/* diff's prepend/append beside the Array x: NULL when absent or None;
 * Python numbers weak (gkpy_scalar_array: a 0-d array of the dtype they
 * take beside x), anything else through asarray on x's device. *failed
 * is set on error. A new gk_array handle the caller frees. */
static gk_array *edge(gkpy_state *state, PyObject *x, PyObject *value, bool *failed)
{
    if (!value || value == Py_None)
        return NULL;
    gk_array *out = NULL;
    if (PyBool_Check(value) || PyLong_CheckExact(value) || PyFloat_CheckExact(value)) {
        if (gkpy_scalar_array(state, array_of(x), value, GK_OP_COUNT, &out) < 0)
            *failed = true;
        return out;
    }
    PyObject *array = gkpy_as_array(state, value, x);
    if (!array) {
        *failed = true;
        return NULL;
    }
    gk_status status = gkpy_new_handle(array_of(array), &out);
    Py_DECREF(array);
    if (status != GK_OK) {
        gkpy_raise(state, status);
        *failed = true;
    }
    return out;
}

static PyObject *fn_diff(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "axis", "n", "prepend", "append", NULL};
    PyObject *values[5];
    int axis = -1;
    int64_t n = 1;
    if (parse("diff", args, nargs, kwnames, names, 1, 1, 1, values) < 0 ||
        (values[1] && axis_value("diff", values[1], &axis) < 0) ||
        (values[2] && int_value("diff", "n", values[2], &n) < 0))
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    bool failed = false;
    gk_array *prepend = edge(state, x, values[3], &failed);
    gk_array *append = failed ? NULL : edge(state, x, values[4], &failed);
    PyObject *result = NULL;
    if (!failed) {
        const gk_array *a = array_of(x);
        gk_array *out = NULL;
        gk_status status;
        GKPY_RUN(gkpy_long_work(a), gk_diff(a, axis, n, prepend, append, &out));
        result = gkpy_array_result(state, status, out);
    }
    gk_array_free(prepend);
    gk_array_free(append);
    Py_DECREF(x);
    return result;
}

/* --- the linalg extension's views and norms (gpukit.linalg wraps these,
 * positional arguments in the standard's order) --- */

/* _linalg_diagonal(x, offset) and _linalg_trace(x, offset) */
static PyObject *diagonal_or_trace(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                   const char *function, bool trace)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "offset", NULL};
    PyObject *values[2];
    int64_t offset = 0;
    if (parse(function, args, nargs, NULL, names, 2, 2, 2, values) < 0 ||
        int_value(function, "offset", values[1], &offset) < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    if (trace) {
        GKPY_RUN(gkpy_long_work(array_of(x)), gk_trace(array_of(x), offset, &out));
    } else {
        status = gk_diagonal(array_of(x), offset, &out);
    }
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

static PyObject *fn_linalg_diagonal(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return diagonal_or_trace(module, args, nargs, "diagonal", false);
}

static PyObject *fn_linalg_trace(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return diagonal_or_trace(module, args, nargs, "trace", true);
}

/* _linalg_outer(x1, x2) and _linalg_cross(x1, x2, axis) */
static PyObject *fn_linalg_outer(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x1", "x2", NULL};
    PyObject *values[2], *pair[2];
    if (parse("outer", args, nargs, NULL, names, 2, 2, 2, values) < 0 ||
        gkpy_as_pair(state, values[0], values[1], pair) < 0)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(false, gk_outer(array_of(pair[0]), array_of(pair[1]), &out));
    Py_DECREF(pair[0]);
    Py_DECREF(pair[1]);
    return gkpy_array_result(state, status, out);
}

static PyObject *fn_linalg_cross(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x1", "x2", "axis", NULL};
    PyObject *values[3], *pair[2];
    int axis = -1;
    if (parse("cross", args, nargs, NULL, names, 3, 3, 3, values) < 0 ||
        axis_value("cross", values[2], &axis) < 0 ||
        gkpy_as_pair(state, values[0], values[1], pair) < 0)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(false, gk_cross(array_of(pair[0]), array_of(pair[1]), axis, &out));
    Py_DECREF(pair[0]);
    Py_DECREF(pair[1]);
    return gkpy_array_result(state, status, out);
}

/* A number (an int, NumPy's too, or a float; not a bool) into *value; -1
 * with TypeError naming `what`. */
static int number_value(const char *function, const char *what, PyObject *object,
                        double *value)
{
    bool integer = PyIndex_Check(object) && !PySequence_Check(object);
    if (PyBool_Check(object) || !(integer || PyFloat_Check(object))) {
        PyErr_Format(PyExc_TypeError, "%s(): %s must be an int or a float, not %.100s",
                     function, what, Py_TYPE(object)->tp_name);
        return -1;
    }
    *value = PyFloat_AsDouble(object);
    return *value == -1 && PyErr_Occurred() ? -1 : 0;
}

/* _linalg_vector_norm(x, axis, keepdims, ord) */
static PyObject *fn_linalg_vector_norm(PyObject *module, PyObject *const *args,
                                       Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "axis", "keepdims", "ord", NULL};
    PyObject *values[4];
    int axes[GK_MAX_DIMS], naxes = 0, keepdims;
    double ord = 2;
    if (parse("vector_norm", args, nargs, NULL, names, 4, 4, 4, values) < 0 ||
        (values[1] != Py_None && axes_value("vector_norm", "axis", values[1], &naxes, axes) < 0) ||
        (keepdims = flag(values[2])) < 0 || number_value("vector_norm", "ord", values[3], &ord) < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    const gk_array *a = array_of(x);
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(a),
             gk_vector_norm(a, naxes, values[1] == Py_None ? NULL : axes, ord, keepdims, &out));
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

/* _linalg_matrix_norm(x, keepdims, ord): ord 'fro' (or None), 'nuc', +-1, +-2, +-inf */
static PyObject *fn_linalg_matrix_norm(PyObject *module, PyObject *const *args,
                                       Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "keepdims", "ord", NULL};
    PyObject *values[3];
    int keepdims;
    if (parse("matrix_norm", args, nargs, NULL, names, 3, 3, 3, values) < 0 ||
        (keepdims = flag(values[1])) < 0)
        return NULL;
    gk_matrix_norm_kind kind = GK_NORM_COUNT;
    PyObject *ord = values[2];
    double number = 0;
    if (ord == Py_None) { /* the standard's ord is Optional: None is the default, as NumPy's */
        kind = GK_NORM_FROBENIUS;
    } else if (PyUnicode_Check(ord)) {
        if (PyUnicode_CompareWithASCIIString(ord, "fro") == 0)
            kind = GK_NORM_FROBENIUS;
        else if (PyUnicode_CompareWithASCIIString(ord, "nuc") == 0)
            kind = GK_NORM_NUCLEAR;
    } else if (number_value("matrix_norm", "ord", ord, &number) < 0) {
        return NULL;
    } else {
        kind = number == 1           ? GK_NORM_MAX_COLUMN_SUM
               : number == -1        ? GK_NORM_MIN_COLUMN_SUM
               : number == 2         ? GK_NORM_LARGEST_SINGULAR
               : number == -2        ? GK_NORM_SMALLEST_SINGULAR
               : number == INFINITY  ? GK_NORM_MAX_ROW_SUM
               : number == -INFINITY ? GK_NORM_MIN_ROW_SUM
                                     : GK_NORM_COUNT;
    }
    if (kind == GK_NORM_COUNT) {
        PyErr_Format(PyExc_ValueError,
                     "matrix_norm(): ord is %R; it must be 'fro', 'nuc', 1, -1, 2, -2, inf or "
                     "-inf",
                     ord);
        return NULL;
    }
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    const gk_array *a = array_of(x);
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(a), gk_matrix_norm(a, kind, keepdims, &out));
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

/* _linalg_matrix_rank(x, rtol) and _linalg_pinv(x, rtol): rtol None (the
 * library's default), a number, or an array broadcasting with x's batch. */
static PyObject *with_rtol(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           const char *function,
                           gk_status (*call)(const gk_array *, const gk_array *, gk_array **))
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "rtol", NULL};
    PyObject *values[2];
    if (parse(function, args, nargs, NULL, names, 2, 2, 2, values) < 0)
        return NULL;
    PyObject *rtol = values[1];
    if (rtol != Py_None && !gkpy_is_array(state, rtol) &&
        (PyBool_Check(rtol) || !(PyFloat_Check(rtol) || PyIndex_Check(rtol)))) {
        PyErr_Format(PyExc_TypeError, "%s(): rtol must be None, a number or an array, not %.100s",
                     function, Py_TYPE(rtol)->tp_name);
        return NULL;
    }
    PyObject *pair[2] = {NULL, NULL};
    if (rtol == Py_None ? !(pair[0] = gkpy_as_array(state, values[0], NULL))
                        : gkpy_as_pair(state, values[0], rtol, pair) < 0)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(true, call(array_of(pair[0]), pair[1] ? array_of(pair[1]) : NULL, &out));
    Py_DECREF(pair[0]);
    Py_XDECREF(pair[1]);
    return gkpy_array_result(state, status, out);
}

static PyObject *fn_linalg_matrix_rank(PyObject *module, PyObject *const *args,
                                       Py_ssize_t nargs)
{
    return with_rtol(module, args, nargs, "matrix_rank", gk_matrix_rank);
}

static PyObject *fn_linalg_pinv(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return with_rtol(module, args, nargs, "pinv", gk_pinv);
}

/* _linalg_matrix_power(x, n) */
static PyObject *fn_linalg_matrix_power(PyObject *module, PyObject *const *args,
                                        Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "n", NULL};
    PyObject *values[2];
    int64_t n = 0;
    if (parse("matrix_power", args, nargs, NULL, names, 2, 2, 2, values) < 0 ||
        int_value("matrix_power", "n", values[1], &n) < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(true, gk_matrix_power(array_of(x), n, &out));
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

static PyMethodDef utility_functions[] = {
    {"_linalg_matrix_rank", FASTCALL(fn_linalg_matrix_rank),
     "gpukit.linalg.matrix_rank's C half."},
    {"_linalg_pinv", FASTCALL(fn_linalg_pinv), "gpukit.linalg.pinv's C half."},
    {"_linalg_matrix_power", FASTCALL(fn_linalg_matrix_power),
     "gpukit.linalg.matrix_power's C half."},
    {"_linalg_diagonal", FASTCALL(fn_linalg_diagonal), "gpukit.linalg.diagonal's C half."},
    {"_linalg_trace", FASTCALL(fn_linalg_trace), "gpukit.linalg.trace's C half."},
    {"_linalg_outer", FASTCALL(fn_linalg_outer), "gpukit.linalg.outer's C half."},
    {"_linalg_cross", FASTCALL(fn_linalg_cross), "gpukit.linalg.cross's C half."},
    {"_linalg_vector_norm", FASTCALL(fn_linalg_vector_norm),
     "gpukit.linalg.vector_norm's C half."},
    {"_linalg_matrix_norm", FASTCALL(fn_linalg_matrix_norm),
     "gpukit.linalg.matrix_norm's C half."},
    {"meshgrid", KEYWORDS(fn_meshgrid),
     "meshgrid(*arrays, indexing='xy', copy=True)\n--\n\nCoordinate grids from 1-d arrays "
     "(others are flattened): a tuple of one array per input, each of the grid's shape, "
     "holding its input along its own axis ('ij'; 'xy', the default, swaps the first two "
     "axes). copy=False gives broadcast views of the inputs instead of copies (NumPy's "
     "copy=False): they share the inputs' memory."},
    {"tril", KEYWORDS(fn_tril),
     "tril(x, /, *, k=0)\n--\n\nThe lower triangle of each matrix over x's last two axes: "
     "elements above the k-th diagonal are 0."},
    {"triu", KEYWORDS(fn_triu),
     "triu(x, /, *, k=0)\n--\n\nThe upper triangle of each matrix over x's last two axes: "
     "elements below the k-th diagonal are 0."},
    {"tensordot", KEYWORDS(fn_tensordot),
     "tensordot(x1, x2, /, *, axes=2)\n--\n\nThe tensor contraction of x1 and x2 over axes: an "
     "int N (x1's last N axes with x2's first N) or a pair of sequences of axes. The result has "
     "x1's other axes, then x2's."},
    {"vecdot", KEYWORDS(fn_vecdot),
     "vecdot(x1, x2, /, *, axis=-1)\n--\n\nThe dot products of the vectors along axis of x1 and "
     "x2 broadcast together (the axis itself does not broadcast)."},
    {"cumulative_prod", KEYWORDS(fn_cumulative_prod),
     "cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False)\n--\n\nThe "
     "cumulative product along axis (needed beyond 1-d), computed in dtype when given "
     "(integers: int64, unsigned uint64); include_initial puts a 1 first."},
    {"all", KEYWORDS(fn_all),
     "all(x, /, *, axis=None, keepdims=False)\n--\n\nWhether every element is nonzero (NaN "
     "is) over axis (an int, a tuple or None), as bool."},
    {"any", KEYWORDS(fn_any),
     "any(x, /, *, axis=None, keepdims=False)\n--\n\nWhether some element is nonzero (NaN "
     "is) over axis (an int, a tuple or None), as bool."},
    {"diff", KEYWORDS(fn_diff),
     "diff(x, /, *, axis=-1, n=1, prepend=None, append=None)\n--\n\nThe n-th discrete "
     "difference along axis (bool: not_equal), after joining prepend and append (arrays, or "
     "numbers broadcast across the other axes) to x along it."},
    {NULL, NULL, 0, NULL},
};

int gkpy_utility_init(PyObject *module, gkpy_state *state)
{
    (void)state;
    if (PyModule_AddFunctions(module, utility_functions) < 0 ||
        PyModule_AddStringConstant(module, "__array_api_version__", ARRAY_API_VERSION) < 0 ||
        PyModule_AddObjectRef(module, "newaxis", Py_None) < 0)
        return -1;
    const struct {
        const char *name;
        double value;
    } constants[] = {
        /* Python's math.e and math.pi: these decimals round to the same
         * doubles. */
        {"e", 2.718281828459045},
        {"pi", 3.141592653589793},
        {"inf", INFINITY},
        {"nan", NAN},
    };
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++) {
        PyObject *value = PyFloat_FromDouble(constants[i].value);
        int failed = !value || PyModule_AddObjectRef(module, constants[i].name, value) < 0;
        Py_XDECREF(value);
        if (failed)
            return -1;
    }
    return 0;
}
