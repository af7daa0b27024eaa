/* The gpukit command: dispatches to one file per subcommand. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"ls", cmd_ls, "list every GPU with its state (--json, --csv for scripts)"},
    {"info", cmd_info, "is a GPU usable, and which device should programs use"},
    {"pick", cmd_pick, "print the GPU(s) that fit a request best now"},
    {"run", cmd_run, "reserve GPU(s) and run a command on them (--wait to queue)"},
    {"leases", cmd_leases, "list the GPUs reserved by running jobs, and who waits"},
    {"kernel", cmd_kernel, "install Jupyter kernels that start on a GPU (list, remove)"},
    {"top", cmd_top, "watch every GPU and its processes live (ncurses; --once for text)"},
    {"serve", cmd_serve, "serve Prometheus metrics and a live dashboard over HTTP"},
    {"slurm", cmd_slurm, "Slurm nodes: gres.conf from NVML, job prolog/epilog records"},
    {"bench", cmd_bench, "time copy, add, sum, matmul and a user kernel on CPU and GPUs"},
};

static void print_help(FILE *out)
{
    fprintf(out,
            "Usage: gpukit [OPTIONS]          live overview of every GPU and its processes\n"
            "       gpukit COMMAND [OPTIONS]\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n"
            "Overview options:\n"
            "  -i, --interval=SECONDS  redraw every SECONDS until interrupted (watch mode)\n"
            "      --no-processes      do not list the processes on each GPU\n"
            "      --color=WHEN        auto (default: only on a terminal), always or never\n"
            "  -h, --help              show this help;  gpukit COMMAND --help for a command\n"
            "  -V, --version           show the version\n"
            "\n"
            "Exit status:\n"
            "  0  GPUs found and every one answered\n"
            "  1  gpukit itself failed (out of memory, cannot write output)\n"
            "  2  bad command line\n"
            "  3  no NVIDIA GPU on this machine: work will run on the CPU\n"
            "  4  NVIDIA driver problem, or a GPU is lost or not accessible\n"
            "     (everything that could be read is still printed)\n"
            "  5  pick/run: not enough GPUs fit the request\n"
            "  6  run --wait: the time was up before they did\n"
            "  7  the lease directory is unsafe or unusable\n"
            "  8  kernel: no usable Python (missing, or without ipykernel)\n"
            "  9  serve: cannot listen on the address\n"
            "  run exits with its command's status (126/127: it could not be started)\n"
            "\n"
            "Environment:\n"
            "  GPUKIT_NVML_LIBRARY   path of libnvidia-ml.so.1 to use instead of the default\n"
            "  GPUKIT_LEASE_DIR      where reservations live (default /tmp/gpukit-leases)\n"
            "  CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER   resolved to show cuda:N numbering\n"
            "  NO_COLOR              disables color\n");
}

/* The command's exit code, or a failure when its output could not all be
 * written (a full disk, a closed pipe): said once here for every command,
 * as coreutils' close_stdout does, rather than lost with exit code 0. */
static int finish(const char *name, int code)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return code;
    fprintf(stderr, "gpukit%s%s: cannot write the output: %s\n", name ? " " : "",
            name ? name : "", strerror(errno ? errno : EIO));
    return code == GK_EXIT_OK ? GK_EXIT_FAILURE : code;
}

int main(int argc, char **argv)
{
    if (argc >= 2) {
        const char *first = argv[1];
        if (strcmp(first, "-h") == 0 || strcmp(first, "--help") == 0 ||
            strcmp(first, "help") == 0) {
            print_help(stdout);
            return finish(NULL, GK_EXIT_OK);
        }
        if (strcmp(first, "-V") == 0 || strcmp(first, "--version") == 0) {
            printf("gpukit %s\n", GPUKIT_VERSION);
            return finish(NULL, GK_EXIT_OK);
        }
        if (first[0] != '-') {
            for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                if (strcmp(first, commands[i].name) == 0) {
                    cli_name_command(argv + 1, commands[i].name);
                    return finish(commands[i].name, commands[i].run(argc - 1, argv + 1));
                }
            fprintf(stderr, "gpukit: '%s' is not a gpukit command; see 'gpukit --help'\n",
                    first);
            return GK_EXIT_USAGE;
        }
    }
    return finish(NULL, cmd_overview(argc, argv));
}
