/*
 * test_headers.c: the pure header parsers of server/http/headers.c: Accept-Encoding,
 * Content-Digest / Repr-Digest, X-Request-Id and If-None-Match: *.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "http/headers.h"
#include "store/validators.h"

static void accept_encoding(void **state)
{
    (void)state;
    assert_false(ztd_accepts_zstd(NULL));
    assert_false(ztd_accepts_zstd(""));
    assert_true(ztd_accepts_zstd("zstd"));
    assert_true(ztd_accepts_zstd("ZSTD"));
    assert_true(ztd_accepts_zstd("gzip, zstd"));
    assert_true(ztd_accepts_zstd("gzip;q=0.5, zstd;q=0.1"));
    assert_true(ztd_accepts_zstd(" \tzstd ; q=1 "));
    assert_false(ztd_accepts_zstd("gzip, br"));
    assert_false(ztd_accepts_zstd("zstd;q=0"));
    assert_false(ztd_accepts_zstd("zstd;Q=0.000"));
    assert_false(ztd_accepts_zstd("zstdx"));
    assert_false(ztd_accepts_zstd("xzstd"));
    /* "*" decides only when zstd is not named */
    assert_true(ztd_accepts_zstd("*"));
    assert_true(ztd_accepts_zstd("gzip, *;q=0.1"));
    assert_false(ztd_accepts_zstd("*;q=0"));
    assert_false(ztd_accepts_zstd("zstd;q=0, *"));
    assert_true(ztd_accepts_zstd("zstd, *;q=0"));
    /* parameters other than q are skipped */
    assert_true(ztd_accepts_zstd("zstd;level=3"));
    assert_false(ztd_accepts_zstd("zstd;level=3;q=0"));
    assert_false(ztd_accepts_zstd(",,;,"));
}

/* sha256("") as RFC 9530 base64 */
#define EMPTY_B64 "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="

/* The q value of any coding, as the manifest's negotiation reads it. */
static void accept_q(void **state)
{
    (void)state;
    assert_true(ztd_accept_q(NULL, "gzip") == 0);
    assert_true(ztd_accept_q("gzip", "gzip") == 1);
    assert_true(ztd_accept_q("GZip;q=0.5", "gzip") == 0.5);
    assert_true(ztd_accept_q("zstd;q=0.5, gzip", "zstd") == 0.5);
    assert_true(ztd_accept_q("zstd;q=0.5, gzip", "gzip") == 1);
    assert_true(ztd_accept_q("gzip;q=0", "gzip") == 0);
    assert_true(ztd_accept_q("*;q=0.2", "gzip") == 0.2);
    assert_true(ztd_accept_q("gzip;q=0, *", "gzip") == 0);
    assert_true(ztd_accept_q("gzip;q=-1, *", "gzip") == 0);
    assert_true(ztd_accept_q("gzip;q=nan, *", "gzip") == 0);
    assert_true(ztd_accept_q("x-gzip, gzipx", "gzip") == 0);
}

static void digest_headers(void **state)
{
    (void)state;
    ztd_digest_want w;
    static const uint8_t empty[32] = {0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14,
                                      0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
                                      0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c,
                                      0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55};
    assert_int_equal(ztd_parse_digest_header(NULL, &w), 0);
    assert_false(w.present);
    assert_int_equal(ztd_parse_digest_header("", &w), 0);
    assert_false(w.present);
    assert_int_equal(ztd_parse_digest_header("sha-256=:" EMPTY_B64 ":", &w), 0);
    assert_true(w.present);
    assert_memory_equal(w.sha256, empty, 32);
    assert_int_equal(ztd_parse_digest_header("SHA-256= :" EMPTY_B64 ":", &w), 0);
    assert_true(w.present);
    /* other algorithms are skipped, in any position */
    assert_int_equal(ztd_parse_digest_header("sha-512=:abc=:, sha-256=:" EMPTY_B64 ":", &w), 0);
    assert_true(w.present);
    assert_int_equal(ztd_parse_digest_header("sha-256=:" EMPTY_B64 ":,md5=:x:", &w), 0);
    assert_true(w.present);
    assert_int_equal(ztd_parse_digest_header("crc32=:AAAAAA==:", &w), 0);
    assert_false(w.present);
    assert_int_equal(ztd_parse_digest_header(" , ,", &w), 0);
    assert_false(w.present);
    /* malformed */
    const char *bad[] = {
        "sha-256",
        "sha-256=" EMPTY_B64,
        "sha-256=:" EMPTY_B64,
        "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU:",   /* 43 characters */
        "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU==:", /* 45 */
        "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3h!uFU=:",  /* not base64 */
        "sha-256=:" EMPTY_B64 ":, garbage",
        "sha-256=:,:" EMPTY_B64 ":",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (ztd_parse_digest_header(bad[i], &w) != -1)
            fail_msg("accepted %s", bad[i]);
}

static void request_ids(void **state)
{
    (void)state;
    char longest[ZTD_REQUEST_ID_MAX + 2];
    memset(longest, 'a', sizeof(longest));
    longest[ZTD_REQUEST_ID_MAX] = 0;
    assert_true(ztd_request_id_valid(longest));
    longest[ZTD_REQUEST_ID_MAX] = 'a';
    longest[ZTD_REQUEST_ID_MAX + 1] = 0;
    assert_false(ztd_request_id_valid(longest));
    assert_true(ztd_request_id_valid("abc-DEF_0.9:x"));
    assert_false(ztd_request_id_valid(NULL));
    assert_false(ztd_request_id_valid(""));
    assert_false(ztd_request_id_valid("a b"));
    assert_false(ztd_request_id_valid("a\"b"));
    assert_false(ztd_request_id_valid("a\nb"));
    assert_false(ztd_request_id_valid("caf\xc3\xa9"));
}

static void if_none_match_star(void **state)
{
    (void)state;
    assert_true(ztd_if_none_match_star("*"));
    assert_true(ztd_if_none_match_star("  *\t"));
    assert_true(ztd_if_none_match_star("* "));
    assert_false(ztd_if_none_match_star(NULL));
    assert_false(ztd_if_none_match_star(""));
    assert_false(ztd_if_none_match_star("\"*\""));
    assert_false(ztd_if_none_match_star("*, \"a\""));
    assert_false(ztd_if_none_match_star("**"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accept_encoding),    cmocka_unit_test(accept_q),
        cmocka_unit_test(digest_headers),     cmocka_unit_test(request_ids),
        cmocka_unit_test(if_none_match_star),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
