/* Small string helpers shared across layers. */
#include "core/strings.h"

#include <ctype.h>
#include <string.h>

char *gk_trim(char *text)
{
    while (isspace((unsigned char)*text))
        text++;
    size_t length = strlen(text);
    while (length > 0 && isspace((unsigned char)text[length - 1]))
        text[--length] = '\0';
    return text;
}
