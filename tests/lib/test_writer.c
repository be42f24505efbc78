/*
 * test_writer.c: the append-only streaming writer (lib/src/writer.c).
 *  - round trips over every dtype x {raw, zstd} x {sha256, crc32c, none},
 *    logical types, sparse and quantized objects, attributes;
 *  - it never seeks backwards: output through an O_APPEND fd and through a
 *    pipe is byte-identical to output to a plain file;
 *  - crash safety: every strict prefix of its output is rejected by the
 *    reader, a writer freed (or a process killed) before finish leaves no
 *    file at the path, and zt_writer_cancel cuts the bytes back out;
 *  - a finish that fails for want of space (the manifest, or the last
 *    buffered bytes of a component, do not fit) leaves the writer as it was:
 *    the same finish, once there is room, writes the very same file;
 *  - digests computed on the background thread (components over the 1 MiB
 *    buffer) give the same file as inline hashing, and match SHA-256
 *    computed here with OpenSSL over the stored bytes;
 *  - validation at add_object, call-order errors;
 *  - canonical CBOR: libcbor decodes the manifest, heads are shortest, map
 *    keys sorted, and the same objects added in another order give the same
 *    bytes.
 */
#include "zt_test.h"

#include <cbor.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <zstd.h>

static const char *const ROLE_DATA[1] = {"data"};

static zt_writer_options nosync(void)
{
    zt_writer_options o;
    zt_writer_options_init(&o);
    o.fsync = 0;
    return o;
}

/* Writes one component from `data` in pieces of `chunk` bytes; returns its id. */
static size_t put(zt_writer *w, zt_dtype d, const char *type, zt_encoding enc, zt_digest_kind dig,
                  const void *data, size_t n, size_t chunk)
{
    zt_error err;
    zt_component_spec spec = {.dtype = d, .type = type, .encoding = enc, .digest = dig};
    ASSERT_OK(zt_writer_begin(w, &spec, &err), &err);
    for (size_t done = 0; done < n;) {
        size_t k = n - done < chunk ? n - done : chunk;
        ASSERT_OK(zt_writer_write(w, (const uint8_t *)data + done, k, &err), &err);
        done += k;
    }
    size_t id = 999;
    ASSERT_OK(zt_writer_end(w, &id, &err), &err);
    assert_int_equal(zt_writer_position(w) % 64, 0);
    return id;
}

static void add_dense(zt_writer *w, const char *name, size_t ndim, const uint64_t *shape, size_t id,
                      const char *attrs)
{
    zt_error err;
    ASSERT_OK(zt_writer_add_object(w, name, "dense", ndim, shape, attrs, 1, ROLE_DATA, &id, &err),
              &err);
}

/* Element data: random, except bool which must be 0 or 1. */
static uint8_t *elements(zt_dtype d, size_t count, uint64_t seed, size_t *n)
{
    *n = count * zt_dtype_width(d);
    uint8_t *p = malloc(*n ? *n : 1);
    zt_test_fill(p, *n, seed);
    if (d == ZT_DTYPE_BOOL)
        for (size_t i = 0; i < *n; i++)
            p[i] &= 1;
    return p;
}

static void read_back(const zt_file *f, const zt_component *c, const uint8_t *want, size_t n)
{
    zt_error err;
    uint8_t *buf = malloc(n + 1);
    size_t got = 12345;
    ASSERT_OK(zt_component_read(f, c, buf, n + 1, &got, &err), &err);
    assert_int_equal(got, n);
    if (n)
        assert_memory_equal(buf, want, n);
    free(buf);
}

static char *path_in(const char *dir, const char *name)
{
    char *p = malloc(4200);
    snprintf(p, 4200, "%s/%s", dir, name);
    return p;
}

/* ---- round trips */

static void every_dtype_encoding_digest(void **state)
{
    (void)state;
    char *dir = zt_test_mkdtemp("writer");
    char *path = path_in(dir, "all.zt");
    zt_writer_options o = nosync();
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open(path, &o, &w, &err), &err);
    static const char *encn[2] = {"raw", "zstd"};
    static const char *dign[3] = {"none", "sha256", "crc32c"};
    uint8_t *data[ZT_DTYPE_COUNT][2][3];
    size_t len[ZT_DTYPE_COUNT][2][3];
    zt_written_component info[ZT_DTYPE_COUNT][2][3];
    uint64_t shape[2] = {3, 7};
    for (int d = 1; d < ZT_DTYPE_COUNT; d++)
        for (int e = 0; e < 2; e++)
            for (int g = 0; g < 3; g++) {
                data[d][e][g] =
                    elements((zt_dtype)d, 21, (uint64_t)(d * 100 + e * 10 + g), &len[d][e][g]);
                size_t id = put(w, (zt_dtype)d, NULL, (zt_encoding)e, (zt_digest_kind)g,
                                data[d][e][g], len[d][e][g], 5);
                ASSERT_OK(zt_writer_component_info(w, id, &info[d][e][g]), &err);
                char name[64];
                snprintf(name, sizeof name, "%s.%s.%s", zt_dtype_name((zt_dtype)d), encn[e],
                         dign[g]);
                add_dense(w, name, 2, shape, id, NULL);
            }
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);

    /* Read back through the mapped reader and from memory. */
    size_t flen;
    uint8_t *bytes = zt_test_read_file(path, &flen);
    for (int how = 0; how < 2; how++) {
        zt_file *f;
        if (how == 0)
            ASSERT_OK(zt_open(path, NULL, &f, &err), &err);
        else
            ASSERT_OK(zt_open_memory(bytes, flen, NULL, &f, &err), &err);
        assert_int_equal(zt_file_get_kind(f), ZT_KIND_ZT_1_2);
        assert_string_equal(zt_file_version(f), ZT_FORMAT_VERSION);
        assert_int_equal(zt_file_object_count(f), 13 * 6);
        for (int d = 1; d < ZT_DTYPE_COUNT; d++)
            for (int e = 0; e < 2; e++)
                for (int g = 0; g < 3; g++) {
                    char name[64];
                    snprintf(name, sizeof name, "%s.%s.%s", zt_dtype_name((zt_dtype)d), encn[e],
                             dign[g]);
                    const zt_object *ob = zt_file_find_object(f, name, strlen(name));
                    assert_non_null(ob);
                    assert_string_equal(zt_object_format(ob), "dense");
                    assert_int_equal(zt_object_ndim(ob), 2);
                    assert_int_equal(zt_object_shape(ob)[1], 7);
                    const zt_component *c = zt_object_find_component(ob, "data");
                    zt_written_component *wi = &info[d][e][g];
                    assert_int_equal(zt_component_dtype(c), d);
                    assert_null(zt_component_type(c));
                    assert_int_equal(zt_component_encoding(c), e);
                    assert_int_equal(zt_component_digest_kind(c), g);
                    assert_int_equal(zt_component_offset(c), wi->offset);
                    assert_int_equal(zt_component_offset(c) % 64, 0);
                    assert_int_equal(zt_component_length(c), wi->length);
                    assert_int_equal(zt_component_decoded_length(c), len[d][e][g]);
                    assert_int_equal(wi->uncompressed_length, len[d][e][g]);
                    const uint8_t *stored = zt_component_stored(f, c);
                    if (e == ZT_ENC_RAW) {
                        assert_int_equal(wi->length, len[d][e][g]);
                        assert_memory_equal(stored, data[d][e][g], len[d][e][g]);
                    } else {
                        /* an independent decoder agrees */
                        uint8_t out[256];
                        size_t r = ZSTD_decompress(out, sizeof out, stored, wi->length);
                        assert_false(ZSTD_isError(r));
                        assert_int_equal(r, len[d][e][g]);
                        assert_memory_equal(out, data[d][e][g], r);
                    }
                    read_back(f, c, data[d][e][g], len[d][e][g]);
                    int checked = -1;
                    ASSERT_OK(zt_component_verify(f, ob, c, &checked, &err), &err);
                    assert_int_equal(checked, g != ZT_DIGEST_NONE);
                    if (g == ZT_DIGEST_NONE) {
                        assert_null(zt_component_digest(c));
                        assert_string_equal(wi->digest, "");
                    } else {
                        assert_string_equal(zt_component_digest(c), wi->digest);
                    }
                    /* digests are over the stored (compressed) bytes */
                    char want[80];
                    if (g == ZT_DIGEST_CRC32C) {
                        uint32_t crc = zt_crc32c(0, stored, wi->length);
                        snprintf(want, sizeof want, "crc32c:0x%08X", crc);
                        assert_string_equal(wi->digest, want);
                    } else if (g == ZT_DIGEST_SHA256) {
                        zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
                        zt_hasher_update(h, stored, wi->length);
                        uint8_t bin[32];
                        zt_hasher_final(h, bin);
                        zt_hasher_free(h);
                        assert_memory_equal(bin, wi->sha256, 32);
                        zt_digest_format(ZT_DIGEST_SHA256, bin, want);
                        assert_string_equal(wi->digest, want);
                    }
                }
        zt_close(f);
    }
    for (int d = 1; d < ZT_DTYPE_COUNT; d++)
        for (int e = 0; e < 2; e++)
            for (int g = 0; g < 3; g++)
                free(data[d][e][g]);
    free(bytes);
    free(path);
    zt_test_rmtree(dir);
    free(dir);
}

static void large_components_in_odd_chunks(void **state)
{
    (void)state;
    /* Larger than the writer's 1 MiB buffer and zstd's block, written in
     * pieces that straddle every boundary. */
    char *dir = zt_test_mkdtemp("writer");
    char *path = path_in(dir, "big.zt");
    size_t count = (3u << 20) / 4 + 13, n;
    uint8_t *a = elements(ZT_DTYPE_F32, count, 1, &n);
    /* make half of it compressible */
    memset(a, 0, n / 2);
    zt_writer_options o = nosync();
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open(path, &o, &w, &err), &err);
    uint64_t shape[1] = {count};
    size_t ids[4];
    size_t chunks[4] = {1 << 20, 65537, 7, (3u << 20) + 100};
    for (int i = 0; i < 4; i++) {
        ids[i] =
            put(w, ZT_DTYPE_F32, NULL, (zt_encoding)(i & 1), ZT_DIGEST_SHA256, a, n, chunks[i]);
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        add_dense(w, name, 1, shape, ids[i], NULL);
    }
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);
    zt_file *f;
    ASSERT_OK(zt_open(path, NULL, &f, &err), &err);
    for (int i = 0; i < 4; i++) {
        const zt_object *ob = zt_file_object_at(f, (size_t)i);
        const zt_component *c = zt_object_component_at(ob, 0);
        read_back(f, c, a, n);
        int checked;
        ASSERT_OK(zt_component_verify(f, ob, c, &checked, &err), &err);
        if (i & 1)
            assert_true(zt_component_length(c) < n);
    }
    zt_close(f);
    free(a);
    free(path);
    zt_test_rmtree(dir);
    free(dir);
}

/* One file of components around the 1 MiB buffer size, raw and zstd, with
 * digests inline or on the background thread; a cancelled large component in
 * the middle. Returns the bytes. */
static uint8_t *digest_sample(int inline_digest, const uint8_t *data, size_t *len)
{
    static const size_t sizes[] = {0, 100, 1u << 20, (1u << 20) + 1, (5u << 20) + 17};
    char *dir = zt_test_mkdtemp("writer");
    char *p = path_in(dir, "d.zt");
    int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    zt_writer_options o = nosync();
    o.digest_inline = inline_digest;
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open_fd(fd, &o, &w, &err), &err);
    for (size_t i = 0; i < 2 * sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i / 2];
        zt_encoding enc = (zt_encoding)(i & 1);
        size_t id = put(w, ZT_DTYPE_U8, NULL, enc, ZT_DIGEST_SHA256, data, n, 65536 + 3);
        uint64_t shape[1] = {n};
        char name[16];
        snprintf(name, sizeof name, "c%zu", i);
        add_dense(w, name, 1, shape, id, NULL);
        if (i == 4) { /* a piped component cancelled half way */
            zt_component_spec spec = {.dtype = ZT_DTYPE_U8, .digest = ZT_DIGEST_SHA256};
            ASSERT_OK(zt_writer_begin(w, &spec, &err), &err);
            ASSERT_OK(zt_writer_write(w, data, 3u << 20, &err), &err);
            ASSERT_OK(zt_writer_cancel(w, &err), &err);
        }
    }
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);
    uint8_t *b = zt_test_read_fd(fd, len);
    close(fd);
    free(p);
    zt_test_rmtree(dir);
    free(dir);
    return b;
}

static void background_digests(void **state)
{
    (void)state;
    size_t n;
    uint8_t *data = elements(ZT_DTYPE_U8, (5u << 20) + 17, 21, &n);
    memset(data + (2u << 20), 0, 1u << 20); /* something for zstd */
    size_t la, lb;
    uint8_t *a = digest_sample(1, data, &la), *b = digest_sample(0, data, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    zt_file *f;
    zt_error err;
    ASSERT_OK(zt_open_memory(b, lb, NULL, &f, &err), &err);
    assert_int_equal(zt_file_object_count(f), 10);
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_component *c = zt_object_component_at(zt_file_object_at(f, i), 0);
        uint8_t md[32];
        unsigned mdlen;
        EVP_Digest(b + zt_component_offset(c), zt_component_length(c), md, &mdlen, EVP_sha256(),
                   NULL);
        size_t dl;
        const uint8_t *got = zt_component_digest_bytes(c, &dl);
        assert_int_equal(dl, 32);
        assert_memory_equal(got, md, 32);
    }
    zt_close(f);
    /* From a path (read with pread, a large component hashed on another
     * thread while the next MiB is read): every digest holds, then one byte
     * flipped 3 MiB into the largest component is found. */
    char *dir = zt_test_mkdtemp("writer");
    char *p = path_in(dir, "v.zt");
    FILE *fp = fopen(p, "wb");
    assert_int_equal(fwrite(b, 1, lb, fp), lb);
    fclose(fp);
    ASSERT_OK(zt_open(p, NULL, &f, &err), &err);
    const zt_object *o8 = zt_file_object_at(f, 8);
    const zt_component *c8 = zt_object_component_at(o8, 0);
    assert_int_equal(zt_component_length(c8), (5u << 20) + 17);
    int checked;
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        ASSERT_OK(zt_component_verify(f, o, zt_object_component_at(o, 0), &checked, &err), &err);
    }
    uint64_t at = zt_component_offset(c8) + (3u << 20);
    zt_close(f);
    int fd = open(p, O_RDWR);
    uint8_t byte = (uint8_t)(b[at] ^ 0x40);
    assert_int_equal(pwrite(fd, &byte, 1, (off_t)at), 1);
    close(fd);
    ASSERT_OK(zt_open(p, NULL, &f, &err), &err);
    o8 = zt_file_object_at(f, 8);
    ASSERT_ST(zt_component_verify(f, o8, zt_object_component_at(o8, 0), &checked, &err),
              ZT_E_DIGEST_MISMATCH);
    zt_close(f);
    free(p);
    zt_test_rmtree(dir);
    free(dir);
    free(a);
    free(b);
    free(data);
}

static void logical_types(void **state)
{
    (void)state;
    static const struct {
        const char *type;
        zt_dtype d;
        unsigned ratio;
    } t[] = {
        {"f8_e4m3fn", ZT_DTYPE_U8, 1},   {"f8_e5m2", ZT_DTYPE_U8, 1},
        {"f8_e4m3fnuz", ZT_DTYPE_U8, 1}, {"f8_e5m2fnuz", ZT_DTYPE_U8, 1},
        {"complex64", ZT_DTYPE_F32, 2},  {"complex128", ZT_DTYPE_F64, 2},
        {"int4_packed", ZT_DTYPE_U8, 1}, /* unknown: sized by dtype */
    };
    size_t nt = sizeof(t) / sizeof(t[0]);
    int fd = memfd_create("lt", 0);
    assert_true(fd >= 0);
    zt_writer_options o = nosync();
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open_fd(fd, &o, &w, &err), &err);
    uint64_t shape[2] = {2, 5};
    uint8_t *data[8];
    size_t n[8];
    for (size_t i = 0; i < nt; i++) {
        data[i] = elements(t[i].d, 10 * t[i].ratio, i, &n[i]);
        size_t id = put(w, t[i].d, t[i].type, ZT_ENC_RAW, ZT_DIGEST_NONE, data[i], n[i], 64);
        add_dense(w, t[i].type, 2, shape, id, NULL);
    }
    /* a known logical type with the wrong storage dtype is refused */
    size_t bad = put(w, ZT_DTYPE_I8, "f8_e4m3fn", ZT_ENC_RAW, ZT_DIGEST_NONE, data[0], 10, 64);
    ASSERT_ST(zt_writer_add_object(w, "bad", "dense", 2, shape, NULL, 1, ROLE_DATA, &bad, &err),
              ZT_E_TYPE);
    /* complex64 without the ratio is the wrong size */
    size_t half = put(w, ZT_DTYPE_F32, "complex64", ZT_ENC_RAW, ZT_DIGEST_NONE, data[4], 40, 64);
    ASSERT_ST(zt_writer_add_object(w, "half", "dense", 2, shape, NULL, 1, ROLE_DATA, &half, &err),
              ZT_E_SIZE);
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);
    size_t flen;
    uint8_t *bytes = zt_test_read_fd(fd, &flen);
    close(fd);
    zt_file *f;
    ASSERT_OK(zt_open_memory(bytes, flen, NULL, &f, &err), &err);
    assert_int_equal(zt_file_object_count(f), nt);
    for (size_t i = 0; i < nt; i++) {
        const zt_object *ob = zt_file_find_object(f, t[i].type, strlen(t[i].type));
        const zt_component *c = zt_object_component_at(ob, 0);
        assert_string_equal(zt_component_type(c), t[i].type);
        assert_int_equal(zt_component_dtype(c), t[i].d);
        read_back(f, c, data[i], n[i]);
        free(data[i]);
    }
    zt_close(f);
    free(bytes);
}

static void sparse_quantized_and_attributes(void **state)
{
    (void)state;
    int fd = memfd_create("sq", 0);
    zt_writer_options o = nosync();
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open_fd(fd, &o, &w, &err), &err);
    ASSERT_OK(zt_writer_set_attributes(w, "{\"framework\":\"PyTorch\",\"step\":1000}", &err), &err);
    /* CSR 3x4: [[1,0,2,0],[0,0,0,3],[4,5,0,0]] */
    float values[5] = {1, 2, 3, 4, 5};
    uint64_t indices[5] = {0, 2, 3, 0, 1}, indptr[4] = {0, 2, 3, 5};
    size_t ids[3];
    ids[0] = put(w, ZT_DTYPE_F32, NULL, ZT_ENC_ZSTD, ZT_DIGEST_CRC32C, values, sizeof values, 3);
    ids[1] = put(w, ZT_DTYPE_U64, NULL, ZT_ENC_RAW, ZT_DIGEST_SHA256, indices, sizeof indices, 8);
    ids[2] = put(w, ZT_DTYPE_U64, NULL, ZT_ENC_ZSTD, ZT_DIGEST_NONE, indptr, sizeof indptr, 100);
    const char *csr_roles[3] = {"values", "indices", "indptr"};
    uint64_t shape[2] = {3, 4};
    ASSERT_OK(zt_writer_add_object(w, "csr", "sparse_csr", 2, shape, NULL, 3, csr_roles, ids, &err),
              &err);
    /* COO of the same matrix: rows then columns */
    uint64_t coords[10] = {0, 0, 1, 2, 2, 0, 2, 3, 0, 1};
    size_t cids[2] = {
        ids[0], put(w, ZT_DTYPE_U64, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, coords, sizeof coords, 80)};
    const char *coo_roles[2] = {"values", "coords"};
    ASSERT_OK(zt_writer_add_object(w, "coo", "sparse_coo", 2, shape, "{\"sorted\":true}", 2,
                                   coo_roles, cids, &err),
              &err);
    /* quantized_group 4-bit, shape [8, 64]: 8*64/8 i32 words, 8 groups of 64 */
    uint8_t packed[8 * 8 * 4], scales[8 * 2], zeros[8 * 2];
    zt_test_fill(packed, sizeof packed, 3);
    zt_test_fill(scales, sizeof scales, 4);
    zt_test_fill(zeros, sizeof zeros, 5);
    size_t qids[3] = {
        put(w, ZT_DTYPE_I32, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, packed, sizeof packed, 99),
        put(w, ZT_DTYPE_F16, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, scales, sizeof scales, 99),
        put(w, ZT_DTYPE_F16, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, zeros, sizeof zeros, 99)};
    const char *q_roles[3] = {"packed_weight", "scales", "zeros"};
    uint64_t qshape[2] = {8, 64};
    ASSERT_OK(zt_writer_add_object(w, "q", "quantized_group", 2, qshape,
                                   "{\"bits\":4,\"group_size\":64,\"packing\":\"8_per_i32\"}", 3,
                                   q_roles, qids, &err),
              &err);
    /* quantized_group without zeros is refused */
    ASSERT_ST(
        zt_writer_add_object(w, "q2", "quantized_group", 2, qshape, NULL, 2, q_roles, qids, &err),
        ZT_E_COMPONENTS);
    assert_string_equal(err.component, "zeros");
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);

    size_t flen;
    uint8_t *bytes = zt_test_read_fd(fd, &flen);
    close(fd);
    zt_file *f;
    ASSERT_OK(zt_open_memory(bytes, flen, NULL, &f, &err), &err);
    const zt_value *fa = zt_file_attributes(f);
    assert_string_equal(zt_value_data(zt_value_get(fa, "framework"), NULL), "PyTorch");
    assert_int_equal(zt_value_uint(zt_value_get(fa, "step")), 1000);
    const zt_object *csr = zt_file_find_object(f, "csr", 3);
    assert_string_equal(zt_object_format(csr), "sparse_csr");
    read_back(f, zt_object_find_component(csr, "values"), (uint8_t *)values, sizeof values);
    read_back(f, zt_object_find_component(csr, "indices"), (uint8_t *)indices, sizeof indices);
    read_back(f, zt_object_find_component(csr, "indptr"), (uint8_t *)indptr, sizeof indptr);
    const zt_object *coo = zt_file_find_object(f, "coo", 3);
    assert_int_equal(zt_value_get_kind(zt_value_get(zt_object_attributes(coo), "sorted")),
                     ZT_VAL_TRUE);
    /* the shared values component is the same bytes */
    assert_int_equal(zt_component_offset(zt_object_find_component(coo, "values")),
                     zt_component_offset(zt_object_find_component(csr, "values")));
    read_back(f, zt_object_find_component(coo, "coords"), (uint8_t *)coords, sizeof coords);
    const zt_object *q = zt_file_find_object(f, "q", 1);
    const zt_value *qa = zt_object_attributes(q);
    assert_int_equal(zt_value_uint(zt_value_get(qa, "bits")), 4);
    assert_int_equal(zt_value_uint(zt_value_get(qa, "group_size")), 64);
    assert_string_equal(zt_value_data(zt_value_get(qa, "packing"), NULL), "8_per_i32");
    assert_int_equal(zt_component_dtype(zt_object_find_component(q, "packed_weight")),
                     ZT_DTYPE_I32);
    read_back(f, zt_object_find_component(q, "scales"), scales, sizeof scales);
    assert_null(zt_file_find_object(f, "q2", 2));
    zt_close(f);
    free(bytes);
}

/* ---- never seeks backwards */

/* Writes a small but varied file to fd, checking after each step that the
 * file never shrinks (nothing is rewritten or cut). */
static void write_sample(int fd, int check_growth)
{
    zt_writer_options o = nosync();
    zt_writer *w;
    zt_error err;
    struct stat sb;
    off_t last = 0;
#define GROWS()                                                                                    \
    do {                                                                                           \
        if (check_growth) {                                                                        \
            assert_int_equal(fstat(fd, &sb), 0);                                                   \
            assert_true(sb.st_size >= last);                                                       \
            last = sb.st_size;                                                                     \
        }                                                                                          \
    } while (0)
    ASSERT_OK(zt_writer_open_fd(fd, &o, &w, &err), &err);
    GROWS();
    size_t n;
    uint8_t *big = elements(ZT_DTYPE_U8, (5u << 20) / 2, 9, &n);
    uint64_t shape[1] = {n};
    size_t id = put(w, ZT_DTYPE_U8, NULL, ZT_ENC_RAW, ZT_DIGEST_CRC32C, big, n, 300000);
    GROWS();
    add_dense(w, "big", 1, shape, id, "{\"k\":[1,2,3]}");
    id = put(w, ZT_DTYPE_U8, NULL, ZT_ENC_ZSTD, ZT_DIGEST_SHA256, big, n, 1 << 20);
    GROWS();
    add_dense(w, "bigz", 1, shape, id, NULL);
    uint64_t s2[1] = {3};
    id = put(w, ZT_DTYPE_I16, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, "abcdef", 6, 1);
    GROWS();
    add_dense(w, "small", 1, s2, id, NULL);
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    GROWS();
    zt_writer_free(w);
    free(big);
#undef GROWS
}

static void append_only_fd(void **state)
{
    (void)state;
    char *dir = zt_test_mkdtemp("writer");
    char *p1 = path_in(dir, "plain.zt"), *p2 = path_in(dir, "append.zt");
    int fd1 = open(p1, O_RDWR | O_CREAT | O_TRUNC, 0644);
    int fd2 = open(p2, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    assert_true(fd1 >= 0 && fd2 >= 0);
    write_sample(fd1, 1);
    write_sample(fd2, 1);
    close(fd1);
    close(fd2);
    size_t n1, n2;
    uint8_t *b1 = zt_test_read_file(p1, &n1), *b2 = zt_test_read_file(p2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1);
    zt_file *f;
    zt_error err;
    ASSERT_OK(zt_open_memory(b2, n2, NULL, &f, &err), &err);
    assert_int_equal(zt_file_object_count(f), 3);
    zt_close(f);
    free(b1);
    free(b2);
    free(p1);
    free(p2);
    zt_test_rmtree(dir);
    free(dir);
}

typedef struct drain {
    int fd;
    tb out;
} drain;

static void *drain_pipe(void *arg)
{
    drain *d = arg;
    uint8_t buf[65536];
    ssize_t r;
    while ((r = read(d->fd, buf, sizeof buf)) > 0)
        tb_raw(&d->out, buf, (size_t)r);
    return NULL;
}

static void pipe_output(void **state)
{
    (void)state;
    /* A pipe cannot seek at all. Default options (fsync on): a pipe cannot
     * be synced either, which must not fail the write. */
    int p[2];
    assert_int_equal(pipe(p), 0);
    drain d = {p[0], {0}};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, drain_pipe, &d), 0);
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open_fd(p[1], NULL, &w, &err), &err);
    uint8_t data[1000];
    zt_test_fill(data, sizeof data, 77);
    uint64_t shape[1] = {250};
    size_t id = put(w, ZT_DTYPE_F32, NULL, ZT_ENC_ZSTD, ZT_DIGEST_SHA256, data, sizeof data, 333);
    add_dense(w, "x", 1, shape, id, NULL);
    zt_status st = zt_writer_finish(w, &err);
    zt_writer_free(w);
    close(p[1]);
    pthread_join(th, NULL);
    close(p[0]);
    if (st)
        fail_msg("finish on a pipe: %s", err.message);
    zt_file *f;
    ASSERT_OK(zt_open_memory(d.out.p, d.out.len, NULL, &f, &err), &err);
    read_back(f, zt_object_component_at(zt_file_object_at(f, 0), 0), data, sizeof data);
    zt_close(f);
    tb_free(&d.out);
}

/* ---- crash safety */

static void freed_before_finish_leaves_nothing(void **state)
{
    (void)state;
    char *dir = zt_test_mkdtemp("writer");
    char *path = path_in(dir, "m.zt");
    zt_writer_options o = nosync();
    zt_writer *w;
    zt_error err;
    size_t n;
    uint8_t *big = elements(ZT_DTYPE_U8, 3u << 20, 2, &n);
    uint64_t shape[1] = {n};
    /* 1: nothing at the path before, nothing after */
    ASSERT_OK(zt_writer_open(path, &o, &w, &err), &err);
    size_t id = put(w, ZT_DTYPE_U8, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, big, n, 1 << 20);
    add_dense(w, "a", 1, shape, id, NULL);
    /* the bytes are in a temporary file beside the path, not at the path */
    assert_int_equal(zt_test_count_entries(dir), 1);
    assert_int_equal(access(path, F_OK), -1);
    zt_writer_free(w);
    assert_int_equal(zt_test_count_entries(dir), 0);
    /* 2: freed with a component still open */
    ASSERT_OK(zt_writer_open(path, &o, &w, &err), &err);
    zt_component_spec spec = {
        .dtype = ZT_DTYPE_U8, .encoding = ZT_ENC_ZSTD, .digest = ZT_DIGEST_SHA256};
    ASSERT_OK(zt_writer_begin(w, &spec, &err), &err);
    ASSERT_OK(zt_writer_write(w, big, n, &err), &err);
    zt_writer_free(w);
    assert_int_equal(zt_test_count_entries(dir), 0);
    /* 3: an existing file is replaced only by finish */
    ASSERT_OK(zt_writer_open(path, &o, &w, &err), &err);
    id = put(w, ZT_DTYPE_U8, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, big, 64, 64);
    uint64_t s64[1] = {64};
    add_dense(w, "old", 1, s64, id, NULL);
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);
    size_t oldn;
    uint8_t *old = zt_test_read_file(path, &oldn);
    ASSERT_OK(zt_writer_open(path, &o, &w, &err), &err);
    id = put(w, ZT_DTYPE_U8, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, big, n, 1 << 20);
    add_dense(w, "new", 1, shape, id, NULL);
    zt_writer_free(w);
    size_t nown;
    uint8_t *now = zt_test_read_file(path, &nown);
    assert_int_equal(nown, oldn);
    assert_memory_equal(now, old, oldn);
    assert_int_equal(zt_test_count_entries(dir), 1);
    free(now);
    /* 4: finish publishes with the requested mode, and no temp file remains */
    o.mode = 0600;
    ASSERT_OK(zt_writer_open(path, &o, &w, &err), &err);
    id = put(w, ZT_DTYPE_U8, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, big, 64, 64);
    add_dense(w, "new", 1, s64, id, NULL);
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);
    assert_int_equal(zt_test_count_entries(dir), 1);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    zt_file *f;
    ASSERT_OK(zt_open(path, NULL, &f, &err), &err);
    assert_non_null(zt_file_find_object(f, "new", 3));
    zt_close(f);
    free(old);
    free(big);
    free(path);
    zt_test_rmtree(dir);
    free(dir);
}

static void every_prefix_is_rejected(void **state)
{
    (void)state;
    /* Simulate a crash at every byte of the writer's output: no prefix may
     * open, including the one that lacks only the 8-byte footer magic. */
    int fd = memfd_create("px", 0);
    zt_writer_options o = nosync();
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open_fd(fd, &o, &w, &err), &err);
    ASSERT_OK(zt_writer_set_attributes(w, "{\"note\":\"prefix test\",\"n\":[1,2]}", &err), &err);
    uint8_t data[600];
    zt_test_fill(data, sizeof data, 5);
    memset(data + 300, 0, 300); /* zero runs where a cut could look like a size */
    uint64_t s1[1] = {600}, s2[1] = {150};
    size_t id = put(w, ZT_DTYPE_U8, NULL, ZT_ENC_RAW, ZT_DIGEST_CRC32C, data, 600, 100);
    add_dense(w, "raw", 1, s1, id, NULL);
    id = put(w, ZT_DTYPE_F32, NULL, ZT_ENC_ZSTD, ZT_DIGEST_SHA256, data, 600, 600);
    add_dense(w, "z", 1, s2, id, "{\"a\":1}");
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);
    size_t n;
    uint8_t *bytes = zt_test_read_fd(fd, &n);
    close(fd);
    zt_file *f;
    ASSERT_OK(zt_open_memory(bytes, n, NULL, &f, &err), &err);
    zt_close(f);
    for (size_t k = 0; k < n; k++) {
        /* a fresh copy of exactly k bytes, so ASan sees any overread */
        uint8_t *cut = malloc(k ? k : 1);
        memcpy(cut, bytes, k);
        f = NULL;
        zt_status st = zt_open_memory(cut, k, NULL, &f, &err);
        if (st == ZT_OK)
            fail_msg("a file cut to %zu of %zu bytes opened", k, n);
        assert_null(f);
        free(cut);
    }
    free(bytes);
}

static void killed_writer_leaves_unreadable_temp(void **state)
{
    (void)state;
    char *dir = zt_test_mkdtemp("writer");
    char *path = path_in(dir, "k.zt");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        zt_writer_options o = nosync();
        zt_writer *w;
        if (zt_writer_open(path, &o, &w, NULL))
            _exit(2);
        uint8_t data[4096] = {1};
        zt_component_spec spec = {.dtype = ZT_DTYPE_U8};
        size_t id;
        if (zt_writer_begin(w, &spec, NULL) || zt_writer_write(w, data, sizeof data, NULL) ||
            zt_writer_end(w, &id, NULL))
            _exit(3);
        uint64_t shape[1] = {4096};
        if (zt_writer_add_object(w, "x", "dense", 1, shape, NULL, 1, ROLE_DATA, &id, NULL))
            _exit(4);
        /* flush what is buffered, then die before finish */
        zt_component_spec s2 = {.dtype = ZT_DTYPE_U8};
        static uint8_t more[2u << 20];
        if (zt_writer_begin(w, &s2, NULL) || zt_writer_write(w, more, sizeof more, NULL))
            _exit(5);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* only the temporary file is there, and it does not open */
    assert_int_equal(access(path, F_OK), -1);
    DIR *dd = opendir(dir);
    struct dirent *e;
    int temps = 0;
    while ((e = readdir(dd))) {
        if (e->d_name[0] != '.' || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        temps++;
        char *tp = path_in(dir, e->d_name);
        zt_file *f = NULL;
        zt_error err;
        assert_int_not_equal(zt_open(tp, NULL, &f, &err), ZT_OK);
        assert_null(f);
        free(tp);
    }
    closedir(dd);
    assert_int_equal(temps, 1);
    free(path);
    zt_test_rmtree(dir);
    free(dir);
}

static void cancel_cuts_bytes_out(void **state)
{
    (void)state;
    size_t n;
    uint8_t *big = elements(ZT_DTYPE_U8, 3u << 20, 8, &n);
    uint8_t *outs[3];
    size_t lens[3];
    for (int mode = 0; mode < 3; mode++) {
        /* mode 0: A, C without B; 1: A, B cancelled, C; 2: same on O_APPEND */
        char *dir = zt_test_mkdtemp("writer");
        char *p = path_in(dir, "c.zt");
        int fd = open(p, O_RDWR | O_CREAT | O_TRUNC | (mode == 2 ? O_APPEND : 0), 0644);
        zt_writer_options o = nosync();
        zt_writer *w;
        zt_error err;
        ASSERT_OK(zt_writer_open_fd(fd, &o, &w, &err), &err);
        uint64_t s[1] = {100};
        size_t a = put(w, ZT_DTYPE_U8, NULL, ZT_ENC_RAW, ZT_DIGEST_CRC32C, big, 100, 100);
        add_dense(w, "A", 1, s, a, NULL);
        if (mode) {
            uint64_t before = zt_writer_position(w);
            zt_component_spec spec = {.dtype = ZT_DTYPE_U8,
                                      .encoding = (zt_encoding)(mode - 1),
                                      .digest = ZT_DIGEST_SHA256};
            ASSERT_OK(zt_writer_begin(w, &spec, &err), &err);
            ASSERT_OK(zt_writer_write(w, big, n, &err), &err);
            ASSERT_OK(zt_writer_cancel(w, &err), &err);
            assert_int_equal(zt_writer_position(w), before);
            struct stat sb;
            fstat(fd, &sb);
            assert_true((uint64_t)sb.st_size <= before);
            /* no component is open any more */
            ASSERT_ST(zt_writer_cancel(w, &err), ZT_E_STATE);
            ASSERT_ST(zt_writer_write(w, "x", 1, &err), ZT_E_STATE);
        }
        size_t c = put(w, ZT_DTYPE_U8, NULL, ZT_ENC_ZSTD, ZT_DIGEST_SHA256, big + 1000, 100, 7);
        add_dense(w, "C", 1, s, c, NULL);
        ASSERT_OK(zt_writer_finish(w, &err), &err);
        zt_writer_free(w);
        outs[mode] = zt_test_read_fd(fd, &lens[mode]);
        close(fd);
        free(p);
        zt_test_rmtree(dir);
        free(dir);
    }
    for (int mode = 1; mode < 3; mode++) {
        assert_int_equal(lens[mode], lens[0]);
        assert_memory_equal(outs[mode], outs[0], lens[0]);
    }
    zt_file *f;
    zt_error err;
    ASSERT_OK(zt_open_memory(outs[0], lens[0], NULL, &f, &err), &err);
    read_back(f, zt_object_component_at(zt_file_find_object(f, "C", 1), 0), big + 1000, 100);
    zt_close(f);
    for (int mode = 0; mode < 3; mode++)
        free(outs[mode]);
    free(big);
}

/* ---- validation and call order */

/* Writes object A (n raw bytes, hashed inline or not) and finishes, with the file size
 * limited to `limit` bytes (0: none) during a first finish, which must then fail and leave
 * the writer where it was; a second finish, without the limit, must succeed. Returns the
 * file's bytes. */
static uint8_t *finish_with_limit(const uint8_t *data, size_t n, int inline_digest, long limit,
                                  size_t *len)
{
    char *dir = zt_test_mkdtemp("writer");
    char *p = path_in(dir, "f.zt");
    int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    zt_writer_options o = nosync();
    o.digest_inline = inline_digest;
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open_fd(fd, &o, &w, &err), &err);
    uint64_t s[1] = {n};
    size_t a = put(w, ZT_DTYPE_U8, NULL, ZT_ENC_RAW, ZT_DIGEST_SHA256, data, n, 65536);
    add_dense(w, "A", 1, s, a, NULL);
    uint64_t data_end = zt_writer_position(w);
    if (limit) {
        struct rlimit old, lim = {(rlim_t)limit, RLIM_INFINITY};
        getrlimit(RLIMIT_FSIZE, &old);
        lim.rlim_max = old.rlim_max;
        signal(SIGXFSZ, SIG_IGN); /* EFBIG instead of the signal */
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
        zt_status st = zt_writer_finish(w, &err);
        setrlimit(RLIMIT_FSIZE, &old);
        ASSERT_ST(st, ZT_E_IO);
        assert_int_equal(zt_writer_position(w), data_end);
        struct stat sb;
        fstat(fd, &sb);
        assert_true((uint64_t)sb.st_size <= data_end);
    }
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);
    uint8_t *out = zt_test_read_fd(fd, len);
    close(fd);
    free(p);
    zt_test_rmtree(dir);
    free(dir);
    return out;
}

static void finish_recovers_from_a_full_disk(void **state)
{
    (void)state;
    size_t n;
    uint8_t *big = elements(ZT_DTYPE_U8, (3u << 20) + 100, 9, &n);
    /* 1000 bytes: all of the file still buffered at finish; 3 MiB hashed inline: its tail
     * still buffered; 3 MiB hashed on the background thread: flushed at its end */
    const size_t sizes[] = {1000, n, n};
    const int inline_digest[] = {0, 1, 0};
    for (int k = 0; k < 3; k++) {
        size_t m = sizes[k], ref_len, len;
        uint8_t *ref = finish_with_limit(big, m, inline_digest[k], 0, &ref_len);
        uint64_t msize = 0;
        for (int i = 7; i >= 0; i--)
            msize = msize << 8 | ref[ref_len - 16 + (size_t)i];
        uint64_t data_end = ref_len - 16 - msize;
        /* the limit: inside the last 4 KiB of the data, then inside the manifest */
        const long limits[] = {(long)data_end - 4000, (long)data_end + 10};
        for (int l = 0; l < 2; l++) {
            uint8_t *out = finish_with_limit(big, m, inline_digest[k], limits[l], &len);
            assert_int_equal(len, ref_len);
            assert_memory_equal(out, ref, ref_len);
            free(out);
        }
        zt_file *f;
        zt_error err;
        ASSERT_OK(zt_open_memory(ref, ref_len, NULL, &f, &err), &err);
        zt_close(f);
        free(ref);
    }
    free(big);
}

static void add_object_validation(void **state)
{
    (void)state;
    int fd = memfd_create("v", 0);
    zt_writer_options o = nosync();
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open_fd(fd, &o, &w, &err), &err);
    float x[6] = {0};
    size_t id = put(w, ZT_DTYPE_F32, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, x, sizeof x, 24);
    size_t zid = put(w, ZT_DTYPE_F32, NULL, ZT_ENC_ZSTD, ZT_DIGEST_NONE, x, sizeof x, 24);
    uint64_t good[2] = {2, 3}, bad[2] = {2, 4};
    /* size mismatch, raw and zstd (uncompressed size is what counts) */
    ASSERT_ST(zt_writer_add_object(w, "s", "dense", 2, bad, NULL, 1, ROLE_DATA, &id, &err),
              ZT_E_SIZE);
    assert_string_equal(err.object, "s");
    assert_string_equal(err.component, "data");
    ASSERT_ST(zt_writer_add_object(w, "s", "dense", 2, bad, NULL, 1, ROLE_DATA, &zid, &err),
              ZT_E_SIZE);
    /* missing component */
    const char *wrong[1] = {"values"};
    ASSERT_ST(zt_writer_add_object(w, "m", "dense", 2, good, NULL, 1, wrong, &id, &err),
              ZT_E_COMPONENTS);
    assert_string_equal(err.component, "data");
    ASSERT_ST(zt_writer_add_object(w, "m", "dense", 2, good, NULL, 0, NULL, NULL, &err),
              ZT_E_COMPONENTS);
    const char *csr[2] = {"values", "indices"};
    size_t two[2] = {id, id};
    ASSERT_ST(zt_writer_add_object(w, "m", "sparse_csr", 2, good, NULL, 2, csr, two, &err),
              ZT_E_COMPONENTS);
    assert_string_equal(err.component, "indptr");
    /* index components must be u64 */
    const char *csr3[3] = {"values", "indices", "indptr"};
    size_t three[3] = {id, id, id};
    ASSERT_ST(zt_writer_add_object(w, "m", "sparse_csr", 2, good, NULL, 3, csr3, three, &err),
              ZT_E_DTYPE);
    /* unknown id, duplicate role, too many dimensions, NULL arguments */
    size_t nope = 99;
    ASSERT_ST(zt_writer_add_object(w, "u", "dense", 2, good, NULL, 1, ROLE_DATA, &nope, &err),
              ZT_E_ARG);
    const char *dup[2] = {"data", "data"};
    ASSERT_ST(zt_writer_add_object(w, "d", "dense", 2, good, NULL, 2, dup, two, &err),
              ZT_E_DUPLICATE);
    uint64_t many[65];
    for (int i = 0; i < 65; i++)
        many[i] = 1;
    ASSERT_ST(zt_writer_add_object(w, "l", "opaque", 65, many, NULL, 0, NULL, NULL, &err),
              ZT_E_LIMIT);
    ASSERT_ST(zt_writer_add_object(w, NULL, "dense", 2, good, NULL, 1, ROLE_DATA, &id, &err),
              ZT_E_ARG);
    ASSERT_ST(zt_writer_add_object(w, "n", "dense", 2, NULL, NULL, 1, ROLE_DATA, &id, &err),
              ZT_E_ARG);
    /* the writer is still usable, and only valid objects are in the file */
    add_dense(w, "ok", 2, good, id, NULL);
    add_dense(w, "okz", 2, good, zid, NULL);
    ASSERT_OK(zt_writer_add_object(w, "any", "opaque", 65 - 1, many, NULL, 0, NULL, NULL, &err),
              &err);
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);
    size_t n;
    uint8_t *bytes = zt_test_read_fd(fd, &n);
    close(fd);
    zt_file *f;
    ASSERT_OK(zt_open_memory(bytes, n, NULL, &f, &err), &err);
    assert_int_equal(zt_file_object_count(f), 3);
    assert_non_null(zt_file_find_object(f, "ok", 2));
    assert_null(zt_file_find_object(f, "s", 1));
    zt_close(f);
    free(bytes);
}

static void call_order(void **state)
{
    (void)state;
    int fd = memfd_create("o", 0);
    zt_writer_options o = nosync();
    zt_writer *w;
    zt_error err;
    ASSERT_ST(zt_writer_open_fd(-1, &o, &w, &err), ZT_E_ARG);
    ASSERT_ST(zt_writer_open(NULL, &o, &w, &err), ZT_E_ARG);
    ASSERT_OK(zt_writer_open_fd(fd, &o, &w, &err), &err);
    assert_int_equal(zt_writer_position(w), 8);
    ASSERT_ST(zt_writer_write(w, "x", 1, &err), ZT_E_STATE);
    ASSERT_ST(zt_writer_end(w, NULL, &err), ZT_E_STATE);
    ASSERT_ST(zt_writer_cancel(w, &err), ZT_E_STATE);
    zt_component_spec bad = {.dtype = ZT_DTYPE_INVALID};
    ASSERT_ST(zt_writer_begin(w, &bad, &err), ZT_E_DTYPE);
    ASSERT_ST(zt_writer_begin(w, NULL, &err), ZT_E_DTYPE);
    zt_component_spec spec = {.dtype = ZT_DTYPE_U8};
    ASSERT_OK(zt_writer_begin(w, &spec, &err), &err);
    assert_int_equal(zt_writer_position(w), 64);
    ASSERT_ST(zt_writer_begin(w, &spec, &err), ZT_E_STATE);
    ASSERT_ST(zt_writer_finish(w, &err), ZT_E_STATE);
    uint64_t shape[1] = {0};
    size_t id0 = 0;
    ASSERT_ST(zt_writer_add_object(w, "x", "dense", 1, shape, NULL, 1, ROLE_DATA, &id0, &err),
              ZT_E_STATE);
    /* an empty component is fine */
    size_t id;
    ASSERT_OK(zt_writer_end(w, &id, &err), &err);
    zt_written_component info;
    ASSERT_OK(zt_writer_component_info(w, id, &info), &err);
    assert_int_equal(info.length, 0);
    assert_int_equal(info.offset, 64);
    ASSERT_ST(zt_writer_component_info(w, id + 1, &info), ZT_E_NOT_FOUND);
    add_dense(w, "empty", 1, shape, id, NULL);
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    ASSERT_ST(zt_writer_finish(w, &err), ZT_E_STATE);
    ASSERT_ST(zt_writer_begin(w, &spec, &err), ZT_E_STATE);
    zt_writer_free(w);
    zt_writer_free(NULL);
    close(fd);
}

static void duplicate_object_name(void **state)
{
    (void)state;
    char *dir = zt_test_mkdtemp("writer");
    char *path = path_in(dir, "d.zt");
    zt_writer_options o = nosync();
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open(path, &o, &w, &err), &err);
    uint64_t shape[1] = {4};
    size_t id = put(w, ZT_DTYPE_U8, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, "abcd", 4, 4);
    add_dense(w, "x", 1, shape, id, NULL);
    zt_status st = zt_writer_add_object(w, "x", "dense", 1, shape, NULL, 1, ROLE_DATA, &id, &err);
    if (st == ZT_OK)
        st = zt_writer_finish(w, &err);
    /* refused, at add_object or at the latest at finish, and nothing published */
    assert_int_equal(st, ZT_E_DUPLICATE);
    assert_string_equal(err.object, "x");
    zt_writer_free(w);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(zt_test_count_entries(dir), 0);
    free(path);
    zt_test_rmtree(dir);
    free(dir);
}

static void empty_file(void **state)
{
    (void)state;
    int fd = memfd_create("e", 0);
    zt_writer_options o = nosync();
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open_fd(fd, &o, &w, &err), &err);
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    uint64_t pos = zt_writer_position(w);
    zt_writer_free(w);
    size_t n;
    uint8_t *b = zt_test_read_fd(fd, &n);
    close(fd);
    assert_int_equal(n, pos);
    assert_memory_equal(b, "ZTEN1000", 8);
    assert_memory_equal(b + n - 8, "ZTEN1000", 8);
    zt_file *f;
    ASSERT_OK(zt_open_memory(b, n, NULL, &f, &err), &err);
    assert_int_equal(zt_file_object_count(f), 0);
    assert_null(zt_file_attributes(f));
    assert_int_equal(zt_file_manifest_offset(f), 8);
    assert_int_equal(zt_file_manifest_length(f), n - 24);
    zt_close(f);
    free(b);
}

static void open_errors(void **state)
{
    (void)state;
    zt_writer *w = NULL;
    zt_error err;
    zt_writer_options o = nosync();
    zt_status st = zt_writer_open("/nonexistent-dir-zt/x.zt", &o, &w, &err);
    assert_int_not_equal(st, ZT_OK);
    assert_true(st == ZT_E_IO || st == ZT_E_NOT_FOUND);
    assert_non_null(strstr(err.message, "nonexistent-dir-zt"));
}

/* ---- set_component_type / drop_objects */

static void late_types_and_dropped_objects(void **state)
{
    (void)state;
    int fd = memfd_create("late", 0);
    zt_writer_options o = nosync();
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open_fd(fd, &o, &w, &err), &err);
    uint8_t b[16] = {0};
    size_t id = put(w, ZT_DTYPE_U8, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, b, 16, 16);
    /* the dtype becomes known after the bytes: 16 bytes are 2 complex64 */
    ASSERT_OK(zt_writer_set_component_type(w, id, ZT_DTYPE_F32, "complex64", &err), &err);
    ASSERT_ST(zt_writer_set_component_type(w, id + 1, ZT_DTYPE_F32, NULL, &err), ZT_E_NOT_FOUND);
    ASSERT_ST(zt_writer_set_component_type(w, id, ZT_DTYPE_INVALID, NULL, &err), ZT_E_DTYPE);
    uint64_t shape[1] = {2};
    add_dense(w, "c", 1, shape, id, NULL);
    uint64_t s16[1] = {16};
    size_t id2 = put(w, ZT_DTYPE_U8, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, b, 16, 16);
    add_dense(w, "keep", 1, s16, id2, NULL);
    add_dense(w, "drop1", 1, s16, id2, NULL);
    add_dense(w, "drop2", 1, s16, id2, NULL);
    assert_int_equal(zt_writer_object_count(w), 4);
    zt_writer_drop_objects(w, 2);
    assert_int_equal(zt_writer_object_count(w), 2);
    zt_writer_drop_objects(w, 5); /* keeping more than there are is a no-op */
    assert_int_equal(zt_writer_object_count(w), 2);
    /* a dropped name may be added again */
    add_dense(w, "drop1", 1, s16, id2, NULL);
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);
    size_t n;
    uint8_t *bytes = zt_test_read_fd(fd, &n);
    close(fd);
    zt_file *f;
    ASSERT_OK(zt_open_memory(bytes, n, NULL, &f, &err), &err);
    assert_int_equal(zt_file_object_count(f), 3);
    const zt_component *c = zt_object_component_at(zt_file_find_object(f, "c", 1), 0);
    assert_int_equal(zt_component_dtype(c), ZT_DTYPE_F32);
    assert_string_equal(zt_component_type(c), "complex64");
    assert_null(zt_file_find_object(f, "drop2", 5));
    zt_close(f);
    free(bytes);
}

/* ---- canonical CBOR */

static uint64_t head(const uint8_t *p, size_t n, size_t *pos, unsigned *major, unsigned *ai)
{
    assert_true(*pos < n);
    uint8_t ib = p[(*pos)++];
    *major = ib >> 5;
    *ai = ib & 31;
    if (*ai < 24)
        return *ai;
    assert_true(*ai <= 27); /* definite lengths only, no reserved values */
    size_t k = (size_t)1 << (*ai - 24);
    assert_true(*pos + k <= n);
    uint64_t v = 0;
    for (size_t i = 0; i < k; i++)
        v = v << 8 | p[*pos + i];
    *pos += k;
    if (*major != 7) {
        /* shortest form */
        static const uint64_t min[4] = {24, 0x100, 0x10000, 0x100000000ull};
        if (v < min[*ai - 24])
            fail_msg("non-shortest head at byte %zu", *pos - k - 1);
    }
    return v;
}

/* Walks one item, checking deterministic encoding; returns the item's end. */
static void canon(const uint8_t *p, size_t n, size_t *pos, int *maps)
{
    unsigned major, ai;
    uint64_t v = head(p, n, pos, &major, &ai);
    switch (major) {
    case 2:
    case 3:
        assert_true(v <= n - *pos);
        *pos += (size_t)v;
        return;
    case 4:
        for (uint64_t i = 0; i < v; i++)
            canon(p, n, pos, maps);
        return;
    case 5: {
        (*maps)++;
        size_t pk = 0, pkl = 0;
        for (uint64_t i = 0; i < v; i++) {
            size_t ks = *pos;
            canon(p, n, pos, maps);
            size_t kl = *pos - ks;
            if (i) {
                /* RFC 8949 4.2.1: keys in bytewise order of their encodings,
                 * which for text keys is also RFC 7049's length-first order */
                size_t m = kl < pkl ? kl : pkl;
                int c = memcmp(p + pk, p + ks, m);
                if (c > 0 || (c == 0 && pkl >= kl))
                    fail_msg("map keys out of order at byte %zu", ks);
            }
            pk = ks;
            pkl = kl;
            canon(p, n, pos, maps);
        }
        return;
    }
    case 6:
        canon(p, n, pos, maps);
        return;
    case 7:
        if (ai == 27) {
            /* a double only when a float would lose precision */
            double d;
            memcpy(&d, &v, 8);
            assert_true((double)(float)d != d);
        }
        return;
    default:
        return;
    }
}

static uint8_t *canonical_sample(int order, size_t *len)
{
    int fd = memfd_create("canon", 0);
    zt_writer_options o = nosync();
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open_fd(fd, &o, &w, &err), &err);
    /* components in the same order (offsets are part of the manifest) */
    float v[5] = {1, 2, 3, 4, 5};
    uint64_t idx[5] = {0, 2, 3, 0, 1}, ptr[4] = {0, 2, 3, 5};
    size_t ids[3] = {put(w, ZT_DTYPE_F32, NULL, ZT_ENC_ZSTD, ZT_DIGEST_SHA256, v, sizeof v, 20),
                     put(w, ZT_DTYPE_U64, NULL, ZT_ENC_RAW, ZT_DIGEST_CRC32C, idx, sizeof idx, 40),
                     put(w, ZT_DTYPE_U64, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, ptr, sizeof ptr, 32)};
    size_t t = put(w, ZT_DTYPE_U8, "f8_e4m3fn", ZT_ENC_RAW, ZT_DIGEST_NONE, v, 20, 20);
    uint64_t shape[2] = {3, 4}, s20[1] = {20};
    const char *roles_a[3] = {"values", "indices", "indptr"};
    const char *roles_b[3] = {"indptr", "values", "indices"};
    size_t ids_b[3] = {ids[2], ids[0], ids[1]};
    const char *attr_a = "{\"zeta\":1,\"a\":{\"yy\":[1.5,0.1,-2],\"x\":null},\"bb\":\"t\","
                         "\"longer_key_than_the_others_by_far_really\":true}";
    const char *attr_b = "{\"longer_key_than_the_others_by_far_really\":true,\"bb\":\"t\","
                         "\"a\":{\"x\":null,\"yy\":[1.5,0.1,-2]},\"zeta\":1}";
    if (order == 0) {
        ASSERT_OK(zt_writer_set_attributes(w, attr_a, &err), &err);
        ASSERT_OK(
            zt_writer_add_object(w, "m", "sparse_csr", 2, shape, attr_a, 3, roles_a, ids, &err),
            &err);
        add_dense(w, "fp8", 1, s20, t, NULL);
        add_dense(w, "a_longer_name", 1, s20, t, "{\"k\":1}");
        add_dense(w, "b", 1, s20, t, NULL);
    } else {
        add_dense(w, "b", 1, s20, t, NULL);
        add_dense(w, "a_longer_name", 1, s20, t, "{\"k\":1}");
        add_dense(w, "fp8", 1, s20, t, NULL);
        ASSERT_OK(
            zt_writer_add_object(w, "m", "sparse_csr", 2, shape, attr_b, 3, roles_b, ids_b, &err),
            &err);
        ASSERT_OK(zt_writer_set_attributes(w, attr_b, &err), &err);
    }
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);
    uint8_t *b = zt_test_read_fd(fd, len);
    close(fd);
    return b;
}

static cbor_item_t *cmap_get(cbor_item_t *map, const char *key)
{
    assert_true(cbor_isa_map(map));
    struct cbor_pair *pairs = cbor_map_handle(map);
    for (size_t i = 0; i < cbor_map_size(map); i++)
        if (cbor_isa_string(pairs[i].key) && cbor_string_length(pairs[i].key) == strlen(key) &&
            !memcmp(cbor_string_handle(pairs[i].key), key, strlen(key)))
            return pairs[i].value;
    return NULL;
}

static void canonical_manifest(void **state)
{
    (void)state;
    size_t n0, n1;
    uint8_t *f0 = canonical_sample(0, &n0), *f1 = canonical_sample(1, &n1);
    /* the same objects in another order: the same bytes */
    assert_int_equal(n0, n1);
    assert_memory_equal(f0, f1, n0);

    zt_file *f;
    zt_error err;
    ASSERT_OK(zt_open_memory(f0, n0, NULL, &f, &err), &err);
    const uint8_t *m = f0 + zt_file_manifest_offset(f);
    size_t ml = (size_t)zt_file_manifest_length(f);
    /* deterministic encoding, walked independently of the library */
    size_t pos = 0;
    int maps = 0;
    canon(m, ml, &pos, &maps);
    assert_int_equal(pos, ml);
    assert_true(maps >= 10);
    /* objects are in canonical key order in the file too */
    assert_string_equal(zt_object_name(zt_file_object_at(f, 0)), "b");
    assert_string_equal(zt_object_name(zt_file_object_at(f, 1)), "m");
    assert_string_equal(zt_object_name(zt_file_object_at(f, 2)), "fp8");
    assert_string_equal(zt_object_name(zt_file_object_at(f, 3)), "a_longer_name");

    /* libcbor, a different decoder, reads the same manifest */
    struct cbor_load_result res;
    cbor_item_t *root = cbor_load(m, ml, &res);
    assert_non_null(root);
    assert_int_equal(res.error.code, CBOR_ERR_NONE);
    assert_int_equal(res.read, ml);
    cbor_item_t *ver = cmap_get(root, "version");
    assert_non_null(ver);
    assert_int_equal(cbor_string_length(ver), 5);
    assert_memory_equal(cbor_string_handle(ver), "1.2.0", 5);
    cbor_item_t *objs = cmap_get(root, "objects");
    assert_int_equal(cbor_map_size(objs), 4);
    cbor_item_t *mo = cmap_get(objs, "m");
    assert_non_null(mo);
    cbor_item_t *shape = cmap_get(mo, "shape");
    assert_int_equal(cbor_array_size(shape), 2);
    assert_int_equal(cbor_get_int(cbor_array_handle(shape)[1]), 4);
    cbor_item_t *comps = cmap_get(mo, "components");
    assert_int_equal(cbor_map_size(comps), 3);
    const zt_object *zo = zt_file_find_object(f, "m", 1);
    const char *roles[3] = {"values", "indices", "indptr"};
    for (int i = 0; i < 3; i++) {
        cbor_item_t *c = cmap_get(comps, roles[i]);
        assert_non_null(c);
        const zt_component *zc = zt_object_find_component(zo, roles[i]);
        assert_int_equal(cbor_get_int(cmap_get(c, "offset")), zt_component_offset(zc));
        assert_int_equal(cbor_get_int(cmap_get(c, "length")), zt_component_length(zc));
        cbor_item_t *dt = cmap_get(c, "dtype");
        const char *want = zt_dtype_name(zt_component_dtype(zc));
        assert_int_equal(cbor_string_length(dt), strlen(want));
        assert_memory_equal(cbor_string_handle(dt), want, strlen(want));
    }
    cbor_item_t *attrs = cmap_get(root, "attributes");
    assert_non_null(attrs);
    assert_int_equal(cbor_map_size(attrs), 4);
    assert_true(cbor_get_bool(cmap_get(attrs, "longer_key_than_the_others_by_far_really")));
    cbor_decref(&root);
    zt_close(f);
    free(f0);
    free(f1);
}

/* Attributes nested as deep as the writer accepts still give a file the
 * reader opens. */
static void deepest_attributes_readable(void **state)
{
    (void)state;
    for (int levels = 55; levels <= 70; levels++) {
        int fd = memfd_create("deep", 0);
        zt_writer_options o = nosync();
        zt_writer *w;
        zt_error err;
        ASSERT_OK(zt_writer_open_fd(fd, &o, &w, &err), &err);
        char *js = malloc((size_t)levels * 8 + 16);
        size_t k = 0;
        for (int i = 0; i < levels; i++)
            k += (size_t)sprintf(js + k, "{\"a\":");
        k += (size_t)sprintf(js + k, "1");
        for (int i = 0; i < levels; i++)
            js[k++] = '}';
        js[k] = 0;
        size_t id = put(w, ZT_DTYPE_U8, NULL, ZT_ENC_RAW, ZT_DIGEST_NONE, "x", 1, 1);
        uint64_t shape[1] = {1};
        zt_status a = zt_writer_add_object(w, "x", "dense", 1, shape, js, 1, ROLE_DATA, &id, &err);
        zt_status b = zt_writer_set_attributes(w, js, &err);
        free(js);
        assert_true(a == ZT_OK || a == ZT_E_DEPTH);
        assert_true(b == ZT_OK || b == ZT_E_DEPTH);
        ASSERT_OK(zt_writer_finish(w, &err), &err);
        zt_writer_free(w);
        size_t n;
        uint8_t *bytes = zt_test_read_fd(fd, &n);
        close(fd);
        zt_file *f;
        if (zt_open_memory(bytes, n, NULL, &f, &err))
            fail_msg("%d levels: writer accepted (%s/%s) what the reader refuses: %s", levels,
                     zt_status_name(a), zt_status_name(b), err.message);
        zt_close(f);
        free(bytes);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_dtype_encoding_digest),
        cmocka_unit_test(large_components_in_odd_chunks),
        cmocka_unit_test(background_digests),
        cmocka_unit_test(logical_types),
        cmocka_unit_test(sparse_quantized_and_attributes),
        cmocka_unit_test(append_only_fd),
        cmocka_unit_test(pipe_output),
        cmocka_unit_test(freed_before_finish_leaves_nothing),
        cmocka_unit_test(every_prefix_is_rejected),
        cmocka_unit_test(killed_writer_leaves_unreadable_temp),
        cmocka_unit_test(cancel_cuts_bytes_out),
        cmocka_unit_test(finish_recovers_from_a_full_disk),
        cmocka_unit_test(add_object_validation),
        cmocka_unit_test(call_order),
        cmocka_unit_test(duplicate_object_name),
        cmocka_unit_test(empty_file),
        cmocka_unit_test(open_errors),
        cmocka_unit_test(late_types_and_dropped_objects),
        cmocka_unit_test(canonical_manifest),
        cmocka_unit_test(deepest_attributes_readable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
