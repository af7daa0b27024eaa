/* Internal: where Jupyter looks for kernelspecs, and what it accepts as a
 * kernel name (jupyter_core.paths.jupyter_path and jupyter_client's
 * KernelSpecManager, restated). */
#ifndef GK_LAUNCH_JUPYTER_DIRS_H
#define GK_LAUNCH_JUPYTER_DIRS_H

#include "launch/python.h"

#include <stdbool.h>
#include <stddef.h>

/* The system-wide directory `jupyter kernelspec install` writes to. */
#define GK_KERNEL_SYSTEM_DIR "/usr/local/share/jupyter/kernels"

typedef struct gk_kernel_dir {
    char *path;         /* a ".../kernels" directory */
    const char *origin; /* "JUPYTER_PATH", "user", "environment", "system", "IPython" */
} gk_kernel_dir;

typedef struct gk_kernel_dirs {
    gk_kernel_dir items[32];
    size_t count;
} gk_kernel_dirs;

/* Jupyter's kernel directories in the order it searches them (the first
 * spec found under a name wins): JUPYTER_PATH, the user's data directory
 * (JUPYTER_DATA_DIR, else XDG_DATA_HOME/jupyter, else
 * ~/.local/share/jupyter) and Python's user base, the prefix of the Python
 * running Jupyter (before the user's when gk_python_prefers_env()), then
 * /usr/local/share/jupyter and /usr/share/jupyter, then IPython's own.
 * `jupyter` may be NULL (no Python known: its prefix is left out). */
gk_status gk_kernel_dirs_find(const gk_python *jupyter, gk_kernel_dirs *dirs);
void gk_kernel_dirs_free(gk_kernel_dirs *dirs);

/* Whether `path` is one of `dirs` (textually, ignoring a trailing '/'). */
bool gk_kernel_dirs_contain(const gk_kernel_dirs *dirs, const char *path);

/* <the user's Jupyter data directory>/kernels, as a new string. */
char *gk_kernel_user_dir(void);

/* PREFIX/share/jupyter/kernels, as a new string. */
char *gk_kernel_prefix_dir(const char *prefix);

#define GK_KERNEL_NAME_MAX 200

/* Jupyter's rule: ASCII letters, digits, '-', '.' and '_', nothing else,
 * not empty; and not starting with '.', at most GK_KERNEL_NAME_MAX long.
 * Jupyter folds names to lower case. */
bool gk_kernel_name_valid(const char *name);

#endif
