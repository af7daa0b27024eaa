/* Placeholder while this family is being written. */
#include "compute/backends/cpu/cpu.h"

#include "core/error.h"

gk_status cpu_cumsum(gk_device device, const gk_loop *outer, const gk_operand *out,
                     const gk_operand *in, int64_t count, int64_t in_stride,
                     int64_t out_stride)
{
    (void)device, (void)outer, (void)out, (void)in, (void)count, (void)in_stride, (void)out_stride;
    return gk_fail(GK_ERR_INVALID_ARGUMENT, "not written yet");
}

gk_status cpu_sort(gk_device device, const gk_operand *values, const gk_operand *indices,
                   const gk_operand *in, int64_t rows, int64_t length)
{
    (void)device, (void)values, (void)indices, (void)in, (void)rows, (void)length;
    return gk_fail(GK_ERR_INVALID_ARGUMENT, "not written yet");
}
