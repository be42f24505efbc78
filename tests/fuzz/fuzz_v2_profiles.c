/*
 * fuzz_v2_profiles.c: libFuzzer target for the zTensor v2 layouts: dense,
 * zt.sparse_csr/1, zt.sparse_coo/1, zt.quant_group/1, zt.mx/1, gguf.q8_0/1
 * and an unknown layout, with their metadata rules at open and their data
 * rules in verify, over every encoding and digest.
 *
 * Random CBOR rarely makes a manifest whose sizes agree with a profile, so
 * the input is not the file: it is a recipe read byte by byte (zeros once it
 * runs out). It picks a layout, a shape, the attributes, and for each part a
 * dtype, logical type, encoding, digest and bytes; the target computes the
 * sizes the profile wants, perturbs them when the recipe says so, and writes
 * a deterministic manifest (keys in their canonical order by construction)
 * and a valid container around it. Invariants: v2_check.h.
 */
#include <xxhash.h>
#include <zstd.h>

#include "v2_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct cur {
    const uint8_t *p;
    size_t n, i;
} cur;

static unsigned b8(cur *c)
{
    return c->i < c->n ? c->p[c->i++] : 0;
}

typedef struct buf {
    uint8_t *p;
    size_t len, cap;
} buf;

static void put(buf *b, const void *d, size_t n)
{
    if (b->cap - b->len < n) {
        b->cap = (b->len + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        CHECK(b->p != NULL);
    }
    if (n)
        memcpy(b->p + b->len, d, n);
    b->len += n;
}

static void head(buf *b, unsigned major, uint64_t v)
{
    uint8_t h[9];
    int n = v < 24 ? 0 : v <= 0xFF ? 1 : v <= 0xFFFF ? 2 : v <= 0xFFFFFFFFu ? 4 : 8;
    h[0] = (uint8_t)(major << 5 | (n == 0 ? v : n == 1 ? 24 : n == 2 ? 25 : n == 4 ? 26 : 27));
    for (int i = 0; i < n; i++)
        h[1 + i] = (uint8_t)(v >> (8 * (n - 1 - i)));
    put(b, h, 1 + (size_t)n);
}

static void text(buf *b, const char *s)
{
    head(b, 3, strlen(s));
    put(b, s, strlen(s));
}

static void kv_u(buf *b, const char *k, uint64_t v)
{
    text(b, k);
    head(b, 0, v);
}

static void kv_t(buf *b, const char *k, const char *v)
{
    text(b, k);
    text(b, v);
}

static const char *const k_dt[12] = {"f64", "f32", "f16", "bf16", "i64", "i32",
                                     "i16", "i8",  "u64", "u32",  "u16", "u8"};
static const unsigned k_w[12] = {8, 4, 2, 2, 8, 4, 2, 1, 8, 4, 2, 1};
static const struct {
    const char *name;
    int dt;
    unsigned bits;
} k_ty[9] = {{"bool", 11, 8},        {"f8_e4m3fn", 11, 8},   {"f8_e5m2", 11, 8},
             {"f8_e4m3fnuz", 11, 8}, {"f8_e5m2fnuz", 11, 8}, {"f8_e8m0", 11, 8},
             {"f4_e2m1", 11, 4},     {"complex64", 1, 64},   {"complex128", 0, 128}};

typedef struct part {
    const char *role;
    int dt, ty;   /* ty: -1 none, 9 an unknown type */
    uint64_t len; /* decoded bytes */
} part;

/* The recipe's choice of dtype and logical type (9: one nobody registered). */
static void pick_type(cur *c, part *p)
{
    unsigned t = b8(c) % 14;
    p->dt = (int)(b8(c) % 12);
    p->ty = t < 4 ? -1 : t == 13 ? 9 : (int)t - 4;
    if (p->ty >= 0 && p->ty < 9 && b8(c) % 16)
        p->dt = k_ty[p->ty].dt; /* mostly on its own dtype */
}

static uint64_t size_of(const part *p, uint64_t n)
{
    unsigned bits = p->ty >= 0 && p->ty < 9 ? k_ty[p->ty].bits : 8 * k_w[p->dt];
    return (n * bits + 7) / 8;
}

/* Writes part bytes (from the recipe) as blob, encoded, with a digest. */
static void write_part(cur *c, buf *file, buf *m, const part *p, uint64_t *last_off,
                       uint64_t *last_len)
{
    size_t n = p->len > (1u << 16) ? 1u << 16 : (size_t)p->len;
    uint8_t *d = calloc(1, n ? n : 1);
    CHECK(d != NULL);
    for (size_t i = 0; i < n; i++)
        d[i] = (uint8_t)b8(c);
    unsigned enc = b8(c) % 5, dig = b8(c) % 4;
    buf stored = {0};
    if (enc >= 3) { /* zstd; 4: one seekable frame and its seek table */
        size_t cap = ZSTD_compressBound(n);
        uint8_t *z = malloc(cap);
        ZSTD_CCtx *cc = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
        size_t r = ZSTD_compress2(cc, z, cap, d, n);
        CHECK(!ZSTD_isError(r));
        put(&stored, z, r);
        if (enc == 4) {
            uint8_t t[8 + 8 + 9] = {0x5E, 0x2A, 0x4D, 0x18, 17, 0, 0, 0};
            for (int i = 0; i < 4; i++)
                t[8 + i] = (uint8_t)(r >> (8 * i)), t[12 + i] = (uint8_t)(n >> (8 * i));
            t[16] = 1;
            memcpy(t + 21, "\xB1\xEA\x92\x8F", 4);
            put(&stored, t, sizeof(t));
        }
        ZSTD_freeCCtx(cc);
        free(z);
    } else {
        put(&stored, d, n);
    }
    bool alias = *last_len == stored.len && enc < 3 && b8(c) % 4 == 0;
    if (!alias) {
        size_t off = (file->len + 4095) / 4096 * 4096;
        uint8_t zeros[4096] = {0};
        put(file, zeros, off - file->len);
        *last_off = off;
        *last_len = stored.len;
        put(file, stored.p, stored.len);
    }
    text(m, p->role);
    head(m, 5, 2 + (p->ty >= 0) + (dig != 0) + 2 * (enc >= 3));
    text(m, "blob");
    head(m, 4, 2);
    head(m, 0, *last_off);
    head(m, 0, *last_len);
    if (p->ty >= 0)
        kv_t(m, "type", p->ty < 9 ? k_ty[p->ty].name : "f6_e3m2");
    kv_t(m, "dtype", k_dt[p->dt]);
    if (dig) {
        char s[80];
        zt_hasher *h = zt_hasher_new(dig == 2 ? ZT_DIGEST_SHA256 : ZT_DIGEST_XXH3);
        zt_hasher_update(h, d, n);
        uint8_t out[32];
        zt_hasher_final(h, out);
        zt_hasher_free(h);
        out[0] ^= dig == 3; /* 3: a wrong digest */
        zt_digest_format(dig == 2 ? ZT_DIGEST_SHA256 : ZT_DIGEST_XXH3, out, s);
        kv_t(m, "digest", s);
    }
    if (enc >= 3) {
        kv_t(m, "encoding", enc == 3 ? "zstd" : "zt.zstd-seekable/1");
        kv_u(m, "decoded_length", n);
    }
    free(stored.p);
    free(d);
}

/* Perturbs a size the profile wants, sometimes. */
static uint64_t jitter(cur *c, uint64_t v)
{
    unsigned r = b8(c);
    return r % 16 ? v : v + (r >> 4) % 3 - 1;
}

static void qg_attrs(cur *c, buf *a, const uint64_t *shape, size_t rank, part *parts, size_t *np)
{
    static const unsigned bits_of[6] = {2, 3, 4, 5, 6, 8};
    static const char *const forms[3] = {"none", "implied", "tensor"};
    unsigned bits = bits_of[b8(c) % 6], wi = b8(c) % 4, ww = 1u << wi;
    unsigned per = (unsigned)jitter(c, 8 * ww / bits), gs = (unsigned[]){0, 1, 2, 4}[b8(c) % 4];
    unsigned axis = rank ? b8(c) % rank : 0, form = b8(c) % 3, sf = b8(c) % 3;
    bool plain = b8(c) & 1;
    head(a, 5, 6);
    kv_u(a, "axis", axis);
    kv_u(a, "bits", bits);
    text(a, "packing");
    head(a, 5, 3);
    kv_t(a, "word", (const char *[]){"u8", "u16", "u32", "u64"}[wi]);
    kv_t(a, "order", b8(c) & 1 ? "msb_first" : "lsb_first");
    kv_u(a, "per_word", per);
    kv_u(a, "group_size", gs);
    kv_t(a, "scale_form", (const char *[]){"f32_factors", "f16_factors", "e8m0_exponent"}[sf]);
    text(a, "zero_point");
    head(a, 5, 1 + (form != 0));
    kv_t(a, "form", forms[form]);
    if (form == 1)
        kv_u(a, "value", 8);
    if (form == 2)
        kv_t(a, "packing", plain ? "plain" : "same_as_data");
    uint64_t along = rank ? shape[axis] : 1, codes = 1, lanes;
    for (size_t i = 0; i < rank; i++)
        codes *= shape[i];
    lanes = along ? codes / along : 0;
    uint64_t groups = gs ? along / gs : along;
    parts[0] = (part){"data", (int[]){11, 10, 9, 8}[wi], -1, per ? codes / per * ww : 0};
    parts[1] = (part){"scales", sf == 2 ? 11 : 1 + (int)(b8(c) % 3), sf == 2 ? 5 : -1, 0};
    parts[1].len = groups * lanes * k_w[parts[1].dt];
    *np = 2;
    if (form == 2) { /* "zeros" sorts before "scales" */
        parts[2] = parts[1];
        parts[1] = (part){"zeros", plain ? 2 : parts[0].dt, -1, 0};
        parts[1].len = plain ? groups * lanes * 2 : per ? groups * lanes / per * ww : 0;
        *np = 3;
    }
}

/* The object: layout, shape and attributes from the recipe, parts sized. */
static void build(cur *c, buf *file, buf *m)
{
    static const char *const layouts[7] = {
        "dense",   "zt.sparse_csr/1", "zt.sparse_coo/1", "zt.quant_group/1",
        "zt.mx/1", "gguf.q8_0/1",     "x.opaque/1"};
    unsigned l = b8(c) % 7;
    size_t rank = l == 1 ? 2 : b8(c) % 4;
    uint64_t shape[4], prod = 1, nnz = b8(c) % 8;
    for (size_t i = 0; i < rank; i++)
        prod *= shape[i] = (l == 4 && i + 1 == rank ? 32 : 1) * (b8(c) % 5);
    part parts[3];
    size_t np = 1;
    buf a = {0};
    if (l == 0) {
        pick_type(c, &parts[0]);
        parts[0].role = "data";
        parts[0].len = size_of(&parts[0], prod);
    } else if (l == 1 || l == 2) {
        int idx = b8(c) & 1 ? 8 : 9;
        np = l == 1 ? 3 : 2;
        parts[0] = (part){l == 1 ? "indptr" : "coords", idx, -1,
                          (l == 1 ? (rank ? shape[0] + 1 : 1) : nnz * rank) * k_w[idx]};
        pick_type(c, &parts[1]);
        parts[1].role = "values";
        parts[1].len = size_of(&parts[1], nnz);
        parts[2] = (part){"indices", idx, -1, nnz * k_w[idx]};
    } else if (l == 3) {
        qg_attrs(c, &a, shape, rank, parts, &np);
    } else if (l == 4) {
        head(&a, 5, 2);
        kv_u(&a, "block_size", 32);
        kv_t(&a, "scale_form", "e8m0_exponent");
        pick_type(c, &parts[0]);
        parts[0].role = "data";
        parts[0].len = size_of(&parts[0], prod);
        parts[1] = (part){"scales", 11, 5, prod / 32};
        np = 2;
    } else if (l == 5) {
        head(&a, 5, 2);
        kv_u(&a, "block_bytes", 34);
        kv_u(&a, "elems_per_block", 32);
        parts[0] = (part){"data", 11, -1, prod / 32 * 34};
    } else {
        head(&a, 5, 1);
        kv_u(&a, "k", b8(c));
        pick_type(c, &parts[0]);
        parts[0].role = "blob";
        parts[0].len = b8(c);
    }
    for (size_t i = 0; i < np; i++)
        parts[i].len = jitter(c, parts[i].len);
    head(m, 5, 1);
    text(m, "objects");
    head(m, 5, 1);
    text(m, "t");
    head(m, 5, 3 + (a.len != 0));
    text(m, "parts");
    head(m, 5, np);
    uint64_t last_off = 0, last_len = UINT64_MAX;
    for (size_t i = 0; i < np; i++)
        write_part(c, file, m, &parts[i], &last_off, &last_len);
    text(m, "shape");
    head(m, 4, rank);
    for (size_t i = 0; i < rank; i++)
        head(m, 0, shape[i]);
    kv_t(m, "layout", layouts[l]);
    if (a.len) {
        text(m, "attributes");
        put(m, a.p, a.len);
    }
    free(a.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t magic[8] = {0x89, 'Z', 'T', '2', 0x0D, 0x0A, 0x1A, 0x0A};
    cur c = {data, size, 0};
    buf file = {0}, m = {0};
    put(&file, magic, 8);
    uint8_t zeros[4096] = {0};
    put(&file, zeros, 4096 - 8);
    build(&c, &file, &m);
    size_t moff = (file.len + 4095) / 4096 * 4096;
    put(&file, zeros, moff - file.len);
    put(&file, m.p, m.len);
    uint8_t ft[40] = {0};
    for (int i = 0; i < 8; i++) {
        ft[i] = (uint8_t)(moff >> (8 * i));
        ft[8 + i] = (uint8_t)((uint64_t)m.len >> (8 * i));
        ft[16 + i] = (uint8_t)(XXH3_64bits(m.p, m.len) >> (8 * i));
    }
    ft[24] = 2;
    memcpy(ft + 32, magic, 8);
    put(&file, ft, 40);
    v2_open(file.p, file.len);
    free(file.p);
    free(m.p);
    return 0;
}
