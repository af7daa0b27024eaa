/* Discovery through the nvidia-smi program: the fallback when NVML cannot be
 * loaded by gpukit but nvidia-smi is installed (e.g. a driver kept outside the
 * library path). Its CSV output is parsed defensively: "[N/A]", "[Not
 * Supported]" and lines that are not data rows are tolerated. */
#include "probe/backend.h"

#include "core/error.h"
#include "core/strings.h"
#include "core/subprocess.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How long nvidia-smi may take: GPUKIT_SMI_TIMEOUT seconds, default 15. */
static int smi_timeout_ms(void)
{
    const char *text = getenv("GPUKIT_SMI_TIMEOUT");
    char *end;
    double seconds = text ? strtod(text, &end) : 0;
    if (!text || end == text || *end != '\0' || seconds <= 0 || seconds > 3600)
        return 15000;
    return (int)(seconds * 1000);
}

typedef enum column {
    COL_INDEX, COL_NAME, COL_UUID, COL_PCI, COL_MEM_TOTAL, COL_MEM_USED, COL_MEM_FREE,
    COL_UTIL_GPU, COL_UTIL_MEM, COL_TEMP, COL_FAN, COL_POWER, COL_POWER_LIMIT, COL_CLOCK_SM,
    COL_CLOCK_MEM, COL_DRIVER,
    /* Newer fields; old drivers reject the whole query if asked for them. */
    COL_CLOCK_MAX_SM, COL_CLOCK_MAX_MEM, COL_PERSISTENCE, COL_COMPUTE_CAP, COL_MIG,
    COLUMN_COUNT
} column;
enum { BASIC_COLUMNS = COL_CLOCK_MAX_SM };

static const char *const column_names[COLUMN_COUNT] = {
    "index", "name", "uuid", "pci.bus_id", "memory.total", "memory.used", "memory.free",
    "utilization.gpu", "utilization.memory", "temperature.gpu", "fan.speed", "power.draw",
    "enforced.power.limit", "clocks.sm", "clocks.mem", "driver_version", "clocks.max.sm",
    "clocks.max.mem", "persistence_mode", "compute_cap", "mig.mode.current",
};

static bool program_on_path(const char *name)
{
    const char *path = getenv("PATH");
    if (!path)
        return false;
    while (*path) {
        size_t length = strcspn(path, ":");
        char candidate[4096];
        snprintf(candidate, sizeof candidate, "%.*s/%s", (int)length, length ? path : ".", name);
        if (access(candidate, X_OK) == 0)
            return true;
        path += length;
        if (*path == ':')
            path++;
    }
    return false;
}

static gk_status smi_open(void **state, gk_snapshot *snapshot)
{
    (void)snapshot;
    if (!program_on_path("nvidia-smi"))
        return GK_ERR_NOT_FOUND;
    *state = NULL; /* stateless: every read runs the program */
    return GK_OK;
}

static void smi_close(void *state)
{
    (void)state;
}

/* nvidia-smi writes "[N/A]", "[Not Supported]", "[Unknown Error]" or "N/A"
 * where a value is unavailable; anything that is not wholly a number is
 * treated as unavailable rather than guessed at. */
static gk_field parse_number(const char *text, double scale)
{
    gk_field field = {0, false};
    if (!*text || *text == '[' || *text == '-')
        return field;
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    double scaled = value * scale + 0.5;
    /* strtod also reads "nan", "inf" and 1e300, which are no readings and
     * must not reach the conversion (undefined past 2^64). */
    if (end == text || *end != '\0' || errno != 0 || !(value >= 0) ||
        !(scaled < 18446744073709551616.0))
        return field;
    return gk_known((uint64_t)scaled);
}

static gk_field parse_enabled(const char *text)
{
    gk_field field = {0, false};
    if (strcmp(text, "Enabled") == 0)
        return gk_known(1);
    if (strcmp(text, "Disabled") == 0)
        return gk_known(0);
    return field;
}

static void copy_text(char *dst, size_t size, const char *text)
{
    if (*text != '[' && strcmp(text, "N/A") != 0)
        snprintf(dst, size, "%s", text);
}

static void fill_gpu(gk_gpu *gpu, char *fields[], size_t columns)
{
    const double mib = 1024.0 * 1024.0;
    copy_text(gpu->name, sizeof gpu->name, fields[COL_NAME]);
    copy_text(gpu->uuid, sizeof gpu->uuid, fields[COL_UUID]);
    gk_format_bus_id(gpu->pci_bus_id, sizeof gpu->pci_bus_id, fields[COL_PCI]);
    gpu->memory_total = parse_number(fields[COL_MEM_TOTAL], mib);
    gpu->memory_used = parse_number(fields[COL_MEM_USED], mib);
    gpu->memory_free = parse_number(fields[COL_MEM_FREE], mib);
    gpu->utilization_gpu = parse_number(fields[COL_UTIL_GPU], 1);
    gpu->utilization_memory = parse_number(fields[COL_UTIL_MEM], 1);
    gpu->temperature = parse_number(fields[COL_TEMP], 1);
    gpu->fan_speed = parse_number(fields[COL_FAN], 1);
    gpu->power_draw = parse_number(fields[COL_POWER], 1000);
    gpu->power_limit = parse_number(fields[COL_POWER_LIMIT], 1000);
    gpu->clock_sm = parse_number(fields[COL_CLOCK_SM], 1);
    gpu->clock_memory = parse_number(fields[COL_CLOCK_MEM], 1);
    if (columns < COLUMN_COUNT)
        return;
    gpu->clock_max_sm = parse_number(fields[COL_CLOCK_MAX_SM], 1);
    gpu->clock_max_memory = parse_number(fields[COL_CLOCK_MAX_MEM], 1);
    gpu->persistence_mode = parse_enabled(fields[COL_PERSISTENCE]);
    gpu->mig_mode = parse_enabled(fields[COL_MIG]);
    unsigned major, minor;
    char tail;
    if (sscanf(fields[COL_COMPUTE_CAP], "%u.%u%c", &major, &minor, &tail) == 2) {
        gpu->compute_major = gk_known(major);
        gpu->compute_minor = gk_known(minor);
    }
}

/* Splits a ", "-separated row in place; returns the number of fields. */
static size_t split_row(char *line, char *fields[], size_t max)
{
    size_t n = 0;
    char *cursor = line;
    while (n < max) {
        char *comma = strchr(cursor, ',');
        if (comma)
            *comma = '\0';
        fields[n++] = gk_trim(cursor);
        if (!comma)
            break;
        cursor = comma + 1;
    }
    return strchr(cursor, ',') ? max + 1 : n; /* too many fields: not a data row */
}

static bool parse_unsigned(const char *text, unsigned long max, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long value = strtoul(text, &end, 10);
    if (!isdigit((unsigned char)*text) || *end != '\0' || errno != 0 || value > max)
        return false;
    *out = (unsigned)value;
    return true;
}

static void diagnose_failure(gk_snapshot *snapshot, const char *output, int exit_status)
{
    char first_line[200];
    snprintf(first_line, sizeof first_line, "%s", output);
    first_line[strcspn(first_line, "\n")] = '\0';
    if (strstr(output, "No devices were found"))
        gk_snapshot_set_absence(snapshot, GK_ABSENCE_NO_DEVICES,
                                "nvidia-smi found no NVIDIA GPU");
    else if (strstr(output, "couldn't communicate with the NVIDIA driver"))
        gk_snapshot_set_absence(snapshot, GK_ABSENCE_DRIVER_NOT_LOADED,
                                "nvidia-smi cannot reach the NVIDIA kernel driver (\"%s\"). Load "
                                "it with `sudo modprobe nvidia` or reboot after installing the "
                                "driver.",
                                first_line);
    else if (strstr(output, "Insufficient Permissions") || strstr(output, "No permission"))
        gk_snapshot_set_absence(snapshot, GK_ABSENCE_NO_PERMISSION,
                                "nvidia-smi was refused access to the GPUs (\"%s\"). Ask an admin "
                                "for access to /dev/nvidia*.",
                                first_line);
    else
        gk_snapshot_set_absence(snapshot, GK_ABSENCE_DRIVER_ERROR,
                                "nvidia-smi failed with exit status %d: \"%s\"", exit_status,
                                first_line);
}

/* Runs the GPU query with the first `columns` fields. */
static gk_status query_gpus(size_t columns, char **output, int *exit_status)
{
    char query[1024] = "--query-gpu=";
    for (size_t i = 0; i < columns; i++) {
        strcat(query, column_names[i]);
        if (i + 1 < columns)
            strcat(query, ",");
    }
    char *argv[] = {"nvidia-smi", query, "--format=csv,noheader,nounits", NULL};
    return gk_run_capture(argv, smi_timeout_ms(), output, exit_status);
}

gk_status gk_smi_parse_gpus(char *output, bool basic_columns, int exit_status,
                           gk_snapshot *snapshot)
{
    size_t columns = basic_columns ? BASIC_COLUMNS : COLUMN_COUNT;
    size_t lines = 1;
    for (const char *c = output; *c; c++)
        lines += *c == '\n';
    snapshot->gpus = calloc(lines, sizeof *snapshot->gpus);
    if (!snapshot->gpus)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory reading nvidia-smi output");
    char *saveptr = NULL;
    for (char *line = strtok_r(output, "\n", &saveptr); line;
         line = strtok_r(NULL, "\n", &saveptr)) {
        gk_gpu *gpu = &snapshot->gpus[snapshot->gpu_count];
        /* "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost..." */
        const char *lost = strstr(line, "Unable to determine the device handle for GPU");
        if (lost) {
            gpu->index = (unsigned)snapshot->gpu_count++;
            gpu->state = strstr(line, "lost") ? GK_GPU_LOST : GK_GPU_ERROR;
            snprintf(gpu->error, sizeof gpu->error, "nvidia-smi: %s", gk_trim(line));
            continue;
        }
        char *fields[COLUMN_COUNT];
        unsigned index;
        if (split_row(line, fields, columns) != columns || !parse_unsigned(fields[COL_INDEX], 4096, &index))
            continue; /* not a data row */
        gpu->index = index;
        fill_gpu(gpu, fields, columns);
        if (!snapshot->driver_version[0])
            copy_text(snapshot->driver_version, sizeof snapshot->driver_version,
                      fields[COL_DRIVER]);
        snapshot->gpu_count++;
    }
    if (snapshot->gpu_count == 0 && exit_status != 0)
        diagnose_failure(snapshot, output, exit_status);
    return GK_OK;
}

static gk_status smi_devices(void *state, gk_snapshot *snapshot)
{
    (void)state;
    bool basic_columns = false;
    char *output;
    int exit_status;
    gk_status status = query_gpus(COLUMN_COUNT, &output, &exit_status);
    if (status == GK_OK && exit_status != 0 && strstr(output, "is not a valid field")) {
        /* An older driver: ask again for the fields every version knows. */
        free(output);
        basic_columns = true;
        status = query_gpus(BASIC_COLUMNS, &output, &exit_status);
    }
    if (status != GK_OK) {
        gk_snapshot_set_absence(snapshot, GK_ABSENCE_DRIVER_ERROR, "nvidia-smi: %s",
                                gk_last_error());
        return status == GK_ERR_OUT_OF_MEMORY ? status : GK_OK;
    }
    status = gk_smi_parse_gpus(output, basic_columns, exit_status, snapshot);
    free(output);
    return status;
}

static gk_gpu *gpu_by_uuid(gk_snapshot *snapshot, const char *uuid)
{
    for (size_t i = 0; i < snapshot->gpu_count; i++)
        if (snapshot->gpus[i].uuid[0] && strcmp(snapshot->gpus[i].uuid, uuid) == 0)
            return &snapshot->gpus[i];
    return NULL;
}

gk_status gk_smi_parse_processes(char *output, int exit_status, gk_snapshot *snapshot)
{
    if (exit_status == 0)
        for (size_t i = 0; i < snapshot->gpu_count; i++)
            snapshot->gpus[i].processes_known = snapshot->gpus[i].state == GK_GPU_OK;

    char *saveptr = NULL;
    for (char *line = strtok_r(output, "\n", &saveptr); line;
         line = strtok_r(NULL, "\n", &saveptr)) {
        char *fields[4];
        unsigned pid;
        if (split_row(line, fields, 4) != 4 || !parse_unsigned(fields[1], UINT32_MAX, &pid))
            continue;
        gk_gpu *gpu = gpu_by_uuid(snapshot, fields[0]);
        if (!gpu)
            continue;
        gk_process *grown = realloc(gpu->processes, (gpu->process_count + 1) * sizeof *grown);
        if (!grown)
            return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory listing GPU processes");
        gpu->processes = grown;
        gk_process *p = &gpu->processes[gpu->process_count++];
        memset(p, 0, sizeof *p);
        p->pid = pid;
        p->type = GK_PROCESS_COMPUTE;
        p->gpu_memory = parse_number(fields[3], 1024.0 * 1024.0);
        gk_process_describe(p);
        if (!p->command[0]) {
            const char *slash = strrchr(fields[2], '/');
            copy_text(p->command, sizeof p->command, slash ? slash + 1 : fields[2]);
        }
    }
    return GK_OK;
}

static gk_status smi_processes(void *state, gk_snapshot *snapshot)
{
    (void)state;
    char *argv[] = {"nvidia-smi", "--query-compute-apps=gpu_uuid,pid,process_name,used_memory",
                    "--format=csv,noheader,nounits", NULL};
    char *output;
    int exit_status;
    if (gk_run_capture(argv, smi_timeout_ms(), &output, &exit_status) != GK_OK)
        return GK_OK; /* processes stay unknown */
    gk_status status = gk_smi_parse_processes(output, exit_status, snapshot);
    free(output);
    return status;
}

const gk_probe_backend gk_probe_smi_backend = {
    .name = "nvidia-smi",
    .source = GK_SOURCE_NVIDIA_SMI,
    .open = smi_open,
    .devices = smi_devices,
    .processes = smi_processes,
    .close = smi_close,
};
