/* Run-time loading of NVRTC: see nvrtc.h. */
#include "ext/nvrtc.h"

#include "core/error.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static gk_nvrtc nvrtc_table;
static gk_status load_status;
static char load_message[1024];

/* Newest first: a newer NVRTC knows newer GPUs. */
static const char *const library_names[] = {
    "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so",
};

#define REQUIRED 1
#define OPTIONAL 0

static const struct {
    const char *name;
    int required;
    size_t offset;
} entry_points[] = {
    {"nvrtcGetErrorString", REQUIRED, offsetof(gk_nvrtc, GetErrorString)},
    {"nvrtcVersion", REQUIRED, offsetof(gk_nvrtc, Version)},
    {"nvrtcGetNumSupportedArchs", OPTIONAL, offsetof(gk_nvrtc, GetNumSupportedArchs)},
    {"nvrtcGetSupportedArchs", OPTIONAL, offsetof(gk_nvrtc, GetSupportedArchs)},
    {"nvrtcCreateProgram", REQUIRED, offsetof(gk_nvrtc, CreateProgram)},
    {"nvrtcCompileProgram", REQUIRED, offsetof(gk_nvrtc, CompileProgram)},
    {"nvrtcGetPTXSize", REQUIRED, offsetof(gk_nvrtc, GetPTXSize)},
    {"nvrtcGetPTX", REQUIRED, offsetof(gk_nvrtc, GetPTX)},
    {"nvrtcGetCUBINSize", OPTIONAL, offsetof(gk_nvrtc, GetCUBINSize)},
    {"nvrtcGetCUBIN", OPTIONAL, offsetof(gk_nvrtc, GetCUBIN)},
    {"nvrtcGetProgramLogSize", REQUIRED, offsetof(gk_nvrtc, GetProgramLogSize)},
    {"nvrtcGetProgramLog", REQUIRED, offsetof(gk_nvrtc, GetProgramLog)},
    {"nvrtcDestroyProgram", REQUIRED, offsetof(gk_nvrtc, DestroyProgram)},
};

static void load(void)
{
    gk_nvrtc *n = &nvrtc_table;
    const char *override = getenv("GPUKIT_NVRTC_LIBRARY");
    if (override && *override) {
        n->library = dlopen(override, RTLD_NOW | RTLD_LOCAL);
        if (!n->library) {
            const char *why = dlerror();
            load_status = GK_ERR_NOT_FOUND;
            snprintf(load_message, sizeof load_message,
                     "NVRTC not found: GPUKIT_NVRTC_LIBRARY=%s cannot be loaded (%s); install the "
                     "CUDA toolkit's NVRTC or fix the path",
                     override, why ? why : "unknown reason");
            return;
        }
        snprintf(n->path, sizeof n->path, "%s", override);
    } else {
        for (size_t i = 0; i < sizeof library_names / sizeof library_names[0] && !n->library; i++) {
            n->library = dlopen(library_names[i], RTLD_NOW | RTLD_LOCAL);
            if (n->library)
                snprintf(n->path, sizeof n->path, "%s", library_names[i]);
        }
        if (!n->library) {
            load_status = GK_ERR_NOT_FOUND;
            snprintf(load_message, sizeof load_message,
                     "NVRTC (libnvrtc.so.13, .12 or .11.2) not found: install the CUDA toolkit "
                     "(its lib64 directory must be known to the loader: ldconfig or "
                     "LD_LIBRARY_PATH), or set GPUKIT_NVRTC_LIBRARY to the library's path");
            return;
        }
    }

    for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; i++) {
        void *symbol = dlsym(n->library, entry_points[i].name);
        if (!symbol && entry_points[i].required) {
            load_status = GK_ERR_NOT_FOUND;
            snprintf(load_message, sizeof load_message,
                     "%s is not a usable NVRTC (it has no %s): install the CUDA toolkit's NVRTC",
                     n->path, entry_points[i].name);
            dlclose(n->library);
            memset(n, 0, sizeof *n);
            return;
        }
        memcpy((char *)n + entry_points[i].offset, &symbol, sizeof symbol);
    }

    if (n->Version(&n->major, &n->minor) != NVRTC_SUCCESS)
        n->major = n->minor = 0;
    int count = 0;
    if (n->GetNumSupportedArchs && n->GetSupportedArchs &&
        n->GetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
        int *archs = malloc((size_t)count * sizeof *archs);
        if (archs && n->GetSupportedArchs(archs) == NVRTC_SUCCESS) {
            int room = (int)(sizeof n->archs / sizeof n->archs[0]);
            for (int i = 0; i < count && n->arch_count < room; i++)
                n->archs[n->arch_count++] = archs[i];
        }
        free(archs);
    }
    /* Ascending, whatever order the library gave. */
    for (int i = 1; i < n->arch_count; i++)
        for (int j = i; j > 0 && n->archs[j - 1] > n->archs[j]; j--) {
            int t = n->archs[j];
            n->archs[j] = n->archs[j - 1];
            n->archs[j - 1] = t;
        }
    load_status = GK_OK;
}

gk_status gk_nvrtc_open(const gk_nvrtc **nvrtc)
{
    pthread_once(&load_once, load);
    if (load_status != GK_OK) {
        *nvrtc = NULL;
        return gk_fail(load_status, "%s", load_message);
    }
    *nvrtc = &nvrtc_table;
    return GK_OK;
}

bool gk_nvrtc_supports(const gk_nvrtc *nvrtc, int sm)
{
    if (nvrtc->arch_count == 0)
        return true;
    for (int i = 0; i < nvrtc->arch_count; i++)
        if (nvrtc->archs[i] == sm)
            return true;
    return false;
}

int gk_nvrtc_newest_up_to(const gk_nvrtc *nvrtc, int sm)
{
    int best = 0;
    for (int i = 0; i < nvrtc->arch_count; i++)
        if (nvrtc->archs[i] <= sm && nvrtc->archs[i] > best)
            best = nvrtc->archs[i];
    return best;
}

/* The program log, cut to GK_NVRTC_LOG_MAX bytes; NULL when empty. */
static char *program_log(const gk_nvrtc *n, nvrtcProgram program)
{
    size_t size = 0;
    if (n->GetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1)
        return NULL;
    char *log = malloc(size);
    if (!log)
        return NULL;
    if (n->GetProgramLog(program, log) != NVRTC_SUCCESS) {
        free(log);
        return NULL;
    }
    log[size - 1] = '\0';
    if (size > GK_NVRTC_LOG_MAX) {
        char note[64];
        int note_length = snprintf(note, sizeof note, "\n[... %zu more bytes of log cut]",
                                   size - GK_NVRTC_LOG_MAX);
        memcpy(log + GK_NVRTC_LOG_MAX - 1 - note_length, note, (size_t)note_length + 1);
        char *shorter = realloc(log, GK_NVRTC_LOG_MAX);
        if (shorter)
            log = shorter;
    }
    return log;
}

/* Splits `options` on spaces into a malloc'd array of malloc'd words
 * following `first` (which is not copied). */
static const char **split_options(const char *first, const char *options, int *count)
{
    size_t capacity = 2;
    for (const char *p = options; p && *p; p++)
        capacity += *p == ' ';
    const char **words = calloc(capacity, sizeof *words);
    if (!words)
        return NULL;
    int n = 0;
    words[n++] = first;
    for (const char *p = options; p && *p;) {
        while (*p == ' ')
            p++;
        const char *end = p;
        while (*end && *end != ' ')
            end++;
        if (end > p) {
            char *word = strndup(p, (size_t)(end - p));
            if (!word) {
                for (int i = 1; i < n; i++)
                    free((char *)words[i]);
                free(words);
                return NULL;
            }
            words[n++] = word;
        }
        p = end;
    }
    *count = n;
    return words;
}

static void free_options(const char **words, int count)
{
    for (int i = 1; i < count; i++)
        free((char *)words[i]);
    free(words);
}

gk_status gk_nvrtc_compile(const char *source, const char *name, const char *options,
                           const char *arch, bool cubin, void **binary, size_t *size,
                           char **log)
{
    const gk_nvrtc *n;
    *binary = NULL;
    *size = 0;
    if (log)
        *log = NULL;
    gk_status status = gk_nvrtc_open(&n);
    if (status != GK_OK)
        return status;
    if (strncmp(arch, "sm_", 3) != 0 || arch[3] < '0' || arch[3] > '9')
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "'%s' is not a CUDA architecture: use sm_XY, e.g. sm_90", arch);
    if (cubin && (!n->GetCUBINSize || !n->GetCUBIN))
        return gk_fail(GK_ERR_NOT_FOUND,
                       "NVRTC %d.%d cannot make machine code (no nvrtcGetCUBIN): install "
                       "CUDA 11.1 or newer",
                       n->major, n->minor);

    /* -arch=sm_XY makes machine code (and PTX); -arch=compute_XY makes
     * only PTX, which is quicker when PTX is all that is wanted. */
    char arch_option[64];
    snprintf(arch_option, sizeof arch_option, "-arch=%s_%s", cubin ? "sm" : "compute", arch + 3);
    int count = 0;
    const char **words = split_options(arch_option, options, &count);
    if (!words)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory compiling %s", name);

    nvrtcProgram program = NULL;
    nvrtcResult result = n->CreateProgram(&program, source, name, 0, NULL, NULL);
    if (result != NVRTC_SUCCESS) {
        free_options(words, count);
        return gk_fail(result == NVRTC_ERROR_OUT_OF_MEMORY ? GK_ERR_OUT_OF_MEMORY : GK_ERR_DRIVER,
                       "NVRTC could not take %s: %s", name, n->GetErrorString(result));
    }
    result = n->CompileProgram(program, count, words);
    free_options(words, count);
    char *text = program_log(n, program);
    if (result != NVRTC_SUCCESS) {
        status = gk_fail(result == NVRTC_ERROR_OUT_OF_MEMORY ? GK_ERR_OUT_OF_MEMORY
                                                            : GK_ERR_INVALID_ARGUMENT,
                         "NVRTC %d.%d could not compile %s for %s (%s):\n%s", n->major, n->minor,
                         name, arch, n->GetErrorString(result), text ? text : "(no log)");
        if (log)
            *log = text;
        else
            free(text);
        n->DestroyProgram(&program);
        return status;
    }

    size_t bytes = 0;
    result = cubin ? n->GetCUBINSize(program, &bytes) : n->GetPTXSize(program, &bytes);
    char *out = result == NVRTC_SUCCESS && bytes > 0 ? malloc(bytes) : NULL;
    if (out)
        result = cubin ? n->GetCUBIN(program, out) : n->GetPTX(program, out);
    n->DestroyProgram(&program);
    if (!out || result != NVRTC_SUCCESS) {
        free(out);
        free(text);
        return gk_fail(GK_ERR_DRIVER, "NVRTC compiled %s for %s but gave no %s (%s)", name, arch,
                       cubin ? "machine code" : "PTX", n->GetErrorString(result));
    }
    if (!cubin)
        out[bytes - 1] = '\0';
    *binary = out;
    *size = bytes;
    if (log)
        *log = text;
    else
        free(text);
    return GK_OK;
}
