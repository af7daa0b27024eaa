/* What the kernel examples share: stopping on an error, choosing the
 * device from the command line, and reading a kernel's source from
 * examples/kernels/. */
#ifndef GPUKIT_KERNEL_EXAMPLE_H
#define GPUKIT_KERNEL_EXAMPLE_H

#include <gpukit/gpukit.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* Where the kernel sources are: GPUKIT_EXAMPLES_DIR, else the build's. */
#ifndef GPUKIT_EXAMPLE_KERNELS
#define GPUKIT_EXAMPLE_KERNELS "examples/kernels"
#endif

/* Every gpukit call returns a status: stop with the library's message. */
static inline void check(gk_status status, const char *what)
{
    if (status != GK_OK) {
        fprintf(stderr, "%s failed: %s\n", what, gk_last_error());
        exit(1);
    }
}

/* The device named on the command line, else the best one for kernels (a
 * CUDA GPU, else an OpenCL device). False, after saying so, when there is
 * none: the example has nothing to run. */
static inline bool choose_device(int argc, char **argv, gk_device *device)
{
    if (argc > 1) {
        check(gk_device_parse(argv[1], device), "gk_device_parse");
        return true;
    }
    if (gk_device_accelerator(device) != GK_OK) {
        printf("no CUDA or OpenCL device here, nothing to run: %s\n", gk_last_error());
        return false;
    }
    return true;
}

/* The text of examples/kernels/<file> (malloc'd). */
static inline char *read_kernel(const char *file)
{
    const char *dir = getenv("GPUKIT_EXAMPLES_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : GPUKIT_EXAMPLE_KERNELS, file);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s: set GPUKIT_EXAMPLES_DIR to gpukit's examples/kernels\n",
                path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    if (!text || fread(text, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    text[size] = 0;
    fclose(f);
    return text;
}

#endif
