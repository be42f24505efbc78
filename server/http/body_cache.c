/*
 * Byte responses from the upstream cache (see body_cache.h).
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
#include "http/body_cache.h"
#include "core/log.h"

#include <sys/types.h>

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define WAIT_MS 5
#define BLOCK (256u * 1024)

typedef struct cstream {
    ztd_body_seg *segs; /* the ones the span covers; items retained */
    uint64_t *seg_at;   /* representation offset of each */
    size_t n, cursor;
    uint64_t start, len; /* the span, in representation offsets */
    ztd_entry *entry;
    int sock;
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

static ssize_t no_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)cls, (void)pos, (void)buf, (void)max;
    return MHD_CONTENT_READER_END_WITH_ERROR;
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
        return MHD_create_response_from_callback(len, BLOCK, no_read, NULL, NULL);
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
    struct MHD_Response *resp =
        MHD_create_response_from_callback(len, BLOCK, cstream_read, s, cstream_free);
    if (!resp)
        cstream_free(s);
    return resp;
}
