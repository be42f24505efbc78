/*
 * test_scan.c: how the catalog's scan (server/store/catalog.c) and the
 * inotify watch (server/core/watch.c) reach the files, which decides start-up
 * time on a cold disk: no lstat per file (the directory gives the type), and
 * files stat'ed and opened on several threads at once. lstat() and stat() are
 * interposed here (this executable's definitions win over libc's for the
 * static libraries linked in), counting and holding calls under the root;
 * nothing depends on how long a step takes. The served set is checked too,
 * and that files refused for their shard table leave the others' fds alone.
 */
#include "tmpfiles.h"

#include "core/watch.h"
#include "store/catalog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>

#define NFILES 24

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static char g_root[512];     /* calls under it are counted; "" = none */
static size_t g_lstats;      /* lstat() of a path under g_root */
static bool g_hold;          /* stat() under g_root waits for a second one in flight */
static int g_inside, g_most; /* stat() calls under g_root in flight, and the most at once */

static bool under_root(const char *path)
{
    size_t n = strlen(g_root);
    return n && !strncmp(path, g_root, n) && path[n] == '/';
}

int lstat(const char *restrict path, struct stat *restrict sb)
{
    if (under_root(path))
        __atomic_add_fetch(&g_lstats, 1, __ATOMIC_RELAXED);
    return fstatat(AT_FDCWD, path, sb, AT_SYMLINK_NOFOLLOW);
}

/* Held until a second call is in flight: with one thread that never comes,
 * and the first call gives up after 120 s (only then: a bound, not a time
 * the test measures) and stops holding the others. */
int stat(const char *restrict path, struct stat *restrict sb)
{
    if (under_root(path)) {
        pthread_mutex_lock(&g_mu);
        g_inside++;
        g_most = g_inside > g_most ? g_inside : g_most;
        pthread_cond_broadcast(&g_cv);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 120;
        while (g_hold && g_most < 2)
            if (pthread_cond_timedwait(&g_cv, &g_mu, &until) == ETIMEDOUT)
                g_hold = false;
        g_inside--;
        pthread_mutex_unlock(&g_mu);
    }
    return fstatat(AT_FDCWD, path, sb, 0);
}

/* Does the filesystem under dir give entry types (d_type)? */
static bool has_dtype(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    bool known = true;
    for (struct dirent *de; (de = readdir(d));)
        known = known && de->d_type != DT_UNKNOWN;
    closedir(d);
    return known;
}

static const char *make_root(void)
{
    const char *root = tmp_dir("scan");
    mkdir(join(root, "d"), 0755);
    char name[32];
    for (int i = 0; i < NFILES; i++) {
        snprintf(name, sizeof(name), "%sf%02d.zt", i % 2 ? "d/" : "", i);
        write_zt(join(root, name), 64, (unsigned char)i);
    }
    write_text(join(root, "bad.zt"), "not a zTensor file");
    write_text(join(root, "notes.txt"), "ignored");
    assert_int_equal(symlink("f00.zt", join(root, "link.zt")), 0);
    return root;
}

static void watch_from(const char *root)
{
    snprintf(g_root, sizeof(g_root), "%s", root);
    g_lstats = 0;
}

/* The scan and the watch set-up lstat no file when the directory gives its
 * type (each was one synchronous read per file on a cold disk, before any
 * file was opened); the scan still serves the files, a link inside the root,
 * and lists the invalid one. */
static void no_lstat_per_file(void **state)
{
    (void)state;
    const char *root = make_root();
    ztd_catalog *c = ztd_catalog_new(root, 1 << 20);
    assert_non_null(c);
    watch_from(root);
    ztd_watch *w = ztd_watch_new(root);
    assert_int_equal(ztd_catalog_rescan(c), 0);
    size_t lstats = g_lstats;
    g_root[0] = 0;
    if (has_dtype(root) && has_dtype(join(root, "d")))
        assert_int_equal(lstats, 0); /* was 2 per file and directory: 56 */
    ztd_catalog_stats st;
    ztd_catalog_get_stats(c, &st);
    assert_int_equal(st.files_valid, NFILES + 2); /* link.zt and notes.txt (plain) too */
    assert_int_equal(st.files_invalid, 1);
    ztd_snapshot *s = ztd_catalog_acquire(c);
    assert_non_null(ztd_snapshot_find(s, "d/f23.zt", 8));
    assert_non_null(ztd_snapshot_find(s, "link.zt", 7));
    ztd_snapshot_release(s);
    ztd_watch_free(w);
    ztd_catalog_free(c);
    rm_tree(root);
}

/* The scan has two files' stat() in flight at once: it reads on several
 * threads. One thread would leave the first call held alone (g_most 1). A
 * rescan after a file is removed and another changed keeps the rest. */
static void files_on_several_threads(void **state)
{
    (void)state;
    const char *root = make_root();
    ztd_catalog *c = ztd_catalog_new(root, 1 << 20);
    assert_non_null(c);
    watch_from(root);
    g_most = 0;
    g_hold = true;
    assert_int_equal(ztd_catalog_rescan(c), 0);
    assert_true(g_most >= 2);
    unlink(join(root, "d/f01.zt"));
    write_zt(join(root, "f02.zt"), 128, 7);
    g_most = 0;
    g_hold = true;
    assert_int_equal(ztd_catalog_rescan(c), 0);
    assert_true(g_most >= 2);
    g_hold = false;
    g_root[0] = 0;
    ztd_catalog_stats st;
    ztd_catalog_get_stats(c, &st);
    assert_int_equal(st.files_valid, NFILES - 1 + 2); /* link.zt and notes.txt (plain) too */
    ztd_snapshot *s = ztd_catalog_acquire(c);
    assert_null(ztd_snapshot_find(s, "d/f01.zt", 8));
    ztd_entry *e = ztd_snapshot_find(s, "f02.zt", 6);
    assert_non_null(e);
    assert_int_equal(zt_component_length(zt_object_component_at(zt_file_object_at(e->file, 0), 0)),
                     128);
    ztd_snapshot_release(s);
    ztd_catalog_free(c);
    rm_tree(root);
}

/* cp src dst */
static void copy_file(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof(buf), in)) > 0;)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

#define NGOOD 96
#define NREFUSED 48

/* v2 files refused for their shard table (bad shard names, a key that is not
 * text) among valid files, opened by the scan: every valid file's fd
 * still names that file, and fd 0, a pipe of the test's own, is still open.
 * libztensor once closed fd 0 for each such file (a shard's fd left at 0 by
 * the zeroed table): with files opened on several threads, the number was
 * then another file's, and what that file served came from the next file
 * given the number ("shorter on disk than when it was opened"). */
static void refused_shard_tables_close_no_fd(void **state)
{
    (void)state;
    const char *corpus = getenv("ZT_CORPUS_V2_DIR");
    if (!corpus)
        skip();
    static const char *refused[] = {"shard_key_not_text", "shard_name_dotdot",
                                    "shard_name_slash",   "shard_name_leading_dot",
                                    "shard_name_65",      "shard_name_empty"};
    const char *root = tmp_dir("scanfd");
    char name[64], src[1024];
    for (int i = 0; i < NGOOD + NREFUSED; i++) {
        snprintf(name, sizeof(name), "f%03d.zt", i);
        if (i % 3 == 1 && i / 3 < NREFUSED) {
            snprintf(src, sizeof(src), "%s/reject/%s.zt", corpus, refused[(i / 3) % 6]);
            copy_file(src, join(root, name));
        } else {
            write_zt(join(root, name), 64, (unsigned char)i);
        }
    }
    int p[2];
    struct stat pipe_sb, sb;
    assert_int_equal(pipe(p), 0);
    assert_int_equal(dup2(p[0], 0), 0);
    assert_int_equal(fstat(0, &pipe_sb), 0);
    ztd_catalog *c = ztd_catalog_new(root, 1 << 20);
    assert_non_null(c);
    assert_int_equal(ztd_catalog_rescan(c), 0);
    ztd_catalog_stats st;
    ztd_catalog_get_stats(c, &st);
    assert_int_equal(st.files_invalid, NREFUSED);
    assert_int_equal(st.files_valid, NGOOD);
    ztd_snapshot *s = ztd_catalog_acquire(c);
    for (int i = 0; i < NGOOD + NREFUSED; i++) {
        snprintf(name, sizeof(name), "f%03d.zt", i);
        ztd_entry *e = ztd_snapshot_find(s, name, strlen(name));
        assert_non_null(e);
        if (!e->file)
            continue;
        int fd = zt_file_fd(e->file);
        if (fstat(fd, &sb) != 0 || sb.st_ino != e->ino)
            fail_msg("%s: its fd %d names %s", name, fd,
                     fstat(fd, &sb) != 0 ? "nothing (closed)" : "another file");
    }
    ztd_snapshot_release(s);
    assert_int_equal(fstat(0, &sb), 0);
    assert_int_equal(sb.st_ino, pipe_sb.st_ino);
    ztd_catalog_free(c);
    rm_tree(root);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_lstat_per_file),
        cmocka_unit_test(files_on_several_threads),
        cmocka_unit_test(refused_shard_tables_close_no_fd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
