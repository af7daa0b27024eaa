#define _GNU_SOURCE /* mkdtemp, setenv */
/* The on-disk kernel cache (src/compute/gpu/cache.c): keys, the directory
 * rules, round trips, every kind of damaged file reading as a miss, and
 * concurrent writers and readers in several processes and threads. Each test
 * works in its own temporary directory through GPUKIT_CACHE_DIR. */
#include "check.h"

#include "compute/gpu/cache.h"
#include "core/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The file layout cache.c documents: the payload follows a 44-byte header
 * (magic 0..7, version 8..11, key 12..27, size 28..35, checksum 36..43). */
enum { HEADER = 44, VERSION_AT = 8, SIZE_AT = 28 };

/* ---- helpers ------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint8_t *random_bytes(size_t size, uint64_t seed)
{
    rng_state = seed * 0x9e3779b97f4a7c15u + 1;
    uint8_t *bytes = malloc(size ? size : 1);
    for (size_t i = 0; i < size; i++) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        bytes[i] = (uint8_t)rng_state;
    }
    return bytes;
}

static gk_cache_key key_of_string(const char *text)
{
    const char *parts[] = {text};
    size_t lengths[] = {strlen(text)};
    return gk_cache_key_of(parts, lengths, 1);
}

static bool same_key(gk_cache_key a, gk_cache_key b)
{
    return memcmp(a.bytes, b.bytes, sizeof a.bytes) == 0;
}

/* A fresh directory that GPUKIT_CACHE_DIR points at. */
static char *use_new_dir(void)
{
    char *dir = strdup("/tmp/gk-cache-test-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(2);
    }
    setenv("GPUKIT_CACHE_DIR", dir, 1);
    return dir;
}

static void remove_dir(char *dir)
{
    chmod(dir, 0700); /* after the unwritable-directory test */
    gk_remove_tree(dir);
    free(dir);
}

static void entry_path(const char *dir, gk_cache_key key, char path[PATH_MAX])
{
    char hex[33];
    gk_cache_key_hex(&key, hex);
    snprintf(path, PATH_MAX, "%s/%s.bin", dir, hex);
}

static bool write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long length = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = malloc(length ? (size_t)length : 1);
    *size = fread(bytes, 1, (size_t)length, f);
    fclose(f);
    return bytes;
}

/* Whether the cache answers exactly `data` for `key`. */
static bool hits(gk_cache_key key, const void *data, size_t size)
{
    void *got = NULL;
    size_t got_size = 12345;
    gk_status status = gk_cache_read(&key, &got, &got_size);
    bool ok = status == GK_OK && got && got_size == size &&
              (size == 0 || memcmp(got, data, size) == 0);
    if (status == GK_OK)
        free(got);
    return ok;
}

static bool misses(gk_cache_key key)
{
    void *got = NULL;
    size_t got_size = 0;
    gk_status status = gk_cache_read(&key, &got, &got_size);
    if (status == GK_OK)
        free(got);
    return status == GK_ERR_NOT_FOUND;
}

/* Entries in `dir` named like cache entries, and everything else there
 * (temporary files left behind). */
static void count_entries(const char *dir, int *entries, int *others)
{
    *entries = *others = 0;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        size_t n = strlen(e->d_name);
        if (n == 36 && e->d_name[0] != '.' && strcmp(e->d_name + 32, ".bin") == 0)
            ++*entries;
        else
            ++*others;
    }
    closedir(d);
}

/* ---- keys ---------------------------------------------------------------- */

static void test_keys(void)
{
    const char *parts[] = {"extern \"C\" __global__ void k(float *x) { x[0] = 1; }",
                           "-arch=sm_90 -O3", "nvrtc 13.0", "sm_90"};
    size_t lengths[4];
    for (int i = 0; i < 4; i++)
        lengths[i] = strlen(parts[i]);
    gk_cache_key base = gk_cache_key_of(parts, lengths, 4);
    CHECK(same_key(base, gk_cache_key_of(parts, lengths, 4)), "the same parts, another key");

    /* Every single-byte change in every part changes the key. */
    for (int p = 0; p < 4; p++) {
        char changed[256];
        for (size_t i = 0; i < lengths[p]; i++) {
            memcpy(changed, parts[p], lengths[p]);
            changed[i] ^= 1;
            const char *copy[4] = {parts[0], parts[1], parts[2], parts[3]};
            copy[p] = changed;
            CHECK(!same_key(base, gk_cache_key_of(copy, lengths, 4)),
                  "flipping byte %zu of part %d kept the key", i, p);
        }
        /* One byte more or less. */
        size_t longer[4] = {lengths[0], lengths[1], lengths[2], lengths[3]};
        longer[p] = lengths[p] - 1;
        CHECK(!same_key(base, gk_cache_key_of(parts, longer, 4)),
              "a shorter part %d kept the key", p);
    }

    /* The split between parts counts: ("ab","c") vs ("a","bc") vs ("abc",""). */
    const char *ab_c[] = {"ab", "c"}, *a_bc[] = {"a", "bc"}, *abc_[] = {"abc", ""};
    size_t l21[] = {2, 1}, l12[] = {1, 2}, l30[] = {3, 0};
    gk_cache_key k1 = gk_cache_key_of(ab_c, l21, 2), k2 = gk_cache_key_of(a_bc, l12, 2),
                 k3 = gk_cache_key_of(abc_, l30, 2), k4 = gk_cache_key_of(abc_, l30, 1);
    CHECK(!same_key(k1, k2), "(ab,c) and (a,bc) share a key");
    CHECK(!same_key(k1, k3) && !same_key(k2, k3), "(abc,\"\") shares a key");
    CHECK(!same_key(k3, k4), "(abc,\"\") and (abc) share a key");
    /* The parts' order counts. */
    const char *c_ab[] = {"c", "ab"};
    size_t l12b[] = {1, 2};
    CHECK(!same_key(k1, gk_cache_key_of(c_ab, l12b, 2)), "(ab,c) and (c,ab) share a key");

    /* Bytes after a NUL inside a part count (lengths, not strlen). */
    const char with_nul_a[] = {'x', 0, 'a'}, with_nul_b[] = {'x', 0, 'b'};
    const char *na[] = {with_nul_a}, *nb[] = {with_nul_b};
    size_t l3[] = {3};
    CHECK(!same_key(gk_cache_key_of(na, l3, 1), gk_cache_key_of(nb, l3, 1)),
          "bytes after a NUL were ignored");

    /* A NULL part counts as empty. */
    const char *with_null[] = {"a", NULL}, *with_empty[] = {"a", ""};
    size_t l1x[] = {1, 7}, l10[] = {1, 0};
    CHECK(same_key(gk_cache_key_of(with_null, l1x, 2), gk_cache_key_of(with_empty, l10, 2)),
          "a NULL part is not the empty part");
    /* Without lengths the parts are NUL-terminated strings. */
    CHECK(same_key(base, gk_cache_key_of(parts, NULL, 4)), "NULL lengths is not strlen");
    /* No part at all is still a hash, not zeros. */
    gk_cache_key none = gk_cache_key_of(NULL, NULL, 0), zero;
    memset(&zero, 0, sizeof zero);
    CHECK(!same_key(none, zero) && !same_key(none, base), "the key of no parts");
}

static void test_hex(void)
{
    gk_cache_key key = {{0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc,
                         0xba, 0x98, 0x76, 0x54, 0x10}};
    char hex[34];
    memset(hex, 'Z', sizeof hex);
    gk_cache_key_hex(&key, hex);
    CHECK(memcmp(hex, "000123456789abcdeffedcba98765410", 33) == 0, "hex %.33s", hex);
    CHECK(hex[33] == 'Z', "wrote past the 33 bytes");
    gk_cache_key k = key_of_string("x");
    gk_cache_key_hex(&k, hex);
    CHECK(strlen(hex) == 32 && strspn(hex, "0123456789abcdef") == 32, "hex %s", hex);
}

/* ---- reading and writing ------------------------------------------------- */

static void test_round_trip(void)
{
    char *dir = use_new_dir();
    gk_cache_key key = key_of_string("round trip");
    CHECK(misses(key), "a hit in an empty directory");

    size_t sizes[] = {0, 1, 1000, (3u << 20) + 7};
    const char *names[] = {"empty", "one byte", "a kilobyte", "a few megabytes"};
    for (int i = 0; i < 4; i++) {
        gk_cache_key k = key_of_string(names[i]);
        uint8_t *data = random_bytes(sizes[i], i + 1);
        CHECK(gk_cache_write(&k, data, sizes[i]) == GK_OK, "writing %zu bytes: %s", sizes[i],
              gk_last_error());
        CHECK(hits(k, data, sizes[i]), "%zu bytes did not come back", sizes[i]);
        /* The file is <hex>.bin in the directory, header + payload. */
        char path[PATH_MAX];
        entry_path(dir, k, path);
        struct stat st;
        CHECK(stat(path, &st) == 0 && (size_t)st.st_size == HEADER + sizes[i],
              "%s is not header + %zu bytes", path, sizes[i]);
        free(data);
    }
    CHECK(misses(key), "a key never written hits");
    int entries, others;
    count_entries(dir, &entries, &others);
    CHECK(entries == 4 && others == 0, "%d entries and %d other files", entries, others);

    /* Overwriting replaces the payload, with one file still. */
    gk_cache_key k = key_of_string("overwrite");
    uint8_t *first = random_bytes(5000, 10), *second = random_bytes(300, 11);
    CHECK(gk_cache_write(&k, first, 5000) == GK_OK, "%s", gk_last_error());
    CHECK(hits(k, first, 5000), "first payload");
    CHECK(gk_cache_write(&k, second, 300) == GK_OK, "%s", gk_last_error());
    CHECK(hits(k, second, 300), "the overwrite did not replace the payload");
    count_entries(dir, &entries, &others);
    CHECK(entries == 5 && others == 0, "%d entries and %d other files", entries, others);
    free(first);
    free(second);
    remove_dir(dir);
}

/* After `damage` made `path` invalid: a miss, then a write repairs it. */
static void expect_miss_then_repair(gk_cache_key key, const uint8_t *data, size_t size,
                                    const char *what)
{
    CHECK(misses(key), "%s: not a miss", what);
    CHECK(gk_cache_write(&key, data, size) == GK_OK, "%s: rewriting: %s", what,
          gk_last_error());
    CHECK(hits(key, data, size), "%s: no hit after rewriting", what);
}

static void test_damaged_files(void)
{
    char *dir = use_new_dir();
    gk_cache_key key = key_of_string("damage"), other = key_of_string("other");
    char path[PATH_MAX], other_path[PATH_MAX], what[128];
    entry_path(dir, key, path);
    entry_path(dir, other, other_path);
    enum { SMALL = 10 };
    uint8_t *data = random_bytes(SMALL, 20);
    CHECK(gk_cache_write(&key, data, SMALL) == GK_OK, "%s", gk_last_error());
    size_t file_size;
    uint8_t *good = read_file(path, &file_size);
    CHECK(good && file_size == HEADER + SMALL, "entry of %zu bytes", file_size);
    if (!good || file_size != HEADER + SMALL)
        return;

    /* Every prefix of the file. */
    for (size_t cut = 0; cut < file_size; cut++) {
        CHECK(truncate(path, (off_t)cut) == 0, "truncate");
        snprintf(what, sizeof what, "cut to %zu bytes", cut);
        expect_miss_then_repair(key, data, SMALL, what);
    }
    /* Every byte flipped, header and payload, and two bit patterns. */
    for (size_t at = 0; at < file_size; at++) {
        for (int bit = 0; bit < 8; bit += 7) {
            uint8_t *bad = malloc(file_size);
            memcpy(bad, good, file_size);
            bad[at] ^= (uint8_t)(1u << bit);
            CHECK(write_file(path, bad, file_size), "write");
            snprintf(what, sizeof what, "bit %d of byte %zu flipped", bit, at);
            expect_miss_then_repair(key, data, SMALL, what);
            free(bad);
        }
    }
    /* A valid file with bytes after the payload. */
    {
        uint8_t *longer = malloc(file_size + 1);
        memcpy(longer, good, file_size);
        longer[file_size] = 0;
        CHECK(write_file(path, longer, file_size + 1), "write");
        expect_miss_then_repair(key, data, SMALL, "one byte too many");
        free(longer);
    }
    /* Another magic; the next format version. */
    {
        uint8_t *bad = malloc(file_size);
        memcpy(bad, good, file_size);
        memcpy(bad, "NOTCACHE", 8);
        CHECK(write_file(path, bad, file_size), "write");
        expect_miss_then_repair(key, data, SMALL, "wrong magic");
        memcpy(bad, good, file_size);
        bad[VERSION_AT] = 2;
        CHECK(write_file(path, bad, file_size), "write");
        expect_miss_then_repair(key, data, SMALL, "format version 2");
        /* A size field far beyond any real payload (no huge allocation). */
        memcpy(bad, good, file_size);
        memset(bad + SIZE_AT, 0xff, 7);
        CHECK(write_file(path, bad, file_size), "write");
        expect_miss_then_repair(key, data, SMALL, "a huge size field");
        free(bad);
    }
    /* Another key's valid file under this key's name. */
    {
        uint8_t *other_data = random_bytes(SMALL, 21);
        CHECK(gk_cache_write(&other, other_data, SMALL) == GK_OK, "%s", gk_last_error());
        CHECK(rename(other_path, path) == 0, "rename");
        CHECK(misses(other), "the renamed key still hits");
        expect_miss_then_repair(key, data, SMALL, "another key's file");
        free(other_data);
    }
    /* Garbage of various sizes, and an empty file. */
    size_t garbage_sizes[] = {0, 1, HEADER - 1, HEADER, HEADER + SMALL, 4096};
    for (int i = 0; i < 6; i++) {
        uint8_t *garbage = random_bytes(garbage_sizes[i], 30 + i);
        CHECK(write_file(path, garbage, garbage_sizes[i]), "write");
        snprintf(what, sizeof what, "%zu bytes of garbage", garbage_sizes[i]);
        expect_miss_then_repair(key, data, SMALL, what);
        free(garbage);
    }
    /* A cut inside a large payload. */
    {
        size_t big = 1u << 20;
        uint8_t *big_data = random_bytes(big, 40);
        CHECK(gk_cache_write(&key, big_data, big) == GK_OK, "%s", gk_last_error());
        CHECK(truncate(path, (off_t)(HEADER + big / 2)) == 0, "truncate");
        expect_miss_then_repair(key, big_data, big, "a large payload cut in half");
        /* One flipped byte in its middle. */
        size_t size;
        uint8_t *file = read_file(path, &size);
        file[HEADER + big / 2] ^= 0x10;
        CHECK(write_file(path, file, size), "write");
        expect_miss_then_repair(key, big_data, big, "a large payload with a flipped byte");
        free(file);
        free(big_data);
    }
    /* A directory where the file should be. */
    CHECK(unlink(path) == 0 && mkdir(path, 0700) == 0, "mkdir");
    expect_miss_then_repair(key, data, SMALL, "a directory in place of the file");

    int entries, others;
    count_entries(dir, &entries, &others);
    CHECK(entries == 1 && others == 0, "%d entries and %d other files", entries, others);
    free(good);
    free(data);
    remove_dir(dir);
}

/* ---- where --------------------------------------------------------------- */

static void set_or_unset(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

static void set_dirs(const char *cache, const char *xdg, const char *home)
{
    set_or_unset("GPUKIT_CACHE_DIR", cache);
    set_or_unset("XDG_CACHE_HOME", xdg);
    set_or_unset("HOME", home);
}

static bool dir_is(const char *cache, const char *xdg, const char *home, const char *expected)
{
    set_dirs(cache, xdg, home);
    char buf[PATH_MAX];
    const char *got = gk_cache_dir(buf, sizeof buf);
    if (strcmp(got, expected) != 0) {
        fprintf(stderr, "cache dir %s, expected %s\n", got, expected);
        return false;
    }
    return true;
}

static int mode_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? (int)(st.st_mode & 07777) : -1;
}

static void test_directory_rules(void)
{
    char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    char *saved_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;

    CHECK(dir_is("/c", "/x", "/h", "/c"), "GPUKIT_CACHE_DIR first");
    CHECK(dir_is(NULL, "/x", "/h", "/x/gpukit/kernels"), "then XDG_CACHE_HOME");
    CHECK(dir_is(NULL, "/x/", "/h", "/x/gpukit/kernels"), "a trailing / on XDG_CACHE_HOME");
    CHECK(dir_is("", "/x", "/h", "/x/gpukit/kernels"), "an empty GPUKIT_CACHE_DIR is unset");
    CHECK(dir_is(NULL, NULL, "/h", "/h/.cache/gpukit/kernels"), "then HOME");
    CHECK(dir_is(NULL, "", "/h", "/h/.cache/gpukit/kernels"), "an empty XDG_CACHE_HOME");
    CHECK(dir_is(NULL, "relative", "/h", "/h/.cache/gpukit/kernels"),
          "a relative XDG_CACHE_HOME is ignored (the XDG spec)");
    CHECK(dir_is("off", "/x", "/h", ""), "off");
    {
        char small[8];
        setenv("GPUKIT_CACHE_DIR", "/a/long/directory/name", 1);
        CHECK(gk_cache_dir(small, sizeof small)[0] == 0, "a cut path instead of none");
    }

    /* The directories are really used, and created 0700 whatever the umask. */
    mode_t old_umask = umask(0);
    char *root = use_new_dir(), path[PATH_MAX], expected[PATH_MAX];
    uint8_t payload[] = "kernel";
    gk_cache_key key = key_of_string("where");

    snprintf(path, sizeof path, "%s/xdg", root);
    set_dirs(NULL, path, "/nonexistent-home");
    snprintf(expected, sizeof expected, "%s/xdg/gpukit/kernels", root);
    CHECK(gk_cache_write(&key, payload, sizeof payload) == GK_OK, "%s", gk_last_error());
    CHECK(mode_of(expected) == 0700, "%s has mode %o", expected, mode_of(expected));
    CHECK(hits(key, payload, sizeof payload), "no hit through XDG_CACHE_HOME");

    snprintf(path, sizeof path, "%s/home", root);
    set_dirs(NULL, NULL, path);
    snprintf(expected, sizeof expected, "%s/home/.cache/gpukit/kernels", root);
    CHECK(misses(key), "the HOME cache is new");
    CHECK(gk_cache_write(&key, payload, sizeof payload) == GK_OK, "%s", gk_last_error());
    CHECK(mode_of(expected) == 0700, "%s has mode %o", expected, mode_of(expected));
    CHECK(hits(key, payload, sizeof payload), "no hit through HOME");

    snprintf(path, sizeof path, "%s/a/b/c", root);
    setenv("GPUKIT_CACHE_DIR", path, 1);
    CHECK(gk_cache_write(&key, payload, sizeof payload) == GK_OK, "%s", gk_last_error());
    CHECK(mode_of(path) == 0700, "%s has mode %o", path, mode_of(path));
    CHECK(hits(key, payload, sizeof payload), "no hit through GPUKIT_CACHE_DIR");
    umask(old_umask);

    /* off: reads miss, writes succeed and write nothing (HOME and
     * XDG_CACHE_HOME point at empty directories meanwhile). */
    snprintf(path, sizeof path, "%s/off-home", root);
    mkdir(path, 0700);
    setenv("HOME", path, 1);
    setenv("XDG_CACHE_HOME", path, 1);
    setenv("GPUKIT_CACHE_DIR", "off", 1);
    CHECK(gk_cache_write(&key, payload, sizeof payload) == GK_OK, "off: writing failed");
    CHECK(misses(key), "off: a hit");
    int entries, others;
    count_entries(path, &entries, &others);
    CHECK(entries + others == 0, "off wrote %d files", entries + others);

    set_or_unset("HOME", saved_home);
    set_or_unset("XDG_CACHE_HOME", saved_xdg);
    free(saved_home);
    free(saved_xdg);
    remove_dir(root);
}

static void test_unwritable(void)
{
    char *dir = use_new_dir(), path[PATH_MAX];
    gk_cache_key key = key_of_string("unwritable");
    uint8_t payload[100] = {1, 2, 3};

    /* A cache directory under a regular file: mkdir fails (ENOTDIR), root
     * included. */
    snprintf(path, sizeof path, "%s/file", dir);
    CHECK(write_file(path, "x", 1), "write");
    snprintf(path, sizeof path, "%s/file/cache", dir);
    setenv("GPUKIT_CACHE_DIR", path, 1);
    gk_status status = gk_cache_write(&key, payload, sizeof payload);
    CHECK(status != GK_OK, "writing under a regular file succeeded");
    CHECK(strstr(gk_last_error(), "GPUKIT_CACHE_DIR"), "the message names no fix: %s",
          gk_last_error());
    CHECK(misses(key), "a hit under a regular file");

    /* A read-only directory (root may write anywhere, so not as root). */
    if (geteuid() != 0) {
        setenv("GPUKIT_CACHE_DIR", dir, 1);
        CHECK(chmod(dir, 0500) == 0, "chmod");
        CHECK(gk_cache_write(&key, payload, sizeof payload) == GK_ERR_PERMISSION,
              "writing in a 0500 directory: %s", gk_last_error());
        CHECK(misses(key), "a hit in a 0500 directory");
        CHECK(chmod(dir, 0700) == 0, "chmod");
    }

    /* Over the size limit: refused before the payload is touched (the
     * pointer stands for 256 MiB + 1 that the test need not allocate). */
    setenv("GPUKIT_CACHE_DIR", dir, 1);
    CHECK(gk_cache_write(&key, payload, (256u << 20) + 1) == GK_ERR_INVALID_ARGUMENT,
          "a payload over 256 MiB was accepted");
    CHECK(misses(key), "an oversized payload was stored");
    int entries, others;
    count_entries(dir, &entries, &others);
    CHECK(entries == 0 && others == 1 /* "file" */, "%d entries, %d others", entries, others);
    remove_dir(dir);
}

/* ---- concurrency --------------------------------------------------------- */

enum { WRITERS = 8, READERS = 4, SAME_KEY_WRITES = 200, OWN_KEY_WRITES = 50 };

static gk_cache_key writer_key(int i)
{
    char name[32];
    snprintf(name, sizeof name, "writer %d", i);
    return key_of_string(name);
}

static size_t writer_size(int i)
{
    return 10000 + 3000 * (size_t)i;
}

/* Reads until the writers are done, then once more. Every answer must be a
 * miss or the exact payload, and once a key has hit it must keep hitting:
 * entries are replaced by rename, never removed or rewritten in place. */
static int reader(atomic_int *done, int keys, uint8_t **payloads, const size_t *sizes)
{
    bool seen[WRITERS] = {false};
    int failures = 0;
    bool final = false;
    while (!final && failures == 0) {
        final = atomic_load(done); /* the writers had all ended before this pass */
        for (int k = 0; k < keys; k++) {
            gk_cache_key key = keys == 1 ? key_of_string("shared") : writer_key(k);
            void *got;
            size_t size;
            gk_status status = gk_cache_read(&key, &got, &size);
            if (status == GK_OK) {
                if (size != sizes[k] || memcmp(got, payloads[k], size) != 0) {
                    fprintf(stderr, "reader: key %d: wrong payload\n", k);
                    failures++;
                }
                free(got);
                seen[k] = true;
            } else if (status != GK_ERR_NOT_FOUND || seen[k] || final) {
                fprintf(stderr, "reader: key %d: status %d after %s\n", k, status,
                        seen[k] ? "a hit" : "the writers ended");
                failures++;
            }
        }
    }
    return failures;
}

static void run_processes(bool same_key)
{
    char *dir = use_new_dir();
    int keys = same_key ? 1 : WRITERS;
    uint8_t *payloads[WRITERS];
    size_t sizes[WRITERS];
    for (int k = 0; k < keys; k++) {
        sizes[k] = same_key ? 64 * 1024 : writer_size(k);
        payloads[k] = random_bytes(sizes[k], 50 + k);
    }
    atomic_int *done = mmap(NULL, sizeof *done, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(done != MAP_FAILED, "mmap");
    atomic_store(done, 0);

    pid_t writers[WRITERS], readers[READERS];
    for (int i = 0; i < READERS; i++) {
        readers[i] = fork();
        if (readers[i] == 0)
            _exit(reader(done, keys, payloads, sizes) ? 1 : 0);
    }
    for (int i = 0; i < WRITERS; i++) {
        writers[i] = fork();
        if (writers[i] == 0) {
            int k = same_key ? 0 : i;
            gk_cache_key key = same_key ? key_of_string("shared") : writer_key(i);
            int rounds = same_key ? SAME_KEY_WRITES : OWN_KEY_WRITES;
            for (int r = 0; r < rounds; r++) {
                if (gk_cache_write(&key, payloads[k], sizes[k]) != GK_OK) {
                    fprintf(stderr, "writer %d: %s\n", i, gk_last_error());
                    _exit(1);
                }
            }
            _exit(0);
        }
    }
    for (int i = 0; i < WRITERS; i++) {
        int status;
        CHECK(waitpid(writers[i], &status, 0) == writers[i] && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0,
              "writer %d failed", i);
    }
    atomic_store(done, 1);
    for (int i = 0; i < READERS; i++) {
        int status;
        CHECK(waitpid(readers[i], &status, 0) == readers[i] && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0,
              "reader %d failed", i);
    }

    for (int k = 0; k < keys; k++)
        CHECK(hits(same_key ? key_of_string("shared") : writer_key(k), payloads[k], sizes[k]),
              "key %d after the writers", k);
    int entries, others;
    count_entries(dir, &entries, &others);
    CHECK(entries == keys && others == 0, "%d entries and %d temporary files left", entries,
          others);
    for (int k = 0; k < keys; k++)
        free(payloads[k]);
    munmap(done, sizeof *done);
    remove_dir(dir);
}

/* Threads of one process share its pid: the temporary names must still
 * differ. */
enum { THREADS = 4, THREAD_WRITES = 100 };
static uint8_t *thread_payload;

static void *thread_writer(void *arg)
{
    (void)arg;
    gk_cache_key key = key_of_string("threads");
    for (int r = 0; r < THREAD_WRITES; r++)
        if (gk_cache_write(&key, thread_payload, 20000) != GK_OK)
            return (void *)1;
    return NULL;
}

static void test_threads(void)
{
    char *dir = use_new_dir();
    thread_payload = random_bytes(20000, 60);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&threads[i], NULL, thread_writer, NULL) == 0, "pthread_create");
    for (int i = 0; i < THREADS; i++) {
        void *result = (void *)1;
        pthread_join(threads[i], &result);
        CHECK(result == NULL, "thread %d: a write failed", i);
    }
    CHECK(hits(key_of_string("threads"), thread_payload, 20000), "after the threads");
    int entries, others;
    count_entries(dir, &entries, &others);
    CHECK(entries == 1 && others == 0, "%d entries and %d temporary files left", entries,
          others);
    free(thread_payload);
    remove_dir(dir);
}

int main(void)
{
    test_keys();
    test_hex();
    test_round_trip();
    test_damaged_files();
    test_directory_rules();
    test_unwritable();
    run_processes(true);
    run_processes(false);
    test_threads();
    CHECK_DONE();
}
