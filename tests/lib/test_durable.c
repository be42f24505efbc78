/*
 * test_durable.c: lib/src/durable.c, the atomic publication and write-back
 * helpers that the writer and ztensord's uploads share: rename onto a new name,
 * over an old file (reported as replaced), refused over one with
 * ZT_PUBLISH_NOREPLACE (EEXIST, the old file kept), failures with errno; and
 * write-back bookkeeping, including after a truncation.
 */
#include "zt_test.h"

static void put_file(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void expect_text(const char *dir, const char *name, const char *text)
{
    char p[512], got[64] = "";
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    assert_non_null(fgets(got, sizeof(got), f));
    fclose(f);
    assert_string_equal(got, text);
}

static void publish_rename(void **state)
{
    (void)state;
    char *d = zt_test_mkdtemp("durable");
    int dfd = open(d, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    zt_error err;
    int replaced = -1;
    put_file(d, ".tmp1", "one");
    assert_int_equal(zt_publish_rename(dfd, ".tmp1", dfd, "a.zt", 0, &replaced, &err), ZT_OK);
    assert_int_equal(replaced, 0);
    expect_text(d, "a.zt", "one");
    assert_int_equal(faccessat(dfd, ".tmp1", F_OK, 0), -1);
    /* over an old file: replaced */
    put_file(d, ".tmp2", "two");
    assert_int_equal(zt_publish_rename(dfd, ".tmp2", dfd, "a.zt", 0, &replaced, &err), ZT_OK);
    assert_int_equal(replaced, 1);
    expect_text(d, "a.zt", "two");
    /* create-only: refused, both files kept */
    put_file(d, ".tmp3", "three");
    errno = 0;
    assert_int_equal(
        zt_publish_rename(dfd, ".tmp3", dfd, "a.zt", ZT_PUBLISH_NOREPLACE, &replaced, &err),
        ZT_E_IO);
    assert_int_equal(errno, EEXIST);
    assert_int_equal(replaced, 0);
    expect_text(d, "a.zt", "two");
    expect_text(d, ".tmp3", "three");
    assert_int_equal(zt_publish_rename(dfd, ".tmp3", dfd, "b.zt", ZT_PUBLISH_NOREPLACE, NULL, &err),
                     ZT_OK);
    expect_text(d, "b.zt", "three");
    /* no source: ENOENT, named in the message */
    assert_int_equal(zt_publish_rename(dfd, ".none", dfd, "c.zt", 0, NULL, &err), ZT_E_IO);
    assert_int_equal(errno, ENOENT);
    assert_non_null(strstr(err.message, "c.zt"));
    /* whole paths with AT_FDCWD, no fsync of the directory */
    char src[512], dst[512];
    snprintf(src, sizeof(src), "%s/.tmp4", d);
    snprintf(dst, sizeof(dst), "%s/d.zt", d);
    put_file(d, ".tmp4", "four");
    assert_int_equal(
        zt_publish_rename(AT_FDCWD, src, AT_FDCWD, dst, ZT_PUBLISH_NOSYNC, &replaced, &err), ZT_OK);
    expect_text(d, "d.zt", "four");
    close(dfd);
    assert_int_equal(zt_test_count_entries(d), 3); /* a.zt, b.zt, d.zt */
    zt_test_rmtree(d);
    free(d);
}

static void writeback(void **state)
{
    (void)state;
    char *d = zt_test_mkdtemp("durable");
    char p[512];
    snprintf(p, sizeof(p), "%s/wb", d);
    int fd = open(p, O_RDWR | O_CREAT, 0644);
    assert_true(fd >= 0);
    zt_writeback wb;
    zt_writeback_init(&wb, fd);
    assert_int_equal(wb.started, 0);
    zt_writeback_note(&wb, ZT_WRITEBACK_EVERY - 1);
    assert_int_equal(wb.started, 0); /* not a whole step yet */
    zt_writeback_note(&wb, ZT_WRITEBACK_EVERY + 10);
#ifdef SYNC_FILE_RANGE_WRITE
    assert_int_equal(wb.started, ZT_WRITEBACK_EVERY + 10);
#endif
    zt_writeback_note(&wb, 100); /* truncated back */
    assert_int_equal(wb.started, 100);
    close(fd);
    zt_test_rmtree(d);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(publish_rename),
        cmocka_unit_test(writeback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
