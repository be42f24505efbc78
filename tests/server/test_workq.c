/*
 * test_workq.c: the work queue (server/core/workq.c): every job runs once,
 * jobs run beside each other on several threads, drain waits for all of them,
 * and freeing the queue runs what is still queued.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <time.h>

#include "core/workq.h"

typedef struct counted {
    ztd_job job;
    int *runs;    /* atomic */
    int *running; /* atomic: jobs inside run() now */
    int *most;    /* atomic: the most seen at once */
    unsigned sleep_ms;
} counted;

static void run_counted(ztd_job *j)
{
    counted *c = (counted *)j;
    int now = __atomic_add_fetch(c->running, 1, __ATOMIC_ACQ_REL);
    int most = __atomic_load_n(c->most, __ATOMIC_ACQUIRE);
    while (now > most && !__atomic_compare_exchange_n(c->most, &most, now, false, __ATOMIC_ACQ_REL,
                                                      __ATOMIC_ACQUIRE))
        ;
    struct timespec ts = {0, (long)c->sleep_ms * 1000000};
    nanosleep(&ts, NULL);
    __atomic_sub_fetch(c->running, 1, __ATOMIC_ACQ_REL);
    __atomic_add_fetch(c->runs, 1, __ATOMIC_ACQ_REL);
}

static void every_job_runs_once(void **state)
{
    (void)state;
    int runs = 0, running = 0, most = 0;
    counted jobs[200];
    ztd_workq *q = ztd_workq_new(3, "test");
    assert_non_null(q);
    for (int i = 0; i < 200; i++) {
        jobs[i] = (counted){{run_counted, NULL}, &runs, &running, &most, 0};
        ztd_workq_submit(q, &jobs[i].job);
    }
    ztd_workq_drain(q);
    assert_int_equal(__atomic_load_n(&runs, __ATOMIC_ACQUIRE), 200);
    /* drained and empty: draining again returns at once */
    ztd_workq_drain(q);
    ztd_workq_free(q);
    assert_int_equal(runs, 200);
}

/* Slow jobs overlap: a long one does not hold up the next one. */
static void jobs_run_side_by_side(void **state)
{
    (void)state;
    int runs = 0, running = 0, most = 0;
    counted jobs[4];
    ztd_workq *q = ztd_workq_new(2, "test");
    assert_non_null(q);
    for (int i = 0; i < 4; i++) {
        jobs[i] = (counted){{run_counted, NULL}, &runs, &running, &most, 100};
        ztd_workq_submit(q, &jobs[i].job);
    }
    ztd_workq_drain(q);
    assert_int_equal(runs, 4);
    assert_int_equal(most, 2);
    ztd_workq_free(q);
}

/* Freeing the queue runs what was queued before stopping. */
static void free_runs_what_is_queued(void **state)
{
    (void)state;
    int runs = 0, running = 0, most = 0;
    counted jobs[10];
    ztd_workq *q = ztd_workq_new(1, "test");
    assert_non_null(q);
    for (int i = 0; i < 10; i++) {
        jobs[i] = (counted){{run_counted, NULL}, &runs, &running, &most, 5};
        ztd_workq_submit(q, &jobs[i].job);
    }
    ztd_workq_free(q);
    assert_int_equal(runs, 10);
    assert_int_equal(most, 1);
    ztd_workq_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_job_runs_once),
        cmocka_unit_test(jobs_run_side_by_side),
        cmocka_unit_test(free_runs_what_is_queued),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
