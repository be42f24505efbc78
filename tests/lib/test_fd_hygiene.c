/*
 * Opening a file touches no fd it did not open: over every file of the v2
 * corpus (accepted and rejected; with the fast manifest path and without),
 * zt_open then zt_close leave the process's fds as they were, and fd 0, made
 * a pipe of the test's own, still names that pipe. A server opens files on
 * several threads: a close() of an fd number the library never opened closes
 * whatever another thread holds under that number, whose later reads then go
 * to the next file given the number.
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"

#define MAX_FDS 1024

/* The open fds, as a bit set (fcntl F_GETFD on each number). */
static void open_fds(unsigned char set[MAX_FDS])
{
    for (int fd = 0; fd < MAX_FDS; fd++)
        set[fd] = fcntl(fd, F_GETFD) != -1;
}

/* fd 0 is the pipe whose read end had inode ino. */
static bool fd0_is(ino_t ino)
{
    struct stat sb;
    return fstat(0, &sb) == 0 && S_ISFIFO(sb.st_mode) && sb.st_ino == ino;
}

/* Every .zt file of dir opened and closed; how many were (refused ones
 * included). The first file that changed the fds is named in bad. */
static size_t open_all(const char *dir, ino_t ino, char *bad, size_t bad_len)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    unsigned char before[MAX_FDS], after[MAX_FDS];
    for (struct dirent *de; !bad[0] && (de = readdir(d));) {
        size_t len = strlen(de->d_name);
        if (len < 4 || strcmp(de->d_name + len - 3, ".zt"))
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        open_fds(before);
        zt_file *f = NULL;
        zt_error err;
        if (zt_open(path, NULL, &f, &err) == ZT_OK)
            zt_close(f);
        open_fds(after);
        int fd = 0;
        while (fd < MAX_FDS && before[fd] == after[fd])
            fd++;
        if (!fd0_is(ino))
            snprintf(bad, bad_len, "%s: fd 0 (the test's pipe) was closed or replaced", path);
        else if (fd < MAX_FDS)
            snprintf(bad, bad_len, "%s: fd %d was %s", path, fd,
                     before[fd] ? "closed" : "left open");
        n++;
    }
    closedir(d);
    return n;
}

static void corpus(bool fast)
{
    const char *dir = getenv("ZT_CORPUS_V2_DIR");
    if (!dir)
        skip();
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(dup2(p[0], 0), 0);
    struct stat sb;
    assert_int_equal(fstat(p[0], &sb), 0);
    zt__fast_path_disabled = !fast;
    char sub[4096], bad[4200] = "";
    snprintf(sub, sizeof(sub), "%s/reject", dir);
    size_t n = open_all(sub, sb.st_ino, bad, sizeof(bad));
    snprintf(sub, sizeof(sub), "%s/accept", dir);
    n += open_all(sub, sb.st_ino, bad, sizeof(bad));
    zt__fast_path_disabled = 0;
    if (bad[0])
        fail_msg("%s", bad);
    assert_true(n > 100);
    close(p[0]);
    close(p[1]);
}

static void fast_path(void **state)
{
    (void)state;
    corpus(true);
}

static void general_path(void **state)
{
    (void)state;
    corpus(false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fast_path),
        cmocka_unit_test(general_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
