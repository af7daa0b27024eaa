/* Choosing a device and moving data to it, as in PyTorch:
 *
 *     device = "cuda" if torch.cuda.is_available() else "cpu"
 *     x = torch.tensor([[1., 2., 3.], [4., 5., 6.]])   # made on the CPU
 *     y = x.to(device)                                 # a copy on the device
 *     z = (y * 10).to("cpu")                           # computed there, brought back
 *
 * Run: ./build/examples/example_devices [DEVICE]   (DEVICE: cpu, cuda:0, ...) */
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
    /* What this machine has: the CPU always, GPUs when their drivers work. */
    printf("devices: cpu x%d, cuda x%d, opencl x%d\n", gk_device_count(GK_DEVICE_CPU),
           gk_device_count(GK_DEVICE_CUDA), gk_device_count(GK_DEVICE_OPENCL));

    /* The best device (a CUDA GPU if usable, else the CPU), or the one named. */
    gk_device device = gk_device_default();
    if (argc > 1)
        check(gk_device_parse(argv[1], &device), "gk_device_parse");
    char name[GK_DEVICE_NAME_MAX], about[256];
    gk_device_name(device, name, sizeof name);
    check(gk_device_describe(device, about, sizeof about), "gk_device_describe");
    uint64_t free_bytes, total_bytes;
    check(gk_device_memory(device, &free_bytes, &total_bytes), "gk_device_memory");
    printf("using %s: %s, %.1f of %.1f GiB free\n", name, about, free_bytes / 1073741824.0,
           total_bytes / 1073741824.0);

    /* x: a 2x3 float32 array made from C data, on the CPU. */
    const float data[6] = {1, 2, 3, 4, 5, 6};
    const int64_t shape[2] = {2, 3};
    gk_array *x, *y, *y10, *z;
    check(gk_from_host(gk_device_cpu(), GK_FLOAT32, 2, shape, data, &x), "gk_from_host");
    printf("x = ");
    check(gk_array_print(stdout, x), "gk_array_print");

    /* y = x.to(device): a copy on the device; x stays where it is. */
    check(gk_to(x, device, &y), "gk_to");
    printf("y = x.to(\"%s\") = ", name);
    check(gk_array_print(stdout, y), "gk_array_print");

    /* The op runs where its operands live: on the device. */
    check(gk_binary_scalar(GK_MUL, y, 10, &y10), "gk_binary_scalar");

    /* z = (y * 10).to("cpu"), then its numbers into a plain C array. */
    check(gk_to(y10, gk_device_cpu(), &z), "gk_to");
    float result[6];
    check(gk_to_host(z, result, sizeof result), "gk_to_host");
    printf("z = (y * 10).to(\"cpu\") = ");
    check(gk_array_print(stdout, z), "gk_array_print");
    printf("as C floats:");
    for (int i = 0; i < 6; i++)
        printf(" %g", result[i]);
    printf("\n");

    gk_array_free(x);
    gk_array_free(y);
    gk_array_free(y10);
    gk_array_free(z);
    return 0;
}
