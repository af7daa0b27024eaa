/* Internal: paths and directory trees. */
#ifndef GK_CORE_FILES_H
#define GK_CORE_FILES_H

#include <gpukit/status.h>

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* "a/b" as a new string (NULL when out of memory); a trailing "/" on `a` is
 * not doubled. */
char *gk_path_join(const char *a, const char *b);

/* The executable `name` found as execvp() would (PATH, or the name itself
 * when it contains a '/'), as a new absolute path; NULL when there is none.
 * A relative name with a '/' is made absolute against the working directory,
 * without resolving symlinks (a virtualenv's python must stay the venv's). */
char *gk_which(const char *name);

/* Creates `path` and its missing parents with `mode`; GK_OK when it already
 * is a directory. */
gk_status gk_mkdir_parents(const char *path, mode_t mode);

/* Whether this process could create entries under `path`, judged at its
 * nearest existing ancestor (what `mkdir -p` would run into). */
bool gk_can_create_under(const char *path);

/* Removes a directory tree without following symlinks inside it (a symlink
 * is removed, never its target). */
gk_status gk_remove_tree(const char *path);

/* Writes `size` bytes to a new file `path` (mode `mode`, refusing to follow
 * or replace anything already there) and flushes it to disk. */
gk_status gk_write_new_file(const char *path, const void *data, size_t size, mode_t mode);

/* Everything left in `in` (read to its end; files like /proc/locks have no
 * size to go by) as a NUL-terminated buffer to free(), its length in *size
 * when size is not NULL; NULL when out of memory. Does not close `in`. */
char *gk_read_stream(FILE *in, size_t *size);

#endif
