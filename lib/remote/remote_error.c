/*
 * Error messages of libztensor-remote, in the core's shape ("ZT_E_X: what
 * (object "o", component "c", byte N)") followed by the URL, so a message
 * from a remote read says which file, which tensor and which byte.
 */
#include "remote_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void copy_trunc(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= cap)
        n = cap - 1;
    if (n)
        memcpy(dst, src, n);
    dst[n] = 0;
}

zt_status ztr__fail(zt_error *err, zt_status code, const char *url, const char *obj,
                    const char *comp, int has_off, uint64_t off, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    err->has_offset = has_off;
    err->offset = off;
    copy_trunc(err->object, sizeof(err->object), obj);
    copy_trunc(err->component, sizeof(err->component), comp);
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    char where[400] = "";
    size_t w = 0;
    if (obj && *obj)
        w += (size_t)snprintf(where, sizeof(where), "object \"%.150s\"", obj);
    if (comp && *comp && w < sizeof(where))
        w += (size_t)snprintf(where + w, sizeof(where) - w, "%scomponent \"%.80s\"", w ? ", " : "",
                              comp);
    if (has_off && w < sizeof(where))
        snprintf(where + w, sizeof(where) - w, "%sbyte %llu", w ? ", " : "",
                 (unsigned long long)off);
    size_t m = (size_t)snprintf(err->message, sizeof(err->message), "%s: %.400s",
                                zt_status_name(code), detail);
    if (where[0] && m < sizeof(err->message))
        m += (size_t)snprintf(err->message + m, sizeof(err->message) - m, " (%s)", where);
    ztr__add_url(err, url);
    return code;
}

void ztr__add_url(zt_error *err, const char *url)
{
    if (!err || !url)
        return;
    size_t m = strlen(err->message);
    if (m < sizeof(err->message))
        snprintf(err->message + m, sizeof(err->message) - m, " [%s]", url);
}
