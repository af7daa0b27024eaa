/* NumPy's dispatch protocols on gpukit.Array: __array_ufunc__ (NEP 13) and
 * __array_function__ (NEP 18). A NumPy function or ufunc called with a
 * gpukit array runs gpukit's function of the same meaning on the array's
 * device, so code written for NumPy (dask.array's chunk functions among it)
 * keeps its data where it is, as CuPy's arrays do. Names are looked up in
 * the gpukit namespace (numpy.linalg in gpukit.linalg, numpy.fft in
 * gpukit.fft) through a table of the names NumPy spells differently from
 * the array API standard; NumPy arrays and scalars among the arguments
 * move to the gpukit array's device. What gpukit lacks (or an `out=`
 * argument) gives NotImplemented, and NumPy then raises its TypeError
 * naming the function. */
#include "gkpy.h"

#include <stdio.h>
#include <string.h>

/* module.name(*args, **kwargs) (kwargs may be NULL); a new reference. */
static PyObject *module_call(const char *module, const char *name, PyObject *args,
                             PyObject *kwargs)
{
    PyObject *imported = PyImport_ImportModule(module);
    PyObject *function = imported ? PyObject_GetAttrString(imported, name) : NULL;
    PyObject *result = function ? PyObject_Call(function, args, kwargs) : NULL;
    Py_XDECREF(function);
    Py_XDECREF(imported);
    return result;
}

/* NumPy's name -> gpukit's (the array API standard's), where they differ. */
static const struct {
    const char *numpy, *gpukit;
} renamed[] = {
    {"absolute", "abs"},
    {"amax", "max"},
    {"amin", "min"},
    {"arccos", "acos"},
    {"arccosh", "acosh"},
    {"arcsin", "asin"},
    {"arcsinh", "asinh"},
    {"arctan", "atan"},
    {"arctan2", "atan2"},
    {"arctanh", "atanh"},
    {"concatenate", "concat"},
    {"conjugate", "conj"},
    {"invert", "bitwise_invert"},
    {"left_shift", "bitwise_left_shift"},
    {"power", "pow"},
    {"right_shift", "bitwise_right_shift"},
    {"rint", "round"},
    {"true_divide", "divide"},
};

/* ufunc.reduce -> the reduction that computes it. */
static const struct {
    const char *ufunc, *reduction;
} reductions[] = {
    {"add", "sum"},
    {"multiply", "prod"},
    {"maximum", "max"},
    {"minimum", "min"},
    {"logical_and", "all"},
    {"logical_or", "any"},
};

/* gpukit's function for NumPy's `module`.`name`, or NULL (no exception)
 * when there is none. */
static PyObject *gpukit_function(PyObject *module_name, const char *name)
{
    const char *module = module_name ? PyUnicode_AsUTF8(module_name) : "numpy";
    if (!module) {
        PyErr_Clear();
        return NULL;
    }
    const char *ours = strcmp(module, "numpy.linalg") == 0 ? "gpukit.linalg"
                       : strcmp(module, "numpy.fft") == 0  ? "gpukit.fft"
                       : strcmp(module, "numpy") == 0      ? "gpukit"
                                                           : NULL;
    if (!ours)
        return NULL;
    for (size_t i = 0; i < sizeof renamed / sizeof renamed[0]; i++)
        if (strcmp(name, renamed[i].numpy) == 0)
            name = renamed[i].gpukit;
    PyObject *namespace = PyImport_ImportModule(ours);
    if (!namespace)
        return NULL;
    PyObject *function = PyObject_GetAttrString(namespace, name);
    Py_DECREF(namespace);
    if (!function || !PyCallable_Check(function) || name[0] == '_') {
        Py_XDECREF(function);
        PyErr_Clear();
        return NULL;
    }
    return function;
}

bool gkpy_is_numpy(PyObject *value)
{
    const char *module = Py_TYPE(value)->tp_name;
    return strncmp(module, "numpy.", 6) == 0 && PyObject_HasAttrString(value, "__array_interface__");
}

bool gkpy_is_numpy_scalar(PyObject *value)
{
    return gkpy_is_numpy(value) && strcmp(Py_TYPE(value)->tp_name, "numpy.ndarray") != 0;
}

/* The arguments with NumPy arrays and scalars moved to `device` (within
 * lists and tuples too, as concatenate's sequence); a new reference. */
static PyObject *convert(PyObject *value, PyObject *asarray, PyObject *device)
{
    if (PyTuple_Check(value) || PyList_Check(value)) {
        if (Py_EnterRecursiveCall(" converting NumPy arguments"))
            return NULL;
        /* A copy: asarray's Python code may change a list being walked. */
        PyObject *fast = PySequence_Tuple(value);
        Py_ssize_t n = fast ? PyTuple_GET_SIZE(fast) : 0;
        PyObject *items = fast ? PyList_New(n) : NULL;
        for (Py_ssize_t i = 0; items && i < n; i++) {
            PyObject *item = convert(PyTuple_GET_ITEM(fast, i), asarray, device);
            if (!item) {
                Py_CLEAR(items);
                break;
            }
            PyList_SET_ITEM(items, i, item);
        }
        Py_XDECREF(fast);
        Py_LeaveRecursiveCall();
        if (!items || PyList_Check(value))
            return items;
        PyObject *tuple = PyList_AsTuple(items);
        Py_DECREF(items);
        return tuple;
    }
    if (!gkpy_is_numpy(value))
        return Py_NewRef(value);
    PyObject *args = PyTuple_Pack(1, value);
    PyObject *kwargs = args ? Py_BuildValue("{sO}", "device", device) : NULL;
    PyObject *moved = kwargs ? PyObject_Call(asarray, args, kwargs) : NULL;
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    return moved;
}

/* The arrays of `args` (a tuple; its other items as they are) converted
 * with astype to `dtype`; a new reference. */
static PyObject *cast_arrays(PyObject *self, PyObject *args, PyObject *dtype)
{
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *cast = PyTuple_New(n);
    for (Py_ssize_t i = 0; cast && i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(args, i), *pair = NULL;
        if (!Py_IS_TYPE(item, Py_TYPE(self))) {
            PyTuple_SET_ITEM(cast, i, Py_NewRef(item));
            continue;
        }
        pair = PyTuple_Pack(2, item, dtype);
        PyObject *converted = pair ? module_call("gpukit", "astype", pair, NULL) : NULL;
        Py_XDECREF(pair);
        if (!converted)
            Py_CLEAR(cast);
        else
            PyTuple_SET_ITEM(cast, i, converted);
    }
    return cast;
}

/* function(*converted args, **kwargs), the arrays among args first cast
 * to `cast_to` when it is not NULL; NotImplemented when there is no such
 * gpukit function. */
static PyObject *call(PyObject *self, PyObject *function, PyObject *args, PyObject *kwargs,
                      PyObject *cast_to)
{
    if (!function)
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_NotImplemented);
    PyObject *gpukit = PyImport_ImportModule("gpukit");
    PyObject *asarray = gpukit ? PyObject_GetAttrString(gpukit, "asarray") : NULL;
    PyObject *device = asarray ? PyObject_GetAttrString(self, "device") : NULL;
    PyObject *converted = device ? convert(args, asarray, device) : NULL;
    PyObject *result = NULL;
    if (converted) {
        PyObject *tuple = PyList_Check(converted) ? PyList_AsTuple(converted) : Py_NewRef(converted);
        if (tuple && cast_to)
            Py_SETREF(tuple, cast_arrays(self, tuple, cast_to));
        result = tuple ? PyObject_Call(function, tuple, kwargs) : NULL;
        Py_XDECREF(tuple);
    }
    Py_XDECREF(converted);
    Py_XDECREF(device);
    Py_XDECREF(asarray);
    Py_XDECREF(gpukit);
    Py_DECREF(function);
    return result;
}

/* Whether order= only lays the result out (ufuncs, the *_like functions,
 * copies): else (reshape, ravel) NumPy's 'F' and 'A' read the elements
 * in another order, which gpukit does not do. */
static bool order_is_layout(const char *function)
{
    size_t length = function ? strlen(function) : 0;
    return !function || (length > 5 && strcmp(function + length - 5, "_like") == 0) ||
           strcmp(function, "copy") == 0 || strcmp(function, "asarray") == 0 ||
           strcmp(function, "array") == 0;
}

/* NumPy's default casting rule for `function`'s casting=. */
static const char *default_casting(const char *function)
{
    return strcmp(function, "can_cast") == 0 || strcmp(function, "einsum") == 0 ? "safe"
                                                                               : "same_kind";
}

/* kwargs without the keys NumPy passes at their defaults; NULL (with
 * *unsupported set) when one asks for what gpukit does not do (out=,
 * where=, a casting rule other than the default, order='F' where it
 * reorders elements, ...). `function`: the NumPy function's name, NULL
 * for a ufunc (whose casting= the caller checks: ufunc_casting). */
static PyObject *plain_kwargs(PyObject *kwargs, const char *function, bool *unsupported)
{
    *unsupported = false;
    PyObject *kept = PyDict_New();
    if (!kept || !kwargs)
        return kept;
    PyObject *key, *value;
    Py_ssize_t at = 0;
    while (PyDict_Next(kwargs, &at, &key, &value)) {
        const char *name = PyUnicode_AsUTF8(key);
        if (!name) {
            Py_DECREF(kept);
            return NULL;
        }
        bool default_value =
            ((strcmp(name, "out") == 0 || strcmp(name, "dtype") == 0 ||
              strcmp(name, "initial") == 0) &&
             (value == Py_None || (PyTuple_Check(value) && PyTuple_GET_SIZE(value) == 1 &&
                                   PyTuple_GET_ITEM(value, 0) == Py_None))) ||
            (strcmp(name, "where") == 0 && value == Py_True) ||
            (strcmp(name, "shape") == 0 && value == Py_None) ||
            (strcmp(name, "casting") == 0 &&
             (!function || (PyUnicode_Check(value) &&
                            PyUnicode_CompareWithASCIIString(value, default_casting(function)) ==
                                0))) ||
            (strcmp(name, "subok") == 0 && (value == Py_None || value == Py_True)) ||
            (strcmp(name, "order") == 0 &&
             (value == Py_None || order_is_layout(function) ||
              (PyUnicode_Check(value) && (PyUnicode_CompareWithASCIIString(value, "C") == 0 ||
                                          PyUnicode_CompareWithASCIIString(value, "K") == 0))));
        if (default_value)
            continue;
        if (strcmp(name, "out") == 0 || strcmp(name, "where") == 0 ||
            strcmp(name, "casting") == 0 || strcmp(name, "initial") == 0 ||
            strcmp(name, "order") == 0) {
            *unsupported = true;
            Py_DECREF(kept);
            return NULL;
        }
        if (PyDict_SetItem(kept, key, value) < 0) {
            Py_DECREF(kept);
            return NULL;
        }
    }
    return kept;
}

/* The ufuncs whose result is bool: their dtype= may only be bool, and then
 * names the result, not the dtype the inputs compute in (NumPy's rule). */
static bool gives_bool(const char *ufunc)
{
    static const char *const names[] = {
        "equal",       "not_equal",   "less",       "less_equal", "greater",
        "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not",
        "isnan",       "isinf",       "isfinite",   "signbit",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(ufunc, names[i]) == 0)
            return true;
    return false;
}

/* NumPy's checks of a ufunc's casting= (default same_kind) before it
 * computes: with dtype=, each input that has a dtype (arrays and NumPy
 * scalars; Python's numbers are weak) must cast to it under the rule
 * (numpy.can_cast decides; 'unsafe' lets all through), and a ufunc giving
 * bool takes no dtype but bool. 1: go on; 0: not gpukit's to do (the rules
 * 'no' and 'equiv' without dtype=); -1: NumPy's TypeError. */
static int ufunc_casting(PyObject *self, const char *ufunc, PyObject *inputs, PyObject *dtype,
                         gk_dtype requested, PyObject *casting)
{
    if (!casting && !dtype) /* the common call: nothing to check */
        return 1;
    if (!casting)
        casting = PyUnicode_FromString("same_kind");
    else
        Py_INCREF(casting);
    if (!casting)
        return -1;
    const char *rule = PyUnicode_Check(casting) ? PyUnicode_AsUTF8(casting) : "";
    int result = rule ? 1 : -1;
    if (!dtype && rule)
        result = strcmp(rule, "same_kind") == 0 || strcmp(rule, "safe") == 0 ||
                 strcmp(rule, "unsafe") == 0;
    else if (rule && gives_bool(ufunc) && requested != GK_BOOL) {
        PyErr_Format(PyExc_TypeError,
                     "No loop matching the specified signature and casting was found for "
                     "ufunc %s (its result is bool: dtype=bool, or none)",
                     ufunc);
        result = -1;
    } else if (rule && !gives_bool(ufunc) && strcmp(rule, "unsafe") != 0) {
        PyObject *keywords = Py_BuildValue("{sO}", "casting", casting);
        result = keywords ? 1 : -1;
        for (Py_ssize_t i = 0; result == 1 && i < PyTuple_GET_SIZE(inputs); i++) {
            PyObject *input = PyTuple_GET_ITEM(inputs, i);
            if (!gkpy_is_numpy(input) && !Py_IS_TYPE(input, Py_TYPE(self)))
                continue;
            PyObject *from = PyObject_GetAttrString(input, "dtype");
            PyObject *pair = from ? PyTuple_Pack(2, from, dtype) : NULL;
            PyObject *answer = pair ? module_call("numpy", "can_cast", pair, keywords) : NULL;
            int allowed = answer ? PyObject_IsTrue(answer) : -1;
            if (allowed < 0 && PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear(); /* a dtype NumPy lacks (bfloat16): astype decides */
                allowed = 1;
            }
            if (allowed == 0)
                PyErr_Format(PyExc_TypeError,
                             "Cannot cast ufunc '%s' input %zd from %S to %s with casting "
                             "rule '%s' (casting='unsafe' casts anyway)",
                             ufunc, i, from, gk_dtype_name(requested), rule);
            result = allowed == 1 ? 1 : -1;
            Py_XDECREF(answer);
            Py_XDECREF(pair);
            Py_XDECREF(from);
        }
        Py_XDECREF(keywords);
    }
    Py_DECREF(casting);
    return result;
}

PyObject *gkpy_array_ufunc(PyObject *self, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) < 2)
        return PyErr_Format(PyExc_TypeError, "__array_ufunc__(ufunc, method, *inputs, **kwargs)");
    PyObject *ufunc = PyTuple_GET_ITEM(args, 0), *method = PyTuple_GET_ITEM(args, 1);
    PyObject *inputs = PyTuple_GetSlice(args, 2, PyTuple_GET_SIZE(args));
    PyObject *name = PyObject_GetAttrString(ufunc, "__name__");
    bool unsupported;
    PyObject *kept = plain_kwargs(kwargs, NULL, &unsupported);
    PyObject *result = NULL;
    const char *ufunc_name = name ? PyUnicode_AsUTF8(name) : NULL;
    const char *how = PyUnicode_Check(method) ? PyUnicode_AsUTF8(method) : "";
    if (!inputs || !ufunc_name || !how || (!kept && !unsupported)) {
        result = NULL;
    } else if (unsupported) {
        result = Py_NewRef(Py_NotImplemented);
    } else if (strcmp(how, "__call__") == 0) {
        /* dtype=: computed in that dtype, as NumPy's loops are (the
         * functions of the array API standard take none): the inputs cast
         * to it first, so that int8 products summed as float64 do not wrap;
         * except for bool, the output of comparisons, whose inputs keep
         * their dtype (the result is cast after, as every result is). */
        PyObject *dtype = PyDict_GetItemString(kept, "dtype");
        Py_XINCREF(dtype);
        if (dtype && PyDict_DelItemString(kept, "dtype") < 0)
            Py_CLEAR(dtype);
        gk_dtype requested = GK_BOOL;
        int given = dtype ? gkpy_optional_dtype(gkpy_state_of_type(Py_TYPE(self)), dtype,
                                                &requested)
                          : 0;
        int go = given < 0 ? -1
                           : ufunc_casting(self, ufunc_name, inputs, dtype, requested,
                                           kwargs ? PyDict_GetItemString(kwargs, "casting")
                                                  : NULL);
        result = go < 0    ? NULL
                 : go == 0 ? Py_NewRef(Py_NotImplemented)
                           : call(self, gpukit_function(NULL, ufunc_name), inputs, kept,
                                  given && requested != GK_BOOL ? dtype : NULL);
        if (result && dtype && result != Py_NotImplemented) {
            PyObject *call_args = PyTuple_Pack(2, result, dtype);
            Py_SETREF(result, call_args ? module_call("gpukit", "astype", call_args, NULL) : NULL);
            Py_XDECREF(call_args);
        }
        Py_XDECREF(dtype);
    } else if (strcmp(how, "reduce") == 0 && PyTuple_GET_SIZE(inputs) == 1) {
        const char *reduction = NULL;
        for (size_t i = 0; i < sizeof reductions / sizeof reductions[0]; i++)
            if (strcmp(ufunc_name, reductions[i].ufunc) == 0)
                reduction = reductions[i].reduction;
        /* NumPy's reduce takes axis=0 by default; the reductions, None */
        if (reduction && !PyDict_GetItemString(kept, "axis")) {
            PyObject *zero = PyLong_FromLong(0);
            if (!zero || PyDict_SetItemString(kept, "axis", zero) < 0)
                reduction = NULL;
            Py_XDECREF(zero);
        }
        result = reduction ? call(self, gpukit_function(NULL, reduction), inputs, kept, NULL)
                           : (PyErr_Occurred() ? NULL : Py_NewRef(Py_NotImplemented));
    } else {
        result = Py_NewRef(Py_NotImplemented);
    }
    Py_XDECREF(kept);
    Py_XDECREF(name);
    Py_XDECREF(inputs);
    return result;
}

/* np.zeros_like(x, shape=...) and its kind (dask makes its chunks' metadata
 * so): gpukit.zeros(shape, dtype=x.dtype, device=x.device), the array API's
 * *_like functions having no shape. */
static PyObject *like_with_shape(const char *name, PyObject *args, PyObject *kwargs)
{
    char base[32];
    snprintf(base, sizeof base, "%.*s", (int)(strlen(name) - 5), name);
    PyObject *prototype = PyTuple_GET_ITEM(args, 0);
    PyObject *shape = PyDict_GetItemString(kwargs, "shape");
    PyObject *call_kwargs = PyDict_Copy(kwargs);
    if (!call_kwargs || PyDict_DelItemString(call_kwargs, "shape") < 0) {
        Py_XDECREF(call_kwargs);
        return NULL;
    }
    PyObject *call_args = NULL;
    int ok = 0;
    if (!PyDict_GetItemString(call_kwargs, "dtype")) {
        PyObject *dtype = PyObject_GetAttrString(prototype, "dtype");
        ok = dtype ? PyDict_SetItemString(call_kwargs, "dtype", dtype) : -1;
        Py_XDECREF(dtype);
    }
    if (ok == 0 && !PyDict_GetItemString(call_kwargs, "device")) {
        PyObject *device = PyObject_GetAttrString(prototype, "device");
        ok = device ? PyDict_SetItemString(call_kwargs, "device", device) : -1;
        Py_XDECREF(device);
    }
    /* full_like(x, fill_value, shape=...) -> full(shape, fill_value) */
    if (ok == 0) {
        PyObject *rest = PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args));
        PyObject *head = rest ? PyTuple_Pack(1, shape) : NULL;
        call_args = head ? PySequence_Concat(head, rest) : NULL;
        Py_XDECREF(head);
        Py_XDECREF(rest);
    }
    PyObject *result = call_args ? module_call("gpukit", base, call_args, call_kwargs) : NULL;
    Py_XDECREF(call_args);
    Py_DECREF(call_kwargs);
    return result;
}

/* np.transpose(x, axes=None): gpukit.permute_dims(x, axes), every axis
 * reversed by default. */
static PyObject *transpose(PyObject *args, PyObject *kwargs)
{
    PyObject *x = PyTuple_GET_ITEM(args, 0);
    PyObject *axes = PyTuple_GET_SIZE(args) > 1 ? PyTuple_GET_ITEM(args, 1)
                                                : PyDict_GetItemString(kwargs, "axes");
    PyObject *owned = NULL;
    if (!axes || axes == Py_None) {
        PyObject *ndim = PyObject_GetAttrString(x, "ndim");
        long n = ndim ? PyLong_AsLong(ndim) : -1;
        Py_XDECREF(ndim);
        if (n < 0)
            return NULL;
        owned = PyTuple_New(n);
        for (long i = 0; owned && i < n; i++) {
            PyObject *index = PyLong_FromLong(n - 1 - i);
            if (!index) {
                Py_CLEAR(owned);
                break;
            }
            PyTuple_SET_ITEM(owned, i, index);
        }
        if (!owned)
            return NULL;
        axes = owned;
    }
    PyObject *call_args = PyTuple_Pack(2, x, axes);
    PyObject *result = call_args ? module_call("gpukit", "permute_dims", call_args, NULL) : NULL;
    Py_XDECREF(call_args);
    Py_XDECREF(owned);
    return result;
}

/* NumPy's keywords that gpukit's function (the standard's) spells
 * otherwise, and NumPy's default where the two differ: np.linalg.pinv's
 * rcond is the standard's rtol, and without either NumPy cuts at 1e-15
 * (the standard at max(M, N) * eps). */
static const struct {
    const char *module, *name, *numpy_keyword, *keyword;
    double numpy_default;
} keywords_renamed[] = {
    {"numpy.linalg", "pinv", "rcond", "rtol", 1e-15},
};

/* The parameters of `function` (inspect.Parameter objects, a list), or
 * NULL with no exception when it has no signature to read. */
static PyObject *parameters_of(PyObject *function)
{
    PyObject *inspect = PyImport_ImportModule("inspect");
    PyObject *signature = inspect ? PyObject_CallMethod(inspect, "signature", "O", function) : NULL;
    PyObject *mapping = signature ? PyObject_GetAttrString(signature, "parameters") : NULL;
    PyObject *list = mapping ? PyMapping_Values(mapping) : NULL;
    Py_XDECREF(mapping);
    Py_XDECREF(signature);
    Py_XDECREF(inspect);
    /* inspect's answer for a callable without a signature */
    if (!list && (PyErr_ExceptionMatches(PyExc_ValueError) ||
                  PyErr_ExceptionMatches(PyExc_TypeError)))
        PyErr_Clear();
    return list;
}

/* A parameter's kind (inspect's: 0 positional-only, 1 positional or
 * keyword, 2 *args, 3 keyword-only, 4 **kwargs); -1 when unknown. */
static long parameter_kind(PyObject *parameter)
{
    PyObject *kind = PyObject_GetAttrString(parameter, "kind");
    long value = kind ? PyLong_AsLong(kind) : -1;
    Py_XDECREF(kind);
    return value;
}

/* The names of the parameters `function` (gpukit's or NumPy's) takes by
 * position, in order: a tuple, or None when it takes any number (*args)
 * or its signature cannot be read. Read once per function (the cache is
 * in the module state); a new reference, NULL with an exception. */
static PyObject *positional_names(gkpy_state *state, PyObject *function)
{
    if (!state->positional_names && !(state->positional_names = PyDict_New()))
        return NULL;
    PyObject *known = PyDict_GetItemWithError(state->positional_names, function);
    if (known || PyErr_Occurred())
        return Py_XNewRef(known);
    PyObject *parameters = parameters_of(function);
    PyObject *names = parameters ? PyList_New(0) : NULL;
    bool any_number = !parameters && !PyErr_Occurred();
    for (Py_ssize_t i = 0; names && i < PyList_GET_SIZE(parameters); i++) {
        PyObject *parameter = PyList_GET_ITEM(parameters, i);
        long kind = parameter_kind(parameter);
        any_number |= kind == 2;
        if (kind != 0 && kind != 1)
            break;
        PyObject *name = PyObject_GetAttrString(parameter, "name");
        if (!name || PyList_Append(names, name) < 0)
            Py_CLEAR(names);
        Py_XDECREF(name);
    }
    Py_XDECREF(parameters);
    PyObject *value = PyErr_Occurred() ? NULL
                      : any_number     ? Py_NewRef(Py_None)
                                       : PyList_AsTuple(names);
    Py_XDECREF(names);
    /* another thread may have read it meanwhile (inspect runs Python):
     * the first stored stays */
    PyObject *stored = value ? PyDict_SetDefault(state->positional_names, function, value)
                             : NULL;
    Py_XDECREF(value);
    return Py_XNewRef(stored);
}

/* args[count:] as keywords under the names NumPy's `numpy_function`
 * gives them, added to *kwargs (a new dict); 0 when it cannot (no such
 * names, a keyword given twice: the call then stays as it was, for
 * gpukit's function to refuse), -1 with an exception. */
static int extras_as_keywords(gkpy_state *state, PyObject *numpy_function, PyObject *args,
                              Py_ssize_t count, PyObject **kwargs)
{
    PyObject *names = positional_names(state, numpy_function);
    Py_ssize_t given = PyTuple_GET_SIZE(args);
    if (!names)
        return -1;
    int moved = names != Py_None && PyTuple_GET_SIZE(names) >= given ? 1 : 0;
    PyObject *keywords = moved ? PyDict_Copy(*kwargs) : NULL;
    if (moved && !keywords)
        moved = -1;
    for (Py_ssize_t at = count; moved == 1 && at < given; at++) {
        PyObject *name = PyTuple_GET_ITEM(names, at);
        int taken = PyDict_Contains(keywords, name);
        if (taken == 0 && PyDict_SetItem(keywords, name, PyTuple_GET_ITEM(args, at)) < 0)
            taken = -1;
        if (taken != 0)
            moved = taken < 0 ? -1 : 0;
    }
    Py_DECREF(names);
    if (moved == 1)
        Py_SETREF(*kwargs, keywords);
    else
        Py_XDECREF(keywords);
    return moved;
}

/* NumPy's keyword `numpy_keyword` as gpukit's `keyword`, NumPy's default
 * when neither is given (keywords_renamed's entry `i`); *kwargs is
 * replaced by a new dict. -1 with an exception. */
static int rename_keyword(size_t i, const char *function_name, PyObject **kwargs)
{
    PyObject *value = PyDict_GetItemString(*kwargs, keywords_renamed[i].numpy_keyword);
    bool ours_given = PyDict_GetItemString(*kwargs, keywords_renamed[i].keyword) != NULL;
    if (value && value != Py_None && ours_given) {
        PyErr_Format(PyExc_ValueError, "%s: `%s` and `%s` can't be both set", function_name,
                     keywords_renamed[i].numpy_keyword, keywords_renamed[i].keyword);
        return -1;
    }
    PyObject *keywords = PyDict_Copy(*kwargs);
    PyObject *ours = !value || value == Py_None
                         ? PyFloat_FromDouble(keywords_renamed[i].numpy_default)
                         : Py_NewRef(value);
    int status = keywords && ours ? 0 : -1;
    if (status == 0 && value)
        status = PyDict_DelItemString(keywords, keywords_renamed[i].numpy_keyword);
    if (status == 0 && !ours_given)
        status = PyDict_SetItemString(keywords, keywords_renamed[i].keyword, ours);
    Py_XDECREF(ours);
    if (status < 0) {
        Py_XDECREF(keywords);
        return -1;
    }
    Py_SETREF(*kwargs, keywords);
    return 0;
}

/* NumPy's call in gpukit's terms: the positional arguments beyond those
 * gpukit's `function` takes by position (np.fft.fft(x, 8): gpukit's n is
 * keyword-only) become keywords under NumPy's names, and the keywords
 * gpukit spells otherwise are renamed (keywords_renamed). *args and
 * *kwargs are replaced by new references where they change; -1 with an
 * exception. */
static int numpy_call_in_our_terms(gkpy_state *state, PyObject *numpy_function,
                                   PyObject *function, const char *module, const char *name,
                                   PyObject **args, PyObject **kwargs)
{
    PyObject *names = positional_names(state, function);
    if (!names)
        return -1;
    Py_ssize_t count = names == Py_None ? PY_SSIZE_T_MAX : PyTuple_GET_SIZE(names);
    Py_DECREF(names);
    if (PyTuple_GET_SIZE(*args) > count) {
        int moved = extras_as_keywords(state, numpy_function, *args, count, kwargs);
        if (moved < 0)
            return -1;
        if (moved)
            Py_SETREF(*args, PyTuple_GetSlice(*args, 0, count));
        if (!*args)
            return -1;
    }
    for (size_t i = 0; i < sizeof keywords_renamed / sizeof keywords_renamed[0]; i++)
        if (strcmp(module, keywords_renamed[i].module) == 0 &&
            strcmp(name, keywords_renamed[i].name) == 0 && rename_keyword(i, name, kwargs) < 0)
            return -1;
    return 0;
}

/* --- NumPy's creation functions, called with like= a gpukit array --- */

/* Whether `name` is one of NumPy's functions that take like=, and so meet
 * a gpukit array only through it (gpukit has these). */
static bool created_like(const char *name)
{
    static const char *const names[] = {"asarray", "arange", "empty", "eye",
                                        "full",    "ones",   "zeros"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return true;
    return false;
}

/* The argument named `name`, or at `position` (-1: keyword only); NULL
 * (no exception) when absent or None. Borrowed. */
static PyObject *argument(PyObject *args, PyObject *kwargs, Py_ssize_t position, const char *name)
{
    PyObject *value = position >= 0 && position < PyTuple_GET_SIZE(args)
                          ? PyTuple_GET_ITEM(args, position)
                          : PyDict_GetItemString(kwargs, name);
    return value == Py_None ? NULL : value;
}

/* The dtype NumPy's arange gives for its bounds (`bounds`: those given,
 * a tuple): their dtypes promoted as arrays', with start 0 where only
 * stop is given. */
static PyObject *arange_dtype(PyObject *bounds)
{
    Py_ssize_t n = PyTuple_GET_SIZE(bounds);
    PyObject *dtypes = PyTuple_New(n == 1 ? 2 : n);
    for (Py_ssize_t i = 0; dtypes && i < PyTuple_GET_SIZE(dtypes); i++) {
        PyObject *value = i < n ? PyTuple_GET_ITEM(bounds, i) : NULL;
        PyObject *one = value ? PyTuple_Pack(1, value) : Py_BuildValue("(i)", 0);
        PyObject *array = one ? module_call("numpy", "asarray", one, NULL) : NULL;
        PyObject *dtype = array ? PyObject_GetAttrString(array, "dtype") : NULL;
        Py_XDECREF(array);
        Py_XDECREF(one);
        if (!dtype)
            Py_CLEAR(dtypes);
        else
            PyTuple_SET_ITEM(dtypes, i, dtype);
    }
    PyObject *dtype = dtypes ? module_call("numpy", "result_type", dtypes, NULL) : NULL;
    Py_XDECREF(dtypes);
    return dtype;
}

/* What NumPy's function would make, given to gpukit's: on the like=
 * array's device (where device= is absent or None) and of NumPy's dtype
 * where none is given: float64 for zeros, ones, empty and eye;
 * the fill value's for full; the bounds' for arange; and the data as
 * NumPy reads it for asarray (gpukit's defaults, float32 among them,
 * would otherwise stand in for NumPy's). kwargs is updated, *args
 * replaced where it changes; -1 with an exception. */
static int numpy_creation_defaults(PyObject *self, const char *name, PyObject **args,
                                   PyObject *kwargs)
{
    if (!argument(*args, kwargs, -1, "device")) {
        PyObject *device = PyObject_GetAttrString(self, "device");
        int set = device ? PyDict_SetItemString(kwargs, "device", device) : -1;
        Py_XDECREF(device);
        if (set < 0)
            return -1;
    }
    /* eye's M, a keyword from NumPy, is gpukit's second positional n_cols */
    PyObject *columns = strcmp(name, "eye") == 0 ? PyDict_GetItemString(kwargs, "M") : NULL;
    if (columns && PyTuple_GET_SIZE(*args) == 1) {
        PyObject *both = PyTuple_Pack(2, PyTuple_GET_ITEM(*args, 0), columns);
        if (!both || PyDict_DelItemString(kwargs, "M") < 0) {
            Py_XDECREF(both);
            return -1;
        }
        Py_SETREF(*args, both);
    }
    if (argument(*args, kwargs, strcmp(name, "full") == 0 ? 2 : -1, "dtype"))
        return 0;
    PyObject *dtype = NULL, *inputs = NULL;
    if (strcmp(name, "full") == 0) {
        PyObject *fill = argument(*args, kwargs, 1, "fill_value");
        inputs = fill ? PyTuple_Pack(1, fill) : NULL;
        PyObject *array = inputs ? module_call("numpy", "asarray", inputs, NULL) : NULL;
        dtype = array ? PyObject_GetAttrString(array, "dtype") : NULL;
        Py_XDECREF(array);
    } else if (strcmp(name, "arange") == 0) {
        PyObject *bounds[3] = {argument(*args, kwargs, 0, "start"),
                               argument(*args, kwargs, 1, "stop"),
                               argument(*args, kwargs, 2, "step")};
        inputs = PyTuple_New(0);
        for (int i = 0; inputs && i < 3; i++) {
            PyObject *one = bounds[i] ? PyTuple_Pack(1, bounds[i]) : NULL;
            if (one)
                Py_SETREF(inputs, PySequence_Concat(inputs, one));
            Py_XDECREF(one);
        }
        dtype = inputs && PyTuple_GET_SIZE(inputs) > 0 ? arange_dtype(inputs) : NULL;
    } else if (strcmp(name, "asarray") == 0) {
        PyObject *data = PyTuple_GET_SIZE(*args) > 0 ? PyTuple_GET_ITEM(*args, 0) : NULL;
        if (data && !Py_IS_TYPE(data, Py_TYPE(self)) && !gkpy_is_numpy(data)) {
            PyObject *one = PyTuple_Pack(1, data);
            PyObject *read = one ? module_call("numpy", "asarray", one, NULL) : NULL;
            PyObject *rest = read ? PyTuple_GetSlice(*args, 1, PyTuple_GET_SIZE(*args)) : NULL;
            PyObject *head = rest ? PyTuple_Pack(1, read) : NULL;
            PyObject *replaced = head ? PySequence_Concat(head, rest) : NULL;
            Py_XDECREF(head);
            Py_XDECREF(rest);
            Py_XDECREF(read);
            Py_XDECREF(one);
            if (!replaced)
                return -1;
            Py_SETREF(*args, replaced);
        }
        return 0;
    } else {
        dtype = PyUnicode_FromString("float64");
    }
    Py_XDECREF(inputs);
    if (!dtype)
        return PyErr_Occurred() ? -1 : 0;
    int set = PyDict_SetItemString(kwargs, "dtype", dtype);
    Py_DECREF(dtype);
    return set;
}

/* NumPy scalars among the arguments of the functions whose parameters
 * are plain numbers (full's and full_like's fill value, arange's and
 * linspace's bounds), as the Python numbers they hold (elsewhere they
 * are 0-d arrays of their dtype, as in NumPy 2's promotion). *args and
 * kwargs are updated; -1 with an exception. */
static int numpy_scalars_as_numbers(const char *name, PyObject **args, PyObject *kwargs)
{
    if (strcmp(name, "full") != 0 && strcmp(name, "full_like") != 0 &&
        strcmp(name, "arange") != 0 && strcmp(name, "linspace") != 0)
        return 0;
    PyObject *list = PySequence_List(*args);
    for (Py_ssize_t i = 0; list && i < PyList_GET_SIZE(list); i++) {
        PyObject *item = PyList_GET_ITEM(list, i);
        if (gkpy_is_numpy_scalar(item)) {
            PyObject *number = PyObject_CallMethod(item, "item", NULL);
            if (!number || PyList_SetItem(list, i, number) < 0)
                Py_CLEAR(list);
        }
    }
    PyObject *key, *value;
    Py_ssize_t at = 0;
    while (list && PyDict_Next(kwargs, &at, &key, &value)) {
        if (!gkpy_is_numpy_scalar(value))
            continue;
        PyObject *number = PyObject_CallMethod(value, "item", NULL);
        /* replacing a present key's value does not disturb PyDict_Next */
        if (!number || PyDict_SetItem(kwargs, key, number) < 0)
            Py_CLEAR(list);
        Py_XDECREF(number);
    }
    PyObject *tuple = list ? PyList_AsTuple(list) : NULL;
    Py_XDECREF(list);
    if (!tuple)
        return -1;
    Py_SETREF(*args, tuple);
    return 0;
}

PyObject *gkpy_array_function(PyObject *self, PyObject *args, PyObject *kwargs)
{
    PyObject *func, *types, *func_args, *func_kwargs;
    static char *keywords[] = {"func", "types", "args", "kwargs", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOO:__array_function__", keywords, &func,
                                     &types, &func_args, &func_kwargs))
        return NULL;
    /* Only gpukit arrays and NumPy's own types take part (NEP 18). */
    PyObject *iterator = PyObject_GetIter(types);
    if (!iterator)
        return NULL;
    PyObject *type;
    bool others = false;
    while ((type = PyIter_Next(iterator))) {
        const char *name = PyType_Check(type) ? ((PyTypeObject *)type)->tp_name : "";
        others |= !PyObject_TypeCheck(self, (PyTypeObject *)type) &&
                  strncmp(name, "numpy.", 6) != 0;
        Py_DECREF(type);
    }
    Py_DECREF(iterator);
    if (PyErr_Occurred())
        return NULL;
    if (others || !PyTuple_Check(func_args) || !PyDict_Check(func_kwargs))
        return Py_NewRef(Py_NotImplemented);
    PyObject *name = PyObject_GetAttrString(func, "__name__");
    PyObject *module = name ? PyObject_GetAttrString(func, "__module__") : NULL;
    const char *text = name ? PyUnicode_AsUTF8(name) : NULL;
    PyObject *function = text && module ? gpukit_function(module, text) : NULL;
    Py_INCREF(func_args);
    Py_INCREF(func_kwargs);
    bool unsupported = false, failed = PyErr_Occurred() != NULL;
    const char *module_text = function && PyUnicode_Check(module) ? PyUnicode_AsUTF8(module)
                                                                   : NULL;
    if (function && (!module_text ||
                     numpy_call_in_our_terms(gkpy_state_of_type(Py_TYPE(self)), func, function,
                                             module_text, text, &func_args, &func_kwargs) < 0))
        failed = true;
    PyObject *kept =
        text && module && !failed ? plain_kwargs(func_kwargs, text, &unsupported) : NULL;
    if (kept && function && created_like(text) &&
        numpy_creation_defaults(self, text, &func_args, kept) < 0)
        Py_CLEAR(kept);
    if (kept && function && numpy_scalars_as_numbers(text, &func_args, kept) < 0)
        Py_CLEAR(kept);
    PyObject *result = NULL;
    PyObject *shape = kept ? PyDict_GetItemString(kept, "shape") : NULL;
    if (kept && strcmp(text, "transpose") == 0 && PyTuple_GET_SIZE(func_args) >= 1)
        result = transpose(func_args, kept);
    else if (shape && shape != Py_None && PyTuple_GET_SIZE(func_args) >= 1 &&
        strlen(text) > 5 && strcmp(text + strlen(text) - 5, "_like") == 0)
        result = like_with_shape(text, func_args, kept);
    else if (kept)
        result = call(self, Py_XNewRef(function), func_args, kept, NULL);
    else if (text && module && unsupported)
        result = Py_NewRef(Py_NotImplemented);
    Py_XDECREF(function);
    Py_XDECREF(kept);
    Py_XDECREF(func_args);
    Py_XDECREF(func_kwargs);
    Py_XDECREF(module);
    Py_XDECREF(name);
    return result;
}

/* --- NumPy's ndarray methods that code written for NumPy calls on chunks
 * (dask.array does), beyond the array API standard's --- */

PyObject *gkpy_array_squeeze(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"axis", NULL};
    PyObject *axis = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:squeeze", keywords, &axis))
        return NULL;
    PyObject *owned = NULL;
    if (axis == Py_None) {
        /* NumPy's default: every axis of length 1 */
        PyObject *shape = PyObject_GetAttrString(self, "shape");
        if (!shape)
            return NULL;
        owned = PyList_New(0);
        for (Py_ssize_t i = 0; owned && i < PyTuple_GET_SIZE(shape); i++) {
            long length = PyLong_AsLong(PyTuple_GET_ITEM(shape, i));
            if (length == -1 && PyErr_Occurred()) {
                Py_CLEAR(owned);
                break;
            }
            if (length != 1)
                continue;
            PyObject *index = PyLong_FromSsize_t(i);
            if (!index || PyList_Append(owned, index) < 0)
                Py_CLEAR(owned);
            Py_XDECREF(index);
        }
        Py_DECREF(shape);
        if (!owned)
            return NULL;
        PyObject *tuple = PyList_AsTuple(owned);
        Py_DECREF(owned);
        if (!tuple)
            return NULL;
        owned = tuple;
        axis = owned;
    }
    PyObject *call_args = PyTuple_Pack(2, self, axis);
    PyObject *result = call_args ? module_call("gpukit", "squeeze", call_args, NULL) : NULL;
    Py_XDECREF(call_args);
    Py_XDECREF(owned);
    return result;
}

PyObject *gkpy_array_ravel(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyObject_CallMethod(self, "reshape", "(i)", -1);
}
