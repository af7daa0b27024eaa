/* Placeholder until the disk cache lands: always a miss. */
#include "compute/gpu/cache.h"

#include <string.h>

gk_cache_key gk_cache_key_of(const char *const *parts, const size_t *lengths, int count)
{
    (void)parts, (void)lengths, (void)count;
    gk_cache_key key;
    memset(&key, 0, sizeof key);
    return key;
}

void gk_cache_key_hex(const gk_cache_key *key, char hex[33])
{
    for (int i = 0; i < 16; i++) {
        hex[2 * i] = "0123456789abcdef"[key->bytes[i] >> 4];
        hex[2 * i + 1] = "0123456789abcdef"[key->bytes[i] & 15];
    }
    hex[32] = 0;
}

const char *gk_cache_dir(char *buf, size_t size)
{
    if (size)
        buf[0] = 0;
    return buf;
}

gk_status gk_cache_read(const gk_cache_key *key, void **data, size_t *size)
{
    (void)key, (void)data, (void)size;
    return GK_ERR_NOT_FOUND;
}

gk_status gk_cache_write(const gk_cache_key *key, const void *data, size_t size)
{
    (void)key, (void)data, (void)size;
    return GK_OK;
}
