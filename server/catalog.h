/*
 * The catalog: the served directory as an immutable, refcounted snapshot of
 * open files. A rescan builds a new snapshot (reusing entries whose file did
 * not change) and swaps it in atomically; requests keep the snapshot or entry
 * they pinned, so a replaced file's old fd and mapping live until the last
 * response using them ends.
 */
#ifndef ZTD_CATALOG_H
#define ZTD_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <ztensor/ztensor.h>

typedef struct ztd_entry {
    int refs;   /* atomic */
    char *name; /* path relative to the root, '/'-separated */
    size_t name_len;
    zt_file *file;          /* NULL when the file is invalid */
    char *error;            /* why it is invalid, or NULL */
    const char *error_code; /* zt_status_name() of the failure */
    uint64_t size;
    dev_t dev;
    ino_t ino;
    int64_t mtime_ns;
    char *manifest_json; /* cached, compact */
    size_t manifest_json_len;
    char file_etag[40];      /* "\"<32 hex>\"" from (dev, ino, mtime, size) */
    char last_modified[32];  /* the mtime as an HTTP-date, formatted once */
    struct ztd_v2_entry *v2; /* zTensor v2 files only (catalog_v2.h), else NULL */
} ztd_entry;

/* A component found by its sha256 digest. */
typedef struct ztd_blob {
    uint8_t sha256[32];
    ztd_entry *entry;
    const zt_object *object;
    const zt_component *component;
} ztd_blob;

typedef struct ztd_snapshot {
    int refs;            /* atomic */
    ztd_entry **entries; /* sorted by name */
    size_t n, nvalid;
    ztd_blob *blobs; /* open addressing on the first 8 bytes of sha256 */
    size_t blob_cap;
    char *list_json; /* GET /v1/files body */
    size_t list_json_len;
    uint64_t generation;
} ztd_snapshot;

typedef struct ztd_catalog ztd_catalog;

typedef struct ztd_catalog_stats {
    uint64_t reloads; /* completed scans */
    size_t files_valid, files_invalid;
} ztd_catalog_stats;

ztd_catalog *ztd_catalog_new(const char *root, uint64_t max_manifest_size);
void ztd_catalog_free(ztd_catalog *c);
/* Scan the root and swap in the new view. Returns 0, or -1 if the root cannot be read. */
int ztd_catalog_rescan(ztd_catalog *c);
bool ztd_catalog_ready(ztd_catalog *c);
void ztd_catalog_get_stats(ztd_catalog *c, ztd_catalog_stats *out);
const char *ztd_catalog_root(const ztd_catalog *c);

/* Pin the current snapshot; release with ztd_snapshot_release(). NULL before the first scan. */
ztd_snapshot *ztd_catalog_acquire(ztd_catalog *c);
void ztd_snapshot_release(ztd_snapshot *s);
ztd_entry *ztd_snapshot_find(const ztd_snapshot *s, const char *name, size_t len);
const ztd_blob *ztd_snapshot_find_blob(const ztd_snapshot *s, const uint8_t sha256[32]);

void ztd_entry_retain(ztd_entry *e);
void ztd_entry_release(ztd_entry *e);

/* "\"<32 hex>\"": a strong validator from file identity plus a byte span. */
void ztd_identity_etag(const ztd_entry *e, uint64_t off, uint64_t len, char out[40]);

/* The file ETag of a file with this stat (as entries compute it). */
struct stat;
void ztd_stat_etag(const struct stat *sb, char out[40]);

/* Is NAME (a file name, no directory) one the catalog serves? */
bool ztd_catalog_is_served_name(const char *name);

#endif
