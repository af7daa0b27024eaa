/* What the monitor reads from other users' processes and shows to others
 * (monitor/processes.c, metrics.c, json.c, frame.c): the first byte picks
 * the parser, a command line (Jupyter's connection file) or an environment
 * block; or, for the renderers, the input split at 0xFF gives a GPU's name,
 * a process's user and command line, a lease's command and a filter, and
 * the metrics, the JSON and a frame are drawn. No text may break out of
 * its place: every metrics line is a comment or a sample of ours, the JSON
 * parses, and a frame's lines hold no control characters. */
#include "fuzz.h"

#include "monitor/processes.h"

#include <gpukit/monitor.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void check_metrics(const char *text, size_t length)
{
    if (strlen(text) != length)
        abort();
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        if (!end) /* every line ends in a newline */
            abort();
        if (strncmp(line, "# ", 2) != 0 && strncmp(line, "DCGM_FI_", 8) != 0 &&
            strncmp(line, "gpukit_", 7) != 0)
            abort();
        line = end + 1;
    }
}

static void render(char **parts, const uint8_t *data, size_t size)
{
    gk_snapshot snapshot;
    memset(&snapshot, 0, sizeof snapshot);
    gk_gpu gpu;
    memset(&gpu, 0, sizeof gpu);
    snprintf(gpu.name, sizeof gpu.name, "%s", parts[0]);
    snprintf(gpu.uuid, sizeof gpu.uuid, "%s", parts[0]);
    gpu.utilization_gpu = (gk_field){size, true};
    gpu.memory_used = (gk_field){size << 20, true};
    gpu.memory_total = (gk_field){(size + 1) << 21, size % 2 == 0};
    gk_process process;
    memset(&process, 0, sizeof process);
    process.pid = 4000000u + (uint32_t)size;
    process.gpu_memory = (gk_field){size, true};
    snprintf(process.user, sizeof process.user, "%s", parts[1]);
    snprintf(process.command, sizeof process.command, "%s", parts[2]);
    size_t length = strlen(parts[2]);
    if (length && length < sizeof process.cmdline) {
        memcpy(process.cmdline, parts[2], length + 1);
        process.cmdline_len = length + 1;
    }
    gpu.processes = &process;
    gpu.process_count = 1;
    gpu.processes_known = true;
    snapshot.gpus = &gpu;
    snapshot.gpu_count = 1;
    snprintf(snapshot.hostname, sizeof snapshot.hostname, "%s", parts[1]);
    gk_lease lease;
    memset(&lease, 0, sizeof lease);
    snprintf(lease.name, sizeof lease.name, "lease-1-%s", parts[3]);
    snprintf(lease.command, sizeof lease.command, "%s", parts[3]);
    snprintf(lease.request, sizeof lease.request, "%s", parts[3]);
    snprintf(lease.user, sizeof lease.user, "%s", parts[1]);
    lease.device_count = 1;
    lease.waiting = size % 3 == 0;
    gk_sample_process entry = {.gpu = 0, .process = &process, .lease = lease.waiting ? -1 : 0};
    snprintf(entry.notebook, sizeof entry.notebook, "%s", parts[3]);
    gk_sample sample = {.number = 1, .snapshot = &snapshot, .leases = &lease, .lease_count = 1,
                        .processes = &entry, .process_count = 1};

    for (int openmetrics = 0; openmetrics < 2; openmetrics++) {
        char *text;
        size_t text_length;
        if (gk_sample_metrics(&sample, openmetrics, &text, &text_length) != GK_OK)
            abort();
        check_metrics(text, text_length);
        free(text);
    }
    char *json;
    if (gk_sample_json(&sample, &json) != GK_OK)
        abort();
    json_t *parsed = json_loads(json, 0, NULL);
    if (!parsed)
        abort();
    json_decref(parsed);
    free(json);

    gk_frame_options options = {.width = 40 + (unsigned)(data[0] % 100),
                                .height = data[0] % 2 ? 0 : 10 + data[0] % 20,
                                .sort = (gk_top_column)(data[0] % GK_TOP_COLUMNS),
                                .tree = data[0] & 4, .filter = parts[4],
                                .show_selection = true, .graph_gpu = -1,
                                .unicode = data[0] & 8};
    gk_frame frame;
    if (gk_frame_draw(NULL, &sample, &options, &frame) != GK_OK)
        abort();
    for (size_t i = 0; i < frame.line_count; i++)
        for (const unsigned char *c = (const unsigned char *)frame.lines[i].text; *c; c++)
            if (*c < 0x20 || *c == 0x7F)
                abort();
    gk_frame_free(&frame);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char value[256];
    /* the bytes as the callers hand them over: followed by a NUL */
    char *block = malloc(size);
    if (!block)
        abort();
    memcpy(block, data + 1, size - 1);
    block[size - 1] = '\0';
    switch (data[0] % 3) {
    case 0:
        if (gk_jupyter_kernel_id(block, size - 1, value, sizeof value))
            FUZZ_CHECK_TEXT(value);
        break;
    case 1:
        if (gk_environ_value(block, size - 1, "JPY_SESSION_NAME", value, sizeof value))
            FUZZ_CHECK_TEXT(value);
        break;
    default: {
        char *parts[5];
        char *copy = fuzz_split(data + 1, size - 1, parts, 5);
        render(parts, data, size);
        free(copy);
        break;
    }
    }
    free(block);
    return 0;
}
