/*
 * What the S3 front's files share (not for other folders): the operation a
 * request names, parsed from its raw path and query, the bucket table, and
 * the object's ETag and dates in S3's forms. The files: s3_front.c (parse
 * and dispatch; the route row), s3_common.c (what the others share, calling
 * none of them), s3_auth.c (the one authentication function), s3_bucket.c
 * (service and bucket), s3_listing.c with s3_list.c (listings), s3_object.c
 * (GetObject, HeadObject), s3_put.c (PutObject, DeleteObject(s)),
 * s3_multipart.c, s3_sums.c (a plain body's checksums, for PutObject and
 * UploadPart), s3_error.c and s3_xml.c (answers), s3_delete_xml.c and
 * s3_mpu_xml.c (request documents, on s3_expat.c's parser).
 */
#ifndef ZTD_S3_INTERNAL_H
#define ZTD_S3_INTERNAL_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/buckets.h"
#include "core/server.h"
#include "http/auth.h"
#include "http/request.h"
#include "http/router.h"
#include "store/catalog.h"
#include "s3/aws_chunked.h"
#include "s3/sigv4.h"

typedef enum ztd_s3_op {
    S3_OP_NONE,
    S3_OP_LIST_BUCKETS,
    S3_OP_HEAD_BUCKET,
    S3_OP_LOCATION,
    S3_OP_LIST_V1,
    S3_OP_LIST_V2,
    S3_OP_CREATE_BUCKET,
    S3_OP_GET_OBJECT, /* and HEAD */
    S3_OP_PUT_OBJECT,
    S3_OP_DELETE_OBJECT,
    S3_OP_DELETE_OBJECTS,
    S3_OP_CREATE_MPU,      /* CreateMultipartUpload */
    S3_OP_UPLOAD_PART,     /* UploadPart */
    S3_OP_COMPLETE_MPU,    /* CompleteMultipartUpload */
    S3_OP_ABORT_MPU,       /* AbortMultipartUpload */
    S3_OP_LIST_PARTS,      /* ListParts */
    S3_OP_LIST_MPUS,       /* ListMultipartUploads */
    S3_OP_NOT_IMPLEMENTED, /* a known S3 operation this front does not do */
    S3_OP_BAD,             /* the request is refused (err, why) */
} ztd_s3_op;

typedef struct ztd_s3_req {
    ztd_s3_op op;
    ztd_scope scope;
    int err; /* ztd_s3_err, for S3_OP_BAD */
    const char *why;
    const char *what; /* S3_OP_NOT_IMPLEMENTED: the operation, for the message */
    const ztd_bucket *bucket;
    char key[ZTD_PATH_MAX + 1]; /* decoded */
    size_t key_len;
    char name[2 * ZTD_PATH_MAX + 2]; /* the catalog's name: bucket dir + '/' + key */
    size_t name_len;
} ztd_s3_req;

/* The served root (for name checks). */
const char *ztd_s3_root(void);
/* The configured buckets. */
const ztd_buckets *ztd_s3_buckets(void);
/* The access keys of --s3-keys, or NULL when none are configured. */
const struct ztd_secret_table *ztd_s3_keys_table(void); /* s3_keys.h's ztd_s3_keys */
/* Parse r's path and query into q. */
void ztd_s3_parse(struct MHD_Connection *c, const ztd_req *r, ztd_s3_req *q);

/* A query argument, percent-decoded ('+' is a space) into out (cap bytes
 * with the NUL): its length, -1 when absent, -2 when it does not decode or
 * does not fit. A bare "?name" is present with length 0. */
long ztd_s3_arg(struct MHD_Connection *c, const char *name, char *out, size_t cap);
bool ztd_s3_has_arg(struct MHD_Connection *c, const char *name);

/* The ETag S3 clients see for e: its raw ETag in the multipart form
 * "\"<32 hex>-1\"", which no client takes for an MD5 (docs/S3.md); a
 * view's is ztd_s3_view_etag of the file it views. */
void ztd_s3_etag(const ztd_entry *e, char out[96]);
/* The ETag of the safetensors view of entry viewed (a view entry's, which
 * has no file of its own): "<32 hex>-1" from a hash of viewed's raw ETag,
 * so it changes with the file and is never the file's own. */
void ztd_s3_view_etag(const ztd_entry *viewed, char out[96]);
/* An If-Match or If-None-Match list as S3 clients send it, with the ETags
 * ztd_s3_etag gave them ("HEX-1"), rewritten in place to the server's own
 * form ("HEX") that the write preconditions compare with. */
void ztd_s3_etags_to_raw(char *list);
/* Listed as an object: files the catalog can serve. */
bool ztd_s3_entry_listed(const ztd_entry *e);
/* e's mtime as S3's ISO 8601 "2026-11-27T18:23:04.000Z". */
void ztd_s3_iso_time(int64_t mtime_ns, char out[32]);

/* The one place the payload's form is decided, from the headers and the
 * request's verified signature (auth, see ztd_s3_authorized): true with
 * *dec NULL for a plain body; true with an aws-chunked decoder in *dec
 * (caller frees; decoded bytes go to sink, unverified until
 * ztd_awsc_finish() says OK) and x-amz-decoded-content-length (or -1) in
 * *decoded_len; false with the S3 error and its message. Signed streaming
 * bodies need a verified signature (--s3-keys). With dec NULL, only the
 * headers are checked and the decoded length read. */
bool ztd_s3_payload_open(struct MHD_Connection *c, const ztd_s3_auth *auth, ztd_awsc_sink sink,
                         void *ctx, ztd_awsc **dec, int64_t *decoded_len, int *err, char *msg,
                         size_t cap);
/* Why a body sink (the staging of PutObject's or UploadPart's bytes)
 * refused bytes: the S3 error and its message. */
typedef struct ztd_s3_sink_fail {
    bool failed;
    int err; /* ztd_s3_err */
    char msg[256];
} ztd_s3_sink_fail;
/* A piece of a write's body: through the aws-chunked decoder dec (which
 * feeds sink) or, for a plain body, straight to sink(ctx); a refusal is
 * answered with the sink's reason (f) or the decoder's. */
enum MHD_Result ztd_s3_feed(struct MHD_Connection *c, ztd_req *r, ztd_awsc *dec, ztd_awsc_sink sink,
                            void *ctx, const ztd_s3_sink_fail *f, const char *data, size_t n);
/* Why q's key cannot be written (not a served name, not a safe path), or NULL. */
const char *ztd_s3_key_problem(const ztd_s3_req *q);

/* The operations. */
enum MHD_Result ztd_s3_list_buckets(ztd_server *s, struct MHD_Connection *c, ztd_req *r);
enum MHD_Result ztd_s3_bucket_op(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                 const ztd_s3_req *q);
enum MHD_Result ztd_s3_list_objects(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                    const ztd_s3_req *q);
enum MHD_Result ztd_s3_get_object(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                  const ztd_s3_req *q);

/* The one place S3 requests are authenticated: true when r may have scope
 * need, else its S3 error is queued in *ret. With --s3-keys, an AWS
 * Signature Version 4 (header or presigned) is verified and *auth holds the
 * verdict (scope READ or WRITE; the caller wipes it with
 * ztd_s3_auth_clear); otherwise, and for unsigned requests, the bearer
 * tokens and the anonymous-read rule of /v1 (http/auth.h), *auth's scope
 * NONE. */
bool ztd_s3_authorized(ztd_server *s, struct MHD_Connection *c, ztd_req *r, ztd_scope need,
                       ztd_s3_auth *auth, enum MHD_Result *ret);

#endif
