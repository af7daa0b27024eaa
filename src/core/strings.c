/* Small string helpers shared across layers. */
#include "core/strings.h"

#include <ctype.h>
#include <stdbool.h>
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

size_t gk_utf8_character(const unsigned char *text)
{
    unsigned char c = text[0];
    if (c < 0x80)
        return 1;
    /* The second byte's range depends on the first (RFC 3629's table). */
    unsigned char low = 0x80, high = 0xBF;
    size_t length;
    if (c >= 0xC2 && c <= 0xDF) {
        length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        length = 3;
        if (c == 0xE0)
            low = 0xA0; /* no overlong forms */
        if (c == 0xED)
            high = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        length = 4;
        if (c == 0xF0)
            low = 0x90;
        if (c == 0xF4)
            high = 0x8F; /* nothing past U+10FFFF */
    } else {
        return 0;
    }
    if (text[1] < low || text[1] > high)
        return 0;
    for (size_t i = 2; i < length; i++)
        if ((text[i] & 0xC0) != 0x80)
            return 0;
    return length;
}

size_t gk_printable_character(const unsigned char *text)
{
    size_t length = gk_utf8_character(text);
    bool control = text[0] < 0x20 || text[0] == 0x7F ||
                   (length == 2 && text[0] == 0xC2 && text[1] < 0xA0); /* C1: U+0080-U+009F */
    return control ? 0 : length;
}

char *gk_printable(char *buf, size_t size, const char *text)
{
    size_t used = 0;
    for (const unsigned char *c = (const unsigned char *)text; size && *c;) {
        size_t length = gk_printable_character(c), whole = gk_utf8_character(c);
        size_t written = length ? length : 1; /* the character, or '?' for it */
        if (used + written >= size)
            break;
        memcpy(buf + used, length ? (const char *)c : "?", written);
        used += written;
        c += whole ? whole : 1;
    }
    if (size)
        buf[used] = '\0';
    return buf;
}
