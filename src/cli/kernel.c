/* `gpukit kernel`: Jupyter kernels that start on a GPU picked when the
 * kernel starts and keep it reserved exactly as long as the kernel lives.
 * A kernel is a kernelspec whose argv is `gpukit run [OPTIONS] -- python -m
 * ipykernel_launcher -f {connection_file}`; all the work at start-up is
 * gpukit run's. */
#include "cli/cli.h"

#include "core/files.h"
#include "core/units.h"
#include "launch/jupyter_dirs.h"
#include "launch/kernelspec.h"
#include "launch/python.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpukit kernel install [OPTIONS] [SELECTION]\n"
            "       gpukit kernel list [--json]\n"
            "       gpukit kernel remove NAME [--user | --sys-prefix | --prefix=DIR]\n"
            "\n"
            "Jupyter kernels that start on a GPU. Each time the kernel starts, gpukit run\n"
            "picks GPUs as SELECTION says, reserves them for as long as the kernel process\n"
            "lives (restart picks again), and starts Python there with CUDA_VISIBLE_DEVICES\n"
            "already set. Interrupts reach the kernel as with any kernel and keep the GPU.\n"
            "Without a GPU the kernel starts on the CPU and says so on its stderr.\n"
            "\n"
            "Install options:\n"
            "      --name=NAME         kernelspec name (default python3-gpu): ASCII letters,\n"
            "                          digits, '-', '.', '_'; folded to lower case\n"
            "      --display-name=TEXT what Jupyter shows (default \"Python 3 [GPU]\")\n"
            "      --user              install for this user only (JUPYTER_DATA_DIR, else\n"
            "                          XDG_DATA_HOME/jupyter, else ~/.local/share/jupyter)\n"
            "      --sys-prefix        install into the Python's environment (sys.prefix)\n"
            "      --prefix=DIR        install into DIR/share/jupyter/kernels\n"
            "                          (default: " GK_KERNEL_SYSTEM_DIR ",\n"
            "                          or --user when that is not writable)\n"
            "      --python=PATH       the kernel's Python (default: the one the jupyter\n"
            "                          command runs, else python3); it needs ipykernel\n"
            "      --gpu=ID            always this GPU (index or UUID), same as --gpus=ID\n"
            "      --wait[=TIMEOUT]    when nothing fits, wait in line at start-up\n"
            "      --offload           Optimus laptops: power the discrete GPU on only while\n"
            "                          the kernel runs (PRIME offload or bumblebee)\n"
            "      --tf-allow-growth   let TensorFlow take GPU memory as it needs it\n"
            "      --require-gpu       fail to start when there is no GPU, instead of\n"
            "                          running on the CPU\n"
            "      --force             replace a kernelspec of that name gpukit did not write\n"
            "  -h, --help              show this help\n"
            "\n"
            CLI_REQUEST_HELP
            "\n"
            "Exit status: 0 done, 1 could not write or remove (the message says why),\n"
            "2 bad usage or name, 8 no usable Python (missing, or without ipykernel).\n"
            "At kernel start the statuses of gpukit run apply (see gpukit run --help).\n");
}

/* --- gpukit kernel install --- */

enum {
    OPT_NAME = 1,
    OPT_DISPLAY_NAME,
    OPT_USER,
    OPT_SYS_PREFIX,
    OPT_PREFIX,
    OPT_PYTHON,
    OPT_GPU,
    OPT_WAIT,
    OPT_OFFLOAD,
    OPT_TF,
    OPT_REQUIRE_GPU,
    OPT_FORCE,
    OPT_JSON,
};

/* The `gpukit run` options a kernel is installed with, each as one
 * "--name=value" word. */
typedef struct run_options {
    char *words[64];
    size_t count;
} run_options;

static bool add_option(run_options *options, const char *name, const char *value)
{
    if (options->count + 1 >= sizeof options->words / sizeof options->words[0]) {
        fprintf(stderr, "gpukit kernel install: too many options\n");
        return false;
    }
    size_t size = strlen(name) + (value ? strlen(value) : 0) + 4;
    char *word = malloc(size);
    if (!word)
        return false;
    snprintf(word, size, "--%s%s%s", name, value ? "=" : "", value ? value : "");
    options->words[options->count++] = word;
    options->words[options->count] = NULL;
    return true;
}

static void free_options(run_options *options)
{
    for (size_t i = 0; i < options->count; i++)
        free(options->words[i]);
    options->count = 0;
}

/* The gpukit command itself, so the kernel runs this very build. */
static bool own_path(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n <= 0 || (size_t)n >= size - 1)
        return false;
    buf[n] = '\0';
    return true;
}

static int python_failed(const char *command)
{
    fprintf(stderr, "gpukit kernel %s: %s\n", command, gk_last_error());
    return GK_EXIT_PYTHON;
}

/* What a failed write means and how to get past it. */
static int write_failed(const char *what, gk_status status, const char *hint)
{
    fprintf(stderr, "gpukit kernel %s: %s\n", what, gk_last_error());
    if (status == GK_ERR_PERMISSION && hint)
        fprintf(stderr, "hint: %s\n", hint);
    return GK_EXIT_FAILURE;
}

typedef enum location { LOCATION_DEFAULT, LOCATION_USER, LOCATION_SYS_PREFIX, LOCATION_PREFIX } location;

/* --user, --sys-prefix or --prefix=DIR (opt and arg from getopt). */
static bool set_location(int opt, const char *arg, location *where, const char **prefix)
{
    location value = opt == OPT_USER     ? LOCATION_USER
                     : opt == OPT_PREFIX ? LOCATION_PREFIX
                                         : LOCATION_SYS_PREFIX;
    if (*where != LOCATION_DEFAULT && *where != value) {
        fprintf(stderr, "gpukit kernel: give only one of --user, --sys-prefix and --prefix\n");
        return false;
    }
    *where = value;
    if (opt == OPT_PREFIX)
        *prefix = arg;
    return true;
}

/* The kernels directory a location names; NULL after a message on failure. */
static char *kernels_dir_for(location where, const char *prefix, const gk_python *python,
                             const char *command)
{
    switch (where) {
    case LOCATION_USER:
        return gk_kernel_user_dir();
    case LOCATION_PREFIX:
        return gk_kernel_prefix_dir(prefix);
    case LOCATION_SYS_PREFIX:
        return gk_kernel_prefix_dir(python->prefix);
    case LOCATION_DEFAULT:
        break;
    }
    if (gk_can_create_under(GK_KERNEL_SYSTEM_DIR))
        return strdup(GK_KERNEL_SYSTEM_DIR);
    fprintf(stderr,
            "gpukit kernel %s: %s is not writable; installing for this user only (--user)\n",
            command, GK_KERNEL_SYSTEM_DIR);
    return gk_kernel_user_dir();
}

static int install(int argc, char **argv)
{
    static const struct option options[] = {
        CLI_REQUEST_OPTIONS,
        {"name", required_argument, NULL, OPT_NAME},
        {"display-name", required_argument, NULL, OPT_DISPLAY_NAME},
        {"user", no_argument, NULL, OPT_USER},
        {"sys-prefix", no_argument, NULL, OPT_SYS_PREFIX},
        {"prefix", required_argument, NULL, OPT_PREFIX},
        {"python", required_argument, NULL, OPT_PYTHON},
        {"gpu", required_argument, NULL, OPT_GPU},
        {"wait", optional_argument, NULL, OPT_WAIT},
        {"offload", no_argument, NULL, OPT_OFFLOAD},
        {"tf-allow-growth", no_argument, NULL, OPT_TF},
        {"require-gpu", no_argument, NULL, OPT_REQUIRE_GPU},
        {"force", no_argument, NULL, OPT_FORCE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    gk_request request;
    gk_request_init(&request);
    run_options run = {0};
    char name[256] = "python3-gpu";
    const char *display_name = "Python 3 [GPU]", *prefix = NULL, *python_name = NULL;
    location where = LOCATION_DEFAULT;
    bool require_gpu = false, force = false, offload = false;
    char wait_text[64] = "";
    int code = GK_EXIT_USAGE, opt, index;
    while ((index = -1, opt = getopt_long(argc, argv, "n:h", options, &index)) != -1) {
        int handled = cli_request_option("kernel install", opt, optarg, &request);
        if (handled == GK_EXIT_USAGE)
            goto done;
        if (handled == GK_EXIT_OK) {
            /* Recorded as given, for `gpukit run` to read at each start. */
            const struct option *long_option = index >= 0 ? &options[index] : &options[0];
            if (!add_option(&run, long_option->name, long_option->has_arg ? optarg : NULL))
                goto done;
            continue;
        }
        switch (opt) {
        case OPT_NAME:
            snprintf(name, sizeof name, "%s", optarg);
            if (!gk_kernel_name_valid(optarg) || strlen(optarg) >= sizeof name) {
                fprintf(stderr,
                        "gpukit kernel install: --name '%s': a kernel name is 1 to 200 ASCII "
                        "letters, digits, '-', '.' and '_', not starting with '.' (e.g. "
                        "python3-gpu)\n",
                        optarg);
                goto done;
            }
            break;
        case OPT_DISPLAY_NAME:
            display_name = optarg;
            break;
        case OPT_USER:
        case OPT_SYS_PREFIX:
        case OPT_PREFIX:
            if (!set_location(opt, optarg, &where, &prefix))
                goto done;
            break;
        case OPT_PYTHON:
            python_name = optarg;
            break;
        case OPT_GPU:
            if (cli_request_option("kernel install", CLI_REQUEST_FIRST + 6, optarg, &request) !=
                    GK_EXIT_OK ||
                !add_option(&run, "gpus", optarg))
                goto done;
            break;
        case OPT_WAIT: {
            double seconds = 0;
            if (cli_parse_wait("kernel install", optarg, &seconds) != GK_EXIT_OK)
                goto done;
            snprintf(wait_text, sizeof wait_text, "%s", optarg ? optarg : "no time limit");
            if (!add_option(&run, "wait", optarg))
                goto done;
            break;
        }
        case OPT_OFFLOAD:
        case OPT_TF:
            offload = offload || opt == OPT_OFFLOAD;
            if (!add_option(&run, opt == OPT_OFFLOAD ? "offload" : "tf-allow-growth", NULL))
                goto done;
            break;
        case OPT_REQUIRE_GPU:
            require_gpu = true;
            break;
        case OPT_FORCE:
            force = true;
            break;
        case 'h':
            print_usage(stdout);
            code = GK_EXIT_OK;
            goto done;
        default:
            cli_usage_error("kernel");
            goto done;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpukit kernel install: unexpected argument '%s'\n", argv[optind]);
        goto done;
    }
    for (char *p = name; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    if (!require_gpu && !add_option(&run, "cpu-fallback", NULL))
        goto done;

    char gpukit[PATH_MAX];
    if (!own_path(gpukit, sizeof gpukit)) {
        fprintf(stderr, "gpukit kernel install: cannot tell where the gpukit command is "
                        "(/proc/self/exe is unreadable)\n");
        code = GK_EXIT_FAILURE;
        goto done;
    }

    /* The kernel's Python must import ipykernel: say so now, not at the
     * first start inside Jupyter. */
    gk_python python;
    if (gk_python_find(python_name, &python) != GK_OK ||
        gk_python_probe(&python, true) != GK_OK) {
        code = python_failed("install");
        gk_python_free(&python);
        goto done;
    }
    if (!python.ipykernel) {
        fprintf(stderr,
                "gpukit kernel install: %s (%s) cannot import ipykernel: %s\n"
                "hint: install it there (%s -m pip install ipykernel, or apt-get install "
                "python3-ipykernel for the system Python), or name another Python with "
                "--python\n",
                python.path, python.found, python.ipykernel_error, python.path);
        gk_python_free(&python);
        code = GK_EXIT_PYTHON;
        goto done;
    }

    char *kernels_dir = kernels_dir_for(where, prefix, &python, "install");
    char selection[512], described[384];
    gk_request_describe(&request, described, sizeof described);
    snprintf(selection, sizeof selection, "%s, --order %s%s%s%s%s%s", described,
             gk_order_name(request.order),
             wait_text[0] ? "; waits in line (" : "", wait_text, wait_text[0] ? ")" : "",
             offload ? "; Optimus offload" : "",
             require_gpu ? "; fails without a GPU" : "; the CPU when there is no GPU");
    gk_kernelspec_request spec = {
        .name = name,
        .display_name = display_name,
        .gpukit = gpukit,
        .python = python.path,
        .run_options = run.words,
        .selection = selection,
        .debugger = atoi(python.ipykernel) >= 6,
        .replace_foreign = force,
    };
    char *installed = NULL;
    gk_status status = kernels_dir ? gk_kernelspec_install(kernels_dir, &spec, &installed)
                                   : GK_ERR_OUT_OF_MEMORY;
    if (status != GK_OK) {
        code = write_failed("install", status,
                            where == LOCATION_USER ? "check the permissions of your Jupyter "
                                                     "data directory"
                                                   : "use --user to install for yourself only, "
                                                     "or run as a user who may write there");
    } else {
        printf("Installed the Jupyter kernel \"%s\" (%s) in %s\n", display_name, name, installed);
        printf("  Python:  %s (ipykernel %s)\n", python.path, python.ipykernel);
        printf("  Selects: %s\n", selection);
        printf("Choose it in Jupyter, or try it: jupyter console --kernel=%s\n", name);
        code = GK_EXIT_OK;

        /* Jupyter finds the spec only where it looks. */
        gk_python jupyter = {0};
        gk_kernel_dirs dirs;
        bool same = !python_name;
        if (same || (gk_python_find(NULL, &jupyter) == GK_OK &&
                     gk_python_probe(&jupyter, false) == GK_OK)) {
            if (gk_kernel_dirs_find(same ? &python : &jupyter, &dirs) == GK_OK) {
                if (!gk_kernel_dirs_contain(&dirs, kernels_dir))
                    fprintf(stderr,
                            "gpukit kernel install: warning: Jupyter does not look in %s; add "
                            "%.*s to JUPYTER_PATH for it to find this kernel\n",
                            kernels_dir, (int)(strlen(kernels_dir) - strlen("/kernels")),
                            kernels_dir);
                gk_kernel_dirs_free(&dirs);
            }
        }
        if (!same)
            gk_python_free(&jupyter);
    }
    free(installed);
    free(kernels_dir);
    gk_python_free(&python);
done:
    free_options(&run);
    return code;
}

/* --- gpukit kernel list / remove --- */

/* Jupyter's kernel directories, with the prefix of the Python that runs
 * Jupyter when one can be found (without it that one place is left out). */
static void find_kernel_dirs(gk_kernel_dirs *dirs)
{
    gk_python jupyter;
    bool known = gk_python_find(NULL, &jupyter) == GK_OK && gk_python_probe(&jupyter, false) == GK_OK;
    if (gk_kernel_dirs_find(known ? &jupyter : NULL, dirs) != GK_OK)
        dirs->count = 0;
    gk_python_free(&jupyter);
}

static json_t *info_json(const gk_kernelspec_info *info)
{
    json_t *item = json_object();
    json_object_set_new(item, "name", gk_json_string(info->name));
    json_object_set_new(item, "display_name",
                        info->display_name ? gk_json_string(info->display_name) : json_null());
    json_object_set_new(item, "directory", gk_json_string(info->directory));
    json_object_set_new(item, "origin", gk_json_string(info->origin));
    json_object_set_new(item, "selection",
                        info->selection ? gk_json_string(info->selection) : json_null());
    json_object_set_new(item, "run_options", gk_json_string(info->options));
    json_object_set_new(item, "python", info->python ? gk_json_string(info->python) : json_null());
    json_object_set_new(item, "gpukit", info->gpukit ? gk_json_string(info->gpukit) : json_null());
    json_object_set_new(item, "shadowed_by",
                        info->shadowed_by ? gk_json_string(info->shadowed_by) : json_null());
    json_object_set_new(item, "problem",
                        info->problem ? gk_json_string(info->problem) : json_null());
    return item;
}

static int list(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool as_json = false;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        if (opt == OPT_JSON) {
            as_json = true;
        } else if (opt == 'h') {
            print_usage(stdout);
            return GK_EXIT_OK;
        } else {
            return cli_usage_error("kernel");
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpukit kernel list: unexpected argument '%s'\n", argv[optind]);
        return GK_EXIT_USAGE;
    }
    gk_kernel_dirs dirs;
    find_kernel_dirs(&dirs);
    gk_kernelspec_info *kernels;
    size_t count;
    gk_status status = gk_kernelspec_list(&dirs, &kernels, &count);
    gk_kernel_dirs_free(&dirs);
    if (status != GK_OK) {
        fprintf(stderr, "gpukit kernel list: %s\n", gk_last_error());
        return GK_EXIT_FAILURE;
    }
    bool ok = true;
    if (as_json) {
        json_t *array = json_array();
        for (size_t i = 0; i < count; i++)
            json_array_append_new(array, info_json(&kernels[i]));
        ok = cli_print_json(array);
    } else if (count == 0) {
        printf("No gpukit kernels are installed; add one with: gpukit kernel install\n");
    } else {
        for (size_t i = 0; i < count; i++) {
            const gk_kernelspec_info *k = &kernels[i];
            printf("%s%s  \"%s\"  (%s)  %s\n", i ? "\n" : "", k->name,
                   k->display_name ? k->display_name : "", k->origin, k->directory);
            printf("  selects: %s\n", k->selection ? k->selection : "(not recorded)");
            printf("  runs:    gpukit run %s -- %s\n", k->options,
                   k->python ? k->python : "(unknown Python)");
            if (k->shadowed_by)
                printf("  hidden:  Jupyter uses %s instead (same name, found first)\n",
                       k->shadowed_by);
            if (k->problem)
                printf("  broken:  %s\n", k->problem);
        }
        ok = fflush(stdout) == 0;
    }
    gk_kernelspec_list_free(kernels, count);
    return ok ? GK_EXIT_OK : GK_EXIT_FAILURE;
}

static int remove_kernel(int argc, char **argv)
{
    static const struct option options[] = {
        {"user", no_argument, NULL, OPT_USER},
        {"sys-prefix", no_argument, NULL, OPT_SYS_PREFIX},
        {"prefix", required_argument, NULL, OPT_PREFIX},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    location where = LOCATION_DEFAULT;
    const char *prefix = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case OPT_USER:
        case OPT_SYS_PREFIX:
        case OPT_PREFIX:
            if (!set_location(opt, optarg, &where, &prefix))
                return GK_EXIT_USAGE;
            break;
        case 'h':
            print_usage(stdout);
            return GK_EXIT_OK;
        default:
            return cli_usage_error("kernel");
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "gpukit kernel remove: give one kernel name, e.g. gpukit kernel remove "
                        "python3-gpu\n");
        return GK_EXIT_USAGE;
    }
    char name[256];
    snprintf(name, sizeof name, "%s", argv[optind]);
    if (!gk_kernel_name_valid(name) || strlen(argv[optind]) >= sizeof name) {
        fprintf(stderr, "gpukit kernel remove: '%s' is not a kernel name (1 to 200 ASCII "
                        "letters, digits, '-', '.' and '_', not starting with '.')\n",
                argv[optind]);
        return GK_EXIT_USAGE;
    }
    for (char *p = name; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');

    /* Where to look: the one place asked for, else everywhere Jupyter does. */
    gk_kernel_dirs dirs = {0};
    gk_python python = {0};
    if (where == LOCATION_DEFAULT) {
        find_kernel_dirs(&dirs);
    } else {
        if (where == LOCATION_SYS_PREFIX &&
            (gk_python_find(NULL, &python) != GK_OK || gk_python_probe(&python, false) != GK_OK))
            return python_failed("remove");
        char *dir = kernels_dir_for(where, prefix, &python, "remove");
        gk_python_free(&python);
        if (!dir)
            return GK_EXIT_FAILURE;
        dirs.items[dirs.count++] = (gk_kernel_dir){dir, "given"};
    }
    gk_kernelspec_info *kernels = NULL;
    size_t count = 0;
    gk_status status = gk_kernelspec_list(&dirs, &kernels, &count);
    const gk_kernelspec_info *found = NULL, *another = NULL;
    for (size_t i = 0; status == GK_OK && i < count; i++) {
        if (strcasecmp(kernels[i].name, name) != 0)
            continue;
        if (!found)
            found = &kernels[i];
        else if (!another)
            another = &kernels[i];
    }
    int code = GK_EXIT_OK;
    if (status != GK_OK) {
        fprintf(stderr, "gpukit kernel remove: %s\n", gk_last_error());
        code = GK_EXIT_FAILURE;
    } else if (!found) {
        /* Say whether a kernel of that name exists but is not gpukit's. */
        const char *foreign = NULL;
        char path[PATH_MAX];
        for (size_t d = 0; d < dirs.count && !foreign; d++) {
            snprintf(path, sizeof path, "%s/%s/kernel.json", dirs.items[d].path, name);
            if (access(path, F_OK) == 0)
                foreign = path;
        }
        if (foreign)
            fprintf(stderr, "gpukit kernel remove: %s is not a gpukit kernel; remove it with "
                            "jupyter kernelspec remove %s\n",
                    foreign, name);
        else
            fprintf(stderr, "gpukit kernel remove: there is no gpukit kernel named %s%s; "
                            "'gpukit kernel list' shows them\n",
                    name, where == LOCATION_DEFAULT ? "" : " there");
        code = GK_EXIT_FAILURE;
    } else if ((status = gk_kernelspec_remove(found->directory)) != GK_OK) {
        code = write_failed("remove", status, "run it as a user who may write there (the "
                                              "owner of the directory, or root)");
    } else {
        printf("Removed the Jupyter kernel %s from %s\n", found->name, found->directory);
        if (another)
            printf("Another gpukit kernel named %s remains in %s; Jupyter now uses that one\n",
                   another->name, another->directory);
    }
    gk_kernelspec_list_free(kernels, count);
    gk_kernel_dirs_free(&dirs);
    return code;
}

int cmd_kernel(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        print_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? GK_EXIT_USAGE : GK_EXIT_OK;
    }
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } actions[] = {{"install", install}, {"list", list}, {"remove", remove_kernel}};
    const char *action = argv[1];
    for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++) {
        if (strcmp(action, actions[i].name) == 0) {
            char name[32];
            snprintf(name, sizeof name, "kernel %s", action);
            cli_name_command(argv + 1, name); /* getopt's errors: "gpukit kernel list: ..." */
            return actions[i].run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "gpukit kernel: '%s' is not an action: install, list or remove\n", action);
    return GK_EXIT_USAGE;
}
