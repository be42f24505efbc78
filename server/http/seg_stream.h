/*
 * Responses for a span that crosses segments (see seg.h and body.h).
 *
 * When every segment it covers is in memory, a file span or a complete cache
 * item, and it reads at most 256 KiB of files, the span goes out as one iovec
 * over their mappings (sendmsg, no copy in user space). Otherwise a content
 * reader sends the bytes in order through a 256 KiB buffer: file spans by
 * pread, decoded components through their decoder, and cache items as their
 * fills land the bytes. Either way the memory a response holds is bounded,
 * mapped pages included. The reader never sends a response's last
 * byte before every item it covers is complete (its digest checked); a fill
 * or a decoder that fails ends the connection before Content-Length is met,
 * so no client takes a corrupt body for a complete one.
 */
#ifndef ZTD_SEG_STREAM_H
#define ZTD_SEG_STREAM_H

#include <microhttpd.h>

#include "http/decode_stream.h"
#include "store/segment.h"
#include "store/catalog.h"

/* The iovec response for [start, start + len), or NULL when a segment it
 * covers cannot be mapped (a filling item, a decoded one, too many segments,
 * more than 256 KiB of file bytes, a failed mmap): use the reader. The entry is pinned by it. */
struct MHD_Response *ztd_seg_mapped_response(const ztd_body_seg *segs, size_t n, ztd_entry *entry,
                                             uint64_t start, uint64_t len);
/* A content-reader response for [start, start + len) of the representation
 * (HEAD: one that never reads); entry is pinned by it. NULL with f set (a
 * decoder refused: known bad, or no slot), or NULL out of memory. */
struct MHD_Response *ztd_seg_stream_response(const ztd_body_seg *segs, size_t n, ztd_entry *entry,
                                             uint64_t start, uint64_t len, int sock, bool head,
                                             unsigned max_decode_streams, ztd_body_fail *f);

#endif
