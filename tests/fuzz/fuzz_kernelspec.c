/* Jupyter kernelspecs (launch/kernelspec.c): the input is a kernel.json in
 * a kernel directory, which `gpukit kernel list` and `remove` read (any
 * kernel there, gpukit's or another's, hand-edited or damaged). */
#include "fuzz.h"

#include "launch/jupyter_dirs.h"
#include "launch/kernelspec.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char kernels[4200], spec[4300];
    if (!kernels[0]) {
        snprintf(kernels, sizeof kernels, "%s/kernels", fuzz_scratch_dir());
        snprintf(spec, sizeof spec, "%s/python3-gpu", kernels);
        if (mkdir(kernels, 0700) != 0 || mkdir(spec, 0700) != 0)
            abort();
    }
    fuzz_write_file(spec, "kernel.json", data, size);
    gk_kernelspec_info info;
    if (gk_kernelspec_read(spec, &info) == GK_OK)
        gk_kernelspec_info_free(&info);
    gk_kernel_dirs dirs = {.items = {{kernels, "user"}}, .count = 1};
    gk_kernelspec_info *list;
    size_t count;
    if (gk_kernelspec_list(&dirs, &list, &count) == GK_OK)
        gk_kernelspec_list_free(list, count);
    return 0;
}
