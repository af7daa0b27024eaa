/* Drives the real bumblebee client (src/launch/bumblebee.c) for the pytest
 * tests in tests/python/test_bumblebee.py, which run it against the fake
 * daemon in tests/fake_bumblebee/.
 *
 * Usage: test_bumblebee [--timeout-ms N] [SOCKET]
 *   With SOCKET, calls gk_bumblebee_connect_within(SOCKET, N); without it,
 *   the public gk_bumblebee_connect(NULL), which reads GPUKIT_BUMBLEBEE_SOCKET.
 *   Prints "status=<gk_status_string>", "why=<daemon's answer>" and
 *   "error=<gk_last_error>" lines. On success it also prints "cloexec=0|1",
 *   "held" and then keeps the connection open until a line (or end of file)
 *   arrives on stdin, so the test can look at the daemon in between; then it
 *   disconnects and prints "released".
 * Exit status: 0 connected, 1 the call failed, 2 bad usage. */
#include "launch/bumblebee.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int timeout_ms = GK_BUMBLEBEE_TIMEOUT_MS;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc)
            timeout_ms = atoi(argv[++i]);
        else if (!path && argv[i][0] != '-')
            path = argv[i];
        else {
            fprintf(stderr, "usage: test_bumblebee [--timeout-ms N] [SOCKET]\n");
            return 2;
        }
    }
    int fd = -1;
    char why[256];
    gk_status status = path ? gk_bumblebee_connect_within(path, timeout_ms, &fd, why, sizeof why)
                            : gk_bumblebee_connect(NULL, &fd, why, sizeof why);
    printf("status=%s\nwhy=%s\nerror=%s\n", gk_status_string(status), why,
           status == GK_OK ? "" : gk_last_error());
    if (status != GK_OK) {
        if (fd != -1)
            printf("fd=%d (should be -1 after a failure)\n", fd);
        return 1;
    }
    int flags = fcntl(fd, F_GETFD);
    printf("cloexec=%d\nheld\n", flags >= 0 && (flags & FD_CLOEXEC) ? 1 : 0);
    fflush(stdout);
    char line[64];
    if (!fgets(line, sizeof line, stdin)) {
        /* end of file: release as well */
    }
    gk_bumblebee_disconnect(fd);
    printf("released\n");
    return 0;
}
