/*
 * test_alloc.c: every out-of-memory path, libcbor's way. A scripted
 * allocator (zt_set_allocator) fails the Nth allocation; for N = 1, 2, ...
 * until an operation runs without reaching its Nth allocation, opening a
 * representative file (from memory, from a path with and without mmap),
 * building its JSON, and writing a file (with a component large enough for the
 * writer's background hasher) must each either succeed or fail
 * with ZT_E_NOMEM, and leave nothing behind: every block the library took is
 * given back (counted here; LSan checks the rest under ZT_SANITIZE), and a
 * failed write leaves no file at its path and no temporary file.
 */
#include "zt_test.h"

#include <sys/mman.h>
#include <zstd.h>

/* ---- the scripted allocator */

static size_t g_count;   /* allocations attempted since the last arm() */
static size_t g_fail_at; /* 0: never fail */
static long g_live;      /* blocks the library holds */
static size_t g_failed;  /* how many times it said no */

static void *t_malloc(size_t n)
{
    if (++g_count == g_fail_at) {
        g_failed++;
        return NULL;
    }
    void *p = malloc(n);
    if (p)
        g_live++;
    return p;
}

static void *t_realloc(void *p, size_t n)
{
    if (++g_count == g_fail_at) {
        g_failed++;
        return NULL;
    }
    void *q = realloc(p, n);
    if (q && !p)
        g_live++;
    return q;
}

static void t_free(void *p)
{
    if (p)
        g_live--;
    free(p);
}

static void arm(size_t n)
{
    g_count = 0;
    g_fail_at = n;
    g_failed = 0;
}

static int group_setup(void **state)
{
    (void)state;
    zt_set_allocator(t_malloc, t_realloc, t_free);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    zt_set_allocator(NULL, NULL, NULL);
    return 0;
}

/* Runs `op` with the Nth allocation failing, for N = 1.. until op completes
 * without its Nth allocation being attempted. Every run must return ZT_OK
 * or ZT_E_NOMEM and end with no live blocks. Returns the number of runs. */
typedef zt_status (*op_fn)(void *ctx, int *succeeded_fully);

static size_t exhaust(const char *what, op_fn op, void *ctx)
{
    size_t n;
    for (n = 1;; n++) {
        long live0 = g_live;
        arm(n);
        int full = 0;
        zt_status st = op(ctx, &full);
        size_t used = g_count, failed = g_failed;
        arm(0);
        if (st != ZT_OK && st != ZT_E_NOMEM)
            fail_msg("%s, allocation %zu failing: %s instead of ZT_OK or ZT_E_NOMEM", what, n,
                     zt_status_name(st));
        if (g_live != live0)
            fail_msg("%s, allocation %zu failing: %ld blocks leaked", what, n, g_live - live0);
        if (failed == 0) {
            /* the op never reached its Nth allocation: it must have succeeded */
            if (st != ZT_OK || !full)
                fail_msg("%s: no allocation failed yet the op did not succeed", what);
            assert_true(used < n);
            break;
        }
        /* a failed allocation may be absorbed (e.g. an optional buffer), but
         * then the result must still be right */
        if (st == ZT_OK && !full)
            fail_msg("%s, allocation %zu failing: reported success but the result is wrong", what,
                     n);
    }
    print_message("%s: %zu allocation points\n", what, n - 1);
    return n;
}

/* ---- a representative file: every value kind, many objects, zstd and
 * digests, a component-rich object, an indefinite-length string */

static uint8_t *g_file;
static size_t g_file_len;
static uint8_t g_dense[64], g_z_plain[1000];

static uint8_t *make_file(size_t *len)
{
    zt_test_fill(g_dense, sizeof g_dense, 1);
    memset(g_z_plain, 'z', sizeof g_z_plain);
    size_t zcap = ZSTD_compressBound(sizeof g_z_plain);
    uint8_t *z = malloc(zcap);
    size_t zn = ZSTD_compress(z, zcap, g_z_plain, sizeof g_z_plain, 3);
    assert_false(ZSTD_isError(zn));
    uint8_t sha[32];
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
    zt_hasher_update(h, g_dense, sizeof g_dense);
    zt_hasher_final(h, sha);
    zt_hasher_free(h);
    char shas[80], crcs[80];
    zt_digest_format(ZT_DIGEST_SHA256, sha, shas);
    snprintf(crcs, sizeof crcs, "crc32c:0x%08X", zt_crc32c(0, z, zn));

    size_t nfill = 300;
    tb m = {0};
    tb_map(&m, 3);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    tb_text(&m, "attributes");
    tb_map(&m, 8);
    tb_text(&m, "text"), tb_text(&m, "hello");
    tb_text(&m, "bytes"), tb_bytes(&m, "\x00\x01\x02\x03\x04", 5);
    tb_text(&m, "tag"), tb_tag(&m, 24), tb_bytes(&m, "\xa0", 1);
    tb_text(&m, "bigtag"), tb_tag(&m, UINT64_MAX), tb_array(&m, 1), tb_bytes(&m, "x", 1);
    tb_text(&m, "nan"), tb_raw(&m, "\xf9\x7e\x00", 3);
    tb_text(&m, "big"), tb_uint(&m, UINT64_MAX);
    tb_text(&m, "keys"), tb_map(&m, 2), tb_uint(&m, 1), tb_text(&m, "one"), tb_bytes(&m, "k", 1),
        tb_array(&m, 2), tb_f64(&m, 0.25), tb_neg(&m, 9);
    tb_text(&m, "indef"), tb_raw(&m,
                                 "\x7f\x63"
                                 "abc"
                                 "\x62"
                                 "de"
                                 "\xff",
                                 9);
    tb_text(&m, "objects");
    tb_map(&m, 3 + nfill);
    tb_text(&m, "dense");
    uint64_t s[2] = {4, 4};
    tb_dense(&m, 2, s, &(tcomp){"f32", 64, 64, NULL, UINT64_MAX, shas, NULL});
    tb_text(&m, "zdense");
    uint64_t sz[1] = {1000};
    tb_dense(&m, 1, sz, &(tcomp){"u8", 128, zn, "zstd", 1000, crcs, NULL});
    /* more than 8 components: the sorted duplicate check */
    tb_text(&m, "many");
    tb_map(&m, 3);
    tb_text(&m, "format"), tb_text(&m, "opaque");
    tb_text(&m, "attributes"), tb_map(&m, 1), tb_text(&m, "n"), tb_uint(&m, 12);
    tb_text(&m, "components");
    tb_map(&m, 12);
    for (int i = 0; i < 12; i++) {
        char role[16];
        snprintf(role, sizeof role, "part%02d", i);
        tb_text(&m, role);
        tb_comp(&m, &(tcomp){"u8", 64, 1, NULL, UINT64_MAX, NULL, NULL});
    }
    for (size_t i = 0; i < nfill; i++) {
        char name[32];
        snprintf(name, sizeof name, "filler.%03zu", i);
        tb_text(&m, name);
        tb_map(&m, 2);
        tb_text(&m, "format"), tb_text(&m, "opaque");
        tb_text(&m, "components"), tb_map(&m, 0);
    }
    size_t dlen = 128 + zn;
    uint8_t *data = calloc(1, dlen);
    memcpy(data + 64, g_dense, 64);
    memcpy(data + 128, z, zn);
    uint8_t *f = zt_test_assemble(data, dlen, &m, 1, len);
    free(data);
    free(z);
    tb_free(&m);
    return f;
}

/* Everything a client does with an open file. */
static zt_status use_file(zt_file *f, int *full)
{
    zt_error err;
    zt_status st;
    if (zt_file_object_count(f) != 303)
        return ZT_OK;
    const zt_object *d = zt_file_find_object(f, "dense", 5),
                    *z = zt_file_find_object(f, "zdense", 6);
    if (!d || !z || !zt_file_find_object(f, "filler.299", 10))
        return ZT_OK;
    uint8_t buf[1000];
    size_t got;
    if ((st = zt_component_read(f, zt_object_component_at(d, 0), buf, sizeof buf, &got, &err)))
        return st;
    if (got != 64 || memcmp(buf, g_dense, 64))
        return ZT_OK;
    if ((st = zt_component_read(f, zt_object_component_at(z, 0), buf, sizeof buf, &got, &err)))
        return st;
    if (got != 1000 || memcmp(buf, g_z_plain, 1000))
        return ZT_OK;
    int checked = 0;
    if ((st = zt_component_verify(f, d, zt_object_component_at(d, 0), &checked, &err)))
        return st;
    if ((st = zt_component_verify(f, z, zt_object_component_at(z, 0), &checked, &err)))
        return st;
    size_t dl;
    const char *s = zt_value_data(zt_value_get(zt_file_attributes(f), "indef"), &dl);
    if (!s || dl != 5 || memcmp(s, "abcde", 5))
        return ZT_OK;
    *full = 1;
    return ZT_OK;
}

static int setup_file(void **state)
{
    (void)state;
    g_file = make_file(&g_file_len);
    return 0;
}

static int teardown_file(void **state)
{
    (void)state;
    free(g_file);
    return 0;
}

static zt_status op_open_memory(void *ctx, int *full)
{
    (void)ctx;
    zt_file *f = NULL;
    zt_error err;
    memset(&err, 0, sizeof err);
    zt_status st = zt_open_memory(g_file, g_file_len, NULL, &f, &err);
    if (st) {
        assert_null(f);
        assert_int_equal(err.code, st);
        return st;
    }
    st = use_file(f, full);
    zt_close(f);
    return st;
}

static void open_memory_under_failures(void **state)
{
    (void)state;
    size_t runs = exhaust("zt_open_memory", op_open_memory, NULL);
    /* the file is big enough to exercise several arena blocks and stack growth */
    assert_true(runs > 10);
}

typedef struct path_ctx {
    const char *path;
    unsigned flags;
} path_ctx;

static zt_status op_open_path(void *ctx, int *full)
{
    path_ctx *p = ctx;
    zt_file *f = NULL;
    zt_error err;
    zt_open_options o = {.flags = p->flags};
    zt_status st = zt_open(p->path, &o, &f, &err);
    if (st)
        return st;
    st = use_file(f, full);
    zt_close(f);
    return st;
}

static void open_path_under_failures(void **state)
{
    (void)state;
    char *dir = zt_test_mkdtemp("alloc");
    char path[4200];
    snprintf(path, sizeof path, "%s/rep.zt", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_int_equal(write(fd, g_file, g_file_len), (ssize_t)g_file_len);
    close(fd);
    path_ctx mm = {path, 0}, nomm = {path, ZT_OPEN_NO_MMAP};
    exhaust("zt_open (mmap)", op_open_path, &mm);
    exhaust("zt_open (no mmap)", op_open_path, &nomm);
    zt_test_rmtree(dir);
    free(dir);
}

/* ---- JSON */

static zt_file *g_open;

static zt_status op_json(void *ctx, int *full)
{
    (void)ctx;
    zt_error err;
    memset(&err, 0, sizeof err);
    char *s = zt_file_manifest_json(g_open, ZT_JSON_PRETTY, &err);
    if (!s) {
        assert_int_equal(err.code, ZT_E_NOMEM);
        return ZT_E_NOMEM;
    }
    int ok = strstr(s, "\"$bytes\": \"AAECAwQ=\"") && strstr(s, "\"filler.299\"") &&
             strstr(s, "\"18446744073709551615\"") && strstr(s, "\"abcde\"");
    zt_free(s);
    s = zt_object_json(zt_file_find_object(g_open, "many", 4), ZT_JSON_COMPACT, &err);
    if (!s) {
        assert_int_equal(err.code, ZT_E_NOMEM);
        return ZT_E_NOMEM;
    }
    ok = ok && strstr(s, "\"part11\"");
    zt_free(s);
    *full = ok;
    return ZT_OK;
}

static void json_under_failures(void **state)
{
    (void)state;
    zt_error err;
    ASSERT_OK(zt_open_memory(g_file, g_file_len, NULL, &g_open, &err), &err);
    size_t runs = exhaust("manifest JSON", op_json, NULL);
    assert_true(runs > 5);
    zt_close(g_open);
}

/* ---- writing */

typedef struct write_ctx {
    char *dir, *path;
    uint8_t *want; /* the file written without failures */
    size_t want_len;
} write_ctx;

#define NCOMP 70 /* past the writer's first capacity of 64, for both arrays */

static zt_status write_file(write_ctx *c)
{
    zt_error err;
    memset(&err, 0, sizeof err);
    zt_writer_options o;
    zt_writer_options_init(&o); /* fsync on: the publish path allocates too */
    /* an out-parameter the caller did not initialise must not be read */
    union {
        zt_writer *w;
        uint8_t junk[sizeof(zt_writer *)];
    } u;
    memset(u.junk, 0xA5, sizeof u.junk);
    zt_status st = zt_writer_open(c->path, &o, &u.w, &err);
    if (st)
        return st;
    zt_writer *w = u.w;
#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((st = (x))) {                                                                          \
            assert_int_equal(err.code, st);                                                        \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)
    TRY(zt_writer_set_attributes(w, "{\"a\":[1,2,{\"b\":null}],\"c\":\"d\",\"e\":1.5}", &err));
    for (int i = 0; i < NCOMP; i++) {
        zt_component_spec spec = {.dtype = ZT_DTYPE_U8,
                                  .encoding = (zt_encoding)(i % 2),
                                  .digest = (zt_digest_kind)(i % 3),
                                  .type = i % 5 == 0 ? "f8_e5m2" : NULL};
        TRY(zt_writer_begin(w, &spec, &err));
        uint8_t b[100];
        memset(b, i, sizeof b);
        TRY(zt_writer_write(w, b, sizeof b, &err));
        size_t id;
        TRY(zt_writer_end(w, &id, &err));
        char name[32];
        snprintf(name, sizeof name, "obj%02d", NCOMP - i);
        uint64_t shape[1] = {100};
        const char *roles[1] = {"data"};
        TRY(zt_writer_add_object(w, name, "dense", 1, shape, i % 7 ? NULL : "{\"i\":{\"j\":[]}}", 1,
                                 roles, &id, &err));
    }
    /* one component larger than the writer's 1 MiB buffer: its digest goes to
     * the background hasher, whose setup may fail (then it is hashed inline,
     * and the file is the same) */
    {
        enum { BIG = (1 << 20) + 4097 };
        static uint8_t big[BIG];
        for (size_t k = 0; k < BIG; k++)
            big[k] = (uint8_t)(k * 2654435761u >> 13);
        zt_component_spec spec = {.dtype = ZT_DTYPE_U8, .digest = ZT_DIGEST_SHA256};
        TRY(zt_writer_begin(w, &spec, &err));
        TRY(zt_writer_write(w, big, 300000, &err));
        TRY(zt_writer_write(w, big + 300000, BIG - 300000, &err));
        size_t id;
        TRY(zt_writer_end(w, &id, &err));
        uint64_t shape[1] = {BIG};
        const char *roles[1] = {"data"};
        TRY(zt_writer_add_object(w, "big", "dense", 1, shape, NULL, 1, roles, &id, &err));
    }
    /* one object with more than 64 components */
    {
        const char *roles[NCOMP];
        size_t ids[NCOMP];
        char names[NCOMP][16];
        for (int i = 0; i < NCOMP; i++) {
            snprintf(names[i], sizeof names[i], "r%d", i);
            roles[i] = names[i];
            ids[i] = (size_t)i;
        }
        TRY(zt_writer_add_object(w, "wide", "opaque", 0, NULL, NULL, NCOMP, roles, ids, &err));
    }
    TRY(zt_writer_finish(w, &err));
out:
    zt_writer_free(w);
#undef TRY
    return st;
}

static zt_status op_write(void *ctx, int *full)
{
    write_ctx *c = ctx;
    zt_status st = write_file(c);
    if (st) {
        /* nothing published, nothing left over */
        if (zt_test_count_entries(c->dir) != 0)
            fail_msg("a failed write left %d entries in its directory (path %s)",
                     zt_test_count_entries(c->dir),
                     access(c->path, F_OK) == 0 ? "exists" : "absent");
        return st;
    }
    size_t n;
    uint8_t *b = zt_test_read_file(c->path, &n);
    *full = n == c->want_len && !memcmp(b, c->want, n);
    free(b);
    unlink(c->path);
    return ZT_OK;
}

static void write_under_failures(void **state)
{
    (void)state;
    write_ctx c;
    c.dir = zt_test_mkdtemp("alloc");
    c.path = malloc(4200);
    snprintf(c.path, 4200, "%s/out.zt", c.dir);
    /* the reference output */
    ASSERT_OK(write_file(&c), &(zt_error){.message = "reference write failed"});
    c.want = zt_test_read_file(c.path, &c.want_len);
    zt_file *f;
    zt_error err;
    ASSERT_OK(zt_open_memory(c.want, c.want_len, NULL, &f, &err), &err);
    assert_int_equal(zt_file_object_count(f), NCOMP + 2);
    {
        const zt_object *big = zt_file_find_object(f, "big", 3);
        int checked;
        assert_non_null(big);
        ASSERT_OK(zt_component_verify(f, big, zt_object_component_at(big, 0), &checked, &err),
                  &err);
        assert_int_equal(checked, 1);
    }
    zt_close(f);
    unlink(c.path);
    size_t runs = exhaust("writer", op_write, &c);
    assert_true(runs > 20);
    free(c.want);
    free(c.path);
    zt_test_rmtree(c.dir);
    free(c.dir);
}

/* begin and end that failed for memory can be retried once memory is back,
 * and the retry neither leaks what the failed call had set up nor spoils the
 * component. */
static void begin_end_retry_after_nomem(void **state)
{
    (void)state;
    uint8_t data[300];
    memset(data, 'q', sizeof data);
    for (size_t n = 1;; n++) {
        long live0 = g_live;
        int fd = memfd_create("retry", 0);
        zt_writer_options o;
        zt_writer_options_init(&o);
        o.fsync = 0;
        zt_writer *w;
        zt_error err;
        ASSERT_OK(zt_writer_open_fd(fd, &o, &w, &err), &err);
        zt_component_spec spec = {
            .dtype = ZT_DTYPE_U8, .encoding = ZT_ENC_ZSTD, .digest = ZT_DIGEST_SHA256};
        arm(n);
        zt_status st = zt_writer_begin(w, &spec, &err);
        size_t failed = g_failed;
        arm(0);
        if (st == ZT_E_NOMEM)
            st = zt_writer_begin(w, &spec, &err);
        ASSERT_OK(st, &err);
        ASSERT_OK(zt_writer_write(w, data, sizeof data, &err), &err);
        size_t id;
        arm(n);
        st = zt_writer_end(w, &id, &err);
        failed += g_failed;
        arm(0);
        if (st == ZT_E_NOMEM)
            st = zt_writer_end(w, &id, &err);
        ASSERT_OK(st, &err);
        uint64_t shape[1] = {sizeof data};
        const char *roles[1] = {"data"};
        ASSERT_OK(zt_writer_add_object(w, "x", "dense", 1, shape, NULL, 1, roles, &id, &err), &err);
        ASSERT_OK(zt_writer_finish(w, &err), &err);
        zt_writer_free(w);
        size_t len;
        uint8_t *b = zt_test_read_fd(fd, &len);
        close(fd);
        zt_file *f;
        ASSERT_OK(zt_open_memory(b, len, NULL, &f, &err), &err);
        const zt_object *ob = zt_file_object_at(f, 0);
        uint8_t out[300];
        size_t got;
        ASSERT_OK(zt_component_read(f, zt_object_component_at(ob, 0), out, sizeof out, &got, &err),
                  &err);
        assert_memory_equal(out, data, sizeof data);
        int checked;
        ASSERT_OK(zt_component_verify(f, ob, zt_object_component_at(ob, 0), &checked, &err), &err);
        zt_close(f);
        free(b);
        if (g_live != live0)
            fail_msg("begin/end failing at allocation %zu then retried: %ld blocks leaked", n,
                     g_live - live0);
        if (!failed)
            break;
    }
}

static void allocator_restores_default(void **state)
{
    (void)state;
    /* NULL restores malloc/realloc/free; the scripted one is put back after. */
    zt_set_allocator(NULL, NULL, NULL);
    long live = g_live;
    zt_file *f;
    zt_error err;
    ASSERT_OK(zt_open_memory(g_file, g_file_len, NULL, &f, &err), &err);
    assert_int_equal(g_live, live);
    zt_close(f);
    zt_set_allocator(t_malloc, t_realloc, t_free);
    arm(1);
    assert_int_equal(zt_open_memory(g_file, g_file_len, NULL, &f, &err), ZT_E_NOMEM);
    arm(0);
    assert_int_equal(g_live, live);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(open_memory_under_failures),  cmocka_unit_test(open_path_under_failures),
        cmocka_unit_test(json_under_failures),         cmocka_unit_test(write_under_failures),
        cmocka_unit_test(begin_end_retry_after_nomem), cmocka_unit_test(allocator_restores_default),
    };
    int r = 0;
    group_setup(NULL);
    setup_file(NULL);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    teardown_file(NULL);
    group_teardown(NULL);
    return r;
}
