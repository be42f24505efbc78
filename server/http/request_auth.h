/*
 * The bearer-token rule (auth.h) for one request under the server's
 * configuration (its tokens file, require_read_token, allow_anonymous_writes):
 * the check every front (/v1, S3 without keys, the Hub) makes before it
 * words the refusal its clients read.
 */
#ifndef ZTD_REQUEST_AUTH_H
#define ZTD_REQUEST_AUTH_H

#include <microhttpd.h>

#include "core/server.h"
#include "http/auth.h"

/* The rule's verdict for c's Authorization header and the scope needed. */
ztd_auth_result ztd_request_auth(const ztd_server *s, struct MHD_Connection *c, ztd_scope need);

#endif
