/*
 * router.h: request method + raw URL path -> route and decoded, validated names.
 *
 * A pure function over two strings, so the traversal rules are unit-tested and fuzzed without
 * a socket. The path must be the raw, still percent-encoded path, without the query string:
 * libmicrohttpd decodes the path it hands to the access handler by default, so the server
 * must take the raw URI (e.g. from MHD_OPTION_URI_LOG_CALLBACK) or install a no-op
 * MHD_OPTION_UNESCAPE_CALLBACK (which then also leaves query arguments encoded).
 *
 * Routes (HEAD is accepted wherever GET is, RFC 9110 §9.1):
 *   GET|HEAD /healthz                                       HEALTHZ
 *   GET|HEAD /readyz                                        READYZ
 *   GET|HEAD /metrics                                       METRICS
 *   GET|HEAD /v1/files                                      LIST
 *   GET|HEAD /v1/files/{file}                               MANIFEST
 *   PUT      /v1/files/{file}                               PUT_FILE
 *   DELETE   /v1/files/{file}                               DELETE_FILE
 *   GET|HEAD /v1/files/{file}/raw                           RAW
 *   GET|HEAD /v1/files/{file}/safetensors                   VIEW
 *   GET|HEAD /v1/files/{file}/objects/{object}              OBJECT
 *   GET|HEAD /v1/files/{file}/objects/{object}/{component}  COMPONENT
 *   GET|HEAD /v1/blobs/sha256:{64 hex}                      BLOB
 *   POST     /v1/uploads                                    UPLOAD_NEW
 *   GET|HEAD /v1/uploads/{id}                               UPLOAD_STATUS
 *   DELETE   /v1/uploads/{id}                               UPLOAD_ABORT
 *   PUT      /v1/uploads/{id}/components/{key}              UPLOAD_COMPONENT
 *   POST     /v1/uploads/{id}/commit                        UPLOAD_COMMIT
 *   POST     /v1/prefetch                                   PREFETCH
 *   GET|HEAD /v1/prefetch                                   PREFETCH_STATUS
 *   GET|HEAD|POST /hf, /hf/...                              HF: the Hugging Face front parses
 *                                                           the rest of the raw path itself
 *   GET|HEAD|PUT|POST|DELETE any other path whose first     S3: the S3 front's buckets (path
 *            segment is not v1, hf, healthz, readyz or      style), "/" included; it parses
 *            metrics                                        the raw path itself
 * Literal parts match byte for byte (case-sensitive, not percent-decoded); no trailing slash.
 *
 * {file}: the relative path of a tensor file (.zt, .safetensors or .alt; case-sensitive
 *   extensions) or of a plain file (any other name).
 *   Tensor files: {file} extends from after "/v1/files/" up to and including the FIRST raw
 *   segment (split on a literal '/') whose DECODED text ends with one of those extensions; %2F
 *   inside a segment decodes to '/', so /v1/files/llama%2Fmodel.zt and /v1/files/llama/model.zt
 *   both name "llama/model.zt". What follows must be nothing, /raw, /safetensors,
 *   /objects/{object} or /objects/{object}/{component}; anything else is 404.
 *   Plain files: when NO segment ends with a tensor extension, the whole path is {file}
 *   (MANIFEST, PUT_FILE, DELETE_FILE), except that a last raw segment that is literally "raw"
 *   or "safetensors" (byte for byte, not percent-decoded) after at least one other segment
 *   is the route: /v1/files/NAME/raw is RAW and /v1/files/NAME/safetensors VIEW of NAME.
 *   AMBIGUITY: so a plain file whose last segment is "raw" or "safetensors" inside a directory
 *   (d/raw) is spelt with that segment, or the slash before it, encoded: /v1/files/d/%72aw or
 *   /v1/files/d%2Fraw name "d/raw", and /v1/files/d%2Fraw/raw its bytes. A top-level file named
 *   "raw" is /v1/files/raw (one segment is always the name). Tensor-only routes under a plain
 *   name (/v1/files/config.json/objects/x) route as the plain file "config.json/objects/x";
 *   the handler answers 404 not_a_tensor_file when a leading path is a plain file.
 *   LIMITATION: a directory whose name ends with one of the extensions cannot be spelt with a
 *   literal '/' after it (/v1/files/d.zt/m.zt routes to file "d.zt" and then 404s); it is
 *   reachable only with the slash encoded (/v1/files/d.zt%2Fm.zt). Keep such directories out
 *   of the served tree.
 *   Safety: after decoding, the path is split on '/' and rejected with 400 if it has a leading
 *   '/', an empty segment, a segment that starts with '.' (so ".", ".." and hidden entries
 *   such as the staging directory ".ztensord-staging" are unreachable), a NUL byte, or is not
 *   valid UTF-8. A backslash is an ordinary character. The result never escapes the root.
 * {object}, {component}, {key}: exactly one raw segment each, percent-decoded, non-empty, valid
 *   UTF-8, no NUL; anything else is allowed (encode '/', '?', '#', '%', space, ...). They are
 *   names looked up in a manifest, never file-system paths, so "." and ".." are ordinary.
 * {id}: one segment that decodes to 1-64 characters of [A-Za-z0-9_-] (400 otherwise).
 * Blob digest: one segment that decodes to "sha256:" and 64 hex digits in any case (400
 *   otherwise); returned in lowercase.
 * Percent-decoding: "%" must be followed by two hex digits (400 otherwise); '+' stays '+'.
 *   Raw control characters, space, '?' and '#' in the path are 400.
 *
 * Result, in this order of checks:
 *   414 URI_TOO_LONG        the raw path is longer than ZTD_PATH_MAX bytes
 *   400 BAD_REQUEST         not starting with '/', bad character or percent-encoding, or a
 *                           name rejected by the rules above (message says which)
 *   404 NOT_FOUND           no route has this path
 *   405 METHOD_NOT_ALLOWED  the path exists but not for this method (methods are
 *                           case-sensitive); allow holds the value for the Allow header
 *   0   OK                  route and the names it uses are filled in
 */
#ifndef ZTD_ROUTER_H
#define ZTD_ROUTER_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZTD_PATH_MAX 4096    /* longest raw path accepted, in bytes */
#define ZTD_UPLOAD_ID_MAX 64 /* longest upload id */

/* Every route, once: X(ID, name) gives ZTD_ROUTE_<ID> and the name
 * ztd_route_name() returns (metrics labels, logs). NONE: no route (any
 * non-OK result). */
#define ZTD_ROUTES(X)                                                                              \
    X(NONE, none)                                                                                  \
    X(HEALTHZ, healthz)                                                                            \
    X(READYZ, readyz)                                                                              \
    X(METRICS, metrics)                                                                            \
    X(LIST, list)                                                                                  \
    X(MANIFEST, manifest)                                                                          \
    X(PUT_FILE, put_file)                                                                          \
    X(DELETE_FILE, delete_file)                                                                    \
    X(RAW, raw)                                                                                    \
    X(VIEW, view)                                                                                  \
    X(OBJECT, object)                                                                              \
    X(COMPONENT, component)                                                                        \
    X(BLOB, blob)                                                                                  \
    X(UPLOAD_NEW, upload_new)                                                                      \
    X(UPLOAD_STATUS, upload_status)                                                                \
    X(UPLOAD_ABORT, upload_abort)                                                                  \
    X(UPLOAD_COMPONENT, upload_component)                                                          \
    X(UPLOAD_COMMIT, upload_commit)                                                                \
    X(PREFETCH, prefetch)                                                                          \
    X(PREFETCH_STATUS, prefetch_status)                                                            \
    X(HF, hf)                                                                                      \
    X(S3, s3)

typedef enum ztd_route_id {
#define ZTD__ROUTE_ID(id, name) ZTD_ROUTE_##id,
    ZTD_ROUTES(ZTD__ROUTE_ID)
#undef ZTD__ROUTE_ID
        ZTD_ROUTE_COUNT
} ztd_route_id;

/* Routes from this one on belong to fronts that parse their own paths (HF,
 * S3): the /v1 table has no rows for them; main.c adds each front's row. */
#define ZTD_ROUTE_FIRST_FRONT ZTD_ROUTE_HF

/* Numbered as the HTTP status to answer with, except OK. */
typedef enum ztd_route_status {
    ZTD_ROUTE_OK = 0,
    ZTD_ROUTE_BAD_REQUEST = 400,
    ZTD_ROUTE_NOT_FOUND = 404,
    ZTD_ROUTE_METHOD_NOT_ALLOWED = 405,
    ZTD_ROUTE_URI_TOO_LONG = 414
} ztd_route_status;

/*
 * Filled in by ztd_route(). The names are NUL-terminated copies owned by this struct (it is
 * about 16 KiB: allocate it with the request, or keep it off small stacks). Fields a route
 * does not use are empty strings with length 0.
 */
typedef struct ztd_route_match {
    ztd_route_status status;
    ztd_route_id route;  /* ZTD_ROUTE_NONE unless status is OK */
    const char *allow;   /* static string, e.g. "GET, HEAD, PUT, DELETE", for OK and 405;
                            NULL otherwise */
    const char *message; /* static string saying what is wrong; NULL when OK */

    char file[ZTD_PATH_MAX + 1]; /* decoded relative path, e.g. "llama/model.zt" */
    size_t file_len;
    char object[ZTD_PATH_MAX + 1];
    size_t object_len;
    char component[ZTD_PATH_MAX + 1];
    size_t component_len;
    char upload_id[ZTD_UPLOAD_ID_MAX + 1];
    size_t upload_id_len;
    char key[ZTD_PATH_MAX + 1]; /* upload component key */
    size_t key_len;
    char blob[65]; /* 64 lowercase hex digits of the sha256 */
} ztd_route_match;

/* Route a request; see the top of this file. method and path are NUL-terminated and borrowed;
 * either being NULL is BAD_REQUEST. out is always written; its status is returned. */
ztd_route_status ztd_route(const char *method, const char *path, ztd_route_match *out);

/* Percent-decode s[0..n) into dst (room for cap bytes plus a NUL); with plus_is_space, '+' is
 * a space (as in a query string). The result may contain NUL bytes, which the callers reject.
 * Returns the decoded length, or -1 on a bad escape or more than cap bytes. */
long ztd_url_decode(const char *s, size_t n, char *dst, size_t cap, bool plus_is_space);

/* Stable lower-case name of a route for metrics labels and logs ("manifest", "component",
 * ...); "none" for ZTD_ROUTE_NONE and for out-of-range values. Static storage. */
const char *ztd_route_name(ztd_route_id route);

#ifdef __cplusplus
}
#endif

#endif /* ZTD_ROUTER_H */
