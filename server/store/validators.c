/*
 * The validator rules (see validators.h): the validators of each
 * representation, and how a request's conditions match entity-tags
 * (If-Match, If-None-Match, If-Range's entity-tag): pure functions over
 * NUL-terminated strings, no allocation, no locale, no clock.
 */
#include "store/validators.h"
#include "store/catalog.h"
#include "store/catalog_v2.h"
#include "store/source.h"
#include "core/hex.h"
#include "core/lex.h"

#include <stdio.h>
#include <string.h>

#define IMMUTABLE "public, max-age=31536000, immutable"
#define IMMUTABLE_PRIVATE "private, max-age=31536000, immutable"

/* "\"<s>\"" into out (s is a manifest digest string, shorter than out). */
static void quote_etag(char *out, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (n + 3 > cap)
        n = cap - 3;
    out[0] = '"';
    memcpy(out + 1, s, n);
    out[n + 1] = '"';
    out[n + 2] = 0;
}

void ztd_component_validators(const struct ztd_entry *e, const zt_component *c, bool decoded,
                              bool verified, bool blob, ztd_repr_validators *out)
{
    memset(out, 0, sizeof(*out));
    zt_digest_kind dk = zt_component_digest_kind(c);
    size_t dn = 0;
    const uint8_t *d = zt_component_digest_bytes(c, &dn);
    bool zstd = zt_component_encoding(c) == ZT_ENC_ZSTD;
    bool of_decoded = zt_component_digest_scope(c) == ZT_DIGEST_OF_DECODED;
    bool sha = dk == ZT_DIGEST_SHA256 && d && dn == 32;
    bool named = verified && d && (sha || (of_decoded && dk == ZT_DIGEST_XXH3));
    /* which representation the digest covers: a raw component's both */
    bool covers = decoded ? (!zstd || of_decoded) : (!zstd || !of_decoded);
    uint64_t len = decoded ? zt_component_decoded_length(c) : zt_component_length(c);
    out->sha256 = verified && sha && covers ? d : NULL;
    out->digest_named = named && covers;
    if (out->digest_named) {
        quote_etag(out->etag, sizeof(out->etag), zt_component_digest(c));
    } else if (!decoded) {
        ztd_entry_source(e)->span_etag(e, zt_component_offset(c), len, out->etag);
    } else if (named) {
        snprintf(out->etag, sizeof(out->etag), "\"%s.identity\"", zt_component_digest(c));
    } else {
        char id[40];
        ztd_entry_source(e)->span_etag(e, zt_component_offset(c), len, id);
        snprintf(out->etag, sizeof(out->etag), "\"%.32s.identity\"", id + 1);
    }
    out->immutable = blob && named;
    if (!verified && d && ztd_entry_source(e)->weak_unverified)
        ztd_etag_weaken(out->etag, sizeof(out->etag));
}

void ztd_etag_weaken(char *etag, size_t cap)
{
    size_t n = strlen(etag);
    if (etag[0] != '"' || n + 3 > cap)
        return;
    memmove(etag + 2, etag, n + 1);
    etag[0] = 'W';
    etag[1] = '/';
}

void ztd_raw_etag(const struct ztd_entry *e, char out[96])
{
    if (e->v2 && e->v2->raw_etag[0])
        memcpy(out, e->v2->raw_etag, sizeof(e->v2->raw_etag));
    else
        memcpy(out, e->file_etag, sizeof(e->file_etag));
}

void ztd_raw_etag_listed(const struct ztd_entry *e, char out[96])
{
    const uint8_t *sha = ztd_entry_plain_sha256_known(e);
    if (!sha) {
        ztd_raw_etag(e, out);
        return;
    }
    ztd_sha256_etag(sha, out);
}

void ztd_tagged_etag(char out[96], const char *tag, const struct ztd_entry *e)
{
    size_t n = strnlen(tag, 96 - 36);
    const char *id = ztd_v2_json_id(e->v2);
    out[0] = '"';
    memcpy(out + 1, tag, n);
    out[n + 1] = '-';
    memcpy(out + n + 2, id ? id : e->file_etag + 1, 32);
    memcpy(out + n + 34, "\"", 2);
}

void ztd_sha256_etag(const uint8_t sha[32], char *out)
{
    memcpy(out, "\"sha256:", 8);
    ztd_hex_encode(sha, 32, out + 8);
    memcpy(out + 72, "\"", 2);
}

const char *ztd_validators_cache_control(const ztd_repr_validators *v, bool private_reads,
                                         const char *configured)
{
    if (v->immutable)
        return private_reads ? IMMUTABLE_PRIVATE : IMMUTABLE;
    return private_reads ? "private, no-cache" : configured;
}

/* ---- conditions */

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
