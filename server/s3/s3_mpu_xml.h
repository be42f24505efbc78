/*
 * CompleteMultipartUpload's document: <CompleteMultipartUpload> with up to
 * 10,000 <Part>s, each a <PartNumber> (1-10000) and an <ETag> (quotes
 * optional). Parsed with expat, a DOCTYPE refused. Pure: unit-tested.
 */
#ifndef ZTD_S3_MPU_XML_H
#define ZTD_S3_MPU_XML_H

#include <stddef.h>

#define ZTD_S3_MAX_PARTS 10000

typedef struct ztd_s3_part_ref {
    int number;
    char etag[40]; /* 32 hex digits, quotes removed */
} ztd_s3_part_ref;

/* The parts, in document order, into a malloc'ed array (*n of them); NULL
 * with the reason in why. */
ztd_s3_part_ref *ztd_s3_complete_parse(const char *xml, size_t len, size_t *n, char *why,
                                       size_t cap);

#endif
