/*
 * Hugging Face safetensors: [u64 LE header size N][N bytes of JSON][data].
 * Each tensor becomes a dense object whose "data" component has an absolute
 * offset (8 + N + begin); __metadata__ becomes the file attributes. The JSON
 * is parsed by jansson with duplicate keys refused; every offset pair is
 * checked for order, overlap and bounds, and every size against shape x
 * width, before a tensor is accepted. The mapping and every choice are in
 * docs/FOREIGN-FORMATS.md.
 */
#include "internal.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC_ZT "ZTEN1000"

zt_file_kind zt__detect_kind(const uint8_t *head, size_t n)
{
    if (n >= 8 && !memcmp(head, MAGIC_ZT, 8))
        return ZT_KIND_ZT_1_2;
    /* ALT's magic 0x616C7463 "altc": as text, or as a little-endian int32. */
    if (n >= 4 && (!memcmp(head, "altc", 4) || !memcmp(head, "ctla", 4)))
        return ZT_KIND_ALT;
    if (n >= 9 && head[8] == '{')
        return ZT_KIND_SAFETENSORS;
    return ZT_KIND_ZT_1_2; /* the .zt reader says what is wrong */
}

/* The last entry is zTensor v2's bool (u8 with a logical type), for writing;
 * reading "BOOL" stops at the first. */
static const struct {
    const char *name;
    zt_dtype dtype;
    const char *type;
} k_dtypes[] = {
    {"F64", ZT_DTYPE_F64, NULL},         {"F32", ZT_DTYPE_F32, NULL},
    {"F16", ZT_DTYPE_F16, NULL},         {"BF16", ZT_DTYPE_BF16, NULL},
    {"I64", ZT_DTYPE_I64, NULL},         {"I32", ZT_DTYPE_I32, NULL},
    {"I16", ZT_DTYPE_I16, NULL},         {"I8", ZT_DTYPE_I8, NULL},
    {"U64", ZT_DTYPE_U64, NULL},         {"U32", ZT_DTYPE_U32, NULL},
    {"U16", ZT_DTYPE_U16, NULL},         {"U8", ZT_DTYPE_U8, NULL},
    {"BOOL", ZT_DTYPE_BOOL, NULL},       {"F8_E4M3", ZT_DTYPE_U8, "f8_e4m3fn"},
    {"F8_E5M2", ZT_DTYPE_U8, "f8_e5m2"}, {"BOOL", ZT_DTYPE_U8, "bool"},
};
#define NDTYPES (sizeof(k_dtypes) / sizeof(k_dtypes[0]))

const char *zt_safetensors_dtype(zt_dtype dtype, const char *type)
{
    for (size_t i = 0; i < NDTYPES; i++)
        if (k_dtypes[i].dtype == dtype &&
            (type ? k_dtypes[i].type && !strcmp(type, k_dtypes[i].type) : !k_dtypes[i].type))
            return k_dtypes[i].name;
    return NULL;
}

typedef struct st_ent {
    size_t obj; /* index in m->objs */
    uint64_t begin, end;
} st_ent;

typedef struct st_ctx {
    zt__model *m;
    uint64_t data_start, data_len;
    st_ent *ents;
    size_t nent;
} st_ctx;

#define TFAIL(err, code, name, ...) zt__fail((err), (code), (name), NULL, 0, 0, __VA_ARGS__)

static zt_status get_u64(const json_t *j, const char *name, const char *what, uint64_t *out,
                         zt_error *err)
{
    if (!json_is_integer(j) || json_integer_value(j) < 0)
        return TFAIL(err, ZT_E_SCHEMA, name, "%s must be a non-negative integer", what);
    *out = (uint64_t)json_integer_value(j);
    return ZT_OK;
}

static zt_status parse_dtype(const json_t *j, const char *name, struct zt_component *c,
                             zt_error *err)
{
    const char *s = json_string_value(j);
    if (!s)
        return TFAIL(err, ZT_E_DTYPE, name, "\"dtype\" must be a string");
    for (size_t i = 0; i < NDTYPES; i++)
        if (!strcmp(s, k_dtypes[i].name)) {
            c->dtype = k_dtypes[i].dtype;
            c->type = k_dtypes[i].type;
            return ZT_OK;
        }
    return TFAIL(err, ZT_E_DTYPE, name, "safetensors dtype \"%.40s\" is not supported", s);
}

static zt_status parse_shape(st_ctx *x, const json_t *j, struct zt_object *o, zt_error *err)
{
    if (!json_is_array(j))
        return TFAIL(err, ZT_E_SCHEMA, o->name, "\"shape\" must be an array of integers");
    size_t nd = json_array_size(j);
    if (nd > ZT_MAX_NDIM)
        return TFAIL(err, ZT_E_LIMIT, o->name, "shape has %zu dimensions (max %d)", nd,
                     ZT_MAX_NDIM);
    o->has_shape = true;
    o->ndim = nd;
    if (!(o->shape = zt__arena_alloc(&x->m->arena, (nd ? nd : 1) * sizeof(uint64_t))))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    for (size_t i = 0; i < nd; i++) {
        zt_status st = get_u64(json_array_get(j, i), o->name, "every dimension of \"shape\"",
                               &o->shape[i], err);
        if (st)
            return st;
    }
    return ZT_OK;
}

static zt_status check_size(const struct zt_object *o, uint64_t begin, uint64_t end,
                            uint64_t abs_off, zt_error *err)
{
    const struct zt_component *c = &o->comps[0];
    uint64_t n = zt_dtype_width(c->dtype);
    for (size_t i = 0; i < o->ndim; i++)
        if (!zt__mul_ok(n, o->shape[i], &n))
            return zt__fail(err, ZT_E_SIZE, o->name, NULL, 1, abs_off,
                            "shape x element size overflows 64 bits");
    if (end - begin != n)
        return zt__fail(err, ZT_E_SIZE, o->name, NULL, 1, abs_off,
                        "data_offsets [%llu, %llu] hold %llu bytes but the shape and dtype "
                        "need %llu",
                        (unsigned long long)begin, (unsigned long long)end,
                        (unsigned long long)(end - begin), (unsigned long long)n);
    return ZT_OK;
}

static zt_status parse_offsets(st_ctx *x, const json_t *j, struct zt_object *o, zt_error *err)
{
    uint64_t be[2];
    if (!json_is_array(j) || json_array_size(j) != 2)
        return TFAIL(err, ZT_E_SCHEMA, o->name, "\"data_offsets\" must be [begin, end]");
    for (int i = 0; i < 2; i++) {
        zt_status st =
            get_u64(json_array_get(j, (size_t)i), o->name, "each of \"data_offsets\"", &be[i], err);
        if (st)
            return st;
    }
    if (be[1] < be[0])
        return TFAIL(err, ZT_E_BOUNDS, o->name, "data_offsets [%llu, %llu] end before they begin",
                     (unsigned long long)be[0], (unsigned long long)be[1]);
    if (be[1] > x->data_len)
        return zt__fail(err, ZT_E_BOUNDS, o->name, NULL, 1, x->data_start + be[0],
                        "data_offsets [%llu, %llu] run past the data region, which holds %llu "
                        "bytes",
                        (unsigned long long)be[0], (unsigned long long)be[1],
                        (unsigned long long)x->data_len);
    struct zt_component *c = &o->comps[0];
    c->offset = x->data_start + be[0];
    c->length = be[1] - be[0];
    x->ents[x->nent] = (st_ent){(size_t)(o - x->m->objs), be[0], be[1]};
    x->nent++;
    return check_size(o, be[0], be[1], c->offset, err);
}

static zt_status parse_tensor(st_ctx *x, const char *name, const json_t *t, struct zt_object *o,
                              zt_error *err)
{
    zt__arena *a = &x->m->arena;
    o->name_len = strlen(name);
    if (!(o->name = zt__arena_strndup(a, name, o->name_len)))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    o->source_name = o->name;
    o->format = "dense";
    if (!json_is_object(t))
        return TFAIL(err, ZT_E_SCHEMA, name, "tensor entry must be a JSON object");
    const json_t *dt = json_object_get(t, "dtype"), *sh = json_object_get(t, "shape"),
                 *of = json_object_get(t, "data_offsets");
    if (!dt || !sh || !of)
        return TFAIL(err, ZT_E_SCHEMA, name, "tensor entry needs \"%s\"",
                     !dt   ? "dtype"
                     : !sh ? "shape"
                           : "data_offsets");
    struct zt_component *c = zt__arena_alloc(a, sizeof(*c));
    if (!c)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    memset(c, 0, sizeof(*c));
    c->role = "data";
    o->comps = c;
    o->ncomp = 1;
    zt_status st = parse_dtype(dt, name, c, err);
    if (!st)
        st = parse_shape(x, sh, o, err);
    if (!st)
        st = parse_offsets(x, of, o, err);
    return st;
}

static zt_status parse_metadata(st_ctx *x, const json_t *md, zt_error *err)
{
    if (!json_is_object(md))
        return TFAIL(err, ZT_E_SCHEMA, NULL, "\"__metadata__\" must be a JSON object");
    zt__arena *a = &x->m->arena;
    zt_value *map = zt__map_new(a, json_object_size(md));
    if (!map)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)md, k, v)
    {
        zt_value *slot = zt__map_put(a, map, k);
        if (!slot)
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
        /* The spec says string values; other JSON values are kept as they are. */
        zt_status st = zt__json_tree_to_value(v, a, slot, err);
        if (st)
            return st;
    }
    x->m->attributes = map;
    return ZT_OK;
}

static int cmp_ent(const void *pa, const void *pb)
{
    const st_ent *a = pa, *b = pb;
    if (a->begin != b->begin)
        return a->begin < b->begin ? -1 : 1;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    return a->obj < b->obj ? -1 : a->obj > b->obj;
}

/* Sorted by begin, each tensor must start at or after the end of the one
 * before: no two share a byte. Gaps are allowed. */
static zt_status check_overlap(st_ctx *x, zt_error *err)
{
    qsort(x->ents, x->nent, sizeof(*x->ents), cmp_ent);
    const st_ent *p = NULL; /* the last tensor with bytes */
    for (size_t i = 0; i < x->nent; i++) {
        const st_ent *e = &x->ents[i];
        if (e->begin == e->end)
            continue;
        if (!p || e->begin >= p->end) {
            p = e;
            continue;
        }
        return zt__fail(
            err, ZT_E_OVERLAP, x->m->objs[e->obj].name, NULL, 1, x->data_start + e->begin,
            "data_offsets [%llu, %llu] overlap those of \"%.200s\" [%llu, %llu]",
            (unsigned long long)e->begin, (unsigned long long)e->end, x->m->objs[p->obj].name,
            (unsigned long long)p->begin, (unsigned long long)p->end);
    }
    return ZT_OK;
}

static zt_status load_json(const uint8_t *buf, size_t n, json_t **out, zt_error *err)
{
    json_error_t je;
    json_t *root = json_loadb((const char *)buf, n, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (json_error_code(&je) == json_error_duplicate_key)
            return zt__fail(err, ZT_E_DUPLICATE, NULL, NULL, 1, 8 + (uint64_t)je.position,
                            "safetensors header names a tensor twice: %s", je.text);
        return zt__fail(err, ZT_E_JSON, NULL, NULL, 1, 8 + (uint64_t)je.position,
                        "safetensors header is not valid JSON: %s (line %d, column %d)", je.text,
                        je.line, je.column);
    }
    if (!json_is_object(root)) {
        json_decref(root);
        return zt__fail(err, ZT_E_SCHEMA, NULL, NULL, 1, 8,
                        "safetensors header must be a JSON object");
    }
    *out = root;
    return ZT_OK;
}

static zt_status parse_root(st_ctx *x, const json_t *root, zt_error *err)
{
    zt__model *m = x->m;
    size_t cap = json_object_size(root);
    m->objs = zt__arena_alloc(&m->arena, (cap ? cap : 1) * sizeof(*m->objs));
    x->ents = zt__malloc((cap ? cap : 1) * sizeof(*x->ents));
    if (!m->objs || !x->ents)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    memset(m->objs, 0, (cap ? cap : 1) * sizeof(*m->objs));
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)root, k, v)
    {
        zt_status st = !strcmp(k, "__metadata__") ? parse_metadata(x, v, err)
                                                  : parse_tensor(x, k, v, &m->objs[m->nobj++], err);
        if (st)
            return st;
    }
    return check_overlap(x, err);
}

zt_status zt__st_parse_header(zt__model *m, const uint8_t *buf, size_t n, uint64_t file_size,
                              zt_error *err)
{
    m->kind = ZT_KIND_SAFETENSORS;
    if (file_size < 8 || n > file_size - 8)
        return zt__fail(err, ZT_E_TRUNCATED, NULL, NULL, 1, 0,
                        "header size %zu runs past the end of the %llu-byte file", n,
                        (unsigned long long)file_size);
    json_t *root;
    zt_status st = load_json(buf, n, &root, err);
    if (st)
        return st;
    st_ctx x = {m, 8 + (uint64_t)n, file_size - 8 - n, NULL, 0};
    st = parse_root(&x, root, err);
    zt__free(x.ents);
    json_decref(root);
    return st;
}

zt_status zt__st_header_size(const uint8_t head[8], uint64_t file_size, uint64_t max_header,
                             uint64_t *out, zt_error *err)
{
    uint64_t n = zt__le64(head);
    if (max_header > ZT_SPEC_MAX_MANIFEST)
        max_header = ZT_SPEC_MAX_MANIFEST;
    if (n > max_header)
        return zt__fail(err, ZT_E_LIMIT, NULL, NULL, 1, 0,
                        "safetensors header size %llu exceeds the limit of %llu bytes",
                        (unsigned long long)n, (unsigned long long)max_header);
    if (n > file_size - 8)
        return zt__fail(err, ZT_E_TRUNCATED, NULL, NULL, 1, 0,
                        "safetensors header size %llu runs past the end of the %llu-byte file",
                        (unsigned long long)n, (unsigned long long)file_size);
    *out = n;
    return ZT_OK;
}

zt_status zt__open_safetensors(zt_file *f, uint64_t max_header, zt_error *err)
{
    uint8_t hb[8];
    zt_status st = zt__read_at(f, 0, 8, hb, err);
    uint64_t n = 0;
    if (!st)
        st = zt__st_header_size(hb, f->size, max_header, &n, err);
    if (st)
        return st;
    uint8_t *buf = zt__malloc(n ? (size_t)n : 1);
    if (!buf)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory reading a %llu-byte header",
                       (unsigned long long)n);
    st = zt__read_at(f, 8, (size_t)n, buf, err);
    if (!st)
        st = zt__st_parse_header(&f->model, buf, (size_t)n, f->size, err);
    zt__free(buf);
    f->manifest_offset = 8;
    f->manifest_length = n;
    if (!st)
        st = zt__ollama_group(&f->model, err);
    if (!st)
        st = zt__model_build_index(&f->model, err);
    if (st)
        return st;
    zt__validate_opts vo = {.data_end = f->size,
                            .data_start = 8 + n,
                            .max_uncompressed = f->max_uncompressed,
                            .require_alignment = false};
    return zt__validate_model(&f->model, &vo, err);
}
