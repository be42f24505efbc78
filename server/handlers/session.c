/*
 * Upload sessions over HTTP (see handlers.h). A request that uses a session
 * holds it busy (store/sessions.h) from its first call to its end; the
 * component PUT's state (`creq`) releases it, and cuts an unfinished
 * component back out, whenever the request ends.
 */
#include "core/json_line.h"
#include "handlers/handlers.h"
#include "core/config.h"
#include "core/log.h"
#include "core/metrics.h"
#include "http/headers.h"
#include "http/json_body.h"
#include "http/offload.h"
#include "http/response.h"
#include "http/upload_json.h"
#include "store/publish.h"
#include "store/sessions.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ztensor/ztensor_experimental.h>

#define SHA_BUF (1u << 20)

static enum MHD_Result session_error(struct MHD_Connection *c, ztd_req *r, bool busy)
{
    if (busy)
        return ztd_error(c, r, ZTD_ERR_SESSION_BUSY, "another request is using upload session %s",
                         r->match->upload_id);
    return ztd_error(c, r, ZTD_ERR_UPLOAD_NOT_FOUND, "no upload session %s", r->match->upload_id);
}

/* Something removed the session's staging file: its components are lost. */
static enum MHD_Result lost_answer(struct MHD_Connection *c, ztd_req *r, ztd_session *x)
{
    char msg[512];
    ztd_log(ZTD_LOG_ERROR, "upload session %s for %s: its staging file %s was removed or replaced",
            x->id, x->file, x->name);
    ztd_err e = ztd_publish_lost(x->file,
                                 "the staging file of the upload session was removed; the "
                                 "session is over",
                                 msg, sizeof(msg));
    return ztd_error(c, r, e, "%s", msg);
}

/* ---- POST /v1/uploads */

static enum MHD_Result opened(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                              const ztd_session *x)
{
    char url[64];
    snprintf(url, sizeof(url), "/v1/uploads/%s", x->id);
    json_t *o = json_pack("{s:s, s:s, s:s, s:I}", "id", x->id, "url", url, "file", x->file,
                          "idle_timeout_ms", (json_int_t)s->cfg->session_idle_timeout_ms);
    size_t n = 0;
    char *txt = ztd_json_line(o, &n);
    json_decref(o);
    if (!txt)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    struct MHD_Response *resp = ztd_response_owned(txt, n, "application/json");
    if (resp)
        MHD_add_response_header(resp, "Location", url);
    return ztd_queue(c, r, 201, resp, n);
}

enum MHD_Result ztd_session_open(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    ztd_open_request req;
    char msg[512];
    ztd_json_text body = ztd_json_body(r);
    ztd_err e = ztd_open_parse(body.p, body.n, &req, msg, sizeof(msg));
    if (e)
        return ztd_error(c, r, e, "%s", msg);
    if (!s->staging) {
        ztd_open_request_free(&req);
        return ztd_fail(c, r, ZTD_ERR_UPLOADS_DISABLED);
    }
    int en = 0;
    zt_error err;
    ztd_session *x =
        ztd_sessions_open(s->sessions, s->staging, req.file, req.attributes, &en, &err);
    ztd_open_request_free(&req);
    if (!x && en == EBUSY)
        return ztd_error(c, r, ZTD_ERR_TOO_MANY_UPLOADS,
                         "%u uploads and sessions are already running", s->uploads->max_uploads);
    if (!x && en == ENOMEM)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    if (!x)
        return ztd_error(c, r, ztd_err_of_errno(en, ZTD_ERR_STAGING_FAILED),
                         "cannot start the upload: %s", strerror(en));
    ztd_log(ZTD_LOG_INFO, "upload session %s opened for %s", x->id, x->file);
    return opened(s, c, r, x);
}

/* ---- GET /v1/uploads/{id} */

static json_t *component_json(const ztd_session_key *k)
{
    return json_pack("{s:I, s:I, s:I, s:s, s:s}", "offset", (json_int_t)k->info.offset, "length",
                     (json_int_t)k->info.length, "uncompressed_length",
                     (json_int_t)k->info.uncompressed_length, "encoding",
                     k->info.encoding == ZT_ENC_ZSTD ? "zstd" : "raw", "digest", k->info.digest);
}

enum MHD_Result ztd_session_status(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    bool busy;
    ztd_session *x = ztd_sessions_acquire(s->sessions, r->match->upload_id, &busy);
    if (!x)
        return session_error(c, r, busy);
    json_t *comps = json_object();
    for (size_t i = 0; i < x->nkeys; i++)
        json_object_set_new(comps, x->keys[i].key, component_json(&x->keys[i]));
    json_t *o = json_pack("{s:s, s:s, s:I, s:o}", "id", x->id, "file", x->file, "bytes",
                          (json_int_t)zt_writer_position(x->w), "components", comps);
    ztd_sessions_release(s->sessions, x);
    char *txt = ztd_json_line(o, NULL);
    json_decref(o);
    if (!txt)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    enum MHD_Result ret = ztd_json(c, r, 200, txt, strlen(txt), 1);
    free(txt);
    return ret;
}

/* ---- DELETE /v1/uploads/{id} */

enum MHD_Result ztd_session_abort(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    bool busy;
    ztd_session *x = ztd_sessions_acquire(s->sessions, r->match->upload_id, &busy);
    if (!x)
        return session_error(c, r, busy);
    ztd_log(ZTD_LOG_INFO, "upload session %s for %s aborted", x->id, x->file);
    ztd_sessions_end(s->sessions, x);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    return ztd_queue(c, r, 204, resp, 0);
}

/* ---- PUT /v1/uploads/{id}/components/{key} */

typedef struct creq {
    ztd_server *s;
    ztd_session *sess;
    char *key; /* r->match->key, for the end of the request */
    bool in_component;
    zt_hasher *sha;       /* a zstd body's Content-Digest, when no thread could be had */
    zt_hash_thread *shat; /* ... or on another thread, fed through hbuf */
    uint8_t *hbuf;
    size_t hlen;
    ztd_digest_want want;
    uint64_t received;
    ztd_disk_meter disk;
    bool lost; /* the session's staging file is gone: the session ends with the request */
} creq;

/* The request ended, answered or not: cut an unfinished component back out,
 * and give the session back (or end it, when its staging file is gone). */
/* Give the session back: a component not ended is cut back first. Done
 * before the final answer is queued, so that a client that sends its next
 * component as soon as it has the answer never finds the session still busy
 * (409 session_busy), and again (a no-op then) when the request is freed. */
static void creq_let_go(creq *q)
{
    zt_error err;
    if (!q->sess)
        return;
    if (q->in_component && zt_writer_cancel(q->sess->w, &err))
        ztd_log(ZTD_LOG_ERROR, "upload session %s: cannot cut back component \"%s\": %s",
                q->sess->id, q->key, err.message);
    q->in_component = false;
    if (q->lost)
        ztd_sessions_end(q->s->sessions, q->sess);
    else
        ztd_sessions_release(q->s->sessions, q->sess);
    q->sess = NULL;
}

static void creq_free(void *ctx)
{
    creq *q = ctx;
    creq_let_go(q);
    zt_hasher_free(q->sha);
    zt_hash_thread_free(q->shat, q->hbuf);
    free(q->key);
    free(q);
}

/* The checks before the body that need the session (held by q). */
static enum MHD_Result refuse_component(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                        creq *q, bool raw)
{
    ztd_session *x = q->sess;
    if ((q->lost = !ztd_session_intact(x)))
        return lost_answer(c, r, x);
    if (ztd_session_find_key(x, r->match->key))
        return ztd_error(c, r, ZTD_ERR_COMPONENT_EXISTS,
                         "component \"%s\" was already uploaded in session %s", r->match->key,
                         x->id);
    if (x->nkeys >= s->cfg->max_session_components)
        return ztd_error(c, r, ZTD_ERR_TOO_MANY_COMPONENTS,
                         "session %s already has %zu components (max_session_components)", x->id,
                         x->nkeys);
    /* A raw component stores exactly its body: check a declared Content-Length now,
     * as a whole-file PUT does, while a refusal can still reach the client. */
    const char *cl = raw ? ztd_header(c, "Content-Length") : NULL;
    uint64_t declared = cl ? strtoull(cl, NULL, 10) : 0;
    if (!ztd_uploads_size_ok(s->uploads, zt_writer_position(x->w), declared))
        return ztd_error(c, r, ZTD_ERR_TOO_LARGE,
                         "Content-Length %llu would take the session past max_upload_size %llu",
                         (unsigned long long)declared, (unsigned long long)s->uploads->max_size);
    if (!ztd_uploads_disk_ok(s->uploads, declared))
        return ztd_error(c, r, ZTD_ERR_INSUFFICIENT_STORAGE,
                         "not enough free disk for %llu bytes plus the reserve of %llu",
                         (unsigned long long)declared,
                         (unsigned long long)s->uploads->disk_reserve);
    return MHD_YES;
}

enum MHD_Result ztd_component_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    const char *enc = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "encoding");
    const char *lvl = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "level");
    if (enc && strcmp(enc, "zstd") && strcmp(enc, "raw"))
        return ztd_error(c, r, ZTD_ERR_BAD_REQUEST, "encoding must be raw or zstd");
    ztd_digest_want want;
    if (ztd_parse_digest_header(ztd_header(c, "Content-Digest"), &want) != 0 ||
        (!want.present && ztd_parse_digest_header(ztd_header(c, "Repr-Digest"), &want) != 0))
        return ztd_fail(c, r, ZTD_ERR_BAD_DIGEST_HEADER);
    bool busy;
    ztd_session *x = ztd_sessions_acquire(s->sessions, r->match->upload_id, &busy);
    if (!x)
        return session_error(c, r, busy);
    creq *q = calloc(1, sizeof(*q));
    if (!q || !(q->key = strdup(r->match->key))) {
        free(q);
        ztd_sessions_release(s->sessions, x);
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    }
    q->s = s;
    q->sess = x;
    ztd_req_set_ctx(r, q, creq_free);
    bool raw = !enc || !strcmp(enc, "raw");
    enum MHD_Result ret = refuse_component(s, c, r, q, raw);
    if (r->responded || ret != MHD_YES)
        return ret;
    zt_component_spec spec = {.dtype = ZT_DTYPE_U8,
                              .encoding = raw ? ZT_ENC_RAW : ZT_ENC_ZSTD,
                              .zstd_level = lvl ? atoi(lvl) : 0,
                              .digest = ZT_DIGEST_SHA256};
    zt_error err;
    if (zt_writer_begin(x->w, &spec, &err))
        return ztd_error(c, r, ztd_err_of_zt(err.code, ZTD_OP_WRITE), "%s", err.message);
    q->in_component = true;
    q->want = want;
    /* A raw component's stored bytes are the body: the writer's own sha256
     * (computed beside the writes) is compared at the end. A zstd one needs
     * the body's digest computed here. */
    if (want.present && !raw &&
        !(q->shat = zt_hash_thread_new(ZT_DIGEST_SHA256, SHA_BUF, &q->hbuf)) &&
        !(q->sha = zt_hasher_new(ZT_DIGEST_SHA256)))
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    return MHD_YES;
}

/* The body's own digest, for a zstd component: copied, as MHD reuses its buffer. */
static void hash_body(creq *q, const char *data, size_t n)
{
    if (q->sha)
        zt_hasher_update(q->sha, data, n);
    for (size_t off = 0; q->shat && off < n;) {
        size_t k = SHA_BUF - q->hlen < n - off ? SHA_BUF - q->hlen : n - off;
        memcpy(q->hbuf + q->hlen, data + off, k);
        q->hlen += k;
        off += k;
        if (q->hlen == SHA_BUF) {
            q->hbuf = zt_hash_thread_submit(q->shat, q->hbuf, q->hlen);
            q->hlen = 0;
        }
    }
}

enum MHD_Result ztd_component_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                   const char *data, size_t n)
{
    creq *q = r->ctx;
    zt_error err;
    if (!ztd_uploads_size_ok(s->uploads, zt_writer_position(q->sess->w), n))
        return ztd_error(c, r, ZTD_ERR_TOO_LARGE, "the session exceeds max_upload_size %llu",
                         (unsigned long long)s->uploads->max_size);
    ztd_metrics_upload_bytes(n);
    q->received += n;
    if (!ztd_uploads_disk_meter(s->uploads, &q->disk, q->received))
        return ztd_error(c, r, ZTD_ERR_INSUFFICIENT_STORAGE,
                         "free disk fell below the reserve of %llu bytes",
                         (unsigned long long)s->uploads->disk_reserve);
    hash_body(q, data, n);
    if (zt_writer_write(q->sess->w, data, n, &err))
        return ztd_error(c, r, ztd_err_of_zt(err.code, ZTD_OP_WRITE), "%s", err.message);
    return MHD_YES;
}

/* Does the component match the digest its client sent (if any)? -1: cannot tell. */
static int digest_matches(creq *q, zt_error *err)
{
    uint8_t got[32];
    if (!q->want.present)
        return 1;
    if (q->shat) {
        q->hbuf = zt_hash_thread_submit(q->shat, q->hbuf, q->hlen);
        q->hlen = 0;
        zt_hash_thread_final(q->shat, got);
    } else if (q->sha) {
        zt_hasher_final(q->sha, got);
    } else if (zt_writer_digest_so_far(q->sess->w, got, NULL, err)) {
        return -1;
    }
    return !memcmp(got, q->want.sha256, 32);
}

enum MHD_Result ztd_component_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    (void)s;
    creq *q = r->ctx;
    ztd_session *x = q->sess;
    zt_error err;
    if ((q->lost = !ztd_session_intact(x))) /* a 201 would promise bytes that are gone */
        return lost_answer(c, r, x);
    int match = digest_matches(q, &err);
    if (match < 0) {
        creq_let_go(q);
        return ztd_error(c, r, ZTD_ERR_INTERNAL, "%s", err.message);
    }
    if (!match) {
        creq_let_go(q);
        return ztd_error(c, r, ZTD_ERR_BODY_DIGEST_MISMATCH,
                         "component \"%s\" does not match its Content-Digest; its bytes were "
                         "discarded",
                         r->match->key);
    }
    size_t id;
    char *key;
    if (ztd_session_prepare_key(x, r->match->key, &key) != 0) {
        creq_let_go(q);
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    }
    if (zt_writer_end(x->w, &id, &err)) {
        free(key);
        creq_let_go(q);
        return ztd_error(c, r, ztd_err_of_zt(err.code, ZTD_OP_WRITE), "%s", err.message);
    }
    q->in_component = false;
    ztd_session_add_key(x, key, id);
    const ztd_session_key *k = &x->keys[x->nkeys - 1];
    json_t *o = component_json(k);
    json_object_set_new(o, "key", json_string(k->key));
    char *txt = ztd_json_line(o, NULL);
    json_decref(o);
    creq_let_go(q);
    enum MHD_Result ret = ztd_json(c, r, 201, txt ? txt : "{}\n", txt ? strlen(txt) : 3, 1);
    free(txt);
    return ret;
}

/* ---- POST /v1/uploads/{id}/commit */

/* The parsed objects into the writer; -1 with err (err->code ZT_OK: an unknown key). */
static int add_objects(ztd_session *x, const ztd_commit *cm, zt_error *err)
{
    for (size_t i = 0; i < cm->n; i++) {
        const ztd_commit_object *o = &cm->objects[i];
        const char *roles[ZTD_COMMIT_MAX_PARTS];
        size_t ids[ZTD_COMMIT_MAX_PARTS];
        for (size_t k = 0; k < o->nparts; k++) {
            const ztd_commit_part *p = &o->parts[k];
            const ztd_session_key *key = ztd_session_find_key(x, p->key);
            if (!key) {
                *err = (zt_error){0};
                snprintf(err->message, sizeof(err->message),
                         "object \"%s\" component \"%s\": \"key\" names no uploaded component",
                         o->name, p->role);
                return -1;
            }
            if (zt_writer_set_component_type(x->w, key->id, p->dtype, p->type, err))
                return -1;
            roles[k] = p->role;
            ids[k] = key->id;
        }
        if (zt_writer_add_object(x->w, o->name, o->format, o->ndim, o->dims, o->attributes,
                                 o->nparts, roles, ids, err))
            return -1;
    }
    return 0;
}

/* Back to how the session was before this commit: open, its components kept. */
static void not_committed(ztd_server *s, ztd_session *x)
{
    zt_writer_drop_objects(x->w, 0);
    ztd_sessions_release(s->sessions, x);
}

/* The commit's publication, run off libmicrohttpd's threads, and what it found. */
typedef struct commit_job {
    ztd_offload work;
    ztd_server *s;
    ztd_session *x; /* held busy until the job gives it back or ends it */
    ztd_preconds pc;
    char file[PATH_MAX];
    ztd_err err;
    char msg[1024];
    ztd_published out;
    size_t nobj;
} commit_job;

static void commit_job_free(void *ctx)
{
    free(ctx); /* the job has given the session back or ended it */
}

/* Locked, the manifest written: the session ends and its file is checked and
 * renamed into place (the staging file is removed if it is not). */
static ztd_err publish_file(commit_job *j)
{
    ztd_session *x = j->x;
    char staged[ZTD_STAGING_NAME_MAX];
    ztd_staged f = {x->fd, staged, zt_writer_position(x->w), NULL, NULL};
    snprintf(staged, sizeof(staged), "%s", x->name);
    x->fd = -1; /* the staging file and its fd pass to publication */
    x->name[0] = 0;
    ztd_log(ZTD_LOG_INFO, "upload session %s committed %zu components", x->id, x->nkeys);
    ztd_sessions_end(j->s->sessions, x);
    ztd_publisher *p = j->s->publisher;
    ztd_err e = ztd_publish_check(p, &f, j->file, false, false, &j->nobj, j->msg, sizeof(j->msg));
    if (!e && (e = ztd_publish_rename(p, &f, j->file, &j->pc, &j->out, j->msg, sizeof(j->msg))))
        ztd_staging_remove(j->s->staging, staged);
    close(f.fd);
    return e;
}

/* Under the publication locks, from the preconditions to the rename: a
 * precondition that fails there (another write got in since the check before
 * the objects) leaves the session as it was, components and all. From the
 * manifest on, the session is over, published or not. */
static void publish_session(ztd_offload *o)
{
    commit_job *j = (commit_job *)((char *)o - offsetof(commit_job, work));
    ztd_publisher *p = j->s->publisher;
    ztd_session *x = j->x;
    zt_error err;
    j->err = ztd_publish_lock(p, "nothing was published; the upload session is still open", j->msg,
                              sizeof(j->msg));
    if (!j->err && (j->err = ztd_publish_preconditions(p, j->file, &j->pc, j->msg, sizeof(j->msg))))
        ztd_publish_unlock(p, NULL, NULL);
    if (j->err) {
        not_committed(j->s, x);
        return;
    }
    if (zt_writer_finish(x->w, &err)) {
        ztd_publish_unlock(p, NULL, NULL);
        j->err = ztd_err_of_zt(err.code, ZTD_OP_OBJECTS);
        if (err.code == ZT_E_NOSPACE) { /* the manifest was cut back out: the session stays */
            snprintf(j->msg, sizeof(j->msg),
                     "%s; the upload session stays open: commit again once there is room",
                     err.message);
            not_committed(j->s, x);
            return;
        }
        snprintf(j->msg, sizeof(j->msg), "%s; the upload session is over", err.message);
        ztd_log(ZTD_LOG_WARN, "upload session %s for %s: the manifest could not be written: %s",
                x->id, x->file, err.message);
        ztd_sessions_end(j->s->sessions, x);
        return;
    }
    j->err = publish_file(j);
    ztd_publish_unlock(p, j->err ? NULL : j->file, NULL);
}

/* The publication has run: its answer. */
static enum MHD_Result committed(struct MHD_Connection *c, ztd_req *r, commit_job *j)
{
    if (!ztd_offload_done(&j->work))
        return MHD_YES;
    if (j->err)
        return ztd_error(c, r, j->err, "%s", j->msg);
    ztd_log(ZTD_LOG_INFO, "published %s (%llu bytes, %zu objects, %s)", j->file,
            (unsigned long long)j->out.size, j->nobj, j->out.replaced ? "replaced" : "new");
    return ztd_published_answer(c, r, j->file, j->out.size, j->nobj, j->out.etag, j->out.replaced);
}

/* The objects are in the writer: publish off this thread, answer when done. */
static enum MHD_Result start_publication(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                         ztd_session *x, const ztd_preconds *pc)
{
    commit_job *j = calloc(1, sizeof(*j));
    if (!j) {
        not_committed(s, x);
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    }
    *j = (commit_job){.s = s, .x = x, .pc = *pc};
    snprintf(j->file, sizeof(j->file), "%s", x->file);
    ztd_req_set_ctx(r, j, commit_job_free); /* the JSON body is parsed: it can go */
    return ztd_offload_start(s, c, &j->work, publish_session) ? committed(c, r, j) : MHD_YES;
}

/* The commit's objects, parsed, and its session, held; NULL when answered. */
static ztd_session *commit_session(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                   ztd_commit *cm, enum MHD_Result *ret)
{
    char msg[512];
    ztd_json_text body = ztd_json_body(r);
    ztd_err e = ztd_commit_parse(body.p, body.n, cm, msg, sizeof(msg));
    bool busy;
    ztd_session *x = e ? NULL : ztd_sessions_acquire(s->sessions, r->match->upload_id, &busy);
    if (e)
        *ret = ztd_error(c, r, e, "%s", msg);
    else if (!x)
        *ret = session_error(c, r, busy);
    else if (!ztd_session_intact(x)) {
        *ret = lost_answer(c, r, x);
        ztd_sessions_end(s->sessions, x);
        x = NULL;
    }
    if (!x)
        ztd_commit_free(cm);
    return x;
}

enum MHD_Result ztd_session_commit(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    commit_job *done = ztd_req_ctx_of(r, commit_job_free);
    if (done) /* called again: the publication has run */
        return committed(c, r, done);
    ztd_commit cm;
    enum MHD_Result ret;
    ztd_session *x = commit_session(s, c, r, &cm, &ret);
    if (!x)
        return ret;
    /* The preconditions now, as a quick refusal; again under the lock. */
    ztd_preconds pc = {ztd_header_list(c, r, "If-Match"), ztd_header_list(c, r, "If-None-Match")};
    zt_error err = {0};
    char msg[512];
    ztd_err e = ztd_publish_preconditions(s->publisher, x->file, &pc, msg, sizeof(msg));
    int bad = !e && add_objects(x, &cm, &err);
    ztd_commit_free(&cm);
    if (e || bad) {
        not_committed(s, x);
        return e ? ztd_error(c, r, e, "%s", msg)
                 : ztd_error(c, r, ztd_err_of_zt(err.code, ZTD_OP_OBJECTS), "%s", err.message);
    }
    return start_publication(s, c, r, x, &pc);
}
