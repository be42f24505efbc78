/*
 * A text written piece by piece into one doubling buffer (grow.h), always
 * NUL-terminated: the S3 front's XML documents and the Hub front's JSON are
 * written through it. Out of memory is sticky: every later put does nothing
 * and ztd_text_take() gives NULL, so a writer checks once, at the end.
 */
#ifndef ZTD_TEXT_BUF_H
#define ZTD_TEXT_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ztd_text {
    char *p; /* NULL until the first put */
    size_t len, cap;
    bool failed; /* memory ran out (or the writer gave up): the text is lost */
} ztd_text;

/* Append s[0..n). */
void ztd_text_put(ztd_text *t, const char *s, size_t n);
/* Append the NUL-terminated s. */
void ztd_text_puts(ztd_text *t, const char *s);
/* The text (malloc'ed, NUL-terminated, *len bytes; the caller frees), or
 * NULL when it failed (*len untouched). t holds nothing afterwards. */
char *ztd_text_take(ztd_text *t, size_t *len);
/* Drop the text. */
void ztd_text_discard(ztd_text *t);

#endif
