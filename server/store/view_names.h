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

#endif
