/*
 * fake_nvml.c - a stand-in for libnvidia-ml.so.1 that serves GPU "scenarios"
 * described in text files, so gpukit's NVML code can be tested on machines
 * without a GPU or an NVIDIA driver.
 *
 * Built twice (see CMakeLists.txt): the default build exports the symbol set
 * of a current driver; with -DFAKE_NVML_OLD only the unversioned (v1) entry
 * points are exported, to look like an old driver.
 *
 * Environment
 *   FAKE_NVML_SCENARIO  path of the scenario file.  It is (re)read whenever
 *                       nvmlInit* takes the init refcount from 0 to 1.  If it
 *                       is unset, unreadable or malformed, the problem is
 *                       printed as "fake-nvml: <file>:<line>: <problem>" and
 *                       init returns NVML_ERROR_UNKNOWN (999).
 *   FAKE_NVML_RELOAD    if set, nvmlDeviceGetCount re-reads the scenario
 *                       file whenever its modification time changed, so a
 *                       test can change the GPUs under a running monitor
 *                       (values, a GPU lost); a file that no longer parses
 *                       keeps the previous scenario.  Handles stay valid
 *                       while the number of GPUs does not shrink.
 *   FAKE_NVML_TRACE     if set, every exported call appends its NVML function
 *                       name and a newline to this file, so tests can check
 *                       which symbol versions the caller picked.
 *
 * Scenario format
 *   One record per line; '#' outside double quotes starts a comment; blank
 *   lines are ignored.  A record is a keyword followed by key=value tokens
 *   separated by blanks.  A value may be double-quoted to hold spaces or '#'
 *   (no escapes).  Unknown keywords, unknown keys and repeated keys are
 *   errors: this catches typos in scenarios instead of silently serving
 *   NOT_SUPPORTED.  Values of gpu, mig and system keys may be written !N
 *   (unquoted, N > 0): the NVML function serving the value then returns
 *   error N instead; "!N" in quotes is literal text.  A key that is absent
 *   makes its query return NVML_ERROR_NOT_SUPPORTED (3).  Numbers are
 *   non-negative decimals; integer outputs are rounded.
 *
 *   system driver=550.54.15 cuda=12040 nvml=12.550.54.15 [gpu_count=N]
 *       nvmlSystemGetDriverVersion / GetCudaDriverVersion(_v2) /
 *       GetNVMLVersion.  These defaults apply when the record is absent.
 *       gpu_count makes nvmlDeviceGetCount(_v2) report N GPUs whatever the
 *       gpu records say (a driver gone wrong; handles past the records are
 *       INVALID_ARGUMENT), so a caller's list of a billion GPUs fails to
 *       allocate.
 *   init error=N
 *       every nvmlInit* fails with N (9 DRIVER_NOT_LOADED, 4 NO_PERMISSION,
 *       18 LIB_RM_VERSION_MISMATCH, ...).
 *   gpu key=value ...
 *       a new GPU; its index is its order of appearance (at most 16).
 *       name uuid pci         strings; pci is a bus id like 00000000:18:00.0,
 *                             served in NVML's canonical upper-case form
 *       mem_total mem_used mem_reserved
 *                             MiB; reserved defaults to 0; free is
 *                             total - used - reserved.  !N on any of the three
 *                             fails the whole memory query.
 *       util_gpu util_mem     percent; !N on either fails the whole query
 *       temp                  Celsius
 *       fan                   percent
 *       enc dec               encoder / decoder utilization, percent
 *       power power_limit     watts (decimals allowed); served in milliwatts
 *       energy                joules used since the driver loaded; served in
 *                             millijoules (nvmlDeviceGetTotalEnergyConsumption)
 *       clock_sm clock_mem clock_max_sm clock_max_mem   MHz
 *       cc                    compute capability, e.g. 9.0
 *       persistence           0/1
 *       mig                   0/1, current MIG mode (pending = current);
 *                             with mig=0, GetMigDeviceHandleByIndex returns
 *                             NOT_SUPPORTED
 *       minor                 nvmlDeviceGetMinorNumber (N of /dev/nvidiaN);
 *                             defaults to the GPU's index
 *       mig_max               nvmlDeviceGetMaxMigDeviceCount; defaults to 7
 *                             when mig is given (the GPU is MIG-capable) and
 *                             is NOT_SUPPORTED when mig is absent
 *       handle_error=N        nvmlDeviceGetHandleByIndex(_v2) fails with N
 *       error=N               the handle is handed out, but every per-device
 *                             query on it (processes and MIG included)
 *                             returns N
 *   proc type=compute|graphics pid=N mem=MiB|na [gi=N] [ci=N]
 *       a process on the most recent GPU.  mem=na is reported as
 *       NVML_VALUE_NOT_AVAILABLE; gi/ci default to 0xFFFFFFFF.
 *   mig uuid=MIG-... name="..." gi=N ci=N mem_total=MiB mem_used=MiB
 *       a MIG device of the most recent GPU (which needs mig=1), at most 8
 *       and at most mig_max.  nvmlDeviceGetMigDeviceHandleByIndex(gpu, i)
 *       returns the i-th mig record, NOT_FOUND for other i < mig_max and
 *       INVALID_ARGUMENT beyond.
 *       MIG handles answer GetUUID, GetName, GetMemoryInfo(_v2),
 *       GetGpuInstanceId, GetComputeInstanceId, IsMigDeviceHandle and
 *       GetDeviceHandleFromMigDeviceHandle; anything else is NOT_SUPPORTED
 *       (as are GetGpuInstanceId/GetComputeInstanceId and
 *       GetDeviceHandleFromMigDeviceHandle on a GPU handle).
 *
 * Calls made while the init refcount is 0 return UNINITIALIZED, NULL output
 * pointers and unknown handles INVALID_ARGUMENT, and strings that do not fit
 * the caller's buffer INSUFFICIENT_SIZE.  The unversioned process and PCI
 * functions use the v1 record layouts, as in the real library.
 *
 * The NVML types below are declared from the documented ABI; nvml.h is
 * deliberately not included so the fake does not depend on the CUDA toolkit.
 * Init and shutdown are serialised by a mutex; queries only read the
 * scenario, which does not change while the refcount is above 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- NVML ABI ---------------------------------------------------------- */

typedef int nvmlReturn_t;
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_UNKNOWN = 999,
};

typedef struct dev *nvmlDevice_t;   /* opaque to callers */

typedef enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;

enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 };

typedef struct {
    unsigned long long total, free, used;   /* used includes reserved */
} nvmlMemory_t;

typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define NVML_MEMORY_V2_VERSION ((unsigned)sizeof(nvmlMemory_v2_t) | (2u << 24))

typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;

typedef struct {                  /* _v2 and _v3 */
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

typedef struct {                  /* unversioned nvmlDeviceGetPciInfo */
    char busId[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    unsigned int reserved0, reserved1, reserved2, reserved3;
} nvmlPciInfo_v1_t;

typedef struct {                  /* _v2 and _v3 process queries */
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

typedef struct {                  /* unversioned process queries */
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

/* The sizes callers (and pynvml's ctypes mirrors) rely on, on LP64. */
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t layout");
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t layout");
_Static_assert(sizeof(nvmlPciInfo_v1_t) == 52, "nvmlPciInfo_v1_t layout");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t layout");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t layout");

#define NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFull
#define NO_INSTANCE_ID 0xFFFFFFFFu

/* NVML_API entry points are exported by both builds.  NEW_API ones (versioned
 * and MIG symbols) are compiled into the old build too, so both builds share
 * all code paths, but kept out of its dynamic symbol table. */
#define NVML_API __attribute__((visibility("default")))
#ifdef FAKE_NVML_OLD
#define NEW_API __attribute__((visibility("hidden")))
#else
#define NEW_API NVML_API
#endif

/* ---- scenario model ---------------------------------------------------- */

enum { MAX_GPUS = 16, MAX_MIG_PER_GPU = 8, MAX_PROCS = 256, TEXT_MAX = 96 };

/* A scenario value.  Zero-initialised means "key absent", which is served as
 * NOT_SUPPORTED; err != 0 means the key was written as !err. */
struct num  { bool set; nvmlReturn_t err; double v; };
struct text { bool set; nvmlReturn_t err; char s[TEXT_MAX]; };
#define STATUS(f) (!(f).set ? NVML_ERROR_NOT_SUPPORTED : (f).err)

/* A GPU or a MIG device; nvmlDevice_t points at one of these. */
struct dev {
    struct dev *parent;             /* MIG device: its GPU; GPU: NULL */
    unsigned index;
    nvmlReturn_t handle_error, error;
    struct text name, uuid, pci, cc;
    unsigned pci_domain, pci_bus, pci_device, cc_major, cc_minor;
    char bus_id[32], bus_id_legacy[16];     /* derived from pci */
    struct num mem_total, mem_used, mem_reserved, util_gpu, util_mem;
    struct num temp, fan, enc, dec, power, power_limit, energy;
    struct num clock_sm, clock_mem, clock_max_sm, clock_max_mem;
    struct num persistence, mig, mig_max, gi, ci, minor;
    unsigned nmig;
    struct dev *migs[MAX_MIG_PER_GPU];
};

struct proc {
    const struct dev *gpu;
    bool graphics;
    unsigned pid, gi, ci;
    unsigned long long mem;         /* bytes */
};

/* What a proc record parses into before it is checked and converted. */
struct proc_rec {
    struct text type, mem;
    struct num pid, gi, ci;
};

struct scenario {
    nvmlReturn_t init_error;
    bool have_system, have_init;
    struct text driver, nvml;
    struct num cuda, gpu_count;
    unsigned ngpus, nmigs, nprocs;
    struct dev gpus[MAX_GPUS];
    struct dev migs[MAX_GPUS * MAX_MIG_PER_GPU];
    struct proc procs[MAX_PROCS];
};

/* Static storage: handles stay plain pointers into it, and a stale handle
 * after shutdown is simply no longer found by valid_handle(). */
static struct scenario sc;
static unsigned refcount;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- tracing ----------------------------------------------------------- */

/* $FAKE_NVML_TRACE, looked up once: a getenv() per call cost more than
 * the call itself and skewed benchmarks against this fake. */
static const char *trace_path(void)
{
    static const char *path;
    static int looked;
    if (!looked) {
        path = getenv("FAKE_NVML_TRACE");
        looked = 1;
    }
    return path;
}

static void trace(const char *fn)
{
    const char *path = trace_path();
    if (!path || !*path)
        return;
    /* Opened per call so tests may change or remove the file between calls;
     * one write() of the whole line keeps lines intact under O_APPEND. */
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    char line[128];
    int len = snprintf(line, sizeof line, "%s\n", fn);
    if (len > 0 && (size_t)len < sizeof line) {
        ssize_t n = write(fd, line, (size_t)len);
        (void)n;
    }
    close(fd);
}
#define TRACE() trace(__func__)

/* ---- scenario parsing -------------------------------------------------- */

static char errbuf[256];

static const char *fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));
static const char *fmt(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vsnprintf(errbuf, sizeof errbuf, format, ap);
    va_end(ap);
    return errbuf;
}

/* Rounds a validated scenario number (0..1e9, possibly scaled) to unsigned. */
static unsigned to_uint(double v)
{
    return v >= 4294967295.0 ? 4294967295u : (unsigned)(v + 0.5);
}

static unsigned long long mib_to_bytes(double mib)
{
    return (unsigned long long)(mib * 1048576.0 + 0.5);
}

enum kind { K_TEXT, K_NUM, K_CODE };
struct key { const char *name; enum kind kind; size_t off; };

#define DEV_KEY(k, kind)  { #k, kind, offsetof(struct dev, k) }
#define PROC_KEY(k, kind) { #k, kind, offsetof(struct proc_rec, k) }
#define SC_KEY(name, kind, field) { name, kind, offsetof(struct scenario, field) }

static const struct key system_keys[] = {
    SC_KEY("driver", K_TEXT, driver), SC_KEY("cuda", K_NUM, cuda),
    SC_KEY("nvml", K_TEXT, nvml), SC_KEY("gpu_count", K_NUM, gpu_count), { NULL, 0, 0 },
};
static const struct key init_keys[] = {
    SC_KEY("error", K_CODE, init_error), { NULL, 0, 0 },
};
static const struct key gpu_keys[] = {
    DEV_KEY(name, K_TEXT), DEV_KEY(uuid, K_TEXT), DEV_KEY(pci, K_TEXT),
    DEV_KEY(mem_total, K_NUM), DEV_KEY(mem_used, K_NUM), DEV_KEY(mem_reserved, K_NUM),
    DEV_KEY(util_gpu, K_NUM), DEV_KEY(util_mem, K_NUM), DEV_KEY(temp, K_NUM),
    DEV_KEY(fan, K_NUM), DEV_KEY(enc, K_NUM), DEV_KEY(dec, K_NUM), DEV_KEY(power, K_NUM), DEV_KEY(power_limit, K_NUM),
    DEV_KEY(energy, K_NUM),
    DEV_KEY(clock_sm, K_NUM), DEV_KEY(clock_mem, K_NUM),
    DEV_KEY(clock_max_sm, K_NUM), DEV_KEY(clock_max_mem, K_NUM),
    DEV_KEY(cc, K_TEXT), DEV_KEY(persistence, K_NUM), DEV_KEY(mig, K_NUM),
    DEV_KEY(mig_max, K_NUM), DEV_KEY(minor, K_NUM), DEV_KEY(handle_error, K_CODE),
    DEV_KEY(error, K_CODE),
    { NULL, 0, 0 },
};
static const struct key mig_keys[] = {
    DEV_KEY(uuid, K_TEXT), DEV_KEY(name, K_TEXT), DEV_KEY(gi, K_NUM), DEV_KEY(ci, K_NUM),
    DEV_KEY(mem_total, K_NUM), DEV_KEY(mem_used, K_NUM), { NULL, 0, 0 },
};
static const struct key proc_keys[] = {
    PROC_KEY(type, K_TEXT), PROC_KEY(pid, K_NUM), PROC_KEY(mem, K_TEXT),
    PROC_KEY(gi, K_NUM), PROC_KEY(ci, K_NUM), { NULL, 0, 0 },
};

/* An NVML error code: a plain non-negative decimal integer. */
static bool parse_code(const char *s, nvmlReturn_t *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end || errno || v > 100000)
        return false;
    *out = (nvmlReturn_t)v;
    return true;
}

/* A non-negative decimal number.  The upper bound keeps every later
 * conversion (MiB to bytes, W to mW, to unsigned int) free of overflow. */
static bool parse_number(const char *s, double *out)
{
    char *end;
    if (s[0] < '0' || s[0] > '9')
        return false;
    double v = strtod(s, &end);
    if (*end || !isfinite(v) || v > 1e9)
        return false;
    *out = v;
    return true;
}

static const char *parse_value(const struct key *k, const char *val, bool quoted, void *field)
{
    if (k->kind == K_CODE) {
        if (!parse_code(val, field))
            return fmt("%s: expected an NVML error code, got '%s'", k->name, val);
        return NULL;
    }
    nvmlReturn_t err = NVML_SUCCESS;
    bool failing = !quoted && val[0] == '!';
    if (failing && (!parse_code(val + 1, &err) || err == NVML_SUCCESS))
        return fmt("%s: bad error code '%s' (want !N with N > 0)", k->name, val);

    if (k->kind == K_NUM) {
        struct num *n = field;
        if (!failing && !parse_number(val, &n->v))
            return fmt("%s: expected a number, got '%s'", k->name, val);
        n->set = true;
        n->err = err;
    } else {
        struct text *t = field;
        if (!failing && strlen(val) >= TEXT_MAX)
            return fmt("%s: value longer than %d characters", k->name, TEXT_MAX - 1);
        if (!failing)
            strcpy(t->s, val);
        t->set = true;
        t->err = err;
    }
    return NULL;
}

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* Splits the next key=value token off *p, NUL-terminating key and value in
 * place.  Sets *key to NULL at the end of the line or at a comment. */
static const char *next_pair(char **p, char **key, char **val, bool *quoted)
{
    char *s = *p;
    while (is_blank(*s))
        s++;
    *key = NULL;
    if (*s == '\0' || *s == '#') {
        *p = s;
        return NULL;
    }
    char *eq = s + strcspn(s, "= \t\r\n#\"");
    if (*eq != '=' || eq == s) {
        s[strcspn(s, " \t\r\n")] = '\0';
        return fmt("expected key=value, got '%s'", s);
    }
    *eq = '\0';
    *key = s;
    char *v = eq + 1;
    *quoted = (*v == '"');
    if (*quoted) {
        char *close = strchr(v + 1, '"');
        if (!close)
            return fmt("%s: unterminated quoted value", *key);
        if (close[1] != '\0' && close[1] != '#' && !is_blank(close[1]))
            return fmt("%s: text after closing quote", *key);
        *close = '\0';
        *val = v + 1;
        *p = close + 1;     /* blank, '#' or end: the next call handles each */
        return NULL;
    }
    char *end = v + strcspn(v, " \t\r\n#\"");
    if (*end == '"')
        return fmt("%s: stray quote in value", *key);
    if (end == v)
        return fmt("%s: empty value", *key);
    char delim = *end;
    *end = '\0';
    *val = v;
    /* Stop at the NUL we wrote if it replaced '#': the rest is a comment. */
    *p = (delim == '\0' || delim == '#') ? end : end + 1;
    return NULL;
}

static const char *parse_keys(char *p, const char *record, const struct key *keys, void *base)
{
    unsigned seen = 0;   /* one bit per table entry: catches repeated keys */
    for (;;) {
        char *key, *val = NULL;
        bool quoted = false;
        const char *err = next_pair(&p, &key, &val, &quoted);
        if (err || !key)
            return err;
        const struct key *k = keys;
        while (k->name && strcmp(k->name, key) != 0)
            k++;
        if (!k->name)
            return fmt("unknown key '%s' in %s record", key, record);
        unsigned bit = 1u << (k - keys);
        if (seen & bit)
            return fmt("key '%s' given twice", key);
        seen |= bit;
        if ((err = parse_value(k, val, quoted, (char *)base + k->off)))
            return err;
    }
}

/* persistence and mig: absent, !N, 0 or 1. */
static bool is_flag(const struct num *n)
{
    return !n->set || n->err || n->v == 0 || n->v == 1;
}

static const char *check_memory(const struct dev *d)
{
    if (d->mem_total.set && d->mem_used.set && !d->mem_total.err && !d->mem_used.err &&
        !(d->mem_reserved.set && d->mem_reserved.err)) {
        double reserved = d->mem_reserved.set ? d->mem_reserved.v : 0;
        if (d->mem_used.v + reserved > d->mem_total.v)
            return "mem_used + mem_reserved exceeds mem_total";
    }
    return NULL;
}

/* Validates a gpu record and derives the values that are served from it. */
static const char *finish_gpu(struct dev *d)
{
    if (d->pci.set && !d->pci.err) {
        unsigned dom, bus, devno, fn;
        int used = -1;
        /* The strspn check keeps sscanf from accepting signs, blanks, "0x". */
        if (strspn(d->pci.s, "0123456789abcdefABCDEF:.") != strlen(d->pci.s) ||
            sscanf(d->pci.s, "%x:%x:%x.%x%n", &dom, &bus, &devno, &fn, &used) != 4 ||
            used != (int)strlen(d->pci.s) || bus > 0xff || devno > 0x1f || fn > 7)
            return fmt("pci: expected a bus id like 00000000:18:00.0, got '%s'", d->pci.s);
        /* Served in NVML's own form: upper-case hex, 8-digit domain; the
         * legacy field has a 4-digit domain and is cut to 15 characters. */
        char id[64] = "", legacy[64] = "";   /* zero padding is served too */
        snprintf(id, sizeof id, "%08X:%02X:%02X.%X", dom, bus, devno, fn);
        snprintf(legacy, sizeof legacy, "%04X:%02X:%02X.%X", dom, bus, devno, fn);
        memcpy(d->bus_id, id, sizeof d->bus_id - 1);
        memcpy(d->bus_id_legacy, legacy, sizeof d->bus_id_legacy - 1);
        d->pci_domain = dom;
        d->pci_bus = bus;
        d->pci_device = devno;
    }
    if (d->cc.set && !d->cc.err) {
        int used = -1;
        if (strspn(d->cc.s, "0123456789.") != strlen(d->cc.s) ||
            sscanf(d->cc.s, "%u.%u%n", &d->cc_major, &d->cc_minor, &used) != 2 ||
            used != (int)strlen(d->cc.s))
            return fmt("cc: expected major.minor, got '%s'", d->cc.s);
    }
    if (!is_flag(&d->persistence) || !is_flag(&d->mig))
        return "persistence and mig must be 0 or 1";
    if (!d->mig_max.set && d->mig.set)     /* MIG-capable: A100/H100 allow 7 */
        d->mig_max = (struct num){ true, d->mig.err, 7 };
    return check_memory(d);
}

static const char *add_proc(struct proc_rec *r)
{
    if (!r->type.set || !r->pid.set || !r->mem.set)
        return "proc needs type=, pid= and mem=";
    if (r->type.err || r->pid.err || r->mem.err || r->gi.err || r->ci.err)
        return "proc values cannot be !N";
    if (sc.nprocs == MAX_PROCS)
        return fmt("too many proc records (at most %d)", MAX_PROCS);

    struct proc *p = &sc.procs[sc.nprocs];
    if (strcmp(r->type.s, "compute") == 0)
        p->graphics = false;
    else if (strcmp(r->type.s, "graphics") == 0)
        p->graphics = true;
    else
        return fmt("type: expected compute or graphics, got '%s'", r->type.s);
    double mib;
    if (strcmp(r->mem.s, "na") == 0)
        p->mem = NVML_VALUE_NOT_AVAILABLE_ULL;
    else if (parse_number(r->mem.s, &mib))
        p->mem = mib_to_bytes(mib);
    else
        return fmt("mem: expected MiB or na, got '%s'", r->mem.s);
    p->gpu = &sc.gpus[sc.ngpus - 1];
    p->pid = to_uint(r->pid.v);
    p->gi = r->gi.set ? to_uint(r->gi.v) : NO_INSTANCE_ID;
    p->ci = r->ci.set ? to_uint(r->ci.v) : NO_INSTANCE_ID;
    sc.nprocs++;
    return NULL;
}

static const char *parse_line(char *line)
{
    char *p = line;
    while (is_blank(*p))
        p++;
    if (*p == '\0' || *p == '#')
        return NULL;
    char *word = p;
    p += strcspn(p, " \t\r\n#");
    if (*p == '#')
        *p = '\0';            /* keyword directly followed by a comment */
    else if (*p != '\0')
        *p++ = '\0';

    const char *err;
    if (strcmp(word, "system") == 0) {
        if (sc.have_system)
            return "more than one system record";
        sc.have_system = true;
        return parse_keys(p, word, system_keys, &sc);
    }
    if (strcmp(word, "init") == 0) {
        if (sc.have_init)
            return "more than one init record";
        sc.have_init = true;
        return parse_keys(p, word, init_keys, &sc);
    }
    if (strcmp(word, "gpu") == 0) {
        if (sc.ngpus == MAX_GPUS)
            return fmt("too many gpu records (at most %d)", MAX_GPUS);
        struct dev *d = &sc.gpus[sc.ngpus];
        d->index = sc.ngpus++;
        if ((err = parse_keys(p, word, gpu_keys, d)))
            return err;
        return finish_gpu(d);
    }
    if (strcmp(word, "proc") != 0 && strcmp(word, "mig") != 0)
        return fmt("unknown record '%s'", word);

    if (sc.ngpus == 0)
        return fmt("%s record before any gpu record", word);
    struct dev *gpu = &sc.gpus[sc.ngpus - 1];
    if (strcmp(word, "proc") == 0) {
        struct proc_rec r = { 0 };
        if ((err = parse_keys(p, word, proc_keys, &r)))
            return err;
        return add_proc(&r);
    }
    if (!gpu->mig.set || gpu->mig.err || gpu->mig.v != 1)
        return "mig record on a gpu without mig=1";
    unsigned limit = MAX_MIG_PER_GPU;
    if (gpu->mig_max.set && !gpu->mig_max.err && gpu->mig_max.v < limit)
        limit = to_uint(gpu->mig_max.v);
    if (gpu->nmig >= limit)
        return fmt("too many mig records for this gpu (at most %u)", limit);
    struct dev *m = &sc.migs[sc.nmigs++];
    m->parent = gpu;
    m->index = gpu->nmig;
    gpu->migs[gpu->nmig++] = m;
    if ((err = parse_keys(p, word, mig_keys, m)))
        return err;
    return check_memory(m);
}

/* Loads $FAKE_NVML_SCENARIO into sc.  Returns the status nvmlInit reports. */
static nvmlReturn_t load_scenario(void)
{
    memset(&sc, 0, sizeof sc);
    sc.driver = (struct text){ true, 0, "550.54.15" };
    sc.nvml = (struct text){ true, 0, "12.550.54.15" };
    sc.cuda = (struct num){ true, 0, 12040 };

    const char *path = getenv("FAKE_NVML_SCENARIO");
    if (!path || !*path) {
        fprintf(stderr, "fake-nvml: $FAKE_NVML_SCENARIO:0: variable is not set\n");
        return NVML_ERROR_UNKNOWN;
    }
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "fake-nvml: %s:0: cannot open: %s\n", path, strerror(errno));
        return NVML_ERROR_UNKNOWN;
    }
    char *line = NULL;
    size_t cap = 0;
    unsigned lineno = 0;
    const char *err = NULL;
    while (!err && getline(&line, &cap, f) >= 0) {
        lineno++;
        err = parse_line(line);
    }
    if (!err && ferror(f))
        err = fmt("read error: %s", strerror(errno));
    free(line);
    fclose(f);

    nvmlReturn_t rc = NVML_SUCCESS;
    if (err) {
        fprintf(stderr, "fake-nvml: %s:%u: %s\n", path, lineno, err);
        rc = NVML_ERROR_UNKNOWN;
    } else {
        rc = sc.init_error;
    }
    if (rc != NVML_SUCCESS)
        memset(&sc, 0, sizeof sc);
    return rc;
}

/* ---- helpers for the entry points -------------------------------------- */

/* Only equality comparisons against live records, so a stale or garbage
 * handle is rejected without undefined pointer arithmetic. */
static bool valid_handle(const struct dev *d)
{
    for (unsigned i = 0; i < sc.ngpus; i++)
        if (d == &sc.gpus[i])
            return true;
    for (unsigned i = 0; i < sc.nmigs; i++)
        if (d == &sc.migs[i])
            return true;
    return false;
}

enum scope { GPU_ONLY, GPU_OR_MIG };

/* The checks every per-device query makes before it looks at a value. */
static nvmlReturn_t check_dev(const struct dev *d, enum scope scope)
{
    if (refcount == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!d || !valid_handle(d))
        return NVML_ERROR_INVALID_ARGUMENT;
    const struct dev *gpu = d->parent ? d->parent : d;
    if (gpu->error)
        return gpu->error;
    if (d->parent && scope == GPU_ONLY)
        return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

static nvmlReturn_t copy_text(const struct text *t, char *buf, unsigned len)
{
    if (!buf)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (STATUS(*t))
        return STATUS(*t);
    if (strlen(t->s) >= len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(buf, t->s);
    return NVML_SUCCESS;
}

#define FIELD(name) offsetof(struct dev, name)

static nvmlReturn_t query_text(nvmlDevice_t dev, size_t off, char *buf, unsigned len)
{
    nvmlReturn_t rc = check_dev(dev, GPU_OR_MIG);
    if (rc)
        return rc;
    return copy_text((const struct text *)((const char *)dev + off), buf, len);
}

/* A single unsigned value, multiplied by scale (1000 for W -> mW). */
static nvmlReturn_t query_uint(nvmlDevice_t dev, enum scope scope, size_t off, double scale,
                               unsigned *out)
{
    nvmlReturn_t rc = check_dev(dev, scope);
    if (rc)
        return rc;
    if (!out)
        return NVML_ERROR_INVALID_ARGUMENT;
    const struct num *n = (const struct num *)((const char *)dev + off);
    if (STATUS(*n))
        return STATUS(*n);
    *out = to_uint(n->v * scale);
    return NVML_SUCCESS;
}

/* Memory in bytes; reserved defaults to 0, !N on any part fails them all. */
static nvmlReturn_t query_memory(nvmlDevice_t dev, void *out, unsigned long long *total,
                                 unsigned long long *reserved, unsigned long long *used)
{
    nvmlReturn_t rc = check_dev(dev, GPU_OR_MIG);
    if (rc)
        return rc;
    if (!out)
        return NVML_ERROR_INVALID_ARGUMENT;
    if ((rc = STATUS(dev->mem_total)) || (rc = STATUS(dev->mem_used)) ||
        (dev->mem_reserved.set && (rc = dev->mem_reserved.err)))
        return rc;
    *total = mib_to_bytes(dev->mem_total.v);
    *used = mib_to_bytes(dev->mem_used.v);
    *reserved = dev->mem_reserved.set ? mib_to_bytes(dev->mem_reserved.v) : 0;
    return NVML_SUCCESS;
}

static nvmlReturn_t query_pci(nvmlDevice_t dev, void *out)
{
    nvmlReturn_t rc = check_dev(dev, GPU_ONLY);
    if (rc)
        return rc;
    if (!out)
        return NVML_ERROR_INVALID_ARGUMENT;
    return STATUS(dev->pci);
}

static nvmlReturn_t clock_field(unsigned type, size_t sm, size_t mem, size_t *off)
{
    switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM: *off = sm; return NVML_SUCCESS;
    case NVML_CLOCK_MEM: *off = mem; return NVML_SUCCESS;
    case NVML_CLOCK_VIDEO: return NVML_ERROR_NOT_SUPPORTED;
    default: return NVML_ERROR_INVALID_ARGUMENT;
    }
}

/* Shared by all six process queries.  ids selects the v2/v3 record layout
 * (with GPU/compute instance ids) over the v1 one. */
static nvmlReturn_t list_procs(nvmlDevice_t dev, bool graphics, unsigned *count, void *infos,
                               bool ids)
{
    nvmlReturn_t rc = check_dev(dev, GPU_ONLY);
    if (rc)
        return rc;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned n = 0;
    for (unsigned i = 0; i < sc.nprocs; i++)
        n += sc.procs[i].gpu == dev && sc.procs[i].graphics == graphics;
    if (n == 0) {
        *count = 0;
        return NVML_SUCCESS;
    }
    if (!infos || *count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    unsigned j = 0;
    for (unsigned i = 0; i < sc.nprocs; i++) {
        const struct proc *p = &sc.procs[i];
        if (p->gpu != dev || p->graphics != graphics)
            continue;
        if (ids)
            ((nvmlProcessInfo_t *)infos)[j++] =
                (nvmlProcessInfo_t){ p->pid, p->mem, p->gi, p->ci };
        else
            ((nvmlProcessInfo_v1_t *)infos)[j++] = (nvmlProcessInfo_v1_t){ p->pid, p->mem };
    }
    *count = n;
    return NVML_SUCCESS;
}

static nvmlReturn_t get_handle(unsigned index, nvmlDevice_t *device)
{
    if (refcount == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!device || index >= sc.ngpus)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (sc.gpus[index].handle_error)
        return sc.gpus[index].handle_error;
    *device = &sc.gpus[index];
    return NVML_SUCCESS;
}

/* FAKE_NVML_RELOAD: re-reads a scenario file that changed since it was
 * loaded.  The old scenario is kept when the new one does not parse. */
static struct timespec loaded_mtime;

static void remember_mtime(void)
{
    struct stat st;
    const char *path = getenv("FAKE_NVML_SCENARIO");
    if (path && stat(path, &st) == 0)
        loaded_mtime = st.st_mtim;
}

static nvmlReturn_t init_common(void)
{
    nvmlReturn_t rc = NVML_SUCCESS;
    pthread_mutex_lock(&init_lock);
    if (refcount == 0) {
        rc = load_scenario();
        remember_mtime();
    }
    if (rc == NVML_SUCCESS)
        refcount++;
    pthread_mutex_unlock(&init_lock);
    return rc;
}

/* ---- exported entry points: library and system ------------------------- */

NVML_API nvmlReturn_t nvmlInit(void) { TRACE(); return init_common(); }
NEW_API nvmlReturn_t nvmlInit_v2(void) { TRACE(); return init_common(); }

NEW_API nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    TRACE();
    (void)flags;   /* NO_GPUS / NO_ATTACH make no difference to a fake */
    return init_common();
}

NVML_API nvmlReturn_t nvmlShutdown(void)
{
    TRACE();
    nvmlReturn_t rc = NVML_SUCCESS;
    pthread_mutex_lock(&init_lock);
    if (refcount == 0)
        rc = NVML_ERROR_UNINITIALIZED;
    else if (--refcount == 0)
        memset(&sc, 0, sizeof sc);
    pthread_mutex_unlock(&init_lock);
    return rc;
}

NVML_API const char *nvmlErrorString(nvmlReturn_t result)
{
    TRACE();
    switch (result) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 5: return "Already Initialized";
    case 6: return "Not Found";
    case 7: return "Insufficient Size";
    case 8: return "Insufficient External Power";
    case 9: return "Driver Not Loaded";
    case 10: return "Timeout";
    case 11: return "Interrupt request issue";
    case 12: return "NVML Shared Library Not Found";
    case 13: return "Function Not Found";
    case 14: return "Corrupted infoROM";
    case 15: return "GPU is lost";
    case 16: return "GPU requires restart";
    case 17: return "The operating system has blocked the request";
    case 18: return "RM has detected an NVML/RM version mismatch";
    case 19: return "In use by another client";
    case 20: return "Insufficient Memory";
    case 21: return "No data";
    case 22: return "The requested vgpu operation is not available on target device, because ECC is enabled";
    case 23: return "Ran out of critical resources, other than memory";
    case 24: return "The requested frequency is not supported";
    case 25: return "The provided version is invalid/unsupported";
    case 26: return "Deprecated";
    case 27: return "Not Ready";
    case 28: return "GPU Not Found";
    case 29: return "Invalid State";
    default: return "Unknown Error";
    }
}

NVML_API nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    TRACE();
    return refcount ? copy_text(&sc.driver, version, length) : NVML_ERROR_UNINITIALIZED;
}

NVML_API nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    TRACE();
    return refcount ? copy_text(&sc.nvml, version, length) : NVML_ERROR_UNINITIALIZED;
}

static nvmlReturn_t cuda_version(int *version)
{
    if (refcount == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!version)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (STATUS(sc.cuda))
        return STATUS(sc.cuda);
    *version = (int)to_uint(sc.cuda.v);   /* parse_number caps it at 1e9 */
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { TRACE(); return cuda_version(v); }
NEW_API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { TRACE(); return cuda_version(v); }

static void reload_if_changed(void)
{
    const char *reload = getenv("FAKE_NVML_RELOAD");
    const char *path = getenv("FAKE_NVML_SCENARIO");
    struct stat st;
    if (!reload || !*reload || !path || stat(path, &st) != 0)
        return;
    if (st.st_mtim.tv_sec == loaded_mtime.tv_sec && st.st_mtim.tv_nsec == loaded_mtime.tv_nsec)
        return;
    static struct scenario previous;
    previous = sc;
    if (load_scenario() != NVML_SUCCESS)
        sc = previous;
    loaded_mtime = st.st_mtim;
}

static nvmlReturn_t device_count(unsigned *count)
{
    if (refcount == 0)
        return NVML_ERROR_UNINITIALIZED;
    reload_if_changed();
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (sc.gpu_count.set && STATUS(sc.gpu_count))
        return STATUS(sc.gpu_count);
    *count = sc.gpu_count.set ? to_uint(sc.gpu_count.v) : sc.ngpus;
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetCount(unsigned int *c) { TRACE(); return device_count(c); }
NEW_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *c) { TRACE(); return device_count(c); }

NVML_API nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    TRACE();
    return get_handle(index, device);
}

NEW_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    TRACE();
    return get_handle(index, device);
}

/* The GPU or MIG device with this UUID (Dask's diagnostics look the GPU
 * of CUDA_VISIBLE_DEVICES up this way). */
NVML_API nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    TRACE();
    if (refcount == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!uuid || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < sc.ngpus; i++) {
        if (sc.gpus[i].uuid.set && strcmp(sc.gpus[i].uuid.s, uuid) == 0) {
            if (sc.gpus[i].handle_error)
                return sc.gpus[i].handle_error;
            *device = &sc.gpus[i];
            return NVML_SUCCESS;
        }
    }
    for (unsigned i = 0; i < sc.nmigs; i++) {
        if (sc.migs[i].uuid.set && strcmp(sc.migs[i].uuid.s, uuid) == 0) {
            *device = &sc.migs[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

/* ---- exported entry points: device queries ----------------------------- */

NVML_API nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t dev, unsigned int *index)
{
    TRACE();
    nvmlReturn_t rc = check_dev(dev, GPU_ONLY);
    if (rc)
        return rc;
    if (!index)
        return NVML_ERROR_INVALID_ARGUMENT;
    *index = dev->index;
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned int length)
{
    TRACE();
    return query_text(dev, FIELD(name), name, length);
}

NVML_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned int length)
{
    TRACE();
    return query_text(dev, FIELD(uuid), uuid, length);
}

NVML_API nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t dev, nvmlPciInfo_v1_t *pci)
{
    TRACE();
    nvmlReturn_t rc = query_pci(dev, pci);
    if (rc)
        return rc;
    *pci = (nvmlPciInfo_v1_t){ .domain = dev->pci_domain, .bus = dev->pci_bus,
                               .device = dev->pci_device };
    memcpy(pci->busId, dev->bus_id_legacy, sizeof pci->busId);
    return NVML_SUCCESS;
}

static nvmlReturn_t pci_info(nvmlDevice_t dev, nvmlPciInfo_t *pci)
{
    nvmlReturn_t rc = query_pci(dev, pci);
    if (rc)
        return rc;
    *pci = (nvmlPciInfo_t){ .domain = dev->pci_domain, .bus = dev->pci_bus,
                            .device = dev->pci_device };
    memcpy(pci->busIdLegacy, dev->bus_id_legacy, sizeof pci->busIdLegacy);
    memcpy(pci->busId, dev->bus_id, sizeof pci->busId);
    return NVML_SUCCESS;
}

NEW_API nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *p) { TRACE(); return pci_info(d, p); }
NEW_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) { TRACE(); return pci_info(d, p); }

NVML_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *memory)
{
    TRACE();
    unsigned long long total, reserved, used;
    nvmlReturn_t rc = query_memory(dev, memory, &total, &reserved, &used);
    if (rc)
        return rc;
    /* v1 has no reserved field and counts it as used. */
    *memory = (nvmlMemory_t){ .total = total, .free = total - used - reserved,
                              .used = used + reserved };
    return NVML_SUCCESS;
}

NEW_API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *memory)
{
    TRACE();
    unsigned long long total, reserved, used;
    nvmlReturn_t rc = query_memory(dev, memory, &total, &reserved, &used);
    if (rc)
        return rc;
    if (memory->version != NVML_MEMORY_V2_VERSION)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    memory->total = total;
    memory->reserved = reserved;
    memory->free = total - used - reserved;
    memory->used = used;
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t dev, nvmlUtilization_t *util)
{
    TRACE();
    nvmlReturn_t rc = check_dev(dev, GPU_ONLY);
    if (rc)
        return rc;
    if (!util)
        return NVML_ERROR_INVALID_ARGUMENT;
    if ((rc = STATUS(dev->util_gpu)) || (rc = STATUS(dev->util_mem)))
        return rc;
    *util = (nvmlUtilization_t){ to_uint(dev->util_gpu.v), to_uint(dev->util_mem.v) };
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor, unsigned int *temp)
{
    TRACE();
    nvmlReturn_t rc = check_dev(dev, GPU_ONLY);
    if (rc)
        return rc;
    if (sensor != NVML_TEMPERATURE_GPU)
        return NVML_ERROR_INVALID_ARGUMENT;
    return query_uint(dev, GPU_ONLY, FIELD(temp), 1, temp);
}

NVML_API nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t dev, unsigned int *speed)
{
    TRACE();
    return query_uint(dev, GPU_ONLY, FIELD(fan), 1, speed);
}

/* Encoder and decoder utilization come with the sampling period they cover. */
NVML_API nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t dev, unsigned int *percent,
                                                      unsigned int *period_us)
{
    TRACE();
    if (!period_us)
        return NVML_ERROR_INVALID_ARGUMENT;
    *period_us = 167000;
    return query_uint(dev, GPU_ONLY, FIELD(enc), 1, percent);
}

NVML_API nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t dev, unsigned int *percent,
                                                      unsigned int *period_us)
{
    TRACE();
    if (!period_us)
        return NVML_ERROR_INVALID_ARGUMENT;
    *period_us = 167000;
    return query_uint(dev, GPU_ONLY, FIELD(dec), 1, percent);
}

NVML_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t dev, unsigned int *milliwatts)
{
    TRACE();
    return query_uint(dev, GPU_ONLY, FIELD(power), 1000, milliwatts);
}

NVML_API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t dev, unsigned int *limit)
{
    TRACE();
    return query_uint(dev, GPU_ONLY, FIELD(power_limit), 1000, limit);
}

NVML_API nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t dev, unsigned int *minor)
{
    TRACE();
    nvmlReturn_t rc = check_dev(dev, GPU_ONLY);
    if (rc)
        return rc;
    if (!minor)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (dev->minor.set) {
        if (dev->minor.err)
            return dev->minor.err;
        *minor = to_uint(dev->minor.v);
    } else {
        *minor = dev->index;
    }
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t dev,
                                                          unsigned long long *millijoules)
{
    TRACE();
    nvmlReturn_t rc = check_dev(dev, GPU_ONLY);
    if (rc)
        return rc;
    if (!millijoules)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (STATUS(dev->energy))
        return STATUS(dev->energy);
    *millijoules = (unsigned long long)(dev->energy.v * 1000.0 + 0.5);
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t dev, int type, unsigned int *clock)
{
    TRACE();
    size_t off = 0;
    nvmlReturn_t rc = check_dev(dev, GPU_ONLY);
    if (rc || (rc = clock_field((unsigned)type, FIELD(clock_sm), FIELD(clock_mem), &off)))
        return rc;
    return query_uint(dev, GPU_ONLY, off, 1, clock);
}

NVML_API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, int type, unsigned int *clock)
{
    TRACE();
    size_t off = 0;
    nvmlReturn_t rc = check_dev(dev, GPU_ONLY);
    if (rc || (rc = clock_field((unsigned)type, FIELD(clock_max_sm), FIELD(clock_max_mem), &off)))
        return rc;
    return query_uint(dev, GPU_ONLY, off, 1, clock);
}

NVML_API nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t dev, int *major, int *minor)
{
    TRACE();
    nvmlReturn_t rc = check_dev(dev, GPU_ONLY);
    if (rc)
        return rc;
    if (!major || !minor)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (STATUS(dev->cc))
        return STATUS(dev->cc);
    *major = (int)dev->cc_major;
    *minor = (int)dev->cc_minor;
    return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t dev, nvmlEnableState_t *mode)
{
    TRACE();
    nvmlReturn_t rc = check_dev(dev, GPU_ONLY);
    if (rc)
        return rc;
    if (!mode)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned v;
    if ((rc = query_uint(dev, GPU_ONLY, FIELD(persistence), 1, &v)) == NVML_SUCCESS)
        *mode = v ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return rc;
}

/* ---- exported entry points: MIG ---------------------------------------- */

NEW_API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int *current,
                                          unsigned int *pending)
{
    TRACE();
    nvmlReturn_t rc = check_dev(dev, GPU_ONLY);
    if (rc)
        return rc;
    if (!current || !pending)
        return NVML_ERROR_INVALID_ARGUMENT;
    rc = query_uint(dev, GPU_ONLY, FIELD(mig), 1, current);
    if (rc == NVML_SUCCESS)
        *pending = *current;
    return rc;
}

NEW_API nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t dev, unsigned int *count)
{
    TRACE();
    return query_uint(dev, GPU_ONLY, FIELD(mig_max), 1, count);
}

NEW_API nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t dev, unsigned int index,
                                                         nvmlDevice_t *mig)
{
    TRACE();
    nvmlReturn_t rc = check_dev(dev, GPU_ONLY);
    if (rc)
        return rc;
    if (!mig)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (STATUS(dev->mig))
        return STATUS(dev->mig);
    if (dev->mig.v != 1)
        return NVML_ERROR_NOT_SUPPORTED;     /* MIG-capable but disabled */
    unsigned limit = STATUS(dev->mig_max) ? dev->nmig : to_uint(dev->mig_max.v);
    if (index >= limit)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (index >= dev->nmig)
        return NVML_ERROR_NOT_FOUND;         /* a slot with no instance in it */
    *mig = dev->migs[index];
    return NVML_SUCCESS;
}

NEW_API nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t dev, unsigned int *is_mig)
{
    TRACE();
    nvmlReturn_t rc = check_dev(dev, GPU_OR_MIG);
    if (rc)
        return rc;
    if (!is_mig)
        return NVML_ERROR_INVALID_ARGUMENT;
    *is_mig = dev->parent != NULL;
    return NVML_SUCCESS;
}

/* A GPU's gi/ci are never set, so these report NOT_SUPPORTED for GPUs. */
NEW_API nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t dev, unsigned int *id)
{
    TRACE();
    return query_uint(dev, GPU_OR_MIG, FIELD(gi), 1, id);
}

NEW_API nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t dev, unsigned int *id)
{
    TRACE();
    return query_uint(dev, GPU_OR_MIG, FIELD(ci), 1, id);
}

NEW_API nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
                                                                  nvmlDevice_t *device)
{
    TRACE();
    nvmlReturn_t rc = check_dev(mig, GPU_OR_MIG);
    if (rc)
        return rc;
    if (!device)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!mig->parent)
        return NVML_ERROR_NOT_SUPPORTED;
    *device = mig->parent;
    return NVML_SUCCESS;
}

/* ---- exported entry points: processes ---------------------------------- */

NVML_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *n,
                                                           nvmlProcessInfo_v1_t *p)
{
    TRACE();
    return list_procs(d, false, n, p, false);
}

NEW_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *n,
                                                             nvmlProcessInfo_t *p)
{
    TRACE();
    return list_procs(d, false, n, p, true);
}

NEW_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n,
                                                             nvmlProcessInfo_t *p)
{
    TRACE();
    return list_procs(d, false, n, p, true);
}

NVML_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned int *n,
                                                            nvmlProcessInfo_v1_t *p)
{
    TRACE();
    return list_procs(d, true, n, p, false);
}

NEW_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned int *n,
                                                              nvmlProcessInfo_t *p)
{
    TRACE();
    return list_procs(d, true, n, p, true);
}

NEW_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *n,
                                                              nvmlProcessInfo_t *p)
{
    TRACE();
    return list_procs(d, true, n, p, true);
}
