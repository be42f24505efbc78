/*
 * test_uploads.c: the upload policy (server/store/uploads.c): slots, the size
 * limit without overflow, the disk reserve, and when the reserve is checked
 * while a body streams.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "store/uploads.h"

static const char *tmp_root(void)
{
    const char *t = getenv("ZT_TEST_TMP");
    return t && t[0] ? t : "/tmp";
}

static void slots(void **state)
{
    (void)state;
    ztd_uploads u;
    ztd_uploads_init(&u, tmp_root(), 100, 0, 2);
    assert_true(ztd_uploads_take(&u));
    assert_true(ztd_uploads_take(&u));
    assert_false(ztd_uploads_take(&u)); /* a refusal takes nothing */
    ztd_uploads_give(&u);
    assert_true(ztd_uploads_take(&u));
    assert_false(ztd_uploads_take(&u));
    ztd_uploads_init(&u, tmp_root(), 100, 0, 0);
    assert_false(ztd_uploads_take(&u));
}

static void size_limit(void **state)
{
    (void)state;
    ztd_uploads u;
    ztd_uploads_init(&u, tmp_root(), 1000, 0, 1);
    assert_true(ztd_uploads_size_ok(&u, 0, 1000));
    assert_false(ztd_uploads_size_ok(&u, 0, 1001));
    assert_true(ztd_uploads_size_ok(&u, 600, 400));
    assert_false(ztd_uploads_size_ok(&u, 600, 401));
    assert_false(ztd_uploads_size_ok(&u, 1001, 0));
    /* sums that would wrap around are too large, not small */
    assert_false(ztd_uploads_size_ok(&u, 10, UINT64_MAX));
    assert_false(ztd_uploads_size_ok(&u, UINT64_MAX, 10));
    ztd_uploads_init(&u, tmp_root(), UINT64_MAX, 0, 1);
    assert_true(ztd_uploads_size_ok(&u, UINT64_MAX - 5, 5));
    assert_false(ztd_uploads_size_ok(&u, UINT64_MAX - 5, 6));
}

static void disk_room(void **state)
{
    (void)state;
    assert_true(ztd_uploads_room(100, 60, 40));
    assert_false(ztd_uploads_room(100, 61, 40));
    assert_false(ztd_uploads_room(100, 101, 0)); /* no wrap-around */
    assert_true(ztd_uploads_room(0, 0, 0));
    assert_false(ztd_uploads_room(UINT64_MAX, 1, UINT64_MAX));
}

/* The meter reads the disk once per MiB of body, never in between. */
static void disk_meter(void **state)
{
    (void)state;
    ztd_uploads full, ok;
    ztd_uploads_init(&full, tmp_root(), UINT64_MAX, UINT64_MAX, 1); /* no disk holds this */
    ztd_uploads_init(&ok, tmp_root(), UINT64_MAX, 0, 1);
    assert_false(ztd_uploads_disk_ok(&full, 0));
    assert_true(ztd_uploads_disk_ok(&ok, 0));
    ztd_disk_meter m = {0};
    assert_true(ztd_uploads_disk_meter(&full, &m, 0));
    assert_true(ztd_uploads_disk_meter(&full, &m, ZTD_DISK_CHECK_EVERY - 1));
    assert_false(ztd_uploads_disk_meter(&full, &m, ZTD_DISK_CHECK_EVERY));    /* due: checked */
    assert_true(ztd_uploads_disk_meter(&full, &m, ZTD_DISK_CHECK_EVERY + 1)); /* not due again */
    assert_false(ztd_uploads_disk_meter(&full, &m, 3 * ZTD_DISK_CHECK_EVERY));
    ztd_disk_meter m2 = {0};
    assert_true(ztd_uploads_disk_meter(&ok, &m2, 5 * ZTD_DISK_CHECK_EVERY));
    /* a root that cannot be read is no reason to refuse */
    ztd_uploads gone;
    ztd_uploads_init(&gone, "/nonexistent/ztensord", UINT64_MAX, UINT64_MAX, 1);
    assert_true(ztd_uploads_disk_ok(&gone, UINT64_MAX));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slots),
        cmocka_unit_test(size_limit),
        cmocka_unit_test(disk_room),
        cmocka_unit_test(disk_meter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
