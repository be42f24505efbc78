/*
 * What a route handler is (handlers/handlers.h lists them; handlers/routes.c says
 * which answers what): called with the server, the connection and the
 * request's state; queues an answer (response.h), or returns MHD_YES to be
 * called again (after more body, or after offloaded work), or MHD_NO to close
 * the connection.
 */
#ifndef ZTD_HANDLER_H
#define ZTD_HANDLER_H

#include <microhttpd.h>
#include <stddef.h>

#include "core/server.h"
#include "http/request.h"

/* The request (and its body, if any) is complete; or begin: its head is. */
typedef enum MHD_Result ztd_handler(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
/* A piece of the request body, n > 0 bytes. */
typedef enum MHD_Result ztd_data_handler(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                         const char *data, size_t n);

#endif
