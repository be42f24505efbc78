/*
 * test_common.c: the helpers every zt subcommand shares (cli/tool_common.c):
 * exit codes for library statuses, -h/--help, writing all bytes, and the
 * --digest and size values more than one subcommand takes.
 */
#include "cli_test.h"

#include <fcntl.h>
#include <unistd.h>

static void exit_codes(void **state)
{
    (void)state;
    assert_int_equal(tool_exit_for(ZT_OK), ZT_EXIT_OK);
    assert_int_equal(tool_exit_for(ZT_E_ARG), ZT_EXIT_USAGE);
    const zt_status system[] = {ZT_E_NOMEM,   ZT_E_IO,   ZT_E_NOSPACE, ZT_E_NOT_FOUND,
                                ZT_E_NETWORK, ZT_E_HTTP, ZT_E_CHANGED};
    for (size_t i = 0; i < sizeof system / sizeof system[0]; i++)
        assert_int_equal(tool_exit_for(system[i]), ZT_EXIT_SYSTEM);
    const zt_status invalid[] = {ZT_E_TRUNCATED,       ZT_E_MAGIC, ZT_E_CBOR,       ZT_E_SCHEMA,
                                 ZT_E_DIGEST_MISMATCH, ZT_E_ZSTD,  ZT_E_UNSUPPORTED};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        assert_int_equal(tool_exit_for(invalid[i]), ZT_EXIT_INVALID);
}

static void help_flags(void **state)
{
    (void)state;
    assert_true(tool_is_help("-h"));
    assert_true(tool_is_help("--help"));
    assert_false(tool_is_help("-help"));
    assert_false(tool_is_help("--help=1"));
    assert_false(tool_is_help(""));
}

/* Several MiB into a file (unlinked at once), read back whole. */
static void write_all_bytes(void **state)
{
    (void)state;
    char path[4096];
    const char *tmp = getenv("ZT_TEST_TMP");
    snprintf(path, sizeof path, "%s/zt_cli_write.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    size_t n = 3u << 20;
    char *buf = malloc(n);
    assert_non_null(buf);
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)(i * 7);
    assert_int_equal(tool_write_all(fd, buf, n), 0);
    assert_int_equal(lseek(fd, 0, SEEK_END), (off_t)n);
    char *back = malloc(n);
    assert_non_null(back);
    assert_int_equal(pread(fd, back, n, 0), (ssize_t)n);
    assert_memory_equal(back, buf, n);
    close(fd);
    assert_int_equal(tool_write_all(fd, buf, 1), -1); /* closed fd: an error, no loop */
    free(back);
    free(buf);
}

static void digest_names(void **state)
{
    (void)state;
    zt_digest_kind k = ZT_DIGEST_NONE;
    assert_int_equal(tool_parse_digest("sha256", &k), 0);
    assert_int_equal(k, ZT_DIGEST_SHA256);
    assert_int_equal(tool_parse_digest("crc32c", &k), 0);
    assert_int_equal(k, ZT_DIGEST_CRC32C);
    assert_int_equal(tool_parse_digest("xxh3", &k), 0);
    assert_int_equal(k, ZT_DIGEST_XXH3);
    assert_int_equal(tool_parse_digest("none", &k), 0);
    assert_int_equal(k, ZT_DIGEST_NONE);
    k = ZT_DIGEST_XXH3;
    const char *bad[] = {"", "SHA256", "sha-256", "sha256 ", "md5", "crc32"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(tool_parse_digest(bad[i], &k), -1);
        assert_int_equal(k, ZT_DIGEST_XXH3); /* unchanged */
    }
}

static void sizes(void **state)
{
    (void)state;
    size_t v = 0;
    assert_int_equal(tool_parse_size("1", &v), 0);
    assert_int_equal(v, 1);
    assert_int_equal(tool_parse_size("64k", &v), 0);
    assert_int_equal(v, 64u << 10);
    assert_int_equal(tool_parse_size("64K", &v), 0);
    assert_int_equal(v, 64u << 10);
    assert_int_equal(tool_parse_size("8M", &v), 0);
    assert_int_equal(v, 8u << 20);
    assert_int_equal(tool_parse_size("2g", &v), 0);
    assert_int_equal(v, (size_t)2 << 30);
    assert_int_equal(tool_parse_size("1024G", &v), 0); /* 1 TiB, the bound */
    assert_int_equal(v, (size_t)1 << 40);
    assert_int_equal(tool_parse_size("1099511627776", &v), 0);
    assert_int_equal(v, (size_t)1 << 40);
    v = 5;
    const char *bad[] = {"",
                         "0",
                         "0K",
                         "K",
                         "-1",
                         "1T",
                         "1KB",
                         "1 K",
                         "1.5M",
                         "1025G",
                         "1099511627777",
                         "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(tool_parse_size(bad[i], &v), -1);
        assert_int_equal(v, 5);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exit_codes),      cmocka_unit_test(help_flags),
        cmocka_unit_test(write_all_bytes), cmocka_unit_test(digest_names),
        cmocka_unit_test(sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
