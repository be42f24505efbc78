/*
 * The upstream cache's store: bytes fetched from an upstream, kept on disk
 * under a key, bounded in size, shared by every request that wants them.
 *
 * An item is one upstream component (stored bytes, exactly as the upstream's
 * file holds them). Its key is the component's sha256 digest when the
 * manifest gives one (so the same tensor in two files, or two versions of a
 * model, is stored and fetched once), else a hash of (file URL, file
 * validator, object, component) made by the caller.
 *
 * Layout under the cache directory (see docs/internals/cache.md):
 *   blobs/sha256/<2 hex>/<64 hex>   items keyed by a component's digest
 *   parts/<2 hex>/<64 hex>          items keyed by file, validator and name
 *   tmp/                            fills in progress (emptied at open)
 * A file under blobs/ or parts/ got there by rename after its digest matched
 * and it was fsynced. Opening the cache rebuilds the index from those two
 * trees, removes tmp/ leftovers and files whose name is not a key, and evicts
 * down to the size limit. What was on disk while no process held the cache
 * is not trusted (a file planted there, bit rot): an item found at open is
 * UNCHECKED until its bytes are hashed again. The first acquire of such an
 * item gets ZTD_CACHE_CHECK: the caller re-hashes the file (off the workers)
 * and calls ztd_cache_check_done(); meanwhile the item is FILLING with no
 * byte ready, so nobody reads it. So an item that is COMPLETE is complete
 * and checked, in this process: its bytes matched its digest (or, for an
 * item without one, all its bytes came) since the cache was opened.
 *
 * Single flight: ztd_cache_acquire() on a key nobody holds makes the caller
 * the item's filler; everyone else who acquires it meanwhile gets the same
 * item and reads the bytes as they land (ztd_cache_wait + pread on the fd).
 * The filler appends with ztd_cache_write() and ends with
 * ztd_cache_fill_done(): on success the file is fsynced and renamed into
 * place (the fd stays valid), on failure waiters see ZTD_CACHE_FAILED and the
 * item is dropped, so the next acquire fetches again.
 *
 * Bounded: the sum of the sizes of items (complete and filling) stays within
 * max_bytes. To make room, acquire evicts least recently used complete items
 * that nobody holds; an item held by a reference (a response still sending
 * it) is never evicted. When no room can be made, acquire fails with
 * ZTD_CACHE_FULL.
 *
 * Thread safety: every function may be called from any thread.
 */
#ifndef ZTD_UPSTREAM_ITEMS_H
#define ZTD_UPSTREAM_ITEMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ztd_cache ztd_cache;
typedef struct ztd_cache_item ztd_cache_item;

typedef enum ztd_cache_kind {
    ZTD_CACHE_BLOB = 1, /* id = the component's sha256 digest */
    ZTD_CACHE_PART = 2, /* id = sha256 of the caller's (url, validator, object, component) */
} ztd_cache_kind;

typedef struct ztd_cache_key {
    ztd_cache_kind kind;
    uint8_t id[32];
} ztd_cache_key;

typedef enum ztd_cache_state {
    ZTD_CACHE_COMPLETE = 0, /* every byte is in the file and checked */
    ZTD_CACHE_FILLING = 1,  /* someone is fetching it; bytes [0, ready) are in the file */
    ZTD_CACHE_FILL = 2,     /* the caller must fetch it (it is the filler) */
    ZTD_CACHE_FAILED = 3,   /* the fill failed (upstream, digest, disk); item dropped */
    ZTD_CACHE_FULL = 4,     /* no room: everything evictable is held */
    ZTD_CACHE_IOERR = 5,    /* the cache directory failed (errno in *err_no) */
    ZTD_CACHE_CHECK = 6,    /* the caller must re-hash it (found at open), then check_done */
} ztd_cache_state;

typedef struct ztd_cache_stats {
    uint64_t bytes;     /* sum of item sizes, complete and filling */
    uint64_t max_bytes; /* the limit */
    uint64_t items;     /* complete items */
    uint64_t filling;   /* fills in progress */
    uint64_t hits;      /* acquires (and lookups) that found a complete item */
    uint64_t waits;     /* acquires that joined a fill in progress */
    uint64_t misses;    /* acquires that started a fill */
    uint64_t evictions; /* items removed to make room */
    uint64_t evicted_bytes;
    uint64_t fill_failures;  /* fills ended with ok = false */
    uint64_t filled_bytes;   /* bytes written by fills that completed */
    uint64_t checks;         /* items found at open, re-hashed before their first use */
    uint64_t check_failures; /* of those, the ones whose bytes did not match: fetched again */
} ztd_cache_stats;

/* Open (creating if needed, mode 0700) the cache in dir, rebuild its index
 * and evict down to max_bytes. NULL on failure with errno set and a message
 * naming the path in err (may be NULL). */
ztd_cache *ztd_cache_open(const char *dir, uint64_t max_bytes, char *err, size_t err_cap);
/* Free the index; items still referenced must be released first. Files stay. */
void ztd_cache_close(ztd_cache *c);

/* Get or start the item for key, of `size` stored bytes, with a reference.
 * Returns the state; *out is set (with a reference) for COMPLETE, FILLING,
 * FILL and CHECK, else NULL. A key already held with another size is FAILED, unless
 * it is a complete item nobody holds: that file is stale, it goes and the
 * caller fills the key again (FILL). IOERR also when a fill file cannot be
 * created. */
ztd_cache_state ztd_cache_acquire(ztd_cache *c, const ztd_cache_key *key, uint64_t size,
                                  ztd_cache_item **out, int *err_no);
/* A complete item only, or NULL (no fill or check is started: an item not
 * yet checked since open is NULL). */
ztd_cache_item *ztd_cache_lookup(ztd_cache *c, const ztd_cache_key *key);
/* Is the key's item complete (checked)? Takes nothing, opens nothing. */
bool ztd_cache_is_complete(ztd_cache *c, const ztd_cache_key *key);
void ztd_cache_item_retain(ztd_cache_item *it);
void ztd_cache_item_release(ztd_cache_item *it);

/* The item's file, open for reading, valid while a reference is held. */
int ztd_cache_item_fd(const ztd_cache_item *it);
uint64_t ztd_cache_item_size(const ztd_cache_item *it);

/* Filler only: append bytes (in order). 0, or -1 with errno (ENOSPC ...):
 * then call ztd_cache_fill_done(it, false). */
int ztd_cache_write(ztd_cache_item *it, const void *buf, size_t len);
/* Filler only: end the fill. ok: the bytes were checked against the
 * manifest's digest (or the item has none and all `size` bytes came). On ok
 * the file is fsynced and renamed into place (COMPLETE); on !ok, or when that
 * fails, the item becomes FAILED and its file is removed. Wakes every waiter.
 * Returns the final state. The filler keeps its reference. */
ztd_cache_state ztd_cache_fill_done(ztd_cache_item *it, bool ok);

/* The checker only (ZTD_CACHE_CHECK): ok, the file's bytes match the key's
 * digest (or the item has none): COMPLETE, every waiter wakes. !ok: the file
 * is removed and the item becomes a fill of the same key, the caller its
 * filler (FILL: fetch the bytes, ztd_cache_write, ztd_cache_fill_done);
 * FAILED when no fill file can be made. The caller keeps its reference. */
ztd_cache_state ztd_cache_check_done(ztd_cache_item *it, bool ok);

/* Wait until at least `want` bytes are readable, the fill ends, or
 * timeout_ms passes. Returns the state (COMPLETE, FILLING on timeout, or
 * FAILED) and the bytes readable now in *ready. FILLING with *ready == size
 * means every byte is in but not yet checked: a response must hold back its
 * last byte until COMPLETE (so that a FAILED fill can still cut it short);
 * want = size + 1 waits for the end of the fill. */
ztd_cache_state ztd_cache_wait(ztd_cache_item *it, uint64_t want, int timeout_ms, uint64_t *ready);
/* Room: a count of the times an item stopped being referenced, read before
 * trying to take items; then wait (at most timeout_ms) until it moves past
 * `seen`, so that room may have been made: false on timeout. A condition,
 * not a poll: what waits for room sleeps until a response ends. */
uint64_t ztd_cache_room_gen(ztd_cache *c);
bool ztd_cache_wait_room(ztd_cache *c, uint64_t seen, int timeout_ms);
/* The state and readable bytes now, without waiting. */
ztd_cache_state ztd_cache_item_state(const ztd_cache_item *it, uint64_t *ready);

void ztd_cache_get_stats(ztd_cache *c, ztd_cache_stats *out);

/* The key of a component without a digest: sha256 over the parts, each
 * length-prefixed. */
void ztd_cache_part_key(ztd_cache_key *out, const char *url, const char *validator,
                        const char *object, const char *component);

#endif
