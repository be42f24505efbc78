/*
 * Verifying a staged upload (see verify.h). Components are independent, so
 * they are checked on several threads at once, largest first; the calling
 * thread meanwhile fsyncs the staged file, which is mostly waiting on the
 * disk. One component's SHA-256 stays on one core: the speed of a file with
 * one huge component is the speed of SHA-256 on one core.
 */
#include "verify.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VERIFY_THREADS_MAX 8

typedef struct vitem {
    const zt_object *o;
    const zt_component *c;
} vitem;

typedef struct vjob {
    const zt_file *f;
    vitem *items;
    size_t n, next; /* next: atomic index of the next item to take */
    pthread_mutex_t mu;
    bool failed; /* the first failure wins; under mu */
    zt_error err;
} vjob;

/* Digest, then (zstd) a full decode with its length checks. */
static zt_status out_of_memory(zt_error *err)
{
    memset(err, 0, sizeof(*err));
    snprintf(err->message, sizeof(err->message), "out of memory verifying the upload");
    return err->code = ZT_E_NOMEM;
}

static zt_status check_one(const zt_file *f, const vitem *it, zt_error *err)
{
    int checked;
    zt_status st = zt_component_verify(f, it->o, it->c, &checked, err);
    if (st || zt_component_encoding(it->c) != ZT_ENC_ZSTD)
        return st;
    zt_decoder *d;
    if ((st = zt_decoder_new(f, it->c, &d, err)))
        return st;
    char *sink = malloc(1 << 16);
    if (!sink) {
        zt_decoder_free(d);
        return out_of_memory(err);
    }
    size_t n;
    do
        st = zt_decoder_read(d, sink, 1 << 16, &n, err);
    while (!st && n);
    free(sink);
    zt_decoder_free(d);
    return st;
}

static void *worker(void *arg)
{
    vjob *j = arg;
    for (;;) {
        size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n || __atomic_load_n(&j->failed, __ATOMIC_RELAXED))
            return NULL;
        zt_error e = {0};
        if (check_one(j->f, &j->items[i], &e) != ZT_OK) {
            pthread_mutex_lock(&j->mu);
            if (!j->failed) {
                j->err = e;
                __atomic_store_n(&j->failed, true, __ATOMIC_RELAXED);
            }
            pthread_mutex_unlock(&j->mu);
            return NULL;
        }
    }
}

static int by_length_desc(const void *a, const void *b)
{
    uint64_t la = zt_component_length(((const vitem *)a)->c);
    uint64_t lb = zt_component_length(((const vitem *)b)->c);
    return la < lb ? 1 : la > lb ? -1 : 0;
}

static size_t list_components(const zt_file *f, vitem **out)
{
    size_t n = 0;
    for (size_t i = 0; i < zt_file_object_count(f); i++)
        n += zt_object_component_count(zt_file_object_at(f, i));
    vitem *items = malloc((n ? n : 1) * sizeof(*items));
    if (!items)
        return (size_t)-1;
    size_t k = 0;
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        for (size_t c = 0; c < zt_object_component_count(o); c++)
            items[k++] = (vitem){o, zt_object_component_at(o, c)};
    }
    /* Largest first: the longest single hash starts at once. */
    qsort(items, n, sizeof(*items), by_length_desc);
    *out = items;
    return n;
}

static unsigned thread_count(size_t items)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t t = cores > 0 ? (size_t)cores : 1;
    if (t > VERIFY_THREADS_MAX)
        t = VERIFY_THREADS_MAX;
    return (unsigned)(t < items ? t : items);
}

zt_status ztd_verify_components(const zt_file *f, int sync_fd, int *sync_errno, zt_error *err)
{
    vjob j = {.f = f};
    *sync_errno = 0;
    j.n = list_components(f, &j.items);
    if (j.n == (size_t)-1)
        return out_of_memory(err);
    pthread_mutex_init(&j.mu, NULL);
    pthread_t th[VERIFY_THREADS_MAX];
    unsigned started = 0, want = thread_count(j.n);
    while (started < want && pthread_create(&th[started], NULL, worker, &j) == 0)
        started++;
    if (sync_fd >= 0 && fsync(sync_fd) != 0)
        *sync_errno = errno;
    if (!started)
        worker(&j); /* no thread could be had: verify here */
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&j.mu);
    free(j.items);
    if (j.failed) {
        *err = j.err;
        return err->code;
    }
    return ZT_OK;
}
