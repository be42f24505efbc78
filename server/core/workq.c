/* The work queue (see workq.h): a FIFO under one mutex, and its threads. */
#include "core/workq.h"
#include "core/log.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 16

struct ztd_workq {
    pthread_mutex_t mu;
    pthread_cond_t work; /* a job was queued, or stop */
    pthread_cond_t idle; /* a job ended */
    ztd_job *head, *tail;
    unsigned pending; /* queued or running */
    bool stop;
    unsigned n;
    pthread_t threads[MAX_THREADS];
};

static void *worker(void *arg)
{
    ztd_workq *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->head && !q->stop)
            pthread_cond_wait(&q->work, &q->mu);
        if (!q->head)
            break; /* stopping, and nothing left */
        ztd_job *j = q->head;
        if (!(q->head = j->next))
            q->tail = NULL;
        pthread_mutex_unlock(&q->mu);
        j->run(j);
        pthread_mutex_lock(&q->mu);
        if (--q->pending == 0)
            pthread_cond_broadcast(&q->idle);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

ztd_workq *ztd_workq_new(unsigned threads, const char *name)
{
    ztd_workq *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->idle, NULL);
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    for (; q->n < threads; q->n++) {
        if (pthread_create(&q->threads[q->n], NULL, worker, q) != 0)
            break;
        char tn[16];
        snprintf(tn, sizeof(tn), "%.12s-%u", name, q->n);
        pthread_setname_np(q->threads[q->n], tn);
    }
    if (q->n == 0) {
        ztd_log(ZTD_LOG_ERROR, "%s: cannot start a thread", name);
        ztd_workq_free(q);
        return NULL;
    }
    return q;
}

void ztd_workq_submit(ztd_workq *q, ztd_job *job)
{
    job->next = NULL;
    pthread_mutex_lock(&q->mu);
    if (q->tail)
        q->tail->next = job;
    else
        q->head = job;
    q->tail = job;
    q->pending++;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->mu);
}

void ztd_workq_drain(ztd_workq *q)
{
    pthread_mutex_lock(&q->mu);
    while (q->pending)
        pthread_cond_wait(&q->idle, &q->mu);
    pthread_mutex_unlock(&q->mu);
}

void ztd_workq_free(ztd_workq *q)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    q->stop = true;
    pthread_cond_broadcast(&q->work);
    pthread_mutex_unlock(&q->mu);
    for (unsigned i = 0; i < q->n; i++)
        pthread_join(q->threads[i], NULL);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->idle);
    free(q);
}
