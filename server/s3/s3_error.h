/*
 * The S3 front's answers in S3's own format: errors as
 * <Error><Code/><Message/><Resource/><RequestId/></Error> with the status
 * S3 gives each code, XML documents for successful answers, and
 * x-amz-request-id (the server's request id, the one in the access log) on
 * every response the front makes.
 */
#ifndef ZTD_S3_ERROR_H
#define ZTD_S3_ERROR_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#include "http/request.h"
#include "s3/s3_xml.h"

/* X(ID, status, S3 code, default message) */
#define ZTD_S3_ERRORS(X)                                                                           \
    X(ACCESS_DENIED, 403, "AccessDenied", "Access Denied")                                         \
    X(BAD_DIGEST, 400, "BadDigest",                                                                \
      "The Content-MD5 or checksum you specified did not match what we received.")                 \
    X(BUCKET_EXISTS, 409, "BucketAlreadyOwnedByYou",                                               \
      "Your previous request to create the named bucket succeeded and you already own it.")        \
    X(CONTENT_SHA256_MISMATCH, 400, "XAmzContentSHA256Mismatch",                                   \
      "The provided 'x-amz-content-sha256' header does not match what was computed.")              \
    X(ENTITY_TOO_LARGE, 400, "EntityTooLarge",                                                     \
      "Your proposed upload exceeds the maximum allowed object size.")                             \
    X(INTERNAL, 500, "InternalError", "We encountered an internal error. Please try again.")       \
    X(INVALID_ARGUMENT, 400, "InvalidArgument", "Invalid Argument")                                \
    X(INVALID_BUCKET_NAME, 400, "InvalidBucketName", "The specified bucket is not valid.")         \
    X(INVALID_DIGEST, 400, "InvalidDigest", "The Content-MD5 you specified is not valid.")         \
    X(INVALID_PART, 400, "InvalidPart",                                                            \
      "One or more of the specified parts could not be found.  The part may not have been "        \
      "uploaded, or the specified entity tag may not match the part's entity tag.")                \
    X(INVALID_PART_ORDER, 400, "InvalidPartOrder",                                                 \
      "The list of parts was not in ascending order. Parts must be ordered by part number.")       \
    X(ENTITY_TOO_SMALL, 400, "EntityTooSmall",                                                     \
      "Your proposed upload is smaller than the minimum allowed object size.")                     \
    X(INVALID_OBJECT, 400, "InvalidObject", "The object's content is not valid for its name.")     \
    X(INVALID_RANGE, 416, "InvalidRange", "The requested range is not satisfiable")                \
    X(INVALID_REQUEST, 400, "InvalidRequest", "Invalid Request")                                   \
    X(KEY_TOO_LONG, 400, "KeyTooLongError", "Your key is too long")                                \
    X(MALFORMED_XML, 400, "MalformedXML",                                                          \
      "The XML you provided was not well-formed or did not validate against our published "        \
      "schema")                                                                                    \
    X(METHOD_NOT_ALLOWED, 405, "MethodNotAllowed",                                                 \
      "The specified method is not allowed against this resource.")                                \
    X(MISSING_LENGTH, 411, "MissingContentLength",                                                 \
      "You must provide the Content-Length HTTP "                                                  \
      "header.")                                                                                   \
    X(NO_SUCH_BUCKET, 404, "NoSuchBucket", "The specified bucket does not exist")                  \
    X(NO_SUCH_KEY, 404, "NoSuchKey", "The specified key does not exist.")                          \
    X(NO_SUCH_UPLOAD, 404, "NoSuchUpload", "The specified upload does not exist.")                 \
    X(NOT_IMPLEMENTED, 501, "NotImplemented",                                                      \
      "A header you provided implies functionality that is not implemented")                       \
    X(PRECONDITION_FAILED, 412, "PreconditionFailed",                                              \
      "At least one of the pre-conditions you specified did not hold")                             \
    X(SERVICE_UNAVAILABLE, 503, "ServiceUnavailable", "Please reduce your request rate.")          \
    X(BAD_GATEWAY, 502, "BadGateway", "The upstream gave no usable answer.")                       \
    X(GATEWAY_TIMEOUT, 504, "GatewayTimeout", "The upstream did not answer in time.")              \
    X(INSUFFICIENT_STORAGE, 507, "InsufficientStorage", "There is not enough room to store it.")   \
    X(INVALID_ACCESS_KEY_ID, 403, "InvalidAccessKeyId",                                            \
      "The AWS Access Key Id you provided does not exist in our records.")                         \
    X(SIGNATURE_DOES_NOT_MATCH, 403, "SignatureDoesNotMatch",                                      \
      "The request signature we calculated does not match the signature you provided.")            \
    X(REQUEST_TIME_TOO_SKEWED, 403, "RequestTimeTooSkewed",                                        \
      "The difference between the request time and the current time is too large.")                \
    X(AUTH_HEADER_MALFORMED, 400, "AuthorizationHeaderMalformed",                                  \
      "The authorization header is malformed.")                                                    \
    X(AUTH_QUERY_ERROR, 400, "AuthorizationQueryParametersError",                                  \
      "The authorization query parameters are malformed.")                                         \
    X(MISSING_SECURITY_HEADER, 400, "MissingSecurityHeader",                                       \
      "Your request was missing a required header.")                                               \
    X(INVALID_URI, 400, "InvalidURI", "Couldn't parse the specified URI.")                         \
    X(INCOMPLETE_BODY, 400, "IncompleteBody",                                                      \
      "You did not provide the number of bytes specified by the Content-Length HTTP header.")      \
    X(INVALID_CHUNK_SIZE, 400, "InvalidChunkSizeError",                                            \
      "Only the last chunk is allowed to have a size less than 8192 bytes")                        \
    X(MALFORMED_TRAILER, 400, "MalformedTrailerError",                                             \
      "The request contained trailing data that was not well-formed.")

typedef enum ztd_s3_err {
#define ZTD__S3_ERR_ID(id, st, code, msg) ZTD_S3_##id,
    ZTD_S3_ERRORS(ZTD__S3_ERR_ID)
#undef ZTD__S3_ERR_ID
        ZTD_S3_ERR_COUNT
} ztd_s3_err;

unsigned ztd_s3_err_status(ztd_s3_err e);
/* The front's error for a code of the pure checks (s3/s3err.h: SigV4,
 * aws-chunked, checksums): the one with the same <Code>; INTERNAL if none. */
ztd_s3_err ztd_s3_err_from(int pure_err);
const char *ztd_s3_err_code(ztd_s3_err e);

/* Queue error e for resource (the request's path) with its default
 * message, or with one of the caller's. Logged at info (5xx at error). */
enum MHD_Result ztd_s3_fail(struct MHD_Connection *c, ztd_req *r, ztd_s3_err e);
enum MHD_Result ztd_s3_error(struct MHD_Connection *c, ztd_req *r, ztd_s3_err e, const char *fmt,
                             ...) __attribute__((format(printf, 4, 5)));
/* The same with one more header (Content-Range for InvalidRange, Allow). */
enum MHD_Result ztd_s3_error_hdr(struct MHD_Connection *c, ztd_req *r, ztd_s3_err e,
                                 const char *hname, const char *hval, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* The S3 form of an error of the layers the fronts share (ztd_req.error_answer):
 * the S3 error of the same status (404 NoSuchKey, 412, 416, 503 ...), the
 * shared layer's message; 502 and 504 keep their status as BadGateway and
 * GatewayTimeout, 422 is InvalidObject. */
enum MHD_Result ztd_s3_shared_error(struct MHD_Connection *c, ztd_req *r, ztd_err e,
                                    const char *msg);
/* Queue the finished document x (consumed) as application/xml. */
enum MHD_Result ztd_s3_xml_answer(struct MHD_Connection *c, ztd_req *r, unsigned status,
                                  ztd_xml *x);
/* An empty answer (204 for deletes, 200 for HEAD of a bucket, PUT results):
 * with one more header when hname is not NULL (an ETag). */
enum MHD_Result ztd_s3_empty_answer(struct MHD_Connection *c, ztd_req *r, unsigned status,
                                    const char *hname, const char *hval);
/* x-amz-request-id for r on resp; false when out of memory. */
bool ztd_s3_request_id(struct MHD_Response *resp, const ztd_req *r);

#endif
