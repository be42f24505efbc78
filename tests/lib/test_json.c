/*
 * test_json.c: the manifest as JSON (lib/src/manifest_json.c). The mapping
 * of CBOR values without a JSON twin: byte strings -> {"$bytes": base64},
 * tags -> {"$tag", "$value"}, NaN/Infinity -> strings, integers beyond 2^53
 * -> decimal strings, simple values, non-text map keys; the shape of the
 * manifest/object JSON; and JSON text -> values for the writer's attributes.
 * Output is parsed back with jansson and checked field by field.
 */
#include "zt_test.h"

#include <jansson.h>
#include <math.h>

#include "internal.h"

/* ---- a file whose attributes hold every awkward value */

static void attrs(tb *m)
{
    tb_map(m, 31);
    /* byte strings: RFC 4648 section 10 vectors, and the two non-alnum digits */
    tb_text(m, "b0"), tb_bytes(m, "", 0);
    tb_text(m, "b1"), tb_bytes(m, "f", 1);
    tb_text(m, "b2"), tb_bytes(m, "fo", 2);
    tb_text(m, "b3"), tb_bytes(m, "foo", 3);
    tb_text(m, "b4"), tb_bytes(m, "foob", 4);
    tb_text(m, "b5"), tb_bytes(m, "fooba", 5);
    tb_text(m, "b6"), tb_bytes(m, "foobar", 6);
    tb_text(m, "bx"), tb_bytes(m, "\xfb\xff\xbf\x00", 4);
    /* tags */
    tb_text(m, "tag1"), tb_tag(m, 1), tb_uint(m, 1363896240);
    tb_text(m, "tagbig"), tb_tag(m, UINT64_MAX), tb_text(m, "x");
    tb_text(m, "tagnest"), tb_tag(m, 32), tb_tag(m, 33), tb_bytes(m, "\x01", 1);
    /* floats */
    tb_text(m, "nan"), tb_raw(m, "\xf9\x7e\x00", 3);
    tb_text(m, "inf"), tb_raw(m, "\xf9\x7c\x00", 3);
    tb_text(m, "ninf"), tb_f64(m, -INFINITY);
    tb_text(m, "half"), tb_raw(m, "\xf9\x3e\x00", 3);
    tb_text(m, "f32"), tb_f32(m, 0.1f);
    tb_text(m, "f64"), tb_f64(m, 0.1);
    tb_text(m, "negzero"), tb_f64(m, -0.0);
    /* integers around 2^53 and the extremes */
    tb_text(m, "i53"), tb_uint(m, 1ull << 53);
    tb_text(m, "i53p1"), tb_uint(m, (1ull << 53) + 1);
    tb_text(m, "umax"), tb_uint(m, UINT64_MAX);
    tb_text(m, "n53"), tb_neg(m, (1ull << 53) - 1); /* -2^53 */
    tb_text(m, "n53m1"), tb_neg(m, 1ull << 53);     /* -2^53 - 1 */
    tb_text(m, "nmin"), tb_neg(m, UINT64_MAX);      /* -2^64 */
    tb_text(m, "neg5"), tb_neg(m, 4);
    /* simple values */
    tb_text(m, "simple"), tb_raw(m, "\xf8\x63", 2);
    tb_text(m, "undef"), tb_byte(m, 0xf7);
    tb_text(m, "null"), tb_byte(m, 0xf6);
    tb_text(m, "yes"), tb_byte(m, 0xf5);
    /* text with a NUL inside */
    tb_text(m, "nul"), tb_textn(m, "a\0b", 3);
    /* a map with keys of every other type */
    tb_text(m, "keys");
    tb_map(m, 8);
    tb_uint(m, 1), tb_text(m, "a");
    tb_neg(m, 4), tb_text(m, "b");
    tb_bytes(m, "\x01\x02", 2), tb_text(m, "c");
    tb_array(m, 2), tb_uint(m, 1), tb_uint(m, 2), tb_text(m, "d");
    tb_byte(m, 0xf5), tb_text(m, "e");
    tb_raw(m, "\xf9\x3e\x00", 3), tb_text(m, "f");
    tb_byte(m, 0xf6), tb_text(m, "g");
    tb_text(m, "text"), tb_text(m, "h");
}

static uint8_t *g_file;
static zt_file *g_f;

static int setup(void **state)
{
    (void)state;
    tb m = {0};
    tb_map(&m, 3);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    tb_text(&m, "attributes");
    attrs(&m);
    tb_text(&m, "objects");
    tb_map(&m, 2);
    /* "w": an ordinary dense object with every component field */
    tb_text(&m, "w");
    tb_map(&m, 4);
    tb_text(&m, "shape");
    tb_array(&m, 2);
    tb_uint(&m, 4);
    tb_uint(&m, 4);
    tb_text(&m, "format");
    tb_text(&m, "dense");
    tb_text(&m, "attributes");
    tb_map(&m, 1);
    tb_text(&m, "bytes");
    tb_bytes(&m, "hi", 2);
    tb_text(&m, "components");
    tb_map(&m, 1);
    tb_text(&m, "data");
    tb_comp(&m, &(tcomp){"u8", 64, 12, "zstd", 16, "crc32c:0x0000000A", "f8_e5m2"});
    /* "big": an unknown format may have dimensions beyond 2^53 */
    tb_text(&m, "big");
    tb_map(&m, 3);
    tb_text(&m, "shape");
    tb_array(&m, 3);
    tb_uint(&m, 1ull << 60);
    tb_uint(&m, 1ull << 53);
    tb_uint(&m, (1ull << 53) + 1);
    tb_text(&m, "format");
    tb_text(&m, "ragged");
    tb_text(&m, "components");
    tb_map(&m, 0);
    uint8_t data[128] = {0};
    size_t n;
    g_file = zt_test_assemble(data, sizeof data, &m, 1, &n);
    tb_free(&m);
    zt_error err;
    if (zt_open_memory(g_file, n, NULL, &g_f, &err))
        fail_msg("open: %s", err.message);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    zt_close(g_f);
    free(g_file);
    return 0;
}

static json_t *manifest_json(unsigned flags)
{
    zt_error err;
    char *s = zt_file_manifest_json(g_f, flags, &err);
    if (!s)
        fail_msg("manifest json: %s", err.message);
    json_error_t je;
    json_t *j = json_loads(s, JSON_ALLOW_NUL, &je);
    if (!j)
        fail_msg("output is not JSON: %s: %s", je.text, s);
    zt_free(s);
    return j;
}

static json_t *attr(json_t *root, const char *k)
{
    json_t *v = json_object_get(json_object_get(root, "attributes"), k);
    if (!v)
        fail_msg("attribute %s missing", k);
    return v;
}

static void want_str(json_t *v, const char *s)
{
    if (!json_is_string(v) || strcmp(json_string_value(v), s))
        fail_msg("want \"%s\", got %s", s, json_dumps(v, JSON_ENCODE_ANY));
}

static void want_int(json_t *v, json_int_t i)
{
    if (!json_is_integer(v) || json_integer_value(v) != i)
        fail_msg("want %lld, got %s", (long long)i, json_dumps(v, JSON_ENCODE_ANY));
}

static void byte_strings_are_base64(void **state)
{
    (void)state;
    json_t *j = manifest_json(ZT_JSON_COMPACT);
    const char *want[][2] = {{"b0", ""},         {"b1", "Zg=="},     {"b2", "Zm8="},
                             {"b3", "Zm9v"},     {"b4", "Zm9vYg=="}, {"b5", "Zm9vYmE="},
                             {"b6", "Zm9vYmFy"}, {"bx", "+/+/AA=="}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        json_t *v = attr(j, want[i][0]);
        assert_true(json_is_object(v));
        assert_int_equal(json_object_size(v), 1);
        want_str(json_object_get(v, "$bytes"), want[i][1]);
    }
    /* object attributes too */
    json_t *w = json_object_get(json_object_get(j, "objects"), "w");
    want_str(json_object_get(json_object_get(json_object_get(w, "attributes"), "bytes"), "$bytes"),
             "aGk=");
    json_decref(j);
}

static void tags_are_objects(void **state)
{
    (void)state;
    json_t *j = manifest_json(ZT_JSON_COMPACT);
    json_t *t = attr(j, "tag1");
    assert_int_equal(json_object_size(t), 2);
    want_int(json_object_get(t, "$tag"), 1);
    want_int(json_object_get(t, "$value"), 1363896240);
    /* A tag number above 2^53 follows the integer rule: a decimal string,
     * not a truncated or rounded number. */
    t = attr(j, "tagbig");
    want_str(json_object_get(t, "$tag"), "18446744073709551615");
    want_str(json_object_get(t, "$value"), "x");
    t = attr(j, "tagnest");
    want_int(json_object_get(t, "$tag"), 32);
    json_t *in = json_object_get(t, "$value");
    want_int(json_object_get(in, "$tag"), 33);
    want_str(json_object_get(json_object_get(in, "$value"), "$bytes"), "AQ==");
    json_decref(j);
}

static void floats(void **state)
{
    (void)state;
    json_t *j = manifest_json(ZT_JSON_COMPACT);
    want_str(attr(j, "nan"), "NaN");
    want_str(attr(j, "inf"), "Infinity");
    want_str(attr(j, "ninf"), "-Infinity");
    assert_true(json_is_real(attr(j, "half")));
    assert_true(json_real_value(attr(j, "half")) == 1.5);
    /* a float32 is widened exactly, not re-rounded to the decimal 0.1 */
    assert_true(json_real_value(attr(j, "f32")) == (double)0.1f);
    assert_true(json_real_value(attr(j, "f64")) == 0.1);
    assert_true(json_is_real(attr(j, "negzero")));
    assert_true(json_real_value(attr(j, "negzero")) == 0.0);
    assert_true(signbit(json_real_value(attr(j, "negzero"))));
    json_decref(j);
}

static void integers_beyond_2_53_are_strings(void **state)
{
    (void)state;
    json_t *j = manifest_json(ZT_JSON_COMPACT);
    want_int(attr(j, "i53"), (json_int_t)1 << 53);
    want_str(attr(j, "i53p1"), "9007199254740993");
    want_str(attr(j, "umax"), "18446744073709551615");
    want_int(attr(j, "n53"), -((json_int_t)1 << 53));
    want_str(attr(j, "n53m1"), "-9007199254740993");
    want_str(attr(j, "nmin"), "-18446744073709551616");
    want_int(attr(j, "neg5"), -5);
    /* The same rule for shapes. */
    json_t *shape = json_object_get(json_object_get(json_object_get(j, "objects"), "big"), "shape");
    assert_int_equal(json_array_size(shape), 3);
    want_str(json_array_get(shape, 0), "1152921504606846976");
    want_int(json_array_get(shape, 1), (json_int_t)1 << 53);
    want_str(json_array_get(shape, 2), "9007199254740993");
    json_decref(j);
}

static void simple_values_and_text(void **state)
{
    (void)state;
    json_t *j = manifest_json(ZT_JSON_COMPACT);
    want_int(json_object_get(attr(j, "simple"), "$simple"), 99);
    assert_true(json_is_null(attr(j, "undef")));
    assert_true(json_is_null(attr(j, "null")));
    assert_true(json_is_true(attr(j, "yes")));
    json_t *nul = attr(j, "nul");
    assert_int_equal(json_string_length(nul), 3);
    assert_memory_equal(json_string_value(nul), "a\0b", 3);
    json_decref(j);
}

static void non_text_keys(void **state)
{
    (void)state;
    json_t *j = manifest_json(ZT_JSON_COMPACT);
    json_t *k = attr(j, "keys");
    assert_int_equal(json_object_size(k), 8);
    const char *want[][2] = {{"1", "a"},     {"-5", "b"},   {"{\"$bytes\":\"AQI=\"}", "c"},
                             {"[1,2]", "d"}, {"true", "e"}, {"1.5", "f"},
                             {"null", "g"},  {"text", "h"}};
    for (size_t i = 0; i < 8; i++) {
        json_t *v = json_object_get(k, want[i][0]);
        if (!v)
            fail_msg("key %s missing in %s", want[i][0], json_dumps(k, 0));
        want_str(v, want[i][1]);
    }
    json_decref(j);
}

static void manifest_shape(void **state)
{
    (void)state;
    json_t *j = manifest_json(ZT_JSON_COMPACT);
    want_str(json_object_get(j, "version"), "1.2.0");
    json_t *objs = json_object_get(j, "objects");
    assert_int_equal(json_object_size(objs), 2);
    /* manifest order */
    void *it = json_object_iter(objs);
    assert_string_equal(json_object_iter_key(it), "w");
    assert_string_equal(json_object_iter_key(json_object_iter_next(objs, it)), "big");
    json_t *w = json_object_get(objs, "w");
    want_str(json_object_get(w, "format"), "dense");
    json_t *shape = json_object_get(w, "shape");
    want_int(json_array_get(shape, 0), 4);
    want_int(json_array_get(shape, 1), 4);
    json_t *d = json_object_get(json_object_get(w, "components"), "data");
    want_str(json_object_get(d, "dtype"), "u8");
    want_str(json_object_get(d, "type"), "f8_e5m2");
    want_int(json_object_get(d, "offset"), 64);
    want_int(json_object_get(d, "length"), 12);
    want_str(json_object_get(d, "encoding"), "zstd");
    want_int(json_object_get(d, "uncompressed_length"), 16);
    want_str(json_object_get(d, "digest"), "crc32c:0x0000000A");
    assert_null(json_object_get(w, "source_name"));
    json_t *big = json_object_get(objs, "big");
    assert_int_equal(json_object_size(json_object_get(big, "components")), 0);
    assert_null(json_object_get(big, "attributes"));
    json_decref(j);
}

static void compact_and_pretty(void **state)
{
    (void)state;
    zt_error err;
    char *c = zt_file_manifest_json(g_f, ZT_JSON_COMPACT, &err);
    char *p = zt_file_manifest_json(g_f, ZT_JSON_PRETTY, &err);
    assert_non_null(c);
    assert_non_null(p);
    assert_null(strchr(c, '\n'));
    assert_null(strstr(c, "\": "));
    assert_non_null(strstr(p, "\n  \"objects\": {"));
    json_t *jc = json_loads(c, JSON_ALLOW_NUL, NULL), *jp = json_loads(p, JSON_ALLOW_NUL, NULL);
    assert_true(json_equal(jc, jp));
    json_decref(jc);
    json_decref(jp);
    zt_free(c);
    zt_free(p);
}

static void one_object(void **state)
{
    (void)state;
    zt_error err;
    char *s = zt_object_json(zt_file_find_object(g_f, "w", 1), ZT_JSON_COMPACT, &err);
    assert_non_null(s);
    json_t *j = json_loads(s, 0, NULL);
    assert_non_null(j);
    zt_free(s);
    json_t *whole = manifest_json(ZT_JSON_COMPACT);
    /* the same mapping as inside the whole manifest */
    assert_true(json_equal(j, json_object_get(json_object_get(whole, "objects"), "w")));
    json_decref(whole);
    json_decref(j);
}

/* ---- JSON text -> values */

static zt__arena g_arena;

static const zt_value *from_json(const char *text, zt_status want)
{
    const zt_value *v = NULL;
    zt_error err;
    memset(&err, 0, sizeof err);
    zt_status st = zt__json_to_value(text, &g_arena, &v, &err);
    if (st != want)
        fail_msg("%s: got %s (%s), want %s", text, zt_status_name(st), err.message,
                 zt_status_name(want));
    return st ? NULL : v;
}

static void json_to_values(void **state)
{
    (void)state;
    zt__arena_init(&g_arena);
    const zt_value *v = from_json("{\"a\":1,\"b\":-2,\"c\":1.5,\"d\":\"x\",\"e\":true,"
                                  "\"f\":false,\"g\":null,\"h\":[1,[2]],\"i\":{\"j\":{}},"
                                  "\"u\":\"\\u00fc\\ud83d\\ude00\",\"big\":9223372036854775807,"
                                  "\"small\":-9223372036854775808,\"zero\":0,\"nz\":-0.0}",
                                  ZT_OK);
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_MAP);
    assert_int_equal(zt_value_count(v), 14);
    assert_int_equal(zt_value_get_kind(zt_value_get(v, "a")), ZT_VAL_UINT);
    assert_int_equal(zt_value_uint(zt_value_get(v, "a")), 1);
    assert_int_equal(zt_value_get_kind(zt_value_get(v, "b")), ZT_VAL_NEGINT);
    assert_int_equal(zt_value_uint(zt_value_get(v, "b")), 1);
    assert_int_equal(zt_value_get_kind(zt_value_get(v, "c")), ZT_VAL_FLOAT);
    assert_true(zt_value_float(zt_value_get(v, "c")) == 1.5);
    assert_string_equal(zt_value_data(zt_value_get(v, "d"), NULL), "x");
    assert_int_equal(zt_value_get_kind(zt_value_get(v, "e")), ZT_VAL_TRUE);
    assert_int_equal(zt_value_get_kind(zt_value_get(v, "f")), ZT_VAL_FALSE);
    assert_int_equal(zt_value_get_kind(zt_value_get(v, "g")), ZT_VAL_NULL);
    const zt_value *h = zt_value_get(v, "h");
    assert_int_equal(zt_value_count(h), 2);
    assert_int_equal(zt_value_uint(zt_value_item(zt_value_item(h, 1), 0)), 2);
    const zt_value *i = zt_value_get(v, "i");
    assert_int_equal(zt_value_get_kind(zt_value_get(i, "j")), ZT_VAL_MAP);
    assert_int_equal(zt_value_count(zt_value_get(i, "j")), 0);
    size_t n;
    const char *u = zt_value_data(zt_value_get(v, "u"), &n);
    assert_int_equal(n, 6);
    assert_memory_equal(u, "\xc3\xbc\xf0\x9f\x98\x80", 6);
    assert_true(zt_value_uint(zt_value_get(v, "big")) == 9223372036854775807ull);
    assert_int_equal(zt_value_get_kind(zt_value_get(v, "small")), ZT_VAL_NEGINT);
    assert_true(zt_value_uint(zt_value_get(v, "small")) == 9223372036854775807ull);
    assert_int_equal(zt_value_get_kind(zt_value_get(v, "zero")), ZT_VAL_UINT);
    assert_int_equal(zt_value_get_kind(zt_value_get(v, "nz")), ZT_VAL_FLOAT);
    /* Any JSON value is accepted here; the writer insists on objects. */
    v = from_json("[1, \"a\"]", ZT_OK);
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_ARRAY);
    v = from_json("\"s\"", ZT_OK);
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_TEXT);
    zt__arena_free(&g_arena);
}

static void json_errors(void **state)
{
    (void)state;
    zt__arena_init(&g_arena);
    zt_error err;
    const zt_value *v;
    ASSERT_ST(zt__json_to_value("{\"a\": ", &g_arena, &v, &err), ZT_E_JSON);
    assert_true(err.has_offset);
    ASSERT_ST(zt__json_to_value("", &g_arena, &v, &err), ZT_E_JSON);
    ASSERT_ST(zt__json_to_value("{\"a\":1} x", &g_arena, &v, &err), ZT_E_JSON);
    ASSERT_ST(zt__json_to_value("{'a':1}", &g_arena, &v, &err), ZT_E_JSON);
    /* duplicate keys are refused rather than silently collapsed */
    ASSERT_ST(zt__json_to_value("{\"a\":1,\"a\":2}", &g_arena, &v, &err), ZT_E_JSON);
    ASSERT_ST(zt__json_to_value("{\"x\":{\"a\":1,\"a\":1}}", &g_arena, &v, &err), ZT_E_JSON);
    zt__arena_free(&g_arena);
}

static char *nested(int levels)
{
    char *s = malloc((size_t)levels * 2 + 1);
    for (int i = 0; i < levels; i++) {
        s[i] = '[';
        s[2 * levels - 1 - i] = ']';
    }
    s[2 * levels] = 0;
    return s;
}

static void json_depth_limit(void **state)
{
    (void)state;
    zt__arena_init(&g_arena);
    zt_error err;
    const zt_value *v;
    /* Attributes sit three maps deep in the manifest, and the reader allows
     * 64 levels of CBOR nesting: 61 levels of JSON are the most a readable
     * file can hold. */
    char *s = nested(61);
    ASSERT_OK(zt__json_to_value(s, &g_arena, &v, &err), &err);
    free(s);
    s = nested(62);
    ASSERT_ST(zt__json_to_value(s, &g_arena, &v, &err), ZT_E_DEPTH);
    free(s);
    s = nested(2000);
    ASSERT_ST(zt__json_to_value(s, &g_arena, &v, &err), ZT_E_DEPTH);
    free(s);
    /* beyond jansson's own limit it is jansson that refuses */
    s = nested(5000);
    assert_int_not_equal(zt__json_to_value(s, &g_arena, &v, &err), ZT_OK);
    free(s);
    zt__arena_free(&g_arena);
}

/* Attributes written from JSON come back as the same JSON. */
static void writer_attributes_round_trip(void **state)
{
    (void)state;
    char *dir = zt_test_mkdtemp("json");
    char path[4200];
    snprintf(path, sizeof path, "%s/a.zt", dir);
    const char *file_attrs = "{\"framework\":\"PyTorch\",\"license\":\"Apache-2.0\","
                             "\"epochs\":3,\"lr\":0.001,\"neg\":-7,\"ok\":true,\"none\":null,"
                             "\"list\":[1,2.5,\"x\",[],{}],\"nested\":{\"a\":{\"b\":\"\\u00e9\"}}}";
    const char *obj_attrs = "{\"bits\":4,\"group_size\":128,\"packing\":\"8_per_i32\"}";
    zt_writer *w = NULL;
    zt_error err;
    zt_writer_options o;
    zt_writer_options_init(&o);
    o.fsync = 0;
    ASSERT_OK(zt_writer_open(path, &o, &w, &err), &err);
    ASSERT_OK(zt_writer_set_attributes(w, file_attrs, &err), &err);
    zt_component_spec spec = {.dtype = ZT_DTYPE_F32};
    size_t id;
    ASSERT_OK(zt_writer_begin(w, &spec, &err), &err);
    float x[4] = {1, 2, 3, 4};
    ASSERT_OK(zt_writer_write(w, x, sizeof x, &err), &err);
    ASSERT_OK(zt_writer_end(w, &id, &err), &err);
    const char *roles[1] = {"data"};
    uint64_t shape[1] = {4};
    ASSERT_OK(zt_writer_add_object(w, "t", "dense", 1, shape, obj_attrs, 1, roles, &id, &err),
              &err);
    /* Non-object attributes are refused. */
    ASSERT_ST(zt_writer_set_attributes(w, "[1]", &err), ZT_E_ARG);
    ASSERT_ST(zt_writer_add_object(w, "u", "dense", 1, shape, "3", 1, roles, &id, &err), ZT_E_ARG);
    ASSERT_ST(zt_writer_add_object(w, "u", "dense", 1, shape, "{", 1, roles, &id, &err), ZT_E_JSON);
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);

    zt_file *f;
    ASSERT_OK(zt_open(path, NULL, &f, &err), &err);
    char *s = zt_file_manifest_json(f, 0, &err);
    json_t *j = json_loads(s, 0, NULL);
    json_t *want = json_loads(file_attrs, 0, NULL);
    assert_true(json_equal(json_object_get(j, "attributes"), want));
    json_decref(want);
    want = json_loads(obj_attrs, 0, NULL);
    json_t *t = json_object_get(json_object_get(j, "objects"), "t");
    assert_true(json_equal(json_object_get(t, "attributes"), want));
    json_decref(want);
    json_decref(j);
    zt_free(s);
    zt_close(f);
    zt_test_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(byte_strings_are_base64, setup, teardown),
        cmocka_unit_test_setup_teardown(tags_are_objects, setup, teardown),
        cmocka_unit_test_setup_teardown(floats, setup, teardown),
        cmocka_unit_test_setup_teardown(integers_beyond_2_53_are_strings, setup, teardown),
        cmocka_unit_test_setup_teardown(simple_values_and_text, setup, teardown),
        cmocka_unit_test_setup_teardown(non_text_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(manifest_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(compact_and_pretty, setup, teardown),
        cmocka_unit_test_setup_teardown(one_object, setup, teardown),
        cmocka_unit_test(json_to_values),
        cmocka_unit_test(json_errors),
        cmocka_unit_test(json_depth_limit),
        cmocka_unit_test(writer_attributes_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
