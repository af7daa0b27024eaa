/* Internal: what gpukit adds to a reading of the driver (monitor/monitor.c):
 * the leases and waiting line, and for each GPU process the lease it runs
 * under and the Jupyter kernel it is. */
#ifndef GK_MONITOR_PROCESSES_H
#define GK_MONITOR_PROCESSES_H

#include <gpukit/monitor.h>

/* Lists the leases of `lease_dir` (NULL: the default) into the sample. It
 * does not take the directory's lock: a monitor must never wait for other
 * users, and a lease being created shows at the next reading. A directory
 * that cannot be read is no failure: lease_problem says why. Fails only
 * when out of memory. */
gk_status gk_monitor_read_leases(const char *lease_dir, gk_sample *sample);

/* Fills sample->processes from the snapshot and leases; `previous` (may be
 * NULL) is the reading before, for each process's CPU use in between. */
gk_status gk_monitor_describe_processes(gk_sample *sample, const gk_sample *previous);

/* The Jupyter kernel id in a process's NUL-separated command line (`python
 * -m ipykernel_launcher -f .../kernel-ID.json`) into `id`; false when the
 * process is no Jupyter kernel. Both parsers take `length` bytes followed
 * by a NUL (as gk_process's cmdline and a read /proc/PID/environ are). */
bool gk_jupyter_kernel_id(const char *cmdline, size_t length, char *id, size_t size);

/* The value of `name` in a NUL-separated environment block (as
 * /proc/PID/environ has it) into `value`; false when it is not set. */
bool gk_environ_value(const char *block, size_t length, const char *name, char *value,
                      size_t size);

#endif
