#define _GNU_SOURCE /* getrandom via <sys/random.h>, getpwuid_r */
/* The on-disk cache of compiled kernels: one file per key, written to a
 * temporary name and renamed into place, validated completely on read.
 *
 * File layout (all integers little-endian), HEADER_SIZE bytes then the
 * payload:
 *     0  magic "GKKCACHE"       (8 bytes)
 *     8  format version         (u32, FORMAT_VERSION)
 *    12  key                    (16 bytes, as gk_cache_key)
 *    28  payload size in bytes  (u64)
 *    36  XXH3-64 of the payload (u64)
 *    44  payload
 * Every header field is checked on read and the file's size must be exactly
 * HEADER_SIZE + payload size, so a file cut short by a crash (no fsync), a
 * stray file renamed onto another key, or garbage all read as misses. */
#include "compute/gpu/cache.h"

#include "core/error.h"
#include "core/files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The whole of xxHash is in its header: inline it rather than load libxxhash. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#define MAGIC "GKKCACHE" /* the 8 characters, without the NUL */
#define MAGIC_SIZE 8
#define FORMAT_VERSION 1u
#define HEADER_SIZE (MAGIC_SIZE + 4 + 16 + 8 + 8)
/* Compiled kernels are kilobytes to a few megabytes; anything near this is a
 * mistake (when writing) or a damaged size field (when reading), and must not
 * turn into a huge allocation. */
#define MAX_PAYLOAD ((uint64_t)256 << 20)

/* ---- keys ---------------------------------------------------------------- */

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* A chain: the running key is replaced, part after part, by the XXH3-128 of
 * (running key, part length, XXH3-128 of the part). Hashing each length
 * separates ("ab","c") from ("a","bc"), and the chain needs no allocation,
 * unlike xxHash's streaming state (whose layout we may not put on the stack
 * with a shared libxxhash), so this function cannot fail. */
gk_cache_key gk_cache_key_of(const char *const *parts, const size_t *lengths, int count)
{
    /* The starting value names the scheme, so that no key is all zeros. */
    static const char start[] = "gpukit kernel cache key v1";
    XXH128_canonical_t running;
    XXH128_canonicalFromHash(&running, XXH3_128bits(start, sizeof start - 1));
    for (int i = 0; i < count; i++) {
        const char *part = parts[i] ? parts[i] : "";
        /* Without lengths the parts are NUL-terminated strings. */
        size_t length = !parts[i] ? 0 : lengths ? lengths[i] : strlen(part);
        XXH128_canonical_t digest;
        XXH128_canonicalFromHash(&digest, XXH3_128bits(part, length));
        uint8_t record[16 + 8 + 16];
        memcpy(record, running.digest, 16);
        put_u64(record + 16, (uint64_t)length);
        memcpy(record + 24, digest.digest, 16);
        XXH128_canonicalFromHash(&running, XXH3_128bits(record, sizeof record));
    }
    gk_cache_key key;
    memcpy(key.bytes, running.digest, sizeof key.bytes);
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

/* ---- where --------------------------------------------------------------- */

static const char *nonempty_env(const char *name)
{
    const char *value = getenv(name);
    return value && *value ? value : NULL;
}

/* $HOME, else the password database's home directory. */
static bool home_dir(char *buf, size_t size)
{
    const char *home = nonempty_env("HOME");
    if (home)
        return (size_t)snprintf(buf, size, "%s", home) < size;
    struct passwd entry, *found = NULL;
    char scratch[4096];
    if (getpwuid_r(getuid(), &entry, scratch, sizeof scratch, &found) != 0 || !found ||
        !found->pw_dir || !*found->pw_dir)
        return false;
    return (size_t)snprintf(buf, size, "%s", found->pw_dir) < size;
}

const char *gk_cache_dir(char *buf, size_t size)
{
    if (!size)
        return "";
    int n;
    const char *dir = nonempty_env("GPUKIT_CACHE_DIR");
    const char *xdg = nonempty_env("XDG_CACHE_HOME");
    char home[PATH_MAX];
    if (dir && strcmp(dir, "off") == 0)
        n = -1;
    else if (dir)
        n = snprintf(buf, size, "%s", dir);
    else if (xdg && xdg[0] == '/') /* the XDG spec: relative values are ignored */
        n = snprintf(buf, size, "%s%sgpukit/kernels", xdg,
                     xdg[strlen(xdg) - 1] == '/' ? "" : "/");
    else if (home_dir(home, sizeof home))
        n = snprintf(buf, size, "%s%s.cache/gpukit/kernels", home,
                     home[strlen(home) - 1] == '/' ? "" : "/");
    else
        n = -1; /* no home: nowhere sensible to cache */
    /* A path that does not fit is as good as no cache: never a cut path. */
    if (n < 0 || (size_t)n >= size)
        buf[0] = 0;
    return buf;
}

/* <dir>/<hex>.bin, or false when the cache is off (or the path too long). */
static bool entry_path(const gk_cache_key *key, char *dir, size_t dir_size, char *path,
                       size_t path_size)
{
    if (!*gk_cache_dir(dir, dir_size))
        return false;
    char hex[33];
    gk_cache_key_hex(key, hex);
    return (size_t)snprintf(path, path_size, "%s/%s.bin", dir, hex) < path_size;
}

/* ---- reading ------------------------------------------------------------- */

/* Reads exactly `size` bytes; false on an error or an early end of file. */
static bool read_all(int fd, void *buffer, size_t size)
{
    uint8_t *bytes = buffer;
    while (size > 0) {
        ssize_t n = read(fd, bytes, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        bytes += n;
        size -= (size_t)n;
    }
    return true;
}

/* The payload of a valid file, or NULL (a miss) for anything else. */
static void *read_entry(int fd, const gk_cache_key *key, size_t *size)
{
    struct stat st;
    uint8_t header[HEADER_SIZE];
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < HEADER_SIZE ||
        !read_all(fd, header, sizeof header))
        return NULL;
    uint64_t payload_size = get_u64(header + 28);
    if (memcmp(header, MAGIC, MAGIC_SIZE) != 0 || get_u32(header + 8) != FORMAT_VERSION ||
        memcmp(header + 12, key->bytes, 16) != 0 || payload_size > MAX_PAYLOAD ||
        (uint64_t)st.st_size != HEADER_SIZE + payload_size)
        return NULL;
    /* malloc(0) may answer NULL, which would read as a miss. */
    void *payload = malloc(payload_size ? (size_t)payload_size : 1);
    if (!payload)
        return NULL; /* the cache only saves time: a miss, not a failure */
    if (!read_all(fd, payload, (size_t)payload_size) ||
        XXH3_64bits(payload, (size_t)payload_size) != get_u64(header + 36)) {
        free(payload);
        return NULL;
    }
    *size = (size_t)payload_size;
    return payload;
}

gk_status gk_cache_read(const gk_cache_key *key, void **data, size_t *size)
{
    char dir[PATH_MAX], path[PATH_MAX];
    if (!entry_path(key, dir, sizeof dir, path, sizeof path))
        return GK_ERR_NOT_FOUND;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return GK_ERR_NOT_FOUND;
    void *payload = read_entry(fd, key, size);
    close(fd);
    if (!payload)
        return GK_ERR_NOT_FOUND;
    *data = payload;
    return GK_OK;
}

/* ---- writing ------------------------------------------------------------- */

static bool write_all(int fd, const void *buffer, size_t size)
{
    const uint8_t *bytes = buffer;
    while (size > 0) {
        ssize_t n = write(fd, bytes, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false; /* write() returning 0 for a nonzero size: give up */
        bytes += n;
        size -= (size_t)n;
    }
    return true;
}

static gk_status io_failure(const char *what, const char *path, int err)
{
    gk_status status = err == EACCES || err == EPERM || err == EROFS ? GK_ERR_PERMISSION
                                                                     : GK_ERR_IO;
    return gk_fail(status,
                   "kernel cache: cannot %s %s: %s (set GPUKIT_CACHE_DIR to a writable "
                   "directory, or to off to disable the cache)",
                   what, path, strerror(err));
}

/* A new, exclusively created temporary file beside the entry. Its name is
 * unique per process (pid), per call in the process, threads included (an
 * atomic counter), and random besides, so that a leftover from an earlier
 * process with the same pid cannot be taken for ours: O_EXCL refuses it and
 * the next name is tried. */
static int create_temporary(const char *dir, const char *hex, char *tmp, size_t tmp_size)
{
    static atomic_ulong counter;
    for (int attempt = 0; attempt < 8; attempt++) {
        uint64_t nonce;
        if (getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) != (ssize_t)sizeof nonce) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            nonce = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
        }
        unsigned long serial = atomic_fetch_add(&counter, 1);
        if ((size_t)snprintf(tmp, tmp_size, "%s/.%s.tmp-%ld-%lu-%016llx", dir, hex,
                             (long)getpid(), serial, (unsigned long long)nonce) >= tmp_size) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

gk_status gk_cache_write(const gk_cache_key *key, const void *data, size_t size)
{
    char dir[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX];
    if (!*gk_cache_dir(dir, sizeof dir))
        return GK_OK; /* off: nothing to do */
    if ((uint64_t)size > MAX_PAYLOAD)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel cache: a %zu-byte entry is over the %llu MiB limit; it is "
                       "not cached",
                       size, (unsigned long long)(MAX_PAYLOAD >> 20));
    if (!entry_path(key, dir, sizeof dir, path, sizeof path))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel cache: the directory %s is too long a path; set "
                       "GPUKIT_CACHE_DIR to a shorter one",
                       dir);
    gk_status status = gk_mkdir_parents(dir, 0700);
    if (status != GK_OK)
        return gk_fail(status,
                       "kernel cache: %s (set GPUKIT_CACHE_DIR to a writable directory, or "
                       "to off to disable the cache)",
                       gk_last_error());

    char hex[33];
    gk_cache_key_hex(key, hex);
    int fd = create_temporary(dir, hex, tmp, sizeof tmp);
    if (fd < 0)
        return io_failure("create a file in", dir, errno);

    uint8_t header[HEADER_SIZE];
    memcpy(header, MAGIC, MAGIC_SIZE);
    put_u32(header + 8, FORMAT_VERSION);
    memcpy(header + 12, key->bytes, 16);
    put_u64(header + 28, (uint64_t)size);
    put_u64(header + 36, XXH3_64bits(data, size));
    bool written = write_all(fd, header, sizeof header) && write_all(fd, data, size);
    int err = errno;
    if (close(fd) != 0 && written) {
        written = false;
        err = errno;
    }
    if (!written) {
        unlink(tmp);
        return io_failure("write", tmp, err ? err : EIO);
    }

    /* rename() replaces an existing entry atomically: readers see the old
     * file or the new one, and of concurrent writers of one key the last
     * wins, every one succeeding. An empty directory squatting on the name
     * (rename cannot replace it with a file) is removed, then tried again;
     * anything else in the way stays and is reported. */
    int renamed = rename(tmp, path);
    if (renamed != 0 && errno == EISDIR && rmdir(path) == 0)
        renamed = rename(tmp, path);
    if (renamed != 0) {
        err = errno;
        unlink(tmp);
        return io_failure("store", path, err);
    }
    return GK_OK;
}
