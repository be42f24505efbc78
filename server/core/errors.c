/*
 * The error table (see errors.h), and the two mappings onto it that used to be
 * written out at each call: libztensor statuses and a full disk.
 */
#include "core/errors.h"
#include "core/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

typedef struct err_row {
    unsigned status;
    const char *code;
    unsigned retry_after;
    const char *message;
} err_row;

static const err_row k_rows[ZTD_ERR_COUNT] = {[ZTD_ERR_NONE] = {0, "", 0, ""},
#define ZTD__ERR_ROW(id, status, code, retry, message)                                             \
    [ZTD_ERR_##id] = {status, code, retry, message},
                                              ZTD_ERRORS(ZTD__ERR_ROW)
#undef ZTD__ERR_ROW
};

static const err_row *row(ztd_err e)
{
    return &k_rows[(unsigned)e < ZTD_ERR_COUNT ? e : ZTD_ERR_NONE];
}

unsigned ztd_err_status(ztd_err e)
{
    return row(e)->status;
}

const char *ztd_err_code(ztd_err e)
{
    return row(e)->code;
}

const char *ztd_err_message(ztd_err e)
{
    return row(e)->message;
}

unsigned ztd_err_retry_after(ztd_err e)
{
    return row(e)->retry_after;
}

int ztd_err_log_level(ztd_err e)
{
    switch (e) {
    case ZTD_ERR_NOT_READY:
    case ZTD_ERR_DRAINING:
    case ZTD_ERR_OVERLOADED:
    case ZTD_ERR_TOO_MANY_DECODERS:
    case ZTD_ERR_TOO_MANY_UPLOADS:
    case ZTD_ERR_PUBLISH_BUSY:
        return ZTD_LOG_DEBUG;
    case ZTD_ERR_UPLOADS_DISABLED: /* the configuration says so: said at start-up */
    case ZTD_ERR_FILE_CHANGED:     /* replaced while being read: the client retries */
        return ZTD_LOG_INFO;
    default:
        return ztd_err_status(e) >= 500 ? ZTD_LOG_ERROR : ZTD_LOG_INFO;
    }
}

ztd_err ztd_errf(char *msg, size_t cap, ztd_err e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    return e;
}

ztd_err ztd_err_of_errno(int e, ztd_err otherwise)
{
    return e == ENOSPC || e == EDQUOT ? ZTD_ERR_INSUFFICIENT_STORAGE : otherwise;
}

ztd_err ztd_err_of_zt(zt_status st, ztd_zt_op op)
{
    if (st == ZT_E_NOMEM)
        return ZTD_ERR_INTERNAL;
    if (st == ZT_E_NOSPACE)
        return ZTD_ERR_INSUFFICIENT_STORAGE;
    switch (op) {
    case ZTD_OP_DECODE:
        /* The stored bytes do not decode: the file's fault, for good. A read
         * that fails or ends early: the file changed under us, retry. */
        if (st == ZT_E_ZSTD || st == ZT_E_SIZE)
            return ZTD_ERR_COMPONENT_CORRUPT;
        if (st == ZT_E_LIMIT)
            return ZTD_ERR_COMPONENT_WINDOW_TOO_LARGE;
        if (st == ZT_E_TRUNCATED || st == ZT_E_IO)
            return ZTD_ERR_FILE_CHANGED;
        return ZTD_ERR_INTERNAL;
    case ZTD_OP_WRITE:
        return ZTD_ERR_WRITE_FAILED;
    case ZTD_OP_OBJECTS:
        /* A writer that failed earlier, or I/O, is the server's doing; a
         * manifest that the objects make impossible, the client's. */
        return st == ZT_E_IO || st == ZT_E_STATE ? ZTD_ERR_WRITE_FAILED : ZTD_ERR_INVALID_OBJECTS;
    case ZTD_OP_CHECK_UPLOAD:
        /* The staged file cannot be read back: the server lost it. */
        if (st == ZT_E_IO)
            return ZTD_ERR_STAGING_LOST;
        return st == ZT_E_DIGEST_MISMATCH ? ZTD_ERR_FILE_DIGEST_MISMATCH : ZTD_ERR_INVALID_FILE;
    case ZTD_OP_READ:
        break;
    }
    return ZTD_ERR_INTERNAL;
}
