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

/* Arrays are 64-byte aligned (a cache line, an AVX-512 vector) inside a
 * plain malloc block that keeps its own start just below the array:
 * aligned_alloc would split and free the block's edges on every call,
 * which made small ops spend most of their time in malloc. Through malloc,
 * glibc also reuses a freed block up to its largest dynamic mmap threshold
 * (32 MiB on 64-bit), whose pages are already there: a fresh mapping costs
 * a page fault and the kernel's zeroing per page at first write, which
 * made adding 4 MiB arrays 0.34x NumPy's speed (now 2x). */
enum { ALIGNMENT = 64 };

/* From 4 MiB the whole 2 MiB pages inside an array are asked to be
 * transparent huge pages, as NumPy asks: a fresh 128 MiB result then
 * faults 64 times instead of 32768. Arrays from 32 MiB, which malloc maps
 * afresh each time anyway, are aligned to 2 MiB and rounded to whole huge
 * pages, so that none of them is left in small pages (malloc's edges
 * would leave up to 4 MiB of them: 3x the page faults). */
enum { HUGE_PAGE = 2 << 20, HUGE_MIN = 4 << 20, FRESH_MIN = 32 << 20 };

static void advise_huge_pages(void *data, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    uintptr_t first = ((uintptr_t)data + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    uintptr_t end = ((uintptr_t)data + bytes) / HUGE_PAGE * HUGE_PAGE;
    if (bytes >= HUGE_MIN && end > first) /* advice only: failure is fine */
        madvise((void *)first, end - first, MADV_HUGEPAGE);
#else
    (void)data, (void)bytes;
#endif
}

/* The bytes CPU arrays hold, counted as malloc was asked (gk_memory_stats). */
static _Atomic uint64_t in_use_bytes, peak_in_use_bytes, allocations;

static void count_allocation(size_t bytes)
{
    uint64_t now = atomic_fetch_add(&in_use_bytes, bytes) + bytes;
    uint64_t peak = atomic_load(&peak_in_use_bytes);
    while (now > peak && !atomic_compare_exchange_weak(&peak_in_use_bytes, &peak, now))
        ;
}

static gk_status cpu_memory_stats(gk_device device, bool reset_peak, gk_memory_stats *stats)
{
    (void)device;
    uint64_t in_use = atomic_load(&in_use_bytes), peak = atomic_load(&peak_in_use_bytes);
    /* read apart from in_use, or just reset by another thread: never below it */
    *stats = (gk_memory_stats){in_use, peak > in_use ? peak : in_use, 0, atomic_load(&allocations)};
    if (reset_peak)
        atomic_store(&peak_in_use_bytes, in_use);
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

/* An array from 32 MiB: whole 2 MiB pages of its own. */
static void *fresh_huge_pages(size_t bytes)
{
    size_t rounded = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *data = aligned_alloc(HUGE_PAGE, rounded);
    if (data)
        advise_huge_pages(data, rounded);
    return data;
}

/* A smaller array: 64-byte aligned in a malloc block whose start is kept
 * just below it (0 bytes still gets a unique pointer). */
static void *malloc_block(size_t bytes)
{
    char *block = malloc(bytes + ALIGNMENT + sizeof(void *));
    if (!block)
        return NULL;
    uintptr_t start = (uintptr_t)(block + sizeof(void *));
    char *aligned = block + sizeof(void *) + (ALIGNMENT - start % ALIGNMENT) % ALIGNMENT;
    memcpy(aligned - sizeof(void *), &block, sizeof block);
    advise_huge_pages(aligned, bytes);
    return aligned;
}

static gk_status cpu_alloc(gk_device device, size_t bytes, void **data)
{
    (void)device;
    *data = NULL;
    atomic_fetch_add(&allocations, 1); /* asked of malloc, as the GPU pool counts */
    if (bytes <= SIZE_MAX - HUGE_PAGE) /* beyond any machine; rounding would overflow */
        *data = bytes >= FRESH_MIN ? fresh_huge_pages(bytes) : malloc_block(bytes);
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
    if (bytes >= FRESH_MIN) {
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
