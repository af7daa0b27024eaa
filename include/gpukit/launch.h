/* Starting a job on reserved GPUs: the environment that points CUDA at them,
 * and running the command either in place of the caller (exec: signals, the
 * process group and the exit status belong to the command) or as its parent
 * when the caller holds something the job must not be able to drop. */
#ifndef GPUKIT_LAUNCH_H
#define GPUKIT_LAUNCH_H

#include <gpukit/reserve.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The chosen devices as a CUDA_VISIBLE_DEVICES value: their UUIDs, which name
 * the same devices whatever CUDA_DEVICE_ORDER says, in the order chosen. */
gk_status gk_launch_visible_devices(const gk_reservation *reservation, unsigned count,
                                    char *buf, size_t size);

/* Replaces this process with argv[0] (searched in PATH). Returns only on
 * failure: GK_ERR_NOT_FOUND (no such command) or GK_ERR_PERMISSION (not
 * executable), with the message in gk_last_error(). */
gk_status gk_launch_exec(char *const argv[]);

/* Runs argv as a child in this process's group and waits for it. While it
 * runs, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 and SIGALRM sent to this process
 * are passed on to the child; SIGINT and SIGQUIT are not, and do not end this
 * process: they come from the terminal or from Jupyter's interrupt, both of
 * which signal the whole process group, so the child already has them.
 * *exit_code is the child's exit status, or 128+N when signal N ended it.
 * Fails like gk_launch_exec() when the command cannot be started. */
gk_status gk_launch_supervise(char *const argv[], int *exit_code);

#ifdef __cplusplus
}
#endif
#endif
