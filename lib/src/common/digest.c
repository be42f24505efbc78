/*
 * sha256 (OpenSSL EVP), crc32c (SSE4.2 instruction when the CPU has it,
 * slicing-by-8 tables otherwise) and XXH3-64 (libxxhash, for zTensor v2),
 * incremental, plus the digest string form: "sha256:<64 hex>",
 * "crc32c:0x<8 hex>" and "xxh3:<16 hex>", case-insensitive on read. An XXH3
 * value is printed and stored big-endian, as xxhsum and XXH64_canonical do.
 */
#include "internal.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <xxhash.h>

struct zt_hasher {
    zt_digest_kind kind;
    EVP_MD_CTX *md;
    XXH3_state_t *xx;
    uint32_t crc;
};

/* SHA-256 fetched from OpenSSL's provider once: EVP_sha256() in
 * EVP_DigestInit_ex fetches it again (locks, a lookup) for every hasher, which
 * was most of the cost of a hasher for a small component. Kept for the
 * process's life. */
static EVP_MD *g_sha256;
static pthread_once_t g_sha256_once = PTHREAD_ONCE_INIT;

static void fetch_sha256(void)
{
    g_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *sha256_md(void)
{
    pthread_once(&g_sha256_once, fetch_sha256);
    return g_sha256 ? g_sha256 : EVP_sha256();
}

uint64_t zt__xxh3(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}

static void put_be64(uint8_t *out, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)(v >> (56 - 8 * i));
}

static uint32_t g_crc_table[8][256];
static int g_crc_init;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        g_crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            g_crc_table[t][i] =
                (g_crc_table[t - 1][i] >> 8) ^ g_crc_table[0][g_crc_table[t - 1][i] & 0xFF];
    __atomic_store_n(&g_crc_init, 1, __ATOMIC_RELEASE);
}

static uint32_t crc_sw(uint32_t crc, const uint8_t *p, size_t n)
{
    if (!__atomic_load_n(&g_crc_init, __ATOMIC_ACQUIRE))
        crc_init();
    while (n && ((uintptr_t)p & 7)) {
        crc = g_crc_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
        n--;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc;
        crc = g_crc_table[7][w & 0xFF] ^ g_crc_table[6][(w >> 8) & 0xFF] ^
              g_crc_table[5][(w >> 16) & 0xFF] ^ g_crc_table[4][(w >> 24) & 0xFF] ^
              g_crc_table[3][(w >> 32) & 0xFF] ^ g_crc_table[2][(w >> 40) & 0xFF] ^
              g_crc_table[1][(w >> 48) & 0xFF] ^ g_crc_table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = g_crc_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
    uint64_t c = crc;
    while (n && ((uintptr_t)p & 7)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        n--;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        n -= 8;
    }
    while (n--)
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    return (uint32_t)c;
}
#endif

uint32_t zt_crc32c(uint32_t crc, const void *data, size_t len)
{
    crc = ~crc;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2"))
        return ~crc_hw(crc, data, len);
#endif
    return ~crc_sw(crc, data, len);
}

zt_hasher *zt_hasher_new(zt_digest_kind kind)
{
    if (kind != ZT_DIGEST_SHA256 && kind != ZT_DIGEST_CRC32C && kind != ZT_DIGEST_XXH3)
        return NULL;
    zt_hasher *h = zt__calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->kind = kind;
    if (kind == ZT_DIGEST_XXH3) {
        if (!(h->xx = XXH3_createState()) || XXH3_64bits_reset(h->xx) != XXH_OK) {
            XXH3_freeState(h->xx);
            zt__free(h);
            return NULL;
        }
    }
    if (kind == ZT_DIGEST_SHA256) {
        h->md = EVP_MD_CTX_new();
        if (!h->md || EVP_DigestInit_ex(h->md, sha256_md(), NULL) != 1) {
            EVP_MD_CTX_free(h->md);
            zt__free(h);
            return NULL;
        }
    }
    return h;
}

void zt_hasher_update(zt_hasher *h, const void *data, size_t len)
{
    if (h->kind == ZT_DIGEST_XXH3)
        XXH3_64bits_update(h->xx, data, len);
    else if (h->kind == ZT_DIGEST_SHA256)
        EVP_DigestUpdate(h->md, data, len);
    else
        h->crc = zt_crc32c(h->crc, data, len);
}

size_t zt_hasher_final(zt_hasher *h, uint8_t out[32])
{
    if (h->kind == ZT_DIGEST_SHA256) {
        unsigned n = 0;
        EVP_DigestFinal_ex(h->md, out, &n);
        return n;
    }
    if (h->kind == ZT_DIGEST_XXH3) {
        put_be64(out, XXH3_64bits_digest(h->xx));
        return 8;
    }
    out[0] = (uint8_t)(h->crc >> 24);
    out[1] = (uint8_t)(h->crc >> 16);
    out[2] = (uint8_t)(h->crc >> 8);
    out[3] = (uint8_t)h->crc;
    return 4;
}

size_t zt__hasher_peek(const zt_hasher *h, const void *more, size_t len, uint8_t out[32])
{
    if (h->kind == ZT_DIGEST_XXH3) {
        zt_hasher c = {.kind = h->kind, .xx = XXH3_createState()};
        if (!c.xx)
            return 0;
        XXH3_copyState(c.xx, h->xx);
        zt_hasher_update(&c, more, len);
        size_t n = zt_hasher_final(&c, out);
        XXH3_freeState(c.xx);
        return n;
    }
    if (h->kind != ZT_DIGEST_SHA256) {
        zt_hasher c = *h;
        zt_hasher_update(&c, more, len);
        return zt_hasher_final(&c, out);
    }
    zt_hasher c = {.kind = h->kind, .md = EVP_MD_CTX_new()};
    if (!c.md || EVP_MD_CTX_copy_ex(c.md, h->md) != 1) {
        EVP_MD_CTX_free(c.md);
        return 0;
    }
    zt_hasher_update(&c, more, len);
    size_t n = zt_hasher_final(&c, out);
    EVP_MD_CTX_free(c.md);
    return n;
}

zt_status zt_hasher_copy(zt_hasher *dst, const zt_hasher *src)
{
    if (dst->kind != src->kind)
        return ZT_E_ARG;
    if (src->kind == ZT_DIGEST_SHA256)
        return EVP_MD_CTX_copy_ex(dst->md, src->md) == 1 ? ZT_OK : ZT_E_NOMEM;
    if (src->kind == ZT_DIGEST_XXH3) {
        XXH3_copyState(dst->xx, src->xx);
        return ZT_OK;
    }
    dst->crc = src->crc;
    return ZT_OK;
}

void zt_hasher_free(zt_hasher *h)
{
    if (!h)
        return;
    EVP_MD_CTX_free(h->md);
    XXH3_freeState(h->xx);
    zt__free(h);
}

/* Hex digit values; 0xFF for anything else. A table because every component
 * of a manifest carries a digest, decoded on every open. */
#define H16(x) x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x
static const uint8_t k_hexval[256] = {
    H16(0xFF), H16(0xFF), H16(0xFF), 0,         1,         2,         3,         4,
    5,         6,         7,         8,         9,         0xFF,      0xFF,      0xFF,
    0xFF,      0xFF,      0xFF,      0xFF,      10,        11,        12,        13,
    14,        15,        0xFF,      0xFF,      0xFF,      0xFF,      0xFF,      0xFF,
    0xFF,      0xFF,      0xFF,      H16(0xFF), 0xFF,      10,        11,        12,
    13,        14,        15,        0xFF,      0xFF,      0xFF,      0xFF,      0xFF,
    0xFF,      0xFF,      0xFF,      0xFF,      H16(0xFF), H16(0xFF), H16(0xFF), H16(0xFF),
    H16(0xFF), H16(0xFF), H16(0xFF), H16(0xFF), H16(0xFF)};
#undef H16

static bool hex_decode(const char *s, size_t n, uint8_t *out)
{
    unsigned bad = 0;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned a = k_hexval[(uint8_t)s[2 * i]], b = k_hexval[(uint8_t)s[2 * i + 1]];
        bad |= a | b;
        out[i] = (uint8_t)(a << 4 | b);
    }
    return !(bad & 0xF0);
}

zt_status zt_digest_parse(const char *s, size_t n, zt_digest_kind *kind, uint8_t bin[32])
{
    if (n == 7 + 64 && !strncasecmp(s, "sha256:", 7) && hex_decode(s + 7, 64, bin)) {
        *kind = ZT_DIGEST_SHA256;
        return ZT_OK;
    }
    if (n == 9 + 8 && !strncasecmp(s, "crc32c:0x", 9) && hex_decode(s + 9, 8, bin)) {
        *kind = ZT_DIGEST_CRC32C;
        return ZT_OK;
    }
    if (n == 5 + 16 && !strncasecmp(s, "xxh3:", 5) && hex_decode(s + 5, 16, bin)) {
        *kind = ZT_DIGEST_XXH3;
        return ZT_OK;
    }
    return ZT_E_DIGEST_FORMAT;
}

/* 1.x digests: sha256 and crc32c only (xxh3 is v2's). */
bool zt__digest_parse_into(struct zt_component *c, const char *s, size_t len)
{
    if (zt_digest_parse(s, len, &c->digest_kind, c->digest_bin) != ZT_OK ||
        c->digest_kind == ZT_DIGEST_XXH3)
        return false;
    c->digest = s;
    return true;
}

void zt_digest_format(zt_digest_kind kind, const uint8_t *bin, char out[80])
{
    static const char hx[] = "0123456789abcdef";
    if (kind == ZT_DIGEST_SHA256) {
        memcpy(out, "sha256:", 7);
        for (int i = 0; i < 32; i++) {
            out[7 + 2 * i] = hx[bin[i] >> 4];
            out[8 + 2 * i] = hx[bin[i] & 15];
        }
        out[71] = 0;
    } else if (kind == ZT_DIGEST_CRC32C) {
        snprintf(out, 80, "crc32c:0x%02X%02X%02X%02X", bin[0], bin[1], bin[2], bin[3]);
    } else if (kind == ZT_DIGEST_XXH3) {
        memcpy(out, "xxh3:", 5);
        for (int i = 0; i < 8; i++) {
            out[5 + 2 * i] = hx[bin[i] >> 4];
            out[6 + 2 * i] = hx[bin[i] & 15];
        }
        out[21] = 0;
    } else {
        out[0] = 0;
    }
}
