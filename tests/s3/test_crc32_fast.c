/*
 * test_crc32_fast.c: server/s3/crc32_fast.c against zlib's crc32(). The check
 * value of "123456789" (0xCBF43926); then random bytes at every alignment of
 * the first 64 and random lengths (0 to 300, around the 16- and 64-byte
 * steps of the folding, and up to 1 MiB), chained from random CRCs, and a
 * buffer fed in random pieces: each must equal zlib's answer. Reports whether
 * this CPU took the folding path (on one without PCLMULQDQ the test checks
 * the fallback only).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "s3/crc32_fast.h"

#define BIG (1u << 20)

static uint8_t *random_bytes(size_t n, unsigned seed)
{
    uint8_t *b = malloc(n);
    assert_non_null(b);
    srand(seed);
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)rand();
    return b;
}

static uint32_t zlib_of(uint32_t crc, const uint8_t *p, size_t n)
{
    return (uint32_t)crc32(crc, p, (uInt)n);
}

static void check_value(void **state)
{
    (void)state;
    assert_int_equal(ztd_crc32(0, "123456789", 9), 0xCBF43926u);
    assert_int_equal(ztd_crc32(0, NULL, 0), 0);
    uint8_t *b = random_bytes(4096, 7);
    assert_int_equal(ztd_crc32(0, b, 4096), zlib_of(0, b, 4096));
    free(b);
    print_message("folding path: %s\n", ztd_crc32_folds() ? "yes" : "no (zlib only)");
}

static void lengths_and_alignments(void **state)
{
    (void)state;
    uint8_t *b = random_bytes(BIG + 64, 11);
    for (size_t off = 0; off < 64; off++)
        for (size_t n = 0; n <= 300; n++) {
            uint32_t seed = (uint32_t)rand() * 2654435761u;
            uint32_t want = zlib_of(seed, b + off, n);
            assert_int_equal(ztd_crc32(seed, b + off, n), want);
            assert_int_equal(ztd_crc32_portable(seed, b + off, n), want);
        }
    for (int i = 0; i < 200; i++) {
        size_t off = (size_t)rand() % 64, n = (size_t)rand() % (BIG + 1);
        uint32_t seed = (uint32_t)rand();
        assert_int_equal(ztd_crc32(seed, b + off, n), zlib_of(seed, b + off, n));
    }
    free(b);
}

static void pieces(void **state)
{
    (void)state;
    uint8_t *b = random_bytes(BIG, 13);
    uint32_t want = zlib_of(0, b, BIG);
    for (int round = 0; round < 20; round++) {
        uint32_t c = 0;
        size_t at = 0;
        while (at < BIG) { /* pieces of 1 byte to 100,000 bytes: at most BIG of them */
            size_t k = 1 + (size_t)rand() % 100000;
            k = k > BIG - at ? BIG - at : k;
            c = ztd_crc32(c, b + at, k);
            at += k;
        }
        assert_int_equal(c, want);
    }
    /* a single flipped bit is seen */
    b[BIG / 2] ^= 0x10;
    assert_int_not_equal(ztd_crc32(0, b, BIG), want);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(check_value),
        cmocka_unit_test(lengths_and_alignments),
        cmocka_unit_test(pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
