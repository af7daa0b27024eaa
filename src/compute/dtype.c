/* Element types: sizes, names, and storing a double as one element. */
#include "compute/array_impl.h"

#include "core/error.h"

#include <string.h>

static const struct {
    const char *name;
    size_t size;
} dtypes[GK_DTYPE_COUNT] = {
    [GK_BOOL] = {"bool", 1},       [GK_UINT8] = {"uint8", 1},     [GK_INT32] = {"int32", 4},
    [GK_INT64] = {"int64", 8},     [GK_FLOAT32] = {"float32", 4}, [GK_FLOAT64] = {"float64", 8},
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
    return dtype == GK_FLOAT32 || dtype == GK_FLOAT64;
}

gk_status gk_dtype_parse(const char *name, gk_dtype *dtype)
{
    for (int i = 0; i < GK_DTYPE_COUNT; i++) {
        if (strcmp(name, dtypes[i].name) == 0) {
            *dtype = (gk_dtype)i;
            return GK_OK;
        }
    }
    return gk_fail(GK_ERR_INVALID_ARGUMENT,
                   "unknown dtype '%s': use bool, uint8, int32, int64, float32 or float64", name);
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
    case GK_UINT8: *(uint8_t *)bytes = (uint8_t)clamp(value, 0, 255); break;
    case GK_INT32: *(int32_t *)bytes = (int32_t)clamp(value, INT32_MIN, INT32_MAX); break;
    case GK_INT64:
        *(int64_t *)bytes = (int64_t)clamp(value, -9.2233720368547758e18, 9.2233720368547748e18);
        break;
    case GK_FLOAT32: *(float *)bytes = (float)value; break;
    case GK_FLOAT64: *(double *)bytes = value; break;
    }
}

double gk_dtype_load(gk_dtype dtype, const void *bytes)
{
    switch (dtype) {
    case GK_BOOL:
    case GK_UINT8: return *(const uint8_t *)bytes;
    case GK_INT32: return *(const int32_t *)bytes;
    case GK_INT64: return (double)*(const int64_t *)bytes;
    case GK_FLOAT32: return *(const float *)bytes;
    case GK_FLOAT64: return *(const double *)bytes;
    }
    return 0;
}
