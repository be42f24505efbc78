/*
 * Ollama's combined quantized blobs: {name} (U32) + {name}.scale [+ .bias]
 * triples become quantized_group objects with the right attributes and bytes;
 * expert-group blobs hold many; what is not a complete triple stays dense;
 * original names stay reachable through zt_file_find_tensor().
 */
#include "test_common.h"

#include <stdlib.h>

#define W "model.layers.0.mlp.up_proj.weight"

/* {name} U32 [rows, cols*bits/32], .scale / .bias [rows, cols/group]. */
static void triple(fx_st *s, const char *name, int rows, int cols, int bits, int group,
                   const char *sdtype, int bias, unsigned seed)
{
    char n[256], shape[64];
    int pc = cols * bits / 32, sc = cols / group, sw = strcmp(sdtype, "BF16") ? 1 : 2;
    snprintf(shape, sizeof(shape), "[%d,%d]", rows, pc);
    fx_st_fill(s, name, "U32", shape, (size_t)(rows * pc * 4), seed);
    snprintf(n, sizeof(n), "%s.scale", name);
    snprintf(shape, sizeof(shape), "[%d,%d]", rows, sc);
    fx_st_fill(s, n, sdtype, shape, (size_t)(rows * sc * sw), seed + 1);
    if (bias) {
        snprintf(n, sizeof(n), "%s.bias", name);
        fx_st_fill(s, n, sdtype, shape, (size_t)(rows * sc * sw), seed + 2);
    }
}

static void expect_bytes(const zt_file *f, const zt_component *c, size_t n, unsigned seed)
{
    uint8_t *want = malloc(n);
    fx_fill(want, n, seed);
    bytes_equal(f, c, want, n);
    free(want);
}

static void int4_affine(void **state)
{
    (void)state;
    fx_st s;
    fx_buf b;
    fx_st_begin(&s, "\"quant_type\":\"int4\",\"group_size\":\"32\"");
    triple(&s, W, 8, 256, 4, 32, "BF16", 1, 10);
    fx_st_fill(&s, "model.norm.weight", "BF16", "[256]", 512, 3);
    fx_st_finish(&s, &b);
    zt_file *f = open_ok(&b);
    assert_int_equal(zt_file_object_count(f), 2);
    const zt_object *o = zt_file_find_object(f, W, strlen(W));
    assert_non_null(o);
    assert_string_equal(zt_object_format(o), "quantized_group");
    assert_string_equal(zt_object_source_name(o), W);
    assert_int_equal(zt_object_ndim(o), 2);
    assert_int_equal(zt_object_shape(o)[0], 8);
    assert_int_equal(zt_object_shape(o)[1], 256);
    const zt_value *a = zt_object_attributes(o);
    attr_uint(a, "bits", 4);
    attr_uint(a, "group_size", 32);
    attr_text(a, "quant_type", "int4");
    attr_text(a, "packing", "8_per_u32");
    attr_text(a, "mode", "affine");
    attr_text(attr(a, "source_tensors"), "scales", W ".scale");
    attr_text(attr(a, "source_tensors"), "zeros", W ".bias");
    assert_int_equal(
        zt_value_uint(zt_value_item(attr(attr(a, "source_shapes"), "packed_weight"), 1)), 32);
    assert_int_equal(zt_object_component_count(o), 3);
    const zt_component *pw = zt_object_find_component(o, "packed_weight");
    assert_int_equal(zt_component_dtype(pw), ZT_DTYPE_U32);
    expect_bytes(f, pw, 8 * 32 * 4, 10);
    expect_bytes(f, zt_object_find_component(o, "scales"), 8 * 8 * 2, 11);
    expect_bytes(f, zt_object_find_component(o, "zeros"), 8 * 8 * 2, 12);
    assert_int_equal(zt_component_dtype(zt_object_find_component(o, "zeros")), ZT_DTYPE_BF16);
    /* original names */
    const zt_object *fo;
    const zt_component *fc;
    assert_int_equal(zt_file_find_tensor(f, W, strlen(W), &fo, &fc), ZT_OK);
    assert_ptr_equal(fo, o);
    assert_ptr_equal(fc, pw);
    assert_int_equal(zt_file_find_tensor(f, W ".scale", strlen(W) + 6, &fo, &fc), ZT_OK);
    assert_ptr_equal(fc, zt_object_find_component(o, "scales"));
    assert_int_equal(zt_file_find_tensor(f, W ".bias", strlen(W) + 5, &fo, &fc), ZT_OK);
    assert_ptr_equal(fc, zt_object_find_component(o, "zeros"));
    assert_int_equal(zt_file_find_tensor(f, "model.norm.weight", 17, &fo, &fc), ZT_OK);
    assert_string_equal(zt_component_role(fc), "data");
    assert_int_equal(zt_file_find_tensor(f, W ".zeros", strlen(W) + 6, &fo, &fc), ZT_E_NOT_FOUND);
    assert_int_equal(zt_file_find_tensor(f, "model.norm.weight.scale", 23, &fo, &fc),
                     ZT_E_NOT_FOUND);
    zt_close(f);
    fx_free(&b);
}

static void nvfp4_without_bias(void **state)
{
    (void)state;
    fx_st s;
    fx_buf b;
    fx_st_begin(&s, "\"quant_type\":\"nvfp4\",\"group_size\":\"16\"");
    triple(&s, "q", 4, 64, 4, 16, "F8_E4M3", 0, 20);
    fx_st_finish(&s, &b);
    zt_file *f = open_ok(&b);
    const zt_object *o = zt_file_object_at(f, 0);
    assert_int_equal(zt_file_object_count(f), 1);
    assert_string_equal(zt_object_format(o), "quantized_group");
    assert_int_equal(zt_object_shape(o)[1], 64);
    assert_int_equal(zt_object_component_count(o), 2);
    assert_null(zt_object_find_component(o, "zeros"));
    const zt_component *sc = zt_object_find_component(o, "scales");
    assert_string_equal(zt_component_type(sc), "f8_e4m3fn");
    expect_bytes(f, sc, 4 * 4, 21);
    attr_text(zt_object_attributes(o), "mode", "nvfp4");
    attr_uint(zt_object_attributes(o), "bits", 4);
    attr_uint(zt_object_attributes(o), "group_size", 16);
    zt_close(f);
    fx_free(&b);
}

/* No __metadata__: the type comes from the bias and the column ratio. */
static void expert_group(void **state)
{
    (void)state;
    fx_st s;
    fx_buf b;
    char n[128];
    fx_st_begin(&s, NULL);
    for (int e = 0; e < 3; e++) {
        snprintf(n, sizeof(n), "model.layers.1.mlp.experts.%d.down_proj.weight", e);
        triple(&s, n, 4, 128, 8, 32, "U8", 0, (unsigned)(30 + 3 * e)); /* mxfp8 */
        snprintf(n, sizeof(n), "model.layers.1.mlp.experts.%d.up_proj.weight", e);
        triple(&s, n, 4, 128, 8, 64, "BF16", 1, (unsigned)(60 + 3 * e)); /* int8 */
    }
    fx_st_fill(&s, "model.layers.1.mlp.gate.weight", "BF16", "[3,8]", 48, 9);
    fx_st_finish(&s, &b);
    zt_file *f = open_ok(&b);
    assert_int_equal(zt_file_object_count(f), 7);
    for (int e = 0; e < 3; e++) {
        snprintf(n, sizeof(n), "model.layers.1.mlp.experts.%d.down_proj.weight", e);
        const zt_object *o = zt_file_find_object(f, n, strlen(n));
        assert_string_equal(zt_object_format(o), "quantized_group");
        attr_text(zt_object_attributes(o), "quant_type", "mxfp8");
        attr_text(zt_object_attributes(o), "packing", "4_per_u32");
        expect_bytes(f, zt_object_find_component(o, "scales"), 4 * 4, (unsigned)(31 + 3 * e));
        snprintf(n, sizeof(n), "model.layers.1.mlp.experts.%d.up_proj.weight", e);
        o = zt_file_find_object(f, n, strlen(n));
        attr_text(zt_object_attributes(o), "quant_type", "int8");
        attr_uint(zt_object_attributes(o), "group_size", 64);
        expect_bytes(f, zt_object_find_component(o, "zeros"), 4 * 2 * 2, (unsigned)(62 + 3 * e));
    }
    assert_string_equal(
        zt_object_format(zt_file_find_object(f, "model.layers.1.mlp.gate.weight", 30)), "dense");
    zt_close(f);
    fx_free(&b);
}

static void incomplete_triples_stay_dense(void **state)
{
    (void)state;
    fx_st s;
    fx_buf b;
    fx_st_begin(&s, "\"quant_type\":\"int4\",\"group_size\":\"32\"");
    triple(&s, "nobias", 2, 64, 4, 32, "BF16", 0, 1); /* int4 needs its bias */
    fx_st_fill(&s, "noscale", "U32", "[2,8]", 64, 4); /* no .scale */
    fx_st_fill(&s, "float", "F32", "[2,8]", 64, 5);   /* not U32 */
    fx_st_fill(&s, "float.scale", "BF16", "[2,2]", 8, 6);
    fx_st_finish(&s, &b);
    zt_file *f = open_ok(&b);
    assert_int_equal(zt_file_object_count(f), 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(zt_object_format(zt_file_object_at(f, i)), "dense");
    zt_close(f);
    fx_free(&b);
}

static void group_size_from_metadata(void **state)
{
    (void)state;
    fx_st s;
    fx_buf b;
    fx_st_begin(&s, "\"quant_type\":\"int8\",\"group_size\":\"128\"");
    triple(&s, "w", 2, 256, 8, 128, "BF16", 1, 1);
    fx_st_finish(&s, &b);
    zt_file *f = open_ok(&b);
    attr_uint(zt_object_attributes(zt_file_object_at(f, 0)), "group_size", 128);
    assert_int_equal(zt_object_shape(zt_file_object_at(f, 0))[1], 256);
    zt_close(f);
    fx_free(&b);
}

/* zeros is optional in a .zt only when mode says the quantization is not affine. */
static void zeros_rule_in_zt(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof(path), "%s/qg-%d.zt", getenv("ZT_TEST_TMP") ?: "/tmp", (int)getpid());
    zt_writer *w;
    zt_error err;
    zt_writer_options wo;
    zt_writer_options_init(&wo);
    wo.fsync = 0;
    assert_int_equal(zt_writer_open(path, &wo, &w, &err), ZT_OK);
    zt_component_spec cs = {.dtype = ZT_DTYPE_U32};
    size_t ids[2];
    uint8_t d[16] = {0};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(zt_writer_begin(w, &cs, &err), ZT_OK);
        assert_int_equal(zt_writer_write(w, d, sizeof(d), &err), ZT_OK);
        assert_int_equal(zt_writer_end(w, &ids[i], &err), ZT_OK);
    }
    const char *roles[2] = {"packed_weight", "scales"};
    uint64_t shape[1] = {32};
    assert_int_equal(zt_writer_add_object(w, "a", "quantized_group", 1, shape,
                                          "{\"mode\":\"affine\"}", 2, roles, ids, &err),
                     ZT_E_COMPONENTS);
    assert_int_equal(
        zt_writer_add_object(w, "b", "quantized_group", 1, shape, NULL, 2, roles, ids, &err),
        ZT_E_COMPONENTS);
    assert_int_equal(zt_writer_add_object(w, "c", "quantized_group", 1, shape,
                                          "{\"mode\":\"nvfp4\"}", 2, roles, ids, &err),
                     ZT_OK);
    assert_int_equal(zt_writer_finish(w, &err), ZT_OK);
    zt_writer_free(w);
    zt_file *f;
    assert_int_equal(zt_open(path, NULL, &f, &err), ZT_OK);
    zt_close(f);
    unlink(path);
}

static void out_of_memory(void **state)
{
    (void)state;
    fx_st s;
    fx_buf b;
    fx_st_begin(&s, "\"quant_type\":\"int4\",\"group_size\":\"32\"");
    triple(&s, W, 8, 256, 4, 32, "BF16", 1, 10);
    triple(&s, "x", 2, 64, 4, 32, "BF16", 1, 20);
    fx_st_fill(&s, "model.norm.weight", "BF16", "[256]", 512, 3);
    fx_st_finish(&s, &b);
    oom_loop(&b);
    fx_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(int4_affine),
        cmocka_unit_test(nvfp4_without_bias),
        cmocka_unit_test(expert_group),
        cmocka_unit_test(incomplete_triples_stay_dense),
        cmocka_unit_test(group_size_from_metadata),
        cmocka_unit_test(zeros_rule_in_zt),
        cmocka_unit_test(out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
