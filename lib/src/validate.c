/*
 * Every rule of the spec, as pure functions over (model, data region). Used
 * by the reader on every open and by the writer on every add_object.
 */
#include "internal.h"

#include <string.h>

static uint64_t decoded_len(const struct zt_component *c)
{
    return c->encoding == ZT_ENC_ZSTD ? c->uncompressed_length : c->length;
}

zt_status zt__validate_component(const struct zt_object *ob, const struct zt_component *c,
                                 const zt__validate_opts *o, zt_error *err)
{
    const char *on = ob->name, *r = c->role;
    if (!zt_dtype_width(c->dtype))
        return zt__fail(err, ZT_E_DTYPE, on, r, 0, 0, "invalid dtype");
    zt_dtype storage;
    unsigned ratio;
    if (c->type && zt_logical_type_info(c->type, &storage, &ratio) && storage != c->dtype)
        return zt__fail(err, ZT_E_TYPE, on, r, 1, c->offset,
                        "logical type \"%s\" must be stored as %s, not %s", c->type,
                        zt_dtype_name(storage), zt_dtype_name(c->dtype));
    if (o->require_alignment && c->offset % ZT_ALIGNMENT)
        return zt__fail(err, ZT_E_ALIGN, on, r, 1, c->offset, "offset %llu is not a multiple of 64",
                        (unsigned long long)c->offset);
    uint64_t end;
    if (!zt__add_ok(c->offset, c->length, &end))
        return zt__fail(err, ZT_E_BOUNDS, on, r, 1, c->offset,
                        "offset %llu + length %llu overflows", (unsigned long long)c->offset,
                        (unsigned long long)c->length);
    if (end > o->data_end)
        return zt__fail(err, ZT_E_BOUNDS, on, r, 1, c->offset,
                        "bytes [%llu, %llu) run past the data region, which ends at %llu "
                        "(manifest or end of file)",
                        (unsigned long long)c->offset, (unsigned long long)end,
                        (unsigned long long)o->data_end);
    if (c->length && c->offset < o->data_start)
        return zt__fail(err, ZT_E_BOUNDS, on, r, 1, c->offset,
                        "bytes start at %llu, inside the header (data starts at %llu)",
                        (unsigned long long)c->offset, (unsigned long long)o->data_start);
    if (c->encoding == ZT_ENC_ZSTD) {
        if (!c->has_uncompressed)
            return zt__fail(err, ZT_E_ENCODING, on, r, 1, c->offset,
                            "zstd component has no uncompressed_length");
        if (c->uncompressed_length > o->max_uncompressed)
            return zt__fail(err, ZT_E_LIMIT, on, r, 1, c->offset,
                            "uncompressed_length %llu exceeds the limit of %llu",
                            (unsigned long long)c->uncompressed_length,
                            (unsigned long long)o->max_uncompressed);
    }
    return ZT_OK;
}

static const struct zt_component *find(const struct zt_object *ob, const char *role)
{
    for (size_t i = 0; i < ob->ncomp; i++)
        if (!strcmp(ob->comps[i].role, role))
            return &ob->comps[i];
    return NULL;
}

/* Bytes per logical element of a component: width x ratio of its logical type. */
static uint64_t elem_size(const struct zt_component *c)
{
    unsigned ratio = 1;
    zt_dtype storage;
    if (c->type && !zt_logical_type_info(c->type, &storage, &ratio))
        ratio = 1;
    return (uint64_t)zt_dtype_width(c->dtype) * ratio;
}

static zt_status need(const struct zt_object *ob, const char *const *roles, size_t n, zt_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (!find(ob, roles[i]))
            return zt__fail(err, ZT_E_COMPONENTS, ob->name, roles[i], 0, 0,
                            "format \"%s\" requires component \"%s\"", ob->format, roles[i]);
    return ZT_OK;
}

static zt_status need_u64(const struct zt_object *ob, const struct zt_component *c, uint64_t count,
                          zt_error *err)
{
    if (c->dtype != ZT_DTYPE_U64)
        return zt__fail(err, ZT_E_DTYPE, ob->name, c->role, 1, c->offset,
                        "index component must have dtype u64, not %s", zt_dtype_name(c->dtype));
    uint64_t want;
    if (!zt__mul_ok(count, 8, &want) || decoded_len(c) != want)
        return zt__fail(err, ZT_E_SIZE, ob->name, c->role, 1, c->offset,
                        "holds %llu bytes; %llu u64 indices need %llu",
                        (unsigned long long)decoded_len(c), (unsigned long long)count,
                        (unsigned long long)(count * 8));
    return ZT_OK;
}

static zt_status shape_product(const struct zt_object *ob, uint64_t *out, zt_error *err)
{
    uint64_t p = 1;
    for (size_t i = 0; i < ob->ndim; i++)
        if (!zt__mul_ok(p, ob->shape[i], &p))
            return zt__fail(err, ZT_E_SIZE, ob->name, NULL, 0, 0,
                            "product of the shape overflows 64 bits");
    *out = p;
    return ZT_OK;
}

static zt_status check_dense(const struct zt_object *ob, zt_error *err)
{
    const struct zt_component *d = find(ob, "data");
    if (!ob->has_shape)
        return zt__fail(err, ZT_E_SCHEMA, ob->name, NULL, 0, 0, "dense object has no shape");
    uint64_t n = 0, want;
    zt_status st = shape_product(ob, &n, err);
    if (st)
        return st;
    if (!zt__mul_ok(n, elem_size(d), &want))
        return zt__fail(err, ZT_E_SIZE, ob->name, "data", 1, d->offset,
                        "shape x element size overflows 64 bits");
    if (decoded_len(d) != want)
        return zt__fail(err, ZT_E_SIZE, ob->name, "data", 1, d->offset,
                        "%s is %llu bytes but shape x %s needs %llu",
                        d->encoding == ZT_ENC_ZSTD ? "uncompressed_length" : "length",
                        (unsigned long long)decoded_len(d), zt_dtype_name(d->dtype),
                        (unsigned long long)want);
    return ZT_OK;
}

static zt_status values_count(const struct zt_object *ob, const struct zt_component *v,
                              uint64_t *nnz, zt_error *err)
{
    uint64_t es = elem_size(v);
    if (decoded_len(v) % es)
        return zt__fail(err, ZT_E_SIZE, ob->name, v->role, 1, v->offset,
                        "%llu bytes is not a whole number of %llu-byte elements",
                        (unsigned long long)decoded_len(v), (unsigned long long)es);
    *nnz = decoded_len(v) / es;
    return ZT_OK;
}

static zt_status check_sparse(const struct zt_object *ob, bool csr, zt_error *err)
{
    uint64_t nnz = 0;
    zt_status st = values_count(ob, find(ob, "values"), &nnz, err);
    if (st)
        return st;
    if (csr) {
        if ((st = need_u64(ob, find(ob, "indices"), nnz, err)))
            return st;
        const struct zt_component *ip = find(ob, "indptr");
        if (ob->has_shape && ob->ndim == 2) {
            /* rows + 1 pointers: with 2^64-1 rows no indptr can be right. */
            if (ob->shape[0] == UINT64_MAX)
                return zt__fail(err, ZT_E_SIZE, ob->name, "indptr", 1, ip->offset,
                                "%llu rows need more row pointers than 64 bits can count",
                                (unsigned long long)ob->shape[0]);
            return need_u64(ob, ip, ob->shape[0] + 1, err);
        }
        if (ip->dtype != ZT_DTYPE_U64)
            return zt__fail(err, ZT_E_DTYPE, ob->name, "indptr", 1, ip->offset,
                            "index component must have dtype u64");
        return ZT_OK;
    }
    uint64_t count;
    if (!zt__mul_ok(nnz, ob->has_shape ? ob->ndim : 0, &count))
        return zt__fail(err, ZT_E_SIZE, ob->name, "coords", 0, 0, "coords size overflows");
    return need_u64(ob, find(ob, "coords"), count, err);
}

zt_status zt__validate_object(const struct zt_object *ob, const zt__validate_opts *o, zt_error *err)
{
    static const char *const dense[] = {"data"};
    static const char *const csr[] = {"values", "indices", "indptr"};
    static const char *const coo[] = {"values", "coords"};
    static const char *const qg[] = {"packed_weight", "scales", "zeros"};
    zt_status st;
    for (size_t i = 0; i < ob->ncomp; i++)
        if ((st = zt__validate_component(ob, &ob->comps[i], o, err)))
            return st;
    if (!strcmp(ob->format, "dense")) {
        if ((st = need(ob, dense, 1, err)))
            return st;
        return check_dense(ob, err);
    }
    if (!strcmp(ob->format, "sparse_csr")) {
        if ((st = need(ob, csr, 3, err)))
            return st;
        return check_sparse(ob, true, err);
    }
    if (!strcmp(ob->format, "sparse_coo")) {
        if ((st = need(ob, coo, 2, err)))
            return st;
        return check_sparse(ob, false, err);
    }
    if (!strcmp(ob->format, "quantized_group")) {
        /* Scale-only modes (Ollama's nvfp4, mxfp8) have no zero-points: a
         * "mode" attribute other than "affine" makes zeros optional. */
        const zt_value *mode = zt_value_get(ob->attributes, "mode");
        bool scale_only = mode && mode->kind == ZT_VAL_TEXT && !zt__value_text_eq(mode, "affine");
        return need(ob, qg, scale_only ? 2 : 3, err);
    }
    return ZT_OK; /* unknown format: structure only */
}

zt_status zt__validate_model(const zt__model *m, const zt__validate_opts *o, zt_error *err)
{
    for (size_t i = 0; i < m->nobj; i++) {
        zt_status st = zt__validate_object(&m->objs[i], o, err);
        if (st)
            return st;
    }
    return ZT_OK;
}
