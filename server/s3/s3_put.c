/*
 * The S3 front's writes (s3_put.h). Not yet: each answers NotImplemented.
 */
#include "s3/s3_put.h"
#include "s3/s3_error.h"

enum MHD_Result ztd_s3_put_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                 const ztd_s3_req *q)
{
    (void)s;
    (void)q;
    return ztd_s3_error(c, r, ZTD_S3_NOT_IMPLEMENTED, "PutObject is not implemented yet");
}

enum MHD_Result ztd_s3_put_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                               const ztd_s3_req *q)
{
    (void)s;
    (void)q;
    return ztd_s3_error(c, r, ZTD_S3_NOT_IMPLEMENTED, "PutObject is not implemented yet");
}

bool ztd_s3_put_resume(ztd_server *s, struct MHD_Connection *c, ztd_req *r, enum MHD_Result *out)
{
    (void)s;
    (void)c;
    (void)r;
    (void)out;
    return false;
}

enum MHD_Result ztd_s3_body_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    (void)s;
    (void)c;
    (void)r;
    return MHD_YES;
}

enum MHD_Result ztd_s3_body_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                 const char *data, size_t n)
{
    (void)s;
    (void)c;
    (void)r;
    (void)data;
    (void)n;
    return MHD_YES;
}

enum MHD_Result ztd_s3_delete_object(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                     const ztd_s3_req *q)
{
    (void)s;
    (void)q;
    return ztd_s3_error(c, r, ZTD_S3_NOT_IMPLEMENTED, "DeleteObject is not implemented yet");
}

enum MHD_Result ztd_s3_delete_objects(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                      const ztd_s3_req *q)
{
    (void)s;
    (void)q;
    return ztd_s3_error(c, r, ZTD_S3_NOT_IMPLEMENTED, "DeleteObjects is not implemented yet");
}
