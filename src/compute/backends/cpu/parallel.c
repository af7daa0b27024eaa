/* Threads for the CPU backend: see parallel.h. */
#include "compute/backends/cpu/parallel.h"

#include "ext/openmp.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

/* Ranges a thread claims at a time, per thread of the team: small enough
 * that a thread the OS runs late (another program on its core) leaves its
 * share to the others, large enough that claiming costs nothing. */
enum { CLAIMS_PER_THREAD = 4 };

typedef struct team_loop {
    const gk_openmp *omp;
    int64_t tasks, grain;
    atomic_int_fast64_t next; /* the first task no thread has claimed */
    cpu_range_fn fn;
    void *context;
} team_loop;

/* Runs on every thread of the team: claims ranges of `grain` tasks until
 * none are left. */
static void run_claims(void *data)
{
    team_loop *loop = data;
    for (;;) {
        int64_t first = atomic_fetch_add(&loop->next, loop->grain);
        if (first >= loop->tasks)
            return;
        int64_t end = loop->tasks - first < loop->grain ? loop->tasks : first + loop->grain;
        loop->fn(loop->context, first, end);
    }
}

void cpu_parallel(int64_t tasks, bool parallel, cpu_range_fn fn, void *context)
{
    if (tasks <= 0)
        return;
    const gk_openmp *omp = parallel && tasks > 1 ? gk_openmp_open(NULL) : NULL;
    int64_t threads = omp ? omp->max_threads() : 1;
    if (threads <= 1) {
        fn(context, 0, tasks);
        return;
    }
    /* A team no larger than the tasks: the rest would only wake and wait. */
    if (threads > tasks)
        threads = tasks;
    int64_t claims = threads * CLAIMS_PER_THREAD;
    team_loop loop = {omp, tasks, (tasks + claims - 1) / claims, 0, fn, context};
    omp->parallel(run_claims, &loop, (unsigned)threads, 0);
}

static int64_t parallel_min = CPU_PARALLEL_DEFAULT;
static pthread_once_t parallel_min_once = PTHREAD_ONCE_INIT;

static void read_parallel_min(void)
{
    const char *text = getenv("GPUKIT_CPU_PARALLEL_MIN");
    if (!text || !*text)
        return;
    char *end;
    long long value = strtoll(text, &end, 10);
    if (*end == '\0' && value > 0)
        parallel_min = value;
}

int64_t cpu_parallel_min(void)
{
    pthread_once(&parallel_min_once, read_parallel_min);
    return parallel_min;
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
