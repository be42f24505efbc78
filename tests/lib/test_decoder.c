/*
 * test_decoder.c: reading component bytes (lib/src/codec_zstd.c). The pull
 * decoder in small and large chunks equals zt_component_read; zstd length
 * lies both ways are ZT_E_SIZE and never overrun; truncated, corrupt,
 * trailing-garbage and oversized-window frames are errors; multi-frame and
 * skippable-frame streams are fine; a sink that stops gives ZT_E_IO. The frame
 * check (zt_component_check_frames) finds cut, corrupt, early-ended and
 * size-lying frames without decoding; windows over ZT_ZSTD_WINDOW_LOG_MAX are
 * ZT_E_LIMIT for both, and the writer never produces one at any level.
 */
#include "zt_test.h"

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getFrameHeader */
#include <zstd.h>

/* A file with one u8 object "t" of shape [elems] whose data component is
 * `stored` (raw or zstd, with the given uncompressed_length). */
static uint8_t *one_component_file(const void *stored, size_t n, int zstd, uint64_t ulen,
                                   uint64_t elems, size_t *len)
{
    tb m = {0};
    tb_map(&m, 2);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    tb_text(&m, "objects");
    tb_map(&m, 1);
    tb_text(&m, "t");
    uint64_t shape[1] = {elems};
    tb_dense(&m, 1, shape,
             &(tcomp){"u8", 64, n, zstd ? "zstd" : NULL, zstd ? ulen : UINT64_MAX, NULL, NULL});
    uint8_t *data = calloc(1, 64 + n);
    memcpy(data + 64, stored, n);
    uint8_t *f = zt_test_assemble(data, 64 + n, &m, 1, len);
    free(data);
    tb_free(&m);
    return f;
}

static uint8_t *compress(const uint8_t *src, size_t n, size_t *out)
{
    size_t cap = ZSTD_compressBound(n);
    uint8_t *c = malloc(cap);
    size_t r = ZSTD_compress(c, cap, src, n, 3);
    assert_false(ZSTD_isError(r));
    *out = r;
    return c;
}

/* Half random, half repetitive, so zstd emits several blocks of both kinds. */
static uint8_t *payload(size_t n, uint64_t seed)
{
    uint8_t *p = malloc(n);
    zt_test_fill(p, n, seed);
    for (size_t i = n / 2; i < n; i++)
        p[i] = (uint8_t)(i % 7);
    return p;
}

typedef struct opened {
    uint8_t *bytes;
    zt_file *f;
    const zt_component *c;
} opened;

static opened open_one(const void *stored, size_t n, int zstd, uint64_t ulen, uint64_t elems)
{
    opened o;
    size_t len;
    o.bytes = one_component_file(stored, n, zstd, ulen, elems, &len);
    zt_error err;
    ASSERT_OK(zt_open_memory(o.bytes, len, NULL, &o.f, &err), &err);
    o.c = zt_object_component_at(zt_file_object_at(o.f, 0), 0);
    return o;
}

static void close_one(opened *o)
{
    zt_close(o->f);
    free(o->bytes);
}

/* Pulls the whole component in pieces of at most `chunk` bytes. */
static zt_status pull(const opened *o, size_t chunk, tb *out, zt_error *err)
{
    zt_decoder *d;
    zt_status st = zt_decoder_new(o->f, o->c, &d, err);
    if (st)
        return st;
    uint8_t *buf = malloc(chunk);
    for (;;) {
        size_t n = 99999999;
        st = zt_decoder_read(d, buf, chunk, &n, err);
        if (st)
            break;
        assert_true(n <= chunk);
        if (n == 0) {
            /* the end is sticky */
            st = zt_decoder_read(d, buf, chunk, &n, err);
            assert_int_equal(st, ZT_OK);
            assert_int_equal(n, 0);
            break;
        }
        tb_raw(out, buf, n);
    }
    free(buf);
    zt_decoder_free(d);
    return st;
}

static void chunked_reads_equal_read(void **state)
{
    (void)state;
    size_t n = 300000, cn;
    uint8_t *p = payload(n, 1);
    uint8_t *z = compress(p, n, &cn);
    opened files[2] = {open_one(p, n, 0, 0, n), open_one(z, cn, 1, n, n)};
    for (int k = 0; k < 2; k++) {
        opened *o = &files[k];
        assert_int_equal(zt_component_decoded_length(o->c), n);
        uint8_t *whole = malloc(n);
        size_t got;
        zt_error err;
        ASSERT_OK(zt_component_read(o->f, o->c, whole, n, &got, &err), &err);
        assert_int_equal(got, n);
        assert_memory_equal(whole, p, n);
        size_t chunks[] = {1, 7, 65536, 1 << 20};
        for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
            tb out = {0};
            ASSERT_OK(pull(o, chunks[i], &out, &err), &err);
            assert_int_equal(out.len, n);
            assert_memory_equal(out.p, whole, n);
            tb_free(&out);
        }
        free(whole);
        close_one(o);
    }
    free(z);
    free(p);
}

static void zero_cap_and_empty_components(void **state)
{
    (void)state;
    uint8_t one = 7;
    opened o = open_one(&one, 1, 0, 0, 1);
    zt_decoder *d;
    zt_error err;
    ASSERT_OK(zt_decoder_new(o.f, o.c, &d, &err), &err);
    size_t n = 5;
    uint8_t b[4];
    ASSERT_OK(zt_decoder_read(d, b, 0, &n, &err), &err);
    assert_int_equal(n, 0);
    /* cap 0 is not the end: the byte is still there */
    ASSERT_OK(zt_decoder_read(d, b, 4, &n, &err), &err);
    assert_int_equal(n, 1);
    assert_int_equal(b[0], 7);
    ASSERT_OK(zt_decoder_read(d, b, 4, &n, &err), &err);
    assert_int_equal(n, 0);
    zt_decoder_free(d);
    zt_decoder_free(NULL);
    close_one(&o);
    /* an empty zstd component */
    size_t cn;
    uint8_t *z = compress((const uint8_t *)"", 0, &cn);
    o = open_one(z, cn, 1, 0, 0);
    tb out = {0};
    ASSERT_OK(pull(&o, 16, &out, &err), &err);
    assert_int_equal(out.len, 0);
    size_t got = 9;
    ASSERT_OK(zt_component_read(o.f, o.c, b, 0, &got, &err), &err);
    assert_int_equal(got, 0);
    close_one(&o);
    free(z);
}

static void length_lies(void **state)
{
    (void)state;
    size_t n = 100000, cn;
    uint8_t *p = payload(n, 2);
    uint8_t *z = compress(p, n, &cn);
    /* the manifest says fewer bytes than the frame holds, then more; the
     * shape agrees with the lie, so the file validates */
    uint64_t lies[] = {n - 1, n / 2, 1, n + 1, 2 * n};
    for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
        uint64_t ulen = lies[i];
        opened o = open_one(z, cn, 1, ulen, ulen);
        zt_error err;
        size_t chunks[] = {1, 7, 65536};
        for (size_t k = 0; k < 3; k++) {
            tb out = {0};
            memset(&err, 0, sizeof err);
            ASSERT_ST(pull(&o, chunks[k], &out, &err), ZT_E_SIZE);
            /* never more than the manifest promised */
            assert_true(out.len <= ulen);
            assert_string_equal(err.object, "t");
            assert_string_equal(err.component, "data");
            assert_true(err.has_offset);
            assert_int_equal(err.offset, 64);
            tb_free(&out);
        }
        /* one-shot read: a buffer of exactly ulen bytes, guarded */
        uint8_t *buf = malloc(ulen + 64);
        memset(buf, 0xAA, ulen + 64);
        size_t got = 0;
        ASSERT_ST(zt_component_read(o.f, o.c, buf, ulen, &got, &err), ZT_E_SIZE);
        assert_true(got <= ulen);
        for (size_t j = 0; j < 64; j++)
            assert_int_equal(buf[ulen + j], 0xAA);
        free(buf);
        close_one(&o);
    }
    free(z);
    free(p);
}

static void truncated_and_corrupt_frames(void **state)
{
    (void)state;
    size_t n = 100000, cn;
    uint8_t *p = payload(n, 3);
    uint8_t *z = compress(p, n, &cn);
    /* truncated: the manifest's length ends inside the frame */
    size_t cuts[] = {cn - 1, cn / 2, 6, 1};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        opened o = open_one(z, cuts[i], 1, n, n);
        zt_error err;
        tb out = {0};
        zt_status st = pull(&o, 4096, &out, &err);
        if (st != ZT_E_ZSTD)
            fail_msg("cut at %zu of %zu: got %s", cuts[i], cn, zt_status_name(st));
        assert_true(out.len <= n);
        tb_free(&out);
        uint8_t *buf = malloc(n);
        ASSERT_ST(zt_component_read(o.f, o.c, buf, n, NULL, &err), ZT_E_ZSTD);
        free(buf);
        close_one(&o);
    }
    /* corrupt: a broken magic, and garbage after a complete frame */
    uint8_t *bad = malloc(cn + 16);
    memcpy(bad, z, cn);
    bad[0] ^= 0xFF;
    opened o = open_one(bad, cn, 1, n, n);
    zt_error err;
    tb out = {0};
    ASSERT_ST(pull(&o, 4096, &out, &err), ZT_E_ZSTD);
    assert_non_null(strstr(err.message, "zstd"));
    tb_free(&out);
    close_one(&o);
    memcpy(bad, z, cn);
    memset(bad + cn, 0x5A, 16);
    o = open_one(bad, cn + 16, 1, n, n);
    assert_int_not_equal(pull(&o, 4096, &out, &err), ZT_OK);
    tb_free(&out);
    close_one(&o);
    /* raw bytes that are not zstd at all */
    o = open_one(p, 1000, 1, 1000, 1000);
    ASSERT_ST(pull(&o, 4096, &out, &err), ZT_E_ZSTD);
    tb_free(&out);
    close_one(&o);
    free(bad);
    free(z);
    free(p);
}

static void multiple_and_skippable_frames(void **state)
{
    (void)state;
    size_t n = 50000, c1, c2;
    uint8_t *p = payload(2 * n, 4);
    uint8_t *z1 = compress(p, n, &c1), *z2 = compress(p + n, n, &c2);
    /* frame 1, a skippable frame, frame 2 */
    static const uint8_t skip[12] = {0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4};
    tb s = {0};
    tb_raw(&s, z1, c1);
    tb_raw(&s, skip, sizeof skip);
    tb_raw(&s, z2, c2);
    opened o = open_one(s.p, s.len, 1, 2 * n, 2 * n);
    zt_error err;
    size_t chunks[] = {1, 7, 65536};
    for (size_t k = 0; k < 3; k++) {
        tb out = {0};
        ASSERT_OK(pull(&o, chunks[k], &out, &err), &err);
        assert_int_equal(out.len, 2 * n);
        assert_memory_equal(out.p, p, 2 * n);
        tb_free(&out);
    }
    close_one(&o);
    /* only the first frame's worth promised: the second frame is a lie */
    o = open_one(s.p, s.len, 1, n, n);
    tb out = {0};
    ASSERT_ST(pull(&o, 65536, &out, &err), ZT_E_SIZE);
    tb_free(&out);
    close_one(&o);
    tb_free(&s);
    free(z1);
    free(z2);
    free(p);
}

static void window_too_large(void **state)
{
    (void)state;
    /* A frame that asks for a 256 MiB window (no content size to shrink it)
     * is refused rather than allocated. */
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 28);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0);
    uint8_t src[4096];
    zt_test_fill(src, sizeof src, 5);
    uint8_t dst[8192];
    ZSTD_inBuffer in = {src, sizeof src, 0};
    ZSTD_outBuffer ob = {dst, sizeof dst, 0};
    /* streamed (e_continue first), so the size is unknown and the window
     * is not shrunk to fit it */
    size_t r = ZSTD_compressStream2(cc, &ob, &in, ZSTD_e_continue);
    assert_false(ZSTD_isError(r));
    assert_int_equal(in.pos, in.size);
    ZSTD_inBuffer none = {NULL, 0, 0};
    r = ZSTD_compressStream2(cc, &ob, &none, ZSTD_e_end);
    assert_int_equal(r, 0);
    ZSTD_freeCCtx(cc);
    /* the frame header really does declare the big window */
    ZSTD_frameHeader fh;
    assert_int_equal(ZSTD_getFrameHeader(&fh, dst, ob.pos), 0);
    assert_true(fh.windowSize > (1ull << 27));
    opened o = open_one(dst, ob.pos, 1, sizeof src, sizeof src);
    zt_error err;
    tb out = {0};
    ASSERT_ST(pull(&o, 65536, &out, &err), ZT_E_LIMIT);
    assert_non_null(strstr(err.message, "ZT_ZSTD_WINDOW_LOG_MAX"));
    assert_int_equal(out.len, 0);
    tb_free(&out);
    ASSERT_ST(zt_component_check_frames(o.f, o.c, &err), ZT_E_LIMIT);
    close_one(&o);
}

/* A streamed frame (no content size in its header) with the given window log. */
static uint8_t *compress_streamed(const uint8_t *src, size_t n, int wlog, size_t *out)
{
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, wlog);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0);
    size_t cap = ZSTD_compressBound(n) + 64;
    uint8_t *dst = malloc(cap);
    ZSTD_inBuffer in = {src, n, 0};
    ZSTD_outBuffer ob = {dst, cap, 0};
    assert_false(ZSTD_isError(ZSTD_compressStream2(cc, &ob, &in, ZSTD_e_continue)));
    assert_int_equal(ZSTD_compressStream2(cc, &ob, &in, ZSTD_e_end), 0);
    ZSTD_freeCCtx(cc);
    *out = ob.pos;
    return dst;
}

static void window_at_the_limit(void **state)
{
    (void)state;
    /* 2^23 is what the writer's levels 17-19 use: accepted. One more is not. */
    size_t n = 200000, cn;
    uint8_t *p = payload(n, 8);
    for (int wlog = ZT_ZSTD_WINDOW_LOG_MAX; wlog <= ZT_ZSTD_WINDOW_LOG_MAX + 1; wlog++) {
        uint8_t *z = compress_streamed(p, n, wlog, &cn);
        ZSTD_frameHeader fh;
        assert_int_equal(ZSTD_getFrameHeader(&fh, z, cn), 0);
        assert_int_equal(fh.windowSize, 1ull << wlog);
        opened o = open_one(z, cn, 1, n, n);
        zt_error err;
        tb out = {0};
        zt_status want = wlog > ZT_ZSTD_WINDOW_LOG_MAX ? ZT_E_LIMIT : ZT_OK;
        ASSERT_ST(pull(&o, 65536, &out, &err), want);
        ASSERT_ST(zt_component_check_frames(o.f, o.c, &err), want);
        if (want == ZT_OK)
            assert_memory_equal(out.p, p, n);
        else
            assert_int_equal(err.offset, 64);
        tb_free(&out);
        close_one(&o);
        free(z);
    }
    free(p);
}

/* Offset of the k-th block header (from 0) of the frame at the start of z. */
static size_t block_at(const uint8_t *z, size_t cn, int k)
{
    size_t pos = ZSTD_frameHeaderSize(z, cn);
    assert_false(ZSTD_isError(pos));
    for (int i = 0; i < k; i++) {
        uint32_t bh = z[pos] | (uint32_t)z[pos + 1] << 8 | (uint32_t)z[pos + 2] << 16;
        assert_int_equal(bh & 1, 0); /* there is a block after it */
        pos += 3 + (((bh >> 1) & 3) == 1 ? 1 : bh >> 3);
    }
    assert_true(pos + 3 <= cn);
    return pos;
}

static void check_frames_accepts_good_streams(void **state)
{
    (void)state;
    size_t n = 300000, cn, sn;
    uint8_t *p = payload(n, 9);
    size_t en;
    uint8_t *z = compress(p, n, &cn);               /* with a content size */
    uint8_t *zs = compress_streamed(p, n, 21, &sn); /* without, as the writer writes */
    uint8_t *e = compress((const uint8_t *)"", 0, &en);
    static const uint8_t skip[12] = {0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4};
    tb multi = {0};
    tb_raw(&multi, skip, sizeof skip);
    tb_raw(&multi, z, cn);
    tb_raw(&multi, skip, sizeof skip);
    tb_raw(&multi, zs, sn);
    opened files[] = {open_one(z, cn, 1, n, n), open_one(zs, sn, 1, n, n), open_one(e, en, 1, 0, 0),
                      open_one(multi.p, multi.len, 1, 2 * n, 2 * n), open_one(p, n, 0, 0, n)};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        zt_error err;
        ASSERT_OK(zt_component_check_frames(files[i].f, files[i].c, &err), &err);
        close_one(&files[i]);
    }
    tb_free(&multi);
    free(e);
    free(zs);
    free(z);
    free(p);
}

/* The component's data at `at` changed by fn; the check gives `want` at file byte `where`. */
static void expect_frames(const uint8_t *z, size_t cn, uint64_t ulen, void (*fn)(uint8_t *, size_t),
                          zt_status want, uint64_t where)
{
    uint8_t *bad = malloc(cn);
    memcpy(bad, z, cn);
    if (fn)
        fn(bad, cn);
    opened o = open_one(bad, cn, 1, ulen, ulen);
    zt_error err;
    memset(&err, 0, sizeof err);
    ASSERT_ST(zt_component_check_frames(o.f, o.c, &err), want);
    assert_string_equal(err.object, "t");
    assert_string_equal(err.component, "data");
    assert_true(err.has_offset);
    if (err.offset != where)
        fail_msg("%s: offset %llu, expected %llu", err.message, (unsigned long long)err.offset,
                 (unsigned long long)where);
    /* the decoder agrees that the component is bad (it may say so later) */
    tb out = {0};
    assert_int_not_equal(pull(&o, 65536, &out, &err), ZT_OK);
    tb_free(&out);
    close_one(&o);
    free(bad);
}

static size_t g_block; /* the block the mutators below change */
static void reserved_type(uint8_t *z, size_t n)
{
    (void)n;
    z[g_block] |= 6;
}
static void early_last_block(uint8_t *z, size_t n)
{
    (void)n;
    z[g_block] |= 1;
}
static void bad_magic(uint8_t *z, size_t n)
{
    (void)n;
    z[0] ^= 0xFF;
}

static void check_frames_finds_broken_streams(void **state)
{
    (void)state;
    size_t n = 600000, cn;
    uint8_t *p = payload(n, 10);
    uint8_t *z = compress_streamed(p, n, 21, &cn);
    g_block = block_at(z, cn, 2);
    expect_frames(z, cn, n, reserved_type, ZT_E_ZSTD, 64 + g_block);
    /* the frame ends after block 2; what follows is no frame */
    size_t next = g_block + 3 + ((z[g_block] | z[g_block + 1] << 8 | z[g_block + 2] << 16) >> 3);
    expect_frames(z, cn, n, early_last_block, ZT_E_ZSTD, 64 + next);
    expect_frames(z, cn, n, bad_magic, ZT_E_ZSTD, 64);
    /* cut inside the frame: the component ends before the frame does */
    size_t cuts[] = {cn - 1, cn / 2, 6, 1};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        opened o = open_one(z, cuts[i], 1, n, n);
        zt_error err;
        ASSERT_ST(zt_component_check_frames(o.f, o.c, &err), ZT_E_ZSTD);
        assert_non_null(strstr(err.message, "cut off") ? err.message : strstr(err.message, "past"));
        close_one(&o);
    }
    /* garbage after a complete frame */
    uint8_t *g = malloc(cn + 16);
    memcpy(g, z, cn);
    memset(g + cn, 0x5A, 16);
    expect_frames(g, cn + 16, n, NULL, ZT_E_ZSTD, 64 + cn);
    free(g);
    free(z);
    free(p);
}

static void check_frames_finds_size_lies(void **state)
{
    (void)state;
    size_t n = 100000, cn, sn;
    uint8_t *p = payload(n, 11);
    /* the frame declares n; the manifest says otherwise */
    uint8_t *z = compress(p, n, &cn);
    expect_frames(z, cn, n - 1, NULL, ZT_E_SIZE, 64);
    expect_frames(z, cn, n + 1, NULL, ZT_E_SIZE, 64);
    /* no declared size, but the blocks cannot hold what the manifest says */
    uint8_t *zs = compress_streamed(p, n, 21, &sn);
    expect_frames(zs, sn, 64ull * n, NULL, ZT_E_SIZE, 64);
    free(zs);
    free(z);
    free(p);
}

/* Decoding succeeds exactly when the check passes, in the corner cases too. */
static void check_frames_agrees_with_the_decoder(void **state)
{
    (void)state;
    static const uint8_t skip[12] = {0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4};
    size_t n = 5000, cn;
    uint8_t *p = payload(n, 14);
    uint8_t *z = compress_streamed(p, n, 21, &cn);
    /* the same frame naming dictionary 7 (FHD flag 1, one byte after the window) */
    uint8_t *dict = malloc(cn + 1);
    memcpy(dict, z, 6);
    dict[4] |= 1;
    dict[6] = 7;
    memcpy(dict + 7, z + 6, cn - 6);
    struct {
        const char *what;
        const void *bytes;
        size_t n;
        uint64_t ulen;
        zt_status want;
    } cases[] = {
        {"a skippable frame only, 0 bytes", skip, sizeof skip, 0, ZT_OK},
        {"a skippable frame only, 5 bytes", skip, sizeof skip, 5, ZT_E_SIZE},
        {"no stored bytes", skip, 0, 0, ZT_E_ZSTD},
        {"a frame needing a dictionary", dict, cn + 1, n, ZT_E_ZSTD},
        {"the frame as it is", z, cn, n, ZT_OK},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        opened o = open_one(cases[i].bytes, cases[i].n, 1, cases[i].ulen, cases[i].ulen);
        zt_error err;
        tb out = {0};
        zt_status dec = pull(&o, 64, &out, &err);
        zt_status chk = zt_component_check_frames(o.f, o.c, &err);
        if (dec != cases[i].want || chk != cases[i].want)
            fail_msg("%s: decode %s, check %s, want %s", cases[i].what, zt_status_name(dec),
                     zt_status_name(chk), zt_status_name(cases[i].want));
        tb_free(&out);
        close_one(&o);
    }
    free(dict);
    free(z);
    free(p);
}

/* The pread path (a mapped file), and a file cut short in place under it. */
static void check_frames_on_a_file(void **state)
{
    (void)state;
    size_t n = 300000, cn, len;
    uint8_t *p = payload(n, 12);
    uint8_t *z = compress_streamed(p, n, 21, &cn);
    uint8_t *bytes = one_component_file(z, cn, 1, n, n, &len);
    char *dir = zt_test_mkdtemp("frames");
    char path[4200];
    snprintf(path, sizeof path, "%s/f.zt", dir);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(bytes, 1, len, fp), len);
    fclose(fp);
    zt_file *f;
    zt_error err;
    ASSERT_OK(zt_open(path, NULL, &f, &err), &err);
    const zt_component *c = zt_object_component_at(zt_file_object_at(f, 0), 0);
    ASSERT_OK(zt_component_check_frames(f, c, &err), &err);
    assert_int_equal(truncate(path, 64 + (off_t)cn / 2), 0);
    ASSERT_ST(zt_component_check_frames(f, c, &err), ZT_E_TRUNCATED);
    zt_close(f);
    zt_test_rmtree(dir);
    free(dir);
    free(bytes);
    free(z);
    free(p);
}

/* Every level the writer takes, 22 included, gives frames every decoder accepts. */
static void writer_window_within_the_limit(void **state)
{
    (void)state;
    size_t n = 1 << 20;
    uint8_t *p = payload(n, 13);
    char *dir = zt_test_mkdtemp("wlog");
    char path[4200];
    snprintf(path, sizeof path, "%s/w.zt", dir);
    int levels[] = {-5, 3, 19, 20, 22};
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
        zt_writer *w;
        zt_error err;
        zt_writer_options o;
        zt_writer_options_init(&o);
        o.fsync = 0;
        ASSERT_OK(zt_writer_open(path, &o, &w, &err), &err);
        zt_component_spec spec = {ZT_DTYPE_U8, NULL, ZT_ENC_ZSTD, levels[i], ZT_DIGEST_NONE};
        size_t id;
        ASSERT_OK(zt_writer_begin(w, &spec, &err), &err);
        ASSERT_OK(zt_writer_write(w, p, n, &err), &err);
        ASSERT_OK(zt_writer_end(w, &id, &err), &err);
        uint64_t shape[1] = {n};
        const char *role = "data";
        ASSERT_OK(zt_writer_add_object(w, "t", "dense", 1, shape, NULL, 1, &role, &id, &err), &err);
        ASSERT_OK(zt_writer_finish(w, &err), &err);
        zt_writer_free(w);
        zt_file *f;
        ASSERT_OK(zt_open(path, NULL, &f, &err), &err);
        const zt_component *c = zt_object_component_at(zt_file_object_at(f, 0), 0);
        ZSTD_frameHeader fh;
        assert_int_equal(ZSTD_getFrameHeader(&fh, zt_component_stored(f, c), 18), 0);
        if (fh.windowSize > (1ull << ZT_ZSTD_WINDOW_LOG_MAX))
            fail_msg("level %d: window %llu", levels[i], fh.windowSize);
        ASSERT_OK(zt_component_check_frames(f, c, &err), &err);
        uint8_t *back = malloc(n);
        ASSERT_OK(zt_component_read(f, c, back, n, NULL, &err), &err);
        assert_memory_equal(back, p, n);
        free(back);
        zt_close(f);
    }
    zt_test_rmtree(dir);
    free(dir);
    free(p);
}

typedef struct sink_state {
    int calls, stop_at;
    size_t bytes;
} sink_state;

static int sink(void *ud, const void *data, size_t len)
{
    sink_state *s = ud;
    (void)data;
    s->calls++;
    s->bytes += len;
    return s->calls == s->stop_at;
}

static void stream_sink(void **state)
{
    (void)state;
    size_t n = 1 << 20, cn;
    uint8_t *p = payload(n, 6);
    uint8_t *z = compress(p, n, &cn);
    opened files[2] = {open_one(p, n, 0, 0, n), open_one(z, cn, 1, n, n)};
    for (int k = 0; k < 2; k++) {
        zt_error err;
        /* a sink that never stops sees every byte */
        sink_state s = {0, -1, 0};
        ASSERT_OK(zt_component_stream(files[k].f, files[k].c, sink, &s, &err), &err);
        assert_int_equal(s.bytes, n);
        /* stopping at the first call, or a later one, is ZT_E_IO and no more calls */
        for (int stop = 1; stop <= 2; stop++) {
            if (k == 0 && stop == 2)
                continue; /* raw is one call */
            s = (sink_state){0, stop, 0};
            ASSERT_ST(zt_component_stream(files[k].f, files[k].c, sink, &s, &err), ZT_E_IO);
            assert_int_equal(s.calls, stop);
            assert_int_equal(err.code, ZT_E_IO);
        }
        close_one(&files[k]);
    }
    free(z);
    free(p);
}

static void read_buffer_too_small(void **state)
{
    (void)state;
    uint8_t data[100];
    zt_test_fill(data, sizeof data, 7);
    opened o = open_one(data, 100, 0, 0, 100);
    uint8_t buf[100];
    size_t got = 5;
    zt_error err;
    ASSERT_ST(zt_component_read(o.f, o.c, buf, 99, &got, &err), ZT_E_ARG);
    assert_string_equal(err.object, "t");
    ASSERT_OK(zt_component_read(o.f, o.c, buf, 100, &got, &err), &err);
    assert_int_equal(got, 100);
    assert_memory_equal(buf, data, 100);
    close_one(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chunked_reads_equal_read),
        cmocka_unit_test(zero_cap_and_empty_components),
        cmocka_unit_test(length_lies),
        cmocka_unit_test(truncated_and_corrupt_frames),
        cmocka_unit_test(multiple_and_skippable_frames),
        cmocka_unit_test(window_too_large),
        cmocka_unit_test(window_at_the_limit),
        cmocka_unit_test(check_frames_accepts_good_streams),
        cmocka_unit_test(check_frames_finds_broken_streams),
        cmocka_unit_test(check_frames_finds_size_lies),
        cmocka_unit_test(check_frames_agrees_with_the_decoder),
        cmocka_unit_test(check_frames_on_a_file),
        cmocka_unit_test(writer_window_within_the_limit),
        cmocka_unit_test(stream_sink),
        cmocka_unit_test(read_buffer_too_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
