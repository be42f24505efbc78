/*
 * A bounded CBOR decoder (RFC 8949) for manifests from strangers.
 *
 * Why not libcbor's cbor_load(): it allocates an array by its declared length
 * before any element is read, and frees trees recursively. Here:
 *  - no recursion: containers live on an explicit frame stack of at most
 *    max_depth entries;
 *  - no allocation sized by a declared length: children are collected on a
 *    growable stack as they are actually decoded, and a container's declared
 *    count is first checked against the bytes left (each item needs >= 1 byte);
 *  - every text string is checked to be UTF-8.
 * Memory is therefore O(input bytes), and time O(input bytes).
 *
 * With lim->deterministic (zTensor v2 §3.1) it also refuses every encoding
 * that RFC 8949 §4.2.1 does not allow: a head longer than its value needs,
 * indefinite lengths, map keys out of bytewise order or repeated (compared on
 * their encoded bytes, so a NaN-payload key cannot pass as a second key),
 * a float wider than its value needs, and any NaN but f9 7e 00.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

typedef struct frame {
    uint8_t kind; /* ZT_VAL_ARRAY, ZT_VAL_MAP, ZT_VAL_TAG */
    bool indefinite;
    uint64_t expected; /* items (map: keys + values) */
    uint64_t got;
    size_t base; /* index of the first child on the value stack */
    uint64_t tag;
    uint64_t at; /* offset of the head, for messages */
    /* deterministic maps: where the key being read starts, and the previous key */
    size_t key_at, prev_at, prev_end;
} frame;

typedef struct dec {
    const uint8_t *p;
    size_t len, pos;
    uint64_t base_off;
    zt__arena *arena;
    zt_error *err;
    zt_value *vs; /* value stack */
    size_t vn, vcap;
    bool det;       /* deterministic encoding required */
    struct intern { /* short strings already decoded, see make_string() */
        const char *s;
        uint64_t head, tail; /* see words() */
        uint32_t n;
        uint8_t major;
    } intern[256];
} dec;

#define FAIL_AT(d, code, at, ...)                                                                  \
    zt__fail((d)->err, (code), NULL, NULL, 1, (d)->base_off + (at), __VA_ARGS__)

static zt_status push_value(dec *d, const zt_value *v)
{
    if (d->vn == d->vcap) {
        size_t ncap = d->vcap ? d->vcap * 2 : 256;
        zt_value *nv = zt__realloc(d->vs, ncap * sizeof(*nv));
        if (!nv)
            return ZT_FAIL(d->err, ZT_E_NOMEM, "out of memory decoding the manifest");
        d->vs = nv;
        d->vcap = ncap;
    }
    d->vs[d->vn++] = *v;
    return ZT_OK;
}

static bool utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint64_t w;
        if (n - i >= 8 && (memcpy(&w, s + i, 8), !(w & 0x8080808080808080ull))) {
            i += 8; /* eight ASCII bytes at once */
            continue;
        }
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        uint32_t cp;
        if ((c & 0xE0) == 0xC0) {
            k = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            k = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            k = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (i + k >= n)
            return false;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += k + 1;
    }
    return true;
}

/* Reads the argument of a head whose initial byte is at d->pos. */
static inline __attribute__((always_inline)) zt_status read_head(dec *d, unsigned *major,
                                                                 unsigned *ai, uint64_t *arg)
{
    size_t at = d->pos;
    if (d->pos >= d->len)
        return FAIL_AT(d, ZT_E_CBOR, at, "manifest ends inside a CBOR item");
    uint8_t ib = d->p[d->pos++];
    *major = ib >> 5;
    *ai = ib & 31;
    if (*ai < 24) {
        *arg = *ai;
        return ZT_OK;
    }
    if (*ai > 27) {
        if (*ai == 31)
            return ZT_OK;
        return FAIL_AT(d, ZT_E_CBOR, at, "reserved CBOR additional information %u", *ai);
    }
    size_t nb = (size_t)1 << (*ai - 24);
    if (d->len - d->pos < nb)
        return FAIL_AT(d, ZT_E_CBOR, at, "manifest ends inside a CBOR head");
    uint64_t v = 0;
    for (size_t i = 0; i < nb; i++)
        v = (v << 8) | d->p[d->pos + i];
    d->pos += nb;
    *arg = v;
    /* Major 7 heads of 2-8 bytes are floats, checked in simple_value(). */
    if (d->det && *major != 7 && v < (nb == 1 ? 24u : 1ull << (4 * nb)))
        return FAIL_AT(d, ZT_E_NONCANONICAL, at,
                       "v2 §3.1: the value %llu is encoded in a %zu-byte head, not the shortest",
                       (unsigned long long)v, nb + 1);
    return ZT_OK;
}

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1F;
    int m = h & 0x3FF;
    double v;
    if (e == 0)
        v = ldexp(m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* The first and last 8 bytes of a string, zero-padded when it is shorter: a
 * pure function of (bytes, n) that holds every byte when n <= 16. `avail`
 * bytes (>= n) are readable at s. */
static void words(const uint8_t *s, size_t n, size_t avail, uint64_t *head, uint64_t *tail)
{
    uint64_t a = 0, b = 0;
    if (n >= 8) {
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
    } else if (n && avail >= 8) {
        memcpy(&a, s, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        a &= ~0ull >> (64 - 8 * n);
#else
        a &= ~0ull << (64 - 8 * n);
#endif
    } else if (n) {
        memcpy(&a, s, n);
    }
    *head = a;
    *tail = b;
}

/* Validates and copies a string the cache below did not have. Out of line so
 * that the cache hit, the common case, stays small enough to inline. */
__attribute__((noinline)) static zt_status new_string(dec *d, unsigned major, uint64_t at,
                                                      const uint8_t *src, size_t n,
                                                      struct intern *slot, zt_value *out)
{
    if (major == 3 && !utf8_valid(src, n))
        return FAIL_AT(d, ZT_E_CBOR, at, "text string is not valid UTF-8");
    if (n > UINT32_MAX)
        return FAIL_AT(d, ZT_E_LIMIT, at, "string too long");
    char *s = zt__arena_strndup(d->arena, (const char *)src, n);
    if (!s)
        return ZT_FAIL(d->err, ZT_E_NOMEM, "out of memory decoding the manifest");
    if (slot) {
        slot->s = s;
        slot->n = (uint32_t)n;
        slot->major = (uint8_t)major;
    }
    out->kind = major == 3 ? ZT_VAL_TEXT : ZT_VAL_BYTES;
    out->n = (uint32_t)n;
    out->v.s = s;
    return ZT_OK;
}

/* A manifest repeats the same short strings for every object ("dtype",
 * "offset", "f32", "raw", "dense"...). Values are immutable, so equal strings
 * share one validated arena copy: a direct-mapped cache of recent short
 * strings saves the UTF-8 check, the copy and the memory. */
static inline zt_status make_string(dec *d, unsigned major, uint64_t at, const uint8_t *src,
                                    size_t n, size_t avail, zt_value *out)
{
    if (n > 32)
        return new_string(d, major, at, src, n, NULL, out);
    uint64_t head, tail;
    words(src, n, avail, &head, &tail);
    struct intern *slot =
        &d->intern[((head ^ (tail * 0x9E3779B97F4A7C15ull) ^ n) * 0xFF51AFD7ED558CCDull) >> 56];
    if (slot->s && slot->n == n && slot->major == major && slot->head == head &&
        slot->tail == tail && (n <= 16 || !memcmp(slot->s + 8, src + 8, n - 16))) {
        out->kind = major == 3 ? ZT_VAL_TEXT : ZT_VAL_BYTES;
        out->n = (uint32_t)n;
        out->v.s = slot->s;
        return ZT_OK;
    }
    slot->s = NULL; /* filled by new_string() on success */
    slot->head = head;
    slot->tail = tail;
    return new_string(d, major, at, src, n, slot, out);
}

/* Indefinite-length string: definite chunks of the same major type, then a break. */
static zt_status indefinite_string(dec *d, unsigned major, uint64_t at, zt_value *out)
{
    size_t scan = d->pos, total = 0;
    for (;;) {
        if (scan >= d->len)
            return FAIL_AT(d, ZT_E_CBOR, at, "indefinite string has no break");
        if (d->p[scan] == 0xFF)
            break;
        size_t save = d->pos;
        d->pos = scan;
        unsigned cm, cai;
        uint64_t clen = 0;
        zt_status st = read_head(d, &cm, &cai, &clen);
        if (st)
            return st;
        if (cm != major || cai == 31)
            return FAIL_AT(d, ZT_E_CBOR, scan, "bad chunk in an indefinite-length string");
        if (clen > d->len - d->pos)
            return FAIL_AT(d, ZT_E_CBOR, scan, "string chunk longer than the manifest");
        /* RFC 8949 3.2.3: a character may not be split across chunks. */
        if (major == 3 && !utf8_valid(d->p + d->pos, (size_t)clen))
            return FAIL_AT(d, ZT_E_CBOR, scan, "text string chunk is not valid UTF-8");
        total += (size_t)clen;
        scan = d->pos + (size_t)clen;
        d->pos = save;
    }
    uint8_t *buf = zt__arena_alloc(d->arena, total + 1);
    if (!buf)
        return ZT_FAIL(d->err, ZT_E_NOMEM, "out of memory decoding the manifest");
    size_t w = 0;
    while (d->p[d->pos] != 0xFF) {
        unsigned cm, cai;
        uint64_t clen = 0;
        read_head(d, &cm, &cai, &clen);
        memcpy(buf + w, d->p + d->pos, (size_t)clen);
        w += (size_t)clen;
        d->pos += (size_t)clen;
    }
    d->pos++; /* break */
    zt_status st = make_string(d, major, at, buf, total, total, out);
    return st;
}

static zt_status simple_value_plain(dec *d, unsigned ai, uint64_t arg, uint64_t at, zt_value *v)
{
    switch (ai) {
    case 20:
        v->kind = ZT_VAL_FALSE;
        return ZT_OK;
    case 21:
        v->kind = ZT_VAL_TRUE;
        return ZT_OK;
    case 22:
        v->kind = ZT_VAL_NULL;
        return ZT_OK;
    case 23:
        v->kind = ZT_VAL_UNDEFINED;
        return ZT_OK;
    case 24:
        if (arg < 32)
            return FAIL_AT(d, ZT_E_CBOR, at, "invalid two-byte simple value %llu",
                           (unsigned long long)arg);
        v->kind = ZT_VAL_SIMPLE;
        v->v.u = arg;
        return ZT_OK;
    case 25:
        v->kind = ZT_VAL_FLOAT;
        v->v.f = half_to_double((uint16_t)arg);
        return ZT_OK;
    case 26: {
        uint32_t bits = (uint32_t)arg;
        float f;
        memcpy(&f, &bits, 4);
        v->kind = ZT_VAL_FLOAT;
        v->v.f = f;
        return ZT_OK;
    }
    case 27:
        v->kind = ZT_VAL_FLOAT;
        memcpy(&v->v.f, &arg, 8);
        return ZT_OK;
    default:
        v->kind = ZT_VAL_SIMPLE;
        v->v.u = arg;
        return ZT_OK;
    }
}

/* RFC 8949 §4.2.1 / v2 §3.1: a float must be in its shortest exact width,
 * and the only NaN is f9 7e 00. */
static zt_status check_float(dec *d, unsigned ai, uint64_t arg, double f, uint64_t at)
{
    if (ai == 25) {
        if ((arg & 0x7C00) == 0x7C00 && (arg & 0x3FF) && arg != 0x7E00)
            return FAIL_AT(d, ZT_E_NONCANONICAL, at,
                           "v2 §3.1: NaN must be encoded f9 7e 00, not f9 %04llx",
                           (unsigned long long)arg);
        return ZT_OK;
    }
    if (isnan(f))
        return FAIL_AT(d, ZT_E_NONCANONICAL, at,
                       "v2 §3.1: NaN must be encoded f9 7e 00, not as a %s",
                       ai == 26 ? "f32" : "f64");
    bool shorter = ai == 26 ? zt__float_fits(f, 11, -24, 16) : zt__float_fits(f, 24, -149, 128);
    if (shorter)
        return FAIL_AT(d, ZT_E_NONCANONICAL, at,
                       "v2 §3.1: float %g is encoded as %s but fits a narrower float", f,
                       ai == 26 ? "f32" : "f64");
    return ZT_OK;
}

static zt_status simple_value(dec *d, unsigned ai, uint64_t arg, uint64_t at, zt_value *v)
{
    if (d->det && ai >= 25 && ai <= 27) {
        zt_status st = simple_value_plain(d, ai, arg, at, v);
        return st ? st : check_float(d, ai, arg, v->v.f, at);
    }
    return simple_value_plain(d, ai, arg, at, v);
}

/* Pops the children of the top frame into an arena array and pushes the container. */
static zt_status close_frame(dec *d, frame *f)
{
    size_t n = d->vn - f->base;
    zt_value cv = {0};
    cv.kind = f->kind;
    if (n) {
        zt_value *items = zt__arena_alloc(d->arena, n * sizeof(zt_value));
        if (!items)
            return ZT_FAIL(d->err, ZT_E_NOMEM, "out of memory decoding the manifest");
        memcpy(items, d->vs + f->base, n * sizeof(zt_value));
        cv.v.items = items;
    }
    if (n > UINT32_MAX)
        return FAIL_AT(d, ZT_E_LIMIT, f->at, "container too large");
    cv.n = (uint32_t)(f->kind == ZT_VAL_MAP ? n / 2 : n);
    cv.tag = f->tag;
    if (d->det && f->kind != ZT_VAL_TAG)
        cv.at = d->base_off + f->at; /* v2 messages name where the item is */
    d->vn = f->base;
    return push_value(d, &cv);
}

static zt_status open_container(dec *d, frame *stack, size_t *depth, size_t max_depth, uint8_t kind,
                                bool indef, uint64_t count, uint64_t tag, uint64_t at)
{
    if (*depth >= max_depth)
        return FAIL_AT(d, ZT_E_DEPTH, at, "CBOR nesting deeper than %zu", max_depth);
    uint64_t left = d->len - d->pos;
    if (!indef) {
        uint64_t need = count;
        if (kind == ZT_VAL_MAP && !zt__mul_ok(count, 2, &need))
            need = UINT64_MAX;
        if (need > left)
            return FAIL_AT(d, ZT_E_CBOR, at,
                           "container declares %llu items but only %llu bytes follow",
                           (unsigned long long)count, (unsigned long long)left);
        count = need;
    }
    frame *f = &stack[(*depth)++];
    f->kind = kind;
    f->indefinite = indef;
    f->expected = count;
    f->got = 0;
    f->base = d->vn;
    f->tag = tag;
    f->at = at;
    return ZT_OK;
}

/* One more item of frame f is complete (it ended at d->pos). In a
 * deterministic map, a finished key must sort after the previous key. */
static zt_status item_done(dec *d, frame *f)
{
    if (d->det && f->kind == ZT_VAL_MAP && f->got % 2 == 0) {
        if (f->got) {
            size_t a = f->prev_end - f->prev_at, b = d->pos - f->key_at;
            int c = memcmp(d->p + f->prev_at, d->p + f->key_at, a < b ? a : b);
            if (!c && a == b)
                return FAIL_AT(d, ZT_E_DUPLICATE, f->key_at, "v2 §3.1: map key appears twice");
            if (c > 0 || (!c && a > b))
                return FAIL_AT(d, ZT_E_NONCANONICAL, f->key_at,
                               "v2 §3.1: map key is not in bytewise order after the previous one");
        }
        f->prev_at = f->key_at;
        f->prev_end = d->pos;
    }
    f->got++;
    return ZT_OK;
}

static zt_status decode_loop(dec *d, size_t max_depth)
{
    frame stack[ZT_MAX_DEPTH + 1];
    size_t depth = 0;
    if (max_depth == 0 || max_depth > ZT_MAX_DEPTH)
        max_depth = ZT_MAX_DEPTH;
    for (;;) {
        /* Close every container that is complete. */
        while (depth && !stack[depth - 1].indefinite &&
               stack[depth - 1].got == stack[depth - 1].expected) {
            zt_status st = close_frame(d, &stack[--depth]);
            if (!st && depth)
                st = item_done(d, &stack[depth - 1]);
            if (st)
                return st;
        }
        if (depth == 0 && d->vn == 1)
            return ZT_OK;

        uint64_t at = d->pos;
        if (d->det && depth && stack[depth - 1].kind == ZT_VAL_MAP && stack[depth - 1].got % 2 == 0)
            stack[depth - 1].key_at = d->pos;
        if (d->pos < d->len && d->p[d->pos] == 0xFF) {
            d->pos++;
            if (!depth || !stack[depth - 1].indefinite)
                return FAIL_AT(d, ZT_E_CBOR, at, "unexpected CBOR break");
            frame *f = &stack[depth - 1];
            if (f->kind == ZT_VAL_MAP && (f->got % 2))
                return FAIL_AT(d, ZT_E_CBOR, at, "indefinite map ends after a key");
            zt_status st = close_frame(d, &stack[--depth]);
            if (st)
                return st;
            if (depth)
                stack[depth - 1].got++;
            continue;
        }
        unsigned major = 0, ai = 0;
        uint64_t arg = 0;
        zt_status st = read_head(d, &major, &ai, &arg);
        if (st)
            return st;
        bool indef = ai == 31;
        if (indef && d->det)
            return FAIL_AT(d, ZT_E_NONCANONICAL, at, "v2 §3.1: indefinite-length item");
        zt_value v = {0};
        switch (major) {
        case 0:
        case 1:
            if (indef)
                return FAIL_AT(d, ZT_E_CBOR, at, "indefinite length on an integer");
            v.kind = major == 0 ? ZT_VAL_UINT : ZT_VAL_NEGINT;
            v.v.u = arg;
            break;
        case 2:
        case 3:
            if (indef) {
                st = indefinite_string(d, major, at, &v);
            } else {
                if (arg > d->len - d->pos)
                    return FAIL_AT(d, ZT_E_CBOR, at,
                                   "string of %llu bytes but only %zu bytes follow",
                                   (unsigned long long)arg, d->len - d->pos);
                st = make_string(d, major, at, d->p + d->pos, (size_t)arg, d->len - d->pos, &v);
                d->pos += (size_t)arg;
            }
            if (st)
                return st;
            break;
        case 4:
        case 5:
            st = open_container(d, stack, &depth, max_depth, major == 4 ? ZT_VAL_ARRAY : ZT_VAL_MAP,
                                indef, arg, 0, at);
            if (st)
                return st;
            continue;
        case 6:
            if (indef)
                return FAIL_AT(d, ZT_E_CBOR, at, "indefinite length on a tag");
            st = open_container(d, stack, &depth, max_depth, ZT_VAL_TAG, false, 1, arg, at);
            if (st)
                return st;
            continue;
        default: /* 7 */
            if (indef)
                return FAIL_AT(d, ZT_E_CBOR, at, "unexpected CBOR break");
            st = simple_value(d, ai, arg, at, &v);
            if (st)
                return st;
            break;
        }
        if (d->det)
            v.at = d->base_off + at;
        st = push_value(d, &v);
        if (!st && depth)
            st = item_done(d, &stack[depth - 1]);
        if (st || !depth)
            return st;
    }
}

zt_status zt__cbor_decode(const uint8_t *buf, size_t len, const zt__cbor_limits *lim,
                          zt__arena *arena, zt_value **out, zt_error *err)
{
    dec d = {.p = buf,
             .len = len,
             .base_off = lim ? lim->base_offset : 0,
             .arena = arena,
             .err = err,
             .det = lim && lim->deterministic};
    zt_status st = decode_loop(&d, lim ? lim->max_depth : ZT_MAX_DEPTH);
    if (st == ZT_OK && d.pos != len)
        st = FAIL_AT(&d, ZT_E_CBOR, d.pos, "%zu trailing bytes after the manifest", len - d.pos);
    if (st == ZT_OK) {
        zt_value *root = zt__arena_alloc(arena, sizeof(*root));
        if (!root)
            st = ZT_FAIL(err, ZT_E_NOMEM, "out of memory decoding the manifest");
        else {
            *root = d.vs[0];
            *out = root;
        }
    }
    zt__free(d.vs);
    return st;
}

zt_status zt__cbor_decode_prefix(const uint8_t *buf, size_t len, const zt__cbor_limits *lim,
                                 zt__arena *arena, zt_value **out, size_t *used, zt_error *err)
{
    dec d = {.p = buf,
             .len = len,
             .base_off = lim ? lim->base_offset : 0,
             .arena = arena,
             .err = err,
             .det = lim && lim->deterministic};
    zt_status st = decode_loop(&d, lim ? lim->max_depth : ZT_MAX_DEPTH);
    if (st == ZT_OK) {
        zt_value *v = zt__arena_alloc(arena, sizeof(*v));
        if (!v)
            st = ZT_FAIL(err, ZT_E_NOMEM, "out of memory decoding the manifest");
        else {
            *v = d.vs[0];
            *out = v;
            *used = d.pos;
        }
    }
    zt__free(d.vs);
    return st;
}

bool zt__utf8_valid(const uint8_t *s, size_t n)
{
    return utf8_valid(s, n);
}
