/* The C side of bench/gpu_vs_peers.py (run that).
 *
 *   gpu_bench bandwidth DEVICE LOG2_SIZE MATMUL_N
 *       The driver's own device-to-device copy (the bandwidth reference),
 *       gk add and gk sum over 2^LOG2_SIZE float32, and gk_matmul against
 *       the vendor BLAS called directly (CUDA with cuBLAS only), in one run.
 *       Prints "name seconds bytes_or_flops" lines.
 *   gpu_bench kernel-start DEVICE
 *       In this fresh process: the time to open the device, then to get a
 *       user kernel from gk_kernel_compile (a disk-cache hit when the cache
 *       directory already holds it), then a second compile (memory hit). */
#include "compute/array_impl.h"
#include "compute/gpu/gpu.h"

#include <gpukit/gpukit.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void check(gk_status status, const char *what)
{
    if (status != GK_OK) {
        fprintf(stderr, "gpu_bench: %s: %s\n", what, gk_last_error());
        exit(1);
    }
}

enum { RUNS = 10 };

/* The best of RUNS timings of `body` (each synchronised). */
#define TIME_BEST(result, device, body)                                  \
    do {                                                                 \
        result = 1e30;                                                   \
        for (int run_ = 0; run_ <= RUNS; run_++) {                       \
            double start_ = now();                                       \
            body;                                                        \
            check(gk_device_synchronize(device), "synchronize");         \
            double t_ = now() - start_;                                  \
            if (run_ > 0 && t_ < result) /* run 0 warms up */           \
                result = t_;                                             \
        }                                                                \
    } while (0)

static int bandwidth(gk_device device, int log2_size, int64_t order)
{
    int64_t n = (int64_t)1 << log2_size, shape[1] = {n}, square[2] = {order, order};
    gk_array *a, *b, *c, *left, *right, *sum = NULL, *product = NULL;
    check(gk_random_uniform(device, GK_FLOAT32, 1, shape, 1, -1, 1, &a), "a");
    check(gk_random_uniform(device, GK_FLOAT32, 1, shape, 2, -1, 1, &b), "b");
    check(gk_empty(device, GK_FLOAT32, 1, shape, &c), "c");
    check(gk_random_uniform(device, GK_FLOAT32, 2, square, 3, -1, 1, &left), "left");
    check(gk_random_uniform(device, GK_FLOAT32, 2, square, 4, -1, 1, &right), "right");
    double bytes = (double)n * 4, flops = 2.0 * (double)order * (double)order * (double)order;
    double t;

    if (device.kind == GK_DEVICE_CPU) {
        TIME_BEST(t, device, check(gk_assign(c, a), "copy"));
    } else {
        const gk_gpu_driver *driver = gk_gpu_driver_of(device);
        TIME_BEST(t, device,
                  check(driver->copy(device, (char *)c->buffer->data + c->offset,
                                     (char *)a->buffer->data + a->offset, (size_t)bytes),
                        "driver copy"));
    }
    printf("copy %.9f %.0f\n", t, 2 * bytes);
    TIME_BEST(t, device, check(gk_binary_into(GK_ADD, a, b, c), "add"));
    printf("add %.9f %.0f\n", t, 3 * bytes);
    TIME_BEST(t, device, {
        gk_array_free(sum);
        check(gk_reduce(GK_SUM, a, GK_ALL_AXES, false, &sum), "sum");
    });
    printf("sum %.9f %.0f\n", t, bytes);
    TIME_BEST(t, device, {
        gk_array_free(product);
        check(gk_matmul(left, right, &product), "matmul");
    });
    printf("matmul %.9f %.0f\n", t, flops);
    if (device.kind == GK_DEVICE_CUDA && gk_gpu_driver_of(device)->blas_matmul) {
        const gk_gpu_driver *driver = gk_gpu_driver_of(device);
        char *out = (char *)product->buffer->data + product->offset;
        const char *l = (char *)left->buffer->data + left->offset, *r = (char *)right->buffer->data + right->offset;
        gk_status status = GK_OK;
        TIME_BEST(t, device,
                  status = driver->blas_matmul(device, GK_FLOAT32, 1, order, order, order, l, 0,
                                               r, 0, out, 0));
        if (status == GK_OK)
            printf("blas_direct %.9f %.0f\n", t, flops);
    }
    gk_array_free(a), gk_array_free(b), gk_array_free(c), gk_array_free(left);
    gk_array_free(right), gk_array_free(sum), gk_array_free(product);
    return 0;
}

static int kernel_start(gk_device device)
{
    static const char source[] = "GK_KERNEL void bench_scale(GK_GLOBAL float *x, float f, gk_i64 n)\n"
                                 "{\n"
                                 "    GK_FOR_EACH_INDEX(i, n)\n"
                                 "        x[i] *= f;\n"
                                 "}\n";
    double start = now();
    check(gk_device_check(device), "device");
    const gk_gpu_info *info;
    check(gk_gpu_info_of(device, &info), "device info");
    double opened = now();
    gk_kernel *kernel, *again;
    check(gk_kernel_compile(device, GK_KERNEL_PORTABLE, source, "bench_scale", NULL, &kernel),
          "compile");
    double compiled = now();
    check(gk_kernel_compile(device, GK_KERNEL_PORTABLE, source, "bench_scale", NULL, &again),
          "compile again");
    double memory_hit = now();
    printf("open %.9f\ncompile %.9f\nmemory_hit %.9f\n", opened - start, compiled - opened,
           memory_hit - compiled);
    gk_kernel_free(kernel);
    gk_kernel_free(again);
    return 0;
}

int main(int argc, char **argv)
{
    gk_device device;
    if (argc >= 3 && gk_device_parse(argv[2], &device) == GK_OK) {
        if (strcmp(argv[1], "bandwidth") == 0 && argc == 5)
            return bandwidth(device, atoi(argv[3]), atoll(argv[4]));
        if (strcmp(argv[1], "kernel-start") == 0 && argc == 3)
            return kernel_start(device);
    }
    fprintf(stderr, "usage: gpu_bench bandwidth DEVICE LOG2_SIZE MATMUL_N\n"
                    "       gpu_bench kernel-start DEVICE\n");
    return 2;
}
