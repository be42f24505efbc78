/*
 * A file's safetensors view as an answer (view_answer.c): byte for byte what
 * `zt convert FILE -o OUT.safetensors` writes, from the entry's source, with
 * ranges and conditionals; the file's own bytes when it is safetensors
 * already; 422 view_unsupported naming the object when safetensors cannot
 * express it. A ztd_entry_answer (http/source_answer.h): give it to
 * ztd_answer_file() or call it with a pinned entry.
 */
#ifndef ZTD_VIEW_ANSWER_H
#define ZTD_VIEW_ANSWER_H

#include "http/source_answer.h"

ztd_entry_answer ztd_answer_view;

/* ztd_answer_view with a front's adjust(ctx) given the body first (as
 * ztd_answer_raw_adjusted); again answers the view once more after a wait
 * (given the entry viewed, as e here). */
enum MHD_Result ztd_answer_view_adjusted(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                         ztd_entry *e, ztd_body_adjust *adjust, void *ctx,
                                         ztd_entry_answer *again);

#endif
