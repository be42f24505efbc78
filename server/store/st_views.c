/*
 * Safetensors views kept per file version (see st_views.h).
 */
#include "store/st_views.h"
#include "core/hex.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "\"<prefix><32 hex of the digest>\"" into out (48 bytes). */
static void etag_of(EVP_MD_CTX *h, const char *prefix, char out[48])
{
    uint8_t d[32];
    unsigned n = 0;
    EVP_DigestFinal_ex(h, d, &n);
    char hex[65];
    ztd_hex_encode(d, 16, hex);
    snprintf(out, 48, "\"%s%.32s\"", prefix, hex);
}

static bool names_bytes(const zt_component *c)
{
    zt_digest_kind k = zt_component_digest_kind(c);
    return (k == ZT_DIGEST_SHA256 || k == ZT_DIGEST_XXH3) && zt_component_digest(c);
}

/* Both ETags: SHA-256 over the header's SHA-256 (the header is hashed once:
 * 10 MB for 100,000 tensors) and the digests, or the identity. */
static bool validators(ztd_st_view *x, const char *identity)
{
    size_t hlen;
    const void *hdr = zt_st_view_header(x->v, &hlen);
    uint8_t hs[32];
    unsigned hn = 0;
    EVP_MD_CTX *h = EVP_MD_CTX_new();
    if (!h)
        return false;
    bool ok = EVP_DigestInit_ex(h, EVP_sha256(), NULL) && EVP_DigestUpdate(h, hdr, hlen) &&
              EVP_DigestFinal_ex(h, hs, &hn) && EVP_DigestInit_ex(h, EVP_sha256(), NULL) &&
              EVP_DigestUpdate(h, hs, sizeof(hs));
    x->digested = true;
    for (size_t i = 0; ok && x->digested && i < zt_st_view_count(x->v); i++) {
        zt_st_tensor t;
        zt_st_view_tensor(x->v, i, &t);
        const char *d = zt_component_digest(t.component);
        x->digested = names_bytes(t.component);
        ok = !x->digested || (EVP_DigestUpdate(h, d, strlen(d)) && EVP_DigestUpdate(h, "\n", 1));
    }
    if (ok && x->digested)
        etag_of(h, "st-", x->digest_etag);
    ok = ok && EVP_DigestInit_ex(h, EVP_sha256(), NULL) && EVP_DigestUpdate(h, hs, sizeof(hs)) &&
         EVP_DigestUpdate(h, identity, strlen(identity));
    if (ok)
        etag_of(h, "st-file-", x->file_etag);
    EVP_MD_CTX_free(h);
    return ok;
}

static ztd_st_view *build(const zt_file *f, const char *identity)
{
    ztd_st_view *x = calloc(1, sizeof(*x));
    if (!x)
        return NULL;
    if (zt_file_get_kind(f) == ZT_KIND_SAFETENSORS) {
        x->own = true;
        return x;
    }
    zt_error err;
    if (!(x->v = zt_st_view_new(f, &err))) {
        if (err.code == ZT_E_NOMEM) {
            free(x);
            return NULL;
        }
        x->err = ZTD_ERR_VIEW_UNSUPPORTED;
        snprintf(x->msg, sizeof(x->msg), "%.*s", (int)sizeof(x->msg) - 1, err.message);
        return x;
    }
    if (!validators(x, identity)) {
        ztd_st_view_free(x);
        return NULL;
    }
    return x;
}

ztd_st_view *ztd_st_view_get(ztd_st_view **slot, const zt_file *f, const char *identity)
{
    ztd_st_view *x = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (x)
        return x;
    if (!(x = build(f, identity)))
        return NULL;
    ztd_st_view *none = NULL;
    if (!__atomic_compare_exchange_n(slot, &none, x, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        ztd_st_view_free(x); /* another request built it first */
        x = none;
    }
    return x;
}

void ztd_st_view_free(ztd_st_view *v)
{
    if (!v)
        return;
    zt_st_view_free(v->v);
    free(v);
}
