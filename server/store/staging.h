/*
 * The staging area: ROOT/.ztensord-staging, on the same filesystem as the
 * files it publishes into, hidden from the catalog. Uploads are written there
 * and published with fsync, rename, fsync of the directory.
 *
 * Several instances may share a root (a start-new-then-stop-old deploy), so
 * each instance stages in its own subdirectory, run-<pid>-<random>, which it
 * holds an exclusive flock(2) on for its lifetime; at start-up an instance
 * removes only the subdirectories whose lock it can take (their owner died).
 * A flock on the staging directory itself serializes start-up and "check the
 * preconditions, then rename" between instances.
 *
 * Every operation goes through directory fds: the staging directory is opened
 * with O_NOFOLLOW and must be a real directory owned by this process's user and
 * not writable by group or others, so it cannot be turned against the server
 * (a symlink to elsewhere would have been emptied and written through).
 */
#ifndef ZTD_STAGING_H
#define ZTD_STAGING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZTD_STAGING_DIR ".ztensord-staging"
/* Room for a staging file's name (relative to the instance's directory). */
#define ZTD_STAGING_NAME_MAX 64
/* ztd_staging_intact(): do not compare the size. */
#define ZTD_STAGING_ANY_SIZE UINT64_MAX

typedef struct ztd_staging ztd_staging;

typedef enum ztd_staging_status {
    ZTD_STAGING_OK,
    ZTD_STAGING_UNAVAILABLE, /* cannot be created (read-only root): serve without uploads */
    ZTD_STAGING_UNSAFE,      /* a symlink, not a directory, another user's, or writable by
                                others: refuse to start */
} ztd_staging_status;

/* Open (creating it, mode 0700) and check the staging directory, remove what
 * instances that died left in it (and files of the older one-directory layout
 * not modified for stale_ms), and create this instance's own locked directory.
 * On ZTD_STAGING_OK *out owns it (ztd_staging_free); otherwise err says why,
 * naming the path. */
ztd_staging_status ztd_staging_open(const char *root, uint64_t stale_ms, ztd_staging **out,
                                    char *err, size_t errlen);
/* Remove this instance's directory and release its lock. Accepts NULL. */
void ztd_staging_free(ztd_staging *st);

/* A new empty staging file (mode 0644, whatever the umask: it is published as
 * it is). Its name goes to name. Returns an fd the caller owns, or -1 with errno. */
int ztd_staging_create(ztd_staging *st, const char *kind, char name[ZTD_STAGING_NAME_MAX]);
/* A staging file made by ztd_staging_create, opened again for reading (the
 * parts of an S3 multipart upload are read back when it completes): an fd
 * the caller owns, or -1 with errno. */
int ztd_staging_open_file(ztd_staging *st, const char *name);
/* A second name (of kind `kind`, into name) for the staging file `from`: a
 * hard link, so that checking and publishing it leaves `from` in place if
 * the check fails (an S3 multipart upload's assembled parts). 0, or -1
 * with errno. */
int ztd_staging_link(ztd_staging *st, const char *from, const char *kind,
                     char name[ZTD_STAGING_NAME_MAX]);
/* Remove a staging file (nothing if name is empty). */
void ztd_staging_remove(ztd_staging *st, const char *name);
/* Is name still the file fd is open on, and (unless size is ZTD_STAGING_ANY_SIZE)
 * size bytes long? false: something removed, replaced or truncated it, so the
 * bytes the client sent are lost. */
bool ztd_staging_intact(const ztd_staging *st, const char *name, int fd, uint64_t size);

/* The lock between instances that share the root, taken around "check the
 * preconditions, rename": 0, or -1 with errno (EWOULDBLOCK: another instance
 * held it for wait_ms). st NULL: 0. */
int ztd_staging_lock(ztd_staging *st, unsigned wait_ms);
void ztd_staging_unlock(ztd_staging *st);

/* Publish the staging file name as ROOT/rel: create parent directories, rename
 * (refusing to replace an existing file when no_replace), fsync the directory.
 * *replaced says whether a file was replaced. Returns 0, or -1 with errno set
 * (EEXIST for no_replace on an existing file) and a message. */
int ztd_publish(const char *root, ztd_staging *st, const char *name, const char *rel,
                bool no_replace, bool *replaced, char *err, size_t errlen);
/* Remove ROOT/rel and fsync its directory. -1 with errno on failure. */
int ztd_unpublish(const char *root, const char *rel, char *err, size_t errlen);

#endif
