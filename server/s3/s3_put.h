/*
 * The S3 front's writes: PutObject streamed into the staging and atomic
 * publish that PUT /v1/files uses (store/uploads.h), DeleteObject, and
 * DeleteObjects (an XML body collected whole, at most 1 MiB).
 */
#ifndef ZTD_S3_PUT_H
#define ZTD_S3_PUT_H

#include "s3/s3_internal.h"

/* PutObject: the head is in (checks, staging); the body; the end. */
enum MHD_Result ztd_s3_put_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                 const ztd_s3_req *q, const ztd_s3_auth *auth);
enum MHD_Result ztd_s3_put_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                               const ztd_s3_req *q);
/* Called again after offloaded work (verify and publish): true with the
 * answer in *out, false when r has no such work. */
bool ztd_s3_put_resume(ztd_server *s, struct MHD_Connection *c, ztd_req *r, enum MHD_Result *out);

/* A small body collected whole (DeleteObjects). */
enum MHD_Result ztd_s3_body_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                  const ztd_s3_req *q);
/* Any body piece: to the PutObject staging, or the collected body, or dropped. */
enum MHD_Result ztd_s3_body_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                 const char *data, size_t n);

enum MHD_Result ztd_s3_delete_object(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                     const ztd_s3_req *q);
enum MHD_Result ztd_s3_delete_objects(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                      const ztd_s3_req *q);

#endif
