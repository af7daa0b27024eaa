/* Run-time loading of NVML: see nvml.h. */
#include "ext/nvml.h"

#include "core/error.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* Looks up the newest available version of `base`: base_v3, base_v2, base.
 * Stores the version found (3, 2 or 1) in *version when not NULL. */
static void *newest_symbol(void *library, const char *base, int max_version, int *version)
{
    char name[128];
    for (int v = max_version; v >= 2; v--) {
        snprintf(name, sizeof name, "%s_v%d", base, v);
        void *sym = dlsym(library, name);
        if (sym) {
            if (version)
                *version = v;
            return sym;
        }
    }
    if (version)
        *version = 1;
    return dlsym(library, base);
}

/* Function pointers cannot be assigned from void* in ISO C; memcpy is the
 * portable way to move a dlsym result into a typed pointer. */
#define LOAD(field, base, max_version, version_out)                               \
    do {                                                                          \
        void *sym_ = newest_symbol(nvml->library, base, max_version, version_out); \
        memcpy(&nvml->field, &sym_, sizeof sym_);                                 \
    } while (0)

gk_status gk_nvml_load(gk_nvml *nvml, const char *path)
{
    memset(nvml, 0, sizeof *nvml);
    const char *target = path ? path : "libnvidia-ml.so.1";
    nvml->library = dlopen(target, RTLD_NOW | RTLD_LOCAL);
    if (!nvml->library)
        return gk_fail(GK_ERR_NOT_FOUND, "%s", dlerror());
    snprintf(nvml->path, sizeof nvml->path, "%s", target);

    LOAD(Init, "nvmlInit", 2, NULL);
    LOAD(Shutdown, "nvmlShutdown", 1, NULL);
    LOAD(ErrorString, "nvmlErrorString", 1, NULL);
    LOAD(SystemGetDriverVersion, "nvmlSystemGetDriverVersion", 1, NULL);
    LOAD(SystemGetNVMLVersion, "nvmlSystemGetNVMLVersion", 1, NULL);
    LOAD(SystemGetCudaDriverVersion, "nvmlSystemGetCudaDriverVersion", 2, NULL);
    LOAD(DeviceGetCount, "nvmlDeviceGetCount", 2, NULL);
    LOAD(DeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex", 2, NULL);
    LOAD(DeviceGetName, "nvmlDeviceGetName", 1, NULL);
    LOAD(DeviceGetUUID, "nvmlDeviceGetUUID", 1, NULL);
    LOAD(DeviceGetPciInfo, "nvmlDeviceGetPciInfo", 3, &nvml->pci_info_version);
    LOAD(DeviceGetMinorNumber, "nvmlDeviceGetMinorNumber", 1, NULL);
    /* The v2 memory call takes a versioned struct; the v1 call is kept as the
     * fallback for drivers before R510. */
    void *memory_v2 = dlsym(nvml->library, "nvmlDeviceGetMemoryInfo_v2");
    memcpy(&nvml->DeviceGetMemoryInfo_v2, &memory_v2, sizeof memory_v2);
    LOAD(DeviceGetMemoryInfo, "nvmlDeviceGetMemoryInfo", 1, NULL);
    LOAD(DeviceGetUtilizationRates, "nvmlDeviceGetUtilizationRates", 1, NULL);
    LOAD(DeviceGetTemperature, "nvmlDeviceGetTemperature", 1, NULL);
    LOAD(DeviceGetFanSpeed, "nvmlDeviceGetFanSpeed", 1, NULL);
    LOAD(DeviceGetEncoderUtilization, "nvmlDeviceGetEncoderUtilization", 1, NULL);
    LOAD(DeviceGetDecoderUtilization, "nvmlDeviceGetDecoderUtilization", 1, NULL);
    LOAD(DeviceGetPowerUsage, "nvmlDeviceGetPowerUsage", 1, NULL);
    LOAD(DeviceGetEnforcedPowerLimit, "nvmlDeviceGetEnforcedPowerLimit", 1, NULL);
    LOAD(DeviceGetTotalEnergyConsumption, "nvmlDeviceGetTotalEnergyConsumption", 1, NULL);
    LOAD(DeviceGetClockInfo, "nvmlDeviceGetClockInfo", 1, NULL);
    LOAD(DeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo", 1, NULL);
    LOAD(DeviceGetCudaComputeCapability, "nvmlDeviceGetCudaComputeCapability", 1, NULL);
    LOAD(DeviceGetPersistenceMode, "nvmlDeviceGetPersistenceMode", 1, NULL);
    LOAD(DeviceGetMigMode, "nvmlDeviceGetMigMode", 1, NULL);
    LOAD(DeviceGetMaxMigDeviceCount, "nvmlDeviceGetMaxMigDeviceCount", 1, NULL);
    LOAD(DeviceGetMigDeviceHandleByIndex, "nvmlDeviceGetMigDeviceHandleByIndex", 1, NULL);
    LOAD(DeviceGetGpuInstanceId, "nvmlDeviceGetGpuInstanceId", 1, NULL);
    LOAD(DeviceGetComputeInstanceId, "nvmlDeviceGetComputeInstanceId", 1, NULL);
    LOAD(DeviceGetComputeRunningProcesses, "nvmlDeviceGetComputeRunningProcesses", 3,
         &nvml->processes_version);
    int graphics_version = 1;
    LOAD(DeviceGetGraphicsRunningProcesses, "nvmlDeviceGetGraphicsRunningProcesses", 3,
         &graphics_version);
    /* Both lists are read with one entry layout; a driver that versions them
     * differently would be inconsistent, so drop graphics rather than misread. */
    if (graphics_version != nvml->processes_version)
        nvml->DeviceGetGraphicsRunningProcesses = NULL;

    if (!nvml->Init || !nvml->DeviceGetCount || !nvml->DeviceGetHandleByIndex) {
        gk_nvml_unload(nvml);
        return gk_fail(GK_ERR_NOT_FOUND,
                       "%s is not a usable NVML library (nvmlInit, nvmlDeviceGetCount or "
                       "nvmlDeviceGetHandleByIndex missing)",
                       target);
    }
    return GK_OK;
}

void gk_nvml_unload(gk_nvml *nvml)
{
    if (nvml->library)
        dlclose(nvml->library);
    memset(nvml, 0, sizeof *nvml);
}

const char *gk_nvml_error_string(const gk_nvml *nvml, nvmlReturn_t ret)
{
    if (nvml->ErrorString) {
        const char *text = nvml->ErrorString(ret);
        if (text && *text)
            return text;
    }
    return "NVML error";
}
