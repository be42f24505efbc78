/*
 * libmicrohttpd's own messages ("Error processing request ...", "Server
 * reached connection limit ...") into ztensord's error log, prefixed
 * "libmicrohttpd:", instead of raw lines on stderr that no log shipper
 * parses. Passed as MHD_OPTION_EXTERNAL_LOGGER.
 */
#ifndef ZTD_MHD_LOG_H
#define ZTD_MHD_LOG_H

#include <stdarg.h>

#include "core/log.h"

/* The MHD_LogCallback: formats into a bounded buffer (the error log cuts
 * long messages with "..."), drops the trailing newline, logs. */
void ztd_mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* The level for one message: info for what a client did (a malformed or cut
 * request, a connection that went away), error for a misuse of the library
 * by ztensord, warn for the rest (resource limits, system call failures,
 * and any message this table does not know). Pure. */
ztd_log_level ztd_mhd_log_level(const char *msg);

#endif
