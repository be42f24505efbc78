/*
 * The Hugging Face front's JSON documents, as huggingface_hub and
 * @huggingface/hub read them (docs/HF.md): a model's info with its siblings,
 * tree items (files and directories) and their pages, paths-info items. File
 * items carry oid (the content digest in hex), size, and lfs {oid, size,
 * pointerSize} when the digest is the sha256 of the bytes; never xetHash.
 */
#ifndef ZTD_HF_JSON_H
#define ZTD_HF_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "hf/hf_repo.h"

/* Most items in one tree page; the default when no limit is asked for. */
#define ZTD_HF_TREE_PAGE 1000

/* GET /api/models/{repo}[/revision/{rev}]: a malloc'ed document (len in
 * *len), NULL when out of memory. r is sealed (commit known). */
char *ztd_hf_info_json(const ztd_hf_repo *r, const char *repo, size_t *len);

/* One page of the tree under dir ("" for the root; a directory of r): items
 * from number `from` on, at most `limit`; *more: items remain after it. */
char *ztd_hf_tree_json(const ztd_hf_repo *r, const char *dir, size_t dir_len, bool recursive,
                       bool expand, size_t from, size_t limit, bool *more, size_t *len);

/* POST paths-info: an item for each of paths[0..n) that is a file or a
 * directory of r, in the order asked; others are left out. */
char *ztd_hf_paths_json(const ztd_hf_repo *r, char *const *paths, size_t n, bool expand,
                        size_t *len);

/* "YYYY-MM-DDTHH:MM:SS.000Z" */
void ztd_hf_iso_date(int64_t unix_seconds, char out[32]);

#endif
