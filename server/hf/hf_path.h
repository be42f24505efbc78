/*
 * The Hugging Face front's URL grammar (docs/HF.md): the raw, still
 * percent-encoded path under /hf and the method -> what is asked (repository
 * metadata, a tree page, paths-info, a file), the repository id, the revision
 * and the path in the repository, decoded and checked. A pure function, so the
 * traversal rules are unit-tested and fuzzed without a socket.
 *
 *   GET|HEAD /hf/api/models/{repo}                              INFO (main)
 *   GET|HEAD /hf/api/models/{repo}/revision/{rev}               INFO
 *   GET|HEAD /hf/api/models/{repo}/tree/{rev}[/{path}]          TREE
 *   POST     /hf/api/models/{repo}/paths-info/{rev}             PATHS_INFO
 *   GET|HEAD /hf/{repo}/resolve/{rev}/{path}                    RESOLVE
 *   GET|HEAD /hf/{repo}/raw/{rev}/{path}                        RESOLVE (the same bytes:
 *            no git-lfs pointers here; @huggingface/hub's fileExists asks it)
 *
 * {repo} is "org/name" or a one-level "name": one or two segments of 1 to 96
 * characters of [A-Za-z0-9._-], not starting with '.' or '-', without ".."
 * or "--" (the hub's rule). A one-level id is recognised by the keyword that
 * follows it (revision, tree, paths-info; resolve, raw), so an org's repository
 * named like a keyword cannot be addressed. Three or more levels: 400.
 * {rev} is one segment, percent-decoded (the clients encode '/' in it): 1 to
 * 255 bytes, no control character, no ".." and no leading '.' (400); whether
 * it names a revision is the caller's question. {path}: the rest, each
 * segment decoded, then split on '/': no empty segment, none starting with
 * '.', no NUL, valid UTF-8 (400 otherwise), as the /v1 router's {file}.
 */
#ifndef ZTD_HF_PATH_H
#define ZTD_HF_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include "http/router.h"

#define ZTD_HF_REPO_PART_MAX 96
#define ZTD_HF_REPO_MAX (2 * ZTD_HF_REPO_PART_MAX + 1)
#define ZTD_HF_REV_MAX 255
#define ZTD_HF_NAME_MAX (ZTD_HF_REPO_MAX + 1 + ZTD_PATH_MAX + 1) /* "{repo}/{path}" */

typedef enum ztd_hf_op {
    ZTD_HF_NONE,
    ZTD_HF_INFO,
    ZTD_HF_TREE,
    ZTD_HF_PATHS_INFO,
    ZTD_HF_RESOLVE,
} ztd_hf_op;

typedef struct ztd_hf_target {
    int status;          /* 0, or 400, 404, 405 */
    const char *message; /* static, when status is not 0 */
    bool repo_missing;   /* a 404 that names no repository kind we serve */
    ztd_hf_op op;
    char repo[ZTD_HF_REPO_MAX + 1]; /* "org/name" or "name" */
    size_t repo_len;
    char rev[ZTD_HF_REV_MAX + 1]; /* "main" when the URL gives none */
    size_t rev_len;
    char path[ZTD_PATH_MAX + 1]; /* "" for a tree's root */
    size_t path_len;
} ztd_hf_target;

/* Parse method and raw path (NUL-terminated; the path starts with "/hf") into
 * t (about 4.5 KiB: keep it off small stacks); returns t->status. */
int ztd_hf_parse(const char *method, const char *raw_path, ztd_hf_target *t);

/* Is rev a commit id as this front writes them: 40 lowercase hex digits? */
bool ztd_hf_is_commit(const char *rev, size_t len);

#endif
