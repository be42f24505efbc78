/*
 * query.c: query parameter names, each at most once (see query.h). No allocation; reads
 * only the bytes it is given.
 */
#include "http/query.h"
#include "core/hex.h"

#include <stdbool.h>
#include <string.h>

/* The next decoded byte of s[*i..n): "%XX" is one byte, anything else itself. */
static unsigned char next_byte(const char *s, size_t n, size_t *i)
{
    if (s[*i] == '%' && *i + 2 < n) {
        int hi = ztd_hex_value(s[*i + 1]), lo = ztd_hex_value(s[*i + 2]);
        if (hi >= 0 && lo >= 0) {
            *i += 3;
            return (unsigned char)(hi << 4 | lo);
        }
    }
    return (unsigned char)s[(*i)++];
}

static bool same_decoded(const char *a, size_t an, const char *b, size_t bn)
{
    size_t i = 0, j = 0;
    while (i < an && j < bn)
        if (next_byte(a, an, &i) != next_byte(b, bn, &j))
            return false;
    return i == an && j == bn;
}

void ztd_query_begin(ztd_query_names *q)
{
    memset(q, 0, sizeof(*q));
}

ztd_query_status ztd_query_name(ztd_query_names *q, const char *name, size_t len)
{
    if (q->status || !name || len == 0)
        return q->status;
    for (size_t k = 0; k < q->n; k++) {
        if (same_decoded(q->name[k], q->len[k], name, len)) {
            q->status = ZTD_QUERY_DUPLICATE;
            q->bad = name;
            q->bad_len = len;
            return q->status;
        }
    }
    if (q->n == ZTD_QUERY_MAX)
        return q->status = ZTD_QUERY_TOO_MANY;
    q->name[q->n] = name;
    q->len[q->n++] = len;
    return ZTD_QUERY_OK;
}

void ztd_query_bad_name(const ztd_query_names *q, char *out, size_t cap)
{
    size_t n = q->bad ? q->bad_len : 0, o = 0;
    if (n > 64)
        n = 64;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        unsigned char c = (unsigned char)q->bad[i];
        out[o++] = c > 0x20 && c < 0x7f && c != '"' && c != '\\' ? (char)c : '?';
    }
    out[o] = 0;
}
