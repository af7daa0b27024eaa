/* `gpukit top`: the GPUs and their processes, live, in the terminal
 * (ncurses). The monitor (src/monitor/) reads the driver and gk_frame_draw
 * decides what each frame shows; this file draws frames, reads keys and
 * sends signals. `--once` prints one frame as text and exits. */
#define _GNU_SOURCE
#include "cli/cli.h"


#include <gpukit/monitor.h>

#include <curses.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpukit top [OPTIONS]\n"
            "\n"
            "Every GPU and its processes, live: utilization, memory, temperature, power,\n"
            "fan and codecs with bars and a history graph; each process with its user, GPU\n"
            "memory, CPU, host memory, age, command line and the gpukit lease or Jupyter\n"
            "kernel it runs under. Needs no GPU to start (it then shows why there is none).\n"
            "\n"
            "  -i, --interval=SECONDS  read the GPUs this often (default 1)\n"
            "      --once              print one frame as text and exit (for scripts, ssh)\n"
            "      --readonly          never send signals\n"
            "  -s, --sort=COLUMN       sort processes by GPU, PID, USER, GPU-MEM (default),\n"
            "                          %%CPU, HOST-MEM, TIME, JOB or COMMAND\n"
            "      --ascending         smallest first (default: largest first)\n"
            "  -f, --filter=TEXT       only processes matching TEXT, user:NAME, gpu:N or pid:N\n"
            "  -t, --tree              group processes under the lease they run under\n"
            "      --color=WHEN        auto (default: a terminal without NO_COLOR), always, never\n"
            "  -h, --help              show this help\n"
            "\n"
            "Keys: Up/Down/PgUp/PgDn/Home/End select a process;  Left/Right scroll the\n"
            "command lines;  < > sort column;\n"
            "r reverse order;  / filter (Esc clears);  t tree view;  Tab graph the next GPU;\n"
            "g hide the graph;  T send SIGTERM, K send SIGKILL to the selected process (your\n"
            "own only; each asks first);  h help;  q or Ctrl-C quit.\n"
            "\n"
            "Exit status: 0 ok, 1 failed, 2 bad usage.\n");
}

typedef struct top_state {
    gk_monitor *monitor;
    gk_frame_options options;
    char filter[128];
    bool readonly;
    bool color;
    bool graph;
    int graph_gpu; /* which GPU's history (Tab), kept while the graph is hidden */
    bool help;
    char message[256];
    /* a question being asked: the signal to send to `target`, or a filter
     * being typed */
    int asking_signal;
    uint32_t target;
    bool typing_filter;
    char typed[128];
    gk_frame frame;
} top_state;

static volatile sig_atomic_t stop_requested;

static void request_stop(int signal_number)
{
    (void)signal_number;
    stop_requested = 1;
}

/* --- --once --- */

static const char *ansi(gk_style style)
{
    switch (style) {
    case GK_STYLE_TITLE: return "\033[1m";
    case GK_STYLE_HEADER: return "\033[7m";
    case GK_STYLE_DIM: return "\033[2m";
    case GK_STYLE_LOW: return "\033[32m";
    case GK_STYLE_MEDIUM: return "\033[33m";
    case GK_STYLE_HIGH: return "\033[31m";
    case GK_STYLE_BAD: return "\033[1;31m";
    case GK_STYLE_SELECTED: return "\033[7m";
    case GK_STYLE_PLAIN: break;
    }
    return "";
}

static void print_frame(const gk_frame *frame, bool color, FILE *out)
{
    for (size_t i = 0; i < frame->line_count; i++) {
        const gk_frame_line *line = &frame->lines[i];
        size_t at = 0;
        for (size_t s = 0; s < line->span_count && color; s++) {
            const gk_frame_span *span = &line->spans[s];
            fwrite(line->text + at, 1, span->start - at, out);
            fprintf(out, "%s%.*s\033[0m", ansi(span->style), (int)(span->end - span->start),
                    line->text + span->start);
            at = span->end;
        }
        /* trailing blanks (padding) are of no use in a file */
        size_t length = strlen(line->text + at);
        while (length && line->text[at + length - 1] == ' ')
            length--;
        fwrite(line->text + at, 1, length, out);
        fputc('\n', out);
    }
}

static unsigned output_width(void)
{
    struct winsize size;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col)
        return size.ws_col;
    const char *columns = getenv("COLUMNS");
    long value = columns ? strtol(columns, NULL, 10) : 0;
    return value >= 40 && value <= 1000 ? (unsigned)value : 120;
}

static int run_once(top_state *state)
{
    if (gk_monitor_read(state->monitor) != GK_OK) {
        fprintf(stderr, "gpukit top: %s\n", gk_last_error());
        return GK_EXIT_FAILURE;
    }
    const gk_sample *sample = gk_monitor_acquire(state->monitor);
    state->options.width = output_width();
    state->options.height = 0;
    state->options.graph_gpu = -1; /* one reading has no history */
    gk_frame frame;
    gk_status status = gk_frame_draw(state->monitor, sample, &state->options, &frame);
    gk_monitor_release(state->monitor, sample);
    if (status != GK_OK) {
        fprintf(stderr, "gpukit top: %s\n", gk_last_error());
        return GK_EXIT_FAILURE;
    }
    print_frame(&frame, state->color, stdout);
    gk_frame_free(&frame);
    return fflush(stdout) == 0 ? GK_EXIT_OK : GK_EXIT_FAILURE;
}

/* --- the interactive view --- */

enum { PAIR_LOW = 1, PAIR_MEDIUM, PAIR_HIGH, PAIR_BAD, PAIR_TITLE, PAIR_HEADER, PAIR_SELECTED };

static void start_colors(top_state *state)
{
    if (!state->color || !has_colors()) {
        state->color = false;
        return;
    }
    start_color();
    use_default_colors();
    init_pair(PAIR_LOW, COLOR_GREEN, -1);
    init_pair(PAIR_MEDIUM, COLOR_YELLOW, -1);
    init_pair(PAIR_HIGH, COLOR_RED, -1);
    init_pair(PAIR_BAD, COLOR_RED, -1);
    init_pair(PAIR_TITLE, COLOR_CYAN, -1);
    init_pair(PAIR_HEADER, COLOR_BLACK, COLOR_GREEN);
    init_pair(PAIR_SELECTED, COLOR_BLACK, COLOR_CYAN);
}

/* The attributes of a style: colors when the terminal has them (and the
 * user did not ask for none), else what a monochrome terminal can show. */
static attr_t attributes(const top_state *state, gk_style style)
{
    bool c = state->color;
    switch (style) {
    case GK_STYLE_TITLE: return A_BOLD | (c ? COLOR_PAIR(PAIR_TITLE) : 0);
    case GK_STYLE_HEADER: return c ? COLOR_PAIR(PAIR_HEADER) : A_REVERSE;
    case GK_STYLE_DIM: return A_DIM;
    case GK_STYLE_LOW: return c ? COLOR_PAIR(PAIR_LOW) : A_NORMAL;
    case GK_STYLE_MEDIUM: return c ? COLOR_PAIR(PAIR_MEDIUM) : A_NORMAL;
    case GK_STYLE_HIGH: return c ? COLOR_PAIR(PAIR_HIGH) : A_BOLD;
    case GK_STYLE_BAD: return A_BOLD | (c ? COLOR_PAIR(PAIR_BAD) : 0);
    case GK_STYLE_SELECTED: return c ? COLOR_PAIR(PAIR_SELECTED) : A_REVERSE;
    case GK_STYLE_PLAIN: break;
    }
    return A_NORMAL;
}

static void draw_line(const top_state *state, int y, const gk_frame_line *line)
{
    move(y, 0);
    size_t at = 0;
    for (size_t s = 0; s < line->span_count; s++) {
        const gk_frame_span *span = &line->spans[s];
        attrset(A_NORMAL);
        addnstr(line->text + at, (int)(span->start - at));
        attrset(attributes(state, span->style));
        addnstr(line->text + span->start, (int)(span->end - span->start));
        at = span->end;
    }
    attrset(A_NORMAL);
    addstr(line->text + at);
}

static const char *const help_lines[] = {
    "gpukit top: keys",
    "",
    "  Up Down PgUp PgDn Home End   select a process",
    "  Left Right                   scroll long command lines",
    "  < >                          sort by the previous / next column",
    "  r                            reverse the order",
    "  /                            filter: text, user:NAME, gpu:N or pid:N (Esc clears)",
    "  t                            tree view: processes under their gpukit lease",
    "  Tab                          graph the next GPU's history;  g: hide the graph",
    "  T  K                         send SIGTERM / SIGKILL to the selected process",
    "                               (your own processes only; asks first)",
    "  q  Ctrl-C                    quit",
    "",
    "Any key closes this help.",
};

static void draw(top_state *state)
{
    erase();
    if (state->help) {
        for (size_t i = 0; i < sizeof help_lines / sizeof help_lines[0] && (int)i < LINES; i++)
            mvaddnstr((int)i, 0, help_lines[i], COLS);
        refresh();
        return;
    }
    for (size_t i = 0; i < state->frame.line_count && (int)i < LINES - 1; i++)
        draw_line(state, (int)i, &state->frame.lines[i]);
    /* The bottom line: a question, the filter being typed, a message or the
     * keys. */
    char bottom[512];
    attr_t attr = A_REVERSE;
    if (state->asking_signal)
        snprintf(bottom, sizeof bottom, "Send SIG%s to pid %" PRIu32 "? [y/N] ",
                 sigabbrev_np(state->asking_signal), state->target);
    else if (state->typing_filter)
        snprintf(bottom, sizeof bottom, "Filter (text, user:NAME, gpu:N, pid:N; Enter, Esc): %s",
                 state->typed);
    else if (state->message[0])
        snprintf(bottom, sizeof bottom, "%s", state->message);
    else
        snprintf(bottom, sizeof bottom, "%sq quit  h help  < > sort: %s  / filter%s%s  t tree  "
                                        "Tab graph  T K signal",
                 state->readonly ? "[read-only] " : "", gk_top_column_name(state->options.sort),
                 state->filter[0] ? ": " : "", state->filter);
    attrset(attr);
    mvaddnstr(LINES - 1, 0, bottom, COLS);
    for (int x = getcurx(stdscr); x < COLS && getcury(stdscr) == LINES - 1; x++)
        addch(' ');
    attrset(A_NORMAL);
    refresh();
}

/* Makes a frame of the latest reading for the current screen. */
static void make_frame(top_state *state)
{
    gk_frame_free(&state->frame);
    const gk_sample *sample = gk_monitor_acquire(state->monitor);
    state->options.width = COLS > 20 ? (unsigned)COLS : 20;
    state->options.height = LINES > 2 ? (unsigned)LINES - 1 : 1;
    state->options.filter = state->filter;
    state->options.show_selection = true;
    state->options.graph_gpu = state->graph && sample && sample->snapshot->gpu_count
                                   ? state->graph_gpu % (int)sample->snapshot->gpu_count
                                   : -1;
    if (gk_frame_draw(state->monitor, sample, &state->options, &state->frame) == GK_OK)
        state->options.selected = state->frame.selected;
    else
        snprintf(state->message, sizeof state->message, "%s", gk_last_error());
    gk_monitor_release(state->monitor, sample);
}

/* The user pressed T or K: refuse, or ask. */
static void want_signal(top_state *state, int signal_number)
{
    const gk_frame *frame = &state->frame;
    if (state->readonly) {
        snprintf(state->message, sizeof state->message,
                 "read-only (--readonly): no signals are sent");
        return;
    }
    if (frame->row_count == 0) {
        snprintf(state->message, sizeof state->message, "no process is selected");
        return;
    }
    uint32_t pid = frame->row_pids[frame->selected];
    gk_field uid = frame->row_uids[frame->selected];
    if (geteuid() != 0 && (!uid.known || uid.value != (uint64_t)getuid())) {
        snprintf(state->message, sizeof state->message,
                 "pid %" PRIu32 " is not yours%s: you can signal only your own processes "
                 "(or ask its owner or an admin)",
                 pid, uid.known ? "" : " (its owner cannot be read)");
        return;
    }
    state->asking_signal = signal_number;
    state->target = pid;
}

static void send_signal(top_state *state)
{
    int signal_number = state->asking_signal;
    state->asking_signal = 0;
    if (kill((pid_t)state->target, signal_number) == 0)
        snprintf(state->message, sizeof state->message, "sent SIG%s to pid %" PRIu32,
                 sigabbrev_np(signal_number), state->target);
    else
        snprintf(state->message, sizeof state->message, "could not send SIG%s to pid %" PRIu32 ": %s",
                 sigabbrev_np(signal_number), state->target, strerror(errno));
}

/* One key; false to quit. */
static bool handle_key(top_state *state, int key)
{
    if (state->help) {
        state->help = false;
        return true;
    }
    if (state->asking_signal) {
        if (key == 'y' || key == 'Y')
            send_signal(state);
        else {
            state->asking_signal = 0;
            snprintf(state->message, sizeof state->message, "no signal sent");
        }
        return true;
    }
    if (state->typing_filter) {
        size_t n = strlen(state->typed);
        if (key == '\n' || key == KEY_ENTER) {
            snprintf(state->filter, sizeof state->filter, "%s", state->typed);
            state->typing_filter = false;
            state->options.selected = 0;
        } else if (key == 27) {
            state->typing_filter = false;
        } else if ((key == KEY_BACKSPACE || key == 127 || key == 8) && n > 0) {
            state->typed[n - 1] = '\0';
        } else if (key >= 32 && key < 127 && n + 1 < sizeof state->typed) {
            state->typed[n] = (char)key;
            state->typed[n + 1] = '\0';
        }
        return true;
    }
    state->message[0] = '\0';
    size_t page = LINES > 10 ? (size_t)LINES / 2 : 5;
    switch (key) {
    case 'q':
    case 'Q':
    case KEY_F(10):
        return false;
    case KEY_UP:
        if (state->options.selected > 0)
            state->options.selected--;
        break;
    case KEY_DOWN:
        state->options.selected++;
        break;
    case KEY_PPAGE:
        state->options.selected = state->options.selected > page ? state->options.selected - page : 0;
        break;
    case KEY_NPAGE:
        state->options.selected += page;
        break;
    case KEY_HOME:
        state->options.selected = 0;
        break;
    case KEY_RIGHT: /* long command lines: scroll them */
        state->options.command_offset += 8;
        break;
    case KEY_LEFT:
        state->options.command_offset -= state->options.command_offset < 8
                                             ? state->options.command_offset
                                             : 8;
        break;
    case KEY_END:
        state->options.selected = (size_t)-1 / 2;
        break;
    case '<':
        state->options.sort = (gk_top_column)((state->options.sort + GK_TOP_COLUMNS - 1) %
                                              GK_TOP_COLUMNS);
        break;
    case '>':
        state->options.sort = (gk_top_column)((state->options.sort + 1) % GK_TOP_COLUMNS);
        break;
    case 'r':
        state->options.ascending = !state->options.ascending;
        break;
    case 't':
        state->options.tree = !state->options.tree;
        break;
    case '\t':
        state->graph = true;
        state->graph_gpu = state->graph_gpu + 1 < 1 << 20 ? state->graph_gpu + 1 : 0;
        break;
    case 'g':
        state->graph = !state->graph;
        break;
    case '/':
        state->typing_filter = true;
        snprintf(state->typed, sizeof state->typed, "%s", state->filter);
        break;
    case 27: /* Esc */
    case '\\':
        state->filter[0] = '\0';
        break;
    case 'T':
    case KEY_F(9):
        want_signal(state, SIGTERM);
        break;
    case 'K':
        want_signal(state, SIGKILL);
        break;
    case 'h':
    case '?':
    case KEY_F(1):
        state->help = true;
        break;
    default:
        break;
    }
    return true;
}

static double monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static int run_interactive(top_state *state)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "gpukit top: needs a terminal; use `gpukit top --once` for one frame "
                        "as text\n");
        return GK_EXIT_USAGE;
    }
    if (gk_monitor_read(state->monitor) != GK_OK) {
        fprintf(stderr, "gpukit top: %s\n", gk_last_error());
        return GK_EXIT_FAILURE;
    }
    struct sigaction action = {.sa_handler = request_stop};
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGHUP, &action, NULL);
    /* A short wait for the rest of an escape sequence: Esc alone (clear the
     * filter) answers at once. */
    setenv("ESCDELAY", "25", 0);
    if (!initscr()) {
        fprintf(stderr, "gpukit top: cannot use this terminal (TERM=%s)\n",
                getenv("TERM") ? getenv("TERM") : "");
        return GK_EXIT_FAILURE;
    }
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    start_colors(state);

    double interval = gk_monitor_interval(state->monitor);
    double next = monotonic_seconds() + interval;
    make_frame(state);
    draw(state);
    while (!stop_requested) {
        double left = next - monotonic_seconds();
        timeout(left > 0 ? (int)(left * 1000) + 1 : 0);
        int key = getch();
        if (stop_requested)
            break;
        if (key == ERR) {
            if (monotonic_seconds() >= next) {
                if (gk_monitor_read(state->monitor) != GK_OK)
                    snprintf(state->message, sizeof state->message, "reading failed: %s",
                             gk_last_error());
                next += interval;
                if (next < monotonic_seconds())
                    next = monotonic_seconds() + interval;
            }
        } else if (key != KEY_RESIZE && !handle_key(state, key)) {
            break;
        }
        make_frame(state);
        draw(state);
    }
    endwin();
    gk_frame_free(&state->frame);
    return GK_EXIT_OK;
}

int cmd_top(int argc, char **argv)
{
    static const struct option options[] = {
        {"interval", required_argument, NULL, 'i'},
        {"once", no_argument, NULL, 'o'},
        {"readonly", no_argument, NULL, 'R'},
        {"sort", required_argument, NULL, 's'},
        {"ascending", no_argument, NULL, 'a'},
        {"filter", required_argument, NULL, 'f'},
        {"tree", no_argument, NULL, 't'},
        {"color", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    top_state state = {0};
    state.options.sort = GK_TOP_GPU_MEMORY;
    state.graph = true;
    gk_monitor_options monitor_options = {.interval = 1.0};
    bool once = false;
    int color = -1, opt;
    while ((opt = getopt_long(argc, argv, "i:s:f:th", options, NULL)) != -1) {
        switch (opt) {
        case 'i':
            if (!cli_parse_interval("top", optarg, &monitor_options.interval))
                return GK_EXIT_USAGE;
            break;
        case 'o':
            once = true;
            break;
        case 'R':
            state.readonly = true;
            break;
        case 's': {
            int column = gk_top_column_find(optarg);
            if (column < 0) {
                fprintf(stderr, "gpukit top: --sort=%s: give GPU, PID, USER, GPU-MEM, %%CPU, "
                                "HOST-MEM, TIME, JOB or COMMAND\n",
                        optarg);
                return GK_EXIT_USAGE;
            }
            state.options.sort = (gk_top_column)column;
            break;
        }
        case 'a':
            state.options.ascending = true;
            break;
        case 'f':
            snprintf(state.filter, sizeof state.filter, "%s", optarg);
            break;
        case 't':
            state.options.tree = true;
            break;
        case 'c':
            if (!cli_parse_color(optarg, &color)) {
                fprintf(stderr, "gpukit top: --color must be auto, always or never, not '%s'\n",
                        optarg);
                return GK_EXIT_USAGE;
            }
            break;
        case 'h':
            print_usage(stdout);
            return GK_EXIT_OK;
        default:
            return cli_usage_error("top");
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpukit top: unexpected argument '%s'\n", argv[optind]);
        return GK_EXIT_USAGE;
    }
    setlocale(LC_ALL, "");
    state.options.unicode = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    state.options.filter = state.filter;
    state.color = cli_use_color(color, stdout);
    if (gk_monitor_open(&monitor_options, &state.monitor) != GK_OK) {
        fprintf(stderr, "gpukit top: %s\n", gk_last_error());
        return GK_EXIT_FAILURE;
    }
    int code = once ? run_once(&state) : run_interactive(&state);
    gk_monitor_close(state.monitor);
    return code;
}
