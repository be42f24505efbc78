/* Small JSON request bodies (see json_body.h). */
#include "http/json_body.h"
#include "core/grow.h"
#include "http/response.h"

#include <stdlib.h>
#include <string.h>

typedef struct json_buf {
    char *p;
    size_t len, cap;
} json_buf;

static void json_buf_free(void *ctx)
{
    json_buf *b = ctx;
    free(b->p);
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
    if (ztd_grow(&b->p, &b->cap, b->len + n) != 0)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = 0;
    return MHD_YES;
}

ztd_json_text ztd_json_body(const ztd_req *r)
{
    const json_buf *b = r->ctx_free == json_buf_free ? r->ctx : NULL;
    return b ? (ztd_json_text){b->p, b->len} : (ztd_json_text){NULL, 0};
}
