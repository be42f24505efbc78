/*
 * JSON bodies as the server sends them: compact, keys in the order they were
 * set, and ending with a newline, so that every JSON body the server sends
 * (listings, manifests, errors, upload and prefetch answers) is a line a
 * terminal or a line-based tool shows whole.
 */
#ifndef ZTD_JSON_LINE_H
#define ZTD_JSON_LINE_H

#include <jansson.h>
#include <stddef.h>

/* j as compact JSON plus "\n", malloc'ed (NUL-terminated); *len (may be
 * NULL) its length with the newline. NULL when out of memory. */
char *ztd_json_line(const json_t *j, size_t *len);

/* s (malloc'ed, NUL-terminated, n bytes) with "\n" appended: s itself grown,
 * or NULL (s freed) when out of memory. *len gets n + 1. */
char *ztd_text_line(char *s, size_t n, size_t *len);

#endif
