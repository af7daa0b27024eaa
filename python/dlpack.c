/* DLPack both ways: __dlpack__ / __dlpack_device__ export CPU and CUDA
 * arrays (DLPack 1.x versioned capsules, or legacy ones for consumers that
 * ask for no version); gpukit.from_dlpack (and gkpy_from_protocols)
 * import from any producer. The capsule names and deleter rules of the
 * DLPack Python specification are the contract (interop.h: lifetimes and
 * read-only memory).
 *
 * The DLPack structs are declared here from the DLPack specification (the
 * ABI is the contract; no header is vendored). */
#include "interop.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* --- DLPack (dlpack.h, version 1.1) --- */

enum {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3, /* pinned host memory: the CPU can use it */
    kDLOpenCL = 4,
    kDLCUDAManaged = 13,
};

enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLComplex = 5, kDLBool = 6 };

#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1)

typedef struct {
    int32_t device_type;
    int32_t device_id;
} DLDevice;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* elements; NULL: C order */
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

/* The capsule names of the DLPack Python specification: a consumer renames
 * the capsule to the "used_" name when it takes the tensor over. */
static const char LEGACY_NAME[] = "dltensor";
static const char LEGACY_USED[] = "used_dltensor";
static const char VERSIONED_NAME[] = "dltensor_versioned";
static const char VERSIONED_USED[] = "used_dltensor_versioned";

/* --- DLPack (export) --- */

/* What a capsule's manager_ctx is: the tensor itself, its own handle on the
 * memory, and the shape and strides the tensor points at. */
typedef struct dlpack_export {
    union {
        DLManagedTensor legacy;
        DLManagedTensorVersioned versioned;
    } managed;
    gk_array *array;
    int64_t shape[GK_MAX_DIMS];
    int64_t strides[GK_MAX_DIMS];
} dlpack_export;

/* The deleters may run on any thread, with or without the GIL: they touch
 * no Python object (gk_array_free of an imported array takes the GIL in
 * its own release callback). */
static void legacy_deleter(DLManagedTensor *self)
{
    dlpack_export *export = self->manager_ctx;
    gk_array_free(export->array);
    free(export);
}

static void versioned_deleter(DLManagedTensorVersioned *self)
{
    dlpack_export *export = self->manager_ctx;
    gk_array_free(export->array);
    free(export);
}

/* A capsule nobody consumed (its name unchanged) deletes its tensor; a
 * consumed one ("used_...") belongs to the consumer. The pending
 * exception, if any, is kept. */
static void legacy_capsule_destructor(PyObject *capsule)
{
    if (PyCapsule_IsValid(capsule, LEGACY_NAME)) {
        DLManagedTensor *tensor = PyCapsule_GetPointer(capsule, LEGACY_NAME);
        if (tensor->deleter)
            tensor->deleter(tensor);
    }
}

static void versioned_capsule_destructor(PyObject *capsule)
{
    if (PyCapsule_IsValid(capsule, VERSIONED_NAME)) {
        DLManagedTensorVersioned *tensor = PyCapsule_GetPointer(capsule, VERSIONED_NAME);
        if (tensor->deleter)
            tensor->deleter(tensor);
    }
}

static DLDataType dlpack_dtype(gk_dtype dtype)
{
    switch (dtype) {
    case GK_BOOL: return (DLDataType){kDLBool, 8, 1};
    case GK_INT8: return (DLDataType){kDLInt, 8, 1};
    case GK_INT16: return (DLDataType){kDLInt, 16, 1};
    case GK_INT32: return (DLDataType){kDLInt, 32, 1};
    case GK_INT64: return (DLDataType){kDLInt, 64, 1};
    case GK_UINT8: return (DLDataType){kDLUInt, 8, 1};
    case GK_UINT16: return (DLDataType){kDLUInt, 16, 1};
    case GK_UINT32: return (DLDataType){kDLUInt, 32, 1};
    case GK_UINT64: return (DLDataType){kDLUInt, 64, 1};
    case GK_FLOAT32: return (DLDataType){kDLFloat, 32, 1};
    case GK_FLOAT64: return (DLDataType){kDLFloat, 64, 1};
    case GK_FLOAT16: return (DLDataType){kDLFloat, 16, 1};
    case GK_BFLOAT16: return (DLDataType){kDLBfloat, 16, 1};
    case GK_COMPLEX64: return (DLDataType){kDLComplex, 64, 1};
    case GK_COMPLEX128: return (DLDataType){kDLComplex, 128, 1};
    }
    return (DLDataType){kDLUInt, 8, 1};
}

static DLDevice dlpack_device(gk_device device)
{
    switch (device.kind) {
    case GK_DEVICE_CPU: return (DLDevice){kDLCPU, 0};
    case GK_DEVICE_CUDA: return (DLDevice){kDLCUDA, device.index};
    case GK_DEVICE_OPENCL: return (DLDevice){kDLOpenCL, device.index};
    }
    return (DLDevice){kDLCPU, 0};
}

/* The (device_type, device_id) pair a consumer named in dl_device=. */
static int parse_dl_device(PyObject *object, gk_device *device)
{
    int type, id;
    if (!PyTuple_Check(object) || !PyArg_ParseTuple(object, "ii", &type, &id)) {
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "dl_device must be a (device_type, device_id) tuple, not %R", object);
        }
        return -1;
    }
    if (type == kDLCPU && id == 0) {
        *device = gk_device_cpu();
        return 0;
    }
    if (type == kDLCUDA && id >= 0) {
        *device = (gk_device){GK_DEVICE_CUDA, id, 0};
        return 0;
    }
    PyErr_Format(PyExc_BufferError,
                 "cannot export to DLPack device (%d, %d): gpukit exports to the CPU (1, 0) "
                 "and CUDA devices (2, N)",
                 type, id);
    return -1;
}

/* What a __dlpack__ call asks for, once its arguments are checked. */
typedef struct export_plan {
    bool versioned;   /* a DLPack 1.x capsule, else a legacy one */
    unsigned minor;   /* the versioned capsule's minor version */
    gk_device target; /* where the consumer wants the data */
    bool copied;      /* a copy, not the array's own memory */
    /* CUDA: the stream the consumer names (1 legacy, 2 per-thread, or a
     * handle), or -1: it asks for no synchronisation */
    long long stream;
} export_plan;

/* max_version=: versioned when the consumer understands DLPack 1, with the
 * newest minor version it takes (ours is 1.1; 1.0 has the same layout). */
static int plan_version(PyObject *max_version, export_plan *plan)
{
    plan->versioned = false;
    plan->minor = 1;
    if (max_version == Py_None)
        return 0;
    unsigned long major_value, minor_value;
    if (!PyTuple_Check(max_version) ||
        !PyArg_ParseTuple(max_version, "kk", &major_value, &minor_value)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "max_version must be a (major, minor) tuple, not %R",
                     max_version);
        return -1;
    }
    plan->versioned = major_value >= 1;
    if (major_value == 1 && minor_value < plan->minor)
        plan->minor = (unsigned)minor_value;
    return 0;
}

/* stream=: what the consumer will use the data on. CUDA only; None is the
 * legacy default stream (1), and -1 asks for no synchronisation. */
static int plan_stream(PyObject *stream, export_plan *plan)
{
    plan->stream = -1;
    if (plan->target.kind == GK_DEVICE_CPU) {
        if (stream == Py_None)
            return 0;
        PyErr_Format(PyExc_ValueError,
                     "__dlpack__: stream must be None for an export to the CPU, not %R", stream);
        return -1;
    }
    long long value = 1;
    if (stream != Py_None) {
        value = PyLong_AsLongLong(stream);
        if (value == -1 && PyErr_Occurred())
            return -1;
        if (value == 0 || value < -1) {
            PyErr_Format(PyExc_ValueError,
                         "__dlpack__: stream %lld is not allowed (0 is ambiguous; use 1 for the "
                         "legacy default stream, 2 for the per-thread one, a stream handle, or "
                         "-1 for no synchronisation)",
                         value);
            return -1;
        }
    }
    plan->stream = value;
    return 0;
}

/* The export of the array on `device` that __dlpack__'s arguments ask for
 * (copy as gkpy_parse_copy gives it); -1 with an exception when it cannot
 * be made. */
static int plan_export(gk_device device, PyObject *stream, PyObject *max_version,
                       PyObject *dl_device, int copy, export_plan *plan)
{
    if (plan_version(max_version, plan) < 0)
        return -1;
    char name[GK_DEVICE_NAME_MAX], target_name[GK_DEVICE_NAME_MAX];
    plan->target = device;
    if (dl_device != Py_None && parse_dl_device(dl_device, &plan->target) < 0)
        return -1;
    bool moved = !gk_device_equal(device, plan->target);
    if (moved && copy == 0) {
        PyErr_Format(PyExc_BufferError,
                     "__dlpack__(copy=False): the array is on %s; exporting it to %s takes a "
                     "copy",
                     device_text(device, name), device_text(plan->target, target_name));
        return -1;
    }
    if (plan->target.kind == GK_DEVICE_OPENCL) {
        PyErr_Format(PyExc_BufferError,
                     "OpenCL arrays cannot be exported with DLPack (their addresses are not "
                     "pointers): the array is on %s; pass dl_device=(1, 0) for a CPU copy, or "
                     "move it with .cpu()",
                     device_text(device, name));
        return -1;
    }
    plan->copied = moved || copy == 1;
    return plan_stream(stream, plan);
}

/* A capsule holding `exported` (taken over, also on failure) as `plan`
 * says: the tensor, its shape and strides live in one dlpack_export that
 * the deleter frees. */
static PyObject *new_capsule(gk_array *exported, const export_plan *plan)
{
    dlpack_export *export = calloc(1, sizeof *export);
    if (!export) {
        gk_array_free(exported);
        return PyErr_NoMemory();
    }
    export->array = exported;
    int ndim = gk_array_ndim(exported);
    for (int i = 0; i < ndim; i++) {
        export->shape[i] = gk_array_shape(exported)[i];
        export->strides[i] = gk_array_strides(exported)[i];
    }
    DLTensor tensor = {
        .data = gk_array_data(exported),
        .device = dlpack_device(plan->target),
        .ndim = ndim,
        .dtype = dlpack_dtype(gk_array_dtype(exported)),
        .shape = export->shape,
        .strides = export->strides,
        .byte_offset = 0,
    };
    PyObject *capsule;
    if (plan->versioned) {
        DLManagedTensorVersioned *managed = &export->managed.versioned;
        managed->version = (DLPackVersion){1, plan->minor};
        managed->manager_ctx = export;
        managed->deleter = versioned_deleter;
        /* Broadcast views are read-only, as in the buffer protocol. */
        managed->flags = (plan->copied ? DLPACK_FLAG_BITMASK_IS_COPIED : 0) |
                         (!gk_array_is_writable(exported) ? DLPACK_FLAG_BITMASK_READ_ONLY : 0);
        managed->dl_tensor = tensor;
        capsule = PyCapsule_New(managed, VERSIONED_NAME, versioned_capsule_destructor);
        if (!capsule)
            versioned_deleter(managed);
    } else {
        DLManagedTensor *managed = &export->managed.legacy;
        managed->manager_ctx = export;
        managed->deleter = legacy_deleter;
        managed->dl_tensor = tensor;
        capsule = PyCapsule_New(managed, LEGACY_NAME, legacy_capsule_destructor);
        if (!capsule)
            legacy_deleter(managed);
    }
    return capsule;
}

PyDoc_STRVAR(array_dlpack_doc,
"__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n"
"--\n\n"
"The array as a DLPack capsule (the array API's export protocol; use\n"
"numpy.from_dlpack(x), torch.from_dlpack(x), cupy.from_dlpack(x)).\n\n"
"A consumer that passes max_version >= (1, 0) gets a versioned capsule\n"
"(\"dltensor_versioned\", DLPack 1.x), others a legacy one (\"dltensor\").\n"
"The capsule shares the array's memory, which stays alive until the\n"
"consumer is done with it, whatever happens to this array object.\n\n"
"stream: CUDA arrays only (None or 1: the legacy default stream, 2: the\n"
"per-thread default stream, another int: a CUDA stream handle; -1: no\n"
"synchronisation). Unless it is -1, the device is synchronised before the\n"
"capsule is returned, so work queued on any stream sees the data.\n"
"dl_device: (device_type, device_id) to export to, e.g. (1, 0) for the\n"
"CPU: a copy when it is not the array's device (BufferError with\n"
"copy=False). copy: True always copies, False never, None when needed.\n"
"OpenCL arrays cannot be exported in place (DLPack cannot name their\n"
"memory): pass dl_device=(1, 0), or move them with .cpu().");

static PyObject *array_dlpack(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None,
             *copy_object = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", keywords, &stream,
                                     &max_version, &dl_device, &copy_object))
        return NULL;
    const gk_array *a = array_of(self);
    int copy;
    export_plan plan;
    if (gkpy_parse_copy(copy_object, &copy) < 0 ||
        plan_export(gk_array_device(a), stream, max_version, dl_device, copy, &plan) < 0)
        return NULL;
    gk_array *exported = NULL;
    gk_status status = plan.copied ? gkpy_copy_to(a, plan.target, &exported)
                                   : gkpy_new_handle(a, &exported);
    /* gpukit queues work on its own stream: finishing it is the simple way
     * to make the data ready for whatever stream the consumer uses; and
     * the memory goes back to gpukit only after the consumer's work. */
    if (status == GK_OK && plan.stream != -1)
        status = gkpy_synchronize(plan.target);
    if (status == GK_OK)
        gk_array_share(exported, plan.stream == 1 ? 1 : 0);
    if (status != GK_OK) {
        gk_array_free(exported);
        return gkpy_raise(state_of(self), status);
    }
    return new_capsule(exported, &plan);
}

PyDoc_STRVAR(array_dlpack_device_doc,
"__dlpack_device__($self, /)\n"
"--\n\n"
"(device_type, device_id) in DLPack's terms: (1, 0) for the CPU, (2, N) for\n"
"cuda:N, (4, D) for opencl:P:D (which __dlpack__ exports only as a copy).");

static PyObject *array_dlpack_device(PyObject *self, PyObject *unused)
{
    (void)unused;
    DLDevice device = dlpack_device(gk_array_device(array_of(self)));
    return Py_BuildValue("(ii)", (int)device.device_type, (int)device.device_id);
}

/* --- import: DLPack --- */

/* The release callbacks of imports: they call the producer's deleter,
 * which may run Python code (a producer written in Python, or a Cython
 * one dropping its owner). They can run while an exception is pending (an
 * import that fails after taking the tensor over raises, then lets go;
 * a view dropped during unwinding), and Python code must not start with
 * one set: the deleter would fail, or clear it so that the caller returns
 * NULL without an exception (SystemError). So it is set aside meanwhile. */
typedef struct deleter_call {
    PyGILState_STATE gil;
    PyObject *type, *value, *traceback; /* the exception set aside */
} deleter_call;

static void enter_deleter(deleter_call *call)
{
    call->gil = PyGILState_Ensure();
    PyErr_Fetch(&call->type, &call->value, &call->traceback);
}

static void leave_deleter(deleter_call *call)
{
    PyErr_Restore(call->type, call->value, call->traceback);
    PyGILState_Release(call->gil);
}

static void release_legacy(void *context)
{
    DLManagedTensor *tensor = context;
    if (tensor->deleter) {
        deleter_call call;
        enter_deleter(&call);
        tensor->deleter(tensor);
        leave_deleter(&call);
    }
}

static void release_versioned(void *context)
{
    DLManagedTensorVersioned *tensor = context;
    if (tensor->deleter) {
        deleter_call call;
        enter_deleter(&call);
        tensor->deleter(tensor);
        leave_deleter(&call);
    }
}

static int dlpack_dtype_of(DLDataType type, gk_dtype *dtype)
{
    int found = -1;
    if (type.lanes == 1 && type.bits % 8 == 0) {
        switch (type.code) {
        case kDLBool: found = gkpy_dtype_of_kind('b', type.bits / 8); break;
        case kDLUInt: found = gkpy_dtype_of_kind('u', type.bits / 8); break;
        case kDLInt: found = gkpy_dtype_of_kind('i', type.bits / 8); break;
        case kDLFloat: found = gkpy_dtype_of_kind('f', type.bits / 8); break;
        case kDLBfloat: found = type.bits == 16 ? GK_BFLOAT16 : -1; break;
        case kDLComplex: found = gkpy_dtype_of_kind('c', type.bits / 8); break;
        }
    }
    if (found >= 0) {
        *dtype = (gk_dtype)found;
        return 0;
    }
    const char *codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
    if (type.code < 7)
        PyErr_Format(PyExc_TypeError, "DLPack dtype %s%u%s is not supported; %s",
                     codes[type.code], (unsigned)type.bits,
                     type.lanes != 1 ? " with several lanes" : "", GKPY_SUPPORTED_DTYPES);
    else
        PyErr_Format(PyExc_TypeError, "DLPack dtype code %u (%u bits) is not supported; %s",
                     (unsigned)type.code, (unsigned)type.bits, GKPY_SUPPORTED_DTYPES);
    return -1;
}

/* Copies the elements of host memory at `from` (`shape`, `strides` in
 * elements, NULL: C order; any alignment) to `to` in C order. */
static void gather(char *to, const char *from, int ndim, const int64_t *shape,
                   const int64_t *strides, size_t size)
{
    int64_t count = 1, index[GK_MAX_DIMS] = {0};
    for (int i = 0; i < ndim; i++)
        count *= shape[i];
    if (!strides) {
        memcpy(to, from, (size_t)count * size);
        return;
    }
    for (int64_t k = 0; k < count; k++) {
        const char *element = from;
        for (int i = 0; i < ndim; i++)
            element += index[i] * strides[i] * (int64_t)size;
        memcpy(to + (size_t)k * size, element, size);
        for (int i = ndim - 1; i >= 0 && ++index[i] == shape[i]; i--)
            index[i] = 0;
    }
}

static int dlpack_device_of(DLDevice dl, gk_device *device)
{
    switch (dl.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
        *device = gk_device_cpu();
        return 0;
    case kDLCUDA:
    case kDLCUDAManaged:
        *device = (gk_device){GK_DEVICE_CUDA, dl.device_id, 0};
        return 0;
    }
    PyErr_Format(PyExc_BufferError,
                 "the DLPack tensor is on device type %d; gpukit takes CPU (1) and CUDA "
                 "(2, 3, 13) memory",
                 (int)dl.device_type);
    return -1;
}

/* The tensor of a capsule, as import_capsule takes it. */
typedef struct capsule_tensor {
    bool versioned;
    void *managed; /* the DLManagedTensorVersioned or DLManagedTensor */
    DLTensor *tensor;
    bool read_only;
    gk_device device;
    gk_dtype dtype;
} capsule_tensor;

/* Reads and checks the tensor in `capsule` (a new "dltensor" or
 * "dltensor_versioned" one), leaving the capsule as it is. */
static int read_capsule(PyObject *capsule, capsule_tensor *t)
{
    t->versioned = PyCapsule_IsValid(capsule, VERSIONED_NAME);
    t->read_only = false;
    if (!t->versioned && !PyCapsule_IsValid(capsule, LEGACY_NAME)) {
        PyErr_Format(PyExc_TypeError,
                     "__dlpack__ returned %R, not a DLPack capsule named \"dltensor\" or "
                     "\"dltensor_versioned\" (a capsule can be consumed only once)",
                     capsule);
        return -1;
    }
    if (t->versioned) {
        DLManagedTensorVersioned *modern = PyCapsule_GetPointer(capsule, VERSIONED_NAME);
        if (!modern)
            return -1;
        if (modern->version.major != 1) {
            PyErr_Format(PyExc_BufferError,
                         "the DLPack tensor has version %u.%u; gpukit understands 1.x",
                         (unsigned)modern->version.major, (unsigned)modern->version.minor);
            return -1;
        }
        t->managed = modern;
        t->tensor = &modern->dl_tensor;
        t->read_only = (modern->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    } else {
        DLManagedTensor *legacy = PyCapsule_GetPointer(capsule, LEGACY_NAME);
        if (!legacy)
            return -1;
        t->managed = legacy;
        t->tensor = &legacy->dl_tensor;
    }
    if (dlpack_device_of(t->tensor->device, &t->device) < 0 ||
        dlpack_dtype_of(t->tensor->dtype, &t->dtype) < 0)
        return -1;
    if (t->tensor->ndim < 0 || t->tensor->ndim > GK_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "the DLPack tensor has %d dimensions; gpukit has 0 to %d",
                     (int)t->tensor->ndim, GK_MAX_DIMS);
        return -1;
    }
    return 0;
}

/* A C-order copy of a CPU tensor whose elements are not aligned (gpukit's
 * loops need aligned ones), made while the capsule still owns the tensor
 * (its destructor deletes it). */
static int copy_unaligned(gkpy_state *state, const capsule_tensor *t, const char *data, int copy,
                          gk_array **out)
{
    if (copy == 0) {
        PyErr_SetString(PyExc_ValueError,
                        "the DLPack tensor's data is not aligned to its element size, so it "
                        "must be copied; copy=False forbids that (pass copy=None)");
        return -1;
    }
    const DLTensor *tensor = t->tensor;
    gk_status status = gk_empty(t->device, t->dtype, tensor->ndim, tensor->shape, out);
    if (status != GK_OK) {
        gkpy_raise(state, status);
        return -1;
    }
    gather(gk_array_data(*out), data, tensor->ndim, tensor->shape, tensor->strides,
           gk_dtype_size(t->dtype));
    return 0;
}

/* A gk_array over the tensor in `capsule` (a new "dltensor" or
 * "dltensor_versioned" one), which is renamed as consumed once the array
 * owns the tensor. Before that, a failure leaves the capsule as it was, so
 * its destructor deletes the tensor. */
static int import_capsule(gkpy_state *state, PyObject *capsule, int copy, gk_array **out)
{
    *out = NULL;
    capsule_tensor t;
    if (read_capsule(capsule, &t) < 0)
        return -1;
    if (t.read_only && copy == 0)
        return gkpy_refuse_read_only("the DLPack tensor");
    const DLTensor *tensor = t.tensor;
    char *data = (char *)tensor->data + tensor->byte_offset;
    if ((uintptr_t)data % gk_dtype_size(t.dtype) != 0 && t.device.kind == GK_DEVICE_CPU)
        return copy_unaligned(state, &t, data, copy, out);
    /* Consumed from here on: the deleter is ours to call, through the
     * array's release or right here when no array can be made. */
    if (PyCapsule_SetName(capsule, t.versioned ? VERSIONED_USED : LEGACY_USED) < 0)
        return -1;
    void (*release)(void *) = t.versioned ? release_versioned : release_legacy;
    gk_array *wrapped;
    gk_status status = gk_wrap(t.device, t.dtype, tensor->ndim, tensor->shape, tensor->strides,
                               data, release, t.managed, &wrapped);
    if (status != GK_OK) {
        gkpy_raise(state, status);
        release(t.managed);
        return -1;
    }
    status = gkpy_settle_import(&wrapped, t.read_only, copy);
    if (status != GK_OK) {
        gkpy_raise(state, status);
        return -1;
    }
    *out = wrapped;
    return 0;
}

/* Calls object.__dlpack__(stream=..., max_version=(1, 1)), falling back to
 * the legacy call when the producer does not take max_version (TypeError). */
static PyObject *call_dlpack(PyObject *object, PyObject *stream)
{
    PyObject *method = PyObject_GetAttrString(object, "__dlpack__");
    if (!method)
        return NULL;
    PyObject *kwargs = stream ? Py_BuildValue("{s:O,s:(ii)}", "stream", stream, "max_version", 1, 1)
                              : Py_BuildValue("{s:(ii)}", "max_version", 1, 1);
    PyObject *empty = PyTuple_New(0);
    PyObject *capsule = NULL;
    if (kwargs && empty) {
        capsule = PyObject_Call(method, empty, kwargs);
        if (!capsule && PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            Py_DECREF(kwargs);
            kwargs = stream ? Py_BuildValue("{s:O}", "stream", stream) : PyDict_New();
            if (kwargs)
                capsule = PyObject_Call(method, empty, kwargs);
        }
    }
    Py_XDECREF(kwargs);
    Py_XDECREF(empty);
    Py_DECREF(method);
    return capsule;
}

/* The array API's from_dlpack for any producer; device NULL: where the
 * data is. */
PyObject *gkpy_import_dlpack(gkpy_state *state, PyObject *object, const gk_device *device,
                             int copy)
{
    PyObject *where = PyObject_CallMethod(object, "__dlpack_device__", NULL);
    if (!where)
        return NULL;
    int type, id;
    if (!PyTuple_Check(where) || !PyArg_ParseTuple(where, "ii", &type, &id)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "__dlpack_device__ returned %R, not a (device_type, device_id) tuple",
                     where);
        Py_DECREF(where);
        return NULL;
    }
    Py_DECREF(where);
    /* A CUDA producer makes the legacy default stream (1) wait for its
     * work; gpukit's stream does not wait for that one, so the host waits
     * for it below. CPU producers take no stream. */
    bool cuda = type == kDLCUDA || type == kDLCUDAManaged;
    PyObject *stream = cuda ? PyLong_FromLong(1) : NULL;
    if (cuda && !stream)
        return NULL;
    PyObject *capsule = call_dlpack(object, stream);
    Py_XDECREF(stream);
    if (!capsule)
        return NULL;
    gk_status status = GK_OK;
    if (cuda) {
        Py_BEGIN_ALLOW_THREADS
        status = gk_cuda_stream_wait((gk_device){GK_DEVICE_CUDA, id, 0}, 1);
        Py_END_ALLOW_THREADS
    }
    if (status != GK_OK) {
        Py_DECREF(capsule);
        return gkpy_raise(state, status);
    }
    /* With a device, copy=1 waits for the device check: a move to another
     * device is the one copy then. */
    gk_array *array;
    int failed = import_capsule(state, capsule, device && copy == 1 ? -1 : copy, &array);
    Py_DECREF(capsule);
    if (failed)
        return NULL;
    if (device && !gk_device_equal(*device, gk_array_device(array))) {
        char from[GK_DEVICE_NAME_MAX], to[GK_DEVICE_NAME_MAX];
        if (copy == 0) {
            PyErr_Format(PyExc_ValueError,
                         "from_dlpack(copy=False): the data is on %s; putting it on %s takes "
                         "a copy",
                         device_text(gk_array_device(array), from), device_text(*device, to));
            gk_array_free(array);
            return NULL;
        }
        gk_array *moved = NULL;
        status = gkpy_copy_to(array, *device, &moved);
        gk_array_free(array);
        if (status != GK_OK)
            return gkpy_raise(state, status);
        array = moved;
    } else if (device && copy == 1) {
        status = gkpy_settle_import(&array, true, copy);
        if (status != GK_OK)
            return gkpy_raise(state, status);
    }
    return gkpy_array_wrap(state, array);
}

/* from_dlpack of a gpukit array: the same memory (or a copy), no capsule. */
PyObject *gkpy_import_own(gkpy_state *state, PyObject *object, const gk_device *device, int copy)
{
    const gk_array *a = array_of(object);
    gk_device target = device ? *device : gk_array_device(a);
    bool moved = !gk_device_equal(target, gk_array_device(a));
    gk_array *out = NULL;
    gk_status status;
    if (moved && copy == 0) {
        char from[GK_DEVICE_NAME_MAX], to[GK_DEVICE_NAME_MAX];
        PyErr_Format(PyExc_ValueError,
                     "from_dlpack(copy=False): the data is on %s; putting it on %s takes a copy",
                     device_text(gk_array_device(a), from), device_text(target, to));
        return NULL;
    }
    status = moved || copy == 1 ? gkpy_copy_to(a, target, &out) : gkpy_new_handle(a, &out);
    return status == GK_OK ? gkpy_array_wrap(state, out) : gkpy_raise(state, status);
}

PyDoc_STRVAR(from_dlpack_doc,
"from_dlpack(x, /, *, device=None, copy=None)\n"
"--\n\n"
"A gpukit array over the memory of `x`, any object with __dlpack__ and\n"
"__dlpack_device__ (NumPy, PyTorch, CuPy, JAX arrays), without copying.\n\n"
"CPU and CUDA memory is taken; dtypes bool, int8 ... int64, uint8 ...\n"
"uint64, float16, bfloat16, float32, float64, complex64 and complex128\n"
"(others raise TypeError). The producer's memory stays alive as long as\n"
"any gpukit array or view over it does. device: where the result must be\n"
"(a copy when the data is elsewhere); copy: True always copies, False\n"
"never does (ValueError when a copy is needed), None when needed.\n"
"Memory the producer marks read-only is copied, since gpukit cannot mark\n"
"an array read-only.");

static PyObject *from_dlpack(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"", "device", "copy", NULL};
    PyObject *object, *device_object = Py_None, *copy_object = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OO:from_dlpack", keywords, &object,
                                     &device_object, &copy_object))
        return NULL;
    gkpy_state *state = gkpy_state_of_module(module);
    int copy, has_device;
    gk_device device;
    if (gkpy_parse_copy(copy_object, &copy) < 0 ||
        (has_device = gkpy_optional_device(state, device_object, &device)) < 0)
        return NULL;
    const gk_device *wanted = has_device ? &device : NULL;
    if (gkpy_is_array(state, object))
        return gkpy_import_own(state, object, wanted, copy);
    if (!PyObject_HasAttrString(object, "__dlpack__") ||
        !PyObject_HasAttrString(object, "__dlpack_device__")) {
        PyErr_Format(PyExc_TypeError,
                     "from_dlpack: %.100s objects do not support DLPack (no __dlpack__ and "
                     "__dlpack_device__); try gpukit.asarray",
                     Py_TYPE(object)->tp_name);
        return NULL;
    }
    return gkpy_import_dlpack(state, object, wanted, copy);
}

/* --- tables (array.c takes them in) --- */

PyMethodDef gkpy_dlpack_array_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))array_dlpack, METH_VARARGS | METH_KEYWORDS,
     array_dlpack_doc},
    {"__dlpack_device__", array_dlpack_device, METH_NOARGS, array_dlpack_device_doc},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef dlpack_functions[] = {
    {"from_dlpack", (PyCFunction)(void (*)(void))from_dlpack, METH_VARARGS | METH_KEYWORDS,
     from_dlpack_doc},
    {NULL, NULL, 0, NULL},
};

int gkpy_dlpack_init(PyObject *module, gkpy_state *state)
{
    (void)state;
    return PyModule_AddFunctions(module, dlpack_functions);
}
