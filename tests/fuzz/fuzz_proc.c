/* /proc files (probe/proc.c, probe/cpu.c, select/lease.c): the first byte
 * picks the file, the rest is its content: a process's status, stat (read
 * for CPU use, and for the parent pid) or cmdline, or the machine's meminfo
 * or cpuinfo. */
#include "fuzz.h"

#include "probe/backend.h"
#include "select/lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_process(const gk_process *process)
{
    FUZZ_CHECK_TEXT(process->user);
    FUZZ_CHECK_TEXT(process->command);
    if (process->cmdline_len > sizeof process->cmdline ||
        (process->cmdline_len && process->cmdline[process->cmdline_len - 1] != '\0'))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    gk_process process;
    memset(&process, 0, sizeof process);
    gk_cpu cpu;
    memset(&cpu, 0, sizeof cpu);
    char *text = fuzz_text(data + 1, size - 1);
    switch (data[0] % 5) {
    case 0:
        gk_proc_parse_status(text, &process);
        break;
    case 1: {
        gk_proc_parse_stat(text, 12345.67, 100, &process);
        uint32_t parent;
        gk_lease_stat_parent(text, &parent);
        break;
    }
    case 2: {
        /* What read_small_file leaves: 1 to sizeof cmdline - 1 raw bytes. */
        size_t length = size - 1 < sizeof process.cmdline - 1 ? size - 1
                                                               : sizeof process.cmdline - 1;
        if (length == 0)
            break;
        memcpy(process.cmdline, data + 1, length);
        gk_proc_parse_cmdline(&process, length);
        break;
    }
    case 3:
        gk_cpu_parse_meminfo(text, &cpu);
        break;
    default: {
        FILE *cpuinfo = fmemopen(text, size - 1 ? size - 1 : 1, "r");
        if (!cpuinfo)
            abort();
        gk_cpu_parse_cpuinfo(cpuinfo, &cpu);
        fclose(cpuinfo);
        FUZZ_CHECK_TEXT(cpu.model);
        break;
    }
    }
    check_process(&process);
    free(text);
    return 0;
}
