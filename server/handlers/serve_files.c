/*
 * Read routes: health, readiness, the file listing, manifests, objects,
 * components, whole files and content-addressed blobs. Each pins the catalog
 * entry it answers from until MHD is done with the response.
 */
#include "http/body.h"
#include "http/conns.h"
#include "http/http.h"
#include "http/headers.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/metrics.h"
#include "http/range.h"
#include "http/response.h"
#include "handlers/session.h"
#include "handlers/upload.h"

#include <ctype.h>
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

/* Decimal digits of v at p; returns the end. (snprintf cost more than the
 * rest of a small component's headers together.) */
static char *put_u64(char *p, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

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
        w = put_u64(w, shape[i]);
    }
    *w = 0;
    if (buf[0])
        MHD_add_response_header(resp, "X-Ztensor-Shape", buf);
    MHD_add_response_header(resp, "X-Ztensor-Format", zt_object_format(m->o));
    MHD_add_response_header(resp, "X-Ztensor-Dtype", zt_dtype_name(zt_component_dtype(m->c)));
    if (zt_component_type(m->c))
        MHD_add_response_header(resp, "X-Ztensor-Type", zt_component_type(m->c));
    MHD_add_response_header(resp, "X-Ztensor-Encoding",
                            zt_component_encoding(m->c) == ZT_ENC_ZSTD ? "zstd" : "raw");
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
    const uint8_t *digest = verified ? zt_component_digest_bytes(comp, NULL) : NULL;
    bool zstd = zt_component_encoding(comp) == ZT_ENC_ZSTD;
    if (zstd)
        b.vary_accept_encoding = true;
    if (!zstd || ztd_accepts_zstd(ztd_header(c, "Accept-Encoding"))) {
        /* The stored bytes: sendfile straight from the file. */
        b.kind = ZTD_BODY_FD;
        b.off = zt_component_offset(comp);
        b.len = zt_component_length(comp);
        b.content_encoding = zstd ? "zstd" : NULL;
        b.sha256 = digest;
        if (digest)
            quote_etag(b.etag, sizeof(b.etag), zt_component_digest(comp));
        else
            ztd_identity_etag(e, b.off, b.len, b.etag);
    } else {
        /* Decoded on the fly: another representation, so another ETag. */
        b.kind = ZTD_BODY_DECODE;
        b.zf = e->file;
        b.zc = comp;
        b.len = zt_component_decoded_length(comp);
        char id[40];
        ztd_identity_etag(e, zt_component_offset(comp), b.len, id);
        if (digest)
            snprintf(b.etag, sizeof(b.etag), "\"%s.identity\"", zt_component_digest(comp));
        else
            snprintf(b.etag, sizeof(b.etag), "\"%.32s.identity\"", id + 1);
    }
    return ztd_send_body(c, r, &b);
}

/* From memory: libmicrohttpd then sends headers and body in one sendmsg. The
 * same bytes from a memfd with sendfile (headers sent apart, cork toggling, a
 * dup and close per response) measured 4-33% fewer requests per second for a
 * 228 KB manifest, and no better for a 2.3 MB one. */
static enum MHD_Result send_json_repr(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                      ztd_entry *e, const char *json, size_t len,
                                      const char *etag_tag)
{
    ztd_body b;
    init_body(&b, s, e);
    b.kind = ZTD_BODY_MEM;
    b.mem = json;
    b.len = len;
    b.content_type = "application/json";
    tagged_etag(b.etag, etag_tag, e);
    return ztd_send_body(c, r, &b);
}

/* The object JSON is built per request and freed with the response. */
static enum MHD_Result send_object(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                   ztd_entry *e, const zt_object *o)
{
    zt_error err;
    char *json = zt_object_json(o, ZT_JSON_COMPACT, &err);
    if (!json)
        return ztd_error(c, r, ztd_err_of_zt(err.code, ZTD_OP_READ), "%s", err.message);
    /* Hand ownership to the entry-independent response: copy, then free ours. */
    ztd_body b;
    init_body(&b, s, e);
    b.kind = ZTD_BODY_MEM;
    b.len = strlen(json);
    b.content_type = "application/json";
    tagged_etag(b.etag, "object", e);
    /* MEM bodies are PERSISTENT; keep the JSON until the request completes. */
    b.mem = json;
    enum MHD_Result ret = ztd_send_body(c, r, &b);
    r->owned = json;
    return ret;
}

static enum MHD_Result file_route(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
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
    r->pin = e;
    if (!e->file && e->retry)
        return ztd_error(c, r, ZTD_ERR_FILE_UNAVAILABLE,
                         "file \"%s\" cannot be opened now (retried by each scan): %s", m->file,
                         e->error ? e->error : "unavailable");
    if (!e->file)
        return ztd_error(c, r, ZTD_ERR_FILE_INVALID, "file \"%s\" is not served: %s", m->file,
                         e->error ? e->error : "invalid");
    if (m->route == ZTD_ROUTE_MANIFEST)
        return send_json_repr(s, c, r, e, e->manifest_json, e->manifest_json_len, "manifest");
    if (m->route == ZTD_ROUTE_RAW) {
        ztd_body b;
        init_body(&b, s, e);
        b.kind = ZTD_BODY_FD;
        b.off = 0;
        b.len = e->size;
        b.content_type = "application/octet-stream";
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

static enum MHD_Result blob_route(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
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
    r->pin = e;
    /* Only components whose bytes hash to something else claim this digest. */
    if (mismatch)
        return ztd_error(c, r, ZTD_ERR_BLOB_DIGEST_MISMATCH,
                         "component \"%s\" of object \"%s\" in \"%s\" claims sha256:%s, but "
                         "its stored bytes hash to something else",
                         zt_component_role(comp), zt_object_name(o), e->name, r->match->blob);
    return send_component(s, c, r, e, o, comp, true);
}

static enum MHD_Result metrics_route(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    ztd_catalog_stats cs;
    ztd_catalog_get_stats(s->catalog, &cs);
    ztd_metrics_gauges g = {.files_valid = cs.files_valid,
                            .files_invalid = cs.files_invalid,
                            .sessions = ztd_sessions_count(s->sessions),
                            .reloads = cs.reloads};
    ztd_catalog_digest_counts(s->catalog, g.digests);
    ztd_conns_counts(s->conns, &g.conns_waiting, &g.conns_busy);
    size_t len;
    char *text = ztd_metrics_render(&g, &len);
    if (!text)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    return ztd_queue(c, r, 200, resp, len);
}

enum MHD_Result ztd_serve(ztd_server *s, struct MHD_Connection *c, ztd_req *r, const char *method)
{
    if (!r->match && !(r->match = ztd_match_new()))
        return MHD_NO;
    ztd_route_match *m = r->match;
    switch (ztd_route(method, r->path, m)) {
    case ZTD_ROUTE_OK:
        break;
    case ZTD_ROUTE_METHOD_NOT_ALLOWED:
        return ztd_error_hdr(c, r, ZTD_ERR_METHOD_NOT_ALLOWED, "Allow", m->allow,
                             "%s is not allowed here; allowed: %s", method, m->allow);
    case ZTD_ROUTE_NOT_FOUND:
        return ztd_error(c, r, ZTD_ERR_NOT_FOUND, "%s",
                         m->message ? m->message : "no such endpoint");
    case ZTD_ROUTE_URI_TOO_LONG:
        return ztd_error(c, r, ZTD_ERR_URI_TOO_LONG, "%s", m->message ? m->message : "too long");
    default:
        return ztd_error(c, r, ZTD_ERR_BAD_REQUEST, "%s", m->message ? m->message : "bad path");
    }
    enum MHD_Result ret;
    bool open_route = m->route == ZTD_ROUTE_HEALTHZ || m->route == ZTD_ROUTE_READYZ ||
                      m->route == ZTD_ROUTE_METRICS;
    if (!open_route && !ztd_authorize(s, c, r, false, &ret))
        return ret;
    switch (m->route) {
    case ZTD_ROUTE_HEALTHZ:
        return ztd_json(c, r, 200, "{\"status\":\"ok\"}", 15, 0);
    case ZTD_ROUTE_READYZ:
        if (__atomic_load_n(&s->draining, __ATOMIC_ACQUIRE))
            return ztd_fail(c, r, ZTD_ERR_DRAINING);
        if (!ztd_catalog_ready(s->catalog))
            return ztd_fail(c, r, ZTD_ERR_NOT_READY);
        return ztd_json(c, r, 200, "{\"status\":\"ready\"}", 18, 0);
    case ZTD_ROUTE_LIST: {
        ztd_snapshot *snap = ztd_catalog_acquire(s->catalog);
        if (!snap)
            return ztd_fail(c, r, ZTD_ERR_NOT_READY);
        ret = ztd_json(c, r, 200, snap->list_json, snap->list_json_len, 1);
        ztd_snapshot_release(snap);
        return ret;
    }
    case ZTD_ROUTE_MANIFEST:
    case ZTD_ROUTE_RAW:
    case ZTD_ROUTE_OBJECT:
    case ZTD_ROUTE_COMPONENT:
        return file_route(s, c, r);
    case ZTD_ROUTE_BLOB:
        return blob_route(s, c, r);
    case ZTD_ROUTE_METRICS:
        return metrics_route(s, c, r);
    case ZTD_ROUTE_UPLOAD_STATUS:
        /* GET comes here, not through upload.c's first call: writers only. */
        if (!ztd_authorize(s, c, r, true, &ret))
            return ret;
        return ztd_session_route_end(s, c, r);
    default:
        return ztd_error(c, r, ZTD_ERR_NOT_IMPLEMENTED, "%s %s is not implemented yet", method,
                         ztd_route_name(m->route));
    }
}
