/*
 * The fast path of opening a file: the model built straight from the CBOR
 * bytes of a manifest of the usual shape (definite lengths, text keys, the
 * 1.2 schema), without first building a generic value tree of every object
 * and component. Known keys are compared in place; only object names, roles,
 * formats, logical types and digests are copied (the role "data" and the
 * format "dense", on nearly every object, are shared literals).
 *
 * It never decides that a file is bad: on anything unusual (indefinite
 * lengths, nulls, a repeated field, "tensors", a malformed value, a failed
 * check) it answers ZT_E_UNSUPPORTED and the reader starts over with the
 * general decoder, which accepts every valid manifest and words every error.
 * So the fast path only has to be right about what it accepts: the same model
 * the general path builds. Attributes and unknown fields are decoded by the
 * general decoder, with the depth left at that level of the manifest.
 */
#include "common/cbor_cursor.h"
#include "internal.h"

#include <string.h>

#define BAIL ZT_E_UNSUPPORTED

int zt__fast_path_disabled; /* both fast paths (1.x, v2); tests compare them to the general one */

typedef zt__cur cur;

static bool is(const uint8_t *s, size_t n, const char *lit)
{
    return n == strlen(lit) && !memcmp(s, lit, n);
}

/* An unknown key is skipped with its value; the key must still be valid text. */
static bool skip_field(cur *c, const uint8_t *k, size_t kn, unsigned depth)
{
    zt_value *v;
    return zt__utf8_valid(k, kn) && zt__cur_generic(c, depth, &v);
}

enum { C_DTYPE = 1, C_TYPE = 2, C_OFFSET = 4, C_LENGTH = 8, C_ENC = 16, C_ULEN = 32, C_DIG = 64 };

static bool component_field(cur *c, struct zt_component *x, const uint8_t *k, size_t kn,
                            unsigned *seen)
{
    const uint8_t *s;
    size_t n;
    unsigned bit = is(k, kn, "dtype")                 ? C_DTYPE
                   : is(k, kn, "type")                ? C_TYPE
                   : is(k, kn, "offset")              ? C_OFFSET
                   : is(k, kn, "length")              ? C_LENGTH
                   : is(k, kn, "encoding")            ? C_ENC
                   : is(k, kn, "uncompressed_length") ? C_ULEN
                   : is(k, kn, "digest")              ? C_DIG
                                                      : 0;
    if (!bit)
        return skip_field(c, k, kn, 5);
    if (*seen & bit)
        return false;
    *seen |= bit;
    switch (bit) {
    case C_OFFSET:
        return zt__cur_uint(c, &x->offset);
    case C_LENGTH:
        return zt__cur_uint(c, &x->length);
    case C_ULEN:
        x->has_uncompressed = true;
        return zt__cur_uint(c, &x->uncompressed_length);
    default:
        break;
    }
    if (!zt__cur_text(c, &s, &n))
        return false;
    switch (bit) {
    case C_DTYPE:
        x->dtype = zt_dtype_parse((const char *)s, n);
        if (!x->dtype)
            x->dtype = zt_dtype_parse_long((const char *)s, n);
        return x->dtype != ZT_DTYPE_INVALID;
    case C_TYPE:
        return (x->type = zt__cur_copy_text(c, s, n)) != NULL;
    case C_ENC:
        x->encoding = is(s, n, "zstd") ? ZT_ENC_ZSTD : ZT_ENC_RAW;
        return is(s, n, "zstd") || is(s, n, "raw");
    default: { /* C_DIG */
        const char *d = zt__cur_copy_text(c, s, n);
        return d && zt__digest_parse_into(x, d, n);
    }
    }
}

static bool component(cur *c, struct zt_component *x)
{
    uint64_t n;
    if (!zt__cur_container(c, 5, 2, &n))
        return false;
    unsigned seen = 0;
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *k;
        size_t kn;
        if (!zt__cur_text(c, &k, &kn) || !component_field(c, x, k, kn, &seen))
            return false;
    }
    return (seen & (C_DTYPE | C_OFFSET | C_LENGTH)) == (C_DTYPE | C_OFFSET | C_LENGTH);
}

static bool components(cur *c, struct zt_object *o)
{
    uint64_t n;
    if (!zt__cur_container(c, 5, 2, &n))
        return false;
    o->ncomp = (size_t)n;
    o->comps = zt__arena_alloc(&c->m->arena, (n ? n : 1) * sizeof(*o->comps));
    if (!o->comps)
        return false;
    memset(o->comps, 0, (n ? n : 1) * sizeof(*o->comps));
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *k;
        size_t kn;
        if (!zt__cur_text(c, &k, &kn) ||
            !(o->comps[i].role = is(k, kn, "data") ? "data" : zt__cur_copy_text(c, k, kn)) ||
            !component(c, &o->comps[i]))
            return false;
    }
    return zt__check_duplicate_roles(o, NULL) == ZT_OK;
}

enum { O_SHAPE = 1, O_FORMAT = 2, O_ATTR = 4, O_COMPS = 8 };

static bool object_field(cur *c, struct zt_object *o, const uint8_t *k, size_t kn, unsigned *seen)
{
    unsigned bit = is(k, kn, "shape")        ? O_SHAPE
                   : is(k, kn, "format")     ? O_FORMAT
                   : is(k, kn, "attributes") ? O_ATTR
                   : is(k, kn, "components") ? O_COMPS
                                             : 0;
    if (is(k, kn, "dtype"))
        return false; /* a tensor-level dtype: the general path handles it */
    if (!bit)
        return skip_field(c, k, kn, 3);
    if (*seen & bit)
        return false;
    *seen |= bit;
    const uint8_t *s;
    size_t n;
    zt_value *v;
    switch (bit) {
    case O_SHAPE:
        return zt__cur_shape(c, o, false);
    case O_FORMAT:
        if (!zt__cur_text(c, &s, &n))
            return false;
        o->format = is(s, n, "dense") ? "dense" : zt__cur_copy_text(c, s, n);
        return o->format != NULL;
    case O_ATTR:
        if (!zt__cur_generic(c, 3, &v) || v->kind != ZT_VAL_MAP)
            return false;
        o->attributes = v;
        return true;
    default:
        return components(c, o);
    }
}

static bool object(cur *c, struct zt_object *o)
{
    const uint8_t *k;
    size_t kn;
    uint64_t n;
    if (!zt__cur_text(c, &k, &kn) || !(o->name = zt__cur_copy_text(c, k, kn)))
        return false;
    o->name_len = kn;
    o->source_name = "";
    o->format = "dense";
    if (!zt__cur_container(c, 5, 2, &n))
        return false;
    unsigned seen = 0;
    for (uint64_t i = 0; i < n; i++)
        if (!zt__cur_text(c, &k, &kn) || !object_field(c, o, k, kn, &seen))
            return false;
    return (seen & O_COMPS) != 0;
}

static bool objects(cur *c)
{
    uint64_t n;
    if (!zt__cur_container(c, 5, 2, &n))
        return false;
    zt__model *m = c->m;
    m->nobj = (size_t)n;
    m->objs = zt__arena_alloc(&m->arena, (n ? n : 1) * sizeof(*m->objs));
    if (!m->objs)
        return false;
    memset(m->objs, 0, (n ? n : 1) * sizeof(*m->objs));
    for (uint64_t i = 0; i < n; i++)
        if (!object(c, &m->objs[i]))
            return false;
    return true;
}

enum { R_VERSION = 1, R_OBJECTS = 2, R_ATTR = 4 };

static bool root_field(cur *c, const uint8_t *k, size_t kn, unsigned *seen, zt_value *version)
{
    unsigned bit = is(k, kn, "version")      ? R_VERSION
                   : is(k, kn, "objects")    ? R_OBJECTS
                   : is(k, kn, "attributes") ? R_ATTR
                                             : 0;
    if (is(k, kn, "tensors"))
        return false;
    if (!bit)
        return skip_field(c, k, kn, 1);
    if (*seen & bit)
        return false;
    *seen |= bit;
    const uint8_t *s;
    size_t n;
    zt_value *v;
    switch (bit) {
    case R_VERSION:
        if (!zt__cur_text(c, &s, &n) || !(version->v.s = zt__cur_copy_text(c, s, n)))
            return false;
        version->kind = ZT_VAL_TEXT;
        version->n = (uint32_t)n;
        return true;
    case R_OBJECTS:
        return objects(c);
    default:
        if (!zt__cur_generic(c, 1, &v) || v->kind != ZT_VAL_MAP)
            return false;
        c->m->attributes = v;
        return true;
    }
}

zt_status zt__model_fast(zt__model *m, const uint8_t *buf, size_t len, uint64_t base_offset)
{
    if (m->kind != ZT_KIND_ZT_1_2)
        return BAIL; /* 1.0 layouts, and 1.2 files cut short: the general path words it */
    cur c = {buf, len, 0, base_offset, m, ZT_MAX_DEPTH, false};
    uint64_t n;
    if (!zt__cur_container(&c, 5, 2, &n))
        return BAIL;
    unsigned seen = 0;
    zt_value version = {0};
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *k;
        size_t kn;
        if (!zt__cur_text(&c, &k, &kn) || !root_field(&c, k, kn, &seen, &version))
            return BAIL;
    }
    if (c.pos != len || (seen & (R_VERSION | R_OBJECTS)) != (R_VERSION | R_OBJECTS))
        return BAIL;
    zt_value *v = zt__arena_alloc(&m->arena, sizeof(*v));
    if (!v)
        return BAIL;
    *v = version;
    if (zt__model_version(m, v, NULL) || zt__model_build_index(m, NULL))
        return BAIL;
    return ZT_OK;
}
