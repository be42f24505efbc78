/*
 * The metadata rules ("at open") of the layout profiles registered beside
 * the v2 spec (profiles/): zt.sparse_csr/1, zt.sparse_coo/1,
 * zt.quant_group/1, zt.mx/1 and the opaque gguf.<type>/1 family. Each checks
 * its part set, part dtypes and logical types, its attributes and its size
 * equations, from the manifest alone. Their data rules, which need the bytes,
 * are in v2_data.c. A layout id not registered here leaves the object
 * uninterpreted (§5.2); so does a part whose logical type is unknown where a
 * size equation needs it (§4.2).
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* "v2 <profile id>: <detail>", naming the object, the part and its offset. */
__attribute__((format(printf, 5, 6))) static zt_status fail(zt_error *err, zt_status code,
                                                            const struct zt_object *o,
                                                            const char *role, const char *fmt, ...)
{
    char detail[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    const struct zt_component *c = NULL;
    for (size_t i = 0; role && i < o->ncomp; i++)
        if (!strcmp(o->comps[i].role, role))
            c = &o->comps[i];
    /* a part's problem is at its blob; the object's at its map in the manifest */
    return zt__fail(err, code, o->name, role, 1, c ? c->offset : o->at, "v2 %s: %s", o->format,
                    detail);
}
#define LAYOUT(err, o, role, ...) fail((err), ZT_E_LAYOUT, (o), (role), __VA_ARGS__)
#define SIZE(err, o, c, ...) fail((err), ZT_E_SIZE, (o), (c)->role, __VA_ARGS__)

static struct zt_component *part(struct zt_object *o, const char *role)
{
    for (size_t i = 0; i < o->ncomp; i++)
        if (!strcmp(o->comps[i].role, role))
            return &o->comps[i];
    return NULL;
}

/* The parts are exactly roles[0..n), except optional ones marked by a NULL
 * in want (want[i] = 0: must be absent; 1: must be present). */
static zt_status exact_parts(struct zt_object *o, const char *const *roles, const int *want,
                             size_t n, zt_error *err)
{
    size_t present = 0;
    for (size_t i = 0; i < n; i++) {
        bool has = part(o, roles[i]) != NULL;
        if (has != (want[i] != 0))
            return LAYOUT(err, o, roles[i], "part \"%s\" must be %s", roles[i],
                          want[i] ? "present" : "absent");
        present += has;
    }
    if (present != o->ncomp)
        return LAYOUT(err, o, NULL, "object has parts the profile does not define");
    return ZT_OK;
}

static bool is_index_dtype(const struct zt_component *c)
{
    return !c->type && (c->dtype == ZT_DTYPE_U32 || c->dtype == ZT_DTYPE_U64);
}

static uint64_t elements(const struct zt_object *o)
{
    uint64_t n = 1;
    for (size_t i = 0; i < o->ndim; i++)
        n *= o->shape[i]; /* overflow was refused when the shape was parsed */
    return n;
}

/* decoded_size(c) == size of n elements of c's type; unknown type: uninterpreted. */
static zt_status values_size(struct zt_object *o, struct zt_component *c, uint64_t n, zt_error *err)
{
    unsigned bits = zt__v2_elem_bits(c);
    uint64_t want;
    if (!bits) {
        o->uninterpreted = true;
        return ZT_OK;
    }
    if (!zt__v2_size(bits, n, &want) || zt__v2_decoded_size(c) != want)
        return SIZE(err, o, c, "decoded size is %llu bytes; %llu elements need %llu",
                    (unsigned long long)zt__v2_decoded_size(c), (unsigned long long)n,
                    (unsigned long long)want);
    return ZT_OK;
}

static zt_status csr(struct zt_object *o, zt_error *err)
{
    static const char *const roles[] = {"values", "indices", "indptr"};
    static const int want[] = {1, 1, 1};
    if (o->ndim != 2)
        return LAYOUT(err, o, NULL, "rank must be exactly 2, not %zu", o->ndim);
    zt_status st = exact_parts(o, roles, want, 3, err);
    if (st)
        return st;
    struct zt_component *v = part(o, "values"), *ix = part(o, "indices"), *ip = part(o, "indptr");
    if (!is_index_dtype(ix))
        return LAYOUT(err, o, "indices", "indices must be u32 or u64 with no logical type");
    if (ip->dtype != ix->dtype || ip->type)
        return LAYOUT(err, o, "indptr", "indptr must have the dtype of indices and no type");
    uint64_t w = zt_dtype_width(ix->dtype), ptrs;
    if (zt__v2_decoded_size(ix) % w)
        return SIZE(err, o, ix, "%llu bytes is not a whole number of indices",
                    (unsigned long long)zt__v2_decoded_size(ix));
    if (o->shape[0] == UINT64_MAX || !zt__mul_ok(o->shape[0] + 1, w, &ptrs) ||
        zt__v2_decoded_size(ip) != ptrs)
        return SIZE(err, o, ip, "indptr must hold rows + 1 = %llu pointers",
                    (unsigned long long)o->shape[0] + 1);
    return values_size(o, v, zt__v2_decoded_size(ix) / w, err);
}

static zt_status coo(struct zt_object *o, zt_error *err)
{
    static const char *const roles[] = {"values", "coords"};
    static const int want[] = {1, 1};
    if (o->ndim < 1)
        return LAYOUT(err, o, NULL, "rank must be at least 1");
    zt_status st = exact_parts(o, roles, want, 2, err);
    if (st)
        return st;
    struct zt_component *v = part(o, "values"), *co = part(o, "coords");
    if (!is_index_dtype(co))
        return LAYOUT(err, o, "coords", "coords must be u32 or u64 with no logical type");
    uint64_t per = zt_dtype_width(co->dtype) * o->ndim; /* ndim <= 64 */
    if (zt__v2_decoded_size(co) % per)
        return SIZE(err, o, co, "%llu bytes is not a whole number of %zu-dimensional coordinates",
                    (unsigned long long)zt__v2_decoded_size(co), o->ndim);
    return values_size(o, v, zt__v2_decoded_size(co) / per, err);
}

static const zt_value *attr(const struct zt_object *o, const char *key)
{
    return o->attributes ? zt_value_get(o->attributes, key) : NULL;
}

static bool attr_uint(const zt_value *v, uint64_t *out)
{
    if (!v || v->kind != ZT_VAL_UINT)
        return false;
    *out = v->v.u;
    return true;
}

static bool text_is(const zt_value *v, const char *s)
{
    return v && zt__value_text_eq(v, s);
}

/* ---- zt.quant_group/1 (parametric: every decoder parameter is an attribute) */

typedef struct qg {
    uint64_t bits, group_size, axis, per_word;
    zt_dtype word;
    const zt_value *zp_form, *zp_packing;
    const char *scale_form;
} qg;

static zt_dtype word_dtype(const zt_value *v)
{
    static const char *const names[] = {"u8", "u16", "u32", "u64"};
    static const zt_dtype d[] = {ZT_DTYPE_U8, ZT_DTYPE_U16, ZT_DTYPE_U32, ZT_DTYPE_U64};
    for (size_t i = 0; i < 4; i++)
        if (text_is(v, names[i]))
            return d[i];
    return ZT_DTYPE_INVALID;
}

/* The unsigned counterpart of an integer dtype; INVALID for floats. */
static zt_dtype unsigned_of(zt_dtype d)
{
    switch (d) {
    case ZT_DTYPE_I8:
    case ZT_DTYPE_U8:
        return ZT_DTYPE_U8;
    case ZT_DTYPE_I16:
    case ZT_DTYPE_U16:
        return ZT_DTYPE_U16;
    case ZT_DTYPE_I32:
    case ZT_DTYPE_U32:
        return ZT_DTYPE_U32;
    case ZT_DTYPE_I64:
    case ZT_DTYPE_U64:
        return ZT_DTYPE_U64;
    default:
        return ZT_DTYPE_INVALID;
    }
}

static bool is_float(zt_dtype d)
{
    return d == ZT_DTYPE_F64 || d == ZT_DTYPE_F32 || d == ZT_DTYPE_F16 || d == ZT_DTYPE_BF16;
}

/* The attributes, each required and typed. */
static zt_status qg_attributes(struct zt_object *o, qg *q, zt_error *err)
{
    const zt_value *pk = attr(o, "packing"), *zp = attr(o, "zero_point"),
                   *sf = attr(o, "scale_form");
    if (!attr_uint(attr(o, "bits"), &q->bits) ||
        !attr_uint(attr(o, "group_size"), &q->group_size) || !attr_uint(attr(o, "axis"), &q->axis))
        return LAYOUT(err, o, NULL,
                      "attributes bits, group_size and axis must be unsigned integers");
    if (!pk || pk->kind != ZT_VAL_MAP || !zp || zp->kind != ZT_VAL_MAP)
        return LAYOUT(err, o, NULL, "attributes packing and zero_point must be maps");
    if (!sf || sf->kind != ZT_VAL_TEXT)
        return LAYOUT(err, o, NULL, "attribute scale_form must be text");
    q->scale_form = sf->v.s;
    q->word = word_dtype(zt_value_get(pk, "word"));
    if (!q->word)
        return LAYOUT(err, o, NULL, "packing.word must be \"u8\", \"u16\", \"u32\" or \"u64\"");
    const zt_value *order = zt_value_get(pk, "order");
    if (!text_is(order, "lsb_first") && !text_is(order, "msb_first"))
        return LAYOUT(err, o, NULL, "packing.order must be \"lsb_first\" or \"msb_first\"");
    if (!attr_uint(zt_value_get(pk, "per_word"), &q->per_word))
        return LAYOUT(err, o, NULL, "packing.per_word must be an unsigned integer");
    q->zp_form = zt_value_get(zp, "form");
    q->zp_packing = zt_value_get(zp, "packing");
    const zt_value *val = zt_value_get(zp, "value");
    if (!text_is(q->zp_form, "none") && !text_is(q->zp_form, "implied") &&
        !text_is(q->zp_form, "tensor"))
        return LAYOUT(err, o, NULL, "zero_point.form must be \"none\", \"implied\" or \"tensor\"");
    bool implied = text_is(q->zp_form, "implied"), tensor = text_is(q->zp_form, "tensor");
    if (implied != (val && (val->kind == ZT_VAL_UINT || val->kind == ZT_VAL_NEGINT)))
        return LAYOUT(err, o, NULL, "zero_point.value must be an integer iff form is \"implied\"");
    if (tensor != (text_is(q->zp_packing, "same_as_data") || text_is(q->zp_packing, "plain")))
        return LAYOUT(err, o, NULL,
                      "zero_point.packing must be \"same_as_data\" or \"plain\" iff "
                      "form is \"tensor\"");
    return ZT_OK;
}

/* Packing and scale rules: dtypes against the attributes. */
static zt_status qg_rules(struct zt_object *o, const qg *q, zt_error *err)
{
    struct zt_component *d = part(o, "data"), *s = part(o, "scales");
    unsigned wbits = 8 * zt_dtype_width(q->word);
    if (unsigned_of(d->dtype) != q->word)
        return LAYOUT(err, o, "data", "data.dtype %s does not match packing.word %s",
                      zt_dtype_name(d->dtype), zt_dtype_name(q->word));
    if (q->bits != 2 && q->bits != 3 && q->bits != 4 && q->bits != 5 && q->bits != 6 &&
        q->bits != 8)
        return LAYOUT(err, o, NULL, "bits must be 2, 3, 4, 5, 6 or 8, not %llu",
                      (unsigned long long)q->bits);
    if (wbits % q->bits || q->per_word != wbits / q->bits)
        return LAYOUT(err, o, NULL, "%llu-bit codes do not fill a %u-bit word %llu times",
                      (unsigned long long)q->bits, wbits, (unsigned long long)q->per_word);
    if (!strcmp(q->scale_form, "e8m0_exponent")) {
        if (s->dtype != ZT_DTYPE_U8 || !s->type || strcmp(s->type, "f8_e8m0"))
            return LAYOUT(err, o, "scales", "e8m0_exponent scales must be u8 with type f8_e8m0");
    } else if (!strcmp(q->scale_form, "f32_factors") || !strcmp(q->scale_form, "f16_factors")) {
        if (!is_float(s->dtype))
            return LAYOUT(err, o, "scales", "%s scales must have a float dtype", q->scale_form);
    } else {
        return LAYOUT(err, o, NULL, "scale_form \"%.40s\" is not one the profile defines",
                      q->scale_form);
    }
    if (q->axis >= o->ndim)
        return LAYOUT(err, o, NULL, "axis %llu is not below the rank %zu",
                      (unsigned long long)q->axis, o->ndim);
    if (q->group_size && o->shape[q->axis] % q->group_size)
        return LAYOUT(err, o, NULL, "group_size %llu does not divide shape[%llu] = %llu",
                      (unsigned long long)q->group_size, (unsigned long long)q->axis,
                      (unsigned long long)o->shape[q->axis]);
    return ZT_OK;
}

/* want == decoded_size(c); `count` units of `width` bytes, `count` divisible by `per`. */
static zt_status qg_size(struct zt_object *o, struct zt_component *c, uint64_t count, uint64_t per,
                         uint64_t width, zt_error *err)
{
    uint64_t want;
    if (count % per)
        return SIZE(err, o, c, "%llu codes do not fill whole %llu-code words",
                    (unsigned long long)count, (unsigned long long)per);
    if (!zt__mul_ok(count / per, width, &want) || zt__v2_decoded_size(c) != want)
        return SIZE(err, o, c, "decoded size is %llu bytes; the profile's size equation gives %llu",
                    (unsigned long long)zt__v2_decoded_size(c), (unsigned long long)want);
    return ZT_OK;
}

static zt_status quant_group(struct zt_object *o, zt_error *err)
{
    qg q = {0};
    zt_status st = qg_attributes(o, &q, err);
    if (st)
        return st; /* (before q's fields are read: they may not all be set) */
    static const char *const roles[] = {"data", "scales", "zeros"};
    int want[] = {1, 1, text_is(q.zp_form, "tensor")};
    if ((st = exact_parts(o, roles, want, 3, err)) || (st = qg_rules(o, &q, err)))
        return st;
    uint64_t along = o->shape[q.axis], lanes = 1, codes = elements(o), gl;
    for (size_t i = 0; i < o->ndim; i++)
        if (i != q.axis)
            lanes *= o->shape[i];
    uint64_t groups = q.group_size ? along / q.group_size : along;
    uint64_t ww = zt_dtype_width(q.word);
    struct zt_component *s = part(o, "scales"), *z = part(o, "zeros");
    if (!zt__mul_ok(groups, lanes, &gl))
        return LAYOUT(err, o, NULL, "groups x lanes overflows 64 bits");
    if ((st = qg_size(o, part(o, "data"), codes, q.per_word, ww, err)) ||
        (st = qg_size(o, s, gl, 1, zt_dtype_width(s->dtype), err)) || !z)
        return st;
    if (text_is(q.zp_packing, "plain"))
        return qg_size(o, z, gl, 1, zt_dtype_width(z->dtype), err);
    if (z->dtype != part(o, "data")->dtype)
        return LAYOUT(err, o, "zeros", "same_as_data zeros must have data's dtype");
    return qg_size(o, z, gl, q.per_word, ww, err);
}

/* ---- zt.mx/1: OCP Microscaling */

static zt_status mx(struct zt_object *o, zt_error *err)
{
    static const char *const roles[] = {"data", "scales"};
    static const int want[] = {1, 1};
    zt_status st = exact_parts(o, roles, want, 2, err);
    if (st)
        return st;
    struct zt_component *d = part(o, "data"), *s = part(o, "scales");
    if (s->dtype != ZT_DTYPE_U8 || !s->type || strcmp(s->type, "f8_e8m0"))
        return LAYOUT(err, o, "scales", "scales must be u8 with type f8_e8m0");
    uint64_t bs, axis = o->ndim ? o->ndim - 1 : 0;
    if (!attr_uint(attr(o, "block_size"), &bs) || bs < 2)
        return LAYOUT(err, o, NULL, "attribute block_size must be an integer >= 2");
    const zt_value *ax = attr(o, "axis");
    if (ax && !attr_uint(ax, &axis))
        return LAYOUT(err, o, NULL, "attribute axis must be an unsigned integer");
    if (o->ndim == 0 || axis >= o->ndim)
        return LAYOUT(err, o, NULL, "axis %llu is not below the rank %zu", (unsigned long long)axis,
                      o->ndim);
    if (!text_is(attr(o, "scale_form"), "e8m0_exponent"))
        return LAYOUT(err, o, NULL, "attribute scale_form must be \"e8m0_exponent\"");
    if (o->shape[axis] % bs)
        return LAYOUT(err, o, NULL, "block_size %llu does not divide shape[%llu] = %llu",
                      (unsigned long long)bs, (unsigned long long)axis,
                      (unsigned long long)o->shape[axis]);
    if (d->type_unknown) {
        o->uninterpreted = true; /* the profile: MUST refuse to decode, MAY expose */
        return ZT_OK;
    }
    bool ok = d->type ? (!strcmp(d->type, "f4_e2m1") || !strcmp(d->type, "f8_e4m3fn") ||
                         !strcmp(d->type, "f8_e5m2"))
                      : d->dtype == ZT_DTYPE_I8;
    if (!ok)
        return LAYOUT(err, o, "data",
                      "data must be f4_e2m1, f8_e4m3fn, f8_e5m2 (on u8) or plain i8");
    uint64_t n = elements(o);
    if ((st = values_size(o, d, n, err)))
        return st;
    if (zt__v2_decoded_size(s) != n / bs)
        return SIZE(err, o, s, "decoded size is %llu bytes; %llu blocks need one scale each",
                    (unsigned long long)zt__v2_decoded_size(s), (unsigned long long)(n / bs));
    return ZT_OK;
}

static const char *const k_gguf[] = {"q4_0",  "q4_1",   "q5_0",    "q5_1",   "q8_0",  "q8_1",
                                     "q2_k",  "q3_k",   "q4_k",    "q5_k",   "q6_k",  "q8_k",
                                     "iq1_s", "iq1_m",  "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs",
                                     "iq3_s", "iq4_nl", "iq4_xs",  "mxfp4"};

static bool is_gguf(const char *id)
{
    size_t n = strlen(id);
    if (n < 8 || strncmp(id, "gguf.", 5) || strcmp(id + n - 2, "/1"))
        return false;
    for (size_t i = 0; i < sizeof(k_gguf) / sizeof(k_gguf[0]); i++)
        if (strlen(k_gguf[i]) == n - 7 && !strncmp(id + 5, k_gguf[i], n - 7))
            return true;
    return false;
}

/* profiles/gguf.md: the block array kept verbatim, sized by its attributes. */
static zt_status gguf(struct zt_object *o, zt_error *err)
{
    static const char *const roles[] = {"data"};
    static const int want[] = {1};
    zt_status st = exact_parts(o, roles, want, 1, err);
    if (st)
        return st;
    struct zt_component *d = part(o, "data");
    if (d->dtype != ZT_DTYPE_U8 || d->type)
        return LAYOUT(err, o, "data", "data must be u8 with no logical type");
    uint64_t epb, bb, n = elements(o), want_size;
    if (!attr_uint(attr(o, "elems_per_block"), &epb) || epb < 1)
        return LAYOUT(err, o, NULL, "attribute elems_per_block must be an integer >= 1");
    if (!attr_uint(attr(o, "block_bytes"), &bb) || bb < 1)
        return LAYOUT(err, o, NULL, "attribute block_bytes must be an integer >= 1");
    if (n % epb)
        return LAYOUT(err, o, NULL, "elems_per_block %llu does not divide %llu elements",
                      (unsigned long long)epb, (unsigned long long)n);
    if (!zt__mul_ok(n / epb, bb, &want_size) || zt__v2_decoded_size(d) != want_size)
        return SIZE(err, o, d, "decoded size is %llu bytes; %llu blocks of %llu bytes need %llu",
                    (unsigned long long)zt__v2_decoded_size(d), (unsigned long long)(n / epb),
                    (unsigned long long)bb, (unsigned long long)want_size);
    return ZT_OK;
}

zt_status zt__v2_check_layout(struct zt_object *o, zt_error *err)
{
    if (!strcmp(o->format, "zt.sparse_csr/1"))
        return csr(o, err);
    if (!strcmp(o->format, "zt.sparse_coo/1"))
        return coo(o, err);
    if (!strcmp(o->format, "zt.quant_group/1"))
        return quant_group(o, err);
    if (!strcmp(o->format, "zt.mx/1"))
        return mx(o, err);
    if (is_gguf(o->format))
        return gguf(o, err);
    o->uninterpreted = true; /* §5.2: structure only */
    return ZT_OK;
}
