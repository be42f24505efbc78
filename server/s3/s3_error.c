/*
 * S3-format answers (s3_error.h): the error table, the error document, and
 * the headers every S3 response carries.
 */
#include "s3/s3_error.h"
#include "core/log.h"
#include "http/response.h"
#include "s3/s3err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    unsigned status;
    const char *code, *msg;
} k_errs[] = {
#define ZTD__S3_ERR_ROW(id, st, code, msg) {st, code, msg},
    ZTD_S3_ERRORS(ZTD__S3_ERR_ROW)
#undef ZTD__S3_ERR_ROW
};

unsigned ztd_s3_err_status(ztd_s3_err e)
{
    return (unsigned)e < ZTD_S3_ERR_COUNT ? k_errs[e].status : 500;
}

const char *ztd_s3_err_code(ztd_s3_err e)
{
    return (unsigned)e < ZTD_S3_ERR_COUNT ? k_errs[e].code : "InternalError";
}

ztd_s3_err ztd_s3_err_from(int pure_err)
{
    const char *code = ztd_s3err_code((ztd_s3err)pure_err);
    for (unsigned i = 0; i < ZTD_S3_ERR_COUNT; i++)
        if (!strcmp(k_errs[i].code, code))
            return (ztd_s3_err)i;
    return ZTD_S3_INTERNAL;
}

bool ztd_s3_request_id(struct MHD_Response *resp, const ztd_req *r)
{
    return MHD_add_response_header(resp, "x-amz-request-id", r->request_id) == MHD_YES;
}

enum MHD_Result ztd_s3_xml_answer(struct MHD_Connection *c, ztd_req *r, unsigned status, ztd_xml *x)
{
    size_t len = 0;
    char *doc = ztd_xml_finish(x, &len);
    if (!doc)
        return MHD_NO;
    struct MHD_Response *resp = ztd_response_owned(doc, len, "application/xml");
    if (resp && !ztd_s3_request_id(resp, r)) {
        MHD_destroy_response(resp);
        resp = NULL;
    }
    return ztd_queue(c, r, status, resp, len);
}

enum MHD_Result ztd_s3_empty_answer(struct MHD_Connection *c, ztd_req *r, unsigned status,
                                    const char *hname, const char *hval)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (resp && (!ztd_s3_request_id(resp, r) ||
                 (hname && MHD_add_response_header(resp, hname, hval) != MHD_YES))) {
        MHD_destroy_response(resp);
        resp = NULL;
    }
    return ztd_queue(c, r, status, resp, 0);
}

static enum MHD_Result verror(struct MHD_Connection *c, ztd_req *r, ztd_s3_err e, const char *hname,
                              const char *hval, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    unsigned st = ztd_s3_err_status(e);
    ztd_log(st >= 500 ? ZTD_LOG_ERROR : ZTD_LOG_INFO, "%u %s %s: %s: %s", st, r->method,
            r->target ? r->target : "", ztd_s3_err_code(e), msg);
    ztd_xml x;
    ztd_xml_begin(&x);
    ztd_xml_open(&x, "Error", NULL);
    ztd_xml_elem_str(&x, "Code", ztd_s3_err_code(e));
    ztd_xml_elem_str(&x, "Message", msg);
    ztd_xml_elem_str(&x, "Resource", r->path ? r->path : "");
    ztd_xml_elem_str(&x, "RequestId", r->request_id);
    ztd_xml_close(&x, "Error");
    size_t len = 0;
    char *doc = ztd_xml_finish(&x, &len);
    if (!doc)
        return MHD_NO;
    struct MHD_Response *resp = ztd_response_owned(doc, len, "application/xml");
    if (resp && (!ztd_s3_request_id(resp, r) ||
                 (hname && MHD_add_response_header(resp, hname, hval) != MHD_YES))) {
        MHD_destroy_response(resp);
        resp = NULL;
    }
    return ztd_queue(c, r, st, resp, len);
}

static enum MHD_Result error_of(struct MHD_Connection *c, ztd_req *r, ztd_s3_err e, const char *fmt,
                                ...)
{
    va_list ap;
    va_start(ap, fmt);
    enum MHD_Result ret = verror(c, r, e, NULL, NULL, fmt, ap);
    va_end(ap);
    return ret;
}

enum MHD_Result ztd_s3_fail(struct MHD_Connection *c, ztd_req *r, ztd_s3_err e)
{
    return error_of(c, r, e, "%s",
                    k_errs[(unsigned)e < ZTD_S3_ERR_COUNT ? e : ZTD_S3_INTERNAL].msg);
}

enum MHD_Result ztd_s3_error(struct MHD_Connection *c, ztd_req *r, ztd_s3_err e, const char *fmt,
                             ...)
{
    va_list ap;
    va_start(ap, fmt);
    enum MHD_Result ret = verror(c, r, e, NULL, NULL, fmt, ap);
    va_end(ap);
    return ret;
}

enum MHD_Result ztd_s3_error_hdr(struct MHD_Connection *c, ztd_req *r, ztd_s3_err e,
                                 const char *hname, const char *hval, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    enum MHD_Result ret = verror(c, r, e, hname, hval, fmt, ap);
    va_end(ap);
    return ret;
}

/* The S3 error that stands for a shared layer's error, by its status. */
static ztd_s3_err of_status(unsigned status)
{
    switch (status) {
    case 400:
        return ZTD_S3_INVALID_REQUEST;
    case 401:
    case 403:
        return ZTD_S3_ACCESS_DENIED;
    case 404:
        return ZTD_S3_NO_SUCH_KEY;
    case 405:
        return ZTD_S3_METHOD_NOT_ALLOWED;
    case 412:
        return ZTD_S3_PRECONDITION_FAILED;
    case 413:
        return ZTD_S3_ENTITY_TOO_LARGE;
    case 416:
        return ZTD_S3_INVALID_RANGE;
    case 422:
        return ZTD_S3_INVALID_OBJECT;
    case 501:
        return ZTD_S3_NOT_IMPLEMENTED;
    case 502:
        return ZTD_S3_BAD_GATEWAY;
    case 503:
        return ZTD_S3_SERVICE_UNAVAILABLE;
    case 504:
        return ZTD_S3_GATEWAY_TIMEOUT;
    case 507:
        return ZTD_S3_INSUFFICIENT_STORAGE;
    default:
        return ZTD_S3_INTERNAL;
    }
}

enum MHD_Result ztd_s3_shared_error(struct MHD_Connection *c, ztd_req *r, ztd_err e,
                                    const char *msg)
{
    if (ztd_err_retry_after(e)) {
        char ra[16];
        snprintf(ra, sizeof(ra), "%u", ztd_err_retry_after(e));
        return ztd_s3_error_hdr(c, r, of_status(ztd_err_status(e)), "Retry-After", ra, "%s", msg);
    }
    return ztd_s3_error(c, r, of_status(ztd_err_status(e)), "%s", msg);
}
