/*
 * The S3 error codes that authentication and payload checks produce (SigV4,
 * the keys file, aws-chunked bodies, body checksums), in one X-macro table:
 * the enum, S3's <Code> string and its HTTP status. The S3 front maps them to
 * its XML error bodies. Pure data: no libmicrohttpd.
 */
#ifndef ZTD_S3ERR_H
#define ZTD_S3ERR_H

/* X(ID, status, S3 code) */
/* clang-format off */
#define ZTD_S3ERRS(X)                                                                              \
    X(OK, 200, "OK")                                                                               \
    X(ANONYMOUS, 200, "Anonymous") /* no credentials at all: the front applies its rule */        \
    X(ACCESS_DENIED, 403, "AccessDenied")                                                          \
    X(EXPIRED, 403, "AccessDenied") /* presigned URL past X-Amz-Expires, or not valid yet */       \
    X(INVALID_ACCESS_KEY_ID, 403, "InvalidAccessKeyId")                                            \
    X(SIGNATURE_DOES_NOT_MATCH, 403, "SignatureDoesNotMatch")                                      \
    X(REQUEST_TIME_TOO_SKEWED, 403, "RequestTimeTooSkewed")                                        \
    X(AUTH_HEADER_MALFORMED, 400, "AuthorizationHeaderMalformed")                                  \
    X(AUTH_QUERY_ERROR, 400, "AuthorizationQueryParametersError")                                  \
    X(MISSING_SECURITY_HEADER, 400, "MissingSecurityHeader")                                       \
    X(UNSUPPORTED_AUTH, 400, "InvalidRequest") /* SigV2, another algorithm */                      \
    X(INVALID_ARGUMENT, 400, "InvalidArgument")                                                    \
    X(INVALID_URI, 400, "InvalidURI")                                                              \
    X(CONTENT_SHA256_MISMATCH, 400, "XAmzContentSHA256Mismatch")                                   \
    X(BAD_DIGEST, 400, "BadDigest")                                                                \
    X(INVALID_DIGEST, 400, "InvalidDigest")                                                        \
    X(INCOMPLETE_BODY, 400, "IncompleteBody")                                                      \
    X(INVALID_CHUNK_SIZE, 400, "InvalidChunkSizeError")                                            \
    X(MALFORMED_CHUNK, 400, "InvalidArgument") /* aws-chunked framing */                           \
    X(MALFORMED_TRAILER, 400, "MalformedTrailerError")                                             \
    X(INTERNAL, 500, "InternalError")
/* clang-format on */

typedef enum ztd_s3err {
#define ZTD_S3ERR_ENUM(id, status, code) ZTD_S3E_##id,
    ZTD_S3ERRS(ZTD_S3ERR_ENUM)
#undef ZTD_S3ERR_ENUM
        ZTD_S3E_COUNT_
} ztd_s3err;

/* S3's <Code> for e ("InternalError" for a value out of range); static storage. */
const char *ztd_s3err_code(ztd_s3err e);
/* The HTTP status for e (500 for a value out of range). */
int ztd_s3err_status(ztd_s3err e);
/* The enum's own name ("SIGNATURE_DOES_NOT_MATCH"), for logs and tests; static storage. */
const char *ztd_s3err_name(ztd_s3err e);

#endif
