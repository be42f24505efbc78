/*
 * fuzz_query.c: libFuzzer target for server/http/query.c, the rule that a
 * route reading its query takes each parameter name once. The input is a
 * query string, split on '&' and the first '=' of each argument as
 * libmicrohttpd hands the names over (still encoded).
 * Invariants (a broken one traps), against a second implementation that
 * decodes every name into a buffer first: the status is DUPLICATE exactly
 * when a name decodes like an earlier one, with that second spelling as the
 * bad name; TOO_MANY exactly when a 33rd distinct name comes first; empty
 * names count for nothing; once set, the status never changes; the printable
 * bad name is at most 64 bytes of printable ASCII without '"' or '\\'.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/query.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            __builtin_trap();                                                                      \
    } while (0)

static int hexv(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* "%XX" with two hex digits is one byte; anything else is itself. */
static size_t decode(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == '%' && i + 2 < n && hexv(s[i + 1]) >= 0 && hexv(s[i + 2]) >= 0) {
            out[o++] = (char)(hexv(s[i + 1]) << 4 | hexv(s[i + 2]));
            i += 3;
        } else {
            out[o++] = s[i++];
        }
    }
    return o;
}

typedef struct seen {
    char *d[ZTD_QUERY_MAX];
    size_t n[ZTD_QUERY_MAX];
    size_t k;
} seen;

/* What the second implementation expects of the next name. */
static ztd_query_status expect(seen *s, const char *name, size_t len, char *buf)
{
    size_t dn = decode(name, len, buf);
    for (size_t i = 0; i < s->k; i++)
        if (s->n[i] == dn && !memcmp(s->d[i], buf, dn))
            return ZTD_QUERY_DUPLICATE;
    if (s->k == ZTD_QUERY_MAX)
        return ZTD_QUERY_TOO_MANY;
    s->d[s->k] = malloc(dn + 1);
    CHECK(s->d[s->k]);
    memcpy(s->d[s->k], buf, dn);
    s->n[s->k++] = dn;
    return ZTD_QUERY_OK;
}

static void check_bad_name(const ztd_query_names *q)
{
    char out[80];
    ztd_query_bad_name(q, out, sizeof(out));
    size_t n = strlen(out);
    CHECK(n <= 64);
    CHECK(n == (q->status == ZTD_QUERY_DUPLICATE ? (q->bad_len < 64 ? q->bad_len : 64) : 0));
    for (size_t i = 0; i < n; i++)
        CHECK(out[i] > 0x20 && out[i] < 0x7f && out[i] != '"' && out[i] != '\\');
    char one[1] = {'x'};
    ztd_query_bad_name(q, one, 1);
    CHECK(one[0] == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1), *buf = malloc(size + 1);
    ztd_query_names *q = malloc(sizeof(*q));
    seen s = {0};
    if (!in || !buf || !q)
        goto out;
    memcpy(in, data, size);
    in[size] = 0;
    ztd_query_begin(q);
    ztd_query_status want = ZTD_QUERY_OK;
    for (size_t at = 0; at <= size;) {
        size_t arg = strcspn(in + at, "&"); /* stops at a NUL too: the rest is one name */
        size_t len = strcspn(in + at, "=&");
        if (len > arg)
            len = arg;
        if (at + arg > size)
            arg = size - at;
        const char *name = in + at;
        ztd_query_status before = q->status, got = ztd_query_name(q, name, len);
        if (before) {
            CHECK(got == before); /* the first problem stays */
        } else if (len == 0) {
            CHECK(got == ZTD_QUERY_OK);
        } else {
            want = expect(&s, name, len, buf);
            CHECK(got == want);
            if (got == ZTD_QUERY_DUPLICATE)
                CHECK(q->bad == name && q->bad_len == len);
        }
        CHECK(q->status == got && q->n <= ZTD_QUERY_MAX);
        at += arg + 1;
    }
    check_bad_name(q);
out:
    for (size_t i = 0; i < s.k; i++)
        free(s.d[i]);
    free(in);
    free(buf);
    free(q);
    return 0;
}
