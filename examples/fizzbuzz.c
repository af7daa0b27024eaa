/* Lab 2 of the GPU Python tutorial: FizzBuzz for the numbers 1 to 50
 * million on the GPU. Each element of a uint8 array says what its number
 * is: 1 for a multiple of 3 ("fizz"), 2 for 5 ("buzz"), 3 for 15
 * ("fizzbuzz"), 0 for the rest.
 *
 * The kernel (examples/kernels/fizzbuzz.gk) uses a grid-stride loop, so it
 * runs with a fixed launch size whatever the length of the array.
 *
 * Run: ./build/examples/example_fizzbuzz [DEVICE]   (DEVICE: cuda:0, opencl:0:0) */
#include "kernel_example.h"

#include <stdio.h>
#include <stdlib.h>

#define N 50000000

int main(int argc, char **argv)
{
    gk_device device;
    if (!choose_device(argc, argv, &device))
        return 0;
    char name[GK_DEVICE_NAME_MAX];
    printf("device: %s\n", gk_device_name(device, name, sizeof name));

    char *source = read_kernel("fizzbuzz.gk");
    gk_kernel *kernel;
    check(gk_kernel_compile(device, GK_KERNEL_PORTABLE, source, "fizzbuzz", NULL, &kernel),
          "gk_kernel_compile");

    /* The answers are made on the device: nothing to copy there first. */
    gk_array *codes;
    check(gk_empty(device, GK_UINT8, 1, (int64_t[]){N}, &codes), "gk_empty");

    /* 1024 blocks of 256 threads: each thread takes every 262144th number. */
    uint32_t grid[3] = {1024, 1, 1}, block[3] = {256, 1, 1};
    gk_arg args[] = {gk_arg_array(codes), gk_arg_int64(N)};
    check(gk_kernel_launch(kernel, grid, block, NULL, 2, args), "gk_kernel_launch");

    uint8_t *result = malloc(N);
    if (!result) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    check(gk_to_host(codes, result, N), "gk_to_host");

    /* The first 15, in words. */
    const char *words[] = {"", "fizz", "buzz", "fizzbuzz"};
    printf("1..15:");
    for (int i = 0; i < 15; i++) {
        if (result[i] == 0)
            printf(" %d", i + 1);
        else
            printf(" %s", result[i] <= 3 ? words[result[i]] : "?");
    }
    printf("\n");

    /* Checked against a plain loop on the CPU, counting each kind. */
    int64_t wrong = 0, counts[4] = {0};
    for (int64_t i = 0; i < N; i++) {
        int64_t number = i + 1;
        uint8_t expected = (uint8_t)((number % 3 == 0 ? 1 : 0) + (number % 5 == 0 ? 2 : 0));
        if (result[i] != expected)
            wrong++;
        counts[expected]++;
    }
    printf("1..%d: %lld fizz, %lld buzz, %lld fizzbuzz, %lld plain numbers\n", N,
           (long long)counts[1], (long long)counts[2], (long long)counts[3],
           (long long)counts[0]);
    if (wrong) {
        printf("MISMATCH: %lld of %d answers differ from the CPU's\n", (long long)wrong, N);
        return 1;
    }
    printf("all %d answers match the CPU's\n", N);

    free(result);
    free(source);
    gk_array_free(codes);
    gk_kernel_free(kernel);
    return 0;
}
