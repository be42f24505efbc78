/*
 * The manifest JSON of a file whose bytes the server knows are wrong: the
 * cached JSON (ztd_entry_manifest_json) with "digest_status": "mismatch" on
 * each component the background verifier found not to match its digest.
 * Rare, so made per request and never cached or precompressed: a verdict that
 * lands later changes the next answer, and its ETag (which counts the marks).
 */
#ifndef ZTD_MANIFEST_MARKS_H
#define ZTD_MANIFEST_MARKS_H

#include <stddef.h>

#include "store/catalog.h"

/* Components of e found not to match their digests (0 for most files). */
size_t ztd_entry_mismatches(const ztd_entry *e);

/* json (e's manifest, len bytes) with the marks: malloc'ed, its length in
 * *out_len and the number of marks made in *marks. NULL when out of memory. */
char *ztd_manifest_marked(const ztd_entry *e, const char *json, size_t len, size_t *out_len,
                          size_t *marks);

/* The same for the JSON of object o of e (zt_object_json: its "components"
 * at the top). */
char *ztd_object_marked(const ztd_entry *e, const zt_object *o, const char *json, size_t len,
                        size_t *out_len, size_t *marks);

#endif
