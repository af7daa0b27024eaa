/* Lab 1 of the GPU Python tutorial: double 30 million numbers with a kernel
 * of our own, as Numba does with
 *
 *     @cuda.jit
 *     def double(x):
 *         i = cuda.grid(1)
 *         if i < x.size:
 *             x[i] *= 2
 *
 *     double[blocks, threads_per_block](x)
 *
 * The kernel is examples/kernels/double.gk, in gpukit's portable dialect:
 * the same source runs on CUDA and OpenCL devices.
 *
 * Run: ./build/examples/example_double [DEVICE]   (DEVICE: cuda:0, opencl:0:0) */
#include "kernel_example.h"

#include <stdio.h>
#include <stdlib.h>

#define N 30000000

int main(int argc, char **argv)
{
    gk_device device;
    if (!choose_device(argc, argv, &device))
        return 0;
    char name[GK_DEVICE_NAME_MAX], about[256];
    gk_device_name(device, name, sizeof name);
    check(gk_device_describe(device, about, sizeof about), "gk_device_describe");
    printf("device: %s (%s)\n", name, about);

    /* Compile the kernels (a second run loads them from the cache). */
    char *source = read_kernel("double.gk");
    gk_kernel *has_fp64, *double_values;
    check(gk_kernel_compile(device, GK_KERNEL_PORTABLE, source, "has_fp64", NULL, &has_fp64),
          "gk_kernel_compile");

    /* Can this device compute in double precision at all? */
    gk_array *answer;
    int32_t fp64 = 0;
    uint32_t one[3] = {1, 1, 1};
    check(gk_zeros(device, GK_INT32, 1, (int64_t[]){1}, &answer), "gk_zeros");
    gk_arg answer_arg = gk_arg_array(answer);
    check(gk_kernel_launch(has_fp64, one, one, NULL, 1, &answer_arg), "gk_kernel_launch");
    check(gk_to_host(answer, &fp64, sizeof fp64), "gk_to_host");
    if (!fp64) {
        printf("%s has no double precision (float64): nothing to double here\n", name);
        gk_array_free(answer);
        gk_kernel_free(has_fp64);
        free(source);
        return 0;
    }
    check(gk_kernel_compile(device, GK_KERNEL_PORTABLE, source, "double_values", NULL,
                            &double_values),
          "gk_kernel_compile");

    /* The numbers, made on the host and copied to the device. */
    double *values = malloc(sizeof *values * N), *result = malloc(sizeof *result * N);
    if (!values || !result) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int64_t i = 0; i < N; i++)
        values[i] = (double)i / 3;
    gk_array *x;
    check(gk_from_host(device, GK_FLOAT64, 1, (int64_t[]){N}, values, &x), "gk_from_host");

    /* One thread per element: blocks of 256 threads, as many blocks as it
     * takes to cover N (rounded up). */
    uint32_t block[3] = {256, 1, 1};
    uint32_t grid[3] = {(N + 255) / 256, 1, 1};
    gk_arg args[] = {gk_arg_array(x), gk_arg_int64(N)};
    check(gk_kernel_launch(double_values, grid, block, NULL, 2, args), "gk_kernel_launch");
    printf("launched %u blocks of %u threads for %d float64 values\n", grid[0], block[0], N);

    /* Reading the result waits for the kernel. */
    check(gk_to_host(x, result, sizeof *result * N), "gk_to_host");

    /* The same on the CPU with a plain loop, and compared. */
    int64_t wrong = 0;
    for (int64_t i = 0; i < N; i++)
        if (result[i] != values[i] * 2)
            wrong++;
    printf("x[1] = %.6f, x[N-1] = %.1f after doubling\n", result[1], result[N - 1]);
    if (wrong) {
        printf("MISMATCH: %lld of %d values differ from the CPU's\n", (long long)wrong, N);
        return 1;
    }
    printf("all %d values match the CPU's\n", N);

    free(values);
    free(result);
    free(source);
    gk_array_free(x);
    gk_array_free(answer);
    gk_kernel_free(has_fp64);
    gk_kernel_free(double_values);
    return 0;
}
