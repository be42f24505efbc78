/*
 * The JSON bodies of upload sessions, parsed and checked as pure functions:
 *   POST /v1/uploads                    {"file": "a/b.zt", "attributes": {...}}
 *   POST /v1/uploads/{id}/commit        {"objects": {NAME: {"shape": [..], "format",
 *                                         "attributes", "components": {ROLE: {"key",
 *                                         "dtype", "type"}}}}}
 * What can be checked without the session is checked here (tests/server/
 * test_upload_json.c, tests/fuzz/fuzz_upload_json.c); the session handler
 * then only looks the keys up and hands the result to the writer.
 *
 * Each parser returns ZTD_ERR_NONE, or the error to answer with and its
 * message in msg: ZTD_ERR_BAD_JSON (not one JSON object: empty, malformed,
 * a duplicate key), ZTD_ERR_BAD_REQUEST (the body's shape), or, for a commit,
 * ZTD_ERR_INVALID_OBJECTS (an object is malformed).
 */
#ifndef ZTD_UPLOAD_JSON_H
#define ZTD_UPLOAD_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <ztensor/ztensor.h>

#include "core/errors.h"

/* Components one object may name. */
#define ZTD_COMMIT_MAX_PARTS 64

typedef struct ztd_open_request {
    char *file;       /* relative .zt path, checked as docs/API.md says */
    char *attributes; /* the file's attributes as compact JSON, or NULL */
} ztd_open_request;

ztd_err ztd_open_parse(const char *body, size_t len, ztd_open_request *out, char *msg, size_t cap);
/* Accepts a zeroed struct. */
void ztd_open_request_free(ztd_open_request *o);

typedef struct ztd_commit_part {
    const char *role, *key;
    zt_dtype dtype;   /* never ZT_DTYPE_INVALID */
    const char *type; /* logical type, or NULL */
} ztd_commit_part;

typedef struct ztd_commit_object {
    const char *name;
    const char *format; /* "dense" when not given */
    size_t ndim;        /* <= ZT_MAX_NDIM */
    uint64_t *dims;
    char *attributes; /* compact JSON, or NULL */
    size_t nparts;    /* <= ZTD_COMMIT_MAX_PARTS */
    ztd_commit_part *parts;
} ztd_commit_object;

/* The strings point into the parsed document, which the struct owns. */
typedef struct ztd_commit {
    void *doc;
    size_t n;
    ztd_commit_object *objects; /* in the body's order */
} ztd_commit;

ztd_err ztd_commit_parse(const char *body, size_t len, ztd_commit *out, char *msg, size_t cap);
/* Accepts a zeroed struct. */
void ztd_commit_free(ztd_commit *c);

#endif
