/* The CPU backend: the device every machine has. Memory is ordinary host
 * memory, so uploads and downloads are copies and nothing is asynchronous. */
#include "compute/backends/cpu/cpu.h"

#include "compute/backends/cpu/parallel.h"
#include "core/error.h"
#include "probe/backend.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* Every block has this many unused bytes after the array: vector kernels
 * of the system's OpenBLAS (0.3.21's complex gemv, inside LAPACK's gesdd
 * and heevd) read up to about 80 bytes past the matrices they are handed,
 * which faults where an array ends at the edge of the heap (a Python
 * thread's arena is small). Within our block, such a read is harmless. */
enum { VENDOR_READ_SLACK = 256 };

/* From 4 MiB the whole 2 MiB pages inside an array are asked to be
 * transparent huge pages, as NumPy asks: a fresh 128 MiB result then
 * faults 64 times instead of 32768. Arrays from 32 MiB, which malloc would
 * map afresh each time, are aligned to 2 MiB and rounded to whole huge
 * pages, so that none of them is left in small pages (malloc's edges
 * would leave up to 4 MiB of them: 3x the page faults), and are kept for
 * reuse when freed (below). */
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

/* The bytes CPU arrays hold (gk_memory_stats; see counted_bytes). */
static _Atomic uint64_t in_use_bytes, peak_in_use_bytes, allocations;

static void count_allocation(size_t bytes)
{
    uint64_t now = atomic_fetch_add(&in_use_bytes, bytes) + bytes;
    uint64_t peak = atomic_load(&peak_in_use_bytes);
    while (now > peak && !atomic_compare_exchange_weak(&peak_in_use_bytes, &peak, now))
        ;
}

/* Freed arrays from 32 MiB are kept for an array of the same size (in
 * whole huge pages) to reuse, as a GPU pool keeps device memory: a fresh
 * mapping's pages cost a fault and the kernel's zeroing each at first
 * write, which held a download into a new 256 MiB array to a sixth of
 * the copy engine's speed on an H100 machine, and every large result to
 * the kernel's pace; a kept block's pages are there. At most KEPT_BLOCKS
 * blocks and a sixteenth of the memory this process may use (the
 * machine's, or its cgroup's limit), up to 1 GiB, are kept, the oldest
 * given back first; emptying the cache (gk_device_empty_cache) gives them
 * all back. Large arrays count as in use with their rounded size, so that
 * freeing one moves its bytes from in use to cached. */
enum { KEPT_BLOCKS = 4 };
#define KEPT_BYTES_MAX ((size_t)1 << 30)

typedef struct kept_block {
    void *data;   /* NULL: the slot is free */
    size_t bytes; /* rounded to whole huge pages */
    unsigned long age;
} kept_block;

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static kept_block kept[KEPT_BLOCKS];
static size_t kept_bytes;
static unsigned long kept_clock;

/* The huge pages a block of an array of `bytes` takes (its slack too). */
static size_t whole_huge_pages(size_t bytes)
{
    return (bytes + VENDOR_READ_SLACK + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
}

/* The memory limit of this process's cgroup (v2, as a container sees
 * it); 0 when there is none or it cannot be read. */
static size_t cgroup_memory_limit(void)
{
    FILE *f = fopen("/sys/fs/cgroup/memory.max", "r");
    unsigned long long limit = 0;
    if (f) {
        if (fscanf(f, "%llu", &limit) != 1) /* "max": no limit */
            limit = 0;
        fclose(f);
    }
    return limit < SIZE_MAX ? (size_t)limit : SIZE_MAX;
}

/* The most the cache may hold: a sixteenth of the memory this process may
 * use, up to 1 GiB. Read once: a limit is not expected to change. */
static size_t limit_once;
static pthread_once_t limit_read = PTHREAD_ONCE_INIT;

static void read_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t memory = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
    size_t cgroup = cgroup_memory_limit();
    if (cgroup && cgroup < memory)
        memory = cgroup;
    limit_once = memory / 16 < KEPT_BYTES_MAX ? memory / 16 : KEPT_BYTES_MAX;
}

static size_t kept_bytes_limit(void)
{
    pthread_once(&limit_read, read_limit);
    return limit_once;
}

/* A fork while another thread holds the cache's lock would leave the
 * child's copy locked for good: the lock is taken around a fork. */
static void lock_kept(void)
{
    pthread_mutex_lock(&kept_lock);
}

static void unlock_kept(void)
{
    pthread_mutex_unlock(&kept_lock);
}

static pthread_once_t fork_guard = PTHREAD_ONCE_INIT;

static void guard_forks(void)
{
    pthread_atfork(lock_kept, unlock_kept, unlock_kept);
}

/* Takes the cache's lock (setting up the fork guard first). */
static void enter_kept(void)
{
    pthread_once(&fork_guard, guard_forks);
    lock_kept();
}

/* A kept block of exactly `rounded` bytes, taken out of the cache; NULL
 * when there is none. */
static void *take_kept(size_t rounded)
{
    void *data = NULL;
    enter_kept();
    for (int i = 0; i < KEPT_BLOCKS && !data; i++)
        if (kept[i].data && kept[i].bytes == rounded) {
            data = kept[i].data;
            kept[i].data = NULL;
            kept_bytes -= rounded;
        }
    unlock_kept();
    return data;
}

/* Keeps a freed block, giving back the oldest to make room; a block
 * larger than the whole cache may hold is given back at once. */
static void keep_or_free(void *data, size_t rounded)
{
    void *evicted[KEPT_BLOCKS + 1];
    int count = 0;
    size_t limit = kept_bytes_limit();
    enter_kept();
    if (rounded > limit) {
        evicted[count++] = data;
    } else {
        for (;;) {
            int free_slot = -1, oldest = -1;
            for (int i = 0; i < KEPT_BLOCKS; i++) {
                if (!kept[i].data)
                    free_slot = i;
                else if (oldest < 0 || kept[i].age < kept[oldest].age)
                    oldest = i;
            }
            if (free_slot >= 0 && kept_bytes + rounded <= limit) {
                kept[free_slot] = (kept_block){data, rounded, ++kept_clock};
                kept_bytes += rounded;
                break;
            }
            evicted[count++] = kept[oldest].data; /* something is kept: see above */
            kept_bytes -= kept[oldest].bytes;
            kept[oldest].data = NULL;
        }
    }
    unlock_kept();
    for (int i = 0; i < count; i++)
        free(evicted[i]);
}

static gk_status cpu_memory_stats(gk_device device, bool reset_peak, gk_memory_stats *stats)
{
    (void)device;
    enter_kept();
    uint64_t cached = kept_bytes;
    unlock_kept();
    uint64_t in_use = atomic_load(&in_use_bytes), peak = atomic_load(&peak_in_use_bytes);
    /* read apart from in_use, or just reset by another thread: never below it */
    *stats = (gk_memory_stats){in_use, peak > in_use ? peak : in_use, cached,
                               atomic_load(&allocations)};
    if (reset_peak)
        atomic_store(&peak_in_use_bytes, in_use);
    return GK_OK;
}

/* The kept blocks go back, and malloc is asked to give back what it holds
 * free. */
static gk_status cpu_empty_cache(gk_device device)
{
    (void)device;
    enter_kept();
    kept_block blocks[KEPT_BLOCKS];
    memcpy(blocks, kept, sizeof kept);
    memset(kept, 0, sizeof kept);
    kept_bytes = 0;
    unlock_kept();
    for (int i = 0; i < KEPT_BLOCKS; i++)
        free(blocks[i].data);
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    return GK_OK;
}

/* An array of about 32 MiB and more: whole 2 MiB pages of its own, kept
 * ones first. */
static void *huge_pages_block(size_t bytes)
{
    size_t rounded = whole_huge_pages(bytes);
    void *data = take_kept(rounded);
    if (data)
        return data;
    atomic_fetch_add(&allocations, 1);
    data = aligned_alloc(HUGE_PAGE, rounded);
    if (data)
        advise_huge_pages(data, rounded);
    return data;
}

/* A smaller array: 64-byte aligned in a malloc block whose start is kept
 * just below it (0 bytes still gets a unique pointer). */
static void *malloc_block(size_t bytes)
{
    atomic_fetch_add(&allocations, 1); /* asked of malloc, as the GPU pool counts */
    char *block = malloc(bytes + ALIGNMENT + sizeof(void *) + VENDOR_READ_SLACK);
    if (!block)
        return NULL;
    uintptr_t start = (uintptr_t)(block + sizeof(void *));
    char *aligned = block + sizeof(void *) + (ALIGNMENT - start % ALIGNMENT) % ALIGNMENT;
    memcpy(aligned - sizeof(void *), &block, sizeof block);
    advise_huge_pages(aligned, bytes);
    return aligned;
}

/* Whether an array gets whole huge pages of its own (huge_pages_block):
 * from 32 MiB less what its malloc block would add (our slack, glibc's
 * header and its rounding to a page), since malloc maps such a block
 * afresh each time. An array just under 32 MiB had faulted twice the
 * pages NumPy's did, on every allocation. */
static bool has_own_pages(size_t bytes)
{
    enum { MALLOC_ADDS = ALIGNMENT + sizeof(void *) + VENDOR_READ_SLACK + 4096 };
    return bytes >= FRESH_MIN - MALLOC_ADDS;
}

/* What an array of `bytes` counts as in use: the rounded size of its own
 * pages (what a kept block counts as cached), else what malloc was asked. */
static size_t counted_bytes(size_t bytes)
{
    return has_own_pages(bytes) ? whole_huge_pages(bytes) : bytes;
}

static gk_status cpu_alloc(gk_device device, size_t bytes, void **data)
{
    (void)device;
    *data = NULL;
    if (bytes <= SIZE_MAX - HUGE_PAGE) /* beyond any machine; rounding would overflow */
        *data = has_own_pages(bytes) ? huge_pages_block(bytes) : malloc_block(bytes);
    if (!*data)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory: cannot allocate %zu bytes on the "
                                             "CPU",
                       bytes);
    count_allocation(counted_bytes(bytes));
    return GK_OK;
}

static void cpu_release(gk_device device, void *data, size_t bytes)
{
    (void)device;
    atomic_fetch_sub(&in_use_bytes, counted_bytes(bytes));
    if (has_own_pages(bytes)) {
        keep_or_free(data, whole_huge_pages(bytes));
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
    .matmul_transposes = true,
};
