/*
 * The content digest of a zTensor v2 model (§6.4): a hash of the
 * deterministic CBOR of ["zt.content/1", objects reduced to shape, layout,
 * attributes and each part's dtype, type and digest]. Nothing about layout
 * reaches it (offsets, alignment, encodings, shards), so one model has one
 * content digest however it was written or split. It is computed from the
 * manifest alone, never stored, and undefined when a part has no digest.
 *
 * Also zt_file_identity(): a name for a file's exact bytes, derived from the
 * content digest when the manifest and the part digests pin every byte.
 *
 * The manifest passed the deterministic-encoding checks, so its objects,
 * parts and attribute maps are already in the required key order, and
 * re-encoding a decoded value (shortest floats) gives back its bytes.
 */
#include "internal.h"

#include <string.h>

static void text(zt__buf *b, const char *s)
{
    zt__cbor_text(b, s, strlen(s));
}

/* Keys in bytewise order of their encodings: "type" < "dtype" < "digest". */
static void encode_part(zt__buf *b, const struct zt_component *c)
{
    text(b, c->role);
    zt__cbor_head(b, 5, 2 + (c->type != NULL));
    if (c->type) {
        text(b, "type");
        text(b, c->type);
    }
    text(b, "dtype");
    text(b, zt_dtype_name(c->dtype));
    text(b, "digest");
    text(b, c->digest);
}

/* "parts" < "shape" < "layout" < "attributes". */
static void encode_object(zt__buf *b, const struct zt_object *o)
{
    zt__cbor_text(b, o->name, o->name_len);
    zt__cbor_head(b, 5, 3 + (o->attributes != NULL));
    text(b, "parts");
    zt__cbor_head(b, 5, o->ncomp);
    for (size_t i = 0; i < o->ncomp; i++)
        encode_part(b, &o->comps[i]);
    text(b, "shape");
    zt__cbor_head(b, 4, o->ndim);
    for (size_t i = 0; i < o->ndim; i++)
        zt__cbor_uint(b, o->shape[i]);
    text(b, "layout");
    text(b, o->format);
    if (o->attributes) {
        text(b, "attributes");
        zt__cbor_value_det(b, o->attributes);
    }
}

zt_status zt_file_content_digest(const zt_file *f, zt_digest_kind kind, char out[80], zt_error *err)
{
    const zt__model *m = &f->model;
    out[0] = 0;
    if (m->kind != ZT_KIND_ZT_2)
        return ZT_FAIL(err, ZT_E_UNSUPPORTED, "a content digest is defined for v2 files only");
    if (kind != ZT_DIGEST_SHA256 && kind != ZT_DIGEST_XXH3)
        return ZT_FAIL(err, ZT_E_ARG, "the content digest is sha256 or xxh3");
    if (m->v2->data_shard)
        return ZT_FAIL(err, ZT_E_NOT_FOUND, "v2 §6.4: a data shard has no content digest");
    for (size_t i = 0; i < m->nobj; i++)
        for (size_t j = 0; j < m->objs[i].ncomp; j++)
            if (!m->objs[i].comps[j].digest)
                return zt__fail(err, ZT_E_NOT_FOUND, m->objs[i].name, m->objs[i].comps[j].role, 0,
                                0,
                                "v2 §6.4: the content digest is undefined: a part has "
                                "no digest");
    zt__buf b = {0};
    zt__cbor_head(&b, 4, 2);
    text(&b, "zt.content/1");
    zt__cbor_head(&b, 5, m->nobj);
    for (size_t i = 0; i < m->nobj; i++)
        encode_object(&b, &m->objs[i]);
    zt_hasher *h = b.oom ? NULL : zt_hasher_new(kind);
    if (!h) {
        zt__buf_free(&b);
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    }
    zt_hasher_update(h, b.p, b.len);
    uint8_t bin[32];
    zt_hasher_final(h, bin);
    zt_hasher_free(h);
    zt__buf_free(&b);
    zt_digest_format(kind, bin, out);
    return ZT_OK;
}

/* ---- the identity of these bytes */

#define IDENTITY_MAX_GAPS (64ull << 20)

typedef struct gaps {
    const zt_file *f;
    uint64_t total;
    uint8_t *buf;
    zt_error *err;
    zt_bytes_at_fn *read; /* the caller's bytes outside the blobs, or NULL: the file's */
    void *ctx;
} gaps;

static zt_status zero_gap(void *ud, uint64_t a, uint64_t b)
{
    gaps *g = ud;
    if ((g->total += b - a) > IDENTITY_MAX_GAPS)
        return ZT_FAIL(g->err, ZT_E_NOT_FOUND, "more than 64 MiB outside the blobs");
    for (uint64_t at = a; at < b;) {
        size_t n = b - at > (1u << 16) ? 1u << 16 : (size_t)(b - at);
        zt_status st = ZT_OK;
        if (g->read && g->read(g->ctx, at, n, g->buf) != 0)
            st = zt__fail(g->err, ZT_E_IO, NULL, NULL, 1, at,
                          "the bytes outside the blobs "
                          "could not be had");
        else if (!g->read)
            st = zt__read_at(g->f, at, n, g->buf, g->err);
        if (st)
            return st;
        for (size_t i = 0; i < n; i++)
            if (g->buf[i])
                return zt__fail(g->err, ZT_E_NOT_FOUND, NULL, NULL, 1, at + i,
                                "a byte outside the blobs is not zero (an earlier generation?)");
        at += n;
    }
    return ZT_OK;
}

zt_status zt_file_identity(const zt_file *f, char out[80], zt_error *err)
{
    return zt_file_identity_with(f, NULL, NULL, out, err);
}

zt_status zt_file_identity_with(const zt_file *f, zt_bytes_at_fn *read, void *ctx, char out[80],
                                zt_error *err)
{
    char cd[80];
    out[0] = 0;
    zt_status st = zt_file_content_digest(f, ZT_DIGEST_SHA256, cd, err);
    if (st)
        return st == ZT_E_UNSUPPORTED ? st : ZT_E_NOT_FOUND;
    const zt__model *m = &f->model;
    for (size_t i = 0; i < m->nobj; i++)
        for (size_t j = 0; j < m->objs[i].ncomp; j++)
            if (!m->objs[i].comps[j].shard && m->objs[i].comps[j].encoding != ZT_ENC_RAW)
                return zt__fail(err, ZT_E_NOT_FOUND, m->objs[i].name, m->objs[i].comps[j].role, 0,
                                0,
                                "an encoded part's stored bytes are not named by its "
                                "digest");
    gaps g = {f, 0, zt__malloc(1u << 16), err, read, ctx};
    uint8_t footer[ZT_V2_FOOTER + 8];
    st = g.buf ? zt__v2_walk_gaps(f, zero_gap, &g, err) : ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    zt__free(g.buf);
    if (!st && read && read(ctx, f->size - ZT_V2_FOOTER, ZT_V2_FOOTER, footer) != 0)
        st = zt__fail(err, ZT_E_IO, NULL, NULL, 1, f->size - ZT_V2_FOOTER,
                      "the footer could not be had");
    else if (!st && !read)
        st = zt__read_at(f, f->size - ZT_V2_FOOTER, ZT_V2_FOOTER, footer, err);
    if (st)
        return st;
    zt__put_le64(footer + ZT_V2_FOOTER, f->size);
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
    if (!h)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    zt_hasher_update(h, "zt.identity/1", 14); /* with its NUL: a separator */
    zt_hasher_update(h, cd, strlen(cd));
    zt_hasher_update(h, footer, sizeof(footer));
    uint8_t bin[32];
    zt_hasher_final(h, bin);
    zt_hasher_free(h);
    zt_digest_format(ZT_DIGEST_SHA256, bin, out);
    return ZT_OK;
}
