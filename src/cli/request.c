/* The selection options shared by `gpukit pick` and `gpukit run`, and how
 * their outcome is reported. */
#include "cli/cli.h"

#include "core/units.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static bool parse_count(const char *arg, long low, long high, long *value)
{
    char *end;
    errno = 0;
    long n = strtol(arg, &end, 10);
    if (errno || end == arg || *end || n < low || n > high)
        return false;
    *value = n;
    return true;
}

static int bad_value(const char *command, const char *option, const char *why)
{
    fprintf(stderr, "gpukit %s: --%s: %s\n", command, option, why);
    return GK_EXIT_USAGE;
}

int cli_request_option(const char *command, int opt, const char *arg, gk_request *request)
{
    long n;
    uint64_t bytes;
    switch (opt) {
    case 'n':
        if (!parse_count(arg, 1, GK_LEASE_MAX_DEVICES, &n))
            return bad_value(command, "count", "give a whole number from 1 to 64");
        request->count = (unsigned)n;
        return GK_EXIT_OK;
    case CLI_REQUEST_FIRST + 0:
        if (gk_order_parse(arg, &request->order) != GK_OK)
            return bad_value(command, "order", gk_last_error());
        return GK_EXIT_OK;
    case CLI_REQUEST_FIRST + 1:
    case CLI_REQUEST_FIRST + 4:
        if (gk_parse_size(arg, &bytes) != GK_OK)
            return bad_value(command, opt == CLI_REQUEST_FIRST + 1 ? "min-free" : "min-total",
                             gk_last_error());
        *(opt == CLI_REQUEST_FIRST + 1 ? &request->min_free : &request->min_total) =
            (gk_field){bytes, true};
        return GK_EXIT_OK;
    case CLI_REQUEST_FIRST + 2:
        if (gk_parse_ratio(arg, &request->min_free_ratio) != GK_OK)
            return bad_value(command, "min-free-ratio", gk_last_error());
        return GK_EXIT_OK;
    case CLI_REQUEST_FIRST + 3:
        if (!parse_count(arg, 0, 100, &n))
            return bad_value(command, "max-util", "give a percentage from 0 to 100");
        request->max_util = (int)n;
        return GK_EXIT_OK;
    case CLI_REQUEST_FIRST + 5:
        if (!parse_count(arg, 0, INT_MAX, &n))
            return bad_value(command, "max-procs", "give a whole number, 0 or more");
        request->max_procs = (int)n;
        return GK_EXIT_OK;
    case CLI_REQUEST_FIRST + 6:
        request->gpus = arg;
        return GK_EXIT_OK;
    case CLI_REQUEST_FIRST + 7:
        request->exclude = arg;
        return GK_EXIT_OK;
    case CLI_REQUEST_FIRST + 8:
        request->share = true;
        return GK_EXIT_OK;
    case CLI_REQUEST_FIRST + 9:
        request->share = false;
        return GK_EXIT_OK;
    case CLI_REQUEST_FIRST + 10:
        if (!parse_count(arg, 0, LONG_MAX, &n))
            return bad_value(command, "seed", "give a whole number");
        request->seed = (uint64_t)n;
        return GK_EXIT_OK;
    }
    return -1;
}

int cli_parse_wait(const char *command, const char *arg, double *seconds)
{
    *seconds = 0;
    if (!arg)
        return GK_EXIT_OK;
    if (gk_parse_duration(arg, seconds) != GK_OK)
        return bad_value(command, "wait", gk_last_error());
    if (*seconds <= 0)
        return bad_value(command, "wait", "the timeout must be more than 0");
    return GK_EXIT_OK;
}

int cli_reserve_failed(const char *command, gk_status status)
{
    fprintf(stderr, "gpukit %s: ", command);
    switch (status) {
    case GK_ERR_NOT_FOUND:
        fprintf(stderr, "no GPU: %s\n", gk_last_error());
        return GK_EXIT_NO_GPU;
    case GK_ERR_DRIVER:
        fprintf(stderr, "%s\n", gk_last_error());
        return GK_EXIT_DRIVER;
    case GK_ERR_BUSY:
        fprintf(stderr, "not enough GPUs: %s\n", gk_last_error());
        if (!strstr(gk_last_error(), "waiting cannot help") && strcmp(command, "run") == 0)
            fprintf(stderr, "hint: --wait waits in line until they are free\n");
        return GK_EXIT_BUSY;
    case GK_ERR_TIMEOUT:
        fprintf(stderr, "%s\n", gk_last_error());
        return GK_EXIT_TIMEOUT;
    case GK_ERR_INVALID_ARGUMENT:
        fprintf(stderr, "%s\n", gk_last_error());
        return GK_EXIT_USAGE;
    case GK_ERR_UNSAFE:
    case GK_ERR_PERMISSION:
    case GK_ERR_IO:
        fprintf(stderr, "%s\n", gk_last_error());
        return GK_EXIT_LEASES;
    default:
        fprintf(stderr, "%s\n", gk_last_error());
        return GK_EXIT_FAILURE;
    }
}

void cli_print_warnings(const char *command, const char *warnings)
{
    const char *line = warnings;
    while (*line) {
        const char *end = strchr(line, '\n');
        int length = end ? (int)(end - line) : (int)strlen(line);
        fprintf(stderr, "gpukit %s: warning: %.*s\n", command, length, line);
        line += length + (end ? 1 : 0);
    }
}

void cli_print_candidates(FILE *out, const gk_reservation *reservation, unsigned count)
{
    const gk_selection *selection = &reservation->selection;
    char free_text[32], total_text[32];
    for (size_t i = 0; i < selection->count; i++) {
        const gk_candidate *c = &selection->candidates[i];
        char device[32];
        if (c->mig >= 0)
            snprintf(device, sizeof device, "GPU %u MIG %d", c->index, c->mig);
        else
            snprintf(device, sizeof device, "GPU %u", c->index);
        const char *verdict = c->rejected[0]          ? c->rejected
                              : i < count && selection->fits ? "chosen"
                                                             : "fits";
        fprintf(out, "  %-14s %s free of %s  %s\n", device,
                c->free.known ? gk_format_size(free_text, sizeof free_text, c->free.value) : "N/A",
                c->total.known ? gk_format_size(total_text, sizeof total_text, c->total.value)
                               : "N/A",
                verdict);
    }
}
