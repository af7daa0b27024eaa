/* The caching memory pool (src/compute/gpu/pool.c), driven by a fake
 * allocator: it hands out fake device addresses from a bump counter (never
 * dereferenced, like real device memory), records every call, and can be
 * given a byte limit past which it answers GK_ERR_OUT_OF_MEMORY. */
#include "check.h"

#include "compute/gpu/pool.h"
#include "core/error.h"

#include <gpukit/status.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(sizeof(uintptr_t) >= 8, "fake addresses need 64 bits");

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define FAKE_MAX_CHUNKS 4096

typedef struct span {
    uintptr_t address;
    size_t size;
} span;

/* ---- the fake driver --------------------------------------------------- */

typedef struct fake {
    pthread_mutex_t lock;
    uintptr_t next;      /* the bump counter: chunks are contiguous */
    uint64_t limit;      /* 0: no limit */
    uint64_t held;       /* bytes handed out and not freed */
    gk_status fail_with; /* GK_OK, or what every call answers */
    int calls, allocations, frees, bad_frees;
    size_t last_request;
    uintptr_t last_freed;
    span live[FAKE_MAX_CHUNKS];
    size_t live_count;
} fake;

static void fake_init(fake *f, uint64_t limit)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->lock, NULL);
    f->next = (uintptr_t)1 << 40; /* like an OpenCL slot address: no pointer */
    f->limit = limit;
}

static gk_status fake_allocate(void *context, size_t bytes, char **address)
{
    fake *f = context;
    pthread_mutex_lock(&f->lock);
    f->calls++;
    f->last_request = bytes;
    if (f->fail_with != GK_OK) {
        pthread_mutex_unlock(&f->lock);
        return gk_fail(f->fail_with, "fake driver: launch failed");
    }
    if ((f->limit && bytes > f->limit - f->held) || f->live_count == FAKE_MAX_CHUNKS) {
        pthread_mutex_unlock(&f->lock);
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "fake driver: out of memory");
    }
    *address = (char *)f->next;
    f->live[f->live_count++] = (span){f->next, bytes};
    f->next += bytes;
    f->held += bytes;
    f->allocations++;
    pthread_mutex_unlock(&f->lock);
    return GK_OK;
}

static void fake_free(void *context, char *address)
{
    fake *f = context;
    pthread_mutex_lock(&f->lock);
    f->frees++;
    f->last_freed = (uintptr_t)address;
    size_t i = 0;
    while (i < f->live_count && f->live[i].address != (uintptr_t)address)
        i++;
    if (i == f->live_count) {
        f->bad_frees++; /* not an address this driver handed out */
    } else {
        f->held -= f->live[i].size;
        f->live[i] = f->live[--f->live_count];
    }
    pthread_mutex_unlock(&f->lock);
}

static gk_pool *new_pool(fake *f)
{
    gk_pool *pool = gk_pool_create("test:0", fake_allocate, fake_free, f);
    if (!pool) {
        fprintf(stderr, "gk_pool_create failed\n");
        exit(1);
    }
    return pool;
}

/* ---- helpers ------------------------------------------------------------ */

static gk_pool_stats stats_of(gk_pool *pool)
{
    gk_pool_stats s;
    gk_pool_stats_of(pool, false, &s);
    return s;
}

static uintptr_t get(gk_pool *pool, size_t bytes)
{
    char *address = NULL;
    gk_status status = gk_pool_allocate(pool, bytes, &address);
    CHECK(status == GK_OK, "allocating %zu bytes: %s", bytes, gk_last_error());
    CHECK(address != NULL, "allocating %zu bytes gave NULL", bytes);
    return (uintptr_t)address;
}

static void put(gk_pool *pool, uintptr_t address)
{
    gk_pool_release(pool, (char *)address);
}

#define CHECK_STATS(pool, in_use, cached, chunks_, driver)                              \
    do {                                                                                \
        gk_pool_stats s_ = stats_of(pool);                                              \
        CHECK(s_.in_use_bytes == (uint64_t)(in_use), "in use %llu, expected %llu",      \
              (unsigned long long)s_.in_use_bytes, (unsigned long long)(in_use));       \
        CHECK(s_.cached_bytes == (uint64_t)(cached), "cached %llu, expected %llu",      \
              (unsigned long long)s_.cached_bytes, (unsigned long long)(cached));       \
        CHECK(s_.chunks == (uint64_t)(chunks_), "chunks %llu, expected %llu",           \
              (unsigned long long)s_.chunks, (unsigned long long)(chunks_));            \
        CHECK(s_.driver_allocations == (uint64_t)(driver),                              \
              "driver allocations %llu, expected %llu",                                 \
              (unsigned long long)s_.driver_allocations, (unsigned long long)(driver)); \
    } while (0)

/* The pool's totals agree with what the fake driver holds. */
static void check_against_driver(gk_pool *pool, fake *f)
{
    gk_pool_stats s = stats_of(pool);
    CHECK(s.in_use_bytes + s.cached_bytes == f->held, "pool holds %llu, driver gave %llu",
          (unsigned long long)(s.in_use_bytes + s.cached_bytes), (unsigned long long)f->held);
    CHECK(s.chunks == f->live_count, "pool has %llu chunks, driver %zu",
          (unsigned long long)s.chunks, f->live_count);
    CHECK(s.driver_allocations == (uint64_t)f->calls, "pool counted %llu calls, driver %d",
          (unsigned long long)s.driver_allocations, f->calls);
    CHECK(f->bad_frees == 0, "the pool freed %d addresses the driver never gave", f->bad_frees);
}

static uint64_t rng_next(uint64_t *state)
{
    /* xorshift64: deterministic, so a failure replays. */
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

static size_t rounded(size_t bytes)
{
    return bytes ? (bytes + 511) / 512 * 512 : 512;
}

static bool overlaps(const span *spans, size_t count, uintptr_t address, size_t size)
{
    for (size_t i = 0; i < count; i++)
        if (address < spans[i].address + spans[i].size && spans[i].address < address + size)
            return true;
    return false;
}

/* ---- tests --------------------------------------------------------------- */

static void test_rounding(void)
{
    fake f;
    fake_init(&f, 0);
    gk_pool *pool = new_pool(&f);
    uintptr_t a = get(pool, 1);
    CHECK_STATS(pool, 512, 2 * MIB - 512, 1, 1);
    uintptr_t b = get(pool, 512);
    CHECK_STATS(pool, 1024, 2 * MIB - 1024, 1, 1);
    uintptr_t c = get(pool, 513);
    CHECK_STATS(pool, 2048, 2 * MIB - 2048, 1, 1);
    uintptr_t d = get(pool, 1000);
    CHECK_STATS(pool, 3072, 2 * MIB - 3072, 1, 1);
    /* Carved one after the other from a fresh chunk, each its rounded size. */
    CHECK(b - a == 512, "1 byte took %ju bytes", (uintmax_t)(b - a));
    CHECK(c - b == 512, "512 bytes took %ju bytes", (uintmax_t)(c - b));
    CHECK(d - c == 1024, "513 bytes took %ju bytes", (uintmax_t)(d - c));
    CHECK(a % 512 == 0 && b % 512 == 0 && c % 512 == 0 && d % 512 == 0, "unaligned address");
    put(pool, a);
    put(pool, b);
    put(pool, c);
    put(pool, d);
    CHECK_STATS(pool, 0, 2 * MIB, 1, 1);
    check_against_driver(pool, &f);
    gk_pool_destroy(pool);
}

static void test_reuse(void)
{
    fake f;
    fake_init(&f, 0);
    gk_pool *pool = new_pool(&f);
    uintptr_t first = get(pool, 1000);
    put(pool, first);
    for (int i = 0; i < 100; i++) {
        uintptr_t again = get(pool, 1000);
        CHECK(again == first, "round %d: the freed block was not reused", i);
        put(pool, again);
    }
    CHECK(f.calls == 1, "%d driver calls for one size allocated 101 times", f.calls);
    CHECK_STATS(pool, 0, 2 * MIB, 1, 1);
    gk_pool_destroy(pool);
}

static void test_best_fit(void)
{
    fake f;
    fake_init(&f, 0);
    gk_pool *pool = new_pool(&f);
    /* Free holes of 4K, 2K and 3K, kept apart by guards in use. */
    uintptr_t x4 = get(pool, 4 * KIB);
    uintptr_t g1 = get(pool, 512);
    uintptr_t x2 = get(pool, 2 * KIB);
    uintptr_t g2 = get(pool, 512);
    uintptr_t x3 = get(pool, 3 * KIB);
    uintptr_t g3 = get(pool, 512);
    put(pool, x4);
    put(pool, x2);
    put(pool, x3);
    CHECK_STATS(pool, 1536, 2 * MIB - 1536, 1, 1);

    /* 2.5K fits the 4K, the 3K and the chunk's tail: the 3K is smallest. */
    uintptr_t p = get(pool, 2560);
    CHECK(p == x3, "2.5K went to +%ju, not the 3K hole at +%ju", (uintmax_t)(p - x4),
          (uintmax_t)(x3 - x4));
    /* The 3K hole was split: its last 512 bytes are now the best fit. */
    uintptr_t q = get(pool, 512);
    CHECK(q == x3 + 2560, "512 went to +%ju, not the split-off rest at +%ju",
          (uintmax_t)(q - x4), (uintmax_t)(x3 + 2560 - x4));
    uintptr_t r = get(pool, 1536);
    CHECK(r == x2, "1.5K went to +%ju, not the 2K hole", (uintmax_t)(r - x4));
    uintptr_t s = get(pool, 4 * KIB);
    CHECK(s == x4, "4K went to +%ju, not the 4K hole", (uintmax_t)(s - x4));
    uintptr_t t = get(pool, 4 * KIB);
    CHECK(t == g3 + 512, "4K went to +%ju, not the chunk's tail", (uintmax_t)(t - x4));
    CHECK(f.calls == 1, "%d driver calls", f.calls);
    uintptr_t all[] = {g1, g2, g3, p, q, r, s, t};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        put(pool, all[i]);
    CHECK_STATS(pool, 0, 2 * MIB, 1, 1);
    gk_pool_trim(pool); /* everything merged back into one block */
    CHECK_STATS(pool, 0, 0, 0, 1);
    gk_pool_destroy(pool);
}

static void test_split(void)
{
    fake f;
    fake_init(&f, 0);
    gk_pool *pool = new_pool(&f);
    uintptr_t a = get(pool, 100);
    uintptr_t b = get(pool, 100);
    CHECK(f.calls == 1, "two small blocks took %d driver calls", f.calls);
    CHECK(b > a ? b - a == 512 : false, "second block at +%jd, expected +512",
          (intmax_t)(b - a));
    CHECK(a == f.live[0].address, "the first block is not at the chunk's start");
    CHECK_STATS(pool, 1024, 2 * MIB - 1024, 1, 1);
    /* A block the size of the whole chunk's rest is carved from it too. */
    uintptr_t c = get(pool, 2 * MIB - 1024);
    CHECK(c == b + 512, "the rest of the chunk was not used");
    CHECK_STATS(pool, 2 * MIB, 0, 1, 1);
    uintptr_t d = get(pool, 100);
    CHECK(f.calls == 2, "a full chunk did not lead to a new one");
    CHECK(d == f.live[1].address, "the new block is not at the new chunk's start");
    put(pool, a);
    put(pool, b);
    put(pool, c);
    put(pool, d);
    check_against_driver(pool, &f);
    gk_pool_destroy(pool);
}

static void test_merge(void)
{
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                     {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int o = 0; o < 6; o++) {
        fake f;
        fake_init(&f, 0);
        gk_pool *pool = new_pool(&f);
        uintptr_t blocks[3];
        for (int i = 0; i < 3; i++)
            blocks[i] = get(pool, 1 * KIB);
        uintptr_t guard = get(pool, 1 * KIB); /* keeps the tail out of it */
        for (int i = 0; i < 3; i++)
            put(pool, blocks[orders[o][i]]);
        CHECK_STATS(pool, 1 * KIB, 2 * MIB - 1 * KIB, 1, 1);
        /* Only the three neighbours merged into one can serve this at the
         * first one's address; otherwise it would come from the tail. */
        uintptr_t whole = get(pool, 3 * KIB);
        CHECK(whole == blocks[0], "order %d%d%d: 3K at +%jd, not merged at the start",
              orders[o][0], orders[o][1], orders[o][2], (intmax_t)(whole - blocks[0]));
        CHECK_STATS(pool, 4 * KIB, 2 * MIB - 4 * KIB, 1, 1);
        /* And everything merges with the tail: the chunk is whole again. */
        put(pool, whole);
        put(pool, guard);
        gk_pool_trim(pool);
        CHECK(f.frees == 1 && f.live_count == 0, "order %d%d%d: chunk not whole after frees",
              orders[o][0], orders[o][1], orders[o][2]);
        CHECK_STATS(pool, 0, 0, 0, 1);
        gk_pool_destroy(pool);
    }
}

static void test_no_merge_across_chunks(void)
{
    fake f;
    fake_init(&f, 0);
    gk_pool *pool = new_pool(&f);
    /* Two 2 MiB chunks, adjacent in the fake address space. */
    uintptr_t a = get(pool, 1 * MIB);
    uintptr_t b = get(pool, 1 * MIB);
    uintptr_t c = get(pool, 1 * MIB);
    uintptr_t d = get(pool, 1 * MIB);
    CHECK(f.calls == 2 && c == a + 2 * MIB, "expected two adjacent chunks");
    put(pool, a);
    put(pool, b);
    put(pool, c);
    put(pool, d);
    CHECK_STATS(pool, 0, 4 * MIB, 2, 2);
    /* 3 MiB would fit across the two chunks; a block may not span them. */
    uintptr_t e = get(pool, 3 * MIB);
    CHECK(f.calls == 3 && e == a + 4 * MIB, "3 MiB did not get a chunk of its own");
    put(pool, e);
    gk_pool_trim(pool);
    CHECK(f.frees == 3 && f.live_count == 0, "trim left %zu chunks", f.live_count);
    gk_pool_destroy(pool);
}

static void test_chunk_sizes(void)
{
    static const struct {
        size_t request, chunk;
    } cases[] = {
        {0, 2 * MIB},
        {512, 2 * MIB},
        {1 * MIB, 2 * MIB},
        {1 * MIB + 1, 20 * MIB},
        {10 * MIB, 20 * MIB},
        {10 * MIB + 1, 12 * MIB},
        {12 * MIB, 12 * MIB},
        {21 * MIB, 22 * MIB},
        {100 * MIB + 1, 102 * MIB},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake f;
        fake_init(&f, 0);
        gk_pool *pool = new_pool(&f);
        uintptr_t p = get(pool, cases[i].request);
        CHECK(f.calls == 1 && f.last_request == cases[i].chunk,
              "a %zu-byte request asked the driver for %zu bytes, expected %zu",
              cases[i].request, f.last_request, cases[i].chunk);
        size_t size = rounded(cases[i].request);
        CHECK_STATS(pool, size, cases[i].chunk - size, 1, 1);
        put(pool, p);
        gk_pool_destroy(pool);
        CHECK(f.frees == 1 && f.live_count == 0, "destroy left the chunk");
    }
}

static void test_random_workload(void)
{
    enum { OPERATIONS = 4000, MAX_LIVE = 200 };
    fake f;
    fake_init(&f, 0);
    gk_pool *pool = new_pool(&f);
    span live[MAX_LIVE];
    size_t live_count = 0;
    uint64_t in_use = 0;
    uint64_t seed = 0x5eed1234abcdULL;
    int bad_placements = 0;
    for (int op = 0; op < OPERATIONS; op++) {
        uint64_t r = rng_next(&seed);
        if (live_count < MAX_LIVE && (live_count == 0 || r % 100 < 55)) {
            uint64_t kind = rng_next(&seed) % 100;
            size_t bytes = kind < 80   ? (size_t)(rng_next(&seed) % (16 * KIB))
                           : kind < 97 ? (size_t)(rng_next(&seed) % (3 * MIB))
                                       : 11 * MIB + (size_t)(rng_next(&seed) % (4 * MIB));
            uintptr_t p = get(pool, bytes);
            size_t size = rounded(bytes);
            if (overlaps(live, live_count, p, size)) {
                CHECK(false, "op %d: %zu bytes at %#jx overlap a block in use", op, size,
                      (uintmax_t)p);
            }
            /* Inside exactly one of the driver's chunks, 512-aligned. */
            bool inside = false;
            for (size_t i = 0; i < f.live_count; i++)
                if (f.live[i].address <= p && p + size <= f.live[i].address + f.live[i].size)
                    inside = true;
            if (!inside || p % 512)
                bad_placements++;
            live[live_count++] = (span){p, size};
            in_use += size;
        } else {
            size_t i = (size_t)(rng_next(&seed) % live_count);
            put(pool, live[i].address);
            in_use -= live[i].size;
            live[i] = live[--live_count];
        }
        if (op % 997 == 0)
            gk_pool_trim(pool);
        gk_pool_stats s = stats_of(pool);
        if (s.in_use_bytes != in_use) {
            CHECK(false, "op %d: in use %llu, expected %llu", op,
                  (unsigned long long)s.in_use_bytes, (unsigned long long)in_use);
            break;
        }
        if (s.in_use_bytes + s.cached_bytes != f.held || s.chunks != f.live_count) {
            CHECK(false, "op %d: pool and driver disagree", op);
            break;
        }
    }
    CHECK(bad_placements == 0, "%d blocks outside a chunk or unaligned", bad_placements);
    while (live_count)
        put(pool, live[--live_count].address);
    gk_pool_stats s = stats_of(pool);
    CHECK(s.in_use_bytes == 0, "in use after freeing everything");
    check_against_driver(pool, &f);
    gk_pool_trim(pool);
    CHECK(f.live_count == 0 && f.held == 0, "trim kept %zu chunks after freeing everything",
          f.live_count);
    CHECK_STATS(pool, 0, 0, 0, f.calls);
    gk_pool_destroy(pool);
}

static void test_out_of_memory(void)
{
    fake f;
    fake_init(&f, 24 * MIB);
    gk_pool *pool = new_pool(&f);
    uintptr_t a = get(pool, 12 * MIB); /* a 12 MiB chunk */
    uintptr_t b = get(pool, 1 * MIB);  /* a 2 MiB chunk */
    uintptr_t a_chunk = a;
    put(pool, a);
    CHECK_STATS(pool, 1 * MIB, 13 * MIB, 2, 2);

    /* 16 MiB fits only once the cached 12 MiB chunk goes back. */
    uintptr_t c = get(pool, 16 * MIB);
    CHECK(f.calls == 4, "expected a failed call and a retry, got %d calls", f.calls);
    CHECK(f.frees == 1 && f.last_freed == a_chunk, "trim did not give back the free chunk");
    CHECK_STATS(pool, 17 * MIB, 1 * MIB, 2, 4);
    check_against_driver(pool, &f);

    /* 10 MiB needs a 20 MiB chunk: no free chunk is left to trim. */
    char *d = (char *)1;
    gk_status status = gk_pool_allocate(pool, 10 * MIB, &d);
    CHECK(status == GK_ERR_OUT_OF_MEMORY, "status %d", (int)status);
    CHECK(d == NULL, "a failed allocation left an address");
    const char *message = gk_last_error();
    CHECK(strstr(message, "test:0") != NULL, "no device name in: %s", message);
    CHECK(strstr(message, "10.0 MiB") != NULL, "no request size in: %s", message);
    CHECK(strstr(message, "17.0 MiB") != NULL, "no bytes in use in: %s", message);
    CHECK(strstr(message, "18.0 MiB") != NULL, "no bytes held in: %s", message);
    CHECK(strstr(message, "smaller batch") != NULL, "no fix in: %s", message);
    CHECK(f.calls == 6, "expected one try and one retry, got %d calls", f.calls);
    CHECK_STATS(pool, 17 * MIB, 1 * MIB, 2, 6);

    /* Once c is freed, its 16 MiB chunk is cached; 17 MiB does not fit it,
     * and the new 18 MiB chunk fits only once that one is trimmed. */
    put(pool, c);
    uintptr_t e = get(pool, 17 * MIB);
    CHECK(f.frees == 2, "c's chunk was not given back");
    CHECK_STATS(pool, 18 * MIB, 1 * MIB + 1 * MIB, 2, 8);
    check_against_driver(pool, &f);
    put(pool, e);
    put(pool, b);
    gk_pool_destroy(pool);
    CHECK(f.live_count == 0 && f.bad_frees == 0, "destroy left %zu chunks", f.live_count);
}

static void test_driver_error(void)
{
    fake f;
    fake_init(&f, 0);
    gk_pool *pool = new_pool(&f);
    put(pool, get(pool, 100)); /* a cached chunk a trim would give back */
    f.fail_with = GK_ERR_DRIVER;
    char *p = NULL;
    gk_status status = gk_pool_allocate(pool, 4 * MIB, &p);
    CHECK(status == GK_ERR_DRIVER, "status %d, expected the driver's own", (int)status);
    CHECK(strcmp(gk_last_error(), "fake driver: launch failed") == 0,
          "the driver's message was replaced: %s", gk_last_error());
    CHECK(f.calls == 2, "a driver error was retried (%d calls)", f.calls);
    CHECK(f.frees == 0, "a driver error trimmed the pool");
    CHECK_STATS(pool, 0, 2 * MIB, 1, 2);
    /* Cached blocks still serve requests. */
    uintptr_t q = get(pool, 100);
    put(pool, q);
    gk_pool_destroy(pool);
}

static void test_stats_and_trim(void)
{
    fake f;
    fake_init(&f, 0);
    gk_pool *pool = new_pool(&f);
    CHECK_STATS(pool, 0, 0, 0, 0);
    gk_pool_trim(pool); /* nothing to do */
    CHECK_STATS(pool, 0, 0, 0, 0);
    uintptr_t p = get(pool, 1000);
    CHECK_STATS(pool, 1024, 2 * MIB - 1024, 1, 1);
    uintptr_t q = get(pool, 3 * MIB);
    CHECK_STATS(pool, 1024 + 3 * MIB, 2 * MIB - 1024 + 17 * MIB, 2, 2);
    gk_pool_trim(pool); /* both chunks have blocks in use */
    CHECK(f.frees == 0, "trim freed a chunk with a block in use");
    CHECK_STATS(pool, 1024 + 3 * MIB, 2 * MIB - 1024 + 17 * MIB, 2, 2);
    put(pool, p);
    CHECK_STATS(pool, 3 * MIB, 19 * MIB, 2, 2);
    gk_pool_trim(pool);
    CHECK(f.frees == 1 && f.last_freed == p, "trim did not give back the free 2 MiB chunk");
    CHECK_STATS(pool, 3 * MIB, 17 * MIB, 1, 2);
    put(pool, q);
    CHECK_STATS(pool, 0, 20 * MIB, 1, 2);
    gk_pool_trim(pool);
    CHECK_STATS(pool, 0, 0, 0, 2);
    CHECK(f.frees == 2 && f.held == 0, "trim kept memory");
    /* The pool starts over after a trim. */
    put(pool, get(pool, 1000));
    CHECK_STATS(pool, 0, 2 * MIB, 1, 3);
    gk_pool_destroy(pool);
    CHECK(f.frees == 3 && f.live_count == 0, "destroy kept a chunk");
}

/* The peak is the most in use at once, and restarts from what is in use
 * when reset. */
static void test_peak(void)
{
    fake f;
    fake_init(&f, 0);
    gk_pool *pool = new_pool(&f);
    uintptr_t p = get(pool, 3 * MIB), q = get(pool, 1000);
    put(pool, p);
    gk_pool_stats s;
    gk_pool_stats_of(pool, true, &s); /* read, then reset */
    CHECK(s.peak_in_use_bytes == 3 * MIB + 1024, "peak %llu, expected 3 MiB + 1024",
          (unsigned long long)s.peak_in_use_bytes);
    CHECK(stats_of(pool).peak_in_use_bytes == 1024, "the reset peak is not what is in use");
    put(pool, get(pool, 2 * MIB));
    CHECK(stats_of(pool).peak_in_use_bytes == 2 * MIB + 1024, "the peak after a reset");
    put(pool, q);
    CHECK(stats_of(pool).peak_in_use_bytes == 2 * MIB + 1024, "a release lowered the peak");
    gk_pool_destroy(pool);
}

static void test_destroy(void)
{
    fake f;
    fake_init(&f, 0);
    gk_pool *pool = new_pool(&f);
    uintptr_t small1 = get(pool, 100);
    (void)get(pool, 200);         /* left in use */
    (void)get(pool, 5 * MIB);     /* left in use, 20 MiB chunk */
    uintptr_t large = get(pool, 30 * MIB);
    (void)get(pool, 40 * MIB);    /* left in use */
    put(pool, small1);
    put(pool, large);
    CHECK(f.allocations == 4, "expected 4 chunks, got %d", f.allocations);
    gk_pool_destroy(pool);
    CHECK(f.frees == f.allocations, "destroy freed %d of %d chunks", f.frees, f.allocations);
    CHECK(f.live_count == 0 && f.held == 0 && f.bad_frees == 0, "destroy left memory");
    gk_pool_destroy(NULL); /* like free(NULL) */
}

static void test_zero_bytes(void)
{
    fake f;
    fake_init(&f, 0);
    gk_pool *pool = new_pool(&f);
    uintptr_t a = get(pool, 0);
    uintptr_t b = get(pool, 0);
    CHECK(a != b, "two 0-byte blocks share an address");
    CHECK_STATS(pool, 1024, 2 * MIB - 1024, 1, 1);
    put(pool, a);
    put(pool, b);
    CHECK_STATS(pool, 0, 2 * MIB, 1, 1);
    gk_pool_destroy(pool);
}

/* Runs release(pool, address) with stderr captured, and returns whether
 * the output contained `expected`. */
static bool release_warns(gk_pool *pool, uintptr_t address, const char *expected)
{
    char output[1024] = "";
    fflush(stderr);
    int saved = dup(2);
    FILE *capture = tmpfile();
    if (saved < 0 || !capture) {
        CHECK(false, "cannot capture stderr");
        return false;
    }
    dup2(fileno(capture), 2);
    put(pool, address);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(capture);
    size_t n = fread(output, 1, sizeof output - 1, capture);
    output[n] = '\0';
    fclose(capture);
    if (expected[0] == '\0')
        return n == 0;
    return strstr(output, expected) != NULL;
}

static void test_bad_release(void)
{
    fake f;
    fake_init(&f, 0);
    gk_pool *pool = new_pool(&f);
    uintptr_t p = get(pool, 100);
    uintptr_t q = get(pool, 100);
    gk_pool_stats before = stats_of(pool);

    CHECK(release_warns(pool, p + 512 * 4, "test:0"), "no warning for a free address");
    CHECK(release_warns(pool, p + 256, "did not hand it out"), "no warning inside a block");
    CHECK(release_warns(pool, 0x1234, "test:0"), "no warning for a made-up address");
    CHECK(release_warns(pool, 0, ""), "releasing NULL printed something");
    gk_pool_stats after = stats_of(pool);
    CHECK(memcmp(&before, &after, sizeof before) == 0, "a bad release changed the stats");

    CHECK(release_warns(pool, p, ""), "a good release printed something");
    CHECK(release_warns(pool, p, "released already"), "no warning for a double release");
    CHECK_STATS(pool, 512, 2 * MIB - 512, 1, 1);
    /* The pool still works, and p's block is handed out once, not twice. */
    uintptr_t r = get(pool, 100);
    uintptr_t s = get(pool, 100);
    CHECK(r == p && s != p && s != q, "blocks handed out twice after a double release");
    put(pool, q);
    put(pool, r);
    put(pool, s);
    CHECK_STATS(pool, 0, 2 * MIB, 1, 1);
    gk_pool_destroy(pool);
}

static void test_huge_request(void)
{
    fake f;
    fake_init(&f, 80ULL << 30);
    gk_pool *pool = new_pool(&f);
    char *p = (char *)1;
    gk_status status = gk_pool_allocate(pool, SIZE_MAX, &p);
    CHECK(status == GK_ERR_OUT_OF_MEMORY && p == NULL, "SIZE_MAX bytes: status %d", (int)status);
    CHECK(strstr(gk_last_error(), "test:0") != NULL, "no device in: %s", gk_last_error());
    CHECK(f.calls == 0, "an impossible size reached the driver");
    /* Just under the limit the rounding must not wrap around: the driver
     * sees a huge request and refuses it. */
    status = gk_pool_allocate(pool, SIZE_MAX - 2 * MIB, &p);
    CHECK(status == GK_ERR_OUT_OF_MEMORY, "status %d", (int)status);
    CHECK(f.last_request >= SIZE_MAX - 2 * MIB, "the request wrapped to %zu", f.last_request);
    CHECK(strstr(gk_last_error(), "held by") != NULL, "not the pool's message: %s",
          gk_last_error());
    CHECK_STATS(pool, 0, 0, 0, 2);
    gk_pool_destroy(pool);
}

/* ---- threads -------------------------------------------------------------- */

enum { THREADS = 4, THREAD_OPERATIONS = 20000, THREAD_HELD = 8 };

typedef struct shared_state {
    gk_pool *pool;
    pthread_barrier_t start; /* so the threads contend from the first call */
    pthread_mutex_t lock;    /* guards live and the counters */
    span live[THREADS * THREAD_HELD];
    size_t live_count;
    int overlaps;
    int failures;
} shared_state;

typedef struct worker {
    shared_state *shared;
    uint64_t seed;
} worker;

static void live_remove(shared_state *shared, uintptr_t address)
{
    for (size_t i = 0; i < shared->live_count; i++)
        if (shared->live[i].address == address) {
            shared->live[i] = shared->live[--shared->live_count];
            return;
        }
}

static void *work(void *argument)
{
    worker *w = argument;
    shared_state *shared = w->shared;
    span held[THREAD_HELD];
    size_t held_count = 0;
    pthread_barrier_wait(&shared->start);
    for (int op = 0; op < THREAD_OPERATIONS; op++) {
        if (held_count < THREAD_HELD && (held_count == 0 || rng_next(&w->seed) % 2)) {
            size_t bytes = rng_next(&w->seed) % 8 == 0 ? (size_t)(rng_next(&w->seed) % (2 * MIB))
                                                       : (size_t)(rng_next(&w->seed) % (8 * KIB));
            char *p = NULL;
            if (gk_pool_allocate(shared->pool, bytes, &p) != GK_OK) {
                pthread_mutex_lock(&shared->lock);
                shared->failures++;
                pthread_mutex_unlock(&shared->lock);
                continue;
            }
            span block = {(uintptr_t)p, rounded(bytes)};
            pthread_mutex_lock(&shared->lock);
            if (overlaps(shared->live, shared->live_count, block.address, block.size))
                shared->overlaps++;
            shared->live[shared->live_count++] = block;
            pthread_mutex_unlock(&shared->lock);
            held[held_count++] = block;
        } else {
            size_t i = (size_t)(rng_next(&w->seed) % held_count);
            /* Out of the live set before the pool may hand it out again. */
            pthread_mutex_lock(&shared->lock);
            live_remove(shared, held[i].address);
            pthread_mutex_unlock(&shared->lock);
            gk_pool_release(shared->pool, (char *)held[i].address);
            held[i] = held[--held_count];
        }
    }
    while (held_count) {
        held_count--;
        pthread_mutex_lock(&shared->lock);
        live_remove(shared, held[held_count].address);
        pthread_mutex_unlock(&shared->lock);
        gk_pool_release(shared->pool, (char *)held[held_count].address);
    }
    return NULL;
}

static void test_threads(void)
{
    fake f;
    fake_init(&f, 0);
    shared_state shared;
    memset(&shared, 0, sizeof shared);
    shared.pool = new_pool(&f);
    pthread_mutex_init(&shared.lock, NULL);
    pthread_barrier_init(&shared.start, NULL, THREADS);
    pthread_t threads[THREADS];
    worker workers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i] = (worker){&shared, 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1)};
        if (pthread_create(&threads[i], NULL, work, &workers[i]) != 0) {
            fprintf(stderr, "cannot start thread %d\n", i);
            exit(1); /* the others would wait at the barrier forever */
        }
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    CHECK(shared.failures == 0, "%d allocations failed", shared.failures);
    CHECK(shared.overlaps == 0, "%d blocks were handed out while in use", shared.overlaps);
    CHECK(shared.live_count == 0, "test bookkeeping left %zu blocks", shared.live_count);
    gk_pool_stats s = stats_of(shared.pool);
    CHECK(s.in_use_bytes == 0, "%llu bytes still in use after every release",
          (unsigned long long)s.in_use_bytes);
    check_against_driver(shared.pool, &f);
    gk_pool_trim(shared.pool);
    CHECK(f.live_count == 0, "%zu chunks not whole after every release", f.live_count);
    gk_pool_destroy(shared.pool);
    pthread_mutex_destroy(&shared.lock);
    pthread_barrier_destroy(&shared.start);
}

int main(void)
{
    test_rounding();
    test_reuse();
    test_best_fit();
    test_split();
    test_merge();
    test_no_merge_across_chunks();
    test_chunk_sizes();
    test_random_workload();
    test_out_of_memory();
    test_driver_error();
    test_stats_and_trim();
    test_peak();
    test_destroy();
    test_zero_bytes();
    test_bad_release();
    test_huge_request();
    test_threads();
    CHECK_DONE();
}
