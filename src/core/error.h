/* Internal: recording the message that gk_last_error() returns. */
#ifndef GK_CORE_ERROR_H
#define GK_CORE_ERROR_H

#include <gpukit/status.h>

/* Records a printf-style message for gk_last_error() and returns `status`,
 * so a failing path reads `return gk_fail(GK_ERR_IO, "cannot read %s", p);`. */
gk_status gk_fail(gk_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
