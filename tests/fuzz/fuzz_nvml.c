/* What NVML hands back (probe/nvml.c): names, UUIDs, PCI bus ids, driver
 * and NVML versions, counts, process lists and return codes. A stand-in
 * NVML answers every call from the input, in the order the calls are made:
 * the first byte picks the driver's generation (which struct versions it
 * speaks), then each call takes what it needs (a byte for its return code,
 * then its values; a string is a length byte and that many bytes, written
 * without the NUL when it fills the caller's buffer). The snapshot made
 * then goes through the CUDA view and the JSON of `gpukit ls --json`. */
#include "fuzz.h"

#include "ext/nvml.h"
#include "probe/backend.h"

#include <gpukit/visible.h>

#include <stdlib.h>
#include <string.h>

static const uint8_t *input;
static size_t input_left;

static uint8_t take_byte(void)
{
    if (!input_left)
        return 0;
    input_left--;
    return *input++;
}

static unsigned take_u32(void)
{
    unsigned value = 0;
    for (int i = 0; i < 4; i++)
        value = value << 8 | take_byte();
    return value;
}

static unsigned long long take_u64(void)
{
    return (unsigned long long)take_u32() << 32 | take_u32();
}

/* Mostly success (an input that runs out answers success and zeros). */
static nvmlReturn_t take_return(void)
{
    static const nvmlReturn_t errors[] = {
        NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_NO_PERMISSION, NVML_ERROR_NOT_FOUND,
        NVML_ERROR_INSUFFICIENT_SIZE, NVML_ERROR_GPU_IS_LOST, NVML_ERROR_UNKNOWN,
        NVML_ERROR_FUNCTION_NOT_FOUND, NVML_ERROR_INVALID_ARGUMENT,
    };
    uint8_t byte = take_byte();
    return byte < 0xC0 ? NVML_SUCCESS : errors[byte % (sizeof errors / sizeof errors[0])];
}

static void take_string(char *buffer, size_t size)
{
    size_t length = take_byte();
    size_t i = 0;
    for (; i < length && i < size; i++)
        buffer[i] = (char)take_byte();
    if (i < size)
        buffer[i] = '\0';
}

static nvmlReturn_t string_call(char *buffer, unsigned int length)
{
    nvmlReturn_t ret = take_return();
    if (ret == NVML_SUCCESS)
        take_string(buffer, length);
    return ret;
}

static const char *error_string(nvmlReturn_t ret)
{
    return ret == NVML_ERROR_GPU_IS_LOST ? "GPU is lost" : "Unknown Error";
}

static nvmlReturn_t system_string(char *buffer, unsigned int length)
{
    return string_call(buffer, length);
}

static nvmlReturn_t out_int(int *value)
{
    nvmlReturn_t ret = take_return();
    *value = (int)take_u32();
    return ret;
}

static nvmlReturn_t device_count(unsigned int *count)
{
    nvmlReturn_t ret = take_return();
    *count = take_byte() % 9;
    return ret;
}

static nvmlReturn_t handle_by_index(unsigned int index, nvmlDevice_t *device)
{
    *device = (nvmlDevice_t)(uintptr_t)(index + 1);
    return take_return();
}

static nvmlReturn_t device_string(nvmlDevice_t device, char *buffer, unsigned int length)
{
    (void)device;
    return string_call(buffer, length);
}

static nvmlReturn_t pci_info(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    (void)device;
    nvmlReturn_t ret = take_return();
    take_string(pci->busIdLegacy, sizeof pci->busIdLegacy);
    take_string(pci->busId, sizeof pci->busId);
    return ret;
}

static nvmlReturn_t memory_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    (void)device;
    nvmlReturn_t ret = take_return();
    memory->total = take_u64();
    memory->reserved = take_u64();
    memory->free = take_u64();
    memory->used = take_u64();
    return ret;
}

static nvmlReturn_t memory_v1(nvmlDevice_t device, nvmlMemory_t *memory)
{
    (void)device;
    nvmlReturn_t ret = take_return();
    memory->total = take_u64();
    memory->free = take_u64();
    memory->used = take_u64();
    return ret;
}

static nvmlReturn_t utilization(nvmlDevice_t device, nvmlUtilization_t *rates)
{
    (void)device;
    nvmlReturn_t ret = take_return();
    rates->gpu = take_u32();
    rates->memory = take_u32();
    return ret;
}

static nvmlReturn_t one_uint(nvmlDevice_t device, unsigned int *value)
{
    (void)device;
    nvmlReturn_t ret = take_return();
    *value = take_u32();
    return ret;
}

static nvmlReturn_t typed_uint(nvmlDevice_t device, int type, unsigned int *value)
{
    (void)type;
    return one_uint(device, value);
}

static nvmlReturn_t two_uints(nvmlDevice_t device, unsigned int *a, unsigned int *b)
{
    nvmlReturn_t ret = one_uint(device, a);
    *b = take_u32();
    return ret;
}

static nvmlReturn_t two_ints(nvmlDevice_t device, int *a, int *b)
{
    (void)device;
    nvmlReturn_t ret = out_int(a);
    *b = (int)take_u32();
    return ret;
}

static nvmlReturn_t one_int(nvmlDevice_t device, int *value)
{
    (void)device;
    return out_int(value);
}

static nvmlReturn_t mig_count(nvmlDevice_t device, unsigned int *count)
{
    (void)device;
    nvmlReturn_t ret = take_return();
    *count = take_byte() % 8;
    return ret;
}

static nvmlReturn_t mig_handle(nvmlDevice_t device, unsigned int index, nvmlDevice_t *mig)
{
    (void)device;
    *mig = (nvmlDevice_t)(uintptr_t)(0x100 + index);
    return take_return();
}

static int processes_version;

/* The size query answers INSUFFICIENT_SIZE with a count; the read fills
 * at most the capacity it is given, as NVML does. */
static nvmlReturn_t processes(nvmlDevice_t device, unsigned int *count, void *entries)
{
    (void)device;
    nvmlReturn_t ret = take_return();
    unsigned int wanted = take_byte() % 6;
    if (!entries) {
        *count = wanted;
        return ret == NVML_SUCCESS && wanted ? NVML_ERROR_INSUFFICIENT_SIZE : ret;
    }
    if (wanted > *count) {
        *count = wanted;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned int i = 0; i < wanted; i++) {
        if (processes_version == 1) {
            nvmlProcessInfo_v1_t *entry = (nvmlProcessInfo_v1_t *)entries + i;
            entry->pid = take_u32();
            entry->usedGpuMemory = take_u64();
        } else {
            nvmlProcessInfo_t *entry = (nvmlProcessInfo_t *)entries + i;
            entry->pid = take_u32();
            entry->usedGpuMemory = take_u64();
            entry->gpuInstanceId = take_u32();
            entry->computeInstanceId = take_u32();
        }
    }
    *count = wanted;
    return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input = data;
    input_left = size;
    uint8_t generation = take_byte();
    processes_version = generation & 1 ? 1 : 3;
    gk_nvml lib = {
        .ErrorString = error_string,
        .SystemGetDriverVersion = system_string,
        .SystemGetNVMLVersion = system_string,
        .SystemGetCudaDriverVersion = out_int,
        .DeviceGetCount = device_count,
        .DeviceGetHandleByIndex = handle_by_index,
        .DeviceGetName = device_string,
        .DeviceGetUUID = device_string,
        .DeviceGetPciInfo = pci_info,
        .pci_info_version = generation & 2 ? 1 : 3,
        .DeviceGetMemoryInfo_v2 = generation & 4 ? NULL : memory_v2,
        .DeviceGetMemoryInfo = memory_v1,
        .DeviceGetUtilizationRates = utilization,
        .DeviceGetTemperature = typed_uint,
        .DeviceGetFanSpeed = one_uint,
        .DeviceGetEncoderUtilization = two_uints,
        .DeviceGetDecoderUtilization = two_uints,
        .DeviceGetPowerUsage = one_uint,
        .DeviceGetEnforcedPowerLimit = one_uint,
        .DeviceGetClockInfo = typed_uint,
        .DeviceGetMaxClockInfo = typed_uint,
        .DeviceGetCudaComputeCapability = two_ints,
        .DeviceGetPersistenceMode = one_int,
        .DeviceGetMigMode = two_uints,
        .DeviceGetMaxMigDeviceCount = mig_count,
        .DeviceGetMigDeviceHandleByIndex = mig_handle,
        .DeviceGetGpuInstanceId = one_uint,
        .DeviceGetComputeInstanceId = one_uint,
        .DeviceGetComputeRunningProcesses = processes,
        .DeviceGetGraphicsRunningProcesses = processes,
        .processes_version = processes_version,
    };
    gk_snapshot *snapshot = calloc(1, sizeof *snapshot);
    if (!snapshot)
        abort();
    if (gk_nvml_read_devices(&lib, NULL, snapshot) == GK_OK &&
        gk_nvml_read_processes(&lib, NULL, snapshot) == GK_OK) {
        FUZZ_CHECK_TEXT(snapshot->driver_version);
        FUZZ_CHECK_TEXT(snapshot->nvml_version);
        for (size_t i = 0; i < snapshot->gpu_count; i++) {
            const gk_gpu *gpu = &snapshot->gpus[i];
            FUZZ_CHECK_TEXT(gpu->name);
            FUZZ_CHECK_TEXT(gpu->uuid);
            FUZZ_CHECK_TEXT(gpu->pci_bus_id);
            FUZZ_CHECK_TEXT(gpu->error);
            for (size_t m = 0; m < gpu->mig_count; m++) {
                FUZZ_CHECK_TEXT(gpu->mig_devices[m].name);
                FUZZ_CHECK_TEXT(gpu->mig_devices[m].uuid);
            }
        }
        gk_cuda_view view;
        gk_cuda_view_resolve(snapshot, "0,1,GPU-1", "PCI_BUS_ID", &view);
        gk_cuda_view_resolve(snapshot, NULL, NULL, &view);
        fuzz_write_json(snapshot, &view);
    }
    gk_snapshot_destroy(snapshot);
    return 0;
}
