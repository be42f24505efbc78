/*
 * DELETE /v1/files/{file}: the unlink (and the fsync of its directory) runs off
 * libmicrohttpd's threads, under the publication locks (store/publish.h).
 */
#include "handlers/handlers.h"
#include "core/log.h"
#include "http/offload.h"
#include "http/response.h"
#include "store/publish.h"

#include <stddef.h>
#include <stdlib.h>

/* The unlink and its fsync, off libmicrohttpd's threads, and what it found. */
typedef struct delete_job {
    ztd_offload work;
    ztd_publisher *p;
    const char *rel;
    ztd_preconds pc;
    ztd_err err;
    char msg[512];
} delete_job;

static void delete_job_free(void *ctx)
{
    free(ctx);
}

static void unlink_file(ztd_offload *o)
{
    delete_job *j = (delete_job *)((char *)o - offsetof(delete_job, work));
    j->err = ztd_publish_remove(j->p, j->rel, &j->pc, j->msg, sizeof(j->msg));
}

static enum MHD_Result deleted(struct MHD_Connection *c, ztd_req *r, delete_job *j)
{
    if (!ztd_offload_done(&j->work))
        return MHD_YES;
    if (j->err)
        return ztd_error(c, r, j->err, "%s", j->msg);
    ztd_log(ZTD_LOG_INFO, "deleted %s", j->rel);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    return ztd_queue(c, r, 204, resp, 0);
}

enum MHD_Result ztd_delete_file(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    delete_job *done = ztd_req_ctx_of(r, delete_job_free);
    if (done) /* called again: the unlink has run */
        return deleted(c, r, done);
    delete_job *j = calloc(1, sizeof(*j));
    if (!j)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    j->p = s->publisher;
    j->rel = r->match->file;
    j->pc = (ztd_preconds){ztd_header_list(c, r, "If-Match"),
                           ztd_header_list(c, r, "If-None-Match")};
    ztd_req_set_ctx(r, j, delete_job_free); /* a body it was sent is dropped with it */
    return ztd_offload_start(s, c, &j->work, unlink_file) ? deleted(c, r, j) : MHD_YES;
}
