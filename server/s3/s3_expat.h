/*
 * What the S3 front's request documents (DeleteObjects, CompleteMultipart-
 * Upload) share in reading XML with expat: a parser with namespaces, element
 * names with S3's namespace stripped, a DOCTYPE refused, the first error a
 * handler stops on kept, and the parse's verdict with line and column. Each
 * document's handlers keep their own state. Pure: unit-tested and fuzzed
 * through s3_delete_xml.c and s3_mpu_xml.c.
 */
#ifndef ZTD_S3_EXPAT_H
#define ZTD_S3_EXPAT_H

#include <expat.h>
#include <stdbool.h>
#include <stddef.h>

/* The first member of a document's parse state: its handlers get that
 * state as user data, and ztd_s3_expat_stop() takes it. */
typedef struct ztd_s3_expat {
    XML_Parser p;
    const char *error; /* the first reason a handler stopped for */
} ztd_s3_expat;

/* An element's local name: S3's namespace stripped, "" in any other one. */
const char *ztd_s3_xml_local(const char *name);
/* Stop the parse with why (the first reason is kept). */
void ztd_s3_expat_stop(ztd_s3_expat *x, const char *why);
/* Parse the whole document xml (len bytes) with these handlers; ud is the
 * document's state, which begins with x. true, or false with why (out of
 * memory, a handler's reason, or expat's error with line and column). */
bool ztd_s3_expat_parse(ztd_s3_expat *x, void *ud, const char *xml, size_t len,
                        XML_StartElementHandler start, XML_EndElementHandler end,
                        XML_CharacterDataHandler text, char *why, size_t cap);

#endif
