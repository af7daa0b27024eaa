/* Matrix multiplication, as in PyTorch or NumPy:
 *
 *     a = torch.arange(6.).reshape(2, 3).to(device)   # [[0, 1, 2], [3, 4, 5]]
 *     b = torch.ones(3, 2, device=device)
 *     c = a @ b                                        # 2x3 @ 3x2 -> 2x2
 *
 * On the CPU this runs on OpenBLAS.
 * Run: ./build/examples/example_matmul [DEVICE]   (DEVICE: cpu, cuda:0, ...) */
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

    /* a = arange(6).reshape(2, 3): reshape of a contiguous array is a view. */
    gk_array *range, *a, *b, *c;
    const int64_t a_shape[2] = {2, 3}, b_shape[2] = {3, 2};
    check(gk_arange(device, GK_FLOAT32, 0, 6, 1, &range), "gk_arange");
    check(gk_reshape(range, 2, a_shape, &a), "gk_reshape");
    check(gk_ones(device, GK_FLOAT32, 2, b_shape, &b), "gk_ones");
    show("a", a);
    show("b", b);

    /* c = a @ b: each entry is a row of a dotted with a column of b, so
     * c = [[0+1+2, same], [3+4+5, same]] = [[3, 3], [12, 12]]. */
    check(gk_matmul(a, b, &c), "gk_matmul");
    show("c = a @ b", c);

    const int64_t *shape = gk_array_shape(c);
    printf("(%lld x %lld) @ (%lld x %lld) -> (%lld x %lld) on %s\n", (long long)a_shape[0],
           (long long)a_shape[1], (long long)b_shape[0], (long long)b_shape[1],
           (long long)shape[0], (long long)shape[1], name);

    gk_array_free(range); /* a is a view of it: the memory goes with the last one */
    gk_array_free(a);
    gk_array_free(b);
    gk_array_free(c);
    return 0;
}
