/*
 * Publication: how an upload becomes a served file, and how DELETE removes
 * one. What whole-file PUTs, session commits and deletes share:
 *  - the write preconditions (If-Match, If-None-Match) against the file on
 *    disk, and the name check (nothing but a regular file in the way);
 *  - checking a staged upload before it is published (structure; every digest
 *    and zstd stream when asked, fsyncing it meanwhile), and that its staging
 *    file is still the one written;
 *  - under the publication locks (this server's, and the one shared with
 *    other instances on the root, staging.h): the preconditions again, the
 *    rename (or unlink), and the one catalog entry replaced (or dropped).
 * Every function returns ZTD_ERR_NONE or the error to answer with, its
 * message in msg. They block on the disk: run them off libmicrohttpd's
 * threads (http/offload.h).
 */
#ifndef ZTD_PUBLISH_H
#define ZTD_PUBLISH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "core/errors.h"
#include "store/catalog.h"
#include "store/staging.h"

typedef struct ztd_publisher ztd_publisher;

/* root, st (NULL: uploads disabled) and cat must outlive it. NULL: out of memory. */
ztd_publisher *ztd_publisher_new(const char *root, ztd_staging *st, ztd_catalog *cat);
void ztd_publisher_free(ztd_publisher *p);

/* A write's preconditions: header values as sent (borrowed), NULL when absent. */
typedef struct ztd_preconds {
    const char *if_match, *if_none_match;
} ztd_preconds;

/* If-Match / If-None-Match against the regular file now at ROOT/rel: 412 when
 * one does not hold. */
ztd_err ztd_publish_preconditions(const ztd_publisher *p, const char *rel, const ztd_preconds *pc,
                                  char *msg, size_t cap);
/* 409 name_conflict when something other than a regular file is at rel, or
 * other than a directory on its path. */
ztd_err ztd_publish_name_free(const ztd_publisher *p, const char *rel, char *msg, size_t cap);

/* Can the file system hold rel under root: every segment at most NAME_MAX
 * bytes, the whole path shorter than PATH_MAX? Checked before a body, so a
 * name the rename would refuse does not cost the client its upload. */
bool ztd_publish_name_fits(const char *root, const char *rel);
/* A staged upload: its staging file, the fd it was written through, its size;
 * optionally, component digests its writer already has (zt_verify_options). */
typedef struct ztd_staged {
    int fd;
    const char *name;
    uint64_t size;
    int (*known_sha256)(void *ud, uint64_t offset, uint64_t length, uint8_t out[32]);
    void *known_ud;
} ztd_staged;

/* Check f before publishing it as rel: its structure; with verify every digest
 * and zstd stream (on all cores); with sync an fsync meanwhile. A plain file
 * (rel has no tensor extension) is only fsynced (with sync). Something that
 * removed or changed the staging file is 500 staging_lost whatever else was
 * found. On an error the staging file is removed. *nobj: its objects. */
ztd_err ztd_publish_check(ztd_publisher *p, const ztd_staged *f, const char *rel, bool verify,
                          bool sync, size_t *nobj, char *msg, size_t cap);

typedef struct ztd_published {
    bool replaced; /* a file was there */
    char etag[40]; /* the new file's identity ETag */
    uint64_t size; /* its size */
} ztd_published;

/* Publish f as rel under the locks: preconditions again, rename (create-only
 * with If-None-Match: *), fsync of the directory, and the catalog entry of rel
 * replaced. verified: every digest of f was checked (ztd_publish_check with
 * verify), so the catalog need not hash it again. The staging file is gone
 * afterwards, published or removed. */
ztd_err ztd_publish_commit(ztd_publisher *p, const ztd_staged *f, const char *rel,
                           const ztd_preconds *pc, bool verified, ztd_published *out, char *msg,
                           size_t cap);

/* The steps of ztd_publish_commit, for a publication that does more under the
 * locks (a session's commit writes its manifest there, so that a failed
 * precondition leaves the session as it was):
 * Take both locks: this server's, then the one shared with other instances
 * (503 publish_busy after 5 s). On an error no lock is held. what: the end of
 * the busy message ("nothing was published: upload again"). */
ztd_err ztd_publish_lock(ztd_publisher *p, const char *what, char *msg, size_t cap);
/* Locked: rename f to rel (create-only with If-None-Match: *), fsync of the
 * directory. The staging file is left alone on an error. */
ztd_err ztd_publish_rename(ztd_publisher *p, const ztd_staged *f, const char *rel,
                           const ztd_preconds *pc, ztd_published *out, char *msg, size_t cap);
/* Release the locks; rel non-NULL: its catalog entry is made again first (as
 * ztd_catalog_update, with verified). */
void ztd_publish_unlock(ztd_publisher *p, const char *rel, const struct stat *verified);

/* DELETE: under the locks, 404 file_not_found unless a regular file is at
 * rel, the preconditions, unlink, fsync of the directory, catalog entry dropped. */
ztd_err ztd_publish_remove(ztd_publisher *p, const char *rel, const ztd_preconds *pc, char *msg,
                           size_t cap);

/* 500 staging_lost: the bytes uploaded for rel are gone (why), not the client's fault. */
ztd_err ztd_publish_lost(const char *rel, const char *why, char *msg, size_t cap);

#endif
