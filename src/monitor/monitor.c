/* The sampler shared by top, serve and gpukit.monitor() (gpukit/monitor.h):
 * readings taken on demand or on a thread, published whole behind a
 * reference count, and each GPU's recent history for graphs. */
#define _GNU_SOURCE /* pthread_setname_np */
#include <gpukit/monitor.h>

#include "core/error.h"
#include "monitor/processes.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_INTERVAL 1.0
#define DEFAULT_HISTORY 300

/* A published reading and how many readers hold it. */
typedef struct held_sample {
    gk_sample sample; /* first: a gk_sample pointer is a held_sample pointer */
    /* Atomic, so a reader can let go without the monitor (which may be
     * closed by then). */
    atomic_uint references;
} held_sample;

struct gk_monitor {
    double interval;
    size_t history_capacity;
    bool processes;
    char *lease_dir;
    gk_probe *probe;
    gk_cpu cpu; /* read once: the model and cores do not change */
    bool cpu_read;

    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t changed;
    held_sample *latest;
    uint64_t readings, failed_readings;
    /* history[gpu * capacity + slot]: a ring per GPU, `history_length`
     * points ending before `history_next`. Reset when the GPU count changes. */
    gk_history_point *history;
    size_t history_gpus, history_length, history_next;
    bool running, stopping;
    pthread_t thread;
};

static void free_sample(gk_sample *sample)
{
    gk_snapshot_destroy(sample->snapshot);
    free(sample->leases);
    free(sample->processes);
    free(sample);
}

gk_status gk_monitor_open(const gk_monitor_options *options, gk_monitor **out)
{
    *out = NULL;
    gk_monitor_options defaults = {0};
    if (!options)
        options = &defaults;
    if (!(options->interval >= 0) || !isfinite(options->interval))
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "the monitor's interval must be a positive number "
                                                "of seconds, not %g",
                       options->interval);
    gk_monitor *monitor = calloc(1, sizeof *monitor);
    if (!monitor)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory opening the monitor");
    monitor->interval = options->interval > 0 ? options->interval : DEFAULT_INTERVAL;
    monitor->history_capacity = options->history ? options->history : DEFAULT_HISTORY;
    monitor->processes = !options->no_processes;
    if (options->lease_dir && !(monitor->lease_dir = strdup(options->lease_dir))) {
        free(monitor);
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory opening the monitor");
    }
    gk_status status = gk_probe_open(&monitor->probe);
    if (status != GK_OK) {
        free(monitor->lease_dir);
        free(monitor);
        return status;
    }
    pthread_mutex_init(&monitor->lock, NULL);
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&monitor->changed, &attributes);
    pthread_condattr_destroy(&attributes);
    *out = monitor;
    return GK_OK;
}

void gk_monitor_close(gk_monitor *monitor)
{
    if (!monitor)
        return;
    gk_monitor_stop(monitor);
    pthread_mutex_lock(&monitor->lock);
    held_sample *latest = monitor->latest;
    monitor->latest = NULL;
    pthread_mutex_unlock(&monitor->lock);
    if (latest && atomic_fetch_sub(&latest->references, 1) == 1)
        free_sample(&latest->sample);
    gk_probe_close(monitor->probe);
    pthread_cond_destroy(&monitor->changed);
    pthread_mutex_destroy(&monitor->lock);
    free(monitor->history);
    free(monitor->lease_dir);
    free(monitor);
}

/* Appends each GPU's point of this reading to its ring; call with the lock. */
static void record_history(gk_monitor *monitor, const gk_snapshot *snapshot)
{
    size_t capacity = monitor->history_capacity;
    if (monitor->history_gpus != snapshot->gpu_count) {
        free(monitor->history);
        monitor->history = NULL;
        monitor->history_gpus = 0;
        monitor->history_length = monitor->history_next = 0;
        if (snapshot->gpu_count == 0 || capacity > SIZE_MAX / sizeof *monitor->history /
                                                       snapshot->gpu_count)
            return;
        monitor->history = calloc(snapshot->gpu_count * capacity, sizeof *monitor->history);
        if (!monitor->history)
            return; /* graphs are lost, readings are not */
        monitor->history_gpus = snapshot->gpu_count;
    }
    for (size_t g = 0; g < snapshot->gpu_count; g++) {
        const gk_gpu *gpu = &snapshot->gpus[g];
        gk_history_point *point = &monitor->history[g * capacity + monitor->history_next];
        point->time = snapshot->query_time;
        point->utilization = gpu->utilization_gpu;
        point->memory_used = gpu->memory_used;
        point->memory_total = gpu->memory_total;
        point->power = gpu->power_draw;
        point->temperature = gpu->temperature;
    }
    monitor->history_next = (monitor->history_next + 1) % capacity;
    if (monitor->history_length < capacity)
        monitor->history_length++;
}

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

static gk_status read_now(gk_monitor *monitor);

gk_status gk_monitor_read(gk_monitor *monitor)
{
    if (monitor->running && !pthread_equal(pthread_self(), monitor->thread))
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "the monitor reads on its own thread (gk_monitor_start): wait for its "
                       "readings instead");
    return read_now(monitor);
}

/* One reading, published. */
static gk_status read_now(gk_monitor *monitor)
{
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    held_sample *held = calloc(1, sizeof *held);
    if (!held)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory reading the GPUs");
    gk_sample *sample = &held->sample;
    unsigned flags = (monitor->processes ? GK_PROBE_PROCESSES : 0) |
                     (monitor->cpu_read ? GK_PROBE_NO_CPU : 0);
    gk_status status = gk_probe_read(monitor->probe, flags, &sample->snapshot);
    if (status == GK_OK) {
        if (!monitor->cpu_read) {
            monitor->cpu = sample->snapshot->cpu;
            monitor->cpu_read = true;
        }
        sample->snapshot->cpu = monitor->cpu;
        status = gk_monitor_read_leases(monitor->lease_dir, sample);
    }
    if (status == GK_OK) {
        const gk_sample *previous = gk_monitor_acquire(monitor);
        status = gk_monitor_describe_processes(sample, previous);
        gk_monitor_release(monitor, previous);
    }
    if (status != GK_OK) {
        pthread_mutex_lock(&monitor->lock);
        monitor->failed_readings++;
        pthread_mutex_unlock(&monitor->lock);
        free_sample(sample);
        return status;
    }
    sample->read_seconds = seconds_since(&start);

    pthread_mutex_lock(&monitor->lock);
    sample->number = ++monitor->readings;
    sample->failed_readings = monitor->failed_readings;
    atomic_init(&held->references, 1); /* the monitor's own */
    held_sample *previous = monitor->latest;
    monitor->latest = held;
    record_history(monitor, sample->snapshot);
    pthread_cond_broadcast(&monitor->changed);
    pthread_mutex_unlock(&monitor->lock);
    if (previous && atomic_fetch_sub(&previous->references, 1) == 1)
        free_sample(&previous->sample);
    return GK_OK;
}

const gk_sample *gk_monitor_acquire(gk_monitor *monitor)
{
    pthread_mutex_lock(&monitor->lock);
    held_sample *held = monitor->latest;
    if (held)
        atomic_fetch_add(&held->references, 1);
    pthread_mutex_unlock(&monitor->lock);
    return held ? &held->sample : NULL;
}

void gk_monitor_release(gk_monitor *monitor, const gk_sample *sample)
{
    (void)monitor; /* (it may be closed already) */
    if (!sample)
        return;
    held_sample *held = (held_sample *)sample;
    if (atomic_fetch_sub(&held->references, 1) == 1)
        free_sample(&held->sample);
}

static struct timespec deadline_after(double seconds)
{
    struct timespec when;
    clock_gettime(CLOCK_MONOTONIC, &when);
    double whole = floor(seconds);
    when.tv_sec += (time_t)whole;
    when.tv_nsec += (long)((seconds - whole) * 1e9);
    if (when.tv_nsec >= 1000000000L) {
        when.tv_sec++;
        when.tv_nsec -= 1000000000L;
    }
    return when;
}

uint64_t gk_monitor_wait(gk_monitor *monitor, uint64_t after, double timeout)
{
    /* A day at most: NaN, infinities and huge values would overflow the
     * deadline's fields. */
    if (!(timeout > 0))
        timeout = 0;
    if (timeout > 86400)
        timeout = 86400;
    struct timespec deadline = deadline_after(timeout);
    pthread_mutex_lock(&monitor->lock);
    while (!monitor->stopping && monitor->readings <= after &&
           pthread_cond_timedwait(&monitor->changed, &monitor->lock, &deadline) == 0) {
    }
    uint64_t latest = monitor->stopping ? 0 : monitor->readings;
    pthread_mutex_unlock(&monitor->lock);
    return latest;
}

size_t gk_monitor_history(gk_monitor *monitor, unsigned gpu, gk_history_point *points, size_t max)
{
    pthread_mutex_lock(&monitor->lock);
    size_t capacity = monitor->history_capacity, copied = 0;
    if (gpu < monitor->history_gpus) {
        size_t length = monitor->history_length < max ? monitor->history_length : max;
        /* The newest `length` points, oldest first. */
        size_t first = (monitor->history_next + capacity - length) % capacity;
        for (; copied < length; copied++)
            points[copied] = monitor->history[gpu * capacity + (first + copied) % capacity];
    }
    pthread_mutex_unlock(&monitor->lock);
    return copied;
}

double gk_monitor_interval(const gk_monitor *monitor)
{
    return monitor->interval;
}

gk_sample gk_monitor_current(gk_monitor *monitor, const gk_sample *sample)
{
    gk_sample now = *sample;
    /* under the lock: the reading thread counts its failures */
    pthread_mutex_lock(&monitor->lock);
    now.failed_readings = monitor->failed_readings;
    pthread_mutex_unlock(&monitor->lock);
    return now;
}

/* The reading thread: one reading per interval, on a fixed schedule (a slow
 * reading shortens the next pause rather than shifting every later one). */
static void *reader(void *opaque)
{
    gk_monitor *monitor = opaque;
    pthread_setname_np(pthread_self(), "gpukit-monitor");
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        double whole = floor(monitor->interval);
        next.tv_sec += (time_t)whole;
        next.tv_nsec += (long)((monitor->interval - whole) * 1e9);
        if (next.tv_nsec >= 1000000000L) {
            next.tv_sec++;
            next.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&monitor->lock);
        while (!monitor->stopping &&
               pthread_cond_timedwait(&monitor->changed, &monitor->lock, &next) != ETIMEDOUT) {
        }
        bool stopping = monitor->stopping;
        pthread_mutex_unlock(&monitor->lock);
        if (stopping)
            break;
        /* A failed reading is counted (gpukit_monitor_failed_readings_total)
         * and the last good one stays published. */
        read_now(monitor);
        /* Fell behind (a reading slower than the interval): start afresh. */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > next.tv_sec + 1)
            next = now;
    }
    return NULL;
}

gk_status gk_monitor_start(gk_monitor *monitor)
{
    if (monitor->running)
        return GK_OK;
    gk_status status = read_now(monitor);
    if (status != GK_OK)
        return status;
    monitor->stopping = false;
    int error = pthread_create(&monitor->thread, NULL, reader, monitor);
    if (error)
        return gk_fail(GK_ERR_IO, "cannot start the monitor's thread: %s", strerror(error));
    monitor->running = true;
    return GK_OK;
}

void gk_monitor_stop(gk_monitor *monitor)
{
    pthread_mutex_lock(&monitor->lock);
    monitor->stopping = true;
    pthread_cond_broadcast(&monitor->changed);
    pthread_mutex_unlock(&monitor->lock);
    if (monitor->running) {
        pthread_join(monitor->thread, NULL);
        monitor->running = false;
    }
}
