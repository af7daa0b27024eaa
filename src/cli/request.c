/* The selection options shared by `gpukit pick` and `gpukit run`, and how
 * their outcome is reported. */
#include "cli/cli.h"

#include "core/units.h"

#include <string.h>

static int bad_value(const char *command, const char *option, const char *why)
{
    fprintf(stderr, "gpukit %s: --%s: %s\n", command, option, why);
    return GK_EXIT_USAGE;
}

int cli_request_option(const char *command, int opt, const char *arg, gk_request *request)
{
    /* The long options' names, by id; the library parses the values. */
    static const char *const names[] = {
        "order", "min-free", "min-free-ratio", "max-util", "min-total", "max-procs",
        "gpus", "exclude", "share", "exclusive", "seed",
    };
    const int count = (int)(sizeof names / sizeof names[0]);
    const char *name;
    if (opt == 'n')
        name = "count";
    else if (opt >= CLI_REQUEST_FIRST && opt < CLI_REQUEST_FIRST + count)
        name = names[opt - CLI_REQUEST_FIRST];
    else
        return -1;
    if (gk_request_set(request, name, arg) != GK_OK)
        return bad_value(command, name, gk_last_error());
    return GK_EXIT_OK;
}

int cli_parse_wait(const char *command, const char *arg, double *seconds)
{
    *seconds = 0;
    if (arg && gk_parse_wait(arg, seconds) != GK_OK)
        return bad_value(command, "wait", gk_last_error());
    return GK_EXIT_OK;
}

int cli_reserve_failed(const char *command, gk_status status, bool offer_wait)
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
        if (offer_wait)
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
        cli_device_label(device, sizeof device, c->index, c->mig);
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
