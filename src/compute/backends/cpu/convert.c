/* Copying with conversion between dtypes, filling, and sequences. */
#include "compute/backends/cpu/cpu.h"
#include "compute/backends/cpu/parallel.h"
#include "compute/half.h"

#include <math.h>
#include <string.h>

/* C's conversions, except to bool (any non-zero is true) and from floating
 * types to integers, where NaN and out-of-range values would be undefined
 * behaviour: those saturate (NaN gives 0), as PyTorch's CPU results do. */
#define TO_BOOL(x) ((uint8_t)((x) != 0))

/* 64-bit targets: clamped in double, then converted (every lane then
 * converts a value in range, so the loop can run in vectors). */
#define CLAMP_TO(T, low, high, x)                                                         \
    ((T)((x) != (x)                 ? 0.0                                                 \
         : (x) <= (double)(low)     ? (double)(low)                                       \
         : (x) >= (double)(high)    ? (double)(high)                                      \
                                    : (double)(x)))

/* Targets of 32 bits and fewer, in the source's own precision: every
 * value from EDGE (2^bits or 2^(bits-1), exact in float) is HIGH, NaN is 0,
 * and the rest is clamped from below and converted. The same values as
 * CLAMP_TO's, in lanes of the source's width: float32 to int32 had been
 * 0.1x NumPy's speed. */
#define SATURATE(FROM, T, LOW, EDGE, HIGH, x)                                             \
    ((x) >= (FROM)(EDGE) ? (T)(HIGH)                                                      \
     : (x) != (x)        ? (T)0                                                           \
                         : (T)((x) > (FROM)(LOW) ? (x) : (FROM)(LOW)))

#define CONVERT_LOOP(NAME, FROM, TO, EXPR)                                              \
    CPU_KERNEL_AVX512 static void NAME(int64_t n, char *const *data, const int64_t *s,  \
                                       const void *context)                             \
    {                                                                                   \
        (void)context;                                                                  \
        TO *out = (TO *)data[0];                                                        \
        const FROM *in = (const FROM *)data[1];                                         \
        if (s[0] == 1 && s[1] == 1) {                                                   \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++)                         \
            {                                                                           \
                FROM x = in[i];                                                         \
                out[i] = (EXPR);                                                        \
            }                                                                           \
        } else if (s[0] == 1 && s[1] == 0) { /* one value broadcast: full() */          \
            FROM x = in[0];                                                             \
            const TO value = (EXPR);                                                    \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) out[i] = value;         \
        } else {                                                                        \
            for (int64_t i = 0; i < n; i++) {                                           \
                FROM x = in[i * s[1]];                                                  \
                out[i * s[0]] = (EXPR);                                                 \
            }                                                                           \
        }                                                                               \
    }

/* Every target of one source: NAME##_<target>. Integer and bool sources
 * convert with C's rules (wrapping; to bool: != 0). */
#define FROM_INTEGER(NAME, FROM)                                                   \
    CONVERT_LOOP(NAME##_bool, FROM, uint8_t, TO_BOOL(x))                           \
    CONVERT_LOOP(NAME##_int8, FROM, int8_t, (int8_t)x)                             \
    CONVERT_LOOP(NAME##_int16, FROM, int16_t, (int16_t)x)                          \
    CONVERT_LOOP(NAME##_int32, FROM, int32_t, (int32_t)x)                          \
    CONVERT_LOOP(NAME##_int64, FROM, int64_t, (int64_t)x)                          \
    CONVERT_LOOP(NAME##_uint8, FROM, uint8_t, (uint8_t)x)                          \
    CONVERT_LOOP(NAME##_uint16, FROM, uint16_t, (uint16_t)x)                       \
    CONVERT_LOOP(NAME##_uint32, FROM, uint32_t, (uint32_t)x)                       \
    CONVERT_LOOP(NAME##_uint64, FROM, uint64_t, (uint64_t)x)                       \
    CONVERT_LOOP(NAME##_float32, FROM, float, (float)x)                            \
    CONVERT_LOOP(NAME##_float64, FROM, double, (double)x)

/* The saturation bounds of the 64-bit targets are the largest doubles
 * below 2^63 and 2^64 (2^63 - 1024 and 2^64 - 2048): the maximum values
 * themselves are not doubles, and converting 2^63 or 2^64 would be
 * undefined. */
#define INT64_TOP 9.2233720368547748e18
#define UINT64_TOP 18446744073709549568.0

#define FROM_FLOAT(NAME, FROM)                                                           \
    CONVERT_LOOP(NAME##_bool, FROM, uint8_t, TO_BOOL(x))                                 \
    CONVERT_LOOP(NAME##_int8, FROM, int8_t, SATURATE(FROM, int8_t, -0x1p7, 0x1p7, INT8_MAX, x)) \
    CONVERT_LOOP(NAME##_int16, FROM, int16_t,                                            \
                 SATURATE(FROM, int16_t, -0x1p15, 0x1p15, INT16_MAX, x))                 \
    CONVERT_LOOP(NAME##_int32, FROM, int32_t,                                            \
                 SATURATE(FROM, int32_t, -0x1p31, 0x1p31, INT32_MAX, x))                 \
    CONVERT_LOOP(NAME##_int64, FROM, int64_t,                                            \
                 CLAMP_TO(int64_t, -9.2233720368547758e18, INT64_TOP, (double)x))        \
    CONVERT_LOOP(NAME##_uint8, FROM, uint8_t, SATURATE(FROM, uint8_t, 0, 0x1p8, UINT8_MAX, x)) \
    CONVERT_LOOP(NAME##_uint16, FROM, uint16_t,                                          \
                 SATURATE(FROM, uint16_t, 0, 0x1p16, UINT16_MAX, x))                     \
    CONVERT_LOOP(NAME##_uint32, FROM, uint32_t,                                          \
                 SATURATE(FROM, uint32_t, 0, 0x1p32, UINT32_MAX, x))                     \
    CONVERT_LOOP(NAME##_uint64, FROM, uint64_t, CLAMP_TO(uint64_t, 0, UINT64_TOP, (double)x)) \
    CONVERT_LOOP(NAME##_float32, FROM, float, (float)x)                                  \
    CONVERT_LOOP(NAME##_float64, FROM, double, (double)x)

FROM_INTEGER(from_bool, uint8_t)
FROM_INTEGER(from_int8, int8_t)
FROM_INTEGER(from_int16, int16_t)
FROM_INTEGER(from_int32, int32_t)
FROM_INTEGER(from_int64, int64_t)
FROM_INTEGER(from_uint8, uint8_t)
FROM_INTEGER(from_uint16, uint16_t)
FROM_INTEGER(from_uint32, uint32_t)
FROM_INTEGER(from_uint64, uint64_t)
FROM_FLOAT(from_float32, float)
FROM_FLOAT(from_float64, double)

#define ROW(NAME)                                                                        \
    {                                                                                    \
        [GK_BOOL] = NAME##_bool, [GK_INT8] = NAME##_int8, [GK_INT16] = NAME##_int16,     \
        [GK_INT32] = NAME##_int32, [GK_INT64] = NAME##_int64, [GK_UINT8] = NAME##_uint8, \
        [GK_UINT16] = NAME##_uint16, [GK_UINT32] = NAME##_uint32,                        \
        [GK_UINT64] = NAME##_uint64, [GK_FLOAT32] = NAME##_float32,                      \
        [GK_FLOAT64] = NAME##_float64,                                                   \
    }

/* [from][to] */
static const cpu_inner_loop convert_loops[GK_DTYPE_COUNT][GK_DTYPE_COUNT] = {
    [GK_BOOL] = ROW(from_bool),       [GK_INT8] = ROW(from_int8),
    [GK_INT16] = ROW(from_int16),     [GK_INT32] = ROW(from_int32),
    [GK_INT64] = ROW(from_int64),     [GK_UINT8] = ROW(from_uint8),
    [GK_UINT16] = ROW(from_uint16),   [GK_UINT32] = ROW(from_uint32),
    [GK_UINT64] = ROW(from_uint64),   [GK_FLOAT32] = ROW(from_float32),
    [GK_FLOAT64] = ROW(from_float64),
};

/* A same-dtype copy moves bytes: one loop per element size. */
#define COPY_LOOP(NAME, T) CONVERT_LOOP(NAME, T, T, x)
COPY_LOOP(copy_1, uint8_t)
COPY_LOOP(copy_2, uint16_t)
COPY_LOOP(copy_4, uint32_t)
COPY_LOOP(copy_8, uint64_t)
COPY_LOOP(copy_16, cpu_bytes16)

/* --- float16 and bfloat16, through a block of float or double --- */

enum { HALF_BLOCK = 512 };

typedef struct half_conversion {
    gk_dtype from, to;
} half_conversion;

/* From a 16-bit float: exact as float, then float's conversion to the
 * target (its rounding, saturation and bool rules); float32 itself
 * directly. To one: float32 by half.c's vector rounding, every other
 * source exact as double first (integers up to 2^53, float64 itself), then
 * to float rounded to odd (floats_rounded_to_odd) and by the same vector
 * rounding from there: one correct rounding in all, where rounding to
 * nearest twice would be wrong just off a tie (and a scalar rounding
 * straight from double was three times slower than NumPy's). */

/* Doubles as floats rounded to odd: toward zero, with the last bit set
 * when any bit was dropped. Rounding such a float to nearest in a format
 * of at most 22 bits gives the double's own correctly rounded value
 * (round-to-odd keeps what a second rounding needs: Boldo and Melquiond,
 * "When double rounding is odd"); float16 has 11, bfloat16 8, and both lie
 * inside float's exponent range. NaN keeps its sign and top payload. */
static void floats_rounded_to_odd(const double *in, float *out, int64_t n)
{
    _Pragma("omp simd") for (int64_t i = 0; i < n; i++) {
        double d = in[i];
        float f = (float)d;
        double back = (double)f;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        uint32_t inexact = back != d && d == d;
        uint32_t away = fabs(back) > fabs(d); /* rounded away from zero */
        bits = (bits - (inexact & away)) | inexact;
        memcpy(&out[i], &bits, sizeof bits);
    }
}
static void convert_half(int64_t n, char *const *data, const int64_t *s, const void *context)
{
    const half_conversion *c = context;
    for (int64_t done = 0; done < n; done += HALF_BLOCK) {
        int64_t count = n - done < HALF_BLOCK ? n - done : HALF_BLOCK;
        char *out = data[0] + done * s[0] * (int64_t)gk_dtype_size(c->to);
        const char *in = data[1] + done * s[1] * (int64_t)gk_dtype_size(c->from);
        if (gk_dtype_is_half(c->from)) {
            float values[HALF_BLOCK];
            cpu_half_to_float(c->from, (const uint16_t *)in, s[1], values, count);
            if (gk_dtype_is_half(c->to)) {
                cpu_half_from_float(c->to, values, (uint16_t *)out, s[0], count);
            } else {
                char *pointers[2] = {out, (char *)values};
                convert_loops[GK_FLOAT32][c->to](count, pointers, (int64_t[]){s[0], 1}, NULL);
            }
        } else if (c->from == GK_FLOAT32 && s[1] == 1) {
            cpu_half_from_float(c->to, (const float *)in, (uint16_t *)out, s[0], count);
        } else {
            double values[HALF_BLOCK];
            float odd[HALF_BLOCK];
            char *pointers[2] = {(char *)values, (char *)in};
            convert_loops[c->from][GK_FLOAT64](count, pointers, (int64_t[]){1, s[1]}, NULL);
            floats_rounded_to_odd(values, odd, count);
            cpu_half_from_float(c->to, odd, (uint16_t *)out, s[0], count);
        }
    }
}

/* n elements of real dtype `from` (stride sin) into `to` (stride sout),
 * by the loops above: half dtypes through convert_half, the same dtype
 * copied. */
static void convert_real(gk_dtype from, gk_dtype to, int64_t n, char *out, int64_t sout,
                         const char *in, int64_t sin)
{
    char *pointers[2] = {out, (char *)in};
    const int64_t strides[2] = {sout, sin};
    half_conversion conversion = {from, to};
    if (from == to)
        cpu_loop_by_size(gk_dtype_size(to), copy_1, copy_2, copy_4, copy_8, copy_16)(
            n, pointers, strides, NULL);
    else if (gk_dtype_is_half(from) || gk_dtype_is_half(to))
        convert_half(n, pointers, strides, &conversion);
    else
        convert_loops[from][to](n, pointers, strides, NULL);
}

/* Conversions with a complex side, through blocks of the component type
 * (float for complex64, double for complex128), as NumPy's astype: a real
 * value becomes (x, 0) rounded once to the component (int64 to complex64
 * goes straight to float, never through double); a complex one gives its
 * real part to a real dtype by that part's own conversion, and to bool
 * whether either part is nonzero. */
static void convert_complex(int64_t n, char *const *data, const int64_t *s, const void *context)
{
    const half_conversion *c = context;
    size_t from_size = gk_dtype_size(c->from), to_size = gk_dtype_size(c->to);
    for (int64_t done = 0; done < n; done += HALF_BLOCK) {
        int64_t count = n - done < HALF_BLOCK ? n - done : HALF_BLOCK;
        char *out = data[0] + done * s[0] * (int64_t)to_size;
        const char *in = data[1] + done * s[1] * (int64_t)from_size;
        if (gk_dtype_is_complex(c->from) && gk_dtype_is_complex(c->to)) {
            /* each part converted as its float: two components per element */
            convert_real(gk_dtype_component(c->from), gk_dtype_component(c->to), count,
                         out, 2 * s[0], in, 2 * s[1]);
            convert_real(gk_dtype_component(c->from), gk_dtype_component(c->to), count,
                         out + to_size / 2, 2 * s[0], in + from_size / 2, 2 * s[1]);
        } else if (gk_dtype_is_complex(c->to)) {
            gk_dtype part = gk_dtype_component(c->to);
            convert_real(c->from, part, count, out, 2 * s[0], in, s[1]);
            /* imaginary parts: +0 of the component (all-zero bytes) */
            for (int64_t i = 0; i < count; i++)
                memset(out + i * s[0] * (int64_t)to_size + to_size / 2, 0, to_size / 2);
        } else if (c->to == GK_BOOL) {
            uint8_t *o = (uint8_t *)out;
            for (int64_t i = 0; i < count; i++) {
                double re, im;
                gk_dtype_load_complex(c->from, in + i * s[1] * (int64_t)from_size, &re, &im);
                o[i * s[0]] = re != 0 || im != 0; /* NaN is nonzero */
            }
        } else {
            convert_real(gk_dtype_component(c->from), c->to, count, out, s[0], in, 2 * s[1]);
        }
    }
}

gk_status cpu_convert(gk_device device, const gk_loop *loop, const gk_operand *out,
                      const gk_operand *in)
{
    (void)device;
    gk_operand operands[2] = {*out, *in};
    if (in->dtype == out->dtype || (in->dtype == GK_BOOL && out->dtype == GK_UINT8)) {
        cpu_for_each(loop, operands, 2,
                     cpu_loop_by_size(gk_dtype_size(out->dtype), copy_1, copy_2, copy_4, copy_8,
                                      copy_16),
                     NULL);
    } else if (gk_dtype_is_complex(in->dtype) || gk_dtype_is_complex(out->dtype)) {
        half_conversion conversion = {in->dtype, out->dtype};
        cpu_for_each(loop, operands, 2, convert_complex, &conversion);
    } else if (gk_dtype_is_half(in->dtype) || gk_dtype_is_half(out->dtype)) {
        half_conversion conversion = {in->dtype, out->dtype};
        cpu_for_each(loop, operands, 2, convert_half, &conversion);
    } else {
        cpu_for_each(loop, operands, 2, convert_loops[in->dtype][out->dtype], NULL);
    }
    return GK_OK;
}

#define FILL_LOOP(NAME, T)                                                               \
    CPU_KERNEL static void NAME(int64_t n, char *const *data, const int64_t *s,          \
                                const void *context)                                     \
    {                                                                                    \
        T value;                                                                         \
        memcpy(&value, context, sizeof value);                                           \
        T *out = (T *)data[0];                                                           \
        if (s[0] == 1) {                                                                 \
            for (int64_t i = 0; i < n; i++)                                              \
                out[i] = value;                                                          \
        } else {                                                                         \
            for (int64_t i = 0; i < n; i++)                                              \
                out[i * s[0]] = value;                                                   \
        }                                                                                \
    }

FILL_LOOP(fill_1, uint8_t)
FILL_LOOP(fill_2, uint16_t)
FILL_LOOP(fill_4, uint32_t)
FILL_LOOP(fill_8, uint64_t)
FILL_LOOP(fill_16, cpu_bytes16)

gk_status cpu_fill(gk_device device, const gk_loop *loop, const gk_operand *out,
                   const void *value)
{
    (void)device;
    cpu_for_each(loop, out, 1,
                 cpu_loop_by_size(gk_dtype_size(out->dtype), fill_1, fill_2, fill_4, fill_8,
                                  fill_16),
                 value);
    return GK_OK;
}

/* --- sequences --- */

/* A sequence's values are start + i * step computed in double and
 * converted like a cast. Where every value is an integer within the
 * dtype's range, the dtype's own integer arithmetic gives the same values
 * without a conversion, and vectorizes. */
typedef struct sequence_job {
    char *out;
    gk_dtype dtype;
    int64_t count;
    double start, step;
    bool in_integers;
} sequence_job;

/* Whether start + i * step for i < count are integers that the integer
 * dtype holds (bounded by 2^52, so the doubles are exact): between start
 * and the last value, as the sequence runs one way. */
static bool sequence_in_integers(gk_dtype dtype, int64_t count, double start, double step)
{
    const double exact = 4503599627370496.0; /* 2^52 */
    if (!gk_dtype_is_integer(dtype) || start != trunc(start) || step != trunc(step) ||
        fabs(start) >= exact || fabs(step) >= exact || count >= (int64_t)1 << 52)
        return false;
    double last = start + (double)(count - 1) * step;
    int bits = 8 * (int)gk_dtype_size(dtype);
    double low = gk_dtype_is_unsigned(dtype) ? 0 : -ldexp(1, bits - 1);
    double high = gk_dtype_is_unsigned(dtype) ? ldexp(1, bits) - 1 : ldexp(1, bits - 1) - 1;
    return fabs(last) < exact && fmin(start, last) >= low && fmax(start, last) <= high;
}

/* Values first .. first + n - 1 of a sequence into out[0 .. n - 1] (n is
 * at most a chunk). Integers are computed modulo 2^32 or 2^64 in unsigned
 * W, which gives their low bits exactly, in vectors of W. */
typedef void (*sequence_fn)(void *out, int64_t first, int64_t n, double start, double step);

#define INTEGER_SEQUENCE(NAME, T, W)                                                     \
    CPU_KERNEL static void NAME(void *to, int64_t first, int64_t n, double start, double step) \
    {                                                                                    \
        T *out = to;                                                                     \
        W by = (W)(int64_t)step, at = (W)(int64_t)start + (W)first * by;                 \
        for (int64_t i = 0; i < n; i++)                                                  \
            out[i] = (T)(at + (W)i * by);                                                \
    }

INTEGER_SEQUENCE(sequence_1, uint8_t, uint32_t)
INTEGER_SEQUENCE(sequence_2, uint16_t, uint32_t)
INTEGER_SEQUENCE(sequence_4, uint32_t, uint32_t)
INTEGER_SEQUENCE(sequence_8, uint64_t, uint64_t)

/* The index as a double plus an int32 (both exact) converts in vectors. */
#define FLOAT_SEQUENCE(NAME, T)                                                                    \
    CPU_KERNEL static void NAME(void *to, int64_t first, int64_t n, double start, double step) \
    {                                                                                              \
        T *out = to;                                                                               \
        double base = (double)first;                                                               \
        for (int32_t i = 0; i < (int32_t)n; i++)                                                   \
            out[i] = (T)(start + (base + (double)i) * step);                                       \
    }

FLOAT_SEQUENCE(sequence_float32, float)
FLOAT_SEQUENCE(sequence_float64, double)

/* Any other dtype (and integers beyond the above): a block of doubles at
 * a time, converted. */
static void sequence_converted(gk_dtype dtype, char *out, int64_t first, int64_t n, double start,
                               double step)
{
    double values[256];
    size_t size = gk_dtype_size(dtype);
    for (int64_t done = 0; done < n; done += 256) {
        int64_t block = n - done < 256 ? n - done : 256;
        sequence_float64(values, first + done, block, start, step);
        char *pointers[2] = {out + done * (int64_t)size, (char *)values};
        const int64_t strides[2] = {1, 1};
        half_conversion to_half = {GK_FLOAT64, dtype};
        if (gk_dtype_is_half(dtype))
            convert_half(block, pointers, strides, &to_half);
        else
            convert_loops[GK_FLOAT64][dtype](block, pointers, strides, NULL);
    }
}

enum { SEQUENCE_CHUNK = 1 << 16 };

static void sequence_range(void *context, int64_t first_chunk, int64_t end_chunk)
{
    const sequence_job *job = context;
    size_t size = gk_dtype_size(job->dtype);
    static const sequence_fn by_size[9] = {
        [1] = sequence_1, [2] = sequence_2, [4] = sequence_4, [8] = sequence_8};
    sequence_fn direct = job->in_integers           ? by_size[size]
                         : job->dtype == GK_FLOAT64 ? sequence_float64
                         : job->dtype == GK_FLOAT32 ? sequence_float32
                                                    : NULL;
    for (int64_t chunk = first_chunk; chunk < end_chunk; chunk++) {
        int64_t first = chunk * SEQUENCE_CHUNK;
        int64_t n = job->count - first < SEQUENCE_CHUNK ? job->count - first : SEQUENCE_CHUNK;
        char *out = job->out + first * (int64_t)size;
        if (direct)
            direct(out, first, n, job->start, job->step);
        else
            sequence_converted(job->dtype, out, first, n, job->start, job->step);
    }
}

gk_status cpu_sequence(gk_device device, const gk_operand *out, int64_t count, double start,
                       double step)
{
    (void)device;
    sequence_job job = {out->data, out->dtype, count, start, step,
                        sequence_in_integers(out->dtype, count, start, step)};
    cpu_parallel((count + SEQUENCE_CHUNK - 1) / SEQUENCE_CHUNK, count >= cpu_parallel_min(),
                 sequence_range, &job);
    return GK_OK;
}
