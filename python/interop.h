/* What the zero-copy interop files share: buffer.c (the buffer protocol,
 * __array__), dlpack.c (__dlpack__, from_dlpack), cuda_interface.c
 * (__cuda_array_interface__) and interop.c, which ties them together
 * (gkpy_from_protocols) and holds the helpers below.
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
 * they are read-only, and are shared as they come. */
#ifndef GKPY_INTEROP_H
#define GKPY_INTEROP_H

#include "gkpy.h"

#define GKPY_SUPPORTED_DTYPES "gpukit has " GKPY_DTYPE_NAMES

static inline gk_array *array_of(PyObject *self)
{
    return ((gkpy_array *)self)->array;
}

static inline gkpy_state *state_of(PyObject *self)
{
    return gkpy_state_of_type(Py_TYPE(self));
}

static inline const char *device_text(gk_device device, char *buf)
{
    return gk_device_name(device, buf, GK_DEVICE_NAME_MAX);
}

/* --- interop.c --- */
/* A new handle on the same memory, shape and strides. */
gk_status gkpy_new_handle(const gk_array *a, gk_array **out);
/* A copy of `a` on `device` (a plain copy when it is a's), without the GIL. */
gk_status gkpy_copy_to(const gk_array *a, gk_device device, gk_array **out);
/* gk_device_synchronize without the GIL. */
gk_status gkpy_synchronize(gk_device device);
/* The dtype named by a kind ('b' bool, 'u' unsigned, 'i' signed, 'f'
 * float) and a size in bytes, or -1. */
int gkpy_dtype_of_kind(char kind, Py_ssize_t size);
/* TypeError naming a dtype gpukit does not have ("float16 (where)"); -1. */
int gkpy_unsupported_kind(char kind, Py_ssize_t size, const char *where);
/* After a zero-copy import: with `must_copy` (read-only memory) or copy=1,
 * `wrapped` becomes a copy of itself (the producer's memory is then let go
 * at once). */
gk_status gkpy_settle_import(gk_array **wrapped, bool must_copy, int copy);
/* ValueError: `what` is read-only and copy=False forbids the copy; -1. */
int gkpy_refuse_read_only(const char *what);

/* --- the importers, which gkpy_from_protocols tries in turn --- */
/* dlpack.c: from_dlpack for any producer (device NULL: where the data is),
 * and for a gpukit Array (the same memory or a copy, no capsule). */
PyObject *gkpy_import_dlpack(gkpy_state *state, PyObject *object, const gk_device *device,
                             int copy);
PyObject *gkpy_import_own(gkpy_state *state, PyObject *object, const gk_device *device, int copy);
/* cuda_interface.c: the CUDA memory `interface` (the producer's
 * __cuda_array_interface__) describes; `owner` is kept alive meanwhile. */
PyObject *gkpy_import_cuda_interface(gkpy_state *state, PyObject *owner, PyObject *interface,
                                     int copy);
/* buffer.c: a CPU array over the buffer `object` exports. */
PyObject *gkpy_import_buffer(gkpy_state *state, PyObject *object, int copy);

#endif
