/*
 * One answer for an object's whole bytes, whatever the object is: a real
 * file's bytes (/raw, as its source has them), a safetensors view's bytes
 * (the view of the entry it views: http/view_answer.h), or a directory's
 * model.safetensors.index.json (from memory, with a strong ETag from its
 * content). Each with a Content-Disposition naming the object, ranges and
 * conditionals through the one body path (http/body.h). A ztd_entry_answer
 * (http/source_answer.h): /v1/files/{file}/raw uses it, and so may every
 * front that lists the catalog's entries as objects.
 */
#ifndef ZTD_OBJECT_ANSWER_H
#define ZTD_OBJECT_ANSWER_H

#include "http/source_answer.h"

ztd_entry_answer ztd_answer_object;

/* A front's hold on ztd_answer_object: adjust(ctx) is given every body first
 * (files, views and indexes alike: ztd_body_adjust, http/source_answer.h);
 * again answers the object once more after a wait (given its entry), and
 * view_again a view (given the entry it views). no_disposition leaves out
 * the Content-Disposition naming the object. */
typedef struct ztd_answer_hook {
    ztd_body_adjust *adjust;
    void *ctx;
    ztd_entry_answer *again;
    ztd_entry_answer *view_again;
    bool no_disposition;
} ztd_answer_hook;
enum MHD_Result ztd_answer_object_hooked(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                         ztd_entry *e, const ztd_answer_hook *h);

/* The answer to a name the upstream lists as the safetensors view of e's
 * file (ztd_answer_as_view(), http/source_answer.h): the view's bytes on
 * /raw and /safetensors, 404 on the routes of objects and the manifest. */
ztd_entry_answer ztd_answer_upstream_view;

/* The JSON document about a virtual entry (its listing object and a
 * newline), for the routes that would give a file's manifest. */
enum MHD_Result ztd_answer_virtual_doc(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                       ztd_entry *e);

#endif
