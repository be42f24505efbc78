/*
 * Ollama's combined quantized blobs: in a safetensors file, {name} (packed
 * U32), {name}.scale and, for affine modes, {name}.bias are one quantized
 * tensor. Each such triple becomes one quantized_group object named {name}
 * with components packed_weight, scales and zeros (when there is a bias), and
 * attributes bits, group_size, quant_type, packing and mode, plus the original
 * tensor names and shapes (so the triple can be written back). Expert-group
 * blobs simply hold many triples. Mapping: docs/FOREIGN-FORMATS.md.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct qtype {
    const char *name;
    unsigned bits, group_size;
    const char *mode;
} qtype;

/* The table of ollama-tensor-blobs.md. */
static const qtype k_qtypes[] = {
    {"int4", 4, 32, "affine"},
    {"int8", 8, 64, "affine"},
    {"nvfp4", 4, 16, "nvfp4"},
    {"mxfp8", 8, 32, "mxfp8"},
};
#define NQ (sizeof(k_qtypes) / sizeof(k_qtypes[0]))

typedef struct qparams {
    const char *quant_type;
    unsigned bits;
    uint64_t group_size;
    const char *mode;
} qparams;

typedef struct triple {
    struct zt_object *w, *s, *b; /* b may be NULL */
} triple;

static const char *meta_text(const zt__model *m, const char *key)
{
    const zt_value *v = zt_value_get(m->attributes, key);
    return v && v->kind == ZT_VAL_TEXT ? v->v.s : NULL;
}

static uint64_t meta_group_size(const zt__model *m)
{
    const zt_value *v = zt_value_get(m->attributes, "group_size");
    if (v && v->kind == ZT_VAL_UINT)
        return v->v.u;
    if (!v || v->kind != ZT_VAL_TEXT || !v->n || v->n > 9)
        return 0;
    uint64_t g = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        if (v->v.s[i] < '0' || v->v.s[i] > '9')
            return 0;
        g = g * 10 + (uint64_t)(v->v.s[i] - '0');
    }
    return g;
}

static const struct zt_component *data_of(const struct zt_object *o)
{
    return o && !strcmp(o->format, "dense") && o->ncomp == 1 && o->has_shape ? &o->comps[0] : NULL;
}

static uint64_t last_dim(const struct zt_object *o)
{
    return o->ndim ? o->shape[o->ndim - 1] : 1;
}

/* From the file's quant_type, or, when there is none (the expert-group blobs
 * of the spec show no __metadata__), from the bias and the ratio of packed to
 * scale columns, which differs for each row of the table. */
static bool quant_params(const zt__model *m, const triple *t, qparams *q)
{
    const char *qt = meta_text(m, "quant_type");
    uint64_t gs = meta_group_size(m);
    for (size_t i = 0; i < NQ; i++) {
        const qtype *k = &k_qtypes[i];
        bool affine = !strcmp(k->mode, "affine");
        if (qt && strcmp(qt, k->name))
            continue;
        if (qt && affine && !t->b)
            return false; /* an affine triple without its bias: leave it dense */
        if (!qt) {
            uint64_t sc = last_dim(t->s);
            if ((t->b != NULL) != affine || !sc ||
                last_dim(t->w) != sc * k->group_size * k->bits / 32)
                continue;
        }
        *q = (qparams){k->name, k->bits, qt && gs ? gs : k->group_size, k->mode};
        return true;
    }
    return false;
}

static struct zt_object *find_suffixed(zt__model *m, const struct zt_object *w, const char *sfx)
{
    size_t n = w->name_len + strlen(sfx);
    char *name = zt__malloc(n + 1);
    if (!name)
        return NULL;
    memcpy(name, w->name, w->name_len);
    memcpy(name + w->name_len, sfx, strlen(sfx) + 1);
    struct zt_object *o = (struct zt_object *)zt__model_find(m, name, n);
    zt__free(name);
    return data_of(o) ? o : NULL;
}

static bool put_shape(zt__arena *a, zt_value *map, const char *role, const struct zt_object *o)
{
    zt_value *v = zt__map_put(a, map, role);
    if (!v || !zt__val_array(a, v, o->ndim))
        return false;
    for (size_t i = 0; i < o->ndim; i++)
        zt__val_uint(&v->v.items[i], o->shape[i]);
    return true;
}

static bool put_text(zt__arena *a, zt_value *map, const char *key, const char *s)
{
    zt_value *v = zt__map_put(a, map, key);
    return v && zt__val_text(a, v, s, strlen(s));
}

static zt_value *put_map(zt__arena *a, zt_value *parent, const char *key, size_t n)
{
    zt_value *slot = zt__map_put(a, parent, key);
    zt_value *m = slot ? zt__map_new(a, n) : NULL;
    if (!m)
        return NULL;
    *slot = *m;
    return slot;
}

static bool put_sources(zt__arena *a, zt_value *attrs, const triple *t)
{
    const char *roles[3] = {"packed_weight", "scales", "zeros"};
    const struct zt_object *os[3] = {t->w, t->s, t->b};
    size_t n = t->b ? 3 : 2;
    zt_value *names = put_map(a, attrs, "source_tensors", n);
    zt_value *shapes = names ? put_map(a, attrs, "source_shapes", n) : NULL;
    if (!shapes)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!put_text(a, names, roles[i], os[i]->name) || !put_shape(a, shapes, roles[i], os[i]))
            return false;
    return true;
}

static const zt_value *group_attrs(zt__arena *a, const triple *t, const qparams *q)
{
    zt_value *m = zt__map_new(a, 7);
    if (!m)
        return NULL;
    zt_value *v = zt__map_put(a, m, "bits");
    if (!v)
        return NULL;
    zt__val_uint(v, q->bits);
    if (!(v = zt__map_put(a, m, "group_size")))
        return NULL;
    zt__val_uint(v, q->group_size);
    if (!put_text(a, m, "quant_type", q->quant_type) ||
        !put_text(a, m, "packing", q->bits == 4 ? "8_per_u32" : "4_per_u32") ||
        !put_text(a, m, "mode", q->mode) || !put_sources(a, m, t))
        return NULL;
    return m;
}

/* Rewrites t->w in place as the quantized_group object. */
static zt_status make_group(zt__model *m, const triple *t, const qparams *q, zt_error *err)
{
    struct zt_object *w = t->w;
    uint64_t cols;
    if (!zt__mul_ok(last_dim(w), 32 / q->bits, &cols))
        return zt__fail(err, ZT_E_SIZE, w->name, NULL, 0, 0, "unpacked shape overflows");
    uint64_t *shape = zt__arena_alloc(&m->arena, (w->ndim ? w->ndim : 1) * sizeof(uint64_t));
    struct zt_component *c = zt__arena_alloc(&m->arena, 3 * sizeof(*c));
    const zt_value *attrs = group_attrs(&m->arena, t, q);
    if (!shape || !c || !attrs)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    memcpy(shape, w->shape, w->ndim * sizeof(uint64_t));
    if (w->ndim)
        shape[w->ndim - 1] = cols;
    c[0] = w->comps[0];
    c[0].role = "packed_weight";
    c[1] = t->s->comps[0];
    c[1].role = "scales";
    if (t->b) {
        c[2] = t->b->comps[0];
        c[2].role = "zeros";
    }
    w->shape = shape;
    w->format = "quantized_group";
    w->attributes = attrs;
    w->comps = c;
    w->ncomp = t->b ? 3 : 2;
    return ZT_OK;
}

static bool is_packed(const struct zt_object *o)
{
    const struct zt_component *c = data_of(o);
    return c && c->dtype == ZT_DTYPE_U32 && !c->type && o->ndim >= 1;
}

/* Finds and rewrites every triple; marks its .scale/.bias objects in drop[]. */
static zt_status group_all(zt__model *m, bool *drop, zt_error *err)
{
    for (size_t i = 0; i < m->nobj; i++) {
        struct zt_object *w = &m->objs[i];
        if (drop[i] || !is_packed(w))
            continue;
        triple t = {w, find_suffixed(m, w, ".scale"), find_suffixed(m, w, ".bias")};
        qparams q;
        if (!t.s || t.s == w || t.b == w || drop[t.s - m->objs] || (t.b && drop[t.b - m->objs]) ||
            !quant_params(m, &t, &q))
            continue;
        drop[t.s - m->objs] = true;
        if (t.b)
            drop[t.b - m->objs] = true;
        zt_status st = make_group(m, &t, &q, err);
        if (st)
            return st;
    }
    return ZT_OK;
}

zt_status zt__ollama_group(zt__model *m, zt_error *err)
{
    if (!m->nobj)
        return ZT_OK;
    zt_status st = zt__model_build_index(m, err);
    bool *drop = st ? NULL : zt__calloc(m->nobj, sizeof(bool));
    if (!st && !drop)
        st = ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    if (!st)
        st = group_all(m, drop, err);
    if (!st) {
        size_t k = 0;
        for (size_t i = 0; i < m->nobj; i++)
            if (!drop[i])
                m->objs[k++] = m->objs[i];
        m->nobj = k;
    }
    zt__free(drop);
    m->index_cap = 0; /* stale: the caller rebuilds it */
    return st;
}

zt_status zt_file_find_tensor(const zt_file *f, const char *name, size_t len, const zt_object **obj,
                              const zt_component **comp)
{
    static const char *const sfx[2][2] = {{".scale", "scales"}, {".bias", "zeros"}};
    const struct zt_object *o = name ? zt__model_find(&f->model, name, len) : NULL;
    const zt_component *c = NULL;
    if (o) {
        c = zt_object_find_component(o, "data");
        if (!c)
            c = zt_object_find_component(o, "packed_weight");
        if (!c)
            c = zt_object_component_at(o, 0);
    }
    for (int i = 0; name && !o && i < 2; i++) {
        size_t sl = strlen(sfx[i][0]);
        if (len <= sl || memcmp(name + len - sl, sfx[i][0], sl))
            continue;
        const struct zt_object *g = zt__model_find(&f->model, name, len - sl);
        if (g && !strcmp(g->format, "quantized_group") &&
            (c = zt_object_find_component(g, sfx[i][1])))
            o = g;
    }
    if (!o || !c)
        return ZT_E_NOT_FOUND;
    if (obj)
        *obj = o;
    if (comp)
        *comp = c;
    return ZT_OK;
}
