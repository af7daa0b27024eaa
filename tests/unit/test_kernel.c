/* User kernels (gpukit/kernel.h) on every device, the cpu's too: raw
 * kernels in the portable dialect (1-, 2- and 3-D grids and the ids each
 * work-item sees, every scalar argument kind, several arrays and views
 * with offsets, local memory and barriers), elementwise kernels
 * (broadcasting, several outputs, given and new outputs, every dtype, the
 * index i, overlapping in/out), user streams ordered with array ops, the
 * compile cache in memory and on disk across processes, and every error a
 * caller can make. Results are checked against values computed here.
 *
 * Devices: those of gk_device_list (GPUKIT_TEST_DEVICES overrides, as for
 * the array tests); the cpu's kernels run on the OpenCL driver for the
 * CPU. With no OpenCL device at all the test fails (CI has PoCL) unless
 * GPUKIT_TEST_NO_GPU_DEVICE=1; then it checks that the cpu device says
 * which driver to install. */
#include "array_check.h"

#include "compute/gpu/gpu.h"
#include "compute/half.h"

#include <gpukit/kernel.h>

#include <dirent.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Stops the current test when a call fails: later steps need its result. */
#define REQUIRE_OK(call)                                                             \
    do {                                                                             \
        gk_status status_ = (call);                                                  \
        if (status_ != GK_OK) {                                                      \
            CHECK(status_ == GK_OK, "%s", gk_last_error());                          \
            goto done;                                                               \
        }                                                                            \
    } while (0)

/* The message of the last error contains `text`. */
#define CHECK_MESSAGE(text)                                                          \
    CHECK(strstr(gk_last_error(), (text)) != NULL, "message: %s", gk_last_error())

/* The facts of the device kernels for `device` run on (for the cpu
 * device: the OpenCL driver for the CPU). */
static const gk_gpu_info *info_of(gk_device device)
{
    const gk_gpu_info *info = NULL;
    if (device.kind == GK_DEVICE_CPU)
        CHECK_OK(gk_gpu_host_device(&device));
    CHECK_OK(gk_gpu_info_of(device, &info));
    return info;
}

/* A device other than `device`, for arrays in the wrong place: the cpu,
 * or for the cpu device the OpenCL device its kernels run on. */
static gk_device other_device(gk_device device)
{
    gk_device other = gk_device_cpu();
    if (device.kind == GK_DEVICE_CPU)
        CHECK_OK(gk_gpu_host_device(&other));
    return other;
}

/* ---- raw kernels -------------------------------------------------------- */

/* Each work-item writes its global, local and group ids (x, y, z) at the
 * place its global position gives in a C-order (z, y, x, 9) array. */
static const char *ids_source =
    "GK_KERNEL void ids(GK_GLOBAL gk_i32 *out)\n"
    "{\n"
    "    gk_i64 at = ((GK_GLOBAL_ID(2) * GK_GLOBAL_SIZE(1) + GK_GLOBAL_ID(1))\n"
    "                 * GK_GLOBAL_SIZE(0) + GK_GLOBAL_ID(0)) * 9;\n"
    "    for (int d = 0; d < 3; d++) {\n"
    "        out[at + d] = (gk_i32)GK_GLOBAL_ID(d);\n"
    "        out[at + 3 + d] = (gk_i32)GK_LOCAL_ID(d);\n"
    "        out[at + 6 + d] = (gk_i32)GK_GROUP_ID(d);\n"
    "    }\n"
    "}\n";

static void check_ids(gk_device device, gk_kernel *kernel, const uint32_t grid[3],
                      const uint32_t block[3])
{
    int64_t size[3], n = 9;
    for (int d = 0; d < 3; d++) {
        size[d] = (int64_t)grid[d] * block[d];
        n *= size[d];
    }
    gk_array *out = NULL;
    double *expected = malloc(sizeof *expected * (size_t)n);
    REQUIRE_OK(gk_full(device, GK_INT32, 1, &n, -1, &out)); /* -1: not written */
    gk_arg arg = gk_arg_array(out);
    REQUIRE_OK(gk_kernel_launch(kernel, grid, block, NULL, 1, &arg));
    for (int64_t z = 0; z < size[2]; z++) {
        for (int64_t y = 0; y < size[1]; y++) {
            for (int64_t x = 0; x < size[0]; x++) {
                int64_t at = ((z * size[1] + y) * size[0] + x) * 9, id[3] = {x, y, z};
                for (int d = 0; d < 3; d++) {
                    expected[at + d] = (double)id[d];
                    expected[at + 3 + d] = (double)(id[d] % block[d]);
                    expected[at + 6 + d] = (double)(id[d] / block[d]);
                }
            }
        }
    }
    CHECK_VALUES(out, expected, n, 0);
done:
    free(expected);
    gk_array_free(out);
}

static void test_grids(gk_device device)
{
    gk_kernel *kernel = NULL;
    REQUIRE_OK(gk_kernel_compile(device, GK_KERNEL_PORTABLE, ids_source, "ids", NULL, &kernel));
    check_ids(device, kernel, (uint32_t[]){5, 1, 1}, (uint32_t[]){8, 1, 1});
    check_ids(device, kernel, (uint32_t[]){3, 2, 1}, (uint32_t[]){4, 2, 1});
    check_ids(device, kernel, (uint32_t[]){2, 3, 2}, (uint32_t[]){2, 2, 2});
done:
    gk_kernel_free(kernel);
}

/* Every scalar kind, interleaved with arrays so that argument packing and
 * alignment matter, and compile options. */
static const char *scalars_source =
    "GK_KERNEL void scalars(gk_i32 a, GK_GLOBAL gk_i64 *ints, gk_i64 b, float c,\n"
    "                       GK_GLOBAL float *floats, gk_i32 last)\n"
    "{\n"
    "    if (GK_GLOBAL_ID(0) == 0) {\n"
    "        ints[0] = a;\n"
    "        ints[1] = b;\n"
    "        ints[2] = FACTOR * a;\n"
    "        ints[3] = last;\n"
    "        floats[0] = c * 2.0f;\n"
    "    }\n"
    "}\n"
    "#ifdef GK_HAS_FP64\n"
    "GK_KERNEL void scalars64(double d, GK_GLOBAL double *out, gk_i32 a)\n"
    "{\n"
    "    if (GK_GLOBAL_ID(0) == 0) {\n"
    "        out[0] = d;\n"
    "        out[1] = d * a;\n"
    "    }\n"
    "}\n"
    "#endif\n";

static void test_scalars(gk_device device)
{
    gk_kernel *kernel = NULL, *kernel64 = NULL;
    gk_array *ints = NULL, *floats = NULL, *doubles = NULL;
    const gk_gpu_info *info = info_of(device);
    if (!info)
        return;
    uint32_t one[3] = {1, 1, 1};
    REQUIRE_OK(gk_kernel_compile(device, GK_KERNEL_PORTABLE, scalars_source, "scalars",
                                 "-DFACTOR=3", &kernel));
    REQUIRE_OK(gk_zeros(device, GK_INT64, 1, (int64_t[]){4}, &ints));
    REQUIRE_OK(gk_zeros(device, GK_FLOAT32, 1, (int64_t[]){1}, &floats));
    gk_arg args[] = {gk_arg_int32(-123456), gk_arg_array(ints), gk_arg_int64(5000000007LL),
                     gk_arg_float32(1.25f), gk_arg_array(floats), gk_arg_int32(77)};
    REQUIRE_OK(gk_kernel_launch(kernel, one, one, NULL, 6, args));
    CHECK_VALUES(ints, ((double[]){-123456, 5000000007.0, -370368, 77}), 4, 0);
    CHECK_VALUES(floats, ((double[]){2.5}), 1, 0);

    if (info->fp64) {
        REQUIRE_OK(gk_kernel_compile(device, GK_KERNEL_PORTABLE, scalars_source, "scalars64",
                                     "-DFACTOR=3", &kernel64));
        REQUIRE_OK(gk_zeros(device, GK_FLOAT64, 1, (int64_t[]){2}, &doubles));
        gk_arg args64[] = {gk_arg_float64(0.1), gk_arg_array(doubles), gk_arg_int32(3)};
        REQUIRE_OK(gk_kernel_launch(kernel64, one, one, NULL, 3, args64));
        /* 0.1 is not a float: only a double argument gives it back exactly. */
        CHECK_VALUES(doubles, ((double[]){0.1, 0.1 * 3}), 2, 0);
    }
done:
    gk_kernel_free(kernel);
    gk_kernel_free(kernel64);
    gk_array_free(ints);
    gk_array_free(floats);
    gk_array_free(doubles);
}

/* Three arrays, each a view starting at another offset into its buffer.
 * The offsets are multiples of 4096 bytes: OpenCL passes such views as
 * sub-buffers, whose start must be aligned (CL_DEVICE_MEM_BASE_ADDR_ALIGN,
 * at most 4096 bytes on today's devices). */
static const char *axpy_source =
    "GK_KERNEL void axpy(GK_GLOBAL float *out, GK_GLOBAL const float *x,\n"
    "                    GK_GLOBAL const float *y, float a, gk_i64 n)\n"
    "{\n"
    "    gk_i64 i = GK_GLOBAL_ID(0);\n"
    "    if (i < n)\n"
    "        out[i] = a * x[i] + y[i];\n"
    "}\n";

enum { VIEW_BASE = 8192, VIEW_N = 40 };

/* out[start:start+40] = 2 * x[x0:] + y[y0:] over arrays of VIEW_BASE
 * floats (x = 0, 1, ...; y = 1000, 1001, ...; out = -1): GK_OK or the
 * launch's status, with the values checked after a success. */
static gk_status run_views(gk_device device, gk_kernel *kernel, int64_t x0, int64_t y0,
                           int64_t out0)
{
    gk_array *x = NULL, *y = NULL, *out = NULL, *xv = NULL, *yv = NULL, *outv = NULL;
    int64_t n = VIEW_BASE;
    gk_status status = GK_OK;
    double *expected = malloc(sizeof *expected * VIEW_BASE);
    REQUIRE_OK(expected ? GK_OK : GK_ERR_OUT_OF_MEMORY);
    REQUIRE_OK(gk_arange(device, GK_FLOAT32, 0, VIEW_BASE, 1, &x));
    REQUIRE_OK(gk_arange(device, GK_FLOAT32, 1000, 1000 + VIEW_BASE, 1, &y));
    REQUIRE_OK(gk_full(device, GK_FLOAT32, 1, &n, -1, &out));
    REQUIRE_OK(gk_slice(x, 0, x0, x0 + VIEW_N, 1, &xv));
    REQUIRE_OK(gk_slice(y, 0, y0, y0 + VIEW_N, 1, &yv));
    REQUIRE_OK(gk_slice(out, 0, out0, out0 + VIEW_N, 1, &outv));
    gk_arg args[] = {gk_arg_array(outv), gk_arg_array(xv), gk_arg_array(yv),
                     gk_arg_float32(2), gk_arg_int64(VIEW_N)};
    status = gk_kernel_launch(kernel, (uint32_t[]){2, 1, 1}, (uint32_t[]){32, 1, 1}, NULL, 5,
                              args);
    if (status == GK_OK) {
        for (int64_t i = 0; i < VIEW_BASE; i++)
            expected[i] = i >= out0 && i < out0 + VIEW_N
                              ? 2.0 * (double)(x0 + i - out0) + 1000 + (double)(y0 + i - out0)
                              : -1;
        CHECK_VALUES(out, expected, VIEW_BASE, 0); /* and nothing outside the view */
    }
done:
    free(expected);
    gk_array_free(x);
    gk_array_free(y);
    gk_array_free(out);
    gk_array_free(xv);
    gk_array_free(yv);
    gk_array_free(outv);
    return status;
}

/* gk_arg_view: out[i, j] = 10 * in[i, j] + i through the views' layouts
 * (a transposed, flipped, sliced input; a transposed output). */
static const char *const strided_source =
    "GK_KERNEL void strided(GK_GLOBAL float *in, gk_view a, GK_GLOBAL float *out, gk_view b)\n"
    "{\n"
    "    gk_i64 i = GK_GLOBAL_ID(0), j = GK_GLOBAL_ID(1);\n"
    "    if (i < a.shape[0] && j < a.shape[1] && a.ndim == 2 && a.size == a.shape[0] * a.shape[1])\n"
    "        out[b.offset + i * b.strides[0] + j * b.strides[1]] =\n"
    "            10 * in[a.offset + i * a.strides[0] + j * a.strides[1]] + (float)i;\n"
    "}\n";

static void test_view_args(gk_device device)
{
    gk_kernel *kernel = NULL;
    gk_array *base = NULL, *t = NULL, *flipped = NULL, *in = NULL, *out_base = NULL, *out = NULL;
    REQUIRE_OK(gk_kernel_compile(device, GK_KERNEL_PORTABLE, strided_source, "strided", NULL,
                                 &kernel));
    /* base is 6 x 5 = 0..29; in = flip(base.T, axis 0)[1:4] is 3 x 6 with
     * in[i, j] = base[j, 3 - i]. */
    REQUIRE_OK(gk_arange(device, GK_FLOAT32, 0, 30, 1, &t));
    REQUIRE_OK(gk_reshape(t, 2, (int64_t[]){6, 5}, &base));
    gk_array_free(t);
    t = NULL;
    REQUIRE_OK(gk_matrix_transpose(base, &t));
    REQUIRE_OK(gk_flip(t, 1, (int[]){0}, &flipped));
    REQUIRE_OK(gk_slice(flipped, 0, 1, 4, 1, &in));
    REQUIRE_OK(gk_zeros(device, GK_FLOAT32, 2, (int64_t[]){6, 3}, &out_base));
    REQUIRE_OK(gk_matrix_transpose(out_base, &out));
    gk_arg args[] = {gk_arg_view(in), gk_arg_view(out)};
    CHECK_OK(gk_kernel_launch(kernel, (uint32_t[]){1, 1, 1}, (uint32_t[]){4, 8, 1}, NULL, 2,
                              args));
    double expected[18];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 6; j++)
            expected[j * 3 + i] = 10.0 * (j * 5 + 3 - i) + i; /* out_base[j, i] */
    CHECK_VALUES(out_base, expected, 18, 0);
done:
    gk_kernel_free(kernel);
    gk_array_free(base);
    gk_array_free(t);
    gk_array_free(flipped);
    gk_array_free(in);
    gk_array_free(out_base);
    gk_array_free(out);
}

static void test_views(gk_device device)
{
    gk_kernel *kernel = NULL;
    REQUIRE_OK(gk_kernel_compile(device, GK_KERNEL_PORTABLE, axpy_source, "axpy", NULL, &kernel));
    /* Offsets of 1024, 2048 and 0 floats: every device takes them. */
    CHECK_OK(run_views(device, kernel, 1024, 2048, 0));
    CHECK_OK(run_views(device, kernel, 0, 1024, 3072));
    /* x[5:], out[10:]: CUDA and the cpu take any address; OpenCL devices
     * take what their alignment allows and refuse the rest, saying what
     * to do. */
    gk_status status = run_views(device, kernel, 5, 1024, 10);
    if (device.kind != GK_DEVICE_OPENCL || status == GK_OK)
        CHECK(status == GK_OK, "%s", gk_last_error());
    else
        CHECK(status == GK_ERR_INVALID_ARGUMENT &&
                  strstr(gk_last_error(), "CL_DEVICE_MEM_BASE_ADDR_ALIGN"),
              "status %d, message: %s", (int)status, gk_last_error());
done:
    gk_kernel_free(kernel);
}

/* One sum per block through local memory and barriers. */
static const char *block_sum_source =
    "GK_KERNEL void block_sum(GK_GLOBAL const float *x, GK_GLOBAL float *sums, gk_i64 n)\n"
    "{\n"
    "    GK_LOCAL float part[256];\n"
    "    gk_i64 t = GK_LOCAL_ID(0), i = GK_GLOBAL_ID(0);\n"
    "    part[t] = i < n ? x[i] : 0.0f;\n"
    "    GK_BARRIER();\n"
    "    for (gk_i64 step = GK_LOCAL_SIZE(0) / 2; step > 0; step /= 2) {\n"
    "        if (t < step)\n"
    "            part[t] += part[t + step];\n"
    "        GK_BARRIER();\n"
    "    }\n"
    "    if (t == 0)\n"
    "        sums[GK_GROUP_ID(0)] = part[0];\n"
    "}\n";

static void test_block_sum(gk_device device)
{
    enum { N = 600, BLOCK = 64, GROUPS = 10 };
    gk_kernel *kernel = NULL;
    gk_array *x = NULL, *sums = NULL;
    float values[N];
    double expected[GROUPS] = {0};
    for (int i = 0; i < N; i++) {
        values[i] = (float)(i % 7);
        expected[i / BLOCK] += i % 7;
    }
    REQUIRE_OK(gk_kernel_compile(device, GK_KERNEL_PORTABLE, block_sum_source, "block_sum", NULL,
                                 &kernel));
    REQUIRE_OK(gk_from_host(device, GK_FLOAT32, 1, (int64_t[]){N}, values, &x));
    REQUIRE_OK(gk_full(device, GK_FLOAT32, 1, (int64_t[]){GROUPS}, -1, &sums));
    gk_arg args[] = {gk_arg_array(x), gk_arg_array(sums), gk_arg_int64(N)};
    REQUIRE_OK(gk_kernel_launch(kernel, (uint32_t[]){GROUPS, 1, 1}, (uint32_t[]){BLOCK, 1, 1},
                                NULL, 3, args));
    CHECK_VALUES(sums, expected, GROUPS, 0);
done:
    gk_kernel_free(kernel);
    gk_array_free(x);
    gk_array_free(sums);
}

static void test_raw_errors(gk_device device)
{
    gk_kernel *kernel = NULL, *elementwise = NULL, *bad = NULL;
    gk_array *host = NULL, *x = NULL;
    const gk_gpu_info *info = info_of(device);
    char name[GK_DEVICE_NAME_MAX], limit[32];
    gk_device_name(device, name, sizeof name);
    if (!info)
        return;

    /* A compile error gives the compiler's log, which names the problem. */
    CHECK_FAILS(gk_kernel_compile(device, GK_KERNEL_PORTABLE,
                                  "GK_KERNEL void broken(GK_GLOBAL float *x)\n"
                                  "{\n    x[0] = undeclared_thing_xyz;\n}\n",
                                  "broken", NULL, &bad),
                GK_ERR_INVALID_ARGUMENT, "undeclared_thing_xyz");
    CHECK(bad == NULL, "no kernel on failure");
    CHECK_FAILS(gk_kernel_compile(device, GK_KERNEL_PORTABLE, ids_source, "no_such_kernel", NULL,
                                  &bad),
                GK_ERR_INVALID_ARGUMENT, "no_such_kernel");
    CHECK_FAILS(gk_kernel_compile(device, GK_KERNEL_PORTABLE, ids_source, "not a name", NULL,
                                  &bad),
                GK_ERR_INVALID_ARGUMENT, "not a C identifier");
    CHECK_FAILS(gk_kernel_compile(device, GK_KERNEL_PORTABLE, NULL, "ids", NULL, &bad),
                GK_ERR_INVALID_ARGUMENT, "source is NULL");

    /* CUDA C needs a CUDA device; on one it compiles and runs. */
    const char *cuda_source = "extern \"C\" __global__ void triple(float *x, long long n)\n"
                              "{\n"
                              "    long long i = blockIdx.x * (long long)blockDim.x +\n"
                              "                  threadIdx.x;\n"
                              "    if (i < n)\n"
                              "        x[i] *= 3;\n"
                              "}\n";
    if (device.kind != GK_DEVICE_CUDA) {
        CHECK_FAILS(gk_kernel_compile(device, GK_KERNEL_CUDA_C, cuda_source, "triple", NULL,
                                      &bad),
                    GK_ERR_INVALID_ARGUMENT, "CUDA C kernels run on CUDA devices only");
        CHECK_MESSAGE(name);
    } else {
        gk_kernel *triple = NULL;
        CHECK_OK(gk_kernel_compile(device, GK_KERNEL_CUDA_C, cuda_source, "triple", NULL,
                                   &triple));
        if (triple && gk_arange(device, GK_FLOAT32, 0, 10, 1, &x) == GK_OK) {
            gk_arg args[] = {gk_arg_array(x), gk_arg_int64(10)};
            CHECK_OK(gk_kernel_launch(triple, (uint32_t[]){1, 1, 1}, (uint32_t[]){32, 1, 1},
                                      NULL, 2, args));
            CHECK_VALUES(x, ((double[]){0, 3, 6, 9, 12, 15, 18, 21, 24, 27}), 10, 0);
        }
        gk_kernel_free(triple);
        gk_array_free(x);
        x = NULL;
    }

    REQUIRE_OK(gk_kernel_compile(device, GK_KERNEL_PORTABLE, ids_source, "ids", NULL, &kernel));
    REQUIRE_OK(gk_zeros(device, GK_INT32, 1, (int64_t[]){9 * 64}, &x));
    gk_arg arg = gk_arg_array(x);
    uint32_t one[3] = {1, 1, 1};

    /* An array on another device, named with both devices. */
    gk_device other = other_device(device);
    char other_name[GK_DEVICE_NAME_MAX], expected[GK_DEVICE_NAME_MAX + 48];
    snprintf(expected, sizeof expected, "argument 0 (an array) is on %s",
             gk_device_name(other, other_name, sizeof other_name));
    REQUIRE_OK(gk_zeros(other, GK_INT32, 1, (int64_t[]){9 * 64}, &host));
    gk_arg host_arg = gk_arg_array(host);
    CHECK_FAILS(gk_kernel_launch(kernel, one, one, NULL, 1, &host_arg), GK_ERR_INVALID_ARGUMENT,
                expected);
    CHECK_MESSAGE(name);
    gk_arg null_arg = gk_arg_array(NULL);
    CHECK_FAILS(gk_kernel_launch(kernel, one, one, NULL, 1, &null_arg), GK_ERR_INVALID_ARGUMENT,
                "NULL array");

    /* Launch sizes. */
    CHECK_FAILS(gk_kernel_launch(kernel, (uint32_t[]){0, 1, 1}, one, NULL, 1, &arg),
                GK_ERR_INVALID_ARGUMENT, "at least 1 in every dimension");
    CHECK_FAILS(gk_kernel_launch(kernel, one, (uint32_t[]){8, 0, 1}, NULL, 1, &arg),
                GK_ERR_INVALID_ARGUMENT, "at least 1 in every dimension");
    snprintf(limit, sizeof limit, "at most %d per block", info->max_group_size);
    CHECK_FAILS(gk_kernel_launch(kernel, one, (uint32_t[]){1024, 1024, 1}, NULL, 1, &arg),
                GK_ERR_INVALID_ARGUMENT, limit);
    CHECK_FAILS(gk_kernel_launch(kernel, one, one, NULL, GK_GPU_MAX_ARGS + 1, &arg),
                GK_ERR_INVALID_ARGUMENT, "arguments");
    /* At the limit the launch works (every thread of one full block). */
    uint32_t full = (uint32_t)info->max_group_size > 64 ? 64 : (uint32_t)info->max_group_size;
    CHECK_OK(gk_kernel_launch(kernel, one, (uint32_t[]){full, 1, 1}, NULL, 1, &arg));

    /* Raw and elementwise kernels each have their own launch. */
    REQUIRE_OK(gk_elementwise_kernel(device, "int32 a", "int32 b", "b = a;", "copy_ints",
                                     &elementwise));
    CHECK_FAILS(gk_kernel_launch(elementwise, one, one, NULL, 1, &arg), GK_ERR_INVALID_ARGUMENT,
                "gk_elementwise_launch");
    gk_array *outs[1] = {NULL};
    const gk_array *ins[1] = {x};
    CHECK_FAILS(gk_elementwise_launch(kernel, 1, ins, 1, outs, NULL), GK_ERR_INVALID_ARGUMENT,
                "gk_kernel_launch");
done:
    gk_kernel_free(kernel);
    gk_kernel_free(elementwise);
    gk_array_free(host);
    gk_array_free(x);
}

/* Without an OpenCL driver for the CPU, the cpu device's kernels name the
 * package to install. */
static void test_cpu_without_driver(void)
{
    gk_device cpu = gk_device_cpu(), host;
    if (gk_gpu_host_device(&host) == GK_OK)
        return;
    gk_kernel *kernel = NULL;
    gk_stream *stream = NULL;
    CHECK_FAILS(gk_kernel_compile(cpu, GK_KERNEL_PORTABLE, ids_source, "ids", NULL, &kernel),
                GK_ERR_NOT_FOUND, "apt-get install pocl-opencl-icd");
    CHECK_FAILS(gk_elementwise_kernel(cpu, "float32 x", "float32 y", "y = x;", "copy", &kernel),
                GK_ERR_NOT_FOUND, "user kernels on the cpu device run through an OpenCL driver");
    CHECK_FAILS(gk_stream_create(cpu, &stream), GK_ERR_NOT_FOUND, "pocl-opencl-icd");
    CHECK(kernel == NULL && stream == NULL, "no output on failure");
}

/* NULL handles: each entry point says what to do. */
static void test_null_handles(void)
{
    CHECK_FAILS(gk_stream_synchronize(NULL), GK_ERR_INVALID_ARGUMENT, "gk_device_synchronize");
    gk_stream_free(NULL);
    gk_kernel_free(NULL);
}

/* ---- elementwise kernels ------------------------------------------------ */

/* matrix (3, 4) + row (4,) + a 0-d scalar. */
static void test_broadcast(gk_device device)
{
    gk_kernel *kernel = NULL;
    gk_array *m = NULL, *r = NULL, *s = NULL, *bad = NULL, *z = NULL, *col = NULL;
    gk_array *out2[1] = {NULL};
    float mv[12], rv[4];
    double expected[12];
    for (int k = 0; k < 12; k++)
        mv[k] = (float)k;
    for (int k = 0; k < 4; k++)
        rv[k] = (float)(10 * k);
    for (int k = 0; k < 12; k++)
        expected[k] = 2.0 * k + 10 * (k % 4) - 0.5;
    REQUIRE_OK(gk_elementwise_kernel(device, "float32 m, float32 r, float32 s", "float32 z",
                                     "z = m * 2.0f + r - s;", "broadcast", &kernel));
    REQUIRE_OK(gk_from_host(device, GK_FLOAT32, 2, (int64_t[]){3, 4}, mv, &m));
    REQUIRE_OK(gk_from_host(device, GK_FLOAT32, 1, (int64_t[]){4}, rv, &r));
    REQUIRE_OK(gk_scalar(device, GK_FLOAT32, 0.5, &s));
    gk_array *out[1] = {NULL};
    const gk_array *in[3] = {m, r, s};
    REQUIRE_OK(gk_elementwise_launch(kernel, 3, in, 1, out, NULL));
    z = out[0];
    CHECK(gk_array_ndim(z) == 2 && gk_array_shape(z)[0] == 3 && gk_array_shape(z)[1] == 4,
          "the output has the broadcast shape");
    CHECK(gk_array_dtype(z) == GK_FLOAT32, "the declared dtype");
    CHECK_VALUES(z, expected, 12, 0);

    /* A column (4, 1) with the row (4,) broadcasts to (4, 4)... */
    REQUIRE_OK(gk_reshape(r, 2, (int64_t[]){4, 1}, &col));
    const gk_array *in2[3] = {col, r, s};
    REQUIRE_OK(gk_elementwise_launch(kernel, 3, in2, 1, out2, NULL));
    CHECK(gk_array_ndim(out2[0]) == 2 && gk_array_shape(out2[0])[0] == 4 &&
              gk_array_shape(out2[0])[1] == 4,
          "(4, 1) with (4,) gives (4, 4)");
    double outer[16];
    for (int k = 0; k < 16; k++)
        outer[k] = 2.0 * 10 * (k / 4) + 10 * (k % 4) - 0.5;
    CHECK_VALUES(out2[0], outer, 16, 0);

    /* ...but (3, 4) and (5,) do not. */
    REQUIRE_OK(gk_zeros(device, GK_FLOAT32, 1, (int64_t[]){5}, &bad));
    const gk_array *in3[3] = {m, bad, s};
    gk_array *out3[1] = {NULL};
    CHECK_FAILS(gk_elementwise_launch(kernel, 3, in3, 1, out3, NULL), GK_ERR_INVALID_ARGUMENT,
                "do not broadcast");
    CHECK(out3[0] == NULL, "no output on failure");
done:
    gk_kernel_free(kernel);
    gk_array_free(m);
    gk_array_free(r);
    gk_array_free(s);
    gk_array_free(bad);
    gk_array_free(z);
    gk_array_free(col);
    gk_array_free(out2[0]);
}

/* bool, uint8, int32 and int64 in and out at once (8 operands, the most),
 * one output given and three made. */
static void test_integer_dtypes(gk_device device)
{
    enum { N = 6 };
    gk_kernel *kernel = NULL;
    gk_array *a = NULL, *b = NULL, *c = NULL, *d = NULL, *given = NULL;
    gk_array *out[4] = {NULL};
    uint8_t av[N] = {0, 1, 0, 1, 1, 0}, bv[N] = {0, 100, 155, 200, 255, 7};
    int32_t cv[N] = {1, -2, 1000000, -7, 0, 123};
    int64_t dv[N] = {3000000000LL, -1, 0, 5, 1LL << 40, -3000000000LL};
    REQUIRE_OK(gk_elementwise_kernel(device, "bool a, uint8 b, int32 c, int64 d",
                                     "bool a2, uint8 b2, int32 c2, int64 d2",
                                     "a2 = a ? 0 : 7;      /* stored as 0 or 1 */\n"
                                     "b2 = b + 100;        /* wraps */\n"
                                     "c2 = c * -3;\n"
                                     "d2 = d * 5 + i;\n",
                                     "integers", &kernel));
    REQUIRE_OK(gk_from_host(device, GK_BOOL, 1, (int64_t[]){N}, av, &a));
    REQUIRE_OK(gk_from_host(device, GK_UINT8, 1, (int64_t[]){N}, bv, &b));
    REQUIRE_OK(gk_from_host(device, GK_INT32, 1, (int64_t[]){N}, cv, &c));
    REQUIRE_OK(gk_from_host(device, GK_INT64, 1, (int64_t[]){N}, dv, &d));
    REQUIRE_OK(gk_full(device, GK_BOOL, 1, (int64_t[]){N}, 1, &given));
    out[0] = given;
    const gk_array *in[4] = {a, b, c, d};
    REQUIRE_OK(gk_elementwise_launch(kernel, 4, in, 4, out, NULL));
    CHECK(out[0] == given, "a given output is used, not replaced");
    gk_dtype dtypes[4] = {GK_BOOL, GK_UINT8, GK_INT32, GK_INT64};
    for (int k = 1; k < 4; k++)
        CHECK(out[k] && gk_array_dtype(out[k]) == dtypes[k] && gk_array_ndim(out[k]) == 1 &&
                  gk_array_shape(out[k])[0] == N,
              "output %d was made with its declared dtype and the shape", k);
    double ea[N], eb[N], ec[N], ed[N];
    for (int k = 0; k < N; k++) {
        ea[k] = av[k] ? 0 : 1;
        eb[k] = (uint8_t)(bv[k] + 100);
        ec[k] = cv[k] * -3.0;
        ed[k] = (double)(dv[k] * 5 + k);
    }
    CHECK_VALUES(out[0], ea, N, 0);
    CHECK_VALUES(out[1], eb, N, 0);
    CHECK_VALUES(out[2], ec, N, 0);
    CHECK_VALUES(out[3], ed, N, 0);
done:
    gk_kernel_free(kernel);
    gk_array_free(a);
    gk_array_free(b);
    gk_array_free(c);
    gk_array_free(d);
    gk_array_free(given);
    for (int k = 1; k < 4; k++)
        gk_array_free(out[k]);
}

/* float32 and float64 (when the device has it), with i. */
static void test_float_dtypes(gk_device device)
{
    enum { N = 5 };
    gk_kernel *kernel = NULL;
    gk_array *e = NULL, *f = NULL;
    gk_array *out[2] = {NULL};
    const gk_gpu_info *info = info_of(device);
    if (!info)
        return;
    float ev[N] = {0, 1.5f, -2, 1e30f, 3.25f};
    double fv[N] = {0.1, -1e300, 3, 1.0 / 3, 7};
    bool fp64 = info->fp64;
    REQUIRE_OK(gk_elementwise_kernel(
        device, fp64 ? "float32 e, float64 f" : "float32 e",
        fp64 ? "float32 e2, float64 f2" : "float32 e2",
        fp64 ? "e2 = e * 0.5f + (float)i; f2 = f / 3.0 + e;" : "e2 = e * 0.5f + (float)i;",
        "floats", &kernel));
    REQUIRE_OK(gk_from_host(device, GK_FLOAT32, 1, (int64_t[]){N}, ev, &e));
    if (fp64)
        REQUIRE_OK(gk_from_host(device, GK_FLOAT64, 1, (int64_t[]){N}, fv, &f));
    const gk_array *in[2] = {e, f};
    REQUIRE_OK(gk_elementwise_launch(kernel, fp64 ? 2 : 1, in, fp64 ? 2 : 1, out, NULL));
    double ee[N], ef[N];
    for (int k = 0; k < N; k++) {
        ee[k] = (float)(ev[k] * 0.5f + (float)k);
        ef[k] = fv[k] / 3.0 + ev[k];
    }
    CHECK_VALUES(out[0], ee, N, 0);
    if (fp64)
        CHECK_VALUES(out[1], ef, N, 1e-15);
done:
    gk_kernel_free(kernel);
    gk_array_free(e);
    gk_array_free(f);
    gk_array_free(out[0]);
    gk_array_free(out[1]);
}

/* float16 and bfloat16 parameters are float locals in the body: loaded
 * exactly, stored rounded to nearest even (NaN quiet), as compute/half.h
 * converts on the host. */
static void test_half_dtypes(gk_device device)
{
    enum { N = 8 };
    gk_kernel *kernel = NULL;
    gk_array *a = NULL, *b = NULL;
    gk_array *out[3] = {NULL};
    /* 1, 1 + ulp, the largest, a subnormal, -0, inf, NaN, 0.1 */
    uint16_t av[N] = {0x3C00, 0x3C01, 0x7BFF, 0x0003, 0x8000, 0x7C00, 0x7E01, 0x2E66};
    uint16_t bv[N] = {0x3F80, 0x3F81, 0x7F7F, 0x0003, 0x8000, 0xFF80, 0x7FC1, 0x3DCD};
    REQUIRE_OK(gk_elementwise_kernel(device, "float16 a, bfloat16 b",
                                     "float16 c, bfloat16 d, float32 e",
                                     "c = a * 3.0f; d = b + 1.0f; e = a;", "halves", &kernel));
    REQUIRE_OK(gk_from_host(device, GK_FLOAT16, 1, (int64_t[]){N}, av, &a));
    REQUIRE_OK(gk_from_host(device, GK_BFLOAT16, 1, (int64_t[]){N}, bv, &b));
    const gk_array *in[2] = {a, b};
    REQUIRE_OK(gk_elementwise_launch(kernel, 2, in, 3, out, NULL));
    uint16_t c[N], d[N];
    float e[N];
    REQUIRE_OK(gk_to_host(out[0], c, sizeof c));
    REQUIRE_OK(gk_to_host(out[1], d, sizeof d));
    REQUIRE_OK(gk_to_host(out[2], e, sizeof e));
    for (int k = 0; k < N; k++) {
        float x = gk_float16_to_float(av[k]), y = gk_bfloat16_to_float(bv[k]);
        uint16_t ec = gk_float16_from_double((double)(x * 3.0f));
        uint16_t ed = gk_bfloat16_from_float(y + 1.0f);
        CHECK(c[k] == ec, "element %d: c = 0x%04x, expected 0x%04x", k, c[k], ec);
        CHECK(d[k] == ed, "element %d: d = 0x%04x, expected 0x%04x", k, d[k], ed);
        CHECK(memcmp(&e[k], &x, sizeof x) == 0, "element %d: e = %.9g, expected %.9g", k,
              (double)e[k], (double)x);
    }
done:
    gk_kernel_free(kernel);
    gk_array_free(a);
    gk_array_free(b);
    for (int k = 0; k < 3; k++)
        gk_array_free(out[k]);
}

/* i is the C-order index of the loop's shape, also into a transposed
 * (strided) given output; no inputs: the output gives the shape. */
static void test_index(gk_device device)
{
    gk_kernel *kernel = NULL;
    gk_array *base = NULL, *t = NULL;
    REQUIRE_OK(gk_elementwise_kernel(device, "", "int64 z", "z = i * 3;", "index3", &kernel));
    REQUIRE_OK(gk_zeros(device, GK_INT64, 2, (int64_t[]){3, 2}, &base));
    REQUIRE_OK(gk_transpose(base, NULL, &t)); /* (2, 3), strides (1, 2) */
    gk_array *out[1] = {t};
    REQUIRE_OK(gk_elementwise_launch(kernel, 0, NULL, 1, out, NULL));
    CHECK_VALUES(t, ((double[]){0, 3, 6, 9, 12, 15}), 6, 0);
    /* In memory (base, C order) that is the transpose. */
    CHECK_VALUES(base, ((double[]){0, 9, 3, 12, 6, 15}), 6, 0);
    gk_array *none[1] = {NULL};
    CHECK_FAILS(gk_elementwise_launch(kernel, 0, NULL, 1, none, NULL), GK_ERR_INVALID_ARGUMENT,
                "no inputs");
done:
    gk_kernel_free(kernel);
    gk_array_free(base);
    gk_array_free(t);
}

/* 0-d in, 0-d out; in place; an input overlapping the output shifted by
 * one element (copied first, so every element reads its old value). */
static void test_in_place(gk_device device)
{
    gk_kernel *kernel = NULL;
    gk_array *s = NULL, *x = NULL, *head = NULL, *tail = NULL;
    gk_array *out[1] = {NULL};
    double *expected = NULL;
    REQUIRE_OK(gk_elementwise_kernel(device, "float32 x", "float32 y", "y = x * 2.0f;", "twice",
                                     &kernel));
    REQUIRE_OK(gk_scalar(device, GK_FLOAT32, 1.5, &s));
    const gk_array *in[1] = {s};
    REQUIRE_OK(gk_elementwise_launch(kernel, 1, in, 1, out, NULL));
    CHECK(gk_array_ndim(out[0]) == 0, "0-d inputs give a 0-d output");
    CHECK_VALUES(out[0], ((double[]){3}), 1, 0);

    int64_t n = 100000;
    REQUIRE_OK(gk_arange(device, GK_FLOAT32, 0, (double)n, 1, &x));
    in[0] = x;
    gk_array_free(out[0]);
    out[0] = NULL;
    gk_array *same[1] = {x};
    REQUIRE_OK(gk_elementwise_launch(kernel, 1, in, 1, same, NULL)); /* x = 2x */
    REQUIRE_OK(gk_slice(x, 0, 0, n - 1, 1, &head));
    REQUIRE_OK(gk_slice(x, 0, 1, n, 1, &tail));
    in[0] = head;
    gk_array *shifted[1] = {tail};
    REQUIRE_OK(gk_elementwise_launch(kernel, 1, in, 1, shifted, NULL)); /* x[1:] = 2 x[:-1] */
    expected = malloc(sizeof *expected * (size_t)n);
    if (expected) {
        expected[0] = 0;
        for (int64_t k = 1; k < n; k++)
            expected[k] = 4.0 * (double)(k - 1);
        CHECK_VALUES(x, expected, n, 0);
    }
done:
    free(expected);
    gk_kernel_free(kernel);
    gk_array_free(out[0]);
    gk_array_free(s);
    gk_array_free(x);
    gk_array_free(head);
    gk_array_free(tail);
}

static void test_elementwise_errors(gk_device device)
{
    gk_kernel *kernel = NULL, *bad = NULL;
    gk_array *f = NULL, *ints = NULL, *small = NULL, *wide = NULL, *host = NULL, *matrix = NULL;
    const char *ok_body = "z = x + y;";

    /* Parameter lists: each message names the bad token. */
    struct {
        const char *inputs, *outputs, *text;
    } cases[] = {
        {"float32", "float32 z", "'float32'"},
        {"float x, float32 y", "float32 z", "unknown dtype 'float'"},
        {"float32 2x, float32 y", "float32 z", "'2x' in inputs"},
        {"float32 x, float32 x", "float32 z", "'x' is declared twice"},
        {"float32 x, float32 y", "float32 x", "'x' is declared twice"},
        {"int32 i, float32 y", "float32 z", "'i'"},
        {"float32 gk_x, float32 y", "float32 z", "'gk_x'"},
        {"float32 half, float32 y", "float32 z", "'half' in inputs is reserved"},
        {"float32 x, float32 y", "float32 double", "'double' in outputs is reserved"},
        {"float32 x y", "float32 z", "'float32 x y'"},
        {"float32 x-y", "float32 z", "'float32 x-y'"},
        {"float32 x,", "float32 z", "empty entry after 'x'"},
        {"float32 x,, float32 y", "float32 z", "empty entry after 'x'"},
        {"float32 x, float32 y", "", "no outputs"},
        {"float32 a, float32 b, float32 c, float32 d, float32 e, float32 f, float32 g, float32 h",
         "float32 z", "more than 8"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        gk_status status =
            gk_elementwise_kernel(device, cases[k].inputs, cases[k].outputs, ok_body, "sum", &bad);
        CHECK(status == GK_ERR_INVALID_ARGUMENT && strstr(gk_last_error(), cases[k].text),
              "inputs \"%s\" outputs \"%s\": status %d, message: %s", cases[k].inputs,
              cases[k].outputs, (int)status, gk_last_error());
        CHECK(bad == NULL, "no kernel on failure");
    }
    CHECK_FAILS(gk_elementwise_kernel(device, "float32 x", "float32 z", "z = x;", "2fast", &bad),
                GK_ERR_INVALID_ARGUMENT, "'2fast'");
    /* A type name would compile into nonsense: refused with a better name. */
    CHECK_FAILS(gk_elementwise_kernel(device, "float32 x", "float32 z", "z = x;", "double", &bad),
                GK_ERR_INVALID_ARGUMENT, "'double_kernel'");
    /* A body that does not compile: the log names the identifier. */
    CHECK_FAILS(gk_elementwise_kernel(device, "float32 x", "float32 z",
                                      "z = nonexistent_abc * x;", "broken_body", &bad),
                GK_ERR_INVALID_ARGUMENT, "nonexistent_abc");

    /* Launch errors. */
    REQUIRE_OK(gk_elementwise_kernel(device, "float32 x, float32 y", "float32 z", ok_body, "sum",
                                     &kernel));
    REQUIRE_OK(gk_zeros(device, GK_FLOAT32, 1, (int64_t[]){4}, &f));
    REQUIRE_OK(gk_zeros(device, GK_INT32, 1, (int64_t[]){4}, &ints));
    REQUIRE_OK(gk_zeros(device, GK_FLOAT32, 1, (int64_t[]){3}, &small));
    gk_device other = other_device(device);
    char other_name[GK_DEVICE_NAME_MAX], expected[GK_DEVICE_NAME_MAX + 48];
    gk_device_name(other, other_name, sizeof other_name);
    REQUIRE_OK(gk_zeros(other, GK_FLOAT32, 1, (int64_t[]){4}, &host));
    gk_array *out[1] = {NULL};
    const gk_array *in[2] = {f, ints};
    CHECK_FAILS(gk_elementwise_launch(kernel, 2, in, 1, out, NULL), GK_ERR_INVALID_ARGUMENT,
                "input 'y' is declared float32 but the array is int32");
    in[1] = host;
    snprintf(expected, sizeof expected, "input 'y' is on %s", other_name);
    CHECK_FAILS(gk_elementwise_launch(kernel, 2, in, 1, out, NULL), GK_ERR_INVALID_ARGUMENT,
                expected);
    in[1] = NULL;
    CHECK_FAILS(gk_elementwise_launch(kernel, 2, in, 1, out, NULL), GK_ERR_INVALID_ARGUMENT,
                "input 'y' is NULL");
    in[1] = f;
    CHECK_FAILS(gk_elementwise_launch(kernel, 1, in, 1, out, NULL), GK_ERR_INVALID_ARGUMENT,
                "takes 2 inputs, got 1");
    CHECK_FAILS(gk_elementwise_launch(kernel, 2, in, 2, out, NULL), GK_ERR_INVALID_ARGUMENT,
                "has 1 outputs, got 2");
    out[0] = small;
    CHECK_FAILS(gk_elementwise_launch(kernel, 2, in, 1, out, NULL), GK_ERR_INVALID_ARGUMENT,
                "output 'z' has shape (3,) but the inputs broadcast to (4,)");
    out[0] = ints;
    CHECK_FAILS(gk_elementwise_launch(kernel, 2, in, 1, out, NULL), GK_ERR_INVALID_ARGUMENT,
                "output 'z' is declared float32 but the array is int32");
    out[0] = host;
    snprintf(expected, sizeof expected, "output 'z' is on %s", other_name);
    CHECK_FAILS(gk_elementwise_launch(kernel, 2, in, 1, out, NULL), GK_ERR_INVALID_ARGUMENT,
                expected);
    REQUIRE_OK(gk_broadcast_to(small, 2, (int64_t[]){4, 3}, &wide));
    REQUIRE_OK(gk_zeros(device, GK_FLOAT32, 2, (int64_t[]){4, 3}, &matrix));
    const gk_array *in2[2] = {matrix, small};
    out[0] = wide;
    CHECK_FAILS(gk_elementwise_launch(kernel, 2, in2, 1, out, NULL), GK_ERR_INVALID_ARGUMENT,
                "view of a broadcast");
done:
    gk_array_free(matrix);
    gk_kernel_free(kernel);
    gk_array_free(f);
    gk_array_free(ints);
    gk_array_free(small);
    gk_array_free(wide);
    gk_array_free(host);
}

/* ---- streams ------------------------------------------------------------ */

static const char *scale_source =
    "GK_KERNEL void scale(GK_GLOBAL float *out, GK_GLOBAL const float *in, float f, gk_i64 n)\n"
    "{\n"
    "    GK_FOR_EACH_INDEX(i, n)\n"
    "        out[i] = in[i] * f;\n"
    "}\n";

/* Two kernels on two streams read x while array ops on the device's own
 * stream come before (making x) and after (overwriting x, reading the
 * results): every result must be as if all ran in order. */
static void test_streams(gk_device device)
{
    int64_t n = 1 << 20;
    gk_kernel *scale = NULL, *mul = NULL;
    gk_stream *s1 = NULL, *s2 = NULL;
    gk_array *x = NULL, *y1 = NULL, *y2 = NULL, *z = NULL, *c = NULL;
    REQUIRE_OK(gk_kernel_compile(device, GK_KERNEL_PORTABLE, scale_source, "scale", NULL, &scale));
    REQUIRE_OK(gk_elementwise_kernel(device, "float32 a, float32 b", "float32 c", "c = a * b;",
                                     "mul", &mul));
    REQUIRE_OK(gk_stream_create(device, &s1));
    REQUIRE_OK(gk_stream_create(device, &s2));
    REQUIRE_OK(gk_full(device, GK_FLOAT32, 1, &n, 1, &x));
    REQUIRE_OK(gk_empty(device, GK_FLOAT32, 1, &n, &y1));
    REQUIRE_OK(gk_empty(device, GK_FLOAT32, 1, &n, &y2));
    uint32_t grid[3] = {64, 1, 1}, block[3] = {64, 1, 1};
    gk_arg a1[] = {gk_arg_array(y1), gk_arg_array(x), gk_arg_float32(2), gk_arg_int64(n)};
    gk_arg a2[] = {gk_arg_array(y2), gk_arg_array(x), gk_arg_float32(3), gk_arg_int64(n)};
    REQUIRE_OK(gk_kernel_launch(scale, grid, block, s1, 4, a1));
    REQUIRE_OK(gk_kernel_launch(scale, grid, block, s2, 4, a2));
    REQUIRE_OK(gk_binary_into(GK_ADD, x, x, x)); /* x = 2, after both read it */
    REQUIRE_OK(gk_binary(GK_ADD, y1, y2, &z));   /* 2 + 3 */
    const gk_array *in[2] = {y1, x};
    gk_array *out[1] = {NULL};
    REQUIRE_OK(gk_elementwise_launch(mul, 2, in, 1, out, s1)); /* 2 * 2, sees the new x */
    c = out[0];
    CHECK_OK(gk_stream_synchronize(s1));
    CHECK_OK(gk_stream_synchronize(s2));
    double *expected = malloc(sizeof *expected * (size_t)n);
    if (expected) {
        double values[] = {2, 3, 2, 5, 4};
        gk_array *arrays[] = {y1, y2, x, z, c};
        for (int k = 0; k < 5; k++) {
            for (int64_t i = 0; i < n; i++)
                expected[i] = values[k];
            CHECK_VALUES(arrays[k], expected, n, 0);
        }
        free(expected);
    }
done:
    gk_stream_free(s1); /* waits for its work first */
    gk_stream_free(s2);
    gk_kernel_free(scale);
    gk_kernel_free(mul);
    gk_array_free(x);
    gk_array_free(y1);
    gk_array_free(y2);
    gk_array_free(z);
    gk_array_free(c);
}

/* ---- the compile cache -------------------------------------------------- */

/* A source no earlier run has compiled (the token is in it), so its first
 * compile here is a miss in memory and on disk. */
static char *unique_source(const char *token)
{
    char *source = malloc(512);
    if (source)
        snprintf(source, 512,
                 "/* cache test %s */\n"
                 "GK_KERNEL void fill_seven(GK_GLOBAL gk_i32 *x, gk_i64 n)\n"
                 "{\n"
                 "    GK_FOR_EACH_INDEX(i, n)\n"
                 "        x[i] = 7 * (gk_i32)i;\n"
                 "}\n",
                 token);
    return source;
}

/* Compiles the unique source, runs it and checks the result. */
static void compile_and_run(gk_device device, const char *source, gk_kernel **out)
{
    gk_kernel *kernel = NULL;
    gk_array *x = NULL;
    *out = NULL;
    REQUIRE_OK(gk_kernel_compile(device, GK_KERNEL_PORTABLE, source, "fill_seven", NULL, &kernel));
    REQUIRE_OK(gk_zeros(device, GK_INT32, 1, (int64_t[]){10}, &x));
    gk_arg args[] = {gk_arg_array(x), gk_arg_int64(10)};
    REQUIRE_OK(gk_kernel_launch(kernel, (uint32_t[]){1, 1, 1}, (uint32_t[]){16, 1, 1}, NULL, 2,
                                args));
    CHECK_VALUES(x, ((double[]){0, 7, 14, 21, 28, 35, 42, 49, 56, 63}), 10, 0);
    *out = kernel;
    kernel = NULL;
done:
    gk_kernel_free(kernel);
    gk_array_free(x);
}

/* The .bin files of a cache directory with their inode and modification
 * time: a file written again (renamed into place) has a new inode. */
typedef struct cache_entry {
    char name[64];
    unsigned long long inode;
    long long mtime_ns;
} cache_entry;

static int cache_files(const char *dir, cache_entry *entries, int max)
{
    int count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d)) && count < max;) {
        size_t len = strlen(e->d_name);
        if (len < 5 || len >= sizeof entries->name || strcmp(e->d_name + len - 4, ".bin") != 0)
            continue;
        char path[512];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) == 0) {
            snprintf(entries[count].name, sizeof entries->name, "%s", e->d_name);
            entries[count].inode = (unsigned long long)st.st_ino;
            entries[count].mtime_ns =
                (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
            count++;
        }
    }
    closedir(d);
    return count;
}

/* Every file of `before` is still there, untouched (others may be new). */
static bool files_untouched(const char *dir, const cache_entry *before, int count)
{
    cache_entry now[64];
    int n = cache_files(dir, now, 64);
    for (int k = 0; k < count; k++) {
        bool same = false;
        for (int j = 0; j < n && !same; j++)
            same = strcmp(now[j].name, before[k].name) == 0 && now[j].inode == before[k].inode &&
                   now[j].mtime_ns == before[k].mtime_ns;
        if (!same)
            return false;
    }
    return true;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* This program again as `--cache-child DEVICE TOKEN`: it compiles the same
 * source in a fresh process, where only the disk cache can help. */
static int run_child(const char *device_name, const char *token)
{
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return -1;
    self[len] = 0;
    char *argv[] = {self, "--cache-child", (char *)device_name, (char *)token, NULL};
    pid_t pid;
    if (posix_spawn(&pid, self, NULL, NULL, argv, environ) != 0)
        return -1;
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int cache_child(const char *device_name, const char *token)
{
    gk_device device;
    gk_kernel *kernel = NULL;
    char *source = unique_source(token);
    CHECK_OK(gk_device_parse(device_name, &device));
    if (source)
        compile_and_run(device, source, &kernel);
    gk_kernel_free(kernel);
    free(source);
    CHECK_DONE();
}

static void test_cache(gk_device device)
{
    static int round;
    char dir[] = "/tmp/gk_test_kernel_cache_XXXXXX", token[96], name[GK_DEVICE_NAME_MAX];
    char *saved = getenv("GPUKIT_CACHE_DIR") ? strdup(getenv("GPUKIT_CACHE_DIR")) : NULL;
    char *source = NULL;
    gk_kernel *first = NULL, *second = NULL;
    cache_entry before[64];
    if (!mkdtemp(dir)) {
        CHECK(false, "cannot make a temporary directory");
        free(saved);
        return;
    }
    setenv("GPUKIT_CACHE_DIR", dir, 1);
    gk_device_name(device, name, sizeof name);
    snprintf(token, sizeof token, "%s pid %ld time %lld round %d", name, (long)getpid(),
             (long long)time(NULL), round++);
    source = unique_source(token);
    if (!source)
        goto done;

    /* The first compile writes the disk cache. */
    compile_and_run(device, source, &first);
    int files = cache_files(dir, before, 64);
    CHECK(files >= 1, "a .bin file appears in %s", dir);

    /* A second compile in this process is a memory hit: the very same
     * module, nothing written, the same results. */
    gk_gpu_module *m1 = NULL, *m2 = NULL;
    gk_device runs_on = device;
    if (device.kind == GK_DEVICE_CPU)
        CHECK_OK(gk_gpu_host_device(&runs_on));
    CHECK_OK(gk_gpu_program(runs_on, GK_GPU_PORTABLE, source, NULL, &m1));
    CHECK_OK(gk_gpu_program(runs_on, GK_GPU_PORTABLE, source, NULL, &m2));
    CHECK(m1 && m1 == m2, "the memory cache returns the loaded module");
    compile_and_run(device, source, &second);
    cache_entry again[64];
    CHECK(cache_files(dir, again, 64) == files && files_untouched(dir, before, files),
          "a memory hit writes nothing to the disk cache");

    /* Another process finds it on disk: it runs the kernel without
     * compiling, so the file is read, not rewritten. */
    int code = run_child(name, token);
    CHECK(code == 0, "the child process compiling from the disk cache exited with %d", code);
    /* (The child may add files: built-in programs this process had
     * loaded before the cache directory changed.) */
    CHECK(files_untouched(dir, before, files),
          "the child read the cached files rather than compiling and writing them again");
done:
    gk_kernel_free(first);
    gk_kernel_free(second);
    free(source);
    remove_dir(dir);
    if (saved)
        setenv("GPUKIT_CACHE_DIR", saved, 1);
    else
        unsetenv("GPUKIT_CACHE_DIR");
    free(saved);
}

/* ---- devices ------------------------------------------------------------ */

/* The devices to test: the cpu, CUDA and OpenCL ones. */
static int kernel_devices(gk_device *devices, int max)
{
    gk_device all[32];
    const char *chosen = getenv("GPUKIT_TEST_DEVICES");
    int count = chosen && *chosen ? test_devices(all, 32) : gk_device_list(all, 32);
    int n = 0;
    gk_device host;
    for (int k = 0; k < count && k < 32 && n < max; k++)
        if (all[k].kind != GK_DEVICE_CPU || gk_gpu_host_device(&host) == GK_OK)
            devices[n++] = all[k];
    return n;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--cache-child") == 0)
        return cache_child(argv[2], argv[3]);

    test_null_handles();
    test_cpu_without_driver();

    const char *chosen = getenv("GPUKIT_TEST_DEVICES");
    const char *no_gpu = getenv("GPUKIT_TEST_NO_GPU_DEVICE");
    bool allowed_none = no_gpu && strcmp(no_gpu, "1") == 0;
    gk_device devices[16];
    int count = kernel_devices(devices, 16);
    /* CI has PoCL: no OpenCL device at all means a broken setup, not a
     * reason to pass. An explicit GPUKIT_TEST_DEVICES list is the
     * caller's choice, even one without a GPU-like device. */
    if (!allowed_none && !(chosen && *chosen))
        CHECK(gk_device_count(GK_DEVICE_OPENCL) > 0,
              "no OpenCL device: install an OpenCL driver (PoCL runs on the CPU: apt-get "
              "install pocl-opencl-icd) or set GPUKIT_TEST_NO_GPU_DEVICE=1 to skip");
    if (count == 0)
        printf("no device runs kernels here: only the cpu device's message was checked\n");

    void (*const tests[])(gk_device) = {
        test_grids,         test_scalars,      test_views,      test_view_args,
        test_block_sum,     test_raw_errors,   test_broadcast,
        test_integer_dtypes, test_float_dtypes, test_half_dtypes,
        test_index,         test_in_place,     test_elementwise_errors,
        test_streams,       test_cache,
    };
    const char *names[] = {
        "grids",   "scalars",         "views",          "view_args",          "block_sum", "raw_errors",
        "broadcast", "integer_dtypes", "float_dtypes", "half_dtypes", "index",
        "in_place", "elementwise_errors", "streams", "cache",
    };
    for (int d = 0; d < count; d++) {
        char name[GK_DEVICE_NAME_MAX];
        gk_device_name(devices[d], name, sizeof name);
        for (size_t t = 0; t < sizeof tests / sizeof *tests; t++) {
            int before = check_failures;
            tests[t](devices[d]);
            if (check_failures != before)
                fprintf(stderr, "  (in test_%s on %s)\n", names[t], name);
        }
        printf("user kernels on %s: checked\n", name);
    }
    CHECK_DONE();
}
