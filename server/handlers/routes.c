/*
 * The /v1 front's route table (see http/routes.h): one row per route. A
 * route's handler, scope and body are decided here and nowhere else. main.c
 * hands it to http.c (ztd_server.routes), which knows no handler by name.
 */
#include "handlers/handlers.h"
#include "http/json_body.h"

#define ROUTE(id, methods, scope, body, begin, data, handler, upload, query)                       \
    [ZTD_ROUTE_##id] = {ZTD_ROUTE_##id, methods, ZTD_SCOPE_##scope, ZTD_REQ_BODY_##body,           \
                        begin,          data,    handler,           upload,                        \
                        query}

/* clang-format off */
static const ztd_route_def k_routes[ZTD_ROUTE_COUNT] = {
    /*    route             methods      scope  body    begin, data, handler, upload, query */
    ROUTE(HEALTHZ,          "GET, HEAD", NONE,  NONE,   NULL, NULL, ztd_ops_healthz, false, false),
    ROUTE(READYZ,           "GET, HEAD", NONE,  NONE,   NULL, NULL, ztd_ops_readyz, false, false),
    ROUTE(METRICS,          "GET, HEAD", NONE,  NONE,   NULL, NULL, ztd_ops_metrics, false, false),
    ROUTE(LIST,             "GET, HEAD", READ,  NONE,   NULL, NULL, ztd_list_files, false, true),
    ROUTE(MANIFEST,         "GET, HEAD", READ,  NONE,   NULL, NULL, ztd_read_file, false, false),
    ROUTE(RAW,              "GET, HEAD", READ,  NONE,   NULL, NULL, ztd_read_file, false, false),
    ROUTE(VIEW,             "GET, HEAD", READ,  NONE,   NULL, NULL, ztd_read_view, false, false),
    ROUTE(OBJECT,           "GET, HEAD", READ,  NONE,   NULL, NULL, ztd_read_file, false, false),
    ROUTE(COMPONENT,        "GET, HEAD", READ,  NONE,   NULL, NULL, ztd_read_file, false, false),
    ROUTE(BLOB,             "GET, HEAD", READ,  NONE,   NULL, NULL, ztd_read_blob, false, false),
    ROUTE(PUT_FILE,         "PUT",       WRITE, STREAM, ztd_put_begin, ztd_put_data, ztd_put_end,
                                                        true, false),
    ROUTE(DELETE_FILE,      "DELETE",    WRITE, JSON,   NULL, ztd_json_body_data, ztd_delete_file,
                                                        false, false),
    ROUTE(UPLOAD_NEW,       "POST",      WRITE, JSON,   NULL, ztd_json_body_data, ztd_session_open,
                                                        false, false),
    ROUTE(UPLOAD_STATUS,    "GET, HEAD", WRITE, NONE,   NULL, NULL, ztd_session_status, false, false),
    ROUTE(UPLOAD_ABORT,     "DELETE",    WRITE, JSON,   NULL, ztd_json_body_data, ztd_session_abort,
                                                        false, false),
    ROUTE(UPLOAD_COMPONENT, "PUT",       WRITE, STREAM, ztd_component_begin, ztd_component_data,
                                                        ztd_component_end, true, true),
    ROUTE(UPLOAD_COMMIT,    "POST",      WRITE, JSON,   NULL, ztd_json_body_data,
                                                        ztd_session_commit, true, false),
    ROUTE(PREFETCH,         "POST",      WRITE, JSON,   NULL, ztd_json_body_data,
                                                        ztd_prefetch_post, false, false),
    ROUTE(PREFETCH_STATUS,  "GET, HEAD", READ,  NONE,   NULL, NULL, ztd_prefetch_status, false, false),
};
/* clang-format on */

const ztd_route_def *ztd_v1_routes(void)
{
    return k_routes;
}
