/* A minimal assertion helper for gpukit's C tests: each failed check prints
 * where and what, and the test's exit status counts the failures. */
#ifndef GK_TEST_CHECK_H
#define GK_TEST_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(condition, ...)                                                     \
    do {                                                                          \
        if (!(condition)) {                                                       \
            check_failures++;                                                     \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__,     \
                    #condition);                                                  \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
        }                                                                         \
    } while (0)

#define CHECK_DONE()                                                              \
    do {                                                                          \
        if (check_failures)                                                       \
            fprintf(stderr, "%d check(s) failed\n", check_failures);              \
        return check_failures ? 1 : 0;                                            \
    } while (0)

#endif
