/* Who holds a lock: the processes /proc/locks names for a file, with their
 * user and command, so that a command that gave up waiting for the lease
 * directory's lock can say whom to ask (or kill). */
#include "select/lease_dir.h"

#include "core/users.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* The command name of `pid` ("?" when it cannot be read). */
static void process_name(long pid, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    snprintf(buf, size, "?");
    FILE *in = fopen(path, "re");
    if (!in)
        return;
    if (fgets(buf, (int)size, in))
        buf[strcspn(buf, "\n")] = '\0';
    fclose(in);
}

/* "pid 123 (user alice, command 'python3')". The owner of /proc/<pid> is
 * the process's user; pid 0 is a process outside this pid namespace (another
 * container), which /proc/locks cannot name. */
static void describe_process(long pid, char *buf, size_t size)
{
    if (pid <= 0) {
        snprintf(buf, size, "a process outside this container (/proc/locks shows no pid)");
        return;
    }
    char path[64], user[64] = "?", command[64];
    snprintf(path, sizeof path, "/proc/%ld", pid);
    struct stat st;
    if (stat(path, &st) != 0) {
        /* flock records the process that locked; a child it started may
         * hold the lock on after it ended. */
        snprintf(buf, size, "pid %ld (ended; a process it started still holds it)", pid);
        return;
    }
    gk_user_name(st.st_uid, user, sizeof user);
    process_name(pid, command, sizeof command);
    snprintf(buf, size, "pid %ld (user %s, command '%s')", pid, user, command);
}

size_t gk_lock_holders(const struct stat *file, char *out, size_t size)
{
    out[0] = '\0';
    FILE *in = fopen("/proc/locks", "re");
    if (!in)
        return 0;
    size_t found = 0;
    char line[256];
    while (fgets(line, sizeof line, in)) {
        /* "3: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF"; waiters for a
         * lock have "->" after the number and are not holders. */
        char kind[16], mode[16], access[16];
        long pid;
        unsigned major_id, minor_id;
        uintmax_t inode;
        const char *fields = strchr(line, ':');
        if (!fields || strstr(line, "->") ||
            sscanf(fields + 1, "%15s %15s %15s %ld %x:%x:%" SCNuMAX, kind, mode, access, &pid,
                   &major_id, &minor_id, &inode) != 7)
            continue;
        if (major_id != major(file->st_dev) || minor_id != minor(file->st_dev) ||
            inode != (uintmax_t)file->st_ino)
            continue;
        char who[256];
        describe_process(pid, who, sizeof who);
        size_t used = strlen(out);
        if (found < 4)
            snprintf(out + used, size - used, "%s%s", found ? ", " : "", who);
        found++;
    }
    fclose(in);
    if (found > 4) {
        size_t used = strlen(out);
        snprintf(out + used, size - used, " and %zu more", found - 4);
    }
    return found;
}
