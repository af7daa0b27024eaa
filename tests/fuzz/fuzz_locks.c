/* Who holds the lease directory's lock (select/lock_holder.c): the input is
 * the text of /proc/locks, then (after 0xFF) the command name that a fake
 * /proc gives the process 24841. The locked file is fe:00 inode 10955121,
 * as in the seeds taken from a real /proc/locks. */
#include "fuzz.h"

#include "select/lease_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

enum { LOCKS, COMMAND, PARTS };

static char proc[4200], process[4300];

static void make_proc(void)
{
    snprintf(proc, sizeof proc, "%s/proc", fuzz_scratch_dir());
    snprintf(process, sizeof process, "%s/24841", proc);
    if (mkdir(proc, 0700) != 0 || mkdir(process, 0700) != 0) {
        perror(process);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!proc[0])
        make_proc();
    char *parts[PARTS];
    char *copy = fuzz_split(data, size, parts, PARTS);
    fuzz_write_file(process, "comm", parts[COMMAND], strlen(parts[COMMAND]));

    char out[1024];
    size_t lines = 1;
    for (const char *c = parts[LOCKS]; *c; c++)
        lines += *c == '\n';
    size_t found = gk_lock_holders_parse(parts[LOCKS], makedev(0xfe, 0x00), 10955121, proc, out,
                                         sizeof out);
    /* At most one holder a line; a message that fits; and nothing but
     * printable ASCII, whatever a process calls itself. */
    if (found > lines || strnlen(out, sizeof out) == sizeof out || (found == 0) != (out[0] == 0))
        abort();
    for (const char *c = out; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
            abort();
    free(copy);
    return 0;
}
