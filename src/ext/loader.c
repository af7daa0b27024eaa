/* Run-time loading of a library into a table of its functions: see
 * loader.h. */
#include "ext/loader.h"

#include "core/error.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *gk_dlopen_with_default(const char *path, const gk_load_default *setting)
{
    bool chosen = !setting || getenv(setting->variable);
    for (size_t i = 0; !chosen && setting->chosen && setting->chosen[i]; i++)
        chosen = getenv(setting->chosen[i]) != NULL;
    if (!chosen)
        setenv(setting->variable, setting->value, 0);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!chosen)
        unsetenv(setting->variable);
    return handle;
}

/* Opens `path` and fills lib's table from it; false (with *why set, the
 * library closed and the table cleared) when it cannot be opened or lacks
 * a required function. */
static int try_library(gk_library *lib, const char *path, char *why, size_t why_size)
{
    void *handle = gk_dlopen_with_default(path, lib->load_default);
    if (!handle) {
        const char *error = dlerror();
        snprintf(why, why_size, "%s", error ? error : path);
        return 0;
    }
    char *table = lib->table;
    for (size_t i = 0; i < lib->entry_count; i++) {
        void *symbol = dlsym(handle, lib->entry_points[i].name);
        if (!symbol && lib->entry_points[i].required) {
            snprintf(why, why_size, "%s has no %s", path, lib->entry_points[i].name);
            dlclose(handle);
            memset(table, 0, lib->table_size);
            return 0;
        }
        memcpy(table + lib->entry_points[i].offset, &symbol, sizeof symbol);
    }
    *lib->handle = handle;
    snprintf(lib->path, lib->path_size, "%s", path);
    return 1;
}

static void load(gk_library *lib)
{
    char why[600] = "";
    const char *override = getenv(lib->variable);
    if (override && *override) {
        if (try_library(lib, override, why, sizeof why))
            return;
        lib->status = GK_ERR_NOT_FOUND;
        snprintf(lib->message, sizeof lib->message,
                 "no usable %s at %s=%s (%s): point it at a %s library, or unset it and %s",
                 lib->what, lib->variable, override, why, lib->what, lib->install);
        return;
    }
    /* The first usable one; the reason given is the first candidate's. */
    char first_why[600] = "";
    for (size_t i = 0; i < lib->name_count; i++) {
        if (try_library(lib, lib->names[i], why, sizeof why))
            return;
        if (i == 0)
            snprintf(first_why, sizeof first_why, "%s", why);
    }
    char names[200] = "";
    for (size_t i = 0; i < lib->name_count; i++) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s",
                 i == 0 ? "" : i + 1 == lib->name_count ? " or " : ", ", lib->names[i]);
    }
    lib->status = GK_ERR_NOT_FOUND;
    snprintf(lib->message, sizeof lib->message,
             "%s not found (no %s: %s): %s, or set %s to a %s library", lib->what, names,
             first_why, lib->install, lib->variable, lib->what);
}

/* One lock for every library's first load: loads are rare and short. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

gk_status gk_library_open(gk_library *lib, const char *op)
{
    pthread_mutex_lock(&load_lock);
    if (!lib->loaded) {
        load(lib);
        if (lib->status == GK_OK && lib->after)
            lib->after(lib);
        lib->loaded = 1;
    }
    pthread_mutex_unlock(&load_lock);
    if (lib->status != GK_OK)
        return gk_fail(lib->status, "%s: %s", op, lib->message);
    return GK_OK;
}
