/*
 * The encoding profile zt.zstd-seekable/1 (profiles/zt.zstd-seekable-1.md):
 * zstd frames followed by the zstd seekable format's seek table, a skippable
 * frame (magic 0x184D2A5E) ending in
 *     Number_Of_Frames u32 LE, Seek_Table_Descriptor u8, 0x8F92EAB1 u32 LE
 * with one entry (Compressed_Size u32, Decompressed_Size u32, [Checksum u32])
 * per frame. Checked before the first decoded byte: the table covers the
 * stream exactly, every frame holds at most 16 MiB, all but the last hold the
 * same amount, the sizes add up to decoded_length, and every frame header has
 * its content-checksum flag (and, when it states a content size, the table's
 * size). The decoder then checks the checksums and the exact total length.
 * Reads go through pread for mapped files and are bounded by the stream.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define SEEK_MAGIC 0x8F92EAB1u
#define SKIP_MAGIC 0x184D2A5Eu
#define ZSTD_MAGIC 0xFD2FB528u
#define MAX_FRAME (16u << 20)

typedef struct sk {
    const zt_file *f;
    const struct zt_component *c;
    const char *obj;
    zt__source src;
    zt_error *err;
} sk;

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static zt_status bad(sk *s, zt_status code, uint64_t at, const char *what, uint64_t a, uint64_t b)
{
    return zt__fail(s->err, code, s->obj, s->c->role, 1, s->c->offset + at,
                    "v2 zt.zstd-seekable/1: %s (%llu, %llu)", what, (unsigned long long)a,
                    (unsigned long long)b);
}

/* n bytes at offset `at` of the stored stream. */
static zt_status get(sk *s, uint64_t at, void *dst, size_t n)
{
    uint64_t off = s->c->offset + at;
    if (s->src.fd < 0 || !s->src.mapped) {
        memcpy(dst, s->src.data + off, n);
        return ZT_OK;
    }
    for (size_t got = 0; got < n;) {
        ssize_t r = pread(s->src.fd, (uint8_t *)dst + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return zt__fail(s->err, r ? ZT_E_IO : ZT_E_TRUNCATED, s->obj, s->c->role, 1, off + got,
                            "read: %s", r ? strerror(errno) : "file shrank while being read");
        got += (size_t)r;
    }
    return ZT_OK;
}

/* Frame header at `at`: content checksum flag set; a stated content size
 * equal to the table's. */
static zt_status check_frame(sk *s, uint64_t at, uint64_t csize, uint32_t dsize)
{
    uint8_t h[18] = {0};
    size_t n = csize < sizeof(h) ? (size_t)csize : sizeof(h);
    zt_status st =
        n < 6 ? bad(s, ZT_E_ENCODING, at, "frame too short", csize, 6) : get(s, at, h, n);
    if (st)
        return st;
    if (le32(h) != ZSTD_MAGIC)
        return bad(s, ZT_E_ENCODING, at, "the seek table points at no zstd frame", at, le32(h));
    uint8_t fhd = h[4];
    if (!(fhd & 4))
        return bad(s, ZT_E_ENCODING, at, "a frame has no content checksum", at, fhd);
    unsigned fcs_flag = fhd >> 6, single = (fhd >> 5) & 1, did = fhd & 3;
    size_t fcs_len = fcs_flag == 0 ? single : 1u << fcs_flag;
    size_t pos = 5 + !single + (did == 3 ? 4 : did);
    if (!fcs_len)
        return ZT_OK;
    if (pos + fcs_len > n)
        return bad(s, ZT_E_ENCODING, at, "frame header runs past the frame", pos + fcs_len, n);
    uint64_t fcs = 0;
    for (size_t i = fcs_len; i-- > 0;)
        fcs = fcs << 8 | h[pos + i];
    if (fcs_len == 2)
        fcs += 256;
    if (fcs != dsize)
        return bad(s, ZT_E_SIZE, at, "frame content size differs from the seek table", fcs, dsize);
    return ZT_OK;
}

/* The entries, read in chunks, against the rules. */
static zt_status check_entries(sk *s, uint64_t table_at, uint32_t frames, unsigned es,
                               uint64_t frames_end)
{
    uint8_t buf[12 * 1024];
    uint64_t coff = 0, total = 0, first = 0;
    for (uint32_t i = 0; i < frames; i++) {
        size_t k = i % 1024;
        if (k == 0) {
            size_t n = (size_t)(frames - i < 1024 ? frames - i : 1024) * es;
            zt_status st = get(s, table_at + (uint64_t)i * es, buf, n);
            if (st)
                return st;
        }
        uint32_t csize = le32(buf + k * es), dsize = le32(buf + k * es + 4);
        if (dsize > MAX_FRAME)
            return bad(s, ZT_E_ENCODING, coff, "a frame holds more than 16 MiB", i, dsize);
        if (i == 0)
            first = dsize;
        else if (i + 1 < frames && dsize != first)
            return bad(s, ZT_E_ENCODING, coff, "frames other than the last differ in size", first,
                       dsize);
        if (i + 1 == frames && frames > 1 && dsize > first)
            return bad(s, ZT_E_ENCODING, coff, "the last frame is larger than the others", first,
                       dsize);
        if (csize > frames_end - coff)
            return bad(s, ZT_E_ENCODING, coff, "frames run into the seek table", coff + csize,
                       frames_end);
        zt_status st = check_frame(s, coff, csize, dsize);
        if (st)
            return st;
        coff += csize;
        total += dsize;
    }
    if (coff != frames_end)
        return bad(s, ZT_E_ENCODING, coff, "the seek table does not cover the stream", coff,
                   frames_end);
    if (total != s->c->uncompressed_length)
        return bad(s, ZT_E_SIZE, 0, "the frames add up to another length than decoded_length",
                   total, s->c->uncompressed_length);
    return ZT_OK;
}

zt_status zt__seekable_check(const zt_file *f, const char *obj, const struct zt_component *c,
                             zt_error *err)
{
    sk s = {f, c, obj, {0}, err};
    zt_status st = zt__component_source(f, c, &s.src, err);
    if (st)
        return st;
    uint64_t len = c->length;
    uint8_t foot[9], head[8];
    if (len < 17)
        return bad(&s, ZT_E_ENCODING, 0, "stream too short for a seek table", len, 17);
    if ((st = get(&s, len - 9, foot, 9)))
        return st;
    uint32_t frames = le32(foot);
    uint8_t desc = foot[4];
    unsigned es = desc & 0x80 ? 12 : 8;
    if (le32(foot + 5) != SEEK_MAGIC || (desc & 0x7C))
        return bad(&s, ZT_E_ENCODING, len - 9, "no seek table at the end of the stream",
                   le32(foot + 5), desc);
    uint64_t table = (uint64_t)frames * es + 9; /* the skippable frame's content */
    if (table + 8 > len)
        return bad(&s, ZT_E_ENCODING, len - 9, "seek table larger than the stream", table, len);
    uint64_t skip_at = len - 8 - table;
    if ((st = get(&s, skip_at, head, 8)))
        return st;
    if (le32(head) != SKIP_MAGIC || le32(head + 4) != table)
        return bad(&s, ZT_E_ENCODING, skip_at, "the seek table is not a skippable frame",
                   le32(head), le32(head + 4));
    return check_entries(&s, skip_at + 8, frames, es, skip_at);
}
