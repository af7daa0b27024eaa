/* The on-disk kernel cache (compute/gpu/cache.c): the input is the content
 * of the cache file of a fixed key, read back with gk_cache_read. Any file
 * may lie there (a crash mid-write, another version, a stray copy), and
 * only a whole, matching entry may be returned. */
#include "fuzz.h"

#include "compute/gpu/cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where a valid entry's payload starts (cache.c's HEADER_SIZE). */
enum { HEADER_SIZE = 44 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gk_cache_key key;
    static char name[40];
    const char *dir = fuzz_scratch_dir();
    if (!name[0]) {
        const char *parts[] = {"fuzz"};
        key = gk_cache_key_of(parts, NULL, 1);
        char hex[33];
        gk_cache_key_hex(&key, hex);
        snprintf(name, sizeof name, "%s.bin", hex);
        setenv("GPUKIT_CACHE_DIR", dir, 1);
    }
    fuzz_write_file(dir, name, data, size);
    void *payload;
    size_t payload_size;
    if (gk_cache_read(&key, &payload, &payload_size) == GK_OK) {
        if (payload_size != size - HEADER_SIZE ||
            memcmp(payload, data + HEADER_SIZE, payload_size) != 0)
            abort();
        free(payload);
    }
    return 0;
}
