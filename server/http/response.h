/*
 * Responses: queueing one (with the headers every response carries and what
 * the access log needs), JSON bodies, and errors from the table in errors.h
 * as {"error": {"code": ..., "message": ...}}.
 *
 * A response queued while the request body is being read, or before a body
 * the client sends regardless, is held back by ztd_queue and sent once the
 * body has been read (docs/internals/request.md).
 */
#ifndef ZTD_RESPONSE_H
#define ZTD_RESPONSE_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/errors.h"
#include "http/request.h"

/* Queue resp (consumed, NULL: MHD_NO), recording status and body size for
 * the access log and metrics. It gets X-Request-Id when r->send_request_id or
 * status >= 400 (request_id_header). */
enum MHD_Result ztd_queue(struct MHD_Connection *c, ztd_req *r, unsigned status,
                          struct MHD_Response *resp, uint64_t body_len);
/* A response shared by many requests (built once, kept by its owner, who
 * destroys it): it carries no per-request header, so it may answer r only when
 * ztd_req_can_share(r) (no X-Request-Id to send, not held back). Its owner adds
 * the Server header with ztd_response_server_header(). resp stays the
 * caller's; libmicrohttpd takes a reference of its own while it sends. */
bool ztd_req_can_share(const ztd_req *r);
enum MHD_Result ztd_queue_shared(struct MHD_Connection *c, ztd_req *r, unsigned status,
                                 struct MHD_Response *resp, uint64_t body_len);
bool ztd_response_server_header(struct MHD_Response *resp); /* false: out of memory */
/* A response for a body of n bytes from malloc(), which it frees (at once
 * when it cannot be made: NULL, which ztd_queue answers with MHD_NO), with its
 * Content-Type. */
struct MHD_Response *ztd_response_owned(char *body, size_t n, const char *content_type);
/* A body of len bytes that rd produces from cls, read in blocks of up to
 * `block` bytes; fr(cls) runs when the response is destroyed, or at once when
 * it cannot be made (NULL). */
struct MHD_Response *ztd_reader_response(uint64_t len, size_t block, MHD_ContentReaderCallback rd,
                                         void *cls, MHD_ContentReaderFreeCallback fr);
/* The response to a HEAD for a body of len bytes: it never reads (libmicrohttpd
 * sends the headers only). */
struct MHD_Response *ztd_head_response(uint64_t len);
/* A JSON body. copy = 0: `json` must outlive the response. */
enum MHD_Result ztd_json(struct MHD_Connection *c, ztd_req *r, unsigned status, const char *json,
                         size_t len, int copy);

/* Error e with its default message; logged at info (5xx at error). */
enum MHD_Result ztd_fail(struct MHD_Connection *c, ztd_req *r, ztd_err e);
/* Error e with a message of the caller's. */
enum MHD_Result ztd_error(struct MHD_Connection *c, ztd_req *r, ztd_err e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same, plus one header (Allow, Content-Range, WWW-Authenticate, Connection).
 * Retry-After comes from the table. */
enum MHD_Result ztd_error_hdr(struct MHD_Connection *c, ztd_req *r, ztd_err e, const char *hname,
                              const char *hval, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* A request header's value, or NULL. */
const char *ztd_header(struct MHD_Connection *c, const char *name);
/* Header `name` as RFC 9110 §5.3 reads several field lines of it: their values joined by
 * ", " (for list fields such as If-Match, one list; for others, an invalid value). NULL if
 * absent. When there were several lines, *owned gets the joined text: free it (else NULL). */
const char *ztd_header_all(struct MHD_Connection *c, const char *name, char **owned);
/* The same, the joined text kept by the request until it ends (for the list
 * headers a deferred job reads: If-Match, If-None-Match). */
const char *ztd_header_list(struct MHD_Connection *c, ztd_req *r, const char *name);

/* 200 (replaced) or 201 for a write that published rel: ETag, Location and a
 * JSON body {"name", "size", "objects", "etag", "replaced"}. */
enum MHD_Result ztd_published_answer(struct MHD_Connection *c, ztd_req *r, const char *rel,
                                     uint64_t size, size_t objects, const char *etag,
                                     bool replaced);

#endif
