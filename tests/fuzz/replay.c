/* Runs a fuzz target over the files of its corpus directories (the seeds
 * and every input that once crashed it) without libFuzzer, so the plain and
 * sanitizer builds check the regressions too. Fails when it finds no input,
 * so a missing corpus cannot pass unnoticed. */
#include "fuzz.h"

#include "core/files.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int replay_file(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        perror(path);
        return -1;
    }
    size_t size = 0;
    char *text = gk_read_stream(file, &size);
    fclose(file);
    /* The target gets exactly the file's bytes in a block of that size, as
     * libFuzzer gives them, so ASan sees a read past their end. */
    uint8_t *data = text ? malloc(size ? size : 1) : NULL;
    if (!data) {
        free(text);
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    memcpy(data, text, size);
    free(text);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    size_t replayed = 0;
    for (int i = 1; i < argc; i++) {
        DIR *dir = opendir(argv[i]);
        if (!dir) {
            perror(argv[i]);
            return 1;
        }
        struct dirent *entry;
        while ((entry = readdir(dir))) {
            char path[8192];
            struct stat st;
            snprintf(path, sizeof path, "%s/%s", argv[i], entry->d_name);
            if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            if (replay_file(path) != 0) {
                closedir(dir);
                return 1;
            }
            replayed++;
        }
        closedir(dir);
    }
    printf("replayed %zu inputs\n", replayed);
    return replayed ? 0 : 1;
}
