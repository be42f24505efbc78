/*
 * test_auth.c: the tokens file parser and the Authorization check of server/http/auth.c.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "http/auth.h"

#define READ_TOK "r0123456789abcdef"
#define WRITE_TOK "w0123456789abcdef+/=~._-"

static ztd_tokens *parse(const char *text, char *err, size_t cap)
{
    err[0] = 0;
    return ztd_tokens_parse(text, strlen(text), err, cap);
}

static void tokens_file(void **state)
{
    (void)state;
    char err[256];
    ztd_tokens *t = parse("# comment\n\n  read " READ_TOK "\r\nwrite\t" WRITE_TOK "  \n"
                          "   # indented comment\n",
                          err, sizeof(err));
    assert_non_null(t);
    assert_int_equal(ztd_tokens_count(t), 2);
    ztd_tokens_free(t);
    t = parse("", err, sizeof(err));
    assert_non_null(t);
    assert_int_equal(ztd_tokens_count(t), 0);
    ztd_tokens_free(t);
    /* the last line needs no newline */
    t = parse("read " READ_TOK, err, sizeof(err));
    assert_non_null(t);
    assert_int_equal(ztd_tokens_count(t), 1);
    ztd_tokens_free(t);
    ztd_tokens_free(NULL);
    assert_int_equal(ztd_tokens_count(NULL), 0);
}

static void tokens_file_errors(void **state)
{
    (void)state;
    char err[256], big[700];
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"admin " READ_TOK "\n", "line 1: scope must be"},
        {"\nREAD " READ_TOK "\n", "line 2: scope must be"},
        {"read\n", "line 1: want"},
        {"read " READ_TOK " extra\n", "line 1: want"},
        {"read short\n", "line 1: a token must be 16 to 512"},
        {"read r0123456789abc\"ef\n", "line 1: a token may only hold"},
        {"read r0123456789abcdef\x01\n", "line 1: a token may only hold"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ztd_tokens *t = parse(bad[i].text, err, sizeof(err));
        if (t || strncmp(err, bad[i].why, strlen(bad[i].why)))
            fail_msg("%s: got \"%s\"", bad[i].text, err);
    }
    memcpy(big, "read ", 5);
    memset(big + 5, 'a', 513);
    big[518] = 0;
    assert_null(parse(big, err, sizeof(err)));
    big[517] = 0; /* 512 characters: the longest */
    ztd_tokens *t = parse(big, err, sizeof(err));
    assert_non_null(t);
    ztd_tokens_free(t);
    /* a NUL inside the text is not a token character */
    assert_null(ztd_tokens_parse("read r0123456789ab\0cdef\n", 24, err, sizeof(err)));
}

static void authorization(void **state)
{
    (void)state;
    char err[256];
    ztd_tokens *t = parse("read " READ_TOK "\nwrite " WRITE_TOK "\n", err, sizeof(err));
    assert_non_null(t);
    assert_int_equal(ztd_auth_check(t, NULL, ZTD_SCOPE_READ), ZTD_AUTH_MISSING);
    assert_int_equal(ztd_auth_check(t, "Basic abc", ZTD_SCOPE_READ), ZTD_AUTH_MISSING);
    assert_int_equal(ztd_auth_check(t, "Bearer", ZTD_SCOPE_READ), ZTD_AUTH_MISSING);
    assert_int_equal(ztd_auth_check(t, "Bearer ", ZTD_SCOPE_READ), ZTD_AUTH_INVALID);
    assert_int_equal(ztd_auth_check(t, "Bearer " READ_TOK, ZTD_SCOPE_READ), ZTD_AUTH_OK);
    assert_int_equal(ztd_auth_check(t, "  bearer   " READ_TOK " \t", ZTD_SCOPE_READ), ZTD_AUTH_OK);
    assert_int_equal(ztd_auth_check(t, "Bearer " READ_TOK, ZTD_SCOPE_WRITE), ZTD_AUTH_FORBIDDEN);
    assert_int_equal(ztd_auth_check(t, "Bearer " WRITE_TOK, ZTD_SCOPE_WRITE), ZTD_AUTH_OK);
    assert_int_equal(ztd_auth_check(t, "Bearer " WRITE_TOK, ZTD_SCOPE_READ), ZTD_AUTH_OK);
    /* a prefix, an extension, or another case of a token is not the token */
    assert_int_equal(ztd_auth_check(t, "Bearer r0123456789abcde", ZTD_SCOPE_READ),
                     ZTD_AUTH_INVALID);
    assert_int_equal(ztd_auth_check(t, "Bearer " READ_TOK "0", ZTD_SCOPE_READ), ZTD_AUTH_INVALID);
    assert_int_equal(ztd_auth_check(t, "Bearer R0123456789ABCDEF", ZTD_SCOPE_READ),
                     ZTD_AUTH_INVALID);
    char huge[600] = "Bearer ";
    memset(huge + 7, 'a', 520);
    huge[527] = 0;
    assert_int_equal(ztd_auth_check(t, huge, ZTD_SCOPE_READ), ZTD_AUTH_INVALID);
    assert_int_equal(ztd_auth_check(NULL, "Bearer " READ_TOK, ZTD_SCOPE_READ), ZTD_AUTH_INVALID);
    ztd_tokens_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tokens_file),
        cmocka_unit_test(tokens_file_errors),
        cmocka_unit_test(authorization),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
