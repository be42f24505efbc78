/*
 * DELETE /v1/files/{file}: remove the regular file at ROOT/{file} (whatever
 * its state in the catalog), under the write preconditions, off
 * libmicrohttpd's threads (store/publish.h).
 */
#ifndef ZTD_DELETE_H
#define ZTD_DELETE_H

#include <microhttpd.h>

#include "core/server.h"
#include "http/request.h"

enum MHD_Result ztd_delete_file(ztd_server *s, struct MHD_Connection *c, ztd_req *r);

#endif
