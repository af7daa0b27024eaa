/* Placeholder while this family is being written. */
#include "compute/backends/cpu/cpu.h"

#include "core/error.h"

gk_status cpu_random(gk_device device, const gk_operand *out, int64_t count, uint64_t seed,
                     bool normal, double a, double b)
{
    (void)device, (void)out, (void)count, (void)seed, (void)normal, (void)a, (void)b;
    return gk_fail(GK_ERR_INVALID_ARGUMENT, "not written yet");
}
