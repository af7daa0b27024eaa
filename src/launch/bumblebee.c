#define _GNU_SOURCE /* MSG_NOSIGNAL, SOCK_CLOEXEC */
/* The bumblebee client: ask bumblebeed to power the discrete GPU on without
 * a secondary X server, the request `optirun --no-xorg` sends.
 *
 * Protocol facts (Bumblebee 3.2, src/optirun.c and src/bumblebeed.c): the
 * daemon listens on a unix stream socket (/var/run/bumblebee.socket), group
 * `bumblebee`. A client writes one NUL-terminated message; the daemon
 * dispatches on its first letter, and 'C' ("Connect NoX" from optirun
 * --no-xorg) switches the card on and loads its driver. The answer is one
 * NUL-terminated line starting "Yes" or "No" ("No - error: <why>"); clients
 * look only at the first letter. A client that got "Yes" counts as using the
 * card until its connection closes; when the last one goes, the daemon may
 * switch the card off again. */
#include "launch/bumblebee.h"

#include "core/error.h"
#include "core/strings.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The request includes its terminating NUL, as optirun sends it. */
static const char request[] = "Connect NoX";

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static gk_status connect_failure(const char *path, int error)
{
    switch (error) {
    case ENOENT:
    case ENOTDIR:
        return gk_fail(GK_ERR_NOT_FOUND,
                       "no bumblebee daemon socket at %s: start the daemon (sudo systemctl "
                       "start bumblebeed), or set GPUKIT_BUMBLEBEE_SOCKET to its socket",
                       path);
    case ECONNREFUSED:
        return gk_fail(GK_ERR_NOT_FOUND,
                       "nothing listens on %s (left over from a bumblebee daemon that is no "
                       "longer running): start it with sudo systemctl start bumblebeed",
                       path);
    case EACCES:
    case EPERM:
        return gk_fail(GK_ERR_PERMISSION,
                       "permission denied on %s: only members of the bumblebee group may use "
                       "the bumblebee daemon; add yourself with sudo usermod -aG bumblebee "
                       "$USER and log in again",
                       path);
    case EAGAIN:
    case ETIMEDOUT:
        return gk_fail(GK_ERR_TIMEOUT,
                       "the bumblebee daemon at %s does not accept connections: restart it "
                       "with sudo systemctl restart bumblebeed",
                       path);
    default:
        return gk_fail(GK_ERR_IO, "cannot connect to the bumblebee daemon at %s: %s", path,
                       strerror(error));
    }
}

/* Reads the daemon's answer: up to the first NUL or newline (older daemons
 * sent no NUL), or end of file. Returns GK_OK with the text in
 * `answer`, or a failure already recorded with gk_fail(). */
static gk_status read_answer(int fd, const char *path, long long deadline, int timeout_ms,
                             char *answer, size_t size)
{
    size_t length = 0;
    answer[0] = '\0';
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0)
            return gk_fail(GK_ERR_TIMEOUT,
                           "the bumblebee daemon at %s did not answer within %d s; it may be "
                           "stuck switching the GPU on: see its log (journalctl -u bumblebeed) "
                           "and restart it with sudo systemctl restart bumblebeed",
                           path, (timeout_ms + 999) / 1000);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = poll(&p, 1, (int)left);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready < 0)
            return gk_fail(GK_ERR_IO, "waiting for the bumblebee daemon: %s", strerror(errno));
        if (ready == 0)
            continue; /* the deadline check above reports it */
        ssize_t n = recv(fd, answer + length, size - 1 - length, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return gk_fail(GK_ERR_IO, "reading from the bumblebee daemon at %s: %s", path,
                           strerror(errno));
        if (n == 0) {
            if (length > 0)
                return GK_OK;
            return gk_fail(GK_ERR_IO,
                           "the bumblebee daemon at %s closed the connection without "
                           "answering: see its log (journalctl -u bumblebeed)",
                           path);
        }
        length += (size_t)n;
        answer[length] = '\0';
        if (strlen(answer) < length || strchr(answer, '\n') || length + 1 >= size)
            return GK_OK;
    }
}

gk_status gk_bumblebee_read_reply(int fd, const char *path, long long deadline_ms,
                                  int timeout_ms, char *why, size_t why_size)
{
    char answer[512];
    gk_status status = read_answer(fd, path, deadline_ms, timeout_ms, answer, sizeof answer);
    if (status != GK_OK)
        return status;
    answer[strcspn(answer, "\n")] = '\0';
    const char *text = gk_trim(answer);
    if (why && why_size)
        snprintf(why, why_size, "%s", text);
    if (text[0] == 'Y')
        return GK_OK;
    if (text[0] == 'N')
        return gk_fail(GK_ERR_DRIVER,
                       "the bumblebee daemon could not switch the discrete GPU on (it said "
                       "\"%s\"): see its log (journalctl -u bumblebeed) and check that the "
                       "bbswitch and nvidia kernel modules load (sudo modprobe bbswitch nvidia)",
                       text);
    return gk_fail(GK_ERR_IO,
                   "unexpected answer from the bumblebee daemon at %s: \"%s\" (is it "
                   "bumblebeed 3.x?)",
                   path, text);
}

gk_status gk_bumblebee_connect_within(const char *socket_path, int timeout_ms, int *fd_out,
                                      char *why, size_t why_size)
{
    if (!fd_out || timeout_ms <= 0)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "gk_bumblebee_connect: fd_out is NULL or the timeout is not positive");
    *fd_out = -1;
    if (why && why_size)
        why[0] = '\0';
    const char *path = socket_path;
    if (!path || !*path) {
        path = getenv("GPUKIT_BUMBLEBEE_SOCKET");
        if (!path || !*path)
            path = "/var/run/bumblebee.socket";
    }
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof address.sun_path)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "the bumblebee socket path %s is longer than a unix socket allows (%zu "
                       "bytes)",
                       path, sizeof address.sun_path - 1);
    memcpy(address.sun_path, path, strlen(path) + 1);

    long long deadline = now_ms() + timeout_ms;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return gk_fail(GK_ERR_IO, "cannot create a unix socket: %s", strerror(errno));
    /* A daemon that stopped accepting leaves connect() waiting for a free
     * backlog slot; the send timeout bounds that wait too. */
    struct timeval limit = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    if (connect(fd, (const struct sockaddr *)&address, sizeof address) != 0) {
        int error = errno;
        close(fd);
        return connect_failure(path, error);
    }
    /* MSG_NOSIGNAL: a daemon that hangs up must not kill us with SIGPIPE. */
    if (send(fd, request, sizeof request, MSG_NOSIGNAL) != (ssize_t)sizeof request) {
        int error = errno;
        close(fd);
        return gk_fail(GK_ERR_IO, "cannot send the request to the bumblebee daemon at %s: %s",
                       path, strerror(error));
    }

    gk_status status = gk_bumblebee_read_reply(fd, path, deadline, timeout_ms, why, why_size);
    if (status != GK_OK) {
        close(fd);
        return status;
    }
    *fd_out = fd;
    return GK_OK;
}

gk_status gk_bumblebee_connect(const char *socket_path, int *fd_out, char *why, size_t why_size)
{
    return gk_bumblebee_connect_within(socket_path, GK_BUMBLEBEE_TIMEOUT_MS, fd_out, why,
                                       why_size);
}

void gk_bumblebee_disconnect(int fd)
{
    if (fd >= 0)
        close(fd);
}
