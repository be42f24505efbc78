/*
 * Every route handler, for the route table (handlers/routes.c), which is the one
 * place that says which answers what. Handlers are siblings: none calls
 * another; what they share is in store/ and http/. Each is called once the
 * request is complete (after its body, for routes that take one; again when
 * it offloaded work, http/offload.h); the begin/data callbacks of routes with
 * a body run before and during it.
 */
#ifndef ZTD_HANDLERS_H
#define ZTD_HANDLERS_H

#include "http/handler.h"
#include "http/routes.h"

/* The /v1 route table (routes.c): ZTD_ROUTE_COUNT rows, indexed by route id,
 * for ztd_server.routes and ztd_route_def_of(). Static storage. */
const ztd_route_def *ztd_v1_routes(void);

/* ---- ops.c: GET /healthz (the process answers), GET /readyz (the first
 * catalog scan is done and it is not shutting down), GET /metrics (Prometheus
 * text). No token; answered even near the connection limit. */
ztd_handler ztd_ops_healthz, ztd_ops_readyz, ztd_ops_metrics;

/* ---- listing.c: GET /v1/files, the whole listing built at scan time when no
 * paging parameter is given, otherwise one page (http/listing_query.h), merged
 * with the upstream's listing when there is one; 400 for a malformed
 * parameter. */
ztd_handler ztd_list_files;

/* ---- read.c: GET of a file's manifest, raw bytes,
 * objects and components (ztd_read_file); of components by sha256 (blobs).
 * Byte responses go through http/body.h (ranges, conditionals, zstd
 * decoding). Each pins its catalog entry as the request's state. */
ztd_handler ztd_read_file, ztd_read_blob;

/* ---- view.c: GET /v1/files/{file}/safetensors, the file's safetensors
 * view (byte for byte what `zt convert` writes), over the entry's source. */
ztd_handler ztd_read_view;

/* ---- put.c: PUT /v1/files/{file}, a whole .zt file in one request body,
 * streamed into a staging file (hashed beside it when the client sent its
 * digest); then verified, fsynced and published off libmicrohttpd's threads.
 * begin: name, declared size, digest header, preconditions, slot, disk. */
ztd_handler ztd_put_begin, ztd_put_end;
ztd_data_handler ztd_put_data;

/* ---- delete.c: DELETE /v1/files/{file}, the regular file at ROOT/{file}
 * whatever its state in the catalog, under the write preconditions. */
ztd_handler ztd_delete_file;

/* ---- session.c: component upload sessions, the append-only writer over HTTP.
 *   POST   /v1/uploads                       open (JSON {"file", "attributes"})
 *   GET    /v1/uploads/{id}                   state, for resuming
 *   DELETE /v1/uploads/{id}                   abort
 *   POST   /v1/uploads/{id}/commit            objects -> manifest -> publish
 *   PUT    /v1/uploads/{id}/components/{key}  one component: checks and the
 *          writer's component begun before the body, bytes written as they
 *          come, digest checked and component ended after it */
ztd_handler ztd_session_open, ztd_session_status, ztd_session_abort, ztd_session_commit;
ztd_handler ztd_component_begin, ztd_component_end;
ztd_data_handler ztd_component_data;

/* ---- prefetch.c: with --upstream, files fetched into the cache ahead of use
 * (upstream/prefetch.h).
 *   POST /v1/prefetch  queue a job (JSON {"files": [...], "prefix": ...}); 202
 *   GET  /v1/prefetch  every job kept, with its progress */
ztd_handler ztd_prefetch_post, ztd_prefetch_status;

#endif
