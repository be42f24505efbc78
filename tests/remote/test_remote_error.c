/*
 * test_remote_error.c: libztensor-remote's error messages
 * (lib/remote/remote_error.c) are the core's, built by the core's own
 * builder, followed by the URL; and the URL survives a message long enough
 * to fill zt_error.message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "remote_internal.h"

/* A name longer than any per-library cut, shorter than zt_error.object. */
static void fill(char *s, size_t n, char c)
{
    memset(s, c, n - 1);
    s[n - 1] = 0;
}

/* The core's builder, as the core's own errors call it. */
static void core_fail(zt_error *e, zt_status code, const char *obj, const char *comp, int has_off,
                      uint64_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    zt_error_vset(e, code, obj, comp, has_off, off, fmt, ap);
    va_end(ap);
}

static void core_message_then_url(void **state)
{
    (void)state;
    char obj[181];
    fill(obj, sizeof(obj), 'o');
    zt_error core, remote;
    memset(&core, 0x55, sizeof(core));
    memset(&remote, 0x55, sizeof(remote));
    ztr__fail(&remote, ZT_E_HTTP, "http://127.0.0.1/m.zt", obj, "data", 1, 9, "status %d", 503);
    core_fail(&core, ZT_E_HTTP, obj, "data", 1, 9, "status %d", 503);
    size_t n = strlen(core.message);
    assert_true(n > 180);
    assert_memory_equal(remote.message, core.message, n);
    assert_string_equal(remote.message + n, " [http://127.0.0.1/m.zt]");
    assert_string_equal(remote.object, obj);
    assert_string_equal(remote.component, "data");
    assert_int_equal(remote.offset, 9);
}

static void long_message_keeps_the_url(void **state)
{
    (void)state;
    char obj[255], comp[127], detail[600];
    fill(obj, sizeof(obj), 'o');
    fill(comp, sizeof(comp), 'c');
    fill(detail, sizeof(detail), 'd');
    const char *url = "http://127.0.0.1:8080/models/long-name.zt";
    zt_error e;
    memset(&e, 0x55, sizeof(e));
    assert_int_equal(ztr__fail(&e, ZT_E_HTTP, url, obj, comp, 0, 0, "%s", detail), ZT_E_HTTP);
    size_t n = strnlen(e.message, sizeof(e.message));
    assert_true(n < sizeof(e.message));
    char tail[128];
    snprintf(tail, sizeof(tail), "... [%s]", url);
    assert_true(n > strlen(tail));
    assert_string_equal(e.message + n - strlen(tail), tail);
    assert_memory_equal(e.message, "ZT_E_HTTP: ddd", 14);
}

static void url_added_to_a_core_message(void **state)
{
    (void)state;
    zt_error e;
    memset(&e, 0, sizeof(e));
    strcpy(e.message, "ZT_E_IO: read failed");
    ztr__add_url(&e, "http://127.0.0.1/a.zt");
    assert_string_equal(e.message, "ZT_E_IO: read failed [http://127.0.0.1/a.zt]");
    ztr__add_url(NULL, "x");
    ztr__add_url(&e, NULL);
    assert_string_equal(e.message, "ZT_E_IO: read failed [http://127.0.0.1/a.zt]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(core_message_then_url),
        cmocka_unit_test(long_message_keeps_the_url),
        cmocka_unit_test(url_added_to_a_core_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
