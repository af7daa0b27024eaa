/* Placeholder: being written. */
#include "compute/gpu/gpu.h"

#include "core/error.h"

gk_status gpu_convert(gk_device device, const gk_loop *loop, const gk_operand *out, const gk_operand *in)
{ (void)loop, (void)out, (void)in; (void)device; return gk_fail(GK_ERR_NOT_FOUND, "not built yet"); }
gk_status gpu_fill(gk_device device, const gk_loop *loop, const gk_operand *out, const void *value)
{ (void)loop, (void)out, (void)value; (void)device; return gk_fail(GK_ERR_NOT_FOUND, "not built yet"); }
gk_status gpu_sequence(gk_device device, const gk_operand *out, int64_t count, double start, double step)
{ (void)out, (void)count, (void)start, (void)step; (void)device; return gk_fail(GK_ERR_NOT_FOUND, "not built yet"); }
gk_status gpu_elementwise(gk_device device, gk_op op, const gk_loop *loop, const gk_operand *out, const gk_operand *in)
{ (void)op, (void)loop, (void)out, (void)in; (void)device; return gk_fail(GK_ERR_NOT_FOUND, "not built yet"); }
gk_status gpu_where(gk_device device, const gk_loop *loop, const gk_operand *out, const gk_operand *condition, const gk_operand *a, const gk_operand *b)
{ (void)loop, (void)out, (void)condition, (void)a, (void)b; (void)device; return gk_fail(GK_ERR_NOT_FOUND, "not built yet"); }
