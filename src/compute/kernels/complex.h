/* The complex functions of the built-in GPU programs, for complex64 and
 * complex128 (GK_T is gk_c64 or gk_c128, GK_T_REAL float or double). Put
 * after dialect.h and types.h in front of every built-in program; it is
 * empty unless -DGK_DTYPE names a complex dtype. Every function is written
 * once, in GK_T and GK_T_REAL, for both precisions.
 *
 * The values are the CPU backend's (compute/backends/cpu/complex.c), so a
 * complex array computes the same on every device:
 *
 *   cx_make(re, im)          a value from its parts
 *   cx_mul, cx_div, cx_reciprocal, cx_pow, cx_sign, cx_abs (a GK_T_REAL)
 *                            as the CPU computes them (NumPy's formulas)
 *   cx_exp, cx_log, cx_sqrt, cx_sinh, cx_cosh, cx_tanh, cx_asinh,
 *   cx_acosh, cx_atanh, cx_acos
 *                            C99 Annex G (G.6): the special cases for
 *                            infinities, NaNs and signed zeros that the
 *                            array API standard lists, as glibc's cexp,
 *                            clog, ... give them (where Annex G leaves a
 *                            sign unspecified, glibc's sign); finite values
 *                            within a few ulps of glibc's
 *   cx_sin, cx_cos, cx_tan, cx_asin, cx_atan
 *                            from the hyperbolic functions by C99's
 *                            identities: sin z = -i sinh(iz), cos z =
 *                            cosh(iz), tan z = -i tanh(iz), asin z =
 *                            -i asinh(iz), atan z = -i atanh(iz)
 *   cx_expm1, cx_log1p, cx_log2, cx_log10
 *                            built from real functions, as the CPU does
 *
 * Floating-point contraction: cx_mul, cx_div, cx_reciprocal (and, given
 * the same real functions, cx_expm1) match the CPU bit for bit only if no
 * product is fused with a sum into one fma, and the exact-product steps
 * below (cx_square_minus_one, cx_log_abs) need the product rounded on its
 * own. CUDA fuses across statements (NVRTC's default
 * --fmad=true), so those products go through cx_times, which is CUDA's
 * never-fused multiply there. OpenCL C fuses only within one expression
 * (FP_CONTRACT ON), so a product stored into a variable first is rounded
 * on its own. Fast-math options (-cl-fast-relaxed-math, --use_fast_math)
 * would break the compensated sums below and are not to be used with
 * these programs. */
#if defined(GK_DTYPE) && GK_T_IS_COMPLEX

/* --- constants of the precision --- */

/* A floating literal of GK_T_REAL: OpenCL C without fp64 refuses a double
 * literal, so float's get the f suffix. */
#if GK_DTYPE == GK_DTYPE_COMPLEX64
#define CX_LITERAL(v) v##f
#else
#define CX_LITERAL(v) v
#endif

#if GK_DTYPE == GK_DTYPE_COMPLEX64
#define CX_REAL_MAX 3.40282347e+38f           /* the largest finite float */
#define CX_MIN_NORMAL 1.17549435e-38f         /* 2^-126, the smallest normal */
#define CX_SQRT_MIN_NORMAL 1.0842021724855044e-19f /* 2^-63 */
#define CX_EPSILON 1.1920928955078125e-7f     /* 2^-23 */
/* exp(x) is finite up to 88.72; beyond CX_EXP_LARGE the functions built on
 * exp scale it (exp(x / 2)^2) so that a representable result stays finite. */
#define CX_EXP_LARGE 88.0f
/* Parts below CX_SERIES_SMALL (2^-13, 2^-27): asin z and atanh z are z to
 * within |z|^2 / 3 relative, under half an ulp. */
#define CX_SERIES_SMALL 0.0001220703125f
/* A part above CX_ASYMPTOTIC_LARGE (2^12, 2^28): asin z = (pi/2 - arg z)
 * + i log 2|z| to within 1 / |z|^2 and atanh z = 1/z + i pi/2 to within
 * 1 / |z|^3, under half an ulp of the result's larger part. */
#define CX_ASYMPTOTIC_LARGE 4096.0f
/* Parts from CX_SQUARE_SMALL (2^-60) to CX_SQUARE_LARGE (2^60) have
 * squares that neither overflow nor lose precision to underflow (next to
 * the larger part's). */
#define CX_SQUARE_SMALL 8.67361737988403547e-19f
#define CX_SQUARE_LARGE 1.15292150460684698e+18f
/* Scaling a subnormal by CX_SCALE_UP (2^24) makes it normal;
 * CX_SCALE_UP_ROOT_INVERSE (2^-12) undoes it after a square root. */
#define CX_SCALE_UP 16777216.0f
#define CX_SCALE_UP_ROOT_INVERSE 0.000244140625f
/* pi as the float nearest it plus the rest, for pi - x to a fraction of an
 * ulp. */
#define CX_PI_HIGH 3.1415927410125732421875f
#define CX_PI_LOW -8.7422776573475858e-8f
#else
#define CX_REAL_MAX 1.7976931348623157e+308
#define CX_MIN_NORMAL 2.2250738585072014e-308
#define CX_SQRT_MIN_NORMAL 1.4916681462400413e-154 /* 2^-511 */
#define CX_EPSILON 2.220446049250313080847e-16 /* 2^-52 */
#define CX_EXP_LARGE 709.0
#define CX_SERIES_SMALL 7.450580596923828125e-9 /* 2^-27 */
#define CX_ASYMPTOTIC_LARGE 268435456.0          /* 2^28 */
#define CX_SQUARE_SMALL 3.05493636349960468e-151 /* 2^-500 */
#define CX_SQUARE_LARGE 3.27339060789614187e+150 /* 2^500 */
#define CX_SCALE_UP 18014398509481984.0               /* 2^54 */
#define CX_SCALE_UP_ROOT_INVERSE 7.450580596923828125e-9 /* 2^-27 */
#define CX_PI_HIGH 3.141592653589793115997963468544185161590576171875
#define CX_PI_LOW 1.2246467991473532e-16
#endif

#define CX_PI_2 CX_LITERAL(1.570796326794896619231321691639751442)
#define CX_PI_4 CX_LITERAL(0.785398163397448309615660845819875721)
#define CX_3PI_4 CX_LITERAL(2.356194490192344928846982537459627163)
#define CX_LN2 CX_LITERAL(0.693147180559945309417232121458176568)
#define CX_LOG2_E CX_LITERAL(1.442695040888963407359924681001892137)  /* 1 / ln 2 */
#define CX_LOG10_E CX_LITERAL(0.434294481903251827651128918916605082) /* 1 / ln 10 */

/* Infinity and a quiet NaN: OpenCL C and the host have the C macros, CUDA
 * gets them from their bits. */
#if defined(GK_CUDA)
#define CX_INFINITY ((GK_T_REAL)__int_as_float(0x7f800000))
#define CX_NAN ((GK_T_REAL)__int_as_float(0x7fc00000))
#else
#define CX_INFINITY ((GK_T_REAL)INFINITY)
#define CX_NAN ((GK_T_REAL)NAN)
#endif

/* --- arithmetic, as the CPU --- */

GK_DEVICE_FN GK_T cx_make(GK_T_REAL re, GK_T_REAL im)
{
    GK_T z;
    z.re = re;
    z.im = im;
    return z;
}

/* a * b rounded on its own, never fused into an fma with a later sum (see
 * the top of the file). */
GK_DEVICE_FN GK_T_REAL cx_times(GK_T_REAL a, GK_T_REAL b)
{
#if defined(GK_CUDA) && GK_DTYPE == GK_DTYPE_COMPLEX64
    return __fmul_rn(a, b);
#elif defined(GK_CUDA)
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

/* The textbook product, as NumPy: (a*c - b*d) + i(a*d + b*c), with none of
 * Annex G's recovery of infinities (inf * (1+0i) has a NaN part). */
GK_DEVICE_FN GK_T cx_mul(GK_T x, GK_T y)
{
    GK_T_REAL ac = cx_times(x.re, y.re), bd = cx_times(x.im, y.im);
    GK_T_REAL ad = cx_times(x.re, y.im), bc = cx_times(x.im, y.re);
    return cx_make(ac - bd, ad + bc);
}

/* Smith's algorithm, as NumPy and the CPU: divide by the larger part of y
 * first so that |y|^2 is never formed (it would overflow or underflow). */
GK_DEVICE_FN GK_T cx_div(GK_T x, GK_T y)
{
    GK_T_REAL a = x.re, b = x.im, c = y.re, d = y.im;
    GK_T_REAL abs_c = fabs(c), abs_d = fabs(d);
    if (abs_c >= abs_d) {
        if (abs_c == 0 && abs_d == 0) /* each part over 0: inf or NaN, as NumPy */
            return cx_make(a / abs_c, b / abs_c);
        GK_T_REAL ratio = d / c;
        GK_T_REAL scale = (GK_T_REAL)1 / (c + cx_times(d, ratio));
        GK_T_REAL re = a + cx_times(b, ratio), im = b - cx_times(a, ratio);
        return cx_make(cx_times(re, scale), cx_times(im, scale));
    }
    if (abs_d != abs_d) /* a NaN part of y (abs_c >= abs_d was false) */
        return cx_make(CX_NAN, CX_NAN);
    GK_T_REAL ratio = c / d;
    GK_T_REAL scale = (GK_T_REAL)1 / (d + cx_times(c, ratio));
    GK_T_REAL re = cx_times(a, ratio) + b, im = cx_times(b, ratio) - a;
    return cx_make(cx_times(re, scale), cx_times(im, scale));
}

/* 1 / x by Smith's algorithm, as the CPU (1/0 is NaN + NaN i there). */
GK_DEVICE_FN GK_T cx_reciprocal(GK_T x)
{
    GK_T_REAL a = x.re, b = x.im;
    if (fabs(b) <= fabs(a)) {
        GK_T_REAL ratio = b / a;
        GK_T_REAL d = a + cx_times(b, ratio);
        return cx_make((GK_T_REAL)1 / d, -ratio / d);
    }
    GK_T_REAL ratio = a / b;
    GK_T_REAL d = cx_times(a, ratio) + b;
    return cx_make(ratio / d, (GK_T_REAL)-1 / d);
}

/* |x|, without overflow or underflow in the squares. */
GK_DEVICE_FN GK_T_REAL cx_abs(GK_T x)
{
    return gk_hypot(x.re, x.im);
}

/* x / |x| (0 for 0, NaN for a NaN part), as the CPU: an infinite x points
 * along its infinite part; with both parts infinite the direction is
 * unknown (NaN). */
GK_DEVICE_FN GK_T cx_sign(GK_T x)
{
    GK_T_REAL a = x.re, b = x.im;
    if (a != a || b != b)
        return cx_make(CX_NAN, CX_NAN);
    if (a == 0 && b == 0)
        return cx_make(0, 0);
    GK_T_REAL m = gk_hypot(a, b);
    if (isinf(m)) {
        if (isinf(a) && isinf(b))
            return cx_make(CX_NAN, CX_NAN);
        if (isinf(a))
            return cx_make(copysign((GK_T_REAL)1, a), copysign((GK_T_REAL)0, b));
        if (isinf(b))
            return cx_make(copysign((GK_T_REAL)0, a), copysign((GK_T_REAL)1, b));
        /* finite parts whose |x| overflows (x / |x| would be 0): halved,
         * |x| / 2 fits; the larger part halves exactly, a smaller one loses
         * at most what is far below the result's ulp */
        a = a / 2;
        b = b / 2;
        m = gk_hypot(a, b);
    }
    return cx_make(a / m, b / m);
}

/* --- helpers of the elementary functions --- */

/* The rounding error of sum = p + q (Knuth's TwoSum): p + q == sum + the
 * result exactly, whatever the order of magnitude of p and q. */
GK_DEVICE_FN GK_T_REAL cx_sum_error(GK_T_REAL p, GK_T_REAL q, GK_T_REAL sum)
{
    GK_T_REAL q_part = sum - p; /* the share of q that made it into sum */
    GK_T_REAL p_part = sum - q_part;
    return (p - p_part) + (q - q_part);
}

/* x^2 + y^2 - 1 (squares that do not overflow): near the unit circle the
 * three terms cancel, so each square is formed exactly as a rounded
 * product plus its error (fma gives the error of a rounded product
 * exactly) and the terms are summed with their rounding errors, to about
 * twice the working precision. */
GK_DEVICE_FN GK_T_REAL cx_square_minus_one(GK_T_REAL x, GK_T_REAL y)
{
    GK_T_REAL xx = cx_times(x, x), yy = cx_times(y, y);
    GK_T_REAL xx_error = fma(x, x, -xx), yy_error = fma(y, y, -yy);
    GK_T_REAL s = xx - (GK_T_REAL)1;
    GK_T_REAL s_error = cx_sum_error(xx, (GK_T_REAL)-1, s);
    GK_T_REAL t = s + yy;
    GK_T_REAL t_error = cx_sum_error(s, yy, t);
    return t + (((xx_error + yy_error) + s_error) + t_error);
}

/* log |x + iy| for any x, y: +inf when either part is infinite (even with
 * a NaN beside it, as Annex G's clog), NaN for another NaN.
 *
 * log|z| = log(x^2 + y^2) / 2, with x^2 + y^2 = hi + lo exactly to about
 * twice the working precision (each square as a rounded product plus its
 * error, which fma gives exactly, and the rounding error of their sum):
 * log(hi + lo) = log(hi) + lo / hi to that precision. log(hi) is accurate
 * relative to its value even for hi near 1, so |z| near 1, where log of a
 * rounded |z| would keep only that rounding, is as accurate as the rest.
 * Parts too large or too small to square are first scaled by a power of
 * two, 2^-e (exact), and e log 2 added back. */
GK_DEVICE_FN GK_T_REAL cx_log_abs(GK_T_REAL x, GK_T_REAL y)
{
    GK_T_REAL a = fabs(x), b = fabs(y);
    if (isinf(a) || isinf(b))
        return CX_INFINITY;
    if (isnan(a) || isnan(b))
        return a + b;
    if (a < b) {
        GK_T_REAL larger = b;
        b = a;
        a = larger;
    }
    if (a == 0) /* log 0 = -inf */
        return log(a);
    int e = 0;
    if (a > CX_SQUARE_LARGE || a < CX_SQUARE_SMALL) {
        frexp(a, &e); /* a = m 2^e, 0.5 <= m < 1 */
        a = ldexp(a, -e);
        b = ldexp(b, -e); /* may underflow: then b^2 is below a^2's last bit */
    }
    GK_T_REAL aa = cx_times(a, a), bb = cx_times(b, b);
    GK_T_REAL hi = aa + bb;
    GK_T_REAL lo = (cx_sum_error(aa, bb, hi) + fma(a, a, -aa)) + fma(b, b, -bb);
    return CX_LITERAL(0.5) * (log(hi) + lo / hi) + (GK_T_REAL)e * CX_LN2;
}

/* asin(x + iy) and acos(x + iy) for finite x, y >= 0, by the algorithm of
 * T. E. Hull, T. F. Fairgrieve and P. T. P. Tang ("Implementing the complex
 * arcsine and arccosine functions using exception handling", ACM TOMS 23,
 * 1997). With R = |z + 1|, S = |z - 1|, A = (R + S) / 2 >= 1 and B = x / A:
 *
 *   asin z = asin B + i log(A + sqrt(A^2 - 1)),
 *   acos z = acos B - i log(A + sqrt(A^2 - 1)).
 *
 * Returns the real part of asin (want_acos 0) or of acos (1) and, as the
 * imaginary part, v = log(A + sqrt(A^2 - 1)) >= 0, which asin adds and
 * acos subtracts. The cancelling differences A - 1 and A - x are formed
 * from y^2 / (R + (x + 1)) = R - (x + 1) and S -+ (1 - x) instead, and
 * asin B near B = 1 (where it loses accuracy) is computed as an atan. */
GK_DEVICE_FN GK_T cx_asin_acos_core(GK_T_REAL x, GK_T_REAL y, int want_acos)
{
    const GK_T_REAL one = 1;
    /* Large |z|: asin z = (pi/2 - arg z) + i log 2|z| up to 1/|z|^2. */
    if (x > CX_ASYMPTOTIC_LARGE || y > CX_ASYMPTOTIC_LARGE) {
        GK_T_REAL v = cx_log_abs(x, y) + CX_LN2;
        return cx_make(want_acos ? atan2(y, x) : atan2(x, y), v);
    }
    /* Small |z|: asin z = z + z^3/6: z itself is within half an ulp. */
    if (x < CX_SERIES_SMALL && y < CX_SERIES_SMALL)
        return cx_make(want_acos ? CX_PI_2 - x : x, y);

    GK_T_REAL x_plus_1 = x + one;
    GK_T_REAL r = gk_hypot(x_plus_1, y), s = gk_hypot(x - one, y);
    GK_T_REAL a = CX_LITERAL(0.5) * (r + s);
    GK_T_REAL b = x / a;
    GK_T_REAL yy = y * y;
    /* R - (x + 1) without cancellation. */
    GK_T_REAL r_minus = yy / (r + x_plus_1);

    /* v = log1p((A - 1) + sqrt((A - 1)(A + 1))), with A - 1 from the
     * differences, A - 1 = ((R - (x + 1)) + (S - (1 - x))) / 2, and not
     * from A itself, whose rounding would dominate near A = 1 (and still
     * cost an ulp or two beyond, where HFT use log(A + sqrt(A^2 - 1))). */
    GK_T_REAL v;
    if (x < one && y < CX_SQRT_MIN_NORMAL) {
        /* y^2 underflows; here v = y / sqrt(1 - x^2) to working precision
         * (the next term is smaller by (y / (1 - x^2))^2). */
        v = y / sqrt((one - x) * x_plus_1);
    } else {
        /* twice A - 1: halving it first would lose the last bits of a
         * subnormal (x = 1 and a tiny y) */
        GK_T_REAL a_minus_1_twice;
        if (x < one)
            a_minus_1_twice = r_minus + yy / (s + (one - x));
        else
            a_minus_1_twice = r_minus + (s + (x - one));
        v = log1p(CX_LITERAL(0.5) * a_minus_1_twice +
                  sqrt(a_minus_1_twice * (CX_LITERAL(0.5) * (a + one))));
    }

    GK_T_REAL re;
    if (b <= CX_LITERAL(0.6417)) {
        re = want_acos ? acos(b) : asin(b);
    } else {
        /* asin B = atan(x / sqrt(A^2 - x^2)), A^2 - x^2 = (A - x)(A + x),
         * A - x = ((R - (x + 1)) + (S + (1 - x))) / 2 for x <= 1 and
         * ((R - (x + 1)) + (S - (x - 1))) / 2, with S - (x - 1) =
         * y^2 / (S + (x - 1)), above. */
        GK_T_REAL q;
        if (x <= one) {
            q = sqrt(CX_LITERAL(0.5) * (a + x) * (r_minus + (s + (one - x))));
        } else {
            GK_T_REAL sum = a + x;
            q = y * sqrt(CX_LITERAL(0.5) * (sum / (r + x_plus_1) + sum / (s + (x - one))));
        }
        re = want_acos ? atan2(q, x) : atan2(x, q);
    }
    return cx_make(re, v);
}

/* atanh(x + iy) for finite x, y >= 0:
 *
 *   atanh z = log((1 + z) / (1 - z)) / 2
 *           = log1p(4x / ((1 - x)^2 + y^2)) / 4 + i atan2(2y, 1 - x^2 - y^2) / 2,
 *
 * the real part without a ratio near 1 and the imaginary part with
 * 1 - x^2 - y^2 formed exactly (it cancels near the unit circle). */
GK_DEVICE_FN GK_T cx_atanh_core(GK_T_REAL x, GK_T_REAL y)
{
    const GK_T_REAL one = 1;
    /* Large |z|: atanh z = 1/z + i pi/2 to within 1/|z|^3, below half an
     * ulp of pi/2 and a relative 1/|z|^2 of the real part. 1/z =
     * (x - iy) / |z|^2 is formed from the ratio of the parts (no
     * overflow). */
    if (x > CX_ASYMPTOTIC_LARGE || y > CX_ASYMPTOTIC_LARGE) {
        GK_T_REAL larger = x >= y ? x : y, ratio = (x >= y ? y : x) / larger;
        GK_T_REAL d = larger * (one + ratio * ratio);
        /* 1 / d for the larger part, ratio / d for the other */
        GK_T_REAL inverse = one / d, share = ratio / d;
        if (isinf(d)) {
            /* a part near the largest finite: d overflows, but its half
             * does not (halving larger is exact), and 1/z is a subnormal
             * that must not be 0 */
            GK_T_REAL half_d = CX_LITERAL(0.5) * larger * (one + ratio * ratio);
            inverse = CX_LITERAL(0.5) / half_d;
            share = ratio * inverse;
        }
        GK_T_REAL re = x >= y ? inverse : share, im = x >= y ? share : inverse;
        return cx_make(re, CX_PI_2 - im);
    }
    /* Small |z|: atanh z = z + z^3/3: z itself is within half an ulp. */
    if (x < CX_SERIES_SMALL && y < CX_SERIES_SMALL)
        return cx_make(x, y);

    GK_T_REAL one_minus_x = one - x;
    GK_T_REAL d = one_minus_x * one_minus_x + y * y;
    GK_T_REAL re;
    if (d < CX_EPSILON) {
        /* z near 1 (d may underflow, to 0 at z = 1): the same real part
         * as log|1 + z| - log|1 - z|, whose second term dominates. */
        re = CX_LITERAL(0.5) * (log(gk_hypot(one + x, y)) - log(gk_hypot(one_minus_x, y)));
    } else {
        re = CX_LITERAL(0.25) * log1p(4 * x / d);
    }
    GK_T_REAL denominator = -cx_square_minus_one(x, y);
    /* An exact 0 is +0 (catanh(1 + i0) = +inf + i0): -(+0) would be -0,
     * which atan2 turns into pi. */
    if (denominator == 0)
        denominator = 0;
    return cx_make(re, CX_LITERAL(0.5) * atan2(2 * y, denominator));
}

/* --- exp, log, sqrt --- */

/* exp(x + iy) = e^x (cos y + i sin y). */
GK_DEVICE_FN GK_T cx_exp(GK_T z)
{
    GK_T_REAL x = z.re, y = z.im;
    if (isfinite(x) && isfinite(y)) {
        if (y == 0) /* exactly real: the imaginary part keeps y's zero */
            return cx_make(exp(x), y);
        GK_T_REAL c = cos(y), s = sin(y);
        if (x > CX_EXP_LARGE) {
            /* e^x overflows before e^x cos y does: root = e^(x/2), twice
             * (no variable is called half: OpenCL C's type) */
            GK_T_REAL root = exp(CX_LITERAL(0.5) * x);
            return cx_make(c * root * root, s * root * root);
        }
        GK_T_REAL e = exp(x);
        return cx_make(e * c, e * s);
    }
    if (isnan(x)) /* exp(NaN + i0) = NaN + i0; NaN + iy otherwise NaN + iNaN */
        return y == 0 ? cx_make(x, y) : cx_make(CX_NAN, CX_NAN);
    if (isinf(x)) {
        if (x > 0) {
            if (y == 0) /* exp(+inf + i0) = +inf + i0 */
                return cx_make(x, y);
            if (isfinite(y)) /* +inf cis(y) */
                return cx_make(x * cos(y), x * sin(y));
            return cx_make(x, CX_NAN); /* +inf + i(inf or NaN): +-inf + iNaN */
        }
        if (isfinite(y)) /* -inf + iy: +0 cis(y) */
            return cx_make(0 * cos(y), 0 * sin(y));
        /* -inf + i(inf or NaN): +-0 +-i0 (glibc: +0, y's sign) */
        return cx_make(0, copysign((GK_T_REAL)0, y));
    }
    /* finite x, y infinite or NaN */
    return cx_make(CX_NAN, CX_NAN);
}

/* log z = log|z| + i arg z: atan2 gives every special case of the
 * imaginary part (the signed zeros, pi/4 and 3pi/4 at the infinities),
 * cx_log_abs those of the real part. */
GK_DEVICE_FN GK_T cx_log(GK_T z)
{
    return cx_make(cx_log_abs(z.re, z.im), atan2(z.im, z.re));
}

/* The principal square root, in the right half-plane with y's sign. */
GK_DEVICE_FN GK_T cx_sqrt(GK_T z)
{
    GK_T_REAL x = z.re, y = z.im;
    if (isinf(y)) /* sqrt(x +- i inf) = +inf +- i inf, even for a NaN x */
        return cx_make(CX_INFINITY, y);
    if (isnan(x))
        return cx_make(CX_NAN, CX_NAN);
    if (isinf(x)) {
        if (x > 0) /* +inf + iy: +inf + i0; +inf + iNaN: +inf + iNaN */
            return cx_make(x, isnan(y) ? y : copysign((GK_T_REAL)0, y));
        /* -inf + iy: +0 + i inf; -inf + iNaN: NaN +- i inf (glibc: y's sign) */
        return cx_make(isnan(y) ? y : 0, copysign(CX_INFINITY, y));
    }
    if (isnan(y))
        return cx_make(CX_NAN, CX_NAN);
    if (x == 0 && y == 0) /* sqrt(+-0 +- i0) = +0 +- i0 */
        return cx_make(0, y);

    /* With t = sqrt((|x| + |z|) / 2), a sum of positive terms (no
     * cancellation): sqrt z = t + i y / 2t for x >= 0, and
     * |y| / 2t + i (y's sign) t for x < 0. */
    GK_T_REAL a = fabs(x), b = fabs(y), unscale = 1;
    if (a > CX_REAL_MAX * CX_LITERAL(0.25) || b > CX_REAL_MAX * CX_LITERAL(0.25)) {
        a *= CX_LITERAL(0.25); /* |x| + |z| would overflow */
        b *= CX_LITERAL(0.25);
        unscale = 2;
    } else if (a < 4 * CX_MIN_NORMAL && b < 4 * CX_MIN_NORMAL) {
        a *= CX_SCALE_UP; /* subnormals: too few significant bits */
        b *= CX_SCALE_UP;
        unscale = CX_SCALE_UP_ROOT_INVERSE;
    }
    GK_T_REAL t = sqrt(CX_LITERAL(0.5) * (a + gk_hypot(a, b)));
    GK_T_REAL other = b / (2 * t);
    if (x >= 0)
        return cx_make(t * unscale, copysign(other * unscale, y));
    return cx_make(other * unscale, copysign(t * unscale, y));
}

/* --- hyperbolic functions --- */

/* sinh(x + iy) = sinh x cos y + i cosh x sin y. */
GK_DEVICE_FN GK_T cx_sinh(GK_T z)
{
    GK_T_REAL x = z.re, y = z.im;
    if (isfinite(x) && isfinite(y)) {
        if (y == 0) /* exactly real: the imaginary part keeps y's zero */
            return cx_make(sinh(x), y);
        GK_T_REAL c = cos(y), s = sin(y);
        if (fabs(x) > CX_EXP_LARGE) {
            /* sinh x ~ cosh x ~ +-e^|x| / 2 overflow before the products:
             * e^(|x|/2) twice. */
            GK_T_REAL root = exp(CX_LITERAL(0.5) * fabs(x));
            GK_T_REAL root_half_signed = copysign(CX_LITERAL(0.5) * root, x);
            return cx_make(root_half_signed * c * root, CX_LITERAL(0.5) * root * s * root);
        }
        return cx_make(sinh(x) * c, cosh(x) * s);
    }
    if (x == 0) /* sinh(+-0 + i(inf or NaN)) = +-0 + iNaN */
        return cx_make(x, CX_NAN);
    if (isnan(x)) /* sinh(NaN + i0) = NaN + i0; NaN otherwise */
        return y == 0 ? cx_make(x, y) : cx_make(CX_NAN, CX_NAN);
    if (isinf(x)) {
        if (y == 0) /* sinh(+-inf + i0) = +-inf + i0 */
            return cx_make(x, y);
        if (isfinite(y)) /* +-inf cos y + i inf sin y */
            return cx_make(x * cos(y), CX_INFINITY * sin(y));
        return cx_make(CX_INFINITY, CX_NAN); /* +-inf + i(inf or NaN): glibc's +inf + iNaN */
    }
    /* finite nonzero x, y infinite or NaN */
    return cx_make(CX_NAN, CX_NAN);
}

/* cosh(x + iy) = cosh x cos y + i sinh x sin y. */
GK_DEVICE_FN GK_T cx_cosh(GK_T z)
{
    GK_T_REAL x = z.re, y = z.im;
    if (isfinite(x) && isfinite(y)) {
        if (y == 0) /* exactly real: sinh x * (+-0), a zero of the product's sign */
            return cx_make(cosh(x), copysign((GK_T_REAL)1, x) * y);
        GK_T_REAL c = cos(y), s = sin(y);
        if (fabs(x) > CX_EXP_LARGE) { /* as in cx_sinh */
            GK_T_REAL root = exp(CX_LITERAL(0.5) * fabs(x));
            GK_T_REAL root_half_signed = copysign(CX_LITERAL(0.5) * root, x);
            return cx_make(CX_LITERAL(0.5) * root * c * root, root_half_signed * s * root);
        }
        return cx_make(cosh(x) * c, sinh(x) * s);
    }
    if (x == 0) /* cosh(+-0 + i(inf or NaN)) = NaN +- i0 (glibc: +0) */
        return cx_make(CX_NAN, 0);
    if (isnan(x)) /* cosh(NaN + i0) = NaN + i0; NaN otherwise */
        return y == 0 ? cx_make(x, y) : cx_make(CX_NAN, CX_NAN);
    if (isinf(x)) {
        if (y == 0) /* cosh(+-inf + i0) = +inf + i0 * (x's sign) */
            return cx_make(CX_INFINITY, copysign((GK_T_REAL)1, x) * y);
        if (isfinite(y)) /* inf cos y + i (+-inf) sin y */
            return cx_make(CX_INFINITY * cos(y), x * sin(y));
        return cx_make(CX_INFINITY, CX_NAN); /* +-inf + i(inf or NaN): +inf + iNaN */
    }
    /* finite nonzero x, y infinite or NaN */
    return cx_make(CX_NAN, CX_NAN);
}

/* tanh(x + iy) = (sinh 2x + i sin 2y) / (cosh 2x + cos 2y), in one of
 * two forms that avoid overflow and cancellation:
 *
 * |x| >= 1: with E = e^-2|x| <= e^-2 (which underflows harmlessly), the
 * numerator and denominator times 2E are 1 - E^2 + 2iE sin 2y and
 * d = 1 + E^2 + 2E cos 2y >= (1 - E)^2, so
 *   tanh z = +-(1 - 2E (E + cos 2y) / d) + i 4E sin y cos y / d,
 * the real part as 1 minus a small correction (accurate near +-1).
 *
 * |x| < 1: with T = tanh x, t = tan y, s = sinh x,
 *   tanh z = (T + it) / (1 + iTt) = T (1 + t^2) / (1 + T^2 t^2) + i t / (1 + (1 + t^2) s^2)
 * (the imaginary part Kahan's, "Branch cuts for complex elementary
 * functions", 1987): sums of positive terms, and t^2 stays finite. */
GK_DEVICE_FN GK_T cx_tanh(GK_T z)
{
    GK_T_REAL x = z.re, y = z.im;
    if (isfinite(x) && isfinite(y)) {
        const GK_T_REAL one = 1;
        if (fabs(x) >= one) {
            GK_T_REAL e = exp(-2 * fabs(x));
            GK_T_REAL c = cos(y), s = sin(y);
            GK_T_REAL cos_2y = (c - s) * (c + s);
            GK_T_REAL d = one + e * (e + 2 * cos_2y);
            GK_T_REAL re = one - 2 * e * (e + cos_2y) / d;
            return cx_make(copysign(re, x), 4 * e * s * c / d);
        }
        if (y == 0) /* exactly real */
            return cx_make(tanh(x), y);
        /* fma saves a rounding in each sum with 1 (the worst case loses
         * about an ulp less) */
        GK_T_REAL t = tan(y), big_t = tanh(x), s = sinh(x);
        GK_T_REAL b = fma(t, t, one), product = big_t * t;
        GK_T_REAL re = big_t * b / fma(product, product, one);
        return cx_make(re, t / fma(b * s, s, one));
    }
    if (isinf(x)) {
        /* tanh(+-inf + iy) = +-1 + i0 sin 2y; with y infinite or NaN,
         * +-1 +- i0 (glibc: y's sign) */
        GK_T_REAL sign_of_im = isfinite(y) ? sin(y) * cos(y) : y;
        return cx_make(copysign((GK_T_REAL)1, x), copysign((GK_T_REAL)0, sign_of_im));
    }
    if (x == 0) /* tanh(+-0 + i(inf or NaN)) = +-0 + iNaN */
        return cx_make(x, CX_NAN);
    if (isnan(x)) /* tanh(NaN + i0) = NaN + i0; NaN otherwise */
        return y == 0 ? cx_make(x, y) : cx_make(CX_NAN, CX_NAN);
    /* finite nonzero x, y infinite or NaN */
    return cx_make(CX_NAN, CX_NAN);
}

/* --- inverse hyperbolic functions and acos --- */

/* asinh z = -i asin(iz): from asin(|y| + i|x|) = u + iv, asinh z = v + iu
 * with x's and y's signs (asinh is odd and conjugate-symmetric). */
GK_DEVICE_FN GK_T cx_asinh(GK_T z)
{
    GK_T_REAL x = z.re, y = z.im;
    if (isfinite(x) && isfinite(y)) {
        GK_T w = cx_asin_acos_core(fabs(y), fabs(x), 0);
        return cx_make(copysign(w.im, x), copysign(w.re, y));
    }
    if (isinf(x)) /* +-inf + iy: +-inf + i0; +-inf +- i inf: +-inf +- i pi/4; NaN y: +-inf + iNaN */
        return cx_make(x, isnan(y) ? y : copysign(isinf(y) ? CX_PI_4 : 0, y));
    if (isinf(y)) /* x + i inf: +inf + i pi/2; NaN + i inf: +-inf + iNaN (glibc: the NaN's sign) */
        return isnan(x) ? cx_make(copysign(CX_INFINITY, x), x)
                        : cx_make(copysign(CX_INFINITY, x), copysign(CX_PI_2, y));
    if (isnan(x) && y == 0) /* asinh(NaN + i0) = NaN + i0 */
        return cx_make(x, y);
    return cx_make(CX_NAN, CX_NAN);
}

/* acos, with its own special cases (Annex G's cacos): from
 * acos(|x| + i|y|) = r - iv, acos z = r - iv for x >= 0 and (pi - r) ... for
 * x < 0 (acos(-z) = pi - acos z), the imaginary part of the opposite sign
 * to y's (conjugate symmetry). */
GK_DEVICE_FN GK_T cx_acos(GK_T z)
{
    GK_T_REAL x = z.re, y = z.im;
    if (isfinite(x) && isfinite(y)) {
        GK_T w = cx_asin_acos_core(fabs(x), fabs(y), 1);
        GK_T_REAL re = signbit(x) ? (CX_PI_HIGH - w.re) + CX_PI_LOW : w.re;
        return cx_make(re, signbit(y) ? w.im : -w.im);
    }
    if (isinf(x)) {
        /* +inf + iy: +0 -+ i inf; -inf + iy: pi -+ i inf; with y infinite
         * pi/4 and 3pi/4; NaN y: NaN +- i inf (glibc: the NaN's sign, flipped) */
        GK_T_REAL im = -copysign(CX_INFINITY, y);
        if (isnan(y))
            return cx_make(y, im);
        if (isinf(y))
            return cx_make(x > 0 ? CX_PI_4 : CX_3PI_4, im);
        return cx_make(x > 0 ? (GK_T_REAL)0 : CX_PI_HIGH, im);
    }
    if (isinf(y)) /* x -+ i inf: pi/2 -+ i inf; NaN -+ i inf for a NaN x */
        return cx_make(isnan(x) ? x : CX_PI_2, -copysign(CX_INFINITY, y));
    if (x == 0) /* acos(+-0 + iNaN) = pi/2 + iNaN */
        return cx_make(CX_PI_2, CX_NAN);
    return cx_make(CX_NAN, CX_NAN);
}

/* acosh z = +-i acos z, the sign making the real part >= 0: with
 * acos(|x| + i|y|) = r - iv, acosh z = v + i (y's sign) r (pi - r for
 * x < 0). */
GK_DEVICE_FN GK_T cx_acosh(GK_T z)
{
    GK_T_REAL x = z.re, y = z.im;
    if (isfinite(x) && isfinite(y)) {
        GK_T w = cx_asin_acos_core(fabs(x), fabs(y), 1);
        GK_T_REAL im = signbit(x) ? (CX_PI_HIGH - w.re) + CX_PI_LOW : w.re;
        return cx_make(w.im, copysign(im, y));
    }
    if (isinf(x)) {
        /* +inf + iy: +inf + i0; -inf + iy: +inf + i pi; y infinite: pi/4,
         * 3pi/4; NaN y: +inf + iNaN */
        if (isnan(y))
            return cx_make(CX_INFINITY, y);
        GK_T_REAL angle = isinf(y) ? (x > 0 ? CX_PI_4 : CX_3PI_4) : (x > 0 ? (GK_T_REAL)0 : CX_PI_HIGH);
        return cx_make(CX_INFINITY, copysign(angle, y));
    }
    if (isinf(y)) /* x +- i inf: +inf +- i pi/2; NaN +- i inf: +inf + iNaN */
        return cx_make(CX_INFINITY, isnan(x) ? x : copysign(CX_PI_2, y));
    if (x == 0) /* acosh(+-0 + iNaN) = NaN + i pi/2 (glibc: +pi/2) */
        return cx_make(CX_NAN, CX_PI_2);
    return cx_make(CX_NAN, CX_NAN);
}

/* atanh, odd and conjugate-symmetric: from atanh(|x| + i|y|). */
GK_DEVICE_FN GK_T cx_atanh(GK_T z)
{
    GK_T_REAL x = z.re, y = z.im;
    if (isfinite(x) && isfinite(y)) {
        GK_T w = cx_atanh_core(fabs(x), fabs(y));
        return cx_make(copysign(w.re, x), copysign(w.im, y));
    }
    if (isinf(y)) /* x +- i inf (any x, NaN too): +-0 +- i pi/2 (glibc: x's sign) */
        return cx_make(copysign((GK_T_REAL)0, x), copysign(CX_PI_2, y));
    if (isinf(x)) /* +-inf + iy: +-0 + i pi/2 (y's sign); NaN y: +-0 + iNaN */
        return cx_make(copysign((GK_T_REAL)0, x), isnan(y) ? y : copysign(CX_PI_2, y));
    if (x == 0) /* atanh(+-0 + iNaN) = +-0 + iNaN */
        return cx_make(x, y);
    return cx_make(CX_NAN, CX_NAN);
}

/* --- trigonometric functions, by C99's identities --- */

/* sin z = -i sinh(iz), iz = -y + ix; -i (p + iq) = q - ip. Where Annex G
 * leaves the sign unspecified, glibc's csin has NaN + i inf for an
 * infinite y and an infinite or NaN x (its csinh would give -i inf). */
GK_DEVICE_FN GK_T cx_sin(GK_T z)
{
    if (isinf(z.im) && !isfinite(z.re))
        return cx_make(CX_NAN, CX_INFINITY);
    GK_T w = cx_sinh(cx_make(-z.im, z.re));
    return cx_make(w.im, -w.re);
}

/* cos z = cosh(iz). */
GK_DEVICE_FN GK_T cx_cos(GK_T z)
{
    return cx_cosh(cx_make(-z.im, z.re));
}

/* tan z = -i tanh(iz). */
GK_DEVICE_FN GK_T cx_tan(GK_T z)
{
    GK_T w = cx_tanh(cx_make(-z.im, z.re));
    return cx_make(w.im, -w.re);
}

/* asin z = -i asinh(iz). asin(+-inf + iNaN) is NaN + i inf with the
 * NaN's sign (glibc, NumPy): said here, since iz negates the NaN and a
 * GPU's negation need not keep a NaN's sign. */
GK_DEVICE_FN GK_T cx_asin(GK_T z)
{
    if (isinf(z.re) && isnan(z.im))
        return cx_make(z.im, copysign(CX_INFINITY, z.im));
    GK_T w = cx_asinh(cx_make(-z.im, z.re));
    return cx_make(w.im, -w.re);
}

/* atan z = -i atanh(iz). */
GK_DEVICE_FN GK_T cx_atan(GK_T z)
{
    GK_T w = cx_atanh(cx_make(-z.im, z.re));
    return cx_make(w.im, -w.re);
}

/* --- built from real functions, as the CPU --- */

/* exp(z) - 1 without cancellation for small z:
 * e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y/2). Infinite or NaN parts
 * (but a NaN x with finite y) take exp's special cases; a real z gives
 * expm1(x) + i y, +0 for +-0 as the array API standard has it. */
GK_DEVICE_FN GK_T cx_expm1(GK_T z)
{
    GK_T_REAL x = z.re, y = z.im;
    if (isinf(x) || isnan(y) || isinf(y)) {
        GK_T e = cx_exp(z);
        return cx_make(e.re - 1, e.im);
    }
    if (y == 0)
        return cx_make(x == 0 ? (GK_T_REAL)0 : expm1(x), y);
    GK_T_REAL sine_half = sin(y / 2);
    GK_T_REAL re = cx_times(expm1(x), cos(y)) - 2 * cx_times(sine_half, sine_half);
    return cx_make(re, exp(x) * sin(y));
}

/* log(1 + z) as the CPU: log|1 + z| + i arg(1 + z). */
GK_DEVICE_FN GK_T cx_log1p(GK_T z)
{
    GK_T_REAL a = z.re + 1, b = z.im;
    return cx_make(log(gk_hypot(a, b)), atan2(b, a));
}

GK_DEVICE_FN GK_T cx_log2(GK_T z)
{
    GK_T l = cx_log(z);
    return cx_make(l.re * CX_LOG2_E, l.im * CX_LOG2_E);
}

GK_DEVICE_FN GK_T cx_log10(GK_T z)
{
    GK_T l = cx_log(z);
    return cx_make(l.re * CX_LOG10_E, l.im * CX_LOG10_E);
}

/* --- pow --- */

/* x * y with C99 Annex G's recovery (G.5.1): where the textbook formula
 * gives NaN in both parts but an operand is infinite (or a product
 * overflowed), the result is an infinity; the operands are then reduced to
 * their directions (an infinite part 1, the others and NaNs 0) and the
 * product recomputed times infinity. This is C's `*`, which glibc's cpow
 * uses. */
GK_DEVICE_FN GK_T cx_mul_annex_g(GK_T x, GK_T y)
{
    GK_T_REAL a = x.re, b = x.im, c = y.re, d = y.im;
    GK_T_REAL ac = a * c, bd = b * d, ad = a * d, bc = b * c;
    GK_T_REAL re = ac - bd, im = ad + bc;
    if (!isnan(re) || !isnan(im))
        return cx_make(re, im);
    const GK_T_REAL one = 1, zero = 0;
    int recompute = 0;
    if (isinf(a) || isinf(b)) { /* x infinite */
        a = copysign(isinf(a) ? one : zero, a);
        b = copysign(isinf(b) ? one : zero, b);
        if (isnan(c))
            c = copysign(zero, c);
        if (isnan(d))
            d = copysign(zero, d);
        recompute = 1;
    }
    if (isinf(c) || isinf(d)) { /* y infinite */
        c = copysign(isinf(c) ? one : zero, c);
        d = copysign(isinf(d) ? one : zero, d);
        if (isnan(a))
            a = copysign(zero, a);
        if (isnan(b))
            b = copysign(zero, b);
        recompute = 1;
    }
    if (!recompute && (isinf(ac) || isinf(bd) || isinf(ad) || isinf(bc))) {
        /* a product overflowed: NaN parts become zeros */
        if (isnan(a))
            a = copysign(zero, a);
        if (isnan(b))
            b = copysign(zero, b);
        if (isnan(c))
            c = copysign(zero, c);
        if (isnan(d))
            d = copysign(zero, d);
        recompute = 1;
    }
    if (recompute) {
        re = CX_INFINITY * (a * c - b * d);
        im = CX_INFINITY * (a * d + b * c);
    }
    return cx_make(re, im);
}

/* x ** y as the CPU: x ** 0 = 1; 0 ** y = 0 for a real y > 0, NaN
 * otherwise; a small integer power (|n| < 100) by repeated squaring with
 * the textbook product (exact for Gaussian integers, as NumPy); anything
 * else exp(y log x) as glibc's cpow. */
GK_DEVICE_FN GK_T cx_pow(GK_T x, GK_T y)
{
    GK_T_REAL a = x.re, b = x.im, c = y.re, d = y.im;
    if (c == 0 && d == 0)
        return cx_make(1, 0);
    if (a == 0 && b == 0)
        return c > 0 ? cx_make(0, 0) : cx_make(CX_NAN, CX_NAN);
    /* 1, 2 and 3 unrolled, as on the CPU */
    if (d == 0 && c == 1)
        return x;
    if (d == 0 && (c == 2 || c == 3)) {
        GK_T square = cx_mul(x, x);
        return c == 2 ? square : cx_mul(square, x);
    }
    if (d == 0 && c == trunc(c) && fabs(c) < 100) {
        int k = (int)fabs(c);
        GK_T result = cx_make(1, 0), base = x;
        for (; k > 0; k >>= 1) {
            if (k & 1)
                result = cx_mul(result, base);
            base = cx_mul(base, base);
        }
        return c < 0 ? cx_div(cx_make(1, 0), result) : result;
    }
    return cx_exp(cx_mul_annex_g(y, cx_log(x)));
}

/* The macros above are this file's own. */
#undef CX_LITERAL
#undef CX_REAL_MAX
#undef CX_MIN_NORMAL
#undef CX_SQRT_MIN_NORMAL
#undef CX_EPSILON
#undef CX_EXP_LARGE
#undef CX_SERIES_SMALL
#undef CX_ASYMPTOTIC_LARGE
#undef CX_SQUARE_SMALL
#undef CX_SQUARE_LARGE
#undef CX_SCALE_UP
#undef CX_SCALE_UP_ROOT_INVERSE
#undef CX_PI_HIGH
#undef CX_PI_LOW
#undef CX_PI_2
#undef CX_PI_4
#undef CX_3PI_4
#undef CX_LN2
#undef CX_LOG2_E
#undef CX_LOG10_E
#undef CX_INFINITY
#undef CX_NAN

#endif
