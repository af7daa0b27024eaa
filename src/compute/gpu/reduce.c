/* Reductions and scans (cumulative sums and products) on GPUs: the host
 * side of kernels/reduce.gk and kernels/scan.gk, with the CPU backend's semantics
 * (backends/cpu/reduce.c): the same output dtypes, 64-bit wrapping sums
 * and products of integers, float products in order, NaN rules, first
 * occurrences for argmin/argmax, two-pass var/std divided by
 * max(n - ddof, 0).
 *
 * The plan of a reduction (reduce.gk explains the kernels). Each output
 * reduces a row of `count` elements. The row is cut into pieces, each
 * reduced by a team of `width` work-items, lane by lane in element order
 * and then by a tree; the pieces' partials go through the same again until
 * one is left per row. Both choices depend on the row's length alone
 * (plan_row), so a row gives bit-identical results whichever layout it has
 * and however many rows are reduced with it:
 * - short rows (up to LANE_ELEMENTS per lane of a whole group): one piece,
 *   and teams just wide enough that each lane takes up to LANE_ELEMENTS
 *   elements, so many outputs give many teams (a team per output, a
 *   work-item per output for rows of up to LANE_ELEMENTS), and the outputs
 *   of a column reduction read side by side;
 * - long rows: teams of a whole group, pieces of 64 elements per lane for
 *   rows of up to 16 such pieces, else of 8 to 64 with enough pieces that
 *   one long row (the sum of a big array) fills the device; the partials
 *   then make short rows for the next level.
 * Lanes read strided by the team's width, so contiguous rows are read
 * coalesced; rows side by side in memory (a reduction along a leading
 * axis of a C-order array) go through the _cols kernels, which give each
 * row the same operations while a warp's loads cover neighbouring rows
 * (run_class). var/std make two passes: the means, then the squared
 * deviations from them.
 *
 * Float sums add up to 64 elements per lane in the float type and the rest
 * in double (where the device has it): the sum of 10^8 float32 ones is
 * exact. Means, variances and standard deviations of integers are float64:
 * devices without fp64 refuse them, as every float64 array, with a message
 * (float32 variances are then computed in float32). */
#include "compute/gpu/gpu.h"

#include "core/error.h"

#include <stdio.h>
#include <string.h>

/* Elements per lane below which a row is one piece; the lanes' share of a
 * long row's piece (8 to 64); the pieces a long row is cut into at least,
 * when it is long enough (so that one row fills a GPU); the pieces of 64
 * a lane below that (see plan_row); float products' chunk (the CPU's, so
 * that results agree bit for bit). */
enum {
    LANE_ELEMENTS = 16,
    PIECE_LANE_MIN = 8,
    PIECE_LANE_MAX = 64,
    LONG_ROW_PIECES = 1024,
    FEW_PIECES = 16,
    PROD_CHUNK = 65536,
};

/* The most work-groups one launch asks for (kernels loop over the rest);
 * the rows a _cols work-group takes (reduce.gk's GK_RED_COLS, and
 * GK_RED_ARG_COLS for argmin and argmax). */
enum { MAX_GROUPS = 1 << 20, COLS = 8, ARG_COLS = 32 };

/* What the last level of a reduction does (reduce.gk's GK_FINISH_*). */
enum { FINISH_PART = 0, FINISH_STORE, FINISH_MEAN, FINISH_MEANS, FINISH_VAR, FINISH_STD };

static const char *const op_names[GK_REDUCTION_COUNT] = {
    [GK_SUM] = "sum",       [GK_MEAN] = "mean",     [GK_PROD] = "prod",
    [GK_MIN] = "min",       [GK_MAX] = "max",       [GK_ARGMIN] = "argmin",
    [GK_ARGMAX] = "argmax", [GK_VAR] = "var",       [GK_STD] = "std",
};

/* --- shared helpers --- */

static int64_t outputs_of(const gk_loop *outer)
{
    int64_t n = 1;
    for (int i = 0; i < outer->ndim; i++)
        n *= outer->shape[i];
    return n;
}

/* The device's facts, and its refusal of float64 work without fp64.
 * `needs_fp64`: the op computes or returns float64. */
static gk_status check_device(gk_device device, const char *what, gk_dtype dtype, bool needs_fp64,
                              const gk_gpu_info **info)
{
    gk_status status = gk_gpu_info_of(device, info);
    if (status != GK_OK)
        return status;
    if (needs_fp64 && !(*info)->fp64) {
        char name[GK_DEVICE_NAME_MAX];
        gk_device_name(device, name, sizeof name);
        if (dtype == GK_FLOAT64)
            return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                           "%s: %s does not support float64 (no cl_khr_fp64): use float32 "
                           "arrays there, or another device",
                           what, name);
        return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                       "%s of %s gives float64, which %s does not support (no cl_khr_fp64): "
                       "cast to float32 first (gk_cast), or use another device",
                       what, gk_dtype_name(dtype), name);
    }
    return GK_OK;
}

/* A dtype whose element size is `size` (1, 2, 4 or 8), to pass a
 * temporary buffer of that element size to gk_gpu_arg_array (which turns
 * its byte offset into elements of that size). */
static gk_dtype dtype_of_size(size_t size)
{
    return size == 1 ? GK_UINT8 : size == 2 ? GK_UINT16 : size == 4 ? GK_UINT32 : GK_UINT64;
}

/* A temporary of `count` elements of `size` bytes. */
static gk_status temporary(gk_device device, int64_t count, size_t size, char **data)
{
    void *p;
    gk_status status = gk_gpu_alloc(device, (size_t)count * size, &p);
    *data = status == GK_OK ? p : NULL;
    return status;
}

static void release(gk_device device, char *data, int64_t count, size_t size)
{
    if (data)
        gk_gpu_release(device, data, (size_t)count * size);
}

static size_t clamp_groups(int64_t groups)
{
    return (size_t)(groups < 1 ? 1 : groups > MAX_GROUPS ? MAX_GROUPS : groups);
}

/* --- reductions --- */

typedef struct plan {
    int64_t width;      /* work-items per piece (a power of two) */
    int64_t piece_size; /* elements per piece */
    int64_t pieces;     /* per row */
} plan;

/* How a row of `length` elements is cut: a function of the length and the
 * group size alone (see the top of this file). */
static plan plan_row(int64_t length, int64_t group)
{
    plan p = {1, length > 0 ? length : 1, 1};
    if (length <= LANE_ELEMENTS * group) {
        while (p.width < group && p.width * LANE_ELEMENTS < length)
            p.width *= 2;
        return p;
    }
    /* Up to FEW_PIECES pieces of PIECE_LANE_MAX a lane (a row of at most
     * 1 MiB of float32: launches cost more than filling the device would
     * save), else pieces of PIECE_LANE_MIN and more a lane, as long as
     * there are LONG_ROW_PIECES of them. */
    int64_t per_lane = PIECE_LANE_MIN;
    if (length <= group * PIECE_LANE_MAX * FEW_PIECES)
        per_lane = PIECE_LANE_MAX;
    while (per_lane < PIECE_LANE_MAX && length / (group * per_lane * 2) >= LONG_ROW_PIECES)
        per_lane *= 2;
    p.width = group;
    p.piece_size = group * per_lane;
    p.pieces = (length + p.piece_size - 1) / p.piece_size;
    return p;
}

/* One reduction's fixed facts. */
typedef struct job {
    gk_device device;
    const gk_gpu_info *info;
    const gk_loop *outer;
    const gk_operand *out, *in;
    int64_t outputs, count, stride, divisor;
    int64_t group; /* the work-group size: a power of two, <= 256 */
} job;

/* The kernel class's partial size in bytes (reduce.gk's S). */
static size_t state_size(const job *j, const char *kernel_class)
{
    gk_dtype t = j->in->dtype;
    bool is_float = gk_dtype_is_float(t);
    if (!strcmp(kernel_class, "minimum") || !strcmp(kernel_class, "maximum") ||
        !strcmp(kernel_class, "argmin") || !strcmp(kernel_class, "argmax"))
        return gk_dtype_size(t);
    if (is_float && t == GK_FLOAT32 && !j->info->fp64)
        return 4; /* sum and sqdev of float32 stay float32 without double */
    return 8;     /* gk_u64 or double */
}

static bool is_arg(const char *kernel_class)
{
    return !strcmp(kernel_class, "argmin") || !strcmp(kernel_class, "argmax");
}

/* One kernel of a class over a level. */
typedef struct level {
    const char *suffix; /* "rows", "cols" or "parts" */
    char *src, *src_index;
    char *part, *part_index;
    char *means;
    int64_t length;
    plan p;
    int finish;
} level;

static gk_status launch_level(const job *j, const char *kernel_class, size_t size,
                              const level *v)
{
    char kernel[32];
    snprintf(kernel, sizeof kernel, "%s_%s", kernel_class, v->suffix);
    gk_dtype state = dtype_of_size(size);
    char *any = j->out->data; /* for the buffers a kernel does not use */
    gk_gpu_launch launch;
    gk_gpu_launch_begin(&launch, j->device);
    const gk_operand operands[2] = {*j->out, *j->in};
    gk_gpu_arg_loop(&launch, j->outer, operands, 2);
    gk_gpu_arg_array(&launch, v->src ? v->src : any, state);
    gk_gpu_arg_array(&launch, v->src_index ? v->src_index : any, GK_INT64);
    gk_gpu_arg_array(&launch, v->part ? v->part : any, state);
    gk_gpu_arg_array(&launch, v->part_index ? v->part_index : any, GK_INT64);
    gk_gpu_arg_array(&launch, v->means ? v->means : any, state);
    gk_gpu_arg_i64(&launch, j->count);
    gk_gpu_arg_i64(&launch, j->stride);
    gk_gpu_arg_i64(&launch, v->length);
    gk_gpu_arg_i64(&launch, v->p.width);
    gk_gpu_arg_i64(&launch, v->p.piece_size);
    gk_gpu_arg_i64(&launch, v->p.pieces);
    gk_gpu_arg_i64(&launch, v->finish);
    gk_gpu_arg_i64(&launch, j->divisor);
    /* _rows and _parts: a team of width work-items per piece of a row;
     * _cols: a work-group per piece of COLS rows. */
    int64_t teams = j->group / v->p.width, tasks = j->outputs * v->p.pieces;
    if (!strcmp(v->suffix, "cols")) {
        int64_t cols = is_arg(kernel_class) ? ARG_COLS : COLS;
        teams = 1;
        tasks = (j->outputs + cols - 1) / cols * v->p.pieces;
    }
    size_t groups[3] = {clamp_groups((tasks + teams - 1) / teams), 1, 1};
    size_t local[3] = {(size_t)j->group, 1, 1};
    return gk_gpu_run_groups(&launch, "reduce", j->in->dtype, kernel, groups, local);
}

/* Whether neighbouring outputs read neighbouring elements (a reduction
 * along a leading axis of a C-order array): the last outer axis that is
 * not 1 has an input stride of 1. */
static bool columns_side_by_side(const job *j)
{
    for (int i = j->outer->ndim - 1; i >= 0; i--)
        if (j->outer->shape[i] > 1)
            return j->in->strides[i] == 1 && j->stride != 1;
    return false;
}

/* Reduces every row with the kernels of `kernel_class`, level after level,
 * finishing with `finish` (`means`: var's means, written or read). Rows
 * side by side in memory are read by the _cols kernels: COLS rows a
 * work-group, each row's lanes spread over its work-items, so that every
 * load of a warp covers COLS neighbouring elements; a row gets exactly the
 * operations the _rows kernels give it. argmin and argmax take ARG_COLS
 * rows (a whole 128-byte line of float32 a load: with 8, they read 0.70
 * TB/s on an H100), each row's element grouped differently, which their
 * order-free result allows; they need a group of at least 2 * ARG_COLS,
 * and a quarter of ARG_COLS rows to keep most work-items busy. */
static gk_status run_class(const job *j, const char *kernel_class, bool with_index, int finish,
                           char *means)
{
    size_t size = state_size(j, kernel_class);
    level v = {.suffix = "rows", .means = means, .length = j->count,
               .p = plan_row(j->count, j->group)};
    size_t local_bytes = size + (with_index ? 8 : 0); /* a value, and argmin's index */
    bool fits = with_index ? j->group >= 2 * ARG_COLS && j->outputs >= ARG_COLS / 4 &&
                                 j->info->max_local_bytes >= (uint64_t)j->group * local_bytes
                           : j->info->max_local_bytes >= (uint64_t)j->group * COLS * local_bytes;
    if (v.p.width > 1 && j->outputs > 1 && columns_side_by_side(j) && fits)
        v.suffix = "cols";
    int64_t src_count = 0; /* elements of v.src, to release it */
    gk_status status = GK_OK;
    for (;;) {
        bool last = v.p.pieces == 1;
        int64_t parts = j->outputs * v.p.pieces;
        v.part = v.part_index = NULL;
        v.finish = last ? finish : FINISH_PART;
        if (!last) {
            status = temporary(j->device, parts, size, &v.part);
            if (status == GK_OK && with_index)
                status = temporary(j->device, parts, 8, &v.part_index);
        }
        if (status == GK_OK)
            status = launch_level(j, kernel_class, size, &v);
        /* Work runs in order on the device's stream: the sources may go
         * back to the pool as soon as their reader is queued. */
        release(j->device, v.src, src_count, size);
        release(j->device, v.src_index, src_count, 8);
        if (status != GK_OK || last) {
            if (status != GK_OK) {
                release(j->device, v.part, parts, size);
                release(j->device, v.part_index, parts, 8);
            }
            return status;
        }
        v.suffix = "parts";
        v.src = v.part;
        v.src_index = v.part_index;
        src_count = parts;
        v.length = v.p.pieces;
        v.p = plan_row(v.length, j->group);
    }
}

/* Float products, in order per chunk of PROD_CHUNK as the CPU multiplies. */
static gk_status float_product(const job *j)
{
    int64_t chunks = j->count > 0 ? (j->count + PROD_CHUNK - 1) / PROD_CHUNK : 1;
    size_t size = j->info->fp64 ? 8 : gk_dtype_size(j->in->dtype);
    char *part = NULL;
    gk_status status = GK_OK;
    if (chunks > 1)
        status = temporary(j->device, j->outputs * chunks, size, &part);
    const char *kernels[2] = {"fprod_chunks", "fprod_combine"};
    for (int k = 0; k < (chunks > 1 ? 2 : 1) && status == GK_OK; k++) {
        gk_gpu_launch launch;
        gk_gpu_launch_begin(&launch, j->device);
        const gk_operand operands[2] = {*j->out, *j->in};
        gk_gpu_arg_loop(&launch, j->outer, operands, 2);
        gk_gpu_arg_array(&launch, part ? part : j->out->data, dtype_of_size(size));
        gk_gpu_arg_i64(&launch, j->count);
        gk_gpu_arg_i64(&launch, j->stride);
        gk_gpu_arg_i64(&launch, chunks);
        status = gk_gpu_run_items(&launch, "reduce", j->in->dtype, kernels[k],
                                  k == 0 ? j->outputs * chunks : j->outputs);
    }
    release(j->device, part, j->outputs * chunks, size);
    return status;
}

gk_status gpu_reduce(gk_device device, gk_reduction op, const gk_loop *outer,
                     const gk_operand *out, const gk_operand *in, int64_t count, int64_t stride,
                     int64_t ddof)
{
    if ((unsigned)op >= GK_REDUCTION_COUNT || (unsigned)in->dtype >= GK_DTYPE_COUNT)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "reduce: invalid operation %d or dtype %d",
                       (int)op, (int)in->dtype);
    gk_status refused = gk_gpu_refuse_half(op_names[op], in->dtype);
    if (refused != GK_OK)
        return refused;
    bool is_float = gk_dtype_is_float(in->dtype);
    bool moments = op == GK_MEAN || op == GK_VAR || op == GK_STD;
    const gk_gpu_info *info;
    gk_status status = check_device(device, op_names[op], in->dtype,
                                    in->dtype == GK_FLOAT64 || (moments && !is_float), &info);
    if (status != GK_OK)
        return status;
    bool arg = op == GK_ARGMIN || op == GK_ARGMAX;
    if (count == 0 && (op == GK_MIN || op == GK_MAX || arg))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s: zero-size array to a reduction with no identity", op_names[op]);
    job j = {
        .device = device,
        .info = info,
        .outer = outer,
        .out = out,
        .in = in,
        .outputs = outputs_of(outer),
        .count = count,
        .stride = stride,
        .divisor = count - ddof > 0 ? count - ddof : 0,
        .group = (int64_t)gk_gpu_group_size(device),
    };
    if (j.outputs == 0)
        return GK_OK;
    if (j.group > 256)
        j.group = 256; /* the kernels' local arrays */

    const char *first = is_float ? "sum" : "dsum"; /* mean and var's first pass */
    switch (op) {
    case GK_SUM: return run_class(&j, "sum", false, FINISH_STORE, NULL);
    case GK_MEAN: return run_class(&j, first, false, FINISH_MEAN, NULL);
    case GK_PROD:
        return is_float ? float_product(&j) : run_class(&j, "prod", false, FINISH_STORE, NULL);
    case GK_MIN: return run_class(&j, "minimum", false, FINISH_STORE, NULL);
    case GK_MAX: return run_class(&j, "maximum", false, FINISH_STORE, NULL);
    case GK_ARGMIN: return run_class(&j, "argmin", true, FINISH_STORE, NULL);
    case GK_ARGMAX: return run_class(&j, "argmax", true, FINISH_STORE, NULL);
    case GK_VAR:
    case GK_STD: {
        /* Two passes: the means, then the squared deviations from them. */
        size_t size = state_size(&j, first);
        char *means;
        status = temporary(device, j.outputs, size, &means);
        if (status == GK_OK)
            status = run_class(&j, first, false, FINISH_MEANS, means);
        if (status == GK_OK)
            status = run_class(&j, "sqdev", false, op == GK_STD ? FINISH_STD : FINISH_VAR, means);
        release(device, means, j.outputs, size);
        return status;
    }
    default: return GK_OK;
    }
}

/* --- scans: cumulative sums and products --- */

/* Rows up to SHORT_SCAN elements are scanned a work-item each; so are
 * strided rows when there are at least MANY_ROWS of them (neighbouring
 * rows then sit side by side in memory). Otherwise a work-group per row,
 * and rows are cut into pieces of whole blocks (at least MIN_PIECE_BLOCKS)
 * when there are too few rows for GROUPS_PER_UNIT groups per compute unit.
 * SCAN_PER_ITEM is scan.gk's GK_SCAN_PER_ITEM. */
enum { SHORT_SCAN = 16, MANY_ROWS = 8192, GROUPS_PER_UNIT = 8, MIN_PIECE_BLOCKS = 4,
       SCAN_PER_ITEM = 8 };

/* Starts a scan launch: out, in, loop, and whether it multiplies. */
static void scan_begin(gk_gpu_launch *launch, gk_device device, gk_reduction op,
                       const gk_loop *outer, const gk_operand *out, const gk_operand *in)
{
    gk_gpu_launch_begin(launch, device);
    const gk_operand operands[2] = {*out, *in};
    gk_gpu_arg_loop(launch, outer, operands, 2);
    gk_gpu_arg_i64(launch, op == GK_PROD);
}

gk_status gpu_scan(gk_device device, gk_reduction op, const gk_loop *outer,
                   const gk_operand *out, const gk_operand *in, int64_t count,
                   int64_t in_stride, int64_t out_stride)
{
    if ((unsigned)in->dtype >= GK_DTYPE_COUNT)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "scan: invalid dtype %d", (int)in->dtype);
    if (op != GK_SUM && op != GK_PROD)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "scan: %d is neither sum nor prod", (int)op);
    const char *name = op == GK_SUM ? "cumsum" : "cumprod";
    gk_status refused = gk_gpu_refuse_half(name, in->dtype);
    if (refused != GK_OK)
        return refused;
    const gk_gpu_info *info;
    gk_status status = check_device(device, name, in->dtype, in->dtype == GK_FLOAT64, &info);
    if (status != GK_OK)
        return status;
    int64_t rows = outputs_of(outer);
    if (rows == 0 || count == 0)
        return GK_OK;
    gk_gpu_launch launch;
    if (count <= SHORT_SCAN || (in_stride != 1 && rows >= MANY_ROWS)) {
        scan_begin(&launch, device, op, outer, out, in);
        gk_gpu_arg_i64(&launch, count);
        gk_gpu_arg_i64(&launch, in_stride);
        gk_gpu_arg_i64(&launch, out_stride);
        return gk_gpu_run_items(&launch, "scan", in->dtype, "scan_items", rows);
    }

    int64_t group = (int64_t)gk_gpu_group_size(device);
    if (group > 256)
        group = 256;
    int64_t block = group * SCAN_PER_ITEM;
    int64_t want = (int64_t)(info->compute_units > 0 ? info->compute_units : 1) * GROUPS_PER_UNIT;
    int64_t piece_size = count, pieces = 1;
    if (rows < want && count > MIN_PIECE_BLOCKS * block) {
        int64_t per_row = (want + rows - 1) / rows;
        piece_size = (count + per_row - 1) / per_row;
        piece_size = (piece_size + block - 1) / block * block;
        if (piece_size < MIN_PIECE_BLOCKS * block)
            piece_size = MIN_PIECE_BLOCKS * block;
        pieces = (count + piece_size - 1) / piece_size;
    }
    int64_t tasks = rows * pieces;
    size_t groups[3] = {clamp_groups(tasks), 1, 1}, local[3] = {(size_t)group, 1, 1};
    size_t acc_size = gk_dtype_is_float(in->dtype) ? gk_dtype_size(in->dtype) : 8;
    gk_dtype acc_dtype = dtype_of_size(acc_size);
    char *carries = NULL;
    if (pieces > 1) {
        /* Each piece's total, then per row their exclusive scan: the value
         * each piece starts from. */
        status = temporary(device, tasks, acc_size, &carries);
        if (status == GK_OK) {
            scan_begin(&launch, device, op, outer, out, in);
            gk_gpu_arg_array(&launch, carries, acc_dtype);
            gk_gpu_arg_i64(&launch, count);
            gk_gpu_arg_i64(&launch, in_stride);
            gk_gpu_arg_i64(&launch, piece_size);
            gk_gpu_arg_i64(&launch, pieces);
            status = gk_gpu_run_groups(&launch, "scan", in->dtype, "scan_totals", groups, local);
        }
        if (status == GK_OK) {
            gk_gpu_launch_begin(&launch, device);
            gk_gpu_arg_array(&launch, carries, acc_dtype);
            gk_gpu_arg_i64(&launch, op == GK_PROD);
            gk_gpu_arg_i64(&launch, rows);
            gk_gpu_arg_i64(&launch, pieces);
            status = gk_gpu_run_items(&launch, "scan", in->dtype, "scan_carries", rows);
        }
    }
    if (status == GK_OK) {
        scan_begin(&launch, device, op, outer, out, in);
        gk_gpu_arg_array(&launch, carries ? carries : out->data, acc_dtype);
        gk_gpu_arg_i64(&launch, carries != NULL);
        gk_gpu_arg_i64(&launch, count);
        gk_gpu_arg_i64(&launch, in_stride);
        gk_gpu_arg_i64(&launch, out_stride);
        gk_gpu_arg_i64(&launch, piece_size);
        gk_gpu_arg_i64(&launch, pieces);
        status = gk_gpu_run_groups(&launch, "scan", in->dtype, "scan_blocks", groups, local);
    }
    release(device, carries, tasks, acc_size);
    return status;
}
