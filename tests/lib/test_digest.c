/*
 * test_digest.c: sha256 and crc32c (lib/src/common/digest.c): published vectors,
 * incremental = one-shot over every split, crc32c against a bitwise
 * reference at every alignment and length, the digest string forms and
 * their case-insensitive parsing, and zt_component_verify over a file.
 */
#include "zt_test.h"

static void hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

static void sha256_of(const void *p, size_t n, char out[65])
{
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
    assert_non_null(h);
    zt_hasher_update(h, p, n);
    uint8_t d[32];
    assert_int_equal(zt_hasher_final(h, d), 32);
    zt_hasher_free(h);
    hex(d, 32, out);
}

static void sha256_vectors(void **state)
{
    (void)state;
    char out[65];
    sha256_of("abc", 3, out);
    assert_string_equal(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha256_of("", 0, out);
    assert_string_equal(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_of(m, strlen(m), out);
    assert_string_equal(out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* one million 'a' (FIPS 180-2 appendix B.3), fed in uneven pieces */
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
    char a[1000];
    memset(a, 'a', sizeof a);
    size_t done = 0, step = 1;
    while (done < 1000000) {
        size_t n = step < 1000000 - done ? step : 1000000 - done;
        if (n > sizeof a)
            n = sizeof a;
        zt_hasher_update(h, a, n);
        done += n;
        step = step * 3 + 1;
        if (step > 1000)
            step = 1;
    }
    uint8_t d[32];
    zt_hasher_final(h, d);
    zt_hasher_free(h);
    hex(d, 32, out);
    assert_string_equal(out, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void crc32c_vectors(void **state)
{
    (void)state;
    assert_int_equal(zt_crc32c(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(zt_crc32c(0, "", 0), 0);
    assert_int_equal(zt_crc32c(0, NULL, 0), 0);
    /* RFC 3720 B.4 test vectors */
    uint8_t buf[48];
    memset(buf, 0, 32);
    assert_int_equal(zt_crc32c(0, buf, 32), 0x8A9136AAu);
    memset(buf, 0xFF, 32);
    assert_int_equal(zt_crc32c(0, buf, 32), 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)i;
    assert_int_equal(zt_crc32c(0, buf, 32), 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)(31 - i);
    assert_int_equal(zt_crc32c(0, buf, 32), 0x113FDB5Cu);
    static const uint8_t iscsi[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00,
                                      0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00,
                                      0x00, 0x18, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                      0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    assert_int_equal(zt_crc32c(0, iscsi, 48), 0xD9963A56u);
}

static uint32_t crc32c_ref(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
}

static void crc32c_matches_reference(void **state)
{
    (void)state;
    /* Every alignment and every length up to 300 covers the head, the
     * 8-byte body and the tail of the word-at-a-time loops. */
    uint8_t buf[320];
    zt_test_fill(buf, sizeof buf, 42);
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n <= 300; n++)
            if (zt_crc32c(0, buf + off, n) != crc32c_ref(buf + off, n))
                fail_msg("crc32c mismatch at offset %zu length %zu", off, n);
}

static void incremental_equals_one_shot(void **state)
{
    (void)state;
    uint8_t buf[1000];
    zt_test_fill(buf, sizeof buf, 7);
    uint32_t whole = zt_crc32c(0, buf, sizeof buf);
    char want[65];
    sha256_of(buf, sizeof buf, want);
    for (size_t cut = 0; cut <= sizeof buf; cut += 37) {
        assert_int_equal(zt_crc32c(zt_crc32c(0, buf, cut), buf + cut, sizeof buf - cut), whole);
        /* the hasher API, split in three */
        size_t cut2 = cut + (sizeof buf - cut) / 2;
        for (int k = 0; k < 2; k++) {
            zt_digest_kind kind = k ? ZT_DIGEST_SHA256 : ZT_DIGEST_CRC32C;
            zt_hasher *h = zt_hasher_new(kind);
            assert_non_null(h);
            zt_hasher_update(h, buf, cut);
            zt_hasher_update(h, buf + cut, cut2 - cut);
            zt_hasher_update(h, buf + cut2, 0);
            zt_hasher_update(h, buf + cut2, sizeof buf - cut2);
            uint8_t d[32];
            size_t n = zt_hasher_final(h, d);
            zt_hasher_free(h);
            if (k) {
                char got[65];
                assert_int_equal(n, 32);
                hex(d, 32, got);
                assert_string_equal(got, want);
            } else {
                /* 4 bytes, big-endian */
                assert_int_equal(n, 4);
                uint32_t v =
                    (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
                assert_int_equal(v, whole);
            }
        }
    }
}

/* zt_hash_thread: buffers filled unevenly (some empty, some partly) digest to
 * the same as one pass, for both kinds; the caller's buffer changes hands. */
static void hash_thread_equals_one_shot(void **state)
{
    (void)state;
    enum { BUF = 4096, TOTAL = 200000 };
    uint8_t *data = malloc(TOTAL);
    zt_test_fill(data, TOTAL, 11);
    for (int k = 0; k < 2; k++) {
        zt_digest_kind kind = k ? ZT_DIGEST_SHA256 : ZT_DIGEST_CRC32C;
        zt_hasher *one = zt_hasher_new(kind);
        zt_hasher_update(one, data, TOTAL);
        uint8_t want[32], got[32];
        size_t wn = zt_hasher_final(one, want);
        zt_hasher_free(one);
        uint8_t *buf;
        zt_hash_thread *t = zt_hash_thread_new(kind, BUF, &buf);
        assert_non_null(t);
        size_t done = 0, step = 0, changed = 0;
        while (done < TOTAL) {
            size_t n = (step++ * 977) % (BUF + 1);
            if (n > TOTAL - done)
                n = TOTAL - done;
            memcpy(buf, data + done, n);
            uint8_t *next = zt_hash_thread_submit(t, buf, n);
            changed += next != buf;
            buf = next;
            done += n;
        }
        assert_int_equal(zt_hash_thread_final(t, got), wn);
        assert_memory_equal(got, want, wn);
        assert_true(changed > 0);
        zt_hash_thread_free(t, buf);
    }
    free(data);
}

static void hasher_kinds(void **state)
{
    (void)state;
    assert_null(zt_hasher_new(ZT_DIGEST_NONE));
    assert_null(zt_hasher_new((zt_digest_kind)99));
    zt_hasher_free(NULL);
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_CRC32C);
    uint8_t d[32];
    assert_int_equal(zt_hasher_final(h, d), 4);
    assert_memory_equal(d, "\0\0\0\0", 4); /* crc32c of nothing */
    zt_hasher_free(h);
    h = zt_hasher_new(ZT_DIGEST_CRC32C);
    zt_hasher_update(h, "123456789", 9);
    zt_hasher_final(h, d);
    assert_memory_equal(d, "\xE3\x06\x92\x83", 4);
    zt_hasher_free(h);
}

static void format_strings(void **state)
{
    (void)state;
    char out[80];
    uint8_t bin[32];
    for (int i = 0; i < 32; i++)
        bin[i] = (uint8_t)(0xA0 + i);
    zt_digest_format(ZT_DIGEST_SHA256, bin, out);
    assert_string_equal(out,
                        "sha256:a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf");
    assert_int_equal(strlen(out), 71);
    zt_digest_format(ZT_DIGEST_CRC32C, (const uint8_t *)"\xE3\x06\x92\x83", out);
    assert_string_equal(out, "crc32c:0xE3069283");
    zt_digest_format(ZT_DIGEST_CRC32C, (const uint8_t *)"\x00\x00\x00\x0a", out);
    assert_string_equal(out, "crc32c:0x0000000A");
    out[0] = 'x';
    zt_digest_format(ZT_DIGEST_NONE, bin, out);
    assert_string_equal(out, "");
}

static void parse_round_trip_and_case(void **state)
{
    (void)state;
    zt_digest_kind kind;
    uint8_t bin[32], want[32];
    for (int i = 0; i < 32; i++)
        want[i] = (uint8_t)(i * 37 + 5);
    char s[80];
    zt_digest_format(ZT_DIGEST_SHA256, want, s);
    ASSERT_ST(zt_digest_parse(s, strlen(s), &kind, bin), ZT_OK);
    assert_int_equal(kind, ZT_DIGEST_SHA256);
    assert_memory_equal(bin, want, 32);
    /* case-insensitive: algorithm name and hex digits */
    for (char *p = s; *p; p++)
        *p = (char)((*p >= 'a' && *p <= 'z') ? *p - 32 : *p);
    assert_true(!strncmp(s, "SHA256:", 7));
    memset(bin, 0, sizeof bin);
    ASSERT_ST(zt_digest_parse(s, strlen(s), &kind, bin), ZT_OK);
    assert_int_equal(kind, ZT_DIGEST_SHA256);
    assert_memory_equal(bin, want, 32);
    const char *crcs[] = {"crc32c:0xE3069283", "crc32c:0xe3069283", "CRC32C:0XE3069283",
                          "Crc32C:0xe3069283"};
    for (size_t i = 0; i < 4; i++) {
        memset(bin, 0, sizeof bin);
        kind = ZT_DIGEST_NONE;
        ASSERT_ST(zt_digest_parse(crcs[i], strlen(crcs[i]), &kind, bin), ZT_OK);
        assert_int_equal(kind, ZT_DIGEST_CRC32C);
        assert_memory_equal(bin, "\xE3\x06\x92\x83", 4);
    }
    /* length-delimited: trailing bytes beyond len are not read */
    ASSERT_ST(zt_digest_parse("crc32c:0xE3069283zz", 17, &kind, bin), ZT_OK);
}

static void parse_rejects(void **state)
{
    (void)state;
    zt_digest_kind kind;
    uint8_t bin[32];
    const char *bad[] = {
        "",
        "sha256:",
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a",   /* 63 */
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad0", /* 65 */
        "sha256:ga7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",  /* g */
        "sha256 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "sha-256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "md5:900150983cd24fb0d6963f7d28e17f72",
        "crc32c:E3069283",  /* no 0x */
        "crc32c:0xE306928", /* 7 digits */
        "crc32c:0xE30692830",
        "crc32c:0x E306928",
        "crc32c:0xE306928G",
        "crc32:0xE3069283",
        "sha256:0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f200",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (zt_digest_parse(bad[i], strlen(bad[i]), &kind, bin) != ZT_E_DIGEST_FORMAT)
            fail_msg("accepted \"%s\"", bad[i]);
    /* An embedded NUL within the given length is not hex. */
    ASSERT_ST(zt_digest_parse("crc32c:0xE306\0"
                              "928",
                              17, &kind, bin),
              ZT_E_DIGEST_FORMAT);
}

/* A one-object file whose data component carries `digest`. */
static uint8_t *file_with_digest(const uint8_t *payload, size_t n, const char *digest, size_t *len)
{
    tb m = {0};
    tb_map(&m, 2);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    tb_text(&m, "objects");
    tb_map(&m, 1);
    tb_text(&m, "t");
    uint64_t shape[1] = {n};
    tb_dense(&m, 1, shape, &(tcomp){"u8", 64, n, NULL, UINT64_MAX, digest, NULL});
    uint8_t *data = calloc(1, 64 + n);
    memcpy(data + 64, payload, n);
    uint8_t *f = zt_test_assemble(data, 64 + n, &m, 1, len);
    free(data);
    tb_free(&m);
    return f;
}

static void verify_component(void **state)
{
    (void)state;
    const char *digests[] = {
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "SHA256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD",
        "crc32c:0x364B3FB7", /* crc32c("abc") */
        "crc32c:0x364b3fb7",
    };
    assert_int_equal(zt_crc32c(0, "abc", 3), 0x364B3FB7u);
    for (size_t i = 0; i < 4; i++) {
        size_t len;
        uint8_t *buf = file_with_digest((const uint8_t *)"abc", 3, digests[i], &len);
        zt_file *f;
        zt_error err;
        ASSERT_OK(zt_open_memory(buf, len, NULL, &f, &err), &err);
        const zt_object *o = zt_file_object_at(f, 0);
        const zt_component *c = zt_object_component_at(o, 0);
        int checked = -1;
        ASSERT_OK(zt_component_verify(f, o, c, &checked, &err), &err);
        assert_int_equal(checked, 1);
        /* The digest string is kept as stored. */
        assert_string_equal(zt_component_digest(c), digests[i]);
        zt_close(f);
        /* One flipped bit in the data is caught and named. */
        buf[64 + 1] ^= 0x10;
        ASSERT_OK(zt_open_memory(buf, len, NULL, &f, &err), &err);
        o = zt_file_object_at(f, 0);
        c = zt_object_component_at(o, 0);
        checked = -1;
        ASSERT_ST(zt_component_verify(f, o, c, &checked, &err), ZT_E_DIGEST_MISMATCH);
        assert_int_equal(checked, 1);
        assert_string_equal(err.object, "t");
        assert_string_equal(err.component, "data");
        assert_true(err.has_offset);
        assert_int_equal(err.offset, 64);
        zt_close(f);
        free(buf);
    }
    /* No digest: ZT_OK and checked = 0. */
    size_t len;
    uint8_t *buf = file_with_digest((const uint8_t *)"abc", 3, NULL, &len);
    zt_file *f;
    zt_error err;
    ASSERT_OK(zt_open_memory(buf, len, NULL, &f, &err), &err);
    int checked = -1;
    const zt_object *o = zt_file_object_at(f, 0);
    ASSERT_OK(zt_component_verify(f, o, zt_object_component_at(o, 0), &checked, &err), &err);
    assert_int_equal(checked, 0);
    zt_close(f);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_vectors),
        cmocka_unit_test(crc32c_vectors),
        cmocka_unit_test(crc32c_matches_reference),
        cmocka_unit_test(incremental_equals_one_shot),
        cmocka_unit_test(hash_thread_equals_one_shot),
        cmocka_unit_test(hasher_kinds),
        cmocka_unit_test(format_strings),
        cmocka_unit_test(parse_round_trip_and_case),
        cmocka_unit_test(parse_rejects),
        cmocka_unit_test(verify_component),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
