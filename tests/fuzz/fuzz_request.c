/* The selection options of `gpukit pick` and `gpukit run` (select/select.c
 * gk_request_set, the lists of --gpus and --exclude that gk_select reads),
 * evaluated against a synthetic machine. The input is "name 0xFF value"
 * pairs, each followed by 0xFF. */
#include "fuzz.h"

#include <gpukit/select.h>

#include <stdlib.h>

enum { MAX_OPTIONS = 8 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gk_snapshot *snapshot;
    if (!snapshot)
        snapshot = fuzz_snapshot();
    char *parts[2 * MAX_OPTIONS];
    char *copy = fuzz_split(data, size, parts, 2 * MAX_OPTIONS);
    gk_request request;
    gk_request_init(&request);
    for (size_t i = 0; i < MAX_OPTIONS && parts[2 * i][0]; i++)
        gk_request_set(&request, parts[2 * i], parts[2 * i + 1]);
    char description[512];
    gk_request_describe(&request, description, sizeof description);

    gk_claim claim = {.uuid = "GPU-2bdfff79-02da-4552-8376-7ccb112dc656", .share = true,
                      .reserved = 4ull << 30, .pid = 4012345, .user = "someone"};
    gk_selection selection;
    if (gk_select(snapshot, NULL, &claim, 1, &request, &selection) == GK_OK) {
        if (selection.fitting > selection.count)
            abort();
        gk_selection_free(&selection);
    }
    free(copy);
    return 0;
}
