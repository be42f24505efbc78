/*
 * fuzz_s3_list.c: libFuzzer target for server/s3/s3_list.c, the page of an
 * S3 listing. The input is "prefix\ndelimiter\nafter\nmax-keys byte", over
 * a fixed sorted list of names with a base directory. Invariants: at most
 * max-keys items; every item's key has the prefix and comes after `after`;
 * items in order, no common prefix twice; a common prefix ends with the
 * delimiter; truncated only when a further name has the prefix.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "s3/s3_list.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            __builtin_trap();                                                                      \
    } while (0)

static const char *NAMES[] = {"a.zt",      "b/a",        "b/a/b.zt",    "b/a/c.zt", "b/ab.zt",
                              "b/b//c.zt", "b/b/c/d.zt", "b/z\xc3\xa9", "c.zt",     "d/x"};
#define N (sizeof(NAMES) / sizeof(NAMES[0]))

static const char *name_at(const void *e, size_t i)
{
    return ((const char *const *)e)[i];
}

/* The next field of the input, up to '\n' (or the end). */
static const char *field(const char **p, const char *end, size_t *len)
{
    const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
    *len = (size_t)((nl ? nl : end) - s);
    *p = nl ? nl + 1 : end;
    return s;
}

/* n bytes of s and a NUL (not strndup: s is the fuzzer's buffer, with no NUL after it,
 * and ASan's strndup reads past n). */
static char *dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ztd_s3_list_page pg;
    const char *p = (const char *)data, *end = p + size;
    size_t pl, dl, al, ml;
    const char *prefix = field(&p, end, &pl), *delim = field(&p, end, &dl);
    const char *after = field(&p, end, &al), *mk = field(&p, end, &ml);
    char *pre = dupn(prefix, pl), *del = dupn(delim, dl), *aft = dupn(after, al);
    if (!pre || !del || !aft)
        goto out;
    size_t max = ml ? (unsigned char)mk[0] % 12 : 1000;
    bool has_after = al > 0;
    ztd_s3_list_req q = {"b/",
                         2,
                         pre,
                         strlen(pre),
                         del,
                         strlen(del),
                         has_after ? aft : NULL,
                         has_after ? strlen(aft) : 0,
                         max};
    ztd_s3_list(&q, NAMES, N, name_at, NULL, &pg);
    CHECK(pg.n <= max);
    for (size_t i = 0; i < pg.n; i++) {
        const char *key = NAMES[pg.items[i].index] + 2;
        size_t kl = pg.items[i].prefix_len ? pg.items[i].prefix_len : strlen(key);
        CHECK(!strncmp(NAMES[pg.items[i].index], "b/", 2));
        CHECK(kl >= q.prefix_len && !memcmp(key, pre, q.prefix_len));
        if (has_after)
            CHECK(strncmp(key, aft, kl) >= 0);
        if (pg.items[i].prefix_len)
            CHECK(q.delim_len && kl >= q.delim_len &&
                  !memcmp(key + kl - q.delim_len, del, q.delim_len));
        if (i)
            CHECK(pg.items[i].index > pg.items[i - 1].index);
    }
out:
    free(pre);
    free(del);
    free(aft);
    return 0;
}
