/* gpukit._gpukit.Monitor: the sampler of `gpukit top` and `gpukit serve`
 * (gpukit/monitor.h) for Python, behind gpukit.monitor() (gpukit/_monitor.py,
 * which draws it in a notebook). Waits and readings release the GIL, so a
 * thread can follow the readings while the notebook runs other cells. */
#include "gkpy.h"

#include "core/embedded.h"

#include <gpukit/monitor.h>

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The dashboard's page, script and style (share/dashboard), built in. */
extern const gk_embedded_file gk_dashboard_files[];
extern const size_t gk_dashboard_files_count;

/* Calls release the GIL, so another thread may call close() meanwhile:
 * every call counts itself in `calls` under `lock`, and close() waits for
 * them before freeing the monitor. `control` serialises read, start and
 * stop, which the library wants from one thread at a time. */
typedef struct monitor_object {
    PyObject_HEAD
    gk_monitor *monitor;
    pthread_mutex_t lock;
    pthread_cond_t idle;
    unsigned calls;
    bool closing;
    pthread_mutex_t control;
} monitor_object;

static int monitor_init(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"interval", "history", NULL};
    double interval = 1.0;
    Py_ssize_t history = 300;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|dn:_Sampler", keywords, &interval, &history))
        return -1;
    if (!(interval >= 0.05 && interval <= 3600)) {
        PyErr_Format(PyExc_ValueError, "interval must be from 0.05 to 3600 seconds, not %R",
                     PyTuple_Size(args) ? PyTuple_GET_ITEM(args, 0) : Py_None);
        return -1;
    }
    if (history < 1 || history > 100000) {
        PyErr_SetString(PyExc_ValueError, "history must be from 1 to 100000 readings");
        return -1;
    }
    monitor_object *m = (monitor_object *)self;
    if (m->monitor || m->closing) {
        PyErr_SetString(PyExc_RuntimeError, "the sampler is already initialised");
        return -1;
    }
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->idle, NULL);
    pthread_mutex_init(&m->control, NULL);
    gk_monitor_options options = {.interval = interval, .history = (size_t)history};
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = gk_monitor_open(&options, &m->monitor);
    Py_END_ALLOW_THREADS
    if (status != GK_OK)
        return gkpy_raise(gkpy_state_of_type(Py_TYPE(self)), status), -1;
    return 0;
}

static void monitor_dealloc(PyObject *self)
{
    monitor_object *m = (monitor_object *)self;
    PyTypeObject *type = Py_TYPE(self);
    if (m->monitor) {
        Py_BEGIN_ALLOW_THREADS
        gk_monitor_close(m->monitor);
        Py_END_ALLOW_THREADS
    }
    if (m->monitor || m->closing) {
        pthread_mutex_destroy(&m->lock);
        pthread_cond_destroy(&m->idle);
        pthread_mutex_destroy(&m->control);
    }
    type->tp_free(self);
    Py_DECREF(type);
}

/* The monitor, counted as in use until leave(); NULL (ValueError) once
 * closed. */
static gk_monitor *enter(PyObject *self)
{
    monitor_object *m = (monitor_object *)self;
    gk_monitor *monitor = NULL;
    if (m->monitor || m->closing) {
        pthread_mutex_lock(&m->lock);
        if (!m->closing) {
            monitor = m->monitor;
            m->calls++;
        }
        pthread_mutex_unlock(&m->lock);
    }
    if (!monitor)
        PyErr_SetString(PyExc_ValueError, "the monitor is closed");
    return monitor;
}

static void leave(PyObject *self)
{
    monitor_object *m = (monitor_object *)self;
    pthread_mutex_lock(&m->lock);
    if (--m->calls == 0)
        pthread_cond_broadcast(&m->idle);
    pthread_mutex_unlock(&m->lock);
}

static PyObject *status_result(PyObject *self, gk_status status)
{
    if (status != GK_OK)
        return gkpy_raise(gkpy_state_of_type(Py_TYPE(self)), status);
    Py_RETURN_NONE;
}

/* read(), start() and stop(): a call into the monitor without the GIL, one
 * at a time. */
static PyObject *call_monitor(PyObject *self, gk_status (*call)(gk_monitor *))
{
    monitor_object *m = (monitor_object *)self;
    gk_monitor *monitor = enter(self);
    if (!monitor)
        return NULL;
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&m->control);
    status = call(monitor);
    pthread_mutex_unlock(&m->control);
    Py_END_ALLOW_THREADS
    leave(self);
    return status_result(self, status);
}

static PyObject *monitor_read(PyObject *self, PyObject *unused)
{
    (void)unused;
    return call_monitor(self, gk_monitor_read);
}

static PyObject *monitor_start(PyObject *self, PyObject *unused)
{
    (void)unused;
    return call_monitor(self, gk_monitor_start);
}

static gk_status stop_reading(gk_monitor *monitor)
{
    gk_monitor_stop(monitor);
    return GK_OK;
}

static PyObject *monitor_stop(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (!((monitor_object *)self)->monitor)
        Py_RETURN_NONE; /* stopping a closed monitor: nothing to do */
    return call_monitor(self, stop_reading);
}

static PyObject *monitor_close(PyObject *self, PyObject *unused)
{
    (void)unused;
    monitor_object *m = (monitor_object *)self;
    if (!m->monitor || m->closing)
        Py_RETURN_NONE;
    gk_monitor *monitor = m->monitor;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&m->lock);
    m->closing = true; /* no new calls */
    pthread_mutex_unlock(&m->lock);
    /* Stopping ends every wait(); then the calls in flight finish. */
    pthread_mutex_lock(&m->control);
    gk_monitor_stop(monitor);
    pthread_mutex_unlock(&m->control);
    pthread_mutex_lock(&m->lock);
    while (m->calls)
        pthread_cond_wait(&m->idle, &m->lock);
    m->monitor = NULL;
    pthread_mutex_unlock(&m->lock);
    gk_monitor_close(monitor);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *monitor_wait(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"after", "timeout", NULL};
    unsigned long long after = 0;
    double timeout = 10.0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Kd:wait", keywords, &after, &timeout))
        return NULL;
    if (!isfinite(timeout) || timeout < 0)
        return PyErr_Format(PyExc_ValueError, "timeout must be a finite number of seconds, not %R",
                            PyTuple_Size(args) > 1 ? PyTuple_GET_ITEM(args, 1) : Py_None);
    gk_monitor *monitor = enter(self);
    if (!monitor)
        return NULL;
    uint64_t latest;
    Py_BEGIN_ALLOW_THREADS
    latest = gk_monitor_wait(monitor, after, timeout);
    Py_END_ALLOW_THREADS
    leave(self);
    return PyLong_FromUnsignedLongLong(latest);
}

/* A str made of malloc'ed text, which is freed. */
static PyObject *owned_text(PyObject *self, gk_status status, char *text)
{
    if (status != GK_OK)
        return gkpy_raise(gkpy_state_of_type(Py_TYPE(self)), status);
    PyObject *result = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
    free(text);
    return result;
}

/* The latest reading, or NULL with a RuntimeError before the first. */
/* The latest reading (the monitor entered: leave() after releasing it), or
 * NULL with a RuntimeError before the first. */
static const gk_sample *latest(PyObject *self, gk_monitor **monitor)
{
    *monitor = enter(self);
    if (!*monitor)
        return NULL;
    const gk_sample *sample = gk_monitor_acquire(*monitor);
    if (!sample) {
        leave(self);
        PyErr_SetString(PyExc_RuntimeError, "no reading yet: call read() or start() first");
    }
    return sample;
}

/* Lets go of a reading that latest() gave. */
static void done_with(PyObject *self, gk_monitor *monitor, const gk_sample *sample)
{
    gk_monitor_release(monitor, sample);
    leave(self);
}

static PyObject *monitor_json(PyObject *self, PyObject *unused)
{
    (void)unused;
    gk_monitor *monitor;
    const gk_sample *sample = latest(self, &monitor);
    if (!sample)
        return NULL;
    char *text = NULL;
    gk_sample now = gk_monitor_current(monitor, sample);
    gk_status status = gk_sample_json(&now, &text);
    done_with(self, monitor, sample);
    return owned_text(self, status, text);
}

static PyObject *monitor_history_json(PyObject *self, PyObject *unused)
{
    (void)unused;
    gk_monitor *monitor = enter(self);
    if (!monitor)
        return NULL;
    char *text = NULL;
    gk_status status = gk_monitor_history_json(monitor, &text);
    leave(self);
    return owned_text(self, status, text);
}

static PyObject *monitor_metrics(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"openmetrics", NULL};
    int openmetrics = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p:metrics", keywords, &openmetrics))
        return NULL;
    gk_monitor *monitor;
    const gk_sample *sample = latest(self, &monitor);
    if (!sample)
        return NULL;
    char *text = NULL;
    size_t length;
    gk_sample now = gk_monitor_current(monitor, sample);
    gk_status status = gk_sample_metrics(&now, openmetrics, &text, &length);
    done_with(self, monitor, sample);
    return owned_text(self, status, text);
}

/* `gpukit top --once` of the latest reading, as plain text. */
static PyObject *monitor_text(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"width", "unicode", "gpu_mask", NULL};
    int width = 100, unicode = 1;
    unsigned long long gpu_mask = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|ipK:text", keywords, &width, &unicode,
                                     &gpu_mask))
        return NULL;
    gk_monitor *monitor;
    const gk_sample *sample = latest(self, &monitor);
    if (!sample)
        return NULL;
    gk_frame_options options = {.width = width < 20 ? 20 : width > 1000 ? 1000 : (unsigned)width,
                                .sort = GK_TOP_GPU_MEMORY,
                                .graph_gpu = -1,
                                .unicode = unicode != 0,
                                .gpu_mask = gpu_mask};
    gk_frame frame;
    gk_status status = gk_frame_draw(monitor, sample, &options, &frame);
    done_with(self, monitor, sample);
    if (status != GK_OK)
        return gkpy_raise(gkpy_state_of_type(Py_TYPE(self)), status);
    PyObject *lines = PyList_New((Py_ssize_t)frame.line_count);
    for (size_t i = 0; lines && i < frame.line_count; i++) {
        /* trailing padding is of no use outside a screen */
        const char *text = frame.lines[i].text;
        size_t n = strlen(text);
        while (n && text[n - 1] == ' ')
            n--;
        PyObject *line = PyUnicode_DecodeUTF8(text, (Py_ssize_t)n, "replace");
        if (!line) {
            Py_CLEAR(lines);
            break;
        }
        PyList_SET_ITEM(lines, (Py_ssize_t)i, line);
    }
    gk_frame_free(&frame);
    if (!lines)
        return NULL;
    PyObject *newline = PyUnicode_FromString("\n");
    PyObject *joined = newline ? PyUnicode_Join(newline, lines) : NULL;
    Py_XDECREF(newline);
    Py_DECREF(lines);
    return joined;
}

static PyObject *monitor_interval(PyObject *self, void *closure)
{
    (void)closure;
    gk_monitor *monitor = enter(self);
    if (!monitor)
        return NULL;
    double interval = gk_monitor_interval(monitor);
    leave(self);
    return PyFloat_FromDouble(interval);
}

static PyObject *monitor_closed(PyObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((monitor_object *)self)->monitor == NULL);
}

static PyMethodDef monitor_methods[] = {
    {"read", monitor_read, METH_NOARGS, "read() -> None\n\nTakes one reading now."},
    {"start", monitor_start, METH_NOARGS,
     "start() -> None\n\nReads every interval on a thread of its own (the first reading "
     "before it returns)."},
    {"stop", monitor_stop, METH_NOARGS,
     "stop() -> None\n\nStops the reading thread; wait() then returns 0."},
    {"close", monitor_close, METH_NOARGS, "close() -> None\n\nStops and frees the monitor."},
    {"wait", (PyCFunction)(void (*)(void))monitor_wait, METH_VARARGS | METH_KEYWORDS,
     "wait(after=0, timeout=10.0) -> int\n\nWaits for a reading newer than `after`; returns "
     "the latest reading's number (`after` on a timeout, 0 once stopped)."},
    {"json", monitor_json, METH_NOARGS,
     "json() -> str\n\nThe latest reading as the document of /api/v1/gpus."},
    {"history_json", monitor_history_json, METH_NOARGS,
     "history_json() -> str\n\nEach GPU's recent readings, as /api/v1/history."},
    {"metrics", (PyCFunction)(void (*)(void))monitor_metrics, METH_VARARGS | METH_KEYWORDS,
     "metrics(openmetrics=False) -> str\n\nThe latest reading as Prometheus metrics."},
    {"text", (PyCFunction)(void (*)(void))monitor_text, METH_VARARGS | METH_KEYWORDS,
     "text(width=100, unicode=True, gpu_mask=0) -> str\n\nThe latest reading as `gpukit top "
     "--once` prints it; gpu_mask: only the GPUs whose index's bit is set (0: all)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef monitor_getset[] = {
    {"interval", monitor_interval, NULL, "Seconds between readings.", NULL},
    {"closed", monitor_closed, NULL, "Whether close() was called.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot monitor_slots[] = {
    {Py_tp_doc, "_Sampler(interval=1.0, history=300)\n--\n\n"
                "The sampler behind `gpukit top` and `gpukit serve`: one reading of every GPU, "
                "its processes and the gpukit leases per interval. Use gpukit.monitor() for the "
                "live view in a notebook."},
    {Py_tp_init, monitor_init},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, monitor_dealloc},
    {Py_tp_methods, monitor_methods},
    {Py_tp_getset, monitor_getset},
    {0, NULL},
};

static PyType_Spec monitor_spec = {
    .name = "gpukit._gpukit._Sampler",
    .basicsize = sizeof(monitor_object),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = monitor_slots,
};

/* _dashboard_file(name) -> str: a file of share/dashboard, built in. */
static PyObject *dashboard_file(PyObject *module, PyObject *name)
{
    (void)module;
    const char *wanted = PyUnicode_AsUTF8(name);
    if (!wanted)
        return NULL;
    for (size_t i = 0; i < gk_dashboard_files_count; i++)
        if (strcmp(gk_dashboard_files[i].name, wanted) == 0)
            return PyUnicode_DecodeUTF8((const char *)gk_dashboard_files[i].data,
                                        (Py_ssize_t)gk_dashboard_files[i].size, "strict");
    PyErr_Format(PyExc_KeyError, "%R", name);
    return NULL;
}

static PyMethodDef module_functions[] = {
    {"_dashboard_file", dashboard_file, METH_O,
     "_dashboard_file(name) -> str\n\nindex.html, dashboard.js or dashboard.css."},
    {NULL, NULL, 0, NULL},
};

int gkpy_monitor_init(PyObject *module, gkpy_state *state)
{
    state->monitor_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &monitor_spec, NULL);
    if (!state->monitor_type || PyModule_AddType(module, state->monitor_type) < 0)
        return -1;
    return PyModule_AddFunctions(module, module_functions);
}
