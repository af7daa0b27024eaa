/* The helpers of fuzz.h. */
#include "fuzz.h"

#include "core/files.h"
#include "probe/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *fuzz_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    return text;
}

char *fuzz_split(const uint8_t *data, size_t size, char **parts, size_t max)
{
    char *copy = fuzz_text(data, size);
    size_t n = 0;
    char *start = copy;
    for (size_t i = 0; i < size && n + 1 < max; i++) {
        if (data[i] == 0xFF) {
            copy[i] = '\0';
            parts[n++] = start;
            start = copy + i + 1;
        }
    }
    parts[n++] = start;
    for (; n < max; n++)
        parts[n] = copy + size; /* the final NUL: "" */
    return copy;
}

static char scratch[4096];

static void remove_scratch(void)
{
    gk_remove_tree(scratch);
}

const char *fuzz_scratch_dir(void)
{
    if (scratch[0])
        return scratch;
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/gpukit-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(scratch)) {
        perror("fuzz: mkdtemp");
        abort();
    }
    atexit(remove_scratch);
    return scratch;
}

void fuzz_write_file(const char *dir, const char *name, const void *data, size_t size)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *file = fopen(path, "wb");
    if (!file || fwrite(data, 1, size, file) != size || fclose(file) != 0) {
        perror(path);
        abort();
    }
}

static void set_gpu(gk_gpu *gpu, unsigned index, const char *name, const char *uuid,
                    const char *bus_id, unsigned major, uint64_t total_gib, uint64_t used_gib)
{
    gpu->index = index;
    snprintf(gpu->name, sizeof gpu->name, "%s", name);
    snprintf(gpu->uuid, sizeof gpu->uuid, "%s", uuid);
    snprintf(gpu->pci_bus_id, sizeof gpu->pci_bus_id, "%s", bus_id);
    gpu->compute_major = (gk_field){major, true};
    gpu->compute_minor = (gk_field){0, true};
    gpu->memory_total = (gk_field){total_gib << 30, true};
    gpu->memory_used = (gk_field){used_gib << 30, true};
    gpu->memory_free = (gk_field){(total_gib - used_gib) << 30, true};
    gpu->utilization_gpu = (gk_field){index * 30, true};
    gpu->power_draw = (gk_field){100000 + index * 1000, true};
    gpu->power_limit = (gk_field){300000, true};
    gpu->mig_mode = (gk_field){0, true};
    gpu->processes_known = true;
}

gk_snapshot *fuzz_snapshot(void)
{
    gk_snapshot *snapshot = calloc(1, sizeof *snapshot);
    gk_gpu *gpus = calloc(4, sizeof *gpus);
    gk_mig_device *migs = calloc(2, sizeof *migs);
    gk_process *process = calloc(1, sizeof *process);
    if (!snapshot || !gpus || !migs || !process)
        abort();
    snapshot->source = GK_SOURCE_NVML;
    snapshot->gpus = gpus;
    snapshot->gpu_count = 4;
    set_gpu(&gpus[0], 0, "NVIDIA GeForce RTX 3090", "GPU-2bdfff79-02da-4552-8376-7ccb112dc656",
            "00000000:18:00.0", 8, 24, 2);
    set_gpu(&gpus[1], 1, "NVIDIA H100 80GB HBM3", "GPU-2bdf0b4f-ccdd-4d54-9ebb-238788923498",
            "00000000:2A:00.0", 9, 80, 40);
    set_gpu(&gpus[2], 2, "NVIDIA A100-SXM4-40GB", "GPU-4a0a927e-bfda-480a-b9c7-75cc5ca757b8",
            "00000000:3A:00.0", 8, 40, 0);
    set_gpu(&gpus[3], 3, "NVIDIA H100 80GB HBM3", "GPU-e184d64f-6a57-4c38-bb05-774e6080de8b",
            "00000000:5D:00.0", 9, 80, 0);
    gpus[3].state = GK_GPU_LOST;
    gpus[2].mig_mode = (gk_field){1, true};
    gpus[2].mig_devices = migs;
    gpus[2].mig_count = 2;
    for (unsigned m = 0; m < 2; m++) {
        migs[m].index = m;
        snprintf(migs[m].uuid, sizeof migs[m].uuid, "MIG-%u4c1e6a2-5d07-5b2e-a1c1-1f0e9b6a7c%02u",
                 m + 1, m);
        snprintf(migs[m].name, sizeof migs[m].name, "NVIDIA A100-SXM4-40GB MIG 3g.20gb");
        migs[m].gpu_instance = (gk_field){m + 1, true};
        migs[m].compute_instance = (gk_field){0, true};
        migs[m].memory_total = (gk_field){20ull << 30, true};
        migs[m].memory_used = (gk_field){0, true};
    }
    process->pid = 4012345;
    process->type = GK_PROCESS_COMPUTE;
    process->gpu_memory = (gk_field){2ull << 30, true};
    gpus[0].processes = process;
    gpus[0].process_count = 1;
    return snapshot;
}

void fuzz_write_json(const gk_snapshot *snapshot, const gk_cuda_view *view)
{
    json_t *json = gk_json_snapshot(snapshot, view, true);
    char *text = json ? json_dumps(json, 0) : NULL;
    free(text);
    json_decref(json);
}

void fuzz_check_text(const char *text, size_t size)
{
    if (strnlen(text, size) == size)
        abort();
}
