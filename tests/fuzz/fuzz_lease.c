/* Lease records (select/lease.c): the text of a file in the lease
 * directory, which any local user can write, then turned into the claims
 * that selection honours. */
#include "fuzz.h"

#include "select/lease.h"

#include <gpukit/select.h>

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gk_snapshot *snapshot;
    if (!snapshot)
        snapshot = fuzz_snapshot();
    char *text = fuzz_text(data, size);
    gk_lease lease;
    memset(&lease, 0, sizeof lease);
    if (gk_lease_parse(text, &lease)) {
        if (lease.device_count > GK_LEASE_MAX_DEVICES || lease.since.tv_nsec < 0 ||
            lease.since.tv_nsec >= 1000000000L)
            abort();
        gk_claim *claims;
        size_t count;
        if (gk_lease_claims(snapshot, &lease, 1, &claims, &count) == GK_OK) {
            gk_request request;
            gk_request_init(&request);
            gk_selection selection;
            if (gk_select(snapshot, NULL, claims, count, &request, &selection) == GK_OK)
                gk_selection_free(&selection);
            free(claims);
        }
    }
    free(text);
    return 0;
}
