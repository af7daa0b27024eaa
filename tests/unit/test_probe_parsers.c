/* What the fuzz targets found in the /proc and nvidia-smi parsers, as plain
 * checks that every build runs (gcc's UBSan does not check conversions from
 * floating point, so the replayed corpus alone would not catch these there):
 * a value too large for its field is unknown, never a wrapped number. */
#include "check.h"

#include "probe/backend.h"

#include <stdlib.h>
#include <string.h>

static void smi_numbers_past_2_64_are_unknown(void)
{
    char rows[] = "0, NVIDIA H100 80GB HBM3, GPU-2bdfff79-02da-4552-8376-7ccb112dc656, "
                  "00000000:18:00.0, 1e300, nan, inf, 87, 45, 61, [N/A], 1e300, 700.00, 1980, "
                  "2619, 550.54.15, 1980, 2619, Enabled, 9.0, Disabled\n";
    gk_snapshot snapshot;
    memset(&snapshot, 0, sizeof snapshot);
    CHECK(gk_smi_parse_gpus(rows, false, 0, &snapshot) == GK_OK, "parse failed");
    CHECK(snapshot.gpu_count == 1, "%zu GPUs", snapshot.gpu_count);
    if (snapshot.gpu_count == 1) {
        const gk_gpu *gpu = &snapshot.gpus[0];
        CHECK(!gpu->memory_total.known, "1e300 MiB read as %llu",
              (unsigned long long)gpu->memory_total.value);
        CHECK(!gpu->memory_used.known, "nan read as a number");
        CHECK(!gpu->memory_free.known, "inf read as a number");
        CHECK(!gpu->power_draw.known, "1e300 W read as a number");
        CHECK(gpu->power_limit.known && gpu->power_limit.value == 700000, "the limit is lost");
        CHECK(gpu->utilization_gpu.known && gpu->utilization_gpu.value == 87, "util is lost");
    }
    free(snapshot.gpus);
}

static void proc_cpu_use_past_2_64_is_unknown(void)
{
    /* utime of 2^63 ticks in a process started a moment ago. */
    const char stat[] = "4012345 (python) S 1 4012345 4012345 0 -1 4194560 1234 0 0 0 "
                        "9223372036854775807 0 0 0 20 0 8 0 1234567 123456789 4567\n";
    gk_process process;
    memset(&process, 0, sizeof process);
    gk_proc_parse_stat(stat, 12345.67, 100, &process);
    CHECK(!process.cpu_percent.known, "read as %llu tenths of a percent",
          (unsigned long long)process.cpu_percent.value);

    const char ordinary[] = "4012345 (my (odd) prog) S 1 4012345 4012345 0 -1 4194560 1234 0 0 "
                            "0 5000 250 0 0 20 0 8 0 1134567 123456789 4567\n";
    memset(&process, 0, sizeof process);
    gk_proc_parse_stat(ordinary, 12345.67, 100, &process);
    /* 52.5 s of CPU over 1000 s alive: 5.25 %, 53 tenths when rounded. */
    CHECK(process.cpu_percent.known && process.cpu_percent.value == 53, "%llu tenths",
          (unsigned long long)process.cpu_percent.value);
    CHECK(process.cpu_time.known && process.cpu_time.value == 52500, "%llu ms of CPU",
          (unsigned long long)process.cpu_time.value);
    CHECK(process.running_time.known && process.running_time.value == 1000000, "%llu ms alive",
          (unsigned long long)process.running_time.value);
}

int main(void)
{
    smi_numbers_past_2_64_are_unknown();
    proc_cpu_use_past_2_64_is_unknown();
    CHECK_DONE();
}
