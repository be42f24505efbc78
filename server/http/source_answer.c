/*
 * Answers from an entry's source, shared by the read fronts (see
 * source_answer.h). A read pins the entry it answers from until the request
 * ends: as the request's context alone (no allocation) while nothing else is
 * held, or in a ztd_answer_state once its source holds bytes for it (cache
 * items) or the answer waits off the workers (opening an upstream file, a
 * fill's first byte, room in the cache).
 */
#include "http/source_answer.h"
#include "core/config.h"
#include "http/response.h"
#include "store/names.h"
#include "store/validators.h"
#include "upstream/origin_listing.h"
#include "upstream/upstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PH_NONE, PH_OPEN, PH_WAIT };

static void release_entry(void *e)
{
    ztd_entry_release(e);
}

void ztd_answer_pin(ztd_req *r, ztd_entry *e)
{
    ztd_req_set_ctx(r, e, release_entry);
}

static void state_free(void *p)
{
    ztd_answer_state *x = p;
    ztd_source_req_end(&x->q);
    ztd_entry_release(x->e);
    free(x->name);
    free(x);
}

ztd_answer_state *ztd_answer_state_of(ztd_req *r)
{
    return ztd_req_ctx_of(r, state_free);
}

ztd_answer_state *ztd_answer_state_for(ztd_server *s, ztd_req *r, ztd_entry *e, ztd_source_req *q)
{
    ztd_answer_state *x = ztd_answer_state_of(r);
    if (x)
        return x;
    if (!(x = calloc(1, sizeof(*x)))) {
        if (q)
            ztd_source_req_end(q);
        return NULL;
    }
    x->s = s;
    x->wait_at = (size_t)-1;
    if ((x->e = e))
        ztd_entry_retain(e); /* x's pin replaces the request's */
    if (q)
        x->q = *q;
    ztd_req_set_ctx(r, x, state_free);
    return x;
}

void ztd_answer_init_body(ztd_body *b, ztd_server *s, ztd_entry *e)
{
    memset(b, 0, sizeof(*b));
    b->entry = e;
    b->last_modified = e->mtime_ns / 1000000000;
    b->last_modified_text = e->last_modified;
    /* With read tokens a shared cache must not hand responses to others. */
    b->cache_control = s->cfg->require_read_token ? "private, no-cache" : s->cfg->cache_control;
    b->max_ranges = s->cfg->max_ranges;
    b->max_decode_streams = s->cfg->max_decode_streams;
    b->tls = s->tls_cert != NULL;
}

void ztd_answer_dress(ztd_body *b, const ztd_req *r)
{
    const ztd_dress *d = r->dress;
    if (!d)
        return;
    if (d->etag[0])
        memcpy(b->etag, d->etag, sizeof(b->etag));
    b->add_headers = d->add_headers;
    b->ctx = d->ctx;
}

/* ---- waits */

static void wait_job(ztd_offload *o)
{
    ztd_answer_state *x = (ztd_answer_state *)o;
    x->msg[0] = 0;
    x->err = ztd_entry_source(x->e)->wait(&x->q, x->e, x->msg, sizeof(x->msg));
}

/* The source asked to wait: off the workers, on the upstream's queue, then
 * the same answer again (libmicrohttpd calls the handler once it resumes). */
static enum MHD_Result wait_then_answer(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                        ztd_entry *e, ztd_source_req *q, ztd_entry_answer *answer)
{
    ztd_answer_state *x = ztd_answer_state_of(r);
    if (!x && !(x = ztd_answer_state_for(s, r, e, q)))
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    memset(&x->off, 0, sizeof(x->off));
    x->phase = PH_WAIT;
    x->answer = answer;
    if (!ztd_offload_wait(s, c, &x->off, wait_job))
        return MHD_YES;
    return answer(s, c, r, e); /* ran here */
}

bool ztd_answer_wait_failed(ztd_req *r, ztd_err *err, const char **msg)
{
    ztd_answer_state *x = ztd_answer_state_of(r);
    if (!x || x->phase != PH_WAIT)
        return false;
    x->phase = PH_NONE;
    *err = x->err;
    *msg = x->msg;
    return x->err != ZTD_ERR_NONE;
}

void ztd_answer_plan_reads(struct MHD_Connection *c, ztd_req *r, const ztd_body *b,
                           ztd_source_req *q)
{
    ztd_plan plan;
    ztd_body_plan(c, b, &plan);
    q->reads = strcmp(r->method, "HEAD") != 0 && b->len > 0 &&
               (plan.status == ZTD_PLAN_FULL || plan.status == ZTD_PLAN_PARTIAL);
    q->whole = plan.status == ZTD_PLAN_PARTIAL && plan.nspans > 1;
    q->lo = 0;
    q->hi = b->len;
    if (plan.status == ZTD_PLAN_PARTIAL && plan.nspans == 1) {
        q->lo = plan.spans[0].start;
        q->hi = plan.spans[0].start + plan.spans[0].len;
    }
}

enum MHD_Result ztd_answer_source(ztd_server *s, struct MHD_Connection *c, ztd_req *r, ztd_entry *e,
                                  ztd_source_req *q, ztd_err err, const char *msg,
                                  const ztd_body *b, ztd_entry_answer *answer)
{
    ztd_answer_state *x = ztd_answer_state_of(r);
    if (q->priv && !x && !ztd_answer_state_for(s, r, e, q))
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    if (err == ZTD_SRC_WAIT)
        return wait_then_answer(s, c, r, e, q, answer);
    if (err)
        return ztd_error(c, r, err, "%s", msg);
    return ztd_send_body(c, r, b);
}

/* ---- the one raw path */

enum MHD_Result ztd_answer_raw(ztd_server *s, struct MHD_Connection *c, ztd_req *r, ztd_entry *e,
                               const char *disposition, ztd_entry_answer *answer)
{
    return ztd_answer_raw_adjusted(s, c, r, e, disposition, NULL, NULL, answer);
}

bool ztd_answer_prepare(struct MHD_Connection *c, ztd_req *r, ztd_body *b, ztd_body_adjust *adjust,
                        void *ctx, ztd_source_req *qs, ztd_source_req **q, enum MHD_Result *out)
{
    ztd_answer_dress(b, r);
    if (adjust && adjust(c, r, b, ctx, out))
        return true;
    ztd_answer_state *x = ztd_answer_state_of(r);
    *q = x ? &x->q : qs;
    ztd_answer_plan_reads(c, r, b, *q);
    return false;
}

enum MHD_Result ztd_answer_raw_adjusted(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                        ztd_entry *e, const char *disposition,
                                        ztd_body_adjust *adjust, void *ctx,
                                        ztd_entry_answer *answer)
{
    char msg[700];
    const char *wmsg;
    ztd_err err;
    if (ztd_answer_wait_failed(r, &err, &wmsg))
        return ztd_error(c, r, err, "%s", wmsg);
    ztd_body b;
    ztd_answer_init_body(&b, s, e);
    b.len = e->size;
    b.content_type = "application/octet-stream";
    b.content_disposition = disposition;
    /* A plain file's sha256 names its bytes once the verifier hashed them all
     * (and the file is unchanged since), or (upstream) once the fill checked
     * them, before the answer's first byte: as for a verified component. */
    const uint8_t *sha = ztd_entry_plain_sha256(e);
    bool weak = false;
    if (sha && !ztd_entry_source(e)->verified(e, NULL)) {
        sha = NULL; /* a fill streams them unchecked: a weak ETag, no Repr-Digest */
        weak = ztd_entry_source(e)->weak_unverified;
    }
    if (sha) {
        ztd_sha256_etag(sha, b.etag);
        b.sha256 = sha;
    } else {
        ztd_raw_etag(e, b.etag);
        if (weak)
            ztd_etag_weaken(b.etag, sizeof(b.etag));
    }
    enum MHD_Result out;
    ztd_source_req qs = {0}, *q;
    if (ztd_answer_prepare(c, r, &b, adjust, ctx, &qs, &q, &out))
        return out;
    q->named = sha != NULL;
    const ztd_body_seg *segs = NULL;
    size_t n = 0;
    err = ztd_entry_source(e)->raw(q, e, &segs, &n, msg, sizeof(msg));
    if (!err) {
        b.segs = segs == &qs.one ? &b.one : segs;
        if (segs == &qs.one)
            b.one = qs.one;
        b.nsegs = n;
    }
    return ztd_answer_source(s, c, r, e, q, err, msg, &b, answer);
}

/* ---- files: the catalog's, or the upstream's */

bool ztd_answer_as_view(ztd_req *r)
{
    ztd_answer_state *x = ztd_answer_state_of(r);
    return x && x->as_view;
}

static bool st_name(const char *name)
{
    size_t n = strlen(name), k = strlen(".safetensors");
    return n > k && !strcmp(name + n - k, ".safetensors");
}

/* x->name is the file the upstream lists it as the view of, when it does:
 * from the listing at hand (fetch false), or fetched (blocking). */
static void resolve_view(ztd_answer_state *x, bool fetch)
{
    ztd_uplist *l = ztd_upstream_file_listing(x->s->upstream);
    if (x->view_checked || !l || !st_name(x->name))
        return;
    char *of = NULL;
    if (fetch) {
        of = ztd_uplist_view_of_fetched(l, x->name);
    } else {
        json_t *files = ztd_uplist_peek(l);
        if (!files)
            return; /* the open job fetches it */
        of = ztd_uplist_view_of(files, x->name);
        json_decref(files);
    }
    x->view_checked = true;
    if (of) {
        free(x->name);
        x->name = of;
        x->as_view = true;
    }
}

static void open_job(ztd_offload *o)
{
    ztd_answer_state *x = (ztd_answer_state *)o;
    resolve_view(x, true);
    x->err = ztd_upstream_get(x->s->upstream, x->name, &x->e, x->msg, sizeof(x->msg));
}

/* A name the catalog does not hold, asked of the upstream: opened off the
 * workers (on the upstream's own queue) unless its entry is at hand. */
static enum MHD_Result open_failed(struct MHD_Connection *c, ztd_req *r, ztd_answer_state *x)
{
    return ztd_error(c, r, x->err, "%s", x->msg); /* in the front's form (ztd_req.error_answer) */
}

enum MHD_Result ztd_answer_upstream_file(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                         const char *name, ztd_entry_answer *answer)
{
    ztd_answer_state *x = ztd_answer_state_for(s, r, NULL, NULL);
    if (!x || !(x->name = strdup(name)))
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    x->answer = answer;
    resolve_view(x, false);
    if (!(x->e = ztd_upstream_peek(s->upstream, x->name)) &&
        !(x->err = ztd_upstream_known_missing(s->upstream, x->name, x->msg, sizeof(x->msg)))) {
        x->phase = PH_OPEN;
        if (!ztd_offload_wait(s, c, &x->off, open_job))
            return MHD_YES;
    }
    x->phase = PH_NONE;
    if (!x->e)
        return open_failed(c, r, x);
    return answer(s, c, r, x->e);
}

bool ztd_answer_resume(ztd_server *s, struct MHD_Connection *c, ztd_req *r, enum MHD_Result *out)
{
    ztd_answer_state *x = ztd_answer_state_of(r);
    if (!x || !x->off.started)
        return false;
    if (!ztd_offload_done(&x->off)) {
        *out = MHD_YES;
        return true;
    }
    if (x->phase == PH_OPEN) {
        x->phase = PH_NONE;
        if (!x->e) {
            *out = open_failed(c, r, x);
            return true;
        }
    }
    *out = x->answer(s, c, r, x->e);
    return true;
}

enum MHD_Result ztd_answer_not_tensor(struct MHD_Connection *c, ztd_req *r, const char *name)
{
    return ztd_error(c, r, ZTD_ERR_NOT_A_TENSOR_FILE,
                     "\"%s\" is a plain file (format \"file\"): it has no objects, components "
                     "or safetensors view; its bytes are at /v1/files/%s/raw",
                     name, name);
}

/* The name routed as a plain file's is not in the catalog: is one of its
 * leading paths a plain file (config.json/objects/x: a tensor-only route
 * under a plain file)? That file's name into out, or false. */
static bool plain_ancestor(const ztd_snapshot *snap, const char *name, size_t len, char *out,
                           size_t cap)
{
    for (size_t i = 1; i < len; i++) {
        if (name[i] != '/')
            continue;
        ztd_entry *e = ztd_snapshot_find(snap, name, i);
        if (e && ztd_entry_is_plain(e) && i < cap) {
            memcpy(out, name, i);
            out[i] = 0;
            return true;
        }
    }
    return false;
}

enum MHD_Result ztd_answer_file(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                ztd_entry_answer *answer)
{
    enum MHD_Result res;
    if (ztd_answer_resume(s, c, r, &res))
        return res;
    ztd_route_match *m = r->match;
    ztd_snapshot *snap = ztd_catalog_acquire(s->catalog);
    if (!snap)
        return ztd_fail(c, r, ZTD_ERR_NOT_READY);
    ztd_entry *e = ztd_snapshot_find(snap, m->file, m->file_len);
    char plain[ZTD_PATH_MAX + 1];
    bool under_plain = !e && plain_ancestor(snap, m->file, m->file_len, plain, sizeof(plain));
    if (e)
        ztd_entry_retain(e);
    ztd_snapshot_release(snap);
    if (under_plain)
        return ztd_answer_not_tensor(c, r, plain);
    /* The upstream opens tensor files as models, every other name as a plain file. */
    if (!e && s->upstream)
        return ztd_answer_upstream_file(s, c, r, m->file, answer);
    if (!e)
        return ztd_error(c, r, ZTD_ERR_FILE_NOT_FOUND, "no file \"%s\" in the catalog", m->file);
    ztd_answer_pin(r, e);
    if (ztd_entry_virtual(e)) /* a view or an index: the answer knows them */
        return answer(s, c, r, e);
    if (!ztd_entry_ok(e) && e->retry)
        return ztd_error(c, r, ZTD_ERR_FILE_UNAVAILABLE,
                         "file \"%s\" cannot be opened now (retried by each scan): %s", m->file,
                         e->error ? e->error : "unavailable");
    if (!ztd_entry_ok(e))
        return ztd_error(c, r, ZTD_ERR_FILE_INVALID, "file \"%s\" is not served: %s", m->file,
                         e->error ? e->error : "invalid");
    return answer(s, c, r, e);
}
