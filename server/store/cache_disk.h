/*
 * The upstream cache's files (see cache.h, docs/internals/cache.md): the
 * directories, the name of each key, the fill files in tmp/, their
 * publication, and the walk that rebuilds the index at open. Everything is
 * opened relative to directory fds held from open, with O_NOFOLLOW at every
 * step, so a symlink planted in the cache directory is never followed.
 * No locks here: the caller (cache.c) serialises what must be.
 */
#ifndef ZTD_CACHE_DISK_H
#define ZTD_CACHE_DISK_H

#include "store/cache.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZTD_CACHE_TMP_NAME 48

typedef struct ztd_cache_disk {
    int root;  /* the cache directory, flocked: one process per cache */
    int blobs; /* blobs/sha256 */
    int parts; /* parts */
    int tmp;   /* tmp */
} ztd_cache_disk;

/* What the walk at open removed. */
typedef struct ztd_cache_scan {
    unsigned tmp_files; /* leftovers of fills in progress at a crash */
    unsigned strays;    /* files whose name is not a key, symlinks, other types */
} ztd_cache_scan;

/* A key's file name: 64 lowercase hex digits plus a NUL. */
void ztd_cache_key_name(const ztd_cache_key *k, char out[65]);
/* The key named by `name` in the subdirectory `sub` of kind's tree: true only
 * for 64 lowercase hex digits whose first two are `sub`. */
bool ztd_cache_name_key(ztd_cache_kind kind, const char *sub, const char *name, ztd_cache_key *out);

/* Create (0700) and open the cache directory and its trees, and lock it.
 * -1 with errno and a message naming the path in err. */
int ztd_cache_disk_open(ztd_cache_disk *d, const char *dir, char *err, size_t err_cap);
void ztd_cache_disk_close(ztd_cache_disk *d);

/* Empty tmp/, remove strays, and call found() for each complete item. */
typedef void (*ztd_cache_found_fn)(void *arg, const ztd_cache_key *k, uint64_t size,
                                   int64_t mtime_ns);
void ztd_cache_disk_scan(const ztd_cache_disk *d, ztd_cache_found_fn found, void *arg,
                         ztd_cache_scan *removed);

/* The complete item's file, read-only, and its size; -1 with errno (ELOOP for
 * a symlink, EINVAL for a file that is not regular). */
int ztd_cache_disk_open_item(const ztd_cache_disk *d, const ztd_cache_key *k, uint64_t *size);
/* A new fill file in tmp/, read-write; its name goes to name. */
int ztd_cache_disk_create_tmp(const ztd_cache_disk *d, uint64_t serial,
                              char name[ZTD_CACHE_TMP_NAME]);
/* Rename the fsynced fill file into place and fsync the directory. -1 with errno. */
int ztd_cache_disk_publish(const ztd_cache_disk *d, const char *tmp_name, const ztd_cache_key *k);
void ztd_cache_disk_remove_tmp(const ztd_cache_disk *d, const char *tmp_name);
void ztd_cache_disk_remove_item(const ztd_cache_disk *d, const ztd_cache_key *k);

#endif
