/*
 * gen_corpus_v2: writes the zTensor v2 corpus (spec Draft 4, shared/specs/
 * ztensor-v2/) that run_corpus.sh feeds to `zt`, and that run_truncate_v2
 * cuts at every length.
 *
 * Built from the spec by an encoder independent of libztensor, the way a
 * second implementation would build the files: its own CBOR writer (a tree,
 * maps sorted by their encoded keys for RFC 8949 §4.2.1, and knobs to break
 * every deterministic-encoding rule), XXH3-64 from libxxhash, sha256 from
 * OpenSSL, zstd frames and the seekable format's seek table from libzstd.
 * Nothing from lib/ is linked.
 *
 * Usage: gen_corpus_v2 OUTDIR. Writes, after removing any previous ones,
 *   accept/NAME.zt, NAME.expect, [NAME.json], [NAME.info]
 *   reject/NAME.zt, NAME.why, [NAME.opens]
 * with the meanings run_corpus.sh documents, plus NAME.companion for shard
 * files that belong to another case's root and are not cases themselves.
 * Every accepted file is one feature; every rejected file breaks one MUST
 * of the spec or of a profile, named in the comment above it.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

/* ------------------------------------------------------------ utilities */

static char g_out[4096];
static unsigned g_naccept, g_nreject;

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gen_corpus_v2: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(3);
}

static void *xmalloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p)
        die("out of memory (%zu bytes)", n);
    return p;
}

typedef struct bb {
    uint8_t *p;
    size_t len, cap;
} bb;

static void bb_put(bb *b, const void *d, size_t n)
{
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n)
            cap *= 2;
        if (!(b->p = realloc(b->p, cap)))
            die("out of memory");
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, d, n);
    b->len += n;
}

static void bb_byte(bb *b, uint8_t c)
{
    bb_put(b, &c, 1);
}

static void bb_le(bb *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        bb_byte(b, (uint8_t)(v >> (8 * i)));
}

static void bb_zeros(bb *b, size_t n)
{
    while (n--)
        bb_byte(b, 0);
}

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;
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
    for (const uint8_t *s = p; n;) {
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

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    if (remove(path) != 0 && errno != ENOENT)
        die("remove %s: %s", path, strerror(errno));
    return 0;
}

static void rm_rf(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) == 0 && nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS) != 0)
        die("cannot remove %s", path);
}

static void mkdir_p(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1;; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = 0;
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
                die("mkdir %s: %s", tmp, strerror(errno));
            if (!(*p = c))
                break;
        }
    }
}

static void hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

/* "xxh3:<16 hex>", big-endian as xxhsum prints it. */
static char *xxh3_digest(const void *p, size_t n)
{
    char *s = xmalloc(32);
    snprintf(s, 32, "xxh3:%016llx", (unsigned long long)XXH3_64bits(p, n));
    return s;
}

static void sha256(const void *p, size_t n, uint8_t out[32])
{
    unsigned len = 32;
    if (EVP_Digest(p, n, out, &len, EVP_sha256(), NULL) != 1)
        die("sha256 failed");
}

static char *sha256_digest(const void *p, size_t n)
{
    uint8_t d[32];
    sha256(p, n, d);
    char *s = xmalloc(80);
    memcpy(s, "sha256:", 7);
    hex(d, 32, s + 7);
    return s;
}

/* ------------------------------------------------------ a CBOR writer */

enum { C_UINT, C_NEG, C_TEXT, C_BYTES, C_ARR, C_MAP, C_TAG, C_SIMPLE, C_F16, C_F32, C_F64, C_RAW };

typedef struct cn {
    int t;
    uint64_t u; /* integer, tag number, simple value, float bits */
    const uint8_t *s;
    size_t n;
    struct cn **kids; /* array items; map keys and values, alternating */
    size_t nk, ck;
    int wide;      /* bytes of argument to use instead of the shortest (breaks §4.2.1) */
    bool indef;    /* indefinite length (breaks §4.2.1) */
    bool unsorted; /* map keys in insertion order (breaks §4.2.1 when out of order) */
} cn;

static cn *node(int t)
{
    cn *c = xmalloc(sizeof(*c));
    c->t = t;
    return c;
}
static cn *U(uint64_t v)
{
    cn *c = node(C_UINT);
    c->u = v;
    return c;
}
static cn *NEG(uint64_t v) /* -1 - v */
{
    cn *c = node(C_NEG);
    c->u = v;
    return c;
}
static cn *TN(const void *s, size_t n) /* copies the bytes: callers pass stack buffers */
{
    cn *c = node(C_TEXT);
    uint8_t *copy = xmalloc(n);
    memcpy(copy, s, n);
    c->s = copy;
    c->n = n;
    return c;
}
static cn *T(const char *s)
{
    return TN(s, strlen(s));
}
static cn *BYTES(const void *s, size_t n)
{
    cn *c = TN(s, n);
    c->t = C_BYTES;
    return c;
}
static cn *RAW(const void *s, size_t n) /* pre-encoded bytes, emitted as they are */
{
    cn *c = TN(s, n);
    c->t = C_RAW;
    return c;
}
static cn *FL(int t, uint64_t bits)
{
    cn *c = node(t);
    c->u = bits;
    return c;
}
static cn *SIMPLE(uint64_t v)
{
    cn *c = node(C_SIMPLE);
    c->u = v;
    return c;
}
static cn *ARR(void)
{
    return node(C_ARR);
}
static cn *MAP(void)
{
    return node(C_MAP);
}
static void kid(cn *c, cn *k)
{
    if (c->nk == c->ck) {
        c->ck = c->ck ? 2 * c->ck : 8;
        if (!(c->kids = realloc(c->kids, c->ck * sizeof(*c->kids))))
            die("out of memory");
    }
    c->kids[c->nk++] = k;
}
static cn *push(cn *a, cn *v)
{
    kid(a, v);
    return a;
}
static cn *putk(cn *m, cn *k, cn *v)
{
    kid(m, k);
    kid(m, v);
    return m;
}
static cn *put(cn *m, const char *k, cn *v)
{
    return putk(m, T(k), v);
}
static cn *TAG(uint64_t t, cn *v)
{
    cn *c = node(C_TAG);
    c->u = t;
    kid(c, v);
    return c;
}
static cn *get(cn *m, const char *k) /* the value under a text key */
{
    for (size_t i = 0; i + 1 < m->nk; i += 2)
        if (m->kids[i]->t == C_TEXT && m->kids[i]->n == strlen(k) &&
            !memcmp(m->kids[i]->s, k, m->kids[i]->n))
            return m->kids[i + 1];
    return NULL;
}
static void del(cn *m, const char *k)
{
    for (size_t i = 0; i + 1 < m->nk; i += 2)
        if (m->kids[i]->t == C_TEXT && m->kids[i]->n == strlen(k) &&
            !memcmp(m->kids[i]->s, k, m->kids[i]->n)) {
            memmove(m->kids + i, m->kids + i + 2, (m->nk - i - 2) * sizeof(*m->kids));
            m->nk -= 2;
            return;
        }
}
static void set(cn *m, const char *k, cn *v)
{
    del(m, k);
    put(m, k, v);
}

static void head(bb *b, unsigned major, uint64_t v, int wide)
{
    uint8_t m = (uint8_t)(major << 5);
    int n = wide ? wide : v < 24 ? 0 : v <= 0xFF ? 1 : v <= 0xFFFF ? 2 : v <= 0xFFFFFFFFu ? 4 : 8;
    bb_byte(b, m | (uint8_t)(n == 0 ? v : n == 1 ? 24 : n == 2 ? 25 : n == 4 ? 26 : 27));
    for (int i = n - 1; i >= 0; i--)
        bb_byte(b, (uint8_t)(v >> (8 * i)));
}

static void enc(bb *b, const cn *c);

typedef struct kv {
    bb key;
    const cn *val;
} kv;

static int cmp_kv(const void *pa, const void *pb)
{
    const kv *a = pa, *b = pb;
    size_t n = a->key.len < b->key.len ? a->key.len : b->key.len;
    int r = memcmp(a->key.p, b->key.p, n);
    return r ? r : (a->key.len > b->key.len) - (a->key.len < b->key.len);
}

static void enc_map(bb *b, const cn *c)
{
    size_t n = c->nk / 2;
    if (c->indef)
        bb_byte(b, 0xBF);
    else
        head(b, 5, n, c->wide);
    kv *v = xmalloc(n * sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        enc(&v[i].key, c->kids[2 * i]);
        v[i].val = c->kids[2 * i + 1];
    }
    if (!c->unsorted)
        qsort(v, n, sizeof(*v), cmp_kv);
    for (size_t i = 0; i < n; i++) {
        bb_put(b, v[i].key.p, v[i].key.len);
        enc(b, v[i].val);
        free(v[i].key.p);
    }
    free(v);
    if (c->indef)
        bb_byte(b, 0xFF);
}

static void enc(bb *b, const cn *c)
{
    switch (c->t) {
    case C_UINT:
    case C_NEG:
        head(b, c->t == C_UINT ? 0 : 1, c->u, c->wide);
        break;
    case C_TEXT:
    case C_BYTES:
        if (c->indef) { /* two chunks */
            bb_byte(b, c->t == C_TEXT ? 0x7F : 0x5F);
            head(b, c->t == C_TEXT ? 3 : 2, c->n / 2, 0);
            bb_put(b, c->s, c->n / 2);
            head(b, c->t == C_TEXT ? 3 : 2, c->n - c->n / 2, 0);
            bb_put(b, c->s + c->n / 2, c->n - c->n / 2);
            bb_byte(b, 0xFF);
        } else {
            head(b, c->t == C_TEXT ? 3 : 2, c->n, c->wide);
            bb_put(b, c->s, c->n);
        }
        break;
    case C_ARR:
        if (c->indef)
            bb_byte(b, 0x9F);
        else
            head(b, 4, c->nk, c->wide);
        for (size_t i = 0; i < c->nk; i++)
            enc(b, c->kids[i]);
        if (c->indef)
            bb_byte(b, 0xFF);
        break;
    case C_MAP:
        enc_map(b, c);
        break;
    case C_TAG:
        head(b, 6, c->u, 0);
        enc(b, c->kids[0]);
        break;
    case C_SIMPLE:
        head(b, 7, c->u, 0);
        break;
    case C_F16:
        bb_byte(b, 0xF9);
        bb_byte(b, (uint8_t)(c->u >> 8));
        bb_byte(b, (uint8_t)c->u);
        break;
    case C_F32:
        bb_byte(b, 0xFA);
        for (int i = 3; i >= 0; i--)
            bb_byte(b, (uint8_t)(c->u >> (8 * i)));
        break;
    case C_F64:
        bb_byte(b, 0xFB);
        for (int i = 7; i >= 0; i--)
            bb_byte(b, (uint8_t)(c->u >> (8 * i)));
        break;
    default:
        bb_put(b, c->s, c->n);
    }
}

static cn *shape_of(int n, const uint64_t *d)
{
    cn *a = ARR();
    for (int i = 0; i < n; i++)
        push(a, U(d[i]));
    return a;
}
#define SHAPE(...) shape_of(sizeof((uint64_t[]){__VA_ARGS__}) / 8, (uint64_t[]){__VA_ARGS__})
#define SCALAR() ARR()

/* --------------------------------------------------------- zstd streams */

/* One zstd frame with a content checksum and its content size. */
static void zstd_frame(bb *out, const void *p, size_t n, bool checksum)
{
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, checksum);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 1);
    size_t cap = ZSTD_compressBound(n);
    uint8_t *buf = xmalloc(cap);
    size_t r = ZSTD_compress2(cc, buf, cap, p, n);
    if (ZSTD_isError(r))
        die("zstd: %s", ZSTD_getErrorName(r));
    bb_put(out, buf, r);
    free(buf);
    ZSTD_freeCCtx(cc);
}

enum { SK_NOCHECKSUM = 1, SK_NOTABLE = 2, SK_LIE_DSIZE = 4, SK_UNEQUAL = 8 };

/* The zstd seekable format: frames of `frame` bytes (the last may be shorter;
 * with SK_UNEQUAL the first is one byte short), then the seek table in a
 * skippable frame (magic 0x184D2A5E) ending in Number_Of_Frames,
 * Seek_Table_Descriptor (no checksums) and 0x8F92EAB1. */
static void seekable(bb *out, const uint8_t *p, size_t n, size_t frame, int flags)
{
    size_t nf = 0, at = 0;
    uint32_t cs[4096], ds[4096];
    do {
        size_t k = (flags & SK_UNEQUAL) && nf == 0 ? frame - 1 : frame;
        if (k > n - at)
            k = n - at;
        size_t before = out->len;
        zstd_frame(out, p + at, k, !(flags & SK_NOCHECKSUM));
        cs[nf] = (uint32_t)(out->len - before);
        ds[nf] = (uint32_t)k + ((flags & SK_LIE_DSIZE) && nf == 0);
        at += k;
        nf++;
    } while (at < n && nf < 4096);
    if (flags & SK_NOTABLE)
        return;
    bb_le(out, 0x184D2A5E, 4);
    bb_le(out, nf * 8 + 9, 4);
    for (size_t i = 0; i < nf; i++) {
        bb_le(out, cs[i], 4);
        bb_le(out, ds[i], 4);
    }
    bb_le(out, nf, 4);
    bb_byte(out, 0);
    bb_le(out, 0x8F92EAB1u, 4);
}

/* ---------------------------------------------------------- containers */

static const uint8_t k_magic[8] = {0x89, 'Z', 'T', '2', 0x0D, 0x0A, 0x1A, 0x0A};

typedef struct fopt { /* footer fields to get wrong on purpose */
    bool set_off, set_len, set_hash, bad_magic;
    uint64_t off, len, hash;
    uint32_t version, reserved;
} fopt;

typedef struct zf {
    bb b;
    cn *root, *objs;
    uint64_t align;
    uint64_t last_off, last_len;
} zf;

static void zf_init(zf *f, uint64_t align)
{
    memset(f, 0, sizeof(*f));
    bb_put(&f->b, k_magic, 8);
    f->root = MAP();
    f->objs = MAP();
    put(f->root, "objects", f->objs);
    f->align = align ? align : 4096;
}

/* Zero padding up to the next multiple of align at or after 4096 (§2.4). */
static uint64_t zf_pad(zf *f, uint64_t align)
{
    uint64_t off = f->b.len <= 4096 ? 4096 : (f->b.len + align - 1) / align * align;
    bb_zeros(&f->b, off - f->b.len);
    return off;
}

static uint64_t zf_blob(zf *f, const void *p, size_t n)
{
    f->last_off = zf_pad(f, f->align);
    f->last_len = n;
    bb_put(&f->b, p, n);
    return f->last_off;
}

static void footer(bb *b, uint64_t off, uint64_t len, uint64_t hash, const fopt *o)
{
    fopt z = {0};
    o = o ? o : &z;
    bb_le(b, o->set_off ? o->off : off, 8);
    bb_le(b, o->set_len ? o->len : len, 8);
    bb_le(b, o->set_hash ? o->hash : hash, 8);
    bb_le(b, o->version ? o->version : 2, 4);
    bb_le(b, o->reserved, 4);
    uint8_t m[8];
    memcpy(m, k_magic, 8);
    if (o->bad_magic)
        m[3] = '3';
    bb_put(b, m, 8);
}

/* The manifest blob (these exact bytes), then the footer right after it. */
static void zf_finish_bytes(zf *f, const uint8_t *m, size_t n, const fopt *o)
{
    uint64_t off = zf_pad(f, f->align);
    bb_put(&f->b, m, n);
    footer(&f->b, off, n, XXH3_64bits(m, n), o);
}

static void zf_finish(zf *f, const fopt *o)
{
    bb m = {0};
    enc(&m, f->root);
    zf_finish_bytes(f, m.p, m.len, o);
    free(m.p);
}

/* A data shard (§7.2): magic, blobs, and a footer of zeros. */
static void zf_finish_data_shard(zf *f)
{
    footer(&f->b, 0, 0, 0, NULL);
}

/* ------------------------------------------------------------- objects */

enum { E_RAW, E_ZSTD, E_SEEK, E_OTHER };

typedef struct ps {
    const char *role, *dtype, *type;
    const void *data; /* the decoded bytes */
    size_t len;
    int enc;
    const char *digest; /* "xxh3", "sha256", NULL, or a string written as it is */
    zf *shard_file;     /* the blob goes there, and "shard" names it */
    const char *shard;
    int64_t dlen_delta; /* decoded_length lie */
    int seek_flags;
    size_t frame; /* seekable frame size; 0 = 1000 */
    bool alias;   /* share the previous part's blob */
} ps;

typedef struct expect {
    char *obj, *role;
    uint8_t *data;
    size_t len;
} expect;
static expect g_exp[256];
static size_t g_nexp;
static bb g_json, g_info, g_opens;

static void exp_add(const char *obj, const char *role, const void *p, size_t n)
{
    if (g_nexp == 256)
        die("too many expectations");
    expect *e = &g_exp[g_nexp++];
    e->obj = strdup(obj);
    e->role = strdup(role);
    e->data = xmalloc(n);
    memcpy(e->data, p, n);
    e->len = n;
}

static char *digest_of(const char *kind, const void *p, size_t n)
{
    if (!kind)
        return NULL;
    if (!strcmp(kind, "xxh3"))
        return xxh3_digest(p, n);
    if (!strcmp(kind, "sha256"))
        return sha256_digest(p, n);
    return strdup(kind);
}

static cn *make_part(zf *f, ps *p)
{
    cn *m = MAP();
    bb stored = {0};
    put(m, "dtype", T(p->dtype));
    if (p->type)
        put(m, "type", T(p->type));
    if (p->enc == E_RAW)
        bb_put(&stored, p->data, p->len);
    else if (p->enc == E_ZSTD || p->enc == E_OTHER)
        zstd_frame(&stored, p->data, p->len, true);
    else
        seekable(&stored, p->data, p->len, p->frame ? p->frame : 1000, p->seek_flags);
    zf *dst = p->shard_file ? p->shard_file : f;
    uint64_t off = p->alias ? dst->last_off : zf_blob(dst, stored.p, stored.len);
    uint64_t len = p->alias ? dst->last_len : stored.len;
    put(m, "blob", push(push(ARR(), U(off)), U(len)));
    if (p->shard)
        put(m, "shard", T(p->shard));
    if (p->enc != E_RAW) {
        put(m, "encoding",
            T(p->enc == E_ZSTD   ? "zstd"
              : p->enc == E_SEEK ? "zt.zstd-seekable/1"
                                 : "acme.lz9/1"));
        put(m, "decoded_length", U((uint64_t)((int64_t)p->len + p->dlen_delta)));
    }
    char *d = digest_of(p->digest, p->data, p->len);
    if (d)
        put(m, "digest", T(d));
    free(stored.p);
    return m;
}

/* An object of n parts; the decoded bytes of each become an expectation. */
static cn *add_obj(zf *f, const char *name, const char *layout, cn *shape, cn *attrs, int n,
                   ps *parts)
{
    cn *o = MAP(), *pm = MAP();
    put(o, "shape", shape);
    put(o, "layout", T(layout));
    if (attrs)
        put(o, "attributes", attrs);
    for (int i = 0; i < n; i++) {
        putk(pm, T(parts[i].role), make_part(f, &parts[i]));
        exp_add(name, parts[i].role, parts[i].data, parts[i].len);
    }
    put(o, "parts", pm);
    putk(f->objs, T(name), o);
    return o;
}

static cn *dense(zf *f, const char *name, const char *dtype, const char *type, cn *shape,
                 const void *data, size_t len, const char *digest)
{
    ps p = {
        .role = "data", .dtype = dtype, .type = type, .data = data, .len = len, .digest = digest};
    return add_obj(f, name, "dense", shape, NULL, 1, &p);
}

static cn *part_of(cn *obj, const char *role)
{
    return get(get(obj, "parts"), role);
}

/* ---------------------------------------------------------- writing cases */

static void path_of(char *out, size_t cap, const char *dir, const char *name, const char *ext)
{
    if ((size_t)snprintf(out, cap, "%s/%s/%s%s", g_out, dir, name, ext) >= cap)
        die("path too long");
}

static void write_expect(const char *name)
{
    char p[4096], rel[512];
    bb e = {0};
    path_of(p, sizeof(p), "accept", name, ".d");
    if (g_nexp)
        mkdir_p(p);
    for (size_t i = 0; i < g_nexp; i++) {
        snprintf(rel, sizeof(rel), "%s.d/%zu.bin", name, i);
        path_of(p, sizeof(p), "accept", rel, "");
        write_file(p, g_exp[i].data, g_exp[i].len);
        bb_put(&e, g_exp[i].obj, strlen(g_exp[i].obj));
        bb_byte(&e, '\t');
        bb_put(&e, g_exp[i].role, strlen(g_exp[i].role));
        bb_byte(&e, '\t');
        bb_put(&e, rel, strlen(rel));
        bb_byte(&e, '\n');
    }
    path_of(p, sizeof(p), "accept", name, ".expect");
    write_file(p, e.p, e.len);
    free(e.p);
}

static void reset_case(void)
{
    for (size_t i = 0; i < g_nexp; i++)
        free(g_exp[i].obj), free(g_exp[i].role), free(g_exp[i].data);
    g_nexp = 0;
    g_json.len = g_info.len = g_opens.len = 0;
}

static void write_side(const char *dir, const char *name, const char *ext, const bb *b)
{
    char p[4096];
    if (!b->len)
        return;
    path_of(p, sizeof(p), dir, name, ext);
    write_file(p, b->p, b->len);
}

static void accept_file(const char *name, const bb *file)
{
    char p[4096];
    path_of(p, sizeof(p), "accept", name, ".zt");
    write_file(p, file->p, file->len);
    write_expect(name);
    write_side("accept", name, ".json", &g_json);
    write_side("accept", name, ".info", &g_info);
    g_naccept++;
    reset_case();
}

static void reject_file(const char *name, const bb *file, const char *why)
{
    char p[4096];
    path_of(p, sizeof(p), "reject", name, ".zt");
    write_file(p, file->p, file->len);
    path_of(p, sizeof(p), "reject", name, ".why");
    write_file(p, why, strlen(why));
    write_side("reject", name, ".opens", &g_opens);
    g_nreject++;
    reset_case();
}

/* A file beside a case's root that is not a case itself (a shard). */
static void companion(const char *dir, const char *name, const bb *file)
{
    char p[4096];
    path_of(p, sizeof(p), dir, name, ".zt");
    write_file(p, file->p, file->len);
    path_of(p, sizeof(p), dir, name, ".companion");
    write_file(p, "", 0);
}

/* NAME.json line: what `zt info --json` shows at a JSON pointer. */
__attribute__((format(printf, 1, 2))) static void json_line(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    bb_put(&g_json, line, (size_t)n);
    bb_byte(&g_json, '\n');
}

static void info_line(const char *s)
{
    bb_put(&g_info, s, strlen(s));
    bb_byte(&g_info, '\n');
}

/* NAME.opens line: the file opens; `zt get OBJ PART` exits with `code`. */
static void opens(const char *obj, const char *role, int code)
{
    char line[512];
    int n = snprintf(line, sizeof(line), "%s\t%s\t%d\n", obj, role, code);
    bb_put(&g_opens, line, (size_t)n);
}

/* The content digest (§6.4) of f's objects, computed here from the tree:
 * ["zt.content/1", {name: {shape, layout, attributes?, parts: {role:
 * {dtype, type?, digest}}}}], deterministic CBOR, sha256. */
static char *content_digest(const zf *f)
{
    cn *objs = MAP();
    for (size_t i = 0; i + 1 < f->objs->nk; i += 2) {
        cn *o = f->objs->kids[i + 1], *r = MAP(), *parts = MAP(), *pm = get(o, "parts");
        put(r, "shape", get(o, "shape"));
        put(r, "layout", get(o, "layout"));
        if (get(o, "attributes"))
            put(r, "attributes", get(o, "attributes"));
        for (size_t j = 0; j + 1 < pm->nk; j += 2) {
            cn *p = pm->kids[j + 1], *q = MAP();
            put(q, "dtype", get(p, "dtype"));
            if (get(p, "type"))
                put(q, "type", get(p, "type"));
            put(q, "digest", get(p, "digest"));
            putk(parts, pm->kids[j], q);
        }
        put(r, "parts", parts);
        putk(objs, f->objs->kids[i], r);
    }
    bb b = {0};
    enc(&b, push(push(ARR(), T("zt.content/1")), objs));
    char *d = sha256_digest(b.p, b.len);
    free(b.p);
    return d;
}

/* ------------------------------------------------------------ accepted */

static const char *const k_dtypes[12] = {"f64", "f32", "f16", "bf16", "i64", "i32",
                                         "i16", "i8",  "u64", "u32",  "u16", "u8"};
static const unsigned k_widths[12] = {8, 4, 2, 2, 8, 4, 2, 1, 8, 4, 2, 1};

static void finish_accept(const char *name, zf *f)
{
    zf_finish(f, NULL);
    accept_file(name, &f->b);
    free(f->b.p);
}

/* One file per storage dtype; also the basic file of the truncation test. */
static void acc_dtypes(void)
{
    for (int i = 0; i < 12; i++) {
        zf f;
        zf_init(&f, 0);
        size_t n = 3 * 5 * k_widths[i];
        uint8_t *d = rnd_bytes(n);
        dense(&f, "t", k_dtypes[i], NULL, SHAPE(3, 5), d, n, "xxh3");
        char name[64];
        snprintf(name, sizeof(name), "dtype_%s", k_dtypes[i]);
        json_line("/version\t\"2\"");
        json_line("/objects/t/format\t\"dense\"");
        json_line("/objects/t/components/data/dtype\t\"%s\"", k_dtypes[i]);
        json_line("/objects/t/components/data/digest_covers\t\"decoded\"");
        json_line("/content_digest\t\"%s\"", content_digest(&f));
        finish_accept(name, &f);
        free(d);
    }
}

/* Appendix A: every registered logical type on its dtype, with its size. */
static void acc_types(void)
{
    static const struct {
        const char *type, *dtype;
        uint64_t n;
        size_t bytes;
    } t[] = {
        {"bool", "u8", 7, 7},        {"f8_e4m3fn", "u8", 6, 6},   {"f8_e5m2", "u8", 6, 6},
        {"f8_e4m3fnuz", "u8", 6, 6}, {"f8_e5m2fnuz", "u8", 6, 6}, {"f8_e8m0", "u8", 6, 6},
        {"f4_e2m1", "u8", 7, 4},     {"complex64", "f32", 3, 24}, {"complex128", "f64", 3, 48},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        zf f;
        zf_init(&f, 0);
        uint8_t *d = rnd_bytes(t[i].bytes);
        if (!strcmp(t[i].type, "bool"))
            for (size_t k = 0; k < t[i].bytes; k++)
                d[k] &= 1;
        if (!strcmp(t[i].type, "f4_e2m1"))
            d[t[i].bytes - 1] &= 0x0F; /* 7 nibbles: the 8th must be 0 */
        dense(&f, "t", t[i].dtype, t[i].type, SHAPE(t[i].n), d, t[i].bytes, "sha256");
        json_line("/objects/t/components/data/type\t\"%s\"", t[i].type);
        char name[64];
        snprintf(name, sizeof(name), "type_%s", t[i].type);
        finish_accept(name, &f);
        free(d);
    }
}

/* Shapes: a scalar, an empty tensor (a zero-length blob, still aligned),
 * rank 64, and an object of zero elements with dimensions. */
static void acc_shapes(void)
{
    zf f;
    zf_init(&f, 0);
    uint8_t s[4] = {1, 2, 3, 4}, *big = rnd_bytes(8);
    dense(&f, "scalar", "f32", NULL, SCALAR(), s, 4, "xxh3");
    dense(&f, "empty", "f32", NULL, SHAPE(0), "", 0, "xxh3");
    dense(&f, "zero_rows", "i16", NULL, SHAPE(0, 1000), "", 0, NULL);
    cn *r64 = ARR();
    for (int i = 0; i < 64; i++)
        push(r64, U(i == 0 ? 8 : 1));
    dense(&f, "rank64", "u8", NULL, r64, big, 8, NULL);
    finish_accept("shapes", &f);
    free(big);
}

/* Encodings and digests over the decoded bytes (§3.4): zstd and
 * zt.zstd-seekable/1 (several frames, the last shorter, and one frame). */
static void acc_encodings(void)
{
    zf f;
    zf_init(&f, 0);
    size_t n = 10000;
    uint8_t *d = xmalloc(n);
    for (size_t i = 0; i < n; i++)
        d[i] = (uint8_t)(i % 7 + (i / 100));
    ps z = {.role = "data", .dtype = "u8", .data = d, .len = n, .enc = E_ZSTD, .digest = "xxh3"};
    add_obj(&f, "zstd", "dense", SHAPE(10000), NULL, 1, &z);
    ps sk = {.role = "data",
             .dtype = "u16",
             .data = d,
             .len = n,
             .enc = E_SEEK,
             .digest = "sha256",
             .frame = 4096};
    add_obj(&f, "seekable", "dense", SHAPE(5000), NULL, 1, &sk);
    ps one = {.role = "data",
              .dtype = "u8",
              .data = d,
              .len = 100,
              .enc = E_SEEK,
              .digest = "xxh3",
              .frame = 4096};
    add_obj(&f, "seekable_one_frame", "dense", SHAPE(100), NULL, 1, &one);
    json_line("/objects/zstd/components/data/encoding\t\"zstd\"");
    json_line("/objects/zstd/components/data/uncompressed_length\t10000");
    json_line("/objects/seekable/components/data/encoding\t\"zt.zstd-seekable/1\"");
    json_line("/content_digest\t\"%s\"", content_digest(&f));
    finish_accept("encodings", &f);
    free(d);
}

/* §3.1: attributes of every permitted type, at file and object level, and
 * floats in their shortest widths; unknown keys at every level ignored. */
static void acc_attributes(void)
{
    zf f;
    zf_init(&f, 0);
    uint8_t d[8] = {0};
    cn *a = MAP();
    put(a, "int", U(42));
    put(a, "neg", NEG(41));
    put(a, "big", U(UINT64_MAX));
    put(a, "text", T("caf\xc3\xa9"));
    put(a, "bytes", BYTES("\x00\x01\xff", 3));
    put(a, "t", SIMPLE(21));
    put(a, "f", SIMPLE(20));
    put(a, "null", SIMPLE(22));
    put(a, "half", FL(C_F16, 0x3E00));                  /* 1.5 */
    put(a, "single", FL(C_F32, 0x3DCCCCCD));            /* 0.1f */
    put(a, "double", FL(C_F64, 0x3FB999999999999Aull)); /* 0.1 */
    put(a, "nan", FL(C_F16, 0x7E00));
    put(a, "inf", FL(C_F16, 0x7C00));
    put(a, "nested", push(push(ARR(), U(1)), put(MAP(), "k", push(ARR(), T("v")))));
    put(a, "map_int_keys", putk(putk(MAP(), U(1), T("one")), NEG(0), T("minus one")));
    cn *o = dense(&f, "t", "f32", NULL, SHAPE(2), d, 8, "xxh3");
    put(o, "attributes", a);
    put(o, "x-unknown-object-key", T("ignored"));
    put(part_of(o, "data"), "x-unknown-part-key", push(ARR(), U(7)));
    put(f.root, "attributes", put(MAP(), "license", T("MIT")));
    put(f.root, "x-unknown-root-key", put(MAP(), "deep", U(1)));
    json_line("/attributes/license\t\"MIT\"");
    json_line("/objects/t/attributes/half\t1.5");
    json_line("/objects/t/attributes/big\t\"18446744073709551615\"");
    json_line("/objects/t/attributes/nan\t\"NaN\"");
    json_line("/objects/t/attributes/bytes\t{\"$bytes\": \"AAH/\"}");
    json_line("/content_digest\t\"%s\"", content_digest(&f));
    finish_accept("attributes", &f);
}

/* §2.4: identical references are allowed (weight tying); names at the
 * limits of §3.5; 64 KiB placement; no objects at all. */
static void acc_blobs_and_names(void)
{
    zf f;
    zf_init(&f, 65536);
    uint8_t *d = rnd_bytes(64);
    dense(&f, "embed", "f32", NULL, SHAPE(4, 4), d, 64, "xxh3");
    ps tied = {
        .role = "data", .dtype = "f32", .data = d, .len = 64, .digest = "xxh3", .alias = true};
    add_obj(&f, "lm_head", "dense", SHAPE(4, 4), NULL, 1, &tied);
    char longname[1025];
    memset(longname, 'n', 1024);
    longname[1024] = 0;
    dense(&f, longname, "u8", NULL, SHAPE(1), d, 1, NULL);
    dense(&f, "\xe2\x82\xac/weights.\xf0\x9f\x98\x80", "u8", NULL, SHAPE(1), d, 1, NULL);
    finish_accept("aliased_names_64k", &f);
    zf_init(&f, 0);
    finish_accept("no_objects", &f);
    zf_init(&f, 0);
    dense(&f, "t", "u8", NULL, SHAPE(4), d, 4, "xxh3");
    fopt o = {.reserved = 0xDEADBEEF}; /* §2.3: readers MUST ignore it */
    zf_finish(&f, &o);
    accept_file("footer_reserved_ignored", &f.b);
    free(d);
}

/* §3.1: nesting up to 32 levels from the root is allowed. */
static void acc_depth(void)
{
    zf f;
    zf_init(&f, 0);
    uint8_t d[1] = {0};
    cn *o = dense(&f, "t", "u8", NULL, SHAPE(1), d, 1, NULL);
    cn *v = U(1); /* root, objects, t, attributes = 4 levels; 28 arrays more */
    for (int i = 0; i < 28; i++)
        v = push(ARR(), v);
    put(o, "attributes", put(MAP(), "deep", v));
    finish_accept("depth_32", &f);
}

static void le_put(uint8_t *p, uint64_t v, unsigned w)
{
    for (unsigned i = 0; i < w; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* An index array of n values of width w. */
static uint8_t *idx(const uint64_t *v, size_t n, unsigned w)
{
    uint8_t *p = xmalloc(n * w);
    for (size_t i = 0; i < n; i++)
        le_put(p + i * w, v[i], w);
    return p;
}

/* zt.sparse_csr/1 on a 3 x 5 matrix with 4 non-zeros (rows 0, 2, 2, 0+...). */
typedef struct csr_case {
    uint64_t indptr[4], indices[4];
    unsigned w;
} csr_case;

static cn *add_csr(zf *f, const char *name, const csr_case *c, const char *vtype, size_t vbytes)
{
    uint8_t *ip = idx(c->indptr, 4, c->w), *ix = idx(c->indices, 4, c->w);
    uint8_t *v = rnd_bytes(vbytes);
    if (vtype && !strcmp(vtype, "bool"))
        for (size_t i = 0; i < vbytes; i++)
            v[i] &= 1;
    const char *dt = c->w == 4 ? "u32" : "u64";
    ps parts[3] = {
        {.role = "values",
         .dtype = vtype ? "u8" : "f32",
         .type = vtype,
         .data = v,
         .len = vbytes,
         .digest = "xxh3"},
        {.role = "indices", .dtype = dt, .data = ix, .len = 4 * c->w, .digest = "xxh3"},
        {.role = "indptr", .dtype = dt, .data = ip, .len = 4 * c->w, .digest = "xxh3"},
    };
    return add_obj(f, name, "zt.sparse_csr/1", SHAPE(3, 5), NULL, 3, parts);
}

static const csr_case k_csr = {{0, 2, 2, 4}, {0, 3, 1, 4}, 4};

static cn *add_coo(zf *f, const char *name, const uint64_t *coords, size_t nnz, unsigned w)
{
    uint8_t *co = idx(coords, 2 * nnz, w), *v = rnd_bytes(nnz * 8);
    ps parts[2] = {
        {.role = "values", .dtype = "f64", .data = v, .len = nnz * 8, .digest = "xxh3"},
        {.role = "coords",
         .dtype = w == 4 ? "u32" : "u64",
         .data = co,
         .len = 2 * nnz * w,
         .digest = "xxh3"},
    };
    return add_obj(f, name, "zt.sparse_coo/1", SHAPE(4, 6), NULL, 2, parts);
}

/* A coo of 3 cells in a 4 x 6 tensor: structure of arrays (rows, then columns). */
static const uint64_t k_coo[6] = {0, 3, 1, /* dim 0 */ 5, 0, 5 /* dim 1 */};

/* zt.quant_group/1 in the profile's worked points. shape [rows, cols]. */
static cn *qg_attrs(unsigned bits, uint64_t gs, uint64_t axis, const char *word, unsigned per,
                    const char *order, const char *sf, const char *form, const char *zpack)
{
    cn *a = MAP(), *zp = put(MAP(), "form", T(form));
    put(a, "bits", U(bits));
    put(a, "group_size", U(gs));
    put(a, "axis", U(axis));
    put(a, "packing", put(put(put(MAP(), "word", T(word)), "order", T(order)), "per_word", U(per)));
    put(a, "scale_form", T(sf));
    if (!strcmp(form, "implied"))
        put(zp, "value", U(8));
    if (zpack)
        put(zp, "packing", T(zpack));
    put(a, "zero_point", zp);
    return a;
}

static cn *add_qg(zf *f, const char *name, cn *attrs, cn *shape, const char *ddt, size_t dbytes,
                  const char *sdt, const char *stype, size_t sbytes, const char *zdt, size_t zbytes)
{
    uint8_t *d = rnd_bytes(dbytes), *s = rnd_bytes(sbytes), *z = rnd_bytes(zbytes ? zbytes : 1);
    ps parts[3] = {
        {.role = "data", .dtype = ddt, .data = d, .len = dbytes, .digest = "xxh3"},
        {.role = "scales", .dtype = sdt, .type = stype, .data = s, .len = sbytes, .digest = "xxh3"},
        {.role = "zeros", .dtype = zdt, .data = z, .len = zbytes, .digest = "xxh3"},
    };
    return add_obj(f, name, "zt.quant_group/1", shape, attrs, zdt ? 3 : 2, parts);
}

static cn *mx_attrs(uint64_t bs, const char *sf)
{
    cn *a = put(MAP(), "block_size", U(bs));
    if (sf)
        put(a, "scale_form", T(sf));
    return a;
}

static cn *add_mx(zf *f, const char *name, cn *attrs, cn *shape, const char *ddt,
                  const char *dtype_l, size_t dbytes, size_t sbytes)
{
    uint8_t *d = rnd_bytes(dbytes), *s = rnd_bytes(sbytes);
    ps parts[2] = {
        {.role = "data", .dtype = ddt, .type = dtype_l, .data = d, .len = dbytes},
        {.role = "scales", .dtype = "u8", .type = "f8_e8m0", .data = s, .len = sbytes},
    };
    return add_obj(f, name, "zt.mx/1", shape, attrs, 2, parts);
}

static void acc_layouts(void)
{
    zf f;
    zf_init(&f, 0);
    add_csr(&f, "csr32", &k_csr, NULL, 16);
    csr_case c64 = k_csr;
    c64.w = 8;
    add_csr(&f, "csr64_bool", &c64, "bool", 4);
    add_coo(&f, "coo32", k_coo, 3, 4);
    add_coo(&f, "coo64", k_coo, 3, 8);
    /* AWQ int4: u32 words of 8 codes, f16 scales, packed zeros; [256, 64], group 128 on axis 0 */
    add_qg(&f, "awq",
           qg_attrs(4, 128, 0, "u32", 8, "lsb_first", "f16_factors", "tensor", "same_as_data"),
           SHAPE(256, 64), "u32", 256 * 64 / 8 * 4, "f16", NULL, 2 * 64 * 2, "u32", 2 * 64 / 8 * 4);
    /* MLX affine-u4: plain zeros, group 64 on axis 1 */
    add_qg(&f, "mlx", qg_attrs(4, 64, 1, "u32", 8, "lsb_first", "f16_factors", "tensor", "plain"),
           SHAPE(8, 128), "u32", 8 * 128 / 8 * 4, "bf16", NULL, 8 * 2 * 2, "f16", 8 * 2 * 2);
    /* bias-8 int4, implied zero point; GPTQ order; symmetric int8 per channel; e8m0 scales */
    add_qg(&f, "bias8", qg_attrs(4, 32, 0, "u32", 8, "msb_first", "f32_factors", "implied", NULL),
           SHAPE(64, 4), "i32", 64 * 4 / 8 * 4, "f32", NULL, 2 * 4 * 4, NULL, 0);
    add_qg(&f, "int8", qg_attrs(8, 0, 0, "u8", 1, "lsb_first", "f32_factors", "none", NULL),
           SHAPE(4, 3), "i8", 12, "f32", NULL, 4 * 3 * 4, NULL, 0);
    add_qg(&f, "e8m0", qg_attrs(2, 16, 1, "u8", 4, "lsb_first", "e8m0_exponent", "none", NULL),
           SHAPE(2, 32), "u8", 16, "u8", "f8_e8m0", 4, NULL, 0);
    /* zt.mx/1: MXFP4 on the last axis, MXINT8 on axis 0, MXFP8 */
    add_mx(&f, "mxfp4", mx_attrs(32, "e8m0_exponent"), SHAPE(2, 64), "u8", "f4_e2m1", 64, 4);
    cn *a = mx_attrs(32, "e8m0_exponent");
    put(a, "axis", U(0));
    add_mx(&f, "mxint8", a, SHAPE(64, 3), "i8", NULL, 192, 6);
    add_mx(&f, "mxfp8", mx_attrs(32, "e8m0_exponent"), SHAPE(32), "u8", "f8_e5m2", 32, 1);
    /* gguf.q8_0/1: 34-byte blocks of 32 elements, the logical shape kept */
    uint8_t *g = rnd_bytes(2 * 34);
    ps gp = {.role = "data", .dtype = "u8", .data = g, .len = 68, .digest = "xxh3"};
    add_obj(&f, "q8", "gguf.q8_0/1", SHAPE(2, 32),
            put(put(MAP(), "elems_per_block", U(32)), "block_bytes", U(34)), 1, &gp);
    json_line("/objects/csr32/format\t\"zt.sparse_csr/1\"");
    json_line("/objects/awq/components/zeros/dtype\t\"u32\"");
    json_line("/objects/q8/interpreted\t!absent");
    finish_accept("layouts", &f);
}

/* §4.2, §5.2, §5.3: an unknown layout and an unknown logical type are
 * exposed structurally (the file is valid; the object is uninterpreted). */
static void acc_unknown(void)
{
    zf f;
    zf_init(&f, 0);
    uint8_t *d = rnd_bytes(40);
    ps p[2] = {{.role = "pages", .dtype = "bf16", .data = d, .len = 32, .digest = "xxh3"},
               {.role = "table", .dtype = "i32", .data = d, .len = 8}};
    add_obj(&f, "kv", "pie.paged_kv/1", SHAPE(2, 8), put(MAP(), "page", U(16)), 2, p);
    dense(&f, "fp6", "u8", "f6_e3m2", SHAPE(5), d, 4, "xxh3"); /* size function unknown */
    json_line("/objects/kv/interpreted\tfalse");
    json_line("/objects/fp6/interpreted\tfalse");
    json_line("/objects/kv/format\t\"pie.paged_kv/1\"");
    finish_accept("unknown_layout_and_type", &f);
    free(d);
}

/* §7: a root whose parts live in two data shards and in itself; the shard
 * files are named by Appendix B's positional convention. */
static void make_sharded(const char *dir, const char *root, int break_what)
{
    zf r, s1, s2;
    zf_init(&r, 0);
    zf_init(&s1, 0);
    zf_init(&s2, 0);
    uint8_t *a = rnd_bytes(4000), *b = rnd_bytes(6000), *c = rnd_bytes(100);
    ps pa = {.role = "data",
             .dtype = "u8",
             .data = a,
             .len = 4000,
             .digest = "xxh3",
             .shard_file = &s1,
             .shard = "00001-of-00002"};
    add_obj(&r, "layer0", "dense", SHAPE(4000), NULL, 1, &pa);
    ps pb = {.role = "data",
             .dtype = "u16",
             .data = b,
             .len = 6000,
             .digest = "sha256",
             .shard_file = &s2,
             .shard = "00002-of-00002",
             .enc = E_ZSTD};
    add_obj(&r, "layer1", "dense", SHAPE(3000), NULL, 1, &pb);
    ps pc = {.role = "data",
             .dtype = "u8",
             .data = c,
             .len = 100,
             .digest = "xxh3",
             .shard_file = &s2,
             .shard = "00002-of-00002"};
    add_obj(&r, "layer2", "dense", SHAPE(100), NULL, 1, &pc);
    dense(&r, "local", "u8", NULL, SHAPE(100), c, 100, "xxh3");
    zf_finish_data_shard(&s1);
    zf_finish_data_shard(&s2);
    if (break_what == 2) /* the table's size is the file's size */
        bb_byte(&s2.b, 0);
    cn *tab = MAP();
    put(tab, "00001-of-00002",
        put(put(MAP(), "size", U(s1.b.len)), "digest", T(sha256_digest(s1.b.p, s1.b.len))));
    put(tab, "00002-of-00002",
        put(put(MAP(), "size", U(s2.b.len - (break_what == 2))), "digest",
            T(xxh3_digest(s2.b.p, s2.b.len))));
    if (break_what == 3) /* the digest is the shard's identity: a padding byte differs */
        s2.b.p[s2.last_off - 1] ^= 1;
    put(r.root, "shards", tab);
    if (!break_what)
        json_line("/content_digest\t\"%s\"", content_digest(&r));
    zf_finish(&r, NULL);
    char name[256];
    snprintf(name, sizeof(name), "%s-00001-of-00002", root);
    if (break_what != 1)
        companion(dir, name, &s1.b);
    snprintf(name, sizeof(name), "%s-00002-of-00002", root);
    companion(dir, name, &s2.b);
    if (!break_what) {
        json_line("/shards/00001-of-00002/status\t\"ok\"");
        json_line("/shards/00001-of-00002/file\t\"%s-00001-of-00002.zt\"", root);
        json_line("/objects/layer1/components/data/shard\t\"00002-of-00002\"");
        json_line("/objects/local/components/data/shard\t!absent");
        accept_file(root, &r.b);
    } else {
        opens("layer0", "data", break_what == 1 ? 1 : 0);
        opens("local", "data", 0);
        reject_file(root, &r.b, break_what == 3 ? "ZT_E_DIGEST_MISMATCH" : "ZT_E_SHARD");
    }
    free(r.b.p), free(s1.b.p), free(s2.b.p), free(a), free(b), free(c);
}

/* §7.2: a data shard is a valid file on its own, with no objects. */
static void acc_data_shard(void)
{
    zf f;
    zf_init(&f, 0);
    uint8_t *d = rnd_bytes(5000);
    zf_blob(&f, d, 5000);
    zf_finish_data_shard(&f);
    json_line("/data_shard\ttrue");
    accept_file("data_shard", &f.b);
    zf_init(&f, 0);
    zf_finish_data_shard(&f);
    accept_file("data_shard_empty", &f.b); /* 48 bytes: the smallest file */
    free(d);
}

/* §2.5: a file appended to twice; the footer at EOF defines it. */
static void acc_generations(void)
{
    zf f;
    zf_init(&f, 0);
    uint8_t *a = rnd_bytes(300), *b = rnd_bytes(300);
    dense(&f, "w", "u8", NULL, SHAPE(300), a, 300, "xxh3");
    zf_finish(&f, NULL);
    /* generation 2: a new blob for w2, w kept by reference */
    reset_case();
    cn *objs1 = f.objs;
    f.objs = MAP();
    set(f.root, "objects", f.objs);
    putk(f.objs, T("w"), get(objs1, "w"));
    dense(&f, "w2", "u8", NULL, SHAPE(300), b, 300, "xxh3");
    zf_finish(&f, NULL);
    /* generation 3: w replaced by new bytes */
    reset_case();
    f.objs = MAP();
    set(f.root, "objects", f.objs);
    dense(&f, "w", "u8", NULL, SHAPE(300), b, 300, "xxh3");
    zf_finish(&f, NULL);
    info_line("generations: 3");
    accept_file("generations_3", &f.b);
    free(a), free(b), free(f.b.p);
}

/* ------------------------------------------------------------ rejected */

/* The node at a '/'-separated path of text keys below `from`. */
static cn *at_path(cn *from, const char *path, char *last, size_t cap)
{
    char buf[256];
    if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf))
        die("path too long: %s", path);
    char *slash = strrchr(buf, '/');
    if ((size_t)snprintf(last, cap, "%s", slash ? slash + 1 : buf) >= cap)
        die("key too long in %s", path);
    if (!slash)
        return from;
    *slash = 0;
    for (char *tok = strtok(buf, "/"); tok; tok = strtok(NULL, "/"))
        if (!(from = get(from, tok)))
            die("no key %s in %s", tok, path);
    return from;
}

/* Sets, below node o (or below the root for a path starting with '/'), each
 * (path, value) pair of the NULL-terminated list; a NULL value deletes. */
static void mutate(zf *f, cn *o, va_list ap)
{
    for (const char *path; (path = va_arg(ap, const char *));) {
        cn *v = va_arg(ap, cn *);
        char key[128];
        cn *m = at_path(path[0] == '/' ? f->root : o, path[0] == '/' ? path + 1 : path, key,
                        sizeof(key));
        if (v)
            set(m, key, v);
        else
            del(m, key);
    }
}

/* The base case, object "t" (dense f32 [4], xxh3 digest), mutated. */
static void rej_set(const char *name, const char *why, ...)
{
    zf f;
    zf_init(&f, 0);
    uint8_t d[16] = {1, 2, 3};
    cn *o = dense(&f, "t", "f32", NULL, SHAPE(4), d, 16, "xxh3");
    va_list ap;
    va_start(ap, why);
    mutate(&f, o, ap);
    va_end(ap);
    zf_finish(&f, NULL);
    reject_file(name, &f.b, why);
    free(f.b.p);
}
#define rej_set(name, why, ...) rej_set(name, why, __VA_ARGS__, NULL)

/* An object made by build(), mutated. */
static void rej_obj(const char *name, const char *why, cn *(*build)(zf *), ...)
{
    zf f;
    zf_init(&f, 0);
    cn *o = build(&f);
    va_list ap;
    va_start(ap, build);
    mutate(&f, o, ap);
    va_end(ap);
    zf_finish(&f, NULL);
    reject_file(name, &f.b, why);
    free(f.b.p);
}
#define rej_obj(name, why, build, ...) rej_obj(name, why, build, __VA_ARGS__, NULL)

static cn *raw(const char *s, size_t n)
{
    return RAW(s, n);
}
#define R(lit) raw(lit, sizeof(lit) - 1)

static cn *wide(cn *c, int w)
{
    c->wide = w;
    return c;
}

static cn *indef(cn *c)
{
    c->indef = true;
    return c;
}

/* §3.1 deterministic encoding, each rule broken once. */
static void rej_cbor(void)
{
    rej_set("cbor_int_not_shortest", "ZT_E_NONCANONICAL", "shape", push(ARR(), wide(U(4), 1)));
    rej_set("cbor_int_not_shortest_8", "ZT_E_NONCANONICAL", "shape", push(ARR(), wide(U(4), 8)));
    rej_set("cbor_len_not_shortest", "ZT_E_NONCANONICAL", "layout", wide(T("dense"), 1));
    rej_set("cbor_array_len_not_shortest", "ZT_E_NONCANONICAL", "shape", wide(SHAPE(4), 2));
    rej_set("cbor_indefinite_array", "ZT_E_NONCANONICAL", "shape", indef(SHAPE(4)));
    rej_set("cbor_indefinite_text", "ZT_E_NONCANONICAL", "layout", indef(T("dense")));
    rej_set("cbor_indefinite_map", "ZT_E_NONCANONICAL", "attributes", indef(put(MAP(), "a", U(1))));
    cn *uns = put(put(MAP(), "b", U(1)), "a", U(2));
    uns->unsorted = true;
    rej_set("cbor_keys_unsorted", "ZT_E_NONCANONICAL", "attributes", uns);
    /* RFC 7049's length-first order is not §4.2.1's bytewise order: key 1000
     * (19 03 e8) sorts before "a" (61 61) although it is longer. */
    cn *lenfirst = putk(put(MAP(), "a", U(1)), U(1000), U(2));
    lenfirst->unsorted = true;
    rej_set("cbor_keys_length_first", "ZT_E_NONCANONICAL", "attributes", put(MAP(), "m", lenfirst));
    cn *dup = putk(put(MAP(), "a", U(1)), T("a"), U(2));
    rej_set("cbor_duplicate_key", "ZT_E_DUPLICATE", "attributes", dup);
    rej_set("cbor_duplicate_root_key", "ZT_E_DUPLICATE", "/attributes",
            putk(put(MAP(), "k", U(1)), T("k"), U(1)));
    rej_set("cbor_f32_fits_f16", "ZT_E_NONCANONICAL", "attributes",
            put(MAP(), "x", FL(C_F32, 0x3FC00000))); /* 1.5 */
    rej_set("cbor_f64_fits_f32", "ZT_E_NONCANONICAL", "attributes",
            put(MAP(), "x", FL(C_F64, 0x3FB99999A0000000ull))); /* (double)0.1f */
    rej_set("cbor_nan_payload_f16", "ZT_E_NONCANONICAL", "attributes",
            put(MAP(), "x", FL(C_F16, 0x7E01)));
    rej_set("cbor_nan_f32", "ZT_E_NONCANONICAL", "attributes",
            put(MAP(), "x", FL(C_F32, 0x7FC00000)));
    rej_set("cbor_nan_keys_in_disguise", "ZT_E_NONCANONICAL", "attributes",
            putk(putk(MAP(), FL(C_F16, 0x7E01), U(1)), FL(C_F16, 0x7E02), U(2)));
    rej_set("cbor_inf_f64", "ZT_E_NONCANONICAL", "attributes",
            put(MAP(), "x", FL(C_F64, 0x7FF0000000000000ull)));
    rej_set("cbor_bad_utf8", "ZT_E_CBOR", "layout", TN("den\xff", 4));
    rej_set("cbor_reserved_ai", "ZT_E_CBOR", "shape", push(ARR(), R("\x1c")));
    /* depth: 33 levels from the root */
    cn *v = U(1);
    for (int i = 0; i < 29; i++)
        v = push(ARR(), v);
    rej_set("cbor_depth_33", "ZT_E_DEPTH", "attributes", put(MAP(), "deep", v));
}

static cn *n_text_len(size_t n, char fill)
{
    char *s = xmalloc(n + 1);
    memset(s, fill, n);
    return TN(s, n);
}

/* §3.2-3.5 schema and names. */
static void rej_schema(void)
{
    rej_set("schema_no_objects", "ZT_E_SCHEMA", "/objects", NULL);
    rej_set("schema_objects_not_map", "ZT_E_SCHEMA", "/objects", ARR());
    rej_set("schema_object_not_map", "ZT_E_SCHEMA", "/objects/t", U(1));
    rej_set("schema_no_shape", "ZT_E_SCHEMA", "shape", NULL);
    rej_set("schema_shape_not_array", "ZT_E_SCHEMA", "shape", U(4));
    rej_set("schema_shape_negative", "ZT_E_SCHEMA", "shape", push(ARR(), NEG(3)));
    cn *r65 = ARR();
    for (int i = 0; i < 65; i++)
        push(r65, U(1));
    rej_set("schema_rank_65", "ZT_E_LIMIT", "shape", r65);
    rej_set("schema_shape_overflow", "ZT_E_SIZE", "shape", SHAPE(1ull << 32, 1ull << 32));
    rej_set("schema_no_layout", "ZT_E_SCHEMA", "layout", NULL);
    rej_set("schema_layout_not_text", "ZT_E_SCHEMA", "layout", U(1));
    rej_set("schema_no_parts", "ZT_E_SCHEMA", "parts", NULL);
    rej_set("schema_parts_empty", "ZT_E_COMPONENTS", "parts", MAP());
    rej_set("schema_parts_not_map", "ZT_E_SCHEMA", "parts", ARR());
    rej_set("schema_part_not_map", "ZT_E_SCHEMA", "parts/data", U(1));
    rej_set("schema_no_dtype", "ZT_E_DTYPE", "parts/data/dtype", NULL);
    rej_set("schema_dtype_bool", "ZT_E_DTYPE", "parts/data/dtype", T("bool"));
    rej_set("schema_dtype_long_name", "ZT_E_DTYPE", "parts/data/dtype", T("float32"));
    rej_set("schema_dtype_not_text", "ZT_E_DTYPE", "parts/data/dtype", U(1));
    rej_set("schema_type_not_text", "ZT_E_TYPE", "parts/data/type", U(1));
    rej_set("schema_type_null", "ZT_E_TYPE", "parts/data/type", SIMPLE(22));
    rej_set("schema_no_blob", "ZT_E_SCHEMA", "parts/data/blob", NULL);
    rej_set("schema_blob_3", "ZT_E_SCHEMA", "parts/data/blob", SHAPE(4096, 16, 0));
    rej_set("schema_blob_1", "ZT_E_SCHEMA", "parts/data/blob", SHAPE(4096));
    rej_set("schema_blob_negative", "ZT_E_SCHEMA", "parts/data/blob",
            push(push(ARR(), U(4096)), NEG(15)));
    rej_set("schema_blob_not_array", "ZT_E_SCHEMA", "parts/data/blob", U(4096));
    rej_set("schema_encoding_without_length", "ZT_E_ENCODING", "parts/data/encoding", T("zstd"));
    rej_set("schema_length_without_encoding", "ZT_E_ENCODING", "parts/data/decoded_length", U(16));
    rej_set("schema_encoding_not_text", "ZT_E_SCHEMA", "parts/data/encoding", U(1),
            "parts/data/decoded_length", U(16));
    rej_set("schema_decoded_length_not_uint", "ZT_E_SCHEMA", "parts/data/encoding", T("zstd"),
            "parts/data/decoded_length", T("16"));
    rej_set("digest_uppercase", "ZT_E_DIGEST_FORMAT", "parts/data/digest",
            T("xxh3:0123456789ABCDEF"));
    rej_set("digest_xxh3_short", "ZT_E_DIGEST_FORMAT", "parts/data/digest",
            T("xxh3:0123456789abcde"));
    rej_set("digest_sha256_63", "ZT_E_DIGEST_FORMAT", "parts/data/digest", n_text_len(7 + 63, 'a'));
    rej_set("digest_no_colon", "ZT_E_DIGEST_FORMAT", "parts/data/digest", T("0123456789abcdef"));
    rej_set("digest_empty_hex", "ZT_E_DIGEST_FORMAT", "parts/data/digest", T("xxh3:"));
    rej_set("digest_not_text", "ZT_E_DIGEST_FORMAT", "parts/data/digest", U(1));
    rej_set("attributes_not_map", "ZT_E_SCHEMA", "attributes", U(1));
    rej_set("attributes_root_not_map", "ZT_E_SCHEMA", "/attributes", ARR());
    rej_set("attribute_key_not_text", "ZT_E_NAME", "attributes", putk(MAP(), U(1), U(2)));
    rej_set("attribute_key_empty", "ZT_E_NAME", "attributes", put(MAP(), "", U(2)));
    rej_set("attribute_key_nul", "ZT_E_NAME", "attributes", putk(MAP(), TN("a\0b", 3), U(2)));
    rej_set("attribute_key_1025", "ZT_E_NAME", "/attributes",
            putk(MAP(), n_text_len(1025, 'k'), U(2)));
    rej_set("attribute_tag", "ZT_E_SCHEMA", "attributes", put(MAP(), "d", TAG(1, U(0))));
    rej_set("attribute_nested_tag", "ZT_E_SCHEMA", "/attributes",
            put(MAP(), "d", push(ARR(), put(MAP(), "x", TAG(32, T("http://x"))))));
    rej_set("attribute_undefined", "ZT_E_SCHEMA", "attributes", put(MAP(), "u", SIMPLE(23)));
    rej_set("attribute_simple_16", "ZT_E_SCHEMA", "attributes", put(MAP(), "u", SIMPLE(16)));
}

/* §3.5: an object or part name under a key of our choosing. */
static void rej_name(const char *name, const char *why, cn *objkey, cn *partkey)
{
    zf f;
    zf_init(&f, 0);
    uint8_t d[4] = {0};
    cn *o = dense(&f, "t", "u8", NULL, SHAPE(4), d, 4, NULL);
    if (partkey) {
        cn *pm = get(o, "parts");
        pm->kids[0] = partkey;
    }
    if (objkey)
        f.objs->kids[0] = objkey;
    zf_finish(&f, NULL);
    reject_file(name, &f.b, why);
    free(f.b.p);
}

static void rej_names(void)
{
    rej_name("name_object_empty", "ZT_E_NAME", T(""), NULL);
    rej_name("name_object_nul", "ZT_E_NAME", TN("a\0", 2), NULL);
    rej_name("name_object_1025", "ZT_E_NAME", n_text_len(1025, 'o'), NULL);
    rej_name("name_object_not_text", "ZT_E_NAME", BYTES("t", 1), NULL);
    rej_name("name_part_empty", "ZT_E_NAME|ZT_E_COMPONENTS", NULL, T(""));
    rej_name("name_part_1025", "ZT_E_NAME|ZT_E_COMPONENTS", NULL, n_text_len(1025, 'p'));
    rej_name("name_part_not_text", "ZT_E_NAME|ZT_E_COMPONENTS", NULL, U(0));
}

/* §2.4 blob references. The base file: blob at 4096 (16 bytes), manifest at 8192. */
static void rej_blobs(void)
{
    rej_set("blob_misaligned", "ZT_E_ALIGN", "parts/data/blob", SHAPE(4100, 16));
    rej_set("blob_in_first_page", "ZT_E_ALIGN", "parts/data/blob", SHAPE(0, 16));
    rej_set("blob_empty_misaligned", "ZT_E_ALIGN", "shape", SHAPE(0), "parts/data/blob",
            SHAPE(4097, 0));
    rej_set("blob_past_eof", "ZT_E_BOUNDS", "parts/data/blob", SHAPE(4096, 1u << 20));
    rej_set("blob_into_footer", "ZT_E_BOUNDS|ZT_E_OVERLAP", "shape", SHAPE(2048), "parts/data/blob",
            SHAPE(4096, 8192));
    rej_set("blob_offset_overflow", "ZT_E_BOUNDS", "parts/data/blob", SHAPE(UINT64_MAX - 4095, 16));
    rej_set("blob_partly_over_manifest", "ZT_E_OVERLAP", "shape", SHAPE(1), "parts/data/dtype",
            T("u8"), "parts/data/blob", SHAPE(8192, 1));
    /* two parts, partly overlapping */
    zf f;
    zf_init(&f, 0);
    uint8_t *d = rnd_bytes(8192);
    dense(&f, "a", "u8", NULL, SHAPE(8192), d, 8192, NULL);
    cn *o = dense(&f, "b", "u8", NULL, SHAPE(4096), d, 4096, NULL);
    set(part_of(o, "data"), "blob", SHAPE(8192, 4096)); /* a is [4096, 12288) */
    zf_finish(&f, NULL);
    reject_file("blob_partial_overlap", &f.b, "ZT_E_OVERLAP");
    free(f.b.p);
    zf_init(&f, 0);
    dense(&f, "a", "u8", NULL, SHAPE(8192), d, 8192, NULL);
    o = dense(&f, "b", "u8", NULL, SHAPE(8192), d, 8192, NULL);
    set(part_of(o, "data"), "blob", SHAPE(4096, 8192 + 4096)); /* same start, longer */
    set(o, "shape", SHAPE(12288));
    zf_finish(&f, NULL);
    reject_file("blob_same_start_other_length", &f.b, "ZT_E_OVERLAP");
    free(f.b.p);
    free(d);
}

/* §4, §5.1 types and the dense layout. */
static void rej_types(void)
{
    rej_set("type_on_wrong_dtype", "ZT_E_TYPE", "parts/data/type", T("bool"));
    rej_set("type_complex64_on_f64", "ZT_E_TYPE", "parts/data/type", T("complex64"),
            "parts/data/dtype", T("f64"));
    rej_set("dense_size_mismatch", "ZT_E_SIZE", "shape", SHAPE(5));
    rej_set("dense_scalar_size", "ZT_E_SIZE", "shape", SCALAR());
    rej_set("dense_two_parts", "ZT_E_COMPONENTS", "parts/extra",
            put(put(MAP(), "dtype", T("u8")), "blob", SHAPE(4096, 0)));
    rej_set("dense_part_not_data", "ZT_E_COMPONENTS|ZT_E_SCHEMA", "parts/data", NULL,
            "parts/weights", put(put(MAP(), "dtype", T("f32")), "blob", SHAPE(4096, 16)));
    /* f4_e2m1 packs two per byte: 7 elements are 4 bytes, not 7 */
    zf f;
    zf_init(&f, 0);
    uint8_t d[7] = {0};
    dense(&f, "t", "u8", "f4_e2m1", SHAPE(7), d, 7, NULL);
    zf_finish(&f, NULL);
    reject_file("type_f4_unpacked_size", &f.b, "ZT_E_SIZE");
    free(f.b.p);
}

/* §2.1-2.3 the container: built by hand around a valid manifest. */
static void rej_container(void)
{
    uint8_t d[16] = {0};
    for (int k = 0; k < 14; k++) {
        zf f;
        zf_init(&f, 0);
        dense(&f, "t", "f32", NULL, SHAPE(4), d, 16, "xxh3");
        fopt o = {0};
        const char *name = NULL, *why = NULL;
        switch (k) {
        case 0:
            o.bad_magic = true, name = "footer_bad_magic", why = "ZT_E_MAGIC";
            break;
        case 1:
            o.version = 1, name = "footer_version_1", why = "ZT_E_VERSION";
            break;
        case 2:
            o.version = 3, name = "footer_version_3", why = "ZT_E_VERSION";
            break;
        case 3:
            o.set_off = true, o.off = 8200, name = "manifest_misaligned", why = "ZT_E_ALIGN";
            break;
        case 4:
            o.set_off = true, o.off = 0, name = "manifest_at_0", why = "ZT_E_ALIGN";
            break;
        case 5:
            o.set_len = true, o.len = 4096, name = "manifest_into_footer", why = "ZT_E_BOUNDS";
            break;
        case 6:
            o.set_len = true, o.len = (1ull << 30) + 1, name = "manifest_over_1GiB",
            why = "ZT_E_LIMIT";
            break;
        case 7:
            o.set_len = true, o.len = 100ull << 20, name = "manifest_over_default_cap",
            why = "ZT_E_LIMIT";
            break;
        case 8:
            o.set_hash = true, o.hash = 12345, name = "manifest_hash_wrong",
            why = "ZT_E_MANIFEST_HASH";
            break;
        case 9:
            o.set_len = true, o.len = 0, name = "data_shard_offset_not_0",
            why = "ZT_E_MANIFEST_SIZE";
            break;
        case 10:
            o.set_len = o.set_off = true, o.len = 0, o.off = 0, name = "data_shard_hash_not_0",
            why = "ZT_E_MANIFEST_SIZE";
            break;
        case 11:
            o.set_off = true, o.off = UINT64_MAX - 4095, name = "manifest_offset_overflow",
            why = "ZT_E_BOUNDS";
            break;
        case 12:
            name = "header_magic_wrong", why = "ZT_E_MAGIC";
            break;
        case 13:
            name = "crashed_append", why = "ZT_E_MAGIC";
            break;
        }
        zf_finish(&f, &o);
        if (k == 12)
            f.b.p[1] = 'X';
        if (k == 13) { /* an append whose footer never came (§2.5, §10) */
            zf_pad(&f, 4096);
            bb_put(&f.b, d, 16);
        }
        reject_file(name, &f.b, why);
        free(f.b.p);
    }
    /* the CBOR item does not fill the manifest blob; the manifest is not a map;
     * it has no "objects" */
    static const struct {
        const char *name, *bytes, *why;
        size_t n;
    } m[] = {{"manifest_trailing_byte", "\xa1\x67objects\xa0\x00", "ZT_E_CBOR", 11},
             {"manifest_not_a_map", "\x81\xa0", "ZT_E_SCHEMA", 2},
             {"manifest_empty_map", "\xa0", "ZT_E_SCHEMA", 1},
             {"manifest_truncated_cbor", "\xa1\x67objects\xa1", "ZT_E_CBOR", 10}};
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
        zf f;
        zf_init(&f, 0);
        zf_finish_bytes(&f, (const uint8_t *)m[i].bytes, m[i].n, NULL);
        reject_file(m[i].name, &f.b, m[i].why);
        free(f.b.p);
    }
    for (size_t n = 0; n < 48; n += 47) { /* shorter than magic + footer */
        bb b = {0};
        bb_put(&b, k_magic, 8);
        bb_zeros(&b, n > 8 ? n - 8 : 0);
        b.len = n;
        char name[64];
        snprintf(name, sizeof(name), "file_%zu_bytes", n);
        reject_file(name, &b, "ZT_E_TRUNCATED|ZT_E_MAGIC");
        free(b.p);
    }
}

/* ---- the profiles' metadata rules (the files in profiles/), one broken at a time */

static cn *b_csr(zf *f)
{
    return add_csr(f, "t", &k_csr, NULL, 16);
}
static cn *b_coo(zf *f)
{
    return add_coo(f, "t", k_coo, 3, 4);
}
static cn *b_awq(zf *f)
{
    return add_qg(
        f, "t", qg_attrs(4, 128, 0, "u32", 8, "lsb_first", "f16_factors", "tensor", "same_as_data"),
        SHAPE(256, 64), "u32", 8192, "f16", NULL, 256, "u32", 64);
}
static cn *b_implied(zf *f)
{
    return add_qg(f, "t", qg_attrs(4, 32, 0, "u32", 8, "msb_first", "f32_factors", "implied", NULL),
                  SHAPE(64, 4), "i32", 128, "f32", NULL, 32, NULL, 0);
}
static cn *b_e8m0(zf *f)
{
    return add_qg(f, "t", qg_attrs(2, 16, 1, "u8", 4, "lsb_first", "e8m0_exponent", "none", NULL),
                  SHAPE(2, 32), "u8", 16, "u8", "f8_e8m0", 4, NULL, 0);
}
static cn *b_mx(zf *f)
{
    return add_mx(f, "t", mx_attrs(32, "e8m0_exponent"), SHAPE(2, 64), "u8", "f4_e2m1", 64, 4);
}
static cn *b_gguf(zf *f)
{
    uint8_t *g = rnd_bytes(68);
    ps gp = {.role = "data", .dtype = "u8", .data = g, .len = 68};
    return add_obj(f, "t", "gguf.q8_0/1", SHAPE(2, 32),
                   put(put(MAP(), "elems_per_block", U(32)), "block_bytes", U(34)), 1, &gp);
}

static void rej_layouts(void)
{
    cn *extra = put(put(MAP(), "dtype", T("u8")), "blob", SHAPE(4096, 0));
    rej_obj("csr_rank_1", "ZT_E_LAYOUT", b_csr, "shape", SHAPE(15));
    rej_obj("csr_no_indptr", "ZT_E_LAYOUT", b_csr, "parts/indptr", NULL);
    rej_obj("csr_extra_part", "ZT_E_LAYOUT", b_csr, "parts/extra", extra);
    rej_obj("csr_indices_i32", "ZT_E_LAYOUT", b_csr, "parts/indices/dtype", T("i32"));
    rej_obj("csr_indptr_u64", "ZT_E_LAYOUT|ZT_E_SIZE", b_csr, "parts/indptr/dtype", T("u64"),
            "shape", SHAPE(1, 5));
    rej_obj("csr_indices_typed", "ZT_E_LAYOUT", b_csr, "parts/indices/type", T("acme.idx"));
    rej_obj("csr_indptr_size", "ZT_E_SIZE", b_csr, "shape", SHAPE(4, 5));
    rej_obj("csr_values_size", "ZT_E_SIZE", b_csr, "parts/values/dtype", T("f64"));
    rej_obj("coo_rank_0", "ZT_E_LAYOUT", b_coo, "shape", SCALAR());
    rej_obj("coo_coords_u16", "ZT_E_LAYOUT", b_coo, "parts/coords/dtype", T("u16"));
    rej_obj("coo_coords_not_whole", "ZT_E_SIZE", b_coo, "shape", SHAPE(4, 6, 1, 1, 1));
    rej_obj("coo_values_size", "ZT_E_SIZE", b_coo, "shape", SHAPE(4, 6, 1));
    rej_obj("qg_no_bits", "ZT_E_LAYOUT", b_awq, "attributes/bits", NULL);
    rej_obj("qg_bits_7", "ZT_E_LAYOUT", b_awq, "attributes/bits", U(7));
    rej_obj("qg_word_mismatch", "ZT_E_LAYOUT", b_awq, "attributes/packing/word", T("u16"));
    rej_obj("qg_per_word_wrong", "ZT_E_LAYOUT", b_awq, "attributes/packing/per_word", U(4));
    rej_obj("qg_order_unknown", "ZT_E_LAYOUT", b_awq, "attributes/packing/order", T("random"));
    rej_obj("qg_scale_form_unknown", "ZT_E_LAYOUT", b_awq, "attributes/scale_form",
            T("f8_factors"));
    rej_obj("qg_zeros_with_form_none", "ZT_E_LAYOUT", b_awq, "attributes/zero_point",
            put(MAP(), "form", T("none")));
    rej_obj("qg_zeros_missing", "ZT_E_LAYOUT", b_e8m0, "attributes/zero_point",
            put(put(MAP(), "form", T("tensor")), "packing", T("plain")));
    rej_obj("qg_implied_without_value", "ZT_E_LAYOUT", b_implied, "attributes/zero_point/value",
            NULL);
    rej_obj("qg_group_not_dividing", "ZT_E_LAYOUT", b_awq, "attributes/group_size", U(100));
    rej_obj("qg_axis_past_rank", "ZT_E_LAYOUT", b_awq, "attributes/axis", U(2));
    rej_obj("qg_data_size", "ZT_E_SIZE", b_awq, "shape", SHAPE(512, 64));
    rej_obj("qg_e8m0_untyped_scales", "ZT_E_LAYOUT", b_e8m0, "parts/scales/type", NULL);
    rej_obj("qg_factors_int_scales", "ZT_E_LAYOUT", b_implied, "parts/scales/dtype", T("i32"));
    rej_obj("qg_zeros_same_as_data_dtype", "ZT_E_LAYOUT", b_awq, "parts/zeros/dtype", T("i32"));
    rej_obj("mx_untyped_scales", "ZT_E_LAYOUT", b_mx, "parts/scales/type", NULL);
    rej_obj("mx_block_size_1", "ZT_E_LAYOUT", b_mx, "attributes/block_size", U(1));
    rej_obj("mx_block_not_dividing", "ZT_E_LAYOUT", b_mx, "attributes/block_size", U(48));
    rej_obj("mx_no_scale_form", "ZT_E_LAYOUT", b_mx, "attributes/scale_form", NULL);
    rej_obj("mx_axis_past_rank", "ZT_E_LAYOUT", b_mx, "attributes/axis", U(2));
    rej_obj("mx_data_bool", "ZT_E_LAYOUT", b_mx, "parts/data/type", T("bool"));
    rej_obj("mx_data_plain_u8", "ZT_E_LAYOUT", b_mx, "parts/data/type", NULL);
    rej_obj("mx_sizes", "ZT_E_SIZE|ZT_E_LAYOUT", b_mx, "shape", SHAPE(4, 64));
    rej_obj("gguf_block_not_dividing", "ZT_E_LAYOUT", b_gguf, "attributes/elems_per_block", U(48));
    rej_obj("gguf_size", "ZT_E_SIZE", b_gguf, "attributes/block_bytes", U(33));
    rej_obj("gguf_typed_data", "ZT_E_LAYOUT|ZT_E_TYPE", b_gguf, "parts/data/type", T("bool"));
    rej_obj("gguf_no_elems_per_block", "ZT_E_LAYOUT", b_gguf, "attributes/elems_per_block", NULL);
}

/* §7.1, §3.4 the shard table, checked from the root alone. */
static void rej_shard_table(void)
{
    cn *good = put(put(MAP(), "size", U(100)), "digest", T("xxh3:0123456789abcdef"));
    rej_set("shard_undeclared", "ZT_E_SHARD", "/shards", put(MAP(), "a", good), "parts/data/shard",
            T("b"));
    rej_set("shard_without_table", "ZT_E_SHARD", "parts/data/shard", T("a"));
    rej_set("shard_name_dotdot", "ZT_E_NAME", "/shards", put(MAP(), "../etc", good));
    rej_set("shard_name_slash", "ZT_E_NAME", "/shards", put(MAP(), "a/b", good));
    rej_set("shard_name_leading_dot", "ZT_E_NAME", "/shards", put(MAP(), ".a", good));
    rej_set("shard_name_65", "ZT_E_NAME", "/shards", putk(MAP(), n_text_len(65, 's'), good));
    rej_set("shard_name_empty", "ZT_E_NAME", "/shards", put(MAP(), "", good));
    rej_set("shard_key_not_text", "ZT_E_SCHEMA", "/shards", putk(MAP(), U(1), good));
    rej_set("shard_no_size", "ZT_E_SHARD", "/shards",
            put(MAP(), "a", put(MAP(), "digest", T("xxh3:0123456789abcdef"))));
    rej_set("shard_no_digest", "ZT_E_SHARD", "/shards", put(MAP(), "a", put(MAP(), "size", U(99))));
    rej_set("shard_digest_crc32c", "ZT_E_DIGEST_FORMAT", "/shards",
            put(MAP(), "a", put(put(MAP(), "size", U(99)), "digest", T("crc32c:0x01020304"))));
    rej_set("shard_too_small", "ZT_E_SHARD", "/shards",
            put(MAP(), "a", put(put(MAP(), "size", U(47)), "digest", T("xxh3:0123456789abcdef"))));
    rej_set("shards_not_map", "ZT_E_SCHEMA", "/shards", ARR());
    rej_set("shard_blob_past_its_end", "ZT_E_BOUNDS", "/shards", put(MAP(), "a", good),
            "parts/data/shard", T("a"), "parts/data/blob", SHAPE(4096, 16));
    /* two parts overlapping inside one shard (but not in the root) */
    zf f;
    zf_init(&f, 0);
    uint8_t d[16] = {0};
    cn *big = put(put(MAP(), "size", U(20000)), "digest", T("xxh3:0123456789abcdef"));
    put(f.root, "shards", put(MAP(), "a", big));
    cn *o1 = dense(&f, "x", "u8", NULL, SHAPE(16), d, 16, NULL);
    cn *o2 = dense(&f, "y", "u8", NULL, SHAPE(16), d, 16, NULL);
    set(part_of(o1, "data"), "shard", T("a"));
    set(part_of(o1, "data"), "blob", SHAPE(8192, 16));
    set(part_of(o2, "data"), "shard", T("a"));
    set(part_of(o2, "data"), "blob", SHAPE(8192, 8));
    set(o2, "shape", SHAPE(8));
    zf_finish(&f, NULL);
    reject_file("shard_blobs_overlap", &f.b, "ZT_E_OVERLAP");
    free(f.b.p);
}

/* ---- files that open, whose bytes break a rule `zt verify` checks */

static void rej_data_one(const char *name, const char *why, const char *layout, ps *p, int get_code)
{
    zf f;
    zf_init(&f, 0);
    add_obj(&f, "t", layout, SHAPE(p->len / (strcmp(p->dtype, "u16") ? 1 : 2)), NULL, 1, p);
    zf_finish(&f, NULL);
    opens("t", p->role, get_code);
    reject_file(name, &f.b, why);
    free(f.b.p);
}

static void rej_data(void)
{
    uint8_t *d = rnd_bytes(20000), *other = rnd_bytes(20000);
    char *wrong_x = xxh3_digest(other, 16), *wrong_s = sha256_digest(other, 16);
    ps p = {.role = "data", .dtype = "u8", .data = d, .len = 16, .digest = wrong_x};
    rej_data_one("digest_mismatch_xxh3", "ZT_E_DIGEST_MISMATCH", "dense", &p, 0);
    p.digest = wrong_s;
    rej_data_one("digest_mismatch_sha256", "ZT_E_DIGEST_MISMATCH", "dense", &p, 0);
    /* a digest of the stored (compressed) bytes, as 1.2 would write: v2's covers decoded bytes */
    bb z = {0};
    zstd_frame(&z, d, 3000, true);
    ps q = {.role = "data",
            .dtype = "u8",
            .data = d,
            .len = 3000,
            .enc = E_ZSTD,
            .digest = xxh3_digest(z.p, z.len)};
    rej_data_one("digest_over_stored_bytes", "ZT_E_DIGEST_MISMATCH", "dense", &q, 0);
    q.digest = "xxh3";
    q.dlen_delta = 1;
    rej_data_one("zstd_decodes_short", "ZT_E_SIZE", "acme.bytes/1", &q, 1);
    q.dlen_delta = -1;
    rej_data_one("zstd_decodes_long", "ZT_E_SIZE", "acme.bytes/1", &q, 1);
    q.dlen_delta = 0;
    q.enc = E_OTHER;
    rej_data_one("encoding_unknown", "ZT_E_UNSUPPORTED", "dense", &q, 1);
    ps sk = {.role = "data",
             .dtype = "u8",
             .data = d,
             .len = 10000,
             .enc = E_SEEK,
             .digest = "xxh3",
             .frame = 4096};
    sk.seek_flags = SK_NOCHECKSUM;
    rej_data_one("seekable_no_checksum", "ZT_E_ENCODING", "dense", &sk, 1);
    sk.seek_flags = SK_UNEQUAL;
    rej_data_one("seekable_unequal_frames", "ZT_E_ENCODING", "dense", &sk, 1);
    sk.seek_flags = SK_NOTABLE;
    rej_data_one("seekable_no_seek_table", "ZT_E_ENCODING", "dense", &sk, 1);
    sk.seek_flags = SK_LIE_DSIZE;
    rej_data_one("seekable_table_lies", "ZT_E_SIZE|ZT_E_ENCODING", "dense", &sk, 1);
    uint8_t *zeros = xmalloc((16u << 20) + 2);
    ps huge = {.role = "data",
               .dtype = "u16",
               .data = zeros,
               .len = (16u << 20) + 2,
               .enc = E_SEEK,
               .frame = (16u << 20) + 2};
    rej_data_one("seekable_frame_over_16MiB", "ZT_E_ENCODING", "dense", &huge, 1);
    free(zeros);
    /* Appendix A data rules */
    uint8_t b[5] = {0, 1, 2, 1, 0};
    ps pb = {.role = "data", .dtype = "u8", .type = "bool", .data = b, .len = 5};
    rej_data_one("bool_byte_2", "ZT_E_LAYOUT", "dense", &pb, 0);
    uint8_t n4[3] = {0x21, 0x43, 0x75}; /* 5 nibbles, the 6th is 7 */
    zf f;
    zf_init(&f, 0);
    dense(&f, "t", "u8", "f4_e2m1", SHAPE(5), n4, 3, NULL);
    zf_finish(&f, NULL);
    opens("t", "data", 0);
    reject_file("f4_odd_nibble_not_zero", &f.b, "ZT_E_LAYOUT");
    free(f.b.p);
    /* zt.sparse_csr/1 and zt.sparse_coo/1 data rules */
    static const csr_case bad_csr[] = {
        {{1, 2, 2, 4}, {0, 3, 1, 4}, 4}, {{0, 3, 2, 4}, {0, 3, 1, 4}, 4},
        {{0, 2, 2, 3}, {0, 3, 1, 4}, 4}, {{0, 2, 2, 4}, {3, 0, 1, 4}, 4},
        {{0, 2, 2, 4}, {0, 5, 1, 4}, 4}, {{0, 2, 2, 4}, {1, 1, 1, 4}, 4}};
    static const char *const csr_names[] = {"csr_indptr_0",          "csr_indptr_decreasing",
                                            "csr_indptr_end",        "csr_indices_unsorted",
                                            "csr_index_not_below_c", "csr_index_repeated"};
    for (size_t i = 0; i < 6; i++) {
        zf_init(&f, 0);
        add_csr(&f, "t", &bad_csr[i], NULL, 16);
        zf_finish(&f, NULL);
        opens("t", "indptr", 0);
        reject_file(csr_names[i], &f.b, "ZT_E_LAYOUT");
        free(f.b.p);
    }
    static const uint64_t out_of_bounds[6] = {0, 4, 1, 5, 0, 5}, dup[6] = {0, 3, 0, 5, 0, 5};
    zf_init(&f, 0);
    add_coo(&f, "t", out_of_bounds, 3, 8);
    zf_finish(&f, NULL);
    opens("t", "coords", 0);
    reject_file("coo_coordinate_out_of_bounds", &f.b, "ZT_E_LAYOUT");
    free(f.b.p);
    zf_init(&f, 0);
    add_coo(&f, "t", dup, 3, 4);
    zf_finish(&f, NULL);
    opens("t", "values", 0);
    reject_file("coo_duplicate_cell", &f.b, "ZT_E_LAYOUT");
    free(f.b.p);
    free(d), free(other);
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_corpus_v2 OUTDIR\n");
        return 2;
    }
    snprintf(g_out, sizeof(g_out), "%s", argv[1]);
    char p[4200];
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof(p), "%s/%s", g_out, i ? "reject" : "accept");
        rm_rf(p);
        mkdir_p(p);
    }
    acc_dtypes();
    acc_types();
    acc_shapes();
    acc_encodings();
    acc_attributes();
    acc_blobs_and_names();
    acc_depth();
    acc_layouts();
    acc_unknown();
    make_sharded("accept", "sharded", 0);
    acc_data_shard();
    acc_generations();
    rej_cbor();
    rej_schema();
    rej_names();
    rej_blobs();
    rej_types();
    rej_container();
    rej_layouts();
    rej_shard_table();
    make_sharded("reject", "shard_missing", 1);
    make_sharded("reject", "shard_size_wrong", 2);
    make_sharded("reject", "shard_digest_wrong", 3);
    rej_data();
    /* Last, so that every file above keeps its bytes: a second version of
     * "sharded" (other random bytes), which tests/remote/t_v2_shards.sh
     * publishes over the first during a pull. */
    make_sharded("accept", "sharded_next", 0);
    printf("gen_corpus_v2: %u accepted and %u rejected files in %s\n", g_naccept, g_nreject, g_out);
    return 0;
}
