/* What the fake CUDA libraries (fake_cublas.c, fake_cusolver.c,
 * fake_cufft.c) share: a handle that remembers its stream, waiting for
 * that stream in the fake driver gpukit loaded (so the copies queued
 * before a call are done, as on a GPU), and a count of the calls run. */
#ifndef FAKE_LIBRARY_H
#define FAKE_LIBRARY_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct fake_handle {
    void *stream;
} fake_handle;

static int fake_calls;
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;

/* Does the work queued on `stream` in the fake driver (GPUKIT_CUDA_LIBRARY),
 * as a GPU would before the routine's own, and queues the routine's mark
 * there; counts the call. */
static inline void fake_begin(void *stream)
{
    const char *path = getenv("GPUKIT_CUDA_LIBRARY");
    void *driver = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    void (*run_on)(void *) =
        driver ? (void (*)(void *))dlsym(driver, "fake_cuda_run_on") : NULL;
    if (run_on)
        run_on(stream);
    if (driver)
        dlclose(driver);
    pthread_mutex_lock(&fake_lock);
    fake_calls++;
    pthread_mutex_unlock(&fake_lock);
}

/* LAPACKE's function `name` (NULL when there is no LAPACKE), with its own
 * NaN check off: NaN goes to LAPACK as on a GPU. */
static inline void *lapacke(const char *name)
{
    static void *library;
    pthread_mutex_lock(&fake_lock);
    if (!library && (library = dlopen("liblapacke.so.3", RTLD_NOW | RTLD_LOCAL))) {
        void (*nancheck)(int) = (void (*)(int))dlsym(library, "LAPACKE_set_nancheck");
        if (nancheck)
            nancheck(0);
    }
    pthread_mutex_unlock(&fake_lock);
    return library ? dlsym(library, name) : NULL;
}

/* The calls run so far, exported as `name` for the tests. */
#define FAKE_CALLS(name)                                                                           \
    EXPORT int name(void)                                                                          \
    {                                                                                              \
        pthread_mutex_lock(&fake_lock);                                                            \
        int n = fake_calls;                                                                        \
        pthread_mutex_unlock(&fake_lock);                                                          \
        return n;                                                                                  \
    }

/* A library's handle functions: create, destroy, set its stream. create
 * fails (status 1, NOT_INITIALIZED in each library) when FAKE_CREATE_FAILS
 * names it, as where the library cannot start on the device. */
#define FAKE_HANDLE_API(create, destroy, set_stream)                                               \
    EXPORT int create(fake_handle **h)                                                             \
    {                                                                                              \
        const char *fails = getenv("FAKE_CREATE_FAILS");                                           \
        if (fails && strcmp(fails, #create) == 0)                                                  \
            return 1;                                                                              \
        *h = calloc(1, sizeof **h);                                                                \
        return *h ? 0 : 1;                                                                         \
    }                                                                                              \
    EXPORT int destroy(fake_handle *h)                                                             \
    {                                                                                              \
        free(h);                                                                                   \
        return 0;                                                                                  \
    }                                                                                              \
    EXPORT int set_stream(fake_handle *h, void *stream)                                            \
    {                                                                                              \
        h->stream = stream;                                                                        \
        return 0;                                                                                  \
    }

#endif
