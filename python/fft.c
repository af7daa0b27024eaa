/* The C halves of gpukit.fft: _fft (every transform, one gk_fft call),
 * _fftfreq and _fftshift. gpukit.fft (fft.py) parses the standard's
 * keywords and passes everything here by position. */
#include "gkpy.h"

#define FASTCALL(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL

static gk_array *array_of(PyObject *object)
{
    return ((gkpy_array *)object)->array;
}

/* Whether object is a sequence with a length: a 0-d array (NumPy's,
 * gpukit's) has the sequence methods but no length, and stands for its
 * one value. */
static bool sized_sequence(PyObject *object)
{
    if (!PySequence_Check(object))
        return false;
    if (PyObject_Length(object) >= 0)
        return true;
    PyErr_Clear();
    return false;
}

/* A sequence of ints (None: *count -1) into values; -1 with TypeError or
 * ValueError naming `what`. */
static int int_sequence(const char *function, const char *what, PyObject *object, int *count,
                        int64_t *values)
{
    *count = -1;
    if (object == Py_None)
        return 0;
    if (!sized_sequence(object) || PyUnicode_Check(object) || PyBytes_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s(): %s must be a sequence of ints or None, not %.100s",
                     function, what, Py_TYPE(object)->tp_name);
        return -1;
    }
    PyObject *items = PySequence_Fast(object, "a sequence of ints");
    if (!items)
        return -1;
    Py_ssize_t size = PySequence_Fast_GET_SIZE(items);
    int result = 0;
    if (size > GK_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s(): %zd %s: at most %d", function, size, what,
                     GK_MAX_DIMS);
        result = -1;
    }
    for (Py_ssize_t i = 0; i < size && result == 0; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(items, i);
        if (!PyIndex_Check(item) || PyBool_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s(): %s must hold ints, not %.100s", function, what,
                         Py_TYPE(item)->tp_name);
            result = -1;
        } else if ((values[i] = PyLong_AsLongLong(item)) == -1 && PyErr_Occurred()) {
            result = -1;
        }
    }
    Py_DECREF(items);
    *count = result == 0 ? (int)size : -1;
    return result;
}

/* An int (not a bool, and not a sequence of them: a 0-d integer array is
 * one) into *value; 0 when object is not one, -1 with the exception when
 * it is one out of range. */
static int single_int(PyObject *object, long long *value)
{
    if (!PyIndex_Check(object) || PyBool_Check(object) || sized_sequence(object))
        return 0;
    *value = PyLong_AsLongLong(object);
    return *value == -1 && PyErr_Occurred() ? -1 : 1;
}

/* An axes argument: None (*naxes -1), one int, or a sequence of ints
 * (`one_axis`: only one int, the one-axis functions' axis), each in
 * -GK_MAX_DIMS .. GK_MAX_DIMS - 1 (the library checks it against the
 * array); -1 with the exception. */
static int axes_argument(gkpy_state *state, const char *function, bool one_axis,
                         PyObject *object, int *naxes, int *axes)
{
    int64_t values[GK_MAX_DIMS];
    long long one;
    int single = single_int(object, &one);
    if (single < 0)
        return -1;
    if (single) {
        values[0] = one;
        *naxes = 1;
    } else if (one_axis) {
        PyErr_Format(PyExc_TypeError, "%s(): axis must be an int, not %.100s", function,
                     Py_TYPE(object)->tp_name);
        return -1;
    } else if (int_sequence(function, "axes", object, naxes, values) < 0) {
        return -1;
    }
    for (int i = 0; i < *naxes; i++) {
        if (values[i] < -GK_MAX_DIMS || values[i] >= GK_MAX_DIMS) {
            PyErr_Format(state->axis_error, "%s(): axis %lld is out of range", function,
                         (long long)values[i]);
            return -1;
        }
        axes[i] = (int)values[i];
    }
    return 0;
}

/* The points to transform: the one-axis functions' n (None, or an int of
 * at least 1), else the n-dimensional ones' s (None, or a sequence whose
 * entries are at least 1, or -1 for "this axis as it is", made 0 for the
 * library); *count -1 for None. -1 with the exception. */
static int lengths_argument(const char *function, PyObject *object, bool one_axis, int *count,
                            int64_t *lengths)
{
    const char *what = one_axis ? "n" : "s";
    if (one_axis && object != Py_None) {
        long long n;
        int single = single_int(object, &n);
        if (single <= 0) {
            if (single == 0)
                PyErr_Format(PyExc_TypeError, "%s(): n must be an int or None, not %.100s",
                             function, Py_TYPE(object)->tp_name);
            return -1;
        }
        lengths[0] = n;
        *count = 1;
    } else if (int_sequence(function, what, object, count, lengths) < 0) {
        return -1;
    }
    for (int i = 0; i < *count; i++) {
        if (lengths[i] == -1 && !one_axis) { /* the standard's "this axis as it is" */
            lengths[i] = 0;
        } else if (lengths[i] < 1) {
            PyErr_Format(PyExc_ValueError,
                         "%s(): %s = %lld points: the number of points must be at least 1",
                         function, what, (long long)lengths[i]);
            return -1;
        }
    }
    return 0;
}

/* _fft(x, kind, lengths, axes, norm, one_axis): the one-axis functions
 * pass n and axis (an int) and one_axis True, the n-dimensional ones s
 * and axes (sequences or None); norm 'backward', 'ortho' or 'forward'. */
static PyObject *fn_fft(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    if (gkpy_expect_args("_fft", nargs, 6) < 0)
        return NULL;
    int kind = PyLong_Check(args[1]) ? (int)PyLong_AsLong(args[1]) : -1;
    const char *function = gk_fft_kind_name((gk_fft_kind)kind);
    bool one_axis = args[5] == Py_True;
    int nlengths, naxes, axes[GK_MAX_DIMS];
    int64_t lengths[GK_MAX_DIMS];
    if (lengths_argument(function, args[2], one_axis, &nlengths, lengths) < 0 ||
        axes_argument(state, function, one_axis, args[3], &naxes, axes) < 0)
        return NULL;
    /* the names in gk_fft_norm's order */
    static const char *const norms[] = {"backward", "ortho", "forward"};
    int norm = args[4] == Py_None ? 0 : -1; /* None: NumPy's spelling of the default */
    for (int i = 0; i < 3 && PyUnicode_Check(args[4]); i++)
        if (PyUnicode_CompareWithASCIIString(args[4], norms[i]) == 0)
            norm = i;
    if (norm < 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s(): norm is %R; it must be 'backward', 'ortho' or 'forward'", function,
                     args[4]);
        return NULL;
    }
    if (nlengths >= 0 && naxes >= 0 && nlengths != naxes) {
        PyErr_Format(PyExc_ValueError, "%s(): s has %d entries for %d axes", function,
                     nlengths, naxes);
        return NULL;
    }
    PyObject *x = gkpy_as_array(state, args[0], NULL);
    if (!x)
        return NULL;
    const gk_array *a = array_of(x);
    /* s without axes: the last len(s) axes */
    if (naxes < 0 && nlengths >= 0) {
        naxes = nlengths;
        for (int i = 0; i < naxes; i++)
            axes[i] = i - naxes;
    }
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(true, gk_fft(a, (gk_fft_kind)kind, naxes, axes, nlengths >= 0 ? lengths : NULL,
                          (gk_fft_norm)norm, &out));
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

/* _fftfreq(n, d, real, dtype, device) */
static PyObject *fn_fftfreq(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    if (gkpy_expect_args("_fftfreq", nargs, 5) < 0)
        return NULL;
    int real = PyObject_IsTrue(args[2]);
    const char *function = real ? "rfftfreq" : "fftfreq";
    if (!PyIndex_Check(args[0]) || PyBool_Check(args[0])) {
        PyErr_Format(PyExc_TypeError, "%s(): n must be an int, not %.100s", function,
                     Py_TYPE(args[0])->tp_name);
        return NULL;
    }
    long long n = PyLong_AsLongLong(args[0]);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    double d = PyFloat_AsDouble(args[1]);
    if (d == -1.0 && PyErr_Occurred())
        return NULL;
    if (d == 0) { /* NumPy's error: 1 / (n * d) */
        PyErr_Format(PyExc_ZeroDivisionError, "%s(): d is 0; the sample spacing must not be 0",
                     function);
        return NULL;
    }
    gk_dtype dtype = GK_FLOAT32; /* the default real floating dtype */
    gk_device device = gkpy_default_device(state);
    if (real < 0 || gkpy_optional_dtype(state, args[3], &dtype) < 0 ||
        gkpy_optional_device(state, args[4], &device) < 0)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(device.kind != GK_DEVICE_CPU, gk_fftfreq(device, dtype, n, d, real, &out));
    return gkpy_array_result(state, status, out);
}

/* _fftshift(x, axes, inverse) */
static PyObject *fn_fftshift(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    if (gkpy_expect_args("_fftshift", nargs, 3) < 0)
        return NULL;
    int inverse = PyObject_IsTrue(args[2]);
    const char *function = inverse > 0 ? "ifftshift" : "fftshift";
    int naxes, axes[GK_MAX_DIMS];
    if (inverse < 0 || axes_argument(state, function, false, args[1], &naxes, axes) < 0)
        return NULL;
    PyObject *x = gkpy_as_array(state, args[0], NULL);
    if (!x)
        return NULL;
    gk_array *out = NULL;
    gk_status status;
    GKPY_RUN(gkpy_long_work(array_of(x)), gk_fftshift(array_of(x), naxes, axes, inverse, &out));
    Py_DECREF(x);
    return gkpy_array_result(state, status, out);
}

static PyMethodDef fft_functions[] = {
    {"_fft", FASTCALL(fn_fft),
     "_fft(x, kind, lengths, axes, norm, one_axis, /)\n--\n\nThe C half of gpukit.fft's transforms."},
    {"_fftfreq", FASTCALL(fn_fftfreq),
     "_fftfreq(n, d, real, dtype, device, /)\n--\n\nThe C half of gpukit.fft.fftfreq and "
     "rfftfreq."},
    {"_fftshift", FASTCALL(fn_fftshift),
     "_fftshift(x, axes, inverse, /)\n--\n\nThe C half of gpukit.fft.fftshift and ifftshift."},
    {NULL, NULL, 0, NULL},
};

int gkpy_fft_init(PyObject *module, gkpy_state *state)
{
    (void)state;
    return PyModule_AddFunctions(module, fft_functions);
}
