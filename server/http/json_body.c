/* Small JSON request bodies (see json_body.h). */
#include "http/json_body.h"
#include "core/text_buf.h"
#include "http/response.h"

#include <stdlib.h>
#include <string.h>

typedef ztd_text json_buf;

static void json_buf_free(void *ctx)
{
    json_buf *b = ctx;
    ztd_text_discard(b);
    free(b);
}

enum MHD_Result ztd_json_body_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                   const char *data, size_t n)
{
    (void)s;
    json_buf *b = r->ctx;
    if (!b) {
        if (!(b = calloc(1, sizeof(*b))))
            return ztd_fail(c, r, ZTD_ERR_INTERNAL);
        ztd_req_set_ctx(r, b, json_buf_free);
    }
    if (b->len + n > ZTD_JSON_BODY_MAX)
        return ztd_error(c, r, ZTD_ERR_TOO_LARGE, "JSON body larger than %u bytes",
                         ZTD_JSON_BODY_MAX);
    ztd_text_put(b, data, n);
    return b->failed ? ztd_fail(c, r, ZTD_ERR_INTERNAL) : MHD_YES;
}

ztd_json_text ztd_json_body(const ztd_req *r)
{
    const json_buf *b = ztd_req_ctx_of(r, json_buf_free);
    return b ? (ztd_json_text){b->p, b->len} : (ztd_json_text){NULL, 0};
}
