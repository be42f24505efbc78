/*
 * The file listing's query (listing_query.h): its arguments, the page over
 * the sorted names (two binary searches) and the cursor.
 */
#include "http/listing_query.h"
#include "core/hex.h"
#include "core/partition.h"
#include "http/router.h"

#include <string.h>

void ztd_listing_init(ztd_listing_query *q)
{
    memset(q, 0, sizeof(*q));
    q->limit = ZTD_LISTING_DEFAULT_LIMIT;
}

/* Percent-decoding ('+' is a space, as in forms) into out (cap bytes with
 * the NUL), by the router's decoder. -1 on a bad escape, a NUL byte, or too
 * long. */
static int decode(const char *s, char *out, size_t cap, size_t *len)
{
    long n = ztd_url_decode(s, strlen(s), out, cap - 1, true);
    if (n < 0 || memchr(out, '\0', (size_t)n))
        return -1;
    *len = (size_t)n;
    return 0;
}

static int parse_cursor(ztd_listing_query *q, const char *v, const char **why)
{
    size_t n = strlen(v);
    *why = "cursor must be a next_cursor of an earlier page";
    if (n == 0 || n % 2 || n / 2 > ZTD_LISTING_MAX_NAME)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = ztd_hex_value(v[2 * i]), lo = ztd_hex_value(v[2 * i + 1]);
        if (hi < 0 || lo < 0 || (hi | lo) == 0)
            return -1;
        q->after[i] = (char)(hi << 4 | lo);
    }
    q->after[n / 2] = 0;
    q->after_len = n / 2;
    q->has_after = true;
    return 0;
}

int ztd_listing_arg(ztd_listing_query *q, const char *key, const char *value, const char **why)
{
    if (!value)
        value = "";
    if (!strcmp(key, "prefix")) {
        q->paged = true;
        *why = "prefix must be percent-encoded UTF-8 of at most 4096 bytes, without NUL";
        return decode(value, q->prefix, sizeof(q->prefix), &q->prefix_len);
    }
    if (!strcmp(key, "cursor")) {
        q->paged = true;
        return parse_cursor(q, value, why);
    }
    if (!strcmp(key, "limit")) {
        q->paged = true;
        size_t v = 0, i = 0;
        for (; value[i] >= '0' && value[i] <= '9' && v <= ZTD_LISTING_MAX_LIMIT; i++)
            v = v * 10 + (size_t)(value[i] - '0');
        *why = "limit must be an integer from 1 to 10000";
        if (i == 0 || value[i] || v < 1 || v > ZTD_LISTING_MAX_LIMIT)
            return -1;
        q->limit = v;
        return 0;
    }
    return 0;
}

typedef struct {
    const void *entries;
    ztd_listing_name_fn name;
    const char *key;
    bool past;
} name_key;

static bool below(const void *ctx, size_t i)
{
    const name_key *k = ctx;
    int c = strcmp(k->name(k->entries, i), k->key);
    return c < 0 || (k->past && c == 0);
}

/* The first index whose name is not below key (key_len bytes; `past`: the
 * first whose name is above it). */
static size_t lower_bound(const void *entries, size_t n, ztd_listing_name_fn name, const char *key,
                          bool past)
{
    name_key k = {entries, name, key, past};
    return ztd_partition_point(0, n, below, &k);
}

static bool has_prefix(const char *s, const ztd_listing_query *q)
{
    return !strncmp(s, q->prefix, q->prefix_len);
}

void ztd_listing_page(const ztd_listing_query *q, const void *entries, size_t n,
                      ztd_listing_name_fn name, size_t *first, size_t *count, bool *more)
{
    size_t i = lower_bound(entries, n, name, q->prefix, false);
    if (q->has_after && strcmp(q->after, q->prefix) >= 0)
        i = lower_bound(entries, n, name, q->after, true);
    /* Names with the prefix are contiguous in byte order. */
    size_t k = 0;
    while (i + k < n && k < q->limit && has_prefix(name(entries, i + k), q))
        k++;
    *first = i;
    *count = k;
    *more = i + k < n && has_prefix(name(entries, i + k), q);
}

void ztd_listing_cursor(const char *name, char *out)
{
    for (; *name; name++) {
        *out++ = "0123456789abcdef"[(unsigned char)*name >> 4];
        *out++ = "0123456789abcdef"[(unsigned char)*name & 15];
    }
    *out = 0;
}
