/*
 * Service and bucket operations of the S3 front: ListBuckets, HeadBucket,
 * GetBucketLocation, and CreateBucket of a configured bucket (already
 * yours). Buckets are configuration (--s3-bucket), never made by requests.
 */
#include "s3/s3_error.h"
#include "s3/s3_internal.h"

#include <string.h>

#define S3_NS "http://s3.amazonaws.com/doc/2006-03-01/"

enum MHD_Result ztd_s3_list_buckets(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    (void)s;
    const ztd_buckets *b = ztd_s3_buckets();
    char date[32];
    ztd_s3_iso_time(0, date);
    ztd_xml x;
    ztd_xml_begin(&x);
    ztd_xml_open(&x, "ListAllMyBucketsResult", S3_NS);
    ztd_xml_open(&x, "Owner", NULL);
    ztd_xml_elem_str(&x, "ID", "ztensord");
    ztd_xml_elem_str(&x, "DisplayName", "ztensord");
    ztd_xml_close(&x, "Owner");
    ztd_xml_open(&x, "Buckets", NULL);
    for (size_t i = 0; i < b->n; i++) {
        ztd_xml_open(&x, "Bucket", NULL);
        ztd_xml_elem_str(&x, "Name", b->b[i].name);
        ztd_xml_elem_str(&x, "CreationDate", date);
        ztd_xml_close(&x, "Bucket");
    }
    ztd_xml_close(&x, "Buckets");
    ztd_xml_close(&x, "ListAllMyBucketsResult");
    return ztd_s3_xml_answer(c, r, 200, &x);
}

enum MHD_Result ztd_s3_bucket_op(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                 const ztd_s3_req *q)
{
    (void)s;
    if (q->op == S3_OP_HEAD_BUCKET)
        return ztd_s3_empty_answer(c, r, 200, "x-amz-bucket-region", "us-east-1");
    if (q->op == S3_OP_CREATE_BUCKET)
        return ztd_s3_fail(c, r, ZTD_S3_BUCKET_EXISTS);
    /* GetBucketLocation: us-east-1 is written as an empty constraint. */
    ztd_xml x;
    ztd_xml_begin(&x);
    ztd_xml_open(&x, "LocationConstraint", S3_NS);
    ztd_xml_close(&x, "LocationConstraint");
    return ztd_s3_xml_answer(c, r, 200, &x);
}
