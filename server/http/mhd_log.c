/*
 * libmicrohttpd's messages into the error log (see mhd_log.h). The levels
 * come from the starts of the messages of libmicrohttpd 0.9.75
 * (src/microhttpd/connection.c and daemon.c). A message another version
 * words differently falls back to warn: it is still logged, only perhaps at
 * a higher level than it deserves.
 */
#include "http/mhd_log.h"

#include <stdio.h>
#include <string.h>

/* Caused by a client, one per bad request or dropped connection: an attacker
 * can make as many as it likes, so they must not look like server trouble. */
static const char *const k_client[] = {
    "Error processing request",          /* the 4xx MHD sends itself */
    "Received HTTP/1.1 request without", /* no Host header */
    "Too large value of 'Content-Length'",
    "Failed to parse `Content-Length'",
    "Not enough memory in pool", /* headers larger than the connection pool */
    "Socket has been disconnected",
    "Connection socket is closed",
    "Connection was closed by remote side",
    "Failed to send",
    "Too late to send an error response",
    "WARNING: incomplete upload processing",
};

/* ztensord used the library wrongly: a bug here, not a client's doing. */
static const char *const k_ours[] = {
    "Application used invalid",
    "Attempted to queue response on wrong thread",
    "Refused wrong status code",
    "Wrong status code",
    "MHD_OPTION_EXTERNAL_LOGGER is not the first option",
};

static int starts_with_any(const char *msg, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strncmp(msg, list[i], strlen(list[i])) == 0)
            return 1;
    return 0;
}

ztd_log_level ztd_mhd_log_level(const char *msg)
{
    if (starts_with_any(msg, k_client, sizeof(k_client) / sizeof(k_client[0])))
        return ZTD_LOG_INFO;
    if (starts_with_any(msg, k_ours, sizeof(k_ours) / sizeof(k_ours[0])))
        return ZTD_LOG_ERROR;
    return ZTD_LOG_WARN;
}

void ztd_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[ZTD_LOG_MSG_MAX + 2]; /* ztd_log cuts at ZTD_LOG_MSG_MAX and marks it */
    int n = vsnprintf(msg, sizeof(msg), fmt, ap);
    if (n < 0)
        return;
    size_t len = strnlen(msg, sizeof(msg));
    while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
        msg[--len] = 0;
    ztd_log_level level = ztd_mhd_log_level(msg);
    if (ztd_log_enabled(level))
        ztd_log(level, "libmicrohttpd: %s", msg);
}
