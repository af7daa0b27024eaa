/* Discovery through NVML, the driver's own management library. */
#include "probe/backend.h"

#include "core/error.h"
#include "ext/nvml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct nvml_state {
    gk_nvml lib;
    gk_nvml_cache cache;
} nvml_state;

static void diagnose_init_failure(gk_snapshot *snapshot, const gk_nvml *lib, nvmlReturn_t ret)
{
    const char *text = gk_nvml_error_string(lib, ret);
    switch (ret) {
    case NVML_ERROR_DRIVER_NOT_LOADED:
        gk_snapshot_set_absence(snapshot, GK_ABSENCE_DRIVER_NOT_LOADED,
                                "the NVIDIA driver library %s is installed but the kernel driver "
                                "is not loaded (NVML: %s). Load it with `sudo modprobe nvidia`, or "
                                "reboot after installing the driver; in a container, start it "
                                "with GPU access (--gpus all).",
                                lib->path, text);
        break;
    case NVML_ERROR_NO_PERMISSION:
        gk_snapshot_set_absence(snapshot, GK_ABSENCE_NO_PERMISSION,
                                "no permission to use the NVIDIA driver (NVML: %s). Ask an admin "
                                "to give your user access to /dev/nvidia* (often the 'video' "
                                "group).",
                                text);
        break;
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
        gk_snapshot_set_absence(snapshot, GK_ABSENCE_DRIVER_ERROR,
                                "the NVIDIA driver library and kernel module have different "
                                "versions (NVML: %s), usually after a driver upgrade. Reboot, "
                                "or reload the nvidia kernel modules.",
                                text);
        break;
    default:
        gk_snapshot_set_absence(snapshot, GK_ABSENCE_DRIVER_ERROR,
                                "the NVIDIA driver failed to start (NVML error %d: %s). Check "
                                "`dmesg` for NVRM messages and that the driver is installed "
                                "correctly.",
                                ret, text);
        break;
    }
}

static gk_status nvml_open(void **out, gk_snapshot *snapshot)
{
    nvml_state *state = calloc(1, sizeof *state);
    if (!state)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory opening NVML");
    const char *override = getenv("GPUKIT_NVML_LIBRARY");
    if (override && !*override)
        override = NULL;
    if (gk_nvml_load(&state->lib, override) != GK_OK) {
        gk_snapshot_set_absence(snapshot, GK_ABSENCE_NO_DRIVER,
                                "%s could not be loaded (%s)",
                                override ? override : "libnvidia-ml.so.1", gk_last_error());
        free(state);
        return GK_ERR_NOT_FOUND;
    }
    nvmlReturn_t ret = state->lib.Init();
    if (ret != NVML_SUCCESS) {
        diagnose_init_failure(snapshot, &state->lib, ret);
        gk_nvml_unload(&state->lib);
        free(state);
        return GK_ERR_DRIVER;
    }
    *out = state;
    return GK_OK;
}

static void nvml_close(void *opaque)
{
    nvml_state *state = opaque;
    if (!state)
        return;
    if (state->lib.Shutdown)
        state->lib.Shutdown();
    gk_nvml_unload(&state->lib);
    free(state);
}

/* Records a per-device NVML failure. Only a lost GPU and failures of the
 * identity queries mark the whole GPU as faulty; other fields merely become
 * N/A, because drivers answer oddly for single fields on some boards.
 * Returns false when the GPU should not be queried further. */
static bool note_failure(const gk_nvml *lib, gk_gpu *gpu, nvmlReturn_t ret, const char *what,
                         bool identity)
{
    if (ret == NVML_SUCCESS || gpu->state != GK_GPU_OK)
        return gpu->state == GK_GPU_OK;
    const char *text = gk_nvml_error_string(lib, ret);
    if (ret == NVML_ERROR_GPU_IS_LOST) {
        gpu->state = GK_GPU_LOST;
        snprintf(gpu->error, sizeof gpu->error,
                 "GPU is lost (NVML: %s); check `dmesg` for Xid errors, it needs a reset or "
                 "a reboot",
                 text);
        return false;
    }
    bool benign = ret == NVML_ERROR_NOT_SUPPORTED || ret == NVML_ERROR_NO_PERMISSION ||
                  ret == NVML_ERROR_NOT_FOUND || ret == NVML_ERROR_FUNCTION_NOT_FOUND;
    if (identity && !benign) {
        gpu->state = GK_GPU_ERROR;
        snprintf(gpu->error, sizeof gpu->error, "NVML error %d reading the %s: %s", ret, what,
                 text);
        return false;
    }
    return true;
}

/* Reads one unsigned value through an optional (dev, out) entry point. */
#define READ_UINT(fn, field, what)                                       \
    do {                                                                 \
        unsigned int value_;                                             \
        nvmlReturn_t ret_ = lib->fn ? lib->fn(dev, &value_) : NVML_ERROR_FUNCTION_NOT_FOUND; \
        if (ret_ == NVML_SUCCESS)                                        \
            gpu->field = gk_known(value_);                               \
        else if (!note_failure(lib, gpu, ret_, what, false))             \
            return;                                                      \
    } while (0)

/* Reads a clock of the given type through GetClockInfo or GetMaxClockInfo. */
#define READ_CLOCK(fn, type, field)                                          \
    do {                                                                     \
        unsigned int mhz_;                                                   \
        nvmlReturn_t ret_ = lib->fn ? lib->fn(dev, type, &mhz_) : NVML_ERROR_FUNCTION_NOT_FOUND; \
        if (ret_ == NVML_SUCCESS)                                            \
            gpu->field = gk_known(mhz_);                                     \
        else if (!note_failure(lib, gpu, ret_, "clocks", false))             \
            return;                                                          \
    } while (0)

/* Reads encoder or decoder utilization (the sampling period is not kept). */
#define READ_CODEC(fn, field)                                                \
    do {                                                                     \
        unsigned int percent_, period_;                                      \
        nvmlReturn_t ret_ = lib->fn ? lib->fn(dev, &percent_, &period_)      \
                                    : NVML_ERROR_FUNCTION_NOT_FOUND;         \
        if (ret_ == NVML_SUCCESS)                                            \
            gpu->field = gk_known(percent_);                                 \
        else if (!note_failure(lib, gpu, ret_, "codec utilization", false))  \
            return;                                                          \
    } while (0)

/* NVML promises NUL-terminated strings that fit the buffer; a driver that
 * fills it to the end must not leave gpukit reading past it. */
static void end_string(char *buffer, size_t size)
{
    buffer[size - 1] = '\0';
}

/* Reads total/used/free memory, v2 first (it separates reserved memory, as
 * nvidia-smi does since R510), v1 for older drivers. */
static nvmlReturn_t read_memory(const gk_nvml *lib, nvmlDevice_t dev, gk_field *total,
                                gk_field *used, gk_field *free_bytes, gk_field *reserved)
{
    if (lib->DeviceGetMemoryInfo_v2) {
        nvmlMemory_v2_t memory = {.version = NVML_MEMORY_V2_VERSION};
        nvmlReturn_t ret = lib->DeviceGetMemoryInfo_v2(dev, &memory);
        if (ret == NVML_SUCCESS) {
            *total = gk_known(memory.total);
            *used = gk_known(memory.used);
            *free_bytes = gk_known(memory.free);
            if (reserved)
                *reserved = gk_known(memory.reserved);
            return ret;
        }
        if (ret == NVML_ERROR_GPU_IS_LOST)
            return ret;
    }
    if (!lib->DeviceGetMemoryInfo)
        return NVML_ERROR_FUNCTION_NOT_FOUND;
    nvmlMemory_t memory;
    nvmlReturn_t ret = lib->DeviceGetMemoryInfo(dev, &memory);
    if (ret == NVML_SUCCESS) {
        *total = gk_known(memory.total);
        *used = gk_known(memory.used);
        *free_bytes = gk_known(memory.free);
    }
    return ret;
}

static void read_mig_devices(const gk_nvml *lib, nvmlDevice_t dev, gk_gpu *gpu)
{
    unsigned int max = 0;
    if (!lib->DeviceGetMaxMigDeviceCount || !lib->DeviceGetMigDeviceHandleByIndex ||
        lib->DeviceGetMaxMigDeviceCount(dev, &max) != NVML_SUCCESS || max == 0)
        return;
    gpu->mig_devices = calloc(max, sizeof *gpu->mig_devices);
    if (!gpu->mig_devices)
        return;
    for (unsigned int i = 0; i < max; i++) {
        nvmlDevice_t mig;
        /* Slots without a configured instance answer NOT_FOUND. */
        if (lib->DeviceGetMigDeviceHandleByIndex(dev, i, &mig) != NVML_SUCCESS)
            continue;
        gk_mig_device *m = &gpu->mig_devices[gpu->mig_count++];
        m->index = i;
        if (lib->DeviceGetUUID)
            lib->DeviceGetUUID(mig, m->uuid, sizeof m->uuid);
        if (lib->DeviceGetName)
            lib->DeviceGetName(mig, m->name, sizeof m->name);
        end_string(m->uuid, sizeof m->uuid);
        end_string(m->name, sizeof m->name);
        unsigned int id;
        if (lib->DeviceGetGpuInstanceId && lib->DeviceGetGpuInstanceId(mig, &id) == NVML_SUCCESS)
            m->gpu_instance = gk_known(id);
        if (lib->DeviceGetComputeInstanceId &&
            lib->DeviceGetComputeInstanceId(mig, &id) == NVML_SUCCESS)
            m->compute_instance = gk_known(id);
        gk_field unused;
        read_memory(lib, mig, &m->memory_total, &m->memory_used, &unused, NULL);
    }
}

/* The facts that never change while the driver runs: name, UUID, bus id,
 * compute capability, maximum clocks. Read once per GPU and kept in the
 * probe's cache (gk_nvml_cache), so the monitor's ticks read only live facts. */
static void read_identity(const gk_nvml *lib, nvmlDevice_t dev, gk_gpu *gpu)
{
    nvmlReturn_t ret = lib->DeviceGetName ? lib->DeviceGetName(dev, gpu->name, sizeof gpu->name)
                                          : NVML_ERROR_FUNCTION_NOT_FOUND;
    end_string(gpu->name, sizeof gpu->name);
    if (!note_failure(lib, gpu, ret, "name", true))
        return;
    ret = lib->DeviceGetUUID ? lib->DeviceGetUUID(dev, gpu->uuid, sizeof gpu->uuid)
                             : NVML_ERROR_FUNCTION_NOT_FOUND;
    end_string(gpu->uuid, sizeof gpu->uuid);
    if (!note_failure(lib, gpu, ret, "UUID", true))
        return;

    if (lib->DeviceGetPciInfo) {
        nvmlPciInfo_t pci;
        memset(&pci, 0, sizeof pci);
        ret = lib->DeviceGetPciInfo(dev, &pci);
        if (ret == NVML_SUCCESS) {
            const char *bus_id = lib->pci_info_version >= 2 && pci.busId[0] ? pci.busId
                                                                            : pci.busIdLegacy;
            char text[sizeof pci.busId + 1];
            snprintf(text, sizeof text, "%.*s", (int)sizeof pci.busId, bus_id);
            gk_format_bus_id(gpu->pci_bus_id, sizeof gpu->pci_bus_id, text);
        } else if (!note_failure(lib, gpu, ret, "PCI information", false)) {
            return;
        }
    }

    READ_CLOCK(DeviceGetMaxClockInfo, NVML_CLOCK_SM, clock_max_sm);
    READ_CLOCK(DeviceGetMaxClockInfo, NVML_CLOCK_MEM, clock_max_memory);
    READ_UINT(DeviceGetMinorNumber, minor_number, "device minor number");

    if (lib->DeviceGetCudaComputeCapability) {
        int major, minor;
        ret = lib->DeviceGetCudaComputeCapability(dev, &major, &minor);
        if (ret == NVML_SUCCESS && major >= 0 && minor >= 0) {
            gpu->compute_major = gk_known((uint64_t)major);
            gpu->compute_minor = gk_known((uint64_t)minor);
        } else if (!note_failure(lib, gpu, ret, "compute capability", false)) {
            return;
        }
    }
}

static void copy_identity(gk_gpu *to, const gk_gpu *from)
{
    memcpy(to->name, from->name, sizeof to->name);
    memcpy(to->uuid, from->uuid, sizeof to->uuid);
    memcpy(to->pci_bus_id, from->pci_bus_id, sizeof to->pci_bus_id);
    to->minor_number = from->minor_number;
    to->clock_max_sm = from->clock_max_sm;
    to->clock_max_memory = from->clock_max_memory;
    to->compute_major = from->compute_major;
    to->compute_minor = from->compute_minor;
}

/* Everything that changes from one reading to the next. */
static void read_live(const gk_nvml *lib, nvmlDevice_t dev, gk_gpu *gpu)
{
    nvmlReturn_t ret = read_memory(lib, dev, &gpu->memory_total, &gpu->memory_used,
                                   &gpu->memory_free, &gpu->memory_reserved);
    if (!note_failure(lib, gpu, ret, "memory information", true))
        return;

    if (lib->DeviceGetUtilizationRates) {
        nvmlUtilization_t utilization;
        ret = lib->DeviceGetUtilizationRates(dev, &utilization);
        if (ret == NVML_SUCCESS) {
            gpu->utilization_gpu = gk_known(utilization.gpu);
            gpu->utilization_memory = gk_known(utilization.memory);
        } else if (!note_failure(lib, gpu, ret, "utilization", false)) {
            return;
        }
    }

    if (lib->DeviceGetTemperature) {
        unsigned int celsius;
        ret = lib->DeviceGetTemperature(dev, NVML_TEMPERATURE_GPU, &celsius);
        if (ret == NVML_SUCCESS)
            gpu->temperature = gk_known(celsius);
        else if (!note_failure(lib, gpu, ret, "temperature", false))
            return;
    }

    READ_UINT(DeviceGetFanSpeed, fan_speed, "fan speed");
    READ_CODEC(DeviceGetEncoderUtilization, utilization_encoder);
    READ_CODEC(DeviceGetDecoderUtilization, utilization_decoder);
    READ_UINT(DeviceGetPowerUsage, power_draw, "power draw");
    /* An admin can change the limit at any time (nvidia-smi -pl). */
    READ_UINT(DeviceGetEnforcedPowerLimit, power_limit, "power limit");
    if (lib->DeviceGetTotalEnergyConsumption) {
        unsigned long long millijoules;
        ret = lib->DeviceGetTotalEnergyConsumption(dev, &millijoules);
        if (ret == NVML_SUCCESS)
            gpu->energy = gk_known(millijoules);
        else if (!note_failure(lib, gpu, ret, "energy consumption", false))
            return;
    }
    READ_CLOCK(DeviceGetClockInfo, NVML_CLOCK_SM, clock_sm);
    READ_CLOCK(DeviceGetClockInfo, NVML_CLOCK_MEM, clock_memory);

    if (lib->DeviceGetPersistenceMode) {
        int mode;
        ret = lib->DeviceGetPersistenceMode(dev, &mode);
        if (ret == NVML_SUCCESS)
            gpu->persistence_mode = gk_known(mode != 0);
        else if (!note_failure(lib, gpu, ret, "persistence mode", false))
            return;
    }

    if (lib->DeviceGetMigMode) {
        unsigned int current, pending;
        ret = lib->DeviceGetMigMode(dev, &current, &pending);
        if (ret == NVML_SUCCESS)
            gpu->mig_mode = gk_known(current != 0);
        else if (!note_failure(lib, gpu, ret, "MIG mode", false))
            return;
    }
    /* MIG devices can be created and destroyed at any time: read each time. */
    if (gpu->mig_mode.known && gpu->mig_mode.value)
        read_mig_devices(lib, dev, gpu);
}

/* Whether a cache entry's handle and identity can be used as they are. */
static bool identity_current(const gk_nvml_identity *cached)
{
    return cached && cached->known && !cached->stale;
}

/* Reads one GPU: its identity from the cache entry when it holds a current
 * one, else from the driver (then kept in the entry, if the GPU answered). */
static void read_gpu(const gk_nvml *lib, nvmlDevice_t dev, gk_gpu *gpu, gk_nvml_identity *cached)
{
    bool current = identity_current(cached);
    if (current) {
        copy_identity(gpu, &cached->gpu);
    } else {
        read_identity(lib, dev, gpu);
        if (gpu->state != GK_GPU_OK)
            return;
    }
    read_live(lib, dev, gpu);
    if (cached && !current && gpu->state == GK_GPU_OK) {
        cached->known = true;
        cached->stale = false;
        cached->handle = dev;
        copy_identity(&cached->gpu, gpu);
    }
}

/* A GPU that stopped answering is asked for its handle and identity again
 * at the next reading, but is shown with the identity it last gave: a lost
 * GPU fails those questions too, and alerts on its UUID, the dashboard's
 * history and the watch mode know it by that identity. */
static void keep_identity(gk_gpu *gpu, gk_nvml_identity *cached)
{
    if (!cached->known)
        return;
    copy_identity(gpu, &cached->gpu);
    cached->stale = true;
}

/* The state and error of a GPU whose handle the driver refused. */
static void note_handle_failure(const gk_nvml *lib, gk_gpu *gpu, nvmlReturn_t ret)
{
    const char *text = gk_nvml_error_string(lib, ret);
    if (ret == NVML_ERROR_NO_PERMISSION) {
        gpu->state = GK_GPU_NO_PERMISSION;
        snprintf(gpu->error, sizeof gpu->error,
                 "no permission to open this GPU (NVML: %s); ask an admin for access "
                 "to /dev/nvidia%u",
                 text, gpu->index);
    } else if (ret == NVML_ERROR_GPU_IS_LOST) {
        note_failure(lib, gpu, ret, "device handle", true);
    } else {
        gpu->state = GK_GPU_ERROR;
        snprintf(gpu->error, sizeof gpu->error, "NVML error %d opening the GPU: %s", ret, text);
    }
}

static void read_driver(const gk_nvml *lib, gk_snapshot *snapshot)
{
    if (lib->SystemGetDriverVersion &&
        lib->SystemGetDriverVersion(snapshot->driver_version, sizeof snapshot->driver_version) !=
            NVML_SUCCESS)
        snapshot->driver_version[0] = '\0';
    if (lib->SystemGetNVMLVersion &&
        lib->SystemGetNVMLVersion(snapshot->nvml_version, sizeof snapshot->nvml_version) !=
            NVML_SUCCESS)
        snapshot->nvml_version[0] = '\0';
    end_string(snapshot->driver_version, sizeof snapshot->driver_version);
    end_string(snapshot->nvml_version, sizeof snapshot->nvml_version);
    int cuda;
    if (lib->SystemGetCudaDriverVersion && lib->SystemGetCudaDriverVersion(&cuda) == NVML_SUCCESS &&
        cuda > 0)
        snapshot->cuda_driver_version = gk_known((uint64_t)cuda);
}

gk_status gk_nvml_read_devices(const gk_nvml *lib, gk_nvml_cache *cache, gk_snapshot *snapshot)
{
    read_driver(lib, snapshot);

    unsigned int count = 0;
    nvmlReturn_t ret = lib->DeviceGetCount(&count);
    if (ret != NVML_SUCCESS) {
        gk_snapshot_set_absence(snapshot, GK_ABSENCE_DRIVER_ERROR,
                                "the NVIDIA driver could not count the GPUs (NVML error %d: %s)",
                                ret, gk_nvml_error_string(lib, ret));
        return GK_OK;
    }
    if (count == 0)
        return GK_OK;
    snapshot->gpus = calloc(count, sizeof *snapshot->gpus);
    if (!snapshot->gpus)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory listing %u GPUs", count);
    snapshot->gpu_count = count;
    /* A GPU added or removed renumbers them all: forget every identity. */
    if (cache && cache->count != count) {
        memset(cache->gpus, 0, sizeof cache->gpus);
        cache->count = count;
    }

    for (unsigned int i = 0; i < count; i++) {
        gk_gpu *gpu = &snapshot->gpus[i];
        gpu->index = i;
        gk_nvml_identity *cached = cache && i < GK_NVML_CACHE_GPUS ? &cache->gpus[i] : NULL;
        nvmlDevice_t dev;
        bool current = identity_current(cached);
        ret = current ? NVML_SUCCESS : lib->DeviceGetHandleByIndex(i, &dev);
        if (current)
            dev = cached->handle;
        if (ret == NVML_SUCCESS)
            read_gpu(lib, dev, gpu, cached);
        else
            note_handle_failure(lib, gpu, ret);
        if (cached && gpu->state != GK_GPU_OK)
            keep_identity(gpu, cached);
    }
    return GK_OK;
}

/* Fetches one process list (compute or graphics) of a device into a fresh
 * array of nvmlProcessInfo_t. The list can grow between the size query and
 * the read, so a few retries with headroom are made. */
static nvmlReturn_t fetch_processes(const gk_nvml *lib, nvml_processes_fn fn, nvmlDevice_t dev,
                                    nvmlProcessInfo_t **out, unsigned int *count)
{
    *out = NULL;
    *count = 0;
    if (!fn)
        return NVML_ERROR_FUNCTION_NOT_FOUND;
    size_t entry_size = lib->processes_version == 1 ? sizeof(nvmlProcessInfo_v1_t)
                                                    : sizeof(nvmlProcessInfo_t);
    unsigned int capacity = 0;
    nvmlReturn_t ret = fn(dev, &capacity, NULL);
    for (int attempt = 0; attempt < 4 && ret == NVML_ERROR_INSUFFICIENT_SIZE; attempt++) {
        capacity = capacity * 2 + 8;
        unsigned char *raw = calloc(capacity, entry_size);
        if (!raw)
            return NVML_ERROR_UNKNOWN;
        unsigned int n = capacity;
        ret = fn(dev, &n, raw);
        if (ret != NVML_SUCCESS) {
            free(raw);
            capacity = n;
            continue;
        }
        nvmlProcessInfo_t *entries = calloc(n ? n : 1, sizeof *entries);
        if (!entries) {
            free(raw);
            return NVML_ERROR_UNKNOWN;
        }
        for (unsigned int i = 0; i < n; i++) {
            if (lib->processes_version == 1) {
                nvmlProcessInfo_v1_t old;
                memcpy(&old, raw + i * entry_size, sizeof old);
                entries[i] = (nvmlProcessInfo_t){old.pid, old.usedGpuMemory, 0xFFFFFFFFu,
                                                 0xFFFFFFFFu};
            } else {
                memcpy(&entries[i], raw + i * entry_size, sizeof entries[i]);
            }
        }
        free(raw);
        *out = entries;
        *count = n;
        return NVML_SUCCESS;
    }
    return ret; /* SUCCESS here means an empty list */
}

/* Adds an entry to the GPU's process list, merging a pid listed as both a
 * compute and a graphics process. */
static void add_process(gk_gpu *gpu, const nvmlProcessInfo_t *entry, gk_process_type type)
{
    for (size_t i = 0; i < gpu->process_count; i++) {
        if (gpu->processes[i].pid == entry->pid) {
            gpu->processes[i].type |= type;
            return;
        }
    }
    gk_process *p = &gpu->processes[gpu->process_count++];
    memset(p, 0, sizeof *p);
    p->pid = entry->pid;
    p->type = type;
    if (entry->usedGpuMemory != NVML_VALUE_NOT_AVAILABLE_ULL)
        p->gpu_memory = gk_known(entry->usedGpuMemory);
    if (entry->gpuInstanceId != 0xFFFFFFFFu)
        p->gpu_instance = gk_known(entry->gpuInstanceId);
    if (entry->computeInstanceId != 0xFFFFFFFFu)
        p->compute_instance = gk_known(entry->computeInstanceId);
}

gk_status gk_nvml_read_processes(const gk_nvml *lib, const gk_nvml_cache *cache,
                                 gk_snapshot *snapshot)
{
    for (size_t g = 0; g < snapshot->gpu_count; g++) {
        gk_gpu *gpu = &snapshot->gpus[g];
        nvmlDevice_t dev;
        if (gpu->state != GK_GPU_OK)
            continue;
        if (cache && gpu->index < GK_NVML_CACHE_GPUS &&
            identity_current(&cache->gpus[gpu->index]))
            dev = cache->gpus[gpu->index].handle;
        else if (lib->DeviceGetHandleByIndex(gpu->index, &dev) != NVML_SUCCESS)
            continue;
        nvmlProcessInfo_t *compute, *graphics;
        unsigned int n_compute, n_graphics;
        nvmlReturn_t rc = fetch_processes(lib, lib->DeviceGetComputeRunningProcesses, dev,
                                          &compute, &n_compute);
        nvmlReturn_t rg = fetch_processes(lib, lib->DeviceGetGraphicsRunningProcesses, dev,
                                          &graphics, &n_graphics);
        if (n_compute + n_graphics > 0) {
            gpu->processes = calloc(n_compute + n_graphics, sizeof *gpu->processes);
            if (!gpu->processes) {
                free(compute);
                free(graphics);
                return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory listing GPU processes");
            }
        }
        for (unsigned int i = 0; i < n_compute; i++)
            add_process(gpu, &compute[i], GK_PROCESS_COMPUTE);
        for (unsigned int i = 0; i < n_graphics; i++)
            add_process(gpu, &graphics[i], GK_PROCESS_GRAPHICS);
        free(compute);
        free(graphics);
        for (size_t i = 0; i < gpu->process_count; i++)
            gk_process_describe(&gpu->processes[i]);
        gpu->processes_known = rc == NVML_SUCCESS || rg == NVML_SUCCESS;
        if (rc == NVML_ERROR_GPU_IS_LOST)
            note_failure(lib, gpu, rc, "process list", true);
    }
    return GK_OK;
}

static gk_status nvml_devices(void *opaque, gk_snapshot *snapshot)
{
    nvml_state *state = opaque;
    return gk_nvml_read_devices(&state->lib, &state->cache, snapshot);
}

static gk_status nvml_processes(void *opaque, gk_snapshot *snapshot)
{
    nvml_state *state = opaque;
    return gk_nvml_read_processes(&state->lib, &state->cache, snapshot);
}

const gk_probe_backend gk_probe_nvml_backend = {
    .name = "nvml",
    .source = GK_SOURCE_NVML,
    .open = nvml_open,
    .devices = nvml_devices,
    .processes = nvml_processes,
    .close = nvml_close,
};
