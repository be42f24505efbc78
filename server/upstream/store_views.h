/*
 * The safetensors views of an S3 store's tensor files, listed as a ztensord
 * lists the views of its own (store/view_names.h), so that a node-local cache
 * in front of a bucket of .zt files offers a model engines load: each object
 * STEM.zt or STEM.alt is opened through the upstream (its footer and manifest,
 * kept in the upstream's table like any file asked for; eight at a time), and STEM.safetensors
 * is listed beside it with the view's size, ETag, "format":
 * "safetensors-view" and "view_of" (ztd_view_entry_new, ztd_entry_json), or
 * with status "error" when safetensors cannot express an object. An object
 * named STEM.safetensors wins the name (logged); an object that cannot be
 * opened (not a tensor file, the store failing, upstream_entries_memory held)
 * has no view listed, as a local file that does not open has none. The view's
 * bytes are then made here from the .zt's (source_answer.c resolves the name
 * through the listing's "view_of"), never asked of the store. The entries
 * opened (and, in the same pass, each .safetensors object beside another
 * tensor object) then make the directories' model indexes (store_index.h).
 */
#ifndef ZTD_UPSTREAM_STORE_VIEWS_H
#define ZTD_UPSTREAM_STORE_VIEWS_H

#include <jansson.h>

struct ztd_upstream;

/* Makes the store listing of u (if u is an S3 store) list its views. */
void ztd_store_views_enable(struct ztd_upstream *u);

#endif
