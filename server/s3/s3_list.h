/*
 * The page of an S3 listing (ListObjectsV2, ListObjects) over names sorted
 * by strcmp: the keys and common prefixes to answer, found by binary search
 * (a 1,000-key page over 100,000 names costs a few dozen comparisons to
 * find and a walk of the page). Pure: unit tests drive it with arrays.
 *
 * The names are the catalog's (paths under the root); a bucket mapped to a
 * subdirectory gives `base` ("dir/"), which every key of the bucket begins
 * with and which keys do not show. `skip` lets the caller hide names (files
 * the catalog holds but cannot serve).
 */
#ifndef ZTD_S3_LIST_H
#define ZTD_S3_LIST_H

#include <stdbool.h>
#include <stddef.h>

#define ZTD_S3_MAX_KEYS 1000

typedef const char *(*ztd_s3_name_fn)(const void *names, size_t i);
typedef bool (*ztd_s3_skip_fn)(const void *names, size_t i);

typedef struct ztd_s3_list_req {
    const char *base; /* prefix of every name in the bucket ("" or "dir/") */
    size_t base_len;
    const char *prefix; /* of keys */
    size_t prefix_len;
    const char *delim; /* "" for none */
    size_t delim_len;
    const char *after; /* start after this key (start-after, token, marker), or NULL */
    size_t after_len;
    size_t max_keys; /* at most ZTD_S3_MAX_KEYS */
} ztd_s3_list_req;

/* One item of the page: a key (names[index]) or a common prefix (the first
 * prefix_len bytes of the key of names[index]). */
typedef struct ztd_s3_list_item {
    size_t index;
    size_t prefix_len; /* 0: a key */
} ztd_s3_list_item;

typedef struct ztd_s3_list_page {
    ztd_s3_list_item items[ZTD_S3_MAX_KEYS];
    size_t n;
    bool truncated; /* more follows: resume after the last item */
} ztd_s3_list_page;

void ztd_s3_list(const ztd_s3_list_req *q, const void *names, size_t n, ztd_s3_name_fn name,
                 ztd_s3_skip_fn skip, ztd_s3_list_page *out);

#endif
