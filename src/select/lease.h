/* Internal: reading a lease record (select/lease.c), apart from the file
 * it comes from, so the parser can be tested and fuzzed on its own. */
#ifndef GK_SELECT_LEASE_H
#define GK_SELECT_LEASE_H

#include <gpukit/lease.h>

#include <stdbool.h>

/* Parses the text of one lease record (the format at the top of lease.c),
 * changing it in place, into `lease`, which the caller has zeroed. False
 * when it is not a gpukit lease record. */
bool gk_lease_parse(char *text, gk_lease *lease);

#endif
