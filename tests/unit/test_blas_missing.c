/* Linear algebra and FFTs on a machine without a BLAS, LAPACKE or FFTW:
 * ctest runs this with GPUKIT_BLAS_LIBRARY, GPUKIT_LAPACKE_LIBRARY,
 * GPUKIT_FFTW_LIBRARY and GPUKIT_FFTWF_LIBRARY naming files that do not
 * exist. Every op that needs one fails with GK_ERR_NOT_FOUND and a
 * message naming the op, the variable and the package to install (the
 * same answer on a second call), never a crash; the rest of the arrays,
 * and products that need no BLAS (empty ones), still work. */
#include "check.h"

#include <gpukit/gpukit.h>

#include <string.h>

static int mentions(const char *text, const char *part)
{
    return strstr(text, part) != NULL;
}

int main(void)
{
    gk_device cpu = gk_device_cpu();
    const int64_t shape[2] = {2, 2};
    gk_array *a = NULL, *out = NULL;
    CHECK(gk_ones(cpu, GK_FLOAT64, 2, shape, &a) == GK_OK, "%s", gk_last_error());

    for (int attempt = 0; attempt < 2; attempt++) {
        gk_status status = gk_matmul(a, a, &out);
        CHECK(status == GK_ERR_NOT_FOUND, "matmul gave %d", (int)status);
        CHECK(out == NULL, "matmul left a result");
        const char *message = gk_last_error();
        CHECK(mentions(message, "matmul on the CPU: no usable CBLAS at GPUKIT_BLAS_LIBRARY="),
              "%s", message);
        CHECK(mentions(message, "/nonexistent/"), "%s", message);
        CHECK(mentions(message, "apt install libopenblas0"), "%s", message);
    }

    gk_array *u = NULL, *s = NULL, *vt = NULL, *q = NULL, *r = NULL;
    gk_status status = gk_svd(a, false, &u, &s, &vt);
    CHECK(status == GK_ERR_NOT_FOUND, "svd gave %d", (int)status);
    CHECK(!u && !s && !vt, "svd left a result");
    const char *message = gk_last_error();
    CHECK(mentions(message, "svd: no usable LAPACKE at GPUKIT_LAPACKE_LIBRARY="), "%s", message);
    CHECK(mentions(message, "apt install liblapacke"), "%s", message);
    status = gk_qr(a, false, &q, &r);
    CHECK(status == GK_ERR_NOT_FOUND && mentions(gk_last_error(), "qr: no usable LAPACKE"),
          "qr gave %d: %s", (int)status, gk_last_error());
    status = gk_solve(a, a, &out);
    CHECK(status == GK_ERR_NOT_FOUND && mentions(gk_last_error(), "solve: no usable LAPACKE"),
          "solve gave %d: %s", (int)status, gk_last_error());
    status = gk_inv(a, &out);
    CHECK(status == GK_ERR_NOT_FOUND && mentions(gk_last_error(), "inv: no usable LAPACKE"),
          "inv gave %d: %s", (int)status, gk_last_error());
    status = gk_eigh(a, &out, NULL);
    CHECK(status == GK_ERR_NOT_FOUND && mentions(gk_last_error(), "eigvalsh: no usable LAPACKE"),
          "eigvalsh gave %d: %s", (int)status, gk_last_error());
    CHECK(out == NULL, "eigvalsh left a result");

    for (int single = 0; single < 2; single++) {
        gk_array *signal = NULL;
        CHECK(gk_ones(cpu, single ? GK_COMPLEX64 : GK_FLOAT64, 2, shape, &signal) == GK_OK,
              "%s", gk_last_error());
        for (int attempt = 0; attempt < 2; attempt++) {
            status = gk_fft(signal, GK_FFT_FORWARD, -1, NULL, NULL, GK_FFT_NORM_BACKWARD, &out);
            message = gk_last_error();
            CHECK(status == GK_ERR_NOT_FOUND && out == NULL, "fft gave %d", (int)status);
            CHECK(mentions(message, single ? "fft: no usable FFTW (single precision) at "
                                             "GPUKIT_FFTWF_LIBRARY="
                                           : "fft: no usable FFTW (double precision) at "
                                             "GPUKIT_FFTW_LIBRARY="),
                  "%s", message);
            CHECK(mentions(message, single ? "apt install libfftw3-single3"
                                           : "apt install libfftw3-double3"),
                  "%s", message);
        }
        gk_array_free(signal);
    }

    /* What needs no library still works: arithmetic, an empty product, and
     * the FFT's frequencies and shifts. */
    CHECK(gk_fftfreq(cpu, GK_FLOAT64, 4, 1.0, false, &out) == GK_OK, "%s", gk_last_error());
    gk_array_free(out);
    status = gk_binary(GK_ADD, a, a, &out);
    CHECK(status == GK_OK, "add: %s", gk_last_error());
    double sum[4] = {0, 0, 0, 0};
    if (status == GK_OK) {
        CHECK(gk_to_host(out, sum, sizeof sum) == GK_OK, "%s", gk_last_error());
        CHECK(sum[0] == 2.0 && sum[3] == 2.0, "a + a = %g ... %g", sum[0], sum[3]);
        gk_array_free(out);
    }
    const int64_t empty_shape[2] = {0, 2};
    gk_array *empty = NULL, *product = NULL;
    CHECK(gk_ones(cpu, GK_FLOAT64, 2, empty_shape, &empty) == GK_OK, "%s", gk_last_error());
    CHECK(gk_matmul(empty, a, &product) == GK_OK, "empty matmul: %s", gk_last_error());
    gk_array_free(product);
    gk_array_free(empty);
    gk_array_free(a);
    CHECK_DONE();
}
