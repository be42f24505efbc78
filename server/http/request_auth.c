/*
 * The bearer-token rule for a request (request_auth.h).
 */
#include "http/request_auth.h"
#include "core/config.h"
#include "http/response.h"

ztd_auth_result ztd_request_auth(const ztd_server *s, struct MHD_Connection *c, ztd_scope need)
{
    return ztd_auth_rule(s->tokens, s->cfg->require_read_token, s->cfg->allow_anonymous_writes,
                         ztd_header(c, "Authorization"), need);
}
