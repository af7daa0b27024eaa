/* Internal: the Python that runs a Jupyter kernel, and the one that runs
 * Jupyter itself (whose sys.prefix is one of the places Jupyter looks for
 * kernels). */
#ifndef GK_LAUNCH_PYTHON_H
#define GK_LAUNCH_PYTHON_H

#include <gpukit/status.h>

#include <stdbool.h>
#include <stdio.h>

typedef struct gk_python {
    char *path;        /* absolute; a virtualenv's python is kept as it is, not resolved */
    char *found;       /* how it was found, for messages: "the interpreter of /usr/bin/jupyter" */
    char *prefix;      /* sys.prefix */
    char *base_prefix; /* sys.base_prefix (differs from prefix in a virtualenv) */
    char *user_data;   /* site.getuserbase()/share/jupyter, NULL when user site is off */
    char *ipykernel;   /* ipykernel's version, NULL when it cannot be imported */
    char *ipykernel_error; /* why it cannot, when it cannot */
} gk_python;

/* Where the `jupyter` command on PATH runs: the interpreter named by its
 * "#!" line (through /usr/bin/env, or pip's /bin/sh trampoline for paths
 * with spaces). Without a jupyter command, python3 on PATH. `requested`
 * (from --python), when not NULL, is used instead, searched on PATH when it
 * has no '/'. Fills path and found; GK_ERR_NOT_FOUND when there is none. */
gk_status gk_python_find(const char *requested, gk_python *python);

/* Runs the interpreter once to fill in prefix, base_prefix, user_data and,
 * when asked, ipykernel (or ipykernel_error). GK_ERR_NOT_FOUND when it does
 * not run as a Python. */
gk_status gk_python_probe(gk_python *python, bool check_ipykernel);

/* Whether Jupyter searches this Python's prefix before the user's own data
 * directory: JUPYTER_PREFER_ENV_PATH when set, else a virtualenv or a conda
 * environment (not base) that the user owns (jupyter_core's rule). */
bool gk_python_prefers_env(const gk_python *python);

/* The parsers of gk_python_find and gk_python_probe, over what they read:
 * the interpreter a script's first two lines name (a new string, NULL
 * when none), and the probe script's output (changed in place) with the
 * interpreter's exit status, into prefix, base_prefix, user_data and
 * ipykernel (path and found are only named in the message). */
char *gk_python_script_interpreter(FILE *script);
gk_status gk_python_parse_probe(gk_python *python, char *output, int exit_status);

void gk_python_free(gk_python *python);

#endif
