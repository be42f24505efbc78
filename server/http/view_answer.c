/*
 * The answer of a file's safetensors view, for every front that serves it
 * (/v1/files/{file}/safetensors, and the fronts that list views as objects):
 * byte
 * for byte what `zt convert FILE -o OUT.safetensors` writes (libztensor's
 * zt_st_view, kept per file version by store/st_views.h). The body is the
 * header in memory, then each tensor as its component's segment from the
 * entry's source (store/source.h): a file span for a raw component, the
 * decoded stream for zstd, a cache item through --upstream. Only the tensors
 * the planned range covers are asked of the source; the others are
 * placeholders of their length that nothing reads. Adjacent file spans are
 * one segment, so a raw model's tensors are one span: a range within it goes
 * out by sendfile from the source file; one that crosses the header goes
 * through seg_stream.h's reader (pread into a 256 KiB buffer per response,
 * so that 64 downloads of a 1 GiB view hold no mapping of it). A file that is
 * safetensors already is its own view (its /raw bytes); one that safetensors
 * cannot express is refused (422 view_unsupported, naming the object), never
 * answered in part.
 */
#include "http/view_answer.h"
#include "core/grow.h"
#include "http/decode_stream.h"
#include "http/disposition.h"
#include "http/response.h"
#include "core/config.h"
#include "store/manifest_marks.h"
#include "store/st_views.h"
#include "store/validators.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the body's segments */

typedef struct seglist {
    ztd_body_seg *v;
    size_t n, cap;
} seglist;

static bool adjacent(const ztd_body_seg *a, const ztd_body_seg *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == ZTD_SEG_ITEM) /* placeholders */
        return !a->item && !b->item;
    return a->kind == ZTD_SEG_FILE && a->fd == b->fd && !a->immutable && !b->immutable &&
           a->off + a->len == b->off;
}

/* Appends g, or lengthens the last segment when g continues it. */
static bool push(seglist *l, ztd_body_seg g)
{
    if (g.len == 0)
        return true;
    if (l->n && adjacent(&l->v[l->n - 1], &g)) {
        l->v[l->n - 1].len += g.len;
        return true;
    }
    if (ZTD_GROW_ITEMS(l->v, l->cap, l->n + 1, 16) != 0)
        return false;
    l->v[l->n++] = g;
    return true;
}

/* Bytes no answer reads: of the right length, asked of no source. */
static ztd_body_seg placeholder(uint64_t len)
{
    return ztd_seg_item(NULL, 0, len);
}

/* ---- validators */

/* Are all of an upstream file's tensors here and checked? Asked every time:
 * a cache item may be dropped and filled again. */
static bool all_checked(ztd_entry *e, ztd_st_view *v)
{
    size_t n = zt_st_view_count(v->v);
    zt_st_tensor t;
    for (size_t i = 0; i < n; i++) {
        zt_st_view_tensor(v->v, i, &t);
        if (!ztd_entry_source(e)->checked(e, t.component))
            return false;
    }
    return true;
}

/* Were all the view's digests checked against their bytes (and the file
 * not changed since)? The scan goes on where the last one stopped: a local
 * file's digest states only move forward. */
static bool all_verified(ztd_entry *e, ztd_st_view *v)
{
    if (ztd_entry_source(e) != &ztd_source_local)
        return all_checked(e, v);
    size_t n = zt_st_view_count(v->v), i = __atomic_load_n(&v->verified, __ATOMIC_RELAXED);
    zt_st_tensor t;
    for (; i < n; i++) {
        zt_st_view_tensor(v->v, i, &t);
        if (!ztd_entry_source(e)->verified(e, t.component))
            break;
    }
    size_t seen = __atomic_load_n(&v->verified, __ATOMIC_RELAXED);
    while (seen < i && !__atomic_compare_exchange_n(&v->verified, &seen, i, true, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED))
        ;
    if (i < n)
        return false;
    if (n == 0)
        return true;
    zt_st_view_tensor(v->v, 0, &t);
    return ztd_entry_source(e)->verified(e, t.component); /* the file is as it was when checked */
}

/* The digests' ETag once they name the bytes, else the file's (store/st_views.h). */
static void view_etag(ztd_entry *e, ztd_st_view *v, char out[96])
{
    const char *t = v->digested && all_verified(e, v) ? v->digest_etag : v->file_etag;
    memcpy(out, t, strlen(t) + 1);
}

/* "STEM.safetensors" of "dir/STEM.zt", for Content-Disposition. */
static void view_name(const char *file, char *out, size_t cap)
{
    static const char *const exts[] = {".safetensors", ".zt", ".alt"};
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    size_t n = strlen(base);
    for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
        size_t k = strlen(exts[i]);
        if (n > k && !strcmp(base + n - k, exts[i])) {
            n -= k;
            break;
        }
    }
    snprintf(out, cap, "%.*s.safetensors", (int)n, base);
}

/* ---- asking the source */

/* Can tensor t be sent? ZTD_ERR_NONE, or why not with msg: its source
 * cannot give it (a v2 shard missing), or it is known not to decode. */
static ztd_err sendable(ztd_entry *e, const zt_st_tensor *t, char *msg, size_t cap)
{
    ztd_err err = ztd_entry_source(e)->servable(e, t->object, t->component, msg, cap);
    ztd_body_fail f = {0};
    ztd_body_seg g = ztd_seg_decode(e->file, t->component);
    if (!err && t->decode && ztd_dstream_refused(e, &g, &f))
        err = ztd_errf(msg, cap, f.err, "%s", f.msg);
    return err;
}

/* The segments of view v for an answer over [q->lo, q->hi): ZTD_ERR_NONE
 * with l filled, ZTD_SRC_WAIT with *wait_at the tensor to wait for, or the
 * error with msg. Each tensor in the span is checked (sendable), for HEAD too
 * (checks), so that HEAD answers as GET would; only an answer that reads
 * (q->reads) asks the source for them. A wait's tensor is not asked to wait
 * again; for the others, an upstream fill's first byte is waited for only for
 * the first raw tensor the answer reads (later ones stream as they land), and
 * a zstd tensor's whole item always (it is decoded from the cache). */
static ztd_err segments(ztd_entry *e, ztd_st_view *v, ztd_source_req *q, bool checks,
                        size_t *wait_at, seglist *l, char *msg, size_t cap)
{
    size_t hlen, n = zt_st_view_count(v->v);
    const void *hdr = zt_st_view_header(v->v, &hlen);
    uint64_t size = zt_st_view_size(v->v), at = hlen;
    bool waited = q->waited, first_raw = true;
    ztd_err err = ZTD_ERR_NONE;
    if (!push(l, ztd_seg_mem(hdr, hlen)))
        return ztd_errf(msg, cap, ZTD_ERR_INTERNAL, "out of memory");
    for (size_t i = checks ? zt_st_view_locate(v->v, q->lo) : n; i < n && !err; i++) {
        zt_st_tensor t;
        zt_st_view_tensor(v->v, i, &t);
        if (t.offset >= q->hi)
            break;
        if (t.length == 0)
            continue;
        if ((err = sendable(e, &t, msg, cap)))
            break;
        if (!q->reads)
            continue; /* a placeholder at the end stands for it */
        if (!push(l, placeholder(t.offset - at)))
            return ztd_errf(msg, cap, ZTD_ERR_INTERNAL, "out of memory");
        q->waited = (waited && i == *wait_at) || (!t.decode && !first_raw);
        first_raw &= t.decode;
        ztd_body_seg g;
        err = ztd_entry_source(e)->component(q, e, t.component, t.decode, &g, msg, cap);
        if (err == ZTD_SRC_WAIT)
            *wait_at = i;
        else if (!err && !push(l, g))
            err = ztd_errf(msg, cap, ZTD_ERR_INTERNAL, "out of memory");
        at = t.offset + t.length;
    }
    q->waited = waited;
    if (!err && !push(l, placeholder(size - at)))
        err = ztd_errf(msg, cap, ZTD_ERR_INTERNAL, "out of memory");
    return err;
}

/* Does the answer to b send bytes (or, for HEAD, would it)? */
static bool sends(struct MHD_Connection *c, const ztd_body *b)
{
    ztd_plan plan;
    ztd_body_plan(c, b, &plan);
    return b->len > 0 && (plan.status == ZTD_PLAN_FULL || plan.status == ZTD_PLAN_PARTIAL);
}

/* A tensor whose stored bytes the background verifier found not to match
 * their digest: the view is not sent (unless serve_corrupt), as the
 * component itself is not; the error names it and where it is. */
static enum MHD_Result corrupt_tensor(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                      ztd_entry *e, ztd_st_view *v, bool *answered)
{
    *answered = false;
    if (s->cfg->serve_corrupt || !ztd_entry_mismatches(e))
        return MHD_YES;
    size_t n = zt_st_view_count(v->v);
    zt_st_tensor t;
    for (size_t i = 0; i < n; i++) {
        zt_st_view_tensor(v->v, i, &t);
        if (ztd_digest_state_of(&e->digests, t.component) != ZTD_DIGEST_MISMATCH)
            continue;
        *answered = true;
        unsigned long long off = zt_component_offset(t.component),
                           len = zt_component_length(t.component);
        return ztd_error(c, r, ZTD_ERR_BLOB_DIGEST_MISMATCH,
                         "\"%s\": tensor \"%s\" of its safetensors view (object \"%s\", "
                         "component \"%s\", bytes %llu..%llu of the file, byte %llu): the stored "
                         "bytes do not hash to the manifest's digest (found by the digest "
                         "verifier); the view is not served (serve_corrupt serves it)",
                         e->name, t.name, zt_object_name(t.object), zt_component_role(t.component),
                         off, off + len, off);
    }
    return MHD_YES;
}

/* ---- the answer */

enum MHD_Result ztd_answer_view(ztd_server *s, struct MHD_Connection *c, ztd_req *r, ztd_entry *e)
{
    return ztd_answer_view_adjusted(s, c, r, e, NULL, NULL, ztd_answer_view);
}

enum MHD_Result ztd_answer_view_adjusted(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                         ztd_entry *e, ztd_body_adjust *adjust, void *ctx,
                                         ztd_entry_answer *again)
{
    char msg[700], name[4200], disp[4 * 4200];
    const char *wmsg;
    ztd_err err;
    if (ztd_entry_is_plain(e))
        return ztd_answer_not_tensor(c, r, e->name);
    if (ztd_answer_wait_failed(r, &err, &wmsg))
        return ztd_error(c, r, err, "%s", wmsg);
    if (e->view_of) /* STEM.safetensors/safetensors: the view is its own view */
        e = e->view_of;
    if (e->st_index)
        return ztd_error(c, r, ZTD_ERR_VIEW_UNSUPPORTED,
                         "\"%s\" is a model's index (JSON), not a tensor file", e->name);
    char id[96];
    ztd_raw_etag(e, id);
    ztd_st_view *v = ztd_st_view_get(&e->st_view, e->file, id);
    if (!v)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    view_name(e->name, name, sizeof(name));
    const char *d = ztd_content_disposition(name, disp, sizeof(disp)) ? disp : NULL;
    if (v->own)
        return ztd_answer_raw_adjusted(s, c, r, e, d, adjust, ctx, again);
    if (v->err)
        return ztd_error(c, r, v->err, "\"%s\": %s", e->name, v->msg);
    bool corrupt;
    enum MHD_Result refused = corrupt_tensor(s, c, r, e, v, &corrupt);
    if (corrupt)
        return refused;
    /* as /raw: an answer from a file changed in place would not be this view */
    if (ztd_entry_changed(e))
        return ztd_error(c, r, ZTD_ERR_FILE_CHANGED,
                         "\"%s\" changed on disk since it was opened (written or truncated in "
                         "place?); retry once it has been rescanned",
                         e->name);
    ztd_body b;
    ztd_answer_init_body(&b, s, e);
    b.len = zt_st_view_size(v->v);
    b.content_type = "application/octet-stream";
    b.content_disposition = d;
    view_etag(e, v, b.etag);
    enum MHD_Result out;
    ztd_source_req qs = {0}, *q;
    if (ztd_answer_prepare(c, r, &b, adjust, ctx, &qs, &q, &out))
        return out;
    ztd_answer_state *x = ztd_answer_state_of(r);
    q->whole = false; /* several ranges of several segments are answered whole (http/body.h) */
    size_t wait_at = x ? x->wait_at : (size_t)-1;
    seglist l = {0};
    bool checks = q->reads || (!strcmp(r->method, "HEAD") && sends(c, &b));
    err = segments(e, v, q, checks, &wait_at, &l, msg, sizeof(msg));
    b.segs = l.v;
    b.nsegs = l.n;
    if (err == ZTD_SRC_WAIT) {
        if (!(x = ztd_answer_state_for(s, r, e, q))) {
            free(l.v);
            return ztd_fail(c, r, ZTD_ERR_INTERNAL);
        }
        x->wait_at = wait_at;
        q = &x->q;
    }
    enum MHD_Result res = ztd_answer_source(s, c, r, e, q, err, msg, &b, again);
    free(l.v); /* the response keeps what it needs of the segments */
    return res;
}
