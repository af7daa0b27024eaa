/* Matrix products on a GPU: the vendor BLAS (cuBLAS: sgemm, dgemm, cgemm,
 * zgemm, and GemmEx for float16 and bfloat16) through the driver when it
 * loads, else the tiled kernel of kernels/matmul.gk, which needs no
 * library and runs on any CUDA or OpenCL device (16-bit floats: the core
 * then multiplies float32 copies). Both read operands stored transposed
 * (x.T of a C-order matrix) in place, so x.T @ x copies nothing. */
#include "compute/gpu/gpu.h"

#include "core/error.h"

/* The kernel's c tile is 4 S x 4 S for a group of S x S work-items. */
enum { MAX_SIDE = 16, MIN_SIDE = 8, BLOCK = 4, MAX_GROUPS = 65535 };

static size_t capped(int64_t groups)
{
    return (size_t)(groups < MAX_GROUPS ? groups : MAX_GROUPS);
}

gk_status gpu_matmul(gk_device device, gk_dtype dtype, int64_t batch, int64_t m, int64_t n,
                     int64_t k, const char *a, int64_t a_batch_stride, const char *b,
                     int64_t b_batch_stride, char *c, unsigned transposed)
{
    const gk_gpu_driver *driver = gk_gpu_driver_of(device);
    if (gk_dtype_is_half(dtype)) {
        /* Only a vendor's mixed-precision GEMM (cuBLAS's GemmEx); without
         * one, GK_ERR_NOT_FOUND: the core multiplies float32 copies. */
        if (!driver->blas_matmul)
            return gk_fail(GK_ERR_NOT_FOUND, "matmul: no mixed-precision GEMM on %s",
                           driver->name);
        return driver->blas_matmul(device, dtype, batch, m, n, k, a, a_batch_stride, b,
                                   b_batch_stride, c, transposed);
    }
    if (dtype != GK_FLOAT32 && dtype != GK_FLOAT64 && !gk_dtype_is_complex(dtype))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "matmul on a GPU: %s is not a floating dtype (use float32, float64, "
                       "complex64 or complex128)",
                       gk_dtype_name(dtype));
    if (batch <= 0 || m <= 0 || n <= 0)
        return GK_OK;

    if (driver->blas_matmul) {
        gk_status status = driver->blas_matmul(device, dtype, batch, m, n, k, a, a_batch_stride,
                                               b, b_batch_stride, c, transposed);
        /* GK_ERR_NOT_FOUND: the library is not installed; anything else
         * is a real failure. */
        if (status != GK_ERR_NOT_FOUND)
            return status;
    }

    /* The kernel's groups are square: 16 x 16, or 8 x 8 where groups are
     * smaller (every device has at least 64). */
    int64_t side = gk_gpu_group_size(device) >= MAX_SIDE * MAX_SIDE ? MAX_SIDE : MIN_SIDE;
    int64_t tile = side * BLOCK;
    size_t groups[3] = {capped((n + tile - 1) / tile), capped((m + tile - 1) / tile),
                        capped(batch)};
    size_t local[3] = {(size_t)side, (size_t)side, 1};
    gk_gpu_launch launch;
    gk_gpu_launch_begin(&launch, device);
    gk_gpu_arg_array(&launch, a, dtype);
    gk_gpu_arg_array(&launch, b, dtype);
    gk_gpu_arg_array(&launch, c, dtype);
    gk_gpu_arg_i64(&launch, batch);
    gk_gpu_arg_i64(&launch, m);
    gk_gpu_arg_i64(&launch, n);
    gk_gpu_arg_i64(&launch, k);
    gk_gpu_arg_i64(&launch, a_batch_stride);
    gk_gpu_arg_i64(&launch, b_batch_stride);
    gk_gpu_arg_i64(&launch, (transposed & GK_MATMUL_A_TRANSPOSED) != 0);
    gk_gpu_arg_i64(&launch, (transposed & GK_MATMUL_B_TRANSPOSED) != 0);
    return gk_gpu_run_groups(&launch, "matmul", dtype, "matmul_tiled", groups, local);
}
