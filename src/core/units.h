/* Internal: reading and writing quantities the way people type them. */
#ifndef GK_CORE_UNITS_H
#define GK_CORE_UNITS_H

#include <gpukit/status.h>

#include <stddef.h>
#include <stdint.h>

/* Parses a memory size: a number of bytes ("1073741824"), or a number with a
 * unit. K, M, G, T (alone or as KiB, MiB, GiB, TiB) are binary, the way GPU
 * memory is counted; kB, MB, GB, TB are decimal. Letters may be in either
 * case, a trailing "B" is allowed ("512MB", "20gib"), and fractions are
 * allowed with a unit ("1.5G"). Rejects empty text, signs, spaces, unknown
 * units and values that overflow, with a message for gk_last_error(). */
gk_status gk_parse_size(const char *text, uint64_t *bytes);

/* Parses a fraction written "0.25" or "25%" into [0, 1]. */
gk_status gk_parse_ratio(const char *text, double *ratio);

/* Parses a duration in seconds, with an optional unit: "90", "1.5s", "10m",
 * "2h". */
gk_status gk_parse_duration(const char *text, double *seconds);

/* "20.0 GiB", "512.0 MiB", "0 B": sizes for people, in binary units. */
const char *gk_format_size(char *buf, size_t size, uint64_t bytes);

/* The local time of `when` as "2026-11-27 12:00:00", or, when it is no date
 * (a lease record may say any number of seconds, and localtime_r fails on
 * years past int), the raw seconds as date(1) takes them: "@99999999999". */
struct timespec;
const char *gk_format_local_time(char *buf, size_t size, const struct timespec *when);

#endif
