/* Lab 5 of the GPU Python tutorial: the same work on the CPU and on the
 * GPU, timed. The work is y = sqrt(x * x + 1) * sin(x) + cos(x) / 2 over 10
 * million float32 values: a plain C loop on one CPU core, and an
 * elementwise kernel (CuPy's ElementwiseKernel) on the device:
 *
 *     kernel = cp.ElementwiseKernel("float32 x", "float32 y",
 *                                   "y = sqrt(x * x + 1) * sin(x) + cos(x) / 2")
 *
 * gk_elementwise_kernel writes the loop around the body and picks the
 * launch size, so there is no grid to choose. Each side runs once to warm
 * up (compiling, first-touch memory) before it is timed, and the GPU clock
 * stops only after gk_device_synchronize: launches return at once, before
 * the work is done. The times depend on the machine; with OpenCL on PoCL
 * the "device" is this same CPU, using all its cores.
 *
 * Run: ./build/examples/example_cpu_vs_gpu [DEVICE]   (DEVICE: cuda:0, opencl:0:0) */
#include "kernel_example.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 10000000

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void work_on_cpu(const float *x, float *y)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = sqrtf(x[i] * x[i] + 1.0f) * sinf(x[i]) + cosf(x[i]) / 2.0f;
}

int main(int argc, char **argv)
{
    gk_device device;
    if (!choose_device(argc, argv, &device))
        return 0;
    char name[GK_DEVICE_NAME_MAX], about[256];
    gk_device_name(device, name, sizeof name);
    check(gk_device_describe(device, about, sizeof about), "gk_device_describe");
    printf("device: %s (%s)\n", name, about);

    float *x = malloc(sizeof *x * N), *cpu = malloc(sizeof *cpu * N),
          *gpu = malloc(sizeof *gpu * N);
    if (!x || !cpu || !gpu) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int64_t i = 0; i < N; i++)
        x[i] = (float)(i % 10000) / 1000.0f; /* 0 to 10 */

    /* --- the CPU: a warm-up run, then the timed one --- */
    work_on_cpu(x, cpu);
    double start = seconds();
    work_on_cpu(x, cpu);
    double cpu_time = seconds() - start;

    /* --- the device: an elementwise kernel, compiled once --- */
    gk_kernel *kernel;
    check(gk_elementwise_kernel(device, "float32 x", "float32 y",
                                "y = sqrt(x * x + 1.0f) * sin(x) + cos(x) / 2.0f;", "work",
                                &kernel),
          "gk_elementwise_kernel");
    int64_t shape[1] = {N};
    gk_array *dx, *dy;
    check(gk_from_host(device, GK_FLOAT32, 1, shape, x, &dx), "gk_from_host");
    check(gk_empty(device, GK_FLOAT32, 1, shape, &dy), "gk_empty");
    const gk_array *in[1] = {dx};
    gk_array *out[1] = {dy}; /* write into dy (a NULL entry would make a new array) */

    check(gk_elementwise_launch(kernel, 1, in, 1, out, NULL), "gk_elementwise_launch");
    check(gk_device_synchronize(device), "gk_device_synchronize"); /* the warm-up */
    start = seconds();
    check(gk_elementwise_launch(kernel, 1, in, 1, out, NULL), "gk_elementwise_launch");
    check(gk_device_synchronize(device), "gk_device_synchronize");
    double gpu_time = seconds() - start;

    /* The whole trip: copy x there, compute, copy y back. */
    start = seconds();
    gk_array *dx2;
    check(gk_from_host(device, GK_FLOAT32, 1, shape, x, &dx2), "gk_from_host");
    in[0] = dx2;
    check(gk_elementwise_launch(kernel, 1, in, 1, out, NULL), "gk_elementwise_launch");
    check(gk_to_host(dy, gpu, sizeof *gpu * N), "gk_to_host");
    double trip_time = seconds() - start;

    printf("y = sqrt(x*x + 1) * sin(x) + cos(x) / 2 over %d float32 values:\n", N);
    printf("  CPU, one core, plain C loop:   %8.1f ms\n", cpu_time * 1e3);
    printf("  %-12s kernel only:      %8.1f ms  (%.1fx the CPU's speed)\n", name, gpu_time * 1e3,
           cpu_time / gpu_time);
    printf("  %-12s with the copies:  %8.1f ms  (%.1fx)\n", name, trip_time * 1e3,
           cpu_time / trip_time);

    /* The device's sin and cos may round differently in the last bits. */
    int64_t wrong = 0;
    for (int64_t i = 0; i < N; i++) {
        double scale = fabs(cpu[i]) > 1 ? fabs(cpu[i]) : 1;
        if (fabs((double)gpu[i] - cpu[i]) > 1e-5 * scale)
            wrong++;
    }
    if (wrong) {
        printf("MISMATCH: %lld of %d results differ from the CPU's\n", (long long)wrong, N);
        return 1;
    }
    printf("the results agree (within float32 rounding)\n");

    free(x);
    free(cpu);
    free(gpu);
    gk_array_free(dx);
    gk_array_free(dx2);
    gk_array_free(dy);
    gk_kernel_free(kernel);
    return 0;
}
