/*
 * A repository as a ztensord upstream has it, for an --upstream sidecar whose
 * catalog does not hold it (docs/HF.md, "Through the cache"): the origin's
 * own /hf model info at main gives the files, their sizes and digests and the
 * commit, which is checked by making it again from them (the same rule on
 * both sides: a disagreement is the origin's error, never served). A file is
 * then opened through the upstream (ztd_upstream_get) and answered from the
 * cache; its version is checked against the listing: the origin gives each
 * file's /raw ETag (rawEtag), which the upstream entry is pinned to, so the
 * bytes served belong to the commit named.
 * Blocking: off libmicrohttpd's threads (the upstream's wait queue).
 */
#ifndef ZTD_HF_ORIGIN_H
#define ZTD_HF_ORIGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/errors.h"
#include "hf/hf_repo.h"
#include "upstream/upstream.h"

/* The origin's repository `repo` into out (sealed, no snapshot): 0; 1 when
 * the origin has no such repository (or is not a ztensord); -1 with err and
 * msg. Its info is kept for ttl_ms (upstream_ttl) and asked again sooner
 * when rev is a commit it does not name, or a file was found changed. */
int ztd_hf_origin_open(ztd_upstream *u, const char *repo, const char *rev, uint64_t ttl_ms,
                       ztd_hf_repo *out, ztd_err *err, char *msg, size_t cap);

/* File f of r (from ztd_hf_origin_open) opened through the upstream, checked
 * to be the listed version: ZTD_ERR_NONE with *out (a new reference), or the
 * error with msg (FILE_CHANGED when the origin moved on meanwhile). When the
 * upstream lists f as the safetensors view of a file of r, *out is that file,
 * checked against its own item, and *as_view is true: answer its view. */
ztd_err ztd_hf_origin_file(ztd_upstream *u, const char *repo, const ztd_hf_repo *r,
                           const ztd_hf_file *f, ztd_entry **out, bool *as_view, char *msg,
                           size_t cap);

#endif
