/*
 * Parsing and checking the S3 front's bucket list (buckets.h).
 */
#include "core/buckets.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool lower_or_digit(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool ipv4_shaped(const char *s, size_t n)
{
    int dots = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.')
            dots++;
        else if (s[i] < '0' || s[i] > '9')
            return false;
    }
    return dots == 3;
}

static bool starts(const char *s, size_t n, const char *p)
{
    size_t k = strlen(p);
    return n >= k && memcmp(s, p, k) == 0;
}

static bool ends(const char *s, size_t n, const char *p)
{
    size_t k = strlen(p);
    return n >= k && memcmp(s + n - k, p, k) == 0;
}

const char *ztd_bucket_name_problem(const char *s, size_t n)
{
    static const char *const own[] = {"v1", "hf", "metrics", "healthz", "readyz"};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if (n == strlen(own[i]) && memcmp(s, own[i], n) == 0)
            return "is one of ztensord's own paths (v1, hf, metrics, healthz, readyz)";
    if (n < 3 || n > ZTD_BUCKET_NAME_MAX)
        return "must be 3 to 63 characters long";
    for (size_t i = 0; i < n; i++)
        if (!lower_or_digit(s[i]) && s[i] != '.' && s[i] != '-')
            return "may hold only lowercase letters, digits, '.' and '-'";
    if (!lower_or_digit(s[0]) || !lower_or_digit(s[n - 1]))
        return "must begin and end with a lowercase letter or a digit";
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] == '.' && s[i + 1] == '.')
            return "may not hold two adjacent periods";
    if (ipv4_shaped(s, n))
        return "may not be shaped like an IP address";
    if (starts(s, n, "xn--") || starts(s, n, "sthree-") || ends(s, n, "-s3alias") ||
        ends(s, n, "--ol-s3"))
        return "uses a prefix or suffix S3 reserves (xn--, sthree-, -s3alias, --ol-s3)";
    return NULL;
}

static const char *dir_problem(const char *d, size_t n)
{
    if (n == 0)
        return "has an empty directory after '='";
    if (d[0] == '/' || d[n - 1] == '/')
        return "has a directory with a leading or trailing '/' (it is relative to the root)";
    for (size_t i = 0; i < n; i++) {
        bool seg_start = i == 0 || d[i - 1] == '/';
        if (d[i] == '/' && seg_start)
            return "has a directory with an empty segment";
        if (seg_start && d[i] == '.')
            return "has a directory segment beginning with '.' (., .. and hidden names are not "
                   "served)";
        if ((unsigned char)d[i] < 0x20 || d[i] == 0x7f)
            return "has a control character in its directory";
    }
    return NULL;
}

static int parse_one(const char *s, size_t n, ztd_buckets *out, char *why, size_t whylen)
{
    const char *eq = memchr(s, '=', n);
    size_t nl = eq ? (size_t)(eq - s) : n;
    const char *p;
    if (out->n == ZTD_BUCKETS_MAX) {
        snprintf(why, whylen, "more than %d buckets", ZTD_BUCKETS_MAX);
        return -1;
    }
    if ((p = ztd_bucket_name_problem(s, nl)) != NULL) {
        snprintf(why, whylen, "bucket \"%.*s\" %s", (int)(nl > 80 ? 80 : nl), s, p);
        return -1;
    }
    if (ztd_buckets_find(out, s, nl)) {
        snprintf(why, whylen, "bucket \"%.*s\" is given twice", (int)nl, s);
        return -1;
    }
    if (eq && (p = dir_problem(eq + 1, n - nl - 1)) != NULL) {
        snprintf(why, whylen, "bucket \"%.*s\" %s", (int)nl, s, p);
        return -1;
    }
    ztd_bucket *b = &out->b[out->n];
    size_t dl = eq ? n - nl - 1 : 0;
    if (!(b->dir = malloc(dl + 1))) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    memcpy(b->name, s, nl);
    b->name[nl] = 0;
    memcpy(b->dir, eq ? eq + 1 : "", dl);
    b->dir[dl] = 0;
    b->dir_len = dl;
    out->n++;
    return 0;
}

int ztd_buckets_parse(const char *list, ztd_buckets *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof(*out));
    const char *p = list;
    for (;;) {
        size_t n = strcspn(p, ",");
        if (n == 0) {
            snprintf(why, whylen, "an empty bucket name in the list");
            ztd_buckets_free(out);
            return -1;
        }
        if (parse_one(p, n, out, why, whylen) != 0) {
            ztd_buckets_free(out);
            return -1;
        }
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

void ztd_buckets_free(ztd_buckets *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->b[i].dir);
    memset(b, 0, sizeof(*b));
}

const ztd_bucket *ztd_buckets_find(const ztd_buckets *b, const char *name, size_t n)
{
    for (size_t i = 0; i < b->n; i++)
        if (strlen(b->b[i].name) == n && memcmp(b->b[i].name, name, n) == 0)
            return &b->b[i];
    return NULL;
}
