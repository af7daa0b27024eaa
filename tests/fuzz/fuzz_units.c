/* Sizes, fractions and durations as typed on a command line (core/units.c):
 * --min-free, --min-free-ratio, --wait and the like. The first byte picks
 * the parser, the rest is the text. */
#include "fuzz.h"

#include "core/units.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char *text = fuzz_text(data + 1, size - 1);
    uint64_t bytes;
    double value;
    switch (data[0] % 3) {
    case 0:
        if (gk_parse_size(text, &bytes) == GK_OK) {
            char formatted[64];
            gk_format_size(formatted, sizeof formatted, bytes);
        }
        break;
    case 1:
        if (gk_parse_ratio(text, &value) == GK_OK && !(value >= 0 && value <= 1))
            abort(); /* the promise of units.h: a fraction in [0, 1] */
        break;
    default:
        if (gk_parse_duration(text, &value) == GK_OK && !(value >= 0))
            abort();
        break;
    }
    free(text);
    return 0;
}
