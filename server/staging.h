/*
 * The staging area: ROOT/.ztensord-staging, on the same filesystem as the
 * files it publishes into, hidden from the catalog. Uploads are written
 * there and published with fsync, rename, fsync of the directory.
 */
#ifndef ZTD_STAGING_H
#define ZTD_STAGING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZTD_STAGING_DIR ".ztensord-staging"

/* Create the staging directory and remove what a crash left in it. */
int ztd_staging_init(const char *root, char *err, size_t errlen);
/* A new empty staging file; its path goes to path (>= 4096 bytes). Returns an fd or -1. */
int ztd_staging_create(const char *root, const char *kind, char *path, size_t cap);
/* Publish staged_path as ROOT/rel: create parent directories, rename (refusing to
 * replace an existing file when no_replace), fsync the directory. *replaced says
 * whether a file was replaced. Returns 0, or -1 with errno set (EEXIST for
 * no_replace on an existing file) and a message. */
int ztd_publish(const char *root, const char *staged_path, const char *rel, bool no_replace,
                bool *replaced, char *err, size_t errlen);
/* Remove ROOT/rel and fsync its directory. -1 with errno on failure. */
int ztd_unpublish(const char *root, const char *rel, char *err, size_t errlen);
/* Bytes available to unprivileged users on the root's filesystem. */
int ztd_disk_free(const char *root, uint64_t *bytes);

#endif
