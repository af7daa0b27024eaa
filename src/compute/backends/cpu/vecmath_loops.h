/* The vector loops of one ISA and dtype, included by vecmath.c once per
 * pair with these defined:
 *   VM_SUFFIX  the names' suffix (f32_avx512)
 *   VM_TARGET  the ISA, as __attribute__((target)) spells it ("avx512f")
 *   VM_T VM_V VM_LANES   the element type, the vector type, its lanes
 *   VM_LOAD(p) VM_STORE(p, v) VM_SQRT(v)   unaligned load, store, sqrt
 *   VM_ANY_INF(v)   nonzero when a lane of v is +-inf
 *   VM_ABS(v) VM_SELECT_GE0(x, a, b)   |v|; a where x >= 0, else b
 *   VM_EQ_LANES(a, b)   the lanes where a == b, as bits (lane k: bit k)
 *   VM_SELECT_EQ(a, b, p, q)   p where a == b, else q
 * Each loop takes a cpu_vector_function as its context. The contiguous
 * case (and a binary one's single value against a contiguous side) goes
 * straight from the arrays; the tail and every other layout (strided,
 * broadcast) go one vector at a time through a buffer, so all of them get
 * the same vector function and the same results.
 *
 * The libraries overflow early near the ends of some functions' ranges (exp and
 * sinh just below the overflow threshold, asinh and acosh beyond the square
 * root of the largest value, log1p of huge values, pow near the largest
 * value), returning inf for a finite result. So a vector whose result has
 * an infinite lane for finite inputs has those lanes recomputed with libm
 * (in double, then rounded, for float32 too);
 * real overflows and poles are the only other infinite results, rare
 * enough that the check costs nothing measurable. */

#define VM_CAT_(a, b) a##_##b
#define VM_CAT(a, b) VM_CAT_(a, b)
#define VM_NAME(base) VM_CAT(base, VM_SUFFIX)

__attribute__((target(VM_TARGET))) static VM_V VM_NAME(sqrt)(VM_V x)
{
    return VM_SQRT(x);
}

/* r = f(x) with its infinite lanes from finite x recomputed by libm. */
__attribute__((target(VM_TARGET))) static VM_V VM_NAME(fix_unary)(const cpu_vector_function *fn,
                                                                  VM_V x, VM_V r)
{
    VM_T xv[VM_LANES], rv[VM_LANES];
    VM_STORE(xv, x);
    VM_STORE(rv, r);
    for (int k = 0; k < VM_LANES; k++)
        if (isinf(rv[k]) && isfinite(xv[k]))
            rv[k] = (VM_T)fn->unary(xv[k]);
    return VM_LOAD(rv);
}

__attribute__((target(VM_TARGET))) static VM_V VM_NAME(fix_binary)(
    const cpu_vector_function *fn, VM_V x, VM_V y, VM_V r)
{
    VM_T xv[VM_LANES], yv[VM_LANES], rv[VM_LANES];
    VM_STORE(xv, x);
    VM_STORE(yv, y);
    VM_STORE(rv, r);
    for (int k = 0; k < VM_LANES; k++)
        if (isinf(rv[k]) && isfinite(xv[k]) && isfinite(yv[k]))
            rv[k] = (VM_T)fn->binary(xv[k], yv[k]);
    return VM_LOAD(rv);
}

/* f(x), checked as above. */
__attribute__((target(VM_TARGET))) static inline VM_V VM_NAME(apply_unary)(
    const cpu_vector_function *fn, VM_V x)
{
    VM_V r = ((VM_V(*)(VM_V))fn->vector)(x);
    return VM_ANY_INF(r) ? VM_NAME(fix_unary)(fn, x, r) : r;
}

__attribute__((target(VM_TARGET))) static inline VM_V VM_NAME(apply_binary)(
    const cpu_vector_function *fn, VM_V x, VM_V y)
{
    VM_V r = ((VM_V(*)(VM_V, VM_V))fn->vector)(x, y);
    return VM_ANY_INF(r) ? VM_NAME(fix_binary)(fn, x, y, r) : r;
}

/* 1 / (1 + e^-x) from e = e^-|x| <= 1 (the context's vector function is
 * SLEEF's exp): 1 / (1 + e) for x >= 0, e / (1 + e) below, as the scalar
 * loop in elementwise.c. exp(-|x|) cannot overflow, so no lane needs libm. */
__attribute__((target(VM_TARGET))) static inline VM_V VM_NAME(apply_sigmoid)(
    const cpu_vector_function *fn, VM_V x)
{
    const VM_V zero = {0}, one = zero + 1;
    VM_V e = ((VM_V(*)(VM_V))fn->vector)(zero - VM_ABS(x));
    VM_V r = one / (one + e);
    return VM_SELECT_GE0(x, r, e * r);
}

/* out = apply(x) over any strides; inlined into each loop below with its
 * apply function fixed. */
__attribute__((target(VM_TARGET))) static inline void VM_NAME(each)(
    int64_t n, char *const *data, const int64_t *s, const cpu_vector_function *fn,
    VM_V (*apply)(const cpu_vector_function *, VM_V))
{
    VM_T *out = (VM_T *)data[0];
    const VM_T *xs = (const VM_T *)data[1];
    int64_t i = 0;
    if (s[0] == 1 && s[1] == 1)
        for (; i + VM_LANES <= n; i += VM_LANES)
            VM_STORE(out + i, apply(fn, VM_LOAD(xs + i)));
    for (; i < n; i += VM_LANES) {
        /* Unused lanes hold 0, a valid input for every function. */
        VM_T x[VM_LANES] = {0};
        int64_t m = n - i < VM_LANES ? n - i : VM_LANES;
        for (int64_t k = 0; k < m; k++)
            x[k] = xs[(i + k) * s[1]];
        VM_STORE(x, apply(fn, VM_LOAD(x)));
        for (int64_t k = 0; k < m; k++)
            out[(i + k) * s[0]] = x[k];
    }
}

__attribute__((target(VM_TARGET))) static void VM_NAME(unary)(int64_t n, char *const *data,
                                                              const int64_t *s,
                                                              const void *context)
{
    VM_NAME(each)(n, data, s, context, VM_NAME(apply_unary));
}

__attribute__((target(VM_TARGET))) static void VM_NAME(sigmoid)(int64_t n, char *const *data,
                                                                const int64_t *s,
                                                                const void *context)
{
    VM_NAME(each)(n, data, s, context, VM_NAME(apply_sigmoid));
}

/* v in every lane (not zero + v, which makes -0 +0). */
__attribute__((target(VM_TARGET))) static inline VM_V VM_NAME(splat)(VM_T v)
{
    VM_T lanes[VM_LANES];
    for (int k = 0; k < VM_LANES; k++)
        lanes[k] = v;
    return VM_LOAD(lanes);
}

/* out = apply(x, y) over any strides; inlined into each loop below with
 * its apply function fixed. */
__attribute__((target(VM_TARGET))) static inline void VM_NAME(pairs)(
    int64_t n, char *const *data, const int64_t *s, const cpu_vector_function *fn,
    VM_V (*apply)(const cpu_vector_function *, VM_V, VM_V))
{
    VM_T *out = (VM_T *)data[0];
    const VM_T *xs = (const VM_T *)data[1], *ys = (const VM_T *)data[2];
    int64_t i = 0;
    /* Contiguous, or one side a single value (x ** 2.5, atan2(y, 1.0)),
     * which is one vector for the whole loop; through the buffer below
     * that case took twice the time. */
    if (s[0] == 1 && s[1] == 1 && s[2] == 1)
        for (; i + VM_LANES <= n; i += VM_LANES)
            VM_STORE(out + i, apply(fn, VM_LOAD(xs + i), VM_LOAD(ys + i)));
    else if (s[0] == 1 && s[1] == 1 && s[2] == 0)
        for (const VM_V y = VM_NAME(splat)(ys[0]); i + VM_LANES <= n; i += VM_LANES)
            VM_STORE(out + i, apply(fn, VM_LOAD(xs + i), y));
    else if (s[0] == 1 && s[1] == 0 && s[2] == 1)
        for (const VM_V x = VM_NAME(splat)(xs[0]); i + VM_LANES <= n; i += VM_LANES)
            VM_STORE(out + i, apply(fn, x, VM_LOAD(ys + i)));
    for (; i < n; i += VM_LANES) {
        VM_T x[VM_LANES] = {0}, y[VM_LANES] = {0};
        int64_t m = n - i < VM_LANES ? n - i : VM_LANES;
        for (int64_t k = 0; k < m; k++) {
            x[k] = xs[(i + k) * s[1]];
            y[k] = ys[(i + k) * s[2]];
        }
        VM_STORE(x, apply(fn, VM_LOAD(x), VM_LOAD(y)));
        for (int64_t k = 0; k < m; k++)
            out[(i + k) * s[0]] = x[k];
    }
}

__attribute__((target(VM_TARGET))) static void VM_NAME(binary)(int64_t n, char *const *data,
                                                               const int64_t *s,
                                                               const void *context)
{
    VM_NAME(pairs)(n, data, s, context, VM_NAME(apply_binary));
}

/* x ** 0.5 from the square root instruction: rounded once, where pow is
 * 1 ULP, and the cost of one instruction. Where sqrt differs from pow (the
 * standard's special cases) the select gives pow's: (-0) ** 0.5 is +0
 * (sqrt + 0 turns -0 into +0) and (-inf) ** 0.5 is +inf (x + inf is NaN
 * only there and for a NaN x, where x * x is +inf or the NaN). */
__attribute__((target(VM_TARGET))) static inline VM_V VM_NAME(half_power)(VM_V x)
{
    const VM_V zero = {0}, inf = zero + (VM_T)INFINITY;
    return VM_SELECT_GE0(x + inf, VM_SQRT(x) + zero, x * x);
}

/* pow, with the lanes whose exponent is 0.5, 2 or -1 from half_power,
 * x * x and 1 / x (each rounded once, as NumPy's sqrt, square and
 * reciprocal that its x ** 0.5, x ** 2 and x ** -1 call), whatever the
 * neighbouring lanes hold, so that an element's value never depends on the
 * layout or on whether it is computed in place; a vector of one of them
 * (x ** 0.5, x **= 2) skips pow. */
__attribute__((target(VM_TARGET))) static inline VM_V VM_NAME(apply_power)(
    const cpu_vector_function *fn, VM_V x, VM_V y)
{
    const VM_V zero = {0}, half = zero + (VM_T)0.5, two = zero + 2, minus_one = zero - 1;
    const unsigned every = (1u << VM_LANES) - 1;
    unsigned halves = VM_EQ_LANES(y, half), squares = VM_EQ_LANES(y, two);
    unsigned reciprocals = VM_EQ_LANES(y, minus_one);
    VM_V r = (halves | squares | reciprocals) == every ? zero : VM_NAME(apply_binary)(fn, x, y);
    if (halves)
        r = VM_SELECT_EQ(y, half, VM_NAME(half_power)(x), r);
    if (squares)
        r = VM_SELECT_EQ(y, two, x * x, r);
    if (reciprocals)
        r = VM_SELECT_EQ(y, minus_one, (zero + 1) / x, r);
    return r;
}

__attribute__((target(VM_TARGET))) static void VM_NAME(power)(int64_t n, char *const *data,
                                                              const int64_t *s,
                                                              const void *context)
{
    VM_NAME(pairs)(n, data, s, context, VM_NAME(apply_power));
}

#undef VM_NAME
#undef VM_CAT
#undef VM_CAT_
#undef VM_SUFFIX
#undef VM_TARGET
#undef VM_T
#undef VM_V
#undef VM_LANES
#undef VM_LOAD
#undef VM_STORE
#undef VM_SQRT
#undef VM_ANY_INF
#undef VM_ABS
#undef VM_SELECT_GE0
#undef VM_EQ_LANES
#undef VM_SELECT_EQ
