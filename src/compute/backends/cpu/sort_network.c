/* Short rows of 4-byte sort keys, sorted by a bitonic sorting network in
 * AVX2 registers: see cpu.h. A radix sort of a 256-element row makes four
 * passes, each clearing and summing a 256-entry histogram; that cost
 * 1.6 us a row, 12 times NumPy's own network sort. The network compares
 * without branches, 8 keys an instruction: pad the row with the largest key
 * to a power of two of vectors, sort each vector, then merge runs of
 * vectors pairwise until one is left (Batcher's bitonic merge). Keys that
 * are equal are the same bytes, so any correct sort gives the radix sort's
 * result. */
#include "compute/backends/cpu/cpu.h"

#include <stdint.h>

#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target)
#define HAVE_NETWORK 1
#endif
#endif

#ifdef HAVE_NETWORK
#include <immintrin.h>

enum { LANES = 8, MAX_VECTORS = CPU_SORT_NETWORK_MAX / LANES };

#define AVX2 __attribute__((target("avx2")))

/* One layer of compare-exchanges inside a vector: lane k meets lane Pk
 * (itself when it has no partner), and the lanes set in UPPER, the higher
 * lane of each pair, keep the larger key. */
#define EXCHANGE(v, P0, P1, P2, P3, P4, P5, P6, P7, UPPER)                                \
    do {                                                                                  \
        __m256i other_ =                                                                  \
            _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(P0, P1, P2, P3, P4, P5, P6, P7)); \
        v = _mm256_blend_epi32(_mm256_min_epi32(v, other_), _mm256_max_epi32(v, other_), \
                               UPPER);                                                    \
    } while (0)

/* Any 8 keys into order: the 19-comparator network of depth 6 (Knuth,
 * TAOCP 5.3.4). */
AVX2 static inline __m256i sort8(__m256i v)
{
    EXCHANGE(v, 2, 3, 0, 1, 6, 7, 4, 5, 0xCC); /* (0,2) (1,3) (4,6) (5,7) */
    EXCHANGE(v, 4, 5, 6, 7, 0, 1, 2, 3, 0xF0); /* (0,4) (1,5) (2,6) (3,7) */
    EXCHANGE(v, 1, 0, 3, 2, 5, 4, 7, 6, 0xAA); /* (0,1) (2,3) (4,5) (6,7) */
    EXCHANGE(v, 0, 1, 4, 5, 2, 3, 6, 7, 0x30); /* (2,4) (3,5) */
    EXCHANGE(v, 0, 4, 2, 6, 1, 5, 3, 7, 0x50); /* (1,4) (3,6) */
    EXCHANGE(v, 0, 2, 1, 4, 3, 6, 5, 7, 0x54); /* (1,2) (3,4) (5,6) */
    return v;
}

/* A bitonic vector (rising then falling, or the reverse) into order: lanes
 * 4 apart, then 2, then 1. */
AVX2 static inline __m256i clean8(__m256i v)
{
    EXCHANGE(v, 4, 5, 6, 7, 0, 1, 2, 3, 0xF0);
    EXCHANGE(v, 2, 3, 0, 1, 6, 7, 4, 5, 0xCC);
    EXCHANGE(v, 1, 0, 3, 2, 5, 4, 7, 6, 0xAA);
    return v;
}

AVX2 static inline __m256i reversed(__m256i v)
{
    return _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0));
}

/* Sorted runs a[0, r) and b[0, r) of vectors into one sorted run of 2r
 * (a then b). Key j of a meets key 8r-1-j of b, the smaller staying in a,
 * the larger going to b at j's place: a then holds the 8r smallest keys,
 * b the rest, each run rising then falling. Then each run's halves meet
 * (vectors r/2 apart, then r/4, ... 1), and each vector is cleaned. */
AVX2 static void merge_runs(__m256i *a, __m256i *b, int r)
{
    for (int i = 0; i < (r + 1) / 2; i++) {
        int k = r - 1 - i;
        __m256i ai = a[i], ak = a[k], bi = reversed(b[i]), bk = reversed(b[k]);
        a[i] = _mm256_min_epi32(ai, bk);
        a[k] = _mm256_min_epi32(ak, bi);
        b[i] = _mm256_max_epi32(ai, bk);
        b[k] = _mm256_max_epi32(ak, bi);
    }
    __m256i *run = a; /* a and b are adjacent: 2r vectors */
    for (int d = r / 2; d >= 1; d /= 2)
        for (int start = 0; start < 2 * r; start += 2 * d)
            for (int k = start; k < start + d; k++) {
                __m256i low = run[k], high = run[k + d];
                run[k] = _mm256_min_epi32(low, high);
                run[k + d] = _mm256_max_epi32(low, high);
            }
    for (int k = 0; k < 2 * r; k++)
        run[k] = clean8(run[k]);
}

/* keys[0, n), 1 <= n <= CPU_SORT_NETWORK_MAX, into order. The network
 * compares signed lanes: each key's top bit is flipped on the way in and
 * back on the way out. */
AVX2 static void network_sort(uint32_t *keys, int64_t n)
{
    __m256i v[MAX_VECTORS];
    const __m256i flip = _mm256_set1_epi32(INT32_MIN);
    int count = 1;
    while (count * LANES < n)
        count *= 2;
    for (int i = 0; i < count; i++) {
        int64_t at = (int64_t)i * LANES;
        if (at + LANES <= n) {
            v[i] = _mm256_loadu_si256((const __m256i *)(keys + at));
        } else {
            uint32_t tail[LANES];
            for (int k = 0; k < LANES; k++)
                tail[k] = at + k < n ? keys[at + k] : UINT32_MAX; /* sorts last */
            v[i] = _mm256_loadu_si256((const __m256i *)tail);
        }
        v[i] = sort8(_mm256_xor_si256(v[i], flip));
    }
    for (int r = 1; r < count; r *= 2)
        for (int start = 0; start < count; start += 2 * r)
            merge_runs(v + start, v + start + r, r);
    for (int i = 0; i < count && (int64_t)i * LANES < n; i++) {
        int64_t at = (int64_t)i * LANES;
        __m256i out = _mm256_xor_si256(v[i], flip);
        if (at + LANES <= n) {
            _mm256_storeu_si256((__m256i *)(keys + at), out);
        } else {
            uint32_t tail[LANES];
            _mm256_storeu_si256((__m256i *)tail, out);
            for (int k = 0; at + k < n; k++)
                keys[at + k] = tail[k];
        }
    }
}
#endif

bool cpu_sort_network_u32(uint32_t *keys, int64_t n)
{
#ifdef HAVE_NETWORK
    if (n < 1 || n > CPU_SORT_NETWORK_MAX || !__builtin_cpu_supports("avx2"))
        return false;
    network_sort(keys, n);
    return true;
#else
    (void)keys;
    (void)n;
    return false;
#endif
}
