/* What every fuzz target shares: libFuzzer's entry point, and helpers that
 * turn the fuzzer's bytes into the text or files a parser reads. Each
 * fuzz_<name>.c defines LLVMFuzzerTestOneInput; libFuzzer calls it in the
 * fuzz build (GPUKIT_FUZZ=ON) and replay.c calls it over the corpus in the
 * plain and sanitizer builds. */
#ifndef GK_FUZZ_H
#define GK_FUZZ_H

#include <gpukit/probe.h>
#include <gpukit/visible.h>

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (cut at its first NUL, as a C
 * string read from a file or the environment would be). free() it. */
char *fuzz_text(const uint8_t *data, size_t size);

/* Splits the input at the byte 0xFF into up to `max` NUL-terminated parts
 * (missing parts are ""); returns the copy that the parts point into, to
 * free(). 0xFF never occurs in the ASCII the parsers expect, so seeds stay
 * readable and each part can hold any other byte. */
char *fuzz_split(const uint8_t *data, size_t size, char **parts, size_t max);

/* A directory of this process's own under $TMPDIR, made on first use and
 * removed at exit. */
const char *fuzz_scratch_dir(void);

/* Writes `size` bytes to `dir`/`name`, replacing what was there; aborts on
 * failure (the target cannot go on without its file). */
void fuzz_write_file(const char *dir, const char *name, const void *data, size_t size);

/* A machine of four GPUs to resolve and select against: two kinds (so
 * FASTEST_FIRST and PCI_BUS_ID orders differ), one in MIG mode with two MIG
 * devices, one lost, UUIDs that share a prefix. Free with
 * gk_snapshot_destroy(). */
gk_snapshot *fuzz_snapshot(void);

/* Aborts unless the char array `text` of `size` bytes holds a string that
 * ends inside it: a parser must never leave a field unterminated.
 * FUZZ_CHECK_TEXT(field) passes an array field with its size. */
void fuzz_check_text(const char *text, size_t size);
#define FUZZ_CHECK_TEXT(field) fuzz_check_text((field), sizeof(field))

/* Writes `snapshot` as `gpukit ls --json` would under `view`, and drops the
 * text: what a parsed snapshot goes through on its way to the user. */
void fuzz_write_json(const gk_snapshot *snapshot, const gk_cuda_view *view);

#endif
