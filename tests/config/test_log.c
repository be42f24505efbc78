/*
 * Tests of server/core/log.c: the exact error-log and access-log lines, escaping
 * of hostile request fields (no byte sequence may forge a line), JSON lines
 * that jansson reads back byte for byte, the length bounds, and the writers:
 * level filter, O_APPEND files, reopen after a rename, concurrent writers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"

/* 2026-11-22T01:02:03.123Z */
static struct timespec example_time(void)
{
    struct tm tm = {.tm_year = 2026 - 1900,
                    .tm_mon = 10,
                    .tm_mday = 22,
                    .tm_hour = 1,
                    .tm_min = 2,
                    .tm_sec = 3};
    struct timespec ts = {timegm(&tm), 123456789};
    return ts;
}

static ztd_access_entry example_entry(void)
{
    ztd_access_entry e = {.time = example_time(),
                          .client = "127.0.0.1",
                          .method = "GET",
                          .path = "/v1/files",
                          .protocol = "HTTP/1.1",
                          .status = 200,
                          .bytes = 1234,
                          .duration_us = 123,
                          .request_id = "ab12"};
    return e;
}

static char *format_access(const ztd_access_entry *e, int json)
{
    char *buf = malloc(ZTD_ACCESS_LINE_MAX);
    assert_non_null(buf);
    size_t n = ztd_access_log_format(buf, ZTD_ACCESS_LINE_MAX, e, json);
    assert_true(n < ZTD_ACCESS_LINE_MAX);
    assert_int_equal(strlen(buf), n);
    return buf;
}

/* A line is one line: it ends in its only newline and holds no other
 * control byte and nothing outside ASCII. */
static void assert_one_clean_line(const char *line)
{
    size_t n = strlen(line);
    assert_true(n > 0);
    assert_int_equal(line[n - 1], '\n');
    for (size_t i = 0; i + 1 < n; i++) {
        unsigned char c = (unsigned char)line[i];
        if (c < 0x20 || c >= 0x7f) fail_msg("raw byte 0x%02x at %zu in %s", c, i, line);
    }
}

/* Parses a JSON access line; the caller decrefs. */
static json_t *parse_json_line_flags(const char *line, size_t flags)
{
    json_error_t je;
    json_t *j = json_loads(line, JSON_REJECT_DUPLICATES | flags, &je);
    if (!j) fail_msg("invalid JSON (%s): %s", je.text, line);
    assert_true(json_is_object(j));
    return j;
}

static json_t *parse_json_line(const char *line)
{
    return parse_json_line_flags(line, 0);
}

/* A decoded JSON string whose code points are all below 256, back to bytes. */
static size_t utf8_to_latin1(const char *s, char *out)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x80) {
            out[n++] = (char)*p;
        } else {
            assert_true(*p == 0xc2 || *p == 0xc3);
            out[n++] = (char)(((*p & 0x03) << 6) | (p[1] & 0x3f));
            p++;
        }
    }
    out[n] = '\0';
    return n;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, len = 0, n;
    do {
        if (len + 4096 + 1 > cap) {
            cap = (len + 4096 + 1) * 2;
            char *grown = realloc(buf, cap);
            assert_non_null(grown);
            buf = grown;
        }
        n = fread(buf + len, 1, 4096, f);
        len += n;
    } while (n > 0);
    fclose(f);
    buf[len] = '\0';
    return buf;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* A fresh directory for files; the caller removes what it made. */
static void temp_dir(char *buf, size_t cap)
{
    const char *base = getenv("ZT_TEST_TMP");
    snprintf(buf, cap, "%s/ztd-log-XXXXXX", base && *base ? base : "/tmp");
    assert_non_null(mkdtemp(buf));
}

static int teardown_logs(void **state)
{
    ztd_log_close();
    ztd_log_set_level(ZTD_LOG_INFO);
    return 0;
}

/* --------------------------------------------------------- error log */

static void test_error_line_exact(void **state)
{
    struct timespec ts = example_time();
    char buf[ZTD_LOG_LINE_MAX];
    size_t n = ztd_log_format_line(buf, sizeof buf, &ts, ZTD_LOG_WARN, "disk almost full");
    assert_string_equal(buf, "2026-11-22T01:02:03.123Z level=warn msg=\"disk almost full\"\n");
    assert_int_equal(n, strlen(buf));
    ztd_log_format_line(buf, sizeof buf, &ts, ZTD_LOG_DEBUG, NULL);
    assert_string_equal(buf, "2026-11-22T01:02:03.123Z level=debug msg=\"\"\n");
    assert_string_equal(ztd_log_level_name(ZTD_LOG_ERROR), "error");
    assert_string_equal(ztd_log_level_name(ZTD_LOG_INFO), "info");
    assert_string_equal(ztd_log_level_name((ztd_log_level)9), "?");
}

static void test_error_line_escaping(void **state)
{
    struct timespec ts = {0, 0};
    char buf[ZTD_LOG_LINE_MAX];
    ztd_log_format_line(buf, sizeof buf, &ts, ZTD_LOG_ERROR,
                        "file \"a\\b\"\nfake=1\r\t\x01\x1b[31m\x7f\xc3\xa9");
    assert_string_equal(buf,
                        "1970-01-01T00:00:00.000Z level=error msg=\"file \\\"a\\\\b\\\"\\nfake="
                        "1\\r\\t\\x01\\x1b[31m\\x7f\\xc3\\xa9\"\n");
    assert_one_clean_line(buf);
}

static void test_error_line_bounds(void **state)
{
    struct timespec ts = example_time();
    char msg[5000], buf[ZTD_LOG_LINE_MAX];
    memset(msg, 1, sizeof msg - 1); /* worst case: every byte becomes \x01 */
    msg[sizeof msg - 1] = '\0';
    size_t n = ztd_log_format_line(buf, sizeof buf, &ts, ZTD_LOG_ERROR, msg);
    assert_true(n < ZTD_LOG_LINE_MAX);
    assert_int_equal(n, strlen(buf));
    assert_non_null(strstr(buf, "\\x01...\"\n")); /* cut, and it says so */
    assert_one_clean_line(buf);

    /* exactly ZTD_LOG_MSG_MAX bytes are kept whole */
    memset(msg, 'a', ZTD_LOG_MSG_MAX);
    msg[ZTD_LOG_MSG_MAX] = '\0';
    n = ztd_log_format_line(buf, sizeof buf, &ts, ZTD_LOG_ERROR, msg);
    assert_null(strstr(buf, "..."));
    assert_int_equal(n,
                     strlen("2026-11-22T01:02:03.123Z level=error msg=\"\"\n") + ZTD_LOG_MSG_MAX);

    /* snprintf semantics: the full length, the buffer cut and terminated */
    char small[10];
    n = ztd_log_format_line(small, sizeof small, &ts, ZTD_LOG_INFO, "hello");
    assert_int_equal(n, strlen("2026-11-22T01:02:03.123Z level=info msg=\"hello\"\n"));
    assert_string_equal(small, "2026-11-2");
    assert_int_equal(ztd_log_format_line(NULL, 0, &ts, ZTD_LOG_INFO, "hello"), n);
}

/* The UTC conversion agrees with gmtime_r() across four centuries, leap
 * days, and before 1970. */
static void test_timestamps_match_gmtime(void **state)
{
    static const struct {
        time_t t;
        const char *want;
    } fixed[] = {{0, "1970-01-01T00:00:00"},
                 {-1, "1969-12-31T23:59:59"},
                 {951782400, "2000-02-29T00:00:00"},
                 {1709251199, "2024-02-29T23:59:59"},
                 {4107542400, "2100-03-01T00:00:00"}};
    char buf[ZTD_LOG_LINE_MAX], want[64];
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        struct timespec ts = {fixed[i].t, 999999999};
        ztd_log_format_line(buf, sizeof buf, &ts, ZTD_LOG_INFO, "");
        snprintf(want, sizeof want, "%s.999Z ", fixed[i].want);
        assert_memory_equal(buf, want, strlen(want));
    }
    for (int64_t t = -2208988800LL; t < 7258118400LL; t += 86400 * 7 + 3607) {
        struct timespec ts = {(time_t)t, 5000000};
        struct tm tm;
        assert_non_null(gmtime_r(&ts.tv_sec, &tm));
        strftime(want, sizeof want, "%Y-%m-%dT%H:%M:%S.005Z ", &tm);
        ztd_log_format_line(buf, sizeof buf, &ts, ZTD_LOG_INFO, "");
        if (memcmp(buf, want, strlen(want)) != 0)
            fail_msg("t=%lld: %.24s, gmtime says %s", (long long)t, buf, want);
    }
}

/* -------------------------------------------------------- access log */

static void test_access_text_exact(void **state)
{
    ztd_access_entry e = example_entry();
    char *line = format_access(&e, 0);
    assert_string_equal(line, "127.0.0.1 - - [22/Nov/2026:01:02:03 +0000] \"GET /v1/files "
                              "HTTP/1.1\" 200 1234 0.000123 rid=ab12\n");
    free(line);

    e.request_id = NULL; /* no id, no field */
    e.duration_us = 1234567;
    e.bytes = 0;
    e.status = 404;
    e.client = "::1";
    line = format_access(&e, 0);
    assert_string_equal(line, "::1 - - [22/Nov/2026:01:02:03 +0000] \"GET /v1/files HTTP/1.1\" "
                              "404 0 1.234567\n");
    free(line);

    ztd_access_entry empty = {.time = {0, 0}, .status = 400};
    empty.request_id = "";
    line = format_access(&empty, 0);
    assert_string_equal(line, "- - - [01/Jan/1970:00:00:00 +0000] \"- -\" 400 0 0.000000\n");
    free(line);
}

static void test_access_json_exact(void **state)
{
    ztd_access_entry e = example_entry();
    char *line = format_access(&e, 1);
    assert_string_equal(line, "{\"time\":\"2026-11-22T01:02:03.123Z\",\"client\":\"127.0.0.1\","
                              "\"method\":\"GET\",\"path\":\"/v1/files\",\"protocol\":\"HTTP/"
                              "1.1\",\"status\":200,\"bytes\":1234,\"duration_ms\":0.123,"
                              "\"request_id\":\"ab12\"}\n");
    json_t *j = parse_json_line(line);
    assert_string_equal(json_string_value(json_object_get(j, "time")), "2026-11-22T01:02:03.123Z");
    assert_string_equal(json_string_value(json_object_get(j, "client")), "127.0.0.1");
    assert_string_equal(json_string_value(json_object_get(j, "method")), "GET");
    assert_string_equal(json_string_value(json_object_get(j, "path")), "/v1/files");
    assert_int_equal(json_integer_value(json_object_get(j, "status")), 200);
    assert_int_equal(json_integer_value(json_object_get(j, "bytes")), 1234);
    assert_true(json_is_real(json_object_get(j, "duration_ms")));
    assert_true(json_real_value(json_object_get(j, "duration_ms")) == 0.123);
    assert_string_equal(json_string_value(json_object_get(j, "request_id")), "ab12");
    json_decref(j);
    free(line);

    ztd_access_entry empty = {
        .time = {0, 0}, .status = 500, .duration_us = 2500000, .bytes = UINT64_MAX};
    line = format_access(&empty, 1);
    /* jansson's integers stop at INT64_MAX; the number is still valid JSON */
    j = parse_json_line_flags(line, JSON_DECODE_INT_AS_REAL);
    assert_string_equal(json_string_value(json_object_get(j, "path")), "");
    assert_null(json_object_get(j, "request_id"));
    assert_true(json_real_value(json_object_get(j, "duration_ms")) == 2500.0);
    assert_non_null(strstr(line, "\"bytes\":18446744073709551615,"));
    json_decref(j);
    free(line);
}

/* A path built to forge a second line, quote its way out, and drive a terminal. */
static const char hostile_path[] =
    "/a\"b\\c\n127.0.0.1 - - [01/Jan/2026:00:00:00 +0000] \"GET "
    "/admin HTTP/1.1\" 200 1 0.1\r\t\x01\x1b[2J\x7f\x80\xff\xc3\xa9 x";

static void test_access_text_escaping(void **state)
{
    ztd_access_entry e = example_entry();
    e.path = hostile_path;
    e.method = "G\"ET";
    e.request_id = "id with space\n";
    char *line = format_access(&e, 0);
    assert_one_clean_line(line);
    assert_string_equal(line, "127.0.0.1 - - [22/Nov/2026:01:02:03 +0000] \"G\\\"ET "
                              "/a\\\"b\\\\c\\n127.0.0.1\\x20-\\x20-\\x20[01/Jan/2026:00:00:00\\x20+"
                              "0000]\\x20\\\"GET\\x20/admin\\x20HTTP/1.1\\\"\\x20200\\x201\\x200.1"
                              "\\r\\t\\x01\\x1b[2J\\x7f\\x80\\xff\\xc3\\xa9\\x20x HTTP/1.1\" 200 "
                              "1234 0.000123 rid=id\\x20with\\x20space\\n\n");
    /* every unescaped quote is one of the two around the request */
    size_t quotes = 0;
    for (const char *p = line; *p; p++)
        if (*p == '"' && p[-1] != '\\') quotes++;
    assert_int_equal(quotes, 2);
    free(line);
}

static void test_access_json_escaping(void **state)
{
    ztd_access_entry e = example_entry();
    e.path = hostile_path;
    e.request_id = "\"},{\"status\":1";
    char *line = format_access(&e, 1);
    assert_one_clean_line(line);
    assert_non_null(strstr(line, "\\u0001\\u001b[2J\\u007f\\u0080\\u00ff\\u00c3\\u00a9 x"));
    json_t *j = parse_json_line(line);
    assert_int_equal(json_object_size(j), 9);
    assert_int_equal(json_integer_value(json_object_get(j, "status")), 200);
    /* the decoded path gives back the original bytes */
    char back[512];
    assert_int_equal(utf8_to_latin1(json_string_value(json_object_get(j, "path")), back),
                     sizeof hostile_path - 1);
    assert_string_equal(back, hostile_path);
    assert_string_equal(json_string_value(json_object_get(j, "request_id")), e.request_id);
    json_decref(j);
    free(line);

    /* all 255 non-NUL bytes round-trip */
    char every[256];
    for (int i = 1; i < 256; i++)
        every[i - 1] = (char)i;
    every[255] = '\0';
    e.path = every;
    line = format_access(&e, 1);
    assert_one_clean_line(line);
    j = parse_json_line(line);
    assert_int_equal(utf8_to_latin1(json_string_value(json_object_get(j, "path")), back), 255);
    assert_memory_equal(back, every, 256);
    json_decref(j);
    free(line);
}

/* Fields far beyond any sane request stay within ZTD_ACCESS_LINE_MAX, cut
 * with "...", and the JSON stays valid. */
static void test_access_bounds(void **state)
{
    size_t big = 100000;
    char *junk = malloc(big + 1);
    assert_non_null(junk);
    memset(junk, 0x01, big);
    junk[big] = '\0';
    ztd_access_entry e = {.time = example_time(),
                          .client = junk,
                          .method = junk,
                          .path = junk,
                          .protocol = junk,
                          .status = -2147483647 - 1,
                          .bytes = UINT64_MAX,
                          .duration_us = UINT64_MAX,
                          .request_id = junk};
    for (int json = 0; json <= 1; json++) {
        char *buf = malloc(ZTD_ACCESS_LINE_MAX);
        assert_non_null(buf);
        size_t n = ztd_access_log_format(buf, ZTD_ACCESS_LINE_MAX, &e, json);
        assert_true(n < ZTD_ACCESS_LINE_MAX);
        assert_one_clean_line(buf);
        assert_non_null(strstr(buf, json ? "\\u0001...\"" : "\\x01..."));
        if (json) {
            json_t *j = parse_json_line_flags(buf, JSON_DECODE_INT_AS_REAL);
            assert_true(json_number_value(json_object_get(j, "status")) == -2147483648.0);
            json_decref(j);
        } else {
            assert_non_null(strstr(buf, "\" -2147483648 18446744073709551615 "
                                        "18446744073709.551615 rid="));
        }
        /* a short buffer: the same length reported, a cut terminated prefix */
        char small[32];
        assert_int_equal(ztd_access_log_format(small, sizeof small, &e, json), n);
        assert_int_equal(strlen(small), sizeof small - 1);
        assert_memory_equal(small, buf, sizeof small - 1);
        free(buf);
    }
    free(junk);
}

/* ----------------------------------------------------------- writers */

static void test_error_log_file_and_level(void **state)
{
    char dir[4096], path[4200], err[256];
    temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/error.log", dir);
    assert_int_equal(ztd_log_open(path, ZTD_LOG_WARN, err, sizeof err), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    mode_t mask = umask(0);
    umask(mask);
    assert_int_equal(st.st_mode & 0777, 0640 & ~mask);
    assert_false(ztd_log_enabled(ZTD_LOG_INFO));
    assert_true(ztd_log_enabled(ZTD_LOG_WARN));
    ztd_log(ZTD_LOG_INFO, "dropped %d", 1);
    ztd_log(ZTD_LOG_DEBUG, "dropped %d", 2);
    errno = ENOSPC;
    ztd_log(ZTD_LOG_WARN, "kept %s", "warn");
    assert_int_equal(errno, ENOSPC); /* callers may log, then look at errno */
    ztd_log(ZTD_LOG_ERROR, "kept \"%s\"", "error\nsecond");
    ztd_log_set_level(ZTD_LOG_DEBUG);
    ztd_log(ZTD_LOG_DEBUG, "kept debug");
    ztd_log_close();
    ztd_log(ZTD_LOG_ERROR, "to stderr now, not the file");

    char *text = read_all(path);
    assert_non_null(text);
    assert_int_equal(count_lines(text), 3);
    const char *l1 = text, *l2 = strchr(l1, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
    const char *w1 = " level=warn msg=\"kept warn\"\n";
    const char *w2 = " level=error msg=\"kept \\\"error\\nsecond\\\"\"\n";
    const char *w3 = " level=debug msg=\"kept debug\"\n";
    assert_memory_equal(l1 + 24, w1, strlen(w1));
    assert_memory_equal(l2 + 24, w2, strlen(w2));
    assert_memory_equal(l3 + 24, w3, strlen(w3));
    assert_int_equal(l1[4], '-');
    assert_int_equal(l1[10], 'T');
    assert_int_equal(l1[23], 'Z');
    free(text);
    unlink(path);
    rmdir(dir);
}

static void test_open_failure_keeps_destination(void **state)
{
    char dir[4096], path[4200], err[256] = "";
    temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/access.log", dir);
    assert_int_equal(ztd_access_log_open(path, ZTD_ACCESS_TEXT, err, sizeof err), 0);
    assert_true(ztd_access_log_enabled());
    assert_int_equal(
        ztd_access_log_open("/nonexistent-dir/x.log", ZTD_ACCESS_TEXT, err, sizeof err), -1);
    assert_non_null(strstr(err, "access log /nonexistent-dir/x.log: cannot open: No such file"));
    assert_int_equal(ztd_log_open("/nonexistent-dir/e.log", ZTD_LOG_INFO, err, sizeof err), -1);
    assert_non_null(strstr(err, "error log /nonexistent-dir/e.log"));
    ztd_access_entry e = example_entry();
    ztd_access_log_write(&e);
    char *text = read_all(path);
    assert_int_equal(count_lines(text), 1);
    free(text);

    assert_int_equal(ztd_access_log_open("off", ZTD_ACCESS_TEXT, err, sizeof err), 0);
    assert_false(ztd_access_log_enabled());
    ztd_access_log_write(&e);
    text = read_all(path);
    assert_int_equal(count_lines(text), 1);
    free(text);
    unlink(path);
    rmdir(dir);
}

/* logrotate: move the file away, reopen, and new lines go to a new file. */
static void test_reopen_after_rename(void **state)
{
    char dir[4096], path[4200], moved[4200], epath[4200], emoved[4200], err[256];
    temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/access.log", dir);
    snprintf(moved, sizeof moved, "%s/access.log.1", dir);
    snprintf(epath, sizeof epath, "%s/error.log", dir);
    snprintf(emoved, sizeof emoved, "%s/error.log.1", dir);
    assert_int_equal(ztd_access_log_open(path, ZTD_ACCESS_JSON, err, sizeof err), 0);
    assert_int_equal(ztd_log_open(epath, ZTD_LOG_INFO, err, sizeof err), 0);
    ztd_access_entry e = example_entry();
    e.path = "/before";
    ztd_access_log_write(&e);
    ztd_log(ZTD_LOG_INFO, "before");
    assert_int_equal(rename(path, moved), 0);
    assert_int_equal(rename(epath, emoved), 0);
    assert_int_equal(ztd_log_reopen(), 0);
    e.path = "/after";
    ztd_access_log_write(&e);
    ztd_log(ZTD_LOG_INFO, "after");

    char *old = read_all(moved), *cur = read_all(path);
    assert_non_null(strstr(old, "\"/before\""));
    assert_null(strstr(old, "\"/after\""));
    assert_non_null(strstr(cur, "\"/after\""));
    assert_int_equal(count_lines(cur), 1);
    json_decref(parse_json_line(cur));
    free(old);
    free(cur);
    old = read_all(emoved);
    cur = read_all(epath);
    assert_non_null(strstr(old, "msg=\"before\""));
    assert_non_null(strstr(cur, "msg=\"after\""));
    assert_null(strstr(cur, "before"));
    free(old);
    free(cur);

    /* the directory is gone: reopen fails, the old descriptor keeps working */
    unlink(path);
    unlink(moved);
    unlink(epath);
    unlink(emoved);
    assert_int_equal(rmdir(dir), 0);
    assert_int_equal(ztd_log_reopen(), -ENOENT);
    ztd_access_log_write(&e);
    ztd_log_close();
}

typedef struct writer_arg {
    int id;
    int lines;
} writer_arg;

static void *writer_thread(void *p)
{
    const writer_arg *a = p;
    char path[64], rid[32];
    for (int i = 0; i < a->lines; i++) {
        snprintf(path, sizeof path, "/thread/%d/line/%d", a->id, i);
        snprintf(rid, sizeof rid, "t%d-%d", a->id, i);
        ztd_access_entry e = example_entry();
        e.path = path;
        e.request_id = rid;
        ztd_access_log_write(&e);
    }
    return NULL;
}

typedef struct reopen_arg {
    atomic_int stop;
    atomic_int failures;
    atomic_int reopens;
} reopen_arg;

/* No cmocka asserts off the main thread: count, and check afterwards. */
static void *reopen_thread(void *p)
{
    reopen_arg *a = p;
    while (!atomic_load(&a->stop)) {
        if (ztd_log_reopen() != 0) atomic_fetch_add(&a->failures, 1);
        atomic_fetch_add(&a->reopens, 1);
    }
    return NULL;
}

/* Writers on many threads, with reopens under their feet: every line
 * arrives whole and exactly once. */
static void test_concurrent_writers(void **state)
{
    enum { THREADS = 8, LINES = 2000 };
    char dir[4096], path[4200], err[256];
    temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/access.log", dir);
    assert_int_equal(ztd_access_log_open(path, ZTD_ACCESS_JSON, err, sizeof err), 0);
    pthread_t th[THREADS], reopener;
    writer_arg args[THREADS];
    reopen_arg ra = {0, 0, 0};
    assert_int_equal(pthread_create(&reopener, NULL, reopen_thread, &ra), 0);
    for (int i = 0; i < THREADS; i++) {
        args[i] = (writer_arg){i, LINES};
        assert_int_equal(pthread_create(&th[i], NULL, writer_thread, &args[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    atomic_store(&ra.stop, 1);
    pthread_join(reopener, NULL);
    ztd_log_close();
    assert_int_equal(atomic_load(&ra.failures), 0);
    assert_true(atomic_load(&ra.reopens) > 0);

    char *text = read_all(path);
    assert_int_equal(count_lines(text), THREADS * LINES);
    static int seen[THREADS][LINES];
    memset(seen, 0, sizeof seen);
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        nl[0] = '\0';
        json_t *j = parse_json_line(line);
        int t, i;
        assert_int_equal(
            sscanf(json_string_value(json_object_get(j, "path")), "/thread/%d/line/%d", &t, &i), 2);
        assert_in_range(t, 0, THREADS - 1);
        assert_in_range(i, 0, LINES - 1);
        seen[t][i]++;
        json_decref(j);
        line = nl + 1;
    }
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < LINES; i++)
            assert_int_equal(seen[t][i], 1);
    free(text);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_line_exact),
        cmocka_unit_test(test_error_line_escaping),
        cmocka_unit_test(test_error_line_bounds),
        cmocka_unit_test(test_timestamps_match_gmtime),
        cmocka_unit_test(test_access_text_exact),
        cmocka_unit_test(test_access_json_exact),
        cmocka_unit_test(test_access_text_escaping),
        cmocka_unit_test(test_access_json_escaping),
        cmocka_unit_test(test_access_bounds),
        cmocka_unit_test_teardown(test_error_log_file_and_level, teardown_logs),
        cmocka_unit_test_teardown(test_open_failure_keeps_destination, teardown_logs),
        cmocka_unit_test_teardown(test_reopen_after_rename, teardown_logs),
        cmocka_unit_test_teardown(test_concurrent_writers, teardown_logs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
