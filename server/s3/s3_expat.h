/*
 * What the S3 front's request documents (DeleteObjects, CompleteMultipart-
 * Upload) share in reading XML with expat: a parser with namespaces, element
 * names with S3's namespace stripped, a DOCTYPE refused, the depth of the
 * element open, the text of the one element being read collected into the
 * document's buffer up to its bound, the first error a handler stops on
 * kept, and the parse's verdict with line and column. Each document's
 * handlers keep the rest of their state. Pure: unit-tested and fuzzed
 * through s3_delete_xml.c and s3_mpu_xml.c.
 */
#ifndef ZTD_S3_EXPAT_H
#define ZTD_S3_EXPAT_H

#include <expat.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct ztd_s3_expat ztd_s3_expat;

/* A document's handler for an element's start or end: name is its local
 * name (ztd_s3_xml_local); x->depth counts it (1 for the root). */
typedef void ztd_s3_expat_elem(ztd_s3_expat *x, const char *name);

/* The first member of a document's parse state, so that the document's
 * handlers get their state back from x. */
struct ztd_s3_expat {
    const char *root;               /* the document element's local name */
    const char *not_root;           /* the reason to stop when the root is another */
    ztd_s3_expat_elem *start, *end; /* the document's handlers (below the root's check) */
    char *text;                     /* the document's buffer for an element's text */
    size_t cap;                     /* ... and the most text it takes */
    const char *too_long;           /* the reason to stop when an element's text is longer */
    /* Kept by the parse: */
    XML_Parser p;
    const char *error; /* the first reason a handler stopped for */
    int depth;         /* of the element open now */
    int in;            /* whose text is collected (the document's code), 0: none */
    size_t tlen;       /* the text collected so far */
};

/* An element's local name: S3's namespace stripped, "" in any other one. */
const char *ztd_s3_xml_local(const char *name);
/* Stop the parse with why (the first reason is kept). */
void ztd_s3_expat_stop(ztd_s3_expat *x, const char *why);
/* Collect the text of the element just started, for the document's code
 * which (not 0); it is read at the element's end, and collection stops there. */
void ztd_s3_expat_collect(ztd_s3_expat *x, int which);
/* Parse the whole document xml (len bytes) with x's handlers. true, or false
 * with why (out of memory, a handler's reason, or expat's error with line
 * and column). */
bool ztd_s3_expat_parse(ztd_s3_expat *x, const char *xml, size_t len, char *why, size_t cap);

#endif
