/*
 * test_manifest.c: building the in-memory model from a decoded manifest
 * (lib/src/manifest.c) through zt_open_memory and zt__model_from_cbor: the
 * 1.2 schema ("objects", short dtypes on components), the 1.0 schema
 * ("tensors", long dtype on the tensor, u64 index roles), version
 * negotiation, duplicates, every schema error, null-as-absent, unknown
 * fields, and lookup by name.
 */
#include "zt_test.h"

#include "internal.h"

#define NOCOMP UINT64_MAX

/* Opens a manifest over a zero-filled data region of data_len bytes. */
static zt_status open_m(const tb *m, int footer, size_t data_len, zt_file **f, zt_error *err,
                        uint8_t **keep)
{
    uint8_t *data = calloc(1, data_len < 8 ? 8 : data_len);
    size_t n;
    *keep = zt_test_assemble(data, data_len < 8 ? 8 : data_len, m, footer, &n);
    free(data);
    memset(err, 0, sizeof *err);
    *f = NULL;
    return zt_open_memory(*keep, n, NULL, f, err);
}

/* Root {"version": v, "objects"/"tensors": {<n objects follow>}}. */
static void root(tb *m, const char *version, const char *objects_key, uint64_t nobj)
{
    tb_map(m, 2);
    tb_text(m, "version");
    tb_text(m, version);
    tb_text(m, objects_key);
    tb_map(m, nobj);
}

static void expect_ok(const tb *m, int footer, size_t data_len, zt_file **f, uint8_t **keep)
{
    zt_error err;
    zt_status st = open_m(m, footer, data_len, f, &err, keep);
    if (st)
        fail_msg("open failed: %s", err.message);
}

static void expect_fail(const tb *m, size_t data_len, zt_status code, const char *obj,
                        const char *comp)
{
    zt_file *f;
    zt_error err;
    uint8_t *keep;
    zt_status st = open_m(m, 1, data_len, &f, &err, &keep);
    if (st != code)
        fail_msg("got %s (%s), want %s", zt_status_name(st), st ? err.message : "",
                 zt_status_name(code));
    assert_null(f);
    assert_int_equal(err.code, code);
    if (obj)
        assert_string_equal(err.object, obj);
    if (comp)
        assert_string_equal(err.component, comp);
    free(keep);
}

static const char SHA_ABC[] =
    "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

static void v12_model(void **state)
{
    (void)state;
    tb m = {0};
    tb_map(&m, 4);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    tb_text(&m, "attributes");
    tb_map(&m, 1);
    tb_text(&m, "license");
    tb_text(&m, "MIT");
    tb_text(&m, "future_root_field"); /* unknown fields are ignored */
    tb_array(&m, 1);
    tb_uint(&m, 1);
    tb_text(&m, "objects");
    tb_map(&m, 2);
    /* "w": u8 / f8_e4m3fn, sha256, with an unknown component field */
    tb_text(&m, "w");
    tb_map(&m, 5);
    tb_text(&m, "shape");
    tb_array(&m, 2);
    tb_uint(&m, 4);
    tb_uint(&m, 16);
    tb_text(&m, "format");
    tb_text(&m, "dense");
    tb_text(&m, "attributes");
    tb_map(&m, 1);
    tb_text(&m, "scale");
    tb_f64(&m, 0.5);
    tb_text(&m, "future_object_field");
    tb_uint(&m, 7);
    tb_text(&m, "components");
    tb_map(&m, 1);
    tb_text(&m, "data");
    tb_map(&m, 7);
    tb_text(&m, "dtype");
    tb_text(&m, "u8");
    tb_text(&m, "type");
    tb_text(&m, "f8_e4m3fn");
    tb_text(&m, "offset");
    tb_uint(&m, 64);
    tb_text(&m, "length");
    tb_uint(&m, 64);
    tb_text(&m, "encoding");
    tb_text(&m, "raw");
    tb_text(&m, "digest");
    tb_text(&m, SHA_ABC);
    tb_text(&m, "future_component_field");
    tb_map(&m, 0);
    /* "b": zstd, crc32c */
    tb_text(&m, "b");
    uint64_t shape[1] = {100};
    tcomp c = {"f32", 128, 30, "zstd", 400, "crc32c:0xE3069283", NULL};
    tb_dense(&m, 1, shape, &c);

    zt_file *f;
    uint8_t *keep;
    expect_ok(&m, 1, 192, &f, &keep);
    assert_int_equal(zt_file_get_kind(f), ZT_KIND_ZT_1_2);
    assert_string_equal(zt_file_version(f), "1.2.0");
    assert_null(zt_file_warning(f));
    assert_string_equal(zt_value_data(zt_value_get(zt_file_attributes(f), "license"), NULL), "MIT");
    assert_int_equal(zt_file_object_count(f), 2);

    const zt_object *w = zt_file_object_at(f, 0);
    assert_string_equal(zt_object_name(w), "w");
    assert_int_equal(zt_object_name_len(w), 1);
    assert_string_equal(zt_object_format(w), "dense");
    assert_true(zt_object_has_shape(w));
    assert_int_equal(zt_object_ndim(w), 2);
    assert_int_equal(zt_object_shape(w)[0], 4);
    assert_int_equal(zt_object_shape(w)[1], 16);
    assert_string_equal(zt_object_source_name(w), "");
    assert_true(zt_value_float(zt_value_get(zt_object_attributes(w), "scale")) == 0.5);
    assert_int_equal(zt_object_component_count(w), 1);
    const zt_component *d = zt_object_find_component(w, "data");
    assert_ptr_equal(d, zt_object_component_at(w, 0));
    assert_null(zt_object_component_at(w, 1));
    assert_null(zt_object_find_component(w, "dat"));
    assert_string_equal(zt_component_role(d), "data");
    assert_int_equal(zt_component_dtype(d), ZT_DTYPE_U8);
    assert_string_equal(zt_component_type(d), "f8_e4m3fn");
    assert_int_equal(zt_component_offset(d), 64);
    assert_int_equal(zt_component_length(d), 64);
    assert_int_equal(zt_component_encoding(d), ZT_ENC_RAW);
    assert_int_equal(zt_component_decoded_length(d), 64);
    assert_int_equal(zt_component_digest_kind(d), ZT_DIGEST_SHA256);
    assert_string_equal(zt_component_digest(d), SHA_ABC);
    size_t dl;
    const uint8_t *db = zt_component_digest_bytes(d, &dl);
    assert_int_equal(dl, 32);
    assert_memory_equal(db, "\xba\x78\x16\xbf", 4);
    assert_ptr_equal(zt_component_stored(f, d), zt_file_bytes(f) + 64);

    const zt_object *b = zt_file_find_object(f, "b", 1);
    assert_ptr_equal(b, zt_file_object_at(f, 1));
    assert_null(zt_object_attributes(b));
    const zt_component *bc = zt_object_component_at(b, 0);
    assert_null(zt_component_type(bc));
    assert_int_equal(zt_component_encoding(bc), ZT_ENC_ZSTD);
    assert_int_equal(zt_component_length(bc), 30);
    assert_int_equal(zt_component_decoded_length(bc), 400);
    assert_int_equal(zt_component_digest_kind(bc), ZT_DIGEST_CRC32C);
    db = zt_component_digest_bytes(bc, &dl);
    assert_int_equal(dl, 4);
    assert_memory_equal(db, "\xE3\x06\x92\x83", 4);
    assert_null(zt_file_object_at(f, 2));
    zt_close(f);
    free(keep);
    tb_free(&m);
}

static void v10_schema(void **state)
{
    (void)state;
    /* The 1.0 spec's examples: long dtype on the tensor; sparse index roles
     * are uint64 whatever the tensor's dtype; a component dtype overrides. */
    tb m = {0};
    root(&m, "1.0", "tensors", 3);
    tb_text(&m, "embedding_table");
    tb_map(&m, 4);
    tb_text(&m, "dtype");
    tb_text(&m, "float32");
    tb_text(&m, "shape");
    tb_array(&m, 2);
    tb_uint(&m, 5);
    tb_uint(&m, 4);
    tb_text(&m, "format");
    tb_text(&m, "dense");
    tb_text(&m, "components");
    tb_map(&m, 1);
    tb_text(&m, "data");
    tb_comp(&m, &(tcomp){NULL, 64, 80, NULL, NOCOMP, NULL, NULL});

    tb_text(&m, "adjacency");
    tb_map(&m, 4);
    tb_text(&m, "dtype");
    tb_text(&m, "float16");
    tb_text(&m, "shape");
    tb_array(&m, 2);
    tb_uint(&m, 3);
    tb_uint(&m, 3);
    tb_text(&m, "format");
    tb_text(&m, "sparse_csr");
    tb_text(&m, "components");
    tb_map(&m, 3);
    tb_text(&m, "values");
    tb_comp(&m, &(tcomp){NULL, 192, 4, NULL, NOCOMP, NULL, NULL});
    tb_text(&m, "indices");
    tb_comp(&m, &(tcomp){NULL, 256, 16, NULL, NOCOMP, NULL, NULL});
    tb_text(&m, "indptr");
    tb_comp(&m, &(tcomp){NULL, 320, 32, NULL, NOCOMP, NULL, NULL});

    tb_text(&m, "mixed");
    tb_map(&m, 4);
    tb_text(&m, "dtype");
    tb_text(&m, "bfloat16");
    tb_text(&m, "shape");
    tb_array(&m, 1);
    tb_uint(&m, 4);
    tb_text(&m, "format");
    tb_text(&m, "dense");
    tb_text(&m, "components");
    tb_map(&m, 1);
    tb_text(&m, "data");
    tb_comp(&m, &(tcomp){"uint8", 384, 4, NULL, NOCOMP, NULL, NULL});

    zt_file *f;
    uint8_t *keep;
    expect_ok(&m, 0, 448, &f, &keep);
    assert_int_equal(zt_file_get_kind(f), ZT_KIND_ZT_1_0);
    assert_string_equal(zt_file_version(f), "1.0");
    assert_null(zt_file_warning(f));
    const zt_object *e = zt_file_find_object(f, "embedding_table", 15);
    assert_non_null(e);
    assert_int_equal(zt_component_dtype(zt_object_find_component(e, "data")), ZT_DTYPE_F32);
    const zt_object *a = zt_file_find_object(f, "adjacency", 9);
    assert_string_equal(zt_object_format(a), "sparse_csr");
    assert_int_equal(zt_component_dtype(zt_object_find_component(a, "values")), ZT_DTYPE_F16);
    assert_int_equal(zt_component_dtype(zt_object_find_component(a, "indices")), ZT_DTYPE_U64);
    assert_int_equal(zt_component_dtype(zt_object_find_component(a, "indptr")), ZT_DTYPE_U64);
    const zt_object *x = zt_file_find_object(f, "mixed", 5);
    assert_int_equal(zt_component_dtype(zt_object_component_at(x, 0)), ZT_DTYPE_U8);
    zt_close(f);
    free(keep);
    tb_free(&m);
}

static void v10_tensor_without_dtype(void **state)
{
    (void)state;
    tb m = {0};
    root(&m, "1.0", "tensors", 1);
    tb_text(&m, "t");
    uint64_t shape[1] = {4};
    tb_dense(&m, 1, shape, &(tcomp){NULL, 64, 4, NULL, NOCOMP, NULL, NULL});
    zt_file *f;
    zt_error err;
    uint8_t *keep;
    ASSERT_ST(open_m(&m, 0, 128, &f, &err, &keep), ZT_E_DTYPE);
    assert_string_equal(err.object, "t");
    assert_string_equal(err.component, "data");
    free(keep);
    tb_free(&m);
}

static void v12_component_needs_dtype(void **state)
{
    (void)state;
    tb m = {0};
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    uint64_t shape[1] = {4};
    tb_dense(&m, 1, shape, &(tcomp){NULL, 64, 4, NULL, NOCOMP, NULL, NULL});
    expect_fail(&m, 128, ZT_E_DTYPE, "t", "data");
    tb_free(&m);
}

static void objects_manifest_without_footer_is_truncated(void **state)
{
    (void)state;
    /* A 1.2 file that lost exactly its 8-byte footer magic ends in
     * "manifest, u64 size", which is the 1.0 layout. Its manifest is a 1.2
     * one ("objects"), so it must be reported as truncated, not read as 1.0:
     * the footer exists precisely to detect truncation. */
    tb m = {0};
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    uint64_t shape[1] = {4};
    tb_dense(&m, 1, shape, &(tcomp){"f32", 64, 16, NULL, NOCOMP, NULL, NULL});
    zt_file *f;
    zt_error err;
    uint8_t *keep;
    ASSERT_OK(open_m(&m, 1, 128, &f, &err, &keep), &err);
    zt_close(f);
    free(keep);
    ASSERT_ST(open_m(&m, 0, 128, &f, &err, &keep), ZT_E_TRUNCATED);
    assert_null(f);
    free(keep);
    tb_free(&m);
}

static zt_status open_version(const char *v, zt_file **f, zt_error *err)
{
    tb m = {0};
    root(&m, v, "objects", 0);
    uint8_t *keep;
    zt_status st = open_m(&m, 1, 8, f, err, &keep);
    if (st == ZT_OK) {
        assert_string_equal(zt_file_version(*f), v);
        zt_close(*f);
        *f = NULL;
    }
    free(keep);
    tb_free(&m);
    return st;
}

static void version_negotiation(void **state)
{
    (void)state;
    zt_file *f;
    zt_error err;
    /* Same major: proceed. Lower or equal minor: no warning. */
    const char *fine[] = {"1.2.0", "1.2", "1.0", "1.0.0", "1", "1.1.7", "1.2.99"};
    for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
        tb m = {0};
        root(&m, fine[i], "objects", 0);
        uint8_t *keep;
        if (open_m(&m, 1, 8, &f, &err, &keep))
            fail_msg("version %s: %s", fine[i], err.message);
        assert_null(zt_file_warning(f));
        zt_close(f);
        free(keep);
        tb_free(&m);
    }
    /* Higher minor: proceed with a warning that names the version. */
    const char *newer[] = {"1.3.0", "1.10", "1.99.1"};
    for (size_t i = 0; i < sizeof(newer) / sizeof(newer[0]); i++) {
        tb m = {0};
        root(&m, newer[i], "objects", 0);
        uint8_t *keep;
        if (open_m(&m, 1, 8, &f, &err, &keep))
            fail_msg("version %s: %s", newer[i], err.message);
        assert_non_null(zt_file_warning(f));
        assert_non_null(strstr(zt_file_warning(f), newer[i]));
        zt_close(f);
        free(keep);
        tb_free(&m);
    }
    /* Different major, or not a version: refuse. */
    const char *bad[] = {"2.0.0", "0.1", "0", "10.2", "", "abc", "v1.2", "1.x", "-1.2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        zt_status st = open_version(bad[i], &f, &err);
        if (st != ZT_E_VERSION)
            fail_msg("version \"%s\": got %s, want ZT_E_VERSION", bad[i], zt_status_name(st));
    }
    /* Missing or not text: a schema error. */
    tb m = {0};
    tb_map(&m, 1);
    tb_text(&m, "objects");
    tb_map(&m, 0);
    expect_fail(&m, 8, ZT_E_SCHEMA, NULL, NULL);
    tb_free(&m);
    tb_map(&m, 2);
    tb_text(&m, "version");
    tb_f64(&m, 1.2);
    tb_text(&m, "objects");
    tb_map(&m, 0);
    expect_fail(&m, 8, ZT_E_SCHEMA, NULL, NULL);
    tb_free(&m);
}

static void every_dtype_name(void **state)
{
    (void)state;
    static const char *shortn[] = {NULL,  "f64", "f32", "f16", "bf16", "i64", "i32",
                                   "i16", "i8",  "u64", "u32", "u16",  "u8",  "bool"};
    static const char *longn[] = {NULL,     "float64", "float32", "float16", "bfloat16",
                                  "int64",  "int32",   "int16",   "int8",    "uint64",
                                  "uint32", "uint16",  "uint8",   "bool"};
    static const unsigned width[] = {0, 8, 4, 2, 2, 8, 4, 2, 1, 8, 4, 2, 1, 1};
    for (int d = 1; d < ZT_DTYPE_COUNT; d++) {
        assert_string_equal(zt_dtype_name((zt_dtype)d), shortn[d]);
        assert_int_equal(zt_dtype_width((zt_dtype)d), width[d]);
        assert_int_equal(zt_dtype_parse(shortn[d], strlen(shortn[d])), d);
        assert_int_equal(zt_dtype_parse_long(longn[d], strlen(longn[d])), d);
        /* Through a manifest: every short name on a 1.2 component. */
        tb m = {0};
        root(&m, "1.2.0", "objects", 1);
        tb_text(&m, "t");
        uint64_t shape[1] = {3};
        tb_dense(&m, 1, shape, &(tcomp){shortn[d], 64, 3 * width[d], NULL, NOCOMP, NULL, NULL});
        zt_file *f;
        uint8_t *keep;
        expect_ok(&m, 1, 128, &f, &keep);
        assert_int_equal(zt_component_dtype(zt_object_component_at(zt_file_object_at(f, 0), 0)), d);
        zt_close(f);
        free(keep);
        tb_free(&m);
    }
    assert_null(zt_dtype_name(ZT_DTYPE_INVALID));
    assert_null(zt_dtype_name(ZT_DTYPE_COUNT));
    assert_int_equal(zt_dtype_width(ZT_DTYPE_COUNT), 0);
    assert_int_equal(zt_dtype_parse("F32", 3), ZT_DTYPE_INVALID);
    assert_int_equal(zt_dtype_parse("f3", 2), ZT_DTYPE_INVALID);
    assert_int_equal(zt_dtype_parse("f32x", 3), ZT_DTYPE_F32); /* length-delimited */
    assert_int_equal(zt_dtype_parse("f32", 4), ZT_DTYPE_INVALID);
    assert_int_equal(zt_dtype_parse("float32", 7), ZT_DTYPE_INVALID);
    assert_int_equal(zt_dtype_parse_long("f32", 3), ZT_DTYPE_INVALID);
    assert_int_equal(zt_dtype_parse(NULL, 0), ZT_DTYPE_INVALID);
}

static void bad_dtypes(void **state)
{
    (void)state;
    const char *bad[] = {"f8", "F32", "float", "complex64", "", "u128"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tb m = {0};
        root(&m, "1.2.0", "objects", 1);
        tb_text(&m, "t");
        uint64_t shape[1] = {1};
        tb_dense(&m, 1, shape, &(tcomp){bad[i], 64, 4, NULL, NOCOMP, NULL, NULL});
        expect_fail(&m, 128, ZT_E_DTYPE, "t", "data");
        tb_free(&m);
    }
    /* dtype must be text */
    tb m = {0};
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    tb_map(&m, 3);
    tb_text(&m, "shape");
    tb_array(&m, 0);
    tb_text(&m, "format");
    tb_text(&m, "dense");
    tb_text(&m, "components");
    tb_map(&m, 1);
    tb_text(&m, "data");
    tb_map(&m, 3);
    tb_text(&m, "dtype");
    tb_uint(&m, 2);
    tb_text(&m, "offset");
    tb_uint(&m, 64);
    tb_text(&m, "length");
    tb_uint(&m, 4);
    expect_fail(&m, 128, ZT_E_DTYPE, "t", "data");
    tb_free(&m);
}

/* One object "t" with a component "data" given as raw CBOR bytes. */
static void one_component(tb *m, const char *format, void (*comp)(tb *))
{
    root(m, "1.2.0", "objects", 1);
    tb_text(m, "t");
    tb_map(m, 3);
    tb_text(m, "shape");
    tb_array(m, 1);
    tb_uint(m, 4);
    tb_text(m, "format");
    tb_text(m, format);
    tb_text(m, "components");
    tb_map(m, 1);
    tb_text(m, "data");
    comp(m);
}

static void c_not_map(tb *m)
{
    tb_array(m, 0);
}
static void c_no_offset(tb *m)
{
    tb_map(m, 2);
    tb_text(m, "dtype");
    tb_text(m, "u8");
    tb_text(m, "length");
    tb_uint(m, 4);
}
static void c_no_length(tb *m)
{
    tb_map(m, 2);
    tb_text(m, "dtype");
    tb_text(m, "u8");
    tb_text(m, "offset");
    tb_uint(m, 64);
}
static void c_neg_offset(tb *m)
{
    tb_map(m, 3);
    tb_text(m, "dtype");
    tb_text(m, "u8");
    tb_text(m, "offset");
    tb_neg(m, 63);
    tb_text(m, "length");
    tb_uint(m, 4);
}
static void c_text_length(tb *m)
{
    tb_map(m, 3);
    tb_text(m, "dtype");
    tb_text(m, "u8");
    tb_text(m, "offset");
    tb_uint(m, 64);
    tb_text(m, "length");
    tb_text(m, "4");
}
static void c_float_length(tb *m)
{
    tb_map(m, 3);
    tb_text(m, "dtype");
    tb_text(m, "u8");
    tb_text(m, "offset");
    tb_uint(m, 64);
    tb_text(m, "length");
    tb_f64(m, 4.0);
}
static void c_bad_encoding(tb *m)
{
    tb_comp(m, &(tcomp){"u8", 64, 4, "gzip", NOCOMP, NULL, NULL});
}
static void c_upper_encoding(tb *m)
{
    tb_comp(m, &(tcomp){"u8", 64, 4, "ZSTD", 4, NULL, NULL});
}
static void c_bad_ulen(tb *m)
{
    tb_map(m, 5);
    tb_text(m, "dtype");
    tb_text(m, "u8");
    tb_text(m, "offset");
    tb_uint(m, 64);
    tb_text(m, "length");
    tb_uint(m, 4);
    tb_text(m, "encoding");
    tb_text(m, "zstd");
    tb_text(m, "uncompressed_length");
    tb_text(m, "4");
}
static void c_bad_digest(tb *m)
{
    tb_comp(m, &(tcomp){"u8", 64, 4, NULL, NOCOMP, "md5:00112233445566778899aabbccddeeff", NULL});
}
static void c_short_digest(tb *m)
{
    tb_comp(m, &(tcomp){"u8", 64, 4, NULL, NOCOMP, "sha256:ba7816bf", NULL});
}
static void c_digest_not_text(tb *m)
{
    tb_map(m, 4);
    tb_text(m, "dtype");
    tb_text(m, "u8");
    tb_text(m, "offset");
    tb_uint(m, 64);
    tb_text(m, "length");
    tb_uint(m, 4);
    tb_text(m, "digest");
    tb_bytes(m, "\xe3\x06\x92\x83", 4);
}
static void c_type_not_text(tb *m)
{
    tb_map(m, 4);
    tb_text(m, "dtype");
    tb_text(m, "u8");
    tb_text(m, "offset");
    tb_uint(m, 64);
    tb_text(m, "length");
    tb_uint(m, 4);
    tb_text(m, "type");
    tb_uint(m, 1);
}

static void component_schema_errors(void **state)
{
    (void)state;
    struct {
        void (*fn)(tb *);
        zt_status code;
    } cases[] = {
        {c_not_map, ZT_E_SCHEMA},
        {c_no_offset, ZT_E_SCHEMA},
        {c_no_length, ZT_E_SCHEMA},
        {c_neg_offset, ZT_E_SCHEMA},
        {c_text_length, ZT_E_SCHEMA},
        {c_float_length, ZT_E_SCHEMA},
        {c_bad_encoding, ZT_E_ENCODING},
        {c_upper_encoding, ZT_E_ENCODING},
        {c_bad_ulen, ZT_E_SCHEMA},
        {c_bad_digest, ZT_E_DIGEST_FORMAT},
        {c_short_digest, ZT_E_DIGEST_FORMAT},
        {c_digest_not_text, ZT_E_DIGEST_FORMAT},
        {c_type_not_text, ZT_E_TYPE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tb m = {0};
        one_component(&m, "dense", cases[i].fn);
        zt_file *f;
        zt_error err;
        uint8_t *keep;
        zt_status st = open_m(&m, 1, 128, &f, &err, &keep);
        if (st != cases[i].code)
            fail_msg("case %zu: got %s (%s), want %s", i, zt_status_name(st), err.message,
                     zt_status_name(cases[i].code));
        /* The message names the object and the component. */
        assert_string_equal(err.object, "t");
        assert_string_equal(err.component, "data");
        assert_non_null(strstr(err.message, "\"t\""));
        assert_non_null(strstr(err.message, "\"data\""));
        free(keep);
        tb_free(&m);
    }
}

static void object_schema_errors(void **state)
{
    (void)state;
    tb m = {0};
    /* object not a map */
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    tb_uint(&m, 1);
    expect_fail(&m, 8, ZT_E_SCHEMA, "t", NULL);
    tb_free(&m);
    /* object name not text */
    root(&m, "1.2.0", "objects", 1);
    tb_uint(&m, 1);
    tb_map(&m, 0);
    expect_fail(&m, 8, ZT_E_SCHEMA, NULL, NULL);
    tb_free(&m);
    /* no components */
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    tb_map(&m, 1);
    tb_text(&m, "format");
    tb_text(&m, "dense");
    expect_fail(&m, 8, ZT_E_COMPONENTS, "t", NULL);
    tb_free(&m);
    /* components not a map */
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    tb_map(&m, 1);
    tb_text(&m, "components");
    tb_array(&m, 0);
    expect_fail(&m, 8, ZT_E_SCHEMA, "t", NULL);
    tb_free(&m);
    /* role not text */
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    tb_map(&m, 1);
    tb_text(&m, "components");
    tb_map(&m, 1);
    tb_uint(&m, 0);
    tb_comp(&m, &(tcomp){"u8", 64, 4, NULL, NOCOMP, NULL, NULL});
    expect_fail(&m, 128, ZT_E_SCHEMA, "t", NULL);
    tb_free(&m);
    /* format not text */
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    tb_map(&m, 2);
    tb_text(&m, "format");
    tb_uint(&m, 1);
    tb_text(&m, "components");
    tb_map(&m, 0);
    expect_fail(&m, 8, ZT_E_SCHEMA, "t", NULL);
    tb_free(&m);
    /* attributes not a map */
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    tb_map(&m, 3);
    tb_text(&m, "format");
    tb_text(&m, "blob");
    tb_text(&m, "attributes");
    tb_array(&m, 0);
    tb_text(&m, "components");
    tb_map(&m, 0);
    expect_fail(&m, 8, ZT_E_SCHEMA, "t", NULL);
    tb_free(&m);
}

static void shape_rules(void **state)
{
    (void)state;
    zt_file *f;
    uint8_t *keep;
    tb m = {0};
    /* shape must be an array of unsigned integers */
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    tb_map(&m, 2);
    tb_text(&m, "shape");
    tb_uint(&m, 4);
    tb_text(&m, "components");
    tb_map(&m, 0);
    expect_fail(&m, 8, ZT_E_SCHEMA, "t", NULL);
    tb_free(&m);
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    tb_map(&m, 2);
    tb_text(&m, "shape");
    tb_array(&m, 2);
    tb_uint(&m, 4);
    tb_neg(&m, 0);
    tb_text(&m, "components");
    tb_map(&m, 0);
    expect_fail(&m, 8, ZT_E_SCHEMA, "t", NULL);
    tb_free(&m);
    /* 64 dimensions are allowed, 65 are not; unknown format: no size rule */
    for (int nd = 64; nd <= 65; nd++) {
        root(&m, "1.2.0", "objects", 1);
        tb_text(&m, "t");
        tb_map(&m, 3);
        tb_text(&m, "format");
        tb_text(&m, "opaque");
        tb_text(&m, "shape");
        tb_array(&m, (uint64_t)nd);
        for (int i = 0; i < nd; i++)
            tb_uint(&m, 2);
        tb_text(&m, "components");
        tb_map(&m, 0);
        if (nd == 64) {
            expect_ok(&m, 1, 8, &f, &keep);
            assert_int_equal(zt_object_ndim(zt_file_object_at(f, 0)), 64);
            zt_close(f);
            free(keep);
        } else {
            expect_fail(&m, 8, ZT_E_LIMIT, "t", NULL);
        }
        tb_free(&m);
    }
    /* no shape at all: has_shape is 0 (allowed for unknown formats) */
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    tb_map(&m, 2);
    tb_text(&m, "format");
    tb_text(&m, "opaque");
    tb_text(&m, "components");
    tb_map(&m, 0);
    expect_ok(&m, 1, 8, &f, &keep);
    assert_false(zt_object_has_shape(zt_file_object_at(f, 0)));
    assert_int_equal(zt_object_ndim(zt_file_object_at(f, 0)), 0);
    zt_close(f);
    free(keep);
    tb_free(&m);
    /* an empty shape is a scalar: one element */
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    tb_dense(&m, 0, NULL, &(tcomp){"f64", 64, 8, NULL, NOCOMP, NULL, NULL});
    expect_ok(&m, 1, 128, &f, &keep);
    assert_true(zt_object_has_shape(zt_file_object_at(f, 0)));
    assert_int_equal(zt_object_ndim(zt_file_object_at(f, 0)), 0);
    zt_close(f);
    free(keep);
    tb_free(&m);
}

static void root_schema_errors(void **state)
{
    (void)state;
    tb m = {0};
    tb_array(&m, 0);
    expect_fail(&m, 8, ZT_E_SCHEMA, NULL, NULL);
    tb_free(&m);
    tb_map(&m, 1);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    expect_fail(&m, 8, ZT_E_SCHEMA, NULL, NULL);
    tb_free(&m);
    root(&m, "1.2.0", "objects", 0);
    m.len--; /* replace the objects map by an array */
    tb_array(&m, 0);
    expect_fail(&m, 8, ZT_E_SCHEMA, NULL, NULL);
    tb_free(&m);
    tb_map(&m, 3);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    tb_text(&m, "objects");
    tb_map(&m, 0);
    tb_text(&m, "attributes");
    tb_text(&m, "x");
    expect_fail(&m, 8, ZT_E_SCHEMA, NULL, NULL);
    tb_free(&m);
}

static void nulls_are_absent(void **state)
{
    (void)state;
    tb m = {0};
    tb_map(&m, 3);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    tb_text(&m, "attributes");
    tb_byte(&m, 0xf6);
    tb_text(&m, "objects");
    tb_map(&m, 1);
    tb_text(&m, "t");
    tb_map(&m, 4);
    tb_text(&m, "shape");
    tb_array(&m, 1);
    tb_uint(&m, 2);
    tb_text(&m, "format");
    tb_byte(&m, 0xf6); /* null: the default, dense */
    tb_text(&m, "attributes");
    tb_byte(&m, 0xf7); /* undefined */
    tb_text(&m, "components");
    tb_map(&m, 1);
    tb_text(&m, "data");
    tb_map(&m, 7);
    tb_text(&m, "dtype");
    tb_text(&m, "i16");
    tb_text(&m, "offset");
    tb_uint(&m, 64);
    tb_text(&m, "length");
    tb_uint(&m, 4);
    tb_text(&m, "type");
    tb_byte(&m, 0xf6);
    tb_text(&m, "encoding");
    tb_byte(&m, 0xf6);
    tb_text(&m, "uncompressed_length");
    tb_byte(&m, 0xf6);
    tb_text(&m, "digest");
    tb_byte(&m, 0xf6);
    zt_file *f;
    uint8_t *keep;
    expect_ok(&m, 1, 128, &f, &keep);
    assert_null(zt_file_attributes(f));
    const zt_object *o = zt_file_object_at(f, 0);
    assert_string_equal(zt_object_format(o), "dense");
    assert_null(zt_object_attributes(o));
    const zt_component *c = zt_object_component_at(o, 0);
    assert_null(zt_component_type(c));
    assert_int_equal(zt_component_encoding(c), ZT_ENC_RAW);
    assert_int_equal(zt_component_digest_kind(c), ZT_DIGEST_NONE);
    assert_null(zt_component_digest(c));
    size_t n = 9;
    assert_null(zt_component_digest_bytes(c, &n));
    assert_int_equal(n, 0);
    zt_close(f);
    free(keep);
    tb_free(&m);
}

static void duplicate_object_names(void **state)
{
    (void)state;
    for (size_t nobj = 2; nobj <= 1000; nobj += 998) {
        tb m = {0};
        root(&m, "1.2.0", "objects", nobj);
        char name[32];
        for (size_t i = 0; i < nobj; i++) {
            /* the last name repeats the first */
            snprintf(name, sizeof name, "layer.%zu", i == nobj - 1 ? (size_t)0 : i);
            tb_text(&m, name);
            tb_map(&m, 2);
            tb_text(&m, "format");
            tb_text(&m, "opaque");
            tb_text(&m, "components");
            tb_map(&m, 0);
        }
        expect_fail(&m, 8, ZT_E_DUPLICATE, "layer.0", NULL);
        tb_free(&m);
    }
}

static void duplicate_field_keys(void **state)
{
    (void)state;
    /* A known field given twice in one map is refused: readers that keep
     * the first and readers that keep the last (most JSON-like decoders)
     * would otherwise see different files in the same bytes. */
    tb m = {0};
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    tb_map(&m, 3);
    tb_text(&m, "shape"), tb_array(&m, 1), tb_uint(&m, 4);
    tb_text(&m, "format"), tb_text(&m, "dense");
    tb_text(&m, "components"), tb_map(&m, 1), tb_text(&m, "data");
    tb_map(&m, 4);
    tb_text(&m, "dtype"), tb_text(&m, "u8");
    tb_text(&m, "offset"), tb_uint(&m, 64);
    tb_text(&m, "length"), tb_uint(&m, 4);
    tb_text(&m, "offset"), tb_uint(&m, 128);
    expect_fail(&m, 192, ZT_E_DUPLICATE, "t", "data");
    tb_free(&m);

    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    tb_map(&m, 4);
    tb_text(&m, "shape"), tb_array(&m, 1), tb_uint(&m, 4);
    tb_text(&m, "format"), tb_text(&m, "dense");
    tb_text(&m, "shape"), tb_array(&m, 1), tb_uint(&m, 8);
    tb_text(&m, "components"), tb_map(&m, 1), tb_text(&m, "data");
    tb_comp(&m, &(tcomp){"u8", 64, 4, NULL, NOCOMP, NULL, NULL});
    expect_fail(&m, 192, ZT_E_DUPLICATE, "t", NULL);
    tb_free(&m);

    tb_map(&m, 3);
    tb_text(&m, "version"), tb_text(&m, "1.2.0");
    tb_text(&m, "objects"), tb_map(&m, 0);
    tb_text(&m, "version"), tb_text(&m, "2.0.0");
    expect_fail(&m, 8, ZT_E_DUPLICATE, NULL, NULL);
    tb_free(&m);

    tb_map(&m, 3);
    tb_text(&m, "version"), tb_text(&m, "1.2.0");
    tb_text(&m, "objects"), tb_map(&m, 0);
    tb_text(&m, "objects"), tb_map(&m, 0);
    expect_fail(&m, 8, ZT_E_DUPLICATE, NULL, NULL);
    tb_free(&m);

    /* Unknown fields are ignored, twice or not. */
    root(&m, "1.2.0", "objects", 1);
    tb_text(&m, "t");
    tb_map(&m, 4);
    tb_text(&m, "format"), tb_text(&m, "opaque");
    tb_text(&m, "x_future"), tb_uint(&m, 1);
    tb_text(&m, "x_future"), tb_uint(&m, 2);
    tb_text(&m, "components"), tb_map(&m, 0);
    zt_file *f;
    uint8_t *keep;
    expect_ok(&m, 1, 8, &f, &keep);
    zt_close(f);
    free(keep);
    tb_free(&m);
}

static void names_compare_by_bytes(void **state)
{
    (void)state;
    /* Names differing only by case, by a trailing byte, or after a NUL are
     * distinct; lookup uses the full length. */
    static const struct {
        const char *s;
        size_t n;
    } names[] = {{"a", 1}, {"A", 1}, {"a\0b", 3}, {"a\0c", 3}, {"ab", 2}, {"", 0}};
    size_t k = sizeof(names) / sizeof(names[0]);
    tb m = {0};
    root(&m, "1.2.0", "objects", k);
    for (size_t i = 0; i < k; i++) {
        tb_textn(&m, names[i].s, names[i].n);
        tb_map(&m, 2);
        tb_text(&m, "format");
        tb_text(&m, "opaque");
        tb_text(&m, "components");
        tb_map(&m, 0);
    }
    zt_file *f;
    uint8_t *keep;
    expect_ok(&m, 1, 8, &f, &keep);
    for (size_t i = 0; i < k; i++) {
        const zt_object *o = zt_file_find_object(f, names[i].s, names[i].n);
        assert_ptr_equal(o, zt_file_object_at(f, i));
        assert_int_equal(zt_object_name_len(o), names[i].n);
        assert_memory_equal(zt_object_name(o), names[i].s, names[i].n);
    }
    assert_null(zt_file_find_object(f, "a\0d", 3));
    assert_null(zt_file_find_object(f, "abc", 3));
    assert_null(zt_file_find_object(f, "B", 1));
    zt_close(f);
    free(keep);
    tb_free(&m);
}

static void duplicate_roles(void **state)
{
    (void)state;
    /* Small objects use a pairwise check, larger ones a sort: cover both. */
    for (size_t ncomp = 2; ncomp <= 20; ncomp += 18) {
        for (int dup = 0; dup <= 1; dup++) {
            tb m = {0};
            root(&m, "1.2.0", "objects", 1);
            tb_text(&m, "t");
            tb_map(&m, 2);
            tb_text(&m, "format");
            tb_text(&m, "opaque");
            tb_text(&m, "components");
            tb_map(&m, ncomp);
            char role[32];
            for (size_t i = 0; i < ncomp; i++) {
                snprintf(role, sizeof role, "part%zu", dup && i == ncomp / 2 ? (size_t)0 : i);
                tb_text(&m, role);
                tb_comp(&m, &(tcomp){"u8", 64 * (i + 1), 1, NULL, NOCOMP, NULL, NULL});
            }
            if (dup) {
                expect_fail(&m, 64 * (ncomp + 1), ZT_E_DUPLICATE, "t", NULL);
            } else {
                zt_file *f;
                uint8_t *keep;
                expect_ok(&m, 1, 64 * (ncomp + 1), &f, &keep);
                const zt_object *o = zt_file_object_at(f, 0);
                assert_int_equal(zt_object_component_count(o), ncomp);
                assert_int_equal(zt_component_offset(zt_object_find_component(o, "part1")) % 64, 0);
                zt_close(f);
                free(keep);
            }
            tb_free(&m);
        }
    }
}

static void many_objects_lookup(void **state)
{
    (void)state;
    size_t nobj = 5000;
    tb m = {0};
    root(&m, "1.2.0", "objects", nobj);
    char name[64];
    for (size_t i = 0; i < nobj; i++) {
        snprintf(name, sizeof name, "model.layers.%zu.mlp.weight", (i * 7919) % nobj);
        tb_text(&m, name);
        tb_map(&m, 2);
        tb_text(&m, "format");
        tb_text(&m, "opaque");
        tb_text(&m, "components");
        tb_map(&m, 0);
    }
    zt_file *f;
    uint8_t *keep;
    expect_ok(&m, 1, 8, &f, &keep);
    assert_int_equal(zt_file_object_count(f), nobj);
    for (size_t i = 0; i < nobj; i++) {
        snprintf(name, sizeof name, "model.layers.%zu.mlp.weight", (i * 7919) % nobj);
        const zt_object *o = zt_file_find_object(f, name, strlen(name));
        /* manifest order is kept */
        assert_ptr_equal(o, zt_file_object_at(f, i));
    }
    assert_null(zt_file_find_object(f, "model.layers.5000.mlp.weight", 28));
    zt_close(f);
    free(keep);
    tb_free(&m);
}

static void model_from_cbor_directly(void **state)
{
    (void)state;
    /* The pure entry point, without a file: decode, build, look up. */
    tb m = {0};
    root(&m, "1.2.0", "objects", 2);
    tb_text(&m, "x");
    uint64_t shape[1] = {2};
    tb_dense(&m, 1, shape, &(tcomp){"f32", 64, 8, NULL, NOCOMP, NULL, NULL});
    tb_text(&m, "y");
    tb_dense(&m, 1, shape, &(tcomp){"u8", 128, 2, NULL, NOCOMP, NULL, "f8_e5m2"});
    zt__model model;
    memset(&model, 0, sizeof model);
    zt__arena_init(&model.arena);
    model.kind = ZT_KIND_ZT_1_2;
    zt_value *rootv;
    zt_error err;
    ASSERT_OK(zt__cbor_decode(m.p, m.len, NULL, &model.arena, &rootv, &err), &err);
    ASSERT_OK(zt__model_from_cbor(&model, rootv, &err), &err);
    assert_int_equal(model.nobj, 2);
    const struct zt_object *y = zt__model_find(&model, "y", 1);
    assert_non_null(y);
    assert_string_equal(y->comps[0].type, "f8_e5m2");
    assert_null(zt__model_find(&model, "z", 1));
    zt__validate_opts vo = {
        .data_end = 192, .data_start = 8, .max_uncompressed = 1 << 20, .require_alignment = true};
    ASSERT_OK(zt__validate_model(&model, &vo, &err), &err);
    vo.data_end = 129;
    ASSERT_ST(zt__validate_model(&model, &vo, &err), ZT_E_BOUNDS);
    assert_string_equal(err.object, "y");
    zt__arena_free(&model.arena);
    tb_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(v12_model),
        cmocka_unit_test(v10_schema),
        cmocka_unit_test(v10_tensor_without_dtype),
        cmocka_unit_test(v12_component_needs_dtype),
        cmocka_unit_test(objects_manifest_without_footer_is_truncated),
        cmocka_unit_test(version_negotiation),
        cmocka_unit_test(every_dtype_name),
        cmocka_unit_test(bad_dtypes),
        cmocka_unit_test(component_schema_errors),
        cmocka_unit_test(object_schema_errors),
        cmocka_unit_test(shape_rules),
        cmocka_unit_test(root_schema_errors),
        cmocka_unit_test(nulls_are_absent),
        cmocka_unit_test(duplicate_object_names),
        cmocka_unit_test(duplicate_field_keys),
        cmocka_unit_test(names_compare_by_bytes),
        cmocka_unit_test(duplicate_roles),
        cmocka_unit_test(many_objects_lookup),
        cmocka_unit_test(model_from_cbor_directly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
