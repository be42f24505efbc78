/*
 * Whole-file uploads (PUT /v1/files/{file}) and deletes, plus what component
 * sessions share with them: authorisation, write preconditions, digest
 * headers, and validate-then-publish. See upload.h.
 */
#include "handlers/upload.h"
#include "http/auth.h"
#include "core/clock.h"
#include "http/headers.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/metrics.h"
#include "http/range.h"
#include "http/response.h"
#include "handlers/session.h"
#include "store/staging.h"
#include "store/verify.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <ztensor/ztensor_experimental.h>

#define WBUF (1u << 20)
#define WRITEBACK_EVERY (8ull << 20)
#define DISK_CHECK_EVERY (1ull << 20) /* a statvfs() per MiB: cheap, and bounds overshoot */
/* Another instance on the root holds the publication lock for a rename and an
 * fsync: milliseconds. Waiting longer means it is stuck; do not hang with it. */
#define PUBLISH_LOCK_WAIT_MS 5000

struct ztd_upload {
    int fd;
    char name[ZTD_STAGING_NAME_MAX]; /* in the staging directory; "" once published or removed */
    uint64_t received, declared;
    bool has_declared;
    zt_hasher *sha;       /* Content-Digest hashed here, when no thread could be had */
    zt_hash_thread *shat; /* ... or beside the receiving: owns buf's memory */
    ztd_digest_want want;
    uint8_t *buf;
    size_t blen;
    uint64_t next_disk_check;
    uint64_t written, writeback; /* bytes written; write-back started up to */
    bool counted;
};

bool ztd_upload_handles(ztd_route_id route)
{
    switch (route) {
    case ZTD_ROUTE_PUT_FILE:
    case ZTD_ROUTE_DELETE_FILE:
    case ZTD_ROUTE_UPLOAD_NEW:
    case ZTD_ROUTE_UPLOAD_STATUS:
    case ZTD_ROUTE_UPLOAD_ABORT:
    case ZTD_ROUTE_UPLOAD_COMPONENT:
    case ZTD_ROUTE_UPLOAD_COMMIT:
        return true;
    default:
        return false;
    }
}

/* ---- shared helpers */

bool ztd_authorize(ztd_server *s, struct MHD_Connection *c, ztd_req *r, bool write,
                   enum MHD_Result *ret)
{
    if (!write && !s->cfg->require_read_token)
        return true;
    if (write && !s->tokens) {
        if (s->cfg->allow_anonymous_writes)
            return true;
        *ret = ztd_fail(c, r, ZTD_ERR_WRITES_DISABLED);
        return false;
    }
    switch (ztd_auth_check(s->tokens, ztd_header(c, "Authorization"),
                           write ? ZTD_SCOPE_WRITE : ZTD_SCOPE_READ)) {
    case ZTD_AUTH_OK:
        return true;
    case ZTD_AUTH_FORBIDDEN:
        *ret =
            ztd_error(c, r, ZTD_ERR_FORBIDDEN, "this token may not %s", write ? "write" : "read");
        return false;
    case ZTD_AUTH_INVALID:
        *ret = ztd_error_hdr(c, r, ZTD_ERR_TOKEN_UNKNOWN, "WWW-Authenticate",
                             "Bearer realm=\"ztensord\", error=\"invalid_token\"", "%s",
                             ztd_err_message(ZTD_ERR_TOKEN_UNKNOWN));
        return false;
    default:
        *ret = ztd_error_hdr(c, r, ZTD_ERR_TOKEN_MISSING, "WWW-Authenticate",
                             "Bearer realm=\"ztensord\"", "%s",
                             ztd_err_message(ZTD_ERR_TOKEN_MISSING));
        return false;
    }
}

static int current_etag(const char *root, const char *rel, char etag[40])
{
    char p[PATH_MAX];
    struct stat sb;
    if ((size_t)snprintf(p, sizeof(p), "%s/%s", root, rel) >= sizeof(p))
        return -1;
    if (lstat(p, &sb) != 0 || !S_ISREG(sb.st_mode))
        return -1;
    ztd_stat_etag(&sb, etag);
    return 0;
}

int ztd_write_preconditions(ztd_server *s, struct MHD_Connection *c, ztd_req *r, const char *rel,
                            enum MHD_Result *ret)
{
    char etag[40];
    bool exists = current_etag(s->cfg->root, rel, etag) == 0;
    const char *im = ztd_header(c, "If-Match"), *inm = ztd_header(c, "If-None-Match");
    if (im && !(exists && ztd_etag_list_match(im, etag, 0))) {
        *ret = ztd_error(c, r, ZTD_ERR_PRECONDITION_FAILED, "If-Match does not hold: \"%s\" %s",
                         rel, exists ? "has changed" : "does not exist");
        return -1;
    }
    if (inm && exists && ztd_etag_list_match(inm, etag, 1)) {
        *ret = ztd_error(c, r, ZTD_ERR_PRECONDITION_FAILED, "If-None-Match: \"%s\" exists", rel);
        return -1;
    }
    return 0;
}

/* Validate the staged file through its fd (structure; with verify, every
 * digest and zstd stream too; with sync, fsyncing it meanwhile). -1 with *err
 * when it is invalid or could not be read. */
static int check_staged(int fd, bool verify, bool sync, int *sync_errno, zt_error *err,
                        size_t *nobj)
{
    zt_file *f;
    *sync_errno = 0;
    if (zt_open_fd(fd, NULL, &f, err))
        return -1;
    *nobj = zt_file_object_count(f);
    int sync_fd = sync ? fd : -1;
    int rc = verify && ztd_verify_components(f, sync_fd, sync_errno, err) != ZT_OK ? -1 : 0;
    zt_close(f);
    if (!verify && sync && fsync(fd) != 0)
        *sync_errno = errno;
    return rc;
}

enum MHD_Result ztd_staging_lost(struct MHD_Connection *c, ztd_req *r, const char *rel,
                                 const char *why)
{
    return ztd_error(c, r, ZTD_ERR_STAGING_LOST,
                     "the server lost the bytes uploaded for \"%s\" (%s); nothing was published: "
                     "upload again",
                     rel, why);
}

static void escape_path(const char *in, char *out, size_t cap)
{
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && w + 4 < cap; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p))
            out[w++] = (char)*p;
        else {
            out[w++] = '%';
            out[w++] = ztd_hex_digit_upper(*p >> 4);
            out[w++] = ztd_hex_digit_upper(*p);
        }
    }
    out[w] = 0;
}

static enum MHD_Result write_failed(struct MHD_Connection *c, ztd_req *r, int e);

/* The lock shared with other instances on the root (publish_mu is held).
 * 0, or -1 with the answer in *ret. */
static int lock_instances(ztd_server *s, struct MHD_Connection *c, ztd_req *r, const char *what,
                          enum MHD_Result *ret)
{
    if (ztd_staging_lock(s->staging, PUBLISH_LOCK_WAIT_MS) == 0)
        return 0;
    if (errno != EWOULDBLOCK)
        *ret = ztd_error(c, r, ZTD_ERR_PUBLISH_FAILED, "cannot take the publication lock: %s",
                         strerror(errno));
    else
        *ret = ztd_error(c, r, ZTD_ERR_PUBLISH_BUSY,
                         "another ztensord on this root held the publication lock for %u ms; %s",
                         PUBLISH_LOCK_WAIT_MS, what);
    return -1;
}

/* Under both publication locks: the preconditions, then the rename. 0 when
 * published; otherwise *ret is the answer (1), or -1 with errno and msg. */
static int publish_locked(ztd_server *s, struct MHD_Connection *c, ztd_req *r, const char *name,
                          const char *rel, bool *replaced, char etag[40], char *msg, size_t cap,
                          enum MHD_Result *ret)
{
    if (lock_instances(s, c, r, "nothing was published: upload again", ret) != 0)
        return 1;
    int rc = 1;
    if (ztd_write_preconditions(s, c, r, rel, ret) == 0) {
        /* Only "If-None-Match: *" makes a write create-only; a list of tags was
         * already evaluated against the current file above. */
        bool no_replace = ztd_if_none_match_star(ztd_header(c, "If-None-Match"));
        rc = ztd_publish(s->cfg->root, s->staging, name, rel, no_replace, replaced, msg, cap);
        if (rc == 0)
            current_etag(s->cfg->root, rel, etag); /* under the lock: this version's */
    }
    int e = errno;
    ztd_staging_unlock(s->staging);
    errno = e;
    return rc;
}

enum MHD_Result ztd_validate_and_publish(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                         int fd, const char *name, uint64_t size, const char *rel,
                                         bool verify, bool sync)
{
    zt_error err;
    size_t nobj = 0;
    int sync_errno;
    int bad = check_staged(fd, verify, sync, &sync_errno, &err, &nobj);
    /* Something else removed or changed the file: not the client's fault. */
    if (!ztd_staging_intact(s->staging, name, fd, size)) {
        ztd_staging_remove(s->staging, name);
        return ztd_staging_lost(c, r, rel, "its staging file was removed or changed");
    }
    if (bad) {
        ztd_staging_remove(s->staging, name);
        ztd_err e = ztd_err_of_zt(err.code, ZTD_OP_CHECK_UPLOAD);
        if (ztd_err_status(e) >= 500) /* the server's failure */
            return ztd_error(c, r, e, "cannot check the uploaded file: %s", err.message);
        return ztd_error(c, r, e, "the uploaded file is not valid: %s", err.message);
    }
    if (sync_errno) {
        ztd_staging_remove(s->staging, name);
        return write_failed(c, r, sync_errno);
    }
    enum MHD_Result ret;
    bool replaced = false;
    char msg[512], etag[40] = "";
    /* The inode whose digests were just checked: the catalog need not hash it again. */
    struct stat vsb;
    bool verified = verify && fstat(fd, &vsb) == 0;
    pthread_mutex_lock(&s->publish_mu);
    int rc = publish_locked(s, c, r, name, rel, &replaced, etag, msg, sizeof(msg), &ret);
    int e = errno;
    if (rc == 0)
        ztd_catalog_rescan_verified(s->catalog, rel, verified ? &vsb : NULL);
    pthread_mutex_unlock(&s->publish_mu);
    if (rc > 0) {
        ztd_staging_remove(s->staging, name);
        return ret;
    }
    if (rc != 0) {
        bool lost = !ztd_staging_intact(s->staging, name, fd, size);
        ztd_staging_remove(s->staging, name);
        if (lost)
            return ztd_staging_lost(c, r, rel, "its staging file was removed or changed");
        if (e == EEXIST)
            return ztd_error(c, r, ZTD_ERR_PRECONDITION_FAILED, "If-None-Match: \"%s\" exists",
                             rel);
        if (e == ENOTDIR || e == EISDIR)
            return ztd_error(c, r, ZTD_ERR_NAME_CONFLICT, "%s", msg);
        return ztd_error(c, r, ztd_err_of_errno(e, ZTD_ERR_PUBLISH_FAILED), "%s", msg);
    }
    struct stat sb;
    char p[PATH_MAX], loc[PATH_MAX * 3];
    if ((size_t)snprintf(p, sizeof(p), "%s/%s", s->cfg->root, rel) >= sizeof(p) ||
        stat(p, &sb) != 0)
        sb.st_size = 0;
    ztd_log(ZTD_LOG_INFO, "published %s (%lld bytes, %zu objects, %s)", rel, (long long)sb.st_size,
            nobj, replaced ? "replaced" : "new");
    json_t *j = json_pack("{s:s, s:I, s:I, s:s, s:b}", "name", rel, "size", (json_int_t)sb.st_size,
                          "objects", (json_int_t)nobj, "etag", etag, "replaced", replaced);
    char *body = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!body)
        return MHD_NO;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "application/json");
    MHD_add_response_header(resp, "ETag", etag);
    strcpy(loc, "/v1/files/");
    escape_path(rel, loc + 10, sizeof(loc) - 10);
    MHD_add_response_header(resp, "Location", loc);
    return ztd_queue(c, r, replaced ? 200 : 201, resp, strlen(body));
}

/* ---- PUT /v1/files/{file} */

static bool disk_ok(ztd_server *s, uint64_t need)
{
    uint64_t avail;
    if (ztd_disk_free(s->cfg->root, &avail) != 0)
        return true;
    return avail >= need && avail - need >= s->cfg->disk_reserve;
}

/* Does something other than a regular file sit at rel, or at a directory on its path? */
static bool name_conflict(const char *root, const char *rel)
{
    char p[PATH_MAX];
    if ((size_t)snprintf(p, sizeof(p), "%s/%s", root, rel) >= sizeof(p))
        return true;
    struct stat sb;
    if (lstat(p, &sb) == 0)
        return !S_ISREG(sb.st_mode);
    for (char *slash = strrchr(p, '/'); slash && slash > p + strlen(root);
         slash = strrchr(p, '/')) {
        *slash = 0;
        if (lstat(p, &sb) == 0)
            return !S_ISDIR(sb.st_mode);
    }
    return false;
}

static void upload_free(ztd_server *s, ztd_upload *u)
{
    if (!u)
        return;
    if (u->fd >= 0)
        close(u->fd);
    ztd_staging_remove(s->staging, u->name);
    zt_hasher_free(u->sha);
    if (u->shat)
        zt_hash_thread_free(u->shat, u->buf);
    else
        free(u->buf);
    free(u);
}

static enum MHD_Result put_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    enum MHD_Result ret;
    const char *rel = r->match->file;
    size_t n = r->match->file_len;
    if (n < 3 || strcmp(rel + n - 3, ".zt"))
        return ztd_fail(c, r, ZTD_ERR_BAD_NAME);
    const char *cl = ztd_header(c, "Content-Length");
    uint64_t declared = cl ? strtoull(cl, NULL, 10) : 0;
    if (cl && declared > s->cfg->max_upload_size)
        return ztd_error(c, r, ZTD_ERR_TOO_LARGE,
                         "Content-Length %llu exceeds max_upload_size %llu",
                         (unsigned long long)declared, (unsigned long long)s->cfg->max_upload_size);
    ztd_digest_want want;
    if (ztd_parse_digest_header(ztd_header(c, "Content-Digest"), &want) != 0 ||
        (!want.present && ztd_parse_digest_header(ztd_header(c, "Repr-Digest"), &want) != 0))
        return ztd_fail(c, r, ZTD_ERR_BAD_DIGEST_HEADER);
    if (ztd_write_preconditions(s, c, r, rel, &ret) != 0)
        return ret;
    if (name_conflict(s->cfg->root, rel))
        return ztd_error(c, r, ZTD_ERR_NAME_CONFLICT,
                         "\"%s\" (or a directory on its path) exists and is not a file", rel);
    if (!s->staging)
        return ztd_fail(c, r, ZTD_ERR_UPLOADS_DISABLED);
    if (!ztd_upload_slot_take(s))
        return ztd_error(c, r, ZTD_ERR_TOO_MANY_UPLOADS,
                         "%u uploads and sessions are already running", s->cfg->max_uploads);
    ztd_upload *u = calloc(1, sizeof(*u));
    if (!u || !(u->buf = malloc(WBUF))) {
        free(u);
        ztd_upload_slot_give(s);
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    }
    u->counted = true;
    u->fd = -1;
    r->up = u;
    if (!disk_ok(s, declared))
        return ztd_error(c, r, ZTD_ERR_INSUFFICIENT_STORAGE,
                         "not enough free disk for %llu bytes plus the reserve of %llu",
                         (unsigned long long)declared, (unsigned long long)s->cfg->disk_reserve);
    u->fd = ztd_staging_create(s->staging, "put", u->name);
    if (u->fd < 0)
        return ztd_error(c, r, ztd_err_of_errno(errno, ZTD_ERR_STAGING_FAILED),
                         "cannot create a staging file: %s", strerror(errno));
    u->want = want;
    /* The body's digest on another core, fed each buffer once it is written. */
    uint8_t *first;
    if (want.present && (u->shat = zt_hash_thread_new(ZT_DIGEST_SHA256, WBUF, &first))) {
        free(u->buf);
        u->buf = first;
    } else if (want.present && !(u->sha = zt_hasher_new(ZT_DIGEST_SHA256)))
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    u->declared = declared;
    u->has_declared = cl != NULL;
    u->next_disk_check = DISK_CHECK_EVERY;
    return MHD_YES;
}

static int flush_buf(ztd_upload *u)
{
    size_t off = 0;
    while (off < u->blen) {
        ssize_t w = write(u->fd, u->buf + off, u->blen - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        off += (size_t)w;
    }
    u->written += u->blen;
    if (u->shat && u->blen)
        u->buf = zt_hash_thread_submit(u->shat, u->buf, u->blen);
    u->blen = 0;
#ifdef SYNC_FILE_RANGE_WRITE
    /* Start write-back as the body arrives, so the fsync before publishing
     * waits for the last few MiB, not the whole file. */
    if (u->written - u->writeback >= WRITEBACK_EVERY) {
        sync_file_range(u->fd, (off_t)u->writeback, (off_t)(u->written - u->writeback),
                        SYNC_FILE_RANGE_WRITE);
        u->writeback = u->written;
    }
#endif
    return 0;
}

static enum MHD_Result write_failed(struct MHD_Connection *c, ztd_req *r, int e)
{
    return ztd_error(c, r, ztd_err_of_errno(e, ZTD_ERR_WRITE_FAILED),
                     "writing the staging file: %s", strerror(e));
}

static enum MHD_Result put_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                const char *data, size_t n)
{
    ztd_upload *u = r->up;
    if (u->received + n > s->cfg->max_upload_size)
        return ztd_error(c, r, ZTD_ERR_TOO_LARGE, "body exceeds max_upload_size %llu",
                         (unsigned long long)s->cfg->max_upload_size);
    u->received += n;
    ztd_metrics_upload_bytes(n);
    if (u->sha)
        zt_hasher_update(u->sha, data, n);
    while (n) {
        size_t k = WBUF - u->blen < n ? WBUF - u->blen : n;
        memcpy(u->buf + u->blen, data, k);
        u->blen += k;
        data += k;
        n -= k;
        if (u->blen == WBUF && flush_buf(u) != 0)
            return write_failed(c, r, errno);
    }
    if (u->received >= u->next_disk_check) {
        u->next_disk_check += DISK_CHECK_EVERY;
        if (!disk_ok(s, 0))
            return ztd_error(c, r, ZTD_ERR_INSUFFICIENT_STORAGE,
                             "free disk fell below the reserve of %llu bytes",
                             (unsigned long long)s->cfg->disk_reserve);
    }
    return MHD_YES;
}

static enum MHD_Result put_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    ztd_upload *u = r->up;
    if (flush_buf(u) != 0)
        return write_failed(c, r, errno);
    if (u->want.present) {
        uint8_t got[32];
        if (u->shat)
            zt_hash_thread_final(u->shat, got);
        else
            zt_hasher_final(u->sha, got);
        if (memcmp(got, u->want.sha256, 32) != 0)
            return ztd_fail(c, r, ZTD_ERR_BODY_DIGEST_MISMATCH);
    }
    /* fsynced beside the verification, then published; the fd closes after */
    uint64_t t_body = (ztd_now_us() - r->t0_us) / 1000;
    enum MHD_Result ret =
        ztd_validate_and_publish(s, c, r, u->fd, u->name, u->received, r->match->file, true, true);
    u->name[0] = 0; /* published or removed */
    ztd_log(ZTD_LOG_DEBUG, "PUT %s: %llu bytes, body in %llu ms, verify+fsync+publish in %llu ms",
            r->match->file, (unsigned long long)u->received, (unsigned long long)t_body,
            (unsigned long long)((ztd_now_us() - r->t0_us) / 1000 - t_body));
    return ret;
}

/* ---- DELETE /v1/files/{file} */

static enum MHD_Result delete_file(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    enum MHD_Result ret;
    const char *rel = r->match->file;
    char etag[40], msg[512];
    int rc = 1; /* 1: answered in ret */
    pthread_mutex_lock(&s->publish_mu);
    if (lock_instances(s, c, r, "nothing was deleted", &ret) != 0) {
        pthread_mutex_unlock(&s->publish_mu);
        return ret;
    }
    if (current_etag(s->cfg->root, rel, etag) != 0)
        ret = ztd_error(c, r, ZTD_ERR_FILE_NOT_FOUND, "no file \"%s\"", rel);
    else if (ztd_write_preconditions(s, c, r, rel, &ret) == 0)
        rc = ztd_unpublish(s->cfg->root, rel, msg, sizeof(msg));
    ztd_staging_unlock(s->staging);
    if (rc == 0)
        ztd_catalog_rescan(s->catalog);
    pthread_mutex_unlock(&s->publish_mu);
    if (rc > 0)
        return ret;
    if (rc != 0)
        return ztd_error(c, r, ZTD_ERR_DELETE_FAILED, "%s", msg);
    ztd_log(ZTD_LOG_INFO, "deleted %s", rel);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    return ztd_queue(c, r, 204, resp, 0);
}

/* ---- dispatch */

enum MHD_Result ztd_upload_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    enum MHD_Result ret;
    bool write = r->match->route != ZTD_ROUTE_UPLOAD_STATUS;
    if (!ztd_authorize(s, c, r, write, &ret))
        return ret;
    switch (r->match->route) {
    case ZTD_ROUTE_PUT_FILE:
        return put_begin(s, c, r);
    case ZTD_ROUTE_UPLOAD_COMPONENT:
        return ztd_session_component_begin(s, c, r);
    default:
        return MHD_YES; /* small JSON bodies or none: handled at the end */
    }
}

enum MHD_Result ztd_upload_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                const char *data, size_t n)
{
    switch (r->match->route) {
    case ZTD_ROUTE_PUT_FILE:
        return put_data(s, c, r, data, n);
    case ZTD_ROUTE_UPLOAD_COMPONENT:
        return ztd_session_component_data(s, c, r, data, n);
    default:
        return ztd_json_body_append(c, r, data, n);
    }
}

enum MHD_Result ztd_upload_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    switch (r->match->route) {
    case ZTD_ROUTE_PUT_FILE:
        return put_end(s, c, r);
    case ZTD_ROUTE_DELETE_FILE:
        return delete_file(s, c, r);
    default:
        return ztd_session_route_end(s, c, r);
    }
}

void ztd_upload_cleanup(ztd_server *s, ztd_req *r)
{
    if (r->up) {
        if (r->up->counted)
            ztd_upload_slot_give(s);
        upload_free(s, r->up);
        r->up = NULL;
    }
    ztd_session_request_done(s, r);
    free(r->body);
    r->body = NULL;
}
