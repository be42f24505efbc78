/*
 * Read routes (see handlers.h). Each pins the catalog entry it answers from, as
 * the request's state, until libmicrohttpd is done with the response.
 */
#include "handlers/handlers.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/decimal.h"
#include "core/hex.h"
#include "http/body.h"
#include "http/headers.h"
#include "http/response.h"
#include "store/catalog.h"
#include "store/precompressed.h"
#include "handlers/listing.h"
#include "store/catalog_v2.h"
#include "upstream/upstream.h"
#include "http/offload.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define IMMUTABLE "public, max-age=31536000, immutable"

/* ---- tensor metadata headers */

typedef struct meta_ctx {
    const zt_object *o;
    const zt_component *c;
} meta_ctx;

/* The metadata a client needs to use the bytes. Offsets, stored lengths and
 * digests are in the object's JSON (and a verified digest in ETag and Repr-Digest):
 * every response header costs each request about as much as the route lookup. */
static bool add_meta(struct MHD_Response *resp, const void *p)
{
    const meta_ctx *m = p;
    char buf[2048], *w = buf;
    bool ok = true;
    const uint64_t *shape = zt_object_shape(m->o);
    for (size_t i = 0; i < zt_object_ndim(m->o) && w < buf + sizeof(buf) - 24; i++) {
        if (i)
            *w++ = ',';
        w += ztd_decimal(w, shape[i], 1);
    }
    *w = 0;
    if (buf[0])
        ok &= MHD_add_response_header(resp, "X-Ztensor-Shape", buf) == MHD_YES;
    ok &= MHD_add_response_header(resp, "X-Ztensor-Format", zt_object_format(m->o)) == MHD_YES;
    ok &= MHD_add_response_header(resp, "X-Ztensor-Dtype",
                                  zt_dtype_name(zt_component_dtype(m->c))) == MHD_YES;
    if (zt_component_type(m->c))
        ok &= MHD_add_response_header(resp, "X-Ztensor-Type", zt_component_type(m->c)) == MHD_YES;
    ok &= MHD_add_response_header(resp, "X-Ztensor-Encoding", zt_component_encoding_name(m->c)) ==
          MHD_YES;
    return ok;
}

/* "\"<s>\"" into out (s is a manifest digest string, shorter than out). */
static void quote_etag(char *out, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (n + 3 > cap)
        n = cap - 3;
    out[0] = '"';
    memcpy(out + 1, s, n);
    out[n + 1] = '"';
    out[n + 2] = 0;
}

/* "\"<tag>-<32 hex of the file ETag>\"" into out (96 bytes): a JSON
 * representation's validator, derived from the file's (from a v2 file's
 * identity when it has one: the same on every copy and every tier). */
static void tagged_etag(char out[96], const char *tag, const ztd_entry *e)
{
    size_t n = strlen(tag);
    const char *id = ztd_v2_json_id(e->v2);
    out[0] = '"';
    memcpy(out + 1, tag, n);
    out[n + 1] = '-';
    memcpy(out + n + 2, id ? id : e->file_etag + 1, 32);
    memcpy(out + n + 34, "\"", 2);
}

static void release_entry(void *e)
{
    ztd_entry_release(e);
}

/* The entry answers this request: it stays open until the request ends. */
static void pin(ztd_req *r, ztd_entry *e)
{
    ztd_req_set_ctx(r, e, release_entry);
}

/* An object's JSON is made per request: it lives as long as the pin. */
typedef struct object_ctx {
    ztd_entry *e;
    char *json;
} object_ctx;

static void object_ctx_free(void *p)
{
    object_ctx *x = p;
    ztd_entry_release(x->e);
    zt_free(x->json);
    free(x);
}

static void init_body(ztd_body *b, ztd_server *s, ztd_entry *e)
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

/* A component's bytes: its metadata headers (meta lives as long as b). */
static void init_component_body(ztd_body *b, ztd_server *s, ztd_entry *e, meta_ctx *meta)
{
    init_body(b, s, e);
    b->add_headers = add_meta;
    b->ctx = meta;
    b->content_type = "application/octet-stream";
}

static enum MHD_Result send_upstream_component(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                               ztd_entry *e, const zt_object *o,
                                               const zt_component *comp, bool blob);

/* A component's bytes. Its sha256 names them (ETag, Repr-Digest, and for a
 * blob URL a year of immutability) only once the verifier has hashed them and
 * while the file has not been written in place since (one fstat): otherwise,
 * and forever when they do not match, the validators are those of a
 * digest-less component. */
static enum MHD_Result send_component(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                      ztd_entry *e, const zt_object *o, const zt_component *comp,
                                      bool blob)
{
    if (e->up)
        return send_upstream_component(s, c, r, e, o, comp, blob);
    meta_ctx meta = {o, comp};
    ztd_body b;
    init_component_body(&b, s, e, &meta);
    bool verified =
        ztd_digest_state_of(&e->digests, comp) == ZTD_DIGEST_VERIFIED && ztd_entry_unchanged(e);
    if (blob && verified)
        b.cache_control =
            s->cfg->require_read_token ? "private, max-age=31536000, immutable" : IMMUTABLE;
    /* v2: a part in a shard that is missing or outside the root, or in an
     * encoding nobody here decodes, has no bytes to send. */
    if (!ztd_v2_part_servable(e->v2, comp))
        return ztd_error(c, r, ZTD_ERR_SHARD_UNAVAILABLE,
                         "component \"%s\" of object \"%s\" is in shard %d of \"%s\", which is "
                         "missing, wrong or outside the root",
                         zt_component_role(comp), zt_object_name(o), zt_component_shard(comp),
                         e->name);
    if (zt_component_encoding(comp) == ZT_ENC_OTHER)
        return ztd_error(c, r, ZTD_ERR_ENCODING_UNSUPPORTED,
                         "component \"%s\" of object \"%s\" is stored in encoding \"%s\", "
                         "which this server cannot decode; its stored bytes are %llu bytes at "
                         "offset %llu of the file",
                         zt_component_role(comp), zt_object_name(o),
                         zt_component_encoding_name(comp),
                         (unsigned long long)zt_component_length(comp),
                         (unsigned long long)zt_component_offset(comp));
    /* A digest validates only the representation it covers: the stored bytes
     * (1.x), or the decoded bytes (v2); for a raw component both. xxh3 (v2)
     * names a representation as well as sha256 does; crc32c is not used. And
     * only once the server has checked it (verified). */
    zt_digest_kind dk = zt_component_digest_kind(comp);
    bool zstd = zt_component_encoding(comp) == ZT_ENC_ZSTD;
    bool of_decoded = zt_component_digest_scope(comp) == ZT_DIGEST_OF_DECODED;
    bool named = verified && (dk == ZT_DIGEST_SHA256 || (of_decoded && dk == ZT_DIGEST_XXH3));
    bool covers_stored = !zstd || !of_decoded, covers_decoded = !zstd || of_decoded;
    const uint8_t *sha =
        verified && dk == ZT_DIGEST_SHA256 ? zt_component_digest_bytes(comp, NULL) : NULL;
    if (zstd)
        b.vary_accept_encoding = true;
    if (!zstd || ztd_accepts_zstd(ztd_header(c, "Accept-Encoding"))) {
        /* The stored bytes: sendfile straight from the file. */
        ztd_body_single(&b, ztd_seg_file(zt_component_fd(e->file, comp), zt_component_offset(comp),
                                         zt_component_length(comp)));
        b.content_encoding = zstd ? "zstd" : NULL;
        b.sha256 = covers_stored ? sha : NULL;
        if (named && covers_stored)
            quote_etag(b.etag, sizeof(b.etag), zt_component_digest(comp));
        else
            ztd_identity_etag(e, zt_component_offset(comp), b.len, b.etag);
        /* Verified raw bytes never change for this entry, nor do their headers:
         * a small component's answer can be built once, by its second request
         * (http/body.h, catalog.h). An answer already built is used even when
         * the bound has no room for new ones. */
        if (named && !zstd && dk == ZT_DIGEST_SHA256 && b.len <= ZTD_SHARED_SPAN_MAX)
            b.shared = ztd_entry_component_slot(e, comp, blob, ztd_body_shared_room(b.len),
                                                &b.shared_asked);
    } else {
        /* Decoded on the fly: another representation, so another ETag. */
        ztd_body_single(&b, ztd_seg_decode(e->file, comp));
        b.sha256 = covers_decoded ? sha : NULL;
        char id[40];
        ztd_identity_etag(e, zt_component_offset(comp), b.len, id);
        if (named && covers_decoded)
            quote_etag(b.etag, sizeof(b.etag), zt_component_digest(comp));
        else if (named)
            snprintf(b.etag, sizeof(b.etag), "\"%s.identity\"", zt_component_digest(comp));
        else
            snprintf(b.etag, sizeof(b.etag), "\"%.32s.identity\"", id + 1);
    }
    return ztd_send_body(c, r, &b);
}

static void entry_retain(void *e)
{
    ztd_entry_retain(e);
}

/* The manifest JSON, precompressed (store/precompressed.h) for a client that accepts
 * zstd or gzip, zstd when it accepts both equally: a thirtieth to a fiftieth of the bytes
 * for a 1,000-object manifest. Each coding is another representation with its
 * own ETag; every answer varies with Accept-Encoding. From memory:
 * libmicrohttpd then sends headers and body in one sendmsg. The same bytes from
 * a memfd with sendfile (headers sent apart, cork toggling, a dup and close
 * per response) measured 4-33% fewer requests per second for a 228 KB
 * manifest, and no better for a 2.3 MB one. */
static enum MHD_Result send_manifest(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                     ztd_entry *e)
{
    size_t json_len;
    const char *json = ztd_entry_manifest_json(e, &json_len);
    if (!json)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    const char *ae = ztd_header(c, "Accept-Encoding");
    double qz = ztd_accept_q(ae, "zstd"), qg = ztd_accept_q(ae, "gzip");
    const ztd_coded *cd = NULL;
    ztd_coding k = qz > 0 && qz >= qg ? ZTD_CODING_ZSTD : ZTD_CODING_GZIP;
    if (qz > 0 || qg > 0) {
        ztd_coded_owner owner = {e, entry_retain, release_entry};
        cd = ztd_coded_get(&e->manifest_coded, k, json, json_len, s->workq, &owner);
    }
    ztd_body b;
    init_body(&b, s, e);
    ztd_body_single(&b, ztd_seg_mem(cd ? cd->bytes : json, cd ? cd->len : json_len));
    b.content_type = "application/json";
    b.content_encoding = cd ? ztd_coding_name(k) : NULL;
    b.vary_accept_encoding = true;
    b.shared = &e->manifest_resp[cd ? 1 + k : 0];
    tagged_etag(b.etag,
                !cd                    ? "manifest"
                : k == ZTD_CODING_ZSTD ? "manifest.zstd"
                                       : "manifest.gzip",
                e);
    return ztd_send_body(c, r, &b);
}

/* The object JSON is built per request and kept with the pin. */
static enum MHD_Result send_object(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                   ztd_entry *e, const zt_object *o)
{
    zt_error err;
    object_ctx *x = calloc(1, sizeof(*x));
    if (!x)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    if (!(x->json = zt_object_json(o, ZT_JSON_COMPACT, &err))) {
        free(x);
        return ztd_error(c, r, ztd_err_of_zt(err.code, ZTD_OP_READ), "%s", err.message);
    }
    ztd_entry_retain(e); /* x's pin replaces the request's */
    x->e = e;
    ztd_req_set_ctx(r, x, object_ctx_free);
    ztd_body b;
    init_body(&b, s, e);
    /* MEM bodies are PERSISTENT: x outlives the response */
    ztd_body_single(&b, ztd_seg_mem(x->json, strlen(x->json)));
    b.content_type = "application/json";
    tagged_etag(b.etag, "object", e);
    return ztd_send_body(c, r, &b);
}

static enum MHD_Result answer_entry(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                    ztd_entry *e);
static enum MHD_Result read_upstream(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
static enum MHD_Result send_upstream_raw(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                         ztd_entry *e);

enum MHD_Result ztd_read_file(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    ztd_route_match *m = r->match;
    ztd_snapshot *snap = ztd_catalog_acquire(s->catalog);
    if (!snap)
        return ztd_fail(c, r, ZTD_ERR_NOT_READY);
    ztd_entry *e = ztd_snapshot_find(snap, m->file, m->file_len);
    if (e)
        ztd_entry_retain(e);
    ztd_snapshot_release(snap);
    if (!e && s->upstream)
        return read_upstream(s, c, r);
    if (!e)
        return ztd_error(c, r, ZTD_ERR_FILE_NOT_FOUND, "no file \"%s\" in the catalog", m->file);
    pin(r, e);
    if (!e->file && e->retry)
        return ztd_error(c, r, ZTD_ERR_FILE_UNAVAILABLE,
                         "file \"%s\" cannot be opened now (retried by each scan): %s", m->file,
                         e->error ? e->error : "unavailable");
    if (!e->file)
        return ztd_error(c, r, ZTD_ERR_FILE_INVALID, "file \"%s\" is not served: %s", m->file,
                         e->error ? e->error : "invalid");
    return answer_entry(s, c, r, e);
}

/* The answer from a pinned entry that has a file (local or upstream). */
static enum MHD_Result answer_entry(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                    ztd_entry *e)
{
    ztd_route_match *m = r->match;
    if (m->route == ZTD_ROUTE_MANIFEST)
        return send_manifest(s, c, r, e);
    if (e->up && m->route == ZTD_ROUTE_RAW)
        return send_upstream_raw(s, c, r, e);
    if (m->route == ZTD_ROUTE_RAW) {
        ztd_body b;
        init_body(&b, s, e);
        ztd_body_single(&b, ztd_seg_file(zt_file_fd(e->file), 0, e->size));
        b.content_type = "application/octet-stream";
        /* v2: the same strong validator on every copy of the file (catalog_v2.h) */
        if (e->v2 && e->v2->raw_etag[0])
            memcpy(b.etag, e->v2->raw_etag, sizeof(e->v2->raw_etag));
        else
            memcpy(b.etag, e->file_etag, sizeof(e->file_etag));
        return ztd_send_body(c, r, &b);
    }
    const zt_object *o = zt_file_find_object(e->file, m->object, m->object_len);
    const zt_component *alias = NULL;
    /* An original tensor name of a foreign file ("X.scale" of an Ollama triple
     * grouped into object "X") stays reachable as .../objects/X.scale/data. */
    if (!o && m->route == ZTD_ROUTE_COMPONENT && !strcmp(m->component, "data") &&
        zt_file_find_tensor(e->file, m->object, m->object_len, &o, &alias) == ZT_OK)
        return send_component(s, c, r, e, o, alias, false);
    if (!o)
        return ztd_error(c, r, ZTD_ERR_OBJECT_NOT_FOUND, "file \"%s\" has no object \"%s\"",
                         m->file, m->object);
    if (m->route == ZTD_ROUTE_OBJECT)
        return send_object(s, c, r, e, o);
    const zt_component *comp = zt_object_find_component(o, m->component);
    if (!comp)
        return ztd_error(c, r, ZTD_ERR_COMPONENT_NOT_FOUND,
                         "object \"%s\" in \"%s\" has no component \"%s\"", m->object, m->file,
                         m->component);
    return send_component(s, c, r, e, o, comp, false);
}

static enum MHD_Result read_upstream_blob(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                          const uint8_t sha[32]);

enum MHD_Result ztd_read_blob(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    uint8_t sha[32];
    ztd_hex_decode(r->match->blob, 32, sha); /* the router checked the 64 digits */
    ztd_snapshot *snap = ztd_catalog_acquire(s->catalog);
    if (!snap)
        return ztd_fail(c, r, ZTD_ERR_NOT_READY);
    const ztd_blob *bl = ztd_snapshot_find_blob(snap, sha);
    ztd_entry *e = bl ? bl->entry : NULL;
    const zt_object *o = bl ? bl->object : NULL;
    const zt_component *comp = bl ? bl->component : NULL;
    bool mismatch = bl && bl->check && ztd_digest_check_state(bl->check) == ZTD_DIGEST_MISMATCH;
    if (e)
        ztd_entry_retain(e);
    ztd_snapshot_release(snap);
    if (!e && s->upstream)
        return read_upstream_blob(s, c, r, sha);
    if (!e)
        return ztd_error(c, r, ZTD_ERR_BLOB_NOT_FOUND, "no component has digest sha256:%s",
                         r->match->blob);
    pin(r, e);
    /* Only components whose bytes hash to something else claim this digest. */
    if (mismatch)
        return ztd_error(c, r, ZTD_ERR_BLOB_DIGEST_MISMATCH,
                         "component \"%s\" of object \"%s\" in \"%s\" claims sha256:%s, but "
                         "its stored bytes hash to something else",
                         zt_component_role(comp), zt_object_name(o), e->name, r->match->blob);
    return send_component(s, c, r, e, o, comp, true);
}

enum MHD_Result ztd_read_list(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    return ztd_listing_route(s, c, r);
}

/* ---- files of the upstream (upstream/upstream.h)
 *
 * A name the catalog does not hold is asked of the upstream. Opening it, the
 * bytes /raw needs between components, and the first byte of a fill are
 * waited for off the workers (http/offload.h): an upstream that fails then
 * gets a clear 502/504 instead of a 200 cut short. Later bytes are streamed
 * to the client as the fill lands them (http/seg_stream.h). */

enum { UP_OPEN = 1, UP_SEGS, UP_WAIT, UP_WAITED, UP_ROOM };

typedef struct up_req {
    ztd_offload off;
    ztd_server *s;
    char *name; /* the file asked for */
    int phase;
    ztd_entry *e; /* pinned */
    ztd_err err;
    char msg[700];
    ztd_cache_item **items; /* held until the request ends: never evicted meanwhile */
    size_t nitems, capitems;
    ztd_cache_item *wait_item;
    uint64_t wait_for;
    const zt_component **room; /* UP_ROOM: components the cache had no room for yet */
    size_t nroom;
    ztd_body_seg one; /* a component's single segment */
    ztd_body_seg *segs;
    const ztd_upstream_seg *useg;
    size_t nsegs;
} up_req;

static void up_req_free(void *p)
{
    up_req *x = p;
    for (size_t i = 0; i < x->nitems; i++)
        ztd_cache_item_release(x->items[i]);
    free(x->items);
    free(x->segs);
    free(x->room);
    free(x->name);
    ztd_entry_release(x->e);
    free(x);
}

static up_req *up_req_of(ztd_server *s, ztd_req *r)
{
    if (r->ctx_free == up_req_free)
        return r->ctx;
    up_req *x = calloc(1, sizeof(*x));
    if (x) {
        x->s = s;
        ztd_req_set_ctx(r, x, up_req_free);
    }
    return x;
}

static bool hold_item(up_req *x, ztd_cache_item *it)
{
    if (x->nitems == x->capitems) {
        size_t cap = x->capitems ? 2 * x->capitems : 4;
        ztd_cache_item **v = realloc(x->items, cap * sizeof(*v));
        if (!v)
            return false;
        x->items = v;
        x->capitems = cap;
    }
    x->items[x->nitems++] = it;
    return true;
}

static void open_job(ztd_offload *o)
{
    up_req *x = (up_req *)o;
    x->err = ztd_upstream_get(x->s->upstream, x->name, &x->e, x->msg, sizeof(x->msg));
}

static void segs_job(ztd_offload *o)
{
    up_req *x = (up_req *)o;
    x->msg[0] = 0;
    x->err =
        ztd_upstream_segments(x->s->upstream, x->e, &x->useg, &x->nsegs, x->msg, sizeof(x->msg));
}

/* The error of the fill that failed, for the answer. */
static void fill_failed(up_req *x)
{
    if (!(x->err = ztd_upstream_fill_error(x->e, x->msg, sizeof(x->msg)))) {
        x->err = ZTD_ERR_UPSTREAM_FAILED;
        snprintf(x->msg, sizeof(x->msg), "upstream %s: the fetch failed",
                 ztd_upstream_url(x->s->upstream));
    }
}

/* Wait (bounded) for the first byte a response needs, so that an upstream
 * that fails is answered with an error, not a 200 cut short. */
static void wait_job(ztd_offload *o)
{
    up_req *x = (up_req *)o;
    const ztd_config *cfg = x->s->cfg;
    uint64_t limit = cfg->upstream_timeout_ms * (cfg->upstream_retries + 2ull), waited = 0;
    uint64_t ready = 0, seen = 0;
    ztd_cache_state st = ZTD_CACHE_FILLING;
    while (st == ZTD_CACHE_FILLING && waited < limit) {
        st = ztd_cache_wait(x->wait_item, x->wait_for, 500, &ready);
        if (st == ZTD_CACHE_FILLING && ready >= x->wait_for)
            break;
        /* the limit is for a fill that stalls: a whole component (several
         * ranges, or decoding) may take longer to arrive; the fill's own
         * timeouts end one that trickles */
        waited = ready > seen ? 0 : waited + 500;
        seen = ready;
    }
    x->err = ZTD_ERR_NONE;
    if (st == ZTD_CACHE_FAILED) {
        fill_failed(x);
    } else if (st == ZTD_CACHE_FILLING && ready < x->wait_for) {
        /* still no byte (the fill queued behind others, or its upstream silent): a
         * 504 now, not a 200 whose body would wait on for as long as the fill does */
        x->err = ZTD_ERR_UPSTREAM_TIMEOUT;
        snprintf(x->msg, sizeof(x->msg), "upstream %s: no byte of the component in %.3g s",
                 ztd_upstream_url(x->s->upstream), (double)limit / 1000.0);
    }
}

/* Release what the request holds (before waiting for room: a request that
 * holds some items while it waits for others could wait for another that
 * does the same). */
static void release_items(up_req *x)
{
    for (size_t i = 0; i < x->nitems; i++)
        ztd_cache_item_release(x->items[i]);
    x->nitems = 0;
}

/* Acquire every component of x->room, all or none. ZTD_ERR_CACHE_FULL when
 * one has no room (none is kept then). */
static ztd_err acquire_all(up_req *x)
{
    for (size_t i = 0; i < x->nroom; i++) {
        ztd_cache_item *it;
        ztd_err err =
            ztd_upstream_item(x->s->upstream, x->e, x->room[i], &it, x->msg, sizeof(x->msg));
        if (err == ZTD_ERR_NONE && !hold_item(x, it)) {
            ztd_cache_item_release(it);
            err = ZTD_ERR_INTERNAL;
            snprintf(x->msg, sizeof(x->msg), "out of memory");
        }
        if (err) {
            release_items(x);
            return err;
        }
    }
    return ZTD_ERR_NONE;
}

/* The cache had no room: everything in it is being sent. Wait (bounded by
 * upstream_timeout) for responses to end and release theirs, then take every
 * component the answer needs at once (all or none, so that two requests never
 * each hold what the other waits for); the items are held by the request, so
 * that its handler, called again, finds them. */
static void room_job(ztd_offload *o)
{
    up_req *x = (up_req *)o;
    uint64_t limit = x->s->cfg->upstream_timeout_ms, need = 0;
    for (size_t i = 0; i < x->nroom; i++)
        need += zt_component_length(x->room[i]);
    if (need > x->s->cfg->cache_size) { /* no amount of waiting makes room for it */
        x->err = ZTD_ERR_CACHE_FULL;
        snprintf(x->msg, sizeof(x->msg),
                 "this answer needs %" PRIu64 " bytes of components in the upstream cache at "
                 "once, more than cache_size (%" PRIu64 " bytes): ask for a smaller range",
                 need, x->s->cfg->cache_size);
        return;
    }
    ztd_cache *cache = ztd_upstream_cache(x->s->upstream);
    uint64_t until = ztd_now_ms() + limit;
    for (;;) {
        uint64_t gen = ztd_cache_room_gen(cache);
        if ((x->err = acquire_all(x)) != ZTD_ERR_CACHE_FULL || ztd_now_ms() >= until)
            break;
        ztd_cache_wait_room(cache, gen, (int)(until - ztd_now_ms())); /* until a response ends */
    }
}

/* Runs fn off the workers: MHD_YES to return now (the handler is called
 * again once it ran), or 0 when it ran here. */
static int offload(ztd_server *s, struct MHD_Connection *c, up_req *x, int phase,
                   void (*fn)(ztd_offload *))
{
    memset(&x->off, 0, sizeof(x->off));
    x->phase = phase;
    return ztd_offload_wait(s, c, &x->off, fn) ? 0 : 1;
}

static enum MHD_Result read_upstream(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    up_req *x = up_req_of(s, r);
    if (!x)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    if (x->off.started && !ztd_offload_done(&x->off))
        return MHD_YES;
    if (!x->phase) {
        if (!(x->name = strdup(r->match->file)))
            return ztd_fail(c, r, ZTD_ERR_INTERNAL);
        if (!(x->e = ztd_upstream_peek(s->upstream, r->match->file)) &&
            !(x->err = ztd_upstream_known_missing(s->upstream, x->name, x->msg, sizeof(x->msg))) &&
            offload(s, c, x, UP_OPEN, open_job))
            return MHD_YES;
        x->phase = UP_OPEN;
    }
    if (!x->e)
        return ztd_error(c, r, x->err, "%s", x->msg);
    return answer_entry(s, c, r, x->e);
}

static bool wait_for_room(up_req *x, const zt_component **comps, size_t n);

/* Several ranges of a component still filling: wait for the whole of it
 * (want = size + 1 waits for the end of the fill), which then goes out as
 * multipart/byteranges from its file, as the origin answers. */
static bool must_wait_whole(struct MHD_Connection *c, up_req *x, const ztd_body *b,
                            ztd_cache_item *it)
{
    ztd_plan plan;
    uint64_t ready;
    ztd_body_plan(c, b, &plan);
    if (x->phase == UP_WAITED || plan.status != ZTD_PLAN_PARTIAL || plan.nspans < 2 ||
        ztd_cache_item_state(it, &ready) != ZTD_CACHE_FILLING)
        return false;
    x->wait_item = it;
    x->wait_for = b->len + 1;
    return true;
}

/* Has the item's first byte landed, or should we wait for it (off the
 * workers)? Only the first: it shows the upstream answers, so that a fetch
 * that fails at once is answered 502/504, not a 200 cut short; the bytes a
 * range needs further on are waited for by the response's reader
 * (http/seg_stream.h), which holds no thread meanwhile. */
static bool must_wait(up_req *x, ztd_cache_item *it)
{
    uint64_t ready;
    ztd_cache_state st = ztd_cache_item_state(it, &ready);
    if (st == ZTD_CACHE_FAILED) { /* failed already: its error, not a 200 cut short */
        fill_failed(x);
        return false;
    }
    if (x->phase == UP_WAITED || st != ZTD_CACHE_FILLING || ready > 0)
        return false;
    x->wait_item = it;
    x->wait_for = 1;
    return true;
}

/* The span of the representation the answer will read, [*lo, *hi), or false
 * when it reads nothing (HEAD, 304, 412, 416). */
static bool needed_span(struct MHD_Connection *c, ztd_req *r, const ztd_body *b, uint64_t *lo,
                        uint64_t *hi)
{
    ztd_plan plan;
    ztd_body_plan(c, b, &plan);
    if (!strcmp(r->method, "HEAD") || b->len == 0)
        return false;
    if (plan.status == ZTD_PLAN_PARTIAL && plan.nspans == 1) {
        *lo = plan.spans[0].start;
        *hi = plan.spans[0].start + plan.spans[0].len;
        return true;
    }
    *lo = 0;
    *hi = b->len;
    return plan.status == ZTD_PLAN_FULL || plan.status == ZTD_PLAN_PARTIAL;
}

/* A v2 part the cache has no bytes for, answered as the origin answers it:
 * in a shard that could not be opened, or in an encoding nobody here decodes. */
static enum MHD_Result refuse_upstream_part(struct MHD_Connection *c, ztd_req *r, ztd_entry *e,
                                            const zt_object *o, const zt_component *comp)
{
    if (!ztd_upstream_part_servable(e, comp))
        return ztd_error(c, r, ZTD_ERR_SHARD_UNAVAILABLE,
                         "component \"%s\" of object \"%s\" is in shard %d of \"%s\", which is "
                         "missing or wrong at the upstream",
                         zt_component_role(comp), zt_object_name(o), zt_component_shard(comp),
                         e->name);
    return ztd_error(c, r, ZTD_ERR_ENCODING_UNSUPPORTED,
                     "component \"%s\" of object \"%s\" is stored in encoding \"%s\", which "
                     "this server cannot decode; its stored bytes are %llu bytes at offset %llu "
                     "of the file",
                     zt_component_role(comp), zt_object_name(o), zt_component_encoding_name(comp),
                     (unsigned long long)zt_component_length(comp),
                     (unsigned long long)zt_component_offset(comp));
}

static enum MHD_Result send_upstream_decoded(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                             ztd_entry *e, const zt_object *o,
                                             const zt_component *comp, bool blob);

/* comp's cache item, held by the request, in *it: true. Or false, with the
 * handler's answer in *ret: MHD_YES once the wait for room has started, or an
 * error. A wait for room that ran here (no work queue) is taken at once. */
static bool component_item(ztd_server *s, struct MHD_Connection *c, ztd_req *r, ztd_entry *e,
                           const zt_component *comp, ztd_cache_item **it, enum MHD_Result *ret)
{
    up_req *x = up_req_of(s, r);
    for (;;) { /* twice at most: the room is waited for once (phase UP_ROOM) */
        char msg[600];
        ztd_err err = ztd_upstream_item(s->upstream, e, comp, it, msg, sizeof(msg));
        if (err == ZTD_ERR_CACHE_FULL && x->phase < UP_ROOM && wait_for_room(x, &comp, 1)) {
            release_items(x);
            if (offload(s, c, x, UP_ROOM, room_job)) {
                *ret = MHD_YES;
                return false;
            }
            if (!x->err)
                continue; /* ran here */
            *ret = ztd_error(c, r, x->err, "%s", x->msg);
            return false;
        }
        if (err) {
            *ret = ztd_error(c, r, err, "%s", msg);
            return false;
        }
        if (!hold_item(x, *it)) {
            ztd_cache_item_release(*it);
            *ret = ztd_fail(c, r, ZTD_ERR_INTERNAL);
            return false;
        }
        return true;
    }
}

static enum MHD_Result send_upstream_component(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                               ztd_entry *e, const zt_object *o,
                                               const zt_component *comp, bool blob)
{
    if (!ztd_upstream_part_servable(e, comp) || zt_component_encoding(comp) == ZT_ENC_OTHER)
        return refuse_upstream_part(c, r, e, o, comp);
    up_req *x = up_req_of(s, r);
    if (!x)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    if (x->phase == UP_WAIT || x->phase == UP_ROOM) {
        if (x->err)
            return ztd_error(c, r, x->err, "%s", x->msg);
        if (x->phase == UP_WAIT)
            x->phase = UP_WAITED;
    }
    bool zstd = zt_component_encoding(comp) == ZT_ENC_ZSTD;
    if (zstd && !ztd_accepts_zstd(ztd_header(c, "Accept-Encoding")))
        return send_upstream_decoded(s, c, r, e, o, comp, blob);
    meta_ctx meta = {o, comp};
    ztd_body b;
    init_component_body(&b, s, e, &meta);
    x->one = ztd_seg_item(NULL, 0, zt_component_length(comp));
    ztd_body_single(&b, x->one);
    b.segs = &x->one; /* its item is set below, once held */
    b.content_encoding = zstd ? "zstd" : NULL;
    b.vary_accept_encoding = zstd;
    /* A digest names the stored bytes as send_component says (sha256, or a v2
     * raw part's xxh3): no response ends before the fill checked it. */
    size_t dn = 0;
    const uint8_t *d = zt_component_digest_bytes(comp, &dn);
    zt_digest_kind dk = zt_component_digest_kind(comp);
    bool of_decoded = zt_component_digest_scope(comp) == ZT_DIGEST_OF_DECODED;
    bool named = d && (!zstd || !of_decoded) &&
                 ((dk == ZT_DIGEST_SHA256 && dn == 32) || (dk == ZT_DIGEST_XXH3 && of_decoded));
    if (named) {
        b.sha256 = dk == ZT_DIGEST_SHA256 ? d : NULL;
        quote_etag(b.etag, sizeof(b.etag), zt_component_digest(comp));
        if (blob)
            b.cache_control =
                s->cfg->require_read_token ? "private, max-age=31536000, immutable" : IMMUTABLE;
    } else {
        ztd_upstream_span_etag(e, zt_component_offset(comp), b.len, b.etag);
    }
    uint64_t lo, hi;
    if (needed_span(c, r, &b, &lo, &hi)) {
        ztd_cache_item *it;
        enum MHD_Result ret;
        if (!component_item(s, c, r, e, comp, &it, &ret))
            return ret;
        x->one.item = it;
        x->err = ZTD_ERR_NONE;
        if (must_wait_whole(c, x, &b, it) && offload(s, c, x, UP_WAIT, wait_job))
            return MHD_YES;
        if (!x->err && must_wait(x, it) && offload(s, c, x, UP_WAIT, wait_job))
            return MHD_YES;
        if (x->err)
            return ztd_error(c, r, x->err, "%s", x->msg);
    }
    return ztd_send_body(c, r, &b);
}

/* The validators of a decoded component, as send_component gives a local
 * one's: a sha256 names the decoded bytes only when it covers them (v2);
 * one of the stored bytes (1.x) names them with ".identity". A cache
 * item's digest is checked before it is complete, so it counts as verified. */
static void decoded_validators(ztd_server *s, ztd_body *b, const ztd_entry *e,
                               const zt_component *comp, bool blob)
{
    size_t dn = 0;
    const uint8_t *d = zt_component_digest_bytes(comp, &dn);
    bool named = zt_component_digest_kind(comp) == ZT_DIGEST_SHA256 && d && dn == 32;
    bool of_decoded = zt_component_digest_scope(comp) == ZT_DIGEST_OF_DECODED;
    if (named && of_decoded) {
        b->sha256 = d;
        quote_etag(b->etag, sizeof(b->etag), zt_component_digest(comp));
    } else if (named) {
        snprintf(b->etag, sizeof(b->etag), "\"%s.identity\"", zt_component_digest(comp));
    } else {
        char id[40];
        ztd_upstream_span_etag(e, zt_component_offset(comp), b->len, id);
        snprintf(b->etag, sizeof(b->etag), "\"%.32s.identity\"", id + 1);
    }
    if (blob && named)
        b->cache_control =
            s->cfg->require_read_token ? "private, max-age=31536000, immutable" : IMMUTABLE;
}

/* A zstd component of an upstream file, for a client that does not accept
 * zstd: decoded as a local one is (http/body.c: max_decode_streams, one span,
 * HEAD), from its cache item once that is complete, so that decoded bytes
 * only ever come from stored bytes the fill has checked. The whole item is
 * waited for off the workers, as for several ranges (must_wait_whole). */
static enum MHD_Result send_upstream_decoded(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                             ztd_entry *e, const zt_object *o,
                                             const zt_component *comp, bool blob)
{
    up_req *x = up_req_of(s, r);
    meta_ctx meta = {o, comp};
    ztd_body b;
    init_component_body(&b, s, e, &meta);
    ztd_body_single(&b, ztd_seg_decode(e->file, comp));
    b.vary_accept_encoding = true;
    decoded_validators(s, &b, e, comp, blob);
    uint64_t lo, hi, ready;
    if (needed_span(c, r, &b, &lo, &hi)) {
        ztd_cache_item *it;
        enum MHD_Result ret;
        if (!component_item(s, c, r, e, comp, &it, &ret))
            return ret;
        ztd_cache_state st = ztd_cache_item_state(it, &ready);
        if (st == ZTD_CACHE_FILLING && x->phase != UP_WAITED) {
            x->wait_item = it;
            x->wait_for = zt_component_length(comp) + 1; /* the end of the fill */
            if (offload(s, c, x, UP_WAIT, wait_job))
                return MHD_YES;
            if (x->err)
                return ztd_error(c, r, x->err, "%s", x->msg);
            st = ztd_cache_item_state(it, &ready);
        }
        if (st == ZTD_CACHE_FAILED) {
            fill_failed(x);
            return ztd_error(c, r, x->err, "%s", x->msg);
        }
        if (st != ZTD_CACHE_COMPLETE) /* wait_job gave up: it sets no error for this */
            return ztd_error(c, r, ZTD_ERR_UPSTREAM_TIMEOUT,
                             "upstream %s: the component did not arrive whole in time",
                             ztd_upstream_url(s->upstream));
        b.one.stored_at_fd = true;
        b.one.fd = ztd_cache_item_fd(it);
        b.one.off = 0;
    }
    return ztd_send_body(c, r, &b);
}

/* The components to wait for room for (room_job); false when out of memory. */
static bool wait_for_room(up_req *x, const zt_component **comps, size_t n)
{
    free(x->room);
    if (!(x->room = malloc(n * sizeof(*x->room))))
        return false;
    memcpy(x->room, comps, n * sizeof(*comps));
    x->nroom = n;
    return true;
}

/* The file's bytes: its segments, items acquired for the ones the answer reads. */
static enum MHD_Result send_upstream_raw(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                         ztd_entry *e)
{
    up_req *x = up_req_of(s, r);
    if (!x)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    if (x->phase == UP_SEGS || x->phase == UP_WAIT || x->phase == UP_ROOM) {
        if (x->err)
            return ztd_error(c, r, x->err, "%s", x->msg);
    }
    if (x->phase == UP_WAIT)
        x->phase = UP_WAITED;
    if (!ztd_upstream_segments_ready(e, &x->useg, &x->nsegs)) {
        if (offload(s, c, x, UP_SEGS, segs_job))
            return MHD_YES;
        if (x->err)
            return ztd_error(c, r, x->err, "%s", x->msg);
    }
    ztd_body b;
    init_body(&b, s, e);
    b.len = e->size;
    b.content_type = "application/octet-stream";
    if (e->v2 && e->v2->raw_etag[0]) /* the origin's v2 /raw validator (catalog_v2.h) */
        memcpy(b.etag, e->v2->raw_etag, sizeof(e->v2->raw_etag));
    else
        memcpy(b.etag, e->file_etag, sizeof(e->file_etag));
    free(x->segs);
    if (!(x->segs = calloc(x->nsegs ? x->nsegs : 1, sizeof(*x->segs))))
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    b.segs = x->segs;
    b.nsegs = x->nsegs;
    uint64_t lo = 0, hi = 0;
    bool reads = needed_span(c, r, &b, &lo, &hi);
    ztd_cache_item *first = NULL;
    const zt_component **full = NULL;
    size_t nfull = 0;
    for (size_t i = 0; i < x->nsegs; i++) {
        const ztd_upstream_seg *u = &x->useg[i];
        x->segs[i] = u->comp ? ztd_seg_item(NULL, 0, u->len) : ztd_seg_mem(u->mem, u->len);
        if (!u->comp || !reads || u->at + u->len <= lo || u->at >= hi)
            continue;
        char msg[600];
        ztd_cache_item *it;
        ztd_err err = ztd_upstream_item(s->upstream, e, u->comp, &it, msg, sizeof(msg));
        if (err == ZTD_ERR_CACHE_FULL && x->phase < UP_ROOM) {
            nfull++; /* waited for below, with the others */
            continue;
        }
        if (err)
            return ztd_error(c, r, err, "%s", msg);
        if (!hold_item(x, it)) {
            ztd_cache_item_release(it);
            return ztd_fail(c, r, ZTD_ERR_INTERNAL);
        }
        x->segs[i].item = it;
        if (!first)
            first = it;
    }
    if (nfull) { /* all the components the answer reads, at once */
        if (!(full = calloc(x->nsegs, sizeof(*full))))
            return ztd_fail(c, r, ZTD_ERR_INTERNAL);
        nfull = 0;
        for (size_t i = 0; i < x->nsegs; i++) {
            const ztd_upstream_seg *u = &x->useg[i];
            if (u->comp && u->at + u->len > lo && u->at < hi)
                full[nfull++] = u->comp;
        }
        bool ok = wait_for_room(x, full, nfull);
        free(full);
        if (!ok)
            return ztd_fail(c, r, ZTD_ERR_INTERNAL);
        release_items(x);
        if (offload(s, c, x, UP_ROOM, room_job))
            return MHD_YES;
        if (x->err)
            return ztd_error(c, r, x->err, "%s", x->msg);
        return send_upstream_raw(s, c, r, e); /* ran here: the items are held now */
    }
    x->err = ZTD_ERR_NONE;
    if (first && must_wait(x, first) && offload(s, c, x, UP_WAIT, wait_job))
        return MHD_YES;
    if (x->err)
        return ztd_error(c, r, x->err, "%s", x->msg);
    return ztd_send_body(c, r, &b);
}

static const zt_object *object_of(const zt_file *f, const zt_component *comp)
{
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        for (size_t k = 0; k < zt_object_component_count(o); k++)
            if (zt_object_component_at(o, k) == comp)
                return o;
    }
    return NULL;
}

/* A blob no local file has: a component of an upstream file opened here, or
 * bytes still in the cache under the digest. */
static enum MHD_Result read_upstream_blob(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                          const uint8_t sha[32])
{
    up_req *x = up_req_of(s, r);
    if (!x)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    if (x->off.started && !ztd_offload_done(&x->off))
        return MHD_YES;
    const zt_component *comp = NULL;
    if (!x->e)
        x->e = ztd_upstream_find_blob(s->upstream, sha, &comp);
    else
        ztd_upstream_find_blob_in(x->e, sha, &comp);
    const zt_object *o = x->e && comp ? object_of(x->e->file, comp) : NULL;
    if (o)
        return send_upstream_component(s, c, r, x->e, o, comp, true);
    ztd_cache_key k = {.kind = ZTD_CACHE_BLOB};
    memcpy(k.id, sha, 32);
    ztd_cache_item *it = ztd_cache_lookup(ztd_upstream_cache(s->upstream), &k);
    if (!it)
        return ztd_error(c, r, ZTD_ERR_BLOB_NOT_FOUND,
                         "no component has digest sha256:%s, here or in the upstream files "
                         "opened here",
                         r->match->blob);
    if (!hold_item(x, it)) {
        ztd_cache_item_release(it);
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    }
    /* Complete, so checked against its digest: served as it is, from the cache. */
    ztd_body b;
    memset(&b, 0, sizeof(b));
    x->one = ztd_seg_item(it, 0, ztd_cache_item_size(it));
    ztd_body_single(&b, x->one);
    b.content_type = "application/octet-stream";
    b.cache_control =
        s->cfg->require_read_token ? "private, max-age=31536000, immutable" : IMMUTABLE;
    b.max_ranges = s->cfg->max_ranges;
    b.tls = s->tls_cert != NULL;
    b.sha256 = sha;
    snprintf(b.etag, sizeof(b.etag), "\"sha256:%s\"", r->match->blob);
    return ztd_send_body(c, r, &b);
}
