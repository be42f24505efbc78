/*
 * test_grow.c: the server's growing buffers (server/core/grow.c and
 * server/core/text_buf.c), which the catalog, the upstream cache, the
 * answers and the fronts' XML and JSON writers share.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/text_buf.h"

typedef struct pair {
    uint64_t a, b;
} pair;

static void items_grow_by_doubling_and_keep_their_contents(void **state)
{
    (void)state;
    pair *v = NULL;
    size_t n = 0, cap = 0;
    for (uint64_t i = 0; i < 100; i++) {
        assert_int_equal(ZTD_GROW_ITEMS(v, cap, n + 1, 4), 0);
        assert_true(cap >= n + 1);
        v[n++] = (pair){i, i * i};
    }
    assert_int_equal(cap, 128); /* 4, 8, ..., 128 */
    for (uint64_t i = 0; i < 100; i++)
        assert_true(v[i].a == i && v[i].b == i * i);
    /* Room already there: nothing moves. */
    pair *was = v;
    assert_int_equal(ZTD_GROW_ITEMS(v, cap, 128, 4), 0);
    assert_ptr_equal(v, was);
    assert_int_equal(cap, 128);
    /* A jump past twice the count doubles until it fits. */
    assert_int_equal(ZTD_GROW_ITEMS(v, cap, 1000, 4), 0);
    assert_int_equal(cap, 1024);
    assert_true(v[99].a == 99);
    free(v);
}

static void items_refuse_a_size_that_overflows(void **state)
{
    (void)state;
    pair *v = NULL;
    size_t cap = 0;
    assert_int_equal(ZTD_GROW_ITEMS(v, cap, 2, 2), 0);
    pair *was = v;
    assert_int_equal(ZTD_GROW_ITEMS(v, cap, SIZE_MAX / sizeof(pair) + 1, 2), -1);
    assert_ptr_equal(v, was);
    assert_int_equal(cap, 2);
    assert_int_equal(ZTD_GROW_ITEMS(v, cap, SIZE_MAX, 2), -1);
    assert_int_equal(cap, 2);
    free(v);
}

static void text_collects_and_is_taken(void **state)
{
    (void)state;
    ztd_text t = {0};
    ztd_text_puts(&t, "<a>");
    for (int i = 0; i < 2000; i++)
        ztd_text_put(&t, "xyz", 3);
    ztd_text_puts(&t, "</a>");
    size_t len = 0;
    char *s = ztd_text_take(&t, &len);
    assert_non_null(s);
    assert_int_equal(len, 3 + 6000 + 4);
    assert_int_equal(strlen(s), len);
    assert_memory_equal(s, "<a>xyzxyz", 9);
    assert_string_equal(s + len - 7, "xyz</a>");
    assert_null(t.p);
    assert_int_equal(t.len, 0);
    free(s);
}

static void text_failure_is_sticky(void **state)
{
    (void)state;
    ztd_text t = {0};
    ztd_text_puts(&t, "kept until the end");
    t.failed = true; /* as out of memory leaves it */
    ztd_text_puts(&t, " and more");
    assert_int_equal(t.len, strlen("kept until the end"));
    size_t len = 77;
    assert_null(ztd_text_take(&t, &len));
    assert_int_equal(len, 77);
    assert_null(t.p);
    assert_false(t.failed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(items_grow_by_doubling_and_keep_their_contents),
        cmocka_unit_test(items_refuse_a_size_that_overflows),
        cmocka_unit_test(text_collects_and_is_taken),
        cmocka_unit_test(text_failure_is_sticky),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
