/* The singular value decomposition, as in NumPy:
 *
 *     U, S, Vt = np.linalg.svd(A, full_matrices=False)
 *     B = (U * S) @ Vt                 # put A back together
 *     np.abs(A - B).max()              # about 1e-6 in float32
 *
 * On the CPU this runs on LAPACK.
 * Run: ./build/examples/example_svd [DEVICE]   (DEVICE: cpu, cuda:0, ...) */
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

    /* A: a 4x3 float32 matrix copied from C data to the device. */
    const float data[12] = {2, 0, 1, 1, 3, 0, 0, 1, 4, 1, 1, 1};
    const int64_t shape[2] = {4, 3};
    gk_array *A, *U, *S, *Vt, *US, *B, *diff, *abs_diff, *max_error;
    check(gk_from_host(device, GK_FLOAT32, 2, shape, data, &A), "gk_from_host");
    show("A", A);

    /* Reduced SVD: U is 4x3, S has the 3 singular values (largest first), Vt is 3x3. */
    check(gk_svd(A, false, &U, &S, &Vt), "gk_svd");
    show("U", U);
    show("S", S);
    show("Vt", Vt);

    /* U * S broadcasts S (shape 3) over U's rows: column j of U times S[j],
     * which is U @ diag(S) without making the diagonal matrix. */
    check(gk_binary(GK_MUL, U, S, &US), "gk_binary(mul)");
    check(gk_matmul(US, Vt, &B), "gk_matmul");
    show("B = (U * S) @ Vt", B);

    /* How far B is from A: the largest absolute difference. */
    check(gk_binary(GK_SUB, A, B, &diff), "gk_binary(sub)");
    check(gk_unary(GK_ABS, diff, &abs_diff), "gk_unary(abs)");
    check(gk_reduce(GK_MAX, abs_diff, GK_ALL_AXES, false, &max_error), "gk_reduce(max)");
    double error;
    check(gk_item(max_error, NULL, &error), "gk_item");
    printf("max |A - B| = %.3g on %s: %s\n", error, name,
           error < 1e-4 ? "A is reconstructed" : "NOT reconstructed");

    gk_array *arrays[] = {A, U, S, Vt, US, B, diff, abs_diff, max_error};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        gk_array_free(arrays[i]);
    return 0;
}
