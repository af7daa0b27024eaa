/* Loading a vendor library at run time into a table of its functions:
 * what CBLAS, LAPACKE and FFTW share (ext/blas.c, ext/fftw.c). A library
 * is found by an override in the environment, else by the first of a list
 * of names that opens and has every required function; the outcome, and a
 * message naming the packages that provide it when there is none, is kept
 * for the process. */
#ifndef GK_EXT_LOADER_H
#define GK_EXT_LOADER_H

#include <gpukit/status.h>

#include <stddef.h>

/* An environment variable a library reads once, as it loads (libgomp's
 * GOMP_SPINCOUNT, OpenBLAS's OPENBLAS_THREAD_TIMEOUT): set to `value`
 * around the dlopen unless the user set `variable` or one of `chosen`
 * (NULL-ended; may be NULL), and unset after, so that child processes see
 * the user's own environment. That is the only way to tell such a library;
 * the price is that setenv is not thread-safe against a getenv (or a
 * fork) in another thread at that moment, once per library and process.
 * A library that something else loaded first keeps its settings. */
typedef struct gk_load_default {
    const char *variable, *value;
    const char *const *chosen;
} gk_load_default;

/* dlopen(path, RTLD_NOW | RTLD_LOCAL) with `setting` (may be NULL). */
void *gk_dlopen_with_default(const char *path, const gk_load_default *setting);

/* One function to look up, and where its address goes in the table. */
typedef struct gk_entry_point {
    const char *name;
    int required;
    size_t offset;
} gk_entry_point;

/* One library to load: where to look, what it must have, what to say
 * when it is not there; and the outcome of the one load. */
typedef struct gk_library {
    const char *what;     /* "CBLAS" */
    const char *variable; /* the override's environment variable */
    const char *const *names;
    size_t name_count;
    const gk_entry_point *entry_points;
    size_t entry_count;
    const char *install; /* the packages that provide it */
    void *table;         /* the struct the entry points' offsets are in */
    size_t table_size;
    void **handle; /* where the dlopen handle and the path go */
    char *path;
    size_t path_size;
    /* Optional: run once after a successful load (a library's own set-up). */
    void (*after)(struct gk_library *lib);
    /* The outcome, set by the one load. */
    int loaded;
    gk_status status;
    char message[1024];
    /* Optional: an environment default for the load. */
    const gk_load_default *load_default;
} gk_library;

/* lib, loaded on the first call (thread-safe, once per process): GK_OK
 * with its table filled, else the same failure every time, the message
 * starting with `op` and naming what to install. */
gk_status gk_library_open(gk_library *lib, const char *op);

#endif
