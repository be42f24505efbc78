/*
 * Error codes, their names, and the message builder every module uses. A
 * message names the object, the component and the byte offset when known.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

const char *zt_status_name(zt_status s)
{
    switch (s) {
#define ZT__NAME(name, num, text)                                                                  \
    case name:                                                                                     \
        return #name;
        ZT_STATUS_LIST(ZT__NAME)
#undef ZT__NAME
    }
    return "ZT_E_UNKNOWN";
}

const char *zt_status_text(zt_status s)
{
    switch (s) {
#define ZT__TEXT(name, num, text)                                                                  \
    case name:                                                                                     \
        return text;
        ZT_STATUS_LIST(ZT__TEXT)
#undef ZT__TEXT
    }
    return "unknown error";
}

static void copy_trunc(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= cap)
        n = cap - 1;
    if (n)
        memcpy(dst, src, n);
    dst[n] = 0;
}

zt_status zt_error_vset(zt_error *err, zt_status code, const char *obj, const char *comp,
                        int has_off, uint64_t off, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    err->has_offset = has_off;
    err->offset = off;
    copy_trunc(err->object, sizeof(err->object), obj);
    copy_trunc(err->component, sizeof(err->component), comp);

    char detail[512];
    vsnprintf(detail, sizeof(detail), fmt, ap);

    char where[512] = "";
    size_t w = 0;
    if (obj && *obj)
        w += (size_t)snprintf(where + w, sizeof(where) - w, "object \"%.200s\"", obj);
    if (comp && *comp && w < sizeof(where))
        w += (size_t)snprintf(where + w, sizeof(where) - w, "%scomponent \"%.100s\"", w ? ", " : "",
                              comp);
    if (has_off && w < sizeof(where))
        snprintf(where + w, sizeof(where) - w, "%sbyte %llu", w ? ", " : "",
                 (unsigned long long)off);
    /* A detail long enough to fill the message is cut short, and says so. */
    int n;
    if (where[0])
        n = snprintf(err->message, sizeof(err->message), "%s: %s (%s)", zt_status_name(code),
                     detail, where);
    else
        n = snprintf(err->message, sizeof(err->message), "%s: %s", zt_status_name(code), detail);
    if (n >= (int)sizeof(err->message)) /* a cut message says so */
        memcpy(err->message + sizeof(err->message) - 4, "...", 4);
    return code;
}

zt_status zt__fail(zt_error *err, zt_status code, const char *obj, const char *comp, int has_off,
                   uint64_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    zt_status st = zt_error_vset(err, code, obj, comp, has_off, off, fmt, ap);
    va_end(ap);
    return st;
}
