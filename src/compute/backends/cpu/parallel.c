/* Threads for the CPU backend: see parallel.h. */
#include "compute/backends/cpu/parallel.h"

#include "ext/openmp.h"

#include <stddef.h>

typedef struct team_loop {
    const gk_openmp *omp;
    int64_t tasks;
    cpu_range_fn fn;
    void *context;
} team_loop;

/* Runs on every thread of the team: this thread's share of the tasks, the
 * first tasks % threads threads taking one more. */
static void run_share(void *data)
{
    const team_loop *loop = data;
    int64_t threads = loop->omp->num_threads(), me = loop->omp->thread_num();
    int64_t base = loop->tasks / threads, extra = loop->tasks % threads;
    int64_t first = me * base + (me < extra ? me : extra);
    int64_t end = first + base + (me < extra ? 1 : 0);
    if (first < end)
        loop->fn(loop->context, first, end);
}

void cpu_parallel(int64_t tasks, bool parallel, cpu_range_fn fn, void *context)
{
    if (tasks <= 0)
        return;
    const gk_openmp *omp = parallel && tasks > 1 ? gk_openmp_open(NULL) : NULL;
    if (!omp || omp->max_threads() <= 1) {
        fn(context, 0, tasks);
        return;
    }
    team_loop loop = {omp, tasks, fn, context};
    /* A team no larger than the tasks: the rest would only wake and wait. */
    int64_t max = omp->max_threads();
    omp->parallel(run_share, &loop, (unsigned)(tasks < max ? tasks : max), 0);
}

int cpu_threads(void)
{
    const gk_openmp *omp = gk_openmp_open(NULL);
    return omp ? omp->max_threads() : 1;
}

const char *cpu_threads_missing(void)
{
    const char *why = "";
    gk_openmp_open(&why);
    return why;
}
