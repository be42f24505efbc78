/*
 * Authentication of S3 requests (s3_internal.h: ztd_s3_authorized): the
 * single function every S3 operation passes.
 *  - With --s3-keys, a request that carries AWS Signature Version 4 (the
 *    Authorization header or a presigned query) is verified by the pure
 *    verifier (sigv4.h) from libmicrohttpd's headers and the raw path and
 *    query; the key's scope decides, and each verdict is answered with its
 *    S3 error (SignatureDoesNotMatch, InvalidAccessKeyId,
 *    RequestTimeTooSkewed, AccessDenied...). The verdict (signing key, seed
 *    signature, payload form) is handed back for the body's checks.
 *  - Otherwise, /v1's rule (http/http.c): reads are anonymous unless
 *    require_read_token; writes need a write bearer token, or
 *    allow_anonymous_writes when there is no token file. Without --s3-keys
 *    an AWS signature is not checked: where a token is required it is
 *    refused (AccessDenied), since it is not a bearer token.
 * No secret and no signature is ever logged.
 */
#include "core/config.h"
#include "http/response.h"
#include "http/request_auth.h"
#include "s3/s3_error.h"
#include "s3/s3_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_HEADERS (ZTD_SIGV4_MAX_HEADERS + 1) /* one more, so the verifier sees too many */

typedef struct collected {
    ztd_s3_header h[MAX_HEADERS];
    size_t n;
    char query[ZTD_SIGV4_MAX_QUERY + 2];
    size_t qlen;
    bool overflow; /* the query did not fit */
} collected;

static enum MHD_Result take_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    collected *k = cls;
    (void)kind;
    if (k->n < MAX_HEADERS)
        k->h[k->n++] = (ztd_s3_header){key, value ? value : ""};
    return MHD_YES;
}

/* Append s to the query, spaces (libmicrohttpd turned '+' into them) as %20. */
static void q_put(collected *k, const char *s)
{
    for (; *s; s++) {
        const char *add = *s == ' ' ? "%20" : NULL;
        size_t n = add ? 3 : 1;
        if (k->qlen + n > ZTD_SIGV4_MAX_QUERY) {
            k->overflow = true;
            return;
        }
        memcpy(k->query + k->qlen, add ? add : s, n);
        k->qlen += n;
    }
}

/* The raw query again: the arguments are kept percent-encoded (router.h). */
static enum MHD_Result take_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    collected *k = cls;
    (void)kind;
    if (k->qlen)
        q_put(k, "&");
    q_put(k, key);
    if (value) {
        q_put(k, "=");
        q_put(k, value);
    }
    k->query[k->qlen] = 0;
    return MHD_YES;
}

/* Verify r's AWS signature, if any, against the keys. */
static ztd_s3err verify(struct MHD_Connection *c, ztd_req *r, const ztd_s3_keys *keys,
                        ztd_s3_auth *auth)
{
    collected *k = calloc(1, sizeof(*k));
    if (!k) {
        memset(auth, 0, sizeof(*auth));
        snprintf(auth->msg, sizeof(auth->msg), "out of memory");
        return ZTD_S3E_INTERNAL;
    }
    MHD_get_connection_values(c, MHD_HEADER_KIND, take_header, k);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, take_arg, k);
    ztd_s3err e;
    if (k->overflow) {
        memset(auth, 0, sizeof(*auth));
        snprintf(auth->msg, sizeof(auth->msg), "the query is longer than %u bytes",
                 ZTD_SIGV4_MAX_QUERY);
        e = ZTD_S3E_INVALID_URI;
    } else {
        ztd_s3_request req = {.method = r->method,
                              .path = r->path ? r->path : "",
                              .query = k->query,
                              .headers = k->h,
                              .n_headers = k->n,
                              .now = (int64_t)time(NULL)};
        e = ztd_sigv4_verify(&req, keys, auth);
    }
    free(k);
    return e;
}

/* The bearer-token and anonymous rule of /v1. */
static bool bearer_rule(ztd_server *s, struct MHD_Connection *c, ztd_req *r, ztd_scope need,
                        enum MHD_Result *ret)
{
    switch (ztd_request_auth(s, c, need)) {
    case ZTD_AUTH_OK:
        return true;
    case ZTD_AUTH_WRITES_DISABLED:
        *ret = ztd_s3_error(c, r, ZTD_S3_ACCESS_DENIED,
                            "writes are disabled for this request: it is not signed with an "
                            "S3 key (--s3-keys) and this server has no tokens file");
        return false;
    case ZTD_AUTH_FORBIDDEN:
        *ret = ztd_s3_error(c, r, ZTD_S3_ACCESS_DENIED, "this token may not %s",
                            need == ZTD_SCOPE_WRITE ? "write" : "read");
        return false;
    default:
        *ret = ztd_s3_error(c, r, ZTD_S3_ACCESS_DENIED,
                            "a bearer token or an S3 key with the %s scope is required",
                            need == ZTD_SCOPE_WRITE ? "write" : "read");
        return false;
    }
}

bool ztd_s3_authorized(ztd_server *s, struct MHD_Connection *c, ztd_req *r, ztd_scope need,
                       ztd_s3_auth *auth, enum MHD_Result *ret)
{
    const ztd_s3_keys *keys = ztd_s3_keys_table();
    memset(auth, 0, sizeof(*auth));
    if (!keys)
        return bearer_rule(s, c, r, need, ret);
    ztd_s3err e = verify(c, r, keys, auth);
    if (e == ZTD_S3E_OK) {
        if ((int)auth->scope >= (int)need)
            return true;
        *ret = ztd_s3_error(c, r, ZTD_S3_ACCESS_DENIED, "access key %s may not %s",
                            auth->access_key, need == ZTD_SCOPE_WRITE ? "write" : "read");
        ztd_s3_auth_clear(auth);
        return false;
    }
    const char *authz = ztd_header(c, "Authorization");
    bool bearer = authz && !strncasecmp(authz, "Bearer ", 7);
    if (e == ZTD_S3E_ANONYMOUS &&
        (ztd_s3_has_arg(c, "AWSAccessKeyId") || ztd_s3_has_arg(c, "Signature"))) {
        *ret = ztd_s3_error(c, r, ZTD_S3_INVALID_REQUEST,
                            "AWS Signature Version 2 (AWSAccessKeyId, Signature) is not "
                            "supported: sign with Signature Version 4 (boto3: "
                            "Config(signature_version=\"s3v4\"))");
        ztd_s3_auth_clear(auth);
        return false;
    }
    if (e == ZTD_S3E_ANONYMOUS || (e == ZTD_S3E_UNSUPPORTED_AUTH && bearer)) {
        ztd_s3_auth_clear(auth); /* scope NONE: not signed */
        return bearer_rule(s, c, r, need, ret);
    }
    ztd_s3_err fe = ztd_s3_err_from(e);
    *ret = ztd_s3_error(c, r, fe, "%s",
                        auth->msg[0] ? auth->msg : ztd_s3err_code(e)); /* msg: no secret */
    ztd_s3_auth_clear(auth);
    return false;
}
