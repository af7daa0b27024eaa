/* The OpenCL driver (compute/backends/opencl) used directly, on whatever
 * OpenCL device comes first (PoCL on the CPU in CI): devices, memory and
 * addresses, programs (source, options, compile errors, binaries), kernel
 * arguments of every kind, sub-buffers, streams and their ordering, many
 * threads sharing one kernel, and a missing ICD loader. */
#include "compute/gpu/driver.h"

#include "check.h"
#include "core/embedded.h"

#include <gpukit/status.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The files built into the library, dialect.h among them (the same text
 * the runtime puts in front of portable kernels). */
extern const gk_embedded_file gk_kernel_source_files[];
extern const size_t gk_kernel_source_files_count;

static const gk_gpu_driver *const cl = &gk_opencl_driver;
static gk_device dev;

/* dialect.h followed by `body`, NUL-terminated (malloc'd). */
static char *portable_source(const char *body)
{
    for (size_t i = 0; i < gk_kernel_source_files_count; i++) {
        const gk_embedded_file *f = &gk_kernel_source_files[i];
        if (strcmp(f->name, "dialect.h") != 0)
            continue;
        size_t length = strlen(body);
        char *text = malloc(f->size + 1 + length + 1);
        memcpy(text, f->data, f->size);
        text[f->size] = '\n';
        memcpy(text + f->size + 1, body, length + 1);
        return text;
    }
    fprintf(stderr, "dialect.h is not among the embedded kernel sources\n");
    exit(1);
}

static const char kernels[] =
    "typedef struct pair { gk_i64 count; double scale; } pair;\n"
    "GK_KERNEL void fill(GK_GLOBAL double *out, gk_i64 n, float a, double b, pair p)\n"
    "{\n"
    "    GK_FOR_EACH_INDEX(i, n) out[i] = (double)i * a + b + (double)p.count * p.scale;\n"
    "}\n"
    "GK_KERNEL void add_one(GK_GLOBAL gk_i32 *data, gk_i64 n)\n"
    "{\n"
    "    GK_FOR_EACH_INDEX(i, n) data[i] += 1;\n"
    "}\n"
    "GK_KERNEL void set_value(GK_GLOBAL gk_i64 *out, gk_i64 n, gk_i64 v)\n"
    "{\n"
    "    GK_FOR_EACH_INDEX(i, n) out[i] = v + i + OPTION_BONUS;\n"
    "}\n"
    /* Busy work before the store, so that the store lands late: a reader
     * on another queue sees it only when the queues are really ordered. */
    "GK_KERNEL void slow_fill(GK_GLOBAL gk_u32 *out, gk_i64 n, gk_i32 rounds)\n"
    "{\n"
    "    GK_FOR_EACH_INDEX(i, n) {\n"
    "        gk_u32 x = (gk_u32)i;\n"
    "        for (gk_i32 r = 0; r < rounds; r++) x = x * 1664525u + 1013904223u;\n"
    "        out[i] = x;\n"
    "    }\n"
    "}\n"
    "GK_KERNEL void twice(GK_GLOBAL gk_u32 *out, GK_GLOBAL const gk_u32 *in, gk_i64 n)\n"
    "{\n"
    "    GK_FOR_EACH_INDEX(i, n) out[i] = 2u * in[i];\n"
    "}\n";

static gk_gpu_arg buffer_arg(char *address)
{
    return (gk_gpu_arg){.kind = GK_GPU_ARG_BUFFER, .address = address};
}

static gk_gpu_arg value_arg(const void *value, size_t size)
{
    return (gk_gpu_arg){.kind = GK_GPU_ARG_VALUE, .value = value, .size = size};
}

/* In a child process with GPUKIT_OPENCL_LIBRARY pointing nowhere (the
 * library is loaded once per process, so this must be a fresh one): no
 * devices, and check names the library and the fix. */
static void test_missing_library(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        setenv("GPUKIT_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1", 1);
        int failures = 0;
        if (cl->list(NULL, 0) != 0)
            failures++;
        gk_status status = cl->check((gk_device){.kind = GK_DEVICE_OPENCL});
        const char *message = gk_last_error();
        if (status != GK_ERR_NOT_FOUND || !strstr(message, "/nonexistent/libOpenCL.so.1") ||
            !strstr(message, "install an OpenCL driver") || !strstr(message, "pocl-opencl-icd")) {
            fprintf(stderr, "missing library: status %d, message: %s\n", status, message);
            failures++;
        }
        /* Every later call gives the same reason, not a crash. */
        char *address;
        if (cl->allocate((gk_device){.kind = GK_DEVICE_OPENCL}, 16, &address) != GK_ERR_NOT_FOUND ||
            !strstr(gk_last_error(), "pocl-opencl-icd"))
            failures++;
        _exit(failures);
    }
    int wstatus = 0;
    CHECK(pid > 0 && waitpid(pid, &wstatus, 0) == pid, "fork/wait failed");
    CHECK(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "the missing-library child failed (%d)",
          wstatus);
}

static void test_devices(void)
{
    int count = cl->list(NULL, 0);
    CHECK(count >= 1, "no OpenCL device found (is PoCL installed?): %s", gk_last_error());
    if (count < 1)
        exit(1);
    gk_device *list = calloc((size_t)count, sizeof *list);
    CHECK(cl->list(list, count) == count, "list changed its count");
    int platforms = 0, on_first = 0;
    for (int i = 0; i < count; i++) {
        CHECK(list[i].kind == GK_DEVICE_OPENCL, "device %d has kind %d", i, list[i].kind);
        /* Platform then device order. */
        if (i > 0)
            CHECK(list[i].platform > list[i - 1].platform ||
                      (list[i].platform == list[i - 1].platform &&
                       list[i].index == list[i - 1].index + 1),
                  "device %d is out of order", i);
        if (list[i].platform + 1 > platforms)
            platforms = list[i].platform + 1;
        on_first += list[i].platform == list[0].platform;
    }
    dev = list[0];
    free(list);
    CHECK(cl->check(dev) == GK_OK, "check: %s", gk_last_error());

    /* Nonexistent devices: the message names what there is. */
    char expected[128];
    gk_status status = cl->check((gk_device){.kind = GK_DEVICE_OPENCL, .platform = 99});
    snprintf(expected, sizeof expected, "has %d OpenCL platform", platforms);
    CHECK(status == GK_ERR_NOT_FOUND && strstr(gk_last_error(), "opencl:99:0") &&
              strstr(gk_last_error(), expected),
          "check(opencl:99:0): %d %s", status, gk_last_error());
    gk_device missing = {.kind = GK_DEVICE_OPENCL, .platform = dev.platform, .index = 42};
    status = cl->check(missing);
    snprintf(expected, sizeof expected, "has %d device", on_first);
    CHECK(status == GK_ERR_NOT_FOUND && strstr(gk_last_error(), expected),
          "check(device 42): %d %s", status, gk_last_error());
    CHECK(cl->check((gk_device){.kind = GK_DEVICE_OPENCL, .platform = -1}) == GK_ERR_NOT_FOUND,
          "a negative platform is accepted");

    gk_gpu_info info;
    CHECK(cl->info(dev, &info) == GK_OK, "info: %s", gk_last_error());
    CHECK(strlen(info.architecture) > 8, "architecture '%s'", info.architecture);
    CHECK(strstr(info.compiler, "OpenCL") != NULL, "compiler '%s'", info.compiler);
    CHECK(info.compute_units >= 1, "compute units %d", info.compute_units);
    CHECK(info.max_group_size >= 1, "max group size %d", info.max_group_size);
    CHECK(info.max_local_bytes >= 1024, "local memory %llu",
          (unsigned long long)info.max_local_bytes);
    CHECK(info.max_allocation >= 1024 * 1024, "max allocation %llu",
          (unsigned long long)info.max_allocation);
    CHECK(info.fp64, "PoCL supports double, but fp64 is false");

    char text[256];
    CHECK(cl->describe(dev, text, sizeof text) == GK_OK, "describe: %s", gk_last_error());
    CHECK(strstr(text, "OpenCL ") && strstr(text, "compute unit") && strstr(text, "iB)"),
          "describe: '%s'", text);

    /* free = total minus what this process holds. */
    uint64_t free0, total0, free1, total1;
    CHECK(cl->memory(dev, &free0, &total0) == GK_OK && total0 > 0 && free0 <= total0,
          "memory: %s", gk_last_error());
    char *block;
    CHECK(cl->allocate(dev, 1 << 20, &block) == GK_OK, "allocate: %s", gk_last_error());
    CHECK(cl->memory(dev, &free1, &total1) == GK_OK && total1 == total0 &&
              free1 == free0 - (1 << 20),
          "free went from %llu to %llu after allocating 1 MiB", (unsigned long long)free0,
          (unsigned long long)free1);
    cl->free(dev, block);
    CHECK(cl->memory(dev, &free1, &total1) == GK_OK && free1 == free0, "free not restored");
}

static void test_memory(void)
{
    enum { N = 4096 };
    unsigned char *host = malloc(N), *back = malloc(N);
    for (int i = 0; i < N; i++)
        host[i] = (unsigned char)(i * 7 + 3);

    char *a;
    CHECK(cl->allocate(dev, N, &a) == GK_OK, "allocate: %s", gk_last_error());
    char *base;
    size_t offset;
    cl->resolve(a, &base, &offset);
    CHECK(base == a && offset == 0, "resolve(a) = %p + %zu", (void *)base, offset);
    cl->resolve(a + 1000, &base, &offset);
    CHECK(base == a && offset == 1000, "resolve(a + 1000) = %p + %zu", (void *)base, offset);

    /* Whole, then a patch at a byte offset the core added to the address. */
    CHECK(cl->upload(dev, a, host, N) == GK_OK, "upload: %s", gk_last_error());
    unsigned char patch[16];
    for (int i = 0; i < 16; i++)
        patch[i] = (unsigned char)(200 + i);
    CHECK(cl->upload(dev, a + 101, patch, sizeof patch) == GK_OK, "upload at offset: %s",
          gk_last_error());
    memcpy(host + 101, patch, sizeof patch);
    CHECK(cl->download(dev, back, a, N) == GK_OK, "download: %s", gk_last_error());
    CHECK(memcmp(back, host, N) == 0, "round trip differs");
    unsigned char part[40];
    CHECK(cl->download(dev, part, a + 90, sizeof part) == GK_OK, "download at offset");
    CHECK(memcmp(part, host + 90, sizeof part) == 0, "download at an offset differs");

    /* Past the end: refused with a message, nothing written. */
    gk_status status = cl->upload(dev, a + N - 4, patch, 8);
    CHECK(status == GK_ERR_INVALID_ARGUMENT && strstr(gk_last_error(), "past its end"),
          "overrun: %d %s", status, gk_last_error());

    /* Copies between allocations at offsets, and within one (overlapping). */
    char *b;
    CHECK(cl->allocate(dev, N, &b) == GK_OK, "allocate b");
    unsigned char *zeros = calloc(N, 1);
    CHECK(cl->upload(dev, b, zeros, N) == GK_OK, "upload zeros");
    CHECK(cl->copy(dev, b + 256, a + 128, 300) == GK_OK, "copy: %s", gk_last_error());
    CHECK(cl->download(dev, back, b, N) == GK_OK, "download b");
    unsigned char *want = calloc(N, 1);
    memcpy(want + 256, host + 128, 300);
    CHECK(memcmp(back, want, N) == 0, "copy between allocations differs");
    CHECK(cl->copy(dev, a + 10, a, 100) == GK_OK, "overlapping copy: %s", gk_last_error());
    memmove(host + 10, host, 100);
    CHECK(cl->download(dev, back, a, N) == GK_OK && memcmp(back, host, N) == 0,
          "overlapping copy is not memmove");
    CHECK(cl->copy(dev, b + N - 10, a, 20) == GK_ERR_INVALID_ARGUMENT, "copy overrun accepted");
    CHECK(cl->synchronize(dev) == GK_OK, "synchronize: %s", gk_last_error());

    /* Zero bytes: a valid, distinct address. */
    char *empty;
    CHECK(cl->allocate(dev, 0, &empty) == GK_OK, "allocate 0: %s", gk_last_error());
    CHECK(empty != a && empty != b && empty != NULL, "zero-byte allocation is not distinct");
    CHECK(cl->upload(dev, empty, host, 0) == GK_OK, "upload 0 bytes");
    cl->free(dev, empty);

    /* Freed memory is refused, not used. */
    cl->free(dev, b);
    status = cl->download(dev, back, b, 16);
    CHECK(status == GK_ERR_INVALID_ARGUMENT && strstr(gk_last_error(), "freed"),
          "freed address: %d %s", status, gk_last_error());
    cl->free(dev, a);

    /* Many live allocations (the slot table grows), each its own memory. */
    enum { MANY = 300 };
    char *many[MANY];
    int ok = 1;
    for (int i = 0; i < MANY && ok; i++) {
        ok = cl->allocate(dev, sizeof(int), &many[i]) == GK_OK &&
             cl->upload(dev, many[i], &i, sizeof i) == GK_OK;
    }
    CHECK(ok, "many allocations: %s", gk_last_error());
    for (int i = 0; i < MANY && ok; i++) {
        int v = -1;
        ok = cl->download(dev, &v, many[i], sizeof v) == GK_OK && v == i;
        CHECK(ok, "allocation %d holds %d", i, v);
    }
    for (int i = 0; i < MANY; i++)
        cl->free(dev, many[i]);
    free(host);
    free(back);
    free(zeros);
    free(want);
}

typedef struct pair {
    int64_t count;
    double scale;
} pair;

static gk_gpu_module *module;

static void test_build_and_launch(void)
{
    char *source = portable_source(kernels);
    void *binary = NULL;
    size_t binary_size = 0;
    gk_status status = cl->build(dev, GK_GPU_PORTABLE, source, "-DOPTION_BONUS=7", &module,
                                 &binary, &binary_size);
    CHECK(status == GK_OK, "build: %s", gk_last_error());
    if (status != GK_OK)
        exit(1); /* everything after needs the program */
    CHECK(binary && binary_size > 0, "no binary");

    gk_gpu_function *fill, *again;
    CHECK(cl->function(dev, module, "fill", &fill) == GK_OK, "function: %s", gk_last_error());
    CHECK(cl->function(dev, module, "fill", &again) == GK_OK && again == fill,
          "function is not reused");
    status = cl->function(dev, module, "no_such_kernel", &again);
    CHECK(status == GK_ERR_NOT_FOUND && strstr(gk_last_error(), "no_such_kernel"),
          "unknown kernel: %d %s", status, gk_last_error());

    /* Every kind of argument: buffer, gk_i64, float, double, a struct. */
    enum { N = 1000 };
    char *out;
    CHECK(cl->allocate(dev, N * sizeof(double), &out) == GK_OK, "allocate");
    int64_t n = N;
    float a = 0.5f;
    double b = 0.25;
    pair p = {.count = 3, .scale = 1.5};
    gk_gpu_arg args[] = {buffer_arg(out), value_arg(&n, sizeof n), value_arg(&a, sizeof a),
                         value_arg(&b, sizeof b), value_arg(&p, sizeof p)};
    size_t groups[3] = {4, 1, 1}, local[3] = {64, 1, 1}; /* fewer items than N: grid stride */
    CHECK(cl->launch(dev, fill, groups, local, 5, args, NULL) == GK_OK, "launch: %s",
          gk_last_error());
    double *result = malloc(N * sizeof(double));
    CHECK(cl->download(dev, result, out, N * sizeof(double)) == GK_OK, "download");
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += result[i] != i * 0.5 + 0.25 + 4.5;
    CHECK(wrong == 0, "fill gave %d wrong values (result[1] = %g)", wrong, result[1]);

    /* Too few arguments: an error naming the kernel, no crash. */
    status = cl->launch(dev, fill, groups, local, 2, args, NULL);
    CHECK(status != GK_OK && strstr(gk_last_error(), "fill"), "too few args: %d %s", status,
          gk_last_error());
    /* No work-items: nothing to do. */
    size_t none[3] = {0, 1, 1};
    CHECK(cl->launch(dev, fill, none, local, 5, args, NULL) == GK_OK, "empty launch");

    /* The binary loads again and runs the same (options included). */
    gk_gpu_module *loaded;
    status = cl->load(dev, binary, binary_size, &loaded);
    CHECK(status == GK_OK, "load: %s", gk_last_error());
    if (status == GK_OK) {
        gk_gpu_function *set_value;
        CHECK(cl->function(dev, loaded, "set_value", &set_value) == GK_OK, "function");
        int64_t v = 100;
        gk_gpu_arg set_args[] = {buffer_arg(out), value_arg(&n, sizeof n), value_arg(&v, sizeof v)};
        CHECK(cl->launch(dev, set_value, groups, local, 3, set_args, NULL) == GK_OK, "launch");
        int64_t *values = (int64_t *)result;
        CHECK(cl->download(dev, values, out, N * sizeof(int64_t)) == GK_OK, "download");
        wrong = 0;
        for (int i = 0; i < N; i++)
            wrong += values[i] != 100 + i + 7;
        CHECK(wrong == 0, "the loaded binary gave %d wrong values", wrong);
        cl->unload(dev, loaded);
    }

    /* Damaged binaries fail cleanly. */
    unsigned char *bad = malloc(binary_size);
    memcpy(bad, binary, binary_size);
    for (size_t i = 64; i < binary_size; i += 7) /* past the header */
        bad[i] ^= 0x5a;
    status = cl->load(dev, bad, binary_size, &loaded);
    CHECK(status == GK_ERR_INVALID_ARGUMENT && strstr(gk_last_error(), "damaged"),
          "a damaged binary: %d %s", status, gk_last_error());
    /* One made for another device or driver (its mark differs). */
    memcpy(bad, binary, binary_size);
    bad[8] ^= 1;
    status = cl->load(dev, bad, binary_size, &loaded);
    CHECK(status == GK_ERR_INVALID_ARGUMENT && strstr(gk_last_error(), "another OpenCL device"),
          "another device's binary: %d %s", status, gk_last_error());
    CHECK(cl->load(dev, binary, binary_size / 3, &loaded) != GK_OK, "a truncated binary loads");
    const char garbage[] = "this is not a program binary";
    CHECK(cl->load(dev, garbage, sizeof garbage, &loaded) != GK_OK, "garbage loads");
    CHECK(cl->load(dev, garbage, 0, &loaded) == GK_ERR_INVALID_ARGUMENT, "empty binary");
    free(bad);

    cl->free(dev, out);
    free(result);
    free(binary);
    free(source);
}

static void test_compile_error(void)
{
    char *source = portable_source(
        "GK_KERNEL void broken(GK_GLOBAL float *x) { x[0] = undeclared_thing_xyz; }\n");
    gk_gpu_module *m = NULL;
    gk_status status = cl->build(dev, GK_GPU_PORTABLE, source, NULL, &m, NULL, NULL);
    CHECK(status == GK_ERR_INVALID_ARGUMENT && strstr(gk_last_error(), "undeclared_thing_xyz"),
          "compile error: %d %s", status, gk_last_error());
    free(source);

    status = cl->build(dev, GK_GPU_CUDA_C, "extern \"C\" __global__ void k() {}", NULL, &m, NULL,
                       NULL);
    CHECK(status == GK_ERR_INVALID_ARGUMENT && strstr(gk_last_error(), "portable"),
          "CUDA C on OpenCL: %d %s", status, gk_last_error());
}

static void test_sub_buffers(void)
{
    gk_gpu_function *add_one;
    CHECK(cl->function(dev, module, "add_one", &add_one) == GK_OK, "function");
    enum { N = 1024 };
    int32_t host[N];
    for (int i = 0; i < N; i++)
        host[i] = i;
    char *data;
    CHECK(cl->allocate(dev, sizeof host, &data) == GK_OK, "allocate");
    CHECK(cl->upload(dev, data, host, sizeof host) == GK_OK, "upload");

    /* 512 bytes in: element 128, aligned for every device (the largest
     * base alignment OpenCL devices report is 128 bytes). */
    int64_t n = 100;
    gk_gpu_arg args[] = {buffer_arg(data + 512), value_arg(&n, sizeof n)};
    size_t groups[3] = {2, 1, 1}, local[3] = {32, 1, 1};
    CHECK(cl->launch(dev, add_one, groups, local, 2, args, NULL) == GK_OK, "sub-buffer launch: %s",
          gk_last_error());
    int32_t back[N];
    CHECK(cl->download(dev, back, data, sizeof back) == GK_OK, "download");
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += back[i] != i + (i >= 128 && i < 228 ? 1 : 0);
    CHECK(wrong == 0, "the sub-buffer launch changed %d elements wrongly", wrong);

    /* An unaligned offset is refused with the way out. */
    args[0] = buffer_arg(data + 4);
    gk_status status = cl->launch(dev, add_one, groups, local, 2, args, NULL);
    CHECK(status == GK_ERR_INVALID_ARGUMENT && strstr(gk_last_error(), "gk_copy"),
          "unaligned: %d %s", status, gk_last_error());
    cl->free(dev, data);
}

static void test_streams(void)
{
    gk_gpu_function *slow_fill, *twice;
    CHECK(cl->function(dev, module, "slow_fill", &slow_fill) == GK_OK, "function");
    CHECK(cl->function(dev, module, "twice", &twice) == GK_OK, "function");
    enum { N = 4096 };
    char *src, *dst;
    CHECK(cl->allocate(dev, N * 4, &src) == GK_OK && cl->allocate(dev, N * 4, &dst) == GK_OK,
          "allocate");
    uint32_t *zeros = calloc(N, 4), *back = malloc(N * 4);
    CHECK(cl->upload(dev, src, zeros, N * 4) == GK_OK &&
              cl->upload(dev, dst, zeros, N * 4) == GK_OK,
          "upload");

    gk_gpu_stream *stream;
    CHECK(cl->stream_create(dev, &stream) == GK_OK, "stream_create: %s", gk_last_error());
    int64_t n = N;
    int32_t rounds = 5000;
    size_t groups[3] = {16, 1, 1}, local[3] = {64, 1, 1};
    /* Device queue: src = i + 1, slowly. */
    gk_gpu_arg fill_args[] = {buffer_arg(src), value_arg(&n, sizeof n),
                              value_arg(&rounds, sizeof rounds)};
    CHECK(cl->launch(dev, slow_fill, groups, local, 3, fill_args, NULL) == GK_OK, "launch: %s",
          gk_last_error());
    /* The user stream waits for that, then dst = 2 * src. */
    CHECK(cl->stream_order(dev, stream, NULL) == GK_OK, "stream_order: %s", gk_last_error());
    gk_gpu_arg twice_args[] = {buffer_arg(dst), buffer_arg(src), value_arg(&n, sizeof n)};
    CHECK(cl->launch(dev, twice, groups, local, 3, twice_args, stream) == GK_OK, "launch: %s",
          gk_last_error());
    /* And the device queue's download waits for the user stream. */
    CHECK(cl->stream_order(dev, NULL, stream) == GK_OK, "stream_order back: %s", gk_last_error());
    CHECK(cl->download(dev, back, dst, N * 4) == GK_OK, "download");
    int wrong = 0;
    for (int i = 0; i < N; i++) {
        uint32_t x = (uint32_t)i;
        for (int r = 0; r < rounds; r++)
            x = x * 1664525u + 1013904223u;
        wrong += back[i] != 2u * x;
    }
    CHECK(wrong == 0, "%d values were read out of order", wrong);

    CHECK(cl->stream_order(dev, stream, stream) == GK_OK, "ordering a stream after itself");
    CHECK(cl->stream_synchronize(dev, stream) == GK_OK, "stream_synchronize: %s", gk_last_error());
    CHECK(cl->stream_synchronize(dev, NULL) == GK_OK, "stream_synchronize(NULL)");
    cl->stream_destroy(dev, stream);
    cl->free(dev, src);
    cl->free(dev, dst);
    free(zeros);
    free(back);
}

/* Threads sharing one kernel, each with its own buffer and value: set-args
 * + enqueue must not interleave, or a thread's result shows another's. */
enum { THREADS = 8, ROUNDS = 25, ITEMS = 512 };

typedef struct worker {
    int id;
    gk_gpu_function *function;
    int wrong;
    gk_status status;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    char *out;
    w->status = cl->allocate(dev, ITEMS * sizeof(int64_t), &out);
    if (w->status != GK_OK)
        return NULL;
    int64_t back[ITEMS];
    int64_t n = ITEMS;
    size_t groups[3] = {2, 1, 1}, local[3] = {64, 1, 1};
    for (int r = 0; r < ROUNDS && w->status == GK_OK; r++) {
        int64_t v = (int64_t)w->id * 1000000 + r * 1000;
        gk_gpu_arg args[] = {buffer_arg(out), value_arg(&n, sizeof n), value_arg(&v, sizeof v)};
        w->status = cl->launch(dev, w->function, groups, local, 3, args, NULL);
        if (w->status == GK_OK)
            w->status = cl->download(dev, back, out, sizeof back);
        for (int i = 0; i < ITEMS && w->status == GK_OK; i++)
            w->wrong += back[i] != v + i + 7;
    }
    cl->free(dev, out);
    return NULL;
}

static void test_threads(void)
{
    gk_gpu_function *set_value;
    CHECK(cl->function(dev, module, "set_value", &set_value) == GK_OK, "function");
    pthread_t threads[THREADS];
    worker workers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (worker){.id = t, .function = set_value};
        pthread_create(&threads[t], NULL, work, &workers[t]);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        CHECK(workers[t].status == GK_OK && workers[t].wrong == 0,
              "thread %d: status %d, %d wrong values", t, workers[t].status, workers[t].wrong);
    }
}

int main(void)
{
    /* First, before this process loads OpenCL itself. */
    test_missing_library();
    test_devices();
    test_memory();
    test_build_and_launch();
    test_compile_error();
    test_sub_buffers();
    test_streams();
    test_threads();
    cl->unload(dev, module);
    CHECK_DONE();
}
