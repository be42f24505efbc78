/*
 * The upstream store (--upstream): files of another ztensord, or of a plain
 * HTTP server of .zt and .safetensors files, made to look like catalog
 * entries, with their bytes fetched into the cache (upstream/items.h).
 *
 * A name the local catalog does not hold is asked of the upstream: the file
 * is opened once with libztensor-remote (footer and manifest, its validator
 * pinned; concurrent first requests wait for the one open), and becomes a
 * ztd_entry whose `up` holds the remote file. The entry is kept in a table
 * bounded by count and by bytes (upstream_entries_memory) for upstream_ttl,
 * then revalidated by a HEAD with the pinned validator (If-None-Match; no
 * body): unchanged (304) keeps the entry; a changed validator (or a fill that
 * saw the file change) opens it again, and another version makes a new entry
 * (responses pinned to the old one finish with the old one's bytes); a 404
 * drops it; an upstream that cannot be reached leaves it served as it is
 * (upstream_stale). A 404 is remembered for upstream_negative_ttl: requests
 * for that name are answered 404 without asking the upstream meanwhile.
 *
 * A component's bytes are a cache item: keyed by its sha256 when it has one,
 * else by (URL, validator, object, component). The first request for it
 * starts one fill, on the store's own threads: the component's stored bytes
 * are streamed from upstream into the item in order while they are hashed,
 * and the item is marked complete only once the manifest's digest matched
 * (a component without a digest: once all its bytes came). An answer names
 * the bytes by the digest (ETag, Repr-Digest, immutable) only when no
 * unchecked byte can leave: the item is complete, or it is at most
 * upstream_verify_first bytes and the answer waits for the check; a larger
 * item is streamed while it fills with a weak ETag and no digest claim
 * (upstream/source.c).
 *
 * The bytes of the file between components (header, padding, manifest,
 * footer) are fetched once per entry, when /raw first needs them, and kept
 * in memory.
 */
#ifndef ZTD_UPSTREAM_H
#define ZTD_UPSTREAM_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/errors.h"
#include "upstream/items.h"
#include "store/catalog.h"

struct ztd_config;
typedef struct ztd_upstream ztd_upstream;

/* What the store counts, for /metrics. */
typedef struct ztd_upstream_stats {
    uint64_t opens;         /* files opened (or reopened when changed) from upstream */
    uint64_t open_failures; /* opens that failed (404 included) */
    uint64_t fills;         /* fills started */
    uint64_t fill_failures; /* fills that failed: upstream, digest or disk */
    uint64_t digest_failures;
    uint64_t bytes;   /* bytes received from upstream by fills and gap reads */
    uint64_t errors;  /* upstream requests that failed (network, HTTP, timeout) */
    uint64_t entries; /* upstream files in the table */
    uint64_t fills_running;
    uint64_t entries_bytes;   /* what the table's entries are estimated to cost */
    uint64_t entry_evictions; /* entries dropped to keep within upstream_entries_memory */
    uint64_t revalidations;   /* files (roots and shards) asked after upstream_ttl by a HEAD */
    uint64_t revalidations_unchanged; /* of which answered "the version opened" */
} ztd_upstream_stats;

/* The store for cfg->upstream, with its cache in cfg->cache_dir. NULL (logged,
 * reason in err) when the cache cannot be opened or the kind not told. */
struct ztd_source_ops;
/* src: its entries' source, ztd_source_upstream (given, not named here, so
 * that the table's file and the entries' do not call each other). */
ztd_upstream *ztd_upstream_new(const struct ztd_config *cfg, const struct ztd_source_ops *src,
                               char *err, size_t cap);
/* Waits for running fills to end. Accepts NULL. */
void ztd_upstream_free(ztd_upstream *u);

const char *ztd_upstream_url(const ztd_upstream *u);
/* Is upstream another ztensord (it has a listing and blob URLs)? */
bool ztd_upstream_is_ztensord(const ztd_upstream *u);
ztd_cache *ztd_upstream_cache(ztd_upstream *u);
/* With upstream_kind auto: ask the upstream what it is, unless known (blocks). */
void ztd_upstream_tell_kind(ztd_upstream *u);
bool ztd_upstream_kind_known(const ztd_upstream *u);
/* A ztensord upstream's listing (upstream/origin_listing.h); NULL for a plain
 * upstream, or while the kind is not known. */
struct ztd_uplist *ztd_upstream_listing(ztd_upstream *u);
/* An S3 store's objects (`--upstream s3://`) and their safetensors views
 * (upstream/store_listing.h, store_views.h); NULL for other upstreams. */
struct ztd_uplist *ztd_upstream_store_listing(ztd_upstream *u);
/* The listing of the upstream's files, views included, that the fronts list
 * and resolve a view's name with: the S3 store's, or a ztensord upstream's;
 * NULL for a plain upstream, or while the kind is not known. */
struct ztd_uplist *ztd_upstream_file_listing(ztd_upstream *u);
void ztd_upstream_get_stats(ztd_upstream *u, ztd_upstream_stats *out);

/* GET BASE{path} (path starts with '/', already encoded) on a ztensord
 * upstream, with its token and timeouts: blocks. ZTD_ERR_NONE with *status
 * the HTTP status and *out the body as JSON (a new reference; NULL when the
 * body was empty), or the error (UPSTREAM_FAILED, UPSTREAM_TIMEOUT: no answer,
 * or a body that is not JSON or longer than max) with msg. origin_get.c. */
ztd_err ztd_upstream_get_json(ztd_upstream *u, const char *path, size_t max, json_t **out,
                              int *status, char *msg, size_t cap);

/* ---- files */

/* The entry of upstream file `name`, a new reference, when the table holds it
 * and its TTL has not run out; else NULL. Never blocks on the network. */
ztd_entry *ztd_upstream_peek(ztd_upstream *u, const char *name);
/* The same, opening or revalidating it first as needed: blocks (run it off
 * libmicrohttpd's threads). ZTD_ERR_NONE with *out set (a new reference), or
 * the error to answer (FILE_NOT_FOUND, FILE_INVALID, UPSTREAM_FAILED,
 * UPSTREAM_TIMEOUT, OVERLOADED when upstream_entries_memory is held by files
 * in use, ...) with a message naming the upstream in msg. */
ztd_err ztd_upstream_get(ztd_upstream *u, const char *name, ztd_entry **out, char *msg, size_t cap);
/* FILE_NOT_FOUND (its message in msg) when the upstream answered 404 for
 * name within upstream_negative_ttl, else ZTD_ERR_NONE. Never blocks on the
 * network: a known miss is answered without a wait. */
ztd_err ztd_upstream_known_missing(ztd_upstream *u, const char *name, char *msg, size_t cap);

/* Entries the upstream's fronts are answered from without asking it (an S3
 * store's model indexes: upstream/store_index.h): fn(ctx, name, fetch) gives
 * name's entry (pinned: ztd_entry_release) or NULL (asked of the upstream);
 * fetch false from what is at hand (never blocks), true after fetching what
 * it needs (blocks). Set once, before the upstream is used; ctx_free(ctx)
 * with the upstream. */
typedef ztd_entry *ztd_upstream_made_fn(void *ctx, const char *name, bool fetch);
void ztd_upstream_set_made(ztd_upstream *u, ztd_upstream_made_fn *fn, void *ctx,
                           void (*ctx_free)(void *));
/* The ctx given to ztd_upstream_set_made with fn, or NULL. */
void *ztd_upstream_made_ctx(const ztd_upstream *u, ztd_upstream_made_fn *fn);

/* ---- component bytes */

/* The cache item of component c of upstream entry e, with a reference,
 * starting its fill when nobody has: never blocks on the network. *out is set
 * on ZTD_ERR_NONE (the item may still be filling). */
ztd_err ztd_upstream_item(ztd_upstream *u, ztd_entry *e, const zt_component *c,
                          ztd_cache_item **out, char *msg, size_t cap);
/* The same for the whole of plain file e (ztd_entry_is_plain): one item,
 * keyed by the sha256 the origin gave (ztd_entry_plain_sha256_known) and
 * complete only once the bytes hash to it; with none, keyed by the file's
 * URL and validator and complete once every byte came. */
ztd_err ztd_upstream_plain_item(ztd_upstream *u, ztd_entry *e, ztd_cache_item **out, char *msg,
                                size_t cap);
/* Is c's item complete, its digest checked? Never starts a fill. */
bool ztd_upstream_item_complete(ztd_upstream *u, const ztd_entry *e, const zt_component *c);
/* Why the last fill of an item of e failed (the error and its message), for
 * an answer that has not started yet. ZTD_ERR_NONE when none is known. */
ztd_err ztd_upstream_fill_error(ztd_entry *e, char *msg, size_t cap);
/* Has c bytes the cache can fetch (not in a v2 shard that could not be opened)? */
bool ztd_upstream_part_servable(const ztd_entry *e, const zt_component *c);

/* ---- the whole file (/raw) */

/* One piece of an upstream file's bytes, in file order: a component's stored
 * bytes (comp set; its item comes from ztd_upstream_item) or bytes between
 * components, in memory (mem). */
typedef struct ztd_upstream_seg {
    uint64_t at, len;
    const zt_component *comp;
    const uint8_t *mem;
} ztd_upstream_seg;
/* The file's segments, fetching the bytes between components first when
 * they are not in memory yet: blocks (off the workers). ZTD_ERR_NONE with
 * *segs (owned by e) and *n set. */
ztd_err ztd_upstream_segments(ztd_upstream *u, ztd_entry *e, const ztd_upstream_seg **segs,
                              size_t *n, char *msg, size_t cap);
/* The segments when they are ready, without blocking; false otherwise. */
bool ztd_upstream_segments_ready(ztd_entry *e, const ztd_upstream_seg **segs, size_t *n);

/* ---- blobs */

/* A known upstream entry with a component of this sha256 (a new reference to
 * the entry; *comp set), or NULL. */
ztd_entry *ztd_upstream_find_blob(ztd_upstream *u, const uint8_t sha256[32],
                                  const zt_component **comp);
/* The component of e with this sha256, or false. */
bool ztd_upstream_find_blob_in(const ztd_entry *e, const uint8_t sha256[32],
                               const zt_component **comp);

/* An upstream file's source (store/source.h, upstream/source.c): cache
 * items, filled on first use; waits for a fill's first byte, a whole item,
 * room in the cache or the bytes between components. */
extern const struct ztd_source_ops ztd_source_upstream;

/* The zTensor identity (zt_file_identity) of upstream entry e, made from its
 * manifest, its footer and the bytes between its components (fetched once, as
 * its /raw needs them: ztd_upstream_segments), never from its blobs; kept with
 * the entry. Blocks. ZTD_ERR_NONE with *defined false when e has none (not a
 * v2 file, an encoded part, a non-zero byte outside the blobs), else with the
 * identity in out; or the error of fetching those bytes (FILE_CHANGED when
 * the file changed meanwhile). upstream/identity.c. */
ztd_err ztd_upstream_identity(ztd_upstream *u, ztd_entry *e, uint8_t out[32], bool *defined,
                              char *msg, size_t cap);
/* "\"<32 hex>\"" for an upstream file whose validator (its ETag, else its
 * Last-Modified) is this: the entry's file_etag, and so the /raw ETag of a
 * file without a v2 identity (entries.c). */
void ztd_upstream_file_etag_of(const char *validator, char out[40]);

/* "\"<32 hex>\"": the validator of a span of an upstream entry's file whose
 * bytes have no sha256 to name them (from the file's ETag and the span). */
void ztd_upstream_span_etag(const ztd_entry *e, uint64_t off, uint64_t len, char out[40]);

#endif
