/*
 * test_open_manifest.c: files known by their manifest alone
 * (lib/src/manifest_only.c) and push decoding (lib/src/codec_zstd.c), the two
 * core additions libztensor-remote is built on. A file opened from the bytes
 * at its two ends must be accepted or refused exactly as the whole file is
 * by zt_open_memory, with the same model (compared through the manifest
 * JSON); pushed stored bytes must decode to what zt_component_read gives, and
 * every lie (too many bytes, too few, a bad frame) must be an error.
 */
#include "zt_test.h"

#include <dirent.h>
#include <zstd.h>

/* ---- helpers */

/* Opens b[0..n) as a remote reader would: the first `hn` and last `tn` bytes,
 * then (when the manifest is not inside them) the head widened to the end of
 * a safetensors header or the tail widened to start at a .zt manifest. */
static zt_status open_windowed(const uint8_t *b, size_t n, size_t hn, size_t tn,
                               const zt_open_options *opt, zt_file **f, zt_error *err)
{
    hn = hn < n ? hn : n;
    tn = tn < n ? tn : n;
    uint64_t off, len;
    zt_status st = zt_manifest_locate(b, hn, b + n - tn, tn, n, opt, NULL, &off, &len, err);
    if (st)
        return st;
    if (n >= 9 && b[8] == '{') { /* safetensors: the header follows the head */
        if (off + len > hn)
            hn = (size_t)(off + len);
    } else if (n - off > tn) {
        tn = n - (size_t)off;
    }
    return zt_open_manifest(b, hn, b + n - tn, tn, n, opt, f, err);
}

/* Both opens of the same bytes agree on the status, and on the model. */
static void same_as_memory(const uint8_t *b, size_t n, size_t hn, size_t tn, const char *what)
{
    zt_file *fm = NULL, *fw = NULL;
    zt_error em, ew;
    zt_status sm = zt_open_memory(b, n, NULL, &fm, &em);
    zt_status sw = open_windowed(b, n, hn, tn, NULL, &fw, &ew);
    if (sm != sw)
        fail_msg("%s: zt_open_memory says %s (%s), the manifest alone %s (%s)", what,
                 zt_status_name(sm), sm ? em.message : "", zt_status_name(sw),
                 sw ? ew.message : "");
    if (sm == ZT_OK) {
        char *jm = zt_file_manifest_json(fm, ZT_JSON_COMPACT, &em);
        char *jw = zt_file_manifest_json(fw, ZT_JSON_COMPACT, &ew);
        assert_non_null(jm);
        assert_non_null(jw);
        assert_string_equal(jm, jw);
        zt_free(jm);
        zt_free(jw);
        assert_int_equal(zt_file_get_kind(fm), zt_file_get_kind(fw));
        assert_int_equal(zt_file_size(fw), n);
        assert_int_equal(zt_file_manifest_offset(fm), zt_file_manifest_offset(fw));
        assert_int_equal(zt_file_manifest_length(fm), zt_file_manifest_length(fw));
        assert_null(zt_file_bytes(fw));
        assert_int_equal(zt_file_fd(fw), -1);
    } else {
        assert_int_equal(em.has_offset, ew.has_offset);
        if (em.has_offset)
            assert_int_equal(em.offset, ew.offset);
    }
    zt_close(fm);
    zt_close(fw);
}

/* A written file: raw f32 with sha256, zstd with crc32c, raw without digest. */
static uint8_t *written_file(size_t *n)
{
    char *dir = zt_test_mkdtemp("openman");
    char path[4200];
    snprintf(path, sizeof path, "%s/w.zt", dir);
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open(path, NULL, &w, &err), &err);
    static uint8_t data[3][40000];
    zt_test_fill(data[0], sizeof data[0], 1);
    for (size_t i = 0; i < sizeof data[1]; i++)
        data[1][i] = (uint8_t)(i % 13);
    zt_test_fill(data[2], sizeof data[2], 3);
    const zt_component_spec specs[3] = {
        {ZT_DTYPE_F32, NULL, ZT_ENC_RAW, 0, ZT_DIGEST_SHA256},
        {ZT_DTYPE_F32, NULL, ZT_ENC_ZSTD, 0, ZT_DIGEST_CRC32C},
        {ZT_DTYPE_U8, NULL, ZT_ENC_RAW, 0, ZT_DIGEST_NONE},
    };
    const char *names[3] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        size_t id;
        ASSERT_OK(zt_writer_begin(w, &specs[i], &err), &err);
        ASSERT_OK(zt_writer_write(w, data[i], sizeof data[i], &err), &err);
        ASSERT_OK(zt_writer_end(w, &id, &err), &err);
        uint64_t shape[1] = {i == 2 ? 40000 : 10000};
        const char *role = "data";
        ASSERT_OK(zt_writer_add_object(w, names[i], "dense", 1, shape, NULL, 1, &role, &id, &err),
                  &err);
    }
    ASSERT_OK(zt_writer_set_attributes(w, "{\"note\":\"remote\"}", &err), &err);
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);
    uint8_t *b = zt_test_read_file(path, n);
    unlink(path);
    rmdir(dir);
    free(dir);
    return b;
}

/* A safetensors file with two F32 tensors and metadata. */
static uint8_t *safetensors_file(size_t *n)
{
    static const char hdr[] = "{\"__metadata__\":{\"k\":\"v\"},"
                              "\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                              "\"y\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[8,12]}}";
    size_t hl = sizeof hdr - 1;
    *n = 8 + hl + 12;
    uint8_t *b = calloc(1, *n);
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)((uint64_t)hl >> (8 * i));
    memcpy(b + 8, hdr, hl);
    for (size_t i = 0; i < 12; i++)
        b[8 + hl + i] = (uint8_t)(i + 1);
    return b;
}

/* ---- opening */

static void written_file_any_window(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = written_file(&n);
    /* From the smallest windows (every byte of the manifest fetched again) up
     * to windows that hold the whole file. */
    const size_t sizes[] = {16, 17, 100, 4096, 65536, 1u << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++)
            same_as_memory(b, n, sizes[i], sizes[j], "written file");
    free(b);
}

static void manifest_only_has_no_data(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = written_file(&n);
    zt_file *f;
    zt_error err;
    ASSERT_OK(open_windowed(b, n, 16, 16, NULL, &f, &err), &err);
    assert_int_equal(zt_file_object_count(f), 3);
    const zt_object *o = zt_file_find_object(f, "b", 1);
    assert_non_null(o);
    const zt_component *c = zt_object_find_component(o, "data");
    assert_int_equal(zt_component_encoding(c), ZT_ENC_ZSTD);
    assert_int_equal(zt_component_decoded_length(c), 40000);
    assert_null(zt_component_stored(f, c));
    uint8_t out[40000];
    size_t got;
    ASSERT_ST(zt_component_read(f, c, out, sizeof out, &got, &err), ZT_E_UNSUPPORTED);
    assert_string_equal(err.object, "b");
    int checked = 1;
    ASSERT_ST(zt_component_verify(f, o, c, &checked, &err), ZT_E_UNSUPPORTED);
    assert_int_equal(checked, 0);
    zt_decoder *d;
    ASSERT_OK(zt_decoder_new(f, c, &d, &err), &err);
    ASSERT_ST(zt_decoder_read(d, out, sizeof out, &got, &err), ZT_E_UNSUPPORTED);
    zt_decoder_free(d);
    zt_close(f);
    free(b);
}

static void tail_without_manifest_is_truncated(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = written_file(&n);
    uint64_t off, len;
    zt_error err;
    ASSERT_OK(zt_manifest_locate(b, 16, b + n - 16, 16, n, NULL, NULL, &off, &len, &err), &err);
    assert_int_equal(off + len + 16, n);
    zt_file *f = NULL;
    /* One byte of the manifest missing from the tail. */
    size_t tn = (size_t)(n - off - 1);
    ASSERT_ST(zt_open_manifest(b, 16, b + n - tn, tn, n, NULL, &f, &err), ZT_E_TRUNCATED);
    assert_null(f);
    assert_true(err.has_offset);
    assert_int_equal(err.offset, off);
    /* Too few bytes at either end to find anything. */
    ASSERT_ST(zt_manifest_locate(b, 15, b + n - 16, 16, n, NULL, NULL, &off, &len, &err), ZT_E_ARG);
    ASSERT_ST(zt_manifest_locate(b, 16, b + n - 8, 8, n, NULL, NULL, &off, &len, &err), ZT_E_ARG);
    ASSERT_ST(zt_manifest_locate(b, 16, b, 16, 10, NULL, NULL, &off, &len, &err), ZT_E_ARG);
    free(b);
}

static void manifest_size_limit(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = written_file(&n);
    uint64_t off, len;
    zt_error err;
    zt_open_options opt = {.max_manifest_size = 64};
    ASSERT_ST(zt_manifest_locate(b, 16, b + n - 16, 16, n, &opt, NULL, &off, &len, &err),
              ZT_E_LIMIT);
    free(b);
}

/* Component offsets are checked against the whole file's size, which the
 * windows alone do not show: a manifest that is fine for a larger file is
 * refused for this one. */
static void bounds_against_file_size(void **state)
{
    (void)state;
    tb m = {0};
    tb_map(&m, 2);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    tb_text(&m, "objects");
    tb_map(&m, 1);
    tb_text(&m, "t");
    uint64_t shape[1] = {4096};
    tb_dense(&m, 1, shape, &(tcomp){"u8", 64, 4096, NULL, UINT64_MAX, NULL, NULL});
    uint8_t data[64] = {0};
    size_t n;
    uint8_t *b = zt_test_assemble(data, sizeof data, &m, 1, &n);
    same_as_memory(b, n, 16, 16, "component past the end");
    zt_file *f;
    zt_error err;
    ASSERT_ST(open_windowed(b, n, 16, 16, NULL, &f, &err), ZT_E_BOUNDS);
    free(b);
    tb_free(&m);
}

static void layout_1_0(void **state)
{
    (void)state;
    tb m = {0};
    tb_map(&m, 2);
    tb_text(&m, "version");
    tb_text(&m, "1.0");
    tb_text(&m, "tensors");
    tb_map(&m, 1);
    tb_text(&m, "t");
    tb_map(&m, 4);
    tb_text(&m, "dtype");
    tb_text(&m, "float32");
    tb_text(&m, "shape");
    tb_array(&m, 1);
    tb_uint(&m, 2);
    tb_text(&m, "format");
    tb_text(&m, "dense");
    tb_text(&m, "components");
    tb_map(&m, 1);
    tb_text(&m, "data");
    tb_comp(&m, &(tcomp){NULL, 64, 8, NULL, UINT64_MAX, NULL, NULL});
    uint8_t data[72] = {0};
    size_t n;
    uint8_t *b = zt_test_assemble(data, sizeof data, &m, 0, &n);
    same_as_memory(b, n, 16, 16, "1.0 layout");
    zt_file *f;
    zt_error err;
    ASSERT_OK(open_windowed(b, n, 16, 16, NULL, &f, &err), &err);
    assert_int_equal(zt_file_get_kind(f), ZT_KIND_ZT_1_0);
    zt_close(f);
    free(b);
    tb_free(&m);
}

static void safetensors_head(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = safetensors_file(&n);
    uint64_t off, len;
    zt_error err;
    ASSERT_OK(zt_manifest_locate(b, 16, NULL, 0, n, NULL, NULL, &off, &len, &err), &err);
    assert_int_equal(off, 8);
    assert_int_equal(len, n - 8 - 12);
    same_as_memory(b, n, 16, 16, "safetensors");
    same_as_memory(b, n, n, 0, "safetensors, whole file as head");
    /* The head must reach the header's end: the tail does not help. */
    zt_file *f = NULL;
    ASSERT_ST(zt_open_manifest(b, 16, b + n - 16, 16, n, NULL, &f, &err), ZT_E_TRUNCATED);
    ASSERT_OK(zt_open_manifest(b, (size_t)(off + len), NULL, 0, n, NULL, &f, &err), &err);
    assert_int_equal(zt_file_get_kind(f), ZT_KIND_SAFETENSORS);
    assert_int_equal(zt_file_object_count(f), 2);
    zt_close(f);
    /* A header that runs past the end of the file. */
    b[0] = 0xff;
    ASSERT_ST(zt_manifest_locate(b, 16, NULL, 0, n, NULL, NULL, &off, &len, &err), ZT_E_TRUNCATED);
    free(b);
}

static void alt_is_unsupported(void **state)
{
    (void)state;
    uint8_t b[64] = "altc";
    uint64_t off, len;
    zt_error err;
    ASSERT_ST(zt_manifest_locate(b, 16, b + 48, 16, 64, NULL, NULL, &off, &len, &err),
              ZT_E_UNSUPPORTED);
}

/* Every saved fuzz input: the two opens agree (ALT files excepted). */
static void corpus_agrees(const char *sub)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", ZT_SOURCE_DIR, sub);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[8500];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n;
        uint8_t *b = zt_test_read_file(path, &n);
        if (n < 4 || (memcmp(b, "altc", 4) && memcmp(b, "ctla", 4))) {
            same_as_memory(b, n, 16, 16, path);
            same_as_memory(b, n, 4096, 4096, path);
            files++;
        }
        free(b);
    }
    closedir(d);
    assert_true(files > 0);
}

static void fuzz_corpus_reader(void **state)
{
    (void)state;
    corpus_agrees("reader");
}

static void fuzz_corpus_safetensors(void **state)
{
    (void)state;
    corpus_agrees("safetensors");
}

/* ---- zTensor v2 */

/* Every file of the v2 corpus (tests/corpus/gen_corpus_v2.c, accepted and
 * refused): the windows a remote reader fetches give the same answer as the
 * whole file. Returns how many the whole file accepts. */
static int v2_dir_agrees(const char *dir, int *files)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int ok = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".zt"))
            continue;
        char path[8500];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n;
        uint8_t *b = zt_test_read_file(path, &n);
        same_as_memory(b, n, 16, 40, path);
        same_as_memory(b, n, 16, 4096, path);
        same_as_memory(b, n, 65536, 65536, path);
        zt_file *f = NULL;
        if (zt_open_memory(b, n, NULL, &f, NULL) == ZT_OK)
            ok++;
        zt_close(f);
        (*files)++;
        free(b);
    }
    closedir(d);
    return ok;
}

static void v2_corpus(void **state)
{
    (void)state;
    const char *root = getenv("ZT_CORPUS_V2_DIR");
    assert_non_null(root);
    char dir[4200];
    int files = 0;
    snprintf(dir, sizeof dir, "%s/accept", root);
    int ok = v2_dir_agrees(dir, &files);
    assert_true(ok >= 30 && ok == files); /* every accepted file, opened remotely */
    snprintf(dir, sizeof dir, "%s/reject", root);
    files = 0;
    v2_dir_agrees(dir, &files);
    assert_true(files > 100);
}

/* The v2 footer is 40 bytes: fewer at the tail is the caller's mistake, said
 * as such; a data shard's "manifest" is the empty range at its footer. */
static void v2_footer_window(void **state)
{
    (void)state;
    const char *root = getenv("ZT_CORPUS_V2_DIR");
    assert_non_null(root);
    char path[4200];
    snprintf(path, sizeof path, "%s/accept/dtype_f32.zt", root);
    size_t n;
    uint8_t *b = zt_test_read_file(path, &n);
    uint64_t off, len;
    zt_file_kind kind = 0;
    zt_error err;
    ASSERT_ST(zt_manifest_locate(b, 16, b + n - 39, 39, n, NULL, &kind, &off, &len, &err),
              ZT_E_ARG);
    assert_int_equal(kind, ZT_KIND_ZT_2);
    ASSERT_OK(zt_manifest_locate(b, 16, b + n - 40, 40, n, NULL, &kind, &off, &len, &err), &err);
    assert_true(off % 4096 == 0 && off + len <= n - 40 && len > 0);
    zt_open_options opt = {.max_manifest_size = len - 1};
    ASSERT_ST(zt_manifest_locate(b, 16, b + n - 40, 40, n, &opt, NULL, &off, &len, &err),
              ZT_E_LIMIT);
    free(b);
    snprintf(path, sizeof path, "%s/accept/data_shard.zt", root);
    b = zt_test_read_file(path, &n);
    ASSERT_OK(zt_manifest_locate(b, 16, b + n - 40, 40, n, NULL, NULL, &off, &len, &err), &err);
    assert_int_equal(off, n - 40);
    assert_int_equal(len, 0);
    zt_file *f;
    ASSERT_OK(zt_open_manifest(b, 16, b + n - 40, 40, n, NULL, &f, &err), &err);
    assert_true(zt_file_is_data_shard(f));
    zt_close(f);
    free(b);
}

/* ---- push decoding */

typedef struct sinkbuf {
    uint8_t *p;
    size_t len, cap;
    int stop_after; /* calls before the sink fails; < 0: never */
} sinkbuf;

static int to_buf(void *ud, const void *data, size_t n)
{
    sinkbuf *s = ud;
    if (s->stop_after == 0)
        return 1;
    if (s->stop_after > 0)
        s->stop_after--;
    if (n > s->cap - s->len)
        return 1;
    memcpy(s->p + s->len, data, n);
    s->len += n;
    return 0;
}

/* Pushes the stored bytes of c (from the whole file b) in pieces of `chunk`. */
static zt_status push_all(const zt_file *f, const zt_component *c, const uint8_t *stored,
                          size_t stored_len, size_t chunk, sinkbuf *s, zt_error *err)
{
    zt_decoder *d;
    zt_status st = zt_decoder_new(f, c, &d, err);
    for (size_t off = 0; !st && off < stored_len; off += chunk) {
        size_t k = stored_len - off < chunk ? stored_len - off : chunk;
        st = zt_decoder_push(d, stored + off, k, to_buf, s, err);
    }
    if (!st)
        st = zt_decoder_push_end(d, to_buf, s, err);
    zt_decoder_free(d);
    return st;
}

static void push_equals_read(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = written_file(&n);
    zt_file *fm, *fw;
    zt_error err;
    ASSERT_OK(zt_open_memory(b, n, NULL, &fm, &err), &err);
    ASSERT_OK(open_windowed(b, n, 16, 16, NULL, &fw, &err), &err);
    static uint8_t want[40000], got[40000];
    const size_t chunks[] = {1, 7, 4096, 1u << 20};
    for (size_t i = 0; i < zt_file_object_count(fw); i++) {
        const zt_component *cm = zt_object_component_at(zt_file_object_at(fm, i), 0);
        const zt_component *cw = zt_object_component_at(zt_file_object_at(fw, i), 0);
        size_t wl;
        ASSERT_OK(zt_component_read(fm, cm, want, sizeof want, &wl, &err), &err);
        for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
            sinkbuf s = {got, 0, sizeof got, -1};
            ASSERT_OK(push_all(fw, cw, b + zt_component_offset(cw), zt_component_length(cw),
                               chunks[k], &s, &err),
                      &err);
            assert_int_equal(s.len, wl);
            assert_memory_equal(got, want, wl);
        }
    }
    zt_close(fm);
    zt_close(fw);
    free(b);
}

static void push_errors(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = written_file(&n);
    zt_file *f;
    zt_error err;
    ASSERT_OK(open_windowed(b, n, 16, 16, NULL, &f, &err), &err);
    static uint8_t out[80000];
    const zt_component *raw = zt_object_component_at(zt_file_find_object(f, "a", 1), 0);
    const zt_component *zs = zt_object_component_at(zt_file_find_object(f, "b", 1), 0);
    const uint8_t *rs = b + zt_component_offset(raw), *zsb = b + zt_component_offset(zs);
    size_t rl = (size_t)zt_component_length(raw), zl = (size_t)zt_component_length(zs);

    /* More stored bytes than the manifest says, raw and zstd. */
    sinkbuf s = {out, 0, sizeof out, -1};
    ASSERT_ST(push_all(f, raw, rs, rl + 1, rl + 1, &s, &err), ZT_E_SIZE);
    s.len = 0;
    ASSERT_ST(push_all(f, zs, zsb, zl + 1, 4096, &s, &err), ZT_E_SIZE);
    /* Too few: the end says so. */
    s.len = 0;
    ASSERT_ST(push_all(f, raw, rs, rl - 1, 4096, &s, &err), ZT_E_TRUNCATED);
    assert_string_equal(err.object, "a");
    s.len = 0;
    ASSERT_ST(push_all(f, zs, zsb, zl - 1, 4096, &s, &err), ZT_E_TRUNCATED);
    /* A corrupt frame (the magic number). */
    uint8_t *bad = malloc(zl);
    memcpy(bad, zsb, zl);
    bad[0] ^= 0xff;
    s.len = 0;
    ASSERT_ST(push_all(f, zs, bad, zl, 4096, &s, &err), ZT_E_ZSTD);
    free(bad);
    /* A sink that stops. */
    sinkbuf stop = {out, 0, sizeof out, 0};
    ASSERT_ST(push_all(f, raw, rs, rl, 4096, &stop, &err), ZT_E_IO);
    stop = (sinkbuf){out, 0, sizeof out, 0};
    ASSERT_ST(push_all(f, zs, zsb, zl, 4096, &stop, &err), ZT_E_IO);
    zt_close(f);

    /* Pull then push, push then pull: refused. */
    zt_file *fm;
    ASSERT_OK(zt_open_memory(b, n, NULL, &fm, &err), &err);
    const zt_component *c = zt_object_component_at(zt_file_object_at(fm, 0), 0);
    zt_decoder *d;
    size_t got;
    ASSERT_OK(zt_decoder_new(fm, c, &d, &err), &err);
    ASSERT_OK(zt_decoder_read(d, out, 16, &got, &err), &err);
    s.len = 0;
    ASSERT_ST(zt_decoder_push(d, rs, 16, to_buf, &s, &err), ZT_E_STATE);
    zt_decoder_free(d);
    ASSERT_OK(zt_decoder_new(fm, c, &d, &err), &err);
    ASSERT_OK(zt_decoder_push(d, rs, 16, to_buf, &s, &err), &err);
    ASSERT_ST(zt_decoder_read(d, out, 16, &got, &err), ZT_E_STATE);
    zt_decoder_free(d);
    zt_close(fm);
    free(b);
}

/* A zstd frame that decodes to more, or fewer, bytes than uncompressed_length. */
static void push_length_lies(void **state)
{
    (void)state;
    static uint8_t plain[100000];
    for (size_t i = 0; i < sizeof plain; i++)
        plain[i] = (uint8_t)(i % 251);
    size_t cap = ZSTD_compressBound(sizeof plain);
    uint8_t *z = malloc(cap);
    size_t zl = ZSTD_compress(z, cap, plain, sizeof plain, 3);
    assert_false(ZSTD_isError(zl));
    const uint64_t ulens[2] = {sizeof plain - 1, sizeof plain + 1};
    for (int i = 0; i < 2; i++) {
        tb m = {0};
        tb_map(&m, 2);
        tb_text(&m, "version");
        tb_text(&m, "1.2.0");
        tb_text(&m, "objects");
        tb_map(&m, 1);
        tb_text(&m, "t");
        uint64_t shape[1] = {ulens[i]};
        tb_dense(&m, 1, shape, &(tcomp){"u8", 64, zl, "zstd", ulens[i], NULL, NULL});
        uint8_t *data = calloc(1, 64 + zl);
        memcpy(data + 64, z, zl);
        size_t n;
        uint8_t *b = zt_test_assemble(data, 64 + zl, &m, 1, &n);
        zt_file *f;
        zt_error err;
        ASSERT_OK(open_windowed(b, n, 16, 16, NULL, &f, &err), &err);
        const zt_component *c = zt_object_component_at(zt_file_object_at(f, 0), 0);
        static uint8_t out[200000];
        sinkbuf s = {out, 0, sizeof out, -1};
        ASSERT_ST(push_all(f, c, z, zl, 997, &s, &err), ZT_E_SIZE);
        assert_true(s.len <= ulens[i]);
        zt_close(f);
        free(b);
        free(data);
        tb_free(&m);
    }
    free(z);
}

/* A frame whose decoded bytes end exactly at the end of zstd's output
 * buffer (1 MiB of zeros: eight full 128 KiB blocks), pushed whole or in
 * pieces: the flush after the last block must not be read as a new frame. */
static void push_output_ends_on_buffer(void **state)
{
    (void)state;
    size_t plain_len = (size_t)ZSTD_DStreamOutSize() * 8;
    uint8_t *plain = calloc(1, plain_len);
    size_t cap = ZSTD_compressBound(plain_len);
    uint8_t *z = malloc(cap);
    size_t zl = ZSTD_compress(z, cap, plain, plain_len, 3);
    assert_false(ZSTD_isError(zl));
    tb m = {0};
    tb_map(&m, 2);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    tb_text(&m, "objects");
    tb_map(&m, 1);
    tb_text(&m, "t");
    uint64_t shape[1] = {plain_len};
    tb_dense(&m, 1, shape, &(tcomp){"u8", 64, zl, "zstd", plain_len, NULL, NULL});
    uint8_t *data = calloc(1, 64 + zl);
    memcpy(data + 64, z, zl);
    size_t n;
    uint8_t *b = zt_test_assemble(data, 64 + zl, &m, 1, &n);
    zt_file *f;
    zt_error err;
    ASSERT_OK(open_windowed(b, n, 16, 16, NULL, &f, &err), &err);
    const zt_component *c = zt_object_component_at(zt_file_object_at(f, 0), 0);
    uint8_t *out = malloc(plain_len);
    const size_t chunks[] = {zl, 1, 10};
    for (size_t k = 0; k < 3; k++) {
        sinkbuf s = {out, 0, plain_len, -1};
        ASSERT_OK(push_all(f, c, z, zl, chunks[k], &s, &err), &err);
        assert_int_equal(s.len, plain_len);
        assert_memory_equal(out, plain, plain_len);
    }
    zt_close(f);
    free(out);
    free(b);
    free(data);
    free(z);
    free(plain);
    tb_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(written_file_any_window),
        cmocka_unit_test(manifest_only_has_no_data),
        cmocka_unit_test(tail_without_manifest_is_truncated),
        cmocka_unit_test(manifest_size_limit),
        cmocka_unit_test(bounds_against_file_size),
        cmocka_unit_test(layout_1_0),
        cmocka_unit_test(safetensors_head),
        cmocka_unit_test(alt_is_unsupported),
        cmocka_unit_test(fuzz_corpus_reader),
        cmocka_unit_test(fuzz_corpus_safetensors),
        cmocka_unit_test(v2_corpus),
        cmocka_unit_test(v2_footer_window),
        cmocka_unit_test(push_equals_read),
        cmocka_unit_test(push_errors),
        cmocka_unit_test(push_length_lies),
        cmocka_unit_test(push_output_ends_on_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
