/*
 * gen_corpus: writes the data-driven corpus that run_corpus.sh feeds to `zt`.
 *
 * The files are built by an encoder that is independent of libztensor, the
 * way a second implementation of the spec would build them: manifests with
 * libcbor (or byte by byte where the CBOR must be malformed or
 * non-canonical), zstd with libzstd, sha256 with OpenSSL EVP, crc32c
 * (Castagnoli, reflected 0x82F63B78) computed here. Nothing from
 * lib/ is linked.
 *
 * Usage: gen_corpus OUTDIR
 * Writes (after removing any previous accept/ and reject/):
 *   OUTDIR/accept/NAME.zt      must pass `zt verify`
 *   OUTDIR/accept/NAME.expect  OBJECT<TAB>COMPONENT<TAB>NAME.d/K.bin per line:
 *                              the component's decoded bytes are in that file
 *   OUTDIR/accept/NAME.json    optional: JSON-POINTER<TAB>JSON-VALUE per line, what
 *                              `zt info --json` must show there (docs/JSON.md);
 *                              the value "!absent" means the key must not exist
 *   OUTDIR/reject/NAME.zt      must fail `zt verify` with exit 1
 *   OUTDIR/reject/NAME.why     the error code name the output must contain;
 *                              "A|B" means either (only where the spec admits
 *                              several readings, e.g. truncation points)
 *   OUTDIR/reject/NAME.opens   present when the file must open (zt info exits
 *                              0) and only the data checks of verify fail;
 *                              lines OBJECT<TAB>COMPONENT<TAB>EXIT give the
 *                              exit status `zt get` must return.
 */
#include <cbor.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

/* ------------------------------------------------------------ utilities */

static char g_out[4096];
static unsigned g_naccept, g_nreject;

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gen_corpus: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(3);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory (%zu bytes)", n);
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        die("out of memory (%zu bytes)", n);
    return p;
}

/* snprintf for paths: a path that does not fit is fatal, never silently cut
 * (a cut path would write the corpus file somewhere else). */
__attribute__((format(printf, 3, 4))) static void xsnprintf(char *buf, size_t cap, const char *fmt,
                                                            ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap)
        die("path too long (%d bytes, room for %zu): %.200s...", n, cap - 1, buf);
}

typedef struct bb {
    uint8_t *p;
    size_t len, cap;
} bb;

static void bb_reserve(bb *b, size_t n)
{
    if (b->cap - b->len >= n)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n)
        cap *= 2;
    b->p = xrealloc(b->p, cap);
    b->cap = cap;
}

static void bb_put(bb *b, const void *d, size_t n)
{
    bb_reserve(b, n);
    if (n)
        memcpy(b->p + b->len, d, n);
    b->len += n;
}

static void bb_byte(bb *b, uint8_t c) { bb_put(b, &c, 1); }
static void bb_str(bb *b, const char *s) { bb_put(b, s, strlen(s)); }

static void bb_le(bb *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        bb_byte(b, (uint8_t)(v >> (8 * i)));
}

static void bb_pad64(bb *b)
{
    while (b->len % 64)
        bb_byte(b, 0);
}

static void bb_free(bb *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Deterministic PRNG (xorshift64*), so the corpus is the same on every run. */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 0x2545F4914F6CDD1Dull;
}

static uint8_t *rnd_bytes(size_t n)
{
    uint8_t *p = xmalloc(n);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(rnd() >> 56);
    return p;
}

static void write_file(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die("%s: %s", path, strerror(errno));
    const uint8_t *s = p;
    while (n) {
        ssize_t r = write(fd, s, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            die("%s: write: %s", path, strerror(errno));
        s += r;
        n -= (size_t)r;
    }
    if (close(fd) != 0)
        die("%s: close: %s", path, strerror(errno));
}

static void write_text(const char *path, const char *s) { write_file(path, s, strlen(s)); }

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    if (remove(path) != 0 && errno != ENOENT)
        die("remove %s: %s", path, strerror(errno));
    return 0;
}

static void rm_rf(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return;
    if (nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS) != 0)
        die("cannot remove %s", path);
}

static void mkdir_p(const char *path)
{
    char tmp[4096];
    xsnprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
                die("mkdir %s: %s", tmp, strerror(errno));
            *p = '/';
        }
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        die("mkdir %s: %s", tmp, strerror(errno));
}

/* ------------------------------------------------------------- digests */

static uint32_t crc32c(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
}

static void sha256(const uint8_t *p, size_t n, uint8_t out[32])
{
    unsigned len = 0;
    if (EVP_Digest(n ? p : (const uint8_t *)"", n, out, &len, EVP_sha256(), NULL) != 1 ||
        len != 32)
        die("EVP_Digest failed");
}

enum {
    DG_NONE,
    DG_SHA,       /* sha256:<lower hex> */
    DG_CRC,       /* crc32c:0x<lower hex> */
    DG_SHA_UP,    /* SHA256:<UPPER HEX> */
    DG_CRC_UP,    /* CRC32C:0X<UPPER HEX> */
    DG_SHA_MIXED, /* Sha256:<MiXeD hex> */
    DG_CRC_SPEC   /* crc32c:0x<UPPER HEX>, the spec's own example form */
};

static void digest_string(int kind, const uint8_t *p, size_t n, char out[96])
{
    static const char lo[] = "0123456789abcdef", up[] = "0123456789ABCDEF";
    if (kind == DG_SHA || kind == DG_SHA_UP || kind == DG_SHA_MIXED) {
        uint8_t d[32];
        sha256(p, n, d);
        strcpy(out, kind == DG_SHA ? "sha256:" : kind == DG_SHA_UP ? "SHA256:" : "Sha256:");
        for (int i = 0; i < 32; i++) {
            const char *h = kind == DG_SHA ? lo : kind == DG_SHA_UP ? up : (i & 1) ? up : lo;
            out[7 + 2 * i] = h[d[i] >> 4];
            out[8 + 2 * i] = h[d[i] & 15];
        }
        out[71] = 0;
    } else {
        uint32_t c = crc32c(p, n);
        if (kind == DG_CRC)
            snprintf(out, 96, "crc32c:0x%08x", c);
        else if (kind == DG_CRC_UP)
            snprintf(out, 96, "CRC32C:0X%08X", c);
        else
            snprintf(out, 96, "crc32c:0x%08X", c);
    }
}

/* ---------------------------------------------------------------- zstd */

enum {
    ENC_RAW,          /* no "encoding" field */
    ENC_RAW_EXPLICIT, /* "encoding": "raw" */
    ENC_ZSTD,         /* one frame, level 3, content size in the header */
    ENC_ZSTD19,       /* one frame, level 19 */
    ENC_ZSTD_MULTI,   /* four frames, one of them empty, mixed header flags */
    ENC_ZSTD_NOSIZE,  /* one frame without content size */
    ENC_ZSTD_SKIP,    /* skippable frames around a data frame */
    ENC_ZSTD_CHECK    /* one frame with a content checksum */
};

static void zstd_frame(bb *out, const uint8_t *src, size_t n, int level, int content_size,
                       int checksum)
{
    ZSTD_CCtx *c = ZSTD_createCCtx();
    if (!c)
        die("ZSTD_createCCtx");
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, content_size);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum);
    size_t bound = ZSTD_compressBound(n);
    bb_reserve(out, bound);
    size_t r = ZSTD_compress2(c, out->p + out->len, bound, n ? src : (const uint8_t *)"", n);
    if (ZSTD_isError(r))
        die("ZSTD_compress2: %s", ZSTD_getErrorName(r));
    unsigned long long fcs = ZSTD_getFrameContentSize(out->p + out->len, r);
    if (content_size ? fcs != n : fcs != ZSTD_CONTENTSIZE_UNKNOWN)
        die("zstd frame header does not carry the expected content size");
    out->len += r;
    ZSTD_freeCCtx(c);
}

static void zstd_skippable(bb *out, unsigned magic_low, size_t n)
{
    bb_le(out, 0x184D2A50u | (magic_low & 15), 4);
    bb_le(out, n, 4);
    for (size_t i = 0; i < n; i++)
        bb_byte(out, (uint8_t)(0xA0 + i));
}

static void encode_stored(bb *out, int enc, const uint8_t *d, size_t n)
{
    size_t a = n / 3, b = 2 * n / 3;
    switch (enc) {
    case ENC_RAW:
    case ENC_RAW_EXPLICIT:
        bb_put(out, d, n);
        break;
    case ENC_ZSTD:
        zstd_frame(out, d, n, 3, 1, 0);
        break;
    case ENC_ZSTD19:
        zstd_frame(out, d, n, 19, 1, 1);
        break;
    case ENC_ZSTD_MULTI:
        zstd_frame(out, d, a, 1, 1, 0);
        zstd_frame(out, d, 0, 3, 1, 0);
        zstd_frame(out, d + a, b - a, 5, 0, 1);
        zstd_frame(out, d + b, n - b, 3, 1, 1);
        break;
    case ENC_ZSTD_NOSIZE:
        zstd_frame(out, d, n, 3, 0, 0);
        break;
    case ENC_ZSTD_SKIP:
        zstd_skippable(out, 0, 5);
        zstd_frame(out, d, a, 3, 1, 0);
        zstd_skippable(out, 15, 0);
        zstd_frame(out, d + a, n - a, 3, 0, 0);
        zstd_skippable(out, 7, 9);
        break;
    case ENC_ZSTD_CHECK:
        zstd_frame(out, d, n, 3, 1, 1);
        break;
    default:
        die("bad encoding %d", enc);
    }
}

/* ------------------------------------------------------ CBOR (libcbor) */

static cbor_item_t *U(uint64_t v) /* minimal-width unsigned */
{
    if (v <= UINT8_MAX)
        return cbor_build_uint8((uint8_t)v);
    if (v <= UINT16_MAX)
        return cbor_build_uint16((uint16_t)v);
    if (v <= UINT32_MAX)
        return cbor_build_uint32((uint32_t)v);
    return cbor_build_uint64(v);
}

static cbor_item_t *NEG(uint64_t v) /* the integer -1 - v, minimal width */
{
    if (v <= UINT8_MAX)
        return cbor_build_negint8((uint8_t)v);
    if (v <= UINT16_MAX)
        return cbor_build_negint16((uint16_t)v);
    if (v <= UINT32_MAX)
        return cbor_build_negint32((uint32_t)v);
    return cbor_build_negint64(v);
}

static cbor_item_t *T(const char *s) { return cbor_build_string(s); }
static cbor_item_t *TN(const char *s, size_t n) { return cbor_build_stringn(s, n); }

static cbor_item_t *ARR(size_t n, cbor_item_t **items)
{
    cbor_item_t *a = cbor_new_definite_array(n);
    for (size_t i = 0; i < n; i++)
        if (!cbor_array_push(a, cbor_move(items[i])))
            die("cbor_array_push");
    return a;
}

static cbor_item_t *shape_item(const uint64_t *s, size_t n)
{
    cbor_item_t *a = cbor_new_definite_array(n);
    for (size_t i = 0; i < n; i++)
        if (!cbor_array_push(a, cbor_move(U(s[i]))))
            die("cbor_array_push");
    return a;
}

#define KV_MAX 48
typedef struct kvs {
    cbor_item_t *k[KV_MAX], *v[KV_MAX];
    int n;
} kvs;

static void kvi(kvs *m, cbor_item_t *k, cbor_item_t *v)
{
    if (m->n == KV_MAX)
        die("too many map entries");
    m->k[m->n] = k;
    m->v[m->n] = v;
    m->n++;
}

static void kv(kvs *m, const char *k, cbor_item_t *v) { kvi(m, T(k), v); }

enum { KM_PLAIN, KM_SHUFFLE, KM_INDEF, KM_REVERSE };

static cbor_item_t *kv_build(kvs *m, int mode)
{
    cbor_item_t *map = mode == KM_INDEF ? cbor_new_indefinite_map()
                                        : cbor_new_definite_map((size_t)m->n);
    int order[KV_MAX];
    for (int i = 0; i < m->n; i++)
        order[i] = mode == KM_REVERSE ? m->n - 1 - i : i;
    if (mode == KM_SHUFFLE || mode == KM_INDEF)
        for (int i = m->n - 1; i > 0; i--) {
            int j = (int)(rnd() % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    for (int i = 0; i < m->n; i++) {
        struct cbor_pair p = {.key = cbor_move(m->k[order[i]]), .value = cbor_move(m->v[order[i]])};
        if (!cbor_map_add(map, p))
            die("cbor_map_add");
    }
    m->n = 0;
    return map;
}

static void ser(bb *out, cbor_item_t *it) /* serialize and release */
{
    unsigned char *buf = NULL;
    size_t cap = 0;
    size_t n = cbor_serialize_alloc(it, &buf, &cap);
    if (!n)
        die("cbor_serialize_alloc failed");
    bb_put(out, buf, n);
    free(buf);
    cbor_decref(&it);
}

/* Hand-written CBOR heads: minimal, or with a forced argument width. */
static void raw_head(bb *b, unsigned major, uint64_t v)
{
    uint8_t m = (uint8_t)(major << 5);
    if (v < 24)
        bb_byte(b, m | (uint8_t)v);
    else if (v <= UINT8_MAX) {
        bb_byte(b, m | 24);
        bb_byte(b, (uint8_t)v);
    } else if (v <= UINT16_MAX) {
        bb_byte(b, m | 25);
        for (int i = 1; i >= 0; i--)
            bb_byte(b, (uint8_t)(v >> (8 * i)));
    } else if (v <= UINT32_MAX) {
        bb_byte(b, m | 26);
        for (int i = 3; i >= 0; i--)
            bb_byte(b, (uint8_t)(v >> (8 * i)));
    } else {
        bb_byte(b, m | 27);
        for (int i = 7; i >= 0; i--)
            bb_byte(b, (uint8_t)(v >> (8 * i)));
    }
}

static void raw_head_w(bb *b, unsigned major, int width, uint64_t v) /* width 1,2,4,8 */
{
    int ai = width == 1 ? 24 : width == 2 ? 25 : width == 4 ? 26 : 27;
    bb_byte(b, (uint8_t)(major << 5 | (unsigned)ai));
    for (int i = width - 1; i >= 0; i--)
        bb_byte(b, (uint8_t)(v >> (8 * i)));
}

static void raw_text(bb *b, const char *s)
{
    raw_head(b, 3, strlen(s));
    bb_str(b, s);
}

/* ----------------------------------------------------- file construction */

typedef struct expect {
    char *obj;
    size_t objlen;
    char *role;
    uint8_t *data;
    size_t len;
} expect;

typedef struct zf {
    bb file;    /* the file being built: header, blobs */
    bb objs;    /* serialized key/value pairs of the objects map */
    size_t nobj;
    expect *ex;
    size_t nex, excap;
    size_t sample; /* record the components of every Nth object (0: all) */
    int objs_indef;
} zf;

static void zf_init(zf *z)
{
    memset(z, 0, sizeof(*z));
    bb_str(&z->file, "ZTEN1000");
}

static void zf_free(zf *z)
{
    for (size_t i = 0; i < z->nex; i++) {
        free(z->ex[i].obj);
        free(z->ex[i].role);
        free(z->ex[i].data);
    }
    free(z->ex);
    bb_free(&z->file);
    bb_free(&z->objs);
}

/* Appends a blob at the next 64-byte boundary; returns its offset. */
static uint64_t zf_blob(zf *z, const void *p, size_t n)
{
    bb_pad64(&z->file);
    uint64_t off = z->file.len;
    bb_put(&z->file, p, n);
    return off;
}

enum { OM_OFFSET = 1, OM_LENGTH = 2, OM_ULEN = 4 };

typedef struct comp {
    const char *role;
    const char *dtype; /* NULL: no "dtype" field */
    const char *type;
    const uint8_t *data; /* decoded bytes */
    size_t len;
    int enc, digest;
    const char *digest_str;     /* "digest" text as given */
    cbor_item_t *digest_item;   /* "digest" value as given */
    unsigned omit;              /* OM_* */
    int set_off;                /* no blob; "offset" is off */
    uint64_t off;
    int set_len;                /* "length" is clen instead of the stored size */
    uint64_t clen;
    int set_ulen;               /* "uncompressed_length" is ulen */
    uint64_t ulen;
    cbor_item_t *enc_item;      /* "encoding" value as given */
    cbor_item_t *type_item;     /* "type" value as given */
    cbor_item_t *dtype_item;    /* "dtype" value as given */
    cbor_item_t *offset_item;   /* "offset" value as given */
    const uint8_t *stored;      /* stored bytes as given (not encoded from data) */
    size_t stored_len;
    cbor_item_t *role_item;     /* key as given */
    cbor_item_t *value_item;    /* the whole component value as given */
    int keymode, extra, noexpect;
} comp;

typedef struct obj {
    const char *name;
    size_t namelen; /* 0: strlen(name) */
    const char *format; /* NULL: no "format" field */
    const uint64_t *shape;
    int ndim;           /* < 0: no "shape" field */
    cbor_item_t *shape_item;
    cbor_item_t *attrs;
    const char *tensor_dtype; /* 1.0: dtype on the tensor */
    comp *comps;
    int ncomp;
    int keymode, extra;
    cbor_item_t *key_item;        /* object key as given */
    cbor_item_t *value_item;      /* the whole object value as given */
    cbor_item_t *components_item; /* "components" value as given */
    int no_components;
} obj;

static void zf_expect(zf *z, const char *name, size_t namelen, const char *role,
                      const uint8_t *data, size_t len)
{
    if (z->nex == z->excap) {
        z->excap = z->excap ? 2 * z->excap : 16;
        z->ex = xrealloc(z->ex, z->excap * sizeof(*z->ex));
    }
    expect *e = &z->ex[z->nex++];
    e->obj = xmalloc(namelen + 1);
    memcpy(e->obj, name, namelen);
    e->obj[namelen] = 0;
    e->objlen = namelen;
    e->role = strdup(role);
    e->data = xmalloc(len);
    if (len)
        memcpy(e->data, data, len);
    e->len = len;
}

static cbor_item_t *build_comp(zf *z, comp *c, int record, const char *oname, size_t olen)
{
    bb st = {0};
    if (c->stored)
        bb_put(&st, c->stored, c->stored_len);
    else
        encode_stored(&st, c->enc, c->data, c->len);
    uint64_t off = c->set_off ? c->off : zf_blob(z, st.p, st.len);
    int zstd = c->enc >= ENC_ZSTD;
    kvs m = {0};
    if (c->dtype_item)
        kv(&m, "dtype", c->dtype_item);
    else if (c->dtype)
        kv(&m, "dtype", T(c->dtype));
    if (c->type_item)
        kv(&m, "type", c->type_item);
    else if (c->type)
        kv(&m, "type", T(c->type));
    if (!(c->omit & OM_OFFSET))
        kv(&m, "offset", c->offset_item ? c->offset_item : U(off));
    if (!(c->omit & OM_LENGTH))
        kv(&m, "length", U(c->set_len ? c->clen : st.len));
    if (c->enc_item)
        kv(&m, "encoding", c->enc_item);
    else if (zstd)
        kv(&m, "encoding", T("zstd"));
    else if (c->enc == ENC_RAW_EXPLICIT)
        kv(&m, "encoding", T("raw"));
    if (c->set_ulen)
        kv(&m, "uncompressed_length", U(c->ulen));
    else if (zstd && !(c->omit & OM_ULEN))
        kv(&m, "uncompressed_length", U(c->len));
    char dg[96];
    if (c->digest_item)
        kv(&m, "digest", c->digest_item);
    else if (c->digest_str)
        kv(&m, "digest", T(c->digest_str));
    else if (c->digest) {
        digest_string(c->digest, st.p, st.len, dg);
        kv(&m, "digest", T(dg));
    }
    if (c->extra) {
        kvs x = {0};
        kv(&x, "hint", T("prefetch"));
        kv(&x, "level", U(9));
        kv(&m, "x_future_field", kv_build(&x, KM_PLAIN));
        cbor_item_t *strides[2] = {U(16), U(4)};
        kv(&m, "strides", ARR(2, strides));
        kv(&m, "compression_ratio", cbor_build_float8(0.5));
        kvi(&m, U(7), T("a non-text key is an unknown field too"));
    }
    bb_free(&st);
    if (record && !c->noexpect)
        zf_expect(z, oname, olen, c->role, c->data, c->len);
    cbor_item_t *map = kv_build(&m, c->keymode);
    if (c->value_item) { /* the map built above is replaced */
        cbor_decref(&map);
        return c->value_item;
    }
    return map;
}

static void zf_add(zf *z, obj *o)
{
    size_t olen = o->namelen ? o->namelen : strlen(o->name);
    int record = z->sample <= 1 || z->nobj % z->sample == 0;
    kvs m = {0};
    kvs cm = {0};
    for (int i = 0; i < o->ncomp; i++) {
        comp *c = &o->comps[i];
        cbor_item_t *v = build_comp(z, c, record, o->name, olen);
        kvi(&cm, c->role_item ? c->role_item : T(c->role), v);
    }
    if (o->ndim >= 0 || o->shape_item)
        kv(&m, "shape", o->shape_item ? o->shape_item : shape_item(o->shape, (size_t)o->ndim));
    if (o->format)
        kv(&m, "format", T(o->format));
    if (o->tensor_dtype)
        kv(&m, "dtype", T(o->tensor_dtype));
    if (o->attrs)
        kv(&m, "attributes", o->attrs);
    if (o->extra) {
        kv(&m, "x_note", T("unknown object field"));
        kv(&m, "layout_hints", cbor_new_null());
        kvi(&m, NEG(41), cbor_build_bool(true));
    }
    cbor_item_t *comps = kv_build(&cm, o->keymode);
    if (o->components_item) {
        cbor_decref(&comps);
        comps = o->components_item;
    }
    if (o->no_components)
        cbor_decref(&comps);
    else
        kv(&m, "components", comps);
    cbor_item_t *value = kv_build(&m, o->keymode);
    if (o->value_item) {
        cbor_decref(&value);
        value = o->value_item;
    }
    ser(&z->objs, o->key_item ? o->key_item : TN(o->name, olen));
    ser(&z->objs, value);
    z->nobj++;
}

typedef struct root {
    const char *version;       /* NULL: "1.2.0" ("1.0" when v10) */
    int no_version;
    cbor_item_t *version_item;
    cbor_item_t *attrs;
    int no_objects;
    cbor_item_t *objects_item; /* replaces the objects map */
    int extra;
    int indef;                 /* the root map is indefinite-length */
    int objects_first;
    int v10;                   /* 1.0: "tensors", no footer magic */
    int no_footer;             /* 1.2 manifest but the file ends without footer magic */
} root;

static void manifest_bytes(zf *z, const root *r, bb *man)
{
    int n = 0;
    bb body = {0};
    const char *okey = r->v10 ? "tensors" : "objects";
    for (int pass = 0; pass < 2; pass++) {
        int objects_now = r->objects_first ? pass == 0 : pass == 1;
        if (objects_now && !r->no_objects) {
            raw_text(&body, okey);
            if (r->objects_item) {
                ser(&body, r->objects_item);
            } else {
                if (z->objs_indef)
                    bb_byte(&body, 0xBF);
                else
                    raw_head(&body, 5, z->nobj);
                bb_put(&body, z->objs.p, z->objs.len);
                if (z->objs_indef)
                    bb_byte(&body, 0xFF);
            }
            n++;
        }
        if (!objects_now) {
            if (!r->no_version) {
                raw_text(&body, "version");
                ser(&body, r->version_item ? r->version_item
                                           : T(r->version ? r->version : r->v10 ? "1.0" : "1.2.0"));
                n++;
            }
            if (r->attrs) {
                raw_text(&body, "attributes");
                ser(&body, r->attrs);
                n++;
            }
            if (r->extra) {
                raw_text(&body, "generator");
                ser(&body, T("gen_corpus (independent encoder)"));
                raw_text(&body, "x-future");
                kvs x = {0};
                kv(&x, "feature", T("streaming"));
                cbor_item_t *items[3] = {U(1), U(2), U(3)};
                kv(&x, "list", ARR(3, items));
                ser(&body, kv_build(&x, KM_PLAIN));
                ser(&body, U(99));
                ser(&body, T("integer key at the root"));
                n += 3;
            }
        }
    }
    if (r->indef)
        bb_byte(man, 0xBF);
    else
        raw_head(man, 5, (uint64_t)n);
    bb_put(man, body.p, body.len);
    if (r->indef)
        bb_byte(man, 0xFF);
    bb_free(&body);
}

/* Manifest, size and (for 1.2) footer magic. */
static void zf_finish(zf *z, const root *r)
{
    bb man = {0};
    manifest_bytes(z, r, &man);
    bb_put(&z->file, man.p, man.len);
    bb_le(&z->file, man.len, 8);
    if (!r->v10 && !r->no_footer)
        bb_str(&z->file, "ZTEN1000");
    bb_free(&man);
}

static void finish_raw(bb *file, const void *man, size_t n, int footer)
{
    bb_put(file, man, n);
    bb_le(file, n, 8);
    if (footer)
        bb_str(file, "ZTEN1000");
}

static void emit_accept(zf *z, const char *name)
{
    char path[8600], dir[4400];
    xsnprintf(path, sizeof(path), "%s/accept/%s.zt", g_out, name);
    write_file(path, z->file.p, z->file.len);
    xsnprintf(dir, sizeof(dir), "%s/accept/%s.d", g_out, name);
    if (z->nex)
        mkdir_p(dir);
    bb ex = {0};
    for (size_t i = 0; i < z->nex; i++) {
        expect *e = &z->ex[i];
        if (memchr(e->obj, '\t', e->objlen) || memchr(e->obj, '\n', e->objlen))
            die("%s: object name not representable in .expect", name);
        char rel[300];
        xsnprintf(rel, sizeof(rel), "%s.d/%zu.bin", name, i);
        xsnprintf(path, sizeof(path), "%s/accept/%s", g_out, rel);
        write_file(path, e->data, e->len);
        bb_put(&ex, e->obj, e->objlen);
        bb_byte(&ex, '\t');
        bb_str(&ex, e->role);
        bb_byte(&ex, '\t');
        bb_str(&ex, rel);
        bb_byte(&ex, '\n');
    }
    xsnprintf(path, sizeof(path), "%s/accept/%s.expect", g_out, name);
    write_file(path, ex.p, ex.len);
    bb_free(&ex);
    g_naccept++;
}

static void json_expect(const char *name, const char *lines)
{
    char path[4400];
    xsnprintf(path, sizeof(path), "%s/accept/%s.json", g_out, name);
    write_text(path, lines);
}

static void emit_reject_bytes(const char *name, const void *p, size_t n, const char *why,
                              const char *opens)
{
    char path[4200];
    xsnprintf(path, sizeof(path), "%s/reject/%s.zt", g_out, name);
    write_file(path, p, n);
    xsnprintf(path, sizeof(path), "%s/reject/%s.why", g_out, name);
    write_text(path, why);
    if (opens) {
        xsnprintf(path, sizeof(path), "%s/reject/%s.opens", g_out, name);
        write_text(path, opens);
    }
    g_nreject++;
}

static void emit_reject(zf *z, const char *name, const char *why, const char *opens)
{
    emit_reject_bytes(name, z->file.p, z->file.len, why, opens);
}

/* ------------------------------------------------------------- dtypes */

enum { F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL, NDT };
static const char *const k_dt[NDT] = {"f64", "f32", "f16", "bf16", "i64", "i32", "i16",
                                      "i8",  "u64", "u32", "u16", "u8",  "bool"};
static const char *const k_long[NDT] = {"float64", "float32", "float16", "bfloat16", "int64",
                                        "int32",   "int16",   "int8",    "uint64",   "uint32",
                                        "uint16",  "uint8",   "bool"};
static const unsigned k_w[NDT] = {8, 4, 2, 2, 8, 4, 2, 1, 8, 4, 2, 1, 1};

static uint64_t prod(const uint64_t *s, int n)
{
    uint64_t p = 1;
    for (int i = 0; i < n; i++)
        p *= s[i];
    return p;
}

/* Random elements of a dtype: floats are real values, bools are 0/1. */
static uint8_t *rand_elems(int dt, uint64_t count)
{
    size_t n = (size_t)count * k_w[dt];
    uint8_t *p = rnd_bytes(n);
    if (dt == BOOL)
        for (size_t i = 0; i < n; i++)
            p[i] &= 1;
    if (dt == F32)
        for (size_t i = 0; i < count; i++) {
            float f = (float)((double)(int64_t)(rnd() >> 40) / 1048576.0);
            memcpy(p + 4 * i, &f, 4); /* little-endian host */
        }
    if (dt == F64)
        for (size_t i = 0; i < count; i++) {
            double f = (double)(int64_t)rnd() / 1e12;
            memcpy(p + 8 * i, &f, 8);
        }
    return p;
}

#define SHAPE(...) (const uint64_t[]){__VA_ARGS__}, (int)(sizeof((uint64_t[]){__VA_ARGS__}) / 8)
static const uint64_t k_noshape[1];
#define SCALAR k_noshape, 0

/* A dense object of random data; the data is owned by the zf's expectations. */
static void add_dense(zf *z, const char *name, int dt, const uint64_t *shape, int ndim, int enc,
                      int digest)
{
    uint64_t count = prod(shape, ndim);
    uint8_t *d = rand_elems(dt, count);
    comp c = {.role = "data", .dtype = k_dt[dt], .data = d, .len = (size_t)count * k_w[dt],
              .enc = enc, .digest = digest};
    obj o = {.name = name, .format = "dense", .shape = shape, .ndim = ndim, .comps = &c,
             .ncomp = 1};
    zf_add(z, &o);
    free(d);
}

static const root k_root12 = {0};

/* ============================================================ accept */

static void accept_dtypes(void)
{
    zf all;
    zf_init(&all);
    for (int dt = 0; dt < NDT; dt++) {
        zf z;
        zf_init(&z);
        char name[64];
        snprintf(name, sizeof(name), "dtype_%s", k_dt[dt]);
        add_dense(&z, "t", dt, SHAPE(3, 5, 7), ENC_RAW, DG_SHA);
        add_dense(&z, "vector", dt, SHAPE(129), ENC_ZSTD, DG_CRC);
        add_dense(&z, "scalar", dt, SCALAR, ENC_RAW, DG_NONE);
        zf_finish(&z, &k_root12);
        emit_accept(&z, name);
        zf_free(&z);
        snprintf(name, sizeof(name), "w.%s", k_dt[dt]);
        add_dense(&all, name, dt, SHAPE(2, 3, 4, 5), dt % 2 ? ENC_ZSTD : ENC_RAW, dt % 3);
    }
    zf_finish(&all, &k_root12);
    emit_accept(&all, "dtype_all_in_one");
    zf_free(&all);
}

static void accept_shapes(void)
{
    zf z;
    zf_init(&z);
    add_dense(&z, "scalar_f32", F32, SCALAR, ENC_RAW, DG_SHA);
    add_dense(&z, "scalar_i64_zstd", I64, SCALAR, ENC_ZSTD, DG_CRC);
    add_dense(&z, "scalar_bool", BOOL, SCALAR, ENC_RAW, DG_NONE);
    add_dense(&z, "ones", U16, SHAPE(1, 1, 1, 1, 1, 1, 1, 1), ENC_RAW, DG_NONE);
    zf_finish(&z, &k_root12);
    emit_accept(&z, "scalar_shapes");
    zf_free(&z);

    zf_init(&z);
    add_dense(&z, "empty_0x4", F32, SHAPE(0, 4), ENC_RAW, DG_NONE);
    add_dense(&z, "empty_4x0x3", I16, SHAPE(4, 0, 3), ENC_RAW, DG_SHA);
    add_dense(&z, "empty_0", U8, SHAPE(0), ENC_RAW, DG_CRC);
    add_dense(&z, "empty_zstd", F64, SHAPE(0, 8), ENC_ZSTD, DG_SHA);
    add_dense(&z, "empty_zstd_nosize", F64, SHAPE(8, 0), ENC_ZSTD_NOSIZE, DG_NONE);
    add_dense(&z, "after_empties", F32, SHAPE(3), ENC_RAW, DG_SHA);
    /* zero bytes at offset 0: aligned, and no byte of it lies in the header */
    comp c0 = {.role = "data", .dtype = "f32", .data = (const uint8_t *)"", .len = 0,
               .set_off = 1, .off = 0};
    obj o0 = {.name = "empty_at_offset_0", .format = "dense", .shape = SHAPE(0), .comps = &c0,
              .ncomp = 1};
    zf_add(&z, &o0);
    zf_finish(&z, &k_root12);
    emit_accept(&z, "zero_sized");
    zf_free(&z);

    /* 64 dimensions: the most the library supports (ZT_MAX_NDIM) */
    uint64_t dims[64];
    for (int i = 0; i < 64; i++)
        dims[i] = i % 21 == 0 ? 2 : 1;
    zf_init(&z);
    add_dense(&z, "ndim64", U8, dims, 64, ENC_RAW, DG_NONE);
    zf_finish(&z, &k_root12);
    emit_accept(&z, "shape_64_dims");
    zf_free(&z);
}

static void accept_logical(void)
{
    static const char *const f8[] = {"f8_e4m3fn", "f8_e5m2", "f8_e4m3fnuz", "f8_e5m2fnuz"};
    zf all;
    zf_init(&all);
    for (int i = 0; i < 4; i++) {
        uint8_t *d = rnd_bytes(64 * 32);
        comp c = {.role = "data", .dtype = "u8", .type = f8[i], .data = d, .len = 64 * 32,
                  .digest = DG_SHA};
        obj o = {.name = f8[i], .format = "dense", .shape = SHAPE(64, 32), .comps = &c,
                 .ncomp = 1};
        zf z;
        zf_init(&z);
        zf_add(&z, &o);
        zf_finish(&z, &k_root12);
        char name[64];
        snprintf(name, sizeof(name), "type_%s", f8[i]);
        emit_accept(&z, name);
        zf_free(&z);
        c.enc = i % 2 ? ENC_ZSTD : ENC_RAW;
        zf_add(&all, &o);
        free(d);
    }
    /* complex64: f32 pairs, ratio 2 */
    uint8_t *d = rand_elems(F32, 3 * 4 * 2);
    comp c64 = {.role = "data", .dtype = "f32", .type = "complex64", .data = d, .len = 3 * 4 * 8,
                .digest = DG_CRC};
    obj o64 = {.name = "c64", .format = "dense", .shape = SHAPE(3, 4), .comps = &c64, .ncomp = 1};
    zf z;
    zf_init(&z);
    zf_add(&z, &o64);
    zf_finish(&z, &k_root12);
    emit_accept(&z, "type_complex64");
    zf_free(&z);
    c64.enc = ENC_ZSTD;
    zf_add(&all, &o64);
    free(d);
    d = rand_elems(F64, 5 * 2);
    comp c128 = {.role = "data", .dtype = "f64", .type = "complex128", .data = d, .len = 5 * 16,
                 .digest = DG_SHA};
    obj o128 = {.name = "c128", .format = "dense", .shape = SHAPE(5), .comps = &c128, .ncomp = 1};
    zf_init(&z);
    zf_add(&z, &o128);
    zf_finish(&z, &k_root12);
    emit_accept(&z, "type_complex128");
    zf_free(&z);
    zf_add(&all, &o128);
    free(d);
    /* complex scalar */
    d = rand_elems(F64, 2);
    comp cs = {.role = "data", .dtype = "f64", .type = "complex128", .data = d, .len = 16};
    obj os = {.name = "c128_scalar", .format = "dense", .shape = SCALAR, .comps = &cs,
              .ncomp = 1};
    zf_add(&all, &os);
    free(d);
    zf_finish(&all, &k_root12);
    emit_accept(&all, "type_all_logical");
    zf_free(&all);

    /* An unknown logical type is structure only: the raw dtype elements
     * (ratio 1, the spec's "fall back to loading raw dtype elements"). */
    zf_init(&z);
    d = rnd_bytes(16);
    comp cu = {.role = "data", .dtype = "u8", .type = "f4_e2m1", .data = d, .len = 16,
               .digest = DG_SHA};
    obj ou = {.name = "fp4", .format = "dense", .shape = SHAPE(16), .comps = &cu, .ncomp = 1};
    zf_add(&z, &ou);
    uint8_t *d2 = rand_elems(U16, 10);
    comp cu2 = {.role = "data", .dtype = "u16", .type = "posit16_es1", .data = d2, .len = 20,
                .enc = ENC_ZSTD};
    obj ou2 = {.name = "posit", .format = "dense", .shape = SHAPE(2, 5), .comps = &cu2,
               .ncomp = 1};
    zf_add(&z, &ou2);
    /* packed 4-bit inside an unknown format: no size rule applies */
    comp cu3 = {.role = "packed", .dtype = "u8", .type = "f4_e2m1", .data = d, .len = 8};
    obj ou3 = {.name = "fp4_packed", .format = "packed_nibbles_v2", .shape = SHAPE(16),
               .comps = &cu3, .ncomp = 1};
    zf_add(&z, &ou3);
    zf_finish(&z, &k_root12);
    emit_accept(&z, "type_unknown_logical");
    zf_free(&z);
    free(d);
    free(d2);
}

static void accept_zstd(void)
{
    static const struct {
        const char *name;
        int enc;
    } k[] = {{"zstd_basic", ENC_ZSTD},        {"zstd_level19_checksum", ENC_ZSTD19},
             {"zstd_multiframe", ENC_ZSTD_MULTI}, {"zstd_no_content_size", ENC_ZSTD_NOSIZE},
             {"zstd_skippable_frames", ENC_ZSTD_SKIP}, {"zstd_frame_checksum", ENC_ZSTD_CHECK}};
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
        zf z;
        zf_init(&z);
        /* compressible (repetitive) and incompressible data, small and >128 KiB blocks */
        uint64_t n = 300 * 1024;
        uint8_t *d = xmalloc(n);
        for (uint64_t j = 0; j < n; j++)
            d[j] = (uint8_t)((j * 7) % 251 < 100 ? j % 13 : 0);
        comp c = {.role = "data", .dtype = "u8", .data = d, .len = n, .enc = k[i].enc,
                  .digest = (int)(i % 3)};
        obj o = {.name = "compressible", .format = "dense", .shape = SHAPE(300, 1024),
                 .comps = &c, .ncomp = 1};
        zf_add(&z, &o);
        add_dense(&z, "random_f32", F32, SHAPE(1000), k[i].enc, DG_CRC);
        add_dense(&z, "tiny_i8", I8, SHAPE(3), k[i].enc, DG_SHA);
        add_dense(&z, "scalar", F16, SCALAR, k[i].enc, DG_NONE);
        zf_finish(&z, &k_root12);
        emit_accept(&z, k[i].name);
        zf_free(&z);
        free(d);
    }
}

static void accept_digests(void)
{
    static const struct {
        const char *name;
        int dg;
    } k[] = {{"digest_sha256", DG_SHA},         {"digest_crc32c", DG_CRC},
             {"digest_sha256_upper", DG_SHA_UP}, {"digest_crc32c_upper", DG_CRC_UP},
             {"digest_sha256_mixed", DG_SHA_MIXED}, {"digest_crc32c_spec_form", DG_CRC_SPEC},
             {"digest_none", DG_NONE}};
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
        zf z;
        zf_init(&z);
        add_dense(&z, "raw", F32, SHAPE(17, 3), ENC_RAW, k[i].dg);
        add_dense(&z, "zstd", I32, SHAPE(500), ENC_ZSTD, k[i].dg); /* digest of stored bytes */
        add_dense(&z, "empty", U8, SHAPE(0), ENC_RAW, k[i].dg);
        add_dense(&z, "one_byte", U8, SHAPE(1), ENC_RAW, k[i].dg);
        zf_finish(&z, &k_root12);
        emit_accept(&z, k[i].name);
        zf_free(&z);
    }
}

/* values (f32) + indices (u64 columns) + indptr (u64, rows+1) */
static void csr_parts(uint64_t rows, uint64_t cols, uint64_t nnz, uint8_t **vals,
                      uint8_t **indices, uint8_t **indptr)
{
    *vals = rand_elems(F32, nnz);
    uint64_t *ix = xmalloc(nnz * 8), *ip = xmalloc((rows + 1) * 8);
    ip[0] = 0;
    for (uint64_t r = 0; r < rows; r++)
        ip[r + 1] = nnz * (r + 1) / rows;
    for (uint64_t i = 0; i < nnz; i++)
        ix[i] = (i * 7 + 3) % cols;
    *indices = (uint8_t *)ix;
    *indptr = (uint8_t *)ip;
}

static void accept_sparse(void)
{
    zf z;
    zf_init(&z);
    uint8_t *v, *ix, *ip;
    csr_parts(4, 6, 9, &v, &ix, &ip);
    comp csr[3] = {
        {.role = "values", .dtype = "f32", .data = v, .len = 9 * 4, .digest = DG_SHA},
        {.role = "indices", .dtype = "u64", .data = ix, .len = 9 * 8, .digest = DG_CRC},
        {.role = "indptr", .dtype = "u64", .data = ip, .len = 5 * 8},
    };
    obj o = {.name = "adjacency", .format = "sparse_csr", .shape = SHAPE(4, 6), .comps = csr,
             .ncomp = 3};
    zf_add(&z, &o);
    /* components listed in another order, zstd on the index arrays */
    comp csr2[3] = {
        {.role = "indptr", .dtype = "u64", .data = ip, .len = 5 * 8, .enc = ENC_ZSTD},
        {.role = "values", .dtype = "f32", .data = v, .len = 9 * 4},
        {.role = "indices", .dtype = "u64", .data = ix, .len = 9 * 8, .enc = ENC_ZSTD_NOSIZE,
         .digest = DG_SHA},
    };
    obj o2 = {.name = "adjacency_zstd", .format = "sparse_csr", .shape = SHAPE(4, 6),
              .comps = csr2, .ncomp = 3};
    zf_add(&z, &o2);
    free(v);
    free(ix);
    free(ip);
    /* an empty CSR matrix: nnz 0, indptr all zero */
    uint8_t ip0[3 * 8] = {0};
    comp csr3[3] = {
        {.role = "values", .dtype = "f64", .data = (const uint8_t *)"", .len = 0},
        {.role = "indices", .dtype = "u64", .data = (const uint8_t *)"", .len = 0},
        {.role = "indptr", .dtype = "u64", .data = ip0, .len = 3 * 8},
    };
    obj o3 = {.name = "empty_csr", .format = "sparse_csr", .shape = SHAPE(2, 1000),
              .comps = csr3, .ncomp = 3};
    zf_add(&z, &o3);
    /* sparse_coo: 3-D, nnz 6, coords SoA of 3*6 u64 */
    uint8_t *cv = rand_elems(I32, 6);
    uint64_t coords[18];
    for (int d = 0; d < 3; d++)
        for (int i = 0; i < 6; i++)
            coords[d * 6 + i] = (uint64_t)(i + d) % (uint64_t)(3 + d);
    comp coo[2] = {
        {.role = "values", .dtype = "i32", .data = cv, .len = 24, .digest = DG_SHA},
        {.role = "coords", .dtype = "u64", .data = (const uint8_t *)coords, .len = 18 * 8,
         .enc = ENC_ZSTD, .digest = DG_CRC},
    };
    obj o4 = {.name = "coo3d", .format = "sparse_coo", .shape = SHAPE(3, 4, 5), .comps = coo,
              .ncomp = 2};
    zf_add(&z, &o4);
    /* sparse_coo of complex64 values */
    uint8_t *cx = rand_elems(F32, 4);
    uint64_t coords2[4] = {0, 1, 1, 0};
    comp coo2[2] = {
        {.role = "coords", .dtype = "u64", .data = (const uint8_t *)coords2, .len = 32},
        {.role = "values", .dtype = "f32", .type = "complex64", .data = cx, .len = 16},
    };
    obj o5 = {.name = "coo_complex", .format = "sparse_coo", .shape = SHAPE(2, 2), .comps = coo2,
              .ncomp = 2};
    zf_add(&z, &o5);
    zf_finish(&z, &k_root12);
    emit_accept(&z, "sparse");
    zf_free(&z);
    free(cv);
    free(cx);
}

static cbor_item_t *qg_attrs(void)
{
    kvs a = {0};
    kv(&a, "bits", U(4));
    kv(&a, "group_size", U(32));
    kv(&a, "packing", T("8_per_i32"));
    return kv_build(&a, KM_PLAIN);
}

static void accept_quantized(void)
{
    zf z;
    zf_init(&z);
    /* shape [64, 128], 4 bits, groups of 32: 1024 i32 words, 256 scales, 256 zeros */
    uint8_t *pw = rand_elems(I32, 1024), *sc = rand_elems(F16, 256), *ze = rand_elems(F16, 256);
    comp c[3] = {
        {.role = "packed_weight", .dtype = "i32", .data = pw, .len = 4096, .digest = DG_SHA},
        {.role = "scales", .dtype = "f16", .data = sc, .len = 512, .digest = DG_CRC},
        {.role = "zeros", .dtype = "f16", .data = ze, .len = 512, .enc = ENC_ZSTD},
    };
    obj o = {.name = "model.layers.0.mlp.down_proj", .format = "quantized_group",
             .shape = SHAPE(64, 128), .attrs = qg_attrs(), .comps = c, .ncomp = 3};
    zf_add(&z, &o);
    comp c2[4] = {
        {.role = "zeros", .dtype = "f16", .data = ze, .len = 512},
        {.role = "scales", .dtype = "f16", .data = sc, .len = 512},
        {.role = "packed_weight", .dtype = "i32", .data = pw, .len = 4096, .enc = ENC_ZSTD},
        {.role = "g_idx", .dtype = "i32", .data = pw, .len = 128 * 4}, /* extra role */
    };
    obj o2 = {.name = "gptq_with_g_idx", .format = "quantized_group", .shape = SHAPE(64, 128),
              .attrs = qg_attrs(), .comps = c2, .ncomp = 4};
    zf_add(&z, &o2);
    zf_finish(&z, &k_root12);
    emit_accept(&z, "quantized_group");
    zf_free(&z);
    free(pw);
    free(sc);
    free(ze);
}

static void accept_unknown(void)
{
    zf z;
    zf_init(&z);
    uint8_t *v = rand_elems(F32, 10), *rs = rand_elems(I64, 4), *w = rnd_bytes(77);
    comp c[3] = {
        {.role = "values", .dtype = "f32", .data = v, .len = 40, .digest = DG_SHA},
        {.role = "row_splits", .dtype = "i64", .data = rs, .len = 32, .enc = ENC_ZSTD},
        {.role = "weird blob", .dtype = "u8", .type = "opaque_v3", .data = w, .len = 77},
    };
    kvs a = {0};
    kv(&a, "ragged_rank", U(1));
    obj o = {.name = "ragged", .format = "ragged_v9", .shape = SHAPE(3, 0), .attrs = kv_build(&a, KM_PLAIN),
             .comps = c, .ncomp = 3};
    zf_add(&z, &o);
    /* unknown format without a shape, with no components at all */
    obj o2 = {.name = "graph_placeholder", .format = "graph_edges_v1", .ndim = -1};
    zf_add(&z, &o2);
    /* an unknown format that happens to reuse a role name, with any size */
    comp c3 = {.role = "data", .dtype = "u8", .data = w, .len = 5};
    obj o3 = {.name = "lora_adapter", .format = "lora_v2", .shape = SHAPE(1000, 1000),
              .comps = &c3, .ncomp = 1};
    zf_add(&z, &o3);
    obj o4 = {.name = "huge_shape", .format = "lazy_v1",
              .shape = SHAPE(UINT64_C(1) << 60, UINT64_C(1) << 53, 3), .ncomp = 0};
    zf_add(&z, &o4);
    zf_finish(&z, &k_root12);
    emit_accept(&z, "unknown_format");
    json_expect("unknown_format",
                "/objects/huge_shape/shape\t[\"1152921504606846976\", 9007199254740992, 3]\n"
                "/objects/huge_shape/format\t\"lazy_v1\"\n"
                "/objects/huge_shape/components\t{}\n"
                "/objects/graph_placeholder/shape\t!absent\n"
                "/objects/ragged/format\t\"ragged_v9\"\n"
                "/objects/ragged/components/weird blob/type\t\"opaque_v3\"\n");
    zf_free(&z);
    free(v);
    free(rs);
    free(w);

    /* unknown fields at every level, null optional fields, explicit defaults */
    zf_init(&z);
    uint8_t *d = rand_elems(F32, 12);
    comp cx = {.role = "data", .dtype = "f32", .data = d, .len = 48, .enc = ENC_RAW_EXPLICIT,
               .digest = DG_SHA, .extra = 1, .type_item = cbor_new_null()};
    obj ox = {.name = "with_extras", .format = "dense", .shape = SHAPE(3, 4), .comps = &cx,
              .ncomp = 1, .extra = 1};
    zf_add(&z, &ox);
    comp cy = {.role = "data", .dtype = "f32", .data = d, .len = 48, .enc = ENC_ZSTD,
               .extra = 1, .digest_item = cbor_new_null()};
    obj oy = {.name = "zstd_with_extras", .format = "dense", .shape = SHAPE(12), .comps = &cy,
              .ncomp = 1, .extra = 1};
    zf_add(&z, &oy);
    root r = {.extra = 1};
    zf_finish(&z, &r);
    emit_accept(&z, "unknown_fields");
    json_expect("unknown_fields", "/generator\t!absent\n"
                                  "/x-future\t!absent\n"
                                  "/99\t!absent\n"
                                  "/objects/with_extras/x_note\t!absent\n"
                                  "/objects/with_extras/layout_hints\t!absent\n"
                                  "/objects/with_extras/components/data/x_future_field\t!absent\n"
                                  "/objects/with_extras/components/data/strides\t!absent\n"
                                  "/objects/with_extras/components/data/type\t!absent\n"
                                  "/objects/with_extras/components/data/encoding\t\"raw\"\n"
                                  "/objects/zstd_with_extras/components/data/digest\t!absent\n"
                                  "/objects/zstd_with_extras/components/data/encoding\t\"zstd\"\n"
                                  "/objects/zstd_with_extras/components/data/uncompressed_length\t48\n");
    zf_free(&z);
    free(d);
}

static void accept_versions(void)
{
    static const struct {
        const char *file, *version;
    } k[] = {{"version_minor_newer", "1.7.0"},
             {"version_minor_2digit", "1.12.3"},
             {"version_1_2_short", "1.2"},
             {"version_1_1_0", "1.1.0"},
             {"version_1_2_9", "1.2.9"}};
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
        zf z;
        zf_init(&z);
        add_dense(&z, "w", F32, SHAPE(8), ENC_RAW, DG_SHA);
        root r = {.version = k[i].version};
        zf_finish(&z, &r);
        emit_accept(&z, k[i].file);
        char js[128];
        snprintf(js, sizeof(js), "/version\t\"%s\"\n", k[i].version);
        json_expect(k[i].file, js);
        zf_free(&z);
    }
}

static cbor_item_t *rich_attrs(int depth)
{
    kvs a = {0};
    kv(&a, "framework", T("PyTorch"));
    kv(&a, "license", T("Apache-2.0"));
    kv(&a, "created_at", cbor_build_tag(0, cbor_move(T("2024-01-15T10:30:00Z"))));
    kv(&a, "epoch", cbor_build_tag(1, cbor_move(U(1705314600))));
    kv(&a, "homepage", cbor_build_tag(32, cbor_move(T("https://example.org/m?x=1#y"))));
    uint8_t big[] = {0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    kv(&a, "bignum_2^64", cbor_build_tag(2, cbor_move(cbor_build_bytestring(big, sizeof(big)))));
    kv(&a, "pi_half", cbor_build_float2(1.5f));
    kv(&a, "pi_single", cbor_build_float4(3.14159274f));
    kv(&a, "pi_double", cbor_build_float8(3.141592653589793));
    kv(&a, "tiny", cbor_build_float8(5e-324));
    kv(&a, "huge", cbor_build_float8(1.7976931348623157e308));
    kv(&a, "nan", cbor_build_float4(__builtin_nanf("")));
    kv(&a, "inf", cbor_build_float8(__builtin_inf()));
    kv(&a, "neg_inf", cbor_build_float2(-__builtin_inff()));
    kv(&a, "neg_zero", cbor_build_float8(-0.0));
    kv(&a, "minus_one", NEG(0));
    kv(&a, "minus_300", NEG(299));
    kv(&a, "int64_min", NEG(UINT64_C(0x7FFFFFFFFFFFFFFF)));
    kv(&a, "neg_2^64", NEG(UINT64_MAX));
    kv(&a, "two_53", U(UINT64_C(1) << 53));
    kv(&a, "two_53_plus_1", U((UINT64_C(1) << 53) + 1));
    kv(&a, "u64_max", U(UINT64_MAX));
    kv(&a, "bytes", cbor_build_bytestring((const uint8_t *)"\x00\xff\x10zt", 5));
    kv(&a, "empty_bytes", cbor_build_bytestring((const uint8_t *)"", 0));
    kv(&a, "true", cbor_build_bool(true));
    kv(&a, "false", cbor_build_bool(false));
    kv(&a, "null", cbor_new_null());
    kv(&a, "undefined", cbor_new_undef());
    kv(&a, "empty_map", cbor_new_definite_map(0));
    kv(&a, "empty_array", cbor_new_definite_array(0));
    kv(&a, "unicode \xE2\x9C\x93", T("\xE6\x97\xA5\xE6\x9C\xAC \"quoted\" back\\slash \x01 tab\t"));
    cbor_item_t *mixed[6] = {U(1), NEG(1), T("two"), cbor_build_float8(3.5), cbor_new_null(),
                             cbor_new_definite_array(0)};
    kv(&a, "mixed_array", ARR(6, mixed));
    if (depth > 0) {
        kvs n = {0};
        kv(&n, "inner", rich_attrs(depth - 1));
        cbor_item_t *lst[2] = {U(1), rich_attrs(depth - 1)};
        kv(&n, "list", ARR(2, lst));
        kvi(&n, U(42), T("integer key"));
        kvi(&n, cbor_build_bytestring((const uint8_t *)"k", 1), T("byte-string key"));
        kvi(&n, NEG(9), cbor_build_bool(false));
        kv(&a, "nested", kv_build(&n, KM_PLAIN));
    }
    return kv_build(&a, KM_PLAIN);
}

static void accept_attributes(void)
{
    zf z;
    zf_init(&z);
    uint8_t *d = rand_elems(F16, 6);
    comp c = {.role = "data", .dtype = "f16", .data = d, .len = 12};
    obj o = {.name = "w", .format = "dense", .shape = SHAPE(2, 3), .attrs = rich_attrs(1),
             .comps = &c, .ncomp = 1};
    zf_add(&z, &o);
    obj o2 = {.name = "empty_attrs", .format = "dense", .shape = SHAPE(2, 3),
              .attrs = cbor_new_definite_map(0), .comps = &c, .ncomp = 1};
    c.role = "data";
    zf_add(&z, &o2);
    root r = {.attrs = rich_attrs(2)};
    zf_finish(&z, &r);
    emit_accept(&z, "attributes_rich");
    json_expect("attributes_rich",
                "/version\t\"1.2.0\"\n"
                "/attributes/framework\t\"PyTorch\"\n"
                "/attributes/u64_max\t\"18446744073709551615\"\n"
                "/attributes/two_53\t9007199254740992\n"
                "/attributes/two_53_plus_1\t\"9007199254740993\"\n"
                "/attributes/minus_one\t-1\n"
                "/attributes/minus_300\t-300\n"
                "/attributes/int64_min\t\"-9223372036854775808\"\n"
                "/attributes/neg_2^64\t\"-18446744073709551616\"\n"
                "/attributes/bytes\t{\"$bytes\": \"AP8QenQ=\"}\n"
                "/attributes/empty_bytes\t{\"$bytes\": \"\"}\n"
                "/attributes/epoch\t{\"$tag\": 1, \"$value\": 1705314600}\n"
                "/attributes/bignum_2^64\t{\"$tag\": 2, \"$value\": {\"$bytes\": \"AQAAAAAAAAAA\"}}\n"
                "/attributes/nan\t\"NaN\"\n"
                "/attributes/inf\t\"Infinity\"\n"
                "/attributes/neg_inf\t\"-Infinity\"\n"
                "/attributes/pi_half\t1.5\n"
                "/attributes/pi_double\t3.141592653589793\n"
                "/attributes/huge\t1.7976931348623157e308\n"
                "/attributes/undefined\tnull\n"
                "/attributes/null\tnull\n"
                "/attributes/true\ttrue\n"
                "/attributes/empty_map\t{}\n"
                "/attributes/mixed_array\t[1, -2, \"two\", 3.5, null, []]\n"
                "/attributes/unicode \xE2\x9C\x93\t\"\xE6\x97\xA5\xE6\x9C\xAC \\\"quoted\\\" back\\\\slash \\u0001 tab\\t\"\n"
                "/attributes/nested/42\t\"integer key\"\n"
                "/attributes/nested/-10\tfalse\n"
                "/attributes/nested/{\"$bytes\":\"aw==\"}\t\"byte-string key\"\n"
                "/attributes/nested/inner/nested/inner/u64_max\t\"18446744073709551615\"\n"
                "/objects/w/attributes/nested/inner/minus_one\t-1\n"
                "/objects/empty_attrs/attributes\t{}\n"
                "/objects/w/shape\t[2, 3]\n");
    zf_free(&z);
    free(d);

    /* CBOR nesting of exactly 64 containers: root, attributes, 62 arrays */
    zf_init(&z);
    add_dense(&z, "w", U8, SHAPE(4), ENC_RAW, DG_NONE);
    cbor_item_t *inner = U(0);
    for (int i = 0; i < 62; i++) {
        cbor_item_t *a = cbor_new_definite_array(1);
        if (!cbor_array_push(a, cbor_move(inner)))
            die("cbor_array_push");
        inner = a;
    }
    kvs m = {0};
    kv(&m, "deep", inner);
    root r2 = {.attrs = kv_build(&m, KM_PLAIN)};
    zf_finish(&z, &r2);
    emit_accept(&z, "cbor_depth_64");
    zf_free(&z);
}

static void accept_names(void)
{
    static const char *const names[] = {
        "layer1.weight",
        "a/b/c",
        "/leading/slash",
        "trailing/",
        "what?x=1&y=2",
        "#fragment",
        "100%",
        "%2F%00%zz",
        "with space",
        " leading and trailing ",
        "..",
        ".",
        "../../etc/passwd",
        "",
        "\xF0\x9F\xA6\x80 crab",
        "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E",
        "\xCE\xA9mega",
        "quote\"and\\backslash",
        "ctrl\x01\x1f",
        "{\"json\": [1]}",
        "<html>&amp;",
        "semi;colon,comma",
        "dense",
        "objects",
        "Layer1.Weight",
        "\xEF\xBB\xBF\x62om",
        "\xF4\x8F\xBF\xBF max code point",
    };
    zf z;
    zf_init(&z);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        add_dense(&z, names[i], (int)(i % NDT), SHAPE(2, 2), i % 2 ? ENC_ZSTD : ENC_RAW,
                  (int)(i % 3));
    char *longname = xmalloc(4001);
    for (int i = 0; i < 4000; i++)
        longname[i] = (char)('a' + i % 26);
    memcpy(longname + 1000, "\xE2\x82\xAC", 3); /* a multi-byte char in the middle */
    longname[4000] = 0;
    add_dense(&z, longname, F32, SHAPE(3), ENC_RAW, DG_SHA);
    longname[3999] = 'Z'; /* differs only in the last byte */
    add_dense(&z, longname, F32, SHAPE(3), ENC_ZSTD, DG_CRC);
    zf_finish(&z, &k_root12);
    emit_accept(&z, "names_awkward");
    zf_free(&z);
    free(longname);
}

/* U+0000 is valid in a CBOR text string: names differing after a NUL are
 * distinct objects, and "a" is not "a\0b". */
static void accept_nul_names(void)
{
    zf z;
    zf_init(&z);
    add_dense(&z, "a", U8, SHAPE(3), ENC_RAW, DG_SHA);
    uint8_t *d = rand_elems(U16, 5);
    comp c = {.role = "data", .dtype = "u16", .data = d, .len = 10};
    obj o = {.name = "a\0b", .namelen = 3, .format = "dense", .shape = SHAPE(5), .comps = &c,
             .ncomp = 1};
    zf_add(&z, &o);
    comp c2 = {.role = "data", .dtype = "u16", .data = d, .len = 2};
    obj o2 = {.name = "a\0c", .namelen = 3, .format = "dense", .shape = SHAPE(1), .comps = &c2,
              .ncomp = 1};
    zf_add(&z, &o2);
    zf_finish(&z, &k_root12);
    /* only "a" is listed for zt get: argv cannot carry a NUL */
    for (size_t i = 1; i < z.nex; i++) {
        free(z.ex[i].obj);
        free(z.ex[i].role);
        free(z.ex[i].data);
    }
    z.nex = 1;
    emit_accept(&z, "names_with_nul");
    static const char js[] = "/objects/a\0b/shape\t[5]\n/objects/a\0c/shape\t[1]\n"
                             "/objects/a/shape\t[3]\n";
    char path[4400];
    xsnprintf(path, sizeof(path), "%s/accept/names_with_nul.json", g_out);
    write_file(path, js, sizeof(js) - 1);
    zf_free(&z);
    free(d);
}

static void accept_many(size_t n, const char *name, size_t sample)
{
    zf z;
    zf_init(&z);
    z.sample = sample;
    for (size_t i = 0; i < n; i++) {
        char nm[64];
        snprintf(nm, sizeof(nm), "model.layers.%zu.%s", i / 4,
                 (const char *[]){"q_proj.weight", "k_proj.weight", "v_proj.bias", "norm"}[i % 4]);
        int dt = (int)(i % NDT);
        if (n > 10000)
            add_dense(&z, nm, dt, SHAPE(1 + i % 3), ENC_RAW, DG_NONE);
        else
            add_dense(&z, nm, dt, SHAPE(2, 1 + i % 5), i % 7 == 0 ? ENC_ZSTD : ENC_RAW,
                      (int)(i % 3));
    }
    /* the last object is always checked */
    z.sample = 0;
    add_dense(&z, "last", F32, SHAPE(2), ENC_RAW, DG_SHA);
    root r = {.attrs = NULL};
    zf_finish(&z, &r);
    emit_accept(&z, name);
    zf_free(&z);
}

static void accept_minimal(void)
{
    zf z;
    zf_init(&z); /* no objects: the manifest directly follows the header */
    zf_finish(&z, &k_root12);
    emit_accept(&z, "empty_objects");
    zf_free(&z);

    zf_init(&z);
    add_dense(&z, "only", U8, SHAPE(1), ENC_RAW, DG_NONE);
    root r = {.objects_first = 1};
    zf_finish(&z, &r);
    emit_accept(&z, "objects_key_first");
    zf_free(&z);

    /* a gap wider than 63 bytes between blobs (the spec does not forbid it) */
    zf_init(&z);
    add_dense(&z, "a", U8, SHAPE(10), ENC_RAW, DG_NONE);
    bb_pad64(&z.file);
    for (int i = 0; i < 192; i++)
        bb_byte(&z.file, 0);
    add_dense(&z, "b", U8, SHAPE(10), ENC_RAW, DG_NONE);
    zf_finish(&z, &k_root12);
    emit_accept(&z, "wide_gap");
    zf_free(&z);
}

/* Non-canonical but valid CBOR: libcbor's indefinite containers and strings,
 * non-minimal integer heads, shuffled and reversed key orders. */
static void accept_noncanonical_libcbor(void)
{
    zf z;
    zf_init(&z);
    z.objs_indef = 1;
    uint8_t *d = rand_elems(F32, 6);
    comp c = {.role = "data", .dtype = "f32", .data = d, .len = 24, .keymode = KM_INDEF,
              .digest = DG_SHA};
    obj o = {.name = "indef", .format = "dense", .shape = SHAPE(2, 3), .comps = &c, .ncomp = 1,
             .keymode = KM_INDEF};
    zf_add(&z, &o);
    comp c2 = {.role = "data", .dtype = "f32", .data = d, .len = 24, .keymode = KM_REVERSE,
               .enc = ENC_ZSTD, .digest = DG_CRC};
    obj o2 = {.name = "reversed", .format = "dense", .shape = SHAPE(6), .comps = &c2, .ncomp = 1,
              .keymode = KM_REVERSE, .extra = 1};
    zf_add(&z, &o2);
    comp c3 = {.role = "data", .dtype = "f32", .data = d, .len = 24, .keymode = KM_SHUFFLE};
    obj o3 = {.name = "shuffled", .format = "dense", .shape = SHAPE(3, 2), .comps = &c3,
              .ncomp = 1, .keymode = KM_SHUFFLE, .extra = 1};
    zf_add(&z, &o3);
    /* non-minimal integer heads: every number as an 8-byte uint64 */
    uint64_t off = zf_blob(&z, d, 24);
    kvs m = {0};
    kv(&m, "dtype", T("f32"));
    kv(&m, "offset", cbor_build_uint64(off));
    kv(&m, "length", cbor_build_uint64(24));
    kvs cm = {0};
    kv(&cm, "data", kv_build(&m, KM_PLAIN));
    kvs om = {0};
    cbor_item_t *shape = cbor_new_indefinite_array();
    cbor_array_push(shape, cbor_move(cbor_build_uint64(2)));
    cbor_array_push(shape, cbor_move(cbor_build_uint32(3)));
    kv(&om, "shape", shape);
    cbor_item_t *fmt = cbor_new_indefinite_string();
    cbor_string_add_chunk(fmt, cbor_move(T("den")));
    cbor_string_add_chunk(fmt, cbor_move(T("")));
    cbor_string_add_chunk(fmt, cbor_move(T("se")));
    kv(&om, "format", fmt);
    kv(&om, "components", kv_build(&cm, KM_INDEF));
    cbor_item_t *key = cbor_new_indefinite_string();
    cbor_string_add_chunk(key, cbor_move(T("wide_")));
    cbor_string_add_chunk(key, cbor_move(T("ints")));
    ser(&z.objs, key);
    ser(&z.objs, kv_build(&om, KM_SHUFFLE));
    z.nobj++;
    zf_expect(&z, "wide_ints", 9, "data", d, 24);
    root r = {.indef = 1, .objects_first = 1, .attrs = rich_attrs(0)};
    zf_finish(&z, &r);
    emit_accept(&z, "noncanonical_libcbor");
    zf_free(&z);
    free(d);
}

/* Non-canonical CBOR written byte by byte. */
static void accept_noncanonical_hand(void)
{
    zf z;
    zf_init(&z);
    uint8_t *d = rand_elems(I16, 12);
    uint64_t off1 = zf_blob(&z, d, 24);
    bb zs = {0};
    encode_stored(&zs, ENC_ZSTD_MULTI, d, 24);
    uint64_t off2 = zf_blob(&z, zs.p, zs.len);
    char dg[96];
    digest_string(DG_CRC_UP, zs.p, zs.len, dg);

    bb m = {0};
    raw_head_w(&m, 5, 2, 3); /* root map, count in a 2-byte head */
    /* "objects" as an indefinite text string of two chunks */
    bb_byte(&m, 0x7F);
    raw_text(&m, "obj");
    raw_head_w(&m, 3, 4, 4);
    bb_str(&m, "ects");
    bb_byte(&m, 0xFF);
    bb_byte(&m, 0xBF); /* objects: indefinite map */
    /* object 1: name in a 1-byte-length head (too long a head for 3 bytes) */
    raw_head_w(&m, 3, 1, 3);
    bb_str(&m, "one");
    raw_head_w(&m, 5, 8, 3); /* object map, 8-byte count */
    raw_text(&m, "components");
    bb_byte(&m, 0xBF);
    raw_text(&m, "data");
    bb_byte(&m, 0xBF);
    raw_text(&m, "length");
    raw_head_w(&m, 0, 8, 24);
    raw_text(&m, "offset");
    raw_head_w(&m, 0, 2, off1);
    raw_text(&m, "dtype");
    raw_head_w(&m, 3, 2, 3);
    bb_str(&m, "i16");
    bb_byte(&m, 0xFF);
    bb_byte(&m, 0xFF);
    raw_text(&m, "shape");
    bb_byte(&m, 0x9F); /* indefinite array of wide heads */
    raw_head_w(&m, 0, 1, 3);
    raw_head_w(&m, 0, 4, 4);
    bb_byte(&m, 0xFF);
    raw_text(&m, "format");
    raw_text(&m, "dense");
    /* object 2: zstd multi-frame with an uppercase crc, a tag around an attribute */
    raw_text(&m, "two");
    bb_byte(&m, 0xBF);
    raw_text(&m, "attributes");
    bb_byte(&m, 0xBF);
    raw_text(&m, "when");
    bb_byte(&m, 0xC1); /* tag 1 */
    raw_head_w(&m, 0, 8, 1700000000);
    raw_text(&m, "half");
    bb_byte(&m, 0xF9);
    bb_byte(&m, 0x3C);
    bb_byte(&m, 0x00);
    raw_text(&m, "bytes_indef");
    bb_byte(&m, 0x5F);
    raw_head(&m, 2, 2);
    bb_str(&m, "ab");
    raw_head(&m, 2, 0);
    bb_byte(&m, 0xFF);
    raw_text(&m, "neg_wide");
    raw_head_w(&m, 1, 8, 5);
    raw_text(&m, "simple_255");
    bb_byte(&m, 0xF8);
    bb_byte(&m, 0xFF);
    bb_byte(&m, 0xFF);
    raw_text(&m, "format");
    bb_byte(&m, 0x7F);
    raw_text(&m, "de");
    raw_text(&m, "nse");
    bb_byte(&m, 0xFF);
    raw_text(&m, "shape");
    raw_head_w(&m, 4, 8, 2);
    raw_head_w(&m, 0, 8, 2);
    raw_head_w(&m, 0, 8, 6);
    raw_text(&m, "components");
    raw_head_w(&m, 5, 1, 1);
    raw_text(&m, "data");
    raw_head(&m, 5, 6);
    raw_text(&m, "uncompressed_length");
    raw_head_w(&m, 0, 4, 24);
    raw_text(&m, "digest");
    raw_text(&m, dg);
    raw_text(&m, "encoding");
    bb_byte(&m, 0x7F);
    raw_text(&m, "zs");
    raw_text(&m, "td");
    bb_byte(&m, 0xFF);
    raw_text(&m, "length");
    raw_head_w(&m, 0, 4, zs.len);
    raw_text(&m, "offset");
    raw_head_w(&m, 0, 8, off2);
    raw_text(&m, "dtype");
    raw_text(&m, "i16");
    bb_byte(&m, 0xFF); /* end of object 2 */
    bb_byte(&m, 0xFF); /* end of objects */
    raw_text(&m, "version");
    bb_byte(&m, 0x7F);
    raw_text(&m, "1.");
    raw_text(&m, "2.0");
    bb_byte(&m, 0xFF);
    raw_text(&m, "attributes");
    raw_head_w(&m, 5, 4, 0);
    finish_raw(&z.file, m.p, m.len, 1);
    zf_expect(&z, "one", 3, "data", d, 24);
    zf_expect(&z, "two", 3, "data", d, 24);
    emit_accept(&z, "noncanonical_hand");
    json_expect("noncanonical_hand", "/version\t\"1.2.0\"\n"
                                     "/attributes\t{}\n"
                                     "/objects/one/shape\t[3, 4]\n"
                                     "/objects/one/format\t\"dense\"\n"
                                     "/objects/one/components/data/length\t24\n"
                                     "/objects/two/shape\t[2, 6]\n"
                                     "/objects/two/format\t\"dense\"\n"
                                     "/objects/two/attributes/when\t{\"$tag\": 1, \"$value\": 1700000000}\n"
                                     "/objects/two/attributes/half\t1.0\n"
                                     "/objects/two/attributes/bytes_indef\t{\"$bytes\": \"YWI=\"}\n"
                                     "/objects/two/attributes/neg_wide\t-6\n"
                                     "/objects/two/attributes/simple_255\t{\"$simple\": 255}\n"
                                     "/objects/two/components/data/encoding\t\"zstd\"\n"
                                     "/objects/two/components/data/uncompressed_length\t24\n");
    zf_free(&z);
    bb_free(&m);
    bb_free(&zs);
    free(d);
}

static void accept_v10(void)
{
    root r = {.v10 = 1, .extra = 1};
    zf z;
    zf_init(&z);
    for (int dt = 0; dt < NDT; dt++) {
        uint64_t count = 3 * 4;
        uint8_t *d = rand_elems(dt, count);
        comp c = {.role = "data", .data = d, .len = (size_t)count * k_w[dt],
                  .enc = dt % 4 == 1 ? ENC_ZSTD : ENC_RAW,
                  .digest = dt % 3 == 0 ? DG_NONE : dt % 3 == 1 ? DG_CRC_SPEC : DG_SHA};
        char name[64];
        snprintf(name, sizeof(name), "tensor_%s", k_long[dt]);
        obj o = {.name = name, .format = "dense", .shape = SHAPE(3, 4), .tensor_dtype = k_long[dt],
                 .comps = &c, .ncomp = 1};
        zf_add(&z, &o);
        free(d);
    }
    zf_finish(&z, &r);
    emit_accept(&z, "v10_dense_all_dtypes");
    json_expect("v10_dense_all_dtypes", "/version\t\"1.0\"\n"
                "/objects/tensor_float64/components/data/dtype\t\"f64\"\n"
                "/objects/tensor_bfloat16/components/data/dtype\t\"bf16\"\n"
                "/objects/tensor_int8/components/data/dtype\t\"i8\"\n"
                "/objects/tensor_uint16/components/data/dtype\t\"u16\"\n"
                "/objects/tensor_bool/components/data/dtype\t\"bool\"\n"
                "/objects/tensor_bool/components/data/encoding\t\"raw\"\n"
                "/objects/tensor_float32/shape\t[3, 4]\n");
    zf_free(&z);

    /* 1.0 example shapes from the spec: dense, sparse_csr, sparse_coo, quantized_4bit */
    zf_init(&z);
    uint8_t *v, *ix, *ip;
    csr_parts(10, 10, 7, &v, &ix, &ip);
    comp csr[3] = {{.role = "values", .data = v, .len = 28},
                   {.role = "indices", .data = ix, .len = 56, .digest = DG_SHA},
                   {.role = "indptr", .data = ip, .len = 88, .enc = ENC_ZSTD}};
    obj o = {.name = "adjacency_matrix", .format = "sparse_csr", .shape = SHAPE(10, 10),
             .tensor_dtype = "float32", .comps = csr, .ncomp = 3};
    zf_add(&z, &o);
    uint8_t *cv = rand_elems(F32, 5);
    uint64_t coords[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    comp coo[2] = {{.role = "values", .data = cv, .len = 20},
                   {.role = "coords", .data = (const uint8_t *)coords, .len = 80}};
    obj o2 = {.name = "sparse_embeddings", .format = "sparse_coo", .shape = SHAPE(10000, 512),
              .tensor_dtype = "float32", .comps = coo, .ncomp = 2};
    zf_add(&z, &o2);
    uint8_t *q = rnd_bytes(64);
    comp q4[3] = {{.role = "data", .data = q, .len = 32},
                  {.role = "scale", .data = q + 32, .len = 16},
                  {.role = "zero_point", .data = q + 48, .len = 16}};
    obj o3 = {.name = "quantized_layer", .format = "quantized_4bit", .shape = SHAPE(8, 8),
              .tensor_dtype = "uint8", .comps = q4, .ncomp = 3};
    zf_add(&z, &o3);
    uint8_t *e = rand_elems(F32, 50 * 4);
    comp ce = {.role = "data", .data = e, .len = 800, .enc = ENC_ZSTD_MULTI, .digest = DG_CRC};
    obj o4 = {.name = "embedding_table", .format = "dense", .shape = SHAPE(50, 4),
              .tensor_dtype = "float32", .comps = &ce, .ncomp = 1};
    zf_add(&z, &o4);
    kvs a = {0};
    kv(&a, "license", T("Apache-2.0"));
    kv(&a, "description", T("ResNet-50 Checkpoint"));
    kv(&a, "framework", T("PyTorch"));
    kv(&a, "created_at", T("2024-01-15T10:30:00Z"));
    root r2 = {.v10 = 1, .attrs = kv_build(&a, KM_PLAIN)};
    zf_finish(&z, &r2);
    emit_accept(&z, "v10_spec_examples");
    json_expect("v10_spec_examples",
                "/version\t\"1.0\"\n"
                "/attributes/description\t\"ResNet-50 Checkpoint\"\n"
                "/objects/adjacency_matrix/components/values/dtype\t\"f32\"\n"
                "/objects/adjacency_matrix/components/indices/dtype\t\"u64\"\n"
                "/objects/adjacency_matrix/components/indptr/dtype\t\"u64\"\n"
                "/objects/adjacency_matrix/components/indptr/encoding\t\"zstd\"\n"
                "/objects/sparse_embeddings/components/coords/dtype\t\"u64\"\n"
                "/objects/quantized_layer/format\t\"quantized_4bit\"\n"
                "/objects/quantized_layer/components/scale/dtype\t\"u8\"\n"
                "/objects/embedding_table/components/data/encoding\t\"zstd\"\n"
                "/objects/embedding_table/components/data/uncompressed_length\t800\n"
                "/tensors\t!absent\n");
    zf_free(&z);
    free(v);
    free(ix);
    free(ip);
    free(cv);
    free(q);
    free(e);

    zf_init(&z);
    root r3 = {.v10 = 1, .version = "1.0.0"};
    uint8_t *s = rand_elems(F64, 1);
    comp cs = {.role = "data", .data = s, .len = 8};
    obj os = {.name = "scalar", .format = "dense", .shape = SCALAR, .tensor_dtype = "float64",
              .comps = &cs, .ncomp = 1};
    zf_add(&z, &os);
    zf_finish(&z, &r3);
    emit_accept(&z, "v10_version_1_0_0");
    zf_free(&z);
    free(s);

    zf_init(&z);
    root r4 = {.v10 = 1};
    zf_finish(&z, &r4);
    emit_accept(&z, "v10_empty");
    zf_free(&z);
}

/* ============================================================ reject */

/* A file with one good object and `bad`; `why` the code. */
static void reject_obj(const char *name, const char *why, obj *bad)
{
    zf z;
    zf_init(&z);
    add_dense(&z, "good", F32, SHAPE(4), ENC_RAW, DG_SHA);
    zf_add(&z, bad);
    zf_finish(&z, &k_root12);
    emit_reject(&z, name, why, NULL);
    zf_free(&z);
}

/* One dense object with component c; shape given. */
static void reject_comp(const char *name, const char *why, comp *c, const uint64_t *shape,
                        int ndim)
{
    obj o = {.name = "bad", .format = "dense", .shape = shape, .ndim = ndim, .comps = c,
             .ncomp = 1};
    reject_obj(name, why, &o);
}

static const uint8_t k_zero64[64];

static void reject_schema(void)
{
    uint8_t *d = rand_elems(F32, 4);
    zf z;
    struct {
        const char *name, *why;
        root r;
    } roots[] = {
        {"root_array", "ZT_E_SCHEMA", {0}},
        {"root_no_version", "ZT_E_SCHEMA", {.no_version = 1}},
        {"root_version_int", "ZT_E_SCHEMA", {.version_item = U(1)}},
        {"root_version_2", "ZT_E_VERSION", {.version = "2.0.0"}},
        {"root_version_0_9", "ZT_E_VERSION", {.version = "0.9.0"}},
        {"root_version_garbage", "ZT_E_VERSION", {.version = "latest"}},
        {"root_version_empty", "ZT_E_VERSION", {.version = ""}},
        {"root_version_v_prefix", "ZT_E_VERSION", {.version = "v1.2.0"}},
        {"root_no_objects", "ZT_E_SCHEMA", {.no_objects = 1}},
        {"root_objects_array", "ZT_E_SCHEMA", {.objects_item = cbor_new_definite_array(0)}},
        {"root_objects_text", "ZT_E_SCHEMA", {.objects_item = T("none")}},
        {"root_attributes_array", "ZT_E_SCHEMA", {.attrs = cbor_new_definite_array(0)}},
    };
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
        zf_init(&z);
        add_dense(&z, "w", F32, SHAPE(4), ENC_RAW, DG_NONE);
        if (i == 0) {
            /* the root is an array holding what would have been the map */
            bb man = {0};
            bb_byte(&man, 0x82);
            raw_text(&man, "version");
            raw_text(&man, "1.2.0");
            finish_raw(&z.file, man.p, man.len, 1);
            bb_free(&man);
        } else {
            zf_finish(&z, &roots[i].r);
        }
        emit_reject(&z, roots[i].name, roots[i].why, NULL);
        zf_free(&z);
    }
    /* root is a text string / an integer */
    static const uint8_t text_root[] = {0x65, 'h', 'e', 'l', 'l', 'o'};
    static const uint8_t int_root[] = {0x18, 0x2a};
    zf_init(&z);
    finish_raw(&z.file, text_root, sizeof(text_root), 1);
    emit_reject(&z, "root_text", "ZT_E_SCHEMA", NULL);
    zf_free(&z);
    zf_init(&z);
    finish_raw(&z.file, int_root, sizeof(int_root), 1);
    emit_reject(&z, "root_int", "ZT_E_SCHEMA", NULL);
    zf_free(&z);

    /* objects */
    obj o1 = {.name = "x", .value_item = U(5)};
    reject_obj("object_not_map", "ZT_E_SCHEMA", &o1);
    obj o2 = {.name = "x", .key_item = U(5), .format = "dense", .shape = SHAPE(1), .ncomp = 0};
    reject_obj("object_name_not_text", "ZT_E_SCHEMA", &o2);
    obj o3 = {.name = "x", .format = "dense", .shape = SHAPE(1), .no_components = 1};
    reject_obj("object_no_components", "ZT_E_COMPONENTS", &o3);
    obj o4 = {.name = "x", .format = "dense", .shape = SHAPE(1),
              .components_item = cbor_new_definite_array(0)};
    reject_obj("object_components_array", "ZT_E_SCHEMA", &o4);
    comp c5 = {.role = "data", .dtype = "f32", .data = d, .len = 16};
    obj o5 = {.name = "x", .format = "dense", .shape = SHAPE(4), .comps = &c5, .ncomp = 1,
              .attrs = T("not a map")};
    reject_obj("object_attributes_text", "ZT_E_SCHEMA", &o5);
    comp c6 = {.role = "data", .dtype = "f32", .data = d, .len = 16};
    {
        /* "format": 7 */
        zf_init(&z);
        add_dense(&z, "good", F32, SHAPE(4), ENC_RAW, DG_SHA);
        uint64_t off = zf_blob(&z, d, 16);
        kvs cm = {0}, comps = {0}, om = {0};
        kv(&cm, "dtype", T("f32"));
        kv(&cm, "offset", U(off));
        kv(&cm, "length", U(16));
        kv(&comps, "data", kv_build(&cm, KM_PLAIN));
        kv(&om, "shape", shape_item(SHAPE(4)));
        kv(&om, "format", U(7));
        kv(&om, "components", kv_build(&comps, KM_PLAIN));
        ser(&z.objs, T("x"));
        ser(&z.objs, kv_build(&om, KM_PLAIN));
        z.nobj++;
        zf_finish(&z, &k_root12);
        emit_reject(&z, "object_format_int", "ZT_E_SCHEMA", NULL);
        zf_free(&z);
    }
    /* dense without shape */
    obj o7 = {.name = "x", .format = "dense", .ndim = -1, .comps = &c6, .ncomp = 1};
    reject_obj("dense_no_shape", "ZT_E_SCHEMA", &o7);
    /* component value not a map; role not text */
    comp c8 = {.role = "data", .dtype = "f32", .data = d, .len = 16, .value_item = T("x")};
    reject_comp("component_not_map", "ZT_E_SCHEMA", &c8, SHAPE(4));
    comp c9 = {.role = "data", .dtype = "f32", .data = d, .len = 16, .role_item = U(0)};
    reject_comp("component_role_not_text", "ZT_E_SCHEMA", &c9, SHAPE(4));
    /* missing fields */
    comp c10 = {.role = "data", .dtype = "f32", .data = d, .len = 16, .omit = OM_OFFSET};
    reject_comp("component_no_offset", "ZT_E_SCHEMA", &c10, SHAPE(4));
    comp c11 = {.role = "data", .dtype = "f32", .data = d, .len = 16, .omit = OM_LENGTH};
    reject_comp("component_no_length", "ZT_E_SCHEMA", &c11, SHAPE(4));
    comp c12 = {.role = "data", .data = d, .len = 16};
    reject_comp("component_no_dtype", "ZT_E_DTYPE", &c12, SHAPE(4));
    comp c13 = {.role = "data", .dtype = "f32", .data = d, .len = 16, .offset_item = NEG(63)};
    reject_comp("component_offset_negative", "ZT_E_SCHEMA", &c13, SHAPE(4));
    comp c14 = {.role = "data", .dtype = "f32", .data = d, .len = 16, .offset_item = T("64")};
    reject_comp("component_offset_text", "ZT_E_SCHEMA", &c14, SHAPE(4));
    comp c15 = {.role = "data", .dtype = "f32", .data = d, .len = 16,
                .offset_item = cbor_build_float8(64.0)};
    reject_comp("component_offset_float", "ZT_E_SCHEMA", &c15, SHAPE(4));
    free(d);
}

static void reject_types(void)
{
    uint8_t *d = rnd_bytes(256);
    static const struct {
        const char *name, *dtype;
    } bad_dt[] = {{"dtype_float128", "float128"}, {"dtype_F32_upper", "F32"},
                  {"dtype_empty", ""},             {"dtype_f8", "f8"},
                  {"dtype_complex64", "complex64"}, {"dtype_u128", "u128"},
                  {"dtype_trailing_space", "f32 "}};
    for (size_t i = 0; i < sizeof(bad_dt) / sizeof(bad_dt[0]); i++) {
        comp c = {.role = "data", .dtype = bad_dt[i].dtype, .data = d, .len = 16};
        reject_comp(bad_dt[i].name, "ZT_E_DTYPE", &c, SHAPE(4));
    }
    comp ci = {.role = "data", .dtype_item = U(4), .data = d, .len = 16};
    reject_comp("dtype_int", "ZT_E_DTYPE", &ci, SHAPE(4));
    /* known logical types on the wrong storage */
    comp t1 = {.role = "data", .dtype = "f16", .type = "f8_e4m3fn", .data = d, .len = 32};
    reject_comp("type_f8_on_f16", "ZT_E_TYPE", &t1, SHAPE(16));
    comp t2 = {.role = "data", .dtype = "f64", .type = "complex64", .data = d, .len = 64};
    reject_comp("type_complex64_on_f64", "ZT_E_TYPE", &t2, SHAPE(4));
    comp t3 = {.role = "data", .dtype = "f32", .type = "complex128", .data = d, .len = 32};
    reject_comp("type_complex128_on_f32", "ZT_E_TYPE", &t3, SHAPE(4));
    comp t4 = {.role = "data", .dtype = "i8", .type = "f8_e5m2", .data = d, .len = 16};
    reject_comp("type_f8_e5m2_on_i8", "ZT_E_TYPE", &t4, SHAPE(16));
    comp t5 = {.role = "data", .dtype = "u8", .type_item = U(1), .data = d, .len = 16};
    reject_comp("type_not_text", "ZT_E_TYPE", &t5, SHAPE(16));
    free(d);
}

static void reject_layout_rules(void)
{
    uint8_t *d = rnd_bytes(4096);
    zf z;
    /* offset not a multiple of 64 */
    zf_init(&z);
    add_dense(&z, "good", F32, SHAPE(4), ENC_RAW, DG_SHA);
    bb_pad64(&z.file);
    uint64_t off = z.file.len + 8;
    bb_put(&z.file, k_zero64, 8);
    bb_put(&z.file, d, 16);
    comp ca = {.role = "data", .dtype = "f32", .data = d, .len = 16, .set_off = 1, .off = off};
    obj oa = {.name = "misaligned", .format = "dense", .shape = SHAPE(4), .comps = &ca,
              .ncomp = 1};
    zf_add(&z, &oa);
    zf_finish(&z, &k_root12);
    emit_reject(&z, "offset_misaligned_8", "ZT_E_ALIGN", NULL);
    zf_free(&z);
    comp cb = {.role = "data", .dtype = "u8", .data = d, .len = 1, .set_off = 1, .off = 65};
    reject_comp("offset_misaligned_65", "ZT_E_ALIGN", &cb, SHAPE(1));
    /* offset + length overflows 2^64 */
    comp cc = {.role = "data", .dtype = "u8", .data = d, .len = 128, .set_off = 1,
               .off = UINT64_C(0xFFFFFFFFFFFFFFC0), .set_len = 1, .clen = 128};
    reject_comp("offset_length_overflow", "ZT_E_BOUNDS", &cc, SHAPE(128));
    comp cc2 = {.role = "data", .dtype = "u8", .data = d, .len = 64, .set_off = 1, .off = 64,
                .set_len = 1, .clen = UINT64_MAX};
    reject_comp("length_u64_max", "ZT_E_BOUNDS|ZT_E_SIZE", &cc2, SHAPE(64));
    /* component runs into the manifest */
    zf_init(&z);
    add_dense(&z, "good", F32, SHAPE(4), ENC_RAW, DG_SHA);
    off = zf_blob(&z, d, 64);
    comp cd = {.role = "data", .dtype = "u8", .data = d, .len = 80, .set_off = 1, .off = off,
               .set_len = 1, .clen = 80};
    obj od = {.name = "into_manifest", .format = "dense", .shape = SHAPE(80), .comps = &cd,
              .ncomp = 1};
    zf_add(&z, &od);
    zf_finish(&z, &k_root12);
    emit_reject(&z, "component_into_manifest", "ZT_E_BOUNDS", NULL);
    zf_free(&z);
    /* component past EOF */
    comp ce = {.role = "data", .dtype = "u8", .data = d, .len = 64, .set_off = 1,
               .off = 1 << 20, .set_len = 1, .clen = 64};
    reject_comp("component_past_eof", "ZT_E_BOUNDS", &ce, SHAPE(64));
    /* bytes inside the header: offset 0, length > 0 */
    comp cf = {.role = "data", .dtype = "u8", .data = (const uint8_t *)"ZTEN1000", .len = 8,
               .set_off = 1, .off = 0};
    reject_comp("offset_zero_in_header", "ZT_E_BOUNDS", &cf, SHAPE(8));
    /* size rules */
    comp s1 = {.role = "data", .dtype = "f32", .data = d, .len = 20};
    reject_comp("dense_length_mismatch_more", "ZT_E_SIZE", &s1, SHAPE(4));
    comp s2 = {.role = "data", .dtype = "f32", .data = d, .len = 12};
    reject_comp("dense_length_mismatch_less", "ZT_E_SIZE", &s2, SHAPE(4));
    comp s3 = {.role = "data", .dtype = "f32", .data = d, .len = 1};
    reject_comp("dense_scalar_short", "ZT_E_SIZE", &s3, SCALAR);
    comp s4 = {.role = "data", .dtype = "f32", .type = "complex64", .data = d, .len = 16};
    reject_comp("complex64_without_ratio", "ZT_E_SIZE", &s4, SHAPE(4));
    comp s5 = {.role = "data", .dtype = "f64", .type = "complex128", .data = d, .len = 32};
    reject_comp("complex128_without_ratio", "ZT_E_SIZE", &s5, SHAPE(4));
    comp s6 = {.role = "data", .dtype = "u8", .data = d, .len = 16};
    reject_comp("shape_product_overflow", "ZT_E_SIZE", &s6,
                SHAPE(UINT64_C(1) << 32, UINT64_C(1) << 32, 16));
    comp s7 = {.role = "data", .dtype = "f64", .data = d, .len = 16};
    reject_comp("shape_times_width_overflow", "ZT_E_SIZE", &s7, SHAPE(UINT64_C(1) << 62));
    comp s8 = {.role = "data", .dtype = "u8", .data = d, .len = 4};
    reject_comp("shape_zero_but_4_bytes", "ZT_E_SIZE", &s8, SHAPE(0, 4));
    free(d);
}

static void reject_zstd(void)
{
    const uint64_t n = 4096; /* the lies below assume it */
    uint8_t *d = rand_elems(F32, n / 4);
    comp c1 = {.role = "data", .dtype = "f32", .data = d, .len = n, .enc = ENC_ZSTD,
               .omit = OM_ULEN};
    reject_comp("zstd_no_uncompressed_length", "ZT_E_ENCODING", &c1, SHAPE(1024));
    comp c2 = {.role = "data", .dtype = "f32", .data = d, .len = n, .enc = ENC_ZSTD,
               .set_ulen = 1, .ulen = n + 4};
    reject_comp("zstd_ulen_not_shape", "ZT_E_SIZE", &c2, SHAPE(1024));
    comp c3 = {.role = "data", .dtype = "u8", .data = d, .len = n, .enc = ENC_ZSTD,
               .set_ulen = 1, .ulen = UINT64_C(1) << 62};
    reject_comp("zstd_ulen_2p62", "ZT_E_LIMIT", &c3, SHAPE(UINT64_C(1) << 62));
    comp c3b = {.role = "data", .dtype = "u8", .data = d, .len = n, .enc = ENC_ZSTD,
                .set_ulen = 1, .ulen = UINT64_MAX};
    reject_comp("zstd_ulen_u64_max", "ZT_E_LIMIT|ZT_E_SIZE", &c3b, SHAPE(1024));
    comp c4 = {.role = "data", .dtype = "u8", .data = d, .len = 16, .enc = ENC_ZSTD,
               .set_ulen = 1, .ulen = 16, .set_off = 1, .off = 0};
    reject_comp("zstd_offset_zero", "ZT_E_BOUNDS", &c4, SHAPE(16));

    /* length lies: the manifest's uncompressed_length matches the shape, the
     * frames decode to fewer or more bytes. The file opens; verify and get fail. */
    static const struct {
        const char *name;
        int64_t delta;
        int enc;
    } lies[] = {{"zstd_lie_fewer", -8, ENC_ZSTD},
                {"zstd_lie_more", 100, ENC_ZSTD},
                {"zstd_lie_one_more", 1, ENC_ZSTD},
                {"zstd_lie_fewer_nosize", -4, ENC_ZSTD_NOSIZE},
                {"zstd_lie_more_nosize", 4096, ENC_ZSTD_NOSIZE},
                {"zstd_lie_more_multiframe", 64, ENC_ZSTD_MULTI},
                {"zstd_lie_empty_frame", -4096, ENC_ZSTD}};
    for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
        size_t real = (size_t)((int64_t)n + lies[i].delta);
        uint8_t *rd = rand_elems(U8, real);
        if (real >= n)
            memcpy(rd, d, n);
        bb st = {0};
        encode_stored(&st, lies[i].enc, rd, real);
        comp c = {.role = "data", .dtype = "f32", .data = d, .len = n, .stored = st.p,
                  .stored_len = st.len, .enc = ENC_ZSTD, .set_ulen = 1, .ulen = n,
                  .digest = DG_SHA};
        reject_comp(lies[i].name, "ZT_E_SIZE", &c, SHAPE(1024));
        char path[4200];
        xsnprintf(path, sizeof(path), "%s/reject/%s.opens", g_out, lies[i].name);
        write_text(path, "bad\tdata\t1\ngood\tdata\t0\n");
        bb_free(&st);
        free(rd);
    }
    /* a bomb: 1 GiB of zeros in a few KiB; the manifest says 4 KiB */
    {
        ZSTD_CCtx *cc = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1);
        ZSTD_CCtx_setPledgedSrcSize(cc, UINT64_C(1) << 30);
        uint8_t *zeros = calloc(1, 1 << 20);
        bb bomb = {0};
        size_t outcap = ZSTD_CStreamOutSize();
        for (int i = 0; i < 1024; i++) {
            ZSTD_inBuffer in = {zeros, 1 << 20, 0};
            ZSTD_EndDirective e = i == 1023 ? ZSTD_e_end : ZSTD_e_continue;
            size_t left;
            do {
                bb_reserve(&bomb, outcap);
                ZSTD_outBuffer out = {bomb.p + bomb.len, outcap, 0};
                left = ZSTD_compressStream2(cc, &out, &in, e);
                if (ZSTD_isError(left))
                    die("zstd: %s", ZSTD_getErrorName(left));
                bomb.len += out.pos;
            } while (in.pos < in.size || (e == ZSTD_e_end && left));
        }
        ZSTD_freeCCtx(cc);
        free(zeros);
        comp cb = {.role = "data", .dtype = "f32", .data = d, .len = n, .stored = bomb.p,
                   .stored_len = bomb.len, .enc = ENC_ZSTD, .set_ulen = 1, .ulen = n};
        reject_comp("zstd_bomb_1GiB", "ZT_E_SIZE", &cb, SHAPE(1024));
        char bp[4200];
        xsnprintf(bp, sizeof(bp), "%s/reject/zstd_bomb_1GiB.opens", g_out);
        write_text(bp, "bad\tdata\t1\n");
        bb_free(&bomb);
    }
    /* corrupt zstd bytes */
    bb st = {0};
    encode_stored(&st, ENC_ZSTD_CHECK, d, n);
    st.p[st.len - 1] ^= 0x5A; /* the content checksum */
    comp k1 = {.role = "data", .dtype = "f32", .data = d, .len = n, .stored = st.p,
               .stored_len = st.len, .enc = ENC_ZSTD};
    reject_comp("zstd_bad_checksum", "ZT_E_ZSTD", &k1, SHAPE(1024));
    bb_free(&st);
    uint8_t garbage[200];
    for (size_t i = 0; i < sizeof(garbage); i++)
        garbage[i] = (uint8_t)(i * 37 + 11);
    comp k2 = {.role = "data", .dtype = "f32", .data = d, .len = n, .stored = garbage,
               .stored_len = sizeof(garbage), .enc = ENC_ZSTD};
    reject_comp("zstd_not_a_frame", "ZT_E_ZSTD", &k2, SHAPE(1024));
    encode_stored(&st, ENC_ZSTD_CHECK, d, n);
    comp k3 = {.role = "data", .dtype = "f32", .data = d, .len = n, .stored = st.p,
               .stored_len = st.len / 2, .enc = ENC_ZSTD};
    reject_comp("zstd_truncated_frame", "ZT_E_ZSTD", &k3, SHAPE(1024));
    st.p[st.len / 2] ^= 0xFF;
    st.p[st.len / 2 + 1] ^= 0xFF;
    comp k4 = {.role = "data", .dtype = "f32", .data = d, .len = n, .stored = st.p,
               .stored_len = st.len, .enc = ENC_ZSTD};
    reject_comp("zstd_corrupt_block", "ZT_E_ZSTD|ZT_E_SIZE", &k4, SHAPE(1024));
    bb_free(&st);
    char path[4200];
    static const char *const corrupt[] = {"zstd_bad_checksum", "zstd_not_a_frame",
                                          "zstd_truncated_frame", "zstd_corrupt_block"};
    for (size_t i = 0; i < sizeof(corrupt) / sizeof(corrupt[0]); i++) {
        xsnprintf(path, sizeof(path), "%s/reject/%s.opens", g_out, corrupt[i]);
        write_text(path, "bad\tdata\t1\n");
    }
    free(d);
}

static void reject_encoding(void)
{
    uint8_t *d = rnd_bytes(64);
    comp c1 = {.role = "data", .dtype = "u8", .data = d, .len = 16, .enc_item = T("lz4")};
    reject_comp("encoding_lz4", "ZT_E_ENCODING", &c1, SHAPE(16));
    comp c2 = {.role = "data", .dtype = "u8", .data = d, .len = 16, .enc_item = U(1)};
    reject_comp("encoding_int", "ZT_E_ENCODING", &c2, SHAPE(16));
    comp c3 = {.role = "data", .dtype = "u8", .data = d, .len = 16, .enc_item = T("ZSTD")};
    reject_comp("encoding_zstd_upper", "ZT_E_ENCODING", &c3, SHAPE(16));
    comp c4 = {.role = "data", .dtype = "u8", .data = d, .len = 16, .enc_item = T("")};
    reject_comp("encoding_empty", "ZT_E_ENCODING", &c4, SHAPE(16));
    free(d);
}

static void reject_digests(void)
{
    uint8_t *d = rnd_bytes(64);
    char good_sha[96], good_crc[96];
    digest_string(DG_SHA, d, 16, good_sha);
    digest_string(DG_CRC, d, 16, good_crc);
    char sha62[160], sha66[160], shag[160], shasp[160], sha_nocolon[160], crc9[160], crcnox[160];
    snprintf(sha62, sizeof(sha62), "%.69s", good_sha);
    snprintf(sha66, sizeof(sha66), "%s00", good_sha);
    snprintf(shag, sizeof(shag), "%s", good_sha);
    shag[40] = 'g';
    snprintf(shasp, sizeof(shasp), "%s ", good_sha);
    snprintf(sha_nocolon, sizeof(sha_nocolon), "sha256%s", good_sha + 7);
    snprintf(crc9, sizeof(crc9), "%s0", good_crc);
    snprintf(crcnox, sizeof(crcnox), "crc32c:%s", good_crc + 9);
    const struct {
        const char *name, *s;
    } bad[] = {{"digest_sha256_xyz", "sha256:xyz"},
               {"digest_sha256_62hex", sha62},
               {"digest_sha256_66hex", sha66},
               {"digest_sha256_nonhex", shag},
               {"digest_sha256_trailing_space", shasp},
               {"digest_sha256_no_colon", sha_nocolon},
               {"digest_sha256_empty_hex", "sha256:"},
               {"digest_md5", "md5:d41d8cd98f00b204e9800998ecf8427e"},
               {"digest_sha1", "sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709"},
               {"digest_crc32c_1234", "crc32c:1234"},
               {"digest_crc32c_no_0x", crcnox},
               {"digest_crc32c_9hex", crc9},
               {"digest_crc32c_0x_short", "crc32c:0x1234"},
               {"digest_crc32c_nonhex", "crc32c:0x1234567g"},
               {"digest_empty", ""},
               {"digest_only_algorithm", "sha256"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        comp c = {.role = "data", .dtype = "u8", .data = d, .len = 16, .digest_str = bad[i].s};
        reject_comp(bad[i].name, "ZT_E_DIGEST_FORMAT", &c, SHAPE(16));
    }
    comp ci = {.role = "data", .dtype = "u8", .data = d, .len = 16, .digest_item = U(1234)};
    reject_comp("digest_int", "ZT_E_DIGEST_FORMAT", &ci, SHAPE(16));
    comp cb = {.role = "data", .dtype = "u8", .data = d, .len = 16,
               .digest_item = cbor_build_bytestring(d, 32)};
    reject_comp("digest_bytes", "ZT_E_DIGEST_FORMAT", &cb, SHAPE(16));

    /* mismatches: the file opens; verify reports; get is not required to check */
    char wrong_sha[96], wrong_crc[96];
    digest_string(DG_SHA, d + 1, 16, wrong_sha);
    digest_string(DG_CRC, d + 1, 16, wrong_crc);
    comp m1 = {.role = "data", .dtype = "u8", .data = d, .len = 16, .digest_str = wrong_sha};
    reject_comp("digest_mismatch_sha256", "ZT_E_DIGEST_MISMATCH", &m1, SHAPE(16));
    comp m2 = {.role = "data", .dtype = "u8", .data = d, .len = 16, .digest_str = wrong_crc};
    reject_comp("digest_mismatch_crc32c", "ZT_E_DIGEST_MISMATCH", &m2, SHAPE(16));
    /* a digest of the decoded bytes on a zstd component is a mismatch: the
     * digest covers the stored (compressed) bytes */
    comp m3 = {.role = "data", .dtype = "u8", .data = d, .len = 16, .enc = ENC_ZSTD,
               .digest_str = good_sha};
    reject_comp("digest_mismatch_zstd_decoded", "ZT_E_DIGEST_MISMATCH", &m3, SHAPE(16));
    char flipped[96];
    snprintf(flipped, sizeof(flipped), "%s", good_crc);
    flipped[16] = flipped[16] == '0' ? '1' : '0';
    comp m4 = {.role = "data", .dtype = "u8", .data = d, .len = 16, .digest_str = flipped};
    reject_comp("digest_mismatch_crc32c_last_digit", "ZT_E_DIGEST_MISMATCH", &m4, SHAPE(16));
    char path[4200];
    static const char *const mm[] = {"digest_mismatch_sha256", "digest_mismatch_crc32c",
                                      "digest_mismatch_zstd_decoded",
                                      "digest_mismatch_crc32c_last_digit"};
    for (size_t i = 0; i < 4; i++) {
        xsnprintf(path, sizeof(path), "%s/reject/%s.opens", g_out, mm[i]);
        write_text(path, "good\tdata\t0\n");
    }
    free(d);
}

static void reject_formats(void)
{
    uint8_t *d = rnd_bytes(1024);
    /* dense without "data" */
    comp c1 = {.role = "values", .dtype = "u8", .data = d, .len = 4};
    reject_comp("dense_no_data", "ZT_E_COMPONENTS", &c1, SHAPE(4));
    obj o1b = {.name = "bad", .format = "dense", .shape = SHAPE(4), .ncomp = 0};
    reject_obj("dense_empty_components", "ZT_E_COMPONENTS", &o1b);

    uint8_t *v, *ix, *ip;
    csr_parts(4, 6, 9, &v, &ix, &ip);
    comp csr[3] = {
        {.role = "values", .dtype = "f32", .data = v, .len = 36},
        {.role = "indices", .dtype = "u64", .data = ix, .len = 72},
        {.role = "indptr", .dtype = "u64", .data = ip, .len = 40},
    };
    obj o = {.name = "bad", .format = "sparse_csr", .shape = SHAPE(4, 6), .comps = csr,
             .ncomp = 2};
    reject_obj("csr_no_indptr", "ZT_E_COMPONENTS", &o);
    comp csr_b[2] = {csr[0], csr[2]};
    o.comps = csr_b;
    reject_obj("csr_no_indices", "ZT_E_COMPONENTS", &o);
    o.comps = csr;
    o.ncomp = 3;
    csr[1].dtype = "u32";
    csr[1].len = 36;
    reject_obj("csr_indices_u32", "ZT_E_DTYPE", &o);
    csr[1].dtype = "i64";
    csr[1].len = 72;
    reject_obj("csr_indices_i64", "ZT_E_DTYPE", &o);
    csr[1].dtype = "u64";
    csr[2].dtype = "u32";
    csr[2].len = 20;
    reject_obj("csr_indptr_u32", "ZT_E_DTYPE", &o);
    csr[2].dtype = "u64";
    csr[2].len = 32;
    reject_obj("csr_indptr_rows_not_plus_1", "ZT_E_SIZE", &o);
    csr[2].len = 40;
    csr[1].len = 64;
    reject_obj("csr_indices_count_not_nnz", "ZT_E_SIZE", &o);
    csr[1].len = 72;
    csr[0].len = 34;
    reject_obj("csr_values_partial_element", "ZT_E_SIZE", &o);
    csr[0].len = 36;
    free(v);
    free(ix);
    free(ip);

    uint64_t coords[12] = {0};
    comp coo[2] = {
        {.role = "values", .dtype = "i32", .data = d, .len = 24},
        {.role = "coords", .dtype = "u64", .data = (const uint8_t *)coords, .len = 96},
    };
    obj oc = {.name = "bad", .format = "sparse_coo", .shape = SHAPE(3, 4), .comps = coo,
              .ncomp = 1};
    reject_obj("coo_no_coords", "ZT_E_COMPONENTS", &oc);
    oc.ncomp = 2;
    coo[1].len = 88;
    reject_obj("coo_coords_wrong_size", "ZT_E_SIZE", &oc);
    coo[1].len = 48; /* nnz * 1 instead of ndim * nnz */
    reject_obj("coo_coords_one_dim_only", "ZT_E_SIZE", &oc);
    coo[1].len = 96;
    coo[1].dtype = "i64";
    reject_obj("coo_coords_i64", "ZT_E_DTYPE", &oc);
    coo[1].dtype = "u64";
    comp coo_v[1] = {coo[1]};
    oc.comps = coo_v;
    oc.ncomp = 1;
    reject_obj("coo_no_values", "ZT_E_COMPONENTS", &oc);

    /* the structural rules hold for formats the reader does not know */
    comp u1 = {.role = "blob", .dtype = "f128", .data = d, .len = 16};
    obj ou = {.name = "bad", .format = "future_v1", .ndim = -1, .comps = &u1, .ncomp = 1};
    reject_obj("unknown_format_bad_dtype", "ZT_E_DTYPE", &ou);
    comp u2 = {.role = "blob", .dtype = "u8", .data = d, .len = 16, .set_off = 1, .off = 72};
    ou.comps = &u2;
    reject_obj("unknown_format_misaligned", "ZT_E_ALIGN", &ou);
    comp u3 = {.role = "blob", .dtype = "u8", .data = d, .len = 16, .set_off = 1,
               .off = 1 << 24};
    ou.comps = &u3;
    reject_obj("unknown_format_past_eof", "ZT_E_BOUNDS", &ou);
    comp u4 = {.role = "blob", .dtype = "u8", .data = d, .len = 16, .enc = ENC_ZSTD,
               .omit = OM_ULEN};
    ou.comps = &u4;
    reject_obj("unknown_format_zstd_no_ulen", "ZT_E_ENCODING", &ou);
    comp u5[2] = {{.role = "blob", .dtype = "u8", .data = d, .len = 16},
                  {.role = "blob", .dtype = "u8", .data = d, .len = 16}};
    ou.comps = u5;
    ou.ncomp = 2;
    reject_obj("unknown_format_duplicate_role", "ZT_E_DUPLICATE", &ou);
    comp u6 = {.role = "blob", .dtype = "f16", .type = "complex64", .data = d, .len = 16};
    ou.comps = &u6;
    ou.ncomp = 1;
    reject_obj("unknown_format_known_type_wrong_storage", "ZT_E_TYPE", &ou);

    comp qg[3] = {
        {.role = "packed_weight", .dtype = "i32", .data = d, .len = 512},
        {.role = "scales", .dtype = "f16", .data = d, .len = 64},
        {.role = "zeros", .dtype = "f16", .data = d, .len = 64},
    };
    obj oq = {.name = "bad", .format = "quantized_group", .shape = SHAPE(16, 64),
              .attrs = qg_attrs(), .comps = qg, .ncomp = 2};
    reject_obj("qg_no_zeros", "ZT_E_COMPONENTS", &oq);
    comp qg2[2] = {qg[0], qg[2]};
    oq.comps = qg2;
    oq.attrs = qg_attrs();
    reject_obj("qg_no_scales", "ZT_E_COMPONENTS", &oq);
    comp qg3[2] = {qg[1], qg[2]};
    oq.comps = qg3;
    oq.attrs = qg_attrs();
    reject_obj("qg_no_packed_weight", "ZT_E_COMPONENTS", &oq);
    free(d);
}

static void reject_duplicates_and_shapes(void)
{
    uint8_t *d = rnd_bytes(64);
    zf z;
    zf_init(&z);
    add_dense(&z, "twice", F32, SHAPE(4), ENC_RAW, DG_NONE);
    add_dense(&z, "other", F32, SHAPE(4), ENC_RAW, DG_NONE);
    add_dense(&z, "twice", U8, SHAPE(2), ENC_RAW, DG_NONE);
    zf_finish(&z, &k_root12);
    emit_reject(&z, "duplicate_object_name", "ZT_E_DUPLICATE", NULL);
    zf_free(&z);
    /* the same name, once written as an indefinite-length string */
    zf_init(&z);
    add_dense(&z, "same", F32, SHAPE(4), ENC_RAW, DG_NONE);
    cbor_item_t *k = cbor_new_indefinite_string();
    cbor_string_add_chunk(k, cbor_move(T("sa")));
    cbor_string_add_chunk(k, cbor_move(T("me")));
    comp cx = {.role = "data", .dtype = "u8", .data = d, .len = 2};
    obj ox = {.name = "same", .key_item = k, .format = "dense", .shape = SHAPE(2), .comps = &cx,
              .ncomp = 1};
    zf_add(&z, &ox);
    zf_finish(&z, &k_root12);
    emit_reject(&z, "duplicate_object_name_chunked", "ZT_E_DUPLICATE", NULL);
    zf_free(&z);
    /* 100 objects, the first and the last share a name */
    zf_init(&z);
    for (int i = 0; i < 100; i++) {
        char nm[32];
        snprintf(nm, sizeof(nm), "o%d", i == 99 ? 0 : i);
        add_dense(&z, nm, U8, SHAPE(1), ENC_RAW, DG_NONE);
    }
    zf_finish(&z, &k_root12);
    emit_reject(&z, "duplicate_object_name_far", "ZT_E_DUPLICATE", NULL);
    zf_free(&z);

    comp dup[2] = {{.role = "data", .dtype = "u8", .data = d, .len = 4},
                   {.role = "data", .dtype = "u8", .data = d, .len = 4}};
    obj od = {.name = "bad", .format = "dense", .shape = SHAPE(4), .comps = dup, .ncomp = 2};
    reject_obj("duplicate_component_role", "ZT_E_DUPLICATE", &od);
    comp dup2[12];
    static const char *const roles[12] = {"a", "b", "c", "d", "e", "f",
                                          "g", "h", "i", "j", "data", "c"};
    for (int i = 0; i < 12; i++)
        dup2[i] = (comp){.role = roles[i], .dtype = "u8", .data = d, .len = 4};
    od.comps = dup2;
    od.ncomp = 12;
    reject_obj("duplicate_component_role_many", "ZT_E_DUPLICATE", &od);

    comp c = {.role = "data", .dtype = "u8", .data = d, .len = 4};
    cbor_item_t *neg[2] = {U(2), NEG(1)};
    obj s1 = {.name = "bad", .format = "dense", .shape_item = ARR(2, neg), .comps = &c,
              .ncomp = 1};
    reject_obj("shape_negative", "ZT_E_SCHEMA", &s1);
    cbor_item_t *str[2] = {U(2), T("2")};
    s1.shape_item = ARR(2, str);
    reject_obj("shape_string_dim", "ZT_E_SCHEMA", &s1);
    cbor_item_t *flt[1] = {cbor_build_float8(4.0)};
    s1.shape_item = ARR(1, flt);
    reject_obj("shape_float_dim", "ZT_E_SCHEMA", &s1);
    s1.shape_item = U(4);
    reject_obj("shape_not_array", "ZT_E_SCHEMA", &s1);
    cbor_item_t *nested[1] = {shape_item(SHAPE(4))};
    s1.shape_item = ARR(1, nested);
    reject_obj("shape_nested_array", "ZT_E_SCHEMA", &s1);
    uint64_t dims[65];
    for (int i = 0; i < 65; i++)
        dims[i] = 1;
    dims[0] = 4;
    obj s2 = {.name = "bad", .format = "dense", .shape = dims, .ndim = 65, .comps = &c,
              .ncomp = 1};
    reject_obj("shape_65_dims", "ZT_E_LIMIT", &s2);
    uint64_t *many = xmalloc(1000 * 8);
    for (int i = 0; i < 1000; i++)
        many[i] = 1;
    s2.shape = many;
    s2.ndim = 1000;
    reject_obj("shape_1000_dims", "ZT_E_LIMIT", &s2);
    free(many);
    free(d);
}

/* The 1.0 layout's own rules. */
static void reject_v10(void)
{
    uint8_t *d = rnd_bytes(64);
    root r = {.v10 = 1};
    zf z;
    const struct {
        const char *name, *dtype, *why;
    } k[] = {{"v10_dtype_float128", "float128", "ZT_E_DTYPE"},
             {"v10_dtype_missing", NULL, "ZT_E_DTYPE"},
             {"v10_dtype_capitalised", "Float32", "ZT_E_DTYPE"}};
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
        zf_init(&z);
        comp c = {.role = "data", .data = d, .len = 16};
        obj o = {.name = "t", .format = "dense", .shape = SHAPE(4), .tensor_dtype = k[i].dtype,
                 .comps = &c, .ncomp = 1};
        zf_add(&z, &o);
        zf_finish(&z, &r);
        emit_reject(&z, k[i].name, k[i].why, NULL);
        zf_free(&z);
    }
    zf_init(&z);
    comp c = {.role = "data", .data = d, .len = 12};
    obj o = {.name = "t", .format = "dense", .shape = SHAPE(4), .tensor_dtype = "float32",
             .comps = &c, .ncomp = 1};
    zf_add(&z, &o);
    zf_finish(&z, &r);
    emit_reject(&z, "v10_length_mismatch", "ZT_E_SIZE", NULL);
    zf_free(&z);
    zf_init(&z);
    root r2 = {.v10 = 1, .version = "2.0"};
    c.len = 16;
    zf_add(&z, &o);
    zf_finish(&z, &r2);
    emit_reject(&z, "v10_version_2", "ZT_E_VERSION", NULL);
    zf_free(&z);
    /* 1.0: the size field is 0 / larger than the file */
    zf_init(&z);
    bb_le(&z.file, 0, 8);
    emit_reject(&z, "v10_manifest_size_0", "ZT_E_MANIFEST_SIZE|ZT_E_TRUNCATED", NULL);
    zf_free(&z);
    zf_init(&z);
    bb_put(&z.file, "\xa0", 1);
    bb_le(&z.file, 2, 8);
    emit_reject(&z, "v10_manifest_size_over_header", "ZT_E_MANIFEST_SIZE|ZT_E_TRUNCATED", NULL);
    zf_free(&z);
    free(d);
}

/* A valid little manifest with `bomb` as the value of "attributes". */
static void bomb_file(const char *name, const char *why, const uint8_t *bomb, size_t n)
{
    zf z;
    zf_init(&z);
    bb m = {0};
    bb_byte(&m, 0xA3);
    raw_text(&m, "version");
    raw_text(&m, "1.2.0");
    raw_text(&m, "objects");
    bb_byte(&m, 0xA0);
    raw_text(&m, "attributes");
    bb_put(&m, bomb, n);
    finish_raw(&z.file, m.p, m.len, 1);
    emit_reject(&z, name, why, NULL);
    zf_free(&z);
    bb_free(&m);
}

/* The whole manifest given. */
static void manifest_file(const char *name, const char *why, const uint8_t *man, size_t n)
{
    zf z;
    zf_init(&z);
    finish_raw(&z.file, man, n, 1);
    emit_reject(&z, name, why, NULL);
    zf_free(&z);
}

static void reject_cbor(void)
{
    bb b = {0};
    /* nesting: root map + 64 arrays as the attributes value = 65 containers */
    for (int i = 0; i < 64; i++)
        bb_byte(&b, 0x81);
    bb_byte(&b, 0x00);
    bomb_file("cbor_depth_65", "ZT_E_DEPTH", b.p, b.len);
    b.len = 0;
    for (int i = 0; i < 100000; i++)
        bb_byte(&b, 0x81);
    bb_byte(&b, 0x00);
    bomb_file("cbor_depth_100000", "ZT_E_DEPTH", b.p, b.len);
    b.len = 0;
    for (int i = 0; i < 100000; i++)
        bb_byte(&b, 0x9F);
    for (int i = 0; i < 100000; i++)
        bb_byte(&b, 0xFF);
    bomb_file("cbor_depth_100000_indefinite", "ZT_E_DEPTH", b.p, b.len);
    b.len = 0;
    for (int i = 0; i < 100000; i++) {
        bb_byte(&b, 0xA1);
        bb_byte(&b, 0x00);
    }
    bb_byte(&b, 0x00);
    bomb_file("cbor_depth_100000_maps", "ZT_E_DEPTH", b.p, b.len);
    b.len = 0;
    for (int i = 0; i < 70; i++)
        bb_byte(&b, 0xC6); /* tag 6, nested */
    bb_byte(&b, 0x00);
    bomb_file("cbor_depth_tags", "ZT_E_DEPTH", b.p, b.len);
    bb_free(&b);

    static const uint8_t arr2p32[] = {0x9B, 0, 0, 0, 1, 0, 0, 0, 0, 0x01, 0x02};
    bomb_file("cbor_array_2p32", "ZT_E_CBOR", arr2p32, sizeof(arr2p32));
    static const uint8_t arr2p32m1[] = {0x9A, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    bomb_file("cbor_array_2p32_minus_1", "ZT_E_CBOR", arr2p32m1, sizeof(arr2p32m1));
    static const uint8_t map2p60[] = {0xBB, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x02};
    bomb_file("cbor_map_2p60", "ZT_E_CBOR", map2p60, sizeof(map2p60));
    static const uint8_t map2p63[] = {0xBB, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x02};
    bomb_file("cbor_map_2p63", "ZT_E_CBOR", map2p63, sizeof(map2p63));
    static const uint8_t text2p62[] = {0x7B, 0x40, 0, 0, 0, 0, 0, 0, 0, 'a', 'b'};
    bomb_file("cbor_text_2p62", "ZT_E_CBOR", text2p62, sizeof(text2p62));
    static const uint8_t bytes_max[] = {0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0};
    bomb_file("cbor_bytes_2p64_minus_1", "ZT_E_CBOR", bytes_max, sizeof(bytes_max));
    static const uint8_t text_over[] = {0x6A, 'a', 'b', 'c'};
    bomb_file("cbor_text_past_end", "ZT_E_CBOR", text_over, sizeof(text_over));
    static const uint8_t indef_chunk_2p62[] = {0x7F, 0x7B, 0x40, 0, 0, 0, 0, 0, 0, 0, 0xFF};
    bomb_file("cbor_indef_text_chunk_2p62", "ZT_E_CBOR", indef_chunk_2p62,
              sizeof(indef_chunk_2p62));
    static const uint8_t indef_nobreak[] = {0x7F, 0x61, 'a', 0x61, 'b'};
    bomb_file("cbor_indef_text_no_break", "ZT_E_CBOR", indef_nobreak, sizeof(indef_nobreak));
    static const uint8_t indef_bytes_nobreak[] = {0x5F, 0x41, 'a'};
    bomb_file("cbor_indef_bytes_no_break", "ZT_E_CBOR", indef_bytes_nobreak,
              sizeof(indef_bytes_nobreak));
    static const uint8_t indef_arr_nobreak[] = {0x9F, 0x01, 0x02};
    bomb_file("cbor_indef_array_no_break", "ZT_E_CBOR", indef_arr_nobreak,
              sizeof(indef_arr_nobreak));
    static const uint8_t indef_map_nobreak[] = {0xBF, 0x61, 'k', 0x01};
    bomb_file("cbor_indef_map_no_break", "ZT_E_CBOR", indef_map_nobreak,
              sizeof(indef_map_nobreak));
    static const uint8_t indef_wrong_chunk[] = {0x7F, 0x41, 'a', 0xFF};
    bomb_file("cbor_indef_text_bytes_chunk", "ZT_E_CBOR", indef_wrong_chunk,
              sizeof(indef_wrong_chunk));
    static const uint8_t indef_nested_chunk[] = {0x7F, 0x7F, 0xFF, 0xFF};
    bomb_file("cbor_indef_text_nested_indef", "ZT_E_CBOR", indef_nested_chunk,
              sizeof(indef_nested_chunk));
    static const uint8_t map_odd_break[] = {0xBF, 0x61, 'k', 0xFF};
    bomb_file("cbor_indef_map_break_after_key", "ZT_E_CBOR", map_odd_break,
              sizeof(map_odd_break));
    static const uint8_t indef_int[] = {0x1F};
    bomb_file("cbor_indefinite_int", "ZT_E_CBOR", indef_int, sizeof(indef_int));
    static const uint8_t indef_tag[] = {0xDF, 0x00};
    bomb_file("cbor_indefinite_tag", "ZT_E_CBOR", indef_tag, sizeof(indef_tag));
    static const uint8_t simple_low[] = {0xF8, 0x10};
    bomb_file("cbor_two_byte_simple_below_32", "ZT_E_CBOR", simple_low, sizeof(simple_low));
    static const struct {
        const char *name;
        uint8_t b[6];
        size_t n;
    } utf8[] = {{"utf8_bad_continuation", {0x62, 0xC3, 0x28}, 3},
                {"utf8_overlong_slash", {0x62, 0xC0, 0xAF}, 3},
                {"utf8_overlong_3byte", {0x63, 0xE0, 0x80, 0xAF}, 4},
                {"utf8_surrogate", {0x63, 0xED, 0xA0, 0x80}, 4},
                {"utf8_above_10ffff", {0x64, 0xF4, 0x90, 0x80, 0x80}, 5},
                {"utf8_lone_continuation", {0x61, 0x80}, 2},
                {"utf8_byte_ff", {0x61, 0xFF}, 2},
                {"utf8_truncated_sequence", {0x62, 'a', 0xE2}, 3},
                {"utf8_f8_lead", {0x65, 0xF8, 0x88, 0x80, 0x80, 0x80}, 6}};
    for (size_t i = 0; i < sizeof(utf8) / sizeof(utf8[0]); i++) {
        char name[64];
        snprintf(name, sizeof(name), "cbor_%s", utf8[i].name);
        bomb_file(name, "ZT_E_CBOR", utf8[i].b, utf8[i].n);
    }
    /* invalid UTF-8 in an object name and split across indefinite chunks */
    static const uint8_t bad_name_man[] = {0xA2, 0x67, 'v', 'e', 'r', 's', 'i', 'o', 'n', 0x65,
                                           '1', '.', '2', '.', '0', 0x67, 'o', 'b', 'j', 'e',
                                           'c', 't', 's', 0xA1, 0x62, 'x', 0xFE, 0xA0};
    manifest_file("cbor_utf8_in_object_name", "ZT_E_CBOR", bad_name_man, sizeof(bad_name_man));
    /* RFC 8949 3.2.3: a chunk boundary cannot split a UTF-8 character */
    static const uint8_t split[] = {0xA1, 0x61, 'k', 0x7F, 0x61, 0xC3, 0x61, 0xA9, 0xFF};
    bomb_file("cbor_utf8_split_across_chunks", "ZT_E_CBOR", split, sizeof(split));
    static const struct {
        const char *name;
        uint8_t b;
    } reserved[] = {{"cbor_reserved_ai_28_uint", 0x1C}, {"cbor_reserved_ai_29_text", 0x7D},
                    {"cbor_reserved_ai_30_map", 0xBE},  {"cbor_reserved_ai_28_simple", 0xFC},
                    {"cbor_reserved_ai_29_neg", 0x3D},  {"cbor_reserved_ai_30_tag", 0xDE}};
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
        bomb_file(reserved[i].name, "ZT_E_CBOR", &reserved[i].b, 1);
    static const uint8_t brk_in_def[] = {0x82, 0x01, 0xFF};
    bomb_file("cbor_break_in_definite_array", "ZT_E_CBOR", brk_in_def, sizeof(brk_in_def));
    static const uint8_t brk_value[] = {0xFF};
    bomb_file("cbor_break_as_value", "ZT_E_CBOR", brk_value, sizeof(brk_value));
    static const uint8_t brk_root[] = {0xFF};
    manifest_file("cbor_break_as_root", "ZT_E_CBOR", brk_root, sizeof(brk_root));
    /* trailing bytes after the manifest item */
    static const uint8_t good_man[] = {0xA2, 0x67, 'v', 'e', 'r', 's', 'i', 'o', 'n', 0x65,
                                       '1', '.', '2', '.', '0', 0x67, 'o', 'b', 'j', 'e',
                                       'c', 't', 's', 0xA0};
    uint8_t trail[sizeof(good_man) + 2];
    memcpy(trail, good_man, sizeof(good_man));
    trail[sizeof(good_man)] = 0x00;
    manifest_file("cbor_trailing_byte", "ZT_E_CBOR", trail, sizeof(good_man) + 1);
    trail[sizeof(good_man)] = 0xA0;
    trail[sizeof(good_man) + 1] = 0xA0;
    manifest_file("cbor_trailing_second_map", "ZT_E_CBOR", trail, sizeof(good_man) + 2);
    trail[sizeof(good_man)] = 0xFF;
    manifest_file("cbor_trailing_break", "ZT_E_CBOR", trail, sizeof(good_man) + 1);
    /* the manifest ends inside an item */
    manifest_file("cbor_ends_inside_map", "ZT_E_CBOR", good_man, sizeof(good_man) - 1);
    static const uint8_t in_head[] = {0xA2, 0x67, 'v', 'e', 'r', 's', 'i', 'o', 'n', 0x79, 0x01};
    manifest_file("cbor_ends_inside_head", "ZT_E_CBOR", in_head, sizeof(in_head));
    static const uint8_t head_cut[] = {0xA2, 0x1B, 0x00, 0x01};
    manifest_file("cbor_ends_inside_uint_head", "ZT_E_CBOR", head_cut, sizeof(head_cut));
}

static void reject_footer(void)
{
    zf z;
    /* bad header magic, good everything else */
    static const char *const magics[] = {"ZTEN1001", "zten1000", "ZTEN0100", "\0\0\0\0\0\0\0\0",
                                         "PK\x03\x04zip"};
    static const char *const names[] = {"magic_header_1001", "magic_header_lower",
                                        "magic_header_0100", "magic_header_zeros",
                                        "magic_header_zip"};
    for (int i = 0; i < 5; i++) {
        zf_init(&z);
        add_dense(&z, "w", F32, SHAPE(4), ENC_RAW, DG_NONE);
        zf_finish(&z, &k_root12);
        memcpy(z.file.p, magics[i], 8);
        emit_reject(&z, names[i], "ZT_E_MAGIC", NULL);
        zf_free(&z);
    }
    /* manifest size fields that do not describe the file */
    static const struct {
        const char *name, *why;
        int kind; /* 0 size given, 1 size = file - 24 + 1, 2 = file size */
        uint64_t size;
    } sz[] = {
        {"footer_size_0", "ZT_E_MANIFEST_SIZE", 0, 0},
        {"footer_size_over_header", "ZT_E_MANIFEST_SIZE", 1, 0},
        {"footer_size_file_size", "ZT_E_MANIFEST_SIZE", 2, 0},
        {"footer_size_larger_than_file", "ZT_E_MANIFEST_SIZE", 0, 100000},
        {"footer_size_2p63", "ZT_E_LIMIT|ZT_E_MANIFEST_SIZE", 0, UINT64_C(1) << 63},
        {"footer_size_u64_max", "ZT_E_LIMIT|ZT_E_MANIFEST_SIZE", 0, UINT64_MAX},
        {"footer_size_u64_max_minus_15", "ZT_E_LIMIT|ZT_E_MANIFEST_SIZE", 0, UINT64_MAX - 15},
        {"footer_size_100MiB", "ZT_E_LIMIT", 0, UINT64_C(100) << 20},
        {"footer_size_64MiB_plus_1", "ZT_E_LIMIT", 0, (UINT64_C(64) << 20) + 1},
        {"footer_size_1GB_plus_1", "ZT_E_LIMIT", 0, UINT64_C(1000000001)},
    };
    for (size_t i = 0; i < sizeof(sz) / sizeof(sz[0]); i++) {
        zf_init(&z);
        add_dense(&z, "w", F32, SHAPE(4), ENC_RAW, DG_NONE);
        zf_finish(&z, &k_root12);
        uint64_t v = sz[i].kind == 0   ? sz[i].size
                     : sz[i].kind == 1 ? z.file.len - 24 + 1
                                       : z.file.len;
        uint8_t *p = z.file.p + z.file.len - 16;
        for (int k = 0; k < 8; k++)
            p[k] = (uint8_t)(v >> (8 * k));
        emit_reject(&z, sz[i].name, sz[i].why, NULL);
        zf_free(&z);
    }
    /* files too small to hold a footer, with the magic */
    static const struct {
        const char *name;
        const char *bytes;
        size_t n;
        const char *why;
    } small[] = {
        {"tiny_magic_only", "ZTEN1000", 8, "ZT_E_TRUNCATED"},
        {"tiny_magic_twice", "ZTEN1000ZTEN1000", 16, "ZT_E_TRUNCATED|ZT_E_MANIFEST_SIZE"},
        {"tiny_24_bytes_size_1", "ZTEN1000\x01\0\0\0\0\0\0\0ZTEN1000", 24, "ZT_E_MANIFEST_SIZE"},
        {"tiny_24_bytes_size_0", "ZTEN1000\0\0\0\0\0\0\0\0ZTEN1000", 24, "ZT_E_MANIFEST_SIZE"},
        {"tiny_25_bytes_size_1_not_map", "ZTEN1000\x00\x01\0\0\0\0\0\0\0ZTEN1000", 25,
         "ZT_E_SCHEMA"},
    };
    for (size_t i = 0; i < sizeof(small) / sizeof(small[0]); i++)
        emit_reject_bytes(small[i].name, small[i].bytes, small[i].n, small[i].why, NULL);

    /* A sparse 101 MiB file declaring a 100 MiB manifest: must be refused by
     * the size check alone (no allocation, no reading of the hole). */
    char path[4200];
    xsnprintf(path, sizeof(path), "%s/reject/footer_size_100MiB_sparse_file.zt", g_out);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die("%s: %s", path, strerror(errno));
    uint64_t fsize = (UINT64_C(101) << 20);
    uint8_t tail[16];
    for (int k = 0; k < 8; k++)
        tail[k] = (uint8_t)((UINT64_C(100) << 20) >> (8 * k));
    memcpy(tail + 8, "ZTEN1000", 8);
    if (pwrite(fd, "ZTEN1000", 8, 0) != 8 || pwrite(fd, tail, 16, (off_t)(fsize - 16)) != 16 ||
        close(fd) != 0)
        die("%s: %s", path, strerror(errno));
    xsnprintf(path, sizeof(path), "%s/reject/footer_size_100MiB_sparse_file.why", g_out);
    write_text(path, "ZT_E_LIMIT");
    g_nreject++;
}

/* What a reader must say about a prefix of a valid file. The layout gives
 * no single answer everywhere: without footer magic the last 8 bytes are read
 * as a 1.0 manifest size, which may be 0 or plausible (then the bytes before
 * it are not a manifest). */
static const char *trunc_why(const uint8_t *p, size_t n)
{
    if (n < 16)
        return "ZT_E_TRUNCATED";
    uint64_t v = le64(p + n - 8);
    if (v > n)
        return "ZT_E_TRUNCATED";
    if (v == 0)
        return "ZT_E_TRUNCATED|ZT_E_MANIFEST_SIZE";
    return "ZT_E_TRUNCATED|ZT_E_MANIFEST_SIZE|ZT_E_CBOR|ZT_E_SCHEMA";
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Cuts a good file at every structural boundary (and around each). */
static void truncations(const char *prefix, int v10)
{
    zf z;
    zf_init(&z);
    size_t bounds[64];
    int nb = 0;
    /* blobs whose bytes all have the top bit set, lengths multiples of 64
     * (no padding between them), one raw and one zstd-compressed */
    uint8_t *a = rnd_bytes(128), *b = rnd_bytes(256);
    for (int i = 0; i < 128; i++)
        a[i] |= 0x80;
    for (int i = 0; i < 256; i++)
        b[i] |= 0x80;
    comp ca = {.role = "data", .dtype = "u8", .data = a, .len = 128, .digest = DG_SHA};
    comp cb = {.role = "data", .dtype = "u16", .data = b, .len = 256};
    obj oa = {.name = "a", .format = "dense", .shape = SHAPE(128), .comps = &ca, .ncomp = 1};
    obj ob = {.name = "b", .format = "dense", .shape = SHAPE(8, 16), .comps = &cb, .ncomp = 1};
    if (v10) {
        ca.dtype = cb.dtype = NULL;
        oa.tensor_dtype = "uint8";
        ob.tensor_dtype = "uint16";
    }
    zf_add(&z, &oa);
    size_t a_end = z.file.len;
    zf_add(&z, &ob);
    size_t man_start = z.file.len;
    root r = {.v10 = v10};
    zf_finish(&z, &r);
    size_t size = z.file.len, man_end = size - (v10 ? 8 : 16);
    size_t list[] = {0, 1, 4, 7, 8, 9, 12, 15, 16, 17, 40, 63, 64, 65, 100, a_end - 1, a_end,
                     a_end + 1, a_end + 200, man_start - 1, man_start, man_start + 1,
                     man_start + 10, (man_start + man_end) / 2, man_end - 2, man_end - 1,
                     man_end, man_end + 1, man_end + 3, man_end + 7, man_end + 8, man_end + 9,
                     man_end + 12, man_end + 15, size - 1};
    for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++)
        if (list[i] < size)
            bounds[nb++] = list[i];
    qsort(bounds, (size_t)nb, sizeof(size_t), cmp_size);
    size_t last = (size_t)-1;
    for (int i = 0; i < nb; i++) {
        size_t cut = bounds[i];
        if (cut == last)
            continue;
        last = cut;
        char name[128];
        snprintf(name, sizeof(name), "%s_%06zu", prefix, cut);
        const char *why = trunc_why(z.file.p, cut);
        /* Cut exactly before the footer magic: the rest is a complete
         * manifest and its size, which reads like a 1.0 file; but the manifest
         * says 1.2.0, whose files end with the magic: truncated. */
        if (!v10 && cut == man_end + 8)
            why = "ZT_E_TRUNCATED";
        emit_reject_bytes(name, z.file.p, cut, why, NULL);
    }
    zf_free(&z);
    free(a);
    free(b);
}

/* A 1.2 manifest (version 1.2.0, "objects") in a file with no footer magic. */
static void reject_missing_footer(void)
{
    zf z;
    zf_init(&z);
    add_dense(&z, "w", F32, SHAPE(4), ENC_RAW, DG_SHA);
    root r = {.no_footer = 1};
    zf_finish(&z, &r);
    emit_reject(&z, "footer_magic_missing_v12", "ZT_E_TRUNCATED", NULL);
    zf_free(&z);
    zf_init(&z);
    add_dense(&z, "w", F32, SHAPE(4), ENC_RAW, DG_SHA);
    root r2 = {.no_footer = 1, .version = "1.7.0"};
    zf_finish(&z, &r2);
    emit_reject(&z, "footer_magic_missing_v17", "ZT_E_TRUNCATED", NULL);
    zf_free(&z);
    /* footer magic damaged in one byte */
    zf_init(&z);
    add_dense(&z, "w", F32, SHAPE(4), ENC_RAW, DG_SHA);
    zf_finish(&z, &k_root12);
    z.file.p[z.file.len - 1] = '1';
    emit_reject(&z, "footer_magic_damaged", "ZT_E_TRUNCATED|ZT_E_MAGIC", NULL);
    zf_free(&z);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_corpus OUTDIR\n");
        return 2;
    }
    xsnprintf(g_out, sizeof(g_out), "%s", argv[1]);
    char path[4200];
    mkdir_p(g_out);
    xsnprintf(path, sizeof(path), "%s/accept", g_out);
    rm_rf(path);
    mkdir_p(path);
    xsnprintf(path, sizeof(path), "%s/reject", g_out);
    rm_rf(path);
    mkdir_p(path);

    accept_dtypes();
    accept_shapes();
    accept_logical();
    accept_zstd();
    accept_digests();
    accept_sparse();
    accept_quantized();
    accept_unknown();
    accept_versions();
    accept_attributes();
    accept_names();
    accept_nul_names();
    accept_many(5000, "many_5000", 97);
    accept_many(100000, "perf_100k", 9973);
    accept_minimal();
    accept_noncanonical_libcbor();
    accept_noncanonical_hand();
    accept_v10();

    reject_schema();
    reject_types();
    reject_layout_rules();
    reject_zstd();
    reject_encoding();
    reject_digests();
    reject_formats();
    reject_duplicates_and_shapes();
    reject_v10();
    reject_cbor();
    reject_footer();
    reject_missing_footer();
    truncations("trunc_v12", 0);
    truncations("trunc_v10", 1);

    printf("gen_corpus: %u accept, %u reject files in %s\n", g_naccept, g_nreject, g_out);
    return 0;
}
