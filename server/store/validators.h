/*
 * The validator rules (see validators.c): entity-tags, and the conditional
 * request headers' matching of them. Every layer that answers a condition
 * (the range plan, a publication's preconditions) asks here.
 */
#ifndef ZTD_VALIDATORS_H
#define ZTD_VALIDATORS_H

#include <stdbool.h>

/*
 * Does an If-Match / If-None-Match value match etag? weak == 0 uses the strong comparison
 * (both tags strong and identical, for If-Match), weak != 0 the weak comparison (opaque tags
 * identical, W/ ignored, for If-None-Match). The value is "*" or a comma-separated list of
 * entity-tags with optional whitespace and empty elements. "*" matches whenever etag != NULL.
 * A malformed value (unquoted tag, "*" inside a list, a bad character) never matches, and a
 * NULL header or NULL etag never matches. Returns 1 on match, 0 otherwise.
 */
int ztd_etag_list_match(const char *header, const char *etag, int weak);

/* The same, for a representation that exists (exists: "*" matches) whose etag
 * may still be NULL (it then matches nothing but "*"). */
int ztd_etag_condition(const char *header, const char *etag, bool exists, int weak);

/* If-Range's entity-tag form: is value (with optional whitespace) exactly one
 * strong entity-tag that equals etag by the strong comparison? 1 or 0. */
int ztd_etag_strong_match(const char *value, const char *etag);

/* If-None-Match: is it "*" (with optional whitespace), which makes a write
 * create-only? A list of entity-tags is not. */
bool ztd_if_none_match_star(const char *value);

#endif
