/* The upstream's listing for the fronts (see upstream_files.h). */
#include "http/upstream_files.h"
#include "http/offload.h"
#include "upstream/origin_listing.h"
#include "upstream/upstream.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct list_job {
    ztd_offload off;
    ztd_server *s;
    json_t *files;
    ztd_err err;
    char msg[600];
} list_job;

static void list_job_free(void *p)
{
    list_job *j = p;
    json_decref(j->files);
    free(j);
}

static void fetch_listing(ztd_offload *o)
{
    list_job *j = (list_job *)o;
    ztd_upstream_tell_kind(j->s->upstream);
    if (!ztd_upstream_kind_known(j->s->upstream)) { /* not "no files": we cannot tell */
        j->err = ZTD_ERR_UPSTREAM_FAILED;
        snprintf(j->msg, sizeof(j->msg),
                 "upstream %s cannot be reached, or answered its probe with something else "
                 "than a ztensord listing or a file server's answer (upstream_kind auto could "
                 "not tell which it is; it is asked again at the next request)",
                 ztd_upstream_url(j->s->upstream));
        return;
    }
    ztd_uplist *l = ztd_upstream_file_listing(j->s->upstream);
    j->err = l ? ztd_uplist_get(l, &j->files, j->msg, sizeof(j->msg)) : ZTD_ERR_NONE;
}

json_t *ztd_answer_upstream_files(ztd_server *s, struct MHD_Connection *c, ztd_req *r, bool *wait,
                                  ztd_err *err, const char **msg)
{
    *wait = false;
    *err = ZTD_ERR_NONE;
    list_job *j = ztd_req_ctx_of(r, list_job_free);
    if (!j) {
        ztd_uplist *l = ztd_upstream_file_listing(s->upstream);
        json_t *f = l ? ztd_uplist_peek(l) : NULL;
        if (f || (!l && ztd_upstream_kind_known(s->upstream)))
            return f;
        if (!(j = calloc(1, sizeof(*j)))) {
            *err = ZTD_ERR_INTERNAL;
            return NULL;
        }
        j->s = s;
        ztd_req_set_ctx(r, j, list_job_free);
        if (!ztd_offload_start(s, c, &j->off, fetch_listing)) {
            *wait = true;
            return NULL;
        }
    }
    if (!ztd_offload_done(&j->off)) {
        *wait = true;
        return NULL;
    }
    *err = j->err;
    *msg = j->msg;
    return j->files ? json_incref(j->files) : NULL;
}
