/*
 * What the S3 front's request documents (DeleteObjects, CompleteMultipart-
 * Upload) share in reading XML with expat: a parser with namespaces, element
 * names with S3's namespace stripped, a DOCTYPE refused, the root element
 * checked, the repeated items under it opened and closed, the text of the
 * field being read collected into the document's buffer up to its bound, the
 * first error a handler stops on kept, and the parse's verdict with line and
 * column. Each document says what its items and fields mean. Pure: unit-tested and fuzzed
 * through s3_delete_xml.c and s3_mpu_xml.c.
 */
#ifndef ZTD_S3_EXPAT_H
#define ZTD_S3_EXPAT_H

#include <expat.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct ztd_s3_expat ztd_s3_expat;

/* An element whose text the document reads: its local name, its depth (2:
 * under the root; 3: inside an item) and the document's code for it (not 0). */
typedef struct ztd_s3_field {
    const char *name;
    int depth, code;
} ztd_s3_field;

/* The first member of a document's parse state, so that the document's
 * handlers get their state back from x. A document is its root element, a
 * repeated item under it (<Object>, <Part>) and the fields it reads. */
struct ztd_s3_expat {
    const char *root;           /* the document element's local name */
    const char *not_root;       /* the reason to stop when the root is another */
    const char *item;           /* the repeated element's local name */
    const char *no_item;        /* the reason to refuse a document without one */
    const ztd_s3_field *fields; /* ended by one with a NULL name */
    /* An item starts (ztd_s3_expat_stop() to refuse it) or ends; a field's
     * text is complete (text[0..tlen)). */
    void (*item_open)(ztd_s3_expat *x);
    void (*item_close)(ztd_s3_expat *x);
    void (*field)(ztd_s3_expat *x, int code);
    char *text;           /* the document's buffer for a field's text */
    size_t cap;           /* ... and the most text it takes */
    const char *too_long; /* the reason to stop when a field's text is longer */
    /* Kept by the parse: */
    XML_Parser p;
    const char *error; /* the first reason a handler stopped for */
    int depth;         /* of the element open now */
    bool in_item;      /* inside an item */
    size_t items;      /* the items closed without an error */
    int in;            /* the code of the field whose text is collected, 0: none */
    int in_depth;      /* ... and its depth (a child's end stops the collection) */
    size_t tlen;       /* the text collected so far */
};

/* An element's local name: S3's namespace stripped, "" in any other one. */
const char *ztd_s3_xml_local(const char *name);
/* Stop the parse with why (the first reason is kept). */
void ztd_s3_expat_stop(ztd_s3_expat *x, const char *why);
/* Parse the whole document xml (len bytes) as x describes. true, or false
 * with why (out of memory, a handler's reason, expat's error with line and
 * column, or no item). */
bool ztd_s3_expat_parse(ztd_s3_expat *x, const char *xml, size_t len, char *why, size_t cap);

#endif
