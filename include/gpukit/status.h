/* Status codes and error messages shared by every gpukit call. */
#ifndef GPUKIT_STATUS_H
#define GPUKIT_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gk_status {
    GK_OK = 0,
    GK_ERR_INVALID_ARGUMENT, /* the caller passed something unusable */
    GK_ERR_OUT_OF_MEMORY,
    GK_ERR_NOT_FOUND,        /* a library, device or file does not exist */
    GK_ERR_DRIVER,           /* a vendor library call failed */
    GK_ERR_PERMISSION,
    GK_ERR_IO,
    GK_ERR_TIMEOUT,
    GK_ERR_BUSY,             /* not enough devices are free for the request */
    GK_ERR_UNSAFE,           /* a shared file or directory could have been tampered with */
    GK_ERR_EXISTS,           /* something is in the way and was left as it is */
    GK_ERR_CANCELLED,        /* the caller asked a wait to stop (e.g. Ctrl-C) */
    GK_ERR_OUT_OF_RANGE,     /* an index beyond the end of an axis */
    GK_ERR_UNSUPPORTED_DTYPE, /* an op or a device does not take this dtype */
    GK_ERR_LINALG, /* a matrix is singular or not positive definite, or a factorization did
                    * not converge (NumPy's LinAlgError) */
    GK_ERR_AXIS,   /* an axis beyond the array's (NumPy's AxisError) */
} gk_status;

/* Short fixed name of a status ("out of memory"). Never NULL. */
const char *gk_status_string(gk_status status);

/* Message of the last failed gpukit call in this thread: what failed and what
 * to do about it. Valid until the next gpukit call in the same thread.
 * Thread-safe: each thread has its own message. */
const char *gk_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
