/*
 * Pure parsers of request headers that are not about ranges or framing
 * (range.h, framing.h): each takes the header's value as sent (NULL when
 * absent) and nothing else, so unit tests and a fuzzer reach every branch
 * (tests/server/test_headers.c, tests/fuzz/fuzz_headers.c).
 */
#ifndef ZTD_HEADERS_H
#define ZTD_HEADERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Accept-Encoding: may the response be zstd-coded? An explicit "zstd" entry
 * decides; otherwise "*" does (RFC 9110 §12.5.3); q=0 means "not acceptable".
 * Absent: false. */
bool ztd_accepts_zstd(const char *accept_encoding);

/* Accept-Encoding: the q value given to `coding` by its own entry,
 * else by "*"; 0 when neither names it or q=0 refuses it. Absent: 0. */
double ztd_accept_q(const char *accept_encoding, const char *coding);

/* A sha-256 digest a client sent for a body. */
typedef struct ztd_digest_want {
    bool present;
    uint8_t sha256[32];
} ztd_digest_want;

/* Content-Digest / Repr-Digest (RFC 9530): a list of "alg=:base64:" members;
 * only sha-256 is used, other algorithms are skipped. 0 with out->present
 * telling whether a sha-256 was given (NULL: not present), or -1 when the
 * list, or its sha-256 member, is malformed. */
int ztd_parse_digest_header(const char *value, ztd_digest_want *out);

/* The longest X-Request-Id taken from a client. */
#define ZTD_REQUEST_ID_MAX 64
/* X-Request-Id: is the client's value one to keep and log? 1 to 64 characters
 * of [A-Za-z0-9-_.:]; anything else is replaced by a random id. */
bool ztd_request_id_valid(const char *value);

#endif
