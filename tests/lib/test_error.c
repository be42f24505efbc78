/*
 * test_error.c: the message builder every module uses (lib/src/common/error.c). A
 * message names the status, the object, the component and the byte offset;
 * one too long for zt_error.message is cut and says so with "...", never
 * overflows, and keeps the fields it was given.
 */
#include "zt_test.h"

#include "internal.h"

static void names_object_component_offset(void **state)
{
    (void)state;
    zt_error e;
    memset(&e, 0x55, sizeof(e));
    assert_int_equal(zt__fail(&e, ZT_E_SIZE, "w", "data", 1, 4096, "%d bytes short", 12),
                     ZT_E_SIZE);
    assert_string_equal(e.message,
                        "ZT_E_SIZE: 12 bytes short (object \"w\", component \"data\", byte 4096)");
    assert_string_equal(e.object, "w");
    assert_string_equal(e.component, "data");
    assert_int_equal(e.has_offset, 1);
    assert_int_equal(e.offset, 4096);
}

static void long_message_is_cut_and_marked(void **state)
{
    (void)state;
    char obj[255], comp[127], detail[600];
    memset(obj, 'o', sizeof(obj) - 1);
    obj[sizeof(obj) - 1] = 0;
    memset(comp, 'c', sizeof(comp) - 1);
    comp[sizeof(comp) - 1] = 0;
    memset(detail, 'd', sizeof(detail) - 1);
    detail[sizeof(detail) - 1] = 0;
    zt_error e;
    memset(&e, 0x55, sizeof(e));
    zt__fail(&e, ZT_E_SIZE, obj, comp, 1, 1, "%s", detail);
    size_t n = strnlen(e.message, sizeof(e.message));
    assert_int_equal(n, sizeof(e.message) - 1);
    assert_string_equal(e.message + n - 3, "...");
    assert_memory_equal(e.message, "ZT_E_SIZE: ddd", 14);
    assert_string_equal(e.object, obj);
    assert_string_equal(e.component, comp);
}

static void message_that_fits_is_not_marked(void **state)
{
    (void)state;
    zt_error e;
    zt__fail(&e, ZT_E_IO, NULL, NULL, 0, 0, "read failed");
    assert_string_equal(e.message, "ZT_E_IO: read failed");
}

static zt_status vset(zt_error *e, zt_status code, const char *obj, const char *comp, int has_off,
                      uint64_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    zt_status st = zt_error_vset(e, code, obj, comp, has_off, off, fmt, ap);
    va_end(ap);
    return st;
}

/* The exported builder (for libztensor-remote) is the one zt__fail uses. */
static void exported_builder_is_the_same(void **state)
{
    (void)state;
    char obj[200];
    memset(obj, 'o', sizeof(obj) - 1);
    obj[sizeof(obj) - 1] = 0;
    zt_error a, b;
    memset(&a, 0x55, sizeof(a));
    memset(&b, 0x55, sizeof(b));
    zt__fail(&a, ZT_E_BOUNDS, obj, "data", 1, 7, "%s at %d", "gap", 3);
    assert_int_equal(vset(&b, ZT_E_BOUNDS, obj, "data", 1, 7, "%s at %d", "gap", 3), ZT_E_BOUNDS);
    assert_memory_equal(&a, &b, sizeof(a));
    assert_int_equal(vset(NULL, ZT_E_IO, NULL, NULL, 0, 0, "x"), ZT_E_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_object_component_offset),
        cmocka_unit_test(long_message_is_cut_and_marked),
        cmocka_unit_test(message_that_fits_is_not_marked),
        cmocka_unit_test(exported_builder_is_the_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
