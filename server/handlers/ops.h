/*
 * Operations routes: GET /healthz (the process answers), GET /readyz (the
 * first catalog scan is done and it is not shutting down) and GET /metrics
 * (Prometheus text). No token needed; answered even near the connection limit.
 */
#ifndef ZTD_OPS_H
#define ZTD_OPS_H

#include <microhttpd.h>

#include "core/server.h"
#include "http/request.h"

enum MHD_Result ztd_ops_healthz(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
enum MHD_Result ztd_ops_readyz(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
enum MHD_Result ztd_ops_metrics(ztd_server *s, struct MHD_Connection *c, ztd_req *r);

#endif
