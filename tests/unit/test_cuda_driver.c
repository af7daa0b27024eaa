/* The CUDA driver layer (compute/backends/cuda, ext/cuda.c) against the
 * fake libcuda.so.1 of tests/fake_cuda: a missing driver, a driver too old,
 * a failing cuInit, and a working fake GPU (devices, memory round trips,
 * streams, loading and launching kernels, every built-in PTX program, and
 * NVRTC builds when the toolkit is there), and the backend's batched
 * Jacobi SVD call against the fake cuSOLVER.
 *
 * The driver is loaded once per process, so each scenario runs in a child
 * process: this program re-executes itself with the scenario's name and
 * environment. The fake libraries are found next to this program:
 * <build>/tests/test_cuda_driver and <build>/tests/fake_cuda{,_old}/. */
#define _GNU_SOURCE
#include "check.h"

#include "compute/backend.h"
#include "compute/gpu/gpu.h"
#include "core/embedded.h"
#include "ext/nvrtc.h"

#include <gpukit/device.h>

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Built into the library: the kernel sources (src/CMakeLists.txt). */
extern const gk_embedded_file gk_kernel_source_files[];
extern const size_t gk_kernel_source_files_count;

static const gk_gpu_driver *drv = &gk_cuda_driver;
static const gk_device cuda0 = {GK_DEVICE_CUDA, 0, 0};

#define GIB (1ull << 30)
#define MIB (1ull << 20)

/* --- the fake driver's own view, for checks --- */

typedef struct fake_view {
    int (*context_depth)(void);
    long (*live_allocations)(void);
    long (*live_pinned)(void);
    int (*misuses)(char *buf, size_t size);
    int (*last_launch)(char *name, size_t name_size, unsigned dims[6], void **stream,
                       unsigned char *params, size_t *params_size);
} fake_view;

/* The functions of the fake libcuda.so.1 this process loaded. */
static fake_view fake(void)
{
    fake_view view = {0};
    void *library = dlopen(getenv("GPUKIT_CUDA_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
    if (!library)
        return view;
    void *symbols[5] = {dlsym(library, "fake_cuda_context_depth"),
                        dlsym(library, "fake_cuda_live_allocations"),
                        dlsym(library, "fake_cuda_live_pinned"),
                        dlsym(library, "fake_cuda_misuses"),
                        dlsym(library, "fake_cuda_last_launch")};
    memcpy(&view.context_depth, &symbols[0], sizeof symbols[0]);
    memcpy(&view.live_allocations, &symbols[1], sizeof symbols[1]);
    memcpy(&view.live_pinned, &symbols[2], sizeof symbols[2]);
    memcpy(&view.misuses, &symbols[3], sizeof symbols[3]);
    memcpy(&view.last_launch, &symbols[4], sizeof symbols[4]);
    dlclose(library); /* still loaded by gpukit */
    return view;
}

static const gk_embedded_file *source_file(const char *name)
{
    for (size_t i = 0; i < gk_kernel_source_files_count; i++)
        if (strcmp(gk_kernel_source_files[i].name, name) == 0)
            return &gk_kernel_source_files[i];
    return NULL;
}

/* dialect.h followed by `body`, NUL-terminated (malloc'd). */
static char *portable_source(const char *body)
{
    const gk_embedded_file *dialect = source_file("dialect.h");
    if (!dialect)
        return NULL;
    size_t length = strlen(body);
    char *text = malloc(dialect->size + 1 + length + 1);
    memcpy(text, dialect->data, dialect->size);
    text[dialect->size] = '\n';
    memcpy(text + dialect->size + 1, body, length + 1);
    return text;
}

/* ------------------------------------------------------------------ */
/* Scenarios without a working driver                                  */

static int scenario_missing_library(void)
{
    CHECK(drv->list(NULL, 0) == 0, "no devices without a driver");
    gk_status status = drv->check(cuda0);
    CHECK(status == GK_ERR_NOT_FOUND, "status %d", status);
    CHECK(strstr(gk_last_error(), "libcuda.so.1") &&
              strstr(gk_last_error(), "install the NVIDIA driver"),
          "message names the library and the fix: %s", gk_last_error());
    /* The same answer the second time (the load happens once). */
    CHECK(drv->check(cuda0) == GK_ERR_NOT_FOUND && strstr(gk_last_error(), "libcuda.so.1"),
          "second check: %s", gk_last_error());
    char buf[256];
    CHECK(drv->describe(cuda0, buf, sizeof buf) == GK_ERR_NOT_FOUND, "describe fails");
    char *address = NULL;
    CHECK(drv->allocate(cuda0, 64, &address) == GK_ERR_NOT_FOUND, "allocate fails");

    CHECK(gk_device_count(GK_DEVICE_CUDA) == 0, "gk_device_count(CUDA) == 0");
    CHECK(gk_device_check(cuda0) != GK_OK, "gk_device_check(cuda:0) fails");
    CHECK(strstr(gk_last_error(), "libcuda.so.1") != NULL, "gk_device_check names it: %s",
          gk_last_error());
    gk_device best = gk_device_default();
    CHECK(best.kind == GK_DEVICE_CPU, "default device is the CPU (kind %d)", best.kind);
    CHECK_DONE();
}

static int scenario_missing_symbol(void)
{
    CHECK(drv->list(NULL, 0) == 0, "no devices with an unusable driver");
    gk_status status = drv->check(cuda0);
    CHECK(status == GK_ERR_DRIVER, "status %d", status);
    CHECK(strstr(gk_last_error(), "cuLaunchKernel") && strstr(gk_last_error(), "too old"),
          "message names the symbol and the fix: %s", gk_last_error());
    CHECK(gk_device_count(GK_DEVICE_CUDA) == 0, "gk_device_count(CUDA) == 0");
    CHECK(gk_device_default().kind == GK_DEVICE_CPU, "default device is the CPU");
    CHECK_DONE();
}

static int scenario_init_no_device(void)
{
    CHECK(drv->list(NULL, 0) == 0, "no devices");
    gk_status status = drv->check(cuda0);
    CHECK(status == GK_ERR_NOT_FOUND, "no device is 'not found': %d", status);
    CHECK(strstr(gk_last_error(), "CUDA_ERROR_NO_DEVICE") && strstr(gk_last_error(), "nvidia-smi"),
          "message: %s", gk_last_error());
    CHECK(gk_device_default().kind == GK_DEVICE_CPU, "default device is the CPU");
    CHECK_DONE();
}

static int scenario_init_unknown(void)
{
    CHECK(drv->list(NULL, 0) == 0, "no devices");
    gk_status status = drv->check(cuda0);
    CHECK(status == GK_ERR_DRIVER, "status %d", status);
    CHECK(strstr(gk_last_error(), "CUDA_ERROR_UNKNOWN") && strstr(gk_last_error(), "nvidia_uvm"),
          "message names the error and the fix: %s", gk_last_error());
    CHECK_DONE();
}

static int scenario_init_os(void)
{
    gk_status status = drv->check(cuda0);
    CHECK(status == GK_ERR_DRIVER, "status %d", status);
    CHECK(strstr(gk_last_error(), "CUDA_ERROR_OPERATING_SYSTEM") &&
              strstr(gk_last_error(), "/dev/nvidia"),
          "message: %s", gk_last_error());
    CHECK_DONE();
}

/* ------------------------------------------------------------------ */
/* The working fake GPU                                                */

static void check_devices(void)
{
    gk_device list[4];
    CHECK(drv->list(NULL, 0) == 1, "one device");
    CHECK(drv->list(list, 4) == 1 && list[0].kind == GK_DEVICE_CUDA && list[0].index == 0,
          "cuda:0 listed");
    CHECK(drv->check(cuda0) == GK_OK, "cuda:0 usable: %s", gk_last_error());
    gk_status status = drv->check((gk_device){GK_DEVICE_CUDA, 1, 0});
    CHECK(status == GK_ERR_NOT_FOUND && strstr(gk_last_error(), "cuda:1: no such device"),
          "cuda:1: %d %s", status, gk_last_error());

    char text[256];
    CHECK(drv->describe(cuda0, text, sizeof text) == GK_OK, "describe: %s", gk_last_error());
    CHECK(strstr(text, "Fake H100") && strstr(text, "9.0") && strstr(text, "132 SMs") &&
              strstr(text, "80.0 GiB"),
          "description: %s", text);

    gk_gpu_info info;
    CHECK(drv->info(cuda0, &info) == GK_OK, "info: %s", gk_last_error());
    CHECK(strcmp(info.architecture, "sm_90") == 0, "architecture %s", info.architecture);
    CHECK(info.gpu && info.fp64, "a GPU with fp64");
    CHECK(info.compute_units == 132, "SMs %d", info.compute_units);
    CHECK(info.max_group_size == 1024, "group size %d", info.max_group_size);
    CHECK(info.max_local_bytes == 49152, "shared memory %llu",
          (unsigned long long)info.max_local_bytes);
    CHECK(info.max_allocation == 80 * GIB, "max allocation %llu",
          (unsigned long long)info.max_allocation);
    const gk_nvrtc *nvrtc;
    if (gk_nvrtc_open(&nvrtc) == GK_OK) {
        char expected[64];
        snprintf(expected, sizeof expected, "nvrtc %d.%d", nvrtc->major, nvrtc->minor);
        CHECK(strcmp(info.compiler, expected) == 0, "compiler %s", info.compiler);
    } else {
        CHECK(strcmp(info.compiler, "driver JIT") == 0, "compiler %s", info.compiler);
    }

    CHECK(gk_device_count(GK_DEVICE_CUDA) == 1, "gk_device_count(CUDA) == 1");
    gk_device best = gk_device_default();
    CHECK(best.kind == GK_DEVICE_CUDA && best.index == 0, "default device is cuda:0");
}

/* Uploads `bytes` (more than the staging buffers hold, so they are
 * reused), scribbles over the host copy at once (the caller may), and
 * reads the data back. */
static void check_round_trip(fake_view *f)
{
    uint64_t free_before, total;
    CHECK(drv->memory(cuda0, &free_before, &total) == GK_OK, "memory: %s", gk_last_error());
    CHECK(total == 80 * GIB, "total %llu", (unsigned long long)total);

    size_t bytes = 19 * MIB + 123;
    unsigned char *host = malloc(bytes), *back = malloc(bytes);
    /* No pattern that repeats at a power of two, so a piece landing in
     * the wrong place shows. */
    uint32_t x = 12345;
    for (size_t i = 0; i < bytes; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        host[i] = (unsigned char)x;
    }
    char *a = NULL, *b = NULL;
    CHECK(drv->allocate(cuda0, bytes, &a) == GK_OK && a, "allocate: %s", gk_last_error());
    CHECK(drv->allocate(cuda0, bytes, &b) == GK_OK && b, "allocate: %s", gk_last_error());
    uint64_t free_after;
    CHECK(drv->memory(cuda0, &free_after, &total) == GK_OK && free_before - free_after == 2 * bytes,
          "free memory went down by what was allocated");
    char *base;
    size_t offset = 99;
    drv->resolve(a + 40, &base, &offset);
    CHECK(base == a + 40 && offset == 0, "CUDA addresses resolve to themselves");

    CHECK(drv->upload(cuda0, a, host, bytes) == GK_OK, "upload: %s", gk_last_error());
    unsigned char *expected = malloc(bytes);
    memcpy(expected, host, bytes);
    memset(host, 0xEE, bytes);
    memset(back, 0, bytes);
    CHECK(drv->download(cuda0, back, a, bytes) == GK_OK, "download: %s", gk_last_error());
    CHECK(memcmp(back, expected, bytes) == 0, "round trip through staging buffers");

    /* Many small uploads: each reuses a staging buffer before long. */
    unsigned char piece[100];
    for (int i = 0; i < 12; i++) {
        memset(piece, 'a' + i, sizeof piece);
        CHECK(drv->upload(cuda0, b + (size_t)i * sizeof piece, piece, sizeof piece) == GK_OK,
              "small upload %d", i);
    }
    /* Device to device, queued after the uploads. */
    CHECK(drv->copy(cuda0, b + 4096, b, 12 * sizeof piece) == GK_OK, "copy: %s", gk_last_error());
    CHECK(drv->synchronize(cuda0) == GK_OK, "synchronize: %s", gk_last_error());
    CHECK(drv->download(cuda0, back, b + 4096, 12 * sizeof piece) == GK_OK, "download");
    int same = 1;
    for (int i = 0; i < 12 * (int)sizeof piece; i++)
        same &= back[i] == 'a' + i / (int)sizeof piece;
    CHECK(same, "small uploads then a device copy arrive in order");
    CHECK(drv->upload(cuda0, a, host, 0) == GK_OK && drv->download(cuda0, back, a, 0) == GK_OK,
          "empty copies do nothing");

    drv->free(cuda0, a);
    drv->free(cuda0, b);
    if (f->live_allocations)
        CHECK(f->live_allocations() == 0, "every allocation freed (%ld live)",
              f->live_allocations());
    if (f->live_pinned)
        CHECK(f->live_pinned() >= 1 && f->live_pinned() <= 4, "a few staging buffers (%ld)",
              f->live_pinned());

    char *huge = NULL;
    gk_status status = drv->allocate(cuda0, 100 * GIB, &huge);
    CHECK(status == GK_ERR_OUT_OF_MEMORY && strstr(gk_last_error(), "out of GPU memory") &&
              strstr(gk_last_error(), "100.0 GiB"),
          "too large: %d %s", status, gk_last_error());
    char *empty = NULL;
    CHECK(drv->allocate(cuda0, 0, &empty) == GK_OK && empty, "0 bytes is a valid allocation");
    drv->free(cuda0, empty);
    free(host);
    free(back);
    free(expected);
}

/* Several threads uploading and downloading at once: each has its own
 * context stack, and they share the device's staging buffers. */
static void *round_trip_thread(void *arg)
{
    uintptr_t seed = (uintptr_t)arg;
    size_t bytes = 6 * MIB + seed;
    unsigned char *host = malloc(bytes), *back = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        host[i] = (unsigned char)(i % 251 + seed * 17);
    char *address = NULL;
    int ok = drv->allocate(cuda0, bytes, &address) == GK_OK;
    for (int round = 0; ok && round < 3; round++)
        ok = drv->upload(cuda0, address, host, bytes) == GK_OK &&
             drv->download(cuda0, back, address, bytes) == GK_OK &&
             memcmp(host, back, bytes) == 0;
    if (address)
        drv->free(cuda0, address);
    free(host);
    free(back);
    return (void *)(uintptr_t)ok;
}

static void check_threads(void)
{
    pthread_t threads[4];
    for (uintptr_t i = 0; i < 4; i++)
        pthread_create(&threads[i], NULL, round_trip_thread, (void *)(i + 1));
    for (int i = 0; i < 4; i++) {
        void *ok;
        pthread_join(threads[i], &ok);
        CHECK(ok != NULL, "thread %d: round trips while others copy", i);
    }
}

/* Every `.entry NAME` of PTX text. */
static int ptx_entries(const char *ptx, size_t size, char names[][128], int max)
{
    int count = 0;
    char *text = strndup(ptx, size);
    for (char *p = strstr(text, ".entry"); p && count < max; p = strstr(p + 1, ".entry")) {
        char *name = p + 6;
        while (*name == ' ' || *name == '\t')
            name++;
        size_t length = strcspn(name, "( \t\n");
        if (length > 0 && length < 128) {
            memcpy(names[count], name, length);
            names[count++][length] = '\0';
        }
    }
    free(text);
    return count;
}

static void check_prebuilt(void)
{
    const void *binary;
    size_t size;
    CHECK(!drv->prebuilt("no_such_family_float32", &binary, &size), "unknown program");
    /* The program names: every family the library carries, each dtype it
     * has a program for (float16 and bfloat16: elementwise only, and the
     * others must have no PTX for them). */
    char programs[64 * GK_DTYPE_COUNT][128];
    int count = 0, found = 0, families = 0, kernels = 0;
    for (size_t i = 0; i < gk_kernel_source_files_count && count < 64 * GK_DTYPE_COUNT; i++) {
        const char *file = gk_kernel_source_files[i].name;
        size_t length = strlen(file);
        if (length < 4 || strcmp(file + length - 3, ".gk") != 0)
            continue;
        families++;
        char family[128];
        snprintf(family, sizeof family, "%.*s", (int)(length - 3), file);
        for (int dtype = 0; dtype < GK_DTYPE_COUNT; dtype++) {
            char name[160];
            snprintf(name, sizeof name, "%s_%s", family, gk_dtype_name((gk_dtype)dtype));
            if (!gk_gpu_family_has_dtype(family, (gk_dtype)dtype)) {
                CHECK(!drv->prebuilt(name, &binary, &size), "PTX for %s, which has no program",
                      name);
                continue;
            }
            snprintf(programs[count], sizeof programs[count], "%s", name);
            found += drv->prebuilt(programs[count++], &binary, &size);
        }
    }
    CHECK(families > 0, "the library carries kernel families");
    if (found == 0) {
        printf("note: this build has no built-in PTX (no nvcc when it was configured)\n");
        return;
    }
    for (int i = 0; i < count; i++) {
        const char *program = programs[i];
        if (!drv->prebuilt(program, &binary, &size)) {
            CHECK(0, "no built-in PTX for %s", program);
            continue;
        }
        gk_gpu_module *module = NULL;
        gk_status status = drv->load(cuda0, binary, size, &module);
        CHECK(status == GK_OK, "%s loads: %s", program, gk_last_error());
        if (status != GK_OK)
            continue;
        static char names[256][128];
        int entries = ptx_entries(binary, size, names, 256);
        for (int k = 0; k < entries; k++) {
            gk_gpu_function *function = NULL;
            CHECK(drv->function(cuda0, module, names[k], &function) == GK_OK && function,
                  "%s: kernel %s: %s", program, names[k], gk_last_error());
        }
        kernels += entries;
        drv->unload(cuda0, module);
    }
    printf("built-in PTX: %d programs of %d families load, %d kernels found\n", count, families,
           kernels);
}

/* A hand-written kernel: a buffer, a float and a 24-byte struct. */
static const char scale_ptx[] = ".version 8.0\n"
                                ".target sm_90\n"
                                ".address_size 64\n"
                                ".visible .entry scale(\n"
                                "\t.param .u64 scale_param_0,\n"
                                "\t.param .f32 scale_param_1,\n"
                                "\t.param .align 8 .b8 scale_param_2[24]\n"
                                ")\n"
                                "{\n\tret;\n}\n";

static void check_launch(fake_view *f)
{
    gk_gpu_module *module = NULL;
    /* Without its NUL: load must add one. */
    CHECK(drv->load(cuda0, scale_ptx, sizeof scale_ptx - 1, &module) == GK_OK, "load PTX: %s",
          gk_last_error());
    gk_gpu_function *function = NULL;
    CHECK(drv->function(cuda0, module, "scale", &function) == GK_OK, "function: %s",
          gk_last_error());
    gk_gpu_function *missing = NULL;
    gk_status status = drv->function(cuda0, module, "nope", &missing);
    CHECK(status == GK_ERR_NOT_FOUND && strstr(gk_last_error(), "'nope'"), "unknown kernel: %s",
          gk_last_error());

    char *buffer = NULL;
    CHECK(drv->allocate(cuda0, 4096, &buffer) == GK_OK, "allocate");
    float factor = 2.5f;
    struct {
        int64_t a, b, c;
    } loop = {1, -2, 3};
    gk_gpu_arg args[3] = {
        {.kind = GK_GPU_ARG_BUFFER, .address = buffer + 64},
        {.kind = GK_GPU_ARG_VALUE, .value = &factor, .size = sizeof factor},
        {.kind = GK_GPU_ARG_VALUE, .value = &loop, .size = sizeof loop},
    };
    size_t groups[3] = {3, 2, 1}, local[3] = {128, 1, 1};
    CHECK(drv->launch(cuda0, function, groups, local, 3, args, NULL) == GK_OK, "launch: %s",
          gk_last_error());
    if (f->last_launch) {
        char name[128];
        unsigned dims[6];
        void *stream;
        unsigned char params[64];
        size_t params_size = sizeof params;
        int launches = f->last_launch(name, sizeof name, dims, &stream, params, &params_size);
        CHECK(launches == 1 && strcmp(name, "scale") == 0, "launched %s (%d)", name, launches);
        CHECK(dims[0] == 3 && dims[1] == 2 && dims[2] == 1 && dims[3] == 128 && dims[4] == 1 &&
                  dims[5] == 1,
              "geometry %u %u %u x %u %u %u", dims[0], dims[1], dims[2], dims[3], dims[4], dims[5]);
        CHECK(stream != NULL, "on the device's stream, not the legacy default stream");
        uint64_t pointer;
        float value;
        CHECK(params_size == 8 + 4 + 24, "parameter bytes %zu", params_size);
        memcpy(&pointer, params, 8);
        memcpy(&value, params + 8, 4);
        CHECK(pointer == (uint64_t)(uintptr_t)(buffer + 64), "buffer passed as its address");
        CHECK(value == 2.5f, "float passed by value");
        CHECK(memcmp(params + 12, &loop, sizeof loop) == 0, "struct passed by value");

        /* On a stream of its own. */
        gk_gpu_stream *user = NULL;
        CHECK(drv->stream_create(cuda0, &user) == GK_OK, "stream_create: %s", gk_last_error());
        CHECK(drv->launch(cuda0, function, groups, local, 3, args, user) == GK_OK, "launch");
        params_size = sizeof params;
        f->last_launch(name, sizeof name, dims, &stream, params, &params_size);
        CHECK(stream == (void *)user, "launched on the given stream");
        drv->stream_destroy(cuda0, user);

        /* No work-items: nothing launched. */
        size_t none[3] = {0, 1, 1};
        CHECK(drv->launch(cuda0, function, none, local, 3, args, NULL) == GK_OK, "empty launch");
        params_size = sizeof params;
        CHECK(f->last_launch(name, sizeof name, dims, &stream, params, &params_size) == 2,
              "an empty launch launches nothing");
    }
    drv->free(cuda0, buffer);
    drv->unload(cuda0, module);

    gk_gpu_module *bad = NULL;
    static const char not_ptx[] = "hello, world";
    status = drv->load(cuda0, not_ptx, sizeof not_ptx, &bad);
    CHECK(status == GK_ERR_DRIVER && strstr(gk_last_error(), "CUDA_ERROR_INVALID_PTX") &&
              strstr(gk_last_error(), "fake ptxas"),
          "not PTX: %s", gk_last_error());
}

/* stream_order: work queued on the device's stream before is done before
 * anything queued on the later stream (the fake does queued copies only
 * when something waits for them). */
static void check_streams(void)
{
    gk_gpu_stream *later = NULL;
    CHECK(drv->stream_create(cuda0, &later) == GK_OK, "stream_create: %s", gk_last_error());
    char *buffer = NULL;
    CHECK(drv->allocate(cuda0, 256, &buffer) == GK_OK, "allocate");
    memset(buffer, 0, 256); /* the fake's device memory is host memory */
    char data[256];
    memset(data, 'z', sizeof data);
    CHECK(drv->upload(cuda0, buffer, data, sizeof data) == GK_OK, "upload");
    CHECK(buffer[0] == 0, "the upload is queued, not done");
    CHECK(drv->stream_order(cuda0, later, NULL) == GK_OK, "stream_order: %s", gk_last_error());
    CHECK(buffer[0] == 'z' && buffer[255] == 'z', "the later stream waits for the upload");
    CHECK(drv->stream_order(cuda0, NULL, NULL) == GK_OK, "a stream after itself");
    CHECK(drv->stream_synchronize(cuda0, later) == GK_OK, "stream_synchronize");
    CHECK(drv->stream_synchronize(cuda0, NULL) == GK_OK, "device stream synchronize");
    drv->stream_destroy(cuda0, later);
    drv->free(cuda0, buffer);
}

static void check_build(void)
{
    const gk_nvrtc *nvrtc;
    if (gk_nvrtc_open(&nvrtc) != GK_OK) {
        printf("note: NVRTC not available (%s): builds not checked\n", gk_last_error());
        return;
    }
    char *source = portable_source(
        "GK_KERNEL void twice(GK_GLOBAL float *x, gk_i64 n)\n"
        "{\n"
        "    GK_FOR_EACH_INDEX(i, n) x[i] *= FACTOR;\n"
        "}\n");
    CHECK(source != NULL, "dialect.h is built in");
    if (!source)
        return;
    gk_gpu_module *module = NULL;
    void *binary = NULL;
    size_t size = 0;
    gk_status status = drv->build(cuda0, GK_GPU_PORTABLE, source, "-DFACTOR=2  -lineinfo",
                                  &module, &binary, &size);
    CHECK(status == GK_OK, "build: %s", gk_last_error());
    if (status == GK_OK) {
        /* NVRTC knows sm_90: machine code, which the fake reads as ELF. */
        CHECK(size > 4 && memcmp(binary, "\x7f" "ELF", 4) == 0, "a cubin for sm_90");
        gk_gpu_function *function = NULL;
        CHECK(drv->function(cuda0, module, "twice", &function) == GK_OK, "kernel in the cubin: %s",
              gk_last_error());
        gk_gpu_module *again = NULL;
        CHECK(drv->load(cuda0, binary, size, &again) == GK_OK, "the binary loads again: %s",
              gk_last_error());
        drv->unload(cuda0, again);
        drv->unload(cuda0, module);
        free(binary);
    }
    free(source);

    source =
        portable_source("GK_KERNEL void broken(GK_GLOBAL float *x) { x[0] = undefined_name; }\n");
    status = drv->build(cuda0, GK_GPU_PORTABLE, source, NULL, &module, NULL, NULL);
    CHECK(status == GK_ERR_INVALID_ARGUMENT && strstr(gk_last_error(), "undefined_name"),
          "a compile error gives the log: %d %s", status, gk_last_error());
    free(source);

    status = drv->build(cuda0, GK_GPU_CUDA_C, "extern \"C\" __global__ void k() {}",
                        "--no-such-option", &module, NULL, NULL);
    CHECK(status == GK_ERR_INVALID_ARGUMENT, "a bad option is the caller's error: %s",
          gk_last_error());
}

static void check_no_cublas(void)
{
    gk_status status = drv->blas_matmul(cuda0, GK_FLOAT32, 1, 2, 2, 2, NULL, 0, NULL, 0, NULL, 0);
    CHECK(status == GK_ERR_NOT_FOUND && strstr(gk_last_error(), "cuBLAS"),
          "without cuBLAS the shared kernel takes over: %d %s", status, gk_last_error());
}

static void check_clean(fake_view *f)
{
    char text[256] = "";
    if (f->context_depth)
        CHECK(f->context_depth() == 0, "every pushed context popped (%d left)", f->context_depth());
    if (f->misuses)
        CHECK(f->misuses(text, sizeof text) == 0, "the fake saw misuse: %s", text);
}

static int scenario_ok(void)
{
    drv->list(NULL, 0); /* loads the fake driver */
    fake_view f = fake();
    CHECK(f.context_depth && f.last_launch, "the fake driver's test functions are found");
    check_devices();
    check_round_trip(&f);
    check_threads();
    check_launch(&f);
    check_streams();
    check_prebuilt();
    check_build();
    check_no_cublas();
    check_clean(&f);
    CHECK_DONE();
}

/* A GPU newer than NVRTC knows: PTX for the newest architecture it does
 * know, which the driver compiles. */
static int scenario_newer_gpu(void)
{
    gk_gpu_info info;
    CHECK(drv->info(cuda0, &info) == GK_OK && strcmp(info.architecture, "sm_99") == 0,
          "architecture %s", info.architecture);
    const gk_nvrtc *nvrtc;
    if (gk_nvrtc_open(&nvrtc) != GK_OK) {
        printf("note: NVRTC not available: newer-GPU build not checked\n");
        CHECK_DONE();
    }
    char *source = portable_source("GK_KERNEL void k(GK_GLOBAL float *x) { x[0] = 1; }\n");
    gk_gpu_module *module = NULL;
    void *binary = NULL;
    size_t size = 0;
    gk_status status = drv->build(cuda0, GK_GPU_PORTABLE, source, "", &module, &binary, &size);
    CHECK(status == GK_OK, "build: %s", gk_last_error());
    if (status == GK_OK) {
        int newest = gk_nvrtc_newest_up_to(nvrtc, 99);
        char target[32];
        snprintf(target, sizeof target, ".target sm_%d", newest);
        CHECK(memcmp(binary, "\x7f" "ELF", 4) != 0 && strstr(binary, target),
              "PTX for sm_%d", newest);
        gk_gpu_function *function = NULL;
        CHECK(drv->function(cuda0, module, "k", &function) == GK_OK, "kernel: %s",
              gk_last_error());
        drv->unload(cuda0, module);
        free(binary);
    }
    free(source);
    CHECK_DONE();
}

/* A driver older than the PTX: the message says to update it. */
static int scenario_old_driver_ptx(void)
{
    static const char ptx[] = ".version 9.0\n.target sm_75\n.address_size 64\n";
    gk_gpu_module *module = NULL;
    gk_status status = drv->load(cuda0, ptx, sizeof ptx, &module);
    CHECK(status == GK_ERR_DRIVER &&
              strstr(gk_last_error(), "CUDA_ERROR_UNSUPPORTED_PTX_VERSION") &&
              strstr(gk_last_error(), "update the NVIDIA driver"),
          "message: %s", gk_last_error());
    CHECK_DONE();
}

/* The driver without the toolkit: built-in PTX only. */
static int scenario_no_toolkit(void)
{
    gk_gpu_info info;
    CHECK(drv->info(cuda0, &info) == GK_OK && strcmp(info.compiler, "driver JIT") == 0,
          "compiler %s", info.compiler);
    gk_gpu_module *module = NULL;
    gk_status status = drv->build(cuda0, GK_GPU_CUDA_C, "extern \"C\" __global__ void k() {}", "",
                                  &module, NULL, NULL);
    CHECK(status == GK_ERR_NOT_FOUND && strstr(gk_last_error(), "NVRTC") &&
              strstr(gk_last_error(), "built-in"),
          "build without NVRTC: %d %s", status, gk_last_error());
    check_no_cublas();
    check_prebuilt();
    fake_view f = fake();
    CHECK(f.context_depth != NULL, "the fake driver's test functions are found");
    check_clean(&f);
    CHECK_DONE();
}

/* The backend's GK_SOLVER_SVD_JACOBI (gesvdjBatched) on the fake cuSOLVER,
 * which gpukit's svd reaches only after a kernel has checked the input
 * (the fake runs none): the arguments it passes, checked by the results. */
static int scenario_batched_svd(void)
{
    /* the fake cuSOLVER beside the fake driver */
    char solver[PATH_MAX];
    snprintf(solver, sizeof solver, "%s", getenv("GPUKIT_CUDA_LIBRARY"));
    char *slash = strrchr(solver, '/');
    *slash = '\0';
    slash = strrchr(solver, '/');
    snprintf(slash, sizeof solver - (size_t)(slash - solver), "/fake_cusolver/libcusolver.so.12");
    setenv("GPUKIT_CUSOLVER_LIBRARY", solver, 1);
    const gk_backend *backend = gk_backend_of(GK_DEVICE_CUDA);
    gk_solver_call probe = {.op = GK_SOLVER_SVD_JACOBI, .dtype = GK_FLOAT64, .m = 4, .n = 3};
    CHECK(backend->solver(cuda0, &probe) == GK_OK, "4 x 3 is batched: %s", gk_last_error());
    probe.m = 40;
    CHECK(backend->solver(cuda0, &probe) == GK_ERR_NOT_FOUND, "40 x 3 is not");
    /* three 4 x 3 matrices, column-major */
    enum { COUNT = 3, M = 4, N = 3, K = 3 };
    double a[COUNT][N][M], s[COUNT][K], u[COUNT][M][M], v[COUNT][N][N];
    int32_t info[COUNT];
    for (int i = 0; i < COUNT; i++)
        for (int col = 0; col < N; col++)
            for (int row = 0; row < M; row++)
                a[i][col][row] = (double)((row * 7 + col * 3 + i * 5) % 11) - 4.5 + (row == col);
    gk_array *da = NULL, *ds = NULL, *du = NULL, *dv = NULL, *dinfo = NULL;
    int64_t shape[1] = {COUNT * M * N};
    CHECK(gk_from_host(cuda0, GK_FLOAT64, 1, shape, a, &da) == GK_OK, "the matrices: %s",
          gk_last_error());
    shape[0] = COUNT * K;
    gk_empty(cuda0, GK_FLOAT64, 1, shape, &ds);
    shape[0] = COUNT * M * M;
    gk_empty(cuda0, GK_FLOAT64, 1, shape, &du);
    shape[0] = COUNT * N * N;
    gk_empty(cuda0, GK_FLOAT64, 1, shape, &dv);
    shape[0] = COUNT;
    gk_empty(cuda0, GK_INT32, 1, shape, &dinfo);
    gk_solver_call call = {.op = GK_SOLVER_SVD_JACOBI, .dtype = GK_FLOAT64, .count = COUNT,
                           .m = M, .n = N, .vectors = true, .a = gk_array_data(da),
                           .b = gk_array_data(du), .c = gk_array_data(dv),
                           .w = gk_array_data(ds), .info = gk_array_data(dinfo)};
    double original[COUNT][N][M];
    memcpy(original, a, sizeof a);
    CHECK(backend->solver(cuda0, &call) == GK_OK, "gesvdjBatched: %s", gk_last_error());
    CHECK(gk_to_host(ds, s, sizeof s) == GK_OK && gk_to_host(du, u, sizeof u) == GK_OK &&
              gk_to_host(dv, v, sizeof v) == GK_OK && gk_to_host(dinfo, info, sizeof info) == GK_OK,
          "the results: %s", gk_last_error());
    /* A = U[:, :K] S V^T, matrix by matrix (u[i][col][row], v[i][col][row]) */
    double worst = 0;
    for (int i = 0; i < COUNT; i++) {
        CHECK(info[i] == 0 && s[i][0] >= s[i][1] && s[i][1] >= s[i][2], "matrix %d: info %d", i,
              info[i]);
        for (int row = 0; row < M; row++)
            for (int col = 0; col < N; col++) {
                double sum = 0;
                for (int j = 0; j < K; j++)
                    sum += u[i][j][row] * s[i][j] * v[i][j][col];
                double error = sum - original[i][col][row];
                worst = error > worst ? error : -error > worst ? -error : worst;
            }
    }
    CHECK(worst < 1e-12, "U S V^T is A (worst %g)", worst);
    gk_array *all[] = {da, ds, du, dv, dinfo};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_array_free(all[i]);
    CHECK_DONE();
}

/* ------------------------------------------------------------------ */

typedef struct scenario {
    const char *name;
    int (*run)(void);
    const char *library; /* "missing", "fake" or "old" */
    const char *env[4];  /* NAME=value */
} scenario;

static const scenario scenarios[] = {
    {"missing_library", scenario_missing_library, "missing", {NULL}},
    {"missing_symbol", scenario_missing_symbol, "old", {NULL}},
    {"init_no_device", scenario_init_no_device, "fake",
     {"FAKE_CUDA_MODE=init_fails", "FAKE_CUDA_INIT_ERROR=100", NULL}},
    {"init_unknown", scenario_init_unknown, "fake",
     {"FAKE_CUDA_MODE=init_fails", "FAKE_CUDA_INIT_ERROR=999", NULL}},
    {"init_os", scenario_init_os, "fake",
     {"FAKE_CUDA_MODE=init_fails", "FAKE_CUDA_INIT_ERROR=304", NULL}},
    {"ok", scenario_ok, "fake",
     {"FAKE_CUDA_MODE=ok", "GPUKIT_CUBLAS_LIBRARY=/nonexistent/libcublas.so", NULL}},
    {"newer_gpu", scenario_newer_gpu, "fake", {"FAKE_CUDA_CC=9.9", NULL}},
    {"old_driver_ptx", scenario_old_driver_ptx, "fake", {"FAKE_CUDA_MAX_PTX=8.0", NULL}},
    {"batched_svd", scenario_batched_svd, "fake", {NULL}},
    {"no_toolkit", scenario_no_toolkit, "fake",
     {"GPUKIT_NVRTC_LIBRARY=/nonexistent/libnvrtc.so",
      "GPUKIT_CUBLAS_LIBRARY=/nonexistent/libcublas.so", NULL}},
};

#define SCENARIO_COUNT (int)(sizeof scenarios / sizeof scenarios[0])

/* Runs one scenario in a fresh process with its environment. */
static int run_child(const scenario *s, const char *tests_dir)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        static const char *const cleared[] = {"FAKE_CUDA_MODE", "FAKE_CUDA_INIT_ERROR",
                                              "FAKE_CUDA_CC", "FAKE_CUDA_MAX_PTX",
                                              "GPUKIT_NVRTC_LIBRARY", "GPUKIT_CUBLAS_LIBRARY"};
        for (size_t i = 0; i < sizeof cleared / sizeof cleared[0]; i++)
            unsetenv(cleared[i]);
        char library[PATH_MAX];
        if (strcmp(s->library, "missing") == 0)
            snprintf(library, sizeof library, "/nonexistent/libcuda.so.1");
        else
            snprintf(library, sizeof library, "%s/%s/libcuda.so.1", tests_dir,
                     strcmp(s->library, "old") == 0 ? "fake_cuda_old" : "fake_cuda");
        setenv("GPUKIT_CUDA_LIBRARY", library, 1);
        for (int i = 0; s->env[i]; i++)
            putenv((char *)s->env[i]);
        execl("/proc/self/exe", "test_cuda_driver", s->name, (char *)NULL);
        perror("exec");
        _exit(127);
    }
    int wstatus;
    if (waitpid(pid, &wstatus, 0) < 0) {
        perror("waitpid");
        return 1;
    }
    if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
        return 0;
    fprintf(stderr, "scenario %s failed (%s %d)\n", s->name,
            WIFEXITED(wstatus) ? "exit status" : "signal",
            WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WTERMSIG(wstatus));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc == 2) {
        for (int i = 0; i < SCENARIO_COUNT; i++)
            if (strcmp(argv[1], scenarios[i].name) == 0)
                return scenarios[i].run();
        fprintf(stderr, "unknown scenario %s\n", argv[1]);
        return 2;
    }

    char tests_dir[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", tests_dir, sizeof tests_dir - 1);
    if (length <= 0) {
        perror("readlink /proc/self/exe");
        return 1;
    }
    tests_dir[length] = '\0';
    char *slash = strrchr(tests_dir, '/');
    *slash = '\0';
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/fake_cuda/libcuda.so.1", tests_dir);
    if (access(probe, R_OK) != 0) {
        fprintf(stderr, "%s is missing: build the fake_cuda and fake_cuda_old targets\n", probe);
        return 1;
    }

    int failed = 0;
    for (int i = 0; i < SCENARIO_COUNT; i++) {
        int bad = run_child(&scenarios[i], tests_dir);
        printf("%s: %s\n", scenarios[i].name, bad ? "FAILED" : "ok");
        failed += bad;
    }
    if (failed)
        fprintf(stderr, "%d scenario(s) failed\n", failed);
    return failed ? 1 : 0;
}
