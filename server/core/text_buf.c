/*
 * Texts written piece by piece (text_buf.h).
 */
#include "core/text_buf.h"
#include "core/grow.h"

#include <stdlib.h>
#include <string.h>

void ztd_text_put(ztd_text *t, const char *s, size_t n)
{
    if (t->failed || ztd_grow(&t->p, &t->cap, t->len + n) != 0) {
        t->failed = true;
        return;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = 0;
}

void ztd_text_puts(ztd_text *t, const char *s)
{
    ztd_text_put(t, s, strlen(s));
}

char *ztd_text_take(ztd_text *t, size_t *len)
{
    char *out = t->failed ? NULL : t->p;
    if (!out)
        free(t->p);
    else
        *len = t->len;
    memset(t, 0, sizeof(*t));
    return out;
}

void ztd_text_discard(ztd_text *t)
{
    free(t->p);
    memset(t, 0, sizeof(*t));
}
