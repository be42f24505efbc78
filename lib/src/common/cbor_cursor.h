/*
 * A cursor over a manifest's CBOR bytes for the fast paths (manifest_fast.c
 * for zTensor 1.x, v2_fast.c for v2): heads, text strings, containers and
 * unsigned integers are read in place; any other item goes to the general
 * decoder. Each reader returns false on what it does not expect, and the
 * fast path then gives up: the general decoder decides and reports.
 */
#ifndef ZT_CBOR_CURSOR_H
#define ZT_CBOR_CURSOR_H

#include "internal.h"

#include <string.h>

typedef struct zt__cur {
    const uint8_t *p;
    size_t len, pos;
    uint64_t base; /* file offset of p[0] */
    zt__model *m;
    unsigned max_depth; /* of the whole manifest's nesting */
    bool deterministic; /* v2 (§3.1): shortest heads only, no major type 7 */
} zt__cur;

/* A definite head: major type and argument. */
static inline bool zt__cur_head(zt__cur *c, unsigned *major, uint64_t *arg)
{
    if (c->pos >= c->len)
        return false;
    uint8_t ib = c->p[c->pos++];
    unsigned ai = ib & 31;
    *major = ib >> 5;
    bool det = c->deterministic;
    if (ai < 24) {
        *arg = ai;
        return !det || *major != 7;
    }
    if (ai > 27 || (det && *major == 7))
        return false;
    size_t nb = (size_t)1 << (ai - 24);
    if (c->len - c->pos < nb)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < nb; i++)
        v = (v << 8) | c->p[c->pos + i];
    c->pos += nb;
    *arg = v;
    return !det || v >= (nb == 1 ? 24u : 1ull << (4 * nb));
}

/* A text string, in place (not checked as UTF-8). */
static inline bool zt__cur_text(zt__cur *c, const uint8_t **s, size_t *n)
{
    unsigned major;
    uint64_t len;
    if (!zt__cur_head(c, &major, &len) || major != 3 || len > c->len - c->pos || len > UINT32_MAX)
        return false;
    *s = c->p + c->pos;
    *n = (size_t)len;
    c->pos += (size_t)len;
    return true;
}

/* An array or map of n items, each at least min_bytes long: bounds what is
 * allocated by a declared count before the items are read. */
static inline bool zt__cur_container(zt__cur *c, unsigned want_major, size_t min_bytes, uint64_t *n)
{
    unsigned major;
    uint64_t k;
    if (!zt__cur_head(c, &major, &k) || major != want_major || k > UINT32_MAX ||
        k > (c->len - c->pos) / min_bytes)
        return false;
    *n = k;
    return true;
}

static inline bool zt__cur_uint(zt__cur *c, uint64_t *v)
{
    unsigned major;
    return zt__cur_head(c, &major, v) && major == 0;
}

/* Any item, by the general decoder (so it is checked as strictly), `above`
 * levels of nesting below the root (its depth bounded as the whole's). */
static inline bool zt__cur_generic(zt__cur *c, unsigned above, zt_value **out)
{
    zt__cbor_limits lim = {c->max_depth - above, c->base + c->pos, c->deterministic};
    size_t used;
    if (zt__cbor_decode_prefix(c->p + c->pos, c->len - c->pos, &lim, &c->m->arena, out, &used,
                               NULL))
        return false;
    c->pos += used;
    return true;
}

/* A copied, NUL-terminated, UTF-8-checked string. */
static inline const char *zt__cur_copy_text(zt__cur *c, const uint8_t *s, size_t n)
{
    if (n > UINT32_MAX || !zt__utf8_valid(s, n))
        return NULL;
    return zt__arena_strndup(&c->m->arena, (const char *)s, n);
}

/* An object's shape: an array of at most ZT_MAX_NDIM unsigned integers;
 * product_fits: their product must fit 64 bits (v2 §3.3). */
static inline bool zt__cur_shape(zt__cur *c, struct zt_object *o, bool product_fits)
{
    uint64_t n, prod = 1;
    if (!zt__cur_container(c, 4, 1, &n) || n > ZT_MAX_NDIM)
        return false;
    o->has_shape = true;
    o->ndim = (size_t)n;
    if (!(o->shape = zt__arena_alloc(&c->m->arena, (n ? n : 1) * sizeof(uint64_t))))
        return false;
    for (uint64_t i = 0; i < n; i++)
        if (!zt__cur_uint(c, &o->shape[i]) ||
            (product_fits && !zt__mul_ok(prod, o->shape[i], &prod)))
            return false;
    return true;
}

#endif
