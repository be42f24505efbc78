/*
 * Whole-file uploads, PUT /v1/files/{file} (see handlers.h). The request's
 * state is a `put`: the staging file with its hashing (store/put_file.h,
 * which the S3 front's PutObject uses too), and what the answer needs.
 */
#include "handlers/handlers.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/log.h"
#include "core/metrics.h"
#include "http/headers.h"
#include "http/offload.h"
#include "http/response.h"
#include "store/names.h"
#include "store/publish.h"
#include "store/put_file.h"
#include "store/uploads.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

typedef struct put {
    ztd_server *s;
    ztd_put_file *f; /* the staging file and its hashing (store/put_file.h) */
    ztd_digest_want want;
    ztd_disk_meter disk;
    /* Verify, fsync and publish, on the work queue: */
    ztd_offload work;
    const char *rel;
    ztd_preconds pc;
    ztd_err err; /* what it found */
    char msg[512];
    ztd_published out;
    size_t nobj;
    uint64_t t_body, t_published; /* monotonic us */
} put;

static void put_free(void *ctx)
{
    put *u = ctx;
    ztd_put_file_free(u->f);
    ztd_uploads_give(u->s->uploads);
    free(u);
}

/* The lists read with every field line of them (RFC 9110 §5.3). */
static ztd_preconds preconds(struct MHD_Connection *c, ztd_req *r)
{
    return (ztd_preconds){ztd_header_list(c, r, "If-Match"),
                          ztd_header_list(c, r, "If-None-Match")};
}

/* The checks that need no staging file, in the order docs/API.md gives. */
static enum MHD_Result refuse_early(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                    uint64_t declared, ztd_digest_want *want)
{
    const char *rel = r->match->file;
    size_t n = r->match->file_len;
    char msg[512];
    ztd_err e;
    /* .zt files, validated before publishing, or plain files (no tensor
     * extension) as they are; not .safetensors nor .alt. */
    if (ztd_file_ext_served(rel, n) && (n < 3 || strcmp(rel + n - 3, ".zt")))
        return ztd_fail(c, r, ZTD_ERR_BAD_NAME);
    if (!ztd_publish_name_fits(s->cfg->root, rel))
        return ztd_error(c, r, ZTD_ERR_BAD_NAME,
                         "the name is too long for the file system (a segment over %d bytes, "
                         "or more than %d bytes with the root's path)",
                         NAME_MAX, PATH_MAX - 1);
    if (!ztd_uploads_size_ok(s->uploads, 0, declared))
        return ztd_error(c, r, ZTD_ERR_TOO_LARGE,
                         "Content-Length %llu exceeds max_upload_size %llu",
                         (unsigned long long)declared, (unsigned long long)s->uploads->max_size);
    if (ztd_parse_digest_header(ztd_header(c, "Content-Digest"), want) != 0 ||
        (!want->present && ztd_parse_digest_header(ztd_header(c, "Repr-Digest"), want) != 0))
        return ztd_fail(c, r, ZTD_ERR_BAD_DIGEST_HEADER);
    ztd_preconds pc = preconds(c, r);
    if ((e = ztd_publish_preconditions(s->publisher, rel, &pc, msg, sizeof(msg))) ||
        (e = ztd_publish_name_free(s->publisher, rel, msg, sizeof(msg))))
        return ztd_error(c, r, e, "%s", msg);
    if (!s->staging)
        return ztd_fail(c, r, ZTD_ERR_UPLOADS_DISABLED);
    return MHD_YES;
}

enum MHD_Result ztd_put_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    const char *cl = ztd_header(c, "Content-Length"); /* digits only: framing.h */
    uint64_t declared = cl ? strtoull(cl, NULL, 10) : 0;
    ztd_digest_want want;
    enum MHD_Result ret = refuse_early(s, c, r, declared, &want);
    if (r->responded || ret != MHD_YES)
        return ret;
    if (!ztd_uploads_take(s->uploads))
        return ztd_error(c, r, ZTD_ERR_TOO_MANY_UPLOADS,
                         "%u uploads and sessions are already running", s->uploads->max_uploads);
    put *u = calloc(1, sizeof(*u));
    if (!u) {
        ztd_uploads_give(s->uploads);
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    }
    u->s = s;
    ztd_req_set_ctx(r, u, put_free);
    if (!ztd_uploads_disk_ok(s->uploads, declared))
        return ztd_error(c, r, ZTD_ERR_INSUFFICIENT_STORAGE,
                         "not enough free disk for %llu bytes plus the reserve of %llu",
                         (unsigned long long)declared,
                         (unsigned long long)s->uploads->disk_reserve);
    if (!(u->f = ztd_put_file_new(s->staging, "put", want.present)))
        return errno == ENOMEM ? ztd_fail(c, r, ZTD_ERR_INTERNAL)
                               : ztd_error(c, r, ztd_err_of_errno(errno, ZTD_ERR_STAGING_FAILED),
                                           "cannot create a staging file: %s", strerror(errno));
    u->want = want;
    return MHD_YES;
}

static enum MHD_Result write_failed(struct MHD_Connection *c, ztd_req *r, int e)
{
    return ztd_error(c, r, ztd_err_of_errno(e, ZTD_ERR_WRITE_FAILED),
                     "writing the staging file: %s", strerror(e));
}

enum MHD_Result ztd_put_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r, const char *data,
                             size_t n)
{
    put *u = r->ctx;
    if (!ztd_uploads_size_ok(s->uploads, ztd_put_file_received(u->f), n))
        return ztd_error(c, r, ZTD_ERR_TOO_LARGE, "body exceeds max_upload_size %llu",
                         (unsigned long long)s->uploads->max_size);
    ztd_metrics_upload_bytes(n);
    if (ztd_put_file_write(u->f, data, n) != 0)
        return write_failed(c, r, errno);
    if (!ztd_uploads_disk_meter(s->uploads, &u->disk, ztd_put_file_received(u->f)))
        return ztd_error(c, r, ZTD_ERR_INSUFFICIENT_STORAGE,
                         "free disk fell below the reserve of %llu bytes",
                         (unsigned long long)s->uploads->disk_reserve);
    return MHD_YES;
}

/* On the work queue: verify (fsynced meanwhile), then publish. */
static void verify_and_publish(ztd_offload *o)
{
    put *u = (put *)((char *)o - offsetof(put, work));
    u->err = ztd_put_file_publish(u->f, u->s->publisher, u->rel, &u->pc, &u->nobj, &u->out, u->msg,
                                  sizeof(u->msg));
    u->t_published = ztd_now_us();
}

/* The body is all written: its digest, then the rest off this thread. */
static enum MHD_Result body_done(struct MHD_Connection *c, ztd_req *r, put *u)
{
    uint8_t got[32];
    if (ztd_put_file_end(u->f, got) != 0)
        return write_failed(c, r, errno);
    if (u->want.present && memcmp(got, u->want.sha256, 32) != 0)
        return ztd_fail(c, r, ZTD_ERR_BODY_DIGEST_MISMATCH);
    u->t_body = ztd_now_us();
    u->rel = r->match->file;
    u->pc = preconds(c, r);
    return MHD_YES;
}

enum MHD_Result ztd_put_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    put *u = r->ctx;
    if (!u->work.started) {
        enum MHD_Result ret = body_done(c, r, u);
        if (r->responded || ret != MHD_YES)
            return ret;
        if (!ztd_offload_start(s, c, &u->work, verify_and_publish))
            return MHD_YES; /* called again once it has run */
    }
    if (!ztd_offload_done(&u->work))
        return MHD_YES;
    ztd_log(ZTD_LOG_DEBUG,
            "PUT %s: %llu bytes, body in %llu ms, verify+fsync+publish in %llu ms (first "
            "component: %llu MiB hashed as the body arrived, %u components hashed so)",
            u->rel, (unsigned long long)ztd_put_file_received(u->f),
            (unsigned long long)(u->t_body - r->t0_us) / 1000,
            (unsigned long long)(u->t_published - u->t_body) / 1000,
            (unsigned long long)(ztd_put_file_hashed(u->f) >> 20), ztd_put_file_answered(u->f));
    if (u->err)
        return ztd_error(c, r, u->err, "%s", u->msg);
    ztd_log(ZTD_LOG_INFO, "published %s (%llu bytes, %zu objects, %s)", u->rel,
            (unsigned long long)u->out.size, u->nobj, u->out.replaced ? "replaced" : "new");
    return ztd_published_answer(c, r, u->rel, u->out.size, u->nobj, u->out.etag, u->out.replaced);
}
