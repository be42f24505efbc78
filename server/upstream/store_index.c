/* The model indexes of an S3 store's directories (see store_index.h). */
#include "upstream/store_index.h"
#include "core/log.h"
#include "store/catalog_v2.h"
#include "store/st_views.h"
#include "store/view_names.h"
#include "upstream/origin_listing.h"
#include "upstream/upstream.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The indexes of the last listing made, answered from memory. */
typedef struct made_set {
    ztd_upstream *u;
    pthread_mutex_t mu;
    ztd_entry **v; /* held */
    size_t n;
} made_set;

static size_t dir_len(const char *name)
{
    const char *s = strrchr(name, '/');
    return s ? (size_t)(s - name) : 0;
}

static bool tail_is(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n > k && !strcmp(s + n - k, tail);
}

static const char *name_at(const json_t *files, size_t i)
{
    const char *s = json_string_value(json_object_get(json_array_get(files, i), "name"));
    return s ? s : "";
}

/* Is `name` in directory dir (of dl bytes), or below it? */
static bool under(const char *name, const char *dir, size_t dl)
{
    return !dl || (!strncmp(name, dir, dl) && name[dl] == '/');
}

/* ---- answers */

static ztd_entry *made(void *ctx, const char *name, bool fetch)
{
    made_set *x = ctx;
    const char *base = name + dir_len(name) + (strchr(name, '/') != NULL);
    if (strcmp(base, ZTD_ST_INDEX_NAME) != 0)
        return NULL;
    /* the indexes of a listing fetched less than its ttl ago */
    ztd_uplist *l = ztd_upstream_store_listing(x->u);
    json_t *files = NULL;
    char msg[600];
    if (fetch ? ztd_uplist_get(l, &files, msg, sizeof(msg)) != ZTD_ERR_NONE
              : !(files = ztd_uplist_peek(l)))
        return NULL;
    json_decref(files);
    ztd_entry *e = NULL;
    pthread_mutex_lock(&x->mu);
    for (size_t i = 0; !e && i < x->n; i++)
        if (!strcmp(x->v[i]->name, name)) {
            e = x->v[i];
            ztd_entry_retain(e);
        }
    pthread_mutex_unlock(&x->mu);
    return e;
}

static void set_replace(made_set *x, ztd_entry_vec *v)
{
    pthread_mutex_lock(&x->mu);
    ztd_entry **old = x->v;
    size_t n = x->n;
    x->v = v->v;
    x->n = v->n;
    pthread_mutex_unlock(&x->mu);
    for (size_t i = 0; i < n; i++)
        ztd_entry_unref(old[i]);
    free(old);
}

static void made_free(void *ctx)
{
    made_set *x = ctx;
    ztd_entry_vec none = {0};
    set_replace(x, &none);
    pthread_mutex_destroy(&x->mu);
    free(x);
}

void ztd_store_index_enable(ztd_upstream *u)
{
    made_set *x = ztd_upstream_store_listing(u) ? calloc(1, sizeof(*x)) : NULL;
    if (!x)
        return;
    x->u = u;
    pthread_mutex_init(&x->mu, NULL);
    ztd_upstream_set_made(u, made, x, made_free);
}

/* ---- the listing */

static bool tensor_name(const char *name)
{
    return tail_is(name, ".zt") || tail_is(name, ".alt") || tail_is(name, ".safetensors");
}

/* Has files[i]'s directory another tensor object? */
static bool beside_tensor(const json_t *files, size_t i)
{
    const char *name = name_at(files, i);
    size_t dl = dir_len(name), n = json_array_size(files);
    /* the directory's objects lie in the block of names that start with it */
    for (size_t k = i; k-- > 0 && under(name_at(files, k), name, dl);)
        if (dir_len(name_at(files, k)) == dl && tensor_name(name_at(files, k)))
            return true;
    for (size_t k = i + 1; k < n && under(name_at(files, k), name, dl); k++)
        if (dir_len(name_at(files, k)) == dl && tensor_name(name_at(files, k)))
            return true;
    return false;
}

bool ztd_store_index_wants(const json_t *files, size_t i)
{
    return tail_is(name_at(files, i), ".safetensors") && beside_tensor(files, i);
}

bool ztd_store_index_keeps(const json_t *files, size_t i, const ztd_entry *e)
{
    return (e->v2 && e->v2->nshards > 0) || beside_tensor(files, i);
}

/* One directory's model: its members, their views (store/view_names.h). */
typedef struct model {
    ztd_entry **members;
    const ztd_st_view **views;
    size_t n;
    bool sharded;
    const char *refused; /* a member whose view is refused */
} model;

/* The index of directory dir (dl bytes of its first member's name) into
 * objs and kept, when it has one. -1 when out of memory. */
static int add_dir(ztd_upstream *u, const json_t *files, const model *m, json_t *objs,
                   ztd_entry_vec *kept)
{
    if (m->n < 1 || (m->n < 2 && !m->sharded))
        return 0;
    size_t dl = dir_len(m->members[0]->name);
    char *dir = strndup(m->members[0]->name, dl);
    char *name = dir ? malloc(dl + sizeof("/" ZTD_ST_INDEX_NAME)) : NULL;
    if (!name) {
        free(dir);
        return -1;
    }
    snprintf(name, dl + sizeof("/" ZTD_ST_INDEX_NAME), "%s%s" ZTD_ST_INDEX_NAME, dir,
             dl ? "/" : "");
    char *json = NULL;
    if (ztd_uplist_find(files, name))
        ztd_log(ZTD_LOG_WARN,
                "upstream %s: %s is an object of the store: it is served instead of the index",
                ztd_upstream_url(u), name);
    else if (m->refused)
        ztd_log(ZTD_LOG_WARN, "upstream %s: %s is not made: %s has no safetensors view",
                ztd_upstream_url(u), name, m->refused);
    else
        json = ztd_st_index_json_of(dir, m->members, m->views, m->n);
    free(dir);
    if (!json) {
        free(name);
        return 0;
    }
    ztd_entry *e = ztd_st_index_entry_new(name, json, m->members, m->n, false);
    json_t *o = e ? ztd_entry_json(e) : NULL;
    if (!o || ztd_entry_vec_push(kept, e) != 0) {
        json_decref(o);
        ztd_entry_unref(e);
        return -1;
    }
    return json_array_append_new(objs, o);
}

/* The model of the directory of opened[i] (the first of it not done). */
static int add_model(const json_t *files, ztd_entry *const *opened, size_t i, size_t n, bool *done,
                     model *m)
{
    const char *dir = opened[i]->name;
    size_t dl = dir_len(dir);
    int rc = 0;
    m->n = 0;
    m->sharded = false;
    m->refused = NULL;
    for (size_t k = i; k < n && under(name_at(files, k), dir, dl); k++) {
        ztd_entry *t = opened[k];
        if (!t || done[k] || dir_len(t->name) != dl)
            continue;
        done[k] = true;
        const ztd_st_view *sv = NULL;
        int in = ztd_st_index_member(t, &sv);
        if (in < 0)
            rc = -1;
        if (in <= 0)
            continue;
        if (sv && sv->err && !m->refused)
            m->refused = t->name;
        m->members[m->n] = t;
        m->views[m->n++] = sv;
        m->sharded |= t->v2 && t->v2->nshards > 0;
    }
    return rc;
}

int ztd_store_index_add(ztd_upstream *u, json_t *files, ztd_entry *const *opened, size_t n)
{
    made_set *x = ztd_upstream_made_ctx(u, made);
    if (!x)
        return 0;
    model m = {calloc(n + 1, sizeof(*m.members)), calloc(n + 1, sizeof(*m.views)), 0, false, NULL};
    bool *done = calloc(n + 1, sizeof(*done));
    json_t *objs = json_array();
    ztd_entry_vec kept = {0};
    int rc = m.members && m.views && done && objs ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (opened[i] && !done[i] && (rc = add_model(files, opened, i, n, done, &m)) == 0)
            rc = add_dir(u, files, &m, objs, &kept);
    if (rc == 0)
        rc = json_array_extend(files, objs);
    if (rc == 0) {
        set_replace(x, &kept);
    } else {
        for (size_t i = 0; i < kept.n; i++)
            ztd_entry_unref(kept.v[i]);
        free(kept.v);
    }
    json_decref(objs);
    free(m.members);
    free(m.views);
    free(done);
    return rc;
}
