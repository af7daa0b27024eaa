/* Internal: a caching memory pool for one device, so repeated allocations
 * do not call the driver (the design of CuPy's and PyTorch's pools).
 *
 * Sizes are rounded up to 512 bytes. A request is served from the smallest
 * cached free block that fits (best fit), split when the rest is worth
 * keeping; freed blocks merge with free neighbours of the same chunk. When
 * nothing fits, a new chunk comes from the driver: 2 MiB for requests up to
 * 1 MiB, 20 MiB up to 10 MiB, else the request rounded up to 2 MiB. When
 * the driver is out of memory, the pool gives back every wholly free chunk
 * and tries once more before failing with GK_ERR_OUT_OF_MEMORY and a
 * message naming the request, the bytes in use and the bytes it held.
 *
 * Freed blocks are reused at once: that is safe because a device's work
 * runs in order on its stream (see gpu/driver.h). Thread-safe. */
#ifndef GK_COMPUTE_GPU_POOL_H
#define GK_COMPUTE_GPU_POOL_H

#include <gpukit/status.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gk_pool gk_pool;

/* The driver's raw allocator (addresses are opaque: never dereferenced). */
typedef gk_status (*gk_pool_allocate_fn)(void *context, size_t bytes, char **address);
typedef void (*gk_pool_free_fn)(void *context, char *address);

typedef struct gk_pool_stats {
    uint64_t in_use_bytes;   /* handed out, rounded sizes */
    uint64_t peak_in_use_bytes; /* the most in use at once since creation or a reset */
    uint64_t cached_bytes;   /* held from the driver but free */
    uint64_t chunks;         /* driver allocations held now */
    uint64_t driver_allocations; /* calls to the allocator so far */
} gk_pool_stats;

/* NULL when out of host memory. `name` (e.g. "cuda:0") is used in
 * messages. */
gk_pool *gk_pool_create(const char *name, gk_pool_allocate_fn allocate, gk_pool_free_fn free,
                        void *context);
/* bytes may be 0 (a unique, valid 512-byte block). */
gk_status gk_pool_allocate(gk_pool *pool, size_t bytes, char **address);
/* Returns a block from gk_pool_allocate to the pool. */
void gk_pool_release(gk_pool *pool, char *address);
/* Gives every wholly free chunk back to the driver. */
void gk_pool_trim(gk_pool *pool);
/* The counts now; with reset_peak, the peak then restarts from what is in
 * use now. */
void gk_pool_stats_of(gk_pool *pool, bool reset_peak, gk_pool_stats *stats);
/* Frees every chunk (blocks still in use included). */
void gk_pool_destroy(gk_pool *pool);

#endif
