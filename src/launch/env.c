/* The environment of a job on reserved GPUs, and when a job falls back to the
 * CPU (include/gpukit/launch.h). `gpukit run` sets it before exec; the Python
 * module sets it in os.environ. */
#include <gpukit/launch.h>

#include "core/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gk_status gk_job_env_add(gk_job_env *env, const char *name, const char *value)
{
    if (env->count >= GK_JOB_ENV_MAX)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "too many variables for the job (%d at most)",
                       GK_JOB_ENV_MAX);
    size_t k = env->count;
    int n = snprintf(env->names[k], sizeof env->names[k], "%s", name);
    int m = snprintf(env->values[k], sizeof env->values[k], "%s", value);
    if (n < 0 || (size_t)n >= sizeof env->names[k] || m < 0 || (size_t)m >= sizeof env->values[k])
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "the job's variable %s is too long", name);
    env->count++;
    return GK_OK;
}

gk_status gk_job_env_gpus(gk_job_env *env, const gk_reservation *reservation, unsigned count,
                          unsigned flags)
{
    char visible[GK_LEASE_MAX_DEVICES * 100];
    gk_status status = gk_launch_visible_devices(reservation, count, visible, sizeof visible);
    if (status == GK_OK)
        status = gk_job_env_add(env, "CUDA_VISIBLE_DEVICES", visible);
    /* UUIDs already name the devices whatever the order; PCI_BUS_ID makes
     * any index the job derives itself agree with nvidia-smi. */
    if (status == GK_OK)
        status = gk_job_env_add(env, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
    if (status == GK_OK)
        status = gk_job_env_add(env, "NVIDIA_VISIBLE_DEVICES", visible);
    if (status == GK_OK && (flags & GK_JOB_ENV_TF_ALLOW_GROWTH))
        status = gk_job_env_add(env, "TF_FORCE_GPU_ALLOW_GROWTH", "true");
    if (status == GK_OK && reservation->lease.name[0])
        status = gk_job_env_add(env, GK_LEASE_ENV, reservation->lease.name);
    /* What CUDA_VISIBLE_DEVICES was before: the GPUs the job's own jobs
     * (a Dask cluster's workers) choose among, such as a Slurm allocation's.
     * Not recorded again inside a job, nor when it was unset. */
    const char *outer = getenv("CUDA_VISIBLE_DEVICES");
    if (status == GK_OK && reservation->lease.name[0] && outer && !getenv(GK_LEASE_ENV))
        status = gk_job_env_add(env, GK_OUTER_VISIBLE_ENV, outer);
    return status;
}

gk_status gk_job_env_cpu(gk_job_env *env)
{
    return gk_job_env_add(env, "CUDA_VISIBLE_DEVICES", "");
}

gk_status gk_job_env_apply(const gk_job_env *env)
{
    for (size_t i = 0; i < env->count; i++)
        if (setenv(env->names[i], env->values[i], 1) != 0)
            return gk_fail(GK_ERR_OUT_OF_MEMORY, "cannot set %s: %s", env->names[i],
                           strerror(errno));
    return GK_OK;
}

bool gk_launch_cpu_fallback(gk_status status)
{
    return status == GK_ERR_NOT_FOUND || status == GK_ERR_DRIVER;
}
