/*
 * The S3 listing's page (s3_list.h): binary searches for the first name at
 * or after the prefix and the start, and for the end of each common
 * prefix's run, so a page costs its own length, not the bucket's.
 */
#include "s3/s3_list.h"
#include "core/partition.h"

#include <string.h>

typedef struct finder {
    const void *names;
    ztd_s3_name_fn name;
} finder;

/* Compares names[i] with base + key (kl bytes) as strcmp would. */
static int cmp_at(const finder *f, size_t i, const ztd_s3_list_req *q, const char *key, size_t kl)
{
    const char *s = f->name(f->names, i);
    int c = strncmp(s, q->base, q->base_len);
    if (c)
        return c;
    s += q->base_len;
    size_t sl = strnlen(s, kl + 1);
    c = memcmp(s, key, sl < kl ? sl : kl);
    if (c)
        return c;
    return sl < kl ? -1 : sl > kl ? 1 : 0;
}

/* What search() and run_end() look for: base + key (kl bytes). */
typedef struct {
    const finder *f;
    const ztd_s3_list_req *q;
    const char *key;
    size_t kl;
    bool strict; /* search(): past names equal to it too */
} probe;

static bool name_below(const void *ctx, size_t i)
{
    const probe *p = ctx;
    int c = cmp_at(p->f, i, p->q, p->key, p->kl);
    return c < 0 || (p->strict && c == 0);
}

/* First index in [lo, n) whose name is > base+key (or >= when !strict). */
static size_t search(const finder *f, size_t lo, size_t n, const ztd_s3_list_req *q,
                     const char *key, size_t kl, bool strict)
{
    probe p = {f, q, key, kl, strict};
    return ztd_partition_point(lo, n, name_below, &p);
}

/* Does names[i] begin with base + key[0..kl)? */
static bool has_prefix(const finder *f, size_t i, const ztd_s3_list_req *q, const char *key,
                       size_t kl)
{
    const char *s = f->name(f->names, i);
    return strncmp(s, q->base, q->base_len) == 0 && strncmp(s + q->base_len, key, kl) == 0 &&
           strnlen(s + q->base_len, kl) == kl;
}

static bool in_run(const void *ctx, size_t i)
{
    const probe *p = ctx;
    return has_prefix(p->f, i, p->q, p->key, p->kl);
}

/* First index in [lo, n) past the run of names beginning with base + key
 * (names from lo on are >= base + key). */
static size_t run_end(const finder *f, size_t lo, size_t n, const ztd_s3_list_req *q,
                      const char *key, size_t kl)
{
    probe p = {f, q, key, kl, false};
    return ztd_partition_point(lo, n, in_run, &p);
}

/* The length of the common prefix of key (kl bytes), or 0 when the key,
 * past the request's prefix, holds no delimiter. */
static size_t common_len(const ztd_s3_list_req *q, const char *key, size_t kl)
{
    if (!q->delim_len || kl < q->prefix_len)
        return 0;
    const char *rest = key + q->prefix_len;
    size_t rl = kl - q->prefix_len;
    for (size_t i = 0; i + q->delim_len <= rl; i++)
        if (memcmp(rest + i, q->delim, q->delim_len) == 0)
            return q->prefix_len + i + q->delim_len;
    return 0;
}

/* Where the walk starts: the first name with the prefix after q->after; if
 * q->after is itself a common prefix (a page ended on it), past its run. */
static size_t first_index(const finder *f, size_t n, const ztd_s3_list_req *q)
{
    size_t lo = search(f, 0, n, q, q->prefix, q->prefix_len, false);
    if (!q->after)
        return lo;
    size_t a = search(f, 0, n, q, q->after, q->after_len, true);
    if (a > lo)
        lo = a;
    if (q->after_len >= q->prefix_len && memcmp(q->after, q->prefix, q->prefix_len) == 0 &&
        common_len(q, q->after, q->after_len) == q->after_len)
        lo = run_end(f, lo, n, q, q->after, q->after_len);
    return lo;
}

void ztd_s3_list(const ztd_s3_list_req *q, const void *names, size_t n, ztd_s3_name_fn name,
                 ztd_s3_skip_fn skip, ztd_s3_list_page *out)
{
    finder f = {names, name};
    size_t max = q->max_keys > ZTD_S3_MAX_KEYS ? ZTD_S3_MAX_KEYS : q->max_keys;
    out->n = 0;
    out->truncated = false;
    for (size_t i = first_index(&f, n, q); i < n;) {
        if (!has_prefix(&f, i, q, q->prefix, q->prefix_len))
            break;
        if (skip && skip(names, i)) {
            i++;
            continue;
        }
        if (out->n == max) {
            out->truncated = max > 0;
            break;
        }
        const char *key = name(names, i) + q->base_len;
        size_t kl = strlen(key);
        size_t cl = common_len(q, key, kl);
        out->items[out->n++] = (ztd_s3_list_item){i, cl};
        i = cl ? run_end(&f, i + 1, n, q, key, cl) : i + 1;
    }
}
