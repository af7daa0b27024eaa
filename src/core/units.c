/* Sizes, ratios and durations as people type them on a command line. */
#define _POSIX_C_SOURCE 200809L /* localtime_r */
#include "core/units.h"

#include "core/error.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Reads "12" or "12.5" at the start of text; returns the characters used, or
 * 0 when there is no number there. Only digits and one dot: no sign, no
 * exponent, no leading space (strtod accepts all three). */
static size_t read_decimal(const char *text, double *value, bool *fractional)
{
    size_t i = 0, digits = 0;
    double result = 0;
    while (isdigit((unsigned char)text[i])) {
        result = result * 10 + (text[i++] - '0');
        digits++;
    }
    *fractional = false;
    if (text[i] == '.') {
        i++;
        double scale = 0.1;
        while (isdigit((unsigned char)text[i])) {
            result += (text[i++] - '0') * scale;
            scale /= 10;
            digits++;
        }
        *fractional = true;
    }
    *value = result;
    return digits ? i : 0;
}

typedef struct unit {
    const char *name;
    uint64_t factor;
} unit;

static const unit size_units[] = {
    {"", 1}, {"b", 1},
    {"k", 1ull << 10}, {"kib", 1ull << 10}, {"kb", 1000ull},
    {"m", 1ull << 20}, {"mib", 1ull << 20}, {"mb", 1000000ull},
    {"g", 1ull << 30}, {"gib", 1ull << 30}, {"gb", 1000000000ull},
    {"t", 1ull << 40}, {"tib", 1ull << 40}, {"tb", 1000000000000ull},
};

gk_status gk_parse_size(const char *text, uint64_t *bytes)
{
    static const char fix[] = "write a number of bytes or a number with a unit, e.g. 512M, "
                              "20G, 20GiB, 1.5T";
    if (!text || !*text)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "empty size; %s", fix);
    double value;
    bool fractional;
    size_t used = read_decimal(text, &value, &fractional);
    if (used == 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "'%s' is not a size; %s", text, fix);
    const char *suffix = text + used;
    for (size_t i = 0; i < sizeof size_units / sizeof size_units[0]; i++) {
        if (strcasecmp(suffix, size_units[i].name) != 0)
            continue;
        if (fractional && size_units[i].factor == 1)
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "'%s': a number of bytes must be whole; %s", text, fix);
        if (size_units[i].factor == 1) {
            /* Whole bytes, read exactly: doubles lose digits above 2^53. */
            uint64_t exact = 0;
            for (const char *p = text; isdigit((unsigned char)*p); p++) {
                if (exact > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
                    return gk_fail(GK_ERR_INVALID_ARGUMENT, "'%s' is too large", text);
                exact = exact * 10 + (uint64_t)(*p - '0');
            }
            *bytes = exact;
            return GK_OK;
        }
        double total = value * (double)size_units[i].factor;
        /* 2^64 is exactly representable; anything at or above it overflows. */
        if (total >= 18446744073709551616.0)
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "'%s' is too large", text);
        *bytes = (uint64_t)llround(total);
        return GK_OK;
    }
    return gk_fail(GK_ERR_INVALID_ARGUMENT, "'%s' has an unknown unit '%s'; %s", text, suffix,
                   fix);
}

gk_status gk_parse_ratio(const char *text, double *ratio)
{
    double value;
    bool fractional;
    size_t used = text ? read_decimal(text, &value, &fractional) : 0;
    if (used && strcmp(text + used, "%") == 0)
        value /= 100;
    else if (!used || text[used] != '\0')
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "'%s' is not a fraction; write e.g. 0.25 or 25%%", text ? text : "");
    if (value > 1)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "'%s' is more than 100%%", text);
    *ratio = value;
    return GK_OK;
}

gk_status gk_parse_duration(const char *text, double *seconds)
{
    static const unit duration_units[] = {
        {"", 1}, {"s", 1}, {"m", 60}, {"min", 60}, {"h", 3600}, {"d", 86400},
    };
    double value;
    bool fractional;
    size_t used = text ? read_decimal(text, &value, &fractional) : 0;
    if (used) {
        for (size_t i = 0; i < sizeof duration_units / sizeof duration_units[0]; i++) {
            if (strcasecmp(text + used, duration_units[i].name) == 0) {
                *seconds = value * (double)duration_units[i].factor;
                return GK_OK;
            }
        }
    }
    return gk_fail(GK_ERR_INVALID_ARGUMENT,
                   "'%s' is not a duration; write seconds, or a number with s, m, h or d "
                   "(e.g. 90, 10m, 2h)", text ? text : "");
}

const char *gk_format_size(char *buf, size_t size, uint64_t bytes)
{
    static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    size_t u = 0;
    double value = (double)bytes;
    while (value >= 1024 && u + 1 < sizeof names / sizeof names[0]) {
        value /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, size, "%.1f %s", value, names[u]);
    return buf;
}

const char *gk_format_local_time(char *buf, size_t size, const struct timespec *when)
{
    struct tm local;
    time_t seconds = when->tv_sec;
    if (!localtime_r(&seconds, &local) || strftime(buf, size, "%Y-%m-%d %H:%M:%S", &local) == 0)
        snprintf(buf, size, "@%lld", (long long)seconds);
    return buf;
}
