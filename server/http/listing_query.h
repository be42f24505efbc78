/*
 * Paging of GET /v1/files: `prefix`, `limit` and `cursor` query parameters
 * over names sorted by strcmp. The parsing (percent-decoding with the
 * router's decoder) and the choice of a page are pure functions (unit tests
 * and fuzz_listing_query reach them without a socket); handlers/listing.c
 * builds the page's body.
 *
 * A cursor is the hex of the last name of the previous page: the next page
 * starts after that name, so files added or removed between pages neither
 * repeat nor shift the others.
 */
#ifndef ZTD_LISTING_QUERY_H
#define ZTD_LISTING_QUERY_H

#include <stdbool.h>
#include <stddef.h>

#define ZTD_LISTING_DEFAULT_LIMIT 1000
#define ZTD_LISTING_MAX_LIMIT 10000
#define ZTD_LISTING_MAX_NAME 4096

typedef struct ztd_listing_query {
    bool paged; /* some paging parameter was given: answer one page */
    char prefix[ZTD_LISTING_MAX_NAME + 1];
    size_t prefix_len;
    char after[ZTD_LISTING_MAX_NAME + 1]; /* the decoded cursor: start after this name */
    size_t after_len;
    bool has_after;
    size_t limit;
} ztd_listing_query;

void ztd_listing_init(ztd_listing_query *q);
/* One query argument as sent (still percent-encoded; value NULL for a bare
 * key). Unknown keys are ignored. 0, or -1 with *why set (a static string). */
int ztd_listing_arg(ztd_listing_query *q, const char *key, const char *value, const char **why);

/* The page: entries [*first, *first + *count) of the sorted `names`; *more is
 * set when entries with the prefix follow the page. */
typedef const char *(*ztd_listing_name_fn)(const void *entries, size_t i);
void ztd_listing_page(const ztd_listing_query *q, const void *entries, size_t n,
                      ztd_listing_name_fn name, size_t *first, size_t *count, bool *more);

/* The cursor naming `name` (hex) into out (2 * strlen(name) + 1 bytes). */
void ztd_listing_cursor(const char *name, char *out);

#endif
