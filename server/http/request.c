/* Per-request state (see request.h). */
#include "http/request.h"

void ztd_req_set_ctx(ztd_req *r, void *ctx, void (*ctx_free)(void *ctx))
{
    if (r->ctx && r->ctx_free)
        r->ctx_free(r->ctx);
    r->ctx = ctx;
    r->ctx_free = ctx_free;
}

void *ztd_req_ctx_of(const ztd_req *r, void (*ctx_free)(void *ctx))
{
    return r->ctx_free == ctx_free ? r->ctx : NULL;
}
