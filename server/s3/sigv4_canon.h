/*
 * SigV4's canonical request, exactly as AWS S3 defines it, from a request as
 * it arrived: the raw path and query (percent-decoded, then encoded again
 * the AWS way, so equivalent encodings give one form; S3 does not encode the
 * path twice), the signed headers' values trimmed with inner runs of spaces
 * collapsed and repeats joined by ',', and the hashed payload. Pure; every
 * length is capped.
 */
#ifndef ZTD_SIGV4_CANON_H
#define ZTD_SIGV4_CANON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3/s3err.h"

#define ZTD_SIGV4_MAX_HEADERS 256     /* headers in a request */
#define ZTD_SIGV4_MAX_SIGNED 64       /* names in SignedHeaders */
#define ZTD_SIGV4_MAX_HEADER_NAME 128 /* one header name */
#define ZTD_SIGV4_MAX_VALUE 16384     /* one header value */
#define ZTD_SIGV4_MAX_PATH 8192       /* the raw path */
#define ZTD_SIGV4_MAX_QUERY 16384     /* the raw query string */
#define ZTD_SIGV4_MAX_PARAMS 256      /* query parameters */
#define ZTD_SIGV4_MAX_CANONICAL (1u << 20)

/* One request header as received; both strings NUL-terminated, the name in any case. */
typedef struct ztd_s3_header {
    const char *name;
    const char *value;
} ztd_s3_header;

/* A request as the verifier sees it. Nothing here is owned by the verifier. Under
 * libmicrohttpd with the server's keep_escaped unescape callback (http/http.c), the url the
 * handler gets is the raw path, and the raw query can be rebuilt from the GET arguments as
 * "name=value" (or "name" when the value is NULL) joined by '&', in any order: the canonical
 * form sorts them. */
typedef struct ztd_s3_request {
    const char *method;           /* "GET", "PUT", ... as sent */
    const char *path;             /* raw, percent-encoded, without the query; "" means "/" */
    const char *query;            /* raw, without the '?'; NULL or "" when none */
    const ztd_s3_header *headers; /* n_headers of them, repeats allowed */
    size_t n_headers;
    int64_t now; /* Unix seconds */
} ztd_s3_request;

/* One query parameter, percent-decoded; malloc'd (owned by its ztd_s3_query). */
typedef struct ztd_s3_param {
    char *name, *value; /* NUL-terminated; a decoded %00 cuts them short in C terms */
    size_t nlen, vlen;
} ztd_s3_param;

typedef struct ztd_s3_query {
    ztd_s3_param *p;
    size_t n;
} ztd_s3_query;

/* Split and decode a raw query ("a=1&b&c=" -> a:"1", b:"", c:""). 0, or an error: INVALID_URI
 * for a bad escape or a query over the caps (msg says which). Free with ztd_s3_query_free
 * either way. */
ztd_s3err ztd_s3_query_parse(const char *raw, ztd_s3_query *q, char *msg, size_t cap);
void ztd_s3_query_free(ztd_s3_query *q);
/* The value of parameter name (exact case), its number of occurrences in *count. */
const char *ztd_s3_query_get(const ztd_s3_query *q, const char *name, size_t *count);

/* The value of header name (any case): the first occurrence, their number in *count. */
const char *ztd_s3_header_get(const ztd_s3_request *req, const char *name, size_t *count);

/*
 * The canonical request: METHOD \n URI \n QUERY \n HEADERS \n \n SIGNED_HEADERS \n PAYLOAD.
 * signed_headers is the ';' list as presented (lowercase names); q the parsed query, from
 * which X-Amz-Signature is left out when presigned. Returns a malloc'd string (caller frees),
 * or NULL with *err and msg: INVALID_URI (bad path escape, path too long), SIGNATURE_DOES_NOT_
 * MATCH (a signed header is absent; msg names it), INTERNAL (out of memory, over the cap).
 */
char *ztd_sigv4_canonical_request(const ztd_s3_request *req, const ztd_s3_query *q,
                                  const char *signed_headers, const char *payload, bool presigned,
                                  ztd_s3err *err, char *msg, size_t cap);

#endif
