/* Choosing a discovery backend and taking snapshots with it. */
#include "probe/backend.h"

#include "core/error.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct gk_probe {
    const gk_probe_backend *backend; /* NULL when no driver was found */
    void *state;
    /* Why there is no backend, or a note on the fallback, copied into every
     * snapshot. */
    gk_absence absence;
    char diagnosis[512];
};

/* In order of preference: NVML answers in microseconds and knows every field;
 * nvidia-smi is a process per query. */
static const gk_probe_backend *const backends[] = {
    &gk_probe_nvml_backend,
    &gk_probe_smi_backend,
};

void gk_snapshot_set_absence(gk_snapshot *snapshot, gk_absence absence, const char *fmt, ...)
{
    snapshot->absence = absence;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(snapshot->diagnosis, sizeof snapshot->diagnosis, fmt, ap);
    va_end(ap);
}

/* "00000000:1A:00.0" already: what current drivers give. */
static bool is_canonical_bus_id(const char *bus_id)
{
    static const char pattern[] = "XXXXXXXX:XX:XX.X";
    for (size_t i = 0; i < sizeof pattern - 1; i++) {
        char c = bus_id[i];
        bool hex = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
        if (pattern[i] == 'X' ? !hex : c != pattern[i])
            return false;
    }
    return bus_id[sizeof pattern - 1] == '\0';
}

void gk_format_bus_id(char *dst, size_t size, const char *bus_id)
{
    /* Every snapshot formats every GPU's id: skip the parse when the
     * driver's text is the canonical form already. */
    if (is_canonical_bus_id(bus_id)) {
        snprintf(dst, size, "%s", bus_id);
        return;
    }
    unsigned domain, bus, device, function;
    char tail;
    if (sscanf(bus_id, "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &tail) == 4)
        snprintf(dst, size, "%08X:%02X:%02X.%X", domain, bus, device, function);
    else
        snprintf(dst, size, "%s", bus_id);
}

gk_status gk_probe_open(gk_probe **out)
{
    *out = NULL;
    gk_probe *probe = calloc(1, sizeof *probe);
    if (!probe)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory opening the GPU probe");
    /* Backends report through a scratch snapshot so they share one path. */
    gk_snapshot scratch;
    memset(&scratch, 0, sizeof scratch);
    char nvml_problem[sizeof scratch.diagnosis] = "";
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
        gk_status status = backends[i]->open(&probe->state, &scratch);
        if (status == GK_OK) {
            probe->backend = backends[i];
            break;
        }
        if (status != GK_ERR_NOT_FOUND) {
            probe->absence = scratch.absence;
            snprintf(probe->diagnosis, sizeof probe->diagnosis, "%s", scratch.diagnosis);
            *out = probe;
            return GK_OK;
        }
        if (backends[i] == &gk_probe_nvml_backend)
            snprintf(nvml_problem, sizeof nvml_problem, "%s", scratch.diagnosis);
    }
    if (!probe->backend) {
        probe->absence = GK_ABSENCE_NO_DRIVER;
        snprintf(probe->diagnosis, sizeof probe->diagnosis,
                 "no NVIDIA driver found: %.300s, and nvidia-smi is not on PATH. To use an NVIDIA "
                 "GPU, install the NVIDIA driver, or set GPUKIT_NVML_LIBRARY to the path of "
                 "libnvidia-ml.so.1.",
                 nvml_problem);
    } else if (probe->backend != &gk_probe_nvml_backend) {
        snprintf(probe->diagnosis, sizeof probe->diagnosis,
                 "NVML is not usable (%.300s); reading the GPUs through %s instead, which is slower "
                 "and gives fewer fields",
                 nvml_problem, probe->backend->name);
    }
    *out = probe;
    return GK_OK;
}

void gk_probe_close(gk_probe *probe)
{
    if (!probe)
        return;
    if (probe->backend)
        probe->backend->close(probe->state);
    free(probe);
}

gk_status gk_probe_read(gk_probe *probe, unsigned flags, gk_snapshot **out)
{
    *out = NULL;
    if (!probe)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "gk_probe_read: probe is NULL");
    gk_snapshot *snapshot = calloc(1, sizeof *snapshot);
    if (!snapshot)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory taking a GPU snapshot");
    clock_gettime(CLOCK_REALTIME, &snapshot->query_time);
    if (gethostname(snapshot->hostname, sizeof snapshot->hostname - 1) != 0)
        snapshot->hostname[0] = '\0';
    if (!(flags & GK_PROBE_NO_CPU))
        gk_cpu_read(&snapshot->cpu);
    snapshot->absence = probe->absence;
    snprintf(snapshot->diagnosis, sizeof snapshot->diagnosis, "%s", probe->diagnosis);

    if (probe->backend) {
        snapshot->source = probe->backend->source;
        gk_status status = probe->backend->devices(probe->state, snapshot);
        if (status == GK_OK && (flags & GK_PROBE_PROCESSES))
            status = probe->backend->processes(probe->state, snapshot);
        if (status != GK_OK) {
            gk_snapshot_destroy(snapshot);
            return status;
        }
        if (snapshot->gpu_count == 0 && snapshot->absence == GK_ABSENCE_NONE)
            gk_snapshot_set_absence(snapshot, GK_ABSENCE_NO_DEVICES,
                                    "the NVIDIA driver is running but reports no GPU. Check "
                                    "`lspci | grep -i nvidia`; in a container, start it with GPU "
                                    "access (--gpus all).");
    }
    *out = snapshot;
    return GK_OK;
}

void gk_snapshot_destroy(gk_snapshot *snapshot)
{
    if (!snapshot)
        return;
    for (size_t i = 0; i < snapshot->gpu_count; i++) {
        free(snapshot->gpus[i].processes);
        free(snapshot->gpus[i].mig_devices);
    }
    free(snapshot->gpus);
    free(snapshot);
}

size_t gk_snapshot_usable_count(const gk_snapshot *snapshot)
{
    size_t usable = 0;
    for (size_t i = 0; i < snapshot->gpu_count; i++)
        usable += snapshot->gpus[i].state == GK_GPU_OK;
    return usable;
}

const char *gk_probe_source_name(gk_probe_source source)
{
    switch (source) {
    case GK_SOURCE_NVML: return "nvml";
    case GK_SOURCE_NVIDIA_SMI: return "nvidia-smi";
    case GK_SOURCE_NONE: break;
    }
    return "none";
}

const char *gk_gpu_state_name(gk_gpu_state state)
{
    switch (state) {
    case GK_GPU_OK: return "ok";
    case GK_GPU_LOST: return "lost";
    case GK_GPU_NO_PERMISSION: return "no_permission";
    case GK_GPU_ERROR: return "error";
    }
    return "error";
}

const char *gk_cuda_version_string(gk_field version, char *buf, size_t size)
{
    if (!version.known)
        snprintf(buf, size, "%s", "");
    else
        snprintf(buf, size, "%" PRIu64 ".%" PRIu64, version.value / 1000,
                 version.value % 1000 / 10);
    return buf;
}
