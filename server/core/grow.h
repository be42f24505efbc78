/*
 * A byte buffer that grows by doubling (no quadratic copying of a large body
 * read piece by piece), always with room for a terminating NUL.
 */
#ifndef ZTD_GROW_H
#define ZTD_GROW_H

#include <stddef.h>

/* Make *p hold at least need + 1 bytes (*cap its size, 0 at first; first
 * size 4096). 0, or -1 when out of memory (*p and *cap unchanged). */
int ztd_grow(char **p, size_t *cap, size_t need);

#endif
