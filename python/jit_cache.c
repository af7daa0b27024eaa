/* The disk cache of @gpukit.jit's translations (docs/KERNELS.md).
 *
 * A translation follows from the kernel's code, the argument types and the
 * translator (GKPY_JIT_HASH), and from every object the translator
 * resolved on the way: the globals and closure values of the kernel and of
 * each device function it calls, the attributes read from them (Cfg.N,
 * helpers.f), shared arrays' shapes and dtypes. The translator records
 * each as a path from the kernel with the object found
 * (gkpy_jit_translate's `reads`). Two entries are stored per translation:
 *
 * - an index, keyed by the kernel's code and the argument types, holding
 *   the paths read;
 * - the translation, keyed by those paths and a fingerprint of what each
 *   led to (a number's value, a device function's code, an intrinsic's
 *   name, ...).
 *
 * A later process reads the index, resolves its paths as the translator
 * does, and finds the translation only when every fingerprint agrees: the
 * translator would then read the same things in the same order and write
 * the same text. Anything else misses and translates again; an index of
 * another version of the program (other paths) just gives a key nobody
 * stored. A translation is stored only when resolving its paths again
 * gives what the translator saw, so a lookup never finds a translation its
 * own resolution would disagree with. */
#include "jit.h"

#include <stdlib.h>
#include <string.h>

/* The first line of an index entry: a change of format changes it. */
#define INDEX_HEADER "gkjit-reads 1"

/* A code object as far as its translation goes (a new list): the AST it is
 * parsed from shows in its name, bytecode, constants and names. */
static PyObject *code_fingerprint(PyObject *code)
{
    static const char *const fields[] = {"co_name",     "co_code",     "co_consts",  "co_names",
                                         "co_varnames", "co_freevars", "co_argcount"};
    PyObject *parts = PyList_New(0);
    for (size_t i = 0; parts && i < sizeof fields / sizeof *fields; i++) {
        PyObject *item = PyObject_GetAttrString(code, fields[i]);
        PyObject *repr = item ? PyObject_Repr(item) : NULL;
        if (!repr || PyList_Append(parts, repr) < 0)
            Py_CLEAR(parts);
        Py_XDECREF(item);
        Py_XDECREF(repr);
    }
    return parts;
}

/* What the translator uses of an object it read (a new tuple): a number's
 * type and value; else the position among `seen` (to which it is added)
 * of the first object read that is the same one, since the translator
 * translates a device function once however it is reached (so one is
 * known by its py_func), with a device function's code (its own reads
 * are paths of their own), an intrinsic's name, a dtype's name, or a
 * sequence's items (a shared array's shape). NULL `object`: a path that
 * leads nowhere now. */
static PyObject *fingerprint(PyObject *object, PyObject *intrinsics, PyObject *seen)
{
    if (!object)
        return Py_BuildValue("(s)", "missing");
    if (gkpy_jit_number(object, NULL, NULL))
        return Py_BuildValue("(ssO)", "number", Py_TYPE(object)->tp_name, object);
    PyObject *python = gkpy_jit_device_function(object);
    PyErr_Clear();
    PyObject *identity = python ? python : object;
    Py_ssize_t index = 0, count = PyList_GET_SIZE(seen);
    while (index < count && PyList_GET_ITEM(seen, index) != identity)
        index++;
    /* The list also keeps each object alive, so no address is reused. */
    if (index == count && PyList_Append(seen, identity) < 0) {
        Py_XDECREF(python);
        return NULL;
    }
    if (python) {
        PyObject *code = PyFunction_Check(python) ? code_fingerprint(PyFunction_GET_CODE(python))
                                                  : Py_NewRef(Py_None);
        Py_DECREF(python);
        return code ? Py_BuildValue("(snN)", "device function", index, code) : NULL;
    }
    PyObject *intrinsic = gkpy_jit_intrinsic_name(intrinsics, object); /* borrowed */
    PyObject *dtype = intrinsic ? NULL : gkpy_jit_dtype_name(object);
    PyObject *items = PyTuple_Check(object) || PyList_Check(object) ? PyObject_Repr(object) : NULL;
    PyErr_Clear();
    PyObject *result = Py_BuildValue("(ssnOOO)", "object", Py_TYPE(object)->tp_name, index,
                                     intrinsic ? intrinsic : Py_None, dtype ? dtype : Py_None,
                                     items ? items : Py_None);
    Py_XDECREF(dtype);
    Py_XDECREF(items);
    return result;
}

/* `name` read in `function` as the translator reads it there: 'g' a name
 * (closure, globals, builtins), 'e' an expression evaluated in the
 * globals. A new reference, or NULL. */
static PyObject *read_in(PyObject *function, char kind, PyObject *name)
{
    if (!function || !PyFunction_Check(function))
        return NULL;
    PyObject *globals = PyFunction_GET_GLOBALS(function);
    if (kind == 'e') {
        const char *text = PyUnicode_AsUTF8(name);
        return text ? PyRun_String(text, Py_eval_input, globals, globals) : NULL;
    }
    PyObject *freevars = PyObject_GetAttrString(PyFunction_GET_CODE(function), "co_freevars");
    PyObject *found = freevars ? gkpy_jit_lookup(freevars, PyFunction_GET_CLOSURE(function),
                                                 globals, name)
                               : NULL;
    Py_XDECREF(freevars);
    return found;
}

/* What `path` leads to from `kernel` now (a new reference), or NULL (no
 * error set) when it leads nowhere. A "g:" or "e:" step reads in the
 * kernel at the start, later in the device function reached so far; an
 * "a:" step reads an attribute of the object reached. */
static PyObject *resolve(PyObject *kernel, PyObject *path)
{
    PyObject *at = NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(path); i++) {
        PyObject *step = PyTuple_GET_ITEM(path, i);
        const char *text = PyUnicode_Check(step) ? PyUnicode_AsUTF8(step) : NULL;
        bool valid = text && text[0] && text[1] == ':' && (i > 0 || text[0] != 'a');
        PyObject *name = valid ? PyUnicode_FromString(text + 2) : NULL;
        PyObject *next = NULL;
        if (name && text[0] == 'a') {
            next = PyObject_GetAttr(at, name);
        } else if (name && (text[0] == 'g' || text[0] == 'e')) {
            PyObject *function = i == 0 ? Py_NewRef(kernel) : gkpy_jit_device_function(at);
            next = read_in(function, text[0], name);
            Py_XDECREF(function);
        }
        Py_XDECREF(name);
        Py_XDECREF(at);
        at = next;
        if (!at)
            break;
    }
    PyErr_Clear();
    return at;
}

/* The fingerprint of each read (a new list): of `objects` as the
 * translator found them, or, with `objects` NULL, of what `paths` lead to
 * from `kernel` now. */
static PyObject *fingerprints(PyObject *kernel, PyObject *paths, PyObject *objects,
                              PyObject *intrinsics)
{
    PyObject *seen = PyList_New(0), *result = PyList_New(0);
    for (Py_ssize_t i = 0; seen && result && i < PyList_GET_SIZE(paths); i++) {
        PyObject *object = objects ? Py_NewRef(PyList_GET_ITEM(objects, i))
                                   : resolve(kernel, PyList_GET_ITEM(paths, i));
        PyObject *print = fingerprint(object, intrinsics, seen);
        if (!print || PyList_Append(result, print) < 0)
            Py_CLEAR(result);
        Py_XDECREF(print);
        Py_XDECREF(object);
    }
    Py_XDECREF(seen);
    if (!seen)
        Py_CLEAR(result);
    return result;
}

/* The reads in the order first made, one per path: *paths and *objects
 * (new lists). -1 (no error set) when they cannot key the cache: an
 * object of unknown origin (None), or a path read twice that gave two
 * different objects. */
static int first_reads(PyObject *reads, PyObject **paths, PyObject **objects)
{
    PyObject *found = PyDict_New();
    int status = found ? 0 : -1;
    for (Py_ssize_t i = 0; status == 0 && i < PyList_GET_SIZE(reads); i++) {
        PyObject *entry = PyList_GET_ITEM(reads, i);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2) {
            status = -1;
            break;
        }
        PyObject *object = PyTuple_GET_ITEM(entry, 1);
        PyObject *first = PyDict_SetDefault(found, PyTuple_GET_ITEM(entry, 0), object);
        if (!first || (first != object && (Py_TYPE(first) != Py_TYPE(object) ||
                                           PyObject_RichCompareBool(first, object, Py_EQ) != 1)))
            status = -1;
    }
    /* Dicts keep their order of insertion. */
    *paths = status == 0 ? PyDict_Keys(found) : NULL;
    *objects = status == 0 ? PyDict_Values(found) : NULL;
    Py_XDECREF(found);
    if (!*paths || !*objects) {
        Py_CLEAR(*paths);
        Py_CLEAR(*objects);
        PyErr_Clear();
        return -1;
    }
    return 0;
}

/* `parts` (stolen) as a cache key: its repr's bytes. */
static PyObject *key_bytes(PyObject *parts)
{
    PyObject *repr = parts ? PyObject_Repr(parts) : NULL;
    PyObject *key = repr ? PyUnicode_AsUTF8String(repr) : NULL;
    Py_XDECREF(parts);
    Py_XDECREF(repr);
    return key;
}

/* The key of the index entry, or of the translation reading `paths` to
 * objects of these `prints`. */
static PyObject *index_key(PyObject *head)
{
    return key_bytes(Py_BuildValue("(sO)", "index", head));
}

static PyObject *translation_key(PyObject *head, PyObject *paths, PyObject *prints)
{
    return key_bytes(Py_BuildValue("(sOOO)", "translation", head, paths, prints));
}

/* The index entry's text: the header, then a line per path, its steps
 * joined by tabs (names hold neither, and ast.unparse writes an
 * expression on one line, a tab in a string as \t). Were a path to come
 * back otherwise, its key would differ, so that would only miss. */
static PyObject *index_text(PyObject *paths)
{
    PyObject *lines = Py_BuildValue("[s]", INDEX_HEADER);
    PyObject *tab = PyUnicode_FromString("\t"), *newline = PyUnicode_FromString("\n");
    for (Py_ssize_t i = 0; lines && tab && i < PyList_GET_SIZE(paths); i++) {
        PyObject *line = PyUnicode_Join(tab, PyList_GET_ITEM(paths, i));
        if (!line || PyList_Append(lines, line) < 0)
            Py_CLEAR(lines);
        Py_XDECREF(line);
    }
    PyObject *text = lines && newline ? PyUnicode_Join(newline, lines) : NULL;
    Py_XDECREF(lines);
    Py_XDECREF(tab);
    Py_XDECREF(newline);
    return text;
}

/* The paths of an index entry's text (a new list), or NULL. */
static PyObject *index_paths(const char *text)
{
    PyObject *all = PyUnicode_FromString(text);
    PyObject *newline = PyUnicode_FromString("\n"), *tab = PyUnicode_FromString("\t");
    PyObject *lines = all && newline ? PyUnicode_Split(all, newline, -1) : NULL;
    PyObject *paths = lines && tab && PyList_GET_SIZE(lines) > 0 &&
                              PyUnicode_CompareWithASCIIString(PyList_GET_ITEM(lines, 0),
                                                               INDEX_HEADER) == 0
                          ? PyList_New(0)
                          : NULL;
    for (Py_ssize_t i = 1; paths && i < PyList_GET_SIZE(lines); i++) {
        PyObject *steps = PyUnicode_Split(PyList_GET_ITEM(lines, i), tab, -1);
        PyObject *path = steps ? PyList_AsTuple(steps) : NULL;
        if (!path || PyList_Append(paths, path) < 0)
            Py_CLEAR(paths);
        Py_XDECREF(steps);
        Py_XDECREF(path);
    }
    Py_XDECREF(all);
    Py_XDECREF(newline);
    Py_XDECREF(tab);
    Py_XDECREF(lines);
    return paths;
}

/* What every key of this kernel holds (a new tuple): the translator (its
 * version and sources' hash), the argument types, the kernel's name and
 * its code. */
static PyObject *key_head(PyObject *function, int nargs, const jit_arg_type *args,
                          const char *kernel_name)
{
    if (!PyFunction_Check(function))
        return NULL;
    PyObject *types = PyBytes_FromStringAndSize((const char *)args,
                                                (Py_ssize_t)(sizeof *args * (size_t)nargs));
    PyObject *code = code_fingerprint(PyFunction_GET_CODE(function));
    if (!types || !code) {
        Py_XDECREF(types);
        Py_XDECREF(code);
        return NULL;
    }
    return Py_BuildValue("(sNsN)", "gkjit " GPUKIT_VERSION " " GKPY_JIT_HASH, types, kernel_name,
                         code);
}

/* The text cached under `key` (bytes) as a str, or NULL (no error set). */
static PyObject *cache_get(PyObject *key)
{
    char *text = NULL;
    if (!key || gk_kernel_cache_get(PyBytes_AS_STRING(key), (size_t)PyBytes_GET_SIZE(key),
                                    &text) != GK_OK)
        return NULL;
    PyObject *result = PyUnicode_FromString(text);
    free(text);
    PyErr_Clear();
    return result;
}

static void cache_put(PyObject *key, PyObject *text)
{
    const char *utf8 = key && text ? PyUnicode_AsUTF8(text) : NULL;
    if (utf8)
        (void)gk_kernel_cache_put(PyBytes_AS_STRING(key), (size_t)PyBytes_GET_SIZE(key), utf8);
}

/* The translation an earlier process stored for what `function` reads
 * now, or NULL (no error set). */
static PyObject *cached(PyObject *function, PyObject *head, PyObject *intrinsics)
{
    PyObject *index = index_key(head);
    PyObject *text = cache_get(index);
    const char *utf8 = text ? PyUnicode_AsUTF8(text) : NULL;
    PyObject *paths = utf8 ? index_paths(utf8) : NULL;
    PyObject *prints = paths ? fingerprints(function, paths, NULL, intrinsics) : NULL;
    PyObject *key = prints ? translation_key(head, paths, prints) : NULL;
    PyObject *source = cache_get(key);
    Py_XDECREF(index);
    Py_XDECREF(text);
    Py_XDECREF(paths);
    Py_XDECREF(prints);
    Py_XDECREF(key);
    PyErr_Clear();
    return source;
}

/* Stores `source`, translated with these `reads`, and the index naming
 * them; nothing when the reads cannot key it or resolving them now gives
 * other fingerprints (a lookup would never find it). */
static void store(PyObject *function, PyObject *head, PyObject *intrinsics, PyObject *reads,
                  PyObject *source)
{
    PyObject *paths, *objects;
    if (first_reads(reads, &paths, &objects) < 0)
        return;
    PyObject *seen = fingerprints(function, paths, objects, intrinsics);
    PyObject *now = seen ? fingerprints(function, paths, NULL, intrinsics) : NULL;
    PyObject *key = now ? translation_key(head, paths, seen) : NULL;
    PyObject *check = key ? translation_key(head, paths, now) : NULL;
    if (check && PyObject_RichCompareBool(key, check, Py_EQ) == 1) {
        PyObject *index = index_key(head), *text = index_text(paths);
        cache_put(key, source);
        cache_put(index, text);
        Py_XDECREF(index);
        Py_XDECREF(text);
    }
    Py_DECREF(paths);
    Py_DECREF(objects);
    Py_XDECREF(seen);
    Py_XDECREF(now);
    Py_XDECREF(key);
    Py_XDECREF(check);
    PyErr_Clear();
}

PyObject *gkpy_jit_translate_cached(PyObject *function, int nargs, const jit_arg_type *args,
                                    char *kernel_name)
{
    gkpy_jit_kernel_name(function, kernel_name);
    PyObject *intrinsics = gkpy_jit_intrinsics();
    PyObject *head = intrinsics ? key_head(function, nargs, args, kernel_name) : NULL;
    PyObject *reads = head ? PyList_New(0) : NULL;
    /* Without a key the translation just is not cached. */
    PyErr_Clear();
    PyObject *source = reads ? cached(function, head, intrinsics) : NULL;
    if (!source) {
        source = gkpy_jit_translate(function, nargs, args, kernel_name, reads);
        if (source && reads)
            store(function, head, intrinsics, reads, source);
    }
    Py_XDECREF(intrinsics);
    Py_XDECREF(head);
    Py_XDECREF(reads);
    return source;
}
