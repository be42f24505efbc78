/*
 * Read routes (see handlers.h). Each pins the catalog entry it answers from, as
 * the request's state, until libmicrohttpd is done with the response.
 */
#include "handlers/handlers.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/decimal.h"
#include "core/hex.h"
#include "core/json_line.h"
#include "http/disposition.h"
#include "http/body.h"
#include "http/headers.h"
#include "http/response.h"
#include "store/catalog.h"
#include "store/precompressed.h"
#include "store/catalog_v2.h"
#include "store/manifest_marks.h"
#include "upstream/upstream.h"
#include "store/source.h"
#include "store/validators.h"
#include "http/offload.h"
#include "http/source_answer.h"
#include "http/object_answer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* A JSON made per request (an object's, a marked manifest): it lives as long
 * as the pin. */
typedef struct object_ctx {
    ztd_entry *e;
    char *json;
    void (*json_free)(void *); /* zt_free, or free */
} object_ctx;

static void object_ctx_free(void *p)
{
    object_ctx *x = p;
    ztd_entry_release(x->e);
    x->json_free(x->json);
    free(x);
}

/* The request's pin becomes x's (which holds json, freed with json_free). */
static object_ctx *json_ctx(ztd_req *r, ztd_entry *e, char *json, void (*json_free)(void *))
{
    object_ctx *x = calloc(1, sizeof(*x));
    if (!x) {
        json_free(json);
        return NULL;
    }
    ztd_entry_retain(e); /* x's pin replaces the request's */
    *x = (object_ctx){e, json, json_free};
    ztd_req_set_ctx(r, x, object_ctx_free);
    return x;
}

/* json (malloc'ed, len bytes) as the answer about e, held by the request
 * (json_ctx), with the validator tag names. */
static enum MHD_Result send_json_doc(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                     ztd_entry *e, char *json, size_t len, const char *tag,
                                     bool vary)
{
    object_ctx *x = json ? json_ctx(r, e, json, free) : NULL;
    if (!x)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    ztd_body b;
    ztd_answer_init_body(&b, s, e);
    /* MEM bodies are PERSISTENT: x outlives the response */
    ztd_body_single(&b, ztd_seg_mem(x->json, len));
    b.content_type = "application/json";
    b.vary_accept_encoding = vary;
    ztd_tagged_etag(b.etag, tag, e);
    return ztd_send_body(c, r, &b);
}

/* A component's bytes: its metadata headers (meta lives as long as b). */
static void init_component_body(ztd_body *b, ztd_server *s, ztd_entry *e, meta_ctx *meta)
{
    ztd_answer_init_body(b, s, e);
    b->add_headers = add_meta;
    b->ctx = meta;
    b->content_type = "application/octet-stream";
}

static void entry_retain(void *e)
{
    ztd_entry_retain(e);
}

static void entry_release(void *e)
{
    ztd_entry_release(e);
}

/* The manifest of a file with components found not to match their digests,
 * marked (store/manifest_marks.h): made per request, identity only, never
 * shared. Its ETag counts the marks, which only grow for one file version. */
static enum MHD_Result send_marked_manifest(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                            ztd_entry *e, const char *json, size_t json_len)
{
    size_t len = 0, marks = 0;
    char *marked = ztd_manifest_marked(e, json, json_len, &len, &marks);
    char tag[48];
    snprintf(tag, sizeof(tag), "manifest-mismatch%zu", marks);
    return send_json_doc(s, c, r, e, marked, len, tag, true);
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
    if (ztd_entry_mismatches(e))
        return send_marked_manifest(s, c, r, e, json, json_len);
    const char *ae = ztd_header(c, "Accept-Encoding");
    double qz = ztd_accept_q(ae, "zstd"), qg = ztd_accept_q(ae, "gzip");
    const ztd_coded *cd = NULL;
    ztd_coding k = qz > 0 && qz >= qg ? ZTD_CODING_ZSTD : ZTD_CODING_GZIP;
    if (qz > 0 || qg > 0) {
        ztd_coded_owner owner = {e, entry_retain, entry_release};
        cd = ztd_coded_get(&e->manifest_coded, k, json, json_len, s->workq, &owner);
    }
    ztd_body b;
    ztd_answer_init_body(&b, s, e);
    ztd_body_single(&b, ztd_seg_mem(cd ? cd->bytes : json, cd ? cd->len : json_len));
    b.content_type = "application/json";
    b.content_encoding = cd ? ztd_coding_name(k) : NULL;
    b.vary_accept_encoding = true;
    b.shared = &e->manifest_resp[cd ? 1 + k : 0];
    ztd_tagged_etag(b.etag,
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
    char *json = zt_object_json(o, ZT_JSON_COMPACT, &err);
    if (!json)
        return ztd_error(c, r, ztd_err_of_zt(err.code, ZTD_OP_READ), "%s", err.message);
    if (ztd_entry_mismatches(e)) { /* its components found corrupt are marked */
        size_t len = 0, marks = 0;
        char *marked = ztd_object_marked(e, o, json, strlen(json), &len, &marks);
        zt_free(json);
        char tag[48];
        snprintf(tag, sizeof(tag), "object-mismatch%zu", marks);
        return send_json_doc(s, c, r, e, marked, len, marks ? tag : "object", false);
    }
    /* zt_free is free here (the server keeps libztensor's allocator): grown in place */
    json = ztd_text_line(json, strlen(json), NULL);
    return send_json_doc(s, c, r, e, json, json ? strlen(json) : 0, "object", false);
}

/* ---- the one component path and the one raw path, over the entry's source */

static enum MHD_Result answer_entry(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                    ztd_entry *e);
static enum MHD_Result send_blob_of(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                    ztd_entry *e);

/* The background verifier found comp's stored bytes not to hash to its
 * manifest digest: an error, not the wrong bytes (unless serve_corrupt). */
static enum MHD_Result mismatch_error(struct MHD_Connection *c, ztd_req *r, const ztd_entry *e,
                                      const zt_object *o, const zt_component *comp)
{
    unsigned long long off = zt_component_offset(comp), len = zt_component_length(comp);
    return ztd_error(c, r, ZTD_ERR_BLOB_DIGEST_MISMATCH,
                     "object \"%s\", component \"%s\" of \"%s\" (bytes %llu..%llu, byte %llu "
                     "of the file): the stored bytes do not hash to the manifest's digest %s "
                     "(found by the digest verifier; damaged on disk, or the manifest is "
                     "wrong); not served (serve_corrupt serves them)",
                     zt_object_name(o), zt_component_role(comp), e->name, off, off + len, off,
                     zt_component_digest(comp));
}

/* Content-Disposition of a component's bytes: "OBJECT.COMPONENT" ('/' made
 * '_'), so that curl -OJ saves them under a name that says what they are. */
static const char *component_disposition(const zt_object *o, const zt_component *comp, char *out,
                                         size_t cap)
{
    char name[2 * 4200];
    snprintf(name, sizeof(name), "%s.%s", zt_object_name(o), zt_component_role(comp));
    for (char *p = name; *p; p++)
        if (*p == '/')
            *p = '_';
    return ztd_content_disposition(name, out, cap) ? out : NULL;
}

/* GET /v1/files/NAME of a plain file: a small document of what is known of
 * it (its listing entry's facts), made per request. Its ETag changes when
 * the sha256 becomes known. */
static enum MHD_Result send_plain_doc(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                      ztd_entry *e)
{
    const uint8_t *sha = ztd_entry_plain_sha256(e);
    json_t *j = json_pack("{s:s, s:s, s:I}", "name", e->name, "format", "file", "size",
                          (json_int_t)e->size);
    if (j && sha) {
        char hex[65];
        ztd_hex_encode(sha, 32, hex);
        hex[64] = 0;
        json_object_set_new(j, "sha256", json_string(hex));
    }
    if (j)
        json_object_set_new(j, "last_modified", json_string(e->last_modified));
    size_t len = 0;
    char *json = ztd_json_line(j, &len);
    json_decref(j);
    return send_json_doc(s, c, r, e, json, len, sha ? "file.sha256" : "file", false);
}

/* A plain file (store/catalog.h): its document and its bytes, nothing else. */
static enum MHD_Result answer_plain(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                    ztd_entry *e)
{
    if (r->match->route == ZTD_ROUTE_MANIFEST)
        return send_plain_doc(s, c, r, e);
    return ztd_answer_not_tensor(c, r, e->name); /* its bytes: ztd_answer_object */
}

/* A component's bytes, stored or decoded (for a client that does not accept
 * zstd), from wherever the entry's source has them. Its digest names them
 * (ETag, Repr-Digest, and for a blob URL a year of immutability) only once
 * checked against them (store/validators.h). */
static enum MHD_Result send_component(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                      ztd_entry *e, const zt_object *o, const zt_component *comp,
                                      bool blob)
{
    char msg[700];
    const char *wmsg;
    ztd_err err;
    if (ztd_answer_wait_failed(r, &err, &wmsg))
        return ztd_error(c, r, err, "%s", wmsg);
    if ((err = ztd_entry_source(e)->servable(e, o, comp, msg, sizeof(msg))))
        return ztd_error(c, r, err, "%s", msg);
    if (!s->cfg->serve_corrupt && ztd_digest_state_of(&e->digests, comp) == ZTD_DIGEST_MISMATCH)
        return mismatch_error(c, r, e, o, comp);
    bool zstd = zt_component_encoding(comp) == ZT_ENC_ZSTD;
    bool decoded = zstd && !ztd_accepts_zstd(ztd_header(c, "Accept-Encoding"));
    meta_ctx meta = {o, comp};
    ztd_body b;
    init_component_body(&b, s, e, &meta);
    char disp[4 * 4200];
    b.content_disposition = component_disposition(o, comp, disp, sizeof(disp));
    ztd_repr_validators v;
    ztd_component_validators(e, comp, decoded, ztd_entry_source(e)->verified(e, comp), blob, &v);
    bool named = v.digest_named || v.sha256 || v.immutable;
    memcpy(b.etag, v.etag, sizeof(b.etag));
    b.sha256 = v.sha256;
    b.cache_control =
        ztd_validators_cache_control(&v, s->cfg->require_read_token, s->cfg->cache_control);
    b.content_encoding = zstd && !decoded ? "zstd" : NULL;
    b.vary_accept_encoding = zstd;
    b.len = decoded ? zt_component_decoded_length(comp) : zt_component_length(comp);
    ztd_answer_state *x = ztd_answer_state_of(r);
    ztd_source_req qs = {0}, *q = x ? &x->q : &qs;
    ztd_answer_plan_reads(c, r, &b, q);
    q->named = named;
    ztd_body_seg seg;
    err = ztd_entry_source(e)->component(q, e, comp, decoded, &seg, msg, sizeof(msg));
    if (!err) {
        ztd_body_single(&b, seg);
        /* Verified raw bytes of a file never change for this entry, nor do
         * their headers: a small component's answer can be built once, by its
         * second request (http/body.h, catalog.h). */
        if (seg.kind == ZTD_SEG_FILE && v.digest_named && !zstd &&
            zt_component_digest_kind(comp) == ZT_DIGEST_SHA256 && b.len <= ZTD_SHARED_SPAN_MAX)
            b.shared = ztd_entry_component_slot(e, comp, blob, ztd_body_shared_room(b.len),
                                                &b.shared_asked);
    }
    return ztd_answer_source(s, c, r, e, q, err, msg, &b, answer_entry);
}

enum MHD_Result ztd_read_file(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    return ztd_answer_file(s, c, r, answer_entry);
}

/* The answer from a pinned entry that has a file (local or upstream). */
static enum MHD_Result answer_entry(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                    ztd_entry *e)
{
    ztd_route_match *m = r->match;
    if (ztd_answer_as_view(r)) /* an upstream's STEM.safetensors: e is its STEM.zt */
        return ztd_answer_upstream_view(s, c, r, e);
    if (m->route == ZTD_ROUTE_RAW) /* the object's bytes: a file's, a view's, an index's */
        return ztd_answer_object(s, c, r, e);
    if (ztd_entry_is_plain(e))
        return answer_plain(s, c, r, e);
    if (ztd_entry_virtual(e) && m->route == ZTD_ROUTE_MANIFEST)
        return ztd_answer_virtual_doc(s, c, r, e);
    if (ztd_entry_virtual(e))
        return ztd_error(c, r, ZTD_ERR_OBJECT_NOT_FOUND,
                         "\"%s\" is %s%s%s: it has no objects of its own%s", m->file,
                         e->view_of ? "the safetensors view of \"" : "a model's index",
                         e->view_of ? e->view_of->name : "", e->view_of ? "\"" : "",
                         e->view_of ? " (ask the file it views)" : "");
    if (m->route == ZTD_ROUTE_MANIFEST)
        return send_manifest(s, c, r, e);
    if (m->route == ZTD_ROUTE_BLOB)
        return send_blob_of(s, c, r, e);
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

/* ---- blobs: a component found by its sha256 */

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

/* The blob route's answer from entry e, again after a wait (resume): only
 * upstream entries wait. */
static enum MHD_Result send_blob_of(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                    ztd_entry *e)
{
    uint8_t sha[32];
    ztd_hex_decode(r->match->blob, 32, sha);
    const zt_component *comp = NULL;
    const zt_object *o = NULL;
    if (ztd_upstream_find_blob_in(e, sha, &comp))
        o = object_of(e->file, comp);
    if (!o)
        return ztd_error(c, r, ZTD_ERR_BLOB_NOT_FOUND, "no component has digest sha256:%s",
                         r->match->blob);
    return send_component(s, c, r, e, o, comp, true);
}

static void release_item(void *it)
{
    ztd_cache_item_release(it);
}

/* Bytes still in the cache under the digest, of no file opened here:
 * complete, so checked against it, served as they are. */
static enum MHD_Result send_cached_blob(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                        const uint8_t sha[32])
{
    ztd_cache_key k = {.kind = ZTD_CACHE_BLOB};
    memcpy(k.id, sha, 32);
    ztd_cache_item *it = ztd_cache_lookup(ztd_upstream_cache(s->upstream), &k);
    if (!it)
        return ztd_error(c, r, ZTD_ERR_BLOB_NOT_FOUND,
                         "no component has digest sha256:%s, here or in the upstream files "
                         "opened here",
                         r->match->blob);
    ztd_req_set_ctx(r, it, release_item);
    ztd_body b;
    memset(&b, 0, sizeof(b));
    ztd_body_single(&b, ztd_seg_item(it, 0, ztd_cache_item_size(it)));
    b.content_type = "application/octet-stream";
    ztd_repr_validators v = {.immutable = true};
    b.cache_control =
        ztd_validators_cache_control(&v, s->cfg->require_read_token, s->cfg->cache_control);
    b.max_ranges = s->cfg->max_ranges;
    b.tls = s->tls_cert != NULL;
    b.sha256 = sha;
    ztd_sha256_etag(sha, b.etag);
    return ztd_send_body(c, r, &b);
}

/* A blob no local file has: a component of an upstream file opened here, or
 * bytes still in the cache under the digest. */
static enum MHD_Result read_upstream_blob(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                          const uint8_t sha[32])
{
    const zt_component *comp = NULL;
    ztd_entry *e = ztd_upstream_find_blob(s->upstream, sha, &comp);
    const zt_object *o = e && comp ? object_of(e->file, comp) : NULL;
    if (!o) {
        ztd_entry_release(e);
        return send_cached_blob(s, c, r, sha);
    }
    ztd_answer_pin(r, e);
    return send_component(s, c, r, e, o, comp, true);
}

enum MHD_Result ztd_read_blob(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    enum MHD_Result res;
    if (ztd_answer_resume(s, c, r, &res))
        return res;
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
    ztd_answer_pin(r, e);
    /* Only components whose bytes hash to something else claim this digest. */
    if (mismatch)
        return ztd_error(c, r, ZTD_ERR_BLOB_DIGEST_MISMATCH,
                         "component \"%s\" of object \"%s\" in \"%s\" claims sha256:%s, but "
                         "its stored bytes hash to something else",
                         zt_component_role(comp), zt_object_name(o), e->name, r->match->blob);
    return send_component(s, c, r, e, o, comp, true);
}
