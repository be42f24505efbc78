/*
 * test_text.c: the server's one home for hex digits (server/core/hex.c) and for UTF-8
 * validation (server/utf8.c), which the router and the catalog share.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "core/hex.h"
#include "core/utf8.h"

static void hex_both_ways(void **state)
{
    (void)state;
    const uint8_t in[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
    char out[2 * sizeof(in) + 1];
    ztd_hex_encode(in, sizeof(in), out);
    assert_string_equal(out, "00017f80abff");
    uint8_t back[sizeof(in)];
    assert_int_equal(ztd_hex_decode("00017F80ABff", sizeof(in), back), 0);
    assert_memory_equal(back, in, sizeof(in));
    assert_int_equal(ztd_hex_decode("0g", 1, back), -1);
    assert_int_equal(ztd_hex_decode("g0", 1, back), -1);
    assert_int_equal(ztd_hex_decode("0", 0, back), 0);
    assert_int_equal(ztd_hex_value('a'), 10);
    assert_int_equal(ztd_hex_value('F'), 15);
    assert_int_equal(ztd_hex_value('9'), 9);
    assert_int_equal(ztd_hex_value('G'), -1);
    assert_int_equal(ztd_hex_value('\0'), -1);
    assert_int_equal(ztd_hex_digit(0x1c), 'c');
    assert_int_equal(ztd_hex_digit_upper(0xc), 'C');
}

static void percent_encode_path(void **state)
{
    (void)state;
    char out[64];
    assert_true(ztd_percent_encode_path("m/a-b_c.~z.zt", out, sizeof(out)));
    assert_string_equal(out, "m/a-b_c.~z.zt");
    assert_true(ztd_percent_encode_path("a b%?#\xc3\xa9", out, sizeof(out)));
    assert_string_equal(out, "a%20b%25%3F%23%C3%A9");
    /* too small: terminated, cut before a whole escape, and said */
    assert_false(ztd_percent_encode_path("abc def", out, 7));
    assert_string_equal(out, "abc%20");
    assert_false(ztd_percent_encode_path("abc def", out, 6));
    assert_string_equal(out, "abc");
    assert_false(ztd_percent_encode_path("abcdefgh", out, 5));
    assert_string_equal(out, "ab");
    assert_true(ztd_percent_encode_path("", out, 1));
    assert_string_equal(out, "");
}

static bool valid(const char *s)
{
    return ztd_utf8_valid(s, strlen(s));
}

static void utf8_accepts(void **state)
{
    (void)state;
    assert_true(valid(""));
    assert_true(valid("plain ascii"));
    assert_true(valid("\xc2\x80"));         /* U+0080 */
    assert_true(valid("caf\xc3\xa9"));      /* é */
    assert_true(valid("\xe0\xa0\x80"));     /* U+0800 */
    assert_true(valid("\xed\x9f\xbf"));     /* U+D7FF */
    assert_true(valid("\xee\x80\x80"));     /* U+E000 */
    assert_true(valid("\xf0\x90\x80\x80")); /* U+10000 */
    assert_true(valid("\xf4\x8f\xbf\xbf")); /* U+10FFFF */
    assert_true(ztd_utf8_valid("a\0b", 3)); /* NUL is valid UTF-8 */
}

static void utf8_refuses(void **state)
{
    (void)state;
    assert_false(valid("\x80"));             /* continuation first */
    assert_false(valid("\xc0\x80"));         /* overlong NUL */
    assert_false(valid("\xc1\xbf"));         /* overlong */
    assert_false(valid("\xe0\x9f\xbf"));     /* overlong 3-byte */
    assert_false(valid("\xed\xa0\x80"));     /* surrogate U+D800 */
    assert_false(valid("\xf0\x8f\xbf\xbf")); /* overlong 4-byte */
    assert_false(valid("\xf4\x90\x80\x80")); /* above U+10FFFF */
    assert_false(valid("\xf5\x80\x80\x80"));
    assert_false(valid("\xff"));
    assert_false(valid("\xc3")); /* cut short */
    assert_false(valid("\xe2\x82"));
    assert_false(valid("\xe2\x28\xa1")); /* bad continuation */
    /* a sequence cut by the length, though the bytes go on */
    assert_false(ztd_utf8_valid("\xc3\xa9", 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hex_both_ways),
        cmocka_unit_test(percent_encode_path),
        cmocka_unit_test(utf8_accepts),
        cmocka_unit_test(utf8_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
