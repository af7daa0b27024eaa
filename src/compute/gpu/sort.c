/* Placeholder: being written. */
#include "compute/gpu/gpu.h"

#include "core/error.h"

gk_status gpu_sort(gk_device device, const gk_operand *values, const gk_operand *indices, const gk_operand *in, int64_t rows, int64_t length)
{ (void)values, (void)indices, (void)in, (void)rows, (void)length; (void)device; return gk_fail(GK_ERR_NOT_FOUND, "not built yet"); }
