/*
 * test_footer.c: zt__footer_locate (lib/src/footer.c), the pure function that
 * checks the header magic and finds the manifest: the 1.2 layout (manifest,
 * u64 size, "ZTEN1000") and the 1.0 layout (manifest, u64 size), sizes and
 * limits, and truncation. Also the same decisions through zt_open_memory.
 */
#include "zt_test.h"

#include "internal.h"

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Calls the locator the way the reader does: head = first 8 bytes, tail =
 * the last min(size, 16) bytes. */
static zt_status locate(const uint8_t *buf, uint64_t size, uint64_t max, zt__layout *lay,
                        zt_error *err)
{
    size_t tl = size < 16 ? (size_t)size : 16;
    return zt__footer_locate(buf, buf + size - tl, size, max, lay, err);
}

/* A 1.2 file of `total` bytes whose manifest is `msize` bytes (content irrelevant). */
static uint8_t *layout12(size_t total, uint64_t msize)
{
    uint8_t *b = calloc(1, total);
    assert_non_null(b);
    memcpy(b, "ZTEN1000", 8);
    put_le64(b + total - 16, msize);
    memcpy(b + total - 8, "ZTEN1000", 8);
    return b;
}

static uint8_t *layout10(size_t total, uint64_t msize)
{
    uint8_t *b = calloc(1, total);
    assert_non_null(b);
    memcpy(b, "ZTEN1000", 8);
    put_le64(b + total - 8, msize);
    return b;
}

static void too_short_for_header(void **state)
{
    (void)state;
    uint8_t b[8] = "ZTEN100";
    zt__layout lay;
    zt_error err;
    for (uint64_t n = 0; n < 8; n++) {
        memset(&err, 0, sizeof err);
        ASSERT_ST(locate(b, n, 0, &lay, &err), ZT_E_TRUNCATED);
        assert_int_equal(err.code, ZT_E_TRUNCATED);
        assert_true(err.has_offset);
        assert_int_equal(err.offset, n);
    }
}

static void bad_header_magic(void **state)
{
    (void)state;
    uint8_t *b = layout12(100, 20);
    zt__layout lay;
    zt_error err;
    b[3] = 'X';
    ASSERT_ST(locate(b, 100, 0, &lay, &err), ZT_E_MAGIC);
    assert_int_equal(err.offset, 0);
    assert_non_null(strstr(err.message, "ZTEN1000"));
    /* A lower-case magic is not the magic. */
    memcpy(b, "zten1000", 8);
    ASSERT_ST(locate(b, 100, 0, &lay, &err), ZT_E_MAGIC);
    free(b);
}

static void header_only_is_truncated(void **state)
{
    (void)state;
    uint8_t b[24];
    memcpy(b, "ZTEN1000ZTEN1000ZTEN1000", 24);
    zt__layout lay;
    zt_error err;
    for (uint64_t n = 8; n < 16; n++)
        ASSERT_ST(locate(b, n, 0, &lay, &err), ZT_E_TRUNCATED);
    /* 16 bytes ending in the magic: too short for the 1.2 layout, and the
     * magic read as a 1.0 size is absurd. */
    ASSERT_ST(locate(b, 16, 0, &lay, &err), ZT_E_TRUNCATED);
    /* 24 bytes of magic: a 1.2 layout whose size field is the magic. */
    assert_int_not_equal(locate(b, 24, 0, &lay, &err), ZT_OK);
}

static void layout_1_2_found(void **state)
{
    (void)state;
    size_t total = 8 + 64 + 40 + 16;
    uint8_t *b = layout12(total, 40);
    zt__layout lay;
    zt_error err;
    ASSERT_OK(locate(b, total, 0, &lay, &err), &err);
    assert_int_equal(lay.kind, ZT_KIND_ZT_1_2);
    assert_int_equal(lay.manifest_offset, 8 + 64);
    assert_int_equal(lay.manifest_length, 40);
    free(b);
}

static void layout_1_0_found(void **state)
{
    (void)state;
    size_t total = 8 + 64 + 40 + 8;
    uint8_t *b = layout10(total, 40);
    zt__layout lay;
    zt_error err;
    ASSERT_OK(locate(b, total, 0, &lay, &err), &err);
    assert_int_equal(lay.kind, ZT_KIND_ZT_1_0);
    assert_int_equal(lay.manifest_offset, 8 + 64);
    assert_int_equal(lay.manifest_length, 40);
    free(b);
}

static void manifest_right_after_header(void **state)
{
    (void)state;
    /* The manifest may start at byte 8 (a file with no data), not earlier. */
    uint8_t *b = layout12(8 + 10 + 16, 10);
    zt__layout lay;
    zt_error err;
    ASSERT_OK(locate(b, 34, 0, &lay, &err), &err);
    assert_int_equal(lay.manifest_offset, 8);
    free(b);
    b = layout12(8 + 10 + 16, 11);
    ASSERT_ST(locate(b, 34, 0, &lay, &err), ZT_E_MANIFEST_SIZE);
    free(b);
    b = layout10(8 + 10 + 8, 10);
    ASSERT_OK(locate(b, 26, 0, &lay, &err), &err);
    assert_int_equal(lay.manifest_offset, 8);
    assert_int_equal(lay.kind, ZT_KIND_ZT_1_0);
    free(b);
    b = layout10(8 + 10 + 8, 11);
    ASSERT_ST(locate(b, 26, 0, &lay, &err), ZT_E_MANIFEST_SIZE);
    free(b);
}

static void zero_manifest_size(void **state)
{
    (void)state;
    uint8_t *b = layout12(100, 0);
    zt__layout lay;
    zt_error err;
    ASSERT_ST(locate(b, 100, 0, &lay, &err), ZT_E_MANIFEST_SIZE);
    assert_true(err.has_offset);
    assert_int_equal(err.offset, 100 - 16);
    free(b);
    b = layout10(100, 0);
    ASSERT_ST(locate(b, 100, 0, &lay, &err), ZT_E_MANIFEST_SIZE);
    free(b);
}

static void manifest_larger_than_file(void **state)
{
    (void)state;
    zt__layout lay;
    zt_error err;
    uint8_t *b = layout12(100, 100);
    ASSERT_ST(locate(b, 100, 0, &lay, &err), ZT_E_MANIFEST_SIZE);
    free(b);
    /* A size so large that size + 16 would overflow must not wrap around. */
    b = layout12(100, UINT64_MAX);
    assert_int_not_equal(locate(b, 100, UINT64_MAX, &lay, &err), ZT_OK);
    free(b);
    b = layout12(100, UINT64_MAX - 10);
    assert_int_not_equal(locate(b, 100, UINT64_MAX, &lay, &err), ZT_OK);
    free(b);
}

static void manifest_limit(void **state)
{
    (void)state;
    size_t total = 8 + 1000 + 16;
    uint8_t *b = layout12(total, 1000);
    zt__layout lay;
    zt_error err;
    ASSERT_OK(locate(b, total, 1000, &lay, &err), &err);
    ASSERT_ST(locate(b, total, 999, &lay, &err), ZT_E_LIMIT);
    assert_non_null(strstr(err.message, "999"));
    /* 0 means the spec's ceiling, which 1000 bytes is far below. */
    ASSERT_OK(locate(b, total, 0, &lay, &err), &err);
    free(b);
}

static void limit_capped_at_spec_ceiling(void **state)
{
    (void)state;
    /* The file is not materialised: only head and tail are read, so a
     * "file" of 2 GB can be described with 24 bytes of buffer. */
    uint8_t head[8], tail[16];
    memcpy(head, "ZTEN1000", 8);
    uint64_t size = 2000ull * 1000 * 1000;
    zt__layout lay;
    zt_error err;
    put_le64(tail, ZT_SPEC_MAX_MANIFEST + 1);
    memcpy(tail + 8, "ZTEN1000", 8);
    /* Even with a caller limit above the spec's 1 GB, it is capped. */
    ASSERT_ST(zt__footer_locate(head, tail, size, UINT64_MAX, &lay, &err), ZT_E_LIMIT);
    ASSERT_ST(zt__footer_locate(head, tail, size, 0, &lay, &err), ZT_E_LIMIT);
    put_le64(tail, ZT_SPEC_MAX_MANIFEST);
    ASSERT_OK(zt__footer_locate(head, tail, size, UINT64_MAX, &lay, &err), &err);
    assert_int_equal(lay.manifest_offset, size - 16 - ZT_SPEC_MAX_MANIFEST);
}

static void truncated_1_2_is_not_read_as_1_0(void **state)
{
    (void)state;
    size_t total = 8 + 56 + 40 + 16;
    uint8_t *b = layout12(total, 40);
    zt__layout lay;
    zt_error err;
    /* Losing 1..7 bytes of the footer magic leaves magic bytes in the high
     * half of what a 1.0 reader would take as the size. */
    for (size_t cut = 1; cut < 8; cut++) {
        memset(&err, 0, sizeof err);
        ASSERT_ST(locate(b, total - cut, 0, &lay, &err), ZT_E_TRUNCATED);
        assert_non_null(strstr(err.message, "truncated"));
    }
    free(b);
}

static void footer_magic_must_be_exact(void **state)
{
    (void)state;
    size_t total = 8 + 56 + 40 + 16;
    uint8_t *b = layout12(total, 40);
    zt__layout lay;
    zt_error err;
    b[total - 1] = '1'; /* "ZTEN1001" */
    zt_status st = locate(b, total, 0, &lay, &err);
    assert_int_not_equal(st, ZT_OK);
    free(b);
}

static void open_memory_agrees(void **state)
{
    (void)state;
    zt_file *f = NULL;
    zt_error err;
    ASSERT_ST(zt_open_memory("ZTEN100", 7, NULL, &f, &err), ZT_E_TRUNCATED);
    assert_null(f);
    ASSERT_ST(zt_open_memory("NOTZT000xxxxxxxxxxxxxxxxxxxxxxxx", 32, NULL, &f, &err), ZT_E_MAGIC);
    ASSERT_ST(zt_open_memory("", 0, NULL, &f, &err), ZT_E_TRUNCATED);
    /* An empty buffer may be passed as NULL. */
    ASSERT_ST(zt_open_memory(NULL, 0, NULL, &f, &err), ZT_E_TRUNCATED);
    ASSERT_ST(zt_open_memory(NULL, 5, NULL, &f, &err), ZT_E_ARG);
    ASSERT_ST(zt_open_memory("ZTEN1000", 8, NULL, NULL, &err), ZT_E_ARG);
    /* A NULL zt_error is allowed everywhere. */
    ASSERT_ST(zt_open_memory("ZTEN100", 7, NULL, &f, NULL), ZT_E_TRUNCATED);
}

static void open_memory_manifest_limit(void **state)
{
    (void)state;
    /* A well-formed manifest of known size; the option limits it. */
    tb m = {0};
    tb_map(&m, 2);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    tb_text(&m, "objects");
    tb_map(&m, 0);
    uint8_t data[8] = {0};
    size_t n;
    uint8_t *file = zt_test_assemble(data, 8, &m, 1, &n);
    zt_file *f = NULL;
    zt_error err;
    zt_open_options o = {.max_manifest_size = m.len};
    ASSERT_OK(zt_open_memory(file, n, &o, &f, &err), &err);
    assert_int_equal(zt_file_manifest_offset(f), 8);
    assert_int_equal(zt_file_manifest_length(f), m.len);
    assert_int_equal(zt_file_get_kind(f), ZT_KIND_ZT_1_2);
    zt_close(f);
    o.max_manifest_size = m.len - 1;
    ASSERT_ST(zt_open_memory(file, n, &o, &f, &err), ZT_E_LIMIT);
    free(file);
    tb_free(&m);
}

/* An options struct is read only as far as its size says: a caller built
 * against a header whose struct ended after max_manifest_size never has the
 * bytes after it read, whatever they hold. */
static void open_options_read_up_to_their_size(void **state)
{
    (void)state;
    tb m = {0};
    tb_map(&m, 2);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    tb_text(&m, "objects");
    tb_map(&m, 0);
    uint8_t data[8] = {0};
    size_t n;
    uint8_t *file = zt_test_assemble(data, 8, &m, 1, &n);
    zt_file *f = NULL;
    zt_error err;
    zt_open_options o;
    zt_open_options_init(&o);
    assert_int_equal(o.size, sizeof(o));
    o.max_manifest_size = m.len - 1;
    ASSERT_ST(zt_open_memory(file, n, &o, &f, &err), ZT_E_LIMIT);
    /* The limit lies past the size the caller declares: not read. */
    o.size = offsetof(zt_open_options, max_manifest_size);
    ASSERT_OK(zt_open_memory(file, n, &o, &f, &err), &err);
    zt_close(f);
    /* Size 0: the first layout, every field read. */
    o.size = 0;
    ASSERT_ST(zt_open_memory(file, n, &o, &f, &err), ZT_E_LIMIT);
    free(file);
    tb_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(too_short_for_header),
        cmocka_unit_test(bad_header_magic),
        cmocka_unit_test(header_only_is_truncated),
        cmocka_unit_test(layout_1_2_found),
        cmocka_unit_test(layout_1_0_found),
        cmocka_unit_test(manifest_right_after_header),
        cmocka_unit_test(zero_manifest_size),
        cmocka_unit_test(manifest_larger_than_file),
        cmocka_unit_test(manifest_limit),
        cmocka_unit_test(limit_capped_at_spec_ceiling),
        cmocka_unit_test(truncated_1_2_is_not_read_as_1_0),
        cmocka_unit_test(footer_magic_must_be_exact),
        cmocka_unit_test(open_memory_agrees),
        cmocka_unit_test(open_memory_manifest_limit),
        cmocka_unit_test(open_options_read_up_to_their_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
