#define _GNU_SOURCE /* renameat2, RENAME_EXCHANGE */
/* gpukit's Jupyter kernelspecs: writing one atomically, reading them back,
 * removing one. The format is Jupyter's kernel.json (argv, display_name,
 * language, interrupt_mode, metadata) plus the logo files Jupyter's launcher
 * shows. */
#include "launch/kernelspec.h"

#include "core/embedded.h"
#include "core/error.h"
#include "core/files.h"

#include <gpukit/version.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Generated from share/kernel-logo by cmake/embed.cmake. */
extern const gk_embedded_file gk_kernel_logo_files[];
extern const size_t gk_kernel_logo_files_count;

/* --- writing --- */

/* json_string() refuses bytes that are not UTF-8; Jupyter reads kernel.json
 * as UTF-8, so such a path could not be written faithfully anyway. */
static gk_status add_string(json_t *array_or_object, const char *key, const char *text)
{
    json_t *value = json_string(text);
    if (!value)
        return gk_fail(GK_ERR_INVALID_ARGUMENT,
                       "%s is not valid UTF-8, which kernel.json requires; rename it", text);
    int result = key ? json_object_set_new(array_or_object, key, value)
                     : json_array_append_new(array_or_object, value);
    return result == 0 ? GK_OK : gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
}

static gk_status build_spec(const gk_kernelspec_request *request, json_t **spec_out)
{
    json_t *spec = json_object(), *argv = json_array(), *options = json_array();
    json_t *metadata = json_object(), *gpukit = json_object();
    gk_status status = spec && argv && options && metadata && gpukit
                           ? GK_OK
                           : gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
    if (status == GK_OK)
        status = add_string(argv, NULL, request->gpukit);
    if (status == GK_OK)
        status = add_string(argv, NULL, "run");
    for (char *const *option = request->run_options; status == GK_OK && *option; option++) {
        status = add_string(argv, NULL, *option);
        if (status == GK_OK)
            status = add_string(options, NULL, *option);
    }
    /* "--": the Python path can never be taken for a gpukit option. */
    const char *tail[] = {"--", request->python, "-m", "ipykernel_launcher", "-f",
                          "{connection_file}"};
    for (size_t i = 0; status == GK_OK && i < sizeof tail / sizeof tail[0]; i++)
        status = add_string(argv, NULL, tail[i]);
    if (status == GK_OK) {
        json_object_set(spec, "argv", argv);
        status = add_string(spec, "display_name", request->display_name);
    }
    if (status == GK_OK)
        status = add_string(spec, "language", "python");
    /* Interrupts are SIGINT to the kernel's process group: gpukit execs the
     * kernel, or (bumblebee) stays its parent and survives SIGINT. */
    if (status == GK_OK)
        status = add_string(spec, "interrupt_mode", "signal");
    /* The kernel's name in its environment, where `gpukit serve` and the
     * monitor find it to say which kernel a GPU process is. */
    json_t *env = json_object();
    if (status == GK_OK && !env)
        status = gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
    if (status == GK_OK)
        status = add_string(env, "GPUKIT_KERNEL", request->name);
    if (status == GK_OK)
        json_object_set(spec, "env", env);
    json_decref(env);
    if (status == GK_OK)
        status = add_string(gpukit, "version", GPUKIT_VERSION);
    if (status == GK_OK)
        status = add_string(gpukit, "python", request->python);
    if (status == GK_OK)
        status = add_string(gpukit, "selection", request->selection);
    if (status == GK_OK) {
        json_object_set(gpukit, "run_options", options);
        json_object_set_new(metadata, "debugger", json_boolean(request->debugger));
        json_object_set(metadata, "gpukit", gpukit);
        json_object_set(spec, "metadata", metadata);
    }
    json_decref(argv);
    json_decref(options);
    json_decref(metadata);
    json_decref(gpukit);
    if (status != GK_OK) {
        json_decref(spec);
        return status;
    }
    *spec_out = spec;
    return GK_OK;
}

static gk_status write_spec_files(const char *directory, json_t *spec)
{
    for (size_t i = 0; i < gk_kernel_logo_files_count; i++) {
        const gk_embedded_file *logo = &gk_kernel_logo_files[i];
        char *path = gk_path_join(directory, logo->name);
        gk_status status = path ? gk_write_new_file(path, logo->data, logo->size, 0644)
                                : gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
        free(path);
        if (status != GK_OK)
            return status;
    }
    char *text = json_dumps(spec, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    char *path = gk_path_join(directory, "kernel.json");
    gk_status status = GK_OK;
    if (!text || !path)
        status = gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
    else {
        size_t length = strlen(text);
        text[length] = '\n'; /* a text file ends with one; the NUL is not needed */
        status = gk_write_new_file(path, text, length + 1, 0644);
    }
    free(text);
    free(path);
    return status;
}

static gk_status errno_status(int err)
{
    return err == EACCES || err == EPERM || err == EROFS ? GK_ERR_PERMISSION : GK_ERR_IO;
}

/* An empty hidden directory on the same filesystem as KERNELS_DIR, for a
 * spec on its way in or out. Jupyter lists every directory of KERNELS_DIR
 * that holds a kernel.json, hidden or not, so it is made beside KERNELS_DIR
 * (".gpukit-NAME-XXXXXX" in its parent), and only inside it when the parent
 * is on another filesystem or not writable. A directory can be renamed onto
 * it. */
static char *make_hidden_dir(const char *kernels_dir, const char *name)
{
    char *path = malloc(strlen(kernels_dir) + strlen(name) + 32);
    if (!path)
        return NULL;
    sprintf(path, "%s", kernels_dir);
    char *slash = strrchr(path, '/');
    struct stat kernels, parent;
    if (slash && slash != path && stat(kernels_dir, &kernels) == 0) {
        *slash = '\0';
        if (stat(path, &parent) == 0 && parent.st_dev == kernels.st_dev) {
            sprintf(slash, "/.gpukit-%s-XXXXXX", name);
            if (mkdtemp(path))
                return path;
        }
    }
    sprintf(path, "%s/.gpukit-%s-XXXXXX", kernels_dir, name);
    if (mkdtemp(path))
        return path;
    free(path);
    return NULL;
}

/* Whether PATH holds something gpukit did not write (a foreign kernelspec,
 * or anything that is not a directory). */
static bool is_foreign(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return false;
    gk_kernelspec_info info;
    if (gk_kernelspec_read(path, &info) != GK_OK)
        return true;
    gk_kernelspec_info_free(&info);
    return false;
}

/* Puts the directory NEW in place of TARGET in one step. */
static gk_status swap_in(const char *kernels_dir, const char *name, const char *new_dir,
                         const char *target)
{
    if (rename(new_dir, target) == 0)
        return GK_OK;
    if (errno != EEXIST && errno != ENOTEMPTY && errno != ENOTDIR && errno != EISDIR)
        return gk_fail(errno_status(errno), "cannot install %s: %s", target, strerror(errno));
    /* Something is there: exchange the two, then delete the old one, which
     * is now under the hidden name. */
    if (renameat2(AT_FDCWD, new_dir, AT_FDCWD, target, RENAME_EXCHANGE) == 0)
        return gk_remove_tree(new_dir);
    if (errno != EINVAL && errno != ENOSYS)
        return gk_fail(errno_status(errno), "cannot replace %s: %s", target, strerror(errno));
    /* A filesystem without exchange: move the old one aside first (Jupyter
     * may miss the kernel for that moment, but never sees half of one). */
    char *old = make_hidden_dir(kernels_dir, name);
    if (!old)
        return gk_fail(GK_ERR_IO, "cannot replace %s: %s", target, strerror(errno));
    gk_status status = GK_OK;
    if (rename(target, old) != 0 || rename(new_dir, target) != 0)
        status = gk_fail(errno_status(errno), "cannot replace %s: %s", target, strerror(errno));
    else
        status = gk_remove_tree(old);
    if (status != GK_OK)
        rmdir(old);
    free(old);
    return status;
}

gk_status gk_kernelspec_install(const char *kernels_dir, const gk_kernelspec_request *request,
                                char **installed)
{
    *installed = NULL;
    json_t *spec = NULL;
    gk_status status = build_spec(request, &spec);
    if (status != GK_OK)
        return status;
    status = gk_mkdir_parents(kernels_dir, 0755);
    char *target = status == GK_OK ? gk_path_join(kernels_dir, request->name) : NULL;
    if (status == GK_OK && !target)
        status = gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
    if (status == GK_OK && !request->replace_foreign && is_foreign(target))
        status = gk_fail(GK_ERR_EXISTS,
                         "%s is a kernelspec gpukit did not write; choose another --name, or "
                         "--force to replace it",
                         target);
    char *staging = NULL;
    if (status == GK_OK) {
        staging = make_hidden_dir(kernels_dir, request->name);
        if (!staging)
            status = gk_fail(errno_status(errno), "cannot write in %s: %s", kernels_dir,
                             strerror(errno));
    }
    /* mkdtemp makes 0700; a system-wide kernel must be readable by all. */
    if (status == GK_OK && chmod(staging, 0755) != 0)
        status = gk_fail(GK_ERR_IO, "cannot set the mode of %s: %s", staging, strerror(errno));
    if (status == GK_OK)
        status = write_spec_files(staging, spec);
    if (status == GK_OK)
        status = swap_in(kernels_dir, request->name, staging, target);
    if (status != GK_OK && staging) {
        /* Keep the first error's message. */
        char message[1024];
        snprintf(message, sizeof message, "%s", gk_last_error());
        struct stat st;
        if (lstat(staging, &st) == 0)
            gk_remove_tree(staging);
        gk_fail(status, "%s", message);
    }
    json_decref(spec);
    free(staging);
    if (status == GK_OK)
        *installed = target;
    else
        free(target);
    return status;
}

/* --- reading --- */

static char *dup_string(json_t *value)
{
    return json_is_string(value) ? strdup(json_string_value(value)) : NULL;
}

/* The strings of a JSON array joined by spaces, as a new string. */
static char *join_strings(json_t *array)
{
    size_t length = 1, i;
    json_t *item;
    json_array_foreach(array, i, item)
    {
        if (json_is_string(item))
            length += strlen(json_string_value(item)) + 1;
    }
    char *joined = calloc(1, length);
    json_array_foreach(array, i, item)
    {
        if (joined && json_is_string(item)) {
            if (joined[0])
                strcat(joined, " ");
            strcat(joined, json_string_value(item));
        }
    }
    return joined;
}

static bool executable(const char *path)
{
    return path && access(path, X_OK) == 0;
}

gk_status gk_kernelspec_read(const char *directory, gk_kernelspec_info *info)
{
    *info = (gk_kernelspec_info){0};
    char *path = gk_path_join(directory, "kernel.json");
    if (!path)
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
    json_error_t error;
    json_t *spec = json_load_file(path, 0, &error);
    free(path);
    if (!spec)
        return gk_fail(GK_ERR_NOT_FOUND, "%s has no readable kernel.json: %s", directory,
                       error.text);
    json_t *gpukit = json_object_get(json_object_get(spec, "metadata"), "gpukit");
    json_t *argv = json_object_get(spec, "argv");
    if (!json_is_object(gpukit) || !json_is_array(argv) || json_array_size(argv) < 2) {
        json_decref(spec);
        return gk_fail(GK_ERR_NOT_FOUND, "%s is not a gpukit kernel", directory);
    }
    const char *slash = strrchr(directory, '/');
    info->name = strdup(slash ? slash + 1 : directory);
    info->directory = strdup(directory);
    info->display_name = dup_string(json_object_get(spec, "display_name"));
    info->selection = dup_string(json_object_get(gpukit, "selection"));
    info->python = dup_string(json_object_get(gpukit, "python"));
    info->gpukit = dup_string(json_array_get(argv, 0));

    info->options = join_strings(json_object_get(gpukit, "run_options"));

    char problem[8192] = "";
    if (!executable(info->gpukit))
        snprintf(problem, sizeof problem,
                 "its gpukit command %s is gone or not executable; install the kernel again",
                 info->gpukit ? info->gpukit : "(none)");
    else if (!executable(info->python))
        snprintf(problem, sizeof problem,
                 "its Python %s is gone or not executable; install the kernel again with "
                 "--python",
                 info->python ? info->python : "(none)");
    info->problem = problem[0] ? strdup(problem) : NULL;
    json_decref(spec);
    if (!info->name || !info->directory || !info->options) {
        gk_kernelspec_info_free(info);
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return GK_OK;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The kernel directories' entries that look like kernelspecs (a directory
 * holding kernel.json), sorted; hidden names (gpukit's staging) skipped. */
static size_t spec_names(const char *kernels_dir, char ***names_out)
{
    *names_out = NULL;
    DIR *dir = opendir(kernels_dir);
    if (!dir)
        return 0;
    char **names = NULL;
    size_t count = 0;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        if (entry->d_name[0] == '.')
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s/kernel.json", kernels_dir, entry->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        char **bigger = realloc(names, (count + 1) * sizeof *names);
        if (!bigger)
            break;
        names = bigger;
        names[count] = strdup(entry->d_name);
        if (names[count])
            count++;
    }
    closedir(dir);
    if (count)
        qsort(names, count, sizeof *names, compare_names);
    *names_out = names;
    return count;
}

typedef struct seen_name {
    char name[256]; /* lower case, as Jupyter keys them */
    char *directory;
} seen_name;

gk_status gk_kernelspec_list(const gk_kernel_dirs *dirs, gk_kernelspec_info **list,
                             size_t *count)
{
    *list = NULL;
    *count = 0;
    seen_name *seen = NULL;
    size_t seen_count = 0;
    gk_status status = GK_OK;
    for (size_t d = 0; d < dirs->count && status == GK_OK; d++) {
        char **names;
        size_t name_count = spec_names(dirs->items[d].path, &names);
        for (size_t n = 0; n < name_count; n++) {
            char key[256];
            snprintf(key, sizeof key, "%s", names[n]);
            for (char *p = key; *p; p++)
                if (*p >= 'A' && *p <= 'Z')
                    *p = (char)(*p - 'A' + 'a');
            char *directory = gk_path_join(dirs->items[d].path, names[n]);
            const char *first = NULL;
            for (size_t s = 0; s < seen_count; s++)
                if (strcmp(seen[s].name, key) == 0)
                    first = seen[s].directory;
            gk_kernelspec_info info;
            if (directory && gk_kernelspec_read(directory, &info) == GK_OK) {
                info.origin = dirs->items[d].origin;
                info.shadowed_by = first ? strdup(first) : NULL;
                gk_kernelspec_info *bigger = realloc(*list, (*count + 1) * sizeof **list);
                if (bigger) {
                    *list = bigger;
                    (*list)[(*count)++] = info;
                } else {
                    gk_kernelspec_info_free(&info);
                    status = gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
                }
            }
            seen_name *more = first ? seen : realloc(seen, (seen_count + 1) * sizeof *seen);
            if (!first && more && directory) {
                seen = more;
                snprintf(seen[seen_count].name, sizeof seen[0].name, "%s", key);
                seen[seen_count++].directory = directory;
                directory = NULL;
            } else if (!first && more) {
                seen = more;
            }
            free(directory);
            free(names[n]);
        }
        free(names);
    }
    for (size_t s = 0; s < seen_count; s++)
        free(seen[s].directory);
    free(seen);
    if (status != GK_OK) {
        gk_kernelspec_list_free(*list, *count);
        *list = NULL;
        *count = 0;
    }
    return status;
}

/* --- removing --- */

gk_status gk_kernelspec_remove(const char *directory)
{
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", directory);
    char *slash = strrchr(parent, '/');
    if (!slash)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "%s: not a kernelspec path", directory);
    *slash = '\0';
    /* Renamed out of the kernels directory, so Jupyter stops seeing it at
     * once, then deleted. */
    char *hidden = make_hidden_dir(parent, slash + 1);
    if (!hidden)
        return gk_fail(errno_status(errno), "cannot remove %s: %s", directory, strerror(errno));
    gk_status status = GK_OK;
    if (rename(directory, hidden) != 0) {
        status = gk_fail(errno_status(errno), "cannot remove %s: %s", directory, strerror(errno));
        rmdir(hidden);
    } else {
        status = gk_remove_tree(hidden);
    }
    free(hidden);
    return status;
}

void gk_kernelspec_info_free(gk_kernelspec_info *info)
{
    free(info->name);
    free(info->directory);
    free(info->display_name);
    free(info->selection);
    free(info->options);
    free(info->python);
    free(info->gpukit);
    free(info->shadowed_by);
    free(info->problem);
    *info = (gk_kernelspec_info){0};
}

void gk_kernelspec_list_free(gk_kernelspec_info *list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        gk_kernelspec_info_free(&list[i]);
    free(list);
}
