/* Lab 3 of the GPU Python tutorial: blur an image on the GPU. A 3x3 box
 * blur runs 5 times over a 116 x 434 RGBA image (made up here, so the
 * example needs no files), each pass reading one device buffer and writing
 * the other, then the two swap places: the image stays on the device
 * between passes.
 *
 * The kernel (examples/kernels/blur.gk) runs on a 2-D grid of 16 x 16
 * blocks, one thread per pixel, and averages over the neighbours inside
 * the image at the edges.
 *
 * Run: ./build/examples/example_blur [DEVICE]   (DEVICE: cuda:0, opencl:0:0) */
#include "kernel_example.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEIGHT 116
#define WIDTH 434
#define PASSES 5
#define BYTES (HEIGHT * WIDTH * 4)

/* A test image: red rises left to right, green top to bottom, blue is a
 * checkerboard with noise on it (something for the blur to smooth), alpha
 * is opaque. */
static void make_image(uint8_t *image)
{
    uint32_t noise = 12345;
    for (int y = 0; y < HEIGHT; y++) {
        for (int x = 0; x < WIDTH; x++) {
            uint8_t *pixel = image + (y * WIDTH + x) * 4;
            noise = noise * 1103515245u + 12345u; /* a small pseudo-random sequence */
            pixel[0] = (uint8_t)(x * 255 / (WIDTH - 1));
            pixel[1] = (uint8_t)(y * 255 / (HEIGHT - 1));
            pixel[2] = (uint8_t)(((x / 16 + y / 16) % 2 ? 180 : 40) + (noise >> 26));
            pixel[3] = 255;
        }
    }
}

/* One pass of the same blur on the CPU, with plain loops. */
static void blur_cpu(const uint8_t *in, uint8_t *out)
{
    for (int y = 0; y < HEIGHT; y++) {
        for (int x = 0; x < WIDTH; x++) {
            for (int c = 0; c < 4; c++) {
                int sum = 0, count = 0;
                for (int yy = y - 1; yy <= y + 1; yy++) {
                    for (int xx = x - 1; xx <= x + 1; xx++) {
                        if (yy >= 0 && yy < HEIGHT && xx >= 0 && xx < WIDTH) {
                            sum += in[(yy * WIDTH + xx) * 4 + c];
                            count++;
                        }
                    }
                }
                out[(y * WIDTH + x) * 4 + c] = (uint8_t)((sum + count / 2) / count);
            }
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

    char *source = read_kernel("blur.gk");
    gk_kernel *blur;
    check(gk_kernel_compile(device, GK_KERNEL_PORTABLE, source, "blur", NULL, &blur),
          "gk_kernel_compile");

    static uint8_t image[BYTES], expected[BYTES], scratch[BYTES], result[BYTES];
    make_image(image);

    /* Two device buffers of the image's shape: the image, and room for the
     * next pass. */
    int64_t shape[3] = {HEIGHT, WIDTH, 4};
    gk_array *front, *back;
    check(gk_from_host(device, GK_UINT8, 3, shape, image, &front), "gk_from_host");
    check(gk_empty(device, GK_UINT8, 3, shape, &back), "gk_empty");

    /* A 2-D grid: x across the width, y down the height, in 16 x 16 blocks
     * (rounded up: the kernel skips threads outside the image). */
    uint32_t block[3] = {16, 16, 1};
    uint32_t grid[3] = {(WIDTH + 15) / 16, (HEIGHT + 15) / 16, 1};
    for (int pass = 0; pass < PASSES; pass++) {
        gk_arg args[] = {gk_arg_array(front), gk_arg_array(back), gk_arg_int32(HEIGHT),
                         gk_arg_int32(WIDTH)};
        check(gk_kernel_launch(blur, grid, block, NULL, 4, args), "gk_kernel_launch");
        gk_array *swap = front; /* the blurred image is the input of the next pass */
        front = back;
        back = swap;
    }
    printf("blurred a %d x %d RGBA image %d times on a %u x %u grid of %u x %u blocks\n", HEIGHT,
           WIDTH, PASSES, grid[0], grid[1], block[0], block[1]);
    check(gk_to_host(front, result, sizeof result), "gk_to_host");

    /* The same 5 passes on the CPU. */
    memcpy(expected, image, sizeof image);
    for (int pass = 0; pass < PASSES; pass++) {
        blur_cpu(expected, scratch);
        memcpy(expected, scratch, sizeof scratch);
    }
    int wrong = 0;
    for (int i = 0; i < BYTES; i++)
        wrong += result[i] != expected[i];
    const uint8_t *corner = result, *middle = result + (HEIGHT / 2 * WIDTH + WIDTH / 2) * 4;
    printf("corner pixel RGBA (%d, %d, %d, %d), middle pixel (%d, %d, %d, %d)\n", corner[0],
           corner[1], corner[2], corner[3], middle[0], middle[1], middle[2], middle[3]);
    if (wrong) {
        printf("MISMATCH: %d of %d bytes differ from the CPU's blur\n", wrong, BYTES);
        return 1;
    }
    printf("every pixel matches the CPU's blur\n");

    free(source);
    gk_array_free(front);
    gk_array_free(back);
    gk_kernel_free(blur);
    return 0;
}
