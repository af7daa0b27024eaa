/* Internal to the gpukit command: what the subcommands share. */
#ifndef GK_CLI_H
#define GK_CLI_H

#include <gpukit/gpukit.h>

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Exit codes, documented in `gpukit --help` and the README. */
enum {
    GK_EXIT_OK = 0,      /* GPUs found and all of them answered */
    GK_EXIT_FAILURE = 1, /* gpukit itself failed (out of memory, write error) */
    GK_EXIT_USAGE = 2,   /* bad command line */
    GK_EXIT_NO_GPU = 3,  /* no NVIDIA GPU here: the CPU is reported instead */
    GK_EXIT_DRIVER = 4,  /* driver problem, or a GPU is lost or not accessible */
};

int cmd_overview(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_info(int argc, char **argv);

/* --- shared helpers (common.c) --- */

/* Opens the probe and takes one snapshot; prints the error and returns NULL
 * on failure. */
gk_snapshot *cli_take_snapshot(unsigned flags);

/* The exit code a snapshot deserves (see the enum above). */
int cli_exit_code(const gk_snapshot *snapshot);

/* Parses --color=WHEN ("auto", "always", "never"); false on a bad value. */
bool cli_parse_color(const char *when, int *mode);
/* Whether to color `stream`: mode -1 auto (a TTY, TERM not dumb, NO_COLOR
 * unset), 0 never, 1 always. */
bool cli_use_color(int mode, FILE *stream);

/* "45" or "N/A" into buf, dividing by `divisor`. */
const char *cli_field(char *buf, size_t size, gk_field field, uint64_t divisor);

/* "°C" in a UTF-8 locale, "C" otherwise. */
const char *cli_celsius(void);

/* "12.4" from the driver's 12040, "" when unknown. */
const char *cli_cuda_version(char *buf, size_t size, gk_field version);

/* A one-line description of the state of a faulty GPU ("LOST", ...). */
const char *cli_state_name(gk_gpu_state state);

/* The cuda:N index of a GPU in the view, or -1. */
int cli_cuda_index(const gk_cuda_view *view, size_t gpu);

/* The CPU as "MODEL, N cores usable of M, X GiB memory, Y GiB available". */
void cli_describe_cpu(char *buf, size_t size, const gk_cpu *cpu);

/* --- JSON (json.c) --- */
json_t *cli_snapshot_json(const gk_snapshot *snapshot, const gk_cuda_view *view,
                          bool processes);
json_t *cli_cpu_json(const gk_cpu *cpu);
/* Writes `value` (consumed) to stdout with a newline; false on failure. */
bool cli_print_json(json_t *value);

#define CLI_MIB (1024ull * 1024ull)

#endif
