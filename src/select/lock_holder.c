/* Who holds a lock: the processes /proc/locks names for a file, with their
 * user and command, so that a command that gave up waiting for the lease
 * directory's lock can say whom to ask (or kill). */
#include "select/lease_dir.h"

#include "core/files.h"
#include "core/users.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* The command name of `pid` ("?" when it cannot be read). Any process can
 * name itself anything (prctl PR_SET_NAME), and the name ends up on the
 * terminal of whoever waits for the lock: every byte that is not printable
 * ASCII becomes '?', so no name can carry escape sequences. */
static void process_name(const char *proc, long pid, char *buf, size_t size)
{
    char path[4096];
    snprintf(buf, size, "?");
    int length = snprintf(path, sizeof path, "%s/%ld/comm", proc, pid);
    if (length < 0 || (size_t)length >= sizeof path)
        return;
    FILE *in = fopen(path, "re");
    if (!in)
        return;
    if (fgets(buf, (int)size, in))
        buf[strcspn(buf, "\n")] = '\0';
    fclose(in);
    for (char *c = buf; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
            *c = '?';
}

/* "pid 123 (user alice, command 'python3')". The owner of /proc/<pid> is
 * the process's user; pid 0 is a process outside this pid namespace (another
 * container), which /proc/locks cannot name. */
static void describe_process(const char *proc, long pid, char *buf, size_t size)
{
    if (pid <= 0) {
        snprintf(buf, size, "a process outside this container (/proc/locks shows no pid)");
        return;
    }
    char path[4096], user[64] = "?", command[64];
    int length = snprintf(path, sizeof path, "%s/%ld", proc, pid);
    struct stat st;
    if (length < 0 || (size_t)length >= sizeof path || stat(path, &st) != 0) {
        /* flock records the process that locked; a child it started may
         * hold the lock on after it ended. */
        snprintf(buf, size, "pid %ld (ended; a process it started still holds it)", pid);
        return;
    }
    gk_user_name(st.st_uid, user, sizeof user);
    process_name(proc, pid, command, sizeof command);
    snprintf(buf, size, "pid %ld (user %s, command '%s')", pid, user, command);
}

static const char *skip_spaces(const char *p)
{
    while (*p == ' ')
        p++;
    return p;
}

/* Past the word at `p` and the spaces after it. */
static const char *skip_word(const char *p)
{
    while (*p && *p != ' ' && *p != '\n')
        p++;
    return skip_spaces(p);
}

/* Reads the number in `base` at *p into *value and moves *p past it. False
 * when no digit is there (strtoumax would skip spaces and take a sign) or
 * the number does not fit: a wrapped or cut number could name another file. */
static bool read_number(const char **p, int base, uintmax_t *value)
{
    unsigned char first = (unsigned char)**p;
    if (base == 16 ? !isxdigit(first) : !isdigit(first))
        return false;
    char *end;
    errno = 0;
    *value = strtoumax(*p, &end, base);
    if (errno == ERANGE)
        return false;
    *p = end;
    return true;
}

/* One held flock(2) lock of /proc/locks, the only kind that blocks the
 * lease directory's lock. */
typedef struct {
    long pid; /* 0: a process in another pid namespace */
    uintmax_t major_id, minor_id, inode;
} flock_line;

/* Reads the line at `line`, "3: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0
 * EOF" (major and minor in hex). False for any other line: another kind of
 * lock, a process waiting for a lock ("3: -> FLOCK ..."), a lock on no
 * inode ("<none>:0"), or a line not in that shape. */
static bool parse_flock_line(const char *line, flock_line *out)
{
    const char *p = line;
    uintmax_t id, pid;
    if (!read_number(&p, 10, &id) || *p != ':')
        return false;
    p = skip_spaces(p + 1);
    if (strncmp(p, "FLOCK ", 6) != 0)
        return false; /* also "-> FLOCK": a waiter, not a holder */
    p = skip_word(skip_word(skip_word(p))); /* kind, ADVISORY, READ or WRITE */
    /* Not -1 either: that is an open file description lock's. */
    if (!read_number(&p, 10, &pid) || pid > INT_MAX || *p != ' ')
        return false;
    out->pid = (long)pid;
    p = skip_spaces(p);
    return read_number(&p, 16, &out->major_id) && *p++ == ':' &&
           read_number(&p, 16, &out->minor_id) && *p++ == ':' &&
           read_number(&p, 10, &out->inode) && (*p == ' ' || *p == '\n' || *p == '\0');
}

size_t gk_lock_holders_parse(const char *locks, dev_t dev, ino_t ino, const char *proc,
                             char *out, size_t size)
{
    out[0] = '\0';
    size_t found = 0;
    for (const char *line = locks; *line;) {
        flock_line lock;
        if (parse_flock_line(line, &lock) && lock.major_id == major(dev) &&
            lock.minor_id == minor(dev) && lock.inode == (uintmax_t)ino) {
            char who[256];
            describe_process(proc, lock.pid, who, sizeof who);
            size_t used = strlen(out);
            if (found < 4)
                snprintf(out + used, size - used, "%s%s", found ? ", " : "", who);
            found++;
        }
        const char *end = strchr(line, '\n');
        line = end ? end + 1 : line + strlen(line);
    }
    if (found > 4) {
        size_t used = strlen(out);
        snprintf(out + used, size - used, " and %zu more", found - 4);
    }
    return found;
}

/* The whole of /proc/locks (its size is not known before it is read) as a
 * string to free(), or NULL. */
static char *read_proc_locks(void)
{
    FILE *in = fopen("/proc/locks", "re");
    if (!in)
        return NULL;
    char *text = gk_read_stream(in, NULL);
    fclose(in);
    return text;
}

size_t gk_lock_holders(const struct stat *file, char *out, size_t size)
{
    out[0] = '\0';
    char *locks = read_proc_locks();
    if (!locks)
        return 0;
    size_t found = gk_lock_holders_parse(locks, file->st_dev, file->st_ino, "/proc", out, size);
    free(locks);
    return found;
}
