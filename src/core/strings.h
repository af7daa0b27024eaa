/* Internal: small string helpers shared across layers. */
#ifndef GK_CORE_STRINGS_H
#define GK_CORE_STRINGS_H

#include <stddef.h>

/* Strips leading and trailing whitespace in place; returns the new start. */
char *gk_trim(char *text);

/* The length in bytes of the well-formed UTF-8 character at `text` (RFC
 * 3629: no overlong forms, no surrogates, nothing past U+10FFFF), or 0
 * when the bytes there are not one. Text from other programs (command
 * lines) goes through this before it reaches a strict consumer. */
size_t gk_utf8_character(const unsigned char *text);

#endif
