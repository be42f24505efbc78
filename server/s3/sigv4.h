/*
 * AWS Signature Version 4 verification for the S3 front, as one pure
 * function: a request as received (method, raw path and query, headers, the
 * time) and the keys table in; the access key's scope, or the S3 error to
 * answer, out. Both forms are verified: the Authorization header
 * ("AWS4-HMAC-SHA256 Credential=AK/DATE/REGION/s3/aws4_request,
 * SignedHeaders=..., Signature=...") and presigned URLs (X-Amz-Algorithm,
 * -Credential, -Date, -Expires (at most 604800), -SignedHeaders, -Signature).
 * Any region is accepted and reported. Signatures are compared in constant
 * time; no message ever holds a secret or a signature.
 */
#ifndef ZTD_SIGV4_H
#define ZTD_SIGV4_H

#include <stdbool.h>
#include <stdint.h>

#include "s3/s3_keys.h"
#include "s3/s3err.h"
#include "s3/sigv4_canon.h"
#include "s3/sigv4_key.h"

#define ZTD_SIGV4_MAX_SKEW 900       /* seconds either way: RequestTimeTooSkewed */
#define ZTD_SIGV4_MAX_EXPIRES 604800 /* X-Amz-Expires: seven days */
#define ZTD_SIGV4_MAX_REGION 64
#define ZTD_SIGV4_MAX_AUTHORIZATION 8192 /* the Authorization header's length */

/* What x-amz-content-sha256 said the body is. */
typedef enum ztd_s3_payload {
    ZTD_S3_PAYLOAD_SHA256 = 0,        /* a hex SHA-256 of the body: the front must check it
                                         (CONTENT_SHA256_MISMATCH), see payload_sha256 */
    ZTD_S3_PAYLOAD_UNSIGNED,          /* UNSIGNED-PAYLOAD; always for presigned URLs */
    ZTD_S3_PAYLOAD_STREAMING,         /* STREAMING-AWS4-HMAC-SHA256-PAYLOAD: aws-chunked, signed */
    ZTD_S3_PAYLOAD_STREAMING_TRAILER, /* ...-PAYLOAD-TRAILER: signed, with trailers */
    ZTD_S3_PAYLOAD_STREAMING_UNSIGNED_TRAILER /* STREAMING-UNSIGNED-PAYLOAD-TRAILER */
} ztd_s3_payload;

/* The verdict's details. Plain data the caller owns; ztd_s3_auth_clear() wipes the key. */
typedef struct ztd_s3_auth {
    ztd_s3_scope scope;                                    /* the key's scope (OK only) */
    bool presigned;                                        /* the query form */
    char access_key[ZTD_S3_MAX_KEY_ID + 1];                /* as presented (filled once parsed) */
    char region[ZTD_SIGV4_MAX_REGION + 1];                 /* as presented, e.g. "us-east-1" */
    char amz_date[17];                                     /* YYYYMMDDTHHMMSSZ */
    char scope_str[8 + 1 + ZTD_SIGV4_MAX_REGION + 17 + 1]; /* DATE/REGION/s3/aws4_request */
    char seed_signature[ZTD_SIGV4_SIG_HEX + 1];            /* the request's signature */
    uint8_t signing_key[ZTD_SIGV4_KEY_LEN]; /* secret-derived: for aws_chunked; wipe */
    ztd_s3_payload payload;
    uint8_t payload_sha256[32]; /* when payload is ZTD_S3_PAYLOAD_SHA256 */
    char msg[256];              /* why, for <Message>; "" when OK */
} ztd_s3_auth;

/*
 * Verify req against keys. Returns:
 *   OK                        out->scope etc. set; the body still has to be checked as
 *                             out->payload says;
 *   ANONYMOUS                 no Authorization header and no X-Amz-* credentials in the query
 *                             (the front applies its anonymous rule);
 *   UNSUPPORTED_AUTH          an Authorization that is not AWS4-HMAC-SHA256 (SigV2, Bearer:
 *                             the front may try its own schemes first);
 *   AUTH_HEADER_MALFORMED, AUTH_QUERY_ERROR  a form that does not parse, a credential scope
 *                             that is not DATE/REGION/s3/aws4_request or whose date is not the
 *                             request's, X-Amz-Expires out of 0..604800;
 *   INVALID_ARGUMENT          both forms at once, repeated auth headers, more than 256 headers,
 *                             an x-amz-content-sha256 that is none of the allowed values;
 *   MISSING_SECURITY_HEADER   header form without x-amz-content-sha256;
 *   ACCESS_DENIED             no usable date, or an integrity header (x-amz-content-sha256,
 *                             x-amz-date, x-amz-decoded-content-length, x-amz-trailer,
 *                             x-amz-checksum-*) present but not signed;
 *   REQUEST_TIME_TOO_SKEWED   header form more than 15 minutes off now;
 *   EXPIRED                   presigned URL past its expiry or dated more than 15 minutes
 *                             ahead;
 *   INVALID_ACCESS_KEY_ID     unknown key id;
 *   SIGNATURE_DOES_NOT_MATCH  wrong signature, or a signed header missing;
 *   INVALID_URI               a bad percent-escape, a path or query over its cap;
 *   INTERNAL                  out of memory.
 * out is always filled (msg says why on error); call ztd_s3_auth_clear() when done with it.
 */
ztd_s3err ztd_sigv4_verify(const ztd_s3_request *req, const ztd_s3_keys *keys, ztd_s3_auth *out);

/* Wipe out (the signing key included). */
void ztd_s3_auth_clear(ztd_s3_auth *a);

#endif
