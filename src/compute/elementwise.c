/* Elementwise ops: validation, type promotion, broadcasting, conversion of
 * the inputs to one compute dtype, then one backend call.
 *
 * Type promotion (NumPy 2's, which is the array API standard's where the
 * standard has a rule; array.h states it):
 * - Arrays promote by gk_promote_types, whatever their ndim: a 0-d array is
 *   an array like any other (float32 array * 0-d float64 is float64).
 * - A plain value (gk_binary_value: a Python bool, int or float) is "weak":
 *   it takes the array's dtype when its kind fits in the array's kind
 *   (bool < integer < floating): int8 array + 3 is int8, float32 array *
 *   2.5 is float32; a value of a higher kind gives that kind's default
 *   dtype: bool array + 3 is int64, int32 array + 2.5 is float64.
 * - An integer value outside the range of the integer dtype the op computes
 *   in is an error (uint8 array + 300, int32 array < 3e9), as in NumPy 2,
 *   rather than a wrapped value giving a wrong comparison, minimum or power.
 * - div is true division: integer and bool operands compute in float64.
 * - Comparisons compute in the promoted dtype and give bool.
 * - bool operands: add is or, mul is and, minimum/maximum are and/or (all
 *   bool, as NumPy); sub and pow of two bools are errors.
 * - Unary: neg, abs and relu keep the dtype (neg of bool is an error; abs
 *   and relu of bool and unsigned integers are copies, neg of an unsigned
 *   integer wraps); the math functions (exp, log, sqrt, the trigonometric
 *   and hyperbolic functions and their inverses, log1p, expm1, sigmoid) of
 *   integers and bools compute in gk_float_for's dtype (float32 up to 16
 *   bits, float64 above).
 * - clip(a, low, high) = minimum(maximum(a, low), high) with low and high
 *   plain values (weak, as above): for low > high every element is high
 *   (NumPy's result); a NaN bound gives NaN. For an integer result, bounds
 *   beyond its dtype's range are first clamped to it (clip(uint8, -3, 300)
 *   changes nothing).
 * - where(condition, a, b): condition bool; the result has the promoted
 *   dtype of a and b.
 * - Every op's rule is one row of `rules` below: the kinds of dtype it
 *   accepts (of the promoted dtype for a binary op; others fail naming the
 *   dtype, and gk_op_accepts answers beforehand), and whether it keeps the
 *   dtype, computes integers in float (the math functions, atan2, hypot,
 *   copysign, logaddexp, nextafter) or gives bool (comparisons, logical_*,
 *   signbit, isnan, isinf, isfinite; computed in the operands' dtype).
 *   array.h states the semantics of the ops added for the array API
 *   standard. positive, conj, real and the rounding of integers are copies
 *   and imag a fill of zeros, so no backend has a loop for them; gk_unary
 *   gives real as a view of its operand and imag as one zero broadcast.
 *
 * Inputs whose dtype differs from the compute dtype are converted into a
 * temporary first, so a backend sees one input dtype. An *_into output may
 * be an input (in place): an input that is the output element for element
 * is read before each element is written; one that overlaps it any other
 * way (a shifted slice, a broadcast row of it) is copied first, as NumPy
 * does. Outputs that are broadcast views (stride 0 along an axis longer
 * than 1) are refused: their elements would be written more than once. */
#include "compute/array_impl.h"

#include "core/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[GK_OP_COUNT] = {
    [GK_ADD] = "add",     [GK_SUB] = "sub",       [GK_MUL] = "mul",
    [GK_DIV] = "div",     [GK_POW] = "pow",       [GK_MINIMUM] = "minimum",
    [GK_MAXIMUM] = "maximum", [GK_EQ] = "eq",     [GK_NE] = "ne",
    [GK_LT] = "lt",       [GK_LE] = "le",         [GK_GT] = "gt",
    [GK_GE] = "ge",       [GK_NEG] = "neg",       [GK_ABS] = "abs",
    [GK_EXP] = "exp",     [GK_LOG] = "log",       [GK_SQRT] = "sqrt",
    [GK_SIN] = "sin",     [GK_COS] = "cos",       [GK_TANH] = "tanh",
    [GK_TAN] = "tan",     [GK_ASIN] = "asin",     [GK_ACOS] = "acos",
    [GK_ATAN] = "atan",   [GK_SINH] = "sinh",     [GK_COSH] = "cosh",
    [GK_ASINH] = "asinh", [GK_ACOSH] = "acosh",   [GK_ATANH] = "atanh",
    [GK_LOG1P] = "log1p", [GK_EXPM1] = "expm1",
    [GK_SIGMOID] = "sigmoid", [GK_RELU] = "relu",
    [GK_ATAN2] = "atan2", [GK_COPYSIGN] = "copysign", [GK_HYPOT] = "hypot",
    [GK_LOGADDEXP] = "logaddexp", [GK_NEXTAFTER] = "nextafter",
    [GK_FLOOR_DIVIDE] = "floor_divide", [GK_REMAINDER] = "remainder",
    [GK_BITWISE_AND] = "bitwise_and", [GK_BITWISE_OR] = "bitwise_or",
    [GK_BITWISE_XOR] = "bitwise_xor", [GK_BITWISE_LEFT_SHIFT] = "bitwise_left_shift",
    [GK_BITWISE_RIGHT_SHIFT] = "bitwise_right_shift", [GK_LOGICAL_AND] = "logical_and",
    [GK_LOGICAL_OR] = "logical_or", [GK_LOGICAL_XOR] = "logical_xor",
    [GK_CEIL] = "ceil",   [GK_FLOOR] = "floor",   [GK_TRUNC] = "trunc",
    [GK_ROUND] = "round", [GK_SIGN] = "sign",     [GK_SIGNBIT] = "signbit",
    [GK_ISNAN] = "isnan", [GK_ISINF] = "isinf",   [GK_ISFINITE] = "isfinite",
    [GK_LOG2] = "log2",   [GK_LOG10] = "log10",   [GK_SQUARE] = "square",
    [GK_POSITIVE] = "positive", [GK_RECIPROCAL] = "reciprocal",
    [GK_BITWISE_INVERT] = "bitwise_invert", [GK_LOGICAL_NOT] = "logical_not",
    [GK_CONJ] = "conj",   [GK_REAL] = "real",     [GK_IMAG] = "imag",
};

/* --- what each op accepts and gives --- */

/* The kinds of dtype an op accepts (for a binary op: of the promoted one). */
enum { K_BOOL = 1, K_INT = 2, K_FLOAT = 4, K_COMPLEX = 8 };
/* K_ANY: every real dtype; ops defined for complex add K_COMPLEX (the
 * array API standard's complex functions; the ordering ones, rounding to
 * integers, atan2 and the like take real numbers only). */
#define K_ANY (K_BOOL | K_INT | K_FLOAT)
#define K_ALL (K_ANY | K_COMPLEX)
#define K_NUMBER (K_INT | K_FLOAT)
#define K_NUMBER_C (K_NUMBER | K_COMPLEX)
#define K_INTEGRAL (K_BOOL | K_INT)

/* The dtype an op computes in, from its operands' (promoted) dtype: SAME
 * keeps it; MATH takes gk_float_for's float for integers and bools; TRUE_DIV
 * float64 for them. TO_BOOL computes in the operands' dtype and gives bool. */
enum { SAME, MATH, TRUE_DIV, TO_BOOL };

typedef struct op_rule {
    unsigned char arity; /* 1 or 2 (0, a value without a row: no op) */
    unsigned char kinds;
    unsigned char result;
} op_rule;

static const op_rule rules[GK_OP_COUNT] = {
    [GK_ADD] = {2, K_ALL, SAME},          [GK_SUB] = {2, K_NUMBER_C, SAME},
    [GK_MUL] = {2, K_ALL, SAME},          [GK_DIV] = {2, K_ALL, TRUE_DIV},
    [GK_POW] = {2, K_NUMBER_C, SAME},     [GK_MINIMUM] = {2, K_ANY, SAME},
    [GK_MAXIMUM] = {2, K_ANY, SAME},      [GK_EQ] = {2, K_ALL, TO_BOOL},
    [GK_NE] = {2, K_ALL, TO_BOOL},        [GK_LT] = {2, K_ANY, TO_BOOL},
    [GK_LE] = {2, K_ANY, TO_BOOL},        [GK_GT] = {2, K_ANY, TO_BOOL},
    [GK_GE] = {2, K_ANY, TO_BOOL},        [GK_NEG] = {1, K_NUMBER_C, SAME},
    [GK_ABS] = {1, K_ALL, SAME},          [GK_EXP] = {1, K_ALL, MATH},
    [GK_LOG] = {1, K_ALL, MATH},          [GK_SQRT] = {1, K_ALL, MATH},
    [GK_SIN] = {1, K_ALL, MATH},          [GK_COS] = {1, K_ALL, MATH},
    [GK_TANH] = {1, K_ALL, MATH},         [GK_TAN] = {1, K_ALL, MATH},
    [GK_ASIN] = {1, K_ALL, MATH},         [GK_ACOS] = {1, K_ALL, MATH},
    [GK_ATAN] = {1, K_ALL, MATH},         [GK_SINH] = {1, K_ALL, MATH},
    [GK_COSH] = {1, K_ALL, MATH},         [GK_ASINH] = {1, K_ALL, MATH},
    [GK_ACOSH] = {1, K_ALL, MATH},        [GK_ATANH] = {1, K_ALL, MATH},
    [GK_LOG1P] = {1, K_ALL, MATH},        [GK_EXPM1] = {1, K_ALL, MATH},
    [GK_SIGMOID] = {1, K_ANY, MATH},      [GK_RELU] = {1, K_ANY, SAME},
    [GK_ATAN2] = {2, K_ANY, MATH},        [GK_COPYSIGN] = {2, K_ANY, MATH},
    [GK_HYPOT] = {2, K_ANY, MATH},        [GK_LOGADDEXP] = {2, K_ANY, MATH},
    [GK_NEXTAFTER] = {2, K_ANY, MATH},    [GK_FLOOR_DIVIDE] = {2, K_NUMBER, SAME},
    [GK_REMAINDER] = {2, K_NUMBER, SAME}, [GK_BITWISE_AND] = {2, K_INTEGRAL, SAME},
    [GK_BITWISE_OR] = {2, K_INTEGRAL, SAME}, [GK_BITWISE_XOR] = {2, K_INTEGRAL, SAME},
    [GK_BITWISE_LEFT_SHIFT] = {2, K_INT, SAME}, [GK_BITWISE_RIGHT_SHIFT] = {2, K_INT, SAME},
    [GK_LOGICAL_AND] = {2, K_ANY, TO_BOOL}, [GK_LOGICAL_OR] = {2, K_ANY, TO_BOOL},
    [GK_LOGICAL_XOR] = {2, K_ANY, TO_BOOL}, [GK_CEIL] = {1, K_ANY, SAME},
    [GK_FLOOR] = {1, K_ANY, SAME},        [GK_TRUNC] = {1, K_ANY, SAME},
    [GK_ROUND] = {1, K_ALL, SAME},        [GK_SIGN] = {1, K_NUMBER_C, SAME},
    [GK_SIGNBIT] = {1, K_ANY, TO_BOOL},   [GK_ISNAN] = {1, K_ALL, TO_BOOL},
    [GK_ISINF] = {1, K_ALL, TO_BOOL},     [GK_ISFINITE] = {1, K_ALL, TO_BOOL},
    [GK_LOG2] = {1, K_ALL, MATH},         [GK_LOG10] = {1, K_ALL, MATH},
    [GK_SQUARE] = {1, K_NUMBER_C, SAME},  [GK_POSITIVE] = {1, K_NUMBER_C, SAME},
    [GK_RECIPROCAL] = {1, K_NUMBER_C, SAME}, [GK_BITWISE_INVERT] = {1, K_INTEGRAL, SAME},
    [GK_LOGICAL_NOT] = {1, K_ANY, TO_BOOL}, [GK_CONJ] = {1, K_ALL, SAME},
    [GK_REAL] = {1, K_ALL, SAME},         [GK_IMAG] = {1, K_ALL, SAME},
};

static bool valid_op(gk_op op)
{
    return (unsigned)op < GK_OP_COUNT;
}

const char *gk_op_name(gk_op op)
{
    return valid_op(op) ? op_names[op] : "invalid op";
}

bool gk_op_is_binary(gk_op op)
{
    return valid_op(op) && rules[op].arity == 2;
}

static bool is_unary(gk_op op)
{
    return valid_op(op) && rules[op].arity == 1;
}

bool gk_op_gives_bool(gk_op op)
{
    return valid_op(op) && rules[op].result == TO_BOOL;
}

static bool valid_dtype(gk_dtype dtype)
{
    return (unsigned)dtype < GK_DTYPE_COUNT;
}

static int kind_of_dtype(gk_dtype dtype)
{
    return dtype == GK_BOOL              ? K_BOOL
           : gk_dtype_is_float(dtype)   ? K_FLOAT
           : gk_dtype_is_complex(dtype) ? K_COMPLEX
                                        : K_INT;
}

bool gk_op_accepts(gk_op op, gk_dtype dtype)
{
    return valid_op(op) && valid_dtype(dtype) && (rules[op].kinds & kind_of_dtype(dtype)) != 0;
}

/* The dtype op computes in for operands of (promoted) `dtype`. */
static gk_dtype compute_dtype(gk_op op, gk_dtype dtype)
{
    if (gk_dtype_is_inexact(dtype))
        return dtype;
    return rules[op].result == MATH       ? gk_float_for(dtype)
           : rules[op].result == TRUE_DIV ? GK_FLOAT64
                                          : dtype;
}

static gk_dtype result_dtype(gk_op op, gk_dtype compute)
{
    /* abs, real and imag of a complex number are real: its component. */
    if (op == GK_ABS || op == GK_REAL || op == GK_IMAG)
        return gk_dtype_component(compute);
    return rules[op].result == TO_BOOL ? GK_BOOL : compute;
}

/* What to do instead, for a dtype op refuses. */
static const char *refusal_hint(gk_op op, gk_dtype dtype)
{
    if (gk_dtype_is_complex(dtype))
        return "it takes real numbers (the array API standard leaves it undefined for complex "
               "ones); apply it to real(x) and imag(x), or abs(x)";
    if (dtype == GK_BOOL)
        return op == GK_SUB   ? "use logical_xor (or ne) for xor, or cast to an integer dtype"
               : op == GK_NEG ? "use logical_not for not, or cast to an integer dtype"
                              : "cast to an integer dtype first";
    if (op == GK_BITWISE_LEFT_SHIFT || op == GK_BITWISE_RIGHT_SHIFT)
        return "shifts take integer dtypes";
    return "it takes integer and bool dtypes";
}

/* --- type promotion --- */

static int kind_rank(gk_dtype dtype)
{
    return dtype == GK_BOOL                ? GK_VALUE_BOOL
           : gk_dtype_is_float(dtype)   ? GK_VALUE_FLOAT
           : gk_dtype_is_complex(dtype) ? GK_VALUE_COMPLEX
                                        : GK_VALUE_INT;
}

gk_dtype gk_value_dtype(gk_dtype dtype, gk_value_kind kind)
{
    if ((int)kind <= kind_rank(dtype))
        return dtype;
    if (kind == GK_VALUE_COMPLEX)
        /* NumPy 2: a float array keeps its precision (float32 + 1j is
         * complex64, float16's too); integers and bools give complex128. */
        return dtype == GK_FLOAT64 ? GK_COMPLEX128
               : gk_dtype_is_float(dtype) ? GK_COMPLEX64
                                          : GK_COMPLEX128;
    return kind == GK_VALUE_FLOAT ? GK_FLOAT64 : GK_INT64;
}

gk_dtype gk_op_value_dtype(gk_op op, gk_dtype dtype, gk_value_kind kind)
{
    gk_dtype weak = gk_value_dtype(dtype, kind);
    if (!valid_op(op) || kind > GK_VALUE_INT || gk_dtype_is_inexact(dtype))
        return weak;
    if (op == GK_LOGICAL_AND || op == GK_LOGICAL_OR || op == GK_LOGICAL_XOR)
        return GK_BOOL;
    return compute_dtype(op, weak);
}

bool gk_comparison_beyond_range(gk_op op, bool below, bool value_first)
{
    /* x OP v with v above every x: x < v, x <= v and x != v hold; below
     * every x, x > v, x >= v and x != v. v OP x is x OP' v, OP' the
     * mirror of OP. */
    if (value_first)
        op = op == GK_LT ? GK_GT : op == GK_GT ? GK_LT : op == GK_LE ? GK_GE
           : op == GK_GE ? GK_LE : op;
    return op == GK_NE || (below ? op == GK_GT || op == GK_GE : op == GK_LT || op == GK_LE);
}

/* The kind a double counts as in the C calls that take plain doubles. */
static gk_value_kind kind_of(double value)
{
    bool integral = value == trunc(value) && fabs(value) < 9.2e18; /* NaN, inf: floating */
    return integral ? GK_VALUE_INT : GK_VALUE_FLOAT;
}

/* --- messages --- */

/* "float32 (2, 3)" */
static const char *describe(const gk_array *a, char *buf, size_t size)
{
    char shape[160];
    snprintf(buf, size, "%s %s", gk_dtype_name(a->dtype),
             gk_shape_text(a->ndim, a->shape, shape, sizeof shape));
    return buf;
}

/* --- preparing operands --- */

/* An input ready for the backend: `a` itself, or a temporary holding it
 * converted to `dtype` (when its dtype differs, or when it conflicts with
 * the output `out`, which may be NULL for a fresh one). */
typedef struct input {
    gk_array *temp;
    gk_operand operand;
} input;

static gk_status prepare(const gk_array *a, gk_dtype dtype, const gk_array *out,
                         const gk_loop *loop, input *in)
{
    in->temp = NULL;
    in->operand = gk_broadcast_operand(a, loop->ndim, loop->shape);
    if (a->dtype == dtype && out) {
        gk_operand target = gk_array_operand(out);
        if (!gk_operands_conflict(&in->operand, &target, loop))
            return GK_OK;
    } else if (a->dtype == dtype) {
        return GK_OK;
    }
    gk_status status = gk_copy_as(a, dtype, &in->temp);
    if (status != GK_OK)
        return status;
    in->operand = gk_broadcast_operand(in->temp, loop->ndim, loop->shape);
    return GK_OK;
}

/* Checks an *_into output: shape, dtype, device, and not a broadcast view. */
static gk_status check_into(const gk_array *out, int ndim, const int64_t *shape, gk_dtype dtype,
                            gk_device device, const char *what)
{
    if (!out)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the output array is NULL", what);
    gk_status status = gk_check_out(out, ndim, shape, dtype, device, what);
    if (status != GK_OK)
        return status;
    return gk_check_writable(out, what);
}

/* out = op(a, b) over out's shape, computing in `compute`; a and b are
 * broadcast to it. Nothing to do for an empty out. */
static gk_status run_binary(gk_op op, const gk_array *a, const gk_array *b, gk_dtype compute,
                            gk_array *out, bool fresh)
{
    if (gk_array_size(out) == 0)
        return GK_OK;
    gk_loop loop = gk_array_loop(out);
    input in[2] = {{NULL, {0}}, {NULL, {0}}};
    gk_status status = prepare(a, compute, fresh ? NULL : out, &loop, &in[0]);
    if (status == GK_OK)
        status = prepare(b, compute, fresh ? NULL : out, &loop, &in[1]);
    if (status == GK_OK) {
        gk_operand all[3] = {gk_array_operand(out), in[0].operand, in[1].operand};
        gk_loop_in_output_order(&loop, all, 3);
        status = gk_array_backend(out)->elementwise(gk_array_device(out), op, &loop, &all[0],
                                                    &all[1]);
    }
    gk_array_free(in[0].temp);
    gk_array_free(in[1].temp);
    return status;
}

/* --- binary ops --- */

/* The compute and result dtypes of op on operands a and b that promote to
 * `promoted`, or an error naming them. */
static gk_status binary_types(gk_op op, gk_dtype promoted, const gk_array *a,
                              const gk_array *b, gk_dtype *compute, gk_dtype *result)
{
    if (!gk_op_accepts(op, promoted)) {
        char da[200], db[200];
        return gk_fail(GK_ERR_UNSUPPORTED_DTYPE, "%s: not defined for %s operands (%s and %s); %s",
                       gk_op_name(op), gk_dtype_name(promoted), describe(a, da, sizeof da),
                       describe(b, db, sizeof db), refusal_hint(op, promoted));
    }
    *compute = compute_dtype(op, promoted);
    *result = result_dtype(op, *compute);
    return GK_OK;
}

static gk_status check_binary_op(gk_op op, const char *what)
{
    if (gk_op_is_binary(op))
        return GK_OK;
    if (is_unary(op))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: %s is a unary op; use gk_unary()", what,
                       gk_op_name(op));
    return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: %d is not an op", what, (int)op);
}

/* Validation shared by gk_binary and gk_binary_into: the broadcast shape,
 * compute and result dtypes. */
static gk_status binary_plan(gk_op op, const gk_array *a, const gk_array *b, const char *what,
                             int *ndim, int64_t *shape, gk_dtype *compute, gk_dtype *result)
{
    gk_status status = check_binary_op(op, what);
    if (status != GK_OK)
        return status;
    if (!a || !b)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s (%s): an operand is NULL", what,
                       gk_op_name(op));
    const gk_array *both[2] = {a, b};
    status = gk_same_device(2, both, gk_op_name(op));
    if (status != GK_OK)
        return status;
    status = gk_broadcast_shapes(2, both, ndim, shape);
    if (status != GK_OK)
        return gk_fail(status, "%s: %s", gk_op_name(op), gk_last_error());
    return binary_types(op, gk_promote_types(a->dtype, b->dtype), a, b, compute, result);
}

gk_status gk_binary(gk_op op, const gk_array *a, const gk_array *b, gk_array **out)
{
    *out = NULL;
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    gk_dtype compute = GK_FLOAT32, result = GK_FLOAT32; /* set by the rules below */
    gk_status status = binary_plan(op, a, b, "binary", &ndim, shape, &compute, &result);
    if (status != GK_OK)
        return status;
    const gk_array *both[2] = {a, b};
    status = gk_empty_like_operands(gk_array_device(a), result, ndim, shape, 2, both, out);
    if (status != GK_OK)
        return status;
    status = run_binary(op, a, b, compute, *out, true);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

gk_status gk_binary_into(gk_op op, const gk_array *a, const gk_array *b, gk_array *out)
{
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    gk_dtype compute = GK_FLOAT32, result = GK_FLOAT32; /* set by the rules below */
    gk_status status = binary_plan(op, a, b, "binary_into", &ndim, shape, &compute, &result);
    if (status != GK_OK)
        return status;
    status = check_into(out, ndim, shape, result, gk_array_device(a), gk_op_name(op));
    if (status != GK_OK)
        return status;
    return run_binary(op, a, b, compute, out, false);
}

void gk_integer_range(gk_dtype dtype, double *low, double *high)
{
    switch (dtype) {
    case GK_BOOL: *low = 0, *high = 1; break;
    case GK_INT8: *low = INT8_MIN, *high = INT8_MAX; break;
    case GK_INT16: *low = INT16_MIN, *high = INT16_MAX; break;
    case GK_INT32: *low = INT32_MIN, *high = INT32_MAX; break;
    case GK_UINT8: *low = 0, *high = UINT8_MAX; break;
    case GK_UINT16: *low = 0, *high = UINT16_MAX; break;
    case GK_UINT32: *low = 0, *high = UINT32_MAX; break;
    case GK_UINT64: *low = 0, *high = 18446744073709549568.0; break;
    default: *low = -0x1p63, *high = 9223372036854774784.0; break;
    }
}

/* `value` as a 0-d array of `dtype` on `device`. Promotion makes dtype
 * floating whenever the value is (value_promotion), and callers have
 * checked that an integer value fits an integer dtype. */
static gk_status value_array(gk_device device, gk_dtype dtype, double value, gk_array **out)
{
    unsigned char bytes[GK_DTYPE_MAX_SIZE];
    gk_dtype_store(dtype, value, bytes);
    return gk_from_host(device, dtype, 0, NULL, bytes, out);
}

/* The checks both gk_binary_value calls start with. */
static gk_status check_value_call(gk_op op, const gk_array *a)
{
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "binary_value (%s): the array is NULL",
                       gk_op_name(op));
    return check_binary_op(op, "binary_value");
}

/* op of a and the 0-d array of `dtype` holding `bytes`, in that order or
 * (value_first) the other. */
static gk_status with_value(gk_op op, const gk_array *a, gk_dtype dtype, const void *bytes,
                            bool value_first, gk_array **out)
{
    gk_array *scalar;
    gk_status status = gk_from_host(gk_array_device(a), dtype, 0, NULL, bytes, &scalar);
    if (status != GK_OK)
        return status;
    status = value_first ? gk_binary(op, scalar, a, out) : gk_binary(op, a, scalar, out);
    gk_array_free(scalar);
    return status;
}

/* a ** 2 as a * a and a ** -1 as 1 / a, for a real floating a: each is
 * one correctly rounded operation, where pow's vector libraries are 1 ULP
 * (and less near the subnormals: SLEEF's float32 pow gave 1.3315e-41 for
 * (-3.649e-21) ** 2, not 1.3317e-41), and several times faster. NumPy's
 * square and reciprocal, which x ** 2 and x ** -1 call, give the same. The
 * special values agree with pow's (the standard's): (+-0) ** -1 is +-inf,
 * (+-inf) ** -1 is +-0, NaN stays NaN. An integer a ** 2 is a * a too,
 * which wraps as the power does (twice as fast as the power's loop). */
static gk_status power_by_product(const gk_array *a, double exponent, gk_array **out)
{
    if (exponent == 2)
        return gk_binary(GK_MUL, a, a, out);
    return gk_binary_value(GK_DIV, a, 1, GK_VALUE_FLOAT, true, out);
}

gk_status gk_binary_value_complex(gk_op op, const gk_array *a, double re, double im,
                                  bool value_first, gk_array **out)
{
    *out = NULL;
    gk_status status = check_value_call(op, a);
    if (status != GK_OK)
        return status;
    gk_dtype dtype = gk_value_dtype(a->dtype, GK_VALUE_COMPLEX);
    unsigned char bytes[GK_DTYPE_MAX_SIZE];
    gk_dtype_store_complex(dtype, re, im, bytes);
    return with_value(op, a, dtype, bytes, value_first, out);
}

gk_status gk_binary_value(gk_op op, const gk_array *a, double value, gk_value_kind kind,
                          bool value_first, gk_array **out)
{
    *out = NULL;
    gk_status status = check_value_call(op, a);
    if (status != GK_OK)
        return status;
    if (kind == GK_VALUE_COMPLEX)
        return gk_binary_value_complex(op, a, value, 0, value_first, out);
    if ((unsigned)kind > GK_VALUE_FLOAT)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "binary_value (%s): %d is not a value kind",
                       gk_op_name(op), (int)kind);
    if (kind != GK_VALUE_FLOAT && value != trunc(value))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "binary_value (%s): %.17g is not a whole number, but its kind says %s",
                       gk_op_name(op), value, kind == GK_VALUE_BOOL ? "bool" : "integer");
    /* The value is stored in the promoted dtype directly (no conversion
     * pass for one element), so the two arrays promote to that dtype. */
    gk_dtype dtype = gk_op_value_dtype(op, a->dtype, kind);
    if (!gk_dtype_is_inexact(dtype) && dtype != GK_BOOL) {
        /* Wrapping the value would give wrong comparisons, minimum/maximum
         * and powers: NumPy 2 refuses too, except for comparisons, which
         * it answers by value. */
        double low, high;
        gk_integer_range(dtype, &low, &high);
        bool comparison = rules[op].result == TO_BOOL && op < GK_LOGICAL_AND;
        if ((value < low || value > high) && comparison)
            return gk_full(gk_array_device(a), GK_BOOL, a->ndim, a->shape,
                           gk_comparison_beyond_range(op, value < low, value_first), out);
        if (value < low || value > high) {
            char da[200];
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "%s: the value %.17g does not fit %s, the dtype of %s with %s; "
                           "cast the array to a wider dtype first",
                           gk_op_name(op), value, gk_dtype_name(dtype), gk_op_name(op),
                           describe(a, da, sizeof da));
        }
    }
    bool real = gk_dtype_is_float(dtype) || gk_dtype_is_integer(dtype);
    if (op == GK_POW && !value_first && dtype == a->dtype &&
        ((value == 2 && real) || (value == -1 && gk_dtype_is_float(dtype))))
        return power_by_product(a, value, out);
    unsigned char bytes[GK_DTYPE_MAX_SIZE];
    gk_dtype_store(dtype, value, bytes);
    return with_value(op, a, dtype, bytes, value_first, out);
}

gk_status gk_binary_scalar(gk_op op, const gk_array *a, double value, gk_array **out)
{
    return gk_binary_value(op, a, value, kind_of(value), false, out);
}

/* --- unary ops --- */

static gk_status unary_plan(gk_op op, const gk_array *a, const char *what, gk_dtype *compute,
                            gk_dtype *result)
{
    if (!is_unary(op)) {
        if (gk_op_is_binary(op))
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: %s is a binary op; use gk_binary()",
                           what, gk_op_name(op));
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: %d is not an op", what, (int)op);
    }
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s (%s): the operand is NULL", what,
                       gk_op_name(op));
    if (!gk_op_accepts(op, a->dtype)) {
        char da[200];
        return gk_fail(GK_ERR_UNSUPPORTED_DTYPE, "%s: not defined for %s (%s); %s",
                       gk_op_name(op), gk_dtype_name(a->dtype), describe(a, da, sizeof da),
                       refusal_hint(op, a->dtype));
    }
    *compute = compute_dtype(op, a->dtype);
    *result = result_dtype(op, *compute);
    return GK_OK;
}

/* Ops that are a plain copy for `dtype`, which need no loop of their own:
 * positive, conj and real, and rounding integers and bools. */
static bool is_copy(gk_op op, gk_dtype dtype)
{
    if (op == GK_POSITIVE || ((op == GK_CONJ || op == GK_REAL) && !gk_dtype_is_complex(dtype)))
        return true;
    bool rounding = op == GK_CEIL || op == GK_FLOOR || op == GK_TRUNC || op == GK_ROUND;
    return rounding && !gk_dtype_is_inexact(dtype);
}

/* The real (imag false) or imaginary part of a complex array as a view of
 * its component dtype: the same memory, strides doubled (they count
 * components now), the imaginary part one component further. Writable
 * as a is, like NumPy's x.real and x.imag. */
static gk_status complex_part(const gk_array *a, bool imag, gk_array **out)
{
    gk_status status = gk_array_view(a, out);
    if (status != GK_OK)
        return status;
    gk_array *part = *out;
    part->dtype = gk_dtype_component(a->dtype);
    for (int i = 0; i < part->ndim; i++)
        part->strides[i] *= 2;
    if (imag)
        part->offset += gk_dtype_size(part->dtype);
    return GK_OK;
}

/* The loop and its two operands (output first) in the output's memory
 * order: gk_loop_in_output_order for a unary op's pair. */
static void pair_in_output_order(gk_loop *loop, gk_operand *target, gk_operand *source)
{
    gk_operand pair[2] = {*target, *source};
    gk_loop_in_output_order(loop, pair, 2);
    *target = pair[0];
    *source = pair[1];
}

/* out = op(a), computing in `compute` (out's dtype, or out is bool). */
static gk_status run_unary(gk_op op, const gk_array *a, gk_dtype compute, gk_array *out,
                           bool fresh)
{
    if (gk_array_size(out) == 0)
        return GK_OK;
    gk_loop loop = gk_array_loop(out);
    gk_operand target = gk_array_operand(out);
    gk_operand source = gk_array_operand(a);
    gk_device device = gk_array_device(out);
    const gk_backend *backend = gk_array_backend(out);
    gk_status status;
    if ((op == GK_REAL || op == GK_IMAG) && gk_dtype_is_complex(a->dtype)) {
        gk_array *part = NULL;
        status = complex_part(a, op == GK_IMAG, &part);
        if (status == GK_OK) {
            input in;
            status = prepare(part, out->dtype, fresh ? NULL : out, &loop, &in);
            if (status == GK_OK) {
                pair_in_output_order(&loop, &target, &in.operand);
                status = backend->convert(device, &loop, &target, &in.operand);
            }
            gk_array_free(in.temp);
        }
        gk_array_free(part);
        return status;
    }
    if (op == GK_IMAG) { /* of a real dtype: zeros */
        unsigned char zero[GK_DTYPE_MAX_SIZE] = {0};
        return backend->fill(device, &loop, &target, zero);
    }
    bool copy = is_copy(op, compute);
    if (!copy && a->dtype != compute && out->dtype == compute &&
        (fresh || !gk_operands_conflict(&source, &target, &loop))) {
        /* Convert straight into the output, then work in place there. */
        pair_in_output_order(&loop, &target, &source);
        status = backend->convert(device, &loop, &target, &source);
        if (status == GK_OK)
            status = backend->elementwise(device, op, &loop, &target, &target);
        return status;
    }
    input in;
    status = prepare(a, compute, fresh ? NULL : out, &loop, &in);
    if (status == GK_OK) {
        pair_in_output_order(&loop, &target, &in.operand);
        status = copy ? backend->convert(device, &loop, &target, &in.operand)
                      : backend->elementwise(device, op, &loop, &target, &in.operand);
    }
    gk_array_free(in.temp);
    return status;
}

gk_status gk_round_decimals(const gk_array *a, int decimals, gk_array **out)
{
    *out = NULL;
    if (decimals == 0 || (decimals > 0 && !gk_dtype_is_inexact(a ? a->dtype : GK_FLOAT32)))
        return gk_unary(GK_ROUND, a, out);
    double scale = pow(10, fabs((double)decimals)); /* |INT_MIN| as an int overflows */
    gk_array *scaled = NULL, *rounded = NULL, *back = NULL;
    gk_status status = gk_binary_scalar(decimals > 0 ? GK_MUL : GK_DIV, a, scale, &scaled);
    if (status == GK_OK)
        status = gk_unary(GK_ROUND, scaled, &rounded);
    if (status == GK_OK)
        status = gk_binary_scalar(decimals > 0 ? GK_DIV : GK_MUL, rounded, scale, &back);
    /* integers computed in float64 (the division's) return to their dtype */
    if (status == GK_OK && gk_array_dtype(back) != a->dtype)
        status = gk_cast(back, a->dtype, out);
    else if (status == GK_OK)
        *out = back, back = NULL;
    gk_array_free(scaled);
    gk_array_free(rounded);
    gk_array_free(back);
    return status;
}

gk_status gk_unary(gk_op op, const gk_array *a, gk_array **out)
{
    *out = NULL;
    gk_dtype compute = GK_FLOAT32, result = GK_FLOAT32; /* set by the rules below */
    gk_status status = unary_plan(op, a, "unary", &compute, &result);
    if (status != GK_OK)
        return status;
    /* The real and imaginary parts of a real array cost nothing, as in
     * NumPy: a itself (a view) and one zero broadcast to a's shape (like
     * NumPy's read-only zeros, which are never filled either). */
    if (gk_dtype_is_complex(a->dtype) && (op == GK_REAL || op == GK_IMAG))
        return complex_part(a, op == GK_IMAG, out);
    if (op == GK_REAL)
        return gk_array_view(a, out);
    if (op == GK_IMAG) {
        gk_array *zero = NULL;
        status = gk_scalar(gk_array_device(a), a->dtype, 0, &zero);
        if (status == GK_OK)
            status = gk_broadcast_to(zero, a->ndim, a->shape, out);
        gk_array_free(zero);
        return status;
    }
    status = gk_empty_like_operands(gk_array_device(a), result, a->ndim, a->shape, 1, &a, out);
    if (status != GK_OK)
        return status;
    status = run_unary(op, a, compute, *out, true);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

gk_status gk_unary_into(gk_op op, const gk_array *a, gk_array *out)
{
    gk_dtype compute = GK_FLOAT32, result = GK_FLOAT32; /* set by the rules below */
    gk_status status = unary_plan(op, a, "unary_into", &compute, &result);
    if (status != GK_OK)
        return status;
    status = check_into(out, a->ndim, a->shape, result, gk_array_device(a), gk_op_name(op));
    if (status != GK_OK)
        return status;
    return run_unary(op, a, compute, out, false);
}

/* --- where, clip, cast --- */

gk_status gk_where(const gk_array *condition, const gk_array *a, const gk_array *b,
                   gk_array **out)
{
    *out = NULL;
    if (!condition || !a || !b)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "where: an operand is NULL");
    const gk_array *all[3] = {condition, a, b};
    gk_status status = gk_same_device(3, all, "where");
    if (status != GK_OK)
        return status;
    char dc[200], da[200], db[200];
    if (condition->dtype != GK_BOOL) /* a dtype the op does not take: TypeError in Python */
        return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                       "where: the condition is %s; it must be bool (compare, or gk_cast it)",
                       describe(condition, dc, sizeof dc));
    int ndim;
    int64_t shape[GK_MAX_DIMS];
    status = gk_broadcast_shapes(3, all, &ndim, shape);
    if (status != GK_OK)
        return gk_fail(status, "where: condition %s, a %s, b %s: %s",
                       describe(condition, dc, sizeof dc), describe(a, da, sizeof da),
                       describe(b, db, sizeof db), gk_last_error());
    gk_dtype result = gk_promote_types(a->dtype, b->dtype);
    status = gk_empty_like_operands(gk_array_device(a), result, ndim, shape, 3, all, out);
    if (status != GK_OK || gk_array_size(*out) == 0)
        return status;
    gk_loop loop = gk_array_loop(*out);
    input in[2] = {{NULL, {0}}, {NULL, {0}}};
    status = prepare(a, result, NULL, &loop, &in[0]);
    if (status == GK_OK)
        status = prepare(b, result, NULL, &loop, &in[1]);
    if (status == GK_OK) {
        gk_operand four[4] = {gk_array_operand(*out),
                              gk_broadcast_operand(condition, ndim, shape), in[0].operand,
                              in[1].operand};
        gk_loop_in_output_order(&loop, four, 4);
        status = gk_array_backend(a)->where(gk_array_device(a), &loop, &four[0], &four[1],
                                            &four[2], &four[3]);
    }
    gk_array_free(in[0].temp);
    gk_array_free(in[1].temp);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

gk_status gk_clip(const gk_array *a, double low, double high, gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "clip: the array is NULL");
    if (gk_dtype_is_complex(a->dtype))
        return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                       "clip: not defined for %s (complex numbers have no order); clip "
                       "real(x) and imag(x) instead",
                       gk_dtype_name(a->dtype));
    gk_value_kind kind = kind_of(low) > kind_of(high) ? kind_of(low) : kind_of(high);
    gk_dtype dtype = gk_value_dtype(a->dtype, kind);
    gk_status status =
        gk_empty_like_operands(gk_array_device(a), dtype, a->ndim, a->shape, 1, &a, out);
    if (status != GK_OK || gk_array_size(*out) == 0)
        return status;
    if (!gk_dtype_is_float(dtype)) {
        /* Bounds beyond an integer dtype clip nothing more at its ends. */
        double min, max;
        gk_integer_range(dtype, &min, &max);
        low = low < min ? min : low > max ? max : low;
        high = high < min ? min : high > max ? max : high;
    }
    gk_array *low_array = NULL, *high_array = NULL;
    status = value_array(gk_array_device(a), dtype, low, &low_array);
    if (status == GK_OK)
        status = value_array(gk_array_device(a), dtype, high, &high_array);
    if (status == GK_OK)
        status = run_binary(GK_MAXIMUM, a, low_array, dtype, *out, true);
    if (status == GK_OK)
        status = run_binary(GK_MINIMUM, *out, high_array, dtype, *out, false);
    gk_array_free(low_array);
    gk_array_free(high_array);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

gk_status gk_cast(const gk_array *a, gk_dtype dtype, gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "cast: the array is NULL");
    if (!valid_dtype(dtype))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "cast: %d is not a dtype (casting %s)",
                       (int)dtype, gk_dtype_name(a->dtype));
    return gk_copy_keeping_order(a, dtype, out);
}
