/* An elementwise chain, as in PyTorch or NumPy:
 *
 *     x = torch.linspace(-3, 3, 7, device=device)
 *     t = x * 2          # a new array
 *     t += 1             # in place
 *     y = torch.sigmoid(t)
 *
 * Run: ./build/examples/example_elementwise [DEVICE]   (DEVICE: cpu, cuda:0, ...) */
#include <gpukit/gpukit.h>

#include <stdio.h>
#include <stdlib.h>

/* Every gpukit call returns a status: stop with the library's message. */
static void check(gk_status status, const char *what)
{
    if (status != GK_OK) {
        fprintf(stderr, "%s failed: %s\n", what, gk_last_error());
        exit(1);
    }
}

int main(int argc, char **argv)
{
    /* The best device (a CUDA GPU if usable, else the CPU), or the one named. */
    gk_device device = gk_device_default();
    if (argc > 1)
        check(gk_device_parse(argv[1], &device), "gk_device_parse");
    char name[GK_DEVICE_NAME_MAX], about[256];
    gk_device_name(device, name, sizeof name);
    check(gk_device_describe(device, about, sizeof about), "gk_device_describe");
    printf("device: %s (%s)\n", name, about);

    /* x: 7 float32 values from -3 to 3, made directly on the device. */
    gk_array *x, *t, *one, *y;
    check(gk_linspace(device, GK_FLOAT32, -3, 3, 7, true, &x), "gk_linspace");
    printf("x = ");
    check(gk_array_print(stdout, x), "gk_array_print");

    /* t = x * 2: every call with an `out` makes a new array. */
    check(gk_binary_scalar(GK_MUL, x, 2, &t), "gk_binary_scalar");

    /* t += 1: the *_into calls write into an existing array, here t itself.
     * The 1 is a 0-d array (a scalar) that broadcasts over t. */
    check(gk_scalar(device, GK_FLOAT32, 1, &one), "gk_scalar");
    check(gk_binary_into(GK_ADD, t, one, t), "gk_binary_into");
    printf("t = x * 2 + 1 = ");
    check(gk_array_print(stdout, t), "gk_array_print");

    /* y = sigmoid(t) = 1 / (1 + exp(-t)). */
    check(gk_unary(GK_SIGMOID, t, &y), "gk_unary");
    printf("y = sigmoid(x * 2 + 1) = ");
    check(gk_array_print(stdout, y), "gk_array_print");

    /* One element back as a C double: y[3] = sigmoid(1). */
    int64_t index[1] = {3};
    double y3;
    check(gk_item(y, index, &y3), "gk_item");
    printf("y[3] = %.6f (sigmoid(1) = 0.731059)\n", y3);

    gk_array_free(x);
    gk_array_free(t);
    gk_array_free(one);
    gk_array_free(y);
    return 0;
}
