/* `gpukit run`: pick GPUs, reserve them until the job ends, and start the job
 * on them: `gpukit run --min-free 20G -- python train.py`. */
#include "cli/cli.h"

#include "core/units.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpukit run [SELECTION] [OPTIONS] [--] COMMAND [ARGS...]\n"
            "\n"
            "Pick GPUs, reserve them for as long as COMMAND runs (however it ends), and run\n"
            "COMMAND on them. Jobs started together never get the same GPU: picking and\n"
            "reserving happen under one machine-wide lock ('gpukit leases' lists them).\n"
            "COMMAND gets CUDA_VISIBLE_DEVICES (the GPUs' UUIDs, so no numbering can\n"
            "mix them up), CUDA_DEVICE_ORDER=PCI_BUS_ID, NVIDIA_VISIBLE_DEVICES and\n"
            "GPUKIT_LEASE (the lease, for gpukit.current_reservation() in Python), and,\n"
            "when CUDA_VISIBLE_DEVICES was already set (by Slurm, say), its old value in\n"
            "GPUKIT_OUTER_CUDA_VISIBLE_DEVICES (where gpukit.dask's workers choose).\n"
            "gpukit then becomes COMMAND (exec): signals, exit status and process group\n"
            "are COMMAND's own.\n"
            "\n"
            CLI_REQUEST_HELP
            "\n"
            "Options:\n"
            "      --wait[=TIMEOUT]    when nothing fits, wait in line (first come, first\n"
            "                          served) until it does; TIMEOUT as 90, 30m, 2h (default:\n"
            "                          no limit)\n"
            "      --offload           run on the discrete GPU of an Optimus laptop (PRIME\n"
            "                          render offload, or bumblebee without an X server)\n"
            "      --tf-allow-growth   set TF_FORCE_GPU_ALLOW_GROWTH=true for TensorFlow\n"
            "      --cpu-fallback      when this process has no usable GPU (none, no driver,\n"
            "                          a driver failing, every GPU hidden by\n"
            "                          CUDA_VISIBLE_DEVICES or --exclude), run COMMAND on the\n"
            "                          CPU anyway, with CUDA_VISIBLE_DEVICES empty, and say so\n"
            "                          on stderr (busy GPUs still mean waiting or failing)\n"
            "      --env               print the variables COMMAND would get and exit\n"
            "                          (reserves nothing)\n"
            "  -v, --verbose           say what was chosen and why, on stderr\n"
            "  -h, --help              show this help\n"
            "\n"
            "Exit status: COMMAND's own, 128+N if signal N ended it; before it starts:\n"
            "2 bad usage, 3 no GPU here, 4 driver problem, 5 not enough GPUs fit,\n"
            "6 --wait timed out, or the lease directory stayed locked by another process\n"
            "(5 s without --wait; the message names it), 7 the lease directory is unsafe\n"
            "or unusable,\n"
            "126 COMMAND is not executable, 127 COMMAND was not found.\n"
            "\n"
            "Environment: GPUKIT_LEASE_DIR (default /tmp/gpukit-leases, shared by all users)\n");
}

enum { OPT_WAIT = 1, OPT_OFFLOAD, OPT_TF, OPT_ENV, OPT_CPU_FALLBACK };

/* The command line as one string, for the lease record. */
static void join_command(char **argv, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (; *argv && used + 1 < size; argv++) {
        int n = snprintf(buf + used, size - used, "%s%s", used ? " " : "", *argv);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* Single quotes for a shell: 'it'\''s'. */
static void print_export(const char *name, const char *value)
{
    printf("export %s='", name);
    for (const char *p = value; *p; p++) {
        if (*p == '\'')
            fputs("'\\''", stdout);
        else
            putchar(*p);
    }
    printf("'\n");
}

static void show_progress(const char *message, void *context)
{
    (void)context;
    fprintf(stderr, "gpukit run: %s\n", message);
}

/* Optimus: PRIME needs three variables; bumblebee needs a connection to its
 * daemon held for the job's whole life. */
static int prepare_offload(gk_job_env *env, int *bumblebee_fd, bool verbose)
{
    gk_optimus optimus;
    gk_optimus_detect(&optimus);
    if (optimus.kind == GK_OFFLOAD_BUMBLEBEE) {
        char why[256];
        if (gk_bumblebee_connect(NULL, bumblebee_fd, why, sizeof why) != GK_OK) {
            fprintf(stderr, "gpukit run: --offload: %s\n", gk_last_error());
            return GK_EXIT_DRIVER;
        }
        if (verbose)
            fprintf(stderr, "gpukit run: bumblebee: %s\n", why);
        return GK_EXIT_OK;
    }
    if (optimus.kind == GK_OFFLOAD_PRIME) {
        gk_job_env_add(env, "__NV_PRIME_RENDER_OFFLOAD", "1");
        gk_job_env_add(env, "__GLX_VENDOR_LIBRARY_NAME", "nvidia");
        gk_job_env_add(env, "__VK_LAYER_NV_optimus", "NVIDIA_only");
    } else if (verbose) {
        fprintf(stderr, "gpukit run: --offload: no Optimus setup here (%s); running as usual\n",
                optimus.detail[0] ? optimus.detail : "no hybrid graphics found");
    }
    return GK_EXIT_OK;
}

/* The exit code and message when COMMAND could not be started. */
static int launch_failed(gk_status status)
{
    fprintf(stderr, "gpukit run: %s\n", gk_last_error());
    return status == GK_ERR_NOT_FOUND ? GK_EXIT_COMMAND_MISSING : GK_EXIT_CANNOT_RUN;
}

/* Prints the variables as shell exports (--env). */
static int print_env(const gk_job_env *env)
{
    for (size_t i = 0; i < env->count; i++)
        print_export(env->names[i], env->values[i]);
    return fflush(stdout) == 0 ? GK_EXIT_OK : GK_EXIT_FAILURE;
}

/* --cpu-fallback: no usable GPU here, so the job runs without one, and says
 * so once (a notebook's kernel log shows it). */
static int run_on_cpu(char **command, const char *why, bool env_only)
{
    gk_job_env env = {0};
    gk_job_env_cpu(&env);
    if (env_only)
        return print_env(&env);
    fprintf(stderr, "gpukit run: no usable GPU, so running on the CPU: %s\n", why);
    gk_job_env_apply(&env);
    return launch_failed(gk_launch_exec(command));
}

int cmd_run(int argc, char **argv)
{
    static const struct option options[] = {
        CLI_REQUEST_OPTIONS,
        {"wait", optional_argument, NULL, OPT_WAIT},
        {"offload", no_argument, NULL, OPT_OFFLOAD},
        {"tf-allow-growth", no_argument, NULL, OPT_TF},
        {"env", no_argument, NULL, OPT_ENV},
        {"cpu-fallback", no_argument, NULL, OPT_CPU_FALLBACK},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    gk_request request;
    gk_request_init(&request);
    request.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    gk_reserve_options reserve = {.lease = true, .progress = show_progress};
    bool offload = false, tf_growth = false, env_only = false, verbose = false;
    bool cpu_fallback = false;
    int opt;
    /* "+": the first non-option starts COMMAND, whose own options stay its own. */
    while ((opt = getopt_long(argc, argv, "+n:vh", options, NULL)) != -1) {
        int handled = cli_request_option("run", opt, optarg, &request);
        if (handled == GK_EXIT_OK)
            continue;
        if (handled == GK_EXIT_USAGE)
            return GK_EXIT_USAGE;
        switch (opt) {
        case OPT_WAIT:
            reserve.wait = true;
            if (cli_parse_wait("run", optarg, &reserve.wait_seconds) != GK_EXIT_OK)
                return GK_EXIT_USAGE;
            break;
        case OPT_OFFLOAD:
            offload = true;
            break;
        case OPT_TF:
            tf_growth = true;
            break;
        case OPT_ENV:
            env_only = true;
            break;
        case OPT_CPU_FALLBACK:
            cpu_fallback = true;
            break;
        case 'v':
            verbose = true;
            break;
        case 'h':
            print_usage(stdout);
            return GK_EXIT_OK;
        default:
            return cli_usage_error("run");
        }
    }
    char **command = argv + optind;
    if (!*command && !env_only) {
        fprintf(stderr, "gpukit run: no command given; e.g. gpukit run -- python train.py\n");
        return GK_EXIT_USAGE;
    }
    if (env_only)
        reserve.lease = reserve.wait = false;
    char command_line[1024];
    join_command(command, command_line, sizeof command_line);
    reserve.command = command_line;

    gk_job_env env = {0};
    int bumblebee_fd = -1;
    if (offload) {
        int code = prepare_offload(&env, &bumblebee_fd, verbose);
        if (code != GK_EXIT_OK && cpu_fallback)
            return run_on_cpu(command, "the discrete GPU cannot be powered on", env_only);
        if (code != GK_EXIT_OK)
            return code;
    }

    gk_probe *probe = NULL;
    if (gk_probe_open(&probe) != GK_OK) {
        fprintf(stderr, "gpukit run: %s\n", gk_last_error());
        gk_bumblebee_disconnect(bumblebee_fd);
        return GK_EXIT_FAILURE;
    }
    gk_lease_dir *dir = NULL;
    gk_reservation reservation = {0};
    gk_status status = gk_lease_dir_open(NULL, reserve.lease, &dir);
    if (status == GK_OK)
        status = gk_reserve(probe, dir, &request, &reserve, &reservation);
    cli_print_warnings("run", reservation.warnings);
    gk_probe_close(probe);
    if (status != GK_OK) {
        /* no GPU at all for this process (none, no driver, or every one
         * hidden by CUDA_VISIBLE_DEVICES or --exclude): the CPU; GPUs that
         * are only busy still mean waiting or failing */
        bool none_usable = status == GK_ERR_BUSY && reservation.selection.count == 0;
        bool fallback = cpu_fallback && (gk_launch_cpu_fallback(status) || none_usable);
        int code = fallback ? GK_EXIT_OK
                            : cli_reserve_failed("run", status, reservation.selection.possible);
        char why[1024];
        snprintf(why, sizeof why, "%s", gk_last_error());
        gk_reservation_free(&reservation);
        gk_lease_dir_close(dir);
        gk_bumblebee_disconnect(bumblebee_fd);
        return fallback ? run_on_cpu(command, why, env_only) : code;
    }

    if (verbose) {
        char visible[GK_LEASE_MAX_DEVICES * 100];
        gk_launch_visible_devices(&reservation, request.count, visible, sizeof visible);
        fprintf(stderr, "gpukit run: chose %s (order %s); lock waited %.2f ms, held %.2f ms%s\n",
                visible, gk_order_name(request.order), reservation.lock_waited * 1e3,
                reservation.lock_held * 1e3, reservation.lease.name[0] ? "" : "; not reserved");
        cli_print_candidates(stderr, &reservation, request.count);
    }
    status = gk_job_env_gpus(&env, &reservation, request.count,
                             tf_growth ? GK_JOB_ENV_TF_ALLOW_GROWTH : 0);
    if (status == GK_OK && !env_only)
        status = gk_job_env_apply(&env);
    if (status != GK_OK) {
        fprintf(stderr, "gpukit run: %s\n", gk_last_error());
        gk_lease_release(dir, reservation.lease.name, reservation.lease_fd);
        gk_reservation_free(&reservation);
        gk_lease_dir_close(dir);
        gk_bumblebee_disconnect(bumblebee_fd);
        return GK_EXIT_FAILURE;
    }
    char lease_name[64];
    snprintf(lease_name, sizeof lease_name, "%s", reservation.lease.name);
    int lease_fd = reservation.lease_fd;
    gk_reservation_free(&reservation);
    if (env_only) {
        gk_lease_dir_close(dir);
        return print_env(&env);
    }

    int code = GK_EXIT_FAILURE;
    if (bumblebee_fd >= 0) {
        /* The daemon keeps the GPU on while the connection lives, so gpukit
         * stays as the job's parent and holds it: the job can neither close
         * it nor drop it by being interrupted. */
        status = gk_launch_supervise(command, &code);
        gk_bumblebee_disconnect(bumblebee_fd);
        gk_lease_release(dir, lease_name, lease_fd);
        gk_lease_dir_close(dir);
        return status == GK_OK ? code : launch_failed(status);
    }
    /* The lease descriptor is not close-on-exec: the job holds it. */
    gk_lease_dir_close(dir);
    return launch_failed(gk_launch_exec(command));
}
