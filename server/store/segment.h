/*
 * A body segment: one piece of a representation, in order (http/body.h). A
 * component is one segment; an upstream file's /raw is cache items and the
 * bytes between them; a safetensors view is its header in memory, then each
 * tensor as a file span or a decoded stream.
 */
#ifndef ZTD_SEGMENT_H
#define ZTD_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ztensor/ztensor.h>

struct ztd_cache_item; /* upstream/items.h: the store knows it only as a pointer */

typedef enum ztd_seg_kind {
    ZTD_SEG_MEM,   /* len bytes at mem, alive while the request's pin is */
    ZTD_SEG_FILE,  /* [off, off + len) of fd, alive while the pin is */
    ZTD_SEG_ITEM,  /* [off, off + len) of a cache item (complete, or filling) */
    ZTD_SEG_DECODE /* component zc of zf decoded: its decoded bytes [0, len) */
} ztd_seg_kind;

typedef struct ztd_body_seg {
    ztd_seg_kind kind;
    uint64_t len;
    const uint8_t *mem;
    int fd; /* FILE; DECODE with stored_at_fd: the stored bytes are at off in fd */
    uint64_t off;
    struct ztd_cache_item *item; /* held by the caller's pin */
    const zt_file *zf;
    const zt_component *zc;
    bool stored_at_fd; /* DECODE: read the stored bytes from fd (a complete
                          cache item), not from zf (opened from its manifest alone) */
    bool immutable;    /* FILE: a complete cache item's file, which never changes */
} ztd_body_seg;

static inline ztd_body_seg ztd_seg_mem(const void *p, uint64_t len)
{
    return (ztd_body_seg){.kind = ZTD_SEG_MEM, .len = len, .mem = p, .fd = -1};
}

static inline ztd_body_seg ztd_seg_file(int fd, uint64_t off, uint64_t len)
{
    return (ztd_body_seg){.kind = ZTD_SEG_FILE, .len = len, .fd = fd, .off = off};
}

static inline ztd_body_seg ztd_seg_item(struct ztd_cache_item *it, uint64_t off, uint64_t len)
{
    return (ztd_body_seg){.kind = ZTD_SEG_ITEM, .len = len, .item = it, .off = off, .fd = -1};
}

static inline ztd_body_seg ztd_seg_decode(const zt_file *zf, const zt_component *zc)
{
    return (ztd_body_seg){.kind = ZTD_SEG_DECODE,
                          .len = zt_component_decoded_length(zc),
                          .zf = zf,
                          .zc = zc,
                          .fd = -1};
}

/* The segment that holds byte `at` of the representation (the last one when
 * at is past the end), and in *seg_at where it begins. */
size_t ztd_seg_find(const ztd_body_seg *segs, size_t n, uint64_t at, uint64_t *seg_at);

/* Does reading the segment read a catalog file that may change in place
 * (not memory, not a cache item)? */
bool ztd_seg_reads_file(const ztd_body_seg *g);

#endif
