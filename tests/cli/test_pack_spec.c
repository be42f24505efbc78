/*
 * test_pack_spec.c: zt pack's NAME=DTYPE:SHAPE:RAWFILE arguments
 * (cli/tool_pack_spec.c): names end at the first '=', dtypes by short or long
 * name or as a logical type, v2's extra types only under --format v2, shapes
 * as dimensions joined by 'x' (empty: a scalar).
 */
#include "cli_test.h"

static int parse(const char *arg, int v2, tool_pack_spec *sp, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", arg);
    memset(sp, 0x55, sizeof(*sp));
    return tool_pack_parse_spec(buf, v2, sp);
}

static void whole_spec(void **state)
{
    (void)state;
    char buf[256];
    tool_pack_spec sp;
    assert_int_equal(parse("w=f32:1024x768:/tmp/w.raw", 0, &sp, buf, sizeof buf), 0);
    assert_string_equal(sp.name, "w");
    assert_int_equal(sp.dtype, ZT_DTYPE_F32);
    assert_null(sp.type);
    assert_int_equal(sp.ndim, 2);
    assert_int_equal(sp.shape[0], 1024);
    assert_int_equal(sp.shape[1], 768);
    assert_string_equal(sp.path, "/tmp/w.raw");
    /* the name ends at the first '='; the path takes the rest, ':' included */
    assert_int_equal(parse("a:b=bfloat16:3:-", 0, &sp, buf, sizeof buf), 0);
    assert_string_equal(sp.name, "a:b");
    assert_int_equal(sp.dtype, ZT_DTYPE_BF16);
    assert_string_equal(sp.path, "-");
    assert_int_equal(parse("s=u8::x:y", 0, &sp, buf, sizeof buf), 0);
    assert_int_equal(sp.ndim, 0); /* a scalar */
    assert_string_equal(sp.path, "x:y");
}

static void logical_types(void **state)
{
    (void)state;
    char buf[256];
    tool_pack_spec sp;
    assert_int_equal(parse("q=f8_e4m3fn:4:f", 0, &sp, buf, sizeof buf), 0);
    assert_int_equal(sp.dtype, ZT_DTYPE_U8);
    assert_string_equal(sp.type, "f8_e4m3fn");
    assert_int_equal(parse("c=complex64:2:f", 0, &sp, buf, sizeof buf), 0);
    assert_int_equal(sp.dtype, ZT_DTYPE_F32);
    assert_string_equal(sp.type, "complex64");
    /* bool: a storage dtype in 1.2, u8 with logical type bool in v2 */
    assert_int_equal(parse("b=bool:8:f", 0, &sp, buf, sizeof buf), 0);
    assert_int_equal(sp.dtype, ZT_DTYPE_BOOL);
    assert_null(sp.type);
    assert_int_equal(parse("b=bool:8:f", 1, &sp, buf, sizeof buf), 0);
    assert_int_equal(sp.dtype, ZT_DTYPE_U8);
    assert_string_equal(sp.type, "bool");
    assert_int_equal(parse("e=f8_e8m0:8:f", 1, &sp, buf, sizeof buf), 0);
    assert_string_equal(sp.type, "f8_e8m0");
    assert_int_equal(parse("e=f4_e2m1:8:f", 1, &sp, buf, sizeof buf), 0);
    assert_int_equal(sp.dtype, ZT_DTYPE_U8);
    assert_string_equal(sp.type, "f4_e2m1");
}

static void refused(void **state)
{
    (void)state;
    char buf[256];
    tool_pack_spec sp;
    const char *bad[] = {
        "noequals", "w=f32",      "w=f32:4",     "w=f32:4:",     "w=f99:4:f",
        "w=:4:f",   "w=f32:-4:f", "w=f32:4y3:f", "w=f32:4x 3:f", "w=f32:99999999999999999999:f",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(parse(bad[i], 0, &sp, buf, sizeof buf), -1);
    /* ZT_MAX_NDIM dimensions, and one more */
    char dims[512] = "w=f32:1";
    for (int i = 1; i < ZT_MAX_NDIM; i++)
        strcat(dims, "x1");
    strcat(dims, ":f");
    assert_int_equal(parse(dims, 0, &sp, buf, sizeof buf), 0);
    assert_int_equal(sp.ndim, ZT_MAX_NDIM);
    dims[strlen(dims) - 2] = 0;
    strcat(dims, "x1:f");
    assert_int_equal(parse(dims, 0, &sp, buf, sizeof buf), -1);
    /* v2's extra types are not 1.2 types */
    assert_int_equal(parse("e=f8_e8m0:8:f", 0, &sp, buf, sizeof buf), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(whole_spec),
        cmocka_unit_test(logical_types),
        cmocka_unit_test(refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
