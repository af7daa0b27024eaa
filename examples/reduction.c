/* Reductions, as in PyTorch or NumPy:
 *
 *     x = torch.tensor([[1., 5., 3.], [4., 2., 6.]], device=device)
 *     x.sum()             # over all elements: a 0-d array
 *     x.mean(dim=0)       # down each column
 *     x.argmax(dim=1)     # the largest element's index in each row
 *     x.sum().item()      # the value as a plain number
 *
 * Run: ./build/examples/example_reduction [DEVICE]   (DEVICE: cpu, cuda:0, ...) */
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

/* Prints "label = array(...)". */
static void show(const char *label, const gk_array *a)
{
    printf("%s = ", label);
    check(gk_array_print(stdout, a), "gk_array_print");
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

    /* x: a 2x3 float32 array copied from C data to the device. */
    const float data[6] = {1, 5, 3, 4, 2, 6};
    const int64_t shape[2] = {2, 3};
    gk_array *x, *total, *column_means, *row_argmax;
    check(gk_from_host(device, GK_FLOAT32, 2, shape, data, &x), "gk_from_host");
    show("x", x);

    /* Over all elements (GK_ALL_AXES): a 0-d array. */
    check(gk_reduce(GK_SUM, x, GK_ALL_AXES, false, &total), "gk_reduce(sum)");
    show("x.sum()", total);

    /* Along axis 0, down the columns: shape (3,). */
    check(gk_reduce(GK_MEAN, x, 0, false, &column_means), "gk_reduce(mean)");
    show("x.mean(axis=0)", column_means);

    /* Along axis 1 (or -1, the last): the index of each row's maximum, int64. */
    check(gk_reduce(GK_ARGMAX, x, 1, false, &row_argmax), "gk_reduce(argmax)");
    show("x.argmax(axis=1)", row_argmax);

    /* A 0-d array's value as a C double (index: none, ndim is 0). */
    double value;
    check(gk_item(total, NULL, &value), "gk_item");
    printf("x.sum().item() = %g\n", value);

    gk_array_free(x);
    gk_array_free(total);
    gk_array_free(column_means);
    gk_array_free(row_argmax);
    return 0;
}
