/*
 * The in-memory model: file -> objects -> components, built from a decoded
 * CBOR manifest of either schema into one shape:
 *  - 1.2: "objects", a short `dtype` ("f32") on every component;
 *  - 1.0: "tensors", a long `dtype` ("float32") on the tensor, inherited by
 *    its components, except index roles (indices, indptr, coords) which the
 *    1.0 spec fixes to uint64.
 * Unknown fields are ignored. Structure errors name the object and component.
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define SCHEMA(err, obj, comp, ...) zt__fail((err), ZT_E_SCHEMA, (obj), (comp), 0, 0, __VA_ARGS__)

/* Object names come from the file. With a fixed hash, a hostile file whose
 * names all land in one bucket makes the linear-probing index (and so every
 * open) quadratic: hash flooding. SipHash-1-3 with a per-process random key
 * is the usual answer, and costs about what FNV-1a did per name. */
static uint64_t g_sip_key[2];
static pthread_once_t g_sip_once = PTHREAD_ONCE_INIT;

static void sip_key_init(void)
{
    if (getrandom(g_sip_key, sizeof(g_sip_key), GRND_NONBLOCK) != (ssize_t)sizeof(g_sip_key)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        g_sip_key[0] = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uintptr_t)&ts;
        g_sip_key[1] = ((uint64_t)getpid() << 32) ^ (uintptr_t)g_sip_key;
    }
}

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                   \
    do {                                                                                           \
        v0 += v1, v1 = ROTL(v1, 13), v1 ^= v0, v0 = ROTL(v0, 32);                                  \
        v2 += v3, v3 = ROTL(v3, 16), v3 ^= v2;                                                     \
        v0 += v3, v3 = ROTL(v3, 21), v3 ^= v0;                                                     \
        v2 += v1, v1 = ROTL(v1, 17), v1 ^= v2, v2 = ROTL(v2, 32);                                  \
    } while (0)

uint64_t zt__hash(const char *s, size_t n)
{
    pthread_once(&g_sip_once, sip_key_init);
    const uint8_t *p = (const uint8_t *)s;
    uint64_t k0 = g_sip_key[0], k1 = g_sip_key[1];
    uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
    uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t m = zt__le64(p + i);
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)n << 56;
    for (size_t i = n & ~(size_t)7; i < n; i++)
        b |= (uint64_t)p[i] << (8 * (i & 7));
    v3 ^= b;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}
#undef SIPROUND
#undef ROTL

static bool is_null(const zt_value *v)
{
    return !v || v->kind == ZT_VAL_NULL || v->kind == ZT_VAL_UNDEFINED;
}

/* One pass over a map for several fields: out[i] = the value under fs[i], or
 * NULL; returns the name of a field that appears twice, else NULL. A
 * zt_value_get() per field scanned each component's map seven times, ~10% of
 * opening a file. */
typedef struct field_name {
    const char *name;
    size_t len;
} field_name;
#define FIELD(s)                                                                                   \
    {                                                                                              \
        s, sizeof(s) - 1                                                                           \
    }

/* Returns the name of a field that appears twice, or NULL. A repeated field
 * is refused: decoders that keep the last occurrence would read another
 * file than this one from the same bytes. */
static const char *get_fields(const zt_value *map, const field_name *fs, size_t nf,
                              const zt_value **out)
{
    for (size_t f = 0; f < nf; f++)
        out[f] = NULL;
    for (uint32_t i = 0; i < map->n; i++) {
        const zt_value *k = &map->v.items[2 * i];
        if (k->kind != ZT_VAL_TEXT)
            continue;
        for (size_t f = 0; f < nf; f++)
            if (k->n == fs[f].len && !memcmp(k->v.s, fs[f].name, k->n)) {
                if (out[f])
                    return fs[f].name;
                out[f] = k + 1;
                break;
            }
    }
    return NULL;
}

static zt_status get_uint(const zt_value *v, const char *field, const char *obj, const char *comp,
                          uint64_t *out, zt_error *err)
{
    if (v->kind != ZT_VAL_UINT)
        return SCHEMA(err, obj, comp, "\"%s\" must be an unsigned integer", field);
    *out = v->v.u;
    return ZT_OK;
}

static zt_status parse_version(zt__model *m, const zt_value *root, zt_error *err)
{
    return zt__model_version(m, zt_value_get(root, "version"), err);
}

zt_status zt__model_version(zt__model *m, const zt_value *v, zt_error *err)
{
    if (!v)
        return SCHEMA(err, NULL, NULL, "manifest has no \"version\"");
    if (v->kind != ZT_VAL_TEXT)
        return SCHEMA(err, NULL, NULL, "\"version\" must be a text string");
    m->version = v->v.s;
    unsigned long major = 0, minor = 0;
    char *end;
    major = strtoul(v->v.s, &end, 10);
    if (end == v->v.s || (*end != '.' && *end != 0))
        return zt__fail(err, ZT_E_VERSION, NULL, NULL, 0, 0, "unparseable version \"%.40s\"",
                        v->v.s);
    if (*end == '.') {
        const char *mn = end + 1;
        minor = strtoul(mn, &end, 10);
        if (end == mn)
            return zt__fail(err, ZT_E_VERSION, NULL, NULL, 0, 0, "unparseable version \"%.40s\"",
                            v->v.s);
    }
    if (major != 1)
        return zt__fail(err, ZT_E_VERSION, NULL, NULL, 0, 0,
                        "version %.40s has major version %lu; this reader supports 1.x", v->v.s,
                        major);
    if (minor > 2)
        snprintf(m->warning, sizeof(m->warning),
                 "file version %.40s is newer than this reader (1.2): fields it adds are ignored",
                 v->v.s);
    return ZT_OK;
}

static bool is_index_role(const char *role)
{
    return !strcmp(role, "indices") || !strcmp(role, "indptr") || !strcmp(role, "coords");
}

static zt_status parse_dtype(const zt_value *v, const char *obj, const char *comp, zt_dtype *out,
                             zt_error *err)
{
    if (v->kind != ZT_VAL_TEXT)
        return zt__fail(err, ZT_E_DTYPE, obj, comp, 0, 0, "\"dtype\" must be a text string");
    zt_dtype d = zt_dtype_parse(v->v.s, v->n);
    if (!d)
        d = zt_dtype_parse_long(v->v.s, v->n);
    if (!d)
        return zt__fail(err, ZT_E_DTYPE, obj, comp, 0, 0,
                        "dtype \"%.40s\" is not one of the 13 storage types", v->v.s);
    *out = d;
    return ZT_OK;
}

static zt_status parse_component(zt__model *m, const char *obj, const zt_value *key,
                                 const zt_value *cv, zt_dtype inherited, struct zt_component *c,
                                 zt_error *err)
{
    if (key->kind != ZT_VAL_TEXT)
        return SCHEMA(err, obj, NULL, "component role must be a text string");
    c->role = key->v.s;
    const char *role = c->role;
    if (cv->kind != ZT_VAL_MAP)
        return SCHEMA(err, obj, role, "component must be a map");
    enum { F_DTYPE, F_TYPE, F_OFFSET, F_LENGTH, F_ENCODING, F_ULEN, F_DIGEST, F_N };
    static const field_name k_fields[F_N] = {FIELD("dtype"),    FIELD("type"),
                                             FIELD("offset"),   FIELD("length"),
                                             FIELD("encoding"), FIELD("uncompressed_length"),
                                             FIELD("digest")};
    const zt_value *f[F_N];
    const char *dup = get_fields(cv, k_fields, F_N, f);
    if (dup)
        return zt__fail(err, ZT_E_DUPLICATE, obj, role, 0, 0, "field \"%s\" appears twice", dup);
    zt_status st;
    const zt_value *v = f[F_DTYPE];
    if (!is_null(v)) {
        if ((st = parse_dtype(v, obj, role, &c->dtype, err)))
            return st;
    } else if (m->kind == ZT_KIND_ZT_1_0 || inherited) {
        c->dtype = is_index_role(role) ? ZT_DTYPE_U64 : inherited;
        if (!c->dtype)
            return zt__fail(err, ZT_E_DTYPE, obj, role, 0, 0, "no dtype on tensor or component");
    } else {
        return zt__fail(err, ZT_E_DTYPE, obj, role, 0, 0, "component has no \"dtype\"");
    }
    v = f[F_TYPE];
    if (!is_null(v)) {
        if (v->kind != ZT_VAL_TEXT)
            return zt__fail(err, ZT_E_TYPE, obj, role, 0, 0, "\"type\" must be a text string");
        c->type = v->v.s;
    }
    v = f[F_OFFSET];
    if (!v)
        return SCHEMA(err, obj, role, "component has no \"offset\"");
    if ((st = get_uint(v, "offset", obj, role, &c->offset, err)))
        return st;
    v = f[F_LENGTH];
    if (!v)
        return SCHEMA(err, obj, role, "component has no \"length\"");
    if ((st = get_uint(v, "length", obj, role, &c->length, err)))
        return st;
    v = f[F_ENCODING];
    c->encoding = ZT_ENC_RAW;
    if (!is_null(v)) {
        if (zt__value_text_eq(v, "zstd"))
            c->encoding = ZT_ENC_ZSTD;
        else if (!zt__value_text_eq(v, "raw"))
            return zt__fail(err, ZT_E_ENCODING, obj, role, 0, 0,
                            "encoding must be \"raw\" or \"zstd\"");
    }
    v = f[F_ULEN];
    if (!is_null(v)) {
        if ((st = get_uint(v, "uncompressed_length", obj, role, &c->uncompressed_length, err)))
            return st;
        c->has_uncompressed = true;
    }
    v = f[F_DIGEST];
    if (!is_null(v)) {
        if (v->kind != ZT_VAL_TEXT || !zt__digest_parse_into(c, v->v.s, v->n))
            return zt__fail(err, ZT_E_DIGEST_FORMAT, obj, role, 0, 0,
                            "digest must be \"sha256:<64 hex>\" or \"crc32c:0x<8 hex>\"");
    }
    return ZT_OK;
}

static int cmp_role(const void *a, const void *b)
{
    return strcmp(((const struct zt_component *)a)->role, ((const struct zt_component *)b)->role);
}

zt_status zt__check_duplicate_roles(const struct zt_object *o, zt_error *err)
{
    if (o->ncomp < 2)
        return ZT_OK;
    if (o->ncomp <= 8) {
        for (size_t i = 0; i < o->ncomp; i++)
            for (size_t j = i + 1; j < o->ncomp; j++)
                if (!strcmp(o->comps[i].role, o->comps[j].role))
                    goto dup;
        return ZT_OK;
    }
    struct zt_component *tmp = zt__malloc(o->ncomp * sizeof(*tmp));
    if (!tmp)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    memcpy(tmp, o->comps, o->ncomp * sizeof(*tmp));
    qsort(tmp, o->ncomp, sizeof(*tmp), cmp_role);
    for (size_t i = 1; i < o->ncomp; i++)
        if (!strcmp(tmp[i - 1].role, tmp[i].role)) {
            zt__free(tmp);
            goto dup;
        }
    zt__free(tmp);
    return ZT_OK;
dup:
    return zt__fail(err, ZT_E_DUPLICATE, o->name, NULL, 0, 0, "component role appears twice");
}

static zt_status parse_shape(zt__model *m, const zt_value *v, struct zt_object *o, zt_error *err)
{
    if (is_null(v))
        return ZT_OK;
    if (v->kind != ZT_VAL_ARRAY)
        return SCHEMA(err, o->name, NULL, "\"shape\" must be an array");
    if (v->n > ZT_MAX_NDIM)
        return zt__fail(err, ZT_E_LIMIT, o->name, NULL, 0, 0, "shape has %u dimensions (max %d)",
                        v->n, ZT_MAX_NDIM);
    o->has_shape = true;
    o->ndim = v->n;
    o->shape = zt__arena_alloc(&m->arena, (v->n ? v->n : 1) * sizeof(uint64_t));
    if (!o->shape)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < v->n; i++) {
        if (v->v.items[i].kind != ZT_VAL_UINT)
            return SCHEMA(err, o->name, NULL, "shape[%u] must be an unsigned integer", i);
        o->shape[i] = v->v.items[i].v.u;
    }
    return ZT_OK;
}

static zt_status parse_object(zt__model *m, const zt_value *key, const zt_value *ov,
                              struct zt_object *o, zt_error *err)
{
    if (key->kind != ZT_VAL_TEXT)
        return SCHEMA(err, NULL, NULL, "object name must be a text string");
    o->name = key->v.s;
    o->name_len = key->n;
    o->source_name = "";
    if (ov->kind != ZT_VAL_MAP)
        return SCHEMA(err, o->name, NULL, "object must be a map");
    enum { F_SHAPE, F_FORMAT, F_ATTRIBUTES, F_DTYPE, F_COMPONENTS, F_N };
    static const field_name k_fields[F_N] = {FIELD("shape"), FIELD("format"), FIELD("attributes"),
                                             FIELD("dtype"), FIELD("components")};
    const zt_value *f[F_N];
    const char *dup = get_fields(ov, k_fields, F_N, f);
    if (dup)
        return zt__fail(err, ZT_E_DUPLICATE, o->name, NULL, 0, 0, "field \"%s\" appears twice",
                        dup);
    zt_status st = parse_shape(m, f[F_SHAPE], o, err);
    if (st)
        return st;
    const zt_value *v = f[F_FORMAT];
    o->format = "dense";
    if (!is_null(v)) {
        if (v->kind != ZT_VAL_TEXT)
            return SCHEMA(err, o->name, NULL, "\"format\" must be a text string");
        o->format = v->v.s;
    }
    v = f[F_ATTRIBUTES];
    if (!is_null(v)) {
        if (v->kind != ZT_VAL_MAP)
            return SCHEMA(err, o->name, NULL, "\"attributes\" must be a map");
        o->attributes = v;
    }
    zt_dtype inherited = ZT_DTYPE_INVALID;
    v = f[F_DTYPE];
    if (!is_null(v) && (st = parse_dtype(v, o->name, NULL, &inherited, err)))
        return st;
    const zt_value *comps = f[F_COMPONENTS];
    if (!comps)
        return zt__fail(err, ZT_E_COMPONENTS, o->name, NULL, 0, 0, "object has no \"components\"");
    if (comps->kind != ZT_VAL_MAP)
        return SCHEMA(err, o->name, NULL, "\"components\" must be a map");
    o->ncomp = comps->n;
    o->comps = zt__arena_alloc(&m->arena, (comps->n ? comps->n : 1) * sizeof(*o->comps));
    if (!o->comps)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    memset(o->comps, 0, (comps->n ? comps->n : 1) * sizeof(*o->comps));
    for (uint32_t i = 0; i < comps->n; i++) {
        st = parse_component(m, o->name, &comps->v.items[2 * i], &comps->v.items[2 * i + 1],
                             inherited, &o->comps[i], err);
        if (st)
            return st;
    }
    return zt__check_duplicate_roles(o, err);
}

zt_status zt__model_from_cbor(zt__model *m, const zt_value *root, zt_error *err)
{
    if (root->kind != ZT_VAL_MAP)
        return SCHEMA(err, NULL, NULL, "manifest is not a CBOR map");
    static const field_name k_root[4] = {FIELD("version"), FIELD("objects"), FIELD("tensors"),
                                         FIELD("attributes")};
    const zt_value *rf[4];
    const char *dup = get_fields(root, k_root, 4, rf);
    if (dup)
        return zt__fail(err, ZT_E_DUPLICATE, NULL, NULL, 0, 0,
                        "manifest field \"%s\" appears twice", dup);
    zt_status st = parse_version(m, root, err);
    if (st)
        return st;
    const zt_value *objs = zt_value_get(root, "objects");
    /* "objects" is the 1.2 schema, whose files end in the footer magic. One
     * without it lost its last 8 bytes: the footer exists to catch exactly
     * that, so do not read the rest as a 1.0 layout. */
    if (!is_null(objs) && m->kind == ZT_KIND_ZT_1_0)
        return zt__fail(err, ZT_E_TRUNCATED, NULL, NULL, 0, 0,
                        "manifest uses the 1.2 schema (\"objects\") but the file has no footer "
                        "magic \"ZTEN1000\": file truncated");
    if (is_null(objs)) {
        objs = zt_value_get(root, "tensors");
        if (!is_null(objs))
            m->kind = ZT_KIND_ZT_1_0;
    }
    if (is_null(objs))
        return SCHEMA(err, NULL, NULL, "manifest has neither \"objects\" nor \"tensors\"");
    if (objs->kind != ZT_VAL_MAP)
        return SCHEMA(err, NULL, NULL, "\"objects\" must be a map");
    const zt_value *attrs = zt_value_get(root, "attributes");
    if (!is_null(attrs)) {
        if (attrs->kind != ZT_VAL_MAP)
            return SCHEMA(err, NULL, NULL, "\"attributes\" must be a map");
        m->attributes = attrs;
    }
    m->nobj = objs->n;
    m->objs = zt__arena_alloc(&m->arena, (objs->n ? objs->n : 1) * sizeof(*m->objs));
    if (!m->objs)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    memset(m->objs, 0, (objs->n ? objs->n : 1) * sizeof(*m->objs));
    for (uint32_t i = 0; i < objs->n; i++) {
        st = parse_object(m, &objs->v.items[2 * i], &objs->v.items[2 * i + 1], &m->objs[i], err);
        if (st)
            return st;
    }
    return zt__model_build_index(m, err);
}

zt_status zt__model_build_index(zt__model *m, zt_error *err)
{
    size_t cap = 16;
    while (cap < m->nobj * 2)
        cap *= 2;
    m->index = zt__arena_alloc(&m->arena, cap * sizeof(uint32_t));
    if (!m->index)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    memset(m->index, 0, cap * sizeof(uint32_t));
    m->index_cap = cap;
    for (size_t i = 0; i < m->nobj; i++) {
        const struct zt_object *o = &m->objs[i];
        size_t h = (size_t)zt__hash(o->name, o->name_len) & (cap - 1);
        while (m->index[h]) {
            const struct zt_object *p = &m->objs[m->index[h] - 1];
            if (p->name_len == o->name_len && !memcmp(p->name, o->name, o->name_len))
                return zt__fail(err, ZT_E_DUPLICATE, o->name, NULL, 0, 0,
                                "object name appears twice");
            h = (h + 1) & (cap - 1);
        }
        m->index[h] = (uint32_t)(i + 1);
    }
    return ZT_OK;
}

const struct zt_object *zt__model_find(const zt__model *m, const char *name, size_t len)
{
    if (!m->index_cap)
        return NULL;
    size_t h = (size_t)zt__hash(name, len) & (m->index_cap - 1);
    while (m->index[h]) {
        const struct zt_object *p = &m->objs[m->index[h] - 1];
        if (p->name_len == len && !memcmp(p->name, name, len))
            return p;
        h = (h + 1) & (m->index_cap - 1);
    }
    return NULL;
}
