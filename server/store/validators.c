/*
 * The validator rules: entity-tags and how a request's conditions match them
 * (If-Match, If-None-Match, If-Range's entity-tag). The rules for making the
 * validators of each representation will join them here. Pure functions over
 * NUL-terminated strings: no allocation, no locale, no clock.
 */
#include "store/validators.h"
#include "core/lex.h"

#include <string.h>

typedef struct etag_ref {
    const char *opaque; /* points at the opening quote */
    size_t len;         /* including both quotes */
    int weak;
} etag_ref;

static int is_etagc(unsigned char c)
{
    return c == 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80;
}

/* entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE (the W/ is case-sensitive) */
static int parse_etag(const char **pp, etag_ref *t)
{
    const char *p = *pp, *q;

    t->weak = 0;
    if (p[0] == 'W' && p[1] == '/') {
        t->weak = 1;
        p += 2;
    }
    if (*p != '"')
        return -1;
    for (q = p + 1; *q != '"'; q++)
        if (*q == '\0' || !is_etagc((unsigned char)*q))
            return -1;
    t->opaque = p;
    t->len = (size_t)(q - p) + 1;
    *pp = q + 1;
    return 0;
}

/* A whole header value that must be exactly one entity-tag (plus OWS). */
static int parse_single_etag(const char *s, etag_ref *t)
{
    const char *p = ztd_skip_ows(s);
    if (parse_etag(&p, t) != 0)
        return -1;
    return *ztd_skip_ows(p) == '\0' ? 0 : -1;
}

static int etag_equal(const etag_ref *a, const etag_ref *b, int weak)
{
    if (!weak && (a->weak || b->weak))
        return 0;
    return a->len == b->len && memcmp(a->opaque, b->opaque, a->len) == 0;
}

int ztd_etag_condition(const char *header, const char *etag, bool exists, int weak)
{
    etag_ref cur;
    int have_cur, matched = 0;
    const char *p;

    if (header == NULL)
        return 0;
    p = ztd_skip_ows(header);
    if (*p == '*')
        return *ztd_skip_ows(p + 1) == '\0' && exists;
    have_cur = etag != NULL && parse_single_etag(etag, &cur) == 0;
    for (;;) {
        etag_ref t;
        p = ztd_skip_ows(p);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '\0')
            break;
        if (parse_etag(&p, &t) != 0)
            return 0;
        if (have_cur && etag_equal(&t, &cur, weak))
            matched = 1;
        p = ztd_skip_ows(p);
        if (*p == ',')
            p++;
        else if (*p != '\0')
            return 0;
    }
    return matched;
}

int ztd_etag_list_match(const char *header, const char *etag, int weak)
{
    return ztd_etag_condition(header, etag, etag != NULL, weak);
}

int ztd_etag_strong_match(const char *value, const char *etag)
{
    etag_ref want, cur;
    if (parse_single_etag(value, &want) != 0 || want.weak)
        return 0;
    if (etag == NULL || parse_single_etag(etag, &cur) != 0)
        return 0;
    return etag_equal(&want, &cur, 0);
}

bool ztd_if_none_match_star(const char *v)
{
    if (!v)
        return false;
    v = ztd_skip_ows(v);
    return v[0] == '*' && (v[1] == 0 || ztd_is_ows(v[1]));
}
