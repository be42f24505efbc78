/*
 * A repository as one catalog snapshot has it (docs/HF.md): the valid
 * entries whose names start with "{repo}/", their content digests
 * (hf_digests.h) and the commit id made of them. The snapshot stays pinned
 * while the view lives, so a request answers from one version of the file
 * set: metadata, listing and bytes never mix two.
 *
 * Commit id: the first 20 bytes, in hex, of the sha256 of
 * "ztensord-hf-commit-1\n" followed, for each file in name order, by its path
 * in the repository, a NUL, its digest in hex, a NUL, its size in decimal and
 * a newline. Names and content only: two replicas or tiers holding the same
 * files give the same id.
 */
#ifndef ZTD_HF_REPO_H
#define ZTD_HF_REPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/catalog.h"

typedef struct ztd_hf_file {
    ztd_entry *e;    /* the snapshot's; NULL for a file of the origin (hf_origin.h) */
    const char *rel; /* its path in the repository (in e->name, or the repo's names) */
    size_t rel_len;
    uint64_t size;
    int64_t mtime;        /* seconds */
    const char *raw_etag; /* of a file of the origin: its /raw ETag there (in names) */
    uint8_t digest[32];
    bool known;  /* digest is set */
    bool sha256; /* digest is the sha256 of the bytes */
} ztd_hf_file;

typedef struct ztd_hf_repo {
    ztd_snapshot *snap; /* pinned */
    ztd_hf_file *files; /* in name order */
    size_t n;
    size_t missing;    /* files whose digest is not known yet */
    char commit[41];   /* once missing is 0 (ztd_hf_repo_seal) */
    int64_t mtime_max; /* seconds: the newest file's mtime */
    char *names;       /* the files' paths, for a repository of the origin */
} ztd_hf_repo;

/* The repository `repo` (NUL-terminated id) in the catalog's current snapshot.
 * 0; 1 when it has no file (not found); -1 out of memory or no snapshot yet. */
int ztd_hf_repo_open(ztd_catalog *c, const char *repo, ztd_hf_repo *out);
void ztd_hf_repo_close(ztd_hf_repo *r);
/* Digests not known at open: hashed now (blocks; off the workers). 0, or -1
 * with why in msg. */
int ztd_hf_repo_hash(ztd_hf_repo *r, const char *root, char *msg, size_t cap);
/* Take the digests found since (ztd_hf_repo_hash) and make the commit id;
 * false while some digest is still missing. */
bool ztd_hf_repo_seal(ztd_hf_repo *r);
/* The file at path, or NULL. */
const ztd_hf_file *ztd_hf_repo_find(const ztd_hf_repo *r, const char *path, size_t len);
/* Is path a directory of the repository (some file lies under "path/")? */
bool ztd_hf_repo_is_dir(const ztd_hf_repo *r, const char *path, size_t len);

#endif
