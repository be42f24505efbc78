/*
 * The upstream cache's files (see items.h, docs/internals/cache.md): the
 * directories, the name of each key, the fill files in tmp/, their
 * publication, and the walk that rebuilds the index at open. Everything is
 * opened relative to directory fds held from open, with O_NOFOLLOW at every
 * step, so a symlink planted in the cache directory is never followed.
 * No locks here: the caller (items.c) serialises what must be.
 */
#ifndef ZTD_UPSTREAM_ITEMS_DISK_H
#define ZTD_UPSTREAM_ITEMS_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZTD_CACHE_TMP_NAME 48

/* The two trees of items (this layer knows ids, not items.h's keys). */
typedef enum ztd_cache_tree {
    ZTD_CACHE_TREE_BLOBS = 0, /* blobs/sha256: items keyed by a component's digest */
    ZTD_CACHE_TREE_PARTS = 1, /* parts: items keyed by file, validator and name */
} ztd_cache_tree;

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

/* An id's file name: 64 lowercase hex digits plus a NUL. */
void ztd_cache_id_name(const uint8_t id[32], char out[65]);
/* The id named by `name` in the subdirectory `sub` of a tree: true only for
 * 64 lowercase hex digits whose first two are `sub`. */
bool ztd_cache_name_id(const char *sub, const char *name, uint8_t id[32]);

/* Create (0700) and open the cache directory and its trees, and lock it.
 * -1 with errno and a message naming the path in err. */
int ztd_cache_disk_open(ztd_cache_disk *d, const char *dir, char *err, size_t err_cap);
void ztd_cache_disk_close(ztd_cache_disk *d);

/* Empty tmp/, remove strays, and call found() for each complete item. */
typedef void (*ztd_cache_found_fn)(void *arg, ztd_cache_tree tree, const uint8_t id[32],
                                   uint64_t size, int64_t mtime_ns);
void ztd_cache_disk_scan(const ztd_cache_disk *d, ztd_cache_found_fn found, void *arg,
                         ztd_cache_scan *removed);

/* The complete item's file, read-only, and its size; -1 with errno (ELOOP for
 * a symlink, EINVAL for a file that is not regular). */
int ztd_cache_disk_open_item(const ztd_cache_disk *d, ztd_cache_tree tree, const uint8_t id[32],
                             uint64_t *size);
/* A new fill file in tmp/, read-write; its name goes to name. */
int ztd_cache_disk_create_tmp(const ztd_cache_disk *d, uint64_t serial,
                              char name[ZTD_CACHE_TMP_NAME]);
/* Rename the fsynced fill file into place and fsync the directory. -1 with errno. */
int ztd_cache_disk_publish(const ztd_cache_disk *d, const char *tmp_name, ztd_cache_tree tree,
                           const uint8_t id[32]);
void ztd_cache_disk_remove_tmp(const ztd_cache_disk *d, const char *tmp_name);
void ztd_cache_disk_remove_item(const ztd_cache_disk *d, ztd_cache_tree tree, const uint8_t id[32]);

#endif
