/*
 * The bytes of any catalog object (see object_answer.h). A view answers
 * from the entry it views, which the request's pin of the view holds open
 * (store/catalog.h); an index from the bytes kept with its entry, which the
 * pin keeps as long as the response.
 */
#include "http/object_answer.h"
#include "http/disposition.h"
#include "http/response.h"
#include "http/view_answer.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *disposition(const ztd_entry *e, char *out, size_t cap)
{
    const char *base = strrchr(e->name, '/');
    return ztd_content_disposition(base ? base + 1 : e->name, out, cap) ? out : NULL;
}

static enum MHD_Result send_index(ztd_server *s, struct MHD_Connection *c, ztd_req *r, ztd_entry *e,
                                  const char *d, ztd_body_adjust *adjust, void *ctx)
{
    enum MHD_Result out;
    ztd_body b;
    ztd_answer_init_body(&b, s, e);
    ztd_body_single(&b, ztd_seg_mem(e->st_index->json, e->st_index->len));
    b.content_type = "application/json";
    b.content_disposition = d;
    memcpy(b.etag, e->file_etag, sizeof(e->file_etag));
    /* its sha256 (Repr-Digest): the bytes are in memory, so it is known; a
     * tier that fetches the index checks its copy against it */
    uint8_t sha[32];
    zt_hasher *hs = zt_hasher_new(ZT_DIGEST_SHA256);
    if (hs) {
        zt_hasher_update(hs, e->st_index->json, e->st_index->len);
        zt_hasher_final(hs, sha);
        zt_hasher_free(hs);
        b.sha256 = sha;
    }
    ztd_answer_dress(&b, r);
    if (adjust && adjust(c, r, &b, ctx, &out))
        return out;
    return ztd_send_body(c, r, &b);
}

enum MHD_Result ztd_answer_object(ztd_server *s, struct MHD_Connection *c, ztd_req *r, ztd_entry *e)
{
    ztd_answer_hook h = {.again = ztd_answer_object, .view_again = ztd_answer_view};
    return ztd_answer_object_hooked(s, c, r, e, &h);
}

enum MHD_Result ztd_answer_object_hooked(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                         ztd_entry *e, const ztd_answer_hook *h)
{
    char disp[4 * 4200];
    if (e->view_of)
        return ztd_answer_view_adjusted(s, c, r, e->view_of, h->adjust, h->ctx, h->view_again);
    const char *d = h->no_disposition ? NULL : disposition(e, disp, sizeof(disp));
    if (e->st_index)
        return send_index(s, c, r, e, d, h->adjust, h->ctx);
    return ztd_answer_raw_adjusted(s, c, r, e, d, h->adjust, h->ctx, h->again);
}

enum MHD_Result ztd_answer_upstream_view(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                         ztd_entry *e)
{
    if (r->match->route == ZTD_ROUTE_RAW || r->match->route == ZTD_ROUTE_VIEW)
        return ztd_answer_view(s, c, r, e);
    return ztd_error(c, r, ZTD_ERR_OBJECT_NOT_FOUND,
                     "\"%s\" is the upstream's safetensors view of \"%s\": it has no manifest "
                     "or objects of its own (ask the file it views)",
                     r->match->file, e->name);
}

typedef struct doc_ctx {
    ztd_entry *e;
    char *json;
} doc_ctx;

static void doc_free(void *p)
{
    doc_ctx *x = p;
    ztd_entry_release(x->e);
    free(x->json);
    free(x);
}

enum MHD_Result ztd_answer_virtual_doc(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                       ztd_entry *e)
{
    json_t *j = ztd_entry_json(e);
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    size_t n = text ? strlen(text) : 0;
    doc_ctx *x = text ? malloc(sizeof(*x)) : NULL;
    char *json = x ? realloc(text, n + 2) : NULL;
    if (!json) {
        free(text);
        free(x);
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    }
    memcpy(json + n, "\n", 2);
    ztd_entry_retain(e); /* x's pin replaces the request's */
    *x = (doc_ctx){e, json};
    ztd_req_set_ctx(r, x, doc_free);
    ztd_body b;
    ztd_answer_init_body(&b, s, e);
    ztd_body_single(&b, ztd_seg_mem(x->json, n + 1));
    b.content_type = "application/json";
    /* of its bytes: a view's listing object changes when its file does */
    uint8_t h[32] = {0};
    zt_hasher *hs = zt_hasher_new(ZT_DIGEST_SHA256);
    if (hs) {
        zt_hasher_update(hs, json, n + 1);
        zt_hasher_final(hs, h);
        zt_hasher_free(hs);
    }
    snprintf(b.etag, sizeof(b.etag), "\"doc-%02x%02x%02x%02x%02x%02x%02x%02x\"", h[0], h[1], h[2],
             h[3], h[4], h[5], h[6], h[7]);
    return ztd_send_body(c, r, &b);
}
