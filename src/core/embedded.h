/* Internal: files built into the library (cmake/embed.cmake generates the
 * tables from files in the source tree). */
#ifndef GK_CORE_EMBEDDED_H
#define GK_CORE_EMBEDDED_H

#include <stddef.h>

typedef struct gk_embedded_file {
    const char *name; /* the file's base name */
    const unsigned char *data;
    size_t size;
} gk_embedded_file;

#endif
