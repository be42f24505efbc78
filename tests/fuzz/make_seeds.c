/*
 * make_seeds.c: writes starting inputs for fuzz_reader into a directory:
 * valid files from the public writer (every format, dtype family, encoding
 * and digest), hand-built manifests the writer never produces (1.0 layout,
 * indefinite lengths, tags, half floats, byte strings, non-text keys, a newer
 * minor version), and broken files (truncated, bad magic, lying sizes, digest
 * mismatch, zstd length lies). The committed corpus is this output after
 * `fuzz_reader -merge=1`; see README.md.
 *
 *   fuzz_make_seeds OUT_DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "ztensor/ztensor.h"

static const char *g_dir;

static void die(const char *what, const zt_error *err)
{
    fprintf(stderr, "make_seeds: %s: %s\n", what, err ? err->message : strerror(errno));
    exit(1);
}

static void save(const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0)
        die(path, NULL);
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die(path, NULL);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(*n ? *n : 1);
    if (!p || fread(p, 1, *n, f) != *n)
        die(path, NULL);
    fclose(f);
    return p;
}

/* ---- files from the writer */

typedef struct comp {
    const char *role;
    zt_dtype dtype;
    const char *type;
    zt_encoding enc;
    zt_digest_kind digest;
    size_t len;
    int fill; /* byte pattern: < 0 counts up */
} comp;

static size_t put_comp(zt_writer *w, const comp *c)
{
    zt_error err;
    zt_component_spec s = {c->dtype, c->type, c->enc, 1, c->digest};
    size_t id;
    if (zt_writer_begin(w, &s, &err))
        die("begin", &err);
    uint8_t buf[256];
    for (size_t done = 0; done < c->len;) {
        size_t n = c->len - done < sizeof(buf) ? c->len - done : sizeof(buf);
        for (size_t i = 0; i < n; i++)
            buf[i] = c->fill < 0 ? (uint8_t)(done + i) : (uint8_t)c->fill;
        if (zt_writer_write(w, buf, n, &err))
            die("write", &err);
        done += n;
    }
    if (zt_writer_end(w, &id, &err))
        die("end", &err);
    return id;
}

static void add(zt_writer *w, const char *name, const char *format, size_t ndim,
                const uint64_t *shape, const char *attrs, size_t n, const comp *cs)
{
    zt_error err;
    const char *roles[8];
    size_t ids[8];
    for (size_t i = 0; i < n; i++) {
        roles[i] = cs[i].role;
        ids[i] = put_comp(w, &cs[i]);
    }
    if (zt_writer_add_object(w, name, format, ndim, shape, attrs, n, roles, ids, &err))
        die(name, &err);
}

static zt_writer *wopen(const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    zt_writer_options o;
    zt_writer_options_init(&o);
    o.fsync = 0;
    zt_writer *w;
    zt_error err;
    if (zt_writer_open(path, &o, &w, &err))
        die(path, &err);
    return w;
}

static void wfinish(zt_writer *w)
{
    zt_error err;
    if (zt_writer_finish(w, &err))
        die("finish", &err);
    zt_writer_free(w);
}

static void writer_seeds(void)
{
    zt_writer *w = wopen("dense_f32_sha256.zt");
    uint64_t s23[] = {2, 3};
    comp d = {"data", ZT_DTYPE_F32, NULL, ZT_ENC_RAW, ZT_DIGEST_SHA256, 24, -1};
    add(w, "w", "dense", 2, s23, NULL, 1, &d);
    wfinish(w);

    w = wopen("mixed_zstd_crc.zt");
    zt_error err;
    if (zt_writer_set_attributes(w,
                                 "{\"framework\":\"t\",\"n\":-5,\"big\":9007199254740993,\"nbig\":-9223372036854775808,"
                                 "\"f\":1.5,\"g\":0.1,\"a\":[true,false,null,[]],\"o\":{}}",
                                 &err))
        die("attributes", &err);
    uint64_t s64[] = {64}, s4x4[] = {4, 4}, scalar[1] = {0}, s0[] = {0};
    comp z = {"data", ZT_DTYPE_BF16, NULL, ZT_ENC_ZSTD, ZT_DIGEST_CRC32C, 128, 7};
    add(w, "layers.0.bf16", "dense", 1, s64, "{\"k\":\"v\"}", 1, &z);
    comp f8 = {"data", ZT_DTYPE_U8, "f8_e4m3fn", ZT_ENC_RAW, ZT_DIGEST_NONE, 16, -1};
    add(w, "fp8", "dense", 2, s4x4, NULL, 1, &f8);
    comp cx = {"data", ZT_DTYPE_F32, "complex64", ZT_ENC_ZSTD, ZT_DIGEST_SHA256, 8, -1};
    add(w, "scalar_c64", "dense", 0, scalar, NULL, 1, &cx);
    comp e = {"data", ZT_DTYPE_I64, NULL, ZT_ENC_RAW, ZT_DIGEST_CRC32C, 0, 0};
    add(w, "empty", "dense", 1, s0, NULL, 1, &e);
    wfinish(w);

    w = wopen("sparse_quant.zt");
    uint64_t s3x4[] = {3, 4};
    comp csr[] = {{"values", ZT_DTYPE_F16, NULL, ZT_ENC_RAW, ZT_DIGEST_SHA256, 8, -1},
                  {"indices", ZT_DTYPE_U64, NULL, ZT_ENC_ZSTD, ZT_DIGEST_NONE, 32, 0},
                  {"indptr", ZT_DTYPE_U64, NULL, ZT_ENC_RAW, ZT_DIGEST_CRC32C, 32, 0}};
    add(w, "csr", "sparse_csr", 2, s3x4, NULL, 3, csr);
    comp coo[] = {{"values", ZT_DTYPE_I8, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, 3, 1},
                  {"coords", ZT_DTYPE_U64, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, 48, 0}};
    add(w, "coo", "sparse_coo", 2, s3x4, NULL, 2, coo);
    comp qg[] = {{"packed_weight", ZT_DTYPE_I32, NULL, ZT_ENC_ZSTD, ZT_DIGEST_SHA256, 64, -1},
                 {"scales", ZT_DTYPE_F16, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, 8, 2},
                 {"zeros", ZT_DTYPE_F16, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, 8, 0}};
    add(w, "q", "quantized_group", 2, s4x4,
        "{\"bits\":4,\"group_size\":128,\"packing\":\"8_per_i32\"}", 3, qg);
    comp un = {"blob", ZT_DTYPE_BOOL, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, 5, 1};
    add(w, "custom", "my_format", 0, NULL, NULL, 1, &un);
    wfinish(w);
}

/* ---- hand-built files: a tiny CBOR emitter */

typedef struct cb {
    uint8_t p[8192];
    size_t n;
} cb;

static void head(cb *b, unsigned major, uint64_t v)
{
    uint8_t m = (uint8_t)(major << 5);
    if (v < 24) {
        b->p[b->n++] = m | (uint8_t)v;
    } else if (v <= 0xFF) {
        b->p[b->n++] = m | 24;
        b->p[b->n++] = (uint8_t)v;
    } else if (v <= 0xFFFF) {
        b->p[b->n++] = m | 25;
        b->p[b->n++] = (uint8_t)(v >> 8);
        b->p[b->n++] = (uint8_t)v;
    } else {
        b->p[b->n++] = m | 27;
        for (int i = 7; i >= 0; i--)
            b->p[b->n++] = (uint8_t)(v >> (8 * i));
    }
}
static void raw(cb *b, const void *p, size_t n)
{
    memcpy(b->p + b->n, p, n);
    b->n += n;
}
static void text(cb *b, const char *s)
{
    head(b, 3, strlen(s));
    raw(b, s, strlen(s));
}
static void kv_text(cb *b, const char *k, const char *v)
{
    text(b, k);
    text(b, v);
}
static void kv_uint(cb *b, const char *k, uint64_t v)
{
    text(b, k);
    head(b, 0, v);
}

/* File = magic, data (padded to 64), manifest, size, [footer magic]. */
static void build(const char *name, const uint8_t *data, size_t dlen, const cb *man, int footer)
{
    static uint8_t out[65536];
    size_t n = 0;
    memcpy(out, "ZTEN1000", 8);
    n = 64;
    memset(out + 8, 0, 56);
    memcpy(out + n, data, dlen);
    n += dlen;
    while (n % 64)
        out[n++] = 0;
    memcpy(out + n, man->p, man->n);
    n += man->n;
    for (int i = 0; i < 8; i++)
        out[n++] = (uint8_t)((uint64_t)man->n >> (8 * i));
    if (footer) {
        memcpy(out + n, "ZTEN1000", 8);
        n += 8;
    }
    save(name, out, n);
}

/* A 1.2 component map with the usual fields at offset 64. */
static void comp_map(cb *b, const char *dtype, uint64_t len, const char *enc, uint64_t ulen)
{
    head(b, 5, enc ? 5 : 3);
    kv_text(b, "dtype", dtype);
    kv_uint(b, "offset", 64);
    kv_uint(b, "length", len);
    if (enc) {
        kv_text(b, "encoding", enc);
        kv_uint(b, "uncompressed_length", ulen);
    }
}

static void crafted_seeds(void)
{
    uint8_t data[256];
    for (int i = 0; i < 256; i++)
        data[i] = (uint8_t)i;
    cb m;

    /* 1.0: "tensors", long dtype on the tensor, no footer magic. */
    m.n = 0;
    head(&m, 5, 2);
    kv_text(&m, "version", "1.0");
    text(&m, "tensors");
    head(&m, 5, 1);
    text(&m, "t");
    head(&m, 5, 4);
    kv_text(&m, "dtype", "float32");
    text(&m, "shape");
    head(&m, 4, 1);
    head(&m, 0, 4);
    kv_text(&m, "format", "dense");
    text(&m, "components");
    head(&m, 5, 1);
    text(&m, "data");
    head(&m, 5, 2);
    kv_uint(&m, "offset", 64);
    kv_uint(&m, "length", 16);
    build("v1_0_tensors.zt", data, 16, &m, 0);

    /* 1.3.0 with indefinite lengths, tags, half floats, bytes and non-text keys. */
    m.n = 0;
    raw(&m, "\xbf", 1); /* indefinite map */
    kv_text(&m, "version", "1.3.0");
    text(&m, "attributes");
    raw(&m, "\xbf", 1);
    text(&m, "half");
    raw(&m, "\xf9\x3c\x00", 3); /* 1.0 */
    text(&m, "inf");
    raw(&m, "\xf9\x7c\x00", 3);
    text(&m, "nan");
    raw(&m, "\xfb\x7f\xf8\x00\x00\x00\x00\x00\x00", 9);
    text(&m, "bytes");
    raw(&m, "\x5f\x42\x01\x02\x41\x03\xff", 7); /* indefinite byte string */
    text(&m, "txt");
    raw(&m, "\x7f\x62\xc3\xa9\x61\x21\xff", 7); /* indefinite text "é!" */
    text(&m, "tag");
    raw(&m, "\xc1\x1a\x5f\x00\x00\x00", 6); /* epoch time */
    text(&m, "neg");
    raw(&m, "\x3b\xff\xff\xff\xff\xff\xff\xff\xff", 9);
    text(&m, "simple");
    raw(&m, "\xf8\x20", 2);                 /* simple(32) */
    raw(&m, "\x01\x9f\x01\x80\xa0\xff", 6); /* key 1: [_ 1, [], {}] */
    raw(&m, "\xf7\xf6", 2);                 /* key undefined: null */
    raw(&m, "\xff", 1);
    text(&m, "objects");
    raw(&m, "\xbf", 1);
    text(&m, "x");
    head(&m, 5, 4);
    text(&m, "shape");
    raw(&m, "\x9f\x02\x02\xff", 4);
    kv_text(&m, "format", "dense");
    text(&m, "future_field");
    raw(&m, "\xd9\xd9\xf7\xf6", 4); /* self-described null */
    text(&m, "components");
    head(&m, 5, 1);
    text(&m, "data");
    comp_map(&m, "u16", 8, NULL, 0);
    raw(&m, "\xff\xff", 2);
    build("v1_3_odd_cbor.zt", data, 8, &m, 1);

    /* A zstd component whose uncompressed_length lies (too small, then too big). */
    uint8_t z[512];
    size_t zn = ZSTD_compress(z, sizeof(z), data, 200, 1);
    if (ZSTD_isError(zn))
        die("zstd", NULL);
    for (int lie = 0; lie < 2; lie++) {
        m.n = 0;
        head(&m, 5, 2);
        kv_text(&m, "version", "1.2.0");
        text(&m, "objects");
        head(&m, 5, 1);
        text(&m, "z");
        head(&m, 5, 2);
        text(&m, "shape");
        head(&m, 4, 1);
        head(&m, 0, lie ? 300 : 100);
        text(&m, "components");
        head(&m, 5, 1);
        text(&m, "data");
        comp_map(&m, "u8", zn, "zstd", lie ? 300 : 100);
        build(lie ? "zstd_short.zt" : "zstd_long.zt", z, zn, &m, 1);
    }

    /* Two zstd frames back to back, then a skippable frame. */
    uint8_t z2[1024];
    size_t a = ZSTD_compress(z2, sizeof(z2), data, 100, 3);
    size_t b2 = ZSTD_compress(z2 + a, sizeof(z2) - a, data + 100, 100, 3);
    memcpy(z2 + a + b2, "\x50\x2a\x4d\x18\x02\x00\x00\x00xx", 10);
    m.n = 0;
    head(&m, 5, 2);
    kv_text(&m, "version", "1.2");
    text(&m, "objects");
    head(&m, 5, 1);
    text(&m, "z2");
    head(&m, 5, 2);
    text(&m, "shape");
    head(&m, 4, 1);
    head(&m, 0, 200);
    text(&m, "components");
    head(&m, 5, 1);
    text(&m, "data");
    comp_map(&m, "u8", a + b2 + 10, "zstd", 200);
    build("zstd_multiframe.zt", z2, a + b2 + 10, &m, 1);
}

static void broken_seeds(void)
{
    size_t n;
    char path[4096];
    snprintf(path, sizeof(path), "%s/dense_f32_sha256.zt", g_dir);
    uint8_t *f = slurp(path, &n);
    uint8_t *c = malloc(n);
    save("bad_truncated_footer.zt", f, n - 3);
    save("bad_truncated_manifest.zt", f, n - 40);
    memcpy(c, f, n);
    c[0] = 'X';
    save("bad_magic.zt", c, n);
    memcpy(c, f, n);
    c[n - 16] ^= 0x80; /* manifest size way off */
    save("bad_manifest_size.zt", c, n);
    memcpy(c, f, n);
    c[64] ^= 1; /* data byte: digest mismatch */
    save("bad_digest.zt", c, n);
    save("bad_tiny.zt", "ZTEN1000ZTEN1000", 16);
    free(c);
    free(f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_make_seeds OUT_DIR\n");
        return 2;
    }
    g_dir = argv[1];
    writer_seeds();
    crafted_seeds();
    broken_seeds();
    return 0;
}
