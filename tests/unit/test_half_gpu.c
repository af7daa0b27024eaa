/* float16 and bfloat16 on the GPU backends (kernels/elementwise.gk's half
 * programs): conversions between the two and every dtype over special
 * values (zeros, subnormals, the largest values, infinities, NaNs, ties,
 * values out of an integer's range), every 16-bit pattern of each into
 * every dtype; arithmetic, comparisons and the exact unary ops, computed in
 * float and rounded once; where, fill, arange and take; in contiguous,
 * strided (positive and negative steps) and broadcast layouts. Results are
 * compared bit for bit with a host reference made with compute/half.h
 * (compute in float, round once; a NaN result only needs to be a NaN, as
 * the sign of a NaN that arithmetic makes differs between machines).
 *
 * Arrays are made and read as raw bytes (gk_from_host, gk_to_host), so
 * the test needs no half support on the CPU. It runs on every CUDA and
 * OpenCL device (in CI PoCL's), or on the devices GPUKIT_TEST_DEVICES
 * names (the CPU too, when named); without one it says so and passes. */
#include "array_check.h"

#include "compute/gpu/gpu.h"
#include "compute/half.h"

#include <stdint.h>

#define COUNT(array) ((int)(sizeof(array) / sizeof *(array)))

static int cases; /* elements compared, printed at the end */

static const gk_dtype halves[] = {GK_FLOAT16, GK_BFLOAT16};

/* The devices to test: GPUKIT_TEST_DEVICES, else every GPU. */
static int half_devices(gk_device *devices, int max)
{
    const char *chosen = getenv("GPUKIT_TEST_DEVICES");
    if (chosen && *chosen)
        return test_devices(devices, max);
    gk_device all[16];
    int n = gk_device_list(all, 16), count = 0;
    for (int i = 0; i < n && count < max; i++)
        if (all[i].kind != GK_DEVICE_CPU)
            devices[count++] = all[i];
    return count;
}

/* --- the host reference --- */

static float half_to_float(gk_dtype t, uint16_t bits)
{
    return t == GK_FLOAT16 ? gk_float16_to_float(bits) : gk_bfloat16_to_float(bits);
}

static uint16_t half_from_float(gk_dtype t, float f)
{
    return t == GK_FLOAT16 ? gk_float16_from_double((double)f) : gk_bfloat16_from_float(f);
}

static uint16_t half_from_double(gk_dtype t, double d)
{
    return t == GK_FLOAT16 ? gk_float16_from_double(d) : gk_bfloat16_from_double(d);
}

static bool half_is_nan(gk_dtype t, uint16_t bits)
{
    return t == GK_FLOAT16 ? (bits & 0x7FFF) > 0x7C00 : (bits & 0x7FFF) > 0x7F80;
}

/* A float converted to dtype t as the library converts floats: NaN to 0
 * and saturation at the CPU's bounds for integers, nonzero for bool, the
 * 16-bit floats rounded once. Written as t's bytes at raw + i * size. */
static void float_to(gk_dtype t, float f, unsigned char *raw, int64_t i)
{
    double d = f;
    switch (t) {
    case GK_BOOL: raw[i] = f != 0; return;
    case GK_FLOAT32: ((float *)raw)[i] = f; return;
    case GK_FLOAT64: ((double *)raw)[i] = d; return;
    case GK_FLOAT16:
    case GK_BFLOAT16: ((uint16_t *)raw)[i] = half_from_float(t, f); return;
    default: break;
    }
    double low, high;
    switch (t) {
    case GK_INT8: low = INT8_MIN, high = INT8_MAX; break;
    case GK_INT16: low = INT16_MIN, high = INT16_MAX; break;
    case GK_INT32: low = INT32_MIN, high = INT32_MAX; break;
    case GK_INT64: low = -0x1p63, high = 9223372036854774784.0; break;
    case GK_UINT8: low = 0, high = UINT8_MAX; break;
    case GK_UINT16: low = 0, high = UINT16_MAX; break;
    case GK_UINT32: low = 0, high = UINT32_MAX; break;
    default: low = 0, high = 18446744073709549568.0; break;
    }
    d = d != d ? 0 : d <= low ? low : d >= high ? high : d;
    switch (t) {
    case GK_INT8: ((int8_t *)raw)[i] = (int8_t)d; break;
    case GK_INT16: ((int16_t *)raw)[i] = (int16_t)d; break;
    case GK_INT32: ((int32_t *)raw)[i] = (int32_t)d; break;
    case GK_INT64: ((int64_t *)raw)[i] = (int64_t)d; break;
    case GK_UINT8: raw[i] = (uint8_t)d; break;
    case GK_UINT16: ((uint16_t *)raw)[i] = (uint16_t)d; break;
    case GK_UINT32: ((uint32_t *)raw)[i] = (uint32_t)d; break;
    default: ((uint64_t *)raw)[i] = (uint64_t)d; break;
    }
}

/* Element i of raw (dtype t) as a double: exact for every dtype but
 * 64-bit integers beyond 2^53 (rounded, as the library's path through
 * double rounds them). */
static double element(gk_dtype t, const unsigned char *raw, int64_t i)
{
    switch (t) {
    case GK_BOOL:
    case GK_UINT8: return raw[i];
    case GK_INT8: return ((const int8_t *)raw)[i];
    case GK_INT16: return ((const int16_t *)raw)[i];
    case GK_INT32: return ((const int32_t *)raw)[i];
    case GK_INT64: return (double)((const int64_t *)raw)[i];
    case GK_UINT16: return ((const uint16_t *)raw)[i];
    case GK_UINT32: return ((const uint32_t *)raw)[i];
    case GK_UINT64: return (double)((const uint64_t *)raw)[i];
    case GK_FLOAT32: return ((const float *)raw)[i];
    case GK_FLOAT64: return ((const double *)raw)[i];
    case GK_FLOAT16:
    case GK_BFLOAT16: return half_to_float(t, ((const uint16_t *)raw)[i]);
    case GK_COMPLEX64:
    case GK_COMPLEX128: break; /* not modelled here: tests/package/test_complex.py */
    }
    return 0;
}

/* --- arrays --- */

static gk_array *from_bytes(gk_device device, gk_dtype t, int ndim, const int64_t *shape,
                            const void *bytes)
{
    gk_array *a = NULL;
    CHECK_OK(gk_from_host(device, t, ndim, shape, bytes, &a));
    return a;
}

/* The array's bytes (malloc'd), or NULL after a failed check. */
static unsigned char *bytes_of(const gk_array *a)
{
    if (!a)
        return NULL;
    size_t size = gk_array_nbytes(a);
    unsigned char *raw = malloc(size ? size : 1);
    gk_status status = gk_to_host(a, raw, size);
    CHECK(status == GK_OK, "to_host: %s", gk_last_error());
    if (status != GK_OK) {
        free(raw);
        return NULL;
    }
    return raw;
}

/* Compares n elements of dtype t with `expected`, bit for bit (NaNs of a
 * 16-bit float or float as NaNs when `any_nan`), reporting the first
 * difference with `what` and the element's inputs. */
static void check_bytes(const char *what, gk_dtype t, const unsigned char *got,
                        const unsigned char *expected, int64_t n, bool any_nan)
{
    if (!got)
        return;
    size_t size = gk_dtype_size(t);
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *g = got + (size_t)i * size, *e = expected + (size_t)i * size;
        cases++;
        if (memcmp(g, e, size) == 0)
            continue;
        if (any_nan && gk_dtype_is_half(t) &&
            half_is_nan(t, ((const uint16_t *)g)[0]) && half_is_nan(t, ((const uint16_t *)e)[0]))
            continue;
        if (any_nan && gk_dtype_is_float(t) && isnan(element(t, g, 0)) && isnan(element(t, e, 0)))
            continue;
        uint64_t gv = 0, ev = 0;
        memcpy(&gv, g, size);
        memcpy(&ev, e, size);
        CHECK(0, "%s: element %lld is 0x%llx (%.9g), expected 0x%llx (%.9g)", what,
              (long long)i, (unsigned long long)gv, element(t, g, 0), (unsigned long long)ev,
              element(t, e, 0));
        return;
    }
}

/* --- conversions --- */

/* Every 16-bit pattern of a half dtype into every dtype (and the same
 * through a negative-step view: strided source and output). */
static void test_from_half(gk_device device)
{
    enum { N = 65536 };
    for (int h = 0; h < COUNT(halves); h++) {
        gk_dtype from = halves[h];
        uint16_t *patterns = malloc(N * sizeof *patterns);
        for (int i = 0; i < N; i++)
            patterns[i] = (uint16_t)i;
        int64_t shape[1] = {N};
        gk_array *a = from_bytes(device, from, 1, shape, patterns);
        gk_array *reversed = NULL;
        if (a)
            CHECK_OK(gk_slice(a, 0, N - 1, -N - 1, -3, &reversed));
        for (int to = 0; to < GK_DTYPE_COUNT && reversed; to++) {
            if (gk_dtype_is_complex((gk_dtype)to))
                continue; /* complex: tests/package/test_complex.py */
            gk_dtype t = (gk_dtype)to;
            size_t size = gk_dtype_size(t);
            unsigned char *expected = malloc(N * size);
            for (int i = 0; i < N; i++) {
                if (t == from) /* a copy keeps the bits, NaN payloads too */
                    ((uint16_t *)expected)[i] = patterns[i];
                else
                    float_to(t, half_to_float(from, patterns[i]), expected, i);
            }
            char what[64];
            snprintf(what, sizeof what, "%s to %s", gk_dtype_name(from), gk_dtype_name(t));
            gk_array *b = NULL;
            CHECK_OK(gk_cast(a, t, &b));
            unsigned char *got = bytes_of(b);
            check_bytes(what, t, got, expected, N, false);
            free(got);
            gk_array_free(b);

            /* Every third pattern from the end: the same values in another
             * order, through a strided loop. */
            int64_t m = gk_array_size(reversed);
            unsigned char *picked = malloc((size_t)m * size);
            for (int64_t i = 0; i < m; i++)
                memcpy(picked + i * (int64_t)size, expected + (N - 1 - 3 * i) * (int64_t)size,
                       size);
            snprintf(what, sizeof what, "%s to %s, strided", gk_dtype_name(from),
                     gk_dtype_name(t));
            b = NULL;
            CHECK_OK(gk_cast(reversed, t, &b));
            got = bytes_of(b);
            check_bytes(what, t, got, picked, m, false);
            free(got);
            free(picked);
            gk_array_free(b);
            free(expected);
        }
        gk_array_free(reversed);
        gk_array_free(a);
        free(patterns);
    }
}

/* A xorshift generator, so the random cases are the same every run. */
static uint64_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* Values of every dtype into each half dtype. */
static void test_to_half(gk_device device)
{
    /* Integers: zero, the limits of every dtype, ties of both formats
     * (2049 and 2051 in float16; 257 and 259 in bfloat16), float16's
     * largest value and the edge of its overflow (65519 rounds down, 65520
     * to infinity), a bfloat16 tie that rounding through float would break
     * (2^24 + 2^16 + 1) and values beyond 2^53. Each is stored as the dtype
     * stores it (C's conversion). */
    static const int64_t integers[] = {
        0, 1, -1, 2, 3, -7, 127, 128, -128, -129, 255, 256, 257, 259, 2047, 2049, 2051,
        4097, 32767, -32768, 32769, 65504, 65519, 65520, 65535, 65536, 100000, -100000,
        (1 << 24) + 1, (1 << 24) + (1 << 16) + 1, INT32_MAX, INT32_MIN, 4294967295LL,
        (1LL << 53) + 1, INT64_MAX, INT64_MIN, (1LL << 60) + (1LL << 52) + 1,
        -(1LL << 40) - 12345};
    /* Floats: zeros, subnormals of both formats and half of their
     * smallest (a tie with 0) and above, the normal limits, the overflow
     * edges, infinities, NaNs (with payloads and signs), ties to even and
     * values just off them, values that round twice through float. */
    static const double doubles[] = {
        0.0, -0.0, 1.0, -1.0, 0.1, -0.1, 1.0 / 3, 3.14159265358979, 0x1p-24, -0x1p-24,
        0x1p-25, 0x1.000001p-25, 0x1.8p-24, 0x1.4p-23, 0x1p-14, 0x1.ff8p-15, 0x1p-15,
        65504.0, -65504.0, 65519.99, 65520.0, 1e5, -1e5, 1e300, -1e300, 1e-300, -1e-300,
        0x1p-133, 0x1p-134, 0x1.0000001p-134, 0x1p-126, 0x1.fep127, 0x1.fefffffp127,
        0x1.ffp127, 0x1p128, INFINITY, -INFINITY, NAN, -NAN, 1 + 0x1p-11, 1 + 0x3p-11,
        1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-8, 1 + 0x3p-8, 1 + 0x1p-8 + 0x1p-40, 2049.0, 2051.0,
        -2049.5, 0x1.0040000001p0, 0x1.008p0, 0x1.0180000000001p0, 1e-8, 6e-8, 3e-8};
    uint64_t state = 0x9E3779B97F4A7C15ull;
    enum { RANDOM = 100000 };
    for (int from = 0; from < GK_DTYPE_COUNT; from++) {
        if (gk_dtype_is_complex((gk_dtype)from))
            continue; /* complex: tests/package/test_complex.py */
        gk_dtype f = (gk_dtype)from;
        int64_t n = 0;
        unsigned char *raw = malloc((size_t)(COUNT(integers) + COUNT(doubles) + RANDOM) * 8);
        if (gk_dtype_is_float(f) && !gk_dtype_is_half(f)) {
            for (int i = 0; i < COUNT(doubles); i++, n++) {
                if (f == GK_FLOAT32)
                    ((float *)raw)[n] = (float)doubles[i];
                else
                    ((double *)raw)[n] = doubles[i];
            }
            for (int i = 0; i < RANDOM; i++, n++) {
                uint64_t r = next_random(&state);
                if (f == GK_FLOAT32) {
                    uint32_t bits = (uint32_t)r;
                    memcpy(raw + 4 * n, &bits, 4);
                } else {
                    /* Exponents around the two formats' ranges, and a few
                     * sticky bits far below the kept ones. */
                    int exponent = 1023 - 140 + (int)((r >> 52) % 280);
                    uint64_t bits = (r & 0x800FFFFFFFFFFFFFull) | ((uint64_t)exponent << 52);
                    if (i % 4 == 0)
                        bits &= ~0x0000000FFFFFFFF0ull;
                    memcpy(raw + 8 * n, &bits, 8);
                }
            }
        } else if (gk_dtype_is_half(f)) {
            for (int i = 0; i < 4096; i++, n++)
                ((uint16_t *)raw)[n] = (uint16_t)next_random(&state);
        } else {
            for (int i = 0; i < COUNT(integers); i++, n++) {
                int64_t v = integers[i];
                switch (f) {
                case GK_BOOL: raw[n] = v != 0; break;
                case GK_UINT8: raw[n] = (uint8_t)v; break;
                case GK_INT8: ((int8_t *)raw)[n] = (int8_t)v; break;
                case GK_INT16: ((int16_t *)raw)[n] = (int16_t)v; break;
                case GK_INT32: ((int32_t *)raw)[n] = (int32_t)v; break;
                case GK_INT64: ((int64_t *)raw)[n] = v; break;
                case GK_UINT16: ((uint16_t *)raw)[n] = (uint16_t)v; break;
                case GK_UINT32: ((uint32_t *)raw)[n] = (uint32_t)v; break;
                default: ((uint64_t *)raw)[n] = (uint64_t)v; break;
                }
            }
        }
        int64_t shape[1] = {n};
        gk_array *a = from_bytes(device, f, 1, shape, raw);
        for (int h = 0; h < COUNT(halves) && a; h++) {
            gk_dtype t = halves[h];
            uint16_t *expected = malloc((size_t)n * 2);
            for (int64_t i = 0; i < n; i++) {
                if (f == t)
                    expected[i] = ((uint16_t *)raw)[i];
                else if (f == GK_FLOAT32)
                    expected[i] = half_from_float(t, ((float *)raw)[i]);
                else if (gk_dtype_is_half(f))
                    expected[i] = half_from_float(t, half_to_float(f, ((uint16_t *)raw)[i]));
                else /* integers and float64: exact as double (but int64 beyond 2^53), once */
                    expected[i] = half_from_double(t, element(f, raw, i));
            }
            char what[64];
            snprintf(what, sizeof what, "%s to %s", gk_dtype_name(f), gk_dtype_name(t));
            gk_array *b = NULL;
            CHECK_OK(gk_cast(a, t, &b));
            unsigned char *got = bytes_of(b);
            check_bytes(what, t, got, (unsigned char *)expected, n, false);
            free(got);
            gk_array_free(b);
            free(expected);
        }
        gk_array_free(a);
        free(raw);
    }
}

/* --- arithmetic --- */

/* 16-bit patterns worth crossing: zeros, subnormals, the normal limits,
 * infinities, NaNs (quiet, signalling, negative), ordinary values, and
 * random ones. */
static int half_values(gk_dtype t, uint16_t *out, int max)
{
    static const uint16_t f16[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00,
                                   0x3C01, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00,
                                   0xFE00, 0x7D00, 0x3555, 0x4248, 0x5640, 0x0200, 0x4000,
                                   0x3800, 0xC500, 0x7800, 0x1000};
    static const uint16_t bf16[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x3F80,
                                    0x3F81, 0xBF80, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0,
                                    0xFFC0, 0x7FA0, 0x3EAB, 0x4049, 0x42C8, 0x0040, 0x4000,
                                    0x3F00, 0xC0A0, 0x7F00, 0x2000};
    const uint16_t *fixed = t == GK_FLOAT16 ? f16 : bf16;
    int n = COUNT(f16);
    memcpy(out, fixed, sizeof f16);
    uint64_t state = 12345 + (uint64_t)t;
    while (n < max) {
        uint16_t r = (uint16_t)next_random(&state);
        /* Mostly moderate magnitudes, where sums and products stay finite. */
        if (t == GK_FLOAT16)
            r = (uint16_t)((r & 0x83FF) | (((r >> 10) % 12 + 9) << 10));
        else
            r = (uint16_t)((r & 0x807F) | (((r >> 7) % 40 + 107) << 7));
        out[n++] = r;
    }
    return n;
}

static uint16_t nextafter_half(gk_dtype t, uint16_t xb, uint16_t yb)
{
    float x = half_to_float(t, xb), y = half_to_float(t, yb);
    if (x != x || y != y)
        return half_from_float(t, x + y);
    if (x == y)
        return yb;
    if (x == 0)
        return (uint16_t)((yb & 0x8000) | 1);
    return (x < y) == (x > 0) ? (uint16_t)(xb + 1) : (uint16_t)(xb - 1);
}

static const gk_op binary_ops[] = {GK_ADD, GK_SUB,      GK_MUL,     GK_DIV, GK_MINIMUM,
                                   GK_MAXIMUM, GK_COPYSIGN, GK_NEXTAFTER, GK_EQ, GK_NE,
                                   GK_LT,  GK_LE,       GK_GT,      GK_GE};

/* The reference of a binary op into expected[i]: a bool byte for the
 * comparisons, else 16 bits. */
static void binary_reference(gk_op op, gk_dtype t, uint16_t xb, uint16_t yb,
                             unsigned char *expected, int64_t i)
{
    float x = half_to_float(t, xb), y = half_to_float(t, yb), r = 0;
    switch (op) {
    case GK_EQ: expected[i] = x == y; return;
    case GK_NE: expected[i] = x != y; return;
    case GK_LT: expected[i] = x < y; return;
    case GK_LE: expected[i] = x <= y; return;
    case GK_GT: expected[i] = x > y; return;
    case GK_GE: expected[i] = x >= y; return;
    case GK_NEXTAFTER: ((uint16_t *)expected)[i] = nextafter_half(t, xb, yb); return;
    case GK_ADD: r = x + y; break;
    case GK_SUB: r = x - y; break;
    case GK_MUL: r = x * y; break;
    case GK_DIV: r = x / y; break;
    case GK_MINIMUM: r = (x < y || x != x) ? x : y; break;
    case GK_MAXIMUM: r = (x > y || x != x) ? x : y; break;
    case GK_COPYSIGN: r = copysignf(x, y); break;
    default: break;
    }
    ((uint16_t *)expected)[i] = half_from_float(t, r);
}

/* Every pair of values, three ways: flat contiguous arrays, a column and
 * a row broadcast together, and views with steps 2 and -1. */
static void test_binary(gk_device device)
{
    enum { V = 40, N = V * V };
    for (int h = 0; h < COUNT(halves); h++) {
        gk_dtype t = halves[h];
        uint16_t v[V], xs[N], ys[N], spread[2 * N], backwards[N];
        half_values(t, v, V);
        for (int i = 0; i < V; i++)
            for (int j = 0; j < V; j++) {
                xs[i * V + j] = v[i];
                ys[i * V + j] = v[j];
            }
        for (int k = 0; k < N; k++) {
            spread[2 * k] = xs[k];
            spread[2 * k + 1] = 0x7E00; /* skipped by the step */
            backwards[N - 1 - k] = ys[k];
        }
        int64_t flat[1] = {N}, column[2] = {V, 1}, row[2] = {1, V}, twice[1] = {2 * N};
        gk_array *x = from_bytes(device, t, 1, flat, xs), *y = from_bytes(device, t, 1, flat, ys);
        gk_array *xc = from_bytes(device, t, 2, column, v), *yr = from_bytes(device, t, 2, row, v);
        gk_array *xw = from_bytes(device, t, 1, twice, spread);
        gk_array *yw = from_bytes(device, t, 1, flat, backwards);
        gk_array *xs2 = NULL, *ys2 = NULL;
        if (xw && yw) {
            CHECK_OK(gk_slice(xw, 0, 0, 2 * N, 2, &xs2));
            CHECK_OK(gk_slice(yw, 0, N - 1, -N - 1, -1, &ys2));
        }
        for (int o = 0; o < COUNT(binary_ops) && xs2 && ys2 && xc && yr && x && y; o++) {
            gk_op op = binary_ops[o];
            bool compare = op >= GK_EQ && op <= GK_GE;
            gk_dtype out_t = compare ? GK_BOOL : t;
            unsigned char expected[2 * N];
            for (int k = 0; k < N; k++)
                binary_reference(op, t, xs[k], ys[k], expected, k);
            const gk_array *pairs[3][2] = {{x, y}, {xc, yr}, {xs2, ys2}};
            static const char *const layouts[3] = {"contiguous", "broadcast", "strided"};
            for (int l = 0; l < 3; l++) {
                char what[96];
                snprintf(what, sizeof what, "%s of %s, %s", gk_op_name(op), gk_dtype_name(t),
                         layouts[l]);
                gk_array *r = NULL;
                CHECK_OK(gk_binary(op, pairs[l][0], pairs[l][1], &r));
                if (r)
                    CHECK(gk_array_dtype(r) == out_t && gk_array_size(r) == N,
                          "%s: dtype %s, %lld elements", what, gk_dtype_name(gk_array_dtype(r)),
                          (long long)gk_array_size(r));
                unsigned char *got = bytes_of(r);
                check_bytes(what, out_t, got, expected, N, true);
                free(got);
                gk_array_free(r);
            }
        }
        gk_array *all[] = {x, y, xc, yr, xw, yw, xs2, ys2};
        for (int i = 0; i < COUNT(all); i++)
            gk_array_free(all[i]);
    }
}

static const gk_op unary_ops[] = {GK_SQRT,  GK_NEG,   GK_ABS,    GK_SQUARE, GK_RECIPROCAL,
                                  GK_FLOOR, GK_CEIL,  GK_TRUNC,  GK_ROUND,  GK_SIGN,
                                  GK_RELU,  GK_ISNAN, GK_ISINF,  GK_ISFINITE, GK_SIGNBIT};

static void unary_reference(gk_op op, gk_dtype t, uint16_t xb, unsigned char *expected,
                            int64_t i)
{
    float x = half_to_float(t, xb), r = 0;
    switch (op) {
    case GK_ISNAN: expected[i] = isnan(x) != 0; return;
    case GK_ISINF: expected[i] = isinf(x) != 0; return;
    case GK_ISFINITE: expected[i] = isfinite(x) != 0; return;
    case GK_SIGNBIT: expected[i] = signbit(x) != 0; return;
    case GK_SQRT: r = sqrtf(x); break;
    case GK_NEG: r = -x; break;
    case GK_ABS: r = fabsf(x); break;
    case GK_SQUARE: r = x * x; break;
    case GK_RECIPROCAL: r = 1.0f / x; break;
    case GK_FLOOR: r = floorf(x); break;
    case GK_CEIL: r = ceilf(x); break;
    case GK_TRUNC: r = truncf(x); break;
    case GK_ROUND: r = rintf(x); break;
    case GK_SIGN: r = x > 0 ? 1.0f : x < 0 ? -1.0f : x == 0 ? 0.0f : x; break;
    case GK_RELU: r = x < 0 ? 0.0f : x; break;
    default: break;
    }
    ((uint16_t *)expected)[i] = half_from_float(t, r);
}

/* Each op over the values: contiguous, every other one of a spread-out
 * array, and broadcast to 3 rows. */
static void test_unary(gk_device device)
{
    enum { V = 256 };
    for (int h = 0; h < COUNT(halves); h++) {
        gk_dtype t = halves[h];
        uint16_t v[V], spread[2 * V];
        half_values(t, v, V);
        for (int k = 0; k < V; k++) {
            spread[2 * k] = v[k];
            spread[2 * k + 1] = 0x7E00;
        }
        int64_t flat[1] = {V}, twice[1] = {2 * V}, rows[2] = {3, V};
        gk_array *x = from_bytes(device, t, 1, flat, v), *xw = from_bytes(device, t, 1, twice, spread);
        gk_array *strided = NULL, *wide = NULL;
        if (x && xw) {
            CHECK_OK(gk_slice(xw, 0, 0, 2 * V, 2, &strided));
            CHECK_OK(gk_broadcast_to(x, 2, rows, &wide));
        }
        for (int o = 0; o < COUNT(unary_ops) && strided && wide; o++) {
            gk_op op = unary_ops[o];
            bool test = op == GK_ISNAN || op == GK_ISINF || op == GK_ISFINITE || op == GK_SIGNBIT;
            gk_dtype out_t = test ? GK_BOOL : t;
            unsigned char expected[3 * 2 * V];
            for (int k = 0; k < 3 * V; k++)
                unary_reference(op, t, v[k % V], expected, k);
            const gk_array *inputs[3] = {x, strided, wide};
            static const char *const layouts[3] = {"contiguous", "strided", "broadcast"};
            for (int l = 0; l < 3; l++) {
                char what[96];
                snprintf(what, sizeof what, "%s of %s, %s", gk_op_name(op), gk_dtype_name(t),
                         layouts[l]);
                gk_array *r = NULL;
                CHECK_OK(gk_unary(op, inputs[l], &r));
                if (r)
                    CHECK(gk_array_dtype(r) == out_t, "%s: dtype %s", what,
                          gk_dtype_name(gk_array_dtype(r)));
                unsigned char *got = bytes_of(r);
                check_bytes(what, out_t, got, expected, l == 2 ? 3 * V : V, true);
                free(got);
                gk_array_free(r);
            }
        }
        gk_array_free(wide);
        gk_array_free(strided);
        gk_array_free(xw);
        gk_array_free(x);
    }
}

/* --- moving and making values --- */

/* where keeps the chosen bits (NaN payloads too), in every layout; fill,
 * arange and take. */
static void test_where_fill_arange_take(gk_device device)
{
    enum { V = 64 };
    for (int h = 0; h < COUNT(halves); h++) {
        gk_dtype t = halves[h];
        uint16_t a[V], b[V], expected[3 * V];
        unsigned char condition[V];
        half_values(t, a, V);
        for (int i = 0; i < V; i++) {
            b[i] = a[V - 1 - i];
            condition[i] = i % 3 == 0;
        }
        int64_t flat[1] = {V}, one[1] = {1};
        gk_array *ga = from_bytes(device, t, 1, flat, a), *gb = from_bytes(device, t, 1, flat, b);
        gk_array *gc = from_bytes(device, GK_BOOL, 1, flat, condition);
        uint16_t nan_payload = t == GK_FLOAT16 ? 0xFD55 : 0xFFA5;
        gk_array *gs = from_bytes(device, t, 1, one, &nan_payload);
        if (!ga || !gb || !gc || !gs)
            return;
        gk_array *r = NULL;
        CHECK_OK(gk_where(gc, ga, gb, &r));
        for (int i = 0; i < V; i++)
            expected[i] = condition[i] ? a[i] : b[i];
        unsigned char *got = bytes_of(r);
        check_bytes("where", t, got, (unsigned char *)expected, V, false);
        free(got);
        gk_array_free(r);
        /* b broadcast from one element, a reversed. */
        gk_array *ra = NULL;
        CHECK_OK(gk_slice(ga, 0, V - 1, -V - 1, -1, &ra));
        r = NULL;
        CHECK_OK(gk_where(gc, ra, gs, &r));
        for (int i = 0; i < V; i++)
            expected[i] = condition[i] ? a[V - 1 - i] : nan_payload;
        got = bytes_of(r);
        check_bytes("where, strided and broadcast", t, got, (unsigned char *)expected, V, false);
        free(got);
        gk_array_free(r);
        gk_array_free(ra);

        /* take: a permutation with repeats, then a 2-d take along axis 1. */
        int64_t indices[V];
        for (int i = 0; i < V; i++)
            indices[i] = (i * 7 + 3) % V / (i % 5 == 0 ? 2 : 1);
        gk_array *gi = from_bytes(device, GK_INT64, 1, flat, indices);
        r = NULL;
        if (gi)
            CHECK_OK(gk_take(ga, gi, 0, &r));
        for (int i = 0; i < V; i++)
            expected[i] = a[indices[i]];
        got = bytes_of(r);
        check_bytes("take", t, got, (unsigned char *)expected, V, false);
        free(got);
        gk_array_free(r);
        int64_t square[2] = {8, 8};
        gk_array *ga2 = from_bytes(device, t, 2, square, a);
        int64_t cols[3] = {7, 0, 7};
        int64_t three[1] = {3};
        gk_array *gi2 = from_bytes(device, GK_INT64, 1, three, cols);
        r = NULL;
        if (ga2 && gi2)
            CHECK_OK(gk_take(ga2, gi2, 1, &r));
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 3; j++)
                expected[i * 3 + j] = a[i * 8 + cols[j]];
        got = bytes_of(r);
        check_bytes("take along axis 1", t, got, (unsigned char *)expected, 24, false);
        free(got);
        gk_array_free(r);
        gk_array_free(gi2);
        gk_array_free(ga2);
        gk_array_free(gi);

        /* fill: values rounded once from double, out of range to infinity,
         * NaN quiet. */
        static const double fills[] = {0.1, -0.0, 65520.0, 65519.0, 1e-8, 3e38, 1e39,
                                       1 + 0x1p-11 + 0x1p-40, NAN, -INFINITY};
        for (int f = 0; f < COUNT(fills); f++) {
            int64_t shape[2] = {5, 7};
            gk_array *full = NULL;
            CHECK_OK(gk_full(device, t, 2, shape, fills[f], &full));
            for (int i = 0; i < 35; i++)
                expected[i] = half_from_double(t, fills[f]);
            char what[64];
            snprintf(what, sizeof what, "full of %s with %g", gk_dtype_name(t), fills[f]);
            got = bytes_of(full);
            check_bytes(what, t, got, (unsigned char *)expected, 35, false);
            free(got);
            /* A 0-d array assigned to every other column of it. */
            gk_array *columns = NULL;
            if (full)
                CHECK_OK(gk_slice(full, 1, 0, 7, 2, &columns));
            gk_array *scalar = NULL;
            CHECK_OK(gk_scalar(device, t, 2.5, &scalar));
            if (columns && scalar) {
                CHECK_OK(gk_assign(columns, scalar));
                for (int i = 0; i < 35; i++)
                    expected[i] = i % 7 % 2 == 0 ? half_from_double(t, 2.5)
                                                 : half_from_double(t, fills[f]);
                snprintf(what, sizeof what, "strided assignment of a %s scalar", gk_dtype_name(t));
                got = bytes_of(full);
                check_bytes(what, t, got, (unsigned char *)expected, 35, false);
                free(got);
            }
            gk_array_free(scalar);
            gk_array_free(columns);
            gk_array_free(full);
        }

        /* arange: start + i * step in double, rounded once. */
        static const double ranges[][3] = {{0, 10, 0.1}, {-3, 3, 0.37}, {60000, 70000, 7.5},
                                           {0, 300, 1}};
        for (int k = 0; k < COUNT(ranges); k++) {
            gk_array *seq = NULL;
            CHECK_OK(gk_arange(device, t, ranges[k][0], ranges[k][1], ranges[k][2], &seq));
            if (!seq)
                continue;
            int64_t n = gk_array_size(seq);
            int64_t want = (int64_t)ceil((ranges[k][1] - ranges[k][0]) / ranges[k][2]);
            CHECK(n == want, "arange length %lld, expected %lld", (long long)n, (long long)want);
            uint16_t *values = malloc((size_t)(n ? n : 1) * 2);
            for (int64_t i = 0; i < n; i++)
                values[i] = half_from_double(t, ranges[k][0] + (double)i * ranges[k][2]);
            char what[64];
            snprintf(what, sizeof what, "arange of %s from %g step %g", gk_dtype_name(t),
                     ranges[k][0], ranges[k][2]);
            got = bytes_of(seq);
            check_bytes(what, t, got, (unsigned char *)values, n, false);
            free(got);
            free(values);
            gk_array_free(seq);
        }
        gk_array_free(gs);
        gk_array_free(gc);
        gk_array_free(gb);
        gk_array_free(ga);
    }
}

/* The families the core never sends half dtypes to refuse them, naming the
 * dtype, without compiling anything. */
static void test_refusals(gk_device device)
{
    if (device.kind == GK_DEVICE_CPU)
        return;
    for (int h = 0; h < COUNT(halves); h++) {
        gk_dtype t = halves[h];
        static const char *const families[] = {"reduce", "scan", "sort", "matmul", "random",
                                               "index"};
        for (int f = 0; f < COUNT(families); f++) {
            CHECK(!gk_gpu_family_has_dtype(families[f], t), "%s has %s", families[f],
                  gk_dtype_name(t));
            gk_gpu_function *function;
            CHECK_FAILS(gk_gpu_builtin_function(device, families[f], t, "x", &function),
                        GK_ERR_UNSUPPORTED_DTYPE, gk_dtype_name(t));
        }
        CHECK(gk_gpu_family_has_dtype("elementwise", t), "elementwise lacks %s",
              gk_dtype_name(t));
        /* only a vendor's mixed-precision GEMM takes 16-bit floats; without
         * one (OpenCL), GK_ERR_NOT_FOUND sends the core to float32 copies */
        if (device.kind == GK_DEVICE_OPENCL)
            CHECK_FAILS(gpu_matmul(device, t, 1, 2, 2, 2, NULL, 0, NULL, 0, NULL, 0),
                        GK_ERR_NOT_FOUND, "mixed-precision");
        gk_operand out = {NULL, t, {0}};
        CHECK_FAILS(gpu_random(device, &out, 4, 1, false, 0, 1), GK_ERR_UNSUPPORTED_DTYPE,
                    gk_dtype_name(t));
        CHECK_FAILS(gpu_sort(device, &out, NULL, &out, 1, 4), GK_ERR_UNSUPPORTED_DTYPE,
                    "sort");
    }
}

static void run_all(gk_device device)
{
    test_from_half(device);
    test_to_half(device);
    test_binary(device);
    test_unary(device);
    test_where_fill_arange_take(device);
    test_refusals(device);
}

int main(void)
{
    gk_device devices[16];
    int count = half_devices(devices, 16);
    if (count == 0) {
        printf("skipped: no CUDA or OpenCL device (GPUKIT_TEST_DEVICES names others)\n");
        return 0;
    }
    for (int d = 0; d < count; d++) {
        int before = check_failures;
        run_all(devices[d]);
        char name[GK_DEVICE_NAME_MAX];
        gk_device_name(devices[d], name, sizeof name);
        if (check_failures != before)
            fprintf(stderr, "  (on %s)\n", name);
        printf("%s: done\n", name);
    }
    printf("%d elements compared\n", cases);
    CHECK_DONE();
}
