/* Internal: the JSON forms of what probe/ reads, built with jansson, shared
 * by the gpukit command (ls --json, info --json) and gk_info_json() (the
 * Python module's gpukit.info()), so both always say the same thing; and
 * gk_json_string, which the command's other documents use for outside text. */
#ifndef GK_PROBE_JSON_H
#define GK_PROBE_JSON_H

#include <gpukit/info.h>

#include <jansson.h>
#include <stdbool.h>

/* `gpukit ls --json`: a superset of gpustat's --json schema. */
json_t *gk_json_snapshot(const gk_snapshot *snapshot, const gk_cuda_view *view, bool processes);

/* `gpukit info --json`. */
json_t *gk_json_info(const gk_info *info);

/* A JSON string of `text`, which may come from other programs or files and
 * need not be UTF-8, as JSON strings must: when it is not, every byte past
 * ASCII becomes '?'. NULL only when out of memory. */
json_t *gk_json_string(const char *text);

#endif
