/* ztd_parallel_for (see parallel.h): a shared index taken one at a time. */
#include "core/parallel.h"

#include <pthread.h>

#define PARALLEL_MAX 64

typedef struct pfor {
    size_t n, next; /* next: atomic, the next i to take */
    void (*fn)(void *ud, size_t i);
    void *ud;
} pfor;

static void *work(void *arg)
{
    pfor *p = arg;
    for (size_t i; (i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->n;)
        p->fn(p->ud, i);
    return NULL;
}

void ztd_parallel_for(size_t n, unsigned threads, void (*fn)(void *ud, size_t i), void *ud)
{
    pfor p = {.n = n, .fn = fn, .ud = ud};
    pthread_t th[PARALLEL_MAX];
    unsigned want = threads > PARALLEL_MAX ? PARALLEL_MAX : threads, started = 0;
    if (want > n)
        want = (unsigned)n;
    while (started + 1 < want && pthread_create(&th[started], NULL, work, &p) == 0)
        started++;
    work(&p);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}
