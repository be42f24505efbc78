/*
 * test_progress.c: zt convert's progress bar and component copy
 * (cli/tool_progress.c): the bar's text, silence when stderr is not a
 * terminal, and the streamed copy of a component's decoded bytes (raw and
 * zstd) from a real file written by libztensor's writer.
 */
#include "cli_test.h"

#include <unistd.h>

static void bar_text(void **state)
{
    (void)state;
    char line[TOOL_PROGRESS_LINE], want[TOOL_PROGRESS_LINE];
    tool_progress_format(line, sizeof line, 0, 2u << 20);
    snprintf(want, sizeof want, "[%40s]   0%% 0.0 / 2.0 MiB", "");
    assert_string_equal(line, want);
    tool_progress_format(line, sizeof line, 1u << 20, 2u << 20);
    snprintf(want, sizeof want, "[%.20s%20s]  50%% 1.0 / 2.0 MiB",
             "########################################", "");
    assert_string_equal(line, want);
    tool_progress_format(line, sizeof line, 3, 3);
    snprintf(want, sizeof want, "[%s] 100%% 0.0 / 0.0 MiB",
             "########################################");
    assert_string_equal(line, want);
    /* nothing to copy counts as done */
    tool_progress_format(line, sizeof line, 0, 0);
    assert_string_equal(line, want);
    /* 99.9% is 99%, 39 cells */
    tool_progress_format(line, sizeof line, 999, 1000);
    snprintf(want, sizeof want, "[%.39s ]  99%% 0.0 / 0.0 MiB",
             "########################################");
    assert_string_equal(line, want);
    /* a short buffer is cut, never overrun */
    char tiny[8];
    tool_progress_format(tiny, sizeof tiny, 1, 2);
    assert_string_equal(tiny, "[######");
}

/* A file of one object: n bytes of u8 with the given encoding. */
static char *write_file(const char *dir, const char *name, zt_encoding enc, const uint8_t *data,
                        size_t n)
{
    char *path = malloc(4096);
    assert_non_null(path);
    int k = snprintf(path, 4096, "%s/%s", dir, name);
    assert_true(k > 0 && k < 4096);
    zt_writer *w;
    zt_error err;
    assert_int_equal(zt_writer_open(path, NULL, &w, &err), ZT_OK);
    zt_component_spec cs = {.dtype = ZT_DTYPE_U8, .encoding = enc, .digest = ZT_DIGEST_SHA256};
    size_t id;
    assert_int_equal(zt_writer_begin(w, &cs, &err), ZT_OK);
    assert_int_equal(zt_writer_write(w, data, n, &err), ZT_OK);
    assert_int_equal(zt_writer_end(w, &id, &err), ZT_OK);
    uint64_t shape[1] = {n};
    const char *roles[1] = {"data"};
    assert_int_equal(zt_writer_add_object(w, "x", "dense", 1, shape, NULL, 1, roles, &id, &err),
                     ZT_OK);
    assert_int_equal(zt_writer_finish(w, &err), ZT_OK);
    zt_writer_free(w);
    return path;
}

typedef struct sink {
    uint8_t *buf;
    size_t len, cap, calls;
} sink;

static zt_status to_sink(void *ud, const void *p, size_t n, zt_error *err)
{
    (void)err;
    sink *s = ud;
    assert_true(s->len + n <= s->cap);
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    s->calls++;
    return ZT_OK;
}

static zt_status refuse(void *ud, const void *p, size_t n, zt_error *err)
{
    (void)ud, (void)p, (void)n;
    err->code = ZT_E_IO;
    snprintf(err->message, sizeof err->message, "sink refused");
    return ZT_E_IO;
}

static void copies_decoded_bytes(void **state)
{
    (void)state;
    const char *t = getenv("ZT_TEST_TMP");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/zt_cli_progress.XXXXXX", t && *t ? t : "/tmp");
    assert_non_null(mkdtemp(dir));
    size_t n = (9u << 20) + 123; /* more than two CHUNKs */
    uint8_t *data = malloc(n);
    assert_non_null(data);
    for (size_t i = 0; i < n; i++)
        data[i] = (uint8_t)((i / 4096) ^ (i * 13));
    const zt_encoding encs[] = {ZT_ENC_RAW, ZT_ENC_ZSTD};
    const char *names[] = {"raw.zt", "zstd.zt"};
    for (int e = 0; e < 2; e++) {
        char *path = write_file(dir, names[e], encs[e], data, n);
        zt_file *f;
        zt_error err;
        assert_int_equal(zt_open(path, NULL, &f, &err), ZT_OK);
        const zt_component *c = zt_object_component_at(zt_file_object_at(f, 0), 0);
        assert_int_equal(zt_component_encoding(c), encs[e]);
        sink s = {.buf = malloc(n), .cap = n};
        assert_non_null(s.buf);
        tool_progress p;
        tool_progress_init(&p, n);
        p.on = 0; /* whatever stderr is, draw nothing */
        assert_int_equal(tool_copy_component(f, c, to_sink, &s, &p, &err), ZT_OK);
        assert_int_equal(s.len, n);
        assert_memory_equal(s.buf, data, n);
        assert_true(s.calls >= 3); /* streamed, never the whole component at once */
        assert_int_equal(p.done, n);
        assert_int_equal(p.shown, 0);
        /* a sink's error stops the copy and comes back as is */
        assert_int_equal(tool_copy_component(f, c, refuse, NULL, NULL, &err), ZT_E_IO);
        assert_string_equal(err.message, "sink refused");
        free(s.buf);
        zt_close(f);
        unlink(path);
        free(path);
    }
    rmdir(dir);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bar_text),
        cmocka_unit_test(copies_decoded_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
