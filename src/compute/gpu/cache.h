/* Internal: the on-disk cache of compiled kernels (the memory cache of
 * loaded modules is in gpu/program.c).
 *
 * Entries are keyed by a 128-bit hash (xxHash XXH3-128) of everything that
 * changes the compiled result: the source, the compile options, the
 * compiler's version and the device architecture. The directory is
 * $GPUKIT_CACHE_DIR, else $XDG_CACHE_HOME/gpukit/kernels, else
 * ~/.cache/gpukit/kernels; GPUKIT_CACHE_DIR=off disables the disk cache.
 * Empty variables count as unset and a relative XDG_CACHE_HOME is ignored
 * (the XDG rule); without HOME the password database's home is used, and
 * with neither (or a path too long) the cache is off. Payloads over 256 MiB
 * are refused.
 *
 * Each file is <32 hex digits of the key>.bin: a header (magic, format
 * version, the key, the payload size, an XXH3-64 checksum of the payload)
 * then the payload. Files are written to a temporary name in the same
 * directory and renamed into place, so readers never see a partial file
 * and concurrent writers of one key both succeed. A file that does not
 * validate (wrong magic or version or key, truncated, bad checksum) is
 * treated as a miss and replaced by the next write: never a crash. The
 * cache is an optimisation: failing to create the directory or to write
 * is not an error for the caller (gk_cache_write returns it only so that
 * tests can see it). */
#ifndef GK_COMPUTE_GPU_CACHE_H
#define GK_COMPUTE_GPU_CACHE_H

#include <gpukit/status.h>

#include <stddef.h>
#include <stdint.h>

typedef struct gk_cache_key {
    uint8_t bytes[16];
} gk_cache_key;

/* The key of `count` byte strings (lengths are hashed too, so
 * ("ab","c") and ("a","bc") differ). A NULL part counts as empty;
 * lengths NULL means the parts are NUL-terminated strings. */
gk_cache_key gk_cache_key_of(const char *const *parts, const size_t *lengths, int count);
/* 32 lower-case hex digits and a NUL. */
void gk_cache_key_hex(const gk_cache_key *key, char hex[33]);

/* The directory in use, or "" when the disk cache is off. */
const char *gk_cache_dir(char *buf, size_t size);

/* GK_OK with a malloc'd copy of the payload, or GK_ERR_NOT_FOUND on a miss
 * (no file, an invalid file, cache off). Sets no error message on a miss. */
gk_status gk_cache_read(const gk_cache_key *key, void **data, size_t *size);
/* Stores the payload (creating the directory, mode 0700 for new
 * directories). */
gk_status gk_cache_write(const gk_cache_key *key, const void *data, size_t size);

#endif
