/*
 * The S3 error table of s3err.h, as lookups.
 */
#include "s3/s3err.h"

#include <stddef.h>

typedef struct row {
    int status;
    const char *code, *name;
} row;

static const row rows[] = {
#define ZTD_S3ERR_ROW(id, status, code) {status, code, #id},
    ZTD_S3ERRS(ZTD_S3ERR_ROW)
#undef ZTD_S3ERR_ROW
};

static const row *find(ztd_s3err e)
{
    return (unsigned)e < sizeof(rows) / sizeof(rows[0]) ? &rows[e] : NULL;
}

const char *ztd_s3err_code(ztd_s3err e)
{
    return find(e) ? find(e)->code : "InternalError";
}

int ztd_s3err_status(ztd_s3err e)
{
    return find(e) ? find(e)->status : 500;
}

const char *ztd_s3err_name(ztd_s3err e)
{
    return find(e) ? find(e)->name : "INTERNAL";
}
