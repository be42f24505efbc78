/*
 * The catalog: the served directory as an immutable, refcounted snapshot of
 * open files. A rescan builds a new snapshot (reusing entries whose file did
 * not change) and swaps it in atomically; requests keep the snapshot or entry
 * they pinned, so a replaced file's old fd and mapping live until the last
 * response using them ends.
 *
 * Open files are bounded (store/open_files.h): an entry's zt_file keeps its
 * parsed manifest for the entry's life, but its fd and mapping only while the
 * file is among the max_open_files most recently used or pinned. Pinning is
 * ztd_entry_retain(): it opens the file again if it was let go, so whoever
 * reads e->file's bytes or fd holds a retained entry (a snapshot's reference
 * is not a pin). Digests are verified once per entry, open or not.
 *
 * Every regular file under the root is an entry, except hidden names (a
 * segment starting with '.': dotfiles and the staging directories) and what
 * the `exclude` patterns name (ztd_catalog_set_exclude). An entry is one of
 * two kinds (ztd_entry_kind), fixed by its name:
 *  - a tensor file (.zt, .safetensors, .alt; store/names.h): `file` is its
 *    parsed model, or NULL when it failed to open or parse (then `error`
 *    says why, and it is listed as invalid);
 *  - a plain file (every other name: config.json, tokenizer.json, README):
 *    never a model (`file` is always NULL, and NULL means nothing there);
 *    its bytes are read through ztd_entry_fd() while pinned, and its sha256
 *    is known once the background verifier has hashed the whole file
 *    (ztd_entry_plain_sha256). `error` is set only when it could not be
 *    opened (retried by each scan).
 * Ask ztd_entry_ok() whether an entry of either kind can be served.
 */
#ifndef ZTD_CATALOG_H
#define ZTD_CATALOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <ztensor/ztensor.h>

#include "store/precompressed.h"
#include "store/digests.h"
#include "store/open_files.h"

/* What an entry is (see above). */
typedef enum ztd_entry_kind {
    ZTD_ENTRY_TENSOR = 0, /* a tensor file: file is its model, or NULL when invalid */
    ZTD_ENTRY_PLAIN       /* any other file: no model; bytes via ztd_entry_fd() */
} ztd_entry_kind;

/* A plain file's hash, by the background verifier (ztd_entry.plain_state). */
enum { ZTD_PLAIN_PENDING = 0, ZTD_PLAIN_HASHED, ZTD_PLAIN_UNREADABLE };

typedef struct ztd_entry {
    int refs; /* atomic */
    ztd_entry_kind kind;
    char *name; /* path relative to the root, '/'-separated */
    size_t name_len;
    zt_file *file;          /* a tensor file's model; NULL when invalid, and for plain files */
    char *error;            /* why it is invalid, or NULL */
    const char *error_code; /* zt_status_name() of the failure */
    bool retry;             /* the failure may pass (no fd, no memory, no permission): the
                               next scan opens the file again instead of reusing this entry */
    uint64_t size;
    dev_t dev;
    ino_t ino;
    int64_t mtime_ns;
    int64_t ctime_ns; /* with mode: chmod and in-place rewrites make a new entry */
    mode_t mode;
    ztd_digest_checks digests; /* which sha256 claims are checked (see digests.h) */
    char *manifest_json;       /* cached, compact: read it with ztd_entry_manifest_json() */
    size_t manifest_json_len;
    char file_etag[40];     /* "\"<32 hex>\"" from (dev, ino, mtime, size) */
    char last_modified[32]; /* the mtime as an HTTP-date, formatted once */
    bool stale;             /* atomic: the file changed in place since it was opened */
    struct ztd_decode_marks *decode_marks; /* atomic; made on first decode (decoders.c) */
    struct ztd_v2_entry *v2;               /* zTensor v2 files only (catalog_v2.h), else NULL */
    ztd_fdslot fds;                        /* e->file in the open-file budget (open_files.h) */
    /* The sha256 of the file's bytes, valid once plain_state (atomic) is
     * ZTD_PLAIN_HASHED: a plain file's (read it with ztd_entry_plain_sha256()),
     * or a local tensor file's without a v2 identity (ztd_entry_file_sha256():
     * the Hub front's content digest; never an ETag or Repr-Digest of /v1). */
    uint8_t plain_sha256[32];
    int plain_state;

    ztd_coded_set manifest_coded; /* manifest_json in zstd and gzip, made on demand */
    /* Its safetensors view (store/st_views.h), built on the first request for
     * it, freed with the entry; borrows file. */
    struct ztd_st_view *st_view; /* atomic */
    /* The manifest's 200 answers (identity, zstd, gzip), built by the first
     * request that may share one (http/body.h: libmicrohttpd responses, opaque
     * here); destroyed with the entry by ztd_catalog_answer_free's function. */
    void *manifest_resp[1 + ZTD_CODINGS];
    /* The 200 answers to its small verified components, by name and by blob
     * URL (two per entry of digests.v): NULL until a request builds one
     * (http/body.h), followed by as many bytes that say "asked for once"; the
     * array is made on first use; destroyed with the entry, as above. */
    void **component_resp; /* atomic */
    /* A file of the upstream (upstream/upstream.h), else NULL: file is then its
     * remote model (no fd), and up_free releases both. */
    struct ztd_upstream_entry *up;
    void (*up_free)(struct ztd_upstream_entry *up);
    /* Where its bytes are (store/source.h): NULL for a local file
     * (ztd_source_local), or the upstream's. Fronts ask ztd_entry_source();
     * none asks whether the entry is local. */
    const struct ztd_source_ops *src;
    /* A virtual entry (store/view_names.h) names bytes made from other entries
     * and has no file of its own (file and error NULL, no digests, no fd):
     * the safetensors view of view_of (held; size is the view's), or a
     * directory's model.safetensors.index.json (st_index). A pin of a view
     * (ztd_entry_retain) pins view_of too. */
    struct ztd_entry *view_of;
    struct ztd_st_index *st_index;
} ztd_entry;

/* A growing array of entries (scans, virtual entries). */
typedef struct ztd_entry_vec {
    ztd_entry **v;
    size_t n, cap;
} ztd_entry_vec;
/* Append e (not retained): 0, or -1 when out of memory. */
int ztd_entry_vec_push(ztd_entry_vec *v, ztd_entry *e);

/* Is e a safetensors view its file cannot have (an object safetensors cannot
 * express)? /v1/files lists it with status error; the S3 and Hugging Face
 * fronts do not list it. */
bool ztd_entry_view_refused(const ztd_entry *e);

static inline bool ztd_entry_is_plain(const ztd_entry *e)
{
    return e->kind == ZTD_ENTRY_PLAIN;
}
/* Can the entry be served: a tensor file with its model, or a plain file that opened? */
static inline bool ztd_entry_ok(const ztd_entry *e)
{
    return e->kind == ZTD_ENTRY_PLAIN ? e->error == NULL : e->file != NULL;
}
/* The fd of the entry's bytes (a tensor file's or a plain file's) while it
 * is pinned (ztd_entry_retain); -1 when it has none. */
int ztd_entry_fd(const ztd_entry *e);
/* A plain file's sha256, once the background verifier has hashed every byte
 * and while the file has not been written in place since (one fstat, like
 * a component's verified state); else NULL (a tensor file: always NULL).
 * Call with the entry pinned. */
const uint8_t *ztd_entry_plain_sha256(const ztd_entry *e);
/* The same from the verifier's record alone, without looking at the file
 * (the listing, which pins nothing). */
const uint8_t *ztd_entry_plain_sha256_known(const ztd_entry *e);
/* The verifier's verdict on a file hashed whole (ztd_entry_wants_file_hash):
 * its sha256 (sha non-NULL), or unreadable (sha NULL). Once per entry; the
 * listing shows a plain file's from then on. */
void ztd_entry_plain_hashed(ztd_entry *e, const uint8_t *sha);
/* Does the background verifier hash e whole: a plain file, or a local tensor
 * file that has no zTensor v2 identity (1.x, safetensors, Ollama, ALT), not
 * hashed yet? Virtual and upstream entries never. */
bool ztd_entry_wants_file_hash(const ztd_entry *e);
/* The sha256 of e's bytes (plain or tensor file) once hashed whole and while
 * e is not marked stale; else NULL. From the verifier's record, without
 * looking at the file: a file written in place is a new entry after the
 * rescan its change triggers (serving paths check with ztd_entry_unchanged). */
const uint8_t *ztd_entry_file_sha256(const ztd_entry *e);
/* A directory's model.safetensors.index.json (zt_st_index_json): its bytes,
 * and the entries whose views it names (held), by which a rescan that finds
 * the same entries keeps it. */
typedef struct ztd_st_index {
    char *json; /* zt_free */
    size_t len;
    struct ztd_entry **members;
    size_t nmembers;
} ztd_st_index;

/* Is e a virtual entry (a view or an index)? */
static inline bool ztd_entry_virtual(const ztd_entry *e)
{
    return e->view_of || e->st_index;
}

/* A component found by its sha256 digest. */
typedef struct ztd_blob {
    uint8_t sha256[32];
    ztd_entry *entry;
    const zt_object *object;
    const zt_component *component;
    ztd_digest_check *check; /* in entry->digests */
} ztd_blob;

typedef struct ztd_snapshot {
    int refs;            /* atomic */
    ztd_entry **entries; /* sorted by name */
    size_t n, nvalid;
    ztd_blob *blobs; /* open addressing on the first 8 bytes of sha256; several
                        components may claim one digest (up to ZTD_BLOB_CLAIMS) */
    size_t blob_cap, nblobs;
    size_t nv2, nretry; /* entries with v2 shards state (e->v2), and to retry */
    size_t nvirtual;    /* virtual entries (views, indexes): neither valid nor invalid files */
    char *list_json;    /* GET /v1/files body: ztd_snapshot_list_json() makes it on first use */
    size_t list_json_len;
    unsigned long list_mismatches; /* ztd_digest_mismatches_seen() when list_json was made */
    unsigned long list_hashes;     /* plain files hashed (process-wide) when it was made */
    pthread_mutex_t list_mu;
    uint64_t generation;
} ztd_snapshot;

typedef struct ztd_catalog ztd_catalog;

typedef struct ztd_catalog_stats {
    uint64_t reloads; /* completed scans */
    size_t files_valid, files_invalid;
    size_t files_retry; /* of the invalid: failures that may pass (see ztd_entry.retry) */
    size_t dirs_retry;  /* directories unreadable for want of fds or memory (entries kept) */
} ztd_catalog_stats;

/* Most components indexed under one digest: the blob route picks a verified
 * one, so a file that lies about a digest cannot hide the true bytes. */
#define ZTD_BLOB_CLAIMS 8

ztd_catalog *ztd_catalog_new(const char *root, uint64_t max_manifest_size);
void ztd_catalog_free(ztd_catalog *c);
/* Most files with an open fd at once (ZTD_CATALOG_MAX_OPEN until set); see open_files.h. */
#define ZTD_CATALOG_MAX_OPEN 4096
void ztd_catalog_set_max_open(ztd_catalog *c, size_t max);
void ztd_catalog_fd_stats(ztd_catalog *c, ztd_fdcache_stats *out);
/* Glob patterns (fnmatch(3), no flags: '*' also matches '/') of relative
 * paths not to serve: a file is left out when a pattern matches its path or
 * the path of one of its directories. Given before the first scan; the
 * patterns are copied. 0, or -1 when out of memory. */
int ztd_catalog_set_exclude(ztd_catalog *c, const char *const *patterns, size_t n);
/* Would the patterns leave rel out (rel or one of its directories)? */
bool ztd_catalog_excluded(const ztd_catalog *c, const char *rel);
/* Who adds the virtual entries (store/view_names.h) to a new snapshot, set
 * once before the first scan (main.c): none when unset. The function gets
 * the new snapshot's entries (*v, *n of *cap, sorted by name, each held by
 * the array), the previous snapshot (NULL at first) to keep unchanged
 * virtual entries from, and dir: NULL after a scan (every directory's virtual
 * entries are made), else the one directory ("" for the root) whose virtual
 * entries an update makes again (the others are the old ones, in *v). It
 * leaves *v sorted; -1 when out of memory (*v then holds only real entries
 * of dir's, and may lack views). Given by pointer so that the catalog calls
 * no module above it. */
typedef int ztd_catalog_virtuals_fn(ztd_entry ***v, size_t *n, size_t *cap, const ztd_snapshot *old,
                                    const char *dir);
void ztd_catalog_set_virtuals(ztd_catalog *c, ztd_catalog_virtuals_fn *fn);
/* A snapshot's reference to an entry (not a pin: see ztd_entry_retain), and
 * its release, for whoever builds snapshot arrays (the virtuals function). */
void ztd_entry_ref(ztd_entry *e);
void ztd_entry_unref(ztd_entry *e);
/* Scan the root and swap in the new view. Returns 0, or -1 if the root cannot be read. */
int ztd_catalog_rescan(ztd_catalog *c);
/* After a write to ROOT/rel: a new snapshot with rel's entry made again (added,
 * replaced, or dropped when no file a scan would serve is there), every other
 * entry carried as it is. Not a reload: what else changed on disk waits for
 * the next scan. verified: every digest of the file was just checked by the
 * server (an upload verified before publishing): if rel is still the file it
 * describes (device, inode, size, mtime), its digests count as verified without
 * being hashed again. 0, or -1 when out of memory (the current snapshot stays). */
int ztd_catalog_update(ztd_catalog *c, const char *rel, const struct stat *verified);
bool ztd_catalog_ready(ztd_catalog *c);
void ztd_catalog_get_stats(ztd_catalog *c, ztd_catalog_stats *out);
const char *ztd_catalog_root(const ztd_catalog *c);

/* The generation of the current snapshot (0 before the first scan). */
uint64_t ztd_catalog_generation(ztd_catalog *c);
/* Block until the generation differs from `seen`, or *stop is set (and
 * ztd_catalog_wake() called). Returns the current generation. */
uint64_t ztd_catalog_wait_change(ztd_catalog *c, uint64_t seen, const bool *stop);
void ztd_catalog_wake(ztd_catalog *c);
/* Components of the current snapshot's files in each digest state. */
void ztd_catalog_digest_counts(ztd_catalog *c, size_t out[ZTD_DIGEST_STATES]);
/* Local files hashed whole by the background verifier (plain files, and tensor
 * files without a v2 identity), by ZTD_PLAIN_* state: pending, hashed,
 * unreadable. */
void ztd_catalog_file_hash_counts(ztd_catalog *c, size_t out[3]);

/* Pin the current snapshot; release with ztd_snapshot_release(). NULL before the first scan. */
ztd_snapshot *ztd_catalog_acquire(ztd_catalog *c);
void ztd_snapshot_release(ztd_snapshot *s);
ztd_entry *ztd_snapshot_find(const ztd_snapshot *s, const char *name, size_t len);
/* Where name (len bytes) is, or would go, in s's entries (sorted by name). */
size_t ztd_snapshot_lower_bound(const ztd_snapshot *s, const char *name, size_t len);
/* The unpaged listing's body (GET /v1/files), made once per snapshot when first
 * asked for, not by every update: with 100,000 files it is megabytes of JSON.
 * Made again when the verifier has found a mismatch since (a file's status
 * became "corrupt"). A malloc'ed copy for the caller; NULL when out of memory. */
char *ztd_snapshot_list_json(ztd_snapshot *s, size_t *len);
/* The component to answer for a digest: a verified one if any, else one not
 * checked yet, else one found not to match (the caller must not serve its
 * bytes under the digest's name). NULL when no component claims it. */
const ztd_blob *ztd_snapshot_find_blob(const ztd_snapshot *s, const uint8_t sha256[32]);

/* A reference that pins the entry's file open (see above): its fd and bytes
 * are there until the matching release. When the file cannot be opened again
 * (no fd left, or it was replaced: then the entry is marked stale), its data
 * calls fail (zt_file_fd() -1) and the caller answers an error. */
void ztd_entry_retain(ztd_entry *e);
void ztd_entry_release(ztd_entry *e);
/* f's manifest as compact JSON ending with a newline (as every JSON body the
 * server sends), malloc'ed, *len its length; NULL with err when it cannot be
 * made. What ztd_entry.manifest_json holds, local or upstream. */
char *ztd_manifest_json_line(const zt_file *f, size_t *len, zt_error *err);
/* The file's manifest as compact JSON, made on first use and kept with the
 * entry; *len its length. NULL for an invalid file or out of memory. */
const char *ztd_entry_manifest_json(ztd_entry *e, size_t *len);
/* Where the shared 200 answer to component c (which has a sha256 digest) by
 * name (blob false) or by blob URL is kept, and in *asked its "asked for once"
 * flag (http/body.h: the first request that could take the answer is answered
 * alone). NULL when c has no digest, when none is built and make (room for a
 * new one) is false, or when memory ran out. */
void **ztd_entry_component_slot(ztd_entry *e, const zt_component *c, bool blob, bool make,
                                uint8_t **asked);
/* How the shared answers an entry holds (manifest_resp, component_resp) are
 * destroyed with it: the HTTP layer's function, given once at start-up before
 * any answer is built. Keeps store/ free of the HTTP library's types. */
void ztd_catalog_answer_free(void (*destroy)(void *answer));

/* Does the open file still have the size, mtime and ctime it was opened with?
 * False after an in-place write even with its mtime put back: what was
 * verified is then no longer known. (Stricter than ztd_entry_changed, which
 * must not abort downloads of a file replaced by rename: that changes the old
 * inode's ctime.) */
bool ztd_entry_unchanged(const ztd_entry *e);
/* Has e's file changed in place (size or mtime) since the catalog opened it?
 * Marks the entry stale when so: its bytes no longer match its validators, nor
 * what was verified of them. */
bool ztd_entry_changed(ztd_entry *e);
/* The mark alone, without looking at the file. */
bool ztd_entry_stale(const ztd_entry *e);

/* "\"<32 hex>\"": a strong validator from file identity plus a byte span. */
void ztd_identity_etag(const ztd_entry *e, uint64_t off, uint64_t len, char out[40]);

/* The file ETag of a file with this stat (as entries compute it). */
void ztd_stat_etag(const struct stat *sb, char out[40]);

/* One file's object in the listing (GET /v1/files); a new reference. */
struct json_t;
struct json_t *ztd_entry_json(const ztd_entry *e);

/* Is NAME (a file name, no directory) a tensor file name (a served
 * extension, not hidden)? Every other name that is not hidden is a plain
 * file's. */
bool ztd_catalog_is_served_name(const char *name);

#endif
