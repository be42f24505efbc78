/*
 * test_catalog.c: the catalog (server/store/catalog.c) on a real directory:
 * what a scan serves and skips, snapshots that outlive a rescan, one entry
 * made again by ztd_catalog_update (added, replaced, dropped) without
 * touching the others or counting a reload, blobs by sha256, and the
 * open-file budget.
 */
#include "tmpfiles.h"

#include "store/catalog.h"

static ztd_entry *find(ztd_catalog *c, const char *name)
{
    ztd_snapshot *s = ztd_catalog_acquire(c);
    assert_non_null(s);
    ztd_entry *e = ztd_snapshot_find(s, name, strlen(name));
    if (e)
        ztd_entry_retain(e);
    ztd_snapshot_release(s);
    return e;
}

static size_t count(ztd_catalog *c)
{
    ztd_snapshot *s = ztd_catalog_acquire(c);
    size_t n = s->n;
    ztd_snapshot_release(s);
    return n;
}

static void scan_rules(void **state)
{
    (void)state;
    const char *root = tmp_dir("catalog");
    mkdir(join(root, "d"), 0755);
    mkdir(join(root, ".hidden"), 0755);
    write_zt(join(root, "a.zt"), 100, 1);
    write_zt(join(root, "d/b.zt"), 100, 2);
    write_zt(join(root, ".hidden/c.zt"), 100, 3);
    write_zt(join(root, ".h.zt"), 100, 4);
    write_text(join(root, "bad.zt"), "not a zTensor file");
    write_text(join(root, "notes.txt"), "a plain file");
    write_text(join(root, ".hidden/notes.txt"), "hidden");
    ztd_catalog *c = ztd_catalog_new(root, 1 << 20);
    assert_non_null(c);
    assert_false(ztd_catalog_ready(c));
    assert_int_equal(ztd_catalog_rescan(c), 0);
    assert_true(ztd_catalog_ready(c));
    /* a.zt, bad.zt (listed, not served), d/b.zt, notes.txt (plain) */
    assert_int_equal(count(c), 4);
    ztd_entry *e = find(c, "d/b.zt");
    assert_non_null(e);
    assert_non_null(e->file);
    ztd_entry_release(e);
    e = find(c, "bad.zt");
    assert_non_null(e);
    assert_null(e->file);
    assert_non_null(e->error);
    ztd_entry_release(e);
    assert_null(find(c, ".h.zt"));
    assert_null(find(c, ".hidden/c.zt"));
    assert_null(find(c, ".hidden/notes.txt"));
    /* a plain file: its own kind, no model, its bytes through its fd */
    e = find(c, "notes.txt");
    assert_non_null(e);
    assert_int_equal(e->kind, ZTD_ENTRY_PLAIN);
    assert_true(ztd_entry_is_plain(e));
    assert_true(ztd_entry_ok(e));
    assert_null(e->file);
    assert_null(e->error);
    assert_int_equal(e->size, 12);
    char buf[16] = {0};
    assert_int_equal(pread(ztd_entry_fd(e), buf, sizeof(buf), 0), 12);
    assert_string_equal(buf, "a plain file");
    assert_null(ztd_entry_plain_sha256(e)); /* not hashed yet */
    uint8_t sha[32] = {1, 2, 3};
    ztd_entry_plain_hashed(e, sha);
    assert_non_null(ztd_entry_plain_sha256(e));
    assert_memory_equal(ztd_entry_plain_sha256(e), sha, 32);
    ztd_entry_release(e);
    e = find(c, "a.zt");
    assert_int_equal(e->kind, ZTD_ENTRY_TENSOR);
    assert_null(ztd_entry_plain_sha256(e));
    ztd_entry_release(e);
    ztd_catalog_stats st;
    ztd_catalog_get_stats(c, &st);
    assert_int_equal(st.reloads, 1);
    assert_int_equal(st.files_valid, 3);
    assert_int_equal(st.files_invalid, 1);
    ztd_catalog_free(c);
    rm_tree(root);
}

static size_t open_files(ztd_catalog *c);

/* Plain files are in the open-file budget too: closed when unpinned past
 * it, opened again (identity checked) when pinned; one replaced while closed
 * is stale and has no fd. */
static void plain_files_budget(void **state)
{
    (void)state;
    const char *root = tmp_dir("catalog");
    char name[16], text[16], buf[16];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "p%d.txt", i);
        snprintf(text, sizeof(text), "plain %d", i);
        write_text(join(root, name), text);
    }
    ztd_catalog *c = ztd_catalog_new(root, 1 << 20);
    ztd_catalog_set_max_open(c, 2);
    assert_int_equal(ztd_catalog_rescan(c), 0);
    assert_int_equal(open_files(c), 2);
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 5; i++) {
            snprintf(name, sizeof(name), "p%d.txt", i);
            snprintf(text, sizeof(text), "plain %d", i);
            ztd_entry *e = find(c, name);
            assert_true(ztd_entry_fd(e) >= 0);
            memset(buf, 0, sizeof(buf));
            assert_int_equal(pread(ztd_entry_fd(e), buf, sizeof(buf), 0), 7);
            assert_string_equal(buf, text);
            ztd_entry_release(e);
            assert_true(open_files(c) <= 2);
        }
    ztd_fdcache_stats st;
    ztd_catalog_fd_stats(c, &st);
    assert_true(st.reopens >= 5);
    /* p0 is closed now; replaced by rename, it cannot be opened as the old entry */
    write_text(join(root, ".new"), "other!!");
    assert_int_equal(rename(join(root, ".new"), join(root, "p0.txt")), 0);
    ztd_entry *e = find(c, "p0.txt");
    assert_int_equal(ztd_entry_fd(e), -1);
    assert_true(ztd_entry_stale(e));
    assert_null(ztd_entry_plain_sha256(e));
    ztd_entry_release(e);
    assert_int_equal(ztd_catalog_update(c, "p0.txt", NULL), 0);
    e = find(c, "p0.txt");
    memset(buf, 0, sizeof(buf));
    assert_int_equal(pread(ztd_entry_fd(e), buf, sizeof(buf), 0), 7);
    assert_string_equal(buf, "other!!");
    ztd_entry_release(e);
    ztd_catalog_free(c);
    rm_tree(root);
}

/* The exclude patterns leave files out, by their path or a directory's,
 * tensor files and plain files alike; an update follows the same rule. */
static void exclude_patterns(void **state)
{
    (void)state;
    const char *root = tmp_dir("catalog");
    mkdir(join(root, "cache"), 0755);
    mkdir(join(root, "m"), 0755);
    mkdir(join(root, "m/tmp"), 0755);
    write_zt(join(root, "a.zt"), 100, 1);
    write_zt(join(root, "cache/b.zt"), 100, 2);
    write_text(join(root, "config.json"), "{}");
    write_text(join(root, "w.bin"), "x");
    write_text(join(root, "m/w.bin"), "x");
    write_text(join(root, "m/tmp/t.json"), "{}");
    write_text(join(root, "m/keep.json"), "{}");
    ztd_catalog *c = ztd_catalog_new(root, 1 << 20);
    const char *pats[] = {"*.bin", "cache", "*/tmp"};
    assert_int_equal(ztd_catalog_set_exclude(c, pats, 3), 0);
    assert_int_equal(ztd_catalog_rescan(c), 0);
    assert_int_equal(count(c), 3); /* a.zt, config.json, m/keep.json */
    assert_null(find(c, "w.bin"));
    assert_null(find(c, "m/w.bin"));
    assert_null(find(c, "cache/b.zt"));
    assert_null(find(c, "m/tmp/t.json"));
    ztd_entry *e = find(c, "m/keep.json");
    assert_non_null(e);
    ztd_entry_release(e);
    assert_true(ztd_catalog_excluded(c, "cache/b.zt"));
    assert_true(ztd_catalog_excluded(c, "x/y.bin"));
    assert_false(ztd_catalog_excluded(c, "m/keep.json"));
    /* an update of an excluded name adds nothing */
    write_text(join(root, "n.bin"), "x");
    assert_int_equal(ztd_catalog_update(c, "n.bin", NULL), 0);
    assert_null(find(c, "n.bin"));
    write_text(join(root, "n.json"), "{}");
    assert_int_equal(ztd_catalog_update(c, "n.json", NULL), 0);
    e = find(c, "n.json");
    assert_non_null(e);
    assert_true(ztd_entry_is_plain(e));
    ztd_entry_release(e);
    ztd_catalog_free(c);
    rm_tree(root);
}

/* A snapshot a request holds lives on, files open, after a rescan swaps in another. */
static void snapshots_outlive_rescans(void **state)
{
    (void)state;
    const char *root = tmp_dir("catalog");
    write_zt(join(root, "a.zt"), 100, 1);
    ztd_catalog *c = ztd_catalog_new(root, 1 << 20);
    assert_int_equal(ztd_catalog_rescan(c), 0);
    ztd_snapshot *old = ztd_catalog_acquire(c);
    uint64_t gen = old->generation;
    unlink(join(root, "a.zt"));
    assert_int_equal(ztd_catalog_rescan(c), 0);
    assert_int_equal(count(c), 0);
    assert_true(ztd_catalog_generation(c) > gen);
    ztd_entry *e = ztd_snapshot_find(old, "a.zt", 4);
    assert_non_null(e);
    assert_non_null(zt_file_find_object(e->file, "w", 1)); /* still open and readable */
    ztd_snapshot_release(old);
    ztd_catalog_free(c);
    rm_tree(root);
}

static void update_one_entry(void **state)
{
    (void)state;
    const char *root = tmp_dir("catalog");
    write_zt(join(root, "b.zt"), 100, 1);
    write_zt(join(root, "d.zt"), 100, 2);
    ztd_catalog *c = ztd_catalog_new(root, 1 << 20);
    assert_int_equal(ztd_catalog_rescan(c), 0);
    ztd_entry *d0 = find(c, "d.zt");
    /* added, in name order; a file copied in meanwhile is not picked up */
    write_zt(join(root, "c.zt"), 200, 3);
    write_zt(join(root, "other.zt"), 100, 4);
    assert_int_equal(ztd_catalog_update(c, "c.zt", NULL), 0);
    ztd_snapshot *s = ztd_catalog_acquire(c);
    assert_int_equal(s->n, 3);
    assert_string_equal(s->entries[0]->name, "b.zt");
    assert_string_equal(s->entries[1]->name, "c.zt");
    assert_string_equal(s->entries[2]->name, "d.zt");
    assert_ptr_equal(s->entries[2], d0); /* the others are carried as they are */
    size_t len;
    char *list = ztd_snapshot_list_json(s, &len);
    assert_non_null(strstr(list, "\"c.zt\""));
    assert_null(strstr(list, "other.zt"));
    assert_int_equal(len, strlen(list));
    free(list);
    ztd_snapshot_release(s);
    /* replaced: a new entry for the new version */
    ztd_entry *c0 = find(c, "c.zt");
    write_zt(join(root, "c.zt"), 300, 5);
    assert_int_equal(ztd_catalog_update(c, "c.zt", NULL), 0);
    ztd_entry *c1 = find(c, "c.zt");
    assert_ptr_not_equal(c0, c1);
    assert_true(c1->size != c0->size);
    ztd_entry_release(c0);
    ztd_entry_release(c1);
    /* dropped when the file is gone; names a scan would not serve are not added */
    unlink(join(root, "c.zt"));
    assert_int_equal(ztd_catalog_update(c, "c.zt", NULL), 0);
    assert_null(find(c, "c.zt"));
    write_zt(join(root, ".x.zt"), 100, 6);
    assert_int_equal(ztd_catalog_update(c, ".x.zt", NULL), 0);
    assert_null(find(c, ".x.zt"));
    assert_int_equal(count(c), 2);
    ztd_catalog_stats st;
    ztd_catalog_get_stats(c, &st);
    assert_int_equal(st.reloads, 1); /* updates are not scans */
    assert_int_equal(st.files_valid, 2);
    ztd_entry_release(d0);
    ztd_catalog_free(c);
    rm_tree(root);
}

/* A file the server verified before publishing counts as verified at once. */
static void update_verified(void **state)
{
    (void)state;
    const char *root = tmp_dir("catalog");
    write_zt(join(root, "a.zt"), 100, 1);
    ztd_catalog *c = ztd_catalog_new(root, 1 << 20);
    assert_int_equal(ztd_catalog_rescan(c), 0);
    write_zt(join(root, "v.zt"), 100, 7);
    struct stat sb;
    assert_int_equal(stat(join(root, "v.zt"), &sb), 0);
    assert_int_equal(ztd_catalog_update(c, "v.zt", &sb), 0);
    ztd_entry *e = find(c, "v.zt");
    assert_int_equal(e->digests.count[ZTD_DIGEST_VERIFIED], 1);
    ztd_entry_release(e);
    e = find(c, "a.zt");
    assert_int_equal(e->digests.count[ZTD_DIGEST_PENDING], 1); /* only the verifier decides it */
    /* blobs: both files' components are found by their digest */
    const zt_component *comp =
        zt_object_find_component(zt_file_find_object(e->file, "w", 1), "data");
    ztd_snapshot *s = ztd_catalog_acquire(c);
    const ztd_blob *b = ztd_snapshot_find_blob(s, zt_component_digest_bytes(comp, NULL));
    assert_non_null(b);
    assert_ptr_equal(b->entry, e);
    static const uint8_t none[32];
    assert_null(ztd_snapshot_find_blob(s, none));
    ztd_snapshot_release(s);
    ztd_entry_release(e);
    ztd_catalog_free(c);
    rm_tree(root);
}

/* Reads e's one component ("w", "data", n bytes of fill) through its open file. */
static void reads(ztd_entry *e, size_t n, unsigned char fill)
{
    const zt_component *comp =
        zt_object_find_component(zt_file_find_object(e->file, "w", 1), "data");
    uint8_t buf[256];
    size_t got = 0;
    zt_error err;
    assert_true(zt_file_fd(e->file) >= 0);
    assert_int_equal(zt_component_read(e->file, comp, buf, sizeof(buf), &got, &err), ZT_OK);
    assert_int_equal(got, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(buf[i], fill);
}

static size_t open_files(ztd_catalog *c)
{
    ztd_fdcache_stats st;
    ztd_catalog_fd_stats(c, &st);
    return st.open;
}

/* The open-file budget (open_files.c): 6 files, 2 open at most; a retained
 * (pinned) entry is opened again and stays open, even past the budget while
 * more are pinned at once; a file replaced while closed is not reopened. */
static void open_file_budget(void **state)
{
    (void)state;
    const char *root = tmp_dir("catalog");
    char name[16];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof(name), "f%d.zt", i);
        write_zt(join(root, name), 100, (unsigned char)(i + 1));
    }
    ztd_catalog *c = ztd_catalog_new(root, 1 << 20);
    ztd_catalog_set_max_open(c, 2);
    assert_int_equal(ztd_catalog_rescan(c), 0);
    assert_int_equal(open_files(c), 2);
    ztd_entry *e[6];
    for (int i = 0; i < 6; i++) { /* each pinned in turn, released at once */
        snprintf(name, sizeof(name), "f%d.zt", i);
        e[i] = find(c, name);
        reads(e[i], 100, (unsigned char)(i + 1));
        ztd_entry_release(e[i]);
        assert_true(open_files(c) <= 2);
    }
    for (int i = 0; i < 4; i++) { /* four pinned at once: all open */
        snprintf(name, sizeof(name), "f%d.zt", i);
        e[i] = find(c, name);
    }
    assert_int_equal(open_files(c), 4);
    for (int i = 0; i < 4; i++)
        reads(e[i], 100, (unsigned char)(i + 1));
    for (int i = 0; i < 4; i++)
        ztd_entry_release(e[i]);
    assert_int_equal(open_files(c), 2);
    ztd_fdcache_stats st;
    ztd_catalog_fd_stats(c, &st);
    assert_true(st.reopens >= 6);
    assert_true(st.evictions >= 6);
    /* f5 was opened last and f0 first: f0 is closed now. Replace it (rename). */
    write_zt(join(root, ".new"), 100, 9);
    assert_int_equal(rename(join(root, ".new"), join(root, "f0.zt")), 0);
    e[0] = find(c, "f0.zt"); /* the old entry: no update has run */
    assert_int_equal(zt_file_fd(e[0]->file), -1);
    assert_true(ztd_entry_stale(e[0]));
    ztd_entry_release(e[0]);
    assert_int_equal(ztd_catalog_update(c, "f0.zt", NULL), 0);
    e[0] = find(c, "f0.zt");
    reads(e[0], 100, 9);
    ztd_entry_release(e[0]);
    ztd_catalog_free(c);
    rm_tree(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scan_rules),         cmocka_unit_test(snapshots_outlive_rescans),
        cmocka_unit_test(update_one_entry),   cmocka_unit_test(update_verified),
        cmocka_unit_test(open_file_budget),   cmocka_unit_test(exclude_patterns),
        cmocka_unit_test(plain_files_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
