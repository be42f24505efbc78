/*
 * What the catalog keeps for a zTensor v2 file beyond what every file has:
 * a /raw validator that every copy of the file shares, and the files its
 * shard table names (the model's file set), each checked to be a regular
 * file inside the served root and remembered as it was when opened, so that
 * a shard changed on disk makes the catalog open its root again.
 */
#ifndef ZTD_CATALOG_V2_H
#define ZTD_CATALOG_V2_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <ztensor/ztensor.h>

typedef struct ztd_v2_shard {
    char *file;    /* catalog name ("dir/model-00001.zt"), or NULL when not located */
    bool servable; /* open, passed §7.3 steps 1-2, a regular file inside the root */
    bool present;  /* the stat below is meaningful */
    dev_t dev;
    ino_t ino;
    int64_t mtime_ns;
    uint64_t size;
} ztd_v2_shard;

typedef struct ztd_v2_entry {
    char raw_etag[96]; /* "\"zt2.<64 hex>\"" from zt_file_identity(), or "" */
    char content_digest[80];
    size_t nshards;
    ztd_v2_shard *shards;
} ztd_v2_entry;

/* For a v2 file opened at abs (catalog name rel), under root_real. NULL for
 * other kinds, or when out of memory (then the file is served without). */
ztd_v2_entry *ztd_v2_entry_new(const zt_file *f, const char *rel, const char *root_real);
void ztd_v2_entry_free(ztd_v2_entry *v);
/* For a v2 file opened from an upstream whose pinned validator is
 * `validator`: its /raw ETag is that validator when it is a ztensord's v2
 * one ("\"zt2.<64 hex>\""), and its shards are not located (their parts are
 * not served). NULL for other kinds, or when out of memory. */
ztd_v2_entry *ztd_v2_entry_upstream(const zt_file *f, const char *validator);
/* The 32 hex digits that name a v2 file's JSON representations (manifest,
 * objects) when its /raw ETag is derived from its identity and it has no
 * shard table (whose JSON tells which shards are here): the same on every
 * copy of the file and through a cache. NULL otherwise: the file ETag's. */
const char *ztd_v2_json_id(const ztd_v2_entry *v);
/* Are the shards still what they were when the entry was opened? */
bool ztd_v2_entry_current(const ztd_v2_entry *v, const zt_file *f);
/* May the bytes of component c be served (not in a missing or outside shard)? */
bool ztd_v2_part_servable(const ztd_v2_entry *v, const zt_component *c);
/* Adds "content_digest" and "files" (the model's file set) to a listing entry. */
void ztd_v2_entry_json(const ztd_v2_entry *v, const char *name, json_t *j);

#endif
