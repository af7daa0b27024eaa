/* Writing JSON to stdout. The documents themselves are built in the library
 * (probe/json.c), which the Python module shares. */
#include "cli/cli.h"

bool cli_print_json(json_t *value)
{
    if (!value)
        return false;
    int failed = json_dumpf(value, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    json_decref(value);
    return failed == 0 && fputc('\n', stdout) != EOF;
}
