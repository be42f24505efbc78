/*
 * PUT /v1/files/{file}: a whole .zt file in one request body. The body
 * streams into a staging file with constant memory (hashed beside, when the
 * client sent its digest); once complete the file is verified and fsynced,
 * then published (store/publish.h), off libmicrohttpd's threads.
 */
#ifndef ZTD_PUT_H
#define ZTD_PUT_H

#include <microhttpd.h>
#include <stddef.h>

#include "core/server.h"
#include "http/request.h"

/* After the head: name, declared size, digest header, preconditions, slot,
 * disk; then the staging file. May refuse. */
enum MHD_Result ztd_put_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
enum MHD_Result ztd_put_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r, const char *data,
                             size_t n);
/* The body is complete: its digest, then verify, fsync and publish. */
enum MHD_Result ztd_put_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r);

#endif
