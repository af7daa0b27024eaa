/* One frame of `gpukit top` as styled lines of text (gk_frame_draw in
 * gpukit/monitor.h), shared by the interactive view (cli/top.c draws the
 * lines with ncurses), `gpukit top --once` and gpukit.monitor() in a plain
 * terminal. Deciding what to show lives here; drawing it lives there.
 *
 * Layout, top to bottom: a title line; each GPU (two lines with bars, or
 * one when the screen is short, plus its MIG instances, or its error); the
 * history graph of one GPU; the process table, scrolled to keep the
 * selected row in view. A frame of fixed height gives up, in this order,
 * the graph's second row per series, the GPUs' second lines, then the graph,
 * so that a few process rows always remain. */
#define _GNU_SOURCE /* strcasestr */
#include <gpukit/monitor.h>

#include "core/error.h"
#include "core/strings.h"
#include "core/units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MIB ((uint64_t)1024 * 1024)
#define MIN_PROCESS_ROWS 4

/* --- building lines --- */

typedef struct builder {
    gk_frame *frame;
    unsigned width;
    bool unicode;
    bool failed;
    /* the line being built */
    char text[8192]; /* a line of up to 1000 columns of 3-byte characters fits */
    size_t length;  /* bytes */
    unsigned column; /* characters */
    gk_frame_span spans[64];
    size_t span_count;
} builder;

/* Appends text in a style, cut at the frame's width. Characters are counted
 * as code points (East Asian wide ones would count one too few); a
 * character is written whole or not at all. Control characters (a command
 * line may hold any, C1 ones included) and bytes that are not UTF-8 would
 * move the terminal's cursor or garble the line: each is shown as '?'. */
static void put(builder *b, gk_style style, const char *text)
{
    size_t start = b->length;
    for (const unsigned char *c = (const unsigned char *)text; *c && b->column < b->width;) {
        size_t length = gk_printable_character(c), whole = gk_utf8_character(c);
        size_t size = length ? length : 1; /* the character, or '?' for it */
        if (b->length + size >= sizeof b->text)
            break;
        memcpy(b->text + b->length, length ? (const char *)c : "?", size);
        b->length += size;
        b->column++;
        c += whole ? whole : 1;
    }
    if (b->length > start && style != GK_STYLE_PLAIN &&
        b->span_count < sizeof b->spans / sizeof b->spans[0])
        b->spans[b->span_count++] = (gk_frame_span){start, b->length, style};
}

static void putf(builder *b, gk_style style, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void putf(builder *b, gk_style style, const char *format, ...)
{
    char text[1024];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(text, sizeof text, format, arguments);
    va_end(arguments);
    put(b, style, text);
}

/* Spaces up to `column`. */
static void pad_to(builder *b, unsigned column)
{
    while (b->column < column && b->column < b->width && b->length + 1 < sizeof b->text) {
        b->text[b->length++] = ' ';
        b->column++;
    }
}

/* Ends the line: it joins the frame. */
static void end_line(builder *b)
{
    gk_frame *frame = b->frame;
    gk_frame_line *lines = realloc(frame->lines, (frame->line_count + 1) * sizeof *lines);
    char *text = malloc(b->length + 1);
    gk_frame_span *spans = b->span_count ? malloc(b->span_count * sizeof *spans) : NULL;
    if (!lines || !text || (b->span_count && !spans)) {
        if (lines)
            frame->lines = lines;
        free(text);
        free(spans);
        b->failed = true;
    } else {
        memcpy(text, b->text, b->length);
        text[b->length] = '\0';
        if (spans)
            memcpy(spans, b->spans, b->span_count * sizeof *spans);
        frame->lines = lines;
        frame->lines[frame->line_count++] = (gk_frame_line){text, spans, b->span_count};
    }
    b->length = 0;
    b->column = 0;
    b->span_count = 0;
}

/* --- values --- */

static gk_style load_style(double percent)
{
    return percent >= 80 ? GK_STYLE_HIGH : percent >= 40 ? GK_STYLE_MEDIUM : GK_STYLE_LOW;
}

/* A bar of `cells` characters filled to `percent` (eighths of a cell with
 * block characters, else '|'), in brackets. */
static void bar(builder *b, double percent, bool known, unsigned cells)
{
    static const char *const eighths[] = {"", "\u258F", "\u258E", "\u258D", "\u258C",
                                          "\u258B", "\u258A", "\u2589"};
    put(b, GK_STYLE_DIM, "[");
    if (percent < 0)
        percent = 0;
    if (percent > 100)
        percent = 100;
    unsigned filled_eighths = known ? (unsigned)(percent / 100.0 * cells * 8 + 0.5) : 0;
    gk_style style = known ? load_style(percent) : GK_STYLE_DIM;
    unsigned used = 0;
    for (; used < filled_eighths / 8; used++)
        put(b, style, b->unicode ? "\u2588" : "|");
    if (used < cells && filled_eighths % 8) {
        put(b, style, b->unicode ? eighths[filled_eighths % 8] : (filled_eighths % 8 >= 4 ? "|" : " "));
        used++;
    }
    for (; used < cells; used++)
        put(b, GK_STYLE_PLAIN, " ");
    put(b, GK_STYLE_DIM, "]");
}

static const char *field_text(char *buf, size_t size, gk_field field, uint64_t divisor,
                              const char *unit)
{
    if (field.known)
        snprintf(buf, size, "%" PRIu64 "%s", field.value / divisor, unit);
    else
        snprintf(buf, size, "N/A");
    return buf;
}

static double percent_of(gk_field part, gk_field whole)
{
    return part.known && whole.known && whole.value ? 100.0 * (double)part.value / (double)whole.value
                                                    : 0;
}

/* [[d-]hh:]mm:ss, as ps shows a process's age. */
static const char *duration_text(char *buf, size_t size, gk_field milliseconds)
{
    if (!milliseconds.known)
        return snprintf(buf, size, "N/A"), buf;
    uint64_t s = milliseconds.value / 1000;
    uint64_t days = s / 86400, hours = s / 3600 % 24, minutes = s / 60 % 60, seconds = s % 60;
    if (days)
        snprintf(buf, size, "%" PRIu64 "-%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64, days, hours,
                 minutes, seconds);
    else if (hours)
        snprintf(buf, size, "%" PRIu64 ":%02" PRIu64 ":%02" PRIu64, hours, minutes, seconds);
    else
        snprintf(buf, size, "%" PRIu64 ":%02" PRIu64, minutes, seconds);
    return buf;
}

/* --- the GPUs --- */

static void gpu_title(builder *b, const gk_gpu *gpu, unsigned name_width)
{
    putf(b, GK_STYLE_TITLE, "%2u ", gpu->index);
    char name[128];
    snprintf(name, sizeof name, "%-*.*s", (int)name_width, (int)name_width,
             gpu->name[0] ? gpu->name : "(unknown)");
    put(b, GK_STYLE_TITLE, name);
}

static void gpu_error_line(builder *b, const gk_gpu *gpu)
{
    gpu_title(b, gpu, 24);
    putf(b, GK_STYLE_BAD, " %s: %s", gk_gpu_state_name(gpu->state), gpu->error);
    end_line(b);
}

/* The temperature, power, fan and codec facts. */
static void gpu_facts(builder *b, const gk_gpu *gpu, bool codecs)
{
    char t[32], p[32], l[32], f[32], e[32], d[32];
    put(b, GK_STYLE_PLAIN, " ");
    /* The degree sign only where the terminal's character set has it; no
     * unit after N/A. */
    put(b, gpu->temperature.known ? load_style((double)gpu->temperature.value) : GK_STYLE_DIM,
        gpu->temperature.known ? (snprintf(t, sizeof t, "%3" PRIu64 "%s", gpu->temperature.value,
                                           b->unicode ? "\u00b0C" : "C"), t)
                               : (b->unicode ? "  N/A" : " N/A"));
    /* draw/limit W, or the draw alone without a limit ("N/A/N/AW" was
     * both unknown) */
    double power = percent_of(gpu->power_draw, gpu->power_limit);
    bool limit = gpu->power_limit.known, draw = gpu->power_draw.known;
    putf(b, draw ? load_style(power) : GK_STYLE_DIM, " %4s",
         field_text(p, sizeof p, gpu->power_draw, 1000, limit || !draw ? "" : "W"));
    if (limit)
        putf(b, GK_STYLE_DIM, "/%sW", field_text(l, sizeof l, gpu->power_limit, 1000, ""));
    putf(b, GK_STYLE_DIM, " fan ");
    put(b, GK_STYLE_PLAIN, field_text(f, sizeof f, gpu->fan_speed, 1, "%"));
    if (codecs)
        putf(b, GK_STYLE_DIM, " enc %s dec %s", field_text(e, sizeof e, gpu->utilization_encoder, 1, "%"),
             field_text(d, sizeof d, gpu->utilization_decoder, 1, "%"));
}

static void memory_text(char *buf, size_t size, gk_field used, gk_field total)
{
    char u[32], t[32];
    snprintf(buf, size, "%s/%s MiB", field_text(u, sizeof u, used, MIB, ""),
             field_text(t, sizeof t, total, MIB, ""));
}

/* Two lines: the name and facts, then the utilization and memory bars. */
static void gpu_full(builder *b, const gk_gpu *gpu)
{
    unsigned name_width = b->width >= 100 ? 32 : 26;
    gpu_title(b, gpu, name_width);
    gpu_facts(b, gpu, true);
    end_line(b);

    char text[64];
    /* "   UTIL [bar] 100%   MEM [bar] 81559/81559 MiB" */
    unsigned cells = b->width > 40 ? (b->width - 40) / 2 : 4;
    put(b, GK_STYLE_DIM, "   UTIL ");
    bar(b, (double)gpu->utilization_gpu.value, gpu->utilization_gpu.known, cells);
    putf(b, GK_STYLE_PLAIN, " %4s", field_text(text, sizeof text, gpu->utilization_gpu, 1, "%"));
    put(b, GK_STYLE_DIM, "  MEM ");
    bar(b, percent_of(gpu->memory_used, gpu->memory_total), gpu->memory_used.known, cells);
    memory_text(text, sizeof text, gpu->memory_used, gpu->memory_total);
    putf(b, GK_STYLE_PLAIN, " %s", text);
    end_line(b);
}

/* One line: name, both bars, temperature and power. */
static void gpu_compact(builder *b, const gk_gpu *gpu)
{
    gpu_title(b, gpu, b->width >= 100 ? 26 : 14);
    char text[64];
    unsigned cells = b->width >= 100 ? 14 : 6;
    put(b, GK_STYLE_PLAIN, " ");
    bar(b, (double)gpu->utilization_gpu.value, gpu->utilization_gpu.known, cells);
    putf(b, GK_STYLE_PLAIN, "%4s ", field_text(text, sizeof text, gpu->utilization_gpu, 1, "%"));
    bar(b, percent_of(gpu->memory_used, gpu->memory_total), gpu->memory_used.known, cells);
    memory_text(text, sizeof text, gpu->memory_used, gpu->memory_total);
    putf(b, GK_STYLE_PLAIN, " %15s", text); /* aligned from GPU to GPU */
    gpu_facts(b, gpu, false);
    end_line(b);
}

static const char *mig_profile(const gk_mig_device *mig)
{
    const char *at = strstr(mig->name, "MIG ");
    return at ? at + 4 : mig->name;
}

static void mig_lines(builder *b, const gk_gpu *gpu)
{
    for (size_t i = 0; i < gpu->mig_count; i++) {
        const gk_mig_device *mig = &gpu->mig_devices[i];
        char text[64];
        putf(b, GK_STYLE_DIM, "   MIG %-10.10s", mig_profile(mig));
        bar(b, percent_of(mig->memory_used, mig->memory_total), mig->memory_used.known,
            b->width > 40 ? (b->width - 40) / 2 : 4);
        memory_text(text, sizeof text, mig->memory_used, mig->memory_total);
        putf(b, GK_STYLE_PLAIN, " %s", text);
        end_line(b);
    }
}

/* --- the history graph --- */

/* One series as `rows` rows of vertical bars, newest at the right. */
static void graph_series(builder *b, const char *label, const gk_history_point *points,
                         size_t count, bool memory, unsigned rows)
{
    static const char *const levels[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584",
                                         "\u2585", "\u2586", "\u2587", "\u2588"};
    static const char *const ascii[] = {" ", ".", ".", "-", "-", "=", "=", "#", "#"};
    unsigned cells = b->width > 12 ? b->width - 12 : 0;
    size_t first = count > cells ? count - cells : 0;
    for (unsigned row = 0; row < rows; row++) {
        /* label on the top row, the scale on the right of each row */
        putf(b, GK_STYLE_DIM, "%-6s", row == 0 ? label : "");
        pad_to(b, 6 + (unsigned)(cells - (count - first)));
        for (size_t i = first; i < count; i++) {
            const gk_history_point *p = &points[i];
            bool known = memory ? p->memory_used.known : p->utilization.known;
            double percent = memory ? percent_of(p->memory_used, p->memory_total)
                                    : (double)p->utilization.value;
            /* eighths of the whole column height filled, this row's share */
            int total = known ? (int)(percent / 100.0 * rows * 8 + 0.5) : 0;
            int here = total - (int)(rows - 1 - row) * 8;
            here = here < 0 ? 0 : here > 8 ? 8 : here;
            put(b, known ? load_style(percent) : GK_STYLE_DIM,
                b->unicode ? levels[here] : ascii[here]);
        }
        pad_to(b, b->width > 6 ? b->width - 6 : 0);
        putf(b, GK_STYLE_DIM, " %3u%%", 100 * (rows - row) / rows);
        end_line(b);
    }
}

static void graph(builder *b, gk_monitor *monitor, const gk_gpu *gpu, size_t position,
                  unsigned rows, double interval)
{
    size_t capacity = b->width;
    gk_history_point *points = calloc(capacity, sizeof *points);
    if (!points) {
        b->failed = true;
        return;
    }
    size_t count =
        monitor ? gk_monitor_history(monitor, (unsigned)position, points, capacity) : 0;
    putf(b, GK_STYLE_HEADER, "GPU %u history, %zu reading(s) every %gs (Tab: next GPU)",
         gpu->index, count, interval);
    end_line(b);
    graph_series(b, "UTIL", points, count, false, rows);
    graph_series(b, "MEM", points, count, true, rows);
    free(points);
}

/* --- the process table --- */

typedef struct row {
    const gk_sample_process *entry;
    char job[96];
    char command[1100]; /* the command line, made once for filter, sort and row */
} row;

static void job_text(const gk_sample *sample, const gk_sample_process *entry, char *buf,
                     size_t size)
{
    if (entry->kernel[0] || entry->kernel_id[0]) {
        const char *notebook = strrchr(entry->notebook, '/');
        notebook = notebook ? notebook + 1 : entry->notebook;
        snprintf(buf, size, "%s%s%s", entry->kernel[0] ? entry->kernel : "kernel",
                 notebook[0] ? ":" : "", notebook);
    } else if (entry->lease >= 0 && sample->leases[entry->lease].slurm) {
        snprintf(buf, size, "%s", sample->leases[entry->lease].name);
    } else if (entry->lease >= 0) {
        snprintf(buf, size, "lease:%" PRIu32, sample->leases[entry->lease].pid);
    } else {
        snprintf(buf, size, "-");
    }
}

static bool shown_gpu(const gk_frame_options *options, const gk_gpu *gpu)
{
    return options->gpu_mask == 0 || (gpu->index < 64 && (options->gpu_mask >> gpu->index & 1));
}

/* The N of a `gpu:N` or `pid:N` filter: only a whole number (strtoul alone
 * reads "x" as 0 and "1x" as 1, so such a filter would match the wrong rows). */
static bool filter_number(const char *text, unsigned long *number)
{
    if (!*text || strspn(text, "0123456789") != strlen(text))
        return false;
    errno = 0;
    *number = strtoul(text, NULL, 10);
    return errno == 0;
}

static bool matches(const gk_sample *sample, const row *r, const char *filter)
{
    if (!filter || !*filter)
        return true;
    const gk_process *process = r->entry->process;
    const gk_gpu *gpu = &sample->snapshot->gpus[r->entry->gpu];
    if (strncasecmp(filter, "user:", 5) == 0)
        return strcmp(process->user, filter + 5) == 0;
    unsigned long number;
    if (strncasecmp(filter, "gpu:", 4) == 0)
        return filter_number(filter + 4, &number) && number == gpu->index;
    if (strncasecmp(filter, "pid:", 4) == 0)
        return filter_number(filter + 4, &number) && number == process->pid;
    char text[1400];
    snprintf(text, sizeof text, "%" PRIu32 " %s %s %s %s", process->pid, process->user, r->job,
             r->entry->notebook, r->command);
    return strcasestr(text, filter) != NULL;
}

static int compare_fields(gk_field a, gk_field b)
{
    if (a.known != b.known)
        return a.known ? 1 : -1; /* unknown below every value */
    return a.value < b.value ? -1 : a.value > b.value;
}

/* qsort has no context argument in C11: the sort settings of the one frame
 * being drawn on this thread. */
static _Thread_local const gk_frame_options *sorting;

static int compare_rows(const void *pa, const void *pb)
{
    const row *ra = pa, *rb = pb;
    const gk_process *a = ra->entry->process, *b = rb->entry->process;
    int order = 0;
    switch (sorting->sort) {
    case GK_TOP_GPU: order = (ra->entry->gpu > rb->entry->gpu) - (ra->entry->gpu < rb->entry->gpu); break;
    case GK_TOP_PID: order = (a->pid > b->pid) - (a->pid < b->pid); break;
    case GK_TOP_USER: order = strcmp(a->user, b->user); break;
    case GK_TOP_GPU_MEMORY: order = compare_fields(a->gpu_memory, b->gpu_memory); break;
    case GK_TOP_CPU: order = compare_fields(ra->entry->cpu_percent, rb->entry->cpu_percent); break;
    case GK_TOP_HOST_MEMORY: order = compare_fields(a->host_memory, b->host_memory); break;
    case GK_TOP_TIME: order = compare_fields(a->running_time, b->running_time); break;
    case GK_TOP_JOB: order = strcmp(ra->job, rb->job); break;
    case GK_TOP_COMMAND: order = strcmp(ra->command, rb->command); break;
    case GK_TOP_COLUMNS: break;
    }
    /* In tree view, rows stay grouped by their lease first. */
    if (sorting->tree && ra->entry->lease != rb->entry->lease) {
        int la = ra->entry->lease < 0 ? 1 << 30 : ra->entry->lease;
        int lb = rb->entry->lease < 0 ? 1 << 30 : rb->entry->lease;
        return (la > lb) - (la < lb);
    }
    if (!sorting->ascending)
        order = -order;
    if (order == 0) /* steady: ties by GPU, then pid */
        order = ra->entry->gpu != rb->entry->gpu ? (ra->entry->gpu > rb->entry->gpu ? 1 : -1)
                                                 : (a->pid > b->pid) - (a->pid < b->pid);
    return order;
}

static const char *const column_names[GK_TOP_COLUMNS] = {
    "GPU", "PID", "USER", "GPU-MEM", "%CPU", "HOST-MEM", "TIME", "JOB", "COMMAND",
};

const char *gk_top_column_name(gk_top_column column)
{
    return column < GK_TOP_COLUMNS ? column_names[column] : "?";
}

int gk_top_column_find(const char *name)
{
    for (int c = 0; c < GK_TOP_COLUMNS; c++)
        if (*name && strncasecmp(column_names[c], name, strlen(name)) == 0)
            return c;
    return -1;
}

/* The header: every column name, the sorted one marked. */
static void table_header(builder *b, const gk_frame_options *options)
{
    static const int widths[GK_TOP_COLUMNS] = {3, 7, 8, 8, 5, 8, 9, 12, 0};
    static const bool right[GK_TOP_COLUMNS] = {true, true, false, true, true, true, true, false,
                                               false};
    for (int c = 0; c < GK_TOP_COLUMNS; c++) {
        const char *mark = (gk_top_column)c != options->sort ? ""
                           : options->unicode ? (options->ascending ? "\u25B2" : "\u25BC")
                                              : (options->ascending ? "^" : "v");
        char name[24];
        snprintf(name, sizeof name, "%s%s", column_names[c], mark);
        /* widths count characters: the mark is one, of up to three bytes */
        unsigned length = (unsigned)strlen(column_names[c]) + (mark[0] ? 1 : 0);
        unsigned start = b->column;
        if (right[c])
            pad_to(b, start + (widths[c] > (int)length ? (unsigned)widths[c] - length : 0));
        put(b, GK_STYLE_PLAIN, name);
        if (widths[c])
            pad_to(b, start + (unsigned)widths[c] + 1);
    }
    pad_to(b, b->width);
    /* one bar across the screen, not a patch per name */
    b->spans[0] = (gk_frame_span){0, b->length, GK_STYLE_HEADER};
    b->span_count = 1;
    end_line(b);
}

/* The text from its `offset`-th character on (never inside a character). */
static const char *skip_characters(const char *text, size_t offset)
{
    for (; *text && offset; offset--)
        do
            text++;
        while (((unsigned char)*text & 0xC0) == 0x80);
    return text;
}

static void process_row(builder *b, const gk_sample *sample, const row *r, bool selected,
                        const char *tree_prefix, size_t command_offset)
{
    const gk_process *process = r->entry->process;
    const gk_gpu *gpu = &sample->snapshot->gpus[r->entry->gpu];
    gk_style style = selected ? GK_STYLE_SELECTED : GK_STYLE_PLAIN;
    char memory[32], cpu[16], host[32], time[32];
    if (process->gpu_memory.known)
        snprintf(memory, sizeof memory, "%" PRIu64 "MiB", process->gpu_memory.value / MIB);
    else
        snprintf(memory, sizeof memory, "N/A");
    gk_field percent = r->entry->cpu_percent.known ? r->entry->cpu_percent : process->cpu_percent;
    if (percent.known)
        snprintf(cpu, sizeof cpu, "%.1f", (double)percent.value / 10.0);
    else
        snprintf(cpu, sizeof cpu, "N/A");
    /* ps's way: MiB up to a GiB, then GiB with a decimal */
    if (!process->host_memory.known)
        snprintf(host, sizeof host, "N/A");
    else if (process->host_memory.value < 1024 * MIB)
        snprintf(host, sizeof host, "%" PRIu64 "M", process->host_memory.value / MIB);
    else
        snprintf(host, sizeof host, "%.1fG", (double)process->host_memory.value / (1024.0 * MIB));
    duration_text(time, sizeof time, process->running_time);
    putf(b, style, "%3u %7" PRIu32 " %-8.8s %8s %5s %8s %9s %-12.12s %s%s", gpu->index,
         process->pid, process->user[0] ? process->user : "?", memory, cpu, host, time, r->job,
         tree_prefix, skip_characters(r->command, command_offset));
    if (selected) {
        size_t start = b->length;
        pad_to(b, b->width);
        if (b->length > start && b->span_count)
            b->spans[b->span_count - 1].end = b->length;
    }
    end_line(b);
}

static void lease_group(builder *b, const gk_sample *sample, int lease)
{
    if (lease < 0) {
        put(b, GK_STYLE_DIM, "  not under a gpukit lease");
    } else {
        const gk_lease *l = &sample->leases[lease];
        char since[64];
        gk_format_local_time(since, sizeof since, &l->since);
        if (l->slurm)
            putf(b, GK_STYLE_TITLE, "  %s (%s) since %s", l->command, l->user, since);
        else
            putf(b, GK_STYLE_TITLE, "  lease of job %" PRIu32 " (%s) since %s: %s", l->pid,
                 l->user, since, l->command);
    }
    end_line(b);
}

/* The process table into the lines left (`room`; 0: no limit). */
static void process_table(builder *b, const gk_sample *sample, const gk_frame_options *options,
                          size_t room)
{
    gk_frame *frame = b->frame;
    row *rows = calloc(sample->process_count ? sample->process_count : 1, sizeof *rows);
    frame->row_pids = calloc(sample->process_count ? sample->process_count : 1,
                             sizeof *frame->row_pids);
    frame->row_uids = calloc(sample->process_count ? sample->process_count : 1,
                             sizeof *frame->row_uids);
    if (!rows || !frame->row_pids || !frame->row_uids) {
        free(rows);
        b->failed = true;
        return;
    }
    size_t count = 0;
    for (size_t i = 0; i < sample->process_count; i++) {
        row *r = &rows[count];
        r->entry = &sample->processes[i];
        job_text(sample, r->entry, r->job, sizeof r->job);
        gk_process_command_line(r->entry->process, r->command, sizeof r->command);
        if (!r->command[0])
            snprintf(r->command, sizeof r->command, "?");
        if (shown_gpu(options, &sample->snapshot->gpus[r->entry->gpu]) &&
            matches(sample, r, options->filter))
            count++;
    }
    sorting = options;
    qsort(rows, count, sizeof *rows, compare_rows);
    for (size_t i = 0; i < count; i++) {
        frame->row_pids[i] = rows[i].entry->process->pid;
        frame->row_uids[i] = rows[i].entry->process->uid;
    }
    frame->row_count = count;
    frame->selected = count == 0 ? 0 : options->selected < count ? options->selected : count - 1;

    table_header(b, options);
    if (count == 0) {
        put(b, GK_STYLE_DIM, options->filter && *options->filter
                                 ? "  no GPU process matches the filter"
                                 : sample->snapshot->gpu_count ? "  no process uses a GPU"
                                                               : "");
        end_line(b);
        free(rows);
        return;
    }
    /* Which rows fit: a window around the selected one. Group lines of
     * the tree view take room too, so they are counted as rows are placed. */
    size_t visible = room ? (room > 1 ? room - 1 : 1) : count * 2;
    size_t first = 0;
    if (room && options->show_selection && frame->selected >= visible / (options->tree ? 2 : 1))
        first = frame->selected - visible / (options->tree ? 2 : 1) + 1;
    size_t used = 0;
    int group = -2;
    for (size_t i = first; i < count && (room == 0 || used < visible); i++) {
        const row *r = &rows[i];
        const char *prefix = "";
        if (options->tree) {
            if (r->entry->lease != group) {
                group = r->entry->lease;
                lease_group(b, sample, group);
                if (room && ++used >= visible)
                    break;
            }
            bool last = i + 1 >= count || rows[i + 1].entry->lease != r->entry->lease;
            prefix = options->unicode ? (last ? "\u2514\u2500 " : "\u251C\u2500 ")
                                      : (last ? "`- " : "|- ");
        }
        process_row(b, sample, r, options->show_selection && i == frame->selected, prefix,
                    options->command_offset);
        used++;
    }
    free(rows);
}

/* --- the frame --- */

static void title_line(builder *b, const gk_sample *sample)
{
    const gk_snapshot *snapshot = sample->snapshot;
    char cuda[32], when[64];
    struct tm local;
    time_t seconds = snapshot->query_time.tv_sec;
    localtime_r(&seconds, &local);
    strftime(when, sizeof when, "%H:%M:%S", &local);
    putf(b, GK_STYLE_TITLE, "gpukit top");
    putf(b, GK_STYLE_PLAIN, "  %s  %s  driver %s  CUDA %s  %zu GPU(s)", snapshot->hostname, when,
         snapshot->driver_version[0] ? snapshot->driver_version : "N/A",
         snapshot->cuda_driver_version.known
             ? gk_cuda_version_string(snapshot->cuda_driver_version, cuda, sizeof cuda)
             : "N/A",
         snapshot->gpu_count);
    size_t holding = 0, waiting = 0;
    for (size_t i = 0; i < sample->lease_count; i++)
        sample->leases[i].waiting ? waiting++ : holding++;
    putf(b, GK_STYLE_PLAIN, "  %zu lease(s), %zu waiting", holding, waiting);
    end_line(b);
}

/* How many lines the GPUs take: two each (or one when compact), plus MIG
 * instances when not compact. */
static size_t gpu_lines(const gk_snapshot *snapshot, bool compact)
{
    size_t lines = 0;
    for (size_t g = 0; g < snapshot->gpu_count; g++) {
        const gk_gpu *gpu = &snapshot->gpus[g];
        lines += gpu->state != GK_GPU_OK ? 1 : compact ? 1 : 2 + gpu->mig_count;
    }
    return lines;
}

gk_status gk_frame_draw(gk_monitor *monitor, const gk_sample *sample,
                        const gk_frame_options *options, gk_frame *frame)
{
    memset(frame, 0, sizeof *frame);
    if (!sample)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "gk_frame_draw: no reading yet");
    builder *b = calloc(1, sizeof *b);
    if (!b)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory drawing the frame");
    b->frame = frame;
    b->width = options->width < 20 ? 20 : options->width;
    b->unicode = options->unicode;
    const gk_snapshot *snapshot = sample->snapshot;

    title_line(b, sample);
    if (snapshot->gpu_count == 0) {
        putf(b, GK_STYLE_BAD, "No NVIDIA GPU: %s", snapshot->diagnosis);
        end_line(b);
    } else if (snapshot->diagnosis[0]) {
        putf(b, GK_STYLE_DIM, "note: %s", snapshot->diagnosis);
        end_line(b);
    }
    if (sample->lease_problem[0]) {
        putf(b, GK_STYLE_BAD, "leases: %s", sample->lease_problem);
        end_line(b);
    }

    /* What fits: the header lines so far, the GPUs, the graph, and at least
     * a few process rows. */
    size_t height = options->height, used = frame->line_count;
    bool graph_wanted = options->graph_gpu >= 0 && (size_t)options->graph_gpu < snapshot->gpu_count;
    bool compact = false;
    unsigned graph_rows = graph_wanted ? 2 : 0;
    if (height) {
        size_t table = 1 + MIN_PROCESS_ROWS;
        if (used + gpu_lines(snapshot, false) + 1 + 2 * graph_rows + table > height)
            graph_rows = graph_wanted ? 1 : 0;
        if (used + gpu_lines(snapshot, false) + (graph_rows ? 1 + 2 * graph_rows : 0) + table >
            height)
            compact = true;
        if (used + gpu_lines(snapshot, true) + (graph_rows ? 1 + 2 * graph_rows : 0) + table >
            height)
            graph_rows = 0;
    }
    for (size_t g = 0; g < snapshot->gpu_count; g++) {
        const gk_gpu *gpu = &snapshot->gpus[g];
        if (!shown_gpu(options, gpu))
            continue;
        if (height && frame->line_count + 1 + MIN_PROCESS_ROWS >= height)
            break; /* a screen too short for every GPU keeps room for processes */
        if (gpu->state != GK_GPU_OK) {
            gpu_error_line(b, gpu);
        } else if (compact) {
            gpu_compact(b, gpu);
        } else {
            gpu_full(b, gpu);
            mig_lines(b, gpu);
        }
    }
    if (graph_rows)
        graph(b, monitor, &snapshot->gpus[options->graph_gpu], (size_t)options->graph_gpu,
              graph_rows, monitor ? gk_monitor_interval(monitor) : 1.0);
    size_t room = 0;
    if (height)
        room = frame->line_count < height ? height - frame->line_count : 1;
    process_table(b, sample, options, room);

    bool failed = b->failed;
    free(b);
    if (failed) {
        gk_frame_free(frame);
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory drawing the frame");
    }
    return GK_OK;
}

void gk_frame_free(gk_frame *frame)
{
    for (size_t i = 0; i < frame->line_count; i++) {
        free(frame->lines[i].text);
        free(frame->lines[i].spans);
    }
    free(frame->lines);
    free(frame->row_pids);
    free(frame->row_uids);
    memset(frame, 0, sizeof *frame);
}
