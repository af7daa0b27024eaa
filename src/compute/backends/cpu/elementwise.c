/* Placeholder while this family is being written. */
#include "compute/backends/cpu/cpu.h"

#include "core/error.h"

gk_status cpu_elementwise(gk_device device, gk_op op, const gk_loop *loop, const gk_operand *out,
                          const gk_operand *in)
{
    (void)device, (void)op, (void)loop, (void)out, (void)in;
    return gk_fail(GK_ERR_INVALID_ARGUMENT, "not written yet");
}

gk_status cpu_where(gk_device device, const gk_loop *loop, const gk_operand *out,
                    const gk_operand *condition, const gk_operand *a, const gk_operand *b)
{
    (void)device, (void)loop, (void)out, (void)condition, (void)a, (void)b;
    return gk_fail(GK_ERR_INVALID_ARGUMENT, "not written yet");
}
