/*
 * Upload sessions, the store's side (see sessions.h): the table, each
 * session's staging file and writer, and the components it holds.
 */
#include "store/sessions.h"
#include "core/grow.h"
#include "core/clock.h"
#include "core/hex.h"
#include "core/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ztd_sessions {
    pthread_mutex_t mu;
    ztd_session *head;
    size_t n;
    ztd_uploads *uploads;
};

ztd_sessions *ztd_sessions_new(ztd_uploads *u)
{
    ztd_sessions *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    pthread_mutex_init(&t->mu, NULL);
    t->uploads = u;
    return t;
}

static void destroy(ztd_session *x)
{
    zt_writer_free(x->w);
    if (x->fd >= 0)
        close(x->fd);
    ztd_staging_remove(x->st, x->name);
    for (size_t i = 0; i < x->nkeys; i++)
        free(x->keys[i].key);
    free(x->keys);
    free(x->file);
    free(x);
}

void ztd_sessions_free(ztd_sessions *t)
{
    if (!t)
        return;
    for (ztd_session *x = t->head, *next; x; x = next) {
        next = x->next;
        destroy(x);
    }
    pthread_mutex_destroy(&t->mu);
    free(t);
}

size_t ztd_sessions_count(ztd_sessions *t)
{
    pthread_mutex_lock(&t->mu);
    size_t n = t->n;
    pthread_mutex_unlock(&t->mu);
    return n;
}

/* A session for file with its staging file and writer, not in the table yet. */
static ztd_session *create(ztd_staging *st, const char *file, const char *attributes, int *errnum,
                           zt_error *err)
{
    ztd_session *x = calloc(1, sizeof(*x));
    uint8_t rnd[16];
    if (!x || getentropy(rnd, sizeof(rnd)) != 0 || !(x->file = strdup(file))) {
        *errnum = x ? errno : ENOMEM;
        free(x);
        return NULL;
    }
    ztd_hex_encode(rnd, sizeof(rnd), x->id);
    x->st = st;
    x->fd = ztd_staging_create(st, "session", x->name);
    zt_writer_options wo;
    zt_writer_options_init(&wo);
    if (x->fd < 0 || zt_writer_open_fd(x->fd, &wo, &x->w, err) ||
        (attributes && zt_writer_set_attributes(x->w, attributes, err))) {
        *errnum = errno;
        destroy(x);
        return NULL;
    }
    return x;
}

ztd_session *ztd_sessions_open(ztd_sessions *t, ztd_staging *st, const char *file,
                               const char *attributes, int *errnum, zt_error *err)
{
    if (!ztd_uploads_take(t->uploads)) {
        *errnum = EBUSY;
        return NULL;
    }
    ztd_session *x = create(st, file, attributes, errnum, err);
    if (!x) {
        ztd_uploads_give(t->uploads);
        return NULL;
    }
    x->last_used = ztd_now_ms();
    pthread_mutex_lock(&t->mu);
    x->next = t->head;
    t->head = x;
    t->n++;
    pthread_mutex_unlock(&t->mu);
    return x;
}

ztd_session *ztd_sessions_acquire(ztd_sessions *t, const char *id, bool *busy)
{
    *busy = false;
    pthread_mutex_lock(&t->mu);
    ztd_session *x = t->head;
    while (x && strcmp(x->id, id))
        x = x->next;
    if (x && x->busy) {
        *busy = true;
        x = NULL;
    } else if (x) {
        x->busy = true;
    }
    pthread_mutex_unlock(&t->mu);
    return x;
}

void ztd_sessions_release(ztd_sessions *t, ztd_session *x)
{
    pthread_mutex_lock(&t->mu);
    x->busy = false;
    x->last_used = ztd_now_ms();
    pthread_mutex_unlock(&t->mu);
}

void ztd_sessions_end(ztd_sessions *t, ztd_session *x)
{
    pthread_mutex_lock(&t->mu);
    for (ztd_session **pp = &t->head; *pp; pp = &(*pp)->next)
        if (*pp == x) {
            *pp = x->next;
            t->n--;
            break;
        }
    pthread_mutex_unlock(&t->mu);
    destroy(x);
    ztd_uploads_give(t->uploads);
}

bool ztd_session_idle(uint64_t now, uint64_t last_used, uint64_t idle_ms)
{
    /* last_used is later than now when a request released the session (or one was
     * opened) after the sweep read the clock: not idle, and no unsigned wrap-around */
    return now > last_used && now - last_used > idle_ms;
}

size_t ztd_sessions_sweep(ztd_sessions *t, uint64_t idle_ms)
{
    uint64_t now = ztd_now_ms();
    ztd_session *dead = NULL;
    size_t n = 0;
    pthread_mutex_lock(&t->mu);
    for (ztd_session **pp = &t->head; *pp;) {
        ztd_session *x = *pp;
        if (!x->busy && ztd_session_idle(now, x->last_used, idle_ms)) {
            *pp = x->next;
            t->n--;
            x->next = dead;
            dead = x;
        } else {
            pp = &x->next;
        }
    }
    pthread_mutex_unlock(&t->mu);
    while (dead) {
        ztd_session *next = dead->next;
        ztd_log(ZTD_LOG_INFO, "upload session %s for %s expired", dead->id, dead->file);
        destroy(dead);
        ztd_uploads_give(t->uploads);
        dead = next;
        n++;
    }
    return n;
}

const ztd_session_key *ztd_session_find_key(const ztd_session *x, const char *key)
{
    for (size_t i = 0; i < x->nkeys; i++)
        if (!strcmp(x->keys[i].key, key))
            return &x->keys[i];
    return NULL;
}

int ztd_session_prepare_key(ztd_session *x, const char *key, char **copy)
{
    if (ZTD_GROW_ITEMS(x->keys, x->capkeys, x->nkeys + 1, 16) != 0)
        return -1;
    return (*copy = strdup(key)) ? 0 : -1;
}

void ztd_session_add_key(ztd_session *x, char *copy, size_t id)
{
    ztd_session_key k = {.key = copy, .id = id};
    zt_writer_component_info(x->w, id, &k.info);
    x->keys[x->nkeys++] = k;
}

bool ztd_session_intact(const ztd_session *x)
{
    return ztd_staging_intact(x->st, x->name, x->fd, ZTD_STAGING_ANY_SIZE);
}
