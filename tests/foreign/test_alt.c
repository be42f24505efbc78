/*
 * The ALT reader over files written byte by byte (fixtures.h): parameters as
 * attributes, the token stream byte-exact, tensors located in place, the
 * readings of the spec's loose points, and bad markers, lying sizes and
 * every truncation.
 */
#include "test_common.h"

#include <stdlib.h>

static const char *const k_tok[] = {"<unk>", "<s>", "", "h\xc3\xa9", "\xff\x00\x80"};
static const size_t k_len[] = {5, 3, 0, 3, 3};

typedef struct opts {
    const char *magic;
    int size_mode;
    int64_t lie[3]; /* added to the params, tokenizer, tensor section sizes */
    uint32_t end;
    int32_t dtype, dim0;
    int64_t count, shape_count;
} opts;

static opts defaults(void)
{
    return (opts){
        .magic = "altc", .end = 0x0FFFFFFF, .dtype = 1, .dim0 = 3, .count = 2, .shape_count = 3};
}

/* tensors: "w" f32 [2,4] and "n" (dtype, [dim0]) */
static void build(fx_buf *out, const opts *o)
{
    fx_alt a = {.size_mode = o->size_mode};
    a.size_delta = o->lie[0];
    fx_alt_begin(&a, o->magic, "mistral");
    a.size_delta = o->lie[1];
    fx_alt_tokens(&a, k_tok, k_len, 5);
    uint8_t d[64];
    fx_fill(d, sizeof(d), 1);
    const int32_t dw[2] = {2, 4}, dn[1] = {o->dim0};
    fx_alt_tensors_begin(&a, o->count, o->shape_count);
    fx_alt_tensor(&a, "w", 0, 2, dw, d, 32);
    fx_alt_tensor(&a, "n", o->dtype, 1, dn, d + 32, o->dim0 > 0 && o->dim0 < 8 ? 6 : 0);
    a.size_delta = o->lie[2];
    fx_alt_finish(&a, o->end);
    *out = a.b;
}

static void check_file(const zt_file *f, const fx_buf *b)
{
    assert_int_equal(zt_file_get_kind(f), ZT_KIND_ALT);
    const zt_value *a = zt_file_attributes(f);
    attr_text(a, "model_type", "mistral");
    attr_uint(a, "hidden_size", 64);
    attr_uint(a, "num_hidden_layers", 2);
    attr_uint(a, "intermediate_size", 224);
    attr_uint(a, "num_attention_heads", 4);
    attr_uint(a, "num_key_value_heads", 2);
    attr_uint(a, "sliding_window", 4096);
    assert_true(zt_value_float(attr(a, "rope_theta")) == 10000.0);
    assert_true(zt_value_float(attr(a, "rms_norm_eps")) == (double)1e-5f);
    attr_uint(a, "head_size", 16);
    attr_uint(a, "data_type", 0);
    attr_uint(a, "context_length", 8192);
    attr_uint(a, "tokenizer.vocab_size", 5);
    attr_uint(a, "tokenizer.bos_id", 1);
    attr_uint(a, "tokenizer.eos_id", 2);
    assert_int_equal(zt_value_get_kind(attr(a, "tokenizer.pad_id")), ZT_VAL_NEGINT);
    assert_int_equal(zt_value_uint(attr(a, "tokenizer.pad_id")), 0); /* -1 */
    attr_uint(a, "tokenizer.unk_id", 0);
    /* the token stream, verbatim */
    fx_buf want = {0};
    for (int i = 0; i < 5; i++) {
        fx_le(&want, k_len[i], 4);
        fx_raw(&want, k_tok[i], k_len[i]);
    }
    const zt_object *v = zt_file_find_object(f, "tokenizer.vocab", 15);
    assert_non_null(v);
    attr_text(zt_object_attributes(v), "layout", "i32_length_prefixed");
    attr_uint(zt_object_attributes(v), "count", 5);
    bytes_equal(f, zt_object_component_at(v, 0), want.p, want.len);
    fx_free(&want);
    /* tensors, in place */
    uint8_t d[64];
    fx_fill(d, sizeof(d), 1);
    const zt_object *w = zt_file_find_object(f, "w", 1), *n = zt_file_find_object(f, "n", 1);
    assert_int_equal(zt_object_ndim(w), 2);
    assert_int_equal(zt_object_shape(w)[1], 4);
    const zt_component *c = zt_object_component_at(w, 0);
    assert_int_equal(zt_component_dtype(c), ZT_DTYPE_F32);
    bytes_equal(f, c, d, 32);
    assert_memory_equal(b->p + zt_component_offset(c), d, 32);
    assert_int_equal(zt_component_dtype(zt_object_component_at(n, 0)), ZT_DTYPE_F16);
    bytes_equal(f, zt_object_component_at(n, 0), d + 32, 6);
    assert_int_equal(zt_file_object_count(f), 3);
}

static void valid(void **state)
{
    (void)state;
    opts o = defaults();
    fx_buf b;
    build(&b, &o);
    zt_file *f = open_ok(&b);
    check_file(f, &b);
    zt_close(f);
    fx_free(&b);
}

/* The readings of docs/FOREIGN-FORMATS.md that the reader accepts. */
static void readings(void **state)
{
    (void)state;
    for (int v = 0; v < 5; v++) {
        opts o = defaults();
        if (v == 0)
            o.magic = "ctla"; /* the magic as a little-endian int32 */
        if (v == 1)
            o.size_mode = FX_SIZE_WITH_HEADER;
        if (v == 2)
            o.size_mode = FX_SIZE_PADDED;
        if (v == 3)
            o.end = 0xFFFFFFFF;
        if (v == 4)
            o.shape_count = 8 + 3; /* elements rather than dimensions */
        fx_buf b;
        build(&b, &o);
        zt_file *f = open_ok(&b);
        check_file(f, &b);
        zt_close(f);
        fx_free(&b);
    }
}

static void fails_with(const opts *o, zt_status code, const char *want)
{
    fx_buf b;
    build(&b, o);
    open_fails(&b, code, want);
    fx_free(&b);
}

static void bad_markers(void **state)
{
    (void)state;
    opts o = defaults();
    o.magic = "altx"; /* not ALT: the .zt reader answers */
    fails_with(&o, ZT_E_MAGIC, NULL);
    o = defaults();
    o.end = 0x12345678;
    fails_with(&o, ZT_E_MAGIC, "end marker");
    fx_buf b;
    o = defaults();
    build(&b, &o);
    b.p[32] ^= 1; /* the parameters marker */
    open_fails(&b, ZT_E_MAGIC, "parameters section marker");
    fx_free(&b);
}

static void lying_sizes(void **state)
{
    (void)state;
    static const char *const names[] = {"parameters section", "tokenizer section",
                                        "tensor section"};
    static const int64_t lies[] = {1, -4, 100, 17, -1};
    for (int s = 0; s < 3; s++)
        for (size_t l = 0; l < sizeof(lies) / sizeof(lies[0]); l++) {
            opts o = defaults();
            o.lie[s] = lies[l];
            fails_with(&o, ZT_E_SIZE, names[s]);
        }
    opts o = defaults();
    o.shape_count = 4;
    fails_with(&o, ZT_E_SIZE, "shape count");
    o = defaults();
    o.count = 1000000;
    fails_with(&o, ZT_E_SIZE, "tensor count");
    o = defaults();
    o.count = 3; /* one more than there is: read from the padding and end marker */
    fails_with(&o, ZT_E_SIZE, "tensor section");
}

static void bad_tensors(void **state)
{
    (void)state;
    opts o = defaults();
    o.dtype = 7;
    fails_with(&o, ZT_E_DTYPE, "data_type 7");
    o = defaults();
    o.dim0 = -3;
    fails_with(&o, ZT_E_SCHEMA, "dimension");
    o = defaults();
    o.dim0 = 0x7FFFFFFF; /* data past the end of the file */
    fails_with(&o, ZT_E_TRUNCATED, "tensor's data");
}

static void every_truncation(void **state)
{
    (void)state;
    opts o = defaults();
    fx_buf b;
    build(&b, &o);
    for (size_t n = 4; n < b.len; n++) {
        zt_file *f = NULL;
        zt_error err;
        zt_status st = zt_open_memory(b.p, n, NULL, &f, &err);
        if (st == ZT_OK)
            fail_msg("a file cut to %zu of %zu bytes opened", n, b.len);
        assert_true(err.message[0] != 0);
    }
    fx_free(&b);
}

/* A name longer than the reader's 64 KiB window is read past it. */
static void long_name(void **state)
{
    (void)state;
    size_t n = 70000;
    char *name = malloc(n + 1);
    memset(name, 'a', n);
    name[n] = 0;
    fx_alt a = {0};
    fx_alt_begin(&a, "altc", "m");
    fx_alt_tokens(&a, k_tok, k_len, 5);
    const int32_t d[1] = {2};
    uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    fx_alt_tensors_begin(&a, 2, 2);
    fx_alt_tensor(&a, name, 0, 1, d, data, 8);
    fx_alt_tensor(&a, "next", 2, 1, d, data, 2);
    fx_alt_finish(&a, 0x0FFFFFFF);
    zt_file *f = open_ok(&a.b);
    const zt_object *o = zt_file_find_object(f, name, n);
    assert_non_null(o);
    bytes_equal(f, zt_object_component_at(o, 0), data, 8);
    bytes_equal(f, zt_object_component_at(zt_file_find_object(f, "next", 4), 0), data, 2);
    zt_close(f);
    fx_free(&a.b);
    free(name);
}

static void out_of_memory(void **state)
{
    (void)state;
    opts o = defaults();
    fx_buf b;
    build(&b, &o);
    oom_loop(&b);
    fx_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid),       cmocka_unit_test(readings),
        cmocka_unit_test(bad_markers), cmocka_unit_test(lying_sizes),
        cmocka_unit_test(bad_tensors), cmocka_unit_test(every_truncation),
        cmocka_unit_test(long_name),   cmocka_unit_test(out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
