/*
 * libmicrohttpd glue: the daemon and its two-phase access handler, which
 * frames, admits, routes (routes.h) and authorises each request, holds back
 * refusals until the body is read, and writes the access log and request
 * metrics when the request ends. docs/internals/request.md tells the story.
 */
#ifndef ZTD_HTTP_H
#define ZTD_HTTP_H

#include "core/server.h"

/* Bind the listen address and start the daemon: 0, -1, or ZTD_HTTP_CONFIG
 * when the configuration is at fault (TLS files). */
#define ZTD_HTTP_CONFIG (-2)
int ztd_http_start(ztd_server *s);
/* Stop accepting, wait up to the grace period for in-flight requests, stop. */
void ztd_http_stop(ztd_server *s);

#endif
