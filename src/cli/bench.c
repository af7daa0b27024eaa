/* `gpukit bench`: a short CPU-vs-GPU comparison on every device - copy,
 * elementwise add, sum, matmul and one user kernel - printed as a table of
 * times, GB/s or GFLOP/s and the speedup over the CPU. The first thing to
 * run on a new machine to see what its GPU gives. */
#define _GNU_SOURCE
#include "cli/cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_DEVICES = 32, OPERATIONS = 5 };

typedef struct settings {
    int64_t size;   /* elements for copy, add, sum, the user kernel */
    int64_t matrix; /* matmul order */
    int repeat;
} settings;

/* One measured operation on one device. */
typedef struct result {
    const char *operation;
    double seconds; /* median; < 0 when it failed */
    double amount;  /* bytes moved, or floating-point operations */
    bool flops;
    char error[256];
} result;

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpukit bench [--device NAME]... [--size N] [--matmul N] [--repeat R]\n"
            "                    [--json]\n"
            "\n"
            "Time copy, elementwise add and sum over N float32 values, an N x N float32\n"
            "matmul and one user kernel (z = 2x + y) on the CPU and on every CUDA and\n"
            "OpenCL device, and print the times, the GB/s or GFLOP/s reached and the\n"
            "speedup over the CPU. Each time is the median of R runs after a warm-up\n"
            "run (which also compiles the kernels).\n"
            "\n"
            "  -d, --device NAME  measure only this device (repeatable): cpu, cuda:N,\n"
            "                     opencl:P:D (default: all of them)\n"
            "  -s, --size N       elements for copy/add/sum/kernel (default 16777216)\n"
            "  -m, --matmul N     matrix order for matmul (default 1024)\n"
            "  -r, --repeat R     timed runs per operation (default 5)\n"
            "      --json         machine-readable output\n"
            "  -h, --help         show this help\n"
            "\n"
            "Exit status: 0 measured, 1 an operation failed on some device, 2 bad usage,\n"
            "4 a device named with --device cannot be used.\n");
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The arrays and kernel one device's measurements use. */
typedef struct workload {
    gk_device device;
    gk_array *a, *b, *out, *left, *right;
    gk_kernel *kernel; /* NULL on the CPU: user kernels need a GPU or OpenCL */
} workload;

/* Runs operation `which` once; GK_OK or the failure. */
static gk_status run_once(workload *w, int which)
{
    gk_array *result_array = NULL;
    gk_status status;
    switch (which) {
    case 0: status = gk_assign(w->out, w->a); break;
    case 1: status = gk_binary_into(GK_ADD, w->a, w->b, w->out); break;
    case 2: status = gk_reduce(GK_SUM, w->a, GK_ALL_AXES, false, &result_array); break;
    case 3: status = gk_matmul(w->left, w->right, &result_array); break;
    default: {
        const gk_array *in[2] = {w->a, w->b};
        status = gk_elementwise_launch(w->kernel, 2, in, 1, &w->out, NULL);
    }
    }
    if (status == GK_OK)
        status = gk_device_synchronize(w->device);
    gk_array_free(result_array);
    return status;
}

static void measure(workload *w, const settings *s, int which, result *r)
{
    static const char *const names[OPERATIONS] = {"copy", "add", "sum", "matmul", "kernel"};
    double bytes = (double)s->size * 4;
    double amounts[OPERATIONS] = {2 * bytes, 3 * bytes, bytes,
                                  2.0 * (double)s->matrix * (double)s->matrix * (double)s->matrix,
                                  3 * bytes};
    *r = (result){names[which], -1, amounts[which], which == 3, ""};
    if (which == 4 && !w->kernel) {
        snprintf(r->error, sizeof r->error, "n/a (user kernels run on CUDA and OpenCL devices)");
        return;
    }
    double *times = calloc((size_t)s->repeat, sizeof *times);
    gk_status status = times ? run_once(w, which) : GK_ERR_OUT_OF_MEMORY; /* warm-up */
    for (int i = 0; status == GK_OK && i < s->repeat; i++) {
        double start = now();
        status = run_once(w, which);
        times[i] = now() - start;
    }
    if (status == GK_OK) {
        qsort(times, (size_t)s->repeat, sizeof *times, compare_doubles);
        r->seconds = times[s->repeat / 2];
    } else {
        snprintf(r->error, sizeof r->error, "failed: %s",
                 times ? gk_last_error() : "out of memory");
    }
    free(times);
}

static void workload_free(workload *w)
{
    gk_array_free(w->a);
    gk_array_free(w->b);
    gk_array_free(w->out);
    gk_array_free(w->left);
    gk_array_free(w->right);
    gk_kernel_free(w->kernel);
}

/* Makes the inputs (random values) and the user kernel on the device. */
static gk_status workload_make(workload *w, gk_device device, const settings *s)
{
    memset(w, 0, sizeof *w);
    w->device = device;
    int64_t shape[1] = {s->size}, square[2] = {s->matrix, s->matrix};
    gk_status status = gk_random_uniform(device, GK_FLOAT32, 1, shape, 1, -1, 1, &w->a);
    if (status == GK_OK)
        status = gk_random_uniform(device, GK_FLOAT32, 1, shape, 2, -1, 1, &w->b);
    if (status == GK_OK)
        status = gk_empty(device, GK_FLOAT32, 1, shape, &w->out);
    if (status == GK_OK)
        status = gk_random_uniform(device, GK_FLOAT32, 2, square, 3, -1, 1, &w->left);
    if (status == GK_OK)
        status = gk_random_uniform(device, GK_FLOAT32, 2, square, 4, -1, 1, &w->right);
    if (status == GK_OK && device.kind != GK_DEVICE_CPU)
        status = gk_elementwise_kernel(device, "float32 x, float32 y", "float32 z",
                                       "z = 2.0f * x + y;", "saxpy", &w->kernel);
    if (status != GK_OK)
        workload_free(w);
    return status;
}

static void print_row(const char *device, const result *r, const result *cpu)
{
    char label[64];
    snprintf(label, sizeof label, "%s", r->operation);
    if (r->seconds < 0) {
        printf("%-14s %-8s %s\n", device, label, r->error);
        return;
    }
    double rate = r->amount / r->seconds / 1e9;
    char speedup[32] = "";
    if (cpu && cpu->seconds > 0)
        snprintf(speedup, sizeof speedup, "%8.2fx", cpu->seconds / r->seconds);
    printf("%-14s %-8s %10.3f ms %9.1f %-7s %s\n", device, label, r->seconds * 1e3, rate,
           r->flops ? "GFLOP/s" : "GB/s", speedup);
    fflush(stdout);
}

static json_t *result_json(const char *device, const result *r, const result *cpu)
{
    json_t *o = json_object();
    json_object_set_new(o, "device", json_string(device));
    json_object_set_new(o, "operation", json_string(r->operation));
    if (r->seconds < 0) {
        json_object_set_new(o, "error", json_string(r->error));
        return o;
    }
    json_object_set_new(o, "seconds", json_real(r->seconds));
    json_object_set_new(o, r->flops ? "gflops" : "gbytes_per_second",
                        json_real(r->amount / r->seconds / 1e9));
    json_object_set_new(o, "speedup_vs_cpu", cpu && cpu->seconds > 0
                                                 ? json_real(cpu->seconds / r->seconds)
                                                 : json_null());
    return o;
}

static bool parse_count(const char *text, int64_t low, int64_t *value)
{
    char *end;
    long long n = strtoll(text, &end, 10);
    if (*text == '\0' || *end != '\0' || n < low || n > (1LL << 40))
        return false;
    *value = n;
    return true;
}

int cmd_bench(int argc, char **argv)
{
    static const struct option options[] = {
        {"device", required_argument, NULL, 'd'}, {"size", required_argument, NULL, 's'},
        {"matmul", required_argument, NULL, 'm'}, {"repeat", required_argument, NULL, 'r'},
        {"json", no_argument, NULL, 'j'},         {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    settings s = {1 << 24, 1024, 5};
    gk_device devices[MAX_DEVICES];
    int device_count = 0;
    bool json = false;
    int64_t value;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "d:s:m:r:h", options, NULL)) != -1) {
        switch (c) {
        case 'd':
            if (device_count == MAX_DEVICES) {
                fprintf(stderr, "gpukit bench: at most %d --device options\n", MAX_DEVICES);
                return GK_EXIT_USAGE;
            }
            if (gk_device_parse(optarg, &devices[device_count]) != GK_OK) {
                fprintf(stderr, "gpukit bench: %s\n", gk_last_error());
                return GK_EXIT_USAGE;
            }
            device_count++;
            break;
        case 's':
        case 'm':
        case 'r':
            if (!parse_count(optarg, 1, &value) || (c == 'r' && value > 1000)) {
                fprintf(stderr, "gpukit bench: --%s takes a whole number from 1%s, not '%s'\n",
                        c == 's' ? "size" : c == 'm' ? "matmul" : "repeat",
                        c == 'r' ? " to 1000" : "", optarg);
                return GK_EXIT_USAGE;
            }
            if (c == 's')
                s.size = value;
            else if (c == 'm')
                s.matrix = value;
            else
                s.repeat = (int)value;
            break;
        case 'j': json = true; break;
        case 'h': print_usage(stdout); return GK_EXIT_OK;
        default: return cli_usage_error("bench");
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpukit bench: unexpected argument '%s'\n", argv[optind]);
        return GK_EXIT_USAGE;
    }
    char name[GK_DEVICE_NAME_MAX];
    for (int i = 0; i < device_count; i++)
        if (gk_device_check(devices[i]) != GK_OK) {
            /* gk_device_check's message names the device itself */
            fprintf(stderr, "gpukit bench: %s\n", gk_last_error());
            return GK_EXIT_DRIVER;
        }
    /* Without --device: every device there is, the CPU first (the baseline). */
    bool named = device_count > 0;
    if (!named) {
        gk_device all[MAX_DEVICES];
        int total = gk_device_list(all, MAX_DEVICES);
        for (int i = 0; i < total && i < MAX_DEVICES; i++)
            if (gk_device_check(all[i]) == GK_OK)
                devices[device_count++] = all[i];
    }

    int exit_code = GK_EXIT_OK;
    json_t *rows = json_array();
    result cpu[OPERATIONS];
    bool have_cpu = false;
    if (!json)
        printf("%-14s %-8s %13s %17s %9s\n", "DEVICE", "TEST", "TIME", "RATE", "VS CPU");
    for (int d = 0; d < device_count; d++) {
        gk_device_name(devices[d], name, sizeof name);
        workload w;
        if (workload_make(&w, devices[d], &s) != GK_OK) {
            fprintf(stderr, "gpukit bench: %s: %s\n", name, gk_last_error());
            exit_code = GK_EXIT_FAILURE;
            continue;
        }
        for (int op = 0; op < OPERATIONS; op++) {
            result r;
            measure(&w, &s, op, &r);
            if (r.seconds < 0 && !(op == 4 && !w.kernel))
                exit_code = GK_EXIT_FAILURE;
            const result *baseline = have_cpu && devices[d].kind != GK_DEVICE_CPU ? &cpu[op]
                                                                                   : NULL;
            if (devices[d].kind == GK_DEVICE_CPU && !have_cpu)
                cpu[op] = r;
            if (json)
                json_array_append_new(rows, result_json(name, &r, baseline));
            else
                print_row(name, &r, baseline);
        }
        if (devices[d].kind == GK_DEVICE_CPU)
            have_cpu = true;
        workload_free(&w);
    }

    /* Say plainly when there is no CUDA GPU, and why. */
    char note[512] = "";
    gk_device cuda0 = {GK_DEVICE_CUDA, 0, 0};
    bool any_cuda = false;
    for (int d = 0; d < device_count; d++)
        any_cuda |= devices[d].kind == GK_DEVICE_CUDA;
    if (!named && !any_cuda) {
        int opencl = 0;
        for (int d = 0; d < device_count; d++)
            opencl += devices[d].kind == GK_DEVICE_OPENCL;
        gk_status status = gk_device_check(cuda0);
        snprintf(note, sizeof note, "No CUDA GPU (%s): measured the CPU and %d OpenCL device%s.",
                 status == GK_OK ? "none found" : gk_last_error(), opencl,
                 opencl == 1 ? "" : "s");
    }
    if (json) {
        json_t *top = json_object();
        json_object_set_new(top, "size", json_integer((json_int_t)s.size));
        json_object_set_new(top, "matmul", json_integer((json_int_t)s.matrix));
        json_object_set_new(top, "repeat", json_integer(s.repeat));
        json_object_set_new(top, "results", rows);
        json_object_set_new(top, "note", *note ? json_string(note) : json_null());
        if (!cli_print_json(top))
            exit_code = GK_EXIT_FAILURE;
    } else {
        json_decref(rows);
        printf("\ncopy/add/sum/kernel: %lld float32 values; matmul: %lld x %lld float32; "
               "median of %d runs.\n",
               (long long)s.size, (long long)s.matrix, (long long)s.matrix, s.repeat);
        if (*note)
            printf("%s\n", note);
    }
    return exit_code;
}
