/* The bumblebee daemon's reply (launch/bumblebee.c): the input is what the
 * daemon sends after the request, then it hangs up. A socket pair stands in
 * for the daemon's socket, so the real reading loop runs. */
#define _GNU_SOURCE /* MSG_NOSIGNAL */
#include "fuzz.h"

#include "launch/bumblebee.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Well under the socket's buffer, so the whole input is written at once. */
enum { MAX_REPLY = 16384 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_REPLY)
        return 0;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        abort();
    if (size && send(pair[1], data, size, MSG_NOSIGNAL) != (ssize_t)size)
        abort();
    shutdown(pair[1], SHUT_WR);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long deadline = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000 + 5000;
    char why[256];
    gk_bumblebee_read_reply(pair[0], "/var/run/bumblebee.socket", deadline, 5000, why,
                            sizeof why);
    FUZZ_CHECK_TEXT(why);
    close(pair[0]);
    close(pair[1]);
    return 0;
}
