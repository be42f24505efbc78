/*
 * An upstream file's source (see store/source.h): a component's bytes are a
 * cache item, filled on first use on the fill queue; a file's /raw is its
 * items and the bytes between them. What an answer must wait for is said,
 * not waited for here: the first byte of a fill (so that an upstream that
 * fails at once gets a 502/504, not a 200 cut short), the whole item (for
 * several ranges, decoding, or an answer that names the digest: up to
 * upstream_verify_first), room in a full cache, the bytes between
 * components. The front runs the wait off libmicrohttpd's threads, on the
 * upstream's own queue, and asks again. Later bytes are streamed as the
 * fill lands them (http/seg_stream.h), holding no thread.
 */
#include "core/clock.h"
#include "core/grow.h"
#include "store/source.h"
#include "upstream/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { W_NONE, W_ITEM, W_ROOM, W_SEGS } wait_kind;

/* What a request holds and waits for. */
typedef struct up_q {
    ztd_upstream *u;
    ztd_cache_item **items; /* held until the request ends: never evicted meanwhile */
    size_t nitems, capitems;
    wait_kind wait;
    ztd_cache_item *wait_item;
    uint64_t wait_for;
    const zt_component **room; /* W_ROOM: components the cache had no room for yet */
    size_t nroom;
    bool roomed; /* the room was waited for once */
    ztd_body_seg *segs;
    size_t nsegs;
} up_q;

static void release_items(up_q *x)
{
    for (size_t i = 0; i < x->nitems; i++)
        ztd_cache_item_release(x->items[i]);
    x->nitems = 0;
}

static void up_q_free(void *p)
{
    up_q *x = p;
    release_items(x);
    free(x->items);
    free(x->room);
    free(x->segs);
    free(x);
}

static up_q *up_q_of(ztd_source_req *q, ztd_entry *e)
{
    if (!q->priv && (q->priv = calloc(1, sizeof(up_q)))) {
        q->priv_free = up_q_free;
        ((up_q *)q->priv)->u = e->up->u;
    }
    return q->priv;
}

static bool hold(up_q *x, ztd_cache_item *it)
{
    if (ZTD_GROW_ITEMS(x->items, x->capitems, x->nitems + 1, 4) != 0)
        return false;
    x->items[x->nitems++] = it;
    return true;
}

static ztd_err no_memory(char *msg, size_t cap)
{
    snprintf(msg, cap, "out of memory");
    return ZTD_ERR_INTERNAL;
}

/* The error of the fill that failed, for the answer. */
static ztd_err fill_failed(up_q *x, ztd_entry *e, char *msg, size_t cap)
{
    ztd_err err = ztd_upstream_fill_error(e, msg, cap);
    if (!err) {
        err = ZTD_ERR_UPSTREAM_FAILED;
        snprintf(msg, cap, "upstream %s: the fetch failed", ztd_upstream_url(x->u));
    }
    return err;
}

/* Wait for room for these components (W_ROOM); false when out of memory. */
static bool ask_room(up_q *x, const zt_component **comps, size_t n)
{
    free(x->room);
    if (!(x->room = malloc((n ? n : 1) * sizeof(*x->room))))
        return false;
    memcpy(x->room, comps, n * sizeof(*comps));
    x->nroom = n;
    x->wait = W_ROOM;
    release_items(x); /* holding some while waiting for others could deadlock */
    return true;
}

static ztd_err ask_item(up_q *x, ztd_cache_item *it, uint64_t want)
{
    x->wait = W_ITEM;
    x->wait_item = it;
    x->wait_for = want;
    return ZTD_SRC_WAIT;
}

/* c's item, held by the request: ZTD_ERR_NONE, ZTD_SRC_WAIT for room, or an error. */
static ztd_err take_item(up_q *x, ztd_entry *e, const zt_component *c, ztd_cache_item **it,
                         char *msg, size_t cap)
{
    ztd_err err = ztd_upstream_item(x->u, e, c, it, msg, cap);
    if (err == ZTD_ERR_CACHE_FULL && !x->roomed)
        return ask_room(x, &c, 1) ? ZTD_SRC_WAIT : no_memory(msg, cap);
    if (err)
        return err;
    if (!hold(x, *it)) {
        ztd_cache_item_release(*it);
        return no_memory(msg, cap);
    }
    return ZTD_ERR_NONE;
}

static ztd_err up_servable(const ztd_entry *e, const zt_object *o, const zt_component *c, char *msg,
                           size_t cap)
{
    return ztd_part_refusal(e, o, c, ztd_upstream_part_servable(e, c),
                            "missing or wrong at the upstream", msg, cap);
}

/* May the digest name c's bytes (c NULL: a plain file's)? Once its item is
 * complete (checked), or when it is small enough (upstream_verify_first)
 * that an answer waits for the whole item to be checked before its first
 * byte (up_component, plain_raw: q->named). A larger item that fills is
 * streamed as it lands, with a weak ETag and no digest claim: its last byte
 * is held until the check (http/seg_stream.h) and a failed check cuts the
 * connection, but the bytes before it have left unchecked (issue 27). */
static bool up_checked(ztd_entry *e, const zt_component *c)
{
    return ztd_upstream_item_complete(e->up->u, e, c);
}

static bool up_verified(ztd_entry *e, const zt_component *c)
{
    ztd_upstream *u = e->up->u;
    uint64_t len = c ? zt_component_length(c) : e->size;
    return len <= u->verify_first || ztd_upstream_item_complete(u, e, c);
}

/* An answer that needs the whole item checked first (decoding, several
 * ranges, a digest named) found it still filling after its wait: the item
 * was dropped and is filled again meanwhile. */
static ztd_err not_whole(up_q *x, char *msg, size_t cap)
{
    snprintf(msg, cap, "upstream %s: the component did not arrive whole in time",
             ztd_upstream_url(x->u));
    return ZTD_ERR_UPSTREAM_TIMEOUT;
}

static ztd_err up_component(ztd_source_req *q, ztd_entry *e, const zt_component *c, bool decoded,
                            ztd_body_seg *seg, char *msg, size_t cap)
{
    up_q *x = up_q_of(q, e);
    if (!x)
        return no_memory(msg, cap);
    uint64_t len = zt_component_length(c), ready;
    *seg = decoded ? ztd_seg_decode(e->file, c) : ztd_seg_item(NULL, 0, len);
    if (!q->reads)
        return ZTD_ERR_NONE; /* HEAD, 304, 412, 416: no byte, no fill */
    ztd_cache_item *it;
    ztd_err err = take_item(x, e, c, &it, msg, cap);
    if (err)
        return err;
    ztd_cache_state st = ztd_cache_item_state(it, &ready);
    if (st == ZTD_CACHE_FAILED)
        return fill_failed(x, e, msg, cap);
    /* Decoding reads a complete, checked item only; several ranges wait for
     * the whole of it, which then goes out as multipart/byteranges from its
     * file; an answer that names the digest sends no byte before the check;
     * otherwise the first byte shows the upstream answers. */
    bool whole = decoded || q->whole || q->named;
    if (st == ZTD_CACHE_FILLING && !q->waited && (whole || ready == 0))
        return ask_item(x, it, whole ? len + 1 : 1);
    if ((decoded || q->named) && st != ZTD_CACHE_COMPLETE)
        return not_whole(x, msg, cap);
    if (decoded) {
        seg->stored_at_fd = true;
        seg->fd = ztd_cache_item_fd(it);
        seg->off = 0;
        return ZTD_ERR_NONE;
    }
    seg->item = it;
    return ZTD_ERR_NONE;
}

/* Items for the components [lo, hi) of /raw reads; room for all of them at
 * once when the cache has none for one. */
static ztd_err raw_items(up_q *x, ztd_source_req *q, ztd_entry *e, const ztd_upstream_seg *useg,
                         char *msg, size_t cap)
{
    size_t full = 0;
    for (size_t i = 0; i < x->nsegs; i++) {
        const ztd_upstream_seg *g = &useg[i];
        if (!g->comp || g->at + g->len <= q->lo || g->at >= q->hi)
            continue;
        ztd_cache_item *it;
        ztd_err err = ztd_upstream_item(x->u, e, g->comp, &it, msg, cap);
        if (err == ZTD_ERR_CACHE_FULL && !x->roomed) {
            full++; /* waited for below, with the others */
            continue;
        }
        if (err)
            return err;
        if (!hold(x, it)) {
            ztd_cache_item_release(it);
            return no_memory(msg, cap);
        }
        x->segs[i].item = it;
    }
    if (!full)
        return ZTD_ERR_NONE;
    const zt_component **comps = calloc(x->nsegs, sizeof(*comps));
    size_t n = 0;
    for (size_t i = 0; comps && i < x->nsegs; i++)
        if (useg[i].comp && useg[i].at + useg[i].len > q->lo && useg[i].at < q->hi)
            comps[n++] = useg[i].comp;
    bool ok = comps && ask_room(x, comps, n);
    free(comps);
    return ok ? ZTD_SRC_WAIT : no_memory(msg, cap);
}

/* A plain file's /raw: one item, the whole file, filled and checked as a
 * component's; it waits for the first byte as a component does. A cache
 * with no room for it answers 507 at once (no wait for room: that waits for
 * components). */
static ztd_err plain_raw(up_q *x, ztd_source_req *q, ztd_entry *e, const ztd_body_seg **segs,
                         size_t *n, char *msg, size_t cap)
{
    q->one = ztd_seg_item(NULL, 0, e->size);
    *segs = &q->one;
    *n = e->size ? 1 : 0;
    if (!q->reads || !e->size)
        return ZTD_ERR_NONE;
    ztd_cache_item *it;
    ztd_err err = ztd_upstream_plain_item(x->u, e, &it, msg, cap);
    if (err)
        return err;
    if (!hold(x, it)) {
        ztd_cache_item_release(it);
        return no_memory(msg, cap);
    }
    q->one.item = it;
    uint64_t ready;
    ztd_cache_state st = ztd_cache_item_state(it, &ready);
    if (st == ZTD_CACHE_FAILED)
        return fill_failed(x, e, msg, cap);
    bool whole = q->whole || q->named;
    if (st == ZTD_CACHE_FILLING && !q->waited && (whole || ready == 0))
        return ask_item(x, it, whole ? e->size + 1 : 1);
    if (q->named && st != ZTD_CACHE_COMPLETE)
        return not_whole(x, msg, cap);
    return ZTD_ERR_NONE;
}

static ztd_err up_raw(ztd_source_req *q, ztd_entry *e, const ztd_body_seg **segs, size_t *n,
                      char *msg, size_t cap)
{
    up_q *x = up_q_of(q, e);
    if (!x)
        return no_memory(msg, cap);
    if (ztd_entry_is_plain(e))
        return plain_raw(x, q, e, segs, n, msg, cap);
    const ztd_upstream_seg *useg;
    size_t nuseg;
    if (!ztd_upstream_segments_ready(e, &useg, &nuseg)) {
        x->wait = W_SEGS;
        return ZTD_SRC_WAIT;
    }
    free(x->segs);
    if (!(x->segs = calloc(nuseg ? nuseg : 1, sizeof(*x->segs))))
        return no_memory(msg, cap);
    x->nsegs = nuseg;
    for (size_t i = 0; i < nuseg; i++)
        x->segs[i] = useg[i].comp ? ztd_seg_item(NULL, 0, useg[i].len)
                                  : ztd_seg_mem(useg[i].mem, useg[i].len);
    *segs = x->segs;
    *n = x->nsegs;
    if (!q->reads)
        return ZTD_ERR_NONE;
    ztd_err err = raw_items(x, q, e, useg, msg, cap);
    if (err)
        return err;
    for (size_t i = 0; i < nuseg && !q->waited; i++) { /* the first item the answer reads */
        uint64_t ready;
        ztd_cache_item *it = x->segs[i].item;
        if (!it)
            continue;
        ztd_cache_state st = ztd_cache_item_state(it, &ready);
        if (st == ZTD_CACHE_FAILED)
            return fill_failed(x, e, msg, cap);
        if (st == ZTD_CACHE_FILLING && ready == 0)
            return ask_item(x, it, 1);
        break;
    }
    return ZTD_ERR_NONE;
}

/* ---- waits, off libmicrohttpd's threads */

/* Wait (bounded) for wait_for bytes of the item: the limit is for a fill
 * that stalls; one that makes progress may take longer (the fill's own
 * timeouts end one that trickles). */
static ztd_err wait_item(up_q *x, ztd_entry *e, char *msg, size_t cap)
{
    uint64_t limit = x->u->timeout_ms * (x->u->retries + 2ull), waited = 0;
    uint64_t ready = 0, seen = 0;
    ztd_cache_state st = ZTD_CACHE_FILLING;
    while (st == ZTD_CACHE_FILLING && waited < limit) {
        st = ztd_cache_wait(x->wait_item, x->wait_for, 500, &ready);
        if (st == ZTD_CACHE_FILLING && ready >= x->wait_for)
            break;
        waited = ready > seen ? 0 : waited + 500;
        seen = ready;
    }
    if (st == ZTD_CACHE_FAILED)
        return fill_failed(x, e, msg, cap);
    if (st == ZTD_CACHE_FILLING && ready < x->wait_for) {
        /* still no byte (the fill queued behind others, or its upstream silent): a
         * 504 now, not a 200 whose body would wait on for as long as the fill does */
        snprintf(msg, cap, "upstream %s: no byte of the component in %.3g s",
                 ztd_upstream_url(x->u), (double)limit / 1000.0);
        return ZTD_ERR_UPSTREAM_TIMEOUT;
    }
    return ZTD_ERR_NONE;
}

/* Take every component of x->room, all or none. */
static ztd_err take_all(up_q *x, ztd_entry *e, char *msg, size_t cap)
{
    for (size_t i = 0; i < x->nroom; i++) {
        ztd_cache_item *it;
        ztd_err err = ztd_upstream_item(x->u, e, x->room[i], &it, msg, cap);
        if (err == ZTD_ERR_NONE && !hold(x, it)) {
            ztd_cache_item_release(it);
            err = no_memory(msg, cap);
        }
        if (err) {
            release_items(x);
            return err;
        }
    }
    return ZTD_ERR_NONE;
}

/* The cache had no room: everything in it is being sent. Sleep on the
 * cache's room condition (bounded by upstream_timeout) until responses end
 * and release theirs, then take every component the answer needs at once,
 * so that two requests never each hold what the other waits for. */
static ztd_err wait_room(up_q *x, ztd_entry *e, char *msg, size_t cap)
{
    uint64_t need = 0;
    for (size_t i = 0; i < x->nroom; i++)
        need += zt_component_length(x->room[i]);
    if (need > x->u->cache_size) { /* no amount of waiting makes room for it */
        snprintf(msg, cap,
                 "this answer needs %" PRIu64 " bytes of components in the upstream cache at "
                 "once, more than cache_size (%" PRIu64 " bytes): ask for a smaller range",
                 need, x->u->cache_size);
        return ZTD_ERR_CACHE_FULL;
    }
    ztd_cache *cache = ztd_upstream_cache(x->u);
    uint64_t until = ztd_now_ms() + x->u->timeout_ms;
    ztd_err err;
    for (;;) {
        uint64_t gen = ztd_cache_room_gen(cache);
        if ((err = take_all(x, e, msg, cap)) != ZTD_ERR_CACHE_FULL || ztd_now_ms() >= until)
            break;
        ztd_cache_wait_room(cache, gen, (int)(until - ztd_now_ms()));
    }
    x->roomed = true;
    return err;
}

static ztd_err up_wait(ztd_source_req *q, ztd_entry *e, char *msg, size_t cap)
{
    up_q *x = up_q_of(q, e);
    if (!x)
        return no_memory(msg, cap);
    wait_kind w = x->wait;
    x->wait = W_NONE;
    const ztd_upstream_seg *useg;
    size_t n;
    switch (w) {
    case W_ITEM:
        q->waited = true;
        return wait_item(x, e, msg, cap);
    case W_ROOM:
        return wait_room(x, e, msg, cap);
    case W_SEGS:
        return ztd_upstream_segments(x->u, e, &useg, &n, msg, cap);
    case W_NONE:
        break;
    }
    return ZTD_ERR_NONE;
}

const ztd_source_ops ztd_source_upstream = {
    .kind = "upstream",
    .servable = up_servable,
    .verified = up_verified,
    .checked = up_checked,
    .weak_unverified = true,
    .span_etag = ztd_upstream_span_etag,
    .component = up_component,
    .raw = up_raw,
    .wait = up_wait,
};
