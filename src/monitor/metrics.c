/* A reading as Prometheus metrics (gk_sample_metrics in gpukit/monitor.h).
 *
 * The GPU families carry DCGM-exporter's names, units (MiB, MHz, W, mJ) and
 * labels, so Grafana dashboards made for it work unchanged. dcgm-exporter
 * has spelt the host label both `Hostname` (3.x) and `hostname` (4.x):
 * both are given so dashboards of either era match. gpukit's own families
 * use base units (bytes, seconds) and the gpukit_ prefix.
 *
 * Text format 0.0.4 and OpenMetrics 1.0 differ here only in three ways:
 * OpenMetrics ends with "# EOF", names a counter family without its _total
 * suffix, and allows a counter only for samples ending in _total, so the
 * DCGM energy counter (whose name must not change) is typed `unknown` there. */
#define _GNU_SOURCE /* open_memstream */
#include <gpukit/monitor.h>

#include "core/error.h"
#include "core/strings.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB (1024.0 * 1024.0)

typedef struct writer {
    FILE *out;
    bool openmetrics;
    const gk_snapshot *snapshot;
    const gk_sample *sample;
} writer;

/* A label value: backslash, quote and newline escaped as both formats ask,
 * and any byte that is not valid UTF-8 (outside text) written as '?'. */
static void put_value(FILE *out, const char *value)
{
    for (const unsigned char *c = (const unsigned char *)value; *c;) {
        size_t length = gk_utf8_character(c);
        if (length == 0) {
            fputc('?', out);
            c++;
        } else if (*c == '\\' || *c == '"') {
            fputc('\\', out);
            fputc(*c++, out);
        } else if (*c == '\n') {
            fputs("\\n", out);
            c++;
        } else {
            fwrite(c, 1, length, out);
            c += length;
        }
    }
}

/* Starts a family: HELP and TYPE lines. */
static void family(writer *w, const char *name, const char *type, const char *help)
{
    const char *shown = type;
    char base[128];
    snprintf(base, sizeof base, "%s", name);
    if (w->openmetrics && strcmp(type, "counter") == 0) {
        size_t n = strlen(base);
        if (n > 6 && strcmp(base + n - 6, "_total") == 0)
            base[n - 6] = '\0';
        else
            shown = "unknown"; /* a counter whose name cannot end in _total */
    }
    fprintf(w->out, "# HELP %s %s\n# TYPE %s %s\n", base, help, base, shown);
}

/* The labels dcgm-exporter gives every sample of a GPU. */
static void gpu_labels(writer *w, const gk_gpu *gpu)
{
    FILE *out = w->out;
    fprintf(out, "gpu=\"%u\",UUID=\"", gpu->index);
    put_value(out, gpu->uuid);
    fputs("\",pci_bus_id=\"", out);
    put_value(out, gpu->pci_bus_id);
    /* The device node is nvidia<minor number> (the index when the driver
     * does not say). */
    fprintf(out, "\",device=\"nvidia%u\",modelName=\"",
            gpu->minor_number.known ? (unsigned)gpu->minor_number.value : gpu->index);
    put_value(out, gpu->name);
    fputs("\",Hostname=\"", out);
    put_value(out, w->snapshot->hostname);
    fputs("\",hostname=\"", out);
    put_value(out, w->snapshot->hostname);
    fputs("\",DCGM_FI_DRIVER_VERSION=\"", out);
    put_value(out, w->snapshot->driver_version);
    fputc('"', out);
    /* The Slurm jobs on the GPU (gpukit slurm prolog), as dcgm-exporter's
     * hpc_job label gives them. */
    bool first = true;
    for (size_t l = 0; w->sample && l < w->sample->lease_count; l++) {
        const gk_lease *lease = &w->sample->leases[l];
        for (size_t d = 0; lease->slurm && d < lease->device_count; d++) {
            if (lease->indices[d] != gpu->index)
                continue;
            fputs(first ? ",hpc_job=\"" : ",", out);
            put_value(out, lease->name + 6); /* "slurm-ID" */
            first = false;
        }
    }
    if (!first)
        fputc('"', out);
}

typedef struct gpu_metric {
    const char *name;
    const char *type;
    const char *help;
    size_t field;   /* offsetof(gk_gpu, ...) */
    double divisor; /* from gpukit's unit to DCGM's */
} gpu_metric;

#define FIELD(member) offsetof(gk_gpu, member)

static const gpu_metric gpu_metrics[] = {
    {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", FIELD(clock_sm), 1},
    {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", FIELD(clock_memory), 1},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", FIELD(temperature), 1},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", FIELD(power_draw), 1000},
    {"DCGM_FI_DEV_ENFORCED_POWER_LIMIT", "gauge", "Enforced power limit (in W).",
     FIELD(power_limit), 1000},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
     "Total energy consumption since the driver was last reloaded (in mJ).", FIELD(energy), 1},
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", FIELD(utilization_gpu), 1},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).",
     FIELD(utilization_memory), 1},
    {"DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).", FIELD(utilization_encoder),
     1},
    {"DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).", FIELD(utilization_decoder),
     1},
    {"DCGM_FI_DEV_FAN_SPEED", "gauge", "Fan speed (in %).", FIELD(fan_speed), 1},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", FIELD(memory_free), MIB},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", FIELD(memory_used), MIB},
    {"DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).",
     FIELD(memory_reserved), MIB},
    {"DCGM_FI_DEV_FB_TOTAL", "gauge", "Framebuffer memory total (in MiB).", FIELD(memory_total),
     MIB},
};

static void put_number(FILE *out, double value)
{
    /* %.17g round-trips; integers print as integers. */
    fprintf(out, " %.17g\n", value);
}

/* A MIG instance's profile ("3g.20gb") from its name ("NVIDIA A100-SXM4-40GB
 * MIG 3g.20gb"), as dcgm-exporter's GPU_I_PROFILE label gives it. */
static const char *mig_profile(const gk_mig_device *mig)
{
    const char *at = strstr(mig->name, "MIG ");
    return at ? at + 4 : mig->name;
}

/* A GPU's MIG instances in the memory families (NVML gives no other
 * per-instance field), each with GPU_I_PROFILE, GPU_I_ID and MIG_UUID,
 * right after the GPU's own sample: a family's samples stay together. */
static void write_mig_samples(writer *w, const gpu_metric *metric, const gk_gpu *gpu)
{
    int which = metric->field == FIELD(memory_used)    ? 0
                : metric->field == FIELD(memory_free)  ? 1
                : metric->field == FIELD(memory_total) ? 2
                                                       : -1;
    for (size_t i = 0; which >= 0 && i < gpu->mig_count; i++) {
        const gk_mig_device *mig = &gpu->mig_devices[i];
        if (!mig->memory_total.known || !mig->memory_used.known || !mig->gpu_instance.known)
            continue;
        uint64_t value = which == 0   ? mig->memory_used.value
                         : which == 1 ? mig->memory_total.value - mig->memory_used.value
                                      : mig->memory_total.value;
        fprintf(w->out, "%s{", metric->name);
        gpu_labels(w, gpu);
        fputs(",GPU_I_PROFILE=\"", w->out);
        put_value(w->out, mig_profile(mig));
        fprintf(w->out, "\",GPU_I_ID=\"%" PRIu64 "\",MIG_UUID=\"", mig->gpu_instance.value);
        put_value(w->out, mig->uuid);
        fputs("\"}", w->out);
        put_number(w->out, (double)value / MIB);
    }
}

/* The DCGM families: one sample per GPU that gave the value (and its MIG
 * instances in the memory families). */
static void write_gpu_metrics(writer *w)
{
    const gk_snapshot *snapshot = w->snapshot;
    for (size_t m = 0; m < sizeof gpu_metrics / sizeof gpu_metrics[0]; m++) {
        const gpu_metric *metric = &gpu_metrics[m];
        bool any = false;
        for (size_t g = 0; g < snapshot->gpu_count && !any; g++) {
            const gk_field *f = (const gk_field *)((const char *)&snapshot->gpus[g] + metric->field);
            any = snapshot->gpus[g].state == GK_GPU_OK && f->known;
        }
        if (!any)
            continue;
        family(w, metric->name, metric->type, metric->help);
        for (size_t g = 0; g < snapshot->gpu_count; g++) {
            const gk_gpu *gpu = &snapshot->gpus[g];
            const gk_field *f = (const gk_field *)((const char *)gpu + metric->field);
            if (gpu->state != GK_GPU_OK || !f->known)
                continue;
            fprintf(w->out, "%s{", metric->name);
            gpu_labels(w, gpu);
            fputc('}', w->out);
            put_number(w->out, (double)f->value / metric->divisor);
            write_mig_samples(w, metric, gpu);
        }
    }
}

/* Every GPU's state, so a lost GPU is visible (its DCGM samples vanish). */
static void write_gpu_states(writer *w)
{
    const gk_snapshot *snapshot = w->snapshot;
    if (snapshot->gpu_count == 0)
        return;
    family(w, "gpukit_gpu_up", "gauge",
           "1 when the GPU answers the driver normally, 0 when it is lost, not permitted or "
           "failing (see the state and error labels).");
    for (size_t g = 0; g < snapshot->gpu_count; g++) {
        const gk_gpu *gpu = &snapshot->gpus[g];
        fputs("gpukit_gpu_up{", w->out);
        gpu_labels(w, gpu);
        fprintf(w->out, ",state=\"%s\",error=\"", gk_gpu_state_name(gpu->state));
        put_value(w->out, gpu->error);
        fprintf(w->out, "\"} %d\n", gpu->state == GK_GPU_OK);
    }
}

static void write_processes(writer *w, const gk_sample *sample)
{
    bool any = false;
    for (size_t i = 0; i < sample->process_count && !any; i++)
        any = sample->processes[i].process->gpu_memory.known;
    if (!any)
        return;
    family(w, "gpukit_process_gpu_memory_bytes", "gauge",
           "GPU memory used by a process, with its user, command, gpukit lease and Jupyter "
           "kernel.");
    for (size_t i = 0; i < sample->process_count; i++) {
        const gk_sample_process *entry = &sample->processes[i];
        const gk_process *process = entry->process;
        if (!process->gpu_memory.known)
            continue;
        const gk_gpu *gpu = &w->snapshot->gpus[entry->gpu];
        FILE *out = w->out;
        fprintf(out, "gpukit_process_gpu_memory_bytes{gpu=\"%u\",UUID=\"", gpu->index);
        put_value(out, gpu->uuid);
        fprintf(out, "\",pid=\"%" PRIu32 "\",user=\"", process->pid);
        put_value(out, process->user);
        char command[1100];
        fputs("\",command=\"", out);
        put_value(out, gk_process_command_line(process, command, sizeof command));
        fputs("\",lease=\"", out);
        if (entry->lease >= 0)
            put_value(out, sample->leases[entry->lease].name);
        fputs("\",kernel=\"", out);
        put_value(out, entry->kernel[0] ? entry->kernel : entry->kernel_id);
        fputs("\",notebook=\"", out);
        put_value(out, entry->notebook);
        fprintf(out, "\"} %" PRIu64 "\n", process->gpu_memory.value);
    }
}

static double epoch_seconds(const struct timespec *when)
{
    return (double)when->tv_sec + (double)when->tv_nsec / 1e9;
}

static void lease_labels(FILE *out, const gk_lease *lease)
{
    fputs("lease=\"", out);
    put_value(out, lease->name);
    fputs("\",user=\"", out);
    put_value(out, lease->user);
    fprintf(out, "\",pid=\"%" PRIu32 "\",command=\"", lease->pid);
    put_value(out, lease->command);
    fputc('"', out);
}

static void write_leases(writer *w, const gk_sample *sample)
{
    FILE *out = w->out;
    size_t holding = 0, waiting = 0;
    for (size_t i = 0; i < sample->lease_count; i++)
        sample->leases[i].waiting ? waiting++ : holding++;
    /* unreadable leases are not none: no sample then, as for any value
     * not known (gpukit_monitor_leases_readable says why) */
    bool readable = sample->lease_problem[0] == '\0';
    family(w, "gpukit_leases", "gauge", "GPU leases held now (gpukit run, pick, kernel).");
    if (readable)
        fprintf(out, "gpukit_leases %zu\n", holding);
    family(w, "gpukit_waiting_jobs", "gauge", "Jobs waiting in line for GPUs (gpukit run --wait).");
    if (readable)
        fprintf(out, "gpukit_waiting_jobs %zu\n", waiting);
    if (holding) {
        family(w, "gpukit_lease_start_time_seconds", "gauge",
               "When a lease on a GPU began, as a Unix time; one sample per leased device.");
        for (size_t i = 0; i < sample->lease_count; i++) {
            const gk_lease *lease = &sample->leases[i];
            for (size_t d = 0; d < lease->device_count && !lease->waiting; d++) {
                fputs("gpukit_lease_start_time_seconds{", out);
                lease_labels(out, lease);
                fprintf(out, ",gpu=\"%u\",UUID=\"", lease->indices[d]);
                put_value(out, lease->uuids[d]);
                fprintf(out, "\",mode=\"%s\"}", lease->share ? "shared" : "exclusive");
                put_number(out, epoch_seconds(&lease->since));
            }
        }
    }
    if (waiting) {
        /* as of the reading, so that every scrape of one reading agrees */
        struct timespec now = w->snapshot->query_time;
        family(w, "gpukit_waiting_job_start_time_seconds", "gauge",
               "When a job joined the line for GPUs, as a Unix time.");
        size_t position = 0;
        for (size_t i = 0; i < sample->lease_count; i++) {
            const gk_lease *lease = &sample->leases[i];
            if (!lease->waiting)
                continue;
            fputs("gpukit_waiting_job_start_time_seconds{", out);
            lease_labels(out, lease);
            fprintf(out, ",position=\"%zu\",request=\"", ++position);
            put_value(out, lease->request);
            fputs("\"}", out);
            put_number(out, epoch_seconds(&lease->since));
        }
        family(w, "gpukit_waiting_job_wait_seconds", "gauge",
               "How long a job has waited in line for GPUs.");
        position = 0;
        for (size_t i = 0; i < sample->lease_count; i++) {
            const gk_lease *lease = &sample->leases[i];
            if (!lease->waiting)
                continue;
            fputs("gpukit_waiting_job_wait_seconds{", out);
            lease_labels(out, lease);
            fprintf(out, ",position=\"%zu\"}", ++position);
            double waited = epoch_seconds(&now) - epoch_seconds(&lease->since);
            put_number(out, waited > 0 ? waited : 0);
        }
    }
}

static void write_monitor(writer *w, const gk_sample *sample)
{
    FILE *out = w->out;
    family(w, "gpukit_monitor_readings_total", "counter", "Readings of the GPUs taken.");
    fprintf(out, "gpukit_monitor_readings_total %" PRIu64 "\n", sample->number);
    family(w, "gpukit_monitor_failed_readings_total", "counter",
           "Readings of the GPUs that failed (the last good one is served).");
    fprintf(out, "gpukit_monitor_failed_readings_total %" PRIu64 "\n", sample->failed_readings);
    family(w, "gpukit_monitor_read_duration_seconds", "gauge",
           "How long the last reading of the GPUs, leases and processes took.");
    fputs("gpukit_monitor_read_duration_seconds", out);
    put_number(out, sample->read_seconds);
    family(w, "gpukit_monitor_reading_time_seconds", "gauge",
           "When the served reading was taken, as a Unix time.");
    fputs("gpukit_monitor_reading_time_seconds", out);
    put_number(out, epoch_seconds(&w->snapshot->query_time));
    family(w, "gpukit_monitor_leases_readable", "gauge",
           "1 when the lease directory could be read, else 0.");
    fprintf(out, "gpukit_monitor_leases_readable %d\n", sample->lease_problem[0] == '\0');
    family(w, "gpukit_gpus", "gauge", "NVIDIA GPUs the driver reports (0 without a driver).");
    fprintf(out, "gpukit_gpus %zu\n", w->snapshot->gpu_count);
}

gk_status gk_sample_metrics(const gk_sample *sample, bool openmetrics, char **text, size_t *length)
{
    *text = NULL;
    *length = 0;
    char *buffer = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buffer, &size);
    if (!out)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory writing the metrics");
    writer w = {out, openmetrics, sample->snapshot, sample};
    write_gpu_metrics(&w);
    write_gpu_states(&w);
    write_processes(&w, sample);
    write_leases(&w, sample);
    write_monitor(&w, sample);
    if (openmetrics)
        fputs("# EOF\n", out);
    bool failed = ferror(out) != 0;
    if (fclose(out) != 0 || failed) {
        free(buffer);
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory writing the metrics");
    }
    *text = buffer;
    *length = size;
    return GK_OK;
}
