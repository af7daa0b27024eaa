/* Starting a job on reserved GPUs: the environment that points CUDA at them
 * (shared by `gpukit run` and the Python module's gpukit.reserve()), and
 * running the command either in place of the caller (exec: signals, the
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

/* --- the job's environment --- */

/* CUDA_VISIBLE_DEVICES as it was before a lease's job changed it, when it
 * was set (by Slurm, say). */
#define GK_OUTER_VISIBLE_ENV "GPUKIT_OUTER_CUDA_VISIBLE_DEVICES"

#define GK_JOB_ENV_MAX 8

/* Variables for a job, in the order they are set. */
typedef struct gk_job_env {
    size_t count;
    char names[GK_JOB_ENV_MAX][48];
    char values[GK_JOB_ENV_MAX][GK_LEASE_MAX_DEVICES * 100];
} gk_job_env;

enum {
    GK_JOB_ENV_TF_ALLOW_GROWTH = 1u << 0, /* TF_FORCE_GPU_ALLOW_GROWTH=true for TensorFlow */
};

/* Appends one variable; GK_ERR_INVALID_ARGUMENT when env is full or the name
 * or value too long. */
gk_status gk_job_env_add(gk_job_env *env, const char *name, const char *value);

/* Appends the variables that put a job on the first `count` devices chosen
 * by `reservation`: CUDA_VISIBLE_DEVICES (their UUIDs, in the order chosen),
 * CUDA_DEVICE_ORDER=PCI_BUS_ID (indices a program computes then follow
 * nvidia-smi's numbering), NVIDIA_VISIBLE_DEVICES (for containers the job
 * starts), TF_FORCE_GPU_ALLOW_GROWTH=true with GK_JOB_ENV_TF_ALLOW_GROWTH,
 * and GPUKIT_LEASE (the lease's name) when the reservation holds a lease,
 * with GPUKIT_OUTER_CUDA_VISIBLE_DEVICES (what CUDA_VISIBLE_DEVICES was, if
 * it was set outside any gpukit job): the GPUs the job's own workers may
 * choose among. */
gk_status gk_job_env_gpus(gk_job_env *env, const gk_reservation *reservation, unsigned count,
                          unsigned flags);

/* Appends the variables of a job that runs on the CPU because there is no
 * usable GPU: CUDA_VISIBLE_DEVICES empty, so CUDA programs see no device
 * rather than one nobody reserved. */
gk_status gk_job_env_cpu(gk_job_env *env);

/* Sets every variable in this process's environment (setenv), for a job
 * about to be exec'd. */
gk_status gk_job_env_apply(const gk_job_env *env);

/* Whether a failed gk_reserve() means that this machine has no usable GPU
 * (none, no driver, a failing driver), which is when a job that accepts the
 * CPU runs there instead; busy GPUs, timeouts and bad requests are not. */
bool gk_launch_cpu_fallback(gk_status status);

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
