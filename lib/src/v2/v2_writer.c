/*
 * What the writer (writer.c) needs to write zTensor v2: the name rules it
 * must not break, the deterministic manifest (§3.1: map keys in bytewise
 * order of their encodings, shortest floats), the 40-byte footer and the
 * seek table of zt.zstd-seekable/1. The streaming itself, the alignment and
 * the hashing of the decoded bytes are writer.c's, behind its v2 option.
 */
#include "internal.h"

#include <string.h>

bool zt__v2_name_ok(const char *s, size_t n)
{
    return n > 0 && n <= ZT_V2_MAX_NAME && !memchr(s, 0, n) &&
           zt__utf8_valid((const uint8_t *)s, n);
}

static zt_status attrs_ok(const struct zt_object *o, const zt_value *a, zt_error *err)
{
    for (uint32_t i = 0; a && i < a->n; i++) {
        const zt_value *k = &a->v.items[2 * i];
        if (k->kind != ZT_VAL_TEXT || !zt__v2_name_ok(k->v.s, k->n))
            return ZT_V2_FAIL(err, ZT_E_NAME, o ? o->name : NULL, NULL, 0, 0, "§3.5",
                              "attribute key \"%.80s\" must be 1-1024 bytes without U+0000",
                              k->kind == ZT_VAL_TEXT ? k->v.s : "");
        zt_status st = zt__v2_attr_value_ok(k + 1, o ? o->name : NULL, UINT64_MAX, err);
        if (st)
            return st;
    }
    return ZT_OK;
}

zt_status zt__v2_attrs_check(const zt_value *a, zt_error *err)
{
    return attrs_ok(NULL, a, err);
}

zt_status zt__v2_writer_check(struct zt_object *o, zt_error *err)
{
    if (!zt__v2_name_ok(o->name, o->name_len))
        return ZT_V2_FAIL(err, ZT_E_NAME, o->name, NULL, 0, 0, "§3.5",
                          "object names are 1-1024 bytes of UTF-8 without U+0000");
    for (size_t i = 0; i < o->ncomp; i++)
        if (!zt__v2_name_ok(o->comps[i].role, strlen(o->comps[i].role)))
            return ZT_V2_FAIL(err, ZT_E_NAME, o->name, o->comps[i].role, 0, 0, "§3.5",
                              "part names are 1-1024 bytes of UTF-8 without U+0000");
    zt_status st = attrs_ok(o, o->attributes, err);
    return st ? st : zt__v2_check_object(o, err);
}

static void text(zt__buf *b, const char *s)
{
    zt__cbor_text(b, s, strlen(s));
}

/* Part keys in bytewise order: blob, type, dtype, digest, encoding, decoded_length. */
static void encode_part(zt__buf *b, const struct zt_component *c)
{
    bool enc = c->encoding != ZT_ENC_RAW;
    zt__cbor_head(b, 5, 2 + (c->type != NULL) + (c->digest != NULL) + 2 * enc);
    text(b, "blob");
    zt__cbor_head(b, 4, 2);
    zt__cbor_uint(b, c->offset);
    zt__cbor_uint(b, c->length);
    if (c->type) {
        text(b, "type");
        text(b, c->type);
    }
    text(b, "dtype");
    text(b, zt_dtype_name(c->dtype));
    if (c->digest) {
        text(b, "digest");
        text(b, c->digest);
    }
    if (enc) {
        text(b, "encoding");
        text(b, zt_component_encoding_name(c));
        text(b, "decoded_length");
        zt__cbor_uint(b, c->uncompressed_length);
    }
}

/* Text keys sort length-first, which is their bytewise order as CBOR. */
static void sort(const char **keys, size_t *lens, size_t *idx, size_t n)
{
    for (size_t i = 0; i < n; i++)
        lens[i] = strlen(keys[i]), idx[i] = i;
    zt__cbor_sort_keys(keys, lens, idx, n);
}

/* Object keys: parts, shape, layout, attributes. */
static void encode_object(zt__buf *b, const struct zt_object *o)
{
    zt__cbor_text(b, o->name, o->name_len);
    zt__cbor_head(b, 5, 3 + (o->attributes != NULL));
    text(b, "parts");
    zt__cbor_head(b, 5, o->ncomp);
    const char **k = zt__malloc((o->ncomp + 1) * sizeof(*k));
    size_t *l = zt__malloc((o->ncomp + 1) * sizeof(*l)),
           *x = zt__malloc((o->ncomp + 1) * sizeof(*x));
    if (!k || !l || !x) {
        b->oom = true;
    } else {
        for (size_t i = 0; i < o->ncomp; i++)
            k[i] = o->comps[i].role;
        sort(k, l, x, o->ncomp);
        for (size_t i = 0; i < o->ncomp; i++) {
            text(b, o->comps[x[i]].role);
            encode_part(b, &o->comps[x[i]]);
        }
    }
    zt__free((void *)k), zt__free(l), zt__free(x);
    text(b, "shape");
    zt__cbor_head(b, 4, o->ndim);
    for (size_t i = 0; i < o->ndim; i++)
        zt__cbor_uint(b, o->shape[i]);
    text(b, "layout");
    text(b, o->format);
    if (o->attributes) {
        text(b, "attributes");
        zt__cbor_value_det_sorted(b, o->attributes);
    }
}

void zt__v2_encode_manifest(zt__buf *b, const struct zt_object *const *objs, size_t n,
                            const zt_value *attributes)
{
    zt__cbor_head(b, 5, 1 + (attributes != NULL)); /* "objects" < "attributes" */
    text(b, "objects");
    zt__cbor_head(b, 5, n);
    const char **k = zt__malloc((n + 1) * sizeof(*k));
    size_t *l = zt__malloc((n + 1) * sizeof(*l)), *x = zt__malloc((n + 1) * sizeof(*x));
    if (!k || !l || !x) {
        b->oom = true;
    } else {
        for (size_t i = 0; i < n; i++)
            k[i] = objs[i]->name;
        sort(k, l, x, n);
        for (size_t i = 0; i < n; i++)
            encode_object(b, objs[x[i]]);
    }
    zt__free((void *)k), zt__free(l), zt__free(x);
    if (attributes) {
        text(b, "attributes");
        zt__cbor_value_det_sorted(b, attributes);
    }
}

void zt__v2_footer_bytes(uint8_t out[40], uint64_t off, uint64_t len, uint64_t hash)
{
    zt__put_le64(out, off);
    zt__put_le64(out + 8, len);
    zt__put_le64(out + 16, hash);
    memset(out + 24, 0, 8);
    out[24] = ZT_FORMAT_V2;
    memcpy(out + 32, zt__v2_magic, 8);
}

static void le32(zt__buf *b, uint32_t v)
{
    uint8_t p[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    for (int i = 0; i < 4; i++)
        zt__cbor_raw(b, &p[i], 1);
}

/* The zstd seekable format's seek table: a skippable frame (0x184D2A5E) of
 * (compressed, decompressed) u32 pairs, then the frame count, a descriptor
 * without checksums, and 0x8F92EAB1. */
void zt__v2_seek_table(zt__buf *b, const uint32_t *csize, const uint32_t *dsize, size_t frames)
{
    le32(b, 0x184D2A5Eu);
    le32(b, (uint32_t)(frames * 8 + 9));
    for (size_t i = 0; i < frames; i++) {
        le32(b, csize[i]);
        le32(b, dsize[i]);
    }
    le32(b, (uint32_t)frames);
    uint8_t desc = 0;
    zt__cbor_raw(b, &desc, 1);
    le32(b, 0x8F92EAB1u);
}
