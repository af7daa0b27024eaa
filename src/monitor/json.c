/* A reading as JSON (gk_sample_json in gpukit/monitor.h): the document of
 * `gpukit ls --json`, with what gpukit knows on top. */
#include <gpukit/monitor.h>
#include <gpukit/visible.h>

#include "core/error.h"
#include "probe/json.h"
#include "select/json.h"

#include <stdlib.h>

static json_t *text_or_null(const char *text)
{
    return text[0] ? gk_json_string(text) : json_null();
}

/* Adds the lease and Jupyter kernel of each process to its object. */
static void describe_processes(json_t *document, const gk_sample *sample)
{
    json_t *gpus = json_object_get(document, "gpus");
    size_t next = 0;
    for (size_t g = 0; g < json_array_size(gpus); g++) {
        json_t *list = json_object_get(json_array_get(gpus, g), "processes");
        for (size_t p = 0; p < json_array_size(list) && next < sample->process_count; p++) {
            const gk_sample_process *entry = &sample->processes[next++];
            json_t *o = json_array_get(list, p);
            json_object_set_new(o, "lease", entry->lease >= 0
                                                ? gk_json_string(sample->leases[entry->lease].name)
                                                : json_null());
            json_object_set_new(o, "jupyter_kernel", text_or_null(entry->kernel));
            json_object_set_new(o, "jupyter_kernel_id", text_or_null(entry->kernel_id));
            json_object_set_new(o, "notebook", text_or_null(entry->notebook));
        }
    }
}

gk_status gk_sample_json(const gk_sample *sample, char **text)
{
    *text = NULL;
    gk_cuda_view view;
    gk_cuda_view_from_env(sample->snapshot, &view);
    json_t *document = gk_json_snapshot(sample->snapshot, &view, true);
    json_t *leases = json_array(), *waiting = json_array();
    if (!document || !leases || !waiting) {
        json_decref(document);
        json_decref(leases);
        json_decref(waiting);
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory writing the GPUs as JSON");
    }
    describe_processes(document, sample);
    for (size_t i = 0; i < sample->lease_count; i++)
        json_array_append_new(sample->leases[i].waiting ? waiting : leases,
                              gk_json_lease(&sample->leases[i]));
    json_object_set_new(document, "leases", leases);
    json_object_set_new(document, "waiting", waiting);
    json_object_set_new(document, "lease_problem", text_or_null(sample->lease_problem));
    json_object_set_new(document, "reading",
                        json_pack("{s:I, s:f, s:I}", "number", (json_int_t)sample->number,
                                  "seconds", sample->read_seconds, "failed_readings",
                                  (json_int_t)sample->failed_readings));
    *text = json_dumps(document, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(document);
    return *text ? GK_OK : gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory writing the GPUs as JSON");
}

static json_t *known_or_null(gk_field field, double divisor)
{
    if (!field.known)
        return json_null();
    return divisor == 1 ? json_integer((json_int_t)field.value)
                        : json_real((double)field.value / divisor);
}

gk_status gk_monitor_history_json(gk_monitor *monitor, char **text)
{
    *text = NULL;
    const gk_sample *sample = gk_monitor_acquire(monitor);
    size_t gpus = sample ? sample->snapshot->gpu_count : 0;
    enum { MAX_POINTS = 4096 };
    gk_history_point *points = calloc(MAX_POINTS, sizeof *points);
    json_t *list = json_array();
    json_t *document = json_pack("{s:f, s:o}", "interval", gk_monitor_interval(monitor), "gpus",
                                 list);
    for (size_t g = 0; points && document && g < gpus; g++) {
        size_t n = gk_monitor_history(monitor, (unsigned)g, points, MAX_POINTS);
        json_t *series = json_array();
        for (size_t i = 0; i < n; i++) {
            const gk_history_point *p = &points[i];
            json_array_append_new(
                series, json_pack("[f, o, o, o, o, o]",
                                  (double)p->time.tv_sec + (double)p->time.tv_nsec / 1e9,
                                  known_or_null(p->utilization, 1),
                                  known_or_null(p->memory_used, 1),
                                  known_or_null(p->memory_total, 1),
                                  known_or_null(p->power, 1000.0),
                                  known_or_null(p->temperature, 1)));
        }
        json_array_append_new(list, json_pack("{s:I, s:o}", "index",
                                              (json_int_t)sample->snapshot->gpus[g].index,
                                              "points", series));
    }
    if (points && document)
        *text = json_dumps(document, JSON_COMPACT);
    gk_monitor_release(monitor, sample);
    free(points);
    json_decref(document);
    return *text ? GK_OK
                 : gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory writing the history as JSON");
}
