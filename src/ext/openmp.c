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

/* After a parallel loop libgomp's threads spin 300000 times (about 10 ms
 * here) before they sleep. That takes the cores from whatever runs next:
 * OpenBLAS's threads (a 384 x 384 inverse ran 2.7x slower after one of
 * our loops), NumPy, and the other users of a shared machine. Unless the
 * user chose, they spin 1000 times, the count libgomp itself falls back
 * to when cores are oversubscribed: back-to-back ops from Python still
 * find them awake. */
static const char *const wait_policy[] = {"OMP_WAIT_POLICY", NULL};
const gk_load_default gk_openmp_short_spin = {"GOMP_SPINCOUNT", "1000", wait_policy};

static void load(void)
{
    /* The override is for tests and odd installs (another libgomp build). */
    const char *override = getenv("GPUKIT_OPENMP_LIBRARY");
    const char *name = override && *override ? override : "libgomp.so.1";
    void *handle = gk_dlopen_with_default(name, &gk_openmp_short_spin);
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
