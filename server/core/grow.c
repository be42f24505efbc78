/* Doubling buffers (see grow.h). */
#include "core/grow.h"

#include <stdlib.h>

int ztd_grow(char **p, size_t *cap, size_t need)
{
    if (need + 1 <= *cap)
        return 0;
    size_t n = *cap ? *cap : 4096;
    while (n < need + 1)
        n *= 2;
    char *np = realloc(*p, n);
    if (!np)
        return -1;
    *p = np;
    *cap = n;
    return 0;
}
