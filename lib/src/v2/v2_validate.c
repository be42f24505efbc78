/*
 * The zTensor v2 validation summary (§3.6 items 3-5) over a built model:
 * every blob reference aligned and inside the file it points into (this
 * file, or a shard as sized by the root's table, checked from the root
 * alone), references into one file pairwise identical or disjoint (the
 * manifest blob included for this file), logical types on their storage
 * dtype, and the rules of every layout this reader interprets: `dense` here,
 * the registered profiles in v2_profiles.c. An object whose layout or part
 * type is unknown is kept, marked uninterpreted (§4.2, §5.2).
 */
#include "internal.h"

#include <string.h>

typedef struct ref {
    uint64_t off, len;
    uint32_t group; /* 0: this file; shard index + 1 */
    uint32_t obj;   /* UINT32_MAX: the manifest blob */
    uint32_t part;
} ref;

/* Word w of a reference's sort key, least significant first: the length,
 * the offset, the file. */
static inline uint64_t key_word(const ref *r, unsigned w)
{
    return w == 0 ? r->len : w == 1 ? r->off : r->group;
}

/* One stable counting pass on byte `shift` / 8 of key word w, src -> dst. */
static void radix_pass(const ref *src, ref *dst, size_t n, unsigned w, unsigned shift)
{
    size_t count[256] = {0}, pos = 0;
    for (size_t i = 0; i < n; i++)
        count[(key_word(&src[i], w) >> shift) & 0xFF]++;
    for (unsigned b = 0; b < 256; b++) {
        size_t c = count[b];
        count[b] = pos;
        pos += c;
    }
    for (size_t i = 0; i < n; i++)
        dst[count[(key_word(&src[i], w) >> shift) & 0xFF]++] = src[i];
}

/* Sorted by (file, offset, length), stably: ties keep their order, as the
 * stable merge sort of glibc's qsort kept them, so a message names the same
 * blob. An LSD radix sort, a byte at a time, only on the bytes in which the
 * keys differ (lengths are small, offsets multiples of 4096, one file): for
 * 100,000 references 3 passes, about 20 M instructions where qsort took 72 M. */
static zt_status sort_refs(ref *refs, size_t n, zt_error *err)
{
    uint64_t any[3] = {0, 0, 0}, all[3] = {~0ull, ~0ull, ~0ull};
    for (size_t i = 0; i < n; i++)
        for (unsigned w = 0; w < 3; w++) {
            any[w] |= key_word(&refs[i], w);
            all[w] &= key_word(&refs[i], w);
        }
    ref *tmp = NULL, *src = refs;
    for (unsigned w = 0; w < 3; w++)
        for (unsigned shift = 0; shift < 64; shift += 8) {
            if (!(((any[w] ^ all[w]) >> shift) & 0xFF))
                continue; /* every key has this byte: the pass would change nothing */
            if (!tmp && !(tmp = zt__malloc(n * sizeof(*tmp))))
                return ZT_FAIL(err, ZT_E_NOMEM, "out of memory checking %zu blob references", n);
            ref *dst = src == refs ? tmp : refs;
            radix_pass(src, dst, n, w, shift);
            src = dst;
        }
    if (src != refs)
        memcpy(refs, src, n * sizeof(*refs));
    zt__free(tmp);
    return ZT_OK;
}

static const char *ref_obj(const zt__model *m, const ref *r)
{
    return r->obj == UINT32_MAX ? "(manifest)" : m->objs[r->obj].name;
}

static const char *ref_part(const zt__model *m, const ref *r)
{
    return r->obj == UINT32_MAX ? "" : m->objs[r->obj].comps[r->part].role;
}

/* §2.4 / §3.6.4: sorted by (file, offset, length), each reference must equal
 * or lie past the last distinct one (see docs/FORMAT-NOTES.md for why that
 * is enough). Zero-length blobs are exempt. */
static zt_status check_overlap(const zt__model *m, ref *refs, size_t n, zt_error *err)
{
    zt_status st = sort_refs(refs, n, err);
    if (st)
        return st;
    for (size_t i = 1, cur = 0; i < n; i++) {
        const ref *a = &refs[cur], *b = &refs[i];
        if (a->group == b->group && a->off == b->off && a->len == b->len)
            continue;
        if (a->group == b->group && b->off < a->off + a->len)
            return ZT_V2_FAIL(err, ZT_E_OVERLAP, ref_obj(m, b), ref_part(m, b), 1, b->off, "§2.4",
                              "blob [%llu, +%llu) partly overlaps blob [%llu, +%llu) of object "
                              "\"%.100s\" part \"%.60s\"%s",
                              (unsigned long long)b->off, (unsigned long long)b->len,
                              (unsigned long long)a->off, (unsigned long long)a->len, ref_obj(m, a),
                              ref_part(m, a), b->group ? " in the same shard" : "");
        cur = i;
    }
    return ZT_OK;
}

static zt_status check_part(zt__model *m, struct zt_object *o, struct zt_component *c,
                            uint64_t file_size, uint64_t max_unc, zt_error *err)
{
    const char *on = o->name, *pn = c->role;
    if (c->type) {
        const zt__v2_type *t = zt__v2_type_find(c->type);
        if (!t) {
            c->type_unknown = true;
            o->uninterpreted = true;
        } else if (t->dtype != c->dtype) {
            return ZT_V2_FAIL(err, ZT_E_TYPE, on, pn, 1, c->offset, "§4.2",
                              "logical type \"%s\" must be stored as %s, not %s", c->type,
                              zt_dtype_name(t->dtype), zt_dtype_name(c->dtype));
        }
    }
    if (c->has_uncompressed && c->uncompressed_length > max_unc)
        return ZT_V2_FAIL(err, ZT_E_LIMIT, on, pn, 1, c->offset, "§8.1",
                          "decoded_length %llu exceeds the limit of %llu",
                          (unsigned long long)c->uncompressed_length, (unsigned long long)max_unc);
    if (c->offset % ZT_V2_ALIGN || c->offset < ZT_V2_ALIGN)
        return ZT_V2_FAIL(err, ZT_E_ALIGN, on, pn, 1, c->offset, "§2.4",
                          "blob offset %llu is not a multiple of 4096 at or after 4096",
                          (unsigned long long)c->offset);
    uint64_t size = c->shard ? m->v2->shards[c->shard - 1].size : file_size, end;
    if (!zt__add_ok(c->offset, c->length, &end) || end > size - ZT_V2_FOOTER)
        return ZT_V2_FAIL(err, ZT_E_BOUNDS, on, pn, 1, c->offset, "§2.4",
                          "blob [%llu, +%llu) runs past the data region of %s, which ends at "
                          "%llu",
                          (unsigned long long)c->offset, (unsigned long long)c->length,
                          c->shard ? "its shard" : "the file",
                          (unsigned long long)(size - ZT_V2_FOOTER));
    return ZT_OK;
}

static zt_status check_dense(struct zt_object *o, zt_error *err)
{
    if (o->ncomp != 1 || strcmp(o->comps[0].role, "data"))
        return ZT_V2_FAIL(err, ZT_E_COMPONENTS, o->name, NULL, 1, o->at, "§5.1",
                          "a dense object has exactly one part, named \"data\"");
    const struct zt_component *c = &o->comps[0];
    unsigned bits = zt__v2_elem_bits(c);
    if (!bits)
        return ZT_OK; /* unknown logical type: uninterpreted */
    uint64_t n = 1, want;
    for (size_t i = 0; i < o->ndim; i++)
        n *= o->shape[i]; /* checked for overflow when parsed */
    if (!zt__v2_size(bits, n, &want))
        return ZT_V2_FAIL(err, ZT_E_SIZE, o->name, "data", 1, c->offset, "§5.1",
                          "the size of %llu elements overflows 64 bits", (unsigned long long)n);
    if (zt__v2_decoded_size(c) != want)
        return ZT_V2_FAIL(err, ZT_E_SIZE, o->name, "data", 1, c->offset, "§5.1",
                          "decoded size is %llu bytes; %llu elements of %s need %llu",
                          (unsigned long long)zt__v2_decoded_size(c), (unsigned long long)n,
                          c->type ? c->type : zt_dtype_name(c->dtype), (unsigned long long)want);
    return ZT_OK;
}

static zt_status check_object(zt__model *m, struct zt_object *o, uint64_t file_size,
                              uint64_t max_unc, zt_error *err)
{
    zt_status st;
    for (size_t i = 0; i < o->ncomp; i++)
        if ((st = check_part(m, o, &o->comps[i], file_size, max_unc, err)))
            return st;
    if (!strcmp(o->format, "dense"))
        return check_dense(o, err);
    return zt__v2_check_layout(o, err);
}

/* For the writer: the type and layout rules of an object it built (its
 * offsets are right by construction). */
zt_status zt__v2_check_object(struct zt_object *o, zt_error *err)
{
    for (size_t i = 0; i < o->ncomp; i++) {
        struct zt_component *c = &o->comps[i];
        const zt__v2_type *t = c->type ? zt__v2_type_find(c->type) : NULL;
        if (c->type && !t)
            c->type_unknown = o->uninterpreted = true;
        else if (t && t->dtype != c->dtype)
            return ZT_V2_FAIL(err, ZT_E_TYPE, o->name, c->role, 0, 0, "§4.2",
                              "logical type \"%s\" must be stored as %s, not %s", c->type,
                              zt_dtype_name(t->dtype), zt_dtype_name(c->dtype));
    }
    if (!o->ncomp)
        return ZT_V2_FAIL(err, ZT_E_COMPONENTS, o->name, NULL, 0, 0, "§3.3",
                          "an object needs at least one part");
    return !strcmp(o->format, "dense") ? check_dense(o, err) : zt__v2_check_layout(o, err);
}

zt_status zt__v2_validate(zt__model *m, uint64_t file_size, uint64_t manifest_offset,
                          uint64_t manifest_length, uint64_t max_unc, zt_error *err)
{
    size_t n = 1;
    for (size_t i = 0; i < m->nobj; i++)
        n += m->objs[i].ncomp;
    ref *refs = zt__malloc(n * sizeof(*refs));
    if (!refs)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory checking %zu blob references", n);
    size_t k = 0;
    refs[k++] = (ref){manifest_offset, manifest_length, 0, UINT32_MAX, 0};
    zt_status st = ZT_OK;
    for (size_t i = 0; i < m->nobj && !st; i++) {
        struct zt_object *o = &m->objs[i];
        st = check_object(m, o, file_size, max_unc, err);
        for (size_t j = 0; j < o->ncomp; j++)
            if (o->comps[j].length)
                refs[k++] = (ref){o->comps[j].offset, o->comps[j].length, o->comps[j].shard,
                                  (uint32_t)i, (uint32_t)j};
    }
    if (!st)
        st = check_overlap(m, refs, k, err);
    zt__free(refs);
    return st;
}
