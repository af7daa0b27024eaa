/* `gpukit pick`: which GPU(s) a job should use now, by policy, skipping the
 * ones other jobs have reserved. It only reads: `gpukit run` reserves. */
#include "cli/cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpukit pick [SELECTION] [--format=FORMAT] [-v]\n"
            "\n"
            "Print the GPU(s) that fit best now, skipping GPUs reserved by running\n"
            "'gpukit run' jobs. Picking does not reserve: between 'pick' and the start of\n"
            "your job another job may take the GPU; 'gpukit run' picks and reserves in one\n"
            "step (and 'gpukit run -- $SHELL' gives a shell with the GPU reserved).\n"
            "\n"
            CLI_REQUEST_HELP
            "\n"
            "Output:\n"
            "      --format=FORMAT     uuid (default: GPU-... or MIG-..., comma-separated: the\n"
            "                          value for CUDA_VISIBLE_DEVICES, right under every\n"
            "                          CUDA_DEVICE_ORDER), index (pci:3, pci:1,pci:5, MIG\n"
            "                          devices as pci:0:1: nvidia-smi's numbering, in PCI bus\n"
            "                          order, which --gpus accepts), env (an 'export\n"
            "                          CUDA_VISIBLE_DEVICES=...' line), json (fits, order,\n"
            "                          devices, candidates, why, diagnosis; also printed\n"
            "                          when there is no GPU or the driver fails)\n"
            "  -v, --verbose           also list every candidate and why it was skipped (stderr)\n"
            "  -h, --help              show this help\n"
            "\n"
            "Exit status: 0 picked, 2 bad usage, 3 no GPU here, 4 driver problem,\n"
            "5 not enough GPUs fit, 6 the lease directory stayed locked by another\n"
            "process for 5 s (the message names it), 7 the lease directory is unsafe or\n"
            "unreadable.\n");
}

/* No plain index: CUDA numbers GPUs in CUDA_DEVICE_ORDER, FASTEST_FIRST
 * unless told otherwise, so nvidia-smi's "3" pasted into
 * CUDA_VISIBLE_DEVICES can name another GPU on a machine of mixed GPUs.
 * UUIDs mean the same GPU everywhere; the index form says its numbering
 * (and CUDA reads "pci:3" as no GPU at all rather than a wrong one). */
typedef enum format { FORMAT_UUID, FORMAT_INDEX, FORMAT_ENV, FORMAT_JSON } format;

static bool parse_format(const char *name, format *out)
{
    static const char *const names[] = {"uuid", "index", "env", "json"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (format)i;
            return true;
        }
    }
    return false;
}

static json_t *candidate_json(const gk_snapshot *snapshot, const gk_candidate *c)
{
    const gk_gpu *gpu = &snapshot->gpus[c->gpu];
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer(c->index));
    json_object_set_new(o, "mig_index", c->mig >= 0 ? json_integer(c->mig) : json_null());
    json_object_set_new(o, "uuid", gk_json_string(c->uuid));
    json_object_set_new(o, "name", gk_json_string(c->mig >= 0 ? gpu->mig_devices[c->mig].name
                                                              : gpu->name));
    json_object_set_new(o, "memory.total", c->total.known
                                               ? json_integer((json_int_t)(c->total.value / CLI_MIB))
                                               : json_null());
    json_object_set_new(o, "memory.free", c->free.known
                                              ? json_integer((json_int_t)(c->free.value / CLI_MIB))
                                              : json_null());
    json_object_set_new(o, "reservations", json_integer(c->claims));
    json_object_set_new(o, "rejected", c->rejected[0] ? gk_json_string(c->rejected) : json_null());
    return o;
}

/* The JSON document, with the same keys whether or not anything fits, and
 * when picking failed (no candidates; `why` is the failure). "diagnosis"
 * is the snapshot's, as in `ls --json`. */
static bool print_json(const gk_reservation *r, const gk_request *request, const char *failure)
{
    const gk_selection *selection = &r->selection;
    json_t *chosen = json_array(), *all = json_array();
    for (size_t i = 0; i < selection->count; i++) {
        json_t *c = candidate_json(r->snapshot, &selection->candidates[i]);
        if (selection->fits && i < request->count)
            json_array_append(chosen, c);
        json_array_append_new(all, c);
    }
    const char *why = failure ? failure : selection->fits ? NULL : selection->why;
    const char *diagnosis = r->snapshot ? r->snapshot->diagnosis : "";
    json_t *o = json_object();
    json_object_set_new(o, "fits", json_boolean(selection->fits && !failure));
    json_object_set_new(o, "order", json_string(gk_order_name(request->order)));
    json_object_set_new(o, "devices", chosen);
    json_object_set_new(o, "candidates", all);
    json_object_set_new(o, "why", why ? gk_json_string(why) : json_null());
    json_object_set_new(o, "diagnosis", diagnosis[0] ? gk_json_string(diagnosis) : json_null());
    return cli_print_json(o);
}

static bool print_choice(const gk_reservation *r, const gk_request *request, format how)
{
    const gk_selection *selection = &r->selection;
    if (how == FORMAT_JSON)
        return print_json(r, request, NULL);
    if (!selection->fits)
        return true;
    char visible[GK_LEASE_MAX_DEVICES * 100];
    if (how == FORMAT_ENV) {
        gk_launch_visible_devices(r, request->count, visible, sizeof visible);
        printf("export CUDA_VISIBLE_DEVICES=%s\n", visible);
        return true;
    }
    for (unsigned k = 0; k < request->count; k++) {
        const gk_candidate *c = &selection->candidates[k];
        if (k)
            putchar(',');
        char label[32];
        if (how == FORMAT_UUID)
            printf("%s", c->uuid);
        else
            printf("%s", cli_device_label(label, sizeof label, c->index, c->mig));
    }
    putchar('\n');
    return true;
}

int cmd_pick(int argc, char **argv)
{
    static const struct option options[] = {
        CLI_REQUEST_OPTIONS,
        {"format", required_argument, NULL, 'f'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    gk_request request;
    gk_request_init(&request);
    request.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    format how = FORMAT_UUID;
    bool verbose = false;
    int opt;
    while ((opt = getopt_long(argc, argv, "n:f:vh", options, NULL)) != -1) {
        int handled = cli_request_option("pick", opt, optarg, &request);
        if (handled == GK_EXIT_OK)
            continue;
        if (handled == GK_EXIT_USAGE)
            return GK_EXIT_USAGE;
        switch (opt) {
        case 'f':
            if (!parse_format(optarg, &how)) {
                fprintf(stderr, "gpukit pick: --format must be uuid, index, env or json\n");
                return GK_EXIT_USAGE;
            }
            break;
        case 'v':
            verbose = true;
            break;
        case 'h':
            print_usage(stdout);
            return GK_EXIT_OK;
        default:
            return cli_usage_error("pick");
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpukit pick: unexpected argument '%s'\n", argv[optind]);
        return GK_EXIT_USAGE;
    }

    gk_probe *probe = NULL;
    gk_lease_dir *dir = NULL;
    if (gk_probe_open(&probe) != GK_OK) {
        fprintf(stderr, "gpukit pick: %s\n", gk_last_error());
        return GK_EXIT_FAILURE;
    }
    gk_status status = gk_lease_dir_open(NULL, false, &dir);
    gk_reservation reservation = {0};
    gk_reserve_options reserve = {.lease = false};
    if (status == GK_OK)
        status = gk_reserve(probe, dir, &request, &reserve, &reservation);
    cli_print_warnings("pick", reservation.warnings);
    int code = GK_EXIT_OK;
    if (status != GK_OK && status != GK_ERR_BUSY) {
        /* A script reading --format=json still gets a document whatever
         * failed (no GPU, the driver, the lease directory locked or
         * unsafe); the exit code says which. */
        char failure[1024];
        snprintf(failure, sizeof failure, "%s", gk_last_error());
        code = cli_reserve_failed("pick", status, false);
        if (how == FORMAT_JSON && !print_json(&reservation, &request, failure))
            code = GK_EXIT_FAILURE;
    } else {
        if (verbose)
            cli_print_candidates(stderr, &reservation, request.count);
        if (!print_choice(&reservation, &request, how))
            code = GK_EXIT_FAILURE;
        if (status == GK_ERR_BUSY)
            code = cli_reserve_failed("pick", status, false);
    }
    gk_reservation_free(&reservation);
    gk_lease_dir_close(dir);
    gk_probe_close(probe);
    if (fflush(stdout) != 0)
        return GK_EXIT_FAILURE;
    return code;
}
