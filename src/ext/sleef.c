/* Run-time loading of SLEEF: see sleef.h. */
#include "ext/sleef.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SLEEF's names of the functions, in gk_sleef_function's order. */
static const char *const function_names[GK_SLEEF_FUNCTION_COUNT] = {
    [GK_SLEEF_EXP] = "exp",     [GK_SLEEF_LOG] = "log",     [GK_SLEEF_SIN] = "sin",
    [GK_SLEEF_COS] = "cos",     [GK_SLEEF_TAN] = "tan",     [GK_SLEEF_TANH] = "tanh",
    [GK_SLEEF_ASIN] = "asin",   [GK_SLEEF_ACOS] = "acos",   [GK_SLEEF_ATAN] = "atan",
    [GK_SLEEF_SINH] = "sinh",   [GK_SLEEF_COSH] = "cosh",   [GK_SLEEF_ASINH] = "asinh",
    [GK_SLEEF_ACOSH] = "acosh", [GK_SLEEF_ATANH] = "atanh", [GK_SLEEF_LOG1P] = "log1p",
    [GK_SLEEF_EXPM1] = "expm1", [GK_SLEEF_POW] = "pow",
};

/* The float32 functions taken in SLEEF's 3.5-ULP variant (see sleef.h). */
static bool float32_u35(gk_sleef_function f)
{
    return f == GK_SLEEF_LOG || f == GK_SLEEF_ASIN || f == GK_SLEEF_TAN;
}

/* Per ISA: its suffix and the vector widths of float and double. */
static const struct {
    const char *suffix;
    int float_lanes, double_lanes;
} isas[GK_SLEEF_ISA_COUNT] = {
    [GK_SLEEF_AVX2] = {"avx2", 8, 4},
    [GK_SLEEF_AVX512F] = {"avx512f", 16, 8},
};

static gk_sleef table;
static bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static gk_sleef_entry symbol(void *library, const char *name, char type, int lanes,
                             const char *precision, const char *isa)
{
    char full[64];
    snprintf(full, sizeof full, "Sleef_%s%c%d_%s%s", name, type, lanes, precision, isa);
    void *address = dlsym(library, full);
    gk_sleef_entry entry = NULL;
    /* dlsym gives an object pointer; POSIX guarantees it converts. */
    if (address)
        memcpy(&entry, &address, sizeof entry);
    return entry;
}

static void load(void)
{
    const char *override = getenv("GPUKIT_SLEEF_LIBRARY");
    const char *path = override && *override ? override : "libsleef.so.3";
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library)
        return;
    table.library = library;
    snprintf(table.path, sizeof table.path, "%s", path);
    for (int isa = 0; isa < GK_SLEEF_ISA_COUNT; isa++)
        for (int f = 0; f < GK_SLEEF_FUNCTION_COUNT; f++) {
            table.float32[isa][f] =
                symbol(library, function_names[f], 'f', isas[isa].float_lanes,
                       float32_u35((gk_sleef_function)f) ? "u35" : "u10", isas[isa].suffix);
            table.float64[isa][f] = symbol(library, function_names[f], 'd',
                                           isas[isa].double_lanes, "u10", isas[isa].suffix);
        }
    loaded = true;
}

const gk_sleef *gk_sleef_get(void)
{
    pthread_once(&once, load);
    return loaded ? &table : NULL;
}
