/*
 * The state file of a pull (PATH.ztpull): what a later pull needs to resume
 * without trusting anything it cannot check. Text, one record a line:
 *
 *     ztpull 1
 *     size 123456
 *     etag "abc"        (the validator pinned at open; "-" when none)
 *     lm Mon, 23 Nov 2026 10:00:00 GMT   ("-" when none)
 *     components 42
 *     c 7               (component 7, in file order, is on disk and verified)
 *     p 3 67108864      (the first 64 MiB of component 3 are on disk, not yet
 *                        verified: a resume hashes them from the disk and
 *                        fetches the rest; the largest such record counts)
 *
 * The "c" lines are appended after the data they name is made durable, so a
 * kill at any point leaves a prefix of true lines (a cut last line is
 * ignored). The parser is pure (fuzz_pull_state feeds it anything).
 */
#include "remote_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next line of [*p, end) without its '\n'; false at the end or for a
 * last line without '\n' (cut by a kill). */
static bool next_line(const char **p, const char *end, const char **line, size_t *n)
{
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    if (!nl)
        return false;
    *line = *p;
    *n = (size_t)(nl - *p);
    *p = nl + 1;
    return true;
}

static bool parse_u64(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (n == 0 || n > 19)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* "KEY VALUE" with KEY as given: the value into out (cap bytes with the NUL;
 * "-" is the empty string). */
static bool field(const char *line, size_t n, const char *key, char *out, size_t cap)
{
    size_t k = strlen(key);
    if (n <= k + 1 || memcmp(line, key, k) || line[k] != ' ' || n - k - 1 >= cap)
        return false;
    size_t vn = n - k - 1;
    if (memchr(line + k + 1, 0, vn))
        return false;
    memcpy(out, line + k + 1, vn);
    out[vn] = 0;
    if (!strcmp(out, "-"))
        out[0] = 0;
    return true;
}

int ztr__pull_state_parse(const char *buf, size_t len, ztr_pull_state *st, uint8_t *done,
                          uint64_t *prefix, size_t ncomp)
{
    const char *p = buf, *end = buf + len, *line;
    size_t n;
    char num[24];
    uint64_t comps;
    memset(st, 0, sizeof(*st));
    if (!next_line(&p, end, &line, &n) || n != 8 || memcmp(line, "ztpull 1", 8))
        return -1;
    if (!next_line(&p, end, &line, &n) || !field(line, n, "size", num, sizeof(num)) ||
        !parse_u64(num, strlen(num), &st->size))
        return -1;
    if (!next_line(&p, end, &line, &n) || !field(line, n, "etag", st->etag, sizeof(st->etag)))
        return -1;
    if (!next_line(&p, end, &line, &n) || !field(line, n, "lm", st->lm, sizeof(st->lm)))
        return -1;
    if (!next_line(&p, end, &line, &n) || !field(line, n, "components", num, sizeof(num)) ||
        !parse_u64(num, strlen(num), &comps) || comps != ncomp)
        return -1;
    memset(done, 0, ncomp);
    if (prefix)
        memset(prefix, 0, ncomp * sizeof(*prefix));
    while (next_line(&p, end, &line, &n)) {
        uint64_t i, bytes;
        if (n >= 5 && line[0] == 'p' && line[1] == ' ') {
            const char *sp = memchr(line + 2, ' ', n - 2);
            if (!sp || !parse_u64(line + 2, (size_t)(sp - line - 2), &i) || i >= ncomp ||
                !parse_u64(sp + 1, (size_t)(line + n - sp - 1), &bytes))
                return -1;
            if (prefix && bytes > prefix[i])
                prefix[i] = bytes;
            continue;
        }
        if (n < 3 || line[0] != 'c' || line[1] != ' ' || !parse_u64(line + 2, n - 2, &i) ||
            i >= ncomp)
            return -1;
        if (!done[i])
            st->ndone++;
        done[i] = 1;
    }
    return 0;
}

int ztr__pull_state_header(char *out, size_t cap, const ztr_pull_state *st, size_t ncomp)
{
    int n = snprintf(out, cap, "ztpull 1\nsize %llu\netag %s\nlm %s\ncomponents %zu\n",
                     (unsigned long long)st->size, st->etag[0] ? st->etag : "-",
                     st->lm[0] ? st->lm : "-", ncomp);
    return n > 0 && (size_t)n < cap ? n : -1;
}
