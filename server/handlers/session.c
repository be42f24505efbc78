/*
 * Component upload sessions (see session.h). Each session owns a staging
 * file and a libztensor writer on it. One request uses a session at a time
 * (the busy flag, under the table lock), so the writer needs no lock of its
 * own; expiry and DELETE skip or refuse busy sessions.
 */
#include "handlers/session.h"
#include "store/catalog.h"
#include "core/clock.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/metrics.h"
#include "http/response.h"
#include "store/staging.h"
#include "http/upload_json.h"
#include "handlers/upload.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <ztensor/ztensor_experimental.h>

typedef struct skey {
    char *key;
    size_t id;
    zt_written_component info;
} skey;

typedef struct ztd_session {
    char id[33];
    char *file;
    ztd_staging *st;
    char name[ZTD_STAGING_NAME_MAX]; /* the staging file, "" once handed to publication */
    int fd;
    zt_writer *w;
    skey *keys;
    size_t nkeys, capkeys;
    bool busy;
    uint64_t last_used;
    struct ztd_session *next;
} ztd_session;

struct ztd_sessions {
    pthread_mutex_t mu;
    ztd_session *head;
    size_t n;
};

#define SHA_BUF (1u << 20)

/* Per-request state of a component PUT. */
typedef struct sreq {
    ztd_session *sess;
    bool in_component;
    zt_hasher *sha;       /* a zstd body's Content-Digest, when no thread could be had */
    zt_hash_thread *shat; /* ... or on another thread, fed through hbuf */
    uint8_t *hbuf;
    size_t hlen;
    ztd_digest_want want;
    uint64_t received, next_disk_check;
    bool lost; /* the session's staging file is gone: end the session with the request */
} sreq;

ztd_sessions *ztd_sessions_new(void)
{
    ztd_sessions *t = calloc(1, sizeof(*t));
    if (t)
        pthread_mutex_init(&t->mu, NULL);
    return t;
}

static void session_destroy(ztd_session *x)
{
    zt_writer_free(x->w);
    if (x->fd >= 0)
        close(x->fd);
    ztd_staging_remove(x->st, x->name);
    for (size_t i = 0; i < x->nkeys; i++)
        free(x->keys[i].key);
    free(x->keys);
    free(x->file);
    free(x);
}

void ztd_sessions_free(ztd_sessions *t)
{
    if (!t)
        return;
    for (ztd_session *x = t->head, *next; x; x = next) {
        next = x->next;
        session_destroy(x);
    }
    pthread_mutex_destroy(&t->mu);
    free(t);
}

size_t ztd_sessions_count(ztd_sessions *t)
{
    pthread_mutex_lock(&t->mu);
    size_t n = t->n;
    pthread_mutex_unlock(&t->mu);
    return n;
}

bool ztd_upload_slot_take(ztd_server *s)
{
    int n = __atomic_add_fetch(&s->uploads_active, 1, __ATOMIC_ACQ_REL);
    if ((unsigned)n > s->cfg->max_uploads) {
        __atomic_sub_fetch(&s->uploads_active, 1, __ATOMIC_ACQ_REL);
        return false;
    }
    return true;
}

void ztd_upload_slot_give(ztd_server *s)
{
    __atomic_sub_fetch(&s->uploads_active, 1, __ATOMIC_ACQ_REL);
}

/* Unlink x from the table; caller holds the lock. */
static void unlink_session(ztd_sessions *t, ztd_session *x)
{
    for (ztd_session **pp = &t->head; *pp; pp = &(*pp)->next)
        if (*pp == x) {
            *pp = x->next;
            t->n--;
            return;
        }
}

bool ztd_session_idle(uint64_t now, uint64_t last_used, uint64_t idle_ms)
{
    /* last_used is later than now when a request released the session (or one was
     * opened) after the sweep read the clock: not idle, and no unsigned wrap-around */
    return now > last_used && now - last_used > idle_ms;
}

void ztd_sessions_sweep(ztd_server *s, uint64_t idle_ms)
{
    ztd_sessions *t = s->sessions;
    uint64_t now = ztd_now_ms();
    ztd_session *dead = NULL;
    pthread_mutex_lock(&t->mu);
    for (ztd_session **pp = &t->head; *pp;) {
        ztd_session *x = *pp;
        if (!x->busy && ztd_session_idle(now, x->last_used, idle_ms)) {
            *pp = x->next;
            t->n--;
            x->next = dead;
            dead = x;
        } else {
            pp = &x->next;
        }
    }
    pthread_mutex_unlock(&t->mu);
    while (dead) {
        ztd_session *next = dead->next;
        ztd_log(ZTD_LOG_INFO, "upload session %s for %s expired", dead->id, dead->file);
        session_destroy(dead);
        ztd_upload_slot_give(s);
        dead = next;
    }
}

/* Find a session and mark it busy; NULL with *busy set if it is in use. */
static ztd_session *acquire(ztd_server *s, const char *id, bool *busy)
{
    ztd_sessions *t = s->sessions;
    *busy = false;
    pthread_mutex_lock(&t->mu);
    ztd_session *x = t->head;
    while (x && strcmp(x->id, id))
        x = x->next;
    if (x && x->busy) {
        *busy = true;
        x = NULL;
    } else if (x) {
        x->busy = true;
    }
    pthread_mutex_unlock(&t->mu);
    return x;
}

static void release(ztd_server *s, ztd_session *x)
{
    pthread_mutex_lock(&s->sessions->mu);
    x->busy = false;
    x->last_used = ztd_now_ms();
    pthread_mutex_unlock(&s->sessions->mu);
}

/* Remove a session this request holds busy. */
static void finish_session(ztd_server *s, ztd_session *x)
{
    pthread_mutex_lock(&s->sessions->mu);
    unlink_session(s->sessions, x);
    pthread_mutex_unlock(&s->sessions->mu);
    session_destroy(x);
    ztd_upload_slot_give(s);
}

static enum MHD_Result session_error(struct MHD_Connection *c, ztd_req *r, bool busy)
{
    if (busy)
        return ztd_error(c, r, ZTD_ERR_SESSION_BUSY, "another request is using upload session %s",
                         r->match->upload_id);
    return ztd_error(c, r, ZTD_ERR_UPLOAD_NOT_FOUND, "no upload session %s", r->match->upload_id);
}

/* ---- JSON bodies */

enum MHD_Result ztd_json_body_append(struct MHD_Connection *c, ztd_req *r, const char *data,
                                     size_t n)
{
    const size_t cap = 64u << 20;
    if (r->body_len + n > cap)
        return ztd_error(c, r, ZTD_ERR_TOO_LARGE, "JSON body larger than %zu bytes", cap);
    if (r->body_len + n + 1 > r->body_cap) {
        size_t ncap = r->body_cap ? r->body_cap : 4096;
        while (ncap < r->body_len + n + 1)
            ncap *= 2;
        char *nb = realloc(r->body, ncap);
        if (!nb)
            return ztd_fail(c, r, ZTD_ERR_INTERNAL);
        r->body = nb;
        r->body_cap = ncap;
    }
    memcpy(r->body + r->body_len, data, n);
    r->body_len += n;
    r->body[r->body_len] = 0;
    return MHD_YES;
}

/* ---- POST /v1/uploads */

static enum MHD_Result open_session(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    ztd_open_request req;
    char msg[512];
    ztd_err e = ztd_open_parse(r->body, r->body_len, &req, msg, sizeof(msg));
    if (e)
        return ztd_error(c, r, e, "%s", msg);
    if (!s->staging) {
        ztd_open_request_free(&req);
        return ztd_fail(c, r, ZTD_ERR_UPLOADS_DISABLED);
    }
    if (!ztd_upload_slot_take(s)) {
        ztd_open_request_free(&req);
        return ztd_error(c, r, ZTD_ERR_TOO_MANY_UPLOADS,
                         "%u uploads and sessions are already running", s->cfg->max_uploads);
    }
    ztd_session *x = calloc(1, sizeof(*x));
    uint8_t rnd[16];
    zt_error err;
    if (!x || getentropy(rnd, sizeof(rnd)) != 0) {
        free(x);
        ztd_open_request_free(&req);
        ztd_upload_slot_give(s);
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    }
    x->file = req.file; /* the session owns it now */
    req.file = NULL;
    ztd_hex_encode(rnd, sizeof(rnd), x->id);
    x->st = s->staging;
    x->fd = ztd_staging_create(s->staging, "session", x->name);
    zt_writer_options wo;
    zt_writer_options_init(&wo);
    if (x->fd < 0 || zt_writer_open_fd(x->fd, &wo, &x->w, &err) ||
        (req.attributes && zt_writer_set_attributes(x->w, req.attributes, &err))) {
        int en = errno;
        session_destroy(x);
        ztd_open_request_free(&req);
        ztd_upload_slot_give(s);
        return ztd_error(c, r, ztd_err_of_errno(en, ZTD_ERR_STAGING_FAILED),
                         "cannot start the upload: %s", strerror(en));
    }
    ztd_open_request_free(&req);
    x->last_used = ztd_now_ms();
    pthread_mutex_lock(&s->sessions->mu);
    x->next = s->sessions->head;
    s->sessions->head = x;
    s->sessions->n++;
    pthread_mutex_unlock(&s->sessions->mu);
    ztd_log(ZTD_LOG_INFO, "upload session %s opened for %s", x->id, x->file);
    char url[64], body[256];
    snprintf(url, sizeof(url), "/v1/uploads/%s", x->id);
    json_t *o = json_pack("{s:s, s:s, s:s, s:I}", "id", x->id, "url", url, "file", x->file,
                          "idle_timeout_ms", (json_int_t)s->cfg->session_idle_timeout_ms);
    char *txt = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    snprintf(body, sizeof(body), "%s", txt ? txt : "{}");
    free(txt);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    MHD_add_response_header(resp, "Location", url);
    return ztd_queue(c, r, 201, resp, strlen(body));
}

/* ---- GET /v1/uploads/{id} */

static json_t *component_json(const skey *k)
{
    return json_pack("{s:I, s:I, s:I, s:s, s:s}", "offset", (json_int_t)k->info.offset, "length",
                     (json_int_t)k->info.length, "uncompressed_length",
                     (json_int_t)k->info.uncompressed_length, "encoding",
                     k->info.encoding == ZT_ENC_ZSTD ? "zstd" : "raw", "digest", k->info.digest);
}

static enum MHD_Result session_status(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    bool busy;
    ztd_session *x = acquire(s, r->match->upload_id, &busy);
    if (!x)
        return session_error(c, r, busy);
    json_t *comps = json_object();
    for (size_t i = 0; i < x->nkeys; i++)
        json_object_set_new(comps, x->keys[i].key, component_json(&x->keys[i]));
    json_t *o = json_pack("{s:s, s:s, s:I, s:o}", "id", x->id, "file", x->file, "bytes",
                          (json_int_t)zt_writer_position(x->w), "components", comps);
    release(s, x);
    char *txt = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (!txt)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    enum MHD_Result ret = ztd_json(c, r, 200, txt, strlen(txt), 1);
    free(txt);
    return ret;
}

/* ---- DELETE /v1/uploads/{id} */

static enum MHD_Result session_abort(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    bool busy;
    ztd_session *x = acquire(s, r->match->upload_id, &busy);
    if (!x)
        return session_error(c, r, busy);
    ztd_log(ZTD_LOG_INFO, "upload session %s for %s aborted", x->id, x->file);
    finish_session(s, x);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    return ztd_queue(c, r, 204, resp, 0);
}

/* ---- PUT /v1/uploads/{id}/components/{key} */

static const skey *find_key(const ztd_session *x, const char *key)
{
    for (size_t i = 0; i < x->nkeys; i++)
        if (!strcmp(x->keys[i].key, key))
            return &x->keys[i];
    return NULL;
}

/* Something removed the session's staging file: its components are lost, and
 * the session ends with this request (ztd_session_request_done). */
static bool session_lost(ztd_session *x)
{
    return !ztd_staging_intact(x->st, x->name, x->fd, ZTD_STAGING_ANY_SIZE);
}

static enum MHD_Result lost_answer(struct MHD_Connection *c, ztd_req *r, ztd_session *x)
{
    ztd_log(ZTD_LOG_ERROR, "upload session %s for %s: its staging file %s was removed or replaced",
            x->id, x->file, x->name);
    return ztd_staging_lost(c, r, x->file,
                            "the staging file of the upload session was removed; "
                            "the session is over");
}

enum MHD_Result ztd_session_component_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
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
    ztd_session *x = acquire(s, r->match->upload_id, &busy);
    if (!x)
        return session_error(c, r, busy);
    sreq *q = calloc(1, sizeof(*q));
    if (!q) {
        release(s, x);
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    }
    q->sess = x;
    r->sreq = q;
    if ((q->lost = session_lost(x)))
        return lost_answer(c, r, x);
    if (find_key(x, r->match->key))
        return ztd_error(c, r, ZTD_ERR_COMPONENT_EXISTS,
                         "component \"%s\" was already uploaded in session %s", r->match->key,
                         x->id);
    if (x->nkeys >= s->cfg->max_session_components)
        return ztd_error(c, r, ZTD_ERR_TOO_MANY_COMPONENTS,
                         "session %s already has %zu components (max_session_components)", x->id,
                         x->nkeys);
    /* A raw component stores exactly its body: check a declared Content-Length now, as
     * put_begin does, while a refusal can still reach the client (a response queued in
     * the middle of the body cannot be sent). */
    bool raw = !enc || !strcmp(enc, "raw");
    const char *cl = raw ? ztd_header(c, "Content-Length") : NULL;
    uint64_t declared = cl ? strtoull(cl, NULL, 10) : 0, avail;
    if (declared > s->cfg->max_upload_size ||
        zt_writer_position(x->w) + declared > s->cfg->max_upload_size)
        return ztd_error(c, r, ZTD_ERR_TOO_LARGE,
                         "Content-Length %llu would take the session past max_upload_size %llu",
                         (unsigned long long)declared, (unsigned long long)s->cfg->max_upload_size);
    if (ztd_disk_free(s->cfg->root, &avail) == 0 &&
        (avail < declared || avail - declared < s->cfg->disk_reserve))
        return ztd_error(c, r, ZTD_ERR_INSUFFICIENT_STORAGE,
                         "not enough free disk for %llu bytes plus the reserve of %llu",
                         (unsigned long long)declared, (unsigned long long)s->cfg->disk_reserve);
    zt_component_spec spec = {.dtype = ZT_DTYPE_U8,
                              .encoding = enc && !strcmp(enc, "zstd") ? ZT_ENC_ZSTD : ZT_ENC_RAW,
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

enum MHD_Result ztd_session_component_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                           const char *data, size_t n)
{
    sreq *q = r->sreq;
    zt_error err;
    if (zt_writer_position(q->sess->w) + n > s->cfg->max_upload_size)
        return ztd_error(c, r, ZTD_ERR_TOO_LARGE, "the session exceeds max_upload_size %llu",
                         (unsigned long long)s->cfg->max_upload_size);
    ztd_metrics_upload_bytes(n);
    q->received += n;
    if (q->received >= q->next_disk_check) {
        uint64_t avail;
        q->next_disk_check = q->received + (1u << 20);
        if (ztd_disk_free(s->cfg->root, &avail) == 0 && avail < s->cfg->disk_reserve)
            return ztd_error(c, r, ZTD_ERR_INSUFFICIENT_STORAGE,
                             "free disk fell below the reserve of %llu bytes",
                             (unsigned long long)s->cfg->disk_reserve);
    }
    if (q->sha)
        zt_hasher_update(q->sha, data, n);
    for (size_t off = 0; q->shat && off < n;) { /* copied: MHD reuses its buffer */
        size_t k = SHA_BUF - q->hlen < n - off ? SHA_BUF - q->hlen : n - off;
        memcpy(q->hbuf + q->hlen, data + off, k);
        q->hlen += k;
        off += k;
        if (q->hlen == SHA_BUF) {
            q->hbuf = zt_hash_thread_submit(q->shat, q->hbuf, q->hlen);
            q->hlen = 0;
        }
    }
    if (zt_writer_write(q->sess->w, data, n, &err))
        return ztd_error(c, r, ztd_err_of_zt(err.code, ZTD_OP_WRITE), "%s", err.message);
    return MHD_YES;
}

static enum MHD_Result component_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    sreq *q = r->sreq;
    ztd_session *x = q->sess;
    zt_error err;
    if ((q->lost = session_lost(x))) /* a 201 would promise bytes that are gone */
        return lost_answer(c, r, x);
    if (q->want.present) {
        uint8_t got[32];
        if (q->shat) {
            q->hbuf = zt_hash_thread_submit(q->shat, q->hbuf, q->hlen);
            q->hlen = 0;
            zt_hash_thread_final(q->shat, got);
        } else if (q->sha)
            zt_hasher_final(q->sha, got);
        else if (zt_writer_digest_so_far(x->w, got, NULL, &err))
            return ztd_error(c, r, ZTD_ERR_INTERNAL, "%s", err.message);
        if (memcmp(got, q->want.sha256, 32) != 0)
            return ztd_error(c, r, ZTD_ERR_BODY_DIGEST_MISMATCH,
                             "component \"%s\" does not match its Content-Digest; its bytes "
                             "were discarded",
                             r->match->key);
    }
    size_t id;
    skey k = {0};
    if (x->nkeys == x->capkeys) {
        size_t cap = x->capkeys ? x->capkeys * 2 : 16;
        skey *nk = realloc(x->keys, cap * sizeof(*nk));
        if (!nk)
            return ztd_fail(c, r, ZTD_ERR_INTERNAL);
        x->keys = nk;
        x->capkeys = cap;
    }
    if (!(k.key = strdup(r->match->key)))
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    if (zt_writer_end(x->w, &id, &err)) {
        free(k.key);
        return ztd_error(c, r, ztd_err_of_zt(err.code, ZTD_OP_WRITE), "%s", err.message);
    }
    q->in_component = false;
    k.id = id;
    zt_writer_component_info(x->w, id, &k.info);
    x->keys[x->nkeys++] = k;
    json_t *o = component_json(&k);
    json_object_set_new(o, "key", json_string(k.key));
    char *txt = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    enum MHD_Result ret = ztd_json(c, r, 201, txt ? txt : "{}", txt ? strlen(txt) : 2, 1);
    free(txt);
    return ret;
}

void ztd_session_request_done(ztd_server *s, ztd_req *r)
{
    sreq *q = r->sreq;
    if (!q)
        return;
    if (q->in_component) {
        zt_error err;
        if (zt_writer_cancel(q->sess->w, &err))
            ztd_log(ZTD_LOG_ERROR, "upload session %s: cannot cut back component \"%s\": %s",
                    q->sess->id, r->match ? r->match->key : "?", err.message);
    }
    if (q->lost)
        finish_session(s, q->sess);
    else
        release(s, q->sess);
    zt_hasher_free(q->sha);
    zt_hash_thread_free(q->shat, q->hbuf);
    free(q);
    r->sreq = NULL;
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
            const skey *key = find_key(x, p->key);
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

/* zt_writer_finish failed: the writer cannot be used again, so the session is
 * over. Only a manifest that the objects make impossible is the client's doing;
 * memory, I/O and a writer that failed earlier are the server's. */
static enum MHD_Result finish_failed(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                     ztd_session *x, const zt_error *err)
{
    enum MHD_Result ret = ztd_error(c, r, ztd_err_of_zt(err->code, ZTD_OP_OBJECTS),
                                    "%s; the upload session is over", err->message);
    ztd_log(ZTD_LOG_WARN, "upload session %s for %s: the manifest could not be written: %s", x->id,
            x->file, err->message);
    finish_session(s, x);
    return ret;
}

static enum MHD_Result commit(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    enum MHD_Result ret;
    ztd_commit cm;
    char msg[512];
    ztd_err e = ztd_commit_parse(r->body, r->body_len, &cm, msg, sizeof(msg));
    if (e)
        return ztd_error(c, r, e, "%s", msg);
    bool busy;
    ztd_session *x = acquire(s, r->match->upload_id, &busy);
    if (!x) {
        ztd_commit_free(&cm);
        return session_error(c, r, busy);
    }
    if (session_lost(x)) {
        ztd_commit_free(&cm);
        ret = lost_answer(c, r, x);
        finish_session(s, x);
        return ret;
    }
    /* Preconditions before the manifest is written, so a 412 keeps the session. */
    if (ztd_write_preconditions(s, c, r, x->file, &ret) != 0) {
        release(s, x);
        ztd_commit_free(&cm);
        return ret;
    }
    zt_error err = {0};
    int bad = add_objects(x, &cm, &err);
    ztd_commit_free(&cm);
    if (bad) {
        zt_writer_drop_objects(x->w, 0);
        release(s, x);
        return ztd_error(c, r, ztd_err_of_zt(err.code, ZTD_OP_OBJECTS), "%s", err.message);
    }
    if (zt_writer_finish(x->w, &err))
        return finish_failed(s, c, r, x, &err);
    /* The staging file and its fd pass to publication. */
    int fd = x->fd;
    uint64_t size = zt_writer_position(x->w);
    char staged[ZTD_STAGING_NAME_MAX], file[PATH_MAX];
    snprintf(staged, sizeof(staged), "%s", x->name);
    snprintf(file, sizeof(file), "%s", x->file);
    x->fd = -1;
    x->name[0] = 0;
    ztd_log(ZTD_LOG_INFO, "upload session %s committed %zu components", x->id, x->nkeys);
    finish_session(s, x);
    ret = ztd_validate_and_publish(s, c, r, fd, staged, size, file, false, false);
    close(fd);
    return ret;
}

enum MHD_Result ztd_session_route_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    switch (r->match->route) {
    case ZTD_ROUTE_UPLOAD_NEW:
        return open_session(s, c, r);
    case ZTD_ROUTE_UPLOAD_STATUS:
        return session_status(s, c, r);
    case ZTD_ROUTE_UPLOAD_ABORT:
        return session_abort(s, c, r);
    case ZTD_ROUTE_UPLOAD_COMPONENT:
        return component_end(s, c, r);
    case ZTD_ROUTE_UPLOAD_COMMIT:
        return commit(s, c, r);
    default:
        return ztd_error(c, r, ZTD_ERR_INTERNAL, "unexpected route");
    }
}
