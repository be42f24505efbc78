/*
 * Byte responses from the upstream cache (ZTD_BODY_CACHE, see body.h): a
 * span of complete items goes out like a file span (sendfile); anything
 * else by a content reader that sends bytes as the fills land them, and
 * never sends a response's last byte before every item it covers is
 * complete (its digest checked). A fill that fails cuts the response short,
 * so no client takes a corrupt body for a complete one.
 */
#ifndef ZTD_BODY_UPSTREAM_H
#define ZTD_BODY_UPSTREAM_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "upstream/items.h"
#include "store/catalog.h"

/* One piece of a representation, in order: bytes of a cache item
 * (upstream/items.h; complete, or still filling) or bytes in memory. */
typedef struct ztd_body_seg {
    uint64_t len;
    ztd_cache_item *item; /* [item_off, item_off + len) of it; held by the caller's pin */
    uint64_t item_off;
    const uint8_t *mem; /* or len bytes here, alive while the pin is */
} ztd_body_seg;

/* When [*start, *start + len) of the representation lies in one complete
 * item: true, with *fd (the item's, not to be closed), *off and *seg_len (the
 * segment's place in it) set and *start made relative to the segment. */
bool ztd_cache_span_in_item(const ztd_body_seg *segs, size_t n, uint64_t *start, uint64_t len,
                            int *fd, uint64_t *off, uint64_t *seg_len);
/* A response for [start, start + len) when every item it covers is complete:
 * their mappings and the bytes between them as one iovec (sendmsg). NULL
 * when an item is not complete (or a mapping fails): use the reader. */
struct MHD_Response *ztd_cache_mapped_response(const ztd_body_seg *segs, size_t n, ztd_entry *entry,
                                               uint64_t start, uint64_t len);
/* A content-reader response for [start, start + len) of the representation
 * (HEAD: one that never reads); entry is pinned by it. NULL when out of
 * memory. */
struct MHD_Response *ztd_cache_stream_response(const ztd_body_seg *segs, size_t n, ztd_entry *entry,
                                               uint64_t start, uint64_t len, int sock, bool head);

#endif
