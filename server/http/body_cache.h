/*
 * Byte responses from the upstream cache (ZTD_BODY_CACHE, see body.h): a
 * span of complete items goes out like a file span (sendfile); anything
 * else by a content reader that sends bytes as the fills land them, and
 * never sends a response's last byte before every item it covers is
 * complete (its digest checked). A fill that fails cuts the response short,
 * so no client takes a corrupt body for a complete one.
 */
#ifndef ZTD_BODY_CACHE_H
#define ZTD_BODY_CACHE_H

#include "http/body.h"

/* When [*start, *start + len) of b lies in one complete item: true, with *fd
 * set to a body of kind FD over that item's segment and *start made relative
 * to it (for the FD path: sendfile, or memory for a small span). */
bool ztd_cache_span_as_fd(const ztd_body *b, uint64_t *start, uint64_t len, ztd_body *fd);
/* A content-reader response for [start, start + len) of b (HEAD: one that
 * never reads). NULL when out of memory. */
struct MHD_Response *ztd_cache_stream_response(const ztd_body *b, uint64_t start, uint64_t len,
                                               int sock, bool head);

#endif
