/*
 * The data rules of zTensor v2 (checked "when decoding or verifying"): the
 * byte values of the logical type bool, the zero trailing nibble of an odd
 * count of f4_e2m1 elements (Appendix A), the structure of zt.sparse_csr/1
 * (indptr starts at 0, never decreases, ends at nnz; column indices strictly
 * increasing in each row and below C) and the bounds and uniqueness of
 * zt.sparse_coo/1 coordinates. Parts are streamed through a decoder; only
 * COO uniqueness keeps one u64 per element (a row-major cell number) to sort.
 * Uninterpreted objects and layouts without data rules pass.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define BUF (1u << 16)

/* A little-endian element stream over a part's decoded bytes. */
typedef struct rd {
    zt_decoder *d;
    uint8_t buf[BUF];
    size_t len, pos;
    uint64_t at; /* elements read */
} rd;

static zt_status rd_open(rd *r, const zt_file *f, const struct zt_component *c, zt_error *err)
{
    r->len = r->pos = 0;
    r->at = 0;
    return zt_decoder_new(f, c, &r->d, err);
}

static zt_status rd_next(rd *r, unsigned width, uint64_t *out, zt_error *err)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < width; i++) {
        if (r->pos == r->len) {
            zt_status st = zt_decoder_read(r->d, r->buf, BUF, &r->len, err);
            if (st)
                return st;
            if (!r->len)
                return ZT_FAIL(err, ZT_E_SIZE, "part ended early");
            r->pos = 0;
        }
        v |= (uint64_t)r->buf[r->pos++] << (8 * i);
    }
    *out = v;
    r->at++;
    return ZT_OK;
}

static zt_status data_fail(zt_error *err, const struct zt_object *o, const struct zt_component *c,
                           const char *rule, const char *what, uint64_t i, uint64_t a, uint64_t b)
{
    return zt__fail(err, ZT_E_LAYOUT, o->name, c->role, 1, c->offset,
                    "v2 %s: %s at element %llu "
                    "(%llu, %llu)",
                    rule, what, (unsigned long long)i, (unsigned long long)a,
                    (unsigned long long)b);
}

/* Appendix A: bool bytes are 0 or 1; f4_e2m1's final odd nibble is 0. */
static zt_status type_rules(const zt_file *f, const struct zt_object *o,
                            const struct zt_component *c, uint64_t n, zt_error *err)
{
    bool is_bool = c->type && !strcmp(c->type, "bool");
    bool is_f4 = c->type && !strcmp(c->type, "f4_e2m1") && n % 2;
    if (!is_bool && !is_f4)
        return ZT_OK;
    rd *r = zt__malloc(sizeof(*r));
    zt_status st = r ? rd_open(r, f, c, err) : ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    uint64_t b = 0, size = zt__v2_decoded_size(c);
    for (uint64_t i = 0; !st && i < size; i++) {
        if (!(st = rd_next(r, 1, &b, err)) && is_bool && b > 1)
            st = data_fail(err, o, c, "Appendix A", "a bool byte is neither 0 nor 1", i, b, 1);
        if (!st && is_f4 && i + 1 == size && (b >> 4))
            st = data_fail(err, o, c, "Appendix A",
                           "the unused last nibble of f4_e2m1 is not "
                           "zero",
                           i, b, 0);
    }
    if (r)
        zt_decoder_free(r->d);
    zt__free(r);
    return st;
}

static const struct zt_component *find(const struct zt_object *o, const char *role)
{
    for (size_t i = 0; i < o->ncomp; i++)
        if (!strcmp(o->comps[i].role, role))
            return &o->comps[i];
    return NULL;
}

/* zt.sparse_csr/1: indptr and indices walked together. */
static zt_status csr(const zt_file *f, const struct zt_object *o, rd *p, rd *x, zt_error *err)
{
    const struct zt_component *ip = find(o, "indptr"), *ix = find(o, "indices");
    unsigned w = zt_dtype_width(ix->dtype);
    uint64_t nnz = zt__v2_decoded_size(ix) / w, rows = o->shape[0], cols = o->shape[1];
    uint64_t prev = 0, cur, col = 0, last = 0;
    zt_status st = rd_open(p, f, ip, err);
    if (!st)
        st = rd_open(x, f, ix, err);
    if (!st && !(st = rd_next(p, w, &prev, err)) && prev != 0)
        st = data_fail(err, o, ip, "zt.sparse_csr/1", "indptr[0] is not 0", 0, prev, 0);
    for (uint64_t r = 0; !st && r < rows; r++) {
        if ((st = rd_next(p, w, &cur, err)))
            break;
        if (cur < prev || cur > nnz) {
            st = data_fail(err, o, ip, "zt.sparse_csr/1",
                           cur < prev ? "indptr decreases" : "indptr passes nnz", r + 1, cur, nnz);
            break;
        }
        for (uint64_t k = prev; !st && k < cur; k++) {
            if ((st = rd_next(x, w, &col, err)))
                break;
            if (col >= cols)
                st = data_fail(err, o, ix, "zt.sparse_csr/1", "column index not below C", k, col,
                               cols);
            else if (k > prev && col <= last)
                st = data_fail(err, o, ix, "zt.sparse_csr/1",
                               "column indices not strictly increasing in a row", k, last, col);
            last = col;
        }
        prev = cur;
    }
    if (!st && prev != nnz)
        st = data_fail(err, o, ip, "zt.sparse_csr/1", "indptr[R] is not nnz", rows, prev, nnz);
    return st;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* zt.sparse_coo/1: structure-of-arrays coordinates, each dimension in turn
 * folded into a row-major cell number, then sorted for duplicates. */
static zt_status coo(const zt_file *f, const struct zt_object *o, rd *r, zt_error *err)
{
    const struct zt_component *co = find(o, "coords");
    unsigned w = zt_dtype_width(co->dtype);
    uint64_t nnz = zt__v2_decoded_size(co) / w / o->ndim, v;
    uint64_t *cell = zt__calloc(nnz ? nnz : 1, sizeof(uint64_t));
    zt_status st = cell ? rd_open(r, f, co, err)
                        : ZT_FAIL(err, ZT_E_NOMEM, "out of memory for %llu coordinates",
                                  (unsigned long long)nnz);
    for (size_t d = 0; !st && d < o->ndim; d++)
        for (uint64_t i = 0; !st && i < nnz; i++) {
            if ((st = rd_next(r, w, &v, err)))
                break;
            if (v >= o->shape[d])
                st = data_fail(err, o, co, "zt.sparse_coo/1", "coordinate not below shape[d]",
                               d * nnz + i, v, o->shape[d]);
            cell[i] = cell[i] * o->shape[d] + v; /* < product(shape), which fits */
        }
    if (!st && nnz > 1) {
        qsort(cell, nnz, sizeof(*cell), cmp_u64);
        for (uint64_t i = 1; !st && i < nnz; i++)
            if (cell[i] == cell[i - 1])
                st = data_fail(err, o, co, "zt.sparse_coo/1", "two elements name the same cell", i,
                               cell[i], cell[i]);
    }
    zt__free(cell);
    return st;
}

static uint64_t count_of(const struct zt_object *o, const struct zt_component *c)
{
    uint64_t n = 1;
    if (!strcmp(o->format, "zt.sparse_csr/1") && strcmp(c->role, "values"))
        return 0;
    if (!strcmp(o->format, "zt.sparse_csr/1"))
        return zt__v2_decoded_size(find(o, "indices")) / zt_dtype_width(find(o, "indices")->dtype);
    if (!strcmp(o->format, "zt.sparse_coo/1")) {
        const struct zt_component *co = find(o, "coords");
        return strcmp(c->role, "values")
                   ? 0
                   : zt__v2_decoded_size(co) / zt_dtype_width(co->dtype) / o->ndim;
    }
    for (size_t i = 0; i < o->ndim; i++)
        n *= o->shape[i];
    return n; /* dense data, mx data */
}

zt_status zt__v2_check_data(const zt_file *f, const struct zt_object *o, zt_error *err)
{
    if (o->uninterpreted)
        return ZT_OK;
    zt_status st = ZT_OK;
    for (size_t i = 0; i < o->ncomp && !st; i++)
        st = type_rules(f, o, &o->comps[i], count_of(o, &o->comps[i]), err);
    bool is_csr = !strcmp(o->format, "zt.sparse_csr/1");
    if (st || (!is_csr && strcmp(o->format, "zt.sparse_coo/1")))
        return st;
    rd *r = zt__calloc(2, sizeof(rd));
    if (!r)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    st = is_csr ? csr(f, o, &r[0], &r[1], err) : coo(f, o, &r[0], err);
    zt_decoder_free(r[0].d);
    zt_decoder_free(r[1].d);
    zt__free(r);
    return st;
}
