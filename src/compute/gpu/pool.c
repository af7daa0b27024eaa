/* A caching memory pool for one device (see pool.h for the contract).
 *
 * Shape. The pool holds chunks, each one allocation from the driver. A chunk
 * is cut into blocks that tile it in address order (a doubly linked list
 * per chunk), each block either handed out or free. Three indexes find
 * blocks quickly:
 *   - free blocks sit in an array sorted by (size, address), so the best fit
 *     is a binary search (the smallest size that fits, and among equal
 *     sizes the lowest address, which keeps the choice deterministic);
 *   - blocks in use sit in a hash table keyed by address, so a release
 *     finds its block without walking chunks;
 *   - chunks sit in a doubly linked list, for trim and destroy.
 *
 * Addresses are opaque numbers to us: the driver may hand out values that
 * are no pointers at all (OpenCL slots encoded as large integers), so they
 * are kept as uintptr_t, never dereferenced, and only offset by sizes that
 * stay inside their chunk.
 *
 * Releasing an address the pool did not hand out (or releasing twice) is a
 * programming error. The pool ignores it with a warning on stderr rather
 * than aborting: the pool's own state stays intact, and a notebook keeps
 * running. NULL is ignored silently, like free(NULL).
 *
 * One mutex guards everything, held across driver calls too: an allocation
 * that reaches the driver is slow anyway, and holding the lock means two
 * threads never both grow the pool for the same shortage. */
#include "compute/gpu/pool.h"

#include "core/error.h"
#include "core/units.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL_ALIGNMENT ((size_t)512)
#define MIB ((size_t)1 << 20)
/* The largest request whose chunk size (rounded up to 2 MiB) still fits in
 * a size_t; anything larger is more memory than any device has. */
#define POOL_MAX_REQUEST (SIZE_MAX - 2 * MIB)

typedef struct pool_chunk pool_chunk;

typedef struct pool_block {
    uintptr_t address;
    size_t size;
    bool free;
    pool_chunk *chunk;
    struct pool_block *prev; /* neighbours in the chunk, in address order */
    struct pool_block *next;
    struct pool_block *hash_next; /* chain of the in-use table */
} pool_block;

struct pool_chunk {
    uintptr_t address;
    size_t size;
    pool_block *first; /* the block at the chunk's start */
    pool_chunk *prev;
    pool_chunk *next;
};

struct gk_pool {
    char name[64];
    gk_pool_allocate_fn allocate;
    gk_pool_free_fn free;
    void *context;
    pthread_mutex_t lock;

    pool_chunk *chunks;

    /* Free blocks, sorted by (size, address). Its capacity is kept at least
     * the number of blocks there are, so a block can always become free
     * without an allocation that could fail inside gk_pool_release. */
    pool_block **free_blocks;
    size_t free_count;
    size_t free_capacity;
    size_t block_count;

    /* Blocks in use, by address: a chained hash table of 2^in_use_bits
     * buckets. */
    pool_block **in_use;
    size_t in_use_buckets;
    unsigned in_use_bits;
    size_t in_use_count;

    gk_pool_stats stats;
};

/* ---- sizes ------------------------------------------------------------ */

static size_t round_up(size_t bytes, size_t multiple)
{
    return (bytes + multiple - 1) / multiple * multiple;
}

/* Small requests share a chunk so they need few driver calls; a large one
 * gets a chunk of its own (rounded so its leftover is reusable). */
static size_t chunk_size_for(size_t size)
{
    if (size <= 1 * MIB)
        return 2 * MIB;
    if (size <= 10 * MIB)
        return 20 * MIB;
    return round_up(size, 2 * MIB);
}

/* ---- the sorted array of free blocks ---------------------------------- */

/* Whether block a sorts before (size, address). */
static bool sorts_before(const pool_block *a, size_t size, uintptr_t address)
{
    return a->size < size || (a->size == size && a->address < address);
}

/* Index of the first free block that does not sort before (size, address). */
static size_t free_lower_bound(const gk_pool *pool, size_t size, uintptr_t address)
{
    size_t low = 0, high = pool->free_count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (sorts_before(pool->free_blocks[mid], size, address))
            low = mid + 1;
        else
            high = mid;
    }
    return low;
}

/* Never fails: the capacity covers every block (see struct gk_pool). */
static void free_insert(gk_pool *pool, pool_block *block)
{
    size_t at = free_lower_bound(pool, block->size, block->address);
    memmove(&pool->free_blocks[at + 1], &pool->free_blocks[at],
            (pool->free_count - at) * sizeof *pool->free_blocks);
    pool->free_blocks[at] = block;
    pool->free_count++;
    block->free = true;
}

/* The block must be in the array with the size it was inserted with. */
static void free_remove(gk_pool *pool, pool_block *block)
{
    size_t at = free_lower_bound(pool, block->size, block->address);
    memmove(&pool->free_blocks[at], &pool->free_blocks[at + 1],
            (pool->free_count - at - 1) * sizeof *pool->free_blocks);
    pool->free_count--;
    block->free = false;
}

/* Makes room for one more block before it is created, so that creating
 * blocks is the only step that can run out of host memory. */
static bool reserve_block(gk_pool *pool)
{
    if (pool->block_count + 1 <= pool->free_capacity)
        return true;
    size_t capacity = pool->free_capacity ? 2 * pool->free_capacity : 64;
    pool_block **grown = realloc(pool->free_blocks, capacity * sizeof *grown);
    if (!grown)
        return false;
    pool->free_blocks = grown;
    pool->free_capacity = capacity;
    return true;
}

/* ---- the hash table of blocks in use ---------------------------------- */

static size_t hash_address(const gk_pool *pool, uintptr_t address)
{
    /* Addresses are multiples of 512 and may differ only in high bits
     * (encoded slots). A multiply mixes every bit into the top of the
     * product (Fibonacci hashing), so the bucket is taken from there. */
    uint64_t h = (uint64_t)address * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> (64 - pool->in_use_bits));
}

/* Doubles the table when it gets crowded; if that fails the old table
 * stays, slower but correct. */
static void in_use_grow(gk_pool *pool)
{
    size_t buckets = pool->in_use_buckets * 2;
    pool_block **table = calloc(buckets, sizeof *table);
    if (!table)
        return;
    pool_block **old = pool->in_use;
    size_t old_buckets = pool->in_use_buckets;
    pool->in_use = table;
    pool->in_use_buckets = buckets;
    pool->in_use_bits++;
    for (size_t i = 0; i < old_buckets; i++) {
        pool_block *block = old[i];
        while (block) {
            pool_block *next = block->hash_next;
            size_t at = hash_address(pool, block->address);
            block->hash_next = table[at];
            table[at] = block;
            block = next;
        }
    }
    free(old);
}

static void in_use_insert(gk_pool *pool, pool_block *block)
{
    if (pool->in_use_count >= pool->in_use_buckets)
        in_use_grow(pool);
    size_t at = hash_address(pool, block->address);
    block->hash_next = pool->in_use[at];
    pool->in_use[at] = block;
    pool->in_use_count++;
}

/* Removes and returns the block in use at `address`, or NULL. */
static pool_block *in_use_take(gk_pool *pool, uintptr_t address)
{
    pool_block **link = &pool->in_use[hash_address(pool, address)];
    while (*link) {
        pool_block *block = *link;
        if (block->address == address) {
            *link = block->hash_next;
            block->hash_next = NULL;
            pool->in_use_count--;
            return block;
        }
        link = &block->hash_next;
    }
    return NULL;
}

/* ---- chunks ------------------------------------------------------------ */

static void chunk_unlink(gk_pool *pool, pool_chunk *chunk)
{
    if (chunk->prev)
        chunk->prev->next = chunk->next;
    else
        pool->chunks = chunk->next;
    if (chunk->next)
        chunk->next->prev = chunk->prev;
}

/* Gets a chunk of `chunk_size` bytes from the driver and adds it to the
 * pool as one free block, using the bookkeeping `chunk` and `block` the
 * caller allocated (and still owns when this fails). Returns the
 * allocator's status, with its message, on failure. */
static gk_status chunk_add(gk_pool *pool, size_t chunk_size, pool_chunk *chunk, pool_block *block)
{
    char *address = NULL;
    pool->stats.driver_allocations++; /* every call, failed ones too (pool.h) */
    gk_status status = pool->allocate(pool->context, chunk_size, &address);
    if (status != GK_OK)
        return status;
    *chunk = (pool_chunk){(uintptr_t)address, chunk_size, block, NULL, pool->chunks};
    if (pool->chunks)
        pool->chunks->prev = chunk;
    pool->chunks = chunk;
    *block = (pool_block){(uintptr_t)address, chunk_size, false, chunk, NULL, NULL, NULL};
    pool->block_count++;
    free_insert(pool, block);
    pool->stats.chunks++;
    pool->stats.cached_bytes += chunk_size;
    return GK_OK;
}

/* Returns every chunk whose only block is free to the driver. Caller holds
 * the lock. */
static void trim_locked(gk_pool *pool)
{
    pool_chunk *chunk = pool->chunks;
    while (chunk) {
        pool_chunk *next = chunk->next;
        pool_block *block = chunk->first;
        if (block->free && !block->next) {
            free_remove(pool, block);
            pool->block_count--;
            chunk_unlink(pool, chunk);
            pool->free(pool->context, (char *)chunk->address);
            pool->stats.chunks--;
            pool->stats.cached_bytes -= chunk->size;
            free(block);
            free(chunk);
        }
        chunk = next;
    }
}

/* ---- the public calls --------------------------------------------------- */

gk_pool *gk_pool_create(const char *name, gk_pool_allocate_fn allocate, gk_pool_free_fn free_fn,
                        void *context)
{
    gk_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    snprintf(pool->name, sizeof pool->name, "%s", name ? name : "device");
    pool->allocate = allocate;
    pool->free = free_fn;
    pool->context = context;
    pool->in_use_bits = 6;
    pool->in_use_buckets = (size_t)1 << pool->in_use_bits;
    pool->in_use = calloc(pool->in_use_buckets, sizeof *pool->in_use);
    if (!pool->in_use || pthread_mutex_init(&pool->lock, NULL) != 0) {
        free(pool->in_use);
        free(pool);
        return NULL;
    }
    return pool;
}

/* Hands out `size` bytes (a multiple of 512) from the best-fitting free
 * block, or returns NULL when no free block is large enough. */
static pool_block *take_best_fit(gk_pool *pool, size_t size)
{
    size_t at = free_lower_bound(pool, size, 0);
    if (at == pool->free_count)
        return NULL;
    pool_block *block = pool->free_blocks[at];
    free_remove(pool, block);

    /* Split off the rest as a free block of its own when it can serve a
     * request. If host memory is too short for the bookkeeping, hand out
     * the whole block instead: wasteful but correct. */
    size_t rest = block->size - size;
    if (rest >= POOL_ALIGNMENT && reserve_block(pool)) {
        pool_block *tail = malloc(sizeof *tail);
        if (tail) {
            *tail = (pool_block){block->address + size, rest, false, block->chunk, block,
                                 block->next, NULL};
            if (block->next)
                block->next->prev = tail;
            block->next = tail;
            block->size = size;
            pool->block_count++;
            free_insert(pool, tail);
        }
    }
    in_use_insert(pool, block);
    pool->stats.cached_bytes -= block->size;
    pool->stats.in_use_bytes += block->size;
    if (pool->stats.in_use_bytes > pool->stats.peak_in_use_bytes)
        pool->stats.peak_in_use_bytes = pool->stats.in_use_bytes;
    return block;
}

/* Adds a chunk of `chunk_size` bytes for a request of `bytes`. When the
 * driver is out of memory, cached chunks may be what fills the device:
 * give them back and ask once more. Caller holds the lock. */
static gk_status grow(gk_pool *pool, size_t bytes, size_t chunk_size)
{
    /* The bookkeeping first, so that running out of host memory is told
     * apart from the device running out. */
    pool_chunk *chunk = malloc(sizeof *chunk);
    pool_block *block = malloc(sizeof *block);
    if (!chunk || !block || !reserve_block(pool)) {
        free(chunk);
        free(block);
        return gk_fail(GK_ERR_OUT_OF_MEMORY,
                       "out of host memory while growing the memory pool of %s", pool->name);
    }
    gk_status status = chunk_add(pool, chunk_size, chunk, block);
    if (status == GK_ERR_OUT_OF_MEMORY) {
        trim_locked(pool);
        status = chunk_add(pool, chunk_size, chunk, block);
    }
    if (status == GK_OK)
        return GK_OK;
    free(chunk);
    free(block);
    if (status != GK_ERR_OUT_OF_MEMORY)
        return status; /* the allocator's own message stays */
    char request[32], in_use[32], held[32];
    gk_format_size(request, sizeof request, bytes);
    gk_format_size(in_use, sizeof in_use, pool->stats.in_use_bytes);
    gk_format_size(held, sizeof held, pool->stats.in_use_bytes + pool->stats.cached_bytes);
    return gk_fail(GK_ERR_OUT_OF_MEMORY,
                   "out of memory on %s: cannot allocate %s (%s in use, %s held by gpukit's "
                   "memory pool); free arrays you no longer need, or use a smaller "
                   "batch",
                   pool->name, request, in_use, held);
}

gk_status gk_pool_allocate(gk_pool *pool, size_t bytes, char **address)
{
    *address = NULL;
    if (bytes > POOL_MAX_REQUEST) {
        char request[32];
        gk_format_size(request, sizeof request, bytes);
        return gk_fail(GK_ERR_OUT_OF_MEMORY,
                       "cannot allocate %s on %s: more memory than any device has; "
                       "check the array's shape and dtype",
                       request, pool->name);
    }
    /* 0 bytes still gets a block of its own, so every address is unique. */
    size_t size = bytes ? round_up(bytes, POOL_ALIGNMENT) : POOL_ALIGNMENT;

    pthread_mutex_lock(&pool->lock);
    pool_block *block = take_best_fit(pool, size);
    if (!block) {
        gk_status status = grow(pool, bytes, chunk_size_for(size));
        if (status != GK_OK) {
            pthread_mutex_unlock(&pool->lock);
            return status;
        }
        block = take_best_fit(pool, size); /* the new chunk fits: never NULL */
    }
    *address = (char *)block->address;
    pthread_mutex_unlock(&pool->lock);
    return GK_OK;
}

void gk_pool_release(gk_pool *pool, char *address)
{
    if (!address)
        return;
    pthread_mutex_lock(&pool->lock);
    pool_block *block = in_use_take(pool, (uintptr_t)address);
    if (!block) {
        pthread_mutex_unlock(&pool->lock);
        fprintf(stderr,
                "gpukit: warning: ignoring the release of address %p on %s: the memory pool "
                "did not hand it out, or it was released already (a bug in the caller)\n",
                (void *)address, pool->name);
        return;
    }
    pool->stats.in_use_bytes -= block->size;
    pool->stats.cached_bytes += block->size;

    /* Merge with free neighbours, so a later large request can use the
     * space. Each neighbour leaves the sorted array before its size
     * changes, since the array is sorted by size. */
    pool_block *prev = block->prev;
    if (prev && prev->free) {
        free_remove(pool, prev);
        prev->size += block->size;
        prev->next = block->next;
        if (block->next)
            block->next->prev = prev;
        free(block);
        pool->block_count--;
        block = prev;
    }
    pool_block *next = block->next;
    if (next && next->free) {
        free_remove(pool, next);
        block->size += next->size;
        block->next = next->next;
        if (next->next)
            next->next->prev = block;
        free(next);
        pool->block_count--;
    }
    free_insert(pool, block);
    pthread_mutex_unlock(&pool->lock);
}

void gk_pool_trim(gk_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    trim_locked(pool);
    pthread_mutex_unlock(&pool->lock);
}

void gk_pool_stats_of(gk_pool *pool, bool reset_peak, gk_pool_stats *stats)
{
    pthread_mutex_lock(&pool->lock);
    *stats = pool->stats;
    if (reset_peak)
        pool->stats.peak_in_use_bytes = pool->stats.in_use_bytes;
    pthread_mutex_unlock(&pool->lock);
}

void gk_pool_destroy(gk_pool *pool)
{
    if (!pool)
        return;
    pool_chunk *chunk = pool->chunks;
    while (chunk) {
        pool_chunk *next = chunk->next;
        pool_block *block = chunk->first;
        while (block) {
            pool_block *following = block->next;
            free(block);
            block = following;
        }
        pool->free(pool->context, (char *)chunk->address);
        free(chunk);
        chunk = next;
    }
    pthread_mutex_destroy(&pool->lock);
    free(pool->free_blocks);
    free(pool->in_use);
    free(pool);
}
