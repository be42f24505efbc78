/*
 * S3 addresses: s3://BUCKET/PREFIX split and checked, and the http(s) URLs of
 * a store's objects and listing pages. A custom endpoint (AWS_ENDPOINT_URL:
 * MinIO, Ceph RGW, moto, ztensord's own S3 front) is addressed path-style,
 * ENDPOINT/BUCKET/KEY; AWS itself virtual-hosted,
 * https://BUCKET.s3.REGION.amazonaws.com/KEY (path-style for a bucket with a
 * '.', which a wildcard certificate does not cover). Every URL is written in
 * SigV4's canonical form, because libcurl 7.88 signs the path and the query
 * as written: keys escaped byte by byte (ztr__s3_escape), query parameters
 * sorted by name.
 */
#include "remote_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

zt_status zt_remote_s3_split(const char *url, char bucket[64], const char **prefix, zt_error *err)
{
    if (!url || !bucket || !prefix)
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0, "NULL argument");
    bucket[0] = 0;
    if (strncasecmp(url, "s3://", 5))
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0, "not an s3://BUCKET/PREFIX URL");
    const char *b = url + 5, *slash = strchr(b, '/');
    size_t n = slash ? (size_t)(slash - b) : strlen(b);
    bool ok = n >= 3 && n <= 63;
    for (size_t i = 0; ok && i < n; i++)
        ok = (b[i] >= 'a' && b[i] <= 'z') || (b[i] >= '0' && b[i] <= '9') || b[i] == '.' ||
             b[i] == '-';
    ok = ok && b[0] != '.' && b[0] != '-' && b[n - 1] != '.' && b[n - 1] != '-';
    if (!ok)
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0,
                         "the bucket name must be 3 to 63 of a-z 0-9 . - (S3's rule)");
    memcpy(bucket, b, n);
    bucket[n] = 0;
    *prefix = slash ? slash + 1 : "";
    if (strlen(*prefix) > ZTR_S3_KEY_MAX)
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0, "a prefix over 1024 bytes");
    return ZT_OK;
}

/* "ENDPOINT/BUCKET" (path-style) or "https://BUCKET.s3.REGION.amazonaws.com"
 * into out, without a trailing '/'. */
static bool base_url(const zt_remote *r, const char *bucket, char *out, size_t cap)
{
    int n;
    if (r->s3_endpoint)
        n = snprintf(out, cap, "%s/%s", r->s3_endpoint, bucket);
    else if (strchr(bucket, '.'))
        n = snprintf(out, cap, "https://s3.%s.amazonaws.com/%s", r->s3_region, bucket);
    else
        n = snprintf(out, cap, "https://%s.s3.%s.amazonaws.com", bucket, r->s3_region);
    return n > 0 && (size_t)n < cap;
}

zt_status zt_remote_s3_object_url(const zt_remote *r, const char *bucket, const char *key,
                                  char **out, zt_error *err)
{
    if (!r || !bucket || !key || !out)
        return ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0, "NULL argument");
    *out = NULL;
    if (!r->s3_region)
        return ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0, "not an S3 session (s3_region)");
    size_t cap = strlen(key) * 3 + 512 + (r->s3_endpoint ? strlen(r->s3_endpoint) : 0);
    char *url = malloc(cap);
    if (!url)
        return ztr__fail(err, ZT_E_NOMEM, NULL, NULL, NULL, 0, 0, "out of memory");
    size_t n = 0;
    if (base_url(r, bucket, url, cap))
        n = strlen(url);
    url[n++] = '/';
    if (!n || !ztr__s3_escape(key, true, url + n, cap - n)) {
        free(url);
        return ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0, "an object URL too long");
    }
    *out = url;
    return ZT_OK;
}

char *ztr__s3_list_url(const zt_remote *r, const char *bucket, const char *prefix,
                       const char *token)
{
    size_t cap =
        (strlen(prefix) + strlen(token)) * 3 + 600 + (r->s3_endpoint ? strlen(r->s3_endpoint) : 0);
    char *url = malloc(cap), *p = malloc(strlen(prefix) * 3 + 1),
         *t = malloc(strlen(token) * 3 + 1);
    bool ok = url && p && t && base_url(r, bucket, url, cap) &&
              ztr__s3_escape(prefix, false, p, strlen(prefix) * 3 + 1) &&
              ztr__s3_escape(token, false, t, strlen(token) * 3 + 1);
    if (ok) {
        /* In byte order of the names: the canonical query is the query. */
        size_t n = strlen(url);
        int k = snprintf(url + n, cap - n, "%s?%s%s%slist-type=2&max-keys=%u&prefix=%s",
                         r->s3_endpoint || strchr(bucket, '.') ? "" : "/",
                         token[0] ? "continuation-token=" : "", t, token[0] ? "&" : "",
                         r->opt.s3_max_keys, p);
        ok = k > 0 && (size_t)k < cap - n;
    }
    free(p);
    free(t);
    if (!ok) {
        free(url);
        return NULL;
    }
    return url;
}
