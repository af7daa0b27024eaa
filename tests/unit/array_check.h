/* Helpers for the array tests: run each test on every device this machine
 * has (the CPU now; CUDA and OpenCL devices once their backends exist), so
 * the same test code checks every backend unchanged. */
#ifndef GK_TEST_ARRAY_CHECK_H
#define GK_TEST_ARRAY_CHECK_H

#include "check.h"

#include <gpukit/array.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every usable device: cpu, cuda:N..., opencl:P:D... (GPUKIT_TEST_DEVICES,
 * a comma-separated list of names, overrides). Returns the count. */
static inline int test_devices(gk_device *devices, int max)
{
    int n = 0;
    const char *chosen = getenv("GPUKIT_TEST_DEVICES");
    if (chosen && *chosen) {
        char list[256];
        snprintf(list, sizeof list, "%s", chosen);
        for (char *name = strtok(list, ","); name && n < max; name = strtok(NULL, ","))
            if (gk_device_parse(name, &devices[n]) == GK_OK)
                n++;
        return n;
    }
    n = gk_device_list(devices, max);
    return n < max ? n : max;
}

/* Runs `test(device)` for every device, naming the device on failure. */
#define FOR_EACH_DEVICE(test)                                                        \
    do {                                                                             \
        gk_device devices_[16];                                                      \
        int count_ = test_devices(devices_, 16);                                     \
        for (int d_ = 0; d_ < count_; d_++) {                                        \
            int before_ = check_failures;                                            \
            test(devices_[d_]);                                                      \
            if (check_failures != before_) {                                         \
                char name_[GK_DEVICE_NAME_MAX];                                      \
                fprintf(stderr, "  (in %s on %s)\n", #test,                          \
                        gk_device_name(devices_[d_], name_, sizeof name_));          \
            }                                                                        \
        }                                                                            \
    } while (0)

/* The call succeeded; else the message. */
#define CHECK_OK(call)                                                               \
    do {                                                                             \
        gk_status status_ = (call);                                                  \
        CHECK(status_ == GK_OK, "%s", gk_last_error());                              \
    } while (0)

/* The call failed with `expected` and a message containing `text`. */
#define CHECK_FAILS(call, expected, text)                                            \
    do {                                                                             \
        gk_status status_ = (call);                                                  \
        CHECK(status_ == (expected), "status %d, message: %s", (int)status_,         \
              gk_last_error());                                                      \
        CHECK(strstr(gk_last_error(), (text)) != NULL, "message: %s", gk_last_error()); \
    } while (0)

/* x rounded once to the floating dtype t (as a cast), as a double again:
 * for float16 and bfloat16, half.h's rounding, which
 * tests/package/test_half.py checks against NumPy and an exact reference. */
static inline double test_round(gk_dtype t, double x)
{
    unsigned char bytes[GK_DTYPE_MAX_SIZE];
    gk_dtype_store(t, x, bytes);
    return gk_dtype_load(t, bytes);
}

/* Writes `v` as element i of `raw`, an array of dtype t (C's conversions). */
static inline void test_store(gk_dtype t, double v, unsigned char *raw, int64_t i)
{
    switch (t) {
    case GK_BOOL: raw[i] = v != 0; break;
    case GK_UINT8: raw[i] = (uint8_t)v; break;
    case GK_INT8: ((int8_t *)raw)[i] = (int8_t)v; break;
    case GK_INT16: ((int16_t *)raw)[i] = (int16_t)v; break;
    case GK_INT32: ((int32_t *)raw)[i] = (int32_t)v; break;
    case GK_INT64: ((int64_t *)raw)[i] = (int64_t)v; break;
    case GK_UINT16: ((uint16_t *)raw)[i] = (uint16_t)v; break;
    case GK_UINT32: ((uint32_t *)raw)[i] = (uint32_t)v; break;
    case GK_UINT64: ((uint64_t *)raw)[i] = (uint64_t)v; break;
    case GK_FLOAT32: ((float *)raw)[i] = (float)v; break;
    case GK_FLOAT64: ((double *)raw)[i] = v; break;
    case GK_FLOAT16:
    case GK_BFLOAT16: gk_dtype_store(t, v, (uint16_t *)raw + i); break;
    case GK_COMPLEX64:
    case GK_COMPLEX128: /* (v, 0): the real models reach complex this way */
        gk_dtype_store(t, v, raw + (size_t)i * gk_dtype_size(t));
        break;
    }
}

/* The array's elements as doubles (malloc'd; NULL on failure), read back
 * with gk_to_host, whatever the dtype (64-bit integers rounded to double:
 * tests that need them exact read the bytes themselves). */
static inline double *test_values(const gk_array *a)
{
    int64_t n = gk_array_size(a);
    size_t bytes = gk_array_nbytes(a);
    unsigned char *raw = malloc(bytes ? bytes : 1);
    double *values = malloc(sizeof *values * (size_t)(n ? n : 1));
    if (!raw || !values || gk_to_host(a, raw, bytes) != GK_OK) {
        free(raw);
        free(values);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        switch (gk_array_dtype(a)) {
        case GK_BOOL:
        case GK_UINT8: values[i] = raw[i]; break;
        case GK_INT8: values[i] = ((int8_t *)raw)[i]; break;
        case GK_INT16: values[i] = ((int16_t *)raw)[i]; break;
        case GK_INT32: values[i] = ((int32_t *)raw)[i]; break;
        case GK_INT64: values[i] = (double)((int64_t *)raw)[i]; break;
        case GK_UINT16: values[i] = ((uint16_t *)raw)[i]; break;
        case GK_UINT32: values[i] = ((uint32_t *)raw)[i]; break;
        case GK_UINT64: values[i] = (double)((uint64_t *)raw)[i]; break;
        case GK_FLOAT32: values[i] = ((float *)raw)[i]; break;
        case GK_FLOAT64: values[i] = ((double *)raw)[i]; break;
        case GK_FLOAT16:
        case GK_BFLOAT16: values[i] = gk_dtype_load(gk_array_dtype(a), (uint16_t *)raw + i); break;
        case GK_COMPLEX64:
        case GK_COMPLEX128: /* the real part; test_complex.py checks both */
            values[i] = gk_dtype_load(gk_array_dtype(a),
                                      raw + (size_t)i * gk_dtype_size(gk_array_dtype(a)));
            break;
        }
    }
    free(raw);
    return values;
}

/* Checks every element against `expected` within `tolerance` (relative to
 * max(1, |expected|)); NaN matches NaN. */
static inline void check_values_(const char *file, int line, const gk_array *a,
                                 const double *expected, int64_t n, double tolerance)
{
    if (!a) {
        check_failures++;
        fprintf(stderr, "%s:%d: no array to check\n", file, line);
        return;
    }
    if (gk_array_size(a) != n) {
        check_failures++;
        fprintf(stderr, "%s:%d: %lld elements, expected %lld\n", file, line,
                (long long)gk_array_size(a), (long long)n);
        return;
    }
    double *got = test_values(a);
    if (!got) {
        check_failures++;
        fprintf(stderr, "%s:%d: cannot read the array back: %s\n", file, line, gk_last_error());
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        double scale = fabs(expected[i]) > 1 ? fabs(expected[i]) : 1;
        bool same = (isnan(got[i]) && isnan(expected[i])) || got[i] == expected[i] ||
                    fabs(got[i] - expected[i]) <= tolerance * scale;
        if (!same) {
            check_failures++;
            fprintf(stderr, "%s:%d: element %lld is %.17g, expected %.17g\n", file, line,
                    (long long)i, got[i], expected[i]);
            break;
        }
    }
    free(got);
}
#define CHECK_VALUES(a, expected, n, tolerance)                                       \
    check_values_(__FILE__, __LINE__, (a), (expected), (n), (tolerance))

#endif
