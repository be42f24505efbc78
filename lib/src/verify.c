/*
 * zt_file_verify: every component's digest recomputed and every zstd stream
 * decoded in full, on several threads at once. Components are independent,
 * so they are taken largest first from a shared index; one component's
 * SHA-256 stays on one core. A component with nothing to check (1.x, raw,
 * no digest) is counted but not listed: a file of 100,000 such objects
 * needs no sort and no thread. Problems are reported in manifest order after
 * the workers are done, so the output does not depend on thread timing.
 * Shared by `zt verify` and ztensord's upload path.
 */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VERIFY_THREADS_MAX 8
#define SINK_SIZE (1u << 16)

typedef struct vitem {
    uint64_t length; /* the sort key, read once */
    const zt_object *o;
    const zt_component *c;
    size_t order; /* position in the manifest */
} vitem;

typedef struct vproblem {
    size_t order;
    zt_error err;
} vproblem;

typedef struct vjob {
    const zt_file *f;
    vitem *items;
    size_t n, next; /* next: atomic index of the next item to take */
    size_t listed;  /* components in the file (order: 0 .. listed - 1) */
    bool stop_at_first;
    int (*known_sha256)(void *ud, uint64_t offset, uint64_t length, uint8_t out[32]);
    void *known_ud;
    pthread_mutex_t mu; /* guards the fields below */
    bool stop;          /* atomic read outside mu */
    vproblem *problems;
    size_t nproblems, cap;
    uint64_t digests;
    zt_status nomem; /* a problem that could not be recorded */
} vjob;

/* The digest, from the caller's known_sha256 when it has it, else recomputed. */
static zt_status check_digest(const vjob *j, const vitem *it, int *checked, zt_error *err)
{
    const zt_component *c = it->c;
    uint8_t got[32];
    if (!j->known_sha256 || zt_file_get_kind(j->f) == ZT_KIND_ZT_2 ||
        c->digest_kind != ZT_DIGEST_SHA256 ||
        !j->known_sha256(j->known_ud, c->offset, c->length, got))
        return zt_component_verify(j->f, it->o, c, checked, err);
    *checked = 1;
    if (memcmp(got, c->digest_bin, 32) == 0)
        return ZT_OK;
    char hex[80];
    zt_digest_format(c->digest_kind, got, hex);
    return zt__fail(err, ZT_E_DIGEST_MISMATCH, zt_object_name(it->o), c->role, 1, c->offset,
                    "stored bytes hash to %s, manifest says %s", hex, c->digest);
}

/* Digest, then (zstd) a full decode with its length checks. A v2 part is
 * decoded once: its digest covers the decoded bytes. */
static zt_status check_one(const vjob *j, const vitem *it, int *checked, zt_error *err)
{
    const zt_file *f = j->f;
    zt_status st = check_digest(j, it, checked, err);
    if (st || zt_component_encoding(it->c) != ZT_ENC_ZSTD || zt_file_get_kind(f) == ZT_KIND_ZT_2)
        return st;
    zt_decoder *d;
    if ((st = zt_decoder_new(f, it->c, &d, err)))
        return st;
    uint8_t *sink = zt__malloc(SINK_SIZE);
    if (!sink) {
        zt_decoder_free(d);
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory verifying \"%s\"", zt_object_name(it->o));
    }
    size_t n;
    do
        st = zt_decoder_read(d, sink, SINK_SIZE, &n, err);
    while (!st && n);
    zt__free(sink);
    zt_decoder_free(d);
    return st;
}

static void record(vjob *j, size_t order, const zt_error *e)
{
    pthread_mutex_lock(&j->mu);
    if (j->nproblems == j->cap) {
        size_t cap = j->cap ? j->cap * 2 : 8;
        vproblem *p = zt__realloc(j->problems, cap * sizeof(*p));
        if (!p) {
            j->nomem = ZT_E_NOMEM;
            __atomic_store_n(&j->stop, true, __ATOMIC_RELAXED);
            pthread_mutex_unlock(&j->mu);
            return;
        }
        j->problems = p;
        j->cap = cap;
    }
    j->problems[j->nproblems++] = (vproblem){order, *e};
    if (j->stop_at_first)
        __atomic_store_n(&j->stop, true, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&j->mu);
}

static void *worker(void *arg)
{
    vjob *j = arg;
    for (;;) {
        size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n || __atomic_load_n(&j->stop, __ATOMIC_RELAXED))
            return NULL;
        zt_error e;
        memset(&e, 0, sizeof(e));
        int checked = 0;
        if (check_one(j, &j->items[i], &checked, &e) != ZT_OK)
            record(j, j->items[i].order, &e);
        if (checked)
            __atomic_add_fetch(&j->digests, 1, __ATOMIC_RELAXED);
    }
}

static int by_length_desc(const void *a, const void *b)
{
    uint64_t la = ((const vitem *)a)->length, lb = ((const vitem *)b)->length;
    return la < lb ? 1 : la > lb ? -1 : 0;
}

/* Nothing to recompute or decode: a 1.x raw component without a digest
 * (its bounds were checked when the file was opened). A file opened from
 * its manifest alone keeps them, to report that it has no bytes. */
static bool nothing_to_check(const zt_file *f, const zt_component *c)
{
    return !f->no_data && zt_file_get_kind(f) != ZT_KIND_ZT_2 && c->digest_kind == ZT_DIGEST_NONE &&
           c->encoding == ZT_ENC_RAW;
}

static int by_order(const void *a, const void *b)
{
    size_t x = ((const vproblem *)a)->order, y = ((const vproblem *)b)->order;
    return x < y ? -1 : x > y;
}

static zt_status list_components(vjob *j, zt_error *err)
{
    const zt_file *f = j->f;
    size_t n = 0;
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        for (size_t c = 0; c < zt_object_component_count(o); c++)
            n += !nothing_to_check(f, zt_object_component_at(o, c));
    }
    if (!(j->items = zt__malloc((n ? n : 1) * sizeof(*j->items))))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory listing %zu components to verify", n);
    size_t k = 0, order = 0;
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        for (size_t c = 0; c < zt_object_component_count(o); c++) {
            const zt_component *comp = zt_object_component_at(o, c);
            /* A v2 part in a shard that is not there: the shard is the one
             * problem, reported by check_v2(). */
            int sh = zt_component_shard(comp);
            if (sh >= 0 && zt_file_shard_status(f, (size_t)sh, NULL) != ZT_OK)
                continue;
            if (!nothing_to_check(f, comp))
                j->items[k++] = (vitem){comp->length, o, comp, order};
            order++;
        }
    }
    j->n = k;
    j->listed = order;
    /* Largest first: the longest single hash starts at once. */
    if (k > 1)
        qsort(j->items, k, sizeof(*j->items), by_length_desc);
    return ZT_OK;
}

static unsigned thread_count(unsigned want, size_t items)
{
    if (!want) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        want = cores > 0 ? (unsigned)cores : 1;
    }
    if (want > VERIFY_THREADS_MAX)
        want = VERIFY_THREADS_MAX;
    return (unsigned)(want < items ? want : items);
}

/* Run the workers; the calling thread runs `meanwhile`, then joins them. */
static void run(vjob *j, const zt_verify_options *opt)
{
    pthread_t th[VERIFY_THREADS_MAX];
    unsigned started = 0, want = thread_count(opt ? opt->threads : 0, j->n);
    while (started < want && pthread_create(&th[started], NULL, worker, j) == 0)
        started++;
    if (opt && opt->meanwhile)
        opt->meanwhile(opt->ud);
    if (!started)
        worker(j); /* no thread could be had: verify here */
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

/* v2: the layouts' data rules per object, then each shard it could locate
 * (§7.3 steps 1-3), on the calling thread after the parts; reported after
 * them, in order. */
static void check_v2(vjob *j)
{
    const zt_file *f = j->f;
    size_t nobj = zt_file_object_count(f);
    if (zt_file_get_kind(f) != ZT_KIND_ZT_2)
        return;
    for (size_t i = 0; i < nobj && !__atomic_load_n(&j->stop, __ATOMIC_RELAXED); i++) {
        zt_error e;
        memset(&e, 0, sizeof(e));
        if (zt_object_check_data(f, zt_file_object_at(f, i), &e))
            record(j, j->listed + i, &e);
    }
    for (size_t i = 0; i < zt_file_shard_count(f) && !__atomic_load_n(&j->stop, __ATOMIC_RELAXED);
         i++) {
        zt_error e;
        memset(&e, 0, sizeof(e));
        /* A root opened from an fd or memory cannot locate its shards: they
         * are not checked (ztensord verifies an uploaded root this way). */
        if (zt_file_shard_path(f, i) && zt_file_shard_verify(f, i, &e))
            record(j, j->listed + nobj + i, &e);
    }
}

void zt_verify_options_init(zt_verify_options *o)
{
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
}

zt_status zt_file_verify(const zt_file *f, const zt_verify_options *opt, zt_verify_result *res,
                         zt_error *err)
{
    zt_verify_options eff;
    zt_verify_options_init(&eff);
    if (opt)
        memcpy(&eff, opt, ZT__OPTS_SIZE(opt, eff));
    vjob j = {.f = f,
              .stop_at_first = eff.stop_at_first != 0,
              .known_sha256 = eff.known_sha256,
              .known_ud = eff.known_ud};
    zt_status st = list_components(&j, err);
    if (st)
        return st;
    pthread_mutex_init(&j.mu, NULL);
    run(&j, &eff);
    check_v2(&j);
    pthread_mutex_destroy(&j.mu);
    zt__free(j.items);
    if (j.nproblems > 1)
        qsort(j.problems, j.nproblems, sizeof(*j.problems), by_order);
    for (size_t i = 0; eff.on_problem && i < j.nproblems; i++)
        eff.on_problem(eff.ud, &j.problems[i].err);
    if (res)
        *res = (zt_verify_result){
            .components = j.listed, .digests = j.digests, .problems = j.nproblems};
    st = j.nomem ? ZT_FAIL(err, ZT_E_NOMEM, "out of memory recording verification problems")
         : j.nproblems && err ? (*err = j.problems[0].err).code
         : j.nproblems        ? j.problems[0].err.code
                              : ZT_OK;
    zt__free(j.problems);
    return st;
}
