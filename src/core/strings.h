/* Internal: small string helpers shared across layers. */
#ifndef GK_CORE_STRINGS_H
#define GK_CORE_STRINGS_H

/* Strips leading and trailing whitespace in place; returns the new start. */
char *gk_trim(char *text);

#endif
