/*
 * test_routes.c: the route table (server/http/routes.c) against the router
 * (server/http/router.c): every route has exactly one row, whose methods are
 * the ones the router sends to that route, and the rows follow the rules the
 * HTTP glue relies on (a body means begin or data, writes need the write scope).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "handlers/handlers.h"
#include "http/routes.h"

static ztd_route_match m; /* 16 KiB: static rather than on the stack */

/* A path the router sends to each route (for some method). */
static const char *const k_paths[ZTD_ROUTE_COUNT] = {
    [ZTD_ROUTE_HEALTHZ] = "/healthz",
    [ZTD_ROUTE_READYZ] = "/readyz",
    [ZTD_ROUTE_METRICS] = "/metrics",
    [ZTD_ROUTE_LIST] = "/v1/files",
    [ZTD_ROUTE_MANIFEST] = "/v1/files/a/b.zt",
    [ZTD_ROUTE_PUT_FILE] = "/v1/files/a/b.zt",
    [ZTD_ROUTE_DELETE_FILE] = "/v1/files/a/b.zt",
    [ZTD_ROUTE_RAW] = "/v1/files/a/b.zt/raw",
    [ZTD_ROUTE_VIEW] = "/v1/files/a/b.zt/safetensors",
    [ZTD_ROUTE_OBJECT] = "/v1/files/a/b.zt/objects/w",
    [ZTD_ROUTE_COMPONENT] = "/v1/files/a/b.zt/objects/w/data",
    [ZTD_ROUTE_BLOB] = "/v1/blobs/sha256:"
                       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    [ZTD_ROUTE_UPLOAD_NEW] = "/v1/uploads",
    [ZTD_ROUTE_UPLOAD_STATUS] = "/v1/uploads/abc",
    [ZTD_ROUTE_UPLOAD_ABORT] = "/v1/uploads/abc",
    [ZTD_ROUTE_UPLOAD_COMPONENT] = "/v1/uploads/abc/components/k",
    [ZTD_ROUTE_UPLOAD_COMMIT] = "/v1/uploads/abc/commit",
    [ZTD_ROUTE_PREFETCH] = "/v1/prefetch",
    [ZTD_ROUTE_PREFETCH_STATUS] = "/v1/prefetch",
};

static const char *const k_methods[] = {"GET", "HEAD", "PUT", "POST", "DELETE", "PATCH"};

/* Is method one of the comma-separated list? */
static bool listed(const char *list, const char *method)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *t = strtok(buf, ", "); t; t = strtok(NULL, ", "))
        if (!strcmp(t, method))
            return true;
    return false;
}

static void one_row_per_route(void **state)
{
    (void)state;
    assert_null(ztd_route_def_of(ztd_v1_routes(), ZTD_ROUTE_NONE));
    assert_null(ztd_route_def_of(ztd_v1_routes(), ZTD_ROUTE_COUNT));
    for (int id = ZTD_ROUTE_NONE + 1; id < ZTD_ROUTE_COUNT; id++) {
        const ztd_route_def *d = ztd_route_def_of(ztd_v1_routes(), id);
        if (id >= ZTD_ROUTE_FIRST_FRONT) { /* rows of the other fronts, added by main.c */
            assert_null(d);
            continue;
        }
        if (!d)
            fail_msg("route %s has no row", ztd_route_name(id));
        assert_int_equal(d->id, id);
        assert_non_null(d->handler);
    }
}

/* The router sends a method to a route exactly when the route's row lists it. */
static void methods_agree_with_the_router(void **state)
{
    (void)state;
    for (int id = ZTD_ROUTE_NONE + 1; id < ZTD_ROUTE_FIRST_FRONT; id++) {
        const ztd_route_def *d = ztd_route_def_of(ztd_v1_routes(), id);
        for (size_t i = 0; i < sizeof(k_methods) / sizeof(k_methods[0]); i++) {
            bool routed = ztd_route(k_methods[i], k_paths[id], &m) == ZTD_ROUTE_OK &&
                          m.route == (ztd_route_id)id;
            if (routed != listed(d->methods, k_methods[i]))
                fail_msg("%s %s: the router %s it to %s, whose row lists \"%s\"", k_methods[i],
                         k_paths[id], routed ? "sends" : "does not send", ztd_route_name(id),
                         d->methods);
        }
    }
}

static void rows_follow_the_rules(void **state)
{
    (void)state;
    for (int id = ZTD_ROUTE_NONE + 1; id < ZTD_ROUTE_FIRST_FRONT; id++) {
        const ztd_route_def *d = ztd_route_def_of(ztd_v1_routes(), id);
        bool reads = listed(d->methods, "GET");
        /* a body is taken only by writes, which need the write scope */
        if (d->body != ZTD_REQ_BODY_NONE) {
            assert_false(reads);
            assert_int_equal(d->scope, ZTD_SCOPE_WRITE);
            assert_non_null(d->data);
        } else {
            assert_null(d->begin);
            assert_null(d->data);
        }
        /* only PUT and POST count as uploads; every write route needs a token */
        if (d->upload)
            assert_true(listed(d->methods, "PUT") || listed(d->methods, "POST"));
        if (!reads)
            assert_int_equal(d->scope, ZTD_SCOPE_WRITE);
        /* the operations routes are open, the others are not */
        bool ops = id == ZTD_ROUTE_HEALTHZ || id == ZTD_ROUTE_READYZ || id == ZTD_ROUTE_METRICS;
        assert_int_equal(d->scope == ZTD_SCOPE_NONE, ops);
    }
    /* a session's state is a writer's business */
    assert_int_equal(ztd_route_def_of(ztd_v1_routes(), ZTD_ROUTE_UPLOAD_STATUS)->scope,
                     ZTD_SCOPE_WRITE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_row_per_route),
        cmocka_unit_test(methods_agree_with_the_router),
        cmocka_unit_test(rows_follow_the_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
