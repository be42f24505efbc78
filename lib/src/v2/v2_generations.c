/*
 * Generations of a zTensor v2 file (§2.5). An append adds blobs, a manifest
 * and a footer, and leaves the earlier ones in place as unreferenced bytes:
 * the footer at EOF defines the file, and no footer points back. So earlier
 * generations are found by their footers: 40 bytes ending in the magic,
 * version 2, lying outside every blob the current manifest references. Each
 * found one is checked as a file of its own would be, with EOF where its
 * footer ends: bounds, XXH3-64 of its manifest, deterministic CBOR and every
 * rule of the validation summary. The bytes read are those outside the
 * current blobs (padding and superseded data), once; at most MAX_GENS earlier
 * footers are checked, so a file of repeated footers costs bounded work.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_GENS 256
#define CHUNK (1u << 20)

typedef struct span {
    uint64_t off, end;
} span;

typedef struct gen_scan {
    const zt_file *f;
    zt_generation *out;
    size_t cap, count;
    zt_error *err;
} gen_scan;

static int cmp_span(const void *a, const void *b)
{
    uint64_t x = ((const span *)a)->off, y = ((const span *)b)->off;
    return (x > y) - (x < y);
}

/* One earlier footer candidate whose magic ends at `end`. */
static void check_footer(gen_scan *g, const uint8_t *tail, uint64_t end)
{
    zt__v2_footer ft;
    zt_error e;
    memset(&e, 0, sizeof(e));
    if (memcmp(tail + 32, zt__v2_magic, 8) ||
        zt__v2_footer_parse(tail, end, 0, &ft, &e) == ZT_E_VERSION)
        return; /* not a footer of this version: padding that happens to hold the magic */
    zt_generation gen = {.footer_offset = end - ZT_V2_FOOTER};
    zt_status st = e.code;
    if (!st && g->count >= MAX_GENS)
        st = ZT_E_LIMIT;
    if (!st && ft.manifest_length) {
        gen.manifest_offset = ft.manifest_offset;
        gen.manifest_length = ft.manifest_length;
        gen.manifest_hash = ft.manifest_hash;
        uint8_t *buf = zt__malloc((size_t)ft.manifest_length);
        st = buf ? zt__read_at(g->f, ft.manifest_offset, (size_t)ft.manifest_length, buf, &e)
                 : ZT_E_NOMEM;
        if (!st && zt__xxh3(buf, (size_t)ft.manifest_length) != ft.manifest_hash)
            st = ZT_E_MANIFEST_HASH;
        zt__model m = {0};
        zt__arena_init(&m.arena);
        if (!st)
            st = zt__v2_parse_manifest(&m, buf, (size_t)ft.manifest_length, end, ft.manifest_offset,
                                       g->f->max_uncompressed, &e);
        gen.objects = m.nobj;
        zt__arena_free(&m.arena);
        zt__free(buf);
    }
    gen.status = st;
    if (g->count < g->cap)
        g->out[g->count] = gen;
    g->count++;
}

/* Every magic in [a, b) whose whole footer lies in [a, b). */
static zt_status scan_gap(gen_scan *g, uint64_t a, uint64_t b, uint8_t *buf)
{
    for (uint64_t pos = a; pos + 8 <= b;) {
        size_t n = b - pos > CHUNK ? CHUNK : (size_t)(b - pos);
        zt_status st = zt__read_at(g->f, pos, n, buf, g->err);
        if (st)
            return st;
        for (size_t i = 0; i + 8 <= n; i++) {
            const uint8_t *hit = memchr(buf + i, 0x89, n - 7 - i);
            if (!hit)
                break;
            i = (size_t)(hit - buf);
            uint64_t mend = pos + i + 8;
            if (memcmp(hit, zt__v2_magic, 8) || mend < a + ZT_V2_FOOTER)
                continue; /* (a footer ending within 40 bytes of the gap's start: none) */
            uint8_t tail[ZT_V2_FOOTER];
            if ((st = zt__read_at(g->f, mend - ZT_V2_FOOTER, ZT_V2_FOOTER, tail, g->err)))
                return st;
            check_footer(g, tail, mend);
        }
        if (pos + n >= b)
            break;
        pos += n - 7; /* a magic across the chunk boundary is seen in the next */
    }
    return ZT_OK;
}

static zt_status collect_spans(const zt_file *f, span **out, size_t *n, zt_error *err)
{
    const zt__model *m = &f->model;
    size_t cap = 3;
    for (size_t i = 0; i < m->nobj; i++)
        cap += m->objs[i].ncomp;
    span *s = zt__malloc(cap * sizeof(*s));
    if (!s)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    size_t k = 0;
    s[k++] = (span){0, 8};
    s[k++] = (span){f->size - ZT_V2_FOOTER, f->size};
    if (f->manifest_length)
        s[k++] = (span){f->manifest_offset, f->manifest_offset + f->manifest_length};
    for (size_t i = 0; i < m->nobj; i++)
        for (size_t j = 0; j < m->objs[i].ncomp; j++) {
            const struct zt_component *c = &m->objs[i].comps[j];
            if (!c->shard && c->length)
                s[k++] = (span){c->offset, c->offset + c->length};
        }
    qsort(s, k, sizeof(*s), cmp_span);
    *out = s;
    *n = k;
    return ZT_OK;
}

zt_status zt__v2_walk_gaps(const zt_file *f, zt__gap_fn fn, void *ud, zt_error *err)
{
    span *s = NULL;
    size_t n = 0;
    zt_status st = collect_spans(f, &s, &n, err);
    uint64_t reach = 0;
    for (size_t i = 0; !st && i < n; i++) {
        if (s[i].off > reach)
            st = fn(ud, reach, s[i].off);
        if (s[i].end > reach)
            reach = s[i].end;
    }
    zt__free(s);
    return st;
}

typedef struct gap_scan {
    gen_scan *g;
    uint8_t *buf;
} gap_scan;

static zt_status scan_one(void *ud, uint64_t a, uint64_t b)
{
    gap_scan *x = ud;
    return scan_gap(x->g, a, b, x->buf);
}

zt_status zt_file_generations(const zt_file *f, zt_generation *out, size_t cap, size_t *count,
                              zt_error *err)
{
    *count = 0;
    if (f->model.kind != ZT_KIND_ZT_2)
        return ZT_FAIL(err, ZT_E_UNSUPPORTED, "generations are a v2 notion");
    gen_scan g = {f, out, cap, 0, err};
    gap_scan x = {&g, zt__malloc(CHUNK)};
    zt_status st =
        x.buf ? zt__v2_walk_gaps(f, scan_one, &x, err) : ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    zt__free(x.buf);
    if (!st) {
        const zt__v2_footer *ft = &f->model.v2->footer;
        zt_generation cur = {f->size - ZT_V2_FOOTER, ft->manifest_offset, ft->manifest_length,
                             ft->manifest_hash,      f->model.nobj,       ZT_OK};
        if (g.count < cap)
            out[g.count] = cur;
        g.count++;
    }
    *count = g.count;
    return st;
}
