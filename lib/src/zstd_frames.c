/*
 * Checking a zstd component's frame structure without decoding it
 * (zt_component_check_frames): frame headers, block headers and the sizes they
 * declare. A frame cut short, ended early by a misplaced last-block flag, or
 * asking for a window the decoder will refuse is found here before a server
 * has sent a 200 it cannot finish. Bytes are read with pread from a mapped
 * file, as the decoder does, so a file truncated in place is an error and not
 * SIGBUS.
 */
#include "internal.h"

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getFrameHeader, ZSTD_FRAMEHEADERSIZE_MAX */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

typedef struct walk {
    const zt_file *f;
    const struct zt_component *c;
    const char *obj;
    zt_error *err;
    zt__source src; /* where the stored bytes are: the file, or a v2 shard */
    uint64_t base;  /* where they start in src.fd (mapped) */
} walk;

/* A failure at byte `at` of the component (the message gives the file offset). */
#define WFAIL(w, code, at, ...)                                                                    \
    zt__fail((w)->err, (code), (w)->obj, (w)->c->role, 1, (w)->c->offset + (at), __VA_ARGS__)

/* Up to n bytes of the component from `at`; fewer at its end. */
static zt_status get(const walk *w, uint64_t at, uint8_t *dst, size_t n, size_t *got)
{
    uint64_t left = at < w->c->length ? w->c->length - at : 0;
    *got = left < n ? (size_t)left : n;
    if (!*got)
        return ZT_OK;
    if (!w->src.mapped) {
        memcpy(dst, w->src.data + w->c->offset + at, *got);
        return ZT_OK;
    }
    for (;;) {
        ssize_t r = pread(w->src.fd, dst, *got, (off_t)(w->base + at));
        if (r < 0 && errno == EINTR)
            continue;
        if (r == (ssize_t)*got)
            return ZT_OK;
        return WFAIL(w, r < 0 ? ZT_E_IO : ZT_E_TRUNCATED, at, "read: %s",
                     r < 0 ? strerror(errno) : "file shrank while being read");
    }
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The blocks of the frame whose first block header is at *pos: moves *pos past
 * them and adds to *bound the most bytes they can decode to. */
static zt_status walk_blocks(const walk *w, const ZSTD_frameHeader *fh, uint64_t *pos,
                             uint64_t *bound)
{
    for (;;) { /* ends: *pos grows by 3 or more per block, and never past the length */
        uint8_t h[3];
        size_t got;
        zt_status st = get(w, *pos, h, 3, &got);
        if (st)
            return st;
        if (got < 3)
            return WFAIL(w, ZT_E_ZSTD, *pos, "zstd frame is cut off by the component's end");
        uint32_t bh = h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16;
        unsigned type = (bh >> 1) & 3; /* 0 raw, 1 RLE, 2 compressed, 3 reserved */
        uint64_t size = bh >> 3, stored = type == 1 ? 1 : size;
        if (type == 3)
            return WFAIL(w, ZT_E_ZSTD, *pos, "zstd block of the reserved type");
        if (size > fh->blockSizeMax)
            return WFAIL(w, ZT_E_ZSTD, *pos, "zstd block of %llu bytes, over the frame's %u",
                         (unsigned long long)size, fh->blockSizeMax);
        if (stored > w->c->length - *pos - 3)
            return WFAIL(w, ZT_E_ZSTD, *pos,
                         "zstd block of %llu bytes runs past the component's end (%llu left)",
                         (unsigned long long)stored, (unsigned long long)(w->c->length - *pos - 3));
        *pos += 3 + stored;
        *bound += type == 2 ? fh->blockSizeMax : size;
        if (bh & 1)
            return ZT_OK;
    }
}

typedef struct sizes {
    uint64_t bound;    /* the most bytes the frames so far can decode to */
    uint64_t declared; /* sum of their frame content sizes */
    bool all_declared; /* every frame so far has a content size */
} sizes;

/* The frame header at *pos into fh, and *pos past it; a skippable frame is
 * skipped whole (*skippable set). */
static zt_status frame_header(const walk *w, uint64_t *pos, ZSTD_frameHeader *fh, bool *skippable)
{
    uint8_t h[ZSTD_FRAMEHEADERSIZE_MAX];
    size_t got;
    zt_status st = get(w, *pos, h, sizeof(h), &got);
    if (st)
        return st;
    *skippable = got >= 8 && (le32(h) & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START;
    if (*skippable) {
        uint64_t skip = le32(h + 4);
        if (skip > w->c->length - *pos - 8)
            return WFAIL(w, ZT_E_ZSTD, *pos,
                         "skippable frame of %llu bytes runs past the component's end",
                         (unsigned long long)skip);
        *pos += 8 + skip;
        return ZT_OK;
    }
    size_t r = ZSTD_getFrameHeader(fh, h, got);
    if (ZSTD_isError(r) && *pos > 0) /* a frame ended early, or garbage follows */
        return WFAIL(w, ZT_E_ZSTD, *pos,
                     "the %llu bytes after the zstd frame are not a frame (%s): a frame shorter "
                     "than its data, or trailing garbage",
                     (unsigned long long)(w->c->length - *pos), ZSTD_getErrorName(r));
    if (ZSTD_isError(r))
        return WFAIL(w, ZT_E_ZSTD, *pos, "not a zstd frame: %s", ZSTD_getErrorName(r));
    if (r > 0)
        return WFAIL(w, ZT_E_ZSTD, *pos, "zstd frame header is cut off by the component's end");
    if (fh->dictID)
        return WFAIL(w, ZT_E_ZSTD, *pos, "zstd frame needs dictionary %u", fh->dictID);
    if (fh->windowSize > (1ull << ZT_ZSTD_WINDOW_LOG_MAX))
        return WFAIL(w, ZT_E_LIMIT, *pos,
                     "zstd frame needs a %llu-byte window, over the %llu bytes allowed "
                     "(ZT_ZSTD_WINDOW_LOG_MAX)",
                     fh->windowSize, 1ull << ZT_ZSTD_WINDOW_LOG_MAX);
    *pos += fh->headerSize;
    return ZT_OK;
}

/* One frame at *pos (zstd or skippable); moves *pos past it. */
static zt_status walk_frame(const walk *w, uint64_t *pos, sizes *z)
{
    uint64_t at = *pos, frame_bound = 0;
    ZSTD_frameHeader fh;
    bool skippable;
    zt_status st = frame_header(w, pos, &fh, &skippable);
    if (st || skippable)
        return st;
    if ((st = walk_blocks(w, &fh, pos, &frame_bound)))
        return st;
    if (fh.checksumFlag && (*pos += 4) > w->c->length)
        return WFAIL(w, ZT_E_ZSTD, at, "zstd frame's checksum is cut off by the component's end");
    if (fh.frameContentSize != ZSTD_CONTENTSIZE_UNKNOWN) {
        if (fh.frameContentSize > frame_bound)
            return WFAIL(w, ZT_E_SIZE, at,
                         "zstd frame declares %llu bytes but its blocks hold at most %llu",
                         fh.frameContentSize, (unsigned long long)frame_bound);
        z->declared += fh.frameContentSize;
        frame_bound = fh.frameContentSize;
    } else {
        z->all_declared = false;
    }
    z->bound += frame_bound;
    return ZT_OK;
}

static zt_status check_frames(walk *w)
{
    const struct zt_component *c = w->c;
    uint64_t pos = 0, want = c->uncompressed_length;
    sizes z = {0, 0, true};
    while (pos < c->length) { /* ends: each frame moves pos forward by 3 bytes or more */
        zt_status st = walk_frame(w, &pos, &z);
        if (st)
            return st;
    }
    if (c->length == 0) /* skippable frames alone decode to nothing, as the decoder agrees */
        return WFAIL(w, ZT_E_ZSTD, 0, "no zstd frame: the component has no stored bytes");
    if (z.all_declared && z.declared != want)
        return WFAIL(w, ZT_E_SIZE, 0, "zstd frames declare %llu bytes, uncompressed_length is %llu",
                     (unsigned long long)z.declared, (unsigned long long)want);
    if (z.bound < want)
        return WFAIL(w, ZT_E_SIZE, 0,
                     "zstd frames hold at most %llu bytes, fewer than uncompressed_length %llu",
                     (unsigned long long)z.bound, (unsigned long long)want);
    return ZT_OK;
}

zt_status zt_component_check_frames(const zt_file *f, const zt_component *c, zt_error *err)
{
    if (c->encoding != ZT_ENC_ZSTD)
        return ZT_OK;
    if (f->no_data)
        return zt__fail(err, ZT_E_UNSUPPORTED, zt__component_object(f, c), c->role, 1, c->offset,
                        "the file was opened from its manifest alone: it has no data bytes");
    walk w = {f, c, zt__component_object(f, c), err, {0}, c->offset};
    zt_status sst = zt__component_source(f, c, &w.src, err);
    if (sst)
        return sst;
    return check_frames(&w);
}

zt_status zt_component_check_frames_at(const zt_file *f, const zt_component *c, int fd, uint64_t at,
                                       zt_error *err)
{
    if (c->encoding != ZT_ENC_ZSTD)
        return ZT_OK;
    if (fd < 0)
        return ZT_FAIL(err, ZT_E_ARG, "zt_component_check_frames_at: no fd");
    walk w = {f, c, zt__component_object(f, c), err, {NULL, fd, true}, at};
    return check_frames(&w);
}
