/* Run-time loading of OpenMP's runtime: see openmp.h. */
#include "ext/openmp.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gk_openmp table;
static const gk_openmp *loaded; /* &table once every entry point was found */
static char failure[600];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    /* The override is for tests and odd installs (another libgomp build). */
    const char *override = getenv("GPUKIT_OPENMP_LIBRARY");
    const char *name = override && *override ? override : "libgomp.so.1";
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *error = dlerror();
        snprintf(failure, sizeof failure, "%s", error ? error : name);
        return;
    }
    /* dlsym returns void *; memcpy turns it into a function pointer
     * without the cast ISO C leaves undefined. */
    static const struct {
        const char *symbol;
        size_t offset;
    } entries[] = {
        {"GOMP_parallel", offsetof(gk_openmp, parallel)},
        {"omp_get_thread_num", offsetof(gk_openmp, thread_num)},
        {"omp_get_num_threads", offsetof(gk_openmp, num_threads)},
        {"omp_get_max_threads", offsetof(gk_openmp, max_threads)},
    };
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        void *symbol = dlsym(handle, entries[i].symbol);
        if (!symbol) {
            snprintf(failure, sizeof failure, "%s has no %s", name, entries[i].symbol);
            dlclose(handle);
            memset(&table, 0, sizeof table);
            return;
        }
        memcpy((char *)&table + entries[i].offset, &symbol, sizeof symbol);
    }
    table.library = handle;
    loaded = &table;
}

const gk_openmp *gk_openmp_open(const char **why)
{
    pthread_once(&once, load);
    if (!loaded && why)
        *why = failure;
    return loaded;
}
