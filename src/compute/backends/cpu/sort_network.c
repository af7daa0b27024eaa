/* Short rows of 4-byte sort keys, sorted by a bitonic sorting network in
 * AVX-512 or AVX2 registers: see cpu.h. A radix sort of a 256-element row
 * makes four passes, each clearing and summing a 256-entry histogram; that
 * cost 1.6 us a row, 12 times NumPy's own network sort. The network
 * compares without branches, 16 or 8 keys an instruction: pad the row with
 * the largest key to a power of two of vectors, sort each vector, then
 * merge runs of vectors pairwise until one is left (Batcher's bitonic
 * merge). Keys that are equal are the same bytes, so any correct sort
 * gives the radix sort's result. */
#include "compute/backends/cpu/cpu.h"

#include "compute/backends/cpu/vecmath.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target)
#define HAVE_NETWORK 1
#endif
#endif

#ifdef HAVE_NETWORK
#include <immintrin.h>

enum { LANES = 8, MAX_VECTORS = CPU_SORT_NETWORK_MAX / LANES };

/* The vectors of `lanes` keys a row of n takes, padded to a power of two. */
static int vectors_for(int64_t n, int lanes)
{
    int count = 1;
    while ((int64_t)count * lanes < n)
        count *= 2;
    return count;
}

#define AVX2 __attribute__((target("avx2")))
#define AVX512 __attribute__((target("avx512f")))

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

/* Sorted runs a[0, r) and b[0, r) of vectors (m keys each) into one
 * sorted run of 2r (a then b). Key j of a meets key m-1-j of b, the
 * smaller staying in a, the larger going to b at j's place: a then holds
 * the m smallest keys, b the rest, each run rising then falling. Then each run's halves meet
 * (vectors r/2 apart, then r/4, ... 1), and each vector is cleaned. */
#define MERGE_RUNS(NAME, TARGET, V, MIN, MAX, REVERSED, CLEAN)                            \
    TARGET static void NAME(V *a, V *b, int r)                                            \
    {                                                                                     \
        for (int i = 0; i < (r + 1) / 2; i++) {                                           \
            int k = r - 1 - i;                                                            \
            V ai = a[i], ak = a[k], bi = REVERSED(b[i]), bk = REVERSED(b[k]);             \
            a[i] = MIN(ai, bk);                                                           \
            a[k] = MIN(ak, bi);                                                           \
            b[i] = MAX(ai, bk);                                                           \
            b[k] = MAX(ak, bi);                                                           \
        }                                                                                 \
        V *run = a; /* a and b are adjacent: 2r vectors */                                \
        for (int d = r / 2; d >= 1; d /= 2)                                               \
            for (int start = 0; start < 2 * r; start += 2 * d)                            \
                for (int k = start; k < start + d; k++) {                                 \
                    V low = run[k], high = run[k + d];                                    \
                    run[k] = MIN(low, high);                                              \
                    run[k + d] = MAX(low, high);                                          \
                }                                                                         \
        for (int k = 0; k < 2 * r; k++)                                                   \
            run[k] = CLEAN(run[k]);                                                       \
    }                                                                                     \
    /* count sorted vectors (a power of two) into one sorted run. */                      \
    TARGET static void NAME##_all(V *v, int count)                                        \
    {                                                                                     \
        for (int r = 1; r < count; r *= 2)                                                \
            for (int start = 0; start < count; start += 2 * r)                            \
                NAME(v + start, v + start + r, r);                                        \
    }
MERGE_RUNS(merge_runs, AVX2, __m256i, _mm256_min_epi32, _mm256_max_epi32, reversed, clean8)

/* The keys as signed integers in the same order, and back (each way is
 * the same map): unsigned ones with the top bit flipped; floats (no NaN)
 * with the other bits flipped where the sign is set, so that -0.0 comes
 * just before 0.0. P: the intrinsics' prefix, _mm256 or _mm512. */
#define SIGNED_ORDER(NAME, TARGET, V, P, BITS)                                            \
    TARGET static inline V NAME(V v, cpu_key_kind kind)                                   \
    {                                                                                     \
        if (kind == CPU_KEYS_UNSIGNED)                                                    \
            return P##_xor_##BITS(v, P##_set1_epi32(INT32_MIN));                          \
        if (kind == CPU_KEYS_FLOAT)                                                       \
            return P##_xor_##BITS(                                                        \
                v, P##_and_##BITS(P##_srai_epi32(v, 31), P##_set1_epi32(INT32_MAX)));     \
        return v;                                                                         \
    }
SIGNED_ORDER(signed_order8, AVX2, __m256i, _mm256, si256)

/* keys[0, n), 1 <= n <= CPU_SORT_NETWORK_MAX, into order, padded with the
 * largest signed key (sorts last). */
AVX2 static void network_sort8(uint32_t *keys, int64_t n, cpu_key_kind kind)
{
    __m256i v[MAX_VECTORS];
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    int count = vectors_for(n, LANES);
    for (int i = 0; i < count; i++) {
        int64_t at = (int64_t)i * LANES, left = n - at;
        if (left >= LANES) {
            v[i] = signed_order8(_mm256_loadu_si256((const __m256i *)(keys + at)), kind);
        } else {
            uint32_t tail[LANES] = {0}; /* memcpy: the row may be floats */
            if (left > 0)
                memcpy(tail, keys + at, sizeof *tail * (size_t)left);
            __m256i in = _mm256_cmpgt_epi32(_mm256_set1_epi32(left > 0 ? (int)left : 0), lane);
            v[i] = _mm256_blendv_epi8(
                _mm256_set1_epi32(INT32_MAX),
                signed_order8(_mm256_loadu_si256((const __m256i *)tail), kind), in);
        }
        v[i] = sort8(v[i]);
    }
    merge_runs_all(v, count);
    for (int i = 0; i < count && (int64_t)i * LANES < n; i++) {
        int64_t at = (int64_t)i * LANES;
        __m256i out = signed_order8(v[i], kind);
        if (at + LANES <= n) {
            _mm256_storeu_si256((__m256i *)(keys + at), out);
        } else {
            uint32_t tail[LANES];
            _mm256_storeu_si256((__m256i *)tail, out);
            memcpy(keys + at, tail, sizeof *tail * (size_t)(n - at));
        }
    }
}

/* The same in AVX-512's 16 lanes and 32 registers: half the vectors, and
 * a mask register in place of AVX2's immediate blend, so that one
 * function does every layer. */
enum { WIDE_LANES = 16, MAX_WIDE_VECTORS = CPU_SORT_NETWORK_MAX / WIDE_LANES };

/* The networks inside one AVX-512 vector of N lanes of EPI (epi32 or
 * epi64; MASK the mask type that many lanes take):
 * - exchange##NAME: lane k meets lane k ^ partner; the lanes whose bit
 *   `upper_bit` is set, the higher of each pair, keep the larger key;
 * - clean##NAME: a bitonic vector into order (lanes N/2 apart, ... 1);
 * - sort##NAME: any N keys into order: sorted runs of 1, 2, 4 ... merged
 *   pairwise, each merge a layer where lane k of a block of s meets lane
 *   s-1-k of it (k ^ (s-1)), then cleaners within the halves;
 * - reversed##NAME: the lanes in reverse order (k ^ (N-1)). */
#define VECTOR_NETWORK(NAME, N, EPI, MASK, ...)                                          \
    AVX512 static inline __m512i exchange##NAME(__m512i v, int partner, int upper_bit)   \
    {                                                                                     \
        const __m512i lane = _mm512_setr_##EPI(__VA_ARGS__);                              \
        __m512i other =                                                                   \
            _mm512_permutexvar_##EPI(_mm512_xor_si512(lane, _mm512_set1_##EPI(partner)), v); \
        MASK upper = _mm512_test_##EPI##_mask(lane, _mm512_set1_##EPI(upper_bit));        \
        return _mm512_mask_blend_##EPI(upper, _mm512_min_##EPI(v, other),                 \
                                       _mm512_max_##EPI(v, other));                       \
    }                                                                                     \
    AVX512 static inline __m512i clean##NAME(__m512i v)                                   \
    {                                                                                     \
        for (int d = N / 2; d >= 1; d /= 2)                                               \
            v = exchange##NAME(v, d, d);                                                  \
        return v;                                                                         \
    }                                                                                     \
    AVX512 static inline __m512i sort##NAME(__m512i v)                                    \
    {                                                                                     \
        for (int s = 2; s <= N; s *= 2) {                                                 \
            v = exchange##NAME(v, s - 1, s / 2);                                          \
            for (int d = s / 4; d >= 1; d /= 2)                                           \
                v = exchange##NAME(v, d, d);                                              \
        }                                                                                 \
        return v;                                                                         \
    }                                                                                     \
    AVX512 static inline __m512i reversed##NAME(__m512i v)                                \
    {                                                                                     \
        const __m512i lane = _mm512_setr_##EPI(__VA_ARGS__);                              \
        return _mm512_permutexvar_##EPI(_mm512_xor_si512(lane, _mm512_set1_##EPI(N - 1)), v); \
    }                                                                                     \
    MERGE_RUNS(merge_runs##NAME, AVX512, __m512i, _mm512_min_##EPI, _mm512_max_##EPI,     \
               reversed##NAME, clean##NAME)

VECTOR_NETWORK(16, 16, epi32, __mmask16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
SIGNED_ORDER(signed_order16, AVX512, __m512i, _mm512, si512)

/* network_sort8 in 16 lanes; the row's ends load and store through masks. */
AVX512 static void network_sort16(uint32_t *keys, int64_t n, cpu_key_kind kind)
{
    __m512i v[MAX_WIDE_VECTORS];
    const __m512i last = _mm512_set1_epi32(INT32_MAX);
    int count = vectors_for(n, WIDE_LANES);
    for (int i = 0; i < count; i++) {
        int64_t at = (int64_t)i * WIDE_LANES, left = n - at;
        __mmask16 in = left >= WIDE_LANES ? 0xFFFF : left > 0 ? (__mmask16)((1u << left) - 1) : 0;
        __m512i keys_in = signed_order16(_mm512_maskz_loadu_epi32(in, keys + at), kind);
        v[i] = sort16(_mm512_mask_blend_epi32(in, last, keys_in));
    }
    merge_runs16_all(v, count);
    for (int i = 0; i < count && (int64_t)i * WIDE_LANES < n; i++) {
        int64_t at = (int64_t)i * WIDE_LANES, left = n - at;
        __mmask16 out = left >= WIDE_LANES ? 0xFFFF : (__mmask16)((1u << left) - 1);
        _mm512_mask_storeu_epi32(keys + at, out, signed_order16(v[i], kind));
    }
}

/* Argsort: each key in the top half of an int64 and its index in the
 * bottom, so that equal keys order by index (stable, as the radix sort),
 * sorted by the same network in AVX-512's 8 lanes of int64 (AVX2 has no
 * 64-bit min and max). */
VECTOR_NETWORK(8x64, 8, epi64, __mmask8, 0, 1, 2, 3, 4, 5, 6, 7)

/* The signed-order key of one 4-byte value (signed_order8's map), -0.0
 * taking 0.0's key: they are one key to argsort. */
static int32_t signed_key(uint32_t bits, cpu_key_kind kind)
{
    if (kind == CPU_KEYS_UNSIGNED)
        return (int32_t)(bits ^ 0x80000000u);
    if (kind == CPU_KEYS_FLOAT) {
        if (bits == 0x80000000u)
            bits = 0;
        bits ^= bits & 0x80000000u ? 0x7fffffffu : 0;
    }
    return (int32_t)bits;
}

AVX512 static void network_argsort(const uint32_t *row, int64_t n, cpu_key_kind kind,
                                   int64_t *indices)
{
    enum { PAIR_LANES = 8 };
    __m512i v[CPU_SORT_NETWORK_MAX / PAIR_LANES];
    int count = vectors_for(n, PAIR_LANES);
    for (int i = 0; i < count; i++) {
        int64_t item[PAIR_LANES];
        for (int k = 0; k < PAIR_LANES; k++) {
            int64_t at = (int64_t)i * PAIR_LANES + k;
            uint32_t bits;
            if (at < n)
                memcpy(&bits, row + at, sizeof bits); /* the row may be floats */
            item[k] = at < n ? (int64_t)((uint64_t)(int64_t)signed_key(bits, kind) << 32 |
                                         (uint64_t)at)
                             : INT64_MAX; /* sorts last */
        }
        v[i] = sort8x64(_mm512_loadu_si512(item));
    }
    merge_runs8x64_all(v, count);
    const __m512i low = _mm512_set1_epi64(0xffffffff);
    for (int i = 0; i < count && (int64_t)i * PAIR_LANES < n; i++) {
        int64_t at = (int64_t)i * PAIR_LANES, left = n - at;
        __mmask8 out = left >= PAIR_LANES ? 0xFF : (__mmask8)((1u << left) - 1);
        _mm512_mask_storeu_epi64(indices + at, out, _mm512_and_si512(v[i], low));
    }
}
#endif

bool cpu_argsort_network(const void *row, int64_t n, cpu_key_kind kind, int64_t *indices)
{
#ifdef HAVE_NETWORK
    if (n < 1 || n > CPU_SORT_NETWORK_MAX || cpu_vector_isa() != GK_VM_AVX512F)
        return false;
    network_argsort(row, n, kind, indices);
    return true;
#else
    (void)row;
    (void)n;
    (void)kind;
    (void)indices;
    return false;
#endif
}

bool cpu_sort_network(void *row, int64_t n, cpu_key_kind kind)
{
#ifdef HAVE_NETWORK
    if (n < 1 || n > CPU_SORT_NETWORK_MAX)
        return false;
    int isa = cpu_vector_isa();
    if (isa == GK_VM_AVX512F)
        network_sort16(row, n, kind);
    else if (isa == GK_VM_AVX2)
        network_sort8(row, n, kind);
    else
        return false;
    return true;
#else
    (void)row;
    (void)n;
    (void)kind;
    return false;
#endif
}
