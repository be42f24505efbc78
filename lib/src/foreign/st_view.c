/*
 * Safetensors views: the one definition of the safetensors file that a
 * zt_file reads as, used by `zt convert IN -o OUT.safetensors` (which writes
 * it) and by ztensord (which serves it without writing it).
 *
 * Contract. zt_st_view_new() reads the manifest only, and either refuses the
 * file, naming the first object (in manifest order) that safetensors cannot
 * express, or builds the view once: the header bytes in memory and, per
 * tensor, where its bytes come from. A dense object is one tensor: its "data"
 * component. A quantized_group read from an Ollama blob (it carries
 * source_tensors and source_shapes) is its original triple, each component
 * under its source name and shape. Everything else is refused. Tensors are
 * in the order of their components' stored bytes (offset, then length, then
 * name: a total order), with no gaps. The header is compact JSON, written as
 * jansson writes it: __metadata__ first when the file has attributes (text
 * values as they are, others as their compact JSON text, with a note), then
 * per tensor {"dtype", "shape", "data_offsets"}; spaces pad it to a multiple
 * of 8 bytes. A tensor's bytes are its component's decoded bytes: a span of
 * the stored bytes for a raw component, the decoded stream for zstd.
 */
#include "internal.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct st_entry {
    const char *name;
    size_t name_len;
    const char *dtype;
    const zt_value *shape; /* source_shapes[role], or NULL: the object's shape */
    const zt_object *obj;
    const zt_component *comp;
    uint64_t src_off, src_len; /* the component's, kept here for the sort */
    uint64_t offset;           /* absolute, in the view */
} st_entry;

struct zt_st_view {
    st_entry *e;
    size_t n, cap;
    zt__buf hdr; /* the 8-byte length, the JSON, the padding */
    uint64_t size;
    char **notes;
    size_t nnotes;
};

/* ---- refusals: "object "o" cannot be written as safetensors: why" */

static void copy_name(char *dst, size_t cap, const char *s)
{
    size_t n = strlen(s);
    n = n < cap ? n : cap - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

static zt_status refuse(zt_error *err, zt_status code, const zt_object *o, const zt_component *c,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static zt_status refuse(zt_error *err, zt_status code, const zt_object *o, const zt_component *c,
                        const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    zt__fail(err, code, NULL, NULL, 0, 0, "object \"%.200s\" cannot be written as safetensors: %s",
             zt_object_name(o), why);
    if (err) {
        copy_name(err->object, sizeof(err->object), zt_object_name(o));
        copy_name(err->component, sizeof(err->component), c ? zt_component_role(c) : "");
    }
    return code;
}

static zt_status nomem(zt_error *err)
{
    return ZT_FAIL(err, ZT_E_NOMEM, "out of memory building a safetensors view");
}

/* ---- which tensors: dense objects and Ollama triples */

static zt_status add(zt_st_view *v, const char *name, size_t nlen, const zt_value *shape,
                     const zt_object *o, const zt_component *c, zt_error *err)
{
    const char *dt = zt_safetensors_dtype(zt_component_dtype(c), zt_component_type(c));
    if (!dt) {
        const char *dn = zt_dtype_name(zt_component_dtype(c)), *ty = zt_component_type(c);
        return refuse(err, ZT_E_UNSUPPORTED, o, c,
                      "component \"%s\" is %s%s%.80s, which safetensors has no dtype for",
                      zt_component_role(c), dn ? dn : "an invalid dtype",
                      ty ? " with logical type " : "", ty ? ty : "");
    }
    if (zt_component_encoding(c) == ZT_ENC_OTHER)
        return refuse(err, ZT_E_UNSUPPORTED, o, c,
                      "component \"%s\" has encoding \"%.60s\", which this library does not decode",
                      zt_component_role(c), zt_component_encoding_name(c));
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 64;
        st_entry *ne = zt__realloc(v->e, cap * sizeof(*ne));
        if (!ne)
            return nomem(err);
        v->e = ne;
        v->cap = cap;
    }
    v->e[v->n++] =
        (st_entry){name, nlen, dt, shape, o, c, zt_component_offset(c), zt_component_length(c), 0};
    return ZT_OK;
}

/* An Ollama quantized_group: source_tensors / source_shapes give the triple. */
static zt_status add_group(zt_st_view *v, const zt_object *o, zt_error *err)
{
    const zt_value *a = zt_object_attributes(o);
    const zt_value *names = zt_value_get(a, "source_tensors"),
                   *shapes = zt_value_get(a, "source_shapes");
    if (!names || !shapes)
        return refuse(err, ZT_E_UNSUPPORTED, o, NULL,
                      "a quantized_group needs the source_tensors and source_shapes "
                      "attributes of an Ollama blob to be written as its triple");
    for (size_t i = 0; i < zt_object_component_count(o); i++) {
        const zt_component *c = zt_object_component_at(o, i);
        const zt_value *nm = zt_value_get(names, zt_component_role(c));
        const zt_value *sh = zt_value_get(shapes, zt_component_role(c));
        if (!nm || zt_value_get_kind(nm) != ZT_VAL_TEXT || !sh ||
            zt_value_get_kind(sh) != ZT_VAL_ARRAY)
            return refuse(err, ZT_E_UNSUPPORTED, o, c,
                          "a component has no source tensor name or shape");
        size_t len;
        const char *s = zt_value_data(nm, &len);
        zt_status st = add(v, s, len, sh, o, c, err);
        if (st)
            return st;
    }
    return ZT_OK;
}

static zt_status collect(zt_st_view *v, const zt_file *f, zt_error *err)
{
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        const char *fmt = zt_object_format(o);
        const zt_component *c = zt_object_find_component(o, "data");
        zt_status st;
        if (!strcmp(fmt, "dense") && c)
            st = add(v, zt_object_name(o), zt_object_name_len(o), NULL, o, c, err);
        else if (!strcmp(fmt, "dense"))
            st = refuse(err, ZT_E_COMPONENTS, o, NULL, "it has no \"data\" component");
        else if (!strcmp(fmt, "quantized_group"))
            st = add_group(v, o, err);
        else
            st = refuse(err, ZT_E_UNSUPPORTED, o, NULL,
                        "its format is \"%.80s\"; safetensors holds dense tensors", fmt);
        if (st)
            return st;
    }
    return ZT_OK;
}

/* ---- checks, in manifest order: bytes against shape, names */

static size_t ndim_of(const st_entry *e)
{
    return e->shape ? zt_value_count(e->shape) : zt_object_ndim(e->obj);
}

static uint64_t dim_of(const st_entry *e, size_t d)
{
    return e->shape ? zt_value_uint(zt_value_item(e->shape, d)) : zt_object_shape(e->obj)[d];
}

static zt_status check_shape(const st_entry *e, zt_error *err)
{
    uint64_t want = zt_dtype_width(zt_component_dtype(e->comp));
    int big = 0;
    for (size_t d = 0; d < ndim_of(e); d++) {
        uint64_t v = dim_of(e, d);
        want = v && want > UINT64_MAX / v ? 0 : want * v;
        big |= v > INT64_MAX;
    }
    if (want != zt_component_decoded_length(e->comp))
        return refuse(err, ZT_E_SIZE, e->obj, e->comp,
                      "its bytes do not match the shape of the tensor it would be");
    if (big)
        return refuse(err, ZT_E_LIMIT, e->obj, e->comp,
                      "a dimension of tensor \"%.200s\" is above 2^63 - 1", e->name);
    return ZT_OK;
}

/* Names once: an open-addressing set of entry indices + 1. */
typedef struct name_set {
    uint32_t *slot;
    size_t mask;
} name_set;

static int name_seen(name_set *s, const st_entry *all, size_t i)
{
    const st_entry *e = &all[i];
    for (size_t h = zt__hash(e->name, e->name_len) & s->mask;; h = (h + 1) & s->mask) {
        uint32_t k = s->slot[h];
        if (!k) {
            s->slot[h] = (uint32_t)(i + 1);
            return 0;
        }
        if (all[k - 1].name_len == e->name_len && !memcmp(all[k - 1].name, e->name, e->name_len))
            return 1;
    }
}

static zt_status check_name(const st_entry *e, zt_error *err)
{
    if (strlen(e->name) != e->name_len)
        return refuse(err, ZT_E_NAME, e->obj, e->comp, "its tensor name holds a NUL byte");
    if (!zt__utf8_valid((const uint8_t *)e->name, e->name_len))
        return refuse(err, ZT_E_NAME, e->obj, e->comp, "its tensor name is not UTF-8");
    return ZT_OK;
}

static zt_status check_entries(zt_st_view *v, zt_error *err)
{
    if (v->n > UINT32_MAX / 4)
        return ZT_FAIL(err, ZT_E_LIMIT, "%zu tensors are too many for one view", v->n);
    size_t cap = 16;
    while (cap < 2 * v->n)
        cap *= 2;
    name_set s = {zt__calloc(cap, sizeof(uint32_t)), cap - 1};
    if (!s.slot)
        return nomem(err);
    zt_status st = ZT_OK;
    for (size_t i = 0; i < v->n && !st; i++) {
        const st_entry *e = &v->e[i];
        if ((st = check_shape(e, err)) || (st = check_name(e, err)))
            break;
        if (!strcmp(e->name, "__metadata__"))
            st = refuse(err, ZT_E_DUPLICATE, e->obj, e->comp,
                        "its tensor name is __metadata__, which holds the file's metadata");
        else if (name_seen(&s, v->e, i))
            st = refuse(err, ZT_E_DUPLICATE, e->obj, e->comp,
                        "its tensor name \"%.200s\" is written by another object too", e->name);
    }
    zt__free(s.slot);
    return st;
}

/* In the order of the bytes in the file; ties (empty tensors) by length, name. */
static int cmp_entry(const void *pa, const void *pb)
{
    const st_entry *x = pa, *y = pb;
    uint64_t a = x->src_off, b = y->src_off;
    if (a == b) {
        a = x->src_len;
        b = y->src_len;
    }
    return a != b ? (a > b) - (a < b) : strcmp(x->name, y->name);
}

/* ---- the header, byte for byte as jansson's json_dumps(JSON_COMPACT) */

static void puts_(zt__buf *b, const char *s)
{
    zt__buf_put(b, s, strlen(s));
}

static void put_u64(zt__buf *b, uint64_t u)
{
    char t[24], *p = t + sizeof(t);
    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    zt__buf_put(b, p, (size_t)(t + sizeof(t) - p));
}

/* A JSON string of valid UTF-8: '"', '\\' and control characters escaped as
 * jansson does (\b \f \n \r \t, else \u00XX in capitals); the rest as is. */
static void put_str(zt__buf *b, const char *s, size_t n)
{
    static const char ctl[] = "\b\f\n\r\t", short_[] = "bfnrt";
    size_t run = 0;
    zt__buf_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        zt__buf_put(b, s + run, i - run);
        run = i + 1;
        const char *t = c ? memchr(ctl, c, 5) : NULL;
        char esc[8] = {'\\', (char)c};
        size_t k = 2;
        if (t)
            esc[1] = short_[t - ctl];
        else if (c < 0x20)
            k = (size_t)snprintf(esc, sizeof(esc), "\\u%04X", c);
        zt__buf_put(b, esc, k);
    }
    zt__buf_put(b, s + run, n - run);
    zt__buf_put(b, "\"", 1);
}

static zt_status add_note(zt_st_view *v, const char *key, size_t klen, const char *text)
{
    char **nn = zt__realloc(v->notes, (v->nnotes + 1) * sizeof(*nn));
    if (!nn)
        return ZT_E_NOMEM;
    v->notes = nn;
    size_t cap = klen + strlen(text) + 64;
    char *s = zt__malloc(cap);
    if (!s)
        return ZT_E_NOMEM;
    snprintf(s, cap, "attribute \"%.*s\" is not text; written as \"%s\"", (int)klen, key, text);
    v->notes[v->nnotes++] = s;
    return ZT_OK;
}

/* __metadata__: the file attributes, text values as they are and any other
 * value as its compact JSON text (docs/JSON.md's mapping). */
static zt_status put_metadata(zt_st_view *v, const zt_file *f, zt_error *err)
{
    const zt_value *a = zt_file_attributes(f);
    json_t *j = a ? zt__value_json(a) : NULL;
    if (a && !j)
        return nomem(err);
    if (!json_is_object(j) || !json_object_size(j)) {
        json_decref(j);
        return ZT_OK;
    }
    const char *k;
    size_t klen;
    json_t *val;
    int first = 1;
    zt_status st = ZT_OK;
    puts_(&v->hdr, "\"__metadata__\":{");
    json_object_keylen_foreach(j, k, klen, val)
    {
        zt__buf_put(&v->hdr, ",", !first);
        first = 0;
        put_str(&v->hdr, k, klen);
        zt__buf_put(&v->hdr, ":", 1);
        if (json_is_string(val)) {
            put_str(&v->hdr, json_string_value(val), json_string_length(val));
            continue;
        }
        char *t = json_dumps(val, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!t || add_note(v, k, klen, t)) {
            free(t);
            st = nomem(err);
            break;
        }
        put_str(&v->hdr, t, strlen(t));
        free(t);
    }
    zt__buf_put(&v->hdr, "}", 1);
    json_decref(j);
    return st;
}

static void put_tensor(zt__buf *b, const st_entry *e, uint64_t begin, uint64_t end)
{
    put_str(b, e->name, e->name_len);
    puts_(b, ":{\"dtype\":");
    put_str(b, e->dtype, strlen(e->dtype));
    puts_(b, ",\"shape\":[");
    for (size_t d = 0; d < ndim_of(e); d++) {
        zt__buf_put(b, ",", d > 0);
        put_u64(b, dim_of(e, d));
    }
    puts_(b, "],\"data_offsets\":[");
    put_u64(b, begin);
    zt__buf_put(b, ",", 1);
    put_u64(b, end);
    puts_(b, "]}");
}

static zt_status build_header(zt_st_view *v, const zt_file *f, zt_error *err)
{
    zt__buf *b = &v->hdr;
    size_t guess = 4096; /* one allocation for the usual header */
    for (size_t i = 0; i < v->n; i++)
        guess += v->e[i].name_len + 80 + 12 * ndim_of(&v->e[i]);
    b->p = zt__malloc(guess);
    b->cap = b->p ? guess : 0;
    zt__buf_put(b, "\0\0\0\0\0\0\0\0{", 9);
    zt_status st = put_metadata(v, f, err);
    if (st)
        return st;
    uint64_t off = 0;
    for (size_t i = 0; i < v->n; i++) {
        st_entry *e = &v->e[i];
        uint64_t len = zt_component_decoded_length(e->comp);
        if (len > INT64_MAX - off)
            return refuse(err, ZT_E_LIMIT, e->obj, e->comp,
                          "the view would pass 2^63 - 1 bytes at tensor \"%.200s\"", e->name);
        zt__buf_put(b, ",", b->len > 9);
        put_tensor(b, e, off, off + len);
        e->offset = off;
        off += len;
    }
    zt__buf_put(b, "}", 1);
    size_t json = b->len - 8, padded = (json + 7) & ~(size_t)7;
    for (size_t i = json; i < padded; i++)
        zt__buf_put(b, " ", 1);
    if (b->oom)
        return nomem(err);
    zt__put_le64(b->p, padded);
    for (size_t i = 0; i < v->n; i++)
        v->e[i].offset += b->len;
    v->size = b->len + off;
    return ZT_OK;
}

/* ---- the API */

/* The arrays cut to what they hold: a server keeps a view per file version
 * (ztensord builds them at scan time), and the room grown for them (64
 * entries, a doubled header buffer) was most of a small file's view. A cut
 * that fails keeps the room. */
static void fit(zt_st_view *v)
{
    st_entry *e = v->n ? zt__realloc(v->e, v->n * sizeof(*e)) : NULL;
    if (e) {
        v->e = e;
        v->cap = v->n;
    }
    uint8_t *h = v->hdr.len ? zt__realloc(v->hdr.p, v->hdr.len) : NULL;
    if (h) {
        v->hdr.p = h;
        v->hdr.cap = v->hdr.len;
    }
}

zt_st_view *zt_st_view_new(const zt_file *f, zt_error *err)
{
    if (!f) {
        ZT_FAIL(err, ZT_E_ARG, "zt_st_view_new: no file");
        return NULL;
    }
    zt_st_view *v = zt__calloc(1, sizeof(*v));
    if (!v) {
        nomem(err);
        return NULL;
    }
    zt_status st = collect(v, f, err);
    if (!st)
        st = check_entries(v, err);
    if (!st) {
        if (v->n) /* qsort takes no NULL, even for nothing */
            qsort(v->e, v->n, sizeof(*v->e), cmp_entry);
        st = build_header(v, f, err);
    }
    if (st) {
        zt_st_view_free(v);
        return NULL;
    }
    fit(v);
    return v;
}

void zt_st_view_free(zt_st_view *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->nnotes; i++)
        zt__free(v->notes[i]);
    zt__free(v->notes);
    zt__buf_free(&v->hdr);
    zt__free(v->e);
    zt__free(v);
}

const void *zt_st_view_header(const zt_st_view *v, size_t *len)
{
    *len = v->hdr.len;
    return v->hdr.p;
}

uint64_t zt_st_view_size(const zt_st_view *v)
{
    return v->size;
}

size_t zt_st_view_count(const zt_st_view *v)
{
    return v->n;
}

zt_status zt_st_view_tensor(const zt_st_view *v, size_t i, zt_st_tensor *out)
{
    if (i >= v->n)
        return ZT_E_ARG;
    const st_entry *e = &v->e[i];
    *out = (zt_st_tensor){
        .name = e->name,
        .dtype = e->dtype,
        .object = e->obj,
        .component = e->comp,
        .offset = e->offset,
        .length = zt_component_decoded_length(e->comp),
        .decode = zt_component_encoding(e->comp) == ZT_ENC_ZSTD,
        .shard = zt_component_shard(e->comp),
        .source_offset = zt_component_offset(e->comp),
    };
    return ZT_OK;
}

size_t zt_st_view_locate(const zt_st_view *v, uint64_t pos)
{
    size_t lo = 0, hi = v->n; /* the first i whose end is after pos */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const st_entry *e = &v->e[mid];
        if (e->offset + zt_component_decoded_length(e->comp) > pos)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

size_t zt_st_view_note_count(const zt_st_view *v)
{
    return v->nnotes;
}

const char *zt_st_view_note(const zt_st_view *v, size_t i)
{
    return i < v->nnotes ? v->notes[i] : NULL;
}
