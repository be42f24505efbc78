/*
 * test_view_names.c: the virtual entries of a snapshot (server/store/view_names.c)
 * on a real directory: STEM.safetensors beside each tensor file with the view's
 * size, model.safetensors.index.json for a directory of several files, none for
 * two files holding one tensor name; the entries sorted, the blob index and the
 * file counts as without views; an update makes its directory's virtual entries
 * again and keeps the others (the same entries).
 */
#include "tmpfiles.h"

#include "store/catalog.h"
#include "store/view_names.h"
#include <ztensor/ztensor_experimental.h>

/* A valid .zt at path with one u8 object `name` of n bytes, each `fill`. */
static void write_named(const char *path, const char *name, size_t n, unsigned char fill)
{
    zt_writer_options o;
    zt_writer_options_init(&o);
    o.fsync = 0;
    zt_writer *w;
    zt_error err;
    assert_int_equal(zt_writer_open(path, &o, &w, &err), ZT_OK);
    zt_component_spec spec = {.dtype = ZT_DTYPE_U8, .digest = ZT_DIGEST_SHA256};
    unsigned char buf[4096];
    assert_true(n <= sizeof(buf));
    memset(buf, fill, n);
    size_t id;
    assert_int_equal(zt_writer_begin(w, &spec, &err), ZT_OK);
    assert_int_equal(zt_writer_write(w, buf, n, &err), ZT_OK);
    assert_int_equal(zt_writer_end(w, &id, &err), ZT_OK);
    uint64_t shape[1] = {n};
    const char *roles[1] = {"data"};
    assert_int_equal(zt_writer_add_object(w, name, "dense", 1, shape, NULL, 1, roles, &id, &err),
                     ZT_OK);
    assert_int_equal(zt_writer_finish(w, &err), ZT_OK);
    zt_writer_free(w);
}

static ztd_catalog *catalog_of(const char *root)
{
    ztd_catalog *c = ztd_catalog_new(root, 1 << 20);
    assert_non_null(c);
    ztd_catalog_set_virtuals(c, ztd_view_names_add);
    assert_int_equal(ztd_catalog_rescan(c), 0);
    return c;
}

static ztd_entry *find(ztd_snapshot *s, const char *name)
{
    return ztd_snapshot_find(s, name, strlen(name));
}

/* Every name of s, sorted strictly, joined by spaces into out. */
static void names_of(ztd_snapshot *s, char *out, size_t cap)
{
    out[0] = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (i)
            assert_true(strcmp(s->entries[i - 1]->name, s->entries[i]->name) < 0);
        strncat(out, s->entries[i]->name, cap - strlen(out) - 2);
        strcat(out, " ");
    }
}

static void views_and_index(void **state)
{
    (void)state;
    const char *root = tmp_dir("views");
    mkdir(join(root, "m"), 0755);
    mkdir(join(root, "dup"), 0755);
    write_named(join(root, "m/a.zt"), "x", 1000, 1);
    write_named(join(root, "m/b.zt"), "y", 3000, 2);
    write_named(join(root, "c.zt"), "w", 100, 3);
    write_named(join(root, "dup/p.zt"), "t", 100, 4);
    write_named(join(root, "dup/q.zt"), "t", 100, 5);
    ztd_catalog *c = catalog_of(root);
    ztd_snapshot *s = ztd_catalog_acquire(c);
    char names[2048];
    names_of(s, names, sizeof(names));
    assert_string_equal(names, "c.safetensors c.zt dup/p.safetensors dup/p.zt dup/q.safetensors "
                               "dup/q.zt m/a.safetensors m/a.zt m/b.safetensors m/b.zt "
                               "m/model.safetensors.index.json ");
    ztd_entry *v = find(s, "m/a.safetensors"), *a = find(s, "m/a.zt");
    assert_ptr_equal(v->view_of, a);
    assert_null(v->file);
    assert_true(ztd_entry_virtual(v));
    zt_error err;
    zt_st_view *sv = zt_st_view_new(a->file, &err);
    assert_non_null(sv);
    assert_int_equal(v->size, zt_st_view_size(sv));
    zt_st_view_free(sv);
    ztd_entry *ix = find(s, "m/model.safetensors.index.json");
    assert_non_null(ix->st_index);
    assert_int_equal(ix->size, ix->st_index->len);
    assert_non_null(strstr(ix->st_index->json, "\"total_size\": 4000"));
    assert_non_null(strstr(ix->st_index->json, "\"x\": \"a.safetensors\""));
    assert_non_null(strstr(ix->st_index->json, "\"y\": \"b.safetensors\""));
    assert_int_equal(ix->st_index->json[ix->st_index->len - 1], '\n');
    assert_int_equal(ix->st_index->nmembers, 2);
    assert_null(find(s, "dup/model.safetensors.index.json")); /* "t" in both */
    assert_int_equal(s->nblobs, 5);                           /* the files' digests only */
    assert_int_equal(s->nvirtual, 6);
    ztd_snapshot_release(s);
    ztd_catalog_stats st;
    ztd_catalog_get_stats(c, &st);
    assert_int_equal(st.files_valid, 5);
    assert_int_equal(st.files_invalid, 0);
    ztd_catalog_free(c);
    rm_tree(root);
}

static void update_remakes_one_directory(void **state)
{
    (void)state;
    const char *root = tmp_dir("views");
    mkdir(join(root, "m"), 0755);
    write_named(join(root, "m/a.zt"), "x", 1000, 1);
    write_named(join(root, "m/b.zt"), "y", 3000, 2);
    write_named(join(root, "c.zt"), "w", 100, 3);
    ztd_catalog *c = catalog_of(root);
    ztd_snapshot *s0 = ztd_catalog_acquire(c);
    ztd_entry *cview = find(s0, "c.safetensors"), *aview = find(s0, "m/a.safetensors");
    ztd_entry *ix0 = find(s0, "m/model.safetensors.index.json");
    /* a rescan that finds nothing changed keeps the same virtual entries */
    assert_int_equal(ztd_catalog_rescan(c), 0);
    ztd_snapshot *s1 = ztd_catalog_acquire(c);
    assert_ptr_equal(find(s1, "c.safetensors"), cview);
    assert_ptr_equal(find(s1, "m/model.safetensors.index.json"), ix0);
    ztd_snapshot_release(s1);
    write_named(join(root, "m/z.zt"), "z", 500, 4);
    assert_int_equal(ztd_catalog_update(c, "m/z.zt", NULL), 0);
    ztd_snapshot *s = ztd_catalog_acquire(c);
    char names[2048];
    names_of(s, names, sizeof(names));
    assert_string_equal(names, "c.safetensors c.zt m/a.safetensors m/a.zt m/b.safetensors m/b.zt "
                               "m/model.safetensors.index.json m/z.safetensors m/z.zt ");
    assert_ptr_equal(find(s, "c.safetensors"), cview);   /* another directory: kept */
    assert_ptr_equal(find(s, "m/a.safetensors"), aview); /* its file unchanged: kept */
    ztd_entry *ix = find(s, "m/model.safetensors.index.json");
    assert_ptr_not_equal(ix, ix0);
    assert_non_null(strstr(ix->st_index->json, "\"z\": \"z.safetensors\""));
    assert_int_equal(s->nvirtual, 5);
    ztd_snapshot_release(s);
    unlink(join(root, "m/b.zt"));
    unlink(join(root, "m/z.zt"));
    assert_int_equal(ztd_catalog_update(c, "m/b.zt", NULL), 0);
    assert_int_equal(ztd_catalog_update(c, "m/z.zt", NULL), 0);
    s = ztd_catalog_acquire(c);
    names_of(s, names, sizeof(names));
    /* one file left in m/: no index */
    assert_string_equal(names, "c.safetensors c.zt m/a.safetensors m/a.zt ");
    ztd_snapshot_release(s);
    ztd_snapshot_release(s0); /* the old snapshot's entries lived on until now */
    ztd_catalog_free(c);
    rm_tree(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(views_and_index),
        cmocka_unit_test(update_remakes_one_directory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
