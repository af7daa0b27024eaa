/* Placeholder until the pool lands: every request goes to the driver. */
#include "compute/gpu/pool.h"

#include <stdlib.h>

struct gk_pool {
    gk_pool_allocate_fn allocate;
    gk_pool_free_fn free;
    void *context;
};

gk_pool *gk_pool_create(const char *name, gk_pool_allocate_fn allocate, gk_pool_free_fn free_fn,
                        void *context)
{
    (void)name;
    gk_pool *pool = malloc(sizeof *pool);
    if (pool)
        *pool = (gk_pool){allocate, free_fn, context};
    return pool;
}

gk_status gk_pool_allocate(gk_pool *pool, size_t bytes, char **address)
{
    return pool->allocate(pool->context, bytes ? bytes : 512, address);
}

void gk_pool_release(gk_pool *pool, char *address)
{
    pool->free(pool->context, address);
}

void gk_pool_trim(gk_pool *pool)
{
    (void)pool;
}

void gk_pool_stats_of(gk_pool *pool, gk_pool_stats *stats)
{
    (void)pool;
    *stats = (gk_pool_stats){0, 0, 0, 0};
}

void gk_pool_destroy(gk_pool *pool)
{
    free(pool);
}
