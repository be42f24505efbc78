/* Prefetch jobs (see prefetch.h). */
#include "upstream/prefetch.h"
#include "core/grow.h"
#include "core/log.h"
#include "core/workq.h"
#include "store/names.h"
#include "upstream/upstream.h"
#include "upstream/origin_listing.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEEP_JOBS 64       /* finished jobs kept for GET /v1/prefetch */
#define MAX_WAITS 86400    /* one-second waits for one component: a day, then give up */
#define MAX_FILES 1000000u /* files in one job */
#define RETRIES 3          /* tries of a file by a job not at start-up */

enum { J_QUEUED = 0, J_RUNNING, J_DONE, J_FAILED };
static const char *const k_states[] = {"queued", "running", "done", "failed"};

typedef struct job {
    ztd_job wq; /* first: the queue's */
    ztd_prefetch *p;
    uint64_t id;
    char **names;
    size_t n;
    bool startup;
    /* under p->mu */
    int state;
    uint64_t files_total, files_done, files_failed, bytes_total, bytes_done;
    char error[400]; /* the first failure */
    struct job *next;
} job;

struct ztd_prefetch {
    ztd_upstream *u;
    unsigned window;
    ztd_workq *q;
    pthread_mutex_t mu;
    job *head, *tail; /* oldest first */
    size_t njobs;
    uint64_t next_id;
    unsigned startup_left;
    char startup_error[400];  /* a start-up job failed: why */
    atomic_bool stopping;     /* read by running jobs without mu */
    ztd_prefetch_totals done; /* of jobs dropped from the list */
};

static void job_free(job *j)
{
    for (size_t i = 0; i < j->n; i++)
        free(j->names[i]);
    free(j->names);
    free(j);
}

ztd_prefetch *ztd_prefetch_new(ztd_upstream *u, unsigned fill_window)
{
    ztd_prefetch *p = calloc(1, sizeof(*p));
    if (!p || !(p->q = ztd_workq_new(1, "ztd-prefetch"))) { /* no job before it returns */
        free(p);
        return NULL;
    }
    p->u = u;
    p->window = fill_window ? fill_window : 1;
    p->next_id = 1;
    pthread_mutex_init(&p->mu, NULL);
    return p;
}

void ztd_prefetch_free(ztd_prefetch *p)
{
    if (!p)
        return;
    atomic_store(&p->stopping, true);
    ztd_workq_free(p->q); /* queued jobs run and stop at once */
    for (job *j = p->head, *next; j; j = next) {
        next = j->next;
        job_free(j);
    }
    pthread_mutex_destroy(&p->mu);
    free(p);
}

static bool stopping(ztd_prefetch *p)
{
    return atomic_load(&p->stopping);
}

/* Sleep up to ms, less when the prefetcher stops. */
static void pause_ms(ztd_prefetch *p, unsigned ms)
{
    for (unsigned t = 0; t < ms && !stopping(p); t += 100)
        nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
}

/* The next wait between tries: 1 s doubled up to 30 s. */
static unsigned backoff(unsigned wait)
{
    return wait < 16000 ? wait * 2 : 30000;
}

static void failed(job *j, const char *msg)
{
    ztd_log(ZTD_LOG_WARN, "prefetch %" PRIu64 ": %s", j->id, msg);
    pthread_mutex_lock(&j->p->mu);
    if (!j->error[0]) { /* cut to fit */
        size_t n = strnlen(msg, sizeof(j->error) - 1);
        memcpy(j->error, msg, n);
        j->error[n] = 0;
    }
    pthread_mutex_unlock(&j->p->mu);
}

static void add(job *j, uint64_t *field, uint64_t v)
{
    pthread_mutex_lock(&j->p->mu);
    *field += v;
    pthread_mutex_unlock(&j->p->mu);
}

/* ---- expanding names into files */

typedef struct strvec {
    char **v;
    size_t n, cap;
} strvec;

static int push(strvec *s, const char *name)
{
    if (s->n == MAX_FILES)
        return -1;
    if (ZTD_GROW_ITEMS(s->v, s->cap, s->n + 1, 16) != 0)
        return -1;
    if (!(s->v[s->n] = strdup(name)))
        return -1;
    s->n++;
    return 0;
}

static void strvec_free(strvec *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

/* Is this the name of a file (else a prefix)? */
static bool is_file_name(const char *name)
{
    const char *base = strrchr(name, '/');
    return ztd_catalog_is_served_name(base ? base + 1 : name);
}

/* The files of the upstream listing under prefix. */
static int expand_prefix(job *j, const char *prefix, strvec *out)
{
    char msg[600];
    ztd_upstream_tell_kind(j->p->u);
    struct ztd_uplist *l = ztd_upstream_file_listing(j->p->u);
    if (!l) {
        snprintf(msg, sizeof(msg),
                 "\"%s\" is a prefix, and upstream %s has no listing to expand it (a plain "
                 "upstream): name the files",
                 prefix, ztd_upstream_url(j->p->u));
        failed(j, msg);
        return -1;
    }
    json_t *files = NULL;
    if (ztd_uplist_get(l, &files, msg, sizeof(msg)) != ZTD_ERR_NONE) {
        failed(j, msg);
        return -1;
    }
    size_t n = strlen(prefix), i;
    json_t *f;
    int rc = 0;
    json_array_foreach(files, i, f)
    {
        const char *name = json_string_value(json_object_get(f, "name"));
        const char *status = json_string_value(json_object_get(f, "status"));
        const char *format = json_string_value(json_object_get(f, "format"));
        /* views and indexes are made from the files listed beside them: those are fetched */
        bool made =
            json_object_get(f, "view_of") || (format && !strcmp(format, "safetensors-index"));
        /* a name no client could ask for (a stranger's "../x.zt") is not fetched */
        if (name && !made && !strncmp(name, prefix, n) && (!status || !strcmp(status, "ok")) &&
            !ztd_file_path_problem(name, strlen(name)) && push(out, name) != 0)
            rc = -1;
    }
    json_decref(files);
    return rc;
}

/* A prefix whose listing cannot be had now: tried again like a file. */
static int expand_prefix_retried(job *j, const char *prefix, strvec *out)
{
    int rc = -1;
    for (unsigned attempt = 0, wait = 1000; !stopping(j->p); attempt++) {
        size_t before = out->n;
        if ((rc = expand_prefix(j, prefix, out)) == 0)
            break;
        while (out->n > before) /* a partial expansion */
            free(out->v[--out->n]);
        bool plain = ztd_upstream_kind_known(j->p->u) && !ztd_upstream_file_listing(j->p->u);
        if (plain || (!j->startup && attempt + 1 >= RETRIES))
            break;
        pause_ms(j->p, wait);
        wait = backoff(wait);
    }
    return rc;
}

/* ---- fetching one file */

typedef struct slot {
    ztd_cache_item *it;
    uint64_t len;
} slot;

/* Wait for a fill to end; false when it failed (recorded). */
static bool settle(job *j, ztd_entry *e, slot *s)
{
    ztd_cache_state st = ZTD_CACHE_FILLING;
    uint64_t ready;
    for (int i = 0; st == ZTD_CACHE_FILLING && i < MAX_WAITS && !stopping(j->p); i++)
        st = ztd_cache_wait(s->it, ztd_cache_item_size(s->it) + 1, 1000, &ready);
    ztd_cache_item_release(s->it);
    s->it = NULL;
    if (st == ZTD_CACHE_COMPLETE) {
        add(j, &j->bytes_done, s->len);
        return true;
    }
    char msg[600];
    if (!ztd_upstream_fill_error(e, msg, sizeof(msg)))
        snprintf(msg, sizeof(msg), "\"%s\": a component was not fetched%s", e->name,
                 st == ZTD_CACHE_FILLING ? " in time" : "");
    failed(j, msg);
    return false;
}

static bool fetch_components(job *j, ztd_entry *e, slot *win)
{
    size_t inflight = 0, head = 0;
    bool ok = true;
    char msg[600];
    for (size_t k = 0; ok && e->file && k < zt_file_object_count(e->file); k++) {
        const zt_object *o = zt_file_object_at(e->file, k);
        for (size_t c = 0; ok && c < zt_object_component_count(o); c++) {
            const zt_component *comp = zt_object_component_at(o, c);
            uint64_t len = zt_component_length(comp);
            ztd_cache_item *it;
            add(j, &j->bytes_total, len);
            if (len == 0)
                continue;
            if (ztd_upstream_item(j->p->u, e, comp, &it, msg, sizeof(msg)) != ZTD_ERR_NONE) {
                failed(j, msg);
                ok = false;
                break;
            }
            if (inflight == j->p->window) { /* the oldest first: fills run in order */
                ok = settle(j, e, &win[head]);
                head = (head + 1) % j->p->window;
                inflight--;
            }
            win[(head + inflight) % j->p->window] = (slot){it, len};
            inflight++;
            ok = ok && !stopping(j->p);
        }
    }
    for (; inflight; inflight--, head = (head + 1) % j->p->window)
        ok = settle(j, e, &win[head]) && ok;
    return ok;
}

/* Is this error of opening a file one that can pass (the upstream is down or
 * slow), rather than about the file (not there, invalid, unsupported)? */
static bool transient(ztd_err e)
{
    return e != ZTD_ERR_FILE_NOT_FOUND && e != ZTD_ERR_FILE_INVALID &&
           e != ZTD_ERR_UPSTREAM_UNSUPPORTED;
}

/* One file, tried again while what fails can pass: a start-up job until the
 * upstream answers (a node that starts before its tier must not turn ready
 * without its model), another job RETRIES times. */
static void fetch_file(job *j, const char *name, slot *win)
{
    bool ok = false;
    for (unsigned attempt = 0, wait = 1000; !ok && !stopping(j->p); attempt++) {
        ztd_entry *e;
        char msg[600];
        ztd_err err = ztd_upstream_get(j->p->u, name, &e, msg, sizeof(msg));
        if (err == ZTD_ERR_NONE) {
            ok = fetch_components(j, e, win);
            ztd_entry_release(e);
        } else {
            failed(j, msg);
            if (!transient(err))
                break;
        }
        if (ok || (!j->startup && attempt + 1 >= RETRIES))
            break;
        pause_ms(j->p, wait);
        wait = backoff(wait);
    }
    add(j, ok ? &j->files_done : &j->files_failed, 1);
}

static void job_run(ztd_job *wq)
{
    job *j = (job *)wq;
    ztd_prefetch *p = j->p;
    pthread_mutex_lock(&p->mu);
    j->state = J_RUNNING;
    pthread_mutex_unlock(&p->mu);
    strvec files = {0};
    bool ok = true;
    for (size_t i = 0; i < j->n && ok; i++)
        ok = (is_file_name(j->names[i]) ? push(&files, j->names[i])
                                        : expand_prefix_retried(j, j->names[i], &files)) == 0;
    add(j, &j->files_total, files.n);
    slot *win = calloc(p->window, sizeof(*win));
    if (!win)
        ok = false;
    for (size_t i = 0; win && i < files.n && !stopping(p); i++)
        fetch_file(j, files.v[i], win);
    free(win);
    strvec_free(&files);
    pthread_mutex_lock(&p->mu);
    j->state = ok && j->files_done == j->files_total ? J_DONE : J_FAILED;
    if (j->startup && p->startup_left)
        p->startup_left--;
    if (j->startup && j->state == J_FAILED)
        snprintf(p->startup_error, sizeof(p->startup_error), "%s",
                 j->error[0] ? j->error : "a file was not fetched");
    pthread_mutex_unlock(&p->mu);
    ztd_log(ZTD_LOG_INFO,
            "prefetch %" PRIu64 " %s: %" PRIu64 " of %" PRIu64 " files, %" PRIu64 " of %" PRIu64
            " bytes",
            j->id, k_states[j->state], j->files_done, j->files_total, j->bytes_done,
            j->bytes_total);
}

/* ---- jobs */

/* Under p->mu: keep at most KEEP_JOBS finished jobs (their counts go to p->done). */
static void trim(ztd_prefetch *p)
{
    while (p->njobs > KEEP_JOBS && p->head && p->head->state >= J_DONE) {
        job *j = p->head;
        p->head = j->next;
        if (!p->head)
            p->tail = NULL;
        p->njobs--;
        p->done.files_total += j->files_total;
        p->done.files_done += j->files_done;
        p->done.files_failed += j->files_failed;
        p->done.bytes_total += j->bytes_total;
        p->done.bytes_done += j->bytes_done;
        p->done.jobs_done += j->state == J_DONE;
        p->done.jobs_failed += j->state == J_FAILED;
        job_free(j);
    }
}

int ztd_prefetch_submit(ztd_prefetch *p, const char *const *names, size_t n, bool startup,
                        uint64_t *id)
{
    job *j = calloc(1, sizeof(*j));
    if (!j || !(j->names = calloc(n ? n : 1, sizeof(*j->names)))) {
        free(j);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (!(j->names[j->n++] = strdup(names[i]))) {
            job_free(j);
            return -1;
        }
    j->wq.run = job_run;
    j->p = p;
    j->startup = startup;
    pthread_mutex_lock(&p->mu);
    j->id = p->next_id++;
    *(p->tail ? &p->tail->next : &p->head) = j;
    p->tail = j;
    p->njobs++;
    p->startup_left += startup;
    trim(p);
    pthread_mutex_unlock(&p->mu);
    *id = j->id;
    ztd_workq_submit(p->q, &j->wq);
    return 0;
}

bool ztd_prefetch_startup_failed(ztd_prefetch *p, char *msg, size_t cap)
{
    pthread_mutex_lock(&p->mu);
    bool failed = p->startup_error[0] != 0;
    snprintf(msg, cap, "%s", p->startup_error);
    pthread_mutex_unlock(&p->mu);
    return failed;
}

bool ztd_prefetch_startup_done(ztd_prefetch *p)
{
    pthread_mutex_lock(&p->mu);
    bool done = p->startup_left == 0;
    pthread_mutex_unlock(&p->mu);
    return done;
}

/* Under p->mu. */
static json_t *job_json(const job *j)
{
    json_t *o = json_pack("{s:I, s:s, s:I, s:I, s:I, s:I, s:I}", "id", (json_int_t)j->id, "state",
                          k_states[j->state], "files_total", (json_int_t)j->files_total,
                          "files_done", (json_int_t)j->files_done, "files_failed",
                          (json_int_t)j->files_failed, "bytes_total", (json_int_t)j->bytes_total,
                          "bytes_done", (json_int_t)j->bytes_done);
    json_t *names = json_array();
    for (size_t i = 0; o && names && i < j->n; i++)
        json_array_append_new(names, json_string(j->names[i]));
    if (o && names)
        json_object_set_new(o, "names", names);
    else
        json_decref(names);
    if (o && j->error[0] && j->state == J_FAILED) /* a try that failed and passed: not news */
        json_object_set_new(o, "error", json_string(j->error));
    return o;
}

json_t *ztd_prefetch_job_json(ztd_prefetch *p, uint64_t id)
{
    json_t *o = NULL;
    pthread_mutex_lock(&p->mu);
    for (job *j = p->head; j && !o; j = j->next)
        if (j->id == id)
            o = job_json(j);
    pthread_mutex_unlock(&p->mu);
    return o;
}

json_t *ztd_prefetch_json(ztd_prefetch *p)
{
    json_t *arr = json_array();
    pthread_mutex_lock(&p->mu);
    for (job *j = p->head; arr && j; j = j->next)
        json_array_append_new(arr, job_json(j));
    pthread_mutex_unlock(&p->mu);
    return arr ? json_pack("{s:o}", "jobs", arr) : NULL;
}

void ztd_prefetch_get_totals(ztd_prefetch *p, ztd_prefetch_totals *out)
{
    pthread_mutex_lock(&p->mu);
    *out = p->done;
    for (job *j = p->head; j; j = j->next) {
        out->jobs_queued += j->state == J_QUEUED;
        out->jobs_running += j->state == J_RUNNING;
        out->jobs_done += j->state == J_DONE;
        out->jobs_failed += j->state == J_FAILED;
        out->files_total += j->files_total;
        out->files_done += j->files_done;
        out->files_failed += j->files_failed;
        out->bytes_total += j->bytes_total;
        out->bytes_done += j->bytes_done;
    }
    pthread_mutex_unlock(&p->mu);
}
