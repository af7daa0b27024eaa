/* Choosing GPUs for a job: which devices fit a request, best first.
 *
 * gk_select() is a pure function of a snapshot (gk_probe_read), the devices
 * this process may use (the CUDA view: CUDA_VISIBLE_DEVICES set by Slurm or a
 * container restricts the choice) and the live reservations of other jobs
 * (gk_claim, from the lease layer in lease.h). It reads no clock, file or
 * environment, so the same inputs always give the same choice.
 *
 * Candidates are whole GPUs, or the MIG devices of a GPU in MIG mode (only
 * for a request of one device: a CUDA process can use one MIG device). GPUs
 * that are lost or not accessible are never candidates. A value the driver
 * could not give (N/A) never passes a filter that needs it, and sorts last. */
#ifndef GPUKIT_SELECT_H
#define GPUKIT_SELECT_H

#include <gpukit/probe.h>
#include <gpukit/visible.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gk_order {
    GK_ORDER_FREE = 0,   /* most free memory first (the default) */
    GK_ORDER_FREE_RATIO, /* highest free/total first */
    GK_ORDER_POWER,      /* lowest power draw/limit first */
    GK_ORDER_UTIL,       /* lowest GPU utilization first */
    GK_ORDER_INDEX,      /* lowest index first: the first one that fits */
    GK_ORDER_RANDOM,     /* shuffled by gk_request.seed */
} gk_order;

/* "free", "free-ratio", "power", "util", "index", "random". */
const char *gk_order_name(gk_order order);
gk_status gk_order_parse(const char *name, gk_order *order);

/* The most devices one request may ask for. */
#define GK_SELECT_MAX_COUNT 64

typedef struct gk_request {
    gk_order order;
    unsigned count;        /* devices wanted, at least 1 */
    gk_field min_free;     /* bytes free on each device, after reservations */
    double min_free_ratio; /* free/total on each device; 0 for no limit */
    int max_util;          /* percent; -1 for no limit */
    gk_field min_total;    /* bytes of memory in all */
    int max_procs;         /* processes already running there; -1 for no limit */
    const char *gpus;      /* only these (comma list of indices, UUIDs); NULL: any */
    const char *exclude;   /* never these; NULL: none */
    bool share;            /* share devices with other shared reservations */
    bool mode_given;       /* "share" or "exclusive" was set: the other is refused */
    uint64_t seed;         /* for GK_ORDER_RANDOM */
} gk_request;

/* One device, no limits, most free memory first, exclusive. */
void gk_request_init(gk_request *request);

/* Sets one option of a request from text, named as `gpukit pick` and
 * `gpukit run` spell them without the dashes: "count" (1 to 64), "order",
 * "min-free" and "min-total" (sizes: "20G", "512MiB", bytes), "min-free-ratio"
 * ("0.5" or "50%"), "max-util" (0 to 100), "max-procs" (0 or more), "gpus"
 * and "exclude" (lists; the request keeps pointing at `value`; a "gpus" list
 * that names nothing is an error, as it would offer no GPU), "seed", and
 * "share" and "exclusive" (value ignored; once one is set, the other is an
 * error, as the two contradict each other). Every front end parses options
 * here, so they accept the same things. GK_ERR_INVALID_ARGUMENT for a bad
 * value or name, with what is wrong (not the option's name, which each
 * front end spells its own way). */
gk_status gk_request_set(gk_request *request, const char *name, const char *value);

/* The request in a few words, e.g. "1 GPU, --min-free 20.0 GiB, shared". */
void gk_request_describe(const gk_request *request, char *buf, size_t size);

/* What another job's live reservation takes from a device. */
typedef struct gk_claim {
    char uuid[96];     /* the GPU or MIG device reserved */
    bool share;        /* the job allows others to share the device */
    uint64_t reserved; /* bytes the job reserved there (its min_free), 0 if none */
    uint64_t held;     /* bytes that job's processes already use there */
    uint32_t pid;      /* the job, for messages */
    char user[64];
    char holder[80];   /* who holds it, for messages: "pid 123 (ann)", "Slurm job 42 (ann)" */
} gk_claim;

typedef struct gk_candidate {
    size_t gpu;        /* position in the snapshot's gpus */
    int mig;           /* position in that GPU's mig_devices, -1 for the GPU */
    unsigned index;    /* the GPU's index (nvidia-smi numbering) */
    const char *uuid;  /* the device's UUID, pointing into the snapshot */
    gk_field total;    /* bytes */
    gk_field free;     /* bytes, less what shared reservations still need */
    unsigned claims;   /* live reservations on the device */
    char rejected[160]; /* why the device does not fit; "" when it does */
} gk_candidate;

typedef struct gk_selection {
    gk_candidate *candidates; /* every device this process may use: the ones
                                 that fit first, in the requested order */
    size_t count;
    size_t fitting;           /* how many candidates fit */
    bool fits;                /* fitting >= the requested count: the first
                                 `count` candidates are the choice */
    bool possible;            /* false when no amount of waiting can satisfy
                                 the request on this machine */
    char why[512];            /* when !fits: what is missing, for people */
} gk_selection;

/* Evaluates `request` on the devices of `allowed` (NULL: every usable
 * device). Fails with GK_ERR_INVALID_ARGUMENT when the request is malformed
 * or names a GPU that does not exist (`gpus`, `exclude`); "nothing fits" is
 * not a failure: see selection->fits. Free with gk_selection_free(). */
gk_status gk_select(const gk_snapshot *snapshot, const gk_cuda_view *allowed,
                    const gk_claim *claims, size_t claim_count, const gk_request *request,
                    gk_selection *selection);
void gk_selection_free(gk_selection *selection);

#ifdef __cplusplus
}
#endif
#endif
