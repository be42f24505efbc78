/*
 * test_digests.c: unit tests for server/store/digests.c, the per-file record of
 * which sha256 claims have been checked: one check per sha256 component (none
 * for crc32c or digest-less ones), lookup by component, states that only move
 * forward from pending, and per-state counts that follow them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/digests.h"

static const char *const ROLE_DATA[] = {"data"};

static void add(zt_writer *w, const char *name, zt_digest_kind kind, uint8_t fill)
{
    zt_error err;
    uint8_t bytes[256];
    memset(bytes, fill, sizeof bytes);
    zt_component_spec spec = {.dtype = ZT_DTYPE_U8, .encoding = ZT_ENC_RAW, .digest = kind};
    size_t id;
    uint64_t shape[1] = {sizeof bytes};
    assert_int_equal(zt_writer_begin(w, &spec, &err), ZT_OK);
    assert_int_equal(zt_writer_write(w, bytes, sizeof bytes, &err), ZT_OK);
    assert_int_equal(zt_writer_end(w, &id, &err), ZT_OK);
    assert_int_equal(
        zt_writer_add_object(w, name, "dense", 1, shape, NULL, 1, ROLE_DATA, &id, &err), ZT_OK);
}

/* A file with objects a (sha256), b (crc32c), c (sha256), d (no digest). */
static zt_file *make_file(char *path)
{
    const char *dir = getenv("ZT_TEST_TMP");
    snprintf(path, 4096, "%s/test_digests.%d.zt", dir && dir[0] ? dir : "/tmp", (int)getpid());
    zt_writer_options o;
    zt_writer_options_init(&o);
    o.fsync = 0;
    zt_writer *w;
    zt_error err;
    assert_int_equal(zt_writer_open(path, &o, &w, &err), ZT_OK);
    add(w, "a", ZT_DIGEST_SHA256, 1);
    add(w, "b", ZT_DIGEST_CRC32C, 2);
    add(w, "c", ZT_DIGEST_SHA256, 3);
    add(w, "d", ZT_DIGEST_NONE, 4);
    assert_int_equal(zt_writer_finish(w, &err), ZT_OK);
    zt_writer_free(w);
    zt_file *f;
    assert_int_equal(zt_open(path, NULL, &f, &err), ZT_OK);
    return f;
}

static const zt_component *comp(const zt_file *f, const char *obj)
{
    const zt_object *o = zt_file_find_object(f, obj, strlen(obj));
    assert_non_null(o);
    return zt_object_find_component(o, "data");
}

static void test_checks(void **state)
{
    char path[4096];
    zt_file *f = make_file(path);
    ztd_digest_checks d;
    assert_int_equal(ztd_digest_checks_init(&d, f), 0);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.count[ZTD_DIGEST_PENDING], 2);

    ztd_digest_check *ka = ztd_digest_find(&d, comp(f, "a"));
    ztd_digest_check *kc = ztd_digest_find(&d, comp(f, "c"));
    assert_non_null(ka);
    assert_non_null(kc);
    assert_ptr_equal(ka->component, comp(f, "a"));
    assert_string_equal(zt_object_name(ka->object), "a");
    assert_null(ztd_digest_find(&d, comp(f, "b")));
    assert_null(ztd_digest_find(&d, comp(f, "d")));
    /* No check: nothing is claimed, which reads as pending. */
    assert_int_equal(ztd_digest_state_of(&d, comp(f, "b")), ZTD_DIGEST_PENDING);

    assert_true(ztd_digest_settle(&d, ka, ZTD_DIGEST_MISMATCH));
    assert_int_equal(ztd_digest_state_of(&d, comp(f, "a")), ZTD_DIGEST_MISMATCH);
    /* Decided once: no way back, no second decision. */
    assert_false(ztd_digest_settle(&d, ka, ZTD_DIGEST_VERIFIED));
    assert_false(ztd_digest_settle(&d, ka, ZTD_DIGEST_PENDING));
    assert_false(ztd_digest_settle(&d, kc, ZTD_DIGEST_PENDING));
    assert_int_equal(ztd_digest_check_state(ka), ZTD_DIGEST_MISMATCH);
    assert_int_equal(d.count[ZTD_DIGEST_PENDING], 1);
    assert_int_equal(d.count[ZTD_DIGEST_MISMATCH], 1);

    /* An upload's file: whatever is still pending becomes verified. */
    ztd_digest_settle_all_verified(&d);
    assert_int_equal(ztd_digest_state_of(&d, comp(f, "c")), ZTD_DIGEST_VERIFIED);
    assert_int_equal(ztd_digest_state_of(&d, comp(f, "a")), ZTD_DIGEST_MISMATCH);
    assert_int_equal(d.count[ZTD_DIGEST_PENDING], 0);
    assert_int_equal(d.count[ZTD_DIGEST_VERIFIED], 1);
    assert_int_equal(d.count[ZTD_DIGEST_MISMATCH], 1);
    assert_int_equal(d.count[ZTD_DIGEST_UNREADABLE], 0);

    ztd_digest_checks_free(&d);
    assert_int_equal(d.n, 0);
    assert_null(ztd_digest_find(&d, comp(f, "a")));
    zt_close(f);
    unlink(path);
}

static void test_names(void **state)
{
    assert_string_equal(ztd_digest_state_name(ZTD_DIGEST_PENDING), "pending");
    assert_string_equal(ztd_digest_state_name(ZTD_DIGEST_VERIFIED), "verified");
    assert_string_equal(ztd_digest_state_name(ZTD_DIGEST_MISMATCH), "mismatch");
    assert_string_equal(ztd_digest_state_name(ZTD_DIGEST_UNREADABLE), "unreadable");
    assert_string_equal(ztd_digest_state_name(ZTD_DIGEST_STATES), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_checks), cmocka_unit_test(test_names)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
