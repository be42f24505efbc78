/* zt convert IN.zt -o OUT.safetensors: the header first (every size is in the
 * manifest), padded with spaces to a multiple of 8, then each tensor's
 * decoded bytes in the order they have in IN. Dense objects map to one
 * tensor; quantized_group objects read from Ollama blobs map back to their
 * triple; anything else is refused with its name. */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct entry {
    const char *name;
    const char *dtype;
    const zt_value *shape; /* source_shapes[role], or NULL: the object's shape */
    const zt_object *obj;
    const zt_component *comp;
} entry;

typedef struct xport {
    const char *in, *out;
    zt_file *f;
    entry *e;
    size_t n, cap;
} xport;

static int refuse(const xport *x, const zt_object *o, const char *why)
{
    fprintf(stderr, "zt convert: %s: object \"%s\" cannot be written as safetensors: %s\n", x->in,
            zt_object_name(o), why);
    return ZT_EXIT_INVALID;
}

static int add(xport *x, const char *name, const zt_value *shape, const zt_object *o,
               const zt_component *c)
{
    const char *dt = zt_safetensors_dtype(zt_component_dtype(c), zt_component_type(c));
    if (!dt) {
        char why[256];
        snprintf(why, sizeof(why), "component \"%s\" is %s%s%s, which safetensors has no dtype for",
                 zt_component_role(c), zt_dtype_name(zt_component_dtype(c)),
                 zt_component_type(c) ? " with logical type " : "",
                 zt_component_type(c) ? zt_component_type(c) : "");
        return refuse(x, o, why);
    }
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        entry *ne = realloc(x->e, cap * sizeof(*ne));
        if (!ne)
            return ZT_EXIT_SYSTEM;
        x->e = ne;
        x->cap = cap;
    }
    x->e[x->n++] = (entry){name, dt, shape, o, c};
    return ZT_EXIT_OK;
}

/* An Ollama quantized_group: source_tensors / source_shapes give the triple. */
static int add_group(xport *x, const zt_object *o)
{
    const zt_value *a = zt_object_attributes(o);
    const zt_value *names = zt_value_get(a, "source_tensors"),
                   *shapes = zt_value_get(a, "source_shapes");
    if (!names || !shapes)
        return refuse(x, o,
                      "a quantized_group needs the source_tensors and source_shapes "
                      "attributes of an Ollama blob to be written as its triple");
    for (size_t i = 0; i < zt_object_component_count(o); i++) {
        const zt_component *c = zt_object_component_at(o, i);
        const zt_value *nm = zt_value_get(names, zt_component_role(c));
        const zt_value *sh = zt_value_get(shapes, zt_component_role(c));
        if (!nm || zt_value_get_kind(nm) != ZT_VAL_TEXT || !sh ||
            zt_value_get_kind(sh) != ZT_VAL_ARRAY)
            return refuse(x, o, "a component has no source tensor name or shape");
        int rc = add(x, zt_value_data(nm, NULL), sh, o, c);
        if (rc)
            return rc;
    }
    return ZT_EXIT_OK;
}

static int collect(xport *x)
{
    for (size_t i = 0; i < zt_file_object_count(x->f); i++) {
        const zt_object *o = zt_file_object_at(x->f, i);
        const char *fmt = zt_object_format(o);
        int rc;
        if (!strcmp(fmt, "dense"))
            rc = add(x, zt_object_name(o), NULL, o, zt_object_find_component(o, "data"));
        else if (!strcmp(fmt, "quantized_group"))
            rc = add_group(x, o);
        else {
            char why[160];
            snprintf(why, sizeof(why), "its format is \"%.80s\"; safetensors holds dense tensors",
                     fmt);
            rc = refuse(x, o, why);
        }
        if (rc)
            return rc;
    }
    return ZT_EXIT_OK;
}

/* In the order of the bytes in IN; ties (empty tensors) by length, name. */
static int cmp_entry(const void *pa, const void *pb)
{
    const entry *x = pa, *y = pb;
    uint64_t a = zt_component_offset(x->comp), b = zt_component_offset(y->comp);
    if (a == b) {
        a = zt_component_length(x->comp);
        b = zt_component_length(y->comp);
    }
    return a != b ? (a > b) - (a < b) : strcmp(x->name, y->name);
}

/* ---- the header */
static json_t *shape_json(const entry *e)
{
    json_t *a = json_array();
    size_t n = e->shape ? zt_value_count(e->shape) : zt_object_ndim(e->obj);
    for (size_t i = 0; a && i < n; i++) {
        uint64_t d =
            e->shape ? zt_value_uint(zt_value_item(e->shape, i)) : zt_object_shape(e->obj)[i];
        if (d > INT64_MAX || json_array_append_new(a, json_integer((json_int_t)d))) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* Text attributes as they are; any other value as its compact JSON text. */
static json_t *metadata_json(const xport *x)
{
    char *s = zt_file_manifest_json(x->f, ZT_JSON_COMPACT, NULL);
    json_t *m = s ? json_loads(s, 0, NULL) : NULL;
    zt_free(s);
    json_t *a = json_object_get(m, "attributes"), *md = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(a, k, v)
    {
        if (json_is_string(v)) {
            json_object_set(md, k, v);
            continue;
        }
        char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        fprintf(stderr, "zt convert: warning: attribute \"%s\" is not text; written as \"%s\"\n", k,
                t ? t : "");
        json_object_set_new(md, k, json_string(t ? t : ""));
        free(t);
    }
    json_decref(m);
    return md;
}

static char *build_header(xport *x, size_t *len)
{
    /* __metadata__ is the file attributes: an Ollama blob's quant_type and
     * group_size come back from there, as they were. */
    json_t *root = json_object(), *md = metadata_json(x);
    if (json_object_size(md))
        json_object_set(root, "__metadata__", md);
    json_decref(md);
    uint64_t off = 0;
    for (size_t i = 0; i < x->n; i++) {
        const entry *e = &x->e[i];
        uint64_t len_i = zt_component_decoded_length(e->comp);
        json_t *t = json_pack("{s:s, s:o, s:[I,I]}", "dtype", e->dtype, "shape", shape_json(e),
                              "data_offsets", (json_int_t)off, (json_int_t)(off + len_i));
        if (!t || json_object_set_new(root, e->name, t)) {
            json_decref(root);
            return NULL;
        }
        off += len_i;
    }
    char *s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!s)
        return NULL;
    size_t n = strlen(s), padded = (n + 7) & ~(size_t)7;
    char *r = realloc(s, padded + 1);
    if (!r) {
        free(s);
        return NULL;
    }
    memset(r + n, ' ', padded - n);
    r[padded] = 0;
    *len = padded;
    return r;
}

/* Every tensor's byte count against its shape and dtype, and names once. */
static int check_entries(xport *x)
{
    json_t *seen = json_object();
    int rc = ZT_EXIT_OK;
    for (size_t i = 0; i < x->n && !rc; i++) {
        const entry *e = &x->e[i];
        uint64_t want = zt_dtype_width(zt_component_dtype(e->comp));
        size_t nd = e->shape ? zt_value_count(e->shape) : zt_object_ndim(e->obj);
        for (size_t d = 0; d < nd; d++) {
            uint64_t v =
                e->shape ? zt_value_uint(zt_value_item(e->shape, d)) : zt_object_shape(e->obj)[d];
            want = v && want > UINT64_MAX / v ? 0 : want * v;
        }
        if (want != zt_component_decoded_length(e->comp))
            rc = refuse(x, e->obj, "its bytes do not match the shape of the tensor it would be");
        else if (json_object_get(seen, e->name) || !strcmp(e->name, "__metadata__"))
            rc = refuse(x, e->obj,
                        "its tensor name is written by another object too, or is __metadata__");
        else
            json_object_set_new(seen, e->name, json_true());
    }
    json_decref(seen);
    return rc;
}

/* ---- output: temporary file, then fsync, rename, fsync of the directory */
static int open_tmp(const char *path, char *tmp, size_t cap)
{
    char *d = strdup(path), *b = strdup(path);
    if (!d || !b) {
        free(d);
        free(b);
        return -1;
    }
    snprintf(tmp, cap, "%s/.%s.tmp.XXXXXX", dirname(d), basename(b));
    free(d);
    free(b);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0)
        fchmod(fd, 0644);
    return fd;
}

static int publish(int fd, const char *tmp, const char *path)
{
    if (fsync(fd) != 0 || rename(tmp, path) != 0)
        return -1;
    char *d = strdup(path);
    int dfd = d ? open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    free(d);
    int rc = dfd >= 0 && fsync(dfd) == 0 ? 0 : -1;
    if (dfd >= 0)
        close(dfd);
    return rc;
}

static zt_status to_fd(void *ud, const void *p, size_t n, zt_error *err)
{
    if (tool_write_all(*(int *)ud, p, n) == 0)
        return ZT_OK;
    err->code = errno == ENOSPC ? ZT_E_NOSPACE : ZT_E_IO;
    snprintf(err->message, sizeof(err->message), "write: %s", strerror(errno));
    return err->code;
}

static int write_all(xport *x, int fd, const char *hdr, size_t hlen)
{
    uint8_t n8[8];
    for (int i = 0; i < 8; i++)
        n8[i] = (uint8_t)((uint64_t)hlen >> (8 * i));
    if (tool_write_all(fd, n8, 8) || tool_write_all(fd, hdr, hlen)) {
        fprintf(stderr, "zt convert: %s: write: %s\n", x->out, strerror(errno));
        return ZT_EXIT_SYSTEM;
    }
    tool_progress prog;
    uint64_t total = 0;
    for (size_t i = 0; i < x->n; i++)
        total += zt_component_decoded_length(x->e[i].comp);
    tool_progress_init(&prog, total);
    zt_error err;
    zt_status st = ZT_OK;
    for (size_t i = 0; i < x->n && !st; i++)
        st = tool_copy_component(x->f, x->e[i].comp, to_fd, &fd, &prog, &err);
    tool_progress_end(&prog);
    return st ? tool_report("convert", x->out, &err) : ZT_EXIT_OK;
}

static int emit(xport *x)
{
    size_t hlen = 0;
    char *hdr = build_header(x, &hlen), tmp[4096];
    if (!hdr) {
        fprintf(stderr, "zt convert: out of memory building the header\n");
        return ZT_EXIT_SYSTEM;
    }
    int fd = open_tmp(x->out, tmp, sizeof(tmp)), rc;
    if (fd < 0) {
        fprintf(stderr, "zt convert: %s: %s\n", x->out, strerror(errno));
        free(hdr);
        return ZT_EXIT_SYSTEM;
    }
    rc = write_all(x, fd, hdr, hlen);
    if (!rc && publish(fd, tmp, x->out) != 0) {
        fprintf(stderr, "zt convert: %s: %s\n", x->out, strerror(errno));
        rc = ZT_EXIT_SYSTEM;
    }
    close(fd);
    if (rc)
        unlink(tmp);
    free(hdr);
    return rc;
}

int tool_export_safetensors(const char *in, const char *out)
{
    xport x = {.in = in, .out = out};
    zt_error err;
    if (zt_open(in, NULL, &x.f, &err))
        return tool_report("convert", in, &err);
    int rc = collect(&x);
    if (!rc)
        rc = check_entries(&x);
    if (!rc) {
        qsort(x.e, x.n, sizeof(*x.e), cmp_entry);
        rc = emit(&x);
    }
    free(x.e);
    zt_close(x.f);
    return rc;
}
