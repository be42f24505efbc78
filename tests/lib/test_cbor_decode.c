/*
 * test_cbor_decode.c: zt__cbor_decode (lib/src/common/cbor_decode.c), the bounded
 * decoder for manifests from strangers. Every major type and head size from
 * hand-written bytes (RFC 8949 Appendix A examples where they exist), the
 * indefinite-length forms, and every rejection: truncation, reserved
 * additional information, stray breaks, bad chunks, invalid UTF-8, trailing
 * bytes, declared counts larger than the input, nesting depth.
 */
#include "zt_test.h"

#include <math.h>

#include "internal.h"

static zt__arena g_arena;

static int setup(void **state)
{
    (void)state;
    zt__arena_init(&g_arena);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    zt__arena_free(&g_arena);
    return 0;
}

static zt_error g_err;

static zt_status dec_depth(const void *p, size_t n, size_t depth, zt_value **v)
{
    zt__cbor_limits lim = {depth, 0, false};
    memset(&g_err, 0, sizeof g_err);
    return zt__cbor_decode(p, n, &lim, &g_arena, v, &g_err);
}

static zt_value *ok(const char *hex_bytes, size_t n)
{
    zt_value *v = NULL;
    zt_status st = dec_depth(hex_bytes, n, ZT_MAX_DEPTH, &v);
    if (st != ZT_OK)
        fail_msg("decode failed: %s", g_err.message);
    assert_non_null(v);
    return v;
}

#define OK(lit) ok(lit, sizeof(lit) - 1)
#define BAD(lit, code)                                                                             \
    ASSERT_ST(dec_depth(lit, sizeof(lit) - 1, ZT_MAX_DEPTH, &(zt_value *){0}), code)

static void unsigned_integers(void **state)
{
    (void)state;
    struct {
        const char *b;
        size_t n;
        uint64_t v;
    } cases[] = {
        {"\x00", 1, 0},
        {"\x01", 1, 1},
        {"\x17", 1, 23},
        {"\x18\x18", 2, 24},
        {"\x18\xff", 2, 255},
        {"\x19\x01\x00", 3, 256},
        {"\x19\x03\xe8", 3, 1000},
        {"\x1a\x00\x0f\x42\x40", 5, 1000000},
        {"\x1b\x00\x00\x00\xe8\xd4\xa5\x10\x00", 9, 1000000000000ull},
        {"\x1b\xff\xff\xff\xff\xff\xff\xff\xff", 9, UINT64_MAX},
        /* Non-shortest heads are well-formed and decode to the same value. */
        {"\x18\x01", 2, 1},
        {"\x1b\x00\x00\x00\x00\x00\x00\x00\x05", 9, 5},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        zt_value *v = ok(cases[i].b, cases[i].n);
        assert_int_equal(zt_value_get_kind(v), ZT_VAL_UINT);
        assert_true(zt_value_uint(v) == cases[i].v);
    }
}

static void negative_integers(void **state)
{
    (void)state;
    zt_value *v = OK("\x20"); /* -1 */
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_NEGINT);
    assert_int_equal(zt_value_uint(v), 0);
    v = OK("\x38\x63"); /* -100 */
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_NEGINT);
    assert_int_equal(zt_value_uint(v), 99);
    v = OK("\x39\x03\xe7"); /* -1000 */
    assert_int_equal(zt_value_uint(v), 999);
    v = OK("\x3b\xff\xff\xff\xff\xff\xff\xff\xff"); /* -2^64 */
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_NEGINT);
    assert_true(zt_value_uint(v) == UINT64_MAX);
}

static void strings(void **state)
{
    (void)state;
    size_t n;
    zt_value *v = OK("\x60");
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_TEXT);
    assert_string_equal(zt_value_data(v, &n), "");
    assert_int_equal(n, 0);
    v = OK("\x64\x49\x45\x54\x46"); /* "IETF" */
    assert_string_equal(zt_value_data(v, &n), "IETF");
    assert_int_equal(n, 4);
    v = OK("\x62\xc3\xbc"); /* "ü" */
    assert_memory_equal(zt_value_data(v, &n), "\xc3\xbc", 2);
    v = OK("\x64\xf0\x90\x85\x91"); /* U+10151 */
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_TEXT);
    /* Text may hold NUL; the length is authoritative, and a NUL follows. */
    v = OK("\x63\x61\x00\x62");
    const char *s = zt_value_data(v, &n);
    assert_int_equal(n, 3);
    assert_memory_equal(s, "a\0b", 4);

    v = OK("\x44\x01\x02\x03\x04");
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_BYTES);
    assert_memory_equal(zt_value_data(v, &n), "\x01\x02\x03\x04", 4);
    assert_int_equal(n, 4);
    /* Byte strings are not UTF-8 checked. */
    v = OK("\x42\xff\xfe");
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_BYTES);
    /* Long head for the length. */
    v = OK("\x78\x03"
           "abc");
    assert_string_equal(zt_value_data(v, NULL), "abc");
    /* Non-string: data is NULL, len 0. */
    n = 99;
    assert_null(zt_value_data(OK("\x01"), &n));
    assert_int_equal(n, 0);
}

static void indefinite_strings(void **state)
{
    (void)state;
    size_t n;
    /* (_ h'0102', h'030405') */
    zt_value *v = OK("\x5f\x42\x01\x02\x43\x03\x04\x05\xff");
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_BYTES);
    assert_memory_equal(zt_value_data(v, &n), "\x01\x02\x03\x04\x05", 5);
    assert_int_equal(n, 5);
    /* (_ "strea", "ming") */
    v = OK("\x7f\x65strea\x64ming\xff");
    assert_string_equal(zt_value_data(v, &n), "streaming");
    /* No chunks at all. */
    v = OK("\x7f\xff");
    assert_string_equal(zt_value_data(v, &n), "");
    assert_int_equal(n, 0);
    /* Inside an array, followed by more items. */
    v = OK("\x82\x7f\x61\x61\x61\x62\xff\x07");
    assert_int_equal(zt_value_count(v), 2);
    assert_string_equal(zt_value_data(zt_value_item(v, 0), NULL), "ab");
    assert_int_equal(zt_value_uint(zt_value_item(v, 1)), 7);
    /* Whole characters in each chunk. */
    v = OK("\x7f\x62\xc3\xbc\x61\x21\xff");
    assert_memory_equal(zt_value_data(v, &n), "\xc3\xbc!", 3);
}

static void indefinite_string_errors(void **state)
{
    (void)state;
    BAD("\x5f\x42\x01\x02", ZT_E_CBOR);         /* no break */
    BAD("\x5f\x61\x61\xff", ZT_E_CBOR);         /* text chunk in a byte string */
    BAD("\x7f\x41\x61\xff", ZT_E_CBOR);         /* byte chunk in a text string */
    BAD("\x7f\x7f\x61\x61\xff\xff", ZT_E_CBOR); /* nested indefinite chunk */
    BAD("\x7f\x01\xff", ZT_E_CBOR);             /* integer chunk */
    BAD("\x7f\x65\x61\x62\xff", ZT_E_CBOR);     /* chunk longer than the input */
    BAD("\x7f\x61\xff\xff", ZT_E_CBOR);         /* joined text is not UTF-8 */
    BAD("\x7f\x61", ZT_E_CBOR);                 /* chunk head then nothing */
    /* RFC 8949 3.2.3: a character split across chunks is invalid even
     * though the joined string would be valid UTF-8. */
    BAD("\x7f\x61\xc3\x61\xbc\xff", ZT_E_CBOR);
}

static void arrays_and_maps(void **state)
{
    (void)state;
    zt_value *v = OK("\x80");
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_ARRAY);
    assert_int_equal(zt_value_count(v), 0);
    assert_null(zt_value_item(v, 0));
    v = OK("\x83\x01\x82\x02\x03\x82\x04\x05"); /* [1, [2, 3], [4, 5]] */
    assert_int_equal(zt_value_count(v), 3);
    assert_int_equal(zt_value_uint(zt_value_item(v, 0)), 1);
    const zt_value *inner = zt_value_item(v, 2);
    assert_int_equal(zt_value_get_kind(inner), ZT_VAL_ARRAY);
    assert_int_equal(zt_value_uint(zt_value_item(inner, 1)), 5);

    v = OK("\xa0");
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_MAP);
    assert_int_equal(zt_value_count(v), 0);
    /* {"a": 1, "b": [2, 3]} */
    v = OK("\xa2\x61\x61\x01\x61\x62\x82\x02\x03");
    assert_int_equal(zt_value_count(v), 2);
    assert_string_equal(zt_value_data(zt_value_key(v, 0), NULL), "a");
    assert_string_equal(zt_value_data(zt_value_key(v, 1), NULL), "b");
    assert_int_equal(zt_value_uint(zt_value_get(v, "a")), 1);
    assert_int_equal(zt_value_count(zt_value_get(v, "b")), 2);
    assert_null(zt_value_get(v, "c"));
    assert_null(zt_value_key(v, 2));
    /* zt_value_get needs a map and a text key. */
    assert_null(zt_value_get(zt_value_get(v, "b"), "a"));
    assert_null(zt_value_get(NULL, "a"));
    /* Map keys may be of any type: {1: 2, 3: 4}. */
    v = OK("\xa2\x01\x02\x03\x04");
    assert_int_equal(zt_value_uint(zt_value_key(v, 1)), 3);
    assert_int_equal(zt_value_uint(zt_value_item(v, 1)), 4);
    assert_null(zt_value_get(v, "1"));
    /* The order of the input is kept. */
    v = OK("\xa2\x61\x7a\x01\x61\x61\x02");
    assert_string_equal(zt_value_data(zt_value_key(v, 0), NULL), "z");
}

static void indefinite_containers(void **state)
{
    (void)state;
    /* [_ 1, [2, 3], [_ 4, 5]] */
    zt_value *v = OK("\x9f\x01\x82\x02\x03\x9f\x04\x05\xff\xff");
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_ARRAY);
    assert_int_equal(zt_value_count(v), 3);
    assert_int_equal(zt_value_count(zt_value_item(v, 2)), 2);
    assert_int_equal(zt_value_uint(zt_value_item(zt_value_item(v, 2), 1)), 5);
    /* {_ "a": 1, "b": [_ 2, 3]} */
    v = OK("\xbf\x61\x61\x01\x61\x62\x9f\x02\x03\xff\xff");
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_MAP);
    assert_int_equal(zt_value_count(v), 2);
    assert_int_equal(zt_value_uint(zt_value_item(zt_value_get(v, "b"), 1)), 3);
    v = OK("\x9f\xff");
    assert_int_equal(zt_value_count(v), 0);
    v = OK("\xbf\xff");
    assert_int_equal(zt_value_count(v), 0);
    /* ["a", {_ "b": "c"}] */
    v = OK("\x82\x61\x61\xbf\x61\x62\x61\x63\xff");
    assert_string_equal(zt_value_data(zt_value_get(zt_value_item(v, 1), "b"), NULL), "c");
}

static void container_errors(void **state)
{
    (void)state;
    BAD("\x82\x01", ZT_E_CBOR);         /* one item short */
    BAD("\xa1\x61\x61", ZT_E_CBOR);     /* key without value */
    BAD("\x9f\x01\x02", ZT_E_CBOR);     /* no break */
    BAD("\xbf\x61\x61\xff", ZT_E_CBOR); /* indefinite map ends after a key */
    BAD("\xff", ZT_E_CBOR);             /* break at top level */
    BAD("\x82\x01\xff", ZT_E_CBOR);     /* break in a definite array */
    BAD("\x81\xff", ZT_E_CBOR);
    BAD("\x1f", ZT_E_CBOR); /* indefinite integer */
    BAD("\x3f", ZT_E_CBOR);
    BAD("\xdf\x01", ZT_E_CBOR); /* indefinite tag */
}

static void declared_counts_are_checked_against_input(void **state)
{
    (void)state;
    /* An array declaring 2^32-1 or 2^64-1 items in a few bytes is refused
     * before any allocation sized by the count. */
    BAD("\x9a\xff\xff\xff\xff\x01", ZT_E_CBOR);
    BAD("\x9b\xff\xff\xff\xff\xff\xff\xff\xff\x01", ZT_E_CBOR);
    BAD("\xbb\x80\x00\x00\x00\x00\x00\x00\x00\x01\x02", ZT_E_CBOR); /* 2*count overflows */
    BAD("\xba\x00\x00\x00\x02\x01\x02\x03", ZT_E_CBOR);             /* 4 items, 3 bytes */
    BAD("\x5b\xff\xff\xff\xff\xff\xff\xff\xff\x00", ZT_E_CBOR);     /* huge byte string */
    BAD("\x7a\x00\x01\x00\x00"
        "abc",
        ZT_E_CBOR);
    assert_non_null(strstr(g_err.message, "bytes"));
}

static void truncated_heads(void **state)
{
    (void)state;
    BAD("", ZT_E_CBOR);
    BAD("\x18", ZT_E_CBOR);
    BAD("\x19\x01", ZT_E_CBOR);
    BAD("\x1a\x01\x02\x03", ZT_E_CBOR);
    BAD("\x1b\x01\x02\x03\x04\x05\x06\x07", ZT_E_CBOR);
    BAD("\xf9\x3c", ZT_E_CBOR);
    BAD("\x63\x61\x62", ZT_E_CBOR); /* text shorter than declared */
    BAD("\xc1", ZT_E_CBOR);         /* tag with no content */
}

static void reserved_additional_information(void **state)
{
    (void)state;
    for (uint8_t major = 0; major < 8; major++)
        for (uint8_t ai = 28; ai <= 30; ai++) {
            uint8_t b[3] = {(uint8_t)(major << 5 | ai), 0, 0};
            ASSERT_ST(dec_depth(b, sizeof b, ZT_MAX_DEPTH, &(zt_value *){0}), ZT_E_CBOR);
            assert_non_null(strstr(g_err.message, "reserved"));
        }
}

static void trailing_bytes(void **state)
{
    (void)state;
    BAD("\x01\x02", ZT_E_CBOR);
    assert_non_null(strstr(g_err.message, "trailing"));
    BAD("\xa0\x00", ZT_E_CBOR);
    BAD("\x80\xff", ZT_E_CBOR);
}

static void simple_values(void **state)
{
    (void)state;
    assert_int_equal(zt_value_get_kind(OK("\xf4")), ZT_VAL_FALSE);
    assert_int_equal(zt_value_get_kind(OK("\xf5")), ZT_VAL_TRUE);
    assert_int_equal(zt_value_get_kind(OK("\xf6")), ZT_VAL_NULL);
    assert_int_equal(zt_value_get_kind(OK("\xf7")), ZT_VAL_UNDEFINED);
    zt_value *v = OK("\xf0"); /* simple(16) */
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_SIMPLE);
    assert_int_equal(zt_value_uint(v), 16);
    v = OK("\xf8\xff"); /* simple(255) */
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_SIMPLE);
    assert_int_equal(zt_value_uint(v), 255);
    v = OK("\xf8\x20");
    assert_int_equal(zt_value_uint(v), 32);
    /* Two-byte simple values below 32 are not well-formed (RFC 8949 3.3). */
    BAD("\xf8\x00", ZT_E_CBOR);
    BAD("\xf8\x18", ZT_E_CBOR);
    BAD("\xf8\x1f", ZT_E_CBOR);
}

static void floats(void **state)
{
    (void)state;
    struct {
        const char *b;
        size_t n;
        double v;
    } cases[] = {
        {"\xf9\x00\x00", 3, 0.0},
        {"\xf9\x3c\x00", 3, 1.0},
        {"\xf9\x3e\x00", 3, 1.5},
        {"\xf9\x7b\xff", 3, 65504.0},
        {"\xf9\x00\x01", 3, 5.960464477539063e-8}, /* smallest subnormal half */
        {"\xf9\x04\x00", 3, 0.00006103515625},     /* smallest normal half */
        {"\xf9\xc4\x00", 3, -4.0},
        {"\xfa\x47\xc3\x50\x00", 5, 100000.0},
        {"\xfa\x7f\x7f\xff\xff", 5, 3.4028234663852886e+38},
        {"\xfb\x3f\xf1\x99\x99\x99\x99\x99\x9a", 9, 1.1},
        {"\xfb\x7e\x37\xe4\x3c\x88\x00\x75\x9c", 9, 1.0e+300},
        {"\xfb\xc0\x10\x66\x66\x66\x66\x66\x66", 9, -4.1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        zt_value *v = ok(cases[i].b, cases[i].n);
        assert_int_equal(zt_value_get_kind(v), ZT_VAL_FLOAT);
        if (zt_value_float(v) != cases[i].v)
            fail_msg("case %zu: got %.17g, want %.17g", i, zt_value_float(v), cases[i].v);
    }
    zt_value *v = OK("\xf9\x80\x00"); /* -0.0 */
    assert_true(zt_value_float(v) == 0.0 && signbit(zt_value_float(v)));
    assert_true(isinf(zt_value_float(OK("\xf9\x7c\x00"))) &&
                zt_value_float(OK("\xf9\x7c\x00")) > 0);
    assert_true(isinf(zt_value_float(OK("\xf9\xfc\x00"))) &&
                zt_value_float(OK("\xf9\xfc\x00")) < 0);
    assert_true(isnan(zt_value_float(OK("\xf9\x7e\x00"))));
    assert_true(isinf(zt_value_float(OK("\xfa\x7f\x80\x00\x00"))));
    assert_true(isnan(zt_value_float(OK("\xfa\x7f\xc0\x00\x00"))));
    assert_true(isinf(zt_value_float(OK("\xfb\xff\xf0\x00\x00\x00\x00\x00\x00"))));
    assert_true(isnan(zt_value_float(OK("\xfb\x7f\xf8\x00\x00\x00\x00\x00\x00"))));
    /* zt_value_float of a non-float is 0. */
    assert_true(zt_value_float(OK("\x05")) == 0.0);
}

static void tags(void **state)
{
    (void)state;
    /* 1(1363896240) */
    zt_value *v = OK("\xc1\x1a\x51\x4b\x67\xb0");
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_TAG);
    assert_int_equal(zt_value_uint(v), 1);
    assert_int_equal(zt_value_uint(zt_value_item(v, 0)), 1363896240);
    assert_null(zt_value_item(v, 1));
    /* 0("2013-03-21T20:04:00Z") */
    v = OK("\xc0\x74"
           "2013-03-21T20:04:00Z");
    assert_int_equal(zt_value_uint(v), 0);
    assert_string_equal(zt_value_data(zt_value_item(v, 0), NULL), "2013-03-21T20:04:00Z");
    /* Nested tags and a 64-bit tag number. */
    v = OK("\xdb\xff\xff\xff\xff\xff\xff\xff\xff\xd8\x20\x80");
    assert_true(zt_value_uint(v) == UINT64_MAX);
    const zt_value *in = zt_value_item(v, 0);
    assert_int_equal(zt_value_get_kind(in), ZT_VAL_TAG);
    assert_int_equal(zt_value_uint(in), 32);
    assert_int_equal(zt_value_get_kind(zt_value_item(in, 0)), ZT_VAL_ARRAY);
    /* A tag inside an array, followed by another item. */
    v = OK("\x82\xc2\x41\x01\x05");
    assert_int_equal(zt_value_get_kind(zt_value_item(v, 0)), ZT_VAL_TAG);
    assert_int_equal(zt_value_uint(zt_value_item(v, 1)), 5);
}

static void invalid_utf8(void **state)
{
    (void)state;
    BAD("\x61\x80", ZT_E_CBOR);             /* lone continuation */
    BAD("\x61\xc3", ZT_E_CBOR);             /* truncated 2-byte */
    BAD("\x62\xc0\xaf", ZT_E_CBOR);         /* overlong '/' */
    BAD("\x63\xe0\x80\xaf", ZT_E_CBOR);     /* overlong 3-byte */
    BAD("\x64\xf0\x80\x80\xaf", ZT_E_CBOR); /* overlong 4-byte */
    BAD("\x63\xed\xa0\x80", ZT_E_CBOR);     /* surrogate U+D800 */
    BAD("\x64\xf4\x90\x80\x80", ZT_E_CBOR); /* U+110000 */
    BAD("\x61\xff", ZT_E_CBOR);
    BAD("\x62\xe2\x82", ZT_E_CBOR);     /* truncated 3-byte at the end */
    BAD("\x63\xe2\x28\xa1", ZT_E_CBOR); /* bad continuation */
    assert_non_null(strstr(g_err.message, "UTF-8"));
    /* Map keys are checked too. */
    BAD("\xa1\x61\xff\x01", ZT_E_CBOR);
    /* Boundaries that are valid. */
    OK("\x63\xef\xbf\xbf");     /* U+FFFF */
    OK("\x64\xf4\x8f\xbf\xbf"); /* U+10FFFF */
    OK("\x63\xed\x9f\xbf");     /* U+D7FF */
    OK("\x62\xc2\x80");         /* U+0080 */
}

static void depth_limit(void **state)
{
    (void)state;
    uint8_t b[200];
    zt_value *v;
    /* 64 nested arrays are allowed, the 65th is not. */
    memset(b, 0x81, sizeof b);
    b[63] = 0x80;
    ASSERT_OK(dec_depth(b, 64, ZT_MAX_DEPTH, &v), &g_err);
    b[63] = 0x81;
    b[64] = 0x80;
    ASSERT_ST(dec_depth(b, 65, ZT_MAX_DEPTH, &v), ZT_E_DEPTH);
    /* A caller's smaller limit is honoured... */
    memset(b, 0x81, sizeof b);
    b[3] = 0x80;
    ASSERT_OK(dec_depth(b, 4, 4, &v), &g_err);
    ASSERT_ST(dec_depth(b, 4, 3, &v), ZT_E_DEPTH);
    /* ...a larger one (or 0) is capped at ZT_MAX_DEPTH. */
    memset(b, 0x81, sizeof b);
    b[99] = 0x80;
    ASSERT_ST(dec_depth(b, 100, 1000, &v), ZT_E_DEPTH);
    ASSERT_ST(dec_depth(b, 100, 0, &v), ZT_E_DEPTH);
    /* Tags count as nesting, and indefinite containers too. */
    memset(b, 0xc1, sizeof b);
    b[99] = 0x00;
    ASSERT_ST(dec_depth(b, 100, ZT_MAX_DEPTH, &v), ZT_E_DEPTH);
    memset(b, 0x9f, sizeof b);
    ASSERT_ST(dec_depth(b, 100, ZT_MAX_DEPTH, &v), ZT_E_DEPTH);
    /* Leaves do not count: a 64-deep array around a scalar is fine. */
    memset(b, 0x81, 64);
    b[64] = 0x07;
    ASSERT_OK(dec_depth(b, 65, ZT_MAX_DEPTH, &v), &g_err);
}

static void deep_input_is_cheap(void **state)
{
    (void)state;
    /* A megabyte of '[' (or of map heads) fails at depth 65, without
     * recursion or memory growth. */
    size_t n = 1 << 20;
    uint8_t *b = malloc(n);
    memset(b, 0x9f, n);
    zt_value *v;
    ASSERT_ST(dec_depth(b, n, ZT_MAX_DEPTH, &v), ZT_E_DEPTH);
    assert_true(g_err.has_offset);
    assert_int_equal(g_err.offset, 64);
    memset(b, 0xbf, n);
    ASSERT_ST(dec_depth(b, n, ZT_MAX_DEPTH, &v), ZT_E_DEPTH);
    free(b);
}

static void wide_input(void **state)
{
    (void)state;
    /* 200000 items in one indefinite array, and in one definite map: the
     * value stack grows as items are actually decoded. */
    size_t items = 200000;
    tb b = {0};
    tb_byte(&b, 0x9f);
    for (size_t i = 0; i < items; i++)
        tb_uint(&b, i);
    tb_byte(&b, 0xff);
    zt_value *v = ok((const char *)b.p, b.len);
    assert_int_equal(zt_value_count(v), items);
    assert_int_equal(zt_value_uint(zt_value_item(v, items - 1)), items - 1);
    tb_free(&b);

    tb_map(&b, items);
    char key[32];
    for (size_t i = 0; i < items; i++) {
        snprintf(key, sizeof key, "k%zu", i);
        tb_text(&b, key);
        tb_array(&b, 1);
        tb_uint(&b, i);
    }
    v = ok((const char *)b.p, b.len);
    assert_int_equal(zt_value_count(v), items);
    assert_int_equal(zt_value_uint(zt_value_item(zt_value_get(v, "k199999"), 0)), 199999);
    tb_free(&b);
}

static void error_offsets(void **state)
{
    (void)state;
    /* Offsets in messages are relative to base_offset: the manifest's place
     * in the file. */
    const uint8_t b[] = {0x82, 0x01, 0x61, 0xff};
    zt__cbor_limits lim = {ZT_MAX_DEPTH, 1000, false};
    zt_value *v;
    zt_error err;
    ASSERT_ST(zt__cbor_decode(b, sizeof b, &lim, &g_arena, &v, &err), ZT_E_CBOR);
    assert_true(err.has_offset);
    assert_int_equal(err.offset, 1002);
    assert_non_null(strstr(err.message, "1002"));
    /* No limits at all: defaults apply. */
    ASSERT_OK(zt__cbor_decode((const uint8_t *)"\x80", 1, NULL, &g_arena, &v, &err), &err);
    /* NULL err is allowed. */
    ASSERT_ST(zt__cbor_decode(b, sizeof b, NULL, &g_arena, &v, NULL), ZT_E_CBOR);
}

static void realistic_manifest_and_its_prefixes(void **state)
{
    (void)state;
    /* A realistic manifest, built by the test's own encoder. */
    tb m = {0};
    tb_map(&m, 3);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    tb_text(&m, "attributes");
    tb_map(&m, 2);
    tb_text(&m, "framework");
    tb_text(&m, "PyTorch");
    tb_text(&m, "epoch");
    tb_neg(&m, 4);
    tb_text(&m, "objects");
    tb_map(&m, 1);
    tb_text(&m, "w");
    uint64_t shape[2] = {2, 3};
    tcomp c = {"f32", 64, 24, NULL, UINT64_MAX, NULL, NULL};
    tb_dense(&m, 2, shape, &c);
    zt_value *v = ok((const char *)m.p, m.len);
    assert_string_equal(zt_value_data(zt_value_get(v, "version"), NULL), "1.2.0");
    const zt_value *a = zt_value_get(v, "attributes");
    assert_int_equal(zt_value_get_kind(zt_value_get(a, "epoch")), ZT_VAL_NEGINT);
    assert_int_equal(zt_value_uint(zt_value_get(a, "epoch")), 4);
    const zt_value *w = zt_value_get(zt_value_get(v, "objects"), "w");
    const zt_value *data = zt_value_get(zt_value_get(w, "components"), "data");
    assert_int_equal(zt_value_uint(zt_value_get(data, "length")), 24);
    assert_int_equal(zt_value_uint(zt_value_item(zt_value_get(w, "shape"), 1)), 3);
    /* Every strict prefix is rejected. */
    for (size_t k = 0; k < m.len; k++)
        assert_int_not_equal(dec_depth(m.p, k, ZT_MAX_DEPTH, &v), ZT_OK);
    tb_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(unsigned_integers, setup, teardown),
        cmocka_unit_test_setup_teardown(negative_integers, setup, teardown),
        cmocka_unit_test_setup_teardown(strings, setup, teardown),
        cmocka_unit_test_setup_teardown(indefinite_strings, setup, teardown),
        cmocka_unit_test_setup_teardown(indefinite_string_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(arrays_and_maps, setup, teardown),
        cmocka_unit_test_setup_teardown(indefinite_containers, setup, teardown),
        cmocka_unit_test_setup_teardown(container_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(declared_counts_are_checked_against_input, setup, teardown),
        cmocka_unit_test_setup_teardown(truncated_heads, setup, teardown),
        cmocka_unit_test_setup_teardown(reserved_additional_information, setup, teardown),
        cmocka_unit_test_setup_teardown(trailing_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(simple_values, setup, teardown),
        cmocka_unit_test_setup_teardown(floats, setup, teardown),
        cmocka_unit_test_setup_teardown(tags, setup, teardown),
        cmocka_unit_test_setup_teardown(invalid_utf8, setup, teardown),
        cmocka_unit_test_setup_teardown(depth_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(deep_input_is_cheap, setup, teardown),
        cmocka_unit_test_setup_teardown(wide_input, setup, teardown),
        cmocka_unit_test_setup_teardown(error_offsets, setup, teardown),
        cmocka_unit_test_setup_teardown(realistic_manifest_and_its_prefixes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
