/*
 * The safetensors reader over files written byte by byte (fixtures.h): every
 * dtype, absolute offsets, __metadata__ as attributes, header order, and each
 * malformed header with its error.
 */
#include "test_common.h"

#include <fcntl.h>
#include <stdlib.h>

static const struct {
    const char *st, *dtype, *type;
    unsigned width;
} k_types[] = {
    {"F64", "f64", NULL, 8},         {"F32", "f32", NULL, 4},
    {"F16", "f16", NULL, 2},         {"BF16", "bf16", NULL, 2},
    {"I64", "i64", NULL, 8},         {"I32", "i32", NULL, 4},
    {"I16", "i16", NULL, 2},         {"I8", "i8", NULL, 1},
    {"U64", "u64", NULL, 8},         {"U32", "u32", NULL, 4},
    {"U16", "u16", NULL, 2},         {"U8", "u8", NULL, 1},
    {"BOOL", "bool", NULL, 1},       {"F8_E4M3", "u8", "f8_e4m3fn", 1},
    {"F8_E5M2", "u8", "f8_e5m2", 1},
};
#define NTYPES (sizeof(k_types) / sizeof(k_types[0]))

static void every_dtype(void **state)
{
    (void)state;
    fx_st s;
    fx_buf b;
    fx_st_begin(&s, "\"format\":\"pt\",\"note\":\"hi\"");
    for (size_t i = 0; i < NTYPES; i++)
        fx_st_fill(&s, k_types[i].st, k_types[i].st, "[3,2]", 6 * k_types[i].width, (unsigned)i);
    fx_st_finish(&s, &b);
    zt_file *f = open_ok(&b);
    assert_int_equal(zt_file_get_kind(f), ZT_KIND_SAFETENSORS);
    assert_string_equal(zt_file_kind_name(zt_file_get_kind(f)), "safetensors");
    assert_string_equal(zt_file_version(f), "");
    attr_text(zt_file_attributes(f), "format", "pt");
    attr_text(zt_file_attributes(f), "note", "hi");
    assert_int_equal(zt_file_object_count(f), NTYPES);
    uint64_t off = zt_file_manifest_offset(f) + zt_file_manifest_length(f);
    for (size_t i = 0; i < NTYPES; i++) {
        const zt_object *o = zt_file_object_at(f, i); /* header order */
        assert_string_equal(zt_object_name(o), k_types[i].st);
        assert_string_equal(zt_object_source_name(o), k_types[i].st);
        assert_string_equal(zt_object_format(o), "dense");
        assert_int_equal(zt_object_ndim(o), 2);
        const zt_component *c = zt_object_find_component(o, "data");
        assert_string_equal(zt_dtype_name(zt_component_dtype(c)), k_types[i].dtype);
        if (k_types[i].type)
            assert_string_equal(zt_component_type(c), k_types[i].type);
        else
            assert_null(zt_component_type(c));
        assert_int_equal(zt_component_offset(c), off);
        uint8_t want[48];
        fx_fill(want, 6 * k_types[i].width, (unsigned)i);
        bytes_equal(f, c, want, 6 * k_types[i].width);
        off += 6 * k_types[i].width;
        assert_ptr_equal(zt_file_find_object(f, k_types[i].st, strlen(k_types[i].st)), o);
        assert_string_equal(zt_safetensors_dtype(zt_component_dtype(c), zt_component_type(c)),
                            k_types[i].st);
    }
    zt_close(f);
    fx_free(&b);
}

static void shapes_gaps_and_order(void **state)
{
    (void)state;
    uint8_t d[64];
    fx_fill(d, sizeof(d), 5);
    /* Header order differs from data order; a gap of 4 bytes; a scalar; an
     * empty tensor; no __metadata__; trailing bytes after the last tensor. */
    fx_buf b;
    fx_st_raw(&b,
              "{\"z\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[20,24]},"
              "\"a\":{\"dtype\":\"U8\",\"shape\":[2,8],\"data_offsets\":[0,16]},"
              "\"e\":{\"dtype\":\"F64\",\"shape\":[0,3],\"data_offsets\":[16,16]}}",
              d, 30);
    zt_file *f = open_ok(&b);
    assert_null(zt_file_attributes(f));
    assert_int_equal(zt_file_object_count(f), 3);
    assert_string_equal(zt_object_name(zt_file_object_at(f, 0)), "z");
    const zt_object *z = zt_file_find_object(f, "z", 1);
    assert_int_equal(zt_object_ndim(z), 0);
    assert_true(zt_object_has_shape(z));
    uint64_t ds = zt_file_manifest_offset(f) + zt_file_manifest_length(f);
    assert_int_equal(zt_component_offset(zt_object_component_at(z, 0)), ds + 20);
    bytes_equal(f, zt_object_component_at(z, 0), d + 20, 4);
    bytes_equal(f, zt_object_component_at(zt_file_find_object(f, "e", 1), 0), NULL, 0);
    zt_close(f);
    fx_free(&b);
}

static void through_a_path(void **state)
{
    (void)state;
    fx_st s;
    fx_buf b;
    fx_st_begin(&s, NULL);
    fx_st_fill(&s, "w", "BF16", "[4]", 8, 1);
    fx_st_finish(&s, &b);
    char path[256];
    snprintf(path, sizeof(path), "%s/st-%d.safetensors", getenv("ZT_TEST_TMP") ?: "/tmp",
             (int)getpid());
    assert_int_equal(fx_save(path, b.p, b.len), 0);
    zt_file *f = NULL;
    zt_error err;
    assert_int_equal(zt_open(path, NULL, &f, &err), ZT_OK);
    uint8_t want[8];
    fx_fill(want, 8, 1);
    bytes_equal(f, zt_object_component_at(zt_file_object_at(f, 0), 0), want, 8);
    assert_true(zt_file_fd(f) >= 0);
    zt_close(f);
    /* ZT_OPEN_NO_MMAP reads the same */
    zt_open_options o = {.flags = ZT_OPEN_NO_MMAP};
    assert_int_equal(zt_open(path, &o, &f, &err), ZT_OK);
    zt_close(f);
    unlink(path);
    fx_free(&b);
}

#define T(dtype, shape, offs)                                                                      \
    "{\"t\":{\"dtype\":\"" dtype "\",\"shape\":" shape ",\"data_offsets\":" offs "}}"

static void raw_fails(const char *header, size_t data, zt_status code, const char *want)
{
    uint8_t d[64] = {0};
    fx_buf b;
    fx_st_raw(&b, header, d, data);
    open_fails(&b, code, want);
    fx_free(&b);
}

static void malformed_headers(void **state)
{
    (void)state;
    /* not JSON, JSON of the wrong shape */
    raw_fails("{\"t\":{\"dtype\":\"F32\",", 0, ZT_E_JSON, "not valid JSON");
    raw_fails("{} trailing", 0, ZT_E_JSON, "not valid JSON");
    raw_fails("{\"t\":[1,2]}", 0, ZT_E_SCHEMA, "\"t\"");
    raw_fails("{\"t\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, ZT_E_SCHEMA, "data_offsets");
    raw_fails("{\"__metadata__\":[1]}", 0, ZT_E_SCHEMA, "__metadata__");
    /* dtypes, shapes, offsets */
    raw_fails(T("F128", "[1]", "[0,16]"), 16, ZT_E_DTYPE, "F128");
    raw_fails(T("F32", "[-1]", "[0,4]"), 4, ZT_E_SCHEMA, "shape");
    raw_fails(T("F32", "[1.5]", "[0,4]"), 4, ZT_E_SCHEMA, "shape");
    raw_fails(T("F32", "[1]", "[-4,0]"), 4, ZT_E_SCHEMA, "data_offsets");
    raw_fails(T("F32", "[1]", "[0,4,8]"), 8, ZT_E_SCHEMA, "data_offsets");
    raw_fails(T("F32", "[1]", "[4,0]"), 4, ZT_E_BOUNDS, "end before");
    /* the byte size does not match shape x width */
    raw_fails(T("F32", "[3]", "[0,8]"), 8, ZT_E_SIZE, "need 12");
    raw_fails(T("F16", "[4294967296,4294967296]", "[0,8]"), 8, ZT_E_SIZE, "overflow");
    /* outside the data region */
    raw_fails(T("F32", "[2]", "[0,8]"), 7, ZT_E_BOUNDS, "data region");
    raw_fails(T("U8", "[1]", "[9223372036854775806,9223372036854775807]"), 8, ZT_E_BOUNDS,
              "data region");
    /* overlapping, in either header order, also around an empty tensor */
    raw_fails("{\"a\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]},"
              "\"b\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[4,12]}}",
              12, ZT_E_OVERLAP, "overlap");
    raw_fails("{\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[6,10]},"
              "\"e\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[5,5]},"
              "\"a\":{\"dtype\":\"U8\",\"shape\":[10],\"data_offsets\":[0,10]}}",
              12, ZT_E_OVERLAP, "\"a\"");
    /* duplicate names */
    raw_fails("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
              "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}",
              2, ZT_E_DUPLICATE, "twice");
}

static void header_sizes(void **state)
{
    (void)state;
    fx_buf b = {0};
    /* a huge header size: refused before any allocation */
    fx_le(&b, 1ull << 40, 8);
    fx_str(&b, "{\"a\":1}");
    open_fails(&b, ZT_E_LIMIT, "exceeds the limit");
    /* larger than the file */
    b.len = 0;
    fx_le(&b, 4096, 8);
    fx_str(&b, "{}");
    open_fails(&b, ZT_E_TRUNCATED, "past the end");
    fx_free(&b);
    /* the caller's max_manifest_size */
    fx_st s;
    fx_st_begin(&s, NULL);
    fx_st_fill(&s, "w", "U8", "[4]", 4, 1);
    fx_st_finish(&s, &b);
    zt_open_options o = {.max_manifest_size = 16};
    zt_file *f = NULL;
    zt_error err;
    assert_int_equal(zt_open_memory(b.p, b.len, &o, &f, &err), ZT_E_LIMIT);
    /* every truncation of a good file fails cleanly */
    for (size_t n = 9; n < b.len; n++) {
        zt_status st = zt_open_memory(b.p, n, NULL, &f, &err);
        assert_int_not_equal(st, ZT_OK);
        assert_true(err.message[0] != 0);
    }
    fx_free(&b);
}

static void detection(void **state)
{
    (void)state;
    /* Not '{' after the size: not safetensors, so the .zt reader answers. */
    fx_buf b = {0};
    fx_le(&b, 2, 8);
    fx_str(&b, " {}");
    open_fails(&b, ZT_E_MAGIC, NULL);
    fx_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_dtype),    cmocka_unit_test(shapes_gaps_and_order),
        cmocka_unit_test(through_a_path), cmocka_unit_test(malformed_headers),
        cmocka_unit_test(header_sizes),   cmocka_unit_test(detection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
