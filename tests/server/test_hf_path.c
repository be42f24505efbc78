/*
 * The Hugging Face front's pure parsers: the URL grammar (server/hf/hf_path.c)
 * and the paths-info body (server/hf/hf_paths_body.c): what is accepted and
 * how it is named, and every refusal, with the traversal cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hf/hf_path.h"
#include "hf/hf_paths_body.h"

typedef struct {
    const char *method, *path;
    int status;
    ztd_hf_op op;
    const char *repo, *rev, *file;
} want;

static const want CASES[] = {
    {"GET", "/hf/api/models/org/model", 0, ZTD_HF_INFO, "org/model", "main", ""},
    {"HEAD", "/hf/api/models/gpt2", 0, ZTD_HF_INFO, "gpt2", "main", ""},
    {"GET", "/hf/api/models/org/model/revision/v1.0", 0, ZTD_HF_INFO, "org/model", "v1.0", ""},
    {"GET", "/hf/api/models/org/model/revision/refs%2Fpr%2F1", 0, ZTD_HF_INFO, "org/model",
     "refs/pr/1", ""},
    {"GET", "/hf/api/models/gpt2/revision/main", 0, ZTD_HF_INFO, "gpt2", "main", ""},
    {"GET", "/hf/api/models/org/model/tree/main", 0, ZTD_HF_TREE, "org/model", "main", ""},
    {"GET", "/hf/api/models/org/model/tree/main/a/b", 0, ZTD_HF_TREE, "org/model", "main", "a/b"},
    {"GET", "/hf/api/models/org/model/tree/main/a%2Fb", 0, ZTD_HF_TREE, "org/model", "main", "a/b"},
    {"GET", "/hf/api/models/gpt2/tree/main/x/y/z/w/v/u", 0, ZTD_HF_TREE, "gpt2", "main",
     "x/y/z/w/v/u"},
    {"POST", "/hf/api/models/org/model/paths-info/main", 0, ZTD_HF_PATHS_INFO, "org/model", "main",
     ""},
    {"GET", "/hf/org/model/resolve/main/config.json", 0, ZTD_HF_RESOLVE, "org/model", "main",
     "config.json"},
    {"HEAD", "/hf/gpt2/resolve/main/a/b.zt", 0, ZTD_HF_RESOLVE, "gpt2", "main", "a/b.zt"},
    {"GET", "/hf/org/model/raw/main/sub%2Fx%20y.zt", 0, ZTD_HF_RESOLVE, "org/model", "main",
     "sub/x y.zt"},
    {"GET", "/hf/org/model/resolve/main/1/2/3/4/5/6/7/8/9", 0, ZTD_HF_RESOLVE, "org/model", "main",
     "1/2/3/4/5/6/7/8/9"},
    /* refusals */
    {"GET", "/hf", 404, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/", 404, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/api/datasets/a/b", 404, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model", 404, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/main", 404, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/main/", 404, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/main/../x", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/main/a/%2e%2e/x", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/main/a%2F..%2Fx", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/main/.git/config", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/main/a//b", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/main/a%00b", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/main/%c3%28", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/main/%4", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/../x", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/a..b/x", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/%2Fetc/x", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/a%0Ab/x", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/model/resolve/%00/x", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/../model/resolve/main/x", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/%2e%2e/resolve/main/x", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org%2Fmodel/resolve/main/x", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/mo--del/resolve/main/x", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/org/-model/resolve/main/x", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/a/b/c/resolve/main/x", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/api/models/a/b/c/tree/main", 400, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/api/models/a/b/c", 404, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/api/models/org/model/tree", 404, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/api/models/org/model/revision/main/x", 404, ZTD_HF_NONE, "", "", ""},
    {"GET", "/hf/api/models/org/model/paths-info/main", 405, ZTD_HF_NONE, "", "", ""},
    {"POST", "/hf/org/model/resolve/main/x", 405, ZTD_HF_NONE, "", "", ""},
    {"POST", "/hf/api/models/org/model", 405, ZTD_HF_NONE, "", "", ""},
};

static void test_cases(void **state)
{
    (void)state;
    ztd_hf_target *t = malloc(sizeof(*t));
    assert_non_null(t);
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        const want *w = &CASES[i];
        int st = ztd_hf_parse(w->method, w->path, t);
        if (st != w->status)
            fail_msg("%s %s: status %d (%s), want %d", w->method, w->path, st,
                     t->message ? t->message : "", w->status);
        assert_int_equal(t->op, w->op);
        if (st == 0) {
            assert_string_equal(t->repo, w->repo);
            assert_string_equal(t->rev, w->rev);
            assert_string_equal(t->path, w->file);
        } else {
            assert_non_null(t->message);
        }
    }
    free(t);
}

static void test_overlong(void **state)
{
    (void)state;
    ztd_hf_target *t = malloc(sizeof(*t));
    char path[6000];
    /* a repository part of 97 characters */
    snprintf(path, sizeof(path), "/hf/org/%097d/resolve/main/x", 0);
    assert_int_equal(ztd_hf_parse("GET", path, t), 400);
    snprintf(path, sizeof(path), "/hf/org/%096d/resolve/main/x", 0);
    assert_int_equal(ztd_hf_parse("GET", path, t), 0);
    /* a revision of 256 bytes */
    snprintf(path, sizeof(path), "/hf/org/model/resolve/%0256d/x", 0);
    assert_int_equal(ztd_hf_parse("GET", path, t), 400);
    /* a path past ZTD_PATH_MAX */
    memcpy(path, "/hf/a/resolve/main/", 19);
    memset(path + 19, 'p', 5000);
    path[5019] = 0;
    assert_int_equal(ztd_hf_parse("GET", path, t), 400);
    free(t);
}

static void test_commit(void **state)
{
    (void)state;
    assert_true(ztd_hf_is_commit("0123456789abcdef0123456789abcdef01234567", 40));
    assert_false(ztd_hf_is_commit("0123456789ABCDEF0123456789abcdef01234567", 40));
    assert_false(ztd_hf_is_commit("0123456789abcdef0123456789abcdef0123456", 39));
    assert_false(ztd_hf_is_commit("main", 4));
}

static void test_paths_body(void **state)
{
    (void)state;
    ztd_hf_paths p;
    const char *msg;
    static const char form[] = "paths=a+b&paths=sub%2Fc.zt&expand=True&other=1";
    assert_int_equal(ztd_hf_paths_parse(NULL, form, strlen(form), &p, &msg), 0);
    assert_int_equal(p.n, 2);
    assert_string_equal(p.paths[0], "a b");
    assert_string_equal(p.paths[1], "sub/c.zt");
    assert_true(p.expand);
    ztd_hf_paths_free(&p);
    static const char json[] = "{\"paths\": [\"x\", \"y/z\"], \"expand\": false}";
    assert_int_equal(ztd_hf_paths_parse("application/json", json, strlen(json), &p, &msg), 0);
    assert_int_equal(p.n, 2);
    assert_false(p.expand);
    ztd_hf_paths_free(&p);
    static const char *bad[] = {"{\"paths\": [1]}", "[]", "{\"paths\": {}}", "{",
                                "{\"paths\": [\"a\\u0000b\"]}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(ztd_hf_paths_parse("application/json", bad[i], strlen(bad[i]), &p, &msg),
                         -1);
        assert_non_null(msg);
        assert_int_equal(p.n, 0);
    }
    assert_int_equal(ztd_hf_paths_parse(NULL, "paths=%00", 9, &p, &msg), -1);
    assert_int_equal(ztd_hf_paths_parse(NULL, "paths=%zz", 9, &p, &msg), -1);
    /* more than ZTD_HF_PATHS_MAX paths */
    size_t n = (ZTD_HF_PATHS_MAX + 1) * 8;
    char *many = malloc(n + 1);
    size_t k = 0;
    for (int i = 0; i <= ZTD_HF_PATHS_MAX; i++)
        k += (size_t)snprintf(many + k, n + 1 - k, "paths=a&");
    assert_int_equal(ztd_hf_paths_parse(NULL, many, k, &p, &msg), -1);
    free(many);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_overlong),
        cmocka_unit_test(test_commit),
        cmocka_unit_test(test_paths_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
