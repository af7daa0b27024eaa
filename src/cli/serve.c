/* `gpukit serve`: the monitor over HTTP (libmicrohttpd): Prometheus metrics
 * at /metrics, the GPUs as JSON at /api/v1/gpus (and as server-sent events
 * at /api/v1/events), their recent history at /api/v1/history, and a live
 * dashboard at / whose page and script are built into gpukit. One reading of
 * the driver per interval serves every client. Read-only: GET and HEAD only. */
#define _GNU_SOURCE
#include "cli/cli.h"

#include "core/embedded.h"

#include <gpukit/monitor.h>

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

extern const gk_embedded_file gk_dashboard_files[];
extern const size_t gk_dashboard_files_count;

#define DEFAULT_LISTEN "127.0.0.1:9400"
/* A request is a line and a few headers: anything bigger is refused by
 * libmicrohttpd with 431, and its memory per connection is bounded by this. */
#define CONNECTION_MEMORY (32 * 1024)
/* Idle connections (a client that stopped reading or writing) are closed. */
#define IDLE_TIMEOUT_SECONDS 30
/* Server-sent events: a comment line this often keeps proxies from closing
 * a stream whose GPUs did not change. */
#define KEEPALIVE_SECONDS 15.0

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpukit serve [--listen=ADDR:PORT] [--interval=SECONDS]\n"
            "\n"
            "Serve the GPUs' live state over HTTP, read once per interval for every client:\n"
            "  /                a live dashboard (charts of every GPU, processes, leases)\n"
            "  /metrics         Prometheus metrics with DCGM-exporter's names and labels\n"
            "                   (OpenMetrics when the scraper asks for it), plus gpukit_*\n"
            "                   families for processes, leases and the waiting line\n"
            "  /api/v1/gpus     the `gpukit ls --json` document, with leases\n"
            "  /api/v1/events   the same document as server-sent events, one per reading\n"
            "  /api/v1/history  each GPU's recent utilization, memory, power, temperature\n"
            "\n"
            "  -l, --listen=ADDR:PORT   where to listen (default " DEFAULT_LISTEN ", this\n"
            "                           machine only); :PORT for every address, [::1]:PORT\n"
            "                           for IPv6, port 0 for any free port (printed)\n"
            "  -i, --interval=SECONDS   read the GPUs this often (default 1)\n"
            "      --max-connections=N  serve at most N clients at once (default 256)\n"
            "  -h, --help               show this help\n"
            "\n"
            "Stops on SIGINT or SIGTERM. Works without a GPU (the metrics then say so).\n"
            "\n"
            "Exit status: 0 stopped by a signal, 1 failed (out of memory), 2 bad usage,\n"
            "9 cannot listen on the address (in use, not permitted, unknown host).\n");
}

/* A reading rendered once for every client that asks before the next one:
 * `number` is the reading's, `failed_readings` the failures counted then. */
typedef struct rendered {
    uint64_t number;
    uint64_t failed_readings;
    char *text;
    size_t length;
} rendered;

enum { RENDER_TEXT, RENDER_OPENMETRICS, RENDER_JSON, RENDERINGS };

typedef struct server {
    gk_monitor *monitor;
    pthread_mutex_t lock; /* guards `renderings` */
    rendered renderings[RENDERINGS];
} server;

/* --- the listening address --- */

/* Parses ADDR:PORT, [V6]:PORT, :PORT or PORT into a socket address:
 * GK_EXIT_OK, or after saying why on stderr GK_EXIT_USAGE (text that is no
 * address) or GK_EXIT_LISTEN (a host name that does not resolve here). */
static int parse_listen(const char *text, struct sockaddr_storage *address, socklen_t *length,
                         bool *every_address)
{
    char host[256] = "";
    const char *port;
    const char *colon = strrchr(text, ':');
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':' || (size_t)(close - text - 1) >= sizeof host) {
            fprintf(stderr, "gpukit serve: --listen=%s: write an IPv6 address as [ADDR]:PORT\n",
                    text);
            return GK_EXIT_USAGE;
        }
        memcpy(host, text + 1, (size_t)(close - text - 1));
        port = close + 2;
    } else if (colon) {
        if ((size_t)(colon - text) >= sizeof host) {
            fprintf(stderr, "gpukit serve: --listen=%s: the host name is too long\n", text);
            return GK_EXIT_USAGE;
        }
        memcpy(host, text, (size_t)(colon - text));
        port = colon + 1;
    } else {
        port = text;
    }
    char *end;
    errno = 0;
    unsigned long number = strtoul(port, &end, 10);
    if (!*port || *end || errno || number > 65535 || port[0] == '-' || port[0] == '+') {
        fprintf(stderr, "gpukit serve: --listen=%s: the port must be a number from 0 to 65535\n",
                text);
        return GK_EXIT_USAGE;
    }
    struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM};
    struct addrinfo *found = NULL;
    char service[8];
    snprintf(service, sizeof service, "%lu", number);
    int error = getaddrinfo(host[0] ? host : NULL, service, &hints, &found);
    if (error || !found) {
        fprintf(stderr, "gpukit serve: --listen=%s: cannot resolve '%s': %s\n", text, host,
                gai_strerror(error));
        return GK_EXIT_LISTEN;
    }
    /* With no host, listen on every address of both families: the IPv6
     * one, dual-stack, where this machine has IPv6. */
    struct addrinfo *chosen = found;
    int probe = host[0] ? -1 : socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    for (struct addrinfo *a = found; a && probe >= 0; a = a->ai_next)
        if (a->ai_family == AF_INET6)
            chosen = a;
    if (probe >= 0)
        close(probe);
    memcpy(address, chosen->ai_addr, chosen->ai_addrlen);
    *length = chosen->ai_addrlen;
    *every_address = !host[0];
    freeaddrinfo(found);
    return GK_EXIT_OK;
}

static void describe_address(const struct sockaddr_storage *address, unsigned port, char *buf,
                             size_t size)
{
    char host[INET6_ADDRSTRLEN] = "?";
    if (address->ss_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)address;
        inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
        snprintf(buf, size, "[%s]:%u", host, port);
    } else {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)address;
        inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
        snprintf(buf, size, "%s:%u", host, port);
    }
}

/* --- responses --- */

static enum MHD_Result send_text(struct MHD_Connection *connection, unsigned code,
                                 const char *type, const char *text, size_t length,
                                 enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *response =
        MHD_create_response_from_buffer(length, (void *)text, mode);
    if (!response) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free((void *)text);
        return MHD_NO;
    }
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
    if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result result = MHD_queue_response(connection, code, response);
    MHD_destroy_response(response);
    return result;
}

static enum MHD_Result send_error(struct MHD_Connection *connection, unsigned code,
                                  const char *message)
{
    return send_text(connection, code, "text/plain; charset=utf-8", message, strlen(message),
                     MHD_RESPMEM_PERSISTENT);
}

/* Does the Accept header ask for OpenMetrics (as Prometheus does)? */
static bool wants_openmetrics(struct MHD_Connection *connection)
{
    const char *accept = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Accept");
    return accept && strstr(accept, "application/openmetrics-text");
}

/* A copy of the latest reading rendered as `kind`, made once per reading
 * (and again when a reading failed since): a thousand scrapes of one reading
 * cost one rendering. NULL when out of memory. */
static char *latest_rendering(server *s, int kind, size_t *length, uint64_t *number)
{
    const gk_sample *sample = gk_monitor_acquire(s->monitor);
    /* The failures counted now, not when the served reading was taken:
     * while readings fail, the last good one is served, and the count rises. */
    gk_sample now = gk_monitor_current(s->monitor, sample);
    pthread_mutex_lock(&s->lock);
    rendered *r = &s->renderings[kind];
    /* (A request still holding an older reading takes the newer rendering.) */
    if (now.number > r->number ||
        (now.number == r->number && now.failed_readings > r->failed_readings) || !r->text) {
        free(r->text);
        r->text = NULL;
        gk_status status = kind == RENDER_JSON
                               ? gk_sample_json(&now, &r->text)
                               : gk_sample_metrics(&now, kind == RENDER_OPENMETRICS, &r->text,
                                                   &r->length);
        if (status == GK_OK && kind == RENDER_JSON)
            r->length = strlen(r->text);
        r->number = status == GK_OK ? now.number : 0;
        r->failed_readings = now.failed_readings;
    }
    char *copy = r->text ? malloc(r->length + 1) : NULL;
    if (copy) {
        memcpy(copy, r->text, r->length + 1);
        *length = r->length;
        if (number)
            *number = r->number;
    }
    pthread_mutex_unlock(&s->lock);
    gk_monitor_release(s->monitor, sample);
    return copy;
}

static enum MHD_Result serve_rendering(server *s, struct MHD_Connection *connection, int kind,
                                       const char *type)
{
    size_t length;
    char *text = latest_rendering(s, kind, &length, NULL);
    if (!text)
        return send_error(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    return send_text(connection, MHD_HTTP_OK, type, text, length, MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result serve_metrics(server *s, struct MHD_Connection *connection)
{
    bool openmetrics = wants_openmetrics(connection);
    return serve_rendering(s, connection, openmetrics ? RENDER_OPENMETRICS : RENDER_TEXT,
                           openmetrics ? GK_METRICS_OPENMETRICS_TYPE : GK_METRICS_TEXT_TYPE);
}

static enum MHD_Result serve_gpus(server *s, struct MHD_Connection *connection)
{
    return serve_rendering(s, connection, RENDER_JSON, "application/json");
}

static enum MHD_Result serve_history(server *s, struct MHD_Connection *connection)
{
    char *text = NULL;
    if (gk_monitor_history_json(s->monitor, &text) != GK_OK)
        return send_error(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    return send_text(connection, MHD_HTTP_OK, "application/json", text, strlen(text),
                     MHD_RESPMEM_MUST_FREE);
}

/* A server-sent events stream: one "sample" event per reading. */
typedef struct event_stream {
    server *server;
    uint64_t last;  /* the reading last sent */
    char *pending;  /* the event being sent, from `offset` */
    size_t length, offset;
} event_stream;

static ssize_t read_events(void *opaque, uint64_t position, char *buffer, size_t max)
{
    (void)position;
    event_stream *stream = opaque;
    if (stream->offset == stream->length) {
        free(stream->pending);
        stream->pending = NULL;
        stream->length = stream->offset = 0;
        uint64_t latest = gk_monitor_wait(stream->server->monitor, stream->last, KEEPALIVE_SECONDS);
        if (latest == 0)
            return MHD_CONTENT_READER_END_OF_STREAM; /* the server is stopping */
        if (latest == stream->last) {
            stream->pending = strdup(": keepalive\n\n");
        } else {
            size_t length;
            uint64_t number = latest;
            char *json = latest_rendering(stream->server, RENDER_JSON, &length, &number);
            if (json && asprintf(&stream->pending, "event: sample\nid: %" PRIu64 "\ndata: %s\n\n",
                                 number, json) < 0)
                stream->pending = NULL;
            stream->last = number;
            free(json);
        }
        if (!stream->pending)
            return MHD_CONTENT_READER_END_WITH_ERROR;
        stream->length = strlen(stream->pending);
    }
    size_t n = stream->length - stream->offset < max ? stream->length - stream->offset : max;
    memcpy(buffer, stream->pending + stream->offset, n);
    stream->offset += n;
    return (ssize_t)n;
}

static void free_events(void *opaque)
{
    event_stream *stream = opaque;
    free(stream->pending);
    free(stream);
}

static enum MHD_Result serve_events(server *s, struct MHD_Connection *connection)
{
    event_stream *stream = calloc(1, sizeof *stream);
    if (!stream)
        return send_error(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    stream->server = s;
    struct MHD_Response *response = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, 16 * 1024, read_events, stream, free_events);
    if (!response) {
        free(stream);
        return MHD_NO;
    }
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result result = MHD_queue_response(connection, MHD_HTTP_OK, response);
    MHD_destroy_response(response);
    return result;
}

static const char *content_type(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (dot && strcmp(dot, ".js") == 0)
        return "text/javascript; charset=utf-8";
    if (dot && strcmp(dot, ".css") == 0)
        return "text/css; charset=utf-8";
    if (dot && strcmp(dot, ".svg") == 0)
        return "image/svg+xml";
    return "text/html; charset=utf-8";
}

static enum MHD_Result serve_file(struct MHD_Connection *connection, const char *name)
{
    for (size_t i = 0; i < gk_dashboard_files_count; i++) {
        const gk_embedded_file *file = &gk_dashboard_files[i];
        if (strcmp(file->name, name) == 0)
            return send_text(connection, MHD_HTTP_OK, content_type(name),
                             (const char *)file->data, file->size, MHD_RESPMEM_PERSISTENT);
    }
    return send_error(connection, MHD_HTTP_NOT_FOUND,
                      "not found: see / (dashboard), /metrics, /api/v1/gpus, /api/v1/events, "
                      "/api/v1/history\n");
}

/* Decodes a URL's %XX escapes as libmicrohttpd does, except that a decoded
 * NUL becomes DEL, a byte no path of ours holds: the handler's C strings
 * would end at the NUL, and "/metrics%00junk" would be served as /metrics.
 * Such a path is not found (404). */
static size_t unescape(void *opaque, struct MHD_Connection *connection, char *text)
{
    (void)opaque;
    (void)connection;
    size_t length = MHD_http_unescape(text);
    for (size_t i = 0; i < length; i++)
        if (text[i] == '\0')
            text[i] = '\x7f';
    return length;
}

static enum MHD_Result handle(void *opaque, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **request)
{
    (void)version;
    (void)upload;
    server *s = opaque;
    /* libmicrohttpd calls once to announce a request, then once per piece
     * of its body, then once more to have it answered. No GET needs a body:
     * one is read and dropped (it is bounded by the connection's memory),
     * and the request refused. *request marks where the request is. */
    static int announced, had_body;
    if (*request == NULL) {
        /* A body announced up front is refused before any of it is read. */
        const char *body_length =
            MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Content-Length");
        if (MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Transfer-Encoding") ||
            (body_length && strtoull(body_length, NULL, 10) > 0))
            return send_error(connection, MHD_HTTP_CONTENT_TOO_LARGE,
                              "gpukit serve is read-only: requests carry no body\n");
        *request = &announced;
        return MHD_YES;
    }
    if (*upload_size != 0) {
        *upload_size = 0;
        *request = &had_body;
        return MHD_YES;
    }
    if (*request == &had_body)
        return send_error(connection, MHD_HTTP_CONTENT_TOO_LARGE,
                          "gpukit serve is read-only: requests carry no body\n");
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return send_error(connection, MHD_HTTP_METHOD_NOT_ALLOWED,
                          "gpukit serve is read-only: only GET and HEAD\n");
    if (strcmp(url, "/metrics") == 0)
        return serve_metrics(s, connection);
    if (strcmp(url, "/api/v1/gpus") == 0)
        return serve_gpus(s, connection);
    if (strcmp(url, "/api/v1/events") == 0)
        return serve_events(s, connection);
    if (strcmp(url, "/api/v1/history") == 0)
        return serve_history(s, connection);
    if (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0)
        return serve_file(connection, "index.html");
    if (url[0] == '/' && !strchr(url + 1, '/'))
        return serve_file(connection, url + 1);
    return serve_file(connection, "");
}

int cmd_serve(int argc, char **argv)
{
    static const struct option options[] = {
        {"listen", required_argument, NULL, 'l'},
        {"interval", required_argument, NULL, 'i'},
        {"max-connections", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *listen = DEFAULT_LISTEN;
    gk_monitor_options monitor_options = {.interval = 1.0};
    unsigned long max_connections = 256;
    int opt;
    while ((opt = getopt_long(argc, argv, "l:i:h", options, NULL)) != -1) {
        switch (opt) {
        case 'l':
            listen = optarg;
            break;
        case 'i':
            if (!cli_parse_interval("serve", optarg, &monitor_options.interval))
                return GK_EXIT_USAGE;
            break;
        case 'c': {
            char *end;
            errno = 0;
            max_connections = strtoul(optarg, &end, 10);
            if (!*optarg || *end || errno || max_connections < 1 || max_connections > 10000 ||
                optarg[0] == '-') {
                fprintf(stderr,
                        "gpukit serve: --max-connections=%s: give a number from 1 to 10000\n",
                        optarg);
                return GK_EXIT_USAGE;
            }
            break;
        }
        case 'h':
            print_usage(stdout);
            return GK_EXIT_OK;
        default:
            return cli_usage_error("serve");
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpukit serve: unexpected argument '%s'\n", argv[optind]);
        return GK_EXIT_USAGE;
    }
    struct sockaddr_storage address;
    socklen_t address_length;
    bool every_address;
    int parsed = parse_listen(listen, &address, &address_length, &every_address);
    if (parsed != GK_EXIT_OK)
        return parsed;

    /* SIGINT and SIGTERM are taken by sigwait below; blocked before any
     * thread starts, so every thread inherits the mask. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    server s = {0};
    pthread_mutex_init(&s.lock, NULL);
    if (gk_monitor_open(&monitor_options, &s.monitor) != GK_OK ||
        gk_monitor_start(s.monitor) != GK_OK) {
        fprintf(stderr, "gpukit serve: %s\n", gk_last_error());
        gk_monitor_close(s.monitor);
        return GK_EXIT_FAILURE;
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_POLL;
    /* ":PORT" (every address) takes IPv4 clients too, on the IPv6 socket. */
    if (address.ss_family == AF_INET6)
        flags |= every_address ? MHD_USE_DUAL_STACK : MHD_USE_IPv6;
    errno = 0;
    struct MHD_Daemon *daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, handle, &s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)IDLE_TIMEOUT_SECONDS, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)CONNECTION_MEMORY, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL, MHD_OPTION_END);
    if (!daemon) {
        int error = errno;
        char where[128];
        describe_address(&address, ntohs(((struct sockaddr_in *)&address)->sin_port), where,
                         sizeof where);
        fprintf(stderr, "gpukit serve: cannot listen on %s: %s; choose another with --listen\n",
                where, error ? strerror(error) : "the HTTP server did not start");
        gk_monitor_close(s.monitor);
        return GK_EXIT_LISTEN;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    char where[128];
    describe_address(&address, info ? info->port : 0, where, sizeof where);
    fprintf(stderr, "gpukit serve: listening on http://%s/ (metrics at /metrics); stop with "
                    "Ctrl-C\n",
            where);
    fflush(stderr);

    int received;
    sigwait(&stop_signals, &received);
    /* Ending the monitor first ends every event stream, which lets the
     * server's connection threads finish. */
    gk_monitor_stop(s.monitor);
    MHD_stop_daemon(daemon);
    gk_monitor_close(s.monitor);
    for (int kind = 0; kind < RENDERINGS; kind++)
        free(s.renderings[kind].text);
    pthread_mutex_destroy(&s.lock);
    fprintf(stderr, "gpukit serve: stopped (%s)\n", strsignal(received));
    return GK_EXIT_OK;
}
