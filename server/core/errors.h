/*
 * Every error ztensord answers with, in one table: its HTTP status, its JSON
 * code (stable, for machines) and a default message (for people; callers may
 * say more). A row per (status, code) pair; a code may appear under several
 * statuses (digest_mismatch is 400 for a body, 422 for a stored component,
 * 500 for a blob). docs/API.md's error table lists the same pairs, which
 * tests/server/test_errors.c checks.
 *
 * Also here, so that each is decided once: what a libztensor status means in
 * HTTP terms for what the server was doing, and that a full disk is 507.
 * Pure data and functions: no libmicrohttpd (response.h sends them).
 */
#ifndef ZTD_ERRORS_H
#define ZTD_ERRORS_H

#include <stddef.h>
#include <ztensor/ztensor.h>

/* X(ID, status, code, Retry-After seconds or 0, default message) */
/* clang-format off */
#define ZTD_ERRORS(X) \
    X(BAD_REQUEST, 400, "bad_request", 0,                                                          \
      "bad request")                                                                               \
    X(BAD_JSON, 400, "bad_json", 0,                                                                \
      "the body must be a JSON object")                                                            \
    X(BAD_NAME, 400, "bad_name", 0,                                                                \
      "only .zt files and plain files can be uploaded")                                            \
    X(BAD_DIGEST_HEADER, 400, "bad_digest_header", 0,                                              \
      "Content-Digest/Repr-Digest must be like sha-256=:<base64>:")                                \
    X(BODY_DIGEST_MISMATCH, 400, "digest_mismatch", 0,                                             \
      "the body does not match its Content-Digest/Repr-Digest")                                    \
    X(TOKEN_MISSING, 401, "unauthorized", 0,                                                       \
      "a bearer token is required")                                                                \
    X(TOKEN_UNKNOWN, 401, "unauthorized", 0,                                                       \
      "unknown bearer token")                                                                      \
    X(FORBIDDEN, 403, "forbidden", 0,                                                              \
      "this token may not do this")                                                                \
    X(WRITES_DISABLED, 403, "writes_disabled", 0,                                                  \
      "writes need a token: set tokens_file (or allow_anonymous_writes)")                          \
    X(NOT_FOUND, 404, "not_found", 0,                                                              \
      "no such endpoint")                                                                          \
    X(FILE_NOT_FOUND, 404, "file_not_found", 0,                                                    \
      "no such file")                                                                              \
    X(FILE_INVALID, 404, "file_invalid", 0,                                                        \
      "the file is not served")                                                                    \
    X(OBJECT_NOT_FOUND, 404, "object_not_found", 0,                                                \
      "no such object")                                                                            \
    X(COMPONENT_NOT_FOUND, 404, "component_not_found", 0,                                          \
      "no such component")                                                                         \
    X(NOT_A_TENSOR_FILE, 404, "not_a_tensor_file", 0,                                              \
      "a plain file has no objects, components or safetensors view")                               \
    X(BLOB_NOT_FOUND, 404, "blob_not_found", 0,                                                    \
      "no component has this digest")                                                              \
    X(NO_UPSTREAM, 404, "no_upstream", 0,                                                          \
      "this server has no upstream: prefetch is for --upstream")                                   \
    X(UPLOAD_NOT_FOUND, 404, "upload_not_found", 0,                                                \
      "no such upload session")                                                                    \
    X(METHOD_NOT_ALLOWED, 405, "method_not_allowed", 0,                                            \
      "method not allowed")                                                                        \
    X(SESSION_BUSY, 409, "session_busy", 0,                                                        \
      "another request is using the upload session")                                               \
    X(COMPONENT_EXISTS, 409, "component_exists", 0,                                                \
      "the component was already uploaded")                                                        \
    X(NAME_CONFLICT, 409, "name_conflict", 0,                                                      \
      "the name (or a directory on its path) exists and is not a file")                            \
    X(PRECONDITION_FAILED, 412, "precondition_failed", 0,                                          \
      "a precondition does not hold")                                                              \
    X(TOO_LARGE, 413, "too_large", 0,                                                              \
      "the request body is too large")                                                             \
    X(TOO_MANY_COMPONENTS, 413, "too_many_components", 0,                                          \
      "the session has max_session_components components")                                         \
    X(URI_TOO_LONG, 414, "uri_too_long", 0,                                                        \
      "path too long")                                                                             \
    X(RANGE_NOT_SATISFIABLE, 416, "range_not_satisfiable", 0,                                      \
      "no requested range overlaps the representation")                                            \
    X(INVALID_FILE, 422, "invalid_file", 0,                                                        \
      "the uploaded file is not valid")                                                            \
    X(FILE_DIGEST_MISMATCH, 422, "digest_mismatch", 0,                                             \
      "a component's stored bytes do not hash to its manifest digest")                             \
    X(INVALID_OBJECTS, 422, "invalid_objects", 0,                                                  \
      "the objects do not fit the components")                                                     \
    X(VIEW_UNSUPPORTED, 422, "view_unsupported", 0,                                                \
      "the file cannot be expressed as safetensors")                                               \
    X(BLOB_DIGEST_MISMATCH, 500, "digest_mismatch", 0,                                             \
      "the stored bytes hash to something else than the digest")                                   \
    X(INTERNAL, 500, "internal", 0,                                                                \
      "out of memory")                                                                             \
    X(COMPONENT_CORRUPT, 500, "component_corrupt", 0,                                              \
      "the component cannot be decoded")                                                           \
    X(COMPONENT_WINDOW_TOO_LARGE, 500, "component_window_too_large", 0,                            \
      "the component's zstd window is too large to decode")                                        \
    X(STAGING_FAILED, 500, "staging_failed", 0,                                                    \
      "cannot create a staging file")                                                              \
    X(WRITE_FAILED, 500, "write_failed", 0,                                                        \
      "writing the staging file failed")                                                           \
    X(STAGING_LOST, 500, "staging_lost", 0,                                                        \
      "the server lost the uploaded bytes; nothing was published: upload again")                   \
    X(PUBLISH_FAILED, 500, "publish_failed", 0,                                                    \
      "the file could not be published")                                                           \
    X(DELETE_FAILED, 500, "delete_failed", 0,                                                      \
      "the file could not be removed")                                                             \
    X(ENCODING_UNSUPPORTED, 501, "encoding_unsupported", 0,                                        \
      "the part is stored in an encoding this server cannot decode")                               \
    X(NOT_IMPLEMENTED, 501, "not_implemented", 0,                                                  \
      "not implemented")                                                                           \
    X(UPSTREAM_UNSUPPORTED, 501, "upstream_unsupported", 0,                                        \
      "this representation of an upstream file is not served through the cache")                   \
    X(UPSTREAM_FAILED, 502, "upstream_failed", 0,                                                  \
      "the upstream could not be reached or answered wrongly")                                     \
    X(NOT_READY, 503, "not_ready", 0,                                                              \
      "the first catalog scan has not finished")                                                   \
    X(DRAINING, 503, "draining", 0,                                                                \
      "shutting down")                                                                             \
    X(FILE_CHANGED, 503, "file_changed", 1,                                                        \
      "the file changed on disk since it was opened; retry once it has been rescanned")            \
    X(OVERLOADED, 503, "overloaded", 1,                                                            \
      "the server is at its connection limit; only /healthz, /readyz and /metrics are answered")   \
    X(FILE_UNAVAILABLE, 503, "file_unavailable", 0,                                                \
      "the file cannot be opened now")                                                             \
    X(TOO_MANY_UPLOADS, 503, "too_many_uploads", 1,                                                \
      "max_uploads uploads are already running")                                                   \
    X(UPLOADS_DISABLED, 503, "uploads_disabled", 0,                                                \
      "uploads are disabled: the staging directory cannot be created")                             \
    X(PUBLISH_BUSY, 503, "publish_busy", 1,                                                        \
      "another ztensord on this root held the publication lock")                                   \
    X(SHARD_UNAVAILABLE, 503, "shard_unavailable", 0,                                              \
      "a zTensor v2 part's shard file is missing, wrong or outside the root")                      \
    X(TOO_MANY_DECODERS, 503, "too_many_decoders", 1,                                              \
      "max_decode_streams zstd components are being decoded already")                              \
    X(UPSTREAM_TIMEOUT, 504, "upstream_timeout", 0,                                                \
      "the upstream did not answer in time")                                                       \
    X(INSUFFICIENT_STORAGE, 507, "insufficient_storage", 0,                                        \
      "not enough free disk")                                                                      \
    X(CACHE_FULL, 507, "cache_full", 0,                                                            \
      "the upstream cache cannot make room: everything in it is being sent")
/* clang-format on */

typedef enum ztd_err {
    ZTD_ERR_NONE = 0, /* no error: not a row of the table */
#define ZTD__ERR_ENUM(id, status, code, retry, message) ZTD_ERR_##id,
    ZTD_ERRORS(ZTD__ERR_ENUM)
#undef ZTD__ERR_ENUM
        ZTD_ERR_COUNT
} ztd_err;

/* A row's columns. Static strings; for ZTD_ERR_NONE and out-of-range values:
 * status 0, code and message "". */
unsigned ztd_err_status(ztd_err e);
const char *ztd_err_code(ztd_err e);
const char *ztd_err_message(ztd_err e);
/* Seconds for a Retry-After header, 0 for none. */
unsigned ztd_err_retry_after(ztd_err e);

/* How loud an answer with e is in the error log (a ztd_log_level): a fault of
 * the server (most 5xx) is an error; a client's mistake (4xx), and a refusal the
 * server makes by design (503 not_ready during the first scan, draining, load
 * shedding: overloaded, too_many_decoders, too_many_uploads, publish_busy), is
 * not. The refusals go at debug: an orchestrator probing /readyz every second,
 * or a client retrying under load, must not fill the log at the default level;
 * /metrics counts every answer by code (ztensord_errors_total). */
int ztd_err_log_level(ztd_err e);

/* e, with a message formatted into msg (cap bytes): for functions that
 * return an error and say why. */
ztd_err ztd_errf(char *msg, size_t cap, ztd_err e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* An errno from writing, creating or publishing a file: a full disk or quota
 * (ENOSPC, EDQUOT) is always 507 insufficient_storage; anything else is
 * `otherwise`. */
ztd_err ztd_err_of_errno(int e, ztd_err otherwise);

/* What the server was doing when libztensor failed: the same status means
 * the client's fault in one case and the server's in another. */
typedef enum ztd_zt_op {
    ZTD_OP_READ,         /* reading or describing a served file: all failures are the server's */
    ZTD_OP_DECODE,       /* decoding a served component for a response */
    ZTD_OP_WRITE,        /* writing an upload session's component */
    ZTD_OP_OBJECTS,      /* adding a session's objects and writing its manifest */
    ZTD_OP_CHECK_UPLOAD, /* validating an uploaded file before publishing it */
} ztd_zt_op;

/* The error for libztensor status st (not ZT_OK) during op. Out of memory is
 * always 500 internal and a full disk 507 insufficient_storage; the rest is
 * listed in errors.c, one case per operation. */
ztd_err ztd_err_of_zt(zt_status st, ztd_zt_op op);

#endif
