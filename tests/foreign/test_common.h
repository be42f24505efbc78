/* Helpers shared by the foreign-format cmocka tests. */
#ifndef ZT_FOREIGN_TEST_COMMON_H
#define ZT_FOREIGN_TEST_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "ztensor/ztensor.h"

/* Opens from memory; fails the test with the message when it does not open. */
static inline zt_file *open_ok(const fx_buf *b)
{
    zt_file *f = NULL;
    zt_error err;
    memset(&err, 0, sizeof(err));
    zt_status st = zt_open_memory(b->p, b->len, NULL, &f, &err);
    if (st)
        fail_msg("zt_open_memory: %s", err.message);
    return f;
}

/* Expects code, and a message containing want (when not NULL). */
static inline void open_fails(const fx_buf *b, zt_status code, const char *want)
{
    zt_file *f = NULL;
    zt_error err;
    memset(&err, 0, sizeof(err));
    zt_status st = zt_open_memory(b->p, b->len, NULL, &f, &err);
    if (st != code)
        fail_msg("want %s, got %s: %s", zt_status_name(code), zt_status_name(st), err.message);
    assert_null(f);
    assert_int_equal(err.code, code);
    if (want && !strstr(err.message, want))
        fail_msg("message \"%s\" does not mention \"%s\"", err.message, want);
}

/* The decoded bytes of a component equal want[0..n). */
static inline void bytes_equal(const zt_file *f, const zt_component *c, const void *want, size_t n)
{
    assert_non_null(c);
    assert_int_equal(zt_component_decoded_length(c), n);
    if (n)
        assert_memory_equal(zt_component_stored(f, c), want, n);
}

static inline const zt_value *attr(const zt_value *map, const char *key)
{
    const zt_value *v = zt_value_get(map, key);
    if (!v)
        fail_msg("no attribute \"%s\"", key);
    return v;
}

static inline void attr_text(const zt_value *map, const char *key, const char *want)
{
    const zt_value *v = attr(map, key);
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_TEXT);
    assert_string_equal(zt_value_data(v, NULL), want);
}

static inline void attr_uint(const zt_value *map, const char *key, uint64_t want)
{
    const zt_value *v = attr(map, key);
    assert_int_equal(zt_value_get_kind(v), ZT_VAL_UINT);
    assert_int_equal(zt_value_uint(v), want);
}

/* ---- every allocation of an open fails in turn (libcbor's scripted allocator) */
static long g_fail_at, g_calls;
static inline int oom_now(void)
{
    return ++g_calls == g_fail_at;
}
static inline void *oom_malloc(size_t n)
{
    return oom_now() ? NULL : malloc(n);
}
static inline void *oom_realloc(void *p, size_t n)
{
    return oom_now() ? NULL : realloc(p, n);
}

/* Opens b with allocation 1, 2, ... failing until it opens: each failure must
 * be ZT_E_NOMEM with a message, and leak nothing (ASan). */
static inline void oom_loop(const fx_buf *b)
{
    for (g_fail_at = 1;; g_fail_at++) {
        g_calls = 0;
        zt_set_allocator(oom_malloc, oom_realloc, free);
        zt_file *f = NULL;
        zt_error err;
        zt_status st = zt_open_memory(b->p, b->len, NULL, &f, &err);
        zt_set_allocator(NULL, NULL, NULL);
        if (st == ZT_OK) {
            zt_close(f);
            assert_true(g_fail_at > 1);
            return;
        }
        if (st != ZT_E_NOMEM)
            fail_msg("allocation %ld failed: want ZT_E_NOMEM, got %s", g_fail_at, err.message);
    }
}

#endif
