/*
 * What the read fronts share to answer bytes from an entry's source
 * (store/source.h): finding and pinning the entry (the catalog's, or opened
 * from the upstream off the workers), the request's state while a source
 * holds cache items or waits, planning what the answer reads, and sending
 * the source's answer or waiting for it. read.c (components, /raw, blobs)
 * and view.c (the safetensors view) each give an `answer` function: the
 * answer from a pinned entry, called again after every wait, until it
 * queues a response.
 */
#ifndef ZTD_SOURCE_ANSWER_H
#define ZTD_SOURCE_ANSWER_H

#include <stdbool.h>
#include <stddef.h>

#include "http/body.h"
#include "http/handler.h"
#include "http/offload.h"
#include "store/catalog.h"
#include "store/source.h"

/* The answer from pinned entry e (local or upstream, with a file). */
typedef enum MHD_Result ztd_entry_answer(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                         ztd_entry *e);

/* The request's state once its source holds bytes for it (cache items) or
 * the answer waits off the workers; it pins the entry. */
typedef struct ztd_answer_state {
    ztd_offload off;
    ztd_server *s;
    ztd_entry *e; /* pinned; NULL until an upstream file is opened */
    char *name;   /* the upstream file to open */
    int phase;    /* what the offloaded work was */
    ztd_err err;  /* what it ended with */
    char msg[700];
    ztd_source_req q;
    size_t wait_at; /* the caller's note of what the last wait was for */
    ztd_entry_answer *answer;
    /* The name asked for is a safetensors view the upstream lists
     * ("view_of"): e is the upstream file it is the view of. */
    bool as_view;
    bool view_checked; /* name was looked up in the upstream's listing */
} ztd_answer_state;

/* Was the entry opened for a name the upstream lists as the safetensors
 * view of that entry's file (STEM.safetensors of STEM.zt)? Its answers are
 * then the view's (http/object_answer.h). */
bool ztd_answer_as_view(ztd_req *r);

/* The request's state, or NULL while it is only a pin (or nothing). */
ztd_answer_state *ztd_answer_state_of(ztd_req *r);
/* The request's state, made when missing: it takes over the pin of e (may be
 * NULL) and what q holds (q may be NULL). NULL when out of memory (q is then
 * ended). */
ztd_answer_state *ztd_answer_state_for(ztd_server *s, ztd_req *r, ztd_entry *e, ztd_source_req *q);
/* b as the request's front dresses its byte answers (r->dress): its ETag and
 * headers; nothing without one. Every whole-file answer calls it after
 * setting the file's ETag. */
void ztd_answer_dress(ztd_body *b, const ztd_req *r);

/* The entry answers this request: it stays open until the request ends. */
void ztd_answer_pin(ztd_req *r, ztd_entry *e);

/* b for bytes of e: validators' dates, Cache-Control, ranges and TLS from the
 * configuration; no segment, no ETag. */
void ztd_answer_init_body(ztd_body *b, ztd_server *s, ztd_entry *e);

/* The wait that ran for this answer ended with an error: true, once, with
 * the error to answer. */
bool ztd_answer_wait_failed(ztd_req *r, ztd_err *err, const char **msg);
/* What the answer to b will read, into q: nothing for HEAD, 304, 412 and
 * 416; one span, or the whole (several ranges). */
void ztd_answer_plan_reads(struct MHD_Connection *c, ztd_req *r, const ztd_body *b,
                           ztd_source_req *q);
/* The source's answer: b sent, or err answered with msg, or (ZTD_SRC_WAIT)
 * the wait run off the workers and then answer(e) again. q is the caller's
 * (on the stack) or the state's; what the source holds in it moves to the
 * request's state before the answer goes out. */
enum MHD_Result ztd_answer_source(ztd_server *s, struct MHD_Connection *c, ztd_req *r, ztd_entry *e,
                                  ztd_source_req *q, ztd_err err, const char *msg,
                                  const ztd_body *b, ztd_entry_answer *answer);

/* The file's bytes as its source has them (/raw), with a Content-Disposition
 * (or NULL). */
enum MHD_Result ztd_answer_raw(ztd_server *s, struct MHD_Connection *c, ztd_req *r, ztd_entry *e,
                               const char *disposition, ztd_entry_answer *answer);

/* The answer to a tensor-only route (objects, components, the safetensors
 * view) on plain file `name`: 404 not_a_tensor_file naming it. */
enum MHD_Result ztd_answer_not_tensor(struct MHD_Connection *c, ztd_req *r, const char *name);
/* A front's say in a body before it is planned and sent: it may change the
 * ETag's form (then conditions compare against that form), the Content-*
 * fields and add headers (b->add_headers); or answer the request itself
 * (true, with *out), e.g. a 412 or 416 in its own error format. ctx is the
 * caller's. */
typedef bool ztd_body_adjust(struct MHD_Connection *c, ztd_req *r, ztd_body *b, void *ctx,
                             enum MHD_Result *out);
/* The steps every byte answer takes once b is made: the front's dress, then
 * its adjust hook (may be NULL; true with *out when it answered), then what
 * the answer reads planned into *q: the request state's, or qs (the caller's,
 * on its stack) when there is none. */
bool ztd_answer_prepare(struct MHD_Connection *c, ztd_req *r, ztd_body *b, ztd_body_adjust *adjust,
                        void *ctx, ztd_source_req *qs, ztd_source_req **q, enum MHD_Result *out);
/* ztd_answer_raw, with adjust(ctx) given the body first (adjust may be NULL). */
enum MHD_Result ztd_answer_raw_adjusted(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                        ztd_entry *e, const char *disposition,
                                        ztd_body_adjust *adjust, void *ctx,
                                        ztd_entry_answer *answer);

/* A route on {file}: the catalog's entry for r->match->file, or the
 * upstream's (opened off the workers), pinned, then answer(e); called again
 * after offloaded work, it resumes. Errors for files that are missing,
 * invalid or unavailable. */
enum MHD_Result ztd_answer_file(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                ztd_entry_answer *answer);
/* The upstream's file `name` (not in the catalog; s->upstream set), opened
 * off the workers unless at hand, pinned, then answer(e); a failure to open
 * it is answered by ztd_error, in the front's form (ztd_req.error_answer).
 * For fronts with names of their own (S3); resumed by ztd_answer_resume. */
enum MHD_Result ztd_answer_upstream_file(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                         const char *name, ztd_entry_answer *answer);
/* Called again after offloaded work: false when the request has none
 * started (the caller answers afresh); else the answer in *out. */
bool ztd_answer_resume(ztd_server *s, struct MHD_Connection *c, ztd_req *r, enum MHD_Result *out);

#endif
