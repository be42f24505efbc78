/*
 * The views and indexes of a snapshot, as virtual entries (see view_names.h).
 * Real entries are grouped by directory; each directory gets its views, then
 * its index; the new entries are merged into the sorted array in one pass.
 */
#include "store/view_names.h"
#include "core/dates.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/partition.h"
#include "store/catalog_v2.h"
#include "store/st_views.h"
#include "store/validators.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ztensor/ztensor_experimental.h>

/* ---- names */

static size_t dir_len(const char *name)
{
    const char *s = strrchr(name, '/');
    return s ? (size_t)(s - name) : 0;
}

static const char *base_of(const char *name)
{
    const char *s = strrchr(name, '/');
    return s ? s + 1 : name;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n > k && !strcmp(s + n - k, tail);
}

char *ztd_view_name(const char *name)
{
    size_t k = ends_with(name, ".zt") ? 3 : ends_with(name, ".alt") ? 4 : 0;
    size_t n = strlen(name);
    char *s = k && name[n - k - 1] != '/' ? malloc(n - k + sizeof(".safetensors")) : NULL;
    if (s)
        snprintf(s, n - k + sizeof(".safetensors"), "%.*s.safetensors", (int)(n - k), name);
    return s;
}

typedef struct {
    ztd_entry *const *v;
    const char *name;
} name_key;

static bool below(const void *ctx, size_t i)
{
    const name_key *k = ctx;
    return strcmp(k->v[i]->name, k->name) < 0;
}

/* The entry named name in sorted v, or NULL. */
static ztd_entry *find(ztd_entry *const *v, size_t n, const char *name)
{
    name_key k = {v, name};
    size_t i = ztd_partition_point(0, n, below, &k);
    return i < n && !strcmp(v[i]->name, name) ? v[i] : NULL;
}

static ztd_entry *find_old(const ztd_snapshot *old, const char *name)
{
    return old ? ztd_snapshot_find(old, name, strlen(name)) : NULL;
}

/* ---- one directory */

typedef struct dir_job {
    ztd_entry *const *all; /* the snapshot's sorted entries (lookups) */
    size_t nall;
    const ztd_snapshot *old;
    ztd_entry_vec *out; /* the new virtual entries */
    int rc;
} dir_job;

static ztd_entry *virtual_new(char *name, const ztd_entry *like)
{
    ztd_entry *e = calloc(1, sizeof(*e));
    if (!e) {
        free(name);
        return NULL;
    }
    e->refs = 1;
    e->name = name;
    e->name_len = strlen(name);
    e->mode = like->mode;
    e->mtime_ns = like->mtime_ns;
    e->ctime_ns = like->ctime_ns;
    memcpy(e->last_modified, like->last_modified, sizeof(e->last_modified));
    return e;
}

/* t's view, built once per file version and kept with t; NULL when out of memory. */
static ztd_st_view *view_of(ztd_entry *t)
{
    char id[96];
    ztd_raw_etag(t, id);
    return ztd_st_view_get(&t->st_view, t->file, id);
}

/* A new view entry of t named name (taken), t held; NULL when out of memory. */
static ztd_entry *view_entry(ztd_entry *t, char *name, const ztd_st_view *sv)
{
    ztd_entry *e = virtual_new(name, t);
    if (e) {
        ztd_entry_ref(t);
        e->view_of = t;
        e->size = sv->v ? zt_st_view_size(sv->v) : 0;
    }
    return e;
}

/* The view entry of t, new or the previous snapshot's, into j->out. */
static void add_view(dir_job *j, ztd_entry *t, char *name, const ztd_st_view *sv)
{
    ztd_entry *o = find_old(j->old, name), *e;
    if (o && o->view_of == t) {
        free(name);
        ztd_entry_ref(o);
        e = o;
    } else {
        e = view_entry(t, name, sv);
    }
    if (!e || ztd_entry_vec_push(j->out, e) != 0) {
        ztd_entry_unref(e);
        j->rc = -1;
    }
}

/* Which tensor files of the directory are in its model, and the views. */
typedef struct model {
    ztd_entry **members;
    const ztd_st_view **views; /* members' st_views (NULL for own safetensors) */
    size_t n;
    bool sharded;        /* a v2 root with shards */
    const char *refused; /* a member without a view */
} model;

/* Has tensor entry t a view of its own name (not virtual, opened, not a v2 data shard)? */
static bool has_view(const ztd_entry *t)
{
    return !ztd_entry_virtual(t) && t->file && !zt_file_is_data_shard(t->file);
}

int ztd_st_index_member(ztd_entry *t, const ztd_st_view **sv)
{
    *sv = NULL;
    if (!has_view(t))
        return 0;
    bool zt = ends_with(t->name, ".zt") || ends_with(t->name, ".alt");
    ztd_st_view *v = zt ? view_of(t) : NULL;
    if (zt_file_get_kind(t->file) == ZT_KIND_SAFETENSORS || (v && v->own))
        return 1;
    *sv = v;
    return v ? 1 : zt ? -1 : 0;
}

static void consider(dir_job *j, ztd_entry *t, model *m)
{
    const ztd_st_view *sv;
    int in = ztd_st_index_member(t, &sv);
    char *name = in > 0 && sv ? ztd_view_name(t->name) : NULL;
    if (in < 0 || (sv && !name))
        j->rc = -1; /* out of memory */
    if (in <= 0 || (sv && !name))
        return;
    if (sv && find(j->all, j->nall, name)) {
        ztd_log(ZTD_LOG_WARN,
                "catalog: %s is a real file: the safetensors view of %s is not listed "
                "(the real file wins the name)",
                name, t->name);
        free(name);
        return;
    }
    if (sv)
        add_view(j, t, name, sv);
    if (sv && sv->err && !m->refused)
        m->refused = t->name;
    m->members[m->n] = t;
    m->views[m->n++] = sv;
    m->sharded |= t->v2 && t->v2->nshards > 0;
}

/* "\"idx-<32 hex of its sha256>\"" */
static void index_etag(const char *json, size_t len, char out[40])
{
    uint8_t h[32] = {0};
    zt_hasher *hs = zt_hasher_new(ZT_DIGEST_SHA256);
    if (hs) {
        zt_hasher_update(hs, json, len);
        zt_hasher_final(hs, h);
        zt_hasher_free(hs);
    }
    memcpy(out, "\"idx-", 5);
    ztd_hex_encode(h, 16, out + 5);
    memcpy(out + 37, "\"", 2);
}

char *ztd_st_index_json_of(const char *dir, ztd_entry *const *members, const ztd_st_view *const *sv,
                           size_t n)
{
    const char **names = calloc(n, sizeof(*names));
    const zt_st_view **views = calloc(n, sizeof(*views));
    zt_st_view **temp = calloc(n, sizeof(*temp));
    char **owned = calloc(n, sizeof(*owned));
    char *json = NULL;
    zt_error err = {0};
    bool ok = names && views && temp && owned;
    for (size_t i = 0; ok && i < n; i++) {
        ztd_entry *t = members[i];
        if (sv[i]) {
            views[i] = sv[i]->v;
            ok = (owned[i] = ztd_view_name(base_of(t->name))) != NULL;
            names[i] = owned[i];
        } else { /* its own view: its tensors, from a view of it made for the index */
            ok = (views[i] = temp[i] = zt_st_view_new(t->file, &err)) != NULL;
            names[i] = base_of(t->name);
        }
    }
    if (ok)
        json = zt_st_index_json(names, views, n, &err);
    if (!json)
        ztd_log(ZTD_LOG_WARN, "%s%s" ZTD_ST_INDEX_NAME " is not made: %s", dir, dir[0] ? "/" : "",
                ok || err.message[0] ? err.message : "out of memory");
    for (size_t i = 0; i < n && temp && owned; i++) {
        zt_st_view_free(temp[i]);
        free(owned[i]);
    }
    free(names);
    free(views);
    free(temp);
    free(owned);
    return json;
}

static bool same_members(const ztd_entry *o, const model *m)
{
    if (!o || !o->st_index || o->st_index->nmembers != m->n)
        return false;
    for (size_t i = 0; i < m->n; i++)
        if (o->st_index->members[i] != m->members[i])
            return false;
    return true;
}

ztd_entry *ztd_st_index_entry_new(char *name, char *json, ztd_entry *const *members, size_t n,
                                  bool hold)
{
    ztd_st_index *x = calloc(1, sizeof(*x));
    ztd_entry *e = x ? virtual_new(name, members[0]) : (free(name), NULL);
    if (!e || !(x->members = malloc(n * sizeof(*x->members)))) {
        free(x);
        free(e ? e->name : NULL);
        free(e);
        zt_free(json);
        return NULL;
    }
    x->json = json;
    x->len = strlen(json);
    x->nmembers = hold ? n : 0;
    for (size_t i = 0; i < n; i++) {
        if (hold) {
            ztd_entry_ref(members[i]);
            x->members[i] = members[i];
        }
        if (members[i]->mtime_ns > e->mtime_ns)
            e->mtime_ns = members[i]->mtime_ns;
    }
    ztd_http_date_format(e->mtime_ns / 1000000000, e->last_modified);
    e->st_index = x;
    e->size = x->len;
    index_etag(json, x->len, e->file_etag);
    return e;
}

/* The directory's index entry into j->out, when it has one. */
static void add_index(dir_job *j, const char *dir, const model *m)
{
    if (m->n < 1 || (m->n < 2 && !m->sharded))
        return;
    size_t dn = strlen(dir);
    char *name = malloc(dn + sizeof("/" ZTD_ST_INDEX_NAME));
    if (!name) {
        j->rc = -1;
        return;
    }
    snprintf(name, dn + sizeof("/" ZTD_ST_INDEX_NAME), "%s%s" ZTD_ST_INDEX_NAME, dir,
             dn ? "/" : "");
    if (find(j->all, j->nall, name)) {
        ztd_log(ZTD_LOG_WARN, "catalog: %s is a real file: it is served instead of the index",
                name);
        free(name);
        return;
    }
    if (m->refused) {
        ztd_log(ZTD_LOG_WARN, "catalog: %s is not made: %s has no safetensors view", name,
                m->refused);
        free(name);
        return;
    }
    ztd_entry *o = find_old(j->old, name), *e = NULL;
    char *json = NULL;
    if (same_members(o, m)) {
        free(name);
        ztd_entry_ref(o);
        e = o;
    } else if (!(json = ztd_st_index_json_of(dir, m->members, m->views, m->n))) {
        free(name);
        return;
    } else if (!(e = ztd_st_index_entry_new(name, json, m->members, m->n, true))) {
        j->rc = -1;
        return;
    }
    if (ztd_entry_vec_push(j->out, e) != 0) {
        ztd_entry_unref(e);
        j->rc = -1;
    }
}

/* The views and index of the directory whose real entries are t[0..n). */
static void do_dir(dir_job *j, ztd_entry *const *t, size_t n)
{
    model m = {calloc(n, sizeof(*m.members)), calloc(n, sizeof(*m.views)), 0, false, NULL};
    if (!m.members || !m.views) {
        j->rc = -1;
    } else {
        for (size_t i = 0; i < n; i++)
            consider(j, t[i], &m);
        char *dir = strndup(t[0]->name, dir_len(t[0]->name));
        if (dir)
            add_index(j, dir, &m);
        else
            j->rc = -1;
        free(dir);
    }
    free(m.members);
    free(m.views);
}

/* ---- the snapshot */

static int by_dir(const void *a, const void *b)
{
    const ztd_entry *x = *(ztd_entry *const *)a, *y = *(ztd_entry *const *)b;
    size_t dx = dir_len(x->name), dy = dir_len(y->name);
    int c = memcmp(x->name, y->name, dx < dy ? dx : dy);
    if (!c && dx != dy)
        c = dx < dy ? -1 : 1;
    return c ? c : strcmp(x->name, y->name);
}

static bool in_dir(const ztd_entry *e, const char *dir)
{
    size_t n = strlen(dir);
    return dir_len(e->name) == n && !memcmp(e->name, dir, n);
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(ztd_entry *const *)a)->name, (*(ztd_entry *const *)b)->name);
}

/* v's entries and add's (both sorted) as one sorted array in v. */
static int merge(ztd_entry ***v, size_t *n, size_t *cap, ztd_entry_vec *add)
{
    ztd_entry **m = malloc((*n + add->n + 1) * sizeof(*m));
    if (!m)
        return -1;
    size_t i = 0, k = 0, w = 0;
    while (i < *n || k < add->n)
        m[w++] = k == add->n || (i < *n && strcmp((*v)[i]->name, add->v[k]->name) < 0)
                     ? (*v)[i++]
                     : add->v[k++];
    free(*v);
    *v = m;
    *n = w;
    *cap = *n + add->n + 1;
    return 0;
}

int ztd_view_names_add(ztd_entry ***v, size_t *n, size_t *cap, const ztd_snapshot *old,
                       const char *dir)
{
    /* an update: the directory's virtual entries are made again */
    size_t w = 0;
    for (size_t i = 0; dir && i < *n; i++) {
        if (ztd_entry_virtual((*v)[i]) && in_dir((*v)[i], dir))
            ztd_entry_unref((*v)[i]);
        else
            (*v)[w++] = (*v)[i];
    }
    if (dir)
        *n = w;
    ztd_entry_vec real = {0}, add = {0};
    for (size_t i = 0; i < *n; i++)
        if (!ztd_entry_virtual((*v)[i]) && (!dir || in_dir((*v)[i], dir)) &&
            ztd_entry_vec_push(&real, (*v)[i]) != 0) {
            free(real.v);
            return -1;
        }
    if (real.n)
        qsort(real.v, real.n, sizeof(*real.v), by_dir);
    dir_job j = {*v, *n, old, &add, 0};
    for (size_t i = 0, k; i < real.n; i = k) {
        size_t d = dir_len(real.v[i]->name);
        for (k = i + 1; k < real.n && dir_len(real.v[k]->name) == d &&
                        !memcmp(real.v[k]->name, real.v[i]->name, d);
             k++)
            ;
        do_dir(&j, real.v + i, k - i);
    }
    free(real.v);
    if (add.n)
        qsort(add.v, add.n, sizeof(*add.v), by_name);
    w = 0;
    for (size_t i = 0; i < add.n; i++) { /* "a.zt" and "a.alt": the first has the name */
        if (w && !strcmp(add.v[w - 1]->name, add.v[i]->name)) {
            ztd_log(ZTD_LOG_WARN, "catalog: %s is the view of %s; %s's is not listed",
                    add.v[i]->name, add.v[w - 1]->view_of->name, add.v[i]->view_of->name);
            ztd_entry_unref(add.v[i]);
        } else {
            add.v[w++] = add.v[i];
        }
    }
    add.n = w;
    if (add.n && merge(v, n, cap, &add) != 0) {
        for (size_t i = 0; i < add.n; i++)
            ztd_entry_unref(add.v[i]);
        j.rc = -1;
    }
    free(add.v);
    return j.rc;
}

ztd_entry *ztd_view_entry_new(ztd_entry *t)
{
    char *name = has_view(t) ? ztd_view_name(t->name) : NULL;
    ztd_st_view *sv = name ? view_of(t) : NULL;
    if (!sv || sv->own) {
        free(name);
        return NULL;
    }
    return view_entry(t, name, sv);
}
