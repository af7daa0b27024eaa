/* Printing arrays as NumPy's repr does (NumPy 2's defaults: line width 75,
 * precision 8, threshold 1000, edge items 3, floatmode 'maxprec', sign
 * '-'), with the dtype and the device always shown:
 *
 *   array([[1., 2.],
 *          [3., 4.]], dtype=float32, device=cpu)
 *
 * The elements shown are read back with gk_to_host, so any device prints;
 * a summary reads only its corners, never the whole array. What
 * follows restates numpy/core/arrayprint.py: _formatArray's line wrapping,
 * FloatingFormat (positional, or scientific when the largest magnitude is
 * >= 1e8 - 1e6 for float32, as from NumPy 2.3 -, the smallest non-zero
 * < 1e-4 or their ratio > 1000; the digits of each value the shortest that
 * read back to it, at most 8 after the point; one width for the whole
 * array), IntegerFormat and BoolFormat; summaries ("...") for arrays of
 * more than 1000 elements, which then also show their shape, as NumPy 2.2
 * does. */
#include "compute/array_impl.h"

#include "core/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    LINE_WIDTH = 75,
    THRESHOLD = 1000,
    EDGE_ITEMS = 3,
    PRECISION = 8,
};

/* --- growing strings --- */

typedef struct text {
    char *data;
    size_t length, capacity;
    bool failed; /* out of memory: the text is incomplete */
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->length + n + 1 > t->capacity) {
        size_t capacity = t->capacity ? t->capacity : 64;
        while (t->length + n + 1 > capacity)
            capacity *= 2;
        char *data = realloc(t->data, capacity);
        if (!data) {
            t->failed = true;
            return;
        }
        t->data = data;
        t->capacity = capacity;
    }
    memcpy(t->data + t->length, s, n);
    t->length += n;
    t->data[t->length] = '\0';
}

static void put_string(text *t, const char *s)
{
    put(t, s, strlen(s));
}

static void put_spaces(text *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put(t, " ", 1);
}

/* s right-aligned in `width` columns. */
static void put_right(text *t, const char *s, size_t width)
{
    size_t n = strlen(s);
    put_spaces(t, width > n ? width - n : 0);
    put(t, s, n);
}

/* --- one element as text --- */

/* v rounded to a floating dtype (as a cast), as a double again. */
static double in_dtype(gk_dtype dtype, double v)
{
    if (dtype == GK_FLOAT64)
        return v;
    unsigned char bytes[GK_DTYPE_MAX_SIZE];
    gk_dtype_store(dtype, v, bytes);
    return gk_dtype_load(dtype, bytes);
}

/* The shortest significant digits of |x| (finite) that read back to x as
 * its dtype, without trailing zeros, and the decimal exponent of the first:
 * |x| = 0.d1d2... * 10^(exponent + 1). */
static void shortest_digits(double x, gk_dtype dtype, char *digits, int *exponent)
{
    char buf[48];
    double magnitude = fabs(x);
    for (int precision = 0; precision <= 16; precision++) {
        snprintf(buf, sizeof buf, "%.*e", precision, magnitude);
        if (in_dtype(dtype, strtod(buf, NULL)) == magnitude)
            break;
    }
    /* The digits before 'e' (whatever the locale's decimal point), then
     * the exponent. */
    size_t n = 0;
    const char *p = buf;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[n++] = *p;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    *exponent = *p == 'e' ? atoi(p + 1) : 0;
}

/* Rounded to at most `decimals` digits after the point by printf ("%.8e"
 * or "%.8f"): the digits of `buf` split at the point, trailing zeros of
 * the fraction dropped. */
static void split_rounded(const char *buf, char *whole, size_t whole_size, char *fraction,
                          size_t fraction_size, int *exponent)
{
    size_t w = 0, f = 0;
    const char *p = buf;
    for (; *p >= '0' && *p <= '9'; p++)
        if (w + 1 < whole_size)
            whole[w++] = *p;
    /* The decimal point: the locale's, which may be more than one byte
     * (U+066B in ps_AF is two), so everything up to the next digit. */
    while (*p && *p != 'e' && !(*p >= '0' && *p <= '9'))
        p++;
    for (; *p >= '0' && *p <= '9'; p++)
        if (f + 1 < fraction_size)
            fraction[f++] = *p;
    while (f > 0 && fraction[f - 1] == '0')
        f--;
    whole[w] = '\0';
    fraction[f] = '\0';
    if (exponent)
        *exponent = *p == 'e' ? atoi(p + 1) : 0;
}

/* A finite value's parts before padding: the integer part with its sign,
 * the fraction's digits and, in scientific form, the exponent. */
typedef struct float_parts {
    char whole[400]; /* positional values are < 1e8, but room for any */
    char fraction[48];
    int exponent;
} float_parts;

static void float_split(double x, gk_dtype dtype, bool scientific, float_parts *parts)
{
    char digits[48], buf[400];
    int exponent;
    shortest_digits(x, dtype, digits, &exponent);
    int count = (int)strlen(digits);
    char *whole = parts->whole;
    size_t whole_size = sizeof parts->whole;
    if (signbit(x)) {
        *whole++ = '-';
        whole_size--;
    }
    parts->exponent = 0;
    if (scientific) {
        if (count - 1 > PRECISION) {
            snprintf(buf, sizeof buf, "%.*e", PRECISION, fabs(x));
            split_rounded(buf, whole, whole_size, parts->fraction, sizeof parts->fraction,
                          &parts->exponent);
        } else {
            whole[0] = digits[0];
            whole[1] = '\0';
            snprintf(parts->fraction, sizeof parts->fraction, "%s", digits + 1);
            parts->exponent = exponent;
        }
        return;
    }
    int decimals = count - 1 - exponent;
    if (decimals > PRECISION) {
        snprintf(buf, sizeof buf, "%.*f", PRECISION, fabs(x));
        split_rounded(buf, whole, whole_size, parts->fraction, sizeof parts->fraction, NULL);
        return;
    }
    if (exponent < 0) {
        snprintf(whole, whole_size, "0");
        int zeros = -exponent - 1;
        memset(parts->fraction, '0', (size_t)zeros);
        snprintf(parts->fraction + zeros, sizeof parts->fraction - (size_t)zeros, "%s", digits);
        return;
    }
    /* exponent < 8 here: the value is below 1e8. */
    for (int i = 0; i <= exponent; i++)
        whole[i] = i < count ? digits[i] : '0';
    whole[exponent + 1] = '\0';
    snprintf(parts->fraction, sizeof parts->fraction, "%s",
             count > exponent + 1 ? digits + exponent + 1 : "");
}

/* How every element of one array is printed. */
typedef struct formatter {
    gk_dtype dtype;
    bool zero_d;
    int width;       /* integers */
    bool scientific; /* floats */
    int pad_left, pad_right, precision, exp_size;
    /* One part of complex elements: element i's value is component
     * i * scale + shift (1 and 0 for real dtypes); plus: signs always
     * shown (NumPy's sign='+', for the imaginary part). */
    int scale, shift;
    bool plus;
} formatter;

static double float_at(const void *data, gk_dtype dtype, int64_t i)
{
    return gk_dtype_load(dtype, (const char *)data + (size_t)i * gk_dtype_size(dtype));
}

static double value_of(const formatter *f, const void *data, int64_t i)
{
    return float_at(data, f->dtype, i * f->scale + f->shift);
}

/* Where NumPy 2.3 turns to scientific form: 10^min(8, the dtype's decimal
 * digits), which is finfo's precision. */
static double scientific_from(gk_dtype dtype)
{
    switch (dtype) {
    case GK_BFLOAT16: return 1e2;
    case GK_FLOAT16: return 1e3;
    case GK_FLOAT32: return 1e6;
    default: return 1e8;
    }
}

/* An integer or bool element in decimal; returns its length. uint64 values
 * above 2^63 - 1 have no int64, so each dtype prints from its own type. */
static int integer_text(const void *data, gk_dtype dtype, int64_t i, char *buf, size_t size)
{
    long long value = 0;
    switch (dtype) {
    case GK_BOOL:
    case GK_UINT8: value = ((const uint8_t *)data)[i]; break;
    case GK_INT8: value = ((const int8_t *)data)[i]; break;
    case GK_INT16: value = ((const int16_t *)data)[i]; break;
    case GK_INT32: value = ((const int32_t *)data)[i]; break;
    case GK_INT64: value = ((const int64_t *)data)[i]; break;
    case GK_UINT16: value = ((const uint16_t *)data)[i]; break;
    case GK_UINT32: value = ((const uint32_t *)data)[i]; break;
    case GK_UINT64:
        return snprintf(buf, size, "%llu", (unsigned long long)((const uint64_t *)data)[i]);
    case GK_FLOAT16:
    case GK_BFLOAT16:
    case GK_FLOAT32:
    case GK_FLOAT64:
    case GK_COMPLEX64:
    case GK_COMPLEX128: break; /* not integers: printed by float_split */
    }
    return snprintf(buf, size, "%lld", value);
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

/* FloatingFormat.fillFormat over the elements that will be shown (all
 * `count` of `data`). */
static void fit_floats(formatter *f, const void *data, int64_t count)
{
    /* The choice of form, in the array's own precision as NumPy makes it
     * (its constants and the ratio rounded to the dtype); scientific from
     * 10^min(8, decimal digits of the dtype) up: 1e6 for float32, 1e8 for
     * float64 (NumPy >= 2.3). */
    gk_dtype dtype = f->dtype;
    double high = 0, low = INFINITY;
    bool any_finite = false, any_nonzero = false, any_nonfinite = false;
    bool negative_inf = f->plus; /* room for "+inf" */
    for (int64_t j = 0; j < count; j++) {
        double x = value_of(f, data, j);
        if (!isfinite(x)) {
            any_nonfinite = true;
            negative_inf = negative_inf || (isinf(x) && x < 0);
            continue;
        }
        any_finite = true;
        if (x != 0) {
            any_nonzero = true;
            high = fmax(high, fabs(x));
            low = fmin(low, fabs(x));
        }
    }
    f->scientific = false;
    if (any_nonzero)
        f->scientific = high >= in_dtype(dtype, scientific_from(dtype)) ||
                        low < in_dtype(dtype, 1e-4) || in_dtype(dtype, high / low) > 1000.0;
    f->pad_left = f->pad_right = f->precision = 0;
    f->exp_size = -1;
    if (any_finite) {
        int whole = 0, fraction = 0, exp_digits = 2;
        for (int64_t j = 0; j < count; j++) {
            double x = value_of(f, data, j);
            if (!isfinite(x))
                continue;
            float_parts parts;
            float_split(x, dtype, f->scientific, &parts);
            whole = max_int(whole, (int)strlen(parts.whole) + (f->plus && !signbit(x)));
            fraction = max_int(fraction, (int)strlen(parts.fraction));
            int e = abs(parts.exponent);
            exp_digits = max_int(exp_digits, e >= 100 ? 3 : 2);
        }
        f->pad_left = whole;
        if (f->scientific) {
            f->precision = fraction;
            f->exp_size = exp_digits;
            f->pad_right = exp_digits + 2 + fraction;
        } else {
            f->pad_right = fraction;
        }
    }
    if (any_nonfinite) {
        int offset = f->pad_right + 1;
        f->pad_left = max_int(f->pad_left, max_int(3 - offset, 3 + negative_inf - offset));
    }
}

static void fit(formatter *f, const void *data, int64_t count)
{
    if (gk_dtype_is_float(f->dtype)) {
        fit_floats(f, data, count);
    } else if (f->dtype != GK_BOOL) {
        int width = 0;
        for (int64_t j = 0; j < count; j++) {
            char buf[32];
            width = max_int(width, integer_text(data, f->dtype, j, buf, sizeof buf));
        }
        f->width = width;
    }
}

static void put_element(text *t, const formatter *f, const void *data, int64_t i)
{
    char buf[64];
    if (f->dtype == GK_BOOL) {
        /* Any nonzero byte is true. */
        put_string(t, ((const uint8_t *)data)[i] ? (f->zero_d ? "True" : " True") : "False");
        return;
    }
    if (!gk_dtype_is_float(f->dtype)) {
        integer_text(data, f->dtype, i, buf, sizeof buf);
        put_right(t, buf, (size_t)f->width);
        return;
    }
    double x = value_of(f, data, i);
    if (!isfinite(x)) {
        const char *word = isnan(x) ? (f->plus ? "+nan" : "nan")
                           : x < 0  ? "-inf"
                           : f->plus ? "+inf"
                                     : "inf";
        put_right(t, word, (size_t)(f->pad_left + f->pad_right + 1));
        return;
    }
    float_parts parts;
    if (f->scientific) {
        /* Every value with the array's number of digits: the exact value's
         * own digits (NumPy's min_digits), not the shortest padded with
         * zeros - for float32 these differ. */
        char rounded[400];
        snprintf(rounded, sizeof rounded, "%.*e", f->precision, fabs(x));
        char *whole = parts.whole;
        if (signbit(x) || f->plus)
            *whole++ = signbit(x) ? '-' : '+';
        split_rounded(rounded, whole, sizeof parts.whole - 1, parts.fraction,
                      sizeof parts.fraction, &parts.exponent);
    } else {
        float_split(x, f->dtype, false, &parts);
        if (f->plus && !signbit(x)) {
            memmove(parts.whole + 1, parts.whole, strlen(parts.whole) + 1);
            parts.whole[0] = '+';
        }
    }
    put_right(t, parts.whole, (size_t)f->pad_left);
    put(t, ".", 1);
    put_string(t, parts.fraction);
    size_t digits = strlen(parts.fraction);
    if (f->scientific) {
        for (size_t k = digits; k < (size_t)f->precision; k++)
            put(t, "0", 1);
        snprintf(buf, sizeof buf, "e%c%0*d", parts.exponent < 0 ? '-' : '+', f->exp_size,
                 abs(parts.exponent));
        put_string(t, buf);
    } else {
        put_spaces(t, (size_t)f->pad_right > digits ? (size_t)f->pad_right - digits : 0);
    }
}

/* --- the nested lists (numpy's _formatArray) --- */

typedef struct printer {
    const void *data;
    int ndim;
    const int64_t *shape;
    /* data holds only the shown elements (see gather_shown): C order over
     * the shown lengths, in elements */
    int64_t strides[GK_MAX_DIMS];
    bool summarize;
    formatter format;
    formatter imag; /* complex dtypes: format prints the real parts, this the imaginary */
    bool complex;
} printer;

/* A complex element as NumPy prints it: the real part, then the
 * imaginary part with its sign and a "j" before its padding. */
static void put_complex(text *t, const printer *p, int64_t i)
{
    put_element(t, &p->format, p->data, i);
    text imag = {0};
    put_element(&imag, &p->imag, p->data, i);
    size_t end = imag.length;
    while (end > 0 && imag.data[end - 1] == ' ')
        end--;
    put(t, imag.data ? imag.data : "", end);
    put(t, "j", 1);
    put(t, imag.data ? imag.data + end : "", imag.length - end);
    t->failed = t->failed || imag.failed;
    free(imag.data);
}

/* numpy's _extendLine: word goes on the line, or on a new one when the line
 * would pass `width` (unless the line holds nothing but the indent). */
static void extend_line(text *s, text *line, const text *word, size_t width, size_t indent)
{
    if (word->failed)
        s->failed = true;
    if (line->length + word->length > width && line->length > indent) {
        size_t n = line->length;
        while (n > 0 && line->data[n - 1] == ' ')
            n--;
        put(s, line->data, n);
        put(s, "\n", 1);
        line->length = 0;
        put_spaces(line, indent);
    }
    put(line, word->data ? word->data : "", word->length);
}

static void recurse(const printer *p, int axis, int64_t offset, size_t indent, size_t width,
                    text *out)
{
    if (axis == p->ndim) {
        if (p->complex)
            put_complex(out, p, offset);
        else
            put_element(out, &p->format, p->data, offset);
        return;
    }
    size_t next_indent = indent + 1, next_width = width - 1;
    int64_t length = p->shape[axis], step = p->strides[axis];
    bool summary = p->summarize && 2 * EDGE_ITEMS < length;
    int64_t leading = summary ? EDGE_ITEMS : 0, trailing = summary ? EDGE_ITEMS : length;
    /* Where element i of this axis lies in the gathered data: a summarized
     * axis keeps only its first and last EDGE_ITEMS, side by side. */
    int64_t skipped = summary ? length - 2 * EDGE_ITEMS : 0;
    text s = {0};
    int left = p->ndim - axis;
    if (left == 1) {
        size_t element_width = width - 1; /* room for "," or "]" */
        text line = {0}, word = {0};
        put_spaces(&line, indent);
        for (int64_t i = 0; i < length; i++) {
            if (i == leading && summary) {
                text dots = {0};
                put_string(&dots, "...");
                extend_line(&s, &line, &dots, element_width, indent);
                free(dots.data);
                put(&line, ", ", 2);
                i = length - trailing;
            }
            word.length = 0;
            int64_t at = i >= leading + skipped ? i - skipped : i;
            recurse(p, axis + 1, offset + at * step, next_indent, next_width, &word);
            extend_line(&s, &line, &word, element_width, indent);
            if (i < length - 1)
                put(&line, ", ", 2);
        }
        put(&s, line.data, line.length);
        s.failed = s.failed || line.failed;
        free(line.data);
        free(word.data);
    } else {
        /* Rows: "," and one newline per remaining axis between them. */
        char separator[GK_MAX_DIMS + 2] = ",";
        for (int k = 1; k < left; k++)
            strcat(separator, "\n");
        for (int64_t i = 0; i < length; i++) {
            if (i == leading && summary) {
                put_spaces(&s, indent);
                put_string(&s, "...");
                put_string(&s, separator);
                i = length - trailing;
            }
            put_spaces(&s, indent);
            int64_t at = i >= leading + skipped ? i - skipped : i;
            recurse(p, axis + 1, offset + at * step, next_indent, next_width, &s);
            if (i < length - 1)
                put_string(&s, separator);
        }
    }
    put(out, "[", 1);
    if (s.length > indent)
        put(out, s.data + indent, s.length - indent);
    put(out, "]", 1);
    out->failed = out->failed || s.failed;
    free(s.data);
}

/* The elements that will be shown, copied to the host in C order into a
 * new buffer (*out, `*count` elements of shape `lengths`): all of a's, or
 * for a summary only the first and last EDGE_ITEMS along each axis longer
 * than 2 * EDGE_ITEMS. Never the whole of a summarized array: it may be
 * far larger than host memory (a broadcast view of 10^12 elements) or slow
 * to read off a GPU. Each corner block (2^cut of them, one per choice of
 * start or end along each cut axis) is a view of a, read on its own and
 * put in its place among the gathered elements. */
static gk_status gather_shown(const gk_array *a, bool summarize, int64_t *lengths, void **out,
                              int64_t *count)
{
    *out = NULL;
    int cut[GK_MAX_DIMS], ncut = 0;
    int64_t total = 1, block_total = 1;
    for (int i = 0; i < a->ndim; i++) {
        bool long_axis = summarize && a->shape[i] > 2 * EDGE_ITEMS;
        lengths[i] = long_axis ? 2 * EDGE_ITEMS : a->shape[i];
        if (long_axis)
            cut[ncut++] = i;
        total *= lengths[i];
        block_total *= long_axis ? EDGE_ITEMS : a->shape[i];
    }
    size_t item = gk_dtype_size(a->dtype), nbytes = (size_t)total * item;
    char *data = malloc(nbytes ? nbytes : 1);
    if (!data)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "print: out of host memory for %zu bytes", nbytes);
    /* Nothing cut: the whole array, in one read. */
    gk_status status = ncut == 0 ? gk_to_host(a, data, nbytes) : GK_OK;
    size_t block_bytes = (size_t)block_total * item;
    char *block = ncut == 0 ? NULL : malloc(block_bytes ? block_bytes : 1);
    if (ncut > 0 && !block)
        status = gk_fail(GK_ERR_OUT_OF_MEMORY, "print: out of host memory for %zu bytes",
                         block_bytes);
    for (unsigned corner = 0; status == GK_OK && ncut > 0 && corner < 1u << ncut; corner++) {
        /* Bit k of corner: the end (1) or the start (0) of axis cut[k]. */
        gk_array *view = NULL;
        for (int k = 0; status == GK_OK && k < ncut; k++) {
            int64_t start = corner >> k & 1 ? a->shape[cut[k]] - EDGE_ITEMS : 0;
            gk_array *next = NULL;
            status = gk_slice(view ? view : a, cut[k], start, start + EDGE_ITEMS, 1, &next);
            gk_array_free(view);
            view = next;
        }
        if (status == GK_OK)
            status = gk_to_host(view, block, block_bytes);
        if (status == GK_OK) {
            /* Element j of the block (C order over the view's shape) goes
             * to the same index in the gathered data, EDGE_ITEMS further
             * along each axis taken from its end. */
            for (int64_t j = 0; j < block_total; j++) {
                int64_t rest = j, offset = 0, stride = 1;
                for (int i = a->ndim - 1, k = ncut - 1; i >= 0; i--) {
                    int64_t index = rest % view->shape[i];
                    rest /= view->shape[i];
                    if (k >= 0 && cut[k] == i) {
                        index += (corner >> k & 1) ? EDGE_ITEMS : 0;
                        k--;
                    }
                    offset += index * stride;
                    stride *= lengths[i];
                }
                memcpy(data + (size_t)offset * item, block + (size_t)j * item, item);
            }
        }
        gk_array_free(view);
    }
    free(block);
    if (status != GK_OK) {
        free(data);
        return status;
    }
    *out = data;
    *count = total;
    return GK_OK;
}

gk_status gk_array_format(const gk_array *a, char **result)
{
    *result = NULL;
    int64_t size = gk_array_size(a), lengths[GK_MAX_DIMS], count = 0;
    bool summarize = size > THRESHOLD;
    void *data = NULL;
    gk_status status = gather_shown(a, summarize, lengths, &data, &count);
    if (status != GK_OK)
        return status;
    bool complex = gk_dtype_is_complex(a->dtype);
    formatter format = {.dtype = gk_dtype_component(a->dtype), .zero_d = a->ndim == 0,
                        .exp_size = -1, .scale = complex ? 2 : 1};
    printer p = {data, a->ndim, a->shape, {0}, summarize, format, format, complex};
    if (complex) {
        p.imag.shift = 1;
        p.imag.plus = true;
    }
    int64_t stride = 1;
    for (int i = a->ndim - 1; i >= 0; i--) {
        p.strides[i] = stride;
        stride *= lengths[i];
    }
    text t = {0};
    put_string(&t, "array(");
    if (size == 0) {
        put_string(&t, "[]");
    } else {
        fit(&p.format, data, count);
        if (complex)
            fit(&p.imag, data, count);
        /* The hanging indent lines up with the first "[" after "array(";
         * the width leaves room for the "," that follows. */
        recurse(&p, 0, 0, strlen("array(") + 1, LINE_WIDTH - 1, &t);
    }
    put(&t, ",", 1);
    free(data);

    /* shape= (when the values do not tell it), dtype= and device=, on a
     * new line if they would pass the line width. */
    text extras = {0};
    char buf[200];
    if ((size == 0 && !(a->ndim == 1)) || p.summarize) {
        put_string(&extras, "shape=");
        put_string(&extras, gk_shape_text(a->ndim, a->shape, buf, sizeof buf));
        put_string(&extras, ", ");
    }
    put_string(&extras, "dtype=");
    put_string(&extras, gk_dtype_name(a->dtype));
    put_string(&extras, ", device=");
    put_string(&extras, gk_device_name(gk_array_device(a), buf, sizeof buf));
    put_string(&extras, ")");
    const char *newline = t.data ? strrchr(t.data, '\n') : NULL;
    size_t last_line = newline ? t.length - (size_t)(newline + 1 - t.data) : t.length;
    if (last_line + extras.length + 1 > LINE_WIDTH) {
        put(&t, "\n", 1);
        put_spaces(&t, strlen("array("));
    } else {
        put(&t, " ", 1);
    }
    put(&t, extras.data ? extras.data : "", extras.length);
    bool failed = t.failed || extras.failed;
    free(extras.data);
    if (failed) {
        free(t.data);
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "print: out of host memory for the text");
    }
    *result = t.data;
    return GK_OK;
}

gk_status gk_array_print(FILE *stream, const gk_array *a)
{
    char *s;
    gk_status status = gk_array_format(a, &s);
    if (status != GK_OK)
        return status;
    bool ok = fputs(s, stream) >= 0 && fputc('\n', stream) != EOF;
    free(s);
    if (!ok)
        return gk_fail(GK_ERR_IO, "print: cannot write the array");
    return GK_OK;
}
