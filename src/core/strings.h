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

/* The length of the character at `text` when a terminal would show it,
 * 0 when it would act on it instead or garble the line: a control
 * character (C0, DEL, C1) or bytes that are not UTF-8. */
size_t gk_printable_character(const unsigned char *text);

/* `text` for a terminal, into buf: each character gk_printable_character
 * refuses becomes '?', so that text from other users (command lines,
 * process names, file names) can carry no escape sequence or line break;
 * cut at size - 1 bytes, never within a character. Returns buf. */
char *gk_printable(char *buf, size_t size, const char *text);

#endif
