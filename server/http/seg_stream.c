/*
 * Responses over several segments (see seg_stream.h).
 *
 * A content reader must not hold a libmicrohttpd worker for long: when the
 * bytes it needs are not in the cache yet it waits at most WAIT_MS for them
 * and returns 0 ("nothing now"). libmicrohttpd 0.9.75 (epoll) then keeps the
 * connection on its ready list and calls the reader again on its next turn,
 * so a waiting response costs its worker at most WAIT_MS per turn, and the
 * worker's other connections go on between the calls.
 */
#include "http/seg_stream.h"
#include "core/log.h"
#include "upstream/items.h"
#include "http/response.h"
#include "store/decoders.h"

#include <sys/types.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define WAIT_MS 5
#define MAX_IOV 512              /* segments of one mapped response */
#define MAX_MAPPED (256u * 1024) /* file bytes one mapped response may map */
#define BLOCK (256u * 1024)
#define GAP_MAX 4096u /* bytes between two file spans read with them, not apart */
#define RUN_IOV 1024  /* IOV_MAX */

size_t ztd_seg_find(const ztd_body_seg *segs, size_t nsegs, uint64_t at, uint64_t *seg_at)
{
    uint64_t o = 0;
    size_t i = 0;
    while (i + 1 < nsegs && o + segs[i].len <= at)
        o += segs[i++].len;
    *seg_at = o;
    return i;
}

bool ztd_seg_reads_file(const ztd_body_seg *g)
{
    return (g->kind == ZTD_SEG_FILE && !g->immutable) ||
           (g->kind == ZTD_SEG_DECODE && !g->stored_at_fd);
}

/* The segments [*first, *last] that [start, start + len) covers. */
static void covered(const ztd_body_seg *segs, size_t nsegs, uint64_t start, uint64_t len,
                    size_t *first, size_t *last, uint64_t *first_at)
{
    *first = ztd_seg_find(segs, nsegs, start, first_at);
    *last = *first;
    uint64_t o = *first_at;
    while (*last + 1 < nsegs && o + segs[*last].len < start + len)
        o += segs[(*last)++].len;
}

/* ---- the reader */

typedef struct sstream {
    int sock;
    ztd_entry *entry;    /* retained */
    uint64_t start, len; /* the span, in representation offsets */
    ztd_body_seg *segs;  /* the ones the span covers; items retained */
    uint64_t *seg_at;    /* representation offset of each */
    size_t n, cursor;
    ztd_dstream *dec; /* the decoder of segment dec_at, or NULL */
    size_t dec_at;
    bool slot;  /* holds a max_decode_streams slot */
    bool items; /* some segment is a cache item */
} sstream;

static void sstream_free(void *cls)
{
    sstream *s = cls;
    for (size_t i = 0; i < s->n; i++)
        if (s->segs[i].item)
            ztd_cache_item_release(s->segs[i].item);
    ztd_dstream_free(s->dec);
    free(s->segs);
    free(s->seg_at);
    ztd_entry_release(s->entry);
    if (s->slot)
        ztd_decode_release();
    free(s);
}

static ssize_t cut(sstream *s, const char *why)
{
    ztd_log(ZTD_LOG_WARN, "\"%s\": response cut short: %s", s->entry ? s->entry->name : "", why);
    return ztd_body_cut(s->sock);
}

/* Are all items of the span complete? -1: one failed; 0: one is still
 * filling (waited for a little); 1: all complete. */
static int all_complete(sstream *s)
{
    for (size_t i = 0; i < s->n; i++) {
        ztd_cache_item *it = s->segs[i].kind == ZTD_SEG_ITEM ? s->segs[i].item : NULL;
        if (!it)
            continue;
        uint64_t ready;
        ztd_cache_state st = ztd_cache_item_state(it, &ready);
        if (st == ZTD_CACHE_FILLING)
            st = ztd_cache_wait(it, ztd_cache_item_size(it) + 1, WAIT_MS, &ready);
        if (st == ZTD_CACHE_FAILED)
            return -1;
        if (st != ZTD_CACHE_COMPLETE)
            return 0;
    }
    return 1;
}

/* How many bytes of item segment g are readable from `within` on: 0 for
 * none yet (waited for a little), -1 when its fill failed. */
static int64_t item_ready(const ztd_body_seg *g, uint64_t within, bool wait)
{
    uint64_t need = g->off + within + 1, ready;
    ztd_cache_state st = ztd_cache_item_state(g->item, &ready);
    if (st == ZTD_CACHE_FILLING && ready < need && wait)
        st = ztd_cache_wait(g->item, need, WAIT_MS, &ready);
    if (st != ZTD_CACHE_COMPLETE && st != ZTD_CACHE_FILLING)
        return -1;
    if (ready < need)
        return 0;
    uint64_t end = g->off + g->len;
    return (int64_t)((ready < end ? ready : end) - (g->off + within));
}

/* Decoded bytes of segment i from `within` on: its decoder made on entry. */
static ssize_t read_decoded(sstream *s, size_t i, uint64_t within, char *buf, size_t n)
{
    const ztd_body_seg *g = &s->segs[i];
    zt_error err;
    if (!s->dec || s->dec_at != i) {
        ztd_dstream_free(s->dec);
        uint64_t span_end = s->start + s->len - s->seg_at[i];
        uint64_t end = span_end < g->len ? span_end : g->len;
        s->dec_at = i;
        if (!(s->dec = ztd_dstream_open(s->entry, g, within, end - within, &err))) {
            ztd_log(ZTD_LOG_ERROR, "decoding \"%s\" failed; response cut short: %s", s->entry->name,
                    err.message);
            return ztd_body_cut(s->sock);
        }
    }
    size_t got;
    if (ztd_dstream_read(s->dec, buf, n, &got, &err)) {
        ztd_log(ZTD_LOG_ERROR, "decoding \"%s\" failed; response cut short: %s", s->entry->name,
                err.message);
        return ztd_body_cut(s->sock);
    }
    return (ssize_t)got;
}

/* Bytes from pos on, from the one segment that holds pos: 0 for none now
 * (waited for a little if `wait`), or MHD_CONTENT_READER_END_WITH_ERROR once
 * the connection is cut. */
static ssize_t read_segment(sstream *s, uint64_t pos, char *buf, size_t max, bool wait)
{
    uint64_t at = s->start + pos;
    while (s->cursor + 1 < s->n && at >= s->seg_at[s->cursor + 1])
        s->cursor++;
    const ztd_body_seg *g = &s->segs[s->cursor];
    uint64_t within = at - s->seg_at[s->cursor];
    uint64_t n = g->len - within;
    if (n > max)
        n = max;
    if (n > s->len - pos)
        n = s->len - pos;
    if (g->kind == ZTD_SEG_ITEM) {
        int64_t r = item_ready(g, within, wait);
        if (r < 0)
            return cut(s, "the upstream fill failed");
        if (r == 0)
            return 0;
        if ((uint64_t)r < n)
            n = (uint64_t)r;
    }
    if (pos + n == s->len) { /* the last byte: only once every item is checked */
        int c = all_complete(s);
        if (c < 0)
            return cut(s, "the upstream fill failed");
        if (c == 0 && n == 1)
            return 0;
        if (c == 0)
            n--;
    }
    ssize_t r;
    switch (g->kind) {
    case ZTD_SEG_MEM:
        memcpy(buf, g->mem + within, n);
        return (ssize_t)n;
    case ZTD_SEG_FILE:
        r = pread(g->fd, buf, n, (off_t)(g->off + within));
        return r > 0 ? r : cut(s, "reading the file failed (changed in place?)");
    case ZTD_SEG_ITEM:
        r = pread(ztd_cache_item_fd(g->item), buf, n, (off_t)(g->off + within));
        return r > 0 ? r : cut(s, "reading the cache failed");
    case ZTD_SEG_DECODE:
        return read_decoded(s, s->cursor, within, buf, (size_t)n);
    }
    return cut(s, "unknown segment");
}

/* Bytes skipped between file spans land here and are never read: written by
 * the kernel only, so the threads that share it do not race in C's sense. */
static char g_gap[GAP_MAX];

/* A run of file segments of one fd from pos on, each at most GAP_MAX after
 * the last, read with one preadv (the gaps into g_gap): a view of many small
 * aligned tensors is 100,000 spans, and one pread each cost more than the
 * rest of the answer. The bytes read, or 0 when the run is a single segment
 * or the read came back short (read_segment then reads it, and says why). */
static size_t read_file_run(sstream *s, uint64_t pos, char *buf, size_t max)
{
    struct iovec iov[RUN_IOV];
    int cnt = 0;
    size_t got = 0, want = 0, segs = 0;
    uint64_t at = s->start + pos, next_off = 0;
    int fd = s->segs[s->cursor].fd;
    for (size_t i = s->cursor; i < s->n && got < max && cnt + 2 <= RUN_IOV; i++) {
        const ztd_body_seg *g = &s->segs[i];
        if (g->kind != ZTD_SEG_FILE || g->fd != fd)
            break;
        uint64_t within = at > s->seg_at[i] ? at - s->seg_at[i] : 0;
        uint64_t n = g->len - within, left = s->start + s->len - (s->seg_at[i] + within);
        if (segs && (g->off < next_off || g->off - next_off > GAP_MAX))
            break;
        if (segs && g->off > next_off) {
            iov[cnt++] = (struct iovec){g_gap, (size_t)(g->off - next_off)};
            want += g->off - next_off;
        }
        n = n < max - got ? n : max - got;
        n = n < left ? n : left;
        iov[cnt++] = (struct iovec){buf + got, (size_t)n};
        got += n;
        want += n;
        next_off = g->off + within + n;
        segs++;
    }
    if (segs < 2)
        return 0;
    const ztd_body_seg *g = &s->segs[s->cursor];
    ssize_t r = preadv(fd, iov, cnt, (off_t)(g->off + (at - s->seg_at[s->cursor])));
    return r == (ssize_t)want ? got : 0;
}

/* The buffer filled across segments: a span of many small tensors goes out in
 * full buffers, not one send per tensor. Only the first segment read may
 * wait for a filling item. */
static ssize_t sstream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    sstream *s = cls;
    if (pos >= s->len)
        return MHD_CONTENT_READER_END_OF_STREAM;
    size_t got = 0;
    while (got < max && pos + got < s->len) {
        uint64_t at = s->start + pos + got;
        while (s->cursor + 1 < s->n && at >= s->seg_at[s->cursor + 1])
            s->cursor++;
        size_t run = s->items ? 0 : read_file_run(s, pos + got, buf + got, max - got);
        if (run) {
            got += run;
            continue;
        }
        ssize_t r = read_segment(s, pos + got, buf + got, max - got, got == 0);
        if (r < 0)
            return r; /* cut: the bytes read are of no use */
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* Decoded segments: none known bad, and one decoder slot for the response. */
static bool decoders_ready(sstream *s, unsigned max_decode_streams, ztd_body_fail *f)
{
    bool any = false;
    for (size_t i = 0; i < s->n; i++) {
        if (s->segs[i].kind != ZTD_SEG_DECODE)
            continue;
        if (ztd_dstream_refused(s->entry, &s->segs[i], f))
            return false;
        any = true;
    }
    if (any && !(s->slot = ztd_dstream_slot(max_decode_streams, f)))
        return false;
    return true;
}

struct MHD_Response *ztd_seg_stream_response(const ztd_body_seg *segs, size_t nsegs,
                                             ztd_entry *entry, uint64_t start, uint64_t len,
                                             int sock, bool head, unsigned max_decode_streams,
                                             ztd_body_fail *f)
{
    if (head)
        return ztd_head_response(len);
    size_t first, last;
    uint64_t o;
    covered(segs, nsegs, start, len, &first, &last, &o);
    size_t n = last - first + 1;
    sstream *s = calloc(1, sizeof(*s));
    if (!s || !(s->segs = calloc(n, sizeof(*s->segs))) ||
        !(s->seg_at = calloc(n, sizeof(*s->seg_at)))) {
        if (s)
            free(s->segs);
        free(s);
        return NULL;
    }
    s->entry = entry;
    if (entry)
        ztd_entry_retain(entry);
    for (size_t i = 0; i < n; i++) {
        s->segs[i] = segs[first + i];
        s->seg_at[i] = o;
        o += s->segs[i].len;
        if (s->segs[i].item)
            ztd_cache_item_retain(s->segs[i].item);
        s->items |= s->segs[i].kind == ZTD_SEG_ITEM;
    }
    s->n = n;
    s->start = start;
    s->len = len;
    s->sock = sock;
    if (!decoders_ready(s, max_decode_streams, f)) {
        sstream_free(s);
        return NULL;
    }
    return ztd_reader_response(len, BLOCK, sstream_read, s, sstream_free);
}

/* ---- a span whose segments can all be mapped: an iovec over the mappings
 *
 * Several segments cannot go out with one sendfile (libmicrohttpd sends one
 * body source per response). Complete items never change (a new version is a
 * new item; eviction only unlinks), so they are mapped, and libmicrohttpd
 * sends the mappings and the bytes between them with sendmsg: for spans of
 * many small segments, no reader call per segment. Only for spans of at most
 * MAX_MAPPED file bytes, though: every page a response's mapping touches
 * counts in the server's VmRSS until the response is freed (64 downloads of
 * a 1 GiB view showed 59 GiB of VmRSS that way), so larger spans go through
 * the reader (pread into its BLOCK), whose memory is one BLOCK per response.
 * For a 1 GiB view the reader measured as fast as the mapping, with more
 * server CPU per GiB (docs/PERFORMANCE.md, "64 concurrent downloads").
 * A catalog file changed in place while it is sent makes sendmsg fail
 * (EFAULT past its end), which ends the connection; the request's pin on the
 * connection (conns.h) aborts it on any change. */

typedef struct seg_map {
    ztd_cache_item *item; /* retained; NULL for a segment in memory */
    void *addr;           /* the mapping, or NULL */
    size_t len;
} seg_map;

typedef struct mapped {
    ztd_entry *entry;
    size_t n;
    struct MHD_IoVec *iov; /* n, after the n seg_maps */
    seg_map seg[];
} mapped;

static void mapped_free(void *cls)
{
    mapped *m = cls;
    for (seg_map *g = m->seg; g < m->seg + m->n; g++) {
        if (g->addr)
            munmap(g->addr, g->len);
        if (g->item)
            ztd_cache_item_release(g->item);
    }
    ztd_entry_release(m->entry);
    free(m);
}

/* [off, off + len) of fd mapped: the mapping in sm, the bytes' address returned. */
static const uint8_t *map_span(seg_map *sm, int fd, uint64_t off, uint64_t len)
{
    static long page;
    if (!page)
        page = sysconf(_SC_PAGESIZE);
    uint64_t lo = off - off % (uint64_t)page;
    sm->len = (size_t)(off - lo + len);
    void *addr = mmap(NULL, sm->len ? sm->len : 1, PROT_READ, MAP_SHARED, fd, (off_t)lo);
    if (addr == MAP_FAILED)
        return NULL;
    madvise(addr, sm->len, MADV_SEQUENTIAL);
    sm->addr = addr;
    return (const uint8_t *)addr + (off - lo);
}

/* The iovec for [start, start + len) over segments [first, first + n) whose
 * first begins at representation offset at. */
static bool map_segments(mapped *m, const ztd_body_seg *segs, uint64_t at, uint64_t start,
                         uint64_t len)
{
    for (size_t i = 0; i < m->n; i++) {
        const ztd_body_seg *g = &segs[i];
        seg_map *sm = &m->seg[i];
        uint64_t from = start > at ? start - at : 0;
        uint64_t to = start + len < at + g->len ? start + len - at : g->len;
        const uint8_t *p = g->mem ? g->mem + from : NULL;
        if (g->kind == ZTD_SEG_ITEM) {
            sm->item = g->item;
            ztd_cache_item_retain(g->item);
            p = map_span(sm, ztd_cache_item_fd(g->item), g->off + from, to - from);
        } else if (g->kind == ZTD_SEG_FILE) {
            p = map_span(sm, g->fd, g->off + from, to - from);
        }
        if (!p && to > from)
            return false;
        m->iov[i] = (struct MHD_IoVec){p, (size_t)(to - from)};
        at += g->len;
    }
    return true;
}

/* The file bytes (FILE and ITEM segments) of [start, start + len) over
 * segments [first, last], the first beginning at representation offset at. */
static uint64_t file_bytes(const ztd_body_seg *segs, size_t first, size_t last, uint64_t at,
                           uint64_t start, uint64_t len)
{
    uint64_t n = 0;
    for (size_t i = first; i <= last; at += segs[i++].len) {
        if (segs[i].kind != ZTD_SEG_FILE && segs[i].kind != ZTD_SEG_ITEM)
            continue;
        uint64_t from = start > at ? start - at : 0;
        uint64_t to = start + len < at + segs[i].len ? start + len - at : segs[i].len;
        n += to - from;
    }
    return n;
}

static bool mappable(const ztd_body_seg *g)
{
    uint64_t ready;
    switch (g->kind) {
    case ZTD_SEG_MEM:
        return g->mem || g->len == 0;
    case ZTD_SEG_FILE:
        return true;
    case ZTD_SEG_ITEM:
        return g->item && ztd_cache_item_state(g->item, &ready) == ZTD_CACHE_COMPLETE;
    case ZTD_SEG_DECODE:
        return false;
    }
    return false;
}

struct MHD_Response *ztd_seg_mapped_response(const ztd_body_seg *segs, size_t nsegs,
                                             ztd_entry *entry, uint64_t start, uint64_t len)
{
    size_t first, last;
    uint64_t first_at;
    covered(segs, nsegs, start, len, &first, &last, &first_at);
    size_t n = last - first + 1;
    if (n > MAX_IOV) /* sendmsg takes IOV_MAX (1024) at most */
        return NULL;
    if (file_bytes(segs, first, last, first_at, start, len) > MAX_MAPPED)
        return NULL; /* pages it touches would count in VmRSS, per response */
    for (size_t i = first; i <= last; i++)
        if (!mappable(&segs[i]))
            return NULL; /* the reader's way */
    mapped *m = calloc(1, sizeof(*m) + n * (sizeof(seg_map) + sizeof(struct MHD_IoVec)));
    if (!m)
        return NULL;
    m->n = n;
    m->iov = (struct MHD_IoVec *)(m->seg + n);
    struct MHD_Response *resp = NULL;
    if (map_segments(m, segs + first, first_at, start, len))
        resp = MHD_create_response_from_iovec(m->iov, (unsigned)n, mapped_free, m);
    if (!resp) {
        mapped_free(m);
        return NULL;
    }
    if ((m->entry = entry))
        ztd_entry_retain(entry);
    return resp;
}
