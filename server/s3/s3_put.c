/*
 * The S3 front's writes (s3_put.h). One state per write request, `s3w`:
 *  - PutObject: the body streams into store/put_file (the staging and atomic
 *    publish PUT /v1/files uses), hashed as it arrives for the checksums the
 *    client sent (Content-MD5, x-amz-checksum-sha256, x-amz-checksum-crc32,
 *    a hex x-amz-content-sha256: s3_sums.h), each checked before the file is checked
 *    (.zt/.safetensors structure and every digest) and published, off
 *    libmicrohttpd's threads;
 *  - DeleteObject and DeleteObjects (its XML body collected whole, parsed
 *    by s3_delete_xml.c): unlinks under the publication locks, off the
 *    threads too.
 * Payload forms (ztd_s3_payload_open): a plain body, or an aws-chunked one
 * (x-amz-content-sha256: STREAMING-...), decoded as it arrives into the
 * same staging file; its chunk signatures, trailer checksum and decoded
 * length are all checked (ztd_awsc_finish) before anything is published,
 * and a failed check leaves nothing (the staging file is removed).
 */
#include "s3/s3_put.h"
#include "core/config.h"
#include "core/log.h"
#include "core/metrics.h"
#include "http/offload.h"
#include "http/response.h"
#include "s3/s3_delete_xml.h"
#include "s3/s3_error.h"
#include "s3/s3_sums.h"
#include "store/names.h"
#include "store/publish.h"
#include "store/put_file.h"
#include "store/uploads.h"
#include "store/catalog.h"
#include "http/headers.h"

#include <stdio.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BODY_MAX (1u << 20) /* a DeleteObjects document */

typedef enum { W_PUT, W_DELETE, W_DELETE_MANY } w_kind;

typedef struct s3w {
    w_kind kind;
    ztd_server *s;
    char rel[2 * ZTD_PATH_MAX + 2];
    char base[ZTD_PATH_MAX + 2]; /* DeleteObjects: the bucket's directory + '/', or "" */
    /* PutObject */
    ztd_put_file *f;
    ztd_awsc *dec;         /* aws-chunked bodies: the decoder, which feeds stage() */
    ztd_s3_sink_fail fail; /* stage() refused: why */
    bool slot;
    ztd_disk_meter disk;
    ztd_s3_sums sums;
    /* DeleteObjects: the body, then the keys and what became of each */
    char *body;
    size_t blen;
    ztd_s3_delete_list *list;
    /* off the threads */
    ztd_offload work;
    char if_match[256], if_none_match[256];
    bool has_if_match, has_if_none_match;
    ztd_err err;
    char msg[512];
    ztd_published out;
    size_t nobj;
} s3w;

static void w_free(void *p)
{
    s3w *w = p;
    ztd_awsc_free(w->dec);
    ztd_put_file_free(w->f);
    if (w->slot)
        ztd_uploads_give(w->s->uploads);
    ztd_s3_sums_free(&w->sums);
    free(w->body);
    ztd_s3_delete_list_free(w->list);
    free(w);
}

static s3w *w_of(ztd_req *r)
{
    return ztd_req_ctx_of(r, w_free);
}

static s3w *w_new(ztd_server *s, ztd_req *r, w_kind kind, const char *rel)
{
    s3w *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->kind = kind;
    w->s = s;
    snprintf(w->rel, sizeof(w->rel), "%s", rel);
    ztd_req_set_ctx(r, w, w_free);
    return w;
}

/* The write preconditions, copied: the answer is made after the request's
 * headers may be gone from reach of the queue thread. */
static void take_preconds(struct MHD_Connection *c, ztd_req *r, s3w *w)
{
    const char *v = ztd_header_list(c, r, "If-Match");
    if ((w->has_if_match = v != NULL)) {
        snprintf(w->if_match, sizeof(w->if_match), "%s", v);
        ztd_s3_etags_to_raw(w->if_match);
    }
    v = ztd_header_list(c, r, "If-None-Match");
    if ((w->has_if_none_match = v != NULL)) {
        snprintf(w->if_none_match, sizeof(w->if_none_match), "%s", v);
        ztd_s3_etags_to_raw(w->if_none_match);
    }
}

static ztd_preconds preconds_of(const s3w *w)
{
    return (ztd_preconds){w->has_if_match ? w->if_match : NULL,
                          w->has_if_none_match ? w->if_none_match : NULL};
}

/* A store error as S3 says it. */
static ztd_s3_err s3_err_of(ztd_err e)
{
    switch (ztd_err_status(e)) {
    case 404:
        return ZTD_S3_NO_SUCH_KEY;
    case 409:
        return ZTD_S3_INVALID_REQUEST;
    case 412:
        return ZTD_S3_PRECONDITION_FAILED;
    case 413:
        return ZTD_S3_ENTITY_TOO_LARGE;
    case 503:
        return ZTD_S3_SERVICE_UNAVAILABLE;
    case 507:
        return ZTD_S3_INSUFFICIENT_STORAGE;
    default:
        return ztd_err_status(e) < 500 ? ZTD_S3_INVALID_OBJECT : ZTD_S3_INTERNAL;
    }
}

static int put_sink(void *ctx, const uint8_t *p, size_t n);

enum MHD_Result ztd_s3_put_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                 const ztd_s3_req *q, const ztd_s3_auth *auth)
{
    const char *why, *cl = ztd_header(c, "Content-Length");
    uint64_t declared = cl ? strtoull(cl, NULL, 10) : 0;
    char msg[512];
    ztd_err e;
    int perr = 0;
    int64_t decoded = -1;
    if (!ztd_s3_payload_open(c, auth, put_sink, NULL, NULL, &decoded, &perr, msg, sizeof(msg)))
        return ztd_s3_error(c, r, (ztd_s3_err)perr, "%s", msg);
    if (decoded >= 0)
        declared = (uint64_t)decoded;
    if ((why = ztd_s3_key_problem(q)))
        return ztd_s3_error(c, r, ZTD_S3_INVALID_ARGUMENT, "key \"%s\": %s", q->key, why);
    if (!cl && !ztd_header(c, "Transfer-Encoding"))
        return ztd_s3_fail(c, r, ZTD_S3_MISSING_LENGTH);
    if (!ztd_uploads_size_ok(s->uploads, 0, declared))
        return ztd_s3_error(c, r, ZTD_S3_ENTITY_TOO_LARGE,
                            "Content-Length %llu exceeds max_upload_size %llu",
                            (unsigned long long)declared, (unsigned long long)s->uploads->max_size);
    if (!s->staging)
        return ztd_s3_error(c, r, ZTD_S3_ACCESS_DENIED, "uploads are disabled on this server");
    s3w *w = w_new(s, r, W_PUT, q->name);
    if (!w)
        return MHD_NO;
    if (!ztd_s3_payload_open(c, auth, put_sink, w, &w->dec, &decoded, &perr, msg, sizeof(msg)))
        return ztd_s3_error(c, r, (ztd_s3_err)perr, "%s", msg);
    take_preconds(c, r, w);
    ztd_preconds pc = preconds_of(w);
    if ((e = ztd_publish_preconditions(s->publisher, w->rel, &pc, msg, sizeof(msg))) ||
        (e = ztd_publish_name_free(s->publisher, w->rel, msg, sizeof(msg))))
        return ztd_s3_error(c, r, s3_err_of(e), "%s", msg);
    if ((why = ztd_s3_sums_take(c, &w->sums)))
        return ztd_s3_error(c, r, ZTD_S3_INVALID_DIGEST, "%s", why);
    if (!(w->slot = ztd_uploads_take(s->uploads)))
        return ztd_s3_error(c, r, ZTD_S3_SERVICE_UNAVAILABLE, "%u uploads are already running",
                            s->uploads->max_uploads);
    if (!ztd_uploads_disk_ok(s->uploads, declared))
        return ztd_s3_error(c, r, ZTD_S3_INSUFFICIENT_STORAGE,
                            "not enough free disk for %llu bytes plus the reserve",
                            (unsigned long long)declared);
    if (!ztd_s3_sums_start(&w->sums, false, false))
        return ztd_s3_fail(c, r, ZTD_S3_INTERNAL);
    if (!(w->f = ztd_put_file_new(s->staging, "s3put", ztd_s3_sums_need_sha(&w->sums))))
        return ztd_s3_error(c, r, ZTD_S3_INTERNAL, "cannot create a staging file: %s",
                            strerror(errno));
    return MHD_YES;
}

/* Body bytes (decoded, for aws-chunked) into the staging file: 0, or -1
 * with w->fail.failed and why. */
static int stage(s3w *w, const uint8_t *data, size_t n)
{
    ztd_server *s = w->s;
    w->fail.failed = true;
    if (!ztd_uploads_size_ok(s->uploads, ztd_put_file_received(w->f), n)) {
        w->fail.err = ZTD_S3_ENTITY_TOO_LARGE;
        snprintf(w->fail.msg, sizeof(w->fail.msg), "the body exceeds max_upload_size %llu",
                 (unsigned long long)s->uploads->max_size);
        return -1;
    }
    ztd_metrics_upload_bytes(n);
    ztd_s3_sums_update(&w->sums, data, n);
    if (ztd_put_file_write(w->f, data, n) != 0) {
        w->fail.err = ZTD_S3_INTERNAL;
        snprintf(w->fail.msg, sizeof(w->fail.msg), "writing the staging file: %s", strerror(errno));
        return -1;
    }
    if (!ztd_uploads_disk_meter(s->uploads, &w->disk, ztd_put_file_received(w->f))) {
        w->fail.err = ZTD_S3_INSUFFICIENT_STORAGE;
        snprintf(w->fail.msg, sizeof(w->fail.msg), "free disk fell below the reserve of %llu bytes",
                 (unsigned long long)s->uploads->disk_reserve);
        return -1;
    }
    w->fail.failed = false;
    return 0;
}

static int put_sink(void *ctx, const uint8_t *p, size_t n)
{
    return ctx ? stage(ctx, p, n) : -1;
}

enum MHD_Result ztd_s3_body_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                  const ztd_s3_req *q)
{
    s3w *w = w_new(s, r, W_DELETE_MANY, "");
    if (!w)
        return MHD_NO;
    if (q->bucket->dir_len)
        snprintf(w->base, sizeof(w->base), "%s/", q->bucket->dir);
    return MHD_YES;
}

enum MHD_Result ztd_s3_body_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                 const char *data, size_t n)
{
    s3w *w = w_of(r);
    if (w && w->kind == W_PUT)
        return ztd_s3_feed(c, r, w->dec, put_sink, w, &w->fail, data, n);
    if (!w || w->kind != W_DELETE_MANY)
        return MHD_YES; /* a body nobody asked for */
    if (w->blen + n > BODY_MAX)
        return ztd_s3_error(c, r, ZTD_S3_MALFORMED_XML, "the document exceeds %u bytes", BODY_MAX);
    char *b = realloc(w->body, w->blen + n + 1);
    if (!b)
        return MHD_NO;
    memcpy(b + w->blen, data, n);
    w->blen += n;
    b[w->blen] = 0;
    w->body = b;
    return MHD_YES;
}

/* ---- off the threads */

static void publish_job(ztd_offload *o)
{
    s3w *w = (s3w *)((char *)o - offsetof(s3w, work));
    ztd_preconds pc = preconds_of(w);
    w->err = ztd_put_file_publish(w->f, w->s->publisher, w->rel, &pc, &w->nobj, &w->out, w->msg,
                                  sizeof(w->msg));
}

static void delete_job(ztd_offload *o)
{
    s3w *w = (s3w *)((char *)o - offsetof(s3w, work));
    ztd_preconds pc = preconds_of(w);
    if (w->kind == W_DELETE) {
        w->err = ztd_publish_remove(w->s->publisher, w->rel, &pc, w->msg, sizeof(w->msg));
        return;
    }
    for (size_t i = 0; i < w->list->n; i++) {
        ztd_s3_delete_item *it = &w->list->items[i];
        char rel[2 * ZTD_PATH_MAX + 2], msg[512];
        if (it->code || it->skip)
            continue;
        snprintf(rel, sizeof(rel), "%s%s", w->base, it->key);
        ztd_preconds none = {NULL, NULL};
        ztd_err e = ztd_publish_remove(w->s->publisher, rel, &none, msg, sizeof(msg));
        if (e && ztd_err_status(e) != 404) {
            it->code = ztd_s3_err_code(s3_err_of(e));
            snprintf(it->message, sizeof(it->message), "%.255s", msg);
        }
    }
}

static enum MHD_Result put_answer(struct MHD_Connection *c, ztd_req *r, s3w *w)
{
    if (w->err)
        return ztd_s3_error(c, r, s3_err_of(w->err), "%s", w->msg);
    ztd_log(ZTD_LOG_INFO, "S3 PutObject published %s (%llu bytes, %zu objects, %s)", w->rel,
            (unsigned long long)w->out.size, w->nobj, w->out.replaced ? "replaced" : "new");
    char etag[96];
    size_t n = strlen(w->out.etag);
    snprintf(etag, sizeof(etag), "%.*s-1\"", (int)(n ? n - 1 : 0), w->out.etag);
    return ztd_s3_empty_answer(c, r, 200, "ETag", etag);
}

enum MHD_Result ztd_s3_put_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                               const ztd_s3_req *q)
{
    s3w *w = w_of(r);
    uint8_t sha[32];
    ztd_s3_err se;
    const char *why;
    if (!w || w->kind != W_PUT)
        return ztd_s3_fail(c, r, ZTD_S3_INTERNAL);
    ztd_s3err ce = w->dec ? ztd_awsc_finish(w->dec) : ZTD_S3E_OK;
    if (ce != ZTD_S3E_OK) /* nothing is published; w_free removes the staging file */
        return ztd_s3_error(c, r, ztd_s3_err_from(ce), "%s", ztd_awsc_message(w->dec));
    if (ztd_put_file_end(w->f, sha) != 0)
        return ztd_s3_error(c, r, ZTD_S3_INTERNAL, "writing the staging file: %s", strerror(errno));
    if (!ztd_s3_sums_hold(&w->sums, sha, &se, &why))
        return ztd_s3_error(c, r, se, "%s", why);
    if (!ztd_offload_start(s, c, &w->work, publish_job))
        return MHD_YES;
    return put_answer(c, r, w);
}

static enum MHD_Result delete_answer(struct MHD_Connection *c, ztd_req *r, s3w *w)
{
    if (w->kind == W_DELETE) {
        if (w->err && ztd_err_status(w->err) != 404) /* S3: deleting nothing succeeds */
            return ztd_s3_error(c, r, s3_err_of(w->err), "%s", w->msg);
        return ztd_s3_empty_answer(c, r, 204, NULL, NULL);
    }
    ztd_xml x;
    ztd_xml_begin(&x);
    ztd_s3_delete_result(&x, w->list);
    return ztd_s3_xml_answer(c, r, 200, &x);
}

bool ztd_s3_put_resume(ztd_server *s, struct MHD_Connection *c, ztd_req *r, enum MHD_Result *out)
{
    s3w *w = w_of(r);
    if (!w || !w->work.started)
        return false;
    if (!ztd_offload_done(&w->work))
        *out = MHD_YES;
    else
        *out = w->kind == W_PUT ? put_answer(c, r, w) : delete_answer(c, r, w);
    return true;
}

enum MHD_Result ztd_s3_delete_object(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                     const ztd_s3_req *q)
{
    if (ztd_file_path_problem(q->name, q->name_len))
        return ztd_s3_empty_answer(c, r, 204, NULL, NULL); /* no such file can exist */
    s3w *w = w_new(s, r, W_DELETE, q->name);
    if (!w)
        return MHD_NO;
    take_preconds(c, r, w);
    if (!ztd_offload_start(s, c, &w->work, delete_job))
        return MHD_YES;
    return delete_answer(c, r, w);
}

enum MHD_Result ztd_s3_delete_objects(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                      const ztd_s3_req *q)
{
    s3w *w = w_of(r);
    char why[256];
    const char *bad;
    ztd_s3_err se;
    if (!w || w->kind != W_DELETE_MANY)
        return ztd_s3_fail(c, r, ZTD_S3_INTERNAL);
    if ((bad = ztd_s3_sums_take(c, &w->sums)))
        return ztd_s3_error(c, r, ZTD_S3_INVALID_DIGEST, "%s", bad);
    if (!ztd_s3_sums_start(&w->sums, false, true))
        return ztd_s3_fail(c, r, ZTD_S3_INTERNAL);
    ztd_s3_sums_update(&w->sums, w->body ? w->body : "", w->blen);
    if (!ztd_s3_sums_hold(&w->sums, NULL, &se, &bad))
        return ztd_s3_error(c, r, se, "%s", bad);
    if (!(w->list = ztd_s3_delete_parse(w->body ? w->body : "", w->blen, why, sizeof(why))))
        return ztd_s3_error(c, r, ZTD_S3_MALFORMED_XML, "%s", why);
    for (size_t i = 0; i < w->list->n; i++) {
        ztd_s3_delete_item *it = &w->list->items[i];
        char rel[2 * ZTD_PATH_MAX + 2];
        int k = snprintf(rel, sizeof(rel), "%s%s", w->base, it->key);
        if (k < 0 || (size_t)k >= sizeof(rel) || ztd_file_path_problem(rel, (size_t)k))
            it->skip = true; /* no such file can exist: deleted, as S3 says of missing keys */
    }
    if (!ztd_offload_start(s, c, &w->work, delete_job))
        return MHD_YES;
    return delete_answer(c, r, w);
}
