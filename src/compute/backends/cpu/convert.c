/* Copying with conversion between dtypes, filling, and sequences. */
#include "compute/backends/cpu/cpu.h"

#include <string.h>

/* C's conversions, except to bool (any non-zero is true) and from floating
 * types to integers, where NaN and out-of-range values would be undefined
 * behaviour: those saturate (NaN gives 0), as PyTorch's CPU results do. */
#define TO_BOOL(x) ((uint8_t)((x) != 0))

#define CLAMP_TO(T, low, high, x)                                                     \
    ((x) != (x) ? (T)0 : (x) <= (double)(low) ? (T)(low) : (x) >= (double)(high) ? (T)(high) \
                                                                             : (T)(x))

#define CONVERT_LOOP(NAME, FROM, TO, EXPR)                                              \
    static void NAME(int64_t n, char *const *data, const int64_t *s, const void *context) \
    {                                                                                   \
        (void)context;                                                                  \
        TO *out = (TO *)data[0];                                                        \
        const FROM *in = (const FROM *)data[1];                                         \
        if (s[0] == 1 && s[1] == 1) {                                                   \
            for (int64_t i = 0; i < n; i++) {                                           \
                FROM x = in[i];                                                         \
                out[i] = (EXPR);                                                        \
            }                                                                           \
        } else {                                                                        \
            for (int64_t i = 0; i < n; i++) {                                           \
                FROM x = in[i * s[1]];                                                  \
                out[i * s[0]] = (EXPR);                                                 \
            }                                                                           \
        }                                                                               \
    }

/* Integer and bool sources convert with C's rules (to bool: != 0). */
#define FROM_INTEGER(NAME, FROM)                                                   \
    CONVERT_LOOP(NAME##_bool, FROM, uint8_t, TO_BOOL(x))                           \
    CONVERT_LOOP(NAME##_uint8, FROM, uint8_t, (uint8_t)x)                          \
    CONVERT_LOOP(NAME##_int32, FROM, int32_t, (int32_t)x)                          \
    CONVERT_LOOP(NAME##_int64, FROM, int64_t, (int64_t)x)                          \
    CONVERT_LOOP(NAME##_float32, FROM, float, (float)x)                            \
    CONVERT_LOOP(NAME##_float64, FROM, double, (double)x)

#define FROM_FLOAT(NAME, FROM)                                                         \
    CONVERT_LOOP(NAME##_bool, FROM, uint8_t, TO_BOOL(x))                               \
    CONVERT_LOOP(NAME##_uint8, FROM, uint8_t, CLAMP_TO(uint8_t, 0, 255, (double)x))    \
    CONVERT_LOOP(NAME##_int32, FROM, int32_t,                                          \
                 CLAMP_TO(int32_t, INT32_MIN, INT32_MAX, (double)x))                   \
    CONVERT_LOOP(NAME##_int64, FROM, int64_t,                                          \
                 CLAMP_TO(int64_t, -9.2233720368547758e18, 9.2233720368547748e18, (double)x)) \
    CONVERT_LOOP(NAME##_float32, FROM, float, (float)x)                                \
    CONVERT_LOOP(NAME##_float64, FROM, double, (double)x)

FROM_INTEGER(from_bool, uint8_t)
FROM_INTEGER(from_uint8, uint8_t)
FROM_INTEGER(from_int32, int32_t)
FROM_INTEGER(from_int64, int64_t)
FROM_FLOAT(from_float32, float)
FROM_FLOAT(from_float64, double)

#define ROW(NAME)                                                                       \
    {NAME##_bool, NAME##_uint8, NAME##_int32, NAME##_int64, NAME##_float32, NAME##_float64}

static const cpu_inner_loop convert_loops[GK_DTYPE_COUNT][GK_DTYPE_COUNT] = {
    ROW(from_bool),    ROW(from_uint8),   ROW(from_int32),
    ROW(from_int64),   ROW(from_float32), ROW(from_float64),
};

/* A same-dtype copy moves bytes: one loop per element size. */
#define COPY_LOOP(NAME, T) CONVERT_LOOP(NAME, T, T, x)
COPY_LOOP(copy_1, uint8_t)
COPY_LOOP(copy_4, uint32_t)
COPY_LOOP(copy_8, uint64_t)

gk_status cpu_convert(gk_device device, const gk_loop *loop, const gk_operand *out,
                      const gk_operand *in)
{
    (void)device;
    gk_operand operands[2] = {*out, *in};
    cpu_inner_loop inner = convert_loops[in->dtype][out->dtype];
    if (in->dtype == out->dtype || (in->dtype == GK_BOOL && out->dtype == GK_UINT8)) {
        size_t size = gk_dtype_size(out->dtype);
        inner = size == 1 ? copy_1 : size == 4 ? copy_4 : copy_8;
    }
    cpu_for_each(loop, operands, 2, inner, NULL);
    return GK_OK;
}

#define FILL_LOOP(NAME, T)                                                               \
    static void NAME(int64_t n, char *const *data, const int64_t *s, const void *context) \
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
FILL_LOOP(fill_4, uint32_t)
FILL_LOOP(fill_8, uint64_t)

gk_status cpu_fill(gk_device device, const gk_loop *loop, const gk_operand *out,
                   const void *value)
{
    (void)device;
    size_t size = gk_dtype_size(out->dtype);
    cpu_for_each(loop, out, 1, size == 1 ? fill_1 : size == 4 ? fill_4 : fill_8, value);
    return GK_OK;
}

gk_status cpu_sequence(gk_device device, const gk_operand *out, int64_t count, double start,
                       double step)
{
    (void)device;
    /* Computed as double in blocks, then converted by the same rules as a
     * cast. */
    double values[256];
    size_t size = gk_dtype_size(out->dtype);
    for (int64_t done = 0; done < count; done += 256) {
        int64_t n = count - done < 256 ? count - done : 256;
        for (int64_t i = 0; i < n; i++)
            values[i] = start + (double)(done + i) * step;
        char *data[2] = {out->data + done * (int64_t)size, (char *)values};
        const int64_t strides[2] = {1, 1};
        convert_loops[GK_FLOAT64][out->dtype](n, data, strides, NULL);
    }
    return GK_OK;
}
