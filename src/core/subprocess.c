#define _GNU_SOURCE /* pipe2 */
/* Capturing a helper program's output with a deadline: a wedged GPU can make
 * nvidia-smi hang, and a status command must not hang with it. */
#include "core/subprocess.h"

#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int decode_wait_status(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 255;
}

gk_status gk_run_capture(char *const argv[], int timeout_ms, char **output, int *exit_status)
{
    *output = NULL;
    *exit_status = -1;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return gk_fail(GK_ERR_IO, "cannot create a pipe to run %s: %s", argv[0], strerror(errno));

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    /* Its own process group, so that a timeout kills what it started too. */
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    pid_t pid;
    int spawn_error = posix_spawnp(&pid, argv[0], &actions, &attributes, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    close(fds[1]);
    if (spawn_error != 0) {
        close(fds[0]);
        return gk_fail(spawn_error == ENOENT ? GK_ERR_NOT_FOUND : GK_ERR_IO, "cannot run %s: %s",
                       argv[0], strerror(spawn_error));
    }

    size_t capacity = 4096, length = 0;
    char *buffer = malloc(capacity);
    gk_status status = buffer ? GK_OK : gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
    long long deadline = now_ms() + timeout_ms;
    while (status == GK_OK) {
        long long left = deadline - now_ms();
        struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
        int ready = left > 0 ? poll(&pfd, 1, (int)left) : 0;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0) {
            status = gk_fail(GK_ERR_TIMEOUT, "%s did not finish within %d ms", argv[0], timeout_ms);
            break;
        }
        if (length + 1 >= capacity) {
            char *bigger = realloc(buffer, capacity * 2);
            if (!bigger) {
                status = gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory reading %s", argv[0]);
                break;
            }
            buffer = bigger;
            capacity *= 2;
        }
        ssize_t n = read(fds[0], buffer + length, capacity - length - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        length += (size_t)n;
    }
    close(fds[0]);
    if (status != GK_OK)
        kill(-pid, SIGKILL);
    int wait_status;
    while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    if (status != GK_OK) {
        free(buffer);
        return status;
    }
    buffer[length] = '\0';
    *output = buffer;
    *exit_status = decode_wait_status(wait_status);
    return GK_OK;
}
