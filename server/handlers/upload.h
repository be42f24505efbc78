/*
 * Writes: whole-file PUT and DELETE of /v1/files/{file}, and the component
 * upload sessions under /v1/uploads (session.c). Bodies stream into staging
 * files with constant memory; nothing is visible until it has been validated,
 * fsynced, renamed into place and its directory fsynced.
 */
#ifndef ZTD_UPLOAD_H
#define ZTD_UPLOAD_H

#include "http/headers.h"
#include "http/http.h"

/* Is this (method, route) one handled here? */
bool ztd_upload_handles(ztd_route_id route);
/* First call of such a request: authorise, check limits and preconditions, open
 * staging. May queue an early error (then r->responded is set). */
enum MHD_Result ztd_upload_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
enum MHD_Result ztd_upload_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                const char *data, size_t n);
/* The body is complete: validate, publish, answer. */
enum MHD_Result ztd_upload_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
/* The request ended (completed or not): release what is left, remove staging. */
void ztd_upload_cleanup(ztd_server *s, ztd_req *r);

/* Shared with session.c */
/* 401/403 answer if the request lacks the scope; MHD_YES with r->responded. NULL: allowed. */
bool ztd_authorize(ztd_server *s, struct MHD_Connection *c, ztd_req *r, bool write,
                   enum MHD_Result *ret);
/* Validate the staging file `name`, open as fd and `size` bytes long (structure;
 * with verify_digests every digest and zstd stream, on all cores), and publish it
 * as rel. sync: fsync it meanwhile (a failure answers 507/500); otherwise it is
 * durable already. The staging file is gone afterwards (published or removed);
 * the caller keeps fd. A staging file that something else removed or changed is
 * 500 staging_lost, never a 4xx. */
enum MHD_Result ztd_validate_and_publish(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                         int fd, const char *name, uint64_t size, const char *rel,
                                         bool verify_digests, bool sync);
/* 500 staging_lost: the bytes uploaded for rel are gone (why) through no fault of the client. */
enum MHD_Result ztd_staging_lost(struct MHD_Connection *c, ztd_req *r, const char *rel,
                                 const char *why);
/* Evaluate If-None-Match: * and If-Match against the file on disk. 0 ok, else answered 412. */
int ztd_write_preconditions(ztd_server *s, struct MHD_Connection *c, ztd_req *r, const char *rel,
                            enum MHD_Result *ret);

#endif
