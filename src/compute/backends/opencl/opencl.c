/* The OpenCL driver (compute/gpu/driver.h): every device of every OpenCL
 * platform, through the ICD loader that ext/opencl.c loads at run time.
 *
 * Per device, made on first use: one context and one in-order command
 * queue, the "device stream"; user streams are more in-order queues on the
 * same context.
 *
 * Addresses. OpenCL has no device pointers, only cl_mem handles, so an
 * address encodes (slot, byte offset): the slot (plus one, so that no
 * address is NULL) in the bits from ADDRESS_SHIFT up, the offset in the 40
 * bits below. The core adds byte offsets to addresses like pointers; every
 * call here splits them again. Slots are kept in one process-wide table
 * (resolve has no device argument), recycled when freed.
 *
 * Memory. OpenCL cannot tell how much device memory is free, so `memory`
 * reports the device's global memory minus what this process has allocated
 * on it through this driver: other processes' use is not seen.
 *
 * Thread safety: the device list is made once (pthread_once); each device's
 * context and queue under the device's mutex; the slot table under its
 * mutex; a kernel's arguments and its enqueue under the kernel's mutex
 * (clSetKernelArg is the one OpenCL call that is not thread-safe on a
 * shared object). Everything else OpenCL does thread-safely itself. */
#include "compute/gpu/driver.h"

#include "core/error.h"
#include "core/units.h"
#include "ext/opencl.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define XXH_INLINE_ALL /* header-only, as in compute/gpu/cache.c */
#include <xxhash.h>

/* ------------------------------------------------------------------ */
/* Errors                                                               */
/* ------------------------------------------------------------------ */

/* The gk_status an OpenCL error code stands for. */
static gk_status status_of(cl_int code)
{
    switch (code) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY:
        return GK_ERR_OUT_OF_MEMORY;
    case CL_INVALID_KERNEL_NAME:
        return GK_ERR_NOT_FOUND;
    case CL_INVALID_VALUE:
    case CL_INVALID_BINARY:
    case CL_INVALID_BUFFER_SIZE:
    case -43: /* CL_INVALID_BUILD_OPTIONS */
    case -49: /* CL_INVALID_ARG_INDEX */
    case -50: /* CL_INVALID_ARG_VALUE */
    case -51: /* CL_INVALID_ARG_SIZE */
    case -52: /* CL_INVALID_KERNEL_ARGS */
    case -54: /* CL_INVALID_WORK_GROUP_SIZE */
    case -55: /* CL_INVALID_WORK_ITEM_SIZE */
    case -63: /* CL_INVALID_GLOBAL_WORK_SIZE */
        return GK_ERR_INVALID_ARGUMENT;
    default:
        return GK_ERR_DRIVER;
    }
}

/* What to do about an error, for the codes where that is clear. */
static const char *hint_of(cl_int code)
{
    switch (code) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
        return ": the device is out of memory or resources; free arrays or use smaller ones";
    case CL_OUT_OF_HOST_MEMORY:
        return ": the host is out of memory";
    case -51: /* CL_INVALID_ARG_SIZE */
    case -52: /* CL_INVALID_KERNEL_ARGS */
        return ": the arguments do not match the kernel's parameters (count, sizes)";
    case -54: /* CL_INVALID_WORK_GROUP_SIZE */
    case -55: /* CL_INVALID_WORK_ITEM_SIZE */
        return ": the work-group size is larger than the device or this kernel allows";
    default:
        return "";
    }
}

/* "<what> on opencl:P:D failed: CL_NAME: hint". */
__attribute__((format(printf, 3, 4))) static gk_status cl_failure(cl_int code, const char *device,
                                                                   const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return gk_fail(status_of(code), "%s on %s failed: %s%s", what, device,
                   gk_opencl_error_name(code), hint_of(code));
}

/* ------------------------------------------------------------------ */
/* Devices                                                              */
/* ------------------------------------------------------------------ */

typedef struct ocl_device {
    int platform_index, device_index;
    cl_platform_id platform;
    cl_device_id id;
    char name[GK_DEVICE_NAME_MAX]; /* "opencl:P:D", for messages */

    /* Made on first use, under `lock`; never released (they live as long
     * as the process, like the loaded library). */
    pthread_mutex_t lock;
    int ready;
    cl_context context;
    cl_command_queue queue;
    size_t base_align;       /* sub-buffer origins must be multiples of this */
    uint64_t max_allocation; /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
    uint64_t local_bytes;    /* CL_DEVICE_LOCAL_MEM_SIZE: local memory per work-group */
    bool rounded_divide;     /* float32 / and sqrt can be correctly rounded */
    uint64_t architecture;   /* hash of architecture_text(): marks its binaries */

    uint64_t allocated; /* bytes this process holds on it, under slots_lock */
} ocl_device;

/* Made once by enumerate(); read-only afterwards. */
static pthread_once_t enumerate_once = PTHREAD_ONCE_INIT;
static gk_status enumerate_status;
static char enumerate_message[768];
static int platform_count;
static int *platform_first;   /* index in `devices` of each platform's device 0 */
static int *platform_devices; /* how many devices each platform has */
static ocl_device *devices;
static int device_count;

static void enumerate(void)
{
    const gk_opencl *cl;
    if (gk_opencl_get(&cl) != GK_OK) {
        enumerate_status = GK_ERR_NOT_FOUND;
        snprintf(enumerate_message, sizeof enumerate_message, "%s", gk_last_error());
        return;
    }
    cl_uint count = 0;
    cl_int err = cl->GetPlatformIDs(0, NULL, &count);
    if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && count == 0)) {
        enumerate_status = GK_ERR_NOT_FOUND;
        snprintf(enumerate_message, sizeof enumerate_message,
                 "no OpenCL platform is installed (the loader %s found no driver in "
                 "/etc/OpenCL/vendors): install an OpenCL driver: apt install "
                 "pocl-opencl-icd for the CPU, or your GPU vendor's ICD",
                 cl->path);
        return;
    }
    if (err != CL_SUCCESS) {
        enumerate_status = GK_ERR_DRIVER;
        snprintf(enumerate_message, sizeof enumerate_message,
                 "clGetPlatformIDs failed: %s (the OpenCL loader %s or a driver is broken)",
                 gk_opencl_error_name(err), cl->path);
        return;
    }
    cl_platform_id *platforms = calloc(count, sizeof *platforms);
    platform_first = calloc(count, sizeof *platform_first);
    platform_devices = calloc(count, sizeof *platform_devices);
    if (!platforms || !platform_first || !platform_devices ||
        cl->GetPlatformIDs(count, platforms, NULL) != CL_SUCCESS) {
        free(platforms);
        enumerate_status = GK_ERR_DRIVER;
        snprintf(enumerate_message, sizeof enumerate_message, "cannot list the OpenCL platforms");
        return;
    }
    platform_count = (int)count;

    /* Two passes: count every platform's devices, then fill one array in
     * platform then device order. A platform that fails to list its
     * devices counts as having none. */
    int total = 0;
    for (int p = 0; p < platform_count; p++) {
        cl_uint n = 0;
        if (cl->GetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &n) != CL_SUCCESS)
            n = 0;
        platform_first[p] = total;
        platform_devices[p] = (int)n;
        total += (int)n;
    }
    devices = calloc(total ? (size_t)total : 1, sizeof *devices);
    cl_device_id *ids = calloc(total ? (size_t)total : 1, sizeof *ids);
    if (!devices || !ids) {
        free(platforms);
        free(ids);
        enumerate_status = GK_ERR_OUT_OF_MEMORY;
        snprintf(enumerate_message, sizeof enumerate_message,
                 "out of memory listing OpenCL devices");
        return;
    }
    for (int p = 0; p < platform_count; p++) {
        cl_uint n = (cl_uint)platform_devices[p];
        cl_device_id *mine = ids + platform_first[p];
        if (n && cl->GetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, n, mine, NULL) != CL_SUCCESS)
            platform_devices[p] = 0; /* its slots stay unused */
        for (int d = 0; d < platform_devices[p]; d++) {
            ocl_device *dev = &devices[device_count++];
            dev->platform_index = p;
            dev->device_index = d;
            dev->platform = platforms[p];
            dev->id = mine[d];
            snprintf(dev->name, sizeof dev->name, "opencl:%d:%d", p, d);
            pthread_mutex_init(&dev->lock, NULL);
        }
        platform_first[p] = device_count - platform_devices[p];
    }
    free(platforms);
    free(ids);
    enumerate_status = GK_OK;
}

/* The loaded library and the device list, or why there is none. */
static gk_status enumerated(const gk_opencl **cl)
{
    pthread_once(&enumerate_once, enumerate);
    if (enumerate_status != GK_OK)
        return gk_fail(enumerate_status, "%s", enumerate_message);
    return gk_opencl_get(cl);
}

/* The device `device` names, or a message saying why there is none. */
static gk_status find_device(gk_device device, const gk_opencl **cl, ocl_device **out)
{
    char name[GK_DEVICE_NAME_MAX];
    gk_device_name(device, name, sizeof name);
    if (device.kind != GK_DEVICE_OPENCL)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s is not an OpenCL device", name);
    gk_status status = enumerated(cl);
    if (status != GK_OK)
        return gk_fail(status, "%s: %s", name, gk_last_error());
    if (device.platform < 0 || device.platform >= platform_count)
        return gk_fail(GK_ERR_NOT_FOUND,
                       "%s does not exist: there is no OpenCL platform %d; this machine has %d "
                       "OpenCL platform%s (numbered from 0; `clinfo -l` lists them)",
                       name, device.platform, platform_count, platform_count == 1 ? "" : "s");
    int have = platform_devices[device.platform];
    if (device.index < 0 || device.index >= have)
        return gk_fail(GK_ERR_NOT_FOUND,
                       "%s does not exist: OpenCL platform %d has %d device%s (numbered from 0; "
                       "`clinfo -l` lists them)",
                       name, device.platform, have, have == 1 ? "" : "s");
    *out = &devices[platform_first[device.platform] + device.index];
    return GK_OK;
}

/* A device text property (malloc'd, NUL-terminated), or NULL. */
static char *device_text(const gk_opencl *cl, cl_device_id id, cl_device_info what)
{
    size_t size = 0;
    if (cl->GetDeviceInfo(id, what, 0, NULL, &size) != CL_SUCCESS)
        return NULL;
    char *text = calloc(size + 1, 1);
    if (text && cl->GetDeviceInfo(id, what, size, text, NULL) != CL_SUCCESS) {
        free(text);
        return NULL;
    }
    return text;
}

static char *platform_text(const gk_opencl *cl, cl_platform_id id, cl_platform_info what)
{
    size_t size = 0;
    if (cl->GetPlatformInfo(id, what, 0, NULL, &size) != CL_SUCCESS)
        return NULL;
    char *text = calloc(size + 1, 1);
    if (text && cl->GetPlatformInfo(id, what, size, text, NULL) != CL_SUCCESS) {
        free(text);
        return NULL;
    }
    return text;
}

/* A numeric device property of any width (cl_uint, cl_ulong, size_t);
 * 0 when the device does not answer. */
static uint64_t device_number(const gk_opencl *cl, cl_device_id id, cl_device_info what,
                              size_t width)
{
    unsigned char bytes[8] = {0};
    if (width > sizeof bytes || cl->GetDeviceInfo(id, what, width, bytes, NULL) != CL_SUCCESS)
        return 0;
    if (width == sizeof(uint32_t)) {
        uint32_t v;
        memcpy(&v, bytes, sizeof v);
        return v;
    }
    uint64_t v = 0;
    memcpy(&v, bytes, width < sizeof v ? width : sizeof v);
    return v;
}

/* Device name, device version, driver version and platform name:
 * everything that can change the compiled code. It keys the kernel cache
 * (gk_gpu_info.architecture), so a driver update never loads a stale
 * binary. */
static void architecture_text(const gk_opencl *cl, const ocl_device *dev, char *buf, size_t size)
{
    char *name = device_text(cl, dev->id, CL_DEVICE_NAME);
    char *version = device_text(cl, dev->id, CL_DEVICE_VERSION);
    char *driver = device_text(cl, dev->id, CL_DRIVER_VERSION);
    char *platform = platform_text(cl, dev->platform, CL_PLATFORM_NAME);
    snprintf(buf, size, "%s %s %s %s", name ? name : "?", version ? version : "?",
             driver ? driver : "?", platform ? platform : "?");
    free(name);
    free(version);
    free(driver);
    free(platform);
}

/* The device, with its context and queue made (on first use). */
static gk_status ready_device(gk_device device, const gk_opencl **cl, ocl_device **out)
{
    ocl_device *dev = NULL;
    gk_status status = find_device(device, cl, &dev);
    if (status != GK_OK)
        return status;
    gk_status result = GK_OK;
    pthread_mutex_lock(&dev->lock);
    if (!dev->ready) {
        const gk_opencl *api = *cl;
        cl_context_properties properties[] = {CL_CONTEXT_PLATFORM,
                                              (cl_context_properties)dev->platform, 0};
        cl_int err = CL_SUCCESS;
        cl_context context = api->CreateContext(properties, 1, &dev->id, NULL, NULL, &err);
        if (!context || err != CL_SUCCESS) {
            result = cl_failure(err, dev->name, "creating an OpenCL context");
        } else {
            cl_command_queue queue = api->CreateCommandQueue(context, dev->id, 0, &err);
            if (!queue || err != CL_SUCCESS) {
                result = cl_failure(err, dev->name, "creating a command queue");
                api->ReleaseContext(context);
            } else {
                dev->context = context;
                dev->queue = queue;
                /* Reported in bits. */
                uint64_t align_bits = device_number(api, dev->id, CL_DEVICE_MEM_BASE_ADDR_ALIGN,
                                                    sizeof(cl_uint));
                dev->base_align = align_bits >= 8 ? (size_t)(align_bits / 8) : 128;
                dev->max_allocation =
                    device_number(api, dev->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(cl_ulong));
                dev->local_bytes =
                    device_number(api, dev->id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(cl_ulong));
                dev->rounded_divide = (device_number(api, dev->id, CL_DEVICE_SINGLE_FP_CONFIG,
                                                     sizeof(cl_ulong)) &
                                       CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
                char architecture[256];
                architecture_text(api, dev, architecture, sizeof architecture);
                dev->architecture = XXH3_64bits(architecture, strlen(architecture));
                dev->ready = 1;
            }
        }
    }
    pthread_mutex_unlock(&dev->lock);
    if (result == GK_OK)
        *out = dev;
    return result;
}

static int opencl_list(gk_device *list, int max)
{
    const gk_opencl *cl;
    if (enumerated(&cl) != GK_OK)
        return 0;
    for (int i = 0; i < device_count && i < max; i++)
        list[i] = (gk_device){.kind = GK_DEVICE_OPENCL,
                              .index = devices[i].device_index,
                              .platform = devices[i].platform_index};
    return device_count;
}

static gk_status opencl_check(gk_device device)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    return ready_device(device, &cl, &dev);
}

/* "OpenCL 3.0" from "OpenCL 3.0 PoCL HSTR: ..." (the first two words). */
static void version_words(const char *version, char *buf, size_t size)
{
    size_t n = 0;
    int spaces = 0;
    while (version && version[n] && !(version[n] == ' ' && ++spaces == 2))
        n++;
    snprintf(buf, size, "%.*s", (int)n, version ? version : "");
}

static gk_status opencl_describe(gk_device device, char *buf, size_t size)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    gk_status status = find_device(device, &cl, &dev);
    if (status != GK_OK)
        return status;
    char *name = device_text(cl, dev->id, CL_DEVICE_NAME);
    char *version = device_text(cl, dev->id, CL_DEVICE_VERSION);
    char *platform = platform_text(cl, dev->platform, CL_PLATFORM_NAME);
    char short_version[64], memory[32];
    version_words(version, short_version, sizeof short_version);
    uint64_t units = device_number(cl, dev->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cl_uint));
    uint64_t total = device_number(cl, dev->id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(cl_ulong));
    snprintf(buf, size, "%s (%s, %s, %llu compute unit%s, %s)", name ? name : "OpenCL device",
             platform ? platform : "unknown platform", short_version, (unsigned long long)units,
             units == 1 ? "" : "s", gk_format_size(memory, sizeof memory, total));
    free(name);
    free(version);
    free(platform);
    return GK_OK;
}

/* Whether `word` is one of the space-separated words of `list`. */
static int has_word(const char *list, const char *word)
{
    size_t length = strlen(word);
    for (const char *p = list; p && (p = strstr(p, word)) != NULL; p += length) {
        int starts = p == list || p[-1] == ' ';
        int ends = p[length] == '\0' || p[length] == ' ';
        if (starts && ends)
            return 1;
    }
    return 0;
}

static gk_status opencl_info(gk_device device, gk_gpu_info *info)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    gk_status status = find_device(device, &cl, &dev);
    if (status != GK_OK)
        return status;
    memset(info, 0, sizeof *info);
    char *extensions = device_text(cl, dev->id, CL_DEVICE_EXTENSIONS);
    char *platform_version = platform_text(cl, dev->platform, CL_PLATFORM_VERSION);
    architecture_text(cl, dev, info->architecture, sizeof info->architecture);
    snprintf(info->compiler, sizeof info->compiler, "%s",
             platform_version ? platform_version : "OpenCL");
    info->gpu = (device_number(cl, dev->id, CL_DEVICE_TYPE, sizeof(cl_device_type)) &
                 CL_DEVICE_TYPE_GPU) != 0;
    info->compute_units =
        (int)device_number(cl, dev->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cl_uint));
    uint64_t group = device_number(cl, dev->id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(size_t));
    info->max_group_size = group > 0x7fffffff ? 0x7fffffff : (int)group;
    info->max_local_bytes = device_number(cl, dev->id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(cl_ulong));
    info->fp64 = has_word(extensions, "cl_khr_fp64") ||
                 device_number(cl, dev->id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(cl_ulong)) != 0;
    /* GPUKIT_OPENCL_FP64=0 treats every OpenCL device as one without double
     * precision (many integrated GPUs), to try float32-only code on any. */
    const char *fp64 = getenv("GPUKIT_OPENCL_FP64");
    if (fp64 && strcmp(fp64, "0") == 0)
        info->fp64 = false;
    info->max_allocation =
        device_number(cl, dev->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(cl_ulong));
    free(extensions);
    free(platform_version);
    return GK_OK;
}

/* ------------------------------------------------------------------ */
/* Memory: the slot table                                               */
/* ------------------------------------------------------------------ */

#define ADDRESS_SHIFT 40
#define OFFSET_MASK ((((uintptr_t)1) << ADDRESS_SHIFT) - 1)
/* Keeps addresses below 2^63, so they stay positive as intptr_t too. */
#define MAX_SLOTS (((size_t)1) << (63 - ADDRESS_SHIFT))

typedef struct ocl_slot {
    cl_mem mem;        /* NULL: free */
    size_t size;       /* bytes of the cl_mem */
    bool counted;      /* in device->allocated (not host memory lent to it) */
    ocl_device *device;
    size_t next_free;  /* when free: the next free slot + 1, 0 = none */
} ocl_slot;

static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static ocl_slot *slots;
static size_t slot_capacity;
static size_t first_free; /* free slot + 1, 0 = none */

static char *address_of(size_t slot)
{
    return (char *)(uintptr_t)((uintptr_t)(slot + 1) << ADDRESS_SHIFT);
}

static void opencl_resolve(const char *address, char **base, size_t *offset)
{
    uintptr_t bits = (uintptr_t)address;
    *base = (char *)(bits & ~OFFSET_MASK);
    *offset = (size_t)(bits & OFFSET_MASK);
}

/* The allocation an address points into: its cl_mem, size and the offset. */
typedef struct ocl_place {
    cl_mem mem;
    size_t size;
    size_t offset;
} ocl_place;

static gk_status find_place(const ocl_device *dev, const char *address, ocl_place *place)
{
    uintptr_t bits = (uintptr_t)address;
    size_t slot = (size_t)(bits >> ADDRESS_SHIFT);
    gk_status status = GK_OK;
    pthread_mutex_lock(&slots_lock);
    if (slot == 0 || slot > slot_capacity || !slots[slot - 1].mem) {
        status = gk_fail(GK_ERR_INVALID_ARGUMENT,
                         "address %p is not OpenCL memory allocated on %s (never allocated, "
                         "or already freed)",
                         (const void *)address, dev->name);
    } else if (slots[slot - 1].device != dev) {
        status = gk_fail(GK_ERR_INVALID_ARGUMENT,
                         "address %p belongs to %s, not %s: copy the data to this device first",
                         (const void *)address, slots[slot - 1].device->name, dev->name);
    } else {
        place->mem = slots[slot - 1].mem;
        place->size = slots[slot - 1].size;
        place->offset = (size_t)(bits & OFFSET_MASK);
    }
    pthread_mutex_unlock(&slots_lock);
    return status;
}

/* Whether [offset, offset + bytes) lies inside the allocation. */
static gk_status check_range(const ocl_device *dev, const ocl_place *place, size_t bytes,
                             const char *what)
{
    if (place->offset > place->size || bytes > place->size - place->offset)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s %zu bytes at byte offset %zu of a %zu-byte allocation on %s runs "
                       "past its end",
                       what, bytes, place->offset, place->size, dev->name);
    return GK_OK;
}

/* Records `mem` in a new slot and names it by *address; `counted`: its
 * bytes are this process's allocation on the device (host memory lent to
 * the device is not). On failure the cl_mem is released. */
static gk_status add_slot(const gk_opencl *cl, ocl_device *dev, cl_mem mem, size_t size,
                          bool counted, char **address)
{
    pthread_mutex_lock(&slots_lock);
    if (!first_free) {
        /* Grow the table, chaining the new slots into the free list. */
        size_t capacity = slot_capacity ? slot_capacity * 2 : 64;
        if (capacity > MAX_SLOTS)
            capacity = MAX_SLOTS;
        ocl_slot *grown =
            capacity > slot_capacity ? realloc(slots, capacity * sizeof *slots) : NULL;
        if (!grown) {
            pthread_mutex_unlock(&slots_lock);
            cl->ReleaseMemObject(mem);
            return gk_fail(GK_ERR_OUT_OF_MEMORY,
                           "cannot record a new allocation on %s: %zu allocations are live",
                           dev->name, slot_capacity);
        }
        for (size_t i = slot_capacity; i < capacity; i++)
            grown[i] = (ocl_slot){.next_free = i + 1 < capacity ? i + 2 : 0};
        first_free = slot_capacity + 1;
        slots = grown;
        slot_capacity = capacity;
    }
    size_t slot = first_free - 1;
    first_free = slots[slot].next_free;
    slots[slot] = (ocl_slot){.mem = mem, .size = size, .counted = counted, .device = dev};
    if (counted)
        dev->allocated += size;
    pthread_mutex_unlock(&slots_lock);
    *address = address_of(slot);
    return GK_OK;
}

static gk_status opencl_allocate(gk_device device, size_t bytes, char **address)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    gk_status status = ready_device(device, &cl, &dev);
    if (status != GK_OK)
        return status;
    if (bytes > OFFSET_MASK)
        return gk_fail(GK_ERR_OUT_OF_MEMORY,
                       "cannot allocate %zu bytes on %s: one allocation can be at most 1 TiB",
                       bytes, dev->name);
    /* OpenCL refuses empty buffers, and a zero-byte allocation must still be
     * a distinct, valid address. */
    size_t size = bytes ? bytes : 1;
    cl_int err = CL_SUCCESS;
    cl_mem mem = cl->CreateBuffer(dev->context, CL_MEM_READ_WRITE, size, NULL, &err);
    if (!mem || err != CL_SUCCESS) {
        if (err == CL_INVALID_BUFFER_SIZE)
            return gk_fail(GK_ERR_OUT_OF_MEMORY,
                           "cannot allocate %zu bytes on %s: its largest single allocation is "
                           "%llu bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE); use smaller arrays",
                           bytes, dev->name, (unsigned long long)dev->max_allocation);
        return cl_failure(err, dev->name, "allocating %zu bytes", bytes);
    }
    return add_slot(cl, dev, mem, size, true, address);
}

static void opencl_free(gk_device device, char *address)
{
    (void)device;
    const gk_opencl *cl;
    if (!address || gk_opencl_get(&cl) != GK_OK)
        return;
    size_t slot = (size_t)((uintptr_t)address >> ADDRESS_SHIFT);
    cl_mem mem = NULL;
    pthread_mutex_lock(&slots_lock);
    if (slot >= 1 && slot <= slot_capacity && slots[slot - 1].mem) {
        ocl_slot *s = &slots[slot - 1];
        mem = s->mem;
        if (s->counted)
            s->device->allocated -= s->size;
        *s = (ocl_slot){.next_free = first_free};
        first_free = slot;
    }
    pthread_mutex_unlock(&slots_lock);
    /* Queued work that uses it still completes: OpenCL frees the memory
     * once those commands are done. */
    if (mem)
        cl->ReleaseMemObject(mem);
}

/* Host memory lent to a CPU device (the cpu device's user kernels run on
 * one, gpu/kernel.c): a CL_MEM_USE_HOST_PTR buffer over it, which CPU
 * drivers such as PoCL use in place. */
static gk_status opencl_lend_host(gk_device device, void *host, size_t bytes, char **address)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    gk_status status = ready_device(device, &cl, &dev);
    if (status != GK_OK)
        return status;
    if (bytes == 0) /* OpenCL refuses empty buffers; nothing can be read */
        return opencl_allocate(device, 1, address);
    cl_int err = CL_SUCCESS;
    cl_mem mem = cl->CreateBuffer(dev->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes,
                                  host, &err);
    if (!mem || err != CL_SUCCESS)
        return cl_failure(err, dev->name, "lending %zu bytes of host memory", bytes);
    return add_slot(cl, dev, mem, bytes, false, address);
}

/* Ends a loan once the device's stream has done with it: mapping the
 * buffer waits for that work and, where a driver kept a copy, writes it
 * back to the host memory, as OpenCL promises for CL_MEM_USE_HOST_PTR. */
static gk_status opencl_return_host(gk_device device, char *address)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    gk_status status = ready_device(device, &cl, &dev);
    ocl_place place;
    if (status == GK_OK)
        status = find_place(dev, address, &place);
    if (status != GK_OK)
        return status;
    cl_int err = CL_SUCCESS;
    void *mapped = cl->EnqueueMapBuffer(dev->queue, place.mem, CL_TRUE,
                                        CL_MAP_READ | CL_MAP_WRITE, 0, place.size, 0, NULL,
                                        NULL, &err);
    if (mapped && err == CL_SUCCESS)
        err = cl->EnqueueUnmapMemObject(dev->queue, place.mem, mapped, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = cl->Finish(dev->queue);
    opencl_free(device, address);
    if (err != CL_SUCCESS)
        return cl_failure(err, dev->name, "waiting for a kernel on host memory");
    return GK_OK;
}

static gk_status opencl_memory(gk_device device, uint64_t *free_bytes, uint64_t *total_bytes)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    gk_status status = find_device(device, &cl, &dev);
    if (status != GK_OK)
        return status;
    uint64_t total = device_number(cl, dev->id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(cl_ulong));
    pthread_mutex_lock(&slots_lock);
    uint64_t used = dev->allocated;
    pthread_mutex_unlock(&slots_lock);
    *total_bytes = total;
    /* An estimate: OpenCL has no query for free memory (see the top). */
    *free_bytes = used < total ? total - used : 0;
    return GK_OK;
}

static gk_status opencl_upload(gk_device device, char *address, const void *host, size_t bytes)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    ocl_place to;
    gk_status status = ready_device(device, &cl, &dev);
    if (status == GK_OK && bytes)
        status = find_place(dev, address, &to);
    if (status == GK_OK && bytes)
        status = check_range(dev, &to, bytes, "writing");
    if (status != GK_OK || !bytes)
        return status;
    /* Blocking: the caller may reuse `host` as soon as this returns. */
    cl_int err = cl->EnqueueWriteBuffer(dev->queue, to.mem, CL_TRUE, to.offset, bytes, host, 0,
                                        NULL, NULL);
    if (err != CL_SUCCESS)
        return cl_failure(err, dev->name, "copying %zu bytes to the device", bytes);
    return GK_OK;
}

static gk_status opencl_download(gk_device device, void *host, const char *address, size_t bytes)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    ocl_place from;
    gk_status status = ready_device(device, &cl, &dev);
    if (status == GK_OK && bytes)
        status = find_place(dev, address, &from);
    if (status == GK_OK && bytes)
        status = check_range(dev, &from, bytes, "reading");
    if (status != GK_OK || !bytes)
        return status;
    /* The queue is in order, so a blocking read also waits for the work
     * queued before it. */
    cl_int err = cl->EnqueueReadBuffer(dev->queue, from.mem, CL_TRUE, from.offset, bytes, host, 0,
                                       NULL, NULL);
    if (err != CL_SUCCESS)
        return cl_failure(err, dev->name, "copying %zu bytes from the device", bytes);
    return GK_OK;
}

static gk_status opencl_copy(gk_device device, char *to, const char *from, size_t bytes)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    ocl_place dst, src;
    gk_status status = ready_device(device, &cl, &dev);
    if (status == GK_OK && bytes)
        status = find_place(dev, to, &dst);
    if (status == GK_OK && bytes)
        status = find_place(dev, from, &src);
    if (status == GK_OK && bytes)
        status = check_range(dev, &dst, bytes, "writing");
    if (status == GK_OK && bytes)
        status = check_range(dev, &src, bytes, "reading");
    if (status != GK_OK || !bytes)
        return status;
    if (dst.mem == src.mem && dst.offset == src.offset)
        return GK_OK;
    if (dst.mem == src.mem && dst.offset < src.offset + bytes && src.offset < dst.offset + bytes) {
        /* OpenCL refuses overlapping copies (CL_MEM_COPY_OVERLAP); going
         * through a scratch buffer gives memmove's result. */
        char *scratch;
        status = opencl_allocate(device, bytes, &scratch);
        if (status != GK_OK)
            return status;
        status = opencl_copy(device, scratch, from, bytes);
        if (status == GK_OK)
            status = opencl_copy(device, to, scratch, bytes);
        opencl_free(device, scratch); /* released once the copies are done */
        return status;
    }
    cl_int err = cl->EnqueueCopyBuffer(dev->queue, src.mem, dst.mem, src.offset, dst.offset, bytes,
                                       0, NULL, NULL);
    if (err != CL_SUCCESS)
        return cl_failure(err, dev->name, "copying %zu bytes on the device", bytes);
    return GK_OK;
}

static gk_status opencl_synchronize(gk_device device)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    gk_status status = ready_device(device, &cl, &dev);
    if (status != GK_OK)
        return status;
    cl_int err = cl->Finish(dev->queue);
    if (err != CL_SUCCESS)
        return cl_failure(err, dev->name, "waiting for queued work");
    return GK_OK;
}

/* ------------------------------------------------------------------ */
/* Programs and kernels                                                 */
/* ------------------------------------------------------------------ */

/* A kernel of a module, made once per name and shared by every thread. */
struct gk_gpu_function {
    gk_gpu_function *next; /* the module's list */
    ocl_device *device;
    cl_kernel kernel;
    int parameters; /* how many the kernel takes; -1 if the driver does not say */
    gk_gpu_param *params; /* `parameters` entries, or NULL when the driver does not say */
    uint64_t local_bytes; /* its GK_LOCAL arrays' bytes per work-group; 0 if not said */
    /* clSetKernelArg changes the kernel object itself: setting the
     * arguments and enqueueing must not interleave between threads. */
    pthread_mutex_t lock;
    char name[];
};

struct gk_gpu_module {
    ocl_device *device;
    cl_program program;
    pthread_mutex_t lock; /* guards `functions` */
    gk_gpu_function *functions;
};

/* Long build logs are cut here (the head holds the first errors). */
#define MAX_LOG_BYTES (16 * 1024)

/* The build log of `program` (malloc'd), cut at MAX_LOG_BYTES; NULL when
 * there is none. */
static char *build_log(const gk_opencl *cl, cl_program program, cl_device_id id)
{
    size_t size = 0;
    if (cl->GetProgramBuildInfo(program, id, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) != CL_SUCCESS ||
        size == 0)
        return NULL;
    char *log = calloc(size + 1, 1);
    if (!log)
        return NULL;
    if (cl->GetProgramBuildInfo(program, id, CL_PROGRAM_BUILD_LOG, size, log, NULL) !=
        CL_SUCCESS) {
        free(log);
        return NULL;
    }
    size_t length = strlen(log);
    while (length && (log[length - 1] == '\n' || log[length - 1] == ' '))
        log[--length] = '\0';
    if (length > MAX_LOG_BYTES) {
        static const char cut[] = "\n... (log cut)";
        memcpy(log + MAX_LOG_BYTES - sizeof cut, cut, sizeof cut);
    }
    return log;
}

/* Builds `program` for the device; on failure releases it and returns
 * `failure` with the compiler's log. */
static gk_status build_program(const gk_opencl *cl, ocl_device *dev, cl_program program,
                               const char *options, gk_status failure, const char *what,
                               gk_gpu_module **module)
{
    /* OpenCL C lets float32 division and sqrt be a few ulp off unless asked;
     * ask where the device can, so results match the CPU's. The parameters'
     * kinds and types are kept (-cl-kernel-arg-info, in the binary too) so
     * that launches can check arguments against them: the driver takes any
     * 8-byte scalar for a buffer handle and crashes on it. */
    char all_options[4096];
    snprintf(all_options, sizeof all_options, "-cl-kernel-arg-info %s%s",
             dev->rounded_divide ? "-cl-fp32-correctly-rounded-divide-sqrt " : "",
             options ? options : "");
    cl_int err = cl->BuildProgram(program, 1, &dev->id, all_options, NULL, NULL);
    if (err != CL_SUCCESS) {
        char *log = build_log(cl, program, dev->id);
        cl->ReleaseProgram(program);
        gk_status status = err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY
                               ? GK_ERR_OUT_OF_MEMORY
                               : failure;
        gk_fail(status, "%s on %s failed (%s%s%s):\n%s", what, dev->name,
                gk_opencl_error_name(err), options && *options ? ", options: " : "",
                options ? options : "", log && *log ? log : "(the compiler gave no log)");
        free(log);
        return status;
    }
    gk_gpu_module *m = calloc(1, sizeof *m);
    if (!m) {
        cl->ReleaseProgram(program);
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory loading a program on %s", dev->name);
    }
    m->device = dev;
    m->program = program;
    pthread_mutex_init(&m->lock, NULL);
    *module = m;
    return GK_OK;
}

/* What `build` hands out for the disk cache: this header, then the
 * driver's binary. Drivers may crash on a damaged binary (PoCL asserts),
 * so `load` checks the header and the checksum before the driver sees a
 * byte, and refuses binaries made for another device or driver. */
typedef struct binary_header {
    char magic[8];         /* BINARY_MAGIC */
    uint64_t architecture; /* ocl_device.architecture of the device built for */
    uint64_t size;         /* bytes of the driver's binary that follow */
    uint64_t checksum;     /* XXH3-64 of them */
} binary_header;

/* Version 2: built with -cl-kernel-arg-info. Version 1 binaries lack the
 * parameters' kinds, so they are refused and built again. */
static const char BINARY_MAGIC[8] = {'g', 'k', 'c', 'l', 'b', 'i', 'n', '2'};

/* The device binary of a built program, behind a binary_header
 * (malloc'd). */
static gk_status program_binary(const gk_opencl *cl, const ocl_device *dev, cl_program program,
                                void **binary, size_t *size)
{
    size_t length = 0;
    cl_int err = cl->GetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof length, &length, NULL);
    if (err != CL_SUCCESS)
        return cl_failure(err, dev->name, "reading the size of a program binary");
    if (length == 0)
        return gk_fail(GK_ERR_DRIVER,
                       "the OpenCL driver of %s gives no binary for a built program", dev->name);
    unsigned char *bytes = malloc(sizeof(binary_header) + length);
    if (!bytes)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory for a %zu-byte program binary", length);
    /* The driver writes through an array of one pointer per device. */
    unsigned char *payload = bytes + sizeof(binary_header);
    err = cl->GetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof payload, &payload, NULL);
    if (err != CL_SUCCESS) {
        free(bytes);
        return cl_failure(err, dev->name, "reading a program binary");
    }
    binary_header header = {.architecture = dev->architecture,
                            .size = length,
                            .checksum = XXH3_64bits(payload, length)};
    memcpy(header.magic, BINARY_MAGIC, sizeof header.magic);
    memcpy(bytes, &header, sizeof header);
    *binary = bytes;
    *size = sizeof header + length;
    return GK_OK;
}

/* The driver's binary inside what program_binary made, or why not. */
static gk_status unwrap_binary(const ocl_device *dev, const void *binary, size_t size,
                               const unsigned char **payload, size_t *length)
{
    binary_header header;
    if (!binary || size < sizeof header)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "a %zu-byte program binary is too short to load on %s", size, dev->name);
    memcpy(&header, binary, sizeof header);
    const unsigned char *bytes = (const unsigned char *)binary + sizeof header;
    if (memcmp(header.magic, BINARY_MAGIC, sizeof header.magic) != 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "this is not a program binary from gpukit's OpenCL driver: build from "
                       "source on %s",
                       dev->name);
    if (header.architecture != dev->architecture)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "this program binary was built for another OpenCL device or driver "
                       "version: build from source on %s",
                       dev->name);
    if (header.size != size - sizeof header || XXH3_64bits(bytes, size - sizeof header) !=
                                                   header.checksum)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "this program binary is damaged (truncated or changed): build from "
                       "source on %s",
                       dev->name);
    *payload = bytes;
    *length = size - sizeof header;
    return GK_OK;
}

static void opencl_unload(gk_device device, gk_gpu_module *module);

static gk_status opencl_build(gk_device device, gk_gpu_language language, const char *source,
                              const char *options, gk_gpu_module **module, void **binary,
                              size_t *size)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    gk_status status = ready_device(device, &cl, &dev);
    if (status != GK_OK)
        return status;
    if (language != GK_GPU_PORTABLE)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s cannot compile CUDA C++: write the kernel in gpukit's portable dialect "
                       "(compute/kernels/dialect.h) to run it on OpenCL devices",
                       dev->name);
    cl_int err = CL_SUCCESS;
    cl_program program = cl->CreateProgramWithSource(dev->context, 1, &source, NULL, &err);
    if (!program || err != CL_SUCCESS)
        return cl_failure(err, dev->name, "creating a program from source");
    gk_gpu_module *m;
    status = build_program(cl, dev, program, options, GK_ERR_INVALID_ARGUMENT,
                           "compiling an OpenCL kernel", &m);
    if (status != GK_OK)
        return status;
    if (binary) {
        status = program_binary(cl, dev, m->program, binary, size);
        if (status != GK_OK) {
            opencl_unload(device, m);
            return status;
        }
    }
    *module = m;
    return GK_OK;
}

static gk_status opencl_load(gk_device device, const void *binary, size_t size,
                             gk_gpu_module **module)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    gk_status status = ready_device(device, &cl, &dev);
    if (status != GK_OK)
        return status;
    const unsigned char *bytes;
    size_t length;
    status = unwrap_binary(dev, binary, size, &bytes, &length);
    if (status != GK_OK)
        return status;
    cl_int binary_status = CL_SUCCESS, err = CL_SUCCESS;
    cl_program program = cl->CreateProgramWithBinary(dev->context, 1, &dev->id, &length, &bytes,
                                                     &binary_status, &err);
    if (!program || err != CL_SUCCESS || binary_status != CL_SUCCESS) {
        if (program)
            cl->ReleaseProgram(program);
        cl_int why = err != CL_SUCCESS ? err : binary_status;
        status = why == CL_OUT_OF_HOST_MEMORY ? GK_ERR_OUT_OF_MEMORY : GK_ERR_INVALID_ARGUMENT;
        return gk_fail(status,
                       "the OpenCL driver of %s rejects this %zu-byte program binary (%s): "
                       "build from source",
                       dev->name, length, gk_opencl_error_name(why));
    }
    return build_program(cl, dev, program, NULL, GK_ERR_INVALID_ARGUMENT,
                         "loading a program binary", module);
}

static void opencl_unload(gk_device device, gk_gpu_module *module)
{
    (void)device;
    const gk_opencl *cl;
    if (!module || gk_opencl_get(&cl) != GK_OK)
        return;
    for (gk_gpu_function *f = module->functions, *next; f; f = next) {
        next = f->next;
        cl->ReleaseKernel(f->kernel);
        free(f->params);
        pthread_mutex_destroy(&f->lock);
        free(f);
    }
    cl->ReleaseProgram(module->program);
    pthread_mutex_destroy(&module->lock);
    free(module);
}

/* The by-value types a scalar argument can be checked against: OpenCL
 * C's integers and floats and dialect.h's names for them (the driver
 * reports a typedef by its own name). Others (structs) stay unknown. */
static void classify_value(const char *type, gk_gpu_param *param)
{
    static const struct {
        const char *name;
        gk_gpu_param_kind kind;
        size_t size;
    } known[] = {
        {"char", GK_GPU_PARAM_INTEGER, 1},   {"uchar", GK_GPU_PARAM_INTEGER, 1},
        {"gk_i8", GK_GPU_PARAM_INTEGER, 1},  {"gk_u8", GK_GPU_PARAM_INTEGER, 1},
        {"short", GK_GPU_PARAM_INTEGER, 2},  {"ushort", GK_GPU_PARAM_INTEGER, 2},
        {"gk_i16", GK_GPU_PARAM_INTEGER, 2}, {"gk_u16", GK_GPU_PARAM_INTEGER, 2},
        {"gk_f16", GK_GPU_PARAM_INTEGER, 2}, {"gk_bf16", GK_GPU_PARAM_INTEGER, 2},
        {"int", GK_GPU_PARAM_INTEGER, 4},    {"uint", GK_GPU_PARAM_INTEGER, 4},
        {"gk_i32", GK_GPU_PARAM_INTEGER, 4}, {"gk_u32", GK_GPU_PARAM_INTEGER, 4},
        {"long", GK_GPU_PARAM_INTEGER, 8},   {"ulong", GK_GPU_PARAM_INTEGER, 8},
        {"gk_i64", GK_GPU_PARAM_INTEGER, 8}, {"gk_u64", GK_GPU_PARAM_INTEGER, 8},
        {"half", GK_GPU_PARAM_FLOAT, 2},     {"float", GK_GPU_PARAM_FLOAT, 4},
        {"double", GK_GPU_PARAM_FLOAT, 8},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(type, known[i].name) == 0) {
            param->kind = known[i].kind;
            param->size = known[i].size;
            return;
        }
    }
}

/* The parameters of `kernel` as the driver describes them (malloc'd,
 * `count` entries), or NULL when it does not (a program built without
 * -cl-kernel-arg-info, or a driver that ignores it). */
static gk_gpu_param *describe_parameters(const gk_opencl *cl, cl_kernel kernel, int count)
{
    if (count <= 0)
        return NULL;
    gk_gpu_param *params = calloc((size_t)count, sizeof *params);
    if (!params)
        return NULL;
    for (int i = 0; i < count; i++) {
        gk_gpu_param *param = &params[i];
        cl_uint address = 0;
        if (cl->GetKernelArgInfo(kernel, (cl_uint)i, CL_KERNEL_ARG_ADDRESS_QUALIFIER,
                                 sizeof address, &address, NULL) != CL_SUCCESS ||
            cl->GetKernelArgInfo(kernel, (cl_uint)i, CL_KERNEL_ARG_TYPE_NAME,
                                 sizeof param->type, param->type, NULL) != CL_SUCCESS) {
            free(params);
            return NULL;
        }
        param->type[sizeof param->type - 1] = 0;
        if (address == CL_KERNEL_ARG_ADDRESS_GLOBAL || address == CL_KERNEL_ARG_ADDRESS_CONSTANT)
            param->kind = GK_GPU_PARAM_BUFFER;
        else if (address == CL_KERNEL_ARG_ADDRESS_LOCAL)
            param->kind = GK_GPU_PARAM_LOCAL;
        else
            classify_value(param->type, param);
    }
    return params;
}

static void opencl_parameter(const gk_gpu_function *function, int index, gk_gpu_param *param)
{
    *param = (gk_gpu_param){.kind = GK_GPU_PARAM_UNKNOWN};
    if (function->params && index >= 0 && index < function->parameters)
        *param = function->params[index];
}

static gk_status opencl_function(gk_device device, gk_gpu_module *module, const char *name,
                                 gk_gpu_function **function)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    gk_status status = find_device(device, &cl, &dev);
    if (status != GK_OK)
        return status;
    if (module->device != dev)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "the program was built for %s, not %s",
                       module->device->name, dev->name);
    pthread_mutex_lock(&module->lock);
    gk_gpu_function *f = module->functions;
    while (f && strcmp(f->name, name) != 0)
        f = f->next;
    if (!f) {
        cl_int err = CL_SUCCESS;
        cl_kernel kernel = cl->CreateKernel(module->program, name, &err);
        if (!kernel || err != CL_SUCCESS) {
            status = err == CL_INVALID_KERNEL_NAME
                         ? gk_fail(GK_ERR_NOT_FOUND,
                                   "the program on %s has no kernel named '%s' (a GK_KERNEL "
                                   "function of that name)",
                                   dev->name, name)
                         : cl_failure(err, dev->name, "creating kernel '%s'", name);
        } else if (!(f = calloc(1, sizeof *f + strlen(name) + 1))) {
            cl->ReleaseKernel(kernel);
            status = gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory for kernel '%s'", name);
        } else {
            f->device = dev;
            f->kernel = kernel;
            /* Arguments stay set on a kernel between launches, so a launch
             * with too few would silently reuse old ones: count them. */
            cl_uint parameters = 0;
            f->parameters = cl->GetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof parameters,
                                              &parameters, NULL) == CL_SUCCESS
                                ? (int)parameters
                                : -1;
            f->params = describe_parameters(cl, kernel, f->parameters);
            cl_ulong local_bytes = 0;
            f->local_bytes = cl->GetKernelWorkGroupInfo(kernel, dev->id, CL_KERNEL_LOCAL_MEM_SIZE,
                                                        sizeof local_bytes, &local_bytes,
                                                        NULL) == CL_SUCCESS
                                 ? local_bytes
                                 : 0;
            pthread_mutex_init(&f->lock, NULL);
            strcpy(f->name, name);
            f->next = module->functions;
            module->functions = f;
        }
    }
    pthread_mutex_unlock(&module->lock);
    if (status == GK_OK)
        *function = f;
    return status;
}

/* ------------------------------------------------------------------ */
/* Streams and launches                                                 */
/* ------------------------------------------------------------------ */

struct gk_gpu_stream {
    cl_command_queue queue;
};

static cl_command_queue queue_of(const ocl_device *dev, const gk_gpu_stream *stream)
{
    return stream ? stream->queue : dev->queue;
}

/* Far more than any kernel takes (OpenCL devices may limit all parameters
 * together to 1 KiB). */
#define MAX_KERNEL_ARGS 128

/* The cl_mem to pass for a buffer argument: the allocation itself at
 * offset 0, else a sub-buffer starting at the offset (*made set: the
 * caller releases it). */
static gk_status buffer_argument(const gk_opencl *cl, ocl_device *dev, int index,
                                 const char *address, cl_mem *mem, int *made)
{
    *made = 0;
    *mem = NULL;
    if (!address)
        return GK_OK; /* a NULL pointer in the kernel */
    ocl_place place;
    gk_status status = find_place(dev, address, &place);
    if (status != GK_OK)
        return gk_fail(status, "kernel argument %d: %s", index, gk_last_error());
    if (place.offset == 0) {
        *mem = place.mem;
        return GK_OK;
    }
    if (place.offset >= place.size)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel argument %d is at byte offset %zu of a %zu-byte allocation on %s: "
                       "nothing of it is left to pass",
                       index, place.offset, place.size, dev->name);
    if (place.offset % dev->base_align != 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel argument %d starts at byte offset %zu of its allocation on %s, "
                       "which OpenCL cannot pass as a buffer (offsets must be multiples of %zu "
                       "bytes, CL_DEVICE_MEM_BASE_ADDR_ALIGN): pass a copy (gk_copy), or the "
                       "allocation and the offset as separate arguments",
                       index, place.offset, dev->name, dev->base_align);
    cl_buffer_region region = {.origin = place.offset, .size = place.size - place.offset};
    cl_int err = CL_SUCCESS;
    *mem = cl->CreateSubBuffer(place.mem, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (!*mem || err != CL_SUCCESS)
        return cl_failure(err, dev->name,
                          "passing kernel argument %d (a sub-buffer at byte offset %zu)", index,
                          place.offset);
    *made = 1;
    return GK_OK;
}

static gk_status opencl_launch(gk_device device, gk_gpu_function *function, const size_t groups[3],
                               const size_t local[3], int count, const gk_gpu_arg *args,
                               gk_gpu_stream *stream)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    gk_status status = ready_device(device, &cl, &dev);
    if (status != GK_OK)
        return status;
    if (function->device != dev)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "kernel '%s' was built for %s, not %s",
                       function->name, function->device->name, dev->name);
    if (count < 0 || count > MAX_KERNEL_ARGS)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "kernel '%s' given %d arguments (at most %d)",
                       function->name, count, MAX_KERNEL_ARGS);
    if (function->parameters >= 0 && count != function->parameters)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "kernel '%s' takes %d argument%s, not %d",
                       function->name, function->parameters,
                       function->parameters == 1 ? "" : "s", count);
    /* The driver is not trusted to refuse a kernel whose GK_LOCAL arrays
     * outgrow the device's local memory: PoCL aborts the process on it. */
    if (dev->local_bytes && function->local_bytes > dev->local_bytes)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "kernel '%s' uses %llu bytes of local memory (GK_LOCAL arrays) per "
                       "work-group but %s has %llu; use smaller GK_LOCAL arrays",
                       function->name, (unsigned long long)function->local_bytes, dev->name,
                       (unsigned long long)dev->local_bytes);
    size_t global[3];
    int empty = 0;
    for (int d = 0; d < 3; d++) {
        if (local[d] == 0)
            return gk_fail(GK_ERR_INVALID_ARGUMENT,
                           "kernel '%s': the work-group size in dimension %d is 0 (use 1)",
                           function->name, d);
        if (groups[d] > SIZE_MAX / local[d])
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "kernel '%s': %zu groups of %zu work-items "
                           "overflow in dimension %d", function->name, groups[d], local[d], d);
        global[d] = groups[d] * local[d];
        empty |= groups[d] == 0;
    }
    if (empty)
        return GK_OK; /* OpenCL 1.2 refuses empty ranges; there is nothing to run */

    /* Buffers are resolved before taking the kernel's lock, so that lock is
     * held only while the arguments are set and the kernel is queued. */
    cl_mem mems[MAX_KERNEL_ARGS];
    int made[MAX_KERNEL_ARGS] = {0};
    for (int i = 0; i < count && status == GK_OK; i++)
        if (args[i].kind == GK_GPU_ARG_BUFFER)
            status = buffer_argument(cl, dev, i, args[i].address, &mems[i], &made[i]);

    if (status == GK_OK) {
        pthread_mutex_lock(&function->lock);
        cl_int err = CL_SUCCESS;
        int failed_arg = -1;
        for (int i = 0; i < count && err == CL_SUCCESS; i++) {
            if (args[i].kind == GK_GPU_ARG_BUFFER)
                err = cl->SetKernelArg(function->kernel, (cl_uint)i, sizeof(cl_mem),
                                       mems[i] ? &mems[i] : NULL);
            else
                err = cl->SetKernelArg(function->kernel, (cl_uint)i, args[i].size, args[i].value);
            if (err != CL_SUCCESS)
                failed_arg = i;
        }
        if (err == CL_SUCCESS)
            err = cl->EnqueueNDRangeKernel(queue_of(dev, stream), function->kernel, 3, NULL,
                                           global, local, 0, NULL, NULL);
        pthread_mutex_unlock(&function->lock);
        if (err != CL_SUCCESS && failed_arg >= 0)
            status = cl_failure(err, dev->name, "setting argument %d of kernel '%s' (%zu bytes)",
                                failed_arg, function->name,
                                args[failed_arg].kind == GK_GPU_ARG_BUFFER ? sizeof(cl_mem)
                                                                           : args[failed_arg].size);
        else if (err != CL_SUCCESS)
            status = cl_failure(err, dev->name,
                                "launching kernel '%s' on %zu x %zu x %zu groups of %zu x %zu x "
                                "%zu work-items",
                                function->name, groups[0], groups[1], groups[2], local[0],
                                local[1], local[2]);
    }
    /* The queued kernel keeps its own reference to each sub-buffer. */
    for (int i = 0; i < count; i++)
        if (made[i])
            cl->ReleaseMemObject(mems[i]);
    return status;
}

static gk_status opencl_stream_create(gk_device device, gk_gpu_stream **stream)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    gk_status status = ready_device(device, &cl, &dev);
    if (status != GK_OK)
        return status;
    gk_gpu_stream *s = calloc(1, sizeof *s);
    if (!s)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory for a stream on %s", dev->name);
    cl_int err = CL_SUCCESS;
    s->queue = cl->CreateCommandQueue(dev->context, dev->id, 0, &err);
    if (!s->queue || err != CL_SUCCESS) {
        free(s);
        return cl_failure(err, dev->name, "creating a command queue");
    }
    *stream = s;
    return GK_OK;
}

static gk_status opencl_stream_synchronize(gk_device device, gk_gpu_stream *stream)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    gk_status status = ready_device(device, &cl, &dev);
    if (status != GK_OK)
        return status;
    cl_int err = cl->Finish(queue_of(dev, stream));
    if (err != CL_SUCCESS)
        return cl_failure(err, dev->name, "waiting for a stream");
    return GK_OK;
}

static void opencl_stream_destroy(gk_device device, gk_gpu_stream *stream)
{
    (void)device;
    const gk_opencl *cl;
    if (!stream || gk_opencl_get(&cl) != GK_OK)
        return;
    /* Work already queued finishes first, as with cuStreamDestroy. */
    cl->Finish(stream->queue);
    cl->ReleaseCommandQueue(stream->queue);
    free(stream);
}

static gk_status opencl_stream_order(gk_device device, gk_gpu_stream *later, gk_gpu_stream *earlier)
{
    const gk_opencl *cl;
    ocl_device *dev = NULL;
    gk_status status = ready_device(device, &cl, &dev);
    if (status != GK_OK)
        return status;
    cl_command_queue first = queue_of(dev, earlier), then = queue_of(dev, later);
    if (first == then)
        return GK_OK; /* one in-order queue orders itself */
    cl_event done = NULL;
    cl_int err = cl->EnqueueMarkerWithWaitList(first, 0, NULL, &done);
    /* The marker must reach the device before another queue waits for it,
     * or a driver may wait forever on a command it never submitted. */
    if (err == CL_SUCCESS)
        err = cl->Flush(first);
    if (err == CL_SUCCESS)
        err = cl->EnqueueBarrierWithWaitList(then, 1, &done, NULL);
    if (done)
        cl->ReleaseEvent(done);
    if (err != CL_SUCCESS)
        return cl_failure(err, dev->name, "ordering two streams");
    return GK_OK;
}

const gk_gpu_driver gk_opencl_driver = {
    .kind = GK_DEVICE_OPENCL,
    .name = "OpenCL",
    .list = opencl_list,
    .check = opencl_check,
    .describe = opencl_describe,
    .memory = opencl_memory,
    .info = opencl_info,
    .allocate = opencl_allocate,
    .free = opencl_free,
    .resolve = opencl_resolve,
    .upload = opencl_upload,
    .download = opencl_download,
    .copy = opencl_copy,
    .lend_host = opencl_lend_host,
    .return_host = opencl_return_host,
    .synchronize = opencl_synchronize,
    .build = opencl_build,
    .load = opencl_load,
    .unload = opencl_unload,
    .function = opencl_function,
    .parameter = opencl_parameter,
    .launch = opencl_launch,
    .stream_create = opencl_stream_create,
    .stream_synchronize = opencl_stream_synchronize,
    .stream_destroy = opencl_stream_destroy,
    .stream_order = opencl_stream_order,
    .blas_matmul = NULL,
    .fft = NULL,    /* no OpenCL FFT or LAPACK library is well kept: */
    .solver = NULL, /* the host computes */
    .prebuilt = NULL,
};
