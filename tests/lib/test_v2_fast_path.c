/*
 * The v2 fast manifest path (v2_fast.c) against the general one (cbor_decode.c
 * + v2_manifest.c): the same bytes opened both ways must give the same status,
 * the same error (code, object, part, offset, message) and, when they open,
 * the same model, field by field (every object, part, shape, attribute value
 * with its offset, the shard table) and the same manifest JSON. Over the v2
 * corpus (accepted and rejected files), the v2 fuzz seeds, generated
 * manifests of many objects (which the fast path must itself accept), and
 * every one-byte change and truncation of a small manifest that has every
 * field the fast path reads.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "internal.h"

/* ---- a growing string */

typedef struct str {
    char *p;
    size_t len, cap;
} str;

static void add(str *s, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(s->p ? s->p + s->len : NULL, s->p ? s->cap - s->len : 0, fmt, ap);
        va_end(ap);
        assert_true(k >= 0);
        if (s->p && (size_t)k < s->cap - s->len) {
            s->len += (size_t)k;
            return;
        }
        s->cap = (s->cap + (size_t)k + 1) * 2;
        s->p = realloc(s->p, s->cap);
        assert_non_null(s->p);
    }
}

static void add_bytes(str *s, const void *p, size_t n)
{
    const uint8_t *b = p;
    add(s, "%zu:", n);
    for (size_t i = 0; i < n; i++)
        add(s, "%02x", b[i]);
    add(s, " ");
}

static void add_text(str *s, const char *t)
{
    if (t)
        add_bytes(s, t, strlen(t));
    else
        add(s, "NULL ");
}

/* ---- the model, every field */

static void dump_value(str *s, const zt_value *v)
{
    if (!v) {
        add(s, "none ");
        return;
    }
    add(s, "(k%u n%u %s%llu ", v->kind, v->n, v->kind == ZT_VAL_TAG ? "tag" : "at",
        (unsigned long long)(v->kind == ZT_VAL_TAG ? v->tag : v->at));
    switch ((zt_value_kind)v->kind) {
    case ZT_VAL_TEXT:
    case ZT_VAL_BYTES:
        add_bytes(s, v->v.s, v->n);
        break;
    case ZT_VAL_ARRAY:
    case ZT_VAL_MAP:
    case ZT_VAL_TAG: {
        uint32_t k = v->kind == ZT_VAL_MAP ? 2 * v->n : v->kind == ZT_VAL_TAG ? 1 : v->n;
        for (uint32_t i = 0; i < k; i++)
            dump_value(s, &v->v.items[i]);
        break;
    }
    default:
        add(s, "%llx", (unsigned long long)v->v.u);
    }
    add(s, ") ");
}

static void dump_part(str *s, const struct zt_component *c)
{
    add(s, "\n  part ");
    add_text(s, c->role);
    add_text(s, c->type);
    add_text(s, c->digest);
    add_text(s, c->encoding_name);
    add_text(s, c->shard_name);
    add(s, "off %llu len %llu unc %llu dt %d enc %d dk %d hu %d dd %d sk %d tu %d sh %u ",
        (unsigned long long)c->offset, (unsigned long long)c->length,
        (unsigned long long)c->uncompressed_length, (int)c->dtype, (int)c->encoding,
        (int)c->digest_kind, c->has_uncompressed, c->digest_decoded, c->seekable, c->type_unknown,
        c->shard);
    add_bytes(s, c->digest_bin, sizeof(c->digest_bin));
}

static void dump_model(str *s, const zt__model *m)
{
    add(s, "kind %d version %s nobj %zu attrs ", (int)m->kind, m->version ? m->version : "-",
        m->nobj);
    dump_value(s, m->attributes);
    for (size_t i = 0; i < m->nobj; i++) {
        const struct zt_object *o = &m->objs[i];
        add(s, "\nobj ");
        add_bytes(s, o->name, o->name_len);
        add_text(s, o->format);
        add_text(s, o->source_name);
        add(s, "at %llu hs %d un %d shape", (unsigned long long)o->at, o->has_shape,
            o->uninterpreted);
        for (size_t d = 0; d < o->ndim; d++)
            add(s, " %llu", (unsigned long long)o->shape[d]);
        add(s, " attrs ");
        dump_value(s, o->attributes);
        for (size_t j = 0; j < o->ncomp; j++)
            dump_part(s, &o->comps[j]);
        assert_ptr_equal(zt__model_find(m, o->name, o->name_len), o);
    }
    for (size_t i = 0; m->v2 && i < m->v2->nshards; i++) {
        const zt__shard *sh = &m->v2->shards[i];
        add(s, "\nshard ");
        add_text(s, sh->name);
        add_text(s, sh->digest);
        add(s, "size %llu kind %d status %d ", (unsigned long long)sh->size, (int)sh->kind,
            (int)sh->status);
        add_bytes(s, sh->bin, sizeof(sh->bin));
    }
}

static void dump_error(str *s, zt_status st, const zt_error *e)
{
    add(s, "ERR %d code %d off %d/%llu obj %s part %s: %s", (int)st, (int)e->code, e->has_offset,
        (unsigned long long)e->offset, e->object, e->component, e->message);
}

/* ---- the two ways */

/* A whole file from memory: the error, or the model and its manifest JSON. */
static char *open_outcome(const uint8_t *buf, size_t n, int slow)
{
    str s = {0};
    zt__fast_path_disabled = slow;
    zt_file *f;
    zt_error err;
    zt_status st = zt_open_memory(buf, n, NULL, &f, &err);
    zt__fast_path_disabled = 0;
    if (st) {
        dump_error(&s, st, &err);
        return s.p;
    }
    dump_model(&s, &f->model);
    char *json = zt_file_manifest_json(f, ZT_JSON_COMPACT, &err);
    add(&s, "\njson %s", json ? json : "failed");
    zt_free(json);
    zt_close(f);
    return s.p;
}

/* Manifest bytes alone, as the reader parses and validates them. */
static char *manifest_outcome(const uint8_t *buf, size_t n, uint64_t file_size, uint64_t moff,
                              int slow)
{
    str s = {0};
    zt__model m = {0};
    zt__arena_init(&m.arena);
    zt_error err;
    zt__fast_path_disabled = slow;
    zt_status st = zt__v2_parse_manifest(&m, buf, n, file_size, moff, UINT64_MAX, &err);
    zt__fast_path_disabled = 0;
    if (st)
        dump_error(&s, st, &err);
    else
        dump_model(&s, &m);
    zt__arena_free(&m.arena);
    return s.p;
}

static bool fast_accepts(const uint8_t *buf, size_t n, uint64_t moff, size_t *nobj)
{
    zt__model m = {0};
    zt__arena_init(&m.arena);
    m.kind = ZT_KIND_ZT_2;
    m.v2 = zt__arena_alloc(&m.arena, sizeof(*m.v2));
    memset(m.v2, 0, sizeof(*m.v2));
    bool ok = zt__v2_model_fast(&m, buf, n, moff) == ZT_OK;
    if (nobj)
        *nobj = m.nobj;
    zt__arena_free(&m.arena);
    return ok;
}

static void same(char *fast, char *slow, const char *what)
{
    if (strcmp(fast, slow) != 0)
        fail_msg("%s:\n fast: %.600s\n slow: %.600s", what, fast, slow);
    free(fast);
    free(slow);
}

/* ---- the corpus and the fuzz seeds */

static uint8_t *slurp(const char *path, size_t *n)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = malloc((size_t)sb.st_size + 8);
    *n = buf ? fread(buf, 1, (size_t)sb.st_size, f) : 0;
    fclose(f);
    return buf;
}

/* How a seed becomes a file: as the fuzz targets build it. */
enum seed { AS_FILE, AS_FOOTER_SEED, AS_MANIFEST_SEED };

static uint8_t *as_file(uint8_t *in, size_t *n, enum seed how)
{
    static const uint8_t magic[8] = {0x89, 'Z', 'T', '2', 0x0D, 0x0A, 0x1A, 0x0A};
    if (how == AS_FILE)
        return in;
    if (how == AS_FOOTER_SEED) {
        memmove(in + 8, in, *n);
        memcpy(in, magic, 8);
        *n += 8;
        return in;
    }
    if (*n < 4)
        return NULL;
    size_t m = (size_t)zt__le64((uint8_t[8]){in[0], in[1], in[2], in[3], 0, 0, 0, 0});
    size_t size = *n - 4;
    m = m > size ? size : m;
    size_t blobs = size - m, moff = 4096 + (blobs + 4095) / 4096 * 4096, total = moff + m + 40;
    uint8_t *p = calloc(1, total);
    assert_non_null(p);
    memcpy(p, magic, 8);
    memcpy(p + 4096, in + 4 + m, blobs);
    memcpy(p + moff, in + 4, m);
    zt__v2_footer_bytes(p + moff + m, m ? moff : 0, m, m ? zt__xxh3(in + 4, m) : 0);
    free(in);
    *n = total;
    return p;
}

static bool is_zt(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && !strcmp(name + n - 3, ".zt");
}

/* Files compared, and how many of them the fast path took. The corpus's
 * directories also hold what it expects of each .zt file. */
static void compare_dir(const char *dir, enum seed how, size_t *files, size_t *fast)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        char path[4096];
        size_t n;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        bool skip = de->d_name[0] == '.' || (how == AS_FILE && !is_zt(de->d_name));
        uint8_t *buf = skip ? NULL : slurp(path, &n);
        if (!buf || !(buf = as_file(buf, &n, how)))
            continue;
        same(open_outcome(buf, n, 0), open_outcome(buf, n, 1), path);
        if (n >= 48) {
            uint64_t off = zt__le64(buf + n - 40), len = zt__le64(buf + n - 32);
            if (len && off <= n - 40 && len <= n - 40 - off &&
                fast_accepts(buf + off, len, off, NULL))
                ++*fast;
        }
        ++*files;
        free(buf);
    }
    closedir(d);
}

static void test_corpus_and_seeds(void **state)
{
    (void)state;
    const char *corpus = getenv("ZT_CORPUS_V2_DIR");
    assert_non_null(corpus);
    char accept[4096], reject[4096];
    snprintf(accept, sizeof(accept), "%s/accept", corpus);
    snprintf(reject, sizeof(reject), "%s/reject", corpus);
    size_t files = 0, fast = 0, a_files = 0, a_fast = 0;
    compare_dir(accept, AS_FILE, &a_files, &a_fast);
    compare_dir(reject, AS_FILE, &files, &fast);
    compare_dir(ZT_SOURCE_DIR "/tests/fuzz/corpus/v2_footer", AS_FOOTER_SEED, &files, &fast);
    compare_dir(ZT_SOURCE_DIR "/tests/fuzz/corpus/v2_manifest", AS_MANIFEST_SEED, &files, &fast);
    print_message("accepted corpus: %zu files, %zu by the fast path; others: %zu files, %zu\n",
                  a_files, a_fast, files, fast);
    assert_true(a_files > 30 && files > 250);
    assert_true(a_fast * 2 > a_files); /* the test must exercise the fast path */
}

/* ---- generated manifests */

typedef struct gen {
    zt__arena arena;
    struct zt_object *objs;
    const struct zt_object **ptrs;
    size_t n;
    uint64_t end; /* where the blobs end */
} gen;

static const char *const g_names[] = {"w", "model.layers.%zu.mlp.down_proj.weight", "tête.%zu",
                                      "a%zu",
                                      "a rather long name for an object that goes on and on %zu"};

/* Object i of a varied manifest: names short and long, ASCII and not;
 * ranks 0-3; digests sha256, xxh3, another algorithm or none; a logical
 * type, zstd, attributes and an unknown layout now and then. */
static void gen_object(gen *g, size_t i, struct zt_object *o)
{
    char name[128];
    snprintf(name, sizeof(name), g_names[i % 5], i);
    if (i % 5 == 0)
        snprintf(name, sizeof(name), "w%zu", i);
    o->name = zt__arena_strndup(&g->arena, name, strlen(name));
    o->name_len = strlen(name);
    o->format = i % 97 == 3 ? "vendor.layout/2" : "dense";
    o->ndim = i % 4;
    o->shape = zt__arena_alloc(&g->arena, 4 * sizeof(uint64_t));
    uint64_t elems = 1;
    for (size_t d = 0; d < o->ndim; d++)
        elems *= (o->shape[d] = 1 + (i + d) % 7);
    o->ncomp = 1;
    o->comps = zt__arena_alloc(&g->arena, sizeof(*o->comps));
    memset(o->comps, 0, sizeof(*o->comps));
    struct zt_component *c = o->comps;
    c->role = "data";
    c->dtype = i % 11 == 5 ? ZT_DTYPE_U8 : ZT_DTYPE_F32;
    c->type = i % 11 == 5 ? "bool" : NULL;
    c->length = elems * (c->dtype == ZT_DTYPE_U8 ? 1 : 4);
    if (i % 13 == 7) {
        c->encoding = ZT_ENC_ZSTD;
        c->uncompressed_length = c->length;
        c->length = 9 + i % 5;
    }
    static const char *const digests[] = {
        "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "xxh3:0123456789abcdef", "blake3:00ff", NULL};
    c->digest = digests[i % 4];
    c->offset = g->end;
    g->end += (c->length + 4095) / 4096 * 4096 + (c->length == 0 ? 4096 : 0);
    if (i % 17 == 1) {
        const zt_value *v;
        assert_int_equal(zt__json_to_value("{\"k\":[1,-2,2.5,\"x\",null,true,{\"z\":\"é\"}]}",
                                           &g->arena, &v, NULL),
                         ZT_OK);
        o->attributes = v;
    }
}

/* The manifest of n generated objects, and where it sits (file size, offset). */
static zt__buf gen_manifest(size_t n, uint64_t *file_size, uint64_t *moff)
{
    gen g = {.n = n, .end = 4096};
    zt__arena_init(&g.arena);
    g.objs = calloc(n ? n : 1, sizeof(*g.objs));
    g.ptrs = calloc(n ? n : 1, sizeof(*g.ptrs));
    for (size_t i = 0; i < n; i++) {
        gen_object(&g, i, &g.objs[i]);
        g.ptrs[i] = &g.objs[i];
    }
    const zt_value *attrs;
    assert_int_equal(zt__json_to_value("{\"license\":\"MIT\",\"n\":[1,2]}", &g.arena, &attrs, NULL),
                     ZT_OK);
    zt__buf b = {0};
    zt__v2_encode_manifest(&b, g.ptrs, n, attrs);
    assert_false(b.oom);
    *moff = g.end;
    *file_size = g.end + b.len + 40;
    free(g.objs);
    free(g.ptrs);
    zt__arena_free(&g.arena);
    return b;
}

static void test_generated_many(void **state)
{
    (void)state;
    static const size_t counts[] = {0, 1, 5, 100, 20000};
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        uint64_t fs, moff;
        zt__buf b = gen_manifest(counts[k], &fs, &moff);
        size_t nobj = 0;
        assert_true(fast_accepts(b.p, b.len, moff, &nobj));
        assert_int_equal(nobj, counts[k]);
        char what[64];
        snprintf(what, sizeof(what), "%zu generated objects", counts[k]);
        same(manifest_outcome(b.p, b.len, fs, moff, 0), manifest_outcome(b.p, b.len, fs, moff, 1),
             what);
        /* the same, validated against a file too short for its last blobs */
        same(manifest_outcome(b.p, b.len, moff / 2 + 40, moff, 0),
             manifest_outcome(b.p, b.len, moff / 2 + 40, moff, 1), what);
        zt__buf_free(&b);
    }
}

/* Every byte of a small manifest changed four ways, and every truncation:
 * whatever either path makes of it, the other makes the same. */
static void test_mutations(void **state)
{
    (void)state;
    uint64_t fs, moff;
    zt__buf b = gen_manifest(18, &fs, &moff);
    uint8_t *p = malloc(b.len);
    size_t ok = 0, total = 0;
    for (size_t i = 0; i < b.len; i++) {
        static const int how[] = {0x00, 0xff, 1, 0x20};
        for (size_t h = 0; h < 4; h++) {
            memcpy(p, b.p, b.len);
            p[i] = h < 2 ? (uint8_t)how[h] : h == 2 ? (uint8_t)(p[i] + 1) : (uint8_t)(p[i] ^ 0x20);
            char *fast = manifest_outcome(p, b.len, fs, moff, 0);
            ok += strncmp(fast, "ERR", 3) != 0;
            total++;
            char what[64];
            snprintf(what, sizeof(what), "byte %zu changed (%zu)", i, h);
            same(fast, manifest_outcome(p, b.len, fs, moff, 1), what);
        }
        char what[64];
        snprintf(what, sizeof(what), "cut at %zu", i);
        same(manifest_outcome(b.p, i, fs, moff, 0), manifest_outcome(b.p, i, fs, moff, 1), what);
    }
    print_message("%zu changed manifests, %zu of them valid\n", total, ok);
    assert_true(ok > 0 && ok < total);
    free(p);
    zt__buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_and_seeds),
        cmocka_unit_test(test_generated_many),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
