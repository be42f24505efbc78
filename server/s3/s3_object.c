/*
 * GetObject and HeadObject: any catalog entry's bytes (a file's, a
 * safetensors view's, a model index's) through the one object answer and
 * send path every front shares (http/object_answer.h), with S3's ETag form, the response-*
 * overrides, x-amz-request-id, and S3's answers to failed conditions and
 * ranges (304 with no body, 412 PreconditionFailed, 416 InvalidRange in
 * XML). partNumber is refused earlier (NotImplemented).
 */
#include "http/body.h"
#include "http/range.h"
#include "http/response.h"
#include "http/object_answer.h"
#include "http/source_answer.h"
#include "http/view_answer.h"
#include "s3/s3_error.h"
#include "s3/s3_internal.h"
#include "store/names.h"

#include <stdio.h>
#include <string.h>

#define OVERRIDE_MAX 1024

/* The response-* query arguments: header values the client asks for. */
typedef struct overrides {
    ztd_req *r;
    bool view; /* the object is a safetensors view: b->entry is the file it views */
    char type[OVERRIDE_MAX], disposition[OVERRIDE_MAX], cache[OVERRIDE_MAX];
    char encoding[OVERRIDE_MAX], language[OVERRIDE_MAX], expires[OVERRIDE_MAX];
    bool has_type, has_disposition, has_cache, has_encoding, has_language, has_expires;
    bool bad;
} overrides;

/* A header value may not hold CR, LF or NUL. */
static bool take(struct MHD_Connection *c, const char *name, char *out, bool *has, bool *bad)
{
    long n = ztd_s3_arg(c, name, out, OVERRIDE_MAX);
    if (n == -1)
        return false;
    if (n < 0 || strpbrk(out, "\r\n") || memchr(out, 0, (size_t)n)) {
        *bad = true;
        return false;
    }
    return *has = true;
}

static void read_overrides(struct MHD_Connection *c, ztd_req *r, overrides *o)
{
    memset(o, 0, sizeof(*o));
    o->r = r;
    take(c, "response-content-type", o->type, &o->has_type, &o->bad);
    take(c, "response-content-disposition", o->disposition, &o->has_disposition, &o->bad);
    take(c, "response-cache-control", o->cache, &o->has_cache, &o->bad);
    take(c, "response-content-encoding", o->encoding, &o->has_encoding, &o->bad);
    take(c, "response-content-language", o->language, &o->has_language, &o->bad);
    take(c, "response-expires", o->expires, &o->has_expires, &o->bad);
}

static bool add_headers(struct MHD_Response *resp, const void *ctx)
{
    const overrides *o = ctx;
    bool ok = ztd_s3_request_id(resp, o->r);
    if (o->has_language)
        ok = ok && MHD_add_response_header(resp, "Content-Language", o->language) == MHD_YES;
    if (o->has_expires)
        ok = ok && MHD_add_response_header(resp, "Expires", o->expires) == MHD_YES;
    return ok;
}

/* 304: the validators and the request id, no body. */
static enum MHD_Result not_modified(struct MHD_Connection *c, ztd_req *r, const ztd_body *b)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (resp &&
        (!ztd_s3_request_id(resp, r) || MHD_add_response_header(resp, "ETag", b->etag) != MHD_YES ||
         MHD_add_response_header(resp, "Last-Modified", b->last_modified_text) != MHD_YES)) {
        MHD_destroy_response(resp);
        resp = NULL;
    }
    return ztd_queue(c, r, MHD_HTTP_NOT_MODIFIED, resp, 0);
}

/* The body's S3 form, and S3's answers where the plan sends none. */
static bool adjust(struct MHD_Connection *c, ztd_req *r, ztd_body *b, void *ctx,
                   enum MHD_Result *out)
{
    overrides *o = ctx;
    if (o->view)
        ztd_s3_view_etag(b->entry, b->etag);
    else
        ztd_s3_etag(b->entry, b->etag);
    if (o->has_type)
        b->content_type = o->type;
    if (o->has_disposition)
        b->content_disposition = o->disposition;
    if (o->has_cache)
        b->cache_control = o->cache;
    if (o->has_encoding)
        b->content_encoding = o->encoding;
    b->add_headers = add_headers;
    b->ctx = o;
    ztd_plan plan;
    ztd_body_plan(c, b, &plan);
    switch (plan.status) {
    case ZTD_PLAN_NOT_MODIFIED:
        *out = not_modified(c, r, b);
        return true;
    case ZTD_PLAN_PRECONDITION_FAILED:
        *out = ztd_s3_fail(c, r, ZTD_S3_PRECONDITION_FAILED);
        return true;
    case ZTD_PLAN_UNSATISFIABLE: {
        char cr[48];
        snprintf(cr, sizeof(cr), "bytes */%llu", (unsigned long long)b->len);
        *out = ztd_s3_error_hdr(c, r, ZTD_S3_INVALID_RANGE, "Content-Range", cr,
                                "The requested range is not satisfiable");
        return true;
    }
    default:
        return false;
    }
}

static enum MHD_Result answer_entry(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                    ztd_entry *e);
static enum MHD_Result answer_view(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                   ztd_entry *e);

/* Any catalog entry as an object (http/object_answer.h): a file's bytes, a
 * view's (of its file), an index's; view is set when e is the file a view
 * views (called again after a wait). */
static enum MHD_Result answer_as(ztd_server *s, struct MHD_Connection *c, ztd_req *r, ztd_entry *e,
                                 bool view)
{
    overrides o;
    read_overrides(c, r, &o);
    o.view = view || e->view_of;
    if (o.bad)
        return ztd_s3_error(c, r, ZTD_S3_INVALID_ARGUMENT,
                            "a response-* argument is badly encoded, too long or holds CR or LF");
    ztd_answer_hook h = {.adjust = adjust,
                         .ctx = &o,
                         .again = answer_entry,
                         .view_again = answer_view,
                         .no_disposition = true};
    if (view)
        return ztd_answer_view_adjusted(s, c, r, e, adjust, &o, answer_view);
    return ztd_answer_object_hooked(s, c, r, e, &h);
}

static enum MHD_Result answer_entry(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                    ztd_entry *e)
{
    return answer_as(s, c, r, e, ztd_answer_as_view(r)); /* the upstream's view of e */
}

static enum MHD_Result answer_view(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                   ztd_entry *e)
{
    return answer_as(s, c, r, e, true);
}

enum MHD_Result ztd_s3_get_object(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                  const ztd_s3_req *q)
{
    ztd_snapshot *snap = ztd_catalog_acquire(s->catalog);
    if (!snap)
        return ztd_s3_error(c, r, ZTD_S3_SERVICE_UNAVAILABLE, "the catalog is not ready yet");
    ztd_entry *e = ztd_snapshot_find(snap, q->name, q->name_len);
    if (e && !ztd_s3_entry_listed(e))
        e = NULL;
    if (e)
        ztd_entry_retain(e);
    ztd_snapshot_release(snap);
    if (!e && s->upstream && !ztd_file_path_problem(q->name, q->name_len))
        return ztd_answer_upstream_file(s, c, r, q->name, answer_entry); /* a sidecar */
    if (!e)
        return ztd_s3_fail(c, r, ZTD_S3_NO_SUCH_KEY);
    ztd_answer_pin(r, e);
    return answer_entry(s, c, r, e);
}
