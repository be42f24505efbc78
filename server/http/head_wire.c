/*
 * head_wire.c: a header value's length on the wire, from libmicrohttpd 0.9.x's in-place
 * parse (see head_wire.h). Pure pointer arithmetic; reads only bytes between value and
 * next.
 */
#include "http/head_wire.h"

#include <stdint.h>

/* libmicrohttpd's head fits its connection memory pool (32 KiB here); anything farther
 * is not the next line of the same buffer. */
#define FAR (64u << 10)

size_t ztd_value_wire_len(const char *value, size_t value_len, const char *next, bool last)
{
    if (!value || !next)
        return value_len;
    uintptr_t v = (uintptr_t)value, n = (uintptr_t)next;
    if (n < v || n - v < value_len || n - v > FAR)
        return value_len;
    const char *end = next;
    /* the line end (CRLF or LF), and for the last header the blank line's as well */
    for (unsigned i = 0; i < (last ? 4u : 2u) && end > value + value_len && end[-1] == '\0'; i++)
        end--;
    return (size_t)(end - value);
}
