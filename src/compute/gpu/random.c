/* Placeholder: being written. */
#include "compute/gpu/gpu.h"

#include "core/error.h"

gk_status gpu_random(gk_device device, const gk_operand *out, int64_t count, uint64_t seed, bool normal, double a, double b)
{ (void)out, (void)count, (void)seed, (void)normal, (void)a, (void)b; (void)device; return gk_fail(GK_ERR_NOT_FOUND, "not built yet"); }
