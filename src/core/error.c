/* Per-thread error messages: the only state here is thread-local, so calls
 * from different threads never see each other's messages. */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Large enough for a compiler's log (kernel build errors quote it). */
static _Thread_local char last_message[20480];

gk_status gk_fail(gk_status status, const char *fmt, ...)
{
    /* Formatted aside first: a message may quote the previous one
     * (gk_fail(s, "cannot X: %s", gk_last_error())). */
    char message[sizeof last_message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    memcpy(last_message, message, strlen(message) + 1);
    return status;
}

const char *gk_last_error(void)
{
    return last_message;
}

const char *gk_status_string(gk_status status)
{
    switch (status) {
    case GK_OK: return "success";
    case GK_ERR_INVALID_ARGUMENT: return "invalid argument";
    case GK_ERR_OUT_OF_MEMORY: return "out of memory";
    case GK_ERR_NOT_FOUND: return "not found";
    case GK_ERR_DRIVER: return "driver error";
    case GK_ERR_PERMISSION: return "permission denied";
    case GK_ERR_IO: return "input/output error";
    case GK_ERR_TIMEOUT: return "timed out";
    case GK_ERR_BUSY: return "not enough devices free";
    case GK_ERR_UNSAFE: return "unsafe file or directory";
    case GK_ERR_EXISTS: return "already exists";
    case GK_ERR_CANCELLED: return "cancelled";
    case GK_ERR_OUT_OF_RANGE: return "index out of range";
    case GK_ERR_UNSUPPORTED_DTYPE: return "dtype not supported";
    case GK_ERR_LINALG: return "linear algebra error";
    case GK_ERR_AXIS: return "axis out of range";
    }
    return "unknown status";
}
