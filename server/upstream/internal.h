/*
 * What the upstream store's files share (private to entries.c, fill.c,
 * raw.c, shards.c, table.c and url.c): the store, its table of entries, and
 * each entry's state. table.c keeps the table's slots within its bounds;
 * entries.c what is in them (opening, TTL, revalidation);
 * fill.c fills components into the cache; raw.c cuts a whole file into
 * components and the gaps between them for /raw.
 */
#ifndef ZTD_UPSTREAM_INTERNAL_H
#define ZTD_UPSTREAM_INTERNAL_H

#include "core/workq.h"
#include "upstream/upstream.h"
#include "upstream/origin_listing.h"

#include <pthread.h>
#include <ztensor/ztensor_remote.h>

#define MAX_ENTRIES 4096   /* upstream files kept open at once */
#define NAME_URL_MAX 16384 /* a 4096-byte name, percent-encoded, and the base */

/* A shard of a v2 root (shards.c). */
typedef struct ztd_up_shard {
    zt_remote_file *rf; /* pinned; NULL when it could not be opened: its parts are 503 */
    char *status;       /* "ok", or why not (the manifest JSON's "status") */
} ztd_up_shard;

struct ztd_upstream_entry {
    ztd_upstream *u;
    zt_remote_file *rf;
    ztd_up_shard *shards; /* a v2 root's, opened with it; set before the entry is shared */
    size_t nshards;
    char *json;          /* the manifest JSON with its shards' state (malloc), or NULL */
    struct ztd_entry *e; /* the entry that holds this (for json) */
    char *url;           /* the file's URL as opened */
    char validator[256]; /* the pinned ETag, or Last-Modified */
    pthread_mutex_t mu;  /* the fields below */
    ztd_err fill_err;    /* the last failed fill's error */
    char fill_msg[400];
    bool segs_ready; /* atomic once set */
    ztd_upstream_seg *segs;
    size_t nsegs;
    uint8_t *gaps; /* the bytes between components */
    int identity;  /* atomic: ZTD_UP_ID_* (identity.c) */
    uint8_t id[32];
};

typedef struct slot {
    char *name;
    ztd_entry *e;     /* NULL while first opening */
    uint64_t checked; /* ztd_now_ms() of the last successful open or revalidation; 0: expired */
    bool opening;     /* someone is opening it: wait on cv, or serve e while stale */
    bool reopen;      /* a fill saw the file change: open it again, not a HEAD */
    uint64_t failed_until; /* a revalidation failed: e served (stale-if-error) until then */
    bool missing;          /* the upstream answered 404 at `checked` (upstream_negative_ttl) */
    size_t bytes;          /* what the slot and its entry cost (ztd_up_entry_bytes) */
    uint64_t used;         /* ztd_now_ms() of the last request that found it: the LRU order */
} slot;

struct ztd_upstream {
    char *base;
    int kind; /* ztd_upstream_kind; AUTO until told */
    uint64_t ttl_ms;
    ztd_cache *cache;
    zt_remote_options opt;
    char *token;
    const struct ztd_source_ops *src; /* its entries' (upstream/source.c), given by main.c */
    uint64_t stale_ms;
    uint64_t negative_ttl_ms;
    uint64_t verify_first; /* upstream_verify_first: items up to this are checked before sent */
    uint64_t timeout_ms, cache_size; /* upstream_timeout, cache_size: what waits are bounded by */
    unsigned retries;
    double open_timeout;        /* seconds: an open, retries included */
    pthread_key_t open_session; /* opens: one session per thread, no lock held across the network */
    pthread_key_t fill_session;
    ztd_workq *fills;
    ztd_uplist *list;           /* a ztensord upstream's listing */
    ztd_uplist *store_list;     /* an S3 store's objects (s3:// upstreams), else NULL */
    ztd_upstream_made_fn *made; /* entries made here (ztd_upstream_set_made), or NULL */
    void *made_ctx;
    void (*made_free)(void *);
    pthread_mutex_t mu; /* the table */
    pthread_cond_t cv;
    slot *slots;
    size_t n;
    size_t mem_used, mem_budget; /* sum of the slots' bytes; upstream_entries_memory */
    ztd_upstream_stats st;       /* atomics */
};

#define COUNT(u, f, d) __atomic_add_fetch(&(u)->st.f, (d), __ATOMIC_RELAXED)

/* The error (and message) for a failed libztensor-remote call about WHAT. */
ztd_err ztd_up_err_of_remote(const ztd_upstream *u, const char *what, const zt_error *ze, char *msg,
                             size_t cap);
/* Drops E from the table: the file changed upstream, the next request reopens it. */
void ztd_up_expire(ztd_upstream *u, const ztd_entry *e);
/* This thread's session for reads (fills and gaps); NULL when out of memory. */
zt_remote *ztd_up_thread_session(ztd_upstream *u);
/* This thread's session for opens (footer and manifest): bounded by
 * upstream_timeout, retries included; made on first use. NULL with ze set. */
zt_remote *ztd_up_open_session(ztd_upstream *u, zt_error *ze);
/* The URL of file NAME at the upstream into out; false when it does not fit. */
bool ztd_up_file_url(const ztd_upstream *u, const char *name, char *out, size_t cap);

/* ---- the table's slots (table.c), u->mu held */

/* What a slot for name holding e (NULL: none yet, or a remembered 404) costs. */
size_t ztd_up_entry_bytes(const char *name, const ztd_entry *e);
slot *ztd_up_find_slot(ztd_upstream *u, const char *name);
/* A new slot for name, dropping the least recently used one nothing holds
 * when the table is full (MAX_ENTRIES or upstream_entries_memory); NULL when
 * none can go, or out of memory. */
slot *ztd_up_new_slot(ztd_upstream *u, const char *name, uint64_t now);
void ztd_up_drop_slot(ztd_upstream *u, slot *s);
/* Room for need more bytes, dropping the least recently used slots nothing
 * holds (never the slot named keep): false when not enough can go. Slot
 * pointers are stale afterwards. */
bool ztd_up_make_room(ztd_upstream *u, size_t need, const char *keep);
/* s holds e now (the old entry released), its bytes counted again. */
void ztd_up_slot_set(ztd_upstream *u, slot *s, ztd_entry *e);

/* ---- a v2 root's shards (shards.c) */

/* Opens e's shards (a v2 root's, by Appendix B's names beside it), pins them
 * and sets the manifest JSON's shard state as the origin's says it. Blocks on
 * the network; before e is shared. ZTD_ERR_INTERNAL when out of memory (a
 * shard that fails to open is not an error: its parts are 503). */
ztd_err ztd_up_open_shards(ztd_upstream *u, ztd_entry *e, char *msg, size_t cap);
void ztd_up_shards_free(struct ztd_upstream_entry *up);
/* Revalidates e's shards (one HEAD each, in this thread's open session): ZT_OK
 * when every one is the version opened; ZT_E_CHANGED when one is not, or could
 * not be opened with the root (open the root again); else the failure, in ze. */
zt_status ztd_up_revalidate_shards(ztd_upstream *u, const ztd_entry *e, zt_error *ze);
/* Were a's and b's shards opened at the same versions? */
bool ztd_up_same_shards(const ztd_entry *a, const ztd_entry *b);
/* The remote file that holds c's stored bytes (the root's, or its shard's), or NULL. */
zt_remote_file *ztd_up_file_of(const ztd_entry *e, const zt_component *c);
/* The pinned validator of a remote file: its ETag, else its Last-Modified. */
const char *ztd_up_validator(const zt_remote_file *rf);

#endif
