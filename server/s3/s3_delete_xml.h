/*
 * DeleteObjects' documents: the request's <Delete> (parsed with expat: at
 * most 1000 <Object>s, each with a <Key> of 1 to 1024 bytes, <Quiet>; a
 * DOCTYPE is refused) and the <DeleteResult> answer. Pure: unit tests reach
 * it without a socket.
 */
#ifndef ZTD_S3_DELETE_XML_H
#define ZTD_S3_DELETE_XML_H

#include <stdbool.h>
#include <stddef.h>

#include "s3/s3_xml.h"

#define ZTD_S3_DELETE_MAX 1000

typedef struct ztd_s3_delete_item {
    char *key; /* NUL-terminated, no NUL inside */
    size_t key_len;
    bool skip;         /* not looked for on disk: no such file can exist */
    const char *code;  /* an error's S3 code (static), or NULL: deleted */
    char message[256]; /* with code */
} ztd_s3_delete_item;

typedef struct ztd_s3_delete_list {
    ztd_s3_delete_item *items;
    size_t n;
    bool quiet; /* answer only the errors */
} ztd_s3_delete_list;

/* The list from the document xml[0..n); NULL with the reason in why. */
ztd_s3_delete_list *ztd_s3_delete_parse(const char *xml, size_t n, char *why, size_t cap);
void ztd_s3_delete_list_free(ztd_s3_delete_list *l);
/* <DeleteResult> for l, into a begun document. */
void ztd_s3_delete_result(ztd_xml *x, const ztd_s3_delete_list *l);

#endif
