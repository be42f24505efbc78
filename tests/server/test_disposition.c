/*
 * test_disposition.c: Content-Disposition values (server/http/disposition.c):
 * plain names quoted as they are, quotes and backslashes escaped, anything
 * else (UTF-8, controls) percent-encoded in filename* with an ASCII fallback,
 * and a buffer too small refused, never overrun.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "http/disposition.h"

static void check(const char *name, const char *want)
{
    char out[256];
    assert_true(ztd_content_disposition(name, out, sizeof(out)));
    assert_string_equal(out, want);
}

static void plain_names(void **state)
{
    (void)state;
    check("model.safetensors", "attachment; filename=\"model.safetensors\"");
    check("a b;c=d.safetensors", "attachment; filename=\"a b;c=d.safetensors\"");
    check("q\"x\\y.safetensors", "attachment; filename=\"q\\\"x\\\\y.safetensors\"");
}

static void other_names(void **state)
{
    (void)state;
    check("m\xc3\xa9t\xc3\xa9o.safetensors", /* météo */
          "attachment; filename=\"m__t__o.safetensors\"; "
          "filename*=UTF-8''m%C3%A9t%C3%A9o.safetensors");
    /* a CR LF never reaches the header line */
    check("a\r\nX: y.safetensors", "attachment; filename=\"a__X: y.safetensors\"; "
                                   "filename*=UTF-8''a%0D%0AX%3A%20y.safetensors");
}

static void too_small(void **state)
{
    (void)state;
    char out[16];
    memset(out, 'z', sizeof(out));
    assert_false(ztd_content_disposition("model.safetensors", out, sizeof(out)));
    assert_int_equal(strlen(out), sizeof(out) - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_names),
        cmocka_unit_test(other_names),
        cmocka_unit_test(too_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
