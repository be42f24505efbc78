/*
 * test_publish.c: publication (server/store/publish.c) on a real root with
 * its staging directory: write preconditions and the name check against the
 * file on disk, the check of a staged file, the rename (create-only with
 * If-None-Match: *) with its catalog entry, and DELETE's unlink.
 */
#include "tmpfiles.h"

#include <fcntl.h>

#include "store/publish.h"

typedef struct fixture {
    char root[512];
    ztd_staging *st;
    ztd_catalog *cat;
    ztd_publisher *p;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    char err[256];
    snprintf(f->root, sizeof(f->root), "%s", tmp_dir("publish"));
    assert_int_equal(ztd_staging_open(f->root, 3600000, &f->st, err, sizeof(err)), ZTD_STAGING_OK);
    f->cat = ztd_catalog_new(f->root, 1 << 20);
    assert_int_equal(ztd_catalog_rescan(f->cat), 0);
    f->p = ztd_publisher_new(f->root, f->st, f->cat);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ztd_publisher_free(f->p);
    ztd_catalog_free(f->cat);
    ztd_staging_free(f->st);
    rm_tree(f->root);
    free(f);
    return 0;
}

/* A staging file holding a valid .zt (a copy of one written beside). */
static ztd_staged stage(fixture *f, char name[ZTD_STAGING_NAME_MAX], size_t n)
{
    char *tmp = join(f->root, "src.tmp");
    write_zt(tmp, n, 9);
    int fd = ztd_staging_create(f->st, "test", name);
    assert_true(fd >= 0);
    FILE *in = fopen(tmp, "rb");
    char buf[4096];
    size_t k, total = 0;
    while ((k = fread(buf, 1, sizeof(buf), in)) > 0)
        total += (size_t)write(fd, buf, k);
    fclose(in);
    unlink(tmp);
    return (ztd_staged){fd, name, total, NULL, NULL};
}

static const char *etag_of(fixture *f, const char *rel)
{
    static char etag[40];
    struct stat sb;
    assert_int_equal(lstat(join(f->root, rel), &sb), 0);
    ztd_stat_etag(&sb, etag);
    return etag;
}

static void preconditions(void **state)
{
    fixture *f = *state;
    char msg[512], im[64];
    write_zt(join(f->root, "a.zt"), 10, 1);
    ztd_preconds none = {NULL, NULL}, star = {NULL, "*"}, match = {im, NULL}, any = {"*", NULL};
    snprintf(im, sizeof(im), "%s", etag_of(f, "a.zt"));
    assert_int_equal(ztd_publish_preconditions(f->p, "a.zt", &none, msg, sizeof(msg)), 0);
    assert_int_equal(ztd_publish_preconditions(f->p, "a.zt", &match, msg, sizeof(msg)), 0);
    assert_int_equal(ztd_publish_preconditions(f->p, "a.zt", &any, msg, sizeof(msg)), 0);
    assert_int_equal(ztd_publish_preconditions(f->p, "a.zt", &star, msg, sizeof(msg)),
                     ZTD_ERR_PRECONDITION_FAILED);
    assert_string_equal(msg, "If-None-Match: \"a.zt\" exists");
    assert_int_equal(ztd_publish_preconditions(f->p, "b.zt", &star, msg, sizeof(msg)), 0);
    assert_int_equal(ztd_publish_preconditions(f->p, "b.zt", &any, msg, sizeof(msg)),
                     ZTD_ERR_PRECONDITION_FAILED);
    assert_string_equal(msg, "If-Match does not hold: \"b.zt\" does not exist");
    write_zt(join(f->root, "a.zt"), 11, 1); /* a new version: the old tag no longer holds */
    assert_int_equal(ztd_publish_preconditions(f->p, "a.zt", &match, msg, sizeof(msg)),
                     ZTD_ERR_PRECONDITION_FAILED);
    assert_string_equal(msg, "If-Match does not hold: \"a.zt\" has changed");
    /* names in the way */
    mkdir(join(f->root, "dir.zt"), 0755);
    write_text(join(f->root, "file"), "x");
    assert_int_equal(ztd_publish_name_free(f->p, "a.zt", msg, sizeof(msg)), 0);
    assert_int_equal(ztd_publish_name_free(f->p, "new/deep/x.zt", msg, sizeof(msg)), 0);
    assert_int_equal(ztd_publish_name_free(f->p, "dir.zt", msg, sizeof(msg)),
                     ZTD_ERR_NAME_CONFLICT);
    assert_int_equal(ztd_publish_name_free(f->p, "file/x.zt", msg, sizeof(msg)),
                     ZTD_ERR_NAME_CONFLICT);
}

static void check_and_commit(void **state)
{
    fixture *f = *state;
    char msg[512], name[ZTD_STAGING_NAME_MAX];
    size_t nobj;
    ztd_published out;
    ztd_preconds none = {NULL, NULL}, star = {NULL, "*"};
    ztd_staged s = stage(f, name, 1000);
    assert_int_equal(ztd_publish_check(f->p, &s, "m/x.zt", true, true, &nobj, msg, sizeof(msg)), 0);
    assert_int_equal(nobj, 1);
    assert_int_equal(ztd_publish_commit(f->p, &s, "m/x.zt", &none, true, &out, msg, sizeof(msg)),
                     0);
    close(s.fd);
    assert_false(out.replaced);
    assert_string_equal(out.etag, etag_of(f, "m/x.zt"));
    ztd_snapshot *snap = ztd_catalog_acquire(f->cat);
    ztd_entry *e = ztd_snapshot_find(snap, "m/x.zt", 6);
    assert_non_null(e);
    assert_int_equal(e->digests.count[ZTD_DIGEST_VERIFIED], 1);
    ztd_snapshot_release(snap);
    /* create-only over an existing file: 412, the staging file removed */
    s = stage(f, name, 500);
    assert_int_equal(ztd_publish_commit(f->p, &s, "m/x.zt", &star, false, &out, msg, sizeof(msg)),
                     ZTD_ERR_PRECONDITION_FAILED);
    assert_false(ztd_staging_intact(f->st, name, s.fd, ZTD_STAGING_ANY_SIZE));
    close(s.fd);
    /* replacing */
    s = stage(f, name, 700);
    assert_int_equal(ztd_publish_commit(f->p, &s, "m/x.zt", &none, false, &out, msg, sizeof(msg)),
                     0);
    close(s.fd);
    assert_true(out.replaced);
    /* a staged file that is not a .zt: 422, removed */
    int fd = ztd_staging_create(f->st, "test", name);
    assert_int_equal(write(fd, "garbage", 7), 7);
    s = (ztd_staged){fd, name, 7, NULL, NULL};
    assert_int_equal(ztd_publish_check(f->p, &s, "g.zt", true, true, &nobj, msg, sizeof(msg)),
                     ZTD_ERR_INVALID_FILE);
    assert_false(ztd_staging_intact(f->st, name, fd, ZTD_STAGING_ANY_SIZE));
    close(fd);
    /* a staged file something else cut short: 500 staging_lost, whatever it holds */
    s = stage(f, name, 600);
    s.size += 1;
    assert_int_equal(ztd_publish_check(f->p, &s, "h.zt", false, false, &nobj, msg, sizeof(msg)),
                     ZTD_ERR_STAGING_LOST);
    close(s.fd);
}

static void remove_file(void **state)
{
    fixture *f = *state;
    char msg[512], im[64];
    ztd_preconds none = {NULL, NULL}, match = {im, NULL};
    write_zt(join(f->root, "r.zt"), 10, 1);
    assert_int_equal(ztd_catalog_rescan(f->cat), 0);
    snprintf(im, sizeof(im), "\"nope\"");
    assert_int_equal(ztd_publish_remove(f->p, "r.zt", &match, msg, sizeof(msg)),
                     ZTD_ERR_PRECONDITION_FAILED);
    assert_int_equal(ztd_publish_remove(f->p, "r.zt", &none, msg, sizeof(msg)), 0);
    assert_int_equal(access(join(f->root, "r.zt"), F_OK), -1);
    ztd_snapshot *snap = ztd_catalog_acquire(f->cat);
    assert_null(ztd_snapshot_find(snap, "r.zt", 4));
    ztd_snapshot_release(snap);
    assert_int_equal(ztd_publish_remove(f->p, "r.zt", &none, msg, sizeof(msg)),
                     ZTD_ERR_FILE_NOT_FOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(preconditions, setup, teardown),
        cmocka_unit_test_setup_teardown(check_and_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(remove_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
