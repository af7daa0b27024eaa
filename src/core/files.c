#define _GNU_SOURCE /* strchrnul; nftw */
/* Paths and directory trees: what installing files needs beyond stdio. */
#include "core/files.h"

#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *gk_path_join(const char *a, const char *b)
{
    size_t length = strlen(a);
    bool slash = length > 0 && a[length - 1] == '/';
    char *joined = malloc(length + strlen(b) + 2);
    if (joined)
        sprintf(joined, "%s%s%s", a, slash ? "" : "/", b);
    return joined;
}

static bool is_executable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static char *absolute(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    const char *rest = strncmp(path, "./", 2) == 0 ? path + 2 : path;
    return gk_path_join(cwd, rest);
}

char *gk_which(const char *name)
{
    if (!*name)
        return NULL;
    if (strchr(name, '/'))
        return is_executable_file(name) ? absolute(name) : NULL;
    const char *search = getenv("PATH");
    if (!search)
        search = "/usr/local/bin:/usr/bin:/bin";
    while (true) {
        const char *end = strchrnul(search, ':');
        /* An empty PATH entry means the working directory, as for execvp. */
        char directory[PATH_MAX];
        if (end == search)
            snprintf(directory, sizeof directory, ".");
        else
            snprintf(directory, sizeof directory, "%.*s", (int)(end - search), search);
        char *candidate = gk_path_join(directory, name);
        if (candidate && is_executable_file(candidate)) {
            char *found = absolute(candidate);
            free(candidate);
            return found;
        }
        free(candidate);
        if (!*end)
            return NULL;
        search = end + 1;
    }
}

gk_status gk_mkdir_parents(const char *path, mode_t mode)
{
    char buffer[PATH_MAX];
    if (snprintf(buffer, sizeof buffer, "%s", path) >= (int)sizeof buffer)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "path too long: %s", path);
    /* Each prefix ending before a '/', then the whole path. */
    for (char *p = buffer + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        struct stat st;
        if (mkdir(buffer, mode) != 0 && errno != EEXIST) {
            int err = errno;
            return gk_fail(err == EACCES || err == EPERM || err == EROFS ? GK_ERR_PERMISSION
                                                                          : GK_ERR_IO,
                           "cannot create %s: %s", buffer, strerror(err));
        }
        if (stat(buffer, &st) != 0 || !S_ISDIR(st.st_mode))
            return gk_fail(GK_ERR_IO, "cannot create %s: %s is not a directory", path, buffer);
        *p = saved;
        if (!saved)
            return GK_OK;
    }
}

bool gk_can_create_under(const char *path)
{
    char buffer[PATH_MAX];
    snprintf(buffer, sizeof buffer, "%s", path);
    while (true) {
        struct stat st;
        if (stat(buffer, &st) == 0)
            return S_ISDIR(st.st_mode) && access(buffer, W_OK | X_OK) == 0;
        char *slash = strrchr(buffer, '/');
        if (!slash)
            return access(".", W_OK | X_OK) == 0;
        if (slash == buffer)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    int result = type == FTW_DP ? rmdir(path) : unlink(path);
    return result == 0 || errno == ENOENT ? 0 : errno;
}

gk_status gk_remove_tree(const char *path)
{
    /* FTW_PHYS: symlinks are entries to unlink; FTW_DEPTH: contents first. */
    int err = nftw(path, remove_entry, 16, FTW_PHYS | FTW_DEPTH);
    if (err == 0 || (err < 0 && errno == ENOENT))
        return GK_OK;
    if (err < 0)
        err = errno;
    return gk_fail(err == EACCES || err == EPERM ? GK_ERR_PERMISSION : GK_ERR_IO,
                   "cannot remove %s: %s", path, strerror(err));
}

gk_status gk_write_new_file(const char *path, const void *data, size_t size, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return gk_fail(errno == EACCES || errno == EPERM || errno == EROFS ? GK_ERR_PERMISSION
                                                                           : GK_ERR_IO,
                       "cannot create %s: %s", path, strerror(errno));
    const char *bytes = data;
    size_t written = 0;
    while (written < size) {
        ssize_t n = write(fd, bytes + written, size - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;
            close(fd);
            return gk_fail(GK_ERR_IO, "cannot write %s: %s", path, strerror(err));
        }
        written += (size_t)n;
    }
    /* fchmod: the mode asked for, whatever the umask took away. */
    if (fchmod(fd, mode) != 0 || fsync(fd) != 0) {
        int err = errno;
        close(fd);
        return gk_fail(GK_ERR_IO, "cannot write %s: %s", path, strerror(err));
    }
    if (close(fd) != 0)
        return gk_fail(GK_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    return GK_OK;
}

char *gk_read_stream(FILE *in, size_t *size)
{
    size_t capacity = 16384, used = 0, n;
    char *text = malloc(capacity);
    while (text && (n = fread(text + used, 1, capacity - 1 - used, in)) > 0) {
        used += n;
        if (used == capacity - 1) {
            capacity *= 2;
            char *bigger = realloc(text, capacity);
            if (!bigger)
                free(text);
            text = bigger;
        }
    }
    if (!text)
        return NULL;
    text[used] = '\0';
    if (size)
        *size = used;
    return text;
}
