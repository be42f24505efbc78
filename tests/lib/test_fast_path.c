/*
 * The fast manifest path (manifest_fast.c) against the general one: for every
 * file of the fuzz corpus and of the accept/reject corpus, opening with and
 * without the fast path must give the same status, the same error message and
 * the same manifest JSON. The fast path may only ever say "not sure".
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"

static char *slurp(const char *path, size_t *n)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return NULL; /* the corpus has directories of expected bytes too */
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(len > 0 ? (size_t)len : 1);
    *n = buf ? fread(buf, 1, (size_t)len, f) : 0;
    fclose(f);
    return buf;
}

/* Open the bytes one way; the JSON of the manifest or "ERR <code> <message>". */
static char *outcome(const char *buf, size_t n, int slow)
{
    zt__fast_path_disabled = slow;
    zt_file *f;
    zt_error err;
    zt_status st = zt_open_memory(buf, n, NULL, &f, &err);
    zt__fast_path_disabled = 0;
    char *out;
    if (st) {
        out = malloc(strlen(err.message) + 32);
        sprintf(out, "ERR %d %s", (int)st, err.message);
        return out;
    }
    char *json = zt_file_manifest_json(f, ZT_JSON_COMPACT, &err);
    out = strdup(json ? json : "JSON failed");
    zt_free(json);
    zt_close(f);
    return out;
}

static size_t compare_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t files = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        size_t n;
        char *buf = slurp(path, &n);
        if (!buf)
            continue;
        char *fast = outcome(buf, n, 0), *slow = outcome(buf, n, 1);
        if (strcmp(fast, slow) != 0)
            fail_msg("%s:\n fast: %.300s\n slow: %.300s", path, fast, slow);
        free(fast);
        free(slow);
        free(buf);
        files++;
    }
    closedir(d);
    return files;
}

static void test_same_outcome(void **state)
{
    (void)state;
    static const char *const dirs[] = {
        ZT_SOURCE_DIR "/tests/fuzz/corpus/reader",
        ZT_BINARY_DIR "/tests/corpus/corpus/accept",
        ZT_BINARY_DIR "/tests/corpus/corpus/reject",
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
        total += compare_dir(dirs[i]);
    print_message("compared %zu files\n", total);
    assert_true(total > 500);
}

/* A written file takes the fast path and gives the general path's model. */
static void test_written_file_is_fast(void **state)
{
    (void)state;
    char path[] = "/tmp/zt-fast-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    zt_writer *w;
    zt_error err;
    assert_int_equal(zt_writer_open_fd(fd, NULL, &w, &err), ZT_OK);
    zt_component_spec cs = {.dtype = ZT_DTYPE_F32, .digest = ZT_DIGEST_SHA256};
    float v[6] = {1, 2, 3, 4, 5, 6};
    size_t id;
    const char *role = "data";
    uint64_t shape[2] = {2, 3};
    assert_int_equal(zt_writer_begin(w, &cs, &err), ZT_OK);
    assert_int_equal(zt_writer_write(w, v, sizeof(v), &err), ZT_OK);
    assert_int_equal(zt_writer_end(w, &id, &err), ZT_OK);
    assert_int_equal(zt_writer_add_object(w, "w", "dense", 2, shape, "{\"a\":[1,{\"b\":null}]}", 1,
                                          &role, &id, &err),
                     ZT_OK);
    assert_int_equal(zt_writer_set_attributes(w, "{\"license\":\"MIT\"}", &err), ZT_OK);
    assert_int_equal(zt_writer_finish(w, &err), ZT_OK);
    zt_writer_free(w);
    size_t n;
    char *buf = slurp(path, &n);
    unlink(path);
    /* the fast path itself accepts it */
    zt__model m = {0};
    zt__arena_init(&m.arena);
    m.kind = ZT_KIND_ZT_1_2;
    uint64_t msize = zt__le64((const uint8_t *)buf + n - 16);
    assert_int_equal(
        zt__model_fast(&m, (const uint8_t *)buf + n - 16 - msize, (size_t)msize, n - 16 - msize),
        ZT_OK);
    assert_int_equal(m.nobj, 1);
    zt__arena_free(&m.arena);
    char *fast = outcome(buf, n, 0), *slow = outcome(buf, n, 1);
    assert_string_equal(fast, slow);
    free(fast);
    free(slow);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_outcome),
        cmocka_unit_test(test_written_file_is_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
