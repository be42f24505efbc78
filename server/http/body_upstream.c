/*
 * Byte responses from the upstream cache (see body_upstream.h).
 *
 * A content reader must not hold a libmicrohttpd worker for long: when the
 * bytes it needs are not in the cache yet it waits at most WAIT_MS for them
 * and returns 0 ("nothing now"). libmicrohttpd 0.9.75 (epoll) then keeps the
 * connection on its ready list and calls the reader again on its next turn,
 * so a waiting response costs its worker at most WAIT_MS per turn, and the
 * worker's other connections go on between the calls.
 *
 * The last byte of a response is its promise that the body is whole: it is
 * held until every item the response covers is complete (the fill checked
 * its digest and made it durable). A fill that fails makes the reader end
 * the response with an error before its Content-Length is met.
 */
#include "http/body_upstream.h"
#include "core/log.h"
#include "http/response.h"

#include <sys/types.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define WAIT_MS 5
#define MAX_IOV 512 /* segments of one mapped response */
#define BLOCK (256u * 1024)

typedef struct cstream {
    int sock;
    ztd_entry *entry;    /* retained */
    uint64_t start, len; /* the span, in representation offsets */
    ztd_body_seg *segs;  /* the ones the span covers; items retained */
    uint64_t *seg_at;    /* representation offset of each */
    size_t n, cursor;
} cstream;

static void cstream_free(void *cls)
{
    cstream *s = cls;
    for (size_t i = 0; i < s->n; i++)
        if (s->segs[i].item)
            ztd_cache_item_release(s->segs[i].item);
    free(s->segs);
    free(s->seg_at);
    ztd_entry_release(s->entry);
    free(s);
}

static ssize_t cut(cstream *s, const char *why)
{
    ztd_log(ZTD_LOG_WARN, "\"%s\": response cut short: %s", s->entry ? s->entry->name : "", why);
    if (s->sock >= 0)
        shutdown(s->sock, SHUT_RDWR);
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

/* Are all items of the span complete? -1: one failed; 0: one is still
 * filling (waited for a little); 1: all complete. */
static int all_complete(cstream *s)
{
    for (size_t i = 0; i < s->n; i++) {
        ztd_cache_item *it = s->segs[i].item;
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
static int64_t item_ready(const ztd_body_seg *g, uint64_t within)
{
    uint64_t need = g->item_off + within + 1, ready;
    ztd_cache_state st = ztd_cache_item_state(g->item, &ready);
    if (st == ZTD_CACHE_FILLING && ready < need)
        st = ztd_cache_wait(g->item, need, WAIT_MS, &ready);
    if (st == ZTD_CACHE_FAILED)
        return -1;
    if (st != ZTD_CACHE_COMPLETE && st != ZTD_CACHE_FILLING)
        return -1;
    if (ready < need)
        return 0;
    uint64_t end = g->item_off + g->len;
    return (int64_t)((ready < end ? ready : end) - (g->item_off + within));
}

static ssize_t cstream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    cstream *s = cls;
    if (pos >= s->len)
        return MHD_CONTENT_READER_END_OF_STREAM;
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
    if (g->item) {
        int64_t r = item_ready(g, within);
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
    if (!g->item) {
        memcpy(buf, g->mem + within, n);
        return (ssize_t)n;
    }
    ssize_t r = pread(ztd_cache_item_fd(g->item), buf, n, (off_t)(g->item_off + within));
    return r > 0 ? r : cut(s, "reading the cache failed");
}

/* The first segment that ends after `at`, and its representation offset. */
static size_t seg_of(const ztd_body_seg *segs, size_t nsegs, uint64_t at, uint64_t *seg_at)
{
    uint64_t o = 0;
    size_t i = 0;
    while (i + 1 < nsegs && o + segs[i].len <= at)
        o += segs[i++].len;
    *seg_at = o;
    return i;
}

bool ztd_cache_span_in_item(const ztd_body_seg *segs, size_t n, uint64_t *startp, uint64_t len,
                            int *fd, uint64_t *off, uint64_t *seg_len)
{
    uint64_t at, start = *startp, ready;
    const ztd_body_seg *g = &segs[seg_of(segs, n, start, &at)];
    if (!g->item || start + len > at + g->len ||
        ztd_cache_item_state(g->item, &ready) != ZTD_CACHE_COMPLETE)
        return false;
    *fd = ztd_cache_item_fd(g->item);
    *off = g->item_off;
    *seg_len = g->len;
    *startp = start - at;
    return true;
}

struct MHD_Response *ztd_cache_stream_response(const ztd_body_seg *segs, size_t nsegs,
                                               ztd_entry *entry, uint64_t start, uint64_t len,
                                               int sock, bool head)
{
    if (head)
        return ztd_head_response(len);
    cstream *s = calloc(1, sizeof(*s));
    uint64_t first_at;
    size_t first = seg_of(segs, nsegs, start, &first_at), last = first;
    uint64_t o = first_at;
    while (last + 1 < nsegs && o + segs[last].len < start + len)
        o += segs[last++].len;
    size_t n = last - first + 1;
    if (!s || !(s->segs = calloc(n, sizeof(*s->segs))) ||
        !(s->seg_at = calloc(n, sizeof(*s->seg_at)))) {
        if (s)
            free(s->segs);
        free(s);
        return NULL;
    }
    o = first_at;
    for (size_t i = 0; i < n; i++) {
        s->segs[i] = segs[first + i];
        s->seg_at[i] = o;
        o += s->segs[i].len;
        if (s->segs[i].item)
            ztd_cache_item_retain(s->segs[i].item);
    }
    s->n = n;
    s->start = start;
    s->len = len;
    s->sock = sock;
    s->entry = entry;
    if (entry)
        ztd_entry_retain(entry);
    return ztd_reader_response(len, BLOCK, cstream_read, s, cstream_free);
}

/* ---- a span whose items are all complete: an iovec over their mappings
 *
 * Several segments cannot go out with one sendfile, and copying them through
 * a content reader (pread, then send) measured 0.7x a local file's sendfile
 * for zt pull's ranges across components. Complete items never change (a new
 * version is a new item; eviction only unlinks), so they are mapped, and
 * libmicrohttpd sends the mappings and the bytes between them with sendmsg. */

typedef struct seg_map {
    ztd_cache_item *item; /* retained; NULL for a segment in memory */
    void *addr;           /* the item's mapping, or NULL */
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
        const uint8_t *base = g->mem;
        if (g->item) {
            sm->len = (size_t)ztd_cache_item_size(g->item);
            void *addr = mmap(NULL, sm->len, PROT_READ, MAP_SHARED, ztd_cache_item_fd(g->item), 0);
            if (addr == MAP_FAILED)
                return false;
            madvise(addr, sm->len, MADV_SEQUENTIAL);
            sm->addr = addr;
            sm->item = g->item;
            ztd_cache_item_retain(g->item);
            base = (const uint8_t *)addr + g->item_off;
        }
        m->iov[i] = (struct MHD_IoVec){base + from, (size_t)(to - from)};
        at += g->len;
    }
    return true;
}

struct MHD_Response *ztd_cache_mapped_response(const ztd_body_seg *segs, size_t nsegs,
                                               ztd_entry *entry, uint64_t start, uint64_t len)
{
    uint64_t first_at, ready;
    size_t first = seg_of(segs, nsegs, start, &first_at), last = first;
    uint64_t o = first_at;
    while (last + 1 < nsegs && o + segs[last].len < start + len)
        o += segs[last++].len;
    size_t n = last - first + 1;
    if (n > MAX_IOV) /* sendmsg takes IOV_MAX (1024) at most */
        return NULL;
    for (size_t i = first; i <= last; i++)
        if ((!segs[i].item && !segs[i].mem) ||
            (segs[i].item && ztd_cache_item_state(segs[i].item, &ready) != ZTD_CACHE_COMPLETE))
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
