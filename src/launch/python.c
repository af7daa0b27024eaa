/* Finding the Python a Jupyter kernel should run, and asking it what
 * Jupyter needs to know (its prefix, whether ipykernel imports). */
#include "launch/python.h"

#include "core/error.h"
#include "core/files.h"
#include "core/strings.h"
#include "core/subprocess.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

char *gk_python_script_interpreter(FILE *file)
{
    char first[4096] = "", second[4096] = "";
    if (!fgets(first, sizeof first, file))
        first[0] = '\0';
    if (!fgets(second, sizeof second, file))
        second[0] = '\0';
    if (strncmp(first, "#!", 2) != 0)
        return NULL;
    char *line = gk_trim(first + 2);
    char *argument = line + strcspn(line, " \t");
    if (*argument)
        *argument++ = '\0';
    argument = gk_trim(argument);
    const char *base = strrchr(line, '/') ? strrchr(line, '/') + 1 : line;

    if (strcmp(base, "env") == 0) {
        /* #!/usr/bin/env [-S] python3 */
        if (strncmp(argument, "-S", 2) == 0 && isspace((unsigned char)argument[2]))
            argument = gk_trim(argument + 3);
        argument[strcspn(argument, " \t")] = '\0';
        return gk_which(argument);
    }
    if (strcmp(base, "sh") == 0 && strncmp(second, "'''exec' ", 9) == 0) {
        /* pip's launcher when the interpreter's path has spaces:
         *   #!/bin/sh
         *   '''exec' "/path with spaces/bin/python" "$0" "$@"  */
        char *start = second + 9;
        if (*start == '"') {
            start++;
            char *end = strchr(start, '"');
            if (!end)
                return NULL;
            *end = '\0';
        } else {
            start[strcspn(start, " \t\n")] = '\0';
        }
        return strdup(start);
    }
    return strdup(line);
}

/* The interpreter named by a script's first lines, as a new string. */
static char *interpreter_of_script(const char *script)
{
    FILE *file = fopen(script, "r");
    if (!file)
        return NULL;
    char *interpreter = gk_python_script_interpreter(file);
    fclose(file);
    return interpreter;
}

gk_status gk_python_find(const char *requested, gk_python *python)
{
    *python = (gk_python){0};
    char found[4200];
    if (requested) {
        python->path = gk_which(requested);
        if (!python->path)
            return gk_fail(GK_ERR_NOT_FOUND, "--python %s: %s", requested,
                           strchr(requested, '/') ? "no such executable file"
                                                  : "not found on PATH");
        snprintf(found, sizeof found, "--python %s", requested);
    } else {
        char *jupyter = gk_which("jupyter");
        if (jupyter) {
            python->path = interpreter_of_script(jupyter);
            snprintf(found, sizeof found, "the interpreter of %s", jupyter);
            if (!python->path) {
                gk_status status = gk_fail(GK_ERR_NOT_FOUND,
                                           "cannot tell which Python %s runs (no #! line naming "
                                           "one); give the kernel's Python with --python",
                                           jupyter);
                free(jupyter);
                return status;
            }
            free(jupyter);
        } else {
            python->path = gk_which("python3");
            snprintf(found, sizeof found, "python3 on PATH (there is no jupyter command on PATH)");
            if (!python->path)
                return gk_fail(GK_ERR_NOT_FOUND,
                               "no Python found: neither jupyter nor python3 is on PATH; install "
                               "Jupyter (apt-get install python3-ipykernel jupyter-notebook, or "
                               "pip install jupyterlab) or name the kernel's Python with --python");
        }
    }
    python->found = strdup(found);
    return python->path && python->found ? GK_OK
                                         : gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
}

/* One line each: prefix, base prefix, user data dir or "", and the ipykernel
 * version or "!" and the reason it does not import (or "-" when not asked:
 * the import takes a few hundred milliseconds). Errors are printed, not
 * raised: the caller only sees standard output. The first line of the
 * script, "check = 0" or "check = 1", is put in front of this. */
static const char probe_script[] =
    "import os, site, sys\n"
    "print(sys.prefix)\n"
    "print(getattr(sys, 'base_prefix', sys.prefix))\n"
    "base = site.getuserbase() if site.ENABLE_USER_SITE else ''\n"
    "print(os.path.join(base, 'share', 'jupyter') if base else '')\n"
    "try:\n"
    "    if not check: raise LookupError\n"
    "    import ipykernel\n"
    "    print(ipykernel.__version__)\n"
    "except LookupError:\n"
    "    print('-')\n"
    "except Exception as e:\n"
    "    print('!' + (type(e).__name__ + ': ' + str(e)).replace('\\n', ' '))\n";

static char *next_line(char **cursor)
{
    char *line = *cursor;
    if (!line || !*line)
        return NULL;
    char *end = strchr(line, '\n');
    if (end) {
        *end = '\0';
        *cursor = end + 1;
    } else {
        *cursor = line + strlen(line);
    }
    return line;
}

gk_status gk_python_probe(gk_python *python, bool check_ipykernel)
{
    char script[sizeof probe_script + 16];
    snprintf(script, sizeof script, "check = %d\n%s", check_ipykernel, probe_script);
    char *argv[] = {python->path, "-c", script, NULL};
    char *output = NULL;
    int exit_status;
    /* Importing ipykernel from a cold disk can take seconds. */
    gk_status status = gk_run_capture(argv, 60000, &output, &exit_status);
    if (status != GK_OK)
        return gk_fail(status == GK_ERR_TIMEOUT ? GK_ERR_TIMEOUT : GK_ERR_NOT_FOUND,
                       "%s (%s) does not run: %s", python->path, python->found, gk_last_error());
    status = gk_python_parse_probe(python, output, exit_status);
    free(output);
    return status;
}

gk_status gk_python_parse_probe(gk_python *python, char *output, int exit_status)
{
    char *cursor = output;
    char *prefix = next_line(&cursor), *base = next_line(&cursor);
    char *user = next_line(&cursor), *ipykernel = next_line(&cursor);
    if (exit_status != 0 || !prefix || !base || !user || !ipykernel || prefix[0] != '/')
        return gk_fail(GK_ERR_NOT_FOUND,
                       "%s (%s) is not a working Python 3 (it exited with status %d)",
                       python->path, python->found, exit_status);
    python->prefix = strdup(prefix);
    python->base_prefix = strdup(base);
    python->user_data = *user ? strdup(user) : NULL;
    if (ipykernel[0] == '!')
        python->ipykernel_error = strdup(ipykernel + 1);
    else if (strcmp(ipykernel, "-") != 0)
        python->ipykernel = strdup(ipykernel);
    return GK_OK;
}

static bool env_flag(const char *value)
{
    static const char *const off[] = {"no", "n", "false", "off", "0", "0.0"};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        if (strcasecmp(value, off[i]) == 0)
            return false;
    return true;
}

static bool owned_by_me(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_uid == geteuid();
}

bool gk_python_prefers_env(const gk_python *python)
{
    const char *prefer = getenv("JUPYTER_PREFER_ENV_PATH");
    if (prefer)
        return env_flag(prefer);
    if (!python->prefix)
        return false;
    if (strcmp(python->prefix, python->base_prefix) != 0 && owned_by_me(python->prefix))
        return true;
    const char *conda = getenv("CONDA_PREFIX");
    const char *conda_env = getenv("CONDA_DEFAULT_ENV");
    return conda && *conda && strncmp(python->prefix, conda, strlen(conda)) == 0 &&
           strcmp(conda_env ? conda_env : "base", "base") != 0 && owned_by_me(python->prefix);
}

void gk_python_free(gk_python *python)
{
    free(python->path);
    free(python->found);
    free(python->prefix);
    free(python->base_prefix);
    free(python->user_data);
    free(python->ipykernel);
    free(python->ipykernel_error);
    *python = (gk_python){0};
}
