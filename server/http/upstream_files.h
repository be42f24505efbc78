/*
 * The upstream's listing for a front that lists files (GET /v1/files, the S3
 * front's ListObjects on a sidecar): at hand when fetched less than
 * upstream_ttl ago, else fetched off the workers while the request waits.
 */
#ifndef ZTD_UPSTREAM_FILES_H
#define ZTD_UPSTREAM_FILES_H

#include <jansson.h>
#include <stdbool.h>

#include "core/errors.h"
#include "http/handler.h"

/* The upstream's files (a JSON array of /v1 listing objects sorted by name;
 * a new reference): a ztensord upstream's listing, or an S3 store's objects
 * (name, size, etag, last_modified: upstream/store_listing.h) and their
 * safetensors views (upstream/store_views.h). NULL for none (a plain
 * upstream) or on error (*err and
 * *msg, which lives as long as the request); or *wait when the handler must
 * return MHD_YES and be called again. Uses r->ctx while it waits: for
 * requests whose handler keeps no other state there. */
json_t *ztd_answer_upstream_files(ztd_server *s, struct MHD_Connection *c, ztd_req *r, bool *wait,
                                  ztd_err *err, const char **msg);

#endif
