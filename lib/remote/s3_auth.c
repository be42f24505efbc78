/*
 * A request's credentials, in one place for every request the library makes
 * (range requests in transport.c, listing pages, HEADs): a ztensord's bearer
 * token, or an S3 session's AWS Signature Version 4. libcurl signs
 * (CURLOPT_AWS_SIGV4, "aws:amz:REGION:s3") over the headers it is given; the
 * libcurl of Debian bookworm (7.88) adds no x-amz-content-sha256, which S3
 * requires, so it is added here as the sha256 of the empty body (every
 * request is a GET or a HEAD), and signed with the rest. 7.88 also takes the
 * path and the query as they are written into the canonical request: the
 * URLs are built already canonical (s3_url.c: keys escaped by
 * ztr__s3_escape, query parameters in byte order).
 */
#include "remote_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

bool ztr__s3_escape(const char *s, bool keep_slash, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '.' || c == '_' || c == '~' || (keep_slash && c == '/');
        if (n + 4 > cap)
            return false;
        if (plain) {
            out[n++] = (char)c;
        } else {
            out[n++] = '%';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    if (n + 1 > cap)
        return false;
    out[n] = 0;
    return true;
}

/* Appends "name: value" to *h; -1 (and *h freed) when out of memory. */
static int add(struct curl_slist **h, const char *name, const char *value)
{
    size_t n = strlen(name) + strlen(value) + 3;
    char *line = malloc(n);
    struct curl_slist *t = NULL;
    if (line) {
        snprintf(line, n, "%s: %s", name, value);
        t = curl_slist_append(*h, line);
        memset(line, 0, n); /* it may hold a token */
        free(line);
    }
    if (!t) {
        curl_slist_free_all(*h);
        *h = NULL;
        return -1;
    }
    *h = t;
    return 0;
}

int ztr__auth_headers(const zt_remote *r, struct curl_slist **h)
{
    if (r->s3_region) {
        if (!r->s3_key) /* unsigned: a public bucket */
            return 0;
        if (add(h, "x-amz-content-sha256", EMPTY_SHA256))
            return -1;
        return r->s3_token ? add(h, "x-amz-security-token", r->s3_token) : 0;
    }
    if (!r->token)
        return 0;
    size_t n = strlen(r->token) + 8;
    char *v = malloc(n);
    if (!v) {
        curl_slist_free_all(*h);
        *h = NULL;
        return -1;
    }
    snprintf(v, n, "Bearer %s", r->token);
    int rc = add(h, "Authorization", v);
    free(v);
    return rc;
}

void ztr__auth_setopt(const zt_remote *r, CURL *e)
{
    if (!r->s3_region || !r->s3_key)
        return;
    curl_easy_setopt(e, CURLOPT_AWS_SIGV4, r->sigv4);
    /* Apart, not "key:secret" (CURLOPT_USERPWD): a ':' in either stays. */
    curl_easy_setopt(e, CURLOPT_USERNAME, r->s3_key);
    curl_easy_setopt(e, CURLOPT_PASSWORD, r->s3_secret);
}
