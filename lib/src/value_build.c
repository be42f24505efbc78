/*
 * Building attribute values in an arena. The foreign-format readers
 * (safetensors, Ollama, ALT) have no CBOR manifest to decode: they make the
 * same zt_value trees that a .zt manifest would have produced.
 */
#include "internal.h"

#include <string.h>

static zt_value *items(zt__arena *a, size_t n)
{
    zt_value *v = zt__arena_alloc(a, (n ? n : 1) * sizeof(*v));
    if (v)
        memset(v, 0, (n ? n : 1) * sizeof(*v));
    return v;
}

/* The capacity of a map under construction is kept in its tag field, which
 * maps do not otherwise use. */
zt_value *zt__map_new(zt__arena *a, size_t cap)
{
    zt_value *m = items(a, 1);
    if (!m || !(m->v.items = items(a, 2 * cap)))
        return NULL;
    m->kind = ZT_VAL_MAP;
    m->tag = cap;
    return m;
}

zt_value *zt__map_put(zt__arena *a, zt_value *map, const char *key)
{
    if (!map || map->n >= map->tag)
        return NULL;
    zt_value *k = &map->v.items[2 * map->n];
    if (!zt__val_text(a, k, key, strlen(key)))
        return NULL;
    map->n++;
    return k + 1;
}

bool zt__val_text(zt__arena *a, zt_value *v, const char *s, size_t n)
{
    memset(v, 0, sizeof(*v));
    v->kind = ZT_VAL_TEXT;
    v->n = (uint32_t)n;
    v->v.s = zt__arena_strndup(a, s, n);
    return v->v.s != NULL;
}

void zt__val_uint(zt_value *v, uint64_t u)
{
    memset(v, 0, sizeof(*v));
    v->kind = ZT_VAL_UINT;
    v->v.u = u;
}

void zt__val_int(zt_value *v, int64_t i)
{
    memset(v, 0, sizeof(*v));
    v->kind = i >= 0 ? ZT_VAL_UINT : ZT_VAL_NEGINT;
    v->v.u = i >= 0 ? (uint64_t)i : (uint64_t)(-1 - i);
}

void zt__val_float(zt_value *v, double d)
{
    memset(v, 0, sizeof(*v));
    v->kind = ZT_VAL_FLOAT;
    v->v.f = d;
}

bool zt__val_array(zt__arena *a, zt_value *v, size_t n)
{
    memset(v, 0, sizeof(*v));
    v->kind = ZT_VAL_ARRAY;
    v->n = (uint32_t)n;
    v->v.items = items(a, n);
    return v->v.items != NULL;
}
