/* gpukit._gpukit.Monitor: the sampler of `gpukit top` and `gpukit serve`
 * (gpukit/monitor.h) for Python, behind gpukit.monitor() (gpukit/_monitor.py,
 * which draws it in a notebook). Waits and readings release the GIL, so a
 * thread can follow the readings while the notebook runs other cells. */
#include "gkpy.h"

#include "core/embedded.h"

#include <gpukit/monitor.h>

#include <stdlib.h>
#include <string.h>

/* The dashboard's page, script and style (share/dashboard), built in. */
extern const gk_embedded_file gk_dashboard_files[];
extern const size_t gk_dashboard_files_count;

typedef struct monitor_object {
    PyObject_HEAD
    gk_monitor *monitor;
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
    if (m->monitor) {
        PyErr_SetString(PyExc_RuntimeError, "the sampler is already initialised");
        return -1;
    }
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
    type->tp_free(self);
    Py_DECREF(type);
}

static gk_monitor *open_monitor(PyObject *self)
{
    monitor_object *m = (monitor_object *)self;
    if (!m->monitor)
        PyErr_SetString(PyExc_ValueError, "the monitor is closed");
    return m->monitor;
}

static PyObject *status_result(PyObject *self, gk_status status)
{
    if (status != GK_OK)
        return gkpy_raise(gkpy_state_of_type(Py_TYPE(self)), status);
    Py_RETURN_NONE;
}

/* read() and start(): a call into the monitor without the GIL. */
static PyObject *call_monitor(PyObject *self, gk_status (*call)(gk_monitor *))
{
    gk_monitor *monitor = open_monitor(self);
    if (!monitor)
        return NULL;
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = call(monitor);
    Py_END_ALLOW_THREADS
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

static PyObject *monitor_close(PyObject *self, PyObject *unused)
{
    (void)unused;
    monitor_object *m = (monitor_object *)self;
    gk_monitor *monitor = m->monitor;
    m->monitor = NULL;
    if (monitor) {
        Py_BEGIN_ALLOW_THREADS
        gk_monitor_close(monitor);
        Py_END_ALLOW_THREADS
    }
    Py_RETURN_NONE;
}

static PyObject *monitor_stop(PyObject *self, PyObject *unused)
{
    (void)unused;
    gk_monitor *monitor = ((monitor_object *)self)->monitor;
    if (monitor) {
        Py_BEGIN_ALLOW_THREADS
        gk_monitor_stop(monitor);
        Py_END_ALLOW_THREADS
    }
    Py_RETURN_NONE;
}

static PyObject *monitor_wait(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"after", "timeout", NULL};
    unsigned long long after = 0;
    double timeout = 10.0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Kd:wait", keywords, &after, &timeout))
        return NULL;
    gk_monitor *monitor = open_monitor(self);
    if (!monitor)
        return NULL;
    uint64_t latest;
    Py_BEGIN_ALLOW_THREADS
    latest = gk_monitor_wait(monitor, after, timeout);
    Py_END_ALLOW_THREADS
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
static const gk_sample *latest(PyObject *self, gk_monitor **monitor)
{
    *monitor = open_monitor(self);
    if (!*monitor)
        return NULL;
    const gk_sample *sample = gk_monitor_acquire(*monitor);
    if (!sample)
        PyErr_SetString(PyExc_RuntimeError, "no reading yet: call read() or start() first");
    return sample;
}

static PyObject *monitor_json(PyObject *self, PyObject *unused)
{
    (void)unused;
    gk_monitor *monitor;
    const gk_sample *sample = latest(self, &monitor);
    if (!sample)
        return NULL;
    char *text = NULL;
    gk_status status = gk_sample_json(sample, &text);
    gk_monitor_release(monitor, sample);
    return owned_text(self, status, text);
}

static PyObject *monitor_history_json(PyObject *self, PyObject *unused)
{
    (void)unused;
    gk_monitor *monitor = open_monitor(self);
    if (!monitor)
        return NULL;
    char *text = NULL;
    gk_status status = gk_monitor_history_json(monitor, &text);
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
    gk_status status = gk_sample_metrics(sample, openmetrics, &text, &length);
    gk_monitor_release(monitor, sample);
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
    gk_frame_options options = {.width = width < 20 ? 20 : (unsigned)width,
                                .sort = GK_TOP_GPU_MEMORY,
                                .graph_gpu = -1,
                                .unicode = unicode != 0,
                                .gpu_mask = gpu_mask};
    gk_frame frame;
    gk_status status = gk_frame_draw(monitor, sample, &options, &frame);
    gk_monitor_release(monitor, sample);
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
    gk_monitor *monitor = open_monitor(self);
    return monitor ? PyFloat_FromDouble(gk_monitor_interval(monitor)) : NULL;
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
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
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
