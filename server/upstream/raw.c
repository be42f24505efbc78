/*
 * /raw through the upstream (see upstream.h): a whole file cut into its
 * components (served from cache items) and the bytes between them (fetched
 * once per entry and kept in memory).
 */
#include "upstream/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the whole file: components and the bytes between them */

/* By offset, the longest first: a span that holds others comes before them. */
static int by_offset(const void *a, const void *b)
{
    const zt_component *p = *(const zt_component *const *)a, *q = *(const zt_component *const *)b;
    uint64_t x = zt_component_offset(p), y = zt_component_offset(q);
    if (x != y)
        return x < y ? -1 : 1;
    x = zt_component_length(p), y = zt_component_length(q);
    return x > y ? -1 : x < y;
}

/* Every component of this file in file order (aliases of one span once; a
 * v2 part in a shard is bytes of another file). NULL when out of memory; *n =
 * 0 for a file without components. */
static const zt_component **components_by_offset(const zt_file *f, size_t *n)
{
    size_t total = 0;
    for (size_t i = 0; i < zt_file_object_count(f); i++)
        total += zt_object_component_count(zt_file_object_at(f, i));
    const zt_component **v = malloc((total ? total : 1) * sizeof(*v));
    if (!v)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        for (size_t j = 0; j < zt_object_component_count(o); j++)
            if (zt_component_shard(zt_object_component_at(o, j)) < 0)
                v[k++] = zt_object_component_at(o, j);
    }
    qsort(v, k, sizeof(*v), by_offset);
    *n = k;
    return v;
}

/* Segments of the file: gaps (mem filled later) and components. -1 when
 * components overlap (a layout /raw cannot be cut into), -2 out of memory. */
static int plan_segments(ztd_entry *e, const zt_component **v, size_t nc, uint64_t *gap_bytes)
{
    struct ztd_upstream_entry *up = e->up;
    ztd_upstream_seg *s = calloc(2 * nc + 1, sizeof(*s));
    if (!s)
        return -2;
    size_t n = 0;
    uint64_t at = 0, gaps = 0;
    for (size_t i = 0; i < nc; i++) {
        uint64_t off = zt_component_offset(v[i]), len = zt_component_length(v[i]);
        if (!len || (i && off + len <= at))
            continue; /* empty, or inside the span before (an alias: v2 stores a blob once) */
        if (off < at || off + len > e->size) {
            free(s);
            return -1;
        }
        if (off > at) {
            s[n++] = (ztd_upstream_seg){.at = at, .len = off - at};
            gaps += off - at;
        }
        s[n++] = (ztd_upstream_seg){.at = off, .len = len, .comp = v[i]};
        at = off + len;
    }
    if (at < e->size) {
        s[n++] = (ztd_upstream_seg){.at = at, .len = e->size - at};
        gaps += e->size - at;
    }
    up->segs = s;
    up->nsegs = n;
    *gap_bytes = gaps;
    return 0;
}

/* The gaps' bytes: from the ends fetched at open when they hold them, the
 * rest from upstream in one batch of requests. */
static ztd_err fill_gaps(ztd_upstream *u, ztd_entry *e, uint64_t gap_bytes, char *msg, size_t cap)
{
    struct ztd_upstream_entry *up = e->up;
    const uint8_t *head, *tail;
    size_t head_len, tail_len;
    uint64_t tail_at;
    zt_remote_file_ends(up->rf, &head, &head_len, &tail, &tail_at, &tail_len);
    if (!(up->gaps = malloc(gap_bytes ? gap_bytes : 1)))
        return ZTD_ERR_INTERNAL;
    zt_remote_span *spans = calloc(up->nsegs, sizeof(*spans));
    if (!spans)
        return ZTD_ERR_INTERNAL;
    size_t ns = 0;
    uint8_t *w = up->gaps;
    for (size_t i = 0; i < up->nsegs; i++) {
        ztd_upstream_seg *s = &up->segs[i];
        if (s->comp)
            continue;
        s->mem = w;
        if (head && s->at + s->len <= head_len)
            memcpy(w, head + s->at, s->len);
        else if (tail && s->at >= tail_at && s->at + s->len <= tail_at + tail_len)
            memcpy(w, tail + (s->at - tail_at), s->len);
        else
            spans[ns++] = (zt_remote_span){s->at, s->len, w};
        w += s->len;
    }
    zt_error ze;
    zt_status st = ZT_OK;
    if (ns) {
        zt_remote *sess = ztd_up_thread_session(u);
        st = sess ? zt_remote_read_spans(sess, up->rf, spans, ns, 4, &ze) : ZT_E_NOMEM;
        for (size_t i = 0; !st && i < ns; i++)
            COUNT(u, bytes, spans[i].len);
    }
    free(spans);
    if (st) {
        COUNT(u, errors, 1);
        if (st == ZT_E_CHANGED)
            ztd_up_expire(u, e);
        return ztd_up_err_of_remote(u, e->name, &ze, msg, cap);
    }
    return ZTD_ERR_NONE;
}

ztd_err ztd_upstream_segments(ztd_upstream *u, ztd_entry *e, const ztd_upstream_seg **segs,
                              size_t *n, char *msg, size_t cap)
{
    struct ztd_upstream_entry *up = e->up;
    if (ztd_upstream_segments_ready(e, segs, n))
        return ZTD_ERR_NONE;
    pthread_mutex_lock(&up->mu); /* one fetch of the gaps; the others wait for it */
    ztd_err err = ZTD_ERR_NONE;
    if (!up->segs_ready) {
        size_t nc;
        uint64_t gap_bytes = 0;
        const zt_component **v = components_by_offset(e->file, &nc);
        int rc = v ? plan_segments(e, v, nc, &gap_bytes) : -2;
        free(v);
        if (rc == -1) {
            snprintf(msg, cap, "\"%s\": components overlap; /raw is not served through the cache",
                     e->name);
            err = ZTD_ERR_UPSTREAM_UNSUPPORTED;
        } else if (rc == -2) {
            err = ZTD_ERR_INTERNAL;
        } else if ((err = fill_gaps(u, e, gap_bytes, msg, cap)) != ZTD_ERR_NONE) {
            free(up->segs);
            free(up->gaps);
            up->segs = NULL;
            up->gaps = NULL;
        } else {
            __atomic_store_n(&up->segs_ready, true, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&up->mu);
    if (err == ZTD_ERR_INTERNAL && !msg[0])
        snprintf(msg, cap, "out of memory");
    if (err)
        return err;
    *segs = up->segs;
    *n = up->nsegs;
    return ZTD_ERR_NONE;
}

bool ztd_upstream_segments_ready(ztd_entry *e, const ztd_upstream_seg **segs, size_t *n)
{
    struct ztd_upstream_entry *up = e->up;
    if (!__atomic_load_n(&up->segs_ready, __ATOMIC_ACQUIRE))
        return false;
    *segs = up->segs;
    *n = up->nsegs;
    return true;
}
