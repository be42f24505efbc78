/*
 * The manifest model as JSON (jansson), one mapping for the CLI and the
 * server, and JSON text -> values for the writer's attributes.
 *
 * CBOR values without a JSON twin (documented in docs/JSON.md):
 *  - integers with |v| <= 2^53 are JSON numbers; larger ones are decimal strings;
 *  - byte strings are {"$bytes": "<standard base64>"};
 *  - tags are {"$tag": N, "$value": V};
 *  - floats are JSON numbers; NaN and infinities are the strings "NaN",
 *    "Infinity", "-Infinity";
 *  - undefined is null; other simple values are {"$simple": N};
 *  - a map key that is not text is written as the compact JSON of the key.
 */
#include "internal.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define SAFE_INT (1ull << 53)

static json_t *value_to_json(const zt_value *v, int depth);
static json_t *u64_json(uint64_t u);

static json_t *big_string(uint64_t u, int neg)
{
    char buf[32];
    if (neg) {
        /* value is -1 - u; print it exactly even when u == UINT64_MAX */
        if (u == UINT64_MAX)
            snprintf(buf, sizeof(buf), "-18446744073709551616");
        else
            snprintf(buf, sizeof(buf), "-%llu", (unsigned long long)u + 1);
    } else {
        snprintf(buf, sizeof(buf), "%llu", (unsigned long long)u);
    }
    return json_string(buf);
}

static json_t *base64(const char *p, size_t n)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t olen = 4 * ((n + 2) / 3);
    char *out = zt__malloc(olen + 1);
    if (!out)
        return NULL;
    const uint8_t *s = (const uint8_t *)p;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) |
                     (i + 2 < n ? s[i + 2] : 0);
        out[o++] = tbl[(v >> 18) & 63];
        out[o++] = tbl[(v >> 12) & 63];
        out[o++] = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? tbl[v & 63] : '=';
    }
    json_t *j = json_pack("{s:s#}", "$bytes", out, o);
    zt__free(out);
    return j;
}

static char *key_text(const zt_value *k, size_t *len)
{
    if (k->kind == ZT_VAL_TEXT) {
        *len = k->n;
        return zt__strndup(k->v.s, k->n);
    }
    json_t *j = value_to_json(k, 0);
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    if (!s)
        return NULL;
    char *r = zt__strndup(s, strlen(s));
    free(s);
    *len = r ? strlen(r) : 0;
    return r;
}

static json_t *map_to_json(const zt_value *v, int depth)
{
    json_t *o = json_object();
    for (uint32_t i = 0; o && i < v->n; i++) {
        size_t klen;
        char *k = key_text(&v->v.items[2 * i], &klen);
        json_t *val = value_to_json(&v->v.items[2 * i + 1], depth + 1);
        if (!k || !val || json_object_setn_new_nocheck(o, k, klen, val)) {
            if (!k)
                json_decref(val);
            zt__free(k);
            json_decref(o);
            return NULL;
        }
        zt__free(k);
    }
    return o;
}

/* Depth is bounded by the decoder (<= ZT_MAX_DEPTH). */
static json_t *value_to_json(const zt_value *v, int depth)
{
    switch ((zt_value_kind)v->kind) {
    case ZT_VAL_UINT:
        return v->v.u <= SAFE_INT ? json_integer((json_int_t)v->v.u) : big_string(v->v.u, 0);
    case ZT_VAL_NEGINT:
        return v->v.u < SAFE_INT ? json_integer(-1 - (json_int_t)v->v.u) : big_string(v->v.u, 1);
    case ZT_VAL_BYTES:
        return base64(v->v.s, v->n);
    case ZT_VAL_TEXT:
        return json_stringn_nocheck(v->v.s, v->n);
    case ZT_VAL_ARRAY: {
        json_t *a = json_array();
        for (uint32_t i = 0; a && i < v->n; i++)
            if (json_array_append_new(a, value_to_json(&v->v.items[i], depth + 1))) {
                json_decref(a);
                return NULL;
            }
        return a;
    }
    case ZT_VAL_MAP:
        return map_to_json(v, depth);
    case ZT_VAL_TAG:
        /* Tag numbers follow the integer rule: above 2^53, a decimal string. */
        return json_pack("{s:o,s:o}", "$tag", u64_json(v->tag), "$value",
                         value_to_json(&v->v.items[0], depth + 1));
    case ZT_VAL_FALSE:
        return json_false();
    case ZT_VAL_TRUE:
        return json_true();
    case ZT_VAL_NULL:
    case ZT_VAL_UNDEFINED:
        return json_null();
    case ZT_VAL_SIMPLE:
        return json_pack("{s:I}", "$simple", (json_int_t)v->v.u);
    case ZT_VAL_FLOAT:
        if (isnan(v->v.f))
            return json_string("NaN");
        if (isinf(v->v.f))
            return json_string(v->v.f > 0 ? "Infinity" : "-Infinity");
        return json_real(v->v.f);
    }
    return NULL;
}

json_t *zt__value_json(const zt_value *v)
{
    return value_to_json(v, 0);
}

static json_t *u64_json(uint64_t u)
{
    return u <= SAFE_INT ? json_integer((json_int_t)u) : big_string(u, 0);
}

static json_t *component_json(const struct zt_component *c)
{
    json_t *j = json_object();
    if (!j)
        return NULL;
    int bad = json_object_set_new(j, "dtype", json_string(zt_dtype_name(c->dtype)));
    if (c->type)
        bad |= json_object_set_new(j, "type", json_string(c->type));
    bad |= json_object_set_new(j, "offset", u64_json(c->offset));
    bad |= json_object_set_new(j, "length", u64_json(c->length));
    bad |= json_object_set_new(j, "encoding", json_string(zt_component_encoding_name(c)));
    if (c->has_uncompressed)
        bad |= json_object_set_new(j, "uncompressed_length", u64_json(c->uncompressed_length));
    if (c->digest)
        bad |= json_object_set_new(j, "digest", json_string(c->digest));
    /* v2 (docs/JSON.md): what the digest covers, and the shard of the blob */
    if (c->digest && c->digest_decoded)
        bad |= json_object_set_new(j, "digest_covers", json_string("decoded"));
    if (c->shard_name)
        bad |= json_object_set_new(j, "shard", json_string(c->shard_name));
    if (bad) {
        json_decref(j);
        return NULL;
    }
    return j;
}

static json_t *object_json(const struct zt_object *o)
{
    json_t *j = json_object(), *comps = json_object();
    int bad = !j || !comps;
    if (!bad && o->has_shape) {
        json_t *shape = json_array();
        for (size_t i = 0; shape && i < o->ndim; i++)
            bad |= json_array_append_new(shape, u64_json(o->shape[i]));
        bad |= json_object_set_new(j, "shape", shape);
    }
    if (!bad)
        bad |= json_object_set_new(j, "format", json_string(o->format));
    if (!bad && o->attributes)
        bad |= json_object_set_new(j, "attributes", value_to_json(o->attributes, 0));
    if (!bad && o->source_name && o->source_name[0])
        bad |= json_object_set_new(j, "source_name", json_string(o->source_name));
    if (!bad && o->uninterpreted)
        bad |= json_object_set_new(j, "interpreted", json_false());
    for (size_t i = 0; !bad && i < o->ncomp; i++)
        bad |= json_object_set_new_nocheck(comps, o->comps[i].role, component_json(&o->comps[i]));
    if (!bad) {
        bad |= json_object_set_new(j, "components", comps);
        comps = NULL;
    }
    json_decref(comps);
    if (bad) {
        json_decref(j);
        return NULL;
    }
    return j;
}

static char *dump(json_t *j, unsigned flags, zt_error *err)
{
    if (!j) {
        ZT_FAIL(err, ZT_E_NOMEM, "out of memory building JSON");
        return NULL;
    }
    char *s = json_dumps(j, (flags & ZT_JSON_PRETTY ? JSON_INDENT(2) : JSON_COMPACT) |
                                JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    json_decref(j);
    if (!s) {
        ZT_FAIL(err, ZT_E_NOMEM, "out of memory serialising JSON");
        return NULL;
    }
    /* Hand back memory the caller releases with zt_free(). */
    char *r = zt__strndup(s, strlen(s));
    free(s);
    if (!r)
        ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    return r;
}

char *zt_object_json(const zt_object *o, unsigned flags, zt_error *err)
{
    return dump(object_json(o), flags, err);
}

/* v2 root fields (docs/JSON.md): manifest_hash, data_shard, content_digest,
 * and the shard table with where each shard was found. */
static int v2_root_json(const zt_file *f, json_t *root)
{
    char hex[24], cd[80];
    snprintf(hex, sizeof(hex), "xxh3:%016llx", (unsigned long long)zt_file_manifest_hash(f));
    int bad = json_object_set_new(root, "manifest_hash", json_string(hex));
    if (zt_file_is_data_shard(f))
        bad |= json_object_set_new(root, "data_shard", json_true());
    if (zt_file_content_digest(f, ZT_DIGEST_SHA256, cd, NULL) == ZT_OK)
        bad |= json_object_set_new(root, "content_digest", json_string(cd));
    size_t n = zt_file_shard_count(f);
    if (!n || bad)
        return bad;
    json_t *shards = json_object();
    for (size_t i = 0; shards && !bad && i < n; i++) {
        const char *path = zt_file_shard_path(f, i), *slash = path ? strrchr(path, '/') : NULL;
        zt_error e;
        zt_status st = zt_file_shard_status(f, i, &e);
        json_t *s = json_pack("{s:o, s:s, s:o, s:s}", "size", u64_json(zt_file_shard_size(f, i)),
                              "digest", zt_file_shard_digest(f, i), "file",
                              path ? json_string(slash ? slash + 1 : path) : json_null(), "status",
                              st ? e.message : "ok");
        bad |= json_object_set_new(shards, zt_file_shard_name(f, i), s);
    }
    return bad | json_object_set_new(root, "shards", shards);
}

char *zt_file_manifest_json(const zt_file *f, unsigned flags, zt_error *err)
{
    const zt__model *m = &f->model;
    json_t *root = json_object(), *objs = json_object();
    int bad = !root || !objs;
    if (!bad)
        bad |= json_object_set_new(root, "version", json_string(zt_file_version(f)));
    if (!bad && m->attributes)
        bad |= json_object_set_new(root, "attributes", value_to_json(m->attributes, 0));
    if (!bad && m->kind == ZT_KIND_ZT_2)
        bad |= v2_root_json(f, root);
    for (size_t i = 0; !bad && i < m->nobj; i++)
        bad |= json_object_setn_new_nocheck(objs, m->objs[i].name, m->objs[i].name_len,
                                            object_json(&m->objs[i]));
    if (!bad) {
        bad |= json_object_set_new(root, "objects", objs);
        objs = NULL;
    }
    json_decref(objs);
    if (bad) {
        json_decref(root);
        root = NULL;
    }
    return dump(root, flags, err);
}

/* ---- JSON text -> values */

/* Object attributes sit inside three manifest maps (root, "objects", the
 * object), and the reader refuses CBOR nested deeper than ZT_MAX_DEPTH: deeper
 * attributes would make a file this library cannot open. */
#define ATTR_MAX_DEPTH (ZT_MAX_DEPTH - 3)

static zt_status from_json(const json_t *j, zt__arena *a, zt_value *out, int depth, zt_error *err)
{
    if (depth >= ATTR_MAX_DEPTH && (json_is_object(j) || json_is_array(j)))
        return ZT_FAIL(err, ZT_E_DEPTH, "JSON attributes nested deeper than %d", ATTR_MAX_DEPTH);
    memset(out, 0, sizeof(*out));
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(j), i = 0;
        out->kind = ZT_VAL_MAP;
        out->n = (uint32_t)n;
        out->v.items = zt__arena_alloc(a, (n ? 2 * n : 1) * sizeof(zt_value));
        if (!out->v.items)
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
        const char *k;
        size_t klen;
        json_t *val;
        void *tmp;
        json_object_keylen_foreach_safe((json_t *)j, tmp, k, klen, val)
        {
            zt_value *kv = &out->v.items[2 * i];
            memset(kv, 0, sizeof(*kv));
            kv->kind = ZT_VAL_TEXT;
            kv->n = (uint32_t)klen;
            if (!(kv->v.s = zt__arena_strndup(a, k, klen)))
                return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
            zt_status st = from_json(val, a, &out->v.items[2 * i + 1], depth + 1, err);
            if (st)
                return st;
            i++;
        }
        return ZT_OK;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(j);
        out->kind = ZT_VAL_ARRAY;
        out->n = (uint32_t)n;
        out->v.items = zt__arena_alloc(a, (n ? n : 1) * sizeof(zt_value));
        if (!out->v.items)
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
            zt_status st = from_json(json_array_get(j, i), a, &out->v.items[i], depth + 1, err);
            if (st)
                return st;
        }
        return ZT_OK;
    }
    case JSON_STRING:
        out->kind = ZT_VAL_TEXT;
        out->n = (uint32_t)json_string_length(j);
        out->v.s = zt__arena_strndup(a, json_string_value(j), json_string_length(j));
        return out->v.s ? ZT_OK : ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    case JSON_INTEGER: {
        json_int_t v = json_integer_value(j);
        out->kind = v >= 0 ? ZT_VAL_UINT : ZT_VAL_NEGINT;
        out->v.u = v >= 0 ? (uint64_t)v : (uint64_t)(-1 - v);
        return ZT_OK;
    }
    case JSON_REAL:
        out->kind = ZT_VAL_FLOAT;
        out->v.f = json_real_value(j);
        return ZT_OK;
    case JSON_TRUE:
        out->kind = ZT_VAL_TRUE;
        return ZT_OK;
    case JSON_FALSE:
        out->kind = ZT_VAL_FALSE;
        return ZT_OK;
    default:
        out->kind = ZT_VAL_NULL;
        return ZT_OK;
    }
}

zt_status zt__json_to_value(const char *text, zt__arena *a, const zt_value **out, zt_error *err)
{
    json_error_t je;
    json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (!j)
        return zt__fail(err, ZT_E_JSON, NULL, NULL, 1, (uint64_t)je.position,
                        "attributes are not valid JSON: %s", je.text);
    zt_value *v = zt__arena_alloc(a, sizeof(*v));
    zt_status st = v ? from_json(j, a, v, 0, err) : ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    json_decref(j);
    if (!st)
        *out = v;
    return st;
}

zt_status zt__json_tree_to_value(const struct json_t *j, zt__arena *a, zt_value *out, zt_error *err)
{
    return from_json(j, a, out, 1, err);
}
