/* Line records of the secret files (see record_lines.h). */
#include "core/record_lines.h"

#include <string.h>

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

void ztd_records_init(ztd_records *it, const char *text, size_t len)
{
    *it = (ztd_records){.text = text, .len = len};
}

/* Split line [p, p+n) into r's fields. */
static void split(const char *p, size_t n, ztd_record *r)
{
    r->n = 0;
    for (size_t i = 0; i < n;) {
        while (i < n && blank(p[i]))
            i++;
        if (i == n)
            break;
        size_t s = i;
        while (i < n && !blank(p[i]))
            i++;
        if (r->n < ZTD_RECORD_FIELDS) {
            r->f[r->n] = p + s;
            r->len[r->n] = i - s;
        }
        r->n++;
    }
}

bool ztd_records_next(ztd_records *it, ztd_record *r)
{
    while (it->pos < it->len) {
        const char *line = it->text + it->pos;
        const char *nl = memchr(line, '\n', it->len - it->pos);
        size_t n = nl ? (size_t)(nl - line) : it->len - it->pos;
        it->pos += n + (nl ? 1 : 0);
        it->lineno++;
        split(line, n, r);
        if (r->n == 0 || r->f[0][0] == '#')
            continue;
        r->lineno = it->lineno;
        return true;
    }
    return false;
}

int ztd_record_scope(const char *p, size_t n)
{
    if (n == 4 && !memcmp(p, "read", 4))
        return 1;
    if (n == 5 && !memcmp(p, "write", 5))
        return 2;
    return 0;
}
