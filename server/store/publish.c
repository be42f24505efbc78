/*
 * Publication (see publish.h). Two locks make "check the preconditions, then
 * rename" atomic: this server's mutex against its own other writes, and the
 * flock on the staging directory against other instances on the root; the
 * latter is waited for at most PUBLISH_LOCK_WAIT_MS, so that a stuck instance
 * cannot hang this one.
 */
#include "store/publish.h"
#include "core/log.h"
#include "store/names.h"
#include "store/validators.h"
#include "store/upload_verify.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Another instance holds the lock for a rename and an fsync: milliseconds.
 * Waiting longer means it is stuck; do not hang with it. */
#define PUBLISH_LOCK_WAIT_MS 5000

struct ztd_publisher {
    const char *root;
    ztd_staging *staging;
    ztd_catalog *catalog;
    pthread_mutex_t mu;
};

ztd_publisher *ztd_publisher_new(const char *root, ztd_staging *st, ztd_catalog *cat)
{
    ztd_publisher *p = malloc(sizeof(*p));
    if (p) {
        *p = (ztd_publisher){.root = root, .staging = st, .catalog = cat};
        pthread_mutex_init(&p->mu, NULL);
    }
    return p;
}

void ztd_publisher_free(ztd_publisher *p)
{
    if (p)
        pthread_mutex_destroy(&p->mu);
    free(p);
}

ztd_err ztd_publish_lost(const char *rel, const char *why, char *msg, size_t cap)
{
    return ztd_errf(msg, cap, ZTD_ERR_STAGING_LOST,
                    "the server lost the bytes uploaded for \"%s\" (%s); nothing was published: "
                    "upload again",
                    rel, why);
}

/* The identity ETag of the regular file at ROOT/rel (lstat: a symlink is not one). */
static int current_etag(const char *root, const char *rel, char etag[40], uint64_t *size)
{
    char p[PATH_MAX];
    struct stat sb;
    if ((size_t)snprintf(p, sizeof(p), "%s/%s", root, rel) >= sizeof(p))
        return -1;
    if (lstat(p, &sb) != 0 || !S_ISREG(sb.st_mode))
        return -1;
    ztd_stat_etag(&sb, etag);
    if (size)
        *size = (uint64_t)sb.st_size;
    return 0;
}

/* The other name of the same version, when rel is a plain file whose sha256
 * the catalog knows for the version with identity etag: "\"sha256:<hex>\""
 * (what its listing entry and /raw give once it is hashed). "" otherwise. */
static void digest_etag(const ztd_publisher *p, const char *rel, const char *etag, char out[80])
{
    out[0] = 0;
    ztd_snapshot *s = p->catalog ? ztd_catalog_acquire(p->catalog) : NULL;
    ztd_entry *e = s ? ztd_snapshot_find(s, rel, strlen(rel)) : NULL;
    const uint8_t *sha = e ? ztd_entry_plain_sha256_known(e) : NULL;
    if (sha && !strcmp(e->file_etag, etag))
        ztd_sha256_etag(sha, out);
    ztd_snapshot_release(s);
}

/* Does the entity-tag list hdr name this version, by identity or by digest? */
static bool names_version(const char *hdr, const char *etag, const char *dtag, int weak)
{
    return ztd_etag_list_match(hdr, etag, weak) ||
           (dtag[0] && ztd_etag_list_match(hdr, dtag, weak));
}

ztd_err ztd_publish_preconditions(const ztd_publisher *p, const char *rel, const ztd_preconds *pc,
                                  char *msg, size_t cap)
{
    char etag[40], dtag[80] = "";
    bool exists = current_etag(p->root, rel, etag, NULL) == 0;
    if (exists && (pc->if_match || pc->if_none_match))
        digest_etag(p, rel, etag, dtag);
    if (pc->if_match && !(exists && names_version(pc->if_match, etag, dtag, 0)))
        return ztd_errf(msg, cap, ZTD_ERR_PRECONDITION_FAILED, "If-Match does not hold: \"%s\" %s",
                        rel, exists ? "has changed" : "does not exist");
    if (pc->if_none_match && exists && names_version(pc->if_none_match, etag, dtag, 1))
        return ztd_errf(msg, cap, ZTD_ERR_PRECONDITION_FAILED, "If-None-Match: \"%s\" exists", rel);
    return ZTD_ERR_NONE;
}

ztd_err ztd_publish_name_free(const ztd_publisher *p, const char *rel, char *msg, size_t cap)
{
    char path[PATH_MAX];
    size_t rn = strlen(p->root);
    struct stat sb;
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", p->root, rel) >= sizeof(path))
        return ztd_errf(msg, cap, ZTD_ERR_NAME_CONFLICT, "\"%s\" is too long a name", rel);
    bool conflict = false;
    if (lstat(path, &sb) == 0) {
        conflict = !S_ISREG(sb.st_mode);
    } else {
        for (char *slash = strrchr(path, '/'); slash && slash > path + rn;
             slash = strrchr(path, '/')) {
            *slash = 0;
            if (lstat(path, &sb) == 0) {
                conflict = !S_ISDIR(sb.st_mode);
                break;
            }
        }
    }
    if (!conflict)
        return ZTD_ERR_NONE;
    return ztd_errf(msg, cap, ZTD_ERR_NAME_CONFLICT,
                    "\"%s\" (or a directory on its path) exists and is not a file", rel);
}

/* Validate the staged file through its fd (structure; with verify, every
 * digest and zstd stream too; with sync, fsyncing it meanwhile). */
static zt_status check_staged(const ztd_staged *s, bool verify, bool sync, int *sync_errno,
                              zt_error *err, size_t *nobj)
{
    int fd = s->fd;
    zt_file *f;
    *sync_errno = 0;
    zt_status st = zt_open_fd(fd, NULL, &f, err);
    if (st)
        return st;
    *nobj = zt_file_object_count(f);
    if (verify)
        st =
            ztd_verify_components(f, sync ? fd : -1, sync_errno, s->known_sha256, s->known_ud, err);
    zt_close(f);
    if (!verify && sync && fsync(fd) != 0)
        *sync_errno = errno;
    return st;
}

ztd_err ztd_publish_check(ztd_publisher *p, const ztd_staged *f, const char *rel, bool verify,
                          bool sync, size_t *nobj, char *msg, size_t cap)
{
    zt_error err;
    int sync_errno;
    *nobj = 0;
    /* A plain file (no tensor extension) has no structure to check: its
     * bytes are fsynced, and a client's digest was checked as they came. */
    bool plain = !ztd_file_ext_served(rel, strlen(rel));
    zt_status st = ZT_OK;
    sync_errno = 0;
    if (plain && sync && fsync(f->fd) != 0)
        sync_errno = errno;
    else if (!plain)
        st = check_staged(f, verify, sync, &sync_errno, &err, nobj);
    ztd_err e = ZTD_ERR_NONE;
    /* Something else removed or changed the file: not the client's fault. */
    if (!ztd_staging_intact(p->staging, f->name, f->fd, f->size))
        e = ztd_publish_lost(rel, "its staging file was removed or changed", msg, cap);
    else if (st && ztd_err_status(e = ztd_err_of_zt(st, ZTD_OP_CHECK_UPLOAD)) >= 500)
        ztd_errf(msg, cap, e, "cannot check the uploaded file: %s", err.message);
    else if (st)
        ztd_errf(msg, cap, e, "the uploaded file is not valid: %s", err.message);
    else if (sync_errno)
        e = ztd_errf(msg, cap, ztd_err_of_errno(sync_errno, ZTD_ERR_WRITE_FAILED),
                     "writing the staging file: %s", strerror(sync_errno));
    if (e)
        ztd_staging_remove(p->staging, f->name);
    return e;
}

ztd_err ztd_publish_lock(ztd_publisher *p, const char *what, char *msg, size_t cap)
{
    pthread_mutex_lock(&p->mu);
    if (ztd_staging_lock(p->staging, PUBLISH_LOCK_WAIT_MS) == 0)
        return ZTD_ERR_NONE;
    int e = errno;
    pthread_mutex_unlock(&p->mu);
    if (e != EWOULDBLOCK)
        return ztd_errf(msg, cap, ZTD_ERR_PUBLISH_FAILED, "cannot take the publication lock: %s",
                        strerror(e));
    return ztd_errf(msg, cap, ZTD_ERR_PUBLISH_BUSY,
                    "another ztensord on this root held the publication lock for %u ms; %s",
                    PUBLISH_LOCK_WAIT_MS, what);
}

/* A failed rename of f: why, in the client's terms. */
static ztd_err rename_failed(ztd_publisher *p, const ztd_staged *f, const char *rel, int e,
                             const char *why, char *msg, size_t cap)
{
    if (!ztd_staging_intact(p->staging, f->name, f->fd, f->size))
        return ztd_publish_lost(rel, "its staging file was removed or changed", msg, cap);
    if (e == EEXIST)
        return ztd_errf(msg, cap, ZTD_ERR_PRECONDITION_FAILED, "If-None-Match: \"%s\" exists", rel);
    if (e == ENOTDIR || e == EISDIR)
        return ztd_errf(msg, cap, ZTD_ERR_NAME_CONFLICT, "%s", why);
    return ztd_errf(msg, cap, ztd_err_of_errno(e, ZTD_ERR_PUBLISH_FAILED), "%s", why);
}

void ztd_publish_unlock(ztd_publisher *p, const char *rel, const struct stat *verified)
{
    ztd_staging_unlock(p->staging);
    if (rel) /* under this server's lock still: its writes update the catalog in order */
        ztd_catalog_update(p->catalog, rel, verified);
    pthread_mutex_unlock(&p->mu);
}

ztd_err ztd_publish_rename(ztd_publisher *p, const ztd_staged *f, const char *rel,
                           const ztd_preconds *pc, ztd_published *out, char *msg, size_t cap)
{
    *out = (ztd_published){0};
    /* Only "If-None-Match: *" makes a write create-only; a list of tags was
     * evaluated against the current file before. */
    bool no_replace = ztd_if_none_match_star(pc->if_none_match);
    char why[512];
    if (ztd_publish(p->root, p->staging, f->name, rel, no_replace, &out->replaced, why,
                    sizeof(why)) != 0)
        return rename_failed(p, f, rel, errno, why, msg, cap);
    if (current_etag(p->root, rel, out->etag, &out->size) != 0) /* this version's */
        out->etag[0] = 0;
    return ZTD_ERR_NONE;
}

ztd_err ztd_publish_commit(ztd_publisher *p, const ztd_staged *f, const char *rel,
                           const ztd_preconds *pc, bool verified, ztd_published *out, char *msg,
                           size_t cap)
{
    /* The inode whose digests were just checked: the catalog need not hash it again. */
    struct stat vsb;
    verified = verified && fstat(f->fd, &vsb) == 0;
    ztd_err e = ztd_publish_lock(p, "nothing was published: upload again", msg, cap);
    if (!e) {
        if (!(e = ztd_publish_preconditions(p, rel, pc, msg, cap)))
            e = ztd_publish_rename(p, f, rel, pc, out, msg, cap);
        ztd_publish_unlock(p, e ? NULL : rel, verified ? &vsb : NULL);
    }
    if (e)
        ztd_staging_remove(p->staging, f->name);
    return e;
}

ztd_err ztd_publish_remove(ztd_publisher *p, const char *rel, const ztd_preconds *pc, char *msg,
                           size_t cap)
{
    char etag[40], why[512];
    ztd_err e = ztd_publish_lock(p, "nothing was deleted", msg, cap);
    if (e)
        return e;
    if (current_etag(p->root, rel, etag, NULL) != 0)
        e = ztd_errf(msg, cap, ZTD_ERR_FILE_NOT_FOUND, "no file \"%s\"", rel);
    else if (!(e = ztd_publish_preconditions(p, rel, pc, msg, cap)) &&
             ztd_unpublish(p->root, rel, why, sizeof(why)) != 0)
        e = ztd_errf(msg, cap, ZTD_ERR_DELETE_FAILED, "%s", why);
    ztd_publish_unlock(p, e ? NULL : rel, NULL);
    return e;
}

/* Can the file system hold rel under root: every segment at most NAME_MAX bytes, the whole
 * path shorter than PATH_MAX? Checked before the body, so a name the rename would refuse
 * does not cost the client its upload. */
bool ztd_publish_name_fits(const char *root, const char *rel)
{
    if (strlen(root) + 1 + strlen(rel) >= PATH_MAX)
        return false;
    for (const char *seg = rel, *slash;; seg = slash + 1) {
        slash = strchr(seg, '/');
        if ((slash ? (size_t)(slash - seg) : strlen(seg)) > NAME_MAX)
            return false;
        if (!slash)
            return true;
    }
}
