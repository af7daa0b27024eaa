/* gpukit.Reservation, reserve(), pick() and current_reservation(): the
 * selection of `gpukit pick` and the leases of `gpukit run`, from Python.
 *
 * A reservation holds a lease of the machine-wide lease directory through a
 * close-on-exec descriptor of this process: programs the process starts do
 * not keep it alive after the process ends, and the kernel drops it when
 * the process ends however it ends. The module state keeps the reservation
 * (state->held_reservation), so `gpukit.reserve()` at the top of a notebook
 * holds its GPU until release() or the end of the process even when the
 * result is not kept. A process holds at most one reservation: its own, or
 * the one it inherited from `gpukit run` or a gpukit Jupyter kernel
 * (GPUKIT_LEASE names it). */
#include "gkpy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if PY_VERSION_HEX >= 0x030C0000
#define GKPY_T_OBJECT Py_T_OBJECT_EX
#define GKPY_READONLY Py_READONLY
#else
#include <structmember.h>
#define GKPY_T_OBJECT T_OBJECT_EX
#define GKPY_READONLY READONLY
#endif

typedef struct reservation_object {
    PyObject_HEAD
    PyObject *gpus;      /* tuple of gpukit.GPU, in choice order */
    PyObject *uuids;     /* tuple of str: what CUDA_VISIBLE_DEVICES names */
    PyObject *lease;     /* str: the lease's file name */
    PyObject *request;   /* str: the request in words */
    PyObject *since;     /* float: when it was made, seconds since the epoch */
    PyObject *saved_env; /* {name: (what reserve set, what was there or None)}; NULL when none */
    gk_lease_dir *dir;   /* ours to release; NULL when inherited or released */
    int fd;              /* holds the lease; -1 when inherited or released */
    bool released;
    bool inherited;      /* made by the process that started this one */
    /* the reserve() calls that have returned it and not been left by a
     * `with` since: a `with` ends it only when it is the last (a nested
     * `with gpukit.reserve()`, or one in a notebook cell under a held
     * reservation, gets the same object and must not end it) */
    int claims;
    char devices[160];   /* "GPU 3" or "GPUs 3, 6", for the repr */
} reservation_object;

/* --- the request, from keywords --- */

enum option_kind { OPT_INT, OPT_STR, OPT_SIZE, OPT_RATIO, OPT_LIST };

typedef struct option {
    const char *keyword; /* Python's spelling */
    const char *name;    /* gk_request_set's (the command line's) */
    enum option_kind kind;
} option;

/* The keywords of pick() and reserve() after count, in their order. */
static const option options_table[] = {
    {"count", "count", OPT_INT},
    {"order", "order", OPT_STR},
    {"min_free", "min-free", OPT_SIZE},
    {"min_free_ratio", "min-free-ratio", OPT_RATIO},
    {"max_util", "max-util", OPT_INT},
    {"min_total", "min-total", OPT_SIZE},
    {"max_procs", "max-procs", OPT_INT},
    {"gpus", "gpus", OPT_LIST},
    {"exclude", "exclude", OPT_LIST},
    {"seed", "seed", OPT_INT},
};
#define OPTION_COUNT (sizeof options_table / sizeof options_table[0])

typedef struct request_args {
    gk_request request;
    PyObject *texts[OPTION_COUNT]; /* the strings the request points into */
} request_args;

static void request_args_free(request_args *args)
{
    for (size_t i = 0; i < OPTION_COUNT; i++)
        Py_CLEAR(args->texts[i]);
}

static bool is_int(PyObject *value)
{
    return PyLong_Check(value) && !PyBool_Check(value);
}

/* A list of GPUs as the command line writes it: "0,1" or UUIDs. */
static PyObject *list_text(const option *opt, PyObject *value)
{
    if (PyUnicode_Check(value))
        return Py_NewRef(value);
    if (is_int(value))
        return PyObject_Str(value);
    PyObject *items = PySequence_Fast(value, "");
    if (!items) {
        PyErr_Format(PyExc_TypeError,
                     "%s: give GPUs as an index, a UUID, or a list of them, not %.100s",
                     opt->keyword, Py_TYPE(value)->tp_name);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    PyObject *parts = PyList_New(n);
    for (Py_ssize_t i = 0; parts && i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(items, i);
        PyObject *part = NULL;
        if (PyUnicode_Check(item) || is_int(item))
            part = PyObject_Str(item);
        else
            PyErr_Format(PyExc_TypeError, "%s: a GPU is an index or a UUID, not %.100s",
                         opt->keyword, Py_TYPE(item)->tp_name);
        if (!part)
            Py_CLEAR(parts);
        else
            PyList_SET_ITEM(parts, i, part);
    }
    Py_DECREF(items);
    if (!parts)
        return NULL;
    PyObject *comma = PyUnicode_FromString(",");
    PyObject *text = comma ? PyUnicode_Join(comma, parts) : NULL;
    Py_XDECREF(comma);
    Py_DECREF(parts);
    return text;
}

/* A fraction as the library reads it: digits and a dot, never an exponent. */
static PyObject *ratio_text(double value)
{
    char *text = PyOS_double_to_string(value, 'r', 0, 0, NULL);
    if (text && strpbrk(text, "eE")) {
        PyMem_Free(text);
        text = PyOS_double_to_string(value, 'f', 17, 0, NULL);
    }
    if (!text)
        return PyErr_NoMemory();
    PyObject *result = PyUnicode_FromString(text);
    PyMem_Free(text);
    return result;
}

/* The text of one option's value, as the command line would give it, so the
 * library parses and checks it exactly as it does for `gpukit pick`. */
static PyObject *option_text(const option *opt, PyObject *value)
{
    switch (opt->kind) {
    case OPT_INT:
        if (is_int(value))
            return PyObject_Str(value);
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", opt->keyword,
                     Py_TYPE(value)->tp_name);
        return NULL;
    case OPT_STR:
        if (PyUnicode_Check(value))
            return Py_NewRef(value);
        PyErr_Format(PyExc_TypeError, "%s must be a str, not %.100s", opt->keyword,
                     Py_TYPE(value)->tp_name);
        return NULL;
    case OPT_SIZE:
        if (PyUnicode_Check(value))
            return Py_NewRef(value);
        if (is_int(value))
            return PyObject_Str(value);
        PyErr_Format(PyExc_TypeError,
                     "%s must be bytes as an int or a size such as \"20G\", not %.100s",
                     opt->keyword, Py_TYPE(value)->tp_name);
        return NULL;
    case OPT_RATIO:
        if (PyUnicode_Check(value))
            return Py_NewRef(value);
        if (is_int(value) || PyFloat_Check(value)) {
            double ratio = PyFloat_AsDouble(value);
            return ratio == -1.0 && PyErr_Occurred() ? NULL : ratio_text(ratio);
        }
        PyErr_Format(PyExc_TypeError, "%s must be a fraction such as 0.5 or \"50%%\", not %.100s",
                     opt->keyword, Py_TYPE(value)->tp_name);
        return NULL;
    case OPT_LIST:
        return list_text(opt, value);
    }
    return NULL;
}

/* Fills args->request from the keyword values (NULL or None: the default). */
static int parse_request(PyObject *values[OPTION_COUNT], PyObject *share, PyObject *seed,
                         request_args *args)
{
    memset(args, 0, sizeof *args);
    gk_request_init(&args->request);
    /* The command line's default: a fresh shuffle for order="random". */
    args->request.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        PyObject *value = strcmp(options_table[i].keyword, "seed") == 0 ? seed : values[i];
        if (!value || value == Py_None)
            continue;
        PyObject *text = option_text(&options_table[i], value);
        const char *utf8 = text ? PyUnicode_AsUTF8(text) : NULL;
        args->texts[i] = text;
        if (!utf8)
            return -1;
        if (gk_request_set(&args->request, options_table[i].name, utf8) != GK_OK) {
            PyErr_Format(PyExc_ValueError, "%s: %s", options_table[i].keyword, gk_last_error());
            return -1;
        }
    }
    if (share) {
        int truth = PyObject_IsTrue(share);
        if (truth < 0)
            return -1;
        gk_request_set(&args->request, truth ? "share" : "exclusive", NULL);
    }
    return 0;
}

/* wait=: False or 0 (do not wait), None or True (no limit), seconds, or a
 * duration such as "10m". */
static int parse_wait(PyObject *wait, gk_reserve_options *options)
{
    options->wait = false;
    options->wait_seconds = 0;
    if (!wait || wait == Py_False)
        return 0;
    if (wait == Py_None || wait == Py_True) {
        options->wait = true;
        return 0;
    }
    double seconds;
    if (PyUnicode_Check(wait)) {
        const char *text = PyUnicode_AsUTF8(wait);
        if (!text)
            return -1;
        if (gk_parse_wait(text, &seconds) != GK_OK) {
            PyErr_Format(PyExc_ValueError, "wait: %s", gk_last_error());
            return -1;
        }
    } else if (is_int(wait) || PyFloat_Check(wait)) {
        seconds = PyFloat_AsDouble(wait);
        if (seconds == -1.0 && PyErr_Occurred())
            return -1;
        if (!(seconds >= 0) || isinf(seconds)) {
            PyErr_SetString(PyExc_ValueError,
                            "wait: give seconds (0 or more), None for no limit, or a duration "
                            "such as \"10m\"");
            return -1;
        }
        if (seconds == 0)
            return 0;
    } else {
        PyErr_Format(PyExc_TypeError,
                     "wait must be seconds, a duration such as \"10m\", None or a bool, "
                     "not %.100s", Py_TYPE(wait)->tp_name);
        return -1;
    }
    options->wait = true;
    options->wait_seconds = seconds;
    return 0;
}

/* This process's command line, recorded in the lease for `gpukit leases`. */
static void command_line(char *buf, size_t size)
{
    snprintf(buf, size, "python");
    PyObject *argv = PySys_GetObject("orig_argv"); /* borrowed */
    if (!argv || !PyList_Check(argv) || PyList_GET_SIZE(argv) == 0)
        return;
    size_t used = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(argv) && used + 1 < size; i++) {
        const char *arg = PyUnicode_Check(PyList_GET_ITEM(argv, i))
                              ? PyUnicode_AsUTF8(PyList_GET_ITEM(argv, i))
                              : NULL;
        if (!arg) {
            PyErr_Clear();
            continue;
        }
        int n = snprintf(buf + used, size - used, "%s%s", used ? " " : "", arg);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* --- waiting with the GIL released, interruptible --- */

typedef struct wait_context {
    PyThreadState *thread; /* saved while the GIL is released */
    bool interrupted;
} wait_context;

/* gk_reserve polls this while it waits: take the GIL, run Python's signal
 * handlers (Ctrl-C, Jupyter's interrupt), and stop when one raised. */
static bool wait_cancelled(void *context)
{
    wait_context *wait = context;
    if (wait->interrupted)
        return true;
    PyEval_RestoreThread(wait->thread);
    wait->interrupted = PyErr_CheckSignals() < 0;
    wait->thread = PyEval_SaveThread();
    return wait->interrupted;
}

/* A wait says so once, and again when its reason changes, as `gpukit run
 * --wait` does: a cell that blocks without a word looks hung. */
static void wait_progress(const char *message, void *context)
{
    wait_context *wait = context;
    PyEval_RestoreThread(wait->thread);
    PySys_WriteStderr("gpukit.reserve: %.900s\n", message);
    wait->thread = PyEval_SaveThread();
}

/* Runs gk_reserve with the GIL released. NOT_FOUND (no GPU at all) is a
 * NoGPUError like BUSY: both mean "no GPU for this request here". Returns
 * -1 with an exception set on failure. */
static int run_reserve(gkpy_state *state, bool lease, const gk_request *request,
                       gk_reserve_options *options, gk_lease_dir **dir, gk_reservation *r)
{
    wait_context wait = {NULL, false};
    options->cancelled = wait_cancelled;
    options->progress = wait_progress;
    options->context = &wait;
    memset(r, 0, sizeof *r);
    r->lease_fd = -1;
    *dir = NULL;
    gk_probe *probe = NULL;
    gk_status status;
    wait.thread = PyEval_SaveThread();
    status = gk_lease_dir_open(NULL, lease, dir);
    if (status == GK_OK)
        status = gk_probe_open(&probe);
    if (status == GK_OK)
        status = gk_reserve(probe, *dir, request, options, r);
    gk_probe_close(probe);
    PyEval_RestoreThread(wait.thread);
    if (status == GK_OK)
        return 0;
    gk_reservation_free(r);
    gk_lease_dir_close(*dir);
    *dir = NULL;
    if (PyErr_Occurred()) /* KeyboardInterrupt (or another handler's error) */
        return -1;
    if (status == GK_ERR_CANCELLED)
        PyErr_SetNone(PyExc_KeyboardInterrupt);
    else if (status == GK_ERR_NOT_FOUND)
        PyErr_SetString(state->no_gpu_error, gk_last_error());
    else
        gkpy_raise(state, status);
    return -1;
}

/* --- the Reservation object --- */

static reservation_object *reservation_alloc(gkpy_state *state)
{
    reservation_object *self = PyObject_GC_New(reservation_object, state->reservation_type);
    if (!self)
        return NULL;
    self->gpus = self->uuids = self->lease = self->request = self->since = NULL;
    self->saved_env = NULL;
    self->dir = NULL;
    self->fd = -1;
    self->released = self->inherited = false;
    self->claims = 1;
    self->devices[0] = '\0';
    PyObject_GC_Track(self);
    return self;
}

/* "GPU 3", "GPUs 3, 6", "GPU 0 MIG 1". */
static void describe_devices(char *buf, size_t size, size_t count, const unsigned *indices,
                             const int *migs)
{
    size_t used = (size_t)snprintf(buf, size, "GPU%s", count == 1 ? "" : "s");
    for (size_t k = 0; k < count && used < size; k++) {
        if (migs && migs[k] >= 0)
            used += (size_t)snprintf(buf + used, size - used, "%s %u MIG %d", k ? "," : "",
                                     indices[k], migs[k]);
        else
            used += (size_t)snprintf(buf + used, size - used, "%s %u", k ? "," : "", indices[k]);
    }
}

static double since_seconds(struct timespec since)
{
    return (double)since.tv_sec + (double)since.tv_nsec / 1e9;
}

/* os.environ, so that Python (os.environ, subprocess) and C (getenv) both
 * see what reserve() sets. */
static PyObject *os_environ(void)
{
    PyObject *os = PyImport_ImportModule("os");
    if (!os)
        return NULL;
    PyObject *environ = PyObject_GetAttrString(os, "environ");
    Py_DECREF(os);
    return environ;
}

/* Puts the release's variables back, each only when it still holds what
 * reserve() set (a later change by the user wins). */
static int restore_env(PyObject *saved)
{
    PyObject *environ = os_environ();
    if (!environ)
        return -1;
    PyObject *name, *pair;
    Py_ssize_t pos = 0;
    int result = 0;
    while (result == 0 && PyDict_Next(saved, &pos, &name, &pair)) {
        PyObject *ours = PyTuple_GET_ITEM(pair, 0), *previous = PyTuple_GET_ITEM(pair, 1);
        PyObject *now = PyObject_CallMethod(environ, "get", "O", name);
        if (!now) {
            result = -1;
            break;
        }
        int unchanged = PyObject_RichCompareBool(now, ours, Py_EQ);
        Py_DECREF(now);
        if (unchanged < 0)
            result = -1;
        else if (unchanged && previous == Py_None) {
            if (PyObject_DelItem(environ, name) < 0) {
                if (PyErr_ExceptionMatches(PyExc_KeyError))
                    PyErr_Clear();
                else
                    result = -1;
            }
        }
        else if (unchanged)
            result = PyObject_SetItem(environ, name, previous);
    }
    Py_DECREF(environ);
    return result;
}

/* Sets the job's variables in os.environ, remembering what was there. */
static PyObject *apply_env(const gk_job_env *env)
{
    PyObject *environ = os_environ();
    if (!environ)
        return NULL;
    PyObject *saved = PyDict_New();
    for (size_t i = 0; saved && i < env->count; i++) {
        PyObject *name = PyUnicode_FromString(env->names[i]);
        PyObject *value = PyUnicode_FromString(env->values[i]);
        PyObject *previous = name ? PyObject_CallMethod(environ, "get", "O", name) : NULL;
        PyObject *pair = value && previous ? PyTuple_Pack(2, value, previous) : NULL;
        bool failed = !pair || PyDict_SetItem(saved, name, pair) < 0 ||
                      PyObject_SetItem(environ, name, value) < 0;
        Py_XDECREF(name);
        Py_XDECREF(value);
        Py_XDECREF(previous);
        Py_XDECREF(pair);
        if (failed) {
            PyObject *type, *error, *traceback;
            PyErr_Fetch(&type, &error, &traceback);
            restore_env(saved);
            PyErr_Restore(type, error, traceback);
            Py_CLEAR(saved);
        }
    }
    Py_DECREF(environ);
    return saved;
}

/* Ends a reservation of this process: the lease, then the variables. */
static int reservation_end(gkpy_state *state, reservation_object *self)
{
    if (self->released || self->inherited)
        return 0;
    self->released = true;
    gk_lease_release(self->dir, PyUnicode_AsUTF8(self->lease), self->fd);
    gk_lease_dir_close(self->dir);
    self->dir = NULL;
    self->fd = -1;
    int result = 0;
    if (self->saved_env) {
        result = restore_env(self->saved_env);
        Py_CLEAR(self->saved_env);
    }
    if (state->held_reservation == (PyObject *)self)
        Py_CLEAR(state->held_reservation);
    return result;
}

/* A list of the GPU objects of the chosen devices (a MIG device gives its
 * GPU), with their cuda_index in `view`. */
static PyObject *chosen_gpus(gkpy_state *state, const gk_reservation *r, unsigned count,
                             const gk_cuda_view *view)
{
    size_t indices[GK_LEASE_MAX_DEVICES];
    for (unsigned k = 0; k < count; k++)
        indices[k] = r->selection.candidates[k].gpu;
    return gkpy_gpu_list(state, r->snapshot, indices, count, view);
}

/* A tuple from a new list (NULL stays NULL); the list is let go. */
static PyObject *as_tuple(PyObject *list)
{
    PyObject *tuple = list ? PyList_AsTuple(list) : NULL;
    Py_XDECREF(list);
    return tuple;
}

/* A Reservation for what gk_reserve just leased; takes over `dir` and the
 * lease (released again when the object cannot be made). */
static PyObject *reservation_own(gkpy_state *state, gk_reservation *r, const gk_request *request,
                                 gk_lease_dir *dir)
{
    reservation_object *self = reservation_alloc(state);
    if (!self) {
        gk_lease_release(dir, r->lease.name, r->lease_fd);
        gk_lease_dir_close(dir);
        return NULL;
    }
    self->dir = dir;
    self->fd = r->lease_fd;
    self->lease = PyUnicode_FromString(r->lease.name);
    self->request = PyUnicode_FromString(r->lease.request);
    self->since = PyFloat_FromDouble(since_seconds(r->lease.since));
    self->uuids = PyTuple_New(request->count);
    unsigned indices[GK_LEASE_MAX_DEVICES];
    int migs[GK_LEASE_MAX_DEVICES];
    for (unsigned k = 0; self->uuids && k < request->count; k++) {
        const gk_candidate *c = &r->selection.candidates[k];
        indices[k] = c->index;
        migs[k] = c->mig;
        PyObject *uuid = PyUnicode_FromString(c->uuid);
        if (!uuid)
            Py_CLEAR(self->uuids);
        else
            PyTuple_SET_ITEM(self->uuids, k, uuid);
    }
    describe_devices(self->devices, sizeof self->devices, request->count, indices, migs);
    gk_job_env env = {0};
    gk_status status = gk_job_env_gpus(&env, r, request->count, 0);
    if (status != GK_OK) {
        Py_DECREF(self); /* releases the lease */
        return gkpy_raise(state, status);
    }
    /* cuda_index as CUDA programs will number the devices from now on. */
    gk_cuda_view view;
    gk_cuda_view_resolve(r->snapshot, env.values[0], "PCI_BUS_ID", &view);
    self->gpus = as_tuple(chosen_gpus(state, r, request->count, &view));
    if (!self->lease || !self->request || !self->since || !self->uuids || !self->gpus) {
        Py_DECREF(self);
        return NULL;
    }
    /* Last, so that a failure above leaves the environment alone. */
    self->saved_env = apply_env(&env);
    if (!self->saved_env) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* The leases of the lease directory (free() them), read without the GIL. */
static gk_status read_leases(gk_lease **leases, size_t *count)
{
    gk_lease_dir *dir = NULL;
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = gk_lease_dir_open(NULL, false, &dir);
    if (status == GK_OK && (status = gk_lease_dir_lock(dir)) == GK_OK) {
        status = gk_lease_list(dir, leases, count);
        gk_lease_dir_unlock(dir);
    }
    gk_lease_dir_close(dir);
    Py_END_ALLOW_THREADS
    return status;
}

/* The position in `snapshot` of the GPU that device `uuid` is, or belongs
 * to (a MIG device's parent); -1 when the snapshot has none. */
static long gpu_of_device(const gk_snapshot *snapshot, const char *uuid)
{
    for (size_t g = 0; g < snapshot->gpu_count; g++) {
        const gk_gpu *gpu = &snapshot->gpus[g];
        bool match = strcmp(gpu->uuid, uuid) == 0;
        for (size_t m = 0; !match && m < gpu->mig_count; m++)
            match = strcmp(gpu->mig_devices[m].uuid, uuid) == 0;
        if (match)
            return (long)g;
    }
    return -1;
}

/* A Reservation for `lease`, which the process that started this one
 * holds, with its devices' GPUs as `snapshot` sees them. */
static PyObject *inherited_object(gkpy_state *state, const gk_lease *lease,
                                  const gk_snapshot *snapshot)
{
    reservation_object *self = reservation_alloc(state);
    if (!self)
        return NULL;
    self->inherited = true;
    self->lease = PyUnicode_FromString(lease->name);
    self->request = PyUnicode_FromString(lease->request);
    self->since = PyFloat_FromDouble(since_seconds(lease->since));
    describe_devices(self->devices, sizeof self->devices, lease->device_count, lease->indices,
                     NULL);
    self->uuids = PyTuple_New((Py_ssize_t)lease->device_count);
    size_t gpus[GK_LEASE_MAX_DEVICES], found = 0;
    for (size_t d = 0; self->uuids && d < lease->device_count; d++) {
        PyObject *uuid = PyUnicode_FromString(lease->uuids[d]);
        if (!uuid) {
            Py_CLEAR(self->uuids);
            break;
        }
        PyTuple_SET_ITEM(self->uuids, (Py_ssize_t)d, uuid);
        long gpu = gpu_of_device(snapshot, lease->uuids[d]);
        if (gpu >= 0)
            gpus[found++] = (size_t)gpu;
    }
    gk_cuda_view view;
    gk_cuda_view_from_env(snapshot, &view);
    self->gpus = as_tuple(gkpy_gpu_list(state, snapshot, gpus, found, &view));
    if (!self->lease || !self->request || !self->since || !self->uuids || !self->gpus) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* The live lease named by GPUKIT_LEASE: the reservation `gpukit run` (or a
 * gpukit Jupyter kernel) made for this process. None when there is none;
 * NULL with an exception when the lease directory cannot be read. */
static PyObject *inherited_reservation(gkpy_state *state)
{
    const char *name = getenv(GK_LEASE_ENV);
    if (!name || !name[0])
        Py_RETURN_NONE;
    gk_lease *leases = NULL;
    size_t count = 0;
    gk_status status = read_leases(&leases, &count);
    if (status != GK_OK)
        return gkpy_raise(state, status);
    const gk_lease *lease = NULL;
    for (size_t i = 0; i < count && !lease; i++)
        if (!leases[i].waiting && strcmp(leases[i].name, name) == 0)
            lease = &leases[i];
    if (!lease) { /* ended (its holder is gone): nothing is held for us */
        free(leases);
        Py_RETURN_NONE;
    }
    gk_snapshot *snapshot = gkpy_take_snapshot(state, GK_PROBE_NO_CPU);
    PyObject *result = snapshot ? inherited_object(state, lease, snapshot) : NULL;
    gk_snapshot_destroy(snapshot);
    free(leases);
    return result;
}

/* The reservation this process holds: its own, else the inherited one;
 * None when neither. */
static PyObject *current(gkpy_state *state)
{
    if (state->held_reservation)
        return Py_NewRef(state->held_reservation);
    return inherited_reservation(state);
}

/* Whether holding `held` already gives what `request` asks for: the same
 * request (a notebook cell run again), or just as many GPUs with no
 * conditions (a bare gpukit.reserve() in a notebook whose kernel reserved). */
static bool satisfies(reservation_object *held, const gk_request *request, const char *wanted)
{
    if ((size_t)PyTuple_GET_SIZE(held->uuids) != request->count)
        return false;
    const char *asked = PyUnicode_AsUTF8(held->request);
    if (asked && strcmp(asked, wanted) == 0)
        return true;
    PyErr_Clear();
    gk_request bare;
    gk_request_init(&bare);
    bare.count = request->count;
    char plain[64];
    gk_request_describe(&bare, plain, sizeof plain);
    return strcmp(wanted, plain) == 0;
}

/* Whether CUDA is already loaded in this process: then CUDA_VISIBLE_DEVICES
 * was read at its initialisation, and changing it now changes nothing here. */
static bool cuda_loaded(void)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return false;
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, maps))
        found = strstr(line, "/libcuda.so") != NULL;
    fclose(maps);
    return found;
}

/* reserve() in a process that holds `held` already: `held` again when it
 * gives what `request` asks for (satisfies()), else RuntimeError. */
static PyObject *held_answer(reservation_object *held, const gk_request *request,
                             const char *wanted)
{
    if (satisfies(held, request, wanted)) {
        held->claims++;
        return Py_NewRef((PyObject *)held);
    }
    PyErr_Format(PyExc_RuntimeError,
                 "this process already holds %s (%U, lease %U)%s; reserve(%s) would take more: "
                 "%s",
                 held->devices, held->request, held->lease,
                 held->inherited ? ", reserved for it by the process that started it (gpukit "
                                   "run or a gpukit Jupyter kernel)"
                                 : "",
                 wanted,
                 held->inherited ? "start this process with what you need instead (the "
                                   "options of gpukit run, or of gpukit kernel install)"
                                 : "release() it first (gpukit.current_reservation().release())");
    return NULL;
}

static int warn_cuda_loaded(void)
{
    return PyErr_WarnEx(PyExc_RuntimeWarning,
                        "CUDA is already initialised in this process (libcuda is loaded), so "
                        "the CUDA_VISIBLE_DEVICES that gpukit.reserve() sets cannot take effect "
                        "here: CUDA keeps the devices it saw at start-up. Reserve before using "
                        "CUDA (torch, cupy, gpukit arrays on cuda), or restart the kernel; "
                        "programs started from here do see the reserved GPUs.",
                        1);
}

/* --- methods --- */

static int reservation_traverse(PyObject *op, visitproc visit, void *arg)
{
    reservation_object *self = (reservation_object *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->gpus);
    Py_VISIT(self->uuids);
    Py_VISIT(self->lease);
    Py_VISIT(self->request);
    Py_VISIT(self->since);
    Py_VISIT(self->saved_env);
    return 0;
}

static int reservation_clear(PyObject *op)
{
    reservation_object *self = (reservation_object *)op;
    Py_CLEAR(self->gpus);
    Py_CLEAR(self->uuids);
    Py_CLEAR(self->request);
    Py_CLEAR(self->since);
    Py_CLEAR(self->saved_env);
    return 0;
}

static void reservation_dealloc(PyObject *op)
{
    reservation_object *self = (reservation_object *)op;
    PyTypeObject *type = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    /* Only at the end of the module (state->held_reservation keeps a held
     * one alive until then): end the lease, leave os.environ alone. */
    if (!self->released && !self->inherited && self->dir) {
        gk_lease_release(self->dir, self->lease ? PyUnicode_AsUTF8(self->lease) : NULL,
                         self->fd);
        gk_lease_dir_close(self->dir);
    } else if (self->fd >= 0) {
        close(self->fd);
    }
    reservation_clear(op);
    Py_CLEAR(self->lease);
    PyObject_GC_Del(op);
    Py_DECREF(type);
}

static PyObject *reservation_repr(PyObject *op)
{
    reservation_object *self = (reservation_object *)op;
    const char *state = self->inherited ? "inherited"
                        : self->released ? "released"
                                         : "held";
    time_t since = (time_t)PyFloat_AsDouble(self->since);
    struct tm local;
    char when[32] = "?";
    if (localtime_r(&since, &local))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &local);
    return PyUnicode_FromFormat("<gpukit.Reservation %s (%U) since %s, lease %U: %s>",
                                self->devices, self->request, when, self->lease, state);
}

PyDoc_STRVAR(release_doc,
"release($self, /)\n--\n\n"
"Ends the reservation now: the GPUs are free for others, and the variables\n"
"reserve() set in os.environ get back their old values (those you have\n"
"changed since are left alone). Calling it again does nothing. A\n"
"reservation inherited from `gpukit run` or a gpukit kernel belongs to the\n"
"process that started this one and ends with it: release() leaves it.");

static PyObject *reservation_release(PyObject *op, PyObject *unused)
{
    (void)unused;
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(op));
    if (reservation_end(state, (reservation_object *)op) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *reservation_enter(PyObject *op, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(op);
}

static PyObject *reservation_exit(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    (void)args;
    (void)nargs;
    reservation_object *self = (reservation_object *)op;
    if (self->claims > 1) { /* an outer reserve() still holds it */
        self->claims--;
        Py_RETURN_FALSE;
    }
    self->claims = 0;
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(op));
    if (reservation_end(state, self) < 0)
        return NULL;
    Py_RETURN_FALSE;
}

static PyObject *reservation_get_released(PyObject *op, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((reservation_object *)op)->released);
}

static PyObject *reservation_get_inherited(PyObject *op, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((reservation_object *)op)->inherited);
}

static PyMemberDef reservation_members[] = {
    {"gpus", GKPY_T_OBJECT, offsetof(reservation_object, gpus), GKPY_READONLY,
     "The reserved GPUs (gpukit.GPU, as the choice saw them), in the order chosen; a MIG\n"
     "device appears as its GPU. Their cuda_index is their number in CUDA programs."},
    {"uuids", GKPY_T_OBJECT, offsetof(reservation_object, uuids), GKPY_READONLY,
     "The UUIDs of the reserved devices (GPU-... or MIG-...): CUDA_VISIBLE_DEVICES."},
    {"since", GKPY_T_OBJECT, offsetof(reservation_object, since), GKPY_READONLY,
     "When the reservation was made, in seconds since the epoch (like time.time())."},
    {"lease", GKPY_T_OBJECT, offsetof(reservation_object, lease), GKPY_READONLY,
     "The lease's name in the lease directory (`gpukit leases` lists it)."},
    {"request", GKPY_T_OBJECT, offsetof(reservation_object, request), GKPY_READONLY,
     "What was asked for, in words, e.g. '1 GPU, --min-free 20.0 GiB'."},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef reservation_getset[] = {
    {"released", reservation_get_released, NULL, "Whether release() has ended it.", NULL},
    {"inherited", reservation_get_inherited, NULL,
     "Whether it was made for this process by `gpukit run` or a gpukit Jupyter kernel.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef reservation_methods[] = {
    {"release", reservation_release, METH_NOARGS, release_doc},
    {"__enter__", reservation_enter, METH_NOARGS,
     "__enter__($self, /)\n--\n\nThe reservation itself, held for the `with` block."},
    {"__exit__", (PyCFunction)(void (*)(void))reservation_exit, METH_FASTCALL,
     "__exit__($self, exc_type, exc_value, traceback, /)\n--\n\nEnds the reservation, as "
     "release() does."},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(reservation_doc,
"GPUs reserved for this process (gpukit.reserve(), current_reservation()).\n\n"
"Held until release(), the end of a `with` block, or the end of the\n"
"process (however it ends: the kernel drops the lease of a killed process).");

static PyType_Slot reservation_slots[] = {
    {Py_tp_doc, (void *)reservation_doc},
    {Py_tp_members, reservation_members},
    {Py_tp_getset, reservation_getset},
    {Py_tp_methods, reservation_methods},
    {Py_tp_repr, reservation_repr},
    {Py_tp_traverse, reservation_traverse},
    {Py_tp_clear, reservation_clear},
    {Py_tp_dealloc, reservation_dealloc},
    {0, NULL},
};

static PyType_Spec reservation_spec = {
    .name = "gpukit.Reservation",
    .basicsize = sizeof(reservation_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = reservation_slots,
};

/* --- module functions --- */

#define SELECTION_DOC                                                                         \
    "count: how many GPUs (1 to 64). order: 'free' (most free memory, the default),\n"        \
    "'free-ratio', 'power' (lowest draw/limit), 'util' (least busy), 'index' (first\n"       \
    "that fits) or 'random' (shuffled by seed). min_free, min_total: bytes as an int or\n"    \
    "a size such as \"20G\", \"512MiB\" (K/M/G/T binary, kB/MB/GB/TB decimal).\n"           \
    "min_free_ratio: 0.5 or \"50%\". max_util: percent busy at most. max_procs: processes\n" \
    "already there at most. gpus, exclude: only / never these GPUs (an index, a UUID,\n"     \
    "\"0,1\", or a list; \"0:1\" is MIG device 1 of GPU 0). share: share GPUs with other\n"  \
    "shared reservations (their min_free is set aside) instead of skipping GPUs others\n"  \
    "reserved. The values are read exactly as `gpukit pick` reads its options; a bad one\n" \
    "is a ValueError (TypeError for a wrong type). CUDA_VISIBLE_DEVICES, when set,\n"       \
    "limits the choice to the GPUs it names.\n"

static char *pick_keywords[] = {
    "count", "order", "min_free", "min_free_ratio", "max_util", "min_total", "max_procs",
    "gpus", "exclude", "share", "seed", NULL,
};

PyDoc_STRVAR(pick_doc,
"pick(count=1, *, order='free', min_free=None, min_free_ratio=None, max_util=None, "
"min_total=None, max_procs=None, gpus=None, exclude=None, share=False, seed=None)\n--\n\n"
"The GPUs that fit best now, as a list of gpukit.GPU in the order chosen,\n"
"skipping GPUs that other jobs have reserved. Reserves nothing (another job\n"
"may take them next): reserve() picks and reserves in one step.\n"
"Raises NoGPUError, saying why, when not enough GPUs fit or there is none.\n\n"
SELECTION_DOC);

static PyObject *py_pick(PyObject *module, PyObject *args, PyObject *kwargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    PyObject *values[OPTION_COUNT] = {NULL};
    PyObject *share = NULL, *seed = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOOOOOOOOO:pick", pick_keywords,
                                     &values[0], &values[1], &values[2], &values[3], &values[4],
                                     &values[5], &values[6], &values[7], &values[8], &share,
                                     &seed))
        return NULL;
    request_args request;
    if (parse_request(values, share, seed, &request) < 0) {
        request_args_free(&request);
        return NULL;
    }
    gk_reserve_options options = {.lease = false};
    gk_lease_dir *dir;
    gk_reservation r;
    int failed = run_reserve(state, false, &request.request, &options, &dir, &r);
    request_args_free(&request);
    if (failed)
        return NULL;
    gk_cuda_view view;
    gk_cuda_view_from_env(r.snapshot, &view);
    PyObject *list = chosen_gpus(state, &r, request.request.count, &view);
    gk_reservation_free(&r);
    gk_lease_dir_close(dir);
    return list;
}

static char *reserve_keywords[] = {
    "count", "order", "min_free", "min_free_ratio", "max_util", "min_total", "max_procs",
    "gpus", "exclude", "share", "seed", "wait", NULL,
};

PyDoc_STRVAR(reserve_doc,
"reserve(count=1, *, order='free', min_free=None, min_free_ratio=None, max_util=None, "
"min_total=None, max_procs=None, gpus=None, exclude=None, share=False, seed=None, "
"wait=False)\n--\n\n"
"Picks GPUs as pick() does and reserves them with the leases of `gpukit run`,\n"
"atomically across every process and user of the machine, then points CUDA\n"
"at them in os.environ: CUDA_VISIBLE_DEVICES (their UUIDs),\n"
"CUDA_DEVICE_ORDER=PCI_BUS_ID, NVIDIA_VISIBLE_DEVICES and GPUKIT_LEASE.\n"
"Returns a gpukit.Reservation, held until release(), the end of a `with`\n"
"block (which also restores the variables), or the end of the process:\n\n"
"    gpukit.reserve(min_free=\"20G\")          # top of a notebook\n"
"    with gpukit.reserve(count=2) as r:       # just for this block\n"
"        print(r.gpus)\n\n"
"Call it before anything initialises CUDA in this process (torch, cupy,\n"
"gpukit arrays on cuda): CUDA reads CUDA_VISIBLE_DEVICES once, so a later\n"
"change only reaches programs started from here (a RuntimeWarning says so).\n\n"
"wait: False or 0 (the default) fails at once when nothing fits; seconds or\n"
"a duration such as \"10m\" waits in line (first come, first served) that\n"
"long; None or True waits without limit. Ctrl-C (or Jupyter's interrupt)\n"
"stops a wait with KeyboardInterrupt, holding nothing.\n\n"
"A process holds at most one reservation. When it already holds one (made\n"
"here, or by `gpukit run` or a gpukit Jupyter kernel that started it),\n"
"reserve() returns that one if it has as many GPUs and the request is the\n"
"same or asks for nothing more than the count (so running a notebook cell\n"
"again is harmless); otherwise it raises RuntimeError instead of taking\n"
"more GPUs: release() the one held first. A `with` block ends the\n"
"reservation only if no other reserve() call still holds it: a nested\n"
"`with gpukit.reserve()`, or one in a cell under a notebook's reservation,\n"
"leaves it held; release() always ends it.\n\n"
"Raises NoGPUError when not enough GPUs fit (or there is none),\n"
"TimeoutError when the wait ran out, or when another process kept the\n"
"machine's lease directory locked (for 5 s without a wait; its message names\n"
"the process), GPUError when the driver fails,\n"
"PermissionError when the lease directory is unsafe.\n\n"
SELECTION_DOC);

/* Takes state->reserve_lock without holding the GIL (the holder may be
 * waiting in line for a GPU), giving up when Ctrl-C arrives. */
static int lock_reserving(gkpy_state *state)
{
    for (;;) {
        PyLockStatus got;
        Py_BEGIN_ALLOW_THREADS
        got = PyThread_acquire_lock_timed(state->reserve_lock, 50 * 1000, 0);
        Py_END_ALLOW_THREADS
        if (got == PY_LOCK_ACQUIRED)
            return 0;
        if (PyErr_CheckSignals() < 0)
            return -1;
    }
}

static PyObject *reserve_locked(gkpy_state *state, request_args *request,
                                gk_reserve_options *options, const char *wanted);

static PyObject *py_reserve(PyObject *module, PyObject *args, PyObject *kwargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    PyObject *values[OPTION_COUNT] = {NULL};
    PyObject *share = NULL, *seed = NULL, *wait = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOOOOOOOOOO:reserve", reserve_keywords,
                                     &values[0], &values[1], &values[2], &values[3], &values[4],
                                     &values[5], &values[6], &values[7], &values[8], &share,
                                     &seed, &wait))
        return NULL;
    request_args request;
    gk_reserve_options options = {.lease = true, .cloexec = true};
    if (parse_request(values, share, seed, &request) < 0 || parse_wait(wait, &options) < 0) {
        request_args_free(&request);
        return NULL;
    }
    char wanted[256];
    gk_request_describe(&request.request, wanted, sizeof wanted);
    /* One reserve() at a time in this process: two threads asking at once
     * must not both find nothing held and take a GPU each. */
    if (lock_reserving(state) < 0) {
        request_args_free(&request);
        return NULL;
    }
    PyObject *result = reserve_locked(state, &request, &options, wanted);
    PyThread_release_lock(state->reserve_lock);
    request_args_free(&request);
    return result;
}

/* reserve() once no other thread of this process is reserving. */
static PyObject *reserve_locked(gkpy_state *state, request_args *request,
                                gk_reserve_options *options, const char *wanted)
{
    PyObject *held = current(state);
    if (!held || held != Py_None) {
        PyObject *result = held ? held_answer((reservation_object *)held, &request->request,
                                              wanted)
                                : NULL;
        Py_XDECREF(held);
        return result;
    }
    Py_DECREF(held);
    if (cuda_loaded() && warn_cuda_loaded() < 0)
        return NULL;

    char command[256];
    command_line(command, sizeof command);
    options->command = command;
    gk_lease_dir *dir;
    gk_reservation r;
    int failed = run_reserve(state, true, &request->request, options, &dir, &r);
    PyObject *result = NULL;
    if (!failed)
        result = reservation_own(state, &r, &request->request, dir);
    gk_reservation_free(&r);
    if (result)
        Py_XSETREF(state->held_reservation, Py_NewRef(result));
    return result;
}

PyDoc_STRVAR(current_reservation_doc,
"current_reservation()\n--\n\n"
"The reservation this process holds: the one gpukit.reserve() made here, or\n"
"the one `gpukit run` or a gpukit Jupyter kernel made for it (found by the\n"
"GPUKIT_LEASE variable they set; its `inherited` is True), with its GPUs,\n"
"since when and what was asked for. None when it holds none.");

static PyObject *py_current_reservation(PyObject *module, PyObject *unused)
{
    (void)unused;
    return current(gkpy_state_of_module(module));
}

PyDoc_STRVAR(release_at_exit_doc,
"_release_at_exit()\n--\n\n"
"Ends the reservation this process holds (registered with atexit).");

/* The kernel drops the lease of an ended process anyway; ending it at a
 * normal exit also removes its file, as `gpukit run` jobs leave none. */
static PyObject *py_release_at_exit(PyObject *module, PyObject *unused)
{
    (void)unused;
    gkpy_state *state = gkpy_state_of_module(module);
    if (state->held_reservation &&
        reservation_end(state, (reservation_object *)state->held_reservation) < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(wait_seconds_doc,
"_wait_seconds(wait, /)\n--\n\n"
"reserve()'s wait= read as reserve reads it: None to wait without limit, 0.0 not\n"
"to wait, else the limit in seconds; ValueError or TypeError for a bad value.\n"
"gpukit.dask checks a cluster's wait= with it, in the client.");

static PyObject *py_wait_seconds(PyObject *module, PyObject *wait)
{
    (void)module;
    gk_reserve_options options;
    if (parse_wait(wait, &options) < 0)
        return NULL;
    if (options.wait && options.wait_seconds == 0)
        Py_RETURN_NONE;
    return PyFloat_FromDouble(options.wait ? options.wait_seconds : 0.0);
}

static PyMethodDef reservation_functions[] = {
    {"pick", (PyCFunction)(void (*)(void))py_pick, METH_VARARGS | METH_KEYWORDS, pick_doc},
    {"reserve", (PyCFunction)(void (*)(void))py_reserve, METH_VARARGS | METH_KEYWORDS,
     reserve_doc},
    {"current_reservation", py_current_reservation, METH_NOARGS, current_reservation_doc},
    {"_release_at_exit", py_release_at_exit, METH_NOARGS, release_at_exit_doc},
    {"_wait_seconds", py_wait_seconds, METH_O, wait_seconds_doc},
    {NULL, NULL, 0, NULL},
};

int gkpy_reservation_init(PyObject *module, gkpy_state *state)
{
    state->reservation_type =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &reservation_spec, NULL);
    if (!state->reservation_type || PyModule_AddType(module, state->reservation_type) < 0)
        return -1;
    if (PyModule_AddFunctions(module, reservation_functions) < 0)
        return -1;
    PyObject *atexit = PyImport_ImportModule("atexit");
    PyObject *release = PyObject_GetAttrString(module, "_release_at_exit");
    PyObject *done = atexit && release ? PyObject_CallMethod(atexit, "register", "O", release)
                                       : NULL;
    Py_XDECREF(atexit);
    Py_XDECREF(release);
    Py_XDECREF(done);
    return done ? 0 : -1;
}
