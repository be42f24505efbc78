/*
 * test_st_view.c: safetensors views (zt_st_view) and the index file
 * (zt_st_index_json). Files are assembled byte by byte (zt_test.h), so the
 * objects can be what the writer would refuse to make. Checks: the header is
 * what jansson writes for its own parse (compact JSON), padded with spaces to
 * a multiple of 8 behind its little-endian length; tensors follow the stored
 * bytes' order, contiguous, each a raw span or a decoded stream; every
 * refusal names its object; the corpus files (1.2 and v2) give views with the
 * same invariants or refusals; the index is what Python's json.dumps(indent=2,
 * sort_keys=True) writes; out of memory at every allocation fails cleanly.
 */
#include "zt_test.h"

#include <jansson.h>
#include <zstd.h>

/* ---- files */

typedef struct tobj {
    const char *name;
    size_t name_len; /* 0: strlen(name) */
    const char *format;
    size_t ndim;
    uint64_t shape[4];
    const char *attrs; /* "qg": Ollama source_tensors/source_shapes, "qg-bad-shape", NULL */
    size_t ncomp;
    const char *roles[3];
    tcomp comps[3];
} tobj;

static void tb_qg_attrs(tb *b, const char *kind)
{
    /* packed_weight u32 [2,2] -> "g", scales f16 [2,1] -> "g.scale", zeros f16 [2,1] -> "g.bias" */
    const char *roles[3] = {"packed_weight", "scales", "zeros"};
    const char *names[3] = {"g", "g.scale", "g.bias"};
    uint64_t shapes[3][2] = {{2, 2}, {2, 1}, {2, 1}};
    if (!strcmp(kind, "qg-bad-shape"))
        shapes[1][1] = 3;
    if (!strcmp(kind, "qg-dup"))
        names[2] = "w";
    tb_map(b, 2);
    tb_text(b, "source_tensors");
    tb_map(b, 3);
    for (int i = 0; i < 3; i++) {
        tb_text(b, roles[i]);
        tb_text(b, names[i]);
    }
    tb_text(b, "source_shapes");
    tb_map(b, 3);
    for (int i = 0; i < 3; i++) {
        tb_text(b, roles[i]);
        tb_array(b, 2);
        tb_uint(b, shapes[i][0]);
        tb_uint(b, shapes[i][1]);
    }
}

static void tb_obj(tb *b, const tobj *o)
{
    tb_textn(b, o->name, o->name_len ? o->name_len : strlen(o->name));
    tb_map(b, 3 + !!o->attrs);
    tb_text(b, "shape");
    tb_array(b, o->ndim);
    for (size_t i = 0; i < o->ndim; i++)
        tb_uint(b, o->shape[i]);
    tb_text(b, "format");
    tb_text(b, o->format);
    if (o->attrs) {
        tb_text(b, "attributes");
        tb_qg_attrs(b, o->attrs);
    }
    tb_text(b, "components");
    tb_map(b, o->ncomp);
    for (size_t i = 0; i < o->ncomp; i++) {
        tb_text(b, o->roles[i]);
        tb_comp(b, &o->comps[i]);
    }
}

/* A 1.2 file of the objects, with attributes {"k": "v", "n": 3} when attrs,
 * over data[0..data_len). */
static zt_file *open_objs(const tobj *objs, size_t n, int attrs, const uint8_t *data,
                          size_t data_len, uint8_t **keep)
{
    tb m = {0};
    tb_map(&m, 2 + !!attrs);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    if (attrs) {
        tb_text(&m, "attributes");
        tb_map(&m, 2);
        tb_text(&m, "k");
        tb_text(&m, "v");
        tb_text(&m, "n");
        tb_uint(&m, 3);
    }
    tb_text(&m, "objects");
    tb_map(&m, n);
    for (size_t i = 0; i < n; i++)
        tb_obj(&m, &objs[i]);
    size_t len;
    *keep = zt_test_assemble(data, data_len, &m, 1, &len);
    tb_free(&m);
    zt_file *f;
    zt_error err;
    zt_status st = zt_open_memory(*keep, len, NULL, &f, &err);
    if (st)
        fail_msg("open: %s", err.message);
    return f;
}

#define RAW(dt, off, len)                                                                          \
    {                                                                                              \
        dt, off, len, NULL, UINT64_MAX, NULL, NULL                                                 \
    }
#define NAME2 "a\"\n\x1f\xc3\xa9\\/"

static uint8_t g_data[512];
static size_t g_zlen;

/* b f32 [2,3] @64, NAME2 u8 [5] @128, e f32 [0] @192, z u8 [100] zstd @256. */
static zt_file *layout_file(uint8_t **keep)
{
    uint8_t plain[100];
    zt_test_fill(g_data, sizeof(g_data), 7);
    memset(plain, 'z', sizeof(plain));
    g_zlen = ZSTD_compress(g_data + 256, 200, plain, sizeof(plain), 3);
    assert_false(ZSTD_isError(g_zlen));
    tobj objs[] = {
        {"z",
         0,
         "dense",
         1,
         {100},
         NULL,
         1,
         {"data"},
         {{"u8", 256, g_zlen, "zstd", 100, NULL, NULL}}},
        {"e", 0, "dense", 1, {0}, NULL, 1, {"data"}, {RAW("f32", 192, 0)}},
        {NAME2, 0, "dense", 1, {5}, NULL, 1, {"data"}, {RAW("u8", 128, 5)}},
        {"b", 0, "dense", 2, {2, 3}, NULL, 1, {"data"}, {RAW("f32", 64, 24)}},
    };
    return open_objs(objs, 4, 1, g_data, 256 + g_zlen, keep);
}

static zt_st_view *view_of(const zt_file *f)
{
    zt_error err;
    zt_st_view *v = zt_st_view_new(f, &err);
    if (!v)
        fail_msg("view: %s", err.message);
    return v;
}

/* The header: length prefix, padding, and JSON exactly as jansson writes it. */
static json_t *check_header(const zt_st_view *v, size_t *hlen)
{
    const uint8_t *h = zt_st_view_header(v, hlen);
    assert_int_equal(*hlen % 8, 0);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | h[i];
    assert_int_equal(n, *hlen - 8);
    size_t json = n;
    while (json && h[8 + json - 1] == ' ')
        json--;
    assert_true(n - json < 8);
    json_error_t je;
    json_t *j = json_loadb((const char *)h + 8, json, 0, &je);
    if (!j)
        fail_msg("header JSON: %s", je.text);
    char *again = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_int_equal(strlen(again), json);
    assert_memory_equal(again, h + 8, json);
    free(again);
    return j;
}

static void test_layout(void **state)
{
    (void)state;
    uint8_t *keep;
    zt_file *f = layout_file(&keep);
    zt_st_view *v = view_of(f);
    size_t hlen;
    json_t *j = check_header(v, &hlen);
    const char *want[] = {"__metadata__", "b", NAME2, "e", "z"};
    const char *k;
    json_t *val;
    size_t i = 0;
    json_object_foreach(j, k, val) assert_string_equal(k, want[i++]);
    assert_int_equal(i, 5);
    json_t *md = json_object_get(j, "__metadata__");
    assert_string_equal(json_string_value(json_object_get(md, "k")), "v");
    assert_string_equal(json_string_value(json_object_get(md, "n")), "3");
    assert_int_equal(zt_st_view_note_count(v), 1);
    assert_non_null(strstr(zt_st_view_note(v, 0), "attribute \"n\" is not text"));
    assert_null(zt_st_view_note(v, 1));

    uint64_t lens[] = {24, 5, 0, 100}, srcs[] = {64, 128, 192, 256};
    const char *dts[] = {"F32", "U8", "F32", "U8"};
    uint64_t at = hlen;
    assert_int_equal(zt_st_view_count(v), 4);
    for (i = 0; i < 4; i++) {
        zt_st_tensor t;
        assert_int_equal(zt_st_view_tensor(v, i, &t), ZT_OK);
        assert_string_equal(t.name, want[i + 1]);
        assert_string_equal(t.dtype, dts[i]);
        assert_int_equal(t.offset, at);
        assert_int_equal(t.length, lens[i]);
        assert_int_equal(t.decode, i == 3);
        assert_int_equal(t.shard, -1);
        assert_int_equal(t.source_offset, srcs[i]);
        assert_ptr_equal(t.component, zt_object_find_component(t.object, "data"));
        json_t *off = json_object_get(json_object_get(j, t.name), "data_offsets");
        assert_int_equal(json_integer_value(json_array_get(off, 0)), at - hlen);
        assert_int_equal(json_integer_value(json_array_get(off, 1)), at - hlen + lens[i]);
        at += lens[i];
    }
    json_t *shape = json_object_get(json_object_get(j, "b"), "shape");
    assert_int_equal(json_array_size(shape), 2);
    assert_int_equal(json_integer_value(json_array_get(shape, 1)), 3);
    assert_int_equal(zt_st_view_size(v), at);
    zt_st_tensor t;
    assert_int_equal(zt_st_view_tensor(v, 4, &t), ZT_E_ARG);

    /* a read starting at pos begins with this tensor (e is empty: skipped) */
    uint64_t pos[] = {0, hlen - 1, hlen, hlen + 23, hlen + 24, hlen + 29, at - 1, at, at + 5};
    size_t idx[] = {0, 0, 0, 0, 1, 3, 3, 4, 4};
    for (i = 0; i < sizeof(pos) / sizeof(*pos); i++)
        assert_int_equal(zt_st_view_locate(v, pos[i]), idx[i]);
    json_decref(j);
    zt_st_view_free(v);
    zt_close(f);
    free(keep);
    zt_st_view_free(NULL);
}

/* An Ollama triple comes back under its source names and shapes. */
static void test_triple(void **state)
{
    (void)state;
    uint8_t data[320] = {0};
    tobj objs[] = {
        {"g",
         0,
         "quantized_group",
         2,
         {2, 16},
         "qg",
         3,
         {"packed_weight", "scales", "zeros"},
         {RAW("u32", 64, 16), RAW("f16", 192, 4), RAW("f16", 128, 4)}},
        {"w", 0, "dense", 1, {2}, NULL, 1, {"data"}, {RAW("u8", 256, 2)}},
    };
    uint8_t *keep;
    zt_file *f = open_objs(objs, 2, 0, data, sizeof(data), &keep);
    zt_st_view *v = view_of(f);
    size_t hlen;
    json_t *j = check_header(v, &hlen);
    assert_null(json_object_get(j, "__metadata__"));
    const char *order[] = {"g", "g.bias", "g.scale", "w"};
    for (size_t i = 0; i < 4; i++) {
        zt_st_tensor t;
        zt_st_view_tensor(v, i, &t);
        assert_string_equal(t.name, order[i]);
    }
    json_t *sh = json_object_get(json_object_get(j, "g.scale"), "shape");
    assert_int_equal(json_integer_value(json_array_get(sh, 0)), 2);
    assert_int_equal(json_integer_value(json_array_get(sh, 1)), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "g"), "dtype")),
                        "U32");
    json_decref(j);
    zt_st_view_free(v);
    zt_close(f);
    free(keep);
}

/* ---- refusals: NULL, a code, and the object named */

typedef struct refusal {
    tobj o;
    zt_status code;
    const char *object, *says;
} refusal;

static void test_refusals(void **state)
{
    (void)state;
    static const refusal cases[] = {
        {{"c",
          0,
          "dense",
          1,
          {2},
          NULL,
          1,
          {"data"},
          {{"f32", 64, 16, NULL, UINT64_MAX, NULL, "complex64"}}},
         ZT_E_UNSUPPORTED,
         "c",
         "complex64, which safetensors has no dtype for"},
        {{"r", 0, "ragged_v9", 1, {4}, NULL, 1, {"values"}, {RAW("u8", 64, 4)}},
         ZT_E_UNSUPPORTED,
         "r",
         "its format is \"ragged_v9\""},
        {{"__metadata__", 0, "dense", 1, {4}, NULL, 1, {"data"}, {RAW("u8", 64, 4)}},
         ZT_E_DUPLICATE,
         "__metadata__",
         "__metadata__"},
        {{"q",
          0,
          "quantized_group",
          2,
          {2, 16},
          NULL,
          3,
          {"packed_weight", "scales", "zeros"},
          {RAW("u32", 64, 16), RAW("f16", 128, 4), RAW("f16", 192, 4)}},
         ZT_E_UNSUPPORTED,
         "q",
         "source_tensors and source_shapes"},
        {{"q",
          0,
          "quantized_group",
          2,
          {2, 16},
          "qg-bad-shape",
          3,
          {"packed_weight", "scales", "zeros"},
          {RAW("u32", 64, 16), RAW("f16", 128, 4), RAW("f16", 192, 4)}},
         ZT_E_SIZE,
         "q",
         "do not match the shape"},
        {{"n\0ul", 4, "dense", 1, {4}, NULL, 1, {"data"}, {RAW("u8", 64, 4)}},
         ZT_E_NAME,
         "n",
         "NUL"},
    };
    uint8_t data[320] = {0};
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        uint8_t *keep;
        zt_file *f = open_objs(&cases[i].o, 1, 0, data, sizeof(data), &keep);
        zt_error err;
        zt_st_view *v = zt_st_view_new(f, &err);
        char want[300];
        snprintf(want, sizeof(want),
                 "object \"%s\" cannot be written as safetensors: ", cases[i].object);
        if (v || err.code != cases[i].code || strcmp(err.object, cases[i].object) ||
            !strstr(err.message, want) || !strstr(err.message, cases[i].says))
            fail_msg("case %zu: got %s", i, v ? "a view" : err.message);
        zt_close(f);
        free(keep);
    }
    /* two objects giving one tensor name: the second (manifest order) is named */
    tobj two[] = {
        {"w", 0, "dense", 1, {4}, NULL, 1, {"data"}, {RAW("u8", 256, 4)}},
        {"g",
         0,
         "quantized_group",
         2,
         {2, 16},
         "qg-dup",
         3,
         {"packed_weight", "scales", "zeros"},
         {RAW("u32", 64, 16), RAW("f16", 128, 4), RAW("f16", 192, 4)}},
    };
    uint8_t *keep;
    zt_file *f = open_objs(two, 2, 0, data, sizeof(data), &keep);
    zt_error err;
    assert_null(zt_st_view_new(f, &err));
    assert_int_equal(err.code, ZT_E_DUPLICATE);
    assert_string_equal(err.object, "g");
    assert_string_equal(err.component, "zeros");
    assert_non_null(strstr(err.message, "tensor name \"w\" is written by another object too"));
    zt_close(f);
    free(keep);
}

/* ---- the corpus: every accepted file gives a view or a named refusal */

static int check_corpus_file(const char *path, int *decoded)
{
    zt_file *f;
    zt_error err;
    if (zt_open(path, NULL, &f, &err))
        return 0;
    zt_st_view *v = zt_st_view_new(f, &err);
    if (!v) {
        if (!err.object[0] || !strstr(err.message, "cannot be written as safetensors"))
            fail_msg("%s: refused without naming an object: %s", path, err.message);
        zt_close(f);
        return 0;
    }
    size_t hlen;
    json_decref(check_header(v, &hlen));
    uint64_t at = hlen;
    for (size_t i = 0; i < zt_st_view_count(v); i++) {
        zt_st_tensor t;
        assert_int_equal(zt_st_view_tensor(v, i, &t), ZT_OK);
        assert_int_equal(t.offset, at);
        assert_int_equal(t.length, zt_component_decoded_length(t.component));
        assert_int_equal(t.decode, zt_component_encoding(t.component) == ZT_ENC_ZSTD);
        assert_int_equal(t.shard, zt_component_shard(t.component));
        *decoded += t.decode;
        at += t.length;
    }
    assert_int_equal(zt_st_view_size(v), at);
    zt_st_view_free(v);
    zt_close(f);
    return 1;
}

static void corpus_dir(const char *env, int min_views)
{
    const char *base = getenv(env);
    if (!base)
        fail_msg("%s is not set", env);
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/accept", base);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    int views = 0, decoded = 0;
    for (int guard = 0; (de = readdir(d)) && guard < 100000; guard++) {
        size_t n = strlen(de->d_name);
        if (n < 3 || strcmp(de->d_name + n - 3, ".zt"))
            continue;
        char path[8192];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        views += check_corpus_file(path, &decoded);
    }
    closedir(d);
    assert_true(views >= min_views);
    assert_true(decoded > 0);
}

static void test_corpus(void **state)
{
    (void)state;
    corpus_dir("ZT_CORPUS_DIR", 40);
    corpus_dir("ZT_CORPUS_V2_DIR", 30);
    /* a zstd file of the corpus marks its tensor for decoding */
    char path[4096];
    snprintf(path, sizeof(path), "%s/accept/zstd_basic.zt", getenv("ZT_CORPUS_DIR"));
    zt_file *f;
    zt_error err;
    assert_int_equal(zt_open(path, NULL, &f, &err), ZT_OK);
    zt_st_view *v = view_of(f);
    assert_true(zt_st_view_count(v) > 0);
    for (size_t i = 0; i < zt_st_view_count(v); i++) {
        zt_st_tensor t;
        zt_st_view_tensor(v, i, &t);
        assert_int_equal(t.decode, 1);
    }
    zt_st_view_free(v);
    zt_close(f);
}

/* ---- the index file */

/* From Python: json.dumps({"metadata": {"total_size": 137}, "weight_map": {...}},
 * indent=2, sort_keys=True) + "\n", the names as below. */
static const char k_index[] =
    "{\n"
    "  \"metadata\": {\n"
    "    \"total_size\": 137\n"
    "  },\n"
    "  \"weight_map\": {\n"
    "    \"a\\\"\\n\\u001f\\u00e9\\\\/\": \"model-00001-of-00002.safetensors\",\n"
    "    \"b\": \"model-00001-of-00002.safetensors\",\n"
    "    \"e\": \"model-00001-of-00002.safetensors\",\n"
    "    \"w\": \"m\\u00e9-\\ud83d\\ude00.safetensors\",\n"
    "    \"z\": \"model-00001-of-00002.safetensors\"\n"
    "  }\n"
    "}\n";

static void test_index(void **state)
{
    (void)state;
    uint8_t *k1, *k2, data[128] = {0};
    zt_file *f1 = layout_file(&k1);
    tobj w = {"w", 0, "dense", 1, {8}, NULL, 1, {"data"}, {RAW("u8", 64, 8)}};
    zt_file *f2 = open_objs(&w, 1, 0, data, sizeof(data), &k2);
    const zt_st_view *views[2] = {view_of(f1), view_of(f2)};
    const char *names[2] = {"model-00001-of-00002.safetensors",
                            "m\xc3\xa9-\xf0\x9f\x98\x80.safetensors"};
    zt_error err;
    char *s = zt_st_index_json(names, views, 2, &err);
    assert_non_null(s);
    assert_string_equal(s, k_index);
    zt_free(s);

    const zt_st_view *twice[2] = {views[0], views[0]};
    assert_null(zt_st_index_json(names, twice, 2, &err));
    assert_int_equal(err.code, ZT_E_DUPLICATE);
    assert_non_null(strstr(err.message, "is in two views"));
    assert_null(zt_st_index_json(names, views, 0, &err));
    assert_int_equal(err.code, ZT_E_ARG);
    for (int i = 0; i < 2; i++)
        zt_st_view_free((zt_st_view *)views[i]);
    zt_close(f1);
    zt_close(f2);
    free(k1);
    free(k2);
}

/* ---- out of memory at every allocation */

static size_t g_count, g_fail_at;
static long g_live;

static void *t_malloc(size_t n)
{
    if (++g_count == g_fail_at)
        return NULL;
    void *p = malloc(n);
    g_live += p != NULL;
    return p;
}

static void *t_realloc(void *p, size_t n)
{
    if (++g_count == g_fail_at)
        return NULL;
    void *q = realloc(p, n);
    g_live += q && !p;
    return q;
}

static void t_free(void *p)
{
    g_live -= p != NULL;
    free(p);
}

static void test_oom(void **state)
{
    (void)state;
    uint8_t *keep;
    zt_file *f = layout_file(&keep);
    zt_set_allocator(t_malloc, t_realloc, t_free);
    size_t n;
    for (n = 1; n < 10000; n++) {
        g_count = 0;
        g_fail_at = n;
        g_live = 0;
        zt_error err;
        zt_st_view *v = zt_st_view_new(f, &err);
        if (!v)
            assert_int_equal(err.code, ZT_E_NOMEM);
        const zt_st_view *vs[1] = {v};
        const char *names[1] = {"m.safetensors"};
        char *s = v ? zt_st_index_json(names, vs, 1, &err) : NULL;
        if (v && !s)
            assert_int_equal(err.code, ZT_E_NOMEM);
        zt_free(s);
        zt_st_view_free(v);
        assert_int_equal(g_live, 0);
        if (g_count < n)
            break;
    }
    zt_set_allocator(NULL, NULL, NULL);
    assert_true(n > 3 && n < 10000);
    zt_close(f);
    free(keep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),   cmocka_unit_test(test_triple),
        cmocka_unit_test(test_refusals), cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_index),    cmocka_unit_test(test_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
