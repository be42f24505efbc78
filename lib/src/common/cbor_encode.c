/*
 * Canonical CBOR encoding (RFC 7049 §3.9 / RFC 8949 §4.2.3 for our text
 * keys): shortest integer heads, definite lengths, map keys sorted by length
 * then bytes. Writes into a growable buffer; an allocation failure sets
 * b->oom and later calls do nothing.
 */
#include "internal.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void zt__buf_free(zt__buf *b)
{
    zt__free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static bool reserve(zt__buf *b, size_t n)
{
    if (b->oom)
        return false;
    if (b->cap - b->len >= n)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n) {
        if (cap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    uint8_t *p = zt__realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void zt__buf_put(zt__buf *b, const void *p, size_t n)
{
    if (n && reserve(b, n)) {
        memcpy(b->p + b->len, p, n);
        b->len += n;
    }
}

void zt__cbor_head(zt__buf *b, unsigned major, uint64_t v)
{
    uint8_t h[9];
    size_t n;
    uint8_t m = (uint8_t)(major << 5);
    if (v < 24) {
        h[0] = m | (uint8_t)v;
        n = 1;
    } else if (v <= 0xFF) {
        h[0] = m | 24;
        h[1] = (uint8_t)v;
        n = 2;
    } else if (v <= 0xFFFF) {
        h[0] = m | 25;
        h[1] = (uint8_t)(v >> 8);
        h[2] = (uint8_t)v;
        n = 3;
    } else if (v <= 0xFFFFFFFFu) {
        h[0] = m | 26;
        for (int i = 0; i < 4; i++)
            h[1 + i] = (uint8_t)(v >> (24 - 8 * i));
        n = 5;
    } else {
        h[0] = m | 27;
        for (int i = 0; i < 8; i++)
            h[1 + i] = (uint8_t)(v >> (56 - 8 * i));
        n = 9;
    }
    zt__buf_put(b, h, n);
}

void zt__cbor_uint(zt__buf *b, uint64_t v)
{
    zt__cbor_head(b, 0, v);
}

void zt__cbor_text(zt__buf *b, const char *s, size_t n)
{
    zt__cbor_head(b, 3, n);
    zt__buf_put(b, s, n);
}

static const char *const *g_keys;
static const size_t *g_lens;

static int cmp_keys(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (g_lens[i] != g_lens[j])
        return g_lens[i] < g_lens[j] ? -1 : 1;
    return memcmp(g_keys[i], g_keys[j], g_lens[i]);
}

/* qsort has no context argument in C11: the comparator reads these, under a lock. */
static pthread_mutex_t g_sort_mu = PTHREAD_MUTEX_INITIALIZER;

void zt__cbor_sort_keys(const char **keys, const size_t *lens, size_t *idx, size_t n)
{
    pthread_mutex_lock(&g_sort_mu);
    g_keys = keys;
    g_lens = lens;
    qsort(idx, n, sizeof(size_t), cmp_keys);
    pthread_mutex_unlock(&g_sort_mu);
}

static void encode_float(zt__buf *b, double f)
{
    float s = (float)f;
    if ((double)s == f || f != f) {
        uint32_t bits;
        memcpy(&bits, &s, 4);
        uint8_t h[5] = {0xFA, (uint8_t)(bits >> 24), (uint8_t)(bits >> 16), (uint8_t)(bits >> 8),
                        (uint8_t)bits};
        zt__buf_put(b, h, 5);
        return;
    }
    uint64_t bits;
    memcpy(&bits, &f, 8);
    uint8_t h[9] = {0xFB};
    for (int i = 0; i < 8; i++)
        h[1 + i] = (uint8_t)(bits >> (56 - 8 * i));
    zt__buf_put(b, h, 9);
}

static void encode_map(zt__buf *b, const zt_value *v)
{
    zt__cbor_head(b, 5, v->n);
    if (!v->n)
        return;
    const char **keys = zt__malloc(v->n * sizeof(*keys));
    size_t *lens = zt__malloc(v->n * sizeof(*lens));
    size_t *idx = zt__malloc(v->n * sizeof(*idx));
    if (!keys || !lens || !idx) {
        b->oom = true;
        goto out;
    }
    for (size_t i = 0; i < v->n; i++) {
        const zt_value *k = &v->v.items[2 * i];
        keys[i] = (k->kind == ZT_VAL_TEXT || k->kind == ZT_VAL_BYTES) ? k->v.s : "";
        lens[i] = (k->kind == ZT_VAL_TEXT || k->kind == ZT_VAL_BYTES) ? k->n : 0;
        idx[i] = i;
    }
    zt__cbor_sort_keys(keys, lens, idx, v->n);
    for (size_t i = 0; i < v->n; i++) {
        zt__cbor_value(b, &v->v.items[2 * idx[i]]);
        zt__cbor_value(b, &v->v.items[2 * idx[i] + 1]);
    }
out:
    zt__free(keys);
    zt__free(lens);
    zt__free(idx);
}

/* Recursion here is bounded: values come from JSON parsed by jansson (depth
 * limited by jansson) or from a decoded manifest (depth <= ZT_MAX_DEPTH). */
void zt__cbor_value(zt__buf *b, const zt_value *v)
{
    switch ((zt_value_kind)v->kind) {
    case ZT_VAL_UINT:
        zt__cbor_head(b, 0, v->v.u);
        break;
    case ZT_VAL_NEGINT:
        zt__cbor_head(b, 1, v->v.u);
        break;
    case ZT_VAL_BYTES:
        zt__cbor_head(b, 2, v->n);
        zt__buf_put(b, v->v.s, v->n);
        break;
    case ZT_VAL_TEXT:
        zt__cbor_text(b, v->v.s, v->n);
        break;
    case ZT_VAL_ARRAY:
        zt__cbor_head(b, 4, v->n);
        for (uint32_t i = 0; i < v->n; i++)
            zt__cbor_value(b, &v->v.items[i]);
        break;
    case ZT_VAL_MAP:
        encode_map(b, v);
        break;
    case ZT_VAL_TAG:
        zt__cbor_head(b, 6, v->tag);
        zt__cbor_value(b, &v->v.items[0]);
        break;
    case ZT_VAL_FALSE:
        zt__buf_put(b, "\xF4", 1);
        break;
    case ZT_VAL_TRUE:
        zt__buf_put(b, "\xF5", 1);
        break;
    case ZT_VAL_NULL:
        zt__buf_put(b, "\xF6", 1);
        break;
    case ZT_VAL_UNDEFINED:
        zt__buf_put(b, "\xF7", 1);
        break;
    case ZT_VAL_SIMPLE:
        zt__cbor_head(b, 7, v->v.u);
        break;
    case ZT_VAL_FLOAT:
        encode_float(b, v->v.f);
        break;
    }
}

/* ---- deterministic encoding (RFC 8949 §4.2.1), for zTensor v2 */

bool zt__float_fits(double x, int sig, int min_exp, int max_e)
{
    if (x == 0 || isinf(x))
        return true;
    int e;
    frexp(x, &e);
    if (e > max_e)
        return false;
    int q = e - sig > min_exp ? e - sig : min_exp;
    double k = ldexp(fabs(x), -q);
    return k == floor(k);
}

/* The half-precision bits of x, which zt__float_fits() says is exact. */
static uint16_t half_bits(double x)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs(x);
    if (a == 0)
        return sign;
    if (isinf(a))
        return sign | 0x7C00;
    int e;
    frexp(a, &e);
    if (e - 1 >= -14)
        return sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)(ldexp(a, 11 - e) - 1024);
    return sign | (uint16_t)ldexp(a, 24);
}

void zt__cbor_float_det(zt__buf *b, double f)
{
    if (isnan(f)) {
        zt__buf_put(b, "\xF9\x7E\x00", 3);
    } else if (zt__float_fits(f, 11, -24, 16)) {
        uint16_t h = half_bits(f);
        uint8_t o[3] = {0xF9, (uint8_t)(h >> 8), (uint8_t)h};
        zt__buf_put(b, o, 3);
    } else {
        encode_float(b, f); /* f32 when exact, else f64: the shortest */
    }
}

/* Recursion is bounded by the decoder's depth limit (32 for v2). */
void zt__cbor_value_det(zt__buf *b, const zt_value *v)
{
    switch ((zt_value_kind)v->kind) {
    case ZT_VAL_ARRAY:
        zt__cbor_head(b, 4, v->n);
        for (uint32_t i = 0; i < v->n; i++)
            zt__cbor_value_det(b, &v->v.items[i]);
        break;
    case ZT_VAL_MAP:
        zt__cbor_head(b, 5, v->n);
        for (uint32_t i = 0; i < 2 * v->n; i++)
            zt__cbor_value_det(b, &v->v.items[i]);
        break;
    case ZT_VAL_TAG:
        zt__cbor_head(b, 6, v->tag);
        zt__cbor_value_det(b, &v->v.items[0]);
        break;
    case ZT_VAL_FLOAT:
        zt__cbor_float_det(b, v->v.f);
        break;
    default:
        zt__cbor_value(b, v);
        break;
    }
}

void zt__cbor_raw(zt__buf *b, const void *p, size_t n)
{
    zt__buf_put(b, p, n);
}

/* A map's pairs in the bytewise order of their encoded keys. */
static void encode_map_det(zt__buf *b, const zt_value *v)
{
    zt__cbor_head(b, 5, v->n);
    zt__buf *keys = zt__calloc(v->n ? v->n : 1, sizeof(*keys));
    size_t *idx = zt__malloc((v->n ? v->n : 1) * sizeof(*idx));
    if (!keys || !idx) {
        b->oom = true;
    } else {
        for (size_t i = 0; i < v->n; i++) {
            zt__cbor_value_det_sorted(&keys[i], &v->v.items[2 * i]);
            idx[i] = i;
            b->oom |= keys[i].oom;
        }
        for (size_t i = 1; i < v->n; i++) /* insertion sort: attribute maps are small */
            for (size_t j = i; j > 0; j--) {
                const zt__buf *x = &keys[idx[j - 1]], *y = &keys[idx[j]];
                size_t m = x->len < y->len ? x->len : y->len;
                int c = memcmp(x->p, y->p, m);
                if (c < 0 || (!c && x->len <= y->len))
                    break;
                size_t t = idx[j];
                idx[j] = idx[j - 1];
                idx[j - 1] = t;
            }
        for (size_t i = 0; i < v->n && !b->oom; i++) {
            zt__buf_put(b, keys[idx[i]].p, keys[idx[i]].len);
            zt__cbor_value_det_sorted(b, &v->v.items[2 * idx[i] + 1]);
        }
    }
    for (size_t i = 0; keys && i < v->n; i++)
        zt__buf_free(&keys[i]);
    zt__free(keys);
    zt__free(idx);
}

void zt__cbor_value_det_sorted(zt__buf *b, const zt_value *v)
{
    switch ((zt_value_kind)v->kind) {
    case ZT_VAL_ARRAY:
        zt__cbor_head(b, 4, v->n);
        for (uint32_t i = 0; i < v->n; i++)
            zt__cbor_value_det_sorted(b, &v->v.items[i]);
        break;
    case ZT_VAL_MAP:
        encode_map_det(b, v);
        break;
    case ZT_VAL_TAG:
        zt__cbor_head(b, 6, v->tag);
        zt__cbor_value_det_sorted(b, &v->v.items[0]);
        break;
    default:
        zt__cbor_value_det(b, v);
        break;
    }
}
