/* NVML, the NVIDIA Management Library, loaded at run time.
 *
 * Only the few types and enum values gpukit uses are declared here (they are
 * facts of NVML's ABI). Each entry point is looked up newest version first
 * (_v3, then _v2, then the plain name), so one binary runs on old and new
 * drivers; entries an old driver lacks stay NULL and callers report N/A. */
#ifndef GK_EXT_NVML_H
#define GK_EXT_NVML_H

#include <stddef.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_opaque *nvmlDevice_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_UNKNOWN = 999,
};

enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

/* Returned in a process's usedGpuMemory when the driver cannot tell. */
#define NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFull

typedef struct {
    unsigned long long total, free, used; /* v1: used includes reserved */
} nvmlMemory_t;

typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define NVML_MEMORY_V2_VERSION ((unsigned)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;

/* _v2/_v3 layout. The v1 struct starts with a 16-byte busId at the same
 * offset as busIdLegacy and is smaller, so this buffer serves all three. */
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

/* Process entry of the _v2/_v3 calls. */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

/* Process entry of the unversioned (v1) calls of old drivers. */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef nvmlReturn_t (*nvml_processes_fn)(nvmlDevice_t, unsigned int *, void *);

typedef struct gk_nvml {
    void *library;
    char path[512]; /* what was loaded */

    nvmlReturn_t (*Init)(void);
    nvmlReturn_t (*Shutdown)(void);
    const char *(*ErrorString)(nvmlReturn_t);
    nvmlReturn_t (*SystemGetDriverVersion)(char *, unsigned int);
    nvmlReturn_t (*SystemGetNVMLVersion)(char *, unsigned int);
    nvmlReturn_t (*SystemGetCudaDriverVersion)(int *);
    nvmlReturn_t (*DeviceGetCount)(unsigned int *);
    nvmlReturn_t (*DeviceGetHandleByIndex)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*DeviceGetName)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*DeviceGetUUID)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*DeviceGetPciInfo)(nvmlDevice_t, nvmlPciInfo_t *);
    nvmlReturn_t (*DeviceGetMinorNumber)(nvmlDevice_t, unsigned int *);
    int pci_info_version; /* 1: read busIdLegacy (the v1 busId) */
    nvmlReturn_t (*DeviceGetMemoryInfo_v2)(nvmlDevice_t, nvmlMemory_v2_t *); /* may be NULL */
    nvmlReturn_t (*DeviceGetMemoryInfo)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*DeviceGetUtilizationRates)(nvmlDevice_t, nvmlUtilization_t *);
    nvmlReturn_t (*DeviceGetTemperature)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*DeviceGetFanSpeed)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*DeviceGetEncoderUtilization)(nvmlDevice_t, unsigned int *, unsigned int *);
    nvmlReturn_t (*DeviceGetDecoderUtilization)(nvmlDevice_t, unsigned int *, unsigned int *);
    nvmlReturn_t (*DeviceGetPowerUsage)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*DeviceGetEnforcedPowerLimit)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*DeviceGetTotalEnergyConsumption)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*DeviceGetClockInfo)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*DeviceGetMaxClockInfo)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*DeviceGetCudaComputeCapability)(nvmlDevice_t, int *, int *);
    nvmlReturn_t (*DeviceGetPersistenceMode)(nvmlDevice_t, int *);
    nvmlReturn_t (*DeviceGetMigMode)(nvmlDevice_t, unsigned int *, unsigned int *);
    nvmlReturn_t (*DeviceGetMaxMigDeviceCount)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*DeviceGetMigDeviceHandleByIndex)(nvmlDevice_t, unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*DeviceGetGpuInstanceId)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*DeviceGetComputeInstanceId)(nvmlDevice_t, unsigned int *);
    nvml_processes_fn DeviceGetComputeRunningProcesses;
    nvml_processes_fn DeviceGetGraphicsRunningProcesses;
    int processes_version; /* 1: entries are nvmlProcessInfo_v1_t */
} gk_nvml;

/* Loads NVML: `path` if not NULL, else libnvidia-ml.so.1 (never the
 * unversioned development stub, which only links and does not work). On
 * failure returns GK_ERR_NOT_FOUND with the loader's message in
 * gk_last_error(). Does not call nvmlInit. */
#include <gpukit/status.h>
gk_status gk_nvml_load(gk_nvml *nvml, const char *path);
void gk_nvml_unload(gk_nvml *nvml);

/* NVML's own text for `ret`, or a generic one if the library has none. */
const char *gk_nvml_error_string(const gk_nvml *nvml, nvmlReturn_t ret);

#endif
