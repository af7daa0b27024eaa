/* OpenMP's runtime (GCC's libgomp.so.1, or the file GPUKIT_OPENMP_LIBRARY
 * names), loaded at run time on the first parallel loop.
 *
 * Loaded, not linked: a process that links libgpukit (the Python module,
 * the gpukit command) but never computes on the CPU does not map libgomp,
 * which costs start-up time and, once a team exists, keeps threads that
 * spin for a while after each loop. The CPU backend reaches it only
 * through compute/backends/cpu/parallel.c. The entry points are libgomp's
 * documented ABI ("The libgomp ABI" in its manual): GOMP_parallel runs
 * fn(data) on every thread of a new team, the calling thread included, and
 * returns when all are done; the omp_* functions are OpenMP's API. The
 * runtime reads OMP_NUM_THREADS, OMP_WAIT_POLICY and friends itself when it
 * is loaded. */
#ifndef GK_EXT_OPENMP_H
#define GK_EXT_OPENMP_H

#include "ext/loader.h"

/* GOMP_SPINCOUNT=1000 unless the user chose (openmp.c says why): for
 * every load that may bring libgomp in first (FFTW's OpenMP build too). */
extern const gk_load_default gk_openmp_short_spin;

typedef struct gk_openmp {
    void *library;
    /* num_threads 0: the runtime's default team size; flags 0. */
    void (*parallel)(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);
    int (*thread_num)(void);
    int (*num_threads)(void);
    int (*max_threads)(void);
} gk_openmp;

/* The runtime, loaded on the first call (thread-safe, once per process);
 * NULL when the library cannot be loaded or lacks an entry point, and then *why (when why is not
 * NULL) says why. The same answer every time. */
const gk_openmp *gk_openmp_open(const char **why);

#endif
