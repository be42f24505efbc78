/*
 * Component upload sessions: the append-only writer over HTTP.
 *   POST   /v1/uploads                      open (JSON {"file", "attributes"})
 *   PUT    /v1/uploads/{id}/components/{key} stream one component
 *   GET    /v1/uploads/{id}                  state, for resuming
 *   POST   /v1/uploads/{id}/commit           objects -> manifest -> publish
 *   DELETE /v1/uploads/{id}                  abort
 * Idle sessions expire (ztd_sessions_sweep) and their staging files go.
 */
#ifndef ZTD_SESSION_H
#define ZTD_SESSION_H

#include "http/http.h"

typedef struct ztd_sessions ztd_sessions;

ztd_sessions *ztd_sessions_new(void);
/* Abort every session (shutdown). */
void ztd_sessions_free(ztd_sessions *t);
/* Expire sessions idle for longer than idle_ms. */
void ztd_sessions_sweep(ztd_server *s, uint64_t idle_ms);
/* Whether a session last used at last_used (monotonic ms) has been idle for
 * longer than idle_ms at now. Pure. */
bool ztd_session_idle(uint64_t now, uint64_t last_used, uint64_t idle_ms);
size_t ztd_sessions_count(ztd_sessions *t);

/* Upload slots shared by whole-file PUTs and sessions (max_uploads). */
bool ztd_upload_slot_take(ztd_server *s);
void ztd_upload_slot_give(ztd_server *s);

enum MHD_Result ztd_session_component_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
enum MHD_Result ztd_session_component_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                           const char *data, size_t n);
/* End of the request for every session route (and component PUTs). */
enum MHD_Result ztd_session_route_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
/* A component PUT that did not finish: cut its bytes back out. */
void ztd_session_request_done(ztd_server *s, ztd_req *r);
/* Collect a small JSON request body (capped). */
enum MHD_Result ztd_json_body_append(struct MHD_Connection *c, ztd_req *r, const char *data,
                                     size_t n);

#endif
