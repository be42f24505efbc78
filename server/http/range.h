/*
 * range.h: conditional requests and byte ranges (RFC 9110 §13, §14) as pure functions.
 *
 * The HTTP layer copies the relevant request headers into a ztd_request_headers, describes
 * the selected representation with a ztd_validators, and ztd_plan_request() says what to
 * answer: 200 with the whole body, 206 with a list of spans, 304, 412 or 416. Nothing here
 * touches a socket, a file or the clock, so the unit tests and fuzzers reach every branch.
 *
 * Evaluation order (RFC 9110 §13.2.2), first match wins:
 *   1. If-Match present: 412 unless it matches (strong comparison; "*" matches any existing
 *      representation). A malformed list never matches.
 *   2. Else If-Unmodified-Since present and parseable: 412 if last_modified > date. Ignored if
 *      the date does not parse or last_modified is unknown.
 *   3. If-None-Match present: if it matches (weak comparison; "*" matches any existing
 *      representation): 304 for GET/HEAD, 412 for any other method.
 *   4. Else, GET/HEAD only, If-Modified-Since present and parseable: 304 if
 *      last_modified <= date. Ignored if unparseable or last_modified unknown. (RFC 9110 also
 *      says to ignore a date in the future; these functions have no clock, so the server
 *      decides that before filling the header in, if it cares.)
 *   5. GET/HEAD with a Range header and a representation that exists:
 *      a. If-Range present: Range is honoured only if If-Range is a strong entity-tag equal
 *         byte for byte to the current strong ETag, or an HTTP-date equal to last_modified.
 *         Anything else (weak tag, other tag, other date, garbage) means 200 full.
 *      b. Range parsed by ztd_parse_range(): OK gives 206; UNSATISFIABLE gives 416 (the server
 *         sends the unsatisfied Content-Range, see ztd_content_range()); every IGNORE_*
 *         result gives 200 full.
 *      c. A zero-length representation always gets 200 full: no range can be satisfied, and
 *         RFC 9110 lets a server ignore Range, which is friendlier than 416 (nginx does the
 *         same for "bytes=0-" and suffix ranges).
 *   6. Otherwise 200 full.
 * HEAD is planned exactly like GET; the server drops the body.
 *
 * Range syntax (RFC 9110 §14.1.1), as accepted here:
 *   "bytes" (any case) "=" then a comma-separated list of "a-b", "a-" or "-n" with optional
 *   spaces/tabs around the commas and at both ends. Numbers are ASCII digits only (no sign),
 *   leading zeros allowed, any number of digits: a value above UINT64_MAX is past the end of
 *   any representation, so "a-HUGE" means "a to the end", "-HUGE" the whole representation and
 *   "HUGE-" or "HUGE-HUGE" is unsatisfiable (RFC 9110 §14.1.1; nginx answers 416 to all of
 *   them, which refuses a valid "to the end" range). Empty list elements
 *   ("0-1,,2-3") are skipped, but at least one spec is required. No whitespace inside a spec.
 *   A syntactically invalid header (other unit, garbage, a-b with b < a) is IGNORED as a whole
 *   (200 full), which RFC 9110 §14.2 allows. (nginx ignores an unknown unit but answers 416 to
 *   garbage after "bytes="; ignoring is the safer reading for a syntax error.)
 * Satisfiability: "a-b" and "a-" need a < length (b is clamped to length-1); "-n" with n > 0
 *   selects the last min(n, length) bytes; "-0" is unsatisfiable. Unsatisfiable specs are
 *   dropped; if none is left the answer is 416.
 * Multiple ranges are kept in the client's order and never merged or sorted (as nginx). The
 *   request is answered 200 full instead if more than max_parts satisfiable ranges are asked
 *   for, or if the lengths of the selected spans add up to more than the representation
 *   (overlapping ranges used to amplify the response, as nginx does).
 */
#ifndef ZTD_RANGE_H
#define ZTD_RANGE_H

#include <stddef.h>
#include <stdint.h>

#include "core/dates.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Hard upper bound on spans in a plan; max_parts arguments above it are clamped to it. */
#define ZTD_MAX_RANGES 64

/* last_modified value meaning "this representation has no modification date". */
#define ZTD_TIME_UNKNOWN INT64_MIN

/* One selected byte span: bytes [start, start + len). len > 0 and start + len <= length. */
typedef struct ztd_span {
    uint64_t start;
    uint64_t len;
} ztd_span;

/* What the server knows about the selected representation. The pointers are borrowed. */
typedef struct ztd_validators {
    /* Current entity-tag including its quotes, e.g. "\"sha256:ab12\"", or "W/\"...\"" for a
     * weak one; NULL if the representation has no ETag. */
    const char *etag;
    /* Last-Modified as Unix seconds, or ZTD_TIME_UNKNOWN. */
    int64_t last_modified;
} ztd_validators;

/* Request header values as received (NUL-terminated, not necessarily trimmed); NULL means the
 * header is absent. The pointers are borrowed for the duration of the call only. */
typedef struct ztd_request_headers {
    const char *range;
    const char *if_range;
    const char *if_match;
    const char *if_none_match;
    const char *if_modified_since;
    const char *if_unmodified_since;
    int is_get_or_head; /* nonzero for GET and HEAD, zero for PUT, DELETE, POST, ... */
} ztd_request_headers;

typedef enum ztd_plan_status {
    ZTD_PLAN_FULL = 200,
    ZTD_PLAN_PARTIAL = 206,
    ZTD_PLAN_NOT_MODIFIED = 304,
    ZTD_PLAN_PRECONDITION_FAILED = 412,
    ZTD_PLAN_UNSATISFIABLE = 416
} ztd_plan_status;

/* Outcome of parsing a Range header value. Every IGNORE_* outcome means "serve 200 full". */
typedef enum ztd_range_result {
    ZTD_RANGE_OK = 0,               /* spans filled in, at least one */
    ZTD_RANGE_ABSENT = 1,           /* no Range considered (absent, not GET/HEAD, length 0,
                                       no representation, or a 304/412); plan only */
    ZTD_RANGE_IGNORE_SYNTAX = 2,    /* not a valid bytes range-set */
    ZTD_RANGE_IGNORE_TOO_MANY = 3,  /* more than max_parts satisfiable ranges */
    ZTD_RANGE_IGNORE_TOO_LARGE = 4, /* span lengths add up to more than the length */
    ZTD_RANGE_UNSATISFIABLE = 5,    /* valid, but no range overlaps the representation */
    ZTD_RANGE_IGNORE_IF_RANGE = 6   /* If-Range did not hold; plan only */
} ztd_range_result;

typedef struct ztd_plan {
    ztd_plan_status status;
    ztd_range_result range; /* why Range was or was not used, for logs and metrics */
    size_t nspans;          /* > 0 only for ZTD_PLAN_PARTIAL */
    ztd_span spans[ZTD_MAX_RANGES];
} ztd_plan;

/*
 * Decide the response to a request, following the order at the top of this file.
 * v == NULL means the target has no current representation (e.g. a PUT that would create a
 * file): If-Match then fails, "*" in If-None-Match does not match, and Range is not used.
 * length is the full representation length. max_parts caps the number of ranges (0 disables
 * ranges entirely; values above ZTD_MAX_RANGES are clamped). out->status, out->range and
 * out->nspans are always written, spans[0..nspans) only for 206; the status is also returned.
 * Never fails.
 */
ztd_plan_status ztd_plan_request(const ztd_request_headers *h, const ztd_validators *v,
                                 uint64_t length, unsigned max_parts, ztd_plan *out);

/*
 * Parse a Range header value against a representation of `length` bytes. On ZTD_RANGE_OK,
 * spans[0..*n) holds the satisfiable ranges in request order (spans must have room for
 * min(max_parts, ZTD_MAX_RANGES) entries); otherwise *n is 0. Never returns ZTD_RANGE_ABSENT.
 * When several outcomes apply, the first in this list wins: IGNORE_SYNTAX, IGNORE_TOO_MANY,
 * UNSATISFIABLE, IGNORE_TOO_LARGE. With max_parts == 0 any satisfiable range is TOO_MANY.
 */
ztd_range_result ztd_parse_range(const char *value, uint64_t length, unsigned max_parts,
                                 ztd_span *spans, size_t *n);

/* A buffer this large always holds a Content-Range value with its NUL ("bytes " and three
 * 20-digit numbers need 68 bytes). */
#define ZTD_CONTENT_RANGE_MAX 80

/* Write "bytes a-b/total" for span into buf, or for span == NULL the 416 form: "bytes *"
 * immediately followed by "/total". snprintf semantics: returns the length it needs and writes
 * at most cap bytes including the NUL (buf may be NULL when cap is 0). */
size_t ztd_content_range(char *buf, size_t cap, const ztd_span *span, uint64_t total);

/*
 * A PARTIAL plan with one span is sent as a plain 206 with Content-Range (ztd_content_range);
 * with several spans as multipart/byteranges, laid out like nginx:
 *   for each span:  "\r\n--B\r\nContent-Type: T\r\nContent-Range: bytes a-b/total\r\n\r\n" data
 *   then:           "\r\n--B--\r\n"
 * The leading CRLF is valid MIME: RFC 2046 §5.1.1 defines the delimiter as CRLF "--" B. The
 * response header is "Content-Type: multipart/byteranges; boundary=B".
 */

/* Derive a boundary (at most 39 characters plus NUL, only [0-9a-z-]) from seed. The server
 * should pass a random seed: the boundary must not occur in the data, and 64 random bits make
 * that negligible. */
void ztd_multipart_boundary(char out[40], uint64_t seed);

/* Part header for bytes [start, end_incl] of total. content_type may be NULL to leave out
 * the Content-Type line. snprintf semantics as ztd_content_range(). */
size_t ztd_multipart_part_header(char *buf, size_t cap, const char *boundary,
                                 const char *content_type, uint64_t start, uint64_t end_incl,
                                 uint64_t total);

/* Closing delimiter "\r\n--B--\r\n". snprintf semantics. */
size_t ztd_multipart_trailer(char *buf, size_t cap, const char *boundary);

/* Exact Content-Length of the multipart body for plan's spans (part headers, data and the
 * trailer), given the same boundary and content_type that will be used to write it; 0 when
 * the plan has no spans. */
uint64_t ztd_multipart_length(const ztd_plan *plan, const char *boundary, const char *content_type,
                              uint64_t total);

#ifdef __cplusplus
}
#endif

#endif /* ZTD_RANGE_H */
