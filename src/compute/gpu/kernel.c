/* User kernels (include/gpukit/kernel.h): raw kernels with an explicit
 * launch size, elementwise kernels generated from typed parameter lists and
 * a body, and user streams. Everything here sits on the shared GPU layer
 * (gpu.h): gk_gpu_program compiles and caches (memory, then disk), the
 * driver finds functions and runs them, so this file only validates, turns
 * gk_arg values into driver arguments and keeps streams ordered with the
 * device's own stream.
 *
 * Kernels for the cpu device run on the OpenCL driver for the CPU
 * (gk_gpu_host_device: PoCL), which turns work-groups into vectorised
 * loops around the barriers and spreads groups over the cores. The cpu
 * device's memory is lent to it for the launch (driver lend_host, no copy)
 * and returned when the kernel is done, so a launch there is synchronous,
 * like every cpu op. */
#include "compute/array_impl.h"
#include "compute/gpu/cache.h"
#include "compute/gpu/gpu.h"

#include "core/error.h"

#include <gpukit/kernel.h>

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest parameter or kernel name, NUL included. */
#define NAME_SIZE 64

struct gk_stream {
    gk_device device;  /* as the user named it */
    gk_device runs_on; /* the device the handle belongs to */
    gk_gpu_stream *handle;
};

/* One typed name of an elementwise kernel. */
typedef struct param {
    char name[NAME_SIZE];
    gk_dtype dtype;
} param;

struct gk_kernel {
    gk_device device;  /* where its arrays live */
    gk_device runs_on; /* where its code runs: the device, or for cpu the host's OpenCL device */
    gk_gpu_function *function;
    char name[NAME_SIZE];
    /* Elementwise kernels only: the outputs, then the inputs, in the order
     * of their buffer parameters and of their gk_kloop operands. */
    bool elementwise;
    int out_count, in_count;
    param params[GK_KLOOP_OPERANDS];
};

/* ---- devices ------------------------------------------------------------ */

/* The device a kernel for `device` runs on (itself, or for cpu the host's
 * OpenCL device), with its facts. */
static gk_status kernel_device(gk_device device, const char *what, gk_device *runs_on,
                               const gk_gpu_info **info)
{
    *runs_on = device;
    if (device.kind == GK_DEVICE_CPU) {
        gk_status status = gk_gpu_host_device(runs_on);
        if (status != GK_OK)
            return gk_fail(status, "%s: %s", what, gk_last_error());
    } else if (device.kind != GK_DEVICE_CUDA && device.kind != GK_DEVICE_OPENCL) {
        char name[GK_DEVICE_NAME_MAX];
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: %s is not a device kernels can run on",
                       what, gk_device_name(device, name, sizeof name));
    }
    return gk_gpu_info_of(*runs_on, info);
}

/* The array is on the kernel's device; `what` names the argument. */
static gk_status same_device(const gk_array *a, gk_device device, const char *what)
{
    if (gk_device_equal(a->buffer->device, device))
        return GK_OK;
    char have[GK_DEVICE_NAME_MAX], want[GK_DEVICE_NAME_MAX];
    return gk_fail(GK_ERR_INVALID_ARGUMENT,
                   "%s is on %s but the kernel was compiled for %s; move it there (x.to(device) "
                   "in Python, gk_to() in C) or compile the kernel for %s",
                   what, gk_device_name(a->buffer->device, have, sizeof have),
                   gk_device_name(device, want, sizeof want), have);
}

/* The stream (NULL: the device's) belongs to the kernel's device. */
static gk_status stream_of(const gk_stream *stream, gk_device device, gk_gpu_stream **handle)
{
    *handle = NULL;
    if (!stream)
        return GK_OK;
    if (!gk_device_equal(stream->device, device)) {
        char have[GK_DEVICE_NAME_MAX], want[GK_DEVICE_NAME_MAX];
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "the stream belongs to %s but the kernel runs on %s; create a stream on "
                       "%s with gk_stream_create()",
                       gk_device_name(stream->device, have, sizeof have),
                       gk_device_name(device, want, sizeof want), want);
    }
    *handle = stream->handle;
    return GK_OK;
}

/* ---- the cpu device's memory, lent to the device that runs its kernels -- */

typedef struct host_loans {
    int count;
    char *address[GK_GPU_MAX_ARGS];
} host_loans;

/* `bytes` of host memory at `host` as an address on `runs_on`. */
static gk_status lend(gk_device runs_on, host_loans *loans, void *host, size_t bytes, char **address)
{
    gk_status status = gk_gpu_driver_of(runs_on)->lend_host(runs_on, host, bytes, address);
    if (status == GK_OK)
        loans->address[loans->count++] = *address;
    return status;
}

/* An operand of array `a` addressing host memory lent to `runs_on`: the
 * whole allocation, so the loop's offsets stay what they were. */
static gk_status lend_operand(gk_device runs_on, host_loans *loans, const gk_array *a,
                              gk_operand *operand)
{
    char *address;
    gk_status status = lend(runs_on, loans, a->buffer->data, a->buffer->bytes, &address);
    if (status == GK_OK)
        operand->data = address + (operand->data - (char *)a->buffer->data);
    return status;
}

/* Ends every loan, waiting for the work that uses them. */
static gk_status return_loans(gk_device runs_on, host_loans *loans, gk_status status)
{
    for (int k = 0; k < loans->count; k++) {
        gk_status returned = gk_gpu_driver_of(runs_on)->return_host(runs_on, loans->address[k]);
        if (status == GK_OK)
            status = returned;
    }
    loans->count = 0;
    return status;
}

/* Runs a prepared launch on `stream`. A user stream first waits for the
 * work queued so far on the device's stream (the array ops that made the
 * inputs), and the device's stream then waits for the launch (array ops
 * that read the results, or free and reuse the memory): kernel.h's promise
 * that arrays stay consistent whatever stream a kernel runs on. */
static gk_status run(gk_gpu_launch *launch, gk_gpu_function *function, const size_t groups[3],
                     const size_t local[3], gk_gpu_stream *stream)
{
    const gk_gpu_driver *driver = gk_gpu_driver_of(launch->device);
    gk_status status = GK_OK;
    if (stream)
        status = driver->stream_order(launch->device, stream, NULL);
    if (status == GK_OK)
        status = gk_gpu_run_function(launch, function, groups, local, stream);
    if (status == GK_OK && stream) {
        status = driver->stream_order(launch->device, NULL, stream);
        /* unordered, the callers' frees could hand the kernel's memory to
         * the next op while it runs: the host waits for it instead */
        if (status != GK_OK)
            driver->stream_synchronize(launch->device, stream);
    }
    return status;
}

/* ---- streams ------------------------------------------------------------ */

gk_status gk_stream_create(gk_device device, gk_stream **out)
{
    if (!out)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "stream_create: the output pointer is NULL");
    *out = NULL;
    const gk_gpu_info *info;
    gk_device runs_on;
    gk_status status = kernel_device(device, "stream_create", &runs_on, &info);
    if (status != GK_OK)
        return status;
    gk_stream *stream = calloc(1, sizeof *stream);
    if (!stream)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "stream_create: out of memory");
    stream->device = device;
    stream->runs_on = runs_on;
    status = gk_gpu_driver_of(runs_on)->stream_create(runs_on, &stream->handle);
    if (status != GK_OK) {
        free(stream);
        return status;
    }
    *out = stream;
    return GK_OK;
}

gk_status gk_stream_synchronize(gk_stream *stream)
{
    if (!stream)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "stream_synchronize: the stream is NULL; wait for a device's own stream "
                       "with gk_device_synchronize()");
    return gk_gpu_driver_of(stream->runs_on)->stream_synchronize(stream->runs_on, stream->handle);
}

void gk_stream_free(gk_stream *stream)
{
    if (!stream)
        return;
    const gk_gpu_driver *driver = gk_gpu_driver_of(stream->runs_on);
    /* Nothing to report to: the destroy below waits too, this just makes
     * "waits for its work first" hold whatever the driver does. */
    (void)driver->stream_synchronize(stream->runs_on, stream->handle);
    driver->stream_destroy(stream->runs_on, stream->handle);
    free(stream);
}

/* ---- compiling ---------------------------------------------------------- */

static bool is_identifier(const char *text)
{
    if (!text || !(isalpha((unsigned char)text[0]) || text[0] == '_'))
        return false;
    for (const char *p = text; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return false;
    return true;
}

/* Words the generated CUDA C++ or OpenCL C source cannot use as a name:
 * their keywords and built-in type names. */
static bool is_reserved_word(const char *name)
{
    static const char *const words[] = {
        "auto", "bool", "break", "case", "char", "class", "const", "constant", "continue",
        "default", "delete", "do", "double", "else", "enum", "extern", "false", "float", "for",
        "global", "goto", "half", "if", "inline", "int", "kernel", "local", "long", "namespace",
        "new", "operator", "private", "register", "restrict", "return", "short", "signed",
        "sizeof", "static", "struct", "switch", "template", "this", "true", "typedef", "uchar",
        "uint", "ulong", "union", "unsigned", "ushort", "void", "volatile", "while",
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(name, words[i]) == 0)
            return true;
    return false;
}

/* The function `name` of a compiled module, as a new gk_kernel. */
static gk_status find_kernel(gk_device device, gk_device runs_on, gk_gpu_module *module,
                             const char *name, const char *what, gk_kernel **out)
{
    gk_gpu_function *function;
    gk_status status = gk_gpu_driver_of(runs_on)->function(runs_on, module, name, &function);
    if (status != GK_OK)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s: the source compiled but has no kernel named '%s'; check the name "
                       "of its GK_KERNEL function (%s)",
                       what, name, gk_last_error());
    gk_kernel *kernel = calloc(1, sizeof *kernel);
    if (!kernel)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    kernel->device = device;
    kernel->runs_on = runs_on;
    kernel->function = function;
    snprintf(kernel->name, sizeof kernel->name, "%s", name);
    *out = kernel;
    return GK_OK;
}

gk_status gk_kernel_compile(gk_device device, gk_kernel_language language, const char *source,
                            const char *name, const char *options, gk_kernel **out)
{
    if (!out)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "kernel_compile: the output pointer is NULL");
    *out = NULL;
    if (!source)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "kernel_compile: the source is NULL");
    if (!is_identifier(name) || strlen(name) >= NAME_SIZE)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel_compile: the kernel name '%s' is not a C identifier of at most %d "
                       "characters; pass the name of a GK_KERNEL function in the source",
                       name ? name : "(null)", NAME_SIZE - 1);
    if (language != GK_KERNEL_PORTABLE && language != GK_KERNEL_CUDA_C)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel_compile: unknown language %d; use GK_KERNEL_PORTABLE or "
                       "GK_KERNEL_CUDA_C",
                       (int)language);
    const gk_gpu_info *info;
    gk_device runs_on;
    gk_status status = kernel_device(device, "kernel_compile", &runs_on, &info);
    if (status != GK_OK)
        return status;
    if (language == GK_KERNEL_CUDA_C && device.kind != GK_DEVICE_CUDA) {
        char text[GK_DEVICE_NAME_MAX];
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel_compile: CUDA C kernels run on CUDA devices only and %s is "
                       "not one; write the kernel in the portable dialect (GK_KERNEL, "
                       "GK_GLOBAL, GK_GLOBAL_ID, ...) and compile it with GK_KERNEL_PORTABLE",
                       gk_device_name(device, text, sizeof text));
    }
    gk_gpu_module *module;
    status = gk_gpu_program(runs_on, language == GK_KERNEL_CUDA_C ? GK_GPU_CUDA_C : GK_GPU_PORTABLE,
                            source, options, &module);
    if (status != GK_OK)
        return status; /* the compiler's log is in the message */
    return find_kernel(device, runs_on, module, name, "kernel_compile", out);
}

void gk_kernel_free(gk_kernel *kernel)
{
    /* The module stays loaded (gk_gpu_program's memory cache owns it), so
     * a kernel is just this handle. */
    free(kernel);
}

/* ---- raw launches ------------------------------------------------------- */

gk_arg gk_arg_array(const gk_array *array)
{
    gk_arg arg = {.kind = GK_ARG_ARRAY, .value.array = array};
    return arg;
}

gk_arg gk_arg_view(const gk_array *array)
{
    gk_arg arg = {.kind = GK_ARG_VIEW, .value.array = array};
    return arg;
}

gk_arg gk_arg_int32(int32_t value)
{
    gk_arg arg = {.kind = GK_ARG_INT32, .value.int32 = value};
    return arg;
}

gk_arg gk_arg_int64(int64_t value)
{
    gk_arg arg = {.kind = GK_ARG_INT64, .value.int64 = value};
    return arg;
}

gk_arg gk_arg_float32(float value)
{
    gk_arg arg = {.kind = GK_ARG_FLOAT32, .value.float32 = value};
    return arg;
}

gk_arg gk_arg_float64(double value)
{
    gk_arg arg = {.kind = GK_ARG_FLOAT64, .value.float64 = value};
    return arg;
}

/* Every size at least 1, and no more threads per block than the device
 * runs in one group. */
static gk_status check_sizes(gk_device device, const gk_gpu_info *info, const uint32_t grid[3],
                             const uint32_t block[3])
{
    if (!grid || !block)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel_launch: grid and block must be arrays of 3 sizes");
    for (int d = 0; d < 3; d++) {
        if (grid[d] == 0 || block[d] == 0)
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "kernel_launch: grid (%u, %u, %u) and block (%u, %u, %u) must be at "
                           "least 1 in every dimension; use 1 for the dimensions you do not use",
                           grid[0], grid[1], grid[2], block[0], block[1], block[2]);
    }
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (threads > (uint64_t)info->max_group_size) {
        char name[GK_DEVICE_NAME_MAX];
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel_launch: block (%u, %u, %u) has %llu threads but %s runs at most "
                       "%d per block; use smaller blocks and more of them",
                       block[0], block[1], block[2], (unsigned long long)threads,
                       gk_device_name(device, name, sizeof name), info->max_group_size);
    }
    return GK_OK;
}

/* A view's two driver arguments: its buffer and its gk_view. On the cpu
 * the whole allocation is lent, so negative strides stay inside it. */
static gk_status add_view(gk_gpu_launch *launch, gk_device device, host_loans *loans,
                          const gk_array *a)
{
    char *base = a->buffer->data;
    gk_status status = GK_OK;
    if (device.kind == GK_DEVICE_CPU)
        status = lend(launch->device, loans, base, a->buffer->bytes, &base);
    if (status != GK_OK)
        return status;
    gk_view view = {.ndim = a->ndim, .size = gk_shape_size(a->ndim, a->shape)};
    int64_t item = (int64_t)gk_dtype_size(a->dtype);
    memcpy(view.shape, a->shape, sizeof *a->shape * (size_t)a->ndim);
    memcpy(view.strides, a->strides, sizeof *a->strides * (size_t)a->ndim);
    char *start;
    size_t offset;
    gk_gpu_driver_of(launch->device)->resolve(base + a->offset, &start, &offset);
    view.offset = (int64_t)offset / item;
    launch->args[launch->count++] = (gk_gpu_arg){.kind = GK_GPU_ARG_BUFFER, .address = start};
    gk_gpu_arg_value(launch, &view, sizeof view);
    return GK_OK;
}

/* An array argument (gk_arg_array or gk_arg_view): given, and on the
 * kernel's device. */
static gk_status check_array_arg(const gk_array *a, gk_device device, int index)
{
    if (!a)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "kernel_launch: argument %d is a NULL array",
                       index);
    char what[48];
    snprintf(what, sizeof what, "kernel_launch: argument %d (an array)", index);
    return same_device(a, device, what);
}

/* One gk_arg as a driver argument of a kernel for `device`. */
static gk_status add_arg(gk_gpu_launch *launch, gk_device device, host_loans *loans,
                         const gk_arg *arg, int index)
{
    switch (arg->kind) {
    case GK_ARG_VIEW: {
        const gk_array *a = arg->value.array;
        gk_status status = check_array_arg(a, device, index);
        if (status != GK_OK)
            return status;
        if (a->ndim > GK_VIEW_DIMS)
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "kernel_launch: argument %d has %d dimensions; a view passes at most "
                           "%d (reshape it first)",
                           index, a->ndim, GK_VIEW_DIMS);
        return add_view(launch, device, loans, a);
    }
    case GK_ARG_ARRAY: {
        const gk_array *a = arg->value.array;
        gk_status status = check_array_arg(a, device, index);
        if (status != GK_OK)
            return status;
        /* The address of element [0, 0, ...]: OpenCL's driver makes a
         * sub-buffer when that is not the start of the allocation; host
         * memory is lent from there on. */
        char *address = (char *)a->buffer->data + a->offset;
        if (device.kind == GK_DEVICE_CPU)
            status = lend(launch->device, loans, address, a->buffer->bytes - a->offset, &address);
        if (status != GK_OK)
            return status;
        launch->args[launch->count++] = (gk_gpu_arg){
            .kind = GK_GPU_ARG_BUFFER,
            .address = address,
        };
        return GK_OK;
    }
    case GK_ARG_INT32:
        gk_gpu_arg_value(launch, &arg->value.int32, sizeof arg->value.int32);
        return GK_OK;
    case GK_ARG_INT64:
        gk_gpu_arg_value(launch, &arg->value.int64, sizeof arg->value.int64);
        return GK_OK;
    case GK_ARG_FLOAT32:
        gk_gpu_arg_value(launch, &arg->value.float32, sizeof arg->value.float32);
        return GK_OK;
    case GK_ARG_FLOAT64:
        gk_gpu_arg_value(launch, &arg->value.float64, sizeof arg->value.float64);
        return GK_OK;
    }
    return gk_fail(GK_ERR_INVALID_ARGUMENT,
                   "kernel_launch: argument %d has unknown kind %d; make arguments with "
                   "gk_arg_array(), gk_arg_int32(), ...",
                   index, (int)arg->kind);
}

/* What a scalar argument is, for messages: "an int32 (or uint32)". */
static const char *scalar_text(gk_arg_kind kind)
{
    switch (kind) {
    case GK_ARG_INT32: return "an int32 (or uint32)";
    case GK_ARG_INT64: return "an int64 (or uint64)";
    case GK_ARG_FLOAT32: return "a float32";
    default: return "a float64";
    }
}

/* What to pass for a scalar parameter: the argument that fits it. */
static const char *scalar_fix(const gk_gpu_param *declared)
{
    if (declared->kind == GK_GPU_PARAM_FLOAT && declared->size == 4)
        return "pass a float32 (numpy.float32(x) in Python, gk_arg_float32() in C)";
    if (declared->kind == GK_GPU_PARAM_FLOAT && declared->size == 8)
        return "pass a float64 (a Python float, gk_arg_float64() in C)";
    if (declared->kind == GK_GPU_PARAM_INTEGER && declared->size == 4)
        return "pass an int32 (numpy.int32(x) in Python, gk_arg_int32() in C)";
    if (declared->kind == GK_GPU_PARAM_INTEGER && declared->size == 8)
        return "pass an int64 (a Python int, gk_arg_int64() in C)";
    return "scalar arguments are 4- and 8-byte integers and floats: declare the parameter "
           "gk_i32, gk_i64, float or double";
}

/* Whether a declared integer type is unsigned, by its name ("uint",
 * "ulong", "gk_u32", "unsigned int"). */
static bool unsigned_type(const char *type)
{
    return type[0] == 'u' || strncmp(type, "gk_u", 4) == 0;
}

/* A scalar argument converted to the declared scalar parameter's type
 * when that keeps its value (as C converts a call's arguments; a float64
 * for a float is rounded to it, an integer must be exact there): 5
 * (an int64, as a Python int arrives) for a gk_i32, 2.5 (a float64) for a
 * float, 3 for a double. An argument of the parameter's kind and width
 * passes as it is (uint32 and uint64 arrive as the int of their width
 * with the same bits), and a negative int32 is not widened (as a uint32's
 * bits it would stand for another number). True when *arg now has the
 * parameter's type. */
static bool convert_scalar(gk_arg *arg, const gk_gpu_param *declared)
{
    bool to_float = declared->kind == GK_GPU_PARAM_FLOAT, narrow = declared->size == 4;
    bool from_float = arg->kind == GK_ARG_FLOAT32 || arg->kind == GK_ARG_FLOAT64;
    size_t width = arg->kind == GK_ARG_INT32 || arg->kind == GK_ARG_FLOAT32 ? 4 : 8;
    if (from_float == to_float && width == declared->size)
        return true;
    bool is_unsigned = !to_float && unsigned_type(declared->type);
    double number = arg->kind == GK_ARG_FLOAT32   ? arg->value.float32
                    : arg->kind == GK_ARG_FLOAT64 ? arg->value.float64
                    : 0;
    int64_t whole = arg->kind == GK_ARG_INT32 ? arg->value.int32 : arg->value.int64;
    if (from_float && !to_float)
        return false; /* a float for an integer would lose its fraction */
    if (to_float) {
        double value = from_float ? number : (double)whole;
        if (!from_float && (int64_t)value != whole)
            return false; /* an integer the double cannot hold */
        if (narrow && from_float && isfinite(value) && fabs(value) > FLT_MAX)
            return false;
        if (narrow && !from_float && (double)(float)value != value)
            return false;
        *arg = narrow ? gk_arg_float32((float)value) : gk_arg_float64(value);
        return true;
    }
    if (narrow) {
        bool fits = is_unsigned ? whole >= 0 && whole <= UINT32_MAX
                                : whole >= INT32_MIN && whole <= INT32_MAX;
        if (!fits)
            return false;
        *arg = gk_arg_int32((int32_t)(uint32_t)whole);
        return true;
    }
    if (whole < 0)
        return false; /* only an int32 arrives here */
    *arg = gk_arg_int64(whole);
    return true;
}

/* Argument `index` (of kind arg->kind, one driver argument at `position`
 * when not a view) matches what the driver says the kernel's parameter
 * there is, where it says: a scalar read as a buffer handle crashes the
 * process, and one of the wrong type or width is read as other bits. A
 * scalar whose value the parameter's type holds is converted to it. */
static gk_status check_parameter(const gk_kernel *kernel, const gk_gpu_driver *driver,
                                 int position, gk_arg *arg, int index)
{
    gk_arg_kind kind = arg->kind;
    gk_gpu_param declared = {.kind = GK_GPU_PARAM_UNKNOWN};
    if (kind != GK_ARG_ARRAY && kind != GK_ARG_VIEW && kind != GK_ARG_INT32 &&
        kind != GK_ARG_INT64 && kind != GK_ARG_FLOAT32 && kind != GK_ARG_FLOAT64)
        return GK_OK; /* add_arg names the unknown kind */
    if (driver->parameter)
        driver->parameter(kernel->function, position, &declared);
    bool array = kind == GK_ARG_ARRAY || kind == GK_ARG_VIEW;
    if (declared.kind == GK_GPU_PARAM_LOCAL)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel_launch: parameter %d of '%s' is local memory (__local %s), which "
                       "a launch cannot provide; declare a GK_LOCAL array in the kernel's body "
                       "instead",
                       position, kernel->name, declared.type);
    if (declared.kind == GK_GPU_PARAM_BUFFER && !array)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel_launch: argument %d is a scalar, %s, but '%s' takes a pointer "
                       "(%s) there; pass an array",
                       index, scalar_text(kind), kernel->name, declared.type);
    bool scalar_param =
        declared.kind == GK_GPU_PARAM_INTEGER || declared.kind == GK_GPU_PARAM_FLOAT;
    if (scalar_param && array)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel_launch: argument %d is an array but '%s' takes a scalar (%s) "
                       "there; %s",
                       index, kernel->name, declared.type, scalar_fix(&declared));
    if (!scalar_param || array)
        return GK_OK;
    if ((declared.size == 4 || declared.size == 8) && convert_scalar(arg, &declared))
        return GK_OK;
    return gk_fail(GK_ERR_INVALID_ARGUMENT,
                   "kernel_launch: argument %d is %s but '%s' takes %s there (%s of %zu bytes), "
                   "which cannot hold its value; %s",
                   index, scalar_text(kind), kernel->name, declared.type,
                   declared.kind == GK_GPU_PARAM_FLOAT ? "a float" : "an integer", declared.size,
                   scalar_fix(&declared));
}

/* Every argument against the kernel's parameters (a view is two: its
 * buffer, then its gk_view by value), into `checked` (count entries): the
 * arguments, scalars converted to their parameters' types. */
static gk_status check_parameters(const gk_kernel *kernel, int count, const gk_arg *args,
                                  gk_arg *checked)
{
    const gk_gpu_driver *driver = gk_gpu_driver_of(kernel->runs_on);
    int position = 0;
    for (int k = 0; k < count; k++) {
        checked[k] = args[k];
        gk_status status = check_parameter(kernel, driver, position, &checked[k], k);
        if (status != GK_OK)
            return status;
        position += args[k].kind == GK_ARG_VIEW ? 2 : 1;
    }
    return GK_OK;
}

gk_status gk_kernel_launch(gk_kernel *kernel, const uint32_t grid[3], const uint32_t block[3],
                           gk_stream *stream, int count, const gk_arg *args)
{
    if (!kernel)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "kernel_launch: the kernel is NULL");
    if (kernel->elementwise)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel_launch: '%s' is an elementwise kernel; run it with "
                       "gk_elementwise_launch()",
                       kernel->name);
    if (count < 0 || count > GK_GPU_MAX_ARGS || (count > 0 && !args))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel_launch: %d arguments%s; a kernel takes 0 to %d", count,
                       count > 0 && !args ? " but args is NULL" : "", GK_GPU_MAX_ARGS);
    const gk_gpu_info *info;
    gk_status status = gk_gpu_info_of(kernel->runs_on, &info);
    if (status == GK_OK)
        status = check_sizes(kernel->device, info, grid, block);
    gk_gpu_stream *handle = NULL;
    if (status == GK_OK)
        status = stream_of(stream, kernel->device, &handle);
    if (status != GK_OK)
        return status;

    /* Views take two driver arguments each. */
    int needed = count;
    for (int k = 0; k < count; k++)
        needed += args[k].kind == GK_ARG_VIEW;
    if (needed > GK_GPU_MAX_ARGS)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel_launch: the arguments make %d kernel parameters (a view makes "
                       "two); a kernel takes at most %d",
                       needed, GK_GPU_MAX_ARGS);
    gk_arg checked[GK_GPU_MAX_ARGS];
    status = check_parameters(kernel, count, args, checked);
    if (status != GK_OK)
        return status;

    gk_gpu_launch launch;
    gk_gpu_launch_begin(&launch, kernel->runs_on);
    host_loans loans = {0};
    for (int k = 0; status == GK_OK && k < count; k++)
        status = add_arg(&launch, kernel->device, &loans, &checked[k], k);
    size_t groups[3] = {grid[0], grid[1], grid[2]};
    size_t local[3] = {block[0], block[1], block[2]};
    if (status == GK_OK)
        status = run(&launch, kernel->function, groups, local, handle);
    return return_loans(kernel->runs_on, &loans, status);
}

/* ---- elementwise kernels: parsing --------------------------------------- */

static const char *skip_space(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* Copies one word ([A-Za-z0-9_]*) at p into word (empty when there is none)
 * and returns what follows it. */
static const char *read_word(const char *p, char *word, size_t size, bool *too_long)
{
    size_t n = 0;
    *too_long = false;
    while (isalnum((unsigned char)*p) || *p == '_') {
        if (n + 1 < size)
            word[n++] = *p;
        else
            *too_long = true;
        p++;
    }
    word[n] = 0;
    return p;
}

/* The text of one list entry (up to the next comma) for messages. */
static const char *entry_text(const char *start, char *buf, size_t size)
{
    const char *end = strchr(start, ',');
    size_t n = end ? (size_t)(end - start) : strlen(start);
    if (n >= size)
        n = size - 1;
    memcpy(buf, start, n);
    buf[n] = 0;
    /* Trimmed, so the message quotes just the entry. */
    while (n > 0 && isspace((unsigned char)buf[n - 1]))
        buf[--n] = 0;
    return buf + (skip_space(buf) - buf);
}

/* Parses "float32 x, int64 n" into params[*count...]: `what` is "inputs"
 * or "outputs" for messages. NULL or blank text declares nothing. */
static gk_status parse_params(const char *text, const char *what, param *params, int *count)
{
    if (!text)
        return GK_OK;
    const char *p = skip_space(text);
    if (!*p)
        return GK_OK;
    for (;;) {
        char entry[128], dtype_word[NAME_SIZE], name[NAME_SIZE];
        const char *start = p;
        bool long_dtype, long_name;
        entry_text(start, entry, sizeof entry);
        p = read_word(p, dtype_word, sizeof dtype_word, &long_dtype);
        p = skip_space(p);
        p = read_word(p, name, sizeof name, &long_name);
        p = skip_space(p);
        if (!*dtype_word || !*name || (*p && *p != ','))
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "elementwise_kernel: %s entry '%s' is not a dtype and a name; write "
                           "entries like \"float32 x\", separated by commas",
                           what, skip_space(entry));
        gk_dtype dtype;
        if (long_dtype || gk_dtype_parse(dtype_word, &dtype) != GK_OK)
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "elementwise_kernel: unknown dtype '%s' in %s entry '%s'; use bool, "
                           "int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, "
                           "bfloat16, float32 or float64",
                           dtype_word, what, skip_space(entry));
        if (long_name || !is_identifier(name))
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "elementwise_kernel: '%s' in %s entry '%s' is not a C identifier (of "
                           "at most %d characters)",
                           name, what, skip_space(entry), NAME_SIZE - 1);
        if (strcmp(name, "i") == 0 || strncmp(name, "gk_", 3) == 0 ||
            strncmp(name, "GK_", 3) == 0 || is_reserved_word(name))
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "elementwise_kernel: the name '%s' in %s is reserved (i is the "
                           "element's index; gk_ and GK_ names belong to gpukit; C, C++ and "
                           "OpenCL C keep their keywords and type names); choose another",
                           name, what);
        for (int k = 0; k < *count; k++)
            if (strcmp(params[k].name, name) == 0)
                return gk_fail(GK_ERR_INVALID_ARGUMENT,
                               "elementwise_kernel: the name '%s' is declared twice; every "
                               "input and output needs its own name",
                               name);
        if (*count == GK_KLOOP_OPERANDS)
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "elementwise_kernel: more than %d inputs and outputs together (at "
                           "'%s'); split the work into several kernels",
                           GK_KLOOP_OPERANDS, name);
        snprintf(params[*count].name, NAME_SIZE, "%s", name);
        params[*count].dtype = dtype;
        (*count)++;
        if (!*p)
            return GK_OK;
        p = skip_space(p + 1); /* past the comma */
        if (!*p || *p == ',')
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "elementwise_kernel: %s has an empty entry after '%s'; remove the "
                           "extra comma",
                           what, name);
    }
}

/* The C type of `dtype`'s elements in memory (bool: gk_u8 0/1; the 16-bit
 * floats: their bit patterns, dialect.h's gk_f16 and gk_bf16; complex:
 * dialect.h's structs gk_c64 and gk_c128, parts .re and .im). */
static const char *c_type(gk_dtype dtype)
{
    switch (dtype) {
    case GK_BOOL:
    case GK_UINT8: return "gk_u8";
    case GK_INT8: return "gk_i8";
    case GK_INT16: return "gk_i16";
    case GK_INT32: return "gk_i32";
    case GK_INT64: return "gk_i64";
    case GK_UINT16: return "gk_u16";
    case GK_FLOAT16: return "gk_f16";
    case GK_BFLOAT16: return "gk_bf16";
    case GK_UINT32: return "gk_u32";
    case GK_UINT64: return "gk_u64";
    case GK_FLOAT32: return "float";
    case GK_FLOAT64: return "double";
    case GK_COMPLEX64: return "gk_c64";
    case GK_COMPLEX128: return "gk_c128";
    }
    return "gk_u8";
}

/* The type of the body's local for an element: float for the 16-bit
 * floats (loaded exactly, stored rounded to nearest even, as the built-in
 * kernels compute them), else the element's own type. */
static const char *local_type(gk_dtype dtype)
{
    return gk_dtype_is_half(dtype) ? "float" : c_type(dtype);
}

/* The dialect.h function converting an element to and from its local
 * ("" where the local is the element itself). */
static const char *load_function(gk_dtype dtype)
{
    return dtype == GK_FLOAT16 ? "gk_f16_to_float" : dtype == GK_BFLOAT16 ? "gk_bf16_to_float" : "";
}

static const char *store_function(gk_dtype dtype)
{
    return dtype == GK_FLOAT16    ? "gk_f16_from_float"
           : dtype == GK_BFLOAT16 ? "gk_bf16_from_float"
                                  : "";
}

/* The kernel's source: one buffer parameter per operand (gk_<name>), the
 * loop, and a grid-stride loop that loads the inputs into locals named as
 * declared, runs the body and stores the outputs. */
static char *elementwise_source(const gk_kernel *kernel, const char *body)
{
    char *source = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&source, &size);
    if (!f)
        return NULL;
    int total = kernel->out_count + kernel->in_count;
    fprintf(f, "/* gpukit elementwise kernel */\nGK_KERNEL void %s(", kernel->name);
    for (int k = 0; k < total; k++) {
        const param *p = &kernel->params[k];
        fprintf(f, "GK_GLOBAL %s%s *gk_%s, ", k < kernel->out_count ? "" : "const ",
                c_type(p->dtype), p->name);
    }
    fprintf(f, "gk_kloop gk_loop)\n{\n"
               "    GK_FOR_EACH_INDEX(i, gk_loop.size) {\n"
               "        gk_i64 gk_at[%d];\n"
               "        GK_KLOOP_OFFSETS(gk_loop, i, %d, gk_at);\n",
            total, total);
    for (int k = kernel->out_count; k < total; k++) {
        const param *p = &kernel->params[k];
        fprintf(f, "        %s %s = %s(gk_%s[gk_at[%d]]);\n", local_type(p->dtype), p->name,
                load_function(p->dtype), p->name, k);
    }
    for (int k = 0; k < kernel->out_count; k++) {
        const param *p = &kernel->params[k];
        fprintf(f, "        %s %s = %s;\n", local_type(p->dtype), p->name,
                gk_dtype_is_complex(p->dtype) ? "{0, 0}" : "0");
    }
    /* The compiler names the body's lines as the user counts them
     * ("operation:2:9: ..."), and the generated lines after it as such. */
    fprintf(f, "        {\n#line 1 \"operation\"\n%s\n#line 1 \"generated stores\"\n"
               "        }\n",
            body);
    for (int k = 0; k < kernel->out_count; k++) {
        const param *p = &kernel->params[k];
        /* Bool elements are 0 or 1 whatever the body assigned. */
        if (p->dtype == GK_BOOL)
            fprintf(f, "        gk_%s[gk_at[%d]] = (gk_u8)(%s != 0);\n", p->name, k, p->name);
        else
            fprintf(f, "        gk_%s[gk_at[%d]] = %s(%s);\n", p->name, k,
                    store_function(p->dtype), p->name);
    }
    fprintf(f, "    }\n}\n");
    if (fclose(f) != 0) {
        free(source);
        return NULL;
    }
    return source;
}

gk_status gk_elementwise_kernel(gk_device device, const char *inputs, const char *outputs,
                                const char *body, const char *name, gk_kernel **out)
{
    if (!out)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "elementwise_kernel: the output pointer is NULL");
    *out = NULL;
    if (!body)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "elementwise_kernel: the body is NULL");
    if (!is_identifier(name) || strlen(name) >= NAME_SIZE)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "elementwise_kernel: the kernel name '%s' is not a C identifier of at "
                       "most %d characters",
                       name ? name : "(null)", NAME_SIZE - 1);
    if (is_reserved_word(name))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "elementwise_kernel: the kernel name '%s' is a keyword or type name of "
                       "C, C++ or OpenCL C; choose another (e.g. '%s_kernel')",
                       name, name);
    const gk_gpu_info *info;
    gk_device runs_on;
    gk_status status = kernel_device(device, "elementwise_kernel", &runs_on, &info);
    if (status != GK_OK)
        return status;

    /* Outputs first: that is their order as parameters and loop operands. */
    gk_kernel shape = {.device = device, .runs_on = runs_on, .elementwise = true};
    snprintf(shape.name, sizeof shape.name, "%s", name);
    status = parse_params(outputs, "outputs", shape.params, &shape.out_count);
    if (status != GK_OK)
        return status;
    if (shape.out_count == 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "elementwise_kernel: no outputs are declared; declare at least one, "
                       "like \"float32 z\"");
    int total = shape.out_count;
    status = parse_params(inputs, "inputs", shape.params, &total);
    if (status != GK_OK)
        return status;
    shape.in_count = total - shape.out_count;
    for (int k = 0; k < total; k++) {
        if (shape.params[k].dtype == GK_FLOAT64 && !info->fp64) {
            char text[GK_DEVICE_NAME_MAX];
            return gk_fail(GK_ERR_UNSUPPORTED_DTYPE,
                           "elementwise_kernel: '%s' is float64 but %s has no double precision; "
                           "use float32 or another device",
                           shape.params[k].name, gk_device_name(device, text, sizeof text));
        }
    }

    char *source = elementwise_source(&shape, body);
    if (!source)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "elementwise_kernel: out of memory");
    gk_gpu_module *module;
    status = gk_gpu_program(runs_on, GK_GPU_PORTABLE, source, NULL, &module);
    free(source);
    if (status != GK_OK)
        return status; /* the compiler's log is in the message */
    gk_kernel *kernel;
    status = find_kernel(device, runs_on, module, name, "elementwise_kernel", &kernel);
    if (status != GK_OK)
        return status;
    gk_gpu_function *function = kernel->function;
    *kernel = shape;
    kernel->function = function;
    *out = kernel;
    return GK_OK;
}

/* ---- elementwise kernels: launching ------------------------------------- */

/* The inputs as the kernel declared them: on its device, exact dtypes. */
static gk_status check_inputs(const gk_kernel *kernel, int in_count, const gk_array *const *in)
{
    if (in_count != kernel->in_count || (in_count > 0 && !in))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "elementwise_launch: '%s' takes %d inputs, got %d%s", kernel->name,
                       kernel->in_count, in_count, in ? "" : " (in is NULL)");
    for (int k = 0; k < in_count; k++) {
        const param *p = &kernel->params[kernel->out_count + k];
        char what[NAME_SIZE + 32];
        snprintf(what, sizeof what, "elementwise_launch: input '%s'", p->name);
        if (!in[k])
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s is NULL", what);
        gk_status status = same_device(in[k], kernel->device, what);
        if (status != GK_OK)
            return status;
        if (in[k]->dtype != p->dtype)
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "%s is declared %s but the array is %s; convert it with gk_cast() "
                           "or declare it %s",
                           what, gk_dtype_name(p->dtype), gk_dtype_name(in[k]->dtype),
                           gk_dtype_name(in[k]->dtype));
    }
    return GK_OK;
}

/* A given output: the declared dtype, the loop's shape, the kernel's
 * device, and no element twice. */
static gk_status check_output(const gk_kernel *kernel, const param *p, const gk_array *a,
                              int ndim, const int64_t *shape)
{
    char what[NAME_SIZE + 32];
    snprintf(what, sizeof what, "elementwise_launch: output '%s'", p->name);
    gk_status status = same_device(a, kernel->device, what);
    if (status != GK_OK)
        return status;
    if (a->dtype != p->dtype)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s is declared %s but the array is %s", what,
                       gk_dtype_name(p->dtype), gk_dtype_name(a->dtype));
    if (a->ndim != ndim || memcmp(a->shape, shape, sizeof *shape * (size_t)ndim) != 0) {
        char have[160], want[160];
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s has shape %s but the inputs broadcast to %s; pass an array of that "
                       "shape, or NULL for a new one",
                       what, gk_shape_text(a->ndim, a->shape, have, sizeof have),
                       gk_shape_text(ndim, shape, want, sizeof want));
    }
    return gk_check_writable(a, what);
}

/* The shape the kernel runs over: the inputs broadcast together, or, with
 * no inputs, the shape of the given outputs. */
static gk_status loop_shape(const gk_kernel *kernel, const gk_array *const *in,
                            gk_array *const *out, int *ndim, int64_t *shape)
{
    if (kernel->in_count > 0)
        return gk_broadcast_shapes(kernel->in_count, in, ndim, shape);
    for (int k = 0; k < kernel->out_count; k++) {
        if (out[k]) {
            *ndim = out[k]->ndim;
            memcpy(shape, out[k]->shape, sizeof *shape * (size_t)out[k]->ndim);
            return GK_OK;
        }
    }
    return gk_fail(GK_ERR_INVALID_ARGUMENT,
                   "elementwise_launch: '%s' has no inputs, so it needs at least one output "
                   "array to take its shape from",
                   kernel->name);
}

gk_status gk_elementwise_launch(gk_kernel *kernel, int in_count, const gk_array *const *in,
                                int out_count, gk_array **out, gk_stream *stream)
{
    if (!kernel)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "elementwise_launch: the kernel is NULL");
    if (!kernel->elementwise)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "elementwise_launch: '%s' is a raw kernel; run it with gk_kernel_launch()",
                       kernel->name);
    gk_status status = check_inputs(kernel, in_count, in);
    if (status != GK_OK)
        return status;
    if (out_count != kernel->out_count || !out)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "elementwise_launch: '%s' has %d outputs, got %d%s", kernel->name,
                       kernel->out_count, out_count, out ? "" : " (out is NULL)");
    const gk_gpu_info *info = NULL;
    gk_gpu_stream *handle = NULL;
    status = gk_gpu_info_of(kernel->runs_on, &info);
    if (status == GK_OK)
        status = stream_of(stream, kernel->device, &handle);
    int ndim = 0;
    int64_t shape[GK_MAX_DIMS];
    if (status == GK_OK)
        status = loop_shape(kernel, in, out, &ndim, shape);
    for (int k = 0; status == GK_OK && k < out_count; k++)
        if (out[k])
            status = check_output(kernel, &kernel->params[k], out[k], ndim, shape);
    if (status != GK_OK)
        return status;

    /* New outputs for the NULL entries (handed over only on success), and
     * copies of inputs that overlap an output in another layout, so that
     * no element is overwritten before it is read. */
    gk_array *made[GK_KLOOP_OPERANDS] = {NULL};
    gk_array *copies[GK_KLOOP_OPERANDS] = {NULL};
    const gk_array *outputs[GK_KLOOP_OPERANDS];
    for (int k = 0; status == GK_OK && k < out_count; k++) {
        if (!out[k])
            status = gk_empty(kernel->device, kernel->params[k].dtype, ndim, shape, &made[k]);
        outputs[k] = out[k] ? out[k] : made[k];
    }
    gk_loop loop = {.ndim = ndim};
    memcpy(loop.shape, shape, sizeof *shape * (size_t)ndim);
    int64_t items = gk_shape_size(ndim, shape);
    gk_operand operands[GK_KLOOP_OPERANDS];
    for (int k = 0; status == GK_OK && k < out_count; k++)
        operands[k] = gk_broadcast_operand(outputs[k], ndim, shape);
    for (int k = 0; status == GK_OK && k < in_count; k++) {
        gk_operand operand = gk_broadcast_operand(in[k], ndim, shape);
        for (int j = 0; items > 0 && j < out_count && !copies[k]; j++) {
            if (out[j] && gk_operands_conflict(&operand, &operands[j], &loop)) {
                status = gk_copy_as(in[k], in[k]->dtype, &copies[k]);
                if (status == GK_OK)
                    operand = gk_broadcast_operand(copies[k], ndim, shape);
            }
        }
        operands[out_count + k] = operand;
    }

    if (status == GK_OK && items > 0) {
        host_loans loans = {0};
        if (kernel->device.kind == GK_DEVICE_CPU) {
            for (int k = 0; status == GK_OK && k < out_count + in_count; k++) {
                const gk_array *a = k < out_count ? outputs[k]
                                    : copies[k - out_count] ? copies[k - out_count]
                                                            : in[k - out_count];
                status = lend_operand(kernel->runs_on, &loans, a, &operands[k]);
            }
        }
        gk_gpu_launch launch;
        gk_gpu_launch_begin(&launch, kernel->runs_on);
        size_t groups[3], local[3];
        if (status == GK_OK) {
            gk_gpu_arg_loop(&launch, &loop, operands, out_count + in_count);
            status = gk_gpu_items_size(kernel->runs_on, items, groups, local);
        }
        if (status == GK_OK)
            status = run(&launch, kernel->function, groups, local, handle);
        status = return_loans(kernel->runs_on, &loans, status);
    }
    /* Freeing a copy is safe at once: memory is reused only by work queued
     * later on the device's stream, which waits for this launch. */
    for (int k = 0; k < in_count; k++)
        gk_array_free(copies[k]);
    for (int k = 0; k < out_count; k++) {
        if (status == GK_OK && !out[k])
            out[k] = made[k];
        else
            gk_array_free(made[k]);
    }
    return status;
}

/* ---- generated sources in the disk cache -------------------------------- */

/* The cache key of a front end's text: a tag of its own, so no text key
 * can equal a compiled kernel's. */
static gk_cache_key text_key(const void *key, size_t key_size)
{
    const char *parts[] = {"gpukit generated source 1", key};
    size_t lengths[] = {strlen(parts[0]), key_size};
    return gk_cache_key_of(parts, lengths, 2);
}

gk_status gk_kernel_cache_get(const void *key, size_t key_size, char **text)
{
    if (!text || (!key && key_size))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "kernel_cache_get: NULL key or output");
    *text = NULL;
    gk_cache_key k = text_key(key, key_size);
    void *data;
    size_t size;
    gk_status status = gk_cache_read(&k, &data, &size);
    if (status != GK_OK)
        return GK_ERR_NOT_FOUND;
    char *copy = malloc(size + 1);
    if (!copy) {
        free(data);
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "kernel_cache_get: out of memory");
    }
    memcpy(copy, data, size);
    copy[size] = 0;
    free(data);
    *text = copy;
    return GK_OK;
}

gk_status gk_kernel_cache_put(const void *key, size_t key_size, const char *text)
{
    if (!text || (!key && key_size))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "kernel_cache_put: NULL key or text");
    gk_cache_key k = text_key(key, key_size);
    return gk_cache_write(&k, text, strlen(text));
}
