/*
 * Read routes: the file listing; a file's manifest, objects, components and
 * raw bytes; components by sha256 (blobs). Byte responses go through
 * http/body.h (ranges, conditionals, zstd decoding).
 */
#ifndef ZTD_READ_H
#define ZTD_READ_H

#include <microhttpd.h>

#include "core/server.h"
#include "http/request.h"

/* GET /v1/files */
enum MHD_Result ztd_read_list(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
/* GET /v1/files/{file}, .../raw, .../objects/{object}[/{component}] */
enum MHD_Result ztd_read_file(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
/* GET /v1/blobs/sha256:{hex} */
enum MHD_Result ztd_read_blob(ztd_server *s, struct MHD_Connection *c, ztd_req *r);

#endif
