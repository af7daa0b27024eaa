/* A fake CUDA driver (libcuda.so.1) for tests: gpukit loads it through its
 * real dlopen path (GPUKIT_CUDA_LIBRARY) and cannot tell it from a driver
 * with one small GPU-less GPU.
 *
 * FAKE_CUDA_MODE selects what it does:
 *   ok          (the default) one device, "Fake H100", compute capability
 *               FAKE_CUDA_CC ("9.0" unless set), 80 GiB, 132 SMs;
 *   init_fails  cuInit returns FAKE_CUDA_INIT_ERROR (a number; 100,
 *               CUDA_ERROR_NO_DEVICE, unless set).
 *
 * With FAKE_CUDA_NO_PINNED set, cuMemHostAlloc fails (out of memory), as
 * where the locked-memory limit is low.
 *
 * In "ok" mode device memory is host memory. Asynchronous copies are not
 * done when queued: each stream keeps them in order and does them when
 * something waits (cuStreamSynchronize, cuEventSynchronize, a stream
 * waiting for an event on it, cuStreamDestroy), like a slow GPU would. So
 * a caller that reuses a staging buffer, or reads results, before waiting
 * gets wrong data, and the tests see it. Kernel launches, and the fake
 * libraries' routines, queue a mark that does nothing, so that a wait
 * after them is one that blocks: fake_cuda_host_waits() counts those.
 *
 * cuModuleLoadData(Ex) takes PTX text only if it has .version and .target
 * lines (and, with FAKE_CUDA_MAX_PTX="X.Y", a .version no newer than that)
 * and records its `.entry NAME(params)` kernels with their parameter
 * sizes; it also takes cubins (ELF), recording their global functions.
 * cuModuleGetFunction finds only recorded kernels. cuLaunchKernel records
 * the launch (name, geometry, the bytes of each parameter) and runs
 * nothing. Calls that need a context fail with CUDA_ERROR_INVALID_CONTEXT
 * when the calling thread has none pushed.
 *
 * Built with FAKE_CUDA_WITHOUT_LAUNCH, it lacks cuLaunchKernel, like a
 * driver too old for gpukit.
 *
 * fake_cuda_* functions let a test look inside (it dlopens the same file
 * and finds them with dlsym). */
#define _GNU_SOURCE
#include <elf.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
    SUCCESS = 0,
    INVALID_VALUE = 1,
    OUT_OF_MEMORY = 2,
    NOT_INITIALIZED = 3,
    NO_DEVICE = 100,
    INVALID_DEVICE = 101,
    INVALID_IMAGE = 200,
    INVALID_CONTEXT = 201,
    INVALID_PTX = 218,
    UNSUPPORTED_PTX_VERSION = 222,
    INVALID_HANDLE = 400,
    NOT_FOUND = 500,
    UNKNOWN = 999,
};

#define TOTAL_MEMORY (80ull << 30)
#define MAX_ENTRIES 256
#define MAX_PARAMS 64
#define MAX_PARAM_BYTES 8192

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static unsigned long long allocated;
static long live_allocations, live_pinned;
static int misuses;
static int default_stream_waits; /* cuStreamSynchronize of handle 1 or 2 */
static int host_waits;           /* waits that had queued work to finish */
static char last_misuse[256];

static void misuse(const char *what)
{
    misuses++;
    snprintf(last_misuse, sizeof last_misuse, "%s", what);
}

/* --- contexts: a per-thread stack depth, one primary context --- */

struct CUctx_st {
    int retained;
};
static struct CUctx_st primary;
static _Thread_local int context_depth;

#define NEED_INIT()                 \
    do {                            \
        if (!initialized)           \
            return NOT_INITIALIZED; \
    } while (0)

#define NEED_CONTEXT()              \
    do {                            \
        if (!initialized)           \
            return NOT_INITIALIZED; \
        if (context_depth == 0)     \
            return INVALID_CONTEXT; \
    } while (0)

/* --- streams: queued copies done when waited for --- */

typedef struct op {
    void *to;
    const void *from;
    size_t bytes;
} op;

struct CUstream_st {
    int id;
    op *ops;
    size_t count, done, capacity;
    unsigned long long base; /* sequence number of ops[0] */
    struct CUstream_st *next;
};
static struct CUstream_st *streams;
static int next_stream_id = 1;
/* The legacy default stream, handles 0 and 1 (and the per-thread one,
 * handle 2, taken as the same): other libraries' work, queued through
 * these handles by the tests. gpukit's streams are non-blocking, so it
 * is ordered against neither. */
static struct CUstream_st legacy_stream = {.id = -1};

/* The stream a handle names. */
static struct CUstream_st *resolve(struct CUstream_st *handle)
{
    uintptr_t value = (uintptr_t)handle;
    return value <= 2 ? &legacy_stream : handle;
}

struct CUevent_st {
    int stream_id; /* 0: never recorded */
    unsigned long long mark;
};

static struct CUstream_st *find_stream(int id)
{
    for (struct CUstream_st *s = streams; s; s = s->next)
        if (s->id == id)
            return s;
    return id == legacy_stream.id ? &legacy_stream : NULL;
}

/* Does the queued copies of `s` with sequence numbers below `mark`. */
static void run_until(struct CUstream_st *s, unsigned long long mark)
{
    while (s->done < s->count && s->base + s->done < mark) {
        op *o = &s->ops[s->done++];
        if (o->bytes) /* 0: a kernel's or a library routine's mark */
            memcpy(o->to, o->from, o->bytes);
    }
    if (s->done == s->count) {
        s->base += s->count;
        s->count = s->done = 0;
    }
}

static CUresult enqueue(struct CUstream_st *s, void *to, const void *from, size_t bytes)
{
    if (!s)
        return INVALID_HANDLE;
    if (s->count == s->capacity) {
        size_t capacity = s->capacity ? 2 * s->capacity : 16;
        op *grown = realloc(s->ops, capacity * sizeof *grown);
        if (!grown)
            return OUT_OF_MEMORY;
        s->ops = grown;
        s->capacity = capacity;
    }
    s->ops[s->count++] = (op){to, from, bytes};
    return SUCCESS;
}

/* Whether queued work still reads or writes [p, p + bytes). */
static int pending_in(const struct CUstream_st *s, const char *p, size_t bytes)
{
    for (size_t i = s->done; i < s->count; i++) {
        const char *to = s->ops[i].to, *from = s->ops[i].from;
        if ((to < p + bytes && p < to + s->ops[i].bytes) ||
            (from < p + bytes && p < from + s->ops[i].bytes))
            return 1;
    }
    return 0;
}

static int pending_on(const char *p, size_t bytes)
{
    for (struct CUstream_st *s = streams; s; s = s->next)
        if (pending_in(s, p, bytes))
            return 1;
    return pending_in(&legacy_stream, p, bytes);
}

/* --- modules --- */

typedef struct entry {
    char name[128];
    int params;
    size_t sizes[MAX_PARAMS]; /* 0 when unknown (cubins) */
} entry;

struct CUmod_st {
    int count;
    entry entries[MAX_ENTRIES];
};

/* --- launches --- */

static int launches;
static char launch_name[128];
static unsigned launch_dims[6];
static unsigned char launch_params[MAX_PARAM_BYTES];
static size_t launch_params_size;
static void *launch_stream;

/* ---------------------------------------------------------------- */

static const char *mode(void)
{
    const char *m = getenv("FAKE_CUDA_MODE");
    return m && *m ? m : "ok";
}

EXPORT CUresult cuInit(unsigned int flags)
{
    if (flags != 0)
        return INVALID_VALUE;
    if (strcmp(mode(), "init_fails") == 0) {
        const char *code = getenv("FAKE_CUDA_INIT_ERROR");
        return code && *code ? atoi(code) : NO_DEVICE;
    }
    initialized = 1;
    return SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *version)
{
    *version = 13000;
    return SUCCESS;
}

static const struct {
    CUresult code;
    const char *name, *text;
} errors[] = {
    {SUCCESS, "CUDA_SUCCESS", "no error"},
    {INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER", "driver too old"},
    {NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"},
    {INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

EXPORT CUresult cuGetErrorName(CUresult error, const char **name)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == error) {
            *name = errors[i].name;
            return SUCCESS;
        }
    *name = NULL;
    return INVALID_VALUE;
}

EXPORT CUresult cuGetErrorString(CUresult error, const char **text)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == error) {
            *text = errors[i].text;
            return SUCCESS;
        }
    *text = NULL;
    return INVALID_VALUE;
}

/* NVRTC (13 at least) opens libcuda.so.1 when it is loaded in the
 * process, which is this fake then, and asks it for the driver's private
 * tables; a driver without them is fine for it. */
EXPORT CUresult cuGetExportTable(const void **table, const void *id)
{
    (void)id;
    *table = NULL;
    return 801; /* CUDA_ERROR_NOT_SUPPORTED */
}

EXPORT CUresult cuDeviceGetCount(int *count)
{
    NEED_INIT();
    *count = 1;
    return SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    NEED_INIT();
    if (ordinal != 0)
        return INVALID_DEVICE;
    *device = 0;
    return SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int length, CUdevice device)
{
    NEED_INIT();
    if (device != 0)
        return INVALID_DEVICE;
    snprintf(name, (size_t)length, "Fake H100");
    return SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device)
{
    NEED_INIT();
    if (device != 0)
        return INVALID_DEVICE;
    int major = 9, minor = 0;
    const char *cc = getenv("FAKE_CUDA_CC");
    if (cc && *cc)
        sscanf(cc, "%d.%d", &major, &minor);
    switch (attribute) {
    case 1: *value = 1024; return SUCCESS;   /* max threads per block */
    case 8: *value = 49152; return SUCCESS;  /* shared memory per block */
    case 16: *value = 132; return SUCCESS;   /* multiprocessors */
    case 75: *value = major; return SUCCESS; /* compute capability */
    case 76: *value = minor; return SUCCESS;
    }
    return INVALID_VALUE;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice device)
{
    NEED_INIT();
    if (device != 0)
        return INVALID_DEVICE;
    *bytes = TOTAL_MEMORY;
    return SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(struct CUctx_st **context, CUdevice device)
{
    NEED_INIT();
    if (device != 0)
        return INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    primary.retained++;
    pthread_mutex_unlock(&lock);
    *context = &primary;
    return SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device)
{
    NEED_INIT();
    if (device != 0)
        return INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    primary.retained--;
    pthread_mutex_unlock(&lock);
    return SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent_v2(struct CUctx_st *context)
{
    NEED_INIT();
    if (context != &primary || primary.retained <= 0)
        return INVALID_CONTEXT;
    context_depth++;
    return SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(struct CUctx_st **context)
{
    NEED_INIT();
    if (context_depth == 0)
        return INVALID_CONTEXT;
    context_depth--;
    if (context)
        *context = &primary;
    return SUCCESS;
}

/* Device and pinned memory: host memory with its size in front. */
#define HEADER 64

static void *fake_alloc(size_t bytes)
{
    char *block = malloc(HEADER + bytes);
    if (!block)
        return NULL;
    memcpy(block, &bytes, sizeof bytes);
    return block + HEADER;
}

static size_t fake_size(const void *p)
{
    size_t bytes;
    memcpy(&bytes, (const char *)p - HEADER, sizeof bytes);
    return bytes;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    NEED_CONTEXT();
    pthread_mutex_lock(&lock);
    *free_bytes = TOTAL_MEMORY - allocated;
    *total_bytes = TOTAL_MEMORY;
    pthread_mutex_unlock(&lock);
    return SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *address, size_t bytes)
{
    NEED_CONTEXT();
    if (bytes == 0)
        return INVALID_VALUE;
    pthread_mutex_lock(&lock);
    int fits = bytes <= TOTAL_MEMORY - allocated;
    void *p = fits ? fake_alloc(bytes) : NULL;
    if (p) {
        allocated += bytes;
        live_allocations++;
    }
    pthread_mutex_unlock(&lock);
    if (!p)
        return OUT_OF_MEMORY;
    *address = (CUdeviceptr)(uintptr_t)p;
    return SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr address)
{
    NEED_CONTEXT();
    char *p = (char *)(uintptr_t)address;
    if (!p)
        return INVALID_VALUE;
    pthread_mutex_lock(&lock);
    if (pending_on(p, fake_size(p)))
        misuse("cuMemFree of memory that queued work still uses");
    allocated -= fake_size(p);
    live_allocations--;
    free(p - HEADER);
    pthread_mutex_unlock(&lock);
    return SUCCESS;
}

EXPORT CUresult cuMemHostAlloc(void **host, size_t bytes, unsigned int flags)
{
    (void)flags;
    NEED_CONTEXT();
    if (getenv("FAKE_CUDA_NO_PINNED"))
        return OUT_OF_MEMORY;
    void *p = fake_alloc(bytes);
    if (!p)
        return OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    live_pinned++;
    pthread_mutex_unlock(&lock);
    *host = p;
    return SUCCESS;
}

EXPORT CUresult cuMemFreeHost(void *host)
{
    NEED_INIT();
    pthread_mutex_lock(&lock);
    if (pending_on(host, fake_size(host)))
        misuse("cuMemFreeHost of memory that queued copies still read");
    live_pinned--;
    free((char *)host - HEADER);
    pthread_mutex_unlock(&lock);
    return SUCCESS;
}

EXPORT CUresult cuPointerGetAttribute(void *value, int attribute, CUdeviceptr pointer)
{
    NEED_INIT();
    /* Only the device ordinal (9); every non-NULL pointer is on the one
     * device. */
    if (attribute != 9 || !pointer)
        return INVALID_VALUE;
    *(int *)value = 0;
    return SUCCESS;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr to, const void *from, size_t bytes)
{
    NEED_CONTEXT();
    memcpy((void *)(uintptr_t)to, from, bytes);
    return SUCCESS;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *to, CUdeviceptr from, size_t bytes)
{
    NEED_CONTEXT();
    memcpy(to, (const void *)(uintptr_t)from, bytes);
    return SUCCESS;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr to, const void *from, size_t bytes,
                                     struct CUstream_st *stream)
{
    NEED_CONTEXT();
    pthread_mutex_lock(&lock);
    CUresult r = enqueue(resolve(stream), (void *)(uintptr_t)to, from, bytes);
    pthread_mutex_unlock(&lock);
    return r;
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *to, CUdeviceptr from, size_t bytes,
                                     struct CUstream_st *stream)
{
    NEED_CONTEXT();
    pthread_mutex_lock(&lock);
    CUresult r = enqueue(resolve(stream), to, (const void *)(uintptr_t)from, bytes);
    pthread_mutex_unlock(&lock);
    return r;
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr to, CUdeviceptr from, size_t bytes,
                                     struct CUstream_st *stream)
{
    NEED_CONTEXT();
    pthread_mutex_lock(&lock);
    CUresult r =
        enqueue(resolve(stream), (void *)(uintptr_t)to, (const void *)(uintptr_t)from, bytes);
    pthread_mutex_unlock(&lock);
    return r;
}

EXPORT CUresult cuStreamCreate(struct CUstream_st **stream, unsigned int flags)
{
    NEED_CONTEXT();
    if (flags != 1) /* gpukit's streams are non-blocking */
        return INVALID_VALUE;
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s)
        return OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    s->id = next_stream_id++;
    s->next = streams;
    streams = s;
    pthread_mutex_unlock(&lock);
    *stream = s;
    return SUCCESS;
}

EXPORT CUresult cuStreamDestroy_v2(struct CUstream_st *stream)
{
    NEED_CONTEXT();
    pthread_mutex_lock(&lock);
    struct CUstream_st **link = &streams;
    while (*link && *link != stream)
        link = &(*link)->next;
    if (!*link) {
        pthread_mutex_unlock(&lock);
        return INVALID_HANDLE;
    }
    run_until(stream, ~0ull);
    *link = stream->next;
    pthread_mutex_unlock(&lock);
    free(stream->ops);
    free(stream);
    return SUCCESS;
}

/* Whether `s` has queued work not done yet. */
static int busy(const struct CUstream_st *s)
{
    return s->done < s->count;
}

/* For the fake libraries' routines, which run on the host at once: does
 * everything queued on `stream` before (no wait of the caller's), then
 * queues the routine's mark, which a wait after it finds. */
EXPORT void fake_cuda_run_on(struct CUstream_st *stream)
{
    pthread_mutex_lock(&lock);
    for (struct CUstream_st *s = streams; s; s = s->next)
        if (s == stream) {
            run_until(s, ~0ull);
            enqueue(s, NULL, NULL, 0);
        }
    pthread_mutex_unlock(&lock);
}

EXPORT CUresult cuStreamSynchronize(struct CUstream_st *stream)
{
    NEED_CONTEXT();
    pthread_mutex_lock(&lock);
    /* the legacy and per-thread default streams: CUDA array interface
     * producers name them */
    default_stream_waits += resolve(stream) == &legacy_stream;
    stream = resolve(stream);
    host_waits += busy(stream);
    run_until(stream, ~0ull);
    pthread_mutex_unlock(&lock);
    return SUCCESS;
}

EXPORT CUresult cuCtxSynchronize(void)
{
    NEED_CONTEXT();
    pthread_mutex_lock(&lock);
    for (struct CUstream_st *s = streams; s; s = s->next) {
        host_waits += busy(s);
        run_until(s, ~0ull);
    }
    host_waits += busy(&legacy_stream);
    run_until(&legacy_stream, ~0ull);
    pthread_mutex_unlock(&lock);
    return SUCCESS;
}

EXPORT CUresult cuEventCreate(struct CUevent_st **event, unsigned int flags)
{
    (void)flags;
    NEED_CONTEXT();
    *event = calloc(1, sizeof **event);
    return *event ? SUCCESS : OUT_OF_MEMORY;
}

EXPORT CUresult cuEventDestroy_v2(struct CUevent_st *event)
{
    NEED_CONTEXT();
    free(event);
    return SUCCESS;
}

EXPORT CUresult cuEventRecord(struct CUevent_st *event, struct CUstream_st *stream)
{
    NEED_CONTEXT();
    stream = resolve(stream);
    pthread_mutex_lock(&lock);
    event->stream_id = stream->id;
    event->mark = stream->base + stream->count;
    pthread_mutex_unlock(&lock);
    return SUCCESS;
}

/* Does the work queued before `event`; returns whether there was any. */
static int complete_event(struct CUevent_st *event)
{
    pthread_mutex_lock(&lock);
    struct CUstream_st *s = find_stream(event->stream_id);
    int waited = s && busy(s) && s->base + s->done < event->mark;
    if (s)
        run_until(s, event->mark);
    pthread_mutex_unlock(&lock);
    return waited;
}

EXPORT CUresult cuEventSynchronize(struct CUevent_st *event)
{
    NEED_CONTEXT();
    int waited = complete_event(event);
    pthread_mutex_lock(&lock);
    host_waits += waited;
    pthread_mutex_unlock(&lock);
    return SUCCESS;
}

EXPORT CUresult cuStreamWaitEvent(struct CUstream_st *stream, struct CUevent_st *event,
                                  unsigned int flags)
{
    (void)stream; /* any, the legacy one (0, 1, 2) too */
    NEED_CONTEXT();
    if (flags != 0)
        return INVALID_VALUE;
    /* Work queued on `stream` from now on comes after the event: doing
     * the event's work now keeps that order. */
    complete_event(event);
    return SUCCESS;
}

/* --- modules --- */

static int valid_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$';
}

/* The bytes of one `.param [.align N] .TYPE NAME[[count]]` declaration. */
static size_t param_size(const char *text, const char *end)
{
    const char *type = NULL;
    for (const char *p = text; p < end; p++)
        if (*p == '.' && strncmp(p, ".param", 6) != 0 && strncmp(p, ".align", 6) != 0 &&
            strncmp(p, ".ptr", 4) != 0) {
            type = p;
            break;
        }
    if (!type)
        return 0;
    int bits = 0;
    sscanf(type + 2, "%d", &bits); /* .u64, .b8, .f32 ... */
    size_t count = 1;
    for (const char *p = type; p < end; p++)
        if (*p == '[') {
            count = strtoull(p + 1, NULL, 10);
            break;
        }
    return (size_t)bits / 8 * count;
}

static CUresult load_ptx(struct CUmod_st *m, const char *text, char *log, size_t log_size)
{
    const char *version = strstr(text, ".version");
    if (!version || !strstr(text, ".target")) {
        snprintf(log, log_size, "fake ptxas: this is not PTX (no .version and .target lines)");
        return INVALID_PTX;
    }
    const char *max = getenv("FAKE_CUDA_MAX_PTX");
    if (max && *max) {
        int major = 0, minor = 0, max_major = 0, max_minor = 0;
        sscanf(version + 8, " %d.%d", &major, &minor);
        sscanf(max, "%d.%d", &max_major, &max_minor);
        if (major * 100 + minor > max_major * 100 + max_minor) {
            snprintf(log, log_size, "fake ptxas: PTX .version %d.%d is newer than %s", major,
                     minor, max);
            return UNSUPPORTED_PTX_VERSION;
        }
    }
    for (const char *p = strstr(text, ".entry"); p; p = strstr(p + 1, ".entry")) {
        const char *name = p + 6;
        while (*name == ' ' || *name == '\t')
            name++;
        const char *end = name;
        while (valid_name_char(*end))
            end++;
        if (end == name || m->count == MAX_ENTRIES)
            continue;
        entry *e = &m->entries[m->count++];
        snprintf(e->name, sizeof e->name, "%.*s", (int)(end - name), name);
        const char *open = end;
        while (*open == ' ' || *open == '\t' || *open == '\n')
            open++;
        if (*open != '(')
            continue;
        const char *close = strchr(open, ')');
        if (!close)
            continue;
        for (const char *decl = strstr(open, ".param");
             decl && decl < close && e->params < MAX_PARAMS; decl = strstr(decl + 1, ".param")) {
            const char *stop = decl + 1;
            while (stop < close && *stop != ',')
                stop++;
            e->sizes[e->params++] = param_size(decl, stop);
        }
    }
    return SUCCESS;
}

static CUresult load_cubin(struct CUmod_st *m, const unsigned char *image, char *log,
                           size_t log_size)
{
    const Elf64_Ehdr *header = (const Elf64_Ehdr *)image;
    if (header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_shentsize != sizeof(Elf64_Shdr)) {
        snprintf(log, log_size, "fake loader: not a 64-bit ELF cubin");
        return INVALID_IMAGE;
    }
    const Elf64_Shdr *sections = (const Elf64_Shdr *)(image + header->e_shoff);
    for (int i = 0; i < header->e_shnum; i++) {
        if (sections[i].sh_type != SHT_SYMTAB)
            continue;
        const Elf64_Sym *symbols = (const Elf64_Sym *)(image + sections[i].sh_offset);
        const char *names = (const char *)image + sections[sections[i].sh_link].sh_offset;
        size_t count = sections[i].sh_size / sizeof(Elf64_Sym);
        for (size_t j = 0; j < count && m->count < MAX_ENTRIES; j++)
            if (ELF64_ST_TYPE(symbols[j].st_info) == STT_FUNC &&
                ELF64_ST_BIND(symbols[j].st_info) == STB_GLOBAL) {
                entry *e = &m->entries[m->count++];
                snprintf(e->name, sizeof e->name, "%s", names + symbols[j].st_name);
            }
    }
    return SUCCESS;
}

EXPORT CUresult cuModuleLoadDataEx(struct CUmod_st **module, const void *image,
                                   unsigned int count, int *options, void **values)
{
    NEED_CONTEXT();
    char *log = NULL;
    size_t log_size = 0;
    for (unsigned int i = 0; i < count; i++) {
        if (options[i] == 5)
            log = values[i];
        else if (options[i] == 6)
            log_size = (size_t)(uintptr_t)values[i];
    }
    char scratch[256];
    if (!log || log_size == 0) {
        log = scratch;
        log_size = sizeof scratch;
    }
    log[0] = '\0';
    struct CUmod_st *m = calloc(1, sizeof *m);
    if (!m)
        return OUT_OF_MEMORY;
    /* Byte by byte, so a short text image is not read past its NUL. */
    const unsigned char *bytes = image;
    int elf = bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F';
    CUresult r = elf ? load_cubin(m, image, log, log_size) : load_ptx(m, image, log, log_size);
    if (r != SUCCESS) {
        free(m);
        return r;
    }
    *module = m;
    return SUCCESS;
}

EXPORT CUresult cuModuleUnload(struct CUmod_st *module)
{
    NEED_CONTEXT();
    free(module);
    return SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(entry **function, struct CUmod_st *module, const char *name)
{
    NEED_CONTEXT();
    if (!module)
        return INVALID_HANDLE;
    for (int i = 0; i < module->count; i++)
        if (strcmp(module->entries[i].name, name) == 0) {
            *function = &module->entries[i];
            return SUCCESS;
        }
    return NOT_FOUND;
}

#ifndef FAKE_CUDA_WITHOUT_LAUNCH
EXPORT CUresult cuLaunchKernel(entry *function, unsigned gx, unsigned gy, unsigned gz,
                               unsigned bx, unsigned by, unsigned bz, unsigned shared,
                               struct CUstream_st *stream, void **params, void **extra)
{
    (void)shared;
    NEED_CONTEXT();
    if (!function || extra)
        return INVALID_VALUE;
    if (function->params > 0 && !params)
        return INVALID_VALUE;
    pthread_mutex_lock(&lock);
    launches++;
    snprintf(launch_name, sizeof launch_name, "%s", function->name);
    unsigned dims[6] = {gx, gy, gz, bx, by, bz};
    memcpy(launch_dims, dims, sizeof dims);
    launch_stream = stream;
    if (resolve(stream) == &legacy_stream)
        enqueue(&legacy_stream, NULL, NULL, 0);
    for (struct CUstream_st *s = streams; s; s = s->next)
        if (s == stream)
            enqueue(s, NULL, NULL, 0);
    launch_params_size = 0;
    for (int i = 0; i < function->params; i++) {
        size_t size = function->sizes[i];
        if (launch_params_size + size > sizeof launch_params)
            break;
        memcpy(launch_params + launch_params_size, params[i], size);
        launch_params_size += size;
    }
    pthread_mutex_unlock(&lock);
    return SUCCESS;
}
#endif

/* --- for tests --- */

EXPORT int fake_cuda_context_depth(void)
{
    return context_depth;
}

/* How often a default stream (handle 1 or 2) was waited for. */
EXPORT int fake_cuda_default_stream_waits(void)
{
    return default_stream_waits;
}

/* How often the host waited for queued work (cuStreamSynchronize and
 * cuEventSynchronize that found some): a round trip each on a real GPU. */
EXPORT int fake_cuda_host_waits(void)
{
    pthread_mutex_lock(&lock);
    int waits = host_waits;
    pthread_mutex_unlock(&lock);
    return waits;
}

EXPORT long fake_cuda_live_allocations(void)
{
    return live_allocations;
}

EXPORT long fake_cuda_live_pinned(void)
{
    return live_pinned;
}

/* How many misuses were seen (the last one's text into buf). */
EXPORT int fake_cuda_misuses(char *buf, size_t size)
{
    pthread_mutex_lock(&lock);
    snprintf(buf, size, "%s", last_misuse);
    int n = misuses;
    pthread_mutex_unlock(&lock);
    return n;
}

/* How many launches there were; the last one's kernel name, grid and
 * block (dims[0..5]), stream and parameter bytes (each parameter's bytes
 * in order, as the PTX declares their sizes). */
EXPORT int fake_cuda_last_launch(char *name, size_t name_size, unsigned dims[6], void **stream,
                                 unsigned char *params, size_t *params_size)
{
    pthread_mutex_lock(&lock);
    snprintf(name, name_size, "%s", launch_name);
    memcpy(dims, launch_dims, sizeof launch_dims);
    *stream = launch_stream;
    size_t n = launch_params_size < *params_size ? launch_params_size : *params_size;
    memcpy(params, launch_params, n);
    *params_size = launch_params_size;
    int count = launches;
    pthread_mutex_unlock(&lock);
    return count;
}
