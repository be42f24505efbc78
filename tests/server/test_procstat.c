/*
 * test_procstat.c: unit tests for server/core/procstat.c, the process_* metrics'
 * source: /proc/self/stat and /proc/stat lines parsed (a command name with
 * spaces and parentheses, malformed lines refused), and this process's own
 * figures read live and sane.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/procstat.h"

/* A stat line as proc(5) lays it out: utime 250, stime 50, starttime 12345,
 * vsize 170078208, rss 2303 pages. The command name is hostile on purpose. */
#define STAT_LINE                                                                                  \
    "4242 (zt d) (x) 1) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 9 0 12345 "          \
    "170078208 2303 18446744073709551615 1 1 0 0 0 0 0 4096 17926 0 0 0 17 1 0 0 0 0 0\n"

static void parses_stat_line(void **state)
{
    (void)state;
    ztd_procstat p = {0};
    assert_int_equal(ztd_procstat_parse_stat(STAT_LINE, 100, 4096, 1700000000, &p), 0);
    assert_true(p.cpu_seconds > 2.999 && p.cpu_seconds < 3.001);
    assert_true(p.start_time > 1700000123.449 && p.start_time < 1700000123.451);
    assert_int_equal(p.vsize_bytes, 170078208);
    assert_int_equal(p.rss_bytes, 2303u * 4096u);
}

static void refuses_malformed_stat(void **state)
{
    (void)state;
    ztd_procstat p;
    assert_int_equal(ztd_procstat_parse_stat("", 100, 4096, 0, &p), -1);
    assert_int_equal(ztd_procstat_parse_stat("4242 no parenthesis S 1 2 3", 100, 4096, 0, &p), -1);
    /* cut short before rss */
    assert_int_equal(ztd_procstat_parse_stat("1 (a) S 1 1 1 0 -1 0 0 0 0 0 250 50 0 0 20 0 9 0 "
                                             "12345 170078208",
                                             100, 4096, 0, &p),
                     -1);
    /* a field that is not a number */
    assert_int_equal(ztd_procstat_parse_stat("1 (a) S 1 1 1 0 -1 0 0 0 0 0 2x0 50 0 0 20 0 9 0 "
                                             "12345 170078208 2303 0\n",
                                             100, 4096, 0, &p),
                     -1);
    assert_int_equal(ztd_procstat_parse_stat(STAT_LINE, 0, 4096, 0, &p), -1);
}

static void parses_btime(void **state)
{
    (void)state;
    uint64_t bt = 0;
    assert_int_equal(ztd_procstat_parse_btime("cpu  1 2 3\ncpu0 1 2 3\nintr 5\nctxt 9\n"
                                              "btime 1763900000\nprocesses 77\n",
                                              &bt),
                     0);
    assert_int_equal(bt, 1763900000);
    assert_int_equal(ztd_procstat_parse_btime("cpu 1\nxbtime 5\nprocesses 2\n", &bt), -1);
    assert_int_equal(ztd_procstat_parse_btime("btime 17x\n", &bt), -1);
    assert_int_equal(ztd_procstat_parse_btime("", &bt), -1);
}

static void reads_this_process(void **state)
{
    (void)state;
    ztd_procstat p;
    assert_int_equal(ztd_procstat_read(&p), 0);
    assert_true(p.rss_bytes > 0);
    assert_true(p.vsize_bytes >= p.rss_bytes);
    assert_true(p.open_fds >= 3); /* stdin, stdout, stderr at least */
    assert_true(p.max_fds >= p.open_fds);
    double now = (double)time(NULL);
    assert_true(p.start_time > now - 600 && p.start_time < now + 2);
    assert_true(p.cpu_seconds >= 0);

    /* one more descriptor shows */
    int fd = dup(0);
    assert_true(fd >= 0);
    ztd_procstat q;
    assert_int_equal(ztd_procstat_read(&q), 0);
    assert_int_equal(q.open_fds, p.open_fds + 1);
    close(fd);
    /* the start time does not move between readings */
    assert_true(q.start_time == p.start_time);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_stat_line),
        cmocka_unit_test(refuses_malformed_stat),
        cmocka_unit_test(parses_btime),
        cmocka_unit_test(reads_this_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
