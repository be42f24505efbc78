/*
 * test_sessions.c: upload sessions, the store's side (server/store/sessions.c):
 * the table (open with a slot, one request at a time, end, expiry), the
 * components' keys, a staging file removed under a session; and the idle test.
 * The idle test: the sweep reads the clock, then takes the table's lock; a
 * request that releases a session (or opens one) in between stamps it later
 * than the sweep's "now". Such a session was just used: it must not count as
 * idle for 2^64 ms, which expired busy sessions under load (found by the soak).
 */
#include "tmpfiles.h"

#include <errno.h>
#include <time.h>

#include "store/sessions.h"

static void idle(void **state)
{
    (void)state;
    uint64_t hour = 3600 * 1000;
    assert_false(ztd_session_idle(1000000, 1000000 - 10, hour));
    assert_false(ztd_session_idle(1000000, 1000000 - hour, hour)); /* exactly the timeout */
    assert_true(ztd_session_idle(1000000 + hour + 1, 1000000, hour));
    assert_true(ztd_session_idle(5000, 0, 1000));
}

static void used_after_the_clock_was_read(void **state)
{
    (void)state;
    uint64_t hour = 3600 * 1000;
    assert_false(ztd_session_idle(1000000, 1000001, hour));
    assert_false(ztd_session_idle(1000000, 1000000 + hour * 2, hour));
    assert_false(ztd_session_idle(0, UINT64_MAX, 0));
    assert_false(ztd_session_idle(7, 7, 0));
}

static void table(void **state)
{
    (void)state;
    const char *root = tmp_dir("sessions");
    char err[256];
    ztd_staging *st;
    assert_int_equal(ztd_staging_open(root, 3600000, &st, err, sizeof(err)), ZTD_STAGING_OK);
    ztd_uploads up;
    ztd_uploads_init(&up, root, UINT64_MAX, 0, 2);
    ztd_sessions *t = ztd_sessions_new(&up);
    int en;
    zt_error zerr;
    ztd_session *a = ztd_sessions_open(t, st, "a.zt", "{\"k\":1}", &en, &zerr);
    ztd_session *b = ztd_sessions_open(t, st, "b.zt", NULL, &en, &zerr);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(strlen(a->id), 32);
    assert_string_not_equal(a->id, b->id);
    /* two slots: a third session is refused, and takes none */
    assert_null(ztd_sessions_open(t, st, "c.zt", NULL, &en, &zerr));
    assert_int_equal(en, EBUSY);
    assert_int_equal(ztd_sessions_count(t), 2);
    /* one request at a time */
    bool busy;
    char id[33];
    snprintf(id, sizeof(id), "%s", a->id);
    ztd_session *x = ztd_sessions_acquire(t, id, &busy);
    assert_ptr_equal(x, a);
    assert_null(ztd_sessions_acquire(t, id, &busy));
    assert_true(busy);
    /* a component, its key recorded after the writer ends it */
    zt_component_spec spec = {.dtype = ZT_DTYPE_U8, .digest = ZT_DIGEST_SHA256};
    size_t cid;
    char *key;
    assert_int_equal(zt_writer_begin(x->w, &spec, &zerr), ZT_OK);
    assert_int_equal(zt_writer_write(x->w, "abcd", 4, &zerr), ZT_OK);
    assert_int_equal(ztd_session_prepare_key(x, "k1", &key), 0);
    assert_int_equal(zt_writer_end(x->w, &cid, &zerr), ZT_OK);
    ztd_session_add_key(x, key, cid);
    assert_non_null(ztd_session_find_key(x, "k1"));
    assert_int_equal(ztd_session_find_key(x, "k1")->info.length, 4);
    assert_null(ztd_session_find_key(x, "k2"));
    assert_true(ztd_session_intact(x));
    ztd_sessions_release(t, x);
    /* idle sessions expire, busy ones do not; each gives its slot back */
    x = ztd_sessions_acquire(t, b->id, &busy);
    struct timespec pause = {0, 20 * 1000000};
    nanosleep(&pause, NULL);
    assert_int_equal(ztd_sessions_sweep(t, 5), 1); /* a went, b is busy */
    assert_null(ztd_sessions_acquire(t, id, &busy));
    assert_false(busy);
    assert_non_null(ztd_sessions_open(t, st, "c.zt", NULL, &en, &zerr));
    /* a staging file removed under a session: no longer intact */
    assert_true(ztd_session_intact(x));
    ztd_staging_remove(x->st, x->name);
    assert_false(ztd_session_intact(x));
    ztd_sessions_end(t, x);
    assert_int_equal(ztd_sessions_count(t), 1);
    ztd_sessions_free(t);
    ztd_staging_free(st);
    rm_tree(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idle),
        cmocka_unit_test(used_after_the_clock_was_read),
        cmocka_unit_test(table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
