/*
 * Tests of server/core/config.c: defaults, every value type's parser and its
 * rejections, the three sources and their precedence, the error messages,
 * --help, and that docs/CONFIG.md and config/ztensord.json still match the
 * option table (ZT_REGEN=1 rewrites them from it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/config_modes.h"

#ifndef ZT_SOURCE_DIR
#error "ZT_SOURCE_DIR must name the source tree"
#endif

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1) /* argc of a NULL-ended argv */

static char no_env_0[] = "PATH=/usr/bin";
static char *no_env[] = {no_env_0, NULL};

/* ---------------------------------------------------------- helpers */

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len - 1 == 0) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown)
                free(buf);
            buf = grown;
        }
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

static int write_all(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = strlen(text);
    int rc = fwrite(text, 1, n, f) == n ? 0 : -1;
    return fclose(f) == 0 ? rc : -1;
}

/* A config file with `json` in the test's temporary directory; the caller frees the path. */
static char *temp_config(const char *json)
{
    const char *dir = getenv("ZT_TEST_TMP");
    char *path = malloc(4096);
    assert_non_null(path);
    snprintf(path, 4096, "%s/ztd-config-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(write_all(path, json), 0);
    return path;
}

/* Captures what `fn` writes to a FILE*. Caller frees. */
static char *capture(void (*fn)(FILE *))
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    fn(f);
    fclose(f);
    return text;
}

static void help_fn(FILE *f)
{
    ztd_config_help(f, "ztensord");
}

/* Loads argv with envp, expecting success. */
static void load_ok(ztd_config *c, int argc, char **argv, char **envp)
{
    char err[512] = "untouched";
    int rc = ztd_config_load(c, argc, argv, envp, err, sizeof err);
    if (rc != 0)
        fail_msg("unexpected error: %s", err);
    assert_string_equal(err, "");
}

/* Loads argv with envp, expecting failure whose message contains every
 * NULL-ended string given. */
static void load_fails(int argc, char **argv, char **envp, ...)
{
    ztd_config c;
    char err[512] = "";
    memset(&c, 0x5a, sizeof c);
    assert_int_equal(ztd_config_load(&c, argc, argv, envp, err, sizeof err), -1);
    /* nothing left to free: the struct is zeroed */
    assert_null(c.root);
    assert_null(c.listen);
    va_list ap;
    va_start(ap, envp);
    for (const char *want; (want = va_arg(ap, const char *));)
        if (!strstr(err, want))
            fail_msg("message \"%s\" lacks \"%s\"", err, want);
    va_end(ap);
    assert_null(strchr(err, '\n'));
}

/* Sets one flag on top of --root and expects the load to succeed. */
static void with_flag(ztd_config *c, const char *flag, const char *value)
{
    char *argv[] = {"ztensord", "--root", "/srv", (char *)flag, (char *)value, NULL};
    load_ok(c, value ? 5 : 4, argv, no_env);
}

/* One flag that must be refused with a message naming it and the range. */
static void flag_rejected(const char *flag, const char *value, const char *why, const char *allowed)
{
    char *argv[] = {"ztensord", "--root", "/srv", (char *)flag, (char *)value, NULL};
    load_fails(value ? 5 : 4, argv, no_env, flag, why, allowed, NULL);
}

/* ---------------------------------------------------------- defaults */

static void assert_defaults(const ztd_config *c)
{
    assert_string_equal(c->listen, "127.0.0.1:7070");
    assert_int_equal(c->threads, 0);
    assert_int_equal(c->max_manifest_size, 64u << 20);
    assert_int_equal(c->max_ranges, 64);
    assert_int_equal(c->max_decode_streams, 32);
    assert_int_equal(c->connection_limit, 1024);
    assert_int_equal(c->connection_timeout_ms, 60000);
    assert_int_equal(c->header_timeout_ms, 30000);
    assert_int_equal(c->min_body_rate, 4096);
    assert_int_equal(c->send_lowat, 131072);
    assert_int_equal(c->max_connections_per_address, 0);
    assert_int_equal(c->lingering_max, 64u << 20);
    assert_int_equal(c->lingering_timeout_ms, 30000);
    assert_int_equal(c->shutdown_grace_ms, 10000);
    assert_string_equal(c->access_log, "-");
    assert_int_equal(c->access_log_format, ZTD_ACCESS_TEXT);
    assert_int_equal(c->request_id_header, ZTD_REQUEST_ID_ECHO);
    assert_int_equal(c->log_level, ZTD_LOG_INFO);
    assert_string_equal(c->error_log, "-");
    assert_true(c->watch);
    assert_int_equal(c->rescan_debounce_ms, 200);
    assert_string_equal(c->cache_control, "public, max-age=0, s-maxage=1, proxy-revalidate");
    assert_true(c->verify_digests);
}

static void test_init_defaults(void **state)
{
    ztd_config c;
    memset(&c, 0x5a, sizeof c);
    assert_int_equal(ztd_config_init_defaults(&c), 0);
    assert_defaults(&c);
    assert_null(c.root);
    assert_null(c.config_path);
    assert_int_equal(c.action, ZTD_ACTION_RUN);
    ztd_config_free(&c);
    assert_null(c.listen); /* zeroed: a second free is harmless */
    ztd_config_free(&c);
    ztd_config_free(NULL);
}

static void test_load_root_only_gives_defaults(void **state)
{
    ztd_config c;
    char *argv[] = {"ztensord", "--root", "/srv/models", NULL};
    load_ok(&c, N(argv), argv, NULL); /* NULL envp is no environment */
    assert_int_equal(c.action, ZTD_ACTION_RUN);
    assert_string_equal(c.root, "/srv/models");
    assert_null(c.config_path);
    assert_defaults(&c);
    ztd_config_free(&c);
}

static void test_missing_root(void **state)
{
    char *argv[] = {"ztensord", "--threads", "2", NULL};
    load_fails(N(argv), argv, no_env, "option root is required", "--root DIR", "ZTENSORD_ROOT",
               "\"root\" in the config file", NULL);
    char *argv0[] = {"ztensord", NULL};
    load_fails(0, argv0, NULL, "root is required", NULL); /* argc 0 too */
    char *empty[] = {"ztensord", "--root=", NULL};
    load_fails(N(empty), empty, no_env, "option root (flag --root)", "is empty", NULL);
}

static void test_actions(void **state)
{
    static const struct {
        const char *arg;
        ztd_action action;
    } cases[] = {{"--help", ZTD_ACTION_HELP},
                 {"-h", ZTD_ACTION_HELP},
                 {"--version", ZTD_ACTION_VERSION},
                 {"-V", ZTD_ACTION_VERSION},
                 {"--dump-config-markdown", ZTD_ACTION_DUMP_CONFIG_MARKDOWN},
                 {"--dump-config-json", ZTD_ACTION_DUMP_CONFIG_JSON}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ztd_config c;
        /* no root, a bad value and an unknown flag: the action wins regardless */
        char *argv[] = {"ztensord", "--max-ranges", "999", (char *)cases[i].arg, "--bogus", NULL};
        char *env[] = {"ZTENSORD_NOPE=1", NULL};
        load_ok(&c, N(argv), argv, env);
        assert_int_equal(c.action, cases[i].action);
        assert_null(c.root);
        assert_defaults(&c);
        ztd_config_free(&c);
    }
    /* after "--" it is an argument, not an action */
    char *argv[] = {"ztensord", "--root", "/srv", "--", "--help", NULL};
    load_fails(N(argv), argv, no_env, "unexpected argument \"--help\"", NULL);
}

/* ------------------------------------------------------ flag syntax */

static void test_flag_forms(void **state)
{
    ztd_config c;
    char *argv[] = {"ztensord",
                    "--root=/a",
                    "--listen",
                    "0.0.0.0:0",
                    "--threads=8",
                    "--max-ranges",
                    "2",
                    "--access-log-format=json",
                    "--cache-control=max-age=60, public",
                    NULL};
    load_ok(&c, N(argv), argv, no_env);
    assert_string_equal(c.root, "/a");
    assert_string_equal(c.listen, "0.0.0.0:0");
    assert_int_equal(c.threads, 8);
    assert_int_equal(c.max_ranges, 2);
    assert_int_equal(c.access_log_format, ZTD_ACCESS_JSON);
    assert_string_equal(c.cache_control, "max-age=60, public"); /* only the first = splits */
    ztd_config_free(&c);

    /* the last of a repeated flag wins */
    char *twice[] = {"ztensord", "--root",      "/a",        "--threads",
                     "3",        "--threads=5", "--root=/b", NULL};
    load_ok(&c, N(twice), twice, no_env);
    assert_int_equal(c.threads, 5);
    assert_string_equal(c.root, "/b");
    ztd_config_free(&c);

    /* a value starting with - is fine; one starting with -- needs = */
    char *dash[] = {"ztensord", "--root", "-odd-dir", "--cache-control=--x", NULL};
    load_ok(&c, N(dash), dash, no_env);
    assert_string_equal(c.root, "-odd-dir");
    assert_string_equal(c.cache_control, "--x");
    ztd_config_free(&c);
}

static void test_flag_errors(void **state)
{
    char *unknown[] = {"ztensord", "--root", "/a", "--bogus", "1", NULL};
    load_fails(N(unknown), unknown, no_env, "unknown flag \"--bogus\"", "--help", NULL);
    char *typo[] = {"ztensord", "--root", "/a", "--max-range=3", NULL};
    load_fails(N(typo), typo, no_env, "unknown flag \"--max-range\"", "did you mean --max-ranges?",
               NULL);
    char *underscore[] = {"ztensord", "--root", "/a", "--max_ranges", "3", NULL};
    load_fails(N(underscore), underscore, no_env, "unknown flag \"--max_ranges\"",
               "did you mean --max-ranges?", NULL);
    char *shortf[] = {"ztensord", "-r", "/a", NULL};
    load_fails(N(shortf), shortf, no_env, "unknown flag \"-r\"", NULL);
    char *positional[] = {"ztensord", "--root", "/a", "extra", NULL};
    load_fails(N(positional), positional, no_env, "unexpected argument \"extra\"", NULL);
    char *missing[] = {"ztensord", "--root", "/a", "--listen", NULL};
    load_fails(N(missing), missing, no_env, "option listen (flag --listen): missing value",
               "allowed: HOST:PORT", NULL);
    char *swallow[] = {"ztensord", "--listen", "--root", "/a", NULL};
    load_fails(N(swallow), swallow, no_env, "option listen (flag --listen): missing value",
               "next is \"--root\"", "--listen=VALUE", NULL);
    char *config_in_env_name[] = {"ztensord", "--root", "/a", "--no-threads", NULL};
    load_fails(N(config_in_env_name), config_in_env_name, no_env, "unknown flag \"--no-threads\"",
               NULL);
}

/* Other servers' names for an option suggest ours: --port is --listen here. */
static void test_flag_aliases(void **state)
{
    (void)state;
    static const struct {
        const char *typed, *want;
    } cases[] = {
        {"--port", "did you mean --listen?"},     {"--host", "did you mean --listen?"},
        {"--bind", "did you mean --listen?"},     {"--addr", "did you mean --listen?"},
        {"--address", "did you mean --listen?"},  {"--PORT", "did you mean --listen?"},
        {"--dir", "did you mean --root?"},        {"--directory", "did you mean --root?"},
        {"--models", "did you mean --root?"},     {"--data-dir", "did you mean --root?"},
        {"--origin", "did you mean --upstream?"}, {"--cache", "did you mean --cache-dir?"},
        {"--workers", "did you mean --threads?"}, {"--cert", "did you mean --tls-cert?"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[] = {"ztensord", "--root", "/a", (char *)cases[i].typed, "7070", NULL};
        char quoted[64];
        snprintf(quoted, sizeof quoted, "unknown flag \"%s\"", cases[i].typed);
        load_fails(N(argv), argv, no_env, quoted, cases[i].want, NULL);
    }
    char *argv[] = {"ztensord", NULL};
    char *port_env[] = {"ZTENSORD_ROOT=/r", "ZTENSORD_PORT=7070", NULL};
    load_fails(N(argv), argv, port_env, "unknown environment variable \"ZTENSORD_PORT\"",
               "did you mean ZTENSORD_LISTEN?", NULL);
    char *path = temp_config("{\"root\": \"/r\", \"port\": 7070}");
    char *file[] = {"ztensord", "--config", path, NULL};
    load_fails(N(file), file, no_env, "unknown key \"port\"", "did you mean \"listen\"?", NULL);
    unlink(path);
    free(path);
}

/* ------------------------------------------------ options that do nothing */

static void count_msg(void *ud, const char *msg)
{
    char *all = ud;
    strncat(all, msg, 4095 - strlen(all));
    strncat(all, "\n", 4095 - strlen(all));
}

/* How many options ztd_config_unused() reports for argv; their messages in out. */
static size_t unused_of(int argc, char **argv, char *out)
{
    ztd_config c;
    out[0] = 0;
    load_ok(&c, argc, argv, no_env);
    size_t n = ztd_config_unused(&c, count_msg, out);
    ztd_config_free(&c);
    return n;
}

static void test_unused_options(void **state)
{
    (void)state;
    char msgs[4096];
    char *plain[] = {"ztensord", "--root", "/a", NULL};
    assert_int_equal(unused_of(N(plain), plain, msgs), 0);
    /* set to the default: nothing to say either */
    char *dflt[] = {"ztensord", "--root",        "/a",   "--cache-size",
                    "10G",      "--listen-mode", "0660", NULL};
    assert_int_equal(unused_of(N(dflt), dflt, msgs), 0);
    char *cache[] = {"ztensord", "--root", "/a", "--cache-size", "5G", "--cache-dir", "/c", NULL};
    assert_int_equal(unused_of(N(cache), cache, msgs), 2);
    assert_non_null(strstr(msgs, "option cache_size is set but does nothing without upstream"));
    assert_non_null(strstr(msgs, "option cache_dir is set but does nothing without upstream"));
    char *with_up[] = {"ztensord",   "--root",      "/a",          "--cache-size", "5G",
                       "--upstream", "http://o:70", "--cache-dir", "/c",           NULL};
    assert_int_equal(unused_of(N(with_up), with_up, msgs), 0);
    char *mode[] = {"ztensord", "--root", "/a", "--listen-mode", "0600", NULL};
    assert_int_equal(unused_of(N(mode), mode, msgs), 1);
    assert_non_null(strstr(msgs, "listen_mode"));
    char *mode_unix[] = {"ztensord",
                         "--root",
                         "/a",
                         "--listen-mode",
                         "0600",
                         "--listen",
                         "unix:/run/z.sock",
                         "--max-connections-per-address",
                         "4",
                         NULL};
    assert_int_equal(unused_of(N(mode_unix), mode_unix, msgs), 1);
    assert_non_null(strstr(msgs, "max_connections_per_address is set but does nothing on a unix"));
    char *nowatch[] = {"ztensord", "--root", "/a", "--no-watch", "--rescan-debounce", "1s", NULL};
    assert_int_equal(unused_of(N(nowatch), nowatch, msgs), 1);
    char *logs[] = {"ztensord", "--root", "/a", "--access-log", "off", "--access-log-format",
                    "json",     NULL};
    assert_int_equal(unused_of(N(logs), logs, msgs), 1);
    char *uploads[] = {"ztensord", "--root",         "/a", "--max-uploads",
                       "2",        "--disk-reserve", "0",  NULL};
    assert_int_equal(unused_of(N(uploads), uploads, msgs), 2);
    char *anon[] = {"ztensord", "--root", "/a", "--max-uploads", "2", "--allow-anonymous-writes",
                    NULL};
    assert_int_equal(unused_of(N(anon), anon, msgs), 0);
    char *both[] = {"ztensord", "--root", "/a", "--tokens-file", "/t", "--allow-anonymous-writes",
                    NULL};
    assert_int_equal(unused_of(N(both), both, msgs), 1);
    assert_non_null(strstr(msgs, "allow_anonymous_writes"));
}

static void test_upstream_not_self(void **state)
{
    (void)state;
    static const char *const refused[][2] = {
        {"127.0.0.1:7070", "http://127.0.0.1:7070"},
        {"127.0.0.1:7070", "http://localhost:7070/models"},
        {"0.0.0.0:7070", "http://127.0.0.1:7070"},
        {"[::1]:7070", "http://[::1]:7070"},
        {"10.0.0.5:80", "http://10.0.0.5"},
        {"10.0.0.5:443", "https://10.0.0.5/"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char *argv[] = {"ztensord",
                        "--root",
                        "/a",
                        "--listen",
                        (char *)refused[i][0],
                        "--upstream",
                        (char *)refused[i][1],
                        "--cache-dir",
                        "/c",
                        NULL};
        load_fails(N(argv), argv, no_env, "option upstream", "own listen address", NULL);
    }
    static const char *const fine[][2] = {
        {"127.0.0.1:7071", "http://127.0.0.1:7070"}, {"127.0.0.1:0", "http://127.0.0.1:7070"},
        {"10.0.0.5:7070", "http://10.0.0.6:7070"},   {"unix:/run/z.sock", "http://127.0.0.1:7070"},
        {"10.0.0.5:80", "https://10.0.0.5"},
    };
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
        ztd_config c;
        char *argv[] = {
            "ztensord",   "--root",           "/a",          "--listen", (char *)fine[i][0],
            "--upstream", (char *)fine[i][1], "--cache-dir", "/c",       NULL};
        load_ok(&c, N(argv), argv, no_env);
        ztd_config_free(&c);
    }
}

/* ------------------------------------------------------------- types */

static void test_bool(void **state)
{
    static const struct {
        const char *flag;
        bool want;
    } cases[] = {{"--watch", true},        {"--no-watch", false},  {"--watch=true", true},
                 {"--watch=false", false}, {"--watch=yes", true},  {"--watch=NO", false},
                 {"--watch=on", true},     {"--watch=Off", false}, {"--watch=1", true},
                 {"--watch=0", false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ztd_config c;
        char *argv[] = {"ztensord", "--root", "/a", "--no-watch", (char *)cases[i].flag, NULL};
        load_ok(&c, N(argv), argv, no_env);
        assert_int_equal(c.watch, cases[i].want);
        ztd_config_free(&c);
    }
    char *maybe[] = {"ztensord", "--root", "/a", "--watch=maybe", NULL};
    load_fails(N(maybe), maybe, no_env, "option watch (flag --watch): \"maybe\" is not a boolean",
               "allowed: true or false", NULL);
    char *empty[] = {"ztensord", "--root", "/a", "--watch=", NULL};
    load_fails(N(empty), empty, no_env, "option watch (flag --watch)", "not a boolean", NULL);
    char *neg_value[] = {"ztensord", "--root", "/a", "--no-watch=true", NULL};
    load_fails(N(neg_value), neg_value, no_env, "option watch (flag --no-watch): takes no value",
               NULL);
    /* a bool flag never takes the next argument */
    char *separate[] = {"ztensord", "--root", "/a", "--watch", "false", NULL};
    load_fails(N(separate), separate, no_env, "unexpected argument \"false\"", NULL);
}

static void test_uint(void **state)
{
    ztd_config c;
    with_flag(&c, "--max-ranges", "1");
    assert_int_equal(c.max_ranges, 1);
    ztd_config_free(&c);
    with_flag(&c, "--max-ranges", "64");
    assert_int_equal(c.max_ranges, 64);
    ztd_config_free(&c);
    with_flag(&c, "--threads", "256");
    assert_int_equal(c.threads, 256);
    ztd_config_free(&c);
    with_flag(&c, "--connection-limit", "007");
    assert_int_equal(c.connection_limit, 7);
    ztd_config_free(&c);

    const char *range = "allowed: an integer from 1 to 64";
    flag_rejected("--max-ranges", "0",
                  "option max_ranges (flag --max-ranges): \"0\" is out of range", range);
    flag_rejected("--max-ranges", "65", "\"65\" is out of range", range);
    flag_rejected("--max-ranges", "-1", "\"-1\" is not a whole number", range);
    flag_rejected("--max-ranges", "+5", "is not a whole number", range);
    flag_rejected("--max-ranges", " 5", "is not a whole number", range);
    flag_rejected("--max-ranges", "5x", "is not a whole number", range);
    flag_rejected("--max-ranges", "", "\"\" is not a whole number", range);
    flag_rejected("--max-ranges", "0x10", "is not a whole number", range);
    flag_rejected("--max-ranges", "99999999999999999999999", "is too large", range);
    /* above UINT_MAX but within uint64: must not wrap into range */
    flag_rejected("--threads", "4294967297", "is out of range", "from 0 to 256");
    flag_rejected("--connection-limit", "0", "is out of range", "from 1 to 1048576");
}

static void test_size(void **state)
{
    static const struct {
        const char *v;
        uint64_t want;
    } ok[] = {{"1K", 1024},
              {"1k", 1024},
              {"1KB", 1024},
              {"1KiB", 1024},
              {"2048", 2048},
              {"2048b", 2048},
              {"64M", 64ull << 20},
              {"64mib", 64ull << 20},
              {"1G", 1ull << 30},
              {"1073741824", 1ull << 30},
              {"1048576K", 1ull << 30}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        ztd_config c;
        with_flag(&c, "--max-manifest-size", ok[i].v);
        if (c.max_manifest_size != ok[i].want)
            fail_msg("%s gave %llu", ok[i].v, (unsigned long long)c.max_manifest_size);
        ztd_config_free(&c);
    }
    const char *range = "allowed: a size from 1K to 1G";
    flag_rejected("--max-manifest-size", "1023", "\"1023\" is out of range", range);
    flag_rejected("--max-manifest-size", "1073741825", "is out of range", range);
    flag_rejected("--max-manifest-size", "2G", "is out of range", range);
    flag_rejected("--max-manifest-size", "1T", "is out of range", range);
    flag_rejected("--max-manifest-size", "1X", "has an unknown unit (use K, M, G or T)", range);
    flag_rejected("--max-manifest-size", "1KX", "has an unknown unit", range);
    flag_rejected("--max-manifest-size", "1.5M", "has an unknown unit", range);
    flag_rejected("--max-manifest-size", "M", "is not a size", range);
    flag_rejected("--max-manifest-size", "", "is not a size", range);
    flag_rejected("--max-manifest-size", "-1M", "is not a size", range);
    flag_rejected("--max-manifest-size", "99999999999T", "is too large", range);
    flag_rejected("--max-manifest-size", "99999999999999999999999", "is too large", range);
}

static void test_duration(void **state)
{
    static const struct {
        const char *flag, *v;
        uint64_t want;
    } ok[] = {{"--rescan-debounce", "200ms", 200},
              {"--rescan-debounce", "0", 0},
              {"--rescan-debounce", "0ms", 0},
              {"--rescan-debounce", "1m", 60000},
              {"--connection-timeout", "1s", 1000},
              {"--connection-timeout", "1m30s", 90000},
              {"--connection-timeout", "1h1m1s1ms", 3661001},
              {"--connection-timeout", "24h", 86400000},
              {"--shutdown-grace", "0", 0},
              {"--shutdown-grace", "1500ms", 1500}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        ztd_config c;
        with_flag(&c, ok[i].flag, ok[i].v);
        uint64_t got = strcmp(ok[i].flag, "--rescan-debounce") == 0      ? c.rescan_debounce_ms
                       : strcmp(ok[i].flag, "--connection-timeout") == 0 ? c.connection_timeout_ms
                                                                         : c.shutdown_grace_ms;
        if (got != ok[i].want)
            fail_msg("%s %s gave %llu ms", ok[i].flag, ok[i].v, (unsigned long long)got);
        ztd_config_free(&c);
    }
    const char *range = "allowed: a duration from 1s to 24h";
    flag_rejected("--connection-timeout", "0", "\"0\" is out of range", range);
    flag_rejected("--connection-timeout", "999ms", "is out of range", range);
    flag_rejected("--connection-timeout", "24h1ms", "is out of range", range);
    flag_rejected("--connection-timeout", "60", "\"60\" needs a unit (ms, s, m or h)", range);
    flag_rejected("--connection-timeout", "5x", "has an unknown unit (use ms, s, m or h)", range);
    flag_rejected("--connection-timeout", "5S", "needs a unit", range); /* units are lower case */
    flag_rejected("--connection-timeout", "1.5s", "needs a unit", range);
    flag_rejected("--connection-timeout", "s", "is not a duration", range);
    flag_rejected("--connection-timeout", "", "is not a duration", range);
    flag_rejected("--connection-timeout", "-1s", "is not a duration", range);
    flag_rejected("--connection-timeout", "1s ", "is not a duration", range);
    flag_rejected("--connection-timeout", "99999999999999999999h", "is too large", range);
    flag_rejected("--connection-timeout", "9999999999999999h", "is too large", range);
    flag_rejected("--rescan-debounce", "61s", "is out of range", "a duration from 0 to 1m");
}

static void test_enum(void **state)
{
    static const struct {
        const char *v;
        ztd_log_level want;
    } levels[] = {{"error", ZTD_LOG_ERROR},
                  {"warn", ZTD_LOG_WARN},
                  {"info", ZTD_LOG_INFO},
                  {"debug", ZTD_LOG_DEBUG}};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        ztd_config c;
        with_flag(&c, "--log-level", levels[i].v);
        assert_int_equal(c.log_level, levels[i].want);
        ztd_config_free(&c);
    }
    ztd_config c;
    with_flag(&c, "--access-log-format", "json");
    assert_int_equal(c.access_log_format, ZTD_ACCESS_JSON);
    ztd_config_free(&c);
    with_flag(&c, "--access-log-format", "text");
    assert_int_equal(c.access_log_format, ZTD_ACCESS_TEXT);
    ztd_config_free(&c);
    flag_rejected("--log-level", "verbose", "\"verbose\" is not a known value",
                  "allowed: one of error, warn, info, debug");
    flag_rejected("--access-log-format", "JSON", "is not a known value",
                  "allowed: one of text, json");
    flag_rejected("--log-level", "", "is not a known value", "one of error");
}

static void test_listen(void **state)
{
    static const struct {
        const char *v, *host;
        unsigned port;
    } ok[] = {{"127.0.0.1:7070", "127.0.0.1", 7070}, {"0.0.0.0:0", "0.0.0.0", 0},
              {"localhost:80", "localhost", 80},     {"[::1]:8080", "::1", 8080},
              {"[::]:65535", "::", 65535},           {"[2001:db8::1]:443", "2001:db8::1", 443}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char host[256], why[128] = "";
        unsigned port = 99999;
        if (ztd_listen_parse(ok[i].v, host, sizeof host, &port, why, sizeof why) != 0)
            fail_msg("%s: %s", ok[i].v, why);
        assert_string_equal(host, ok[i].host);
        assert_int_equal(port, ok[i].port);
        ztd_config c;
        with_flag(&c, "--listen", ok[i].v);
        assert_string_equal(c.listen, ok[i].v);
        ztd_config_free(&c);
    }
    static const struct {
        const char *v, *why;
    } bad[] = {{"::1:80", "needs brackets around an IPv6 address"},
               {"localhost", "needs a port"},
               {"localhost:", "needs a port from 0 to 65535"},
               {"localhost:65536", "needs a port from 0 to 65535"},
               {"localhost:123456", "needs a port"},
               {"localhost:-1", "needs a port"},
               {"localhost:80x", "needs a port"},
               {":80", "has no host"},
               {"[]:80", "has no host"},
               {"[::1]80", "needs :PORT after the ]"},
               {"[::1:80", "has no ] after the IPv6 address"},
               {"[zz]:80", "has an invalid IPv6 address"},
               {"bad host:80", "has an invalid host name"},
               {"", "needs a port"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char host[256], why[128] = "";
        unsigned port;
        assert_int_equal(ztd_listen_parse(bad[i].v, host, sizeof host, &port, why, sizeof why), -1);
        if (!strstr(why, bad[i].why))
            fail_msg("%s: \"%s\" lacks \"%s\"", bad[i].v, why, bad[i].why);
        flag_rejected("--listen", bad[i].v, bad[i].why, "allowed: HOST:PORT or [IPv6]:PORT");
    }
    char small[4], why[128];
    unsigned port;
    assert_int_equal(ztd_listen_parse("localhost:80", small, sizeof small, &port, why, sizeof why),
                     -1);
    assert_non_null(strstr(why, "too long"));
}

/* listen = unix:PATH and listen_mode (the socket itself: tests/ops/t_unix_socket.sh). */
static void test_listen_unix(void **state)
{
    ztd_config c;
    with_flag(&c, "--listen", "unix:/run/ztensord/ztensord.sock");
    assert_string_equal(ztd_listen_unix_path(c.listen), "/run/ztensord/ztensord.sock");
    assert_string_equal(c.listen_mode, "0660");
    assert_int_equal(ztd_listen_mode(c.listen_mode), 0660);
    ztd_config_free(&c);
    assert_null(ztd_listen_unix_path("127.0.0.1:7070"));
    char longest[6 + 107 + 1] = "unix:/";
    memset(longest + 6, 'a', 106);
    longest[6 + 106] = '\0'; /* "/" + 106 bytes: 107, the most sun_path holds */
    with_flag(&c, "--listen", longest);
    ztd_config_free(&c);
    char over[6 + 108 + 1] = "unix:/";
    memset(over + 6, 'a', 107);
    over[6 + 107] = '\0';
    flag_rejected("--listen", over, "longer than 107 bytes", "unix:/ABSOLUTE/PATH");
    flag_rejected("--listen", "unix:run/z.sock", "needs an absolute path", "unix:/ABSOLUTE/PATH");
    flag_rejected("--listen", "unix:", "needs an absolute path", "unix:/ABSOLUTE/PATH");
    flag_rejected("--listen", "unix:/run/", "names a directory", "unix:/ABSOLUTE/PATH");
    with_flag(&c, "--listen-mode", "600");
    assert_int_equal(ztd_listen_mode(c.listen_mode), 0600);
    ztd_config_free(&c);
    with_flag(&c, "--listen-mode", "0777");
    assert_int_equal(ztd_listen_mode(c.listen_mode), 0777);
    ztd_config_free(&c);
    static const char *const bad_modes[] = {"", "0888", "01777", "4777", "66o", "-660", "00000"};
    for (size_t i = 0; i < sizeof bad_modes / sizeof bad_modes[0]; i++)
        flag_rejected("--listen-mode", bad_modes[i], "octal mode", "from 0 to 0777");
}

static void test_strings(void **state)
{
    ztd_config c;
    with_flag(&c, "--cache-control", "");
    assert_string_equal(c.cache_control, ""); /* empty: send no header */
    ztd_config_free(&c);
    with_flag(&c, "--access-log", "off");
    assert_string_equal(c.access_log, "off");
    ztd_config_free(&c);
    with_flag(&c, "--error-log", "/var/log/ztensord/error.log");
    assert_string_equal(c.error_log, "/var/log/ztensord/error.log");
    ztd_config_free(&c);
    /* header injection through the config is refused */
    flag_rejected("--cache-control", "no-cache\r\nX-Evil: 1",
                  "\"no-cache\\x0d\\x0aX-Evil: 1\" contains a byte that is not printable ASCII",
                  "allowed: printable ASCII");
    flag_rejected("--access-log", "", "is empty", "allowed: -, off or a file path");
    flag_rejected("--error-log", "", "is empty", "allowed: - or a file path");
}

/* s3_buckets: a list; --s3-bucket adds one item each time, the file may
 * give an array; ztensord's own path names and bad bucket names are refused. */
static void test_s3_buckets(void **state)
{
    ztd_config c;
    char *plain[] = {"ztensord", "--root", "/srv", NULL};
    load_ok(&c, N(plain), plain, no_env);
    assert_string_equal(c.s3_buckets, "models");
    ztd_config_free(&c);
    char *two[] = {"ztensord",       "--root",      "/srv",      "--s3-bucket",
                   "llm=models/llm", "--s3-bucket", "vision.v2", NULL};
    load_ok(&c, N(two), two, no_env);
    assert_string_equal(c.s3_buckets, "llm=models/llm,vision.v2");
    ztd_config_free(&c);
    char *path = temp_config("{\"root\": \"/srv\", \"s3_buckets\": [\"aa1\", \"bb2=x/y\"]}\n");
    char *file[] = {"ztensord", "--config", path, NULL};
    load_ok(&c, N(file), file, no_env);
    assert_string_equal(c.s3_buckets, "aa1,bb2=x/y");
    ztd_config_free(&c);
    unlink(path);
    free(path);
    flag_rejected("--s3-bucket", "metrics", "is one of ztensord's own paths", "S3 bucket names");
    flag_rejected("--s3-bucket", "healthz=sub", "is one of ztensord's own paths", "s3_buckets");
    flag_rejected("--s3-buckets", "Models", "lowercase", "s3_buckets");
    flag_rejected("--s3-bucket", "ab", "3 to 63", "s3_buckets");
    flag_rejected("--s3-bucket", "a..b", "adjacent periods", "s3_buckets");
    flag_rejected("--s3-bucket", "192.168.1.1", "IP address", "s3_buckets");
    flag_rejected("--s3-bucket", "abc=../up", "beginning with '.'", "s3_buckets");
    flag_rejected("--s3-bucket", "abc=/abs", "leading or trailing", "s3_buckets");
    flag_rejected("--s3-buckets", "abc,abc", "given twice", "s3_buckets");
    flag_rejected("--s3-buckets", "abc,", "empty bucket name", "s3_buckets");
}

/* ---------------------------------------------------------- sources */

static void test_env(void **state)
{
    ztd_config c;
    char *argv[] = {"ztensord", NULL};
    char *env[] = {"HOME=/root",
                   "ZTENSORD_ROOT=/from/env",
                   "ZTENSORD_WATCH=off",
                   "ZTENSORD_MAX_MANIFEST_SIZE=2M",
                   "ZTENSORD_CONNECTION_TIMEOUT=5m",
                   "ZTENSORD_LOG_LEVEL=debug",
                   "ZTENSORD_CACHE_CONTROL=",
                   "ZTENSORDX=ignored",
                   "NOT_ZTENSORD_BOGUS=ignored",
                   "ZTENSORD_NO_EQUALS_SIGN",
                   NULL};
    load_ok(&c, N(argv), argv, env);
    assert_string_equal(c.root, "/from/env");
    assert_false(c.watch);
    assert_int_equal(c.max_manifest_size, 2u << 20);
    assert_int_equal(c.connection_timeout_ms, 300000);
    assert_int_equal(c.log_level, ZTD_LOG_DEBUG);
    assert_string_equal(c.cache_control, "");
    ztd_config_free(&c);

    char *bad[] = {"ZTENSORD_ROOT=/r", "ZTENSORD_MAX_RANGES=100", NULL};
    load_fails(N(argv), argv, bad, "option max_ranges (env ZTENSORD_MAX_RANGES)",
               "\"100\" is out of range", "allowed: an integer from 1 to 64", NULL);
    char *unknown[] = {"ZTENSORD_ROOT=/r", "ZTENSORD_BOGUS=1", NULL};
    load_fails(N(argv), argv, unknown, "unknown environment variable \"ZTENSORD_BOGUS\"",
               "every ZTENSORD_* variable must name an option", NULL);
    char *typo[] = {"ZTENSORD_ROOT=/r", "ZTENSORD_THREAD=1", NULL};
    load_fails(N(argv), argv, typo, "unknown environment variable \"ZTENSORD_THREAD\"",
               "did you mean ZTENSORD_THREADS?", NULL);
    char *lower[] = {"ZTENSORD_root=/r", NULL};
    load_fails(N(argv), argv, lower, "unknown environment variable \"ZTENSORD_root\"",
               "did you mean ZTENSORD_ROOT?", NULL);
    char *bare[] = {"ZTENSORD_=1", "ZTENSORD_ROOT=/r", NULL};
    load_fails(N(argv), argv, bare, "unknown environment variable \"ZTENSORD_\"", NULL);
    /* an invalid variable stops start-up even when a flag overrides it */
    char *over[] = {"ztensord", "--root", "/a", "--threads", "2", NULL};
    char *bad_threads[] = {"ZTENSORD_THREADS=lots", NULL};
    load_fails(N(over), over, bad_threads, "option threads (env ZTENSORD_THREADS)",
               "\"lots\" is not a whole number", NULL);
}

static void test_file(void **state)
{
    ztd_config c;
    char *path = temp_config("{\"root\": \"/from/file\", \"threads\": 4, \"watch\": false,\n"
                             " \"max_manifest_size\": 4096, \"rescan_debounce\": \"1s\",\n"
                             " \"connection_timeout\": \"2m\", \"access_log_format\": \"json\",\n"
                             " \"listen\": \"[::1]:0\", \"cache_control\": \"no-store\"}\n");
    char *argv[] = {"ztensord", "--config", path, NULL};
    load_ok(&c, N(argv), argv, no_env);
    assert_string_equal(c.config_path, path);
    assert_string_equal(c.root, "/from/file");
    assert_int_equal(c.threads, 4);
    assert_false(c.watch);
    assert_int_equal(c.max_manifest_size, 4096);
    assert_int_equal(c.rescan_debounce_ms, 1000);
    assert_int_equal(c.connection_timeout_ms, 120000);
    assert_int_equal(c.access_log_format, ZTD_ACCESS_JSON);
    assert_string_equal(c.listen, "[::1]:0");
    assert_string_equal(c.cache_control, "no-store");
    ztd_config_free(&c);

    /* ZTENSORD_CONFIG names the file too, and is not an unknown variable */
    char *plain[] = {"ztensord", NULL};
    char env_config[4200];
    snprintf(env_config, sizeof env_config, "ZTENSORD_CONFIG=%s", path);
    char *env[] = {env_config, NULL};
    load_ok(&c, N(plain), plain, env);
    assert_string_equal(c.config_path, path);
    assert_string_equal(c.root, "/from/file");
    ztd_config_free(&c);
    unlink(path);
    free(path);
}

/* Expects a config file holding `json` to be refused with a message that
 * contains `want` and `also`, and that names the file. */
static void file_rejected(const char *json, const char *want, const char *also)
{
    char *path = temp_config(json);
    char *argv[] = {"ztensord", "--root", "/a", "--config", path, NULL};
    load_fails(N(argv), argv, no_env, want, also, path, NULL);
    unlink(path);
    free(path);
}

static void test_file_errors(void **state)
{
    file_rejected("{\"max_ranges\": 100}", "option max_ranges (file ",
                  "): \"100\" is out of range; allowed: an integer from 1 to 64");
    file_rejected("{\"max_ranges\": -3}", "option max_ranges (file ", "-3 is out of range");
    file_rejected("{\"max_ranges\": \"5\"}", "expected an integer, got a string",
                  "allowed: an integer from 1 to 64");
    file_rejected("{\"max_ranges\": 5.0}", "expected an integer, got a fractional number",
                  "max_ranges");
    file_rejected("{\"watch\": \"false\"}", "option watch (file ", "expected true or false");
    file_rejected("{\"watch\": null}", "option watch (file ", "got null");
    file_rejected("{\"connection_timeout\": 60}", "option connection_timeout (file ",
                  "expected a string, got an integer");
    file_rejected("{\"connection_timeout\": \"60\"}", "\"60\" needs a unit",
                  "a duration from 1s to 24h");
    file_rejected("{\"max_manifest_size\": \"2G\"}", "option max_manifest_size (file ",
                  "\"2G\" is out of range; allowed: a size from 1K to 1G");
    file_rejected("{\"max_manifest_size\": 512}", "\"512\" is out of range", "from 1K to 1G");
    file_rejected("{\"max_manifest_size\": [1]}", "expected an integer or a string",
                  "got an array");
    file_rejected("{\"log_level\": \"loud\"}", "option log_level (file ", "\"loud\"");
    file_rejected("{\"listen\": 7070}", "option listen (file ", "expected a string");
    file_rejected("{\"bogus\": 1}", "unknown key \"bogus\" in config file ", "--help");
    file_rejected("{\"max-ranges\": 1}", "unknown key \"max-ranges\"",
                  "did you mean \"max_ranges\"?");
    file_rejected("{\"config\": \"/etc/other.json\"}", "unknown key \"config\"", "config file");
    file_rejected("[1, 2]", "expected a JSON object, got an array", "config file");
    file_rejected("{\"root\": \"/a\",}", "line 1", "config file");
    file_rejected("{\"threads\": 1, \"threads\": 2}", "duplicate", "config file");
    file_rejected("", "config file", "(flag --config)");

    char *argv[] = {"ztensord", "--root", "/a", "--config", "/nonexistent/ztd.json", NULL};
    load_fails(N(argv), argv, no_env, "config file /nonexistent/ztd.json (flag --config)",
               "No such file", NULL);
    char *empty[] = {"ztensord", "--root", "/a", "--config=", NULL};
    load_fails(N(empty), empty, no_env, "option config (flag --config): \"\" is empty", NULL);
    char *envp[] = {"ZTENSORD_CONFIG=/nonexistent/env.json", NULL};
    load_fails(1, argv, envp, "config file /nonexistent/env.json (env ZTENSORD_CONFIG)", NULL);
}

/* The same option from every source: flag > environment > file > default. */
static void test_precedence(void **state)
{
    char *path = temp_config("{\"root\": \"/file\", \"max_ranges\": 10, \"watch\": false}");
    char *with_file[] = {"ztensord", "--config", path, "--max-ranges", "30", "--watch", NULL};
    char *no_flag[] = {"ztensord", "--config", path, NULL};
    char *nothing[] = {"ztensord", "--root", "/flag", NULL};
    char *env[] = {"ZTENSORD_MAX_RANGES=20", "ZTENSORD_ROOT=/env", NULL};
    ztd_config c;

    load_ok(&c, N(with_file), with_file, env); /* flag */
    assert_int_equal(c.max_ranges, 30);
    assert_true(c.watch);
    assert_string_equal(c.root, "/env"); /* env beats file where no flag is given */
    ztd_config_free(&c);

    load_ok(&c, N(no_flag), no_flag, env); /* environment */
    assert_int_equal(c.max_ranges, 20);
    assert_false(c.watch);
    ztd_config_free(&c);

    load_ok(&c, N(no_flag), no_flag, no_env); /* file */
    assert_int_equal(c.max_ranges, 10);
    assert_string_equal(c.root, "/file");
    ztd_config_free(&c);

    load_ok(&c, N(nothing), nothing, no_env); /* default */
    assert_int_equal(c.max_ranges, 64);
    assert_true(c.watch);
    ztd_config_free(&c);

    /* --config beats ZTENSORD_CONFIG */
    char *other = temp_config("{\"root\": \"/other\", \"max_ranges\": 7}");
    char env_config[4200];
    snprintf(env_config, sizeof env_config, "ZTENSORD_CONFIG=%s", other);
    char *env2[] = {env_config, NULL};
    load_ok(&c, N(no_flag), no_flag, env2);
    assert_string_equal(c.config_path, path);
    assert_int_equal(c.max_ranges, 10);
    ztd_config_free(&c);

    unlink(other);
    free(other);
    unlink(path);
    free(path);
}

static void test_small_error_buffer(void **state)
{
    ztd_config c;
    char *argv[] = {"ztensord", "--root", "/a", "--max-ranges", "100", NULL};
    char err[16];
    memset(err, 'x', sizeof err);
    assert_int_equal(ztd_config_load(&c, N(argv), argv, no_env, err, sizeof err), -1);
    assert_int_equal(strlen(err), sizeof err - 1);
    assert_memory_equal(err, "option max_rang", sizeof err - 1);
    assert_int_equal(ztd_config_load(&c, N(argv), argv, no_env, NULL, 0), -1);
}

/* ------------------------------------------------ generated documents */

static const char *const option_names[] = {"config",
                                           "root",
                                           "exclude",
                                           "listen",
                                           "listen_mode",
                                           "threads",
                                           "max_manifest_size",
                                           "shared_response_memory",
                                           "max_open_files",
                                           "max_ranges",
                                           "max_decode_streams",
                                           "connection_limit",
                                           "connection_timeout",
                                           "header_timeout",
                                           "min_body_rate",
                                           "send_lowat",
                                           "max_connections_per_address",
                                           "lingering_max",
                                           "lingering_timeout",
                                           "shutdown_grace",
                                           "access_log",
                                           "access_log_format",
                                           "request_id_header",
                                           "log_level",
                                           "error_log",
                                           "watch",
                                           "rescan_debounce",
                                           "cache_control",
                                           "verify_digests",
                                           "serve_corrupt",
                                           "tokens_file",
                                           "require_read_token",
                                           "allow_anonymous_writes",
                                           "max_upload_size",
                                           "max_uploads",
                                           "disk_reserve",
                                           "max_session_components",
                                           "session_idle_timeout",
                                           "tls_cert",
                                           "tls_key",
                                           "upstream",
                                           "upstream_kind",
                                           "cache_dir",
                                           "cache_size",
                                           "upstream_token_file",
                                           "upstream_ttl",
                                           "upstream_stale",
                                           "upstream_negative_ttl",
                                           "upstream_entries_memory",
                                           "upstream_verify_first",
                                           "upstream_connect_timeout",
                                           "upstream_timeout",
                                           "upstream_min_rate",
                                           "upstream_retries",
                                           "upstream_fills",
                                           "prefetch",
                                           "s3_buckets",
                                           "s3_keys"};

static void test_help(void **state)
{
    char *help = capture(help_fn);
    static const char *const sections[] = {"\nSYNOPSIS\n", "\nDESCRIPTION\n", "\nOPTIONS\n",
                                           "\nSIGNALS\n",  "\nEXIT STATUS\n", "\nFILES\n"};
    assert_memory_equal(help, "NAME\n", 5);
    const char *from = help; /* each section after the one before */
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        from = strstr(from, sections[i]);
        if (!from)
            fail_msg("section %s missing or out of order", sections[i] + 1);
    }
    for (size_t i = 0; i < sizeof option_names / sizeof option_names[0]; i++) {
        char flag[80], env[80];
        size_t k;
        snprintf(flag, sizeof flag, "\n    --%s", option_names[i]);
        for (k = 7; flag[k]; k++)
            flag[k] = flag[k] == '_' ? '-' : flag[k];
        snprintf(env, sizeof env, "ZTENSORD_%s", option_names[i]);
        for (k = 9; env[k]; k++)
            env[k] = (char)(env[k] >= 'a' && env[k] <= 'z' ? env[k] - 32 : env[k]);
        if (!strstr(help, flag) || !strstr(help, env))
            fail_msg("help lacks %s or %s", flag + 1, env);
    }
    assert_non_null(strstr(help, "--watch, --no-watch\n"));
    /* the same text with the line wrapping undone */
    char *flat = strdup(help);
    assert_non_null(flat);
    size_t k = 0;
    for (const char *p = help; *p; p++)
        if (!(isspace((unsigned char)*p) && k > 0 && flat[k - 1] == ' '))
            flat[k++] = isspace((unsigned char)*p) ? ' ' : *p;
    flat[k] = '\0';
    assert_non_null(strstr(flat, "Default: 127.0.0.1:7070. Environment: ZTENSORD_LISTEN. Config "
                                 "file key: listen."));
    assert_non_null(strstr(flat, "Allowed: an integer from 1 to 64. Default: 64."));
    assert_non_null(strstr(flat, "Default: \"public, max-age=0, s-maxage=1, proxy-revalidate\"."));
    assert_non_null(strstr(flat, "Allowed: a size from 1K to 1G. Default: 64M."));
    assert_non_null(strstr(flat, "Default: none (required). Environment: ZTENSORD_ROOT."));
    assert_non_null(strstr(flat, "Default: none. Environment: ZTENSORD_CONFIG."));
    free(flat);
    assert_non_null(strstr(help, "SIGHUP"));
    assert_non_null(strstr(help, "SIGTERM"));
    for (const char *line = help; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len > 79)
            fail_msg("help line longer than 79 columns: %.*s", (int)len, line);
        line += len + (nl != NULL);
    }
    free(help);
    /* the program name is the caller's */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ztd_config_help(f, "/usr/sbin/ztd");
    fclose(f);
    assert_non_null(strstr(text, "SYNOPSIS\n    /usr/sbin/ztd --root DIR"));
    free(text);
}

static void test_dump_json(void **state)
{
    char *text = capture(ztd_config_dump_json);
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    if (!j)
        fail_msg("not JSON: %s", je.text);
    assert_true(json_is_object(j));
    assert_int_equal(json_object_size(j), sizeof option_names / sizeof option_names[0] - 1);
    assert_null(json_object_get(j, "config"));
    for (size_t i = 1; i < sizeof option_names / sizeof option_names[0]; i++)
        if (!json_object_get(j, option_names[i]))
            fail_msg("dump lacks %s", option_names[i]);
    assert_string_equal(json_string_value(json_object_get(j, "root")), "/srv/models");
    assert_true(json_is_true(json_object_get(j, "watch")));
    assert_int_equal(json_integer_value(json_object_get(j, "max_ranges")), 64);
    assert_string_equal(json_string_value(json_object_get(j, "max_manifest_size")), "64M");
    json_decref(j);
    free(text);
}

/* The file in the tree must equal what the table generates. */
static void check_generated(const char *rel, void (*fn)(FILE *))
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", ZT_SOURCE_DIR, rel);
    char *want = capture(fn);
    if (getenv("ZT_REGEN") && *getenv("ZT_REGEN") == '1')
        assert_int_equal(write_all(path, want), 0);
    char *have = read_all(path);
    if (!have || strcmp(have, want) != 0)
        fail_msg("%s does not match the option table in server/core/config.c; regenerate it with "
                 "ZT_REGEN=1 test_config",
                 path);
    free(have);
    free(want);
}

/* docs/CONFIG.md: the option table's pages, then the options that do nothing in some
 * modes (what ztensord --dump-config-markdown prints). */
static void config_md(FILE *f)
{
    ztd_config_markdown(f);
    ztd_config_modes_markdown(f);
}

static void test_config_md_matches_table(void **state)
{
    check_generated("docs/CONFIG.md", config_md);
    char *md = capture(config_md);
    assert_non_null(strstr(md, "| [`cache_size`](#cache_size) | without upstream |"));
    for (size_t i = 0; i < sizeof option_names / sizeof option_names[0]; i++) {
        char heading[80];
        snprintf(heading, sizeof heading, "\n### %s\n", option_names[i]);
        if (!strstr(md, heading))
            fail_msg("CONFIG.md lacks %s", heading + 1);
    }
    assert_non_null(strstr(md, "/srv/models"));
    free(md);
}

static void test_sample_config_loads_to_defaults(void **state)
{
    check_generated("config/ztensord.json", ztd_config_dump_json);
    ztd_config c;
    char *argv[] = {"ztensord", "--config", ZT_SOURCE_DIR "/config/ztensord.json", NULL};
    load_ok(&c, N(argv), argv, no_env);
    assert_string_equal(c.root, "/srv/models");
    assert_defaults(&c);
    ztd_config_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_defaults),
        cmocka_unit_test(test_load_root_only_gives_defaults),
        cmocka_unit_test(test_missing_root),
        cmocka_unit_test(test_actions),
        cmocka_unit_test(test_flag_forms),
        cmocka_unit_test(test_flag_errors),
        cmocka_unit_test(test_flag_aliases),
        cmocka_unit_test(test_unused_options),
        cmocka_unit_test(test_upstream_not_self),
        cmocka_unit_test(test_bool),
        cmocka_unit_test(test_uint),
        cmocka_unit_test(test_size),
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_enum),
        cmocka_unit_test(test_listen),
        cmocka_unit_test(test_listen_unix),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_s3_buckets),
        cmocka_unit_test(test_env),
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_small_error_buffer),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_dump_json),
        cmocka_unit_test(test_config_md_matches_table),
        cmocka_unit_test(test_sample_config_loads_to_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
