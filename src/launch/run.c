#define _GNU_SOURCE /* pipe2 */
/* Running the job: exec in place, or stay as its parent and pass signals on. */
#include <gpukit/launch.h>

#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

gk_status gk_launch_visible_devices(const gk_reservation *reservation, unsigned count,
                                    char *buf, size_t size)
{
    const gk_selection *selection = &reservation->selection;
    if (count > selection->count)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "only %zu devices were chosen", selection->count);
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned k = 0; k < count; k++) {
        int n = snprintf(buf + used, size - used, "%s%s", k ? "," : "",
                         selection->candidates[k].uuid);
        if (n < 0 || (size_t)n >= size - used)
            return gk_fail(GK_ERR_INVALID_ARGUMENT, "too many devices for one variable");
        used += (size_t)n;
    }
    return GK_OK;
}

static gk_status exec_failure(const char *command, int err)
{
    if (err == ENOENT)
        return gk_fail(GK_ERR_NOT_FOUND, "%s: command not found (check the name and PATH)",
                       command);
    /* exec says "Permission denied" for a directory and for a file without
     * execute permission; name which it is, as the fix differs. */
    struct stat st;
    if (err == EACCES && strchr(command, '/') && stat(command, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return gk_fail(GK_ERR_PERMISSION, "%s: cannot run it: it is a directory", command);
        if (S_ISREG(st.st_mode) && !(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
            return gk_fail(GK_ERR_PERMISSION, "%s: cannot run it: it is not executable "
                           "(chmod +x %s)", command, command);
    }
    return gk_fail(err == EACCES || err == ENOEXEC || err == EISDIR ? GK_ERR_PERMISSION
                                                                     : GK_ERR_IO,
                   "%s: cannot run it: %s", command, strerror(err));
}

gk_status gk_launch_exec(char *const argv[])
{
    execvp(argv[0], argv);
    return exec_failure(argv[0], errno);
}

/* --- supervising --- */

static volatile sig_atomic_t child_pid;

static void forward_signal(int signal_number)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, signal_number);
}

static void group_signal(int signal_number)
{
    (void)signal_number; /* the child got it from the group: nothing to do */
}

static const int forwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM};
static const int group_wide[] = {SIGINT, SIGQUIT};

static void set_handlers(bool install, sigset_t *handled)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigemptyset(handled);
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) {
        /* A handler rather than SIG_IGN: exec resets handlers to the default
         * in the child, but would keep an ignored signal ignored. */
        action.sa_handler = install ? forward_signal : SIG_DFL;
        sigaction(forwarded[i], &action, NULL);
        sigaddset(handled, forwarded[i]);
    }
    for (size_t i = 0; i < sizeof group_wide / sizeof group_wide[0]; i++) {
        action.sa_handler = install ? group_signal : SIG_DFL;
        sigaction(group_wide[i], &action, NULL);
        sigaddset(handled, group_wide[i]);
    }
}

gk_status gk_launch_supervise(char *const argv[], int *exit_code)
{
    /* The child reports a failed exec through this pipe; a successful exec
     * closes it (close-on-exec) and the parent reads nothing. */
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0)
        return gk_fail(GK_ERR_IO, "cannot start %s: %s", argv[0], strerror(errno));
    sigset_t handled, previous;
    set_handlers(true, &handled);
    /* Signals wait until child_pid is known, so none is lost in between. */
    sigprocmask(SIG_BLOCK, &handled, &previous);
    pid_t pid = fork();
    if (pid == 0) {
        set_handlers(false, &handled);
        sigprocmask(SIG_SETMASK, &previous, NULL);
        close(report[0]);
        execvp(argv[0], argv);
        int err = errno;
        ssize_t ignored = write(report[1], &err, sizeof err);
        (void)ignored;
        _exit(127);
    }
    int fork_error = errno;
    child_pid = pid > 0 ? pid : 0;
    sigprocmask(SIG_SETMASK, &previous, NULL);
    close(report[1]);
    if (pid < 0) {
        close(report[0]);
        set_handlers(false, &handled);
        return gk_fail(GK_ERR_IO, "cannot start %s: %s", argv[0], strerror(fork_error));
    }

    int err = 0;
    ssize_t n;
    do
        n = read(report[0], &err, sizeof err);
    while (n < 0 && errno == EINTR);
    close(report[0]);

    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    child_pid = 0;
    set_handlers(false, &handled);
    if (n == (ssize_t)sizeof err)
        return exec_failure(argv[0], err);
    *exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    return GK_OK;
}
