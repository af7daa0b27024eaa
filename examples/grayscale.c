/* Lab 4 of the GPU Python tutorial: turn a colour image black and white on
 * the GPU. Every pixel of a 116 x 434 RGBA image (made up here) gets its
 * red, green and blue set to the mean of the three; alpha stays.
 *
 * The kernel (examples/kernels/grayscale.gk) runs on a 2-D grid, one thread
 * per pixel, and writes a new image, so the original is still there to
 * compare with.
 *
 * Run: ./build/examples/example_grayscale [DEVICE]   (DEVICE: cuda:0, opencl:0:0) */
#include "kernel_example.h"

#include <stdio.h>
#include <stdlib.h>

#define HEIGHT 116
#define WIDTH 434
#define BYTES (HEIGHT * WIDTH * 4)

/* A colourful test image: red rises left to right, green top to bottom,
 * blue in stripes, and alpha varies too (to show that it is kept). */
static void make_image(uint8_t *image)
{
    for (int y = 0; y < HEIGHT; y++) {
        for (int x = 0; x < WIDTH; x++) {
            uint8_t *pixel = image + (y * WIDTH + x) * 4;
            pixel[0] = (uint8_t)(x * 255 / (WIDTH - 1));
            pixel[1] = (uint8_t)(y * 255 / (HEIGHT - 1));
            pixel[2] = (uint8_t)((x / 10) % 2 ? 250 : 10);
            pixel[3] = (uint8_t)(128 + (x + y) % 128);
        }
    }
}

int main(int argc, char **argv)
{
    gk_device device;
    if (!choose_device(argc, argv, &device))
        return 0;
    char name[GK_DEVICE_NAME_MAX];
    printf("device: %s\n", gk_device_name(device, name, sizeof name));

    char *source = read_kernel("grayscale.gk");
    gk_kernel *grayscale;
    check(gk_kernel_compile(device, GK_KERNEL_PORTABLE, source, "grayscale", NULL, &grayscale),
          "gk_kernel_compile");

    static uint8_t image[BYTES], result[BYTES];
    make_image(image);
    int64_t shape[3] = {HEIGHT, WIDTH, 4};
    gk_array *colour, *gray;
    check(gk_from_host(device, GK_UINT8, 3, shape, image, &colour), "gk_from_host");
    check(gk_empty(device, GK_UINT8, 3, shape, &gray), "gk_empty");

    /* One thread per pixel on a 2-D grid of 16 x 16 blocks. */
    uint32_t block[3] = {16, 16, 1};
    uint32_t grid[3] = {(WIDTH + 15) / 16, (HEIGHT + 15) / 16, 1};
    gk_arg args[] = {gk_arg_array(colour), gk_arg_array(gray), gk_arg_int32(HEIGHT),
                     gk_arg_int32(WIDTH)};
    check(gk_kernel_launch(grayscale, grid, block, NULL, 4, args), "gk_kernel_launch");
    check(gk_to_host(gray, result, sizeof result), "gk_to_host");

    /* The same conversion on the CPU, pixel by pixel. */
    int wrong = 0;
    for (int i = 0; i < BYTES; i += 4) {
        uint8_t mean = (uint8_t)((image[i] + image[i + 1] + image[i + 2]) / 3);
        wrong += result[i] != mean || result[i + 1] != mean || result[i + 2] != mean ||
                 result[i + 3] != image[i + 3];
    }
    const uint8_t *before = image + (10 * WIDTH + 300) * 4;
    const uint8_t *after = result + (10 * WIDTH + 300) * 4;
    printf("converted a %d x %d RGBA image: pixel (10, 300) RGBA (%d, %d, %d, %d) -> (%d, %d, %d, "
           "%d)\n",
           HEIGHT, WIDTH, before[0], before[1], before[2], before[3], after[0], after[1], after[2],
           after[3]);
    if (wrong) {
        printf("MISMATCH: %d of %d pixels differ from the CPU's\n", wrong, HEIGHT * WIDTH);
        return 1;
    }
    printf("every pixel matches the CPU's conversion\n");

    free(source);
    gk_array_free(colour);
    gk_array_free(gray);
    gk_kernel_free(grayscale);
    return 0;
}
