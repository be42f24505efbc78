/* The views of an S3 store's tensor files in its listing (see store_views.h). */
#include "upstream/store_views.h"
#include "core/log.h"
#include "store/view_names.h"
#include "upstream/origin_listing.h"
#include "upstream/store_index.h"
#include "upstream/upstream.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

/* The listing object of the view of store file `name`, or NULL (none: logged);
 * *opened the file's entry (a reference), NULL when it did not open. */
static json_t *view_json(ztd_upstream *u, const char *name, ztd_entry **opened)
{
    ztd_entry *e = NULL;
    char msg[600];
    ztd_err err = ztd_upstream_get(u, name, &e, msg, sizeof(msg));
    if (err) {
        ztd_log(ZTD_LOG_WARN, "upstream %s: %s: its safetensors view is not listed: %s",
                ztd_upstream_url(u), name, msg);
        return NULL;
    }
    ztd_entry *v = ztd_view_entry_new(e);
    json_t *j = v ? ztd_entry_json(v) : NULL;
    ztd_entry_unref(v);
    ztd_entry_ref(e); /* for its directory's index (store_index.h) */
    *opened = e;
    ztd_entry_release(e);
    return j;
}

/* Opens of the store's tensor files at once while a listing is made: each is
 * a few ranged GETs (footer, manifest), which one after the other made a
 * listing of N files take N round trips to the store. */
#define OPENS_AT_ONCE 8

typedef struct views_job {
    ztd_upstream *u;
    json_t *files;
    json_t **views;     /* views[i]: file i's view, or NULL (none, or not asked) */
    ztd_entry **opened; /* opened[i]: file i's entry (held), or NULL */
    bool *wanted;       /* wanted[i]: file i has a view to list, or may be in an index */
    size_t n;
    size_t next; /* atomic: the next file to take */
} views_job;

static void *open_some(void *arg)
{
    views_job *j = arg;
    for (;;) {
        size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n)
            return NULL;
        if (j->wanted[i])
            j->views[i] = view_json(
                j->u, json_string_value(json_object_get(json_array_get(j->files, i), "name")),
                &j->opened[i]);
        if (j->opened[i] && !ztd_store_index_keeps(j->files, i, j->opened[i])) {
            ztd_entry_unref(j->opened[i]); /* in no index: not held */
            j->opened[i] = NULL;
        }
    }
}

/* wanted[i] for each file of files that has a view name the store does not
 * use itself (a clash is logged). */
static void mark_wanted(ztd_upstream *u, json_t *files, bool *wanted)
{
    for (size_t i = 0; i < json_array_size(files); i++) {
        const char *name = json_string_value(json_object_get(json_array_get(files, i), "name"));
        char *view = name ? ztd_view_name(name) : NULL;
        if (view && ztd_uplist_find(files, view))
            ztd_log(ZTD_LOG_WARN,
                    "upstream %s: %s is an object of the store: the safetensors view of %s is "
                    "not listed (the object wins the name)",
                    ztd_upstream_url(u), view, name);
        else if (view || ztd_store_index_wants(files, i))
            wanted[i] = true;
        free(view);
    }
}

/* Every wanted view opened, OPENS_AT_ONCE at a time (the caller takes part;
 * threads that cannot be started leave their share to it). */
static void open_all(views_job *j)
{
    size_t k = 0;
    for (size_t i = 0; i < j->n; i++)
        k += j->wanted[i];
    pthread_t t[OPENS_AT_ONCE - 1];
    size_t started = 0;
    while (started < OPENS_AT_ONCE - 1 && started + 1 < k &&
           pthread_create(&t[started], NULL, open_some, j) == 0)
        started++;
    open_some(j);
    for (size_t i = 0; i < started; i++)
        pthread_join(t[i], NULL);
}

/* A ztd_uplist_more_fn: the views of the objects of files appended to it. */
static int add_views(void *ctx, json_t *files)
{
    size_t n = json_array_size(files);
    views_job j = {ctx,
                   files,
                   calloc(n ? n : 1, sizeof(json_t *)),
                   calloc(n ? n : 1, sizeof(ztd_entry *)),
                   calloc(n ? n : 1, 1),
                   n,
                   0};
    json_t *views = j.views && j.opened && j.wanted ? json_array() : NULL;
    if (views) {
        mark_wanted(j.u, files, j.wanted);
        open_all(&j);
    }
    if (views && ztd_store_index_add(j.u, files, j.opened, n) != 0) {
        json_decref(views);
        views = NULL;
    }
    for (size_t i = 0; views && i < n; i++)
        if (j.views[i] && json_array_append(views, j.views[i]) != 0) {
            json_decref(views);
            views = NULL;
        }
    for (size_t i = 0; j.views && i < n; i++)
        json_decref(j.views[i]);
    for (size_t i = 0; j.opened && i < n; i++)
        ztd_entry_unref(j.opened[i]);
    free(j.views);
    free(j.opened);
    free(j.wanted);
    int rc = views && json_array_extend(files, views) == 0 ? 0 : -1;
    json_decref(views);
    return rc;
}

void ztd_store_views_enable(ztd_upstream *u)
{
    ztd_uplist *l = ztd_upstream_store_listing(u);
    if (l)
        ztd_uplist_set_more(l, add_views, u);
}
