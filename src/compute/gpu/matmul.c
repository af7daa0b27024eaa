/* Placeholder: being written. */
#include "compute/gpu/gpu.h"

#include "core/error.h"

gk_status gpu_matmul(gk_device device, gk_dtype dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const char *a, int64_t a_batch_stride, const char *b, int64_t b_batch_stride, char *c)
{ (void)dtype, (void)batch, (void)m, (void)n, (void)k, (void)a, (void)a_batch_stride, (void)b, (void)b_batch_stride, (void)c; (void)device; return gk_fail(GK_ERR_NOT_FOUND, "not built yet"); }
