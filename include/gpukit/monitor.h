/* Live monitoring: the one sampler behind `gpukit top`, `gpukit serve` and
 * gpukit.monitor(), so a terminal, a Prometheus scrape and a dashboard read
 * the driver once per interval between them.
 *
 * A monitor keeps its probe open, so each GPU's static facts (name, UUID, bus
 * id, compute capability, maximum clocks) are read once and only live facts
 * are read per reading. Each reading (a gk_sample) holds the snapshot, the
 * gpukit leases and the line of waiting jobs, and, for every GPU process,
 * the lease it runs under and the Jupyter kernel it is. Readings are
 * published whole: a reader holds a reference to one and never sees a
 * half-made one. The last `history` readings of each GPU's utilization,
 * memory, power and temperature are kept for graphs.
 *
 * Thread safety: gk_monitor_read, gk_monitor_start/stop and gk_monitor_close
 * from one thread; gk_monitor_acquire/release, gk_monitor_wait and
 * gk_monitor_history from any thread. Samples are read-only. */
#ifndef GPUKIT_MONITOR_H
#define GPUKIT_MONITOR_H

#include <gpukit/lease.h>
#include <gpukit/probe.h>
#include <gpukit/status.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gk_monitor_options {
    double interval;       /* seconds between readings of gk_monitor_start; 0: 1 s */
    size_t history;        /* readings kept per GPU for graphs; 0: 300 */
    bool no_processes;     /* do not list processes (cheaper) */
    const char *lease_dir; /* NULL: $GPUKIT_LEASE_DIR, else /tmp/gpukit-leases */
} gk_monitor_options;

/* A GPU process with what gpukit knows about it. */
typedef struct gk_sample_process {
    size_t gpu;               /* index into snapshot->gpus */
    const gk_process *process;
    int lease;                /* index into the sample's leases, or -1 */
    gk_field cpu_percent;     /* tenths of a percent of a core since the previous
                                 reading (unknown in the first) */
    char kernel[96];          /* Jupyter kernel: its kernelspec name, else "" */
    char kernel_id[64];       /* the kernel's id (from its connection file), else "" */
    char notebook[256];       /* the notebook's path when Jupyter told the kernel */
} gk_sample_process;

typedef struct gk_sample {
    uint64_t number;          /* 1 for the first reading */
    double read_seconds;      /* how long this reading took */
    gk_snapshot *snapshot;
    gk_lease *leases;         /* holding leases, oldest first, then the waiting line */
    size_t lease_count;
    char lease_problem[256];  /* why the leases could not be read; "" when they were */
    gk_sample_process *processes; /* every GPU's processes, GPU by GPU */
    size_t process_count;
    uint64_t failed_readings; /* readings that failed since the monitor opened, as
                                 of this one (gk_monitor_current: as of now) */
} gk_sample;

/* One point of a GPU's history; fields the driver did not give are unknown. */
typedef struct gk_history_point {
    struct timespec time;     /* CLOCK_REALTIME */
    gk_field utilization;     /* percent */
    gk_field memory_used, memory_total; /* bytes */
    gk_field power;           /* milliwatts */
    gk_field temperature;     /* Celsius */
} gk_history_point;

typedef struct gk_monitor gk_monitor;

/* Opens the driver; takes no reading. Fails only for resource problems. */
gk_status gk_monitor_open(const gk_monitor_options *options, gk_monitor **out);
/* Stops the thread if running and frees the monitor; samples still
 * acquired stay valid until released. */
void gk_monitor_close(gk_monitor *monitor);

/* Takes one reading now and publishes it; GK_ERR_INVALID_ARGUMENT while
 * the monitor's own thread reads (gk_monitor_start). */
gk_status gk_monitor_read(gk_monitor *monitor);

/* Reads every `interval` seconds on a thread of its own until stopped. The
 * first reading is made before gk_monitor_start returns. */
gk_status gk_monitor_start(gk_monitor *monitor);
void gk_monitor_stop(gk_monitor *monitor);

/* The latest reading (NULL before the first), held until released (which
 * may come after gk_monitor_close). */
const gk_sample *gk_monitor_acquire(gk_monitor *monitor);
void gk_monitor_release(gk_monitor *monitor, const gk_sample *sample);

/* Waits up to `timeout` seconds (a day at most) for a reading newer than `after`; returns
 * the latest reading's number (which is `after` on a timeout), or 0 once the
 * monitor is stopping. */
uint64_t gk_monitor_wait(gk_monitor *monitor, uint64_t after, double timeout);

/* Copies the history of the snapshot's GPU at position `gpu`, oldest first, into
 * `points` (up to `max`); returns how many were copied. */
size_t gk_monitor_history(gk_monitor *monitor, unsigned gpu, gk_history_point *points,
                          size_t max);

double gk_monitor_interval(const gk_monitor *monitor);

/* A held sample with the monitor's count of failed readings as of now: a
 * copy that shares the sample's parts (use it only while the sample is
 * held). A failed reading publishes no sample, so the latest sample's own
 * count stays where it was while readings keep failing; what a reader shows
 * of the monitor (gpukit_monitor_failed_readings_total) is rendered from
 * this copy. */
gk_sample gk_monitor_current(gk_monitor *monitor, const gk_sample *sample);

/* The sample as text for Prometheus: its text format 0.0.4, or OpenMetrics
 * 1.0 when `openmetrics` (then ending in "# EOF"). DCGM-exporter's metric
 * names, units and labels for the GPUs, so its dashboards work unchanged,
 * and gpukit_* families in base units for processes, leases, the waiting
 * line and the monitor itself. A value the driver could not give has no
 * sample. Free *text with free(). */
gk_status gk_sample_metrics(const gk_sample *sample, bool openmetrics, char **text, size_t *length);

/* The sample as JSON: the document of `gpukit ls --json`, each process with
 * its lease and Jupyter kernel, plus "leases" and "waiting". Free *text with
 * free(). */
gk_status gk_sample_json(const gk_sample *sample, char **text);

/* --- `gpukit top`'s picture of a reading, as lines of text --- */

/* The process table's columns, which it can be sorted by. */
typedef enum gk_top_column {
    GK_TOP_GPU,
    GK_TOP_PID,
    GK_TOP_USER,
    GK_TOP_GPU_MEMORY,
    GK_TOP_CPU,
    GK_TOP_HOST_MEMORY,
    GK_TOP_TIME,
    GK_TOP_JOB,     /* the gpukit lease or Jupyter kernel */
    GK_TOP_COMMAND,
    GK_TOP_COLUMNS
} gk_top_column;

typedef struct gk_frame_options {
    unsigned width;         /* columns, at least 20 */
    unsigned height;        /* rows; 0: as many as everything needs (--once) */
    gk_top_column sort;
    bool ascending;         /* else largest first (names: A to Z either way is by `ascending`) */
    bool tree;              /* processes grouped under the lease they run under */
    const char *filter;     /* NULL or "": all; "user:NAME", "gpu:N", "pid:N", else text
                               found (any case) in the user, command, job or pid */
    size_t selected;        /* the selected process row (clamped) */
    bool show_selection;    /* mark it (an interactive view) */
    int graph_gpu;          /* the GPU (index into the snapshot) whose history is
                               graphed; -1: none */
    bool unicode;           /* block characters for bars and graphs, else ASCII */
    uint64_t gpu_mask;      /* only the GPUs whose index has its bit set; 0: all */
    size_t command_offset;  /* characters of each command line scrolled off to the left */
} gk_frame_options;

/* How a piece of a line should look; the terminal decides the colors. */
typedef enum gk_style {
    GK_STYLE_PLAIN,
    GK_STYLE_TITLE,
    GK_STYLE_HEADER,   /* column headers */
    GK_STYLE_DIM,      /* labels, unknown values */
    GK_STYLE_LOW,      /* a load that is low ... */
    GK_STYLE_MEDIUM,
    GK_STYLE_HIGH,     /* ... or high */
    GK_STYLE_BAD,      /* a lost or failing GPU, a problem */
    GK_STYLE_SELECTED, /* the selected process row */
} gk_style;

typedef struct gk_frame_span {
    size_t start, end; /* bytes of the line's text */
    gk_style style;
} gk_frame_span;

typedef struct gk_frame_line {
    char *text; /* UTF-8, at most `width` characters */
    gk_frame_span *spans;
    size_t span_count;
} gk_frame_line;

typedef struct gk_frame {
    gk_frame_line *lines;
    size_t line_count;
    /* The process rows after filtering, in the order shown: their pids and
     * owners, so a front end can act on the selected one. */
    uint32_t *row_pids;
    gk_field *row_uids;
    size_t row_count;
    size_t selected; /* the option, clamped to the rows */
} gk_frame;

/* Draws `sample` (and, for the graph, the monitor's history) as the lines
 * of one frame of `gpukit top`: a header, each GPU with bars (and its MIG
 * instances, or its error when it is lost), the history graph of one GPU,
 * and the process table. Free with gk_frame_free(). */
gk_status gk_frame_draw(gk_monitor *monitor, const gk_sample *sample,
                        const gk_frame_options *options, gk_frame *frame);
void gk_frame_free(gk_frame *frame);

/* The column's name in the table header ("GPU-MEM"), and the column whose
 * name starts with `name` (any case), or -1. */
const char *gk_top_column_name(gk_top_column column);
int gk_top_column_find(const char *name);

/* Each GPU's history as JSON: {"interval": seconds, "gpus": [{"index": i,
 * "points": [[unix time, utilization %, memory used B, memory total B,
 * power W, temperature C], ...]}]}, oldest first, unknown values null.
 * Free *text with free(). */
gk_status gk_monitor_history_json(gk_monitor *monitor, char **text);

/* The Content-Type of gk_sample_metrics' output. */
#define GK_METRICS_TEXT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define GK_METRICS_OPENMETRICS_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

#ifdef __cplusplus
}
#endif
#endif
