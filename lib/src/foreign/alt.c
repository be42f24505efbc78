/*
 * ALT (Altiera) model files: a start marker, then the parameters, tokenizer
 * and tensor sections, each 32-byte aligned and opened by an int64 marker and
 * an int64 size, then an end marker. Parameters become file attributes, the
 * tokenizer becomes the object "tokenizer.vocab" (the length-prefixed token
 * stream, verbatim) plus attributes, and each tensor a dense object whose data
 * stays where it is in the file: tensor bytes are located, never read.
 *
 * Structure is read through a callback and a 64 KiB window, so the reader is
 * pure (the fuzzer drives it over memory) and allocates only for what the
 * file really holds. The spec calls itself a guide; every reading taken here
 * is listed in docs/FOREIGN-FORMATS.md.
 */
#include "internal.h"

#include <string.h>

#define WINDOW (64u << 10)
#define MAX_TEXT (1u << 20) /* names and the model type */
#define MARK_PARAMS 0xDEADBEEFull
#define MARK_TOKENIZER 0xBADDCAFEull
#define MARK_TENSORS 0xFACEFEEDull

typedef struct cur {
    zt__read_fn rd;
    void *ud;
    uint64_t size, pos;
    uint64_t boff;
    size_t blen;
    uint8_t buf[WINDOW];
} cur;

typedef struct section {
    const char *name;
    uint64_t start, size, inner_size;
    bool has_inner;
} section;

typedef struct alt_ctx {
    zt__model *m;
    cur *c;
    zt_value *attrs;
    struct zt_object *objs;
    size_t nobj, cap;
} alt_ctx;

static zt_status truncated(const cur *c, uint64_t need, const char *what, zt_error *err)
{
    return zt__fail(err, ZT_E_TRUNCATED, NULL, NULL, 1, c->pos,
                    "file ends inside %s (%llu bytes needed at byte %llu, file is %llu bytes)",
                    what, (unsigned long long)need, (unsigned long long)c->pos,
                    (unsigned long long)c->size);
}

static zt_status get(cur *c, void *dst, size_t n, const char *what, zt_error *err)
{
    if (n > c->size - c->pos)
        return truncated(c, n, what, err);
    if (n > WINDOW) {
        zt_status st = c->rd(c->ud, c->pos, n, dst, err);
        c->pos += st ? 0 : n;
        return st;
    }
    if (c->pos < c->boff || c->pos + n > c->boff + c->blen) {
        uint64_t left = c->size - c->pos;
        c->boff = c->pos;
        c->blen = left < WINDOW ? (size_t)left : WINDOW;
        zt_status st = c->rd(c->ud, c->boff, c->blen, c->buf, err);
        if (st) {
            c->blen = 0;
            return st;
        }
    }
    memcpy(dst, c->buf + (c->pos - c->boff), n);
    c->pos += n;
    return ZT_OK;
}

static zt_status skip(cur *c, uint64_t n, const char *what, zt_error *err)
{
    if (n > c->size - c->pos)
        return truncated(c, n, what, err);
    c->pos += n;
    return ZT_OK;
}

static zt_status get_i32(cur *c, int32_t *v, const char *what, zt_error *err)
{
    uint8_t b[4] = {0};
    zt_status st = get(c, b, 4, what, err);
    *v = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                   (uint32_t)b[3] << 24);
    return st;
}

static zt_status get_i64(cur *c, uint64_t *v, const char *what, zt_error *err)
{
    uint8_t b[8] = {0};
    zt_status st = get(c, b, 8, what, err);
    *v = zt__le64(b);
    return st;
}

/* A count or length read as int32 that must be in [0, max]. */
static zt_status get_count(cur *c, int32_t *v, int32_t max, const char *what, zt_error *err)
{
    uint64_t at = c->pos;
    zt_status st = get_i32(c, v, what, err);
    if (!st && (*v < 0 || *v > max))
        return zt__fail(err, *v < 0 ? ZT_E_SCHEMA : ZT_E_LIMIT, NULL, NULL, 1, at,
                        "%s is %d (must be 0..%d)", what, *v, max);
    return st;
}

static uint64_t align32(uint64_t p)
{
    return (p + 31) & ~(uint64_t)31;
}

static zt_status pad(cur *c, const char *what, zt_error *err)
{
    return skip(c, align32(c->pos) - c->pos, what, err);
}

static zt_status open_section(cur *c, section *s, uint64_t marker, zt_error *err)
{
    zt_status st = pad(c, s->name, err);
    uint64_t got;
    s->start = c->pos;
    if (!st)
        st = get_i64(c, &got, s->name, err);
    if (!st && got != marker)
        return zt__fail(err, ZT_E_MAGIC, NULL, NULL, 1, s->start,
                        "expected the %s marker 0x%llX, found 0x%llX", s->name,
                        (unsigned long long)marker, (unsigned long long)got);
    if (!st)
        st = get_i64(c, &s->size, s->name, err);
    return st;
}

/* The spec leaves open whether a size counts the 16-byte header and the
 * padding after the section: any of the four readings is accepted, anything
 * else is a lie. */
static bool size_ok(const section *s, uint64_t end, uint64_t v)
{
    uint64_t body = s->start + 16;
    return v == end - body || v == end - s->start || v == align32(end) - body ||
           v == align32(end) - s->start;
}

static zt_status close_section(const cur *c, const section *s, zt_error *err)
{
    if (!size_ok(s, c->pos, s->size))
        return zt__fail(err, ZT_E_SIZE, NULL, NULL, 1, s->start + 8,
                        "the %s says it is %llu bytes, but its fields end at byte %llu, %llu "
                        "bytes after its header",
                        s->name, (unsigned long long)s->size, (unsigned long long)c->pos,
                        (unsigned long long)(c->pos - s->start - 16));
    if (s->has_inner && !size_ok(s, c->pos, s->inner_size))
        return zt__fail(err, ZT_E_SIZE, NULL, NULL, 1, s->start + 16,
                        "the %s's own header size %llu does not match its %llu bytes", s->name,
                        (unsigned long long)s->inner_size,
                        (unsigned long long)(c->pos - s->start - 16));
    return ZT_OK;
}

static zt_status put_i32(alt_ctx *x, const char *key, const char *what, zt_error *err)
{
    int32_t v;
    zt_status st = get_i32(x->c, &v, what ? what : key, err);
    zt_value *slot = st ? NULL : zt__map_put(&x->m->arena, x->attrs, key);
    if (!st && !slot)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    if (!st)
        zt__val_int(slot, v);
    return st;
}

static zt_status put_f32(alt_ctx *x, const char *key, zt_error *err)
{
    int32_t bits;
    zt_status st = get_i32(x->c, &bits, key, err);
    zt_value *slot = st ? NULL : zt__map_put(&x->m->arena, x->attrs, key);
    if (!st && !slot)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    if (!st) {
        float f;
        memcpy(&f, &bits, 4);
        zt__val_float(slot, (double)f); /* exact: every float32 is a double */
    }
    return st;
}

/* Reads int32 length + bytes into the arena (NUL-terminated). */
static zt_status get_text(cur *c, zt__arena *a, const char *what, char **out, int32_t *len,
                          zt_error *err)
{
    zt_status st = get_count(c, len, MAX_TEXT, what, err);
    if (st)
        return st;
    if ((uint64_t)*len > c->size - c->pos)
        return truncated(c, (uint64_t)*len, what, err);
    if (!(*out = zt__arena_alloc(a, (size_t)*len + 1)))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    (*out)[*len] = 0;
    return get(c, *out, (size_t)*len, what, err);
}

static zt_status read_params(alt_ctx *x, zt_error *err)
{
    static const char *const k_ints1[] = {"hidden_size",         "num_hidden_layers",
                                          "intermediate_size",   "num_attention_heads",
                                          "num_key_value_heads", "sliding_window"};
    static const char *const k_ints2[] = {"head_size", "data_type", "context_length"};
    section s = {.name = "parameters section"};
    zt_status st = open_section(x->c, &s, MARK_PARAMS, err);
    char *mt = NULL;
    int32_t len = 0;
    if (!st)
        st = get_text(x->c, &x->m->arena, "the model type", &mt, &len, err);
    if (st)
        return st;
    zt_value *slot = zt__map_put(&x->m->arena, x->attrs, "model_type");
    if (!slot || !zt__val_text(&x->m->arena, slot, mt, (size_t)len))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    if (!zt__utf8_valid((const uint8_t *)mt, (size_t)len))
        slot->kind = ZT_VAL_BYTES; /* kept byte-exact, shown as {"$bytes": ...} */
    for (size_t i = 0; !st && i < 6; i++)
        st = put_i32(x, k_ints1[i], NULL, err);
    if (!st)
        st = put_f32(x, "rope_theta", err);
    if (!st)
        st = put_f32(x, "rms_norm_eps", err);
    for (size_t i = 0; !st && i < 3; i++)
        st = put_i32(x, k_ints2[i], NULL, err);
    return st ? st : close_section(x->c, &s, err);
}

static zt_status grow(alt_ctx *x, zt_error *err)
{
    if (x->nobj < x->cap)
        return ZT_OK;
    size_t cap = x->cap ? 2 * x->cap : 16;
    struct zt_object *n = zt__realloc(x->objs, cap * sizeof(*n));
    if (!n)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    x->objs = n;
    x->cap = cap;
    return ZT_OK;
}

/* A one-component dense object at [off, off+len) of the file. */
static zt_status add_object(alt_ctx *x, const char *name, size_t name_len, zt_dtype dt,
                            uint64_t off, uint64_t len, zt_error *err)
{
    zt_status st = grow(x, err);
    struct zt_component *c = st ? NULL : zt__arena_alloc(&x->m->arena, sizeof(*c));
    if (!st && !c)
        st = ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    if (st)
        return st;
    *c = (struct zt_component){.role = "data", .dtype = dt, .offset = off, .length = len};
    struct zt_object *o = &x->objs[x->nobj++];
    *o = (struct zt_object){.name = name,
                            .name_len = name_len,
                            .format = "dense",
                            .source_name = name,
                            .has_shape = true,
                            .ncomp = 1,
                            .comps = c};
    return ZT_OK;
}

static zt_status vocab_object(alt_ctx *x, uint64_t start, int32_t count, zt_error *err)
{
    zt__arena *a = &x->m->arena;
    uint64_t len = x->c->pos - start;
    zt_status st = add_object(x, "tokenizer.vocab", 15, ZT_DTYPE_U8, start, len, err);
    struct zt_object *o = st ? NULL : &x->objs[x->nobj - 1];
    zt_value *attrs = st ? NULL : zt__map_new(a, 2), *v;
    if (!st && (!(o->shape = zt__arena_alloc(a, sizeof(uint64_t))) || !attrs))
        st = ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    if (st)
        return st;
    o->ndim = 1;
    o->shape[0] = len;
    o->attributes = attrs;
    if (!(v = zt__map_put(a, attrs, "layout")) || !zt__val_text(a, v, "i32_length_prefixed", 19) ||
        !(v = zt__map_put(a, attrs, "count")))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    zt__val_uint(v, (uint64_t)count);
    return ZT_OK;
}

static zt_status read_tokenizer(alt_ctx *x, zt_error *err)
{
    static const char *const k_ids[] = {"tokenizer.bos_id", "tokenizer.eos_id", "tokenizer.pad_id",
                                        "tokenizer.unk_id"};
    cur *c = x->c;
    section s = {.name = "tokenizer section", .has_inner = true};
    int32_t count = 0, len;
    zt_status st = open_section(c, &s, MARK_TOKENIZER, err);
    if (!st)
        st = get_i64(c, &s.inner_size, "the tokenizer header size", err);
    if (!st)
        st = get_count(c, &count, INT32_MAX, "the vocabulary size", err);
    zt_value *slot = st ? NULL : zt__map_put(&x->m->arena, x->attrs, "tokenizer.vocab_size");
    if (!st && !slot)
        st = ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    if (st)
        return st;
    zt__val_uint(slot, (uint64_t)count);
    for (size_t i = 0; !st && i < 4; i++)
        st = put_i32(x, k_ids[i], NULL, err);
    uint64_t start = c->pos;
    for (int32_t i = 0; !st && i < count; i++) {
        st = get_count(c, &len, INT32_MAX, "a token length", err);
        if (!st)
            st = skip(c, (uint64_t)len, "a token", err);
    }
    if (!st)
        st = vocab_object(x, start, count, err);
    return st ? st : close_section(c, &s, err);
}

static zt_status tensor_dtype(int32_t code, uint64_t at, const char *name, zt_dtype *dt,
                              zt_error *err)
{
    /* The data_type codes of the parameters section: 0 f32, 1 f16, 2 qint8. */
    static const zt_dtype k_codes[] = {ZT_DTYPE_F32, ZT_DTYPE_F16, ZT_DTYPE_I8};
    if (code < 0 || code > 2)
        return zt__fail(err, ZT_E_DTYPE, name, NULL, 1, at,
                        "tensor data_type %d is not 0 (float32), 1 (float16) or 2 (qint8)", code);
    *dt = k_codes[code];
    return ZT_OK;
}

/* dims, name_length, data_type, the dims, the name, then the data. */
static zt_status read_tensor(alt_ctx *x, uint64_t *dims_seen, uint64_t *elems_seen, zt_error *err)
{
    cur *c = x->c;
    uint64_t at = c->pos, shape[ZT_MAX_NDIM], bytes;
    int32_t nd, nlen, code, d;
    char *name = NULL;
    zt_dtype dt = ZT_DTYPE_INVALID;
    zt_status st = get_count(c, &nd, ZT_MAX_NDIM, "a tensor's number of dimensions", err);
    if (!st)
        st = get_count(c, &nlen, MAX_TEXT, "a tensor name length", err);
    if (!st)
        st = get_i32(c, &code, "a tensor data type", err);
    for (int32_t i = 0; !st && i < nd; i++)
        if (!(st = get_count(c, &d, INT32_MAX, "a tensor dimension", err)))
            shape[i] = (uint64_t)d;
    if (!st && (uint64_t)nlen > c->size - c->pos)
        st = truncated(c, (uint64_t)nlen, "a tensor name", err);
    if (!st && !(name = zt__arena_alloc(&x->m->arena, (size_t)nlen + 1)))
        st = ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    if (!st && !(st = get(c, name, (size_t)nlen, "a tensor name", err))) {
        name[nlen] = 0;
        if (!zt__utf8_valid((const uint8_t *)name, (size_t)nlen) || memchr(name, 0, (size_t)nlen))
            st = zt__fail(err, ZT_E_SCHEMA, NULL, NULL, 1, at,
                          "tensor name is not valid UTF-8 text without NUL bytes");
    }
    if (!st)
        st = tensor_dtype(code, at, name, &dt, err);
    if (st)
        return st;
    bytes = zt_dtype_width(dt);
    uint64_t elems = 1;
    for (int32_t i = 0; i < nd; i++)
        if (!zt__mul_ok(bytes, shape[i], &bytes) || !zt__mul_ok(elems, shape[i], &elems))
            return zt__fail(err, ZT_E_SIZE, name, NULL, 1, at, "tensor size overflows 64 bits");
    *dims_seen += (uint64_t)nd;
    *elems_seen += elems;
    uint64_t off = c->pos;
    if ((st = skip(c, bytes, "a tensor's data", err)) ||
        (st = add_object(x, name, (size_t)nlen, dt, off, bytes, err)))
        return st;
    struct zt_object *o = &x->objs[x->nobj - 1];
    o->ndim = (size_t)nd;
    if (!(o->shape = zt__arena_alloc(&x->m->arena, (nd ? (size_t)nd : 1) * sizeof(uint64_t))))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    memcpy(o->shape, shape, (size_t)nd * sizeof(uint64_t));
    return ZT_OK;
}

static zt_status read_tensors(alt_ctx *x, zt_error *err)
{
    cur *c = x->c;
    section s = {.name = "tensor section"};
    uint64_t count = 0, shape_count = 0, dims = 0, elems = 0;
    zt_status st = open_section(c, &s, MARK_TENSORS, err);
    if (!st)
        st = get_i64(c, &count, "the tensor count", err);
    if (!st)
        st = get_i64(c, &shape_count, "the shape count", err);
    /* Each tensor takes at least 12 bytes: a count beyond that is a lie. */
    if (!st && count > (c->size - c->pos) / 12)
        return zt__fail(err, ZT_E_SIZE, NULL, NULL, 1, s.start + 16,
                        "tensor count %llu cannot fit in the %llu bytes left",
                        (unsigned long long)count, (unsigned long long)(c->size - c->pos));
    for (uint64_t i = 0; !st && i < count; i++)
        st = read_tensor(x, &dims, &elems, err);
    if (!st && shape_count != dims && shape_count != elems)
        return zt__fail(err, ZT_E_SIZE, NULL, NULL, 1, s.start + 24,
                        "shape count %llu is neither the %llu dimensions nor the %llu elements "
                        "of the tensors",
                        (unsigned long long)shape_count, (unsigned long long)dims,
                        (unsigned long long)elems);
    return st ? st : close_section(c, &s, err);
}

static zt_status read_markers(cur *c, bool end, zt_error *err)
{
    uint8_t b[4] = {0};
    zt_status st = end ? pad(c, "the end marker", err) : ZT_OK;
    uint64_t at = c->pos;
    if (!st)
        st = get(c, b, 4, end ? "the end marker" : "the start marker", err);
    if (st)
        return st;
    uint32_t v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    if (!end && memcmp(b, "altc", 4) && memcmp(b, "ctla", 4))
        return zt__fail(err, ZT_E_MAGIC, NULL, NULL, 1, 0, "start marker is not \"altc\"");
    if (end && v != 0x0FFFFFFFu && v != 0xFFFFFFFFu)
        return zt__fail(err, ZT_E_MAGIC, NULL, NULL, 1, at, "end marker is 0x%08X, not 0x0FFFFFFF",
                        v);
    return ZT_OK;
}

static zt_status finish(alt_ctx *x, zt_error *err)
{
    zt__model *m = x->m;
    m->objs = zt__arena_alloc(&m->arena, (x->nobj ? x->nobj : 1) * sizeof(*m->objs));
    if (!m->objs)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    if (x->nobj)
        memcpy(m->objs, x->objs, x->nobj * sizeof(*m->objs));
    m->nobj = x->nobj;
    m->attributes = x->attrs;
    return zt__model_build_index(m, err);
}

zt_status zt__alt_parse(zt__model *m, uint64_t size, zt__read_fn rd, void *ud, zt_error *err)
{
    m->kind = ZT_KIND_ALT;
    cur *c = zt__malloc(sizeof(*c));
    alt_ctx x = {m, c, zt__map_new(&m->arena, 17), NULL, 0, 0};
    if (!c || !x.attrs) {
        zt__free(c);
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    }
    *c = (cur){.rd = rd, .ud = ud, .size = size};
    zt_status st = read_markers(c, false, err);
    if (!st)
        st = read_params(&x, err);
    if (!st)
        st = read_tokenizer(&x, err);
    if (!st)
        st = read_tensors(&x, err);
    if (!st)
        st = read_markers(c, true, err);
    if (!st)
        st = finish(&x, err);
    zt__free(x.objs);
    zt__free(c);
    return st;
}

static zt_status read_file(void *ud, uint64_t off, size_t len, uint8_t *dst, zt_error *err)
{
    return zt__read_at(ud, off, len, dst, err);
}

zt_status zt__open_alt(zt_file *f, zt_error *err)
{
    zt_status st = zt__alt_parse(&f->model, f->size, read_file, f, err);
    if (st)
        return st;
    zt__validate_opts vo = {.data_end = f->size,
                            .data_start = 4,
                            .max_uncompressed = f->max_uncompressed,
                            .require_alignment = false};
    return zt__validate_model(&f->model, &vo, err);
}
