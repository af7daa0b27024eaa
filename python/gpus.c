/* gpukit.GPU and gpukit.Process (one GPU and one of its processes as a
 * snapshot saw them), gpus(), driver_version(), info(), and the functions
 * behind gpukit.cuda (torch.cuda's names, answered from NVML and the CUDA
 * view without ever loading the CUDA driver, so they take no GPU memory and
 * create no context). */
#include "gkpy.h"

#include <gpukit/info.h>

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- snapshots --- */

gk_snapshot *gkpy_take_snapshot(gkpy_state *state, unsigned flags)
{
    gk_snapshot *snapshot = NULL;
    gk_status status;
    /* NVML can take long (a GPU that stopped answering, a cold driver). */
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(state->probe_lock, WAIT_LOCK);
    status = state->probe ? GK_OK : gk_probe_open(&state->probe);
    if (status == GK_OK)
        status = gk_probe_read(state->probe, flags, &snapshot);
    if (status != GK_OK || snapshot->source == GK_SOURCE_NONE ||
        snapshot->absence != GK_ABSENCE_NONE) {
        /* Nothing worth keeping: look for the driver afresh next time. */
        gk_probe_close(state->probe);
        state->probe = NULL;
    }
    PyThread_release_lock(state->probe_lock);
    Py_END_ALLOW_THREADS
    if (status != GK_OK) {
        gk_snapshot_destroy(snapshot);
        gkpy_raise(state, status);
        return NULL;
    }
    return snapshot;
}

/* --- Process --- */

static PyStructSequence_Field process_fields[] = {
    {"pid", "The process id (in the driver's PID namespace)."},
    {"username", "Its owner's user name; None when unknown (another PID namespace)."},
    {"command", "Its program name; None when unknown."},
    {"gpu_memory", "Bytes of GPU memory it uses; None when the driver does not say."},
    {"type", "'C' (compute), 'G' (graphics) or 'C+G'."},
    {NULL, NULL},
};

static PyStructSequence_Desc process_desc = {
    .name = "gpukit.Process",
    /* No text signature: a struct sequence is made from one sequence. */
    .doc = "Process(pid, username, command, gpu_memory, type): a process running on a GPU,\n"
           "as the snapshot saw it (a named tuple).",
    .fields = process_fields,
    .n_in_sequence = 5,
};

static PyObject *field_or_none(gk_field field)
{
    return field.known ? PyLong_FromUnsignedLongLong(field.value) : Py_NewRef(Py_None);
}

static PyObject *text_or_none(const char *text)
{
    /* Names come from other programs and may not be UTF-8. */
    return text[0] ? PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace")
                   : Py_NewRef(Py_None);
}

static PyObject *process_new(gkpy_state *state, const gk_process *p)
{
    static const char *const types[] = {"?", "C", "G", "C+G"};
    PyObject *process = PyStructSequence_New(state->process_type);
    if (!process)
        return NULL;
    PyObject *items[] = {
        PyLong_FromUnsignedLong(p->pid), text_or_none(p->user), text_or_none(p->command),
        field_or_none(p->gpu_memory), PyUnicode_FromString(types[p->type & 3]),
    };
    bool failed = false;
    for (Py_ssize_t i = 0; i < (Py_ssize_t)(sizeof items / sizeof items[0]); i++) {
        failed |= items[i] == NULL;
        PyStructSequence_SetItem(process, i, items[i] ? items[i] : Py_NewRef(Py_None));
    }
    if (failed)
        Py_CLEAR(process);
    return process;
}

/* --- GPU --- */

/* A GPU object keeps its GPU's part of the snapshot (the snapshot itself is
 * freed when gpus() returns) and makes each attribute's Python value when it
 * is read: gpus() is called in polling loops that look at a few fields, so
 * building ~30 objects per GPU up front was most of its cost. The object
 * holds no Python objects, so it needs no GC tracking. */
typedef struct gpu_object {
    PyObject_VAR_HEAD   /* ob_size: the bytes of `storage` */
    int cuda_index;     /* -1: CUDA programs of this process do not see it */
    gk_gpu gpu;         /* its processes and mig_devices point into storage */
    gk_process storage[]; /* gpu.process_count processes, then the MIG devices */
} gpu_object;

#define GPU(self) (&((gpu_object *)(self))->gpu)

/* Getters that read one gk_field (or one text) of gk_gpu take its offset as
 * their closure. */
#define AT(member) ((void *)offsetof(gk_gpu, member))

static const void *gpu_member(PyObject *self, void *offset)
{
    return (const char *)GPU(self) + (size_t)offset;
}

static PyObject *get_count(PyObject *self, void *offset)
{
    return field_or_none(*(const gk_field *)gpu_member(self, offset));
}

static PyObject *get_text(PyObject *self, void *offset)
{
    return text_or_none(gpu_member(self, offset));
}

static PyObject *get_watts(PyObject *self, void *offset)
{
    gk_field milliwatts = *(const gk_field *)gpu_member(self, offset);
    return milliwatts.known ? PyFloat_FromDouble((double)milliwatts.value / 1000.0)
                            : Py_NewRef(Py_None);
}

static PyObject *get_flag(PyObject *self, void *offset)
{
    gk_field flag = *(const gk_field *)gpu_member(self, offset);
    return flag.known ? PyBool_FromLong(flag.value != 0) : Py_NewRef(Py_None);
}

static PyObject *get_index(PyObject *self, void *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLong(GPU(self)->index);
}

static PyObject *get_state(PyObject *self, void *unused)
{
    (void)unused;
    return PyUnicode_FromString(gk_gpu_state_name(GPU(self)->state));
}

static PyObject *get_error(PyObject *self, void *unused)
{
    (void)unused;
    const gk_gpu *gpu = GPU(self);
    return gpu->state == GK_GPU_OK ? Py_NewRef(Py_None) : text_or_none(gpu->error);
}

static PyObject *get_clocks(PyObject *self, void *unused)
{
    (void)unused;
    const gk_gpu *gpu = GPU(self);
    return Py_BuildValue("{s:N, s:N, s:N, s:N}", "sm", field_or_none(gpu->clock_sm), "memory",
                         field_or_none(gpu->clock_memory), "max_sm",
                         field_or_none(gpu->clock_max_sm), "max_memory",
                         field_or_none(gpu->clock_max_memory));
}

static PyObject *get_compute_capability(PyObject *self, void *unused)
{
    (void)unused;
    const gk_gpu *gpu = GPU(self);
    if (!gpu->compute_major.known || !gpu->compute_minor.known)
        Py_RETURN_NONE;
    return Py_BuildValue("(KK)", (unsigned long long)gpu->compute_major.value,
                         (unsigned long long)gpu->compute_minor.value);
}

static PyObject *get_cuda_index(PyObject *self, void *unused)
{
    (void)unused;
    int cuda = ((gpu_object *)self)->cuda_index;
    return cuda >= 0 ? PyLong_FromLong(cuda) : Py_NewRef(Py_None);
}

static PyObject *get_processes(PyObject *self, void *unused)
{
    (void)unused;
    const gk_gpu *gpu = GPU(self);
    if (!gpu->processes_known)
        Py_RETURN_NONE;
    gkpy_state *state = gkpy_state_of_type(Py_TYPE(self));
    PyObject *list = PyList_New((Py_ssize_t)gpu->process_count);
    for (size_t i = 0; list && i < gpu->process_count; i++) {
        PyObject *process = process_new(state, &gpu->processes[i]);
        if (!process)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, process);
    }
    return list;
}

static PyGetSetDef gpu_getset[] = {
    {"index", get_index, NULL, "The driver's index (nvidia-smi's numbering, PCI bus order).",
     NULL},
    {"uuid", get_text, NULL, "The GPU's UUID, 'GPU-...'.", AT(uuid)},
    {"name", get_text, NULL, "The product name, e.g. 'NVIDIA H100 80GB HBM3'.", AT(name)},
    {"pci_bus_id", get_text, NULL, "The PCI bus id, e.g. '00000000:18:00.0'.", AT(pci_bus_id)},
    {"state", get_state, NULL,
     "'ok', or why the GPU cannot be used: 'lost' (fell off the bus),\n"
     "'no_permission' (this user may not open it), 'error'.",
     NULL},
    {"error", get_error, NULL, "What went wrong when state is not 'ok', else None.", NULL},
    {"memory_total", get_count, NULL, "Bytes of memory in all.", AT(memory_total)},
    {"memory_used", get_count, NULL, "Bytes of memory in use.", AT(memory_used)},
    {"memory_free", get_count, NULL, "Bytes of memory free.", AT(memory_free)},
    {"memory_reserved", get_count, NULL, "Bytes the driver keeps for itself.",
     AT(memory_reserved)},
    {"utilization", get_count, NULL, "Percent of the last sample period in which a kernel ran.",
     AT(utilization_gpu)},
    {"utilization_memory", get_count, NULL,
     "Percent of the last sample period in which memory was read or written.",
     AT(utilization_memory)},
    {"utilization_encoder", get_count, NULL, "Video encoder use, percent.",
     AT(utilization_encoder)},
    {"utilization_decoder", get_count, NULL, "Video decoder use, percent.",
     AT(utilization_decoder)},
    {"temperature", get_count, NULL, "Core temperature, degrees Celsius.", AT(temperature)},
    {"fan", get_count, NULL, "Fan speed, percent of its maximum (None on passively cooled GPUs).",
     AT(fan_speed)},
    {"power_draw", get_watts, NULL, "Power draw in watts (a float).", AT(power_draw)},
    {"power_limit", get_watts, NULL, "The enforced power limit in watts (a float).",
     AT(power_limit)},
    {"clocks", get_clocks, NULL,
     "Clocks in MHz: {'sm', 'memory', 'max_sm', 'max_memory'} (values None when N/A).", NULL},
    {"compute_capability", get_compute_capability, NULL, "(major, minor), e.g. (9, 0).", NULL},
    {"persistence_mode", get_flag, NULL, "Whether persistence mode is on.", AT(persistence_mode)},
    {"mig_mode", get_flag, NULL, "Whether MIG mode is on.", AT(mig_mode)},
    {"cuda_index", get_cuda_index, NULL,
     "The GPU's number in CUDA programs of this process (cuda:N), given\n"
     "CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER; None when they do not see it.",
     NULL},
    {"processes", get_processes, NULL,
     "The processes on the GPU (gpukit.Process), or None when not read.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* "61°C" or "N/A" */
static void format_field(char *buf, size_t size, gk_field field, uint64_t divisor,
                         const char *unit)
{
    if (field.known)
        snprintf(buf, size, "%" PRIu64 "%s", field.value / divisor, unit);
    else
        snprintf(buf, size, "N/A");
}

/* A gpustat-like line:
 * [0] NVIDIA H100 80GB HBM3 | 61°C, 87 % | 40213 / 81559 MiB | 512 / 700 W | 1 process */
static void describe(const gk_gpu *gpu, char *line, size_t size)
{
    if (gpu->state != GK_GPU_OK) {
        snprintf(line, size, "<GPU [%u] %s | %s: %s>", gpu->index, gpu->name[0] ? gpu->name : "?",
                 gk_gpu_state_name(gpu->state), gpu->error);
        return;
    }
    char temp[24], util[24], used[24], total[24], draw[24], limit[24], procs[32] = "";
    format_field(temp, sizeof temp, gpu->temperature, 1, "\u00b0C");
    format_field(util, sizeof util, gpu->utilization_gpu, 1, " %");
    format_field(used, sizeof used, gpu->memory_used, 1024 * 1024, "");
    format_field(total, sizeof total, gpu->memory_total, 1024 * 1024, " MiB");
    format_field(draw, sizeof draw, gpu->power_draw, 1000, "");
    format_field(limit, sizeof limit, gpu->power_limit, 1000, " W");
    if (gpu->processes_known)
        snprintf(procs, sizeof procs, " | %zu process%s", gpu->process_count,
                 gpu->process_count == 1 ? "" : "es");
    snprintf(line, size, "<GPU [%u] %s | %s, %s | %s / %s | %s / %s%s>", gpu->index, gpu->name,
             temp, util, used, total, draw, limit, procs);
}

static PyObject *gpu_repr(PyObject *self)
{
    char line[384];
    describe(GPU(self), line, sizeof line);
    /* The name comes from the driver and may not be UTF-8. */
    return PyUnicode_DecodeUTF8(line, (Py_ssize_t)strlen(line), "replace");
}

/* A new gpukit.GPU for snapshot->gpus[index], whose cuda_index comes from
 * `view` (NULL: None). */
static PyObject *gpu_new(gkpy_state *state, const gk_snapshot *snapshot, size_t index,
                         const gk_cuda_view *view)
{
    const gk_gpu *gpu = &snapshot->gpus[index];
    size_t process_bytes = gpu->process_count * sizeof(gk_process);
    size_t mig_bytes = gpu->mig_count * sizeof(gk_mig_device);
    gpu_object *self = PyObject_NewVar(gpu_object, state->gpu_type,
                                       (Py_ssize_t)(process_bytes + mig_bytes));
    if (!self)
        return NULL;
    self->cuda_index = view ? gk_cuda_view_index(view, index) : -1;
    self->gpu = *gpu;
    /* gk_process and gk_mig_device both align as their uint64_t fields, and
     * sizeof(gk_process) is a multiple of that, so the MIG devices that
     * follow the processes are aligned. */
    self->gpu.processes = self->storage;
    self->gpu.mig_devices = (gk_mig_device *)(self->storage + gpu->process_count);
    if (process_bytes)
        memcpy(self->gpu.processes, gpu->processes, process_bytes);
    if (mig_bytes)
        memcpy(self->gpu.mig_devices, gpu->mig_devices, mig_bytes);
    return (PyObject *)self;
}

PyObject *gkpy_gpu_list(gkpy_state *state, const gk_snapshot *snapshot, const size_t *indices,
                        size_t count, const gk_cuda_view *view)
{
    PyObject *list = PyList_New((Py_ssize_t)count);
    for (size_t k = 0; list && k < count; k++) {
        PyObject *gpu = gpu_new(state, snapshot, indices ? indices[k] : k, view);
        if (!gpu)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)k, gpu);
    }
    return list;
}

static void gpu_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_Free(self);
    Py_DECREF(type);
}

PyDoc_STRVAR(gpu_doc,
"A GPU as one snapshot saw it (gpukit.gpus(), pick(), reserve()).\n\n"
"Values are in base units: bytes, watts, degrees Celsius, percent; one the\n"
"driver cannot give (not supported, not permitted) is None, never 0. The\n"
"names follow nvidia-ml-py's where it returns the same fact. A GPU that is\n"
"lost or not accessible is listed with state and error and little else.");

static PyType_Slot gpu_slots[] = {
    {Py_tp_doc, (void *)gpu_doc},
    {Py_tp_getset, gpu_getset},
    {Py_tp_repr, gpu_repr},
    {Py_tp_dealloc, gpu_dealloc},
    {0, NULL},
};

static PyType_Spec gpu_spec = {
    .name = "gpukit.GPU",
    .basicsize = sizeof(gpu_object),
    .itemsize = 1, /* bytes of storage */
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = gpu_slots,
};

/* --- module functions --- */

PyDoc_STRVAR(gpus_doc,
"gpus()\n--\n\n"
"Every GPU of this machine now, in the driver's order (nvidia-smi's), as\n"
"gpukit.GPU objects from one snapshot: memory, utilization, temperature,\n"
"power, clocks, processes, and cuda_index (the GPU's number in CUDA\n"
"programs of this process). An empty list when there is no NVIDIA GPU or\n"
"driver; GPUError when the driver is there but fails (e.g. its kernel\n"
"module is not loaded), with the fix in the message.");

static PyObject *py_gpus(PyObject *module, PyObject *unused)
{
    (void)unused;
    gkpy_state *state = gkpy_state_of_module(module);
    gk_snapshot *snapshot = gkpy_take_snapshot(state, GK_PROBE_PROCESSES | GK_PROBE_NO_CPU);
    if (!snapshot)
        return NULL;
    PyObject *list = NULL;
    bool absent = snapshot->absence == GK_ABSENCE_NO_DRIVER ||
                  snapshot->absence == GK_ABSENCE_NO_DEVICES;
    if (snapshot->gpu_count == 0 && snapshot->absence != GK_ABSENCE_NONE && !absent) {
        PyErr_SetString(state->gpu_error, snapshot->diagnosis);
    } else {
        gk_cuda_view view;
        gk_cuda_view_from_env(snapshot, &view);
        list = gkpy_gpu_list(state, snapshot, NULL, snapshot->gpu_count, &view);
    }
    gk_snapshot_destroy(snapshot);
    return list;
}

PyDoc_STRVAR(driver_version_doc,
"driver_version()\n--\n\n"
"The NVIDIA driver's version, e.g. '550.54.15', or None when there is no\n"
"driver (or it cannot say).");

static PyObject *py_driver_version(PyObject *module, PyObject *unused)
{
    (void)unused;
    gk_snapshot *snapshot = gkpy_take_snapshot(gkpy_state_of_module(module), 0);
    if (!snapshot)
        return NULL;
    PyObject *version = text_or_none(snapshot->driver_version);
    gk_snapshot_destroy(snapshot);
    return version;
}

/* Reads what `gpukit info` reads; never wakes a sleeping laptop GPU. */
static int read_info(gkpy_state *state, gk_info *info)
{
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = gk_info_read(info);
    Py_END_ALLOW_THREADS
    if (status != GK_OK) {
        gk_info_free(info);
        gkpy_raise(state, status);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(info_doc,
"info()\n--\n\n"
"What `gpukit info --json` says, as a dict: whether a GPU is usable\n"
"('gpu_usable'; 'gpu_count' usable GPUs of 'gpu_total', the others with\n"
"why in 'faulty_gpus'), the driver and CUDA versions, how CUDA_VISIBLE_DEVICES and\n"
"CUDA_DEVICE_ORDER map cuda:N to GPUs ('cuda_devices'), the device to use\n"
"('device': 'cuda:0' or 'cpu'), why there is no GPU ('diagnosis'), the CPU,\n"
"and the Optimus setup of a hybrid laptop ('optimus'; a sleeping laptop GPU\n"
"is described without waking it).");

static PyObject *py_info(PyObject *module, PyObject *unused)
{
    (void)unused;
    gkpy_state *state = gkpy_state_of_module(module);
    gk_info info;
    if (read_info(state, &info) < 0)
        return NULL;
    char *text = NULL;
    gk_status status = gk_info_json(&info, &text);
    gk_info_free(&info);
    if (status != GK_OK)
        return gkpy_raise(state, status);
    /* One JSON writer for the command and Python: the library's. */
    PyObject *result = NULL;
    PyObject *json = PyImport_ImportModule("json");
    if (json) {
        result = PyObject_CallMethod(json, "loads", "s", text);
        Py_DECREF(json);
    }
    free(text);
    return result;
}

/* --- gpukit.cuda --- */

/* How many devices CUDA programs of this process see, torch's answer:
 * visible GPUs, and none when the driver library is missing (NVML can
 * answer where libcuda is not there, e.g. a container that mounts only
 * nvidia-smi); it is looked up without loading it. -1 with an exception. */
static long cuda_visible_count(PyObject *module)
{
    gk_info info;
    if (read_info(gkpy_state_of_module(module), &info) < 0)
        return -1;
    size_t count = gk_cuda_driver_present() ? info.view.count : 0;
    gk_info_free(&info);
    return (long)count;
}

PyDoc_STRVAR(cuda_is_available_doc,
"_cuda_is_available()\n--\n\n"
"Whether CUDA programs of this process would see a GPU (see gpukit.cuda).");

static PyObject *py_cuda_is_available(PyObject *module, PyObject *unused)
{
    (void)unused;
    long count = cuda_visible_count(module);
    return count < 0 ? NULL : PyBool_FromLong(count > 0);
}

PyDoc_STRVAR(cuda_device_count_doc,
"_cuda_device_count()\n--\n\n"
"How many devices CUDA programs of this process see (see gpukit.cuda).");

static PyObject *py_cuda_device_count(PyObject *module, PyObject *unused)
{
    (void)unused;
    long count = cuda_visible_count(module);
    return count < 0 ? NULL : PyLong_FromLong(count);
}

/* The cuda:N number a torch-style device argument names: None (0), an int,
 * "cuda", "cuda:N" or a gpukit.device of kind cuda. */
static int cuda_ordinal(gkpy_state *state, PyObject *object, long *ordinal)
{
    if (object == NULL || object == Py_None) {
        *ordinal = 0;
        return 0;
    }
    if (PyLong_Check(object) && !PyBool_Check(object)) {
        *ordinal = PyLong_AsLong(object);
        return *ordinal == -1 && PyErr_Occurred() ? -1 : 0;
    }
    gk_device device;
    if (gkpy_device_from_object(state, object, &device) < 0)
        return -1;
    if (device.kind != GK_DEVICE_CUDA) {
        PyErr_Format(PyExc_ValueError, "expected a CUDA device (an int, \"cuda:N\"), not %R",
                     object);
        return -1;
    }
    *ordinal = device.index;
    return 0;
}

/* For f(device=None) (`format` is f's PyArg format, "|O:f"): takes a
 * snapshot and finds the cuda:N named in this process's view. */
static gk_snapshot *cuda_device(gkpy_state *state, PyObject *args, PyObject *kwargs,
                                const char *format, gk_cuda_device *device)
{
    static char *keywords[] = {"device", NULL};
    PyObject *arg = Py_None;
    long ordinal;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, keywords, &arg) ||
        cuda_ordinal(state, arg, &ordinal) < 0)
        return NULL;
    gk_snapshot *snapshot = gkpy_take_snapshot(state, GK_PROBE_NO_CPU);
    if (!snapshot)
        return NULL;
    gk_cuda_view view;
    gk_cuda_view_from_env(snapshot, &view);
    if (ordinal < 0 || (size_t)ordinal >= view.count) {
        /* torch raises a RuntimeError here too; GPUError is one. */
        char range[64] = "";
        if (view.count)
            snprintf(range, sizeof range, ": cuda:0 to cuda:%zu", view.count - 1);
        PyErr_Format(state->gpu_error,
                     "invalid device id %ld: CUDA programs of this process see %zu device%s%s "
                     "(CUDA_VISIBLE_DEVICES decides which)",
                     ordinal, view.count, view.count == 1 ? "" : "s", range);
        gk_snapshot_destroy(snapshot);
        return NULL;
    }
    *device = view.devices[ordinal];
    return snapshot;
}

PyDoc_STRVAR(cuda_get_device_name_doc,
"_cuda_get_device_name(device=None)\n--\n\n"
"The name of cuda:N (see gpukit.cuda).");

static PyObject *py_cuda_get_device_name(PyObject *module, PyObject *args, PyObject *kwargs)
{
    gk_cuda_device device;
    gk_snapshot *snapshot =
        cuda_device(gkpy_state_of_module(module), args, kwargs, "|O:get_device_name", &device);
    if (!snapshot)
        return NULL;
    PyObject *name = PyUnicode_FromString(gk_cuda_device_name(snapshot, &device));
    gk_snapshot_destroy(snapshot);
    return name;
}

PyDoc_STRVAR(cuda_mem_get_info_doc,
"_cuda_mem_get_info(device=None)\n--\n\n"
"(free, total) bytes of cuda:N (see gpukit.cuda).");

static PyObject *py_cuda_mem_get_info(PyObject *module, PyObject *args, PyObject *kwargs)
{
    gkpy_state *state = gkpy_state_of_module(module);
    gk_cuda_device device;
    gk_snapshot *snapshot = cuda_device(state, args, kwargs, "|O:mem_get_info", &device);
    if (!snapshot)
        return NULL;
    const gk_gpu *gpu = &snapshot->gpus[device.gpu];
    gk_field total = gpu->memory_total, free_bytes = gpu->memory_free;
    if (device.mig >= 0) {
        const gk_mig_device *mig = &gpu->mig_devices[device.mig];
        total = mig->memory_total;
        free_bytes = (gk_field){mig->memory_total.value - mig->memory_used.value,
                                mig->memory_total.known && mig->memory_used.known &&
                                    mig->memory_used.value <= mig->memory_total.value};
    }
    PyObject *result = NULL;
    if (total.known && free_bytes.known)
        result = Py_BuildValue("(KK)", (unsigned long long)free_bytes.value,
                               (unsigned long long)total.value);
    else
        PyErr_Format(state->gpu_error, "the driver does not report the memory of %s",
                     gk_cuda_device_name(snapshot, &device));
    gk_snapshot_destroy(snapshot);
    return result;
}

static PyMethodDef gpus_functions[] = {
    {"gpus", py_gpus, METH_NOARGS, gpus_doc},
    {"driver_version", py_driver_version, METH_NOARGS, driver_version_doc},
    {"info", py_info, METH_NOARGS, info_doc},
    {"_cuda_is_available", py_cuda_is_available, METH_NOARGS, cuda_is_available_doc},
    {"_cuda_device_count", py_cuda_device_count, METH_NOARGS, cuda_device_count_doc},
    {"_cuda_get_device_name", (PyCFunction)(void (*)(void))py_cuda_get_device_name,
     METH_VARARGS | METH_KEYWORDS, cuda_get_device_name_doc},
    {"_cuda_mem_get_info", (PyCFunction)(void (*)(void))py_cuda_mem_get_info,
     METH_VARARGS | METH_KEYWORDS, cuda_mem_get_info_doc},
    {NULL, NULL, 0, NULL},
};

int gkpy_gpus_init(PyObject *module, gkpy_state *state)
{
    state->gpu_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &gpu_spec, NULL);
    if (!state->gpu_type || PyModule_AddType(module, state->gpu_type) < 0)
        return -1;
    state->process_type = PyStructSequence_NewType(&process_desc);
    if (!state->process_type || PyModule_AddType(module, state->process_type) < 0)
        return -1;
    return PyModule_AddFunctions(module, gpus_functions);
}
