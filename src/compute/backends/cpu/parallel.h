/* The CPU backend's one way to use threads: a loop over tasks whose
 * threads claim contiguous ranges of tasks, a few per thread, until none
 * are left (OpenMP's dynamic schedule), on OpenMP's runtime loaded at the
 * first parallel loop (ext/openmp.c). Without that runtime every loop runs
 * on the calling thread. */
#ifndef GK_COMPUTE_CPU_PARALLEL_H
#define GK_COMPUTE_CPU_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

/* Does tasks [first, end) of a loop; `context` is the loop's. */
typedef void (*cpu_range_fn)(void *context, int64_t first, int64_t end);

/* Runs fn over tasks [0, tasks). When `parallel` is false, or there is one
 * thread, or one task, it is one call fn(context, 0, tasks) on this thread
 * and loads nothing: a loop too small for threads pays no runtime at all.
 * Otherwise the threads of a team call fn for ranges they claim in turn,
 * and the call returns when all tasks are done. Which thread does a task,
 * and how the tasks are cut into ranges, must not change a result. */
void cpu_parallel(int64_t tasks, bool parallel, cpu_range_fn fn, void *context);

/* The fewest elements a loop must have to be worth threads (callers pass
 * `elements >= cpu_parallel_min()`, scaled by how much more than a copy an
 * element costs them): GPUKIT_CPU_PARALLEL_MIN when it is a positive
 * integer, else CPU_PARALLEL_DEFAULT. Reads no runtime. */
int64_t cpu_parallel_min(void);

/* 2^20: waking the team and joining it cost 20 to 60 us on a virtual
 * machine (a vCPU that halted, a thread woken on its waker's core), as
 * much as one thread takes to add 256K floats; in 64K-element idioms
 * threads made ops 1.2 to 7 times slower. From 1M elements (4 MiB of
 * float32, past a core's L2) a second thread pays where the work is more
 * than a copy. */
#define CPU_PARALLEL_DEFAULT ((int64_t)1 << 20)

/* The threads a parallel loop uses (OMP_NUM_THREADS, else the CPUs this
 * process may run on); 1 without the runtime. Loads the runtime. */
int cpu_threads(void);

/* Why there is one thread only: "" with the runtime, else the loader's
 * reason. Loads the runtime. */
const char *cpu_threads_missing(void);

#endif
