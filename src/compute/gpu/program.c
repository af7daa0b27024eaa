/* Compiled GPU programs: built-in kernel sources and user sources, each
 * compiled once per device and kept loaded. A program is looked for in
 * memory, then in the disk cache (gpu/cache.h), then compiled, and the
 * compiled binary is written back to the disk cache. Built-in programs on
 * CUDA load the PTX made at build time when there is one, so a machine
 * with the driver but no toolkit still runs every built-in op. */
#include "compute/gpu/cache.h"
#include "compute/gpu/gpu.h"

#include "core/embedded.h"
#include "core/error.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dialect.h, types.h, complex.h and one <family>.gk per family
 * (cmake/embed.cmake). */
extern const gk_embedded_file gk_kernel_source_files[];
extern const size_t gk_kernel_source_files_count;

/* A loaded program: a user or built-in source by its cache key, or a
 * built-in program by (family, dtype). */
typedef struct loaded_program {
    gk_device device;
    gk_cache_key key;
    const char *family; /* NULL for programs found by key */
    gk_dtype dtype;
    gk_gpu_module *module;
} loaded_program;

static loaded_program *programs;
static size_t program_count, program_capacity;
/* Held while looking up and while compiling, so that two threads needing
 * one program compile it once. */
static pthread_mutex_t programs_lock = PTHREAD_MUTEX_INITIALIZER;

static const gk_embedded_file *source_file(const char *name)
{
    for (size_t i = 0; i < gk_kernel_source_files_count; i++)
        if (strcmp(gk_kernel_source_files[i].name, name) == 0)
            return &gk_kernel_source_files[i];
    return NULL;
}

/* Families are the .gk files, in the embedded table's (sorted) order,
 * named without the extension. */
enum { MAX_FAMILIES = 32, MAX_FAMILY_NAME = 64 };
static char family_names[MAX_FAMILIES][MAX_FAMILY_NAME];
static int family_count;
static pthread_once_t families_once = PTHREAD_ONCE_INIT;

static void list_families(void)
{
    for (size_t f = 0; f < gk_kernel_source_files_count && family_count < MAX_FAMILIES; f++) {
        const char *name = gk_kernel_source_files[f].name;
        size_t length = strlen(name);
        if (length > 3 && length < MAX_FAMILY_NAME && strcmp(name + length - 3, ".gk") == 0) {
            memcpy(family_names[family_count], name, length - 3);
            family_names[family_count][length - 3] = 0;
            family_count++;
        }
    }
}

const char *gk_gpu_family(int i)
{
    pthread_once(&families_once, list_families);
    return i >= 0 && i < family_count ? family_names[i] : NULL;
}

bool gk_gpu_family_has_dtype(const char *family, gk_dtype dtype)
{
    if ((unsigned)dtype >= GK_DTYPE_COUNT)
        return false;
    /* The 16-bit floats have elementwise programs only, complex also
     * matrix products: the core computes their reductions, sorts, ... from
     * elementwise work, a float32 copy or the real and imaginary parts. */
    if (gk_dtype_is_complex(dtype))
        return strcmp(family, "elementwise") == 0 || strcmp(family, "matmul") == 0;
    return !gk_dtype_is_half(dtype) || strcmp(family, "elementwise") == 0;
}

gk_status gk_gpu_refuse_half(const char *what, gk_dtype dtype)
{
    if (!gk_dtype_is_half(dtype))
        return GK_OK;
    return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                   "%s on a GPU: no kernels for %s; convert to float32 first (the core "
                   "computes 16-bit floats in float32)",
                   what, gk_dtype_name(dtype));
}

/* The parts one after the other, each followed by a line break, as one
 * NUL-terminated text (malloc'd): how a program's source is assembled. */
static gk_status join_lines(const void *const *parts, const size_t *sizes, int count,
                            char **text)
{
    size_t total = 1;
    for (int i = 0; i < count; i++)
        total += sizes[i] + 1;
    char *out = malloc(total), *end = out;
    if (!out)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of host memory");
    for (int i = 0; i < count; i++) {
        memcpy(end, parts[i], sizes[i]);
        end += sizes[i];
        *end++ = '\n';
    }
    *end = 0;
    *text = out;
    return GK_OK;
}

/* dialect.h in front of `source`, as every portable-dialect program has,
 * then a #line directive, so that the compiler's messages give the lines
 * of the user's source as they count them ("source:4:12: use of
 * undeclared identifier"), not those of the joined text. */
static gk_status with_dialect(const char *source, char **text)
{
    static const char line[] = "#line 1 \"source\"";
    const gk_embedded_file *dialect = source_file("dialect.h");
    const void *parts[] = {dialect->data, line, source};
    size_t sizes[] = {dialect->size, sizeof line - 1, strlen(source)};
    return join_lines(parts, sizes, 3, text);
}

gk_status gk_gpu_builtin_source(const char *family, gk_dtype dtype, char **source,
                                char *options, size_t options_size)
{
    char file_name[MAX_FAMILY_NAME + 4];
    snprintf(file_name, sizeof file_name, "%s.gk", family);
    const gk_embedded_file *dialect = source_file("dialect.h"), *types = source_file("types.h"),
                           *complex = source_file("complex.h"), *body = source_file(file_name);
    if (!body)
        return gk_fail(GK_ERR_NOT_FOUND, "no built-in kernel family '%s'", family);
    const void *parts[] = {dialect->data, types->data, complex->data, body->data};
    size_t sizes[] = {dialect->size, types->size, complex->size, body->size};
    gk_status status = join_lines(parts, sizes, 4, source);
    if (status == GK_OK)
        snprintf(options, options_size, "-DGK_DTYPE=%d", (int)dtype);
    return status;
}

/* Records a loaded program (under programs_lock). */
static gk_status remember(const loaded_program *program)
{
    if (program_count == program_capacity) {
        size_t capacity = program_capacity ? 2 * program_capacity : 64;
        loaded_program *grown = realloc(programs, capacity * sizeof *grown);
        if (!grown)
            return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of host memory");
        programs = grown;
        program_capacity = capacity;
    }
    programs[program_count++] = *program;
    return GK_OK;
}

/* The cache key of a program's full text (dialect included) on a device:
 * everything that changes what the compiler makes of it. */
static gk_status program_key(gk_device device, gk_gpu_language language, const char *text,
                             const char *options, gk_cache_key *key)
{
    const gk_gpu_info *info;
    gk_status status = gk_gpu_info_of(device, &info);
    if (status != GK_OK)
        return status;
    const char *parts[] = {"gpukit kernel cache 1", gk_gpu_driver_of(device)->name,
                           info->architecture, info->compiler,
                           language == GK_GPU_CUDA_C ? "cuda-c" : "portable", options, text};
    size_t lengths[7];
    for (int i = 0; i < 7; i++)
        lengths[i] = strlen(parts[i]);
    *key = gk_cache_key_of(parts, lengths, 7);
    return GK_OK;
}

/* The disk cache, then the compiler; the compiled binary goes back to the
 * disk cache. */
static gk_status compile_cached(gk_device device, gk_gpu_language language, const char *text,
                                const char *options, const gk_cache_key *key,
                                gk_gpu_module **module)
{
    const gk_gpu_driver *driver = gk_gpu_driver_of(device);
    void *binary;
    size_t size;
    if (gk_cache_read(key, &binary, &size) == GK_OK) {
        gk_status status = driver->load(device, binary, size, module);
        free(binary);
        if (status == GK_OK)
            return GK_OK;
        /* A binary the driver no longer takes: compile afresh below, and
         * the write replaces it. */
    }
    gk_status status = driver->build(device, language, text, options, module, &binary, &size);
    if (status != GK_OK)
        return status;
    (void)gk_cache_write(key, binary, size); /* best effort: only speed is lost */
    free(binary);
    return GK_OK;
}

/* gk_gpu_program for a full text, with programs_lock held. */
static gk_status program_locked(gk_device device, gk_gpu_language language, const char *text,
                                const char *options, gk_gpu_module **module)
{
    gk_cache_key key;
    gk_status status = program_key(device, language, text, options, &key);
    if (status != GK_OK)
        return status;
    for (size_t i = 0; i < program_count; i++)
        if (!programs[i].family && gk_device_equal(programs[i].device, device) &&
            memcmp(programs[i].key.bytes, key.bytes, sizeof key.bytes) == 0) {
            *module = programs[i].module;
            return GK_OK;
        }
    status = compile_cached(device, language, text, options, &key, module);
    if (status == GK_OK)
        status = remember(&(loaded_program){device, key, NULL, GK_BOOL, *module});
    return status;
}

gk_status gk_gpu_program(gk_device device, gk_gpu_language language, const char *source,
                         const char *options, gk_gpu_module **module)
{
    char *text = NULL;
    gk_status status;
    if (language == GK_GPU_PORTABLE) {
        status = with_dialect(source, &text);
        if (status != GK_OK)
            return status;
    } else if (!(text = strdup(source))) {
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    pthread_mutex_lock(&programs_lock);
    status = program_locked(device, language, text, options ? options : "", module);
    pthread_mutex_unlock(&programs_lock);
    free(text);
    return status;
}

/* Loads a built-in program (programs_lock held): the PTX made at build
 * time when the driver has it, else the source through the compiler and
 * the caches. */
static gk_status load_builtin(gk_device device, const char *family, gk_dtype dtype,
                              gk_gpu_module **module)
{
    const gk_gpu_driver *driver = gk_gpu_driver_of(device);
    char program_name[MAX_FAMILY_NAME + 16];
    snprintf(program_name, sizeof program_name, "%s_%s", family, gk_dtype_name(dtype));
    const void *prebuilt;
    size_t prebuilt_size;
    if (driver->prebuilt && driver->prebuilt(program_name, &prebuilt, &prebuilt_size) &&
        driver->load(device, prebuilt, prebuilt_size, module) == GK_OK)
        return GK_OK;
    /* No prebuilt code, or the driver refused it (too old for its PTX
     * version): compile the source. */
    char *source, options[64];
    gk_status status = gk_gpu_builtin_source(family, dtype, &source, options, sizeof options);
    if (status != GK_OK)
        return status;
    status = program_locked(device, GK_GPU_PORTABLE, source, options, module);
    free(source);
    if (status != GK_OK) {
        char name[GK_DEVICE_NAME_MAX];
        return gk_fail(status, "cannot build gpukit's %s kernels for %s: %s", program_name,
                       gk_device_name(device, name, sizeof name), gk_last_error());
    }
    return GK_OK;
}

gk_status gk_gpu_builtin_function(gk_device device, const char *family, gk_dtype dtype,
                                  const char *kernel, gk_gpu_function **function)
{
    const gk_gpu_info *info;
    gk_status status = gk_gpu_info_of(device, &info);
    if (status != GK_OK)
        return status;
    if (!gk_gpu_family_has_dtype(family, dtype))
        return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                       "gpu: no %s kernels for %s (the 16-bit floats and complex have "
                       "elementwise programs, complex also matmul; the core builds the rest "
                       "from them)",
                       family, gk_dtype_name(dtype));
    if (gk_gpu_needs_fp64(dtype) && !info->fp64) {
        char name[GK_DEVICE_NAME_MAX];
        return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                       "%s does not support %s (no cl_khr_fp64): use %s arrays there, or "
                       "another device",
                       gk_device_name(device, name, sizeof name), gk_dtype_name(dtype),
                       dtype == GK_FLOAT64 ? "float32" : "complex64");
    }
    gk_gpu_module *module = NULL;
    pthread_mutex_lock(&programs_lock);
    for (size_t i = 0; i < program_count && !module; i++)
        if (programs[i].family && programs[i].dtype == dtype &&
            strcmp(programs[i].family, family) == 0 && gk_device_equal(programs[i].device, device))
            module = programs[i].module;
    if (!module) {
        status = load_builtin(device, family, dtype, &module);
        if (status == GK_OK)
            status = remember(&(loaded_program){device, {{0}}, family, dtype, module});
    }
    pthread_mutex_unlock(&programs_lock);
    if (status != GK_OK)
        return status;
    return gk_gpu_driver_of(device)->function(device, module, kernel, function);
}
