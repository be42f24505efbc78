/*
 * What kind of server the upstream is, and the listing of a ztensord upstream (GET BASE/v1/files,
 * every file), kept for upstream_ttl and then revalidated with If-None-Match on its ETag. A plain
 * upstream has none. Thread safety: every function may be called from any thread; one fetch at a
 * time, the other callers wait for it.
 */
#ifndef ZTD_UPSTREAM_ORIGIN_LISTING_H
#define ZTD_UPSTREAM_ORIGIN_LISTING_H

#include <jansson.h>
#include <stdint.h>

#include "core/errors.h"

struct zt_remote_options;

/* ZTD_UPSTREAM_ZTENSORD when BASE/v1/files?limit=1 answers 200 with a JSON
 * listing, ZTD_UPSTREAM_PLAIN when it answers anything else, and
 * ZTD_UPSTREAM_AUTO when it cannot be reached. token may be NULL. Blocking. */
int ztd_upstream_probe(const char *base, const char *token, double connect_timeout, double timeout);

typedef struct ztd_uplist ztd_uplist;

/* token may be NULL; timeouts in seconds. NULL when out of memory. */
ztd_uplist *ztd_uplist_new(const char *base, const char *token, double connect_timeout,
                           double timeout, uint64_t ttl_ms);
/* An S3 store's listing (upstream/store_listing.h) kept and served the same
 * way, fetched whole again after ttl (no validator). opt is borrowed: it
 * outlives l. */
ztd_uplist *ztd_uplist_new_store(const struct zt_remote_options *opt, const char *s3url,
                                 uint64_t ttl_ms);
void ztd_uplist_free(ztd_uplist *l);
/* What completes an S3 store's listing each time it is fetched (its views:
 * upstream/store_views.h): appends listing objects to files (an array sorted
 * by name; it is sorted again after), blocking is allowed. 0, or -1 when out
 * of memory. */
typedef int ztd_uplist_more_fn(void *ctx, json_t *files);
/* Set once, before l is first used. */
void ztd_uplist_set_more(ztd_uplist *l, ztd_uplist_more_fn *fn, void *ctx);

/* The files (a JSON array of listing objects, sorted by name; a new
 * reference) when fetched less than ttl ago, else NULL. Never blocks on the
 * network. */
json_t *ztd_uplist_peek(ztd_uplist *l);
/* The object named `name` in files (a listing's array, sorted by name;
 * borrowed from it), or NULL. */
json_t *ztd_uplist_find(const json_t *files, const char *name);
/* When files (a listing's array, sorted by name) lists `name` as a
 * safetensors view ("view_of": the file it is made from, store/view_names.h),
 * that file's name, malloc'ed; else NULL. */
char *ztd_uplist_view_of(const json_t *files, const char *name);
/* The same from listing l (a ztensord upstream's or an S3 store's), fetched if need be
 * (blocking); NULL for a plain upstream, or when the listing cannot be had. */
char *ztd_uplist_view_of_fetched(ztd_uplist *l, const char *name);
/* The same, fetching or revalidating first as needed: blocks. An upstream
 * that cannot be reached leaves the last listing served (checked again
 * after ttl); with none yet, the error (UPSTREAM_FAILED, UPSTREAM_TIMEOUT)
 * with a message naming the upstream. */
ztd_err ztd_uplist_get(ztd_uplist *l, json_t **out, char *msg, size_t cap);

#endif
