/*
 * Making a pull's batches durable beside the transfers. After each batch the
 * pull must make its bytes durable (msync of the mapping, fdatasync) before
 * the state file may name them, and an fdatasync waits for the disk: done on
 * the pulling thread, every connection of the pull stood idle meanwhile
 * (about 35 ms per 64 MiB batch here, a tenth of a pull's time). So the
 * pulling thread hands the batch to this one thread and goes on with the
 * next batch; the syncer writes back the range, fdatasyncs, appends the
 * batch's records to the state file and fdatasyncs that. One batch at a
 * time, in order: handing the next one waits for the previous one, so the
 * records are appended in the order of the batches and always after their
 * data. Without a thread, the work is done on the caller's thread.
 */
#include "remote_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct job {
    uint64_t lo, hi;
    char *text; /* the records, owned */
    size_t len;
} job;

struct ztr_syncer {
    int fd, sfd;
    uint8_t *map;
    pthread_t thread;
    bool started, stop, has_job;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job j;
    int result; /* of the last job: 0, errno of the data file, or -errno of the state file */
};

/* Durable data first, then the records that name it. */
static int sync_job(ztr_syncer *s, const job *j)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), a = j->lo / page * page;
    if (j->hi > a && msync(s->map + a, (size_t)(j->hi - a), MS_SYNC) != 0)
        return errno;
    if (fdatasync(s->fd) != 0)
        return errno;
    ssize_t w = write(s->sfd, j->text, j->len);
    if (w != (ssize_t)j->len)
        return w < 0 ? -errno : -ENOSPC;
    if (fdatasync(s->sfd) != 0)
        return -errno;
    /* The pages are on disk: let any still mapped go. */
    if (j->hi > a)
        madvise(s->map + a, (size_t)(j->hi - a), MADV_DONTNEED);
    return 0;
}

static void *run(void *arg)
{
    ztr_syncer *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->has_job && !s->stop)
            pthread_cond_wait(&s->cv, &s->mu);
        if (!s->has_job)
            break;
        job j = s->j;
        pthread_mutex_unlock(&s->mu);
        int r = sync_job(s, &j);
        free(j.text);
        pthread_mutex_lock(&s->mu);
        s->result = r;
        s->has_job = false;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

ztr_syncer *ztr__syncer_new(int fd, int sfd, uint8_t *map)
{
    ztr_syncer *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->fd = fd;
    s->sfd = sfd;
    s->map = map;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->started = pthread_create(&s->thread, NULL, run, s) == 0;
    return s;
}

int ztr__syncer_wait(ztr_syncer *s)
{
    pthread_mutex_lock(&s->mu);
    while (s->has_job)
        pthread_cond_wait(&s->cv, &s->mu);
    int r = s->result;
    s->result = 0;
    pthread_mutex_unlock(&s->mu);
    return r;
}

int ztr__syncer_push(ztr_syncer *s, uint64_t lo, uint64_t hi, char *text, size_t len)
{
    job j = {lo, hi, text, len};
    if (!s->started) {
        int r = sync_job(s, &j);
        free(text);
        return r;
    }
    int r = ztr__syncer_wait(s);
    if (r) {
        free(text);
        return r;
    }
    pthread_mutex_lock(&s->mu);
    s->j = j;
    s->has_job = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

bool ztr__syncer_busy(ztr_syncer *s)
{
    pthread_mutex_lock(&s->mu);
    bool busy = s->has_job;
    pthread_mutex_unlock(&s->mu);
    return busy;
}

void ztr__syncer_free(ztr_syncer *s)
{
    if (!s)
        return;
    if (s->started) {
        pthread_mutex_lock(&s->mu);
        s->stop = true; /* after the job in hand: its records are worth keeping */
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
