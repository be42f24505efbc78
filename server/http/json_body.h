/*
 * Small JSON request bodies (session open and commit; DELETE reads and drops
 * what it is sent), collected whole before the handler runs, up to
 * ZTD_JSON_BODY_MAX bytes (413 beyond). The data callback of such routes in
 * the route table; the bytes are the request's state until the handler takes
 * its own.
 */
#ifndef ZTD_JSON_BODY_H
#define ZTD_JSON_BODY_H

#include <microhttpd.h>
#include <stddef.h>

#include "core/server.h"
#include "http/request.h"

#define ZTD_JSON_BODY_MAX (64u << 20)

enum MHD_Result ztd_json_body_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                   const char *data, size_t n);
/* The body collected (NUL-terminated), or NULL and 0 when none came. */
typedef struct ztd_json_text {
    const char *p;
    size_t n;
} ztd_json_text;
ztd_json_text ztd_json_body(const ztd_req *r);

#endif
