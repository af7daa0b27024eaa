/* The fft extension of the array API standard: discrete Fourier transforms
 * over any axes of an array (fft, ifft, fftn, ifftn, rfft, irfft, rfftn,
 * irfftn, hfft, ihfft in one gk_fft), fftfreq and rfftfreq, fftshift and
 * ifftshift.
 *
 * Transforms run through cuFFT on CUDA devices that have it (the
 * backend's `fft`), else on the CPU through FFTW (ext/fftw.h says why
 * FFTW): the input is cut or zero-padded to the lengths asked for and
 * converted to the computing dtype where the transform runs (no copy at
 * all when the array already is that), one listed axis is transformed
 * after another, each as a batch of contiguous rows (axis_pass), and the
 * last result is scaled for the norm and moved to the input's device.
 * Plans are made with FFTW_ESTIMATE (planning measures nothing and touches
 * no data), threaded for transforms of at least THREADED_SIZE elements, and
 * cached (PLAN_CACHE of them, the least recently used replaced): a second
 * transform of the same layout plans nothing.
 *
 * Dtypes, as NumPy 2 and the standard: complex64 and complex128 keep their
 * precision, float32 and float16 compute as complex64 / float32, and
 * float64, integers and bool as complex128 / float64. The real transforms
 * (rfft, ihfft) refuse complex input; irfft and hfft give real output. */
#include "compute/array_impl.h"
#include "compute/backend.h"

#include "core/error.h"
#include "ext/fftw.h"
#include "ext/openmp.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { PLAN_CACHE = 16, THREADED_SIZE = 1 << 15 };

/* A plan's problem: everything new-array execution needs to be the same. */
typedef struct plan_key {
    int transform, single, rank, howmany_rank, threads, in_align, out_align;
    gk_fftw_iodim dims[GK_MAX_DIMS], howmany[GK_MAX_DIMS];
} plan_key;

typedef struct cached_plan {
    plan_key key;
    void *plan;
    int users;           /* transforms running it now: it is not replaced meanwhile */
    unsigned long used;  /* when it last was taken; 0: the slot is empty */
    bool owned;          /* a plan made when every slot was busy, freed after use */
} cached_plan;

static cached_plan cache[PLAN_CACHE];
static unsigned long cache_clock;
/* FFTW's planner (and destroy_plan) is not thread-safe; execution is. */
static pthread_mutex_t planner = PTHREAD_MUTEX_INITIALIZER;

static void *make_plan(const gk_fftw *fftw, const plan_key *key, void *in, void *out)
{
    if (fftw->threaded)
        fftw->plan_with_nthreads(key->threads);
    switch (key->transform) {
    case GK_FFT_PASS_FORWARD:
    case GK_FFT_PASS_BACKWARD:
        return fftw->plan_dft(key->rank, key->dims, key->howmany_rank, key->howmany, in, out,
                              key->transform == GK_FFT_PASS_FORWARD ? GK_FFTW_FORWARD
                                                                : GK_FFTW_BACKWARD,
                              GK_FFTW_ESTIMATE);
    case GK_FFT_PASS_R2C:
        return fftw->plan_r2c(key->rank, key->dims, key->howmany_rank, key->howmany, in, out,
                              GK_FFTW_ESTIMATE);
    default: /* c2r overwrites its input, which is always ours */
        return fftw->plan_c2r(key->rank, key->dims, key->howmany_rank, key->howmany, in, out,
                              GK_FFTW_ESTIMATE | GK_FFTW_DESTROY_INPUT);
    }
}

/* The plan for key (cached, or made), held until put_plan. */
static gk_status take_plan(const gk_fftw *fftw, const plan_key *key, void *in, void *out,
                           cached_plan **taken)
{
    pthread_mutex_lock(&planner);
    cached_plan *slot = NULL;
    for (int i = 0; i < PLAN_CACHE; i++) {
        if (cache[i].used && memcmp(&cache[i].key, key, sizeof *key) == 0) {
            slot = &cache[i];
            break;
        }
    }
    if (!slot) {
        void *plan = make_plan(fftw, key, in, out);
        if (!plan) {
            pthread_mutex_unlock(&planner);
            return gk_fail(GK_ERR_DRIVER, "fft: FFTW could not plan a transform of rank %d",
                           key->rank);
        }
        /* an empty slot, else the least recently used one not running */
        for (int i = 0; i < PLAN_CACHE; i++)
            if (!cache[i].users && (!slot || cache[i].used < slot->used))
                slot = &cache[i];
        if (slot && slot->used)
            fftw->destroy_plan(slot->plan);
        if (!slot) {
            slot = calloc(1, sizeof *slot);
            if (!slot) {
                fftw->destroy_plan(plan);
                pthread_mutex_unlock(&planner);
                return gk_fail(GK_ERR_OUT_OF_MEMORY, "fft: out of host memory");
            }
            slot->owned = true;
        }
        slot->key = *key;
        slot->plan = plan;
    }
    slot->users++;
    slot->used = ++cache_clock;
    pthread_mutex_unlock(&planner);
    *taken = slot;
    return GK_OK;
}

static void put_plan(const gk_fftw *fftw, cached_plan *slot)
{
    pthread_mutex_lock(&planner);
    slot->users--;
    if (slot->owned) {
        fftw->destroy_plan(slot->plan);
        free(slot);
    }
    pthread_mutex_unlock(&planner);
}

/* a cut or zero-padded to `shape` (the same rank; from the start of each
 * axis), as a contiguous array of `dtype` on `where`: a itself (a new
 * handle) when it already is one and `writable` is false. */
static gk_status prepare_input(const gk_array *a, gk_dtype dtype, const int64_t *shape,
                               bool writable, gk_device where, gk_array **out)
{
    *out = NULL;
    bool same = memcmp(shape, a->shape, sizeof(int64_t) * (size_t)a->ndim) == 0;
    bool there = gk_device_equal(gk_array_device(a), where);
    if (same && !writable && a->dtype == dtype && there && gk_array_is_contiguous(a))
        return gk_array_view(a, out);
    if (same && there) /* a plain copy (a driver's copy on a GPU when dense) */
        return gk_copy_as(a, dtype, out);
    /* the part of a that is kept, then on `where` */
    gk_array *kept = NULL, *host = NULL, *target = NULL;
    gk_status status = gk_array_view(a, &kept);
    for (int i = 0; i < a->ndim && status == GK_OK; i++) {
        if (shape[i] >= a->shape[i])
            continue;
        gk_array *cut = NULL;
        status = gk_slice(kept, i, 0, shape[i], 1, &cut);
        gk_array_free(kept);
        kept = cut;
    }
    if (status == GK_OK)
        status = there ? gk_array_view(kept, &host) : gk_to(kept, where, &host);
    /* into zeros of the padded shape (the kept part's region) */
    if (status == GK_OK)
        status = gk_zeros(where, dtype, a->ndim, shape, out);
    if (status == GK_OK)
        status = gk_array_view(*out, &target);
    for (int i = 0; i < a->ndim && status == GK_OK; i++) {
        if (host->shape[i] == shape[i])
            continue;
        gk_array *part = NULL;
        status = gk_slice(target, i, 0, host->shape[i], 1, &part);
        gk_array_free(target);
        target = part;
    }
    if (status == GK_OK)
        status = gk_assign(target, host);
    gk_array_free(kept);
    gk_array_free(host);
    gk_array_free(target);
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

/* result *= factor in place, on its device (a real factor: the scalar's
 * dtype is the parts' one, so complex64 stays complex64). */
static gk_status scale(gk_array *result, double factor)
{
    if (factor == 1.0)
        return GK_OK;
    gk_array *by = NULL;
    gk_status status = gk_scalar(gk_array_device(result), gk_dtype_component(result->dtype),
                                 factor, &by);
    if (status == GK_OK)
        status = gk_binary_into(GK_MUL, result, by, result);
    gk_array_free(by);
    return status;
}

/* --- one axis at a time --- */

/* FFTW's pass over `rows` rows of `in` into `out` (CPU arrays). */
static gk_status fftw_pass(gk_fft_pass t, bool single, int64_t rows, int64_t n,
                           const gk_array *in, gk_array *out)
{
    const gk_fftw *fftw;
    gk_status status = gk_fftw_open("fft", single, &fftw);
    if (status != GK_OK)
        return status;
    int last = in->ndim - 1;
    plan_key key;
    memset(&key, 0, sizeof key);
    key.transform = t;
    key.single = single;
    key.rank = 1;
    key.dims[0] = (gk_fftw_iodim){n, 1, 1};
    if (rows > 1)
        key.howmany[key.howmany_rank++] =
            (gk_fftw_iodim){rows, in->shape[last], out->shape[last]};
    const gk_openmp *openmp = fftw->threaded ? gk_openmp_open(NULL) : NULL;
    key.threads = openmp && gk_array_size(out) >= THREADED_SIZE ? openmp->max_threads() : 1;
    key.in_align = fftw->alignment_of(gk_array_data(in));
    key.out_align = fftw->alignment_of(gk_array_data(out));
    cached_plan *plan = NULL;
    status = take_plan(fftw, &key, gk_array_data(in), gk_array_data(out), &plan);
    if (status == GK_OK) {
        if (t == GK_FFT_PASS_R2C)
            fftw->execute_r2c(plan->plan, gk_array_data(in), gk_array_data(out));
        else if (t == GK_FFT_PASS_C2R)
            fftw->execute_c2r(plan->plan, gk_array_data(in), gk_array_data(out));
        else
            fftw->execute_dft(plan->plan, gk_array_data(in), gk_array_data(out));
        put_plan(fftw, plan);
    }
    return status;
}

/* The 1-d transform `t` of n points along the last axis of `in` (a
 * contiguous array), batched over the rows before it, into a new
 * contiguous array on in's device: FFTW on the CPU, the backend's FFT
 * library (cuFFT) on a GPU. Every transform reads and writes one
 * contiguous row, both libraries' fastest case. */
static gk_status last_axis_pass(gk_fft_pass t, bool single, const gk_array *in, int64_t n,
                                gk_array **out)
{
    int last = in->ndim - 1;
    int64_t shape[GK_MAX_DIMS];
    memcpy(shape, in->shape, sizeof(int64_t) * (size_t)in->ndim);
    shape[last] = t == GK_FFT_PASS_R2C ? n / 2 + 1 : n;
    gk_dtype real = single ? GK_FLOAT32 : GK_FLOAT64;
    gk_dtype dtype = t == GK_FFT_PASS_C2R ? real : single ? GK_COMPLEX64 : GK_COMPLEX128;
    gk_device device = gk_array_device(in);
    gk_status status = gk_empty(device, dtype, in->ndim, shape, out);
    if (status != GK_OK)
        return status;
    int64_t rows = gk_array_size(*out) / shape[last];
    status = device.kind == GK_DEVICE_CPU
                 ? fftw_pass(t, single, rows, n, in, *out)
                 : gk_array_backend(in)->fft(device, t, single, rows, n, gk_array_data(in),
                                             gk_array_data(*out));
    if (status != GK_OK) {
        gk_array_free(*out);
        *out = NULL;
    }
    return status;
}

/* The pass along any axis of `in` (contiguous): another axis is moved
 * last by a transposing copy (on the CPU threaded and in tiles),
 * transformed there, and moved back. FFTW transforming a strided axis in
 * place of it, with the plans FFTW_ESTIMATE makes, is two to three times
 * slower than the two copies and a contiguous transform. */
static gk_status axis_pass(gk_fft_pass t, bool single, const gk_array *in, int axis,
                           int64_t n, gk_array **out)
{
    *out = NULL;
    int last = in->ndim - 1;
    if (axis == last)
        return last_axis_pass(t, single, in, n, out);
    gk_array *moved = NULL, *rows = NULL, *done = NULL, *back = NULL;
    gk_status status = gk_moveaxis(in, 1, &axis, &last, &moved);
    if (status == GK_OK)
        status = gk_copy(moved, &rows);
    if (status == GK_OK)
        status = last_axis_pass(t, single, rows, n, &done);
    if (status == GK_OK)
        status = gk_moveaxis(done, 1, &last, &axis, &back);
    if (status == GK_OK)
        status = gk_copy(back, out);
    gk_array_free(moved);
    gk_array_free(rows);
    gk_array_free(done);
    gk_array_free(back);
    return status;
}

/* --- gk_fft --- */

const char *gk_fft_kind_name(gk_fft_kind kind)
{
    static const char *const names[] = {"fft", "ifft", "rfft", "irfft", "hfft", "ihfft"};
    return kind >= 0 && kind <= GK_FFT_HERMITIAN_BACKWARD ? names[kind] : "fft";
}

/* backward <-> forward (ortho stays): hfft and ihfft are irfft and rfft of
 * the conjugate with the scaling the other way round. */
static gk_fft_norm swapped(gk_fft_norm norm)
{
    return norm == GK_FFT_NORM_BACKWARD  ? GK_FFT_NORM_FORWARD
           : norm == GK_FFT_NORM_FORWARD ? GK_FFT_NORM_BACKWARD
                                         : norm;
}

/* The checked axes (0 .. ndim-1, all when naxes < 0) into axes_out. */
static gk_status check_axes(const gk_array *a, const char *name, int naxes, const int *axes,
                            int *count, int *axes_out)
{
    if (naxes < 0) {
        *count = a->ndim;
        for (int i = 0; i < a->ndim; i++)
            axes_out[i] = i;
        return GK_OK;
    }
    /* more axes than the array has: one is out of range or repeated,
     * found before axes_out fills */
    bool seen[GK_MAX_DIMS] = {false};
    for (int i = 0; i < naxes; i++) {
        int axis = axes[i] < 0 ? axes[i] + a->ndim : axes[i];
        if (axis < 0 || axis >= a->ndim)
            return gk_fail(GK_ERR_AXIS, "%s: axis %d is out of range for a %d-d array",
                           name, axes[i], a->ndim);
        if (seen[axis])
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: axis %d is listed twice", name,
                           axes[i]);
        seen[axis] = true;
        axes_out[i] = axis;
    }
    *count = naxes;
    return GK_OK;
}

/* hfft and ihfft through irfft and rfft. */
static gk_status hermitian(const gk_array *a, gk_fft_kind kind, int naxes, const int *axes,
                           const int64_t *lengths, gk_fft_norm norm, gk_array **out)
{
    gk_array *conjugate = NULL, *spectrum = NULL;
    gk_status status;
    if (kind == GK_FFT_HERMITIAN_FORWARD) {
        status = gk_dtype_is_complex(a->dtype) ? gk_unary(GK_CONJ, a, &conjugate)
                                               : gk_array_view(a, &conjugate);
        if (status == GK_OK)
            status = gk_fft(conjugate, GK_FFT_REAL_BACKWARD, naxes, axes, lengths,
                            swapped(norm), out);
    } else {
        status = gk_fft(a, GK_FFT_REAL_FORWARD, naxes, axes, lengths, swapped(norm), &spectrum);
        if (status == GK_OK)
            status = gk_unary(GK_CONJ, spectrum, out);
    }
    gk_array_free(conjugate);
    gk_array_free(spectrum);
    if (status != GK_OK && !strstr(gk_last_error(), gk_fft_kind_name(kind)))
        return gk_fail(status, "%s: %s", gk_fft_kind_name(kind), gk_last_error());
    return status;
}

/* The transform on `where` (the CPU, or the array's GPU): the input
 * prepared there, one pass per axis, the norm's scaling. */
static gk_status transform_on(const gk_array *a, gk_device where, gk_fft_kind kind, int count,
                              const int *list, const int64_t *n, const int64_t *in_shape,
                              const int64_t *out_shape, bool single, gk_fft_norm norm,
                              int64_t total, gk_array **out)
{
    *out = NULL;
    bool real_in = kind == GK_FFT_REAL_FORWARD, real_out = kind == GK_FFT_REAL_BACKWARD;
    gk_dtype real = single ? GK_FLOAT32 : GK_FLOAT64;
    gk_dtype complex_dtype = single ? GK_COMPLEX64 : GK_COMPLEX128;
    if (gk_shape_size(a->ndim, out_shape) == 0)
        return gk_empty(where, real_out ? real : complex_dtype, a->ndim, out_shape, out);
    gk_array *result = NULL;
    /* irfft's pass overwrites its input: never the caller's array */
    gk_status status = prepare_input(a, real_in ? real : complex_dtype, in_shape, real_out,
                                     where, &result);
    /* One axis at a time: rfft's halved axis first, irfft's last; the
     * complex ones in between, last listed first. */
    for (int step = 0; step < count && status == GK_OK; step++) {
        int i = real_out ? step : count - 1 - step;
        gk_fft_pass t = real_in && step == 0                ? GK_FFT_PASS_R2C
                        : real_out && step == count - 1     ? GK_FFT_PASS_C2R
                        : kind == GK_FFT_FORWARD || real_in ? GK_FFT_PASS_FORWARD
                                                            : GK_FFT_PASS_BACKWARD;
        gk_array *next = NULL;
        status = axis_pass(t, single, result, list[i], n[i], &next);
        gk_array_free(result);
        result = next;
    }
    /* the libraries compute unnormalized sums both ways */
    bool inverse = kind == GK_FFT_BACKWARD || kind == GK_FFT_REAL_BACKWARD;
    double factor = norm == GK_FFT_NORM_ORTHO ? 1.0 / sqrt((double)total)
                    : (norm == GK_FFT_NORM_BACKWARD) == inverse ? 1.0 / (double)total
                                                                : 1.0;
    if (status == GK_OK)
        status = scale(result, factor);
    if (status == GK_OK)
        *out = result;
    else
        gk_array_free(result);
    return status;
}

gk_status gk_fft(const gk_array *a, gk_fft_kind kind, int naxes, const int *axes,
                 const int64_t *lengths, gk_fft_norm norm, gk_array **out)
{
    *out = NULL;
    const char *name = gk_fft_kind_name(kind);
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the array is NULL", name);
    if (kind < GK_FFT_FORWARD || kind > GK_FFT_HERMITIAN_BACKWARD)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "fft: unknown kind %d", (int)kind);
    if (norm < GK_FFT_NORM_BACKWARD || norm > GK_FFT_NORM_FORWARD)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: unknown norm %d", name, (int)norm);
    if (kind == GK_FFT_HERMITIAN_FORWARD || kind == GK_FFT_HERMITIAN_BACKWARD)
        return hermitian(a, kind, naxes, axes, lengths, norm, out);
    int count, list[GK_MAX_DIMS];
    gk_status status = check_axes(a, name, naxes, axes, &count, list);
    if (status != GK_OK)
        return status;
    if (count == 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: no axes to transform", name);
    bool real_in = kind == GK_FFT_REAL_FORWARD, real_out = kind == GK_FFT_REAL_BACKWARD;
    if (real_in && gk_dtype_is_complex(a->dtype))
        return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                       "%s: takes real input, not %s (use fft for complex input)", name,
                       gk_dtype_name(a->dtype));
    /* precision: single for the 32- and 16-bit floats, double otherwise */
    bool single = a->dtype == GK_FLOAT32 || a->dtype == GK_COMPLEX64 ||
                  gk_dtype_is_half(a->dtype);
    /* the logical lengths n, and the shapes in and out */
    int64_t in_shape[GK_MAX_DIMS], out_shape[GK_MAX_DIMS], total = 1;
    memcpy(in_shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
    memcpy(out_shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
    int64_t n[GK_MAX_DIMS];
    for (int i = 0; i < count; i++) {
        int axis = list[i];
        bool halved = i == count - 1 && (real_in || real_out);
        int64_t given = lengths ? lengths[i] : 0;
        n[i] = given != 0 ? given : real_out && halved ? 2 * (a->shape[axis] - 1) : a->shape[axis];
        if (n[i] < 1) {
            char shape[160];
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "%s: %lld points along axis %d of %s: a transform needs at least one",
                           name, (long long)n[i], axis,
                           gk_shape_text(a->ndim, a->shape, shape, sizeof shape));
        }
        in_shape[axis] = real_out && halved ? n[i] / 2 + 1 : n[i];
        out_shape[axis] = real_in && halved ? n[i] / 2 + 1 : n[i];
        if (total > INT64_MAX / n[i])
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: the transform has too many points", name);
        total *= n[i];
    }
    /* on the array's GPU when it has an FFT library (asking it for no
     * transforms loads the library), else on the host */
    gk_device device = gk_array_device(a), where = gk_device_cpu();
    const gk_backend *backend = gk_array_backend(a);
    if (device.kind != GK_DEVICE_CPU && backend->fft &&
        backend->fft(device, GK_FFT_PASS_FORWARD, single, 0, 1, NULL, NULL) == GK_OK)
        where = device;
    gk_array *result = NULL;
    status = transform_on(a, where, kind, count, list, n, in_shape, out_shape, single, norm,
                          total, &result);
    if (status == GK_OK && !gk_device_equal(gk_array_device(result), device))
        status = gk_to(result, device, out);
    else if (status == GK_OK)
        *out = result, result = NULL;
    gk_array_free(result);
    if (status != GK_OK && !strstr(gk_last_error(), name))
        return gk_fail(status, "%s: %s", name, gk_last_error());
    return status;
}

/* --- frequencies and shifts --- */

gk_status gk_fftfreq(gk_device device, gk_dtype dtype, int64_t n, double d, bool real,
                     gk_array **out)
{
    *out = NULL;
    const char *name = real ? "rfftfreq" : "fftfreq";
    if (n < 1)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: n is %lld; it must be at least 1", name,
                       (long long)n);
    if (!gk_dtype_is_float(dtype))
        return gk_fail(GK_ERR_UNSUPPORTED_DTYPE, "%s: the dtype must be real floating, not %s",
                       name, gk_dtype_name(dtype));
    /* 0, 1, ..., then (fftfreq) the negative frequencies -(n/2), ..., -1;
     * all over d * n, computed in double precision in a host array (whose
     * making refuses a length beyond memory), then moved and converted */
    int64_t count = real ? n / 2 + 1 : n;
    gk_array *wide = NULL, *moved = NULL;
    gk_status status = gk_empty(gk_device_cpu(), GK_FLOAT64, 1, &count, &wide);
    if (status != GK_OK)
        return gk_fail(status, "%s: %lld points: %s", name, (long long)n, gk_last_error());
    double *values = gk_array_data(wide);
    for (int64_t i = 0; i < count; i++) {
        int64_t k = i < (n + 1) / 2 || real ? i : i - n;
        values[i] = (double)k / (d * (double)n);
    }
    status = gk_to(wide, device, &moved);
    if (status == GK_OK)
        status = dtype == GK_FLOAT64 ? gk_array_view(moved, out) : gk_copy_as(moved, dtype, out);
    gk_array_free(wide);
    gk_array_free(moved);
    return status;
}

gk_status gk_fftshift(const gk_array *a, int naxes, const int *axes, bool inverse,
                      gk_array **out)
{
    *out = NULL;
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "fftshift: the array is NULL");
    const char *name = inverse ? "ifftshift" : "fftshift";
    int count, list[GK_MAX_DIMS];
    gk_status status = check_axes(a, name, naxes, axes, &count, list);
    if (status != GK_OK)
        return status;
    if (count == 0)
        return gk_copy(a, out);
    /* zero frequency to the middle: a roll by half of each axis, rounded
     * down, and back by the other half for the inverse */
    int64_t shifts[GK_MAX_DIMS];
    for (int i = 0; i < count; i++) {
        int64_t length = a->shape[list[i]];
        shifts[i] = inverse ? -(length / 2) : length / 2;
    }
    return gk_roll(a, count, shifts, list, out);
}
