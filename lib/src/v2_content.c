/*
 * The content digest of a zTensor v2 model (§6.4): a hash of the
 * deterministic CBOR of ["zt.content/1", objects reduced to shape, layout,
 * attributes and each part's dtype, type and digest]. Nothing about layout
 * reaches it (offsets, alignment, encodings, shards), so one model has one
 * content digest however it was written or split. It is computed from the
 * manifest alone, never stored, and undefined when a part has no digest.
 *
 * The manifest passed the deterministic-encoding checks, so its objects,
 * parts and attribute maps are already in the required key order, and
 * re-encoding a decoded value (shortest floats) gives back its bytes.
 */
#include "internal.h"

#include <string.h>

static void text(zt_buf *b, const char *s)
{
    zt__cbor_text(b, s, strlen(s));
}

/* Keys in bytewise order of their encodings: "type" < "dtype" < "digest". */
static void encode_part(zt_buf *b, const struct zt_component *c)
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
static void encode_object(zt_buf *b, const struct zt_object *o)
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
    const zt_model *m = &f->model;
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
    zt_buf b = {0};
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
