/*
 * Read-only accessors for generic manifest values (attributes).
 */
#include "internal.h"

#include <string.h>

zt_value_kind zt_value_get_kind(const zt_value *v)
{
    return (zt_value_kind)v->kind;
}

uint64_t zt_value_uint(const zt_value *v)
{
    if (v->kind == ZT_VAL_TAG)
        return v->tag;
    return (v->kind == ZT_VAL_UINT || v->kind == ZT_VAL_NEGINT || v->kind == ZT_VAL_SIMPLE) ? v->v.u
                                                                                            : 0;
}

double zt_value_float(const zt_value *v)
{
    return v->kind == ZT_VAL_FLOAT ? v->v.f : 0.0;
}

const char *zt_value_data(const zt_value *v, size_t *len)
{
    if (v->kind != ZT_VAL_TEXT && v->kind != ZT_VAL_BYTES) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = v->n;
    return v->v.s;
}

size_t zt_value_count(const zt_value *v)
{
    return (v->kind == ZT_VAL_ARRAY || v->kind == ZT_VAL_MAP) ? v->n : 0;
}

const zt_value *zt_value_item(const zt_value *v, size_t i)
{
    if (v->kind == ZT_VAL_ARRAY)
        return i < v->n ? &v->v.items[i] : NULL;
    if (v->kind == ZT_VAL_MAP)
        return i < v->n ? &v->v.items[2 * i + 1] : NULL;
    if (v->kind == ZT_VAL_TAG)
        return i == 0 ? &v->v.items[0] : NULL;
    return NULL;
}

const zt_value *zt_value_key(const zt_value *v, size_t i)
{
    return (v->kind == ZT_VAL_MAP && i < v->n) ? &v->v.items[2 * i] : NULL;
}

bool zt__value_text_eq(const zt_value *v, const char *s)
{
    size_t n = strlen(s);
    return v->kind == ZT_VAL_TEXT && v->n == n && memcmp(v->v.s, s, n) == 0;
}

const zt_value *zt_value_get(const zt_value *map, const char *key)
{
    if (!map || map->kind != ZT_VAL_MAP)
        return NULL;
    size_t n = strlen(key); /* once, not per entry: the reader calls this per field */
    for (uint32_t i = 0; i < map->n; i++) {
        const zt_value *k = &map->v.items[2 * i];
        if (k->kind == ZT_VAL_TEXT && k->n == n && k->v.s[0] == key[0] && !memcmp(k->v.s, key, n))
            return &map->v.items[2 * i + 1];
    }
    return NULL;
}
