/*
 * The fast path of a zTensor v2 manifest: the model built straight from the
 * CBOR bytes of a manifest of the usual shape, without first building a
 * generic value tree of every object and part (which cost 600 M of 719 M
 * instructions for 100,000 objects). The v2 twin of manifest_fast.c.
 *
 * It never decides that a manifest is bad: on anything unusual (a non-text
 * key, a float or simple value where the schema wants a string or an integer,
 * a missing field, a failed check) it answers ZT_E_UNSUPPORTED and the reader
 * starts over with the general decoder, which accepts every valid manifest
 * and words every error. So it only has to be right about what it accepts:
 * exactly what cbor_decode.c (deterministic mode) and v2_manifest.c accept,
 * giving the same model. Hence the checks below that look redundant: every
 * head in its shortest form, map keys in strictly increasing bytewise order
 * of their encodings, text valid UTF-8, the nesting depth, no trailing bytes.
 * Attributes, the shard table and unknown fields go through the general
 * decoder and v2_manifest.c's own checks, at the depth of their level.
 */
#include "common/cbor_cursor.h"
#include "internal.h"

#include <string.h>

#define BAIL ZT_E_UNSUPPORTED

typedef zt__cur cur;

/* The previous key of a map, by its encoded bytes [at, end); end 0: none. */
typedef struct keys {
    size_t at, end;
} keys;

/* A text key sorting strictly after the previous one of its map (so no key
 * repeats): compared on the encoded bytes, as cbor_decode.c does. */
static inline bool key(cur *c, keys *k, const uint8_t **s, size_t *n)
{
    size_t at = c->pos;
    if (!zt__cur_text(c, s, n))
        return false;
    if (k->end) {
        size_t a = k->end - k->at, b = c->pos - at;
        int r = memcmp(c->p + k->at, c->p + at, a < b ? a : b);
        if (r > 0 || (!r && a >= b))
            return false;
    }
    k->at = at;
    k->end = c->pos;
    return true;
}

static inline bool is(const uint8_t *s, size_t n, const char *lit, size_t litn)
{
    return n == litn && !memcmp(s, lit, n);
}
#define IS(s, n, lit) is((s), (n), lit, sizeof(lit) - 1)

/* §3.5 names (objects, parts): 1-1024 bytes, no U+0000. */
static const char *copy_name(cur *c, const uint8_t *s, size_t n)
{
    if (n == 0 || n > ZT_V2_MAX_NAME || memchr(s, 0, n))
        return NULL;
    return zt__cur_copy_text(c, s, n);
}

/* An unknown field (§3.1: ignored): its key must still be UTF-8 and its
 * value well-formed deterministic CBOR. */
static bool skip_field(cur *c, const uint8_t *k, size_t kn, unsigned above)
{
    zt_value *v;
    return zt__utf8_valid(k, kn) && zt__cur_generic(c, above, &v);
}

enum { P_BLOB = 1, P_DTYPE = 2, P_ENC = 4, P_DLEN = 8 };

static bool part_text(cur *c, struct zt_component *x, const uint8_t *k, size_t kn, unsigned *seen)
{
    const uint8_t *s;
    size_t n;
    if (!zt__cur_text(c, &s, &n))
        return false;
    if (IS(k, kn, "dtype")) {
        *seen |= P_DTYPE;
        x->dtype = zt_dtype_parse((const char *)s, n);
        return x->dtype && x->dtype != ZT_DTYPE_BOOL;
    }
    if (IS(k, kn, "digest")) {
        /* parsed in place: a well-formed digest is ASCII, so the copy needs
         * no UTF-8 check (it was 71 bytes of every part) */
        zt_value v = {.kind = ZT_VAL_TEXT, .n = (uint32_t)n, .v.s = (const char *)s};
        x->digest_decoded = true;
        return zt__v2_digest_parse(&v, &x->digest_kind, x->digest_bin, true) &&
               (x->digest = zt__arena_strndup(&c->m->arena, (const char *)s, n));
    }
    const char *t = IS(s, n, "zstd") ? "zstd" : zt__cur_copy_text(c, s, n);
    if (!t)
        return false;
    if (IS(k, kn, "type")) {
        x->type = t;
    } else if (IS(k, kn, "shard")) {
        x->shard_name = t;
        x->shard = zt__v2_find_shard(c->m->v2, t, n);
        return x->shard != 0;
    } else { /* encoding */
        *seen |= P_ENC;
        x->encoding_name = t;
        x->seekable = IS(s, n, "zt.zstd-seekable/1");
        x->encoding = x->seekable || IS(s, n, "zstd") ? ZT_ENC_ZSTD : ZT_ENC_OTHER;
    }
    return true;
}

static bool part_field(cur *c, struct zt_component *x, const uint8_t *k, size_t kn, unsigned *seen)
{
    uint64_t n;
    if (IS(k, kn, "blob")) {
        *seen |= P_BLOB;
        return zt__cur_container(c, 4, 1, &n) && n == 2 && zt__cur_uint(c, &x->offset) &&
               zt__cur_uint(c, &x->length);
    }
    if (IS(k, kn, "decoded_length")) {
        *seen |= P_DLEN;
        x->has_uncompressed = true;
        return zt__cur_uint(c, &x->uncompressed_length);
    }
    if (IS(k, kn, "dtype") || IS(k, kn, "type") || IS(k, kn, "shard") || IS(k, kn, "digest") ||
        IS(k, kn, "encoding"))
        return part_text(c, x, k, kn, seen);
    return skip_field(c, k, kn, 5);
}

static bool part(cur *c, struct zt_component *x)
{
    uint64_t n;
    if (!zt__cur_container(c, 5, 2, &n))
        return false;
    keys ks = {0, 0};
    unsigned seen = 0;
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *k;
        size_t kn;
        if (!key(c, &ks, &k, &kn) || !part_field(c, x, k, kn, &seen))
            return false;
    }
    if (!(seen & P_ENC) != !(seen & P_DLEN))
        return false;
    return (seen & (P_BLOB | P_DTYPE)) == (P_BLOB | P_DTYPE);
}

/* A part is at least 20 bytes: a name, a map, "blob" [a, b], "dtype" "u8". */
static bool parts(cur *c, struct zt_object *o)
{
    uint64_t n;
    if (!zt__cur_container(c, 5, 20, &n) || n == 0)
        return false;
    o->ncomp = (size_t)n;
    if (!(o->comps = zt__arena_alloc(&c->m->arena, n * sizeof(*o->comps))))
        return false;
    memset(o->comps, 0, n * sizeof(*o->comps));
    keys ks = {0, 0};
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *k;
        size_t kn;
        if (!key(c, &ks, &k, &kn) ||
            !(o->comps[i].role = IS(k, kn, "data") ? "data" : copy_name(c, k, kn)) ||
            !part(c, &o->comps[i]))
            return false;
    }
    return true;
}

enum { O_SHAPE = 1, O_LAYOUT = 2, O_PARTS = 4 };

static bool object_field(cur *c, struct zt_object *o, const uint8_t *k, size_t kn, unsigned *seen)
{
    const uint8_t *s;
    size_t n;
    zt_value *v;
    if (IS(k, kn, "parts")) {
        *seen |= O_PARTS;
        return parts(c, o);
    }
    if (IS(k, kn, "shape")) {
        *seen |= O_SHAPE;
        return zt__cur_shape(c, o, true);
    }
    if (IS(k, kn, "layout")) {
        *seen |= O_LAYOUT;
        return zt__cur_text(c, &s, &n) &&
               (o->format = IS(s, n, "dense") ? "dense" : zt__cur_copy_text(c, s, n));
    }
    if (IS(k, kn, "attributes"))
        return zt__cur_generic(c, 3, &v) && !zt__v2_attributes(v, o->name, &o->attributes, NULL);
    return skip_field(c, k, kn, 3);
}

static bool object(cur *c, keys *names, struct zt_object *o)
{
    const uint8_t *k;
    size_t kn;
    uint64_t n;
    if (!key(c, names, &k, &kn) || !(o->name = copy_name(c, k, kn)))
        return false;
    o->name_len = kn;
    o->source_name = "";
    o->at = c->base + c->pos;
    if (!zt__cur_container(c, 5, 2, &n))
        return false;
    keys ks = {0, 0};
    unsigned seen = 0;
    for (uint64_t i = 0; i < n; i++)
        if (!key(c, &ks, &k, &kn) || !object_field(c, o, k, kn, &seen))
            return false;
    return seen == (O_SHAPE | O_LAYOUT | O_PARTS);
}

/* An object is at least 32 bytes: a name, "parts" with one part, "shape",
 * "layout". */
static bool objects(cur *c)
{
    uint64_t n;
    if (!zt__cur_container(c, 5, 32, &n))
        return false;
    zt__model *m = c->m;
    m->nobj = (size_t)n;
    if (!(m->objs = zt__arena_alloc(&m->arena, (n ? n : 1) * sizeof(*m->objs))))
        return false;
    memset(m->objs, 0, (n ? n : 1) * sizeof(*m->objs));
    keys names = {0, 0};
    for (uint64_t i = 0; i < n; i++)
        if (!object(c, &names, &m->objs[i]))
            return false;
    return true;
}

static bool root_field(cur *c, const uint8_t *k, size_t kn, bool *has_objects)
{
    zt_value *v;
    if (IS(k, kn, "objects"))
        return (*has_objects = true) && objects(c);
    if (IS(k, kn, "shards"))
        return zt__cur_generic(c, 1, &v) && !zt__v2_parse_shards(c->m, v, NULL);
    if (IS(k, kn, "attributes"))
        return zt__cur_generic(c, 1, &v) && !zt__v2_attributes(v, NULL, &c->m->attributes, NULL);
    return skip_field(c, k, kn, 1);
}

zt_status zt__v2_model_fast(zt__model *m, const uint8_t *buf, size_t len, uint64_t base_offset)
{
    cur c = {buf, len, 0, base_offset, m, ZT_V2_MAX_DEPTH, true};
    uint64_t n;
    if (!m->v2 || !zt__cur_container(&c, 5, 2, &n))
        return BAIL;
    keys ks = {0, 0};
    bool has_objects = false;
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *k;
        size_t kn;
        if (!key(&c, &ks, &k, &kn) || !root_field(&c, k, kn, &has_objects))
            return BAIL;
    }
    if (c.pos != len || !has_objects || zt__model_build_index(m, NULL))
        return BAIL;
    return ZT_OK;
}
