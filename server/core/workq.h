/*
 * A small work queue: a few threads that run jobs in the order they were
 * submitted. Blocking work (verifying and fsyncing an upload, publishing,
 * unlinking) runs here instead of on libmicrohttpd's threads, which would
 * otherwise leave every other connection of theirs waiting (http/offload.h
 * suspends the request meanwhile). Like libuv's uv_queue_work, without the
 * loop: a job says itself what happens when it is done.
 */
#ifndef ZTD_WORKQ_H
#define ZTD_WORKQ_H

typedef struct ztd_job {
    void (*run)(struct ztd_job *job); /* on a queue thread; may free the job */
    struct ztd_job *next;             /* the queue's */
} ztd_job;

typedef struct ztd_workq ztd_workq;

/* threads >= 1 started; NULL (logged) when none could be. */
ztd_workq *ztd_workq_new(unsigned threads, const char *name);
/* Queue job; it runs on one of the threads. */
void ztd_workq_submit(ztd_workq *q, ztd_job *job);
/* Wait until every job submitted so far has run. */
void ztd_workq_drain(ztd_workq *q);
/* Drain, then stop the threads. Accepts NULL. */
void ztd_workq_free(ztd_workq *q);

#endif
