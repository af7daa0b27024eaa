/* Elementwise work on GPUs: conversion, fill, sequences, arithmetic, math,
 * comparisons and where. Each call picks one kernel of the "elementwise"
 * family (kernels/elementwise.gk, whose header lists the kernels and the
 * semantics they share with the CPU backend) and runs it over the loop in
 * 1-D; the shared launch code merges contiguous axes first.
 *
 * Programs are per dtype: the input's for arithmetic and comparisons, the
 * output's for conversions (one kernel per source dtype), the values' for
 * fill and where. float16 and bfloat16 (stored as 16-bit patterns,
 * computed in float: kernels/types.h) and complex64 and complex128 (structs
 * of two parts, computed by kernels/complex.h) have programs of their own
 * like every dtype, so nothing here treats them apart but the table of ops
 * each has. */
#include "compute/gpu/gpu.h"

#include "core/error.h"

#include <stdio.h>

static const char *const family = "elementwise";

/* The dtypes each op has a kernel for, as in the CPU backend's table: the
 * core converts integers to a floating dtype for division and math, rejects
 * the dtypes an op is not defined for (sub, pow and neg of bools, bitwise
 * ops of floats...), and copies or fills where an op needs no kernel
 * (positive, conj, real, imag, rounding integers). */
#define D(t) (1u << (t))
#define COMPLEX (D(GK_COMPLEX64) | D(GK_COMPLEX128))
#define REAL ((D(GK_DTYPE_COUNT) - 1) & ~COMPLEX)
#define NUMERIC (REAL & ~D(GK_BOOL))
/* float16 and bfloat16 have every float kernel, computed in float. */
#define FLOATING (D(GK_FLOAT32) | D(GK_FLOAT64) | D(GK_FLOAT16) | D(GK_BFLOAT16))
#define INTEGERS (NUMERIC & ~FLOATING)
#define INTEGRAL (REAL & ~FLOATING)
/* The ops complex numbers have (cpu/complex.c's table). */
#define INEXACT (FLOATING | COMPLEX)

static const unsigned op_dtypes[GK_OP_COUNT] = {
    [GK_ADD] = REAL | COMPLEX, [GK_SUB] = NUMERIC | COMPLEX, [GK_MUL] = REAL | COMPLEX,
    [GK_DIV] = INEXACT,      [GK_POW] = NUMERIC | COMPLEX, [GK_MINIMUM] = REAL,
    [GK_MAXIMUM] = REAL,     [GK_EQ] = REAL | COMPLEX, [GK_NE] = REAL | COMPLEX,
    [GK_LT] = REAL,          [GK_LE] = REAL,       [GK_GT] = REAL,       [GK_GE] = REAL,
    [GK_NEG] = NUMERIC | COMPLEX, [GK_CONJ] = COMPLEX, [GK_ABS] = REAL | COMPLEX,
    [GK_EXP] = INEXACT,      [GK_LOG] = INEXACT,   [GK_SQRT] = INEXACT,  [GK_SIN] = INEXACT,
    [GK_COS] = INEXACT,      [GK_TANH] = INEXACT,  [GK_TAN] = INEXACT,   [GK_ASIN] = INEXACT,
    [GK_ACOS] = INEXACT,     [GK_ATAN] = INEXACT,  [GK_SINH] = INEXACT,  [GK_COSH] = INEXACT,
    [GK_ASINH] = INEXACT,    [GK_ACOSH] = INEXACT, [GK_ATANH] = INEXACT, [GK_LOG1P] = INEXACT,
    [GK_EXPM1] = INEXACT,    [GK_SIGMOID] = FLOATING, [GK_RELU] = REAL,
    [GK_ATAN2] = FLOATING,   [GK_COPYSIGN] = FLOATING, [GK_HYPOT] = FLOATING,
    [GK_LOGADDEXP] = FLOATING, [GK_NEXTAFTER] = FLOATING, [GK_FLOOR_DIVIDE] = NUMERIC,
    [GK_REMAINDER] = NUMERIC, [GK_BITWISE_AND] = INTEGRAL, [GK_BITWISE_OR] = INTEGRAL,
    [GK_BITWISE_XOR] = INTEGRAL, [GK_BITWISE_LEFT_SHIFT] = INTEGERS,
    [GK_BITWISE_RIGHT_SHIFT] = INTEGERS, [GK_LOGICAL_AND] = REAL, [GK_LOGICAL_OR] = REAL,
    [GK_LOGICAL_XOR] = REAL, [GK_CEIL] = FLOATING, [GK_FLOOR] = FLOATING,
    [GK_TRUNC] = FLOATING,   [GK_ROUND] = INEXACT, [GK_SIGN] = NUMERIC | COMPLEX,
    [GK_SIGNBIT] = REAL,     [GK_ISNAN] = REAL | COMPLEX, [GK_ISINF] = REAL | COMPLEX,
    [GK_ISFINITE] = REAL | COMPLEX, [GK_LOG2] = INEXACT, [GK_LOG10] = INEXACT,
    [GK_SQUARE] = NUMERIC | COMPLEX, [GK_RECIPROCAL] = NUMERIC | COMPLEX,
    [GK_BITWISE_INVERT] = INTEGRAL, [GK_LOGICAL_NOT] = REAL,
};

static bool valid_dtype(gk_dtype dtype)
{
    return (unsigned)dtype < GK_DTYPE_COUNT;
}

/* The number of elements of a loop (ndim 0: one). */
static int64_t loop_size(const gk_loop *loop)
{
    int64_t size = 1;
    for (int i = 0; i < loop->ndim; i++)
        size *= loop->shape[i];
    return size;
}

/* float64 and complex128 kernels exist only where the device has double
 * precision. The shared code refuses such a program there; this also
 * covers float64 inputs and outputs of other dtypes' programs
 * (conversions). */
static gk_status check_fp64(gk_device device, gk_dtype a, gk_dtype b, const char *what)
{
    gk_dtype wide = gk_gpu_needs_fp64(a) ? a : b;
    if (!gk_gpu_needs_fp64(wide))
        return GK_OK;
    const gk_gpu_info *info;
    gk_status status = gk_gpu_info_of(device, &info);
    if (status != GK_OK)
        return status;
    if (info->fp64)
        return GK_OK;
    char name[GK_DEVICE_NAME_MAX];
    return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                   "%s: %s does not support %s (no double precision): use %s arrays there, "
                   "or another device",
                   what, gk_device_name(device, name, sizeof name), gk_dtype_name(wide),
                   gk_dtype_is_complex(wide) ? "complex64" : "float32");
}

/* Whether the operand's elements are contiguous in the loop's C order. */
static bool dense_over(const gk_loop *loop, const gk_operand *operand)
{
    int64_t step = 1;
    for (int i = loop->ndim - 1; i >= 0; i--) {
        if (loop->shape[i] != 1 && operand->strides[i] != step)
            return false;
        step *= loop->shape[i];
    }
    return true;
}

gk_status gpu_convert(gk_device device, const gk_loop *loop, const gk_operand *out,
                      const gk_operand *in)
{
    if (!valid_dtype(in->dtype) || !valid_dtype(out->dtype))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "convert: %s to %s", gk_dtype_name(in->dtype),
                       gk_dtype_name(out->dtype));
    /* A plain copy between two dense blocks (copy, asarray(copy=True), a
     * concatenation's pieces along the first axis) is the driver's own
     * device-to-device copy: cuMemcpyDtoDAsync reaches the copy engines'
     * bandwidth, about 1.4 times our kernel's on an H100. */
    if (in->dtype == out->dtype && dense_over(loop, out) && dense_over(loop, in))
        return in->data == out->data ? GK_OK
                                     : gk_gpu_driver_of(device)->copy(device, out->data, in->data,
                                              (size_t)loop_size(loop) * gk_dtype_size(in->dtype));
    gk_status status = check_fp64(device, in->dtype, out->dtype, "convert");
    if (status != GK_OK)
        return status;
    char kernel[32];
    snprintf(kernel, sizeof kernel, "convert_from_%s", gk_dtype_name(in->dtype));
    gk_gpu_launch launch;
    gk_gpu_launch_begin(&launch, device);
    gk_operand operands[2] = {*out, *in};
    gk_gpu_arg_loop(&launch, loop, operands, 2);
    return gk_gpu_run_items(&launch, family, out->dtype, kernel, loop_size(loop));
}

gk_status gpu_fill(gk_device device, const gk_loop *loop, const gk_operand *out,
                   const void *value)
{
    if (!valid_dtype(out->dtype))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "fill: %s", gk_dtype_name(out->dtype));
    gk_status status = check_fp64(device, out->dtype, out->dtype, "fill");
    if (status != GK_OK)
        return status;
    /* The kernel takes the value first (as GK_T), then the loop. */
    gk_gpu_launch launch;
    gk_gpu_launch_begin(&launch, device);
    gk_gpu_arg_value(&launch, value, gk_dtype_size(out->dtype));
    gk_gpu_arg_loop(&launch, loop, out, 1);
    return gk_gpu_run_items(&launch, family, out->dtype, "fill", loop_size(loop));
}

gk_status gpu_sequence(gk_device device, const gk_operand *out, int64_t count, double start,
                       double step)
{
    if (!valid_dtype(out->dtype))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "sequence: %s", gk_dtype_name(out->dtype));
    if (count <= 0)
        return GK_OK;
    const gk_gpu_info *info;
    gk_status status = gk_gpu_info_of(device, &info);
    if (status != GK_OK)
        return status;
    status = check_fp64(device, out->dtype, out->dtype, "sequence");
    if (status != GK_OK)
        return status;
    gk_gpu_launch launch;
    gk_gpu_launch_begin(&launch, device);
    gk_gpu_arg_array(&launch, out->data, out->dtype);
    /* The kernel computes in double where the device has it (like the
     * CPU), else in float, and its start and step parameters have that
     * type. */
    if (info->fp64) {
        gk_gpu_arg_value(&launch, &start, sizeof start);
        gk_gpu_arg_value(&launch, &step, sizeof step);
    } else {
        float start32 = (float)start, step32 = (float)step;
        gk_gpu_arg_value(&launch, &start32, sizeof start32);
        gk_gpu_arg_value(&launch, &step32, sizeof step32);
    }
    gk_gpu_arg_i64(&launch, count);
    return gk_gpu_run_items(&launch, family, out->dtype, "sequence", count);
}

gk_status gpu_elementwise(gk_device device, gk_op op, const gk_loop *loop, const gk_operand *out,
                          const gk_operand *in)
{
    gk_dtype dtype = in[0].dtype;
    bool known = (unsigned)op < GK_OP_COUNT && valid_dtype(dtype) &&
                 (op_dtypes[op] & D(dtype)) != 0;
    bool binary = known && gk_op_is_binary(op);
    gk_dtype want = gk_op_gives_bool(op)                          ? GK_BOOL
                    : op == GK_ABS && gk_dtype_is_complex(dtype) ? gk_dtype_component(dtype)
                                                                  : dtype;
    if (!known || out->dtype != want || (binary && in[1].dtype != dtype))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "gpu: no elementwise kernel for %s on %s%s%s into %s",
                       gk_op_name(op), gk_dtype_name(dtype), binary ? " and " : "",
                       binary ? gk_dtype_name(in[1].dtype) : "", gk_dtype_name(out->dtype));
    gk_status status = check_fp64(device, dtype, dtype, gk_op_name(op));
    if (status != GK_OK)
        return status;
    /* Kernel names carry a prefix: CUDA already declares C functions named
     * exp, pow, div, abs... */
    char kernel[48];
    snprintf(kernel, sizeof kernel, "op_%s", gk_op_name(op));
    gk_gpu_launch launch;
    gk_gpu_launch_begin(&launch, device);
    gk_operand operands[3] = {*out, in[0], binary ? in[1] : in[0]};
    gk_gpu_arg_loop(&launch, loop, operands, binary ? 3 : 2);
    return gk_gpu_run_items(&launch, family, dtype, kernel, loop_size(loop));
}

gk_status gpu_where(gk_device device, const gk_loop *loop, const gk_operand *out,
                    const gk_operand *condition, const gk_operand *a, const gk_operand *b)
{
    if (condition->dtype != GK_BOOL || a->dtype != out->dtype || b->dtype != out->dtype ||
        !valid_dtype(out->dtype))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "gpu: where needs a bool condition and one dtype for a, b and out "
                       "(here %s, %s, %s into %s)",
                       gk_dtype_name(condition->dtype), gk_dtype_name(a->dtype),
                       gk_dtype_name(b->dtype), gk_dtype_name(out->dtype));
    gk_status status = check_fp64(device, out->dtype, out->dtype, "where");
    if (status != GK_OK)
        return status;
    gk_gpu_launch launch;
    gk_gpu_launch_begin(&launch, device);
    gk_operand operands[4] = {*out, *condition, *a, *b};
    gk_gpu_arg_loop(&launch, loop, operands, 4);
    return gk_gpu_run_items(&launch, family, out->dtype, "where", loop_size(loop));
}
