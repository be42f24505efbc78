/*
 * Prefetch routes (see handlers.h): POST /v1/prefetch queues a job of files
 * and prefixes (upstream/prefetch.h) and answers its progress at once (202);
 * GET /v1/prefetch answers every job kept.
 */
#include "core/json_line.h"
#include "handlers/handlers.h"
#include "http/json_body.h"
#include "http/prefetch_json.h"
#include "http/response.h"
#include "upstream/prefetch.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static enum MHD_Result send_json_obj(struct MHD_Connection *c, ztd_req *r, unsigned status,
                                     json_t *o)
{
    char *text = ztd_json_line(o, NULL);
    json_decref(o);
    if (!text)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    enum MHD_Result ret = ztd_json(c, r, status, text, strlen(text), 1);
    free(text);
    return ret;
}

enum MHD_Result ztd_prefetch_post(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    if (!s->prefetch)
        return ztd_fail(c, r, ZTD_ERR_NO_UPSTREAM);
    ztd_json_text body = ztd_json_body(r);
    ztd_prefetch_request pr;
    char msg[512];
    ztd_err err = ztd_prefetch_parse(body.p, body.n, &pr, msg, sizeof(msg));
    if (err)
        return ztd_error(c, r, err, "%s", msg);
    uint64_t id = 0;
    enum MHD_Result ret;
    if (ztd_prefetch_submit(s->prefetch, pr.names, pr.n, false, &id) != 0)
        ret = ztd_fail(c, r, ZTD_ERR_INTERNAL);
    else
        ret = send_json_obj(c, r, 202, ztd_prefetch_job_json(s->prefetch, id));
    ztd_prefetch_request_free(&pr);
    return ret;
}

enum MHD_Result ztd_prefetch_status(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    if (!s->prefetch)
        return ztd_fail(c, r, ZTD_ERR_NO_UPSTREAM);
    return send_json_obj(c, r, 200, ztd_prefetch_json(s->prefetch));
}
