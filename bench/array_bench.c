/* The C side of the array benchmark (bench/array_vs_numpy.py drives it).
 *
 *     array_bench CASE [REPEAT] [DEVICE]
 *
 * CASE is one of
 *   add       c = a + b, two float32 arrays of 2^25 elements, the result a new
 *             array freed each time (NumPy's `a + b`)
 *   add_into  the same into a preallocated c (NumPy's `np.add(a, b, out=c)`)
 *   sum       the sum of 2^26 float32 (NumPy's `np.sum(a, dtype=np.float32)`)
 *   matmul    float32 2048x2048 @ 2048x2048 (NumPy's `a @ b`)
 *   copy      a STREAM-style copy of 2^26 float32 in plain C (memcpy, one
 *             chunk per CPU thread): the machine's memory bandwidth
 * REPEAT (default 10) timed runs follow two untimed warm-up runs; DEVICE
 * defaults to gk_device_default(). It prints one JSON line: the median, min
 * and max seconds, the bytes or flops one run moves or does, the rates, a
 * check of the result, and the device and BLAS it ran with. It asserts
 * nothing: a wrong result is reported in "check", and it still exits 0. */
#include <gpukit/gpukit.h>

/* The CBLAS libgpukit loaded (internal: the benchmark reports which). */
#include "ext/blas.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_REPEAT 10000

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void fail(const char *what)
{
    fprintf(stderr, "array_bench: %s: %s\n", what, gk_last_error());
    exit(1);
}

/* Two untimed warm-up runs (pages, threads, OpenBLAS buffers), then
 * `repeat` timed ones into times[], sorted; returns the median. */
typedef struct bench bench;
static double measure(void (*run)(bench *), bench *b, int repeat, double *times)
{
    for (int i = 0; i < 2; i++)
        run(b);
    for (int i = 0; i < repeat; i++) {
        double start = now();
        run(b);
        times[i] = now() - start;
    }
    qsort(times, (size_t)repeat, sizeof *times, compare_doubles);
    return repeat % 2 ? times[repeat / 2] : (times[repeat / 2 - 1] + times[repeat / 2]) / 2;
}

/* One benchmark case: set up, one timed run, check, tear down. */
typedef struct bench {
    gk_device device;
    int64_t n;                 /* elements (or the matrix side) */
    gk_array *a, *b, *c;
    float *src, *dst;          /* the copy case's host buffers */
    int threads;               /* the copy case's threads */
    double result;             /* the sum */
} bench;

/* A float32 array of `n` elements (a 2-d square when `side` > 0) on the
 * device, holding a pattern the check can predict: (i % 1000) * scale. */
static gk_array *pattern(gk_device device, int64_t n, int64_t side, float scale)
{
    float *host = malloc((size_t)n * sizeof *host);
    if (!host) {
        fprintf(stderr, "array_bench: out of host memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < n; i++)
        host[i] = (float)(i % 1000) * scale;
    int64_t flat[1] = {n}, square[2] = {side, side};
    gk_array *a;
    gk_status status = side > 0 ? gk_from_host(device, GK_FLOAT32, 2, square, host, &a)
                                : gk_from_host(device, GK_FLOAT32, 1, flat, host, &a);
    free(host);
    if (status != GK_OK)
        fail("creating the input");
    return a;
}

static void run_add(bench *b)
{
    gk_array_free(b->c); /* the last run's result, kept for the check */
    b->c = NULL;
    if (gk_binary(GK_ADD, b->a, b->b, &b->c) != GK_OK)
        fail("gk_binary(add)");
    if (gk_device_synchronize(b->device) != GK_OK)
        fail("synchronize");
}

static void run_add_into(bench *b)
{
    if (gk_binary_into(GK_ADD, b->a, b->b, b->c) != GK_OK)
        fail("gk_binary_into(add)");
    if (gk_device_synchronize(b->device) != GK_OK)
        fail("synchronize");
}

static void run_sum(bench *b)
{
    gk_array *s;
    if (gk_reduce(GK_SUM, b->a, GK_ALL_AXES, false, &s) != GK_OK)
        fail("gk_reduce(sum)");
    if (gk_item(s, NULL, &b->result) != GK_OK) /* reading it back synchronises */
        fail("gk_item");
    gk_array_free(s);
}

static void run_matmul(bench *b)
{
    gk_array_free(b->c);
    b->c = NULL;
    if (gk_matmul(b->a, b->b, &b->c) != GK_OK)
        fail("gk_matmul");
    if (gk_device_synchronize(b->device) != GK_OK)
        fail("synchronize");
}

/* Host memory on transparent huge pages where the kernel allows them, as
 * NumPy asks for its large arrays (madvise), so that the copy is measured on
 * the same kind of memory as NumPy's. */
static float *huge_alloc(size_t bytes)
{
    size_t align = (size_t)2 << 20, rounded = (bytes + align - 1) / align * align;
    float *p = aligned_alloc(align, rounded);
    if (p)
        (void)madvise(p, rounded, MADV_HUGEPAGE); /* a hint: failure is fine */
    return p;
}

typedef struct chunk {
    float *dst;
    const float *src;
    size_t count;
} chunk;

static void *copy_chunk(void *arg)
{
    chunk *c = arg;
    memcpy(c->dst, c->src, c->count * sizeof(float));
    return NULL;
}

static void run_copy(bench *b)
{
    pthread_t ids[64];
    chunk chunks[64];
    size_t per = (size_t)b->n / (size_t)b->threads;
    for (int t = 0; t < b->threads; t++) {
        size_t start = (size_t)t * per;
        size_t count = t == b->threads - 1 ? (size_t)b->n - start : per;
        chunks[t] = (chunk){b->dst + start, b->src + start, count};
        if (t > 0 && pthread_create(&ids[t], NULL, copy_chunk, &chunks[t]) != 0) {
            fprintf(stderr, "array_bench: cannot start a copy thread\n");
            exit(1);
        }
    }
    copy_chunk(&chunks[0]);
    for (int t = 1; t < b->threads; t++)
        pthread_join(ids[t], NULL);
}

/* Element i of a's pattern plus b's, for the add check. */
static double expected_add(int64_t i)
{
    return (double)((float)(i % 1000) * 0.001f + (float)(i % 1000) * 0.002f);
}

/* "ok" or what is wrong, into buf. */
static void check(const char *name, bench *b, char *buf, size_t size)
{
    snprintf(buf, size, "ok");
    if (!strcmp(name, "add") || !strcmp(name, "add_into")) {
        int64_t probes[] = {0, 1, 999, 1000, 12345, b->n / 2 + 7, b->n - 1};
        for (size_t p = 0; p < sizeof probes / sizeof *probes; p++) {
            double got;
            if (gk_item(b->c, &probes[p], &got) != GK_OK)
                fail("gk_item");
            if (fabs(got - expected_add(probes[p])) > 1e-6)
                snprintf(buf, size, "c[%lld] is %g, expected %g", (long long)probes[p], got,
                         expected_add(probes[p]));
        }
    } else if (!strcmp(name, "sum")) {
        double expected = 0; /* whole blocks of 0..999 plus a tail */
        for (int64_t i = 0; i < 1000; i++)
            expected += (double)((float)i * 0.001f) * (double)(b->n / 1000 + (i < b->n % 1000));
        if (fabs(b->result - expected) > 1e-4 * fabs(expected))
            snprintf(buf, size, "sum is %.9g, expected %.9g", b->result, expected);
    } else if (!strcmp(name, "matmul")) {
        /* c[i][j] = sum over k of a[i][k] * b[k][j], in double on the host. */
        int64_t side = b->n, rows[] = {0, 1, side / 2, side - 1}, cols[] = {0, 3, side - 1};
        for (size_t r = 0; r < 4; r++)
            for (size_t q = 0; q < 3; q++) {
                double expected = 0, got;
                for (int64_t k = 0; k < side; k++) {
                    int64_t ia = rows[r] * side + k, ib = k * side + cols[q];
                    expected += (double)((float)(ia % 1000) * 0.001f) *
                                (double)((float)(ib % 1000) * 0.002f);
                }
                int64_t index[2] = {rows[r], cols[q]};
                if (gk_item(b->c, index, &got) != GK_OK)
                    fail("gk_item");
                if (fabs(got - expected) > 1e-3 * fabs(expected) + 1e-3)
                    snprintf(buf, size, "c[%lld][%lld] is %g, expected %g", (long long)rows[r],
                             (long long)cols[q], got, expected);
            }
    } else if (!strcmp(name, "copy")) {
        for (int64_t i = 0; i < b->n; i += 4099)
            if (b->dst[i] != b->src[i]) {
                snprintf(buf, size, "dst[%lld] differs", (long long)i);
                break;
            }
    }
}

/* Prints s as a JSON string (it holds no control characters). */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        putchar(*s == '\n' ? ' ' : *s);
    }
    putchar('"');
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: array_bench add|add_into|sum|matmul|copy [REPEAT] [DEVICE]\n");
        return 2;
    }
    const char *name = argv[1];
    int repeat = argc > 2 ? atoi(argv[2]) : 10;
    if (repeat < 1 || repeat > MAX_REPEAT) {
        fprintf(stderr, "array_bench: REPEAT must be 1..%d\n", MAX_REPEAT);
        return 2;
    }
    bench b = {.device = gk_device_default()};
    if (argc > 3 && gk_device_parse(argv[3], &b.device) != GK_OK)
        fail("device");
    if (gk_device_check(b.device) != GK_OK)
        fail("device");

    void (*run)(bench *) = NULL;
    double bytes = 0, flops = 0;
    if (!strcmp(name, "add") || !strcmp(name, "add_into")) {
        b.n = (int64_t)1 << 25;
        b.a = pattern(b.device, b.n, 0, 0.001f);
        b.b = pattern(b.device, b.n, 0, 0.002f);
        if (!strcmp(name, "add_into") &&
            gk_empty(b.device, GK_FLOAT32, 1, &b.n, &b.c) != GK_OK)
            fail("gk_empty");
        run = !strcmp(name, "add") ? run_add : run_add_into;
        bytes = 3.0 * 4 * (double)b.n; /* read a and b, write c */
    } else if (!strcmp(name, "sum")) {
        b.n = (int64_t)1 << 26;
        b.a = pattern(b.device, b.n, 0, 0.001f);
        run = run_sum;
        bytes = 4.0 * (double)b.n;
    } else if (!strcmp(name, "matmul")) {
        b.n = 2048;
        b.a = pattern(b.device, b.n * b.n, b.n, 0.001f);
        b.b = pattern(b.device, b.n * b.n, b.n, 0.002f);
        run = run_matmul;
        flops = 2.0 * (double)b.n * (double)b.n * (double)b.n;
    } else if (!strcmp(name, "copy")) {
        b.n = (int64_t)1 << 26;
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        b.threads = cpus < 1 ? 1 : cpus > 64 ? 64 : (int)cpus;
        b.src = huge_alloc((size_t)b.n * sizeof(float));
        b.dst = huge_alloc((size_t)b.n * sizeof(float));
        if (!b.src || !b.dst) {
            fprintf(stderr, "array_bench: out of host memory\n");
            return 1;
        }
        for (int64_t i = 0; i < b.n; i++)
            b.src[i] = (float)(i % 1000), b.dst[i] = 0;
        run = run_copy;
        bytes = 2.0 * 4 * (double)b.n; /* read src, write dst */
    } else {
        fprintf(stderr, "array_bench: unknown case '%s': add, add_into, sum, matmul or copy\n",
                name);
        return 2;
    }

    /* The copy takes the faster of one thread and one per CPU, as STREAM
     * reports the best: one glibc memcpy stream can already fill the memory
     * bus, and two can be slower. */
    static double times[MAX_REPEAT];
    double copy_seconds[2] = {0, 0};
    int cpus = b.threads;
    if (run == run_copy) {
        b.threads = 1;
        copy_seconds[0] = measure(run, &b, repeat, times);
        b.threads = cpus;
        copy_seconds[1] = measure(run, &b, repeat, times);
        b.threads = copy_seconds[0] <= copy_seconds[1] ? 1 : cpus; /* timed again below */
    }
    double median = measure(run, &b, repeat, times);

    char verdict[200], device_name[GK_DEVICE_NAME_MAX], description[256];
    check(name, &b, verdict, sizeof verdict);
    gk_device_name(b.device, device_name, sizeof device_name);
    if (gk_device_describe(b.device, description, sizeof description) != GK_OK)
        snprintf(description, sizeof description, "?");

    printf("{\"case\": \"%s\", \"repeat\": %d, \"median_s\": %.6e, \"min_s\": %.6e, "
           "\"max_s\": %.6e, \"bytes\": %.0f, \"flops\": %.0f, \"gb_per_s\": %.3f, "
           "\"gflop_per_s\": %.3f, ",
           name, repeat, median, times[0], times[repeat - 1], bytes, flops,
           bytes / median / 1e9, flops / median / 1e9);
    printf("\"check\": ");
    json_string(verdict);
    printf(", \"device\": ");
    json_string(device_name);
    printf(", \"device_description\": ");
    json_string(description);
    printf(", \"copy_threads\": %d, \"copy_1_thread_s\": %.6e, \"copy_%d_threads_s\": %.6e, "
           "\"blas\": ",
           b.threads, copy_seconds[0], cpus, copy_seconds[1]);
    /* OpenBLAS names its build and threads; another BLAS, its file; none,
     * the reason (null threads for both). */
    const gk_cblas *blas = NULL;
    gk_status blas_status = gk_cblas_open("array_bench", &blas);
    if (blas_status != GK_OK)
        json_string(gk_last_error());
    else if (blas->openblas_get_config)
        json_string(blas->openblas_get_config());
    else
        json_string(blas->path);
    if (blas && blas->openblas_get_num_threads)
        printf(", \"blas_threads\": %d}\n", blas->openblas_get_num_threads());
    else
        printf(", \"blas_threads\": null}\n");

    gk_array_free(b.a);
    gk_array_free(b.b);
    gk_array_free(b.c);
    free(b.src);
    free(b.dst);
    return 0;
}
