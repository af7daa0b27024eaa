/* The JSON forms of snapshots and of `gpukit info` (probe/json.h). The
 * snapshot's is a superset of gpustat's --json schema (same key names and
 * units: GPU memory in MiB, power in whole watts, a process's host memory in
 * bytes), so tools written for gpustat read it unchanged; gpukit's extra
 * fields sit beside them. Values the driver could not give are null. */
#define _GNU_SOURCE /* strdup, localtime_r */
#include "probe/json.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB (1024ull * 1024ull)

static json_t *field_json(gk_field field, uint64_t divisor)
{
    return field.known ? json_integer((json_int_t)(field.value / divisor)) : json_null();
}

static json_t *bool_json(gk_field field)
{
    return field.known ? json_boolean(field.value != 0) : json_null();
}

json_t *gk_json_string(const char *text)
{
    json_t *value = json_string(text);
    if (value)
        return value;
    char *copy = strdup(text);
    if (!copy)
        return NULL;
    for (char *c = copy; *c; c++)
        if ((unsigned char)*c >= 0x80)
            *c = '?';
    value = json_string(copy);
    free(copy);
    return value;
}

static json_t *text_json(const char *text)
{
    return text[0] ? gk_json_string(text) : json_null();
}

static json_t *process_json(const gk_process *p)
{
    json_t *args = json_array();
    for (size_t at = 0; at < p->cmdline_len; at += strlen(p->cmdline + at) + 1)
        json_array_append_new(args, gk_json_string(p->cmdline + at));
    static const char *const types[] = {"?", "C", "G", "C+G"};
    json_t *cpu_percent = p->cpu_percent.known ? json_real((double)p->cpu_percent.value / 10)
                                               : json_null();
    return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o}",
                     "pid", (json_int_t)p->pid,
                     "username", text_json(p->user),
                     "command", text_json(p->command),
                     "full_command", args,
                     "gpu_memory_usage", field_json(p->gpu_memory, MIB),
                     "cpu_percent", cpu_percent,
                     "cpu_memory_usage", field_json(p->host_memory, 1),
                     "type", types[p->type & 3],
                     "gpu_instance_id", field_json(p->gpu_instance, 1),
                     "compute_instance_id", field_json(p->compute_instance, 1));
}

static json_t *mig_json(const gk_mig_device *m)
{
    return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o}",
                     "index", (json_int_t)m->index,
                     "uuid", text_json(m->uuid),
                     "name", text_json(m->name),
                     "gpu_instance_id", field_json(m->gpu_instance, 1),
                     "compute_instance_id", field_json(m->compute_instance, 1),
                     "memory.used", field_json(m->memory_used, MIB),
                     "memory.total", field_json(m->memory_total, MIB));
}

static json_t *gpu_json(const gk_gpu *gpu, int cuda_index, bool processes)
{
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer(gpu->index));
    json_object_set_new(o, "uuid", text_json(gpu->uuid));
    json_object_set_new(o, "name", text_json(gpu->name));
    json_object_set_new(o, "temperature.gpu", field_json(gpu->temperature, 1));
    json_object_set_new(o, "fan.speed", field_json(gpu->fan_speed, 1));
    json_object_set_new(o, "utilization.gpu", field_json(gpu->utilization_gpu, 1));
    json_object_set_new(o, "utilization.enc", field_json(gpu->utilization_encoder, 1));
    json_object_set_new(o, "utilization.dec", field_json(gpu->utilization_decoder, 1));
    json_object_set_new(o, "power.draw", field_json(gpu->power_draw, 1000));
    json_object_set_new(o, "enforced.power.limit", field_json(gpu->power_limit, 1000));
    json_object_set_new(o, "memory.used", field_json(gpu->memory_used, MIB));
    json_object_set_new(o, "memory.total", field_json(gpu->memory_total, MIB));
    /* gpukit's additions */
    json_object_set_new(o, "state", json_string(gk_gpu_state_name(gpu->state)));
    json_object_set_new(o, "error", text_json(gpu->error));
    json_object_set_new(o, "pci.bus_id", text_json(gpu->pci_bus_id));
    json_object_set_new(o, "memory.free", field_json(gpu->memory_free, MIB));
    json_object_set_new(o, "memory.reserved", field_json(gpu->memory_reserved, MIB));
    json_object_set_new(o, "utilization.memory", field_json(gpu->utilization_memory, 1));
    json_object_set_new(o, "power.draw.mw", field_json(gpu->power_draw, 1));
    json_object_set_new(o, "energy.total.mj", field_json(gpu->energy, 1));
    json_object_set_new(o, "clocks.sm", field_json(gpu->clock_sm, 1));
    json_object_set_new(o, "clocks.mem", field_json(gpu->clock_memory, 1));
    json_object_set_new(o, "clocks.max.sm", field_json(gpu->clock_max_sm, 1));
    json_object_set_new(o, "clocks.max.mem", field_json(gpu->clock_max_memory, 1));
    if (gpu->compute_major.known)
        json_object_set_new(o, "compute_capability",
                            json_sprintf("%u.%u", (unsigned)gpu->compute_major.value,
                                         (unsigned)gpu->compute_minor.value));
    else
        json_object_set_new(o, "compute_capability", json_null());
    json_object_set_new(o, "persistence_mode", bool_json(gpu->persistence_mode));
    json_object_set_new(o, "mig.mode", bool_json(gpu->mig_mode));
    json_t *migs = json_array();
    for (size_t i = 0; i < gpu->mig_count; i++)
        json_array_append_new(migs, mig_json(&gpu->mig_devices[i]));
    json_object_set_new(o, "mig_devices", migs);
    json_object_set_new(o, "cuda_index", cuda_index >= 0 ? json_integer(cuda_index) : json_null());
    if (processes) {
        json_t *list = gpu->processes_known ? json_array() : json_null();
        for (size_t i = 0; i < gpu->process_count; i++)
            json_array_append_new(list, process_json(&gpu->processes[i]));
        json_object_set_new(o, "processes", list);
    }
    return o;
}

static json_t *cpu_json(const gk_cpu *cpu)
{
    return json_pack("{s:o, s:I, s:I, s:o, s:o}",
                     "model", text_json(cpu->model),
                     "logical_cores", (json_int_t)cpu->logical_cores,
                     "usable_cores", (json_int_t)cpu->usable_cores,
                     "memory.total", field_json(cpu->memory_total, MIB),
                     "memory.available", field_json(cpu->memory_available, MIB));
}

/* Local time without a zone, with microseconds, as gpustat writes it
 * (Python's datetime.now().isoformat()). */
static json_t *query_time_json(struct timespec when)
{
    struct tm local;
    localtime_r(&when.tv_sec, &local);
    char text[64];
    size_t n = strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local);
    snprintf(text + n, sizeof text - n, ".%06ld", when.tv_nsec / 1000);
    return json_string(text);
}

json_t *gk_json_snapshot(const gk_snapshot *snapshot, const gk_cuda_view *view, bool processes)
{
    char cuda[32];
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    json_t *o = json_object();
    json_object_set_new(o, "hostname", gk_json_string(snapshot->hostname));
    json_object_set_new(o, "driver_version", text_json(snapshot->driver_version));
    json_object_set_new(o, "query_time", query_time_json(snapshot->query_time));
    json_t *gpus = json_array();
    for (size_t i = 0; i < snapshot->gpu_count; i++)
        json_array_append_new(gpus, gpu_json(&snapshot->gpus[i], gk_cuda_view_index(view, i),
                                             processes));
    json_object_set_new(o, "gpus", gpus);
    json_object_set_new(o, "cuda_driver_version",
                        text_json(gk_cuda_version_string(snapshot->cuda_driver_version, cuda,
                                                         sizeof cuda)));
    json_object_set_new(o, "nvml_version", text_json(snapshot->nvml_version));
    json_object_set_new(o, "source", json_string(gk_probe_source_name(snapshot->source)));
    json_object_set_new(o, "diagnosis", text_json(snapshot->diagnosis));
    json_object_set_new(o, "cuda_visible_devices", visible ? gk_json_string(visible) : json_null());
    json_object_set_new(o, "cpu", cpu_json(&snapshot->cpu));
    return o;
}

/* --- gpukit info --- */

static json_t *optimus_json(const gk_info *info)
{
    const gk_optimus *optimus = &info->optimus;
    if (!info->show_optimus)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string(gk_offload_kind_name(optimus->kind)));
    json_object_set_new(o, "hybrid", json_boolean(optimus->hybrid));
    json_object_set_new(o, "igpu_vendor", text_json(optimus->igpu_vendor));
    json_object_set_new(o, "pci_bus_id", text_json(optimus->pci_bus_id));
    json_object_set_new(o, "driver", text_json(optimus->driver));
    json_object_set_new(o, "power", json_string(gk_power_state_name(optimus->power)));
    json_object_set_new(o, "runtime_pm", json_boolean(optimus->runtime_pm));
    json_object_set_new(o, "runtime_d3", text_json(optimus->runtime_d3));
    json_object_set_new(o, "video_memory", text_json(optimus->video_memory));
    json_object_set_new(o, "detail", text_json(optimus->detail));
    json_object_set_new(o, "bumblebee_socket", text_json(optimus->bumblebee_socket));
    json_object_set_new(o, "offload_command", optimus->kind != GK_OFFLOAD_NONE
                                                   ? json_string(GK_OFFLOAD_COMMAND)
                                                   : json_null());
    return o;
}

/* The GPUs the driver lists that cannot be used (lost, inaccessible), so
 * that "gpu_count": 2 says why it is not "gpu_total": 4. */
static json_t *faulty_gpus_json(const gk_snapshot *snapshot)
{
    json_t *faulty = json_array();
    for (size_t i = 0; i < snapshot->gpu_count; i++) {
        const gk_gpu *gpu = &snapshot->gpus[i];
        if (gpu->state == GK_GPU_OK)
            continue;
        json_array_append_new(faulty, json_pack("{s:I, s:s, s:o}", "index",
                                                (json_int_t)gpu->index, "state",
                                                gk_gpu_state_name(gpu->state), "error",
                                                gk_json_string(gpu->error)));
    }
    return faulty;
}

static json_t *awake_json(const gk_info *info)
{
    const gk_snapshot *snapshot = info->snapshot;
    const gk_cuda_view *view = &info->view;
    char cuda[32];
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    json_t *devices = json_array();
    for (size_t k = 0; k < view->count; k++) {
        const gk_cuda_device *d = &view->devices[k];
        json_t *entry = json_pack("{s:I, s:I, s:o, s:o, s:o}",
                                  "cuda_index", (json_int_t)k,
                                  "index", (json_int_t)snapshot->gpus[d->gpu].index,
                                  "uuid", gk_json_string(gk_cuda_device_uuid(snapshot, d)),
                                  "name", gk_json_string(gk_cuda_device_name(snapshot, d)),
                                  "pci.bus_id", gk_json_string(snapshot->gpus[d->gpu].pci_bus_id));
        json_object_set_new(entry, "mig_index", d->mig >= 0 ? json_integer(d->mig) : json_null());
        json_array_append_new(devices, entry);
    }
    json_t *o = json_object();
    json_object_set_new(o, "gpu_usable", json_boolean(view->count > 0));
    json_object_set_new(o, "gpu_count", json_integer((json_int_t)gk_snapshot_usable_count(snapshot)));
    json_object_set_new(o, "gpu_total", json_integer((json_int_t)snapshot->gpu_count));
    json_object_set_new(o, "faulty_gpus", faulty_gpus_json(snapshot));
    json_object_set_new(o, "cuda_device_count", json_integer((json_int_t)view->count));
    json_object_set_new(o, "device", view->count > 0 ? json_string("cuda:0") : json_string("cpu"));
    json_object_set_new(o, "driver_version", text_json(snapshot->driver_version));
    gk_cuda_version_string(snapshot->cuda_driver_version, cuda, sizeof cuda);
    json_object_set_new(o, "cuda_driver_version", cuda[0] ? json_string(cuda) : json_null());
    json_object_set_new(o, "nvml_version", text_json(snapshot->nvml_version));
    json_object_set_new(o, "source", json_string(gk_probe_source_name(snapshot->source)));
    json_object_set_new(o, "cuda_visible_devices", visible ? gk_json_string(visible) : json_null());
    json_object_set_new(o, "cuda_device_order",
                        json_string(view->pci_bus_order ? "PCI_BUS_ID" : "FASTEST_FIRST"));
    json_object_set_new(o, "order_guessed", json_boolean(view->order_guessed));
    json_object_set_new(o, "cuda_devices", devices);
    json_object_set_new(o, "note", text_json(view->note));
    json_object_set_new(o, "diagnosis", text_json(snapshot->diagnosis));
    json_object_set_new(o, "cpu", cpu_json(&snapshot->cpu));
    json_object_set_new(o, "optimus", optimus_json(info));
    return o;
}

/* A sleeping discrete GPU, seen through sysfs: no name, UUID or driver. */
static json_t *asleep_json(const gk_info *info)
{
    const gk_snapshot *snapshot = info->snapshot;
    const gk_cuda_view *view = &info->view;
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    const gk_gpu *gpu = &snapshot->gpus[0];
    json_t *devices = json_array();
    if (view->count > 0)
        json_array_append_new(devices, json_pack("{s:I, s:I, s:n, s:n, s:o, s:n}",
                                                 "cuda_index", (json_int_t)0,
                                                 "index", (json_int_t)gpu->index, "uuid",
                                                 "name", "pci.bus_id",
                                                 gk_json_string(gpu->pci_bus_id), "mig_index"));
    char note[512];
    snprintf(note, sizeof note, "the NVIDIA GPU %s%s%s", info->asleep_why,
             view->note[0] ? "; " : "", view->note);
    json_t *o = json_object();
    json_object_set_new(o, "gpu_usable", json_boolean(view->count > 0));
    json_object_set_new(o, "gpu_count", json_integer((json_int_t)snapshot->gpu_count));
    json_object_set_new(o, "gpu_total", json_integer((json_int_t)snapshot->gpu_count));
    json_object_set_new(o, "faulty_gpus", json_array());
    json_object_set_new(o, "cuda_device_count", json_integer((json_int_t)view->count));
    json_object_set_new(o, "device", json_string(view->count > 0 ? "cuda:0" : "cpu"));
    json_object_set_new(o, "driver_version", json_null());
    json_object_set_new(o, "cuda_driver_version", json_null());
    json_object_set_new(o, "nvml_version", json_null());
    json_object_set_new(o, "source", json_string("sysfs"));
    json_object_set_new(o, "cuda_visible_devices", visible ? gk_json_string(visible) : json_null());
    json_object_set_new(o, "cuda_device_order",
                        json_string(view->pci_bus_order ? "PCI_BUS_ID" : "FASTEST_FIRST"));
    json_object_set_new(o, "order_guessed", json_false());
    json_object_set_new(o, "cuda_devices", devices);
    json_object_set_new(o, "note", gk_json_string(note));
    json_object_set_new(o, "diagnosis", json_null());
    json_object_set_new(o, "cpu", cpu_json(&snapshot->cpu));
    json_object_set_new(o, "optimus", optimus_json(info));
    return o;
}

json_t *gk_json_info(const gk_info *info)
{
    return info->asleep ? asleep_json(info) : awake_json(info);
}

gk_status gk_info_json(const gk_info *info, char **json)
{
    *json = NULL;
    if (!info || !info->snapshot)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "gk_info_json: no info (call gk_info_read first)");
    json_t *value = gk_json_info(info);
    if (value)
        *json = json_dumps(value, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    json_decref(value);
    return *json ? GK_OK : gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory writing the info as JSON");
}
