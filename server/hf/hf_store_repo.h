/*
 * A repository of an S3 store, for an `--upstream s3://BUCKET/PREFIX` sidecar
 * whose catalog does not hold it (docs/HF.md, "Through the cache"): the
 * objects of the store's listing under "{repo}/" (the upstream's store
 * listing, kept for upstream_ttl, with the safetensors views it lists beside
 * the .zt objects), with their paths below that directory; objects listed
 * with an error and hidden names left out, as for a local repository. There
 * is no origin document to check: the digests are made here from what the
 * listing says, without reading the files' bytes (hf_digests.h):
 *  - a zTensor v2 object: its identity (ztd_upstream_identity: manifest,
 *    footer and the bytes between components, never the blobs);
 *  - a view: made from its file's digest, as for a local view;
 *  - any other object: ztd_hf_store_digest of its ETag and size;
 * none of them the sha256 of the bytes (no lfs block), and the commit is
 * sealed over them as for a local repository. Each file's raw_etag is the
 * file_etag its upstream entry gets from that ETag (ztd_upstream_file_etag_of),
 * which ztd_hf_origin_file checks the opened version against: bytes of
 * another version are never served under this commit.
 * Blocking: off libmicrohttpd's threads (the upstream's wait queue).
 */
#ifndef ZTD_HF_STORE_REPO_H
#define ZTD_HF_STORE_REPO_H

#include <stddef.h>

#include "core/errors.h"
#include "hf/hf_repo.h"
#include "upstream/upstream.h"

/* The store's repository `repo` into out (sealed, no snapshot): 0; 1 when the
 * store has no object under "{repo}/" (or u is not an S3 store); -1 with err
 * and msg (the listing could not be had, a .zt changed while it was read:
 * FILE_CHANGED, retry). */
int ztd_hf_store_open(ztd_upstream *u, const char *repo, ztd_hf_repo *out, ztd_err *err, char *msg,
                      size_t cap);

#endif
