/*
 * The S3 front's router and dispatch (s3_front.h): a request's raw path
 * (/{bucket}/{key}, path style) and query name one operation; the row in the
 * route table streams bodies (PutObject) and calls begin, data and the
 * handler, which hand each operation to its own file (s3_internal.h).
 * Authentication happens once, in begin, through ztd_s3_authorized().
 *
 * Virtual-hosted-style requests (bucket in the Host header) are not
 * supported: the Host is not looked at, so such a request is read as a
 * path-style one and names a bucket that does not exist.
 */
#include "s3/s3_front.h"
#include "core/dates.h"
#include "http/response.h"
#include "http/source_answer.h"
#include "s3/s3_error.h"
#include "s3/s3_internal.h"
#include "s3/s3_multipart.h"
#include "s3/s3_put.h"
#include "store/names.h"
#include "store/validators.h"

#include <stdlib.h>
#include <string.h>

#define S3_KEY_MAX 1024 /* S3's longest key, in bytes */

/* ---- parsing */

static void bad(ztd_s3_req *q, ztd_s3_err e, const char *why)
{
    q->op = S3_OP_BAD;
    q->err = (int)e;
    q->why = why;
}

static void not_implemented(ztd_s3_req *q, const char *what)
{
    q->op = S3_OP_NOT_IMPLEMENTED;
    q->what = what;
}

/* Subresources this front does not serve, on buckets and objects alike. */
static const char *unsupported_subresource(struct MHD_Connection *c)
{
    static const char *const subs[] = {"acl",
                                       "policy",
                                       "cors",
                                       "lifecycle",
                                       "tagging",
                                       "versioning",
                                       "website",
                                       "logging",
                                       "notification",
                                       "replication",
                                       "encryption",
                                       "object-lock",
                                       "retention",
                                       "legal-hold",
                                       "torrent",
                                       "restore",
                                       "select",
                                       "accelerate",
                                       "analytics",
                                       "inventory",
                                       "metrics",
                                       "ownershipControls",
                                       "publicAccessBlock",
                                       "requestPayment",
                                       "intelligent-tiering",
                                       "attributes",
                                       "versions",
                                       "versionId",
                                       "policyStatus"};
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
        if (ztd_s3_has_arg(c, subs[i]))
            return subs[i];
    return NULL;
}

static void parse_bucket_op(struct MHD_Connection *c, const char *method, ztd_s3_req *q)
{
    const char *sub;
    q->scope = ZTD_SCOPE_READ;
    if (!strcmp(method, "HEAD")) {
        q->op = S3_OP_HEAD_BUCKET;
    } else if (!strcmp(method, "GET")) {
        if (ztd_s3_has_arg(c, "location"))
            q->op = S3_OP_LOCATION;
        else if ((sub = unsupported_subresource(c)) != NULL)
            not_implemented(q, sub);
        else if (ztd_s3_has_arg(c, "uploads"))
            q->op = S3_OP_LIST_MPUS;
        else
            q->op = ztd_s3_has_arg(c, "list-type") ? S3_OP_LIST_V2 : S3_OP_LIST_V1;
    } else if (!strcmp(method, "PUT")) {
        q->op = (sub = unsupported_subresource(c)) ? S3_OP_NOT_IMPLEMENTED : S3_OP_CREATE_BUCKET;
        q->what = sub;
    } else if (!strcmp(method, "POST") && ztd_s3_has_arg(c, "delete")) {
        q->op = S3_OP_DELETE_OBJECTS;
        q->scope = ZTD_SCOPE_WRITE;
    } else {
        not_implemented(q, !strcmp(method, "DELETE") ? "DeleteBucket" : "this bucket operation");
    }
}

static void parse_object_op(struct MHD_Connection *c, const char *method, ztd_s3_req *q)
{
    const char *sub = unsupported_subresource(c);
    q->scope = ZTD_SCOPE_READ;
    bool upload = ztd_s3_has_arg(c, "uploadId");
    bool copy = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "x-amz-copy-source") != NULL;
    if (!strcmp(method, "GET") || !strcmp(method, "HEAD")) {
        if (sub)
            not_implemented(q, sub);
        else if (upload && !strcmp(method, "GET"))
            q->op = S3_OP_LIST_PARTS;
        else if (upload || ztd_s3_has_arg(c, "partNumber"))
            not_implemented(q, "partNumber on GetObject and HeadObject");
        else
            q->op = S3_OP_GET_OBJECT;
        return;
    }
    q->scope = ZTD_SCOPE_WRITE;
    if (sub) {
        not_implemented(q, sub);
    } else if (!strcmp(method, "PUT")) {
        if (copy)
            not_implemented(q, upload ? "UploadPartCopy" : "CopyObject");
        else
            q->op = upload ? S3_OP_UPLOAD_PART : S3_OP_PUT_OBJECT;
    } else if (!strcmp(method, "DELETE")) {
        q->op = upload ? S3_OP_ABORT_MPU : S3_OP_DELETE_OBJECT;
    } else if (upload) {
        q->op = S3_OP_COMPLETE_MPU;
    } else if (ztd_s3_has_arg(c, "uploads")) {
        q->op = S3_OP_CREATE_MPU;
    } else {
        not_implemented(q, "POST on an object");
    }
}

/* The catalog's name for the key: the bucket's directory, then the key. */
static void name_of(ztd_s3_req *q)
{
    const ztd_bucket *b = q->bucket;
    size_t o = 0;
    if (b->dir_len) {
        memcpy(q->name, b->dir, b->dir_len);
        q->name[b->dir_len] = '/';
        o = b->dir_len + 1;
    }
    memcpy(q->name + o, q->key, q->key_len + 1);
    q->name_len = o + q->key_len;
}

void ztd_s3_parse(struct MHD_Connection *c, const ztd_req *r, ztd_s3_req *q)
{
    const char *p = r->path + 1, *slash;
    q->op = S3_OP_NONE;
    q->bucket = NULL;
    q->key[0] = q->name[0] = 0;
    q->key_len = q->name_len = 0;
    q->what = q->why = NULL;
    q->scope = ZTD_SCOPE_READ;
    if (!*p) {
        if (!strcmp(r->method, "GET") || !strcmp(r->method, "HEAD"))
            q->op = S3_OP_LIST_BUCKETS;
        else
            bad(q, ZTD_S3_METHOD_NOT_ALLOWED, "only GET (ListBuckets) is allowed on the service");
        return;
    }
    slash = strchr(p, '/');
    size_t bl = slash ? (size_t)(slash - p) : strlen(p);
    if (!(q->bucket = ztd_buckets_find(ztd_s3_buckets(), p, bl))) {
        if (!strcmp(r->method, "PUT") && (!slash || !slash[1]))
            not_implemented(q, "CreateBucket (buckets are configured with --s3-bucket)");
        else
            bad(q, ZTD_S3_NO_SUCH_BUCKET, "The specified bucket does not exist");
        return;
    }
    long kl = slash ? ztd_url_decode(slash + 1, strlen(slash + 1), q->key, ZTD_PATH_MAX, false) : 0;
    if (kl < 0)
        return bad(q, ZTD_S3_INVALID_ARGUMENT, "malformed percent-encoding in the key");
    q->key_len = (size_t)kl;
    if (!kl)
        return parse_bucket_op(c, r->method, q);
    if (kl > S3_KEY_MAX)
        return bad(q, ZTD_S3_KEY_TOO_LONG, "Your key is too long");
    if (memchr(q->key, 0, (size_t)kl))
        return bad(q, ZTD_S3_INVALID_ARGUMENT, "the key holds a NUL byte");
    name_of(q);
    parse_object_op(c, r->method, q);
}

/* ---- dispatch */

static enum MHD_Result answer(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                              const ztd_s3_req *q)
{
    switch (q->op) {
    case S3_OP_LIST_BUCKETS:
        return ztd_s3_list_buckets(s, c, r);
    case S3_OP_HEAD_BUCKET:
    case S3_OP_LOCATION:
    case S3_OP_CREATE_BUCKET:
        return ztd_s3_bucket_op(s, c, r, q);
    case S3_OP_LIST_V1:
    case S3_OP_LIST_V2:
        return ztd_s3_list_objects(s, c, r, q);
    case S3_OP_GET_OBJECT:
        return ztd_s3_get_object(s, c, r, q);
    case S3_OP_PUT_OBJECT:
        return ztd_s3_put_end(s, c, r, q);
    case S3_OP_DELETE_OBJECT:
        return ztd_s3_delete_object(s, c, r, q);
    case S3_OP_DELETE_OBJECTS:
        return ztd_s3_delete_objects(s, c, r, q);
    case S3_OP_CREATE_MPU:
        return ztd_s3_mpu_create(s, c, r, q);
    case S3_OP_UPLOAD_PART:
        return ztd_s3_part_end(s, c, r, q);
    case S3_OP_COMPLETE_MPU:
        return ztd_s3_complete(s, c, r, q);
    case S3_OP_ABORT_MPU:
        return ztd_s3_mpu_abort(s, c, r, q);
    case S3_OP_LIST_PARTS:
        return ztd_s3_list_parts(s, c, r, q);
    case S3_OP_LIST_MPUS:
        return ztd_s3_list_mpus(s, c, r, q);
    case S3_OP_NOT_IMPLEMENTED:
        return ztd_s3_error(c, r, ZTD_S3_NOT_IMPLEMENTED,
                            "%s is not implemented by ztensord's S3 front (docs/S3.md)",
                            q->what ? q->what : "this operation");
    case S3_OP_BAD:
        return ztd_s3_error(c, r, (ztd_s3_err)q->err, "%s", q->why ? q->why : "bad request");
    default:
        return ztd_s3_fail(c, r, ZTD_S3_INTERNAL);
    }
}

/* The head is in: authenticate, and set up what the body goes to. */
static enum MHD_Result front_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    ztd_s3_req *q = malloc(sizeof(*q));
    enum MHD_Result ret = MHD_YES;
    ztd_s3_auth auth;
    r->error_answer = ztd_s3_shared_error;
    if (!q)
        return MHD_NO;
    ztd_s3_parse(c, r, q);
    bool refused = q->op == S3_OP_BAD || q->op == S3_OP_NOT_IMPLEMENTED;
    if (refused && (!strcmp(r->method, "PUT") || !strcmp(r->method, "POST"))) {
        ret = answer(s, c, r, q); /* before the body the client would waste */
        free(q);
        return ret;
    }
    if (!refused && !ztd_s3_authorized(s, c, r, q->scope, &auth, &ret)) {
        free(q);
        return ret;
    }
    if (q->op == S3_OP_PUT_OBJECT)
        ret = ztd_s3_put_begin(s, c, r, q, &auth);
    else if (q->op == S3_OP_DELETE_OBJECTS)
        ret = ztd_s3_body_begin(s, c, r, q);
    else if (q->op == S3_OP_UPLOAD_PART)
        ret = ztd_s3_part_begin(s, c, r, q, &auth);
    else if (q->op == S3_OP_COMPLETE_MPU)
        ret = ztd_s3_complete_begin(s, c, r, q);
    ztd_s3_auth_clear(&auth); /* the decoders copied the signing key */
    free(q);
    return ret;
}

static enum MHD_Result front_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                  const char *data, size_t n)
{
    enum MHD_Result ret;
    if (ztd_s3_mpu_data(s, c, r, data, n, &ret))
        return ret;
    return ztd_s3_body_data(s, c, r, data, n);
}

/* The request is complete (or resumed after offloaded work). */
static enum MHD_Result front_handler(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    enum MHD_Result ret;
    r->error_answer = ztd_s3_shared_error;
    if (ztd_s3_put_resume(s, c, r, &ret) || ztd_s3_mpu_resume(s, c, r, &ret) ||
        ztd_answer_resume(s, c, r, &ret))
        return ret;
    ztd_s3_req *q = malloc(sizeof(*q));
    if (!q)
        return MHD_NO;
    ztd_s3_parse(c, r, q);
    ret = answer(s, c, r, q);
    free(q);
    return ret;
}

static const ztd_route_def k_row = {
    .id = ZTD_ROUTE_S3,
    .methods = "GET, HEAD, PUT, POST, DELETE",
    .scope = ZTD_SCOPE_NONE, /* the front authenticates: ztd_s3_authorized() */
    .body = ZTD_REQ_BODY_STREAM,
    .begin = front_begin,
    .data = front_data,
    .handler = front_handler,
    .upload = false,
    .query = false, /* S3 reads its own arguments */
};

const ztd_route_def *ztd_s3_route(void)
{
    return &k_row;
}
