/*
 * S3 multipart uploads: CreateMultipartUpload, UploadPart, Complete, Abort,
 * ListParts, ListMultipartUploads. Uploads live in this process's memory
 * (at most 1000 at once, 10,000 parts each); each part is a file in this
 * instance's staging directory, so a restart forgets them and the staging
 * clean-up removes their parts. Complete checks the list (ascending, every
 * part there with its ETag, every part but the last at least 5 MiB), then
 * off libmicrohttpd's threads concatenates the parts into one staging file
 * that is checked and published like a PutObject (store/put_file.h).
 */
#ifndef ZTD_S3_MULTIPART_H
#define ZTD_S3_MULTIPART_H

#include "s3/s3_internal.h"

enum MHD_Result ztd_s3_mpu_create(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                  const ztd_s3_req *q);
/* UploadPart's head (checks, the part's staging file), and its end. */
enum MHD_Result ztd_s3_part_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                  const ztd_s3_req *q, const ztd_s3_auth *auth);
enum MHD_Result ztd_s3_part_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                const ztd_s3_req *q);
/* CompleteMultipartUpload's head (its document is collected), and its end. */
enum MHD_Result ztd_s3_complete_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                      const ztd_s3_req *q);
enum MHD_Result ztd_s3_complete(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                const ztd_s3_req *q);
enum MHD_Result ztd_s3_mpu_abort(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                 const ztd_s3_req *q);
enum MHD_Result ztd_s3_list_parts(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                  const ztd_s3_req *q);
enum MHD_Result ztd_s3_list_mpus(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                 const ztd_s3_req *q);
/* A piece of a part's body or of Complete's document: true when r is one
 * (the answer in *ret). */
bool ztd_s3_mpu_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r, const char *data,
                     size_t n, enum MHD_Result *ret);
/* Called again after Complete's offloaded work: true with the answer. */
bool ztd_s3_mpu_resume(ztd_server *s, struct MHD_Connection *c, ztd_req *r, enum MHD_Result *out);

#endif
