/* DELETE /v1/files/{file} (see delete.h). */
#include "handlers/delete.h"
#include "core/log.h"
#include "http/response.h"
#include "store/publish.h"

enum MHD_Result ztd_delete_file(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    const char *rel = r->match->file;
    ztd_preconds pc = {ztd_header(c, "If-Match"), ztd_header(c, "If-None-Match")};
    char msg[512];
    ztd_err e = ztd_publish_remove(s->publisher, rel, &pc, msg, sizeof(msg));
    if (e)
        return ztd_error(c, r, e, "%s", msg);
    ztd_log(ZTD_LOG_INFO, "deleted %s", rel);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    return ztd_queue(c, r, 204, resp, 0);
}
