/*
 * Authentication of S3 requests (s3_internal.h: ztd_s3_authorized): the
 * single function every S3 operation passes, so that the SigV4 verifier
 * replaces one body. Today it follows /v1's rule (http/http.c): reads are
 * anonymous unless require_read_token; writes need a write token, or
 * allow_anonymous_writes when there is no token file. An SigV4
 * Authorization header is not checked yet: where a token is required it is
 * refused (AccessDenied), since it is not a bearer token.
 */
#include "core/config.h"
#include "http/response.h"
#include "s3/s3_error.h"
#include "s3/s3_internal.h"

bool ztd_s3_authorized(ztd_server *s, struct MHD_Connection *c, ztd_req *r, ztd_scope need,
                       enum MHD_Result *ret)
{
    if (need == ZTD_SCOPE_NONE || (need == ZTD_SCOPE_READ && !s->cfg->require_read_token))
        return true;
    if (need == ZTD_SCOPE_WRITE && !s->tokens) {
        if (s->cfg->allow_anonymous_writes)
            return true;
        *ret = ztd_s3_error(c, r, ZTD_S3_ACCESS_DENIED,
                            "writes are disabled: this server has no tokens file");
        return false;
    }
    switch (ztd_auth_check(s->tokens, ztd_header(c, "Authorization"), need)) {
    case ZTD_AUTH_OK:
        return true;
    case ZTD_AUTH_FORBIDDEN:
        *ret = ztd_s3_error(c, r, ZTD_S3_ACCESS_DENIED, "this token may not %s",
                            need == ZTD_SCOPE_WRITE ? "write" : "read");
        return false;
    default:
        *ret =
            ztd_s3_error(c, r, ZTD_S3_ACCESS_DENIED, "a bearer token with the %s scope is required",
                         need == ZTD_SCOPE_WRITE ? "write" : "read");
        return false;
    }
}
