/* What `gpukit kernel` learns about Python (launch/python.c,
 * launch/jupyter_dirs.c). The first byte picks the input: the `jupyter`
 * script whose "#!" lines name the interpreter; or the output of the probe
 * gpukit runs in that interpreter, then 0xFF and a JUPYTER_PATH (unset when
 * absent), from which Jupyter's kernel directories are worked out. */
#include "fuzz.h"

#include "launch/jupyter_dirs.h"
#include "launch/python.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void script(const uint8_t *data, size_t size)
{
    FILE *file = fmemopen((void *)data, size, "r");
    if (!file)
        abort();
    free(gk_python_script_interpreter(file));
    fclose(file);
}

static void probe_output(const uint8_t *data, size_t size)
{
    char *parts[2];
    char *copy = fuzz_split(data, size, parts, 2);
    if (memchr(data, 0xFF, size))
        setenv("JUPYTER_PATH", parts[1], 1);
    else
        unsetenv("JUPYTER_PATH");
    gk_python python = {.path = strdup("/usr/bin/python3"), .found = strdup("--python python3")};
    if (!python.path || !python.found)
        abort();
    if (gk_python_parse_probe(&python, parts[0], 0) == GK_OK) {
        gk_kernel_dirs dirs;
        if (gk_kernel_dirs_find(&python, &dirs) == GK_OK) {
            for (size_t i = 0; i < dirs.count; i++)
                if (!dirs.items[i].path || !gk_kernel_dirs_contain(&dirs, dirs.items[i].path))
                    abort();
            gk_kernel_dirs_free(&dirs);
        }
    }
    gk_python_free(&python);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] & 1)
        probe_output(data + 1, size - 1);
    else if (size > 1) /* fmemopen refuses an empty buffer */
        script(data + 1, size - 1);
    return 0;
}
