/*
 * Error messages of libztensor-remote: the core's message (its builder,
 * zt_error_vset from ztensor_experimental.h, so both libraries say
 * "ZT_E_X: what (object "o", component "c", byte N)" alike) followed by the
 * URL, so a message from a remote read says which file, which tensor and
 * which byte.
 */
#include "remote_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

zt_status ztr__fail(zt_error *err, zt_status code, const char *url, const char *obj,
                    const char *comp, int has_off, uint64_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    zt_error_vset(err, code, obj, comp, has_off, off, fmt, ap);
    va_end(ap);
    ztr__add_url(err, url);
    return code;
}

/* The URL is what a reader of the log needs most: a message too long to take
 * it whole is cut (and ends in "...") to make room for up to URL_KEEP bytes. */
#define URL_KEEP 256

void ztr__add_url(zt_error *err, const char *url)
{
    if (!err || !url)
        return;
    size_t cap = sizeof(err->message), m = strlen(err->message), u = strlen(url);
    size_t keep = u < URL_KEEP ? u : URL_KEEP;
    if (m + 3 + keep >= cap) { /* " [" url "]" would not fit */
        m = cap - 1 - 3 - keep - 3;
        memcpy(err->message + m, "...", 4);
        m += 3;
    }
    snprintf(err->message + m, cap - m, " [%s]", url);
}
