/*
 * The virtual entries of a catalog snapshot (catalog.h): the names under
 * which the safetensors views are listed and served, so that a client that
 * lists and downloads files gets a model it can load.
 *
 *  - Beside every tensor file STEM.zt or STEM.alt that opens, STEM.safetensors
 *    in the same directory: its safetensors view (store/st_views.h). Not for
 *    .safetensors files, which are their own view, nor for v2 data shards,
 *    whose bytes are in their root's view. When a real file has the name, the
 *    real file wins and the clash is logged (once per scan). A view that
 *    safetensors cannot express is listed all the same, with status "error"
 *    (view_unsupported, naming the object), and answers 422.
 *  - In a directory whose tensor files form one model (two or more files with
 *    views or of their own safetensors, or a v2 root with shards),
 *    model.safetensors.index.json (zt_st_index_json: what transformers and
 *    vLLM read), unless a real file has that name. No index (logged) when two
 *    files hold one tensor name, or a file of the directory has no view.
 *
 * The view's layout is built here, at scan time, once per file version: it
 * is kept with the viewed entry, which later scans carry. Entries whose
 * target is unchanged are taken from the previous snapshot as they are.
 */
#ifndef ZTD_VIEW_NAMES_H
#define ZTD_VIEW_NAMES_H

#include "store/catalog.h"

/* "model.safetensors.index.json" */
#define ZTD_ST_INDEX_NAME "model.safetensors.index.json"

/* A ztd_catalog_virtuals_fn (catalog.h): given to ztd_catalog_set_virtuals(). */
ztd_catalog_virtuals_fn ztd_view_names_add;

/* "dir/STEM.safetensors" for "dir/STEM.zt" or "dir/STEM.alt" (malloc'ed): the
 * name of its view; NULL for other names (or out of memory). */
char *ztd_view_name(const char *name);
/* The view of tensor entry t as the virtual entry a listing shows beside t,
 * t held, its layout built (or refused: ztd_entry_view_refused), for files
 * listed outside a snapshot (an S3 store's: upstream/store_views.h). NULL
 * when t has no view (another name, safetensors, a v2 data shard, a file
 * that did not open) or out of memory. */
ztd_entry *ztd_view_entry_new(ztd_entry *t);

/* ---- a directory's index, step by step (for files listed outside a
 * snapshot: an S3 store's, upstream/store_index.h) */

struct ztd_st_view;
/* Is tensor entry t a member of its directory's model? 1 with *sv its view
 * (built and kept with t; NULL when t is safetensors, its own view), 0 when
 * it has no view (not opened, a v2 data shard, another kind), -1 out of
 * memory. A member whose view is refused (*sv)->err leaves the directory
 * without an index. */
int ztd_st_index_member(ztd_entry *t, const struct ztd_st_view **sv);
/* The index JSON of directory dir's model: members[i] (sorted by name) with
 * view sv[i] as ztd_st_index_member gave it; NULL (logged, naming the
 * directory) when it has none (two members hold one tensor name) or out of
 * memory. zt_free() it. */
char *ztd_st_index_json_of(const char *dir, ztd_entry *const *members,
                           const struct ztd_st_view *const *sv, size_t n);
/* The index's virtual entry named name (taken) of bytes json (taken): size,
 * ETag "idx-<32 hex of the JSON's sha256>", the newest member's time; the
 * members held when hold (a snapshot's, which a rescan compares), else not
 * kept. NULL when out of memory (both freed). n >= 1. */
ztd_entry *ztd_st_index_entry_new(char *name, char *json, ztd_entry *const *members, size_t n,
                                  bool hold);

#endif
