/*
 * The body of POST /api/models/{repo}/paths-info/{rev}: huggingface_hub sends
 * a form (paths=a&paths=b&expand=False), @huggingface/hub JSON
 * ({"paths": ["a", "b"], "expand": true}). A pure function over the bytes:
 * at most ZTD_HF_PATHS_MAX paths of at most ZTD_PATH_MAX bytes each, valid
 * UTF-8 without NUL. The paths are only looked up, never used as file names.
 */
#ifndef ZTD_HF_PATHS_BODY_H
#define ZTD_HF_PATHS_BODY_H

#include <stdbool.h>
#include <stddef.h>

#define ZTD_HF_PATHS_MAX 10000
#define ZTD_HF_PATHS_BODY_MAX (4u << 20) /* bytes of body accepted */

typedef struct ztd_hf_paths {
    char **paths; /* malloc'ed, each NUL-terminated */
    size_t n;
    bool expand;
} ztd_hf_paths;

/* content_type may be NULL (a form is assumed unless it names JSON). 0, or -1
 * with a static reason in *msg (out is then empty). */
int ztd_hf_paths_parse(const char *content_type, const char *body, size_t len, ztd_hf_paths *out,
                       const char **msg);
void ztd_hf_paths_free(ztd_hf_paths *p);

#endif
