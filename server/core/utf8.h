/*
 * UTF-8 validation: names reach the API as JSON strings and URL segments, so
 * every name (file paths on disk, names in URLs) is checked by this one rule.
 */
#ifndef ZTD_UTF8_H
#define ZTD_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above
 * U+10FFFF. NUL bytes are valid UTF-8; callers that refuse them say so. */
bool ztd_utf8_valid(const void *s, size_t n);

#endif
