/*
 * test_upload_json.c: the JSON bodies of upload sessions (server/http/upload_json.c): the
 * open request and the commit, what each accepts, and the error and message for what not.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "http/upload_json.h"

static ztd_err open_body(const char *body, ztd_open_request *o, char *msg)
{
    return ztd_open_parse(body, body ? strlen(body) : 0, o, msg, 512);
}

static void open_accepts(void **state)
{
    (void)state;
    ztd_open_request o;
    char msg[512];
    assert_int_equal(open_body("{\"file\": \"a/b.zt\"}", &o, msg), ZTD_ERR_NONE);
    assert_string_equal(o.file, "a/b.zt");
    assert_null(o.attributes);
    ztd_open_request_free(&o);
    assert_int_equal(
        open_body("{\"file\": \"m.zt\", \"attributes\": {\"k\": [1, \"v\"]}}", &o, msg),
        ZTD_ERR_NONE);
    assert_string_equal(o.attributes, "{\"k\":[1,\"v\"]}");
    ztd_open_request_free(&o);
    /* other keys are ignored; names may hold UTF-8 and dots inside segments */
    assert_int_equal(open_body("{\"file\": \"d\\u00e9j\\u00e0/v1.2/x.y.zt\", \"x\": 1}", &o, msg),
                     ZTD_ERR_NONE);
    ztd_open_request_free(&o);
}

static void open_refuses(void **state)
{
    (void)state;
    ztd_open_request o;
    char msg[512];
    assert_int_equal(open_body(NULL, &o, msg), ZTD_ERR_BAD_JSON);
    assert_string_equal(msg, "the body must be a JSON object: (empty)");
    assert_int_equal(open_body("[1]", &o, msg), ZTD_ERR_BAD_JSON);
    assert_string_equal(msg, "the body must be a JSON object");
    assert_int_equal(open_body("{\"file\": 1", &o, msg), ZTD_ERR_BAD_JSON);
    assert_int_equal(open_body("{\"file\": \"a.zt\", \"file\": \"b.zt\"}", &o, msg),
                     ZTD_ERR_BAD_JSON);
    assert_int_equal(open_body("{\"file\": \"\xff.zt\"}", &o, msg), ZTD_ERR_BAD_JSON);
    const char *names[] = {"\"b.safetensors\"",
                           "\".zt\"",
                           "\"a/.h.zt\"",
                           "\"/a.zt\"",
                           "\"a//b.zt\"",
                           "\"a/../b.zt\"",
                           "\"x.zt/y.zt\"",
                           "\"a.ZT\"",
                           "\"a.alt/b.zt\"",
                           "1",
                           "null"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char body[128];
        snprintf(body, sizeof(body), "{\"file\": %s}", names[i]);
        if (open_body(body, &o, msg) != ZTD_ERR_BAD_REQUEST)
            fail_msg("accepted %s", names[i]);
    }
    assert_int_equal(open_body("{\"file\": \"a.zt\", \"attributes\": [1]}", &o, msg),
                     ZTD_ERR_BAD_REQUEST);
    assert_non_null(strstr(msg, "want {\"file\""));
    assert_null(o.file);
}

static ztd_err commit_body(const char *body, ztd_commit *c, char *msg)
{
    return ztd_commit_parse(body, body ? strlen(body) : 0, c, msg, 512);
}

static void commit_accepts(void **state)
{
    (void)state;
    ztd_commit c;
    char msg[512];
    assert_int_equal(
        commit_body("{\"objects\": {\"w\": {\"shape\": [16, 0], \"attributes\": {\"a\": 1}, "
                    "\"components\": {\"data\": {\"key\": \"k1\", \"dtype\": \"f32\"}}}, "
                    "\"q\": {\"shape\": [], \"format\": \"quantized\", \"components\": {"
                    "\"data\": {\"key\": \"k2\", \"dtype\": \"int8\", \"type\": \"q\"}, "
                    "\"scale\": {\"key\": \"k3\", \"dtype\": \"bfloat16\"}}}}}",
                    &c, msg),
        ZTD_ERR_NONE);
    assert_int_equal(c.n, 2);
    const ztd_commit_object *w = &c.objects[0], *q = &c.objects[1];
    assert_string_equal(w->name, "w");
    assert_string_equal(w->format, "dense");
    assert_int_equal(w->ndim, 2);
    assert_int_equal(w->dims[0], 16);
    assert_int_equal(w->dims[1], 0);
    assert_string_equal(w->attributes, "{\"a\":1}");
    assert_int_equal(w->nparts, 1);
    assert_string_equal(w->parts[0].role, "data");
    assert_string_equal(w->parts[0].key, "k1");
    assert_int_equal(w->parts[0].dtype, ZT_DTYPE_F32);
    assert_null(w->parts[0].type);
    assert_string_equal(q->format, "quantized");
    assert_int_equal(q->ndim, 0);
    assert_null(q->attributes);
    assert_int_equal(q->nparts, 2);
    assert_int_equal(q->parts[0].dtype, ZT_DTYPE_I8);
    assert_string_equal(q->parts[0].type, "q");
    assert_string_equal(q->parts[1].role, "scale");
    assert_int_equal(q->parts[1].dtype, ZT_DTYPE_BF16);
    ztd_commit_free(&c);
    /* no objects at all is well-formed */
    assert_int_equal(commit_body("{\"objects\": {}}", &c, msg), ZTD_ERR_NONE);
    assert_int_equal(c.n, 0);
    ztd_commit_free(&c);
}

static void commit_refuses(void **state)
{
    (void)state;
    ztd_commit c;
    char msg[512];
    assert_int_equal(commit_body("", &c, msg), ZTD_ERR_BAD_JSON);
    assert_int_equal(commit_body("{}", &c, msg), ZTD_ERR_BAD_REQUEST);
    assert_string_equal(msg, "want {\"objects\": {NAME: {...}}}");
    assert_int_equal(commit_body("{\"objects\": []}", &c, msg), ZTD_ERR_BAD_REQUEST);
    static const struct {
        const char *object, *msg;
    } bad[] = {
        {"{}", "object \"o\": want {"},
        {"{\"shape\": [1], \"components\": []}", "object \"o\": want {"},
        {"{\"shape\": [1], \"components\": {}, \"attributes\": 1}", "object \"o\": want {"},
        {"{\"shape\": [1, -1], \"components\": {}}",
         "object \"o\": shape[1] must be a non-negative integer"},
        {"{\"shape\": [1.5], \"components\": {}}",
         "object \"o\": shape[0] must be a non-negative integer"},
        {"{\"shape\": [1], \"components\": {\"data\": {\"dtype\": \"f32\"}}}",
         "object \"o\" component \"data\": \"key\" names no uploaded component"},
        {"{\"shape\": [1], \"components\": {\"data\": {\"key\": \"k\", \"dtype\": \"f31\"}}}",
         "object \"o\" component \"data\": bad or missing dtype"},
        {"{\"shape\": [1], \"components\": {\"data\": {\"key\": \"k\"}}}",
         "object \"o\" component \"data\": bad or missing dtype"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char body[512];
        snprintf(body, sizeof(body),
                 "{\"objects\": {\"ok\": {\"shape\": [], \"components\": {}}, "
                 "\"o\": %s}}",
                 bad[i].object);
        ztd_err e = commit_body(body, &c, msg);
        if (e != ZTD_ERR_INVALID_OBJECTS || strncmp(msg, bad[i].msg, strlen(bad[i].msg)))
            fail_msg("%s: got %d \"%s\"", bad[i].object, e, msg);
        assert_null(c.objects);
    }
}

/* The limits: 64 dimensions, 64 components an object. */
static void commit_limits(void **state)
{
    (void)state;
    ztd_commit c;
    char msg[512], body[8192];
    for (int n = 64; n <= 65; n++) {
        size_t o = (size_t)snprintf(body, sizeof(body), "{\"objects\": {\"o\": {\"shape\": [");
        for (int i = 0; i < n; i++)
            o += (size_t)snprintf(body + o, sizeof(body) - o, "%s1", i ? "," : "");
        o += (size_t)snprintf(body + o, sizeof(body) - o, "], \"components\": {");
        for (int i = 0; i < n; i++)
            o +=
                (size_t)snprintf(body + o, sizeof(body) - o,
                                 "%s\"r%d\": {\"key\": \"k\", \"dtype\": \"u8\"}", i ? "," : "", i);
        snprintf(body + o, sizeof(body) - o, "}}}}");
        ztd_err e = commit_body(body, &c, msg);
        assert_int_equal(e, n == 64 ? ZTD_ERR_NONE : ZTD_ERR_INVALID_OBJECTS);
        if (!e) {
            assert_int_equal(c.objects[0].ndim, 64);
            assert_int_equal(c.objects[0].nparts, 64);
        }
        ztd_commit_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(open_accepts),   cmocka_unit_test(open_refuses),
        cmocka_unit_test(commit_accepts), cmocka_unit_test(commit_refuses),
        cmocka_unit_test(commit_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
