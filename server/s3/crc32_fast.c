/*
 * CRC-32 by PCLMULQDQ folding, with zlib as the fallback (crc32_fast.h).
 *
 * Four 128-bit lanes fold 64 bytes per round; the lanes are folded into one,
 * then 16 bytes at a time, then 128 bits to 64 and a Barrett reduction to
 * 32. The constants are the bit-reflected ones of the paper (also in
 * Chromium's zlib, crc32_simd.c): k1 = x^(4*128+32) mod P, k2 = x^(4*128-32)
 * mod P, k3/k4 the same for one lane, k5 = x^64 mod P, and P' / mu for the
 * reduction. The folding works on the inverted CRC; whatever is left after
 * the last whole 16 bytes goes through zlib.
 */
#include "s3/crc32_fast.h"

#include <zlib.h>

static uint32_t zlib_crc(uint32_t crc, const uint8_t *b, size_t n)
{
    while (n) {
        uInt m = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = (uint32_t)crc32(crc, b, m);
        b += m;
        n -= m;
    }
    return crc;
}

uint32_t ztd_crc32_portable(uint32_t crc, const void *p, size_t n)
{
    return zlib_crc(crc, p, n);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define FOLD_TARGET __attribute__((target("pclmul,sse4.1")))

/* One fold of x by the constant pair k, xored with next. */
FOLD_TARGET static inline __m128i fold(__m128i x, __m128i k, __m128i next)
{
    __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
    __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(hi, lo), next);
}

/* The inverted CRC c over n bytes (n >= 64, a multiple of 16); inverted result. */
FOLD_TARGET static uint32_t fold_crc(uint32_t c, const uint8_t *b, size_t n)
{
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
    const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
    const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
    const __m128i mask32 = _mm_setr_epi32(-1, 0, -1, 0);
    __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)b);
    __m128i x2 = _mm_loadu_si128((const __m128i *)(const void *)(b + 16));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(const void *)(b + 32));
    __m128i x4 = _mm_loadu_si128((const __m128i *)(const void *)(b + 48));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)c));
    for (b += 64, n -= 64; n >= 64; b += 64, n -= 64) {
        x1 = fold(x1, k1k2, _mm_loadu_si128((const __m128i *)(const void *)b));
        x2 = fold(x2, k1k2, _mm_loadu_si128((const __m128i *)(const void *)(b + 16)));
        x3 = fold(x3, k1k2, _mm_loadu_si128((const __m128i *)(const void *)(b + 32)));
        x4 = fold(x4, k1k2, _mm_loadu_si128((const __m128i *)(const void *)(b + 48)));
    }
    x1 = fold(fold(fold(x1, k3k4, x2), k3k4, x3), k3k4, x4);
    for (; n >= 16; b += 16, n -= 16)
        x1 = fold(x1, k3k4, _mm_loadu_si128((const __m128i *)(const void *)b));
    /* 128 bits to 64 */
    __m128i t = _mm_clmulepi64_si128(x1, k3k4, 0x10);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), t);
    t = _mm_srli_si128(x1, 4);
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5k0, 0x00), t);
    /* Barrett reduction to 32 */
    t = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly, 0x00);
    return (uint32_t)_mm_extract_epi32(_mm_xor_si128(x1, t), 1);
}

int ztd_crc32_folds(void)
{
    static int v = -1; /* a race here writes the same value twice */
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
    }
    return v;
}

uint32_t ztd_crc32(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *b = p;
    if (n >= 64 && ztd_crc32_folds()) {
        size_t m = n & ~(size_t)15;
        crc = ~fold_crc(~crc, b, m);
        b += m;
        n -= m;
    }
    return zlib_crc(crc, b, n);
}
#else
int ztd_crc32_folds(void)
{
    return 0;
}

uint32_t ztd_crc32(uint32_t crc, const void *p, size_t n)
{
    return zlib_crc(crc, p, n);
}
#endif
