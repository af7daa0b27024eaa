/* Internal to the gpukit command: what the subcommands share. */
#ifndef GK_CLI_H
#define GK_CLI_H

#include <gpukit/gpukit.h>
#include <gpukit/info.h>

#include "probe/json.h"

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
    GK_EXIT_BUSY = 5,    /* pick/run: not enough GPUs fit the request */
    GK_EXIT_TIMEOUT = 6, /* run --wait: still nothing fits when the time is up; or the
                          * lease directory stayed locked by another process */
    GK_EXIT_LEASES = 7,  /* the lease directory is unsafe or unusable */
    GK_EXIT_PYTHON = 8,  /* kernel: no usable Python (missing, or without ipykernel) */
    GK_EXIT_LISTEN = 9,  /* serve: cannot listen on the address */
    GK_EXIT_CANNOT_RUN = 126,    /* run: the command is not executable */
    GK_EXIT_COMMAND_MISSING = 127, /* run: no such command */
};

int cmd_overview(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_pick(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_leases(int argc, char **argv);
int cmd_kernel(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_slurm(int argc, char **argv);

/* --- shared helpers (common.c) --- */

/* Opens the probe and takes one snapshot; prints the error and returns NULL
 * on failure. */
gk_snapshot *cli_take_snapshot(unsigned flags);

/* Names the command in argv[0] as "gpukit NAME" ("gpukit kernel install"):
 * getopt_long prints its errors after argv[0], so they say which command
 * ("gpukit pick: unrecognized option '--x'"). */
void cli_name_command(char **argv, const char *name);

/* For a bad option, after getopt_long's own line: where the help is, as
 * well-behaved tools say it, rather than the whole help on stderr. `name`
 * is the command ("pick"), NULL for plain `gpukit`. Returns GK_EXIT_USAGE. */
int cli_usage_error(const char *name);

/* The exit code a snapshot deserves (see the enum above). */
int cli_exit_code(const gk_snapshot *snapshot);

/* --interval=SECONDS of top and serve: 0.05 to 3600 seconds, with an
 * optional unit (gk_parse_duration); false after saying why on stderr. */
bool cli_parse_interval(const char *command, const char *text, double *seconds);

/* Parses --color=WHEN ("auto", "always", "never"); false on a bad value. */
bool cli_parse_color(const char *when, int *mode);
/* Whether to color `stream`: mode -1 auto (a TTY, TERM not dumb, NO_COLOR
 * unset), 0 never, 1 always. */
bool cli_use_color(int mode, FILE *stream);

/* "45" or "N/A" into buf, dividing by `divisor`. */
const char *cli_field(char *buf, size_t size, gk_field field, uint64_t divisor);

/* "°C" in a UTF-8 locale, "C" otherwise. */
const char *cli_celsius(void);

/* The CPU as "MODEL, N cores usable of M, X GiB memory, Y GiB available". */
void cli_describe_cpu(char *buf, size_t size, const gk_cpu *cpu);

/* A GPU (mig < 0) or MIG device by nvidia-smi's number, saying which
 * numbering it is: "pci:3", "pci:0:1". A bare "3" would mean another GPU to
 * CUDA, which counts FASTEST_FIRST unless CUDA_DEVICE_ORDER says otherwise.
 * Returns buf. */
const char *cli_device_label(char *buf, size_t size, unsigned index, int mig);

/* --- selection options shared by pick and run (request.c) --- */

/* Long options of the selection flags; ids from CLI_REQUEST_FIRST up. */
enum { CLI_REQUEST_FIRST = 1000, CLI_REQUEST_LAST = 1020 };
#define CLI_REQUEST_OPTIONS                                                      \
    {"count", required_argument, NULL, 'n'},                                    \
    {"order", required_argument, NULL, CLI_REQUEST_FIRST + 0},                  \
    {"min-free", required_argument, NULL, CLI_REQUEST_FIRST + 1},               \
    {"min-free-ratio", required_argument, NULL, CLI_REQUEST_FIRST + 2},         \
    {"max-util", required_argument, NULL, CLI_REQUEST_FIRST + 3},               \
    {"min-total", required_argument, NULL, CLI_REQUEST_FIRST + 4},              \
    {"max-procs", required_argument, NULL, CLI_REQUEST_FIRST + 5},              \
    {"gpus", required_argument, NULL, CLI_REQUEST_FIRST + 6},                   \
    {"exclude", required_argument, NULL, CLI_REQUEST_FIRST + 7},                \
    {"share", no_argument, NULL, CLI_REQUEST_FIRST + 8},                        \
    {"exclusive", no_argument, NULL, CLI_REQUEST_FIRST + 9},                    \
    {"seed", required_argument, NULL, CLI_REQUEST_FIRST + 10}
#define CLI_REQUEST_HELP                                                                    \
    "Selection:\n"                                                                          \
    "  -n, --count=N           how many GPUs (default 1)\n"                                 \
    "      --order=ORDER       free (most free memory, the default), free-ratio, power\n"   \
    "                          (lowest draw/limit), util (least busy), index (first that\n"  \
    "                          fits), random; ties go to the lower index\n"                  \
    "      --min-free=SIZE     at least SIZE free on each GPU: 512M, 20G, 20GiB, 1.5T,\n"   \
    "                          bytes (K/M/G/T are binary, kB/MB/GB/TB decimal)\n"            \
    "      --min-free-ratio=R  at least R of the memory free: 0.5 or 50%%\n"                \
    "      --max-util=PCT      at most PCT %% busy\n"                                        \
    "      --min-total=SIZE    at least SIZE of memory in all\n"                            \
    "      --max-procs=N       at most N processes already running there\n"                \
    "      --gpus=LIST         only these GPUs: nvidia-smi's indices (0,1 or pci:0,pci:1;\n" \
    "                          0:1 is MIG device 1 of GPU 0) or GPU-/MIG- UUIDs (unique\n"  \
    "                          prefixes are enough)\n"                                    \
    "      --exclude=LIST      never these GPUs\n"                                         \
    "      --exclusive         skip GPUs another job has reserved (the default)\n"          \
    "      --share             share GPUs with other --share jobs; their --min-free is\n"   \
    "                          set aside, less what their processes already use\n"          \
    "      --seed=N            the shuffle of --order=random\n"                              \
    "GPUs in MIG mode offer their MIG devices (for --count=1). CUDA_VISIBLE_DEVICES,\n"     \
    "when set (by Slurm or a container), limits the choice to the GPUs it names.\n"

/* Applies one selection option to `request`; returns GK_EXIT_OK when it was
 * one, -1 when `opt` is not a selection option, GK_EXIT_USAGE (after saying
 * why) for a bad value. */
int cli_request_option(const char *command, int opt, const char *arg, gk_request *request);

/* --wait[=TIMEOUT]: GK_EXIT_OK with *seconds (0 without a TIMEOUT: no
 * limit), or GK_EXIT_USAGE after saying why. */
int cli_parse_wait(const char *command, const char *arg, double *seconds);

/* The exit code and message for a failed gk_reserve(). `offer_wait`: the
 * command has --wait and the selection could fit once other jobs end
 * (gk_selection.possible), so the hint to wait is printed for GK_ERR_BUSY. */
int cli_reserve_failed(const char *command, gk_status status, bool offer_wait);

/* Prints each line of a lease directory's warnings with the command's prefix. */
void cli_print_warnings(const char *command, const char *warnings);

/* Prints every candidate, chosen ones first, with why the others were
 * skipped (pick -v, run -v). */
void cli_print_candidates(FILE *out, const gk_reservation *reservation, unsigned count);

/* --- JSON (json.c; the documents come from probe/json.h) --- */
/* Writes `value` (consumed) to stdout with a newline; false on failure. */
bool cli_print_json(json_t *value);

#define CLI_MIB (1024ull * 1024ull)

#endif
