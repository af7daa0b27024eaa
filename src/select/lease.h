/* Internal: reading a lease record (select/lease.c), apart from the file
 * it comes from, so the parser can be tested and fuzzed on its own. */
#ifndef GK_SELECT_LEASE_H
#define GK_SELECT_LEASE_H

#include <gpukit/lease.h>

#include <stdbool.h>
#include <stdint.h>

/* Parses the text of one lease record (the format at the top of lease.c),
 * changing it in place, into `lease`, which the caller has zeroed. False
 * when it is not a gpukit lease record. */
bool gk_lease_parse(char *text, gk_lease *lease);

/* The parent pid from the text of /proc/PID/stat, which the claims read to
 * tell a job's processes; false when the text is not one. */
bool gk_lease_stat_parent(const char *stat, uint32_t *parent);

/* `pid` and its ancestors up to (not including) init, nearest first, read
 * from /proc: up to `max` pids into `chain`; returns how many. A job's
 * processes are those whose ancestry holds the job's pid. */
#include <stddef.h>
size_t gk_pid_ancestry(uint32_t pid, uint32_t *chain, size_t max);

#endif
