/* The validator rules (see validators.h). */
#include "store/validators.h"
#include "store/catalog.h"
#include "store/catalog_v2.h"
#include "store/source.h"

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
        e->src->span_etag(e, zt_component_offset(c), len, out->etag);
    } else if (named) {
        snprintf(out->etag, sizeof(out->etag), "\"%s.identity\"", zt_component_digest(c));
    } else {
        char id[40];
        e->src->span_etag(e, zt_component_offset(c), len, id);
        snprintf(out->etag, sizeof(out->etag), "\"%.32s.identity\"", id + 1);
    }
    out->immutable = blob && named;
}

void ztd_raw_etag(const struct ztd_entry *e, char out[96])
{
    if (e->v2 && e->v2->raw_etag[0])
        memcpy(out, e->v2->raw_etag, sizeof(e->v2->raw_etag));
    else
        memcpy(out, e->file_etag, sizeof(e->file_etag));
}

const char *ztd_validators_cache_control(const ztd_repr_validators *v, bool private_reads,
                                         const char *configured)
{
    if (v->immutable)
        return private_reads ? IMMUTABLE_PRIVATE : IMMUTABLE;
    return private_reads ? "private, no-cache" : configured;
}
