/*
 * zt_file_verify: a file written by the library, then damaged byte by byte in
 * memory. Problems come back in manifest order whatever the threads did, the
 * result counts what was checked, stop_at_first stops, `meanwhile` runs
 * once on the calling thread, and digests from `known_sha256` are used as the
 * library's own. Components with nothing to check (raw, no digest) cost no
 * memory per component and leave the others' reports as they were.
 */
#include "zt_test.h"

#include <pthread.h>
#include <stdbool.h>

#define NOBJ 4

typedef struct sample {
    uint8_t *bytes;
    size_t len;
    uint64_t off[NOBJ]; /* each object's component offset in the file */
} sample;

/* Objects o0..o3 of one sha256 component each; o2 is the largest (verified
 * first), o3 is zstd-compressed. */
static void make_sample(sample *s)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    zt_writer_options wo;
    zt_writer_options_init(&wo);
    wo.fsync = 0;
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open_fd(fileno(tmp), &wo, &w, &err), &err);
    static const char *const roles[1] = {"data"};
    for (int i = 0; i < NOBJ; i++) {
        size_t n = i == 2 ? (3u << 20) : 4096;
        uint8_t *data = malloc(n);
        assert_non_null(data);
        for (size_t k = 0; k < n; k++)
            data[k] = (uint8_t)(k * 7 + (size_t)i);
        zt_component_spec spec = {.dtype = ZT_DTYPE_U8,
                                  .encoding = i == 3 ? ZT_ENC_ZSTD : ZT_ENC_RAW,
                                  .digest = ZT_DIGEST_SHA256};
        size_t id;
        ASSERT_OK(zt_writer_begin(w, &spec, &err), &err);
        ASSERT_OK(zt_writer_write(w, data, n, &err), &err);
        ASSERT_OK(zt_writer_end(w, &id, &err), &err);
        zt_written_component wc;
        assert_int_equal(zt_writer_component_info(w, id, &wc), ZT_OK);
        s->off[i] = wc.offset;
        char name[8];
        snprintf(name, sizeof(name), "o%d", i);
        uint64_t shape[1] = {n};
        ASSERT_OK(zt_writer_add_object(w, name, "dense", 1, shape, NULL, 1, roles, &id, &err),
                  &err);
        free(data);
    }
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);
    long len = ftell(tmp);
    assert_true(len > 0);
    s->len = (size_t)len;
    s->bytes = malloc(s->len);
    assert_non_null(s->bytes);
    rewind(tmp);
    assert_int_equal(fread(s->bytes, 1, s->len, tmp), s->len);
    fclose(tmp);
}

typedef struct seen {
    char objects[16][sizeof(((zt_error *)0)->object)];
    int n;
    int meanwhile;
    pthread_t caller;
} seen;

static void on_problem(void *ud, const zt_error *e)
{
    seen *s = ud;
    assert_true(pthread_equal(pthread_self(), s->caller));
    if (s->n < 16)
        snprintf(s->objects[s->n], sizeof(s->objects[0]), "%s", e->object);
    s->n++;
}

static void meanwhile(void *ud)
{
    seen *s = ud;
    assert_true(pthread_equal(pthread_self(), s->caller));
    s->meanwhile++;
}

static zt_status verify(const sample *s, int stop_at_first, seen *out, zt_verify_result *res,
                        zt_error *err)
{
    zt_file *f;
    ASSERT_OK(zt_open_memory(s->bytes, s->len, NULL, &f, err), err);
    zt_verify_options o;
    zt_verify_options_init(&o);
    o.stop_at_first = stop_at_first;
    o.on_problem = on_problem;
    o.meanwhile = meanwhile;
    o.ud = out;
    out->caller = pthread_self();
    zt_status st = zt_file_verify(f, &o, res, err);
    zt_close(f);
    return st;
}

static void good_file(void **state)
{
    (void)state;
    sample s = {0};
    make_sample(&s);
    seen sn = {0};
    zt_verify_result res;
    zt_error err;
    ASSERT_OK(verify(&s, 0, &sn, &res, &err), &err);
    assert_int_equal(res.components, NOBJ);
    assert_int_equal(res.digests, NOBJ);
    assert_int_equal(res.problems, 0);
    assert_int_equal(sn.n, 0);
    assert_int_equal(sn.meanwhile, 1);
    free(s.bytes);
}

static void problems_in_manifest_order(void **state)
{
    (void)state;
    sample s = {0};
    make_sample(&s);
    s.bytes[s.off[2] + (2u << 20)] ^= 1; /* deep inside the largest component */
    s.bytes[s.off[0] + 5] ^= 0x80;
    s.bytes[s.off[3] + 1] ^= 0x40; /* a compressed component */
    seen sn = {0};
    zt_verify_result res;
    zt_error err;
    assert_int_equal(verify(&s, 0, &sn, &res, &err), ZT_E_DIGEST_MISMATCH);
    assert_int_equal(res.problems, 3);
    assert_int_equal(sn.n, 3);
    assert_string_equal(sn.objects[0], "o0");
    assert_string_equal(sn.objects[1], "o2");
    assert_string_equal(sn.objects[2], "o3");
    assert_string_equal(err.object, "o0"); /* *err is the first in manifest order */
    assert_true(err.has_offset);
    assert_int_equal(err.offset, s.off[0]);
    free(s.bytes);
}

static void stop_at_first_stops(void **state)
{
    (void)state;
    sample s = {0};
    make_sample(&s);
    for (int i = 0; i < NOBJ; i++)
        s.bytes[s.off[i]] ^= 1;
    seen sn = {0};
    zt_verify_result res;
    zt_error err;
    assert_int_not_equal(verify(&s, 1, &sn, &res, &err), ZT_OK);
    assert_true(res.problems >= 1);
    assert_true(sn.n >= 1 && sn.n < NOBJ + 1);
    assert_int_equal(sn.meanwhile, 1);
    free(s.bytes);
}

/* An options struct from a caller that never called _init (size 0) still works. */
static void zero_size_options(void **state)
{
    (void)state;
    sample s = {0};
    make_sample(&s);
    s.bytes[s.off[1]] ^= 1;
    zt_file *f;
    zt_error err;
    ASSERT_OK(zt_open_memory(s.bytes, s.len, NULL, &f, &err), &err);
    zt_verify_options o = {.threads = 1};
    zt_verify_result res;
    assert_int_equal(zt_file_verify(f, &o, &res, &err), ZT_E_DIGEST_MISMATCH);
    assert_string_equal(err.object, "o1");
    assert_int_equal(zt_file_verify(f, NULL, NULL, &err), ZT_E_DIGEST_MISMATCH);
    zt_close(f);
    free(s.bytes);
}

/* known_sha256: the caller's digest of o2's bytes (o2 damaged in memory after
 * the caller hashed the good bytes: no problem found, since the library does
 * not hash them); a wrong one is a mismatch; 0 leaves the hashing to it. */
typedef struct knows {
    uint64_t off, len;
    uint8_t digest[32];
    int mode; /* 0: answer 0, 1: answer the digest */
    int calls;
} knows;

static int known(void *ud, uint64_t offset, uint64_t length, uint8_t out[32])
{
    knows *k = ud;
    __atomic_add_fetch(&k->calls, 1, __ATOMIC_RELAXED);
    if (!k->mode || offset != k->off || length != k->len)
        return 0;
    memcpy(out, k->digest, 32);
    return 1;
}

static void known_digests(void **state)
{
    (void)state;
    sample s = {0};
    make_sample(&s);
    knows k = {.off = s.off[2], .len = 3u << 20, .mode = 1};
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
    zt_hasher_update(h, s.bytes + k.off, k.len);
    zt_hasher_final(h, k.digest);
    zt_hasher_free(h);
    s.bytes[s.off[2] + 100] ^= 1; /* not hashed by the library: not found */
    zt_file *f;
    zt_error err;
    ASSERT_OK(zt_open_memory(s.bytes, s.len, NULL, &f, &err), &err);
    zt_verify_options o;
    zt_verify_options_init(&o);
    o.known_sha256 = known;
    o.known_ud = &k;
    zt_verify_result res;
    ASSERT_OK(zt_file_verify(f, &o, &res, &err), &err);
    assert_int_equal(res.digests, NOBJ);
    assert_int_equal(k.calls, NOBJ); /* asked for every sha256 component */
    k.digest[0] ^= 1; /* the caller's digest is wrong: a mismatch, reported as ours */
    assert_int_equal(zt_file_verify(f, &o, NULL, &err), ZT_E_DIGEST_MISMATCH);
    assert_string_equal(err.object, "o2");
    assert_non_null(strstr(err.message, "manifest says"));
    k.mode = 0; /* not known: the library hashes o2 and finds the damage */
    assert_int_equal(zt_file_verify(f, &o, NULL, &err), ZT_E_DIGEST_MISMATCH);
    assert_string_equal(err.object, "o2");
    zt_close(f);
    free(s.bytes);
}

/* NPLAIN raw objects p0.. of 16 bytes with the digest `plain`, then "s" (raw,
 * sha256) and "z" (zstd, no digest) of 4096 bytes each; *s_off and *z_off:
 * their offsets. */
#define NPLAIN 20000
static uint8_t *make_mixed(size_t *len, uint64_t *s_off, uint64_t *z_off, zt_digest_kind plain)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    zt_writer_options wo;
    zt_writer_options_init(&wo);
    wo.fsync = 0;
    zt_writer *w;
    zt_error err;
    ASSERT_OK(zt_writer_open_fd(fileno(tmp), &wo, &w, &err), &err);
    static const char *const roles[1] = {"data"};
    static uint8_t data[4096];
    for (size_t k = 0; k < sizeof(data); k++)
        data[k] = (uint8_t)(k * 13);
    for (int i = 0; i < NPLAIN + 2; i++) {
        bool is_s = i == NPLAIN, is_z = i == NPLAIN + 1;
        size_t n = is_s || is_z ? sizeof(data) : 16;
        zt_component_spec spec = {.dtype = ZT_DTYPE_U8,
                                  .encoding = is_z ? ZT_ENC_ZSTD : ZT_ENC_RAW,
                                  .digest = is_s   ? ZT_DIGEST_SHA256
                                            : is_z ? ZT_DIGEST_NONE
                                                   : plain};
        size_t id;
        ASSERT_OK(zt_writer_begin(w, &spec, &err), &err);
        ASSERT_OK(zt_writer_write(w, data, n, &err), &err);
        ASSERT_OK(zt_writer_end(w, &id, &err), &err);
        zt_written_component wc;
        assert_int_equal(zt_writer_component_info(w, id, &wc), ZT_OK);
        *(is_s ? s_off : z_off) = wc.offset;
        char name[16];
        snprintf(name, sizeof(name), is_s ? "s" : is_z ? "z" : "p%d", i);
        uint64_t shape[1] = {n};
        ASSERT_OK(zt_writer_add_object(w, name, "dense", 1, shape, NULL, 1, roles, &id, &err),
                  &err);
    }
    ASSERT_OK(zt_writer_finish(w, &err), &err);
    zt_writer_free(w);
    long l = ftell(tmp);
    assert_true(l > 0);
    *len = (size_t)l;
    uint8_t *b = malloc(*len);
    assert_non_null(b);
    rewind(tmp);
    assert_int_equal(fread(b, 1, *len, tmp), *len);
    fclose(tmp);
    return b;
}

static size_t g_allocated; /* bytes the library asked for, while counting */
static void *counting_malloc(size_t n)
{
    __atomic_add_fetch(&g_allocated, n, __ATOMIC_RELAXED);
    return malloc(n);
}
static void *counting_realloc(void *p, size_t n)
{
    __atomic_add_fetch(&g_allocated, n, __ATOMIC_RELAXED);
    return realloc(p, n);
}

/* 20,000 components with nothing to check: verifying them allocates less
 * than 8 bytes each (listing them for the workers took 24 each), and the
 * two that need work are still checked and reported in manifest order. */
static void nothing_to_check(void **state)
{
    (void)state;
    size_t len;
    uint64_t s_off = 0, z_off = 0;
    uint8_t *b = make_mixed(&len, &s_off, &z_off, ZT_DIGEST_NONE);
    zt_file *f;
    zt_error err;
    ASSERT_OK(zt_open_memory(b, len, NULL, &f, &err), &err);
    zt_verify_result res;
    g_allocated = 0;
    zt_set_allocator(counting_malloc, counting_realloc, free);
    zt_status st = zt_file_verify(f, NULL, &res, &err);
    zt_set_allocator(NULL, NULL, NULL);
    ASSERT_OK(st, &err);
    assert_int_equal(res.components, NPLAIN + 2);
    assert_int_equal(res.digests, 1);
    assert_true(g_allocated < 8 * NPLAIN); /* 66 KB: the zstd check's buffer; was 546 KB */
    zt_close(f);

    b[s_off + 7] ^= 1;
    b[z_off + 2] ^= 0x40;
    seen sn = {0};
    sample sm = {.bytes = b, .len = len};
    assert_int_not_equal(verify(&sm, 0, &sn, &res, &err), ZT_OK);
    assert_int_equal(res.components, NPLAIN + 2);
    assert_int_equal(res.problems, 2);
    assert_int_equal(sn.n, 2);
    assert_string_equal(sn.objects[0], "s");
    assert_string_equal(sn.objects[1], "z");
    assert_int_equal(err.code, ZT_E_DIGEST_MISMATCH);

    /* From the manifest alone there are no bytes: every component says so. */
    ASSERT_OK(zt_open_manifest(b, len, b, len, len, NULL, &f, &err), &err);
    assert_int_equal(zt_file_verify(f, NULL, &res, &err), ZT_E_UNSUPPORTED);
    assert_int_equal(res.problems, NPLAIN + 2);
    zt_close(f);
    free(b);
}

/* A mapped file of 20,000 small sha256 components: verifying it allocates
 * less than 1 KiB per component (each took a 1 MiB read buffer). */
static void small_components_small_buffers(void **state)
{
    (void)state;
    size_t len;
    uint64_t s_off = 0, z_off = 0;
    uint8_t *b = make_mixed(&len, &s_off, &z_off, ZT_DIGEST_SHA256);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    assert_int_equal(fwrite(b, 1, len, tmp), len);
    assert_int_equal(fflush(tmp), 0);
    zt_file *f;
    zt_error err;
    ASSERT_OK(zt_open_fd(fileno(tmp), NULL, &f, &err), &err);
    assert_non_null(zt_file_bytes(f)); /* mapped: components read with pread */
    zt_verify_result res;
    g_allocated = 0;
    zt_set_allocator(counting_malloc, counting_realloc, free);
    zt_status st = zt_file_verify(f, NULL, &res, &err);
    zt_set_allocator(NULL, NULL, NULL);
    ASSERT_OK(st, &err);
    assert_int_equal(res.digests, NPLAIN + 1);
    assert_true(g_allocated < 1024 * (size_t)NPLAIN);
    zt_close(f);
    fclose(tmp);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_file),
        cmocka_unit_test(problems_in_manifest_order),
        cmocka_unit_test(stop_at_first_stops),
        cmocka_unit_test(zero_size_options),
        cmocka_unit_test(known_digests),
        cmocka_unit_test(nothing_to_check),
        cmocka_unit_test(small_components_small_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
