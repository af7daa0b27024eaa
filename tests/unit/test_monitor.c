/* The monitor library on its own: the Jupyter and environment parsers, the
 * metrics text of hand-made readings (escaping, absent values, MIG labels,
 * OpenMetrics), and the history ring and sample lifetimes of a monitor over
 * the fake NVML (its environment is set by ctest), and a GPU lost while a
 * monitor reads it and readings that fail (the fake reloading a changed
 * copy of the scenario). */
#include "check.h"
#include "monitor/processes.h"

#include <gpukit/monitor.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void test_jupyter_kernel_id(void)
{
    static const char kernel[] = "python\0-m\0ipykernel_launcher\0-f\0/run/jupyter/kernel-ab12.json";
    char id[64] = "";
    CHECK(gk_jupyter_kernel_id(kernel, sizeof kernel, id, sizeof id), "a kernel");
    CHECK(strcmp(id, "ab12") == 0, "id %s", id);
    static const char equals[] = "python3\0/x/ipykernel_launcher.py\0--f=/tmp/kernel-9.json";
    CHECK(gk_jupyter_kernel_id(equals, sizeof equals, id, sizeof id) && strcmp(id, "9") == 0,
          "--f=: %s", id);
    static const char other[] = "python\0train.py\0-f\0config.json";
    CHECK(!gk_jupyter_kernel_id(other, sizeof other, id, sizeof id), "not a kernel");
    static const char no_file[] = "python\0-m\0ipykernel_launcher\0-f";
    CHECK(!gk_jupyter_kernel_id(no_file, sizeof no_file, id, sizeof id), "-f at the end");
    CHECK(!gk_jupyter_kernel_id("", 0, id, sizeof id), "empty");
}

static void test_environ_value(void)
{
    static const char block[] = "HOME=/root\0GPUKIT_KERNEL=py-gpu\0JPY_SESSION_NAME=a b.ipynb\0X=";
    char value[64];
    CHECK(gk_environ_value(block, sizeof block, "GPUKIT_KERNEL", value, sizeof value) &&
              strcmp(value, "py-gpu") == 0, "%s", value);
    CHECK(gk_environ_value(block, sizeof block, "JPY_SESSION_NAME", value, sizeof value) &&
              strcmp(value, "a b.ipynb") == 0, "%s", value);
    CHECK(gk_environ_value(block, sizeof block, "X", value, sizeof value) && value[0] == '\0',
          "empty value");
    CHECK(!gk_environ_value(block, sizeof block, "GPUKIT", value, sizeof value), "a prefix");
    CHECK(!gk_environ_value(block, 0, "HOME", value, sizeof value), "empty block");
}

/* A reading of one GPU with awkward text, one unreadable field and a MIG
 * instance, and one process. */
static void test_metrics_text(void)
{
    gk_snapshot snapshot = {0};
    gk_gpu gpu = {0};
    snprintf(gpu.name, sizeof gpu.name, "Odd \"GPU\"\\ \xff\n2");
    snprintf(gpu.uuid, sizeof gpu.uuid, "GPU-1");
    gpu.utilization_gpu = (gk_field){42, true};
    gpu.temperature = (gk_field){0, false};
    gpu.power_draw = (gk_field){123456, true};
    gpu.memory_total = (gk_field){1024ull << 20, true};
    gk_mig_device mig = {.index = 0, .gpu_instance = {3, true}, .memory_total = {512ull << 20, true},
                         .memory_used = {128ull << 20, true}};
    snprintf(mig.name, sizeof mig.name, "NVIDIA A100 MIG 2g.10gb");
    gpu.mig_devices = &mig;
    gpu.mig_count = 1;
    gk_process process = {.pid = 77, .gpu_memory = {5 << 20, true}, .cmdline_len = 7};
    memcpy(process.cmdline, "a\0b\"c\n", 7);
    gpu.processes = &process;
    gpu.process_count = 1;
    snapshot.gpus = &gpu;
    snapshot.gpu_count = 1;
    snprintf(snapshot.hostname, sizeof snapshot.hostname, "h");
    gk_sample_process entry = {.gpu = 0, .process = &process, .lease = -1};
    gk_sample sample = {.number = 5, .snapshot = &snapshot, .processes = &entry,
                        .process_count = 1};

    char *text;
    size_t length;
    CHECK(gk_sample_metrics(&sample, false, &text, &length) == GK_OK, "metrics");
    CHECK(strlen(text) == length, "length");
    CHECK(strstr(text, "modelName=\"Odd \\\"GPU\\\"\\\\ ?\\n2\""), "escaped: %s", text);
    CHECK(strstr(text, "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\""), "util");
    CHECK(strstr(text, "} 42\n"), "util value");
    CHECK(strstr(text, "} 123.456\n"), "power in W");
    CHECK(!strstr(text, "DCGM_FI_DEV_GPU_TEMP"), "an unknown field has no sample");
    CHECK(strstr(text, "GPU_I_PROFILE=\"2g.10gb\",GPU_I_ID=\"3\""), "MIG labels");
    CHECK(strstr(text, "command=\"a b\\\"c\\n\""), "command line: %s", text);
    free(text);
    /* Not UTF-8 that strict parsers take: overlong forms, surrogates, past
     * U+10FFFF. Each bad byte is '?', and good characters stay. */
    memcpy(process.cmdline, "\xC0\xAF\xED\xA0\x80\xF4\x90\x80\x80\xC3\xA9", 12);
    process.cmdline_len = 12; /* with its NUL */
    CHECK(gk_sample_metrics(&sample, false, &text, &length) == GK_OK, "metrics");
    CHECK(strstr(text, "command=\"?????????\xC3\xA9\""), "strict UTF-8: %s", text);
    CHECK(strstr(text, "# TYPE gpukit_monitor_readings_total counter\n"
                       "gpukit_monitor_readings_total 5\n"), "a counter in text format");
    CHECK(!strstr(text, "# EOF"), "no EOF in the text format");
    free(text);

    CHECK(gk_sample_metrics(&sample, true, &text, &length) == GK_OK, "openmetrics");
    CHECK(strstr(text, "# TYPE gpukit_monitor_readings counter\n"
                       "gpukit_monitor_readings_total 5\n"), "OpenMetrics counter family");
    CHECK(length > 6 && strcmp(text + length - 6, "# EOF\n") == 0, "ends with EOF");
    free(text);
}

/* A monitor over the fake NVML's scenario: readings stay valid while held,
 * numbers grow, and the history keeps the newest points, oldest first. */
static void test_monitor_history(void)
{
    gk_monitor_options options = {.interval = 0.01, .history = 3};
    gk_monitor *monitor;
    CHECK(gk_monitor_open(&options, &monitor) == GK_OK, "%s", gk_last_error());
    CHECK(gk_monitor_acquire(monitor) == NULL, "no reading before the first");
    CHECK(gk_monitor_read(monitor) == GK_OK, "%s", gk_last_error());
    const gk_sample *held = gk_monitor_acquire(monitor);
    CHECK(held && held->number == 1 && held->snapshot->gpu_count == 8, "first reading");
    for (int i = 0; i < 4; i++)
        CHECK(gk_monitor_read(monitor) == GK_OK, "%s", gk_last_error());
    /* the held reading is intact though five were published since */
    CHECK(held->number == 1 && strcmp(held->snapshot->gpus[2].name, "NVIDIA H100 80GB HBM3") == 0,
          "held reading");
    gk_monitor_release(monitor, held);
    gk_history_point points[8];
    size_t n = gk_monitor_history(monitor, 2, points, 8);
    CHECK(n == 3, "history keeps 3, got %zu", n);
    CHECK(points[0].time.tv_sec * 1000000000L + points[0].time.tv_nsec <=
              points[2].time.tv_sec * 1000000000L + points[2].time.tv_nsec, "oldest first");
    CHECK(points[2].utilization.known && points[2].utilization.value == 100, "GPU 2's util");
    CHECK(gk_monitor_history(monitor, 2, points, 2) == 2, "at most max");
    CHECK(gk_monitor_history(monitor, 99, points, 8) == 0, "no such GPU");

    /* the thread, and a waiter woken by each reading and by the stop */
    CHECK(gk_monitor_start(monitor) == GK_OK, "start");
    uint64_t latest = gk_monitor_wait(monitor, 6, 5.0);
    CHECK(latest > 6, "a new reading came: %llu", (unsigned long long)latest);
    CHECK(gk_monitor_read(monitor) == GK_ERR_INVALID_ARGUMENT, "read while its thread reads");
    gk_monitor_stop(monitor);
    CHECK(gk_monitor_wait(monitor, latest, 5.0) == 0, "stopped");
    CHECK(gk_monitor_wait(monitor, latest, 1.0 / 0.0) == 0, "an infinite timeout");
    /* A reading held past the monitor's close is still whole (ASan and
     * valgrind check the release). */
    const gk_sample *kept = gk_monitor_acquire(monitor);
    gk_monitor_close(monitor);
    CHECK(kept && kept->snapshot->gpu_count == 8, "held past close");
    gk_monitor_release(monitor, kept);

    gk_monitor_options bad = {.interval = -1};
    CHECK(gk_monitor_open(&bad, &monitor) == GK_ERR_INVALID_ARGUMENT, "negative interval");
}

/* Writes `text` to `path` with `suffix` at the end of its line number
 * `nth` (from 0) of those that start with `keyword` (none when NULL), dated
 * `age` seconds ahead so that the fake (FAKE_NVML_RELOAD) reloads it. */
static void write_scenario(const char *path, const char *text, const char *keyword, int nth,
                           const char *suffix, int age)
{
    FILE *file = fopen(path, "w");
    CHECK(file, "cannot write %s", path);
    if (!file)
        return;
    int seen = -1;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        bool marked = keyword && strncmp(line, keyword, strlen(keyword)) == 0 &&
                      line[strlen(keyword)] == ' ' && ++seen == nth;
        fwrite(line, 1, length, file);
        fprintf(file, "%s\n", marked ? suffix : "");
        line += length + (end ? 1 : 0);
    }
    fclose(file);
    struct timespec times[2] = {{time(NULL) + age, 0}, {time(NULL) + age, 0}};
    CHECK(utimensat(AT_FDCWD, path, times, 0) == 0, "utimensat %s", path);
}

/* A monitor over a copy of ctest's scenario that the fake reloads when it
 * changes (the copy's path in `copy`, its text in `text`), with one good
 * reading; NULL when it cannot be. Undone by close_over_copy. */
static char scenario[4096];
static gk_monitor *open_over_copy(char *copy, char *text, size_t size)
{
    /* kept: setenv may free the text getenv gives */
    const char *set = getenv("FAKE_NVML_SCENARIO");
    snprintf(scenario, sizeof scenario, "%s", set ? set : "");
    FILE *file = fopen(scenario, "r");
    CHECK(file, "the scenario %s", scenario);
    if (!file)
        return NULL;
    text[fread(text, 1, size - 1, file)] = '\0';
    fclose(file);
    int fd = mkstemp(copy);
    CHECK(fd >= 0, "mkstemp %s", copy);
    if (fd < 0)
        return NULL;
    close(fd);
    write_scenario(copy, text, NULL, 0, "", 0);
    setenv("FAKE_NVML_SCENARIO", copy, 1);
    setenv("FAKE_NVML_RELOAD", "1", 1);
    gk_monitor_options options = {.interval = 0.01, .history = 3};
    gk_monitor *monitor = NULL;
    CHECK(gk_monitor_open(&options, &monitor) == GK_OK, "%s", gk_last_error());
    return monitor;
}

static void close_over_copy(gk_monitor *monitor, const char *copy)
{
    gk_monitor_close(monitor);
    unlink(copy);
    setenv("FAKE_NVML_SCENARIO", scenario, 1);
    unsetenv("FAKE_NVML_RELOAD");
}

/* GPU `index` of a new reading (its strings and fields; its pointers are
 * not to be followed). */
static void read_gpu(gk_monitor *monitor, size_t index, gk_gpu *gpu)
{
    CHECK(gk_monitor_read(monitor) == GK_OK, "%s", gk_last_error());
    const gk_sample *sample = gk_monitor_acquire(monitor);
    *gpu = sample->snapshot->gpus[index];
    gk_monitor_release(monitor, sample);
}

/* A GPU lost while the monitor reads it keeps the identity it last gave in
 * every reading (alerts, the dashboard's history and the watch mode know a
 * GPU by it), and is read in full again once it answers. */
static void test_lost_gpu_keeps_identity(void)
{
    static char text[1 << 16];
    char copy[] = "/tmp/gpukit-test-monitor-XXXXXX";
    gk_monitor *monitor = open_over_copy(copy, text, sizeof text);
    if (!monitor)
        return;
    gk_gpu before, gpu;
    read_gpu(monitor, 5, &before);
    CHECK(before.state == GK_GPU_OK && strncmp(before.uuid, "GPU-", 4) == 0, "GPU 5 answers");
    /* every call on GPU 5 fails: GPU is lost */
    write_scenario(copy, text, "gpu", 5, " error=15", 5);
    for (int reading = 1; reading <= 3; reading++) {
        read_gpu(monitor, 5, &gpu);
        CHECK(gpu.state == GK_GPU_LOST, "lost in reading %d", reading);
        CHECK(strcmp(gpu.uuid, before.uuid) == 0 && strcmp(gpu.name, before.name) == 0 &&
                  strcmp(gpu.pci_bus_id, before.pci_bus_id) == 0,
              "reading %d: UUID \"%s\", name \"%s\", bus id \"%s\"", reading, gpu.uuid,
              gpu.name, gpu.pci_bus_id);
    }
    /* even its handle is refused */
    write_scenario(copy, text, "gpu", 5, " handle_error=15", 10);
    read_gpu(monitor, 5, &gpu);
    CHECK(gpu.state == GK_GPU_LOST && strcmp(gpu.uuid, before.uuid) == 0, "no handle: \"%s\"",
          gpu.uuid);
    write_scenario(copy, text, NULL, 0, "", 15);
    read_gpu(monitor, 5, &gpu);
    CHECK(gpu.state == GK_GPU_OK && strcmp(gpu.uuid, before.uuid) == 0 &&
              gpu.utilization_gpu.known, "answers again after a reset");
    close_over_copy(monitor, copy);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

/* While readings fail, the last good one is served, with the failures
 * counted as of now (gk_monitor_current): the reading's own count is that of
 * when it was taken, so gpukit_monitor_failed_readings_total would stay put.
 * A reading fails when it runs out of memory: the driver counts a billion
 * GPUs while this process's address space is limited. */
static void test_failed_readings_are_counted_now(void)
{
#ifdef SANITIZED
    return; /* the sanitizers reserve more address space than such a limit */
#else
    static char text[1 << 16];
    char copy[] = "/tmp/gpukit-test-monitor-XXXXXX";
    gk_monitor *monitor = open_over_copy(copy, text, sizeof text);
    if (!monitor)
        return;
    CHECK(gk_monitor_read(monitor) == GK_OK, "%s", gk_last_error());
    write_scenario(copy, text, "system", 0, " gpu_count=1000000000", 5);
    long pages = 0;
    FILE *statm = fopen("/proc/self/statm", "r");
    CHECK(statm && fscanf(statm, "%ld", &pages) == 1, "/proc/self/statm");
    if (statm)
        fclose(statm);
    struct rlimit saved, limited;
    getrlimit(RLIMIT_AS, &saved);
    limited = saved;
    limited.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (1ul << 30);
    CHECK(setrlimit(RLIMIT_AS, &limited) == 0, "setrlimit");
    CHECK(gk_monitor_read(monitor) == GK_ERR_OUT_OF_MEMORY, "a failed reading");
    CHECK(gk_monitor_read(monitor) == GK_ERR_OUT_OF_MEMORY, "another");
    setrlimit(RLIMIT_AS, &saved);

    const gk_sample *held = gk_monitor_acquire(monitor);
    gk_sample now = gk_monitor_current(monitor, held);
    CHECK(held->number == 1 && held->failed_readings == 0, "the last good reading");
    CHECK(now.number == 1 && now.failed_readings == 2 && now.snapshot == held->snapshot,
          "counted now: %llu", (unsigned long long)now.failed_readings);
    char *metrics;
    size_t length;
    CHECK(gk_sample_metrics(&now, false, &metrics, &length) == GK_OK, "metrics");
    CHECK(strstr(metrics, "\ngpukit_monitor_failed_readings_total 2\n"), "%s", metrics);
    free(metrics);
    gk_monitor_release(monitor, held);
    close_over_copy(monitor, copy);
#endif
}

int main(void)
{
    test_jupyter_kernel_id();
    test_environ_value();
    test_metrics_text();
    test_monitor_history();
    test_lost_gpu_keeps_identity();
    test_failed_readings_are_counted_now();
    CHECK_DONE();
}
