/* The CPU backend: the device every machine has. Memory is ordinary host
 * memory, so uploads and downloads are copies and nothing is asynchronous. */
#include "compute/backends/cpu/cpu.h"

#include "compute/backends/cpu/parallel.h"
#include "core/error.h"
#include "probe/backend.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int cpu_count(void)
{
    return 1;
}

static gk_status cpu_check(gk_device device)
{
    if (device.index != 0 || device.platform != 0)
        return gk_fail(GK_ERR_NOT_FOUND, "there is one CPU device, cpu");
    return GK_OK;
}

static gk_status cpu_describe(gk_device device, char *buf, size_t size)
{
    (void)device;
    gk_cpu cpu;
    gk_cpu_read(&cpu);
    int threads = cpu_threads();
    const char *missing = cpu_threads_missing();
    /* Without OpenMP's runtime the loops run on one thread: say how to get more. */
    snprintf(buf, size, "%s, %d thread%s%s%s%s", cpu.model[0] ? cpu.model : "CPU", threads,
             threads == 1 ? "" : "s", *missing ? " (no OpenMP runtime: " : "", missing,
             *missing ? "; apt install libgomp1 or dnf install libgomp for more)" : "");
    return GK_OK;
}

static gk_status cpu_has_dtype(gk_device device, gk_dtype dtype, bool *has)
{
    (void)device;
    (void)dtype;
    *has = true;
    return GK_OK;
}

static gk_status cpu_memory(gk_device device, uint64_t *free_bytes, uint64_t *total_bytes)
{
    (void)device;
    gk_cpu cpu;
    gk_cpu_read(&cpu);
    if (!cpu.memory_total.known)
        return gk_fail(GK_ERR_IO, "cannot read the memory size from /proc/meminfo");
    *total_bytes = cpu.memory_total.value;
    *free_bytes = cpu.memory_available.known ? cpu.memory_available.value : 0;
    return GK_OK;
}

/* Large arrays are aligned to 2 MiB and asked to use transparent huge
 * pages: the first write to a fresh 128 MiB result then costs 64 page faults
 * instead of 32768 (NumPy does the same). */
enum { HUGE_PAGE = 2 << 20, HUGE_MIN = 4 << 20 };

/* Smaller arrays are 64-byte aligned (a cache line, an AVX-512 vector)
 * inside a plain malloc block that keeps its own start just below the
 * array: aligned_alloc would split and free the block's edges on every
 * call, which made small ops spend most of their time in malloc. */
enum { SMALL_ALIGNMENT = 64 };

/* The bytes CPU arrays hold, counted as malloc was asked (gk_memory_stats). */
static _Atomic uint64_t in_use_bytes, peak_in_use_bytes, allocations;

static void count_allocation(size_t bytes)
{
    uint64_t now = atomic_fetch_add(&in_use_bytes, bytes) + bytes;
    uint64_t peak = atomic_load(&peak_in_use_bytes);
    while (now > peak && !atomic_compare_exchange_weak(&peak_in_use_bytes, &peak, now))
        ;
    atomic_fetch_add(&allocations, 1);
}

static gk_status cpu_memory_stats(gk_device device, bool reset_peak, gk_memory_stats *stats)
{
    (void)device;
    *stats = (gk_memory_stats){atomic_load(&in_use_bytes), atomic_load(&peak_in_use_bytes), 0,
                               atomic_load(&allocations)};
    if (reset_peak)
        atomic_store(&peak_in_use_bytes, atomic_load(&in_use_bytes));
    return GK_OK;
}

/* The CPU caches nothing of its own; malloc may hold freed memory. */
static gk_status cpu_empty_cache(gk_device device)
{
    (void)device;
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    return GK_OK;
}

static gk_status cpu_alloc(gk_device device, size_t bytes, void **data)
{
    (void)device;
    if (bytes > SIZE_MAX - 2 * HUGE_PAGE)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory: %zu bytes cannot be allocated",
                       bytes);
    if (bytes >= HUGE_MIN) {
        size_t rounded = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
        *data = aligned_alloc(HUGE_PAGE, rounded);
#ifdef MADV_HUGEPAGE
        if (*data)
            madvise(*data, rounded, MADV_HUGEPAGE); /* advice only: failure is fine */
#endif
    } else {
        /* 0 bytes still gets a unique pointer. */
        char *block = malloc(bytes + SMALL_ALIGNMENT + sizeof(void *));
        *data = NULL;
        if (block) {
            uintptr_t start = (uintptr_t)(block + sizeof(void *));
            char *aligned = block + sizeof(void *) +
                            (SMALL_ALIGNMENT - start % SMALL_ALIGNMENT) % SMALL_ALIGNMENT;
            memcpy(aligned - sizeof(void *), &block, sizeof block);
            *data = aligned;
        }
    }
    if (!*data)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory: cannot allocate %zu bytes on the "
                                             "CPU",
                       bytes);
    count_allocation(bytes);
    return GK_OK;
}

static void cpu_release(gk_device device, void *data, size_t bytes)
{
    (void)device;
    atomic_fetch_sub(&in_use_bytes, bytes);
    if (bytes >= HUGE_MIN) {
        free(data);
        return;
    }
    char *block;
    memcpy(&block, (char *)data - sizeof(void *), sizeof block);
    free(block);
}

static gk_status cpu_copy(gk_device device, void *to, const void *from, size_t bytes)
{
    (void)device;
    if (bytes)
        memcpy(to, from, bytes);
    return GK_OK;
}

static gk_status cpu_synchronize(gk_device device)
{
    (void)device;
    return GK_OK;
}

const gk_backend gk_cpu_backend = {
    .kind = GK_DEVICE_CPU,
    .name = "cpu",
    .count = cpu_count,
    .check = cpu_check,
    .describe = cpu_describe,
    .memory = cpu_memory,
    .has_dtype = cpu_has_dtype,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .memory_stats = cpu_memory_stats,
    .empty_cache = cpu_empty_cache,
    .upload = cpu_copy,
    .download = cpu_copy,
    .synchronize = cpu_synchronize,
    .convert = cpu_convert,
    .fill = cpu_fill,
    .sequence = cpu_sequence,
    .elementwise = cpu_elementwise,
    .where = cpu_where,
    .reduce = cpu_reduce,
    .scan = cpu_scan,
    .sort = cpu_sort,
    .random = cpu_random,
    .gather = cpu_gather,
    .scatter = cpu_scatter,
    .flatnonzero = cpu_flatnonzero,
    .searchsorted = cpu_searchsorted,
    .matmul = cpu_matmul,
};
