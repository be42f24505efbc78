/*
 * Buffers that grow by doubling (no quadratic copying of what is added piece
 * by piece): a byte buffer, always with room for a terminating NUL, and an
 * array of items of any one type.
 */
#ifndef ZTD_GROW_H
#define ZTD_GROW_H

#include <stddef.h>

/* Make *p hold at least need + 1 bytes (*cap its size, 0 at first; first
 * size 4096). 0, or -1 when out of memory (*p and *cap unchanged). */
int ztd_grow(char **p, size_t *cap, size_t need);

/* Make the array *(T **)pv hold at least need items of size bytes (*cap its
 * count of items, 0 at first; first count `first`). 0, or -1 when out of
 * memory or the size overflows (*pv and *cap unchanged). Called through
 * ZTD_GROW_ITEMS, which takes the array and its count by name. */
int ztd_grow_items(void *pv, size_t *cap, size_t need, size_t size, size_t first);
#define ZTD_GROW_ITEMS(arr, cap, need, first)                                                      \
    ztd_grow_items(&(arr), &(cap), (need), sizeof(*(arr)), (first))

#endif
