/*
 * The JSON body of POST /v1/prefetch, parsed and checked as a pure function
 * (tests/server/test_prefetch_json.c, tests/fuzz/fuzz_prefetch_json.c):
 *   {"files": ["a/b.zt", ...], "prefix": "dir/" or ["dir/", ...]}
 * (either or both). Names and prefixes are relative, with no empty, "." or
 * hidden segment, at most 4096 bytes each and ZTD_PREFETCH_MAX_NAMES in all.
 * The handler then only queues the names (upstream/prefetch.h).
 */
#ifndef ZTD_PREFETCH_JSON_H
#define ZTD_PREFETCH_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "core/errors.h"

#define ZTD_PREFETCH_MAX_NAMES 10000

typedef struct ztd_prefetch_request {
    json_t *root;       /* owns the strings below */
    const char **names; /* files first, then prefixes */
    size_t n;
} ztd_prefetch_request;

/* ZTD_ERR_NONE with *out filled, or ZTD_ERR_BAD_JSON (not one JSON object),
 * ZTD_ERR_BAD_REQUEST (its shape, or no name at all), ZTD_ERR_INTERNAL (out
 * of memory), with the message in msg and *out zeroed. body may be NULL. */
ztd_err ztd_prefetch_parse(const char *body, size_t len, ztd_prefetch_request *out, char *msg,
                           size_t cap);
/* Accepts a zeroed struct. */
void ztd_prefetch_request_free(ztd_prefetch_request *r);

#endif
