/* Helpers shared by the gpukit subcommands. */
#include "cli/cli.h"

#include "core/units.h"

#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

gk_snapshot *cli_take_snapshot(unsigned flags)
{
    gk_probe *probe;
    gk_snapshot *snapshot = NULL;
    if (gk_probe_open(&probe) != GK_OK) {
        fprintf(stderr, "gpukit: %s\n", gk_last_error());
        return NULL;
    }
    if (gk_probe_read(probe, flags, &snapshot) != GK_OK)
        fprintf(stderr, "gpukit: %s\n", gk_last_error());
    gk_probe_close(probe);
    return snapshot;
}

void cli_name_command(char **argv, const char *name)
{
    /* One command runs per process; argv[0] must outlive getopt's use. */
    static char program[64];
    snprintf(program, sizeof program, "gpukit %s", name);
    argv[0] = program;
}

int cli_usage_error(const char *name)
{
    fprintf(stderr, "Try 'gpukit%s%s --help' for more information.\n", name ? " " : "",
            name ? name : "");
    return GK_EXIT_USAGE;
}

int cli_exit_code(const gk_snapshot *snapshot)
{
    switch (snapshot->absence) {
    case GK_ABSENCE_NONE:
        break;
    case GK_ABSENCE_NO_DRIVER:
    case GK_ABSENCE_NO_DEVICES:
        return GK_EXIT_NO_GPU;
    case GK_ABSENCE_DRIVER_NOT_LOADED:
    case GK_ABSENCE_NO_PERMISSION:
    case GK_ABSENCE_DRIVER_ERROR:
        return GK_EXIT_DRIVER;
    }
    return gk_snapshot_usable_count(snapshot) == snapshot->gpu_count ? GK_EXIT_OK
                                                                     : GK_EXIT_DRIVER;
}

bool cli_parse_color(const char *when, int *mode)
{
    if (!when || strcmp(when, "auto") == 0)
        *mode = -1;
    else if (strcmp(when, "always") == 0)
        *mode = 1;
    else if (strcmp(when, "never") == 0)
        *mode = 0;
    else
        return false;
    return true;
}

bool cli_use_color(int mode, FILE *stream)
{
    if (mode >= 0)
        return mode == 1;
    const char *term = getenv("TERM");
    const char *no_color = getenv("NO_COLOR");
    return isatty(fileno(stream)) && !(term && strcmp(term, "dumb") == 0) &&
           !(no_color && *no_color);
}

const char *cli_field(char *buf, size_t size, gk_field field, uint64_t divisor)
{
    if (!field.known)
        snprintf(buf, size, "N/A");
    else
        snprintf(buf, size, "%" PRIu64, field.value / divisor);
    return buf;
}

void cli_describe_cpu(char *buf, size_t size, const gk_cpu *cpu)
{
    char memory[96] = "";
    if (cpu->memory_total.known && cpu->memory_available.known)
        snprintf(memory, sizeof memory, ", %.1f GiB memory, %.1f GiB available",
                 (double)cpu->memory_total.value / (1u << 30),
                 (double)cpu->memory_available.value / (1u << 30));
    snprintf(buf, size, "%s, %u cores usable of %u%s", cpu->model[0] ? cpu->model : "unknown CPU",
             cpu->usable_cores, cpu->logical_cores, memory);
}

const char *cli_celsius(void)
{
    /* The user's character set matters only here, so the locale is loaded
     * here, not at start-up where every `gpukit run` would pay for it. */
    static const char *symbol;
    if (!symbol) {
        setlocale(LC_CTYPE, "");
        symbol = strcmp(nl_langinfo(CODESET), "UTF-8") == 0 ? "\u00b0C" : "C";
    }
    return symbol;
}

const char *cli_device_label(char *buf, size_t size, unsigned index, int mig)
{
    if (mig >= 0)
        snprintf(buf, size, "pci:%u:%d", index, mig);
    else
        snprintf(buf, size, "pci:%u", index);
    return buf;
}

bool cli_parse_interval(const char *command, const char *text, double *seconds)
{
    if (gk_parse_duration(text, seconds) == GK_OK && *seconds >= 0.05 && *seconds <= 3600)
        return true;
    fprintf(stderr, "gpukit %s: --interval=%s: give seconds from 0.05 to 3600\n", command, text);
    return false;
}
