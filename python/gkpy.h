/* What the files of the _gpukit extension share: the module state, the
 * Array object, and the conversions every file needs (errors, dtypes,
 * devices, arrays). One C file per Python type or protocol; each has an
 * init function, called from module.c, that adds its types and functions
 * to the module. */
#ifndef GKPY_H
#define GKPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <gpukit/gpukit.h>

#include <stdbool.h>

/* Everything the module owns lives here (PEP 489 module state), never in C
 * globals, so subinterpreters and reloads each get their own. module.c
 * visits and clears every object field. */
typedef struct gkpy_state {
    /* types */
    PyTypeObject *array_type;
    PyTypeObject *dtype_type;
    PyTypeObject *device_type;
    PyTypeObject *gpu_type;
    PyTypeObject *process_type;
    PyTypeObject *reservation_type;
    PyTypeObject *raw_kernel_type;
    PyTypeObject *elementwise_kernel_type;
    PyTypeObject *stream_type;
    PyTypeObject *jit_kernel_type; /* @gpukit.jit's kernels and their configured launches */
    PyTypeObject *jit_launch_type;
    PyTypeObject *vectorize_type;  /* @gpukit.vectorize's functions */
    /* unique_all's, unique_counts' and unique_inverse's named tuples */
    PyTypeObject *unique_types[3];
    PyTypeObject *finfo_type; /* struct sequences of finfo() and iinfo() */
    PyTypeObject *iinfo_type;
    PyTypeObject *info_type;  /* __array_namespace_info__ */
    PyTypeObject *monitor_type; /* the sampler behind gpukit.monitor() */
    /* exceptions */
    PyObject *gpu_error;    /* gpukit.GPUError(RuntimeError) */
    PyObject *no_gpu_error; /* gpukit.NoGPUError(GPUError) */
    PyObject *linalg_error; /* gpukit.linalg.LinAlgError(ValueError) */
    /* its subclass that is also NumPy's numpy.linalg.LinAlgError, raised
     * instead once NumPy is imported (linalg_error_to_raise); NULL till then */
    PyObject *numpy_linalg_error;
    PyObject *axis_error; /* gpukit.AxisError(ValueError, IndexError) */
    /* gpukit.bool ... gpukit.uint64, indexed by gk_dtype */
    PyObject *dtypes[GK_DTYPE_COUNT];
    /* where arrays are created when no device= is given: the innermost
     * `with gpukit.device(...)` block of this thread (or asyncio task), else
     * set_default_device() (for the whole process), else the CPU (PyTorch's
     * rule) */
    gk_device default_device;
    PyObject *device_context; /* a ContextVar: the tuple of open `with` devices */
    /* the reservation made by gpukit.reserve() without `with`, kept until
     * release() or the end of the process (may be NULL) */
    PyObject *held_reservation;
    /* NVML stays initialised between gpus() calls (its init costs more than
     * a whole snapshot), as a pynvml user's nvmlInit() does; one thread
     * reads it at a time. NULL until the first call, and after a snapshot
     * that found no driver, so a driver loaded later is found. */
    gk_probe *probe;
    PyThread_type_lock probe_lock;
    /* held by the one thread inside gpukit.reserve() */
    PyThread_type_lock reserve_lock;
    /* NumPy dispatch (numpy_dispatch.c): gpukit's and NumPy's functions
     * -> the names of their positional parameters; NULL until first asked */
    PyObject *positional_names;
} gkpy_state;

/* The state of the module that defined `type` (the types are not
 * subclassable, so an object's type is always one of ours). */
gkpy_state *gkpy_state_of_type(PyTypeObject *type);
gkpy_state *gkpy_state_of_module(PyObject *module);

/* --- errors.c --- */
/* Raises the exception for `status` with gk_last_error()'s message and
 * returns NULL: ValueError (invalid argument), MemoryError, GPUError
 * (driver, not found), PermissionError, OSError, TimeoutError, NoGPUError
 * (busy), FileExistsError, IndexError (out of range). */
PyObject *gkpy_raise(gkpy_state *state, gk_status status);
/* gkpy_raise for a failed elementwise `op` on operands of (promoted)
 * `dtype`: TypeError where the op is not defined for that dtype
 * (gk_op_accepts; NumPy's and the array API's exception), else as
 * gkpy_raise. */
PyObject *gkpy_raise_op(gkpy_state *state, gk_status status, gk_op op, gk_dtype dtype);
int gkpy_errors_init(PyObject *module, gkpy_state *state);

/* --- dtype.c --- */
/* Every dtype, for messages. */
#define GKPY_DTYPE_NAMES                                                                          \
    "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, "    \
    "float32, float64, complex64 and complex128"
/* A gk_dtype from a gpukit dtype, its name ("float32"), a Python type
 * (bool, int, float) or anything with a .dtype/.name naming one of ours
 * (NumPy dtypes and scalar types). TypeError otherwise; returns -1. */
int gkpy_dtype_from_object(gkpy_state *state, PyObject *object, gk_dtype *dtype);
PyObject *gkpy_dtype_object(gkpy_state *state, gk_dtype dtype); /* new reference */
/* NumPy's kind character: 'b' bool, 'i' signed integer, 'u' unsigned
 * integer, 'f' floating point. */
char gkpy_dtype_kind(gk_dtype dtype);
/* Whether `dtype` is of `kind` (the array API's isdtype): a dtype, a kind
 * name ('bool', 'signed integer', 'unsigned integer', 'integral', 'real
 * floating', 'complex floating', 'numeric') or a tuple of those. 1 or 0;
 * -1 with TypeError (not a kind) or ValueError (an unknown kind name). */
int gkpy_isdtype(gkpy_state *state, gk_dtype dtype, PyObject *kind);
/* An optional dtype argument: 1 with *dtype set, 0 when it is absent
 * (NULL) or None, -1 with an exception. */
int gkpy_optional_dtype(gkpy_state *state, PyObject *object, gk_dtype *dtype);
int gkpy_dtype_init(PyObject *module, gkpy_state *state);

/* --- device.c --- */
/* A device from a gpukit.device, a string ("cuda:0"), or None (the current
 * default). ValueError for a malformed name; returns -1. */
int gkpy_device_from_object(gkpy_state *state, PyObject *object, gk_device *device);
PyObject *gkpy_device_object(gkpy_state *state, gk_device device); /* new reference */
gk_device gkpy_default_device(gkpy_state *state);
/* An optional device argument: 1 with *device set, 0 when it is absent
 * (NULL) or None, -1 with an exception. */
int gkpy_optional_device(gkpy_state *state, PyObject *object, gk_device *device);
/* gpukit.devices(): a new list of every device. */
PyObject *gkpy_device_list(gkpy_state *state);
int gkpy_device_init(PyObject *module, gkpy_state *state);

/* --- array.c --- */
typedef struct gkpy_array {
    PyObject_HEAD
    gk_array *array; /* owned; everything else is derived from it */
    PyObject *weakrefs;
} gkpy_array;

/* A new Array owning `array` (which must not be NULL); when the Python
 * object cannot be made, frees `array` and returns NULL. */
PyObject *gkpy_array_wrap(gkpy_state *state, gk_array *array);
/* The Array for a finished call: `array` wrapped when status is GK_OK,
 * else the status's exception (and `array`, if any, freed). */
PyObject *gkpy_array_result(gkpy_state *state, gk_status status, gk_array *array);
/* The same for elementwise `op` on operands of (promoted) `dtype`, its
 * error through gkpy_raise_op. */
PyObject *gkpy_op_result(gkpy_state *state, gk_status status, gk_array *array, gk_op op,
                         gk_dtype dtype);
static inline bool gkpy_is_array(gkpy_state *state, PyObject *object)
{
    return Py_IS_TYPE(object, state->array_type);
}
int gkpy_array_init(PyObject *module, gkpy_state *state);

/* A Python bool, int, float or complex as the 0-d array that stands for
 * it beside the array x in `op` (GK_OP_COUNT: none): the array API's weak
 * scalars, of gk_op_value_dtype's dtype, the value stored exactly;
 * OverflowError when an int does not fit. 0, or -1 with an exception. */
int gkpy_scalar_array(gkpy_state *state, const gk_array *x, PyObject *value, gk_op op,
                      gk_array **out);
/* Whether `value` is a NumPy ndarray or scalar (without importing NumPy);
 * a NumPy scalar (np.float32(1), ...) alone. numpy_dispatch.c. */
bool gkpy_is_numpy(PyObject *value);
bool gkpy_is_numpy_scalar(PyObject *value);
/* The end of the integer dtype's range on `side` (-1 its least, 1 its
 * most), as a Python int (a new reference). */
PyObject *gkpy_integer_end(gk_dtype dtype, int side);
/* Where the Python int `value` lies against the integer dtype's range:
 * -1 below it, 1 above it, 0 within; -2 with an exception. */
int gkpy_against_range(PyObject *value, gk_dtype dtype);
/* `values` (searched for, or tested) as an Array beside the Array x: a
 * Python int that fits x's integer dtype as a 0-d array of that dtype
 * (exactly: uint64 beyond int64 too), anything else as gkpy_as_array
 * makes it on x's device. A new reference, or NULL with an exception. */
PyObject *gkpy_as_values_beside(gkpy_state *state, PyObject *values, PyObject *x);
/* array OP value (value OP array when value_first) for a Python number
 * `value`, weak (gkpy_scalar_array); a comparison with an int beyond an
 * integer array's range is answered by value, as NumPy 2 does
 * (gk_comparison_beyond_range). A new Array, or NULL with an exception. */
PyObject *gkpy_binary_value(gkpy_state *state, gk_op op, PyObject *array, PyObject *value,
                            bool value_first);

/* Work on at least this many elements, or on a device other than the CPU,
 * runs without the GIL: releasing it costs about a microsecond, as much as
 * a small add on the CPU. */
#define GKPY_GIL_FREE_SIZE 65536
static inline bool gkpy_long_work(const gk_array *a)
{
    return gk_array_device(a).kind != GK_DEVICE_CPU || gk_array_size(a) >= GKPY_GIL_FREE_SIZE;
}
/* status = call, without the GIL when `release` (`status` is the caller's
 * gk_status variable). */
#define GKPY_RUN(release, call)                                                                   \
    do {                                                                                          \
        if (release) {                                                                            \
            Py_BEGIN_ALLOW_THREADS status = (call);                                               \
            Py_END_ALLOW_THREADS                                                                  \
        } else {                                                                                  \
            status = (call);                                                                      \
        }                                                                                         \
    } while (0)

/* Methods and attributes of gpukit.Array that live with their topic: each
 * file exports NULL-terminated tables, and array.c's type spec takes them
 * all in (its own table first). The methods receive the Array as self. */
extern PyMethodDef gkpy_ops_array_methods[];    /* ops.c: sum, mean, sort, ... */
extern PyMethodDef gkpy_buffer_array_methods[]; /* buffer.c: __array__ */
extern PyMethodDef gkpy_dlpack_array_methods[]; /* dlpack.c: __dlpack__, __dlpack_device__ */
extern PyGetSetDef gkpy_cuda_interface_array_getset[]; /* cuda_interface.c */
/* buffer.c: the buffer protocol of CPU arrays (Py_bf_getbuffer/releasebuffer). */
int gkpy_array_getbuffer(PyObject *self, Py_buffer *view, int flags);
void gkpy_array_releasebuffer(PyObject *self, Py_buffer *view);
int gkpy_array_download_into(PyObject *self, PyObject *target);

/* --- create.c --- */
/* asarray(): a gpukit array from any array-like (an Array, a scalar, nested
 * sequences, the buffer protocol, __dlpack__, __cuda_array_interface__),
 * on `device` (NULL: where the data is, or the default for host data) as
 * `dtype` (NULL: inferred). copy: 1 always copies, 0 never does (ValueError
 * when it would have to), -1 copies only when needed (the array API's
 * copy=True/False/None). A new reference to an Array, or NULL. */
PyObject *gkpy_asarray(gkpy_state *state, PyObject *object, const gk_dtype *dtype,
                       const gk_device *device, int copy);
/* `object` as an Array (a new reference): an Array itself, anything else
 * through asarray() (copy only if needed) on the device of `near` (an
 * Array) or, without one, asarray's own choice. */
PyObject *gkpy_as_array(gkpy_state *state, PyObject *object, PyObject *near);
/* -1 with Python's TypeError unless a METH_FASTCALL function got exactly
 * `expected` positional arguments. */
int gkpy_expect_args(const char *function, Py_ssize_t nargs, Py_ssize_t expected);
/* x1 and x2 as Arrays on one device, new references in pair[]: the device
 * of the first of them that is an Array; with none, x1 goes to the default
 * device and x2 follows it. -1 with an exception and nothing held. */
int gkpy_as_pair(gkpy_state *state, PyObject *x1, PyObject *x2, PyObject *pair[2]);
int gkpy_create_init(PyObject *module, gkpy_state *state);
/* Helpers for C functions with METH_FASTCALL | METH_KEYWORDS: matches
 * args/kwnames to `names` (count of them; the first `positional_only` only
 * by position, at most `max_positional` by position, the first `required`
 * required) into values[] (NULL: not given). TypeError like Python's; -1. */
int gkpy_parse_args(const char *function, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames, const char *const *names, int count, int positional_only,
                    int max_positional, int required, PyObject **values);
/* A copy= argument as asarray's copy (absent or None -1, else its truth:
 * 1 or 0); -1 with an exception. */
int gkpy_parse_copy(PyObject *object, int *copy);
/* The truth of a copy= argument that is not None: 1 or 0, or -1 with an
 * exception (a string, whose truth is not what it says: ValueError). */
int gkpy_copy_truth(PyObject *object);
/* A shape from an int or a sequence of ints (TypeError for other types,
 * ValueError for a negative length or more than GK_MAX_DIMS axes). */
int gkpy_parse_shape(PyObject *object, int *ndim, int64_t *shape);
/* A Python bool, int or float (or a number with __index__/__float__)
 * stored as one element of `dtype` at `bytes` (8 bytes of room): floats to
 * integers truncate, an int that does not fit is an OverflowError. */
int gkpy_store_scalar(PyObject *value, gk_dtype dtype, void *bytes);

/* --- interop.c (buffer.c, dlpack.c, cuda_interface.c; interop.h) --- */
/* An array over the memory of `object` without copying when it exports
 * one of the protocols (DLPack, the CUDA array interface, the buffer
 * protocol, __array__), with asarray's copy rule (-1 None, 1 True, 0
 * False): 1 gives a copy on the data's device; 0 raises ValueError where
 * the memory cannot be shared (read-only memory, which gpukit copies
 * because its arrays are always writable). *handled is false (and nothing
 * raised) when it exports none. */
PyObject *gkpy_from_protocols(gkpy_state *state, PyObject *object, int copy, bool *handled);
int gkpy_dlpack_init(PyObject *module, gkpy_state *state); /* dlpack.c: from_dlpack */

/* --- the rest: one file each --- */
int gkpy_ops_init(PyObject *module, gkpy_state *state);         /* ops.c: math, reductions, linalg, random */
int gkpy_manipulate_init(PyObject *module, gkpy_state *state);  /* manipulate.c: concat ... isin */
/* utility.c: meshgrid ... diff, and the constants */
int gkpy_utility_init(PyObject *module, gkpy_state *state);
int gkpy_linalg_init(PyObject *module, gkpy_state *state);      /* linalg.c: the factorizations */
int gkpy_fft_init(PyObject *module, gkpy_state *state);         /* fft.c: the fft extension */
int gkpy_gpus_init(PyObject *module, gkpy_state *state);        /* gpus.c: GPU, gpus(), cuda.* */
/* gpus.c: a snapshot taken with the GIL released (NULL with an exception
 * on failure), and a list of new gpukit.GPU for snapshot->gpus[indices[k]]
 * (indices NULL: the first `count` GPUs), whose cuda_index comes from
 * `view` (NULL: None). reservation.c uses both. */
gk_snapshot *gkpy_take_snapshot(gkpy_state *state, unsigned flags);
PyObject *gkpy_gpu_list(gkpy_state *state, const gk_snapshot *snapshot, const size_t *indices,
                        size_t count, const gk_cuda_view *view);
int gkpy_reservation_init(PyObject *module, gkpy_state *state); /* reservation.c */
int gkpy_monitor_init(PyObject *module, gkpy_state *state);     /* monitor.c */
/* NumPy's __array_ufunc__ and __array_function__ (numpy_dispatch.c). */
PyObject *gkpy_array_ufunc(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *gkpy_array_function(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *gkpy_array_squeeze(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *gkpy_array_ravel(PyObject *self, PyObject *unused);
int gkpy_kernel_init(PyObject *module, gkpy_state *state);      /* kernel.c */
/* kernel.c, shared with jit.c: a launch size (an int or a tuple of 1 to 3
 * ints, each at least 1; missing dimensions are 1), and stream= (a
 * gpukit.Stream or None: NULL, the device's own). 0, or -1 with an
 * exception. */
int gkpy_launch_size(PyObject *object, const char *what, uint32_t size[3]);
int gkpy_stream_argument(gkpy_state *state, PyObject *object, gk_stream **stream);
int gkpy_jit_init(PyObject *module, gkpy_state *state);         /* jit.c */
int gkpy_info_init(PyObject *module, gkpy_state *state);        /* info.c */

#endif
