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
    case GK_UINT8: return (DLDataType){kDLUInt, 8, 1};
    case GK_INT32: return (DLDataType){kDLInt, 32, 1};
    case GK_INT64: return (DLDataType){kDLInt, 64, 1};
    case GK_FLOAT32: return (DLDataType){kDLFloat, 32, 1};
    case GK_FLOAT64: return (DLDataType){kDLFloat, 64, 1};
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
    gkpy_state *state = state_of(self);
    const gk_array *a = array_of(self);
    int copy;
    if (gkpy_parse_copy(copy_object, &copy) < 0)
        return NULL;

    /* Versioned when the consumer understands DLPack 1: the newest minor
     * version it takes (ours is 1.1; 1.0 has the same layout). */
    bool versioned = false;
    unsigned minor = 1;
    if (max_version != Py_None) {
        unsigned long major_value, minor_value;
        if (!PyTuple_Check(max_version) ||
            !PyArg_ParseTuple(max_version, "kk", &major_value, &minor_value)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "max_version must be a (major, minor) tuple, not %R",
                         max_version);
            return NULL;
        }
        versioned = major_value >= 1;
        if (major_value == 1 && minor_value < minor)
            minor = (unsigned)minor_value;
    }

    char name[GK_DEVICE_NAME_MAX], target_name[GK_DEVICE_NAME_MAX];
    gk_device device = gk_array_device(a), target = device;
    if (dl_device != Py_None && parse_dl_device(dl_device, &target) < 0)
        return NULL;
    bool moved = !gk_device_equal(device, target);
    if (moved && copy == 0) {
        PyErr_Format(PyExc_BufferError,
                     "__dlpack__(copy=False): the array is on %s; exporting it to %s takes a "
                     "copy",
                     device_text(device, name), device_text(target, target_name));
        return NULL;
    }
    if (target.kind == GK_DEVICE_OPENCL) {
        PyErr_Format(PyExc_BufferError,
                     "OpenCL arrays cannot be exported with DLPack (their addresses are not "
                     "pointers): the array is on %s; pass dl_device=(1, 0) for a CPU copy, or "
                     "move it with .cpu()",
                     device_text(device, name));
        return NULL;
    }
    /* stream: what the consumer will use the data on. */
    long long stream_value = -1;
    if (target.kind == GK_DEVICE_CPU) {
        if (stream != Py_None) {
            PyErr_Format(PyExc_ValueError,
                         "__dlpack__: stream must be None for an export to the CPU, not %R",
                         stream);
            return NULL;
        }
    } else {
        stream_value = 1; /* None: the legacy default stream */
        if (stream != Py_None) {
            stream_value = PyLong_AsLongLong(stream);
            if (stream_value == -1 && PyErr_Occurred())
                return NULL;
            if (stream_value == 0 || stream_value < -1) {
                PyErr_Format(PyExc_ValueError,
                             "__dlpack__: stream %lld is not allowed (0 is ambiguous; use 1 "
                             "for the legacy default stream, 2 for the per-thread one, a "
                             "stream handle, or -1 for no synchronisation)",
                             stream_value);
                return NULL;
            }
        }
    }

    gk_array *exported = NULL;
    bool copied = moved || copy == 1;
    gk_status status = copied ? gkpy_copy_to(a, target, &exported) : gkpy_new_handle(a, &exported);
    /* gpukit queues work on its own stream: finishing it is the simple way
     * to make the data ready for whatever stream the consumer uses. */
    if (status == GK_OK && target.kind != GK_DEVICE_CPU && stream_value != -1)
        status = gkpy_synchronize(target);
    if (status != GK_OK) {
        gk_array_free(exported);
        return gkpy_raise(state, status);
    }

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
        .device = dlpack_device(target),
        .ndim = ndim,
        .dtype = dlpack_dtype(gk_array_dtype(exported)),
        .shape = export->shape,
        .strides = export->strides,
        .byte_offset = 0,
    };
    PyObject *capsule;
    if (versioned) {
        DLManagedTensorVersioned *managed = &export->managed.versioned;
        managed->version = (DLPackVersion){1, minor};
        managed->manager_ctx = export;
        managed->deleter = versioned_deleter;
        /* Broadcast views are read-only, as in the buffer protocol. */
        managed->flags = (copied ? DLPACK_FLAG_BITMASK_IS_COPIED : 0) |
                         (gkpy_is_broadcast(exported) ? DLPACK_FLAG_BITMASK_READ_ONLY : 0);
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

static void release_legacy(void *context)
{
    DLManagedTensor *tensor = context;
    if (tensor->deleter) {
        PyGILState_STATE gil = PyGILState_Ensure();
        tensor->deleter(tensor);
        PyGILState_Release(gil);
    }
}

static void release_versioned(void *context)
{
    DLManagedTensorVersioned *tensor = context;
    if (tensor->deleter) {
        PyGILState_STATE gil = PyGILState_Ensure();
        tensor->deleter(tensor);
        PyGILState_Release(gil);
    }
}

static int dlpack_dtype_of(DLDataType type, gk_dtype *dtype)
{
    int found = -1;
    if (type.lanes == 1) {
        switch (type.code) {
        case kDLBool: found = type.bits == 8 ? GK_BOOL : -1; break;
        case kDLUInt: found = type.bits == 8 ? GK_UINT8 : -1; break;
        case kDLInt: found = gkpy_dtype_of_kind('i', type.bits / 8); break;
        case kDLFloat: found = gkpy_dtype_of_kind('f', type.bits / 8); break;
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

/* A gk_array over the tensor in `capsule` (a new "dltensor" or
 * "dltensor_versioned" one), which is renamed as consumed once the array
 * owns the tensor. Before that, a failure leaves the capsule as it was, so
 * its destructor deletes the tensor. */
static int import_capsule(gkpy_state *state, PyObject *capsule, int copy, gk_array **out)
{
    *out = NULL;
    bool versioned = PyCapsule_IsValid(capsule, VERSIONED_NAME);
    if (!versioned && !PyCapsule_IsValid(capsule, LEGACY_NAME)) {
        PyErr_Format(PyExc_TypeError,
                     "__dlpack__ returned %R, not a DLPack capsule named \"dltensor\" or "
                     "\"dltensor_versioned\" (a capsule can be consumed only once)",
                     capsule);
        return -1;
    }
    DLManagedTensorVersioned *modern = NULL;
    DLManagedTensor *legacy = NULL;
    DLTensor *tensor;
    bool read_only = false;
    if (versioned) {
        modern = PyCapsule_GetPointer(capsule, VERSIONED_NAME);
        if (!modern)
            return -1;
        if (modern->version.major != 1) {
            PyErr_Format(PyExc_BufferError,
                         "the DLPack tensor has version %u.%u; gpukit understands 1.x",
                         (unsigned)modern->version.major, (unsigned)modern->version.minor);
            return -1;
        }
        tensor = &modern->dl_tensor;
        read_only = (modern->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    } else {
        legacy = PyCapsule_GetPointer(capsule, LEGACY_NAME);
        if (!legacy)
            return -1;
        tensor = &legacy->dl_tensor;
    }
    gk_device device;
    switch (tensor->device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
        device = gk_device_cpu();
        break;
    case kDLCUDA:
    case kDLCUDAManaged:
        device = (gk_device){GK_DEVICE_CUDA, tensor->device.device_id, 0};
        break;
    default:
        PyErr_Format(PyExc_BufferError,
                     "the DLPack tensor is on device type %d; gpukit takes CPU (1) and CUDA "
                     "(2, 3, 13) memory",
                     (int)tensor->device.device_type);
        return -1;
    }
    gk_dtype dtype;
    if (dlpack_dtype_of(tensor->dtype, &dtype) < 0)
        return -1;
    if (tensor->ndim < 0 || tensor->ndim > GK_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "the DLPack tensor has %d dimensions; gpukit has 0 to %d",
                     (int)tensor->ndim, GK_MAX_DIMS);
        return -1;
    }
    if (read_only && copy == 0)
        return gkpy_refuse_read_only("the DLPack tensor");
    char *data = (char *)tensor->data + tensor->byte_offset;
    if ((uintptr_t)data % gk_dtype_size(dtype) != 0 && device.kind == GK_DEVICE_CPU) {
        /* gpukit's loops need aligned elements: a copy, made while the
         * capsule still owns the tensor (its destructor deletes it). */
        if (copy == 0) {
            PyErr_SetString(PyExc_ValueError,
                            "the DLPack tensor's data is not aligned to its element size, so "
                            "it must be copied; copy=False forbids that (pass copy=None)");
            return -1;
        }
        gk_status status = gk_empty(device, dtype, tensor->ndim, tensor->shape, out);
        if (status != GK_OK) {
            gkpy_raise(state, status);
            return -1;
        }
        gather(gk_array_data(*out), data, tensor->ndim, tensor->shape, tensor->strides,
               gk_dtype_size(dtype));
        return 0;
    }
    /* Consumed from here on: the deleter is ours to call, through the
     * array's release or right here when no array can be made. */
    if (PyCapsule_SetName(capsule, versioned ? VERSIONED_USED : LEGACY_USED) < 0)
        return -1;
    gk_array *wrapped;
    gk_status status = gk_wrap(device, dtype, tensor->ndim, tensor->shape, tensor->strides,
                               data, versioned ? release_versioned : release_legacy,
                               versioned ? (void *)modern : (void *)legacy, &wrapped);
    if (status != GK_OK) {
        gkpy_raise(state, status);
        if (versioned)
            release_versioned(modern);
        else
            release_legacy(legacy);
        return -1;
    }
    status = gkpy_settle_import(&wrapped, read_only, copy);
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
"CPU and CUDA memory is taken; dtypes bool, uint8, int32, int64, float32 and\n"
"float64 (others raise TypeError). The producer's memory stays alive as\n"
"long as any gpukit array or view over it does. device: where the result\n"
"must be (a copy when the data is elsewhere); copy: True always copies,\n"
"False never does (ValueError when a copy is needed), None when needed.\n"
"Memory the producer marks read-only is copied: gpukit arrays are always\n"
"writable.");

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
