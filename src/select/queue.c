/* The first-come, first-served line of waiting jobs. Each waiter watches only
 * the one just ahead of it, so a long line costs one lock probe per waiter
 * every few milliseconds instead of everybody rereading the directory. */
#define _GNU_SOURCE
#include "select/queue.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

gk_status gk_queue_join(gk_lease_dir *dir, const gk_lease *record, gk_ticket *ticket)
{
    gk_lease waiter = *record;
    gk_lease_stamp(&waiter);
    waiter.waiting = true;
    waiter.device_count = 0;
    snprintf(ticket->name, sizeof ticket->name, "wait-%020" PRIu64 "-%" PRIu32,
             (uint64_t)waiter.since.tv_sec * UINT64_C(1000000000) + (uint64_t)waiter.since.tv_nsec,
             waiter.pid);
    gk_status status = gk_lease_write(dir, ticket->name, &waiter, true, &ticket->fd);
    if (status != GK_OK)
        ticket->name[0] = '\0';
    return status;
}

void gk_queue_leave(gk_lease_dir *dir, gk_ticket *ticket)
{
    if (!ticket->name[0])
        return;
    gk_lease_release(dir, ticket->name, ticket->fd);
    ticket->name[0] = '\0';
    ticket->fd = -1;
}

bool gk_queue_wait_for(gk_lease_dir *dir, const char *ahead, uint64_t deadline_ns,
                       bool (*cancelled)(void *context), void *context)
{
    int fd = openat(dir->fd, ahead, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return true; /* already gone */
    const struct timespec pause = {0, 5 * 1000 * 1000};
    bool in_time = true;
    struct stat st;
    /* Only the write lock of the waiter's own process counts (a lock others
     * take by opening it for reading does not), and only on a plain file. */
    while (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && gk_record_held(fd) == 1) {
        if ((deadline_ns && gk_now_ns() >= deadline_ns) || (cancelled && cancelled(context))) {
            in_time = false;
            break;
        }
        nanosleep(&pause, NULL);
    }
    close(fd);
    return in_time;
}
