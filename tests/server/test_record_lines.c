/* core/record_lines.c: the line records of the tokens and S3 keys files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/record_lines.h"

static bool next(ztd_records *it, ztd_record *r)
{
    return ztd_records_next(it, r);
}

static void skips_blank_and_comment_lines(void **st)
{
    (void)st;
    const char *t = "\n   \t\r\n# a comment\n  # indented comment\nread abc\n";
    ztd_records it;
    ztd_record r;
    ztd_records_init(&it, t, strlen(t));
    assert_true(next(&it, &r));
    assert_int_equal(r.lineno, 5);
    assert_int_equal(r.n, 2);
    assert_memory_equal(r.f[0], "read", 4);
    assert_int_equal(r.len[1], 3);
    assert_false(next(&it, &r));
}

static void fields_split_on_blanks_and_crlf(void **st)
{
    (void)st;
    const char *t = "write\tAKID  secret\r\nread x";
    ztd_records it;
    ztd_record r;
    ztd_records_init(&it, t, strlen(t));
    assert_true(next(&it, &r));
    assert_int_equal(r.n, 3);
    assert_int_equal(r.len[2], 6); /* no CR */
    assert_memory_equal(r.f[2], "secret", 6);
    assert_true(next(&it, &r)); /* last line without a newline */
    assert_int_equal(r.lineno, 2);
    assert_int_equal(r.n, 2);
    assert_false(next(&it, &r));
}

static void counts_every_field_keeps_four(void **st)
{
    (void)st;
    const char *t = "a b c d e f";
    ztd_records it;
    ztd_record r;
    ztd_records_init(&it, t, strlen(t));
    assert_true(next(&it, &r));
    assert_int_equal(r.n, 6);
    assert_memory_equal(r.f[3], "d", 1);
}

static void a_nul_is_a_field_byte_not_an_end(void **st)
{
    (void)st;
    const char t[] = {'r', 'e', 'a', 'd', ' ', 'a', 0, 'b', '\n'};
    ztd_records it;
    ztd_record r;
    ztd_records_init(&it, t, sizeof(t));
    assert_true(next(&it, &r));
    assert_int_equal(r.n, 2);
    assert_int_equal(r.len[1], 3);
}

static void scopes(void **st)
{
    (void)st;
    assert_int_equal(ztd_record_scope("read", 4), 1);
    assert_int_equal(ztd_record_scope("write", 5), 2);
    assert_int_equal(ztd_record_scope("rea", 3), 0);
    assert_int_equal(ztd_record_scope("reads", 5), 0);
    assert_int_equal(ztd_record_scope("WRITE", 5), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(skips_blank_and_comment_lines),
        cmocka_unit_test(fields_split_on_blanks_and_crlf),
        cmocka_unit_test(counts_every_field_keeps_four),
        cmocka_unit_test(a_nul_is_a_field_byte_not_an_end),
        cmocka_unit_test(scopes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
