/* Placeholder: being written. */
#include "compute/gpu/gpu.h"

#include "core/error.h"

gk_status gpu_reduce(gk_device device, gk_reduction op, const gk_loop *outer, const gk_operand *out, const gk_operand *in, int64_t count, int64_t stride, int64_t ddof)
{ (void)op, (void)outer, (void)out, (void)in, (void)count, (void)stride, (void)ddof; (void)device; return gk_fail(GK_ERR_NOT_FOUND, "not built yet"); }
gk_status gpu_cumsum(gk_device device, const gk_loop *outer, const gk_operand *out, const gk_operand *in, int64_t count, int64_t in_stride, int64_t out_stride)
{ (void)outer, (void)out, (void)in, (void)count, (void)in_stride, (void)out_stride; (void)device; return gk_fail(GK_ERR_NOT_FOUND, "not built yet"); }
