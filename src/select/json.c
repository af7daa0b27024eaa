/* The JSON form of a lease (select/json.h). */
#include "select/json.h"

#include "core/units.h"
#include "probe/json.h"

json_t *gk_json_lease(const gk_lease *lease)
{
    char since[64];
    gk_format_local_time(since, sizeof since, &lease->since);
    json_t *devices = json_array();
    for (size_t d = 0; d < lease->device_count; d++)
        json_array_append_new(devices, json_pack("{s:I, s:o}", "index",
                                                 (json_int_t)lease->indices[d], "uuid",
                                                 gk_json_string(lease->uuids[d])));
    json_t *o = json_object();
    json_object_set_new(o, "state", json_string(lease->waiting ? "waiting" : "holding"));
    json_object_set_new(o, "slurm", json_boolean(lease->slurm));
    json_object_set_new(o, "devices", devices);
    json_object_set_new(o, "pid", json_integer(lease->pid));
    json_object_set_new(o, "user", gk_json_string(lease->user));
    json_object_set_new(o, "uid", json_integer(lease->uid));
    json_object_set_new(o, "since", json_string(since));
    json_object_set_new(o, "since_epoch", json_real((double)lease->since.tv_sec +
                                                    (double)lease->since.tv_nsec / 1e9));
    json_object_set_new(o, "share", json_boolean(lease->share));
    json_object_set_new(o, "reserved_bytes", json_integer((json_int_t)lease->reserved));
    json_object_set_new(o, "command", gk_json_string(lease->command));
    json_object_set_new(o, "request",
                        lease->waiting ? gk_json_string(lease->request) : json_null());
    json_object_set_new(o, "file", gk_json_string(lease->name));
    return o;
}
