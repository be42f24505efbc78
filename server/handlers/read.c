/*
 * Read routes (see handlers.h). Each pins the catalog entry it answers from, as
 * the request's state, until libmicrohttpd is done with the response.
 */
#include "handlers/handlers.h"
#include "core/config.h"
#include "core/decimal.h"
#include "core/hex.h"
#include "http/body.h"
#include "http/headers.h"
#include "http/response.h"
#include "store/catalog.h"
#include "store/coded.h"
#include "handlers/listing.h"
#include "store/catalog_v2.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMMUTABLE "public, max-age=31536000, immutable"

/* ---- tensor metadata headers */

typedef struct meta_ctx {
    const zt_object *o;
    const zt_component *c;
} meta_ctx;

/* The metadata a client needs to use the bytes. Offsets, stored lengths and
 * digests are in the object's JSON (and a verified digest in ETag and Repr-Digest):
 * every response header costs each request about as much as the route lookup. */
static void add_meta(struct MHD_Response *resp, const void *p)
{
    const meta_ctx *m = p;
    char buf[2048], *w = buf;
    const uint64_t *shape = zt_object_shape(m->o);
    for (size_t i = 0; i < zt_object_ndim(m->o) && w < buf + sizeof(buf) - 24; i++) {
        if (i)
            *w++ = ',';
        w += ztd_decimal(w, shape[i], 1);
    }
    *w = 0;
    if (buf[0])
        MHD_add_response_header(resp, "X-Ztensor-Shape", buf);
    MHD_add_response_header(resp, "X-Ztensor-Format", zt_object_format(m->o));
    MHD_add_response_header(resp, "X-Ztensor-Dtype", zt_dtype_name(zt_component_dtype(m->c)));
    if (zt_component_type(m->c))
        MHD_add_response_header(resp, "X-Ztensor-Type", zt_component_type(m->c));
    MHD_add_response_header(resp, "X-Ztensor-Encoding", zt_component_encoding_name(m->c));
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
 * representation's validator, derived from the file's. */
static void tagged_etag(char out[96], const char *tag, const ztd_entry *e)
{
    size_t n = strlen(tag);
    out[0] = '"';
    memcpy(out + 1, tag, n);
    out[n + 1] = '-';
    memcpy(out + n + 2, e->file_etag + 1, 32);
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
    b->fd = zt_file_fd(e->file);
    b->last_modified = e->mtime_ns / 1000000000;
    b->last_modified_text = e->last_modified;
    /* With read tokens a shared cache must not hand responses to others. */
    b->cache_control = s->cfg->require_read_token ? "private, no-cache" : s->cfg->cache_control;
    b->max_ranges = s->cfg->max_ranges;
    b->max_decode_streams = s->cfg->max_decode_streams;
    b->tls = s->tls_cert != NULL;
}

/* A component's bytes. Its sha256 names them (ETag, Repr-Digest, and for a
 * blob URL a year of immutability) only once the verifier has hashed them and
 * while the file has not been written in place since (one fstat): otherwise,
 * and forever when they do not match, the validators are those of a
 * digest-less component. */
static enum MHD_Result send_component(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                      ztd_entry *e, const zt_object *o, const zt_component *comp,
                                      bool blob)
{
    ztd_body b;
    init_body(&b, s, e);
    meta_ctx meta = {o, comp};
    b.add_headers = add_meta;
    b.ctx = &meta;
    b.content_type = "application/octet-stream";
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
    b.fd = zt_component_fd(e->file, comp);
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
        b.kind = ZTD_BODY_FD;
        b.off = zt_component_offset(comp);
        b.len = zt_component_length(comp);
        b.content_encoding = zstd ? "zstd" : NULL;
        b.sha256 = covers_stored ? sha : NULL;
        if (named && covers_stored)
            quote_etag(b.etag, sizeof(b.etag), zt_component_digest(comp));
        else
            ztd_identity_etag(e, b.off, b.len, b.etag);
    } else {
        /* Decoded on the fly: another representation, so another ETag. */
        b.kind = ZTD_BODY_DECODE;
        b.zf = e->file;
        b.zc = comp;
        b.len = zt_component_decoded_length(comp);
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

/* The manifest JSON, precompressed (store/coded.h) for a client that accepts
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
    b.kind = ZTD_BODY_MEM;
    b.mem = cd ? cd->bytes : json;
    b.len = cd ? cd->len : json_len;
    b.content_type = "application/json";
    b.content_encoding = cd ? ztd_coding_name(k) : NULL;
    b.vary_accept_encoding = true;
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
    b.kind = ZTD_BODY_MEM;
    b.mem = x->json; /* MEM bodies are PERSISTENT: x outlives the response */
    b.len = strlen(x->json);
    b.content_type = "application/json";
    tagged_etag(b.etag, "object", e);
    return ztd_send_body(c, r, &b);
}

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
    if (m->route == ZTD_ROUTE_MANIFEST)
        return send_manifest(s, c, r, e);
    if (m->route == ZTD_ROUTE_RAW) {
        ztd_body b;
        init_body(&b, s, e);
        b.kind = ZTD_BODY_FD;
        b.off = 0;
        b.len = e->size;
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
