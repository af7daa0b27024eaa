/* nvidia-smi's CSV (probe/smi.c): the output of --query-gpu, 0xFF, the
 * output of --query-compute-apps. The first byte picks the column set (all,
 * or an old driver's) and whether the program failed; the snapshot made
 * then goes through the CUDA view and the JSON of `gpukit ls --json`. */
#include "fuzz.h"

#include "probe/backend.h"

#include <gpukit/visible.h>

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    bool basic_columns = data[0] & 1;
    int exit_status = data[0] & 2 ? 9 : 0;
    char *parts[2];
    char *copy = fuzz_split(data + 1, size - 1, parts, 2);
    gk_snapshot *snapshot = calloc(1, sizeof *snapshot);
    if (!snapshot)
        abort();
    if (gk_smi_parse_gpus(parts[0], basic_columns, exit_status, snapshot) == GK_OK &&
        gk_smi_parse_processes(parts[1], exit_status, snapshot) == GK_OK) {
        for (size_t i = 0; i < snapshot->gpu_count; i++) {
            const gk_gpu *gpu = &snapshot->gpus[i];
            FUZZ_CHECK_TEXT(gpu->name);
            FUZZ_CHECK_TEXT(gpu->uuid);
            FUZZ_CHECK_TEXT(gpu->pci_bus_id);
        }
        gk_cuda_view view;
        gk_cuda_view_resolve(snapshot, NULL, NULL, &view);
        fuzz_write_json(snapshot, &view);
    }
    gk_snapshot_destroy(snapshot);
    free(copy);
    return 0;
}
