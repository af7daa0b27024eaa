/* Internal: the JSON form of a lease or waiting job, shared by `gpukit
 * leases --json` and the monitor's document (gpukit serve, gpukit.monitor). */
#ifndef GK_SELECT_JSON_H
#define GK_SELECT_JSON_H

#include <gpukit/lease.h>

#include <jansson.h>

json_t *gk_json_lease(const gk_lease *lease);

#endif
