/*
 * The zTensor v2 manifest schema (§3.2-3.5, §7.1) -> the in-memory model.
 * The CBOR is already known to be deterministic (cbor_decode.c), so map keys
 * are unique and in order. Here: required fields and their types, the name
 * rules, attribute values, shapes, the shard table and every part's fields.
 * Unknown keys are ignored at every level (§3.1). The rules that relate
 * fields to each other and to the file (blob bounds, overlap, layouts) are
 * in v2_validate.c.
 *
 * Readings (docs/FORMAT-NOTES.md): an optional field that is present must
 * have its type (null is not "absent"); encodings "zstd" (upstream's writers)
 * and "zt.zstd-seekable/1" are decoded, any other id is kept and refused
 * only when the part is decoded; a digest "<alg>:<lowercase hex>" with an
 * algorithm other than xxh3 or sha256 is kept but cannot be checked.
 */
#include "internal.h"

#include <string.h>

#define SCHEMA(err, item, obj, part, rule, ...)                                                    \
    ZT_V2_FAIL((err), ZT_E_SCHEMA, (obj), (part), 1, (item)->at, rule, __VA_ARGS__)

typedef struct fname {
    const char *s;
    size_t n;
} fname;
#define F(x)                                                                                       \
    {                                                                                              \
        x, sizeof(x) - 1                                                                           \
    }

/* One pass over a map: out[i] = the value under fs[i] or NULL. */
static void fields(const zt_value *map, const fname *fs, size_t nf, const zt_value **out)
{
    for (size_t f = 0; f < nf; f++)
        out[f] = NULL;
    for (uint32_t i = 0; i < map->n; i++) {
        const zt_value *k = &map->v.items[2 * i];
        for (size_t f = 0; k->kind == ZT_VAL_TEXT && f < nf; f++)
            if (k->n == fs[f].n && !memcmp(k->v.s, fs[f].s, k->n))
                out[f] = k + 1;
    }
}

/* §3.5: non-empty, at most 1024 bytes, no U+0000 (UTF-8 is the decoder's). */
static zt_status name_ok(const zt_value *k, const char *what, const char *obj, const char *part,
                         zt_error *err)
{
    if (k->kind != ZT_VAL_TEXT)
        return ZT_V2_FAIL(err, ZT_E_NAME, obj, part, 1, k->at, "§3.5", "%s is not a text string",
                          what);
    if (k->n == 0 || k->n > ZT_V2_MAX_NAME || memchr(k->v.s, 0, k->n))
        return ZT_V2_FAIL(err, ZT_E_NAME, obj, part, 1, k->at, "§3.5",
                          "%s \"%.80s\" must be 1-1024 bytes without U+0000 (it is %u bytes)", what,
                          k->v.s, k->n);
    return ZT_OK;
}

/* §3.1: integers, text, bytes, booleans, null, floats, arrays and maps;
 * no tags (nor undefined or other simple values). Depth is bounded by the
 * decoder (32 levels from the root). */
zt_status zt__v2_attr_value_ok(const zt_value *v, const char *obj, uint64_t at, zt_error *err)
{
    bool off = at != UINT64_MAX; /* a tag's own offset is not kept: its container's is given */
    switch ((zt_value_kind)v->kind) {
    case ZT_VAL_TAG:
        return ZT_V2_FAIL(err, ZT_E_SCHEMA, obj, NULL, off, off ? at : 0, "§3.1",
                          "attribute value uses CBOR tag %llu", (unsigned long long)v->tag);
    case ZT_VAL_UNDEFINED:
    case ZT_VAL_SIMPLE:
        return ZT_V2_FAIL(err, ZT_E_SCHEMA, obj, NULL, off, off ? v->at : 0, "§3.1",
                          "attribute value is a CBOR simple value other than false, true or "
                          "null");
    case ZT_VAL_ARRAY:
    case ZT_VAL_MAP:
        for (uint32_t i = 0; i < (v->kind == ZT_VAL_MAP ? 2 * v->n : v->n); i++) {
            zt_status st = zt__v2_attr_value_ok(&v->v.items[i], obj, off ? v->at : at, err);
            if (st)
                return st;
        }
        return ZT_OK;
    default:
        return ZT_OK;
    }
}

static zt_status attributes(const zt_value *v, const char *obj, const zt_value **out, zt_error *err)
{
    if (!v)
        return ZT_OK;
    if (v->kind != ZT_VAL_MAP)
        return SCHEMA(err, v, obj, NULL, "§3.1", "\"attributes\" must be a map");
    for (uint32_t i = 0; i < v->n; i++) {
        zt_status st = name_ok(&v->v.items[2 * i], "attribute key", obj, NULL, err);
        if (!st)
            st = zt__v2_attr_value_ok(&v->v.items[2 * i + 1], obj, v->at, err);
        if (st)
            return st;
    }
    *out = v;
    return ZT_OK;
}

/* "<alg>:<lowercase hex>" (§3.4). xxh3 and sha256 are parsed; another
 * well-formed algorithm is kept with kind NONE. */
static bool digest_parse(const zt_value *v, zt_digest_kind *kind, uint8_t bin[32], bool any_alg)
{
    if (v->kind != ZT_VAL_TEXT)
        return false;
    const char *s = v->v.s, *colon = memchr(s, ':', v->n);
    if (!colon || colon == s)
        return false;
    size_t alen = (size_t)(colon - s), hlen = v->n - alen - 1;
    for (size_t i = 0; i < alen; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
              s[i] == '_' || s[i] == '-'))
            return false;
    if (hlen == 0 || hlen % 2)
        return false;
    for (size_t i = 0; i < hlen; i++)
        if (!((colon[1 + i] >= '0' && colon[1 + i] <= '9') ||
              (colon[1 + i] >= 'a' && colon[1 + i] <= 'f')))
            return false;
    bool xxh = alen == 4 && !memcmp(s, "xxh3", 4), sha = alen == 6 && !memcmp(s, "sha256", 6);
    if (xxh || sha) {
        if (hlen != (xxh ? 16u : 64u))
            return false;
        return zt_digest_parse(s, v->n, kind, bin) == ZT_OK;
    }
    *kind = ZT_DIGEST_NONE;
    return any_alg;
}

static zt_status get_u64(const zt_value *v, const char *what, const char *obj, const char *part,
                         const char *rule, uint64_t *out, zt_error *err)
{
    if (v->kind != ZT_VAL_UINT)
        return zt__fail(err, ZT_E_SCHEMA, obj, part, 1, v->at,
                        "v2 %s: \"%s\" must be an unsigned "
                        "integer",
                        rule, what);
    *out = v->v.u;
    return ZT_OK;
}

/* §7.1: 1-64 bytes of [A-Za-z0-9._-], not starting with '.'. */
static bool shard_name_ok(const zt_value *k)
{
    if (k->n == 0 || k->n > 64 || k->v.s[0] == '.')
        return false;
    for (uint32_t i = 0; i < k->n; i++) {
        char c = k->v.s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

static zt_status parse_shard(zt__model *m, const zt_value *k, const zt_value *v, zt__shard *sh,
                             zt_error *err)
{
    if (k->kind != ZT_VAL_TEXT)
        return SCHEMA(err, k, NULL, NULL, "§7.1", "a shard table key is not text");
    if (!shard_name_ok(k))
        return ZT_V2_FAIL(err, ZT_E_NAME, NULL, NULL, 1, k->at, "§7.1",
                          "shard name \"%.80s\" must be 1-64 bytes of A-Z a-z 0-9 . _ - and "
                          "not start with '.'",
                          k->v.s);
    sh->name = k->v.s;
    if (v->kind != ZT_VAL_MAP)
        return SCHEMA(err, v, NULL, NULL, "§7.1", "shard \"%s\" must be a map", sh->name);
    static const fname fs[2] = {F("size"), F("digest")};
    const zt_value *f[2];
    fields(v, fs, 2, f);
    if (!f[0] || !f[1])
        return ZT_V2_FAIL(err, ZT_E_SHARD, NULL, NULL, 1, v->at, "§7.1",
                          "shard \"%s\" must carry \"size\" and \"digest\"", sh->name);
    zt_status st = get_u64(f[0], "size", NULL, NULL, "§7.1", &sh->size, err);
    if (st)
        return st;
    if (sh->size < 8 + ZT_V2_FOOTER)
        return ZT_V2_FAIL(err, ZT_E_SHARD, NULL, NULL, 1, v->at, "§7.1",
                          "shard \"%s\" declares %llu bytes, less than a container (48)", sh->name,
                          (unsigned long long)sh->size);
    if (!digest_parse(f[1], &sh->kind, sh->bin, false))
        return ZT_V2_FAIL(err, ZT_E_DIGEST_FORMAT, NULL, NULL, 1, v->at, "§7.1",
                          "shard \"%s\" digest must be \"xxh3:<16 hex>\" or \"sha256:<64 hex>\" "
                          "in lowercase",
                          sh->name);
    sh->digest = f[1]->v.s;
    sh->status = ZT_E_SHARD;
    (void)m;
    return ZT_OK;
}

static zt_status parse_shards(zt__model *m, const zt_value *v, zt_error *err)
{
    if (!v)
        return ZT_OK;
    if (v->kind != ZT_VAL_MAP)
        return SCHEMA(err, v, NULL, NULL, "§3.2", "\"shards\" must be a map");
    zt__v2_info *vi = m->v2;
    vi->shards = zt__arena_alloc(&m->arena, (v->n ? v->n : 1) * sizeof(zt__shard));
    if (!vi->shards)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    memset(vi->shards, 0, (v->n ? v->n : 1) * sizeof(zt__shard));
    /* No fd before open_shards opens one: zt__v2_close closes every fd >= 0
     * of the shards counted, and a table refused at shard i counts it. Left
     * at 0, that closed fd 0, which another thread may hold for another file. */
    for (uint32_t i = 0; i < v->n; i++)
        vi->shards[i].fd = -1;
    for (uint32_t i = 0; i < v->n; i++) {
        zt_status st =
            parse_shard(m, &v->v.items[2 * i], &v->v.items[2 * i + 1], &vi->shards[i], err);
        vi->nshards = i + 1; /* closed by zt__v2_close even on failure */
        if (st)
            return st;
    }
    return ZT_OK;
}

/* Shard names are in canonical order (length, then bytes): binary search. */
static uint32_t find_shard(const zt__v2_info *vi, const char *s, size_t n)
{
    size_t lo = 0, hi = vi->nshards;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *t = vi->shards[mid].name;
        size_t tn = strlen(t);
        int c = tn != n ? (tn < n ? -1 : 1) : memcmp(t, s, n);
        if (!c)
            return (uint32_t)mid + 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static zt_status part_encoding(const zt_value *enc, const zt_value *dlen, const char *obj,
                               struct zt_component *c, zt_error *err)
{
    if (!enc != !dlen)
        return ZT_V2_FAIL(err, ZT_E_ENCODING, obj, c->role, 1, (enc ? enc : dlen)->at, "§3.4",
                          "\"decoded_length\" must be present if and only if \"encoding\" is");
    if (!enc)
        return ZT_OK;
    if (enc->kind != ZT_VAL_TEXT)
        return SCHEMA(err, enc, obj, c->role, "§3.4", "\"encoding\" must be a text string");
    zt_status st =
        get_u64(dlen, "decoded_length", obj, c->role, "§3.4", &c->uncompressed_length, err);
    if (st)
        return st;
    c->has_uncompressed = true;
    c->encoding_name = enc->v.s;
    if (zt__value_text_eq(enc, "zstd")) {
        c->encoding = ZT_ENC_ZSTD;
    } else if (zt__value_text_eq(enc, "zt.zstd-seekable/1")) {
        c->encoding = ZT_ENC_ZSTD;
        c->seekable = true;
    } else {
        c->encoding = ZT_ENC_OTHER;
    }
    return ZT_OK;
}

static zt_status part_blob(const zt_value *pv, const zt_value *v, const char *obj,
                           struct zt_component *c, zt_error *err)
{
    if (!v)
        return SCHEMA(err, pv, obj, c->role, "§3.4", "part has no \"blob\"");
    if (v->kind != ZT_VAL_ARRAY || v->n != 2)
        return SCHEMA(err, v, obj, c->role, "§3.4",
                      "\"blob\" must be an array of exactly two "
                      "unsigned integers [offset, length]");
    zt_status st = get_u64(&v->v.items[0], "blob[0]", obj, c->role, "§3.4", &c->offset, err);
    return st ? st : get_u64(&v->v.items[1], "blob[1]", obj, c->role, "§3.4", &c->length, err);
}

static zt_status parse_part(zt__model *m, const char *obj, const zt_value *k, const zt_value *v,
                            struct zt_component *c, zt_error *err)
{
    zt_status st = name_ok(k, "part name", obj, NULL, err);
    if (st)
        return st;
    c->role = k->v.s;
    if (v->kind != ZT_VAL_MAP)
        return SCHEMA(err, v, obj, c->role, "§3.4", "part must be a map");
    enum { P_DTYPE, P_TYPE, P_BLOB, P_SHARD, P_ENC, P_DLEN, P_DIGEST, P_N };
    static const fname fs[P_N] = {F("dtype"),    F("type"),           F("blob"),  F("shard"),
                                  F("encoding"), F("decoded_length"), F("digest")};
    const zt_value *f[P_N];
    fields(v, fs, P_N, f);
    if (!f[P_DTYPE])
        return ZT_V2_FAIL(err, ZT_E_DTYPE, obj, c->role, 1, v->at, "§3.4", "part has no \"dtype\"");
    c->dtype = f[P_DTYPE]->kind == ZT_VAL_TEXT ? zt_dtype_parse(f[P_DTYPE]->v.s, f[P_DTYPE]->n)
                                               : ZT_DTYPE_INVALID;
    if (!c->dtype || c->dtype == ZT_DTYPE_BOOL)
        return ZT_V2_FAIL(err, ZT_E_DTYPE, obj, c->role, 1, f[P_DTYPE]->at, "§4.1",
                          "dtype must be one of the 12 storage types (bool is a logical type)");
    if (f[P_TYPE]) {
        if (f[P_TYPE]->kind != ZT_VAL_TEXT)
            return ZT_V2_FAIL(err, ZT_E_TYPE, obj, c->role, 1, f[P_TYPE]->at, "§3.4",
                              "\"type\" must be a text string");
        c->type = f[P_TYPE]->v.s;
    }
    if ((st = part_blob(v, f[P_BLOB], obj, c, err)) ||
        (st = part_encoding(f[P_ENC], f[P_DLEN], obj, c, err)))
        return st;
    if (f[P_SHARD]) {
        if (f[P_SHARD]->kind != ZT_VAL_TEXT)
            return SCHEMA(err, f[P_SHARD], obj, c->role, "§3.4", "\"shard\" must be a text string");
        c->shard = find_shard(m->v2, f[P_SHARD]->v.s, f[P_SHARD]->n);
        c->shard_name = f[P_SHARD]->v.s;
        if (!c->shard)
            return ZT_V2_FAIL(err, ZT_E_SHARD, obj, c->role, 1, f[P_SHARD]->at, "§3.4",
                              "shard \"%.80s\" is not declared in the shard table",
                              f[P_SHARD]->v.s);
    }
    if (f[P_DIGEST]) {
        if (!digest_parse(f[P_DIGEST], &c->digest_kind, c->digest_bin, true))
            return ZT_V2_FAIL(err, ZT_E_DIGEST_FORMAT, obj, c->role, 1, f[P_DIGEST]->at, "§3.4",
                              "digest must be \"<algorithm>:<lowercase hex>\" (xxh3: 16 hex "
                              "digits, sha256: 64)");
        c->digest = f[P_DIGEST]->v.s;
        c->digest_decoded = true;
    }
    return ZT_OK;
}

static zt_status parse_shape(zt__model *m, const zt_value *v, struct zt_object *o, zt_error *err)
{
    if (!v)
        return ZT_V2_FAIL(err, ZT_E_SCHEMA, o->name, NULL, 1, o->at, "§3.3",
                          "object has no \"shape\"");
    if (v->kind != ZT_VAL_ARRAY)
        return SCHEMA(err, v, o->name, NULL, "§3.3", "\"shape\" must be an array");
    if (v->n > ZT_MAX_NDIM)
        return ZT_V2_FAIL(err, ZT_E_LIMIT, o->name, NULL, 1, v->at, "§3.3",
                          "shape has rank %u; at most 64", v->n);
    o->has_shape = true;
    o->ndim = v->n;
    if (!(o->shape = zt__arena_alloc(&m->arena, (v->n ? v->n : 1) * sizeof(uint64_t))))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    uint64_t prod = 1;
    for (uint32_t i = 0; i < v->n; i++) {
        zt_status st =
            get_u64(&v->v.items[i], "shape[i]", o->name, NULL, "§3.3", &o->shape[i], err);
        if (st)
            return st;
        if (!zt__mul_ok(prod, o->shape[i], &prod))
            return ZT_V2_FAIL(err, ZT_E_SIZE, o->name, NULL, 1, v->at, "§3.3",
                              "the product of the shape overflows 64 bits");
    }
    return ZT_OK;
}

static zt_status parse_object(zt__model *m, const zt_value *k, const zt_value *v,
                              struct zt_object *o, zt_error *err)
{
    zt_status st = name_ok(k, "object name", NULL, NULL, err);
    if (st)
        return st;
    o->name = k->v.s;
    o->name_len = k->n;
    o->source_name = "";
    o->at = v->at;
    if (v->kind != ZT_VAL_MAP)
        return SCHEMA(err, v, o->name, NULL, "§3.3", "object must be a map");
    enum { O_SHAPE, O_LAYOUT, O_PARTS, O_ATTR, O_N };
    static const fname fs[O_N] = {F("shape"), F("layout"), F("parts"), F("attributes")};
    const zt_value *f[O_N];
    fields(v, fs, O_N, f);
    if ((st = parse_shape(m, f[O_SHAPE], o, err)))
        return st;
    if (!f[O_LAYOUT] || f[O_LAYOUT]->kind != ZT_VAL_TEXT)
        return SCHEMA(err, f[O_LAYOUT] ? f[O_LAYOUT] : v, o->name, NULL, "§3.3",
                      "\"layout\" must be present and text");
    o->format = f[O_LAYOUT]->v.s;
    if ((st = attributes(f[O_ATTR], o->name, &o->attributes, err)))
        return st;
    const zt_value *parts = f[O_PARTS];
    if (!parts || parts->kind != ZT_VAL_MAP)
        return SCHEMA(err, parts ? parts : v, o->name, NULL, "§3.3",
                      "\"parts\" must be present and a map");
    if (parts->n == 0)
        return ZT_V2_FAIL(err, ZT_E_COMPONENTS, o->name, NULL, 1, parts->at, "§3.3",
                          "\"parts\" is empty; an object needs at least one part");
    o->ncomp = parts->n;
    if (!(o->comps = zt__arena_alloc(&m->arena, parts->n * sizeof(*o->comps))))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    memset(o->comps, 0, parts->n * sizeof(*o->comps));
    for (uint32_t i = 0; i < parts->n; i++)
        if ((st = parse_part(m, o->name, &parts->v.items[2 * i], &parts->v.items[2 * i + 1],
                             &o->comps[i], err)))
            return st;
    return ZT_OK;
}

zt_status zt__v2_model_from_cbor(zt__model *m, const zt_value *root, zt_error *err)
{
    if (root->kind != ZT_VAL_MAP)
        return SCHEMA(err, root, NULL, NULL, "§3.1", "the manifest is not a CBOR map");
    enum { R_OBJECTS, R_SHARDS, R_ATTR, R_N };
    static const fname fs[R_N] = {F("objects"), F("shards"), F("attributes")};
    const zt_value *f[R_N];
    fields(root, fs, R_N, f);
    zt_status st = attributes(f[R_ATTR], NULL, &m->attributes, err);
    if (!st)
        st = parse_shards(m, f[R_SHARDS], err);
    if (st)
        return st;
    const zt_value *objs = f[R_OBJECTS];
    if (!objs || objs->kind != ZT_VAL_MAP)
        return SCHEMA(err, objs ? objs : root, NULL, NULL, "§3.2",
                      "\"objects\" must be present and a map");
    m->nobj = objs->n;
    if (!(m->objs = zt__arena_alloc(&m->arena, (objs->n ? objs->n : 1) * sizeof(*m->objs))))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    memset(m->objs, 0, (objs->n ? objs->n : 1) * sizeof(*m->objs));
    for (uint32_t i = 0; i < objs->n; i++)
        if ((st = parse_object(m, &objs->v.items[2 * i], &objs->v.items[2 * i + 1], &m->objs[i],
                               err)))
            return st;
    return zt__model_build_index(m, err);
}

/* ---- the checks v2_fast.c shares, so both paths apply the same rules */

zt_status zt__v2_attributes(const zt_value *v, const char *obj, const zt_value **out, zt_error *err)
{
    return attributes(v, obj, out, err);
}

bool zt__v2_digest_parse(const zt_value *v, zt_digest_kind *kind, uint8_t bin[32], bool any_alg)
{
    return digest_parse(v, kind, bin, any_alg);
}

zt_status zt__v2_parse_shards(zt__model *m, const zt_value *v, zt_error *err)
{
    return parse_shards(m, v, err);
}

uint32_t zt__v2_find_shard(const zt__v2_info *vi, const char *s, size_t n)
{
    return find_shard(vi, s, n);
}
