/*
 * The S3 front's buckets as configured (option s3_buckets, flag --s3-bucket):
 * a comma-separated list of NAME or NAME=SUBDIR. NAME follows S3's bucket
 * naming rules (3-63 characters of a-z, 0-9, '.' and '-', beginning and
 * ending with a letter or digit, no "..", not shaped like an IPv4 address,
 * not beginning with "xn--" or "sthree-", not ending with "-s3alias" or
 * "--ol-s3") and may not be one of ztensord's own first path segments (v1,
 * hf, metrics, healthz, readyz). SUBDIR is a directory under the root
 * ('/'-separated, no empty segment, no segment beginning with '.', no
 * leading or trailing '/'); without it the bucket is the whole root. Pure:
 * the config check and the S3 front both parse with it.
 */
#ifndef ZTD_BUCKETS_H
#define ZTD_BUCKETS_H

#include <stddef.h>

#define ZTD_BUCKETS_MAX 64
#define ZTD_BUCKET_NAME_MAX 63

typedef struct ztd_bucket {
    char name[ZTD_BUCKET_NAME_MAX + 1];
    char *dir; /* "" for the whole root; owned */
    size_t dir_len;
} ztd_bucket;

typedef struct ztd_buckets {
    ztd_bucket b[ZTD_BUCKETS_MAX];
    size_t n;
} ztd_buckets;

/* Parses the list into *out (release with ztd_buckets_free). 0, or -1 with
 * the reason in why (naming the bucket) and nothing in *out to free. An empty
 * list is an error. */
int ztd_buckets_parse(const char *list, ztd_buckets *out, char *why, size_t whylen);
void ztd_buckets_free(ztd_buckets *b);
/* The bucket named name[0..n), or NULL. */
const ztd_bucket *ztd_buckets_find(const ztd_buckets *b, const char *name, size_t n);
/* Why name[0..n) is not a valid bucket name, or NULL. */
const char *ztd_bucket_name_problem(const char *name, size_t n);

#endif
