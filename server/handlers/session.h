/*
 * Component upload sessions over HTTP: the append-only writer, one request
 * at a time.
 *   POST   /v1/uploads                       open (JSON {"file", "attributes"})
 *   PUT    /v1/uploads/{id}/components/{key}  stream one component
 *   GET    /v1/uploads/{id}                   state, for resuming
 *   POST   /v1/uploads/{id}/commit            objects -> manifest -> publish
 *   DELETE /v1/uploads/{id}                   abort
 * The sessions themselves are store/sessions.h; publication store/publish.h.
 */
#ifndef ZTD_SESSION_H
#define ZTD_SESSION_H

#include <microhttpd.h>
#include <stddef.h>

#include "core/server.h"
#include "http/request.h"

enum MHD_Result ztd_session_open(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
enum MHD_Result ztd_session_status(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
enum MHD_Result ztd_session_abort(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
enum MHD_Result ztd_session_commit(ztd_server *s, struct MHD_Connection *c, ztd_req *r);

/* PUT of one component: checks and the writer's component begun before the
 * body; bytes written as they come; digest checked and component ended after. */
enum MHD_Result ztd_component_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
enum MHD_Result ztd_component_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                   const char *data, size_t n);
enum MHD_Result ztd_component_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r);

#endif
