/* Doubling buffers (see grow.h). */
#include "core/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

int ztd_grow_items(void *pv, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : first;
    while (n < need && n <= SIZE_MAX / 2)
        n *= 2;
    if (n < need || n > SIZE_MAX / size)
        return -1;
    void *p;
    memcpy(&p, pv, sizeof(p)); /* the caller's T *, read without aliasing it */
    void *np = realloc(p, n * size);
    if (!np)
        return -1;
    memcpy(pv, &np, sizeof(np));
    *cap = n;
    return 0;
}
