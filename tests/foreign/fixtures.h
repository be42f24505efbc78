/*
 * fixtures.h: writers for safetensors and ALT files, byte by byte, that share
 * nothing with libztensor's readers, so the tests check the readers against
 * files the library did not make. Used by the cmocka tests and by
 * gen_foreign (the fixtures of test_convert.sh). Header-only, static inline.
 */
#ifndef ZT_FOREIGN_FIXTURES_H
#define ZT_FOREIGN_FIXTURES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fx_buf {
    uint8_t *p;
    size_t len, cap;
} fx_buf;

static inline void fx_raw(fx_buf *b, const void *p, size_t n)
{
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n)
            cap *= 2;
        if (!(b->p = realloc(b->p, cap)))
            abort();
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

static inline void fx_str(fx_buf *b, const char *s)
{
    fx_raw(b, s, strlen(s));
}

static inline void fx_le(fx_buf *b, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) {
        uint8_t c = (uint8_t)(v >> (8 * i));
        fx_raw(b, &c, 1);
    }
}

static inline void fx_free(fx_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

static inline int fx_save(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(p, 1, n, f) == n;
    if (f && fclose(f) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

/* Deterministic bytes for tensor data. */
static inline void fx_fill(uint8_t *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (uint8_t)(x >> 16);
    }
}

/* ---- safetensors: header text and data built side by side, written the way
 * Hugging Face's library writes them (compact JSON, __metadata__ first,
 * tensors in data order, header padded with spaces to a multiple of 8). */
typedef struct fx_st {
    fx_buf hdr, data;
    int ntensors;
} fx_st;

/* meta: the inside of the __metadata__ object ("\"format\":\"pt\""), or NULL. */
static inline void fx_st_begin(fx_st *s, const char *meta)
{
    memset(s, 0, sizeof(*s));
    fx_str(&s->hdr, "{");
    if (meta) {
        fx_str(&s->hdr, "\"__metadata__\":{");
        fx_str(&s->hdr, meta);
        fx_str(&s->hdr, "}");
        s->ntensors = 1;
    }
}

/* shape is JSON text such as "[2,3]". */
static inline void fx_st_add(fx_st *s, const char *name, const char *dtype, const char *shape,
                             const void *bytes, size_t n)
{
    char e[1024];
    snprintf(e, sizeof(e), "%s\"%s\":{\"dtype\":\"%s\",\"shape\":%s,\"data_offsets\":[%zu,%zu]}",
             s->ntensors++ ? "," : "", name, dtype, shape, s->data.len, s->data.len + n);
    fx_str(&s->hdr, e);
    fx_raw(&s->data, bytes, n);
}

/* Adds n deterministic bytes. */
static inline void fx_st_fill(fx_st *s, const char *name, const char *dtype, const char *shape,
                              size_t n, unsigned seed)
{
    uint8_t *p = malloc(n ? n : 1);
    if (!p)
        abort();
    fx_fill(p, n, seed);
    fx_st_add(s, name, dtype, shape, p, n);
    free(p);
}

/* Header size, header, data, into out. */
static inline void fx_st_finish(fx_st *s, fx_buf *out)
{
    fx_str(&s->hdr, "}");
    while (s->hdr.len % 8)
        fx_str(&s->hdr, " ");
    memset(out, 0, sizeof(*out));
    fx_le(out, s->hdr.len, 8);
    fx_raw(out, s->hdr.p, s->hdr.len);
    fx_raw(out, s->data.p, s->data.len);
    fx_free(&s->hdr);
    fx_free(&s->data);
}

/* A file from literal header text (no padding) and data. */
static inline void fx_st_raw(fx_buf *out, const char *header, const void *data, size_t n)
{
    memset(out, 0, sizeof(*out));
    fx_le(out, strlen(header), 8);
    fx_str(out, header);
    fx_raw(out, data, n);
}

/* ---- ALT. Section sizes count the bytes after the 16-byte section header
 * unless fx_alt.size_mode says otherwise (see docs/FOREIGN-FORMATS.md). */
enum { FX_SIZE_BODY = 0, FX_SIZE_WITH_HEADER = 1, FX_SIZE_PADDED = 2 };
typedef struct fx_alt {
    fx_buf b;
    size_t sec_start;
    int size_mode;
    int64_t size_delta; /* added to the next section's size: a lie */
} fx_alt;

static inline void fx_alt_pad(fx_alt *a)
{
    static const uint8_t zero[32];
    fx_raw(&a->b, zero, (32 - a->b.len % 32) % 32);
}

static inline void fx_alt_i32(fx_alt *a, int32_t v)
{
    fx_le(&a->b, (uint32_t)v, 4);
}

static inline void fx_alt_f32(fx_alt *a, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    fx_le(&a->b, u, 4);
}

static inline void fx_alt_text(fx_alt *a, const char *s, size_t n)
{
    fx_alt_i32(a, (int32_t)n);
    fx_raw(&a->b, s, n);
}

static inline void fx_alt_section(fx_alt *a, uint64_t marker)
{
    fx_alt_pad(a);
    a->sec_start = a->b.len;
    fx_le(&a->b, marker, 8);
    fx_le(&a->b, 0, 8); /* patched by fx_alt_end_section */
}

static inline uint64_t fx_alt_section_size(const fx_alt *a)
{
    size_t end = a->b.len;
    if (a->size_mode == FX_SIZE_PADDED)
        end = (end + 31) & ~(size_t)31;
    return (uint64_t)(end - a->sec_start - (a->size_mode == FX_SIZE_WITH_HEADER ? 0 : 16));
}

static inline void fx_alt_end_section(fx_alt *a)
{
    uint64_t v = fx_alt_section_size(a) + (uint64_t)a->size_delta;
    for (int i = 0; i < 8; i++)
        a->b.p[a->sec_start + 8 + (size_t)i] = (uint8_t)(v >> (8 * i));
    a->size_delta = 0;
}

/* magic: "altc" or "ctla" */
static inline void fx_alt_begin(fx_alt *a, const char *magic, const char *model_type)
{
    fx_raw(&a->b, magic, 4);
    fx_alt_section(a, 0xDEADBEEF);
    fx_alt_text(a, model_type, strlen(model_type));
    const int32_t cfg[6] = {64, 2, 224, 4, 2, 4096};
    for (int i = 0; i < 6; i++)
        fx_alt_i32(a, cfg[i]);
    fx_alt_f32(a, 10000.0f);
    fx_alt_f32(a, 1e-5f);
    fx_alt_i32(a, 16);   /* head_size */
    fx_alt_i32(a, 0);    /* data_type */
    fx_alt_i32(a, 8192); /* context_length */
    fx_alt_end_section(a);
}

/* The tokenizer section; its inner header size is the section size. */
static inline void fx_alt_tokens(fx_alt *a, const char *const *tok, const size_t *len, int n)
{
    fx_alt_section(a, 0xBADDCAFE);
    size_t inner = a->b.len;
    fx_le(&a->b, 0, 8);
    fx_alt_i32(a, n);
    fx_alt_i32(a, 1);  /* bos */
    fx_alt_i32(a, 2);  /* eos */
    fx_alt_i32(a, -1); /* pad */
    fx_alt_i32(a, 0);  /* unk */
    for (int i = 0; i < n; i++)
        fx_alt_text(a, tok[i], len[i]);
    uint64_t v = fx_alt_section_size(a);
    for (int i = 0; i < 8; i++)
        a->b.p[inner + (size_t)i] = (uint8_t)(v >> (8 * i));
    fx_alt_end_section(a);
}

static inline void fx_alt_tensors_begin(fx_alt *a, int64_t count, int64_t shape_count)
{
    fx_alt_section(a, 0xFACEFEED);
    fx_le(&a->b, (uint64_t)count, 8);
    fx_le(&a->b, (uint64_t)shape_count, 8);
}

static inline void fx_alt_tensor(fx_alt *a, const char *name, int32_t dtype, int nd,
                                 const int32_t *dims, const void *data, size_t n)
{
    fx_alt_i32(a, nd);
    fx_alt_i32(a, (int32_t)strlen(name));
    fx_alt_i32(a, dtype);
    for (int i = 0; i < nd; i++)
        fx_alt_i32(a, dims[i]);
    fx_str(&a->b, name);
    fx_raw(&a->b, data, n);
}

static inline void fx_alt_finish(fx_alt *a, uint32_t end_marker)
{
    fx_alt_end_section(a);
    fx_alt_pad(a);
    fx_le(&a->b, end_marker, 4);
}

#endif
