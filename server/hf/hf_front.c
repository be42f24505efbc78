/*
 * The Hugging Face front's requests (see hf.h): the token check with the
 * hub's 401/403 shape, the URL (hf_path.h), the repository in one catalog
 * snapshot (hf_repo.h) with its digests hashed off the workers when some are
 * not known yet (on an --upstream sidecar whose catalog lacks it: the origin's,
 * hf_origin.h, or an S3 store's, hf_store_repo.h), the revision, then metadata (hf_json.h) or the
 * file's bytes through the shared raw answer, dressed with the hub's headers.
 */
#include "hf/hf.h"
#include "core/config.h"
#include "core/hex.h"
#include "core/log.h"
#include "hf/hf_json.h"
#include "hf/hf_origin.h"
#include "hf/hf_store_repo.h"
#include "hf/hf_path.h"
#include "hf/hf_paths_body.h"
#include "hf/hf_repo.h"
#include "http/auth.h"
#include "http/request_auth.h"
#include "http/object_answer.h"
#include "http/json_body.h"
#include "http/offload.h"
#include "http/response.h"
#include "http/object_answer.h"
#include "http/source_answer.h"
#include "http/view_answer.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct hf_state {
    ztd_offload off; /* hashing digests, off the workers */
    ztd_server *s;
    ztd_hf_target t;
    ztd_hf_repo repo;
    bool origin;   /* the repository is the upstream's (hf_origin.h) */
    int origin_rc; /* ztd_hf_origin_open's */
    ztd_err origin_err;
    ztd_entry *up; /* the file to resolve, opened through the upstream */
    bool up_view;  /* up is the file whose safetensors view is resolved */
    int hash_rc;
    char msg[600];
    ztd_dress dress;
    char commit[41];
    char linked_etag[80];
    char size[24];
} hf_state;

static void state_free(void *p)
{
    hf_state *st = p;
    ztd_hf_repo_close(&st->repo);
    ztd_entry_release(st->up);
    free(st);
}

/* ---- errors in the hub's shape: X-Error-Code, X-Error-Message, {"error"} */

static enum MHD_Result hf_error(struct MHD_Connection *c, ztd_req *r, unsigned status,
                                const char *code, const char *commit, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static enum MHD_Result hf_error(struct MHD_Connection *c, ztd_req *r, unsigned status,
                                const char *code, const char *commit, const char *fmt, ...)
{
    char msg[700], hdr[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t i = 0;
    for (; msg[i]; i++) /* a header value: visible ASCII and spaces only */
        hdr[i] = (unsigned char)msg[i] < 0x20 || (unsigned char)msg[i] >= 0x7f ? '?' : msg[i];
    hdr[i] = 0;
    json_t *doc = json_pack("{s:s}", "error", msg);
    char *body = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!body)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    size_t n = strlen(body);
    struct MHD_Response *resp = ztd_response_owned(body, n, "application/json");
    if (resp) {
        MHD_add_response_header(resp, "X-Error-Message", hdr);
        if (code)
            MHD_add_response_header(resp, "X-Error-Code", code);
        if (commit && commit[0])
            MHD_add_response_header(resp, "X-Repo-Commit", commit);
        if (status == 401)
            MHD_add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"ztensord\"");
        const char *allow = status == 405 ? strchr(msg, ':') : NULL;
        if (allow && allow[1]) /* the parser's message is the methods allowed */
            MHD_add_response_header(resp, "Allow", allow + 2);
    }
    ztd_log(status >= 500 ? ZTD_LOG_ERROR : ZTD_LOG_INFO, "%u %s: %s", status,
            r->target ? r->target : "", msg);
    return ztd_queue(c, r, status, resp, n);
}

/* Before the body, for every request on /hf: the token, as /v1's READ scope
 * asks for it, with the hub's messages (huggingface_hub reads a 401 whose
 * message is not "Invalid credentials in Authorization header" as a missing
 * repository). */
/* An error of the layers the fronts share (a fill that failed, a view that
 * cannot be made), as the hub's clients read errors: X-Error-Message, and
 * EntryNotFound for a 404. */
static enum MHD_Result hf_shared_error(struct MHD_Connection *c, ztd_req *r, ztd_err e,
                                       const char *msg)
{
    unsigned status = ztd_err_status(e);
    return hf_error(c, r, status, status == 404 ? "EntryNotFound" : NULL, NULL, "%s", msg);
}

static enum MHD_Result hf_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    r->error_answer = hf_shared_error;
    switch (ztd_request_auth(s, c, ZTD_SCOPE_READ)) {
    case ZTD_AUTH_OK:
        break;
    case ZTD_AUTH_FORBIDDEN:
        return hf_error(c, r, 403, NULL, NULL, "this token may not read");
    case ZTD_AUTH_INVALID:
        return hf_error(c, r, 401, NULL, NULL, "Invalid credentials in Authorization header");
    default:
        return hf_error(c, r, 401, NULL, NULL,
                        "Authorization required: send a bearer token (HF_TOKEN)");
    }
    if (!strcmp(r->method, "POST")) {
        const char *cl = ztd_header(c, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > ZTD_HF_PATHS_BODY_MAX)
            return hf_error(c, r, 413, NULL, NULL, "body larger than %u bytes",
                            ZTD_HF_PATHS_BODY_MAX);
    }
    return MHD_YES;
}

/* ---- digests, off the workers */

static void hash_job(ztd_offload *o)
{
    hf_state *st = (hf_state *)o;
    st->msg[0] = 0;
    st->hash_rc =
        ztd_hf_repo_hash(&st->repo, ztd_catalog_root(st->s->catalog), st->msg, sizeof(st->msg));
}

/* The revision names this version of the repository: main (HEAD, as
 * @huggingface/hub's modelInfo asks by default), or its commit id. */
static bool revision_ok(const hf_state *st)
{
    const ztd_hf_target *t = &st->t;
    return !strcmp(t->rev, "main") || !strcmp(t->rev, "HEAD") ||
           (ztd_hf_is_commit(t->rev, t->rev_len) && !strcmp(t->rev, st->repo.commit));
}

/* The repository from the upstream, and for a resolve its file, opened. */
static void origin_job(ztd_offload *o)
{
    hf_state *st = (hf_state *)o;
    ztd_upstream *u = st->s->upstream;
    st->msg[0] = 0;
    if (ztd_upstream_store_listing(u)) /* an S3 store: the repository from its listing */
        st->origin_rc =
            ztd_hf_store_open(u, st->t.repo, &st->repo, &st->origin_err, st->msg, sizeof(st->msg));
    else
        st->origin_rc = ztd_hf_origin_open(u, st->t.repo, st->t.rev, st->s->cfg->upstream_ttl_ms,
                                           &st->repo, &st->origin_err, st->msg, sizeof(st->msg));
    if (st->origin_rc || st->t.op != ZTD_HF_RESOLVE || !revision_ok(st))
        return;
    const ztd_hf_file *f = ztd_hf_repo_find(&st->repo, st->t.path, st->t.path_len);
    if (f && (st->origin_err = ztd_hf_origin_file(u, st->t.repo, &st->repo, f, &st->up,
                                                  &st->up_view, st->msg, sizeof(st->msg))))
        st->origin_rc = -1;
}

/* ---- answers */

static enum MHD_Result send_json(struct MHD_Connection *c, ztd_req *r, char *body, size_t n,
                                 const char *commit, const char *link)
{
    if (!body)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    struct MHD_Response *resp = ztd_response_owned(body, n, "application/json");
    if (resp && commit)
        MHD_add_response_header(resp, "X-Repo-Commit", commit);
    if (resp && link)
        MHD_add_response_header(resp, "Link", link);
    return ztd_queue(c, r, 200, resp, n);
}

static bool query_true(struct MHD_Connection *c, const char *name)
{
    const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
    return v && (!strcasecmp(v, "true") || !strcmp(v, "1"));
}

/* The tree page's cursor: "<commit>.<item number>", bound to the commit so
 * that pages of two versions never join. */
static enum MHD_Result answer_tree(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                   hf_state *st)
{
    ztd_hf_target *t = &st->t;
    ztd_hf_repo *rp = &st->repo;
    if (t->path_len && !ztd_hf_repo_is_dir(rp, t->path, t->path_len))
        return hf_error(c, r, 404, "EntryNotFound", rp->commit, "no directory \"%s\" in %s",
                        t->path, t->repo);
    bool recursive = query_true(c, "recursive"), expand = query_true(c, "expand");
    const char *cur = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "cursor");
    const char *lim = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
    size_t from = 0, limit = ZTD_HF_TREE_PAGE;
    if (lim) {
        char *end;
        unsigned long long v = strtoull(lim, &end, 10);
        if (*end || !*lim || v == 0)
            return hf_error(c, r, 400, NULL, NULL, "limit: a positive integer");
        if (v < limit)
            limit = (size_t)v;
    }
    if (cur) {
        char *end;
        if (strlen(cur) < 42 || cur[40] != '.' || !ztd_hf_is_commit(cur, 40))
            return hf_error(c, r, 400, NULL, NULL, "cursor: not one this server gave");
        from = (size_t)strtoull(cur + 41, &end, 10);
        if (*end)
            return hf_error(c, r, 400, NULL, NULL, "cursor: not one this server gave");
        if (memcmp(cur, rp->commit, 40) != 0)
            return hf_error(c, r, 404, "RevisionNotFound", NULL,
                            "%s changed since this listing began (now at %s): list again", t->repo,
                            rp->commit);
    }
    bool more;
    size_t n;
    char *body =
        ztd_hf_tree_json(rp, t->path, t->path_len, recursive, expand, from, limit, &more, &n);
    char link[ZTD_PATH_MAX + 512];
    const char *host = ztd_header(c, "Host");
    if (more && host && strlen(host) < 256) {
        snprintf(link, sizeof(link),
                 "<%s://%s%s?recursive=%s&expand=%s&limit=%zu&cursor=%s.%zu>; "
                 "rel=\"next\"",
                 s->tls_cert ? "https" : "http", host, r->path, recursive ? "true" : "false",
                 expand ? "true" : "false", limit, rp->commit, from + limit);
    }
    return send_json(c, r, body, n, rp->commit, more && host && strlen(host) < 256 ? link : NULL);
}

static enum MHD_Result answer_paths(struct MHD_Connection *c, ztd_req *r, hf_state *st)
{
    ztd_json_text body = ztd_json_body(r);
    ztd_hf_paths p;
    const char *why;
    if (ztd_hf_paths_parse(ztd_header(c, "Content-Type"), body.p, body.n, &p, &why) != 0)
        return hf_error(c, r, 400, NULL, NULL, "paths-info: %s", why);
    size_t n;
    char *doc = ztd_hf_paths_json(&st->repo, p.paths, p.n, p.expand, &n);
    ztd_hf_paths_free(&p);
    return send_json(c, r, doc, n, st->repo.commit, NULL);
}

static bool dress_headers(struct MHD_Response *resp, const void *ctx)
{
    const hf_state *st = ctx;
    return MHD_add_response_header(resp, "X-Repo-Commit", st->commit) == MHD_YES &&
           MHD_add_response_header(resp, "X-Linked-Etag", st->linked_etag) == MHD_YES &&
           MHD_add_response_header(resp, "X-Linked-Size", st->size) == MHD_YES;
}

static enum MHD_Result resolve_answer(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                      ztd_entry *e)
{
    if (ztd_entry_virtual(e)) /* a view or an index: its bytes as /raw has them */
        return ztd_answer_object(s, c, r, e);
    return ztd_answer_raw(s, c, r, e, NULL, resolve_answer);
}

static enum MHD_Result answer_resolve(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                      hf_state *st)
{
    ztd_hf_target *t = &st->t;
    const ztd_hf_file *f = ztd_hf_repo_find(&st->repo, t->path, t->path_len);
    if (!f)
        return hf_error(c, r, 404, "EntryNotFound", st->repo.commit, "%s has no file \"%s\"",
                        t->repo, t->path);
    char hex[65];
    ztd_hex_encode(f->digest, 32, hex);
    memcpy(st->commit, st->repo.commit, sizeof(st->commit));
    snprintf(st->linked_etag, sizeof(st->linked_etag), "\"%s\"", hex);
    snprintf(st->size, sizeof(st->size), "%llu", (unsigned long long)f->size);
    memcpy(st->dress.etag, st->linked_etag, strlen(st->linked_etag) + 1);
    st->dress.add_headers = dress_headers;
    st->dress.ctx = st;
    r->dress = &st->dress;
    ztd_entry *e = f->e ? f->e : st->up;
    bool up_view = !f->e && st->up_view;
    if (f->e)
        ztd_entry_retain(e);
    else
        st->up = NULL; /* its reference goes to the pin */
    ztd_answer_pin(r, e);
    ztd_hf_repo_close(&st->repo); /* the entry is pinned; the rest of the snapshot may go */
    if (up_view)                  /* the upstream's view: made here from its file, as /raw does */
        return ztd_answer_view(s, c, r, e);
    return resolve_answer(s, c, r, e);
}

/* The request's state: its URL parsed and its repository opened (the
 * catalog's, or else the upstream's to fetch). NULL with the answer in *out. */
static hf_state *start(ztd_server *s, struct MHD_Connection *c, ztd_req *r, enum MHD_Result *out)
{
    hf_state *st = calloc(1, sizeof(*st));
    if (!st) {
        *out = ztd_fail(c, r, ZTD_ERR_INTERNAL);
        return NULL;
    }
    st->s = s;
    r->front = st;
    r->front_free = state_free;
    ztd_hf_target *t = &st->t;
    if (ztd_hf_parse(r->method, r->path, t) != 0) {
        if (t->status == 404 && t->repo_missing)
            *out = hf_error(c, r, 404, "RepoNotFound", NULL, "%s", t->message);
        else if (t->status == 405)
            *out = hf_error(c, r, 405, NULL, NULL, "method not allowed here: %s", t->message);
        else
            *out = hf_error(c, r, (unsigned)t->status, NULL, NULL, "%s", t->message);
        return NULL;
    }
    int rc = ztd_hf_repo_open(s->catalog, t->repo, &st->repo);
    if (rc < 0) {
        *out = ztd_fail(c, r, ztd_catalog_ready(s->catalog) ? ZTD_ERR_INTERNAL : ZTD_ERR_NOT_READY);
        return NULL;
    }
    st->origin = rc > 0 && s->upstream;
    if (rc > 0 && !st->origin) {
        *out = hf_error(c, r, 404, "RepoNotFound", NULL, "Repository %s not found", t->repo);
        return NULL;
    }
    return st;
}

/* The repository complete with digests and commit id: the upstream's
 * fetched, or the missing digests hashed, off the workers. false with the
 * answer in *out (MHD_YES while the work runs). */
static bool ready(ztd_server *s, struct MHD_Connection *c, ztd_req *r, hf_state *st,
                  enum MHD_Result *out)
{
    if (!st->origin && !st->repo.missing)
        return true;
    *out = MHD_YES;
    if (!st->off.started && !ztd_offload_wait(s, c, &st->off, st->origin ? origin_job : hash_job))
        return false;
    if (!ztd_offload_done(&st->off))
        return false;
    if (st->origin && st->origin_rc > 0)
        *out = hf_error(c, r, 404, "RepoNotFound", NULL,
                        "Repository %s not found here nor upstream", st->t.repo);
    else if (st->origin && st->origin_rc < 0)
        *out = ztd_error(c, r, st->origin_err, "%s", st->msg);
    else if (!st->origin && st->hash_rc != 0)
        *out = ztd_error(c, r, ZTD_ERR_FILE_CHANGED, "%s", st->msg);
    else if (!st->origin && !ztd_hf_repo_seal(&st->repo))
        *out = ztd_error(c, r, ZTD_ERR_FILE_CHANGED, "%s: digests went missing; retry", st->t.repo);
    else
        return true;
    return false;
}

static enum MHD_Result hf_handle(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    enum MHD_Result out;
    r->error_answer = hf_shared_error;
    if (ztd_answer_resume(s, c, r, &out)) /* a byte answer that waited */
        return out;
    hf_state *st = r->front;
    if (!st && !(st = start(s, c, r, &out)))
        return out;
    if (!ready(s, c, r, st, &out))
        return out;
    if (!revision_ok(st))
        return hf_error(c, r, 404, "RevisionNotFound", NULL,
                        "Invalid rev id: %s (%s is at %s; revisions are main or that commit)",
                        st->t.rev, st->t.repo, st->repo.commit);
    switch (st->t.op) {
    case ZTD_HF_INFO: {
        size_t n;
        char *doc = ztd_hf_info_json(&st->repo, st->t.repo, &n);
        return send_json(c, r, doc, n, st->repo.commit, NULL);
    }
    case ZTD_HF_TREE:
        return answer_tree(s, c, r, st);
    case ZTD_HF_PATHS_INFO:
        return answer_paths(c, r, st);
    default:
        return answer_resolve(s, c, r, st);
    }
}

const ztd_route_def *ztd_hf_route(void)
{
    static const ztd_route_def row = {
        .id = ZTD_ROUTE_HF,
        .methods = "GET, HEAD, POST",
        .scope = ZTD_SCOPE_NONE, /* hf_begin checks READ, with the hub's answers */
        .body = ZTD_REQ_BODY_JSON,
        .begin = hf_begin,
        .data = ztd_json_body_data,
        .handler = hf_handle,
        .query = false, /* @huggingface/hub sends expand=... several times */
    };
    return &row;
}
