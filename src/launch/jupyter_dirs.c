/* Where Jupyter looks for kernelspecs. The rules are jupyter_core's
 * (paths.jupyter_path, jupyter_data_dir) and jupyter_client's (kernel_dirs
 * adds IPython's directory last), for Linux without JUPYTER_PLATFORM_DIRS. */
#include "launch/jupyter_dirs.h"

#include "core/error.h"
#include "core/files.h"

#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The home directory as Python's expanduser("~") finds it, resolved like
 * jupyter_core's get_home_dir(). */
static void home_directory(char *buf, size_t size)
{
    const char *home = getenv("HOME");
    if (!home || !*home) {
        struct passwd *entry = getpwuid(getuid());
        home = entry && entry->pw_dir ? entry->pw_dir : "/";
    }
    char resolved[PATH_MAX];
    snprintf(buf, size, "%s", realpath(home, resolved) ? resolved : home);
}

static char *user_data_dir(void)
{
    const char *data = getenv("JUPYTER_DATA_DIR");
    if (data && *data)
        return strdup(data);
    const char *xdg = getenv("XDG_DATA_HOME");
    if (xdg && *xdg)
        return gk_path_join(xdg, "jupyter");
    char home[PATH_MAX];
    home_directory(home, sizeof home);
    return gk_path_join(home, ".local/share/jupyter");
}

char *gk_kernel_user_dir(void)
{
    char *data = user_data_dir();
    char *kernels = data ? gk_path_join(data, "kernels") : NULL;
    free(data);
    return kernels;
}

char *gk_kernel_prefix_dir(const char *prefix)
{
    return gk_path_join(prefix, "share/jupyter/kernels");
}

bool gk_kernel_name_valid(const char *name)
{
    /* Stricter than Jupyter in two ways: no leading '.' (hidden, and "."
     * and ".."), and at most GK_KERNEL_NAME_MAX characters (room for the
     * staging directory's name within NAME_MAX). */
    if (!*name || name[0] == '.' || strlen(name) > GK_KERNEL_NAME_MAX)
        return false;
    for (const char *p = name; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '.' || c == '_';
        if (!ok)
            return false;
    }
    return true;
}

static bool same_path(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    while (la > 1 && a[la - 1] == '/')
        la--;
    while (lb > 1 && b[lb - 1] == '/')
        lb--;
    return la == lb && strncmp(a, b, la) == 0;
}

bool gk_kernel_dirs_contain(const gk_kernel_dirs *dirs, const char *path)
{
    for (size_t i = 0; i < dirs->count; i++)
        if (same_path(dirs->items[i].path, path))
            return true;
    return false;
}

/* Adds DATA/kernels unless DATA is already listed (jupyter_path keeps the
 * first of duplicates). Takes ownership of nothing. */
static gk_status add_data_dir(gk_kernel_dirs *dirs, const char *data, const char *origin)
{
    if (!data || !*data)
        return GK_OK;
    char *kernels = gk_path_join(data, "kernels");
    if (!kernels)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
    if (gk_kernel_dirs_contain(dirs, kernels) ||
        dirs->count == sizeof dirs->items / sizeof dirs->items[0]) {
        free(kernels);
        return GK_OK;
    }
    dirs->items[dirs->count++] = (gk_kernel_dir){kernels, origin};
    return GK_OK;
}

static const char *const system_data_dirs[] = {"/usr/local/share/jupyter", "/usr/share/jupyter"};

static bool is_system_data_dir(const char *path)
{
    for (size_t i = 0; i < 2; i++)
        if (same_path(path, system_data_dirs[i]))
            return true;
    return false;
}

gk_status gk_kernel_dirs_find(const gk_python *jupyter, gk_kernel_dirs *dirs)
{
    *dirs = (gk_kernel_dirs){0};
    gk_status status = GK_OK;

    /* JUPYTER_PATH first, in its order; empty entries mean nothing. */
    const char *list = getenv("JUPYTER_PATH");
    while (list && *list && status == GK_OK) {
        size_t length = strcspn(list, ":");
        char entry[PATH_MAX];
        snprintf(entry, sizeof entry, "%.*s", (int)length, list);
        while (strlen(entry) > 1 && entry[strlen(entry) - 1] == '/')
            entry[strlen(entry) - 1] = '\0';
        status = add_data_dir(dirs, entry, "JUPYTER_PATH");
        list += length + (list[length] == ':');
    }

    char *user = user_data_dir();
    char *env = NULL;
    if (jupyter && jupyter->prefix) {
        char *data = gk_path_join(jupyter->prefix, "share/jupyter");
        if (data && !is_system_data_dir(data))
            env = data;
        else
            free(data);
    }
    const char *user_base = jupyter ? jupyter->user_data : NULL;
    if (jupyter && gk_python_prefers_env(jupyter)) {
        if (status == GK_OK)
            status = add_data_dir(dirs, env, "environment");
        if (status == GK_OK)
            status = add_data_dir(dirs, user, "user");
        if (status == GK_OK)
            status = add_data_dir(dirs, user_base, "user");
    } else {
        if (status == GK_OK)
            status = add_data_dir(dirs, user, "user");
        if (status == GK_OK)
            status = add_data_dir(dirs, user_base, "user");
        if (status == GK_OK)
            status = add_data_dir(dirs, env, "environment");
    }
    free(user);
    free(env);
    for (size_t i = 0; i < 2 && status == GK_OK; i++)
        status = add_data_dir(dirs, system_data_dirs[i], "system");

    /* jupyter_client also looks in IPython's directory, last. */
    const char *ipython = getenv("IPYTHONDIR");
    char home[PATH_MAX], ipython_home[PATH_MAX + 16];
    if (!ipython || !*ipython) {
        home_directory(home, sizeof home);
        snprintf(ipython_home, sizeof ipython_home, "%s/.ipython", home);
        ipython = ipython_home;
    }
    if (status == GK_OK)
        status = add_data_dir(dirs, ipython, "IPython");
    if (status != GK_OK)
        gk_kernel_dirs_free(dirs);
    return status;
}

void gk_kernel_dirs_free(gk_kernel_dirs *dirs)
{
    for (size_t i = 0; i < dirs->count; i++)
        free(dirs->items[i].path);
    dirs->count = 0;
}
