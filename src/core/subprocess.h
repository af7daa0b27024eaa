/* Internal: running a helper program and capturing what it prints. */
#ifndef GK_CORE_SUBPROCESS_H
#define GK_CORE_SUBPROCESS_H

#include <gpukit/status.h>

#include <stddef.h>

/* Runs argv[0] (searched on PATH) with stdin and stderr on /dev/null and
 * returns its standard output as a NUL-terminated string in *output (free it),
 * and its exit status (or 128+signal) in *exit_status. A program that runs
 * longer than timeout_ms is killed and GK_ERR_TIMEOUT returned; a program that
 * cannot be started gives GK_ERR_NOT_FOUND. */
gk_status gk_run_capture(char *const argv[], int timeout_ms, char **output, int *exit_status);

#endif
