/* Placeholder while this family is being written. */
#include "compute/backends/cpu/cpu.h"

#include "core/error.h"

gk_status cpu_reduce(gk_device device, gk_reduction op, const gk_loop *outer,
                     const gk_operand *out, const gk_operand *in, int64_t count, int64_t stride,
                     int64_t ddof)
{
    (void)device, (void)op, (void)outer, (void)out, (void)in, (void)count, (void)stride, (void)ddof;
    return gk_fail(GK_ERR_INVALID_ARGUMENT, "not written yet");
}
