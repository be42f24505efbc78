/*
 * The model indexes of an S3 store's directories (`--upstream s3://`): in a
 * directory whose tensor objects form one model, by the rule and with the
 * bytes of a local root's (store/view_names.h: two or more members, the
 * views of its .zt/.alt objects and its own .safetensors objects, or a v2
 * root with shards; none when a member's view is refused or two members
 * hold one tensor name), DIR/model.safetensors.index.json is listed with the
 * store's objects ("format": "safetensors-index", size, ETag
 * "idx-<32 hex of the JSON's sha256>") and answered from memory here, never
 * asked of the store (ztd_upstream_set_made). An object of the store with
 * that name wins it (logged). The members are the entries the listing's
 * views pass opened (upstream/store_views.c), which also opens the
 * .safetensors objects that may be members; each listing made replaces the
 * indexes.
 */
#ifndef ZTD_UPSTREAM_STORE_INDEX_H
#define ZTD_UPSTREAM_STORE_INDEX_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "store/catalog.h"

struct ztd_upstream;

/* Makes an S3 store's upstream u list and answer its indexes (no-op for
 * other upstreams). Before u is first used. */
void ztd_store_index_enable(struct ztd_upstream *u);
/* Is files[i] (a store listing's object, the array sorted by name) a
 * .safetensors object that may be a member of its directory's model (another
 * tensor object is beside it), which the listing should then open? */
bool ztd_store_index_wants(const json_t *files, size_t i);
/* Can entry e of files[i], opened for the listing, be a member of an index
 * (another tensor object is beside it, or it is a v2 root with shards)? The
 * listing holds only those until the indexes are made: they stay in use
 * (upstream_entries_memory) meanwhile. */
bool ztd_store_index_keeps(const json_t *files, size_t i, const ztd_entry *e);
/* The indexes of the first n objects of files (sorted by name), opened[i]
 * the entry of object i (NULL: not opened, or has no view), appended to
 * files and kept to be answered. 0, or -1 when out of memory. */
int ztd_store_index_add(struct ztd_upstream *u, json_t *files, ztd_entry *const *opened, size_t n);

#endif
