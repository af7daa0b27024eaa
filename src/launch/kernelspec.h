/* Internal: gpukit's Jupyter kernelspecs. A gpukit kernel is a kernelspec
 * directory whose kernel.json runs the kernel through `gpukit run` and
 * records what it does under metadata.gpukit; that record is also how a
 * gpukit kernel is told apart from others. */
#ifndef GK_LAUNCH_KERNELSPEC_H
#define GK_LAUNCH_KERNELSPEC_H

#include "launch/jupyter_dirs.h"

#include <gpukit/status.h>

#include <stdbool.h>
#include <stddef.h>

typedef struct gk_kernelspec_request {
    const char *name;            /* valid per gk_kernel_name_valid(), lower case */
    const char *display_name;    /* what Jupyter's launcher shows */
    const char *gpukit;          /* absolute path of the gpukit command */
    const char *python;          /* absolute path of the kernel's Python */
    char *const *run_options;    /* `gpukit run` options, NULL-terminated */
    const char *selection;       /* what the options select, in words */
    bool debugger;               /* ipykernel 6+ speaks the debug protocol */
    bool replace_foreign;        /* may replace a kernelspec gpukit did not write */
} gk_kernelspec_request;

/* Writes KERNELS_DIR/NAME (kernel.json and the logos), creating KERNELS_DIR
 * as needed. The new directory is built beside the old one and swapped in
 * with one rename, so Jupyter sees the old spec or the new one, never a
 * half-written one. A spec there that gpukit did not write is kept
 * (GK_ERR_EXISTS) unless replace_foreign. *installed is the new directory. */
gk_status gk_kernelspec_install(const char *kernels_dir, const gk_kernelspec_request *request,
                                char **installed);

/* A gpukit kernelspec as found on disk. */
typedef struct gk_kernelspec_info {
    char *name;
    char *directory;       /* the spec's directory */
    const char *origin;    /* of the kernel directory it is in (see gk_kernel_dir) */
    char *display_name;
    char *selection;
    char *options;         /* the `gpukit run` options, joined by spaces */
    char *python;
    char *gpukit;
    char *shadowed_by;     /* the directory Jupyter uses instead, or NULL */
    char *problem;         /* why it cannot start as it is, or NULL */
} gk_kernelspec_info;

/* Reads the spec in `directory`; GK_ERR_NOT_FOUND when there is none, or
 * when it is not a gpukit kernel (the message says which). */
gk_status gk_kernelspec_read(const char *directory, gk_kernelspec_info *info);

/* Every gpukit kernel in `dirs`, in Jupyter's search order, each marked when
 * a spec of the same name earlier in the order hides it. */
gk_status gk_kernelspec_list(const gk_kernel_dirs *dirs, gk_kernelspec_info **list,
                             size_t *count);

/* Removes a spec directory: renamed out of Jupyter's sight first, then
 * deleted. */
gk_status gk_kernelspec_remove(const char *directory);

void gk_kernelspec_info_free(gk_kernelspec_info *info);
void gk_kernelspec_list_free(gk_kernelspec_info *list, size_t count);

#endif
