/*
 * The objects of an S3 store (`--upstream s3://BUCKET/PREFIX`) as a listing in
 * the form of /v1/files' "files" array, for the fronts that list what the
 * upstream has (the S3 front of a node-local cache): ListObjectsV2 pages
 * through libztensor-remote (expat-parsed, checked, capped by the session's
 * list_max_entries / list_max_bytes), keys under PREFIX made relative to it.
 */
#ifndef ZTD_UPSTREAM_STORE_LISTING_H
#define ZTD_UPSTREAM_STORE_LISTING_H

#include <jansson.h>
#include <stddef.h>

#include <ztensor/ztensor_remote.h>

#include "core/errors.h"

/* Every object under s3url (s3://BUCKET/PREFIX) as {"name", "size", "etag",
 * "last_modified" (HTTP-date), "status": "ok"}, sorted by name; directory
 * markers (keys ending in '/') and keys that are not below PREFIX/ left out.
 * Blocking. ZTD_ERR_NONE and *files (a new reference), or the error with a
 * message naming the store. */
ztd_err ztd_store_list(const zt_remote_options *opt, const char *s3url, json_t **files, char *msg,
                       size_t cap);

#endif
