/* Element types: sizes, names, promotion and casting rules, and storing a
 * double as one element. */
#include "compute/array_impl.h"

#include "compute/half.h"
#include "core/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
    char kind;  /* b(ool), i(nteger), u(nsigned), f(loat), c(omplex) */
    int digits; /* integers: value bits (without the sign); floats and complex: significand
                 * bits (of each part) */
    int range;  /* floats and complex: the largest exponent; 0 for the others */
} dtypes[GK_DTYPE_COUNT] = {
    [GK_BOOL] = {"bool", 1, 'b', 1, 0},
    [GK_INT8] = {"int8", 1, 'i', 7, 0},
    [GK_INT16] = {"int16", 2, 'i', 15, 0},
    [GK_INT32] = {"int32", 4, 'i', 31, 0},
    [GK_INT64] = {"int64", 8, 'i', 63, 0},
    [GK_UINT8] = {"uint8", 1, 'u', 8, 0},
    [GK_UINT16] = {"uint16", 2, 'u', 16, 0},
    [GK_UINT32] = {"uint32", 4, 'u', 32, 0},
    [GK_UINT64] = {"uint64", 8, 'u', 64, 0},
    [GK_FLOAT16] = {"float16", 2, 'f', 11, 15},
    [GK_BFLOAT16] = {"bfloat16", 2, 'f', 8, 127},
    [GK_FLOAT32] = {"float32", 4, 'f', 24, 127},
    [GK_FLOAT64] = {"float64", 8, 'f', 53, 1023},
    [GK_COMPLEX64] = {"complex64", 8, 'c', 24, 127},
    [GK_COMPLEX128] = {"complex128", 16, 'c', 53, 1023},
};

static bool valid(gk_dtype dtype)
{
    return (unsigned)dtype < GK_DTYPE_COUNT;
}

size_t gk_dtype_size(gk_dtype dtype)
{
    return valid(dtype) ? dtypes[dtype].size : 0;
}

const char *gk_dtype_name(gk_dtype dtype)
{
    return valid(dtype) ? dtypes[dtype].name : "invalid dtype";
}

bool gk_dtype_is_float(gk_dtype dtype)
{
    return valid(dtype) && dtypes[dtype].kind == 'f';
}

bool gk_dtype_is_integer(gk_dtype dtype)
{
    return valid(dtype) && (dtypes[dtype].kind == 'i' || dtypes[dtype].kind == 'u');
}

bool gk_dtype_is_unsigned(gk_dtype dtype)
{
    return valid(dtype) && dtypes[dtype].kind == 'u';
}

bool gk_dtype_is_complex(gk_dtype dtype)
{
    return valid(dtype) && dtypes[dtype].kind == 'c';
}

bool gk_dtype_is_inexact(gk_dtype dtype)
{
    return gk_dtype_is_float(dtype) || gk_dtype_is_complex(dtype);
}

gk_dtype gk_dtype_component(gk_dtype dtype)
{
    return dtype == GK_COMPLEX64 ? GK_FLOAT32 : dtype == GK_COMPLEX128 ? GK_FLOAT64 : dtype;
}

bool gk_dtype_is_half(gk_dtype dtype)
{
    return dtype == GK_FLOAT16 || dtype == GK_BFLOAT16;
}

/* NumPy's array-protocol type strings ("f8", "<i4", "|b1", "c16"): kind
 * and size in bytes, little-endian or no order, as __array_interface__
 * and code written for NumPy (dask's dtype="f8") spell dtypes. */
static bool parse_typestring(const char *text, gk_dtype *dtype)
{
    if (*text == '<' || *text == '=' || *text == '|')
        text++;
    char kind = text[0];
    char *end;
    long size = strtol(text + 1, &end, 10);
    if (!kind || *end || end == text + 1)
        return false;
    for (int i = 0; i < GK_DTYPE_COUNT; i++) {
        /* bfloat16 has no type string of its own ("f2" is float16) */
        if ((gk_dtype)i != GK_BFLOAT16 && dtypes[i].kind == kind && (long)dtypes[i].size == size) {
            *dtype = (gk_dtype)i;
            return true;
        }
    }
    return false;
}

gk_status gk_dtype_parse(const char *name, gk_dtype *dtype)
{
    for (int i = 0; i < GK_DTYPE_COUNT; i++) {
        if (strcmp(name, dtypes[i].name) == 0) {
            *dtype = (gk_dtype)i;
            return GK_OK;
        }
    }
    if (parse_typestring(name, dtype))
        return GK_OK;
    return gk_fail(GK_ERR_INVALID_ARGUMENT,
                   "unknown dtype '%s': use bool, int8, int16, int32, int64, uint8, uint16, "
                   "uint32, uint64, float16, bfloat16, float32, float64, complex64 or complex128",
                   name);
}

/* --- promotion and casting --- */

/* The signed integer dtype of at least `digits` value bits, or float64
 * when none is that wide. */
static gk_dtype signed_with(int digits)
{
    return digits <= 7 ? GK_INT8 : digits <= 15 ? GK_INT16 : digits <= 31 ? GK_INT32
                                 : digits <= 63 ? GK_INT64 : GK_FLOAT64;
}

bool gk_can_cast(gk_dtype from, gk_dtype to)
{
    if (!valid(from) || !valid(to))
        return false;
    char kf = dtypes[from].kind, kt = dtypes[to].kind;
    int df = dtypes[from].digits, dt = dtypes[to].digits;
    if (from == to || kf == 'b')
        return true;
    switch (kt) {
    case 'b': return false;
    case 'u': return kf == 'u' && df <= dt;
    case 'i': return (kf == 'u' || kf == 'i') && df <= dt;
    case 'f':
        if (kf == 'c')
            return false; /* it would drop the imaginary part */
        /* A float goes to one with as many digits and as wide a range;
         * integers to a float that holds them exactly (uint8 to bfloat16),
         * and to float64 always (NumPy calls int64 -> float64 safe, though
         * it rounds). */
        if (kf == 'f')
            return df <= dt && dtypes[from].range <= dtypes[to].range;
        return to == GK_FLOAT64 || df <= dt;
    default:
        /* To complex: as to its component's float (a complex one part by
         * part); complex never goes to a real dtype (the cases above). */
        if (kf == 'f' || kf == 'c')
            return df <= dt && dtypes[from].range <= dtypes[to].range;
        return to == GK_COMPLEX128 || df <= dt;
    }
}

/* The first of `candidates` (narrowest first) that both dtypes cast to
 * safely; float64 when none is. */
static gk_dtype first_holding(gk_dtype a, gk_dtype b, const gk_dtype *candidates, int count)
{
    for (int i = 0; i < count; i++)
        if (gk_can_cast(a, candidates[i]) && gk_can_cast(b, candidates[i]))
            return candidates[i];
    return GK_FLOAT64;
}

gk_dtype gk_promote_types(gk_dtype a, gk_dtype b)
{
    if (gk_can_cast(a, b))
        return b;
    if (gk_can_cast(b, a))
        return a;
    /* Neither holds the other: a signed and an unsigned integer, an
     * integer and a float too narrow for it, or float16 and bfloat16. */
    if (gk_dtype_is_complex(a) || gk_dtype_is_complex(b)) {
        /* NumPy's: the narrowest complex holding both (int32 + complex64
         * and float64 + complex64 are complex128). */
        static const gk_dtype complexes[] = {GK_COMPLEX64, GK_COMPLEX128};
        return first_holding(a, b, complexes, 2);
    }
    if (gk_dtype_is_integer(a) && gk_dtype_is_integer(b)) {
        int digits = dtypes[a].digits > dtypes[b].digits ? dtypes[a].digits : dtypes[b].digits;
        return signed_with(digits);
    }
    static const gk_dtype floats[] = {GK_FLOAT16, GK_BFLOAT16, GK_FLOAT32};
    return first_holding(a, b, floats, 3);
}

gk_dtype gk_float_for(gk_dtype dtype)
{
    if (gk_dtype_is_inexact(dtype))
        return dtype;
    /* NumPy's choice, which has no bfloat16. */
    static const gk_dtype floats[] = {GK_FLOAT16, GK_FLOAT32};
    return first_holding(dtype, dtype, floats, 2);
}

/* value clamped to [low, high], NaN to 0: converting an out-of-range double
 * to an integer is undefined in C. The same rule as casts (convert.c). */
static double clamp(double value, double low, double high)
{
    return value != value ? 0 : value < low ? low : value > high ? high : value;
}

void gk_dtype_store(gk_dtype dtype, double value, void *bytes)
{
    switch (dtype) {
    case GK_BOOL: *(uint8_t *)bytes = value != 0; break;
    case GK_INT8: *(int8_t *)bytes = (int8_t)clamp(value, INT8_MIN, INT8_MAX); break;
    case GK_INT16: *(int16_t *)bytes = (int16_t)clamp(value, INT16_MIN, INT16_MAX); break;
    case GK_INT32: *(int32_t *)bytes = (int32_t)clamp(value, INT32_MIN, INT32_MAX); break;
    case GK_INT64:
        *(int64_t *)bytes = (int64_t)clamp(value, -9.2233720368547758e18, 9.2233720368547748e18);
        break;
    case GK_UINT8: *(uint8_t *)bytes = (uint8_t)clamp(value, 0, UINT8_MAX); break;
    case GK_UINT16: *(uint16_t *)bytes = (uint16_t)clamp(value, 0, UINT16_MAX); break;
    case GK_UINT32: *(uint32_t *)bytes = (uint32_t)clamp(value, 0, UINT32_MAX); break;
    case GK_UINT64: *(uint64_t *)bytes = (uint64_t)clamp(value, 0, 1.8446744073709550e19); break;
    case GK_FLOAT32: *(float *)bytes = (float)value; break;
    case GK_FLOAT64: *(double *)bytes = value; break;
    case GK_FLOAT16: *(uint16_t *)bytes = gk_float16_from_double(value); break;
    case GK_BFLOAT16: *(uint16_t *)bytes = gk_bfloat16_from_double(value); break;
    case GK_COMPLEX64:
    case GK_COMPLEX128: gk_dtype_store_complex(dtype, value, 0, bytes); break;
    }
}

void gk_dtype_store_complex(gk_dtype dtype, double re, double im, void *bytes)
{
    /* memcpy: `bytes` need not be aligned for the component type. */
    if (dtype == GK_COMPLEX64) {
        float parts[2] = {(float)re, (float)im};
        memcpy(bytes, parts, sizeof parts);
    } else if (dtype == GK_COMPLEX128) {
        double parts[2] = {re, im};
        memcpy(bytes, parts, sizeof parts);
    } else {
        gk_dtype_store(dtype, re, bytes); /* a real dtype keeps the real part, as a cast */
    }
}

void gk_dtype_load_complex(gk_dtype dtype, const void *bytes, double *re, double *im)
{
    if (dtype == GK_COMPLEX64) {
        float parts[2];
        memcpy(parts, bytes, sizeof parts);
        *re = parts[0], *im = parts[1];
    } else if (dtype == GK_COMPLEX128) {
        double parts[2];
        memcpy(parts, bytes, sizeof parts);
        *re = parts[0], *im = parts[1];
    } else {
        *re = gk_dtype_load(dtype, bytes), *im = 0;
    }
}

double gk_dtype_load(gk_dtype dtype, const void *bytes)
{
    switch (dtype) {
    case GK_BOOL:
    case GK_UINT8: return *(const uint8_t *)bytes;
    case GK_INT8: return *(const int8_t *)bytes;
    case GK_INT16: return *(const int16_t *)bytes;
    case GK_INT32: return *(const int32_t *)bytes;
    case GK_INT64: return (double)*(const int64_t *)bytes;
    case GK_UINT16: return *(const uint16_t *)bytes;
    case GK_UINT32: return *(const uint32_t *)bytes;
    case GK_UINT64: return (double)*(const uint64_t *)bytes;
    case GK_FLOAT32: return *(const float *)bytes;
    case GK_FLOAT64: return *(const double *)bytes;
    case GK_FLOAT16: return gk_float16_to_float(*(const uint16_t *)bytes);
    case GK_BFLOAT16: return gk_bfloat16_to_float(*(const uint16_t *)bytes);
    case GK_COMPLEX64:
    case GK_COMPLEX128: {
        double re, im;
        gk_dtype_load_complex(dtype, bytes, &re, &im);
        return re; /* the real part, as a cast to a real dtype */
    }
    }
    return 0;
}
