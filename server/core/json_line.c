/* JSON bodies ending with a newline (see json_line.h). */
#include "core/json_line.h"

#include <stdlib.h>
#include <string.h>

char *ztd_text_line(char *s, size_t n, size_t *len)
{
    char *t = s ? realloc(s, n + 2) : NULL;
    if (!t) {
        free(s);
        return NULL;
    }
    t[n] = '\n';
    t[n + 1] = 0;
    if (len)
        *len = n + 1;
    return t;
}

char *ztd_json_line(const json_t *j, size_t *len)
{
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    return s ? ztd_text_line(s, strlen(s), len) : NULL;
}
