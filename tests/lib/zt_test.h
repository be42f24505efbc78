/*
 * zt_test.h: helpers shared by the unit tests in tests/lib. A tiny CBOR
 * builder that is independent of the library's own encoder (so the decoder is
 * tested against bytes the library did not produce), a .zt file assembler
 * (1.2 layout with footer magic, or 1.0 layout without), temporary
 * directories, and whole-file reads. Header-only: every function is static
 * inline so a test file that does not use one does not warn.
 */
#ifndef ZT_TEST_H
#define ZT_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ztensor/ztensor.h"
#include "ztensor/ztensor_experimental.h"

/* ---- a growable byte buffer and a CBOR builder */
typedef struct tb {
    uint8_t *p;
    size_t len, cap;
} tb;

static inline void tb_raw(tb *b, const void *p, size_t n)
{
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        assert_non_null(b->p);
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

static inline void tb_byte(tb *b, uint8_t c)
{
    tb_raw(b, &c, 1);
}

static inline void tb_free(tb *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* Shortest head, as RFC 8949 preferred serialisation. */
static inline void tb_head(tb *b, unsigned major, uint64_t v)
{
    uint8_t m = (uint8_t)(major << 5);
    if (v < 24) {
        tb_byte(b, m | (uint8_t)v);
    } else if (v <= 0xFF) {
        tb_byte(b, m | 24);
        tb_byte(b, (uint8_t)v);
    } else if (v <= 0xFFFF) {
        tb_byte(b, m | 25);
        tb_byte(b, (uint8_t)(v >> 8));
        tb_byte(b, (uint8_t)v);
    } else if (v <= 0xFFFFFFFFu) {
        tb_byte(b, m | 26);
        for (int i = 3; i >= 0; i--)
            tb_byte(b, (uint8_t)(v >> (8 * i)));
    } else {
        tb_byte(b, m | 27);
        for (int i = 7; i >= 0; i--)
            tb_byte(b, (uint8_t)(v >> (8 * i)));
    }
}

static inline void tb_uint(tb *b, uint64_t v)
{
    tb_head(b, 0, v);
}
static inline void tb_neg(tb *b, uint64_t v)
{
    tb_head(b, 1, v);
} /* -1 - v */
static inline void tb_map(tb *b, uint64_t n)
{
    tb_head(b, 5, n);
}
static inline void tb_array(tb *b, uint64_t n)
{
    tb_head(b, 4, n);
}
static inline void tb_tag(tb *b, uint64_t t)
{
    tb_head(b, 6, t);
}

static inline void tb_textn(tb *b, const char *s, size_t n)
{
    tb_head(b, 3, n);
    tb_raw(b, s, n);
}
static inline void tb_text(tb *b, const char *s)
{
    tb_textn(b, s, strlen(s));
}

static inline void tb_bytes(tb *b, const void *p, size_t n)
{
    tb_head(b, 2, n);
    tb_raw(b, p, n);
}

static inline void tb_f64(tb *b, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    tb_byte(b, 0xFB);
    for (int i = 7; i >= 0; i--)
        tb_byte(b, (uint8_t)(bits >> (8 * i)));
}

static inline void tb_f32(tb *b, float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    tb_byte(b, 0xFA);
    for (int i = 3; i >= 0; i--)
        tb_byte(b, (uint8_t)(bits >> (8 * i)));
}

/* A component map: "dtype", "offset", "length", and optionally "encoding",
 * "uncompressed_length" (when ulen != UINT64_MAX), "digest", "type". */
typedef struct tcomp {
    const char *dtype; /* NULL: no dtype key */
    uint64_t offset, length;
    const char *encoding; /* NULL: absent */
    uint64_t ulen;        /* UINT64_MAX: absent */
    const char *digest;   /* NULL: absent */
    const char *type;     /* NULL: absent */
} tcomp;

static inline void tb_comp(tb *b, const tcomp *c)
{
    unsigned n = 2 + !!c->dtype + !!c->encoding + (c->ulen != UINT64_MAX) + !!c->digest + !!c->type;
    tb_map(b, n);
    if (c->dtype) {
        tb_text(b, "dtype");
        tb_text(b, c->dtype);
    }
    tb_text(b, "offset");
    tb_uint(b, c->offset);
    tb_text(b, "length");
    tb_uint(b, c->length);
    if (c->encoding) {
        tb_text(b, "encoding");
        tb_text(b, c->encoding);
    }
    if (c->ulen != UINT64_MAX) {
        tb_text(b, "uncompressed_length");
        tb_uint(b, c->ulen);
    }
    if (c->digest) {
        tb_text(b, "digest");
        tb_text(b, c->digest);
    }
    if (c->type) {
        tb_text(b, "type");
        tb_text(b, c->type);
    }
}

/* A dense object {"shape": [...], "format": "dense", "components": {"data": c}}. */
static inline void tb_dense(tb *b, size_t ndim, const uint64_t *shape, const tcomp *c)
{
    tb_map(b, 3);
    tb_text(b, "shape");
    tb_array(b, ndim);
    for (size_t i = 0; i < ndim; i++)
        tb_uint(b, shape[i]);
    tb_text(b, "format");
    tb_text(b, "dense");
    tb_text(b, "components");
    tb_map(b, 1);
    tb_text(b, "data");
    tb_comp(b, c);
}

/* ---- .zt assembly */

/* data[0..data_len) is the file before the manifest; its first 8 bytes are
 * overwritten with the header magic. footer=1: 1.2 layout; 0: 1.0 layout. */
static inline uint8_t *zt_test_assemble(const uint8_t *data, size_t data_len, const tb *manifest,
                                        int footer, size_t *out_len)
{
    size_t n = data_len + manifest->len + 8 + (footer ? 8 : 0);
    uint8_t *f = calloc(1, n);
    assert_non_null(f);
    assert_true(data_len >= 8);
    memcpy(f, data, data_len);
    memcpy(f, "ZTEN1000", 8);
    memcpy(f + data_len, manifest->p, manifest->len);
    uint64_t m = manifest->len;
    for (int i = 0; i < 8; i++)
        f[data_len + manifest->len + i] = (uint8_t)(m >> (8 * i));
    if (footer)
        memcpy(f + data_len + manifest->len + 8, "ZTEN1000", 8);
    *out_len = n;
    return f;
}

/* ---- files and directories */

static inline const char *zt_test_tmp_base(void)
{
    const char *t = getenv("ZT_TEST_TMP");
    return t && *t ? t : "/tmp";
}

/* A fresh directory; the caller frees the string (and removes the tree with
 * zt_test_rmtree). */
static inline char *zt_test_mkdtemp(const char *tag)
{
    char *p = malloc(4096);
    assert_non_null(p);
    snprintf(p, 4096, "%s/%s.XXXXXX", zt_test_tmp_base(), tag);
    assert_non_null(mkdtemp(p));
    return p;
}

/* Number of entries in dir other than . and .. */
static inline int zt_test_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static inline void zt_test_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static inline uint8_t *zt_test_read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    struct stat sb;
    assert_int_equal(fstat(fd, &sb), 0);
    size_t n = (size_t)sb.st_size;
    uint8_t *p = malloc(n ? n : 1);
    assert_non_null(p);
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        assert_true(r > 0);
        got += (size_t)r;
    }
    close(fd);
    *len = n;
    return p;
}

static inline uint8_t *zt_test_read_fd(int fd, size_t *len)
{
    struct stat sb;
    assert_int_equal(fstat(fd, &sb), 0);
    size_t n = (size_t)sb.st_size;
    uint8_t *p = malloc(n ? n : 1);
    assert_non_null(p);
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, p + got, n - got, (off_t)got);
        assert_true(r > 0);
        got += (size_t)r;
    }
    *len = n;
    return p;
}

/* Deterministic pseudo-random bytes (xorshift), so failures reproduce. */
static inline void zt_test_fill(uint8_t *p, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)(x >> 32);
    }
}

#define ASSERT_ST(expr, code)                                                                      \
    do {                                                                                           \
        zt_status st__ = (expr);                                                                   \
        if (st__ != (code))                                                                        \
            fail_msg("%s returned %s, expected %s", #expr, zt_status_name(st__),                   \
                     zt_status_name(code));                                                        \
    } while (0)

#define ASSERT_OK(expr, errp)                                                                      \
    do {                                                                                           \
        zt_status st__ = (expr);                                                                   \
        if (st__ != ZT_OK)                                                                         \
            fail_msg("%s failed: %s", #expr, (errp)->message);                                     \
    } while (0)

#endif
