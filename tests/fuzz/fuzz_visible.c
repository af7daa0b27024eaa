/* CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER (probe/visible.c), resolved
 * against a synthetic machine and written as `gpukit info --json` writes
 * them. The input is the variable's value, then 0xFF and the order; a
 * missing part stands for an unset variable (a lone 0xFF sets both to
 * ""). */
#include "fuzz.h"

#include "probe/json.h"

#include <gpukit/info.h>
#include <gpukit/visible.h>

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gk_snapshot *snapshot;
    if (!snapshot)
        snapshot = fuzz_snapshot();
    char *parts[2];
    char *copy = fuzz_split(data, size, parts, 2);
    bool has_order = memchr(data, 0xFF, size) != NULL;
    const char *visible = size ? parts[0] : NULL;
    gk_cuda_view view;
    if (gk_cuda_view_resolve(snapshot, visible, has_order ? parts[1] : NULL, &view) != GK_OK)
        abort();
    /* Every device of the view must be a real one, and the note a string. */
    if (view.count > GK_CUDA_VIEW_MAX || strnlen(view.note, sizeof view.note) == sizeof view.note)
        abort();
    for (size_t i = 0; i < view.count; i++) {
        const gk_cuda_device *device = &view.devices[i];
        if (device->gpu >= snapshot->gpu_count ||
            device->mig >= (int)snapshot->gpus[device->gpu].mig_count)
            abort();
        if (!gk_cuda_device_uuid(snapshot, device) || !gk_cuda_device_name(snapshot, device))
            abort();
        gk_cuda_view_index(&view, device->gpu);
    }
    /* The JSON says what was set and why devices are missing, whatever
     * bytes the variable holds. */
    if (visible)
        setenv("CUDA_VISIBLE_DEVICES", visible, 1);
    else
        unsetenv("CUDA_VISIBLE_DEVICES");
    gk_info info = {.snapshot = snapshot, .view = view};
    json_t *json = gk_json_info(&info);
    json_t *variable = json_object_get(json, "cuda_visible_devices");
    json_t *note = json_object_get(json, "note");
    if (!json || json_array_size(json_object_get(json, "cuda_devices")) != view.count ||
        !variable || json_is_null(variable) != !visible || !note ||
        json_is_null(note) != !view.note[0])
        abort();
    json_decref(json);
    free(copy);
    return 0;
}
