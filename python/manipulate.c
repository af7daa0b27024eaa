/* The array API's manipulation, indexing, searching and set functions
 * (concat ... broadcast_shapes, take, take_along_axis, searchsorted,
 * nonzero, count_nonzero, unique_*, isin): argument parsing over the
 * library's calls (array.h: manipulate.c, index.c, sets.c), one C call
 * each, the GIL released for long work. */
#include "gkpy.h"

#include "interop.h"

#include <structmember.h>

#define FASTCALL(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL
#define KEYWORDS(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

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
    *out = PyLong_AsLongLong(object);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* An int or a tuple/list of ints into values[] (at most GK_MAX_DIMS);
 * *count is how many, *single whether it was one int. -1 on error. */
static int ints_value(const char *function, const char *what, PyObject *object, int *count,
                      int64_t *values, bool *single)
{
    if (single)
        *single = PyIndex_Check(object);
    if (PyIndex_Check(object)) {
        *count = 1;
        return int_value(function, what, object, &values[0]);
    }
    if (!PyTuple_Check(object) && !PyList_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s(): %s must be an int or a tuple of ints, not %.100s",
                     function, what, Py_TYPE(object)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(object);
    if (n > GK_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s(): %s has %zd entries; arrays have at most %d axes",
                     function, what, n, GK_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (int_value(function, what, PySequence_Fast_GET_ITEM(object, i), &values[i]) < 0)
            return -1;
    *count = (int)n;
    return 0;
}

/* Axes (an int or a tuple of ints) as ints, clamped far outside any array's
 * axes so the library's range check names the shape. */
static int axes_value(const char *function, PyObject *object, int *count, int *axes)
{
    int64_t values[GK_MAX_DIMS];
    if (ints_value(function, "axis", object, count, values, NULL) < 0)
        return -1;
    for (int i = 0; i < *count; i++)
        axes[i] = values[i] < -100 ? -100 : values[i] > 100 ? 100 : (int)values[i];
    return 0;
}

/* An optional single axis: None gives GK_ALL_AXES. */
static int axis_or_none(const char *function, PyObject *object, int otherwise, int *axis)
{
    if (!object) {
        *axis = otherwise;
        return 0;
    }
    if (object == Py_None) {
        *axis = GK_ALL_AXES;
        return 0;
    }
    int64_t value;
    if (int_value(function, "axis", object, &value) < 0)
        return -1;
    *axis = value < -100 ? -100 : value > 100 ? 100 : (int)value;
    return 0;
}

/* A sequence of array-likes as Arrays (new references in arrays[], on the
 * first Array's device); *count of them. -1 on error (nothing held). */
static int array_list(gkpy_state *state, const char *function, PyObject *object,
                      PyObject ***arrays, Py_ssize_t *count)
{
    if (gkpy_is_array(state, object) || !PySequence_Check(object) || PyUnicode_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s(): expected a sequence of arrays, not %.100s",
                     function, Py_TYPE(object)->tp_name);
        return -1;
    }
    PyObject *items = PySequence_Fast(object, "");
    if (!items)
        return -1;
    *count = PySequence_Fast_GET_SIZE(items);
    *arrays = PyMem_Calloc((size_t)(*count ? *count : 1), sizeof **arrays);
    if (!*arrays) {
        Py_DECREF(items);
        PyErr_NoMemory();
        return -1;
    }
    PyObject *near = NULL;
    for (Py_ssize_t i = 0; i < *count && !near; i++)
        if (gkpy_is_array(state, PySequence_Fast_GET_ITEM(items, i)))
            near = PySequence_Fast_GET_ITEM(items, i);
    for (Py_ssize_t i = 0; i < *count; i++) {
        (*arrays)[i] = gkpy_as_array(state, PySequence_Fast_GET_ITEM(items, i), near);
        if (!(*arrays)[i]) {
            for (Py_ssize_t j = 0; j < i; j++)
                Py_DECREF((*arrays)[j]);
            PyMem_Free(*arrays);
            Py_DECREF(items);
            return -1;
        }
    }
    Py_DECREF(items);
    return 0;
}

static void release_list(PyObject **arrays, Py_ssize_t count)
{
    for (Py_ssize_t i = 0; i < count; i++)
        Py_DECREF(arrays[i]);
    PyMem_Free(arrays);
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

/* --- joining and splitting --- */

static PyObject *join(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames, const char *function, bool new_axis)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"arrays", "axis", NULL};
    PyObject *values[2];
    if (parse(function, args, nargs, kwnames, names, 1, 1, 1, values) < 0)
        return NULL;
    int axis;
    if (axis_or_none(function, values[1], 0, &axis) < 0)
        return NULL;
    if (new_axis && axis == GK_ALL_AXES) {
        PyErr_SetString(PyExc_TypeError, "stack(): axis must be an int, not None");
        return NULL;
    }
    PyObject **arrays;
    Py_ssize_t count;
    if (array_list(state, function, values[0], &arrays, &count) < 0)
        return NULL;
    const gk_array **parts = PyMem_Calloc((size_t)(count ? count : 1), sizeof *parts);
    if (!parts) {
        release_list(arrays, count);
        return PyErr_NoMemory();
    }
    bool long_work = false;
    for (Py_ssize_t i = 0; i < count; i++) {
        parts[i] = array_of(arrays[i]);
        long_work = long_work || gkpy_long_work(parts[i]);
    }
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(long_work, new_axis ? gk_stack((int)count, parts, axis, &out)
                                 : gk_concat((int)count, parts, axis, &out));
    PyMem_Free(parts);
    release_list(arrays, count);
    return gkpy_array_result(state, status, out);
}

static PyObject *fn_concat(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    return join(module, args, nargs, kwnames, "concat", false);
}

static PyObject *fn_stack(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    return join(module, args, nargs, kwnames, "stack", true);
}

static PyObject *fn_unstack(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "axis", NULL};
    PyObject *values[2];
    int axis;
    if (parse("unstack", args, nargs, kwnames, names, 1, 1, 1, values) < 0 ||
        axis_or_none("unstack", values[1], 0, &axis) < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    const gk_array *a = array_of(x);
    int ndim = gk_array_ndim(a);
    if (axis == GK_ALL_AXES || axis < -ndim || axis >= ndim) {
        Py_DECREF(x);
        PyErr_Format(gkpy_state_of_module(module)->axis_error,
                     "unstack(): axis is out of range for a %d-d array", ndim);
        return NULL;
    }
    int64_t n = gk_array_shape(a)[axis < 0 ? axis + ndim : axis];
    gk_array **parts = PyMem_Calloc((size_t)(n ? n : 1), sizeof *parts);
    gk_status status = parts ? GK_OK : GK_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < n && status == GK_OK; i++)
        status = gk_index_axis(a, axis, i, &parts[i]);
    Py_DECREF(x);
    if (status != GK_OK) {
        for (int64_t i = 0; parts && i < n; i++)
            gk_array_free(parts[i]);
        PyMem_Free(parts);
        return parts ? gkpy_raise(state, status) : PyErr_NoMemory();
    }
    PyObject *tuple = array_tuple(state, parts, n);
    PyMem_Free(parts);
    return tuple;
}

/* --- views --- */

static PyObject *fn_flip(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "axis", NULL};
    PyObject *values[2];
    if (parse("flip", args, nargs, kwnames, names, 1, 1, 1, values) < 0)
        return NULL;
    int count = 0, axes[GK_MAX_DIMS];
    bool all = !values[1] || values[1] == Py_None;
    if (!all && axes_value("flip", values[1], &count, axes) < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    gk_array *out = NULL;
    gk_status status = gk_flip(array_of(x), count, all ? NULL : axes, &out);
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

static PyObject *fn_moveaxis(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "moveaxis() takes 3 positional arguments (%zd given)",
                     nargs);
        return NULL;
    }
    int from_count, to_count, source[GK_MAX_DIMS], destination[GK_MAX_DIMS];
    if (axes_value("moveaxis", args[1], &from_count, source) < 0 ||
        axes_value("moveaxis", args[2], &to_count, destination) < 0)
        return NULL;
    if (from_count != to_count) {
        PyErr_Format(PyExc_ValueError, "moveaxis(): source has %d axes and destination %d; "
                     "they must have as many", from_count, to_count);
        return NULL;
    }
    PyObject *x = gkpy_as_array(state, args[0], NULL);
    if (!x)
        return NULL;
    gk_array *out = NULL;
    gk_status status = gk_moveaxis(array_of(x), from_count, source, destination, &out);
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

/* squeeze and expand_dims: an array and its axes, to a view. */
static PyObject *reshape_axes(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames, const char *function, bool expand)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "axis", NULL};
    PyObject *values[2];
    /* squeeze(x, /, axis); expand_dims(x, /, axis=0), axis by name or place */
    if (parse(function, args, nargs, kwnames, names, 1, 2, expand ? 1 : 2, values) < 0)
        return NULL;
    int count = 1, axes[GK_MAX_DIMS] = {0};
    if (values[1] && axes_value(function, values[1], &count, axes) < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    gk_array *out = NULL;
    gk_status status = expand ? gk_expand_dims(array_of(x), count, axes, &out)
                              : gk_squeeze(array_of(x), count, axes, &out);
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

static PyObject *fn_squeeze(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    return reshape_axes(module, args, nargs, kwnames, "squeeze", false);
}

static PyObject *fn_expand_dims(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    return reshape_axes(module, args, nargs, kwnames, "expand_dims", true);
}

static PyObject *fn_broadcast_arrays(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    /* The shape all of them broadcast to, then a view of each. */
    int ndims[64];
    const int64_t *shapes[64];
    PyObject *held[64];
    if (nargs > 64) {
        PyErr_SetString(PyExc_ValueError, "broadcast_arrays(): at most 64 arrays");
        return NULL;
    }
    PyObject *near = NULL;
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
        ndims[i] = gk_array_ndim(array_of(held[i]));
        shapes[i] = gk_array_shape(array_of(held[i]));
    }
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    gk_status status = gk_broadcast_shape((int)nargs, ndims, shapes, &ndim, shape);
    PyObject *result = status == GK_OK ? PyTuple_New(nargs) : gkpy_raise(state, status);
    for (Py_ssize_t i = 0; i < nargs && result; i++) {
        gk_array *view = NULL;
        status = gk_broadcast_to(array_of(held[i]), ndim, shape, &view);
        PyObject *item = gkpy_array_result(state, status, view);
        if (!item)
            Py_CLEAR(result);
        else
            PyTuple_SET_ITEM(result, i, item);
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        Py_DECREF(held[i]);
    return result;
}

static PyObject *fn_broadcast_shapes(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    if (nargs > 64) {
        PyErr_SetString(PyExc_ValueError, "broadcast_shapes(): at most 64 shapes");
        return NULL;
    }
    int ndims[64];
    int64_t storage[64][GK_MAX_DIMS];
    const int64_t *shapes[64];
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if (gkpy_parse_shape(args[i], &ndims[i], storage[i]) < 0)
            return NULL;
        shapes[i] = storage[i];
    }
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    gk_status status = gk_broadcast_shape((int)nargs, ndims, shapes, &ndim, shape);
    if (status != GK_OK)
        return gkpy_raise(state, status);
    PyObject *tuple = PyTuple_New(ndim);
    for (int i = 0; tuple && i < ndim; i++) {
        PyObject *length = PyLong_FromLongLong(shape[i]);
        if (!length) {
            Py_CLEAR(tuple);
            break;
        }
        PyTuple_SET_ITEM(tuple, i, length);
    }
    return tuple;
}

/* --- copies --- */

static PyObject *fn_roll(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "shift", "axis", NULL};
    PyObject *values[3];
    if (parse("roll", args, nargs, kwnames, names, 1, 2, 2, values) < 0)
        return NULL;
    int shift_count, axis_count = 0, axes[GK_MAX_DIMS];
    int64_t shifts[GK_MAX_DIMS];
    bool single_shift;
    if (ints_value("roll", "shift", values[1], &shift_count, shifts, &single_shift) < 0)
        return NULL;
    bool flattened = !values[2] || values[2] == Py_None;
    if (!flattened && axes_value("roll", values[2], &axis_count, axes) < 0)
        return NULL;
    if (flattened && !single_shift) {
        PyErr_SetString(PyExc_ValueError, "roll(): a tuple of shifts needs a tuple of axes");
        return NULL;
    }
    if (!flattened && single_shift)
        for (int i = 1; i < axis_count; i++)
            shifts[i] = shifts[0]; /* one shift for every axis */
    else if (!flattened && shift_count != axis_count) {
        PyErr_Format(PyExc_ValueError, "roll(): %d shifts for %d axes; give one shift, or one "
                     "per axis", shift_count, axis_count);
        return NULL;
    }
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(array_of(x)),
             gk_roll(array_of(x), flattened ? 0 : axis_count, shifts, axes, &out));
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

static PyObject *fn_tile(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "tile() takes 2 positional arguments (%zd given)", nargs);
        return NULL;
    }
    int count;
    int64_t reps[GK_MAX_DIMS];
    if (ints_value("tile", "repetitions", args[1], &count, reps, NULL) < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, args[0], NULL);
    if (!x)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(array_of(x)), gk_tile(array_of(x), count, reps, &out));
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

static PyObject *fn_repeat(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "repeats", "axis", NULL};
    PyObject *values[3];
    int axis;
    if (parse("repeat", args, nargs, kwnames, names, 2, 2, 2, values) < 0 ||
        axis_or_none("repeat", values[2], GK_ALL_AXES, &axis) < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    if (gkpy_is_array(state, values[1])) {
        GKPY_RUN(gkpy_long_work(array_of(x)),
                 gk_repeat_counts(array_of(x), array_of(values[1]), axis, &out));
    } else {
        int64_t repeats;
        if (int_value("repeat", "repeats", values[1], &repeats) < 0) {
            Py_DECREF(x);
            return NULL;
        }
        GKPY_RUN(gkpy_long_work(array_of(x)), gk_repeat(array_of(x), repeats, axis, &out));
    }
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

/* --- indexing and searching --- */

static PyObject *fn_take(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "indices", "axis", NULL};
    PyObject *values[3];
    int axis;
    if (parse("take", args, nargs, kwnames, names, 2, 2, 2, values) < 0 ||
        axis_or_none("take", values[2], GK_ALL_AXES, &axis) < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    PyObject *indices = x ? gkpy_as_array(state, values[1], x) : NULL;
    gk_array *out = NULL;
    gk_status status = GK_OK;
    if (indices)
        GKPY_RUN(gkpy_long_work(array_of(x)),
                 gk_take(array_of(x), array_of(indices), axis, &out));
    Py_XDECREF(x);
    if (!indices)
        return NULL;
    Py_DECREF(indices);
    return gkpy_array_result(state, status, out);
}

static PyObject *fn_take_along_axis(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "indices", "axis", NULL};
    PyObject *values[3];
    int axis;
    if (parse("take_along_axis", args, nargs, kwnames, names, 2, 3, 2, values) < 0 ||
        axis_or_none("take_along_axis", values[2], -1, &axis) < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    PyObject *indices = x ? gkpy_as_array(state, values[1], x) : NULL;
    gk_array *out = NULL;
    gk_status status = GK_OK;
    if (indices)
        GKPY_RUN(gkpy_long_work(array_of(x)),
                 gk_take_along_axis(array_of(x), array_of(indices), axis, &out));
    Py_XDECREF(x);
    if (!indices)
        return NULL;
    Py_DECREF(indices);
    return gkpy_array_result(state, status, out);
}

static PyObject *fn_searchsorted(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x1", "x2", "side", "sorter", NULL};
    PyObject *values[4];
    if (parse("searchsorted", args, nargs, kwnames, names, 2, 2, 2, values) < 0)
        return NULL;
    bool right = false;
    if (values[2]) {
        const char *side = PyUnicode_Check(values[2]) ? PyUnicode_AsUTF8(values[2]) : NULL;
        if (!side || (strcmp(side, "left") != 0 && strcmp(side, "right") != 0)) {
            PyErr_Format(PyExc_ValueError, "searchsorted(): side must be 'left' or 'right', "
                         "not %R", values[2]);
            return NULL;
        }
        right = strcmp(side, "right") == 0;
    }
    PyObject *x1 = gkpy_as_array(state, values[0], NULL);
    PyObject *x2 = x1 ? gkpy_as_values_beside(state, values[1], x1) : NULL;
    PyObject *sorter = x2 && values[3] && values[3] != Py_None
                           ? gkpy_as_array(state, values[3], x1) : NULL;
    gk_array *out = NULL;
    gk_status status = GK_OK;
    if (x2 && sorter)
        GKPY_RUN(gkpy_long_work(array_of(x2)),
                 gk_searchsorted_sorter(array_of(x1), array_of(sorter), array_of(x2), right,
                                        &out));
    else if (x2 && (!values[3] || values[3] == Py_None))
        GKPY_RUN(gkpy_long_work(array_of(x2)),
                 gk_searchsorted(array_of(x1), array_of(x2), right, &out));
    PyObject *result = x2 && (sorter || !values[3] || values[3] == Py_None)
                           ? gkpy_array_result(state, status, out) : NULL;
    Py_XDECREF(x1);
    Py_XDECREF(x2);
    Py_XDECREF(sorter);
    return result;
}

static PyObject *fn_nonzero(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "nonzero() takes 1 positional argument (%zd given)",
                     nargs);
        return NULL;
    }
    PyObject *x = gkpy_as_array(state, args[0], NULL);
    if (!x)
        return NULL;
    const gk_array *a = array_of(x);
    int ndim = gk_array_ndim(a);
    if (ndim == 0) {
        Py_DECREF(x);
        PyErr_SetString(PyExc_ValueError, "nonzero(): a 0-d array has no axes to index; use "
                        "x[None] or bool(x)");
        return NULL;
    }
    gk_array *parts[GK_MAX_DIMS] = {NULL};
    gk_status status;
    GKPY_RUN(gkpy_long_work(a), gk_nonzero(a, parts));
    Py_DECREF(x);
    if (status != GK_OK)
        return gkpy_raise(state, status);
    return array_tuple(state, parts, ndim);
}

static PyObject *fn_count_nonzero(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x", "axis", "keepdims", NULL};
    PyObject *values[3];
    if (parse("count_nonzero", args, nargs, kwnames, names, 1, 1, 1, values) < 0)
        return NULL;
    int count = 0, axes[GK_MAX_DIMS];
    bool all = !values[1] || values[1] == Py_None;
    if (!all && axes_value("count_nonzero", values[1], &count, axes) < 0)
        return NULL;
    int keepdims = values[2] ? PyObject_IsTrue(values[2]) : 0;
    if (keepdims < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, values[0], NULL);
    if (!x)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(array_of(x)),
             gk_count_nonzero(array_of(x), count, all ? NULL : axes, keepdims, &out));
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

/* --- sets --- */

/* The named tuples of the unique_* functions (the standard's field names). */
static PyStructSequence_Field all_fields[] = {
    {"values", "the distinct elements, ascending"},
    {"indices", "where each first occurs in the flattened array"},
    {"inverse_indices", "for each element of x, its value's index in values"},
    {"counts", "how often each value occurs"},
    {NULL, NULL},
};
static PyStructSequence_Field counts_fields[] = {
    {"values", "the distinct elements, ascending"},
    {"counts", "how often each value occurs"},
    {NULL, NULL},
};
static PyStructSequence_Field inverse_fields[] = {
    {"values", "the distinct elements, ascending"},
    {"inverse_indices", "for each element of x, its value's index in values"},
    {NULL, NULL},
};
static PyStructSequence_Desc result_descs[3] = {
    {"gpukit.UniqueAllResult", "unique_all()'s result", all_fields, 4},
    {"gpukit.UniqueCountsResult", "unique_counts()'s result", counts_fields, 2},
    {"gpukit.UniqueInverseResult", "unique_inverse()'s result", inverse_fields, 2},
};
enum { UNIQUE_ALL, UNIQUE_COUNTS, UNIQUE_INVERSE, UNIQUE_VALUES };

static PyObject *unique(PyObject *module, PyObject *const *args, Py_ssize_t nargs, int kind)
{
    static const char *const functions[] = {"unique_all", "unique_counts", "unique_inverse",
                                            "unique_values"};
    gkpy_state *state = gkpy_state_of_module(module);
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes 1 positional argument (%zd given)",
                     functions[kind], nargs);
        return NULL;
    }
    PyObject *x = gkpy_as_array(state, args[0], NULL);
    if (!x)
        return NULL;
    gk_array *parts[4] = {NULL, NULL, NULL, NULL}; /* values, indices, inverse, counts */
    bool want_indices = kind == UNIQUE_ALL, want_inverse = kind == UNIQUE_ALL ||
                                                         kind == UNIQUE_INVERSE,
         want_counts = kind == UNIQUE_ALL || kind == UNIQUE_COUNTS;
    gk_status status;
    GKPY_RUN(gkpy_long_work(array_of(x)),
             gk_unique(array_of(x), &parts[0], want_indices ? &parts[1] : NULL,
                       want_inverse ? &parts[2] : NULL, want_counts ? &parts[3] : NULL));
    Py_DECREF(x);
    if (status != GK_OK)
        return gkpy_raise(state, status);
    if (kind == UNIQUE_VALUES)
        return gkpy_array_wrap(state, parts[0]);
    /* The fields in the order of the kind's named tuple. */
    int order[4], count = 0;
    order[count++] = 0;
    if (want_indices)
        order[count++] = 1;
    if (want_inverse)
        order[count++] = 2;
    if (want_counts)
        order[count++] = 3;
    PyObject *result = PyStructSequence_New(state->unique_types[kind]);
    for (int i = 0; i < count; i++) {
        PyObject *item = result ? gkpy_array_wrap(state, parts[order[i]]) : NULL;
        if (!result)
            gk_array_free(parts[order[i]]);
        else if (!item)
            Py_CLEAR(result);
        else
            PyStructSequence_SET_ITEM(result, i, item);
    }
    return result;
}

static PyObject *fn_unique_all(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return unique(module, args, nargs, UNIQUE_ALL);
}

static PyObject *fn_unique_counts(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return unique(module, args, nargs, UNIQUE_COUNTS);
}

static PyObject *fn_unique_inverse(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return unique(module, args, nargs, UNIQUE_INVERSE);
}

static PyObject *fn_unique_values(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return unique(module, args, nargs, UNIQUE_VALUES);
}

static PyObject *fn_isin(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    gkpy_state *state = gkpy_state_of_module(module);
    static const char *const names[] = {"x1", "x2", "invert", NULL};
    PyObject *values[3];
    if (parse("isin", args, nargs, kwnames, names, 2, 2, 2, values) < 0)
        return NULL;
    int invert = values[2] ? PyObject_IsTrue(values[2]) : 0;
    if (invert < 0)
        return NULL;
    PyObject *x1 = gkpy_as_array(state, values[0], NULL);
    PyObject *x2 = x1 ? gkpy_as_values_beside(state, values[1], x1) : NULL;
    gk_array *out = NULL;
    gk_status status = GK_OK;
    if (x2)
        GKPY_RUN(gkpy_long_work(array_of(x1)),
                 gk_isin(array_of(x1), array_of(x2), invert, &out));
    Py_XDECREF(x1);
    if (!x2)
        return NULL;
    Py_DECREF(x2);
    return gkpy_array_result(state, status, out);
}

static PyMethodDef manipulate_functions[] = {
    {"concat", KEYWORDS(fn_concat),
     "concat(arrays, /, *, axis=0)\n--\n\nThe arrays joined along an existing axis (None: "
     "each flattened first), their dtypes promoted."},
    {"stack", KEYWORDS(fn_stack),
     "stack(arrays, /, *, axis=0)\n--\n\nThe arrays (of one shape) joined along a new axis."},
    {"unstack", KEYWORDS(fn_unstack),
     "unstack(x, /, *, axis=0)\n--\n\nA tuple of views of x, one per position along axis."},
    {"flip", KEYWORDS(fn_flip),
     "flip(x, /, *, axis=None)\n--\n\nA view of x with the order along axis (an int, a tuple, "
     "or None for every axis) reversed."},
    {"roll", KEYWORDS(fn_roll),
     "roll(x, /, shift, *, axis=None)\n--\n\nThe elements shifted along axis, wrapping around "
     "(axis None: over the flattened array)."},
    {"moveaxis", FASTCALL(fn_moveaxis),
     "moveaxis(x, source, destination, /)\n--\n\nA view of x with axes moved to new places, the "
     "others keeping their order."},
    {"squeeze", KEYWORDS(fn_squeeze),
     "squeeze(x, /, axis)\n--\n\nA view of x without the given axes of length 1."},
    {"expand_dims", KEYWORDS(fn_expand_dims),
     "expand_dims(x, /, axis=0)\n--\n\nA view of x with new axes of length 1 at axis (an int "
     "or a tuple of positions in the result)."},
    {"broadcast_arrays", FASTCALL(fn_broadcast_arrays),
     "broadcast_arrays(*arrays)\n--\n\nViews of the arrays broadcast to one shape, as a tuple."},
    {"broadcast_shapes", FASTCALL(fn_broadcast_shapes),
     "broadcast_shapes(*shapes)\n--\n\nThe shape the given shapes broadcast to."},
    {"tile", FASTCALL(fn_tile),
     "tile(x, repetitions, /)\n--\n\nx repeated along each axis (NumPy's tile)."},
    {"repeat", KEYWORDS(fn_repeat),
     "repeat(x, repeats, /, *, axis=None)\n--\n\nEach element repeated: repeats times, or "
     "repeats[i] times for element i (an integer array). axis None: over the flattened "
     "array."},
    {"take", KEYWORDS(fn_take),
     "take(x, indices, /, *, axis=None)\n--\n\nThe elements of x at the integer indices along "
     "axis (None: x flattened). An index out of range raises IndexError."},
    {"take_along_axis", KEYWORDS(fn_take_along_axis),
     "take_along_axis(x, indices, /, *, axis=-1)\n--\n\nx read through indices along axis, "
     "indices broadcasting with x on the other axes."},
    {"searchsorted", KEYWORDS(fn_searchsorted),
     "searchsorted(x1, x2, /, *, side='left', sorter=None)\n--\n\nWhere each element of x2 "
     "goes in the ascending 1-d x1 (or x1[sorter]) to keep it sorted (int64)."},
    {"nonzero", FASTCALL(fn_nonzero),
     "nonzero(x, /)\n--\n\nThe indices of x's nonzero elements: one int64 array per axis."},
    {"count_nonzero", KEYWORDS(fn_count_nonzero),
     "count_nonzero(x, /, *, axis=None, keepdims=False)\n--\n\nHow many elements are nonzero "
     "over axis (an int, a tuple or None), as int64."},
    {"unique_all", FASTCALL(fn_unique_all),
     "unique_all(x, /)\n--\n\nThe distinct elements of x (each NaN distinct), with their first "
     "indices, the inverse indices (x's shape) and their counts."},
    {"unique_counts", FASTCALL(fn_unique_counts),
     "unique_counts(x, /)\n--\n\nThe distinct elements of x and their counts."},
    {"unique_inverse", FASTCALL(fn_unique_inverse),
     "unique_inverse(x, /)\n--\n\nThe distinct elements of x and the inverse indices."},
    {"unique_values", FASTCALL(fn_unique_values),
     "unique_values(x, /)\n--\n\nThe distinct elements of x, ascending."},
    {"isin", KEYWORDS(fn_isin),
     "isin(x1, x2, /, *, invert=False)\n--\n\nWhether each element of x1 is in x2 (bool of "
     "x1's shape)."},
    {NULL, NULL, 0, NULL},
};

int gkpy_manipulate_init(PyObject *module, gkpy_state *state)
{
    for (int i = 0; i < 3; i++) {
        state->unique_types[i] = PyStructSequence_NewType(&result_descs[i]);
        if (!state->unique_types[i])
            return -1;
        const char *dot = strrchr(result_descs[i].name, '.');
        if (PyModule_AddObjectRef(module, dot + 1, (PyObject *)state->unique_types[i]) < 0)
            return -1;
    }
    return PyModule_AddFunctions(module, manipulate_functions);
}
