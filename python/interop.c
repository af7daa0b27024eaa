/* Zero-copy interop: gpukit arrays as other libraries' arrays and back.
 *
 * Exported (methods and slots of gpukit.Array):
 * - the buffer protocol, for CPU arrays (memoryview, NumPy, array.array);
 * - __array__(dtype=None, copy=None), NumPy 2's rules, over the buffer
 *   protocol (a GPU array is copied to the CPU first);
 * - __dlpack__ / __dlpack_device__ (DLPack 1.x versioned capsules, or
 *   legacy ones for consumers that ask for no version), CPU and CUDA;
 * - __cuda_array_interface__ (version 3), CUDA arrays only.
 * Imported (gpukit.from_dlpack, and gkpy_from_protocols for asarray):
 * DLPack, the CUDA array interface, the buffer protocol and __array__.
 *
 * Lifetimes follow the C refcount, never copies: whatever is exported holds
 * a gk_array handle of its own (freed when the consumer lets go), and an
 * imported array is a gk_wrap() whose release callback gives the memory
 * back to its producer (the DLPack deleter, PyBuffer_Release, or a
 * reference to the producer), taking the GIL, since the last gk_array
 * handle may go on any thread.
 *
 * Read-only memory: gpukit arrays have no read-only flag, so memory a
 * producer marks read-only (a versioned DLPack capsule's READ_ONLY flag, a
 * read-only buffer such as bytes or a NumPy array with write=False, a CUDA
 * array interface with data[1] True) is copied on import, never shared;
 * with copy=False that is a ValueError. Legacy DLPack capsules cannot say
 * they are read-only, and are shared as they come.
 *
 * The DLPack structs are declared here from the DLPack specification (the
 * ABI is the contract; no header is vendored). */
#include "gkpy.h"

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

/* --- shared helpers --- */

static const char SUPPORTED[] = "gpukit has bool, uint8, int32, int64, float32 and float64";

static gk_array *array_of(PyObject *self)
{
    return ((gkpy_array *)self)->array;
}

static gkpy_state *state_of(PyObject *self)
{
    return gkpy_state_of_type(Py_TYPE(self));
}

/* A new handle on the same memory, shape and strides: the identity
 * transpose is exactly that (the public API's way to take a reference). */
static gk_status new_handle(const gk_array *a, gk_array **out)
{
    int axes[GK_MAX_DIMS];
    for (int i = 0; i < GK_MAX_DIMS; i++)
        axes[i] = i;
    return gk_transpose(a, axes, out);
}

/* copy=None/True/False as -1/1/0 (asarray's convention); -2 on error. */
static int parse_copy(PyObject *copy)
{
    if (copy == NULL || copy == Py_None)
        return -1;
    int truth = PyObject_IsTrue(copy);
    return truth < 0 ? -2 : truth;
}

static const char *device_text(gk_device device, char *buf)
{
    return gk_device_name(device, buf, GK_DEVICE_NAME_MAX);
}

/* A copy of `a` on `device` (a plain copy when it is a's), without the GIL. */
static gk_status copy_to(const gk_array *a, gk_device device, gk_array **out)
{
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    if (gk_device_equal(gk_array_device(a), device))
        status = gk_copy(a, out);
    else
        status = gk_to(a, device, out);
    Py_END_ALLOW_THREADS
    return status;
}

static gk_status synchronize(gk_device device)
{
    gk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = gk_device_synchronize(device);
    Py_END_ALLOW_THREADS
    return status;
}

/* The dtype named by a kind ('b' bool, 'u' unsigned, 'i' signed, 'f'
 * float) and a size in bytes, or -1. */
static int dtype_of_kind(char kind, Py_ssize_t size)
{
    switch (kind) {
    case 'b': return size == 1 ? GK_BOOL : -1;
    case 'u': return size == 1 ? GK_UINT8 : -1;
    case 'i': return size == 4 ? GK_INT32 : size == 8 ? GK_INT64 : -1;
    case 'f': return size == 4 ? GK_FLOAT32 : size == 8 ? GK_FLOAT64 : -1;
    }
    return -1;
}

/* TypeError naming a dtype gpukit does not have ("float16 (...)"). */
static int unsupported_kind(char kind, Py_ssize_t size, const char *where)
{
    const char *names[] = {"bool", "uint", "int", "float", "complex"};
    const char *kinds = "buifc";
    const char *found = strchr(kinds, kind);
    if (kind && found)
        PyErr_Format(PyExc_TypeError, "dtype %s%zd (%s) is not supported; %s",
                     names[found - kinds], size * 8, where, SUPPORTED);
    else
        PyErr_Format(PyExc_TypeError, "the element type (%s) is not supported; %s", where,
                     SUPPORTED);
    return -1;
}

/* The release callback of gk_wrap() for memory kept alive by a reference
 * to its Python owner. */
static void release_object(void *context)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF((PyObject *)context);
    PyGILState_Release(gil);
}

/* --- the buffer protocol (export) --- */

/* What a buffer export holds until releasebuffer: its own handle on the
 * memory, and the shape and strides in the units the protocol wants. */
typedef struct buffer_export {
    gk_array *array;
    Py_ssize_t shape[GK_MAX_DIMS];
    Py_ssize_t strides[GK_MAX_DIMS]; /* bytes */
} buffer_export;

/* struct-module format characters for native sizes; int64 is 'l' where a
 * long has 8 bytes, as NumPy exports it there. */
static const char *buffer_format(gk_dtype dtype)
{
    switch (dtype) {
    case GK_BOOL: return "?";
    case GK_UINT8: return "B";
    case GK_INT32: return "i";
    case GK_INT64: return sizeof(long) == 8 ? "l" : "q";
    case GK_FLOAT32: return "f";
    case GK_FLOAT64: return "d";
    }
    return "B";
}

static bool is_f_contiguous(const gk_array *a)
{
    const int64_t *shape = gk_array_shape(a), *strides = gk_array_strides(a);
    if (gk_array_size(a) == 0)
        return true;
    int64_t expected = 1;
    for (int i = 0; i < gk_array_ndim(a); i++) {
        if (shape[i] != 1 && strides[i] != expected)
            return false;
        expected *= shape[i];
    }
    return true;
}

/* A broadcast view (stride 0 along an axis longer than 1) is exported
 * read-only: gpukit itself refuses to write one. */
static bool is_broadcast(const gk_array *a)
{
    for (int i = 0; i < gk_array_ndim(a); i++)
        if (gk_array_shape(a)[i] > 1 && gk_array_strides(a)[i] == 0)
            return true;
    return false;
}

int gkpy_array_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    if (!view) {
        PyErr_SetString(PyExc_BufferError, "getbuffer: view is NULL");
        return -1;
    }
    view->obj = NULL;
    const gk_array *a = array_of(self);
    char name[GK_DEVICE_NAME_MAX];
    gk_device device = gk_array_device(a);
    if (device.kind != GK_DEVICE_CPU) {
        PyErr_Format(PyExc_BufferError,
                     "the buffer protocol needs memory on the CPU; this array is on %s: call "
                     ".cpu() first",
                     device_text(device, name));
        return -1;
    }
    bool c_order = gk_array_is_contiguous(a), f_order = is_f_contiguous(a);
    const char *refused = NULL;
    if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c_order)
        refused = "C-contiguous";
    else if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !f_order)
        refused = "Fortran-contiguous";
    else if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c_order && !f_order)
        refused = "contiguous";
    else if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c_order)
        refused = "C-contiguous (no strides were asked for)";
    if (refused) {
        PyErr_Format(PyExc_BufferError,
                     "the array is a strided view, and the consumer asked for a %s buffer; "
                     "make a contiguous copy first",
                     refused);
        return -1;
    }
    bool readonly = is_broadcast(a);
    if ((flags & PyBUF_WRITABLE) && readonly) {
        PyErr_SetString(PyExc_BufferError,
                        "the array is a broadcast view (stride 0), which cannot be written; "
                        "a writable buffer was asked for");
        return -1;
    }
    buffer_export *export = PyMem_Malloc(sizeof *export);
    if (!export) {
        PyErr_NoMemory();
        return -1;
    }
    gk_status status = new_handle(a, &export->array);
    if (status != GK_OK) {
        PyMem_Free(export);
        gkpy_raise(state_of(self), status);
        return -1;
    }
    int ndim = gk_array_ndim(a);
    Py_ssize_t itemsize = (Py_ssize_t)gk_dtype_size(gk_array_dtype(a));
    for (int i = 0; i < ndim; i++) {
        export->shape[i] = (Py_ssize_t)gk_array_shape(a)[i];
        export->strides[i] = (Py_ssize_t)gk_array_strides(a)[i] * itemsize;
    }
    view->buf = gk_array_data(a);
    view->obj = Py_NewRef(self);
    view->len = (Py_ssize_t)gk_array_nbytes(a);
    view->readonly = readonly;
    view->itemsize = itemsize;
    view->format = (flags & PyBUF_FORMAT) ? (char *)buffer_format(gk_array_dtype(a)) : NULL;
    if (flags & PyBUF_ND) {
        view->ndim = ndim;
        view->shape = export->shape;
    } else {
        /* A plain run of bytes (the array is C-contiguous, checked above). */
        view->ndim = 1;
        view->shape = NULL;
    }
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? export->strides : NULL;
    view->suboffsets = NULL;
    view->internal = export;
    return 0;
}

void gkpy_array_releasebuffer(PyObject *self, Py_buffer *view)
{
    (void)self;
    buffer_export *export = view->internal;
    if (export) {
        gk_array_free(export->array);
        PyMem_Free(export);
        view->internal = NULL;
    }
}

/* --- __array__ --- */

PyDoc_STRVAR(array_array_doc,
"__array__($self, /, dtype=None, copy=None)\n"
"--\n\n"
"The array as a NumPy array (numpy.asarray(x) calls this for GPU arrays;\n"
"CPU arrays go through the buffer protocol, without a copy).\n\n"
"NumPy 2's rules: copy=None copies only when needed (another dtype, or an\n"
"array not on the CPU), copy=True always copies, copy=False never does and\n"
"raises ValueError when a copy would be needed.");

static PyObject *array_array(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy_object = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:__array__", keywords, &dtype,
                                     &copy_object))
        return NULL;
    int copy = parse_copy(copy_object);
    if (copy == -2)
        return NULL;
    gkpy_state *state = state_of(self);
    gk_array *a = array_of(self);
    PyObject *numpy = PyImport_ImportModule("numpy");
    if (!numpy)
        return NULL;
    PyObject *result = NULL, *source = NULL, *view = NULL, *np_dtype = NULL;
    /* NumPy does not know gpukit's dtype objects; their names it does. */
    if (dtype != Py_None && Py_IS_TYPE(dtype, state->dtype_type))
        np_dtype = PyObject_Str(dtype);
    else
        np_dtype = Py_NewRef(dtype);
    if (!np_dtype)
        goto done;
    gk_device device = gk_array_device(a);
    if (device.kind != GK_DEVICE_CPU) {
        char name[GK_DEVICE_NAME_MAX];
        if (copy == 0) {
            PyErr_Format(PyExc_ValueError,
                         "__array__(copy=False): the array is on %s, and NumPy needs it on the "
                         "CPU, which takes a copy (use copy=None, or .cpu())",
                         device_text(device, name));
            goto done;
        }
        gk_array *host = NULL;
        gk_status status = copy_to(a, gk_device_cpu(), &host);
        if (status != GK_OK) {
            gkpy_raise(state, status);
            goto done;
        }
        source = gkpy_array_wrap(state, host);
        copy = -1; /* the copy is made: NumPy may keep it as it is */
    } else {
        source = Py_NewRef(self);
    }
    if (!source)
        goto done;
    view = PyMemoryView_FromObject(source);
    if (!view)
        goto done;
    if (copy == 1) {
        result = PyObject_CallMethod(numpy, "array", "OO", view, np_dtype);
    } else {
        if (copy == 0 && np_dtype != Py_None) {
            /* The dtype must already be the array's: a conversion copies. */
            PyObject *want = PyObject_CallMethod(numpy, "dtype", "O", np_dtype);
            PyObject *have = want ? PyObject_CallMethod(numpy, "dtype", "s",
                                                         gk_dtype_name(gk_array_dtype(a)))
                                  : NULL;
            int same = have ? PyObject_RichCompareBool(want, have, Py_EQ) : -1;
            Py_XDECREF(want);
            Py_XDECREF(have);
            if (same < 0)
                goto done;
            if (!same) {
                PyErr_Format(PyExc_ValueError,
                             "__array__(copy=False): the array is %s; converting it to %R "
                             "takes a copy",
                             gk_dtype_name(gk_array_dtype(a)), np_dtype);
                goto done;
            }
        }
        result = PyObject_CallMethod(numpy, "asarray", "OO", view, np_dtype);
    }
done:
    Py_XDECREF(view);
    Py_XDECREF(source);
    Py_XDECREF(np_dtype);
    Py_DECREF(numpy);
    return result;
}

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
    int copy = parse_copy(copy_object);
    if (copy == -2)
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
    gk_status status = copied ? copy_to(a, target, &exported) : new_handle(a, &exported);
    /* gpukit queues work on its own stream: finishing it is the simple way
     * to make the data ready for whatever stream the consumer uses. */
    if (status == GK_OK && target.kind != GK_DEVICE_CPU && stream_value != -1)
        status = synchronize(target);
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
                         (is_broadcast(exported) ? DLPACK_FLAG_BITMASK_READ_ONLY : 0);
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

/* --- __cuda_array_interface__ (export) --- */

/* NumPy's typestr of a dtype: byte order, kind, size. */
static const char *typestr(gk_dtype dtype)
{
    switch (dtype) {
    case GK_BOOL: return "|b1";
    case GK_UINT8: return "|u1";
    case GK_INT32: return "<i4";
    case GK_INT64: return "<i8";
    case GK_FLOAT32: return "<f4";
    case GK_FLOAT64: return "<f8";
    }
    return "|u1";
}

static PyObject *tuple_of(int n, const int64_t *values, int64_t scale)
{
    PyObject *tuple = PyTuple_New(n);
    for (int i = 0; tuple && i < n; i++) {
        PyObject *item = PyLong_FromLongLong(values[i] * scale);
        if (!item) {
            Py_CLEAR(tuple);
            break;
        }
        PyTuple_SET_ITEM(tuple, i, item);
    }
    return tuple;
}

static PyObject *array_cuda_array_interface(PyObject *self, void *closure)
{
    (void)closure;
    gkpy_state *state = state_of(self);
    const gk_array *a = array_of(self);
    gk_device device = gk_array_device(a);
    if (device.kind != GK_DEVICE_CUDA) {
        char name[GK_DEVICE_NAME_MAX];
        PyErr_Format(PyExc_AttributeError,
                     "__cuda_array_interface__: only CUDA arrays have it; this one is on %s",
                     device_text(device, name));
        return NULL;
    }
    /* The interface can name a stream the data is ready on; gpukit's own
     * stream is not for others to wait on, so the work is finished first
     * and the stream entry is None (no synchronisation needed). */
    gk_status status = synchronize(device);
    if (status != GK_OK)
        return gkpy_raise(state, status);
    int ndim = gk_array_ndim(a);
    int64_t itemsize = (int64_t)gk_dtype_size(gk_array_dtype(a));
    uintptr_t pointer = gk_array_size(a) > 0 ? (uintptr_t)gk_array_data(a) : 0;
    PyObject *shape = tuple_of(ndim, gk_array_shape(a), 1);
    PyObject *strides = gk_array_is_contiguous(a)
                            ? Py_NewRef(Py_None)
                            : tuple_of(ndim, gk_array_strides(a), itemsize);
    if (!shape || !strides) {
        Py_XDECREF(shape);
        Py_XDECREF(strides);
        return NULL;
    }
    return Py_BuildValue("{s:N,s:s,s:(NO),s:N,s:i,s:O}", "shape", shape, "typestr",
                         typestr(gk_array_dtype(a)), "data", PyLong_FromUnsignedLongLong(pointer),
                         Py_False, "strides", strides, "version", 3, "stream", Py_None);
}

/* --- import: shared --- */

/* After a zero-copy import: with `must_copy` (read-only memory) or copy=1,
 * `wrapped` becomes a copy of itself (the producer's memory is then let go
 * at once). */
static gk_status settle(gk_array **wrapped, bool must_copy, int copy)
{
    if (!must_copy && copy != 1)
        return GK_OK;
    gk_array *copied = NULL;
    gk_status status = copy_to(*wrapped, gk_array_device(*wrapped), &copied);
    gk_array_free(*wrapped);
    *wrapped = copied;
    return status;
}

static int refuse_read_only(const char *what)
{
    PyErr_Format(PyExc_ValueError,
                 "%s is read-only, and gpukit arrays are always writable, so it must be "
                 "copied; copy=False forbids that (pass copy=None)",
                 what);
    return -1;
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
        case kDLInt: found = dtype_of_kind('i', type.bits / 8); break;
        case kDLFloat: found = dtype_of_kind('f', type.bits / 8); break;
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
                     type.lanes != 1 ? " with several lanes" : "", SUPPORTED);
    else
        PyErr_Format(PyExc_TypeError, "DLPack dtype code %u (%u bits) is not supported; %s",
                     (unsigned)type.code, (unsigned)type.bits, SUPPORTED);
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
        return refuse_read_only("the DLPack tensor");
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
    status = settle(&wrapped, read_only, copy);
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
static PyObject *import_dlpack(gkpy_state *state, PyObject *object, const gk_device *device,
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
        status = copy_to(array, *device, &moved);
        gk_array_free(array);
        if (status != GK_OK)
            return gkpy_raise(state, status);
        array = moved;
    } else if (device && copy == 1) {
        status = settle(&array, true, copy);
        if (status != GK_OK)
            return gkpy_raise(state, status);
    }
    return gkpy_array_wrap(state, array);
}

/* from_dlpack of a gpukit array: the same memory (or a copy), no capsule. */
static PyObject *from_own(gkpy_state *state, PyObject *object, const gk_device *device, int copy)
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
    status = moved || copy == 1 ? copy_to(a, target, &out) : new_handle(a, &out);
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
    int copy = parse_copy(copy_object);
    if (copy == -2)
        return NULL;
    gk_device device;
    if (device_object != Py_None && gkpy_device_from_object(state, device_object, &device) < 0)
        return NULL;
    const gk_device *wanted = device_object != Py_None ? &device : NULL;
    if (gkpy_is_array(state, object))
        return from_own(state, object, wanted, copy);
    if (!PyObject_HasAttrString(object, "__dlpack__") ||
        !PyObject_HasAttrString(object, "__dlpack_device__")) {
        PyErr_Format(PyExc_TypeError,
                     "from_dlpack: %.100s objects do not support DLPack (no __dlpack__ and "
                     "__dlpack_device__); try gpukit.asarray",
                     Py_TYPE(object)->tp_name);
        return NULL;
    }
    return import_dlpack(state, object, wanted, copy);
}

/* --- import: the CUDA array interface --- */

/* The dtype of a NumPy typestr ("<f4"); TypeError naming others. */
static int typestr_dtype(PyObject *text, gk_dtype *dtype)
{
    const char *s = PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : NULL;
    if (!s) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "typestr must be a str, not %R", text);
        return -1;
    }
    char order = s[0], kind = s[0] ? s[1] : 0;
    long size = kind ? strtol(s + 2, NULL, 10) : 0;
    int found = dtype_of_kind(kind, size);
    if (found < 0 || !order || !strchr("<>|=", order) || (order == '>' && size > 1)) {
        char where[64];
        PyOS_snprintf(where, sizeof where, "typestr '%.20s'", s);
        if (order == '>' && size > 1) {
            PyErr_Format(PyExc_TypeError, "%s: big-endian data is not supported", where);
            return -1;
        }
        return unsupported_kind(kind, size, where);
    }
    *dtype = (gk_dtype)found;
    return 0;
}

/* Up to GK_MAX_DIMS ints from a tuple; -1 with an exception otherwise. */
static int int_tuple(PyObject *tuple, const char *what, int64_t *values)
{
    if (!PyTuple_Check(tuple)) {
        PyErr_Format(PyExc_TypeError, "__cuda_array_interface__: %s must be a tuple, not %R",
                     what, tuple);
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    if (n > GK_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%zd dimensions; gpukit arrays have 0 to %d", n,
                     GK_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        values[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(tuple, i));
        if (values[i] == -1 && PyErr_Occurred())
            return -1;
    }
    return (int)n;
}

/* A gk_array over the CUDA memory `interface` (the producer's
 * __cuda_array_interface__, versions 0 to 3) describes; `owner` is kept
 * alive until the last view goes. */
static PyObject *import_cuda_interface(gkpy_state *state, PyObject *owner, PyObject *interface,
                                       int copy)
{
    if (!PyDict_Check(interface)) {
        PyErr_Format(PyExc_TypeError, "__cuda_array_interface__ must be a dict, not %.100s",
                     Py_TYPE(interface)->tp_name);
        return NULL;
    }
    PyObject *shape_object = PyDict_GetItemString(interface, "shape");
    PyObject *type_object = PyDict_GetItemString(interface, "typestr");
    PyObject *data_object = PyDict_GetItemString(interface, "data");
    PyObject *strides_object = PyDict_GetItemString(interface, "strides");
    PyObject *mask = PyDict_GetItemString(interface, "mask");
    PyObject *stream_object = PyDict_GetItemString(interface, "stream");
    if (!shape_object || !type_object || !data_object) {
        PyErr_SetString(PyExc_TypeError,
                        "__cuda_array_interface__ lacks shape, typestr or data");
        return NULL;
    }
    if (mask && mask != Py_None) {
        PyErr_SetString(PyExc_TypeError,
                        "__cuda_array_interface__: masked arrays are not supported");
        return NULL;
    }
    int64_t shape[GK_MAX_DIMS], strides[GK_MAX_DIMS];
    int ndim = int_tuple(shape_object, "shape", shape);
    if (ndim < 0)
        return NULL;
    gk_dtype dtype;
    if (typestr_dtype(type_object, &dtype) < 0)
        return NULL;
    unsigned long long pointer;
    int read_only;
    if (!PyTuple_Check(data_object) ||
        !PyArg_ParseTuple(data_object, "Kp", &pointer, &read_only)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "__cuda_array_interface__: data must be (pointer, read_only), not %R",
                     data_object);
        return NULL;
    }
    int64_t itemsize = (int64_t)gk_dtype_size(dtype);
    bool strided = strides_object && strides_object != Py_None;
    if (strided) {
        int n = int_tuple(strides_object, "strides", strides);
        if (n < 0)
            return NULL;
        if (n != ndim) {
            PyErr_Format(PyExc_ValueError,
                         "__cuda_array_interface__: %d strides for %d dimensions", n, ndim);
            return NULL;
        }
        for (int i = 0; i < ndim; i++) {
            if (strides[i] % itemsize != 0) {
                PyErr_Format(PyExc_ValueError,
                             "__cuda_array_interface__: stride %lld bytes is not a multiple of "
                             "the element size (%lld)",
                             (long long)strides[i], (long long)itemsize);
                return NULL;
            }
            strides[i] /= itemsize;
        }
    }
    if (read_only && copy == 0) {
        refuse_read_only("the CUDA array");
        return NULL;
    }
    /* Which GPU: the driver knows the pointer's device (an empty array
     * may have none: cuda:0). */
    gk_device device = {GK_DEVICE_CUDA, 0, 0};
    gk_status status = GK_OK;
    if (pointer)
        status = gk_cuda_pointer_device((void *)(uintptr_t)pointer, &device);
    if (status != GK_OK)
        return gkpy_raise(state, status);
    /* The producer's work may still be queued on the stream it names
     * (v3): wait for it (None or absent: ready). */
    if (stream_object && stream_object != Py_None) {
        long long stream = PyLong_AsLongLong(stream_object);
        if (stream == -1 && PyErr_Occurred())
            return NULL;
        if (stream == 0) {
            PyErr_SetString(PyExc_ValueError,
                            "__cuda_array_interface__: stream 0 is not allowed (ambiguous)");
            return NULL;
        }
        Py_BEGIN_ALLOW_THREADS
        status = gk_cuda_stream_wait(device, (uintptr_t)stream);
        Py_END_ALLOW_THREADS
        if (status != GK_OK)
            return gkpy_raise(state, status);
    }
    gk_array *wrapped;
    status = gk_wrap(device, dtype, ndim, shape, strided ? strides : NULL,
                     (void *)(uintptr_t)pointer, release_object, Py_NewRef(owner), &wrapped);
    if (status != GK_OK) {
        Py_DECREF(owner);
        return gkpy_raise(state, status);
    }
    status = settle(&wrapped, read_only, copy);
    return status == GK_OK ? gkpy_array_wrap(state, wrapped) : gkpy_raise(state, status);
}

/* --- import: the buffer protocol --- */

/* The dtype of a buffer's struct-module format ("<f", "l", "?"), given
 * its item size; TypeError naming others. */
static int format_dtype(const char *format, Py_ssize_t itemsize, gk_dtype *dtype)
{
    const char *f = format ? format : "B";
    char order = 0;
    if (*f && strchr("@=<>!", *f))
        order = *f++;
    char kind = 0;
    if (f[0] && !f[1]) {
        if (f[0] == '?')
            kind = 'b';
        else if (strchr("bhilqn", f[0]))
            kind = 'i';
        else if (strchr("BHILQN", f[0]))
            kind = 'u';
        else if (strchr("efd", f[0]))
            kind = 'f';
    }
    char where[64];
    PyOS_snprintf(where, sizeof where, "buffer format '%.20s'", f - (order ? 1 : 0));
    if ((order == '>' || order == '!') && itemsize > 1) {
        PyErr_Format(PyExc_TypeError, "%s: big-endian data is not supported", where);
        return -1;
    }
    int found = dtype_of_kind(kind, itemsize);
    if (found < 0)
        return unsupported_kind(kind, itemsize, where);
    *dtype = (gk_dtype)found;
    return 0;
}

/* The release callback of buffer imports: gives the buffer back. */
static void release_buffer(void *context)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    PyBuffer_Release(context);
    PyMem_Free(context);
    PyGILState_Release(gil);
}

/* A CPU array over the buffer `object` exports: shared when it is
 * writable, aligned and its strides are whole elements; else (or with
 * copy=1) a C-order copy. */
static PyObject *import_buffer(gkpy_state *state, PyObject *object, int copy)
{
    Py_buffer *view = PyMem_Malloc(sizeof *view);
    if (!view)
        return PyErr_NoMemory();
    if (PyObject_GetBuffer(object, view, PyBUF_RECORDS_RO) < 0) {
        PyMem_Free(view);
        return NULL;
    }
    PyObject *result = NULL;
    gk_array *array = NULL;
    gk_dtype dtype;
    gk_status status;
    int64_t shape[GK_MAX_DIMS], strides[GK_MAX_DIMS];
    if (format_dtype(view->format, view->itemsize, &dtype) < 0)
        goto fail;
    if (view->ndim > GK_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "the buffer has %d dimensions; gpukit has 0 to %d",
                     view->ndim, GK_MAX_DIMS);
        goto fail;
    }
    /* Why the memory cannot be shared, if it cannot. */
    const char *reason = view->readonly ? "the buffer" : NULL;
    if ((uintptr_t)view->buf % (uintptr_t)view->itemsize != 0)
        reason = "the buffer's data is not aligned to its element size, so it";
    /* Exporters may leave out strides (C order) and, for one axis, the
     * shape. */
    for (int i = 0; i < view->ndim; i++)
        shape[i] = view->shape ? view->shape[i] : view->len / view->itemsize;
    for (int i = 0; view->strides && i < view->ndim; i++) {
        strides[i] = view->strides[i] / view->itemsize;
        if (view->strides[i] % view->itemsize != 0)
            reason = "the buffer's strides are not whole elements, so it";
    }
    if (view->readonly && copy == 0) {
        refuse_read_only("the buffer");
        goto fail;
    }
    if (reason && copy == 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s must be copied; copy=False forbids that (pass copy=None)", reason);
        goto fail;
    }
    if (reason || copy == 1) {
        status = gk_empty(gk_device_cpu(), dtype, view->ndim, shape, &array);
        if (status != GK_OK) {
            gkpy_raise(state, status);
            goto fail;
        }
        if (PyBuffer_ToContiguous(gk_array_data(array), view, view->len, 'C') < 0) {
            gk_array_free(array);
            goto fail;
        }
        PyBuffer_Release(view);
        PyMem_Free(view);
        return gkpy_array_wrap(state, array);
    }
    status = gk_wrap(gk_device_cpu(), dtype, view->ndim, shape, view->strides ? strides : NULL,
                     view->buf, release_buffer, view, &array);
    if (status != GK_OK) {
        gkpy_raise(state, status);
        goto fail;
    }
    return gkpy_array_wrap(state, array);
fail:
    PyBuffer_Release(view);
    PyMem_Free(view);
    return result;
}

/* --- import: every protocol --- */

/* object.name, or NULL without an error when it has none. */
static PyObject *optional_attribute(PyObject *object, const char *name)
{
    PyObject *value = PyObject_GetAttrString(object, name);
    if (!value && PyErr_ExceptionMatches(PyExc_AttributeError))
        PyErr_Clear();
    return value;
}

PyObject *gkpy_from_protocols_copy(gkpy_state *state, PyObject *object, int copy, bool *handled)
{
    *handled = true;
    PyObject *dlpack = optional_attribute(object, "__dlpack__");
    if (!dlpack && PyErr_Occurred())
        return NULL;
    if (dlpack) {
        Py_DECREF(dlpack);
        PyObject *where = optional_attribute(object, "__dlpack_device__");
        if (!where && PyErr_Occurred())
            return NULL;
        if (where) {
            Py_DECREF(where);
            if (gkpy_is_array(state, object))
                return from_own(state, object, NULL, copy);
            PyObject *result = import_dlpack(state, object, NULL, copy);
            /* BufferError: the producer cannot say this memory in DLPack
             * (NumPy: unaligned data, strides that are not whole elements);
             * the buffer protocol below may still. */
            if (result || !PyErr_ExceptionMatches(PyExc_BufferError) ||
                !PyObject_CheckBuffer(object))
                return result;
            PyErr_Clear();
        }
    }
    PyObject *interface = optional_attribute(object, "__cuda_array_interface__");
    if (!interface && PyErr_Occurred())
        return NULL;
    if (interface) {
        PyObject *result = import_cuda_interface(state, object, interface, copy);
        Py_DECREF(interface);
        return result;
    }
    if (PyObject_CheckBuffer(object))
        return import_buffer(state, object, copy);
    PyObject *method = optional_attribute(object, "__array__");
    if (!method && PyErr_Occurred())
        return NULL;
    if (method) {
        PyObject *array = PyObject_CallNoArgs(method);
        Py_DECREF(method);
        if (!array)
            return NULL;
        PyObject *result = NULL;
        if (PyObject_CheckBuffer(array))
            /* The result is new: sharing it is no copy of the original. */
            result = import_buffer(state, array, copy);
        else
            PyErr_Format(PyExc_TypeError,
                         "%.100s.__array__() returned %.100s, which has no buffer",
                         Py_TYPE(object)->tp_name, Py_TYPE(array)->tp_name);
        Py_DECREF(array);
        return result;
    }
    *handled = false;
    return NULL;
}

PyObject *gkpy_from_protocols(gkpy_state *state, PyObject *object, bool *handled)
{
    return gkpy_from_protocols_copy(state, object, -1, handled);
}

/* --- tables --- */

PyMethodDef gkpy_interop_array_methods[] = {
    {"__array__", (PyCFunction)(void (*)(void))array_array, METH_VARARGS | METH_KEYWORDS,
     array_array_doc},
    {"__dlpack__", (PyCFunction)(void (*)(void))array_dlpack, METH_VARARGS | METH_KEYWORDS,
     array_dlpack_doc},
    {"__dlpack_device__", array_dlpack_device, METH_NOARGS, array_dlpack_device_doc},
    {NULL, NULL, 0, NULL},
};

PyGetSetDef gkpy_interop_array_getset[] = {
    {"__cuda_array_interface__", array_cuda_array_interface, NULL,
     "The CUDA array interface (version 3) of a CUDA array, for CuPy, Numba and PyTorch:\n"
     "shape, typestr, data (pointer, False), strides (None when C-contiguous, else bytes),\n"
     "version, and stream None (the device is synchronised first, so the data is ready).\n"
     "AttributeError on other devices, so hasattr() tells.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef interop_functions[] = {
    {"from_dlpack", (PyCFunction)(void (*)(void))from_dlpack, METH_VARARGS | METH_KEYWORDS,
     from_dlpack_doc},
    {NULL, NULL, 0, NULL},
};

int gkpy_interop_init(PyObject *module, gkpy_state *state)
{
    (void)state;
    return PyModule_AddFunctions(module, interop_functions);
}
