/* The views of an S3 store's tensor files in its listing (see store_views.h). */
#include "upstream/store_views.h"
#include "core/log.h"
#include "store/view_names.h"
#include "upstream/origin_listing.h"
#include "upstream/upstream.h"

#include <stdlib.h>

/* The listing object of the view of store file `name`, or NULL (none: logged). */
static json_t *view_json(ztd_upstream *u, const char *name)
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
    ztd_entry_release(e);
    return j;
}

/* A ztd_uplist_more_fn: the views of the objects of files appended to it. */
static int add_views(void *ctx, json_t *files)
{
    ztd_upstream *u = ctx;
    json_t *views = json_array();
    for (size_t i = 0; views && i < json_array_size(files); i++) {
        const char *name = json_string_value(json_object_get(json_array_get(files, i), "name"));
        char *view = name ? ztd_view_name(name) : NULL;
        json_t *j = NULL;
        if (view && ztd_uplist_find(files, view))
            ztd_log(ZTD_LOG_WARN,
                    "upstream %s: %s is an object of the store: the safetensors view of %s is "
                    "not listed (the object wins the name)",
                    ztd_upstream_url(u), view, name);
        else if (view)
            j = view_json(u, name);
        free(view);
        if (j && json_array_append_new(views, j) != 0) {
            json_decref(views);
            views = NULL;
        }
    }
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
